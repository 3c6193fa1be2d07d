//! The device layer: what a GPU runtime gives (device memory, copies, kernel handles found by
//! name in the backend's kernel table, launch geometry, typed arguments, device queries), as
//! one trait, [`Device`], that `trident-cuda` and `trident-opencl` implement. Each
//! algorithm's GPU host code (plan, upload, launch loop, download) is written once, generic
//! over it, next to the algorithm's plan: [`crate::spmv::device`],
//! [`crate::triangles::device`], [`crate::mcl::gpu`], [`crate::matmul::device`],
//! [`crate::svd::device`]. A backend's
//! `Device` impl gives it those algorithms through blanket impls
//! (`impl<T, D: Device> Spmv<T> for D`).
//!
//! Pure Rust and safe: a CPU-only build compiles no GPU code. Launching is `unsafe`
//! ([`Launch::launch`]): the caller vouches that the arguments match the kernel and the
//! buffers are large enough, in one `// SAFETY:` note per launch.
//!
//! The crate denies `unsafe` code except here, where [`Device::launch_raw`] and
//! [`Launch::launch`] declare the launch contract, and in the drivers, whose launches are
//! `unsafe` blocks with their `// SAFETY:` notes (no other unsafe operation is done in core).
//!
//! ```ignore
//! let k = d.kernel::<T>("spmv", "spmv_ellr")?; // module and root, as in the kernel table
//! let mut l = d.launch(&k);
//! l.arg(rows).arg(&a.values).vector(x).vector(&*y);
//! // SAFETY: (why the arguments match and the buffers suffice)
//! unsafe { l.launch(Geometry::linear(groups, wg)) }?;
//! ```
//!
//! `arg` takes `u32`, `i32`, `u64`, `i64`, `f32`, `f64` by value and `&Buf<D, P>` (a `P *`
//! parameter); `vector` a device vector, `real::<T>` a `T` parameter, `local(bytes)` the
//! launch's dynamic local memory (CUDA: the launch's shared-memory bytes; OpenCL: a `__local`
//! parameter). Kernels without a precision suffix are `d.kernel_plain("triangles",
//! "tc_merge")`. A launch fails, queuing nothing, when an argument belongs to another
//! device. Adding a kernel: define it in `kernels/cuda/<alg>.cu` and `kernels/opencl/<alg>.cl`
//! with one parameter list, and add its root to the algorithm's `KERNELS` list.

#![allow(unsafe_code)]

use std::marker::PhantomData;

pub mod ring;

use crate::backend::{Backend, DeviceVectors};
use crate::error::{Error, Result};
use crate::gpu::Precision;
use crate::scalar::Scalar;

pub use crate::scalar::DeviceElem;

/// What the algorithms ask of a device (read once when it is opened).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceQuery {
    /// Device memory in bytes.
    pub total_memory: u64,
    /// Largest single allocation in bytes (CUDA: the device memory).
    pub max_alloc: u64,
    /// Last-level cache in bytes (CUDA: L2; OpenCL: the global memory cache; 0: unknown).
    pub cache_bytes: usize,
    /// Compute units (streaming multiprocessors); 0 if unknown.
    pub compute_units: u32,
    /// True if the `f64` kernels run.
    pub fp64: bool,
}

/// Work-groups (CUDA blocks) and work-items (threads) per group of a launch, in up to three
/// dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Work-groups in x, y, z.
    pub groups: [usize; 3],
    /// Work-items per group in x, y, z.
    pub group_size: [usize; 3],
}

impl Geometry {
    /// `groups` work-groups of `group_size` work-items, in one dimension.
    pub fn linear(groups: usize, group_size: usize) -> Self {
        Self {
            groups: [groups, 1, 1],
            group_size: [group_size, 1, 1],
        }
    }
}

/// One kernel argument, in the order of the kernel's parameters.
#[derive(Debug, Clone, Copy)]
pub enum Arg<M> {
    /// `unsigned int` / `uint`.
    U32(u32),
    /// `unsigned long long` / `ulong`.
    U64(u64),
    /// `int`.
    I32(i32),
    /// `long long` / `long`.
    I64(i64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// A device buffer (`T *` / `__global T *`).
    Mem(M),
    /// Dynamic local (shared) memory of this many bytes per work-group. OpenCL passes it as
    /// a `__local` parameter at this position; CUDA as the launch's dynamic shared memory
    /// (`extern __shared__`, no parameter). At most one per launch.
    Local(usize),
}

/// A kernel of the backend's kernel table, ready to launch.
pub trait KernelHandle {
    /// The full name, e.g. `spmv_ellr_f32`.
    fn name(&self) -> &str;
    /// The largest work-group this backend launches the kernel with: OpenCL's work-group
    /// size for it (a power of two of at most 256 within the device's and the kernel's
    /// limits); CUDA 1024 (the kernels' launch bounds are the callers' to respect).
    fn group_limit(&self) -> usize;
}

/// A GPU runtime: one device, its memory, its kernel table and an in-order queue (CUDA
/// stream, OpenCL command queue). Everything is enqueued without waiting except
/// [`Device::read_mem`], which waits for all queued work.
pub trait Device: Backend + Sized {
    /// An untyped device allocation that keeps what it needs (the context) alive.
    type Mem: Send + Sync;
    /// A device buffer as a kernel argument (CUDA: the device address).
    type MemRef<'a>: Copy
    where
        Self: 'a;
    /// A kernel handle (see [`Device::kernel`]).
    type Kernel<'a>: KernelHandle
    where
        Self: 'a;

    /// True if the dialect's one-item-per-row kernels loop over the rows with a grid
    /// stride (CUDA's SpMV), so a launch may have fewer work-groups than rows; false if they
    /// need one work-item per row (OpenCL).
    const GRID_STRIDE: bool;

    /// True if the dialect's kernels over a 2-D index space take a 1-D grid and split the
    /// flat work-group index themselves (CUDA, whose grid's y extent is limited to 65535
    /// blocks: the SVD's flat Givens kernels); false if they take a 2-D NDRange (OpenCL).
    const FLAT_GRID: bool;

    /// The device's size and abilities.
    fn query(&self) -> DeviceQuery;
    /// Fails with [`Error::Unsupported`] for a precision the device lacks.
    fn check_precision(&self, p: Precision) -> Result<()>;

    /// `bytes` of uninitialised device memory (`what` names it in errors).
    fn alloc_mem(&self, bytes: usize, what: &str) -> Result<Self::Mem>;
    /// A copy of `host` in new device memory (waits until the host data is copied).
    fn upload_mem(&self, host: &[u8], what: &str) -> Result<Self::Mem>;
    /// `bytes` of device memory set to zero (ordered before later work on the queue).
    fn zeroed_mem(&self, bytes: usize, what: &str) -> Result<Self::Mem>;
    /// Waits for the queued work, then copies the start of `mem` into `host`.
    fn read_mem(&self, mem: &Self::Mem, host: &mut [u8], what: &str) -> Result<()>;
    /// A personalised exchange into device memory, for a backend with a device-to-device
    /// engine for the ranks of `c` (NCCL, for CUDA ranks on distinct GPUs): this rank sends
    /// the bytes `send[parts[r].clone()]` to each rank `r` (its own part included) and
    /// receives `recv[r]` bytes from each, in rank order, into one new buffer. Every rank
    /// must call it at the same point, with `recv[r]` the length of rank `r`'s part for it.
    /// `None` on every rank where there is no such engine (the default): the caller then
    /// exchanges through the host.
    fn exchange_mem(
        &self,
        c: &dyn crate::comm::Comm,
        send: &[u8],
        parts: &[std::ops::Range<usize>],
        recv: &[usize],
        what: &str,
    ) -> Result<Option<Self::Mem>> {
        let _ = (c, send, parts, recv, what);
        Ok(None)
    }
    /// An all-gather between device buffers, for a backend with a device-to-device engine for
    /// the ranks of `c` (see [`Device::exchange_mem`]): the first `counts[r]` bytes of rank
    /// `r`'s `send` land in every rank's `recv` at `counts[..r]`'s sum (its own included),
    /// ordered before later work on the queue. `false` on every rank where there is no such
    /// engine (the default): nothing is copied and the caller gathers through the host.
    /// Every rank must call it at the same point with the same `counts`.
    fn gather_mem(
        &self,
        c: &dyn crate::comm::Comm,
        send: &Self::Mem,
        counts: &[usize],
        recv: &Self::Mem,
        what: &str,
    ) -> Result<bool> {
        let _ = (c, send, counts, recv, what);
        Ok(false)
    }
    /// A personalised exchange between device buffers, for a backend with a device-to-device
    /// engine for the ranks of `c` (see [`Device::exchange_mem`]): this rank's bytes
    /// `send[parts[r].clone()]` go to each rank `r` (its own part included, copied on the
    /// device), and each rank `r`'s `recv[r]` bytes for this one land in `into` in rank
    /// order, ordered before later work on the queue. `false` on every rank where there is
    /// no such engine (the default): nothing is copied and the caller exchanges through the
    /// host. Every rank must call it at the same point, `recv[r]` being what rank `r` sends
    /// here.
    fn all_to_all_mem(
        &self,
        c: &dyn crate::comm::Comm,
        (send, parts): (&Self::Mem, &[std::ops::Range<usize>]),
        (into, recv): (&Self::Mem, &[usize]),
        what: &str,
    ) -> Result<bool> {
        let _ = (c, send, parts, into, recv, what);
        Ok(false)
    }
    /// An in-place sum over the ranks of `c` of the first `words` 64-bit unsigned integers
    /// of `mem` (wrapping, so exact and independent of the order), for a backend with a
    /// device-to-device engine for these ranks (see [`Device::exchange_mem`]): every rank's
    /// `mem` then holds the sums, ordered before later work on the queue. `false` on every
    /// rank where there is no such engine (the default): nothing is changed and the caller
    /// sums through the host. Every rank must call it at the same point with the same `words`.
    fn sum_mem_u64(
        &self,
        c: &dyn crate::comm::Comm,
        mem: &Self::Mem,
        words: usize,
        what: &str,
    ) -> Result<bool> {
        let _ = (c, mem, words, what);
        Ok(false)
    }
    /// `mem` as a kernel argument; fails unless it belongs to this device (instance).
    fn mem_ref<'a>(&'a self, mem: &'a Self::Mem) -> Result<Self::MemRef<'a>>;

    /// The kernel `name` (listed without a precision suffix) of the kernel file `module`
    /// (`"spmv"` for `kernels/cuda/spmv.cu` / `kernels/opencl/spmv.cl`), loading (building)
    /// the module on first use. Fails if the table entry does not list it.
    fn kernel_plain(&self, module: &str, name: &str) -> Result<Self::Kernel<'_>>;
    /// The kernel `root` for `T` (`<root>_f32` or `<root>_f64`) of `module`; see
    /// [`Device::kernel_plain`]. Fails with [`Error::Unsupported`] for a precision the
    /// device lacks.
    fn kernel<T: Scalar>(&self, module: &str, root: &str) -> Result<Self::Kernel<'_>>;

    /// Enqueues `kernel` with `args` under `geometry`. Fails, enqueuing nothing, if the
    /// geometry does not fit the runtime's limits or (OpenCL) the arguments are not as many
    /// as the kernel's parameters.
    ///
    /// # Safety
    ///
    /// The arguments must match the kernel's parameters in number, order and type, and
    /// every buffer among them must be large enough for everything the kernel accesses
    /// under `geometry`. (Buffers stay allocated until the kernel finishes even if
    /// dropped.)
    unsafe fn launch_raw(
        &self,
        kernel: &Self::Kernel<'_>,
        geometry: Geometry,
        args: &[Arg<Self::MemRef<'_>>],
    ) -> Result<()>;

    /// A typed argument list for one launch of `kernel` ([`Launch`]); the buffers passed
    /// are borrowed for the kernel handle's lifetime `'k`.
    fn launch<'a, 'k>(&'k self, kernel: &'a Self::Kernel<'k>) -> Launch<'a, 'k, Self> {
        Launch {
            device: self,
            kernel,
            args: Vec::with_capacity(24),
            error: None,
        }
    }
}

/// The buffers of a device's vectors ([`DeviceVectors`]) as kernel arguments.
pub trait VectorMem<T: Scalar>: Device + DeviceVectors<T> {
    /// The buffer of `v` as a kernel argument; fails unless `v` belongs to this device
    /// (instance).
    fn vector_ref<'a>(&'a self, v: &'a Self::Vector) -> Result<Self::MemRef<'a>>;
}

/// A typed device buffer of `len` elements of `P` (at least one byte is allocated, so an
/// empty buffer is still a valid argument).
pub struct Buf<D: Device, P: DeviceElem> {
    mem: D::Mem,
    len: usize,
    _elem: PhantomData<fn() -> P>,
}

impl<D: Device, P: DeviceElem> std::fmt::Debug for Buf<D, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buf").field("len", &self.len).finish()
    }
}

impl<D: Device, P: DeviceElem> Buf<D, P> {
    fn bytes(len: usize, what: &str) -> Result<usize> {
        len.checked_mul(std::mem::size_of::<P>()).ok_or_else(|| {
            Error::Unsupported(format!("{what}: {len} values overflow the address space"))
        })
    }

    /// The `len` elements held in `mem` (its bytes, as [`Device::exchange_mem`] returns
    /// them).
    pub(crate) fn from_mem(mem: D::Mem, len: usize) -> Self {
        Self {
            mem,
            len,
            _elem: PhantomData,
        }
    }

    /// `len` uninitialised elements: for buffers that the kernels write before reading.
    pub fn uninit(d: &D, len: usize, what: &str) -> Result<Self> {
        Ok(Self {
            mem: d.alloc_mem(Self::bytes(len, what)?, what)?,
            len,
            _elem: PhantomData,
        })
    }

    /// `len` zeros.
    pub fn zeroed(d: &D, len: usize, what: &str) -> Result<Self> {
        Ok(Self {
            mem: d.zeroed_mem(Self::bytes(len, what)?, what)?,
            len,
            _elem: PhantomData,
        })
    }

    /// A copy of `host`.
    pub fn upload(d: &D, host: &[P], what: &str) -> Result<Self> {
        Ok(Self {
            mem: d.upload_mem(bytemuck::cast_slice(host), what)?,
            len: host.len(),
            _elem: PhantomData,
        })
    }

    /// Waits for the queued work and copies the buffer into `host` (same length).
    pub fn download_into(&self, d: &D, host: &mut [P], what: &str) -> Result<()> {
        crate::gpu::check_download_len(self.len, host.len())?;
        if host.is_empty() {
            return d.synchronize();
        }
        d.read_mem(&self.mem, bytemuck::cast_slice_mut(host), what)
    }

    /// Waits for the queued work and copies the first `len` elements to a new host vector
    /// (an error beyond the buffer's length).
    pub fn download_head(&self, d: &D, len: usize, what: &str) -> Result<Vec<P>> {
        if len > self.len {
            return Err(Error::backend(
                d.name(),
                format!("{what}: {len} values read from a buffer of {}", self.len),
            ));
        }
        let mut host = vec![P::zeroed(); len];
        if len == 0 {
            d.synchronize()?;
        } else {
            d.read_mem(&self.mem, bytemuck::cast_slice_mut(&mut host), what)?;
        }
        Ok(host)
    }

    /// Waits for the queued work and copies the buffer to a new host vector.
    pub fn download(&self, d: &D, what: &str) -> Result<Vec<P>> {
        let mut host = vec![P::zeroed(); self.len];
        self.download_into(d, &mut host, what)?;
        Ok(host)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The untyped allocation.
    pub fn mem(&self) -> &D::Mem {
        &self.mem
    }
}

/// A value that [`Launch::arg`] takes: the numbers of [`Arg`] and `&Buf`.
pub trait IntoArg<'a, D: Device> {
    /// The argument (a buffer checked to belong to `d`).
    fn into_arg(self, d: &'a D) -> Result<Arg<D::MemRef<'a>>>;
}

macro_rules! scalar_into_arg {
    ($($t:ty => $v:ident),*) => {$(
        impl<'a, D: Device> IntoArg<'a, D> for $t {
            fn into_arg(self, _: &'a D) -> Result<Arg<D::MemRef<'a>>> {
                Ok(Arg::$v(self))
            }
        }
    )*};
}
scalar_into_arg!(u32 => U32, u64 => U64, i32 => I32, i64 => I64, f32 => F32, f64 => F64);

impl<'a, D: Device, P: DeviceElem> IntoArg<'a, D> for &'a Buf<D, P> {
    fn into_arg(self, d: &'a D) -> Result<Arg<D::MemRef<'a>>> {
        d.mem_ref(&self.mem).map(Arg::Mem)
    }
}

/// The arguments of one launch, added in the order of the kernel's parameters (candle
/// style); a failure to add one (a buffer of another device) is reported by
/// [`Launch::launch`], which then enqueues nothing.
pub struct Launch<'a, 'k, D: Device + 'k> {
    device: &'k D,
    kernel: &'a D::Kernel<'k>,
    args: Vec<Arg<D::MemRef<'k>>>,
    error: Option<Error>,
}

impl<'k, D: Device + 'k> Launch<'_, 'k, D> {
    fn push(&mut self, a: Result<Arg<D::MemRef<'k>>>) -> &mut Self {
        match a {
            Ok(a) => self.args.push(a),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// Appends a number or a buffer.
    pub fn arg(&mut self, value: impl IntoArg<'k, D>) -> &mut Self {
        let a = value.into_arg(self.device);
        self.push(a)
    }

    /// Appends a device vector's buffer.
    pub fn vector<T: Scalar>(&mut self, v: &'k <D as DeviceVectors<T>>::Vector) -> &mut Self
    where
        D: VectorMem<T>,
    {
        let a = self.device.vector_ref(v).map(Arg::Mem);
        self.push(a)
    }

    /// Appends a `T` parameter (`float` or `double`: the kernel's `REAL`) of value `v`
    /// rounded to `T`.
    pub fn real<T: Scalar>(&mut self, v: f64) -> &mut Self {
        let a = match Precision::of::<T>() {
            Precision::F32 => Arg::F32(v as f32),
            Precision::F64 => Arg::F64(v),
        };
        self.push(Ok(a))
    }

    /// Appends a buffer given by its handle (checked by whoever made the handle).
    pub fn mem(&mut self, m: D::MemRef<'k>) -> &mut Self {
        self.push(Ok(Arg::Mem(m)))
    }

    /// Appends `bytes` of dynamic local memory per work-group (see [`Arg::Local`]).
    pub fn local(&mut self, bytes: usize) -> &mut Self {
        self.push(Ok(Arg::Local(bytes)))
    }

    /// Enqueues the kernel with these arguments (see [`Device::launch_raw`]).
    ///
    /// # Safety
    ///
    /// As [`Device::launch_raw`]: the arguments match the kernel's parameters and the
    /// buffers suffice for what it accesses under `geometry`.
    pub unsafe fn launch(&mut self, geometry: Geometry) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // SAFETY: the caller's guarantee, passed on.
        unsafe { self.device.launch_raw(self.kernel, geometry, &self.args) }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A device of host memory whose launches record their geometry and arguments.
    #[derive(Default)]
    struct Recorder {
        id: u32,
        launches: Mutex<Vec<(Geometry, Vec<String>)>>,
    }

    /// Host "device memory", tagged with the recorder that made it.
    struct HostMem {
        owner: u32,
        bytes: Mutex<Vec<u8>>,
    }

    struct Named(&'static str);

    impl KernelHandle for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn group_limit(&self) -> usize {
            64
        }
    }

    impl Backend for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn device(&self) -> String {
            format!("recorder {}", self.id)
        }
    }

    impl Device for Recorder {
        type Mem = HostMem;
        type MemRef<'a> = usize;
        type Kernel<'a> = Named;
        const GRID_STRIDE: bool = false;
        const FLAT_GRID: bool = false;

        fn query(&self) -> DeviceQuery {
            DeviceQuery::default()
        }
        fn check_precision(&self, _: Precision) -> Result<()> {
            Ok(())
        }
        fn alloc_mem(&self, bytes: usize, _: &str) -> Result<HostMem> {
            self.zeroed_mem(bytes, "")
        }
        fn upload_mem(&self, host: &[u8], _: &str) -> Result<HostMem> {
            Ok(HostMem {
                owner: self.id,
                bytes: Mutex::new(host.to_vec()),
            })
        }
        fn zeroed_mem(&self, bytes: usize, _: &str) -> Result<HostMem> {
            self.upload_mem(&vec![0; bytes], "")
        }
        fn read_mem(&self, mem: &HostMem, host: &mut [u8], _: &str) -> Result<()> {
            host.copy_from_slice(&mem.bytes.lock().unwrap()[..host.len()]);
            Ok(())
        }
        fn mem_ref<'a>(&'a self, mem: &'a HostMem) -> Result<usize> {
            if mem.owner != self.id {
                return Err(Error::backend("recorder", "a buffer of another device"));
            }
            Ok(mem.bytes.lock().unwrap().len())
        }
        fn kernel_plain(&self, _: &str, _: &str) -> Result<Named> {
            Ok(Named("plain"))
        }
        fn kernel<T: Scalar>(&self, _: &str, _: &str) -> Result<Named> {
            Ok(Named("typed"))
        }
        unsafe fn launch_raw(
            &self,
            _: &Named,
            geometry: Geometry,
            args: &[Arg<usize>],
        ) -> Result<()> {
            let args = args.iter().map(|a| format!("{a:?}")).collect();
            self.launches.lock().unwrap().push((geometry, args));
            Ok(())
        }
    }

    #[test]
    fn buffers_round_trip_as_typed_values() {
        let d = Recorder::default();
        let b = Buf::<Recorder, f64>::upload(&d, &[1.5, -2.0], "x").unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b.download(&d, "x").unwrap(), [1.5, -2.0]);
        let z = Buf::<Recorder, u64>::zeroed(&d, 3, "z").unwrap();
        assert_eq!(z.download(&d, "z").unwrap(), [0, 0, 0]);
        let mut short = [0u64; 2];
        assert!(matches!(
            z.download_into(&d, &mut short, "z"),
            Err(Error::Shape(_))
        ));
    }

    #[test]
    fn launches_pass_arguments_in_order() {
        let d = Recorder::default();
        let b = Buf::<Recorder, u32>::upload(&d, &[1, 2, 3], "b").unwrap();
        let k = d.kernel::<f32>("m", "k").unwrap();
        let mut l = d.launch(&k);
        l.arg(7u32)
            .arg(&b)
            .real::<f32>(0.5)
            .real::<f64>(0.25)
            .local(64);
        l.arg(-1i32).arg(9u64);
        // SAFETY: the recorder runs nothing.
        unsafe { l.launch(Geometry::linear(3, 64)) }.unwrap();
        let launches = d.launches.lock().unwrap();
        let (g, args) = &launches[0];
        assert_eq!(g.groups, [3, 1, 1]);
        assert_eq!(g.group_size, [64, 1, 1]);
        assert_eq!(
            args,
            &[
                "U32(7)",
                "Mem(12)",
                "F32(0.5)",
                "F64(0.25)",
                "Local(64)",
                "I32(-1)",
                "U64(9)"
            ]
        );
    }

    #[test]
    fn a_buffer_of_another_device_fails_the_launch() {
        let (d, other) = (
            Recorder::default(),
            Recorder {
                id: 1,
                ..Default::default()
            },
        );
        let foreign = Buf::<Recorder, f32>::zeroed(&other, 4, "x").unwrap();
        let k = d.kernel_plain("m", "k").unwrap();
        let mut l = d.launch(&k);
        l.arg(1u32).arg(&foreign);
        // SAFETY: the recorder runs nothing.
        let e = unsafe { l.launch(Geometry::linear(1, 1)) }.unwrap_err();
        assert!(e.to_string().contains("another device"), "{e}");
        assert!(
            d.launches.lock().unwrap().is_empty(),
            "nothing may be launched"
        );
    }
}

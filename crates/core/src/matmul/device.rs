//! Matmul on any [`Device`], written once: the [`MatMul`] impl of every device (host
//! checks, plan, device-vector `gemm`, the pageable upload and download) and the device
//! steps of a matmul schedule ([`ScheduleKernels`]): launches of `gemm_<T>` /
//! `gemm_fused_<T>` (or a backend's own base kernels with the same arguments and launch,
//! such as CUDA's `gemm_dmma_f64`, named by [`MatmulDevice::tensor_core_kernels`]) and
//! `matadd_<T>` of `kernels/cuda/matmul.cu` / `kernels/opencl/matmul.cl`, every block passed
//! as (buffer, offset, leading dimension). A backend says what differs through
//! [`MatmulDevice`]: its Strassen cutoff, its tensor-core kernels, and its staged host
//! transfers ([`HostMemory::Pinned`], [`HostMemory::Mapped`]).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::{
    check_fits, check_lengths, check_shapes, device_bytes, plan_host, run_steps, use_tensor_cores,
    DevAdd, DevFused, DevGemm, HostMemory, MatMul, MatMulOptions, Schedule, ScheduleKernels,
};
use crate::backend::DeviceVectors;
use crate::dense::{Dense, DenseView};
use crate::device::{Buf, Device, Geometry, KernelHandle, Launch, VectorMem};
use crate::error::{Error, Result};
use crate::gpu::{to_u32, KernelList, Precision};
use crate::scalar::Scalar;

/// The portable kernels of the `matmul` kernel file, as both backends' kernel tables list
/// them (a backend may list kernels of its own beside them, as CUDA's `gemm_dmma_f64`).
pub const KERNELS: KernelList = KernelList::new(&["gemm", "gemm_fused", "matadd"], &[]);

/// Work-items per group of the GEMM kernels (their launch bounds / `reqd_work_group_size`).
pub const GEMM_THREADS: usize = 256;
/// Rows and columns of C per group of the GEMM kernels.
pub const TILE: usize = 128;
/// Work-items per group of `matadd_<T>` at most.
pub const ADD_THREADS: usize = 256;

/// The default Strassen cutoff on GPUs ([`MatmulDevice::matmul_cutoff`]): leaves of at least
/// 4096 (one level from n = 8192, two from 16384). A first guess from Huang, Yu & van de
/// Geijn (2018), where one level pays from about n = 8000 on a V100; to be replaced by the
/// crossover `cargo xtask bench matmul` measures on the H100.
pub const GPU_CUTOFF: usize = 4096;

/// The staged host transfers of one [`MatMul::matmul`] ([`MatmulDevice::matmul_staged`]).
pub struct Staged<'s, D: Device> {
    /// [`HostMemory::Pinned`] or [`HostMemory::Mapped`].
    pub memory: HostMemory,
    /// `A`'s values, packed row-major, as bytes.
    pub a: &'s [u8],
    /// `B`'s values, packed row-major, as bytes.
    pub b: &'s [u8],
    /// Where `C`'s values go (packed row-major, as bytes).
    pub c: &'s mut [u8],
    /// The workspace, in device memory.
    pub workspace: &'s D::Mem,
    /// Runs the schedule with operands `[A, B, C, workspace]` (buffers of at least as many
    /// bytes as `a`, `b` and `c` hold, device or device-mapped memory), as a device of a
    /// borrow as short as the operands' own. Queues the launches; it does not wait.
    #[allow(clippy::type_complexity)]
    pub run: &'s mut dyn for<'x> FnMut(&'x D, [D::MemRef<'x>; 4]) -> Result<()>,
}

/// What a [`Device`] adds to the matmul written once here: the dialect's own parts. With it
/// and [`VectorMem`], a device is a [`MatMul`] backend.
pub trait MatmulDevice: Device {
    /// The backend's Strassen cutoff ([`MatMul::default_cutoff`]).
    fn matmul_cutoff(&self) -> usize {
        GPU_CUTOFF
    }

    /// The device's tensor-core base kernels for `T`, `[gemm, fused]` by their full names in
    /// the `matmul` kernel file, where it has them: kernels with the parameters and launch
    /// geometry of `gemm_<T>` and `gemm_fused_<T>`, run for [`super::BaseKernel::Auto`] and
    /// [`super::BaseKernel::TensorCore`]. None by default.
    fn tensor_core_kernels<T: Scalar>(&self) -> Option<[&'static str; 2]> {
        None
    }

    /// The [`HostMemory::Pinned`] and [`HostMemory::Mapped`] transfers of
    /// [`MatMul::matmul`]: `A` and `B` to where the kernels read them, `st.run` called once
    /// with the operands, then `C` into `st.c`; every queued use of the staging memory and
    /// the operands finished when it returns, error or not.
    fn matmul_staged(&self, st: Staged<'_, Self>) -> Result<()>;
}

/// The base kernels of one schedule: the GEMM, the fused (ABC-Strassen) GEMM and the
/// addition.
pub struct MatmulKernels<'a, D: Device + 'a> {
    /// `gemm_<T>` or a kernel with its arguments and launch.
    pub gemm: D::Kernel<'a>,
    /// `gemm_fused_<T>` or a kernel with its arguments and launch.
    pub fused: D::Kernel<'a>,
    /// `matadd_<T>`.
    pub add: D::Kernel<'a>,
}

impl<'a, D: Device> MatmulKernels<'a, D> {
    /// The portable kernels `gemm_<T>`, `gemm_fused_<T>` and `matadd_<T>`.
    pub fn portable<T: Scalar>(d: &'a D) -> Result<Self> {
        Ok(Self {
            gemm: d.kernel::<T>("matmul", "gemm")?,
            fused: d.kernel::<T>("matmul", "gemm_fused")?,
            add: d.kernel::<T>("matmul", "matadd")?,
        })
    }
}

/// The device steps of a schedule: launches on `d`'s queue; operands are buffer handles.
struct DeviceSteps<'a, 'o, D: Device + 'a> {
    d: &'a D,
    k: MatmulKernels<'a, D>,
    /// The options, for the work-groups of `matadd_<T>` ([`MatMulOptions::add_groups`]).
    opts: &'o MatMulOptions,
    p: Precision,
}

impl<D: Device> DeviceSteps<'_, '_, D> {
    /// Appends a `T` (the kernels' `REAL`) of value `v`.
    fn real(&self, args: &mut Launch<'_, '_, D>, v: f64) {
        match self.p {
            Precision::F32 => args.arg(v as f32),
            Precision::F64 => args.arg(v),
        };
    }
}

impl<'a, D: Device> ScheduleKernels for DeviceSteps<'a, '_, D> {
    type Operand = D::MemRef<'a>;

    fn gemm(&self, g: &DevGemm<D::MemRef<'a>>) -> Result<()> {
        let groups = to_u32(g.n.div_ceil(TILE) * g.m.div_ceil(TILE))? as usize;
        // The kernel's parameters (kernels/cuda/matmul.cu, kernels/opencl/matmul.cl):
        // (uint m, n, k, T alpha, beta, const T *a, u64 a_off, uint lda,
        //  const T *b, u64 b_off, uint ldb, T *c, u64 c_off, uint ldc)
        let mut args = self.d.launch(&self.k.gemm);
        args.arg(to_u32(g.m)?).arg(to_u32(g.n)?).arg(to_u32(g.k)?);
        self.real(&mut args, g.alpha);
        self.real(&mut args, g.beta);
        let (a, b, c) = (g.a, g.b, g.c);
        args.mem(a.buf).arg(a.offset as u64).arg(to_u32(a.ld)?);
        args.mem(b.buf).arg(b.offset as u64).arg(to_u32(b.ld)?);
        args.mem(c.buf).arg(c.offset as u64).arg(to_u32(c.ld)?);
        // SAFETY: the arguments match the kernel's parameters in number, order and type
        // (CUDA's gemm_dmma_f64 has gemm_f64's). The buffers are the device's (the backend
        // made the handles from its own buffers). `run_steps` verified that every block's
        // extent ((rows - 1) * ld + cols from its offset) lies inside its buffer; the kernel
        // reads a only at rows < m, columns < k, b at rows < k, columns < n, and reads
        // (beta != 0) and writes c at rows < m, columns < n, with 64-bit offsets. The output
        // never overlaps an input (schedule invariant, tested in core). One group of
        // GEMM_THREADS per TILE x TILE tile of C (the kernels' launch bounds /
        // reqd_work_group_size). The buffers outlive the kernels: the backends wait for the
        // queue before freeing staged host memory, and device frees wait for the device.
        unsafe { args.launch(Geometry::linear(groups, GEMM_THREADS)) }
    }

    fn gemm_fused(&self, f: &DevFused<D::MemRef<'a>>) -> Result<()> {
        let groups = to_u32(f.n.div_ceil(TILE) * f.m.div_ceil(TILE))? as usize;
        // (uint m, n, k, const T *a, u64 a0_off, u64 a1_off, T sa, uint lda,
        //  const T *b, u64 b0_off, u64 b1_off, T sb, uint ldb, T *c, u64 c0_off, T g0,
        //  T beta0, u64 c1_off, T g1, T beta1, uint ldc)
        let mut args = self.d.launch(&self.k.fused);
        args.arg(to_u32(f.m)?).arg(to_u32(f.n)?).arg(to_u32(f.k)?);
        let [a0, a1] = f.a;
        args.mem(a0.buf).arg(a0.offset as u64).arg(a1.offset as u64);
        self.real(&mut args, f.sa);
        args.arg(to_u32(a0.ld)?);
        let [b0, b1] = f.b;
        args.mem(b0.buf).arg(b0.offset as u64).arg(b1.offset as u64);
        self.real(&mut args, f.sb);
        args.arg(to_u32(b0.ld)?);
        let [c0, c1] = f.c;
        args.mem(c0.buf).arg(c0.offset as u64);
        self.real(&mut args, f.gamma[0]);
        self.real(&mut args, f.beta[0]);
        args.arg(c1.offset as u64);
        self.real(&mut args, f.gamma[1]);
        self.real(&mut args, f.beta[1]);
        args.arg(to_u32(c0.ld)?);
        // SAFETY: the arguments match gemm_fused_<T>'s (and gemm_dmma_fused_f64's)
        // parameters in number, order and type. `run_steps` verified that every term and
        // output block lies inside its buffer and that the two terms of each factor, and
        // the two outputs, share one buffer (passed once) and one leading dimension. The
        // kernel reads the terms at rows < m, columns < k (A) or rows < k, columns < n (B),
        // the second only when its scale is nonzero, and reads (beta != 0) and writes the
        // outputs at rows < m, columns < n; the outputs are disjoint from each other and
        // from the factors (schedule invariant, tested in core), so each element is written
        // by one work-item. Launch as gemm: one group of GEMM_THREADS per TILE x TILE tile.
        unsafe { args.launch(Geometry::linear(groups, GEMM_THREADS)) }
    }

    fn add(&self, s: &DevAdd<D::MemRef<'a>>) -> Result<()> {
        // One group per row (a group-stride loop over its columns), rows group-strided
        // beyond the options' limit.
        let groups = self.opts.add_groups(s.m).min(u32::MAX as usize);
        let wg = self.k.add.group_limit().min(ADD_THREADS);
        // (uint m, n, T alpha, const T *x, u64 x_off, uint ldx, T beta,
        //  const T *y, u64 y_off, uint ldy, T *d, u64 d_off, uint ldd)
        let mut args = self.d.launch(&self.k.add);
        args.arg(to_u32(s.m)?).arg(to_u32(s.n)?);
        self.real(&mut args, s.alpha);
        let (x, y, d) = (s.x, s.y, s.dst);
        args.mem(x.buf).arg(x.offset as u64).arg(to_u32(x.ld)?);
        self.real(&mut args, s.beta);
        args.mem(y.buf).arg(y.offset as u64).arg(to_u32(y.ld)?);
        args.mem(d.buf).arg(d.offset as u64).arg(to_u32(d.ld)?);
        // SAFETY: the arguments match the kernel's parameters in order and type. Every block
        // lies inside its buffer (`run_steps` checked); the kernel touches elements i < m,
        // j < n of each (y only when beta != 0); dst is x itself (the same work-item reads
        // then writes each element) or disjoint from both inputs (schedule invariant). Its
        // row and column loops cover every element whatever the number of groups.
        unsafe { args.launch(Geometry::linear(groups, wg)) }
    }
}

/// Runs `s` on `d` with operands `ops = [A, B, C, W]` holding `lens` values (checked
/// against every step first, by [`run_steps`]), with the base kernels
/// [`MatMulOptions::base_kernel`] resolves to: the device's tensor-core kernels
/// ([`MatmulDevice::tensor_core_kernels`]) or the portable ones. Fails with
/// [`Error::Unsupported`] when the tensor-core kernel is forced but absent.
pub fn run_schedule<'a, T: Scalar, D: MatmulDevice>(
    d: &'a D,
    s: &Schedule,
    ops: [D::MemRef<'a>; 4],
    lens: [usize; 4],
    opts: &MatMulOptions,
) -> Result<()> {
    let tc = d.tensor_core_kernels::<T>();
    let tensor = use_tensor_cores::<T>(opts.base_kernel, tc.is_some(), d.name())?;
    let k = match tc {
        Some([gemm, fused]) if tensor => {
            let add = d.kernel::<T>("matmul", "matadd")?;
            MatmulKernels {
                gemm: d.kernel_plain("matmul", gemm)?,
                fused: d.kernel_plain("matmul", fused)?,
                add,
            }
        }
        _ => MatmulKernels::portable::<T>(d)?,
    };
    run_schedule_with::<T, D>(d, k, s, ops, lens, opts)
}

/// Runs `s` on `d` with the base kernels `k`, operands `ops = [A, B, C, W]` holding `lens`
/// values (checked against every step first, by [`run_steps`]). Fails with
/// [`Error::Unsupported`] where the GEMM kernels cannot run work-groups of
/// [`GEMM_THREADS`].
pub fn run_schedule_with<'a, T: Scalar, D: Device>(
    d: &'a D,
    k: MatmulKernels<'a, D>,
    s: &Schedule,
    ops: [D::MemRef<'a>; 4],
    lens: [usize; 4],
    opts: &MatMulOptions,
) -> Result<()> {
    let limit = k.gemm.group_limit().min(k.fused.group_limit());
    if limit < GEMM_THREADS {
        return Err(Error::Unsupported(format!(
            "matmul on {}: the GEMM kernel needs work-groups of {GEMM_THREADS}, the device \
             allows {limit}",
            d.device()
        )));
    }
    let steps = DeviceSteps {
        d,
        k,
        opts,
        p: Precision::of::<T>(),
    };
    run_steps(&steps, s, ops, lens)
}

/// `v` packed row-major, as the backends upload a host operand (borrowed when it already
/// is).
pub fn packed<'a, T: Scalar>(v: &DenseView<'a, T>) -> std::borrow::Cow<'a, [T]> {
    if v.rows() == 0 || v.cols() == 0 {
        std::borrow::Cow::Borrowed(&[])
    } else if v.is_contiguous() {
        std::borrow::Cow::Borrowed(&v.data()[..v.rows() * v.cols()])
    } else {
        std::borrow::Cow::Owned(v.to_owned().into_vec())
    }
}

impl<T: Scalar, D: MatmulDevice + VectorMem<T>> MatMul<T> for D {
    fn default_cutoff(&self) -> usize {
        self.matmul_cutoff()
    }

    fn has_tensor_core_kernel(&self) -> bool {
        self.tensor_core_kernels::<T>().is_some()
    }

    /// One pass of the shared reduction kernel ([`crate::reduce::all_finite`]).
    fn all_finite(
        &self,
        v: &Self::Vector,
        (rows, cols): (usize, usize),
        _opts: &MatMulOptions,
    ) -> Result<bool> {
        crate::reduce::all_finite::<T, D>(self, v, rows.saturating_mul(cols))
    }

    fn gemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &Self::Vector,
        b: &Self::Vector,
        c: &mut Self::Vector,
        opts: &MatMulOptions,
    ) -> Result<()> {
        let len = |v| DeviceVectors::<T>::len(self, v);
        check_lengths(m, n, k, len(a), len(b), len(c))?;
        let lens = [len(a), len(b), len(c)];
        let c = &*c;
        // The operands' buffers, checked to be this device's.
        let [ra, rb, rc] = [a, b, c].map(|v| self.vector_ref(v));
        let (ra, rb, rc) = (ra?, rb?, rc?);
        let s = self.plan_device(m, n, k, a, b, opts)?;
        let w = Buf::<D, T>::uninit(self, s.workspace, "the Strassen workspace")?;
        let ops = [ra, rb, rc, self.mem_ref(w.mem())?];
        let lens = [lens[0], lens[1], lens[2], s.workspace];
        run_schedule::<T, D>(self, &s, ops, lens, opts)
    }

    fn matmul(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Dense<T>> {
        self.check_precision(Precision::of::<T>())?;
        let (m, n, k) = check_shapes(a.shape(), b.shape())?;
        let s = plan_host(a, b, (k, n, n), opts, self.matmul_cutoff())?;
        let need = device_bytes::<T>(m, n, k, &s).unwrap_or(u128::MAX);
        let what = format!(
            "a {m} x {k} · {k} x {n} {} product ({})",
            T::NAME,
            s.algorithm.name()
        );
        check_fits(self.name(), need, self.query().total_memory, &what)?;
        let (ha, hb) = (packed(&a), packed(&b));
        let mut out = vec![T::zero(); m * n];
        let lens = [m * k, k * n, m * n, s.workspace];
        let w = Buf::<D, T>::uninit(self, s.workspace, "the Strassen workspace")?;
        match opts.host_memory {
            HostMemory::Pageable => {
                let da = Buf::upload(self, &ha, "uploading A")?;
                let db = Buf::upload(self, &hb, "uploading B")?;
                let dc = Buf::<D, T>::uninit(self, m * n, "C")?;
                let ops = [
                    self.mem_ref(da.mem())?,
                    self.mem_ref(db.mem())?,
                    self.mem_ref(dc.mem())?,
                    self.mem_ref(w.mem())?,
                ];
                run_schedule::<T, D>(self, &s, ops, lens, opts)?;
                dc.download_into(self, &mut out, "downloading C")?;
            }
            memory @ (HostMemory::Pinned | HostMemory::Mapped) => {
                self.matmul_staged(Staged {
                    memory,
                    a: bytemuck::cast_slice(&ha),
                    b: bytemuck::cast_slice(&hb),
                    c: bytemuck::cast_slice_mut(&mut out),
                    workspace: w.mem(),
                    run: &mut |d: &D, ops| run_schedule::<T, D>(d, &s, ops, lens, opts),
                })?;
            }
        }
        Dense::from_vec(m, n, out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::super::{plan, Algorithm, BaseKernel};
    use super::*;
    use crate::backend::Backend;
    use crate::device::{Arg, DeviceQuery};

    /// A device that runs nothing and records the kernel and arguments of every launch; with
    /// `tensor`, it names tensor-core kernels for f64 as CUDA does.
    struct Recorder {
        tensor: bool,
        launches: Mutex<Vec<(String, Geometry, usize)>>,
    }

    struct Named(String);

    impl KernelHandle for Named {
        fn name(&self) -> &str {
            &self.0
        }
        fn group_limit(&self) -> usize {
            1024
        }
    }

    impl Backend for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn device(&self) -> String {
            "recorder".into()
        }
    }

    impl Device for Recorder {
        const FLAT_GRID: bool = false;
        type Mem = usize;
        type MemRef<'a> = usize;
        type Kernel<'a> = Named;
        const GRID_STRIDE: bool = false;

        fn query(&self) -> DeviceQuery {
            DeviceQuery::default()
        }
        fn check_precision(&self, _: Precision) -> Result<()> {
            Ok(())
        }
        fn alloc_mem(&self, bytes: usize, _: &str) -> Result<usize> {
            Ok(bytes)
        }
        fn upload_mem(&self, host: &[u8], _: &str) -> Result<usize> {
            Ok(host.len())
        }
        fn zeroed_mem(&self, bytes: usize, _: &str) -> Result<usize> {
            Ok(bytes)
        }
        fn read_mem(&self, _: &usize, _: &mut [u8], _: &str) -> Result<()> {
            Ok(())
        }
        fn mem_ref<'a>(&'a self, mem: &'a usize) -> Result<usize> {
            Ok(*mem)
        }
        fn kernel_plain(&self, module: &str, name: &str) -> Result<Named> {
            assert_eq!(module, "matmul");
            Ok(Named(name.to_string()))
        }
        fn kernel<T: Scalar>(&self, module: &str, root: &str) -> Result<Named> {
            self.kernel_plain(module, &format!("{root}_{}", T::NAME))
        }
        unsafe fn launch_raw(&self, k: &Named, g: Geometry, args: &[Arg<usize>]) -> Result<()> {
            let entry = (k.0.clone(), g, args.len());
            self.launches.lock().unwrap().push(entry);
            Ok(())
        }
    }

    impl MatmulDevice for Recorder {
        fn tensor_core_kernels<T: Scalar>(&self) -> Option<[&'static str; 2]> {
            (self.tensor && T::NAME == "f64").then_some(["gemm_tc_f64", "gemm_tc_fused_f64"])
        }
        fn matmul_staged(&self, _: Staged<'_, Self>) -> Result<()> {
            unreachable!("not used here")
        }
    }

    /// The kernels launched for one tiled 300 x 200 · 200 x 100 product and one fused level
    /// on 16^3, with `base`, on a device with or without tensor-core kernels.
    fn launched<T: Scalar>(tensor: bool, base: BaseKernel) -> Result<Vec<(String, usize)>> {
        let d = Recorder {
            tensor,
            launches: Mutex::new(Vec::new()),
        };
        for (alg, (m, n, k)) in [
            (Algorithm::Tiled, (300, 100, 200)),
            (Algorithm::Fused, (16, 16, 16)),
        ] {
            let opts = MatMulOptions {
                base_kernel: base,
                ..MatMulOptions::with(alg, Some(usize::from(alg == Algorithm::Fused)))
            };
            let s = plan(m, n, k, &opts, 1);
            let lens = [m * k, k * n, m * n, s.workspace];
            run_schedule::<T, Recorder>(&d, &s, [0, 1, 2, 3], lens, &opts)?;
        }
        let launches = d.launches.into_inner().unwrap();
        // The tiled product: one group of GEMM_THREADS per 128 x 128 tile of C.
        assert_eq!(launches[0].1, Geometry::linear(3, GEMM_THREADS));
        Ok(launches.into_iter().map(|(k, _, n)| (k, n)).collect())
    }

    #[test]
    fn the_base_kernel_follows_the_device_and_the_options() {
        // The portable kernels: 14 parameters of gemm, 21 of the fused kernel (7 products).
        let portable = |t: &str| {
            let mut v = vec![(format!("gemm_{t}"), 14)];
            v.extend(vec![(format!("gemm_fused_{t}"), 21); 7]);
            v
        };
        assert_eq!(
            launched::<f32>(false, BaseKernel::Auto).unwrap(),
            portable("f32")
        );
        assert_eq!(
            launched::<f64>(false, BaseKernel::Auto).unwrap(),
            portable("f64")
        );
        assert_eq!(
            launched::<f32>(true, BaseKernel::Auto).unwrap(),
            portable("f32")
        );
        assert_eq!(
            launched::<f64>(true, BaseKernel::Simt).unwrap(),
            portable("f64")
        );
        // The device's tensor-core kernels, with the same arguments and launch.
        let mut tc = vec![("gemm_tc_f64".to_string(), 14)];
        tc.extend(vec![("gemm_tc_fused_f64".to_string(), 21); 7]);
        assert_eq!(launched::<f64>(true, BaseKernel::Auto).unwrap(), tc);
        assert_eq!(launched::<f64>(true, BaseKernel::TensorCore).unwrap(), tc);
        // Forced where there is none: refused before any launch.
        for e in [
            launched::<f64>(false, BaseKernel::TensorCore),
            launched::<f32>(true, BaseKernel::TensorCore),
        ] {
            assert!(matches!(e, Err(Error::Unsupported(_))), "{e:?}");
        }
    }
}

//! [`Device`] for CUDA: device memory as [`DevBuf`]s of bytes, kernels by module and name
//! from the kernel table, launches through [`crate::launch`]. The algorithms written once
//! over [`Device`] in `trident-core` (SpMV, triangle counting, R-MCL) run on [`Cuda`]
//! through it.

use trident_core::device::{Arg, Device, DeviceQuery, Geometry, KernelHandle, VectorMem};
use trident_core::gpu::Precision;
use trident_core::{Error, Result, Scalar};

use crate::driver::{self, LaunchConfig};
use crate::kernels::Module;
use crate::launch::Kernel;
use crate::memory::{CudaScalar, CudaVector, DevBuf};
use crate::Cuda;

/// The largest block of every kernel (the hardware's limit; the kernels' launch bounds are
/// the callers' to respect).
const MAX_BLOCK: usize = 1024;

impl KernelHandle for Kernel<'_> {
    fn name(&self) -> &str {
        self.name
    }

    fn group_limit(&self) -> usize {
        MAX_BLOCK
    }
}

/// The module of the kernel table whose file stem is `name`.
fn module(name: &str) -> Result<Module> {
    let missing = || format!("no kernel file kernels/cuda/{name}.cu in the table");
    Module::by_name(name).ok_or_else(|| driver::backend(missing()))
}

/// A grid or block dimension as CUDA takes it.
fn dim(n: usize, kernel: &str, what: &str) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n <= i32::MAX as u32)
        .ok_or_else(|| Error::Unsupported(format!("{kernel}: {n} {what} exceed a CUDA grid")))
}

impl Device for Cuda {
    type Mem = DevBuf<u8>;
    type MemRef<'a> = u64;
    type Kernel<'a> = Kernel<'a>;

    const GRID_STRIDE: bool = true;
    const FLAT_GRID: bool = true;

    fn query(&self) -> DeviceQuery {
        DeviceQuery {
            total_memory: self.total_memory as u64,
            max_alloc: self.total_memory as u64,
            cache_bytes: self.l2_bytes,
            compute_units: self.compute_units,
            fp64: true,
        }
    }

    fn check_precision(&self, _: Precision) -> Result<()> {
        Ok(())
    }

    fn alloc_mem(&self, bytes: usize, what: &str) -> Result<DevBuf<u8>> {
        self.shared.make_current()?;
        DevBuf::uninit(&self.shared, bytes, what)
    }

    fn upload_mem(&self, host: &[u8], what: &str) -> Result<DevBuf<u8>> {
        self.shared.make_current()?;
        self.buf_from_host(host, what)
    }

    fn zeroed_mem(&self, bytes: usize, what: &str) -> Result<DevBuf<u8>> {
        self.shared.make_current()?;
        DevBuf::zeroed(&self.shared, bytes, what)
    }

    fn read_mem(&self, mem: &DevBuf<u8>, host: &mut [u8], what: &str) -> Result<()> {
        self.check_same_device(mem.shared())?;
        self.shared.make_current()?;
        // Wait for queued kernels (and report their failures as such) before copying.
        self.shared.synchronize()?;
        self.head_to_host(mem, host, what)
    }

    fn exchange_mem(
        &self,
        c: &dyn trident_core::dist::Comm,
        send: &[u8],
        parts: &[std::ops::Range<usize>],
        recv: &[usize],
        what: &str,
    ) -> Result<Option<DevBuf<u8>>> {
        self.nccl_exchange(c, send, parts, recv, what)
    }

    fn gather_mem(
        &self,
        c: &dyn trident_core::dist::Comm,
        send: &DevBuf<u8>,
        counts: &[usize],
        recv: &DevBuf<u8>,
        what: &str,
    ) -> Result<bool> {
        self.check_same_device(send.shared())?;
        self.check_same_device(recv.shared())?;
        self.nccl_gather(c, send, counts, recv, what)
    }

    fn all_to_all_mem(
        &self,
        c: &dyn trident_core::dist::Comm,
        (send, parts): (&DevBuf<u8>, &[std::ops::Range<usize>]),
        (into, recv): (&DevBuf<u8>, &[usize]),
        what: &str,
    ) -> Result<bool> {
        self.check_same_device(send.shared())?;
        self.check_same_device(into.shared())?;
        self.nccl_all_to_all(c, (send, parts), (into, recv), what)
    }

    fn sum_mem_u64(
        &self,
        c: &dyn trident_core::dist::Comm,
        mem: &DevBuf<u8>,
        words: usize,
        what: &str,
    ) -> Result<bool> {
        self.check_same_device(mem.shared())?;
        self.nccl_sum_u64(c, mem, words, what)
    }

    fn mem_ref<'a>(&'a self, mem: &'a DevBuf<u8>) -> Result<u64> {
        self.check_same_device(mem.shared())?;
        Ok(mem.ptr().as_raw())
    }

    fn kernel_plain(&self, m: &str, name: &str) -> Result<Kernel<'_>> {
        Cuda::kernel_plain(self, module(m)?, name)
    }

    fn kernel<T: Scalar>(&self, m: &str, root: &str) -> Result<Kernel<'_>> {
        self.kernel_in(module(m)?, Precision::of::<T>(), root)
    }

    unsafe fn launch_raw(
        &self,
        kernel: &Kernel<'_>,
        geometry: Geometry,
        args: &[Arg<u64>],
    ) -> Result<()> {
        let name = kernel.name;
        let [gx, gy, gz] = geometry.groups;
        let [bx, by, bz] = geometry.group_size;
        let mut cfg = LaunchConfig {
            grid: (
                dim(gx, name, "blocks")?,
                dim(gy, name, "blocks")?,
                dim(gz, name, "blocks")?,
            ),
            block: (
                dim(bx, name, "threads")?,
                dim(by, name, "threads")?,
                dim(bz, name, "threads")?,
            ),
            shared_mem_bytes: 0,
        };
        // The launch goes to this backend's context whatever ran on the thread since the
        // kernel was looked up.
        self.shared.make_current()?;
        let mut b = kernel.builder();
        for a in args {
            match *a {
                Arg::U32(v) => b.arg(v),
                Arg::U64(v) | Arg::Mem(v) => b.arg(v),
                Arg::I32(v) => b.arg(v),
                Arg::I64(v) => b.arg(v),
                Arg::F32(v) => b.arg(v),
                Arg::F64(v) => b.arg(v),
                // CUDA: dynamic shared memory is the launch's, not a parameter.
                Arg::Local(bytes) => {
                    cfg.shared_mem_bytes = u32::try_from(bytes).map_err(|_| {
                        Error::Unsupported(format!("{name}: {bytes} bytes of shared memory"))
                    })?;
                    continue;
                }
            };
        }
        // SAFETY: the caller guarantees that the arguments match the kernel's parameters
        // (a buffer's device address is its 8-byte pointer value) and that the buffers
        // suffice under this geometry.
        unsafe { b.launch(cfg) }
    }
}

impl<T: CudaScalar> VectorMem<T> for Cuda {
    fn vector_ref<'a>(&'a self, v: &'a CudaVector<T>) -> Result<u64> {
        self.check_same_device(v.buf.shared())?;
        Ok(v.buf.ptr().as_raw())
    }
}

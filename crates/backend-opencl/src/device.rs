//! [`Device`] for OpenCL: device memory as byte buffers tied to their backend instance,
//! kernels by module and name from the kernel table, launches through [`crate::program`].
//! The algorithms written once over [`Device`] in `trident-core` (SpMV, triangle counting,
//! R-MCL, matmul, the SVD) run on [`OpenCl`] through it.

use ocl::Buffer;
use trident_core::device::{Arg, Device, DeviceQuery, Geometry, KernelHandle, VectorMem};
use trident_core::gpu::Precision;
use trident_core::{Error, Result, Scalar};

use crate::error::ClResultExt;
use crate::kernels::Module;
use crate::memory::{ClScalar, ClVector};
use crate::program::{CachedKernel, LaunchDims};
use crate::{OpenCl, BACKEND};

/// Device memory of an [`OpenCl`] instance (at least one byte: OpenCL has no empty buffers).
pub struct ClMem {
    buf: Buffer<u8>,
    owner: u64,
}

impl KernelHandle for &CachedKernel {
    fn name(&self) -> &str {
        CachedKernel::name(self)
    }

    fn group_limit(&self) -> usize {
        self.local
    }
}

/// The module of the kernel table whose file stem is `name`.
fn module(name: &str) -> Result<Module> {
    let missing = || format!("no kernel file kernels/opencl/{name}.cl in the table");
    Module::by_name(name).ok_or_else(|| Error::backend(BACKEND, missing()))
}

impl Device for OpenCl {
    type Mem = ClMem;
    type MemRef<'a> = &'a ocl::core::Mem;
    type Kernel<'a> = &'a CachedKernel;

    const GRID_STRIDE: bool = false;
    const FLAT_GRID: bool = false;

    fn query(&self) -> DeviceQuery {
        DeviceQuery {
            total_memory: self.info.global_mem_bytes,
            max_alloc: self.info.max_alloc_bytes,
            cache_bytes: usize::try_from(self.info.global_mem_cache_bytes).unwrap_or(0),
            compute_units: self.info.compute_units,
            fp64: self.info.fp64,
        }
    }

    fn check_precision(&self, p: Precision) -> Result<()> {
        OpenCl::check_precision(self, p)
    }

    fn alloc_mem(&self, bytes: usize, what: &str) -> Result<ClMem> {
        Ok(ClMem {
            buf: self.alloc::<u8>(bytes, None, what)?,
            owner: self.id,
        })
    }

    fn upload_mem(&self, host: &[u8], what: &str) -> Result<ClMem> {
        Ok(ClMem {
            buf: self.alloc(host.len(), Some(host), what)?,
            owner: self.id,
        })
    }

    fn zeroed_mem(&self, bytes: usize, what: &str) -> Result<ClMem> {
        let mem = self.alloc_mem(bytes, what)?;
        self.fill_zero(&mem.buf, bytes, what)?;
        Ok(mem)
    }

    fn read_mem(&self, mem: &ClMem, host: &mut [u8], what: &str) -> Result<()> {
        self.check_owner(mem.owner, what)?;
        // Through the page-locked ring when large, else a blocking read; either waits for
        // the earlier work on the in-order queue.
        match self.read_staged(&mem.buf, host, what) {
            Some(r) => r,
            None => mem.buf.read(host).queue(&self.queue).enq().or_cl(|| what),
        }
    }

    fn mem_ref<'a>(&'a self, mem: &'a ClMem) -> Result<&'a ocl::core::Mem> {
        self.check_owner(mem.owner, "a kernel argument")?;
        Ok(mem.buf.as_core())
    }

    fn kernel_plain(&self, m: &str, name: &str) -> Result<&CachedKernel> {
        OpenCl::kernel_plain(self, module(m)?, name)
    }

    fn kernel<T: Scalar>(&self, m: &str, root: &str) -> Result<&CachedKernel> {
        OpenCl::kernel::<T>(self, module(m)?, root)
    }

    unsafe fn launch_raw(
        &self,
        kernel: &&CachedKernel,
        geometry: Geometry,
        args: &[Arg<&ocl::core::Mem>],
    ) -> Result<()> {
        let dims =
            LaunchDims::from_groups(geometry.groups, geometry.group_size).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{}: {:?} work-groups of {:?} exceed the global size",
                    kernel.name(),
                    geometry.groups,
                    geometry.group_size
                ))
            })?;
        let mut l = kernel.builder();
        for a in args {
            match *a {
                Arg::U32(v) => l.arg(v),
                Arg::U64(v) => l.arg(v),
                Arg::I32(v) => l.arg(v),
                Arg::I64(v) => l.arg(v),
                Arg::F32(v) => l.arg(v),
                Arg::F64(v) => l.arg(v),
                Arg::Mem(m) => l.arg(m),
                // OpenCL: dynamic local memory is a `__local` parameter.
                Arg::Local(bytes) => l.local::<u8>(bytes),
            };
        }
        // SAFETY: the caller guarantees that the arguments match the kernel's parameters
        // and that the buffers (this instance's: `mem_ref` checked) suffice under `dims`.
        unsafe { l.launch(&self.queue, dims) }
    }
}

impl<T: ClScalar> VectorMem<T> for OpenCl {
    fn vector_ref<'a>(&'a self, v: &'a ClVector<T>) -> Result<&'a ocl::core::Mem> {
        self.check_owner(v.owner, "a kernel argument")?;
        Ok(v.buf.as_core())
    }
}

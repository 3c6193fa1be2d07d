//! Kernel launches with typed arguments: [`Kernel::builder`] collects the argument values in
//! the order of the kernel's parameters, [`LaunchArgs::launch`] queues the kernel with a
//! [`LaunchConfig`] (1-, 2- or 3-D grid and block, dynamic shared memory). Replaces arrays of
//! raw argument pointers: every value is copied into storage that the builder owns, so it is
//! alive until `cuLaunchKernel` returns, and device buffers are borrowed for the builder's
//! lifetime.
//!
//! ```ignore
//! let k = self.kernel::<T>(Module::Spmv, "spmv_ellr")?;
//! let mut args = k.builder();
//! args.arg(rows).arg(k_begin).arg(&a.values).arg(&x.buf).arg(&y.buf);
//! // SAFETY: (why the arguments match the kernel and the buffers are large enough)
//! unsafe { args.launch(LaunchConfig::grid_1d(grid, 256)) }?;
//! ```

use std::ffi::c_void;
use std::marker::PhantomData;

use cust::memory::DeviceCopy;
use cust::sys::CUstream;
use trident_core::Result;

pub(crate) use crate::driver::LaunchConfig;
use crate::driver::{self, Function};
use crate::memory::{CudaScalar, CudaVector, DevBuf};

/// One argument value, 8-byte aligned: large and aligned enough for every kernel parameter
/// type that [`KernelArg`] allows (at most 8 bytes).
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(crate) struct Slot([u8; 8]);

impl Slot {
    fn new(bytes: &[u8]) -> Self {
        let mut s = [0u8; 8];
        s[..bytes.len()].copy_from_slice(bytes);
        Slot(s)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A value that can be passed to a kernel parameter: `u32` (`unsigned int`), `i32` (`int`),
/// `u64` (`unsigned long long`), `i64`, `f32`, `f64`, and device data by reference
/// (`&DevBuf<T>`, `&CudaVector<T>`: the device address of element 0, for a `T *`
/// parameter). Sealed: the launch relies on every value being at most 8 bytes.
pub(crate) trait KernelArg: sealed::Sealed {
    /// The bytes the kernel receives, in native byte order.
    fn slot(&self) -> Slot;
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelArg for $t {
            fn slot(&self) -> Slot {
                Slot::new(&self.to_ne_bytes())
            }
        }
    )*};
}
scalar_args!(u32, i32, u64, i64, f32, f64);

impl<T: DeviceCopy> sealed::Sealed for &DevBuf<T> {}
impl<T: DeviceCopy> KernelArg for &DevBuf<T> {
    fn slot(&self) -> Slot {
        Slot::new(&self.ptr().as_raw().to_ne_bytes())
    }
}

impl<T: CudaScalar> sealed::Sealed for &CudaVector<T> {}
impl<T: CudaScalar> KernelArg for &CudaVector<T> {
    fn slot(&self) -> Slot {
        (&self.buf).slot()
    }
}

/// A loaded kernel, ready to launch on the backend's stream (from `Cuda::kernel`).
#[derive(Clone, Copy)]
pub struct Kernel<'a> {
    pub(crate) function: Function,
    /// Full name, e.g. `spmv_ellr_f32`, for errors.
    pub(crate) name: &'a str,
    pub(crate) stream: CUstream,
}

impl<'a> Kernel<'a> {
    /// An empty argument list for one launch of this kernel.
    pub(crate) fn builder<'b>(&self) -> LaunchArgs<'a, 'b> {
        LaunchArgs {
            kernel: *self,
            values: Vec::with_capacity(16),
            _borrows: PhantomData,
        }
    }

    /// The kernel's name, e.g. `spmv_ellr_f32`.
    #[allow(dead_code)] // for messages of algorithm code
    pub(crate) fn name(&self) -> &str {
        self.name
    }
}

/// The arguments of one launch, in parameter order; `'b` is the lifetime of the device
/// buffers passed by reference.
pub(crate) struct LaunchArgs<'a, 'b> {
    kernel: Kernel<'a>,
    values: Vec<Slot>,
    _borrows: PhantomData<&'b ()>,
}

impl<'b> LaunchArgs<'_, 'b> {
    /// Appends the next argument.
    pub(crate) fn arg(&mut self, value: impl KernelArg + 'b) -> &mut Self {
        self.values.push(value.slot());
        self
    }

    /// Queues the kernel on the backend's stream with these arguments. The context must be
    /// current (`Cuda::kernel` made it so). A failed launch is an error naming the kernel,
    /// with the driver code as its source.
    ///
    /// # Safety
    ///
    /// The arguments must match the kernel's parameters in number, order and type, and
    /// every device buffer among them must be large enough for everything the kernel
    /// accesses under `cfg`. (The buffers stay allocated until the kernel finishes even if
    /// dropped: `cuMemFree` waits for the device.)
    pub(crate) unsafe fn launch(&mut self, cfg: LaunchConfig) -> Result<()> {
        let mut ptrs: Vec<*mut c_void> = self
            .values
            .iter_mut()
            .map(|s| (s as *mut Slot).cast())
            .collect();
        // SAFETY: every pointer points into `self.values`, which is neither moved nor
        // changed until the call returns, and holds the value's bytes at its start, aligned
        // to 8; the caller guarantees that the values match the parameters and that the
        // buffers suffice.
        unsafe {
            self.kernel
                .function
                .launch(self.kernel.stream, &cfg, &mut ptrs)
        }
        .map_err(|code| driver::error_from_code(code, format!("launching {}", self.kernel.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_native_bytes_at_their_start() {
        let s = 7u32.slot();
        assert_eq!(&s.0[..4], &7u32.to_ne_bytes());
        assert_eq!(2.5f64.slot().0, 2.5f64.to_ne_bytes());
        assert_eq!(std::mem::align_of::<Slot>(), 8);
        let c = LaunchConfig::grid_1d(3, 256).with_shared_mem(1024);
        assert_eq!(
            (c.grid, c.block, c.shared_mem_bytes),
            ((3, 1, 1), (256, 1, 1), 1024)
        );
    }
}

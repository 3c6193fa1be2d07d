//! Device memory: the scalar types, owned device buffers, and device vectors.

use std::sync::Arc;

use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DevicePointer};
use trident_core::gpu::check_download_len;
use trident_core::{DeviceVectors, Result, Scalar};

use crate::driver::{self, CuResultExt};
use crate::{Cuda, Shared};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The scalar types with CUDA kernels: `f32` and `f64` (sealed). Kernels are looked up by
/// [`trident_core::gpu::kernel_name`] (`<root>_f32`, `<root>_f64`).
pub trait CudaScalar: Scalar + DeviceCopy + sealed::Sealed {}

impl CudaScalar for f32 {}

impl CudaScalar for f64 {}

/// An owned device allocation of `len` elements (no allocation when `len == 0`), freed with
/// its context current, which it keeps alive.
pub struct DevBuf<T: DeviceCopy> {
    // Declared before `shared`: dropped (freed) before the context can be released.
    buf: Option<DeviceBuffer<T>>,
    len: usize,
    shared: Arc<Shared>,
}

impl<T: DeviceCopy> DevBuf<T> {
    /// A copy of `host` in device memory. The context must be current.
    pub(crate) fn from_host(shared: &Arc<Shared>, host: &[T], what: &str) -> Result<Self> {
        let mut buf = Self::uninit(shared, host.len(), what)?;
        if let Some(b) = buf.buf.as_mut() {
            b.copy_from(host)
                .or_cuda(|| format!("copying {what} to the device"))?;
        }
        Ok(buf)
    }

    /// `len` elements whose bytes are all zero. The context must be current.
    pub(crate) fn zeroed(shared: &Arc<Shared>, len: usize, what: &str) -> Result<Self> {
        let buf = Self::uninit(shared, len, what)?;
        if let Some(b) = buf.buf.as_ref() {
            let bytes = len * std::mem::size_of::<T>();
            // SAFETY: `b` is a live allocation of exactly `bytes` bytes in the current context.
            let rc = unsafe { cust::sys::cuMemsetD8_v2(b.as_device_ptr().as_raw(), 0, bytes) };
            if rc != cust::sys::cudaError_enum::CUDA_SUCCESS {
                return Err(driver::error_from_code(
                    rc as i32,
                    format!("zeroing {what} on the device"),
                ));
            }
        }
        Ok(buf)
    }

    /// `len` uninitialised elements; callers write them all before any read (the matmul
    /// output and workspace: every schedule writes each element before reading it).
    pub(crate) fn uninit(shared: &Arc<Shared>, len: usize, what: &str) -> Result<Self> {
        let buf = if len == 0 {
            None
        } else {
            // SAFETY: the contents are uninitialised; the callers (`from_host`, `zeroed`, and
            // matmul for its output and workspace, which its schedules write before reading)
            // fill every element before the buffer can be read.
            let b = unsafe { DeviceBuffer::uninitialized(len) }.or_cuda(|| {
                format!(
                    "allocating {len} x {} bytes for {what}",
                    std::mem::size_of::<T>()
                )
            })?;
            Some(b)
        };
        Ok(Self {
            buf,
            len,
            shared: Arc::clone(shared),
        })
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Device address of element 0 (null for an empty buffer).
    pub(crate) fn ptr(&self) -> DevicePointer<T> {
        match &self.buf {
            Some(b) => b.as_device_ptr(),
            None => DevicePointer::null(),
        }
    }

    /// Copies the first `host.len()` elements into `host` (at most the buffer's length). The
    /// context must be current and pending work on the backend's stream finished.
    pub(crate) fn copy_head_to_host(&self, host: &mut [T]) -> Result<()> {
        if host.len() > self.len {
            return Err(crate::driver::backend(format!(
                "a download of {} values from a buffer of {}",
                host.len(),
                self.len
            )));
        }
        match &self.buf {
            Some(b) if host.len() == self.len => {
                b.copy_to(host).or_cuda(|| "copying a vector to the host")?
            }
            Some(b) if !host.is_empty() => b
                .index(..host.len())
                .copy_to(host)
                .or_cuda(|| "copying the head of a vector to the host")?,
            _ => {}
        }
        Ok(())
    }

    /// The backend state this buffer belongs to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl<T: DeviceCopy> Drop for DevBuf<T> {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            // cuMemFree needs the allocation's context current on this thread. On failure
            // the memory is leaked rather than panicking.
            let _ = self.shared.make_current();
            drop(b);
        }
    }
}

/// A vector of `T` in CUDA device memory (see [`DeviceVectors`]).
pub struct CudaVector<T: CudaScalar> {
    pub(crate) buf: DevBuf<T>,
}

impl<T: CudaScalar> CudaVector<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True if the vector has no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }
}

impl<T: CudaScalar> std::fmt::Debug for CudaVector<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaVector")
            .field("type", &T::NAME)
            .field("len", &self.buf.len())
            .finish()
    }
}

impl<T: CudaScalar> DeviceVectors<T> for Cuda {
    type Vector = CudaVector<T>;

    fn upload(&self, host: &[T]) -> Result<CudaVector<T>> {
        self.shared.make_current()?;
        Ok(CudaVector {
            buf: self.buf_from_host(host, "a vector")?,
        })
    }

    fn zeros(&self, len: usize) -> Result<CudaVector<T>> {
        self.shared.make_current()?;
        Ok(CudaVector {
            buf: DevBuf::zeroed(&self.shared, len, "a vector")?,
        })
    }

    fn len(&self, v: &CudaVector<T>) -> usize {
        v.len()
    }

    fn download_into(&self, v: &CudaVector<T>, host: &mut [T]) -> Result<()> {
        check_download_len(v.len(), host.len())?;
        self.check_same_device(v.buf.shared())?;
        self.shared.make_current()?;
        // Wait for queued kernels (and report their failures as such) before copying.
        self.shared.synchronize()?;
        self.head_to_host(&v.buf, host, "a vector")
    }
}

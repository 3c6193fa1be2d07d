//! Device memory: the scalar types, buffers tied to their backend instance, and device
//! vectors.

use std::fmt;
use std::mem::size_of;

use ocl::{Buffer, OclPrm};
use trident_core::gpu::{check_download_len, Precision};
use trident_core::{Backend, DeviceVectors, Error, Result, Scalar};

use crate::error::ClResultExt;
use crate::program::ClArg;
use crate::{OpenCl, BACKEND};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The scalar types the OpenCL kernels are built for: `f32` and `f64` (sealed). Kernels are
/// looked up by [`trident_core::gpu::kernel_name`] (`<root>_f32`, `<root>_f64`); `f64`
/// needs a device with double precision.
pub trait ClScalar: Scalar + OclPrm + sealed::Sealed {}

impl ClScalar for f32 {}

impl ClScalar for f64 {}

/// A vector in OpenCL device memory (see [`DeviceVectors`]).
///
/// OpenCL forbids empty buffers, so an empty vector holds a one-element buffer that nothing
/// reads; its length is tracked separately.
pub struct ClVector<T: OclPrm> {
    pub(crate) buf: Buffer<T>,
    pub(crate) len: usize,
    pub(crate) owner: u64,
}

impl<T: OclPrm> crate::program::sealed::Sealed for &ClVector<T> {}
impl<T: OclPrm> ClArg for &ClVector<T> {
    fn set(&self, kernel: &ocl::core::Kernel, index: u32) -> ocl::core::Result<()> {
        (&self.buf).set(kernel, index)
    }
}

impl<T: OclPrm> fmt::Debug for ClVector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClVector").field("len", &self.len).finish()
    }
}

impl OpenCl {
    /// Checks that `owner` (a vector's or matrix's) is this instance: a buffer is only valid
    /// in the context it was made in.
    pub(crate) fn check_owner(&self, owner: u64, what: &str) -> Result<()> {
        if owner == self.id {
            Ok(())
        } else {
            Err(Error::backend(
                BACKEND,
                format!("{what}: the data belongs to a different OpenCL backend instance"),
            ))
        }
    }

    /// A device buffer for `len` values (at least one element), initialised from `init` when
    /// given (`init.len() == len`), else left uninitialised.
    pub(crate) fn alloc<P: OclPrm + trident_core::device::ring::Pod>(
        &self,
        len: usize,
        init: Option<&[P]>,
        what: &str,
    ) -> Result<Buffer<P>> {
        let n = len.max(1);
        let bytes = n.checked_mul(size_of::<P>()).ok_or_else(|| {
            Error::out_of_memory(
                BACKEND,
                format!("{what}: {n} values overflow the address space"),
            )
        })?;
        let max = self.info.max_alloc_bytes;
        if max > 0 && bytes as u64 > max {
            return Err(Error::out_of_memory(
                BACKEND,
                format!(
                    "{what}: {bytes} bytes exceed the largest allocation of {} ({max} bytes)",
                    self.info.description()
                ),
            ));
        }
        let buf = Buffer::<P>::builder()
            .queue(self.queue.clone())
            .len(n)
            .build()
            .or_alloc(|| format!("{what} ({bytes} bytes)"))?;
        // A blocking write rather than `CL_MEM_COPY_HOST_PTR`, which NVIDIA's driver serves
        // several times slower than CUDA's copy for large uploads (R-MCL's matrix).
        if let Some(host) = init.filter(|h| !h.is_empty()) {
            // Large ones through the page-locked ring.
            match self.write_staged(&buf, host, what) {
                Some(r) => r?,
                None => buf
                    .write(host)
                    .enq()
                    .or_alloc(|| format!("{what}: writing {bytes} bytes"))?,
            }
        }
        Ok(buf)
    }

    /// Elements zeroed by one fill command: at most 1 GiB, as NVIDIA's OpenCL fails a fill of a
    /// buffer's more than 4 GiB (a later command then finds the queue invalid).
    const FILL_PIECE_BYTES: usize = 1 << 30;

    /// Zeroes the first `len` elements of `buf` (non-blocking: the in-order queue runs the
    /// fills before anything enqueued later), in fills of at most 1 GiB.
    pub(crate) fn fill_zero<P: OclPrm>(
        &self,
        buf: &Buffer<P>,
        len: usize,
        what: &str,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let bytes = len * size_of::<P>();
        if self.queue.device_version() < [1, 2].into() {
            return buf
                .write(&vec![P::default(); len])
                .enq()
                .or_alloc(|| format!("{what}: zeroing {bytes} bytes"));
        }
        let piece = (Self::FILL_PIECE_BYTES / size_of::<P>()).max(1);
        for at in (0..len).step_by(piece) {
            buf.cmd()
                .fill(P::default(), Some(piece.min(len - at)))
                .offset(at)
                .enq()
                .or_alloc(|| format!("{what}: zeroing {bytes} bytes"))?;
        }
        Ok(())
    }

    pub(crate) fn vector<T: ClScalar>(&self, buf: Buffer<T>, len: usize) -> ClVector<T> {
        ClVector {
            buf,
            len,
            owner: self.id,
        }
    }
}

impl<T: ClScalar> DeviceVectors<T> for OpenCl {
    type Vector = ClVector<T>;

    fn upload(&self, host: &[T]) -> Result<ClVector<T>> {
        self.check_precision(Precision::of::<T>())?;
        let buf = self.alloc(host.len(), Some(host), "uploading a vector")?;
        Ok(self.vector(buf, host.len()))
    }

    fn zeros(&self, len: usize) -> Result<ClVector<T>> {
        self.check_precision(Precision::of::<T>())?;
        let what = "allocating a zero vector";
        let buf = self.alloc::<T>(len, None, what)?;
        self.fill_zero(&buf, len, what)?;
        Ok(self.vector(buf, len))
    }

    fn len(&self, v: &ClVector<T>) -> usize {
        v.len
    }

    fn download_into(&self, v: &ClVector<T>, host: &mut [T]) -> Result<()> {
        self.check_owner(v.owner, "downloading a vector")?;
        check_download_len(v.len, host.len())?;
        if v.len == 0 {
            // Nothing to copy, but a download still waits for the queued work.
            return self.synchronize();
        }
        let what = "downloading a vector";
        // Through the page-locked ring when large, else a blocking read; either waits for
        // the earlier work on the in-order queue.
        match self.read_staged(&v.buf, host, what) {
            Some(r) => r,
            None => v.buf.read(host).queue(&self.queue).enq().or_cl(|| what),
        }
    }
}

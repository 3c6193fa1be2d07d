//! Device vectors and ELLPACK-R SpMV on OpenCL.

use std::fmt;
use std::mem::size_of;

use ocl::core::{self, ArgVal, Status};
use ocl::{Buffer, OclPrm};
use trident_core::backend::check_spmv_shapes;
use trident_core::{Backend, DeviceVectors, EllpackR, Error, Result, Scalar, Spmv};

use crate::program::CachedKernel;
use crate::{backend_err, describe, OpenCl, BACKEND};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The scalar types the OpenCL kernels are built for: `f32` and `f64` (sealed).
pub trait ClScalar: Scalar + OclPrm + sealed::Sealed {
    /// Name of the SpMV kernel for this type.
    const SPMV_KERNEL: &'static str;
    /// True for `f64`, which needs a device with double precision.
    const NEEDS_FP64: bool;
}

impl ClScalar for f32 {
    const SPMV_KERNEL: &'static str = "spmv_ellr_f32";
    const NEEDS_FP64: bool = false;
}

impl ClScalar for f64 {
    const SPMV_KERNEL: &'static str = "spmv_ellr_f64";
    const NEEDS_FP64: bool = true;
}

/// A vector in OpenCL device memory (see [`DeviceVectors`]).
///
/// OpenCL forbids empty buffers, so an empty vector holds a one-element buffer that nothing
/// reads; its length is tracked separately.
pub struct ClVector<T: OclPrm> {
    buf: Buffer<T>,
    len: usize,
    owner: u64,
}

impl<T: OclPrm> fmt::Debug for ClVector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClVector").field("len", &self.len).finish()
    }
}

/// An ELLPACK-R matrix in OpenCL device memory (see [`Spmv`]): column-major values and
/// `u32` column indices, and `u32` row lengths.
pub struct ClEllpack<T: OclPrm> {
    rows: usize,
    cols: usize,
    width: usize,
    values: Buffer<T>,
    col_idx: Buffer<u32>,
    rl: Buffer<u32>,
    owner: u64,
}

impl<T: OclPrm> fmt::Debug for ClEllpack<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClEllpack")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("width", &self.width)
            .finish()
    }
}

impl OpenCl {
    /// The SpMV kernel for `T`, or [`Error::Unsupported`] for `f64` on a device without it.
    pub(crate) fn spmv_kernel<T: ClScalar>(&self) -> Result<&CachedKernel> {
        if !T::NEEDS_FP64 {
            return Ok(&self.spmv_f32);
        }
        self.spmv_f64.as_ref().ok_or_else(|| {
            Error::Unsupported(format!(
                "{} on OpenCL device {} (no double precision)",
                T::NAME,
                self.info.description()
            ))
        })
    }

    /// Checks that `owner` (a vector's or matrix's) is this instance: a buffer is only valid
    /// in the context it was made in.
    fn check_owner(&self, owner: u64, what: &str) -> Result<()> {
        if owner == self.id {
            Ok(())
        } else {
            Err(backend_err(
                what,
                "the data belongs to a different OpenCL backend instance",
            ))
        }
    }

    /// A device buffer for `len` values (at least one element), initialised from `init` when
    /// given (`init.len() == len`), else left uninitialised.
    fn alloc<P: OclPrm>(&self, len: usize, init: Option<&[P]>, what: &str) -> Result<Buffer<P>> {
        let n = len.max(1);
        let bytes = n
            .checked_mul(size_of::<P>())
            .ok_or_else(|| Error::OutOfMemory {
                backend: BACKEND,
                message: format!("{what}: {n} values overflow the address space"),
            })?;
        let max = self.info.max_alloc_bytes;
        if max > 0 && bytes as u64 > max {
            return Err(Error::OutOfMemory {
                backend: BACKEND,
                message: format!(
                    "{what}: {bytes} bytes exceed the largest allocation of {} ({max} bytes)",
                    self.info.description()
                ),
            });
        }
        let builder = Buffer::<P>::builder().queue(self.queue.clone()).len(n);
        let builder = match init {
            Some(host) if !host.is_empty() => builder.copy_host_slice(host),
            _ => builder,
        };
        builder.build().map_err(|e| alloc_err(what, bytes, e))
    }

    fn vector<T: ClScalar>(&self, buf: Buffer<T>, len: usize) -> ClVector<T> {
        ClVector {
            buf,
            len,
            owner: self.id,
        }
    }
}

/// Allocation failures (`CL_MEM_OBJECT_ALLOCATION_FAILURE`, `CL_OUT_OF_RESOURCES`, …) become
/// [`Error::OutOfMemory`]; anything else [`Error::Backend`].
fn alloc_err(what: &str, bytes: usize, e: ocl::Error) -> Error {
    match e.api_status() {
        Some(
            Status::CL_MEM_OBJECT_ALLOCATION_FAILURE
            | Status::CL_OUT_OF_RESOURCES
            | Status::CL_OUT_OF_HOST_MEMORY
            | Status::CL_INVALID_BUFFER_SIZE,
        ) => Error::OutOfMemory {
            backend: BACKEND,
            message: format!("{what} ({bytes} bytes): {}", describe(e)),
        },
        _ => backend_err(&format!("{what} ({bytes} bytes)"), describe(e)),
    }
}

impl<T: ClScalar> DeviceVectors<T> for OpenCl {
    type Vector = ClVector<T>;

    fn upload(&self, host: &[T]) -> Result<ClVector<T>> {
        self.spmv_kernel::<T>()?;
        let buf = self.alloc(host.len(), Some(host), "uploading a vector")?;
        Ok(self.vector(buf, host.len()))
    }

    fn zeros(&self, len: usize) -> Result<ClVector<T>> {
        self.spmv_kernel::<T>()?;
        let what = "allocating a zero vector";
        let buf = self.alloc::<T>(len, None, what)?;
        if len > 0 {
            // Non-blocking: the in-order queue runs the fill before anything enqueued later.
            let filled = if self.queue.device_version() >= [1, 2].into() {
                buf.cmd().fill(T::zero(), None).enq()
            } else {
                buf.write(&vec![T::zero(); len]).enq()
            };
            filled.map_err(|e| alloc_err(what, len * size_of::<T>(), e))?;
        }
        Ok(self.vector(buf, len))
    }

    fn len(&self, v: &ClVector<T>) -> usize {
        v.len
    }

    fn download_into(&self, v: &ClVector<T>, host: &mut [T]) -> Result<()> {
        self.check_owner(v.owner, "downloading a vector")?;
        if v.len != host.len() {
            return Err(Error::shape(format!(
                "download of {} values into {}",
                v.len,
                host.len()
            )));
        }
        if v.len == 0 {
            // Nothing to copy, but a download still waits for the queued work.
            return self.synchronize();
        }
        // A blocking read on the in-order queue: it waits for all earlier work.
        v.buf
            .read(host)
            .queue(&self.queue)
            .enq()
            .map_err(|e| backend_err("downloading a vector", describe(e)))
    }
}

impl<T: ClScalar> Spmv<T> for OpenCl {
    type Ellpack = ClEllpack<T>;

    fn upload_ellpack(&self, a: &EllpackR<T>) -> Result<ClEllpack<T>> {
        self.spmv_kernel::<T>()?;
        let slots = a.values().len();
        Ok(ClEllpack {
            rows: a.rows(),
            cols: a.cols(),
            width: a.width(),
            values: self.alloc(slots, Some(a.values()), "uploading ELLPACK-R values")?,
            col_idx: self.alloc(slots, Some(a.col_indices()), "uploading ELLPACK-R columns")?,
            rl: self.alloc(
                a.rows(),
                Some(a.row_lengths()),
                "uploading ELLPACK-R row lengths",
            )?,
            owner: self.id,
        })
    }

    fn ellpack_shape(&self, a: &ClEllpack<T>) -> (usize, usize) {
        (a.rows, a.cols)
    }

    fn spmv(&self, a: &ClEllpack<T>, x: &ClVector<T>, y: &mut ClVector<T>) -> Result<()> {
        let kernel = self.spmv_kernel::<T>()?;
        self.check_owner(a.owner, "spmv")?;
        self.check_owner(x.owner, "spmv")?;
        self.check_owner(y.owner, "spmv")?;
        check_spmv_shapes((a.rows, a.cols), x.len, y.len)?;
        if a.rows == 0 {
            return Ok(());
        }
        let local = kernel.local;
        let global = a
            .rows
            .div_ceil(local)
            .checked_mul(local)
            .ok_or_else(|| Error::Unsupported(format!("spmv with {} rows", a.rows)))?;
        let rows = a.rows as u64;
        let err = |e: ocl::core::Error| {
            backend_err(&format!("launching {}", T::SPMV_KERNEL), describe(e))
        };
        let k = kernel.lock();
        core::set_kernel_arg(&k, 0, ArgVal::scalar(&rows)).map_err(err)?;
        core::set_kernel_arg(&k, 1, ArgVal::mem(a.values.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 2, ArgVal::mem(a.col_idx.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 3, ArgVal::mem(a.rl.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 4, ArgVal::mem(x.buf.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 5, ArgVal::mem(y.buf.as_core())).map_err(err)?;
        // SAFETY: every buffer was made in this instance's context (owner checks above) and
        // is large enough for what the kernel touches: work-items i >= rows return at once;
        // item i reads rl[i] (rl has `rows` entries) and, for k < rl[i] <= width, the slot
        // k * rows + i < width * rows = len(values) = len(col_idx) (EllpackR invariants,
        // checked when the host matrix was built), then x[col] with col < cols = len(x)
        // (EllpackR invariant and the shape check), and writes y[i] with i < rows = len(y).
        // `y` is borrowed mutably, so it is not `x`; the matrix buffers are read-only.
        // Argument values are captured at enqueue, and OpenCL keeps the buffers alive until
        // the kernel completes even if their handles are dropped before then.
        unsafe {
            core::enqueue_kernel(
                self.queue.as_core(),
                &k,
                1,
                None,
                &[global, 1, 1],
                Some([local, 1, 1]),
                None::<()>,
                None::<()>,
            )
        }
        .map_err(err)
    }

    fn spmv_host(&self, a: &EllpackR<T>, x: &[T]) -> Result<Vec<T>> {
        check_spmv_shapes(a.shape(), x.len(), a.rows())?;
        let da = self.upload_ellpack(a)?;
        let dx = self.upload(x)?;
        // No zero fill: the kernel writes every entry of y.
        let buf = self.alloc::<T>(a.rows(), None, "allocating y")?;
        let mut dy = self.vector(buf, a.rows());
        self.spmv(&da, &dx, &mut dy)?;
        self.download(&dy)
    }
}

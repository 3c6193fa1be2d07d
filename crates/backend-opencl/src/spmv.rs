//! Device vectors and ELLPACK-R SpMV on OpenCL: `kernels/opencl/spmv.cl`, one work-item per
//! row, in one or more slot passes (see [`plan_slot_passes`]).

use std::fmt;
use std::mem::size_of;

use ocl::core::{self, ArgVal, Status};
use ocl::{Buffer, OclPrm};
use trident_core::gpu::EllpackPlan;
use trident_core::spmv::check_shapes as check_spmv_shapes;
use trident_core::{Backend, DeviceVectors, EllpackR, Error, Result, Scalar, Spmv, SpmvOptions};

use crate::program::CachedKernel;
use crate::{backend_err, describe, OpenCl, BACKEND};

/// Environment variable that fixes the number of slot passes (for experiments): a positive
/// integer; anything else leaves the choice to [`plan_slot_passes`].
pub const PASSES_ENV: &str = "TRIDENT_OPENCL_SPMV_PASSES";

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
    cols: usize,
    values: Buffer<T>,
    col_idx: Buffer<u32>,
    rl: Buffer<u32>,
    /// Dimensions and slot passes, one kernel launch each.
    plan: EllpackPlan,
    owner: u64,
}

impl<T: OclPrm> ClEllpack<T> {
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.plan.rows as usize, self.cols)
    }

    /// Padded row width.
    pub fn width(&self) -> usize {
        self.plan.width as usize
    }

    /// Number of kernel launches (slot passes) per product; set at upload from the matrix
    /// and the device's global memory cache size (`CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`), or by
    /// `TRIDENT_OPENCL_SPMV_PASSES`.
    pub fn passes(&self) -> usize {
        self.plan.passes.len()
    }
}

impl<T: OclPrm> fmt::Debug for ClEllpack<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClEllpack")
            .field("rows", &self.plan.rows)
            .field("cols", &self.cols)
            .field("width", &self.plan.width)
            .field("passes", &self.plan.passes.len())
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
                source: None,
            })?;
        let max = self.info.max_alloc_bytes;
        if max > 0 && bytes as u64 > max {
            return Err(Error::OutOfMemory {
                backend: BACKEND,
                message: format!(
                    "{what}: {bytes} bytes exceed the largest allocation of {} ({max} bytes)",
                    self.info.description()
                ),
                source: None,
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
            source: None,
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

    fn upload_ellpack_with(&self, a: &EllpackR<T>, opts: &SpmvOptions) -> Result<ClEllpack<T>> {
        self.spmv_kernel::<T>()?;
        let cache = usize::try_from(self.info.global_mem_cache_bytes).unwrap_or(0);
        let plan = EllpackPlan::new(a, cache, opts, PASSES_ENV)?;
        let slots = a.values().len();
        Ok(ClEllpack {
            cols: a.cols(),
            values: self.alloc(slots, Some(a.values()), "uploading ELLPACK-R values")?,
            col_idx: self.alloc(slots, Some(a.col_indices()), "uploading ELLPACK-R columns")?,
            rl: self.alloc(
                a.rows(),
                Some(a.row_lengths()),
                "uploading ELLPACK-R row lengths",
            )?,
            plan,
            owner: self.id,
        })
    }

    fn ellpack_shape(&self, a: &ClEllpack<T>) -> (usize, usize) {
        a.shape()
    }

    fn spmv(&self, a: &ClEllpack<T>, x: &ClVector<T>, y: &mut ClVector<T>) -> Result<()> {
        let kernel = self.spmv_kernel::<T>()?;
        self.check_owner(a.owner, "spmv")?;
        self.check_owner(x.owner, "spmv")?;
        self.check_owner(y.owner, "spmv")?;
        check_spmv_shapes(a.shape(), x.len, y.len)?;
        // The invariants the kernel trusts (OpenCL buffers hold at least one element).
        let len = |n: usize, buf_len: usize| if n == 0 { 0 } else { buf_len };
        let slots = a.plan.rows as usize * a.plan.width as usize;
        a.plan.check(
            len(slots, a.values.len()),
            len(slots, a.col_idx.len()),
            len(a.plan.rows as usize, a.rl.len()),
        )?;
        if a.plan.rows == 0 {
            return Ok(());
        }
        let local = kernel.local;
        let global = (a.plan.rows as usize).div_ceil(local) * local;
        let rows = u64::from(a.plan.rows);
        let err = |e: ocl::core::Error| {
            backend_err(&format!("launching {}", T::SPMV_KERNEL), describe(e))
        };
        // Held from setting the arguments to the last enqueue (which captures them).
        let k = kernel.lock();
        // Arguments, in the order and types of the kernel's parameters:
        // (ulong rows, uint k_begin, uint k_end, uint accumulate, const REAL *values,
        //  const uint *col_idx, const uint *rl, const REAL *x, REAL *y)
        core::set_kernel_arg(&k, 0, ArgVal::scalar(&rows)).map_err(err)?;
        core::set_kernel_arg(&k, 4, ArgVal::mem(a.values.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 5, ArgVal::mem(a.col_idx.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 6, ArgVal::mem(a.rl.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 7, ArgVal::mem(x.buf.as_core())).map_err(err)?;
        core::set_kernel_arg(&k, 8, ArgVal::mem(y.buf.as_core())).map_err(err)?;
        for (pass, &(k_begin, k_end)) in a.plan.passes.iter().enumerate() {
            let accumulate = u32::from(pass > 0);
            core::set_kernel_arg(&k, 1, ArgVal::scalar(&k_begin)).map_err(err)?;
            core::set_kernel_arg(&k, 2, ArgVal::scalar(&k_end)).map_err(err)?;
            core::set_kernel_arg(&k, 3, ArgVal::scalar(&accumulate)).map_err(err)?;
            // SAFETY: all nine arguments are set, with the kernel's types (u64, three u32,
            // five buffers). Every buffer was made in this instance's context (owner checks
            // above) and is large enough for what the kernel touches: work-items i >= rows
            // return at once; item i reads rl[i] (rl has `rows` entries) and, for
            // k_begin <= k < min(rl[i], k_end) with rl[i] <= width, the slot
            // k * rows + i < width * rows = len(values) = len(col_idx) (EllpackR
            // invariants, checked when the host matrix was built), then x[col] with
            // col < cols = len(x) (EllpackR invariant and the shape check); it reads (when
            // accumulating) and writes only y[i] with i < rows = len(y). `y` is borrowed
            // mutably, so it is not `x`; the matrix buffers are read-only. The passes are
            // valid slot ranges (checked above) and run in order on the in-order queue, the
            // first (accumulate = 0) overwriting y. Argument values are captured at enqueue,
            // and OpenCL keeps the buffers alive until the kernels complete even if their
            // handles are dropped before then.
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
            .map_err(err)?;
        }
        Ok(())
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

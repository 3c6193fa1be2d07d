//! ELLPACK-R SpMV on OpenCL: `kernels/opencl/spmv.cl`, one work-item per row, in one or
//! more slot passes (see [`trident_core::gpu::plan_slot_passes`]).

use std::fmt;

use ocl::Buffer;
use trident_core::gpu::EllpackPlan;
use trident_core::spmv::check_shapes as check_spmv_shapes;
use trident_core::{DeviceVectors, EllpackR, Result, Spmv, SpmvOptions};

use crate::kernels::Module;
use crate::memory::{ClScalar, ClVector};
use crate::program::LaunchDims;
use crate::OpenCl;

/// An ELLPACK-R matrix in OpenCL device memory (see [`Spmv`]): column-major values and
/// `u32` column indices, and `u32` row lengths.
pub struct ClEllpack<T: ClScalar> {
    values: Buffer<T>,
    col_idx: Buffer<u32>,
    rl: Buffer<u32>,
    /// Dimensions and slot passes, one kernel launch each.
    plan: EllpackPlan,
    owner: u64,
}

impl<T: ClScalar> ClEllpack<T> {
    /// Dimensions and slot passes (one kernel launch each), planned at upload from the
    /// matrix and the device's cache size or [`SpmvOptions::passes`].
    pub fn plan(&self) -> &EllpackPlan {
        &self.plan
    }
}

impl<T: ClScalar> fmt::Debug for ClEllpack<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.plan.debug_as::<T>(f, "ClEllpack")
    }
}

impl<T: ClScalar> Spmv<T> for OpenCl {
    type Ellpack = ClEllpack<T>;

    fn upload_ellpack_with(&self, a: &EllpackR<T>, opts: &SpmvOptions) -> Result<ClEllpack<T>> {
        self.check_precision(trident_core::gpu::Precision::of::<T>())?;
        let cache = usize::try_from(self.info.global_mem_cache_bytes).unwrap_or(0);
        let plan = EllpackPlan::new(a, cache, opts)?;
        let slots = a.values().len();
        Ok(ClEllpack {
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
        a.plan.shape()
    }

    fn spmv(&self, a: &ClEllpack<T>, x: &ClVector<T>, y: &mut ClVector<T>) -> Result<()> {
        let kernel = self.kernel::<T>(Module::Spmv, "spmv_ellr")?;
        self.check_owner(a.owner, "spmv")?;
        self.check_owner(x.owner, "spmv")?;
        self.check_owner(y.owner, "spmv")?;
        // Shapes, and the invariants the kernel trusts (OpenCL buffers hold at least one
        // element, so an empty array has a one-element buffer).
        let len = |n: usize, buf_len: usize| if n == 0 { 0 } else { buf_len };
        let slots = a.plan.rows as usize * a.plan.width as usize;
        let lens = (
            len(slots, a.values.len()),
            len(slots, a.col_idx.len()),
            len(a.plan.rows as usize, a.rl.len()),
        );
        a.plan.check_spmv(lens, x.len, y.len)?;
        if a.plan.rows == 0 {
            return Ok(());
        }
        let dims = LaunchDims::linear(a.plan.rows as usize, kernel.local);
        let rows = a.plan.rows;
        for (k_begin, k_end, accumulate) in a.plan.launches() {
            // The kernel's parameters (kernels/opencl/spmv.cl, as in kernels/cuda/spmv.cu):
            // (uint rows, uint k_begin, uint k_end, uint accumulate, const T *values,
            //  const uint *col_idx, const uint *rl, const T *x, T *y)
            let mut args = kernel.builder();
            args.arg(rows).arg(k_begin).arg(k_end).arg(accumulate);
            args.arg(&a.values).arg(&a.col_idx).arg(&a.rl);
            args.arg(x).arg(&*y);
            // SAFETY: the arguments have the kernel's types (four u32, five buffers).
            // Every buffer was made in this instance's context (owner checks above) and is
            // large enough for what the kernel touches: work-items i >= rows return at once;
            // item i reads rl[i] (rl has `rows` entries) and, for
            // k_begin <= k < min(rl[i], k_end) with rl[i] <= width, the slot
            // k * rows + i < width * rows = len(values) = len(col_idx) (EllpackR
            // invariants, checked when the host matrix was built), then x[col] with
            // col < cols = len(x) (EllpackR invariant and the shape check); it reads (when
            // accumulating) and writes only y[i] with i < rows = len(y). `y` is borrowed
            // mutably, so it is not `x`; the matrix buffers are read-only. The passes are
            // valid slot ranges (checked above) and run in order on the in-order queue, the
            // first (accumulate = 0) overwriting y.
            unsafe { args.launch(&self.queue, dims) }?;
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

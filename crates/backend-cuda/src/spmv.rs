//! ELLPACK-R SpMV on the device: `kernels/cuda/spmv.cu`, one thread per row, in one or
//! more slot passes (see [`plan_slot_passes`]).

use trident_core::gpu::EllpackPlan;
use trident_core::{EllpackR, Result, Spmv, SpmvOptions};

use crate::kernels::Module;
use crate::launch::LaunchConfig;
use crate::memory::{CudaScalar, CudaVector, DevBuf};
use crate::Cuda;

/// Threads per block; the kernel is compiled with `__launch_bounds__(256)`.
const BLOCK: u32 = 256;

/// An ELLPACK-R matrix in CUDA device memory (see [`Spmv`]): column-major values and `u32`
/// column indices (`width * rows` each, padding included) and `u32` row lengths.
pub struct CudaEllpack<T: CudaScalar> {
    values: DevBuf<T>,
    col_idx: DevBuf<u32>,
    rl: DevBuf<u32>,
    /// Dimensions and slot passes, one kernel launch each.
    plan: EllpackPlan,
}

impl<T: CudaScalar> CudaEllpack<T> {
    /// Dimensions and slot passes (one kernel launch each), planned at upload from the
    /// matrix and the device's cache size or [`SpmvOptions::passes`].
    pub fn plan(&self) -> &EllpackPlan {
        &self.plan
    }
}

impl<T: CudaScalar> std::fmt::Debug for CudaEllpack<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.plan.debug_as::<T>(f, "CudaEllpack")
    }
}

impl<T: CudaScalar> Spmv<T> for Cuda {
    type Ellpack = CudaEllpack<T>;

    fn upload_ellpack_with(&self, a: &EllpackR<T>, opts: &SpmvOptions) -> Result<CudaEllpack<T>> {
        let plan = EllpackPlan::new(a, self.l2_bytes, opts)?;
        self.shared.make_current()?;
        Ok(CudaEllpack {
            values: DevBuf::from_host(&self.shared, a.values(), "ELLPACK-R values")?,
            col_idx: DevBuf::from_host(&self.shared, a.col_indices(), "ELLPACK-R columns")?,
            rl: DevBuf::from_host(&self.shared, a.row_lengths(), "ELLPACK-R row lengths")?,
            plan,
        })
    }

    fn ellpack_shape(&self, a: &CudaEllpack<T>) -> (usize, usize) {
        a.plan.shape()
    }

    fn spmv(&self, a: &CudaEllpack<T>, x: &CudaVector<T>, y: &mut CudaVector<T>) -> Result<()> {
        for shared in [a.values.shared(), x.buf.shared(), y.buf.shared()] {
            self.check_same_device(shared)?;
        }
        // Shapes, and the invariants of EllpackR, re-checked because the kernel trusts them.
        let lens = (a.values.len(), a.col_idx.len(), a.rl.len());
        a.plan.check_spmv(lens, x.len(), y.len())?;
        if a.plan.rows == 0 {
            return Ok(());
        }
        let rows = a.plan.rows;
        let kernel = self.kernel::<T>(Module::Spmv, "spmv_ellr")?;
        // A block per BLOCK rows, at most the plan's max_groups (the kernel's grid-stride
        // loop covers the rest).
        let blocks = rows.div_ceil(BLOCK);
        let blocks = a.plan.max_groups.map_or(blocks, |g| {
            blocks.min(u32::try_from(g.max(1)).unwrap_or(u32::MAX))
        });
        let cfg = LaunchConfig::grid_1d(blocks, BLOCK);
        for (k_begin, k_end, accumulate) in a.plan.launches() {
            // The kernel's parameters (kernels/cuda/spmv.cu, as in kernels/opencl/spmv.cl):
            // (uint rows, uint k_begin, uint k_end, uint accumulate, const T *values,
            //  const uint *col_idx, const uint *rl, const T *x, T *y)
            let mut args = kernel.builder();
            args.arg(rows).arg(k_begin).arg(k_end).arg(accumulate);
            args.arg(&a.values).arg(&a.col_idx).arg(&a.rl);
            args.arg(x).arg(&*y);
            // SAFETY: the arguments are four u32s and five device buffers, matching the
            // kernel's (unsigned, unsigned, unsigned, unsigned, const T*, const unsigned*,
            // const unsigned*, const T*, T*). The matrix buffers hold rows * width values and
            // columns and `rows` row lengths (checked above); EllpackR guarantees
            // rl[i] <= width and columns < cols == len(x); len(y) == rows
            // (check_spmv). The kernel reads only entries k < min(rl[i], k_end) of
            // rows i < rows (a grid-stride loop, whatever the grid), and reads and writes
            // only y[i]. Passes run in stream order, the
            // first overwriting y.
            unsafe { args.launch(cfg) }?;
        }
        Ok(())
    }
}

//! ELLPACK-R SpMV on the device: `kernels/cuda/spmv.cu`, one thread per row, in one or
//! more slot passes (see [`plan_slot_passes`]).

use std::ffi::c_void;

use trident_core::gpu::EllpackPlan;
use trident_core::spmv::check_shapes as check_spmv_shapes;
use trident_core::{EllpackR, Result, Spmv, SpmvOptions};

use crate::driver::Launch;
use crate::memory::{CudaScalar, CudaVector, DevBuf};
use crate::Cuda;

/// Threads per block; the kernel is compiled with `__launch_bounds__(256)`.
const BLOCK: u32 = 256;

/// Environment variable that fixes the number of slot passes (for experiments).
pub const PASSES_ENV: &str = "TRIDENT_CUDA_SPMV_PASSES";

/// An ELLPACK-R matrix in CUDA device memory (see [`Spmv`]): column-major values and `u32`
/// column indices (`width * rows` each, padding included) and `u32` row lengths.
pub struct CudaEllpack<T: CudaScalar> {
    values: DevBuf<T>,
    col_idx: DevBuf<u32>,
    rl: DevBuf<u32>,
    cols: usize,
    /// Dimensions and slot passes, one kernel launch each.
    plan: EllpackPlan,
}

impl<T: CudaScalar> CudaEllpack<T> {
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.plan.rows as usize, self.cols)
    }

    /// Padded row width.
    pub fn width(&self) -> usize {
        self.plan.width as usize
    }

    /// Number of kernel launches (slot passes) per product; set at upload from the matrix
    /// and the device's L2 size, or by `TRIDENT_CUDA_SPMV_PASSES`.
    pub fn passes(&self) -> usize {
        self.plan.passes.len()
    }
}

impl<T: CudaScalar> std::fmt::Debug for CudaEllpack<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaEllpack")
            .field("type", &T::NAME)
            .field("rows", &self.plan.rows)
            .field("cols", &self.cols)
            .field("width", &self.plan.width)
            .field("passes", &self.plan.passes.len())
            .finish()
    }
}

impl<T: CudaScalar> Spmv<T> for Cuda {
    type Ellpack = CudaEllpack<T>;

    fn upload_ellpack_with(&self, a: &EllpackR<T>, opts: &SpmvOptions) -> Result<CudaEllpack<T>> {
        let plan = EllpackPlan::new(a, self.l2_bytes, opts, PASSES_ENV)?;
        self.shared.make_current()?;
        Ok(CudaEllpack {
            values: DevBuf::from_host(&self.shared, a.values(), "ELLPACK-R values")?,
            col_idx: DevBuf::from_host(&self.shared, a.col_indices(), "ELLPACK-R columns")?,
            rl: DevBuf::from_host(&self.shared, a.row_lengths(), "ELLPACK-R row lengths")?,
            cols: a.cols(),
            plan,
        })
    }

    fn ellpack_shape(&self, a: &CudaEllpack<T>) -> (usize, usize) {
        a.shape()
    }

    fn spmv(&self, a: &CudaEllpack<T>, x: &CudaVector<T>, y: &mut CudaVector<T>) -> Result<()> {
        check_spmv_shapes(a.shape(), x.len(), y.len())?;
        for shared in [a.values.shared(), x.buf.shared(), y.buf.shared()] {
            self.check_same_device(shared)?;
        }
        // Invariants of EllpackR, re-checked because the kernel trusts them.
        a.plan.check(a.values.len(), a.col_idx.len(), a.rl.len())?;
        if a.plan.rows == 0 {
            return Ok(());
        }
        let rows = a.plan.rows;
        let function = self.shared.function(T::SPMV_KERNEL)?;
        self.shared.make_current()?;
        let geometry = Launch {
            grid: rows.div_ceil(BLOCK),
            block: BLOCK,
        };
        let what = format!("launching {}", T::SPMV_KERNEL);
        for (pass, &(k_begin, k_end)) in a.plan.passes.iter().enumerate() {
            // Argument values, in the order and types of the kernel's parameters:
            // (unsigned int rows, unsigned int k_begin, unsigned int k_end,
            //  unsigned int accumulate, const T *values, const unsigned int *col_idx,
            //  const unsigned int *rl, const T *x, T *y)
            let mut rows = rows;
            let mut k_begin = k_begin;
            let mut k_end = k_end;
            let mut accumulate = u32::from(pass > 0);
            let mut values = a.values.ptr().as_raw();
            let mut col_idx = a.col_idx.ptr().as_raw();
            let mut rl = a.rl.ptr().as_raw();
            let mut xp = x.buf.ptr().as_raw();
            let mut yp = y.buf.ptr().as_raw();
            let mut args: [*mut c_void; 9] = [
                (&mut rows as *mut u32).cast(),
                (&mut k_begin as *mut u32).cast(),
                (&mut k_end as *mut u32).cast(),
                (&mut accumulate as *mut u32).cast(),
                (&mut values as *mut u64).cast(),
                (&mut col_idx as *mut u64).cast(),
                (&mut rl as *mut u64).cast(),
                (&mut xp as *mut u64).cast(),
                (&mut yp as *mut u64).cast(),
            ];
            // SAFETY: `args` points to four u32s and five 64-bit device addresses, matching
            // the kernel's (unsigned, unsigned, unsigned, unsigned, const T*, const unsigned*,
            // const unsigned*, const T*, T*). The matrix buffers hold rows * width values and
            // columns and `rows` row lengths (checked above); EllpackR guarantees
            // rl[i] <= width and columns < cols == len(x); len(y) == rows
            // (check_spmv_shapes). The kernel reads only entries k < min(rl[i], k_end) of
            // rows i < rows, and reads and writes only y[i]. Passes run in stream order, the
            // first overwriting y. The buffers stay allocated until the kernels finish:
            // freeing device memory (cuMemFree) waits for the device to finish using it.
            unsafe {
                function.launch(self.shared.stream_handle(), geometry, &mut args, &what)?;
            }
        }
        Ok(())
    }
}

//! ELLPACK-R SpMV on the device: `kernels/cuda/spmv.cu`, one thread per row, in one or
//! more slot passes (see [`plan_slot_passes`]).

use std::ffi::c_void;

use trident_core::backend::check_spmv_shapes;
use trident_core::ellpack::{plan_slot_passes, slot_passes_are_valid};
use trident_core::{EllpackR, Error, Result, Spmv};

use crate::driver::{self, Launch};
use crate::memory::{CudaScalar, CudaVector, DevBuf};
use crate::Cuda;

/// Threads per block; the kernel is compiled with `__launch_bounds__(256)`.
const BLOCK: u32 = 256;

/// Environment variable that fixes the number of slot passes (for experiments).
pub const PASSES_ENV: &str = "TRIDENT_CUDA_SPMV_PASSES";

/// The slot passes for `a` on a device with `l2_bytes` of L2: [`plan_slot_passes`], with the
/// count forced by `TRIDENT_CUDA_SPMV_PASSES` when that holds a positive integer.
pub(crate) fn plan_passes<T: CudaScalar>(a: &EllpackR<T>, l2_bytes: usize) -> Vec<(u32, u32)> {
    let forced = std::env::var(PASSES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&p| p >= 1);
    plan_slot_passes(a, l2_bytes, forced)
}

/// An ELLPACK-R matrix in CUDA device memory (see [`Spmv`]): column-major values and `u32`
/// column indices (`width * rows` each, padding included) and `u32` row lengths.
pub struct CudaEllpack<T: CudaScalar> {
    values: DevBuf<T>,
    col_idx: DevBuf<u32>,
    rl: DevBuf<u32>,
    rows: usize,
    cols: usize,
    width: usize,
    /// Slot ranges, one kernel launch each (see [`plan_slot_passes`]).
    passes: Vec<(u32, u32)>,
}

impl<T: CudaScalar> CudaEllpack<T> {
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Padded row width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of kernel launches (slot passes) per product; set at upload from the matrix
    /// and the device's L2 size, or by `TRIDENT_CUDA_SPMV_PASSES`.
    pub fn passes(&self) -> usize {
        self.passes.len()
    }
}

impl<T: CudaScalar> std::fmt::Debug for CudaEllpack<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaEllpack")
            .field("type", &T::NAME)
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("width", &self.width)
            .field("passes", &self.passes.len())
            .finish()
    }
}

impl<T: CudaScalar> Spmv<T> for Cuda {
    type Ellpack = CudaEllpack<T>;

    fn upload_ellpack(&self, a: &EllpackR<T>) -> Result<CudaEllpack<T>> {
        // The kernel takes the row count and slot numbers as 32-bit unsigned ints.
        for n in [a.rows(), a.width()] {
            if u32::try_from(n).is_err() {
                return Err(Error::IndexOverflow {
                    value: n as u128,
                    index_type: "u32",
                });
            }
        }
        let passes = plan_passes(a, self.l2_bytes);
        self.shared.make_current()?;
        Ok(CudaEllpack {
            values: DevBuf::from_host(&self.shared, a.values(), "ELLPACK-R values")?,
            col_idx: DevBuf::from_host(&self.shared, a.col_indices(), "ELLPACK-R columns")?,
            rl: DevBuf::from_host(&self.shared, a.row_lengths(), "ELLPACK-R row lengths")?,
            rows: a.rows(),
            cols: a.cols(),
            width: a.width(),
            passes,
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
        let slots = a.rows.checked_mul(a.width);
        if slots != Some(a.values.len()) || slots != Some(a.col_idx.len()) || a.rl.len() != a.rows {
            return Err(driver::backend(
                "spmv: inconsistent device ELLPACK-R matrix",
            ));
        }
        if a.rows == 0 {
            return Ok(());
        }
        let rows = u32::try_from(a.rows).map_err(|_| Error::IndexOverflow {
            value: a.rows as u128,
            index_type: "u32",
        })?;
        u32::try_from(a.width).map_err(|_| Error::IndexOverflow {
            value: a.width as u128,
            index_type: "u32",
        })?;
        let passes_ok = slot_passes_are_valid(&a.passes, a.width);
        if !passes_ok {
            return Err(driver::backend("spmv: inconsistent slot passes"));
        }
        let function = self.shared.function(T::SPMV_KERNEL)?;
        self.shared.make_current()?;
        let geometry = Launch {
            grid: rows.div_ceil(BLOCK),
            block: BLOCK,
        };
        let what = format!("launching {}", T::SPMV_KERNEL);
        for (pass, &(k_begin, k_end)) in a.passes.iter().enumerate() {
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

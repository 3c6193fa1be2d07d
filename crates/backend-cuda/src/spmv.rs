//! ELLPACK-R SpMV on the device: `kernels/cuda/spmv.cu`, one thread per row, in one or
//! more slot passes (see [`plan_passes`]).

use std::ffi::c_void;

use trident_core::backend::check_spmv_shapes;
use trident_core::{EllpackR, Error, Result, Spmv};

use crate::driver::{self, Launch};
use crate::memory::{CudaScalar, CudaVector, DevBuf};
use crate::Cuda;

/// Threads per block; the kernel is compiled with `__launch_bounds__(256)`.
const BLOCK: u32 = 256;

/// Environment variable that fixes the number of slot passes (for experiments).
pub const PASSES_ENV: &str = "TRIDENT_CUDA_SPMV_PASSES";

/// At most this many slot passes.
const MAX_PASSES: usize = 8;

/// Rows per sampled window, and windows sampled, when estimating the x footprint.
const WINDOW_ROWS: usize = 1 << 16;
const WINDOWS: usize = 8;
/// At most this many entries examined per window.
const WINDOW_ENTRIES: usize = 1 << 17;

/// Splits the slots `0..width` of `a` into passes, each gathering from a part of x that fits
/// in L2.
///
/// The kernel's x gathers are served by L2 when the part of x in use fits there; sorted
/// columns make slot `k` of random rows cluster around the `k / width` quantile of the
/// columns, so handling a range of slots at a time for all rows shrinks that part, at the
/// cost of re-reading and re-writing y once per extra pass. The part of x that consecutive
/// rows touch is estimated from the column span of sampled row windows (small for banded or
/// locally clustered matrices, which then run in one pass); with `budget = L2 / 3`, the
/// number of passes is `ceil(footprint / budget)`, at most 8 and at most `width / 2`.
/// Measured on an H100 (50 MB L2), 10M rows x 16 random columns: f32 2.16 ms in one pass,
/// 1.43 ms in 3 (chosen); f64 3.98 ms in one, 2.41 ms in 5 (chosen); 10M x 4: f32 0.59 ms
/// in one, 0.46 ms in 2 (chosen), 0.49 ms in 3; 4M x 16 f32 (16 MB x) fastest in one pass
/// (0.53 ms, chosen); banded 10M x 16 f32 0.48 ms in one pass (chosen).
pub(crate) fn plan_passes<T: CudaScalar>(a: &EllpackR<T>, l2_bytes: usize) -> Vec<(u32, u32)> {
    let width = a.width();
    let forced = std::env::var(PASSES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&p| p >= 1);
    let passes = match forced {
        Some(p) => p,
        None => {
            let budget = (l2_bytes / 3).max(1 << 20);
            let footprint = x_footprint_columns(a).saturating_mul(std::mem::size_of::<T>());
            // At least two slots per pass: with fewer, the columns of a slot cluster less
            // and the extra y traffic dominates (10M x 4 random: 2 passes beat 3).
            footprint.div_ceil(budget).min(MAX_PASSES).min(width / 2)
        }
    }
    .clamp(1, width.max(1));
    (0..passes)
        .map(|g| {
            (
                (width * g / passes) as u32,
                (width * (g + 1) / passes) as u32,
            )
        })
        .collect()
}

/// Estimated number of x entries that a window of consecutive rows gathers from: the mean
/// column span (max - min + 1) of up to 8 sampled windows of 65536 rows.
fn x_footprint_columns<T: CudaScalar>(a: &EllpackR<T>) -> usize {
    let (rows, cols) = a.shape();
    if rows == 0 || cols == 0 || a.width() == 0 {
        return 0;
    }
    let window = WINDOW_ROWS.min(rows);
    let starts = WINDOWS.min(rows.div_ceil(window));
    let col_idx = a.col_indices();
    let rl = a.row_lengths();
    let (mut total, mut counted) = (0usize, 0usize);
    for w in 0..starts {
        let first = if starts == 1 {
            0
        } else {
            (rows - window) * w / (starts - 1)
        };
        let step = (window * a.width()).div_ceil(WINDOW_ENTRIES).max(1);
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        for i in (first..first + window).step_by(step) {
            for k in 0..rl[i] as usize {
                let c = col_idx[k * rows + i] as usize;
                lo = lo.min(c);
                hi = hi.max(c);
            }
        }
        if lo <= hi {
            total += hi - lo + 1;
            counted += 1;
        }
    }
    total.checked_div(counted).unwrap_or(0).min(cols)
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
    /// Slot ranges, one kernel launch each (see [`plan_passes`]).
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
        let width = u32::try_from(a.width).map_err(|_| Error::IndexOverflow {
            value: a.width as u128,
            index_type: "u32",
        })?;
        let passes_ok = !a.passes.is_empty()
            && a.passes[0].0 == 0
            && a.passes.iter().all(|&(b, e)| b <= e && e <= width.max(1))
            && a.passes.windows(2).all(|p| p[0].1 == p[1].0)
            && a.passes.last().is_some_and(|p| p.1 >= width);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ellpack(
        rows: usize,
        cols: usize,
        width: usize,
        col: impl Fn(usize, usize) -> usize,
    ) -> EllpackR<f32> {
        let mut values = vec![0.0f32; rows * width];
        let mut col_idx = vec![0u32; rows * width];
        for i in 0..rows {
            for k in 0..width {
                values[k * rows + i] = 1.0;
                col_idx[k * rows + i] = col(i, k) as u32;
            }
        }
        EllpackR::new(rows, cols, width, values, col_idx, vec![width as u32; rows]).unwrap()
    }

    #[test]
    fn passes_cover_all_slots_in_order() {
        if std::env::var(PASSES_ENV).is_ok() {
            return;
        }
        const L2: usize = 50 << 20;
        // Banded: one pass, whatever the size of x.
        let n = 1 << 20;
        let banded = ellpack(n, n, 16, |i, k| (i + k).min(n - 16 + k));
        assert_eq!(plan_passes(&banded, L2), [(0, 16)]);
        // Scattered columns over a large x: several passes, covering 0..16 contiguously.
        let n = 1 << 20;
        let cols = 12_000_000; // 48 MB of f32
        let spread = ellpack(n, cols, 16, |i, k| {
            k * (cols / 16) + (i.wrapping_mul(2_654_435_761) % (cols / 16))
        });
        let p = plan_passes(&spread, L2);
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p.first().unwrap().0, 0);
        assert_eq!(p.last().unwrap().1, 16);
        assert!(p.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
        // Small x: one pass.
        let small = ellpack(1000, 1000, 4, |i, k| k * 250 + i % 250);
        assert_eq!(plan_passes(&small, L2), [(0, 4)]);
        // Width 0 and 1.
        assert_eq!(plan_passes(&ellpack(5, 5, 0, |_, _| 0), L2), [(0, 0)]);
        let one = ellpack(n, cols, 1, |i, _| i.wrapping_mul(2_654_435_761) % cols);
        assert_eq!(plan_passes(&one, L2), [(0, 1)]);
    }
}

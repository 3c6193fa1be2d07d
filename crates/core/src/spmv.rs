//! Sparse matrix–vector product on ELLPACK-R matrices: the [`Spmv`] trait, its options, the
//! host reference and the accuracy contract ([`tolerance`]) that the conformance suite, the
//! benchmarks and the CLI all check against.

pub mod device;
mod plan;

pub use plan::{plan_slot_passes, slot_passes_are_valid, EllpackPlan};

use crate::backend::DeviceVectors;
use crate::ellpack::EllpackR;
use crate::error::{Error, Result};
use crate::scalar::{Index, Scalar};
use crate::tolerance::Tolerance;

/// Options for uploading a matrix for [`Spmv`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpmvOptions {
    /// Number of slot passes (kernel launches per product) on GPU backends: `None` plans
    /// from the matrix and the device's cache (see [`plan_slot_passes`]);
    /// `Some(p)` forces `p`, clamped to `1..=max(width, 1)`. The CPU ignores it.
    pub passes: Option<usize>,
    /// At most this many work-groups (CUDA blocks, at least 1) per launch on backends whose
    /// kernel loops over the rows (CUDA's grid-stride loop); `None`: one per block of rows,
    /// so the loop never runs twice. Tests force the loop with a small value; the CPU and
    /// OpenCL (one work-item per row) ignore it.
    pub max_groups: Option<usize>,
}

/// Sparse matrix–vector product on ELLPACK-R matrices: `y = A x`.
///
/// Accuracy contract (checked by the conformance suite): each `y[i]` is within
/// [`tolerance`] of the exact result: any summation order is allowed, but no precision may be
/// lost beyond that of `T`.
pub trait Spmv<T: Scalar>: DeviceVectors<T> {
    /// An ELLPACK-R matrix in device memory.
    type Ellpack: Send;
    /// Copies a matrix to the device, with the default [`SpmvOptions`].
    fn upload_ellpack(&self, a: &EllpackR<T>) -> Result<Self::Ellpack> {
        self.upload_ellpack_with(a, &SpmvOptions::default())
    }
    /// Copies a matrix to the device.
    fn upload_ellpack_with(&self, a: &EllpackR<T>, opts: &SpmvOptions) -> Result<Self::Ellpack>;
    /// `(rows, cols)` of a device matrix.
    fn ellpack_shape(&self, a: &Self::Ellpack) -> (usize, usize);
    /// `y = A x` on the device, overwriting `y` whatever it held. Fails with
    /// [`crate::Error::Shape`] unless `len(x) == cols` and `len(y) == rows`. May return
    /// before the kernel finishes; a download waits for it.
    fn spmv(&self, a: &Self::Ellpack, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;

    /// `A x` for host data: one upload of `A` and `x`, one download of `y`.
    fn spmv_host(&self, a: &EllpackR<T>, x: &[T]) -> Result<Vec<T>> {
        let da = self.upload_ellpack(a)?;
        let dx = self.upload(x)?;
        let mut dy = self.zeros(a.rows())?;
        self.spmv(&da, &dx, &mut dy)?;
        self.download(&dy)
    }
}

/// Checks the operand shapes of `y = A x`; backends call this before launching.
pub fn check_shapes(a: (usize, usize), x_len: usize, y_len: usize) -> Result<()> {
    if x_len != a.1 || y_len != a.0 {
        return Err(Error::shape(format!(
            "spmv: A is {} x {}, x has {x_len} entries, y has {y_len}",
            a.0, a.1
        )));
    }
    Ok(())
}

/// The SpMV accuracy contract for one row of `n` stored entries:
/// `|y_i − exact_i| ≤ (n + 3) · 4 · ε_T · Σ_k |a_ik x_k| + (smallest normal of T)`.
pub fn tolerance<T: Scalar>(row_entries: usize) -> Tolerance {
    Tolerance::of::<T>((row_entries as f64 + 3.0) * 4.0)
}

/// `y = A x` from raw `(row, col, value)` entries (duplicates summed), in f64, with the
/// per-row magnitude `Σ |a_ik x_k|` and entry count: the yardstick for any conversion path
/// (COO → CSR → ELLPACK-R) and any backend. Entries outside `rows x x.len()` are ignored.
pub fn reference_from_entries(
    rows: usize,
    entries: impl IntoIterator<Item = (usize, usize, f64)>,
    x: &[f64],
) -> Vec<RowReference> {
    let mut out = vec![RowReference::default(); rows];
    for (r, c, v) in entries {
        if r < rows && c < x.len() {
            out[r].value += v * x[c];
            out[r].magnitude += (v * x[c]).abs();
            out[r].entries += 1;
        }
    }
    out
}

/// One row of [`reference_from_entries`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RowReference {
    /// `Σ_k a_ik x_k` in f64.
    pub value: f64,
    /// `Σ_k |a_ik x_k|`: the scale of the rounding error.
    pub magnitude: f64,
    /// Entries in the row (duplicates counted separately: an upper bound on the stored ones).
    pub entries: usize,
}

/// `y = A x`, accumulating each row in f64 and rounding once.
pub fn reference<T: Scalar, I: Index>(a: &EllpackR<T, I>, x: &[T]) -> Vec<T> {
    reference_abs(a, x)
        .into_iter()
        .map(|(y, _)| T::from_f64(y))
        .collect()
}

/// Per row, `(Σ_k a_ik x_k, Σ_k |a_ik x_k|)` in f64. Entries missing from `x` count as 0.
pub fn reference_abs<T: Scalar, I: Index>(a: &EllpackR<T, I>, x: &[T]) -> Vec<(f64, f64)> {
    (0..a.rows())
        .map(|i| {
            let len = a.row_lengths()[i].to_usize();
            (0..len).fold((0.0, 0.0), |(s, m), k| {
                let (c, v) = a.entry(i, k);
                let p = v.to_f64() * x.get(c).map_or(0.0, |x| Scalar::to_f64(*x));
                (s + p, m + p.abs())
            })
        })
        .collect()
}

/// Checks `y` against `reference` row by row within [`tolerance`]; NaN never passes. The error
/// names the first bad row.
pub fn check_result<T: Scalar>(y: &[T], reference: &[RowReference]) -> Result<(), String> {
    if y.len() != reference.len() {
        return Err(format!(
            "y has {} entries, expected {}",
            y.len(),
            reference.len()
        ));
    }
    for (i, (got, r)) in y.iter().zip(reference).enumerate() {
        tolerance::<T>(r.entries)
            .check(Scalar::to_f64(*got), r.value, r.magnitude)
            .map_err(|m| format!("row {i}: {m}"))?;
    }
    Ok(())
}

/// Checks `samples` evenly spaced rows of `y = A x` against the f64 product of `a` within
/// [`tolerance`]: a cheap check for benchmarks and the CLI that a backend computed the right
/// thing before it is timed. NaN never passes.
pub fn check_sampled<T: Scalar, I: Index>(
    a: &EllpackR<T, I>,
    x: &[T],
    y: &[T],
    samples: usize,
) -> Result<(), String> {
    if y.len() != a.rows() || x.len() != a.cols() {
        return Err(format!(
            "A is {} x {}, x has {}, y has {} entries",
            a.rows(),
            a.cols(),
            x.len(),
            y.len()
        ));
    }
    let step = (a.rows() / samples.max(1)).max(1);
    for i in (0..a.rows()).step_by(step) {
        let n = a.row_lengths()[i].to_usize();
        let (value, magnitude) = (0..n).fold((0.0, 0.0), |(s, m), k| {
            let (c, v) = a.entry(i, k);
            let p = Scalar::to_f64(v) * Scalar::to_f64(x[c]);
            (s + p, m + p.abs())
        });
        tolerance::<T>(n)
            .check(Scalar::to_f64(y[i]), value, magnitude)
            .map_err(|m| format!("row {i}: {m}"))?;
    }
    Ok(())
}

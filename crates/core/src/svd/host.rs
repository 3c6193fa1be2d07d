//! The host side of the SVD and QR drivers, free of any device: layout changes between the
//! row-major [`Dense`] and the column-major working matrices (tiled, in parallel), the
//! finiteness check with the Frobenius norm, the power-of-two working scale, the host memory
//! check, and the small `n × n` reshuffles of the QR2 preconditioning.

use rayon::prelude::*;

use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

use super::{check_finite, Wide};

/// `out[o · inner + i] = f(o, i)` for `o < outer`, `i < inner`: in parallel (rayon) over
/// blocks of [`TILE_OUTER`] rows of `out`, each filled in tiles of [`TILE_INNER`] columns, so
/// that the host's layout changes (row- to column-major and back) read and write within a few
/// cache lines per tile instead of striding over the whole matrix per element. Every value is
/// computed by `f` alone, so the result does not depend on the tiling or the thread count.
pub(super) fn tiled<X: Copy + Send + Sync + num_traits::Zero>(
    outer: usize,
    inner: usize,
    f: impl Fn(usize, usize) -> X + Sync,
) -> Result<Vec<X>> {
    let len = outer.checked_mul(inner).ok_or_else(|| {
        Error::out_of_memory(
            "host",
            format!("a {outer} x {inner} matrix: the size overflows"),
        )
    })?;
    let mut out = crate::alloc::try_zeroed_vec(len, || format!("a {outer} x {inner} matrix"))?;
    if inner == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(TILE_OUTER * inner)
        .enumerate()
        .for_each(|(b, block)| {
            let o0 = b * TILE_OUTER;
            for i0 in (0..inner).step_by(TILE_INNER) {
                let i1 = (i0 + TILE_INNER).min(inner);
                for (r, row) in block.chunks_mut(inner).enumerate() {
                    for (i, x) in (i0..i1).zip(&mut row[i0..i1]) {
                        *x = f(o0 + r, i);
                    }
                }
            }
        });
    Ok(out)
}

/// Rows of the output per parallel task of [`tiled`] (32 f32 reads of one source line).
const TILE_OUTER: usize = 32;
/// Columns of the output per tile of [`tiled`].
const TILE_INNER: usize = 64;

/// A row-major `rows × cols` [`Dense`] filled by [`tiled`].
pub(super) fn dense_tiled<T: Scalar>(
    rows: usize,
    cols: usize,
    f: impl Fn(usize, usize) -> T + Sync,
) -> Result<Dense<T>> {
    Dense::from_vec(rows, cols, tiled(rows, cols, f)?)
}

/// Column-major copy of a row-major view (optionally of its transpose), each value times
/// `scale` (computed in f64: exact for a power of two within range).
pub fn to_col_major<T: Scalar>(a: DenseView<'_, T>, transpose: bool, scale: f64) -> Result<Vec<T>> {
    let (m, n) = a.shape();
    let f = |v: T| T::from_f64(v.wide() * scale);
    if transpose {
        // columns of Aᵀ are rows of A
        let mut out = crate::alloc::try_zeroed_vec(m * n, || {
            format!("the SVD's working copy of a {m} x {n} matrix")
        })?;
        if n > 0 {
            out.par_chunks_mut(n).enumerate().for_each(|(i, o)| {
                for (x, &v) in o.iter_mut().zip(a.row(i)) {
                    *x = f(v);
                }
            });
        }
        Ok(out)
    } else {
        tiled(n, m, |j, i| f(a.row(i)[j]))
    }
}

/// Row-major `Dense` from `rows × cols` column-major values.
pub(super) fn from_col_major<T: Scalar>(rows: usize, cols: usize, cm: &[T]) -> Result<Dense<T>> {
    dense_tiled(rows, cols, |i, j| cm[j * rows + i])
}

/// The largest magnitude in `a` and its Frobenius norm (0 when empty), after
/// [`check_finite`]'s check in the same pass, in parallel over rows (the maximum does not
/// depend on the order); on a non-finite entry, [`check_finite`]'s error (the first such
/// entry in row order). The norm is formed without overflow or underflow whatever the
/// entries' range: each row's squares are summed relative to the row's largest magnitude,
/// and rows are combined relative to the larger of their maxima (as LAPACK's `lassq`).
pub fn finite_max_abs<T: Scalar>(a: DenseView<'_, T>, what: &str) -> Result<(f64, f64)> {
    // (largest magnitude, sum of (x / largest)², all finite)
    let (maxabs, ssq, finite) = (0..a.rows())
        .into_par_iter()
        .map(|i| {
            let row = a.row(i);
            // the maximum in T, widened once: the same value as widening every entry
            let (x, ok) = row.iter().fold((T::zero(), true), |(x, ok), &v| {
                (x.max(v.abs()), ok & v.is_finite())
            });
            let x = x.wide();
            if !ok || x == 0.0 {
                return (x, 0.0, ok);
            }
            let inv = 1.0 / x;
            let ssq = if inv.is_finite() {
                row.iter().map(|v| (v.wide() * inv).powi(2)).sum::<f64>()
            } else {
                row.iter().map(|v| (v.wide() / x).powi(2)).sum::<f64>()
            };
            (x, ssq, true)
        })
        .reduce(
            || (0.0, 0.0, true),
            |(x, s, p), (y, t, q)| {
                let m = x.max(y);
                let rel = |z: f64, u: f64| if z == 0.0 { 0.0 } else { u * (z / m).powi(2) };
                (m, rel(x, s) + rel(y, t), p && q)
            },
        );
    if finite {
        Ok((maxabs, maxabs * ssq.sqrt()))
    } else {
        check_finite(a, what).map(|()| (maxabs, maxabs * ssq.sqrt()))
    }
}

/// The exact power of two the driver multiplies the matrix by before the work (and divides
/// the singular values by after): the largest with `(‖A‖_F · scale)² < 2^(e − 3)`, `2^e`
/// the largest power of two of `T` (f32: `2^124`, f64: `2^1020`), within `T`'s normal
/// exponent range. `‖A‖_F` bounds every column norm and every Gram entry of every stage (the
/// QRs' `R`, `L`, the rotated `W`), so none of them can overflow, even summed over a few
/// partial sums, while the squares of the smallest columns are kept as far from underflow as
/// the exponent range allows: singular values down to about `2^-119 ‖A‖_F` (f32) and
/// `2^-1008 ‖A‖_F` (f64) survive (see [`super::negligible_gram`]). 1 for a zero matrix.
pub fn working_scale<T: Scalar>(fro: f64) -> f64 {
    if !(fro > 0.0 && fro.is_finite()) {
        return 1.0;
    }
    // exponents of T's largest and smallest normal powers of two
    let emax = T::max_value().wide().log2().floor() as i32;
    let emin = T::min_positive_value().wide().log2().round() as i32;
    // (fro · 2^k)² < 2^(emax − 3) ⇐ fro · 2^k < 2^((emax − 3) / 2) with fro < 2^(⌊log₂ fro⌋ + 1)
    let target = (emax - 3) / 2;
    let k = (target - (fro.log2().floor() as i32 + 1)).clamp(emin, emax);
    pow2(k)
}

/// `2^k` for `k` within f64's normal exponent range, exactly.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Refuses, before any work, a problem whose host memory (`bytes`, from the shapes alone)
/// exceeds the machine's physical memory, naming the bytes: a full `U` of a 1 × 200000
/// matrix would take 320 GB and abort the process on the first touch.
pub(super) fn check_host_memory(bytes: u128, what: &str) -> Result<()> {
    match crate::alloc::physical_memory() {
        Some(have) if bytes > have as u128 => Err(Error::out_of_memory(
            "host",
            format!(
                "{what} needs about {} of host memory; this machine has {}",
                crate::alloc::human_bytes(bytes),
                crate::alloc::human_bytes(have as u128)
            ),
        )),
        _ => Ok(()),
    }
}

/// The upper triangle (`n × n`) of an `m × n` column-major matrix, column-major.
pub(super) fn upper<T: Scalar>(m: usize, n: usize, cm: &[T]) -> Vec<T> {
    let mut r = vec![T::zero(); n * n];
    for j in 0..n {
        r[j * n..j * n + j + 1].copy_from_slice(&cm[j * m..j * m + j + 1]);
    }
    r
}

/// The column indices of the `n × n` column-major `r` in descending order of their norms
/// (sums of squares in f64: the driver's scaling keeps them finite).
pub(super) fn descending_column_norms<T: Scalar>(n: usize, r: &[T]) -> Vec<usize> {
    let norms: Vec<f64> = r
        .chunks(n.max(1))
        .map(|c| c.iter().map(|v| v.wide() * v.wide()).sum())
        .collect();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by(|&x, &y| norms[y].total_cmp(&norms[x]));
    perm
}

/// `Π Rᵀ` for the `n × n` column-major `r`: row `i` of the result is column `perm[i]` of `r`.
pub(super) fn permuted_transpose<T: Scalar>(n: usize, r: &[T], perm: &[usize]) -> Vec<T> {
    let mut t = vec![T::zero(); n * n];
    for j in 0..n {
        for (i, &p) in perm.iter().enumerate() {
            t[j * n + i] = r[p * n + j];
        }
    }
    t
}

/// The transpose of an `n × n` column-major matrix.
pub(super) fn transpose_sq<T: Scalar>(n: usize, cm: &[T]) -> Vec<T> {
    let mut t = vec![T::zero(); n * n];
    for j in 0..n {
        for i in 0..n {
            t[i * n + j] = cm[j * n + i];
        }
    }
    t
}

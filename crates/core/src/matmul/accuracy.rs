//! The f64 reference product and the accuracy contract: Higham's bound per algorithm and
//! level ([`tolerance`]) and the checks of a result against the reference.

use super::{check_shapes, Algorithm, Schedule};
use crate::dense::DenseView;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::tolerance::Tolerance;

/// `A B` in f64 (row-major `m x n`), blocked over `k` and `n` so that a block of `B` rows stays
/// in cache: the yardstick of the conformance suite, the benchmarks and the CLI. Inputs are
/// widened exactly; NaN and infinity propagate as in any IEEE sum of products.
pub fn reference<T: Scalar>(a: DenseView<'_, T>, b: DenseView<'_, T>) -> Result<Vec<f64>> {
    let (m, n, k) = check_shapes(a.shape(), b.shape())?;
    const KB: usize = 128;
    const NB: usize = 512;
    let mut c = vec![0.0f64; m * n];
    let bw: Vec<f64> = (0..k)
        .flat_map(|p| b.row(p).iter().map(|v| Scalar::to_f64(*v)))
        .collect();
    for j0 in (0..n).step_by(NB) {
        let j1 = (j0 + NB).min(n);
        for p0 in (0..k).step_by(KB) {
            let p1 = (p0 + KB).min(k);
            for i in 0..m {
                let arow = a.row(i);
                let crow = &mut c[i * n + j0..i * n + j1];
                for (p, av) in arow.iter().enumerate().take(p1).skip(p0) {
                    let av = Scalar::to_f64(*av);
                    let brow = &bw[p * n + j0..p * n + j1];
                    for (cv, bv) in crow.iter_mut().zip(brow) {
                        *cv += av * bv;
                    }
                }
            }
        }
    }
    Ok(c)
}

/// `‖X‖_M`: the largest absolute finite entry (NaN and infinities ignored; 0 for an empty
/// matrix).
pub fn max_abs<T: Scalar>(x: DenseView<'_, T>) -> f64 {
    (0..x.rows())
        .flat_map(|i| x.row(i).iter())
        .map(|v| Scalar::to_f64(*v).abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// Higham's constant `c(k, L)` of [`tolerance`] (in units of the unit roundoff `u`).
///
/// For `L` levels over a conventional base with leaf inner dimension `k0 = ⌈k / 2^L⌉` and
/// `n = 2^L k0` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §23.2.2,
/// Thms 23.2 and 23.3, and the Winograd variant's bound of Higham 1990):
///
/// - conventional (`L = 0`): `k²` (from `|C − Ĉ| ≤ γ_k |A||B|`);
/// - Strassen: `(n / k0)^{log2 12} (k0² + 5 k0) − 5 n`, i.e. `12^L (k0² + 5 k0) − 5 n`;
/// - Winograd: `18^L (k0² + 6 k0) − 6 n`; also used for [`Algorithm::Fused`] (Winograd
///   levels over one Strassen level, whose constant is smaller), so an upper bound there.
///
/// Plus `(2^L + 2) k` for the peeled edge updates of shapes that are not multiples of `2^L`
/// and the final accumulation into `C`. The bound is a worst case: measured errors are 10²
/// to 10⁴ times smaller, and grow with `L` by roughly the factors 12 and 18 only in the worst
/// case (the conformance check `matmul_error_per_level_*` prints them).
pub fn higham_constant(algorithm: Algorithm, levels: usize, k: usize) -> f64 {
    let k = k.max(1) as f64;
    if levels == 0 || matches!(algorithm, Algorithm::Tiled) {
        return k * k + 2.0 * k;
    }
    let q = (1u64 << levels.min(60)) as f64;
    let k0 = (k / q).ceil();
    let n = q * k0;
    let lf = levels as f64;
    let core = match algorithm {
        Algorithm::Strassen => 12f64.powf(lf) * (k0 * k0 + 5.0 * k0) - 5.0 * n,
        _ => 18f64.powf(lf) * (k0 * k0 + 6.0 * k0) - 6.0 * n,
    };
    core + (q + 2.0) * k
}

/// The accuracy contract of [`MatMul`](super::MatMul): every entry satisfies
/// `|C_ij − Ĉ_ij| ≤ c(k, L) · u · ‖A‖_M ‖B‖_M`, with `u = ε / 2` the unit roundoff of `T`,
/// `‖·‖_M` the largest absolute entry and `c` [`higham_constant`]. As a [`Tolerance`]:
/// `factor = c(k, L) / 2` (in units of `ε`), to be applied with
/// `scale = ‖A‖_M ‖B‖_M`.
pub fn tolerance<T: Scalar>(algorithm: Algorithm, levels: usize, k: usize) -> Tolerance {
    Tolerance::of::<T>(higham_constant(algorithm, levels, k) / 2.0)
}

/// Measured error of a product: `max |C_ij − ref_ij| / (ε_T ‖A‖_M ‖B‖_M)` over the finite
/// reference entries (`INFINITY` where a finite reference entry came back non-finite).
pub fn relative_error<T: Scalar>(c: &[T], reference: &[f64], scale: f64) -> f64 {
    let denom = (Scalar::to_f64(T::EPS) * scale).max(f64::MIN_POSITIVE);
    c.iter()
        .zip(reference)
        .filter(|(_, r)| r.is_finite())
        .map(|(g, r)| {
            let e = (Scalar::to_f64(*g) - r).abs();
            if e.is_finite() {
                e / denom
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max)
}

/// Checks `c` (row-major `m x n`) against `reference` under [`tolerance`] for `schedule`;
/// entries whose reference is NaN must be NaN, and infinite ones the same infinity
/// (for the tiled algorithm) or non-finite (Strassen sums may turn `∞` into NaN). The error
/// names the first bad entry.
pub fn check_result<T: Scalar>(
    c: &[T],
    reference: &[f64],
    n: usize,
    k: usize,
    scale: f64,
    schedule: &Schedule,
) -> std::result::Result<(), String> {
    if c.len() != reference.len() {
        return Err(format!(
            "C has {} entries, expected {}",
            c.len(),
            reference.len()
        ));
    }
    check_rows(c, reference, 0, n, k, scale, schedule)
}

/// [`check_result`] on rows `first_row..` of a product (`c` and `reference` hold those rows
/// only): errors name entries by their row in the whole product.
fn check_rows<T: Scalar>(
    c: &[T],
    reference: &[f64],
    first_row: usize,
    n: usize,
    k: usize,
    scale: f64,
    schedule: &Schedule,
) -> std::result::Result<(), String> {
    let tol = tolerance::<T>(schedule.algorithm, schedule.levels, k);
    let strassen = schedule.levels > 0;
    for (idx, (got, want)) in c.iter().zip(reference).enumerate() {
        let got = Scalar::to_f64(*got);
        let (i, j) = (first_row + idx / n.max(1), idx % n.max(1));
        let bad = |m: String| {
            format!(
                "C[{i}, {j}]: {m} ({} with {} levels, k = {k})",
                schedule.algorithm.name(),
                schedule.levels
            )
        };
        if want.is_nan() {
            if !got.is_nan() {
                return Err(bad(format!("got {got:e}, expected NaN")));
            }
        } else if want.is_infinite() {
            let ok = if strassen {
                !got.is_finite()
            } else {
                got == *want
            };
            if !ok {
                return Err(bad(format!("got {got:e}, expected {want:e}")));
            }
        } else if !(strassen && !got.is_finite() && !scale.is_finite()) {
            tol.check(got, *want, scale).map_err(bad)?;
        }
    }
    Ok(())
}

/// Checks `c = a b` (row-major `m x n`) on up to `rows` evenly spaced rows (all rows when
/// `rows >= m`) against the f64 reference of those rows, under [`check_result`]'s rules for
/// `schedule`: how benchmarks and the CLI check products too large for a full reference.
/// Returns the measured error of the checked rows (see [`relative_error`]).
pub fn check_sampled<T: Scalar>(
    a: DenseView<'_, T>,
    b: DenseView<'_, T>,
    c: &[T],
    schedule: &Schedule,
    rows: usize,
) -> std::result::Result<f64, String> {
    let (m, n, k) = check_shapes(a.shape(), b.shape()).map_err(|e| e.to_string())?;
    if c.len() != m * n {
        return Err(format!("C has {} entries, expected {m} x {n}", c.len()));
    }
    let scale = max_abs(a) * max_abs(b);
    let picks: Vec<usize> = if rows >= m {
        (0..m).collect()
    } else {
        let mut p: Vec<usize> = (0..rows).map(|i| i * (m - 1) / (rows - 1).max(1)).collect();
        p.dedup();
        p
    };
    let mut worst = 0f64;
    for i in picks {
        let ai = a.block(i, 0, 1, k).map_err(|e| e.to_string())?;
        let r = reference(ai, b).map_err(|e| e.to_string())?;
        let got = &c[i * n..(i + 1) * n];
        check_rows(got, &r, i, n, k, scale, schedule)?;
        worst = worst.max(relative_error(got, &r, scale));
    }
    Ok(worst)
}

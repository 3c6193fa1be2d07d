//! Inputs a Strassen-type schedule must not see: one scan of each input for NaN, ±∞ or values
//! large enough for the recursion to overflow, and the classical schedule in their place.

use rayon::prelude::*;

use super::{check_shapes, plan_strided, Algorithm, MatMulOptions, Schedule};
use crate::dense::DenseView;
use crate::error::Result;
use crate::scalar::Scalar;

/// Whether every value of `v` is finite (neither NaN nor ±∞); in parallel over long slices.
/// Reads each value once: `O(len)`, against the `O(m n k)` product it guards.
pub fn all_finite<T: Scalar>(v: &[T]) -> bool {
    const CHUNK: usize = 1 << 16;
    if v.len() <= CHUNK {
        v.iter().all(|x| x.is_finite())
    } else {
        v.par_chunks(CHUNK).all(|c| c.iter().all(|x| x.is_finite()))
    }
}

/// The largest `|x|` of `v` as f64, `∞` when a value is NaN or ±∞ (so it is finite exactly
/// when every value is); in parallel over long slices, one read per value.
pub fn max_magnitude<T: Scalar>(v: &[T]) -> f64 {
    const CHUNK: usize = 1 << 16;
    let fold = |c: &[T]| {
        c.iter()
            .fold(T::zero(), |m, &x| {
                let a = x.abs();
                if a <= m {
                    m
                } else if a.is_nan() {
                    T::infinity()
                } else {
                    a
                }
            })
            .to_f64()
    };
    if v.len() <= CHUNK {
        fold(v)
    } else {
        v.par_chunks(CHUNK).map(fold).reduce(|| 0.0, f64::max)
    }
}

/// [`max_magnitude`] of a (possibly strided) view.
pub fn view_max_magnitude<T: Scalar>(v: DenseView<'_, T>) -> f64 {
    if v.rows() == 0 || v.cols() == 0 {
        return 0.0;
    }
    if v.is_contiguous() {
        return max_magnitude(&v.data()[..v.rows() * v.cols()]);
    }
    let per = (1usize << 16).div_ceil(v.cols()).max(1);
    (0..v.rows())
        .into_par_iter()
        .with_min_len(per)
        .map(|i| max_magnitude(v.row(i)))
        .reduce(|| 0.0, f64::max)
}

/// Whether `levels` Strassen-type levels over inner dimension `k` can run on inputs whose
/// largest magnitudes are `amax` and `bmax` without any sum overflowing where the classical
/// product does not: both finite, and below `T`'s largest value `max` by the recursion's
/// growth. Per level, Winograd's operand sums reach 4 times their quadrants' largest entry
/// (`S4 = A12 − A21 − A22 + A11`; Strassen's 2) and its output sums 4 products, so every
/// intermediate is at most `k · 32^L · amax · bmax` (`4^L · amax` on the `A` side): required
/// here with a margin of 2 (`2 k 64^L amax bmax < max`).
pub fn recursion_safe(levels: usize, k: usize, amax: f64, bmax: f64, max: f64) -> bool {
    let l = levels.min(64) as i32;
    let g = 4f64.powi(l);
    amax.is_finite()
        && bmax.is_finite()
        && amax * g < max
        && bmax * g < max
        && 2.0 * k as f64 * 64f64.powi(l) * amax * bmax < max
}

/// `s` for the product `m x k · k x n` with leading dimensions `lds` (as [`plan_strided`]),
/// unless it recurses (`s.levels > 0`) and `safe` (run only then, given `s`) says the
/// inputs are not safe for it: then the classical schedule of the same product, with
/// [`Schedule::substituted`] naming what it replaces. Strassen-type sums of quadrants spread
/// a non-finite input to rows and columns its classical product never reaches
/// (`M1 = (A11 + A22)(B11 + B22)` feeds `C11` and `C22`), turn `∞ − ∞` into NaN, and
/// overflow on finite inputs near the type's range where the classical product does not;
/// the classical product keeps IEEE's pattern: a non-finite `A[i][p]` reaches row `i`
/// only, a non-finite `B[p][j]` column `j` only. The one place every backend's `matmul`
/// ([`plan_host`]) and `gemm` ([`MatMul::plan_device`](super::MatMul::plan_device)) make this choice.
pub fn classical_unless_safe(
    s: Schedule,
    (m, n, k): (usize, usize, usize),
    lds: (usize, usize, usize),
    safe: impl FnOnce(&Schedule) -> Result<bool>,
) -> Result<Schedule> {
    if s.levels == 0 || safe(&s)? {
        return Ok(s);
    }
    let mut c = plan_strided(
        m,
        n,
        k,
        lds,
        &MatMulOptions::with(Algorithm::Tiled, None),
        1,
    );
    c.substituted = Some((s.algorithm, s.levels));
    Ok(c)
}

/// The schedule of `a b` on host inputs ([`MatMul::matmul`](super::MatMul::matmul)): [`plan_strided`]'s, then
/// [`classical_unless_safe`] with one scan of `a` and `b` on the host (only when the plan
/// recurses): the classical product when an input holds NaN or ±∞, or values so large that
/// the recursion could overflow ([`recursion_safe`]). `lds` are the leading dimensions the
/// schedule will run with.
pub fn plan_host<T: Scalar>(
    a: DenseView<'_, T>,
    b: DenseView<'_, T>,
    lds: (usize, usize, usize),
    opts: &MatMulOptions,
    default_cutoff: usize,
) -> Result<Schedule> {
    let (m, n, k) = check_shapes(a.shape(), b.shape())?;
    let s = plan_strided(m, n, k, lds, opts, default_cutoff);
    classical_unless_safe(s, (m, n, k), lds, |s| {
        let amax = view_max_magnitude(a);
        let bmax = if amax.is_finite() {
            view_max_magnitude(b)
        } else {
            f64::INFINITY
        };
        Ok(recursion_safe(
            s.levels,
            k,
            amax,
            bmax,
            T::max_value().to_f64(),
        ))
    })
}

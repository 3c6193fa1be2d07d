//! Non-finite and overflowing inputs: NaN and ±∞ must give the classical product's IEEE
//! answer entry by entry, and finite inputs whose Strassen-type sums overflow the classical
//! product's finite values, on every algorithm, with [`MatMul::plan_for`] reporting the
//! substitution.

use super::{err, padded, ALGORITHMS, TINY_CUTOFF};
use crate::dense::DenseView;
use crate::matmul::{self, max_abs, reference, Algorithm, MatMul, MatMulOptions};
use crate::scalar::Scalar;

/// NaN and ±∞ in the inputs, on host views ([`MatMul::matmul`]) and on device vectors whose
/// output starts as NaN ([`MatMul::gemm`]), in f32 and f64, for every algorithm at 1 and 2
/// forced levels (and the automatic choice): every backend and algorithm must give exactly
/// the classical product's IEEE answer, checked entry by entry against the f64
/// [`reference`]: NaN where it is NaN, the same infinity where it is infinite (so a
/// non-finite `A[i][p]` reaches row `i` only and a non-finite `B[p][j]` column `j` only, and
/// no `∞ − ∞` of a Strassen sum turns an infinity into NaN), every other entry finite and
/// within the classical bound. Fixtures with non-finite values in `A` only (both signs of
/// infinity in one column, so that Strassen's quadrant differences meet `∞ − ∞`), in `B`
/// only and in both, so that each operand's scan is needed; [`MatMul::plan_for`] must
/// report the classical substitution of every recursion the finite plan makes.
pub(super) fn nan_inf<B: MatMul<f32> + MatMul<f64>>(b: &B) -> Result<(), String> {
    nan_inf_typed::<f32, B>(b)?;
    nan_inf_typed::<f64, B>(b)
}

fn nan_inf_typed<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let (m, n, k) = (37, 41, 29);
    let inf = T::infinity();
    // (A entries, B entries) set non-finite: (row, column, value).
    #[allow(clippy::type_complexity)]
    let fixtures: [(&[(usize, usize, T)], &[(usize, usize, T)]); 3] = [
        // Rows 2, 5 and 20; A[2][7] and A[20][7] are in A11 and A21 at one level (rows 0..18
        // and 18..36), whose difference is Winograd's S3 and Strassen's M6 factor: ∞ − ∞.
        (&[(2, 7, inf), (5, 3, T::nan()), (20, 7, inf)], &[]),
        // Columns 4 and 30 only.
        (&[], &[(11, 30, -inf), (3, 4, T::nan())]),
        // Both: row 20, column 30 (C[20][30] sums ∞ and −∞ terms or not, as the signs say).
        (&[(20, 7, inf)], &[(11, 30, -inf)]),
    ];
    let tol = matmul::tolerance::<T>(Algorithm::Tiled, 0, k);
    for (fi, (a_bad, b_bad)) in fixtures.iter().enumerate() {
        let (mut av, _) = padded::<T>(m, k, 0, 31);
        let (mut bv, _) = padded::<T>(k, n, 0, 32);
        for &(i, p, v) in a_bad.iter() {
            av[i * k + p] = v;
        }
        for &(p, j, v) in b_bad.iter() {
            bv[p * n + j] = v;
        }
        let a = DenseView::new(m, k, k, &av).map_err(err)?;
        let bm = DenseView::new(k, n, n, &bv).map_err(err)?;
        let r = reference(a, bm).map_err(err)?;
        // The fixture's classical pattern, from the positions alone: it must be the
        // reference's (no `∞ · 0`, no overflow of the finite inputs in [-1, 1)).
        for (idx, want) in r.iter().enumerate() {
            let (i, j) = (idx / n, idx % n);
            let hit = a_bad.iter().any(|e| e.0 == i) || b_bad.iter().any(|e| e.1 == j);
            if hit == want.is_finite() {
                return Err(format!(
                    "fixture {fi}: the reference's C[{i}, {j}] = {want} does not match the \
                     positions of the non-finite inputs"
                ));
            }
        }
        let scale = max_abs(a) * max_abs(bm);
        let da = b.upload(&av).map_err(err)?;
        let db = b.upload(&bv).map_err(err)?;
        let mut cases: Vec<(Algorithm, Option<usize>)> = vec![(Algorithm::Auto, None)];
        for algorithm in ALGORITHMS {
            cases.extend([1, 2].map(|l| (algorithm, Some(l))));
        }
        for (algorithm, levels) in cases {
            let opts = MatMulOptions {
                strassen_cutoff: Some(TINY_CUTOFF),
                ..MatMulOptions::with(algorithm, levels)
            };
            let what0 = format!(
                "{} fixture {fi}, {} with levels {levels:?}",
                T::NAME,
                algorithm.name()
            );
            let finite_plan = MatMul::<T>::plan(b, m, n, k, &opts);
            let s = b.plan_for(a, bm, &opts).map_err(err)?;
            let want =
                (finite_plan.levels > 0).then_some((finite_plan.algorithm, finite_plan.levels));
            if s.levels != 0 || s.algorithm != Algorithm::Tiled || s.substituted != want {
                return Err(format!(
                    "{what0}: plan_for gives {} with {} levels, substituted {:?}; expected \
                     the classical product, substituted {want:?}",
                    s.algorithm.name(),
                    s.levels,
                    s.substituted
                ));
            }
            let host = MatMul::<T>::matmul(b, a, bm, &opts).map_err(err)?;
            let mut dc = b.upload(&vec![T::nan(); m * n]).map_err(err)?;
            MatMul::<T>::gemm(b, m, n, k, &da, &db, &mut dc, &opts).map_err(err)?;
            let dev = b.download(&dc).map_err(err)?;
            for (path, c) in [("matmul", host.as_slice()), ("gemm", &dev[..])] {
                let what = format!("{what0}, {path}");
                for idx in 0..m * n {
                    let (i, j) = (idx / n, idx % n);
                    let got = c[idx].to_f64();
                    let want = r[idx];
                    let ok = if want.is_nan() {
                        got.is_nan()
                    } else if want.is_infinite() {
                        got == want
                    } else {
                        got.is_finite()
                    };
                    if !ok {
                        return Err(format!(
                            "{what}: C[{i}, {j}] = {got:e}, the classical product gives {want:e}"
                        ));
                    }
                    if want.is_finite() {
                        tol.check(got, want, scale)
                            .map_err(|e| format!("{what}: C[{i}, {j}]: {e}"))?;
                    }
                }
            }
        }
        // Finite inputs keep the finite plan (the scan substitutes nothing).
        let (fa, _) = padded::<T>(m, k, 0, 31);
        let (fb, _) = padded::<T>(k, n, 0, 32);
        let opts = MatMulOptions {
            strassen_cutoff: Some(TINY_CUTOFF),
            ..MatMulOptions::with(Algorithm::Winograd, Some(2))
        };
        let fa = DenseView::new(m, k, k, &fa).map_err(err)?;
        let fb = DenseView::new(k, n, n, &fb).map_err(err)?;
        let s = b.plan_for(fa, fb, &opts).map_err(err)?;
        if s != MatMul::<T>::plan(b, m, n, k, &opts) {
            return Err(format!(
                "{}: plan_for on finite inputs gives {} with {} levels (substituted {:?}), not \
                 the plan",
                T::NAME,
                s.algorithm.name(),
                s.levels,
                s.substituted
            ));
        }
    }
    huge_finite::<T, B>(b)
}

/// Finite inputs so large that Strassen-type sums overflow (`A` up to `max / 1.5`: the sum
/// of two quadrants' entries of one sign overflows) while the classical product does not
/// (`B` in [-1e-3, 1e-3)): [`MatMul::matmul`] must give the classical product's finite
/// values within its bound, for every algorithm, and [`MatMul::plan_for`] report the
/// substitution. (Device operands of [`MatMul::gemm`] are checked for NaN and ±∞ only.)
fn huge_finite<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let (m, n, k) = (37, 41, 29);
    let big = T::max_value() / T::from_f64(1.5);
    let (mut av, _) = padded::<T>(m, k, 0, 33);
    let (mut bv, _) = padded::<T>(k, n, 0, 34);
    av.iter_mut().for_each(|x| *x *= big);
    bv.iter_mut().for_each(|x| *x *= T::from_f64(1e-3));
    let a = DenseView::new(m, k, k, &av).map_err(err)?;
    let bm = DenseView::new(k, n, n, &bv).map_err(err)?;
    let r = reference(a, bm).map_err(err)?;
    let scale = max_abs(a) * max_abs(bm);
    let tol = matmul::tolerance::<T>(Algorithm::Tiled, 0, k);
    for algorithm in ALGORITHMS {
        for levels in [1, 2] {
            let opts = MatMulOptions {
                strassen_cutoff: Some(TINY_CUTOFF),
                ..MatMulOptions::with(algorithm, Some(levels))
            };
            let what = format!(
                "{} huge finite inputs, {} with {levels} levels",
                T::NAME,
                algorithm.name()
            );
            let finite_plan = MatMul::<T>::plan(b, m, n, k, &opts);
            let want =
                (finite_plan.levels > 0).then_some((finite_plan.algorithm, finite_plan.levels));
            let s = b.plan_for(a, bm, &opts).map_err(err)?;
            if s.levels != 0 || s.substituted != want {
                return Err(format!(
                    "{what}: plan_for gives {} with {} levels, substituted {:?}; expected \
                     the classical product, substituted {want:?}",
                    s.algorithm.name(),
                    s.levels,
                    s.substituted
                ));
            }
            let c = MatMul::<T>::matmul(b, a, bm, &opts).map_err(err)?;
            for (idx, (got, want)) in c.as_slice().iter().zip(&r).enumerate() {
                let (i, j) = (idx / n, idx % n);
                let got = Scalar::to_f64(*got);
                if !want.is_finite() || !got.is_finite() {
                    return Err(format!(
                        "{what}: C[{i}, {j}] = {got:e}, the classical product gives {want:e}"
                    ));
                }
                tol.check(got, *want, scale)
                    .map_err(|e| format!("{what}: C[{i}, {j}]: {e}"))?;
            }
        }
    }
    Ok(())
}

/// [`MatMul::all_finite`] on device vectors (the scan `gemm` runs before a Strassen-type
/// schedule), in f32 and f64: lengths around the kernels' work-group and beyond one launch's
/// work-groups (so that items stride), vectors of extreme finite values (the largest, the
/// smallest subnormal, −0) are finite; a NaN, +∞ or −∞ at the first, a middle or the last
/// position is found; a non-finite value past the `rows · cols` asked about is not looked at.
pub(super) fn all_finite_scan<B: MatMul<f32> + MatMul<f64>>(b: &B) -> Result<(), String> {
    all_finite_typed::<f32, B>(b)?;
    all_finite_typed::<f64, B>(b)
}

fn all_finite_typed<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let opts = MatMulOptions::default();
    let extremes = [
        T::max_value(),
        -T::max_value(),
        T::min_positive_value() * T::epsilon(),
        T::neg_zero(),
        T::one(),
    ];
    for len in [1usize, 7, 255, 256, 257, 1000, 300_017] {
        let finite: Vec<T> = (0..len).map(|i| extremes[i % extremes.len()]).collect();
        let dv = b.upload(&finite).map_err(err)?;
        let shape = if len % 2 == 1 { (1, len) } else { (len / 2, 2) };
        if !b.all_finite(&dv, shape, &opts).map_err(err)? {
            return Err(format!(
                "{}: all_finite says a vector of {len} finite values holds NaN or ±∞",
                T::NAME
            ));
        }
        for at in [0, len / 2, len - 1] {
            for bad in [T::nan(), T::infinity(), T::neg_infinity()] {
                let mut v = finite.clone();
                v[at] = bad;
                let dv = b.upload(&v).map_err(err)?;
                if b.all_finite(&dv, shape, &opts).map_err(err)? {
                    return Err(format!(
                        "{}: all_finite misses {bad:?} at {at} of {len} values",
                        T::NAME
                    ));
                }
            }
        }
    }
    // Only the first rows · cols values are asked about.
    let mut v = vec![T::one(); 600];
    v[599] = T::nan();
    let dv = b.upload(&v).map_err(err)?;
    if !b.all_finite(&dv, (23, 26), &opts).map_err(err)? {
        return Err(format!(
            "{}: all_finite of a 23 x 26 matrix looks at value 599 of its vector",
            T::NAME
        ));
    }
    Ok(())
}

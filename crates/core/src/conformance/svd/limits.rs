//! Edges and limits: bad input, the sweep limit, the product boundary of the one-sided
//! method, `V`'s orthogonality, strided views, huge entries, graded matrices and every
//! planner path.

use super::qr::orthonormal;
use super::*;

/// NaN and infinite entries are errors; empty matrices give the documented empty result.
pub(super) fn bad_input<B: Svd<f64> + Svd<f32> + Qr<f64>>(b: &B) -> Result<(), String> {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut a = Dense::<f64>::identity(4);
        a.set(2, 1, bad);
        match b.svd(a.view(), &SvdOptions::default()) {
            Err(Error::Invalid { .. }) => {}
            other => return Err(format!("{bad} entry: expected Invalid, got {other:?}")),
        }
        match b.qr(a.view(), &QrOptions::default()) {
            Err(Error::Invalid { .. }) => {}
            other => {
                return Err(format!(
                    "{bad} entry in QR: expected Invalid, got {other:?}"
                ))
            }
        }
    }
    let a = Dense::<f32>::from_fn(1, 1, |_, _| f32::NAN);
    if !matches!(
        b.svd(a.view(), &SvdOptions::default()),
        Err(Error::Invalid { .. })
    ) {
        return Err("f32 NaN accepted".into());
    }
    for (m, n) in [(0usize, 0usize), (0, 3), (4, 0)] {
        let a = Dense::<f64>::zeros(m, n);
        for vectors in [Vectors::None, Vectors::Thin, Vectors::Full] {
            let opts = SvdOptions {
                vectors,
                ..SvdOptions::default()
            };
            let r = b
                .svd(a.view(), &opts)
                .map_err(|e| format!("empty {m} x {n}: {e}"))?;
            if !r.s.is_empty() {
                return Err(format!("empty {m} x {n}: s = {:?}", r.s));
            }
            svd::validity(a.view(), &r)?.check()?;
        }
    }
    Ok(())
}

/// With a one-sweep limit a 40 x 40 matrix does not converge: the result says so, with the
/// cosine left, and is still finite.
pub(super) fn sweep_limit<B: Svd<f64>>(b: &B) -> Result<(), String> {
    let a = Dense::from_fn(40, 40, |i, j| ((i * 31 + j * 17) % 23) as f64 - 11.0);
    let opts = SvdOptions {
        max_sweeps: 1,
        precondition: Some(SvdPrecondition::None),
        ..SvdOptions::default()
    };
    let r = b.svd(a.view(), &opts).map_err(|e| e.to_string())?;
    if r.converged || r.sweeps != 1 || r.off <= r.tol || r.s.iter().any(|s| !s.is_finite()) {
        return Err(format!(
            "converged {}, sweeps {}, off {:e}, tol {:e}",
            r.converged, r.sweeps, r.off, r.tol
        ));
    }
    let full = b
        .svd(a.view(), &SvdOptions::default())
        .map_err(|e| e.to_string())?;
    // This matrix has rank 22: its 18 other columns are rounding noise, which Jacobi rotates
    // among themselves (cosines O(1)) until they are orthogonal or negligible. Columns are
    // negligible only where their squares underflow (graded matrices keep every singular
    // value: see `huge_entry`), so the noise takes more sweeps than when columns below
    // 1e-138 of the largest were dropped (at most 20 sweeps then; 26 on the CPU and 32 on
    // PoCL now: the noise columns shrink towards underflow before they test orthogonal).
    if !full.converged || full.sweeps < 2 || full.sweeps > 36 {
        return Err(format!(
            "default: converged {}, sweeps {}",
            full.converged, full.sweeps
        ));
    }
    Ok(())
}

/// Tall matrices `X Σ Yᵀ` with known singular values spread just inside and just outside
/// [`AV_MAX_COND`] (the QR methods form `U Σ` as the product `A V` inside, by rotations
/// outside): valid, converged and within the values' tolerance either way, through both QR
/// methods and with thin and full vectors.
pub(super) fn product_boundary<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let mut next = unit_stream(0x5EED_0FA5_1700);
    for (m, n) in [(400, 48), (1000, 96), (130, 128)] {
        for spread in [AV_MAX_COND * 0.98, AV_MAX_COND * 1.02] {
            let x = orthonormal(m, n, &mut next);
            let y = orthonormal(n, n, &mut next);
            let sigma: Vec<f64> = (0..n)
                .map(|i| spread.powf(-(i as f64) / (n - 1) as f64))
                .collect();
            let mut a = vec![0.0; m * n];
            for (i, row) in a.chunks_mut(n).enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = (0..n).map(|l| x[l][i] * sigma[l] * y[l][j]).sum();
                }
            }
            for (precondition, vectors) in [
                (SvdPrecondition::Qr, Vectors::Thin),
                (SvdPrecondition::QrLq, Vectors::Full),
            ] {
                let opts = SvdOptions {
                    precondition: Some(precondition),
                    vectors,
                    ..SvdOptions::default()
                };
                check_one::<T, B>(b, m, n, &a, &opts)
                    .map_err(|e| format!("spread {spread}: {e}"))?;
            }
        }
    }
    Ok(())
}

/// `max |V Vᵀ − I|` of a random 128 × 128 matrix (plain Jacobi: 7 block-pair updates of every
/// column of `V` per sweep) and a 400 × 48 one through the tree QR (panels of 48 rows),
/// against [`svd::v_orth_bound`], besides the validity contract. Without the Björck step
/// ([`svd::reorthonormalise`]) the 128² case gave 48 ε in f32 and 62 ε in f64 on PoCL (bound
/// 32 ε); with it, 10 ε and 16 ε.
pub(super) fn v_orthogonality<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let mut next = unit_stream(0x2545_f491_4f6c_dd1d);
    let mut rand = |len: usize| -> Vec<f64> { (0..len).map(|_| next()).collect() };
    let square = rand(128 * 128);
    let cases = [
        (128, 128, QrOrder::Auto, None, square.clone()),
        // the split round: rows over 3 work-groups per pair (64, 64, 0 rows)
        (128, 128, QrOrder::Auto, Some(3), square),
        (
            400,
            48,
            QrOrder::Tree { panel_rows: 48 },
            None,
            rand(400 * 48),
        ),
    ];
    for (m, n, qr_order, row_chunks, a) in cases {
        let opts = SvdOptions {
            vectors: Vectors::Thin,
            qr_order,
            row_chunks,
            ..SvdOptions::default()
        };
        let at = Dense::from_vec(m, n, a.iter().map(|&v| T::from_f64(v)).collect())
            .map_err(|e| e.to_string())?;
        let r = b
            .svd(at.view(), &opts)
            .map_err(|e| format!("svd of {m} x {n} failed: {e}"))?;
        if !r.converged {
            return Err(format!(
                "{m} x {n}: not converged after {} sweeps",
                r.sweeps
            ));
        }
        let v = svd::validity(at.view(), &r)?;
        v.check().map_err(|e| format!("{m} x {n}: {e}"))?;
        let bound = svd::v_orth_bound::<T>(m, n);
        if v.v_orth.is_nan() || v.v_orth > bound {
            return Err(format!(
                "{m} x {n} ({:?}, chunks {row_chunks:?}, {} sweeps): max|VVᵀ−I| {:.2e} = {:.0} ε above {bound:.2e}",
                r.precondition,
                r.sweeps,
                v.v_orth,
                v.v_orth / Scalar::to_f64(T::EPS)
            ));
        }
    }
    Ok(())
}

/// A matrix given as a view into a larger one (a stride above its columns, NaN in the
/// columns between) gives bit for bit the result of its contiguous copy: tall, wide and
/// square, values only and thin vectors, f32 and f64. GPU backends change the layout of a
/// contiguous matrix on the device and of a strided one on the host, so this compares the
/// two ways (and fails on any NaN read from the gaps).
pub(super) fn strided_views<B: Svd<f32> + Svd<f64>>(b: &B) -> Result<(), String> {
    fn one<T: Scalar, B: Svd<T>>(
        b: &B,
        m: usize,
        n: usize,
        vectors: Vectors,
    ) -> Result<(), String> {
        let ld = n + 3;
        let val = |i: usize, j: usize| T::from_f64(((i * 31 + j * 17) % 23) as f64 / 7.0 - 1.5);
        let wide: Vec<T> = (0..m * ld)
            .map(|e| {
                let (i, j) = (e / ld, e % ld);
                if j < n {
                    val(i, j)
                } else {
                    T::from_f64(f64::NAN)
                }
            })
            .collect();
        let view = crate::dense::DenseView::new(m, n, ld, &wide).map_err(|e| e.to_string())?;
        let copy = Dense::from_fn(m, n, val);
        let opts = SvdOptions {
            vectors,
            ..SvdOptions::default()
        };
        let what = format!("{m} x {n} {} {vectors:?}", T::NAME);
        let r1 = b
            .svd(view, &opts)
            .map_err(|e| format!("{what} view: {e}"))?;
        let r2 = b
            .svd(copy.view(), &opts)
            .map_err(|e| format!("{what} copy: {e}"))?;
        let bits = |v: &[T]| {
            v.iter()
                .map(|x| Scalar::to_f64(*x).to_bits())
                .collect::<Vec<_>>()
        };
        if bits(&r1.s) != bits(&r2.s) {
            return Err(format!("{what}: singular values {:?} vs {:?}", r1.s, r2.s));
        }
        for (name, x, y) in [("U", &r1.u, &r2.u), ("Vt", &r1.vt, &r2.vt)] {
            let same = match (x, y) {
                (Some(x), Some(y)) => {
                    x.shape() == y.shape() && bits(x.as_slice()) == bits(y.as_slice())
                }
                (None, None) => vectors == Vectors::None,
                _ => false,
            };
            if !same {
                return Err(format!(
                    "{what}: {name} differs between the view and the copy"
                ));
            }
        }
        Ok(())
    }
    for (m, n) in [(70, 20), (20, 70), (33, 33)] {
        for vectors in [Vectors::None, Vectors::Thin] {
            one::<f32, B>(b, m, n, vectors)?;
            one::<f64, B>(b, m, n, vectors)?;
        }
    }
    Ok(())
}

/// Standard normal values from a fixed seed (Box–Muller on [`unit_stream`]).
pub(super) fn normals(seed: u64, len: usize) -> Vec<f64> {
    let mut u = unit_stream(seed);
    (0..len)
        .map(|_| {
            let (a, b) = ((u() + 0.5).max(1e-300), u() + 0.5);
            (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
        })
        .collect()
}

/// Every preconditioning (and the automatic choice) with values only and with thin vectors.
pub(super) fn all_methods() -> Vec<SvdOptions> {
    let mut out = Vec::new();
    for pre in [
        None,
        Some(SvdPrecondition::None),
        Some(SvdPrecondition::Qr),
        Some(SvdPrecondition::QrLq),
    ] {
        for vectors in [Vectors::None, Vectors::Thin] {
            out.push(SvdOptions {
                precondition: pre,
                vectors,
                ..SvdOptions::default()
            });
        }
    }
    out
}

/// Runs `a` (`m × n`, row-major f64 rounded to `T`) through every method and demands that
/// every singular value meet `|s_i − want_i| ≤ c ε_T min(m, n) want_i` (high relative
/// accuracy), that the result be valid ([`svd::validity`]) and converged.
pub(super) fn relative_all<T: Scalar, B: Svd<T>>(
    b: &B,
    what: &str,
    (m, n): (usize, usize),
    a: &[f64],
    want: &[f64],
    c: f64,
) -> Result<(), String> {
    let at = Dense::from_vec(m, n, a.iter().map(|&x| T::from_f64(x)).collect())
        .map_err(|e| e.to_string())?;
    let eps = T::EPS.to_f64();
    let mut errors = Vec::new();
    for opts in all_methods() {
        let r = b
            .svd(at.view(), &opts)
            .map_err(|e| format!("{what} {m} x {n} {opts:?}: {e}"))?;
        let tag = format!(
            "{what} {m} x {n} ({:?}, asked {:?}, {:?})",
            r.precondition, opts.precondition, opts.vectors
        );
        if let Err(e) = svd::validity(at.view(), &r).and_then(|v| v.check()) {
            errors.push(format!("{tag}: {e}"));
        }
        if !r.converged {
            errors.push(format!("{tag}: not converged (off {:e})", r.off));
        }
        let worst =
            r.s.iter()
                .zip(want)
                .enumerate()
                .map(|(i, (got, w))| (i, Scalar::to_f64(*got), *w))
                .max_by(|x, y| {
                    ((x.1 - x.2) / x.2)
                        .abs()
                        .total_cmp(&((y.1 - y.2) / y.2).abs())
                });
        if let Some((i, got, w)) = worst {
            let bound = c * eps * m.min(n) as f64 * w;
            if (got - w).abs().is_nan() || (got - w).abs() > bound {
                errors.push(format!(
                    "{tag}: s[{i}] = {got:e}, expected {w:e}: relative error {:.2e} (bound {:.2e})",
                    ((got - w) / w).abs(),
                    bound / w
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Matrices with a few entries far larger than the rest (`10¹⁵` and `10³⁰` in f32, `10¹⁶⁰`
/// and `10³⁰⁰` in f64), anywhere, one or several, tall and wide: one-sided Jacobi keeps every
/// singular value to high relative accuracy. The independent expectation: with huge entries
/// `H_k` at distinct rows `r_k` and columns `c_k`, the singular values are the `|H_k|` and
/// those of the matrix with rows `r_k` and columns `c_k` deleted (nalgebra, f64, from the
/// rounded input), to relative `O(‖rest‖² / min |H_k|)`, far below `ε`.
pub(super) fn huge_entry<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let huge: [f64; 2] = if T::NAME == "f32" {
        [1e15, 1e30]
    } else {
        [1e160, 1e300]
    };
    // (m, n, the huge entries as (row, column, factor of H))
    type Layout = (usize, usize, Vec<(usize, usize, f64)>);
    let layouts: Vec<Layout> = vec![
        (30, 20, vec![(0, 0, 1.0)]),
        (30, 20, vec![(17, 11, -1.0)]),
        (30, 20, vec![(29, 19, 1.0)]),
        (20, 30, vec![(5, 23, 1.0)]),
        (40, 6, vec![(39, 2, 1.0)]),
        (24, 24, vec![(3, 20, 1.0), (10, 4, -1e-3), (21, 13, 1e-6)]),
    ];
    let round = |x: f64| Scalar::to_f64(T::from_f64(x));
    for (seed, &h) in huge.iter().enumerate() {
        for (l, (m, n, big)) in layouts.iter().enumerate() {
            let (m, n) = (*m, *n);
            let mut a: Vec<f64> = normals(100 + (seed * 10 + l) as u64, m * n)
                .into_iter()
                .map(round)
                .collect();
            for &(r, c, f) in big {
                a[r * n + c] = round(h * f);
            }
            let rest = Dense::from_fn(m - big.len(), n - big.len(), |i, j| {
                let skip = |x: usize, taken: &mut dyn Iterator<Item = usize>| {
                    let mut t: Vec<usize> = taken.collect();
                    t.sort_unstable();
                    t.iter().fold(x, |x, &y| if y <= x { x + 1 } else { x })
                };
                let i = skip(i, &mut big.iter().map(|b| b.0));
                let j = skip(j, &mut big.iter().map(|b| b.1));
                a[i * n + j]
            });
            let mut want: Vec<f64> = big.iter().map(|&(r, c, _)| a[r * n + c].abs()).collect();
            want.extend(reference(&rest));
            want.sort_by(|x, y| y.total_cmp(x));
            relative_all::<T, B>(
                b,
                &format!("huge {h:e} at {big:?}"),
                (m, n),
                &a,
                &want,
                16.0,
            )?;
        }
    }
    Ok(())
}

/// Column- and row-graded f32 matrices (`A = B D`, `A = D B`, `D` spanning `10⁻⁸`) and a
/// matrix graded both ways: every singular value to high relative accuracy in f32 against
/// nalgebra in f64 (whose absolute error, `ε₆₄ ‖A‖`, is below `ε₃₂ σ_min` here).
pub(super) fn graded_relative<B: Svd<f32>>(b: &B) -> Result<(), String> {
    let round = |x: f64| x as f32 as f64;
    for (l, &(m, n)) in [(30usize, 20usize), (20, 30), (50, 8)].iter().enumerate() {
        let base = normals(500 + l as u64, m * n);
        for (g, grading) in ["columns", "rows", "both"].iter().enumerate() {
            let d = |k: usize, len: usize| 10f64.powf(-8.0 * k as f64 / (len - 1) as f64);
            let a: Vec<f64> = (0..m * n)
                .map(|p| {
                    let (i, j) = (p / n, p % n);
                    let f = match g {
                        0 => d(j, n),
                        1 => d(i, m),
                        _ => (d(i, m) * d(j, n)).sqrt(),
                    };
                    round(base[p] * f)
                })
                .collect();
            let want = reference(&Dense::from_vec(m, n, a.clone()).map_err(|e| e.to_string())?);
            relative_all::<f32, B>(b, &format!("{grading}-graded"), (m, n), &a, &want, 16.0)?;
        }
    }
    Ok(())
}

/// Every branch the planners can choose, forced through [`SvdOptions`] (never left to a
/// random seed or an environment variable): GPUs' fused rounds (`row_chunks` 1) and split
/// rounds (2, 3, 8 chunks, and more chunks than rows), so that the rows of `W` and of `V`
/// (the V-side split: `V` has `cols` rows, fewer than `W`'s) are both divided; odd and
/// single-column blocks; every preconditioning with the flat and tree (small panels) QR
/// orders; values only, thin and full vectors; tall, wide (the transposed path) and a
/// rank-deficient matrix (its noise columns take the pairs' extra inner sweeps). Each result
/// is checked for validity and against nalgebra's singular values ([`check_one`]).
pub(super) fn planner_paths<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let rank_deficient = |m: usize, n: usize| -> Vec<f64> {
        let x = normals(901, m * 5);
        let y = normals(902, 5 * n);
        (0..m * n)
            .map(|p| (0..5).map(|l| x[(p / n) * 5 + l] * y[l * n + p % n]).sum())
            .collect()
    };
    let cases: Vec<(&str, usize, usize, Vec<f64>)> = vec![
        ("tall", 100, 40, normals(903, 100 * 40)),
        ("wide", 36, 90, normals(904, 36 * 90)),
        ("rank 5", 90, 36, rank_deficient(90, 36)),
    ];
    for (what, m, n, a) in &cases {
        let (m, n) = (*m, *n);
        let mut runs: Vec<SvdOptions> = Vec::new();
        for chunks in [1usize, 2, 3, 8, 1000] {
            for vectors in [Vectors::None, Vectors::Thin] {
                runs.push(SvdOptions {
                    precondition: Some(SvdPrecondition::None),
                    row_chunks: Some(chunks),
                    vectors,
                    ..SvdOptions::default()
                });
            }
        }
        for pre in [SvdPrecondition::Qr, SvdPrecondition::QrLq] {
            for order in [
                QrOrder::Flat,
                QrOrder::Tree { panel_rows: 4 },
                QrOrder::Auto,
            ] {
                runs.push(SvdOptions {
                    precondition: Some(pre),
                    qr_order: order,
                    row_chunks: Some(3),
                    vectors: Vectors::Thin,
                    ..SvdOptions::default()
                });
            }
        }
        for (block, chunks) in [(3usize, 2usize), (1, 1), (16, 5)] {
            runs.push(SvdOptions {
                precondition: Some(SvdPrecondition::None),
                block_size: Some(block),
                row_chunks: Some(chunks),
                vectors: Vectors::Thin,
                ..SvdOptions::default()
            });
        }
        runs.push(SvdOptions {
            row_chunks: Some(2),
            vectors: Vectors::Full,
            ..SvdOptions::default()
        });
        for opts in &runs {
            check_one::<T, B>(b, m, n, a, opts).map_err(|e| format!("{what} {opts:?}: {e}"))?;
        }
    }
    Ok(())
}

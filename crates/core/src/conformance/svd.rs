//! SVD and QR conformance: random matrices of every shape and kind (tall, wide, square,
//! rank-deficient, duplicated columns, a zero row, graded, zero, 1 × 1) checked for validity
//! ([`svd::validity`]) and against an independent reference (nalgebra's SVD in f64 of the same
//! `T`-rounded input), the real matrices of `shared/data/matrices` (Hilbert singular values to
//! 40 digits, SuiteSparse matrices against LAPACK), every preconditioning, bad input, and the
//! sweep limit.

use proptest::prelude::*;

use super::{run_proptest, Check};
use crate::dense::Dense;
use crate::error::Error;
use crate::scalar::Scalar;
use crate::svd::driver::AV_MAX_COND;
use crate::svd::{
    self, Qr, QrOptions, QrOrder, Svd, SvdOptions, SvdPrecondition, SvdResult, Vectors,
};
use crate::testing::unit_stream;

/// The SVD and QR checks, in table order.
pub fn checks<B: Svd<f32> + Svd<f64> + Qr<f32> + Qr<f64>>() -> Vec<Check<B>> {
    vec![
        Check {
            name: "svd_random_f32",
            run: random::<f32, B>,
        },
        Check {
            name: "svd_random_f64",
            run: random::<f64, B>,
        },
        Check {
            name: "svd_special_f32",
            run: special::<f32, B>,
        },
        Check {
            name: "svd_special_f64",
            run: special::<f64, B>,
        },
        Check {
            name: "svd_methods_agree_f64",
            run: methods_agree::<B>,
        },
        Check {
            name: "svd_hilbert_relative_accuracy_f64",
            run: hilbert::<B>,
        },
        Check {
            name: "svd_suitesparse_f32",
            run: suitesparse::<f32, B>,
        },
        Check {
            name: "svd_suitesparse_f64",
            run: suitesparse::<f64, B>,
        },
        Check {
            name: "svd_bad_input",
            run: bad_input::<B>,
        },
        Check {
            name: "svd_sweep_limit_reported",
            run: sweep_limit::<B>,
        },
        Check {
            name: "qr_random_f32",
            run: qr_random::<f32, B>,
        },
        Check {
            name: "qr_random_f64",
            run: qr_random::<f64, B>,
        },
        Check {
            name: "svd_v_orthogonality_f32",
            run: v_orthogonality::<f32, B>,
        },
        Check {
            name: "svd_v_orthogonality_f64",
            run: v_orthogonality::<f64, B>,
        },
        Check {
            name: "qr_flat_q_small_f32",
            run: qr_flat_q_small::<f32, B>,
        },
        Check {
            name: "qr_flat_q_small_f64",
            run: qr_flat_q_small::<f64, B>,
        },
        Check {
            name: "qr_tree_f32",
            run: qr_tree::<f32, B>,
        },
        Check {
            name: "qr_tree_f64",
            run: qr_tree::<f64, B>,
        },
        Check {
            name: "svd_strided_views",
            run: strided_views::<B>,
        },
        Check {
            name: "svd_product_boundary_f32",
            run: product_boundary::<f32, B>,
        },
        Check {
            name: "svd_product_boundary_f64",
            run: product_boundary::<f64, B>,
        },
        Check {
            name: "svd_huge_entry_relative_f32",
            run: huge_entry::<f32, B>,
        },
        Check {
            name: "svd_huge_entry_relative_f64",
            run: huge_entry::<f64, B>,
        },
        Check {
            name: "svd_graded_relative_f32",
            run: graded_relative::<B>,
        },
        Check {
            name: "svd_planner_paths_f32",
            run: planner_paths::<f32, B>,
        },
        Check {
            name: "svd_planner_paths_f64",
            run: planner_paths::<f64, B>,
        },
    ]
}

/// Instantiates the SVD conformance suite as `#[test]`s for backend type `$ty`.
#[macro_export]
macro_rules! svd_conformance_tests {
    ($ty:ty, $make:expr) => {
        $crate::conformance_tests!(
            $ty,
            $make,
            svd::checks;
            svd_random_f32,
            svd_random_f64,
            svd_special_f32,
            svd_special_f64,
            svd_methods_agree_f64,
            svd_hilbert_relative_accuracy_f64,
            svd_suitesparse_f32,
            svd_suitesparse_f64,
            svd_bad_input,
            svd_sweep_limit_reported,
            qr_random_f32,
            qr_random_f64,
            svd_v_orthogonality_f32,
            svd_v_orthogonality_f64,
            qr_flat_q_small_f32,
            qr_flat_q_small_f64,
            qr_tree_f32,
            qr_tree_f64,
            svd_strided_views,
            svd_product_boundary_f32,
            svd_product_boundary_f64,
            svd_huge_entry_relative_f32,
            svd_huge_entry_relative_f64,
            svd_graded_relative_f32,
            svd_planner_paths_f32,
            svd_planner_paths_f64
        );
    };
}

/// What a random case is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    General,
    /// `A = B C` with inner dimension below `min(m, n)`.
    RankDeficient,
    /// Column 0 repeated in several columns.
    DuplicatedColumns,
    /// Row 0 zero.
    ZeroRow,
    /// Column `j` scaled by `2^(−3j)`.
    Graded,
    Zero,
}

#[derive(Debug, Clone)]
struct Case {
    m: usize,
    n: usize,
    kind: Kind,
    vectors: Vectors,
    precondition: Option<SvdPrecondition>,
    qr_order: QrOrder,
    row_chunks: Option<usize>,
    a: Vec<f64>,
}

/// Automatic, flat, or the tree order with small panels (so that small matrices have many).
fn qr_order() -> impl Strategy<Value = QrOrder> {
    prop_oneof![
        2 => Just(QrOrder::Auto),
        1 => Just(QrOrder::Flat),
        2 => (1usize..9).prop_map(|panel_rows| QrOrder::Tree { panel_rows }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let kind = prop_oneof![
        3 => Just(Kind::General),
        2 => Just(Kind::RankDeficient),
        1 => Just(Kind::DuplicatedColumns),
        1 => Just(Kind::ZeroRow),
        1 => Just(Kind::Graded),
        1 => Just(Kind::Zero),
    ];
    let vectors = prop_oneof![
        Just(Vectors::None),
        Just(Vectors::Thin),
        Just(Vectors::Full)
    ];
    let pre = prop_oneof![
        2 => Just(None),
        1 => Just(Some(SvdPrecondition::None)),
        1 => Just(Some(SvdPrecondition::Qr)),
        1 => Just(Some(SvdPrecondition::QrLq)),
    ];
    // GPUs: the fused round (None is 1 at these sizes) or rows split over 2 to 4 work-groups.
    let chunks = prop_oneof![2 => Just(None), 1 => (2usize..5).prop_map(Some)];
    (
        1usize..48,
        1usize..48,
        kind,
        vectors,
        pre,
        (qr_order(), chunks),
    )
        .prop_flat_map(|(m, n, kind, vectors, pre, order)| {
            (
                Just((m, n, kind, vectors, pre, order)),
                proptest::collection::vec(-1.0f64..1.0, m * n + m + n),
            )
        })
        .prop_map(
            |((m, n, kind, vectors, precondition, (qr_order, row_chunks)), r)| {
                let mut a = r[..m * n].to_vec();
                match kind {
                    Kind::General => {}
                    Kind::RankDeficient => {
                        // rank-1 or rank-2 outer products
                        let (x, y) = (&r[m * n..m * n + m], &r[m * n + m..]);
                        for i in 0..m {
                            for j in 0..n {
                                a[i * n + j] =
                                    x[i] * y[j] + if i % 2 == 0 { 0.0 } else { y[j] * 0.5 };
                            }
                        }
                    }
                    Kind::DuplicatedColumns => {
                        for i in 0..m {
                            for j in (0..n).step_by(3) {
                                a[i * n + j] = a[i * n];
                            }
                        }
                    }
                    Kind::ZeroRow => a[..n].fill(0.0),
                    Kind::Graded => {
                        for i in 0..m {
                            for j in 0..n {
                                a[i * n + j] *= 2f64.powi(-3 * j as i32);
                            }
                        }
                    }
                    Kind::Zero => a.fill(0.0),
                }
                Case {
                    m,
                    n,
                    kind,
                    vectors,
                    precondition,
                    qr_order,
                    row_chunks,
                    a,
                }
            },
        )
}

/// Singular values of `a` by nalgebra in f64, descending: the independent reference.
fn reference(a: &Dense<f64>) -> Vec<f64> {
    let mut s: Vec<f64> = if a.rows() == 0 || a.cols() == 0 {
        Vec::new()
    } else {
        a.to_nalgebra().singular_values().iter().copied().collect()
    };
    s.sort_by(|x, y| y.total_cmp(x));
    s
}

/// Runs one SVD of `a` (given in f64, rounded to `T`) and checks validity, shapes, and the
/// singular values against nalgebra's.
fn check_one<T: Scalar, B: Svd<T>>(
    b: &B,
    m: usize,
    n: usize,
    a: &[f64],
    opts: &SvdOptions,
) -> Result<SvdResult<T>, String> {
    let at = Dense::from_vec(m, n, a.iter().map(|&x| T::from_f64(x)).collect())
        .map_err(|e| e.to_string())?;
    let r = b
        .svd(at.view(), opts)
        .map_err(|e| format!("svd of {m} x {n} failed: {e}"))?;
    let v = svd::validity(at.view(), &r).map_err(|e| format!("{m} x {n}: {e}"))?;
    v.check()
        .map_err(|e| format!("{m} x {n} ({:?}): {e}", r.precondition))?;
    let k = m.min(n);
    let expect_cols = |full: usize| {
        if opts.vectors == Vectors::Full {
            full
        } else {
            k
        }
    };
    match (&r.u, &r.vt, opts.vectors) {
        (None, None, Vectors::None) => {}
        (Some(u), Some(vt), _) if opts.vectors != Vectors::None => {
            if u.cols() != expect_cols(m) || vt.rows() != expect_cols(n) {
                return Err(format!(
                    "{m} x {n} {:?}: U {:?}, Vᵀ {:?}",
                    opts.vectors,
                    u.shape(),
                    vt.shape()
                ));
            }
        }
        _ => {
            return Err(format!(
                "{m} x {n}: vectors {:?} not as requested",
                opts.vectors
            ))
        }
    }
    if !r.converged {
        return Err(format!(
            "{m} x {n}: not converged after {} sweeps (off {:e})",
            r.sweeps, r.off
        ));
    }
    let af = Dense::from_fn(m, n, |i, j| Scalar::to_f64(at.get(i, j)));
    let sref = reference(&af);
    let norm = sref.first().copied().unwrap_or(0.0);
    let tol = svd::values_tolerance::<T>(m, n);
    for (i, (got, want)) in r.s.iter().zip(&sref).enumerate() {
        tol.check(Scalar::to_f64(*got), *want, norm)
            .map_err(|e| format!("{m} x {n} ({:?}) s[{i}]: {e}", r.precondition))?;
    }
    Ok(r)
}

fn random<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    run_proptest(24, &case(), |c| {
        let opts = SvdOptions {
            precondition: c.precondition,
            vectors: c.vectors,
            qr_order: c.qr_order,
            row_chunks: c.row_chunks,
            ..SvdOptions::default()
        };
        check_one::<T, B>(b, c.m, c.n, &c.a, &opts)
            .map(|_| ())
            .map_err(|e| format!("{:?}: {e}", c.kind))
    })
}

/// Fixed awkward cases: 1 × 1, a row, a column, zero matrices, exact rank 1, a matrix wider
/// than several blocks, with full vectors and every preconditioning.
fn special<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let mut cases: Vec<(usize, usize, Vec<f64>)> = vec![
        (1, 1, vec![-3.0]),
        (1, 1, vec![0.0]),
        (1, 5, vec![1.0, -2.0, 0.0, 4.0, 1e-3]),
        (6, 1, vec![0.0, 1.0, 0.0, 0.0, 2.0, 0.0]),
        (4, 7, vec![0.0; 28]),
        (9, 3, vec![0.0; 27]),
    ];
    // exact rank one, 20 x 13
    cases.push((
        20,
        13,
        (0..20 * 13)
            .map(|p| ((p / 13) as f64 + 1.0) * ((p % 13) as f64 - 6.0))
            .collect(),
    ));
    // 70 x 70 with a pseudo-random pattern (more than two blocks), and 3 equal columns
    let mut x = 12345u64;
    let mut big: Vec<f64> = (0..70 * 70)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        })
        .collect();
    for i in 0..70 {
        big[i * 70 + 5] = big[i * 70];
        big[i * 70 + 40] = big[i * 70];
    }
    cases.push((70, 70, big));
    for (m, n, a) in &cases {
        for pre in [
            None,
            Some(SvdPrecondition::None),
            Some(SvdPrecondition::Qr),
            Some(SvdPrecondition::QrLq),
        ] {
            for vectors in [Vectors::Thin, Vectors::Full] {
                let opts = SvdOptions {
                    precondition: pre,
                    vectors,
                    ..SvdOptions::default()
                };
                check_one::<T, B>(b, *m, *n, a, &opts)?;
            }
        }
    }
    Ok(())
}

/// The three preconditionings give the same singular values on a graded 60 x 25 matrix.
fn methods_agree<B: Svd<f64>>(b: &B) -> Result<(), String> {
    let (m, n) = (60, 25);
    let a: Vec<f64> = (0..m * n)
        .map(|p| {
            let (i, j) = (p / n, p % n);
            ((i * 7 + j * 13) % 17) as f64 / 17.0 - 0.4 + if i == j { 1.0 } else { 0.0 }
        })
        .collect();
    let mut all = Vec::new();
    for pre in [
        SvdPrecondition::None,
        SvdPrecondition::Qr,
        SvdPrecondition::QrLq,
    ] {
        let opts = SvdOptions {
            precondition: Some(pre),
            vectors: Vectors::Thin,
            ..SvdOptions::default()
        };
        let r = check_one::<f64, B>(b, m, n, &a, &opts)?;
        if r.precondition != pre {
            return Err(format!("asked for {pre:?}, ran {:?}", r.precondition));
        }
        all.push(r.s);
    }
    let tol = svd::values_tolerance::<f64>(m, n);
    for s in &all[1..] {
        for (i, (x, y)) in s.iter().zip(&all[0]).enumerate() {
            tol.check(*x, *y, all[0][0])
                .map_err(|e| format!("s[{i}]: {e}"))?;
        }
    }
    Ok(())
}

/// Reads a reference list of singular values (one per line, `#` comments).
fn read_values(path: &std::path::Path) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.parse::<f64>()
                .map_err(|e| format!("{}: {l:?}: {e}", path.display()))
        })
        .collect()
}

/// Hilbert matrices `H_N`, N = 4 … 12 in f64, against their singular values to 40 digits.
///
/// Tolerance: `|s_i − σ_i| ≤ 64 · N · ε · σ_i + 8 · N · ε · σ_0`, i.e. high relative accuracy
/// for every singular value down to ~`8 ε σ_0`, the absolute backward-error floor below.
/// (Rounding `H` to f64 already moves its smallest singular values by up to
/// `ε ‖H‖`: no algorithm working from the rounded matrix can do better.)
fn hilbert<B: Svd<f64>>(b: &B) -> Result<(), String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(());
    };
    let eps = f64::EPSILON;
    for nn in [4usize, 6, 8, 10, 12] {
        let want = read_values(
            &dir.join("matrices")
                .join(format!("hilbert_{nn}_singular_values_mp60.txt")),
        )?;
        let h = Dense::from_fn(nn, nn, |i, j| 1.0 / (i + j + 1) as f64);
        for pre in [
            SvdPrecondition::None,
            SvdPrecondition::Qr,
            SvdPrecondition::QrLq,
        ] {
            let opts = SvdOptions {
                precondition: Some(pre),
                vectors: Vectors::Thin,
                ..SvdOptions::default()
            };
            let r = b.svd(h.view(), &opts).map_err(|e| e.to_string())?;
            svd::validity(h.view(), &r)?.check()?;
            for (i, (got, w)) in r.s.iter().zip(&want).enumerate() {
                let bound = 64.0 * nn as f64 * eps * w + 8.0 * nn as f64 * eps * want[0];
                if (got - w).abs() > bound || got.is_nan() {
                    return Err(format!(
                        "H_{nn} ({pre:?}) s[{i}] = {got:e}, expected {w:e}: relative error {:.2e} (bound {:.2e})",
                        ((got - w) / w).abs(),
                        bound / w
                    ));
                }
            }
        }
    }
    Ok(())
}

/// SuiteSparse matrices (west0067, lp_afiro, LFAT5) against LAPACK's singular values, within
/// [`svd::values_tolerance`] of `T` (the LAPACK values are f64).
fn suitesparse<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(());
    };
    for name in ["west0067", "lp_afiro", "LFAT5"] {
        let dir = dir.join("matrices");
        let a: Dense<f64> = crate::io::mtx::read_dense(dir.join(format!("{name}.mtx")))
            .map_err(|e| e.to_string())?;
        let want = read_values(&dir.join(format!("{name}_singular_values_lapack.txt")))?;
        let (m, n) = a.shape();
        let opts = SvdOptions {
            vectors: Vectors::Thin,
            ..SvdOptions::default()
        };
        let r =
            check_one::<T, B>(b, m, n, a.as_slice(), &opts).map_err(|e| format!("{name}: {e}"))?;
        if r.s.len() != want.len() {
            return Err(format!(
                "{name}: {} values, LAPACK has {}",
                r.s.len(),
                want.len()
            ));
        }
        // LAPACK's values are of the f64 matrix; the f32 input is rounded: allow ε_T ‖A‖ more.
        let tol = svd::values_tolerance::<T>(m, n);
        for (i, (got, w)) in r.s.iter().zip(&want).enumerate() {
            tol.check(Scalar::to_f64(*got), *w, want[0])
                .map_err(|e| format!("{name} s[{i}]: {e}"))?;
        }
    }
    Ok(())
}

/// NaN and infinite entries are errors; empty matrices give the documented empty result.
fn bad_input<B: Svd<f64> + Svd<f32> + Qr<f64>>(b: &B) -> Result<(), String> {
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
fn sweep_limit<B: Svd<f64>>(b: &B) -> Result<(), String> {
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

fn qr_random<T: Scalar, B: Qr<T>>(b: &B) -> Result<(), String> {
    qr_cases::<T, B>(b, 1..40, 1..40, qr_order())
}

/// The flat (one rotation per step) order forced with thin and full Q on a few small shapes,
/// square, tall, wide and of one row or column, with repeated columns in some: every step of
/// the flat Q application, cheap enough for a race detector.
fn qr_flat_q_small<T: Scalar, B: Qr<T>>(b: &B) -> Result<(), String> {
    for (m, n, dup) in [
        (1usize, 1usize, false),
        (1, 4, false),
        (6, 1, false),
        (7, 5, false),
        (5, 7, true),
        (33, 17, true),
        (40, 40, false),
    ] {
        let mut next = unit_stream(0x51ed_2701_u64 ^ (m * 131 + n) as u64);
        let mut a: Vec<T> = (0..m * n).map(|_| T::from_f64(next())).collect();
        if dup {
            for i in 0..m {
                for j in (0..n).step_by(3) {
                    a[i * n + j] = a[i * n];
                }
            }
        }
        let at = Dense::from_vec(m, n, a).map_err(|e| e.to_string())?;
        for q in [Vectors::Thin, Vectors::Full] {
            let opts = QrOptions {
                q,
                order: QrOrder::Flat,
            };
            let f = b
                .qr(at.view(), &opts)
                .map_err(|e| format!("flat qr {m} x {n} {q:?}: {e}"))?;
            let want = if q == Vectors::Thin { m.min(n) } else { m };
            if f.q.as_ref().map(|q| q.shape()) != Some((m, want)) {
                return Err(format!(
                    "flat qr {m} x {n} {q:?}: Q {:?}",
                    f.q.as_ref().map(|q| q.shape())
                ));
            }
            svd::qr_validity(at.view(), &f).map_err(|e| format!("flat {m} x {n} {q:?}: {e}"))?;
        }
    }
    Ok(())
}

/// The tree order forced on tall and odd shapes: many panels of 1 to 8 rows (raised to the
/// column count), row counts not a multiple of the panel, a last panel shorter than the
/// triangle, rank-deficient (duplicated) columns.
fn qr_tree<T: Scalar, B: Qr<T>>(b: &B) -> Result<(), String> {
    let order = (1usize..9).prop_map(|panel_rows| QrOrder::Tree { panel_rows });
    qr_cases::<T, B>(b, 1..90, 1..10, order.clone())?;
    // Wider than the GPUs' merge panels (32 columns): several panels, a partial last one,
    // the columns right of each panel, and a last node shorter than the triangle.
    qr_cases::<T, B>(b, 33..400, 33..80, order)?;
    // Tall panels: the GPUs' leaves of Q in local memory with slabs of 1 to 3 columns, or in
    // global memory when one column of a panel does not fit (f64 from 4097 rows, f32 from
    // 8193).
    for (m, n, panel_rows) in [
        (4300, 3, 2048),
        (8100, 2, 4000),
        (4400, 3, 4100),
        (8300, 2, 8200),
    ] {
        let mut next = unit_stream(0x9e37_79b9_7f4a_7c15 ^ m as u64);
        let a: Vec<T> = (0..m * n).map(|_| T::from_f64(next())).collect();
        let at = Dense::from_vec(m, n, a).map_err(|e| e.to_string())?;
        let order = QrOrder::Tree { panel_rows };
        let f = b
            .qr(
                at.view(),
                &QrOptions {
                    q: Vectors::Thin,
                    order,
                },
            )
            .map_err(|e| format!("qr {m} x {n} {order:?}: {e}"))?;
        svd::qr_validity(at.view(), &f).map_err(|e| format!("{m} x {n} {order:?}: {e}"))?;
    }
    Ok(())
}

fn qr_cases<T: Scalar, B: Qr<T>>(
    b: &B,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    order: impl Strategy<Value = QrOrder>,
) -> Result<(), String> {
    // Every other case has exactly repeated columns (rank-deficient: rotations of tiny and
    // subnormal pairs must stay orthogonal).
    let strat = (rows, cols, 0u8..3, any::<bool>(), order).prop_flat_map(|(m, n, q, dup, o)| {
        (
            Just((m, n, q, dup, o)),
            proptest::collection::vec(-1.0f64..1.0, m * n),
        )
    });
    run_proptest(24, &strat, |((m, n, q, dup, order), mut a)| {
        if dup {
            for i in 0..m {
                for j in (0..n).step_by(3) {
                    a[i * n + j] = a[i * n];
                }
            }
        }
        let at = Dense::from_vec(m, n, a.iter().map(|&x| T::from_f64(x)).collect())
            .map_err(|e| e.to_string())?;
        let q = [Vectors::None, Vectors::Thin, Vectors::Full][q as usize];
        let f = b
            .qr(at.view(), &QrOptions { q, order })
            .map_err(|e| format!("qr {m} x {n} {order:?}: {e}"))?;
        let expect_q = match q {
            Vectors::None => None,
            Vectors::Thin => Some(m.min(n)),
            Vectors::Full => Some(m),
        };
        if f.q.as_ref().map(|q| q.cols()) != expect_q {
            return Err(format!(
                "{m} x {n} {q:?}: Q {:?}",
                f.q.as_ref().map(|q| q.shape())
            ));
        }
        svd::qr_validity(at.view(), &f).map_err(|e| format!("{m} x {n} {q:?} {order:?}: {e}"))?;
        // |diag R| against nalgebra's QR (Householder, f64) of the same rounded input: unique
        // up to sign for full column rank (not with the repeated columns); within
        // 10 ε max(m, n) ‖A‖_F.
        if dup {
            return Ok(());
        }
        let af = Dense::from_fn(m, n, |i, j| Scalar::to_f64(at.get(i, j)));
        let want = af.to_nalgebra().qr().r();
        let fro = af.as_slice().iter().map(|x| x * x).sum::<f64>().sqrt();
        let bound = 10.0 * T::EPS.to_f64() * m.max(n) as f64 * fro + 1e-300;
        for d in 0..m.min(n) {
            let (got, w) = (Scalar::to_f64(f.r.get(d, d)).abs(), want[(d, d)].abs());
            if (got - w).abs().is_nan() || (got - w).abs() > bound {
                return Err(format!(
                    "{m} x {n} {q:?} {order:?}: |R({d}, {d})| = {got:e}, nalgebra {w:e} (bound {bound:.2e})"
                ));
            }
        }
        Ok(())
    })
}

/// `rows × cols` with orthonormal columns (modified Gram–Schmidt twice, in f64, on values
/// of `next`).
fn orthonormal(rows: usize, cols: usize, next: &mut impl FnMut() -> f64) -> Vec<Vec<f64>> {
    let mut q: Vec<Vec<f64>> = Vec::with_capacity(cols);
    for _ in 0..cols {
        let mut c: Vec<f64> = (0..rows).map(|_| next()).collect();
        for _ in 0..2 {
            for p in &q {
                let d: f64 = p.iter().zip(&c).map(|(x, y)| x * y).sum();
                for (x, y) in c.iter_mut().zip(p) {
                    *x -= d * y;
                }
            }
        }
        let norm = c.iter().map(|x| x * x).sum::<f64>().sqrt();
        c.iter_mut().for_each(|x| *x /= norm);
        q.push(c);
    }
    q
}

/// Tall matrices `X Σ Yᵀ` with known singular values spread just inside and just outside
/// [`AV_MAX_COND`] (the QR methods form `U Σ` as the product `A V` inside, by rotations
/// outside): valid, converged and within the values' tolerance either way, through both QR
/// methods and with thin and full vectors.
fn product_boundary<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
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
fn v_orthogonality<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
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
fn strided_views<B: Svd<f32> + Svd<f64>>(b: &B) -> Result<(), String> {
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
fn normals(seed: u64, len: usize) -> Vec<f64> {
    let mut u = unit_stream(seed);
    (0..len)
        .map(|_| {
            let (a, b) = ((u() + 0.5).max(1e-300), u() + 0.5);
            (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
        })
        .collect()
}

/// Every preconditioning (and the automatic choice) with values only and with thin vectors.
fn all_methods() -> Vec<SvdOptions> {
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
fn relative_all<T: Scalar, B: Svd<T>>(
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
fn huge_entry<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
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
fn graded_relative<B: Svd<f32>>(b: &B) -> Result<(), String> {
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
fn planner_paths<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
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

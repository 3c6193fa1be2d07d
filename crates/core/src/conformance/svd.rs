//! SVD and QR conformance: random matrices of every shape and kind (tall, wide, square,
//! rank-deficient, duplicated columns, a zero row, graded, zero, 1 × 1) checked for validity
//! ([`svd::validity`]) and against an independent reference (nalgebra's SVD in f64 of the same
//! `T`-rounded input), the real matrices of `shared/data/matrices` (Hilbert singular values to
//! 40 digits, SuiteSparse matrices against LAPACK), every preconditioning, bad input, and the
//! sweep limit.

mod data;
mod limits;
mod qr;

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
use data::{hilbert, suitesparse};
use limits::{
    bad_input, graded_relative, huge_entry, planner_paths, product_boundary, strided_views,
    sweep_limit, v_orthogonality,
};
use qr::{qr_flat_q_small, qr_random, qr_tree};

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

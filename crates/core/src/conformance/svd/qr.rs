//! QR conformance: random shapes and orders, the flat order on small shapes, the tree order
//! with many panels.

use super::*;

pub(super) fn qr_random<T: Scalar, B: Qr<T>>(b: &B) -> Result<(), String> {
    qr_cases::<T, B>(b, 1..40, 1..40, qr_order())
}

/// The flat (one rotation per step) order forced with thin and full Q on a few small shapes,
/// square, tall, wide and of one row or column, with repeated columns in some: every step of
/// the flat Q application, cheap enough for a race detector.
pub(super) fn qr_flat_q_small<T: Scalar, B: Qr<T>>(b: &B) -> Result<(), String> {
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
pub(super) fn qr_tree<T: Scalar, B: Qr<T>>(b: &B) -> Result<(), String> {
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

pub(super) fn qr_cases<T: Scalar, B: Qr<T>>(
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
pub(super) fn orthonormal(
    rows: usize,
    cols: usize,
    next: &mut impl FnMut() -> f64,
) -> Vec<Vec<f64>> {
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

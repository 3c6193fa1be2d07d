//! Schedules run on the host: exact on small integers, their levels and workspace, the
//! bounds and the checks.

use super::*;

fn run_host(m: usize, n: usize, k: usize, opts: &MatMulOptions) -> (Schedule, Vec<f64>) {
    let a: Vec<f64> = (0..m * k)
        .map(|i| ((i * 7 + 3) % 11) as f64 - 5.0)
        .collect();
    let b: Vec<f64> = (0..k * n)
        .map(|i| ((i * 5 + 1) % 13) as f64 - 6.0)
        .collect();
    let s = plan(m, n, k, opts, 1);
    let mut c = vec![f64::NAN; m * n];
    let mut w = vec![f64::NAN; s.workspace];
    execute_host(&s, &a, &b, &mut c, &mut w, naive_gemm).unwrap();
    let av = DenseView::new(m, k, k, &a).unwrap();
    let bv = DenseView::new(k, n, n, &b).unwrap();
    let r = reference(av, bv).unwrap();
    // Small integers: every algorithm is exact.
    assert_eq!(c, r, "{m}x{k}x{n} {:?} L{}", s.algorithm, s.levels);
    (s, c)
}

#[test]
fn schedules_are_exact_on_small_integers() {
    for alg in [
        Algorithm::Tiled,
        Algorithm::Strassen,
        Algorithm::Winograd,
        Algorithm::Fused,
    ] {
        for levels in [Some(1), Some(2), Some(3), None] {
            for &(m, n, k) in &[
                (1, 1, 1),
                (2, 2, 2),
                (8, 8, 8),
                (67, 129, 45),
                (16, 3, 40),
                (33, 17, 1),
                (5, 0, 4),
                (4, 4, 0),
            ] {
                run_host(m, n, k, &MatMulOptions::with(alg, levels));
            }
        }
    }
}

#[test]
fn levels_and_workspace() {
    let o = MatMulOptions::with(Algorithm::Winograd, Some(2));
    let s = plan(64, 64, 64, &o, 1);
    assert_eq!((s.algorithm, s.levels), (Algorithm::Winograd, 2));
    assert_eq!(s.products(), 49);
    // Level 1: 3 * 32^2, level 2: 3 * 16^2.
    assert_eq!(s.workspace, 3 * 32 * 32 + 3 * 16 * 16);
    // Fused: no temporaries at the fused level.
    let f = |l| {
        plan(
            64,
            64,
            64,
            &MatMulOptions::with(Algorithm::Fused, Some(l)),
            1,
        )
    };
    assert_eq!((f(1).workspace, f(1).products()), (0, 7));
    assert_eq!((f(2).workspace, f(2).products()), (3 * 32 * 32, 49));
    assert!(f(2).steps.iter().all(|s| !matches!(s, Step::Gemm { .. })));
    // Clamped to log2(min).
    let s = plan(
        5,
        64,
        64,
        &MatMulOptions::with(Algorithm::Strassen, Some(9)),
        1,
    );
    assert_eq!(s.levels, 2);
    // Auto: cutoff 16 on 64 -> 2 levels; tiled below.
    let auto = MatMulOptions {
        strassen_cutoff: Some(16),
        ..MatMulOptions::default()
    };
    assert_eq!(plan(64, 64, 64, &auto, 0).levels, 2);
    assert_eq!(plan(31, 64, 64, &auto, 0).algorithm, Algorithm::Tiled);
    // Explicit Strassen: at least one level.
    let s = plan(
        8,
        8,
        8,
        &MatMulOptions::with(Algorithm::Strassen, None),
        1024,
    );
    assert_eq!(s.levels, 1);
    assert_eq!(plan(8, 8, 8, &MatMulOptions::default(), 1024).levels, 0);
}

#[test]
fn bounds_grow_with_levels() {
    for alg in [Algorithm::Strassen, Algorithm::Winograd] {
        let mut last = higham_constant(Algorithm::Tiled, 0, 1024);
        for l in 1..5 {
            let c = higham_constant(alg, l, 1024);
            assert!(c > last, "{alg:?} L{l}: {c} <= {last}");
            last = c;
        }
    }
}

#[test]
fn shape_checks() {
    assert!(matches!(check_shapes((2, 3), (4, 5)), Err(Error::Shape(_))));
    assert_eq!(check_shapes((2, 3), (3, 5)).unwrap(), (2, 5, 3));
    assert!(check_lengths(2, 3, 4, 8, 12, 6).is_ok());
    assert!(check_lengths(2, 3, 4, 8, 12, 7).is_err());
}

/// A wrong entry found by [`check_sampled`] is named by its row in the whole product
/// (it checks one row at a time), whether every row or a sample is checked.
#[test]
fn check_sampled_names_the_entry_in_the_whole_product() {
    let (m, n, k) = (64, 5, 8);
    let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
    let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
    let (av, bv) = (
        DenseView::new(m, k, k, &a).unwrap(),
        DenseView::new(k, n, n, &b).unwrap(),
    );
    let mut c = reference(av, bv).unwrap();
    let s = plan(m, n, k, &MatMulOptions::with(Algorithm::Tiled, None), 1);
    assert_eq!(check_sampled(av, bv, &c, &s, m), Ok(0.0));
    c[63 * n + 2] = f64::NAN;
    // All rows, and 2 sampled rows (0 and 63).
    for rows in [m, 2] {
        let e = check_sampled(av, bv, &c, &s, rows).unwrap_err();
        assert!(e.contains("C[63, 2]: got NaN"), "{e}");
    }
}

//! `matmul`: the output `.npy` against a naive f64 triple loop, non-finite and huge inputs.

use super::*;

fn naive(m: usize, k: usize, n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0;
            for l in 0..k {
                s += a[i * k + l] * b[l * n + j];
            }
            c[i * n + j] = s;
        }
    }
    c
}

/// Runs `matmul` with `args` (after A B -o C) and compares C with the naive product:
/// shape, dtype, and max |C - ref| within 2000 k ε max|A| max|B| of its precision (a
/// dropped term, a wrong index or a transposed block is off by about max|A| max|B|).
#[allow(clippy::too_many_arguments)]
fn check_matmul(
    d: &Path,
    shape: (usize, usize, usize),
    single_inputs: bool,
    backend: &str,
    args: &[&str],
    dtype: &str,
    seed: u64,
) {
    check_matmul_poisoned(d, shape, single_inputs, backend, args, dtype, seed, &[]);
}

/// [`check_matmul`] with `a[i][l] = v` for each `(i, l, v)` of `poison` (NaN, ±Inf): where
/// the naive product is NaN or infinite, C must hold the same; elsewhere the bound holds.
#[allow(clippy::too_many_arguments)]
fn check_matmul_poisoned(
    d: &Path,
    (m, k, n): (usize, usize, usize),
    single_inputs: bool,
    backend: &str,
    args: &[&str],
    dtype: &str,
    seed: u64,
    poison: &[(usize, usize, f64)],
) -> String {
    let mut r = testing::unit_stream(seed);
    let round = |x: f64| if single_inputs { x as f32 as f64 } else { x };
    let mut a: Vec<f64> = (0..m * k).map(|_| round(r())).collect();
    let b: Vec<f64> = (0..k * n).map(|_| round(4.0 * r())).collect();
    let amax = a.iter().fold(0f64, |x, y| x.max(y.abs()));
    for &(i, l, v) in poison {
        a[i * k + l] = v;
    }
    let (pa, pb, pc) = (d.join("a.npy"), d.join("b.npy"), d.join("c.npy"));
    write_npy(&pa, m, k, &a, single_inputs);
    write_npy(&pb, k, n, &b, single_inputs);
    std::fs::remove_file(&pc).ok();
    let mut full = vec![
        "matmul",
        p(&pa),
        p(&pb),
        "-o",
        p(&pc),
        "--backend",
        backend,
        "--repeat",
        "1",
    ];
    full.extend_from_slice(args);
    let what = format!("matmul {m}x{k} · {k}x{n} --backend {backend} {args:?}");
    let out = ok(&full);
    let (descr, shape, c) = read_npy(&pc);
    assert_eq!(shape, [m, n], "{what}: shape");
    assert_eq!(descr, dtype, "{what}: dtype");
    let want = naive(m, k, n, &a, &b);
    let eps = if dtype == "<f4" {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let bmax = b.iter().fold(0f64, |x, y| x.max(y.abs()));
    let bound = 2000.0 * k as f64 * eps * amax * bmax;
    let (worst, at) = c
        .iter()
        .zip(&want)
        .enumerate()
        .map(|(i, (&g, &w))| {
            let err = if w.is_finite() {
                (g - w).abs()
            } else if (w.is_nan() && g.is_nan()) || g == w {
                0.0
            } else {
                f64::INFINITY
            };
            (err, i)
        })
        .fold(
            (0f64, 0),
            |x, y| if y.0 > x.0 || y.0.is_nan() { y } else { x },
        );
    assert!(
        worst <= bound,
        "{what}: C[{}, {}] = {} but the naive product gives {} (|diff| {worst:e} > {bound:e})",
        at / n,
        at % n,
        c[at],
        want[at]
    );
    out
}

#[test]
fn matmul_output_matches_the_naive_product() {
    let d = dir("matmul");
    for b in backends() {
        let mut seed = 11;
        for (shape, args) in [
            ((64, 64, 64), vec!["--algorithm", "auto"]),
            ((64, 64, 64), vec!["--algorithm", "tiled"]),
            (
                (64, 64, 64),
                vec!["--algorithm", "strassen", "--levels", "1"],
            ),
            (
                (64, 64, 64),
                vec!["--algorithm", "winograd", "--levels", "2"],
            ),
            ((64, 64, 64), vec!["--algorithm", "fused", "--levels", "1"]),
            ((37, 50, 29), vec!["--algorithm", "tiled"]),
            (
                (37, 50, 29),
                vec!["--algorithm", "winograd", "--levels", "1"],
            ),
            ((37, 50, 29), vec!["--algorithm", "fused", "--levels", "1"]),
            (
                (70, 66, 90),
                vec!["--algorithm", "strassen", "--levels", "2"],
            ),
            ((1, 70, 3), vec!["--algorithm", "auto"]),
        ] {
            for (prec, dtype) in [("f32", "<f4"), ("f64", "<f8")] {
                let mut a = args.clone();
                a.extend(["--precision", prec]);
                check_matmul(&d, shape, false, b, &a, dtype, seed);
                seed += 1;
            }
        }
        // f32 inputs, f32 out; f32 inputs computed in f64 on request.
        check_matmul(
            &d,
            (48, 40, 56),
            true,
            b,
            &["--precision", "f32"],
            "<f4",
            99,
        );
        check_matmul(
            &d,
            (48, 40, 56),
            true,
            b,
            &["--precision", "f64"],
            "<f8",
            98,
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

/// NaN and Inf propagate (as `matmul --help` says): a NaN in row 2 of A makes row 2 of C
/// NaN, +Inf in row 5 (B > 0 there) makes row 5 +Inf, and no other row changes.
#[test]
fn matmul_non_finite_inputs_propagate_by_row() {
    let d = dir("matmul-nan");
    let poison = [(2, 3, f64::NAN), (5, 0, f64::INFINITY)];
    for b in backends() {
        for alg in ["auto", "tiled"] {
            for (prec, dtype) in [("f32", "<f4"), ("f64", "<f8")] {
                let args = ["--algorithm", alg, "--precision", prec];
                check_matmul_poisoned(&d, (64, 64, 64), false, b, &args, dtype, 21, &poison);
            }
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// The same through Strassen-type recursions: with one NaN at A[2][3] (64 x 64, f64, B
/// finite), `matmul A B -o C --algorithm strassen --levels 1` (also winograd, fused; CPU and
/// OpenCL) gave NaN in row 34 too (the block sums mixed row 2 of A11 into C22), and failed
/// with "the product is wrong beyond the matmul tolerance: row 34: C[0, 32]: got NaN" (naming
/// the wrong entry). Inputs holding NaN or infinity now run the classical product, as the
/// summary says, so the NaN reaches row 2 only (and -1 / 2 levels, f32, alike).
#[test]
fn matmul_non_finite_inputs_propagate_by_row_through_strassen() {
    let d = dir("matmul-nan-strassen");
    let poison = [(2, 3, f64::NAN), (5, 0, f64::INFINITY)];
    for b in backends() {
        for alg in ["strassen", "winograd", "fused"] {
            for (levels, prec, dtype) in [("1", "f64", "<f8"), ("2", "f32", "<f4")] {
                let args = ["--algorithm", alg, "--levels", levels, "--precision", prec];
                let out =
                    check_matmul_poisoned(&d, (64, 64, 64), false, b, &args, dtype, 22, &poison);
                assert!(
                    out.contains(&format!(
                        "tiled (the classical product instead of {alg} with {levels} levels"
                    )),
                    "matmul --backend {b} {args:?} does not report the classical product:\n{out}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Finite f64 inputs so large that Strassen-type sums overflow (A up to 0.9 · f64::MAX, B
/// below 5e-4 in magnitude: the classical product is below 1e307): `--algorithm strassen|winograd|
/// fused` gave NaN and failed with "C(0, 0) = NaN overflows f64". The classical product runs
/// instead, as the summary says, and C matches the naive product.
#[test]
fn matmul_huge_finite_inputs_give_the_classical_product() {
    let d = dir("matmul-huge");
    let (m, k, n) = (64, 64, 64);
    let mut r = testing::unit_stream(23);
    let a: Vec<f64> = (0..m * k).map(|_| f64::MAX * (1.8 * r())).collect();
    let b: Vec<f64> = (0..k * n).map(|_| 1e-3 * r()).collect();
    let (pa, pb, pc) = (d.join("a.npy"), d.join("b.npy"), d.join("c.npy"));
    write_npy(&pa, m, k, &a, false);
    write_npy(&pb, k, n, &b, false);
    let want = naive(m, k, n, &a, &b);
    let amax = a.iter().fold(0f64, |x, y| x.max(y.abs()));
    let bmax = b.iter().fold(0f64, |x, y| x.max(y.abs()));
    let bound = 2000.0 * k as f64 * f64::EPSILON * amax * bmax;
    for be in backends() {
        for alg in ["strassen", "winograd", "fused"] {
            std::fs::remove_file(&pc).ok();
            let args = [
                "matmul",
                p(&pa),
                p(&pb),
                "-o",
                p(&pc),
                "--backend",
                be,
                "--repeat",
                "1",
                "--algorithm",
                alg,
                "--levels",
                "1",
            ];
            let out = ok(&args);
            let said = format!(
                "tiled (the classical product instead of {alg} with 1 levels: the inputs' \
                 values are so large"
            );
            assert!(
                out.contains(&said),
                "{args:?} does not report the classical product:\n{out}"
            );
            let (_, shape, c) = read_npy(&pc);
            assert_eq!(shape, [m, n]);
            for (idx, (g, w)) in c.iter().zip(&want).enumerate() {
                assert!(
                    w.is_finite() && (g - w).abs() <= bound,
                    "{args:?}: C[{}, {}] = {g:e}, the naive product gives {w:e}",
                    idx / n,
                    idx % n
                );
            }
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 23 §1: "the element type follows the inputs unless `--precision` is given".
#[test]
fn matmul_without_precision_keeps_the_inputs_type() {
    let d = dir("matmul-type");
    for b in backends() {
        check_matmul(&d, (64, 64, 64), false, b, &[], "<f8", 5);
        check_matmul(&d, (64, 64, 64), true, b, &[], "<f4", 6);
    }
    std::fs::remove_dir_all(&d).ok();
}

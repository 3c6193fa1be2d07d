//! `trident svd` end to end: a small Matrix Market matrix on the CPU backend.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_trident");

/// `--repeat N` decomposes N more times and reports their median, lowest and highest time,
/// after the checked result of the first.
#[test]
fn svd_repeat_reports_the_warm_times() {
    let dir = std::env::temp_dir().join(format!("trident-svd-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.mtx");
    // 3 x 2, column-major: [[3, 0], [4, 5], [0, 0]].
    std::fs::write(
        &a,
        "%%MatrixMarket matrix array real general\n3 2\n3\n4\n0\n0\n5\n0\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .args([
            "svd",
            a.to_str().unwrap(),
            "--backend",
            "cpu",
            "--repeat",
            "3",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("repeated 3 times: median "), "{out}");
    // σ = √45 and √5 (AᵀA = [[25, 20], [20, 25]]: eigenvalues 45 and 5).
    assert!(out.contains("s: 6.708204e0, 2.236068e0"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A 4 × 3 matrix with one entry `h` at (2, 1), order-one entries in its row and column,
/// and the rest `B` (rows 0, 1, 3, columns 0, 2) built as `8 u₁v₁ᵀ + 3 u₂v₂ᵀ`
/// (`u₁ = (1, 2, 2)/3`, `u₂ = (2, 1, −2)/3`, `v₁ = (0.6, 0.8)`, `v₂ = (−0.8, 0.6)`): its
/// singular values are `h`, 8 and 3 to relative `O(1/h)`. Matrix Market array, column-major.
fn huge_entry_mtx(h: &str) -> String {
    format!(
        "%%MatrixMarket matrix array real general\n4 3\n0\n2.4\n1\n4.8\n0.5\n-1\n{h}\n1\n\
         3.3333333333333335\n4.866666666666666\n-1\n3.066666666666667\n"
    )
}

/// The singular values printed on the `s:` line.
fn printed_values(out: &str) -> Vec<f64> {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("s: "))
        .unwrap_or_else(|| panic!("no s: line in {out}"));
    line.split(" (")
        .next()
        .unwrap()
        .split(", ")
        .map(|v| v.parse().unwrap())
        .collect()
}

/// Issue 23: one entry far larger than the rest (1e15 and 1e30 in f32, 1e160 and 1e300 in
/// f64) once returned σ₂… = 0 with a passing check. Every method gives 8 and 3, reports the
/// method it ran, and the check passes.
#[test]
fn svd_huge_entry_keeps_the_small_singular_values() {
    let dir = std::env::temp_dir().join(format!("trident-svd-huge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (precision, h, rel) in [
        // (the printed values have 7 digits: 1e-6 is the finest test of f64)
        ("f32", "1e15", 1e-5),
        ("f32", "1e30", 1e-5),
        ("f64", "1e160", 1e-6f64),
        ("f64", "1e300", 1e-6),
    ] {
        let a = dir.join(format!("huge_{precision}_{h}.mtx"));
        std::fs::write(&a, huge_entry_mtx(h)).unwrap();
        for (method, said) in [
            ("auto", "method none (Jacobi on A), chosen by auto:"),
            ("none", "method none (Jacobi on A):"),
            ("qr", "method qr (Jacobi on R):"),
            ("qrlq", "method qrlq (Jacobi on L):"),
        ] {
            let o = Command::new(BIN)
                .args(["svd", a.to_str().unwrap(), "--backend", "cpu"])
                .args(["--precision", precision, "--method", method])
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&o.stdout);
            let what = format!("{precision} {h} --method {method}");
            assert!(
                o.status.success(),
                "{what}: {out}\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(out.contains(said), "{what}: {out}");
            let s = printed_values(&out);
            let hv: f64 = h.parse().unwrap();
            assert_eq!(s.len(), 3, "{what}: {out}");
            for (got, want) in s.iter().zip([hv, 8.0, 3.0]) {
                assert!(
                    ((got - want) / want).abs() <= rel,
                    "{what}: s = {s:?}, expected {want}\n{out}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 23: a full SVD of a 1 × 200000 matrix needs a 200000² Vᵀ (320 GB in f64): an error
/// that names the bytes, before any work, not an abort.
#[test]
fn svd_full_too_large_for_memory_is_an_error_naming_the_bytes() {
    let dir = std::env::temp_dir().join(format!("trident-svd-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("row.mtx");
    let n = 200_000;
    let mut text = format!("%%MatrixMarket matrix array real general\n1 {n}\n");
    for j in 0..n {
        text.push_str(&format!("{}\n", (j % 7) as f64 - 3.0));
    }
    std::fs::write(&a, text).unwrap();
    let o = Command::new(BIN)
        .args(["svd", a.to_str().unwrap(), "--backend", "cpu", "--full"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("needs about") && err.contains("bytes") && err.contains("GiB"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--trace` (or `TRIDENT_SVD_TRACE=1`, read by the CLI) prints every phase of the SVD with
/// its time on stderr, the Jacobi phase with its sweep count; without either, no trace.
#[test]
fn svd_trace_prints_the_phases_when_asked() {
    let dir = std::env::temp_dir().join(format!("trident-svd-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.mtx");
    std::fs::write(
        &a,
        "%%MatrixMarket matrix array real general\n3 2\n3\n4\n0\n0\n5\n0\n",
    )
    .unwrap();
    let run = |flag: Option<&str>, env: Option<&str>| {
        let mut c = Command::new(BIN);
        c.args(["svd", a.to_str().unwrap(), "--backend", "cpu"])
            .env_remove("TRIDENT_SVD_TRACE");
        if let Some(f) = flag {
            c.arg(f);
        }
        if let Some(v) = env {
            c.env("TRIDENT_SVD_TRACE", v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let phases = |err: &str| -> Vec<String> {
        err.lines()
            .filter_map(|l| l.strip_prefix("svd trace: "))
            .map(str::to_owned)
            .collect()
    };
    for err in [run(Some("--trace"), None), run(None, Some("1"))] {
        let p = phases(&err);
        assert!(
            p.iter()
                .any(|l| l.starts_with("jacobi (") && l.ends_with(" ms")),
            "{err}"
        );
        assert!(p.iter().any(|l| l.starts_with("U and V: ")), "{err}");
    }
    for err in [run(None, None), run(None, Some("0"))] {
        assert!(phases(&err).is_empty(), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

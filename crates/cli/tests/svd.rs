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

//! `trident cluster` end to end on tiny networks: mcl's output format, the progress lines,
//! `--eval`, and refusals before any work.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-cluster-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn trident(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run trident")
}

/// Two labelled triangles joined by one weak edge.
fn network(d: &std::path::Path) -> PathBuf {
    let p = d.join("net.abc");
    std::fs::write(
        &p,
        "alpha\tbeta\t1\nbeta\tgamma\t1\ngamma\talpha\t1\n\
         delta\tepsilon\t1\nepsilon\tzeta\t1\nzeta\tdelta\t1\ngamma\tdelta\t0.1\n",
    )
    .unwrap();
    p
}

#[test]
fn clusters_in_mcl_format_with_progress_and_eval() {
    let d = dir("format");
    let net = network(&d);
    let cx = d.join("complexes.txt");
    std::fs::write(&cx, "# gold\nalpha beta gamma\ndelta epsilon zeta\n").unwrap();
    let out = d.join("clusters.txt");
    let o = trident(&[
        "cluster",
        net.to_str().unwrap(),
        "--backend",
        "cpu",
        "-I",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--eval",
        cx.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("iteration   1: chaos"), "{err}");
    assert!(err.contains("matched:     2/2 complexes"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| {
            let mut v: Vec<&str> = l.split('\t').collect();
            v.sort_unstable();
            v
        })
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            vec!["alpha", "beta", "gamma"],
            vec!["delta", "epsilon", "zeta"]
        ],
        "{text}"
    );

    // To standard output, quiet: only the clusters on stdout, no progress on stderr.
    let o = trident(&[
        "cluster",
        net.to_str().unwrap(),
        "--backend",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("iteration   1:"), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);
}

#[test]
fn non_convergence_is_reported() {
    let d = dir("cap");
    let net = network(&d);
    let o = trident(&[
        "cluster",
        net.to_str().unwrap(),
        "--backend",
        "cpu",
        "--max-iterations",
        "1",
        "--quiet",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did not converge in 1 iterations"), "{err}");
}

#[test]
fn bad_options_and_outputs_are_refused_before_work() {
    let d = dir("refuse");
    let net = network(&d);
    let n = net.to_str().unwrap();
    for args in [
        vec!["cluster", n, "-I", "1"],
        vec!["cluster", n, "--max-per-column", "0"],
        vec!["cluster", n, "--balance", "-1"],
        vec!["cluster", n, "-o", n],
        vec!["cluster", n, "--eval", "/nonexistent/complexes.txt"],
    ] {
        let o = trident(&args);
        assert!(!o.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("error:"), "{args:?}: {err}");
        assert!(!err.contains("graph:"), "{args:?} did work: {err}");
    }
    // The input is untouched.
    assert!(std::fs::read_to_string(&net).unwrap().starts_with("alpha"));
}

/// `trident generate planted` writes the same files whatever the thread count, and
/// `trident cluster --eval` on them recovers every community, printing the phase times.
#[test]
fn planted_network_is_reproducible_and_recovered() {
    let d = dir("planted");
    let gen = |threads: &str, name: &str| -> (Vec<u8>, Vec<u8>) {
        let (e, t) = (
            d.join(format!("{name}.el")),
            d.join(format!("{name}.truth")),
        );
        let o = Command::new(BIN)
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "generate",
                "planted",
                "--nodes",
                "400",
                "--communities",
                "20",
                "--degree",
                "8",
                "--mixing",
                "0.1",
                "--seed",
                "3",
                "-o",
                e.to_str().unwrap(),
                "--truth",
                t.to_str().unwrap(),
            ])
            .output()
            .expect("run trident");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (std::fs::read(&e).unwrap(), std::fs::read(&t).unwrap())
    };
    let one = gen("1", "a");
    assert_eq!(one, gen("2", "b"));
    assert_eq!(String::from_utf8_lossy(&one.1).lines().count(), 20);
    let out = d.join("clusters.txt");
    let o = trident(&[
        "cluster",
        d.join("a.el").to_str().unwrap(),
        "--backend",
        "cpu",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
        "--eval",
        d.join("a.truth").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("matched:     20/20 complexes"), "{err}");
    assert!(err.contains("(stopped: chaos below tolerance)"), "{err}");
    assert!(err.contains("phases: read "), "{err}");
    // Everything outside the clustering is timed too, so that the process time is accounted.
    for phase in [
        "prepare",
        "kernel load",
        "transfer",
        "iterations",
        "interpret",
        "write",
        "complexes",
        "backend start",
        "eval",
        "teardown",
        "process",
    ] {
        assert!(err.contains(&format!("{phase} ")), "{phase}: {err}");
    }
    // Same bytes, different files: refused.
    let e = d.join("a.el");
    let o = trident(&[
        "generate",
        "planted",
        "--nodes",
        "10",
        "--communities",
        "2",
        "-o",
        e.to_str().unwrap(),
        "--truth",
        e.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    std::fs::remove_dir_all(&d).ok();
}

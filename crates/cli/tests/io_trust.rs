//! Issue 23 through the CLI: formats told from the content, generators that produce what
//! they report, Matrix Market node ids printed as the file numbers them.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-cli-io-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn matrix_market_ids_are_printed_from_one() {
    let d = dir("ids");
    // Triangle 1-2-3 plus the edge 3-4, as the file numbers them.
    let g = d.join("g.mtx");
    std::fs::write(
        &g,
        "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n2 1\n3 1\n3 2\n4 3\n",
    )
    .unwrap();
    let per = d.join("per.tsv");
    let o = run(&[
        "triangles",
        g.to_str().unwrap(),
        "--backend",
        "cpu",
        "--per-vertex",
        per.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let rows: Vec<Vec<String>> = std::fs::read_to_string(&per)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4"]);
    // Node 4 (the file's) has degree 1 and no triangle; node 3 has degree 3.
    assert_eq!((rows[3][1].as_str(), rows[3][2].as_str()), ("1", "0"));
    assert_eq!(rows[2][1], "3");
    // Clusters name the file's ids too: never 0.
    let out = d.join("clusters.txt");
    let o = run(&[
        "cluster",
        g.to_str().unwrap(),
        "--backend",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let mut members: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    members.sort();
    assert_eq!(members, ["1", "2", "3", "4"]);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn formats_are_told_from_the_content() {
    let d = dir("formats");
    // A Matrix Market file named .txt is an SVD input; a misspelt banner is an error.
    let a = d.join("a.txt");
    std::fs::write(
        &a,
        "%%MatrixMarket matrix array real general\n2 2\n3\n0\n0\n4\n",
    )
    .unwrap();
    let o = run(&["svd", a.to_str().unwrap(), "--backend", "cpu"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let bad = d.join("bad.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarkt matrix coordinate pattern general\n3 3 1\n1 2\n",
    )
    .unwrap();
    for cmd in ["triangles", "stats", "spmv", "svd"] {
        let o = run(&[cmd, bad.to_str().unwrap(), "--backend", "cpu"]);
        let (out, err) = text(&o);
        assert!(!o.status.success(), "{cmd}: {out}");
        assert!(
            err.contains("bad.mtx:1") && err.contains("not a Matrix Market banner"),
            "{cmd}: {err}"
        );
    }
    // An empty input is "empty file" for a matrix command.
    let e = d.join("e.npy");
    std::fs::write(&e, "").unwrap();
    let o = run(&[
        "matmul",
        e.to_str().unwrap(),
        e.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("empty file"), "{err}");
    assert!(!err.contains("edge list"), "{err}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn generators_report_what_they_write() {
    let d = dir("gen");
    let f = d.join("p.txt");
    // 20 nodes in 2 communities of 10 cannot have degree 100: refused.
    let o = run(&[
        "generate",
        "planted",
        "--nodes",
        "20",
        "--communities",
        "2",
        "--degree",
        "100",
        "-o",
        f.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(
        !o.status.success() && err.contains("distinct edges"),
        "{err}"
    );
    // Degree 8: 80 distinct edges, reported and written.
    let o = run(&[
        "generate",
        "planted",
        "--nodes",
        "20",
        "--communities",
        "2",
        "--degree",
        "8",
        "-o",
        f.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains(" 80 edges"), "{out}");
    let pairs: std::collections::HashSet<(u32, u32)> = std::fs::read_to_string(&f)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut t = l.split_whitespace().map(|x| x.parse::<u32>().unwrap());
            let (u, v) = (t.next().unwrap(), t.next().unwrap());
            assert_ne!(u, v);
            (u.min(v), u.max(v))
        })
        .collect();
    assert_eq!(pairs.len(), 80);
    // Kronecker: the distinct undirected edges a reader will see are printed, and the
    // graph read back has exactly that many.
    let k = d.join("k.txt");
    let o = run(&[
        "generate",
        "kronecker",
        "--scale",
        "8",
        "--edge-factor",
        "8",
        "-o",
        k.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let distinct: usize = out
        .split("as a simple graph: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    let o = run(&["stats", k.to_str().unwrap()]);
    let (out, err) = text(&o);
    let edges: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("edges:"))
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(edges, distinct);
    assert!(
        err.contains("note: merged") && err.contains("self-loop"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).ok();
}

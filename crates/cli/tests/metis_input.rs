//! METIS graph files as input of `trident triangles` and `trident cluster`: told from edge
//! lists by their content, vertex ids printed as the file's 1-based ids.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn trident(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run trident")
}

fn file(test: &str, text: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-metis-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("g.graph");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn triangles_of_k4_in_metis() {
    // K4: 4 vertices, 6 edges, 4 triangles. Read as an edge list, the header `4 6` would be
    // an edge and the count would differ.
    let p = file("k4", "% K4\n4 6\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n");
    let o = trident(&["triangles", p.to_str().unwrap(), "--backend", "cpu"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let n: Option<u64> = out
        .lines()
        .find_map(|l| l.strip_prefix("triangles:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok());
    assert_eq!(n, Some(4), "{out}");
}

#[test]
fn cluster_two_triangles_in_metis() {
    // Two disjoint triangles {1,2,3} and {4,5,6}, edge weights (fmt 1).
    let p = file(
        "two",
        "6 6 1\n2 1 3 1\n1 1 3 1\n1 1 2 1\n5 1 6 1\n4 1 6 1\n4 1 5 1\n",
    );
    let out = p.with_file_name("clusters.txt");
    let o = trident(&[
        "cluster",
        p.to_str().unwrap(),
        "--backend",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
    assert_eq!(lines, [vec!["1", "2", "3"], vec!["4", "5", "6"]], "{text}");
}

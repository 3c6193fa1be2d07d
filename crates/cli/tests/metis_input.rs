//! METIS graph files as input of `trident triangles`, told from edge lists by their content
//! (`trident cluster` on METIS: `tests/cluster.rs`).

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

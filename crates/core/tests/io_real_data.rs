//! Loads every graph listed in `shared/data/graphs.tsv` and the matrices in
//! `shared/data/matrices`, and checks them against the independently computed reference
//! figures.
//!
//! The data folder is found by `trident_core::testing::data_dir` (`$TRIDENT_DATA`, else a
//! `shared/data` above the working or crate directory). Without it the tests skip, or fail
//! under `REQUIRE_DATA=1`.

use std::path::Path;

use trident_core::io::{self, mtx, EdgeListOptions, IdMode};
use trident_core::{Dense, Graph};

macro_rules! data_or_skip {
    () => {
        match trident_core::testing::data_dir_or_skip() {
            Some(d) => d,
            None => return,
        }
    };
}

struct Row {
    file: String,
    nodes: usize,
    edges: usize,
    self_loops: usize,
}

fn table(dir: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join("graphs.tsv")).unwrap();
    let mut rows = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        match &header {
            None => header = Some(f.iter().map(|s| s.to_string()).collect()),
            Some(h) => {
                let col = |name: &str| -> usize {
                    let k = h.iter().position(|c| c == name).unwrap();
                    f[k].parse().unwrap()
                };
                rows.push(Row {
                    file: f[0].to_string(),
                    nodes: col("nodes"),
                    edges: col("edges"),
                    self_loops: col("self_loops_in_file"),
                });
            }
        }
    }
    rows
}

fn check_simple(g: &Graph) {
    for u in 0..g.num_nodes() {
        let nb = g.neighbors(u);
        assert!(nb.windows(2).all(|w| w[0] < w[1]), "row {u} not sorted");
        assert!(!nb.contains(&(u as u32)), "self-loop at {u}");
        for &v in nb {
            assert!(g.neighbors(v as usize).binary_search(&(u as u32)).is_ok());
        }
    }
}

#[test]
fn every_graph_in_the_table() {
    let dir = data_or_skip!();
    let rows = table(&dir);
    assert!(rows.len() >= 23, "graphs.tsv has {} rows", rows.len());
    let mut failures = Vec::new();
    for r in &rows {
        let path = dir.join(&r.file);
        let g = match io::read_graph_auto(&path) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{}: {e}", r.file));
                continue;
            }
        };
        let got = (g.num_nodes(), g.num_edges(), g.self_loops_dropped());
        let want = (r.nodes, r.edges, r.self_loops);
        if got != want {
            failures.push(format!(
                "{}: (nodes, edges, self-loops) = {got:?}, table says {want:?}",
                r.file
            ));
        }
        check_simple(&g);
        if r.file.starts_with("ppi/") {
            let labels = g.labels().expect("PPI graphs carry protein names");
            assert!(labels.iter().all(|l| !l.is_empty()));
        }
        eprintln!("{}: {got:?} ok", r.file);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn weighted_files_are_weighted() {
    let dir = data_or_skip!();
    for f in [
        "ppi/collins2007.txt",
        "ppi/krogan2006_core.txt",
        "graphs/simulated_blockmodel_graph_1000_nodes.tsv",
        "graphs/facebook_combined.txt",
        "graphs/LFAT5.mtx",
    ] {
        let g = io::read_graph_auto(dir.join(f)).unwrap();
        let w = g
            .weights()
            .unwrap_or_else(|| panic!("{f} should be weighted"));
        assert!(w.iter().all(|x| x.is_finite()), "{f}");
    }
    for f in [
        "ppi/human_string.txt",
        "graphs/karate.mtx",
        "graphs/as20000102.txt",
    ] {
        let g = io::read_graph_auto(dir.join(f)).unwrap();
        assert!(g.weights().is_none(), "{f} should be unweighted");
    }
}

#[test]
fn numbering_rules_on_real_files() {
    let dir = data_or_skip!();
    // 0-based and using every id: numbering kept, no labels.
    let g = io::read_graph_auto(dir.join("graphs/facebook_combined.txt")).unwrap();
    assert!(g.labels().is_none());
    // 1-based: compacted, the label is the original id.
    let g = io::read_graph_auto(dir.join("graphs/inf-power.edges")).unwrap();
    assert_eq!(g.num_nodes(), 4941);
    assert_eq!(g.label(0), "1");
    assert_eq!(g.label(4940), "4941");
    // Ids as given: a 1-based file gets an isolated node 0.
    let opts = EdgeListOptions {
        ids: IdMode::Numeric,
        ..Default::default()
    };
    let g = io::read_graph(dir.join("graphs/inf-power.edges"), &opts).unwrap();
    assert_eq!(g.num_nodes(), 4942);
    assert_eq!(g.degree(0), 0);
    assert_eq!(g.num_edges(), 6594);
    // ca-GrQc: node 12294 appears only in a self-loop.
    let p = dir.join("graphs/ca-GrQc_full.txt");
    let g = io::read_graph_auto(&p).unwrap();
    assert_eq!(g.num_nodes(), 5241);
    assert!(g.labels().unwrap().iter().all(|l| l != "12294"));
    let opts = EdgeListOptions {
        loop_only_nodes: true,
        ..Default::default()
    };
    let g = io::read_graph(&p, &opts).unwrap();
    assert_eq!(g.num_nodes(), 5242);
    assert_eq!(g.num_edges(), 14484);
    // Labels mode on a numeric file: first-appearance order.
    let opts = EdgeListOptions {
        ids: IdMode::Labels,
        ..Default::default()
    };
    let g = io::read_graph(dir.join("graphs/inf-power.edges"), &opts).unwrap();
    assert_eq!((g.num_nodes(), g.num_edges()), (4941, 6594));
    assert_eq!(g.label(0), "387");
}

fn sum_sq_singular_values(path: &Path) -> f64 {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let s: f64 = l.trim().parse().unwrap();
            s * s
        })
        .sum()
}

fn frob_sq(d: &Dense<f64>) -> f64 {
    d.as_slice().iter().map(|x| x * x).sum()
}

#[test]
fn matrices() {
    let dir = data_or_skip!().join("matrices");
    for (name, rows, cols) in [
        ("west0067", 67, 67),
        ("lp_afiro", 27, 51),
        ("LFAT5", 14, 14),
        ("jagmesh7", 1138, 1138),
    ] {
        let p = dir.join(format!("{name}.mtx"));
        let coo = io::read_coo::<f64>(&p).unwrap();
        assert_eq!(coo.shape(), (rows, cols), "{name}");
        let d = io::read_dense::<f64>(&p).unwrap();
        assert_eq!(d.shape(), (rows, cols));
        // ||A||_F^2 = sum of squared singular values.
        let want = sum_sq_singular_values(&dir.join(format!("{name}_singular_values_lapack.txt")));
        let got = frob_sq(&d);
        assert!(
            (got - want).abs() <= 1e-9 * want.max(1.0),
            "{name}: ||A||_F^2 = {got}, singular values give {want}"
        );
        // The header agrees, and f32 reads too.
        let bytes = std::fs::read(&p).unwrap();
        let h = mtx::parse_header(&bytes, name).unwrap();
        assert_eq!((h.rows, h.cols), (rows, cols));
        let d32 = io::read_dense::<f32>(&p).unwrap();
        assert_eq!(d32.shape(), (rows, cols));
    }
    let cam = io::read_npy::<f64>(dir.join("camera_gray_f64.npy")).unwrap();
    assert_eq!(cam.shape(), (512, 512));
    assert!(cam.as_slice().iter().all(|&x| (0.0..=255.0).contains(&x)));
    let want = sum_sq_singular_values(&dir.join("camera_gray_singular_values_lapack.txt"));
    let got = frob_sq(&cam);
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    let cam32 = io::read_npy::<f32>(dir.join("camera_gray_f64.npy")).unwrap();
    assert_eq!(cam32.shape(), (512, 512));
}

//! `generate`: the files against the generators' own reports.

use super::triangles::check_triangles;
use super::*;

/// Edge lines of a generated SNAP file (comments skipped), and its `# Nodes: N Edges: M`
/// header numbers if it has one.
type EdgeFile = (Vec<(u64, u64)>, Option<(u64, u64)>);

fn read_generated(path: &Path) -> EdgeFile {
    let text = std::fs::read_to_string(path).unwrap();
    let mut edges = Vec::new();
    let mut declared = None;
    for l in text.lines() {
        if let Some(c) = l.strip_prefix('#') {
            if let (Some(n), Some(m)) = (field_u64(c, "Nodes:"), num_after(c, "Edges:")) {
                declared = Some((n, m));
            }
            continue;
        }
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<u64> = l
            .split_whitespace()
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("{}: {l:?}", path.display()))
            })
            .collect();
        assert_eq!(f.len(), 2, "{}: {l:?}", path.display());
        edges.push((f[0], f[1]));
    }
    (edges, declared)
}

fn num_after(text: &str, key: &str) -> Option<u64> {
    let i = text.find(key)? + key.len();
    let digits: String = text[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn generate(args: &[&str], threads: &str) -> String {
    let o = Command::new(BIN)
        .env("RAYON_NUM_THREADS", threads)
        .arg("generate")
        .args(args)
        .output()
        .expect("run trident");
    assert!(
        o.status.success(),
        "generate {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn generate_kronecker_writes_what_it_reports_and_counts_right() {
    let d = dir("kron");
    let (a, b, c) = (d.join("a.el"), d.join("b.el"), d.join("c.el"));
    let kron = |out: &Path, seed: &str, threads: &str| {
        generate(
            &[
                "kronecker",
                "--scale",
                "8",
                "--edge-factor",
                "8",
                "--seed",
                seed,
                "-o",
                p(out),
            ],
            threads,
        )
    };
    let report = kron(&a, "5", "1");
    kron(&b, "5", "2");
    kron(&c, "6", "2");
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        "same seed, other thread count: other file"
    );
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
    let (edges, declared) = read_generated(&a);
    assert_eq!(num_before(&report, "nodes"), Some(256), "{report}");
    assert_eq!(
        num_before(&report, "edges"),
        Some(edges.len() as u64),
        "the report's edge count is not the file's\n{report}"
    );
    assert_eq!(edges.len(), 8 * 256);
    if let Some((n, m)) = declared {
        assert_eq!((n, m), (256, edges.len() as u64), "the file's header");
    }
    assert!(edges.iter().all(|&(u, v)| u < 256 && v < 256));
    // Skewed as a Kronecker graph is: the busiest node has far more than the mean degree.
    let mut deg = HashMap::new();
    for &(u, v) in &edges {
        *deg.entry(u).or_insert(0) += 1;
        *deg.entry(v).or_insert(0) += 1;
    }
    assert!(*deg.values().max().unwrap() > 4 * 16, "{deg:?}");
    // And `triangles` counts the file right (duplicates and self-loops as drawn).
    let text = std::fs::read_to_string(&a).unwrap();
    let g = parse_edge_list(&text);
    let out = d.join("per.tsv");
    for be in backends() {
        check_triangles(&a, &g, be, &[], &out);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Reads a truth file: community lines of node numbers.
fn read_truth(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect()
}

fn planted(d: &Path, name: &str, args: &[&str], threads: &str) -> (String, PathBuf, PathBuf) {
    let (e, t) = (
        d.join(format!("{name}.el")),
        d.join(format!("{name}.truth")),
    );
    let mut full = vec!["planted"];
    full.extend_from_slice(args);
    full.extend(["-o", p(&e), "--truth", p(&t)]);
    (generate(&full, threads), e, t)
}

#[test]
fn generate_planted_writes_what_it_reports_with_a_partition() {
    let d = dir("planted");
    let args = [
        "--nodes",
        "300",
        "--communities",
        "7",
        "--degree",
        "12",
        "--mixing",
        "0.1",
        "--seed",
        "42",
    ];
    let (report, e, t) = planted(&d, "a", &args, "1");
    let (_, e2, t2) = planted(&d, "b", &args, "2");
    assert_eq!(std::fs::read(&e).unwrap(), std::fs::read(&e2).unwrap());
    assert_eq!(std::fs::read(&t).unwrap(), std::fs::read(&t2).unwrap());
    let mut other = args;
    other[9] = "43";
    let (_, e3, _) = planted(&d, "c", &other, "1");
    assert_ne!(std::fs::read(&e).unwrap(), std::fs::read(&e3).unwrap());

    let (edges, declared) = read_generated(&e);
    assert_eq!(num_before(&report, "nodes"), Some(300), "{report}");
    assert_eq!(
        num_before(&report, "edges"),
        Some(edges.len() as u64),
        "the report's edge count is not the file's\n{report}"
    );
    if let Some(dec) = declared {
        assert_eq!(dec, (300, edges.len() as u64), "the file's header");
    }
    // n D / 2 edges were asked; no self-loops; every node in range and used.
    assert!(
        (edges.len() as i64 - 1800).abs() <= 1800 / 20,
        "{} edges for 300 nodes of degree 12",
        edges.len()
    );
    assert!(edges.iter().all(|&(u, v)| u != v), "a self-loop");
    let used: BTreeSet<u64> = edges.iter().flat_map(|&(u, v)| [u, v]).collect();
    assert_eq!(used, (0..300).collect(), "node numbers 0..300, each used");

    // The truth: 7 communities of nearly equal size, every node in exactly one.
    let truth = read_truth(&t);
    assert_eq!(truth.len(), 7, "communities");
    let mut of = HashMap::new();
    for (c, members) in truth.iter().enumerate() {
        for &u in members {
            assert!(of.insert(u, c).is_none(), "node {u} in two communities");
        }
    }
    assert_eq!(
        of.keys().copied().collect::<BTreeSet<_>>(),
        (0..300).collect(),
        "every node in a community"
    );
    let sizes: Vec<usize> = truth.iter().map(Vec::len).collect();
    assert!(
        sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
        "{sizes:?}"
    );
    // The truth belongs to this edge list: about 90 % of the edges inside (mixing 0.1).
    let inside = edges.iter().filter(|&&(u, v)| of[&u] == of[&v]).count();
    let frac = inside as f64 / edges.len() as f64;
    assert!((0.85..=0.95).contains(&frac), "{frac} of the edges inside");
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 23 §1: "a generator produces what it reports (distinct edges for planted)".
// WRONG at 41a3d58 (issue 23 §1), hence ignored until the fix is merged: `generate planted
// --nodes 300 --communities 7 --degree 12 --seed 3` reports and writes 1800 edge lines of
// which 1657 are distinct; `--nodes 20 --communities 2 --degree 100` reports 1000 edges, 178
// distinct.
#[test]
fn generate_planted_edges_are_distinct() {
    let d = dir("planted-distinct");
    for (nodes, comms, degree) in [("300", "7", "12"), ("20", "2", "100")] {
        let args = [
            "--nodes",
            nodes,
            "--communities",
            comms,
            "--degree",
            degree,
            "--seed",
            "3",
        ];
        let (e, t) = (d.join("x.el"), d.join("x.truth"));
        let mut full = vec!["generate", "planted"];
        full.extend_from_slice(&args);
        full.extend(["-o", p(&e), "--truth", p(&t)]);
        let o = trident(&full);
        let report = String::from_utf8_lossy(&o.stdout).into_owned();
        let err = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() && nodes == "20" {
            // 1000 distinct edges do not fit 20 nodes (190 at most): a refusal is right too.
            assert!(err.contains("error"), "planted {args:?}: {err}");
            continue;
        }
        assert!(o.status.success(), "planted {args:?}: {err}");
        let (edges, _) = read_generated(&e);
        let distinct: BTreeSet<(u64, u64)> =
            edges.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
        assert_eq!(
            distinct.len(),
            edges.len(),
            "planted {args:?}: {} edge lines, {} distinct\n{report}",
            edges.len(),
            distinct.len()
        );
        assert_eq!(num_before(&report, "edges"), Some(edges.len() as u64));
    }
    std::fs::remove_dir_all(&d).ok();
}

//! `triangles`: the total and the `--per-vertex` file against a brute force over the edge list.

use super::*;

/// Rows of a `--per-vertex` file: label -> (degree, triangles, clustering). Comment lines
/// are skipped; a header row (its first line otherwise) names the columns `node`, `degree`,
/// `triangles`, `clustering` in any order (without one, that order); a label appearing
/// twice or a row that does not parse fails.
fn read_per_vertex(path: &Path) -> BTreeMap<String, (u64, u64, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = BTreeMap::new();
    let mut cols = [0, 1, 2, 3];
    let mut first = true;
    for l in text.lines() {
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = l.split('\t').map(str::trim).collect();
        if std::mem::take(&mut first) && f.iter().any(|x| x.eq_ignore_ascii_case("triangles")) {
            for (c, name) in cols
                .iter_mut()
                .zip(["node", "degree", "triangles", "clustering"])
            {
                *c = f
                    .iter()
                    .position(|x| x.eq_ignore_ascii_case(name))
                    .unwrap_or_else(|| panic!("{}: no {name} column in {l:?}", path.display()));
            }
            continue;
        }
        let get = |i: usize| -> &str {
            f.get(cols[i])
                .copied()
                .unwrap_or_else(|| panic!("{}: short line {l:?}", path.display()))
        };
        let num = |i: usize| -> f64 {
            get(i)
                .parse()
                .unwrap_or_else(|_| panic!("{}: bad line {l:?}", path.display()))
        };
        let (d, t, c) = (num(1), num(2), num(3));
        assert!(
            d.fract() == 0.0 && t.fract() == 0.0,
            "{}: {l:?}",
            path.display()
        );
        let (d, t) = (d as u64, t as u64);
        assert!(
            rows.insert(get(0).to_string(), (d, t, c)).is_none(),
            "{}: node {} listed twice",
            path.display(),
            get(0)
        );
    }
    rows
}

/// Runs `triangles` on `graph` with `extra` args, checks the reported total and edge count
/// and the per-vertex file against the brute force over `g`. Nodes of the file absent
/// from `g` must have degree 0 and no triangles.
pub(super) fn check_triangles(graph: &Path, g: &Simple, backend: &str, extra: &[&str], out: &Path) {
    let per = g.triangles();
    let total: u64 = per.values().sum::<u64>() / 3;
    let mut args = vec![
        "triangles",
        p(graph),
        "--backend",
        backend,
        "--per-vertex",
        p(out),
    ];
    args.extend_from_slice(extra);
    let what = format!(
        "triangles {} --backend {backend} {extra:?}",
        graph.display()
    );
    let o = Command::new(BIN).args(&args).output().expect("run trident");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{what} failed: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        field_u64(&stdout, "triangles:"),
        Some(total),
        "{what}: total\n{stdout}"
    );
    assert_eq!(
        num_before(&stdout, "edges"),
        Some(g.edges() as u64),
        "{what}: edges\n{stdout}"
    );
    let rows = read_per_vertex(out);
    for (v, &t) in &per {
        let d = g.adj[v].len() as u64;
        let Some(&(gd, gt, gc)) = rows.get(v) else {
            panic!("{what}: node {v} missing from the per-vertex file");
        };
        assert_eq!((gd, gt), (d, t), "{what}: node {v} (degree, triangles)");
        let c = if d < 2 {
            0.0
        } else {
            2.0 * t as f64 / (d as f64 * (d as f64 - 1.0))
        };
        assert!(
            (gc - c).abs() <= 1e-9 + 1e-6 * c,
            "{what}: node {v} clustering {gc} vs {c}"
        );
    }
    for (v, &(d, t, _)) in &rows {
        if !per.contains_key(v) {
            assert_eq!((d, t), (0, 0), "{what}: node {v} is not in the input");
        }
    }
    std::fs::remove_file(out).ok();
}

/// A random multigraph with duplicates, reversed edges, self-loops, a hub and a clique,
/// labelled by sparse ids (so a label mix-up cannot pass).
fn random_graph_text(n: u64, m: usize, seed: u64, clique: u64) -> String {
    let mut r = testing::xorshift(seed);
    let id = |u: u64| 1000 + 7 * u;
    let mut s = String::from("# random test graph\n");
    for _ in 0..m {
        let (u, v) = (r() % n, r() % n);
        s.push_str(&format!("{}\t{}\n", id(u), id(v)));
    }
    for v in 1..n / 2 {
        s.push_str(&format!("{} {}\n", id(0), id(v))); // hub
    }
    for a in 10..10 + clique {
        for b in 10..10 + clique {
            s.push_str(&format!("{} {}\n", id(a), id(b))); // clique, both ways, loops
        }
    }
    s.push_str(&format!("{} {}\n", id(5), id(6))); // a duplicate pair
    s.push_str(&format!("{} {}\n", id(6), id(5)));
    s.push_str(&format!("{} {}\n", id(5), id(6)));
    s
}

#[test]
fn triangles_total_and_per_vertex_match_brute_force() {
    let d = dir("tri");
    let text = random_graph_text(300, 2500, 0x5eed_0017, 12);
    let path = d.join("g.txt");
    std::fs::write(&path, &text).unwrap();
    let g = parse_edge_list(&text);
    let out = d.join("per.tsv");
    for b in backends() {
        for alg in ["auto", "merge", "binary-search", "hash"] {
            check_triangles(&path, &g, b, &["--algorithm", alg], &out);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Every input node appears in the per-vertex file, one whose only edge is a self-loop too
/// (degree 0, no triangles), as issue 23 §1 asks of `cluster`.
// WRONG at af1fc96, hence ignored until the readers keep such nodes: for the edge list
// "5 5 / 1 2 / 2 3 / 3 1", `triangles G --per-vertex F` reports "3 nodes" and F lists
// nodes 1, 2, 3 only; node 5 is dropped without a word.
#[test]
fn triangles_per_vertex_keeps_a_node_with_only_a_self_loop() {
    let d = dir("tri-loop");
    let text = "5 5\n1 2\n2 3\n3 1\n";
    let path = d.join("g.txt");
    std::fs::write(&path, text).unwrap();
    let g = parse_edge_list(text);
    assert!(g.adj.contains_key("5"));
    let out = d.join("per.tsv");
    for b in backends() {
        check_triangles(&path, &g, b, &[], &out);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Every OpenCL triangle kernel the planner can launch, through the CLI. A 72-clique gives
/// rows of out-degree above 64 (`tc_hash_block`'s bin). At 733a064 the bitmap `tc_hash`
/// (out-degree above 2048) and the `tc_search`/`tc_search_row` layouts of
/// `--algorithm binary-search` are forced through `--plan-limits` and `--search-kernel` (the
/// CPU takes and ignores them: it must count the same).
#[test]
fn triangles_per_vertex_through_every_gpu_kernel() {
    let d = dir("tri-kernels");
    let text = random_graph_text(300, 2500, 0x5eed_0018, 72);
    let path = d.join("g.txt");
    std::fs::write(&path, &text).unwrap();
    let g = parse_edge_list(&text);
    let out = d.join("per.tsv");
    let cases: [(&str, &[&str]); 9] = [
        ("merge", &[]),
        ("hash", &[]),
        ("hash", &["--plan-limits", "0,0"]),
        ("hash", &["--plan-limits", "4,16,1"]),
        ("binary-search", &[]),
        ("binary-search", &["--search-kernel", "edge"]),
        ("binary-search", &["--search-kernel", "row"]),
        ("binary-search", &["--search-kernel", "flat-global"]),
        ("binary-search", &["--plan-limits", "64,2048,1"]),
    ];
    for b in backends() {
        for (alg, plan) in cases {
            let mut extra = vec!["--algorithm", alg];
            extra.extend_from_slice(plan);
            check_triangles(&path, &g, b, &extra, &out);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Shared graphs whose counts graphs.tsv gives (computed with networkx): the total and
/// edge count against that table, the per-vertex file against the brute force here.
#[test]
fn triangles_of_real_graphs_match_the_published_counts() {
    let Some(data) = testing::data_dir_or_skip() else {
        return;
    };
    let table = std::fs::read_to_string(data.join("graphs.tsv")).unwrap();
    let known = |file: &str| -> (u64, u64) {
        let l = table
            .lines()
            .find(|l| l.split('\t').next() == Some(file))
            .unwrap_or_else(|| panic!("{file} not in graphs.tsv"));
        let f: Vec<&str> = l.split('\t').collect();
        (f[2].parse().unwrap(), f[3].parse().unwrap())
    };
    let d = dir("real");
    let out = d.join("per.tsv");
    // Edge lists: labels are the file's ids (collins: protein names, weighted); lfr keeps
    // 104 self-loops.
    for file in [
        "graphs/lfr_n1000_mu0.1_seed10.edges",
        "graphs/inf-power.edges",
        "ppi/collins2007.txt",
    ] {
        let path = data.join(file);
        let g = parse_edge_list(&std::fs::read_to_string(&path).unwrap());
        let (edges, tri) = known(file);
        assert_eq!(g.edges() as u64, edges, "{file}: the brute force's reading");
        assert_eq!(
            g.triangles().values().sum::<u64>(),
            3 * tri,
            "{file}: brute force"
        );
        for b in backends() {
            check_triangles(&path, &g, b, &[], &out);
        }
    }
    // Matrix Market: totals and edge counts only (labels: see the 1-based test below).
    for file in [
        "graphs/karate.mtx",
        "graphs/chesapeake.mtx",
        "graphs/jagmesh7.mtx",
        "graphs/delaunay_n10.mtx",
    ] {
        let (edges, tri) = known(file);
        for b in backends() {
            let stdout = ok(&["triangles", p(&data.join(file)), "--backend", b]);
            assert_eq!(
                field_u64(&stdout, "triangles:"),
                Some(tri),
                "{file} {b}\n{stdout}"
            );
            assert_eq!(
                num_before(&stdout, "edges"),
                Some(edges),
                "{file} {b}\n{stdout}"
            );
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `--per-vertex` on a Matrix Market graph names nodes as the file does (from 1) and lists
/// declared nodes without edges.
// WRONG at 41a3d58 (issue 23 §4), hence ignored until the fix is merged: `triangles G.mtx
// --per-vertex F` numbers the nodes from 0 though the file numbers them from 1 (a 4-node
// file with edges 2-1, 3-2, 3-1 lists nodes 0, 1, 2 with one triangle each and node 3 with
// none; expected 1, 2, 3 and an isolated 4).
#[test]
fn triangles_per_vertex_of_matrix_market_uses_the_files_numbers() {
    let d = dir("mtx-labels");
    let mut r = testing::xorshift(0x00c0_ffee);
    let n = 60;
    let mut entries = BTreeSet::new();
    while entries.len() < 400 {
        let (i, j) = (r() % 58 + 1, r() % 58 + 1); // nodes 59 and 60 stay isolated
        if i != j {
            entries.insert((i.max(j), i.min(j)));
        }
    }
    let mut text = format!(
        "%%MatrixMarket matrix coordinate pattern symmetric\n{n} {n} {}\n",
        entries.len()
    );
    for (i, j) in &entries {
        text.push_str(&format!("{i} {j}\n"));
    }
    let path = d.join("g.mtx");
    std::fs::write(&path, &text).unwrap();
    let (_, _, e) = parse_mtx(&text);
    let mut g = Simple::default();
    for v in 1..=n {
        g.node(&v.to_string());
    }
    for (i, j, _) in e {
        g.edge(&(i + 1).to_string(), &(j + 1).to_string());
    }
    let out = d.join("per.tsv");
    for b in backends() {
        check_triangles(&path, &g, b, &[], &out);
        // Also every declared node is listed.
        ok(&[
            "triangles",
            p(&path),
            "--backend",
            b,
            "--per-vertex",
            p(&out),
        ]);
        let rows = read_per_vertex(&out);
        assert_eq!(rows.len(), n as usize, "{b}: rows {:?}", rows.keys());
    }
    std::fs::remove_dir_all(&d).ok();
}

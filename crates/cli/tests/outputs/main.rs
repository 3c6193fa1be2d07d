//! The output files of `triangles`, `matmul`, `spmv` and `generate`, compared with answers
//! computed here, independently of the library: brute-force triangle counts from the edge
//! list, a naive f64 triple loop for the product, row sums of the Matrix Market text for
//! y = A·1, and the generators' files parsed and checked against their own reports. Every
//! case runs on the CPU and on OpenCL (PoCL here); with no OpenCL device the OpenCL half
//! skips through `trident_core::testing::skip`, so `REQUIRE_GPU=1` makes it fail.
//!
//! Assertions are on content (numbers, node sets, shapes, dtypes), not on layout: comment
//! lines, a header row and column order of the reports may change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use trident_core::testing::{self, Needs};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-outputs-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn trident(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run trident")
}

/// Runs `trident args`, requires success, returns stdout.
fn ok(args: &[&str]) -> String {
    let o = trident(args);
    assert!(
        o.status.success(),
        "trident {args:?} failed ({}):\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The backends to run: the CPU, and OpenCL when a device opens (else a skip, which
/// `REQUIRE_GPU=1` turns into a failure; a start-up failure other than "no device" fails).
fn backends() -> Vec<&'static str> {
    #[cfg(feature = "opencl")]
    {
        static OPENCL: OnceLock<Result<(), String>> = OnceLock::new();
        let opened = OPENCL.get_or_init(|| match trident_opencl::OpenCl::new() {
            Ok(_) => Ok(()),
            Err(e) if e.is_no_device() => Err(testing::Report(&e).to_string()),
            Err(e) => panic!("OpenCL failed to start: {}", testing::Report(&e)),
        });
        match opened {
            Ok(()) => vec!["cpu", "opencl"],
            Err(why) => {
                testing::skip(Needs::Gpu, format!("the CLI's OpenCL outputs: {why}"));
                vec!["cpu"]
            }
        }
    }
    #[cfg(not(feature = "opencl"))]
    {
        testing::skip(Needs::Gpu, "trident built without the opencl feature");
        vec!["cpu"]
    }
}

/// The integer right before ` word` (first such), e.g. `num_before("9 nodes", "nodes")`.
fn num_before(text: &str, word: &str) -> Option<u64> {
    let pat = format!(" {word}");
    let mut from = 0;
    while let Some(i) = text[from..].find(&pat) {
        let at = from + i;
        let head = &text[..at];
        let digits: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !digits.is_empty() {
            return digits.parse().ok();
        }
        from = at + pat.len();
    }
    None
}

/// The first integer after `key` on the first line starting with `key`.
fn field_u64(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.trim_start().starts_with(key))?;
    let rest = &line.trim_start()[key.len()..];
    let digits: String = rest
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

// ---------------------------------------------------------------------------------------
// Independent references
// ---------------------------------------------------------------------------------------

/// A simple undirected graph keyed by the labels of the file: self-loops dropped,
/// duplicate and reversed edges merged.
#[derive(Default)]
struct Simple {
    adj: BTreeMap<String, BTreeSet<String>>,
}

impl Simple {
    fn node(&mut self, a: &str) {
        self.adj.entry(a.to_string()).or_default();
    }
    fn edge(&mut self, a: &str, b: &str) {
        self.node(a);
        self.node(b);
        if a != b {
            self.adj.get_mut(a).unwrap().insert(b.to_string());
            self.adj.get_mut(b).unwrap().insert(a.to_string());
        }
    }
    fn edges(&self) -> usize {
        self.adj.values().map(BTreeSet::len).sum::<usize>() / 2
    }
    /// Per-node triangle counts by brute force over neighbour pairs.
    fn triangles(&self) -> BTreeMap<String, u64> {
        self.adj
            .iter()
            .map(|(v, nb)| {
                let nb: Vec<&String> = nb.iter().collect();
                let mut t = 0;
                for i in 0..nb.len() {
                    let ni = &self.adj[nb[i]];
                    for w in &nb[i + 1..] {
                        if ni.contains(*w) {
                            t += 1;
                        }
                    }
                }
                (v.clone(), t)
            })
            .collect()
    }
}

/// A whitespace-separated edge list (`#`/`%` comments, optional weight column).
fn parse_edge_list(text: &str) -> Simple {
    let mut g = Simple::default();
    for l in text.lines() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with('%') {
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        g.edge(f[0], f[1]);
    }
    g
}

/// A Matrix Market file, read here: (rows, cols, entries with 0-based indices), symmetric
/// and skew-symmetric storage expanded, pattern entries 1, `array` files column-major.
fn parse_mtx(text: &str) -> (usize, usize, Vec<(usize, usize, f64)>) {
    let mut lines = text.lines();
    let banner = lines.next().unwrap().to_ascii_lowercase();
    let b: Vec<&str> = banner.split_whitespace().collect();
    assert_eq!(b[0], "%%matrixmarket");
    let (format, field, sym) = (b[2], b[3], b[4]);
    let mut data = lines.filter(|l| !l.trim().is_empty() && !l.starts_with('%'));
    let size: Vec<usize> = data
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (r, c) = (size[0], size[1]);
    let mut e = Vec::new();
    let mut push = |i: usize, j: usize, v: f64| {
        e.push((i, j, v));
        if i != j {
            match sym {
                "symmetric" => e.push((j, i, v)),
                "skew-symmetric" => e.push((j, i, -v)),
                _ => {}
            }
        }
    };
    if format == "array" {
        let vals: Vec<f64> = data.map(|l| l.trim().parse().unwrap()).collect();
        let mut k = 0;
        for j in 0..c {
            let start = match sym {
                "general" => 0,
                "symmetric" => j,
                _ => j + 1,
            };
            for i in start..r {
                push(i, j, vals[k]);
                k += 1;
            }
        }
        assert_eq!(k, vals.len());
    } else {
        for l in data {
            let f: Vec<&str> = l.split_whitespace().collect();
            let i: usize = f[0].parse().unwrap();
            let j: usize = f[1].parse().unwrap();
            let v = if field == "pattern" {
                1.0
            } else {
                f[2].parse().unwrap()
            };
            push(i - 1, j - 1, v);
        }
    }
    (r, c, e)
}

// ---------------------------------------------------------------------------------------
// .npy by hand
// ---------------------------------------------------------------------------------------

/// Writes a 2-D little-endian C-order `.npy` (f32 when `single`).
fn write_npy(path: &Path, rows: usize, cols: usize, data: &[f64], single: bool) {
    assert_eq!(data.len(), rows * cols);
    let descr = if single { "<f4" } else { "<f8" };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    for &v in data {
        if single {
            b.extend_from_slice(&(v as f32).to_le_bytes());
        } else {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, b).unwrap();
}

/// Reads a `.npy` of `<f4`/`<f8`: (descr, shape, values in C order as f64).
fn read_npy(path: &Path) -> (String, Vec<usize>, Vec<f64>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY", "{}: not a .npy", path.display());
    let (hlen, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        _ => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
    };
    let header = std::str::from_utf8(&b[start..start + hlen]).unwrap();
    let value_of = |key: &str| -> &str {
        let i = header.find(&format!("'{key}'")).unwrap() + key.len() + 2;
        header[i..].trim_start_matches([':', ' '])
    };
    let descr = value_of("descr");
    let descr = descr[1..descr[1..].find('\'').unwrap() + 1].to_string();
    let fortran = value_of("fortran_order").starts_with("True");
    let shape_text = value_of("shape");
    let shape: Vec<usize> = shape_text[1..shape_text.find(')').unwrap()]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let body = &b[start + hlen..];
    let vals: Vec<f64> = match descr.as_str() {
        "<f8" => body
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "<f4" => body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        d => panic!("{}: unexpected dtype {d}", path.display()),
    };
    assert_eq!(vals.len(), shape.iter().product::<usize>(), "{header}");
    let vals = if fortran && shape.len() == 2 {
        let (r, c) = (shape[0], shape[1]);
        (0..r * c).map(|k| vals[(k % c) * r + k / c]).collect()
    } else {
        vals
    };
    (descr, shape, vals)
}

// ---------------------------------------------------------------------------------------
// triangles
// ---------------------------------------------------------------------------------------

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
fn check_triangles(graph: &Path, g: &Simple, backend: &str, extra: &[&str], out: &Path) {
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

// ---------------------------------------------------------------------------------------
// matmul
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// spmv
// ---------------------------------------------------------------------------------------

/// Runs `spmv --output` on `path` and compares y with the row sums (x = 1) of `entries`,
/// within 1000 ε Σ_j |a_ij| per row. On OpenCL it runs again in 3 slot passes (the
/// accumulating launches), through `--passes 3`.
fn check_spmv(
    path: &Path,
    (rows, entries): (usize, &[(usize, usize, f64)]),
    backend: &str,
    out: &Path,
) {
    check_spmv_passes(path, (rows, entries), backend, None, out);
    if backend == "opencl" {
        check_spmv_passes(path, (rows, entries), backend, Some("3"), out);
    }
}

fn check_spmv_passes(
    path: &Path,
    (rows, entries): (usize, &[(usize, usize, f64)]),
    backend: &str,
    passes: Option<&str>,
    out: &Path,
) {
    let mut want = vec![0.0; rows];
    let mut mag = vec![0.0; rows];
    for &(i, _, v) in entries {
        want[i] += v;
        mag[i] += f64::abs(v);
    }
    for (prec, dtype, eps) in [
        ("f32", "<f4", f32::EPSILON as f64),
        ("f64", "<f8", f64::EPSILON),
    ] {
        std::fs::remove_file(out).ok();
        let what = format!(
            "spmv {} --backend {backend} --precision {prec} --passes {passes:?}",
            path.display()
        );
        let o = Command::new(BIN)
            .args([
                "spmv",
                p(path),
                "--backend",
                backend,
                "--precision",
                prec,
                "--repeat",
                "1",
                "--output",
                p(out),
            ])
            .args(passes.map(|n| ["--passes", n]).into_iter().flatten())
            .output()
            .expect("run trident");
        assert!(
            o.status.success(),
            "{what} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let (descr, shape, y) = read_npy(out);
        assert!(
            shape == [rows] || shape == [rows, 1],
            "{what}: shape {shape:?}, {rows} rows"
        );
        assert_eq!(descr, dtype, "{what}: dtype");
        for i in 0..rows {
            assert!(
                (y[i] - want[i]).abs() <= 1000.0 * eps * mag[i],
                "{what}: y[{i}] = {} but the row sum of the file is {}",
                y[i],
                want[i]
            );
        }
    }
}

/// Writes a coordinate Matrix Market file from 1-based `(i, j, v)`.
fn mtx_text(header: &str, r: usize, c: usize, e: &[(usize, usize, f64)]) -> String {
    let mut s = format!(
        "%%MatrixMarket matrix coordinate {header}\n% test\n{r} {c} {}\n",
        e.len()
    );
    for (i, j, v) in e {
        if header.starts_with("pattern") {
            s.push_str(&format!("{i} {j}\n"));
        } else if header.starts_with("integer") {
            s.push_str(&format!("{i} {j} {}\n", *v as i64));
        } else {
            s.push_str(&format!("{i} {j} {v:e}\n"));
        }
    }
    s
}

#[test]
fn spmv_output_matches_the_row_sums_of_the_file() {
    let d = dir("spmv");
    let mut r = testing::xorshift(0x5b_0001);
    let mut u = testing::unit_stream(0x5b_0002);
    let mut files: Vec<(String, String)> = Vec::new();
    // General 64x64: ~10 % dense, one long row, one empty row, mixed signs and scales.
    let mut e = BTreeMap::new();
    for _ in 0..400 {
        let (i, j) = ((r() % 64) as usize + 1, (r() % 64) as usize + 1);
        if i != 7 {
            e.insert((i, j), u() * 10f64.powi((r() % 5) as i32 - 2));
        }
    }
    for j in 1..=64 {
        e.insert((3, j), u());
    }
    let general: Vec<(usize, usize, f64)> = e.iter().map(|(&(i, j), &v)| (i, j, v)).collect();
    files.push((
        "general.mtx".into(),
        mtx_text("real general", 64, 64, &general),
    ));
    // Not square: 50 x 70.
    let wide: Vec<(usize, usize, f64)> = (0..300)
        .map(|_| (((r() % 50) as usize + 1, (r() % 70) as usize + 1), u()))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .map(|((i, j), v)| (i, j, v))
        .collect();
    files.push(("wide.mtx".into(), mtx_text("real general", 50, 70, &wide)));
    // Symmetric and skew-symmetric: the lower triangle stored.
    let lower: Vec<(usize, usize, f64)> = general
        .iter()
        .filter(|&&(i, j, _)| i >= j)
        .copied()
        .collect();
    files.push(("sym.mtx".into(), mtx_text("real symmetric", 64, 64, &lower)));
    let strict: Vec<_> = lower.iter().filter(|&&(i, j, _)| i > j).copied().collect();
    files.push((
        "skew.mtx".into(),
        mtx_text("real skew-symmetric", 64, 64, &strict),
    ));
    let ints: Vec<_> = lower
        .iter()
        .map(|&(i, j, v)| (i, j, (v * 100.0).round()))
        .collect();
    files.push((
        "int.mtx".into(),
        mtx_text("integer symmetric", 64, 64, &ints),
    ));
    files.push((
        "pattern.mtx".into(),
        mtx_text("pattern general", 64, 64, &general),
    ));
    // Duplicate entries (summed, as Matrix Market readers do) and empty trailing rows.
    files.push((
        "dup.mtx".into(),
        "%%MatrixMarket matrix coordinate real general\n5 4 4\n1 1 1.0\n1 1 2.0\n\
         2 3 4.0\n3 2 1.5\n"
            .into(),
    ));
    // A dense array, column-major (a row-major reading transposes A: row sums become
    // column sums).
    let mut arr = String::from("%%MatrixMarket matrix array real general\n20 30\n");
    for _ in 0..20 * 30 {
        arr.push_str(&format!("{:e}\n", u()));
    }
    files.push(("array.mtx".into(), arr));
    // Symmetric and skew-symmetric arrays: the lower triangle, column by column.
    for (sym, first) in [("symmetric", 0), ("skew-symmetric", 1)] {
        let mut arr = format!("%%MatrixMarket matrix array real {sym}\n12 12\n");
        for j in 0..12 {
            for _ in j + first..12 {
                arr.push_str(&format!("{:e}\n", u()));
            }
        }
        files.push((format!("array-{sym}.mtx"), arr));
    }
    let out = d.join("y.npy");
    for (name, text) in &files {
        let path = d.join(name);
        std::fs::write(&path, text).unwrap();
        let (rows, _, entries) = parse_mtx(text);
        for b in backends() {
            check_spmv(&path, (rows, &entries), b, &out);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// An edge list is read as its graph's adjacency matrix (y = A·1: the degrees, or the sums
/// of the edge weights), a `.npy` as a dense matrix. The ids 0..n appear in increasing
/// order (a path first), so the rows of y are the file's node numbers whichever way the
/// reader numbers nodes.
#[test]
fn spmv_of_edge_lists_and_npy_matches_the_row_sums() {
    let d = dir("spmv-el");
    let mut r = testing::xorshift(0x5b_0003);
    let mut u = testing::unit_stream(0x5b_0004);
    let n = 200usize;
    let mut edges = BTreeMap::new();
    for v in 1..n {
        edges.insert((v - 1, v), 1.0 + u());
    }
    for _ in 0..800 {
        let (a, b) = ((r() % n as u64) as usize, (r() % n as u64) as usize);
        if a != b && !edges.contains_key(&(b, a)) {
            edges.insert((a, b), 1.0 + u());
        }
    }
    let out = d.join("y.npy");
    for weighted in [false, true] {
        let mut text = String::from("# test graph\n");
        let mut entries = Vec::new();
        for (&(a, b), &w) in &edges {
            let w = if weighted { w } else { 1.0 };
            if weighted {
                text.push_str(&format!("{a}\t{b}\t{w}\n"));
            } else {
                text.push_str(&format!("{a}\t{b}\n"));
            }
            entries.push((a, b, w));
            entries.push((b, a, w));
        }
        let path = d.join(if weighted { "w.txt" } else { "u.txt" });
        std::fs::write(&path, text).unwrap();
        for b in backends() {
            check_spmv(&path, (n, &entries), b, &out);
        }
    }
    // A dense .npy, with zeros.
    let (rows, cols) = (30, 41);
    let vals: Vec<f64> = (0..rows * cols)
        .map(|k| if k % 7 == 3 { 0.0 } else { u() * 8.0 })
        .collect();
    let path = d.join("a.npy");
    write_npy(&path, rows, cols, &vals, false);
    let entries: Vec<(usize, usize, f64)> = (0..rows * cols)
        .map(|k| (k / cols, k % cols, vals[k]))
        .collect();
    for b in backends() {
        check_spmv(&path, (rows, &entries), b, &out);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// A real Matrix Market graph (karate, pattern symmetric): y = A·1 is the degree.
#[test]
fn spmv_of_a_real_matrix_matches_its_row_sums() {
    let Some(data) = testing::data_dir_or_skip() else {
        return;
    };
    let d = dir("spmv-real");
    let out = d.join("y.npy");
    for file in [
        "graphs/karate.mtx",
        "matrices/west0067.mtx",
        "matrices/lp_afiro.mtx",
    ] {
        let path = data.join(file);
        let (rows, _, entries) = parse_mtx(&std::fs::read_to_string(&path).unwrap());
        for b in backends() {
            check_spmv(&path, (rows, &entries), b, &out);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

// ---------------------------------------------------------------------------------------
// generate
// ---------------------------------------------------------------------------------------

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

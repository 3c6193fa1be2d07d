//! Triangle-counting conformance: exact counts against independent references.
//!
//! * every graph of `shared/data/graphs.tsv` (self-loops, CRLF lines, both edge directions,
//!   Matrix Market and edge lists) gives exactly the listed count, with every algorithm;
//! * random graphs of every shape (empty, one edge, cliques, stars, dense, sparse, and
//!   graphs with a few hubs) agree with [`reference_counts`], the plain node iterator on the
//!   undirected graph, in the total and per node, with every algorithm;
//! * oriented graphs with rows far longer than a GPU work-group and its row cache (an
//!   orientation by id, which any backend must count exactly: each triangle once);
//! * empty graphs and a single node count zero.
//!
//! Per-node outputs are compared in full; totals must also equal a third of their sum.

use proptest::prelude::*;

use super::{run_proptest, Check};
use crate::error::Result;
use crate::graph::Graph;
use crate::triangles::{
    reference_counts, OrientedGraph, TriangleAlgorithm, TriangleCount, TriangleCounts,
    TriangleOptions,
};

/// The triangle checks under every binary-search kernel (`TRIDENT_TC_SEARCH`: `edge`, `row`,
/// `flat`, `flat-global`, read when a graph is counted; the default one is also covered by
/// [`checks`]) and under other plan limits (`TRIDENT_TC_BINS`, read when a graph is uploaded
/// and counted): `64,2048,1` makes one work-group of each row-list kernel and of the
/// `tc_search_flat` kernels loop over all its rows or edge chunks (so the shared tables and
/// row caches are reused), `0,0,2` sends every row to the global-bitmap `tc_hash`, `8,100,3`
/// moves rows between the bins. Any kernel and any limits give the same counts. It sets
/// process environment variables: each GPU backend runs it as a test binary of its own.
pub fn under_every_search_kernel_and_plan_limit<B: TriangleCount>(b: &B) {
    use crate::triangles::plan::{SearchKernel, BINS_ENV, SEARCH_ENV};
    let checks = checks::<B>();
    // Every kernel under G = 1, and each under one other setting (keeping the test short).
    let runs: [(&str, &[SearchKernel]); 3] = [
        ("64,2048,1", &SearchKernel::ALL),
        ("0,0,2", &[SearchKernel::Edge, SearchKernel::Flat]),
        ("8,100,3", &[SearchKernel::Row, SearchKernel::FlatGlobal]),
    ];
    for (limits, searches) in runs {
        std::env::set_var(BINS_ENV, limits);
        for &search in searches {
            std::env::set_var(SEARCH_ENV, search.name());
            for name in [
                "triangles_long_rows",
                "triangles_random_vs_brute_force",
                "triangles_shared_graphs",
            ] {
                eprintln!("{BINS_ENV}={limits} {SEARCH_ENV}={}: {name}", search.name());
                super::run_named(b, &checks, name);
            }
        }
    }
    std::env::remove_var(BINS_ENV);
    std::env::remove_var(SEARCH_ENV);
}

/// The triangle-counting checks, in table order.
pub fn checks<B: TriangleCount>() -> Vec<Check<B>> {
    vec![
        Check {
            name: "triangles_shared_graphs",
            run: shared_graphs::<B>,
        },
        Check {
            name: "triangles_shared_graphs_every_algorithm",
            run: shared_graphs_every_algorithm::<B>,
        },
        Check {
            name: "triangles_random_vs_brute_force",
            run: random_vs_brute_force::<B>,
        },
        Check {
            name: "triangles_long_rows",
            run: long_rows::<B>,
        },
        Check {
            name: "triangles_empty_and_tiny",
            run: empty_and_tiny::<B>,
        },
    ]
}

/// Instantiates the triangle checks as `#[test]`s: `triangles_conformance_tests!(Ty, make)`.
#[macro_export]
macro_rules! triangles_conformance_tests {
    ($ty:ty, $make:expr) => {
        $crate::conformance_tests!(
            $ty,
            $make,
            triangles::checks;
            triangles_shared_graphs,
            triangles_shared_graphs_every_algorithm,
            triangles_random_vs_brute_force,
            triangles_long_rows,
            triangles_empty_and_tiny
        );
    };
}

/// Every algorithm, `Auto` first.
const ALL: [TriangleAlgorithm; 4] = [
    TriangleAlgorithm::Auto,
    TriangleAlgorithm::Merge,
    TriangleAlgorithm::BinarySearch,
    TriangleAlgorithm::Hash,
];

/// Graphs of `graphs.tsv` above this many edges are skipped (none today: the largest has
/// 97,097), to keep CI short should bigger ones be added.
const MAX_SHARED_EDGES: usize = 3_000_000;

/// Per-node counts are checked against the reference on graphs up to this many edges (the
/// reference is quadratic in the degrees); larger ones are checked by their sum.
const MAX_PER_NODE_REFERENCE_EDGES: usize = 20_000;

fn opts(algorithm: TriangleAlgorithm, per_node: bool) -> TriangleOptions {
    TriangleOptions {
        per_node,
        algorithm,
    }
}

/// Compares a backend's counts with the expected ones (per node when both have them).
fn compare(
    what: &str,
    got: &TriangleCounts,
    total: u64,
    per: Option<&[u64]>,
) -> Result<(), String> {
    if got.total != total {
        return Err(format!("{what}: {} triangles, expected {total}", got.total));
    }
    if let Some(p) = &got.per_node {
        let sum: u64 = p.iter().sum();
        if sum != 3 * total {
            return Err(format!(
                "{what}: per-node counts sum to {sum}, expected 3 x {total}"
            ));
        }
        if let Some(e) = per {
            if p.len() != e.len() {
                return Err(format!(
                    "{what}: {} per-node counts for {} nodes",
                    p.len(),
                    e.len()
                ));
            }
            if let Some(v) = (0..e.len()).find(|&v| p[v] != e[v]) {
                return Err(format!(
                    "{what}: node {v} is in {} triangles, expected {}",
                    p[v], e[v]
                ));
            }
        }
    }
    Ok(())
}

/// `(file, nodes, edges, triangles)` of every graph in `graphs.tsv`, or `None` after a skip.
/// `(file, nodes, edges, triangles)` of one line of `graphs.tsv`.
type Listed = (String, usize, usize, u64);

fn shared_list() -> Result<Option<(std::path::PathBuf, Vec<Listed>)>, String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(dir.join("graphs.tsv")).map_err(|e| e.to_string())?;
    let mut list = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.starts_with("file\t") || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let num = |i: usize| -> Result<u64, String> {
            f.get(i)
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| format!("graphs.tsv: bad line {line:?}"))
        };
        list.push((
            f[0].to_string(),
            num(1)? as usize,
            num(2)? as usize,
            num(3)?,
        ));
    }
    if list.len() < 20 {
        return Err(format!("graphs.tsv lists only {} graphs", list.len()));
    }
    Ok(Some((dir, list)))
}

fn load(dir: &std::path::Path, file: &str, nodes: usize, edges: usize) -> Result<Graph, String> {
    let g = crate::io::read_graph_auto(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    if g.num_nodes() != nodes || g.num_edges() != edges {
        return Err(format!(
            "{file}: read {} nodes and {} edges, graphs.tsv says {nodes} and {edges}",
            g.num_nodes(),
            g.num_edges()
        ));
    }
    Ok(g)
}

fn shared_graphs<B: TriangleCount>(b: &B) -> Result<(), String> {
    let Some((dir, list)) = shared_list()? else {
        return Ok(());
    };
    for (file, nodes, edges, tri) in list {
        if edges > MAX_SHARED_EDGES {
            eprintln!("skipping {file}: {edges} edges");
            continue;
        }
        let g = load(&dir, &file, nodes, edges)?;
        let reference = (edges <= MAX_PER_NODE_REFERENCE_EDGES).then(|| reference_counts(&g));
        if let Some(r) = &reference {
            if r.total != tri {
                return Err(format!(
                    "{file}: the reference counts {}, expected {tri}",
                    r.total
                ));
            }
        }
        let per = reference.as_ref().and_then(|r| r.per_node.as_deref());
        let got = b
            .count_triangles(&g, &opts(TriangleAlgorithm::Auto, false))
            .map_err(|e| format!("{file}: {e}"))?;
        compare(&file, &got, tri, None)?;
        if got.per_node.is_some() {
            return Err(format!(
                "{file}: per-node counts returned without being asked"
            ));
        }
        let got = b
            .count_triangles(&g, &opts(TriangleAlgorithm::Auto, true))
            .map_err(|e| format!("{file}: {e}"))?;
        if got.per_node.is_none() {
            return Err(format!("{file}: per-node counts asked for, none returned"));
        }
        compare(&format!("{file} (per node)"), &got, tri, per)?;
    }
    Ok(())
}

fn shared_graphs_every_algorithm<B: TriangleCount>(b: &B) -> Result<(), String> {
    let Some((dir, list)) = shared_list()? else {
        return Ok(());
    };
    for (file, nodes, edges, tri) in list {
        if edges > MAX_SHARED_EDGES {
            continue;
        }
        let g = load(&dir, &file, nodes, edges)?;
        let d = b
            .upload_oriented(OrientedGraph::from_graph(&g).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{file}: {e}"))?;
        for alg in TriangleAlgorithm::FORCED {
            let per_node = edges <= MAX_PER_NODE_REFERENCE_EDGES;
            let got = b
                .count_oriented(&d, &opts(alg, per_node))
                .map_err(|e| format!("{file} ({alg}): {e}"))?;
            compare(&format!("{file} ({alg})"), &got, tri, None)?;
        }
    }
    Ok(())
}

/// A random graph description: nodes and edges (any order, duplicates and loops allowed).
#[derive(Debug, Clone)]
struct GraphCase {
    kind: &'static str,
    n: usize,
    edges: Vec<(usize, usize)>,
    algorithm: TriangleAlgorithm,
}

fn graph_case() -> impl Strategy<Value = GraphCase> {
    let alg = proptest::sample::select(ALL.to_vec());
    let empty = (0usize..4).prop_map(|n| ("empty", n, vec![]));
    let one = (2usize..6).prop_map(|n| ("one edge", n, vec![(n - 1, 0)]));
    let clique = (3usize..40).prop_map(|k| {
        let e = (0..k).flat_map(|i| (0..k).filter(move |&j| j != i).map(move |j| (i, j)));
        ("clique", k, e.collect())
    });
    let star = (2usize..300, 0usize..40).prop_flat_map(|(k, extra)| {
        proptest::collection::vec((1..=k, 1..=k), extra).prop_map(move |mut e| {
            e.extend((1..=k).map(|i| (0, i)));
            ("star", k + 1, e)
        })
    });
    let dense = (2usize..50).prop_flat_map(|n| {
        proptest::collection::vec(proptest::bool::weighted(0.7), n * n).prop_map(move |bits| {
            let e = (0..n * n)
                .filter(|&k| bits[k])
                .map(|k| (k / n, k % n))
                .collect();
            ("dense", n, e)
        })
    });
    let sparse = (2usize..400).prop_flat_map(|n| {
        proptest::collection::vec((0..n, 0..n), 0..3 * n).prop_map(move |e| ("sparse", n, e))
    });
    // A few hubs joined to most nodes, plus random edges: long rows, skewed degrees.
    let hubs = (300usize..1200, 1usize..6).prop_flat_map(|(n, h)| {
        proptest::collection::vec((0..n, 0..n), n..4 * n).prop_map(move |mut e| {
            for hub in 0..h {
                e.extend((0..n).filter(|v| v % (hub + 2) != 1).map(|v| (hub, v)));
            }
            ("hubs", n, e)
        })
    });
    (
        prop_oneof![
            1 => empty,
            1 => one,
            2 => clique,
            2 => star,
            2 => dense,
            3 => sparse,
            2 => hubs
        ],
        alg,
    )
        .prop_map(|((kind, n, edges), algorithm)| GraphCase {
            kind,
            n,
            edges,
            algorithm,
        })
}

fn random_vs_brute_force<B: TriangleCount>(b: &B) -> Result<(), String> {
    run_proptest(48, &graph_case(), |c| {
        let g = Graph::from_edges(c.n, c.edges.iter().copied()).map_err(|e| e.to_string())?;
        let r = reference_counts(&g);
        let what = format!("{} graph, n = {}, {}", c.kind, c.n, c.algorithm);
        for per_node in [false, true] {
            let got = b
                .count_triangles(&g, &opts(c.algorithm, per_node))
                .map_err(|e| format!("{what}: {e}"))?;
            if got.per_node.is_some() != per_node {
                return Err(format!("{what}: per-node counts present = {}", !per_node));
            }
            compare(&what, &got, r.total, r.per_node.as_deref())?;
        }
        Ok(())
    })
}

/// Oriented by id (`u < v`): node 0 has every other node as out-neighbour, so its row is far
/// longer than a work-group and than the GPU row cache, and split across work-groups; node 1
/// has about 900 out-neighbours and nodes 2.. 70-odd, so that every row bin of the GPU hash
/// plan ([`crate::triangles::plan::RowBins`]: warp, work-group, global bitmap) is used.
fn long_rows<B: TriangleCount>(b: &B) -> Result<(), String> {
    let n = 6000usize;
    let mut edges: Vec<(usize, usize)> = (1..n).map(|v| (0, v)).collect();
    // A path, a few chords and a dense corner: triangles with node 0 and without.
    edges.extend((1..n - 1).map(|v| (v, v + 1)));
    edges.extend((2..900).map(|v| (1, v * 3 % n)));
    edges.extend((2..20).flat_map(|v| (v + 1..v + 70).map(move |u| (v, u * 7 % n))));
    edges.extend((1..n - 7).step_by(5).map(|v| (v, v + 7)));
    for i in 1..60 {
        for j in i + 1..60 {
            edges.push((i * 97 % n, j * 97 % n));
        }
    }
    let g = Graph::from_edges(n, edges).map_err(|e| e.to_string())?;
    let r = reference_counts(&g);
    let mut indptr = vec![0u64];
    let mut adj = Vec::new();
    for v in 0..n {
        adj.extend(g.neighbors(v).iter().filter(|&&u| u as usize > v));
        indptr.push(adj.len() as u64);
    }
    let o = OrientedGraph::from_parts(indptr, adj).map_err(|e| e.to_string())?;
    let d = b.upload_oriented(o).map_err(|e| e.to_string())?;
    for alg in ALL {
        for per_node in [false, true] {
            let got = b
                .count_oriented(&d, &opts(alg, per_node))
                .map_err(|e| format!("{alg}: {e}"))?;
            compare(
                &format!("id-oriented, {alg}"),
                &got,
                r.total,
                r.per_node.as_deref(),
            )?;
        }
    }
    Ok(())
}

fn empty_and_tiny<B: TriangleCount>(b: &B) -> Result<(), String> {
    let cases = [
        (
            "no nodes",
            Graph::from_edges(0, []).map_err(|e| e.to_string())?,
        ),
        (
            "one node",
            Graph::from_edges(1, []).map_err(|e| e.to_string())?,
        ),
        (
            "self-loops only",
            Graph::from_edges(3, [(0, 0), (1, 1), (2, 2)]).map_err(|e| e.to_string())?,
        ),
        (
            "a triangle listed with loops and both directions",
            Graph::from_edges(3, [(0, 1), (1, 0), (1, 2), (2, 0), (0, 0), (0, 2)])
                .map_err(|e| e.to_string())?,
        ),
    ];
    for (what, g) in cases {
        let expect = u64::from(what.starts_with("a triangle"));
        for alg in ALL {
            let got = b
                .count_triangles(&g, &opts(alg, true))
                .map_err(|e| format!("{what}, {alg}: {e}"))?;
            let per = vec![expect; g.num_nodes()];
            compare(&format!("{what}, {alg}"), &got, expect, Some(&per))?;
        }
    }
    Ok(())
}

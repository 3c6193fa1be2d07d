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
//! * every GPU plan: each binary-search kernel and other plan limits (row bins, work-group
//!   caps) forced through [`TriangleOptions::search`] and [`TriangleOptions::limits`], so
//!   that every kernel entry point and every branch the planner can choose runs on small
//!   graphs (the CPU ignores them and counts the same graphs again).
//!
//! * counted rows (what a process of a distributed count does): the rows `0..k` counted
//!   with the later rows only read, plus the later rows on their own, give every total and
//!   per-node count exactly, for every split `k`, algorithm and GPU plan.
//!
//! * the distributed count ([`crate::dist::triangles`]) at 1 to 4 ranks (threads sharing
//!   the backend), both layouts, every algorithm, edges scattered over the ranks in any
//!   order and direction: the totals and per-node counts of one process.
//!
//! Per-node outputs are compared in full, against an independent per-node count
//! ([`per_node_from_edges`], from the edge list by sorted-list intersection per edge);
//! totals must also equal a third of their sum.

use proptest::prelude::*;

use super::{run_proptest, Check};
use crate::error::Result;
use crate::graph::Graph;
use crate::triangles::plan::{PlanLimits, SearchKernel};
use crate::triangles::{
    reference_counts, OrientedGraph, TriangleAlgorithm, TriangleCount, TriangleCounts,
    TriangleOptions,
};

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
        Check {
            name: "triangles_every_gpu_plan",
            run: every_gpu_plan::<B>,
        },
        Check {
            name: "triangles_every_gpu_kernel_small",
            run: every_gpu_kernel_small::<B>,
        },
        Check {
            name: "triangles_counted_rows",
            run: counted_rows::<B>,
        },
        Check {
            name: "triangles_distributed",
            run: distributed::<B>,
        },
        Check {
            name: "triangles_distributed_random",
            run: distributed_random::<B>,
        },
        Check {
            name: "triangles_exchanged_small",
            run: exchanged_small::<B>,
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
            triangles_empty_and_tiny,
            triangles_every_gpu_plan,
            triangles_every_gpu_kernel_small,
            triangles_counted_rows,
            triangles_distributed,
            triangles_distributed_random,
            triangles_exchanged_small
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

fn opts(algorithm: TriangleAlgorithm, per_node: bool) -> TriangleOptions {
    TriangleOptions {
        per_node,
        algorithm,
        ..TriangleOptions::default()
    }
}

/// `opts` on the GPU plan of `base` (its search kernel and limits).
fn opts_on(
    base: &TriangleOptions,
    algorithm: TriangleAlgorithm,
    per_node: bool,
) -> TriangleOptions {
    TriangleOptions {
        per_node,
        algorithm,
        ..base.clone()
    }
}

/// Triangles through each node of the undirected simple graph on `n` nodes with these edges
/// (any order and direction; duplicates and self-loops ignored), independently of
/// [`Graph`], the orientation and [`reference_counts`]: each node's neighbours as a sorted,
/// deduplicated list, then for every edge `u < v` the common neighbours `w > v` by a merge of
/// the two lists, `O(m d)`. Edges naming a node `>= n` are an error.
pub fn per_node_from_edges(
    n: usize,
    edges: impl IntoIterator<Item = (usize, usize)>,
) -> Result<Vec<u64>, String> {
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (u, v) in edges {
        if u >= n || v >= n {
            return Err(format!("edge ({u}, {v}) of a graph of {n} nodes"));
        }
        if u != v {
            adj[u].push(v);
            adj[v].push(u);
        }
    }
    for l in &mut adj {
        l.sort_unstable();
        l.dedup();
    }
    let mut per = vec![0u64; n];
    for u in 0..n {
        for &v in adj[u].iter().filter(|&&v| v > u) {
            let (a, b) = (&adj[u], &adj[v]);
            let (mut i, mut j) = (
                a.partition_point(|&w| w <= v),
                b.partition_point(|&w| w <= v),
            );
            while i < a.len() && j < b.len() {
                match a[i].cmp(&b[j]) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        per[u] += 1;
                        per[v] += 1;
                        per[a[i]] += 1;
                        i += 1;
                        j += 1;
                    }
                }
            }
        }
    }
    Ok(per)
}

/// [`per_node_from_edges`] of a [`Graph`]'s edges.
fn per_node_of(g: &Graph) -> Result<Vec<u64>, String> {
    let edges =
        (0..g.num_nodes()).flat_map(|v| g.neighbors(v).iter().map(move |&u| (v, u as usize)));
    per_node_from_edges(g.num_nodes(), edges)
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
    if per.is_some() && got.per_node.is_none() {
        return Err(format!("{what}: per-node counts asked for, none returned"));
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
        let per = per_node_of(&g).map_err(|e| format!("{file}: {e}"))?;
        let r = per.iter().sum::<u64>();
        if r != 3 * tri {
            return Err(format!(
                "{file}: the per-node reference sums to {r}, expected 3 x {tri}"
            ));
        }
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
        compare(&format!("{file} (per node)"), &got, tri, Some(&per))?;
    }
    Ok(())
}

fn shared_graphs_every_algorithm<B: TriangleCount>(b: &B) -> Result<(), String> {
    shared_graphs_on(b, &TriangleOptions::default(), usize::MAX)
}

/// Every graph of `graphs.tsv` up to `max_edges` edges, uploaded once and counted with every
/// forced algorithm on the GPU plan of `base`, per node (against [`per_node_from_edges`])
/// and not.
fn shared_graphs_on<B: TriangleCount>(
    b: &B,
    base: &TriangleOptions,
    max_edges: usize,
) -> Result<(), String> {
    let Some((dir, list)) = shared_list()? else {
        return Ok(());
    };
    for (file, nodes, edges, tri) in list {
        if edges > MAX_SHARED_EDGES || edges > max_edges {
            continue;
        }
        let g = load(&dir, &file, nodes, edges)?;
        let per = per_node_of(&g).map_err(|e| format!("{file}: {e}"))?;
        let d = b
            .upload_oriented(OrientedGraph::from_graph(&g).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{file}: {e}"))?;
        for alg in TriangleAlgorithm::FORCED {
            for per_node in [true, false] {
                let got = b
                    .count_oriented(&d, &opts_on(base, alg, per_node))
                    .map_err(|e| format!("{file} ({alg}): {e}"))?;
                let want = per_node.then_some(&per[..]);
                compare(&format!("{file} ({alg}, {base:?})"), &got, tri, want)?;
            }
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
    random_on(b, &TriangleOptions::default(), 48)
}

/// `cases` random graphs on the GPU plan of `base`, against [`reference_counts`] (total) and
/// [`per_node_from_edges`] (per node, from the raw edge list).
fn random_on<B: TriangleCount>(b: &B, base: &TriangleOptions, cases: u32) -> Result<(), String> {
    run_proptest(cases, &graph_case(), |c| {
        let g = Graph::from_edges(c.n, c.edges.iter().copied()).map_err(|e| e.to_string())?;
        let r = reference_counts(&g);
        let per = per_node_from_edges(c.n, c.edges.iter().copied())?;
        if r.per_node.as_deref() != Some(&per[..]) {
            return Err(format!(
                "{} graph, n = {}: the two host references disagree",
                c.kind, c.n
            ));
        }
        let what = format!("{} graph, n = {}, {}, {base:?}", c.kind, c.n, c.algorithm);
        for per_node in [false, true] {
            let got = b
                .count_triangles(&g, &opts_on(base, c.algorithm, per_node))
                .map_err(|e| format!("{what}: {e}"))?;
            if got.per_node.is_some() != per_node {
                return Err(format!("{what}: per-node counts present = {}", !per_node));
            }
            compare(&what, &got, r.total, per_node.then_some(&per[..]))?;
        }
        Ok(())
    })
}

/// Oriented by id (`u < v`): node 0 has every other node as out-neighbour, so its row is far
/// longer than a work-group and than the GPU row cache, and split across work-groups; node 1
/// has about 900 out-neighbours and nodes 2.. 70-odd, so that every row bin of the GPU hash
/// plan ([`crate::triangles::plan::RowBins`]: warp, work-group, global bitmap) is used.
fn long_rows<B: TriangleCount>(b: &B) -> Result<(), String> {
    long_rows_on(b, &TriangleOptions::default())
}

/// [`long_rows`] on the GPU plan of `base`.
fn long_rows_on<B: TriangleCount>(b: &B, base: &TriangleOptions) -> Result<(), String> {
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
    let per = per_node_from_edges(n, edges.iter().copied())?;
    let g = Graph::from_edges(n, edges).map_err(|e| e.to_string())?;
    let total = per.iter().sum::<u64>() / 3;
    if reference_counts(&g).total != total {
        return Err("id-oriented: the two host references disagree".into());
    }
    let o = by_id(&g, 0)?;
    let d = b.upload_oriented(o).map_err(|e| e.to_string())?;
    for alg in ALL {
        for per_node in [false, true] {
            let got = b
                .count_oriented(&d, &opts_on(base, alg, per_node))
                .map_err(|e| format!("{alg}: {e}"))?;
            compare(
                &format!("id-oriented, {alg}, {base:?}"),
                &got,
                total,
                per_node.then_some(&per[..]),
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

/// The plans of [`every_gpu_plan`] on two small random graphs only: every triangle kernel
/// launches (checked by `run.sh sanitize`'s kernel log), small enough for a race detector to
/// finish (compute-sanitizer racecheck is too slow for `triangles_every_gpu_plan`).
fn every_gpu_kernel_small<B: TriangleCount>(b: &B) -> Result<(), String> {
    // 60 nodes: a 14-clique, a hub joined to every node, and pseudo-random edges (xorshift),
    // so that rows fall in every hash bin under the forced limits.
    let n = 60;
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for u in 0..14 {
        for v in u + 1..14 {
            edges.push((u, v));
        }
    }
    edges.extend((0..n - 1).map(|v| (v, n - 1)));
    let mut rng = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..150 {
        let x = rng();
        edges.push(((x % n as u64) as usize, ((x >> 32) % n as u64) as usize));
    }
    let per = per_node_from_edges(n, edges.iter().copied())?;
    let tri = per.iter().sum::<u64>() / 3;
    let g = Graph::from_edges(n, edges.iter().copied()).map_err(|e| e.to_string())?;
    let d = b
        .upload_oriented(OrientedGraph::from_graph(&g).map_err(|e| e.to_string())?)
        .map_err(|e| format!("small hub graph: {e}"))?;
    for (limits, searches) in gpu_plans() {
        for &search in searches {
            let base = TriangleOptions {
                search,
                limits,
                ..TriangleOptions::default()
            };
            for alg in TriangleAlgorithm::FORCED {
                for per_node in [true, false] {
                    let got = b
                        .count_oriented(&d, &opts_on(&base, alg, per_node))
                        .map_err(|e| format!("small hub graph ({alg}): {e}"))?;
                    let want = per_node.then_some(&per[..]);
                    compare(
                        &format!("small hub graph ({alg}, {base:?})"),
                        &got,
                        tri,
                        want,
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// The limits and search kernels [`every_gpu_plan`] forces.
fn gpu_plans() -> [(PlanLimits, &'static [SearchKernel]); 4] {
    let limits = |w, bl, g| PlanLimits {
        warp_max: w,
        block_max: bl,
        max_groups: g,
    };
    [
        (limits(64, 2048, Some(1)), &SearchKernel::ALL),
        (
            limits(0, 0, Some(2)),
            &[SearchKernel::Edge, SearchKernel::Flat],
        ),
        (
            limits(8, 100, Some(3)),
            &[SearchKernel::Row, SearchKernel::FlatGlobal],
        ),
        (
            PlanLimits::default(),
            &[
                SearchKernel::Edge,
                SearchKernel::Row,
                SearchKernel::FlatGlobal,
            ],
        ),
    ]
}

/// Every GPU plan the planner can choose, forced through the options: each binary-search
/// kernel ([`SearchKernel`]) under `max_groups = 1` (one work-group of every kernel loops
/// over all its rows or edge chunks, so the shared tables and row caches are reused), and
/// other limits: `0,0,2` sends every row to the global-bitmap `tc_hash` (two work-groups,
/// two bitmaps), `8,100,3` moves rows between the three hash bins, and the defaults. Each
/// runs the long-row graph, random graphs and the small shared graphs with every algorithm,
/// per node too. The CPU ignores the plan and counts the same graphs.
fn every_gpu_plan<B: TriangleCount>(b: &B) -> Result<(), String> {
    for (limits, searches) in gpu_plans() {
        for &search in searches {
            let base = TriangleOptions {
                search,
                limits,
                ..TriangleOptions::default()
            };
            long_rows_on(b, &base)?;
            random_on(b, &base, 12)?;
            shared_graphs_on(b, &base, 20_000)?;
        }
    }
    Ok(())
}

/// The rows `from..` of `g` oriented by id (`u < v`), ids shifted down by `from`.
fn by_id(g: &Graph, from: usize) -> Result<OrientedGraph, String> {
    let mut indptr = vec![0u64];
    let mut adj = Vec::new();
    for v in from..g.num_nodes() {
        adj.extend(
            g.neighbors(v)
                .iter()
                .filter(|&&u| u as usize > v)
                .map(|&u| u - from as u32),
        );
        indptr.push(adj.len() as u64);
    }
    OrientedGraph::from_parts(indptr, adj).map_err(|e| e.to_string())
}

/// A distributed count's split: the rows `0..k` of an id-oriented graph counted with the
/// later rows only read ([`OrientedGraph::with_counted_rows`]), plus the rows `k..` on their
/// own (ids shifted down by `k`), must give the total and every node's count, for splits at
/// the ends, inside the long rows and in the middle, with every algorithm, on the default
/// GPU plan and on the plans that move rows between the hash bins. A backend counting all
/// rows, or none, double counts or loses the triangles of one side.
fn counted_rows<B: TriangleCount>(b: &B) -> Result<(), String> {
    let n = 3000usize;
    let mut edges: Vec<(usize, usize)> = (1..n).map(|v| (0, v)).collect();
    edges.extend((1..n - 1).map(|v| (v, v + 1)));
    edges.extend((2..700).map(|v| (1, v * 3 % n)));
    edges.extend((2..30).flat_map(|v| (v + 1..v + 90).map(move |u| (v, u * 7 % n))));
    edges.extend((1..n - 7).step_by(3).map(|v| (v, v + 7)));
    let per = per_node_from_edges(n, edges.iter().copied())?;
    let total = per.iter().sum::<u64>() / 3;
    let g = Graph::from_edges(n, edges).map_err(|e| e.to_string())?;
    let bases = [
        TriangleOptions::default(),
        TriangleOptions {
            limits: gpu_plans()[1].0,
            ..TriangleOptions::default()
        },
        TriangleOptions {
            limits: gpu_plans()[2].0,
            search: SearchKernel::Row,
            ..TriangleOptions::default()
        },
    ];
    for k in [0, 1, 2, 17, 700, n / 2, n - 1, n] {
        let head = by_id(&g, 0)?
            .with_counted_rows(k)
            .map_err(|e| e.to_string())?;
        let head = b.upload_oriented(head).map_err(|e| e.to_string())?;
        let tail = b
            .upload_oriented(by_id(&g, k)?)
            .map_err(|e| e.to_string())?;
        for base in &bases {
            for alg in ALL {
                let what = format!("rows 0..{k} of {n} counted, {alg}, {base:?}");
                let o = opts_on(base, alg, true);
                let h = b
                    .count_oriented(&head, &o)
                    .map_err(|e| format!("{what}: {e}"))?;
                let t = b
                    .count_oriented(&tail, &o)
                    .map_err(|e| format!("{what}: {e}"))?;
                let (Some(hp), Some(tp)) = (&h.per_node, &t.per_node) else {
                    return Err(format!("{what}: no per-node counts"));
                };
                if hp.len() != n || tp.len() != n - k {
                    return Err(format!(
                        "{what}: per-node lengths {} and {}",
                        hp.len(),
                        tp.len()
                    ));
                }
                let mut sum = hp.clone();
                for (v, &c) in tp.iter().enumerate() {
                    sum[v + k] += c;
                }
                let got = TriangleCounts {
                    total: h.total + t.total,
                    per_node: Some(sum),
                };
                compare(&what, &got, total, Some(&per[..]))?;
            }
        }
    }
    Ok(())
}

/// The distributed count ([`crate::dist::triangles::count`]) with ranks as threads sharing
/// `b`: each rank holds a scattered share of the raw edges (duplicates, both directions,
/// self-loops), builds and orients the graph with the others, and counts its rows, under
/// both layouts and every algorithm; every rank must end with the one-process total and
/// per-node counts (from [`per_node_from_edges`]), and the degrees of the raw edges.
fn distributed<B: TriangleCount>(b: &B) -> Result<(), String> {
    use crate::dist::graph::{orient, DistGraph};
    use crate::dist::threads;
    use crate::dist::triangles::{count, Layout};
    use crate::dist::Comm;
    let mut rng = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
    let mut next = move |k: usize| {
        let x = rng();
        (x % k as u64) as usize
    };
    type Case = (&'static str, usize, Vec<(usize, usize)>);
    let mut cases: Vec<Case> = Vec::new();
    // Hubs and random edges, with duplicates, reversed duplicates and self-loops.
    let n = 700;
    let mut e: Vec<(usize, usize)> = (0..3 * n).map(|_| (next(n), next(n))).collect();
    for h in 0..3 {
        e.extend((0..n).filter(|v| v % (h + 2) != 1).map(|v| (h * 100, v)));
    }
    let back: Vec<(usize, usize)> = e[..200].iter().map(|&(u, v)| (v, u)).collect();
    e.extend(back);
    cases.push(("hubs", n, e));
    // Cliques joined by a path, isolated nodes at the end.
    let mut e = Vec::new();
    for c in 0..6 {
        for i in 0..9 {
            for j in i + 1..9 {
                e.push((c * 9 + i, c * 9 + j));
            }
        }
        e.push((c * 9, c * 9 + 9));
    }
    cases.push(("cliques", 70, e));
    cases.push(("one edge", 5, vec![(4, 1)]));
    cases.push(("no edges", 3, vec![(1, 1)]));
    for (kind, n, edges) in &cases {
        let per = per_node_from_edges(*n, edges.iter().copied())?;
        let total = per.iter().sum::<u64>() / 3;
        let g = Graph::from_edges(*n, edges.iter().copied()).map_err(|e| e.to_string())?;
        for p in 1..=4usize {
            for layout in [Layout::Replicate, Layout::Partition] {
                for alg in ALL {
                    if alg != TriangleAlgorithm::Auto && (layout == Layout::Replicate || p != 3) {
                        continue;
                    }
                    let what = format!("{kind} graph, {p} ranks, {layout}, {alg}");
                    let raw: Vec<(u32, u32)> =
                        edges.iter().map(|&(u, v)| (u as u32, v as u32)).collect();
                    let results = threads::run(p, |c| {
                        // A scattered share: every p-th edge from this rank's offset.
                        let mine: Vec<(u32, u32)> =
                            raw.iter().copied().skip(c.rank()).step_by(p).collect();
                        let dg = DistGraph::from_edges(c, *n, &mine)?;
                        let degrees_ok = (0..*n).all(|v| dg.degree(v) == g.degree(v));
                        let o = orient(c, &dg)?;
                        let r = count(c, b, &o, layout, &opts(alg, true))?;
                        Ok((r, degrees_ok, dg.num_edges()))
                    });
                    for (rank, r) in results.into_iter().enumerate() {
                        let (r, degrees_ok, m) =
                            r.map_err(|e| format!("{what}, rank {rank}: {e}"))?;
                        if !degrees_ok || m != g.num_edges() as u64 {
                            return Err(format!(
                                "{what}, rank {rank}: degrees or edge count differ"
                            ));
                        }
                        if r.layout != layout {
                            return Err(format!("{what}: ran {}", r.layout));
                        }
                        // Thread-ranks share one device: no device engine (NCCL) serves them.
                        if r.device_exchange {
                            return Err(format!("{what}: rows went device to device"));
                        }
                        compare(
                            &format!("{what}, rank {rank}"),
                            &r.counts,
                            total,
                            Some(&per[..]),
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Random graphs counted over 2 to 5 thread-ranks against brute force: each case draws a
/// graph (skewed ends with hubs, a sprinkle of cliques, repeats both ways, self-loops,
/// isolated nodes, and sometimes no edge at all), how the edges are dealt to the ranks (in
/// contiguous runs, as byte ranges deal them, or scattered), the rank count, the layout,
/// the algorithm and whether per-node counts are asked for. What the fixed cases of
/// `triangles_distributed` do not combine, these do.
fn distributed_random<B: TriangleCount>(b: &B) -> Result<(), String> {
    use crate::dist::graph::{orient, DistGraph};
    use crate::dist::threads;
    use crate::dist::triangles::{count, Layout};
    use crate::dist::Comm;
    let mut rng = crate::testing::xorshift(0x7472_6961_6e67_6c65u64);
    let mut next = move |k: usize| (rng() % k.max(1) as u64) as usize;
    for case in 0..RANDOM_CASES {
        let n = 1 + next(400);
        let mut edges: Vec<(usize, usize)> = (0..next(6 * n))
            .map(|_| (next(n) * next(n) / n, next(n)))
            .collect();
        for _ in 0..next(4) {
            let (at, size) = (next(n), 2 + next(12));
            for i in at..(at + size).min(n) {
                for j in i + 1..(at + size).min(n) {
                    edges.push((i, j));
                }
            }
        }
        let back: Vec<(usize, usize)> = edges
            .iter()
            .take(next(edges.len() + 1))
            .map(|&(u, v)| (v, u))
            .collect();
        edges.extend(back);
        let per = per_node_from_edges(n, edges.iter().copied())?;
        let total = per.iter().sum::<u64>() / 3;
        let (p, scattered) = (2 + next(4), next(2) == 0);
        let layout = [Layout::Replicate, Layout::Partition, Layout::Auto][next(3)];
        let (alg, per_node) = (ALL[next(ALL.len())], next(2) == 0);
        let what = format!(
            "random case {case} ({n} nodes, {} edge lines), {p} ranks, {layout}, {alg}, \
             per node {per_node}, scattered {scattered}",
            edges.len()
        );
        let raw: Vec<(u32, u32)> = edges.iter().map(|&(u, v)| (u as u32, v as u32)).collect();
        let results = threads::run(p, |c| {
            let (r, p) = (c.rank(), c.size());
            let mine: Vec<(u32, u32)> = if scattered {
                raw.iter().copied().skip(r).step_by(p).collect()
            } else {
                raw[raw.len() * r / p..raw.len() * (r + 1) / p].to_vec()
            };
            let dg = DistGraph::from_edges(c, n, &mine)?;
            let o = orient(c, &dg)?;
            count(c, b, &o, layout, &opts(alg, per_node))
        });
        for (rank, r) in results.into_iter().enumerate() {
            let r = r.map_err(|e| format!("{what}, rank {rank}: {e}"))?;
            let want = per_node.then_some(&per[..]);
            compare(&format!("{what}, rank {rank}"), &r.counts, total, want)?;
            if !per_node && r.counts.per_node.is_some() {
                return Err(format!(
                    "{what}, rank {rank}: per-node counts not asked for"
                ));
            }
        }
    }
    Ok(())
}

/// Cases of [`distributed_random`] (many more were run while it was written).
const RANDOM_CASES: usize = 24;

/// The replicated layout's upload ([`TriangleCount::upload_exchanged`]: ids received as
/// pieces and lowered by the rank's first row on the device) on one rank: rows `r0..n` of
/// an oriented graph whose rows `r0..r0 + k` are counted, against triangles found by brute
/// force in the edge list (by lowest node). One thread and a small graph: fit for the
/// sanitizers. (The exchange between thread-ranks is `triangles_distributed`'s.)
fn exchanged_small<B: TriangleCount>(b: &B) -> Result<(), String> {
    use crate::dist::Solo;
    use crate::triangles::RowExchange;
    let n = 120usize;
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (u, o) in out.iter_mut().enumerate() {
        for d in [1, 2, 3, 5, 11, 17] {
            if (u * 7 + d) % 4 != 0 && u + d < n {
                o.push((u + d) as u32);
            }
        }
        if u % 9 == 0 {
            o.extend((u + 20..n).step_by(13).map(|v| v as u32));
        }
        o.sort_unstable();
        o.dedup();
    }
    let mut indptr = vec![0u64];
    for o in &out {
        indptr.push(indptr[indptr.len() - 1] + o.len() as u64);
    }
    let adj: Vec<u32> = out.iter().flatten().copied().collect();
    for r0 in [0usize, 1, 7, n / 2, n - 1] {
        for k in [0usize, 1, 10, n] {
            let k = k.min(n - r0);
            // Brute force: triangles u < v < w with u in r0..r0 + k.
            let mut per = vec![0u64; n - r0];
            let mut total = 0u64;
            for u in r0..r0 + k {
                for (i, &v) in out[u].iter().enumerate() {
                    for &w in &out[u][i + 1..] {
                        if out[v as usize].binary_search(&w).is_ok() {
                            total += 1;
                            for x in [u, v as usize, w as usize] {
                                per[x - r0] += 1;
                            }
                        }
                    }
                }
            }
            let send = &adj[indptr[r0] as usize..];
            let x = RowExchange {
                indptr: indptr[r0..].iter().map(|&p| p - indptr[r0]).collect(),
                counted: k,
                send,
                parts: std::iter::once(0..send.len()).collect(),
                recv: vec![send.len()],
                shift: r0 as u32,
            };
            let what = format!("rows {r0}..{n}, {k} counted");
            let (d, device) = b
                .upload_exchanged(&Solo, x)
                .map_err(|e| format!("{what}: {e}"))?;
            if device {
                return Err(format!("{what}: one rank exchanged device to device"));
            }
            for alg in ALL {
                let got = b
                    .count_oriented(&d, &opts(alg, true))
                    .map_err(|e| format!("{what}, {alg}: {e}"))?;
                compare(&format!("{what}, {alg}"), &got, total, Some(&per[..]))?;
            }
        }
    }
    Ok(())
}

//! Triangle counting on every backend present, side by side, with every algorithm.
//!
//! Inputs: a Graph500 Kronecker graph generated here (`kronecker-s<S>`, edge factor 16,
//! seed 1) and, when the shared data is found, `facebook_combined` and `as20000102`. One
//! criterion group per input (`triangles/<input>`); function ids are `<backend>` (the
//! `Auto` algorithm), `<backend>-merge`, `<backend>-binary-search`, `<backend>-hash`, and
//! `<backend>-seed`: the seed's merge-per-row count on the graph oriented by id (`i → k` for
//! `k > i`, no degree ordering, no relabelling), so that the gain of the orientation shows.
//! Each times `count_oriented` on a graph uploaded once (counting time, synchronised); the
//! end-to-end time from a loaded graph (orientation + transfer + count) is `<backend>-e2e`.
//! Throughput is undirected edges per second.
//!
//! Every count is checked before timing: the shared graphs against `graphs.tsv`, the
//! Kronecker graph against the CPU count on the id orientation (and, up to scale 14, the
//! independent reference); a wrong count makes the benchmark exit with status 1.
//!
//! Environment:
//! - `TRIDENT_TC_SCALE`: Kronecker scale, default 16 (the H100 run uses 22 to 24).
//! - `TRIDENT_TC_ALGORITHMS=0`: only the `Auto` algorithm and the seed's (faster runs).
//! - `TRIDENT_TC_DUMP=<dir>`: also write the Kronecker graph as `<dir>/kronecker-s<S>.el`
//!   (`u v` lines) for `benches/peers/gapbs_tc.sh`, the same-run GAP `tc` baseline.
//! - `TRIDENT_TC_BINS=W,B[,G]`: the GPU hash plan's limits (rows of out-degree up to W on
//!   the warp-per-row kernel, up to B on the block-per-row one, longer on the global bitmap;
//!   at most G work-groups per kernel); `0,0` times the former bitmap-only hash path
//!   (read here into `TriangleOptions::limits`: `trident_core::triangles::plan::PlanLimits`).
//! - `TRIDENT_TC_SEARCH=edge|row|flat`: the GPU binary-search kernel
//!   (read here into `TriangleOptions::search`: `trident_core::triangles::plan::SearchKernel`). Unset, `<backend>-binary-search` times
//!   the default one and `<backend>-binary-search-<kernel>` each other one (GPU backends).
//! - `TRIDENT_BENCH_BACKENDS=cpu,cuda,...`: only these backends (default: all present);
//!   OpenCL on a CPU device (PoCL) only when named there or with `TRIDENT_BENCH_OPENCL_CPU=1`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use trident_benches::BackendFilter;
use trident_core::triangles::plan::{PlanLimits, SearchKernel};
use trident_core::triangles::{reference_counts, OrientedGraph};
use trident_core::{
    generate, io, Graph, Result, TriangleAlgorithm, TriangleCount, TriangleOptions,
};
use trident_cpu::Cpu;

/// One input: its name, graph, and the count every backend must give.
struct Input {
    name: String,
    graph: Graph,
    triangles: u64,
}

/// The graph oriented by id (`i → k` for `k > i`): the seed's formulation.
fn by_id(g: &Graph) -> Result<OrientedGraph> {
    let mut indptr = Vec::with_capacity(g.num_nodes() + 1);
    indptr.push(0u64);
    let mut adj = Vec::with_capacity(g.num_edges());
    for v in 0..g.num_nodes() {
        adj.extend(g.neighbors(v).iter().filter(|&&u| u as usize > v));
        indptr.push(adj.len() as u64);
    }
    OrientedGraph::from_parts(indptr, adj)
}

/// `TRIDENT_TC_SEARCH`, if set: the one binary-search kernel to time (else all).
fn search_env() -> Option<SearchKernel> {
    let v = std::env::var("TRIDENT_TC_SEARCH").ok()?;
    match v.parse() {
        Ok(k) => Some(k),
        Err(e) => {
            eprintln!("triangles bench: TRIDENT_TC_SEARCH: {e}");
            std::process::exit(2)
        }
    }
}

/// The options of `algorithm` with the plan limits of `TRIDENT_TC_BINS` (if set) and the
/// search kernel of `TRIDENT_TC_SEARCH` (if set).
fn options(algorithm: TriangleAlgorithm) -> TriangleOptions {
    let limits = match std::env::var("TRIDENT_TC_BINS") {
        Ok(v) => PlanLimits::parse(&v).unwrap_or_else(|e| {
            eprintln!("triangles bench: TRIDENT_TC_BINS: {e}");
            std::process::exit(2)
        }),
        Err(_) => PlanLimits::default(),
    };
    TriangleOptions {
        per_node: false,
        algorithm,
        search: search_env().unwrap_or_default(),
        limits,
    }
}

fn wrong(what: &str, got: u64, expected: u64) -> ! {
    eprintln!("triangles bench: WRONG COUNT: {what}: {got}, expected {expected}");
    std::process::exit(1);
}

fn kronecker_input() -> Input {
    let scale: u32 = std::env::var("TRIDENT_TC_SCALE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(16);
    let t = Instant::now();
    let k = generate::kronecker(scale, 16, 1).expect("kronecker");
    let name = format!("kronecker-s{scale}");
    if let Some(dir) = std::env::var_os("TRIDENT_TC_DUMP").map(PathBuf::from) {
        let path = dir.join(format!("{name}.el"));
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
            for (u, v) in k.src.iter().zip(&k.dst) {
                writeln!(w, "{u} {v}")?;
            }
            w.flush()
        };
        match write() {
            Ok(()) => eprintln!("triangles bench: wrote {}", path.display()),
            Err(e) => eprintln!("triangles bench: writing {}: {e}", path.display()),
        }
    }
    let graph = k.to_graph().expect("kronecker graph");
    drop(k);
    let cpu = Cpu::new();
    let d = cpu
        .upload_oriented(by_id(&graph).expect("id orientation"))
        .expect("upload");
    let opts = options(TriangleAlgorithm::Merge);
    let triangles = cpu.count_oriented(&d, &opts).expect("count").total;
    if scale <= 14 {
        let r = reference_counts(&graph).total;
        if r != triangles {
            wrong(&format!("{name} cpu (id orientation)"), triangles, r);
        }
    }
    eprintln!(
        "triangles bench: {name}: {} nodes, {} edges, {triangles} triangles ({:.2?})",
        graph.num_nodes(),
        graph.num_edges(),
        t.elapsed()
    );
    Input {
        name,
        graph,
        triangles,
    }
}

fn shared_inputs() -> Vec<Input> {
    let Some(dir) = trident_core::testing::data_dir() else {
        eprintln!("triangles bench: no shared data (TRIDENT_DATA): Kronecker graph only");
        return Vec::new();
    };
    let tsv = std::fs::read_to_string(dir.join("graphs.tsv")).unwrap_or_default();
    let mut out = Vec::new();
    for file in ["graphs/facebook_combined.txt", "graphs/as20000102.txt"] {
        let Some(count) = tsv
            .lines()
            .find(|l| l.starts_with(&format!("{file}\t")))
            .and_then(|l| l.split('\t').nth(3))
            .and_then(|c| c.trim().parse().ok())
        else {
            eprintln!("triangles bench: {file} not in graphs.tsv");
            continue;
        };
        match io::read_graph_auto(dir.join(file)) {
            Ok(graph) => out.push(Input {
                name: file
                    .trim_start_matches("graphs/")
                    .trim_end_matches(".txt")
                    .to_string(),
                graph,
                triangles: count,
            }),
            Err(e) => eprintln!("triangles bench: {file}: {e}"),
        }
    }
    out
}

fn bench_on<B: TriangleCount>(group: &mut BenchmarkGroup<'_, WallTime>, b: &B, input: &Input) {
    let name = b.name();
    let all = std::env::var("TRIDENT_TC_ALGORITHMS").map_or(true, |v| v != "0");
    let check = |what: &str, got: Result<u64>| match got {
        Ok(t) if t == input.triangles => true,
        Ok(t) => wrong(&format!("{} {what}", input.name), t, input.triangles),
        Err(e) => {
            eprintln!("triangles bench: skipping {what} on {}: {e}", input.name);
            false
        }
    };
    // Degree-ordered orientation, uploaded once.
    let oriented = OrientedGraph::from_graph(&input.graph).and_then(|o| b.upload_oriented(o));
    let d = match oriented {
        Ok(d) => d,
        Err(e) => {
            eprintln!("triangles bench: skipping {name} on {}: {e}", input.name);
            return;
        }
    };
    let mut algorithms = vec![TriangleAlgorithm::Auto];
    if all {
        algorithms.extend(TriangleAlgorithm::FORCED);
    }
    for alg in algorithms {
        let opts = options(alg);
        let id = if alg == TriangleAlgorithm::Auto {
            name.to_string()
        } else {
            format!("{name}-{alg}")
        };
        if !check(&id, b.count_oriented(&d, &opts).map(|c| c.total)) {
            continue;
        }
        group.bench_function(id.as_str(), |bench| {
            bench.iter(|| b.count_oriented(&d, &opts).expect("count"))
        });
        if alg == TriangleAlgorithm::BinarySearch && name != "cpu" {
            bench_search_kernels(group, b, &d, &opts, &id, &check);
        }
    }
    drop(d);
    // The seed's formulation: oriented by id, merge per row.
    let opts = options(TriangleAlgorithm::Merge);
    if let Ok(s) = by_id(&input.graph).and_then(|o| b.upload_oriented(o)) {
        let id = format!("{name}-seed");
        if check(&id, b.count_oriented(&s, &opts).map(|c| c.total)) {
            group.bench_function(id.as_str(), |bench| {
                bench.iter(|| b.count_oriented(&s, &opts).expect("count"))
            });
        }
    }
    // End to end from the loaded graph: orientation, transfer, count.
    let opts = options(TriangleAlgorithm::Auto);
    let id = format!("{name}-e2e");
    if check(&id, b.count_triangles(&input.graph, &opts).map(|c| c.total)) {
        group.bench_function(id.as_str(), |bench| {
            bench.iter(|| b.count_triangles(&input.graph, &opts).expect("count"))
        });
    }
}

/// The GPU binary-search kernels other than the default ([`SearchKernel`]), each as
/// `<id>-<kernel>` (e.g. `cuda-binary-search-flat`), selected by
/// [`TriangleOptions::search`]. Not when `TRIDENT_TC_SEARCH` is set: then `<id>` times the
/// kernel it names.
fn bench_search_kernels<B: TriangleCount>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    b: &B,
    d: &B::Oriented,
    opts: &TriangleOptions,
    id: &str,
    check: &dyn Fn(&str, Result<u64>) -> bool,
) {
    if search_env().is_some() {
        return;
    }
    for k in SearchKernel::ALL {
        if k == opts.search {
            continue;
        }
        let opts = TriangleOptions {
            search: k,
            ..opts.clone()
        };
        let id = format!("{id}-{}", k.name());
        if check(&id, b.count_oriented(d, &opts).map(|c| c.total)) {
            group.bench_function(id.as_str(), |bench| {
                bench.iter(|| b.count_oriented(d, &opts).expect("count"))
            });
        }
    }
}

fn start<B>(name: &str, filter: &BackendFilter, make: impl FnOnce() -> Result<B>) -> Option<B> {
    if !filter.wants(name) {
        return None;
    }
    make()
        .map_err(|e| eprintln!("triangles bench: skipping {name}: {e}"))
        .ok()
}

fn main() {
    let filter = BackendFilter::from_env();
    let cpu = filter.wants("cpu").then(Cpu::new);
    let cuda = start("cuda", &filter, trident_benches::open_cuda);
    let opencl = start("opencl", &filter, trident_benches::open_opencl).filter(|cl| {
        cl.is_gpu()
            || filter.names_explicitly("opencl")
            || std::env::var("TRIDENT_BENCH_OPENCL_CPU").is_ok_and(|v| v == "1")
    });
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .without_plots()
        .configure_from_args();
    let mut inputs = vec![kronecker_input()];
    inputs.extend(shared_inputs());
    for input in &inputs {
        let mut group = c.benchmark_group(format!("triangles/{}", input.name));
        group
            .throughput(Throughput::Elements(input.graph.num_edges() as u64))
            .sampling_mode(SamplingMode::Flat);
        if let Some(b) = &cpu {
            bench_on(&mut group, b, input);
        }
        if let Some(b) = &cuda {
            bench_on(&mut group, b, input);
        }
        if let Some(b) = &opencl {
            bench_on(&mut group, b, input);
        }
        group.finish();
    }
    c.final_summary();
}

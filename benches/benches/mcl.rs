//! R-MCL ([`trident_core::mcl`]) on every backend present, side by side, default options
//! (inflation 2, balance 0.5, K = 64, 10 R-MCL iterations then the `M·M` finish to the chaos
//! test, f64; as `trident cluster` runs it).
//!
//! Inputs: the shared yeast networks `collins2007` and `krogan2006_extended` (when the shared
//! data is found, [`trident_core::testing::data_dir`]) and a planted-partition network
//! (`planted-n<N>`: [`trident_core::generate::planted`], communities of 20 nodes, mean degree
//! 10, a tenth of the edges between communities, seed 1; `trident generate planted --nodes N
//! --communities N/20 --degree 10 --mixing 0.1 --seed 1` writes the same graph). One criterion group per input (`mcl/<input>`);
//! function ids are the backend names. Each times `cluster` from the loaded graph (building
//! `M_G`, transfers, iterations, downloading and interpreting `M`): the end-to-end time of
//! `trident cluster` minus reading and writing.
//!
//! Every backend's partition is checked against the CPU backend's before timing (the CPU's
//! against the sequential reference on the yeast networks); a different partition makes the
//! benchmark exit with status 1.
//!
//! Environment:
//! - `TRIDENT_MCL_NODES`: nodes of the planted network, default 100000 (the H100 run uses
//!   1000000).
//! - `TRIDENT_MCL_DUMP=<dir>`: also write the planted network as `<dir>/planted-n<N>.abc`
//!   (a SNAP edge list) for `benches/peers/mcl_baseline.sh`, the same-run `mcl` baseline.
//! - `TRIDENT_BENCH_BACKENDS=cpu,cuda,...`: only these backends (default: all present);
//!   OpenCL on a CPU device (PoCL) only when named there or with `TRIDENT_BENCH_OPENCL_CPU=1`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use trident_benches::BackendFilter;
use trident_core::mcl::{partition_difference, reference, Clustering, MarkovCluster, MclOptions};
use trident_core::{generate, io, Graph, Result};
use trident_cpu::Cpu;

/// One input and the CPU backend's clustering of it, which every backend must reproduce.
struct Input {
    name: String,
    graph: Graph,
    expected: Clustering,
}

fn wrong(what: &str, diff: &str) -> ! {
    eprintln!("mcl bench: WRONG PARTITION: {what}: {diff}");
    std::process::exit(1);
}

/// The planted network of the benchmark: [`generate::planted`] with `n` nodes in
/// communities of 20, mean degree 10, a tenth of the edges between communities, seed 1.
fn planted(n: usize) -> generate::Planted {
    generate::planted(&generate::PlantedOptions {
        nodes: n,
        communities: (n / 20).max(1),
        degree: 10.0,
        mixing: 0.1,
        seed: 1,
    })
    .expect("planted graph")
}

fn planted_input(cpu: &Cpu, opts: &MclOptions) -> Input {
    let n: usize = std::env::var("TRIDENT_MCL_NODES")
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .unwrap_or(100_000);
    let t = Instant::now();
    let p = planted(n);
    let graph = p.edges.to_graph().expect("planted graph");
    let name = format!("planted-n{n}");
    if let Some(dir) = std::env::var_os("TRIDENT_MCL_DUMP").map(PathBuf::from) {
        let path = dir.join(format!("{name}.abc"));
        match p.edges.write_snap(&path, &name) {
            Ok(()) => eprintln!("mcl bench: wrote {}", path.display()),
            Err(e) => eprintln!("mcl bench: writing {}: {e}", path.display()),
        }
    }
    let expected = MarkovCluster::<f64>::cluster(cpu, &graph, opts).expect("cpu clustering");
    eprintln!(
        "mcl bench: {name}: {} nodes, {} edges, {} clusters, {} iterations{} ({:.2?})",
        graph.num_nodes(),
        graph.num_edges(),
        expected.clusters.len(),
        expected.iterations,
        if expected.converged { "" } else { " (cap)" },
        t.elapsed()
    );
    Input {
        name,
        graph,
        expected,
    }
}

fn shared_inputs(cpu: &Cpu, opts: &MclOptions) -> Vec<Input> {
    let Some(dir) = trident_core::testing::data_dir() else {
        eprintln!("mcl bench: no shared data (TRIDENT_DATA): planted network only");
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in ["collins2007", "krogan2006_extended"] {
        let graph = match io::read_graph_auto(dir.join("ppi").join(format!("{name}.txt"))) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("mcl bench: {name}: {e}");
                continue;
            }
        };
        let expected = MarkovCluster::<f64>::cluster(cpu, &graph, opts).expect("cpu clustering");
        let r = reference::cluster::<f64>(&graph, opts).expect("reference clustering");
        if let Some(d) = partition_difference(&expected.clusters, &r.clusters) {
            wrong(&format!("{name} cpu vs reference"), &d);
        }
        eprintln!(
            "mcl bench: {name}: {} nodes, {} edges, {} clusters, {} iterations",
            graph.num_nodes(),
            graph.num_edges(),
            expected.clusters.len(),
            expected.iterations
        );
        out.push(Input {
            name: name.to_string(),
            graph,
            expected,
        });
    }
    out
}

fn bench_on<B: MarkovCluster<f64>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    b: &B,
    input: &Input,
    opts: &MclOptions,
) {
    let name = b.name();
    match b.cluster(&input.graph, opts) {
        Ok(c) => {
            if let Some(d) = partition_difference(&c.clusters, &input.expected.clusters) {
                wrong(&format!("{} {name} vs cpu", input.name), &d);
            }
        }
        Err(e) => {
            eprintln!("mcl bench: skipping {name} on {}: {e}", input.name);
            return;
        }
    }
    group.bench_function(name, |bench| {
        bench.iter(|| b.cluster(&input.graph, opts).expect("cluster"))
    });
}

fn start<B>(name: &str, filter: &BackendFilter, make: impl FnOnce() -> Result<B>) -> Option<B> {
    if !filter.wants(name) {
        return None;
    }
    make()
        .map_err(|e| eprintln!("mcl bench: skipping {name}: {e}"))
        .ok()
}

fn main() {
    let filter = BackendFilter::from_env();
    let opts = MclOptions::default();
    // The CPU computes the expected partitions even when it is not benchmarked.
    let cpu = Cpu::new();
    let cuda = start("cuda", &filter, trident_benches::open_cuda);
    let opencl = start("opencl", &filter, trident_benches::open_opencl).filter(|cl| {
        cl.is_gpu()
            || filter.names_explicitly("opencl")
            || std::env::var("TRIDENT_BENCH_OPENCL_CPU").is_ok_and(|v| v == "1")
    });
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .without_plots()
        .configure_from_args();
    let mut inputs = shared_inputs(&cpu, &opts);
    inputs.push(planted_input(&cpu, &opts));
    for input in &inputs {
        let mut group = c.benchmark_group(format!("mcl/{}", input.name));
        group.sampling_mode(SamplingMode::Flat);
        if filter.wants("cpu") {
            bench_on(&mut group, &cpu, input, &opts);
        }
        if let Some(b) = &cuda {
            bench_on(&mut group, b, input, &opts);
        }
        if let Some(b) = &opencl {
            bench_on(&mut group, b, input, &opts);
        }
        group.finish();
    }
    c.final_summary();
}

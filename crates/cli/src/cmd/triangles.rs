//! `trident triangles`: exact triangle count of a graph on a chosen backend, with the time
//! split into load, preprocessing (orientation, transfer) and counting.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use trident_core::triangles::plan::{PlanLimits, SearchKernel};
use trident_core::triangles::OrientedGraph;
use trident_core::{io, Error, Graph, Result, TriangleAlgorithm, TriangleCount, TriangleOptions};

use trident_core::dist::triangles::Layout;

use crate::files::Files;
use crate::job::{Job, ReadChoice};
use crate::median;
use crate::select::{self, BackendChoice};

/// Count the triangles of a graph (Matrix Market, METIS or edge list; directed or duplicated edges
/// are symmetrised, self-loops dropped).
#[derive(clap::Args)]
pub struct Args {
    /// The graph file.
    path: PathBuf,
    /// Which backend counts.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendChoice,
    /// Intersection algorithm: auto, merge, binary-search or hash.
    #[arg(long, default_value = "auto")]
    algorithm: TriangleAlgorithm,
    /// GPU kernel of binary-search: flat, flat-global, row or edge (for experiments).
    #[arg(long, default_value = "flat")]
    search_kernel: SearchKernel,
    /// GPU plan limits WARP_MAX,BLOCK_MAX[,GROUPS]: rows of out-degree up to WARP_MAX on the
    /// warp-per-row hash kernel, up to BLOCK_MAX on the block-per-row one, longer on the
    /// global bitmap; at most GROUPS work-groups per launch (for experiments; default
    /// 64,2048).
    #[arg(long, value_parser = PlanLimits::parse)]
    plan_limits: Option<PlanLimits>,
    /// Write per-node triangle counts and local clustering coefficients to this TSV file.
    #[arg(long)]
    per_vertex: Option<PathBuf>,
    /// How many timed counts (the median is reported), 1 to 100000.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    repeat: u64,
    /// Under mpirun: where each rank gets the rows its edges need: `replicate` (the whole
    /// graph on every rank), `partition` (its rows and the remote rows it needs, fetched
    /// once) or `auto` (replicate when the graph fits every device).
    #[arg(long)]
    layout: Option<Layout>,
    /// Under mpirun: how the ranks read and orient the graph. `host` (the default): the
    /// first rank of each host reads and orients it as one process does, with all the
    /// host's threads, while the host's other ranks start their devices, and passes each
    /// rank its rows through one shared-memory window (MPI_Win_allocate_shared): a host
    /// reads its input once. `whole`: every rank reads and orients all of it. `ranges`: each
    /// rank reads its byte range of an integer-id edge list or Matrix Market file and the
    /// ranks build and orient the graph together, each holding only its part (for hosts
    /// that cannot hold the whole graph). The counts do not depend on it.
    #[arg(long, value_enum)]
    read: Option<ReadChoice>,
}

mod distributed;

pub fn run(args: Args, job: &Job) -> Result<()> {
    if job.distributed() {
        return distributed::run(args, job);
    }
    if args.layout.is_some() || args.read.is_some() {
        return Err(Error::invalid(
            "option",
            "--layout and --read apply to a job of many processes (mpirun -np N trident \
             triangles …)",
        ));
    }
    // Every output is checked before any work; it is written at the end, or not at all.
    let files = Files::declare(&[Some(&args.path)], &[args.per_vertex.as_deref()])?;
    // The input is read and checked before the backends are probed.
    let t = Instant::now();
    let opts = read_options();
    let g = io::read_graph_limited(&args.path, &opts, &crate::env::read_options())?;
    let load = t.elapsed().as_secs_f64();
    crate::print_notes(g.notes());
    let b = select::open(args.backend)?;
    crate::outln!("backend: {b}")?;
    crate::with_backend!(&b, b => count(b, &g, &args, load, files))?;
    print_process(job)
}

/// The summary's last line: the seconds since the job started (rank 0's), with the start of
/// the backend, of MPI and everything else between the phases above.
fn print_process(job: &Job) -> Result<()> {
    crate::outln!(
        "process:       {:.4} s (since the start, output written)",
        job.seconds()
    )?;
    Ok(())
}

fn count<B: TriangleCount>(b: &B, g: &Graph, args: &Args, load: f64, files: Files) -> Result<()> {
    let t = Instant::now();
    let o = OrientedGraph::from_graph(g)?;
    let orient = t.elapsed().as_secs_f64();
    let stats = o.stats();
    let gpu = b.name() != "cpu";
    let alg = args.algorithm.resolve(&stats, gpu);
    let t = Instant::now();
    let d = b.upload_oriented(o)?;
    b.synchronize()?;
    let transfer = t.elapsed().as_secs_f64();
    let opts = TriangleOptions {
        per_node: args.per_vertex.is_some(),
        algorithm: alg,
        search: args.search_kernel,
        limits: args.plan_limits.unwrap_or_default(),
    };
    let mut times = Vec::new();
    let mut result = None;
    for _ in 0..args.repeat {
        let t = Instant::now();
        let r = b.count_oriented(&d, &opts)?;
        times.push(t.elapsed().as_secs_f64());
        if let Some(prev) = &result {
            if prev != &r {
                return Err(Error::backend(b.name(), "repeated counts differ"));
            }
        }
        result = Some(r);
    }
    let r = result.ok_or_else(|| Error::backend(b.name(), "no count"))?;
    let counting = median(times);
    print_graph(
        &args.path,
        (
            g.num_nodes(),
            g.num_edges() as u64,
            g.self_loops_dropped() as u64,
        ),
        stats.max_out,
        alg,
    )?;
    crate::outln!("triangles:     {}", r.total)?;
    crate::outln!("load:          {load:.4} s")?;
    crate::outln!("orientation:   {orient:.4} s")?;
    crate::outln!("transfer:      {transfer:.4} s")?;
    crate::outln!(
        "counting:      {counting:.4} s ({:.3e} edges/s; median of {})",
        g.num_edges() as f64 / counting.max(1e-12),
        args.repeat
    )?;
    crate::outln!(
        "total:         {:.4} s",
        load + orient + transfer + counting
    )?;
    if let (Some(path), Some(per)) = (&args.per_vertex, &r.per_node) {
        write_per_vertex(files, path, per, |v| (g.label(v), g.degree(v)))?;
    }
    Ok(())
}

/// The summary's lines on the input (one process and many): the file, the graph as
/// `(nodes, edges, self-loops dropped)`, its largest out-degree, the algorithm.
fn print_graph(
    path: &std::path::Path,
    (nodes, edges, loops): (usize, u64, u64),
    max_out: impl std::fmt::Display,
    alg: impl std::fmt::Display,
) -> Result<()> {
    crate::outln!("file:          {}", path.display())?;
    crate::outln!(
        "graph:         {nodes} nodes, {edges} edges ({loops} self-loops dropped); max out-degree \
         {max_out}"
    )?;
    crate::outln!("algorithm:     {alg}")?;
    Ok(())
}

/// Writes and commits the per-vertex file (node, degree, triangles, local clustering
/// coefficient; `node(v)` gives the label and degree of node `v`) and names it in the
/// summary (one process and rank 0 of many).
fn write_per_vertex(
    mut files: Files,
    path: &std::path::Path,
    per: &[u64],
    node: impl Fn(usize) -> (String, usize),
) -> Result<()> {
    files.write(path, |w| {
        writeln!(w, "node\tdegree\ttriangles\tclustering")?;
        for (v, &t) in per.iter().enumerate() {
            let (label, d) = node(v);
            let c = trident_core::triangles::clustering_coefficient(t, d);
            writeln!(w, "{label}\t{d}\t{t}\t{c}")?;
        }
        Ok(())
    })?;
    files.commit()?;
    crate::outln!("per-vertex:    {}", path.display())?;
    Ok(())
}

/// How `triangles` reads a graph: every input node is counted (as `cluster` clusters it): a
/// node whose only line is a self-loop is an isolated node with no triangles, not dropped.
fn read_options() -> io::EdgeListOptions {
    io::EdgeListOptions {
        loop_only_nodes: true,
        ..io::EdgeListOptions::default()
    }
}

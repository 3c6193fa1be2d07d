//! `trident triangles`: exact triangle count of a graph on a chosen backend, with the time
//! split into load, preprocessing (orientation, transfer) and counting.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use trident_core::triangles::OrientedGraph;
use trident_core::{io, Error, Graph, Result, TriangleAlgorithm, TriangleCount, TriangleOptions};

use crate::median;
use crate::select::{self, BackendChoice};

/// Count the triangles of a graph (Matrix Market or edge list; directed or duplicated edges
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
    /// Write per-node triangle counts and local clustering coefficients to this TSV file.
    #[arg(long)]
    per_vertex: Option<PathBuf>,
    /// How many timed counts (the median is reported).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
}

pub fn run(args: Args) -> Result<()> {
    let b = select::open(args.backend)?;
    println!("backend: {b}");
    let t = Instant::now();
    let g = io::read_graph_auto(&args.path)?;
    let load = t.elapsed().as_secs_f64();
    crate::print_notes(g.notes());
    crate::with_backend!(&b, b => count(b, &g, &args, load))
}

fn count<B: TriangleCount>(b: &B, g: &Graph, args: &Args, load: f64) -> Result<()> {
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
    };
    let mut times = Vec::new();
    let mut result = None;
    for _ in 0..args.repeat.max(1) {
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
    println!("file:          {}", args.path.display());
    println!(
        "graph:         {} nodes, {} edges ({} self-loops dropped); max out-degree {}",
        g.num_nodes(),
        g.num_edges(),
        g.self_loops_dropped(),
        stats.max_out
    );
    println!("algorithm:     {alg}");
    println!("triangles:     {}", r.total);
    println!("load:          {load:.4} s");
    println!("orientation:   {orient:.4} s");
    println!("transfer:      {transfer:.4} s");
    println!(
        "counting:      {counting:.4} s ({:.3e} edges/s; median of {})",
        g.num_edges() as f64 / counting.max(1e-12),
        args.repeat.max(1)
    );
    println!(
        "total:         {:.4} s",
        load + orient + transfer + counting
    );
    if let (Some(path), Some(per)) = (&args.per_vertex, &r.per_node) {
        let cc = trident_core::triangles::local_clustering(g, per);
        let io_err = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let f = std::fs::File::create(path).map_err(io_err)?;
        let mut w = std::io::BufWriter::new(f);
        writeln!(w, "node\tdegree\ttriangles\tclustering").map_err(io_err)?;
        for (v, (&t, c)) in per.iter().zip(&cc).enumerate() {
            writeln!(w, "{}\t{}\t{t}\t{c}", g.label(v), g.degree(v)).map_err(io_err)?;
        }
        w.flush().map_err(io_err)?;
        println!("per-vertex:    {}", path.display());
    }
    Ok(())
}

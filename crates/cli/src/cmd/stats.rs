//! `trident stats`: load a graph and print its size.

use std::path::{Path, PathBuf};
use std::time::Instant;

use trident_core::{io, Result};

use crate::select::BackendChoice;

/// Load a graph (Matrix Market, METIS or edge list) and print its size.
#[derive(clap::Args)]
pub struct Args {
    /// The graph file.
    path: PathBuf,
    /// Accepted for uniformity; loading runs on the CPU.
    #[arg(long, value_enum, default_value = "auto")]
    #[allow(dead_code)]
    backend: BackendChoice,
}

pub fn run(args: Args) -> Result<()> {
    stats(&args.path)
}

fn stats(path: &Path) -> Result<()> {
    let t = Instant::now();
    let g = io::read_graph_limited(
        path,
        &io::EdgeListOptions::default(),
        &crate::env::read_options(),
    )?;
    let secs = t.elapsed().as_secs_f64();
    crate::print_notes(g.notes());
    let max_deg = (0..g.num_nodes()).map(|u| g.degree(u)).max().unwrap_or(0);
    crate::outln!("file:              {}", path.display())?;
    crate::outln!("nodes:             {}", g.num_nodes())?;
    crate::outln!("edges:             {}", g.num_edges())?;
    let b = g.build_stats();
    crate::outln!("edge entries read: {}", b.entries)?;
    crate::outln!("duplicates merged: {}", b.duplicates)?;
    crate::outln!("self-loops dropped: {}", g.self_loops_dropped())?;
    crate::outln!("isolated nodes:    {}", b.isolated_nodes)?;
    crate::outln!("absent ids:        {}", b.absent_ids)?;
    crate::outln!("max degree:        {max_deg}")?;
    crate::outln!("weighted:          {}", g.weights().is_some())?;
    crate::outln!("labelled:          {}", g.labels().is_some())?;
    crate::outln!("load time:         {secs:.3} s")?;
    Ok(())
}

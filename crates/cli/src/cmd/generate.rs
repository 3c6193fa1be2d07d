//! `trident generate`: synthetic graphs written as edge lists.

use std::path::PathBuf;
use std::time::Instant;

use trident_core::{generate, Result};

use crate::files::Files;

/// Which generator.
#[derive(clap::Subcommand)]
pub enum Args {
    /// Graph500 Kronecker graph (A = 0.57, B = C = 0.19): 2^scale nodes,
    /// edge-factor * 2^scale edges (duplicates and self-loops kept, as drawn), written as a
    /// SNAP edge list; also prints the distinct undirected edges, duplicates, self-loops and
    /// nodes without edges (what a reader's graph has). Reproducible for a seed, whatever
    /// the number of threads.
    Kronecker {
        /// log2 of the number of nodes.
        #[arg(long)]
        scale: u32,
        /// Edges per node.
        #[arg(long, default_value_t = 16)]
        edge_factor: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Planted-partition graph (C communities of nearly equal size, mean degree D, a fraction
    /// MU of the edges between communities; node numbers shuffled), written as a SNAP edge
    /// list of distinct edges without self-loops, with the ground truth optionally written
    /// for `trident cluster --eval`. Requests that cannot be met are refused.
    /// Reproducible for a seed, whatever the number of threads.
    Planted {
        /// Nodes.
        #[arg(long)]
        nodes: usize,
        /// Communities (at least 2 nodes each).
        #[arg(long)]
        communities: usize,
        /// Mean degree: nodes * degree / 2 distinct edges.
        #[arg(long, default_value_t = 20.0)]
        degree: f64,
        /// Fraction of the edges drawn between communities, in [0, 1].
        #[arg(long, default_value_t = 0.2)]
        mixing: f64,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file (edge list).
        #[arg(short, long)]
        output: PathBuf,
        /// Also write the communities here: one per line, node numbers separated by spaces.
        #[arg(long, value_name = "FILE")]
        truth: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<()> {
    match args {
        Args::Kronecker {
            scale,
            edge_factor,
            seed,
            output,
        } => {
            // The output is checked before any work; it is written whole, or not at all.
            let mut files = Files::declare(&[], &[Some(&output)])?;
            let t = Instant::now();
            let k = generate::kronecker(scale, edge_factor, seed)?;
            let gen = t.elapsed().as_secs_f64();
            let t = Instant::now();
            files.write(&output, |w| {
                k.write_snap_to(
                    w,
                    &format!(
                        "Graph500 Kronecker graph: scale {scale}, edge factor {edge_factor}, seed {seed} (trident generate)"
                    ),
                )
            })?;
            files.commit()?;
            crate::outln!(
                "{}: {} nodes, {} edges as drawn; generated in {gen:.3} s, written in {:.3} s",
                output.display(),
                k.nodes,
                k.src.len(),
                t.elapsed().as_secs_f64()
            )?;
            // What a reader of the file gets: duplicates merged, self-loops dropped, nodes
            // without edges absent.
            match k.tally() {
                Ok(c) => crate::outln!(
                    "as a simple graph: {} distinct undirected edges ({} duplicates and {} \
                     self-loops in the list, merged and dropped by readers); {} of the {} \
                     nodes have no edge and are absent from the file",
                    c.distinct,
                    c.duplicates,
                    c.self_loops,
                    c.nodes_without_edges,
                    k.nodes
                )?,
                Err(e) => crate::print_notes(&[format!(
                    "the edge list keeps duplicates and self-loops as drawn (readers merge and \
                     drop them); they were not counted: {e}"
                )]),
            }
            Ok(())
        }
        Args::Planted {
            nodes,
            communities,
            degree,
            mixing,
            seed,
            output,
            truth,
        } => {
            // Both outputs are checked before any work (writable, not the same file); both are
            // written at the end, or neither.
            let mut files = Files::declare(&[], &[Some(&output), truth.as_deref()])?;
            let o = generate::PlantedOptions {
                nodes,
                communities,
                degree,
                mixing,
                seed,
            };
            let t = Instant::now();
            let p = generate::planted(&o)?;
            let gen = t.elapsed().as_secs_f64();
            let t = Instant::now();
            files.write(&output, |w| {
                p.edges.write_snap_to(
                    w,
                    &format!(
                        "planted partition: {nodes} nodes, {communities} communities, degree \
                         {degree}, mixing {mixing}, seed {seed} (trident generate)"
                    ),
                )
            })?;
            if let Some(path) = &truth {
                files.write(path, |w| p.write_communities_to(w))?;
            }
            files.commit()?;
            crate::outln!(
                "{}: {} nodes, {} edges, {communities} communities{}; generated in {gen:.3} s, \
                 written in {:.3} s",
                output.display(),
                nodes,
                p.edges.src.len(),
                truth
                    .as_ref()
                    .map_or(String::new(), |t| format!(" (written to {})", t.display())),
                t.elapsed().as_secs_f64()
            )?;
            Ok(())
        }
    }
}

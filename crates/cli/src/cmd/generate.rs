//! `trident generate`: synthetic graphs written as edge lists.

use std::path::PathBuf;
use std::time::Instant;

use trident_core::{generate, Result};

/// Which generator.
#[derive(clap::Subcommand)]
pub enum Args {
    /// Graph500 Kronecker graph (A = 0.57, B = C = 0.19): 2^scale nodes,
    /// edge-factor * 2^scale edges (duplicates and self-loops kept, as drawn), written as a
    /// SNAP edge list. Reproducible for a seed, whatever the number of threads.
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
}

pub fn run(args: Args) -> Result<()> {
    match args {
        Args::Kronecker {
            scale,
            edge_factor,
            seed,
            output,
        } => {
            let t = Instant::now();
            let k = generate::kronecker(scale, edge_factor, seed)?;
            let gen = t.elapsed().as_secs_f64();
            let t = Instant::now();
            k.write_snap(
                &output,
                &format!(
                    "Graph500 Kronecker graph: scale {scale}, edge factor {edge_factor}, seed {seed} (trident generate)"
                ),
            )?;
            println!(
                "{}: {} nodes, {} edges; generated in {gen:.3} s, written in {:.3} s",
                output.display(),
                k.nodes,
                k.src.len(),
                t.elapsed().as_secs_f64()
            );
            Ok(())
        }
    }
}

//! `trident`: run Trident's algorithms on files, on any backend.

mod cmd;
mod select;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use trident_core::Result;

#[derive(Parser)]
#[command(name = "trident", version, about = "GPU and CPU parallel algorithms")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the backends and the devices they find.
    Info(cmd::info::Args),
    /// Load a graph (Matrix Market or edge list) and print its size.
    Stats(cmd::stats::Args),
    /// y = A x with A read from a file (converted to ELLPACK-R) and x = all ones;
    /// checks y against the reference and reports the time per product.
    Spmv(cmd::spmv::Args),
    /// Count the triangles of a graph exactly; prints the count and the time split into load,
    /// preprocessing (orientation, transfer) and counting.
    Triangles(cmd::triangles::Args),
    /// Generate a synthetic graph (Graph500 Kronecker) as an edge list.
    #[command(subcommand)]
    Generate(cmd::generate::Args),
    /// C = A B for two .npy matrices (tiled, Strassen or Winograd); checks C against the
    /// f64 reference and reports the time and GFLOP/s.
    Matmul(cmd::matmul::Args),
    /// Singular values (and vectors) of a dense matrix (`.npy` or Matrix Market) by one-sided
    /// block Jacobi; checks the decomposition and reports sweeps and time.
    Svd(cmd::svd::Args),
    /// Cluster a network with regularized Markov clustering (R-MCL); writes mcl's format (one
    /// cluster per line, tab-separated labels, largest first), optionally scored against
    /// gold-standard complexes (--eval).
    Cluster(cmd::cluster::Args),
}

/// Element type of a computation.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Precision {
    F32,
    F64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(a) => cmd::info::run(a),
        Command::Stats(a) => cmd::stats::run(a),
        Command::Spmv(a) => cmd::spmv::run(a),
        Command::Triangles(a) => cmd::triangles::run(a),
        Command::Generate(a) => cmd::generate::run(a),
        Command::Matmul(a) => cmd::matmul::run(a),
        Command::Svd(a) => cmd::svd::run(a),
        Command::Cluster(a) => cmd::cluster::run(a),
    };
    report(result)
}

/// Exit status 0, or 1 with the error and its sources on stderr.
fn report(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", trident_core::testing::Report(&e));
            ExitCode::FAILURE
        }
    }
}

/// Prints a reader's remarks (e.g. a skipped header line) on stderr.
pub(crate) fn print_notes(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}

/// The median of timings (0 for none).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

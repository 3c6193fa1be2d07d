//! `trident`: run Trident's algorithms on files, on any backend.

// `println!` and `eprintln!` are shadowed for every module below (declared after these
// definitions), so that no printing in this crate can panic, whoever writes it: `println!`
// goes through the checked writer (`out`: a closed pipe ends the printing quietly, any other
// failure is recorded and reported as the command's error at the end), `eprintln!` ignores a
// failure to write on standard error. Prefer `outln!(…)?` where an error can be returned.
#[allow(unused_macros)] // a safety net: commands print with `outln!`
macro_rules! println {
    () => {
        $crate::out::print_or_record(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::out::print_or_record(format_args!("{}\n", format_args!($($t)*)))
    };
}

macro_rules! eprintln {
    () => {
        $crate::out::note(format_args!(""))
    };
    ($($t:tt)*) => {
        $crate::out::note(format_args!($($t)*))
    };
}

mod cmd;
mod env;
mod files;
mod job;
mod out;
mod select;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use trident_core::{Error, Result};

#[derive(Parser)]
#[command(
    name = "trident",
    version,
    about = "GPU and CPU parallel algorithms",
    after_help = "Threads: the CPU work (the CPU backend, reading and writing files, checks) runs on \
                  a rayon pool of --threads threads; without it, of RAYON_NUM_THREADS threads if \
                  that environment variable is set, else one per logical CPU.\n\nOutput files: \
                  every command checks all its outputs before any work (writable, not an input, \
                  not another output) and writes each through a temporary file beside it, put in \
                  place only when the command succeeds."
)]
struct Cli {
    /// Threads of the CPU work (default: RAYON_NUM_THREADS, else one per logical CPU).
    #[arg(long, global = true, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=MAX_THREADS))]
    threads: Option<u32>,
    #[command(subcommand)]
    command: Command,
}

/// The most `--threads` accepted.
const MAX_THREADS: i64 = 4096;

#[derive(Subcommand)]
enum Command {
    /// List the backends and the devices they find.
    Info(cmd::info::Args),
    /// Load a graph (Matrix Market, METIS or edge list) and print its size.
    Stats(cmd::stats::Args),
    /// y = A x with A read from a file (converted to ELLPACK-R) and x = all ones;
    /// checks y against the reference and reports the time per product.
    Spmv(cmd::spmv::Args),
    /// Count the triangles of a graph exactly; prints the count and the time split into load,
    /// preprocessing (orientation, transfer) and counting.
    Triangles(cmd::triangles::Args),
    /// Generate a synthetic graph as an edge list: `generate kronecker` (Graph500) or
    /// `generate planted` (planted partition, with its ground-truth communities).
    #[command(subcommand)]
    Generate(cmd::generate::Args),
    /// C = A B for two .npy matrices (tiled, Strassen or Winograd); checks C against the
    /// f64 reference and reports the time and GFLOP/s.
    ///
    /// NaN and Inf propagate as in the classical product (a non-finite A[i][p] reaches row i
    /// of C only, a non-finite B[p][j] column j only): inputs holding any run the classical
    /// product instead of a Strassen-type algorithm, and the summary says so.
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
    env::nccl_defaults();
    let cli = parse();
    if let Err(e) = env::gpu_libraries().and_then(|()| start_threads(cli.threads)) {
        return report(Err(e));
    }
    let job = match job::Job::start() {
        Ok(j) => j,
        Err(e) => return report(Err(e)),
    };
    let result = match cli.command {
        Command::Triangles(a) => cmd::triangles::run(a, &job),
        Command::Info(a) => job.single("info").and_then(|()| cmd::info::run(a)),
        Command::Stats(a) => job.single("stats").and_then(|()| cmd::stats::run(a)),
        Command::Spmv(a) => job.single("spmv").and_then(|()| cmd::spmv::run(a)),
        Command::Generate(a) => job.single("generate").and_then(|()| cmd::generate::run(a)),
        Command::Matmul(a) => job.single("matmul").and_then(|()| cmd::matmul::run(a)),
        Command::Svd(a) => job.single("svd").and_then(|()| cmd::svd::run(a)),
        Command::Cluster(a) => cmd::cluster::run(a, &job),
    };
    let result = result.and_then(|()| out::flush());
    if let Err(e) = &result {
        job.fail(e);
    }
    let code = report(result);
    drop(job);
    code
}

/// The command line, with negative numbers accepted as option values everywhere (`--balance
/// -0.5` reaches the option's range check instead of being taken for a flag).
fn parse() -> Cli {
    fn negatives(c: clap::Command) -> clap::Command {
        c.mut_args(|a| {
            if a.get_action().takes_values() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(negatives)
    }
    let matches = match negatives(Cli::command()).try_get_matches() {
        Ok(m) => m,
        // --help and --version go through the checked writer too (a full disk is an error).
        Err(e) if !e.use_stderr() => {
            use std::io::IsTerminal;
            let text = e.render();
            let shown = if std::io::stdout().is_terminal() {
                text.ansi().to_string()
            } else {
                text.to_string()
            };
            let code = report(out::print(format_args!("{shown}")).and_then(|()| out::flush()));
            std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 });
        }
        Err(e) => e.exit(),
    };
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Builds rayon's global pool with `threads` threads (else rayon's default:
/// RAYON_NUM_THREADS, else one per logical CPU).
fn start_threads(threads: Option<u32>) -> Result<()> {
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n as usize)
            .build_global()
            .map_err(|e| Error::invalid("option", format!("--threads {n}: {e}")))?;
    }
    Ok(())
}

/// Exit status 0, or 1 with the error and its sources on stderr.
fn report(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::errln!("error: {}", trident_core::testing::Report(&e));
            if let Some(hint) = env::hint(&e) {
                crate::errln!("note: {hint}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Prints a reader's remarks (e.g. a skipped header line) on stderr.
pub(crate) fn print_notes(notes: &[String]) {
    for n in notes {
        crate::errln!("note: {n}");
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

//! Trident's developer tasks, run as `cargo xtask <command>` (an alias in `.cargo/config.toml`).
//!
//! One module per subcommand. `validate` and `build-kernels` link the backends and the OpenCL
//! loader, behind the feature `backends`; a plain `cargo xtask` (which `xtask test` must be, to
//! build on a fresh machine before the loader is installed) re-runs itself with that feature
//! for those two commands.

mod bench;
mod bundle;
#[cfg(feature = "backends")]
mod kernels;
mod layout;
mod mutants;
/// How the CUDA backend's build compiles kernels (shared with `crates/backend-cuda/build.rs`).
#[path = "../../crates/backend-cuda/nvcc.rs"]
#[allow(dead_code)]
mod nvcc;
mod oclgrind;
mod test;
mod util;
#[cfg(feature = "backends")]
mod validate;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  build-kernels [--require-ptx]
      Compile every kernels/cuda/*.cu to PTX (compute_90 and compute_75) into
      <target>/kernels/ with nvcc ($NVCC, else .tools/cuda/nvidia/cu13/bin/nvcc, else PATH),
      and build every kernels/opencl/*.cl on every OpenCL device present. Without nvcc the
      CUDA part is skipped, unless --require-ptx.

  validate [--backend NAME]... [--json FILE]
      Run the SpMV conformance checks on every backend that starts (cpu, cuda, opencl) and
      print a backend x check table. REQUIRE_GPU=1 makes a missing CUDA or OpenCL GPU
      device a failure.

  bench [ALGORITHM] [--backend NAME]... [--torch JSON] [-- CRITERION_ARGS...]
      Run the criterion benchmarks (`cargo bench -p trident-benches`; ALGORITHM picks one
      bench file, e.g. spmv) on the chosen backends, then write the report (bench-report)
      for <target>/criterion.

  bench-report <CRITERION_DIR> [--torch JSON]
      Summarise criterion results: <dir>/report.md (one table per bench file, medians and
      GB/s, speed-up against the cpu or the torch/cuSPARSE baseline) and <dir>/report.svg.

  layout [--root DIR]
      Check the shape of the source tree, without building: no source file outside
      kernels/ over 1,000 lines, no import cycle between the modules of a crate, no
      TRIDENT_* variable read in library code, no block of 6+ lines repeated between the
      CUDA and OpenCL crates, each CLI command in the module of its name. Today's
      violations are allowlisted in xtask/src/layout.rs (each with the part of issue 24
      that removes it); a new one fails. --root: check the tree at DIR instead.

  test [--no-install] [--no-lint] [--no-races] [--no-mutants] [-- TEST_ARGS...]
      What CI runs: `layout`, install what is missing (apt: ocl-icd-opencl-dev,
      pocl-opencl-icd, oclgrind; pip: CUDA 13.0 nvcc into .tools/cuda), then cargo fmt
      --check, cargo clippy --all-targets -D warnings, cargo test --workspace with CI=true
      (missing data fails), REQUIRE_OPENCL=1 (a missing OpenCL device fails),
      TRIDENT_REQUIRE_PTX=1 and the seeds pinned (TRIDENT_SEED, PROPTEST_RNG_SEED:
      xtask/src/test.rs CI_SEED), then `races` and `mutants --quick`.

  mutants [--quick] [--budget SECS] [--only NAME]... [--timeout SECS]
      Plant every kernel mutation of xtask/mutants/*.toml and fail unless the conformance
      suite catches each one: the OpenCL ones here (PoCL), on the prebuilt conformance test
      binary with the mutated source in a kernel folder (TRIDENT_KERNEL_DIR), under a
      timeout (a hang counts as caught). Checks every list first (each `find` occurs once,
      each kernel is an entry point; in a full run at least 3 mutants per kernel file and
      every entry point covered) and that the unmutated suite passes. --quick: a round-robin
      subset within 180 s (--budget), what `xtask test` runs. The CUDA ones run on the GPU
      machine: `bundle` compiles them, `run.sh mutants` runs them.

  races
      The race-detector step of `test` alone: small OpenCL tests under Oclgrind
      --data-races (its platform picked by TRIDENT_OPENCL_PLATFORM=Oclgrind); fails on any
      report, failure, or a test that does not finish in 240 s.

  bundle
      Build the stripped release test binaries, the CLI, xtask itself and the benchmarks
      into <target>/bundle with run.sh, for a GPU machine without Rust.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match cmd.as_str() {
        "build-kernels" | "validate" | "kernel-tables" => with_backends(cmd, rest),
        "bench" => bench::run(rest),
        "bench-report" => bench::report_cmd(rest),
        "bundle" => bundle::run(rest),
        "layout" => layout::run(rest),
        "test" => test::run(rest),
        "mutants" => mutants::run(rest),
        "races" => test::races(rest),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(util::usage(format!("unknown command `{other}`"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(util::Error::Usage(msg)) => {
            eprintln!("xtask {cmd}: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(util::Error::Failed(msg)) => {
            eprintln!("xtask {cmd}: {msg}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(feature = "backends")]
fn with_backends(cmd: &str, args: &[String]) -> util::Result {
    match cmd {
        "build-kernels" => kernels::run(args),
        "kernel-tables" => mutants::print_kernel_tables(),
        _ => validate::run(args),
    }
}

/// Re-runs this command through `cargo run` with the `backends` feature.
#[cfg(not(feature = "backends"))]
fn with_backends(cmd: &str, args: &[String]) -> util::Result {
    let status = util::xtask_with_backends()
        .arg(cmd)
        .args(args)
        .status()
        .map_err(|e| util::fail(format!("running cargo: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(util::fail(format!("{cmd} failed ({status})")))
    }
}

//! `xtask test`: what CI runs (`.ci/run`). Checks the layout of the tree (`xtask layout`),
//! installs what the tests need, idempotently, then runs `cargo fmt --check`, `cargo clippy --all-targets -D warnings`, every test of the
//! workspace, a race-detector pass over small OpenCL conformance tests under Oclgrind, and a
//! time-bounded subset of the kernel mutants (`xtask mutants --quick`).
//!
//! Nothing can pass by skipping: the tests run with `CI=true` (data tests fail without
//! `../shared/data`, see `trident_core::testing`), `REQUIRE_OPENCL=1` (the OpenCL tests fail
//! without an OpenCL device: PoCL here) and `TRIDENT_REQUIRE_PTX=1` (the CUDA kernels must
//! compile). Random cases are pinned: `TRIDENT_SEED` and `PROPTEST_RNG_SEED` are [`CI_SEED`]
//! unless set (rotate it on purpose by editing it), and failing cases are replayed from the
//! committed `proptest-regressions/` files.
//!
//! What it installs, each only when missing:
//! - Debian's `ocl-icd-opencl-dev` (the OpenCL loader to link against), `pocl-opencl-icd`
//!   (OpenCL on the CPU, so the OpenCL backend's tests run for real) and `oclgrind` (the
//!   race detector), and `openmpi-bin`, `libopenmpi-dev` and `libclang-dev` (MPI for
//!   `trident-mpi` and `mpirun` for its tests), with apt-get;
//! - the pinned CUDA 13.0 `nvcc` from PyPI into `.tools/cuda` (pip `--target`), so the CUDA
//!   backend's kernels compile to PTX on a machine without a GPU.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{cargo, fail, is_executable, usage, workspace_root, Context, Result};

/// Debian packages the OpenCL backend's tests need.
const APT_PACKAGES: [&str; 6] = [
    "ocl-icd-opencl-dev",
    "pocl-opencl-icd",
    "oclgrind",
    // MPI for `trident-mpi` (the `mpi` crate's bindgen needs libclang) and `mpirun` for the
    // tests of `mpirun -np N trident …`.
    "openmpi-bin",
    "libopenmpi-dev",
    "libclang-dev",
];

/// The seed of every random test case in CI (`TRIDENT_SEED`, `PROPTEST_RNG_SEED`): a
/// failure found in CI is found again on the next run. Rotate it on purpose, by editing it.
pub const CI_SEED: u64 = 20_261_126;

/// The OpenCL tests run under Oclgrind's race detector, as (test target of trident-opencl,
/// exact test name): small cases of the SpMV, triangle, R-MCL (local-memory column pass) and
/// GEMM / Strassen kernels. (The SVD module does not load in Oclgrind 21.10: see
/// `crates/backend-opencl/tests/races.rs`.)
const RACE_TESTS: [(&str, &str); 5] = [
    ("conformance", "spmv::spmv_edge_cases_f32"),
    ("conformance", "triangles::triangles_empty_and_tiny"),
    ("conformance", "triangles::triangles_random_vs_brute_force"),
    ("conformance", "mcl::mcl_hand_checked_f32"),
    ("races", "race_matmul_small"),
];

/// Time limit of each race-detector run, in seconds (Oclgrind interprets every work-item).
const RACE_LIMIT_S: u64 = 240;

/// The pinned nvcc (CUDA 13.0, the reference GPU machine's driver version) and what it needs.
const PIP_PACKAGES: [&str; 4] = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.88",
    "nvidia-nvvm==13.0.88",
];

/// Where pip puts nvcc under `.tools/cuda`.
const NVCC_IN_TOOLS: &str = "nvidia/cu13/bin/nvcc";

pub fn run(args: &[String]) -> Result {
    let mut install = true;
    let mut lint = true;
    let mut races = true;
    let mut mutants = true;
    let mut extra: Vec<String> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a.as_str() {
            "--no-install" => install = false,
            "--no-lint" => lint = false,
            "--no-races" => races = false,
            "--no-mutants" => mutants = false,
            "--" => {
                extra.extend(args[i + 1..].iter().cloned());
                break;
            }
            other => return Err(usage(format!("unexpected argument `{other}`"))),
        }
    }
    let root = workspace_root();
    // First, since it is fast and needs nothing installed: the shape of the tree.
    eprintln!("==== xtask layout");
    crate::layout::check(&root)?;
    if install {
        install_apt()?;
        install_nvcc(&root)?;
    }
    if lint {
        step(
            "cargo fmt --check",
            cargo().args(["fmt", "--all", "--check"]),
        )?;
        step(
            "cargo clippy",
            cargo().args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ]),
        )?;
    }
    // The fuzz targets (a separate workspace, for cargo-fuzz) must at least build: checked
    // on stable without cargo-fuzz, in a target folder of their own so reruns are fast.
    let fuzz = root.join("crates/core/fuzz");
    step(
        "cargo check (fuzz targets)",
        cargo()
            .args(["check", "--bins", "--manifest-path"])
            .arg(fuzz.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(root.join("target/fuzz-check")),
    )?;
    let mut test = cargo();
    // With MPI (`trident-cli/mpi`), so that `crates/cli/tests/mpi.rs` runs under mpirun.
    test.args(["test", "--workspace", "--features", "trident-cli/mpi"]);
    ci_env(&mut test);
    if !extra.is_empty() {
        test.arg("--").args(&extra);
    }
    step("cargo test", &mut test)?;
    if races {
        race_step()?;
    }
    if mutants {
        let start = std::time::Instant::now();
        eprintln!("==== xtask mutants --quick");
        crate::mutants::run(&["--quick".to_string()])?;
        eprintln!(
            "==== xtask mutants --quick took {:.0} s",
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// What every test run of CI gets: nothing may pass by skipping, and seeds are pinned.
fn ci_env(cmd: &mut Command) {
    cmd.env("TRIDENT_REQUIRE_PTX", "1")
        .env("REQUIRE_OPENCL", "1")
        .env("REQUIRE_MPI", "1")
        .env("CI", std::env::var("CI").unwrap_or_else(|_| "true".into()));
    for var in ["TRIDENT_SEED", "PROPTEST_RNG_SEED"] {
        if std::env::var_os(var).is_none() {
            cmd.env(var, CI_SEED.to_string());
        }
    }
}

/// `xtask races`: the race step alone.
pub fn races(args: &[String]) -> Result {
    if let Some(a) = args.first() {
        return Err(usage(format!("unexpected argument `{a}`")));
    }
    race_step()
}

/// The OpenCL tests of [`RACE_TESTS`] under Oclgrind's race detector: fails on any report, a
/// failed test, or a test that does not finish within [`RACE_LIMIT_S`].
fn race_step() -> Result {
    eprintln!("==== race detector (Oclgrind) on small OpenCL conformance tests");
    let Some(vendors) = crate::oclgrind::vendors()? else {
        return Err(fail(
            "Oclgrind is not installed (apt-get install oclgrind; `xtask test` does it)",
        ));
    };
    let log_dir = crate::util::target_dir().join("oclgrind");
    std::fs::create_dir_all(&log_dir).context("creating the Oclgrind log folder")?;
    let mut failures = Vec::new();
    let mut binaries = std::collections::BTreeMap::new();
    for (target, t) in RACE_TESTS {
        if !binaries.contains_key(target) {
            let b = crate::mutants::build_test_binary("trident-opencl", target)?;
            binaries.insert(target, b);
        }
        let log = log_dir.join(format!("{}.log", t.replace("::", "-")));
        let mut cmd = Command::new(&binaries[target]);
        crate::oclgrind::configure(&mut cmd, &vendors, &log);
        ci_env(&mut cmd);
        cmd.args([t, "--exact"])
            .current_dir(crate::util::workspace_root().join("crates/backend-opencl"));
        let start = std::time::Instant::now();
        let out_path = log.with_extension("out");
        let out = std::fs::File::create(&out_path).context("creating the test output file")?;
        let err = out.try_clone().context("duplicating a file handle")?;
        let (status, timed_out) = crate::mutants::wait_timeout(
            cmd.stdout(out).stderr(err),
            std::time::Duration::from_secs(RACE_LIMIT_S),
        )?;
        let reports = crate::oclgrind::reports(&log);
        let output = std::fs::read_to_string(&out_path).unwrap_or_default();
        let verdict = if !reports.is_empty() {
            format!("{} REPORTS, first: {}", reports.len(), reports[0])
        } else if timed_out {
            format!("DID NOT FINISH in {RACE_LIMIT_S} s")
        } else if !status.is_some_and(|s| s.success()) {
            format!("FAILED (see {})", out_path.display())
        } else if !output.contains("test result: ok. 1 passed") {
            format!("DID NOT RUN the test (see {})", out_path.display())
        } else {
            "clean".to_string()
        };
        eprintln!(
            "  {t:<40} {verdict} ({:.0} s; log {})",
            start.elapsed().as_secs_f64(),
            log.display()
        );
        if verdict != "clean" {
            failures.push(format!("{t}: {verdict}"));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(fail(format!(
            "the race detector failed: {}",
            failures.join("; ")
        )))
    }
}

/// Runs `cmd`, failing with `what` if it does not succeed.
fn step(what: &str, cmd: &mut Command) -> Result {
    eprintln!("==== {what}");
    let status = cmd.status().context(format!("running {what}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(fail(format!("{what} failed ({status})")))
    }
}

/// True if dpkg says `package` is installed.
fn dpkg_installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

/// Installs the missing [`APT_PACKAGES`] (a no-op when all are there).
fn install_apt() -> Result {
    if Command::new("dpkg-query")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("xtask test: no dpkg here; make sure an OpenCL loader (and PoCL) is installed");
        return Ok(());
    }
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .copied()
        .filter(|p| !dpkg_installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("==== apt-get install {}", missing.join(" "));
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut install = vec!["install", "-y", "-q", "--no-install-recommends"];
    install.extend(&missing);
    if apt(&install) || (apt(&["update", "-q"]) && apt(&install)) {
        Ok(())
    } else {
        Err(fail(format!(
            "could not apt-get install {} (run as root, or install them yourself)",
            missing.join(" ")
        )))
    }
}

/// Installs the pinned nvcc into `.tools/cuda` unless it is there.
fn install_nvcc(root: &Path) -> Result {
    let tools = root.join(".tools/cuda");
    if is_executable(&tools.join(NVCC_IN_TOOLS)) {
        return Ok(());
    }
    eprintln!("==== pip install nvcc into {}", tools.display());
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .args(["-m", "pip", "--version"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or_else(|| fail("installing nvcc needs python3 with pip"))?;
    let status = Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
        .arg(&tools)
        .args(PIP_PACKAGES)
        .status()
        .context("running pip")?;
    if !status.success() || !is_executable(&tools.join(NVCC_IN_TOOLS)) {
        return Err(fail(format!(
            "pip could not install nvcc into {} ({status})",
            tools.display()
        )));
    }
    Ok(())
}

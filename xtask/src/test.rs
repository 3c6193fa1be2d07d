//! `xtask test`: what CI runs (`.ci/run`). Installs what the tests need, idempotently, then
//! runs `cargo fmt --check`, `cargo clippy --all-targets -D warnings` and every test of the
//! workspace with PTX compilation required, and with `REQUIRE_DATA=1` where `../shared/data`
//! is beside the checkout (data tests then fail instead of skipping).
//!
//! What it installs, each only when missing:
//! - Debian's `ocl-icd-opencl-dev` (the OpenCL loader to link against) and `pocl-opencl-icd`
//!   (OpenCL on the CPU, so the OpenCL backend's tests run for real), with apt-get;
//! - the pinned CUDA 13.0 `nvcc` from PyPI into `.tools/cuda` (pip `--target`), so the CUDA
//!   backend's kernels compile to PTX on a machine without a GPU.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{cargo, fail, is_executable, usage, workspace_root, Context, Result};

/// Debian packages the OpenCL backend's tests need.
const APT_PACKAGES: [&str; 2] = ["ocl-icd-opencl-dev", "pocl-opencl-icd"];

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
    let mut extra: Vec<String> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a.as_str() {
            "--no-install" => install = false,
            "--no-lint" => lint = false,
            "--" => {
                extra.extend(args[i + 1..].iter().cloned());
                break;
            }
            other => return Err(usage(format!("unexpected argument `{other}`"))),
        }
    }
    let root = workspace_root();
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
    test.args(["test", "--workspace"])
        .env("TRIDENT_REQUIRE_PTX", "1");
    // Where the shared data sits beside the checkout (as in CI), data tests must not skip.
    if root.join("../shared/data/graphs.tsv").is_file()
        && std::env::var_os("REQUIRE_DATA").is_none()
    {
        eprintln!("xtask test: ../shared/data present: REQUIRE_DATA=1");
        test.env("REQUIRE_DATA", "1");
    }
    if !extra.is_empty() {
        test.arg("--").args(&extra);
    }
    step("cargo test", &mut test)
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

//! The test harness's configuration, read from the environment in this one module: what the
//! workspace's tests, the conformance suite and the benchmarks take from the environment to
//! decide between running, skipping and failing, where the shared data and mutated kernels
//! are, and how random cases are seeded. It is test configuration, not library behaviour:
//! no algorithm, reader or backend reads these (the library reads no environment variable;
//! the `trident` command reads its own in `crates/cli/src/env.rs`).
//!
//! | variable | effect |
//! |---|---|
//! | `REQUIRE_GPU=1` | a missing GPU (CUDA device, OpenCL GPU) fails the test instead of skipping it |
//! | `REQUIRE_OPENCL=1` | a missing OpenCL device of any type (PoCL counts) fails the test |
//! | `REQUIRE_DATA=1` / `0` | a missing shared data folder fails / skips (default: fails in CI) |
//! | `CI` | set to anything but ``, `0`, `false`: in CI (see [`in_ci`]) |
//! | `TRIDENT_DATA` | the shared data folder (else found walking up from the working directory) |
//! | `TRIDENT_KERNEL_DIR` | kernel files the test backends load instead of their embedded ones (`cargo xtask mutants`) |
//! | `TRIDENT_KERNEL_LOG` | file the CUDA test backend appends every launched kernel to (`run.sh sanitize`) |
//! | `TRIDENT_CUDA_LIBRARY`, `TRIDENT_OPENCL_LIBRARY` | the GPU runtime the GPU crates' conformance tests load ([`gpu_library`]; `/nonexistent` stands for a machine without it) |
//! | `TRIDENT_SEED` | seed of the conformance suite's random cases (else from the clock) |
//! | `PROPTEST_CASES` | how many random cases each property check runs |

use std::path::PathBuf;

/// True when the environment variable `CI` is set to anything but ``, `0` or `false` (as CI
/// services set `CI=true`; `cargo xtask test` sets it too).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "False"))
}

/// True when `REQUIRE_OPENCL=1`: a missing OpenCL device of any type fails the test.
pub fn require_opencl() -> bool {
    std::env::var("REQUIRE_OPENCL").is_ok_and(|v| v == "1")
}

/// `TRIDENT_KERNEL_DIR`: a folder of kernel files that the test backends load instead of
/// their embedded kernels (what `cargo xtask mutants` plants its mutants in), or `None`.
pub fn kernel_dir() -> Option<PathBuf> {
    std::env::var_os("TRIDENT_KERNEL_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// `TRIDENT_KERNEL_LOG`: a file to which the CUDA test backend appends every kernel it
/// launches, once (`run.sh sanitize`'s coverage), or `None`.
pub fn kernel_log() -> Option<PathBuf> {
    std::env::var_os("TRIDENT_KERNEL_LOG")
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
}

/// The GPU runtime library named by `var` (`TRIDENT_CUDA_LIBRARY`: `trident_cuda::LIBRARY_ENV`,
/// `TRIDENT_OPENCL_LIBRARY`: `trident_opencl::ENV_LIBRARY`), or `None` when unset or empty;
/// the GPU crates' test harnesses hand it to their backend's loader before opening it.
pub fn gpu_library(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// True when `REQUIRE_GPU=1`: a missing device, or any start-up failure, fails the test.
pub fn require_gpu() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// True when `REQUIRE_DATA=1`, or in CI ([`in_ci`]) unless `REQUIRE_DATA=0`: a missing data
/// folder fails the test.
pub fn require_data() -> bool {
    match std::env::var("REQUIRE_DATA") {
        Ok(v) if v == "1" => true,
        Ok(v) if v == "0" => false,
        _ => in_ci(),
    }
}

/// The shared data folder: `$TRIDENT_DATA`, else the first `shared/data` holding
/// `graphs.tsv` found walking up from the current directory or `CARGO_MANIFEST_DIR` (read at
/// run time, so bundles moved to another machine find the data beside them).
pub fn data_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("TRIDENT_DATA") {
        let d = PathBuf::from(d);
        return d.join("graphs.tsv").is_file().then_some(d);
    }
    let mut starts = Vec::new();
    if let Ok(c) = std::env::current_dir() {
        starts.push(c);
    }
    if let Ok(m) = std::env::var("CARGO_MANIFEST_DIR") {
        starts.push(PathBuf::from(m));
    }
    starts
        .iter()
        .flat_map(|s| s.ancestors())
        .flat_map(|a| [a.join("shared").join("data"), a.join("data")])
        .find(|d| d.join("graphs.tsv").is_file())
}

/// `PROPTEST_CASES` when it holds a number, else `cases`.
pub fn proptest_cases(cases: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases)
}

/// `TRIDENT_SEED`: `Ok(None)` when unset, an error naming the value when it is not a number.
pub fn seed() -> Result<Option<u64>, String> {
    match std::env::var("TRIDENT_SEED") {
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("TRIDENT_SEED={v:?} is not a number")),
        Err(_) => Ok(None),
    }
}

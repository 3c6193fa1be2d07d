//! How Trident compiles its CUDA kernels to PTX. Shared by `crates/backend-cuda/build.rs` and
//! `cargo xtask build-kernels` (through `#[path]`), so both find the same nvcc and compile, and
//! fail, the same way.

use std::env;
use std::path::{Path, PathBuf};

/// `(suffix of the generated constant, nvcc -arch)` for each PTX flavour: Hopper (H100, H200)
/// and the oldest architecture CUDA 13 supports, for any other GPU.
pub const TARGETS: &[(&str, &str)] = &[("SM90", "compute_90"), ("PORTABLE", "compute_75")];

/// nvcc flags: PTX output, IEEE arithmetic (no fast math; fused multiply-add allowed).
pub const FLAGS: [&str; 4] = ["--ptx", "-O3", "-std=c++17", "--fmad=true"];

/// `(suffix of the generated constant, nvcc -arch)` of the machine code compiled beside the
/// PTX: on a device of exactly this architecture the backend loads it and skips the PTX JIT
/// (seconds per process for the larger modules).
pub const CUBIN: (&str, &str) = ("SM90", "sm_90");

/// nvcc flags of [`CUBIN`]: the same code generation as [`FLAGS`], machine code output.
pub const CUBIN_FLAGS: [&str; 4] = ["--cubin", "-O3", "-std=c++17", "--fmad=true"];

/// nvcc: `$NVCC`, the workspace's pip-installed CUDA 13.0 (`.tools/cuda`, whose PTX ISA 9.0
/// the reference driver accepts), a CUDA toolkit (`CUDA_PATH`, `CUDA_ROOT`,
/// `CUDA_TOOLKIT_ROOT_DIR`, `/usr/local/cuda`), then `PATH`.
pub fn find_nvcc(workspace: &Path) -> Option<PathBuf> {
    if let Some(n) = env::var_os("NVCC").filter(|n| !n.is_empty()) {
        return Some(PathBuf::from(n));
    }
    let mut candidates = vec![workspace.join(".tools/cuda/nvidia/cu13/bin/nvcc")];
    for var in ["CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"] {
        if let Some(root) = env::var_os(var).filter(|r| !r.is_empty()) {
            candidates.push(PathBuf::from(root).join("bin").join("nvcc"));
        }
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    if let Some(found) = candidates.into_iter().find(|c| c.is_file()) {
        return Some(found);
    }
    env::var_os("PATH").and_then(|paths| {
        env::split_paths(&paths)
            .map(|d| d.join("nvcc"))
            .find(|c| c.is_file())
    })
}

//! Trident's replacement for `find_cuda_helper` 0.2.0 (patched in through
//! `[patch.crates-io]` in the workspace root), reduced to what the build scripts of `cust` and
//! `cust_raw` call: [`include_cuda`].
//!
//! On x86-64 Linux, [`include_cuda`] links the lazy-binding `libcuda.a` of
//! `trident-lazy-link`: binaries load the driver (`libcuda.so.1`) on their first CUDA call and
//! start without one. Elsewhere it links the driver library of a CUDA installation, as the
//! crates.io crate does, and fails the build where there is none.

use std::{
    env, fs,
    path::{Path, PathBuf},
};

/// Links the CUDA driver library (`cuda`) into the crate whose build script calls this.
///
/// Lazily (see `trident-lazy-link`) where that is supported; elsewhere from the first of
/// `CUDA_LIBRARY_PATH`, the CUDA toolkit (`CUDA_PATH`, `CUDA_ROOT`, `CUDA_TOOLKIT_ROOT_DIR`,
/// `/usr/local/cuda`, `/usr/local/cuda-*`, `/opt/cuda`) or a system library directory that
/// holds the link-time library; panics if none does.
pub fn include_cuda() {
    if env::var("DOCS_RS").is_ok() || cfg!(doc) {
        return;
    }
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "CUDA_LIBRARY_PATH",
        "CUDA_ROOT",
        "CUDA_PATH",
        "CUDA_TOOLKIT_ROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    if trident_lazy_link::supported() {
        trident_lazy_link::link_cuda();
        return;
    }

    let dirs = find_libcuda_dirs();
    if dirs.is_empty() {
        panic!(
            "Could not find a cuda installation: no {LINK_NAME} under CUDA_LIBRARY_PATH, the CUDA \
             toolkit or a system library directory (lazy binding of libcuda is built only for \
             x86-64 Linux)"
        );
    }
    for path in dirs {
        println!("cargo:rustc-link-search=native={}", path.display());
    }
    println!("cargo:rustc-link-lib=dylib=cuda");
}

/// File name of the link-time driver library.
#[cfg(not(target_os = "windows"))]
const LINK_NAME: &str = "libcuda.so";
#[cfg(target_os = "windows")]
const LINK_NAME: &str = "cuda.lib";

/// System library directories where a driver's `libcuda.so` may be installed.
#[cfg(not(target_os = "windows"))]
const SYSTEM_LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
    "/usr/lib/wsl/lib",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
];
#[cfg(target_os = "windows")]
const SYSTEM_LIB_DIRS: &[&str] = &[];

/// True if `path` is a CUDA toolkit root (holds `include/cuda.h`).
fn is_cuda_root_path<P: AsRef<Path>>(path: P) -> bool {
    path.as_ref().join("include").join("cuda.h").is_file()
}

/// The root of the CUDA toolkit: `CUDA_PATH`, `CUDA_ROOT` or `CUDA_TOOLKIT_ROOT_DIR` if one
/// holds `include/cuda.h`, else `/usr/local/cuda` or `/opt/cuda` (`C:/CUDA` on Windows).
fn find_cuda_root() -> Option<PathBuf> {
    for path in ["CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"]
        .iter()
        .filter_map(|name| env::var(name).ok())
    {
        if is_cuda_root_path(&path) {
            return Some(path.into());
        }
    }
    #[cfg(not(target_os = "windows"))]
    let default_paths = ["/usr/local/cuda", "/opt/cuda"];
    #[cfg(target_os = "windows")]
    let default_paths = ["C:/CUDA"];
    default_paths
        .into_iter()
        .find(|p| is_cuda_root_path(p))
        .map(PathBuf::from)
}

/// Candidate library directories: those listed in `CUDA_LIBRARY_PATH` (`:`-separated; `;` on
/// Windows), then `lib64`, `lib64/stubs`, `targets/x86_64-linux/lib{,/stubs}` and `lib/x64`
/// of `/opt/cuda`, `/usr/local/cuda`, `/usr/local/cuda-*` (sorted) and the toolkit root.
fn candidate_lib_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = match env::var("CUDA_LIBRARY_PATH") {
        Ok(path) => {
            let split = if cfg!(target_os = "windows") {
                ';'
            } else {
                ':'
            };
            path.split(split).map(PathBuf::from).collect()
        }
        Err(_) => Vec::new(),
    };
    let mut roots = vec![PathBuf::from("/opt/cuda"), PathBuf::from("/usr/local/cuda")];
    let mut versioned: Vec<PathBuf> = fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cuda-"))
        .map(|e| e.path())
        .collect();
    versioned.sort();
    roots.extend(versioned);
    roots.extend(find_cuda_root());
    for root in roots {
        for sub in [
            "lib64",
            "lib64/stubs",
            "targets/x86_64-linux/lib",
            "targets/x86_64-linux/lib/stubs",
            "lib/x64",
        ] {
            dirs.push(root.join(sub));
        }
    }
    dirs
}

/// Directories holding a linkable CUDA driver library (`libcuda.so`; `cuda.lib` on Windows):
/// the candidates of [`candidate_lib_dirs`] that hold one, else the first system library
/// directory that does; empty if there is none.
fn find_libcuda_dirs() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in candidate_lib_dirs() {
        if dir.join(LINK_NAME).is_file() && !found.contains(&dir) {
            found.push(dir);
        }
    }
    if found.is_empty() {
        found.extend(
            SYSTEM_LIB_DIRS
                .iter()
                .map(PathBuf::from)
                .find(|d| d.join(LINK_NAME).is_file()),
        );
    }
    found
}

//! Trident's drop-in replacement for `find_cuda_helper` 0.2.0 (patched in through
//! `[patch.crates-io]` in the workspace root).
//!
//! The public API is the same as that of the crates.io crate. The one difference is in
//! [`include_cuda`], which `cust` and `cust_raw` call from their build scripts: where the
//! original panics when it finds no CUDA installation, this version falls back to building a
//! **stub `libcuda`** so that CUDA code can be compiled, linked and tested on machines without a
//! CUDA toolkit or driver:
//!
//! 1. If a CUDA toolkit with a `libcuda.so` (usually its `lib64/stubs`) is found through
//!    `CUDA_LIBRARY_PATH`, `CUDA_PATH`, `CUDA_ROOT`, `CUDA_TOOLKIT_ROOT_DIR`, `/usr/local/cuda`,
//!    `/usr/local/cuda-*` or `/opt/cuda`, or a driver `libcuda.so` is in a system library
//!    directory, it is linked exactly as before.
//! 2. Otherwise a C file defining every `cu*` entry point that `cust_raw` declares is generated
//!    in `OUT_DIR/libcuda-stub`, each returning `CUDA_ERROR_NO_DEVICE` (100), and compiled with
//!    the system C compiler (`$CC`, else `cc`) into `libcuda.so` with the soname `libcuda.so.1`.
//!    Binaries linked against it record `NEEDED libcuda.so.1` and no run path, so on a machine
//!    with a GPU they load the real driver; `cargo test` / `cargo run` put the stub directory
//!    on `LD_LIBRARY_PATH` (it lies inside `target/`), so on a machine without one they start,
//!    `cuInit` fails with `CUDA_ERROR_NO_DEVICE`, and GPU code can report "no device".
//!    A copy named `libcuda.so.1` is placed next to the stub only when the build machine has no
//!    driver `libcuda.so.1` of its own (in a system library directory, the `ldconfig` cache or
//!    `LD_LIBRARY_PATH`), so that a real driver is never shadowed.
//!
//! `FIND_CUDA_HELPER_STUB=1` forces the stub even when CUDA is installed.
//!
//! Additions to the 0.2.0 API: [`find_libcuda_dirs`], [`links_stub_libcuda`] and
//! [`system_has_cuda_driver`], for build scripts that want to report what is linked (cargo
//! does not show the warnings of registry crates such as `cust_raw`).

pub mod lazy;

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

/// Environment variable that forces the stub `libcuda` even when CUDA is installed.
const FORCE_STUB_ENV: &str = "FIND_CUDA_HELPER_STUB";

/// The `cu*` functions declared by `cust_raw` 0.11 (one per line); the build script of the
/// crate calling [`include_cuda`] is also scanned, so newer `cust_raw` versions are covered too.
#[cfg_attr(target_os = "windows", allow(dead_code))]
const KNOWN_SYMBOLS: &str = include_str!("cust_raw_0_11_symbols.txt");

/// Links the CUDA driver library (`-lcuda`) into the crate whose build script calls this.
///
/// Finds a CUDA installation as `find_cuda_helper` 0.2.0 does; where there is none (on Unix),
/// builds and links a stub `libcuda.so` whose functions all return `CUDA_ERROR_NO_DEVICE`
/// (see the crate documentation).
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
        FORCE_STUB_ENV,
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    if lazy::supported() {
        // The archive is named `libcuda.a` so that nothing else named `cuda` is linked.
        lazy::link(&lazy_cuda(), true);
        return;
    }

    if !stub_forced() {
        let dirs = find_libcuda_dirs();
        if !dirs.is_empty() {
            for path in dirs {
                println!("cargo:rustc-link-search=native={}", path.display());
            }
            println!("cargo:rustc-link-lib=dylib=cuda");
            return;
        }
    }

    #[cfg(target_os = "windows")]
    {
        panic!("Could not find a cuda installation");
    }
    #[cfg(not(target_os = "windows"))]
    {
        let dir = build_stub_libcuda();
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=dylib=cuda");
        println!(
            "cargo:warning=no CUDA driver library found: linking a stub libcuda.so ({}) whose \
             functions all return CUDA_ERROR_NO_DEVICE; binaries load the real libcuda.so.1 \
             where a CUDA driver is installed",
            dir.display()
        );
    }
}

/// The lazy-binding description of the CUDA driver library.
fn lazy_cuda() -> lazy::LazyLib<'static> {
    lazy::LazyLib {
        tag: "cuda",
        link_name: "cuda",
        sonames: &["libcuda.so.1", "libcuda.so"],
        env_override: "TRIDENT_CUDA_LIBRARY",
        symbols: lazy::parse_symbols(&stub_symbols().join("\n")),
        missing_status: 100, // CUDA_ERROR_NO_DEVICE
        custom_c: CUDA_FALLBACKS,
        custom: &["cuGetErrorString", "cuGetErrorName"],
    }
}

/// Fallbacks of the CUDA error-text functions when `libcuda.so.1` is missing: they succeed,
/// so that the "no device" error is described, with the `dlopen` error.
const CUDA_FALLBACKS: &str = r#"
static const char *trident_cuda_missing_text(void) {
    static char text[1024];
    snprintf(text, sizeof text,
             "no CUDA driver: the CUDA runtime library could not be loaded (%s)",
             error_cuda[0] ? error_cuda : "libcuda.so.1 not found");
    return text;
}
static intptr_t trident_fallback_cuGetErrorString(int error, const char **p) {
    if (!p) return 1;
    *p = error == 100 ? trident_cuda_missing_text() : "CUDA driver library not loaded";
    return 0;
}
static intptr_t trident_fallback_cuGetErrorName(int error, const char **p) {
    if (!p) return 1;
    *p = error == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
"#;

/// The lazy-binding description of the OpenCL ICD loader.
fn lazy_opencl() -> lazy::LazyLib<'static> {
    lazy::LazyLib {
        tag: "opencl",
        link_name: "OpenCL",
        sonames: &["libOpenCL.so.1", "libOpenCL.so"],
        env_override: "TRIDENT_OPENCL_LIBRARY",
        symbols: lazy::parse_symbols(OPENCL_SYMBOLS),
        missing_status: -1001, // CL_PLATFORM_NOT_FOUND_KHR
        custom_c: OPENCL_FALLBACKS,
        custom: &["clGetPlatformIDs"],
    }
}

/// The OpenCL entry points `cl-sys` 0.4 declares, with their return kind.
const OPENCL_SYMBOLS: &str = include_str!("opencl_symbols.txt");

/// Without an ICD loader there are no platforms, as a loader without ICDs would say.
const OPENCL_FALLBACKS: &str = r#"
static intptr_t trident_fallback_clGetPlatformIDs(unsigned n, void **platforms, unsigned *num) {
    (void)n; (void)platforms;
    if (num) *num = 0;
    return -1001;
}
"#;

/// Links the OpenCL ICD loader lazily into the crate whose build script calls this (an
/// addition to the 0.2.0 API, for `trident-opencl`): builds `libOpenCL.a`, whose entry
/// points `dlopen` `libOpenCL.so.1` on first use, and puts it first on the link search path,
/// so that `cl-sys`'s `#[link(name = "OpenCL")]` takes it instead of the shared library. A
/// binary so linked starts without an OpenCL loader and finds no platform. Elsewhere than
/// on x86-64 Linux nothing is done (the loader is linked as usual).
pub fn link_lazy_opencl() {
    if env::var("DOCS_RS").is_ok() || cfg!(doc) || !lazy::supported() {
        return;
    }
    lazy::link(&lazy_opencl(), false);
}

// Returns true if the given path is a valid cuda installation
fn is_cuda_root_path<P: AsRef<Path>>(path: P) -> bool {
    path.as_ref().join("include").join("cuda.h").is_file()
}

/// The root of the CUDA toolkit: `CUDA_PATH`, `CUDA_ROOT` or `CUDA_TOOLKIT_ROOT_DIR` if one
/// holds `include/cuda.h`, else `/usr/local/cuda` or `/opt/cuda` (`C:/CUDA` on Windows).
pub fn find_cuda_root() -> Option<PathBuf> {
    // search through the common environment variables first
    for path in ["CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"]
        .iter()
        .filter_map(|name| std::env::var(*name).ok())
    {
        if is_cuda_root_path(&path) {
            return Some(path.into());
        }
    }

    // If it wasn't specified by env var, try the default installation paths
    #[cfg(not(target_os = "windows"))]
    let default_paths = ["/usr/local/cuda", "/opt/cuda"];
    #[cfg(target_os = "windows")]
    let default_paths = ["C:/CUDA"];

    for path in default_paths {
        if is_cuda_root_path(path) {
            return Some(path.into());
        }
    }

    None
}

/// The library directory (`lib/x64`) of the CUDA toolkit, if there is one.
#[cfg(target_os = "windows")]
pub fn find_cuda_lib_dirs() -> Vec<PathBuf> {
    if let Some(root_path) = find_cuda_root() {
        // To do this the right way, we check to see which target we're building for.
        let target = env::var("TARGET")
            .expect("cargo did not set the TARGET environment variable as required.");

        // Targets use '-' separators. e.g. x86_64-pc-windows-msvc
        let target_components: Vec<_> = target.as_str().split('-').collect();

        // We check that we're building for Windows. This code assumes that the layout in
        // CUDA_PATH matches Windows.
        if target_components.get(2) != Some(&"windows") {
            panic!(
                "The CUDA_PATH variable is only used by cuda-sys on Windows. Your target is {}.",
                target
            );
        }

        // x86_64 should use the libs in the "lib/x64" directory. If we ever support i686 (which
        // does not ship with cublas support), its libraries are in "lib/Win32".
        let lib_path = match target_components[0] {
            "x86_64" => "x64",
            "i686" => {
                panic!("Rust cuda-sys does not currently support 32-bit Windows.");
            }
            _ => {
                panic!("Rust cuda-sys only supports the x86_64 Windows architecture.");
            }
        };

        let lib_dir = root_path.join("lib").join(lib_path);

        return if lib_dir.is_dir() {
            vec![lib_dir]
        } else {
            vec![]
        };
    }

    vec![]
}

/// The directories listed in `CUDA_LIBRARY_PATH` (`:`-separated; `;` on Windows).
pub fn read_env() -> Vec<PathBuf> {
    if let Ok(path) = env::var("CUDA_LIBRARY_PATH") {
        // The location of the libcuda, libcudart, and libcublas can be hardcoded with the
        // CUDA_LIBRARY_PATH environment variable.
        let split_char = if cfg!(target_os = "windows") {
            ";"
        } else {
            ":"
        };
        path.split(split_char).map(PathBuf::from).collect()
    } else {
        vec![]
    }
}

/// Candidate CUDA library directories: `CUDA_LIBRARY_PATH`, then `lib64` and `lib64/stubs`
/// (or `targets/x86_64-linux/lib{,/stubs}`) of `/opt/cuda`, `/usr/local/cuda` and
/// `/usr/local/cuda-*`, where those exist.
#[cfg(not(target_os = "windows"))]
pub fn find_cuda_lib_dirs() -> Vec<PathBuf> {
    let mut candidates = read_env();
    candidates.push(PathBuf::from("/opt/cuda"));
    candidates.push(PathBuf::from("/usr/local/cuda"));
    // `/usr/local/cuda-*`, as the original's `glob`, in sorted order.
    let mut versioned: Vec<PathBuf> = fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cuda-"))
        .map(|e| e.path())
        .collect();
    versioned.sort();
    candidates.extend(versioned);

    let mut valid_paths = vec![];
    for base in &candidates {
        let lib = PathBuf::from(base).join("lib64");
        if lib.is_dir() {
            valid_paths.push(lib.clone());
            valid_paths.push(lib.join("stubs"));
        }
        let base = base.join("targets/x86_64-linux");
        let header = base.join("include/cuda.h");
        if header.is_file() {
            valid_paths.push(base.join("lib"));
            valid_paths.push(base.join("lib/stubs"));
            continue;
        }
    }
    valid_paths
}

/// The OptiX SDK root: `OPTIX_ROOT`, else `OPTIX_ROOT_DIR`.
#[cfg(target_os = "windows")]
pub fn find_optix_root() -> Option<PathBuf> {
    // the optix SDK installer sets OPTIX_ROOT_DIR whenever it installs.
    // We also check OPTIX_ROOT first in case someone wants to override it without overriding
    // the SDK-set variable.
    env::var("OPTIX_ROOT")
        .ok()
        .or_else(|| env::var("OPTIX_ROOT_DIR").ok())
        .map(PathBuf::from)
}

/// The OptiX SDK root: `OPTIX_ROOT`, else `OPTIX_ROOT_DIR`.
#[cfg(target_family = "unix")]
pub fn find_optix_root() -> Option<PathBuf> {
    env::var("OPTIX_ROOT")
        .ok()
        .or_else(|| env::var("OPTIX_ROOT_DIR").ok())
        .map(PathBuf::from)
}

/// The directory holding libNVVM (empty under rustdoc).
#[cfg(doc)]
pub fn find_libnvvm_bin_dir() -> String {
    String::new()
}

/// The directory holding libNVVM: `<CUDA root>/nvvm/lib/x64`. Panics without a CUDA root.
#[cfg(all(target_os = "windows", not(doc)))]
pub fn find_libnvvm_bin_dir() -> String {
    if env::var("DOCS_RS").is_ok() {
        return String::new();
    }
    find_cuda_root()
        .expect("Failed to find CUDA ROOT, make sure the CUDA SDK is installed and CUDA_PATH or CUDA_ROOT are set!")
        .join("nvvm")
        .join("lib")
        .join("x64")
        .to_string_lossy()
        .into_owned()
}

/// The directory holding libNVVM: `<CUDA root>/nvvm/lib64`. Panics without a CUDA root.
#[cfg(all(target_os = "linux", not(doc)))]
pub fn find_libnvvm_bin_dir() -> String {
    if env::var("DOCS_RS").is_ok() {
        return String::new();
    }
    find_cuda_root()
        .expect("Failed to find CUDA ROOT, make sure the CUDA SDK is installed and CUDA_PATH or CUDA_ROOT are set!")
        .join("nvvm")
        .join("lib64")
        .to_string_lossy()
        .into_owned()
}

// ---------------------------------------------------------------------------------------------
// Detection of a real libcuda.

/// File name of the link-time driver library.
#[cfg(not(target_os = "windows"))]
const LINK_NAME: &str = "libcuda.so";
#[cfg(target_os = "windows")]
const LINK_NAME: &str = "cuda.lib";

/// System library directories where a driver's `libcuda.so(.1)` may be installed.
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

/// True if `FIND_CUDA_HELPER_STUB=1`.
fn stub_forced() -> bool {
    env::var(FORCE_STUB_ENV).is_ok_and(|v| v == "1")
}

/// True if [`include_cuda`] links the generated stub rather than a real `libcuda`
/// (an addition to the 0.2.0 API, for build scripts that want to say so: cargo hides the
/// warnings of registry crates such as `cust_raw`).
pub fn links_stub_libcuda() -> bool {
    !lazy::supported() && (stub_forced() || find_libcuda_dirs().is_empty())
}

/// Directories holding a real, linkable CUDA driver library (`libcuda.so`; `cuda.lib` on
/// Windows): those of the CUDA toolkit, else a system library directory; empty if there is
/// none (an addition to the 0.2.0 API).
pub fn find_libcuda_dirs() -> Vec<PathBuf> {
    let mut toolkit = find_cuda_lib_dirs();
    if let Some(root) = find_cuda_root() {
        for sub in [
            "lib64",
            "lib64/stubs",
            "lib/x64",
            "targets/x86_64-linux/lib",
            "targets/x86_64-linux/lib/stubs",
        ] {
            toolkit.push(root.join(sub));
        }
    }
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in toolkit {
        if dir.join(LINK_NAME).is_file() && !found.contains(&dir) {
            found.push(dir);
        }
    }
    if found.is_empty() {
        if let Some(dir) = SYSTEM_LIB_DIRS
            .iter()
            .map(PathBuf::from)
            .find(|d| d.join(LINK_NAME).is_file())
        {
            found.push(dir);
        }
    }
    found
}

/// True if the build machine has a CUDA driver (`libcuda.so.1`) of its own: in a system
/// library directory, in the dynamic linker's cache (`ldconfig -p`), or on `LD_LIBRARY_PATH`
/// (stub directories excepted). An addition to the 0.2.0 API.
#[cfg(not(target_os = "windows"))]
pub fn system_has_cuda_driver() -> bool {
    let in_dir = |d: &Path| d.join("libcuda.so.1").exists();
    if SYSTEM_LIB_DIRS.iter().any(|d| in_dir(Path::new(d))) {
        return true;
    }
    if let Some(paths) = env::var_os("LD_LIBRARY_PATH") {
        if env::split_paths(&paths)
            .filter(|d| !d.to_string_lossy().contains("libcuda-stub"))
            .any(|d| in_dir(&d))
        {
            return true;
        }
    }
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .filter_map(|cmd| Command::new(cmd).arg("-p").output().ok())
        .find(|out| out.status.success())
        .is_some_and(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.trim_start().starts_with("libcuda.so.1 ") && !l.contains("libcuda-stub"))
        })
}

/// True if the build machine has a CUDA driver (`nvcuda.dll` is not looked for on Windows).
#[cfg(target_os = "windows")]
pub fn system_has_cuda_driver() -> bool {
    false
}

// ---------------------------------------------------------------------------------------------
// The stub.

/// Builds `OUT_DIR/libcuda-stub/libcuda.so` and returns its directory.
#[cfg(not(target_os = "windows"))]
fn build_stub_libcuda() -> PathBuf {
    let out_dir = env::var_os("OUT_DIR").map(PathBuf::from).expect(
        "find_cuda_helper::include_cuda must be called from a build script (OUT_DIR unset)",
    );
    let dir = out_dir.join("libcuda-stub");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));

    let symbols = stub_symbols();
    let source = dir.join("libcuda_stub.c");
    fs::write(&source, stub_source(&symbols))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", source.display()));

    let lib = dir.join("libcuda.so");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let output = Command::new(&cc)
        .args([
            "-shared",
            "-fPIC",
            "-O1",
            "-w",
            "-Wl,-soname,libcuda.so.1",
            "-o",
        ])
        .arg(&lib)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "Could not find a cuda installation, and could not run the C compiler `{cc}` \
                 to build a stub libcuda: {e}"
            )
        });
    if !output.status.success() {
        panic!(
            "Could not find a cuda installation, and building a stub libcuda with `{cc}` \
             failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    // The runtime name. Only where the build machine has no driver of its own: a copy here
    // would shadow the real driver under `cargo test` / `cargo run`.
    let runtime = dir.join("libcuda.so.1");
    if system_has_cuda_driver() {
        let _ = fs::remove_file(&runtime);
    } else {
        fs::copy(&lib, &runtime)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", runtime.display()));
    }
    dir
}

/// Every `cu*` symbol to define: the known `cust_raw` 0.11 list, plus the `pub fn cu*`
/// declarations in the calling crate's sources and in a sibling `cust_raw-*` crate directory.
fn stub_symbols() -> Vec<String> {
    let mut symbols: Vec<String> = KNOWN_SYMBOLS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if let Some(manifest) = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) {
        let mut roots = vec![manifest.join("src")];
        if let Some(parent) = manifest.parent() {
            let siblings = fs::read_dir(parent).into_iter().flatten().flatten();
            roots.extend(
                siblings
                    .filter(|e| e.file_name().to_string_lossy().starts_with("cust_raw"))
                    .map(|e| e.path().join("src")),
            );
        }
        for root in roots {
            scan_declarations(&root, 0, &mut symbols);
        }
    }
    symbols.sort();
    symbols.dedup();
    symbols
}

/// Adds the names of `pub fn cu*` declarations in the `.rs` files under `dir`.
fn scan_declarations(dir: &Path, depth: usize, out: &mut Vec<String>) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan_declarations(&path, depth + 1, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            if let Ok(text) = fs::read_to_string(&path) {
                out.extend(declared_cu_functions(&text));
            }
        }
    }
}

/// Names `N` of every `pub fn N` in `text` where `N` starts with `cu`.
#[cfg_attr(target_os = "windows", allow(dead_code))]
fn declared_cu_functions(text: &str) -> Vec<String> {
    const KEY: &str = "pub fn ";
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        rest = &rest[at + KEY.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        if name.starts_with("cu") && name.len() > 2 {
            names.push(name.to_string());
        }
    }
    names
}

/// The C source of the stub: every symbol returns `CUDA_ERROR_NO_DEVICE`, except
/// `cuGetErrorString` / `cuGetErrorName`, which succeed with a static string so that error
/// formatting never fails.
#[cfg_attr(target_os = "windows", allow(dead_code))]
fn stub_source(symbols: &[String]) -> String {
    let mut c = String::from(
        r#"/* Generated by Trident's find_cuda_helper: a stand-in for the CUDA driver library on a
 * machine without one. Every entry point returns CUDA_ERROR_NO_DEVICE (100), except
 * cuGetErrorString and cuGetErrorName, which return a static string and CUDA_SUCCESS.
 *
 * The entry points are defined without parameters: on the supported ABIs (x86-64 System V,
 * AArch64) the caller owns its argument registers and stack, so extra arguments are ignored.
 */
#define STUB_EXPORT __attribute__((visibility("default")))
typedef int CUresult;
#define CUDA_ERROR_NO_DEVICE 100

static const char *stub_error_name(int error) {
    switch (error) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    default: return "CUDA_ERROR_UNKNOWN";
    }
}

static const char *stub_error_string(int error) {
    switch (error) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 2: return "out of memory";
    case 3: return "initialization error";
    case 4: return "driver shutting down";
    case 100: return "no CUDA-capable device is detected (no CUDA driver: stub libcuda)";
    case 101: return "invalid device ordinal";
    default: return "unknown error (no CUDA driver: stub libcuda)";
    }
}

STUB_EXPORT CUresult cuGetErrorString(int error, const char **pStr) {
    if (!pStr) return 1;
    *pStr = stub_error_string(error);
    return 0;
}

STUB_EXPORT CUresult cuGetErrorName(int error, const char **pStr) {
    if (!pStr) return 1;
    *pStr = stub_error_name(error);
    return 0;
}

"#,
    );
    for name in symbols {
        if name == "cuGetErrorString" || name == "cuGetErrorName" {
            continue;
        }
        c.push_str("STUB_EXPORT CUresult ");
        c.push_str(name);
        c.push_str("(void) { return CUDA_ERROR_NO_DEVICE; }\n");
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_declarations_on_one_or_several_lines() {
        let text = "extern \"C\" {\n    pub fn cuInit(Flags: c_uint) -> CUresult;\n}\n\
                    extern \"C\" {\n    pub fn cuMemcpy2D_v2(\n        pCopy: *const X,\n    ) -> CUresult;\n}\n\
                    pub fn helper() {}\npub fn cu() {}\n";
        assert_eq!(declared_cu_functions(text), ["cuInit", "cuMemcpy2D_v2"]);
    }

    #[test]
    fn known_symbols_cover_the_basics() {
        let known: Vec<&str> = KNOWN_SYMBOLS.lines().collect();
        for name in [
            "cuInit",
            "cuDeviceGet",
            "cuDevicePrimaryCtxRetain",
            "cuModuleLoadDataEx",
            "cuLaunchKernel",
            "cuMemAlloc_v2",
            "cuGetErrorString",
        ] {
            assert!(known.contains(&name), "{name} missing");
        }
    }

    #[test]
    fn stub_defines_each_symbol_once() {
        let symbols = vec![
            "cuGetErrorName".to_string(),
            "cuGetErrorString".to_string(),
            "cuInit".to_string(),
        ];
        let c = stub_source(&symbols);
        assert_eq!(c.matches("cuGetErrorString(int").count(), 1);
        assert_eq!(c.matches("cuGetErrorName(int").count(), 1);
        assert!(c.contains("CUresult cuInit(void) { return CUDA_ERROR_NO_DEVICE; }"));
    }
}

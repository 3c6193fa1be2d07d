//! Lazy binding of the GPU runtimes, for build scripts.
//!
//! [`link_cuda`] and [`link_opencl`] build a static archive (`libcuda.a`, `libOpenCL.a`) in
//! `OUT_DIR` whose every entry point `dlopen`s the real runtime (`libcuda.so.1`,
//! `libOpenCL.so.1`) on its first call and jumps to it (see the `gen` module). A binary so
//! linked records no `NEEDED` entry for the runtime: it starts on a machine without one, where
//! every call reports "no device" in the runtime's own terms (`CUDA_ERROR_NO_DEVICE`; no
//! OpenCL platform).
//!
//! Users: `find_cuda_helper` (Trident's replacement, which `cust` and `cust_raw` call from
//! their build scripts) calls [`link_cuda`]; the build script of `trident-opencl` calls
//! [`link_opencl`], whose archive `cl-sys`'s `#[link(name = "OpenCL")]` then finds first.
//!
//! At run time, `trident_lazy_cuda_set_library` / `trident_lazy_opencl_set_library` (C
//! functions of the archives, called through `trident_cuda::set_driver_library` and
//! `trident_opencl::set_icd_library` before the first call into the runtime) name the
//! library to load instead of the default sonames (a path to a particular driver, or a
//! missing file to test the "no runtime" path). The generated code reads no environment
//! variable: the `trident` command, the benchmarks and the test harnesses read
//! `TRIDENT_CUDA_LIBRARY` / `TRIDENT_OPENCL_LIBRARY` and call those.
//!
//! Lazy binding is generated for x86-64 Linux only ([`supported`]); elsewhere these functions
//! do nothing and the runtime is linked as usual.

mod gen;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// True where lazy binding is available: the build script's target is x86-64 Linux.
pub fn supported() -> bool {
    gen::supported()
}

/// Builds the lazy-binding `libcuda.a` and links it into the crate whose build script calls
/// this (the archive itself, `-ldl` and `-lpthread`). Its entry points are the CUDA driver
/// functions `cust_raw` 0.11 declares, plus every `pub fn cu*` declared in the calling crate's
/// `src` and in the `src` of any `cust_raw*` crate beside it (so a newer `cust_raw` is covered).
/// Does nothing where lazy binding is not [`supported`] or under rustdoc.
pub fn link_cuda() {
    if skip() {
        return;
    }
    gen::link(&cuda(), true);
}

/// Builds the lazy-binding `libOpenCL.a` and puts its folder on the link search path of the
/// crate whose build script calls this (with `-ldl` and `-lpthread`); the archive is linked
/// where the OpenCL bindings ask for `OpenCL`. Does nothing where lazy binding is not
/// [`supported`] or under rustdoc.
pub fn link_opencl() {
    if skip() {
        return;
    }
    gen::link(&opencl(), false);
}

/// Under rustdoc (docs.rs), or for a target without lazy binding.
fn skip() -> bool {
    env::var("DOCS_RS").is_ok() || cfg!(doc) || !supported()
}

/// The lazy-binding description of the CUDA driver library.
fn cuda() -> gen::LazyLib<'static> {
    gen::LazyLib {
        tag: "cuda",
        link_name: "cuda",
        sonames: &["libcuda.so.1", "libcuda.so"],
        symbols: gen::parse_symbols(&cuda_symbols().join("\n")),
        missing_status: 100, // CUDA_ERROR_NO_DEVICE
        custom_c: CUDA_FALLBACKS,
        custom: &["cuGetErrorString", "cuGetErrorName"],
    }
}

/// The `cu*` functions declared by `cust_raw` 0.11, one per line.
const CUDA_SYMBOLS: &str = include_str!("cuda_symbols.txt");

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
fn opencl() -> gen::LazyLib<'static> {
    gen::LazyLib {
        tag: "opencl",
        link_name: "OpenCL",
        sonames: &["libOpenCL.so.1", "libOpenCL.so"],
        symbols: gen::parse_symbols(OPENCL_SYMBOLS),
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

/// Every `cu*` entry point to define: [`CUDA_SYMBOLS`], plus the `pub fn cu*` declarations in
/// the calling crate's sources and in a sibling `cust_raw*` crate directory, sorted, once each.
fn cuda_symbols() -> Vec<String> {
    let mut symbols: Vec<String> = CUDA_SYMBOLS
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
        let known: Vec<&str> = CUDA_SYMBOLS.lines().collect();
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

    /// Each entry point is defined once, jumps through its own slot and falls back to the
    /// function the description names.
    #[test]
    fn source_defines_each_entry_point_once() {
        for lib in [cuda(), opencl()] {
            let c = gen::source(&lib);
            for (i, (name, ret)) in lib.symbols.iter().enumerate() {
                assert_eq!(
                    c.matches(&format!("\".globl {name}\\n")).count(),
                    1,
                    "{name}"
                );
                let fallback = if lib.custom.contains(&name.as_str()) {
                    format!("trident_fallback_{name}")
                } else {
                    let kind = match ret {
                        gen::Ret::Status => "status",
                        gen::Ret::Null => "null",
                        gen::Ret::Void => "void",
                    };
                    format!("fallback_{kind}_{}", lib.tag)
                };
                assert!(
                    c.contains(&format!("case {i}: f = (void *)&{fallback}; break;")),
                    "{name}: fallback {fallback}"
                );
                assert!(
                    c.contains(&format!("trident_lazy_slots_{}+{}(%rip)", lib.tag, 8 * i)),
                    "{name}: slot {i}"
                );
            }
        }
    }

    /// The library to load is set through the exported setter, never read from the
    /// environment.
    #[test]
    fn the_library_path_comes_from_the_setter() {
        for lib in [cuda(), opencl()] {
            let c = gen::source(&lib);
            let t = lib.tag;
            assert!(
                c.contains(&format!(
                    "EXPORT int trident_lazy_{t}_set_library(const char *path)"
                )),
                "{t}"
            );
            assert!(c.contains(&format!("const char *over = path_{t};")), "{t}");
            assert!(!c.contains("getenv"), "{t}");
        }
    }

    /// The generated loader, compiled and run: the library named through the setter is the
    /// one loaded (its missing file reported, the fallback answering); the choice may change
    /// until the first call and is fixed after it (the same one is still accepted).
    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn the_setter_chooses_the_library_until_the_first_call() {
        let lib = gen::LazyLib {
            tag: "probe",
            link_name: "probe",
            sonames: &["libm.so.6"],
            symbols: vec![("trident_probe_entry".to_string(), gen::Ret::Status)],
            missing_status: 7,
            custom_c: "",
            custom: &[],
        };
        let dir = env::temp_dir().join(format!("trident-lazy-link-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("lazy.c"), gen::source(&lib)).unwrap();
        let main = r#"
#include <string.h>
int trident_lazy_probe_set_library(const char *);
const char *trident_lazy_probe_error(void);
int trident_probe_entry(void);
int main(void) {
    if (trident_lazy_probe_set_library("/nonexistent/first.so") != 0) return 10;
    if (trident_lazy_probe_set_library("/nonexistent/chosen.so") != 0) return 11;
    const char *e = trident_lazy_probe_error();
    if (!e || !strstr(e, "/nonexistent/chosen.so") || strstr(e, "libm")) return 12;
    if (trident_probe_entry() != 7) return 13;
    if (trident_lazy_probe_set_library("/nonexistent/first.so") != -1) return 14;
    if (trident_lazy_probe_set_library("") != -1) return 15;
    if (trident_lazy_probe_set_library("/nonexistent/chosen.so") != 0) return 16;
    return 0;
}
"#;
        fs::write(dir.join("main.c"), main).unwrap();
        let exe = dir.join("probe");
        let built = std::process::Command::new(env::var("CC").unwrap_or_else(|_| "cc".into()))
            .arg("-o")
            .arg(&exe)
            .arg(dir.join("main.c"))
            .arg(dir.join("lazy.c"))
            .args(["-ldl", "-lpthread"])
            .output()
            .unwrap();
        assert!(built.status.success(), "{built:?}");
        let ran = std::process::Command::new(&exe).status().unwrap();
        fs::remove_dir_all(&dir).ok();
        assert_eq!(
            ran.code(),
            Some(0),
            "the probe program failed at its check {ran}"
        );
    }

    #[test]
    fn symbol_kinds_parse() {
        let parsed = gen::parse_symbols("clA ptr\n\n  clB void\nclC int\ncuD\n");
        assert_eq!(
            parsed,
            [
                ("clA".to_string(), gen::Ret::Null),
                ("clB".to_string(), gen::Ret::Void),
                ("clC".to_string(), gen::Ret::Status),
                ("cuD".to_string(), gen::Ret::Status),
            ]
        );
    }
}

//! Links the OpenCL ICD loader lazily: `libOpenCL.so.1` is `dlopen`ed on the first OpenCL call,
//! so binaries start on machines without it (and then find no platform). Also writes
//! `$OUT_DIR/kernel_files.rs`: the stems of every `kernels/opencl/*.cl` at build time, and
//! those that `kernels/cuda/<stem>.cu` compiles as CUDA (shared), which tests compare with the
//! kernel table (so that the tests read no folder when they run).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    trident_lazy_link::link_opencl();

    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../kernels/opencl");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the kernel directory {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".cl").map(str::to_string))
        .collect();
    stems.sort_unstable();
    // Shared files: those that `kernels/cuda/<stem>.cu` compiles as CUDA.
    let cuda = manifest.join("../../kernels/cuda");
    println!("cargo:rerun-if-changed={}", cuda.display());
    let shared: Vec<&String> = stems
        .iter()
        .filter(|s| {
            let cu = cuda.join(format!("{s}.cu"));
            println!("cargo:rerun-if-changed={}", cu.display());
            std::fs::read_to_string(&cu).is_ok_and(|t| t.contains(&format!("\"../opencl/{s}.cl\"")))
        })
        .collect();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("kernel_files.rs");
    let rs = format!(
        "/// The stem of every `kernels/opencl/*.cl` when the crate was built.\n\
         #[allow(dead_code)]\npub const FILES: &[&str] = &{stems:?};\n\
         /// The stems whose `kernels/cuda/<stem>.cu` includes the `.cl` file (shared).\n\
         #[allow(dead_code)]\npub const SHARED: &[&str] = &{shared:?};\n"
    );
    std::fs::write(&out, rs).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

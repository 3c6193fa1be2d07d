//! Small cases of the OpenCL kernel families that the conformance checks run only at sizes
//! too large for a race detector: what `cargo xtask test` runs under Oclgrind (with
//! `--data-races`; `TRIDENT_OPENCL_PLATFORM=Oclgrind`), beside the small conformance tests.
//! On PoCL they are quick ordinary tests. Each result is still checked against an answer
//! computed here in f64 (Oclgrind runs every work-item one after another, so a missing
//! barrier also shows as a wrong result there).
//!
//! Not here: the SVD. Oclgrind 21.10 builds `kernels/opencl/svd.cl` but cannot create its
//! kernel `qr_tree_merge_panel` (`CL_INVALID_KERNEL_NAME`), so the SVD module does not load
//! there; its races are left to `run.sh sanitize` (compute-sanitizer racecheck on CUDA).

use trident_core::matmul::{Algorithm, MatMulOptions};
use trident_core::testing::{backend_or_skip, unit_stream};
use trident_core::{Dense, MatMul};
use trident_opencl::{OpenCl, OpenClOptions, Selector};

fn backend() -> Option<OpenCl> {
    if let Some(lib) = trident_core::testing::env::gpu_library(trident_opencl::ENV_LIBRARY) {
        backend_or_skip(trident_opencl::set_icd_library(&lib))?;
    }
    let var = |name| std::env::var(name).ok();
    let sel = Selector::from_filters(
        var(trident_opencl::ENV_PLATFORM).as_deref(),
        var(trident_opencl::ENV_DEVICE).as_deref(),
    );
    let mut options = OpenClOptions::new(sel);
    if let Some(dir) = trident_core::testing::kernel_dir() {
        options = options.kernel_dir(dir);
    }
    backend_or_skip(OpenCl::with_options(&options))
}

fn random(rows: usize, cols: usize, seed: u64) -> Dense<f32> {
    let mut next = unit_stream(seed);
    Dense::from_fn(rows, cols, |_, _| next() as f32)
}

/// The tiled GEMM (one tile plus edges in every direction, k not a multiple of the k step)
/// and one level of each recursion (block sums, the fused last level).
#[test]
fn race_matmul_small() {
    let Some(b) = backend() else { return };
    let (m, n, k) = (130, 132, 37);
    let a = random(m, k, 7);
    let bm = random(k, n, 11);
    let mut expected = vec![0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = f64::from(a.get(i, p));
            for j in 0..n {
                expected[i * n + j] += x * f64::from(bm.get(p, j));
            }
        }
    }
    for (algorithm, levels) in [
        (Algorithm::Tiled, None),
        (Algorithm::Winograd, Some(1)),
        (Algorithm::Fused, Some(1)),
    ] {
        let opts = MatMulOptions {
            algorithm,
            levels,
            ..MatMulOptions::default()
        };
        let c = b
            .matmul(a.view(), bm.view(), &opts)
            .unwrap_or_else(|e| panic!("{algorithm:?}: {e}"));
        for i in 0..m {
            for j in 0..n {
                let got = f64::from(c.get(i, j));
                let want = expected[i * n + j];
                assert!(
                    (got - want).abs() <= 1e-4 * (1.0 + want.abs()) * k as f64,
                    "{algorithm:?}: C[{i}][{j}] = {got}, expected {want}"
                );
            }
        }
    }
}

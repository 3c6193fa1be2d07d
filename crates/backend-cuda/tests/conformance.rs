//! The shared backend conformance suite, on the CUDA backend.
//!
//! Without a CUDA device (or driver) the checks are skipped; with `REQUIRE_GPU=1` a missing
//! device fails them instead. `TRIDENT_KERNEL_DIR` names a folder of kernel images that
//! replace the embedded ones (`cargo xtask mutants`, `run.sh mutants`), `TRIDENT_KERNEL_LOG` a
//! file to which every kernel launched is appended once (`run.sh sanitize`'s coverage).

/// The device of `TRIDENT_CUDA_DEVICE` (default 0), through the driver of
/// `TRIDENT_CUDA_LIBRARY` and with the kernels of `TRIDENT_KERNEL_DIR` when they are set.
fn make() -> trident_core::Result<trident_cuda::Cuda> {
    if let Some(lib) = trident_core::testing::env::gpu_library(trident_cuda::LIBRARY_ENV) {
        trident_cuda::set_driver_library(&lib)?;
    }
    let ordinal = std::env::var(trident_cuda::DEVICE_ENV).ok();
    let mut options =
        trident_cuda::CudaOptions::new(trident_cuda::parse_ordinal(ordinal.as_deref())?);
    if let Some(dir) = trident_core::testing::kernel_dir() {
        eprintln!("cuda conformance: kernels from {}", dir.display());
        options = options.kernel_dir(dir);
    }
    if let Some(log) = trident_core::testing::env::kernel_log() {
        options = options.kernel_log(log);
    }
    trident_cuda::Cuda::with_options(&options)
}

trident_core::spmv_conformance_tests!(trident_cuda::Cuda, super::make());
trident_core::triangles_conformance_tests!(trident_cuda::Cuda, super::make());
trident_core::matmul_conformance_tests!(trident_cuda::Cuda, super::make());
trident_core::svd_conformance_tests!(trident_cuda::Cuda, super::make());
trident_core::mcl_conformance_tests!(trident_cuda::Cuda, super::make());

use trident_core::Backend;

/// Starting the backend returns (an error without a device) rather than panicking.
#[test]
fn new_does_not_panic() {
    match trident_cuda::Cuda::new() {
        Ok(cuda) => {
            assert_eq!(cuda.name(), "cuda");
            let d = cuda.device();
            assert!(d.contains("(sm_") && d.ends_with("GiB)"), "device: {d}");
            eprintln!("CUDA device: {d}");
        }
        Err(e) => eprintln!("no CUDA backend: {e}"),
    }
    match trident_cuda::device_names() {
        Ok(names) => assert!(!names.is_empty()),
        Err(e) => eprintln!("no CUDA devices: {e}"),
    }
}

/// A missing device is reported as `NoDevice`, never as another error, when not required.
#[test]
fn missing_device_is_no_device() {
    if let Err(e) = trident_cuda::Cuda::with_device(usize::MAX) {
        assert!(e.is_no_device(), "expected NoDevice, got {e}");
    }
}

/// Every module of the kernel table loads on the device and defines every kernel it lists.
#[test]
fn every_kernel_of_the_table_loads() {
    let Some(cuda) = trident_core::testing::backend_or_skip(make()) else {
        return;
    };
    if let Err(e) = cuda.load_all_kernels() {
        panic!("{}", trident_core::testing::Report(&e));
    }
}

/// Large copies stage through the backend's page-locked ring (`src/staging.rs`): every byte
/// comes back ([`trident_core::conformance::device::large_copies`]).
#[test]
fn large_copies_round_trip() {
    let Some(cuda) = trident_core::testing::backend_or_skip(make()) else {
        return;
    };
    if let Err(e) = trident_core::conformance::device::large_copies(&cuda) {
        panic!("{e}");
    }
}

/// Buffers past 4 GiB upload, zero and read back whole, where the device holds them
/// ([`trident_core::conformance::device::past_4_gib`]).
#[test]
fn buffers_past_4_gib() {
    let Some(cuda) = trident_core::testing::backend_or_skip(make()) else {
        return;
    };
    match trident_core::conformance::device::past_4_gib(&cuda) {
        Ok(true) => {}
        Ok(false) => eprintln!("buffers_past_4_gib: skipped, the device holds less"),
        Err(e) => panic!("{e}"),
    }
}

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

/// Large copies, which stage through the backend's page-locked ring (`src/staging.rs`): sizes
/// on both sides of the staging threshold and of a slot, odd sizes, and one that wraps the
/// ring more than once, uploaded and read back whole, by a head that ends inside a slot, and
/// into a poisoned buffer: byte for byte, from a pattern in which a chunk placed at another
/// offset, or missed, shows.
#[test]
fn large_copies_round_trip() {
    use trident_core::device::Device;
    use trident_cuda::{STAGED_MIN, STAGING_SLOT as SLOT, STAGING_SLOTS as SLOTS};
    let Some(cuda) = trident_core::testing::backend_or_skip(make()) else {
        return;
    };
    // A byte of position i, from a hash of it (a chunk placed at another offset shows), never
    // the poison.
    let pattern = |i: usize| -> u8 {
        let h = (i as u64 ^ (i as u64 >> 24).wrapping_mul(0x9E37_79B9))
            .wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((h >> 56) as u8) | 1
    };
    let poison = 0u8;
    let sizes = [
        STAGED_MIN - 1,
        STAGED_MIN,
        SLOT - 1,
        SLOT,
        SLOT + 1,
        3 * SLOT + 7,
        (2 * SLOTS + 1) * SLOT + 12_345,
    ];
    for n in sizes {
        let host: Vec<u8> = (0..n).map(pattern).collect();
        let what = format!("{n} bytes");
        let mem = cuda
            .upload_mem(&host, &what)
            .unwrap_or_else(|e| panic!("{}", trident_core::testing::Report(&e)));
        for head in [n, n - 1, n / 2 + 3, STAGED_MIN.min(n)] {
            let mut back = vec![poison; head];
            cuda.read_mem(&mem, &mut back, &what)
                .unwrap_or_else(|e| panic!("{}", trident_core::testing::Report(&e)));
            if let Some(i) = (0..head).find(|&i| back[i] != host[i]) {
                panic!(
                    "{n} bytes read back by their first {head}: byte {i} is {}, not {} \
                     (offset {} in a slot)",
                    back[i],
                    host[i],
                    i % SLOT
                );
            }
        }
        // More than the buffer holds is an error, not a read past it.
        let mut over = vec![poison; n + 1];
        assert!(
            cuda.read_mem(&mem, &mut over, &what).is_err(),
            "{what}: read n + 1"
        );
    }
}

//! The shared backend conformance suite on the OpenCL backend, plus device-selection tests.
//!
//! Without an OpenCL device the suite is skipped, unless `REQUIRE_OPENCL=1` (CI: PoCL must be
//! there); with `REQUIRE_GPU=1` the backend must open a GPU (a CPU runtime such as PoCL does
//! not count), so a misconfigured GPU run fails loudly. `TRIDENT_OPENCL_PLATFORM` picks the
//! platform (e.g. `Oclgrind` for the race detector), `TRIDENT_KERNEL_DIR` a folder of kernel
//! sources that replace the embedded ones (`cargo xtask mutants`).

use trident_core::testing::{backend_or_skip, skip, Needs};
use trident_core::{Backend, Error};
use trident_opencl::{OpenCl, OpenClOptions, Selector};

/// The platform and device filters of `TRIDENT_OPENCL_PLATFORM` / `TRIDENT_OPENCL_DEVICE`.
fn env_selector() -> Selector {
    let var = |name| std::env::var(name).ok();
    Selector::from_filters(
        var(trident_opencl::ENV_PLATFORM).as_deref(),
        var(trident_opencl::ENV_DEVICE).as_deref(),
    )
}

/// The device of the environment's filters, restricted to GPUs under `REQUIRE_GPU=1`, through
/// the ICD loader of `TRIDENT_OPENCL_LIBRARY` and with the kernels of `TRIDENT_KERNEL_DIR` when
/// they are set.
fn make() -> trident_core::Result<OpenCl> {
    if let Some(lib) = trident_core::testing::env::gpu_library(trident_opencl::ENV_LIBRARY) {
        trident_opencl::set_icd_library(&lib)?;
    }
    let mut sel = env_selector();
    sel.gpu_only = trident_core::conformance::require_gpu();
    let mut options = OpenClOptions::new(sel);
    if let Some(dir) = trident_core::testing::kernel_dir() {
        eprintln!("opencl conformance: kernels from {}", dir.display());
        options = options.kernel_dir(dir);
    }
    let b = OpenCl::with_options(&options)?;
    eprintln!("opencl conformance on {}", b.device());
    Ok(b)
}

trident_core::spmv_conformance_tests!(trident_opencl::OpenCl, super::make());
trident_core::triangles_conformance_tests!(trident_opencl::OpenCl, super::make());
trident_core::matmul_conformance_tests!(trident_opencl::OpenCl, super::make());
trident_core::mcl_conformance_tests!(trident_opencl::OpenCl, super::make());
trident_core::svd_conformance_tests!(trident_opencl::OpenCl, super::make());

#[test]
fn non_matching_platform_is_no_device_listing_platforms() {
    let sel = Selector {
        platform: Some("no-such-platform-xyzzy".into()),
        device: None,
        gpu_only: false,
        nth: 0,
    };
    let err = OpenCl::select(&sel).expect_err("no platform is called that");
    let Error::NoDevice {
        backend, message, ..
    } = &err
    else {
        panic!("expected NoDevice, got {err:?}");
    };
    eprintln!("{err}");
    assert_eq!(*backend, "opencl");
    assert!(message.contains("no-such-platform-xyzzy"), "{message}");
    // Every platform found is listed in the message.
    for d in trident_opencl::devices() {
        assert!(
            message.contains(&d.platform),
            "{message} lacks {}",
            d.platform
        );
        assert!(message.contains(&d.name), "{message} lacks {}", d.name);
    }
}

#[test]
fn non_matching_device_is_no_device() {
    let sel = Selector {
        platform: None,
        device: Some("no-such-device-xyzzy".into()),
        gpu_only: false,
        nth: 0,
    };
    assert!(OpenCl::select(&sel).unwrap_err().is_no_device());
}

#[test]
fn gpu_only_opens_a_gpu_or_reports_no_device() {
    let sel = Selector {
        gpu_only: true,
        nth: 0,
        ..Selector::default()
    };
    match OpenCl::select(&sel) {
        Ok(b) => assert!(b.is_gpu(), "{}", b.device()),
        Err(e) => {
            assert!(e.is_no_device(), "{e}");
            assert!(trident_opencl::devices().iter().all(|d| !d.is_gpu));
        }
    }
}

#[test]
fn devices_is_cached() {
    let first = trident_opencl::devices();
    let second = trident_opencl::devices();
    assert_eq!(first, second);
    match trident_opencl::probe_status() {
        Ok(n) => assert_eq!(n, first.len()),
        Err(e) => {
            assert!(e.is_no_device(), "{e}");
            assert!(first.is_empty());
        }
    }
}

#[test]
fn selected_device_matches_its_filters() {
    let Some(d) = trident_opencl::devices().into_iter().next() else {
        return skip(Needs::OpenCl, "no OpenCL device");
    };
    // Filters are case-insensitive substrings.
    let sel = Selector {
        platform: Some(d.platform.to_uppercase()),
        device: Some(d.name.to_lowercase()),
        gpu_only: false,
        nth: 0,
    };
    let b = OpenCl::select(&sel).expect("the listed device opens");
    assert_eq!(b.info().platform, d.platform);
    assert_eq!(b.info().name, d.name);
    assert_eq!(b.name(), "opencl");
    assert!(b
        .device()
        .starts_with(&format!("{}: {} (", d.platform, d.name)));
    assert!(b.device().ends_with(" GiB)"), "{}", b.device());
}

#[test]
fn f64_support_matches_the_device() {
    use trident_core::DeviceVectors;
    let Some(b) = backend_or_skip(OpenCl::new()) else {
        return;
    };
    let up = DeviceVectors::<f64>::upload(&b, &[1.0, 2.0]);
    if b.info().fp64 {
        assert!(b.has_fp64());
        assert!(up.is_ok());
    } else {
        assert!(matches!(up, Err(Error::Unsupported(_))));
    }
}

#[test]
fn data_of_another_instance_is_rejected() {
    use trident_core::{DeviceVectors, EllpackR, Spmv};
    let (Some(b1), Some(b2)) = (
        backend_or_skip(OpenCl::new()),
        backend_or_skip(OpenCl::new()),
    ) else {
        return;
    };
    let a = EllpackR::<f32>::new(1, 1, 1, vec![2.0], vec![0], vec![1]).unwrap();
    let da = b1.upload_ellpack(&a).unwrap();
    let dx = b2.upload(&[3.0f32]).unwrap();
    let mut dy = b1.zeros(1).unwrap();
    assert!(matches!(
        b1.spmv(&da, &dx, &mut dy),
        Err(Error::Backend { .. })
    ));
    assert!(b2.download(&dy).is_err());
    let dx = b1.upload(&[3.0f32]).unwrap();
    b1.spmv(&da, &dx, &mut dy).unwrap();
    assert_eq!(b1.download(&dy).unwrap(), [6.0]);
}

/// Every module of the kernel table builds on the device, in every precision it has, and
/// defines every kernel it lists.
#[test]
fn every_kernel_of_the_table_builds() {
    let Some(b) = trident_core::testing::backend_or_skip(make()) else {
        return;
    };
    if let Err(e) = b.build_all_kernels() {
        panic!("{}", trident_core::testing::Report(&e));
    }
}

/// Large copies stage through the backend's page-locked ring (`src/staging.rs`): every byte
/// comes back ([`trident_core::conformance::device::large_copies`]).
#[test]
fn large_copies_round_trip() {
    let Some(b) = backend_or_skip(make()) else {
        return;
    };
    if let Err(e) = trident_core::conformance::device::large_copies(&b) {
        panic!("{e}");
    }
}

/// Buffers past 4 GiB upload, zero and read back whole, where the device holds them
/// ([`trident_core::conformance::device::past_4_gib`]): on GPUs (`REQUIRE_GPU=1`), not on a
/// CPU runtime such as PoCL, where 12 GiB of host memory would go to it.
#[test]
fn buffers_past_4_gib() {
    if !trident_core::conformance::require_gpu() {
        eprintln!("buffers_past_4_gib: skipped, for GPUs (REQUIRE_GPU=1)");
        return;
    }
    let Some(b) = backend_or_skip(make()) else {
        return;
    };
    match trident_core::conformance::device::past_4_gib(&b) {
        Ok(true) => {}
        Ok(false) => eprintln!("buffers_past_4_gib: skipped, the device holds less"),
        Err(e) => panic!("{e}"),
    }
}

//! Trident's OpenCL backend (through the `ocl` crate).
//!
//! [`OpenCl`] opens one device in its own context with one in-order command queue, and builds
//! the embedded OpenCL C sources ([`kernels`]) for it at construction: `f32` always, `f64`
//! only where the device supports double precision (elsewhere the `f64` methods return
//! [`Error::Unsupported`]). Work is enqueued without waiting; downloads and
//! [`Backend::synchronize`] wait.
//!
//! # Device selection
//!
//! [`OpenCl::new`] honours two environment variables, each a case-insensitive substring:
//! [`ENV_PLATFORM`] (`TRIDENT_OPENCL_PLATFORM`) of the platform name and [`ENV_DEVICE`]
//! (`TRIDENT_OPENCL_DEVICE`) of the device name. Among the devices that match, it takes the
//! first GPU, else the first device of any type. [`OpenCl::select`] takes the same filters
//! explicitly, plus a GPU-only switch. No platform or no matching device gives
//! [`Error::NoDevice`], whose message lists the platforms and devices there are.
//!
//! The system is probed once per process (see [`devices`]); nothing here panics.
//!
//! Linking: the crate links `libOpenCL` (an ICD loader such as ocl-icd); which vendor drivers
//! it finds is up to the loader (`OCL_ICD_VENDORS`, `/etc/OpenCL/vendors`).

#![warn(missing_docs)]

pub mod kernels;
mod probe;
mod program;
mod spmv;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use ocl::core::Status;
use trident_core::{Backend, Error, Result};

pub use probe::{devices, probe_status, DeviceInfo, Selector, ENV_DEVICE, ENV_PLATFORM};
pub use spmv::{ClEllpack, ClScalar, ClVector, PASSES_ENV};

use program::CachedKernel;

/// The backend's name in errors and in [`Backend::name`].
const BACKEND: &str = "opencl";

/// Source of the instance ids that tie device data to the backend that made it.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The OpenCL backend: one device, its context, an in-order queue and the built kernels.
///
/// `Send + Sync`: OpenCL API calls are thread-safe, and the one non-thread-safe operation
/// (setting kernel arguments) is serialised per kernel.
pub struct OpenCl {
    /// Ties vectors and matrices to this instance (a buffer is only valid in its context).
    id: u64,
    info: DeviceInfo,
    queue: ocl::Queue,
    spmv_f32: CachedKernel,
    spmv_f64: Option<CachedKernel>,
    // Kept last: dropped after everything created in it.
    _context: ocl::Context,
}

impl fmt::Debug for OpenCl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenCl")
            .field("device", &self.info.description())
            .field("fp64", &self.spmv_f64.is_some())
            .finish_non_exhaustive()
    }
}

impl OpenCl {
    /// Opens the device chosen by [`Selector::from_env`]: the platform and device filters of
    /// `TRIDENT_OPENCL_PLATFORM` and `TRIDENT_OPENCL_DEVICE`, preferring a GPU.
    pub fn new() -> Result<Self> {
        Self::select(&Selector::from_env())
    }

    /// Opens the device `sel` chooses: among the devices whose platform and device names
    /// contain the given substrings (ignoring case), the first GPU, else (unless
    /// `sel.gpu_only`) the first device. Fails with [`Error::NoDevice`] when none matches,
    /// and with [`Error::Backend`] when the kernels do not build (the message holds the
    /// compiler's log).
    pub fn select(sel: &Selector) -> Result<Self> {
        let found = probe::choose(sel)?;
        catch_unwind(AssertUnwindSafe(|| Self::open(found))).unwrap_or_else(|_| {
            Err(backend_err(
                "opening the device",
                "the OpenCL wrapper panicked",
            ))
        })
    }

    fn open(found: &probe::Found) -> Result<Self> {
        let info = found.info.clone();
        let desc = info.description();
        let device = ocl::Device::from(found.device);
        let open_err = |what: &str, e: ocl::Error| match e.api_status() {
            Some(Status::CL_DEVICE_NOT_AVAILABLE) => Error::NoDevice {
                backend: BACKEND,
                message: format!("{desc} is not available"),
                source: None,
            },
            _ => backend_err(&format!("{what} on {desc}"), describe(e)),
        };
        let context = ocl::Context::builder()
            .platform(ocl::Platform::from(found.platform))
            .devices(device)
            .build()
            .map_err(|e| open_err("creating a context", e))?;
        let queue = ocl::Queue::new(&context, device, None)
            .map_err(|e| open_err("creating a command queue", e))?;
        let wg = info.max_work_group_size;
        let f32_prog = program::build(
            &context,
            found.device,
            &desc,
            kernels::SPMV,
            "-D REAL=float -D SUFFIX=f32",
        )?;
        let spmv_f32 = CachedKernel::new(&f32_prog, "spmv_ellr_f32", found.device, wg)?;
        let spmv_f64 = if info.fp64 {
            let f64_prog = program::build(
                &context,
                found.device,
                &desc,
                kernels::SPMV,
                "-D REAL=double -D SUFFIX=f64 -D TRIDENT_FP64",
            )?;
            Some(CachedKernel::new(
                &f64_prog,
                "spmv_ellr_f64",
                found.device,
                wg,
            )?)
        } else {
            None
        };
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            info,
            queue,
            spmv_f32,
            spmv_f64,
            _context: context,
        })
    }

    /// True if the device is a GPU.
    pub fn is_gpu(&self) -> bool {
        self.info.is_gpu
    }

    /// True if the device runs the `f64` kernels.
    pub fn has_fp64(&self) -> bool {
        self.spmv_f64.is_some()
    }

    /// What is known about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Work-group size of the SpMV kernel for `T` (`None` if `T` is unsupported here).
    pub fn spmv_work_group_size<T: ClScalar>(&self) -> Option<usize> {
        self.spmv_kernel::<T>().ok().map(|k| k.local)
    }
}

impl Backend for OpenCl {
    fn name(&self) -> &'static str {
        BACKEND
    }

    fn device(&self) -> String {
        self.info.description()
    }

    fn synchronize(&self) -> Result<()> {
        self.queue
            .finish()
            .map_err(|e| backend_err("waiting for the queue", describe(e)))
    }
}

/// [`Error::Backend`] with `context: message`.
pub(crate) fn backend_err(context: &str, message: impl fmt::Display) -> Error {
    Error::Backend {
        backend: BACKEND,
        message: format!("{context}: {message}"),
        source: None,
    }
}

/// An OpenCL error in one line: the status name and code where there is one (ocl's own
/// rendering spans a dozen lines), else ocl's message.
pub(crate) fn describe(e: impl Into<ocl::Error>) -> String {
    let e = e.into();
    match e.api_status() {
        Some(s) => format!("{s:?} ({})", s as i32),
        None => e.to_string().trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn backend_is_send_and_sync() {
        assert_send_sync::<OpenCl>();
    }

    /// A broken source: the error is `Backend`, names the file and line, and holds the log.
    #[test]
    fn build_errors_carry_the_log() {
        let Some(found) = probe::choose(&Selector::default()).ok() else {
            eprintln!("skipping: no OpenCL device");
            return;
        };
        let device = ocl::Device::from(found.device);
        let context = ocl::Context::builder()
            .platform(ocl::Platform::from(found.platform))
            .devices(device)
            .build()
            .expect("context");
        let broken = kernels::Source {
            file: "kernels/opencl/broken.cl",
            text: "__kernel void f(__global float *y)\n{\n    y[0] = no_such_symbol;\n}\n",
        };
        let err = program::build(&context, found.device, "test device", broken, "")
            .expect_err("a broken source must not build");
        let Error::Backend { message, .. } = &err else {
            panic!("expected a backend error, got {err:?}");
        };
        eprintln!("{err}");
        assert!(message.contains("kernels/opencl/broken.cl"), "{message}");
        assert!(message.contains("no_such_symbol"), "{message}");
        assert!(message.contains("broken.cl:3"), "{message}");
    }

    /// Every embedded source builds in both precisions on the device found here.
    #[test]
    fn embedded_sources_build() {
        match OpenCl::new() {
            Ok(b) => {
                assert_eq!(b.spmv_f64.is_some(), b.info.fp64);
                let local = b.spmv_work_group_size::<f32>().unwrap();
                assert!(local.is_power_of_two() && local <= 256);
            }
            Err(e) if e.is_no_device() => eprintln!("skipping: {e}"),
            Err(e) => panic!("{e}"),
        }
    }
}

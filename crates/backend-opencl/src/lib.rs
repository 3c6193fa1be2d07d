//! Trident's OpenCL backend (through the `ocl` crate).
//!
//! [`OpenCl`] opens one device in its own context with one in-order command queue. The
//! embedded OpenCL C sources ([`kernels`]) are built for it on first use, one program per
//! file and precision, and cached: `f64` programs only where the device supports double
//! precision (elsewhere the `f64` methods return [`Error::Unsupported`]). Work is enqueued
//! without waiting; downloads and [`Backend::synchronize`] wait.
//!
//! # Device selection
//!
//! [`OpenCl::select`] (or [`OpenClOptions::selector`]) takes a [`Selector`]: case-insensitive
//! substrings of the platform and device names, and a GPU-only switch. Among the devices
//! that match, it takes the first GPU, else the first device of any type; [`OpenCl::new`]
//! has no filter. No platform or no matching device gives [`Error::NoDevice`], whose message
//! lists the platforms and devices there are. The library reads no environment: the CLI,
//! benchmarks and test harnesses turn [`ENV_PLATFORM`] (`TRIDENT_OPENCL_PLATFORM`) and
//! [`ENV_DEVICE`] (`TRIDENT_OPENCL_DEVICE`) into a selector with [`Selector::from_filters`].
//!
//! The system is probed once per process (see [`devices`]); nothing here panics.
//!
//! Linking: the OpenCL ICD loader (`libOpenCL.so.1`) is loaded lazily on the first OpenCL
//! call, so a binary starts without one and reports no platform; which vendor drivers the
//! loader finds is up to it (`OCL_ICD_VENDORS`, `/etc/OpenCL/vendors`).
//!
//! # The device layer
//!
//! [`OpenCl`] implements [`trident_core::device::Device`] (`src/device.rs`); every algorithm's
//! GPU host code is written once over that trait in `trident-core` (see its `device` module
//! for the launch builder) and runs here through blanket impls. What is OpenCL's own: the
//! kernel table (`src/kernels.rs`: each `kernels/opencl/<alg>.cl` is one [`kernels::Module`],
//! built per device and precision on first use and cached; typed roots are defined as
//! `TRIDENT_CAT(root_, SUFFIX)` over `REAL`; a build failure is an [`Error::Backend`] naming
//! `kernels/opencl/<alg>.cl:LINE`, with the compiler's log), device discovery
//! (`src/probe.rs`), matmul's host-pointer staging (`src/matmul.rs`), launches that check the
//! argument count and owner, and OpenCL errors that keep their status as the source
//! ([`ClError`]).

#![warn(missing_docs)]

mod device;
mod error;
pub mod kernels;
mod matmul;
mod memory;
mod probe;
mod program;
mod staging;

use std::borrow::Cow;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ocl::core::Status;
use trident_core::gpu::{Cached, Precision};
use trident_core::{Backend, Error, Result, ResultExt, Scalar};

pub use device::ClMem;
pub use error::ClError;
pub use matmul::{CPU_DEVICE_CUTOFF, GPU_CUTOFF};
pub use memory::{ClScalar, ClVector};
pub use probe::{
    devices, probe_status, set_icd_library, DeviceInfo, Selector, ENV_DEVICE, ENV_LIBRARY,
    ENV_PLATFORM,
};
pub use program::CachedKernel;

/// An ELLPACK-R matrix in OpenCL device memory (see [`trident_core::Spmv`]).
pub type ClEllpack<T> = trident_core::spmv::device::DeviceEllpack<OpenCl, T>;
/// An oriented graph in OpenCL device memory (see [`trident_core::TriangleCount`]).
pub type ClOriented = trident_core::triangles::device::DeviceOriented<OpenCl>;
/// A column-major matrix of the SVD in OpenCL device memory (see [`trident_core::svd::SvdKernels`]).
pub type ClMat<T> = trident_core::svd::device::DeviceMat<OpenCl, T>;
/// The rotations of a Givens QR in OpenCL device memory (see [`trident_core::svd::SvdKernels`]).
pub type ClRotations<T> = trident_core::svd::device::DeviceRotations<OpenCl, T>;

use error::{cl_error, ClResultExt};
use kernels::{build_options, Module, DIALECT};

/// The backend's name in errors and in [`Backend::name`].
const BACKEND: &str = "opencl";

/// Source of the instance ids that tie device data to the backend that made it.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A module of the kernel table built for one precision, with its kernels by slot
/// ([`trident_core::gpu::KernelList`]): the typed kernels of that precision and the plain
/// ones (`None` in the other slots).
struct Built {
    kernels: Vec<Option<CachedKernel>>,
    // Only held: the kernels keep their program alive anyway, but it documents where they
    // come from.
    _program: ocl::core::Program,
}

/// How [`OpenCl::with_options`] opens a device and where its kernels come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenClOptions {
    /// Which device to open.
    pub selector: Selector,
    /// A folder whose `<module>.cl` files replace the embedded sources of those modules
    /// (e.g. `spmv.cl` for `kernels/opencl/spmv.cl`); modules without a file there use the
    /// embedded source. For testing kernel changes without rebuilding (`cargo xtask
    /// mutants`); `None` (the default) builds the embedded sources only.
    pub kernel_dir: Option<PathBuf>,
}

impl OpenClOptions {
    /// The options that open the device `selector` chooses, with the embedded kernels.
    pub fn new(selector: Selector) -> Self {
        Self {
            selector,
            kernel_dir: None,
        }
    }

    /// These options with kernel sources read from `dir` (see [`OpenClOptions::kernel_dir`]).
    pub fn kernel_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kernel_dir = Some(dir.into());
        self
    }
}

/// The OpenCL backend: one device, its context, an in-order queue and the built kernels.
///
/// `Send + Sync`: OpenCL API calls are thread-safe, and the one non-thread-safe operation
/// (setting kernel arguments) is serialised per kernel.
pub struct OpenCl {
    /// Ties vectors and matrices to this instance (a buffer is only valid in its context).
    id: u64,
    info: DeviceInfo,
    queue: ocl::Queue,
    /// Host-memory buffers that `matmul` stages through, reused across calls.
    staging: matmul::Staging,
    /// The page-locked ring that large uploads and downloads stage through
    /// (`src/staging.rs`), made on first use.
    transfers: staging::Transfers,
    /// One cell per [`Module`] and [`Precision`], filled on first use.
    programs: Vec<[Cached<Built>; 2]>,
    /// The platform's device id, for builds.
    device: ocl::core::DeviceId,
    /// Where kernel sources that replace the embedded ones are read from.
    kernel_dir: Option<PathBuf>,
    // Kept last: dropped after everything created in it.
    context: ocl::Context,
}

impl fmt::Debug for OpenCl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenCl")
            .field("device", &self.info.description())
            .field("fp64", &self.info.fp64)
            .finish_non_exhaustive()
    }
}

impl OpenCl {
    /// Opens the first GPU, else the first device, of any platform ([`Selector::default`];
    /// [`OpenCl::select`] and [`OpenCl::with_options`] filter).
    pub fn new() -> Result<Self> {
        Self::select(&Selector::default())
    }

    /// Opens the device `sel` chooses: among the devices whose platform and device names
    /// contain the given substrings (ignoring case), the first GPU, else (unless
    /// `sel.gpu_only`) the first device. Fails with [`Error::NoDevice`] when none matches.
    /// Kernels are built on first use ([`OpenCl::build_all_kernels`] builds them all).
    pub fn select(sel: &Selector) -> Result<Self> {
        Self::with_options(&OpenClOptions::new(sel.clone()))
    }

    /// Opens the device `options.selector` chooses (see [`OpenCl::select`]), building the
    /// kernels from `options.kernel_dir` where it has a file for them.
    pub fn with_options(options: &OpenClOptions) -> Result<Self> {
        let found = probe::choose(&options.selector)?;
        let opened = catch_unwind(AssertUnwindSafe(|| Self::open(found)));
        let mut backend = opened.unwrap_or_else(|_| {
            Err(Error::backend(
                BACKEND,
                "opening the device: the OpenCL wrapper panicked",
            ))
        })?;
        backend.kernel_dir = options.kernel_dir.clone();
        Ok(backend)
    }

    fn open(found: &probe::Found) -> Result<Self> {
        let info = found.info.clone();
        let desc = info.description();
        let device = ocl::Device::from(found.device);
        let open_err = |what: &str, e: ocl::Error| match e.api_status() {
            Some(Status::CL_DEVICE_NOT_AVAILABLE) => {
                Error::no_device(BACKEND, format!("{desc} is not available"))
                    .with_source(ClError::new(e))
            }
            _ => cl_error(format!("{what} on {desc}"), e),
        };
        let context = ocl::Context::builder()
            .platform(ocl::Platform::from(found.platform))
            .devices(device)
            .build()
            .map_err(|e| open_err("creating a context", e))?;
        let queue = ocl::Queue::new(&context, device, None)
            .map_err(|e| open_err("creating a command queue", e))?;
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            info,
            queue,
            staging: matmul::Staging::default(),
            transfers: staging::Transfers::default(),
            programs: Module::ALL
                .iter()
                .map(|_| [Cached::new(), Cached::new()])
                .collect(),
            device: found.device,
            kernel_dir: None,
            context,
        })
    }

    /// True if the device is a GPU.
    pub fn is_gpu(&self) -> bool {
        self.info.is_gpu
    }

    /// True if the device runs the `f64` kernels.
    pub fn has_fp64(&self) -> bool {
        self.info.fp64
    }

    /// What is known about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Work-group size of the SpMV kernel for `T` (`None` if `T` is unsupported here or the
    /// kernel does not build).
    pub fn spmv_work_group_size<T: ClScalar>(&self) -> Option<usize> {
        self.kernel::<T>(Module::Spmv, "spmv_ellr")
            .ok()
            .map(|k| k.local)
    }

    /// Fails with [`Error::Unsupported`] for a precision the device lacks (`f64` without
    /// double precision).
    pub(crate) fn check_precision(&self, p: Precision) -> Result<()> {
        if p == Precision::F64 && !self.info.fp64 {
            return Err(Error::Unsupported(format!(
                "{} on OpenCL device {} (no double precision)",
                p.name(),
                self.info.description()
            )));
        }
        Ok(())
    }

    /// Module `m` built for precision `p` (on first use).
    fn program(&self, m: Module, p: Precision) -> Result<&Built> {
        self.check_precision(p)?;
        self.programs[m as usize][p.index()].get_or_try_init(|| {
            let info = m.info();
            let (file, text) = self.source_of(m)?;
            let program = program::build_text(
                &self.context,
                self.device,
                &self.info.description(),
                &file,
                &text,
                info.source.shared.then_some(&DIALECT),
                build_options(p),
            )?;
            let wg = self.info.max_work_group_size;
            let kernels = info
                .kernels
                .names()
                .iter()
                .enumerate()
                .map(|(slot, name)| match info.kernels.precision_of(slot) {
                    Some(q) if q != p => Ok(None),
                    _ => CachedKernel::new(&program, name, self.device, wg).map(Some),
                })
                .collect::<Result<Vec<_>>>()
                .context(|| info.source.file)?;
            Ok(Built {
                kernels,
                _program: program,
            })
        })
    }

    /// The source of module `m` and the file name its build messages give: the file of
    /// the kernel folder when there is one for `m`, else the embedded source.
    fn source_of(&self, m: Module) -> Result<(Cow<'static, str>, Cow<'static, str>)> {
        let info = m.info();
        let Some(dir) = &self.kernel_dir else {
            return Ok((info.source.file.into(), info.source.text.into()));
        };
        let path = Path::new(dir).join(format!("{}.cl", info.name));
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok((path.display().to_string().into(), text.into())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok((info.source.file.into(), info.source.text.into()))
            }
            Err(e) => Err(Error::backend(
                BACKEND,
                format!("reading the kernel source {}: {e}", path.display()),
            )),
        }
    }

    /// The kernel in `slot` of module `m` built for `p`; `slot` is `None` when the table
    /// does not list the kernel `name`.
    fn kernel_in(
        &self,
        m: Module,
        p: Precision,
        slot: Option<usize>,
        name: impl FnOnce() -> String,
    ) -> Result<&CachedKernel> {
        let missing = || {
            Error::backend(
                BACKEND,
                format!(
                    "kernel {} is not in the table entry of {} (src/kernels.rs)",
                    name(),
                    m.info().source.file
                ),
            )
        };
        let kernel = match slot {
            Some(slot) => self.program(m, p)?.kernels[slot].as_ref(),
            None => None,
        };
        kernel.ok_or_else(missing)
    }

    /// The kernel `root` for `T` (`<root>_f32` or `<root>_f64`) of module `m`, building the
    /// module for `T` on first use. Fails with [`Error::Unsupported`] for `f64` on a device
    /// without double precision, [`Error::Backend`] if the table entry of `m` does not list
    /// `root` or the module does not build.
    pub(crate) fn kernel<T: Scalar>(&self, m: Module, root: &str) -> Result<&CachedKernel> {
        let p = Precision::of::<T>();
        let slot = m.info().kernels.typed_slot(root, p);
        self.kernel_in(m, p, slot, || p.kernel_name(root))
    }

    /// The kernel called `name` (listed as plain, without a precision suffix) of module `m`,
    /// from its `f32` build; see [`OpenCl::kernel`].
    pub(crate) fn kernel_plain(&self, m: Module, name: &str) -> Result<&CachedKernel> {
        let slot = m.info().kernels.plain_slot(name);
        self.kernel_in(m, Precision::F32, slot, || name.to_string())
    }

    /// Builds every module of the kernel table in every precision the device supports and
    /// creates every kernel it lists (tests; normal use builds modules lazily).
    pub fn build_all_kernels(&self) -> Result<()> {
        for &m in Module::ALL {
            for p in Precision::ALL {
                if self.check_precision(p).is_ok() {
                    self.program(m, p)?;
                }
            }
        }
        Ok(())
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
        self.queue.finish().or_cl(|| "waiting for the queue")
    }
}

// The backend and its data may be shared between threads.
trident_core::assert_send_sync!(OpenCl, ClVector<f32>, ClEllpack<f64>);

#[cfg(test)]
mod tests {
    use super::*;

    /// A broken source: the error is `Backend`, names the file and line, and holds the log.
    #[test]
    fn build_errors_carry_the_log() {
        let found = match probe::choose(&Selector::default()) {
            Ok(found) => found,
            Err(e) => return trident_core::testing::skip(trident_core::testing::Needs::OpenCl, e),
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
            shared: false,
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

    /// Every module of the table builds in every precision the device has, and defines
    /// every kernel the table lists; unlisted kernels and missing precisions are errors.
    #[test]
    fn embedded_sources_build() {
        let Some(b) = trident_core::testing::backend_or_skip(OpenCl::new()) else {
            return;
        };
        b.build_all_kernels().unwrap();
        let local = b.spmv_work_group_size::<f32>().unwrap();
        assert!(local.is_power_of_two() && local <= 256);
        assert_eq!(
            b.kernel::<f32>(Module::Spmv, "spmv_ellr").unwrap().name(),
            "spmv_ellr_f32"
        );
        let e = b.kernel::<f32>(Module::Spmv, "no_such_root").err().unwrap();
        assert!(e.to_string().contains("not in the table"), "{e}");
        assert_eq!(
            b.kernel::<f64>(Module::Spmv, "spmv_ellr").is_ok(),
            b.info.fp64
        );
    }
}

//! Trident's CUDA backend: the algorithm traits of `trident-core` on an NVIDIA GPU, through
//! the CUDA driver API (`cust`).
//!
//! The kernels (`kernels/cuda/*.cu`) are compiled to PTX by `build.rs` with nvcc and embedded
//! in the crate ([`kernels`]); the driver JIT-compiles them when a [`Cuda`] backend starts
//! (`compute_90` PTX on devices of compute capability 9.0 and newer, `compute_75` PTX on older
//! ones).
//!
//! ```no_run
//! use trident_core::{EllpackR, Spmv};
//! # fn main() -> trident_core::Result<()> {
//! let cuda = trident_cuda::Cuda::new()?; // Err(Error::NoDevice { .. }) without a GPU
//! // [[2, 0], [1, 3]]
//! let a = EllpackR::<f32>::new(2, 2, 2, vec![2.0, 1.0, 0.0, 3.0], vec![0, 0, 0, 1], vec![1, 2])?;
//! let y = cuda.spmv_host(&a, &[1.0, 1.0])?;
//! assert_eq!(y, [2.0, 4.0]);
//! # Ok(()) }
//! ```
//!
//! Every public entry point makes the backend's CUDA context current on the calling thread,
//! so a [`Cuda`] may be shared between threads. Work is queued on one stream per backend;
//! downloads and [`Backend::synchronize`] wait for it. No function panics on a driver
//! failure: a machine without a CUDA driver or device gets [`Error::NoDevice`].

//! Linking: `libcuda.so.1` is loaded lazily on the first driver call, so a binary starts on
//! a machine without a CUDA driver and reports [`Error::NoDevice`] there.
//!
//! # The device layer
//!
//! [`Cuda`] implements [`trident_core::device::Device`] (`src/device.rs`); every algorithm's
//! GPU host code is written once over that trait in `trident-core` (see its `device` module
//! for the launch builder) and runs here through blanket impls. What is CUDA's own: the
//! kernel table (`src/kernels.rs`: each `kernels/cuda/<alg>.cu` is one [`kernels::Module`],
//! compiled to PTX by `build.rs`, JIT-loaded on first use and cached; a load failure is an
//! [`Error::Backend`] naming the file, with the JIT log), the FP64 tensor-core GEMMs and
//! page-locked staging of matmul (`src/matmul.rs`), and driver errors that keep their code as
//! the source ([`DriverError`]).

#![warn(missing_docs)]

mod device;
mod driver;
pub mod kernels;
mod launch;
mod matmul;
mod memory;
pub mod nccl;
mod staging;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::stream::{Stream, StreamFlags};
use trident_core::gpu::{Cached, Precision};
use trident_core::{Backend, Error, Result, ResultExt};

use driver::CuResultExt;
use kernels::{Module, ModuleInfo};

pub use driver::{set_driver_library, DriverError};
pub use launch::Kernel;
pub use matmul::GPU_CUTOFF;
pub use memory::{CudaScalar, CudaVector, DevBuf};

/// An ELLPACK-R matrix in CUDA device memory (see [`trident_core::Spmv`]).
pub type CudaEllpack<T> = trident_core::spmv::device::DeviceEllpack<Cuda, T>;
/// An oriented graph in CUDA device memory (see [`trident_core::TriangleCount`]).
pub type CudaOriented = trident_core::triangles::device::DeviceOriented<Cuda>;
/// A column-major matrix of the SVD in CUDA device memory (see [`trident_core::svd::SvdKernels`]).
pub type CudaMat<T> = trident_core::svd::device::DeviceMat<Cuda, T>;
/// The rotations of a Givens QR in CUDA device memory (see [`trident_core::svd::SvdKernels`]).
pub type CudaRotations<T> = trident_core::svd::device::DeviceRotations<Cuda, T>;

/// The environment variable through which the CLI, the benchmarks and the test harnesses
/// pick the device ordinal ([`CudaOptions::device`], parsed by [`parse_ordinal`]); the
/// library itself reads no environment.
pub const DEVICE_ENV: &str = "TRIDENT_CUDA_DEVICE";

/// The environment variable through which the CLI, the benchmarks and the test harnesses
/// name the driver library to load ([`set_driver_library`]); the library itself reads no
/// environment.
pub const LIBRARY_ENV: &str = "TRIDENT_CUDA_LIBRARY";

/// A module of the kernel table, loaded into the backend's context, with its kernels in the
/// order of their slots ([`trident_core::gpu::KernelList::names`]).
struct Loaded {
    functions: Vec<(String, driver::Function)>,
    // Only held: keeps the `functions` valid until it is unloaded on drop.
    _module: driver::Module,
}

/// The state shared by a backend and everything it allocated: the context (kept alive as
/// long as any buffer is), the stream and the loaded kernel modules.
pub(crate) struct Shared {
    ordinal: usize,
    /// Where kernel images that replace the embedded ones are read from.
    kernel_dir: Option<PathBuf>,
    /// [`CudaOptions::kernel_log`], and the kernels already written to it.
    kernel_log: Option<(
        PathBuf,
        std::sync::Mutex<std::collections::BTreeSet<String>>,
    )>,
    /// Compute capability, which picks the machine code or the PTX flavour.
    cc: (u32, u32),
    // Field order is drop order: the modules and the stream go before the context.
    /// One cell per [`Module`], filled on first use.
    modules: Vec<Cached<Loaded>>,
    stream: Stream,
    context: Context,
}

impl Shared {
    /// Makes the context current on the calling thread.
    pub(crate) fn make_current(&self) -> Result<()> {
        CurrentContext::set_current(&self.context).or_cuda(|| "making the CUDA context current")
    }

    /// Waits for the work queued on the stream (the context must be current).
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .or_cuda(|| "waiting for the CUDA stream (a kernel failed?)")
    }

    /// The stream's driver handle, for asynchronous copies and events on it.
    pub(crate) fn raw_stream(&self) -> cust::sys::CUstream {
        self.stream.as_inner()
    }

    /// Module `m`, loaded into the context (which must be current) on first use.
    fn module(&self, m: Module) -> Result<&Loaded> {
        self.modules[m as usize].get_or_try_init(|| {
            let info = m.info();
            let module = match &self.kernel_dir {
                Some(dir) => match load_from_dir(dir, info, self.cc)? {
                    Some(module) => module,
                    None => load_embedded(info, self.cc)?,
                },
                None => load_embedded(info, self.cc)?,
            };
            let functions = info
                .kernels
                .names()
                .into_iter()
                .map(|name| {
                    let f = module.function(&name)?;
                    Ok((name, f))
                })
                .collect::<Result<Vec<_>>>()
                .context(|| info.file)?;
            Ok(Loaded {
                functions,
                _module: module,
            })
        })
    }

    /// The kernel in `slot` of module `m` ([`trident_core::gpu::KernelList`]); `slot` is
    /// `None` when the table does not list the kernel `name`.
    fn kernel(
        &self,
        m: Module,
        slot: Option<usize>,
        name: impl FnOnce() -> String,
    ) -> Result<Kernel<'_>> {
        let info: &ModuleInfo = m.info();
        let slot = slot.ok_or_else(|| {
            driver::backend(format!(
                "kernel {} is not in the table entry of {} (src/kernels.rs)",
                name(),
                info.file
            ))
        })?;
        self.make_current()?;
        let (name, function) = &self.module(m)?.functions[slot];
        if let Some((path, seen)) = &self.kernel_log {
            let mut seen = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if seen.insert(name.clone()) {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .and_then(|mut f| writeln!(f, "{name}"))
                    .map_err(|e| {
                        driver::backend(format!("writing the kernel log {}: {e}", path.display()))
                    })?;
            }
        }
        Ok(Kernel {
            function: *function,
            name,
            stream: self.stream.as_inner(),
        })
    }
}

/// The embedded machine code of `info` when there is some for compute capability `cc`, else
/// (or when the driver refuses it) its PTX, JIT-compiled.
fn load_embedded(info: &ModuleInfo, cc: (u32, u32)) -> Result<driver::Module> {
    match info
        .cubin(cc)
        .map(|image| driver::Module::from_cubin(image, info.file))
    {
        Some(Ok(module)) => Ok(module),
        _ => driver::Module::from_ptx(info.ptx(cc.0), info.file),
    }
}

/// Module `info` from the kernel folder `dir` (see [`CudaOptions::kernel_dir`]): its machine
/// code `<name>.sm90.cubin` on a device of compute capability 9.0, else its PTX
/// `<name>.sm90.ptx` (compute capability 9.0 and newer) or `<name>.portable.ptx`. `None` when
/// the folder has no file of the module at all; an error when it has some, but none for this
/// device, or one that does not load.
fn load_from_dir(dir: &Path, info: &ModuleInfo, cc: (u32, u32)) -> Result<Option<driver::Module>> {
    let file = |suffix: &str| dir.join(format!("{}.{suffix}", info.name));
    let read_err = |path: &Path, e: std::io::Error| {
        driver::backend(format!("reading the kernel image {}: {e}", path.display()))
    };
    let cubin = file("sm90.cubin");
    if cc == (9, 0) && cubin.is_file() {
        let image = std::fs::read(&cubin).map_err(|e| read_err(&cubin, e))?;
        return driver::Module::from_cubin(&image, &cubin.display().to_string()).map(Some);
    }
    let ptx = file(if cc.0 >= 9 {
        "sm90.ptx"
    } else {
        "portable.ptx"
    });
    if ptx.is_file() {
        let text = std::fs::read_to_string(&ptx).map_err(|e| read_err(&ptx, e))?;
        return driver::Module::from_ptx(&text, &ptx.display().to_string()).map(Some);
    }
    let others: Vec<String> = ["sm90.cubin", "sm90.ptx", "portable.ptx"]
        .into_iter()
        .map(file)
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if others.is_empty() {
        return Ok(None);
    }
    Err(driver::backend(format!(
        "the kernel folder has {} but no image of {} for compute capability {}.{} (wants {})",
        others.join(", "),
        info.file,
        cc.0,
        cc.1,
        ptx.display()
    )))
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The module unload and stream destruction that follow need the context current.
        let _ = CurrentContext::set_current(&self.context);
    }
}

/// How [`Cuda::with_options`] opens a device and where its kernels come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CudaOptions {
    /// The device ordinal (0-based).
    pub device: usize,
    /// A folder of kernel images that replace the embedded ones, named as `build.rs` names
    /// them: `<module>.sm90.cubin` (loaded on compute capability 9.0), `<module>.sm90.ptx`
    /// (9.0 and newer) and `<module>.portable.ptx` (older), e.g. `spmv.sm90.ptx` for
    /// `kernels/cuda/spmv.cu`. Modules without a file there use the embedded images. For
    /// testing kernel changes without rebuilding (`cargo xtask mutants`); `None` (the
    /// default) loads the embedded images only.
    pub kernel_dir: Option<PathBuf>,
    /// A file to which the name of every kernel is appended the first time this backend
    /// launches it (tests: which kernels a sanitizer run covered). `None` by default.
    pub kernel_log: Option<PathBuf>,
}

impl CudaOptions {
    /// The options that open device `ordinal` with the embedded kernels.
    pub fn new(ordinal: usize) -> Self {
        Self {
            device: ordinal,
            kernel_dir: None,
            kernel_log: None,
        }
    }

    /// These options with the kernel log `file` (see [`CudaOptions::kernel_log`]).
    pub fn kernel_log(mut self, file: impl Into<PathBuf>) -> Self {
        self.kernel_log = Some(file.into());
        self
    }

    /// These options with kernel images read from `dir` (see [`CudaOptions::kernel_dir`]).
    pub fn kernel_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kernel_dir = Some(dir.into());
        self
    }
}

/// The CUDA backend: one device, its primary context, one stream and the loaded kernels.
///
/// `Send + Sync`; cheap operations (`device`, `name`) do not touch the driver.
pub struct Cuda {
    /// Page-locked host memory that `matmul` stages through (declared first: freed, with the
    /// context current, before `shared` can release the context).
    staging: matmul::Staging,
    /// The page-locked ring that large uploads and downloads stage through (`src/staging.rs`),
    /// made on first use.
    transfers: staging::Transfers,
    /// The NCCL communicator of the ranks this backend serves, made on first use (declared
    /// before `shared`: destroyed while the context lives).
    nccl: std::sync::Mutex<nccl::State>,
    shared: Arc<Shared>,
    name: String,
    compute_capability: (u32, u32),
    total_memory: usize,
    l2_bytes: usize,
    compute_units: u32,
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cuda")
            .field("ordinal", &self.shared.ordinal)
            .field("device", &self.description())
            .finish()
    }
}

impl Cuda {
    /// The backend on device 0 ([`CudaOptions::default`]; [`Cuda::with_options`] picks
    /// another).
    ///
    /// Fails with [`Error::NoDevice`] when there is no CUDA driver or device (the caller may
    /// skip or fall back), [`Error::Backend`] when the kernels cannot be loaded.
    pub fn new() -> Result<Cuda> {
        Cuda::with_options(&CudaOptions::default())
    }

    /// The backend on the device with this ordinal (0-based, as `nvidia-smi` numbers them
    /// unless `CUDA_VISIBLE_DEVICES` says otherwise).
    pub fn with_device(ordinal: usize) -> Result<Cuda> {
        Cuda::with_options(&CudaOptions::new(ordinal))
    }

    /// The backend on device `options.device`, loading kernels from `options.kernel_dir`
    /// where it has images for them.
    pub fn with_options(options: &CudaOptions) -> Result<Cuda> {
        let ordinal = options.device;
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::no_device(
                driver::BACKEND,
                format!("device {ordinal} requested, but there are {count}"),
            ));
        }
        let what = |s: &str| format!("CUDA device {ordinal}: {s}");
        // `ordinal < count <= i32::MAX`, so this conversion is exact.
        let device = Device::get_device(ordinal as u32).or_no_device(|| what("cuDeviceGet"))?;
        let name = device.name().or_no_device(|| what("reading its name"))?;
        let attr = |a: DeviceAttribute, s: &str| -> Result<u32> {
            let v = device.get_attribute(a).or_no_device(|| what(s))?;
            Ok(u32::try_from(v).unwrap_or(0))
        };
        let compute_capability = (
            attr(
                DeviceAttribute::ComputeCapabilityMajor,
                "compute capability",
            )?,
            attr(
                DeviceAttribute::ComputeCapabilityMinor,
                "compute capability",
            )?,
        );
        // Only tunes the SpMV passes; 4 MiB (conservative) if the driver does not say.
        let l2_bytes = device
            .get_attribute(DeviceAttribute::L2CacheSize)
            .ok()
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&v| v > 0)
            .unwrap_or(4 << 20);
        let compute_units = device
            .get_attribute(DeviceAttribute::MultiprocessorCount)
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0);
        let total_memory = device
            .total_memory()
            .or_no_device(|| what("reading its memory size"))?;

        if let Some(reason) = kernels::MISSING_REASON {
            return Err(driver::backend(reason));
        }

        // Retains the device's primary context and makes it current on this thread.
        let context = Context::new(device).map_err(|e| match e {
            CudaError::OutOfMemory => driver::error(e, what("creating its context")),
            _ => driver::no_device(e, what("creating its context")),
        })?;
        // A blocking stream: ordered with the synchronous copies and memsets, which run on the
        // legacy default stream.
        let stream =
            Stream::new(StreamFlags::DEFAULT, None).or_cuda(|| what("creating a stream"))?;
        Ok(Cuda {
            staging: matmul::Staging::default(),
            transfers: staging::Transfers::default(),
            nccl: Default::default(),
            shared: Arc::new(Shared {
                ordinal,
                kernel_dir: options.kernel_dir.clone(),
                kernel_log: options.kernel_log.clone().map(|p| (p, Default::default())),
                cc: compute_capability,
                modules: Module::ALL.iter().map(|_| Cached::new()).collect(),
                stream,
                context,
            }),
            name,
            compute_capability,
            total_memory,
            l2_bytes,
            compute_units,
        })
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.shared.ordinal
    }

    /// The device's name, e.g. `"NVIDIA H100 80GB HBM3"`.
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// `(major, minor)` compute capability, e.g. `(9, 0)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// Device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.total_memory
    }

    /// L2 cache size in bytes (4 MiB if the driver does not report it).
    pub fn l2_cache_size(&self) -> usize {
        self.l2_bytes
    }

    fn description(&self) -> String {
        format!(
            "{} (sm_{}{}, {} GiB)",
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.total_memory >> 30
        )
    }

    /// The kernel `root` in precision `p` (`<root>_f32` or `<root>_f64`) of module `m`; the
    /// module is loaded on first use. Fails if the table entry of `m` does not list `root`,
    /// or the module does not load.
    pub(crate) fn kernel_in(&self, m: Module, p: Precision, root: &str) -> Result<Kernel<'_>> {
        let slot = m.info().kernels.typed_slot(root, p);
        self.shared.kernel(m, slot, || p.kernel_name(root))
    }

    /// The kernel called `name` (listed as plain, without a precision suffix) of module `m`;
    /// see [`Cuda::kernel_in`].
    pub(crate) fn kernel_plain(&self, m: Module, name: &str) -> Result<Kernel<'_>> {
        self.shared
            .kernel(m, m.info().kernels.plain_slot(name), || name.to_string())
    }

    /// Loads every module of the kernel table and resolves every kernel it lists: checks the
    /// table against the PTX on this device (tests; normal use loads modules lazily).
    pub fn load_all_kernels(&self) -> Result<()> {
        for &m in Module::ALL {
            self.shared.make_current()?;
            self.shared.module(m)?;
        }
        Ok(())
    }

    /// Fails unless `other` belongs to this backend's device.
    pub(crate) fn check_same_device(&self, other: &Arc<Shared>) -> Result<()> {
        if Arc::ptr_eq(&self.shared, other) || other.ordinal == self.shared.ordinal {
            Ok(())
        } else {
            Err(driver::backend(format!(
                "data on CUDA device {} used with the backend of device {}",
                other.ordinal, self.shared.ordinal
            )))
        }
    }
}

impl Backend for Cuda {
    fn name(&self) -> &'static str {
        driver::BACKEND
    }

    fn device(&self) -> String {
        self.description()
    }

    fn synchronize(&self) -> Result<()> {
        self.shared.make_current()?;
        self.shared.synchronize()
    }

    fn connect(&self, c: &dyn trident_core::dist::Comm) -> Result<bool> {
        self.nccl_connect(c)
    }
}

/// The device ordinal that `value` (of [`DEVICE_ENV`], as the CLI reads it) names: `None`
/// or blank is 0; anything but a number is [`Error::Backend`].
pub fn parse_ordinal(value: Option<&str>) -> Result<usize> {
    match value.map(str::trim) {
        Some(v) if !v.is_empty() => v
            .parse::<usize>()
            .map_err(|_| driver::backend(format!("{DEVICE_ENV}={v:?} is not a device ordinal"))),
        _ => Ok(0),
    }
}

/// Initialises the driver and counts the devices; none is [`Error::NoDevice`].
fn device_count() -> Result<usize> {
    driver::init()?;
    let count = Device::num_devices().or_no_device(|| "counting CUDA devices")?;
    if count == 0 {
        return Err(Error::no_device(
            driver::BACKEND,
            "the CUDA driver reports no devices",
        ));
    }
    Ok(count as usize)
}

/// The names of the CUDA devices, in ordinal order; [`Error::NoDevice`] if there are none.
pub fn device_names() -> Result<Vec<String>> {
    let count = device_count()?;
    (0..count)
        .map(|i| {
            Device::get_device(i as u32)
                .and_then(|d| d.name())
                .or_no_device(|| format!("CUDA device {i}"))
        })
        .collect()
}

// The backend and its data may be shared between threads.
trident_core::assert_send_sync!(Cuda, CudaVector<f32>, CudaEllpack<f64>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_parse() {
        assert_eq!(parse_ordinal(None).unwrap(), 0);
        assert_eq!(parse_ordinal(Some(" ")).unwrap(), 0);
        assert_eq!(parse_ordinal(Some(" 3 ")).unwrap(), 3);
        let e = parse_ordinal(Some("gpu1")).unwrap_err().to_string();
        assert!(e.contains("TRIDENT_CUDA_DEVICE=\"gpu1\""), "{e}");
    }

    #[test]
    fn errors_are_described_without_panicking() {
        // Works with the real driver and without one (the lazily loaded libcuda is absent).
        for code in [0, 1, 2, 100, 222, 700, 12345] {
            assert!(DriverError::new(code)
                .to_string()
                .contains(&code.to_string()));
        }
        let e = driver::error_from_code(2, "x");
        assert!(e.to_string().contains("out of device memory"), "{e}");
        let source = std::error::Error::source(&e).expect("the driver code is the source");
        let driver = source.downcast_ref::<DriverError>().expect("a DriverError");
        assert_eq!(driver.code, 2);
        assert!(driver::error_from_code(100, "x").is_no_device());
    }
}

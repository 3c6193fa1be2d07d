//! Run-time backend selection: `auto` = CUDA, then an OpenCL GPU, then the CPU.

use std::fmt;

use trident_core::{Backend, Error, Result};
use trident_cpu::Cpu;
#[cfg(feature = "cuda")]
use trident_cuda::Cuda;
#[cfg(feature = "opencl")]
use trident_opencl::OpenCl;

/// The `--backend` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// CUDA if a device answers, else an OpenCL GPU, else the CPU.
    Auto,
    /// The CPU (rayon).
    Cpu,
    /// CUDA (device from TRIDENT_CUDA_DEVICE, default 0).
    Cuda,
    /// OpenCL (platform and device from TRIDENT_OPENCL_PLATFORM / TRIDENT_OPENCL_DEVICE).
    Opencl,
}

/// One of the three backends, chosen at run time.
// One per process: the size of the GPU variants (their loaded kernels) does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyBackend {
    /// CPU.
    Cpu(Cpu),
    /// CUDA.
    #[cfg(feature = "cuda")]
    Cuda(Cuda),
    /// OpenCL.
    #[cfg(feature = "opencl")]
    OpenCl(OpenCl),
}

impl fmt::Display for AnyBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, device) = match self {
            AnyBackend::Cpu(b) => (b.name(), b.device()),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => (b.name(), b.device()),
            #[cfg(feature = "opencl")]
            AnyBackend::OpenCl(b) => (b.name(), b.device()),
        };
        write!(f, "{name} [{device}]")
    }
}

/// Runs `$body` with `$b` bound to the concrete backend inside an [`AnyBackend`].
#[macro_export]
macro_rules! with_backend {
    ($any:expr, $b:ident => $body:expr) => {
        match $any {
            $crate::select::AnyBackend::Cpu($b) => $body,
            #[cfg(feature = "cuda")]
            $crate::select::AnyBackend::Cuda($b) => $body,
            #[cfg(feature = "opencl")]
            $crate::select::AnyBackend::OpenCl($b) => $body,
        }
    };
}

/// Opens the chosen backend. `auto` never fails: it falls back to the CPU, saying why on stderr.
pub fn open(choice: BackendChoice) -> Result<AnyBackend> {
    let (b, notes) = open_quiet(choice);
    for n in notes {
        crate::errln!("{n}");
    }
    b
}

/// [`open`], with `auto`'s remarks (why it fell back) returned instead of printed, for a
/// caller that opens the backend while it reads its inputs and prints them after.
pub fn open_quiet(choice: BackendChoice) -> (Result<AnyBackend>, Vec<String>) {
    match choice {
        BackendChoice::Cpu => (Ok(AnyBackend::Cpu(Cpu::new())), Vec::new()),
        BackendChoice::Cuda => (open_cuda(), Vec::new()),
        BackendChoice::Opencl => (open_opencl(), Vec::new()),
        BackendChoice::Auto => {
            let mut notes = Vec::new();
            match open_cuda() {
                Ok(b) => return (Ok(b), notes),
                Err(e) => notes.push(format!("auto: CUDA unavailable ({e})")),
            }
            match open_opencl() {
                Ok(b) if is_gpu(&b) => return (Ok(b), notes),
                Ok(b) => notes.push(format!("auto: OpenCL device {b} is not a GPU")),
                Err(e) => notes.push(format!("auto: OpenCL unavailable ({e})")),
            }
            (Ok(AnyBackend::Cpu(Cpu::new())), notes)
        }
    }
}

fn is_gpu(b: &AnyBackend) -> bool {
    match b {
        #[cfg(feature = "opencl")]
        AnyBackend::OpenCl(b) => b.is_gpu(),
        _ => true,
    }
}

/// This process's rank on its host, in a job of several (see [`set_local_rank`]).
static LOCAL_RANK: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Sets this process's rank on its host: without `TRIDENT_CUDA_DEVICE`, CUDA then takes
/// device `local rank % devices`, and OpenCL the `local rank % n`-th of the `n` matching
/// GPUs, so that the ranks of a host share out its GPUs.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn set_local_rank(rank: usize) {
    let _ = LOCAL_RANK.set(rank);
}

/// The CUDA device of `TRIDENT_CUDA_DEVICE` (default 0, or the local rank's in a job):
/// where the CLI reads it.
#[cfg(feature = "cuda")]
pub fn cuda_options() -> Result<trident_cuda::CudaOptions> {
    let ordinal = std::env::var(trident_cuda::DEVICE_ENV).ok();
    if let (None, Some(&r)) = (
        ordinal.as_deref().filter(|v| !v.trim().is_empty()),
        LOCAL_RANK.get(),
    ) {
        let count = trident_cuda::device_names().map_or(1, |d| d.len().max(1));
        return Ok(trident_cuda::CudaOptions::new(r % count));
    }
    trident_cuda::parse_ordinal(ordinal.as_deref()).map(trident_cuda::CudaOptions::new)
}

/// The OpenCL platform and device filters of `TRIDENT_OPENCL_PLATFORM` /
/// `TRIDENT_OPENCL_DEVICE`: where the CLI reads them. In a job, the ranks of a host take
/// turns among the matching GPUs (`Selector::nth` = the local rank).
#[cfg(feature = "opencl")]
pub fn opencl_selector() -> trident_opencl::Selector {
    let var = |name| std::env::var(name).ok();
    trident_opencl::Selector {
        nth: LOCAL_RANK.get().copied().unwrap_or(0),
        ..trident_opencl::Selector::from_filters(
            var(trident_opencl::ENV_PLATFORM).as_deref(),
            var(trident_opencl::ENV_DEVICE).as_deref(),
        )
    }
}

/// Opens CUDA, or explains that this build has no CUDA backend.
pub fn open_cuda() -> Result<AnyBackend> {
    #[cfg(feature = "cuda")]
    return cuda_options()
        .and_then(|o| Cuda::with_options(&o))
        .map(AnyBackend::Cuda);
    #[cfg(not(feature = "cuda"))]
    Err(Error::Unsupported(
        "this trident was built without the `cuda` feature".into(),
    ))
}

/// Opens OpenCL, or explains that this build has no OpenCL backend.
pub fn open_opencl() -> Result<AnyBackend> {
    #[cfg(feature = "opencl")]
    return OpenCl::select(&opencl_selector()).map(AnyBackend::OpenCl);
    #[cfg(not(feature = "opencl"))]
    Err(Error::Unsupported(
        "this trident was built without the `opencl` feature".into(),
    ))
}

/// A one-line description of whether a backend opens, for `trident info`.
pub fn describe(made: Result<AnyBackend>) -> String {
    match made {
        Ok(b) => format!("available: {b}"),
        Err(Error::NoDevice { message, .. }) => format!("no device ({message})"),
        Err(e) => format!("error: {e}"),
    }
}

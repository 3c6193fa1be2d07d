//! Run-time backend selection: `auto` = CUDA, then an OpenCL GPU, then the CPU.

use std::fmt;

use trident_core::{Backend, Error, Result};
use trident_cpu::Cpu;
use trident_cuda::Cuda;
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
pub enum AnyBackend {
    /// CPU.
    Cpu(Cpu),
    /// CUDA.
    Cuda(Cuda),
    /// OpenCL.
    OpenCl(OpenCl),
}

impl fmt::Display for AnyBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, device) = match self {
            AnyBackend::Cpu(b) => (b.name(), b.device()),
            AnyBackend::Cuda(b) => (b.name(), b.device()),
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
            $crate::select::AnyBackend::Cuda($b) => $body,
            $crate::select::AnyBackend::OpenCl($b) => $body,
        }
    };
}

/// Opens the chosen backend. `auto` never fails: it falls back to the CPU, saying why on stderr.
pub fn open(choice: BackendChoice) -> Result<AnyBackend> {
    match choice {
        BackendChoice::Cpu => Ok(AnyBackend::Cpu(Cpu::new())),
        BackendChoice::Cuda => Cuda::new().map(AnyBackend::Cuda),
        BackendChoice::Opencl => OpenCl::new().map(AnyBackend::OpenCl),
        BackendChoice::Auto => {
            match Cuda::new() {
                Ok(b) => return Ok(AnyBackend::Cuda(b)),
                Err(e) => eprintln!("auto: CUDA unavailable ({e})"),
            }
            match OpenCl::new() {
                Ok(b) if b.is_gpu() => return Ok(AnyBackend::OpenCl(b)),
                Ok(b) => eprintln!("auto: OpenCL device {} is not a GPU", b.device()),
                Err(e) => eprintln!("auto: OpenCL unavailable ({e})"),
            }
            Ok(AnyBackend::Cpu(Cpu::new()))
        }
    }
}

/// A one-line description of whether a backend opens, for `trident info`.
pub fn describe<B: Backend>(made: Result<B>) -> String {
    match made {
        Ok(b) => format!("available: {}", b.device()),
        Err(Error::NoDevice { message, .. }) => format!("no device ({message})"),
        Err(e) => format!("error: {e}"),
    }
}

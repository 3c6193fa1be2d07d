//! Every environment variable the `trident` command reads, in one place. The library reads
//! none: what they set reaches it as options ([`read_options`] for the readers,
//! [`svd_trace`] for [`trident_core::SvdOptions::trace`]). The README lists them.
//!
//! The GPU runtimes to load, `TRIDENT_CUDA_LIBRARY` and `TRIDENT_OPENCL_LIBRARY`, reach the
//! backends through [`gpu_libraries`], before any GPU call. (The backends' device choice,
//! `TRIDENT_CUDA_DEVICE`, `TRIDENT_OPENCL_PLATFORM` and `TRIDENT_OPENCL_DEVICE`, is read by
//! `select.rs`; `RAYON_NUM_THREADS` by rayon itself.)

use trident_core::io::ReadOptions;
use trident_core::Error;

/// Bytes an input may hold in memory after decompression (default: half the machine's
/// memory; for small machines and tests).
pub const MAX_INPUT_BYTES: &str = "TRIDENT_MAX_INPUT_BYTES";

/// Set (non-empty, not `0`): `trident svd` times every phase of the SVD and prints the
/// phases on stderr, as `--trace` does.
pub const SVD_TRACE: &str = "TRIDENT_SVD_TRACE";

/// The readers' options: the input limit of [`MAX_INPUT_BYTES`] when it holds a number
/// (anything else leaves the default).
pub fn read_options() -> ReadOptions {
    ReadOptions {
        max_input_bytes: std::env::var(MAX_INPUT_BYTES)
            .ok()
            .and_then(|v| v.trim().parse().ok()),
    }
}

/// Whether [`SVD_TRACE`] asks for the SVD's phase times.
pub fn svd_trace() -> bool {
    std::env::var(SVD_TRACE).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Hands the GPU runtime libraries named by `TRIDENT_CUDA_LIBRARY`
/// ([`trident_cuda::LIBRARY_ENV`]), `TRIDENT_NCCL_LIBRARY` ([`trident_cuda::nccl::ENV_LIBRARY`])
/// and `TRIDENT_OPENCL_LIBRARY`
/// ([`trident_opencl::ENV_LIBRARY`]), when set and not empty, to the backends' loaders
/// (a missing file stands for a machine without the runtime). Called before any GPU call.
pub fn gpu_libraries() -> Result<(), Error> {
    let named = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    #[cfg(feature = "cuda")]
    if let Some(path) = named(trident_cuda::LIBRARY_ENV) {
        trident_cuda::set_driver_library(std::path::Path::new(&path))?;
    }
    #[cfg(feature = "cuda")]
    if let Some(path) = named(trident_cuda::nccl::ENV_LIBRARY) {
        trident_cuda::nccl::set_library(std::path::Path::new(&path));
    }
    #[cfg(feature = "opencl")]
    if let Some(path) = named(trident_opencl::ENV_LIBRARY) {
        trident_opencl::set_icd_library(std::path::Path::new(&path))?;
    }
    let _ = named;
    Ok(())
}

/// NCCL's switch between its two ways of sharing GPU memory between processes (its own
/// environment variable): the CLI sets it to `0` (CUDA IPC) unless the environment sets it.
pub const NCCL_CUMEM: &str = "NCCL_CUMEM_ENABLE";

/// Starts NCCL, where a job uses it, with CUDA IPC for its connections between GPUs instead of
/// its default cuMem handles ([`NCCL_CUMEM`] = `0`), unless the environment chooses. On the
/// 4-GPU hosts NCCL's first transfers between every pair of ranks (its connections) took
/// about 1.1 s with cuMem and 0.1 s with CUDA IPC, and the transfers themselves ran as fast
/// (`benches/results/distributed.md`). Called at the start of `main`, before any other
/// thread: the environment is changed while no thread can read it.
pub fn nccl_defaults() {
    #[cfg(feature = "cuda")]
    if std::env::var_os(NCCL_CUMEM).is_none() {
        std::env::set_var(NCCL_CUMEM, "0");
    }
}

/// What to tell the user after error `e`, when the environment changes its outcome: how to
/// raise the input limit after an input over it.
pub fn hint(e: &Error) -> Option<String> {
    trident_core::io::is_input_limit(e)
        .then(|| format!("set {MAX_INPUT_BYTES} (bytes) to change the input limit"))
}

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

#![warn(missing_docs)]

mod driver;
pub mod kernels;
mod memory;
mod spmv;

use std::sync::Arc;

use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::stream::{Stream, StreamFlags};
use trident_core::{Backend, Error, Result};

pub use memory::{CudaScalar, CudaVector};
pub use spmv::{CudaEllpack, PASSES_ENV};

/// Environment variable that picks the device ordinal for [`Cuda::new`].
pub const DEVICE_ENV: &str = "TRIDENT_CUDA_DEVICE";

/// The state shared by a backend and everything it allocated: the context (kept alive as
/// long as any buffer is), the stream and the loaded kernels.
pub(crate) struct Shared {
    ordinal: usize,
    // Field order is drop order: the kernels and the stream go before the context.
    functions: Vec<(&'static str, driver::Function)>,
    // Only held: keeps the `functions` valid until it is unloaded on drop.
    #[allow(dead_code)]
    module: driver::Module,
    stream: Stream,
    context: Context,
}

impl Shared {
    /// Makes the context current on the calling thread.
    pub(crate) fn make_current(&self) -> Result<()> {
        CurrentContext::set_current(&self.context)
            .map_err(|e| driver::error(e, "making the CUDA context current"))
    }

    /// Waits for the work queued on the stream (the context must be current).
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver::error(e, "waiting for the CUDA stream (a kernel failed?)"))
    }

    /// The raw stream handle, for launches.
    pub(crate) fn stream_handle(&self) -> cust::sys::CUstream {
        self.stream.as_inner()
    }

    /// The loaded kernel called `name`.
    pub(crate) fn function(&self, name: &str) -> Result<driver::Function> {
        self.functions
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| driver::backend(format!("kernel {name} is not loaded")))
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The module unload and stream destruction that follow need the context current.
        let _ = CurrentContext::set_current(&self.context);
    }
}

/// Kernels looked up when the backend starts.
const KERNELS: &[&str] = &[
    <f32 as CudaScalar>::SPMV_KERNEL,
    <f64 as CudaScalar>::SPMV_KERNEL,
];

/// The CUDA backend: one device, its primary context, one stream and the loaded kernels.
///
/// `Send + Sync`; cheap operations (`device`, `name`) do not touch the driver.
pub struct Cuda {
    shared: Arc<Shared>,
    name: String,
    compute_capability: (u32, u32),
    total_memory: usize,
    l2_bytes: usize,
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
    /// The backend on device 0, or on the device whose ordinal is in `TRIDENT_CUDA_DEVICE`.
    ///
    /// Fails with [`Error::NoDevice`] when there is no CUDA driver or device (the caller may
    /// skip or fall back), [`Error::Backend`] when `TRIDENT_CUDA_DEVICE` is not a number or
    /// the kernels cannot be loaded.
    pub fn new() -> Result<Cuda> {
        let ordinal = match std::env::var(DEVICE_ENV) {
            Ok(v) if !v.trim().is_empty() => v.trim().parse::<usize>().map_err(|_| {
                driver::backend(format!("{DEVICE_ENV}={v:?} is not a device ordinal"))
            })?,
            _ => 0,
        };
        Cuda::with_device(ordinal)
    }

    /// The backend on the device with this ordinal (0-based, as `nvidia-smi` numbers them
    /// unless `CUDA_VISIBLE_DEVICES` says otherwise).
    pub fn with_device(ordinal: usize) -> Result<Cuda> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice {
                backend: driver::BACKEND,
                message: format!("device {ordinal} requested, but there are {count}"),
                source: None,
            });
        }
        let what = |s: &str| format!("CUDA device {ordinal}: {s}");
        // `ordinal < count <= i32::MAX`, so this conversion is exact.
        let device = Device::get_device(ordinal as u32)
            .map_err(|e| driver::no_device(e, &what("cuDeviceGet")))?;
        let name = device
            .name()
            .map_err(|e| driver::no_device(e, &what("reading its name")))?;
        let attr = |a: DeviceAttribute, s: &str| -> Result<u32> {
            let v = device
                .get_attribute(a)
                .map_err(|e| driver::no_device(e, &what(s)))?;
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
        let total_memory = device
            .total_memory()
            .map_err(|e| driver::no_device(e, &what("reading its memory size")))?;

        if let Some(reason) = kernels::MISSING_REASON {
            return Err(driver::backend(reason));
        }
        let ptx = if compute_capability.0 >= 9 {
            kernels::spmv::PTX_SM90
        } else {
            kernels::spmv::PTX_PORTABLE
        };

        // Retains the device's primary context and makes it current on this thread.
        let context = Context::new(device).map_err(|e| match e {
            CudaError::OutOfMemory => driver::error(e, &what("creating its context")),
            _ => driver::no_device(e, &what("creating its context")),
        })?;
        // A blocking stream: ordered with the synchronous copies and memsets, which run on the
        // legacy default stream.
        let stream = Stream::new(StreamFlags::DEFAULT, None)
            .map_err(|e| driver::error(e, &what("creating a stream")))?;
        let module = driver::Module::from_ptx(ptx)?;
        let mut functions = Vec::with_capacity(KERNELS.len());
        for &k in KERNELS {
            functions.push((k, module.function(k)?));
        }
        Ok(Cuda {
            shared: Arc::new(Shared {
                ordinal,
                functions,
                module,
                stream,
                context,
            }),
            name,
            compute_capability,
            total_memory,
            l2_bytes,
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
}

/// Initialises the driver and counts the devices; none is [`Error::NoDevice`].
fn device_count() -> Result<usize> {
    driver::init()?;
    let count = Device::num_devices().map_err(|e| driver::no_device(e, "counting CUDA devices"))?;
    if count == 0 {
        return Err(Error::NoDevice {
            backend: driver::BACKEND,
            message: "the CUDA driver reports no devices".into(),
            source: None,
        });
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
                .map_err(|e| driver::no_device(e, &format!("CUDA device {i}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn backend_and_data_are_send_and_sync() {
        assert_send_sync::<Cuda>();
        assert_send_sync::<CudaVector<f32>>();
        assert_send_sync::<CudaEllpack<f64>>();
    }

    #[test]
    fn errors_are_described_without_panicking() {
        // Works with the real driver and with the stub libcuda alike.
        for code in [0, 1, 2, 100, 222, 700, 12345] {
            assert!(!driver::describe_code(code).is_empty());
        }
        assert!(driver::error_from_code(2, "x")
            .to_string()
            .contains("out of device memory"));
        assert!(driver::error_from_code(100, "x").is_no_device());
    }
}

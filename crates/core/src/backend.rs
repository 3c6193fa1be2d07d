//! The backend trait family's root: [`Backend`] (a named device) and [`DeviceVectors`]
//! (device-resident vectors). Each algorithm's trait, options, host reference and tolerance
//! live in its own module: [`crate::spmv`], [`crate::matmul`], [`crate::svd`] (with QR),
//! [`crate::triangles`], [`crate::mcl`].
//!
//! Device-resident data lives in the backend's associated types, so an algorithm can chain
//! kernels (e.g. the SpMV, inflate and prune steps of R-MCL) without copying through the
//! host; the `*_host` conveniences do one upload and one download.
//!
//! Every trait is exercised by the conformance suite (module `conformance`, feature
//! `conformance`), which each backend crate instantiates in its tests.

use crate::error::Result;
use crate::scalar::Scalar;

/// A compute backend: a named device that runs Trident's kernels.
pub trait Backend: Send + Sync {
    /// Short name: `"cpu"`, `"cuda"` or `"opencl"`.
    fn name(&self) -> &'static str;
    /// The device in words, e.g. `"NVIDIA H100 80GB HBM3 (sm_90, 79 GiB)"`.
    fn device(&self) -> String;
    /// Waits until all work queued on the device has finished (benchmarks time with this).
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    /// Starts setting up the device-to-device engine for the ranks of `c` (NCCL's
    /// communicator and connections, for CUDA ranks on distinct GPUs) so that the job's
    /// work before its first exchange (reading, preparing, uploading) overlaps it: the ranks
    /// agree here, the rest runs in the background and the first exchange waits for it.
    /// `true` where the engine serves these ranks. Every rank must call it at the same point.
    /// The default has no engine.
    fn connect(&self, c: &dyn crate::comm::Comm) -> Result<bool> {
        let _ = c;
        Ok(false)
    }
}

/// Device-resident vectors of `T`.
pub trait DeviceVectors<T: Scalar>: Backend {
    /// A vector in device memory.
    type Vector: Send;
    /// Copies `host` to a new device vector.
    fn upload(&self, host: &[T]) -> Result<Self::Vector>;
    /// A new device vector of `len` zeros.
    fn zeros(&self, len: usize) -> Result<Self::Vector>;
    /// Length of a device vector.
    fn len(&self, v: &Self::Vector) -> usize;
    /// Copies a device vector into `host` (lengths must agree); waits for pending work.
    fn download_into(&self, v: &Self::Vector, host: &mut [T]) -> Result<()>;
    /// Copies a device vector to a new host vector.
    fn download(&self, v: &Self::Vector) -> Result<Vec<T>> {
        let mut host = vec![T::zero(); self.len(v)];
        self.download_into(v, &mut host)?;
        Ok(host)
    }
}

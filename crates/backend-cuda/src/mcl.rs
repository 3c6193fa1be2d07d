//! R-MCL on CUDA: not implemented yet. `kernels/opencl/mcl.cl` (with its OpenCL host code in
//! `trident-opencl`) is the algorithm a `kernels/cuda/mcl.cu` must mirror, argument for
//! argument; until then every call is [`Error::Unsupported`].

use trident_core::mcl::{Clustering, MarkovCluster, MclOptions, MclProgress};
use trident_core::{Error, Graph, Result, Scalar};

use crate::Cuda;

impl<T: Scalar> MarkovCluster<T> for Cuda {
    fn cluster_with_progress(
        &self,
        _g: &Graph,
        _opts: &MclOptions,
        _progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering> {
        Err(Error::Unsupported(
            "R-MCL on CUDA is not implemented yet (use --backend opencl or cpu)".into(),
        ))
    }
}

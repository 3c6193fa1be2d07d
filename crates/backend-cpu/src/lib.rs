//! Trident's CPU backend: multi-threaded (rayon) implementations of the algorithm traits.
//!
//! "Device" memory is host memory here, so device vectors are plain `Vec`s and uploads are
//! copies. Depending on this crate and `trident-core` pulls in no GPU code.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod gemm;
mod givens;
mod householder;
mod matmul;
mod mcl;
mod memory;
mod spmv;
pub mod svd;
mod triangles;

pub use matmul::{CPU_CUTOFF, PARALLEL_FLOPS};
use trident_core::Backend;

/// The CPU backend; runs on rayon's global thread pool.
///
/// Clones share one set of kept workspaces (see [`Cpu::free_workspaces`]).
#[derive(Debug, Clone, Default)]
pub struct Cpu {
    workspaces: std::sync::Arc<matmul::Workspaces>,
}

impl Cpu {
    /// A CPU backend on rayon's global pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Frees the Strassen workspaces kept for the next product (the largest one used so far
    /// for each element type: up to a third of the sizes of `A`, `B` and `C`).
    pub fn free_workspaces(&self) {
        self.workspaces.clear();
    }
}

impl Backend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> String {
        format!("{} threads (rayon)", rayon::current_num_threads())
    }
}

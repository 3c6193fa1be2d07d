//! Trident core: the data formats, their readers and writers, and the backend and algorithm
//! traits that the CPU, CUDA and OpenCL backend crates implement.
//!
//! Data flows one way: **read** ([`io`]) → **format** ([`Coo`], [`Csr`], [`EllpackR`],
//! [`Dense`], [`Graph`]) → **backend** ([`Backend`] and the algorithm traits) → **result**.
//!
//! One module per algorithm holds its trait, options, plan, GPU driver (written once over the
//! [`device`] layer), host reference and tolerance: [`spmv`], [`matmul`], [`svd`] (with QR),
//! [`triangles`], [`mcl`]. What the GPU backends share about kernels (naming, the kernel
//! lists, the kernel table) is in [`gpu`]; what tests share about skipping is in
//! [`testing`]. The README's "Architecture" section maps the workspace.
//!
//! This crate has no GPU code, no system-library dependency and no `unsafe` operation: the
//! [`device`] layer declares the kernel-launch contract as `unsafe`, and the GPU drivers'
//! launches say why they meet it.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod alloc;
pub mod backend;
pub mod comm;
pub mod coo;
pub mod csr;
pub mod dense;
pub mod device;
pub mod dist;
pub mod ellpack;
pub mod error;
pub mod generate;
pub mod gpu;
pub mod graph;
pub mod io;
pub mod matmul;
pub mod mcl;
pub mod reduce;
pub mod scalar;
pub mod spmv;
pub mod svd;
pub mod testing;
pub mod tolerance;
pub mod triangles;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use backend::{Backend, DeviceVectors};
pub use coo::Coo;
pub use csr::Csr;
pub use dense::{Dense, DenseView};
pub use ellpack::EllpackR;
pub use error::{BoxError, Error, ParseError, ParseErrorKind, Result, ResultExt};
pub use graph::{BuildStats, Graph};
pub use matmul::{Algorithm, BaseKernel, HostMemory, MatMul, MatMulOptions};
pub use mcl::{Clustering, Expansion, MarkovCluster, MclOptions, MclProgress, StopReason};
pub use scalar::{Index, Scalar};
pub use spmv::{Spmv, SpmvOptions};
pub use svd::Vectors as SvdVectors;
pub use svd::{Qr, QrFactors, QrOptions, Svd, SvdOptions, SvdPrecondition, SvdResult};
pub use tolerance::Tolerance;
pub use triangles::{
    OrientedGraph, TriangleAlgorithm, TriangleCount, TriangleCounts, TriangleOptions,
};

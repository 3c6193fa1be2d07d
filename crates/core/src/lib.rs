//! Trident core: the data formats, their readers and writers, and the backend and algorithm
//! traits that the CPU, CUDA and OpenCL backend crates implement.
//!
//! Data flows one way: **read** ([`io`]) → **format** ([`Coo`], [`Csr`], [`EllpackR`],
//! [`Dense`], [`Graph`]) → **backend** ([`Backend`] and the algorithm traits) → **result**.
//!
//! This crate has no GPU code and no system-library dependency.

#![warn(missing_docs)]

pub mod backend;
pub mod coo;
pub mod csr;
pub mod dense;
pub mod ellpack;
pub mod error;
pub mod graph;
pub mod io;
pub mod reference;
pub mod scalar;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use backend::{
    Backend, Clustering, DeviceVectors, MarkovCluster, MatMul, MatMulOptions, MclOptions, Qr,
    QrFactors, QrOptions, Spmv, Svd, SvdOptions, SvdPrecondition, SvdResult, TriangleCount,
    TriangleCounts, TriangleOptions,
};
pub use coo::Coo;
pub use csr::Csr;
pub use dense::{Dense, DenseView};
pub use ellpack::EllpackR;
pub use error::{Error, ParseError, ParseErrorKind, Result};
pub use graph::Graph;
pub use scalar::{Index, Scalar};

//! The backend trait family.
//!
//! A backend (CPU, CUDA, OpenCL) implements [`Backend`] and, per algorithm and scalar type, the
//! algorithm traits below. Device-resident data lives in the backend's associated types, so
//! an algorithm can chain kernels (e.g. the SpMV, inflate and prune steps of R-MCL) without
//! copying through the host; the `*_host` conveniences do one upload and one download.
//!
//! Every trait is exercised by the conformance suite (module `conformance`, feature
//! `conformance`), which each backend crate instantiates in its tests.

use crate::dense::{Dense, DenseView};
use crate::ellpack::EllpackR;
use crate::error::Result;
use crate::graph::Graph;
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

/// Sparse matrix–vector product on ELLPACK-R matrices: `y = A x`.
///
/// Accuracy contract (checked by the conformance suite): each `y[i]` is within
/// `(rl[i] + 3) * 4 * eps * sum_k |a_ik x_k|`, plus the smallest normal number, of the exact
/// result: any summation order is allowed, but no precision may be lost beyond that of `T`.
pub trait Spmv<T: Scalar>: DeviceVectors<T> {
    /// An ELLPACK-R matrix in device memory.
    type Ellpack: Send;
    /// Copies a matrix to the device.
    fn upload_ellpack(&self, a: &EllpackR<T>) -> Result<Self::Ellpack>;
    /// `(rows, cols)` of a device matrix.
    fn ellpack_shape(&self, a: &Self::Ellpack) -> (usize, usize);
    /// `y = A x` on the device. Fails with [`crate::Error::Shape`] unless
    /// `len(x) == cols` and `len(y) == rows`. May return before the kernel finishes;
    /// a download waits for it.
    fn spmv(&self, a: &Self::Ellpack, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;

    /// `A x` for host data: one upload of `A` and `x`, one download of `y`.
    fn spmv_host(&self, a: &EllpackR<T>, x: &[T]) -> Result<Vec<T>> {
        let da = self.upload_ellpack(a)?;
        let dx = self.upload(x)?;
        let mut dy = self.zeros(a.rows())?;
        self.spmv(&da, &dx, &mut dy)?;
        self.download(&dy)
    }
}

/// Checks the operand shapes of `y = A x`; backends call this before launching.
pub fn check_spmv_shapes(a: (usize, usize), x_len: usize, y_len: usize) -> Result<()> {
    if x_len != a.1 || y_len != a.0 {
        return Err(crate::Error::shape(format!(
            "spmv: A is {} x {}, x has {x_len} entries, y has {y_len}",
            a.0, a.1
        )));
    }
    Ok(())
}

/// Options for [`MatMul`].
#[derive(Debug, Clone, PartialEq)]
pub struct MatMulOptions {
    /// Use Strassen's recursion above this order; below it, the tiled base kernel.
    /// Default 1024: below that, the 7/8 saving is eaten by the extra additions.
    pub strassen_cutoff: usize,
    /// Never recurse deeper than this (bounds the extra memory). Default 4.
    pub max_depth: usize,
}

impl Default for MatMulOptions {
    fn default() -> Self {
        Self {
            strassen_cutoff: 1024,
            max_depth: 4,
        }
    }
}

/// Dense matrix multiplication `C = A B` (Strassen over a tiled base kernel).
pub trait MatMul<T: Scalar>: Backend {
    /// `A B`; fails with [`crate::Error::Shape`] unless `A.cols == B.rows`.
    fn matmul(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Dense<T>>;
}

/// Options for [`Qr`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QrOptions {
    /// Also form the orthogonal factor Q explicitly (default false: R only).
    pub compute_q: bool,
}

/// A QR factorization: `A = Q R`, `R` upper triangular (`min(m, n) x n`).
#[derive(Debug, Clone, PartialEq)]
pub struct QrFactors<T> {
    /// The thin orthogonal factor (`m x min(m, n)`), if requested.
    pub q: Option<Dense<T>>,
    /// The upper-triangular factor.
    pub r: Dense<T>,
}

/// QR factorization by Givens rotations.
pub trait Qr<T: Scalar>: Backend {
    /// Factors `A`.
    fn qr(&self, a: DenseView<'_, T>, opts: &QrOptions) -> Result<QrFactors<T>>;
}

/// How to precondition one-sided Jacobi SVD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SvdPrecondition {
    /// Jacobi on `A` itself.
    None,
    /// `A = Q R`, then Jacobi on `R` (default: fewer sweeps on tall matrices).
    #[default]
    Qr,
    /// `A = Q R`, `R = L P`, Jacobi on `L` (fewest sweeps; graded matrices).
    QrLq,
}

/// Options for [`Svd`].
#[derive(Debug, Clone, PartialEq)]
pub struct SvdOptions {
    /// Preconditioning (default [`SvdPrecondition::Qr`]).
    pub precondition: SvdPrecondition,
    /// Convergence: stop when every pair has `|a_i·a_j| <= tol ||a_i|| ||a_j||`.
    /// Default `None` = `m * eps` of the scalar type.
    pub tol: Option<f64>,
    /// Give up after this many sweeps (default 40).
    pub max_sweeps: usize,
    /// Columns per block in block Jacobi (default 32).
    pub block_size: usize,
    /// Compute the left singular vectors (default false).
    pub compute_u: bool,
    /// Compute the right singular vectors (default false).
    pub compute_v: bool,
}

impl Default for SvdOptions {
    fn default() -> Self {
        Self {
            precondition: SvdPrecondition::default(),
            tol: None,
            max_sweeps: 40,
            block_size: 32,
            compute_u: false,
            compute_v: false,
        }
    }
}

/// A singular value decomposition `A = U diag(s) Vᵀ`.
#[derive(Debug, Clone, PartialEq)]
pub struct SvdResult<T> {
    /// Singular values, descending.
    pub s: Vec<T>,
    /// Left singular vectors (`m x k`), if requested.
    pub u: Option<Dense<T>>,
    /// Right singular vectors (`n x k`), if requested.
    pub v: Option<Dense<T>>,
    /// Jacobi sweeps taken.
    pub sweeps: usize,
}

/// One-sided block Jacobi SVD with a parallel pair ordering.
pub trait Svd<T: Scalar>: Backend {
    /// Singular values (and vectors, as requested) of `A`.
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>>;
}

/// Options for [`TriangleCount`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriangleOptions {
    /// Also return the number of triangles through each node (default false).
    pub per_node: bool,
}

/// Triangle counts of an undirected graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriangleCounts {
    /// Number of triangles.
    pub total: u64,
    /// Triangles through each node, if requested.
    pub per_node: Option<Vec<u64>>,
}

/// Triangle counting by sorted-list intersection.
pub trait TriangleCount: Backend {
    /// Counts the triangles of `g`.
    fn count_triangles(&self, g: &Graph, opts: &TriangleOptions) -> Result<TriangleCounts>;
}

/// Options for [`MarkovCluster`] (R-MCL).
#[derive(Debug, Clone, PartialEq)]
pub struct MclOptions {
    /// Inflation exponent r (default 2.0); larger gives smaller clusters.
    pub inflation: f64,
    /// Add self-loops of this weight before normalising (default 1.0; 0 disables).
    pub self_loop_weight: f64,
    /// Drop entries below this value after inflation (default 1e-4).
    pub prune_threshold: f64,
    /// Keep at most this many entries per column after pruning (default 64); bounds the
    /// ELLPACK-R width.
    pub max_entries: usize,
    /// Stop when the global chaos falls below this (default 1e-3).
    pub chaos_tolerance: f64,
    /// Give up after this many iterations (default 100).
    pub max_iterations: usize,
}

impl Default for MclOptions {
    fn default() -> Self {
        Self {
            inflation: 2.0,
            self_loop_weight: 1.0,
            prune_threshold: 1e-4,
            max_entries: 64,
            chaos_tolerance: 1e-3,
            max_iterations: 100,
        }
    }
}

/// A clustering of the nodes of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    /// The clusters, each a sorted list of nodes; every node is in exactly one.
    pub clusters: Vec<Vec<usize>>,
    /// Iterations run.
    pub iterations: usize,
    /// Global chaos at the end.
    pub chaos: f64,
}

/// Regularized Markov clustering.
pub trait MarkovCluster<T: Scalar>: Backend {
    /// Clusters the nodes of `g`.
    fn cluster(&self, g: &Graph, opts: &MclOptions) -> Result<Clustering>;
}

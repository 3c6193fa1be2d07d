//! Singular value decomposition by one-sided block Jacobi, and the Givens QR that
//! preconditions it: the [`Qr`] and [`Svd`] traits and their options.

use crate::backend::Backend;
use crate::dense::{Dense, DenseView};
use crate::error::Result;
use crate::scalar::Scalar;

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

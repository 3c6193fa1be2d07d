//! Dense matrix multiplication `C = A B`: the [`MatMul`] trait and its options.

use crate::backend::Backend;
use crate::dense::{Dense, DenseView};
use crate::error::Result;
use crate::scalar::Scalar;

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

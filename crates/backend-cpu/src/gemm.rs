//! The column-major `gemm` of the SVD and of the Householder QR, shared by both (so that
//! neither module imports the other).

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, LinalgScalar, ShapeBuilder};
use trident_core::Scalar;

/// `c ← A B` for column-major `A` (`m × k`, leading dimension `lda`; `Aᵀ` when `ta`, then
/// `A` is stored `k × m`), `B` (`k × n`, `ldb`) and `c` (`m × n`, `ldc`), by `matrixmultiply`
/// on one thread.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_cm<T: Scalar + LinalgScalar>(
    (m, n, k): (usize, usize, usize),
    a: &[T],
    lda: usize,
    ta: bool,
    b: &[T],
    ldb: usize,
    c: &mut [T],
    ldc: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for j in 0..n {
            c[j * ldc..j * ldc + m].fill(T::zero());
        }
        return;
    }
    let av = if ta {
        ArrayView2::from_shape((m, k).strides((lda, 1)), a)
    } else {
        ArrayView2::from_shape((m, k).strides((1, lda)), a)
    }
    .expect("A within its slice");
    let bv = ArrayView2::from_shape((k, n).strides((1, ldb)), b).expect("B within its slice");
    let mut cv =
        ArrayViewMut2::from_shape((m, n).strides((1, ldc)), c).expect("C within its slice");
    general_mat_mul(T::one(), &av, &bv, T::zero(), &mut cv);
}

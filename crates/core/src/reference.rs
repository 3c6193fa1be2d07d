//! Plain sequential reference implementations: the yardstick every backend is checked against.
//!
//! They favour obvious correctness over speed; the accuracy-critical ones accumulate in f64.

use crate::ellpack::EllpackR;
use crate::scalar::{Index, Scalar};

/// `y = A x`, accumulating each row in f64 and rounding once.
pub fn spmv<T: Scalar, I: Index>(a: &EllpackR<T, I>, x: &[T]) -> Vec<T> {
    assert_eq!(x.len(), a.cols(), "x length");
    (0..a.rows())
        .map(|i| {
            let len = a.row_lengths()[i].to_usize();
            let mut acc = 0f64;
            for k in 0..len {
                let (c, v) = a.entry(i, k);
                acc += v.to_f64() * x[c].to_f64();
            }
            T::from_f64(acc)
        })
        .collect()
}

/// Per-row magnitude `sum_k |a_ik x_k|`, the scale of the SpMV rounding error.
pub fn spmv_abs<T: Scalar, I: Index>(a: &EllpackR<T, I>, x: &[T]) -> Vec<f64> {
    (0..a.rows())
        .map(|i| {
            let len = a.row_lengths()[i].to_usize();
            (0..len)
                .map(|k| {
                    let (c, v) = a.entry(i, k);
                    (v.to_f64() * x[c].to_f64()).abs()
                })
                .sum()
        })
        .collect()
}

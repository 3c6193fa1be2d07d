//! What a backend supplies to the SVD and QR drivers: the device steps of [`SvdKernels`]
//! (uploads, Givens QR, applying `Q`, a matrix product, the block Jacobi sweeps, column
//! norms, on column-major device matrices) and the shape checks their implementations share.

use crate::backend::Backend;
use crate::dense::DenseView;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

use super::host::{tiled, to_col_major};
use super::{JacobiParams, JacobiStats, QrOrder, Wide};

/// The device steps of the SVD and QR drivers. Matrices are column-major (column `j` holds
/// `rows` consecutive values), so that Jacobi's column operations and the Givens steps'
/// row-pair operations both read consecutive addresses.
pub trait SvdKernels<T: Scalar>: Backend {
    /// A column-major matrix on the device.
    type Mat;
    /// The rotations of a Givens QR, kept on the device to form `Q` later.
    type Rotations;

    /// `(rows, cols)` of a device matrix.
    fn mat_shape(&self, a: &Self::Mat) -> (usize, usize);
    /// Uploads `rows × cols` column-major values.
    fn mat_upload(&self, rows: usize, cols: usize, cm: &[T]) -> Result<Self::Mat>;
    /// Downloads all values, column-major (waits for pending work).
    fn mat_download(&self, a: &Self::Mat) -> Result<Vec<T>>;
    /// The top `rows` rows of `a` (every column) as a new matrix, zero below the diagonal
    /// when `upper`: `R` out of a factored matrix without a trip through the host. `rows`
    /// above `a`'s is a [`Error::Shape`]. The default goes through the host.
    fn mat_top(&self, a: &Self::Mat, rows: usize, upper: bool) -> Result<Self::Mat> {
        let (r, c) = self.mat_shape(a);
        check_top(r, rows)?;
        let cm = self.mat_download(a)?;
        let mut out = vec![T::zero(); rows * c];
        for (j, (o, src)) in out
            .chunks_mut(rows.max(1))
            .zip(cm.chunks(r.max(1)))
            .enumerate()
        {
            let n = if upper { rows.min(j + 1) } else { rows };
            o[..n].copy_from_slice(&src[..n]);
        }
        self.mat_upload(rows, c, &out)
    }
    /// `a` as the top rows of a new `rows`-row matrix whose other rows are zero (`rows` below
    /// `a`'s is a [`Error::Shape`]). The default goes through the host.
    fn mat_pad(&self, a: &Self::Mat, rows: usize) -> Result<Self::Mat> {
        let (r, c) = self.mat_shape(a);
        check_top(rows, r)?;
        let cm = self.mat_download(a)?;
        let mut out = vec![T::zero(); rows * c];
        for (o, src) in out.chunks_mut(rows.max(1)).zip(cm.chunks(r.max(1))) {
            o[..r].copy_from_slice(src);
        }
        self.mat_upload(rows, c, &out)
    }
    /// The `rows × cols` matrix with ones on its diagonal.
    fn mat_identity(&self, rows: usize, cols: usize) -> Result<Self::Mat>;
    /// The product `a · b` as a new matrix (`a`'s columns must be `b`'s rows: otherwise an
    /// [`Error::Shape`]), by the backend's tiled matrix-multiplication kernel (no Strassen:
    /// its error grows with the levels). The default goes through the host (sums in f64).
    fn mat_mul(&self, a: &Self::Mat, b: &Self::Mat) -> Result<Self::Mat> {
        let ((m, k), (k2, n)) = (self.mat_shape(a), self.mat_shape(b));
        check_mul(k, k2)?;
        let (ha, hb) = (self.mat_download(a)?, self.mat_download(b)?);
        let mut c = vec![T::zero(); m * n];
        for j in 0..n {
            for i in 0..m {
                let sum: f64 = (0..k)
                    .map(|l| ha[l * m + i].wide() * hb[j * k + l].wide())
                    .sum();
                c[j * m + i] = T::from_f64(sum);
            }
        }
        self.mat_upload(m, n, &c)
    }
    /// Givens QR in place in the given order (never [`QrOrder::Auto`]: the driver resolves it
    /// through [`Self::qr_order`]): `a` becomes `R` (exact zeros below the diagonal); returns
    /// the rotations (`Q = G₁ᵀ ⋯ G_Kᵀ`).
    fn givens_qr(&self, a: &mut Self::Mat, order: QrOrder) -> Result<Self::Rotations>;
    /// The order [`QrOrder::Auto`] stands for on this backend (default: [`QrOrder::gpu_auto`]).
    fn qr_order(&self, rows: usize, cols: usize) -> QrOrder {
        QrOrder::gpu_auto(rows, cols)
    }
    /// `q ← Q q` for the `Q` of `rot` (`q` has as many rows as the factored matrix).
    fn givens_apply_q(&self, rot: &Self::Rotations, q: &mut Self::Mat) -> Result<()>;
    /// One-sided block Jacobi on the columns of `w`, applying the same rotations to the
    /// columns of `v` when given, until converged or `p.max_sweeps`.
    fn jacobi(
        &self,
        w: &mut Self::Mat,
        v: Option<&mut Self::Mat>,
        p: &JacobiParams,
    ) -> Result<JacobiStats>;
    /// The Euclidean norm of every column, summed in a wider type than `T` where the backend
    /// has one (f64 on the CPU and CUDA) and rounded to `T` once.
    fn column_norms(&self, w: &Self::Mat) -> Result<Vec<T>>;
    /// The working matrix of a row-major `m × n` view: its columns (`m × n` column-major) or,
    /// when `transpose`, its rows (`n × m` column-major), every value times `scale` (a power of
    /// two). The default changes the layout on the host and uploads; a GPU backend uploads the
    /// rows as they are and changes the layout on the device.
    fn mat_from_rows(&self, a: DenseView<'_, T>, transpose: bool, scale: f64) -> Result<Self::Mat> {
        let (m, n) = a.shape();
        let (rows, cols) = if transpose { (n, m) } else { (m, n) };
        self.mat_upload(rows, cols, &to_col_major(a, transpose, scale)?)
    }
    /// Columns `order[l]` of `a`, each times `scale[l]` (in `T` on GPUs), downloaded row-major: as the columns
    /// of a `rows × order.len()` matrix, or (`as_rows`) as the rows of an `order.len() × rows`
    /// one. An index past `a`'s columns, or `scale` shorter than `order`, is a
    /// [`Error::Shape`]. The default gathers on the host (values multiplied in f64); a GPU
    /// backend gathers on the device and downloads the result only.
    fn gather_columns(
        &self,
        a: &Self::Mat,
        order: &[usize],
        scale: &[f64],
        as_rows: bool,
    ) -> Result<Vec<T>> {
        let (rows, cols) = self.mat_shape(a);
        check_gather(cols, order, scale)?;
        let cm = self.mat_download(a)?;
        let at = |i: usize, l: usize| T::from_f64(cm[order[l] * rows + i].wide() * scale[l]);
        Ok(if as_rows {
            tiled(order.len(), rows, |l, i| at(i, l))?
        } else {
            tiled(rows, order.len(), at)?
        })
    }
    /// Device memory in bytes, when known (the driver refuses larger problems up front).
    fn memory_bytes(&self) -> Option<u64> {
        None
    }
}

/// `Ok` when a product's inner dimensions agree ([`SvdKernels::mat_mul`]).
pub fn check_mul(a_cols: usize, b_rows: usize) -> Result<()> {
    if a_cols != b_rows {
        return Err(Error::shape(format!(
            "mat_mul: a has {a_cols} columns, b has {b_rows} rows"
        )));
    }
    Ok(())
}

/// The tiled schedule of a GPU backend's [`SvdKernels::mat_mul`] of `a` (`m × k`) and `b`
/// (`k × n`), after [`check_mul`]: the column-major `C = A B` is the row-major `Cᵀ = Bᵀ Aᵀ`
/// (`n × k` times `k × m`), whose operands are `b`'s and `a`'s values as they lie. Returns
/// the options, the schedule and the lengths of its operands `[b, a, c, workspace]`.
pub fn mat_mul_schedule<T: Scalar>(
    backend: &impl crate::matmul::MatMul<T>,
    (m, k): (usize, usize),
    (b_rows, n): (usize, usize),
) -> Result<(
    crate::matmul::MatMulOptions,
    crate::matmul::Schedule,
    [usize; 4],
)> {
    check_mul(k, b_rows)?;
    let opts = crate::matmul::MatMulOptions::with(crate::matmul::Algorithm::Tiled, None);
    let s = backend.plan(n, m, k, &opts);
    let lens = [n * k, k * m, m * n, s.workspace];
    Ok((opts, s, lens))
}

/// `Ok` when `top` rows fit in a matrix of `rows` rows ([`SvdKernels::mat_top`],
/// [`SvdKernels::mat_pad`]).
pub fn check_top(rows: usize, top: usize) -> Result<()> {
    if top > rows {
        Err(Error::shape(format!(
            "the top {top} rows of a matrix of {rows} rows"
        )))
    } else {
        Ok(())
    }
}

/// `Ok` when every index of `order` names one of `cols` columns and `scale` has a factor for
/// each ([`SvdKernels::gather_columns`]).
pub fn check_gather<T>(cols: usize, order: &[usize], scale: &[T]) -> Result<()> {
    if let Some(&j) = order.iter().find(|&&j| j >= cols) {
        return Err(Error::shape(format!(
            "gathering column {j} of a matrix of {cols} columns"
        )));
    }
    if scale.len() < order.len() {
        return Err(Error::shape(format!(
            "{} scale factors for {} gathered columns",
            scale.len(),
            order.len()
        )));
    }
    Ok(())
}

/// The values a device copy of the top `nrows` rows of a `src` (rows, cols) matrix into the
/// top rows of a `dst` one moves (`nrows · cols`), or a [`Error::Shape`] when they do not
/// fit: the check of the GPU backends' `svd_copy_rows` launches.
pub fn copy_rows_len(src: (usize, usize), dst: (usize, usize), nrows: usize) -> Result<usize> {
    if nrows > src.0 || nrows > dst.0 || src.1 != dst.1 {
        return Err(Error::shape(format!(
            "copying {nrows} rows of {} x {} into {} x {}",
            src.0, src.1, dst.0, dst.1
        )));
    }
    Ok(nrows * src.1)
}

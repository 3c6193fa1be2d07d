//! The SVD and QR drivers every backend shares: shape handling (the transpose for `m < n`),
//! power-of-two scaling, the choice of preconditioning, the device memory estimate, and the
//! host-side finish (sorting, normalising, completing `U`). A backend supplies the device
//! steps through [`SvdKernels`]: Givens QR, applying `Q`, a matrix product, the block Jacobi
//! sweeps and the column norms, all on column-major device matrices.

use crate::backend::Backend;
use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

use super::{
    basis, check_finite, QrFactors, QrOptions, QrOrder, SvdOptions, SvdPrecondition, SvdResult,
    Vectors, Wide,
};

/// The block layout of one-sided block Jacobi, shared by the GPU backends: `b` columns per
/// block (the requested size, at most the compiled `bmax`, at most `⌈cols / 2⌉`), `nb` blocks
/// (even, at least 2; blocks past `cols` are empty), `nb − 1` rounds of `nb / 2` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JacobiPlan {
    /// Columns per block.
    pub b: usize,
    /// Blocks (even).
    pub nb: usize,
    /// Work-groups per block pair, each over a chunk of the rows (1: one fused launch per
    /// round; more: three launches per round, Gram partials, rotation, update).
    pub chunks: usize,
}

impl JacobiPlan {
    /// The plan for `cols` columns; a requested block size outside `1 ..= bmax` is an
    /// [`Error::Unsupported`] naming `backend`.
    pub fn new(
        rows: usize,
        cols: usize,
        p: &JacobiParams,
        bmax: usize,
        backend: &str,
    ) -> Result<Self> {
        let b = p.block.unwrap_or(bmax);
        if b == 0 || b > bmax {
            return Err(Error::Unsupported(format!(
                "block size {b} on {backend} (1 ..= {bmax})"
            )));
        }
        let b = b.min(cols.div_ceil(2)).max(1);
        let nreal = cols.div_ceil(b);
        let nb = (nreal + nreal % 2).max(2);
        let chunks = match p.row_chunks {
            Some(0) => {
                return Err(Error::invalid("svd options", "row_chunks = 0"));
            }
            Some(c) => c.min(rows.max(1)),
            None => Self::auto_chunks(rows, nb / 2),
        };
        Ok(Self { b, nb, chunks })
    }

    /// Row chunks when not requested: enough work-groups per round to fill the device
    /// ([`Self::TARGET_GROUPS`] over the round's `pairs`), at most [`Self::MAX_CHUNKS`] and at
    /// least [`Self::CHUNK_ROWS`] rows per chunk, or [`Self::CHUNK_ROWS_FEW`] when that
    /// leaves fewer than [`Self::FEW_GROUPS`] work-groups; 1 (the fused round) when that
    /// leaves one.
    ///
    /// Measured on the H100 (f32, U and Vᵀ): 4096² 2.77 s with 4 chunks, 2.33 s with 32;
    /// 2048² 723 ms with 2, 507 ms with 32; 1024² 319 ms with 1, 159 ms with 16 (and 54.9 ms
    /// with 32 against 52.3 ms with 16, later); R of a 32768 × 256 QR (8 pairs): Jacobi
    /// 4.42–4.49 ms with 8 chunks against 4.79–4.83 ms with 4.
    pub fn auto_chunks(rows: usize, pairs: usize) -> usize {
        let fill = Self::TARGET_GROUPS
            .div_ceil(pairs.max(1))
            .min(Self::MAX_CHUNKS);
        let mut chunks = fill.min(rows / Self::CHUNK_ROWS);
        if pairs * chunks < Self::FEW_GROUPS {
            chunks = fill.min(rows / Self::CHUNK_ROWS_FEW);
        }
        chunks.max(1)
    }

    /// Fewest rows per chunk of [`Self::auto_chunks`].
    pub const CHUNK_ROWS: usize = 64;
    /// Fewest rows per chunk of [`Self::auto_chunks`] when the round would have fewer than
    /// [`Self::FEW_GROUPS`] work-groups with [`Self::CHUNK_ROWS`] (one tile of the kernels).
    pub const CHUNK_ROWS_FEW: usize = 32;
    /// Work-groups per round below which [`Self::auto_chunks`] takes chunks of
    /// [`Self::CHUNK_ROWS_FEW`] rows (about one per H100 SM).
    pub const FEW_GROUPS: usize = 128;
    /// Most chunks per pair of [`Self::auto_chunks`].
    pub const MAX_CHUNKS: usize = 32;
    /// Work-groups per round aimed at by [`Self::auto_chunks`] (about 30 per H100 SM).
    pub const TARGET_GROUPS: usize = 4096;

    /// Rounds per sweep.
    pub fn rounds(&self) -> usize {
        self.nb - 1
    }

    /// Block pairs per round.
    pub fn pairs(&self) -> usize {
        self.nb / 2
    }
}

/// Steps of the flat (Sameh–Kuck) Givens QR of a `rows`-row matrix whose first `jcols =
/// min(rows − 1, cols)` columns are reduced: `rows − 2 + jcols` (0 when `jcols = 0`).
pub fn flat_qr_steps(rows: usize, jcols: usize) -> usize {
    if jcols == 0 {
        0
    } else {
        rows - 2 + jcols
    }
}

/// What [`SvdKernels::jacobi`] is asked to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JacobiParams {
    /// Convergence threshold on the cosine of every column pair.
    pub tol: f64,
    /// Sweep limit.
    pub max_sweeps: usize,
    /// Requested block size (`None`: the backend's own).
    pub block: Option<usize>,
    /// Requested row chunks per block pair on GPUs (`None`: [`JacobiPlan::auto_chunks`]).
    pub row_chunks: Option<usize>,
}

/// What [`SvdKernels::jacobi`] reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JacobiStats {
    /// Sweeps run, the final checking sweep included.
    pub sweeps: usize,
    /// Largest cosine seen in the last sweep (measured on fresh Gram matrices).
    pub off: f64,
    /// `off ≤ tol` at the last sweep.
    pub converged: bool,
}

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

/// `out[o · inner + i] = f(o, i)` for `o < outer`, `i < inner`: in parallel (rayon) over
/// blocks of [`TILE_OUTER`] rows of `out`, each filled in tiles of [`TILE_INNER`] columns, so
/// that the host's layout changes (row- to column-major and back) read and write within a few
/// cache lines per tile instead of striding over the whole matrix per element. Every value is
/// computed by `f` alone, so the result does not depend on the tiling or the thread count.
fn tiled<X: Copy + Send + Sync + num_traits::Zero>(
    outer: usize,
    inner: usize,
    f: impl Fn(usize, usize) -> X + Sync,
) -> Result<Vec<X>> {
    let len = outer.checked_mul(inner).ok_or_else(|| {
        Error::out_of_memory(
            "host",
            format!("a {outer} x {inner} matrix: the size overflows"),
        )
    })?;
    let mut out = crate::alloc::try_zeroed_vec(len, || format!("a {outer} x {inner} matrix"))?;
    if inner == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(TILE_OUTER * inner)
        .enumerate()
        .for_each(|(b, block)| {
            let o0 = b * TILE_OUTER;
            for i0 in (0..inner).step_by(TILE_INNER) {
                let i1 = (i0 + TILE_INNER).min(inner);
                for (r, row) in block.chunks_mut(inner).enumerate() {
                    for (i, x) in (i0..i1).zip(&mut row[i0..i1]) {
                        *x = f(o0 + r, i);
                    }
                }
            }
        });
    Ok(out)
}

/// Rows of the output per parallel task of [`tiled`] (32 f32 reads of one source line).
const TILE_OUTER: usize = 32;
/// Columns of the output per tile of [`tiled`].
const TILE_INNER: usize = 64;

/// A row-major `rows × cols` [`Dense`] filled by [`tiled`].
fn dense_tiled<T: Scalar>(
    rows: usize,
    cols: usize,
    f: impl Fn(usize, usize) -> T + Sync,
) -> Result<Dense<T>> {
    Dense::from_vec(rows, cols, tiled(rows, cols, f)?)
}

/// Column-major copy of a row-major view (optionally of its transpose), each value times
/// `scale` (computed in f64: exact for a power of two within range).
pub fn to_col_major<T: Scalar>(a: DenseView<'_, T>, transpose: bool, scale: f64) -> Result<Vec<T>> {
    let (m, n) = a.shape();
    let f = |v: T| T::from_f64(v.wide() * scale);
    if transpose {
        // columns of Aᵀ are rows of A
        let mut out = crate::alloc::try_zeroed_vec(m * n, || {
            format!("the SVD's working copy of a {m} x {n} matrix")
        })?;
        if n > 0 {
            out.par_chunks_mut(n).enumerate().for_each(|(i, o)| {
                for (x, &v) in o.iter_mut().zip(a.row(i)) {
                    *x = f(v);
                }
            });
        }
        Ok(out)
    } else {
        tiled(n, m, |j, i| f(a.row(i)[j]))
    }
}

/// Row-major `Dense` from `rows × cols` column-major values.
fn from_col_major<T: Scalar>(rows: usize, cols: usize, cm: &[T]) -> Result<Dense<T>> {
    dense_tiled(rows, cols, |i, j| cm[j * rows + i])
}

/// The largest magnitude in `a` and its Frobenius norm (0 when empty), after
/// [`check_finite`]'s check in the same pass, in parallel over rows (the maximum does not
/// depend on the order); on a non-finite entry, [`check_finite`]'s error (the first such
/// entry in row order). The norm is formed without overflow or underflow whatever the
/// entries' range: each row's squares are summed relative to the row's largest magnitude,
/// and rows are combined relative to the larger of their maxima (as LAPACK's `lassq`).
pub fn finite_max_abs<T: Scalar>(a: DenseView<'_, T>, what: &str) -> Result<(f64, f64)> {
    // (largest magnitude, sum of (x / largest)², all finite)
    let (maxabs, ssq, finite) = (0..a.rows())
        .into_par_iter()
        .map(|i| {
            let row = a.row(i);
            // the maximum in T, widened once: the same value as widening every entry
            let (x, ok) = row.iter().fold((T::zero(), true), |(x, ok), &v| {
                (x.max(v.abs()), ok & v.is_finite())
            });
            let x = x.wide();
            if !ok || x == 0.0 {
                return (x, 0.0, ok);
            }
            let inv = 1.0 / x;
            let ssq = if inv.is_finite() {
                row.iter().map(|v| (v.wide() * inv).powi(2)).sum::<f64>()
            } else {
                row.iter().map(|v| (v.wide() / x).powi(2)).sum::<f64>()
            };
            (x, ssq, true)
        })
        .reduce(
            || (0.0, 0.0, true),
            |(x, s, p), (y, t, q)| {
                let m = x.max(y);
                let rel = |z: f64, u: f64| if z == 0.0 { 0.0 } else { u * (z / m).powi(2) };
                (m, rel(x, s) + rel(y, t), p && q)
            },
        );
    if finite {
        Ok((maxabs, maxabs * ssq.sqrt()))
    } else {
        check_finite(a, what).map(|()| (maxabs, maxabs * ssq.sqrt()))
    }
}

/// The exact power of two the driver multiplies the matrix by before the work (and divides
/// the singular values by after): the largest with `(‖A‖_F · scale)² < 2^(e − 3)`, `2^e`
/// the largest power of two of `T` (f32: `2^124`, f64: `2^1020`), within `T`'s normal
/// exponent range. `‖A‖_F` bounds every column norm and every Gram entry of every stage (the
/// QRs' `R`, `L`, the rotated `W`), so none of them can overflow, even summed over a few
/// partial sums, while the squares of the smallest columns are kept as far from underflow as
/// the exponent range allows: singular values down to about `2^-119 ‖A‖_F` (f32) and
/// `2^-1008 ‖A‖_F` (f64) survive (see [`super::negligible_gram`]). 1 for a zero matrix.
pub fn working_scale<T: Scalar>(fro: f64) -> f64 {
    if !(fro > 0.0 && fro.is_finite()) {
        return 1.0;
    }
    // exponents of T's largest and smallest normal powers of two
    let emax = T::max_value().wide().log2().floor() as i32;
    let emin = T::min_positive_value().wide().log2().round() as i32;
    // (fro · 2^k)² < 2^(emax − 3) ⇐ fro · 2^k < 2^((emax − 3) / 2) with fro < 2^(⌊log₂ fro⌋ + 1)
    let target = (emax - 3) / 2;
    let k = (target - (fro.log2().floor() as i32 + 1)).clamp(emin, emax);
    pow2(k)
}

/// `2^k` for `k` within f64's normal exponent range, exactly.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Refuses problems that do not fit the device, naming the memory needed.
fn check_memory<T: Scalar, K: SvdKernels<T>>(k: &K, values: usize, what: &str) -> Result<()> {
    let need = (values as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    match k.memory_bytes() {
        Some(have) if need > have => Err(Error::out_of_memory(
            k.name(),
            format!(
                "{what} needs about {need} bytes ({:.2} GiB) of device memory; {} has {have} ({:.2} GiB)",
                need as f64 / (1u64 << 30) as f64,
                k.device(),
                have as f64 / (1u64 << 30) as f64
            ),
        )),
        _ => Ok(()),
    }
}

/// Refuses, before any work, a problem whose host memory (`bytes`, from the shapes alone)
/// exceeds the machine's physical memory, naming the bytes: a full `U` of a 1 × 200000
/// matrix would take 320 GB and abort the process on the first touch.
fn check_host_memory(bytes: u128, what: &str) -> Result<()> {
    match crate::alloc::physical_memory() {
        Some(have) if bytes > have as u128 => Err(Error::out_of_memory(
            "host",
            format!(
                "{what} needs about {} of host memory; this machine has {}",
                crate::alloc::human_bytes(bytes),
                crate::alloc::human_bytes(have as u128)
            ),
        )),
        _ => Ok(()),
    }
}

/// `A = Q R` through the backend's Givens kernels (see [`super::Qr`]).
pub fn qr_with<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    a: DenseView<'_, T>,
    opts: &QrOptions,
) -> Result<QrFactors<T>> {
    let (m, n) = a.shape();
    check_finite(a, "qr")?;
    let kk = m.min(n);
    let qcols = match opts.q {
        Vectors::None => 0,
        Vectors::Thin => kk,
        Vectors::Full => m,
    };
    check_memory(
        k,
        (3 * m * n).saturating_add(m.saturating_mul(qcols)),
        &format!("QR of {m} x {n}"),
    )?;
    let sz = std::mem::size_of::<T>() as u128;
    check_host_memory(
        (3 * m as u128 * n as u128 + 2 * m as u128 * qcols as u128) * sz,
        &format!("QR of {m} x {n} with Q of {m} x {qcols}"),
    )?;
    let rrows = if opts.q == Vectors::Full { m } else { kk };
    if m == 0 || n == 0 {
        let q = (opts.q != Vectors::None)
            .then(|| Dense::from_fn(m, qcols, |i, j| T::from_f64((i == j) as u8 as f64)));
        return Ok(QrFactors {
            q,
            r: Dense::zeros(rrows, n),
        });
    }
    let mut dev = k.mat_upload(m, n, &to_col_major(a, false, 1.0)?)?;
    let rot = k.givens_qr(&mut dev, resolve(k, opts.order, m, n))?;
    let cm = k.mat_download(&dev)?;
    let r = dense_tiled(rrows, n, |i, j| cm[j * m + i])?;
    let q = if qcols > 0 {
        let mut q = k.mat_identity(m, qcols)?;
        k.givens_apply_q(&rot, &mut q)?;
        Some(from_col_major(m, qcols, &k.mat_download(&q)?)?)
    } else {
        None
    };
    Ok(QrFactors { q, r })
}

/// The concrete order for a `rows × cols` QR on `k`.
fn resolve<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    order: QrOrder,
    rows: usize,
    cols: usize,
) -> QrOrder {
    match order {
        QrOrder::Auto => match k.qr_order(rows, cols) {
            QrOrder::Auto => QrOrder::Flat,
            o => o,
        },
        o => o,
    }
}

/// The upper triangle (`n × n`) of an `m × n` column-major matrix, column-major.
fn upper<T: Scalar>(m: usize, n: usize, cm: &[T]) -> Vec<T> {
    let mut r = vec![T::zero(); n * n];
    for j in 0..n {
        r[j * n..j * n + j + 1].copy_from_slice(&cm[j * m..j * m + j + 1]);
    }
    r
}

/// The column indices of the `n × n` column-major `r` in descending order of their norms
/// (sums of squares in f64: the driver's scaling keeps them finite).
fn descending_column_norms<T: Scalar>(n: usize, r: &[T]) -> Vec<usize> {
    let norms: Vec<f64> = r
        .chunks(n.max(1))
        .map(|c| c.iter().map(|v| v.wide() * v.wide()).sum())
        .collect();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by(|&x, &y| norms[y].total_cmp(&norms[x]));
    perm
}

/// `Π Rᵀ` for the `n × n` column-major `r`: row `i` of the result is column `perm[i]` of `r`.
fn permuted_transpose<T: Scalar>(n: usize, r: &[T], perm: &[usize]) -> Vec<T> {
    let mut t = vec![T::zero(); n * n];
    for j in 0..n {
        for (i, &p) in perm.iter().enumerate() {
            t[j * n + i] = r[p * n + j];
        }
    }
    t
}

/// The transpose of an `n × n` column-major matrix.
fn transpose_sq<T: Scalar>(n: usize, cm: &[T]) -> Vec<T> {
    let mut t = vec![T::zero(); n * n];
    for j in 0..n {
        for i in 0..n {
            t[i * n + j] = cm[j * n + i];
        }
    }
    t
}

/// Phase timing of [`svd_with`] on stderr when `TRIDENT_SVD_TRACE` is set (non-empty, not
/// `0`): each phase ends with [`Backend::synchronize`], so the times are the device's. Off by
/// default (the extra waits would perturb the pipeline).
struct Trace {
    start: Option<std::time::Instant>,
}

impl Trace {
    fn new() -> Self {
        let on = std::env::var("TRIDENT_SVD_TRACE").is_ok_and(|v| !v.is_empty() && v != "0");
        Self {
            start: on.then(std::time::Instant::now),
        }
    }

    /// Ends phase `what` (waits for the device when tracing).
    fn phase<B: Backend + ?Sized>(&mut self, k: &B, what: &str) -> Result<()> {
        if let Some(t) = self.start {
            k.synchronize()?;
            eprintln!(
                "svd trace: {what}: {:.3} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
            self.start = Some(std::time::Instant::now());
        }
        Ok(())
    }
}

/// Largest ratio of the singular values for which the QR methods form `U Σ` as the product
/// `A V` rather than by applying `Q₁`'s rotations (see [`svd_with`]).
pub const AV_MAX_COND: f64 = 32.0;

/// The SVD through the backend's kernels (see [`super::Svd`] and the module documentation of
/// [`crate::svd`]).
pub fn svd_with<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    a: DenseView<'_, T>,
    opts: &SvdOptions,
) -> Result<SvdResult<T>> {
    let (m, n) = a.shape();
    let (_, fro) = finite_max_abs(a, "svd")?;
    let transposed = m < n;
    let (rows, cols) = if transposed { (n, m) } else { (m, n) };
    let method = opts
        .precondition
        .unwrap_or_else(|| SvdPrecondition::auto(rows, cols));
    let rows_j = if method == SvdPrecondition::None {
        rows
    } else {
        cols
    };
    let tol = opts.tol.unwrap_or(rows_j.max(1) as f64 * T::EPS.wide());
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::invalid("svd options", format!("tol = {tol}")));
    }
    let want = opts.vectors;
    if cols == 0 {
        let eye = |d: usize| Dense::from_fn(d, d, |i, j| T::from_f64((i == j) as u8 as f64));
        let (u, vt) = match want {
            Vectors::None => (None, None),
            Vectors::Thin => (Some(Dense::zeros(m, 0)), Some(Dense::zeros(0, n))),
            Vectors::Full => (Some(eye(m)), Some(eye(n))),
        };
        return Ok(SvdResult {
            s: Vec::new(),
            u,
            vt,
            sweeps: 0,
            off: 0.0,
            converged: true,
            precondition: method,
            tol,
        });
    }
    let vectors = want != Vectors::None;
    {
        // The host's share: the working copy and its download, the result (U, Vᵀ), and for
        // a full U the completed basis in f64.
        let (r, c) = (rows as u128, cols as u128);
        let sz = std::mem::size_of::<T>() as u128;
        let ucols = if want == Vectors::Full { r } else { c };
        let result = match want {
            Vectors::None => 0,
            _ => (r * ucols + c * c) * sz + r * ucols * 8,
        };
        check_host_memory(
            2 * r * c * sz + result,
            &format!(
                "SVD of {m} x {n}{}",
                match want {
                    Vectors::Full => " with full U and Vᵀ",
                    Vectors::Thin => " with U and Vᵀ",
                    Vectors::None => "",
                }
            ),
        )?;
    }
    let extra = match method {
        SvdPrecondition::None => 0,
        // (A kept for U Σ = A V: rows × cols more.)
        _ => 5 * rows * cols + 3 * cols * cols,
    };
    check_memory(
        k,
        rows * cols
            + if vectors {
                cols * cols + rows * cols
            } else {
                0
            }
            + extra,
        &format!("SVD of {m} x {n} ({method:?})"),
    )?;

    let scale = working_scale::<T>(fro);
    let mut trace = Trace::new();
    let params = JacobiParams {
        tol,
        max_sweeps: opts.max_sweeps,
        block: opts.block_size,
        row_chunks: opts.row_chunks,
    };
    let ident = |d: usize| k.mat_identity(d, d);

    // w_final: the rotated working matrix U·Σ (rows × cols); v_final: V (cols × cols);
    // sigma: the singular values when known already (else w_final's column norms).
    let (stats, w_final, v_final, sigma) = match method {
        SvdPrecondition::None => {
            let mut w = k.mat_from_rows(a, transposed, scale)?;
            let mut v = if vectors { Some(ident(cols)?) } else { None };
            trace.phase(k, "host prepare + upload")?;
            let stats = k.jacobi(&mut w, v.as_mut(), &params)?;
            trace.phase(k, &format!("jacobi ({} sweeps)", stats.sweeps))?;
            (stats, w, v, None)
        }
        SvdPrecondition::Qr | SvdPrecondition::QrLq => {
            let mut w = k.mat_from_rows(a, transposed, scale)?;
            // A, kept for U Σ = A V (below).
            let a_kept = if vectors {
                Some(k.mat_pad(&w, rows)?)
            } else {
                None
            };
            trace.phase(k, "host prepare + upload")?;
            let rot1 = k.givens_qr(&mut w, resolve(k, opts.qr_order, rows, cols))?;
            // QR2's row order of Rᵀ (identity for QR1)
            let mut perm: Vec<usize> = (0..cols).collect();
            trace.phase(k, "qr")?;
            let (mut j, rot2) = if method == SvdPrecondition::Qr {
                (k.mat_top(&w, cols, true)?, None)
            } else {
                let r = upper(rows, cols, &k.mat_download(&w)?);
                // Rᵀ with its rows (R's columns) in descending norm order, Π Rᵀ = Q₂ R₂:
                // the second QR of a row-graded matrix keeps its small rows' relative
                // accuracy only when the large rows come first (a huge entry in a middle
                // column otherwise loses every small singular value; LAPACK's xGEJSV
                // pivots for the same reason). V = Πᵀ Q₂ V_L below.
                perm = descending_column_norms(cols, &r);
                let mut rt = k.mat_upload(cols, cols, &permuted_transpose(cols, &r, &perm))?;
                let rot2 = k.givens_qr(&mut rt, resolve(k, opts.qr_order, cols, cols))?;
                let l = transpose_sq(cols, &upper(cols, cols, &k.mat_download(&rt)?));
                (k.mat_upload(cols, cols, &l)?, Some(rot2))
            };
            drop(w);
            let mut v = if vectors { Some(ident(cols)?) } else { None };
            trace.phase(k, "R (QR2: second QR)")?;
            let stats = k.jacobi(&mut j, v.as_mut(), &params)?;
            trace.phase(k, &format!("jacobi ({} sweeps)", stats.sweeps))?;
            if vectors {
                let v = match (rot2, v) {
                    (Some(rot2), Some(mut vl)) => {
                        // V = Πᵀ Q₂ V_L, the rotations applied to V_L in place, then the
                        // rows put back in A's column order (on the host: cols² values).
                        k.givens_apply_q(&rot2, &mut vl)?;
                        if perm.iter().enumerate().any(|(i, &p)| i != p) {
                            let old = k.mat_download(&vl)?;
                            let mut new = vec![T::zero(); old.len()];
                            for (o, n) in old.chunks(cols).zip(new.chunks_mut(cols)) {
                                for (i, &p) in perm.iter().enumerate() {
                                    n[p] = o[i];
                                }
                            }
                            vl = k.mat_upload(cols, cols, &new)?;
                        }
                        Some(vl)
                    }
                    (_, v) => v,
                };
                // U Σ = Q₁ [J; 0] = A V (J = R V, or L V_L with A Q₂ = Q₁ L). When the
                // singular values (J's column norms) are within AV_MAX_COND of each other,
                // one product A V gives it: each column's error, about ε σ₁ √cols, is
                // small against its σ. Otherwise the rotations are applied to J padded
                // with zero rows, which keeps U orthogonal whatever the spread.
                let sigma: Vec<f64> = k.column_norms(&j)?.iter().map(|x| x.wide()).collect();
                let (lo, hi) = sigma
                    .iter()
                    .fold((f64::INFINITY, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                trace.phase(k, "J's column norms")?;
                match (&a_kept, &v) {
                    (Some(a0), Some(vf)) if hi > 0.0 && lo * AV_MAX_COND >= hi => {
                        let w = k.mat_mul(a0, vf)?;
                        trace.phase(k, "U = A V")?;
                        drop(a_kept);
                        (stats, w, v, Some(sigma))
                    }
                    _ => {
                        drop(a_kept);
                        let mut w = k.mat_pad(&j, rows)?;
                        trace.phase(k, "J padded")?;
                        k.givens_apply_q(&rot1, &mut w)?;
                        trace.phase(k, "U = Q1 [J; 0]")?;
                        (stats, w, v, None)
                    }
                }
            } else {
                (stats, j, None, None)
            }
        }
    };

    let norms: Vec<f64> = match sigma {
        Some(s) => s,
        None => k
            .column_norms(&w_final)?
            .into_iter()
            .map(|v| v.wide())
            .collect(),
    };
    trace.phase(k, "norms")?;
    let mut out = finish(
        k,
        Finish {
            m,
            n,
            transposed,
            scale,
            want,
        },
        &norms,
        v_final.as_ref().map(|v| (&w_final, v)),
    )?;
    trace.phase(k, "U and V")?;
    out.sweeps = stats.sweeps;
    out.off = stats.off;
    out.converged = stats.converged;
    out.precondition = method;
    out.tol = tol;
    Ok(out)
}

/// What [`finish`] needs to know about the problem.
struct Finish {
    m: usize,
    n: usize,
    transposed: bool,
    scale: f64,
    want: Vectors,
}

/// Sorts, normalises and completes: from the working space's column norms, `U·Σ` (`rows ×
/// cols`, column-major on the device) and `V` (`cols × cols`) to the result in `A`'s shape.
/// When no column needs completing, `U` and `V` are gathered on the device in their final
/// layout ([`SvdKernels::gather_columns`]) and only they are downloaded; otherwise `U·Σ` comes
/// to the host, where the basis is completed.
fn finish<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    f: Finish,
    norms: &[f64],
    wv: Option<(&K::Mat, &K::Mat)>,
) -> Result<SvdResult<T>> {
    let (rows, cols) = if f.transposed { (f.n, f.m) } else { (f.m, f.n) };
    // Columns whose squared norm would underflow in T are zero (see the module docs).
    let zero = super::negligible_gram::<T>().wide().sqrt();
    let mut order: Vec<usize> = (0..cols).collect();
    order.sort_by(|&x, &y| norms[y].total_cmp(&norms[x]));
    let s_scaled: Vec<f64> = order
        .iter()
        .map(|&j| if norms[j] > zero { norms[j] } else { 0.0 })
        .collect();
    let s: Vec<T> = s_scaled.iter().map(|&x| T::from_f64(x / f.scale)).collect();
    let mut result = SvdResult {
        s,
        u: None,
        vt: None,
        sweeps: 0,
        off: 0.0,
        converged: true,
        precondition: SvdPrecondition::None,
        tol: 0.0,
    };
    let Some((w, v)) = wv else {
        return Ok(result);
    };
    // U_w: normalised nonzero columns in sorted order (value `w · (1 / norm)`), then
    // completion columns; V_w column l is V's column order[l].
    let nonzero = s_scaled.iter().filter(|&&x| x > 0.0).count();
    let ucols = if f.want == Vectors::Full { rows } else { cols };
    let inv: Vec<f64> = order[..nonzero].iter().map(|&j| 1.0 / norms[j]).collect();
    let dense = |r: usize, c: usize, v: Vec<T>| Dense::from_vec(r, c, v);
    if ucols == nonzero {
        let ones = vec![1.0; cols];
        if !f.transposed {
            // A = U_w Σ V_wᵀ
            result.u = Some(dense(
                rows,
                ucols,
                k.gather_columns(w, &order, &inv, false)?,
            )?);
            result.vt = Some(dense(
                cols,
                cols,
                k.gather_columns(v, &order, &ones, true)?,
            )?);
        } else {
            // A = W ᵀ = V_w Σ U_wᵀ: U = V_w (m × m), Vᵀ = U_wᵀ (k × n or n × n)
            result.u = Some(dense(
                cols,
                cols,
                k.gather_columns(v, &order, &ones, false)?,
            )?);
            result.vt = Some(dense(
                ucols,
                rows,
                k.gather_columns(w, &order, &inv, true)?,
            )?);
        }
        return Ok(result);
    }
    let w = k.mat_download(w)?;
    let v = k.mat_download(v)?;
    let uw = |i: usize, l: usize| w[order[l] * rows + i].wide() * inv[l];
    let mut known = crate::alloc::try_zeroed_vec::<f64>(rows * nonzero, || {
        format!("U's {nonzero} known columns of {rows} (f64, to complete the basis)")
    })?;
    if rows > 0 {
        known.par_chunks_mut(rows).enumerate().for_each(|(l, c)| {
            for (i, x) in c.iter_mut().enumerate() {
                *x = uw(i, l);
            }
        });
    }
    let more = basis::complete(rows, &known, ucols - nonzero)?;
    let t = T::from_f64;
    let u_at = |i: usize, l: usize| {
        if l < nonzero {
            t(uw(i, l))
        } else {
            t(more[(l - nonzero) * rows + i])
        }
    };
    let vw_at = |i: usize, l: usize| t(v[order[l] * cols + i].wide());
    if !f.transposed {
        result.u = Some(dense_tiled(rows, ucols, u_at)?);
        result.vt = Some(dense_tiled(cols, cols, |l, j| vw_at(j, l))?);
    } else {
        result.u = Some(dense_tiled(cols, cols, vw_at)?);
        result.vt = Some(dense_tiled(ucols, rows, |l, j| u_at(j, l))?);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chunks_fill_the_device_within_the_row_limits() {
        assert_eq!(JacobiPlan::auto_chunks(4096, 128), 32);
        assert_eq!(JacobiPlan::auto_chunks(2048, 64), 32);
        assert_eq!(JacobiPlan::auto_chunks(1024, 32), 16);
        assert_eq!(JacobiPlan::auto_chunks(512, 16), 8);
        assert_eq!(JacobiPlan::auto_chunks(256, 8), 8);
        assert_eq!(JacobiPlan::auto_chunks(100, 8), 3);
        assert_eq!(JacobiPlan::auto_chunks(63, 8), 1);
        assert_eq!(JacobiPlan::auto_chunks(65536, 4096), 1);
        assert_eq!(JacobiPlan::auto_chunks(0, 0), 1);
    }
}

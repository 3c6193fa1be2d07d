//! The SVD and QR drivers every backend shares: shape handling (the transpose for `m < n`),
//! power-of-two scaling, the choice of preconditioning, the device memory estimate, and the
//! host-side finish (sorting, normalising, completing `U`). A backend supplies the device
//! steps through [`SvdKernels`]: Givens QR, applying `Q`, a matrix product, the block Jacobi
//! sweeps and the column norms, all on column-major device matrices.

use crate::backend::Backend;
use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

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

    /// Row chunks when not requested: with fewer than [`Self::SPLIT_BELOW_PAIRS`] pairs per
    /// round and at least 2 × [`Self::CHUNK_ROWS`] rows, `rows / CHUNK_ROWS` (at most 8), so
    /// that a round keeps the GPU busy; else 1.
    pub fn auto_chunks(rows: usize, pairs: usize) -> usize {
        if pairs < Self::SPLIT_BELOW_PAIRS && rows >= 2 * Self::CHUNK_ROWS {
            (rows / Self::CHUNK_ROWS).min(8)
        } else {
            1
        }
    }

    /// Rows per chunk aimed at by [`Self::auto_chunks`].
    pub const CHUNK_ROWS: usize = 1024;
    /// Pairs per round below which rows are split (about two work-groups per H100 SM).
    pub const SPLIT_BELOW_PAIRS: usize = 264;

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
    /// The `rows × cols` matrix with ones on its diagonal.
    fn mat_identity(&self, rows: usize, cols: usize) -> Result<Self::Mat>;
    /// `A B` (`A.cols == B.rows`, checked by the caller).
    fn mat_mul(&self, a: &Self::Mat, b: &Self::Mat) -> Result<Self::Mat>;
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
    /// The Euclidean norm of every column.
    fn column_norms(&self, w: &Self::Mat) -> Result<Vec<T>>;
    /// Device memory in bytes, when known (the driver refuses larger problems up front).
    fn memory_bytes(&self) -> Option<u64> {
        None
    }
}

/// `out[o · inner + i] = f(o, i)` for `o < outer`, `i < inner`, filled in 64 × 64 tiles: the
/// host's layout changes (row- to column-major and back) read and write within a few cache
/// lines per tile instead of striding over the whole matrix per element.
fn tiled<X: Copy>(
    outer: usize,
    inner: usize,
    fill: X,
    mut f: impl FnMut(usize, usize) -> X,
) -> Vec<X> {
    const TB: usize = 64;
    let mut out = vec![fill; outer * inner];
    for o0 in (0..outer).step_by(TB) {
        for i0 in (0..inner).step_by(TB) {
            for o in o0..(o0 + TB).min(outer) {
                let row = &mut out[o * inner..(o + 1) * inner];
                for (i, x) in row
                    .iter_mut()
                    .enumerate()
                    .take((i0 + TB).min(inner))
                    .skip(i0)
                {
                    *x = f(o, i);
                }
            }
        }
    }
    out
}

/// Column-major copy of a row-major view (optionally of its transpose), each value times
/// `scale` (computed in f64: exact for a power of two within range).
fn to_col_major<T: Scalar>(a: DenseView<'_, T>, transpose: bool, scale: f64) -> Vec<T> {
    let (m, n) = a.shape();
    let f = |v: T| T::from_f64(v.wide() * scale);
    if transpose {
        // columns of Aᵀ are rows of A
        let mut out = Vec::with_capacity(m * n);
        for i in 0..m {
            out.extend(a.row(i).iter().map(|&v| f(v)));
        }
        out
    } else {
        tiled(n, m, T::zero(), |j, i| f(a.get(i, j)))
    }
}

/// Row-major `Dense` from `rows × cols` column-major values.
fn from_col_major<T: Scalar>(rows: usize, cols: usize, cm: &[T]) -> Dense<T> {
    let mut d = Dense::zeros(rows, cols);
    d.as_mut_slice()
        .copy_from_slice(&tiled(rows, cols, T::zero(), |i, j| cm[j * rows + i]));
    d
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
    check_memory(k, 3 * m * n + m * qcols, &format!("QR of {m} x {n}"))?;
    let rrows = if opts.q == Vectors::Full { m } else { kk };
    if m == 0 || n == 0 {
        let q = (opts.q != Vectors::None)
            .then(|| Dense::from_fn(m, qcols, |i, j| T::from_f64((i == j) as u8 as f64)));
        return Ok(QrFactors {
            q,
            r: Dense::zeros(rrows, n),
        });
    }
    let mut dev = k.mat_upload(m, n, &to_col_major(a, false, 1.0))?;
    let rot = k.givens_qr(&mut dev, resolve(k, opts.order, m, n))?;
    let cm = k.mat_download(&dev)?;
    let r = Dense::from_fn(rrows, n, |i, j| cm[j * m + i]);
    let q = if qcols > 0 {
        let mut q = k.mat_identity(m, qcols)?;
        k.givens_apply_q(&rot, &mut q)?;
        Some(from_col_major(m, qcols, &k.mat_download(&q)?))
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

/// The SVD through the backend's kernels (see [`super::Svd`] and the module documentation of
/// [`crate::svd`]).
pub fn svd_with<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    a: DenseView<'_, T>,
    opts: &SvdOptions,
) -> Result<SvdResult<T>> {
    let (m, n) = a.shape();
    check_finite(a, "svd")?;
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
    let extra = match method {
        SvdPrecondition::None => 0,
        _ => 4 * rows * cols + 3 * cols * cols,
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

    let maxabs = (0..m)
        .flat_map(|i| a.row(i).iter())
        .fold(0.0f64, |x, v| x.max(v.wide().abs()));
    let scale = if maxabs > 0.0 {
        2f64.powi(-(maxabs.log2().floor() as i32 + 1))
    } else {
        1.0
    };
    let mut trace = Trace::new();
    let wcm = to_col_major(a, transposed, scale);
    let params = JacobiParams {
        tol,
        max_sweeps: opts.max_sweeps,
        block: opts.block_size,
        row_chunks: opts.row_chunks,
    };
    let ident = |d: usize| k.mat_identity(d, d);

    // w_final: the rotated working matrix U·Σ (rows × cols); v_final: V (cols × cols).
    let (stats, w_final, v_final) = match method {
        SvdPrecondition::None => {
            let mut w = k.mat_upload(rows, cols, &wcm)?;
            let mut v = if vectors { Some(ident(cols)?) } else { None };
            trace.phase(k, "host prepare + upload")?;
            let stats = k.jacobi(&mut w, v.as_mut(), &params)?;
            trace.phase(k, &format!("jacobi ({} sweeps)", stats.sweeps))?;
            (stats, w, v)
        }
        SvdPrecondition::Qr | SvdPrecondition::QrLq => {
            let mut w = k.mat_upload(rows, cols, &wcm)?;
            trace.phase(k, "host prepare + upload")?;
            let rot1 = k.givens_qr(&mut w, resolve(k, opts.qr_order, rows, cols))?;
            trace.phase(k, "qr")?;
            let r = upper(rows, cols, &k.mat_download(&w)?);
            drop(w);
            let (mut j, rot2) = if method == SvdPrecondition::Qr {
                (k.mat_upload(cols, cols, &r)?, None)
            } else {
                let mut rt = k.mat_upload(cols, cols, &transpose_sq(cols, &r))?;
                let rot2 = k.givens_qr(&mut rt, resolve(k, opts.qr_order, cols, cols))?;
                let l = transpose_sq(cols, &upper(cols, cols, &k.mat_download(&rt)?));
                (k.mat_upload(cols, cols, &l)?, Some(rot2))
            };
            let mut v = if vectors { Some(ident(cols)?) } else { None };
            trace.phase(k, "R download + second QR + upload")?;
            let stats = k.jacobi(&mut j, v.as_mut(), &params)?;
            trace.phase(k, &format!("jacobi ({} sweeps)", stats.sweeps))?;
            if vectors {
                // U Σ = Q₁ [J; 0]: the rotations applied to J padded with zero rows (no
                // rows × cols Q₁ formed, no rows × cols × cols product).
                let jh = k.mat_download(&j)?;
                let mut padded = vec![T::zero(); rows * cols];
                for (c, col) in jh.chunks(cols).enumerate() {
                    padded[c * rows..c * rows + cols].copy_from_slice(col);
                }
                let mut w = k.mat_upload(rows, cols, &padded)?;
                trace.phase(k, "J download + pad + upload")?;
                k.givens_apply_q(&rot1, &mut w)?;
                trace.phase(k, "U = Q1 [J; 0]")?;
                let v = match (rot2, v) {
                    (Some(rot2), Some(mut vl)) => {
                        // V = Q₂ V_L, the rotations applied to V_L in place.
                        k.givens_apply_q(&rot2, &mut vl)?;
                        Some(vl)
                    }
                    (_, v) => v,
                };
                (stats, w, v)
            } else {
                (stats, j, None)
            }
        }
    };

    let (wrows, _) = k.mat_shape(&w_final);
    let (norms, wh): (Vec<f64>, Option<Vec<T>>) = if vectors {
        let wh = k.mat_download(&w_final)?;
        let norms = wh
            .chunks(wrows)
            .map(|c| c.iter().map(|v| v.wide().powi(2)).sum::<f64>().sqrt())
            .collect();
        (norms, Some(wh))
    } else {
        let norms = k.column_norms(&w_final)?;
        (norms.into_iter().map(|v| v.wide()).collect(), None)
    };
    let vh = match &v_final {
        Some(v) => Some(k.mat_download(v)?),
        None => None,
    };
    trace.phase(k, "download + norms")?;
    let mut out = finish::<T>(
        Finish {
            m,
            n,
            transposed,
            scale,
            want,
        },
        &norms,
        wh.as_deref(),
        vh.as_deref(),
    );
    trace.phase(k, "host finish")?;
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
/// cols`, column-major) and `V` (`cols × cols`) to the result in `A`'s shape.
fn finish<T: Scalar>(f: Finish, norms: &[f64], w: Option<&[T]>, v: Option<&[T]>) -> SvdResult<T> {
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
    let (Some(w), Some(v)) = (w, v) else {
        return result;
    };
    // U_w: normalised nonzero columns in sorted order, then completion.
    let nonzero = s_scaled.iter().filter(|&&x| x > 0.0).count();
    let ucols = if f.want == Vectors::Full { rows } else { cols };
    let mut u = Vec::with_capacity(rows * ucols);
    for &j in &order[..nonzero] {
        let inv = 1.0 / norms[j];
        u.extend(w[j * rows..(j + 1) * rows].iter().map(|x| x.wide() * inv));
    }
    let more = basis::complete(rows, &u, ucols - nonzero);
    u.extend_from_slice(&more);
    // V_w columns in sorted order.
    let mut vw = Vec::with_capacity(cols * cols);
    for &j in &order {
        vw.extend(v[j * cols..(j + 1) * cols].iter().map(|x| x.wide()));
    }
    let t = T::from_f64;
    // Row-major results from column-major f64 values (tiled: see `tiled`).
    let dense = |r: usize, c: usize, f: &dyn Fn(usize, usize) -> T| {
        let mut d = Dense::zeros(r, c);
        d.as_mut_slice().copy_from_slice(&tiled(r, c, T::zero(), f));
        d
    };
    if !f.transposed {
        // A = U_w Σ V_wᵀ
        result.u = Some(dense(rows, ucols, &|i, l| t(u[l * rows + i])));
        result.vt = Some(dense(cols, cols, &|l, j| t(vw[l * cols + j])));
    } else {
        // A = W ᵀ = V_w Σ U_wᵀ: U = V_w (m × m), Vᵀ = U_wᵀ (k × n or n × n)
        result.u = Some(dense(cols, cols, &|i, l| t(vw[l * cols + i])));
        result.vt = Some(dense(ucols, rows, &|l, j| t(u[l * rows + j])));
    }
    result
}

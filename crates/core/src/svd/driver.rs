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

use super::host::{
    check_host_memory, dense_tiled, descending_column_norms, from_col_major, permuted_transpose,
    transpose_sq, upper,
};
use super::{
    basis, check_finite, QrFactors, QrOptions, QrOrder, SvdOptions, SvdPhase, SvdPrecondition,
    SvdResult, Vectors, Wide,
};

// The paths backends have used since the driver held all of these.
pub use super::host::{finite_max_abs, to_col_major, working_scale};
pub use super::jacobi::{flat_qr_steps, JacobiParams, JacobiPlan, JacobiStats};
pub use super::kernels::{
    check_gather, check_mul, check_top, copy_rows_len, mat_mul_schedule, SvdKernels,
};

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

/// Phase timing of [`svd_with`] when [`SvdOptions::trace`] is on: each phase ends with
/// [`Backend::synchronize`], so the times are the device's; they come back in
/// [`SvdResult::phases`]. Off by default (the extra waits would perturb the pipeline).
struct Trace {
    start: Option<std::time::Instant>,
    phases: Vec<SvdPhase>,
}

impl Trace {
    fn new(on: bool) -> Self {
        Self {
            start: on.then(std::time::Instant::now),
            phases: Vec::new(),
        }
    }

    /// Ends phase `what` (waits for the device when tracing).
    fn phase<B: Backend + ?Sized>(&mut self, k: &B, what: impl FnOnce() -> String) -> Result<()> {
        if let Some(t) = self.start {
            k.synchronize()?;
            self.phases.push(SvdPhase {
                name: what(),
                seconds: t.elapsed().as_secs_f64(),
            });
            self.start = Some(std::time::Instant::now());
        }
        Ok(())
    }
}

/// Largest ratio of the singular values for which the QR methods form `U Σ` as the product
/// `A V` rather than by applying `Q₁`'s rotations (see [`svd_with`]).
pub const AV_MAX_COND: f64 = 32.0;

/// The SVD through the backend's kernels (see [`super::Svd`] and the module documentation of
/// [`crate::svd`]): the problem and its checks, then the Jacobi iteration on the working
/// matrix (preconditioned or not), then the host-side finish.
pub fn svd_with<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    a: DenseView<'_, T>,
    opts: &SvdOptions,
) -> Result<SvdResult<T>> {
    let p = Problem::new::<T>(a, opts)?;
    if p.cols == 0 {
        return Ok(p.empty_result());
    }
    p.check_memory(k)?;
    let mut trace = Trace::new(opts.trace);
    let work = match p.method {
        SvdPrecondition::None => jacobi_plain(k, a, &p, &mut trace)?,
        SvdPrecondition::Qr | SvdPrecondition::QrLq => jacobi_preconditioned(k, a, &p, &mut trace)?,
    };
    let mut out = finish_work(k, &p, work, &mut trace)?;
    out.phases = trace.phases;
    Ok(out)
}

/// One SVD problem as the driver sees it: `A`'s shape, the working shape (`rows ≥ cols`,
/// transposed when `m < n`), the method, the threshold and the power-of-two scale.
struct Problem<'o> {
    m: usize,
    n: usize,
    transposed: bool,
    rows: usize,
    cols: usize,
    method: SvdPrecondition,
    tol: f64,
    scale: f64,
    opts: &'o SvdOptions,
}

impl<'o> Problem<'o> {
    /// Checks `a` (finite entries) and the options (a positive finite threshold) and resolves
    /// the automatic choices.
    fn new<T: Scalar>(a: DenseView<'_, T>, opts: &'o SvdOptions) -> Result<Self> {
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
        Ok(Self {
            m,
            n,
            transposed,
            rows,
            cols,
            method,
            tol,
            scale: working_scale::<T>(fro),
            opts,
        })
    }

    /// Whether `U` and `V` are formed.
    fn vectors(&self) -> bool {
        self.opts.vectors != Vectors::None
    }

    /// What the sweeps are asked to do.
    fn params(&self) -> JacobiParams {
        JacobiParams {
            tol: self.tol,
            max_sweeps: self.opts.max_sweeps,
            block: self.opts.block_size,
            row_chunks: self.opts.row_chunks,
        }
    }

    /// The result for an empty matrix (no singular values; see the module documentation).
    fn empty_result<T: Scalar>(&self) -> SvdResult<T> {
        let (m, n) = (self.m, self.n);
        let eye = |d: usize| Dense::from_fn(d, d, |i, j| T::from_f64((i == j) as u8 as f64));
        let (u, vt) = match self.opts.vectors {
            Vectors::None => (None, None),
            Vectors::Thin => (Some(Dense::zeros(m, 0)), Some(Dense::zeros(0, n))),
            Vectors::Full => (Some(eye(m)), Some(eye(n))),
        };
        SvdResult {
            s: Vec::new(),
            u,
            vt,
            sweeps: 0,
            off: 0.0,
            converged: true,
            precondition: self.method,
            tol: self.tol,
            phases: Vec::new(),
        }
    }

    /// Refuses, before any work, a problem that does not fit the host's or the device's
    /// memory.
    fn check_memory<T: Scalar, K: SvdKernels<T>>(&self, k: &K) -> Result<()> {
        let (m, n, rows, cols, method) = (self.m, self.n, self.rows, self.cols, self.method);
        let want = self.opts.vectors;
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
        let extra = match method {
            SvdPrecondition::None => 0,
            // (A kept for U Σ = A V: rows × cols more.)
            _ => 5 * rows * cols + 3 * cols * cols,
        };
        check_memory(
            k,
            rows * cols
                + if self.vectors() {
                    cols * cols + rows * cols
                } else {
                    0
                }
                + extra,
            &format!("SVD of {m} x {n} ({method:?})"),
        )
    }
}

/// The working space after the Jacobi iteration: the rotated working matrix `U·Σ` (`rows ×
/// cols`), `V` (`cols × cols`) when vectors are formed, and the singular values when known
/// already (else `w`'s column norms).
struct Work<M> {
    stats: JacobiStats,
    w: M,
    v: Option<M>,
    sigma: Option<Vec<f64>>,
}

/// Method `None`: one-sided Jacobi on the working matrix itself.
fn jacobi_plain<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    a: DenseView<'_, T>,
    p: &Problem<'_>,
    trace: &mut Trace,
) -> Result<Work<K::Mat>> {
    let mut w = k.mat_from_rows(a, p.transposed, p.scale)?;
    let mut v = if p.vectors() {
        Some(k.mat_identity(p.cols, p.cols)?)
    } else {
        None
    };
    trace.phase(k, || "host prepare + upload".into())?;
    let stats = k.jacobi(&mut w, v.as_mut(), &p.params())?;
    trace.phase(k, || format!("jacobi ({} sweeps)", stats.sweeps))?;
    Ok(Work {
        stats,
        w,
        v,
        sigma: None,
    })
}

/// Methods `Qr` and `QrLq`: the QR(s), Jacobi on `J` (`R`, or `L = R₂ᵀ`), then `V` and `U Σ`
/// ([`qr_vectors`]).
fn jacobi_preconditioned<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    a: DenseView<'_, T>,
    p: &Problem<'_>,
    trace: &mut Trace,
) -> Result<Work<K::Mat>> {
    let (rows, cols) = (p.rows, p.cols);
    let mut w = k.mat_from_rows(a, p.transposed, p.scale)?;
    // A, kept for U Σ = A V (below).
    let a_kept = if p.vectors() {
        Some(k.mat_pad(&w, rows)?)
    } else {
        None
    };
    trace.phase(k, || "host prepare + upload".into())?;
    let rot1 = k.givens_qr(&mut w, resolve(k, p.opts.qr_order, rows, cols))?;
    trace.phase(k, || "qr".into())?;
    let (mut j, second) = if p.method == SvdPrecondition::Qr {
        (k.mat_top(&w, cols, true)?, None)
    } else {
        let (l, rot2, perm) = second_qr(k, &w, p)?;
        (l, Some((rot2, perm)))
    };
    drop(w);
    let mut v = if p.vectors() {
        Some(k.mat_identity(cols, cols)?)
    } else {
        None
    };
    trace.phase(k, || "R (QR2: second QR)".into())?;
    let stats = k.jacobi(&mut j, v.as_mut(), &p.params())?;
    trace.phase(k, || format!("jacobi ({} sweeps)", stats.sweeps))?;
    match (a_kept, v) {
        (Some(a_kept), Some(v)) => {
            let v = v_of_second_qr(k, v, second, cols)?;
            qr_vectors(k, p, stats, a_kept, &rot1, j, v, trace)
        }
        _ => Ok(Work {
            stats,
            w: j,
            v: None,
            sigma: None,
        }),
    }
}

/// QR2's second QR: `Rᵀ` with its rows (`R`'s columns) in descending norm order, `Π Rᵀ = Q₂
/// R₂`; returns `L = R₂ᵀ`, the rotations of `Q₂` and `Π` (row `i` of `Π Rᵀ` is column
/// `perm[i]` of `R`). The second QR of a row-graded matrix keeps its small rows' relative
/// accuracy only when the large rows come first (a huge entry in a middle column otherwise
/// loses every small singular value; LAPACK's xGEJSV pivots for the same reason).
fn second_qr<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    w: &K::Mat,
    p: &Problem<'_>,
) -> Result<(K::Mat, K::Rotations, Vec<usize>)> {
    let (rows, cols) = (p.rows, p.cols);
    let r = upper(rows, cols, &k.mat_download(w)?);
    let perm = descending_column_norms(cols, &r);
    let mut rt = k.mat_upload(cols, cols, &permuted_transpose(cols, &r, &perm))?;
    let rot2 = k.givens_qr(&mut rt, resolve(k, p.opts.qr_order, cols, cols))?;
    let l = transpose_sq(cols, &upper(cols, cols, &k.mat_download(&rt)?));
    Ok((k.mat_upload(cols, cols, &l)?, rot2, perm))
}

/// `V` from Jacobi's `V_L`: for QR2, `V = Πᵀ Q₂ V_L`, the rotations applied to `V_L` in
/// place, then the rows put back in `A`'s column order (on the host: `cols²` values); for
/// QR1 `V_L` itself.
fn v_of_second_qr<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    mut vl: K::Mat,
    second: Option<(K::Rotations, Vec<usize>)>,
    cols: usize,
) -> Result<K::Mat> {
    let Some((rot2, perm)) = second else {
        return Ok(vl);
    };
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
    Ok(vl)
}

/// `U Σ = Q₁ [J; 0] = A V` (`J = R V`, or `L V_L` with `A Q₂ = Q₁ L`). When the singular
/// values (`J`'s column norms) are within [`AV_MAX_COND`] of each other, one product `A V`
/// gives it: each column's error, about `ε σ₁ √cols`, is small against its `σ`. Otherwise
/// the rotations are applied to `J` padded with zero rows, which keeps `U` orthogonal
/// whatever the spread.
#[allow(clippy::too_many_arguments)]
fn qr_vectors<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    p: &Problem<'_>,
    stats: JacobiStats,
    a_kept: K::Mat,
    rot1: &K::Rotations,
    j: K::Mat,
    v: K::Mat,
    trace: &mut Trace,
) -> Result<Work<K::Mat>> {
    let sigma: Vec<f64> = k.column_norms(&j)?.iter().map(|x| x.wide()).collect();
    let (lo, hi) = sigma
        .iter()
        .fold((f64::INFINITY, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    trace.phase(k, || "J's column norms".into())?;
    if hi > 0.0 && lo * AV_MAX_COND >= hi {
        let w = k.mat_mul(&a_kept, &v)?;
        trace.phase(k, || "U = A V".into())?;
        drop(a_kept);
        return Ok(Work {
            stats,
            w,
            v: Some(v),
            sigma: Some(sigma),
        });
    }
    drop(a_kept);
    let mut w = k.mat_pad(&j, p.rows)?;
    trace.phase(k, || "J padded".into())?;
    k.givens_apply_q(rot1, &mut w)?;
    trace.phase(k, || "U = Q1 [J; 0]".into())?;
    Ok(Work {
        stats,
        w,
        v: Some(v),
        sigma: None,
    })
}

/// The singular values from the working space's column norms, then [`finish`], with the
/// iteration's statistics.
fn finish_work<T: Scalar, K: SvdKernels<T>>(
    k: &K,
    p: &Problem<'_>,
    work: Work<K::Mat>,
    trace: &mut Trace,
) -> Result<SvdResult<T>> {
    let norms: Vec<f64> = match work.sigma {
        Some(s) => s,
        None => k
            .column_norms(&work.w)?
            .into_iter()
            .map(|v| v.wide())
            .collect(),
    };
    trace.phase(k, || "norms".into())?;
    let mut out = finish(
        k,
        Finish {
            m: p.m,
            n: p.n,
            transposed: p.transposed,
            scale: p.scale,
            want: p.opts.vectors,
        },
        &norms,
        work.v.as_ref().map(|v| (&work.w, v)),
    )?;
    trace.phase(k, || "U and V".into())?;
    out.sweeps = work.stats.sweeps;
    out.off = work.stats.off;
    out.converged = work.stats.converged;
    out.precondition = p.method;
    out.tol = p.tol;
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
        phases: Vec::new(),
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

//! SVD and QR on the CPU: the device steps of [`trident_core::svd::driver`] on
//! column-major `Vec`s, parallel over rayon.
//!
//! - Jacobi: every sweep starts by ordering the columns by descending norm (de Rijk; fewer
//!   sweeps). The block pairs of one round-robin round then run as parallel tasks; each copies
//!   its `2b` columns into a contiguous scratch `S`, forms the Gram matrix `G = SᵀS` and applies
//!   the accumulated rotation `[W_I W_J] ← S Q` with `matrixmultiply`'s packed SIMD kernels
//!   (through `ndarray`, the base of [`crate::matmul`]), and runs [`INNER_SWEEPS`] Jacobi
//!   sweeps on `G` in between ([`NOISE_INNER_SWEEPS`] for pairs holding rank-deficiency noise),
//!   the disjoint rotations of each inner round batched (rows of `G` and columns of `Q`
//!   contiguous). A pair whose fresh Gram matrix already meets the tolerance is left alone.
//!   The block size grows with the column count ([`default_block`]).
//! - QR (the SVD's preconditioning for tall matrices, and [`Qr`]): blocked Householder
//!   (`crate::householder`, compact WY, trailing updates by `gemm`) for `QrOrder::Householder`
//!   and `Auto` (its trailing updates and `U = Q [J; 0]` run at `gemm` speed, where the
//!   panel-wise Givens rotations make scalar flops with no reuse). Givens when asked for: `QrOrder::Flat`, the GPUs' Sameh–Kuck
//!   rotations panel by panel (`crate::givens`), and `QrOrder::Tree`, the GPUs' tree order
//!   through its host reference, `trident_core::svd::tree`.
//! - After the inner sweeps each pair's accumulated rotation gets one Björck step (the
//!   formula of `trident_core::svd::reorthonormalise`, as on the GPUs, through two `gemm`s).
//! - Rotation angles: the formula of `trident_core::svd::jacobi_rotation` without `hypot`.
//!
//! Dot products accumulate in `T` (see the `trident_core::svd` module docs).

use ndarray::LinalgScalar;
use rayon::prelude::*;
use trident_core::svd::driver::{check_mul, JacobiParams, JacobiStats, SvdKernels};
use trident_core::svd::tree::{tree_apply_q, tree_qr, TreePlan};
use trident_core::svd::{
    negligible_gram, noise_level, round_robin_pair, QrOrder, INNER_SWEEPS, NOISE_INNER_SWEEPS,
};
use trident_core::{
    Algorithm, DenseView, MatMul, MatMulOptions, Qr, QrFactors, QrOptions, Result, Scalar, Svd,
    SvdOptions, SvdResult,
};

use crate::gemm::gemm_cm;
use crate::Cpu;

/// Default columns per Jacobi block on the CPU below [`BLOCK_WIDE_FROM`] columns.
pub const BLOCK: usize = 16;
/// Default columns per Jacobi block from [`BLOCK_WIDE_FROM`] columns on: larger `gemm`s and
/// fewer sweeps on wide matrices.
pub const BLOCK_WIDE: usize = 32;
/// See [`BLOCK_WIDE`].
pub const BLOCK_WIDE_FROM: usize = 512;

/// The default block size for `cols` columns.
pub fn default_block(cols: usize) -> usize {
    if cols >= BLOCK_WIDE_FROM {
        BLOCK_WIDE
    } else {
        BLOCK
    }
}

/// A column-major matrix in "device" (host) memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ColMajor<T> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

/// The factors of a QR: Householder reflectors, or Givens rotations (flat or tree order),
/// `(c, s)` for element `(i, j)` at `cs[2 (j · rows + i)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotations<T> {
    rows: usize,
    /// Columns reduced: `min(rows − 1, cols)`.
    steps: usize,
    /// The plan when the rotations are in the tree order ([`trident_core::svd::tree`]).
    tree: Option<TreePlan>,
    /// The reflectors of the Householder QR, instead of rotations.
    house: Option<crate::householder::House<T>>,
    cs: Vec<T>,
}

impl<T: Scalar + LinalgScalar> Svd<T> for Cpu {
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>> {
        trident_core::svd::svd_with(self, a, opts)
    }
}

impl<T: Scalar + LinalgScalar> Qr<T> for Cpu {
    fn qr(&self, a: DenseView<'_, T>, opts: &QrOptions) -> Result<QrFactors<T>> {
        trident_core::svd::qr_with(self, a, opts)
    }
}

/// `Σ x_i y_i` with eight partial sums (vectorisable without reassociation licence).
#[inline]
fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    let mut acc = [T::zero(); 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: T = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| *a * *b)
        .sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..8 {
            acc[k] += a[k] * b[k];
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// [`trident_core::svd::jacobi_rotation`] without `hypot` (glibc's is slow and guards against
/// overflow that cannot happen here): `√(1 + ζ²)` is formed directly while `|ζ| < 1/√ε` and is
/// `|ζ|` to within `ε / 2` beyond; `t ≤ 1`, so `√(1 + t²)` is safe. Same test, same angle (to
/// an ulp).
#[inline]
fn jacobi_rotation<T: Scalar>(gpp: T, gqq: T, gpq: T, tol: T) -> Option<(T, T)> {
    let tiny = negligible_gram::<T>();
    if !(gpp > tiny && gqq > tiny) || gpq.abs() <= tol * gpp.sqrt() * gqq.sqrt() {
        return None;
    }
    let zeta = (gqq - gpp) / (gpq + gpq);
    let za = zeta.abs();
    let big = T::one() / T::EPS.sqrt();
    let t = if za < big {
        T::one().copysign(zeta) / (za + (T::one() + za * za).sqrt())
    } else {
        // 1 / (2ζ), formed without ζ: on graded matrices ζ itself can overflow
        gpq / (gqq - gpp)
    };
    let c = T::one() / (T::one() + t * t).sqrt();
    Some((c, c * t))
}

/// One Björck step `Q ← Q (3I − QᵀQ) / 2` on the column-major `p × p` accumulated rotation,
/// as [`trident_core::svd::reorthonormalise`] but through two small `gemm`s (`s`, `m` are
/// `p × p` scratch, `out` receives the result).
fn reorthonormalise<T: Scalar + LinalgScalar>(q: &[T], p: usize, s: &mut [T], out: &mut [T]) {
    gemm_cm((p, p, p), q, p, true, q, p, s, p);
    let (half, three_half) = (T::from_f64(0.5), T::from_f64(1.5));
    for (k, x) in s.iter_mut().enumerate() {
        let diag = k % (p + 1) == 0;
        *x = if diag { three_half } else { T::zero() } - *x * half;
    }
    gemm_cm((p, p, p), q, p, false, s, p, out, p);
}

/// The rotation pairs of the inner Jacobi sweep on `p` columns: round-robin rounds of
/// disjoint pairs (pairs with the padding column dropped).
type Rounds = Vec<Vec<(usize, usize)>>;

/// [`Rounds`] for `p` columns.
fn inner_order(p: usize) -> Rounds {
    let pe = p + p % 2;
    (0..pe.saturating_sub(1))
        .map(|r| {
            (0..pe / 2)
                .map(|k| round_robin_pair(pe, r, k))
                .filter(|&(_, y)| y < p)
                .collect()
        })
        .collect()
}

/// [`INNER_SWEEPS`] cyclic Jacobi sweeps on the symmetric `p × p` Gram matrix `g`
/// (row-major), accumulating the rotations into `q` (column-major: `Q`'s column `x` is
/// `q[x p .. (x + 1) p]`).
///
/// The pairs of one round are disjoint, so their rotations commute and each one's angle
/// depends only on entries the others leave alone: the round's angles are computed first
/// (independent square roots and divisions, which pipeline), then applied as `G ← JᵀG`
/// (contiguous row pairs), `G ← G J` (column pairs within each row) and `Q ← Q J`, and each
/// pair's 2 × 2 corner is set to its exact diagonal form. The same rotations as one at a
/// time; `g` stays symmetric up to rounding (the angles read the upper triangle).
fn inner_jacobi<T: Scalar>(
    g: &mut [T],
    q: &mut [T],
    p: usize,
    (tol, sweeps): (T, usize),
    rounds: &Rounds,
) {
    let mut rot: Vec<(usize, usize, T, T)> = Vec::with_capacity(p / 2 + 1);
    let mut corner: Vec<(T, T)> = Vec::with_capacity(p / 2 + 1);
    for _ in 0..sweeps {
        for round in rounds {
            rot.clear();
            corner.clear();
            for &(x, y) in round {
                let (gxx, gyy, gxy) = (g[x * p + x], g[y * p + y], g[x * p + y]);
                if let Some((c, s)) = jacobi_rotation(gxx, gyy, gxy, tol) {
                    // the new diagonal of the 2 × 2 corner (the symmetric form of the
                    // column-then-row update)
                    let (a, b) = (c * gxx - s * gxy, s * gxx + c * gxy);
                    let (cc, d) = (c * gxy - s * gyy, s * gxy + c * gyy);
                    rot.push((x, y, c, s));
                    corner.push((c * a - s * cc, s * b + c * d));
                }
            }
            if rot.is_empty() {
                continue;
            }
            for &(x, y, c, s) in &rot {
                let (lo, hi) = g.split_at_mut(y * p);
                rotate_pair(&mut lo[x * p..x * p + p], &mut hi[..p], c, s);
            }
            for row in g.chunks_exact_mut(p) {
                for &(x, y, c, s) in &rot {
                    let (u, v) = (row[x], row[y]);
                    row[x] = c * u - s * v;
                    row[y] = s * u + c * v;
                }
            }
            for (&(x, y, c, s), &(nxx, nyy)) in rot.iter().zip(&corner) {
                g[x * p + x] = nxx;
                g[y * p + y] = nyy;
                g[x * p + y] = T::zero();
                g[y * p + x] = T::zero();
                let (lo, hi) = q.split_at_mut(y * p);
                rotate_pair(&mut lo[x * p..x * p + p], &mut hi[..p], c, s);
            }
        }
    }
}

/// `(x, y) ← (c x − s y, s x + c y)` elementwise.
#[inline]
fn rotate_pair<T: Scalar>(x: &mut [T], y: &mut [T], c: T, s: T) {
    for (u, v) in x.iter_mut().zip(y.iter_mut()) {
        let (ox, oy) = (*u, *v);
        *u = c * ox - s * oy;
        *v = s * ox + c * oy;
    }
}

/// Copies blocks `bi` and `bj` (column-major, `rows` per column) side by side into `s`.
fn gather<T: Scalar>(bi: &[T], bj: &[T], s: &mut Vec<T>) {
    s.clear();
    s.extend_from_slice(bi);
    s.extend_from_slice(bj);
}

/// `[B_I B_J] ← S Q` for the two blocks (`rows` per column) and `S = [B_I B_J]` (old).
fn scatter<T: Scalar + LinalgScalar>(bi: &mut [T], bj: &mut [T], rows: usize, s: &[T], q: &[T]) {
    let p = s.len() / rows;
    let ni = bi.len() / rows;
    let nj = p - ni;
    gemm_cm((rows, ni, p), s, rows, false, &q[..ni * p], p, bi, rows);
    gemm_cm((rows, nj, p), s, rows, false, &q[ni * p..], p, bj, rows);
}

/// One block pair (`wi`, `wj` and the same columns of `V`, column-major): Gram, inner Jacobi,
/// update. Returns the largest cosine of the fresh Gram matrix.
fn pair_step<T: Scalar + LinalgScalar>(
    (wi, wj): (&mut [T], &mut [T]),
    v: Option<(&mut [T], &mut [T])>,
    (rows, vrows): (usize, usize),
    (tol, noise): (T, T),
    orders: &[Rounds],
) -> f64 {
    if rows == 0 {
        return 0.0;
    }
    let p = (wi.len() + wj.len()) / rows;
    if p < 2 {
        return 0.0;
    }
    let mut s = Vec::with_capacity(rows * p);
    gather(wi, wj, &mut s);
    let mut g = vec![T::zero(); p * p];
    gemm_cm((p, p, rows), &s, rows, true, &s, rows, &mut g, p);
    // Symmetric by construction (g is read as row-major; the upper triangle is kept).
    for a in 0..p {
        for b in 0..a {
            g[a * p + b] = g[b * p + a];
        }
    }
    let mut off = 0.0f64;
    let tiny = negligible_gram::<T>();
    // 1 / √g_aa of the columns that count (0 for negligible ones)
    let inv: Vec<T> = (0..p)
        .map(|a| {
            let ga = g[a * p + a];
            if ga > tiny {
                T::one() / ga.sqrt()
            } else {
                T::zero()
            }
        })
        .collect();
    for a in 0..p {
        for b in a + 1..p {
            let c = g[a * p + b].abs() * inv[a] * inv[b];
            off = off.max(Scalar::to_f64(c));
        }
    }
    if off <= Scalar::to_f64(tol) {
        return off;
    }
    let mut q = vec![T::zero(); p * p];
    for a in 0..p {
        q[a * p + a] = T::one();
    }
    let inner = if (0..p).any(|a| {
        let ga = g[a * p + a];
        ga > tiny && ga <= noise
    }) {
        NOISE_INNER_SWEEPS
    } else {
        INNER_SWEEPS
    };
    inner_jacobi(&mut g, &mut q, p, (tol, inner), &orders[p]);
    // g is free again: the Björck step's scratch
    let mut q2 = vec![T::zero(); p * p];
    reorthonormalise(&q, p, &mut g, &mut q2);
    let q = q2;
    scatter(wi, wj, rows, &s, &q);
    if let Some((vi, vj)) = v {
        if vrows > 0 {
            gather(vi, vj, &mut s);
            scatter(vi, vj, vrows, &s, &q);
        }
    }
    off
}

/// Splits column-major `data` (`rows` per column) into blocks of `b` columns, padded with
/// empty blocks to `nb`.
fn blocks<T>(data: &mut [T], rows: usize, b: usize, nb: usize) -> Vec<Option<&mut [T]>> {
    let mut out: Vec<Option<&mut [T]>> = if rows == 0 {
        Vec::new()
    } else {
        data.chunks_mut(rows * b).map(Some).collect()
    };
    out.resize_with(nb, || Some(<&mut [T]>::default()));
    out
}

/// Permutes the columns of `w` (and the same columns of `v`) into descending norm order (de
/// Rijk's ordering, once per sweep, for fewer sweeps); returns the largest squared column
/// norm.
fn sort_columns<T: Scalar>(w: &mut ColMajor<T>, v: Option<&mut ColMajor<T>>) -> T {
    let rows = w.rows;
    if rows == 0 || w.cols == 0 {
        return T::zero();
    }
    let norms: Vec<T> = w.data.par_chunks(rows).map(|c| dot(c, c)).collect();
    let gmax = norms.iter().fold(T::zero(), |x, &y| x.max(y));
    let mut perm: Vec<usize> = (0..w.cols).collect();
    perm.sort_by(|&a, &b| {
        norms[b]
            .partial_cmp(&norms[a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    if perm.iter().enumerate().all(|(i, &j)| i == j) {
        return gmax;
    }
    let permute = |m: &mut ColMajor<T>| {
        let r = m.rows;
        if r == 0 {
            return;
        }
        let mut out = vec![T::zero(); m.data.len()];
        out.par_chunks_mut(r)
            .zip(&perm)
            .for_each(|(o, &j)| o.copy_from_slice(&m.data[j * r..(j + 1) * r]));
        m.data = out;
    };
    permute(w);
    if let Some(v) = v {
        permute(v);
    }
    gmax
}

impl<T: Scalar + LinalgScalar> SvdKernels<T> for Cpu {
    type Mat = ColMajor<T>;
    type Rotations = Rotations<T>;

    fn mat_shape(&self, a: &ColMajor<T>) -> (usize, usize) {
        (a.rows, a.cols)
    }

    fn mat_upload(&self, rows: usize, cols: usize, cm: &[T]) -> Result<ColMajor<T>> {
        debug_assert_eq!(cm.len(), rows * cols);
        Ok(ColMajor {
            rows,
            cols,
            data: cm.to_vec(),
        })
    }

    fn mat_download(&self, a: &ColMajor<T>) -> Result<Vec<T>> {
        Ok(a.data.clone())
    }

    fn mat_mul(&self, a: &ColMajor<T>, b: &ColMajor<T>) -> Result<ColMajor<T>> {
        check_mul(a.cols, b.rows)?;
        // Column-major C = A B is the row-major Cᵀ = Bᵀ Aᵀ, whose operands are b's and a's
        // values as they lie.
        let bt = DenseView::new(b.cols, b.rows, b.rows.max(1), &b.data)?;
        let at = DenseView::new(a.cols, a.rows, a.rows.max(1), &a.data)?;
        let opts = MatMulOptions::with(Algorithm::Tiled, None);
        let ct = MatMul::<T>::matmul(self, bt, at, &opts)?;
        Ok(ColMajor {
            rows: a.rows,
            cols: b.cols,
            data: ct.into_vec(),
        })
    }

    fn mat_identity(&self, rows: usize, cols: usize) -> Result<ColMajor<T>> {
        let mut data = vec![T::zero(); rows * cols];
        for j in 0..rows.min(cols) {
            data[j * rows + j] = T::one();
        }
        Ok(ColMajor { rows, cols, data })
    }

    fn qr_order(&self, _rows: usize, _cols: usize) -> QrOrder {
        QrOrder::Householder
    }

    fn givens_qr(&self, a: &mut ColMajor<T>, order: QrOrder) -> Result<Rotations<T>> {
        let (m, n) = (a.rows, a.cols);
        let steps = m.saturating_sub(1).min(n);
        if let QrOrder::Tree { panel_rows } = order {
            // The host reference of the GPU kernels, sequential.
            let plan = TreePlan::new(m, n, panel_rows);
            let mut cs = vec![T::zero(); 2 * m * n];
            tree_qr(&plan, &mut a.data, &mut cs);
            return Ok(Rotations {
                rows: m,
                steps,
                tree: Some(plan),
                house: None,
                cs,
            });
        }
        if order == QrOrder::Flat {
            let cs = crate::givens::qr(&mut a.data, m, n, steps);
            return Ok(Rotations {
                rows: m,
                steps,
                tree: None,
                house: None,
                cs,
            });
        }
        let house = crate::householder::qr(&mut a.data, m, n);
        Ok(Rotations {
            rows: m,
            steps,
            tree: None,
            house: Some(house),
            cs: Vec::new(),
        })
    }

    fn givens_apply_q(&self, rot: &Rotations<T>, q: &mut ColMajor<T>) -> Result<()> {
        let m = rot.rows;
        if m == 0 || q.cols == 0 {
            return Ok(());
        }
        if let Some(plan) = &rot.tree {
            tree_apply_q(plan, &rot.cs, &mut q.data, q.cols);
            return Ok(());
        }
        match &rot.house {
            Some(h) => crate::householder::apply_q(h, &mut q.data, q.cols),
            None => crate::givens::apply_q(&rot.cs, rot.steps, m, &mut q.data, q.cols),
        }
        Ok(())
    }

    fn jacobi(
        &self,
        w: &mut ColMajor<T>,
        mut v: Option<&mut ColMajor<T>>,
        p: &JacobiParams,
    ) -> Result<JacobiStats> {
        let (rows, cols) = (w.rows, w.cols);
        let b = p
            .block
            .unwrap_or_else(|| default_block(cols))
            .clamp(1, cols.div_ceil(2).max(1));
        let nreal = cols.div_ceil(b);
        let nb = (nreal + nreal % 2).max(2);
        let tol = T::from_f64(p.tol);
        let orders: Vec<Rounds> = (0..=2 * b).map(inner_order).collect();
        let mut stats = JacobiStats {
            sweeps: 0,
            off: 0.0,
            converged: false,
        };
        while stats.sweeps < p.max_sweeps {
            let gmax = sort_columns(w, v.as_deref_mut());
            let noise = gmax * noise_level::<T>();
            stats.sweeps += 1;
            let mut off = 0.0f64;
            for r in 0..nb - 1 {
                let mut wb = blocks(&mut w.data, rows, b, nb);
                let mut vb = v.as_deref_mut().map(|v| blocks(&mut v.data, v.rows, b, nb));
                let tasks: Vec<_> = (0..nb / 2)
                    .map(|k| {
                        let (i, j) = round_robin_pair(nb, r, k);
                        let wc = (
                            wb[i].take().unwrap_or_default(),
                            wb[j].take().unwrap_or_default(),
                        );
                        let vc = vb.as_mut().map(|vb| {
                            (
                                vb[i].take().unwrap_or_default(),
                                vb[j].take().unwrap_or_default(),
                            )
                        });
                        (wc, vc)
                    })
                    .collect();
                let round_off = tasks
                    .into_par_iter()
                    .map(|(wc, vc)| pair_step(wc, vc, (rows, cols), (tol, noise), &orders))
                    .reduce(|| 0.0, f64::max);
                off = off.max(round_off);
            }
            stats.off = off;
            if off <= p.tol {
                stats.converged = true;
                break;
            }
        }
        Ok(stats)
    }

    fn column_norms(&self, w: &ColMajor<T>) -> Result<Vec<T>> {
        if w.rows == 0 {
            return Ok(vec![T::zero(); w.cols]);
        }
        Ok(w.data
            .par_chunks(w.rows)
            .map(|c| {
                T::from_f64(
                    c.iter()
                        .map(|&v| Scalar::to_f64(v).powi(2))
                        .sum::<f64>()
                        .sqrt(),
                )
            })
            .collect())
    }

    fn memory_bytes(&self) -> Option<u64> {
        crate::memory::physical_memory()
    }
}

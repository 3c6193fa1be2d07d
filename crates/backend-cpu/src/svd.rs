//! SVD and Givens QR on the CPU: the device steps of [`trident_core::svd::driver`] on
//! column-major `Vec`s, parallel over rayon.
//!
//! - Jacobi: the block pairs of one round-robin round run as parallel tasks; each forms its
//!   `2b × 2b` Gram matrix over cache-sized row chunks ([`pair_gram`], the one function to
//!   switch to a tiled matmul), runs [`INNER_SWEEPS`] Jacobi sweeps on it and applies the
//!   accumulated rotation to the pair's columns of `W` and `V`.
//! - Givens QR: the same rotations as the GPUs' Sameh–Kuck order, applied panel by panel:
//!   the rotations that zero a panel of columns are generated in order, then applied to every
//!   trailing column in parallel (each column independently, so one pass over it per panel).
//! - Dot products accumulate in `T` (see the `trident_core::svd` module docs).

use rayon::prelude::*;
use trident_core::svd::driver::{JacobiParams, JacobiStats, SvdKernels};
use trident_core::svd::{jacobi_rotation, negligible_gram, round_robin_pair, INNER_SWEEPS};
use trident_core::{
    DenseView, Qr, QrFactors, QrOptions, Result, Scalar, Svd, SvdOptions, SvdResult,
};

use crate::Cpu;

/// Default columns per Jacobi block on the CPU.
pub const BLOCK: usize = 16;
/// Rows per chunk in the Gram and update loops (a `2b ×` chunk stays in L1/L2).
const CHUNK: usize = 256;
/// Columns per Givens panel.
const PANEL: usize = 16;

/// A column-major matrix in "device" (host) memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ColMajor<T> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

/// The rotations of a Givens QR: `(c, s)` for element `(i, j)` at `cs[2 (j · rows + i)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotations<T> {
    rows: usize,
    /// Columns reduced: `min(rows − 1, cols)`.
    steps: usize,
    cs: Vec<T>,
}

impl<T: Scalar> Svd<T> for Cpu {
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>> {
        trident_core::svd::svd_with(self, a, opts)
    }
}

impl<T: Scalar> Qr<T> for Cpu {
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

/// The Givens rotation `(c, s, r)` with `[c s; −s c] [a; b] = [r; 0]`. The pair is first
/// scaled by `max(|a|, |b|)`: with subnormal inputs, `a / hypot(a, b)` would be quantised and
/// the rotation not orthogonal (the kernels do the same).
#[inline]
fn givens<T: Scalar>(a: T, b: T) -> (T, T, T) {
    let scale = a.abs().max(b.abs());
    if b == T::zero() || scale.is_nan() || scale <= T::zero() {
        return (T::one(), T::zero(), a);
    }
    let (x, y) = (a / scale, b / scale);
    let r = x.hypot(y);
    (x / r, y / r, r * scale)
}

/// The Gram matrix `G = Xᵀ X` (`p × p`, row-major) of the block pair's columns `x`: the
/// one place the CPU forms it (a tiled matmul could replace this).
fn pair_gram<T: Scalar>(x: &[&mut [T]], rows: usize) -> Vec<T> {
    let p = x.len();
    let mut g = vec![T::zero(); p * p];
    let mut r0 = 0;
    while r0 < rows {
        let r1 = (r0 + CHUNK).min(rows);
        for a in 0..p {
            for b in a..p {
                g[a * p + b] += dot(&x[a][r0..r1], &x[b][r0..r1]);
            }
        }
        r0 = r1;
    }
    for a in 0..p {
        for b in 0..a {
            g[a * p + b] = g[b * p + a];
        }
    }
    g
}

/// `X ← X Q` for the `p` columns `x` (length `rows`) and `Q` (`p × p`, row-major), by row
/// chunks through a scratch buffer.
fn apply_right<T: Scalar>(x: &mut [&mut [T]], rows: usize, q: &[T]) {
    let p = x.len();
    let mut tmp = vec![T::zero(); CHUNK * p];
    let mut r0 = 0;
    while r0 < rows {
        let r1 = (r0 + CHUNK).min(rows);
        let len = r1 - r0;
        tmp[..len * p].fill(T::zero());
        for (b, col) in x.iter().enumerate() {
            let src = &col[r0..r1];
            for a in 0..p {
                let f = q[b * p + a];
                if f != T::zero() {
                    let out = &mut tmp[a * len..(a + 1) * len];
                    for (o, s) in out.iter_mut().zip(src) {
                        *o += *s * f;
                    }
                }
            }
        }
        for (a, col) in x.iter_mut().enumerate() {
            col[r0..r1].copy_from_slice(&tmp[a * len..(a + 1) * len]);
        }
        r0 = r1;
    }
}

/// One block pair: Gram, inner Jacobi, update. Returns the largest cosine of the fresh Gram.
fn pair_step<T: Scalar>(
    mut w: Vec<&mut [T]>,
    mut v: Vec<&mut [T]>,
    rows: usize,
    vrows: usize,
    tol: T,
) -> f64 {
    let p = w.len();
    if p < 2 {
        return 0.0;
    }
    let mut g = pair_gram(&w, rows);
    let mut off = 0.0f64;
    let tiny = negligible_gram::<T>();
    for a in 0..p {
        for b in a + 1..p {
            let (ga, gb) = (g[a * p + a], g[b * p + b]);
            if ga > tiny && gb > tiny {
                let c = g[a * p + b].abs() / (ga.sqrt() * gb.sqrt());
                off = off.max(Scalar::to_f64(c));
            }
        }
    }
    if off <= Scalar::to_f64(tol) {
        return off;
    }
    let mut q = vec![T::zero(); p * p];
    for a in 0..p {
        q[a * p + a] = T::one();
    }
    let pe = p + p % 2;
    for _ in 0..INNER_SWEEPS {
        for r in 0..pe - 1 {
            for k in 0..pe / 2 {
                let (x, y) = round_robin_pair(pe, r, k);
                if y >= p {
                    continue;
                }
                let Some((c, s)) = jacobi_rotation(g[x * p + x], g[y * p + y], g[x * p + y], tol)
                else {
                    continue;
                };
                for l in 0..p {
                    let (gx, gy) = (g[l * p + x], g[l * p + y]);
                    g[l * p + x] = c * gx - s * gy;
                    g[l * p + y] = s * gx + c * gy;
                    let (qx, qy) = (q[l * p + x], q[l * p + y]);
                    q[l * p + x] = c * qx - s * qy;
                    q[l * p + y] = s * qx + c * qy;
                }
                for l in 0..p {
                    let (gx, gy) = (g[x * p + l], g[y * p + l]);
                    g[x * p + l] = c * gx - s * gy;
                    g[y * p + l] = s * gx + c * gy;
                }
                g[x * p + y] = T::zero();
                g[y * p + x] = T::zero();
            }
        }
    }
    apply_right(&mut w, rows, &q);
    if !v.is_empty() {
        apply_right(&mut v, vrows, &q);
    }
    off
}

/// Splits column-major `data` (`rows` per column) into blocks of `b` columns, each as a list
/// of column slices, padded with empty blocks to `nb`.
fn blocks<T>(data: &mut [T], rows: usize, b: usize, nb: usize) -> Vec<Option<Vec<&mut [T]>>> {
    let mut out: Vec<Option<Vec<&mut [T]>>> = if rows == 0 {
        Vec::new()
    } else {
        data.chunks_mut(rows * b)
            .map(|blk| Some(blk.chunks_mut(rows).collect()))
            .collect()
    };
    out.resize_with(nb, || Some(Vec::new()));
    out
}

impl<T: Scalar> SvdKernels<T> for Cpu {
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

    fn mat_identity(&self, rows: usize, cols: usize) -> Result<ColMajor<T>> {
        let mut data = vec![T::zero(); rows * cols];
        for j in 0..rows.min(cols) {
            data[j * rows + j] = T::one();
        }
        Ok(ColMajor { rows, cols, data })
    }

    fn mat_mul(&self, a: &ColMajor<T>, b: &ColMajor<T>) -> Result<ColMajor<T>> {
        let (m, kk, n) = (a.rows, a.cols, b.cols);
        let mut data = vec![T::zero(); m * n];
        if m > 0 {
            // 8 output columns per task: each column of A is read once per task.
            data.par_chunks_mut(m * 8).enumerate().for_each(|(t, out)| {
                let j0 = t * 8;
                for l in 0..kk {
                    let acol = &a.data[l * m..(l + 1) * m];
                    for (jj, oc) in out.chunks_mut(m).enumerate() {
                        let f = b.data[(j0 + jj) * kk + l];
                        if f != T::zero() {
                            for (o, x) in oc.iter_mut().zip(acol) {
                                *o += *x * f;
                            }
                        }
                    }
                }
            });
        }
        Ok(ColMajor {
            rows: m,
            cols: n,
            data,
        })
    }

    fn givens_qr(&self, a: &mut ColMajor<T>) -> Result<Rotations<T>> {
        let (m, n) = (a.rows, a.cols);
        let steps = m.saturating_sub(1).min(n);
        let mut cs = vec![T::zero(); 2 * m * steps];
        let mut j0 = 0;
        while j0 < steps {
            let j1 = (j0 + PANEL).min(steps);
            // Generate the panel's rotations column by column (each column first receives the
            // panel's earlier rotations).
            for j in j0..j1 {
                let col = &mut a.data[j * m..(j + 1) * m];
                for jp in j0..j {
                    apply_chain(col, &cs[2 * jp * m..2 * (jp + 1) * m], jp, m);
                }
                for i in (j + 1..m).rev() {
                    let (c, s, r) = givens(col[i - 1], col[i]);
                    col[i - 1] = r;
                    col[i] = T::zero();
                    cs[2 * (j * m + i)] = c;
                    cs[2 * (j * m + i) + 1] = s;
                }
            }
            // Apply them to every trailing column.
            let cs_panel = &cs[2 * j0 * m..2 * j1 * m];
            a.data[j1 * m..].par_chunks_mut(m).for_each(|col| {
                for (t, jp) in (j0..j1).enumerate() {
                    apply_chain(col, &cs_panel[2 * t * m..2 * (t + 1) * m], jp, m);
                }
            });
            j0 = j1;
        }
        Ok(Rotations { rows: m, steps, cs })
    }

    fn givens_apply_q(&self, rot: &Rotations<T>, q: &mut ColMajor<T>) -> Result<()> {
        let m = rot.rows;
        if m == 0 || q.cols == 0 {
            return Ok(());
        }
        // Q q = G₁ᵀ ⋯ G_Kᵀ q: the last rotation first, each transposed; 8 columns per task.
        q.data.par_chunks_mut(m * 8).for_each(|cols| {
            for j in (0..rot.steps).rev() {
                let cs = &rot.cs[2 * j * m..2 * (j + 1) * m];
                for col in cols.chunks_mut(m) {
                    for i in j + 1..m {
                        let (c, s) = (cs[2 * i], cs[2 * i + 1]);
                        let (x, y) = (col[i - 1], col[i]);
                        col[i - 1] = c * x - s * y;
                        col[i] = s * x + c * y;
                    }
                }
            }
        });
        Ok(())
    }

    fn jacobi(
        &self,
        w: &mut ColMajor<T>,
        mut v: Option<&mut ColMajor<T>>,
        p: &JacobiParams,
    ) -> Result<JacobiStats> {
        let (rows, cols) = (w.rows, w.cols);
        let b = p.block.unwrap_or(BLOCK).clamp(1, cols.div_ceil(2).max(1));
        let nreal = cols.div_ceil(b);
        let nb = (nreal + nreal % 2).max(2);
        let tol = T::from_f64(p.tol);
        let mut stats = JacobiStats {
            sweeps: 0,
            off: 0.0,
            converged: false,
        };
        while stats.sweeps < p.max_sweeps {
            stats.sweeps += 1;
            let mut off = 0.0f64;
            for r in 0..nb - 1 {
                let mut wb = blocks(&mut w.data, rows, b, nb);
                let mut vb = match v.as_deref_mut() {
                    Some(v) => blocks(&mut v.data, v.rows, b, nb),
                    None => (0..nb).map(|_| Some(Vec::new())).collect(),
                };
                let tasks: Vec<_> = (0..nb / 2)
                    .map(|k| {
                        let (i, j) = round_robin_pair(nb, r, k);
                        let mut wc = wb[i].take().unwrap_or_default();
                        wc.extend(wb[j].take().unwrap_or_default());
                        let mut vc = vb[i].take().unwrap_or_default();
                        vc.extend(vb[j].take().unwrap_or_default());
                        (wc, vc)
                    })
                    .collect();
                let round_off = tasks
                    .into_par_iter()
                    .map(|(wc, vc)| pair_step(wc, vc, rows, cols, tol))
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
            .map(|c| dot(c, c).sqrt())
            .collect())
    }

    fn memory_bytes(&self) -> Option<u64> {
        crate::memory::physical_memory()
    }
}

/// Applies column `jp`'s rotation chain (`cs` for rows `jp + 1 ..`, bottom first) to `col`.
#[inline]
fn apply_chain<T: Scalar>(col: &mut [T], cs: &[T], jp: usize, m: usize) {
    for i in (jp + 1..m).rev() {
        let (c, s) = (cs[2 * i], cs[2 * i + 1]);
        let (x, y) = (col[i - 1], col[i]);
        col[i - 1] = c * x + s * y;
        col[i] = c * y - s * x;
    }
}

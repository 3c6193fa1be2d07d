//! The pure parts of one-sided block Jacobi, shared by every backend and mirrored by the
//! GPU kernels: the round-robin pair order, the rotation of one column pair, the Björck step
//! that keeps a block pair's accumulated rotation orthogonal, the negligible-column
//! threshold, and the block layout ([`JacobiPlan`]) with what the driver asks of a
//! backend's sweeps ([`JacobiParams`]) and what it reports ([`JacobiStats`]).

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Pair `k` (of `nb / 2`) in round `r` (of `nb − 1`) of the round-robin tournament on `nb`
/// players (`nb` even): `(r, nb − 1)` for `k = 0`, else `((r + k) mod (nb − 1), (r − k) mod
/// (nb − 1))`, smaller first. The pairs of a round are disjoint, and the partners of player
/// `i ≠ nb − 1` satisfy `i + j ≡ 2r (mod nb − 1)`: the anti-diagonal ordering. The GPU kernels
/// compute the same function.
pub fn round_robin_pair(nb: usize, r: usize, k: usize) -> (usize, usize) {
    debug_assert!(nb >= 2 && nb.is_multiple_of(2) && r + 1 < nb && k < nb / 2);
    let m = nb - 1;
    let (i, j) = if k == 0 {
        (r, m)
    } else {
        ((r + k) % m, (r + m - k) % m)
    };
    (i.min(j), i.max(j))
}

/// The Jacobi rotation `(c, s)` that makes columns `p`, `q` with Gram entries `g_pp`, `g_qq`,
/// `g_pq` orthogonal by `a_p' = c a_p − s a_q`, `a_q' = s a_p + c a_q`, or `None` when the
/// pair already is: `|g_pq| ≤ tol √g_pp √g_qq`, or a column is negligible
/// ([`negligible_gram`]). `t = sign(ζ) / (|ζ| + √(1 + ζ²))` with `ζ = (g_qq − g_pp) /
/// (2 g_pq)`, the smaller angle (`1 / (2ζ) = g_pq / (g_qq − g_pp)`, the same to working
/// precision, past `|ζ| = 10¹⁵`, where `ζ²` (or, on graded matrices, `ζ` itself) could
/// overflow), and `c = 1 / √(1 + t²)`. The GPU kernels compute the
/// same formula (`c` by `rsqrt`, within an ulp or two).
pub fn jacobi_rotation<T: Scalar>(gpp: T, gqq: T, gpq: T, tol: T) -> Option<(T, T)> {
    let tiny = negligible_gram::<T>();
    if !(gpp > tiny && gqq > tiny) || gpq.abs() <= tol * gpp.sqrt() * gqq.sqrt() {
        return None;
    }
    let one = T::one();
    let two = one + one;
    let zeta = (gqq - gpp) / (two * gpq);
    let t = if zeta.abs() > T::from_f64(1e15) {
        // 1 / (2ζ), formed without ζ: on graded matrices ζ itself can overflow.
        gpq / (gqq - gpp)
    } else {
        one.copysign(zeta) / (zeta.abs() + (one + zeta * zeta).sqrt())
    };
    let c = one / (one + t * t).sqrt();
    Some((c, c * t))
}

/// One Björck step `Q ← Q (3I − QᵀQ) / 2` on the column-major `p × p` accumulated rotation
/// of a block pair (column `x` is `q[x p .. (x + 1) p]`), computed in `T`. The product of the
/// up to `NOISE_INNER_SWEEPS · (2b − 1) · b` rotations drifts from orthogonality by about one
/// rounding per rotation a column took part in; applied `nb − 1` times per sweep to `V`, that
/// drift dominated `max |V Vᵀ − I|` (f32 on PoCL, random square: 48 ε at n = 128, 122 ε at
/// 256, 291 ε at 512, 567 ε at 1024; f64 62 ε and 97 ε at 128 and 256). After the step
/// `QᵀQ − I` is `O(√(2b) ε)` and the same matrices give 10 ε, 21 ε, 38 ε (f64: 16 ε, 16 ε). Every backend runs it (the kernels: `REORTH` in kernels/opencl/svd.cl).
pub fn reorthonormalise<T: Scalar>(q: &mut [T], p: usize) {
    debug_assert_eq!(q.len(), p * p);
    let mut s = vec![T::zero(); p * p];
    for x in 0..p {
        for y in 0..p {
            s[x * p + y] = (0..p).fold(T::zero(), |acc, t| acc + q[x * p + t] * q[y * p + t]);
        }
    }
    let three = T::from_f64(3.0);
    let two = T::from_f64(2.0);
    let mut out = vec![T::zero(); p * p];
    for a in 0..p {
        for t in 0..p {
            let v = (0..p).fold(T::zero(), |acc, y| {
                let m = if y == a { three } else { T::zero() } - s[y * p + a];
                acc + q[y * p + t] * m
            });
            out[a * p + t] = v / two;
        }
    }
    q.copy_from_slice(&out);
}

/// Squared column norms at or below this count as zero columns: they are never rotated nor
/// tested for convergence, and [`driver`](crate::svd::driver) gives them singular value 0 and a completed `U`
/// column. `min_positive / √ε` (f32: 2^-114.5, about 3.4e-35; f64: 2^-996, about 1.5e-300):
/// the smallest normal number with a margin, so that a Gram entry of two columns above it
/// carries at most `rows · 2^-149` (f32) of absolute error from subnormal products, a cosine
/// error far below any tolerance. The driver scales the matrix by a power of two so that its
/// Frobenius norm squared lies just below the largest finite value
/// ([`working_scale`](crate::svd::driver::working_scale)): columns are zeroed only when their norm is below about
/// `2^-119` (f32, 1.5e-36) or `2^-1008` (f64, 1e-303) of `‖A‖_F`, i.e. only where their squares cannot be
/// represented at all, and every singular value a relatively accurate Jacobi can resolve
/// (graded matrices, one entry far larger than the rest) is kept. The GPU kernels take the
/// same constant from the host.
pub fn negligible_gram<T: Scalar>() -> T {
    T::min_positive_value() / T::EPS.sqrt()
}

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
    /// The figures behind these constants: `benches/results/history/`.
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

/// What [`SvdKernels::jacobi`](crate::svd::SvdKernels::jacobi) is asked to do.
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

/// What [`SvdKernels::jacobi`](crate::svd::SvdKernels::jacobi) reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JacobiStats {
    /// Sweeps run, the final checking sweep included.
    pub sweeps: usize,
    /// Largest cosine seen in the last sweep (measured on fresh Gram matrices).
    pub off: f64,
    /// `off ≤ tol` at the last sweep.
    pub converged: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_covers_every_pair_once() {
        for nb in [2usize, 4, 6, 10] {
            let mut seen = vec![vec![0; nb]; nb];
            for r in 0..nb - 1 {
                let mut used = vec![false; nb];
                for k in 0..nb / 2 {
                    let (i, j) = round_robin_pair(nb, r, k);
                    assert!(i < j && !used[i] && !used[j]);
                    used[i] = true;
                    used[j] = true;
                    seen[i][j] += 1;
                }
            }
            for (i, row) in seen.iter().enumerate() {
                for (j, &count) in row.iter().enumerate().skip(i + 1) {
                    assert_eq!(count, 1, "nb {nb} pair ({i}, {j})");
                }
            }
        }
    }

    #[test]
    fn bjorck_step_restores_orthogonality() {
        // a rotation by 0.3 with a perturbation of 1e-6 in every entry
        let (c, s) = (0.3f64.cos(), 0.3f64.sin());
        let mut q = vec![c + 1e-6, s - 1e-6, -s + 1e-6, c + 2e-6];
        reorthonormalise(&mut q, 2);
        let d = |x: usize, y: usize| q[2 * x] * q[2 * y] + q[2 * x + 1] * q[2 * y + 1];
        assert!((d(0, 0) - 1.0).abs() < 1e-11 && (d(1, 1) - 1.0).abs() < 1e-11);
        assert!(d(0, 1).abs() < 1e-11);
    }

    #[test]
    fn rotation_orthogonalises() {
        let (a, b) = ([1.0f64, 2.0, 3.0], [2.0f64, -1.0, 5.0]);
        let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
        let (c, s) = jacobi_rotation(dot(&a, &a), dot(&b, &b), dot(&a, &b), 1e-15).unwrap();
        let ap: Vec<f64> = (0..3).map(|i| c * a[i] - s * b[i]).collect();
        let bp: Vec<f64> = (0..3).map(|i| s * a[i] + c * b[i]).collect();
        assert!(dot(&ap, &bp).abs() < 1e-13);
        assert!(jacobi_rotation(0.0, 1.0, 0.0, 1e-15).is_none());
        assert!(jacobi_rotation(1e300f64, 1e-200, 1e45, 1e-15).is_some());
    }

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

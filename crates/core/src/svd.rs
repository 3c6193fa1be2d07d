//! Singular value decomposition by one-sided block Jacobi, and the Givens QR that
//! preconditions it: the [`Qr`] and [`Svd`] traits, their options, the accuracy contract
//! ([`validity`], [`values_tolerance`]) and the driver that every backend shares
//! ([`driver::svd_with`], [`driver::qr_with`]).
//!
//! # Algorithm (the same on every backend)
//!
//! The matrix is first brought to `rows ≥ cols` (an `m × n` matrix with `m < n` is factored
//! through its transpose) and scaled by an exact power of two so that `‖A‖_F²`, which bounds
//! every squared column norm and Gram entry of every stage, lies just below the largest
//! finite value ([`driver::working_scale`]): no Gram entry can overflow, and the squares of
//! small columns stay above the underflow threshold as far as the exponent range allows (a
//! matrix with one entry `10³⁰` times the rest in f32 keeps its small singular values to
//! full relative accuracy). Then,
//! depending on [`SvdPrecondition`]:
//!
//! - `None`: one-sided Jacobi on the working matrix `W` itself;
//! - `Qr` (QR1): `W = Q₁ R` by Givens rotations, Jacobi on the square `R`, `U Σ = Q₁ [J; 0]`
//!   (`J` the rotated `R`: the rotations are applied to it, `Q₁` is never formed);
//! - `QrLq` (QR2): then `Rᵀ = Q₂ R₂`, Jacobi on `L = R₂ᵀ`, `U = Q₁ U_L`, `V = Q₂ V_L`.
//!
//! With vectors, both QR methods have `U Σ = Q₁ [J; 0] = W V`. When the singular values (the
//! norms of `J`'s columns) lie within a factor [`driver::AV_MAX_COND`] (32) of each other, `U Σ` is
//! that one product, by the backend's tiled matmul kernel: each column's error, about
//! `ε σ₁ √n`, is small against its own `σ` (32768 × 256 f32 on the H100: 1.7 ms against
//! 8.5 ms for the rotations). Measured on the CPU, `max |UᵀU − I|` grows as about `0.9 ε κ`
//! this way (130 × 128, κ = 980: 865 ε), so at κ ≤ 32 it stays below 30 ε, under the
//! smallest orthogonality bound (`4 ε · 32 + 4 ε`) with a margin of four. Otherwise (graded, ill-conditioned or rank-deficient input)
//! the rotations are applied to `J`, which keeps `U` orthogonal whatever the spread. The
//! singular values are `J`'s column norms either way.
//!
//! The QRs take [`SvdOptions::qr_order`]: on GPUs the tree ("TSQR") order of [`tree`] for
//! tall matrices (panels reduced in one launch, merged pairwise in `⌈log₂ P⌉` launches), else
//! the Sameh–Kuck order (two launches per step); the CPU keeps its column-by-column order
//! unless the tree is requested (then it runs [`tree::tree_qr`], the kernels' reference).
//!
//! One-sided block Jacobi splits the columns into blocks of `b` and visits every pair of blocks
//! once per sweep in the round-robin ("anti-diagonal") order of [`round_robin_pair`]: all
//! pairs of one round touch disjoint columns and run in parallel. For each block pair the
//! backend forms the `2b × 2b` Gram matrix `G = [W_I W_J]ᵀ [W_I W_J]`, runs [`INNER_SWEEPS`]
//! cyclic Jacobi sweeps on it (in the same round-robin order inside the pair), accumulating
//! the rotations in `Q`, restores `Q`'s orthogonality by one Björck step
//! ([`reorthonormalise`]: without it the drift of the accumulated product dominated
//! `max |V Vᵀ − I|`), and applies `[W_I W_J] ← [W_I W_J] Q` and `[V_I V_J] ← [V_I V_J] Q`.
//! On GPUs a round is one launch of `nb / 2` work-groups, or, when the pairs are too few to
//! fill the device ([`JacobiPlan::auto_chunks`], [`SvdOptions::row_chunks`]), three: the rows
//! split over several work-groups per pair for the Gram partials, one per pair for the
//! rotation, the rows split again for the update.
//! A column pair is rotated only when `|g_pq| > tol · √g_pp · √g_qq` (see [`jacobi_rotation`]).
//!
//! **Convergence**: a sweep in which every freshly computed block-pair Gram matrix has all
//! off-diagonal cosines `|g_pq| / (√g_pp √g_qq) ≤ tol` changes nothing and ends the
//! iteration; `tol` defaults to `max(rows_J, 32) · ε` (`rows_J` the row count of the matrix
//! Jacobi runs on; see [`TOL_MIN_ROWS`]). The sweep limit is [`SvdOptions::max_sweeps`] (default 40); reaching it is not
//! an error: the result says `converged: false` and gives the largest cosine left
//! ([`SvdResult::off`]), and the CLI warns. [`SvdResult::sweeps`] counts every sweep, the
//! final checking sweep included.
//!
//! Singular values are the column norms of the rotated `W`, sorted descending; `U`'s columns
//! are the normalised columns; columns whose norm is negligible (their squared norm would
//! underflow: see [`negligible_gram`]) get singular value 0 and
//! their `U` columns come from completing the basis (Householder, in f64), so rank-deficient
//! and zero matrices give orthonormal `U` and `V`, never NaN.
//!
//! Dot products are accumulated in `T` on every backend (f32 in f32): the Gram entries only
//! choose rotation angles and test convergence, and the final test is made on freshly
//! computed Gram matrices; the `f64` accumulation would halve the GPU's throughput.
//!
//! # Inputs
//!
//! NaN or infinite entries are an [`Error::Invalid`]. An empty matrix (`m = 0` or `n = 0`)
//! has no singular values: the result has empty `s`, thin `U` of `m × 0` and `Vᵀ` of `0 × n`,
//! full `U = I_m` and `Vᵀ = I_n`, and 0 sweeps.

pub mod basis;
pub mod driver;
pub mod tree;

use crate::backend::Backend;
use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tolerance::Tolerance;
use rayon::prelude::*;

pub use driver::{qr_with, svd_with, JacobiParams, JacobiPlan, JacobiStats, SvdKernels};
pub use tree::{TreePlan, MERGE_PANEL, TREE_PANEL_ROWS};

/// Cyclic Jacobi sweeps run on each block pair's Gram matrix per visit (every backend).
/// A second sweep rarely lowers the outer sweep count and costs a third of the time:
/// CPU, 512² f64: 13–14 sweeps with 1, 2 or 4; H100, 32768 × 256 f32 after QR: 9 sweeps
/// with 1 or 2, Jacobi 6.6 against 9.2 ms (f64: 11 sweeps, 10.6 ms, against 10, 14.1 ms);
/// 2048² f32: 16 sweeps, 225 against 263 ms.
pub const INNER_SWEEPS: usize = 1;

/// Inner sweeps for a pair holding a rank-deficiency noise column: squared norm above the
/// negligible one and at most [`noise_level`] of the largest. Such columns (a rank-deficient
/// matrix's null space, rounding noise) have mutual cosines of `O(1)`; with one inner sweep
/// they took 38 outer sweeps on the conformance suite's 40 × 40 rank-deficient case (over
/// the limit on GPUs), with two 14.
pub const NOISE_INNER_SWEEPS: usize = 2;

/// `ε^1.5`: a column whose squared norm is at most this times the largest squared column
/// norm is rank-deficiency noise (see [`NOISE_INNER_SWEEPS`]).
pub fn noise_level<T: Scalar>() -> T {
    T::EPS * T::EPS.sqrt()
}

/// The default tolerance is `max(rows_J, TOL_MIN_ROWS) · ε`: below `32 ε` the cosines left
/// by applying a product of `2b = 32` rotations are rounding noise, and a tighter test could
/// rotate forever.
pub const TOL_MIN_ROWS: usize = 32;

/// Which orthogonal factors to form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vectors {
    /// None: values (or `R`) only.
    #[default]
    None,
    /// Thin: `U` is `m × k`, `Vᵀ` is `k × n` (`k = min(m, n)`); QR's `Q` is `m × k`.
    Thin,
    /// Full: `U` is `m × m`, `Vᵀ` is `n × n`; QR's `Q` is `m × m`.
    Full,
}

/// The order of a Givens QR's rotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QrOrder {
    /// The backend's choice ([`driver::SvdKernels::qr_order`]): on GPUs [`Self::Tree`] when the
    /// matrix has at least two panels of [`TREE_PANEL_ROWS`] (and of `cols`) rows, else
    /// [`Self::Flat`]; the CPU always takes [`Self::Householder`] (Givens only when asked for).
    #[default]
    Auto,
    /// One rotation sequence over the whole matrix (GPUs: the Sameh–Kuck order, two launches
    /// per step; CPU: the same rotations, column panel by column panel).
    Flat,
    /// Not Givens: blocked Householder reflectors (compact WY, trailing updates by matrix
    /// products), the CPU's automatic choice for the SVD's preconditioning and [`Qr`]: the
    /// same factorisation up to the signs of `R`'s rows, at matrix-product speed. CPU only
    /// (GPUs refuse it with [`crate::Error::Unsupported`]).
    Householder,
    /// The tree ("TSQR") order of [`tree`]: panels of `max(panel_rows, cols)` rows reduced in
    /// one launch, then `⌈log₂ P⌉` merge launches.
    Tree {
        /// Requested panel height (raised to the column count).
        panel_rows: usize,
    },
}

impl QrOrder {
    /// Parses `auto`, `flat`, `householder`, `tree` (panels of [`TREE_PANEL_ROWS`]) or
    /// `tree:ROWS`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto),
            "flat" => Some(Self::Flat),
            "householder" => Some(Self::Householder),
            "tree" => Some(Self::Tree {
                panel_rows: TREE_PANEL_ROWS,
            }),
            t => t
                .strip_prefix("tree:")
                .and_then(|r| r.parse().ok())
                .filter(|&r: &usize| r > 0)
                .map(|panel_rows| Self::Tree { panel_rows }),
        }
    }

    /// The GPUs' automatic choice for `rows × cols` (see [`Self::Auto`]).
    pub fn gpu_auto(rows: usize, cols: usize) -> Self {
        if rows >= 2 * TREE_PANEL_ROWS.max(cols) {
            Self::Tree {
                panel_rows: TREE_PANEL_ROWS,
            }
        } else {
            Self::Flat
        }
    }
}

/// Options for [`Qr`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QrOptions {
    /// Which `Q` to form (default none: `R` only).
    pub q: Vectors,
    /// The rotation order (default [`QrOrder::Auto`]).
    pub order: QrOrder,
}

/// A QR factorization: `A = Q R`, `R` upper trapezoidal.
#[derive(Debug, Clone, PartialEq)]
pub struct QrFactors<T> {
    /// The orthogonal factor, `m × min(m, n)` (thin) or `m × m` (full), if requested.
    pub q: Option<Dense<T>>,
    /// The upper-trapezoidal factor, `min(m, n) × n` (thin or none) or `m × n` (full).
    pub r: Dense<T>,
}

/// QR factorization by Givens rotations, in the order of [`QrOptions::order`]: on GPUs the
/// tree order of [`tree`] for tall matrices (one launch for all panels, one per tree level),
/// else the Sameh–Kuck order (all rotations of one
/// step act on disjoint row pairs and run at once).
pub trait Qr<T: Scalar>: Backend {
    /// Factors `A`; NaN or infinite entries are an [`Error::Invalid`].
    fn qr(&self, a: DenseView<'_, T>, opts: &QrOptions) -> Result<QrFactors<T>>;
}

/// How to precondition one-sided Jacobi SVD (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvdPrecondition {
    /// Jacobi on `A` itself.
    None,
    /// QR1: `A = Q R`, then Jacobi on `R` (fewer sweeps, much less work on tall matrices).
    Qr,
    /// QR2: `A = Q R`, `Rᵀ = Q₂ R₂`, Jacobi on `L = R₂ᵀ` (fewest sweeps; graded matrices).
    QrLq,
}

impl SvdPrecondition {
    /// The automatic choice for a working matrix of `rows ≥ cols`: [`Self::Qr`] when it is at
    /// least twice as tall as wide, else [`Self::None`].
    pub fn auto(rows: usize, cols: usize) -> Self {
        if rows >= 2 * cols.max(1) {
            Self::Qr
        } else {
            Self::None
        }
    }

    /// Parses `none`, `jacobi`, `qr`, `qr1`, `qrlq`, `qr2` (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "jacobi" => Some(Self::None),
            "qr" | "qr1" => Some(Self::Qr),
            "qrlq" | "qr2" => Some(Self::QrLq),
            _ => None,
        }
    }
}

/// Options for [`Svd`].
#[derive(Debug, Clone, PartialEq)]
pub struct SvdOptions {
    /// Preconditioning; `None` (default) picks [`SvdPrecondition::auto`] from the shape.
    pub precondition: Option<SvdPrecondition>,
    /// Convergence: stop when every pair has `|a_i·a_j| ≤ tol ‖a_i‖ ‖a_j‖`.
    /// Default `None` = `max(rows_J, 32) · ε` of the scalar type (`rows_J`: rows of the matrix Jacobi
    /// runs on, i.e. `min(m, n)` after QR preconditioning).
    pub tol: Option<f64>,
    /// Stop after this many sweeps even if not converged (default 40; see
    /// [`SvdResult::converged`]).
    pub max_sweeps: usize,
    /// Columns per block; `None` takes the backend's tuned size (CPU 16, 32 from 512
    /// columns; GPUs their compiled size). GPU backends accept only their compiled size.
    pub block_size: Option<usize>,
    /// Which singular vectors to form (default none: values only).
    pub vectors: Vectors,
    /// The rotation order of the preconditioning QRs (default [`QrOrder::Auto`]).
    pub qr_order: QrOrder,
    /// GPUs: work-groups per block pair, each over a chunk of the rows (`None`: the automatic
    /// choice of [`JacobiPlan::auto_chunks`]; 1: one fused launch per round). The CPU ignores it.
    pub row_chunks: Option<usize>,
}

impl Default for SvdOptions {
    fn default() -> Self {
        Self {
            precondition: None,
            tol: None,
            max_sweeps: 40,
            block_size: None,
            vectors: Vectors::None,
            qr_order: QrOrder::Auto,
            row_chunks: None,
        }
    }
}

/// A singular value decomposition `A = U diag(s) Vᵀ`.
#[derive(Debug, Clone, PartialEq)]
pub struct SvdResult<T> {
    /// Singular values, descending, `min(m, n)` of them.
    pub s: Vec<T>,
    /// Left singular vectors (`m × k` thin, `m × m` full), if requested.
    pub u: Option<Dense<T>>,
    /// Right singular vectors transposed (`k × n` thin, `n × n` full), if requested.
    pub vt: Option<Dense<T>>,
    /// Jacobi sweeps taken, the final checking sweep included.
    pub sweeps: usize,
    /// Largest cosine `|a_i·a_j| / (‖a_i‖ ‖a_j‖)` seen in the last sweep.
    pub off: f64,
    /// False when the sweep limit stopped the iteration before `off ≤ tol`.
    pub converged: bool,
    /// The preconditioning used.
    pub precondition: SvdPrecondition,
    /// The convergence threshold used.
    pub tol: f64,
}

/// One-sided block Jacobi SVD with a parallel pair ordering.
pub trait Svd<T: Scalar>: Backend {
    /// Singular values (and vectors, as requested) of `A`.
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>>;
}

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
/// `QᵀQ − I` is `O(√(2b) ε)` and the same matrices give 10 ε, 21 ε, 38 ε (f64: 16 ε, 16 ε). Every backend runs it (the kernels: `REORTH` in svd.cl / svd.cu).
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
/// tested for convergence, and [`driver`] gives them singular value 0 and a completed `U`
/// column. `min_positive / √ε` (f32: 2^-114.5, about 3.4e-35; f64: 2^-996, about 1.5e-300):
/// the smallest normal number with a margin, so that a Gram entry of two columns above it
/// carries at most `rows · 2^-149` (f32) of absolute error from subnormal products, a cosine
/// error far below any tolerance. The driver scales the matrix by a power of two so that its
/// Frobenius norm squared lies just below the largest finite value
/// ([`driver::working_scale`]): columns are zeroed only when their norm is below about
/// `2^-119` (f32, 1.5e-36) or `2^-1008` (f64, 1e-303) of `‖A‖_F`, i.e. only where their squares cannot be
/// represented at all, and every singular value a relatively accurate Jacobi can resolve
/// (graded matrices, one entry far larger than the rest) is kept. The GPU kernels take the
/// same constant from the host.
pub fn negligible_gram<T: Scalar>() -> T {
    T::min_positive_value() / T::EPS.sqrt()
}

/// Checks that every entry is finite; the error names the first bad one.
pub fn check_finite<T: Scalar>(a: DenseView<'_, T>, what: &str) -> Result<()> {
    for i in 0..a.rows() {
        if let Some(j) = a.row(i).iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "matrix",
                format!(
                    "{what}: entry ({i}, {j}) is {} (NaN and infinite entries are not allowed)",
                    a.get(i, j)
                ),
            ));
        }
    }
    Ok(())
}

/// The tolerance on singular values: `|s_i − s_ref_i| ≤ 10 · ε · min(m, n) · ‖A‖₂` (pass
/// `‖A‖₂` as the scale of [`Tolerance::check`]).
pub fn values_tolerance<T: Scalar>(m: usize, n: usize) -> Tolerance {
    Tolerance::of::<T>(10.0 * m.min(n).max(1) as f64)
}

/// Measured errors of an SVD against its input, and the bounds they must meet (see
/// [`validity`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Validity {
    /// `max |UᵀU − I|` (0 when `U` was not formed); for a full `U` with more columns than
    /// singular values, every entry involving the first `k` columns and random-sign probes of the rest
    /// (see [`validity`]).
    pub u_orth: f64,
    /// `max |V Vᵀ − I|` (0 when `V` was not formed), likewise.
    pub v_orth: f64,
    /// `max |U Σ Vᵀ − A|` (0 when vectors were not formed).
    pub residual: f64,
    /// Bound on both orthogonality errors: `4 · ε · max(m, n, 32) + 4ε`.
    pub orth_bound: f64,
    /// Bound on the residual: `10 · ε · min(m, n) · ‖A‖₂`.
    pub residual_bound: f64,
    /// The `‖A‖₂` used (`max(s_0, ‖A‖_F / √min(m, n))`, in f64).
    pub norm: f64,
    /// The largest per-value residual, relative to its own scale: for `m ≥ n`,
    /// `max_i ‖A v_i − s_i u_i‖ / (ε (Σ_j ‖A e_j‖ |v_ij| + s_i))`; for `m < n` the same with
    /// `Aᵀ`, `u_i`, `v_i` and the row norms (0 when vectors were not formed). One-sided
    /// Jacobi's backward error is column-scaled, so this stays small for every value, the
    /// smallest of a graded matrix included: a small singular value returned as 0 (or
    /// otherwise wrong) makes it about `σ_i / (ε · scale)`, far above the bound, where the
    /// absolute residual `max |U Σ Vᵀ − A|` cannot see it.
    pub value_residual: f64,
    /// The index `i` of [`Self::value_residual`].
    pub value_index: usize,
    /// Bound on [`Self::value_residual`]: `10 · max(min(m, n), 32)`.
    pub value_bound: f64,
}

impl Validity {
    /// `Ok` when every error is within its bound (NaN never is).
    pub fn check(&self) -> Result<(), String> {
        let ok = |e: f64, b: f64| e.is_finite() && e <= b;
        if ok(self.u_orth, self.orth_bound)
            && ok(self.v_orth, self.orth_bound)
            && ok(self.residual, self.residual_bound)
            && ok(self.value_residual, self.value_bound)
        {
            Ok(())
        } else {
            Err(format!("SVD not valid: {self}"))
        }
    }
}

impl std::fmt::Display for Validity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "max|UᵀU−I| {:.2e}, max|VVᵀ−I| {:.2e} (bound {:.2e}); max|UΣVᵀ−A| {:.2e} (bound {:.2e}, ‖A‖₂ {:.3e}); per value ‖Av_i−s_iu_i‖/(ε·scale_i) {:.3} at i = {} (bound {:.0})",
            self.u_orth,
            self.v_orth,
            self.orth_bound,
            self.residual,
            self.residual_bound,
            self.norm,
            self.value_residual,
            self.value_index,
            self.value_bound
        )
    }
}

/// The tighter bound on `max |V Vᵀ − I|` that the conformance suite checks on a 128² and a
/// 400 × 48 matrix: `ε · max(min(m, n), 64) / 4`. `U`'s orthogonality is set by the convergence
/// threshold (`max(rows, 32) · ε`: the cosines left), `V`'s only by rounding in the rotations
/// accumulated into it, which [`reorthonormalise`] keeps at a few tens of ε (LAPACK-class
/// one-sided Jacobi behaves alike); the general [`validity`] bound `4 ε max(m, n, 32)` covers
/// both.
pub fn v_orth_bound<T: Scalar>(m: usize, n: usize) -> f64 {
    T::EPS.wide() * m.min(n).max(64) as f64 / 4.0
}

/// Random-sign probes of the orthogonality of a full factor's columns beyond the first `k`
/// (see [`validity`]).
pub const ORTH_PROBES: usize = 4;

/// The SVD accuracy contract (after the HPEC 2006 seed), in f64: `max |UᵀU − I|` and
/// `max |V Vᵀ − I|` within `4 ε max(m, n, 32)` (+ 4ε; the 32 is [`TOL_MIN_ROWS`]), `max |U Σ Vᵀ − A| ≤ 10 ε min(m, n) ‖A‖₂`,
/// every singular value's own residual within its column-scaled backward-error bound
/// ([`Validity::value_residual`]), singular values finite, non-negative and descending, and
/// shapes as requested. The conformance suite, the benchmarks and the CLI all call this.
///
/// Cost `O(m n k)` for the residuals; the orthogonality of a thin factor is checked entry by
/// entry (`O(m k²)`), of a full one (`m × m` with `m > k`) every entry in the first `k`
/// columns' rows of `UᵀU` (`O(m² k)`, the cost of forming that factor) and the rest by
/// [`ORTH_PROBES`] random-sign probes (`O(m²)` each): never the `O(m³)` of all of `UᵀU`. Working
/// memory: the factors in f64 (fallible: an error names the bytes).
pub fn validity<T: Scalar>(a: DenseView<'_, T>, r: &SvdResult<T>) -> Result<Validity, String> {
    let (m, n) = a.shape();
    let k = m.min(n);
    if r.s.len() != k {
        return Err(format!(
            "{} singular values for a {m} x {n} matrix",
            r.s.len()
        ));
    }
    for (i, w) in r.s.windows(2).enumerate() {
        if w[0] < w[1] {
            return Err(format!("s[{i}] = {} < s[{}] = {}", w[0], i + 1, w[1]));
        }
    }
    if let Some(bad) = r.s.iter().position(|s| !(s.is_finite() && *s >= T::zero())) {
        return Err(format!("s[{bad}] = {}", r.s[bad]));
    }
    let eps = T::EPS.wide();
    // ‖A‖_F without overflow (f64 entries near 1e300), and every column's and row's norm
    let (_, fro) = driver::finite_max_abs(a, "validity").map_err(|e| e.to_string())?;
    let norm =
        r.s.first()
            .map_or(0.0, |s| s.wide())
            .max(fro / (k.max(1) as f64).sqrt());
    let mut out = Validity {
        u_orth: 0.0,
        v_orth: 0.0,
        residual: 0.0,
        orth_bound: 4.0 * eps * m.max(n).max(TOL_MIN_ROWS) as f64 + 4.0 * eps,
        residual_bound: 10.0 * eps * k.max(1) as f64 * norm + T::min_positive_value().wide(),
        norm,
        value_residual: 0.0,
        value_index: 0,
        value_bound: 10.0 * k.max(TOL_MIN_ROWS) as f64,
    };
    let (u, vt) = match (&r.u, &r.vt) {
        (None, None) => return Ok(out),
        (Some(u), Some(vt)) => (u, vt),
        _ => return Err("only one of U and Vᵀ formed".into()),
    };
    let ucols = u.cols();
    let vrows = vt.rows();
    if u.rows() != m || !(ucols == k || ucols == m) || vt.cols() != n || !(vrows == k || vrows == n)
    {
        return Err(format!(
            "U is {} x {}, Vᵀ is {} x {} for a {m} x {n} matrix",
            u.rows(),
            ucols,
            vrows,
            vt.cols()
        ));
    }
    let alloc = |len: usize, what: &str| {
        crate::alloc::try_zeroed_vec::<f64>(len, || format!("the SVD check's {what}"))
            .map_err(|e| e.to_string())
    };
    // In f64, rows in parallel and every inner loop over contiguous memory: the check must
    // stay cheap beside the SVD itself at n = 4096.
    let mut vf = alloc(vrows * n, "copy of Vᵀ")?;
    vf.par_iter_mut()
        .zip(vt.as_slice().par_iter())
        .for_each(|(x, v)| *x = v.wide());
    // Uᵀ, so that U's columns are contiguous.
    let mut ut = alloc(ucols * m, "copy of Uᵀ")?;
    for (i, row) in u.as_slice().chunks_exact(ucols.max(1)).enumerate().take(m) {
        for (p, v) in row.iter().enumerate() {
            ut[p * m + i] = v.wide();
        }
    }
    out.u_orth = gram_error(&ut, ucols, m, k);
    // V Vᵀ − I, as rows of Vᵀ (Vᵀ's rows are V's columns)
    out.v_orth = gram_error(&vf, vrows, n, k);
    let s: Vec<f64> = r.s.iter().map(|v| v.wide()).collect();
    out.residual = (0..m)
        .into_par_iter()
        .map(|i| {
            let mut x = vec![0.0f64; n];
            for (l, sl) in s.iter().enumerate() {
                let c = ut[l * m + i] * sl;
                for (xj, vj) in x.iter_mut().zip(&vf[l * n..(l + 1) * n]) {
                    *xj += c * vj;
                }
            }
            x.iter()
                .zip(a.row(i))
                .fold(0.0, |e, (xj, aj)| nan_max(e, (xj - aj.wide()).abs()))
        })
        .reduce(|| 0.0, nan_max);
    // Per-value residuals, in the working orientation (columns of A for m ≥ n, of Aᵀ else).
    let (ratio, at) = value_residuals(a, &s, &ut, &vf, eps)?;
    out.value_residual = ratio;
    out.value_index = at;
    Ok(out)
}

/// `max_i ‖A v_i − s_i u_i‖ / (ε (Σ_j ‖A e_j‖ |v_ij| + s_i))` (`m ≥ n`; else with `Aᵀ`, `u`,
/// `v` and the rows exchanged) and its `i`, for `U`'s columns as rows of `ut` (`m` long) and
/// `Vᵀ`'s rows in `vf` (`n` long). Everything is computed relative to `‖A‖_F`'s power of two
/// (the entries of an f64 matrix may be near 1e300). NaN propagates.
fn value_residuals<T: Scalar>(
    a: DenseView<'_, T>,
    s: &[f64],
    ut: &[f64],
    vf: &[f64],
    eps: f64,
) -> Result<(f64, usize), String> {
    let (m, n) = a.shape();
    let k = s.len();
    if k == 0 {
        return Ok((0.0, 0));
    }
    let (_, fro) = driver::finite_max_abs(a, "validity").map_err(|e| e.to_string())?;
    // an exact power of two near 1 / ‖A‖_F (A's entries may be near f64's limits)
    let sc = if fro > 1e-300 {
        1.0 / 2f64.powi(fro.log2().ceil() as i32)
    } else {
        1.0
    };
    // x_i = A v_i (m long) for m ≥ n, or Aᵀ u_i (n long); scale_i = Σ_j ‖A e_j‖ |v_ij|
    let tall = m >= n;
    let (len, olen) = if tall { (m, n) } else { (n, m) };
    // the working columns' norms: columns of A (tall) or rows of A
    let mut cn = vec![0.0f64; olen];
    let mut prod =
        crate::alloc::try_zeroed_vec::<f64>(k * len, || "the SVD check's products A V".to_string())
            .map_err(|e| e.to_string())?;
    for i in 0..m {
        let row = a.row(i);
        for (j, v) in row.iter().enumerate() {
            let x = v.wide() * sc;
            if tall {
                cn[j] += x * x;
            } else {
                cn[i] += x * x;
            }
        }
    }
    cn.iter_mut().for_each(|c| *c = c.sqrt());
    // rows of A in parallel would race on prod's columns for the wide case: go by value
    prod.par_chunks_mut(len).enumerate().for_each(|(l, x)| {
        for i in 0..m {
            let row = a.row(i);
            if tall {
                let v = &vf[l * n..(l + 1) * n];
                x[i] = row
                    .iter()
                    .zip(v)
                    .map(|(aij, vj)| aij.wide() * sc * vj)
                    .sum();
            } else {
                let ui = ut[l * m + i];
                for (xj, aij) in x.iter_mut().zip(row) {
                    *xj += aij.wide() * sc * ui;
                }
            }
        }
    });
    let mut worst = (0.0f64, 0usize);
    for l in 0..k {
        let (y, w) = if tall {
            (&ut[l * m..(l + 1) * m], &vf[l * n..(l + 1) * n])
        } else {
            (&vf[l * n..(l + 1) * n], &ut[l * m..(l + 1) * m])
        };
        let sl = s[l] * sc;
        let res = prod[l * len..(l + 1) * len]
            .iter()
            .zip(y)
            .map(|(x, yi)| (x - sl * yi).powi(2))
            .sum::<f64>()
            .sqrt();
        let scale = w.iter().zip(&cn).map(|(wj, c)| wj.abs() * c).sum::<f64>() + sl;
        let ratio = if res == 0.0 {
            0.0
        } else {
            res / (eps * scale.max(f64::MIN_POSITIVE))
        };
        if ratio.is_nan() {
            return Ok((f64::NAN, l));
        }
        if ratio > worst.0 {
            worst = (ratio, l);
        }
    }
    Ok(worst)
}

/// `max |X Xᵀ − I|` of the `rows × len` row-major `x`, rows in parallel; NaN propagates.
/// Every entry in the first `exact` rows of `X Xᵀ` (`O(exact · rows · len)`); among the other
/// rows (a full factor's completion) [`ORTH_PROBES`] random-sign probes `z = (X_c X_cᵀ − I) s`
/// (`O(rows · len)` each), `max |z_p|`: for any `E = X_c X_cᵀ − I`, `E[z_p²] = Σ_q E_pq² ≥
/// max_q E_pq²`, so one entry out of bound anywhere shows in every probe, while rounding
/// noise of `ε` per entry gives about `ε √rows`, inside the `4 ε rows` bound.
fn gram_error(x: &[f64], rows: usize, len: usize, exact: usize) -> f64 {
    let exact = exact.min(rows);
    let dot = |p: usize, q: usize| -> f64 {
        x[p * len..(p + 1) * len]
            .iter()
            .zip(&x[q * len..(q + 1) * len])
            .map(|(a, b)| a * b)
            .sum()
    };
    let head = (0..exact)
        .into_par_iter()
        .map(|p| {
            (p..rows).fold(0.0, |e, q| {
                nan_max(e, (dot(p, q) - if p == q { 1.0 } else { 0.0 }).abs())
            })
        })
        .reduce(|| 0.0, nan_max);
    let rest = rows - exact;
    if rest == 0 {
        return head;
    }
    if rest <= ORTH_PROBES {
        let tail = (exact..rows)
            .flat_map(|p| (p..rows).map(move |q| (p, q)))
            .fold(0.0, |e, (p, q)| {
                nan_max(e, (dot(p, q) - if p == q { 1.0 } else { 0.0 }).abs())
            });
        return nan_max(head, tail);
    }
    let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
    let mut worst = head;
    for _ in 0..ORTH_PROBES {
        let sign: Vec<f64> = (0..rest)
            .map(|_| if next() >> 63 == 0 { 1.0 } else { -1.0 })
            .collect();
        // y = X_cᵀ s (len long), then z_p = X_p · y − s_p
        let y = (0..rest)
            .into_par_iter()
            .fold(
                || vec![0.0f64; len],
                |mut y, t| {
                    let xp = &x[(exact + t) * len..(exact + t + 1) * len];
                    for (yi, xi) in y.iter_mut().zip(xp) {
                        *yi += sign[t] * xi;
                    }
                    y
                },
            )
            .reduce(
                || vec![0.0f64; len],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let z = (0..rest)
            .into_par_iter()
            .map(|t| {
                let xp = &x[(exact + t) * len..(exact + t + 1) * len];
                let d: f64 = xp.iter().zip(&y).map(|(a, b)| a * b).sum();
                (d - sign[t]).abs()
            })
            .reduce(|| 0.0, nan_max);
        worst = nan_max(worst, z);
    }
    worst
}

/// `max` that propagates NaN.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The QR accuracy contract: `max |QᵀQ − I| ≤ 4 ε max(m, n)` (+ 4ε), `max |Q R − A| ≤ 10 ε
/// max(m, n) ‖A‖_F`, `R` exactly zero below its diagonal, and, with or without `Q`,
/// `|(RᵀR − AᵀA)_ij| ≤ 10 ε max(m, n) ‖a_i‖ ‖a_j‖`. Returns the two errors.
pub fn qr_validity<T: Scalar>(a: DenseView<'_, T>, f: &QrFactors<T>) -> Result<(f64, f64), String> {
    let (m, n) = a.shape();
    let k = m.min(n);
    let r = &f.r;
    if r.cols() != n || !(r.rows() == k || r.rows() == m) {
        return Err(format!(
            "R is {} x {} for a {m} x {n} matrix",
            r.rows(),
            r.cols()
        ));
    }
    for i in 0..r.rows() {
        for j in 0..i.min(n) {
            if r.get(i, j) != T::zero() {
                return Err(format!("R({i}, {j}) = {} below the diagonal", r.get(i, j)));
            }
        }
    }
    // R on its own: RᵀR = AᵀA (Q orthogonal), entry (i, j) within 10 ε max(m, n) ‖a_i‖ ‖a_j‖
    // (the column-scaled backward error of Householder and Givens QR), in f64: O(m n²),
    // the cost of the factorisation. Sees a wrong R even when Q is not formed.
    let eps = T::EPS.wide();
    let cn: Vec<f64> = (0..n)
        .map(|j| {
            (0..m)
                .map(|i| a.get(i, j).wide().powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    let rb = 10.0 * eps * m.max(n).max(1) as f64;
    for i in 0..n {
        for j in i..n {
            let ata: f64 = (0..m)
                .map(|l| a.get(l, i).wide() * a.get(l, j).wide())
                .sum();
            let rtr: f64 = (0..r.rows())
                .map(|l| r.get(l, i).wide() * r.get(l, j).wide())
                .sum();
            let bound = rb * cn[i] * cn[j] + T::min_positive_value().wide();
            if (rtr - ata).abs().is_nan() || (rtr - ata).abs() > bound {
                return Err(format!(
                    "(RᵀR)({i}, {j}) = {rtr:e}, (AᵀA)({i}, {j}) = {ata:e} (bound {bound:.2e})"
                ));
            }
        }
    }
    let Some(q) = &f.q else {
        return Ok((0.0, 0.0));
    };
    if q.rows() != m || q.cols() != r.rows() {
        return Err(format!(
            "Q is {} x {} with R {} x {}",
            q.rows(),
            q.cols(),
            r.rows(),
            n
        ));
    }
    let qc = q.cols();
    let mut orth = 0.0f64;
    for p in 0..qc {
        for s in p..qc {
            let d: f64 = (0..m)
                .map(|i| q.get(i, p).wide() * q.get(i, s).wide())
                .sum();
            orth = nan_max(orth, (d - if p == s { 1.0 } else { 0.0 }).abs());
        }
    }
    let fro = (0..m)
        .flat_map(|i| a.row(i).iter())
        .map(|v| v.wide().powi(2))
        .sum::<f64>()
        .sqrt();
    let mut res = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let x: f64 = (0..qc)
                .map(|l| q.get(i, l).wide() * r.get(l, j).wide())
                .sum();
            res = nan_max(res, (x - a.get(i, j).wide()).abs());
        }
    }
    let ob = 4.0 * eps * m.max(n) as f64 + 4.0 * eps;
    let rb = 10.0 * eps * m.max(n).max(1) as f64 * fro + T::min_positive_value().wide();
    if orth.is_finite() && orth <= ob && res.is_finite() && res <= rb {
        Ok((orth, res))
    } else {
        Err(format!(
            "QR not valid: max|QᵀQ−I| {orth:.2e} (bound {ob:.2e}), max|QR−A| {res:.2e} (bound {rb:.2e})"
        ))
    }
}

/// Widening to f64 without the ambiguity between [`Scalar::to_f64`] and `num_traits`'.
pub(crate) trait Wide {
    /// The value as f64.
    fn wide(self) -> f64;
}

impl<T: Scalar> Wide for T {
    #[inline]
    fn wide(self) -> f64 {
        Scalar::to_f64(self)
    }
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

    /// `[[H, 0], [0, B]]` (B 5 × 3 of order one, H = 1e15) with its exact SVD built from
    /// nalgebra's of B; returns the matrix and the result.
    fn block_case() -> (Dense<f64>, SvdResult<f64>) {
        let (m, n, h) = (6usize, 4usize, 1e15);
        let b = Dense::from_fn(5, 3, |i, j| {
            ((i * 7 + j * 3) % 5) as f64 - 2.0 + 0.1 * j as f64
        });
        let bs = b.to_nalgebra().svd(true, true);
        let (bu, bvt) = (bs.u.unwrap(), bs.v_t.unwrap());
        let a = Dense::from_fn(m, n, |i, j| match (i, j) {
            (0, 0) => h,
            (0, _) | (_, 0) => 0.0,
            _ => b.get(i - 1, j - 1),
        });
        let mut s = vec![h];
        s.extend(bs.singular_values.iter());
        let u = Dense::from_fn(m, n, |i, l| match (i, l) {
            (0, 0) => 1.0,
            (0, _) | (_, 0) => 0.0,
            _ => bu[(i - 1, l - 1)],
        });
        let vt = Dense::from_fn(n, n, |l, j| match (l, j) {
            (0, 0) => 1.0,
            (0, _) | (_, 0) => 0.0,
            _ => bvt[(l - 1, j - 1)],
        });
        let r = SvdResult {
            s,
            u: Some(u),
            vt: Some(vt),
            sweeps: 1,
            off: 0.0,
            converged: true,
            precondition: SvdPrecondition::None,
            tol: 1e-15,
        };
        (a, r)
    }

    #[test]
    fn validity_sees_small_singular_values_returned_as_zero() {
        let (a, good) = block_case();
        let v = validity(a.view(), &good).unwrap();
        v.check().unwrap();
        // σ₂… = 0, as the absolute thresholds once gave: U Σ Vᵀ − A is B, within the
        // absolute bound 10 ε k ‖A‖ (about 2.7 here), but every small value's own residual
        // is σ_i against a scale of ε σ_i.
        let mut bad = good.clone();
        bad.s[1..].fill(0.0);
        let v = validity(a.view(), &bad).unwrap();
        assert!(v.residual <= v.residual_bound, "{v}");
        assert!(v.check().is_err(), "{v}");
        assert!(v.value_residual > 1e10 && v.value_index >= 1, "{v}");
        // a small value 1% off
        let mut off = good;
        off.s[2] *= 1.01;
        assert!(validity(a.view(), &off).unwrap().check().is_err());
    }

    #[test]
    fn full_factor_orthogonality_is_sampled_yet_sees_a_bad_column() {
        // 200 x 200 identity as a "full U" with two columns (not among the first k = 1)
        // bent: the probes see it.
        let x: Vec<f64> = (0..200 * 200)
            .map(|p| if p / 200 == p % 200 { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(gram_error(&x, 200, 200, 1), 0.0);
        let mut y = x.clone();
        y[137 * 200 + 137] = 1.001; // its own norm: only a sampled or exact row sees it
        y[137 * 200 + 3] = 0.01;
        let e = gram_error(&y, 200, 200, 1);
        assert!(e > 1e-3, "{e}");
    }

    #[test]
    fn qr_validity_checks_r_without_q() {
        let a = Dense::from_vec(3, 2, vec![2.0f64, 1.0, 0.0, 3.0, 0.0, 0.0]).unwrap();
        let r = |v: Vec<f64>| QrFactors {
            q: None,
            r: Dense::from_vec(2, 2, v).unwrap(),
        };
        assert!(qr_validity(a.view(), &r(vec![2.0, 1.0, 0.0, 3.0])).is_ok());
        // a row's sign is free
        assert!(qr_validity(a.view(), &r(vec![-2.0, -1.0, 0.0, 3.0])).is_ok());
        // triangular, but not A's R
        assert!(qr_validity(a.view(), &r(vec![2.0, 1.0, 0.0, 3.001])).is_err());
        assert!(qr_validity(a.view(), &r(vec![2.0, 1.5, 0.0, 3.0])).is_err());
    }

    #[test]
    fn qr_order_parses() {
        assert_eq!(QrOrder::parse("AUTO"), Some(QrOrder::Auto));
        assert_eq!(QrOrder::parse("flat"), Some(QrOrder::Flat));
        assert_eq!(
            QrOrder::parse("tree"),
            Some(QrOrder::Tree {
                panel_rows: TREE_PANEL_ROWS
            })
        );
        assert_eq!(
            QrOrder::parse("tree:64"),
            Some(QrOrder::Tree { panel_rows: 64 })
        );
        assert_eq!(QrOrder::parse("tree:0"), None);
        assert_eq!(QrOrder::parse("householder"), Some(QrOrder::Householder));
        assert_eq!(QrOrder::parse("givens"), None);
        assert_eq!(
            QrOrder::gpu_auto(32768, 256),
            QrOrder::Tree {
                panel_rows: TREE_PANEL_ROWS
            }
        );
        assert_eq!(QrOrder::gpu_auto(4096, 4096), QrOrder::Flat);
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
}

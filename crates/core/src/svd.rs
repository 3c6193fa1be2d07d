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
//! `ε σ₁ √n`, is small against its own `σ`, and it is much cheaper than applying the
//! rotations. On the CPU, `max |UᵀU − I|` grows as about `0.9 ε κ`
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
//!
//! # Layout
//!
//! - this file: the [`Svd`] and [`Qr`] traits, their options ([`SvdOptions`], [`QrOptions`])
//!   and results;
//! - [`jacobi`]: the pure parts of block Jacobi (pair order, rotation, Björck step, the
//!   negligible-column threshold, the block plan [`JacobiPlan`]);
//! - [`tree`]: the tree QR's plan and its host reference;
//! - [`kernels`]: what a backend supplies, [`SvdKernels`];
//! - [`driver`]: [`svd_with`] and [`qr_with`], the phases every backend shares;
//! - [`device`]: the device steps on any [`crate::device::Device`] (both GPU backends);
//! - [`host`]: the driver's host-side layout changes, scaling and memory checks; [`basis`]:
//!   completing `U`;
//! - [`accuracy`]: the accuracy contract ([`validity`], [`qr_validity`],
//!   [`values_tolerance`]).

pub mod accuracy;
pub mod basis;
pub mod device;
pub mod driver;
pub mod host;
pub mod jacobi;
pub mod kernels;
pub mod tree;

use crate::backend::Backend;
use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

pub use accuracy::{qr_validity, v_orth_bound, validity, values_tolerance, Validity, ORTH_PROBES};
pub use driver::{qr_with, svd_with};
pub use jacobi::{
    jacobi_rotation, negligible_gram, reorthonormalise, round_robin_pair, JacobiParams, JacobiPlan,
    JacobiStats,
};
pub use kernels::SvdKernels;
pub use tree::{TreePlan, MERGE_PANEL, TREE_PANEL_ROWS};

/// Cyclic Jacobi sweeps run on each block pair's Gram matrix per visit (every backend).
/// A second sweep rarely lowers the outer sweep count and costs about a third more time
/// (the sweep counts and times: `benches/results/history/`).
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
    /// Time every phase of the driver ([`svd_with`]: upload, QR, Jacobi, `U` and `V`) into
    /// [`SvdResult::phases`] (default off). Each phase then ends by waiting for the device,
    /// which perturbs the pipeline a little: for finding where the time goes, not for timing
    /// the whole call.
    pub trace: bool,
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
            trace: false,
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
    /// With [`SvdOptions::trace`]: the driver's phases in order, each with its time; empty
    /// otherwise.
    pub phases: Vec<SvdPhase>,
}

/// One phase of an SVD and the time it took (see [`SvdOptions::trace`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SvdPhase {
    /// What the phase did (`"qr"`, `"jacobi (9 sweeps)"`, `"U = A V"`, ...).
    pub name: String,
    /// Its wall-clock time in seconds, ended by a device synchronize.
    pub seconds: f64,
}

/// One-sided block Jacobi SVD with a parallel pair ordering.
pub trait Svd<T: Scalar>: Backend {
    /// Singular values (and vectors, as requested) of `A`.
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>>;
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
}

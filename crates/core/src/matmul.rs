//! Dense matrix multiplication `C = A B`: the [`MatMul`] trait, its options, the Strassen and
//! Strassen–Winograd schedules that every backend runs over its own base kernel, the f64
//! reference and the accuracy contract ([`tolerance`]).
//!
//! # One recursion, three executors
//!
//! [`plan`] turns a product `m x k · k x n` and [`MatMulOptions`] into a [`Schedule`]: a flat
//! list of [`Step`]s, each either a base-kernel product ([`Step::Gemm`],
//! `C = α A B + β C` on strided sub-blocks) or an elementwise sum ([`Step::Add`],
//! `D = α X + β Y`), on four operands: the inputs `A` and `B`, the output `C` and one
//! workspace `W` of [`Schedule::workspace`] elements, allocated once per call and shared by
//! all recursion nodes (a node's temporaries sit after its parent's; siblings reuse them).
//! Every block is `(operand, offset, leading dimension)`, so a GPU backend runs a schedule by
//! launching its tiled kernel and its addition kernel with buffer offsets, and the CPU runs it
//! with [`execute_host`]. The recursion lives here once; backends only execute: the GPU
//! backends through the one device executor [`run_steps`], implementing [`ScheduleKernels`]
//! (their two kernel launches).
//!
//! # Shapes that are not powers of two: peeling
//!
//! With `L` levels, the product is split as `m = m' + mr`, `m' = 2^L ⌊m / 2^L⌋` (likewise `k`
//! and `n`). The leading `m' x k' · k' x n'` part runs Strassen with exact halving at every
//! level; the rest is three thin base-kernel products (*dynamic peeling* at the top only):
//! `C[:m', :n'] += A[:m', k':] B[k':, :n']` (rank-`kr` update), `C[:m', n':] = A[:m', :] B[:, n':]`
//! and `C[m':, :] = A[m':, :] B`. They cost `O((mr + nr + kr) · mnk / min(m,n,k))` flops,
//! under `2^L / min(m, n, k)` of the total, and no memory beyond the output. No zero
//! padding is ever allocated.
//!
//! # Algorithms
//!
//! - **Strassen** (1969): 7 products and 18 additions per level: `M1 = (A11+A22)(B11+B22)`,
//!   `M2 = (A21+A22)B11`, `M3 = A11(B12−B22)`, `M4 = A22(B21−B11)`, `M5 = (A11+A12)B22`,
//!   `M6 = (A21−A11)(B11+B12)`, `M7 = (A12−A22)(B21+B22)`; `C11 = M1+M4−M5+M7`,
//!   `C12 = M3+M5`, `C21 = M2+M4`, `C22 = M1−M2+M3+M6`.
//! - **Winograd** (the Strassen–Winograd variant): 7 products and 15 additions per level,
//!   scheduled as in Douglas et al. (1994) with the quadrants of `C` as scratch.
//!
//! - **Fused** (ABC Strassen, Huang, Yu & van de Geijn 2016/2018): the last level is
//!   Strassen's 7 products with no addition step at all: each is a [`Step::Fused`] that the
//!   base kernel runs as `P = (A_x ± A_y)(B_x ± B_y)`, forming the sums while it loads tiles,
//!   and adds `±P` into one or two quadrants of `C` (the first product to reach a quadrant
//!   overwrites it). Levels above it run the Winograd schedule, whose recursive products
//!   become fused nodes (`C = α A B + β C` is native there, so they need no `Z` either).
//!   Its error bound is taken as Winograd's (the larger).
//!
//! Strassen and Winograd use three temporaries per level, `X` (`m/2 x k/2`), `Y` (`k/2 x n/2`) and `Z`
//! (`m/2 x n/2`), so the workspace is `Σ_l (m k + k n + m n) / 4^l < (m k + k n + m n) / 3`
//! elements.

pub mod device;
mod steps;

pub use steps::{run_steps, DevAdd, DevBlock, DevFused, DevGemm, ScheduleKernels};

use crate::backend::DeviceVectors;
use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tolerance::Tolerance;
use rayon::prelude::*;

/// Which algorithm [`MatMul`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Winograd's variant with levels from the shape and the backend's cutoff (tiled when
    /// that gives 0 levels).
    #[default]
    Auto,
    /// The backend's base kernel only (no recursion).
    Tiled,
    /// Strassen's original 7-product, 18-addition recursion over the base kernel.
    Strassen,
    /// The Strassen–Winograd 7-product, 15-addition recursion over the base kernel.
    Winograd,
    /// "ABC Strassen" (Huang, Yu & van de Geijn): the last level is Strassen's 7 products
    /// with its additions fused into the base kernel ([`Step::Fused`]: the operand sums
    /// formed while loading tiles, each product written into one or two quadrants of `C`
    /// with ±1), so it needs no temporaries and no addition pass; levels above it run
    /// Winograd's schedule.
    Fused,
}

impl Algorithm {
    /// Lower-case name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Tiled => "tiled",
            Algorithm::Strassen => "strassen",
            Algorithm::Winograd => "winograd",
            Algorithm::Fused => "fused",
        }
    }
}

/// Which base kernel a backend runs the products of a schedule on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BaseKernel {
    /// The backend's fastest for the precision and device: on CUDA the FP64 tensor-core
    /// (DMMA) kernel for f64 where [`MatMul::has_tensor_core_kernel`] says so, the SIMT tiled
    /// kernel otherwise.
    #[default]
    Auto,
    /// The SIMT tiled kernel (shared-memory tiles, register blocks, FMA) on every backend.
    Simt,
    /// The tensor-core kernel; [`Error::Unsupported`] where
    /// [`MatMul::has_tensor_core_kernel`] is false (CPU, OpenCL, f32, CUDA before 9.0).
    TensorCore,
}

impl BaseKernel {
    /// Lower-case name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            BaseKernel::Auto => "auto",
            BaseKernel::Simt => "simt",
            BaseKernel::TensorCore => "tensor",
        }
    }
}

/// How a GPU backend moves host inputs and outputs ([`MatMul::matmul`]); the CPU ignores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostMemory {
    /// Ordinary copies from and to pageable host memory (the driver stages them).
    #[default]
    Pageable,
    /// Through page-locked (pinned) host buffers, which the DMA engines read directly: the
    /// backend keeps them across calls (allocating page-locked memory costs more than the
    /// copies), so a call costs a host copy into them, overlapped with the DMA, and back.
    Pinned,
    /// Zero-copy: the kernels read the inputs from mapped page-locked host memory (the same
    /// kept buffers) over the bus, with no device copy of `A` and `B`, and write `C` there;
    /// only for small products or inputs read few times (the tiled kernel reads `A`
    /// `n / 128` times).
    Mapped,
}

impl HostMemory {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            HostMemory::Pageable => "pageable",
            HostMemory::Pinned => "pinned",
            HostMemory::Mapped => "mapped",
        }
    }
}

/// Options for [`MatMul`].
#[derive(Debug, Clone, PartialEq)]
pub struct MatMulOptions {
    /// Algorithm; [`Algorithm::Auto`] by default.
    pub algorithm: Algorithm,
    /// Strassen levels. `None`: automatic (the most levels, up to [`Self::max_depth`], that
    /// keep the leaf products at least `strassen_cutoff` in every dimension; at least one
    /// for an explicit Strassen, Winograd or Fused when the shape allows). `Some(l)` forces `l`,
    /// clamped to `⌊log2 min(m, n, k)⌋` (every leaf at least 1 x 1 x 1). Ignored by
    /// [`Algorithm::Tiled`].
    pub levels: Option<usize>,
    /// The smallest leaf order of the automatic level choice. `None`: the backend's
    /// ([`MatMul::default_cutoff`]), where its Strassen starts to beat its base kernel.
    pub strassen_cutoff: Option<usize>,
    /// Never recurse deeper than this automatically (bounds the extra additions). Default 4.
    pub max_depth: usize,
    /// Host transfer mode of GPU backends.
    pub host_memory: HostMemory,
    /// Base kernel of the products ([`BaseKernel::Auto`] by default).
    pub base_kernel: BaseKernel,
    /// At most this many work-groups (CUDA blocks) per addition step ([`Step::Add`]) on GPU
    /// backends, which take one per row and loop over the rows group-strided beyond it.
    /// `None`: the backend's limit ([`ADD_MAX_GROUPS`], reached from 65,537 rows); a small
    /// value forces the row loop on small matrices (tests). The CPU ignores it.
    pub add_max_groups: Option<usize>,
}

/// The GPU backends' limit of work-groups per addition step (see
/// [`MatMulOptions::add_max_groups`]).
pub const ADD_MAX_GROUPS: usize = 1 << 16;

impl MatMulOptions {
    /// Work-groups of an addition step over `m` rows: one per row, at most
    /// [`MatMulOptions::add_max_groups`] (else [`ADD_MAX_GROUPS`]), at least one.
    pub fn add_groups(&self, m: usize) -> usize {
        m.min(self.add_max_groups.unwrap_or(ADD_MAX_GROUPS)).max(1)
    }
}

impl Default for MatMulOptions {
    fn default() -> Self {
        Self {
            algorithm: Algorithm::Auto,
            levels: None,
            strassen_cutoff: None,
            max_depth: 4,
            host_memory: HostMemory::Pageable,
            base_kernel: BaseKernel::Auto,
            add_max_groups: None,
        }
    }
}

impl MatMulOptions {
    /// `algorithm` with `levels` forced.
    pub fn with(algorithm: Algorithm, levels: Option<usize>) -> Self {
        Self {
            algorithm,
            levels,
            ..Self::default()
        }
    }
}

/// Dense matrix multiplication `C = A B` (f32 or f64), on host data ([`MatMul::matmul`]) or
/// on row-major device vectors ([`MatMul::gemm`], the entry point that SVD and R-MCL chain
/// without host copies).
///
/// Accuracy contract (checked by the conformance suite): every entry within [`tolerance`] of
/// the exact product. NaN and infinity propagate as in the classical product, on every
/// algorithm: a non-finite `A[i][p]` reaches row `i` of `C` only, a non-finite `B[p][j]`
/// column `j` only (an entry whose sum involves a NaN, `0 · ∞` or infinities of both signs is
/// NaN). Strassen-type recursions would spread them further through their quadrant sums, so
/// on inputs holding NaN or ±∞ the classical schedule runs instead
/// ([`classical_unless_safe`], reported in [`Schedule::substituted`]); likewise on host
/// inputs with values so large that the recursion's sums could overflow
/// ([`recursion_safe`]). (On device operands, [`MatMul::gemm`] checks finiteness only.)
pub trait MatMul<T: Scalar>: DeviceVectors<T> {
    /// The backend's default [`MatMulOptions::strassen_cutoff`]: where its Strassen starts to
    /// beat its base kernel.
    fn default_cutoff(&self) -> usize;

    /// Whether [`BaseKernel::TensorCore`] is available for `T` on this device (CUDA f64 on
    /// compute capability 9.0 and newer: the FP64 tensor cores' DMMA instructions).
    fn has_tensor_core_kernel(&self) -> bool {
        false
    }

    /// The schedule this backend runs for an `m x k · k x n` product of finite inputs under
    /// `opts` (see [`MatMul::plan_for`] for any inputs).
    fn plan(&self, m: usize, n: usize, k: usize, opts: &MatMulOptions) -> Schedule {
        plan(m, n, k, opts, self.default_cutoff())
    }

    /// The schedule [`MatMul::matmul`] runs for `a b` under `opts`: [`MatMul::plan`]'s, or
    /// the classical product when that recurses and an input holds NaN or ±∞, or values so
    /// large that its sums could overflow ([`plan_host`]; [`Schedule::substituted`] then
    /// says so).
    fn plan_for(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Schedule> {
        let (_, n, k) = check_shapes(a.shape(), b.shape())?;
        plan_host(a, b, (k, n, n), opts, self.default_cutoff())
    }

    /// The schedule [`MatMul::gemm`] runs on the device operands `a` (`m x k`) and `b`
    /// (`k x n`): [`MatMul::plan`]'s, or the classical product when that recurses and
    /// [`MatMul::all_finite`] finds NaN or ±∞ in an operand ([`classical_unless_safe`]).
    #[allow(clippy::too_many_arguments)]
    fn plan_device(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &Self::Vector,
        b: &Self::Vector,
        opts: &MatMulOptions,
    ) -> Result<Schedule> {
        let s = self.plan(m, n, k, opts);
        classical_unless_safe(s, (m, n, k), (k, n, n), |_| {
            Ok(self.all_finite(a, (m, k), opts)? && self.all_finite(b, (k, n), opts)?)
        })
    }

    /// Whether every value of the device vector `v`, a row-major `rows x cols` matrix, is
    /// finite. By default on the device through the base kernel alone (no other kernel, no
    /// copy of `v`): the classical product of `v` with a zero vector (on the side giving
    /// more work-groups) is 0 in every entry whose row (column) of `v` is finite and NaN
    /// in every other, since `0 · x = 0` for finite `x` and `0 · ±∞ = 0 · NaN = NaN`, and
    /// sums of zeros cannot overflow; only that `max(rows, cols)`-vector is downloaded and
    /// scanned. It costs one pass over `v` at the base kernel's padded tile rate (the GPU
    /// kernels' tiles are 128 wide): about `2 · 128 · rows · cols` flops, for both operands
    /// a fraction `~256 / n` of an `n³` product's (recursion starts at `n = 8192` on GPUs
    /// by default). Host backends override it with a plain scan ([`all_finite`]).
    fn all_finite(
        &self,
        v: &Self::Vector,
        (rows, cols): (usize, usize),
        opts: &MatMulOptions,
    ) -> Result<bool> {
        if rows == 0 || cols == 0 {
            return Ok(true);
        }
        let tiled = MatMulOptions {
            algorithm: Algorithm::Tiled,
            levels: None,
            ..opts.clone()
        };
        // The zero vector lives until the download has waited for the product.
        let (_zeros, out) = if cols >= rows {
            // 0ᵀ (1 x rows) · v (rows x cols): one entry per column.
            let z = self.zeros(rows)?;
            let mut out = self.zeros(cols)?;
            self.gemm(1, cols, rows, &z, v, &mut out, &tiled)?;
            (z, out)
        } else {
            // v (rows x cols) · 0 (cols x 1): one entry per row.
            let z = self.zeros(cols)?;
            let mut out = self.zeros(rows)?;
            self.gemm(rows, 1, cols, v, &z, &mut out, &tiled)?;
            (z, out)
        };
        let host = self.download(&out)?;
        Ok(host.iter().all(|x| *x == T::zero()))
    }

    /// `c = a b` on row-major device vectors: `a` is `m x k` (`m k` values), `b` is `k x n`,
    /// `c` is `m x n` and is overwritten whatever it held. Fails with [`Error::Shape`] when a
    /// length disagrees, [`Error::OutOfMemory`] when the Strassen workspace does not fit. May
    /// return before the work finishes; a download waits for it. Runs
    /// [`MatMul::plan_device`]'s schedule (the classical product when an operand holds NaN or
    /// ±∞ and the plan recurses; the check waits for the operands).
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &Self::Vector,
        b: &Self::Vector,
        c: &mut Self::Vector,
        opts: &MatMulOptions,
    ) -> Result<()>;

    /// `A B` for host matrices (any strides): uploads `A` and `B` as
    /// [`MatMulOptions::host_memory`] says, runs [`MatMul::gemm`], downloads `C`. Fails with
    /// [`Error::Shape`] unless `A.cols == B.rows`, and with [`Error::OutOfMemory`] (saying how
    /// much memory the product needs) when it does not fit on the device. Runs
    /// [`MatMul::plan_for`]'s schedule (the classical product when an input holds NaN or ±∞,
    /// or values that could overflow, and the plan recurses: found by a scan on the host
    /// before any upload).
    fn matmul(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Dense<T>>;
}

/// Checks `A (m x k) · B (k' x n)`: `Ok((m, n, k))` or [`Error::Shape`].
pub fn check_shapes(a: (usize, usize), b: (usize, usize)) -> Result<(usize, usize, usize)> {
    if a.1 != b.0 {
        return Err(Error::shape(format!(
            "matmul: A is {} x {}, B is {} x {} (inner dimensions differ)",
            a.0, a.1, b.0, b.1
        )));
    }
    Ok((a.0, b.1, a.1))
}

/// Resolves [`MatMulOptions::base_kernel`] on a backend where the tensor-core kernel is
/// `available` (for the element type at hand): `Ok(true)` to run it, `Ok(false)` for the SIMT
/// kernel, [`Error::Unsupported`] (naming `backend` and `T`) when it is forced but absent.
pub fn use_tensor_cores<T: Scalar>(
    kernel: BaseKernel,
    available: bool,
    backend: &str,
) -> Result<bool> {
    match kernel {
        BaseKernel::Auto => Ok(available),
        BaseKernel::Simt => Ok(false),
        BaseKernel::TensorCore if available => Ok(true),
        BaseKernel::TensorCore => Err(Error::Unsupported(format!(
            "matmul: {backend} has no tensor-core base kernel for {} (only CUDA f64 on \
             compute capability 9.0 and newer)",
            T::NAME
        ))),
    }
}

/// Checks the lengths of row-major operands of [`MatMul::gemm`].
pub fn check_lengths(m: usize, n: usize, k: usize, a: usize, b: usize, c: usize) -> Result<()> {
    let want = |r: usize, s: usize| r.checked_mul(s);
    if want(m, k) != Some(a) || want(k, n) != Some(b) || want(m, n) != Some(c) {
        return Err(Error::shape(format!(
            "gemm {m} x {k} · {k} x {n}: operands hold {a}, {b} and {c} values"
        )));
    }
    Ok(())
}

/// Bytes a product needs on a device: `A`, `B`, `C` and the schedule's workspace, in `T`.
/// `None` on overflow.
pub fn device_bytes<T: Scalar>(m: usize, n: usize, k: usize, s: &Schedule) -> Option<u128> {
    let elems = (m as u128) * (k as u128)
        + (k as u128) * (n as u128)
        + (m as u128) * (n as u128)
        + s.workspace as u128;
    elems.checked_mul(std::mem::size_of::<T>() as u128)
}

/// [`Error::OutOfMemory`] of `backend` unless `needed` bytes fit in `available` (`0`: unknown,
/// no check).
pub fn check_fits(backend: &'static str, needed: u128, available: u64, what: &str) -> Result<()> {
    if available > 0 && needed > available as u128 {
        return Err(Error::out_of_memory(
            backend,
            format!(
                "{what} needs {needed} bytes ({:.2} GiB) of memory, the device has {available} \
                 ({:.2} GiB)",
                needed as f64 / (1u64 << 30) as f64,
                available as f64 / (1u64 << 30) as f64
            ),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Schedules
// ---------------------------------------------------------------------------------------------

/// An operand of a [`Schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The left input (read only).
    A,
    /// The right input (read only).
    B,
    /// The output.
    C,
    /// The workspace.
    W,
}

/// A strided block of an operand: element (i, j) is `operand[offset + i * ld + j]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Which operand.
    pub op: Operand,
    /// Offset of element (0, 0), in elements.
    pub offset: usize,
    /// Leading dimension (distance between rows), in elements.
    pub ld: usize,
}

impl Block {
    /// The block `(r, c)` rows and columns further in.
    pub fn at(self, r: usize, c: usize) -> Block {
        Block {
            offset: self.offset + r * self.ld + c,
            ..self
        }
    }
}

/// One step of a [`Schedule`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// `c = alpha · a b + beta · c` on the base kernel, `a` `m x k`, `b` `k x n`. With
    /// `beta == 0`, `c` is not read (garbage and NaN in it are overwritten).
    Gemm {
        /// Rows of `a` and `c`.
        m: usize,
        /// Columns of `b` and `c`.
        n: usize,
        /// Columns of `a`, rows of `b`.
        k: usize,
        /// Scale of the product (±1).
        alpha: f64,
        /// Scale of the old `c` (0 or 1).
        beta: f64,
        /// Left factor.
        a: Block,
        /// Right factor.
        b: Block,
        /// Output.
        c: Block,
    },
    /// `dst = alpha · x + beta · y`, all `m x n`. With `beta == 0`, `y` is not read. `dst`
    /// may be `x` itself (same block); otherwise the blocks do not overlap.
    Add {
        /// Rows.
        m: usize,
        /// Columns.
        n: usize,
        /// Scale of `x` (±1).
        alpha: f64,
        /// First input.
        x: Block,
        /// Scale of `y` (±1, or 0 for a copy).
        beta: f64,
        /// Second input.
        y: Block,
        /// Output.
        dst: Block,
    },
    /// An ABC-Strassen product on the base kernel with its operand sums and output updates
    /// fused in ([`Algorithm::Fused`]'s last level).
    Fused(Fused),
}

/// The arguments of a [`Step::Fused`] product.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    /// Rows of the factors' left terms and of the outputs.
    pub m: usize,
    /// Columns of the right terms and of the outputs.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// The left factor `a[0] + sa · a[1]` (`sa == 0`: `a[0]` alone, `a[1]` not read); both
    /// terms are blocks of one operand with one leading dimension.
    pub a: [Block; 2],
    /// Scale of `a[1]` (±1 or 0).
    pub sa: f64,
    /// The right factor `b[0] + sb · b[1]`, likewise.
    pub b: [Block; 2],
    /// Scale of `b[1]` (±1 or 0).
    pub sb: f64,
    /// Outputs: `c[i] = gamma[i] · P + beta[i] · c[i]` for `i = 0` and, when
    /// `gamma[1] != 0`, `i = 1`; `P` is the product. Blocks of one operand with one leading
    /// dimension, disjoint from each other and from the factors; `beta[i] == 0`: `c[i]` not
    /// read.
    pub c: [Block; 2],
    /// Scales of the product.
    pub gamma: [f64; 2],
    /// Scales of the old outputs (0 or 1).
    pub beta: [f64; 2],
}

/// What [`plan`] made: the algorithm and levels actually used, the steps and the workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// [`Algorithm::Tiled`], [`Algorithm::Strassen`] or [`Algorithm::Winograd`]; `Tiled`
    /// whenever `levels == 0`.
    pub algorithm: Algorithm,
    /// Recursion levels.
    pub levels: usize,
    /// `Some((algorithm, levels))` when the planner chose that Strassen-type recursion but
    /// an input holds NaN or ±∞ ([`plan_host`], [`MatMul::plan_device`]), or (host inputs,
    /// [`plan_host`]) values so large that its sums could overflow ([`recursion_safe`]):
    /// the recursion's quadrant sums would carry a non-finite `A[i][p]` into rows other
    /// than `i` (and a non-finite `B[p][j]` into columns other than `j`), so the classical
    /// base product runs instead ([`Algorithm::Tiled`], 0 levels), which gives exactly the
    /// IEEE answer of `A B`. `None` otherwise.
    pub substituted: Option<(Algorithm, usize)>,
    /// Elements of workspace `W` the steps use.
    pub workspace: usize,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Schedule {
    /// Fails with [`Error::Invalid`] unless every block of every step lies inside its
    /// operand, whose lengths are `[A, B, C, W]`: what GPU backends check before launching
    /// kernels that trust the blocks.
    pub fn check_bounds(&self, lens: [usize; 4]) -> Result<()> {
        let len = |op: Operand| match op {
            Operand::A => lens[0],
            Operand::B => lens[1],
            Operand::C => lens[2],
            Operand::W => lens[3],
        };
        let fits = |blk: &Block, rows: usize, cols: usize| {
            rows == 0
                || cols == 0
                || (cols <= blk.ld || rows == 1)
                    && (rows - 1)
                        .checked_mul(blk.ld)
                        .and_then(|v| v.checked_add(cols))
                        .and_then(|v| v.checked_add(blk.offset))
                        .is_some_and(|end| end <= len(blk.op))
        };
        for step in &self.steps {
            let ok = match step {
                Step::Gemm {
                    m, n, k, a, b, c, ..
                } => {
                    fits(a, *m, *k)
                        && fits(b, *k, *n)
                        && fits(c, *m, *n)
                        && !matches!(c.op, Operand::A | Operand::B)
                }
                Step::Add {
                    m, n, x, y, dst, ..
                } => {
                    fits(x, *m, *n)
                        && fits(y, *m, *n)
                        && fits(dst, *m, *n)
                        && !matches!(dst.op, Operand::A | Operand::B)
                }
                Step::Fused(f) => {
                    let pair = |p: &[Block; 2]| p[0].op == p[1].op && p[0].ld == p[1].ld;
                    f.a.iter().all(|a| fits(a, f.m, f.k))
                        && f.b.iter().all(|b| fits(b, f.k, f.n))
                        && f.c.iter().all(|c| fits(c, f.m, f.n))
                        && pair(&f.a)
                        && pair(&f.b)
                        && pair(&f.c)
                        && !matches!(f.c[0].op, Operand::A | Operand::B)
                }
            };
            if !ok {
                return Err(Error::invalid(
                    "matmul schedule",
                    format!("{step:?} reaches outside operands of lengths {lens:?}"),
                ));
            }
        }
        Ok(())
    }

    /// Number of base-kernel products (plain and fused).
    pub fn products(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::Gemm { .. } | Step::Fused(_)))
            .count()
    }
}

/// The schedule of `C (m x n) = A (m x k) B (k x n)`, with `A`, `B`, `C` row-major and packed
/// (leading dimensions `k`, `n`, `n`; see [`plan_strided`] for others), under `opts`;
/// `default_cutoff` is the backend's smallest profitable leaf order.
pub fn plan(m: usize, n: usize, k: usize, opts: &MatMulOptions, default_cutoff: usize) -> Schedule {
    plan_strided(m, n, k, (k, n, n), opts, default_cutoff)
}

/// The levels [`plan`] uses for this shape: see [`MatMulOptions::levels`].
pub fn choose_levels(
    m: usize,
    n: usize,
    k: usize,
    opts: &MatMulOptions,
    default_cutoff: usize,
) -> usize {
    let min = m.min(n).min(k);
    if opts.algorithm == Algorithm::Tiled || min < 2 {
        return 0;
    }
    let max_possible = min.ilog2() as usize;
    match opts.levels {
        Some(l) => l.min(max_possible),
        None => {
            let cutoff = opts.strassen_cutoff.unwrap_or(default_cutoff).max(1);
            let mut l = 0;
            while l < opts.max_depth && l < max_possible && (min >> (l + 1)) >= cutoff {
                l += 1;
            }
            if l == 0
                && matches!(
                    opts.algorithm,
                    Algorithm::Strassen | Algorithm::Winograd | Algorithm::Fused
                )
            {
                l = 1;
            }
            l
        }
    }
}

/// [`plan`] with leading dimensions `(lda, ldb, ldc)` for the operands.
pub fn plan_strided(
    m: usize,
    n: usize,
    k: usize,
    (lda, ldb, ldc): (usize, usize, usize),
    opts: &MatMulOptions,
    default_cutoff: usize,
) -> Schedule {
    let levels = choose_levels(m, n, k, opts, default_cutoff);
    let algorithm = match (levels, opts.algorithm) {
        (0, _) => Algorithm::Tiled,
        (_, Algorithm::Strassen) => Algorithm::Strassen,
        (_, Algorithm::Fused) => Algorithm::Fused,
        _ => Algorithm::Winograd,
    };
    let a = Block {
        op: Operand::A,
        offset: 0,
        ld: lda,
    };
    let b = Block {
        op: Operand::B,
        offset: 0,
        ld: ldb,
    };
    let c = Block {
        op: Operand::C,
        offset: 0,
        ld: ldc,
    };
    let mut p = Planner {
        algorithm,
        steps: Vec::new(),
        workspace: 0,
    };
    if m > 0 && n > 0 {
        if levels == 0 {
            p.gemm(m, n, k, 1.0, 0.0, a, b, c);
        } else {
            let q = 1usize << levels;
            let (m1, n1, k1) = (m / q * q, n / q * q, k / q * q);
            p.node(m1, n1, k1, a, b, c, levels, 0);
            if k1 < k {
                p.gemm(m1, n1, k - k1, 1.0, 1.0, a.at(0, k1), b.at(k1, 0), c);
            }
            if n1 < n {
                p.gemm(m1, n - n1, k, 1.0, 0.0, a, b.at(0, n1), c.at(0, n1));
            }
            if m1 < m {
                p.gemm(m - m1, n, k, 1.0, 0.0, a.at(m1, 0), b, c.at(m1, 0));
            }
        }
    }
    Schedule {
        algorithm,
        levels,
        substituted: None,
        workspace: p.workspace,
        steps: p.steps,
    }
}

/// Whether every value of `v` is finite (neither NaN nor ±∞); in parallel over long slices.
/// Reads each value once: `O(len)`, against the `O(m n k)` product it guards.
pub fn all_finite<T: Scalar>(v: &[T]) -> bool {
    const CHUNK: usize = 1 << 16;
    if v.len() <= CHUNK {
        v.iter().all(|x| x.is_finite())
    } else {
        v.par_chunks(CHUNK).all(|c| c.iter().all(|x| x.is_finite()))
    }
}

/// The largest `|x|` of `v` as f64, `∞` when a value is NaN or ±∞ (so it is finite exactly
/// when every value is); in parallel over long slices, one read per value.
pub fn max_magnitude<T: Scalar>(v: &[T]) -> f64 {
    const CHUNK: usize = 1 << 16;
    let fold = |c: &[T]| {
        c.iter()
            .fold(T::zero(), |m, &x| {
                let a = x.abs();
                if a <= m {
                    m
                } else if a.is_nan() {
                    T::infinity()
                } else {
                    a
                }
            })
            .to_f64()
    };
    if v.len() <= CHUNK {
        fold(v)
    } else {
        v.par_chunks(CHUNK).map(fold).reduce(|| 0.0, f64::max)
    }
}

/// [`max_magnitude`] of a (possibly strided) view.
pub fn view_max_magnitude<T: Scalar>(v: DenseView<'_, T>) -> f64 {
    if v.rows() == 0 || v.cols() == 0 {
        return 0.0;
    }
    if v.is_contiguous() {
        return max_magnitude(&v.data()[..v.rows() * v.cols()]);
    }
    let per = (1usize << 16).div_ceil(v.cols()).max(1);
    (0..v.rows())
        .into_par_iter()
        .with_min_len(per)
        .map(|i| max_magnitude(v.row(i)))
        .reduce(|| 0.0, f64::max)
}

/// Whether `levels` Strassen-type levels over inner dimension `k` can run on inputs whose
/// largest magnitudes are `amax` and `bmax` without any sum overflowing where the classical
/// product does not: both finite, and below `T`'s largest value `max` by the recursion's
/// growth. Per level, Winograd's operand sums reach 4 times their quadrants' largest entry
/// (`S4 = A12 − A21 − A22 + A11`; Strassen's 2) and its output sums 4 products, so every
/// intermediate is at most `k · 32^L · amax · bmax` (`4^L · amax` on the `A` side): required
/// here with a margin of 2 (`2 k 64^L amax bmax < max`).
pub fn recursion_safe(levels: usize, k: usize, amax: f64, bmax: f64, max: f64) -> bool {
    let l = levels.min(64) as i32;
    let g = 4f64.powi(l);
    amax.is_finite()
        && bmax.is_finite()
        && amax * g < max
        && bmax * g < max
        && 2.0 * k as f64 * 64f64.powi(l) * amax * bmax < max
}

/// `s` for the product `m x k · k x n` with leading dimensions `lds` (as [`plan_strided`]),
/// unless it recurses (`s.levels > 0`) and `safe` (run only then, given `s`) says the
/// inputs are not safe for it: then the classical schedule of the same product, with
/// [`Schedule::substituted`] naming what it replaces. Strassen-type sums of quadrants spread
/// a non-finite input to rows and columns its classical product never reaches
/// (`M1 = (A11 + A22)(B11 + B22)` feeds `C11` and `C22`), turn `∞ − ∞` into NaN, and
/// overflow on finite inputs near the type's range where the classical product does not;
/// the classical product keeps IEEE's pattern: a non-finite `A[i][p]` reaches row `i`
/// only, a non-finite `B[p][j]` column `j` only. The one place every backend's `matmul`
/// ([`plan_host`]) and `gemm` ([`MatMul::plan_device`]) make this choice.
pub fn classical_unless_safe(
    s: Schedule,
    (m, n, k): (usize, usize, usize),
    lds: (usize, usize, usize),
    safe: impl FnOnce(&Schedule) -> Result<bool>,
) -> Result<Schedule> {
    if s.levels == 0 || safe(&s)? {
        return Ok(s);
    }
    let mut c = plan_strided(
        m,
        n,
        k,
        lds,
        &MatMulOptions::with(Algorithm::Tiled, None),
        1,
    );
    c.substituted = Some((s.algorithm, s.levels));
    Ok(c)
}

/// The schedule of `a b` on host inputs ([`MatMul::matmul`]): [`plan_strided`]'s, then
/// [`classical_unless_safe`] with one scan of `a` and `b` on the host (only when the plan
/// recurses): the classical product when an input holds NaN or ±∞, or values so large that
/// the recursion could overflow ([`recursion_safe`]). `lds` are the leading dimensions the
/// schedule will run with.
pub fn plan_host<T: Scalar>(
    a: DenseView<'_, T>,
    b: DenseView<'_, T>,
    lds: (usize, usize, usize),
    opts: &MatMulOptions,
    default_cutoff: usize,
) -> Result<Schedule> {
    let (m, n, k) = check_shapes(a.shape(), b.shape())?;
    let s = plan_strided(m, n, k, lds, opts, default_cutoff);
    classical_unless_safe(s, (m, n, k), lds, |s| {
        let amax = view_max_magnitude(a);
        let bmax = if amax.is_finite() {
            view_max_magnitude(b)
        } else {
            f64::INFINITY
        };
        Ok(recursion_safe(
            s.levels,
            k,
            amax,
            bmax,
            T::max_value().to_f64(),
        ))
    })
}

struct Planner {
    algorithm: Algorithm,
    steps: Vec<Step>,
    workspace: usize,
}

impl Planner {
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &mut self,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        beta: f64,
        a: Block,
        b: Block,
        c: Block,
    ) {
        self.steps.push(Step::Gemm {
            m,
            n,
            k,
            alpha,
            beta,
            a,
            b,
            c,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn add(&mut self, m: usize, n: usize, alpha: f64, x: Block, beta: f64, y: Block, dst: Block) {
        self.steps.push(Step::Add {
            m,
            n,
            alpha,
            x,
            beta,
            y,
            dst,
        });
    }

    /// One level of ABC Strassen: `c = alpha · a b + beta · c` (`m`, `n`, `k` even) as 7
    /// [`Step::Fused`] products of quadrant sums, each added into its quadrants of `c` (the
    /// first product to reach a quadrant scales the old one by `beta`, later ones by 1).
    #[allow(clippy::too_many_arguments)]
    fn abc(
        &mut self,
        (m, n, k): (usize, usize, usize),
        alpha: f64,
        beta: f64,
        a: Block,
        b: Block,
        c: Block,
    ) {
        let (mh, nh, kh) = (m / 2, n / 2, k / 2);
        let a_q = [a, a.at(0, kh), a.at(mh, 0), a.at(mh, kh)]; // A11 A12 A21 A22
        let b_q = [b, b.at(0, nh), b.at(kh, 0), b.at(kh, nh)];
        let c_q = [c, c.at(0, nh), c.at(mh, 0), c.at(mh, nh)];
        // (A terms, sa), (B terms, sb), outputs (quadrant, sign): Strassen's M1..M7, in an
        // order where each quadrant's first write comes first.
        #[allow(clippy::type_complexity)]
        let products: [((usize, usize, f64), (usize, usize, f64), &[(usize, f64)]); 7] = [
            ((0, 3, 1.0), (0, 3, 1.0), &[(0, 1.0), (3, 1.0)]), // M1: C11, C22
            ((2, 3, 1.0), (0, 0, 0.0), &[(2, 1.0), (3, -1.0)]), // M2: C21, C22 -=
            ((0, 0, 0.0), (1, 3, -1.0), &[(1, 1.0), (3, 1.0)]), // M3: C12, C22
            ((3, 3, 0.0), (2, 0, -1.0), &[(0, 1.0), (2, 1.0)]), // M4: C11, C21
            ((0, 1, 1.0), (3, 3, 0.0), &[(0, -1.0), (1, 1.0)]), // M5: C11 -=, C12
            ((2, 0, -1.0), (0, 1, 1.0), &[(3, 1.0)]),          // M6: C22
            ((1, 3, -1.0), (2, 3, 1.0), &[(0, 1.0)]),          // M7: C11
        ];
        let mut written = [false; 4];
        for ((a0, a1, sa), (b0, b1, sb), outs) in products {
            let mut c = [c_q[outs[0].0]; 2];
            let mut gamma = [0.0; 2];
            let mut betas = [0.0; 2];
            for (i, &(q, sign)) in outs.iter().enumerate() {
                c[i] = c_q[q];
                gamma[i] = alpha * sign;
                betas[i] = if written[q] { 1.0 } else { beta };
                written[q] = true;
            }
            self.steps.push(Step::Fused(Fused {
                m: mh,
                n: nh,
                k: kh,
                a: [a_q[a0], a_q[a1]],
                sa,
                b: [b_q[b0], b_q[b1]],
                sb,
                c,
                gamma,
                beta: betas,
            }));
        }
    }

    /// `dst = alpha · a b + beta · dst` with `levels` levels of recursion below; `z` is a
    /// free temporary of the caller's (`m x n`) for the non-fused forms.
    #[allow(clippy::too_many_arguments)]
    fn product(
        &mut self,
        (m, n, k): (usize, usize, usize),
        alpha: f64,
        beta: f64,
        a: Block,
        b: Block,
        dst: Block,
        z: Block,
        levels: usize,
        ws: usize,
    ) {
        if levels == 0 {
            self.gemm(m, n, k, alpha, beta, a, b, dst);
        } else if levels == 1 && self.algorithm == Algorithm::Fused {
            self.abc((m, n, k), alpha, beta, a, b, dst);
        } else if alpha == 1.0 && beta == 0.0 {
            self.node(m, n, k, a, b, dst, levels, ws);
        } else {
            self.node(m, n, k, a, b, z, levels, ws);
            self.add(m, n, beta, dst, alpha, z, dst);
        }
    }

    /// One Strassen node: `c = a b` with `a` `m x k`, `b` `k x n` (all divisible by
    /// `2^levels`), its temporaries at `ws` in the workspace.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        m: usize,
        n: usize,
        k: usize,
        a: Block,
        b: Block,
        c: Block,
        levels: usize,
        ws: usize,
    ) {
        if levels == 1 && self.algorithm == Algorithm::Fused {
            self.abc((m, n, k), 1.0, 0.0, a, b, c);
            return;
        }
        let (mh, nh, kh) = (m / 2, n / 2, k / 2);
        let w = |offset: usize, ld: usize| Block {
            op: Operand::W,
            offset,
            ld,
        };
        let x = w(ws, kh);
        let y = w(ws + mh * kh, nh);
        let z = w(ws + mh * kh + kh * nh, nh);
        let next = ws + mh * kh + kh * nh + mh * nh;
        self.workspace = self.workspace.max(next);
        let (a11, a12, a21, a22) = (a, a.at(0, kh), a.at(mh, 0), a.at(mh, kh));
        let (b11, b12, b21, b22) = (b, b.at(0, nh), b.at(kh, 0), b.at(kh, nh));
        let (c11, c12, c21, c22) = (c, c.at(0, nh), c.at(mh, 0), c.at(mh, nh));
        let (sa, sb, sc) = ((mh, kh), (kh, nh), (mh, nh));
        let lv = levels - 1;
        let dims = (mh, nh, kh);
        macro_rules! add {
            ($s:expr, $alpha:expr, $x:expr, $beta:expr, $y:expr => $d:expr) => {
                self.add($s.0, $s.1, $alpha, $x, $beta, $y, $d)
            };
        }
        macro_rules! prod {
            ($alpha:expr, $beta:expr, $a:expr, $b:expr => $d:expr) => {
                self.product(dims, $alpha, $beta, $a, $b, $d, z, lv, next)
            };
        }
        match self.algorithm {
            Algorithm::Strassen => {
                // M1 = (A11 + A22)(B11 + B22) -> C11, C22
                add!(sa, 1.0, a11, 1.0, a22 => x);
                add!(sb, 1.0, b11, 1.0, b22 => y);
                prod!(1.0, 0.0, x, y => c11);
                add!(sc, 1.0, c11, 0.0, c11 => c22);
                // M2 = (A21 + A22) B11 -> C21; C22 -= M2
                add!(sa, 1.0, a21, 1.0, a22 => x);
                prod!(1.0, 0.0, x, b11 => c21);
                add!(sc, 1.0, c22, -1.0, c21 => c22);
                // M3 = A11 (B12 - B22) -> C12; C22 += M3
                add!(sb, 1.0, b12, -1.0, b22 => y);
                prod!(1.0, 0.0, a11, y => c12);
                add!(sc, 1.0, c22, 1.0, c12 => c22);
                // M4 = A22 (B21 - B11) -> Z; C11 += M4, C21 += M4
                add!(sb, 1.0, b21, -1.0, b11 => y);
                prod!(1.0, 0.0, a22, y => z);
                add!(sc, 1.0, c11, 1.0, z => c11);
                add!(sc, 1.0, c21, 1.0, z => c21);
                // M5 = (A11 + A12) B22 -> Z; C11 -= M5, C12 += M5
                add!(sa, 1.0, a11, 1.0, a12 => x);
                prod!(1.0, 0.0, x, b22 => z);
                add!(sc, 1.0, c11, -1.0, z => c11);
                add!(sc, 1.0, c12, 1.0, z => c12);
                // M6 = (A21 - A11)(B11 + B12); C22 += M6
                add!(sa, 1.0, a21, -1.0, a11 => x);
                add!(sb, 1.0, b11, 1.0, b12 => y);
                prod!(1.0, 1.0, x, y => c22);
                // M7 = (A12 - A22)(B21 + B22); C11 += M7
                add!(sa, 1.0, a12, -1.0, a22 => x);
                add!(sb, 1.0, b21, 1.0, b22 => y);
                prod!(1.0, 1.0, x, y => c11);
            }
            _ => {
                // Winograd: S3 = A11 - A21, T3 = B22 - B12, P7 = S3 T3 -> C21
                add!(sa, 1.0, a11, -1.0, a21 => x);
                add!(sb, 1.0, b22, -1.0, b12 => y);
                prod!(1.0, 0.0, x, y => c21);
                // S1 = A21 + A22, T1 = B12 - B11, P5 = S1 T1 -> C22
                add!(sa, 1.0, a21, 1.0, a22 => x);
                add!(sb, 1.0, b12, -1.0, b11 => y);
                prod!(1.0, 0.0, x, y => c22);
                // S2 = S1 - A11, T2 = B22 - T1, P6 = S2 T2 -> C12
                add!(sa, 1.0, x, -1.0, a11 => x);
                add!(sb, -1.0, y, 1.0, b22 => y);
                prod!(1.0, 0.0, x, y => c12);
                // S4 = A12 - S2; P1 = A11 B11 -> C11
                add!(sa, -1.0, x, 1.0, a12 => x);
                prod!(1.0, 0.0, a11, b11 => c11);
                // U2 = P1 + P6 (C12), U3 = U2 + P7 (C21), U4 = U2 + P5 (C12),
                // U7 = U3 + P5 (C22, final)
                add!(sc, 1.0, c12, 1.0, c11 => c12);
                add!(sc, 1.0, c21, 1.0, c12 => c21);
                add!(sc, 1.0, c12, 1.0, c22 => c12);
                add!(sc, 1.0, c22, 1.0, c21 => c22);
                // U5 = U4 + P3, P3 = S4 B22 (C12, final)
                prod!(1.0, 1.0, x, b22 => c12);
                // T4 = T2 - B21; U6 = U3 - P4, P4 = A22 T4 (C21, final)
                add!(sb, 1.0, y, -1.0, b21 => y);
                prod!(-1.0, 1.0, a22, y => c21);
                // U1 = P1 + P2, P2 = A12 B21 (C11, final)
                prod!(1.0, 1.0, a12, b21 => c11);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Host execution of a schedule (CPU backend, tests)
// ---------------------------------------------------------------------------------------------

/// A read-only strided block handed to a base-kernel callback of [`execute_host`].
#[derive(Debug, Clone, Copy)]
pub struct HostBlock<'a, T> {
    /// The values from element (0, 0) on (element (i, j) at `i * ld + j`).
    pub data: &'a [T],
    /// Leading dimension.
    pub ld: usize,
}

/// The output block handed to a base-kernel callback of [`execute_host`].
#[derive(Debug)]
pub struct HostBlockMut<'a, T> {
    /// The values from element (0, 0) on, exactly `(m - 1) * ld + n` of them.
    pub data: &'a mut [T],
    /// Leading dimension.
    pub ld: usize,
}

/// The arguments of one base-kernel product `c = alpha a b + beta c` (`beta == 0`: `c` is
/// not read).
#[derive(Debug)]
pub struct GemmCall<'a, T> {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Product scale.
    pub alpha: T,
    /// Output scale.
    pub beta: T,
    /// `m x k`.
    pub a: HostBlock<'a, T>,
    /// `k x n`.
    pub b: HostBlock<'a, T>,
    /// `m x n`.
    pub c: HostBlockMut<'a, T>,
}

/// Runs `schedule` on host memory: `a` (`m x k`, leading dimension as planned), `b`, the
/// output `c` and a workspace `w` of at least [`Schedule::workspace`] elements, with `gemm`
/// as the base kernel. Fails with [`Error::Shape`] when a step reaches outside its operand or
/// (a planner bug) an output overlaps an input.
pub fn execute_host<T: Scalar>(
    schedule: &Schedule,
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    mut gemm: impl FnMut(GemmCall<'_, T>),
) -> Result<()> {
    let extent = |blk: Block, m: usize, n: usize| -> usize {
        if m == 0 || n == 0 {
            0
        } else {
            (m - 1) * blk.ld + n
        }
    };
    for step in &schedule.steps {
        match *step {
            Step::Gemm {
                m,
                n,
                k,
                alpha,
                beta,
                a: ba,
                b: bb,
                c: bc,
            } => {
                if m == 0 || n == 0 {
                    continue;
                }
                let (ea, eb, ec) = (extent(ba, m, k), extent(bb, k, n), extent(bc, m, n));
                let (out_buf, before, after, other) = split_out(c, w, bc, ec)?;
                let pick = |blk: Block, len: usize| -> Result<&[T]> {
                    let src: &[T] = match blk.op {
                        Operand::A => a,
                        Operand::B => b,
                        op if op == bc.op => {
                            return disjoint_read(before, after, bc.offset, ec, blk.offset, len)
                        }
                        Operand::C | Operand::W => other,
                    };
                    src.get(blk.offset..blk.offset + len)
                        .ok_or_else(|| Error::shape("schedule step outside its operand"))
                };
                let da = pick(ba, ea)?;
                let db = pick(bb, eb)?;
                gemm(GemmCall {
                    m,
                    n,
                    k,
                    alpha: T::from_f64(alpha),
                    beta: T::from_f64(beta),
                    a: HostBlock {
                        data: da,
                        ld: ba.ld,
                    },
                    b: HostBlock {
                        data: db,
                        ld: bb.ld,
                    },
                    c: HostBlockMut {
                        data: out_buf,
                        ld: bc.ld,
                    },
                });
            }
            Step::Add {
                m,
                n,
                alpha,
                x,
                beta,
                y,
                dst,
            } => {
                let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
                if add_rows_parallel(a, b, c, w, (m, n), alpha, x, beta, y, dst)? {
                    continue;
                }
                for i in 0..m {
                    add_row(
                        a,
                        b,
                        c,
                        w,
                        n,
                        alpha,
                        x.at(i, 0),
                        beta,
                        y.at(i, 0),
                        dst.at(i, 0),
                    )?;
                }
            }
            Step::Fused(f) => execute_fused_host(&f, a, b, c, w, &mut gemm)?,
        }
    }
    Ok(())
}

/// A [`Step::Fused`] on the host: the two factor sums materialised (in `T`, as a device
/// kernel forms them while loading tiles), their product by the base kernel into a
/// temporary, then added into the outputs. The CPU gains nothing from fused steps (it
/// allocates per step); they run here so that the host executes every schedule.
fn execute_fused_host<T: Scalar>(
    f: &Fused,
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    gemm: &mut impl FnMut(GemmCall<'_, T>),
) -> Result<()> {
    let (m, n, k) = (f.m, f.n, f.k);
    if m == 0 || n == 0 {
        return Ok(());
    }
    // Row `i` (`cols` values) of block `blk`.
    fn row<T>(blk: Block, i: usize, cols: usize, ops: [&[T]; 4]) -> Result<&[T]> {
        let src = match blk.op {
            Operand::A => ops[0],
            Operand::B => ops[1],
            Operand::C => ops[2],
            Operand::W => ops[3],
        };
        let start = blk.offset + i * blk.ld;
        src.get(start..start + cols)
            .ok_or_else(|| Error::shape("schedule step outside its operand"))
    }
    // `t[0] + s t[1]`, `rows x cols`, packed; row by row (vectorisable inner loops).
    let sum = |t: [Block; 2], s: f64, rows: usize, cols: usize, c: &[T], w: &[T]| {
        let ops = [a, b, c, w];
        let s = T::from_f64(s);
        let mut v = Vec::with_capacity(rows * cols);
        for i in 0..rows {
            let x = row(t[0], i, cols, ops)?;
            if s == T::zero() {
                v.extend_from_slice(x);
            } else {
                let y = row(t[1], i, cols, ops)?;
                v.extend(x.iter().zip(y).map(|(&x, &y)| x + s * y));
            }
        }
        Ok::<_, Error>(v)
    };
    let fa = sum(f.a, f.sa, m, k, c, w)?;
    let fb = sum(f.b, f.sb, k, n, c, w)?;
    let mut p = vec![T::zero(); m * n];
    gemm(GemmCall {
        m,
        n,
        k,
        alpha: T::from_f64(1.0),
        beta: T::zero(),
        a: HostBlock { data: &fa, ld: k },
        b: HostBlock { data: &fb, ld: n },
        c: HostBlockMut {
            data: &mut p,
            ld: n,
        },
    });
    for o in 0..2 {
        if o == 1 && f.gamma[1] == 0.0 {
            break;
        }
        let blk = f.c[o];
        let (g, be) = (T::from_f64(f.gamma[o]), T::from_f64(f.beta[o]));
        let buf = match blk.op {
            Operand::C => &mut *c,
            Operand::W => &mut *w,
            _ => return Err(Error::shape("schedule writes an input")),
        };
        for i in 0..m {
            let row = buf
                .get_mut(blk.offset + i * blk.ld..blk.offset + i * blk.ld + n)
                .ok_or_else(|| Error::shape("schedule step outside its operand"))?;
            for (d, &v) in row.iter_mut().zip(&p[i * n..(i + 1) * n]) {
                *d = if be == T::zero() {
                    g * v
                } else {
                    g * v + be * *d
                };
            }
        }
    }
    Ok(())
}

/// The output region `[offset, offset + len)` of `blk`'s operand (C or W), the parts of that
/// operand before and after it, and the other one of C and W.
#[allow(clippy::type_complexity)]
fn split_out<'s, T>(
    c: &'s mut [T],
    w: &'s mut [T],
    blk: Block,
    len: usize,
) -> Result<(&'s mut [T], &'s [T], &'s [T], &'s [T])> {
    let (buf, other) = match blk.op {
        Operand::C => (c, &*w),
        Operand::W => (w, &*c),
        _ => return Err(Error::shape("schedule writes an input")),
    };
    if blk.offset + len > buf.len() {
        return Err(Error::shape("schedule step outside its operand"));
    }
    let (before, rest) = buf.split_at_mut(blk.offset);
    let (out, after) = rest.split_at_mut(len);
    Ok((out, before, after, other))
}

/// `[offset, offset + len)` of an operand split around the output `[out, out + out_len)`.
fn disjoint_read<'s, T>(
    before: &'s [T],
    after: &'s [T],
    out: usize,
    out_len: usize,
    offset: usize,
    len: usize,
) -> Result<&'s [T]> {
    if offset + len <= out {
        Ok(&before[offset..offset + len])
    } else if offset >= out + out_len {
        let o = offset - out - out_len;
        after
            .get(o..o + len)
            .ok_or_else(|| Error::shape("schedule step outside its operand"))
    } else {
        Err(Error::shape("schedule input overlaps its output"))
    }
}

/// One row of an [`Step::Add`]: `dst[..n] = alpha x[..n] + beta y[..n]`.
#[allow(clippy::too_many_arguments)]
fn add_row<T: Scalar>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    n: usize,
    alpha: T,
    x: Block,
    beta: T,
    y: Block,
    dst: Block,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let (out, before, after, other) = split_out(c, w, dst, n)?;
    let read = |blk: Block| -> Result<Option<&[T]>> {
        if blk.op == dst.op && blk.offset == dst.offset {
            return Ok(None); // the output itself
        }
        match blk.op {
            Operand::A => a.get(blk.offset..blk.offset + n),
            Operand::B => b.get(blk.offset..blk.offset + n),
            op if op == dst.op => {
                return disjoint_read(before, after, dst.offset, n, blk.offset, n).map(Some)
            }
            Operand::C | Operand::W => other.get(blk.offset..blk.offset + n),
        }
        .map(Some)
        .ok_or_else(|| Error::shape("schedule step outside its operand"))
    };
    let xs = read(x)?;
    let ys = if beta == T::zero() { None } else { read(y)? };
    combine(out, xs, ys, alpha, beta);
    Ok(())
}

/// `out = alpha x + beta y` elementwise, `None` standing for `out` itself; `y` is not read
/// when `beta` is zero.
fn combine<T: Scalar>(out: &mut [T], xs: Option<&[T]>, ys: Option<&[T]>, alpha: T, beta: T) {
    if beta == T::zero() {
        match xs {
            Some(xs) => out.iter_mut().zip(xs).for_each(|(d, &x)| *d = alpha * x),
            None => out.iter_mut().for_each(|d| *d *= alpha),
        }
        return;
    }
    match (xs, ys) {
        (Some(xs), Some(ys)) => out
            .iter_mut()
            .zip(xs.iter().zip(ys))
            .for_each(|(d, (&x, &y))| *d = alpha * x + beta * y),
        (None, Some(ys)) => out
            .iter_mut()
            .zip(ys)
            .for_each(|(d, &y)| *d = alpha * *d + beta * y),
        (Some(xs), None) => out
            .iter_mut()
            .zip(xs)
            .for_each(|(d, &x)| *d = alpha * x + beta * *d),
        (None, None) => out.iter_mut().for_each(|d| *d = (alpha + beta) * *d),
    }
}

/// Elements of an [`Step::Add`] from which [`add_rows_parallel`] splits the rows over
/// threads (below, the serial row loop is cheaper).
const PARALLEL_ADD_MIN: usize = 1 << 16;

/// A whole [`Step::Add`] with its rows spread over rayon's threads, when every operand's
/// rows lie apart from the output's (or are the output itself); returns `false` (nothing
/// done) otherwise, or when the step is small, and [`execute_host`] runs the rows in turn.
/// Each row gets exactly the arithmetic of [`add_row`], so the result does not depend on
/// the path.
#[allow(clippy::too_many_arguments)]
fn add_rows_parallel<T: Scalar>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    (m, n): (usize, usize),
    alpha: T,
    x: Block,
    beta: T,
    y: Block,
    dst: Block,
) -> Result<bool> {
    if m < 2 || n == 0 || m * n < PARALLEL_ADD_MIN || dst.ld < n {
        return Ok(false);
    }
    let extent = |blk: Block| (m - 1) * blk.ld + n;
    let (out, before, after, other) = split_out(c, w, dst, extent(dst))?;
    // Some(None): the output itself; None: not splittable, take the row loop.
    let region = |blk: Block| -> Option<Option<&[T]>> {
        if blk.op == dst.op && blk.offset == dst.offset && blk.ld == dst.ld {
            return Some(None);
        }
        let len = extent(blk);
        let src = match blk.op {
            Operand::A => a.get(blk.offset..blk.offset + len),
            Operand::B => b.get(blk.offset..blk.offset + len),
            op if op == dst.op => {
                disjoint_read(before, after, dst.offset, extent(dst), blk.offset, len).ok()
            }
            Operand::C | Operand::W => other.get(blk.offset..blk.offset + len),
        }?;
        Some(Some(src))
    };
    let Some(xs) = region(x) else {
        return Ok(false);
    };
    let ys = if beta == T::zero() {
        None
    } else {
        match region(y) {
            Some(ys) => ys,
            None => return Ok(false),
        }
    };
    out.par_chunks_mut(dst.ld)
        .enumerate()
        .for_each(|(i, chunk)| {
            let (xr, yr) = (row(xs, x.ld, i, n), row(ys, y.ld, i, n));
            combine(&mut chunk[..n], xr, yr, alpha, beta);
        });
    Ok(true)
}

/// Row `i` (`n` values) of a region with leading dimension `ld`.
fn row<T>(s: Option<&[T]>, ld: usize, i: usize, n: usize) -> Option<&[T]> {
    s.map(|s| &s[i * ld..i * ld + n])
}

/// A naive base kernel for [`execute_host`] (tests and the fallback): each output entry
/// summed in `T` in `k` order.
pub fn naive_gemm<T: Scalar>(g: GemmCall<'_, T>) {
    for i in 0..g.m {
        for j in 0..g.n {
            let mut s = T::zero();
            for p in 0..g.k {
                s += g.a.data[i * g.a.ld + p] * g.b.data[p * g.b.ld + j];
            }
            let d = &mut g.c.data[i * g.c.ld + j];
            *d = if g.beta == T::zero() {
                g.alpha * s
            } else {
                g.alpha * s + g.beta * *d
            };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reference and accuracy contract
// ---------------------------------------------------------------------------------------------

/// `A B` in f64 (row-major `m x n`), blocked over `k` and `n` so that a block of `B` rows stays
/// in cache: the yardstick of the conformance suite, the benchmarks and the CLI. Inputs are
/// widened exactly; NaN and infinity propagate as in any IEEE sum of products.
pub fn reference<T: Scalar>(a: DenseView<'_, T>, b: DenseView<'_, T>) -> Result<Vec<f64>> {
    let (m, n, k) = check_shapes(a.shape(), b.shape())?;
    const KB: usize = 128;
    const NB: usize = 512;
    let mut c = vec![0.0f64; m * n];
    let bw: Vec<f64> = (0..k)
        .flat_map(|p| b.row(p).iter().map(|v| Scalar::to_f64(*v)))
        .collect();
    for j0 in (0..n).step_by(NB) {
        let j1 = (j0 + NB).min(n);
        for p0 in (0..k).step_by(KB) {
            let p1 = (p0 + KB).min(k);
            for i in 0..m {
                let arow = a.row(i);
                let crow = &mut c[i * n + j0..i * n + j1];
                for (p, av) in arow.iter().enumerate().take(p1).skip(p0) {
                    let av = Scalar::to_f64(*av);
                    let brow = &bw[p * n + j0..p * n + j1];
                    for (cv, bv) in crow.iter_mut().zip(brow) {
                        *cv += av * bv;
                    }
                }
            }
        }
    }
    Ok(c)
}

/// `‖X‖_M`: the largest absolute finite entry (NaN and infinities ignored; 0 for an empty
/// matrix).
pub fn max_abs<T: Scalar>(x: DenseView<'_, T>) -> f64 {
    (0..x.rows())
        .flat_map(|i| x.row(i).iter())
        .map(|v| Scalar::to_f64(*v).abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// Higham's constant `c(k, L)` of [`tolerance`] (in units of the unit roundoff `u`).
///
/// For `L` levels over a conventional base with leaf inner dimension `k0 = ⌈k / 2^L⌉` and
/// `n = 2^L k0` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §23.2.2,
/// Thms 23.2 and 23.3, and the Winograd variant's bound of Higham 1990):
///
/// - conventional (`L = 0`): `k²` (from `|C − Ĉ| ≤ γ_k |A||B|`);
/// - Strassen: `(n / k0)^{log2 12} (k0² + 5 k0) − 5 n`, i.e. `12^L (k0² + 5 k0) − 5 n`;
/// - Winograd: `18^L (k0² + 6 k0) − 6 n`; also used for [`Algorithm::Fused`] (Winograd
///   levels over one Strassen level, whose constant is smaller), so an upper bound there.
///
/// Plus `(2^L + 2) k` for the peeled edge updates of shapes that are not multiples of `2^L`
/// and the final accumulation into `C`. The bound is a worst case: measured errors are 10²
/// to 10⁴ times smaller, and grow with `L` by roughly the factors 12 and 18 only in the worst
/// case (the conformance check `matmul_error_per_level_*` prints them).
pub fn higham_constant(algorithm: Algorithm, levels: usize, k: usize) -> f64 {
    let k = k.max(1) as f64;
    if levels == 0 || matches!(algorithm, Algorithm::Tiled) {
        return k * k + 2.0 * k;
    }
    let q = (1u64 << levels.min(60)) as f64;
    let k0 = (k / q).ceil();
    let n = q * k0;
    let lf = levels as f64;
    let core = match algorithm {
        Algorithm::Strassen => 12f64.powf(lf) * (k0 * k0 + 5.0 * k0) - 5.0 * n,
        _ => 18f64.powf(lf) * (k0 * k0 + 6.0 * k0) - 6.0 * n,
    };
    core + (q + 2.0) * k
}

/// The accuracy contract of [`MatMul`]: every entry satisfies
/// `|C_ij − Ĉ_ij| ≤ c(k, L) · u · ‖A‖_M ‖B‖_M`, with `u = ε / 2` the unit roundoff of `T`,
/// `‖·‖_M` the largest absolute entry and `c` [`higham_constant`]. As a [`Tolerance`]:
/// `factor = c(k, L) / 2` (in units of `ε`), to be applied with
/// `scale = ‖A‖_M ‖B‖_M`.
pub fn tolerance<T: Scalar>(algorithm: Algorithm, levels: usize, k: usize) -> Tolerance {
    Tolerance::of::<T>(higham_constant(algorithm, levels, k) / 2.0)
}

/// Measured error of a product: `max |C_ij − ref_ij| / (ε_T ‖A‖_M ‖B‖_M)` over the finite
/// reference entries (`INFINITY` where a finite reference entry came back non-finite).
pub fn relative_error<T: Scalar>(c: &[T], reference: &[f64], scale: f64) -> f64 {
    let denom = (Scalar::to_f64(T::EPS) * scale).max(f64::MIN_POSITIVE);
    c.iter()
        .zip(reference)
        .filter(|(_, r)| r.is_finite())
        .map(|(g, r)| {
            let e = (Scalar::to_f64(*g) - r).abs();
            if e.is_finite() {
                e / denom
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max)
}

/// Checks `c` (row-major `m x n`) against `reference` under [`tolerance`] for `schedule`;
/// entries whose reference is NaN must be NaN, and infinite ones the same infinity
/// (for the tiled algorithm) or non-finite (Strassen sums may turn `∞` into NaN). The error
/// names the first bad entry.
pub fn check_result<T: Scalar>(
    c: &[T],
    reference: &[f64],
    n: usize,
    k: usize,
    scale: f64,
    schedule: &Schedule,
) -> std::result::Result<(), String> {
    if c.len() != reference.len() {
        return Err(format!(
            "C has {} entries, expected {}",
            c.len(),
            reference.len()
        ));
    }
    check_rows(c, reference, 0, n, k, scale, schedule)
}

/// [`check_result`] on rows `first_row..` of a product (`c` and `reference` hold those rows
/// only): errors name entries by their row in the whole product.
fn check_rows<T: Scalar>(
    c: &[T],
    reference: &[f64],
    first_row: usize,
    n: usize,
    k: usize,
    scale: f64,
    schedule: &Schedule,
) -> std::result::Result<(), String> {
    let tol = tolerance::<T>(schedule.algorithm, schedule.levels, k);
    let strassen = schedule.levels > 0;
    for (idx, (got, want)) in c.iter().zip(reference).enumerate() {
        let got = Scalar::to_f64(*got);
        let (i, j) = (first_row + idx / n.max(1), idx % n.max(1));
        let bad = |m: String| {
            format!(
                "C[{i}, {j}]: {m} ({} with {} levels, k = {k})",
                schedule.algorithm.name(),
                schedule.levels
            )
        };
        if want.is_nan() {
            if !got.is_nan() {
                return Err(bad(format!("got {got:e}, expected NaN")));
            }
        } else if want.is_infinite() {
            let ok = if strassen {
                !got.is_finite()
            } else {
                got == *want
            };
            if !ok {
                return Err(bad(format!("got {got:e}, expected {want:e}")));
            }
        } else if !(strassen && !got.is_finite() && !scale.is_finite()) {
            tol.check(got, *want, scale).map_err(bad)?;
        }
    }
    Ok(())
}

/// Checks `c = a b` (row-major `m x n`) on up to `rows` evenly spaced rows (all rows when
/// `rows >= m`) against the f64 reference of those rows, under [`check_result`]'s rules for
/// `schedule`: how benchmarks and the CLI check products too large for a full reference.
/// Returns the measured error of the checked rows (see [`relative_error`]).
pub fn check_sampled<T: Scalar>(
    a: DenseView<'_, T>,
    b: DenseView<'_, T>,
    c: &[T],
    schedule: &Schedule,
    rows: usize,
) -> std::result::Result<f64, String> {
    let (m, n, k) = check_shapes(a.shape(), b.shape()).map_err(|e| e.to_string())?;
    if c.len() != m * n {
        return Err(format!("C has {} entries, expected {m} x {n}", c.len()));
    }
    let scale = max_abs(a) * max_abs(b);
    let picks: Vec<usize> = if rows >= m {
        (0..m).collect()
    } else {
        let mut p: Vec<usize> = (0..rows).map(|i| i * (m - 1) / (rows - 1).max(1)).collect();
        p.dedup();
        p
    };
    let mut worst = 0f64;
    for i in picks {
        let ai = a.block(i, 0, 1, k).map_err(|e| e.to_string())?;
        let r = reference(ai, b).map_err(|e| e.to_string())?;
        let got = &c[i * n..(i + 1) * n];
        check_rows(got, &r, i, n, k, scale, schedule)?;
        worst = worst.max(relative_error(got, &r, scale));
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel add of a large step gives exactly the row loop's values (separate
    /// operands, the output in place, the output's own buffer), and declines quadrants that
    /// share rows with the output.
    #[test]
    fn parallel_adds_equal_the_row_loop() {
        let (m, n, ld) = (300usize, 290usize, 600usize);
        let fill = |len: usize, seed: u64| -> Vec<f64> {
            (0..len)
                .map(|i| ((i as u64 * 2654435761 + seed) % 1000) as f64 / 7.0 - 60.0)
                .collect()
        };
        let a = fill(m * ld, 1);
        let b = fill(m * ld, 2);
        let blk = |op, offset| Block { op, offset, ld };
        let cases = [
            // C11 = 2 A11 - 3 W[second half]
            (
                blk(Operand::A, 0),
                blk(Operand::W, m * ld),
                blk(Operand::C, 0),
                3.0,
            ),
            // C22 = 2 C22 + 0.5 B12: in place
            (
                blk(Operand::C, m * ld + 300),
                blk(Operand::B, 300),
                blk(Operand::C, m * ld + 300),
                0.5,
            ),
            // W[first half] = 2 W[second half] - A: same buffer, disjoint extents
            (
                blk(Operand::W, m * ld),
                blk(Operand::A, 0),
                blk(Operand::W, 0),
                -1.0,
            ),
            // beta = 0: y is not read
            (
                blk(Operand::B, 0),
                blk(Operand::W, 7),
                blk(Operand::C, 300),
                0.0,
            ),
        ];
        for (k, &(x, y, dst, beta)) in cases.iter().enumerate() {
            let (mut c1, mut w1) = (fill(2 * m * ld, 3), fill(2 * m * ld, 4));
            let (mut c2, mut w2) = (c1.clone(), w1.clone());
            let done =
                add_rows_parallel(&a, &b, &mut c1, &mut w1, (m, n), 2.0, x, beta, y, dst).unwrap();
            assert!(done, "case {k}: the parallel path declined");
            for i in 0..m {
                add_row(
                    &a,
                    &b,
                    &mut c2,
                    &mut w2,
                    n,
                    2.0,
                    x.at(i, 0),
                    beta,
                    y.at(i, 0),
                    dst.at(i, 0),
                )
                .unwrap();
            }
            assert!(
                c1 == c2 && w1 == w2,
                "case {k}: parallel and row loop differ"
            );
        }
        // C12 = C11 + C12's neighbour rows: the extents interleave, the row loop must run.
        let (mut c, mut w) = (fill(2 * m * ld, 3), fill(2 * m * ld, 4));
        let done = add_rows_parallel(
            &a,
            &b,
            &mut c,
            &mut w,
            (m, n),
            1.0,
            blk(Operand::C, 0),
            1.0,
            blk(Operand::A, 0),
            blk(Operand::C, 300),
        )
        .unwrap();
        assert!(!done);
    }

    fn run_host(m: usize, n: usize, k: usize, opts: &MatMulOptions) -> (Schedule, Vec<f64>) {
        let a: Vec<f64> = (0..m * k)
            .map(|i| ((i * 7 + 3) % 11) as f64 - 5.0)
            .collect();
        let b: Vec<f64> = (0..k * n)
            .map(|i| ((i * 5 + 1) % 13) as f64 - 6.0)
            .collect();
        let s = plan(m, n, k, opts, 1);
        let mut c = vec![f64::NAN; m * n];
        let mut w = vec![f64::NAN; s.workspace];
        execute_host(&s, &a, &b, &mut c, &mut w, naive_gemm).unwrap();
        let av = DenseView::new(m, k, k, &a).unwrap();
        let bv = DenseView::new(k, n, n, &b).unwrap();
        let r = reference(av, bv).unwrap();
        // Small integers: every algorithm is exact.
        assert_eq!(c, r, "{m}x{k}x{n} {:?} L{}", s.algorithm, s.levels);
        (s, c)
    }

    #[test]
    fn schedules_are_exact_on_small_integers() {
        for alg in [
            Algorithm::Tiled,
            Algorithm::Strassen,
            Algorithm::Winograd,
            Algorithm::Fused,
        ] {
            for levels in [Some(1), Some(2), Some(3), None] {
                for &(m, n, k) in &[
                    (1, 1, 1),
                    (2, 2, 2),
                    (8, 8, 8),
                    (67, 129, 45),
                    (16, 3, 40),
                    (33, 17, 1),
                    (5, 0, 4),
                    (4, 4, 0),
                ] {
                    run_host(m, n, k, &MatMulOptions::with(alg, levels));
                }
            }
        }
    }

    #[test]
    fn levels_and_workspace() {
        let o = MatMulOptions::with(Algorithm::Winograd, Some(2));
        let s = plan(64, 64, 64, &o, 1);
        assert_eq!((s.algorithm, s.levels), (Algorithm::Winograd, 2));
        assert_eq!(s.products(), 49);
        // Level 1: 3 * 32^2, level 2: 3 * 16^2.
        assert_eq!(s.workspace, 3 * 32 * 32 + 3 * 16 * 16);
        // Fused: no temporaries at the fused level.
        let f = |l| {
            plan(
                64,
                64,
                64,
                &MatMulOptions::with(Algorithm::Fused, Some(l)),
                1,
            )
        };
        assert_eq!((f(1).workspace, f(1).products()), (0, 7));
        assert_eq!((f(2).workspace, f(2).products()), (3 * 32 * 32, 49));
        assert!(f(2).steps.iter().all(|s| !matches!(s, Step::Gemm { .. })));
        // Clamped to log2(min).
        let s = plan(
            5,
            64,
            64,
            &MatMulOptions::with(Algorithm::Strassen, Some(9)),
            1,
        );
        assert_eq!(s.levels, 2);
        // Auto: cutoff 16 on 64 -> 2 levels; tiled below.
        let auto = MatMulOptions {
            strassen_cutoff: Some(16),
            ..MatMulOptions::default()
        };
        assert_eq!(plan(64, 64, 64, &auto, 0).levels, 2);
        assert_eq!(plan(31, 64, 64, &auto, 0).algorithm, Algorithm::Tiled);
        // Explicit Strassen: at least one level.
        let s = plan(
            8,
            8,
            8,
            &MatMulOptions::with(Algorithm::Strassen, None),
            1024,
        );
        assert_eq!(s.levels, 1);
        assert_eq!(plan(8, 8, 8, &MatMulOptions::default(), 1024).levels, 0);
    }

    #[test]
    fn bounds_grow_with_levels() {
        for alg in [Algorithm::Strassen, Algorithm::Winograd] {
            let mut last = higham_constant(Algorithm::Tiled, 0, 1024);
            for l in 1..5 {
                let c = higham_constant(alg, l, 1024);
                assert!(c > last, "{alg:?} L{l}: {c} <= {last}");
                last = c;
            }
        }
    }

    #[test]
    fn shape_checks() {
        assert!(matches!(check_shapes((2, 3), (4, 5)), Err(Error::Shape(_))));
        assert_eq!(check_shapes((2, 3), (3, 5)).unwrap(), (2, 5, 3));
        assert!(check_lengths(2, 3, 4, 8, 12, 6).is_ok());
        assert!(check_lengths(2, 3, 4, 8, 12, 7).is_err());
    }

    /// A wrong entry found by [`check_sampled`] is named by its row in the whole product
    /// (it checks one row at a time), whether every row or a sample is checked.
    #[test]
    fn check_sampled_names_the_entry_in_the_whole_product() {
        let (m, n, k) = (64, 5, 8);
        let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
        let (av, bv) = (
            DenseView::new(m, k, k, &a).unwrap(),
            DenseView::new(k, n, n, &b).unwrap(),
        );
        let mut c = reference(av, bv).unwrap();
        let s = plan(m, n, k, &MatMulOptions::with(Algorithm::Tiled, None), 1);
        assert_eq!(check_sampled(av, bv, &c, &s, m), Ok(0.0));
        c[63 * n + 2] = f64::NAN;
        // All rows, and 2 sampled rows (0 and 63).
        for rows in [m, 2] {
            let e = check_sampled(av, bv, &c, &s, rows).unwrap_err();
            assert!(e.contains("C[63, 2]: got NaN"), "{e}");
        }
    }
}

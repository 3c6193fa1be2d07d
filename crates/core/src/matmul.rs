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
//!
//! # Layout
//!
//! This file holds the trait, its options and the shape and memory checks every backend runs
//! first; then one module per responsibility, their items re-exported here:
//!
//! - `schedule`: the pure plan ([`plan`], [`plan_strided`], [`Schedule`], [`Step`]);
//! - `safety`: the input scans that fall back to the classical product ([`plan_host`],
//!   [`classical_unless_safe`]);
//! - `host`: the host executor of a schedule ([`execute_host`], [`naive_gemm`]);
//! - `steps`: the device executor ([`run_steps`], [`ScheduleKernels`]);
//! - `accuracy`: the f64 [`reference()`] and the accuracy contract ([`tolerance`],
//!   [`check_result`]).

mod accuracy;
pub mod device;
mod host;
mod safety;
mod schedule;
mod steps;
#[cfg(test)]
mod tests;

pub use accuracy::{
    check_result, check_sampled, higham_constant, max_abs, reference, relative_error, tolerance,
};
pub use host::{execute_host, naive_gemm, GemmCall, HostBlock, HostBlockMut};
pub use safety::{
    all_finite, classical_unless_safe, max_magnitude, plan_host, recursion_safe, view_max_magnitude,
};
pub use schedule::{choose_levels, plan, plan_strided, Block, Fused, Operand, Schedule, Step};
pub use steps::{run_steps, DevAdd, DevBlock, DevFused, DevGemm, ScheduleKernels};

use crate::backend::DeviceVectors;
use crate::dense::{Dense, DenseView};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

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

    /// Whether every value of the device vector `v`, a row-major `rows x cols` matrix (its
    /// first `rows · cols` values), is finite: GPU backends by one pass of the shared
    /// reduction kernel ([`crate::reduce::all_finite`]), the CPU by a host scan
    /// ([`all_finite`]).
    fn all_finite(
        &self,
        v: &Self::Vector,
        shape: (usize, usize),
        opts: &MatMulOptions,
    ) -> Result<bool>;

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

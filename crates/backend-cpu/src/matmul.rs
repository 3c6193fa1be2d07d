//! Dense `C = A B` on the CPU: the schedule of [`trident_core::matmul::plan`] run by
//! [`execute_host`], over `matrixmultiply`'s packed, SIMD-dispatched `sgemm`/`dgemm` (through
//! `ndarray::linalg::general_mat_mul`, its safe strided wrapper) as the base kernel.
//!
//! **Parallelism.** The base kernel is single-threaded; each base product is split into
//! row (or column) panels run on rayon's pool, one panel per thread, when it has at least
//! [`PARALLEL_FLOPS`] flops. Strassen's 7 products run one after another, each using every
//! thread: running them side by side would need 7 sets of temporaries and, on few cores,
//! gains nothing over panels that already keep every core busy.
//!
//! **Memory.** One workspace of [`Schedule::workspace`] elements per call, shared by every
//! recursion node; the output is allocated once (no zero fill: every entry is written).

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, Axis, ShapeBuilder, Slice};
use rayon::prelude::*;
use trident_core::matmul::{
    check_fits, check_lengths, check_shapes, device_bytes, execute_host, use_tensor_cores,
    GemmCall, Schedule,
};
use trident_core::{Dense, DenseView, Error, MatMul, MatMulOptions, Result, Scalar};

use crate::Cpu;

/// Base products with fewer flops than this run on one thread.
pub const PARALLEL_FLOPS: usize = 1 << 22;

/// Leaf order below which the CPU's Strassen does not beat its base kernel. Measured on 2
/// shared cores (AVX-512, f64, noisy machine): n = 2048 base 17.3 GFLOP/s, Winograd 1 level
/// 15.3; n = 4096 base 28.7, Winograd 27.9, Strassen 17.5. Re-measured with
/// `examples/matmul_crossover.rs` (interleaved rounds, f32 and f64, n = 1024 to 4096, one and
/// two levels, 5 rounds): medians of the Strassen variants between 0.8x and 1.6x the base's,
/// with no consistent order, each inside a run-to-run spread of 2-5x on the shared machine
/// (1.6x exceeds what two levels can save, 1.31x: noise), so no crossover can be resolved. The
/// model agrees that the gain is small here: the base kernel is as efficient at `n / 2` as at
/// `n` (f64: 512 ≈ 29, 1024 ≈ 36, 2048 ≈ 34 GFLOP/s, strided leaves no slower than
/// contiguous), and the serial additions cost 2-5 % of the base product (one Winograd level
/// at 2048: 21 ms of 500 ms; two at 4096: 220 ms of about 4 s), so one level can save at
/// most about 1.1x. The automatic choice therefore recurses only from n = 8192 (leaves of
/// 4096), where the saved eighth of the flops dominates any noise.
pub const CPU_CUTOFF: usize = 4096;

/// The element types `matrixmultiply` has kernels for.
trait Gemm: Scalar {
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        alpha: Self,
        a: &ArrayView2<'_, Self>,
        b: &ArrayView2<'_, Self>,
        beta: Self,
        c: &mut ArrayViewMut2<'_, Self>,
    );
}

impl<T: Scalar + ndarray::LinalgScalar> Gemm for T {
    fn gemm(
        alpha: T,
        a: &ArrayView2<'_, T>,
        b: &ArrayView2<'_, T>,
        beta: T,
        c: &mut ArrayViewMut2<'_, T>,
    ) {
        general_mat_mul(alpha, a, b, beta, c);
    }
}

/// A strided `r x c` view of `data` (whose extent [`execute_host`] has checked).
fn view<T>(data: &[T], r: usize, c: usize, ld: usize) -> ArrayView2<'_, T> {
    ArrayView2::from_shape((r, c).strides((ld, 1)), data)
        .unwrap_or_else(|e| panic!("{r} x {c} ld {ld} of {}: {e}", data.len()))
}

/// `c = alpha a b + beta c` on strided blocks, in panels over rayon's threads.
fn base_gemm<T: Scalar + ndarray::LinalgScalar>(g: GemmCall<'_, T>) {
    let (m, n, k) = (g.m, g.n, g.k);
    if k == 0 {
        // An empty sum: c = beta c (c is not read when beta == 0).
        for i in 0..m {
            for v in &mut g.c.data[i * g.c.ld..i * g.c.ld + n] {
                *v = if g.beta == T::zero() {
                    T::zero()
                } else {
                    g.beta * *v
                };
            }
        }
        return;
    }
    let a = view(g.a.data, m, k, g.a.ld);
    let b = view(g.b.data, k, n, g.b.ld);
    let mut c = ArrayViewMut2::from_shape((m, n).strides((g.c.ld, 1)), g.c.data)
        .expect("block within its operand");
    let threads = rayon::current_num_threads();
    let flops = 2usize.saturating_mul(m).saturating_mul(n).saturating_mul(k);
    if threads <= 1 || flops < PARALLEL_FLOPS {
        T::gemm(g.alpha, &a, &b, g.beta, &mut c);
        return;
    }
    // Panels of rows of A and C, or of columns of B and C when C is wide; multiples of 8 (the
    // micro-kernel's tile) where possible.
    let (axis, len) = if m >= n { (Axis(0), m) } else { (Axis(1), n) };
    let panel = len.div_ceil(threads).next_multiple_of(8).max(8);
    let (alpha, beta) = (g.alpha, g.beta);
    let panels: Vec<(usize, ArrayViewMut2<'_, T>)> = c
        .axis_chunks_iter_mut(axis, panel)
        .enumerate()
        .map(|(i, p)| (i * panel, p))
        .collect();
    panels.into_par_iter().for_each(|(start, mut cp)| {
        let rows = cp.len_of(axis);
        if axis == Axis(0) {
            let ap = a.slice_axis(Axis(0), Slice::from(start..start + rows));
            T::gemm(alpha, &ap, &b, beta, &mut cp);
        } else {
            let bp = b.slice_axis(Axis(1), Slice::from(start..start + rows));
            T::gemm(alpha, &a, &bp, beta, &mut cp);
        }
    });
}

/// A workspace of `len` elements, or [`Error::OutOfMemory`].
fn workspace<T: Scalar>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|e| {
        Error::out_of_memory("cpu", format!("{what}: {len} values of {}: {e}", T::NAME))
    })?;
    // Not read before written, but safe Rust wants it initialised.
    v.resize(len, T::zero());
    Ok(v)
}

/// Runs `s` on strided host operands.
fn run<T: Scalar + ndarray::LinalgScalar>(
    s: &Schedule,
    a: &[T],
    b: &[T],
    c: &mut [T],
) -> Result<()> {
    let mut w = workspace::<T>(s.workspace, "Strassen workspace")?;
    execute_host(s, a, b, c, &mut w, base_gemm::<T>)
}

impl<T: Scalar + ndarray::LinalgScalar> MatMul<T> for Cpu {
    fn default_cutoff(&self) -> usize {
        CPU_CUTOFF
    }

    fn gemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &Vec<T>,
        b: &Vec<T>,
        c: &mut Vec<T>,
        opts: &MatMulOptions,
    ) -> Result<()> {
        check_lengths(m, n, k, a.len(), b.len(), c.len())?;
        use_tensor_cores::<T>(opts.base_kernel, false, "cpu")?;
        let s = MatMul::<T>::plan(self, m, n, k, opts);
        run(&s, a, b, c)
    }

    fn matmul(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Dense<T>> {
        let (m, n, k) = check_shapes(a.shape(), b.shape())?;
        use_tensor_cores::<T>(opts.base_kernel, false, "cpu")?;
        // Views of empty matrices may have any stride; the schedule then has no step.
        let (lda, ldb) = (a.stride().max(k), b.stride().max(n));
        let s = trident_core::matmul::plan_strided(
            m,
            n,
            k,
            (lda, ldb, n),
            opts,
            MatMul::<T>::default_cutoff(self),
        );
        let total = crate::memory::physical_memory().unwrap_or(0);
        // Only C and the workspace are allocated here.
        let extra = device_bytes::<T>(m, n, 0, &s).unwrap_or(u128::MAX);
        check_fits(
            "cpu",
            extra,
            total,
            &format!("a {m} x {k} · {k} x {n} product"),
        )?;
        let mut c = workspace::<T>(m * n, "the product")?;
        run(&s, view_data(&a), view_data(&b), &mut c)?;
        Dense::from_vec(m, n, c)
    }
}

/// The values a view spans, from element (0, 0) on.
fn view_data<'a, T: Scalar>(v: &DenseView<'a, T>) -> &'a [T] {
    if v.rows() == 0 || v.cols() == 0 {
        &[]
    } else {
        &v.data()[..(v.rows() - 1) * v.stride() + v.cols()]
    }
}

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
//! recursion node and kept by the backend for the next call ([`Workspaces`]); the output is
//! allocated once.

use std::any::Any;
use std::sync::{Mutex, PoisonError};

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

/// Leaf order below which the CPU's Strassen does not beat its base kernel: recursion starts
/// at n = 4096, with leaves of 2048. Chosen from `examples/matmul_crossover.rs` (interleaved
/// rounds, each round's tiled time over Winograd's in the same round, one-sided sign test),
/// which put the crossover between n = 2048 and 4096 in both precisions; the figures are in
/// `benches/results/matmul.md`.
pub const CPU_CUTOFF: usize = 2048;

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

/// Strassen workspaces kept between products, at most one per element type (the largest
/// used so far). A fresh workspace costs a page fault per page on its first touch, and on a
/// virtual machine that cost varies widely from call to call, up to several times the
/// additions of a level. Never read before written, so a kept workspace is not cleared.
#[derive(Debug, Default)]
pub(crate) struct Workspaces(Mutex<Vec<Box<dyn Any + Send>>>);

impl Workspaces {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Any + Send>>> {
        // A panic while the lock was held left at worst a missing workspace.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A workspace of at least `len` elements: the kept one when it is large enough, else a
    /// new one (the kept one is freed first).
    fn take<T: Scalar>(&self, len: usize) -> Result<Vec<T>> {
        let kept = {
            let mut pool = self.lock();
            let i = pool.iter().position(|w| w.is::<Vec<T>>());
            i.map(|i| pool.swap_remove(i))
        };
        if let Some(Ok(w)) = kept.map(|w| w.downcast::<Vec<T>>()) {
            if w.len() >= len {
                return Ok(*w);
            }
        }
        workspace::<T>(len, "Strassen workspace")
    }

    /// Keeps `w` for the next call, unless a larger one of its type is kept already.
    fn give<T: Scalar>(&self, w: Vec<T>) {
        let mut pool = self.lock();
        match pool.iter_mut().find_map(|k| k.downcast_mut::<Vec<T>>()) {
            Some(k) if k.len() >= w.len() => {}
            Some(k) => *k = w,
            None => pool.push(Box::new(w)),
        }
    }

    /// Frees every kept workspace.
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }
}

/// Runs `s` on strided host operands, in a kept workspace of `cpu`'s.
fn run<T: Scalar + ndarray::LinalgScalar>(
    cpu: &Cpu,
    s: &Schedule,
    a: &[T],
    b: &[T],
    c: &mut [T],
) -> Result<()> {
    if s.workspace == 0 {
        return execute_host(s, a, b, c, &mut [], base_gemm::<T>);
    }
    let mut w = cpu.workspaces.take::<T>(s.workspace)?;
    let r = execute_host(s, a, b, c, &mut w[..s.workspace], base_gemm::<T>);
    cpu.workspaces.give(w);
    r
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
        let s = self.plan_device(m, n, k, a, b, opts)?;
        run(self, &s, a, b, c)
    }

    /// [`trident_core::matmul::plan_host`]: the CPU's vectors are host memory, so its
    /// `gemm` gets the host scan (finiteness and magnitude) of `matmul`.
    fn plan_device(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &Vec<T>,
        b: &Vec<T>,
        opts: &MatMulOptions,
    ) -> Result<Schedule> {
        trident_core::matmul::plan_host(
            DenseView::new(m, k, k, a)?,
            DenseView::new(k, n, n, b)?,
            (k, n, n),
            opts,
            MatMul::<T>::default_cutoff(self),
        )
    }

    /// A plain scan: the CPU's vectors are host memory.
    fn all_finite(
        &self,
        v: &Vec<T>,
        (rows, cols): (usize, usize),
        _: &MatMulOptions,
    ) -> Result<bool> {
        // The matrix is the vector's first rows · cols values.
        let len = rows.saturating_mul(cols).min(v.len());
        Ok(trident_core::matmul::all_finite(&v[..len]))
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
        let s = trident_core::matmul::plan_host(
            a,
            b,
            (lda, ldb, n),
            opts,
            MatMul::<T>::default_cutoff(self),
        )?;
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
        run(self, &s, view_data(&a), view_data(&b), &mut c)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use trident_core::matmul::{check_sampled, Algorithm};

    fn filled(n: usize, seed: u64) -> Dense<f64> {
        let mut next = trident_core::testing::unit_stream(seed);
        Dense::from_vec(n, n, (0..n * n).map(|_| next()).collect()).expect("n x n")
    }

    /// A kept workspace full of NaN (as a previous product could leave garbage) is reused
    /// and gives the same products as a fresh one; a smaller kept one is replaced.
    #[test]
    fn kept_workspaces_are_reused_and_never_read_first() {
        let cpu = Cpu::new();
        cpu.workspaces.give(vec![f64::NAN; 1 << 16]);
        for (n, alg) in [(96, Algorithm::Winograd), (130, Algorithm::Strassen)] {
            let (a, b) = (filled(n, 1), filled(n, 2));
            let opts = MatMulOptions {
                strassen_cutoff: Some(16),
                ..MatMulOptions::with(alg, Some(2))
            };
            let s = MatMul::<f64>::plan(&cpu, n, n, n, &opts);
            assert!(s.workspace > 0 && s.workspace < 1 << 16, "{}", s.workspace);
            let c = cpu.matmul(a.view(), b.view(), &opts).expect("product");
            check_sampled(a.view(), b.view(), c.as_slice(), &s, n).expect("within bound");
        }
        let kept = cpu.workspaces.take::<f64>(0).expect("kept");
        assert_eq!(kept.len(), 1 << 16, "the NaN workspace was kept and reused");
        cpu.workspaces.give(kept);
        cpu.workspaces.give(vec![0.0f64; 1 << 17]);
        assert_eq!(cpu.workspaces.take::<f64>(0).expect("kept").len(), 1 << 17);
        cpu.workspaces.give(vec![0.0f32; 8]);
        cpu.free_workspaces();
        assert!(cpu.workspaces.lock().is_empty());
    }
}

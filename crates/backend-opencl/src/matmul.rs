//! Dense `C = A B` on OpenCL: the schedule of [`trident_core::matmul::plan`] run as launches
//! of `kernels/opencl/matmul.cl` (`gemm_<T>`, the tiled base kernel, and `matadd_<T>`, the
//! schedule's additions), every block passed as (buffer, offset, leading dimension). One
//! workspace buffer per call.
//!
//! Host transfers ([`HostMemory`]): `Pageable` writes and reads ordinary buffers from the
//! caller's memory. `Pinned` and `Mapped` use three `CL_MEM_ALLOC_HOST_PTR` buffers (pinned
//! host memory on NVIDIA's and AMD's OpenCL) that the backend keeps for `A`, `B` and `C` (its
//! staging pool: created on first use, a buffer replaced only when a call needs more, or all
//! three when the precision changes; released with the backend), because creating such
//! buffers costs far more than the copies. `Pinned` maps the pool's `A` and `B` buffers,
//! fills them on the host, and copies them buffer to buffer into device buffers (`A`'s copy
//! is queued before `B` is filled, so the DMA of one overlaps the host copy of the other),
//! and back for `C`. `Mapped` lets the kernels read `A` and `B` and write `C` in the pool's
//! buffers directly (zero-copy where the implementation keeps them in host memory, as PoCL
//! and integrated GPUs do; a discrete GPU's driver may migrate them); it pays only for small
//! products or operands read about once. A call that finds the pool in use by another
//! thread stages through buffers of its own.

use std::any::Any;
use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::{Mutex, TryLockError};

use ocl::flags::MemFlags;
use ocl::Buffer;
use trident_core::gpu::{to_u32, Precision};
use trident_core::matmul::{
    check_fits, check_lengths, check_shapes, device_bytes, plan_host, run_steps, use_tensor_cores,
    DevAdd, DevFused, DevGemm, Schedule, ScheduleKernels,
};
use trident_core::{Backend, Dense, DenseView, HostMemory, MatMul, MatMulOptions, Result};

use crate::error::ClResultExt;
use crate::kernels::Module;
use crate::memory::{ClScalar, ClVector};
use crate::program::{CachedKernel, ClLaunch, LaunchDims};
use crate::{OpenCl, BACKEND};

/// Work-items per group of `gemm_<T>` (its `reqd_work_group_size`).
const GEMM_THREADS: usize = 256;
/// Rows and columns of C per group of `gemm_<T>`.
const TILE: usize = 128;

/// The staging pool of an [`OpenCl`] backend: `CL_MEM_ALLOC_HOST_PTR` buffers for `A`, `B`
/// and `C` (a `[Buffer<T>; 3]` of the last precision used), reused by every `matmul` with
/// [`HostMemory::Pinned`] or [`HostMemory::Mapped`], grown when a call needs more, released
/// with the backend.
#[derive(Default)]
pub(crate) struct Staging(Mutex<Option<Box<dyn Any + Send>>>);

/// Staging buffers grow in multiples of this many values.
const STAGING_GRANULE: usize = 1 << 16;

/// Strassen cutoff of OpenCL GPUs (as CUDA's `GPU_CUTOFF`); CPU devices use
/// [`CPU_DEVICE_CUTOFF`].
pub const GPU_CUTOFF: usize = 4096;
/// Strassen cutoff of OpenCL CPU devices (PoCL).
pub const CPU_DEVICE_CUTOFF: usize = 1024;

/// Sets the next argument, a `REAL` of precision `p`, to `v`.
fn real_arg(args: &mut ClLaunch<'_, '_>, p: Precision, v: f64) {
    match p {
        Precision::F32 => args.arg(v as f32),
        Precision::F64 => args.arg(v),
    };
}

/// The device steps of a schedule on OpenCL ([`ScheduleKernels`]): launches of `gemm_<T>`,
/// `gemm_fused_<T>` and `matadd_<T>` on the backend's in-order queue; operands are buffers.
struct ClSteps<'a, T: ClScalar> {
    cl: &'a OpenCl,
    gemm: &'a CachedKernel,
    fused: &'a CachedKernel,
    add: &'a CachedKernel,
    /// The options, for the work-groups of `matadd_<T>` ([`MatMulOptions::add_groups`]).
    opts: &'a MatMulOptions,
    p: Precision,
    _buffers: PhantomData<&'a Buffer<T>>,
}

impl<'a, T: ClScalar> ScheduleKernels for ClSteps<'a, T> {
    type Operand = &'a Buffer<T>;

    fn gemm(&self, g: &DevGemm<&'a Buffer<T>>) -> Result<()> {
        let s = self;
        let groups = g.n.div_ceil(TILE) * g.m.div_ceil(TILE);
        // The kernel's parameters (kernels/opencl/matmul.cl, as in kernels/cuda/matmul.cu):
        // (uint m, uint n, uint k, REAL alpha, REAL beta, const REAL *a, ulong a_off,
        //  uint lda, const REAL *b, ulong b_off, uint ldb, REAL *c, ulong c_off, uint ldc)
        let mut args = s.gemm.builder();
        args.arg(to_u32(g.m)?).arg(to_u32(g.n)?).arg(to_u32(g.k)?);
        real_arg(&mut args, s.p, g.alpha);
        real_arg(&mut args, s.p, g.beta);
        let (a, b, c) = (g.a, g.b, g.c);
        args.arg(a.buf).arg(a.offset as u64).arg(to_u32(a.ld)?);
        args.arg(b.buf).arg(b.offset as u64).arg(to_u32(b.ld)?);
        args.arg(c.buf).arg(c.offset as u64).arg(to_u32(c.ld)?);
        // SAFETY: the arguments have the kernel's types, in order. The buffers are this
        // instance's (callers check owners or made them). `run_steps` verified that every
        // block's extent ((rows - 1) * ld + cols from its offset) lies inside its buffer; the
        // kernel reads a only at rows < m, columns < k, b at rows < k, columns < n, and reads
        // (beta != 0) and writes c at rows < m, columns < n, with 64-bit offsets. The output
        // never overlaps an input (schedule invariant, tested in core). One group per
        // 128 x 128 tile of C, 256 items each (reqd_work_group_size).
        unsafe {
            args.launch(
                &s.cl.queue,
                LaunchDims::linear(groups * GEMM_THREADS, GEMM_THREADS),
            )
        }
    }

    fn gemm_fused(&self, f: &DevFused<&'a Buffer<T>>) -> Result<()> {
        let groups = f.n.div_ceil(TILE) * f.m.div_ceil(TILE);
        let p = self.p;
        // (uint m, n, k, const REAL *a, ulong a0_off, ulong a1_off, REAL sa, uint lda,
        //  const REAL *b, ulong b0_off, ulong b1_off, REAL sb, uint ldb, REAL *c,
        //  ulong c0_off, REAL g0, REAL beta0, ulong c1_off, REAL g1, REAL beta1, uint ldc)
        let mut args = self.fused.builder();
        args.arg(to_u32(f.m)?).arg(to_u32(f.n)?).arg(to_u32(f.k)?);
        let [a0, a1] = f.a;
        args.arg(a0.buf).arg(a0.offset as u64).arg(a1.offset as u64);
        real_arg(&mut args, p, f.sa);
        args.arg(to_u32(a0.ld)?);
        let [b0, b1] = f.b;
        args.arg(b0.buf).arg(b0.offset as u64).arg(b1.offset as u64);
        real_arg(&mut args, p, f.sb);
        args.arg(to_u32(b0.ld)?);
        let [c0, c1] = f.c;
        args.arg(c0.buf).arg(c0.offset as u64);
        real_arg(&mut args, p, f.gamma[0]);
        real_arg(&mut args, p, f.beta[0]);
        args.arg(c1.offset as u64);
        real_arg(&mut args, p, f.gamma[1]);
        real_arg(&mut args, p, f.beta[1]);
        args.arg(to_u32(c0.ld)?);
        // SAFETY: the arguments have gemm_fused_<T>'s types, in order. `run_steps` verified
        // that every term and output block lies inside its buffer and that the two terms of
        // each factor, and the two outputs, share one buffer (passed once) and one leading
        // dimension. The kernel reads the terms at rows < m, columns < k (A) or rows < k,
        // columns < n (B), the second only when its scale is nonzero, and reads (beta != 0)
        // and writes the outputs at rows < m, columns < n; the outputs are disjoint from
        // each other and from the factors (schedule invariant, tested in core). Launch as
        // gemm: one group of 256 per 128 x 128 tile (reqd_work_group_size).
        unsafe {
            args.launch(
                &self.cl.queue,
                LaunchDims::linear(groups * GEMM_THREADS, GEMM_THREADS),
            )
        }
    }

    fn add(&self, st: &DevAdd<&'a Buffer<T>>) -> Result<()> {
        let s = self;
        let local = s.add.local;
        // One group per row (its work-items stride over the columns), rows group-strided
        // beyond the options' limit.
        let groups = s.opts.add_groups(st.m);
        // (uint m, uint n, REAL alpha, const REAL *x, ulong x_off, uint ldx, REAL beta,
        //  const REAL *y, ulong y_off, uint ldy, REAL *d, ulong d_off, uint ldd)
        let mut args = s.add.builder();
        args.arg(to_u32(st.m)?).arg(to_u32(st.n)?);
        real_arg(&mut args, s.p, st.alpha);
        let (x, y, d) = (st.x, st.y, st.dst);
        args.arg(x.buf).arg(x.offset as u64).arg(to_u32(x.ld)?);
        real_arg(&mut args, s.p, st.beta);
        args.arg(y.buf).arg(y.offset as u64).arg(to_u32(y.ld)?);
        args.arg(d.buf).arg(d.offset as u64).arg(to_u32(d.ld)?);
        // SAFETY: the arguments have the kernel's types, in order. Every block lies inside
        // its buffer (`run_steps` checked); the kernel touches elements i < m, j < n of each
        // (y only when beta != 0); dst is either x itself (each element read and written by
        // the same work-item) or disjoint from both inputs (schedule invariant). Its row and
        // column loops cover every element whatever the number of groups.
        unsafe { args.launch(&s.cl.queue, LaunchDims::linear(groups * local, local)) }
    }
}

impl OpenCl {
    /// Runs `s` with operands `a`, `b`, `c` and workspace `w` holding `lens` values (checked
    /// against every step first, by [`run_steps`]).
    pub(crate) fn run_schedule<T: ClScalar>(
        &self,
        s: &Schedule,
        bufs: [&Buffer<T>; 4],
        lens: [usize; 4],
        opts: &MatMulOptions,
    ) -> Result<()> {
        use_tensor_cores::<T>(opts.base_kernel, false, BACKEND)?;
        let gemm = self.kernel::<T>(Module::Matmul, "gemm")?;
        let fused = self.kernel::<T>(Module::Matmul, "gemm_fused")?;
        let add = self.kernel::<T>(Module::Matmul, "matadd")?;
        if gemm.local != GEMM_THREADS || fused.local != GEMM_THREADS {
            return Err(trident_core::Error::Unsupported(format!(
                "matmul on {}: the GEMM kernel needs work-groups of {GEMM_THREADS}, the device \
                 allows {}",
                self.info.description(),
                gemm.local
            )));
        }
        let steps = ClSteps {
            cl: self,
            gemm,
            fused,
            add,
            opts,
            p: Precision::of::<T>(),
            _buffers: PhantomData,
        };
        run_steps(&steps, s, bufs, lens)
    }

    /// A buffer of `len` (at least 1) values in `CL_MEM_ALLOC_HOST_PTR` memory.
    fn host_buffer<T: ClScalar>(&self, len: usize, what: &str) -> Result<Buffer<T>> {
        let n = len.max(1);
        Buffer::<T>::builder()
            .queue(self.queue.clone())
            .flags(MemFlags::new().read_write().alloc_host_ptr())
            .len(n)
            .build()
            .or_alloc(|| format!("{what} ({} bytes)", n * size_of::<T>()))
    }

    /// Runs `f` with host-memory buffers for `A`, `B` and `C` of at least `lens` values: the
    /// backend's pool (a buffer reallocated when too small, or all three when the precision
    /// changed) or, when another thread's matmul holds the pool, buffers of this call's own.
    /// `f` must have finished with the buffers (its queued work included: reading `C`
    /// through a blocking map does that) when it returns.
    fn with_staging<T: ClScalar, R>(
        &self,
        lens: [usize; 3],
        f: impl FnOnce(&[Buffer<T>; 3]) -> Result<R>,
    ) -> Result<R> {
        let what = ["staging A", "staging B", "staging C"];
        let mut pool = match self.staging.0.try_lock() {
            Ok(g) => g,
            // A call panicked while holding the pool: wait until nothing it queued can still
            // use the buffers, then reuse them.
            Err(TryLockError::Poisoned(p)) => {
                self.synchronize()?;
                p.into_inner()
            }
            Err(TryLockError::WouldBlock) => {
                let own = [0, 1, 2].map(|i| self.host_buffer::<T>(lens[i], what[i]));
                let [a, b, c] = own;
                return f(&[a?, b?, c?]);
            }
        };
        if !pool.as_ref().is_some_and(|p| p.is::<[Buffer<T>; 3]>()) {
            *pool = None;
            let [a, b, c] = [0, 1, 2].map(|i| self.host_buffer::<T>(lens[i], what[i]));
            *pool = Some(Box::new([a?, b?, c?]));
        }
        let Some(bufs) = pool
            .as_mut()
            .and_then(|p| p.downcast_mut::<[Buffer<T>; 3]>())
        else {
            unreachable!("the pool holds buffers of T (filled above)")
        };
        for i in 0..3 {
            if bufs[i].len() < lens[i] {
                let grown = lens[i]
                    .checked_next_multiple_of(STAGING_GRANULE)
                    .unwrap_or(lens[i]);
                bufs[i] = self.host_buffer::<T>(grown, what[i])?;
            }
        }
        f(bufs)
    }

    /// Copies `host` into `buf` (an `ALLOC_HOST_PTR` buffer) through a blocking map.
    fn write_mapped<T: ClScalar>(&self, buf: &Buffer<T>, host: &[T], what: &str) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: the only mapping of the buffer (the pool is locked), unmapped before any
        // kernel uses it; in order, so earlier work on it has finished.
        let mut map =
            unsafe { buf.map().write_invalidate().len(host.len()).enq() }.or_cl(|| what)?;
        map.copy_from_slice(host);
        map.unmap().enq().or_cl(|| what)?;
        Ok(())
    }

    /// Reads `len` values of `buf` (an `ALLOC_HOST_PTR` buffer) through a map.
    fn read_mapped<T: ClScalar>(&self, buf: &Buffer<T>, out: &mut [T]) -> Result<()> {
        if out.is_empty() {
            return self.synchronize();
        }
        // SAFETY: the only mapping of the buffer; the queue is in order, so the map waits
        // for the kernels that wrote it.
        let mut map = unsafe { buf.map().read().len(out.len()).enq() }.or_cl(|| "mapping C")?;
        out.copy_from_slice(&map);
        map.unmap().enq().or_cl(|| "unmapping C")?;
        Ok(())
    }
}

/// `v` packed row-major (borrowed when it already is).
fn packed<'a, T: ClScalar>(v: &DenseView<'a, T>) -> std::borrow::Cow<'a, [T]> {
    if v.rows() == 0 || v.cols() == 0 {
        std::borrow::Cow::Borrowed(&[])
    } else if v.is_contiguous() {
        std::borrow::Cow::Borrowed(&v.data()[..v.rows() * v.cols()])
    } else {
        std::borrow::Cow::Owned(v.to_owned().into_vec())
    }
}

impl<T: ClScalar> MatMul<T> for OpenCl {
    fn default_cutoff(&self) -> usize {
        if self.is_gpu() {
            GPU_CUTOFF
        } else {
            CPU_DEVICE_CUTOFF
        }
    }

    fn gemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &ClVector<T>,
        b: &ClVector<T>,
        c: &mut ClVector<T>,
        opts: &MatMulOptions,
    ) -> Result<()> {
        for v in [a.owner, b.owner, c.owner] {
            self.check_owner(v, "gemm")?;
        }
        check_lengths(m, n, k, a.len, b.len, c.len)?;
        let s = self.plan_device(m, n, k, a, b, opts)?;
        let w = self.alloc::<T>(s.workspace, None, "allocating the Strassen workspace")?;
        let lens = [a.len, b.len, c.len, s.workspace];
        self.run_schedule(&s, [&a.buf, &b.buf, &c.buf, &w], lens, opts)
    }

    fn matmul(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Dense<T>> {
        self.check_precision(Precision::of::<T>())?;
        let (m, n, k) = check_shapes(a.shape(), b.shape())?;
        let s = plan_host(a, b, (k, n, n), opts, MatMul::<T>::default_cutoff(self))?;
        let need = device_bytes::<T>(m, n, k, &s).unwrap_or(u128::MAX);
        let what = format!(
            "a {m} x {k} · {k} x {n} {} product ({})",
            T::NAME,
            s.algorithm.name()
        );
        check_fits(BACKEND, need, self.info.global_mem_bytes, &what)?;
        let mut out = vec![T::zero(); m * n];
        let (ha, hb) = (packed(&a), packed(&b));
        let w = self.alloc::<T>(s.workspace, None, "allocating the Strassen workspace")?;
        let lens = [m * k, k * n, m * n, s.workspace];
        match opts.host_memory {
            HostMemory::Pageable => {
                let da = self.alloc(m * k, Some(&ha), "uploading A")?;
                let db = self.alloc(k * n, Some(&hb), "uploading B")?;
                let dc = self.alloc::<T>(m * n, None, "allocating C")?;
                self.run_schedule(&s, [&da, &db, &dc, &w], lens, opts)?;
                if !out.is_empty() {
                    dc.read(&mut out)
                        .queue(&self.queue)
                        .enq()
                        .or_cl(|| "downloading C")?;
                }
            }
            HostMemory::Pinned => {
                let da = self.alloc::<T>(m * k, None, "allocating A")?;
                let db = self.alloc::<T>(k * n, None, "allocating B")?;
                let dc = self.alloc::<T>(m * n, None, "allocating C")?;
                let copy = |src: &Buffer<T>, dst: &Buffer<T>, len: usize| -> Result<()> {
                    if len == 0 {
                        return Ok(());
                    }
                    src.copy(dst, None, Some(len))
                        .queue(&self.queue)
                        .enq()
                        .or_cl(|| "copying a staged matrix")
                };
                self.with_staging::<T, _>([m * k, k * n, m * n], |[sa, sb, sc]| {
                    if ha.is_empty() || hb.is_empty() {
                        self.write_mapped(sa, &ha, "staging A")?;
                        copy(sa, &da, m * k)?;
                        self.write_mapped(sb, &hb, "staging B")?;
                    } else {
                        // Both buffers are mapped before A's copy is queued (a blocking map
                        // on an in-order queue would wait for it), so that the DMA of A
                        // overlaps the host's copy of B.
                        // SAFETY: the only mappings of these pool buffers (the pool is
                        // locked), both unmapped before any command that uses them.
                        let mut ma = unsafe { sa.map().write_invalidate().len(ha.len()).enq() }
                            .or_cl(|| "mapping A's staging buffer")?;
                        // SAFETY: as above.
                        let mut mb = unsafe { sb.map().write_invalidate().len(hb.len()).enq() }
                            .or_cl(|| "mapping B's staging buffer")?;
                        ma.copy_from_slice(&ha);
                        ma.unmap().enq().or_cl(|| "unmapping A's staging buffer")?;
                        copy(sa, &da, m * k)?;
                        mb.copy_from_slice(&hb);
                        mb.unmap().enq().or_cl(|| "unmapping B's staging buffer")?;
                    }
                    copy(sb, &db, k * n)?;
                    self.run_schedule(&s, [&da, &db, &dc, &w], lens, opts)?;
                    copy(&dc, sc, m * n)?;
                    self.read_mapped(sc, &mut out)
                })?;
            }
            HostMemory::Mapped => {
                self.with_staging::<T, _>([m * k, k * n, m * n], |[sa, sb, sc]| {
                    self.write_mapped(sa, &ha, "mapping A")?;
                    self.write_mapped(sb, &hb, "mapping B")?;
                    self.run_schedule(&s, [sa, sb, sc, &w], lens, opts)?;
                    self.read_mapped(sc, &mut out)
                })?;
            }
        }
        Dense::from_vec(m, n, out)
    }
}

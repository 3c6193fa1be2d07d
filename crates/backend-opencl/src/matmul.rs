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
use std::mem::size_of;
use std::sync::{Mutex, TryLockError};

use ocl::flags::MemFlags;
use ocl::Buffer;
use trident_core::gpu::Precision;
use trident_core::matmul::device::{self, packed, MatmulKernels};
use trident_core::matmul::{
    check_fits, check_lengths, check_shapes, device_bytes, plan_host, use_tensor_cores, Schedule,
};
use trident_core::{Backend, Dense, DenseView, HostMemory, MatMul, MatMulOptions, Result};

use crate::error::ClResultExt;
use crate::memory::{ClScalar, ClVector};
use crate::{OpenCl, BACKEND};

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
        let k = MatmulKernels::portable::<T>(self)?;
        let ops = bufs.map(|b| b.as_core());
        device::run_schedule::<T, Self>(self, k, s, ops, lens, opts)
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

//! What dense `C = A B` on OpenCL adds to the matmul written once over the device layer
//! ([`trident_core::matmul::device`], which plans, checks, uploads and launches
//! `kernels/opencl/matmul.cl`): the Strassen cutoff of CPU devices and the staged host
//! transfers ([`MatmulDevice`]).
//!
//! Host transfers ([`HostMemory`]): `Pageable` writes and reads ordinary buffers from the
//! caller's memory. `Pinned` and `Mapped` use three `CL_MEM_ALLOC_HOST_PTR` buffers (pinned
//! host memory on NVIDIA's and AMD's OpenCL) that the backend keeps for `A`, `B` and `C` (its
//! staging pool, of bytes: created on first use, a buffer replaced only when a call needs
//! more; released with the backend), because creating such
//! buffers costs far more than the copies. `Pinned` maps the pool's `A` and `B` buffers,
//! fills them on the host, and copies them buffer to buffer into device buffers (`A`'s copy
//! is queued before `B` is filled, so the DMA of one overlaps the host copy of the other),
//! and back for `C`. `Mapped` lets the kernels read `A` and `B` and write `C` in the pool's
//! buffers directly (zero-copy where the implementation keeps them in host memory, as PoCL
//! and integrated GPUs do; a discrete GPU's driver may migrate them); it pays only for small
//! products or operands read about once. A call that finds the pool in use by another
//! thread stages through buffers of its own.

use std::sync::{Mutex, TryLockError};

use ocl::flags::MemFlags;
use ocl::Buffer;
use trident_core::device::Device;
use trident_core::matmul::device::{MatmulDevice, Staged};
use trident_core::{Backend, HostMemory, Result};

use crate::error::ClResultExt;
use crate::OpenCl;

pub use trident_core::matmul::device::GPU_CUTOFF;

/// The staging pool of an [`OpenCl`] backend: `CL_MEM_ALLOC_HOST_PTR` byte buffers for `A`,
/// `B` and `C`, reused by every `matmul` with [`HostMemory::Pinned`] or
/// [`HostMemory::Mapped`], grown when a call needs more, released with the backend.
#[derive(Default)]
pub(crate) struct Staging(Mutex<Option<[Buffer<u8>; 3]>>);

/// Staging buffers grow in multiples of this many bytes.
const STAGING_GRANULE: usize = 1 << 19;

/// Strassen cutoff of OpenCL CPU devices (PoCL); GPUs use [`GPU_CUTOFF`].
pub const CPU_DEVICE_CUTOFF: usize = 1024;

impl OpenCl {
    /// A buffer of `bytes` (at least 1) in `CL_MEM_ALLOC_HOST_PTR` memory.
    fn host_buffer(&self, bytes: usize, what: &str) -> Result<Buffer<u8>> {
        let n = bytes.max(1);
        Buffer::<u8>::builder()
            .queue(self.queue.clone())
            .flags(MemFlags::new().read_write().alloc_host_ptr())
            .len(n)
            .build()
            .or_alloc(|| format!("{what} ({n} bytes)"))
    }

    /// Runs `f` with host-memory buffers for `A`, `B` and `C` of at least `lens` bytes: the
    /// backend's pool (a buffer reallocated when too small) or, when another thread's matmul
    /// holds the pool, buffers of this call's own. `f` must have finished with the buffers
    /// (its queued work included: reading `C` through a blocking map does that) when it
    /// returns.
    fn with_staging<R>(
        &self,
        lens: [usize; 3],
        f: impl FnOnce(&[Buffer<u8>; 3]) -> Result<R>,
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
                let own = [0, 1, 2].map(|i| self.host_buffer(lens[i], what[i]));
                let [a, b, c] = own;
                return f(&[a?, b?, c?]);
            }
        };
        let bufs = match pool.as_mut() {
            Some(bufs) => bufs,
            None => {
                let [a, b, c] = [0, 1, 2].map(|i| self.host_buffer(lens[i], what[i]));
                pool.insert([a?, b?, c?])
            }
        };
        for i in 0..3 {
            if bufs[i].len() < lens[i] {
                let grown = lens[i]
                    .checked_next_multiple_of(STAGING_GRANULE)
                    .unwrap_or(lens[i]);
                bufs[i] = self.host_buffer(grown, what[i])?;
            }
        }
        f(bufs)
    }

    /// Copies `host` into `buf` (an `ALLOC_HOST_PTR` buffer) through a blocking map.
    fn write_mapped(&self, buf: &Buffer<u8>, host: &[u8], what: &str) -> Result<()> {
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

    /// Reads `out.len()` bytes of `buf` (an `ALLOC_HOST_PTR` buffer) through a map.
    fn read_mapped(&self, buf: &Buffer<u8>, out: &mut [u8]) -> Result<()> {
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

impl MatmulDevice for OpenCl {
    fn matmul_cutoff(&self) -> usize {
        if self.is_gpu() {
            GPU_CUTOFF
        } else {
            CPU_DEVICE_CUTOFF
        }
    }

    /// The [`HostMemory::Pinned`] and [`HostMemory::Mapped`] transfers of `matmul`, through
    /// the staging pool.
    fn matmul_staged(&self, st: Staged<'_, Self>) -> Result<()> {
        let Staged {
            memory,
            a: ha,
            b: hb,
            c: out,
            workspace: w,
            run,
        } = st;
        let w = self.mem_ref(w)?;
        let lens = [ha.len(), hb.len(), out.len()];
        if memory == HostMemory::Mapped {
            return self.with_staging(lens, |[sa, sb, sc]| {
                self.write_mapped(sa, ha, "mapping A")?;
                self.write_mapped(sb, hb, "mapping B")?;
                run(self, [sa.as_core(), sb.as_core(), sc.as_core(), w])?;
                self.read_mapped(sc, out)
            });
        }
        let da = self.alloc::<u8>(lens[0], None, "allocating A")?;
        let db = self.alloc::<u8>(lens[1], None, "allocating B")?;
        let dc = self.alloc::<u8>(lens[2], None, "allocating C")?;
        let copy = |src: &Buffer<u8>, dst: &Buffer<u8>, len: usize| -> Result<()> {
            if len == 0 {
                return Ok(());
            }
            src.copy(dst, None, Some(len))
                .queue(&self.queue)
                .enq()
                .or_cl(|| "copying a staged matrix")
        };
        self.with_staging(lens, |[sa, sb, sc]| {
            if ha.is_empty() || hb.is_empty() {
                self.write_mapped(sa, ha, "staging A")?;
                copy(sa, &da, lens[0])?;
                self.write_mapped(sb, hb, "staging B")?;
            } else {
                // Both buffers are mapped before A's copy is queued (a blocking map on an
                // in-order queue would wait for it), so that the DMA of A overlaps the
                // host's copy of B.
                // SAFETY: the only mappings of these pool buffers (the pool is locked), both
                // unmapped before any command that uses them.
                let mut ma = unsafe { sa.map().write_invalidate().len(ha.len()).enq() }
                    .or_cl(|| "mapping A's staging buffer")?;
                // SAFETY: as above.
                let mut mb = unsafe { sb.map().write_invalidate().len(hb.len()).enq() }
                    .or_cl(|| "mapping B's staging buffer")?;
                ma.copy_from_slice(ha);
                ma.unmap().enq().or_cl(|| "unmapping A's staging buffer")?;
                copy(sa, &da, lens[0])?;
                mb.copy_from_slice(hb);
                mb.unmap().enq().or_cl(|| "unmapping B's staging buffer")?;
            }
            copy(sb, &db, lens[1])?;
            run(self, [da.as_core(), db.as_core(), dc.as_core(), w])?;
            copy(&dc, sc, lens[2])?;
            self.read_mapped(sc, out)
        })
    }
}

//! What dense `C = A B` on CUDA adds to the matmul written once over the device layer
//! ([`trident_core::matmul::device`], which plans, checks, uploads and launches
//! `kernels/cuda/matmul.cu` on the backend's stream): the tensor-core base kernels and the
//! staged host transfers ([`MatmulDevice`]).
//!
//! Base kernels ([`MatMulOptions::base_kernel`]): f64 products run by default on the FP64
//! tensor cores (`gemm_dmma_f64`, `gemm_dmma_fused_f64`: DMMA m8n8k4) on compute capability
//! 9.0 and newer, the devices that load the `compute_90` PTX; `BaseKernel::Simt` forces the
//! SIMT kernels (`gemm_f64`). f32 has no tensor-core kernel (no TF32: the SGEMM
//! yardstick).
//!
//! Host transfers ([`HostMemory`]): `Pageable` copies from and to the caller's memory (the
//! driver stages through its own pinned buffers). `Pinned` and `Mapped` go through one
//! page-locked, device-mapped allocation that the backend keeps (its staging pool,
//! `cuMemHostAlloc(PORTABLE | DEVICEMAP)`, allocated on first use, reallocated only when a
//! call needs more, freed with the backend), because allocating page-locked memory costs far
//! more than the copies themselves. `Pinned` copies `A` and `B` into the pool in 4 MiB
//! chunks, queueing each chunk's asynchronous DMA to the device as soon as it is written (the
//! CPU's copy of one chunk overlaps the DMA of the previous one, and `B`'s copy overlaps `A`'s
//! DMA), runs the product, and brings `C` back the same way (chunked DMA into the pool, each
//! chunk copied out once its event has fired). `Mapped` copies `A` and `B` into the pool and
//! lets the kernels read them, and write `C`, over the bus (zero-copy: no device copy at all,
//! at PCIe/NVLink-C2C speed per access); it can win only when the bus traffic is small next to
//! the copies it saves: small products, or operands each read about once (the tiled kernel
//! reads `A` `n / 128` times and `B` `m / 128` times). A call that finds the pool in use by
//! another thread stages through an allocation of its own.

use std::ffi::c_void;
use std::sync::{Mutex, TryLockError};

use trident_core::device::Device;
use trident_core::gpu::Precision;
use trident_core::matmul::device::{MatmulDevice, Staged};
use trident_core::{Error, HostMemory, Result, Scalar};

use crate::memory::DevBuf;
use crate::staging::{check, Events, HostAlloc};
use crate::Cuda;

pub use trident_core::matmul::device::GPU_CUTOFF;

/// The staging pool of a [`Cuda`] backend: one [`HostAlloc`], reused by every `matmul` with
/// [`HostMemory::Pinned`] or [`HostMemory::Mapped`], grown (reallocated) when a call needs
/// more, freed with the backend. A call holds the lock until its copies are done; a call that
/// finds the pool busy (another thread's matmul) allocates its own for that call.
#[derive(Default)]
pub(crate) struct Staging(Mutex<Option<HostAlloc>>);

/// Staging regions start at multiples of this (a page: every `T` is aligned, and DMA of each
/// region starts on a page).
const STAGING_ALIGN: usize = 4096;
/// The pool grows in multiples of this.
const STAGING_GRANULE: usize = 1 << 20;
/// Copies between the caller's memory and the staging pool go in chunks of this many bytes,
/// so that the CPU's copy of one chunk overlaps the DMA of the previous one.
const CHUNK: usize = 4 << 20;

/// Byte offsets of `A`, `B` and `C` (of `bytes[i]` bytes each) in a staging allocation, and
/// its size.
fn staging_layout(bytes: [usize; 3]) -> Result<([usize; 3], usize)> {
    let mut offs = [0; 3];
    let mut end = 0usize;
    for (o, b) in offs.iter_mut().zip(bytes) {
        *o = end;
        end = end
            .checked_add(b)
            .and_then(|e| e.checked_next_multiple_of(STAGING_ALIGN))
            .ok_or_else(|| {
                Error::out_of_memory(crate::driver::BACKEND, "matmul staging size overflows")
            })?;
    }
    Ok((offs, end))
}

/// Copies `src` into the staging memory at `stage` and queues its DMA from there to device
/// address `dst` on `stream`, chunk by chunk: the CPU fills chunk `i + 1` while the copy
/// engine moves chunk `i`.
///
/// # Safety
/// `stage` must point to at least `src.len()` page-locked bytes that no queued work reads or
/// writes, `dst` to as many device bytes, and both must stay alive until the stream is
/// synchronized.
unsafe fn upload(
    stream: cust::sys::CUstream,
    dst: u64,
    src: &[u8],
    stage: *mut u8,
    what: &str,
) -> Result<()> {
    for (i, chunk) in src.chunks(CHUNK).enumerate() {
        let off = i * CHUNK;
        // SAFETY (caller's contract): `stage + off .. + chunk.len()` lies in the staging
        // region, which no queued copy uses yet (earlier chunks are before it); the source
        // is the caller's slice, disjoint from page-locked memory we own.
        std::ptr::copy_nonoverlapping(chunk.as_ptr(), stage.add(off), chunk.len());
        check(
            cust::sys::cuMemcpyHtoDAsync_v2(
                dst + off as u64,
                stage.add(off).cast::<c_void>().cast_const(),
                chunk.len(),
                stream,
            ),
            what,
        )?;
    }
    Ok(())
}

/// Queues the DMA of `out.len()` bytes from device address `src` into the staging memory at
/// `stage` on `stream` and copies each chunk on to `out` as soon as it has arrived.
///
/// # Safety
/// `stage` must point to at least `out.len()` page-locked bytes that no other queued work
/// uses, `src` to as many device bytes written by the work queued before.
unsafe fn download(
    stream: cust::sys::CUstream,
    src: u64,
    out: &mut [u8],
    stage: *mut u8,
) -> Result<()> {
    let chunks = out.len().div_ceil(CHUNK);
    let events = Events::new(chunks)?;
    for (i, &e) in events.0.iter().enumerate() {
        let off = i * CHUNK;
        let len = CHUNK.min(out.len() - off);
        check(
            cust::sys::cuMemcpyDtoHAsync_v2(
                stage.add(off).cast::<c_void>(),
                src + off as u64,
                len,
                stream,
            ),
            "copying C to page-locked memory",
        )?;
        check(cust::sys::cuEventRecord(e, stream), "recording an event")?;
    }
    for (i, (&e, dst)) in events.0.iter().zip(out.chunks_mut(CHUNK)).enumerate() {
        check(
            cust::sys::cuEventSynchronize(e),
            "waiting for C's download (a kernel failed?)",
        )?;
        // SAFETY: the chunk's DMA has completed (its event), so the staging bytes hold C's.
        std::ptr::copy_nonoverlapping(stage.add(i * CHUNK), dst.as_mut_ptr(), dst.len());
    }
    Ok(())
}

impl Cuda {
    /// Whether `T` has the tensor-core base kernel here: f64 on compute capability 9.0 and
    /// newer (the devices that load the `compute_90` PTX, where `gemm_dmma_f64` is built
    /// with DMMA; the portable `compute_75` PTX has only a trapping stub of it).
    fn dmma_available<T: Scalar>(&self) -> bool {
        Precision::of::<T>() == Precision::F64 && self.compute_capability.0 >= 9
    }

    /// Runs `f` with page-locked staging memory of at least `bytes` bytes: the backend's pool
    /// (reallocated larger when too small) or, when another thread's matmul holds the pool,
    /// an allocation of this call's own. The context must be current; `f` must have
    /// synchronized with the stream work that uses the memory when it returns, error or not.
    fn with_staging<R>(&self, bytes: usize, f: impl FnOnce(&HostAlloc) -> Result<R>) -> Result<R> {
        let mut pool = match self.staging.0.try_lock() {
            Ok(g) => g,
            // A call panicked while holding the pool: wait until nothing it queued can still
            // use the memory, then reuse it.
            Err(TryLockError::Poisoned(p)) => {
                self.shared.synchronize()?;
                p.into_inner()
            }
            Err(TryLockError::WouldBlock) => {
                return f(&HostAlloc::new(&self.shared, bytes, "matmul")?)
            }
        };
        if pool.as_ref().is_none_or(|h| h.bytes < bytes) {
            // Free the old allocation before taking the larger one.
            *pool = None;
            let size = bytes
                .checked_next_multiple_of(STAGING_GRANULE)
                .unwrap_or(bytes);
            *pool = Some(HostAlloc::new(&self.shared, size, "matmul")?);
        }
        match pool.as_ref() {
            Some(h) => f(h),
            None => unreachable!("the pool was filled above"),
        }
    }
}

impl MatmulDevice for Cuda {
    fn tensor_core_kernels<T: Scalar>(&self) -> Option<[&'static str; 2]> {
        self.dmma_available::<T>()
            .then_some(["gemm_dmma_f64", "gemm_dmma_fused_f64"])
    }

    /// The [`HostMemory::Pinned`] and [`HostMemory::Mapped`] transfers of `matmul`, through
    /// the staging pool.
    fn matmul_staged(&self, st: Staged<'_, Self>) -> Result<()> {
        let (memory, ha, hb, out, run) = (st.memory, st.a, st.b, st.c, st.run);
        self.shared.make_current()?;
        let sh = &self.shared;
        let (offs, total) = staging_layout([ha.len(), hb.len(), out.len()])?;
        let w = self.mem_ref(st.workspace)?;
        let stream = sh.raw_stream();
        self.with_staging(total, |st| {
            let stage = |i: usize| st.host.wrapping_add(offs[i]);
            if memory == HostMemory::Mapped {
                // SAFETY: the three regions lie inside the allocation (`staging_layout`,
                // `with_staging` sized it) and are disjoint; no queued work uses the pool
                // (every user synchronizes before releasing it).
                unsafe {
                    std::ptr::copy_nonoverlapping(ha.as_ptr(), stage(0), ha.len());
                    std::ptr::copy_nonoverlapping(hb.as_ptr(), stage(1), hb.len());
                }
                let ptrs = [0, 1, 2].map(|i| st.device + offs[i] as u64);
                let ran = run(self, [ptrs[0], ptrs[1], ptrs[2], w]);
                // Wait before the mapped memory can be read or reused, whatever happened.
                let synced = sh.synchronize();
                ran?;
                synced?;
                // SAFETY: C's region holds m n values, written by the finished kernels.
                unsafe {
                    std::ptr::copy_nonoverlapping(stage(2), out.as_mut_ptr(), out.len());
                }
                return Ok(());
            }
            let da = DevBuf::<u8>::uninit(sh, ha.len(), "A")?;
            let db = DevBuf::<u8>::uninit(sh, hb.len(), "B")?;
            let dc = DevBuf::<u8>::uninit(sh, out.len(), "C")?;
            let ran = (|| -> Result<()> {
                // SAFETY: each staging region holds its matrix's bytes and is used by no
                // other queued work; the device buffers hold as many bytes; everything stays
                // alive until the synchronize below.
                unsafe {
                    upload(
                        stream,
                        da.ptr().as_raw(),
                        ha,
                        stage(0),
                        "copying A to the device",
                    )?;
                    upload(
                        stream,
                        db.ptr().as_raw(),
                        hb,
                        stage(1),
                        "copying B to the device",
                    )?;
                }
                let ptrs = [da.ptr(), db.ptr(), dc.ptr()].map(|p| p.as_raw());
                run(self, [ptrs[0], ptrs[1], ptrs[2], w])?;
                // SAFETY: C's staging region holds m n values and is used by nothing else;
                // `dc` holds C, written by the work queued before.
                unsafe { download(stream, dc.ptr().as_raw(), out, stage(2)) }
            })();
            // The pool and the device buffers must be idle before they are reused or freed.
            let synced = sh.synchronize();
            ran?;
            synced
        })
    }
}

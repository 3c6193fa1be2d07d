//! Page-locked staging for host transfers: the backend's pool of `cuMemHostAlloc` memory
//! (allocated on first use, grown when a call needs more, freed with the backend), and the
//! chunked copies through it. A chunked upload copies the caller's values into the pool 4 MiB
//! at a time, queueing each chunk's DMA as soon as it is written (the CPU's copy of one chunk
//! overlaps the DMA of the previous one); a chunked download queues the DMAs and copies each
//! chunk out once its event has fired. Used by matmul's `HostMemory::Pinned` and `Mapped`
//! transfers and by the SVD's large uploads and downloads ([`Cuda::upload_staged`],
//! [`Cuda::download_staged`]).

use std::ffi::c_void;
use std::sync::{Arc, Mutex, TryLockError};

use trident_core::gpu::check_download_len;
use trident_core::{Error, Result};

use crate::driver;
use crate::memory::{CudaScalar, DevBuf};
use crate::{Cuda, Shared};

/// Page-locked host memory (`cuMemHostAlloc` with `PORTABLE | DEVICEMAP`), mapped into the
/// device's address space: a DMA source and target for `HostMemory::Pinned`, and the operands
/// themselves for `HostMemory::Mapped`.
pub(crate) struct HostAlloc {
    pub(crate) host: *mut u8,
    pub(crate) device: u64,
    pub(crate) bytes: usize,
    shared: Arc<Shared>,
}

// SAFETY: the allocation is plain page-locked memory owned by this value; the raw pointer is
// only dereferenced by the code that holds the value (through the staging pool's lock,
// or as its only owner), after synchronizing with the stream work that used it.
unsafe impl Send for HostAlloc {}

impl HostAlloc {
    /// `bytes` (at least 1) bytes. The context must be current.
    pub(crate) fn new(shared: &Arc<Shared>, bytes: usize) -> Result<Self> {
        let bytes = bytes.max(1);
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: `host` is writable; flags PORTABLE (1) | DEVICEMAP (2): page-locked for
        // every context, and mapped into the device's address space.
        let rc = unsafe { cust::sys::cuMemHostAlloc(&mut host, bytes, 1 | 2) };
        if rc != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(driver::error_from_code(
                rc as i32,
                format!("allocating {bytes} bytes of page-locked host memory for staging"),
            ));
        }
        let mut device: cust::sys::CUdeviceptr = 0;
        // SAFETY: `host` is a live DEVICEMAP allocation; `device` is writable.
        let rc = unsafe { cust::sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) };
        let buf = Self {
            host: host.cast(),
            device,
            bytes,
            shared: Arc::clone(shared),
        };
        if rc != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(driver::error_from_code(
                rc as i32,
                "mapping page-locked host memory into the device",
            ));
        }
        Ok(buf)
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        let _ = self.shared.make_current();
        // SAFETY: `host` came from cuMemHostAlloc and is freed once, here, after the stream
        // work that used it (every user synchronizes before giving the memory back).
        unsafe {
            cust::sys::cuMemFreeHost(self.host.cast());
        }
    }
}

/// The staging pool of a [`Cuda`] backend: one [`HostAlloc`], reused by every staged transfer
/// (matmul's `HostMemory::Pinned` and `Mapped`, the SVD's large matrices), grown (reallocated) when a call needs
/// more, freed with the backend. A call holds the lock until its copies are done; a call that
/// finds the pool busy (another thread's call) allocates its own for that call.
#[derive(Default)]
pub(crate) struct Staging(Mutex<Option<HostAlloc>>);

/// Staging regions start at multiples of this (a page: every `T` is aligned, and DMA of each
/// region starts on a page).
pub(crate) const STAGING_ALIGN: usize = 4096;
/// The pool grows in multiples of this.
const STAGING_GRANULE: usize = 1 << 20;
/// Copies between the caller's memory and the staging pool go in chunks of this many bytes,
/// so that the CPU's copy of one chunk overlaps the DMA of the previous one.
pub(crate) const CHUNK: usize = 4 << 20;

/// Byte offsets of `A`, `B` and `C` (of `bytes[i]` bytes each) in a staging allocation, and
/// its size.
pub(crate) fn staging_layout(bytes: [usize; 3]) -> Result<([usize; 3], usize)> {
    let mut offs = [0; 3];
    let mut end = 0usize;
    for (o, b) in offs.iter_mut().zip(bytes) {
        *o = end;
        end = end
            .checked_add(b)
            .and_then(|e| e.checked_next_multiple_of(STAGING_ALIGN))
            .ok_or_else(|| Error::out_of_memory(driver::BACKEND, "staging size overflows"))?;
    }
    Ok((offs, end))
}

/// The events of a chunked download (destroyed on drop).
struct Events(Vec<cust::sys::CUevent>);

impl Events {
    /// `n` events without timing. The context must be current.
    fn new(n: usize) -> Result<Self> {
        let mut ev = Events(Vec::with_capacity(n));
        for _ in 0..n {
            let mut e: cust::sys::CUevent = std::ptr::null_mut();
            // SAFETY: `e` is writable; flag DISABLE_TIMING (2).
            let rc = unsafe { cust::sys::cuEventCreate(&mut e, 2) };
            check(rc, "creating an event")?;
            ev.0.push(e);
        }
        Ok(ev)
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        for &e in &self.0 {
            // SAFETY: each event came from cuEventCreate and is destroyed once (a recorded
            // event may be destroyed before it completes; the driver releases it then).
            unsafe {
                cust::sys::cuEventDestroy_v2(e);
            }
        }
    }
}

/// `Ok` for CUDA_SUCCESS, else the driver's error with `what`.
pub(crate) fn check(rc: cust::sys::CUresult, what: &str) -> Result<()> {
    if rc == cust::sys::cudaError_enum::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(driver::error_from_code(rc as i32, what.to_string()))
    }
}

/// Copies `src` into the staging memory at `stage` and queues its DMA from there to device
/// address `dst` on `stream`, chunk by chunk: the CPU fills chunk `i + 1` while the copy
/// engine moves chunk `i`.
///
/// # Safety
/// `stage` must point to at least `src.len()` page-locked bytes that no queued work reads or
/// writes, `dst` to as many device bytes, and both must stay alive until the stream is
/// synchronized.
pub(crate) unsafe fn upload(
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
pub(crate) unsafe fn download(
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
            "copying device values to page-locked memory",
        )?;
        check(cust::sys::cuEventRecord(e, stream), "recording an event")?;
    }
    for (i, (&e, dst)) in events.0.iter().zip(out.chunks_mut(CHUNK)).enumerate() {
        check(
            cust::sys::cuEventSynchronize(e),
            "waiting for a download (a kernel failed?)",
        )?;
        // SAFETY: the chunk's DMA has completed (its event), so the staging bytes hold the device's.
        std::ptr::copy_nonoverlapping(stage.add(i * CHUNK), dst.as_mut_ptr(), dst.len());
    }
    Ok(())
}

/// `v`'s values as bytes.
pub(crate) fn as_bytes<T: CudaScalar>(v: &[T]) -> &[u8] {
    // SAFETY: f32 and f64 (every CudaScalar) have no padding and no invalid bit patterns;
    // the byte slice covers exactly `v`'s memory and borrows it.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// `v`'s values as mutable bytes.
pub(crate) fn as_bytes_mut<T: CudaScalar>(v: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: as `as_bytes`; every byte pattern is a valid f32/f64, so writes through the
    // byte view cannot make an invalid value.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

impl Cuda {
    /// Runs `f` with page-locked staging memory of at least `bytes` bytes: the backend's pool
    /// (reallocated larger when too small) or, when another thread's call holds the pool,
    /// an allocation of this call's own. The context must be current; `f` must have
    /// synchronized with the stream work that uses the memory when it returns, error or not.
    pub(crate) fn with_staging<R>(
        &self,
        bytes: usize,
        f: impl FnOnce(&HostAlloc) -> Result<R>,
    ) -> Result<R> {
        let mut pool = match self.staging.0.try_lock() {
            Ok(g) => g,
            // A call panicked while holding the pool: wait until nothing it queued can still
            // use the memory, then reuse it.
            Err(TryLockError::Poisoned(p)) => {
                self.shared.synchronize()?;
                p.into_inner()
            }
            Err(TryLockError::WouldBlock) => return f(&HostAlloc::new(&self.shared, bytes)?),
        };
        if pool.as_ref().is_none_or(|h| h.bytes < bytes) {
            // Free the old allocation before taking the larger one.
            *pool = None;
            let size = bytes
                .checked_next_multiple_of(STAGING_GRANULE)
                .unwrap_or(bytes);
            *pool = Some(HostAlloc::new(&self.shared, size)?);
        }
        match pool.as_ref() {
            Some(h) => f(h),
            None => unreachable!("the pool was filled above"),
        }
    }

    /// Copies `host` into `dst` (as long) through the staging pool, waiting until done. Falls
    /// back to a plain (pageable) copy when no page-locked memory can be had. The context
    /// must be current.
    pub(crate) fn upload_staged<T: CudaScalar>(
        &self,
        dst: &mut DevBuf<T>,
        host: &[T],
        what: &str,
    ) -> Result<()> {
        check_download_len(dst.len(), host.len())?;
        let bytes = as_bytes(host);
        let stream = self.shared.raw_stream();
        let staged = self.with_staging(bytes.len(), |st| {
            // SAFETY: the pool holds at least `bytes.len()` page-locked bytes that no queued
            // work uses (every user synchronizes before releasing it); `dst` holds as many
            // device bytes; both outlive the synchronize below.
            let run = unsafe { upload(stream, dst.ptr().as_raw(), bytes, st.host, what) };
            let synced = self.shared.synchronize();
            run.and(synced)
        });
        match staged {
            Err(Error::OutOfMemory { .. }) => dst.copy_from_host(host, what),
            r => r,
        }
    }

    /// Copies `src` into `out` (as long) through the staging pool, after the work queued
    /// before. Falls back to a plain (pageable) copy when no page-locked memory can be had.
    /// The context must be current.
    pub(crate) fn download_staged<T: CudaScalar>(
        &self,
        src: &DevBuf<T>,
        out: &mut [T],
    ) -> Result<()> {
        check_download_len(src.len(), out.len())?;
        let stream = self.shared.raw_stream();
        let bytes = std::mem::size_of_val(out);
        let staged = self.with_staging(bytes, |st| {
            // SAFETY: the pool holds at least `bytes` page-locked bytes used by no other
            // queued work; `src` holds as many device bytes, written by the work queued
            // before; the synchronize below ends every use of the pool.
            let run = unsafe { download(stream, src.ptr().as_raw(), as_bytes_mut(out), st.host) };
            let synced = self.shared.synchronize();
            run.and(synced)
        });
        match staged {
            Err(Error::OutOfMemory { .. }) => {
                self.shared.synchronize()?;
                src.copy_to_host(out)
            }
            r => r,
        }
    }
}

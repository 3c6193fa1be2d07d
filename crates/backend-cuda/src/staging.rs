//! Page-locked staging of the copies between host and device.
//!
//! A copy from pageable memory (`cuMemcpyHtoD` of the caller's slice) goes through the
//! driver's own small pinned buffers, one at a time, at a fraction of the bus's speed. The
//! backend therefore keeps a ring of [`SLOTS`] page-locked slots of [`SLOT`] bytes
//! ([`Transfers`], allocated on the first large copy, freed with the backend): an upload
//! copies each chunk of the source into a free slot with all the threads of the pool
//! ([`trident_core::alloc::par_copy`]) and queues its DMA at once, so that the CPU fills one
//! slot while the copy engine empties another; a download queues the DMA of the first chunks
//! and copies each out as soon as its event has fired, queueing the next into the freed slot.
//! Copies below [`STAGED_MIN`] bytes, a ring held by another thread, or a host that refuses
//! page-locked memory copy directly, as before. `matmul`'s staging pool (whole operands, and
//! its mapped mode) also allocates its memory here ([`HostAlloc`]).

// Raw driver calls on page-locked memory: each `unsafe` says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::{Arc, Mutex, TryLockError};

use cust::memory::DeviceCopy;
use trident_core::alloc::par_copy;
use trident_core::{Result, ResultExt};

use crate::driver;
use crate::memory::DevBuf;
use crate::{Cuda, Shared};

/// Bytes of one slot of the transfer ring (`STAGING_SLOT`).
pub const SLOT: usize = 16 << 20;
/// Slots of the transfer ring (`STAGING_SLOTS`).
pub const SLOTS: usize = 4;
/// Copies of at least this many bytes go through the ring; smaller ones copy directly.
pub const STAGED_MIN: usize = 1 << 20;

/// Page-locked host memory (`cuMemHostAlloc` with `PORTABLE | DEVICEMAP`), mapped into the
/// device's address space: a DMA source and target for [`HostMemory::Pinned`], and the operands
/// themselves for [`HostMemory::Mapped`].
pub(crate) struct HostAlloc {
    pub(crate) host: *mut u8,
    pub(crate) device: u64,
    pub(crate) bytes: usize,
    shared: Arc<Shared>,
}

// SAFETY: the allocation is plain page-locked memory owned by this value; the raw pointer is
// only dereferenced by the code that holds the value (through its pool's lock, or as its only
// owner), after synchronizing with the stream work that used it.
unsafe impl Send for HostAlloc {}

impl HostAlloc {
    /// `bytes` (at least 1) bytes, for `what` (named in the error). The context must be
    /// current.
    pub(crate) fn new(shared: &Arc<Shared>, bytes: usize, what: &str) -> Result<Self> {
        let bytes = bytes.max(1);
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: `host` is writable; flags PORTABLE (1) | DEVICEMAP (2): page-locked for
        // every context, and mapped into the device's address space.
        let rc = unsafe { cust::sys::cuMemHostAlloc(&mut host, bytes, 1 | 2) };
        if rc != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(driver::error_from_code(
                rc as i32,
                format!("allocating {bytes} bytes of page-locked host memory for {what}"),
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

/// Events of chunked copies (destroyed on drop).
pub(crate) struct Events(pub(crate) Vec<cust::sys::CUevent>);

impl Events {
    /// `n` events without timing. The context must be current.
    pub(crate) fn new(n: usize) -> Result<Self> {
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

/// The ring of page-locked slots of a backend's staged copies, and the events that say when
/// each slot's last DMA has finished.
pub(crate) struct Ring {
    mem: HostAlloc,
    events: Events,
}

// SAFETY: the ring's page-locked memory and events are driver objects owned by this value; it
// is only used through `Transfers`' lock, by one copy at a time, which waits for its DMA
// before it releases the lock.
unsafe impl Send for Ring {}

/// The state of a backend's ring: not yet needed, ready, or refused by the host (page-locked
/// memory is limited; every copy is then direct).
#[derive(Default)]
enum RingState {
    #[default]
    Untried,
    Ready(Ring),
    Refused,
}

/// A backend's transfer ring (see the module documentation), behind a lock: one copy uses it
/// at a time; a copy that finds it in use copies directly.
#[derive(Default)]
pub(crate) struct Transfers(Mutex<RingState>);

impl Ring {
    /// A ring of [`SLOTS`] slots. The context must be current.
    fn new(shared: &Arc<Shared>) -> Result<Self> {
        Ok(Self {
            mem: HostAlloc::new(shared, SLOTS * SLOT, "the transfer ring")?,
            events: Events::new(SLOTS)?,
        })
    }

    /// Slot `s`'s page-locked bytes.
    fn slot(&self, s: usize) -> *mut u8 {
        debug_assert!(s < SLOTS && self.mem.bytes >= SLOTS * SLOT);
        self.mem.host.wrapping_add(s * SLOT)
    }

    /// Copies `src` to the device bytes at `dst`, chunk by chunk through the slots, on
    /// `stream`, and returns once every chunk has arrived.
    ///
    /// # Safety
    /// `dst` must be `src.len()` device bytes of the current context that stay alive, and
    /// that no queued work reads or writes, until this returns; `stream` a stream of that
    /// context.
    unsafe fn upload(
        &self,
        stream: cust::sys::CUstream,
        dst: u64,
        src: &[u8],
        what: &str,
    ) -> Result<()> {
        let mut queued = [false; SLOTS];
        let run = (|| -> Result<()> {
            for (i, chunk) in src.chunks(SLOT).enumerate() {
                let s = i % SLOTS;
                if queued[s] {
                    self.wait_slot(s, what)?;
                }
                // SAFETY: slot `s` is SLOT >= chunk.len() page-locked bytes of the ring, which
                // no queued DMA uses any more (its event fired, or it never had one), and is
                // disjoint from the caller's slice.
                let stage = unsafe { std::slice::from_raw_parts_mut(self.slot(s), chunk.len()) };
                par_copy(stage, chunk);
                // SAFETY: `dst + i·SLOT .. + chunk.len()` lies inside the caller's device
                // bytes; the slot stays untouched until its event, recorded next, fires.
                let rc = unsafe {
                    cust::sys::cuMemcpyHtoDAsync_v2(
                        dst + (i * SLOT) as u64,
                        stage.as_ptr().cast::<c_void>(),
                        chunk.len(),
                        stream,
                    )
                };
                check(rc, what)?;
                self.record(s, stream, what)?;
                queued[s] = true;
            }
            Ok(())
        })();
        // Every queued DMA has finished before the slots can be reused (also after an
        // error): the data is on the device.
        let done = self.wait(&queued, what);
        run.and(done)
    }

    /// Copies the first `out.len()` device bytes at `src` into `out`, chunk by chunk through
    /// the slots, on `stream`.
    ///
    /// # Safety
    /// `src` must be at least `out.len()` device bytes of the current context, written by
    /// work finished or queued on `stream` before, and alive until this returns; `stream` a
    /// stream of that context.
    unsafe fn download(
        &self,
        stream: cust::sys::CUstream,
        src: u64,
        out: &mut [u8],
        what: &str,
    ) -> Result<()> {
        let chunks = out.len().div_ceil(SLOT);
        let mut queued = [false; SLOTS];
        let len = out.len();
        let queue = |i: usize, queued: &mut [bool; SLOTS]| -> Result<()> {
            let s = i % SLOTS;
            let bytes = SLOT.min(len - i * SLOT);
            // SAFETY: slot `s` holds SLOT >= bytes page-locked bytes that no queued DMA
            // uses (its previous chunk was copied out after its event fired); the source
            // range lies inside the caller's device bytes.
            let rc = unsafe {
                cust::sys::cuMemcpyDtoHAsync_v2(
                    self.slot(s).cast::<c_void>(),
                    src + (i * SLOT) as u64,
                    bytes,
                    stream,
                )
            };
            check(rc, what)?;
            self.record(s, stream, what)?;
            queued[s] = true;
            Ok(())
        };
        let run = (|| -> Result<()> {
            for i in 0..chunks.min(SLOTS) {
                queue(i, &mut queued)?;
            }
            for (i, dst) in out.chunks_mut(SLOT).enumerate() {
                let s = i % SLOTS;
                self.wait_slot(s, what)?;
                queued[s] = false;
                // SAFETY: chunk i's DMA into slot s has completed (its event), so its first
                // dst.len() bytes hold the chunk; nothing writes the slot until it is queued
                // again below.
                let stage = unsafe { std::slice::from_raw_parts(self.slot(s), dst.len()) };
                par_copy(dst, stage);
                if i + SLOTS < chunks {
                    queue(i + SLOTS, &mut queued)?;
                }
            }
            Ok(())
        })();
        let done = self.wait(&queued, what);
        run.and(done)
    }

    /// Records slot `s`'s event on `stream`, after the DMA just queued there.
    fn record(&self, s: usize, stream: cust::sys::CUstream, what: &str) -> Result<()> {
        // SAFETY: a live event of the ring and a stream of the current context.
        let rc = unsafe { cust::sys::cuEventRecord(self.events.0[s], stream) };
        check(rc, what)
    }

    /// Waits for slot `s`'s last recorded DMA.
    fn wait_slot(&self, s: usize, what: &str) -> Result<()> {
        // SAFETY: a live event of the ring (one never recorded completes at once).
        let rc = unsafe { cust::sys::cuEventSynchronize(self.events.0[s]) };
        check(rc, what)
    }

    /// Waits for the last DMA of every slot marked in `queued` (all of them, even after an
    /// error).
    fn wait(&self, queued: &[bool; SLOTS], what: &str) -> Result<()> {
        let mut result = Ok(());
        for s in (0..SLOTS).filter(|&s| queued[s]) {
            let waited = self.wait_slot(s, what);
            result = result.and(waited);
        }
        result
    }
}

/// The bytes of `x`: `T` is plain data (the device copies move it byte for byte).
fn bytes_of<T: DeviceCopy>(x: &[T]) -> &[u8] {
    // SAFETY: the memory of `x` is `size_of_val(x)` initialised bytes, borrowed for as long
    // as the result; every `T` copied here (u8, u32, u64, f32, f64) has no padding.
    unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<u8>(), std::mem::size_of_val(x)) }
}

/// The bytes of `x`, writable: `T` is plain data, any bytes a valid `T`.
fn bytes_of_mut<T: DeviceCopy>(x: &mut [T]) -> &mut [u8] {
    // SAFETY: as `bytes_of`, borrowed mutably; every `T` copied here (u8, u32, u64, f32, f64)
    // is valid for any bytes, as a device copy into it (cust's `copy_to`) assumes too.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(x)) }
}

impl Cuda {
    /// Runs `f` with the transfer ring, made on first use; `None` when the copy is small,
    /// the ring is in use by another thread, or the host refused its page-locked memory:
    /// the caller copies directly then. The context must be current.
    fn with_ring<R>(&self, bytes: usize, f: impl FnOnce(&Ring) -> Result<R>) -> Option<Result<R>> {
        if bytes < STAGED_MIN {
            return None;
        }
        let mut state = match self.transfers.0.try_lock() {
            Ok(g) => g,
            // A copy panicked while holding the ring: every copy waits for its DMA before
            // it returns or unwinds past `wait`, except between a queue and that wait; wait
            // for the stream, then reuse it.
            Err(TryLockError::Poisoned(p)) => {
                if self.shared.synchronize().is_err() {
                    return None;
                }
                p.into_inner()
            }
            Err(TryLockError::WouldBlock) => return None,
        };
        if matches!(*state, RingState::Untried) {
            *state = match Ring::new(&self.shared) {
                Ok(r) => RingState::Ready(r),
                Err(_) => RingState::Refused,
            };
        }
        match &*state {
            RingState::Ready(r) => Some(f(r)),
            _ => None,
        }
    }

    /// A copy of `host` in device memory, through the transfer ring when it is large. The
    /// context must be current.
    pub(crate) fn buf_from_host<T: DeviceCopy>(&self, host: &[T], what: &str) -> Result<DevBuf<T>> {
        let bytes = std::mem::size_of_val(host);
        if bytes < STAGED_MIN {
            return DevBuf::from_host(&self.shared, host, what);
        }
        let buf = DevBuf::<T>::uninit(&self.shared, host.len(), what)?;
        let stream = self.shared.raw_stream();
        let copied = self.with_ring(bytes, |r| {
            // SAFETY: `buf` is a fresh allocation of exactly `bytes` bytes in the current
            // context, which no queued work knows of, alive until the upload returns.
            unsafe { r.upload(stream, buf.ptr().as_raw(), bytes_of(host), what) }
        });
        match copied {
            Some(r) => r.map(|()| buf),
            None => {
                drop(buf);
                DevBuf::from_host(&self.shared, host, what)
            }
        }
    }

    /// Copies the first `host.len()` elements of `buf` into `host`, through the transfer
    /// ring when they are large. The context must be current and the work queued before on
    /// the backend's stream finished (or queued: the ring's copies go on that stream).
    pub(crate) fn head_to_host<T: DeviceCopy>(
        &self,
        buf: &DevBuf<T>,
        host: &mut [T],
        what: &str,
    ) -> Result<()> {
        let bytes = std::mem::size_of_val(host);
        if host.len() <= buf.len() {
            let stream = self.shared.raw_stream();
            let src = buf.ptr().as_raw();
            let out = bytes_of_mut(host);
            // SAFETY: `buf` holds at least `host.len()` elements (checked above) of this
            // context, alive for the call, written by the work on the backend's stream.
            let copied = self.with_ring(bytes, |r| unsafe { r.download(stream, src, out, what) });
            if let Some(r) = copied {
                return r;
            }
        }
        buf.copy_head_to_host(host).context(|| what)
    }
}

//! Page-locked host memory: the staging ring of the copies between host and device, whose
//! schedule is written once for every GPU backend ([`trident_core::device::ring`]), and the
//! allocation (`HostAlloc`) that it and `matmul`'s staging pool use.
//!
//! The ring is [`SLOTS`] slots of [`SLOT`] bytes of one `cuMemHostAlloc`, with one event per
//! slot, allocated on the first copy of at least [`STAGED_MIN`] bytes and freed with the
//! backend. Its copies go on the backend's stream, so they are ordered after the work queued
//! before them; a copy that finds the ring in use by another thread, or a host that refuses
//! page-locked memory, copies directly, as before.

// Raw driver calls on page-locked memory: each `unsafe` says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::Arc;

use cust::memory::DeviceCopy;
use trident_core::device::ring::{self, Pod, RingCopy, SLOT, SLOTS, STAGED_MIN};
use trident_core::{Result, ResultExt};

use crate::driver;
use crate::memory::DevBuf;
use crate::{Cuda, Shared};

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
/// each slot's last copy has finished.
pub(crate) struct Ring {
    mem: HostAlloc,
    events: Events,
}

// SAFETY: the ring's page-locked memory and events are driver objects owned by this value; it
// is only used through `Transfers`' lock, by one copy at a time, which waits for its copies
// before it releases the lock.
unsafe impl Send for Ring {}

/// A backend's transfer ring ([`ring::Transfers`]).
pub(crate) type Transfers = ring::Transfers<Ring>;

impl Ring {
    /// A ring of [`SLOTS`] slots. The context must be current.
    fn new(shared: &Arc<Shared>) -> Result<Self> {
        Ok(Self {
            mem: HostAlloc::new(shared, SLOTS * SLOT, "the transfer ring")?,
            events: Events::new(SLOTS)?,
        })
    }
}

/// The ring bound to `bytes` device bytes at `dev` for one copy on `stream` (the context
/// current): which slots have a copy queued.
struct Bound<'a> {
    ring: &'a Ring,
    stream: cust::sys::CUstream,
    dev: u64,
    bytes: usize,
    queued: [bool; SLOTS],
    what: &'a str,
}

impl Bound<'_> {
    /// Slot `s`'s first byte.
    fn at(&self, s: usize) -> *mut u8 {
        assert!(s < SLOTS, "slot {s} of {SLOTS}");
        self.ring.mem.host.wrapping_add(s * SLOT)
    }

    /// Waits for slot `s`'s queued copy, if any.
    fn wait(&mut self, s: usize) -> Result<()> {
        if std::mem::take(&mut self.queued[s]) {
            // SAFETY: a live event of the ring, recorded after the slot's copy.
            let rc = unsafe { cust::sys::cuEventSynchronize(self.ring.events.0[s]) };
            check(rc, self.what)?;
        }
        Ok(())
    }

    /// Records slot `s`'s event after the copy just queued on it.
    fn record(&mut self, s: usize) -> Result<()> {
        // SAFETY: a live event of the ring and a stream of the current context.
        let rc = unsafe { cust::sys::cuEventRecord(self.ring.events.0[s], self.stream) };
        // The copy is queued even when the record fails: wait for the stream then.
        self.queued[s] = true;
        check(rc, self.what)
    }
}

impl RingCopy for Bound<'_> {
    fn slot(&mut self, s: usize) -> Result<&mut [u8]> {
        self.wait(s)?;
        // SAFETY: slot `s` is SLOT page-locked bytes of the ring, which this copy holds alone
        // (the lock) and whose last queued copy has finished (waited above); the borrow of
        // `self` ends before another copy can be queued on it.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.at(s), SLOT) })
    }

    fn to_device(&mut self, s: usize, len: usize, at: usize) -> Result<()> {
        ring::check_copy(self.what, self.bytes, s, len, at);
        self.wait(s)?;
        // SAFETY: the slot's first `len` bytes and the device bytes `at .. at + len` lie in
        // the ring and in the bound buffer (checked above), both alive until `finish`; nothing
        // touches the slot until its event, recorded next, has been waited for.
        let rc = unsafe {
            cust::sys::cuMemcpyHtoDAsync_v2(
                self.dev + at as u64,
                self.at(s).cast::<c_void>().cast_const(),
                len,
                self.stream,
            )
        };
        check(rc, self.what)?;
        self.record(s)
    }

    fn to_host(&mut self, s: usize, len: usize, at: usize) -> Result<()> {
        ring::check_copy(self.what, self.bytes, s, len, at);
        self.wait(s)?;
        // SAFETY: as in `to_device`, the copy going the other way; the bound buffer's bytes
        // were written by the work queued before on this stream.
        let rc = unsafe {
            cust::sys::cuMemcpyDtoHAsync_v2(
                self.at(s).cast::<c_void>(),
                self.dev + at as u64,
                len,
                self.stream,
            )
        };
        check(rc, self.what)?;
        self.record(s)
    }

    fn finish(&mut self) -> Result<()> {
        let result = ring::wait_all(|s| self.wait(s));
        if result.is_err() {
            // A failed wait may leave a copy running: the stream must be idle before the
            // slots are reused.
            // SAFETY: a stream of the current context.
            let _ = unsafe { cust::sys::cuStreamSynchronize(self.stream) };
        }
        result
    }
}

impl Cuda {
    /// Runs `f` with the transfer ring (see [`ring::Transfers::with`]). The context must be
    /// current.
    fn with_ring<R>(&self, bytes: usize, f: impl FnOnce(&Ring) -> Result<R>) -> Option<Result<R>> {
        self.transfers.with(
            bytes,
            || Ring::new(&self.shared),
            || self.shared.synchronize().is_ok(),
            f,
        )
    }

    /// A copy of `host` in device memory, through the transfer ring when it is large. The
    /// context must be current.
    pub(crate) fn buf_from_host<T: DeviceCopy + Pod>(
        &self,
        host: &[T],
        what: &str,
    ) -> Result<DevBuf<T>> {
        let bytes = std::mem::size_of_val(host);
        if bytes < STAGED_MIN {
            return DevBuf::from_host(&self.shared, host, what);
        }
        let buf = DevBuf::<T>::uninit(&self.shared, host.len(), what)?;
        let stream = self.shared.raw_stream();
        let copied = self.with_ring(bytes, |ring| {
            // `buf`: a fresh allocation of exactly `bytes` bytes, alive until the upload
            // returns.
            let mut bound = Bound {
                ring,
                stream,
                dev: buf.ptr().as_raw(),
                bytes,
                queued: [false; SLOTS],
                what,
            };
            ring::upload(&mut bound, host)
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
    pub(crate) fn head_to_host<T: DeviceCopy + Pod>(
        &self,
        buf: &DevBuf<T>,
        host: &mut [T],
        what: &str,
    ) -> Result<()> {
        let bytes = std::mem::size_of_val(host);
        if host.len() <= buf.len() {
            let stream = self.shared.raw_stream();
            let src = buf.ptr().as_raw();
            // `buf` holds at least `host.len()` elements (checked above), alive for the call.
            let copied = self.with_ring(bytes, |ring| {
                let mut bound = Bound {
                    ring,
                    stream,
                    dev: src,
                    bytes,
                    queued: [false; SLOTS],
                    what,
                };
                ring::download(&mut bound, host)
            });
            if let Some(r) = copied {
                return r;
            }
        }
        buf.copy_head_to_host(host).context(|| what)
    }
}

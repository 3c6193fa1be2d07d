//! The staging ring of the large copies between host and device, whose schedule is written
//! once for every GPU backend ([`trident_core::device::ring`]): [`SLOTS`] slots of [`SLOT`]
//! bytes of one `CL_MEM_ALLOC_HOST_PTR` buffer, mapped once (the page-locked memory of
//! NVIDIA's and AMD's drivers), whose non-blocking reads and writes go on the backend's
//! in-order queue, each with its event. Made on the first copy of at least [`STAGED_MIN`]
//! bytes and kept with the backend; a copy that finds the ring in use by another thread, or a
//! device that refuses the buffer or its mapping, copies directly, as before.

// Non-blocking copies from and into mapped memory: each `unsafe` says why in its
// `// SAFETY:` note.
#![allow(unsafe_code)]

use ocl::core::{self as core, Event, MapFlags, Mem, MemMap};
use ocl::flags::MemFlags;
use ocl::{Buffer, OclPrm};
use trident_core::device::ring::{self, Pod, RingCopy, SLOT, SLOTS};
use trident_core::Result;

use crate::error::ClResultExt;
use crate::OpenCl;

/// The ring's buffer and its mapping, unmapped on drop.
pub(crate) struct Ring {
    buf: Buffer<u8>,
    map: MemMap<u8>,
}

// SAFETY: the mapping is the pointer of a buffer this value owns; it is only used through
// `Transfers`' lock, by one copy at a time, which waits for its copies before it releases it.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        if let Some(q) = self.buf.default_queue() {
            let _ = core::enqueue_unmap_mem_object(
                q,
                self.buf.as_core(),
                &self.map,
                None::<()>,
                None::<&mut Event>,
            );
            let _ = q.finish();
        }
    }
}

/// A backend's transfer ring ([`ring::Transfers`]).
pub(crate) type Transfers = ring::Transfers<Ring>;

/// The ring bound to `bytes` bytes of the device buffer `dev` for one copy: the event of
/// each slot's queued copy.
struct Bound<'a> {
    ring: &'a Ring,
    queue: &'a ocl::Queue,
    dev: &'a Mem,
    bytes: usize,
    events: [Option<Event>; SLOTS],
    what: &'a str,
}

impl Bound<'_> {
    /// Waits for slot `s`'s queued copy, if any.
    fn wait(&mut self, s: usize) -> Result<()> {
        match self.events[s].take() {
            Some(e) => core::wait_for_event(&e).or_cl(|| self.what),
            None => Ok(()),
        }
    }

    /// Slot `s`'s bytes.
    fn slot_ptr(&self, s: usize) -> *mut u8 {
        assert!(s < SLOTS, "slot {s} of {SLOTS}");
        self.ring.map.as_ptr().cast_mut().wrapping_add(s * SLOT)
    }
}

impl RingCopy for Bound<'_> {
    fn slot(&mut self, s: usize) -> Result<&mut [u8]> {
        self.wait(s)?;
        // SAFETY: slot `s` is SLOT bytes of the ring's mapping, which this copy holds alone
        // (the lock) and whose last queued copy has finished (waited above); the borrow of
        // `self` ends before another copy can be queued on it.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(s), SLOT) })
    }

    fn to_device(&mut self, s: usize, len: usize, at: usize) -> Result<()> {
        ring::check_copy(self.what, self.bytes, s, len, at);
        self.wait(s)?;
        let mut e = Event::null();
        // SAFETY: the slot's first `len` bytes (mapped, alive with the ring) are read by the
        // non-blocking write until its event fires, and nothing touches them before that is
        // waited for (`slot`, `finish`); the device range lies in the bound buffer (checked).
        unsafe {
            let src = std::slice::from_raw_parts(self.slot_ptr(s), len);
            core::enqueue_write_buffer(
                self.queue,
                self.dev,
                false,
                at,
                src,
                None::<()>,
                Some(&mut e),
            )
        }
        .or_cl(|| self.what)?;
        self.events[s] = Some(e);
        Ok(())
    }

    fn to_host(&mut self, s: usize, len: usize, at: usize) -> Result<()> {
        ring::check_copy(self.what, self.bytes, s, len, at);
        self.wait(s)?;
        let mut e = Event::null();
        // SAFETY: as in `to_device`, the copy going the other way: the non-blocking read
        // writes the slot's first `len` bytes until its event fires; the in-order queue
        // runs it after the work that wrote the buffer.
        unsafe {
            let dst = std::slice::from_raw_parts_mut(self.slot_ptr(s), len);
            core::enqueue_read_buffer(
                self.queue,
                self.dev,
                false,
                at,
                dst,
                None::<()>,
                Some(&mut e),
            )
        }
        .or_cl(|| self.what)?;
        self.events[s] = Some(e);
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let result = ring::wait_all(|s| self.wait(s));
        if result.is_err() {
            // A failed wait may leave a copy running: the queue must be idle before the
            // slots are reused.
            let _ = self.queue.finish();
        }
        result
    }
}

impl OpenCl {
    /// The ring: `ALLOC_HOST_PTR` memory, mapped once.
    fn new_ring(&self) -> Result<Ring> {
        let what = "the transfer ring";
        let buf = Buffer::<u8>::builder()
            .queue(self.queue.clone())
            .flags(MemFlags::new().read_write().alloc_host_ptr())
            .len(SLOTS * SLOT)
            .build()
            .or_alloc(|| what)?;
        // SAFETY: a blocking map of the whole new buffer, which no queued work uses; the
        // mapping lives with the buffer in the ring and is unmapped when it drops.
        let map = unsafe {
            core::enqueue_map_buffer::<u8, _, _, _>(
                &self.queue,
                buf.as_core(),
                true,
                MapFlags::new().read().write(),
                0,
                SLOTS * SLOT,
                None::<()>,
                None::<&mut Event>,
            )
        }
        .or_cl(|| what)?;
        Ok(Ring { buf, map })
    }

    /// Runs `f` with the ring (see [`ring::Transfers::with`]).
    fn with_ring<R>(&self, bytes: usize, f: impl FnOnce(&Ring) -> Result<R>) -> Option<Result<R>> {
        self.transfers
            .with(bytes, || self.new_ring(), || self.queue.finish().is_ok(), f)
    }

    /// Writes `host` into the start of `buf` through the ring; `None` when the ring is not
    /// used (see `with_ring`): the caller writes directly.
    pub(crate) fn write_staged<P: OclPrm + Pod>(
        &self,
        buf: &Buffer<P>,
        host: &[P],
        what: &str,
    ) -> Option<Result<()>> {
        let bytes = std::mem::size_of_val(host);
        if host.len() > buf.len() {
            return None;
        }
        self.with_ring(bytes, |ring| {
            let mut bound = Bound {
                ring,
                queue: &self.queue,
                dev: buf.as_core(),
                bytes,
                events: Default::default(),
                what,
            };
            ring::upload(&mut bound, host)
        })
    }

    /// Reads the first `host.len()` values of `buf` into `host` through the ring (after the
    /// work queued before); `None` when the ring is not used: the caller reads directly.
    pub(crate) fn read_staged<P: OclPrm + Pod>(
        &self,
        buf: &Buffer<P>,
        host: &mut [P],
        what: &str,
    ) -> Option<Result<()>> {
        let bytes = std::mem::size_of_val(host);
        if host.len() > buf.len() {
            return None;
        }
        self.with_ring(bytes, |ring| {
            let mut bound = Bound {
                ring,
                queue: &self.queue,
                dev: buf.as_core(),
                bytes,
                events: Default::default(),
                what,
            };
            ring::download(&mut bound, host)
        })
    }
}

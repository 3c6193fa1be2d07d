//! Staged copies between host and device, written once for every GPU backend.
//!
//! A copy from the caller's (pageable) memory goes through the runtime's own small pinned
//! buffers, one at a time, at a fraction of the bus's speed. A backend therefore keeps a ring
//! of [`SLOTS`] page-locked slots of [`SLOT`] bytes and hands it to [`upload`] or
//! [`download`] as a [`RingCopy`] bound to one device buffer. An upload copies each chunk of
//! the source into a free slot with all the threads of the pool ([`par_copy`]) and queues its
//! DMA at once, so that the CPU fills one slot while the copy engine empties another; a
//! download queues the DMA of the first chunks and copies each out as soon as it has arrived,
//! queueing the next into the freed slot. Copies below [`STAGED_MIN`] bytes go directly.

#![deny(unsafe_code)]

use std::sync::{Mutex, TryLockError};

use crate::alloc::par_copy;
use crate::error::Result;

/// The element types a ring copies: plain data, moved as their bytes.
pub use bytemuck::Pod;

/// Bytes of one slot of a staging ring.
pub const SLOT: usize = 16 << 20;
/// Slots of a staging ring.
pub const SLOTS: usize = 4;
/// Copies of at least this many bytes stage through a ring; smaller ones copy directly.
pub const STAGED_MIN: usize = 1 << 20;

/// A backend's ring of page-locked slots, bound for one copy to one device buffer: the
/// asynchronous copies between a slot and the buffer, and the wait for them. The backend
/// keeps its slots safe: [`RingCopy::slot`] waits for the slot's queued copy before it hands
/// the bytes out, and the borrow ends before the next copy is queued.
pub trait RingCopy {
    /// Slot `s`'s [`SLOT`] page-locked bytes, once the copy last queued on it has finished.
    fn slot(&mut self, s: usize) -> Result<&mut [u8]>;
    /// Queues the copy of slot `s`'s first `len` bytes to the buffer's bytes `at .. at + len`.
    fn to_device(&mut self, s: usize, len: usize, at: usize) -> Result<()>;
    /// Queues the copy of the buffer's bytes `at .. at + len` into slot `s`'s first `len`.
    fn to_host(&mut self, s: usize, len: usize, at: usize) -> Result<()>;
    /// Waits for every queued copy (also after an error: the slots are reused by the next
    /// copy).
    fn finish(&mut self) -> Result<()>;
}

/// Copies `src` into the ring's buffer (at least as many bytes), chunk by chunk through the
/// slots; returns once every chunk has arrived.
pub fn upload<P: Pod>(r: &mut dyn RingCopy, src: &[P]) -> Result<()> {
    let src: &[u8] = bytemuck::cast_slice(src);
    let run = (|| -> Result<()> {
        for (i, chunk) in src.chunks(SLOT).enumerate() {
            let s = i % SLOTS;
            par_copy(&mut r.slot(s)?[..chunk.len()], chunk);
            r.to_device(s, chunk.len(), i * SLOT)?;
        }
        Ok(())
    })();
    let done = r.finish();
    run.and(done)
}

/// Copies the first bytes of the ring's buffer into `out` (all of its bytes), chunk by chunk
/// through the slots (the buffer's earlier work is ordered before the copies by the
/// backend).
pub fn download<P: Pod>(r: &mut dyn RingCopy, out: &mut [P]) -> Result<()> {
    let out: &mut [u8] = bytemuck::cast_slice_mut(out);
    let len = out.len();
    let chunks = len.div_ceil(SLOT);
    let part = |i: usize| SLOT.min(len - i * SLOT);
    let run = (|| -> Result<()> {
        for i in 0..chunks.min(SLOTS) {
            r.to_host(i % SLOTS, part(i), i * SLOT)?;
        }
        for (i, dst) in out.chunks_mut(SLOT).enumerate() {
            par_copy(dst, &r.slot(i % SLOTS)?[..dst.len()]);
            if i + SLOTS < chunks {
                r.to_host(i % SLOTS, part(i + SLOTS), (i + SLOTS) * SLOT)?;
            }
        }
        Ok(())
    })();
    let done = r.finish();
    run.and(done)
}

/// A backend's ring `R`, made on the first staged copy and kept, behind a lock: one copy
/// uses it at a time. A copy that finds it in use by another thread, or a backend that could
/// not make it (page-locked memory is limited), copies directly.
pub struct Transfers<R>(Mutex<RingState<R>>);

/// The state of a backend's ring: not yet needed, ready, or refused.
enum RingState<R> {
    Untried,
    Ready(R),
    Refused,
}

impl<R> Default for Transfers<R> {
    fn default() -> Self {
        Self(Mutex::new(RingState::Untried))
    }
}

impl<R> Transfers<R> {
    /// Runs `f` with the ring, made by `make` on first use; `None` when the copy of `bytes`
    /// is below [`STAGED_MIN`], the ring is in use, or it could not be made: the caller
    /// copies directly. A ring left by a copy that panicked is reused once `idle` (the
    /// backend waiting for its queue) says that none of its copies can still run.
    pub fn with<T>(
        &self,
        bytes: usize,
        make: impl FnOnce() -> Result<R>,
        idle: impl FnOnce() -> bool,
        f: impl FnOnce(&R) -> Result<T>,
    ) -> Option<Result<T>> {
        if bytes < STAGED_MIN {
            return None;
        }
        let mut state = match self.0.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) if idle() => p.into_inner(),
            Err(_) => return None,
        };
        if matches!(*state, RingState::Untried) {
            *state = match make() {
                Ok(r) => RingState::Ready(r),
                Err(_) => RingState::Refused,
            };
        }
        match &*state {
            RingState::Ready(r) => Some(f(r)),
            _ => None,
        }
    }
}

/// Panics unless a copy of `len` bytes between slot `s` and the bytes `at ..` of a buffer
/// bound for `bytes` stays inside both: a [`RingCopy`]'s guard before it queues (the schedule
/// above never asks for more).
pub fn check_copy(what: &str, bytes: usize, s: usize, len: usize, at: usize) {
    assert!(
        s < SLOTS && len <= SLOT && at.checked_add(len).is_some_and(|e| e <= bytes),
        "{what}: a staged copy of {len} bytes at {at} (slot {s}) of {bytes}"
    );
}

/// Waits for every slot with `wait` (all of them, even after an error), returning the first
/// error: a [`RingCopy::finish`].
pub fn wait_all(mut wait: impl FnMut(usize) -> Result<()>) -> Result<()> {
    let mut result = Ok(());
    for s in 0..SLOTS {
        let waited = wait(s);
        result = result.and(waited);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// A ring whose copies happen late, as DMA may: a queued copy reads its slot only when it
    /// is waited for (a slot rewritten before that shows in the device's bytes), and a slot
    /// that a queued copy writes holds garbage until then (read before, it shows).
    struct LateRing {
        slots: Vec<Vec<u8>>,
        device: Vec<u8>,
        /// Per slot: the queued copy (to the device?, len, at).
        queued: Vec<Option<(bool, usize, usize)>>,
        copies: usize,
        /// Fail the `n`-th queued copy.
        fail_at: Option<usize>,
    }

    impl LateRing {
        fn new(device: Vec<u8>) -> Self {
            Self {
                slots: vec![vec![0xEE; SLOT]; SLOTS],
                device,
                queued: vec![None; SLOTS],
                copies: 0,
                fail_at: None,
            }
        }

        fn complete(&mut self, s: usize) {
            if let Some((to_device, len, at)) = self.queued[s].take() {
                if to_device {
                    self.device[at..at + len].copy_from_slice(&self.slots[s][..len]);
                } else {
                    self.slots[s][..len].copy_from_slice(&self.device[at..at + len]);
                }
            }
        }

        fn queue(&mut self, s: usize, q: (bool, usize, usize)) -> Result<()> {
            assert!(
                self.queued[s].is_none(),
                "slot {s} queued twice without a wait"
            );
            assert!(
                q.1 <= SLOT && q.2 + q.1 <= self.device.len(),
                "copy out of bounds"
            );
            self.copies += 1;
            if self.fail_at == Some(self.copies) {
                return Err(Error::backend("late", "a planted failure"));
            }
            self.queued[s] = Some(q);
            if !q.0 {
                // A copy into the slot may land at any time until its wait: its bytes are
                // garbage meanwhile (read before the wait, they show).
                self.slots[s].fill(0xEE);
            }
            Ok(())
        }
    }

    impl RingCopy for LateRing {
        fn slot(&mut self, s: usize) -> Result<&mut [u8]> {
            self.complete(s);
            Ok(&mut self.slots[s])
        }
        fn to_device(&mut self, s: usize, len: usize, at: usize) -> Result<()> {
            self.queue(s, (true, len, at))
        }
        fn to_host(&mut self, s: usize, len: usize, at: usize) -> Result<()> {
            self.queue(s, (false, len, at))
        }
        fn finish(&mut self) -> Result<()> {
            for s in 0..SLOTS {
                self.complete(s);
            }
            Ok(())
        }
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as u8 | 1)
            .collect()
    }

    #[test]
    fn uploads_and_downloads_arrive_whole_with_late_copies() {
        for n in [
            1,
            SLOT - 1,
            SLOT,
            SLOT + 1,
            SLOTS * SLOT,
            (2 * SLOTS + 1) * SLOT + 3,
        ] {
            let host = pattern(n);
            let mut r = LateRing::new(vec![0; n]);
            upload(&mut r, &host).unwrap();
            assert!(
                r.queued.iter().all(Option::is_none),
                "{n}: copies left queued"
            );
            assert!(r.device == host, "{n}: the upload differs");
            for head in [n, n / 2 + 1] {
                let mut back = vec![0u8; head];
                download(&mut r, &mut back).unwrap();
                assert!(
                    r.queued.iter().all(Option::is_none),
                    "{n}: copies left queued"
                );
                assert!(
                    back[..] == host[..head],
                    "{n} by {head}: the download differs"
                );
            }
        }
    }

    #[test]
    fn a_failed_copy_is_returned_with_nothing_left_queued() {
        let n = 3 * SLOTS * SLOT;
        for fail in [1, 2, SLOTS + 1] {
            let mut r = LateRing::new(vec![0; n]);
            r.fail_at = Some(fail);
            assert!(upload(&mut r, &pattern(n)).is_err());
            assert!(r.queued.iter().all(Option::is_none));
            let mut r = LateRing::new(pattern(n));
            r.fail_at = Some(fail);
            assert!(download(&mut r, &mut vec![0; n]).is_err());
            assert!(r.queued.iter().all(Option::is_none));
        }
    }
}

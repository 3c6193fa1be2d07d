//! A communicator whose large personalised exchanges go device to device ([`Staged`]).
//!
//! Between the ranks of one host, MPI moves the distributed build's exchanges (every edge
//! routed to its row's rank, the built rows moved to their final ranks) through shared
//! memory with one thread per rank; NCCL moves them between the GPUs over their links. A
//! rank's bytes are uploaded, exchanged device to device and read back
//! ([`Backend::exchange_host`]), where the ranks' backend has such an engine; everything
//! else goes through the communicator it wraps.

use super::{Comm, Op};
use crate::backend::Backend;
use crate::error::Result;

/// The fewest bytes (the largest rank's send or receive buffer) for which an exchange goes
/// through the device: below it, the host's engine is quicker than the upload and read-back.
pub const STAGE_MIN_BYTES: u64 = 64 << 20;

/// `comm`, with each personalised exchange of at least [`STAGE_MIN_BYTES`] on some rank
/// sent through `backend`'s device-to-device engine ([`Backend::exchange_host`]) where it
/// has one. Every rank must wrap the same backend kind, so that they agree.
pub struct Staged<'a> {
    comm: &'a dyn Comm,
    backend: &'a dyn Backend,
    min_bytes: u64,
}

impl<'a> Staged<'a> {
    /// `comm`, its large exchanges through `backend`.
    pub fn new(comm: &'a dyn Comm, backend: &'a dyn Backend) -> Self {
        Self::with_min_bytes(comm, backend, STAGE_MIN_BYTES)
    }
    /// `comm`, its exchanges of at least `min_bytes` (on some rank) through `backend` (the
    /// tests force every exchange through it with 0).
    pub fn with_min_bytes(comm: &'a dyn Comm, backend: &'a dyn Backend, min_bytes: u64) -> Self {
        Self {
            comm,
            backend,
            min_bytes,
        }
    }
}

impl Comm for Staged<'_> {
    fn rank(&self) -> usize {
        self.comm.rank()
    }
    fn size(&self) -> usize {
        self.comm.size()
    }
    fn local_rank(&self) -> usize {
        self.comm.local_rank()
    }
    fn engine(&self) -> String {
        self.comm.engine()
    }
    fn host(&self) -> String {
        self.comm.host()
    }
    fn all_reduce_u64(&self, v: &mut [u64], op: Op) -> Result<()> {
        self.comm.all_reduce_u64(v, op)
    }
    fn all_reduce_u32(&self, v: &mut [u32], op: Op) -> Result<()> {
        self.comm.all_reduce_u32(v, op)
    }
    fn all_to_all_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        self.comm.all_to_all_counts(counts)
    }
    fn all_to_all_into(
        &self,
        send: &[u8],
        send_counts: &[usize],
        recv: &mut [u8],
        recv_counts: &[usize],
    ) -> Result<()> {
        if self.comm.size() > 1 {
            // The ranks agree on the way from the largest rank's buffers.
            let mut most = [send.len().max(recv.len()) as u64];
            self.comm.all_reduce_u64(&mut most, Op::Max)?;
            if most[0] >= self.min_bytes
                && self
                    .backend
                    .exchange_host(self.comm, send, send_counts, recv, recv_counts)?
            {
                return Ok(());
            }
        }
        self.comm
            .all_to_all_into(send, send_counts, recv, recv_counts)
    }
    fn all_gather_into(&self, mine: &[u8], recv: &mut [u8], counts: &[usize]) -> Result<()> {
        self.comm.all_gather_into(mine, recv, counts)
    }
}

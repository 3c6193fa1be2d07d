//! MPI as a [`Comm`] of Trident's distributed algorithms ([`trident_core::dist`]), through
//! the `mpi` crate (Open MPI, MPICH or any MPI with its headers at build time).
//!
//! This crate links `libmpi`, so the `trident` binary takes it only with its `mpi` feature;
//! a build without it runs one process and needs no MPI.
//!
//! Messages of any size: MPI counts are 32-bit, so exchanges larger than that go in rounds.
//! A failing rank calls [`Mpi::abort`], which ends every rank of the job (`MPI_Abort`).

use bytemuck::{cast_slice, cast_slice_mut};
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use trident_core::dist::{Comm, Op};
use trident_core::{Error, Result};

/// Whether this process was started by an MPI launcher (`mpirun`, `mpiexec`, or `srun` with
/// a PMI plugin): the environment variables they set.
pub fn launched() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_RANK",
        "PMI_RANK",
        "PMI_SIZE",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}

/// `MPI_COMM_WORLD` of an initialised MPI; finalised when dropped.
pub struct Mpi {
    world: SimpleCommunicator,
    /// The ranks of this host (`MPI_Comm_split_type` shared), in world-rank order.
    node: SimpleCommunicator,
    local_rank: usize,
    host: String,
    version: String,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

impl Mpi {
    /// Initialises MPI (`MPI_Init`; only the thread calling it talks to MPI).
    pub fn init() -> Result<Mpi> {
        let universe = mpi::initialize()
            .ok_or_else(|| Error::backend("mpi", "MPI was already initialised"))?;
        let world = universe.world();
        // The rank on this host: the launcher's, else from a shared-memory split.
        let local_rank = [
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "MPI_LOCALRANKID",
            "SLURM_LOCALID",
        ]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok());
        let node = world.split_shared(world.rank());
        let local_rank = local_rank.unwrap_or(node.rank() as usize);
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        let version = mpi::environment::library_version()
            .ok()
            .and_then(|v| v.split(',').next().map(|l| l.trim().to_string()))
            .unwrap_or_else(|| "MPI".into());
        Ok(Mpi {
            world,
            node,
            local_rank,
            host,
            version,
            _universe: universe,
        })
    }

    /// Ends every rank of the job with `code` (`MPI_Abort`).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// The largest message piece: 32-bit counts and displacements over every rank.
    fn piece(&self) -> usize {
        (i32::MAX as usize / self.world.size() as usize) & !7
    }

    /// One `MPI_Alltoallv` of words `T`: `counts[r]` words from `displs[r]` of `send` to
    /// each rank `r`, and `counts[r]` from each rank `r` to `displs[r]` of `recv`.
    fn varcount<T: Equivalence>(
        &self,
        send: &[T],
        (sc, sd): (&[Count], &[Count]),
        recv: &mut [T],
        (rc, rd): (&[Count], &[Count]),
    ) {
        let sp = Partition::new(send, sc, sd);
        let mut rp = PartitionMut::new(recv, rc, rd);
        self.world.all_to_all_varcount_into(&sp, &mut rp);
    }

    fn reduce<T: Equivalence + Copy + Default>(&self, v: &mut [T], op: Op) -> Result<()> {
        let op = match op {
            Op::Sum => SystemOperation::sum(),
            Op::Max => SystemOperation::max(),
            Op::Min => SystemOperation::min(),
            Op::Or => SystemOperation::bitwise_or(),
        };
        for chunk in v.chunks_mut(1 << 26) {
            let send = chunk.to_vec();
            self.world.all_reduce_into(&send[..], chunk, op);
        }
        Ok(())
    }
}

/// The bytes free in the directory of Open MPI's shared-memory windows (its
/// `osc_sm_backing_directory`, `/dev/shm` on Linux, or the value that the environment gives
/// it); unbounded where it cannot be asked.
fn shm_room() -> u64 {
    let dir = std::env::var("OMPI_MCA_osc_sm_backing_directory").unwrap_or("/dev/shm".into());
    let Ok(path) = std::ffi::CString::new(dir) else {
        return u64::MAX;
    };
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: statvfs(path, buf) with a NUL-terminated path and a buffer of the struct's
    // size, which it fills when it returns 0.
    if unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return u64::MAX;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let st = unsafe { st.assume_init() };
    // Their types differ between platforms (u64 here, u32 on some).
    #[allow(clippy::unnecessary_cast)]
    (st.f_bavail as u64).saturating_mul(st.f_frsize as u64)
}

/// `x` as an MPI count (callers keep pieces below [`Mpi::piece`]).
fn count(x: usize) -> Count {
    x as Count
}

impl Comm for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn local_rank(&self) -> usize {
        self.local_rank
    }
    fn engine(&self) -> String {
        format!("MPI ({})", self.version)
    }
    fn host(&self) -> String {
        self.host.clone()
    }
    fn host_ranks(&self) -> (usize, usize) {
        (self.node.rank() as usize, self.node.size() as usize)
    }
    fn host_share(
        &self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
        read: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        let first = self.node.rank() == 0;
        // The first rank says whether the window's directory has room for the bytes (a
        // window beyond it would end the ranks with SIGBUS when written): their number plus
        // one, or 0.
        let mut word = [0u64];
        if first && shm_room() >= len as u64 {
            word[0] = len as u64 + 1;
        }
        self.node.process_at_rank(0).broadcast_into(&mut word[..]);
        if word[0] == 0 {
            return Ok(false);
        }
        let mine = if first { len } else { 0 };
        let fail = |what: &str, rc: std::os::raw::c_int| {
            (rc != 0).then(|| {
                Error::backend(
                    "mpi",
                    format!("{what} failed (error {rc}) for {len} bytes shared on a host"),
                )
            })
        };
        let size = ffi::MPI_Aint::try_from(mine)
            .map_err(|_| Error::backend("mpi", format!("{len} bytes to share on a host")))?;
        let mut base: *mut u8 = std::ptr::null_mut();
        // SAFETY: RSMPI_WIN_NULL is a handle constant that rsmpi's C shim defines.
        let mut win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win) with a
        // valid communicator of this host's ranks (every one of which calls it, as every
        // rank of the job calls host_share), and out-pointers to a pointer and a handle that
        // live through the call; MPI writes the segment's address (size bytes, this rank's
        // part of the window; 0 on all but the host's first rank) into `base`.
        let rc = unsafe {
            ffi::MPI_Win_allocate_shared(
                size,
                1,
                ffi::RSMPI_INFO_NULL,
                self.node.as_raw(),
                (&mut base as *mut *mut u8).cast(),
                &mut win,
            )
        };
        if let Some(e) = fail("MPI_Win_allocate_shared", rc) {
            return Err(e);
        }
        let mut out = Ok(());
        // SAFETY: MPI_Win_fence(assert, win) on the window just allocated, by every rank
        // of the host (this fence and the two below): a fence orders the first rank's
        // writes before the others' reads, and the reads before the window is freed.
        let rc = unsafe { ffi::MPI_Win_fence(0, win) };
        if let Some(e) = fail("MPI_Win_fence", rc) {
            out = Err(e);
        }
        if first && mine > 0 && out.is_ok() {
            // SAFETY: `base` is this rank's segment of `mine` bytes, which no other rank
            // touches until the next fence, and which lives until MPI_Win_free below.
            fill(unsafe { std::slice::from_raw_parts_mut(base, mine) });
        }
        // SAFETY: the second fence on the window, by every rank of the host, as above.
        let rc = unsafe { ffi::MPI_Win_fence(0, win) };
        if let Some(e) = fail("MPI_Win_fence", rc) {
            out = out.and(Err(e));
        }
        if out.is_ok() {
            let (mut got, mut unit, mut at) = (0 as ffi::MPI_Aint, 0, std::ptr::null_mut::<u8>());
            // SAFETY: MPI_Win_shared_query(win, rank, size, disp_unit, baseptr) for the
            // segment of the host's first rank (rank 0 of the window's communicator), with
            // out-pointers that live through the call.
            let rc = unsafe {
                ffi::MPI_Win_shared_query(
                    win,
                    0,
                    &mut got,
                    &mut unit,
                    (&mut at as *mut *mut u8).cast(),
                )
            };
            out = match fail("MPI_Win_shared_query", rc) {
                Some(e) => Err(e),
                None => {
                    let n = usize::try_from(got).unwrap_or(0);
                    if n == 0 || at.is_null() {
                        read(&[])
                    } else {
                        // SAFETY: the first rank's segment: `n` bytes mapped into this
                        // process, written before the fence above and not written again
                        // until the window is freed (after the next fence).
                        read(unsafe { std::slice::from_raw_parts(at.cast_const(), n) })
                    }
                }
            };
        }
        // SAFETY: the last fence on the window, by every rank of the host, as above.
        let rc = unsafe { ffi::MPI_Win_fence(0, win) };
        // SAFETY: MPI_Win_free(win) by every rank of the host, after the last fence; no
        // slice of the window is used after it (the ones above ended with their calls).
        let rc2 = unsafe { ffi::MPI_Win_free(&mut win) };
        out.and(fail("MPI_Win_fence", rc).map_or(Ok(()), Err))
            .and(fail("MPI_Win_free", rc2).map_or(Ok(()), Err))
            .map(|()| true)
    }
    fn all_reduce_u64(&self, v: &mut [u64], op: Op) -> Result<()> {
        self.reduce(v, op)
    }
    fn all_reduce_u32(&self, v: &mut [u32], op: Op) -> Result<()> {
        self.reduce(v, op)
    }

    fn all_to_all_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        let mut got = vec![0u64; self.size()];
        self.world.all_to_all_into(counts, &mut got[..]);
        Ok(got)
    }

    fn all_to_all_into(
        &self,
        send: &[u8],
        send_counts: &[usize],
        recv: &mut [u8],
        recv_counts: &[usize],
    ) -> Result<()> {
        let p = self.size();
        let limit = i32::MAX as u64;
        // The ranks agree on the largest buffer and on a word that divides every count and
        // aligns every buffer (8, 4 or 1 bytes; encoded as 8 - word, so that one maximum
        // gives both): counted in words, an exchange of up to 2^31 words (16 GiB of u64
        // keys) is one call, with no packing into rounds.
        let word = [8usize, 4]
            .into_iter()
            .find(|&w| {
                (send.as_ptr() as usize).is_multiple_of(w)
                    && (recv.as_ptr() as usize).is_multiple_of(w)
                    && send_counts
                        .iter()
                        .chain(recv_counts)
                        .all(|&c| c.is_multiple_of(w))
                    && !send.is_empty()
                    && !recv.is_empty()
            })
            .unwrap_or(1);
        let mut agreed = [send.len().max(recv.len()) as u64, 8 - word as u64];
        self.reduce(&mut agreed, Op::Max)?;
        let (most, word) = (agreed[0], 8 - agreed[1] as usize);
        if most / (word as u64) < limit {
            let sc: Vec<Count> = send_counts.iter().map(|&c| count(c / word)).collect();
            let rc: Vec<Count> = recv_counts.iter().map(|&c| count(c / word)).collect();
            let (sd, rd) = (displs(&sc), displs(&rc));
            let (sc, rc) = ((&sc[..], &sd[..]), (&rc[..], &rd[..]));
            match word {
                8 => self.varcount::<u64>(cast_slice(send), sc, cast_slice_mut(recv), rc),
                4 => self.varcount::<u32>(cast_slice(send), sc, cast_slice_mut(recv), rc),
                _ => {
                    let mut one_s = [0u8];
                    let mut one_r = [0u8];
                    let send = nonempty(send, &mut one_s);
                    let recv = nonempty_mut(recv, &mut one_r);
                    self.varcount(send, sc, recv, rc);
                }
            }
            return Ok(());
        }
        // Rounds of pieces of at most `piece` bytes per pair, packed.
        let sc: Vec<u64> = send_counts.iter().map(|&c| c as u64).collect();
        let rc: Vec<u64> = recv_counts.iter().map(|&c| c as u64).collect();
        let mut biggest = [sc.iter().chain(&rc).copied().max().unwrap_or(0)];
        self.reduce(&mut biggest, Op::Max)?;
        let piece = self.piece() as u64;
        let rounds = biggest[0].div_ceil(piece).max(1);
        let (soff, roff) = (prefix(&sc), prefix(&rc));
        for round in 0..rounds {
            let lo = round * piece;
            let part = |c: u64| c.saturating_sub(lo).min(piece);
            let s_counts: Vec<Count> = sc.iter().map(|&c| count(part(c) as usize)).collect();
            let r_counts: Vec<Count> = rc.iter().map(|&c| count(part(c) as usize)).collect();
            let (s_displs, r_displs) = (displs(&s_counts), displs(&r_counts));
            // Never empty: Open MPI's MPI_IN_PLACE is the address 1, where an empty Vec<u8>
            // points.
            let mut sbuf =
                Vec::with_capacity(s_counts.iter().map(|&c| c as usize).sum::<usize>() + 1);
            for r in 0..p {
                let a = (soff[r] + lo.min(sc[r])) as usize;
                sbuf.extend_from_slice(&send[a..a + s_counts[r] as usize]);
            }
            sbuf.push(0);
            let mut rbuf = vec![0u8; r_counts.iter().map(|&c| c as usize).sum::<usize>() + 1];
            self.varcount(
                &sbuf[..],
                (&s_counts[..], &s_displs[..]),
                &mut rbuf[..],
                (&r_counts[..], &r_displs[..]),
            );
            for r in 0..p {
                let a = (roff[r] + lo.min(rc[r])) as usize;
                let (k, at) = (r_counts[r] as usize, r_displs[r] as usize);
                recv[a..a + k].copy_from_slice(&rbuf[at..at + k]);
            }
        }
        Ok(())
    }

    fn all_gather_into(&self, mine: &[u8], recv: &mut [u8], counts: &[usize]) -> Result<()> {
        if recv.len() < i32::MAX as usize {
            let c: Vec<Count> = counts.iter().map(|&k| count(k)).collect();
            let d = displs(&c);
            let one_s = [0u8];
            let mut one_r = [0u8];
            // MPI takes the send count from the buffer's length here, so an empty part must
            // stay empty (a one-byte stand-in would send a byte no rank expects, which the
            // next gather then receives): a zero-length slice of a live array, whose address
            // is not Open MPI's MPI_IN_PLACE.
            let mine = if mine.is_empty() { &one_s[..0] } else { mine };
            let recv = nonempty_mut(recv, &mut one_r);
            let mut rp = PartitionMut::new(recv, &c[..], &d[..]);
            self.world.all_gather_varcount_into(mine, &mut rp);
            return Ok(());
        }
        // Larger than 32-bit counts: every rank's bytes sent to every rank.
        let p = self.size();
        let mut send = Vec::new();
        send.try_reserve_exact(mine.len() * p).map_err(|e| {
            Error::out_of_memory("host", format!("sending {} bytes: {e}", mine.len() * p))
        })?;
        for _ in 0..p {
            send.extend_from_slice(mine);
        }
        self.all_to_all_into(&send, &vec![mine.len(); p], recv, counts)
    }
}

/// `b`, or a one-byte stand-in when it is empty (an empty slice points at address 1, which
/// is Open MPI's MPI_IN_PLACE).
fn nonempty<'a>(b: &'a [u8], one: &'a mut [u8; 1]) -> &'a [u8] {
    if b.is_empty() {
        &one[..]
    } else {
        b
    }
}

/// [`nonempty`] for a receive buffer.
fn nonempty_mut<'a>(b: &'a mut [u8], one: &'a mut [u8; 1]) -> &'a mut [u8] {
    if b.is_empty() {
        &mut one[..]
    } else {
        b
    }
}

/// Exclusive prefix sums with the total last.
fn prefix(c: &[u64]) -> Vec<u64> {
    let mut o = vec![0u64; c.len() + 1];
    for (i, &x) in c.iter().enumerate() {
        o[i + 1] = o[i] + x;
    }
    o
}

/// Displacements of packed pieces.
fn displs(c: &[Count]) -> Vec<Count> {
    let mut d = vec![0 as Count; c.len()];
    for i in 1..c.len() {
        d[i] = d[i - 1] + c[i - 1];
    }
    d
}

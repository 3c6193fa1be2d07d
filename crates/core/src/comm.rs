//! The communicator every distributed algorithm is written against ([`Comm`]: all-reduce,
//! all-to-all, all-gather of plain words) and the typed collectives built on it. Its own
//! module, below the algorithms, so that the device layer (`Device::exchange_mem`) and the
//! algorithms' upload hooks (`TriangleCount::upload_exchanged`) can take a communicator
//! without depending on the distributed drivers of [`crate::dist`], which use them.
//!
//! The engines live outside core, so that a user of core and a backend compiles no MPI:
//! `trident-mpi` implements [`Comm`] over MPI (the `mpi` crate on Open MPI), [`Solo`] is one
//! process, and [`crate::dist::threads`] runs ranks as threads of one process (the tests'
//! communicator). Every collective returns a [`Result`]: a rank that fails ends the job
//! through its engine (MPI aborts it; the threads fail the other ranks' next collective),
//! never a hang.
//!
//! Collectives exchange plain words ([`bytemuck::Pod`]); counts and offsets are `usize`,
//! whatever the engine's own limits (`trident-mpi` splits large messages).

use bytemuck::Pod;

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A reduction of [`Comm::all_reduce_u64`] / [`Comm::all_reduce_u32`], element-wise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Wrapping sum.
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Bitwise or.
    Or,
}

impl Op {
    /// `a op b`.
    pub fn apply<T: Copy + Ord + std::ops::BitOr<Output = T> + num_traits::WrappingAdd>(
        self,
        a: T,
        b: T,
    ) -> T {
        match self {
            Op::Sum => a.wrapping_add(&b),
            Op::Max => a.max(b),
            Op::Min => a.min(b),
            Op::Or => a | b,
        }
    }
}

/// The processes of a job and their collectives. Every rank calls every collective, in the
/// same order; each returns only when the data it names has arrived. Only the thread that
/// made a communicator calls it (MPI's handles are not thread-safe), so it need not be
/// `Send` or `Sync`.
pub trait Comm {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of processes.
    fn size(&self) -> usize;
    /// This process's rank among those of its host (which GPU it takes).
    fn local_rank(&self) -> usize;
    /// The engine, for summaries (e.g. `MPI (Open MPI v4.1.4)`).
    fn engine(&self) -> String;
    /// This process's host name.
    fn host(&self) -> String;
    /// `v` reduced element-wise over all ranks, on every rank.
    fn all_reduce_u64(&self, v: &mut [u64], op: Op) -> Result<()>;
    /// `v` reduced element-wise over all ranks, on every rank.
    fn all_reduce_u32(&self, v: &mut [u32], op: Op) -> Result<()>;
    /// Every rank's `counts[r]` for this rank: what each rank will send here (one number
    /// per pair of ranks, `MPI_Alltoall`).
    fn all_to_all_counts(&self, counts: &[u64]) -> Result<Vec<u64>>;
    /// Personalised exchange: `send` holds `send_counts[r]` bytes for rank `r`, in rank
    /// order; `recv` receives `recv_counts[r]` bytes from each rank `r` (as
    /// [`Comm::all_to_all_counts`] said), in rank order.
    fn all_to_all_into(
        &self,
        send: &[u8],
        send_counts: &[usize],
        recv: &mut [u8],
        recv_counts: &[usize],
    ) -> Result<()>;
    /// Every rank's `mine` (`counts[r]` bytes from rank `r`), concatenated in rank order.
    fn all_gather_into(&self, mine: &[u8], recv: &mut [u8], counts: &[usize]) -> Result<()>;

    /// The ranks that share this process's host (its memory): this rank's place among them
    /// and their number. By default every rank is on one host, in rank order (thread-ranks,
    /// one process).
    fn host_ranks(&self) -> (usize, usize) {
        (self.rank(), self.size())
    }

    /// Passes bytes from the first rank of each host ([`Comm::host_ranks`]) to every rank of
    /// that host: the first rank gives their number `len` and writes them in `fill`; then
    /// `read` sees them on every rank of the host (the first included). The other ranks'
    /// `len` is not read and their `fill` is not called. Collective over all ranks. `false`
    /// (on every rank of a host) where the host has no room for them: then neither `fill`
    /// nor `read` was called there.
    ///
    /// By default the bytes are gathered to every rank (a copy each); over MPI they are one
    /// shared-memory window per host (`MPI_Win_allocate_shared`), written once and read in
    /// place.
    fn host_share(
        &self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
        read: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        let mut mine = Vec::new();
        if self.host_ranks().0 == 0 {
            mine = zeroed::<u8>(len, "the bytes shared on a host")?;
            fill(&mut mine);
        }
        // One host: its first rank's bytes are everything gathered.
        read(&gather_of(self, &mine)?.0)?;
        Ok(true)
    }
}

/// One process: every collective is the identity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Solo;

impl Comm for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn local_rank(&self) -> usize {
        0
    }
    fn engine(&self) -> String {
        "one process".into()
    }
    fn host(&self) -> String {
        "localhost".into()
    }
    fn all_reduce_u64(&self, _: &mut [u64], _: Op) -> Result<()> {
        Ok(())
    }
    fn all_reduce_u32(&self, _: &mut [u32], _: Op) -> Result<()> {
        Ok(())
    }
    fn all_to_all_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        Ok(counts.to_vec())
    }
    fn all_to_all_into(
        &self,
        send: &[u8],
        _: &[usize],
        recv: &mut [u8],
        _: &[usize],
    ) -> Result<()> {
        recv.copy_from_slice(send);
        Ok(())
    }
    fn all_gather_into(&self, mine: &[u8], recv: &mut [u8], _: &[usize]) -> Result<()> {
        recv.copy_from_slice(mine);
        Ok(())
    }
}

/// A zeroed vector of `len` words, or the host's out-of-memory error naming `what`.
pub(crate) fn zeroed<T: Pod>(len: usize, what: &str) -> Result<Vec<T>> {
    // Reserve first, so that running out of memory is an error; then a fresh zeroed
    // allocation (`vec!` of a plain zero is `calloc`), whose pages are only touched where,
    // and by whichever thread, writes them: no single-threaded fill of gigabytes.
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|e| crate::error::Error::out_of_memory("host", format!("{what}: {e}")))?;
    drop(v);
    Ok(vec![T::zeroed(); len])
}

/// Personalised exchange of plain words: `send` holds `counts[r]` words for rank `r`;
/// returns the words received, in rank order, and how many came from each rank. Received
/// straight into the returned vector.
pub fn all_to_all<T: Pod>(
    c: &dyn Comm,
    send: &[T],
    counts: &[usize],
) -> Result<(Vec<T>, Vec<usize>)> {
    let w = std::mem::size_of::<T>();
    let got = c.all_to_all_counts(&counts.iter().map(|&k| k as u64).collect::<Vec<_>>())?;
    let got: Vec<usize> = got.into_iter().map(|k| k as usize).collect();
    let mut recv = zeroed::<T>(got.iter().sum(), "receiving an exchange")?;
    let sb: Vec<usize> = counts.iter().map(|&k| k * w).collect();
    let rb: Vec<usize> = got.iter().map(|&k| k * w).collect();
    c.all_to_all_into(
        bytemuck::cast_slice(send),
        &sb,
        bytemuck::cast_slice_mut(&mut recv),
        &rb,
    )?;
    Ok((recv, got))
}

/// Every rank's `mine` (plain words), concatenated in rank order, with each rank's length.
pub fn all_gather<T: Pod>(c: &dyn Comm, mine: &[T]) -> Result<(Vec<T>, Vec<usize>)> {
    gather_of(c, mine)
}

/// [`all_gather`] for any communicator (also one not behind `dyn`, as in [`Comm`]'s own
/// default methods).
fn gather_of<C: Comm + ?Sized, T: Pod>(c: &C, mine: &[T]) -> Result<(Vec<T>, Vec<usize>)> {
    let w = std::mem::size_of::<T>();
    let p = c.size();
    let mut lens = vec![0u64; p];
    c.all_gather_into(
        bytemuck::bytes_of(&(mine.len() as u64)),
        bytemuck::cast_slice_mut(&mut lens),
        &vec![8; p],
    )?;
    let lens: Vec<usize> = lens.into_iter().map(|k| k as usize).collect();
    let mut recv = zeroed::<T>(lens.iter().sum(), "gathering")?;
    let bytes: Vec<usize> = lens.iter().map(|&k| k * w).collect();
    c.all_gather_into(
        bytemuck::cast_slice(mine),
        bytemuck::cast_slice_mut(&mut recv),
        &bytes,
    )?;
    Ok((recv, lens))
}

/// One value of every rank, in rank order.
pub fn gather_one(c: &dyn Comm, mine: u64) -> Result<Vec<u64>> {
    Ok(all_gather(c, &[mine])?.0)
}

/// The sum of `mine` over ranks below this one (an exclusive prefix sum).
pub fn exclusive_sum(c: &dyn Comm, mine: u64) -> Result<u64> {
    Ok(gather_one(c, mine)?[..c.rank()].iter().sum())
}

/// A scalar reduced over all ranks.
pub fn reduce_one(c: &dyn Comm, mine: u64, op: Op) -> Result<u64> {
    let mut v = [mine];
    c.all_reduce_u64(&mut v, op)?;
    Ok(v[0])
}

/// `items` sent to the ranks `dest(item)` (which must be `< size`), in one exchange:
/// returns what every rank sent here, in rank order (and each rank's items in the order it
/// had them).
pub fn route<T: Pod + Send + Sync>(
    c: &dyn Comm,
    items: &[T],
    dest: impl Fn(&T) -> usize + Sync,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    let p = c.size();
    if p == 1 {
        return Ok(items.to_vec());
    }
    // Each chunk's items counted by destination, then written straight into its own slice
    // of each destination's part of the send buffer (chunks in order, so each rank's items
    // keep their order): two passes over the items, no intermediate buckets.
    let chunk = items
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(1 << 14);
    let tally: Vec<Vec<usize>> = items
        .par_chunks(chunk)
        .map(|ch| {
            let mut t = vec![0usize; p];
            for x in ch {
                t[dest(x)] += 1;
            }
            t
        })
        .collect();
    let counts: Vec<usize> = (0..p).map(|d| tally.iter().map(|t| t[d]).sum()).collect();
    let mut send = zeroed::<T>(items.len(), "routing items")?;
    {
        let mut slices: Vec<Vec<&mut [T]>> = tally.iter().map(|_| Vec::with_capacity(p)).collect();
        let mut rest: &mut [T] = &mut send;
        for d in 0..p {
            for (t, s) in tally.iter().zip(slices.iter_mut()) {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(t[d]);
                s.push(head);
                rest = tail;
            }
        }
        items.par_chunks(chunk).zip(slices).for_each(|(ch, mut s)| {
            let mut at = vec![0usize; p];
            for x in ch {
                let d = dest(x);
                s[d][at[d]] = *x;
                at[d] += 1;
            }
        });
    }
    drop(tally);
    Ok(all_to_all(c, &send, &counts)?.0)
}

/// [`route`] of items the caller gives up: on one rank they are returned as they are, with
/// no copy.
pub fn route_owned<T: Pod + Send + Sync>(
    c: &dyn Comm,
    items: Vec<T>,
    dest: impl Fn(&T) -> usize + Sync,
) -> Result<Vec<T>> {
    if c.size() == 1 {
        return Ok(items);
    }
    route(c, &items, dest)
}

/// The rank of `p` that owns `x` of `0..n` cut into `p` equal blocks (`x * p / n`).
#[inline]
pub fn block_owner(x: u64, n: u64, p: usize) -> usize {
    if n == 0 {
        0
    } else {
        ((x as u128 * p as u128) / n as u128) as usize
    }
}

/// The start of block `r` of `0..n` cut into `p` equal blocks ([`block_owner`]'s inverse).
#[inline]
pub fn block_start(r: usize, n: u64, p: usize) -> u64 {
    // The least x with x * p / n >= r.
    ((r as u128 * n as u128).div_ceil(p as u128)) as u64
}

/// Where a rank of a distributed run gets the data its own part needs: triangles the rows its
/// edges point to ([`crate::dist::triangles`]), R-MCL on a GPU backend the columns of `M` its expansion
/// needs ([`crate::mcl::gpu`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// [`Layout::Replicate`] when it fits every rank's device (triangles: the whole
    /// oriented graph; R-MCL: all of `M`), else [`Layout::Partition`].
    #[default]
    Auto,
    /// Every rank holds the whole graph (from its first row on), or all of `M`, gathered
    /// after every iteration.
    Replicate,
    /// Every rank holds its rows and fetches those its edges need, once; or its columns of
    /// `M` and those its expansion needs, fetched every iteration.
    Partition,
}

impl Layout {
    /// Stable name (`auto`, `replicate`, `partition`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Auto => "auto",
            Layout::Replicate => "replicate",
            Layout::Partition => "partition",
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Layout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Layout::Auto),
            "replicate" | "replicated" => Ok(Layout::Replicate),
            "partition" | "partitioned" => Ok(Layout::Partition),
            _ => Err(Error::invalid(
                "layout",
                format!("{s:?} (expected auto, replicate or partition)"),
            )),
        }
    }
}

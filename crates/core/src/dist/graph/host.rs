//! The oriented graph of `trident triangles` read once per host (its default under mpirun):
//! the first rank of each host reads and orients the whole graph as one process does
//! ([`OrientedGraph::from_graph`], with every core of the host), cuts its rows over the
//! ranks at equal intersection work as [`super::orient`] cuts them, and passes each rank of
//! the host its rows through one shared-memory window ([`Comm::host_share`]). Every rank
//! ends with the [`DistOriented`] that [`super::orient`] would have given it.
//!
//! Bytes: a header of `u64` words (a tag, the nodes, the edges, the ranks), the cuts
//! (`u64`), the row pointers (`u64`), the relabelling (`u32`) and the rows (`u32`), each
//! section starting at a multiple of 8 bytes. A rank copies the relabelling and only its own
//! rows out of the window.

use rayon::prelude::*;

use super::{edge_cost, edge_splits, DistOriented};
use crate::dist::{Comm, Phases};
use crate::error::{Error, Result};
use crate::graph::bytes::{par_copy, up8, Reader, Writer};
use crate::triangles::OrientedGraph;

/// The first word: what the bytes hold, and the layout's version.
const TAG: u64 = u64::from_le_bytes(*b"TRORIEN1");
/// Header words.
const HEADER: usize = 4;

/// The rows of `o` cut into `p` ranges of about equal intersection work: the cuts of
/// [`super::orient`] (each row's work the sum of [`edge_cost`] over its edges).
pub(crate) fn work_splits(o: &OrientedGraph, p: usize) -> Vec<usize> {
    let (ip, adj) = (o.indptr(), o.adjacency());
    let outdeg = |v: usize| (ip[v + 1] - ip[v]) as u32;
    let cost: Vec<u64> = (0..o.num_nodes())
        .into_par_iter()
        .with_min_len(1 << 10)
        .map(|u| {
            let du = outdeg(u);
            adj[ip[u] as usize..ip[u + 1] as usize]
                .iter()
                .map(|&v| edge_cost(du, outdeg(v as usize)))
                .fold(0u64, u64::wrapping_add)
        })
        .collect();
    let work = cost.par_iter().copied().reduce(|| 0, u64::wrapping_add);
    edge_splits(&cost, work, p)
}

/// The whole oriented graph with its rows cut over the ranks at equal intersection work
/// ([`work_splits`]): what a rank that reads the whole graph passes to [`orient_on_host`] or
/// [`DistOriented::from_whole`]. The cut is made here, on the caller's threads (no
/// communication), so that a host's first rank can make it with all of the host's threads.
#[derive(Debug, Clone)]
pub struct CutGraph {
    graph: OrientedGraph,
    splits: Vec<usize>,
}

impl CutGraph {
    /// `o` cut over `ranks` ranks.
    pub fn new(o: OrientedGraph, ranks: usize) -> CutGraph {
        let splits = work_splits(&o, ranks.max(1));
        CutGraph { graph: o, splits }
    }

    /// The cut for `c`'s ranks, or an error if it was made for another number.
    fn for_ranks(&self, c: &dyn Comm) -> Result<()> {
        if self.splits.len() == c.size() + 1 {
            Ok(())
        } else {
            Err(Error::invalid(
                "oriented graph",
                format!(
                    "cut for {} ranks, used by {}",
                    self.splits.len() - 1,
                    c.size()
                ),
            ))
        }
    }
}

impl DistOriented {
    /// This rank's share of the whole oriented graph `g` (held by this rank): its rows by
    /// the cut, the relabelling whole. The same as [`super::orient`] of `g`'s graph.
    /// The rows are kept in place (moved down), not copied.
    pub fn from_whole(c: &dyn Comm, g: CutGraph) -> Result<DistOriented> {
        g.for_ranks(c)?;
        Ok(Self::share_of(g.graph, g.splits, c.rank()))
    }

    /// Rank `rank`'s share of `o` cut at `splits`.
    fn share_of(o: OrientedGraph, splits: Vec<usize>, rank: usize) -> DistOriented {
        let (n, m) = (o.num_nodes(), o.num_edges() as u64);
        let (ip, mut adj, original) = o.into_parts();
        let (r0, r1) = (splits[rank], splits[rank + 1]);
        let (a0, a1) = (ip[r0] as usize, ip[r1] as usize);
        let indptr: Vec<u64> = ip[r0..=r1].par_iter().map(|&x| x - ip[r0]).collect();
        drop(ip);
        if a0 > 0 {
            adj.copy_within(a0..a1, 0);
        }
        adj.truncate(a1 - a0);
        adj.shrink_to_fit();
        DistOriented {
            n,
            m,
            splits,
            indptr,
            adj,
            original: original.unwrap_or_else(|| (0..n as u32).collect()),
            phases: Phases::default(),
        }
    }
}

/// Bytes of `o` cut over `p` ranks.
fn bytes_len(o: &OrientedGraph, p: usize) -> usize {
    let n = o.num_nodes();
    8 * HEADER + 8 * (p + 1) + 8 * (n + 1) + up8(4 * n) + up8(4 * o.num_edges())
}

/// `o`, cut at `splits`, into `out` ([`bytes_len`] bytes).
/// The rows before row `from` are left out (their room stays as the window made it): the
/// host's other ranks, all after its first, read none of them.
fn write_bytes(o: &OrientedGraph, splits: &[usize], from: usize, out: &mut [u8]) {
    let n = o.num_nodes();
    let p = splits.len() - 1;
    let header: [u64; HEADER] = [TAG, n as u64, o.num_edges() as u64, p as u64];
    let mut w = Writer { out };
    w.put(bytemuck::cast_slice(&header));
    let cuts: Vec<u64> = splits.iter().map(|&s| s as u64).collect();
    w.put(bytemuck::cast_slice(&cuts));
    w.put(bytemuck::cast_slice(o.indptr()));
    match o.original_ids() {
        Some(ids) => w.put(bytemuck::cast_slice(ids)),
        None => w.put(bytemuck::cast_slice(&(0..n as u32).collect::<Vec<_>>())),
    }
    let skip = o.indptr()[from] as usize;
    let rows = std::mem::take(&mut w.out);
    let (data, pad) = rows.split_at_mut(4 * o.num_edges());
    par_copy(
        &mut data[4 * skip..],
        bytemuck::cast_slice(&o.adjacency()[skip..]),
    );
    pad.fill(0);
}

/// Rank `rank` of `p`'s share of the oriented graph in `b` ([`write_bytes`]). Bytes of
/// another shape (cut short, cuts or rows out of order, ids out of range) are an error.
fn from_bytes(b: &[u8], rank: usize, p: usize) -> Result<DistOriented> {
    let bad = |what: &str| Error::invalid("oriented graph bytes", what.to_string());
    let mut r = Reader { b, bad: &bad };
    let h = r.take::<u64>(HEADER)?;
    if h[0] != TAG {
        return Err(bad("not an oriented graph's bytes"));
    }
    let as_usize = |x: u64| usize::try_from(x).map_err(|_| bad("a size beyond memory"));
    let (n, m) = (as_usize(h[1])?, h[2]);
    if h[3] != p as u64 {
        return Err(bad("cut for another number of ranks"));
    }
    let splits: Vec<usize> = r
        .take::<u64>(p + 1)?
        .into_iter()
        .map(as_usize)
        .collect::<Result<_>>()?;
    if splits[0] != 0 || splits[p] != n || splits.windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("cuts out of order"));
    }
    let (r0, r1) = (splits[rank], splits[rank + 1]);
    let n1 = n
        .checked_add(1)
        .ok_or_else(|| bad("a size beyond memory"))?;
    // The row pointers: only this rank's are copied out (from 0), with the first and last
    // to check them against.
    let section = n1
        .checked_mul(8)
        .filter(|&x| x <= r.b.len())
        .ok_or_else(|| bad("cut short"))?;
    let word = |i: usize| u64::from_le_bytes(r.b[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
    let mut ip: Vec<u64> = crate::alloc::try_zeroed_vec(r1 - r0 + 1, || {
        format!("{} row pointers of a shared oriented graph", r1 - r0 + 1)
    })?;
    par_copy(
        bytemuck::cast_slice_mut(&mut ip),
        &r.b[8 * r0..8 * (r1 + 1)],
    );
    if word(0) != 0 || word(n) != m || ip[r1 - r0] > m || ip.par_windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("row pointers out of order"));
    }
    r.b = &r.b[section..];
    let (a0, a1) = (as_usize(ip[0])?, as_usize(ip[r1 - r0])?);
    let indptr: Vec<u64> = ip.par_iter().map(|&x| x - ip[0]).collect();
    drop(ip);
    let original = r.take::<u32>(n)?;
    if original.par_iter().any(|&v| v as usize >= n) {
        return Err(bad("node ids out of range"));
    }
    let m = as_usize(m)?;
    // Only this rank's rows are copied out.
    let rows = r.b;
    if m.checked_mul(4).map(up8) != Some(rows.len()) {
        return Err(bad("rows of another length"));
    }
    let mut adj: Vec<u32> = crate::alloc::try_zeroed_vec(a1 - a0, || {
        format!("{} edges of a shared oriented graph", a1 - a0)
    })?;
    par_copy(bytemuck::cast_slice_mut(&mut adj), &rows[4 * a0..4 * a1]);
    if adj.par_iter().any(|&v| v as usize >= n) {
        return Err(bad("node ids out of range"));
    }
    Ok(DistOriented {
        n,
        m: m as u64,
        splits,
        indptr,
        adj,
        original,
        phases: Phases::default(),
    })
}

/// Passes the whole oriented graph from the first rank of each host to every rank of that
/// host, each rank keeping its share ([`DistOriented::from_whole`]). The host's first rank
/// passes its read, orientation and cut (`Some`; the others `None`); a failed one is returned as
/// its error without entering the collective (the caller ends the job; the host's other ranks
/// wait for it until then). Collective over all ranks. With the share, whether it was shared:
/// on a host without room for the shared window (`/dev/shm` too small) it was not, and the
/// host's other ranks get `None` (they read and orient the file themselves). The share's
/// [`DistOriented::phases`]: the window (the bytes written and read out; on the other ranks
/// with the wait for the first) and its own rows.
pub fn orient_on_host(
    c: &dyn Comm,
    read: Option<Result<CutGraph>>,
) -> Result<(Option<DistOriented>, bool)> {
    let mine = super::first_rank_read(c, read, "orient_on_host")?;
    let p = c.size();
    if let Some(g) = &mine {
        g.for_ranks(c)?;
    }
    let mut phases = Phases::default();
    let len = mine.as_ref().map_or(0, |g| bytes_len(&g.graph, p));
    let mut got = None;
    let shared = c.host_share(
        len,
        &mut |out| {
            if let Some(g) = &mine {
                // The host's other ranks come after its first (MPI orders a host's ranks by
                // their rank): they read no row before the first rank's last.
                write_bytes(&g.graph, &g.splits, g.splits[c.rank() + 1], out);
            }
        },
        &mut |bytes| {
            if mine.is_none() {
                got = Some(from_bytes(bytes, c.rank(), p)?);
            }
            Ok(())
        },
    )?;
    phases.lap("window");
    let share = match (mine, got) {
        (Some(g), _) => Some(DistOriented::share_of(g.graph, g.splits, c.rank())),
        (None, got) => got,
    };
    phases.lap("rows");
    match share {
        Some(d) => Ok((Some(DistOriented { phases, ..d }), shared)),
        None if !shared => Ok((None, false)),
        None => Err(Error::invalid(
            "orient_on_host",
            "no graph came from the host's first rank",
        )),
    }
}

/// Whether `b`'s bytes are refused, for the tests of malformed shares.
#[cfg(test)]
pub(crate) fn refuses(b: &[u8], rank: usize, p: usize) -> bool {
    from_bytes(b, rank, p).is_err()
}

/// The bytes a host's first rank writes, for the tests of malformed shares.
#[cfg(test)]
pub(crate) fn to_bytes(o: &OrientedGraph, p: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes_len(o, p)];
    write_bytes(o, &work_splits(o, p), 0, &mut out);
    out
}

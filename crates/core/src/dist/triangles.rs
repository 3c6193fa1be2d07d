//! Triangle counting over many processes, each counting on its own backend (a GPU per rank,
//! or the CPU) with the one-process kernels.
//!
//! The oriented graph's rows are cut over the ranks at about equal edge counts
//! ([`super::graph::orient`]). Each rank counts the triangles found at its rows (those whose
//! lowest-ranked node is its), which needs, besides its rows, the rows its edges point to:
//!
//! * [`Layout::Replicate`]: every rank gathers the whole graph and keeps the rows from its
//!   first on (its own and all later ones);
//! * [`Layout::Partition`]: every rank fetches, once, just the rows its edges point to from
//!   the ranks holding them (1D partition with remote rows), for graphs that do not fit one
//!   device.
//!
//! Either way the rows go in one personalised exchange as they are uploaded
//! ([`TriangleCount::upload_exchanged`]: device to device through NCCL where the backend
//! can); only the rows' lengths (and, partitioned, which rows) are agreed on the hosts.
//!
//! A rank's graph is its rows from its first on, ids shifted down by its first row, with its
//! own rows counted ([`OrientedGraph::with_counted_rows`](crate::triangles::OrientedGraph::with_counted_rows)) and the later ones only read; the
//! counts are summed over ranks, exactly (integers), and per-node counts are summed and put
//! back in the graph's order on every rank.

use std::time::Instant;

use rayon::prelude::*;

use super::graph::DistOriented;
pub use super::Layout;
use super::{all_gather, all_to_all, reduce_one, route, Comm, Op};
use crate::error::{Error, Result};
use crate::triangles::{plan, RowExchange, TriangleCount, TriangleCounts, TriangleOptions};

/// What a distributed count did, besides the counts.
#[derive(Debug, Clone, PartialEq)]
pub struct DistCounts {
    /// The counts of the whole graph (per node in the graph's order), on every rank.
    pub counts: TriangleCounts,
    /// The layout used (never `Auto`).
    pub layout: Layout,
    /// This rank's counted rows and their edges.
    pub rows: usize,
    /// The edges of this rank's counted rows.
    pub counted_edges: usize,
    /// Edges this rank holds (its own and the rows they need).
    pub held_edges: usize,
    /// Whether the rows went device to device ([`TriangleCount::upload_exchanged`]: NCCL)
    /// rather than through the hosts.
    pub device_exchange: bool,
    /// Seconds spent getting the rows (gather or fetch) onto the device, and counting (the
    /// slowest rank's, for each). The rows are exchanged as they are uploaded, in either
    /// layout, so `exchange` covers the upload.
    pub exchange: f64,
    /// See [`DistCounts::exchange`].
    pub count: f64,
    /// Every rank's counting time, in rank order (how well the rows' cut balanced the work).
    pub count_ranks: Vec<f64>,
}

/// The slowest rank's time.
fn slowest(c: &dyn Comm, secs: f64) -> Result<f64> {
    reduce_one(c, secs.to_bits(), Op::Max).map(f64::from_bits)
}

/// Counts the triangles of the distributed oriented graph `o` on backend `b` of every rank
/// (see the module documentation). `opts.algorithm` should be resolved by the caller for
/// the whole graph, so that every rank runs the same one.
pub fn count<B: TriangleCount>(
    c: &dyn Comm,
    b: &B,
    o: &DistOriented,
    layout: Layout,
    opts: &TriangleOptions,
) -> Result<DistCounts> {
    let n = o.num_nodes();
    let layout = match layout {
        Layout::Auto => {
            // Fits every device: the whole graph's bytes (`OrientedGraph::device_bytes`)
            // within the smallest limit.
            let need = 8 * (n as u64 + 1) + 4 * o.num_edges() + 8 * n as u64 + (1 << 20);
            let have = reduce_one(c, b.memory_limit().unwrap_or(u64::MAX), Op::Min)?;
            if need <= have {
                Layout::Replicate
            } else {
                Layout::Partition
            }
        }
        l => l,
    };
    let t = Instant::now();
    let r0 = o.first_row(c);
    let rows = o.splits()[c.rank() + 1] - r0;
    let mut counting = 0.0;
    // The rows on the device, exchanged as they are uploaded: every rank's later rows
    // (replicate), or the rows this rank's edges point to (partition).
    let mut send = Vec::new();
    // Every rank takes part in the exchange, whether or not it counts anything.
    let x = match layout {
        Layout::Partition => fetch_rows(c, o, rows, &mut send)?,
        _ => replicate(c, o, rows)?,
    };
    let (counted_edges, held_edges) = (
        x.indptr[rows] as usize,
        x.indptr[x.indptr.len() - 1] as usize,
    );
    let (d, device_exchange) = b.upload_exchanged(c, x)?;
    drop(send);
    b.synchronize()?;
    let exchange = slowest(c, t.elapsed().as_secs_f64())?;
    let d = Some(d).filter(|_| counted_edges > 0);
    let local = match d {
        None => TriangleCounts {
            total: 0,
            per_node: opts.per_node.then(|| vec![0; o.num_nodes() - r0]),
        },
        Some(d) => {
            let t = Instant::now();
            let r = b.count_oriented(&d, opts)?;
            counting = t.elapsed().as_secs_f64();
            r
        }
    };
    let count_ranks: Vec<f64> = all_gather(c, &[counting.to_bits()])?
        .0
        .into_iter()
        .map(f64::from_bits)
        .collect();
    if count_ranks.len() != c.size() {
        return Err(Error::backend(
            "dist",
            format!(
                "gathered {} counting times from {} ranks",
                count_ranks.len(),
                c.size()
            ),
        ));
    }
    let count = count_ranks.iter().copied().fold(0.0, f64::max);
    let total = reduce_one(c, local.total, Op::Sum)?;
    let per_node = match local.per_node {
        Some(p) => {
            let mut all = vec![0u64; n];
            all[r0..r0 + p.len()].copy_from_slice(&p);
            drop(p);
            c.all_reduce_u64(&mut all, Op::Sum)?;
            Some(plan::to_original_order(Some(o.original()), all))
        }
        None => None,
    };
    Ok(DistCounts {
        counts: TriangleCounts { total, per_node },
        layout,
        rows,
        counted_edges,
        held_edges,
        device_exchange,
        exchange,
        count,
        count_ranks,
    })
}

/// This rank's rows under [`Layout::Replicate`]: the rows from its first on (its own
/// counted, the later ones only read), ids shifted down by it. Each rank sends its rows to
/// itself and every earlier rank; the row lengths are gathered on the hosts.
fn replicate<'a>(c: &dyn Comm, o: &'a DistOriented, rows: usize) -> Result<RowExchange<'a>> {
    let (ip, adj) = o.local();
    let lens: Vec<u64> = ip.windows(2).map(|w| w[1] - w[0]).collect();
    let (lens, _) = all_gather(c, &lens)?;
    let (r0, me) = (o.first_row(c), c.rank());
    let mut indptr = Vec::with_capacity(lens.len() - r0 + 1);
    indptr.push(0u64);
    for &l in &lens[r0..] {
        indptr.push(indptr[indptr.len() - 1] + l);
    }
    let splits = o.splits();
    let held = |r: usize| -> usize { lens[splits[r]..splits[r + 1]].iter().sum::<u64>() as usize };
    let p = c.size();
    Ok(RowExchange {
        indptr,
        counted: rows,
        send: adj,
        parts: (0..p)
            .map(|r| if r <= me { 0..adj.len() } else { 0..0 })
            .collect(),
        recv: (0..p).map(|r| if r >= me { held(r) } else { 0 }).collect(),
        shift: r0 as u32,
    })
}

/// This rank's rows under [`Layout::Partition`]: its rows, and the rows its edges point to
/// (all after its own), fetched once from their ranks (the others empty), from its first row
/// on, ids shifted down by it. Which rows, and their lengths, are agreed on the hosts; the
/// rows themselves go in one exchange as they are uploaded (device to device where the
/// backend can), each rank sending its own rows to itself and the rows asked of it to each
/// other rank, into `send` (filled here: the exchange borrows it).
fn fetch_rows<'a>(
    c: &dyn Comm,
    o: &DistOriented,
    rows: usize,
    send: &'a mut Vec<u32>,
) -> Result<RowExchange<'a>> {
    let (p, me) = (c.size(), c.rank());
    let splits = o.splits();
    let (r0, r1) = (splits[me], splits[me + 1]);
    let (ip, adj) = o.local();
    // The rows wanted: targets beyond this rank's rows, each once, in order (so from later
    // ranks only, in rank order).
    let mut want: Vec<u32> = adj
        .par_iter()
        .copied()
        .filter(|&u| u as usize >= r1)
        .collect();
    want.par_sort_unstable();
    want.dedup();
    let owner = |row: &u32| (splits.partition_point(|&s| s <= *row as usize) - 1).min(p - 1);
    let asked_counts: Vec<usize> = {
        let mut k = vec![0usize; p];
        for u in &want {
            k[owner(u)] += 1;
        }
        k
    };
    let asked = route(c, &want, owner)?;
    // How many each rank asked here, to answer in its order.
    let (per_rank, _) = all_to_all(
        c,
        &asked_counts.iter().map(|&k| k as u64).collect::<Vec<_>>(),
        &vec![1; p],
    )?;
    let row_len = |u: u32| ip[u as usize - r0 + 1] - ip[u as usize - r0];
    let lens: Vec<u64> = asked.iter().map(|&u| row_len(u)).collect();
    let counts: Vec<usize> = per_rank.iter().map(|&k| k as usize).collect();
    let (got_lens, got_counts) = all_to_all(c, &lens, &counts)?;
    // What goes to each rank, in rank order: the rows it asked for, or to itself its rows.
    send.clear();
    send.reserve(adj.len() + lens.iter().sum::<u64>() as usize);
    let mut parts = Vec::with_capacity(p);
    let mut at = 0;
    for (r, &k) in counts.iter().enumerate() {
        let start = send.len();
        if r == me {
            send.extend_from_slice(adj);
        }
        for &u in &asked[at..at + k] {
            send.extend_from_slice(
                &adj[ip[u as usize - r0] as usize..ip[u as usize - r0 + 1] as usize],
            );
        }
        at += k;
        parts.push(start..send.len());
    }
    // What arrives from each rank: from itself its rows, from a later rank the rows it was
    // asked for. The local graph is rows r0.. (own, then fetched in `want` order, others
    // empty), which is the order they arrive in.
    let mut recv = vec![0usize; p];
    recv[me] = adj.len();
    let mut k = 0;
    for (r, &g) in got_counts.iter().enumerate() {
        recv[r] += got_lens[k..k + g].iter().sum::<u64>() as usize;
        k += g;
    }
    let n = o.num_nodes();
    let mut indptr = vec![0u64; n - r0 + 1];
    for v in r0..r1 {
        indptr[v - r0 + 1] = ip[v - r0 + 1] - ip[v - r0];
    }
    for (&u, &l) in want.iter().zip(&got_lens) {
        indptr[u as usize - r0 + 1] = l;
    }
    for v in 0..n - r0 {
        indptr[v + 1] += indptr[v];
    }
    debug_assert_eq!(rows, r1 - r0);
    Ok(RowExchange {
        indptr,
        counted: rows,
        send: send.as_slice(),
        parts,
        recv,
        shift: r0 as u32,
    })
}

//! The symmetric CSR build behind [`Graph::from_arrays`](super::Graph): symmetrise, drop
//! self-loops, sort and deduplicate every row, in parallel (rayon) and in linear time.
//!
//! # Passes
//!
//! The input ids are cut into *buckets* of `2^shift` consecutive ids, sized so that one
//! bucket's directed edges (about 2^19) sort in the cache. The edges may be renumbered on
//! the way ([`DenseIds`], the readers' compaction of the ids in use): that numbering is
//! monotone, so a bucket of ids is a contiguous range of rows either way.
//!
//! 1. **Count** (parallel over chunks of edges, each within one of the input's parts):
//!    each chunk checks its ids, counts its self-loops and its directed edges per bucket.
//!    When the parse counted the edge ends of each part per 64 ids on the way
//!    ([`PartCounts`], the streamed edge-list read), the chunks are the parts and their
//!    bucket counts are sums of those: no pass over the edges, only a sample of each part
//!    for its order.
//! 2. **Partition** (parallel over chunks): a prefix sum over (bucket, chunk) gives every
//!    chunk its own disjoint slice of each bucket's range in the adjacency array; each chunk
//!    writes both directions of its edges there, renumbered (the column into `adj`, the row
//!    within the bucket into `lrow`, the weight into `wts`; unweighted, when row and column
//!    fit 32 bits together, both packed into `adj` and no `lrow`). Few buckets: few
//!    sequential write streams, straight into the final array.
//! 3. **Rows** (parallel over buckets): each bucket is counting-sorted by row into a
//!    per-thread scratch buffer (bucket-sized, so it stays in cache), then every row is
//!    sorted, deduplicated and written back compacted at the start of the bucket's range.
//!    Packed keys of an input that is not sorted by (source, target) (pass 1 counts the
//!    descents) take [`radix_rows`] instead: counting sorts by the column's top bits and
//!    then by row leave each row almost sorted, and an insertion sort finishes it (cheaper
//!    than sorting random rows from scratch). A sorted input's rows come
//!    out of pass 2 sorted already, which the first way only checks.
//! 4. **Compact**: the buckets' kept edges are moved down to close the gaps (a memmove, in
//!    order), and the row pointers filled by a prefix sum (parallel over buckets).
//!
//! Memory: the adjacency (`2m` u32, zeroed by the allocator: fresh pages, not a memset),
//! the row-in-bucket array when not packed (`2m` u16, freed before the compaction), the
//! weights when weighted, and one bucket of scratch per thread; no second copy of the
//! adjacency.
//!
//! Load times: `benches/results/triangles.md`; how the passes got there:
//! `benches/results/history/h100-2026-11-23.md`.

mod rows;

use rayon::prelude::*;

use super::{DenseIds, PartCounts};
use crate::alloc;
use crate::error::{Error, Result};
use rows::{bucket_rows, radix_rows, Scratch};

/// The built CSR: row pointers, columns, weights, self-loops (input ones included).
pub(super) struct Built {
    pub indptr: Vec<usize>,
    pub adj: Vec<u32>,
    pub weights: Option<Vec<f64>>,
    pub self_loops: usize,
}

/// One chunk's slice of one bucket: columns, rows within the bucket, weights.
type Slices<'a> = (&'a mut [u32], &'a mut [u16], &'a mut [f64]);
/// One bucket of pass 3: index, columns, rows within the bucket, weights, row lengths.
type BucketJob<'a> = (
    usize,
    &'a mut [u32],
    &'a [u16],
    &'a mut [f64],
    &'a mut [usize],
);

/// Directed edges a bucket aims at: 2^19 (2 MiB of columns) sorts in L2 / L3.
const BUCKET_ENTRIES: usize = 1 << 19;
/// Edges of each part whose order decides, when the parse counted the rest of pass 1, whether
/// the input is sorted ([`radix_rows`] or not).
const DESCENT_SAMPLE: usize = 1 << 16;
/// Edges per parallel chunk in passes 1 and 2 (at least).
const MIN_CHUNK: usize = 1 << 16;

/// The first edge of `src` / `dst` that names a node outside `0..n`, as an error.
#[cold]
fn out_of_range(n: usize, src: &[u32], dst: &[u32], parts: &[(usize, usize)]) -> Error {
    let (u, v) = parts
        .iter()
        .flat_map(|&(a, b)| src[a..b].iter().zip(&dst[a..b]))
        .find(|&(&u, &v)| u as usize >= n || v as usize >= n)
        .map_or((0, 0), |(&u, &v)| (u, v));
    Error::invalid(
        "graph",
        format!("edge ({u}, {v}) names a node outside 0..{n}"),
    )
}

/// Ids as they are (the identity renumbering).
struct Same;

/// How the build reads an input id as a node: the identity, or a [`DenseIds`] renumbering.
trait Renumber: Sync {
    fn get(&self, id: u32) -> u32;
}
impl Renumber for Same {
    #[inline(always)]
    fn get(&self, id: u32) -> u32 {
        id
    }
}
impl Renumber for DenseIds {
    #[inline(always)]
    fn get(&self, id: u32) -> u32 {
        DenseIds::get(self, id)
    }
}

/// Pass 2's unweighted scatter of edges `(s[e], d[e])` (self-loops skipped) in both
/// directions, for columns and local rows in two arrays (packed keys have a loop of their
/// own): `store(bucket, slot, row, column)` with the renumbered ids, `slot` the next free
/// one of the bucket (`next`, advanced).
#[inline]
fn scatter_pairs(
    s: &[u32],
    d: &[u32],
    shift: u32,
    map: &impl Renumber,
    next: &mut [usize],
    mut store: impl FnMut(usize, usize, u32, u32),
) {
    for (&u, &v) in s.iter().zip(d) {
        if u == v {
            continue;
        }
        let (bu, bv) = ((u >> shift) as usize, (v >> shift) as usize);
        let (nu, nv) = (map.get(u), map.get(v));
        let pu = next[bu];
        store(bu, pu, nu, nv);
        next[bu] = pu + 1;
        // Read after the write above: bu may equal bv.
        let pv = next[bv];
        store(bv, pv, nv, nu);
        next[bv] = pv + 1;
    }
}

/// The CSR of the edges `src[a..b]` / `dst[a..b]` of every part `(a, b)` in `parts` (the
/// rest of the arrays is ignored), on `n` nodes: the ids themselves, or when `map` is given
/// the ids renumbered by it (then `n` is `map.len()`).
///
/// The buckets are ranges of input ids, so with a renumbering each holds a contiguous range
/// of nodes (the map is monotone): passes 1 and 3 never look ids up, pass 2 renumbers as it
/// scatters (two lookups in a table of 16 bytes per 64 ids, which stays in cache).
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    n: usize,
    src: &[u32],
    dst: &[u32],
    weights: Option<&[f64]>,
    parts: &[(usize, usize)],
    map: Option<&DenseIds>,
    self_loops: usize,
    counts: Option<&[PartCounts]>,
) -> Result<Built> {
    if src.len() != dst.len() || weights.is_some_and(|w| w.len() != src.len()) {
        return Err(Error::invalid("graph", "edge arrays differ in length"));
    }
    if parts.iter().any(|&(a, b)| a > b || b > src.len()) {
        return Err(Error::invalid("graph", "edge parts out of range"));
    }
    match map {
        None => build_with(n, n, src, dst, weights, parts, &Same, self_loops, counts),
        Some(map) => {
            if map.len() != n {
                return Err(Error::invalid("graph", "renumbering of the wrong size"));
            }
            build_with(
                n,
                map.raw_len(),
                src,
                dst,
                weights,
                parts,
                map,
                self_loops,
                counts,
            )
        }
    }
}

/// [`build`] for one renumbering: `n` nodes, input ids below `n_raw`; the four passes of the
/// module docs, one function each.
#[allow(clippy::too_many_arguments)]
fn build_with<R: Renumber>(
    n: usize,
    n_raw: usize,
    src: &[u32],
    dst: &[u32],
    weights: Option<&[f64]>,
    parts: &[(usize, usize)],
    map: &R,
    self_loops: usize,
    counts: Option<&[PartCounts]>,
) -> Result<Built> {
    let e = Edges {
        src,
        dst,
        weights,
        parts,
        map,
    };
    let l = Layout::new(n, n_raw, &e);
    let (chunks, counts) = chunks(&l, parts, counts);
    let mut counts = count(&l, &e, &chunks, counts)?;
    // Packed keys of a file that is not (mostly) sorted: pass 3 sorts each bucket by
    // column digit and row ([`radix_rows`]) instead of by row and then row by row.
    let descents: usize = counts.iter().map(|c| c.descents).sum();
    let radix = l.packed && descents > l.m / 16;
    let self_loops = self_loops + counts.iter().map(|c| c.loops).sum::<usize>();
    let bstart = bucket_starts(&mut counts, l.nb);

    let (mut adj, mut lrow, mut wts) = allocate(&l, bstart[l.nb])?;
    scatter(
        &l,
        &e,
        &chunks,
        &counts,
        &bstart,
        (&mut adj, &mut lrow, &mut wts),
    )?;
    drop(counts);

    let mut indptr = alloc::try_zeroed_vec::<usize>(n + 1, || {
        format!("the row pointers of a graph of {n} nodes")
    })?;
    let kept = sort_rows(&l, radix, &bstart, (&mut adj, &lrow, &mut wts), &mut indptr);
    drop(lrow);

    compact(&l, &bstart, &kept, &mut adj, &mut wts, &mut indptr);
    let weights = l.weighted.then_some(wts);
    Ok(Built {
        indptr,
        adj,
        weights,
        self_loops,
    })
}

/// The edges a build reads: the parts `(a, b)` of `src` / `dst` (and `weights`), their ids
/// read as nodes through `map`.
struct Edges<'a, R> {
    src: &'a [u32],
    dst: &'a [u32],
    weights: Option<&'a [f64]>,
    parts: &'a [(usize, usize)],
    map: &'a R,
}

/// How a build cuts the ids into buckets, and how it stores a directed edge in pass 2.
struct Layout {
    /// Input ids are below this.
    n_raw: usize,
    /// Input edges (of every part).
    m: usize,
    weighted: bool,
    /// Input ids per bucket: `2^shift`.
    shift: u32,
    /// Bits of a column.
    colbits: u32,
    /// Row within the bucket and column packed into one u32 of `adj` (no `lrow`).
    packed: bool,
    /// Buckets.
    nb: usize,
    /// First node of each bucket (and `n` at the end).
    first: Vec<usize>,
}

impl Layout {
    fn new<R: Renumber>(n: usize, n_raw: usize, e: &Edges<'_, R>) -> Self {
        let m: usize = e.parts.iter().map(|&(a, b)| b - a).sum();
        let weighted = e.weights.is_some();
        // Input ids per bucket: 2^shift (at most 2^16, so that a row within its bucket fits a
        // u16; at least 2^6, so that a bucket is whole words of a renumbering's bitmap).
        let per_row = (2 * m).div_ceil(n.max(1)).max(1);
        let target = (BUCKET_ENTRIES / per_row).max(1);
        let shift = (usize::BITS - 1 - target.leading_zeros()).clamp(6, 16);
        // Unweighted, and a row within its bucket and a column fit one u32 together (at the
        // cost of at most halving the buckets): pass 2 writes them packed into `adj`, and
        // there is no `lrow` array (a third less to write and read).
        let colbits = u32::BITS - (n.max(2) as u32 - 1).leading_zeros();
        let packed = !weighted && colbits + shift.saturating_sub(1).max(6) <= 32;
        let shift = if packed {
            shift.min(32 - colbits)
        } else {
            shift
        };
        let nb = (n_raw >> shift) + 1;
        let first: Vec<usize> = (0..=nb)
            .map(|b| match b.checked_shl(shift).filter(|&r| r < n_raw) {
                Some(r) => e.map.get(r as u32) as usize,
                None => n,
            })
            .collect();
        Layout {
            n_raw,
            m,
            weighted,
            shift,
            colbits,
            packed,
            nb,
            first,
        }
    }
}

/// Chunks of edges for passes 1 and 2: a few per thread, fewer when there are many buckets
/// (each chunk keeps a counter per bucket); each within one part. With the parse's counts,
/// when they are whole and consistent (each part's ends add up to twice its edges): one
/// chunk per part, and those counts, so that pass 1 need not read the edges.
fn chunks<'c>(
    l: &Layout,
    parts: &[(usize, usize)],
    counts: Option<&'c [PartCounts]>,
) -> (Vec<(usize, usize)>, Option<&'c [PartCounts]>) {
    let threads = rayon::current_num_threads().max(1);
    let nchunks = (l.m / MIN_CHUNK)
        .min(threads * 4)
        .min((1 << 24) / l.nb.max(1))
        .max(1);
    let csize = l.m.div_ceil(nchunks).max(1);
    let counts = counts.filter(|c| {
        c.len() == parts.len()
            && c.len() * l.nb <= 1 << 24
            && c.iter().zip(parts).all(|(c, &(a, b))| {
                c.ends.iter().map(|&e| e as usize).sum::<usize>() == 2 * (b - a)
            })
    });
    let chunks = match counts {
        Some(_) => parts.to_vec(),
        None => parts
            .iter()
            .flat_map(|&(a, b)| {
                (a..b)
                    .step_by(csize)
                    .map(move |lo| (lo, (lo + csize).min(b)))
            })
            .collect(),
    };
    (chunks, counts)
}

/// What pass 1 finds in one chunk.
struct ChunkCount {
    /// Directed edges per bucket; after [`bucket_starts`], the chunk's start in each bucket.
    hist: Vec<usize>,
    /// Self-loops.
    loops: usize,
    /// Edges that come before their predecessor in (src, dst) order: a file sorted that way
    /// gives rows that come out of pass 2 sorted already.
    descents: usize,
}

/// Pass 1: per chunk, range check, self-loops, directed edges per bucket, descents; from
/// the parse's counts when given (then only a sample of each part is read, for its order).
fn count<R: Renumber>(
    l: &Layout,
    e: &Edges<'_, R>,
    chunks: &[(usize, usize)],
    counts: Option<&[PartCounts]>,
) -> Result<Vec<ChunkCount>> {
    let (nb, shift, n_raw) = (l.nb, l.shift, l.n_raw);
    let (src, dst) = (e.src, e.dst);
    let from_parse = |(c, &(lo, hi)): (&PartCounts, &(usize, usize))| {
        // A bucket is whole words of ids (shift >= 6).
        let mut hist = vec![0usize; nb];
        for (w, &ends) in c.ends.iter().enumerate() {
            hist[(w >> (shift - 6)).min(nb - 1)] += ends as usize;
        }
        // Descents: those of the part's first DESCENT_SAMPLE edges, scaled to the part.
        let k = (hi - lo).min(DESCENT_SAMPLE);
        let sample = src[lo..lo + k]
            .windows(2)
            .zip(dst[lo..lo + k].windows(2))
            .filter(|(s, d)| (s[1], d[1]) < (s[0], d[0]))
            .count();
        Some(ChunkCount {
            hist,
            loops: 0,
            descents: sample * (hi - lo) / k.max(1),
        })
    };
    let counts: Vec<Option<ChunkCount>> = match counts {
        Some(c) => c.par_iter().zip(e.parts).map(from_parse).collect(),
        None => chunks
            .par_iter()
            .map(|&(lo, hi)| {
                let (s, d) = (&src[lo..hi], &dst[lo..hi]);
                let mut hist = vec![0usize; nb];
                let mut loops = 0usize;
                let mut bad = false;
                let mut prev = 0u64;
                let mut descents = 0usize;
                for (&u, &v) in s.iter().zip(d) {
                    bad |= u.max(v) as usize >= n_raw;
                    let key = (u64::from(u) << 32) | u64::from(v);
                    descents += usize::from(key < prev);
                    prev = key;
                    if u == v {
                        loops += 1;
                        continue;
                    }
                    // An out-of-range id is clamped here and reported below.
                    hist[((u >> shift) as usize).min(nb - 1)] += 1;
                    hist[((v >> shift) as usize).min(nb - 1)] += 1;
                }
                (!bad).then_some(ChunkCount {
                    hist,
                    loops,
                    descents,
                })
            })
            .collect(),
    };
    counts
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| out_of_range(n_raw, src, dst, e.parts))
}

/// Bucket ranges (`nb + 1` starts), and each chunk's start within each bucket in place of
/// its count.
fn bucket_starts(counts: &mut [ChunkCount], nb: usize) -> Vec<usize> {
    let mut bstart = vec![0usize; nb + 1];
    for b in 0..nb {
        let mut at = bstart[b];
        for c in counts.iter_mut() {
            let k = c.hist[b];
            c.hist[b] = at;
            at += k;
        }
        bstart[b + 1] = at;
    }
    bstart
}

/// The arrays pass 2 fills, for `total` directed edges: the adjacency, the rows within their
/// buckets (none when packed) and the weights (none when unweighted), zeroed by the
/// allocator.
fn allocate(l: &Layout, total: usize) -> Result<(Vec<u32>, Vec<u16>, Vec<f64>)> {
    let adj =
        alloc::try_zeroed_vec::<u32>(total, || format!("the adjacency of {total} directed edges"))?;
    let lrows = if l.packed { 0 } else { total };
    let lrow = alloc::try_zeroed_vec::<u16>(lrows, || format!("sorting {total} directed edges"))?;
    let wts = if l.weighted {
        alloc::try_zeroed_vec::<f64>(total, || format!("the weights of {total} directed edges"))?
    } else {
        Vec::new()
    };
    Ok((adj, lrow, wts))
}

/// Pass 2: every chunk scatters both directions of its edges into its own slices of every
/// bucket of `adj` / `lrow` / `wts`, renumbered.
fn scatter<R: Renumber>(
    l: &Layout,
    e: &Edges<'_, R>,
    chunks: &[(usize, usize)],
    starts: &[ChunkCount],
    bstart: &[usize],
    (adj, lrow, wts): (&mut [u32], &mut [u16], &mut [f64]),
) -> Result<()> {
    let (nb, shift, colbits, packed, weighted) = (l.nb, l.shift, l.colbits, l.packed, l.weighted);
    let (src, dst, map, first) = (e.src, e.dst, e.map, &l.first);
    // Set when a bucket had less room than it was counted (never, when the counts are right).
    let short = std::sync::atomic::AtomicBool::new(false);
    // Cut adj / lrow / wts into (bucket, chunk) slices, handed out per chunk.
    let mut per_chunk: Vec<Vec<Slices<'_>>> =
        (0..starts.len()).map(|_| Vec::with_capacity(nb)).collect();
    let (mut ra, mut rl, mut rw) = (adj, lrow, wts);
    for b in 0..nb {
        for t in 0..starts.len() {
            let end = if t + 1 < starts.len() {
                starts[t + 1].hist[b]
            } else {
                bstart[b + 1]
            };
            let len = end - starts[t].hist[b];
            let (a, ra2) = std::mem::take(&mut ra).split_at_mut(len);
            let (lr, rl2) = std::mem::take(&mut rl).split_at_mut(if packed { 0 } else { len });
            let wl = if weighted { len } else { 0 };
            let (w, rw2) = std::mem::take(&mut rw).split_at_mut(wl);
            (ra, rl, rw) = (ra2, rl2, rw2);
            per_chunk[t].push((a, lr, w));
        }
    }
    per_chunk
        .into_par_iter()
        .zip(chunks)
        .for_each(|(mut outs, &(lo, hi))| {
            // Row within its bucket: the node minus the bucket's first node.
            let lrow = |r: u32, b: usize| (map.get(r) as usize - first[b]) as u16;
            let mut next = vec![0usize; nb];
            let (s, d) = (&src[lo..hi], &dst[lo..hi]);
            match e.weights {
                None if packed => {
                    // Per bucket: a write cursor over this chunk's slice, and the
                    // bucket's first node.
                    let mut cur: Vec<(std::slice::IterMut<'_, u32>, u32)> = outs
                        .iter_mut()
                        .zip(first)
                        .map(|(o, &f)| (std::mem::take(&mut o.0).iter_mut(), f as u32))
                        .collect();
                    let mut full = false;
                    for (&u, &v) in s.iter().zip(d) {
                        if u == v {
                            continue;
                        }
                        let (nu, nv) = (map.get(u), map.get(v));
                        let cu = &mut cur[(u >> shift) as usize];
                        match cu.0.next() {
                            Some(x) => *x = ((nu - cu.1) << colbits) | nv,
                            None => full = true,
                        }
                        let cv = &mut cur[(v >> shift) as usize];
                        match cv.0.next() {
                            Some(x) => *x = ((nv - cv.1) << colbits) | nu,
                            None => full = true,
                        }
                    }
                    if full {
                        short.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                None => scatter_pairs(s, d, shift, map, &mut next, |b, p, nr, nc| {
                    outs[b].0[p] = nc;
                    outs[b].1[p] = (nr as usize - first[b]) as u16;
                }),
                Some(w) => {
                    let w = &w[lo..hi];
                    for ((&u, &v), &x) in s.iter().zip(d).zip(w) {
                        if u == v {
                            continue;
                        }
                        for (r, c) in [(u, v), (v, u)] {
                            let b = (r >> shift) as usize;
                            let p = next[b];
                            outs[b].0[p] = map.get(c);
                            outs[b].1[p] = lrow(r, b);
                            outs[b].2[p] = x;
                            next[b] = p + 1;
                        }
                    }
                }
            }
        });
    if short.into_inner() {
        return Err(Error::invalid(
            "graph",
            "the edge counts of the build do not match its edges",
        ));
    }
    Ok(())
}

/// Pass 3: per bucket, counting sort by row, then sort, merge and compact each row to the
/// start of the bucket's range; the row's length goes to `indptr[row + 1]`. Returns each
/// bucket's kept edges.
fn sort_rows(
    l: &Layout,
    radix: bool,
    bstart: &[usize],
    (adj, lrow, wts): (&mut [u32], &[u16], &mut [f64]),
    indptr: &mut [usize],
) -> Vec<usize> {
    let (packed, weighted, colbits) = (l.packed, l.weighted, l.colbits);
    let mut jobs: Vec<BucketJob<'_>> = Vec::with_capacity(l.nb);
    let (mut ra, mut rl, mut rw) = (adj, lrow, wts);
    let mut ri = &mut indptr[1..];
    for b in 0..l.nb {
        let len = bstart[b + 1] - bstart[b];
        let rows = l.first[b + 1] - l.first[b];
        let (a, ra2) = std::mem::take(&mut ra).split_at_mut(len);
        let (lr, rl2) = rl.split_at(if packed { 0 } else { len });
        let (w, rw2) = std::mem::take(&mut rw).split_at_mut(if weighted { len } else { 0 });
        let (i, ri2) = std::mem::take(&mut ri).split_at_mut(rows);
        (ra, rl, rw, ri) = (ra2, rl2, rw2, ri2);
        jobs.push((b, a, lr, w, i));
    }
    jobs.into_par_iter()
        .map_init(Scratch::default, |scratch, (_, a, lr, w, deg)| {
            if radix && a.len() <= u32::MAX as usize {
                return radix_rows(a, deg, colbits, scratch);
            }
            let packed = packed.then_some(colbits);
            bucket_rows(a, lr, weighted.then_some(w), deg, packed, scratch)
        })
        .collect()
}

/// Pass 4: close the gaps between the buckets' kept edges (`adj`, and `wts` when weighted,
/// truncated to the kept ones), then the row pointers from the row lengths.
fn compact(
    l: &Layout,
    bstart: &[usize],
    kept: &[usize],
    adj: &mut Vec<u32>,
    wts: &mut Vec<f64>,
    indptr: &mut [usize],
) {
    let mut out = 0usize;
    let mut base = Vec::with_capacity(l.nb);
    for b in 0..l.nb {
        let s = bstart[b];
        if s != out {
            adj.copy_within(s..s + kept[b], out);
            if l.weighted {
                wts.copy_within(s..s + kept[b], out);
            }
        }
        base.push(out);
        out += kept[b];
    }
    let mut ri = &mut indptr[1..];
    let mut jobs = Vec::with_capacity(l.nb);
    for (b, &start) in base.iter().enumerate() {
        let rows = l.first[b + 1] - l.first[b];
        let (i, ri2) = std::mem::take(&mut ri).split_at_mut(rows);
        ri = ri2;
        jobs.push((start, i));
    }
    jobs.into_par_iter().for_each(|(mut at, rows)| {
        for r in rows {
            at += *r;
            *r = at;
        }
    });
    adj.truncate(out);
    adj.shrink_to_fit();
    if l.weighted {
        wts.truncate(out);
        wts.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parse's counts (one chunk per part, no pass 1) give the CSR pass 1 gives, for a
    /// sorted and an unsorted input, renumbered or not; counts that do not add up are not
    /// used.
    #[test]
    fn parse_counts_build_the_same_csr() {
        let mut rng = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move |k: u64| {
            let x = rng();
            (x % k) as u32
        };
        let n = 5000usize;
        let (mut src, mut dst) = (Vec::new(), Vec::new());
        while src.len() < 60_000 {
            let (u, v) = (next(n as u64), next(n as u64));
            if u != v {
                src.push(u);
                dst.push(v);
            }
        }
        let mut sorted: Vec<(u32, u32)> = src.iter().copied().zip(dst.iter().copied()).collect();
        sorted.sort_unstable();
        let (ss, sd): (Vec<u32>, Vec<u32>) = sorted.into_iter().unzip();
        // Three parts with a gap of unused slots after each.
        let parts = [(0, 20_000), (20_100, 41_000), (41_050, 60_000)];
        let ends = |s: &[u32], d: &[u32], (a, b): (usize, usize)| {
            let mut e = vec![0u32; n.div_ceil(64) + 3];
            for k in a..b {
                e[s[k] as usize >> 6] += 1;
                e[d[k] as usize >> 6] += 1;
            }
            PartCounts { ends: e }
        };
        let mut bits = vec![0u64; n.div_ceil(64)];
        for &u in src.iter().chain(&dst) {
            bits[u as usize >> 6] |= 1 << (u & 63);
        }
        let map = DenseIds::new(bits);
        for (s, d) in [(&src, &dst), (&ss, &sd)] {
            let counts: Vec<PartCounts> = parts.iter().map(|&p| ends(s, d, p)).collect();
            let mut wrong = counts.clone();
            wrong[1].ends[0] += 1;
            for m in [None, Some(&map)] {
                let nodes = m.map_or(n, |m| m.len());
                let want = build(nodes, s, d, None, &parts, m, 0, None).unwrap();
                for c in [&counts, &wrong] {
                    let got = build(nodes, s, d, None, &parts, m, 0, Some(c)).unwrap();
                    assert_eq!((&got.indptr, &got.adj), (&want.indptr, &want.adj));
                }
            }
        }
    }
}

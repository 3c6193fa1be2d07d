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
//!    bucket counts are sums of those: no pass over the edges (scale-20 Kronecker, one
//!    thread: 0.044 s of a 0.8 s read), only a sample of each part for its order.
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
//!    then by row leave each row almost sorted, and an insertion sort finishes it (about
//!    a quarter faster than sorting random rows from scratch). A sorted input's rows come
//!    out of pass 2 sorted already, which the first way only checks.
//! 4. **Compact**: the buckets' kept edges are moved down to close the gaps (a memmove, in
//!    order), and the row pointers filled by a prefix sum (parallel over buckets).
//!
//! Memory: the adjacency (`2m` u32, zeroed by the allocator: fresh pages, not a memset),
//! the row-in-bucket array when not packed (`2m` u16, freed before the compaction), the
//! weights when weighted, and one bucket of scratch per thread; no second copy of the
//! adjacency.

use rayon::prelude::*;

use super::{DenseIds, PartCounts};
use crate::alloc;
use crate::error::{Error, Result};

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

/// [`build`] for one renumbering: `n` nodes, input ids below `n_raw`.
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
    let m: usize = parts.iter().map(|&(a, b)| b - a).sum();
    let weighted = weights.is_some();
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
    // First node of each bucket (and n at the end).
    let first: Vec<usize> = (0..=nb)
        .map(|b| match b.checked_shl(shift).filter(|&r| r < n_raw) {
            Some(r) => map.get(r as u32) as usize,
            None => n,
        })
        .collect();

    // Chunks of edges for passes 1 and 2: a few per thread, fewer when there are many
    // buckets (each chunk keeps a counter per bucket); each within one part.
    let threads = rayon::current_num_threads().max(1);
    let nchunks = (m / MIN_CHUNK)
        .min(threads * 4)
        .min((1 << 24) / nb.max(1))
        .max(1);
    let csize = m.div_ceil(nchunks).max(1);
    // The parse's counts, when they are whole and consistent: one chunk per part, and no
    // pass 1. (Each part's ends add up to twice its edges; a part's ids are below n_raw.)
    let counts = counts.filter(|c| {
        c.len() == parts.len()
            && c.len() * nb <= 1 << 24
            && c.iter().zip(parts).all(|(c, &(a, b))| {
                c.ends.iter().map(|&e| e as usize).sum::<usize>() == 2 * (b - a)
            })
    });
    let chunks: Vec<(usize, usize)> = match counts {
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

    // Pass 1: per chunk, range check, self-loops, directed edges per bucket.
    // Also counts the edges that come before their predecessor in (src, dst) order: a
    // file sorted that way gives rows that come out of pass 2 sorted already.
    let from_parse = |(c, &(lo, hi)): (&PartCounts, &(usize, usize))| {
        // A bucket is whole words of ids (shift >= 6).
        let mut hist = vec![0usize; nb];
        for (w, &e) in c.ends.iter().enumerate() {
            hist[(w >> (shift - 6)).min(nb - 1)] += e as usize;
        }
        // Descents: those of the part's first DESCENT_SAMPLE edges, scaled to the part.
        let k = (hi - lo).min(DESCENT_SAMPLE);
        let sample = src[lo..lo + k]
            .windows(2)
            .zip(dst[lo..lo + k].windows(2))
            .filter(|(s, d)| (s[1], d[1]) < (s[0], d[0]))
            .count();
        Some((hist, 0, sample * (hi - lo) / k.max(1)))
    };
    let counts: Vec<Option<(Vec<usize>, usize, usize)>> = match counts {
        Some(c) => c.par_iter().zip(parts).map(from_parse).collect(),
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
                (!bad).then_some((hist, loops, descents))
            })
            .collect(),
    };
    let mut counts: Vec<(Vec<usize>, usize, usize)> =
        match counts.into_iter().collect::<Option<_>>() {
            Some(c) => c,
            None => return Err(out_of_range(n_raw, src, dst, parts)),
        };
    // Packed keys of a file that is not (mostly) sorted: pass 3 sorts each bucket by
    // column digit and row ([`radix_rows`]) instead of by row and then row by row.
    let descents: usize = counts.iter().map(|c| c.2).sum();
    let radix = packed && descents > m / 16;
    let self_loops = self_loops + counts.iter().map(|c| c.1).sum::<usize>();

    // Bucket ranges, and each chunk's start within each bucket (in place of its count).
    let mut bstart = vec![0usize; nb + 1];
    for b in 0..nb {
        let mut at = bstart[b];
        for (hist, ..) in counts.iter_mut() {
            let c = hist[b];
            hist[b] = at;
            at += c;
        }
        bstart[b + 1] = at;
    }
    let total = bstart[nb];

    let mut adj =
        alloc::try_zeroed_vec::<u32>(total, || format!("the adjacency of {total} directed edges"))?;
    let lrows = if packed { 0 } else { total };
    let mut lrow =
        alloc::try_zeroed_vec::<u16>(lrows, || format!("sorting {total} directed edges"))?;
    let mut wts = if weighted {
        alloc::try_zeroed_vec::<f64>(total, || format!("the weights of {total} directed edges"))?
    } else {
        Vec::new()
    };

    // Pass 2: every chunk scatters into its own slices of every bucket.
    // Set when a bucket had less room than it was counted (never, when the counts are right).
    let short = std::sync::atomic::AtomicBool::new(false);
    {
        // Cut adj / lrow / wts into (bucket, chunk) slices, handed out per chunk.
        let mut per_chunk: Vec<Vec<Slices<'_>>> =
            (0..counts.len()).map(|_| Vec::with_capacity(nb)).collect();
        let (mut ra, mut rl, mut rw) = (&mut adj[..], &mut lrow[..], &mut wts[..]);
        for b in 0..nb {
            for t in 0..counts.len() {
                let end = if t + 1 < counts.len() {
                    counts[t + 1].0[b]
                } else {
                    bstart[b + 1]
                };
                let len = end - counts[t].0[b];
                let (a, ra2) = std::mem::take(&mut ra).split_at_mut(len);
                let (l, rl2) = std::mem::take(&mut rl).split_at_mut(if packed { 0 } else { len });
                let wl = if weighted { len } else { 0 };
                let (w, rw2) = std::mem::take(&mut rw).split_at_mut(wl);
                (ra, rl, rw) = (ra2, rl2, rw2);
                per_chunk[t].push((a, l, w));
            }
        }
        per_chunk
            .into_par_iter()
            .zip(&chunks)
            .for_each(|(mut outs, &(lo, hi))| {
                // Row within its bucket: the node minus the bucket's first node.
                let lrow = |r: u32, b: usize| (map.get(r) as usize - first[b]) as u16;
                let mut next = vec![0usize; nb];
                let (s, d) = (&src[lo..hi], &dst[lo..hi]);
                match weights {
                    None if packed => {
                        // Per bucket: a write cursor over this chunk's slice, and the
                        // bucket's first node.
                        let mut cur: Vec<(std::slice::IterMut<'_, u32>, u32)> = outs
                            .iter_mut()
                            .zip(&first)
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
    }
    drop(counts);
    if short.into_inner() {
        return Err(Error::invalid(
            "graph",
            "the edge counts of the build do not match its edges",
        ));
    }

    // Pass 3: per bucket, counting sort by row, then sort, merge and compact each row to
    // the start of the bucket's range; the row's length goes to indptr[row + 1].
    let mut indptr = alloc::try_zeroed_vec::<usize>(n + 1, || {
        format!("the row pointers of a graph of {n} nodes")
    })?;
    let kept: Vec<usize> = {
        let mut jobs: Vec<BucketJob<'_>> = Vec::with_capacity(nb);
        let (mut ra, mut rl, mut rw) = (&mut adj[..], &lrow[..], &mut wts[..]);
        let mut ri = &mut indptr[1..];
        for b in 0..nb {
            let len = bstart[b + 1] - bstart[b];
            let rows = first[b + 1] - first[b];
            let (a, ra2) = std::mem::take(&mut ra).split_at_mut(len);
            let (l, rl2) = rl.split_at(if packed { 0 } else { len });
            let (w, rw2) = std::mem::take(&mut rw).split_at_mut(if weighted { len } else { 0 });
            let (i, ri2) = std::mem::take(&mut ri).split_at_mut(rows);
            (ra, rl, rw, ri) = (ra2, rl2, rw2, ri2);
            jobs.push((b, a, l, w, i));
        }
        jobs.into_par_iter()
            .map_init(Scratch::default, |scratch, (_, a, l, w, deg)| {
                if radix && a.len() <= u32::MAX as usize {
                    return radix_rows(a, deg, colbits, scratch);
                }
                let packed = packed.then_some(colbits);
                bucket_rows(a, l, weighted.then_some(w), deg, packed, scratch)
            })
            .collect()
    };
    drop(lrow);

    // Pass 4: close the gaps between the buckets' kept edges, then the row pointers.
    let mut out = 0usize;
    let mut base = Vec::with_capacity(nb);
    for b in 0..nb {
        let s = bstart[b];
        if s != out {
            adj.copy_within(s..s + kept[b], out);
            if weighted {
                wts.copy_within(s..s + kept[b], out);
            }
        }
        base.push(out);
        out += kept[b];
    }
    {
        let mut ri = &mut indptr[1..];
        let mut jobs = Vec::with_capacity(nb);
        for (b, &start) in base.iter().enumerate() {
            let rows = first[b + 1] - first[b];
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
    }
    adj.truncate(out);
    adj.shrink_to_fit();
    let weights = weighted.then(|| {
        wts.truncate(out);
        wts.shrink_to_fit();
        wts
    });
    Ok(Built {
        indptr,
        adj,
        weights,
        self_loops,
    })
}

/// Per-thread scratch of pass 3.
#[derive(Default)]
struct Scratch {
    cnt: Vec<usize>,
    /// Counts of [`radix_rows`]'s column digit and rows.
    hist: Vec<u32>,
    rcnt: Vec<u32>,
    cols: Vec<u32>,
    /// A bitmap of columns for [`radix_rows`]'s long rows, all zero between rows.
    bits: Vec<u64>,
    wts: Vec<f64>,
    pairs: Vec<(u32, f64)>,
}

/// Makes `v` at least `len` long, zeroing only what it adds: the counting sorts write every
/// one of a bucket's `len` slots before they read it, so the scratch is not cleared per
/// bucket (a memset of the whole adjacency over a graph read, 1 % of it).
fn grow<T: Copy + Default>(v: &mut Vec<T>, len: usize) {
    if v.len() < len {
        v.resize(len, T::default());
    }
}

/// Rows at least this long are sorted and deduplicated by [`radix_rows`] through a bitmap
/// of their columns (when it is not too sparse: at most [`BITMAP_WORDS_PER_ENTRY`] words
/// to scan per entry), instead of by insertion.
const BITMAP_ROW_MIN: usize = 256;
/// See [`BITMAP_ROW_MIN`].
const BITMAP_WORDS_PER_ENTRY: usize = 1;
/// Bits of the column digit of [`radix_rows`]: 2^12 u32 counters (16 KiB) stay in L1.
const COL_DIGIT: u32 = 12;

/// [`bucket_rows`] for packed keys (`row << cb | column`, unweighted) of an unsorted file:
/// two stable counting sorts in cache, by the column's top [`COL_DIGIT`] bits and then by
/// row, leave every row ordered by its columns' top bits, so an insertion sort finishes
/// each row in about one pass (with a budget: a row that needs more moves is sorted by
/// `sort_unstable`), merging duplicates as it writes the row back. Cheaper than sorting
/// each row from scratch (most rows are short and random) and than a full radix sort.
/// A long row whose columns are dense (a hub's: as many entries as 64-column words in
/// its range) is instead set in a bitmap and read back in order, sorted and deduplicated
/// in one pass, with no moves (scale-20 Kronecker: pass 3 0.37 → 0.30 s with the u32
/// counters and the wider digit).
#[inline(never)]
fn radix_rows(adj: &mut [u32], deg: &mut [usize], cb: u32, s: &mut Scratch) -> usize {
    let rows = deg.len();
    let len = adj.len();
    let dshift = cb.saturating_sub(COL_DIGIT);
    let bins = 1usize << (cb - dshift);
    let mask = (1u32 << cb) - 1;
    // Counts: by column digit (s.hist), by row (s.rcnt, shifted by one for the prefix);
    // u32 counters (the caller sends buckets of 2^32 entries or more elsewhere), so that
    // the digit's stay in L1.
    s.hist.clear();
    s.hist.resize(bins, 0);
    s.rcnt.clear();
    s.rcnt.resize(rows + 1, 0);
    for &x in adj.iter() {
        s.hist[((x & mask) >> dshift) as usize] += 1;
        s.rcnt[(x >> cb) as usize + 1] += 1;
    }
    let mut at = 0u32;
    for c in s.hist.iter_mut() {
        let k = *c;
        *c = at;
        at += k;
    }
    for i in 0..rows {
        s.rcnt[i + 1] += s.rcnt[i];
    }
    // By column digit: adj -> cols (keys stay packed).
    grow(&mut s.cols, len);
    for &x in adj.iter() {
        let d = ((x & mask) >> dshift) as usize;
        let q = s.hist[d];
        s.cols[q as usize] = x;
        s.hist[d] = q + 1;
    }
    // By row: cols -> adj, unpacked; rcnt[i] becomes the end of row i.
    for &x in &s.cols[..len] {
        let r = (x >> cb) as usize;
        let q = s.rcnt[r];
        adj[q as usize] = x & mask;
        s.rcnt[r] = q + 1;
    }
    // Finish each row and merge its duplicates, compacting to the front of adj.
    let mut out = 0usize;
    let mut start = 0usize;
    for (i, d) in deg.iter_mut().enumerate() {
        let end = s.rcnt[i] as usize;
        let row_out = out;
        if end - start >= BITMAP_ROW_MIN {
            // The row's columns lie within its first and last entries' digits.
            let w0 = ((adj[start] >> dshift) << dshift) as usize >> 6;
            let w1 = ((((adj[end - 1] >> dshift) as usize + 1) << dshift) + 63) >> 6;
            if w1 - w0 <= BITMAP_WORDS_PER_ENTRY * (end - start) {
                let bits = &mut s.bits;
                if bits.len() < w1 {
                    bits.resize(w1, 0);
                }
                for &c in &adj[start..end] {
                    bits[c as usize >> 6] |= 1u64 << (c & 63);
                }

                // The set bits in order: the row sorted and deduplicated, written from
                // row_out (at or before start: the row has been read).
                for (w, x) in bits[w0..w1].iter_mut().enumerate() {
                    let mut v = std::mem::take(x);
                    let at = ((w0 + w) << 6) as u32;
                    // Four positions written whatever the word's count (no branch on it;
                    // the ones past it are overwritten or beyond the kept entries, and
                    // all stay within the row, which has been read), the rest one by one.
                    if out + 4 <= end {
                        let k = v.count_ones() as usize;
                        for slot in &mut adj[out..out + 4] {
                            *slot = at | v.trailing_zeros();
                            v &= v.wrapping_sub(1);
                        }
                        out += k.min(4);
                    }
                    while v != 0 {
                        adj[out] = at | v.trailing_zeros();
                        out += 1;
                        v &= v - 1;
                    }
                }
                *d = out - row_out;
                start = end;
                continue;
            }
        }
        out = finish_row(adj, start, end, out);
        *d = out - row_out;
        start = end;
    }
    out
}

/// Sorts and deduplicates the almost sorted row `adj[start..end]` into `adj[out..]`
/// (`out <= start`), by insertion with duplicates dropped as they meet, in one pass;
/// returns the new end of the output. A row that needs more than a few moves per entry is
/// finished by `sort_unstable` instead, so no input makes this quadratic.
#[inline]
fn finish_row(adj: &mut [u32], start: usize, end: usize, out: usize) -> usize {
    let first = out;
    if start == end {
        return out;
    }
    let adj = &mut adj[..end];
    let mut budget = 4 * (end - start) + 16;
    // The last two kept entries in registers (`below` is -1 while one is kept): an entry
    // above `below` goes at out - 1 or out, or is `last` again, without a branch (the
    // step of a sorted run, a duplicate of the last entry and a swap with it all take
    // the same path).
    let mut last = adj[start];
    let mut below = -1i64;
    adj[out] = last;
    let mut out = out + 1;
    for k in start + 1..end {
        // The output adj[first..out] is sorted and distinct, ends with `below` (when kept)
        // and `last`, and out <= k.
        let x = adj[k];
        if i64::from(x) > below {
            let (lo, hi) = (x.min(last), x.max(last));
            adj[out - 1] = lo;
            adj[out] = hi;
            let keep = x != last;
            out += usize::from(keep);
            below = if keep { i64::from(lo) } else { below };
            last = hi;
            continue;
        }
        // Where x goes: after every kept entry that is not greater.
        let mut j = out - 1;
        while j > first && adj[j - 1] > x {
            j -= 1;
        }
        if adj[j] == x || (j > first && adj[j - 1] == x) {
            continue;
        }
        budget = match budget.checked_sub(out - j) {
            Some(b) => b,
            None => {
                // The rest after the output, then all of it sorted and deduplicated.
                adj.copy_within(k..end, out);
                let all = &mut adj[first..out + end - k];
                all.sort_unstable();
                let mut kept = 0;
                for i in 0..all.len() {
                    if i == 0 || all[i] != all[kept - 1] {
                        all[kept] = all[i];
                        kept += 1;
                    }
                }
                return first + kept;
            }
        };
        adj.copy_within(j..out, j + 1);
        adj[j] = x;
        out += 1;
        last = adj[out - 1];
        below = i64::from(adj[out - 2]);
    }
    out
}

/// One bucket: `adj` / `lrow` / `w` hold its directed edges (column, row within the bucket,
/// weight) in any order; afterwards `adj[..kept]` (and `w[..kept]`) hold its rows sorted and
/// deduplicated (a merged edge keeps its largest weight), and `deg[i]` row `i`'s length.
/// Returns `kept`.
fn bucket_rows(
    adj: &mut [u32],
    lrow: &[u16],
    w: Option<&mut [f64]>,
    deg: &mut [usize],
    packed: Option<u32>,
    s: &mut Scratch,
) -> usize {
    let rows = deg.len();
    let len = adj.len();
    // Counting sort by row: cnt[i] = start of row i, advanced while filling.
    s.cnt.clear();
    s.cnt.resize(rows + 1, 0);
    match packed {
        Some(cb) => {
            for &x in adj.iter() {
                s.cnt[(x >> cb) as usize + 1] += 1;
            }
        }
        None => {
            for &r in lrow {
                s.cnt[r as usize + 1] += 1;
            }
        }
    }
    for i in 0..rows {
        s.cnt[i + 1] += s.cnt[i];
    }
    grow(&mut s.cols, len);
    match w {
        None => {
            match packed {
                Some(cb) => {
                    let mask = (1u32 << cb) - 1;
                    for &x in adj.iter() {
                        let r = (x >> cb) as usize;
                        let p = s.cnt[r];
                        s.cols[p] = x & mask;
                        s.cnt[r] = p + 1;
                    }
                }
                None => {
                    for (&r, &c) in lrow.iter().zip(adj.iter()) {
                        let p = s.cnt[r as usize];
                        s.cols[p] = c;
                        s.cnt[r as usize] = p + 1;
                    }
                }
            }
            // cnt[i] is now the end of row i.
            let mut out = 0usize;
            let mut start = 0usize;
            for (i, d) in deg.iter_mut().enumerate() {
                let end = s.cnt[i];
                let row = &mut s.cols[start..end];
                // Rows of (src, dst)-sorted files often come out sorted already.
                if !row.is_sorted() {
                    row.sort_unstable();
                }
                let row_out = out;
                if let Some((&first, rest)) = row.split_first() {
                    // Branch-free merge of equal neighbours (the row is sorted, and `out`
                    // never passes the row's read position in the bucket).
                    let dst = &mut adj[out..out + 1 + rest.len()];
                    dst[0] = first;
                    let mut k = 1;
                    let mut last = first;
                    for &c in rest {
                        dst[k] = c;
                        k += (c != last) as usize;
                        last = c;
                    }
                    out += k;
                }
                *d = out - row_out;
                start = end;
            }
            out
        }
        Some(w) => {
            grow(&mut s.wts, len);
            for ((&r, &c), &x) in lrow.iter().zip(adj.iter()).zip(w.iter()) {
                let p = s.cnt[r as usize];
                s.cols[p] = c;
                s.wts[p] = x;
                s.cnt[r as usize] = p + 1;
            }
            let mut out = 0usize;
            let mut start = 0usize;
            for (i, d) in deg.iter_mut().enumerate() {
                let end = s.cnt[i];
                s.pairs.clear();
                s.pairs.extend(
                    s.cols[start..end]
                        .iter()
                        .copied()
                        .zip(s.wts[start..end].iter().copied()),
                );
                // Stable, so that merged weights compare in input order.
                s.pairs.sort_by_key(|e| e.0);
                let row_out = out;
                for &(c, x) in &s.pairs {
                    if out > row_out && adj[out - 1] == c {
                        if x > w[out - 1] {
                            w[out - 1] = x;
                        }
                    } else {
                        adj[out] = c;
                        w[out] = x;
                        out += 1;
                    }
                }
                *d = out - row_out;
                start = end;
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows in every order the column-digit sort leaves (sorted runs, swaps, duplicates,
    /// deep disorder, reversed) come out sorted and distinct, written ahead of their start.
    #[test]
    fn finish_row_sorts_and_deduplicates() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..3000 {
            let len = (next() % 90) as usize;
            // Values near a rising base: the wider the window, the more disorder.
            let window = [1u64, 2, 4, 16, 300, 1 << 30][case % 6];
            let mut row: Vec<u32> = (0..len)
                .map(|i| ((3 * i as u64 + next() % window) % (1 << 31)) as u32)
                .collect();
            if case % 7 == 0 {
                row.reverse();
            }
            let gap = (next() % 5) as usize;
            let mut adj = vec![u32::MAX; gap + len];
            adj[gap..].copy_from_slice(&row);
            let out = finish_row(&mut adj, gap, gap + len, 0);
            let mut want = row.clone();
            want.sort_unstable();
            want.dedup();
            assert_eq!(&adj[..out], &want[..], "case {case}");
        }
    }

    /// The parse's counts (one chunk per part, no pass 1) give the CSR pass 1 gives, for a
    /// sorted and an unsorted input, renumbered or not; counts that do not add up are not
    /// used.
    #[test]
    fn parse_counts_build_the_same_csr() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
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

//! Keys `u << 32 | v` grouped into rows: the one sort of the distributed build and
//! orientation, done as the one-process CSR build does it (`graph::build`), in two passes
//! with no atomics and no sort of the keys.
//!
//! 1. **Buckets** (parallel over chunks of keys): the rows are cut into buckets of `2^shift`
//!    consecutive rows holding about [`BUCKET_KEYS`] keys on average; each chunk counts its
//!    keys per bucket, a prefix sum over (bucket, chunk) gives each chunk its own slice of
//!    each bucket, and the chunk writes its keys there: few sequential write streams.
//! 2. **Rows** (parallel over buckets): each bucket is counting-sorted by row into a
//!    per-thread scratch buffer that stays in the cache, every row is sorted (and its
//!    repeats dropped), and the rows are written compacted at the start of the bucket's
//!    range; then the buckets are closed up.

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Keys a bucket of rows holds on average: 2^19 (2 MiB of columns) sorts in L2 / L3.
const BUCKET_KEYS: usize = 1 << 19;
/// Keys per parallel chunk of pass 1 (at least).
const MIN_CHUNK: usize = 1 << 14;

/// What [`rows_of`] groups into rows: a key `u << 32 | v` (the edge from row `u` to `v`),
/// alone or with a weight.
pub(super) trait RowItem: bytemuck::Pod + Send + Sync {
    /// What a row holds of the item: its `v` (and weight).
    type Col: bytemuck::Pod + Send + Sync;
    fn key(&self) -> u64;
    fn col(&self) -> Self::Col;
    /// The `v` of a row's entry.
    fn id(c: &Self::Col) -> u32;
    /// A repeat of `into`'s edge merged into it.
    fn merge(into: &mut Self::Col, repeat: &Self::Col);
}

impl RowItem for u64 {
    type Col = u32;
    #[inline]
    fn key(&self) -> u64 {
        *self
    }
    #[inline]
    fn col(&self) -> u32 {
        *self as u32
    }
    #[inline]
    fn id(c: &u32) -> u32 {
        *c
    }
    #[inline]
    fn merge(_: &mut u32, _: &u32) {}
}

impl RowItem for Weighted {
    type Col = Weighted;
    #[inline]
    fn key(&self) -> u64 {
        self.key
    }
    #[inline]
    fn col(&self) -> Weighted {
        *self
    }
    #[inline]
    fn id(c: &Weighted) -> u32 {
        c.key as u32
    }
    /// The largest weight is kept, as the one-process build keeps it (its weights are
    /// finite, so the largest does not depend on the order).
    #[inline]
    fn merge(into: &mut Weighted, repeat: &Weighted) {
        if repeat.w > into.w {
            into.w = repeat.w;
        }
    }
}

/// Pass 2's work on one bucket: its index, its keys, where its rows go.
type Job<'a, K> = (usize, &'a [K], &'a mut [<K as RowItem>::Col]);

/// The keys `u << 32 | v` (`u` in `lo..hi`, any order; [`RowItem`]) as rows `lo..hi`: row
/// pointers (from 0) and each row's entries sorted by `v`, repeats merged when `dedup`. A
/// key outside the rows is an error (of the caller: the keys were routed to the wrong rank).
pub(super) fn rows_of<K: RowItem>(
    keys: &[K],
    lo: usize,
    hi: usize,
    dedup: bool,
) -> Result<(Vec<u64>, Vec<K::Col>)> {
    let rows = hi - lo;
    let len = keys.len();
    if let Some(k) = keys
        .par_iter()
        .map(|k| k.key())
        .find_any(|&k| !(lo..hi).contains(&((k >> 32) as usize)))
    {
        return Err(Error::backend(
            "dist",
            format!(
                "an edge of row {} reached the rank of rows {lo}..{hi}",
                k >> 32
            ),
        ));
    }
    if rows == 0 {
        return Ok((vec![0], Vec::new()));
    }
    // 2^shift rows per bucket, about BUCKET_KEYS keys each.
    let per_bucket = (rows as u128 * BUCKET_KEYS as u128 / len.max(1) as u128).max(1);
    let shift = per_bucket.ilog2().min(31);
    let nb = rows.div_ceil(1 << shift);
    let bucket = |k: &K| ((k.key() >> 32) as usize - lo) >> shift;

    // Pass 1: each chunk's keys counted per bucket, then written to its slice of each.
    let nchunks = (rayon::current_num_threads() * 4)
        .min(len.div_ceil(MIN_CHUNK))
        .max(1);
    let chunk_len = len.div_ceil(nchunks).max(1);
    let counts: Vec<Vec<usize>> = keys
        .par_chunks(chunk_len)
        .map(|ch| {
            let mut c = vec![0usize; nb];
            for k in ch {
                c[bucket(k)] += 1;
            }
            c
        })
        .collect();
    let mut sorted = crate::comm::zeroed::<K>(len, &format!("sorting {len} edges"))?;
    let mut bstart = vec![0usize; nb + 1];
    {
        let mut slices: Vec<Vec<&mut [K]>> =
            counts.iter().map(|_| Vec::with_capacity(nb)).collect();
        let mut rest: &mut [K] = &mut sorted;
        for b in 0..nb {
            let mut total = 0;
            for (c, s) in counts.iter().zip(slices.iter_mut()) {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(c[b]);
                s.push(head);
                rest = tail;
                total += c[b];
            }
            bstart[b + 1] = bstart[b] + total;
        }
        keys.par_chunks(chunk_len)
            .zip(slices)
            .for_each(|(ch, mut s)| {
                let mut at = vec![0usize; nb];
                for k in ch {
                    let b = bucket(k);
                    s[b][at[b]] = *k;
                    at[b] += 1;
                }
            });
    }
    drop(counts);

    // Pass 2: every bucket sorted by row in scratch, its rows written compacted.
    let mut adj = crate::comm::zeroed::<K::Col>(len, &format!("rows of {len} edges"))?;
    let jobs: Vec<Job<'_, K>> = {
        let mut out = Vec::with_capacity(nb);
        let mut rest: &mut [K::Col] = &mut adj;
        for b in 0..nb {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(bstart[b + 1] - bstart[b]);
            out.push((b, &sorted[bstart[b]..bstart[b + 1]], head));
            rest = tail;
        }
        out
    };
    let lens: Vec<Vec<u32>> = jobs
        .into_par_iter()
        .map_init(
            || (Vec::<usize>::new(), Vec::<K::Col>::new()),
            |(cursor, scratch), (b, src, dst)| {
                let r0 = b << shift;
                let nr = ((b + 1) << shift).min(rows) - r0;
                let base = lo + r0;
                // cursor[r]: where row r's next key goes (from its start), so that after
                // the placement it is where row r + 1 starts.
                cursor.clear();
                cursor.resize(nr + 1, 0);
                for k in src {
                    cursor[(k.key() >> 32) as usize - base + 1] += 1;
                }
                for r in 0..nr {
                    cursor[r + 1] += cursor[r];
                }
                scratch.clear();
                scratch.resize(src.len(), <K::Col as bytemuck::Zeroable>::zeroed());
                for k in src {
                    let r = (k.key() >> 32) as usize - base;
                    scratch[cursor[r]] = k.col();
                    cursor[r] += 1;
                }
                let mut lens = Vec::with_capacity(nr);
                let (mut start, mut out) = (0, 0);
                for &end in &cursor[..nr] {
                    let row = &mut scratch[start..end];
                    row.sort_unstable_by_key(K::id);
                    let mut l = row.len();
                    if dedup && l > 1 {
                        l = 1;
                        for i in 1..row.len() {
                            if K::id(&row[i]) != K::id(&row[l - 1]) {
                                row[l] = row[i];
                                l += 1;
                            } else {
                                let repeat = row[i];
                                K::merge(&mut row[l - 1], &repeat);
                            }
                        }
                    }
                    dst[out..out + l].copy_from_slice(&row[..l]);
                    out += l;
                    lens.push(l as u32);
                    start = end;
                }
                lens
            },
        )
        .collect();
    drop(sorted);
    let kept: Vec<usize> = lens
        .iter()
        .map(|l| l.iter().map(|&x| x as usize).sum())
        .collect();
    let mut ptr = vec![0u64; rows + 1];
    for (r, &l) in lens.iter().flatten().enumerate() {
        ptr[r + 1] = ptr[r] + l as u64;
    }
    let total = ptr[rows] as usize;
    if total == len {
        return Ok((ptr, adj));
    }
    // Close up the buckets.
    let mut out = crate::comm::zeroed::<K::Col>(total, &format!("rows of {total} edges"))?;
    {
        let mut pieces = Vec::with_capacity(nb);
        let mut rest: &mut [K::Col] = &mut out;
        for (b, &k) in kept.iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(k);
            pieces.push((&adj[bstart[b]..bstart[b] + k], head));
            rest = tail;
        }
        pieces
            .into_par_iter()
            .for_each(|(src, dst)| dst.copy_from_slice(src));
    }
    Ok((ptr, out))
}

/// A weighted edge `u << 32 | v` on its way to the rank of row `u`.
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub(super) struct Weighted {
    pub(super) key: u64,
    pub(super) w: f64,
}

/// [`rows_of`] for weighted keys: rows `lo..hi` of `edges`, each row's `v`s sorted with
/// their weights, a repeated edge merged into one keeping its largest weight (as the
/// one-process build merges them).
pub(super) fn weighted_rows(
    edges: Vec<Weighted>,
    lo: usize,
    hi: usize,
) -> Result<(Vec<u64>, Vec<u32>, Vec<f64>)> {
    let (ptr, rows) = rows_of(&edges, lo, hi, true)?;
    drop(edges);
    let adj = rows.par_iter().map(|e| e.key as u32).collect();
    let w = rows.par_iter().map(|e| e.w).collect();
    Ok((ptr, adj, w))
}

#[cfg(test)]
mod tests {
    use super::rows_of;

    /// Rows against a sort of the keys, with repeats, empty rows and buckets of many rows.
    #[test]
    fn rows_match_a_sort() {
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for (lo, hi, len) in [
            (0, 1, 5),
            (3, 10, 0),
            (5, 2000, 30_000),
            (0, 100_000, 1_500_000),
        ] {
            let keys: Vec<u64> = (0..len)
                .map(|_| {
                    let u = lo + (next() % (hi - lo) as u64) as usize;
                    // Few distinct columns, so that rows repeat.
                    ((u as u64) << 32) | (next() % 50)
                })
                .collect();
            for dedup in [false, true] {
                let (ptr, adj) = rows_of(&keys, lo, hi, dedup).unwrap();
                let mut want = keys.clone();
                want.sort_unstable();
                if dedup {
                    want.dedup();
                }
                let mut got = Vec::new();
                for r in 0..hi - lo {
                    for &v in &adj[ptr[r] as usize..ptr[r + 1] as usize] {
                        got.push(((lo + r) as u64) << 32 | v as u64);
                    }
                }
                assert_eq!(ptr.len(), hi - lo + 1);
                assert_eq!(got, want, "rows {lo}..{hi}, {len} keys, dedup {dedup}");
            }
        }
        assert!(rows_of(&[7u64 << 32], 0, 5, true).is_err());
    }

    /// Weighted rows against a sort: repeats keep their largest weight.
    #[test]
    fn weighted_rows_keep_the_largest_weight() {
        use super::{weighted_rows, Weighted};
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
        let (lo, hi) = (10usize, 3000usize);
        let edges: Vec<Weighted> = (0..40_000)
            .map(|_| Weighted {
                key: ((lo as u64 + next() % (hi - lo) as u64) << 32) | (next() % 20),
                w: (next() % 1000) as f64 / 7.0 - 30.0,
            })
            .collect();
        let mut want: std::collections::BTreeMap<u64, f64> = Default::default();
        for e in &edges {
            let x = want.entry(e.key).or_insert(e.w);
            *x = x.max(e.w);
        }
        let (ptr, adj, w) = weighted_rows(edges, lo, hi).unwrap();
        let mut got = Vec::new();
        for r in 0..hi - lo {
            for t in ptr[r] as usize..ptr[r + 1] as usize {
                got.push((((lo + r) as u64) << 32 | adj[t] as u64, w[t]));
            }
        }
        assert_eq!(got, want.into_iter().collect::<Vec<_>>());
        let stray = Weighted {
            key: 7u64 << 32,
            w: 1.0,
        };
        assert!(weighted_rows(vec![stray], 0, 5).is_err());
    }
}

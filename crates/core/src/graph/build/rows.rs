//! Pass 3 of the build, one bucket at a time in a per-thread scratch: sort, deduplicate and
//! compact each row (a counting sort by row, or for packed keys of an unsorted input a sort
//! by the column's top bits first, [`radix_rows`]).

/// Per-thread scratch of pass 3.
#[derive(Default)]
pub(super) struct Scratch {
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
/// bucket (which would be a memset of the whole adjacency over a graph read).
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
/// in one pass, with no moves.
#[inline(never)]
pub(super) fn radix_rows(adj: &mut [u32], deg: &mut [usize], cb: u32, s: &mut Scratch) -> usize {
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
pub(super) fn bucket_rows(
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
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
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
}

//! [`DenseIds`]: the renumbering of a set of integer ids to `0..k` in increasing order, as a
//! bitmap with per-word ranks (16 bytes per 64 ids, so the table of a graph with a few
//! million ids stays in cache during the build).

use rayon::prelude::*;

/// The ids whose bits are set, numbered `0..len()` in increasing order: a monotone map, so
/// a range of ids maps to a range of numbers.
#[derive(Debug, Clone)]
pub(crate) struct DenseIds {
    /// Per 64 ids: the bitmap word, and the number of ids set before it.
    table: Vec<(u64, u32)>,
    len: usize,
}

impl DenseIds {
    /// From a bitmap (bit `i % 64` of word `i / 64` set when id `i` is kept). At most
    /// 2^32 - 1 ids may be set (the callers' ids are below 2^32 - 1).
    pub(crate) fn new(words: Vec<u64>) -> Self {
        let mut count = 0u64;
        let table = words
            .into_iter()
            .map(|w| {
                let r = count as u32;
                count += u64::from(w.count_ones());
                (w, r)
            })
            .collect();
        Self {
            table,
            len: count as usize,
        }
    }

    /// The bitmap it was made from ([`DenseIds::new`]).
    pub(crate) fn words(&self) -> Vec<u64> {
        self.table.iter().map(|&(w, _)| w).collect()
    }

    /// Number of ids kept.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when no id is kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ids covered: `0..raw_len()` (a multiple of 64).
    pub(crate) fn raw_len(&self) -> usize {
        self.table.len() * 64
    }

    /// The number of `id`: how many kept ids are below it (its number when it is kept).
    /// `id` must be below [`DenseIds::raw_len`].
    #[inline(always)]
    pub(crate) fn get(&self, id: u32) -> u32 {
        let (w, r) = self.table[(id >> 6) as usize];
        r + (w & ((1u64 << (id & 63)) - 1)).count_ones()
    }

    /// The kept id numbered `k` (`k < len()`): the inverse of [`DenseIds::get`].
    pub(crate) fn id_of(&self, k: usize) -> u64 {
        // The last word with at most k ids before it holds id number k.
        let w = self.table.partition_point(|&(_, r)| r as usize <= k) - 1;
        let (mut word, r) = self.table[w];
        for _ in 0..k - r as usize {
            word &= word - 1;
        }
        ((w as u64) << 6) | u64::from(word.trailing_zeros())
    }

    /// The kept ids, in increasing order, mapped by `f` (in parallel).
    pub(crate) fn map_ids<T: Send>(&self, f: impl Fn(u64) -> T + Sync + Send) -> Vec<T> {
        self.table
            .par_iter()
            .enumerate()
            .flat_map_iter(|(k, &(word, _))| {
                let mut word = word;
                let f = &f;
                std::iter::from_fn(move || {
                    (word != 0).then(|| {
                        let b = u64::from(word.trailing_zeros());
                        word &= word - 1;
                        f(((k as u64) << 6) | b)
                    })
                })
            })
            .collect()
    }
}

/// The label of an original integer id: its decimal text.
pub(crate) fn id_label(v: u64) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_the_kept_ids_in_order() {
        let kept = [0u32, 3, 63, 64, 65, 200, 1000];
        let mut words = vec![0u64; 1000 / 64 + 1];
        for &i in &kept {
            words[(i / 64) as usize] |= 1 << (i % 64);
        }
        let d = DenseIds::new(words);
        assert_eq!(d.len(), kept.len());
        assert_eq!(d.raw_len(), 1024);
        for (k, &i) in kept.iter().enumerate() {
            assert_eq!(d.get(i), k as u32);
        }
        // Ids not kept: the number of kept ids below them.
        assert_eq!(d.get(1), 1);
        assert_eq!(d.get(66), 5);
        assert_eq!(d.get(1023), 7);
        assert_eq!(d.map_ids(|i| i as u32), kept.to_vec());
        for (k, &i) in kept.iter().enumerate() {
            assert_eq!(d.id_of(k), u64::from(i));
        }
        assert_eq!(id_label(0), "0");
        assert_eq!(id_label(u64::MAX), u64::MAX.to_string());
    }
}

//! A [`Graph`] as one buffer of bytes and back: the form in which the first rank of a host
//! passes the network it read to that host's other ranks (`dist::graph::share_on_host`,
//! through one shared-memory window per host), so that a host reads its input once.
//!
//! Layout: a header of `u64` words (a tag, the sizes, the kind of labels, the build's
//! counts), then the sections, each starting at a multiple of 8 bytes: `indptr` (`u64`),
//! the adjacency (`u32`), the weights (`f64`), the labels (names as offsets and bytes, or
//! the bitmap words of a renumbered file's ids) and the notes (offsets and bytes). The
//! large sections are copied by all threads.

use rayon::prelude::*;

use super::{Adjacency, BuildStats, DenseIds, Graph, Labels};
use crate::error::{Error, Result};

/// The first word: what the buffer holds, and the layout's version.
const TAG: u64 = u64::from_le_bytes(*b"TRGRAPH1");
/// Header words.
const HEADER: usize = 14;
/// The kind of labels, in the header.
const NONE: u64 = 0;
const NAMES: u64 = 1;
const IDS: u64 = 2;
const ONE_BASED: u64 = 3;

/// `n` rounded up to a multiple of 8.
pub(crate) fn up8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

pub(crate) use crate::alloc::par_copy;

/// Strings as `u64` offsets (`len + 1`) and their bytes.
fn strings_len(s: &[String]) -> usize {
    8 * (s.len() + 1) + up8(s.iter().map(String::len).sum())
}

impl Graph {
    /// The number of bytes of [`Graph::write_bytes`].
    pub(crate) fn bytes_len(&self) -> usize {
        let n = self.num_nodes();
        let nnz = self.adj.len();
        let labels = match &self.labels {
            Labels::None | Labels::OneBased { .. } => 0,
            Labels::Names(l) => strings_len(l),
            Labels::Ids { ids, .. } => 8 * ids.words().len(),
        };
        8 * HEADER
            + 8 * (n + 1)
            + up8(4 * nnz)
            + self.weights.as_ref().map_or(0, |w| 8 * w.len())
            + labels
            + strings_len(&self.notes)
    }

    /// The graph into `out`, of [`Graph::bytes_len`] bytes.
    pub(crate) fn write_bytes(&self, out: &mut [u8]) {
        assert_eq!(out.len(), self.bytes_len(), "the graph's byte length");
        let s = &self.stats;
        let (kind, words) = match &self.labels {
            Labels::None => (NONE, 0),
            Labels::Names(l) => (NAMES, l.len()),
            Labels::Ids { ids, .. } => (IDS, ids.words().len()),
            Labels::OneBased { .. } => (ONE_BASED, 0),
        };
        let header: [u64; HEADER] = [
            TAG,
            self.num_nodes() as u64,
            self.adj.len() as u64,
            u64::from(self.weights.is_some()),
            kind,
            words as u64,
            self.notes.len() as u64,
            self.self_loops_dropped as u64,
            s.entries as u64,
            s.self_loops as u64,
            s.duplicates as u64,
            s.edges as u64,
            s.isolated_nodes as u64,
            s.absent_ids,
        ];
        let (head, rest) = out.split_at_mut(8 * HEADER);
        head.copy_from_slice(bytemuck::cast_slice(&header));
        let mut w = Writer { out: rest };
        // usize is u64 on the 64-bit targets Trident builds for (checked when compiled).
        const _: () = assert!(std::mem::size_of::<usize>() == 8);
        w.put(bytemuck::cast_slice(&self.indptr));
        w.put(bytemuck::cast_slice(&self.adj));
        if let Some(wt) = &self.weights {
            w.put(bytemuck::cast_slice(wt));
        }
        match &self.labels {
            Labels::Names(l) => w.strings(l),
            Labels::Ids { ids, .. } => w.put(bytemuck::cast_slice(&ids.words())),
            Labels::None | Labels::OneBased { .. } => {}
        }
        w.strings(&self.notes);
        debug_assert!(w.out.is_empty());
    }

    /// The graph that [`Graph::write_bytes`] wrote into `b`. Bytes of another shape (cut
    /// short, sizes that do not add up, offsets out of order) are an error, not a panic.
    pub(crate) fn from_bytes(b: &[u8]) -> Result<Graph> {
        let bad = |what: &str| Error::invalid("graph bytes", what.to_string());
        if b.len() < 8 * HEADER {
            return Err(bad("shorter than the header"));
        }
        let mut h = [0u64; HEADER];
        bytemuck::cast_slice_mut::<u64, u8>(&mut h).copy_from_slice(&b[..8 * HEADER]);
        if h[0] != TAG {
            return Err(bad("not a graph's bytes"));
        }
        let as_usize = |x: u64| usize::try_from(x).map_err(|_| bad("a size beyond memory"));
        let (n, nnz, kind, words, notes) = (
            as_usize(h[1])?,
            as_usize(h[2])?,
            h[4],
            as_usize(h[5])?,
            as_usize(h[6])?,
        );
        let mut r = Reader {
            b: &b[8 * HEADER..],
            bad: &bad,
        };
        let indptr: Vec<usize> = r
            .take::<u64>(
                n.checked_add(1)
                    .ok_or_else(|| bad("a size beyond memory"))?,
            )?
            .into_par_iter()
            .map(|x| x as usize)
            .collect();
        let adj = r.take::<u32>(nnz)?;
        let weights = if h[3] != 0 {
            Some(r.take::<f64>(nnz)?)
        } else {
            None
        };
        if !adjacency_ok(&indptr, &adj, n) {
            return Err(bad("an adjacency out of shape"));
        }
        let labels = match kind {
            NONE => Labels::None,
            NAMES if words == n => Labels::Names(r.strings(words)?),
            IDS => {
                let ids = DenseIds::new(r.take::<u64>(words)?);
                if ids.len() != n {
                    return Err(bad("ids for another number of nodes"));
                }
                Labels::Ids {
                    ids,
                    names: Default::default(),
                }
            }
            ONE_BASED => Labels::OneBased {
                n,
                names: Default::default(),
            },
            _ => return Err(bad("labels of an unknown kind")),
        };
        let notes = r.strings(notes)?;
        if !r.b.is_empty() {
            return Err(bad("bytes after the graph"));
        }
        Ok(Graph {
            indptr,
            adj,
            weights,
            labels,
            self_loops_dropped: as_usize(h[7])?,
            stats: BuildStats {
                entries: as_usize(h[8])?,
                self_loops: as_usize(h[9])?,
                duplicates: as_usize(h[10])?,
                edges: as_usize(h[11])?,
                isolated_nodes: as_usize(h[12])?,
                absent_ids: h[13],
            },
            notes,
        })
    }
}

/// The adjacency inside bytes that [`Graph::write_bytes`] wrote, read in place (no copy):
/// `Ok(None)` where the bytes are not aligned for it (the caller copies them out with
/// [`Graph::from_bytes`] instead); an error for bytes of another shape, checked as
/// [`Graph::from_bytes`] checks the header, the row pointers and the neighbours (the labels and
/// notes after them are not read).
pub(crate) fn adjacency_in(b: &[u8]) -> Result<Option<Adjacency<'_>>> {
    let bad = |what: &str| Error::invalid("graph bytes", what.to_string());
    if b.len() < 8 * HEADER {
        return Err(bad("shorter than the header"));
    }
    let Ok(h) = bytemuck::try_cast_slice::<u8, u64>(&b[..8 * HEADER]) else {
        return Ok(None);
    };
    if h[0] != TAG {
        return Err(bad("not a graph's bytes"));
    }
    let as_usize = |x: u64| usize::try_from(x).map_err(|_| bad("a size beyond memory"));
    let (n, nnz) = (as_usize(h[1])?, as_usize(h[2])?);
    let mut rest = &b[8 * HEADER..];
    // The next section of `len` values of `T`, in place.
    let mut take = |len: usize, size: usize| -> Result<&[u8]> {
        let bytes = len
            .checked_mul(size)
            .filter(|&x| up8(x) <= rest.len())
            .ok_or_else(|| bad("cut short"))?;
        let (section, after) = rest.split_at(up8(bytes));
        rest = after;
        Ok(&section[..bytes])
    };
    let indptr = take(
        n.checked_add(1)
            .ok_or_else(|| bad("a size beyond memory"))?,
        8,
    )?;
    let adj = take(nnz, 4)?;
    let weights = if h[3] != 0 { Some(take(nnz, 8)?) } else { None };
    let (Ok(indptr), Ok(adj)) = (
        bytemuck::try_cast_slice::<u8, usize>(indptr),
        bytemuck::try_cast_slice::<u8, u32>(adj),
    ) else {
        return Ok(None);
    };
    let weights = match weights.map(bytemuck::try_cast_slice::<u8, f64>) {
        Some(Err(_)) => return Ok(None),
        w => w.map(|w| w.expect("checked")),
    };
    if !adjacency_ok(indptr, adj, n) {
        return Err(bad("an adjacency out of shape"));
    }
    Ok(Some(Adjacency {
        indptr,
        adj,
        weights,
    }))
}

/// Whether row pointers and neighbours make an adjacency of `n` nodes: pointers from 0 to
/// the neighbours' count, never decreasing, every neighbour below `n` (checked by all
/// threads).
fn adjacency_ok(indptr: &[usize], adj: &[u32], n: usize) -> bool {
    indptr.first() == Some(&0)
        && indptr.last() == Some(&adj.len())
        && indptr.par_windows(2).all(|w| w[0] <= w[1])
        && adj.par_iter().all(|&v| (v as usize) < n)
}

/// The sections written one after another, each padded to a multiple of 8 bytes.
pub(crate) struct Writer<'a> {
    pub(crate) out: &'a mut [u8],
}

impl Writer<'_> {
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let out = std::mem::take(&mut self.out);
        let (head, rest) = out.split_at_mut(up8(bytes.len()));
        let (data, pad) = head.split_at_mut(bytes.len());
        par_copy(data, bytes);
        pad.fill(0);
        self.out = rest;
    }

    fn strings(&mut self, s: &[String]) {
        let mut offsets = Vec::with_capacity(s.len() + 1);
        let mut at = 0u64;
        offsets.push(0);
        for x in s {
            at += x.len() as u64;
            offsets.push(at);
        }
        self.put(bytemuck::cast_slice(&offsets));
        let text: Vec<u8> = s.iter().flat_map(|x| x.bytes()).collect();
        self.put(&text);
    }
}

/// The sections read back, each checked against what is left.
pub(crate) struct Reader<'a, F> {
    pub(crate) b: &'a [u8],
    pub(crate) bad: &'a F,
}

impl<F: Fn(&str) -> Error> Reader<'_, F> {
    /// The next section: `len` values of `T`, copied by all threads.
    pub(crate) fn take<T: bytemuck::Pod + Send + num_traits::Zero>(
        &mut self,
        len: usize,
    ) -> Result<Vec<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&x| up8(x) <= self.b.len())
            .ok_or_else(|| (self.bad)("cut short"))?;
        // Zeroed by the allocator (fresh pages, no pass over them): the copy touches them
        // first.
        let mut v: Vec<T> =
            crate::alloc::try_zeroed_vec(len, || format!("{len} values of a shared graph"))?;
        par_copy(bytemuck::cast_slice_mut(&mut v), &self.b[..bytes]);
        self.b = &self.b[up8(bytes)..];
        Ok(v)
    }

    fn strings(&mut self, count: usize) -> Result<Vec<String>> {
        let offsets = self.take::<u64>(
            count
                .checked_add(1)
                .ok_or_else(|| (self.bad)("cut short"))?,
        )?;
        let total =
            usize::try_from(*offsets.last().unwrap_or(&0)).map_err(|_| (self.bad)("cut short"))?;
        let text = self.take::<u8>(total)?;
        let mut out = Vec::with_capacity(count);
        for w in offsets.windows(2) {
            let (a, e) = (w[0] as usize, w[1] as usize);
            let s = text
                .get(a..e)
                .filter(|_| a <= e)
                .ok_or_else(|| (self.bad)("string offsets out of order"))?;
            out.push(
                String::from_utf8(s.to_vec()).map_err(|_| (self.bad)("a string not in UTF-8"))?,
            );
        }
        if offsets.first().is_some_and(|&f| f != 0) {
            return Err((self.bad)("string offsets out of order"));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(g: &Graph) -> Graph {
        let mut b = vec![0xA5u8; g.bytes_len()];
        g.write_bytes(&mut b);
        Graph::from_bytes(&b).expect("the graph's own bytes")
    }

    fn same(a: &Graph, b: &Graph) {
        assert_eq!(a, b);
        assert_eq!(a.build_stats(), b.build_stats());
        assert_eq!(a.notes(), b.notes());
        assert_eq!(a.labels(), b.labels());
    }

    #[test]
    fn every_kind_of_graph_comes_back_as_it_was() {
        let plain = Graph::from_edges(5, [(0, 1), (1, 2), (3, 4), (0, 1), (2, 2), (4, 4)]).unwrap();
        assert_eq!(plain.self_loops_dropped(), 2);
        let weighted = Graph::from_weighted_edges(4, [(0, 1, 0.5), (2, 3, 2.25), (1, 2, 1.0)])
            .unwrap()
            .with_labels(vec!["a".into(), "β".into(), "".into(), "long label".into()])
            .unwrap()
            .with_notes(vec!["a note".into(), "another, ünïcode".into()]);
        let one_based = Graph::from_edges(3, [(0, 2)])
            .unwrap()
            .with_one_based_labels();
        // Sparse ids: labels are the kept ids (1, 5, 64, 200).
        let mut words = vec![0u64; 4];
        for id in [1u32, 5, 64, 200] {
            words[(id / 64) as usize] |= 1 << (id % 64);
        }
        let ids = Graph::from_edges(4, [(0, 1), (2, 3), (1, 3)])
            .unwrap()
            .with_id_labels(DenseIds::new(words))
            .unwrap();
        let empty = Graph::from_edges(0, []).unwrap();
        for g in [plain, weighted, one_based, ids, empty] {
            let back = round_trip(&g);
            same(&g, &back);
        }
    }

    #[test]
    fn the_adjacency_is_read_in_place() {
        let weighted = Graph::from_weighted_edges(5, [(0, 1, 0.5), (2, 3, 2.25), (1, 4, 1.0)])
            .unwrap()
            .with_labels((0..5).map(|i| format!("n{i}")).collect())
            .unwrap();
        let plain = Graph::from_edges(6, [(0, 5), (1, 2), (2, 3), (0, 3)]).unwrap();
        let empty = Graph::from_edges(0, []).unwrap();
        for g in [weighted, plain, empty] {
            // u64 words: aligned for every section.
            let mut words = vec![0u64; g.bytes_len() / 8];
            let b: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
            g.write_bytes(b);
            let a = adjacency_in(b).unwrap().expect("aligned");
            let want = g.as_adjacency();
            assert_eq!(a.indptr, want.indptr);
            assert_eq!(a.adj, want.adj);
            assert_eq!(a.weights, want.weights);
            // One byte off: not aligned, so no view (the caller copies).
            let mut shifted = vec![0u8; b.len() + 1];
            shifted[1..].copy_from_slice(b);
            assert!(adjacency_in(&shifted[1..]).unwrap().is_none());
        }
        // Every cut is refused or unaligned, never a panic; a neighbour out of range is
        // refused.
        let g = Graph::from_edges(3, [(0, 1), (1, 2)]).unwrap();
        let mut words = vec![0u64; g.bytes_len() / 8];
        let b: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        g.write_bytes(b);
        for cut in 0..8 * HEADER + 8 * 4 + 4 * 4 {
            assert!(
                !matches!(adjacency_in(&b[..cut]), Ok(Some(_))),
                "cut at {cut}"
            );
        }
        let adj_at = 8 * HEADER + 8 * 4;
        b[adj_at..adj_at + 4].copy_from_slice(&7u32.to_le_bytes());
        assert!(adjacency_in(b).is_err());
        b[0] ^= 1;
        assert!(adjacency_in(b).is_err());
    }

    #[test]
    fn bytes_of_another_shape_are_refused() {
        let g = Graph::from_weighted_edges(3, [(0, 1, 1.0), (1, 2, 2.0)])
            .unwrap()
            .with_labels(vec!["x".into(), "y".into(), "z".into()])
            .unwrap();
        let mut b = vec![0u8; g.bytes_len()];
        g.write_bytes(&mut b);
        // Every cut, and every single-byte change of the header and sections, is either
        // refused or gives a graph (never a panic).
        for cut in 0..b.len() {
            assert!(Graph::from_bytes(&b[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..b.len() {
            let mut c = b.clone();
            c[at] ^= 0xFF;
            let _ = Graph::from_bytes(&c);
        }
        let mut long = b.clone();
        long.extend_from_slice(&[0; 8]);
        assert!(Graph::from_bytes(&long).is_err());
        // A neighbour out of range.
        let mut c = b.clone();
        let adj_at = 8 * HEADER + 8 * 4;
        c[adj_at..adj_at + 4].copy_from_slice(&7u32.to_le_bytes());
        assert!(Graph::from_bytes(&c).is_err());
    }
}

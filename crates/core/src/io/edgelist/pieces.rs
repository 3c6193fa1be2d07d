//! The parallel parse of a whole buffer: cut into pieces at line breaks, each piece parsed
//! into its own slots of one allocation, then the ids numbered (as given, or compacted).

use super::*;

/// Size of the pieces the input is parsed in (in parallel): at least this, and a few per
/// thread.
pub(super) const CHUNK: usize = 1 << 20;

/// The pieces of `buf` for the parallel parse, each ending just after a line break (the
/// last at the end of the input): a few per thread, at least [`CHUNK`] bytes, or about
/// `chunk` bytes when given. Where the pieces fall never changes the result (they are
/// joined in order).
pub(crate) fn pieces(buf: &[u8], chunk: Option<usize>) -> Vec<(usize, usize)> {
    let threads = rayon::current_num_threads().max(1);
    let target = chunk
        .unwrap_or_else(|| (buf.len() / (threads * 4)).max(CHUNK))
        .max(1);
    let mut out = Vec::with_capacity(buf.len() / target + 1);
    let mut at = 0usize;
    while at < buf.len() {
        let want = at.saturating_add(target);
        let end = if want >= buf.len() {
            buf.len()
        } else {
            memchr::memchr(b'\n', &buf[want..]).map_or(buf.len(), |k| want + k + 1)
        };
        out.push((at, end));
        at = end;
    }
    out
}

/// Runs the numeric parser over the whole input: the lines of each piece are counted (in
/// parallel), every piece gets that many slots of one zeroed allocation per array, then
/// the pieces are parsed in parallel, each into its own slots (no per-piece buffers, no
/// joining copy; the unused slots of a piece, for comment lines and self-loops, stay as
/// gaps that [`Raw::parts`] skips). The first piece that fails decides, as a sequential
/// parse would. `skip`: lines before `buf` in the file, for error line numbers.
pub(super) fn parse_numeric<I: RawId + Send + Sync>(
    buf: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    strict: bool,
    skip: usize,
    chunk: Option<usize>,
) -> Result<Outcome<I>> {
    parse_numeric_with(
        buf,
        name,
        opts,
        strict,
        skip,
        chunk,
        Weights::decide(buf, opts),
    )
}

/// [`parse_numeric`] with the weight column decided by the caller (a byte range of a file,
/// from the file's first data line).
pub(super) fn parse_numeric_with<I: RawId + Send + Sync>(
    buf: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    strict: bool,
    skip: usize,
    chunk: Option<usize>,
    ws: Weights,
) -> Result<Outcome<I>> {
    let weighted = ws.weighted();
    let pieces = pieces(buf, chunk);
    // Lines per piece (a line holds at most one edge); the last line may lack its '\n'.
    let lines: Vec<usize> = pieces
        .par_iter()
        .map(|&(a, b)| {
            let p = &buf[a..b];
            memchr::memchr_iter(b'\n', p).count() + usize::from(p.last() != Some(&b'\n'))
        })
        .collect();
    let total: usize = lines.iter().sum();
    let too_large = |e: alloc::AllocError| perr(name, None, K::TooLarge, e.to_string());
    let what = || format!("parsing {total} edge lines");
    let mut src = alloc::try_zeroed_vec::<I>(total, what).map_err(too_large)?;
    let mut dst = alloc::try_zeroed_vec::<I>(total, what).map_err(too_large)?;
    let mut wts = if weighted {
        alloc::try_zeroed_vec::<f64>(total, what).map_err(too_large)?
    } else {
        Vec::new()
    };
    let mut slots: Vec<Slots<'_, I>> = Vec::with_capacity(pieces.len());
    {
        let (mut rs, mut rd, mut rw) = (&mut src[..], &mut dst[..], &mut wts[..]);
        for &l in &lines {
            let (s, rs2) = std::mem::take(&mut rs).split_at_mut(l);
            let (d, rd2) = std::mem::take(&mut rd).split_at_mut(l);
            let (w, rw2) = std::mem::take(&mut rw).split_at_mut(if weighted { l } else { 0 });
            (rs, rd, rw) = (rs2, rd2, rw2);
            slots.push((s, d, w));
        }
    }
    let parsed: Vec<Result<std::result::Result<PieceOut<I>, Abort>>> = pieces
        .par_iter()
        .zip(slots)
        .map(|(&(a, b), slots)| {
            let mut p = NumParser::<I>::new(name, opts, strict, slots);
            p.ws = ws;
            Ok(p.parse(&buf[a..b])?.map(|()| p.finish()))
        })
        .collect();
    let mut outs = Vec::with_capacity(parsed.len());
    let mut start = 0usize;
    for (k, r) in parsed.into_iter().enumerate() {
        match r {
            Ok(Ok(o)) => outs.push((start, o)),
            Ok(Err(a)) => return Ok(a.into()),
            Err(crate::Error::Parse(mut e)) => {
                // Line numbers within the piece: add the lines before it.
                if let Some(l) = e.line.as_mut() {
                    *l += skip + memchr::memchr_iter(b'\n', &buf[..pieces[k].0]).count();
                }
                return Err(crate::Error::Parse(e));
            }
            Err(e) => return Err(e),
        }
        start += lines[k];
    }
    match Raw::assemble(src, dst, weighted.then_some(wts), outs) {
        Some(raw) => Ok(Outcome::Done(raw)),
        None => Err(perr(name, None, K::Empty, "no edges in the file")),
    }
}

impl<I: RawId> Raw<I> {
    /// The parse of pieces whose slots start at `outs[k].0` in the arrays; `None` when no
    /// piece has an edge or a self-loop.
    pub(super) fn assemble(
        src: Vec<I>,
        dst: Vec<I>,
        weights: Option<Vec<f64>>,
        mut outs: Vec<(usize, PieceOut<I>)>,
    ) -> Option<Self> {
        if !outs.iter().any(|(_, o)| o.any) {
            return None;
        }
        let mut loop_ids = Vec::new();
        for (_, o) in &mut outs {
            loop_ids.append(&mut o.loop_ids);
        }
        // One bitmap: every piece's, or-ed together (the longest one taken as the base).
        let mut marks: Option<Vec<u64>> = None;
        if outs.iter().all(|(_, o)| o.marks.is_some()) {
            let mut all: Vec<Vec<u64>> = outs
                .iter_mut()
                .filter_map(|(_, o)| o.marks.take())
                .collect();
            all.sort_by_key(|b| std::cmp::Reverse(b.len()));
            let mut it = all.into_iter();
            if let Some(mut base) = it.next() {
                for b in it {
                    for (x, y) in base.iter_mut().zip(&b) {
                        *x |= y;
                    }
                }
                marks = Some(base);
            }
        }
        let counts = outs
            .iter_mut()
            .map(|(_, o)| o.counts.take())
            .collect::<Option<Vec<_>>>();
        Some(Raw {
            src,
            dst,
            weights,
            parts: outs.iter().map(|(s, o)| (*s, s + o.len)).collect(),
            loop_ids,
            self_loops: outs.iter().map(|(_, o)| o.self_loops).sum(),
            max: outs.iter().map(|(_, o)| o.max).max(),
            marks,
            counts,
        })
    }

    /// Number of edges.
    pub(super) fn len(&self) -> usize {
        self.parts.iter().map(|&(a, b)| b - a).sum()
    }

    /// Closes the gaps between the parts (one memmove per part, in order), so that the
    /// edges are `src[..len]` / `dst[..len]`.
    pub(super) fn close_gaps(&mut self) {
        let mut out = 0usize;
        for &(a, b) in &self.parts {
            if a != out {
                self.src.copy_within(a..b, out);
                self.dst.copy_within(a..b, out);
                if let Some(w) = self.weights.as_mut() {
                    w.copy_within(a..b, out);
                }
            }
            out += b - a;
        }
        self.src.truncate(out);
        self.dst.truncate(out);
        if let Some(w) = self.weights.as_mut() {
            w.truncate(out);
        }
        self.parts = vec![(0, out)];
    }

    /// The edges of every part, for parallel passes: `(sources, targets)` per part.
    pub(super) fn part_slices(&self) -> impl Iterator<Item = &[I]> {
        self.parts
            .iter()
            .flat_map(|&(a, b)| [&self.src[a..b], &self.dst[a..b]])
    }
}

/// Ids per parallel task when numbering.
pub(super) const ID_CHUNK: usize = 1 << 16;

/// Numeric mode: ids as given.
pub(super) fn numeric_as_given(raw: Raw<u32>, name: &str) -> Result<Parsed> {
    let n = raw.max.map_or(0, |m| m as usize + 1);
    if u32::try_from(n).is_err() {
        return Err(perr(
            name,
            None,
            K::IndexOutOfRange,
            "node ids exceed 32 bits",
        ));
    }
    Ok(Parsed::Dense {
        raw,
        n,
        map: None,
        notes: Vec::new(),
    })
}

/// A bitmap of `words` words of the ids in `raw` (edges and kept self-loops), set in
/// parallel (max / 8 bytes: stays in cache).
pub(super) fn mark_ids<I: RawId>(raw: &Raw<I>, words: usize) -> Vec<u64> {
    let bits: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    let lists: Vec<&[I]> = raw
        .part_slices()
        .chain(std::iter::once(&raw.loop_ids[..]))
        .collect();
    lists
        .par_iter()
        .flat_map(|ids| ids.par_chunks(ID_CHUNK))
        .for_each(|c| {
            for &id in c {
                let id: u64 = id.into();
                let (w, b) = (&bits[(id >> 6) as usize], 1u64 << (id & 63));
                // Most ids repeat: test before the (locked) write.
                if w.load(Ordering::Relaxed) & b == 0 {
                    w.fetch_or(b, Ordering::Relaxed);
                }
            }
        });
    bits.into_iter().map(AtomicU64::into_inner).collect()
}

/// Auto mode with integer ids: the ids in use, numbered in increasing order.
pub(super) fn compact<I: RawId>(mut raw: Raw<I>, name: &str) -> Result<Parsed> {
    let max = raw.max.unwrap_or(0);
    let occurrences = raw.len() * 2 + raw.loop_ids.len();
    let dense = max < u32::MAX as u64 && max <= (occurrences as u64).saturating_mul(8) + 65536;
    if dense {
        let words = (max as usize >> 6) + 1;
        let words = match raw.marks.take() {
            // Marked while parsing: add the kept self-loops' ids.
            Some(mut bits) => {
                bits.resize(words, 0);
                for &id in &raw.loop_ids {
                    let id: u64 = id.into();
                    bits[(id >> 6) as usize] |= 1 << (id & 63);
                }
                bits
            }
            None => mark_ids(&raw, words),
        };
        let map = DenseIds::new(words);
        let n = map.len();
        let raw = Raw {
            src: I::into_u32s(raw.src),
            dst: I::into_u32s(raw.dst),
            weights: raw.weights,
            parts: raw.parts,
            loop_ids: Vec::new(),
            self_loops: raw.self_loops,
            max: raw.max,
            marks: None,
            counts: raw.counts,
        };
        // Every id 0..=max in use: keep the numbering, no labels.
        let map = (n as u64 != max + 1).then_some(map);
        return Ok(Parsed::Dense {
            raw,
            n,
            map,
            notes: Vec::new(),
        });
    }
    raw.close_gaps();
    let Raw {
        src,
        dst,
        weights,
        loop_ids,
        self_loops,
        ..
    } = raw;
    let mut ids: Vec<u64> = Vec::with_capacity(occurrences);
    for v in [&src, &dst, &loop_ids] {
        ids.extend(v.iter().map(|&x| -> u64 { x.into() }));
    }
    ids.par_sort_unstable();
    ids.dedup();
    if u32::try_from(ids.len()).is_err() {
        return Err(perr(name, None, K::IndexOutOfRange, "more than 2^32 nodes"));
    }
    let find = |v: Vec<I>| -> Vec<u32> {
        // Every id is in `ids`, so the search succeeds.
        v.into_par_iter()
            .map(|x| ids.binary_search(&x.into()).unwrap_or(0) as u32)
            .collect()
    };
    let src = find(src);
    let dst = find(dst);
    let labels = ids.par_iter().map(|&x| id_label(x)).collect();
    Ok(Parsed::List(EdgeList {
        num_nodes: ids.len(),
        src,
        dst,
        weights,
        labels: Some(labels),
        self_loops,
        notes: Vec::new(),
    }))
}

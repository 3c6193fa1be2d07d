//! Label files: every id is a string, numbered in order of first appearance; parsed in
//! parallel pieces, each numbering its own labels, joined in file order.

use super::*;

/// A whole file of labels ([`parse_labels_part`] of all of it, in parallel pieces): every
/// id a string, numbered in order of first appearance.
pub(super) fn parse_labels(
    buf: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    skip: usize,
) -> Result<EdgeList> {
    let part = parse_labels_part(buf, name, opts, (skip, Weights::decide(buf, opts)), None)?;
    if !part.any {
        return Err(perr(name, None, K::Empty, "no edges in the file"));
    }
    // Every label was checked as UTF-8 where it was parsed.
    let labels: Vec<String> = part
        .labels
        .par_iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    Ok(EdgeList {
        num_nodes: labels.len(),
        src: part.src,
        dst: part.dst,
        weights: part.weights,
        labels: Some(labels),
        self_loops: part.self_loops,
        notes: Vec::new(),
    })
}

/// The labelled edges of a byte range of a file (whole lines, after `skip` lines of the
/// file, so that errors name the file's line), read as [`parse_labels`] reads a whole file
/// with the weight column `ws` decided from the file's first data line: the range's labels
/// in order of first appearance in it, its edges on their positions in that order, its
/// self-loop lines counted. Parsed in parallel pieces, each numbering its own labels, then
/// joined in file order; the first error in file order is reported. No data line is no
/// edges (`any` is false). `chunk`: the pieces' size (`None`: the default; tests force tiny
/// pieces).
pub(crate) fn parse_labels_part<'a>(
    bytes: &'a [u8],
    name: &str,
    opts: &EdgeListOptions,
    (skip, ws): (usize, Weights),
    chunk: Option<usize>,
) -> Result<LabelPart<'a>> {
    use rayon::prelude::*;
    let pieces = super::pieces(bytes, chunk);
    let lines_in: Vec<usize> = pieces
        .par_iter()
        .map(|&(a, b)| memchr::memchr_iter(b'\n', &bytes[a..b]).count())
        .collect();
    let mut line0 = vec![skip; pieces.len()];
    for k in 1..pieces.len() {
        line0[k] = line0[k - 1] + lines_in[k - 1];
    }
    let parts: Vec<Result<LabelPart<'a>>> = pieces
        .par_iter()
        .zip(line0)
        .map(|(&(a, b), line0)| piece(&bytes[a..b], name, opts, line0, ws))
        .collect();
    let parts: Vec<LabelPart<'a>> = parts.into_iter().collect::<Result<_>>()?;
    let labels: Vec<&[&'a [u8]]> = parts.iter().map(|p| &p.labels[..]).collect();
    let (order, maps, _) = number_pieces(&labels);
    drop(labels);
    if u32::try_from(order.len()).is_err() {
        return Err(perr(name, None, K::IndexOutOfRange, "more than 2^32 nodes"));
    }
    let mut all = LabelPart {
        labels: order,
        weights: ws.weighted().then(Vec::new),
        ..LabelPart::default()
    };
    for p in &parts {
        all.self_loops += p.self_loops;
        all.any |= p.any;
    }
    // The edges renumbered, each piece's into its own slice of the joined arrays.
    let m: usize = parts.iter().map(|p| p.src.len()).sum();
    let mut src = crate::alloc::try_zeroed_vec::<u32>(m, || format!("{m} labelled edges"))?;
    let mut dst = crate::alloc::try_zeroed_vec::<u32>(m, || format!("{m} labelled edges"))?;
    {
        let mut slices = Vec::with_capacity(parts.len());
        let (mut s_rest, mut d_rest) = (&mut src[..], &mut dst[..]);
        for p in &parts {
            let (s, s_tail) = std::mem::take(&mut s_rest).split_at_mut(p.src.len());
            let (d, d_tail) = std::mem::take(&mut d_rest).split_at_mut(p.src.len());
            slices.push((s, d));
            (s_rest, d_rest) = (s_tail, d_tail);
        }
        slices
            .into_par_iter()
            .zip(&parts)
            .zip(&maps)
            .for_each(|(((s, d), p), map)| {
                for (o, &i) in s.iter_mut().zip(&p.src) {
                    *o = map[i as usize];
                }
                for (o, &i) in d.iter_mut().zip(&p.dst) {
                    *o = map[i as usize];
                }
            });
    }
    all.src = src;
    all.dst = dst;
    if let Some(w) = &mut all.weights {
        for p in &parts {
            w.extend_from_slice(p.weights.as_deref().unwrap_or_default());
        }
    }
    Ok(all)
}

/// Shards of the labels in [`number_pieces`]: each numbered on its own thread, in a table
/// that stays in cache.
const SHARDS: usize = 256;

/// The labels of pieces in file order (each piece's distinct, in order of first appearance
/// in it) numbered in order of first appearance over all of them: every label in that
/// order, each piece's map from its labels to their numbers, and where each piece's first
/// held labels' numbers begin (piece `k` holds first exactly the labels it maps into
/// `base[k]..base[k + 1]`).
///
/// In parallel, as the distributed reader numbers its ranks' labels (`dist::graph::labels`):
/// the labels are cut into shards by a hash of their text, and each shard finds, for each
/// of its labels, the first piece that holds it; each piece then numbers the labels it holds
/// first, in its order, after the pieces before it, and every other holder takes the first
/// holder's number through the shard.
pub(crate) fn number_pieces<'a>(
    pieces: &[&[&'a [u8]]],
) -> (Vec<&'a [u8]>, Vec<Vec<u32>>, Vec<usize>) {
    use rayon::prelude::*;
    use std::hash::BuildHasher;
    let hasher = foldhash::quality::RandomState::default();
    // Each piece's labels counting-sorted by shard: their positions, and where each shard's
    // begin.
    let by_shard: Vec<(Vec<u32>, Vec<u32>)> = pieces
        .par_iter()
        .map(|labels| {
            let shard: Vec<u16> = labels
                .iter()
                .map(|l| (hasher.hash_one(l) % SHARDS as u64) as u16)
                .collect();
            let mut offs = vec![0u32; SHARDS + 1];
            for &s in &shard {
                offs[s as usize + 1] += 1;
            }
            for s in 0..SHARDS {
                offs[s + 1] += offs[s];
            }
            let mut at = offs.clone();
            let mut order = vec![0u32; labels.len()];
            for (j, &s) in shard.iter().enumerate() {
                order[at[s as usize] as usize] = j as u32;
                at[s as usize] += 1;
            }
            (order, offs)
        })
        .collect();
    // Each shard: its distinct labels' first holders (piece, position), and the distinct
    // label of each of its pieces' labels, in the pieces' order.
    struct Shard {
        first: Vec<(u32, u32)>,
        group: Vec<u32>,
        /// Where each piece's labels begin in `group`.
        start: Vec<usize>,
    }
    let shards: Vec<Shard> = (0..SHARDS)
        .into_par_iter()
        .map(|s| {
            let mut map: HashMap<&'a [u8], u32, foldhash::quality::RandomState> =
                HashMap::default();
            let mut first = Vec::new();
            let mut group = Vec::new();
            let mut start = Vec::with_capacity(pieces.len());
            for (k, (order, offs)) in by_shard.iter().enumerate() {
                start.push(group.len());
                for &j in &order[offs[s] as usize..offs[s + 1] as usize] {
                    let next = first.len() as u32;
                    let g = *map.entry(pieces[k][j as usize]).or_insert_with(|| {
                        first.push((k as u32, j));
                        next
                    });
                    group.push(g);
                }
            }
            Shard {
                first,
                group,
                start,
            }
        })
        .collect();
    // Each piece: the distinct label of each of its labels, and which it holds first.
    let groups: Vec<Vec<(u16, u32)>> = by_shard
        .par_iter()
        .enumerate()
        .map(|(k, (order, offs))| {
            let mut g = vec![(0u16, 0u32); order.len()];
            for s in 0..SHARDS {
                let seg = &order[offs[s] as usize..offs[s + 1] as usize];
                let sh = &shards[s].group[shards[s].start[k]..];
                for (&j, &x) in seg.iter().zip(sh) {
                    g[j as usize] = (s as u16, x);
                }
            }
            g
        })
        .collect();
    drop(by_shard);
    let held_first = |k: usize, j: usize, (s, g): (u16, u32)| {
        shards[s as usize].first[g as usize] == (k as u32, j as u32)
    };
    let counts: Vec<usize> = groups
        .par_iter()
        .enumerate()
        .map(|(k, g)| (0..g.len()).filter(|&j| held_first(k, j, g[j])).count())
        .collect();
    let mut base = vec![0usize; pieces.len() + 1];
    for k in 0..pieces.len() {
        base[k + 1] = base[k] + counts[k];
    }
    // The first holders' numbers, then every label's through its shard.
    let own: Vec<Vec<u32>> = groups
        .par_iter()
        .enumerate()
        .map(|(k, g)| {
            let mut next = base[k] as u32;
            (0..g.len())
                .map(|j| {
                    if held_first(k, j, g[j]) {
                        next += 1;
                        next - 1
                    } else {
                        u32::MAX
                    }
                })
                .collect()
        })
        .collect();
    let numbers: Vec<Vec<u32>> = shards
        .par_iter()
        .map(|sh| {
            sh.first
                .iter()
                .map(|&(k, j)| own[k as usize][j as usize])
                .collect()
        })
        .collect();
    let maps: Vec<Vec<u32>> = groups
        .par_iter()
        .map(|g| {
            g.iter()
                .map(|&(s, x)| numbers[s as usize][x as usize])
                .collect()
        })
        .collect();
    let firsts: Vec<Vec<&'a [u8]>> = pieces
        .par_iter()
        .zip(&own)
        .map(|(labels, own)| {
            labels
                .iter()
                .zip(own)
                .filter(|(_, &x)| x != u32::MAX)
                .map(|(&l, _)| l)
                .collect()
        })
        .collect();
    (firsts.concat(), maps, base)
}

/// One piece of [`parse_labels_part`], its labels numbered on their own.
fn piece<'a>(
    buf: &'a [u8],
    name: &str,
    opts: &EdgeListOptions,
    line0: usize,
    mut ws: Weights,
) -> Result<LabelPart<'a>> {
    let mut index: HashMap<&'a [u8], u32, foldhash::quality::RandomState> = HashMap::default();
    let mut out = LabelPart {
        weights: ws.weighted().then(Vec::new),
        ..LabelPart::default()
    };
    let mut labels: Vec<&'a [u8]> = Vec::new();
    let mut intern = |t: &'a [u8], ln: usize| -> Result<u32> {
        if let Some(&k) = index.get(t) {
            return Ok(k);
        }
        if std::str::from_utf8(t).is_err() {
            return Err(perr(
                name,
                Some(ln),
                K::BadValue,
                format!("label {} is not valid UTF-8", text::show(t)),
            ));
        }
        let k = labels.len() as u32;
        labels.push(t);
        index.insert(t, k);
        Ok(k)
    };
    for (k, line) in Lines::new(buf) {
        let ln = line0 + k;
        let Some((a, b, w)) = fields(line, &|| ln, name, &mut ws)? else {
            continue;
        };
        out.any = true;
        if a == b {
            out.self_loops += 1;
            if opts.loop_only_nodes {
                intern(a, ln)?;
            }
            continue;
        }
        let u = intern(a, ln)?;
        let v = intern(b, ln)?;
        out.src.push(u);
        out.dst.push(v);
        if let Some(wts) = &mut out.weights {
            wts.push(w.unwrap_or(1.0));
        }
    }
    out.labels = labels;
    Ok(out)
}

/// A byte range's labelled edges ([`parse_labels_part`]).
#[derive(Debug, Default)]
pub(crate) struct LabelPart<'a> {
    /// The range's labels, in order of first appearance.
    pub labels: Vec<&'a [u8]>,
    /// Its edges, on positions in `labels`.
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// Their weights, for a weighted file.
    pub weights: Option<Vec<f64>>,
    /// Self-loop lines.
    pub self_loops: usize,
    /// Whether the range has a data line.
    pub any: bool,
}

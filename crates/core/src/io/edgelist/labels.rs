//! Label files: every id is a string, numbered in order of first appearance; parsed in
//! parallel pieces, each numbering its own labels, joined in file order.

use super::*;

/// A whole file of labels ([`parse_labels_part`] of all of it, in parallel pieces): every
/// id a string, numbered in order of first appearance.
pub(super) fn parse_labels(buf: &[u8], name: &str, opts: &EdgeListOptions) -> Result<EdgeList> {
    let part = parse_labels_part(buf, name, opts, (0, Weights::decide(buf, opts)), None)?;
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
    // The pieces' labels numbered in file order: a label takes the next number where it
    // first appears, in the first piece that holds it.
    let mut index: HashMap<&'a [u8], u32, foldhash::quality::RandomState> = HashMap::default();
    let mut all = LabelPart {
        weights: ws.weighted().then(Vec::new),
        ..LabelPart::default()
    };
    let mut parts: Vec<LabelPart<'a>> = parts.into_iter().collect::<Result<_>>()?;
    let mut maps = Vec::with_capacity(parts.len());
    for p in &mut parts {
        let map: Vec<u32> = p
            .labels
            .iter()
            .map(|&l| {
                let next = all.labels.len() as u32;
                *index.entry(l).or_insert_with(|| {
                    all.labels.push(l);
                    next
                })
            })
            .collect();
        maps.push(map);
        all.self_loops += p.self_loops;
        all.any |= p.any;
    }
    drop(index);
    if u32::try_from(all.labels.len()).is_err() {
        return Err(perr(name, None, K::IndexOutOfRange, "more than 2^32 nodes"));
    }
    let renumber = |ids: &[u32], map: &[u32]| ids.iter().map(|&i| map[i as usize]).collect();
    let (src, dst): (Vec<Vec<u32>>, Vec<Vec<u32>>) = parts
        .par_iter()
        .zip(&maps)
        .map(|(p, m)| (renumber(&p.src, m), renumber(&p.dst, m)))
        .unzip();
    all.src = src.concat();
    all.dst = dst.concat();
    if let Some(w) = &mut all.weights {
        for p in &mut parts {
            w.extend_from_slice(p.weights.as_deref().unwrap_or_default());
        }
    }
    Ok(all)
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

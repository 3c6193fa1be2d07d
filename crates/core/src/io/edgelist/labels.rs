//! Label files: every id is a string, numbered in order of first appearance (sequential).

use super::*;

pub(super) fn parse_labels<'a>(
    buf: &'a [u8],
    name: &str,
    opts: &EdgeListOptions,
) -> Result<EdgeList> {
    // A seeded hasher with full final mixing (foldhash's quality variant): labels chosen to
    // collide (`v0000000`, `v0000001`, … under a hasher without final mixing) cost no more
    // than any others, so every file of labels loads in linear time.
    let mut index: HashMap<&'a [u8], u32, foldhash::quality::RandomState> = HashMap::default();
    let mut labels: Vec<String> = Vec::new();
    let mut src = Vec::new();
    let mut dst = Vec::new();
    let mut wts = Vec::new();
    let mut self_loops = 0usize;
    let mut any = false;
    let mut ws = Weights::new(opts);
    let mut intern = |t: &'a [u8], ln: usize| -> Result<u32> {
        if let Some(&k) = index.get(t) {
            return Ok(k);
        }
        let s = std::str::from_utf8(t).map_err(|_| {
            perr(
                name,
                Some(ln),
                K::BadValue,
                format!("label {} is not valid UTF-8", text::show(t)),
            )
        })?;
        let k = u32::try_from(labels.len())
            .map_err(|_| perr(name, Some(ln), K::IndexOutOfRange, "more than 2^32 nodes"))?;
        labels.push(s.to_owned());
        index.insert(t, k);
        Ok(k)
    };
    for (ln, line) in Lines::new(buf) {
        let Some((a, b, w)) = fields(line, &|| ln, name, &mut ws)? else {
            continue;
        };
        any = true;
        if a == b {
            self_loops += 1;
            if opts.loop_only_nodes {
                intern(a, ln)?;
            }
            continue;
        }
        let u = intern(a, ln)?;
        let v = intern(b, ln)?;
        src.push(u);
        dst.push(v);
        if ws.weighted() {
            wts.push(w.unwrap_or(1.0));
        }
    }
    if !any {
        return Err(perr(name, None, K::Empty, "no edges in the file"));
    }
    Ok(EdgeList {
        num_nodes: labels.len(),
        src,
        dst,
        weights: ws.weighted().then_some(wts),
        labels: Some(labels),
        self_loops,
        notes: Vec::new(),
    })
}

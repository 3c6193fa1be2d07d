//! METIS graph files (also MLR-MCL's input format), read into the same [`Graph`] as the
//! other graph readers.
//!
//! # Format
//!
//! Lines starting with `%` are comments (anywhere). The first other line is the header
//! `n m [fmt [ncon]]`: `n` vertices, `m` undirected edges. `fmt` (default `0`, also written
//! `000`, `001`, ...) is three flags: the last digit 1 means every neighbour is followed by
//! its edge weight, the middle digit 1 means each vertex line starts with `ncon` vertex
//! weights (default 1), the first digit 1 means it starts with the vertex size before
//! those. Then exactly `n` vertex lines: line `i` lists vertex `i`'s neighbours as 1-based
//! ids (an empty line is a vertex without neighbours). Every edge is listed by both its
//! endpoints, so the neighbour entries total `2m`. Blank lines after vertex `n` are
//! allowed; anything else after it is an error.
//!
//! # Graph
//!
//! Vertex `i` becomes node `i - 1`, labelled `i` ([`Graph::label`]), so commands print the
//! file's ids; every vertex is kept, isolated ones included. Edge weights (the last digit
//! of `fmt` set) make a weighted graph (finite numbers; the two listings of an edge are
//! merged keeping the larger weight, as the other readers merge duplicates); vertex sizes
//! and weights are checked to be non-negative integers and skipped. A vertex listing itself is a self-loop: dropped and
//! counted in [`Graph::self_loops_dropped`].
//!
//! # Detection
//!
//! The graph readers ([`super::read_graph_auto`]) take a text file as METIS only when
//! [`is_metis`] holds: its first non-comment line is 2 to 4 non-negative integers with a
//! valid `fmt`, the non-comment lines after it are exactly `n` (trailing blank lines
//! aside), and those lines hold `2m` neighbour entries. Anything else stays an edge list,
//! so a tiny edge list is read as METIS only if it satisfies all three (for example
//! `3 2\n1 2\n2 3\n` is an edge list: 2 lines follow, not 3).

use super::perr;
use crate::error::{ParseErrorKind as K, Result, ResultExt};
use crate::graph::Graph;

/// The header line of a METIS file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    /// Vertices.
    n: u64,
    /// Undirected edges.
    m: u64,
    /// Leading fields of each vertex line before its neighbours (size, vertex weights).
    skip: usize,
    /// Whether each neighbour is followed by an edge weight.
    weighted: bool,
    /// 1-based line number of the header.
    line: usize,
}

/// The lines of `bytes` (after a UTF-8 byte-order mark) as (1-based number, text without
/// the line end), the empty piece after a final line break left out.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let b = super::strip_bom(bytes);
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.split(|&c| c == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix(b"\r").unwrap_or(l)))
}

/// The whitespace-separated fields of a line.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|c| c.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
}

fn is_comment(line: &[u8]) -> bool {
    line.first() == Some(&b'%')
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|c| c.is_ascii_whitespace())
}

fn uint(f: &[u8]) -> Option<u64> {
    if f.is_empty() || !f.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(f).ok()?.parse().ok()
}

fn show(f: &[u8]) -> String {
    String::from_utf8_lossy(f).into_owned()
}

/// The header of line `line`, or the problem with it.
fn parse_header(text: &[u8], line: usize) -> std::result::Result<Header, String> {
    let f: Vec<&[u8]> = fields(text).collect();
    if !(2..=4).contains(&f.len()) {
        return Err(format!(
            "the METIS header must be `n m [fmt [ncon]]` (2 to 4 non-negative integers), got {} fields",
            f.len()
        ));
    }
    let mut v = [0u64; 4];
    for (i, x) in f.iter().enumerate() {
        v[i] = uint(x).ok_or_else(|| {
            format!(
                "the METIS header must be 2 to 4 non-negative integers, {:?} is not one",
                show(x)
            )
        })?;
    }
    let fmt = if f.len() >= 3 { v[2] } else { 0 };
    if !matches!(fmt, 0 | 1 | 10 | 11 | 100 | 101 | 110 | 111) {
        return Err(format!(
            "METIS fmt must be 0, 1, 10, 11, 100, 101, 110 or 111 (three 0/1 flags), got {}",
            show(f[2])
        ));
    }
    let ncon = if f.len() == 4 { v[3] } else { 1 };
    let vwgt = (fmt / 10) % 10 == 1;
    let size = fmt / 100 == 1;
    let skip = u64::from(size) + if vwgt { ncon } else { 0 };
    let skip = usize::try_from(skip).map_err(|_| format!("ncon {ncon} is too large"))?;
    Ok(Header {
        n: v[0],
        m: v[1],
        skip,
        weighted: fmt % 10 == 1,
        line,
    })
}

/// The first non-comment line and its number.
fn first_line(bytes: &[u8]) -> Option<(usize, &[u8])> {
    lines(bytes).find(|(_, l)| !is_comment(l))
}

/// Whether the graph readers take `bytes` as METIS (see the [module documentation](self)):
/// a valid header, exactly `n` vertex lines (comments aside, trailing blank lines
/// allowed), and `2m` neighbour entries on them. Reads every line, but parses no number
/// beyond the header.
pub fn is_metis(bytes: &[u8]) -> bool {
    let Some((hl, text)) = first_line(bytes) else {
        return false;
    };
    let Ok(h) = parse_header(text, hl) else {
        return false;
    };
    let (mut count, mut entries) = (0u64, 0u64);
    for (ln, l) in lines(bytes) {
        if ln <= hl || is_comment(l) {
            continue;
        }
        if count == h.n {
            if is_blank(l) {
                continue;
            }
            return false;
        }
        count += 1;
        let k = fields(l).count().saturating_sub(h.skip) as u64;
        // A missing last weight still counts its neighbour: the reader then names it.
        entries += if h.weighted { k.div_ceil(2) } else { k };
    }
    count == h.n && Some(entries) == h.m.checked_mul(2)
}

/// Whether `head`, the first whole lines of a longer file, could start a METIS file: a
/// valid header, and vertex lines that parse (ids in range, no more than `n` lines, no more
/// than `2m` entries) and are symmetric among the vertices whose lines are in `head`. The
/// streamed edge-list path leaves such a file to the whole-file readers, which decide with
/// [`is_metis`]; a real edge list fails this within its first lines (its first line read
/// as a header rarely makes the next lines a symmetric adjacency).
pub(crate) fn could_start_metis(head: &[u8]) -> bool {
    scan(head, "<head>", false).is_ok()
}

/// The adjacency read from a METIS file: `vertex_line[i]` is the line of vertex `i + 1`, and
/// `entries` holds every neighbour entry `(u, v, weight)` (0-based, weight 1 when unweighted).
struct Adjacency {
    header: Header,
    entries: Vec<(u32, u32, f64)>,
    vertex_line: Vec<usize>,
}

/// Reads the header and vertex lines and checks them, symmetry included. `whole`:
/// `bytes` is the whole file (else a head: the line count and entry total are not
/// checked, and symmetry only among the vertices read).
fn scan(bytes: &[u8], name: &str, whole: bool) -> Result<Adjacency> {
    let Some((hl, text)) = first_line(bytes) else {
        return Err(perr(name, None, K::Empty, "no METIS header (empty file)"));
    };
    let h = parse_header(text, hl).map_err(|msg| perr(name, Some(hl), K::BadHeader, msg))?;
    if u32::try_from(h.n).is_err() {
        return Err(perr(
            name,
            Some(hl),
            K::Unsupported,
            format!("{} vertices do not fit in 32-bit node ids", h.n),
        ));
    }
    let n = h.n;
    let mut vertex_line = Vec::new();
    let mut entries = Vec::new();
    for (ln, l) in lines(bytes) {
        if ln <= hl || is_comment(l) {
            continue;
        }
        if vertex_line.len() as u64 == n {
            if is_blank(l) {
                continue;
            }
            return Err(perr(
                name,
                Some(ln),
                K::EntryCount,
                format!("more than the header's {n} vertex lines (line {hl}): this line is extra"),
            ));
        }
        let u = vertex_line.len() as u32;
        vertex_line.push(ln);
        let f: Vec<&[u8]> = fields(l).collect();
        if f.len() < h.skip && !f.is_empty() {
            return Err(perr(
                name,
                Some(ln),
                K::Truncated,
                format!(
                    "vertex {} has {} fields, the header's fmt needs {} (size / vertex weights) before its neighbours",
                    u + 1,
                    f.len(),
                    h.skip
                ),
            ));
        }
        let (pre, rest) = f.split_at(h.skip.min(f.len()));
        for x in pre {
            if uint(x).is_none() {
                return Err(perr(
                    name,
                    Some(ln),
                    K::BadValue,
                    format!(
                        "vertex size / weight {:?} is not a non-negative integer",
                        show(x)
                    ),
                ));
            }
        }
        let step = if h.weighted { 2 } else { 1 };
        for pair in rest.chunks(step) {
            let id = pair[0];
            let v = uint(id).ok_or_else(|| {
                perr(
                    name,
                    Some(ln),
                    K::BadValue,
                    format!("neighbour id {:?} is not a number", show(id)),
                )
            })?;
            if v == 0 || v > n {
                return Err(perr(
                    name,
                    Some(ln),
                    K::IndexOutOfRange,
                    format!("neighbour id {v} is outside 1..={n}"),
                ));
            }
            let w = if h.weighted {
                let Some(wf) = pair.get(1) else {
                    return Err(perr(
                        name,
                        Some(ln),
                        K::Truncated,
                        format!("missing edge weight after neighbour {v} (fmt says weighted)"),
                    ));
                };
                match std::str::from_utf8(wf)
                    .ok()
                    .and_then(|s| s.parse::<f64>().ok())
                {
                    Some(w) if w.is_finite() => w,
                    _ => {
                        return Err(perr(
                            name,
                            Some(ln),
                            K::BadValue,
                            format!("edge weight {:?} is not a finite number", show(wf)),
                        ))
                    }
                }
            } else {
                1.0
            };
            entries.push((u, (v - 1) as u32, w));
        }
        if entries.len() as u64 > h.m.saturating_mul(2) && !whole {
            return Err(perr(name, Some(ln), K::EntryCount, "more than 2m entries"));
        }
    }
    if whole {
        if (vertex_line.len() as u64) < n {
            return Err(perr(
                name,
                Some(hl),
                K::Truncated,
                format!(
                    "the header (line {hl}) declares {n} vertices but only {} vertex lines follow",
                    vertex_line.len()
                ),
            ));
        }
        if Some(entries.len() as u64) != h.m.checked_mul(2) {
            return Err(perr(
                name,
                Some(hl),
                K::EntryCount,
                format!(
                    "the header declares {} edges ({} neighbour entries, each edge listed by both ends) but the vertex lines hold {} entries",
                    h.m,
                    h.m.saturating_mul(2),
                    entries.len()
                ),
            ));
        }
    }
    let adj = Adjacency {
        header: h,
        entries,
        vertex_line,
    };
    check_symmetric(&adj, name)?;
    Ok(adj)
}

/// Every entry `u -> v` (between vertices whose lines were read) has its mirror `v -> u`.
fn check_symmetric(adj: &Adjacency, name: &str) -> Result<()> {
    let mut pairs: Vec<(u32, u32)> = adj.entries.iter().map(|&(u, v, _)| (u, v)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    let read = adj.vertex_line.len();
    for &(u, v) in &pairs {
        if (v as usize) < read && pairs.binary_search(&(v, u)).is_err() {
            return Err(perr(
                name,
                Some(adj.vertex_line[u as usize]),
                K::BadValue,
                format!(
                    "vertex {} lists {} but vertex {} (line {}) does not list {}: a METIS adjacency must be symmetric",
                    u + 1,
                    v + 1,
                    v + 1,
                    adj.vertex_line[v as usize],
                    u + 1
                ),
            ));
        }
    }
    Ok(())
}

/// Parses METIS bytes into a graph; `name` is the file name used in errors (see the
/// [module documentation](self)).
pub fn parse_metis(bytes: &[u8], name: &str) -> Result<Graph> {
    let adj = scan(bytes, name, true)?;
    let n = adj.header.n as usize;
    let (mut src, mut dst, mut ws) = (Vec::new(), Vec::new(), Vec::new());
    let mut loops = 0;
    for &(u, v, w) in &adj.entries {
        if u == v {
            loops += 1;
        } else if u < v {
            src.push(u);
            dst.push(v);
            ws.push(w);
        }
    }
    let weights = adj.header.weighted.then_some(ws.as_slice());
    Ok(Graph::from_arrays(n, &src, &dst, weights, loops)
        .context(|| name)?
        .with_one_based_labels())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(g: &Graph) -> Vec<(String, String, Option<f64>)> {
        let mut e = Vec::new();
        for u in 0..g.num_nodes() {
            for (i, &v) in g.neighbors(u).iter().enumerate() {
                if u < v as usize {
                    let w = g.neighbor_weights(u).map(|w| w[i]);
                    e.push((g.label(u), g.label(v as usize), w));
                }
            }
        }
        e
    }

    fn e(u: &str, v: &str, w: Option<f64>) -> (String, String, Option<f64>) {
        (u.into(), v.into(), w)
    }

    /// The error message of parsing `text` as METIS.
    fn err(text: &str) -> String {
        parse_metis(text.as_bytes(), "g.metis")
            .unwrap_err()
            .to_string()
    }

    fn has(msg: &str, line: usize, what: &str) {
        assert!(msg.starts_with(&format!("g.metis:{line}: ")), "{msg}");
        assert!(msg.contains(what), "{msg}");
    }

    #[test]
    fn edge_lists_stay_edge_lists() {
        assert!(!is_metis(b"1 2\n2 3\n3 1\n"));
        assert!(!is_metis(b"3 2\n1 2\n2 3\n"));
        assert!(!is_metis(b"1 2 0.5\n2 3 0.5\n"));
        assert!(!is_metis(b"a b\nb c\n"));
    }

    #[test]
    fn comments_and_isolated_vertices() {
        // Path 1-2-3, vertex 4 isolated (empty line), vertex 5 isolated at the end.
        let t = "% a comment\n5 2\n2\n1 3\n% mid\n2\n\n\n";
        assert!(is_metis(t.as_bytes()));
        let g = parse_metis(t.as_bytes(), "g").unwrap();
        assert_eq!(g.num_nodes(), 5);
        assert_eq!(edges(&g), vec![e("1", "2", None), e("2", "3", None)]);
        assert!(g.weights().is_none());
    }

    #[test]
    fn edge_weights_fmt_1() {
        let t = "3 3 1\n2 5 3 1.5\n1 5 3 2\n1 1.5 2 2\n";
        assert!(is_metis(t.as_bytes()));
        let g = parse_metis(t.as_bytes(), "g").unwrap();
        assert_eq!(
            edges(&g),
            vec![
                e("1", "2", Some(5.0)),
                e("1", "3", Some(1.5)),
                e("2", "3", Some(2.0))
            ]
        );
    }

    #[test]
    fn vertex_weights_fmt_10_and_11() {
        // ncon = 2 vertex weights, then neighbours.
        let t = "3 2 10 2\n7 8 2\n1 1 1 3\n4 4 2\n";
        assert!(is_metis(t.as_bytes()));
        let g = parse_metis(t.as_bytes(), "g").unwrap();
        assert_eq!(edges(&g), vec![e("1", "2", None), e("2", "3", None)]);
        let t = "3 2 011\n7 2 4\n1 1 4 3 6\n4 2 6\n";
        assert!(is_metis(t.as_bytes()));
        let g = parse_metis(t.as_bytes(), "g").unwrap();
        assert_eq!(
            edges(&g),
            vec![e("1", "2", Some(4.0)), e("2", "3", Some(6.0))]
        );
        // fmt 110: a size and one vertex weight.
        let t = "2 1 110\n1 9 2\n1 9 1\n";
        assert!(is_metis(t.as_bytes()));
        assert_eq!(
            edges(&parse_metis(t.as_bytes(), "g").unwrap()),
            vec![e("1", "2", None)]
        );
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        has(&err("% c\n3 x\n"), 2, "non-negative integers");
        has(&err("3\n"), 1, "2 to 4");
        has(&err("3 1 2 3 4\n"), 1, "2 to 4");
        has(&err("2 1 12\n2\n1\n"), 1, "fmt must be");
        has(&err("2 1\n0\n1\n"), 2, "outside 1..=2");
        has(&err("2 1\n2\n3\n"), 3, "outside 1..=2");
        has(&err("2 1\n2\nz\n"), 3, "not a number");
        has(&err("2 1 1\n2 1\n1 q\n"), 3, "not a finite number");
        has(&err("3 1\n2\n1\n"), 1, "only 2 vertex lines");
        has(
            &err("2 1\n2\n1\n\n1 2\n"),
            5,
            "more than the header's 2 vertex lines",
        );
        has(&err("2 2\n2\n1\n"), 1, "4 neighbour entries");
        has(&err("2 1 1\n2 3\n1\n"), 3, "missing edge weight");
        has(&err("3 2\n2 3\n1\n2\n"), 2, "does not list 1");
    }

    #[test]
    fn heads_of_metis_files_and_of_edge_lists() {
        assert!(could_start_metis(b"4 3\n2\n1 3\n"));
        assert!(!could_start_metis(b"1 2\n2 3\n3 4\n4 5\n"));
        assert!(!could_start_metis(b"5 6\n1 2\n2 3\n"));
    }
}

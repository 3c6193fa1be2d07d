//! Edge lists: SNAP files, mcl's ABC format (`label label weight`), plain `u v [w]` lists.
//!
//! # Lines
//!
//! One edge per line, `u v` or `u v w`, fields separated by spaces or tabs. Lines whose
//! first field starts with `#` or `%` are comments; blank lines are skipped; CRLF line ends
//! are accepted. An edge may be listed in one direction or both, and more than once: the
//! graph is undirected and simple, so duplicates and reversed duplicates are merged (a
//! merged weighted edge keeps its largest weight). Self-loops are dropped and counted in
//! [`Graph::self_loops_dropped`] (each self-loop *line* counts once).
//!
//! Weights ([`EdgeListOptions::weighted`]): `Some(true)` needs a third field on every data
//! line, `Some(false)` ignores every field after the second, `None` (the default) decides
//! from the first data line: a third field there makes the graph weighted, and then every
//! data line must have exactly three fields, otherwise exactly two. Weights must be finite
//! numbers.
//!
//! # Node numbering
//!
//! [`IdMode`] decides how the id fields become nodes `0..n`:
//!
//! * [`IdMode::Auto`] (the default): when every id field is a non-negative decimal integer,
//!   the nodes are the **distinct ids that occur in at least one edge between two different
//!   ids**, numbered in increasing id order. A file using every id `0..n` therefore keeps
//!   its numbering (and gets no labels); otherwise (1-based files, gaps) the ids are
//!   compacted and each node's label ([`Graph::labels`]) is its original id. When some id
//!   is not such an integer the whole file is read as in [`IdMode::Labels`].
//! * [`IdMode::Numeric`]: ids are used as given, nodes are `0..=max id` (ids seen only in
//!   self-loops included); a 1-based file gets an isolated node 0, gaps become isolated
//!   nodes. Memory is proportional to the largest id.
//! * [`IdMode::Labels`]: every id is a string label; nodes are the distinct labels that
//!   occur in at least one edge between two different labels, in order of first
//!   appearance, and carry their labels.
//!
//! An id that occurs only in self-loop lines is not a node in the `Auto` and `Labels`
//! modes, unless [`EdgeListOptions::loop_only_nodes`] is set; this is the convention of
//! the reference counts in `shared/data/graphs.tsv` (e.g. `ca-GrQc_full.txt`, whose node
//! 12294 appears only in a self-loop, has 5241 nodes).
//!
//! In `Numeric` mode ids must be below 2^32 - 1 ([`ParseErrorKind::IndexOutOfRange`]
//! otherwise); `Auto` accepts any id that fits in a u64 and compacts it.
//!
//! # Speed
//!
//! Integer-id files take a parallel fast path. A plain file on disk is parsed as it is
//! read, each piece by its own thread in cache-sized blocks, with no whole-file buffer and
//! no line count (`edgelist/stream.rs`). Other inputs (standard input, gzip, a header line,
//! a byte-order mark) are read whole (large files by all threads at once), cut into
//! pieces at line breaks (a few per thread), and the lines
//! of each piece counted; each piece then gets that many slots of one zeroed pair of edge
//! arrays and is parsed into them by a single-pass byte parser (64-byte blocks with one
//! mask of their non-digit bytes, eight digits at a time, no per-line allocation, no UTF-8
//! checks); lines of another shape take a line-by-line
//! tokenizer, and label files a sequential one. The ids in use are marked in a bitmap (in
//! parallel) for the numbering. [`read_graph`] then builds the CSR graph straight from the
//! pieces' slots, renumbering as it goes (no [`EdgeList`], no joining copy); see
//! `graph/build.rs` for the build and `crates/core/examples/read_profile.rs` to time it.
//! The pieces are joined in input order, so the result never depends on the number of
//! threads. Read times: `benches/results/triangles.md`.
//!
//! [`ParseErrorKind::IndexOutOfRange`]: crate::ParseErrorKind::IndexOutOfRange

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::text::{self, Lines};
use super::{perr, refuse, Detected, Input, ReadOptions};
use crate::alloc;
use crate::error::{ParseErrorKind as K, Result, ResultExt};
use crate::graph::{id_label, DenseIds, Graph, PartCounts};

mod labels;
mod numeric;
mod pieces;
mod stream;
pub(crate) use stream::{head_plan, range_plan, HeadPlan, RangePlan, HEAD};
#[cfg(test)]
mod tests;

use labels::parse_labels;
pub(crate) use labels::{number_pieces, parse_labels_part};
use numeric::{Abort, NumParser, Outcome, PieceOut, Slots};
pub(crate) use numeric::{Marks, Raw, RawId};
pub(crate) use pieces::pieces;
use pieces::{compact, numeric_as_given, parse_numeric, parse_numeric_with, ID_CHUNK};

/// How id fields become node numbers; see the [module documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdMode {
    /// Integers when every id is one (compacted to the ids in use), labels otherwise.
    #[default]
    Auto,
    /// Integer ids used as given: nodes `0..=max id`.
    Numeric,
    /// String labels, numbered in order of first appearance.
    Labels,
}

/// Options of the edge-list reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EdgeListOptions {
    /// How ids become nodes.
    pub ids: IdMode,
    /// `Some(true)`: a weight on every line; `Some(false)`: ignore fields after the second;
    /// `None`: weighted iff the first data line has a third field.
    pub weighted: Option<bool>,
    /// Make ids that occur only in self-loop lines (isolated) nodes too, in the `Auto` and
    /// `Labels` modes. Off by default.
    pub loop_only_nodes: bool,
}

/// A parsed edge list before the graph is built: edges on nodes `0..num_nodes`, self-loops
/// removed (and counted).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EdgeList {
    /// Number of nodes.
    pub num_nodes: usize,
    /// First endpoint of each edge.
    pub src: Vec<u32>,
    /// Second endpoint of each edge.
    pub dst: Vec<u32>,
    /// Edge weights, when the list is weighted.
    pub weights: Option<Vec<f64>>,
    /// Node labels (original ids or label strings), when nodes were renumbered.
    pub labels: Option<Vec<String>>,
    /// Self-loop lines dropped.
    pub self_loops: usize,
    /// Remarks for the user about how the file was read (e.g. a skipped header line).
    pub notes: Vec<String>,
}

impl EdgeList {
    /// Number of edges (duplicates included).
    pub fn len(&self) -> usize {
        self.src.len()
    }

    /// True when there are no edges.
    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    /// Builds the undirected simple graph.
    pub fn into_graph(self) -> Result<Graph> {
        let g = Graph::from_arrays(
            self.num_nodes,
            &self.src,
            &self.dst,
            self.weights.as_deref(),
            self.self_loops,
        )?;
        let g = g.with_notes(self.notes);
        match self.labels {
            Some(l) => g.with_labels(l),
            None => Ok(g),
        }
    }
}

/// Reads an edge-list file into a graph.
///
/// Integer-id files take the fast path: parsed in parallel straight into one pair of edge
/// arrays, then built into the CSR graph from them (renumbering on the fly), without an
/// intermediate [`EdgeList`].
pub fn read_graph(path: impl AsRef<Path>, opts: &EdgeListOptions) -> Result<Graph> {
    let path = path.as_ref();
    if let Some(g) = read_graph_streamed(path, opts, &ReadOptions::default())? {
        return Ok(g);
    }
    let parsed = {
        let input = Input::read(path)?;
        match input.detect() {
            Detected::Text => parse(&input.bytes, &input.name, opts)?,
            other => return Err(refuse(&input.name, other, "an edge list")),
        }
        // The input's bytes are freed here, before the build.
    };
    parsed.into_graph().context(|| path.display())
}

/// The graph of a plain integer-id edge-list file, parsed as it is read (see
/// `edgelist/stream.rs`); `None` for any other input (which the whole-file readers take).
pub(crate) fn read_graph_streamed(
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
) -> Result<Option<Graph>> {
    match stream::read_numeric(path, opts, read.input_limit())? {
        Some(parsed) => parsed.into_graph().context(|| path.display()).map(Some),
        None => Ok(None),
    }
}

/// Reads an edge-list file into an [`EdgeList`] (parsing and numbering, no graph build).
///
/// The input is read once ([`Input::read`]: `-` is standard input, gzip is decompressed) and
/// parsed in parallel pieces.
pub fn read_edges(path: impl AsRef<Path>, opts: &EdgeListOptions) -> Result<EdgeList> {
    let path = path.as_ref();
    if let Some(parsed) = stream::read_numeric(path, opts, ReadOptions::default().input_limit())? {
        return Ok(parsed.into_edge_list());
    }
    let input = Input::read(path)?;
    match input.detect() {
        Detected::Text => parse_edges(&input.bytes, &input.name, opts),
        other => Err(refuse(&input.name, other, "an edge list")),
    }
}

/// Parses edge-list bytes into a graph; `name` is the file name used in errors.
pub fn parse_edge_list(bytes: &[u8], name: &str, opts: &EdgeListOptions) -> Result<Graph> {
    parse(bytes, name, opts)?.into_graph().context(|| name)
}

/// Parses edge-list bytes into an [`EdgeList`]; `name` is the file name used in errors.
///
/// A leading UTF-8 byte-order mark is ignored. In the `Auto` and `Numeric` modes a first data
/// line whose two id fields are both non-numeric, followed by numeric lines, is a column
/// header (`source target`): it is skipped and reported in [`EdgeList::notes`].
pub fn parse_edges(bytes: &[u8], name: &str, opts: &EdgeListOptions) -> Result<EdgeList> {
    Ok(parse(bytes, name, opts)?.into_edge_list())
}

/// [`parse_edges`] before the numbering is applied: what [`read_graph`] builds from.
pub(crate) fn parse(bytes: &[u8], name: &str, opts: &EdgeListOptions) -> Result<Parsed> {
    parse_in(bytes, name, opts, None)
}

/// [`parse`] with a chosen piece size for the parallel parse (`None`: the default, a few
/// pieces per thread of at least [`CHUNK`] bytes; tests force tiny pieces).
fn parse_in(
    bytes: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    chunk: Option<usize>,
) -> Result<Parsed> {
    let bytes = super::strip_bom(bytes);
    if opts.ids != IdMode::Labels {
        if let Some((ln, line, rest_at)) = header_line(bytes) {
            let rest = &bytes[rest_at..];
            let skip = memchr::memchr_iter(b'\n', &bytes[..rest_at]).count();
            // A bad line after the header is the file's error (not the header's); in
            // `Auto`, an id that is not an integer makes every line, the header too, a
            // line of labels (below), and so does nothing after it (a file of one edge
            // between labels).
            match numeric_edges(rest, name, opts, skip, chunk) {
                Ok(Some(mut el)) => {
                    el.note(format!(
                        "{name}:{ln}: skipped the header line {}",
                        text::show(line)
                    ));
                    return Ok(el);
                }
                Ok(None) => {}
                Err(crate::Error::Parse(e)) if e.kind == K::Empty => {}
                Err(e) => return Err(e),
            }
        }
    }
    // A weighted file's first data line whose ids are not numbers and whose weight is not a
    // number is a column header (STRING's `protein1 protein2 combined_score`): skipped.
    if let Some((ln, line, rest_at)) = weight_header(bytes, opts) {
        let skip = memchr::memchr_iter(b'\n', &bytes[..rest_at]).count();
        let mut el = edges_from(&bytes[rest_at..], name, opts, skip, chunk)?;
        el.note(format!(
            "{name}:{ln}: skipped the header line {}",
            text::show(line)
        ));
        return Ok(el);
    }
    edges_from(bytes, name, opts, 0, chunk)
}

/// [`header_line`] when it is a weighted file's header: its third field (the weight
/// column's) is not a number, and the weight column is not turned off. Read as labels, that
/// line would be refused for its weight.
pub(crate) fn weight_header<'a>(
    bytes: &'a [u8],
    opts: &EdgeListOptions,
) -> Option<(usize, &'a [u8], usize)> {
    if opts.weighted == Some(false) {
        return None;
    }
    let (ln, line, rest) = header_line(bytes)?;
    // Not a number at all: a weight that parses but is not finite (`nan`, `inf`) stays a
    // data line, and the reader refuses it.
    let third = text::tokens(line).nth(2)?;
    text::parse_f64(third).is_none().then_some((ln, line, rest))
}

/// The first data line when both of its id fields are non-numeric: (line number, line, the
/// offset just after it).
fn header_line(bytes: &[u8]) -> Option<(usize, &[u8], usize)> {
    let mut off = 0;
    let mut ln = 0;
    while off < bytes.len() {
        ln += 1;
        let end = memchr::memchr(b'\n', &bytes[off..]).map_or(bytes.len(), |k| off + k);
        let line = &bytes[off..end];
        let next = (end + 1).min(bytes.len());
        let mut toks = text::tokens(line);
        match toks.next() {
            None => {}
            Some(a) if a[0] == b'#' || a[0] == b'%' => {}
            Some(a) => {
                let b = toks.next()?;
                let numeric = |t: &[u8]| t[0].is_ascii_digit() || t[0] == b'+';
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                return (!numeric(a) && !numeric(b)).then_some((ln, line, next));
            }
        }
        off = next;
    }
    None
}

/// `skip`: lines before `input` in the file (for error line numbers); `chunk`: the parallel
/// parse's piece size. `Auto` reads the lines as labels when some id is not an integer.
fn edges_from(
    input: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    skip: usize,
    chunk: Option<usize>,
) -> Result<Parsed> {
    match numeric_edges(input, name, opts, skip, chunk)? {
        Some(parsed) => Ok(parsed),
        None => parse_labels(input, name, opts, skip).map(Parsed::List),
    }
}

/// The edges of `input` read with integer ids ([`edges_from`]'s arguments): `Ok(None)` in
/// the `Labels` mode, and in `Auto` when some id is not an integer (the lines are labels
/// then); any other bad line is its error.
fn numeric_edges(
    input: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    skip: usize,
    chunk: Option<usize>,
) -> Result<Option<Parsed>> {
    match opts.ids {
        IdMode::Labels => Ok(None),
        IdMode::Numeric => match parse_numeric::<u32>(input, name, opts, true, skip, chunk)? {
            Outcome::Done(raw) => numeric_as_given(raw, name).map(Some),
            // Strict mode reports these as errors itself.
            Outcome::Wide | Outcome::NotNumeric => {
                Err(perr(name, None, K::BadValue, "non-numeric node id"))
            }
        },
        IdMode::Auto => match parse_numeric::<u32>(input, name, opts, false, skip, chunk)? {
            Outcome::Done(raw) => compact(raw, name).map(Some),
            Outcome::NotNumeric => Ok(None),
            Outcome::Wide => match parse_numeric::<u64>(input, name, opts, false, skip, chunk)? {
                Outcome::Done(raw) => compact(raw, name).map(Some),
                _ => Ok(None),
            },
        },
    }
}

// ---------------------------------------------------------------------------------------
// Field splitting shared by the slow paths.

/// Weight-column state: the option, and the decision taken on the first data line.
#[derive(Clone, Copy)]
pub(crate) struct Weights {
    opt: Option<bool>,
    auto: Option<bool>,
}

impl Weights {
    fn new(opts: &EdgeListOptions) -> Self {
        Self {
            opt: opts.weighted,
            auto: None,
        }
    }

    /// The weight column decided once, for every piece of a parallel parse: from the
    /// option, or else from the first data line of `buf` (weighted iff it has a third field).
    fn decide(buf: &[u8], opts: &EdgeListOptions) -> Self {
        let mut ws = Self::new(opts);
        if ws.opt.is_none() {
            for (_, line) in Lines::new(buf) {
                let mut toks = text::tokens(line);
                match toks.next() {
                    None => continue,
                    Some(a) if a[0] == b'#' || a[0] == b'%' => continue,
                    Some(_) => {
                        toks.next();
                        ws.auto = Some(toks.next().is_some());
                        break;
                    }
                }
            }
        }
        ws
    }
    pub(crate) fn weighted(&self) -> bool {
        self.opt.or(self.auto).unwrap_or(false)
    }
}

/// The two id fields and the weight of a data line.
type Fields<'a> = (&'a [u8], &'a [u8], Option<f64>);

/// The fields of one line: `None` for blank and comment lines.
fn fields<'a>(
    line: &'a [u8],
    ln: &dyn Fn() -> usize,
    name: &str,
    ws: &mut Weights,
) -> Result<Option<Fields<'a>>> {
    let mut toks = text::tokens(line);
    let Some(a) = toks.next() else {
        return Ok(None);
    };
    if a[0] == b'#' || a[0] == b'%' {
        return Ok(None);
    }
    let Some(b) = toks.next() else {
        return Err(perr(
            name,
            Some(ln()),
            K::Truncated,
            "a data line needs two node ids",
        ));
    };
    let c = toks.next();
    let d = toks.next();
    let weighted = match ws.opt {
        Some(false) => return Ok(Some((a, b, None))),
        Some(true) => true,
        None => *ws.auto.get_or_insert(c.is_some()),
    };
    if !weighted {
        if let Some(c) = c {
            return Err(perr(
                name,
                Some(ln()),
                K::BadValue,
                format!(
                    "unexpected third field {}: the first data line has no weight",
                    text::show(c)
                ),
            ));
        }
        return Ok(Some((a, b, None)));
    }
    let Some(c) = c else {
        return Err(perr(name, Some(ln()), K::Truncated, "missing weight"));
    };
    if let Some(d) = d {
        return Err(perr(
            name,
            Some(ln()),
            K::BadValue,
            format!("unexpected fourth field {}", text::show(d)),
        ));
    }
    let w = text::parse_f64(c)
        .filter(|w| w.is_finite())
        .ok_or_else(|| {
            perr(
                name,
                Some(ln()),
                K::BadValue,
                format!("weight {} is not a finite number", text::show(c)),
            )
        })?;
    Ok(Some((a, b, Some(w))))
}

/// A parse before the edges are numbered: integer ids below 2^32 numbered by a bitmap
/// (`map`; `None` keeps them as they are), ready for [`Graph`]'s build straight from the
/// parse's slots; or a finished [`EdgeList`] (labels, sparse or wide ids).
pub(crate) enum Parsed {
    Dense {
        raw: Raw<u32>,
        /// Number of nodes.
        n: usize,
        map: Option<DenseIds>,
        notes: Vec<String>,
    },
    List(EdgeList),
}

impl Parsed {
    fn note(&mut self, note: String) {
        match self {
            Parsed::Dense { notes, .. } => notes.push(note),
            Parsed::List(el) => el.notes.push(note),
        }
    }

    /// The node labels of a renumbered parse: the original ids, in increasing order.
    fn labels(map: &DenseIds) -> Vec<String> {
        map.map_ids(id_label)
    }

    /// The [`EdgeList`]: gaps closed, ids renumbered in place.
    fn into_edge_list(self) -> EdgeList {
        match self {
            Parsed::List(el) => el,
            Parsed::Dense {
                mut raw,
                n,
                map,
                notes,
            } => {
                raw.close_gaps();
                let labels = map.as_ref().map(|map| {
                    for v in [&mut raw.src, &mut raw.dst] {
                        v.par_chunks_mut(ID_CHUNK).for_each(|c| {
                            for x in c {
                                *x = map.get(*x);
                            }
                        });
                    }
                    Self::labels(map)
                });
                EdgeList {
                    num_nodes: n,
                    src: raw.src,
                    dst: raw.dst,
                    weights: raw.weights,
                    labels,
                    self_loops: raw.self_loops,
                    notes,
                }
            }
        }
    }

    /// The graph: a dense parse is built straight from its slots, renumbering on the fly.
    fn into_graph(self) -> Result<Graph> {
        match self {
            Parsed::List(el) => el.into_graph(),
            Parsed::Dense { raw, n, map, notes } => {
                let parts: Vec<(usize, usize)> = raw.parts.clone();
                let g = Graph::from_parts(
                    n,
                    &raw.src,
                    &raw.dst,
                    raw.weights.as_deref(),
                    &parts,
                    map.as_ref(),
                    raw.self_loops,
                    raw.counts.as_deref(),
                )?;
                drop(raw);
                let g = g.with_notes(notes);
                match map {
                    Some(map) => g.with_id_labels(map),
                    None => Ok(g),
                }
            }
        }
    }
}

/// One process's share of an integer-id edge list (see [`parse_part`]): its edges in file
/// order, ids as given, self-loops dropped.
pub(crate) struct PartEdges {
    pub(crate) src: Vec<u32>,
    pub(crate) dst: Vec<u32>,
    /// Ids of the self-loop lines (only with `loop_only_nodes`).
    pub(crate) loop_ids: Vec<u32>,
    pub(crate) self_loops: usize,
    /// Largest id seen, self-loops included.
    pub(crate) max: Option<u64>,
    /// The weights of `src`/`dst`'s edges, where the file has a weight column.
    pub(crate) weights: Option<Vec<f64>>,
}

/// The edges of `bytes`, whole lines of an integer-id edge list that begin after `skip`
/// lines of the file (so that errors name the file's line), parsed in parallel as
/// [`read_graph`] parses a whole file, with the weight column `ws` decided from the file's
/// head ([`weight_column`]) and no header line. `Wide` when some id is an integer of 2^32 - 1
/// or more, `NotNumeric` when some id is not an integer (the caller reads the whole file
/// instead, or reads it as labels); no data line is no edges.
pub(crate) fn parse_part(
    bytes: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    skip: usize,
    ws: Weights,
) -> Result<PartOutcome> {
    let empty = PartEdges {
        src: Vec::new(),
        dst: Vec::new(),
        loop_ids: Vec::new(),
        self_loops: 0,
        max: None,
        weights: ws.weighted().then(Vec::new),
    };
    let weighted = ws.weighted();
    match parse_numeric_with::<u32>(bytes, name, opts, false, skip, None, ws) {
        Ok(Outcome::Done(mut raw)) => {
            raw.close_gaps();
            Ok(PartOutcome::Edges(PartEdges {
                src: raw.src,
                dst: raw.dst,
                loop_ids: raw.loop_ids,
                self_loops: raw.self_loops,
                max: raw.max,
                weights: weighted.then(|| raw.weights.unwrap_or_default()),
            }))
        }
        Ok(Outcome::Wide) => Ok(PartOutcome::Wide),
        Ok(Outcome::NotNumeric) => Ok(PartOutcome::NotNumeric),
        Err(crate::Error::Parse(e)) if e.kind == K::Empty => Ok(PartOutcome::Edges(empty)),
        Err(e) => Err(e),
    }
}

/// What [`parse_part`] made of a byte range.
pub(crate) enum PartOutcome {
    /// Its edges.
    Edges(PartEdges),
    /// Some id is an integer too wide for 32 bits.
    Wide,
    /// Some id is not an integer.
    NotNumeric,
}

/// The graph of an integer-id edge list whose parts were parsed apart ([`parse_part`], every
/// part of the file in order, joined into `e`), numbered and built as
/// [`read_graph`] numbers and builds the whole file; `name` is the file name used in errors.
pub(crate) fn graph_from_part(e: PartEdges, opts: &EdgeListOptions, name: &str) -> Result<Graph> {
    let len = e.src.len();
    let raw = Raw {
        src: e.src,
        dst: e.dst,
        weights: e.weights,
        parts: vec![(0, len)],
        loop_ids: e.loop_ids,
        self_loops: e.self_loops,
        max: e.max,
        marks: None,
        counts: None,
    };
    let parsed = if opts.ids == IdMode::Numeric {
        numeric_as_given(raw, name)?
    } else {
        compact(raw, name)?
    };
    parsed.into_graph().context(|| name)
}

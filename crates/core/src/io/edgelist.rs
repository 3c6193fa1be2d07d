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
//! threads.
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

mod stream;

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
            if let Ok(mut el) = edges_from(rest, name, opts, skip, false, chunk) {
                el.note(format!(
                    "{name}:{ln}: skipped the header line {}",
                    text::show(line)
                ));
                return Ok(el);
            }
        }
    }
    edges_from(bytes, name, opts, 0, true, chunk)
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

/// `skip`: lines before `input` in the file (for error line numbers); `label_fallback`:
/// whether `Auto` may fall back to labels; `chunk`: the parallel parse's piece size.
fn edges_from(
    input: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    skip: usize,
    label_fallback: bool,
    chunk: Option<usize>,
) -> Result<Parsed> {
    let labels = |input: &[u8]| -> Result<Parsed> {
        if !label_fallback {
            return Err(perr(name, None, K::BadValue, "non-numeric node id"));
        }
        parse_labels(input, name, opts).map(Parsed::List)
    };
    match opts.ids {
        IdMode::Labels => labels(input),
        IdMode::Numeric => match parse_numeric::<u32>(input, name, opts, true, skip, chunk)? {
            Outcome::Done(raw) => numeric_as_given(raw, name),
            // Strict mode reports these as errors itself.
            Outcome::Wide | Outcome::NotNumeric => {
                Err(perr(name, None, K::BadValue, "non-numeric node id"))
            }
        },
        IdMode::Auto => match parse_numeric::<u32>(input, name, opts, false, skip, chunk)? {
            Outcome::Done(raw) => compact(raw, name),
            Outcome::NotNumeric => labels(input),
            Outcome::Wide => match parse_numeric::<u64>(input, name, opts, false, skip, chunk)? {
                Outcome::Done(raw) => compact(raw, name),
                _ => labels(input),
            },
        },
    }
}

// ---------------------------------------------------------------------------------------
// Field splitting shared by the slow paths.

/// Weight-column state: the option, and the decision taken on the first data line.
#[derive(Clone, Copy)]
struct Weights {
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
    fn weighted(&self) -> bool {
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

// ---------------------------------------------------------------------------------------
// Numeric ids.

/// Storage type for raw numeric ids: `u32` first, `u64` when some id needs it.
pub(crate) trait RawId: Copy + Ord + num_traits::Zero + Send + Sync + Into<u64> {
    fn from_u64(v: u64) -> Option<Self>;
    /// `v` as `Self`, for values known to fit.
    fn from_u64_unchecked(v: u64) -> Self;
    /// The ids as u32, for ids known to fit (free for u32).
    fn into_u32s(v: Vec<Self>) -> Vec<u32>;
}
impl RawId for u32 {
    #[inline]
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
    #[inline(always)]
    fn from_u64_unchecked(v: u64) -> Self {
        v as u32
    }
    fn into_u32s(v: Vec<Self>) -> Vec<u32> {
        v
    }
}
impl RawId for u64 {
    #[inline]
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
    #[inline(always)]
    fn from_u64_unchecked(v: u64) -> Self {
        v
    }
    fn into_u32s(v: Vec<Self>) -> Vec<u32> {
        v.into_iter().map(|x| x as u32).collect()
    }
}

/// A numeric parse: each part `(start, end)` of `src` / `dst` (and the weights) holds the
/// edges of one piece of the input, in input order; between the parts are unused slots.
pub(crate) struct Raw<I> {
    src: Vec<I>,
    dst: Vec<I>,
    weights: Option<Vec<f64>>,
    /// The filled ranges, in input order.
    parts: Vec<(usize, usize)>,
    /// Ids of self-loop lines (only kept when `loop_only_nodes`).
    loop_ids: Vec<I>,
    self_loops: usize,
    /// Largest id seen, self-loops included.
    max: Option<u64>,
    /// The ids of the edges, marked during the parse (every piece's), if it marked them.
    marks: Option<Vec<u64>>,
    /// The build's counts of every part (in order), when every piece made them.
    counts: Option<Vec<PartCounts>>,
}

enum Outcome<I> {
    Done(Raw<I>),
    /// Some id does not fit in `I`.
    Wide,
    /// Some id is not a non-negative integer.
    NotNumeric,
}

/// The value of the eight ASCII digits in `x` (first digit in the lowest byte); zero bytes
/// count as leading zeros.
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    let v = x & 0x0F0F_0F0F_0F0F_0F0F;
    let v = v.wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32
}

/// Number of leading ASCII digits in the eight bytes of `x` (lowest byte first).
#[inline(always)]
fn digit_run(x: u64) -> usize {
    const HI: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZERO: u64 = 0x3030_3030_3030_3030;
    // A byte is a digit iff its high nibble is 3 both before and after adding 6.
    let bad = ((x & HI) ^ ZERO) | ((x.wrapping_add(0x0606_0606_0606_0606) & HI) ^ ZERO);
    (bad.trailing_zeros() / 8) as usize
}

/// Scans decimal digits at `p`: the value and the position after them; `None` when there is
/// no digit or there are more than 19 (which the general path handles).
#[inline(always)]
fn scan_uint(buf: &[u8], p: usize) -> Option<(u64, usize)> {
    let (mut acc, mut q) = match buf.get(p..p + 8) {
        Some(c) => {
            let x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            let k = digit_run(x);
            if k == 0 {
                return None;
            }
            if k < 8 {
                return Some((eight_digits(x << (8 * (8 - k))), p + k));
            }
            (eight_digits(x), p + 8)
        }
        None => (0, p),
    };
    let start = p;
    while q < buf.len() {
        let d = buf[q].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        acc = acc.wrapping_mul(10).wrapping_add(d as u64);
        q += 1;
    }
    let nd = q - start;
    (nd > 0 && nd <= 19).then_some((acc, q))
}

#[inline(always)]
fn skip_blanks(buf: &[u8], mut p: usize) -> usize {
    while p < buf.len() && (buf[p] == b' ' || buf[p] == b'\t') {
        p += 1;
    }
    p
}

/// The common line `digits sep digits [sep weight] [seps] [\r] (\n | end)`, parsed without
/// allocation: `(u, v, weight, start of the next line)`. `None` sends the line to the
/// general path (which also produces the errors).
#[inline(always)]
fn fast_line(buf: &[u8], p: usize) -> Option<(u64, u64, Option<f64>, usize)> {
    let (u, q) = scan_uint(buf, p)?;
    let q2 = skip_blanks(buf, q);
    if q2 == q {
        return None;
    }
    let (v, q) = scan_uint(buf, q2)?;
    let mut q3 = skip_blanks(buf, q);
    let mut w = None;
    if q3 > q && q3 < buf.len() && buf[q3] != b'\r' && buf[q3] != b'\n' {
        let end = buf[q3..]
            .iter()
            .position(|&b| text::is_sep(b) || b == b'\n')
            .map_or(buf.len(), |k| q3 + k);
        let x = text::parse_f64(&buf[q3..end])?;
        if !x.is_finite() {
            return None;
        }
        w = Some(x);
        q3 = skip_blanks(buf, end);
    }
    let mut q = q3;
    if q < buf.len() && buf[q] == b'\r' {
        q += 1;
    }
    if q < buf.len() {
        if buf[q] != b'\n' {
            return None;
        }
        q += 1;
    }
    Some((u, v, w, q))
}

/// Bytes per block of [`NumParser::tight`]'s mask loop (plus 8 readable after it).
const BLOCK: usize = 64;

/// Bit `i` set when byte `i` of the first 64 of `blk` is not an ASCII digit: sixteen bytes
/// per compare (SSE2 on x86-64; against eight SWAR words, the parse of a scale-20 Kronecker
/// list takes about 5 % less).
#[inline(always)]
fn non_digits(blk: &[u8; BLOCK + 8]) -> u64 {
    use wide::u8x16;
    let mut m = 0u64;
    for q in 0..4 {
        let mut b = [0u8; 16];
        b.copy_from_slice(&blk[16 * q..16 * q + 16]);
        // b is a digit iff b - '0' <= 9, unsigned.
        let t = u8x16::from(b) - u8x16::splat(b'0');
        let digit = t.min(u8x16::splat(9)).cmp_eq(t);
        m |= u64::from(!(digit.move_mask() as u16)) << (16 * q);
    }
    m
}

/// Eight bytes of `blk` at `at`, as a little-endian word.
#[inline(always)]
fn load8(blk: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&blk[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The value of the `len` (1 to 15) ASCII digits of `blk` at `at`.
#[inline(always)]
fn digits_at(blk: &[u8; BLOCK + 8], at: usize, len: usize) -> u64 {
    const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    let x = load8(blk, at);
    if len <= 8 {
        return eight_digits(x << (8 * (8 - len)));
    }
    let hi = eight_digits(x);
    let lo = eight_digits(load8(blk, at + 8) << (8 * (16 - len)));
    hi * POW10[len - 8] + lo
}

/// Why a numeric parse gave up: the caller restarts with wider ids or with labels.
#[derive(Debug, Clone, Copy)]
enum Abort {
    Wide,
    NotNumeric,
}

impl<I> From<Abort> for Outcome<I> {
    fn from(a: Abort) -> Self {
        match a {
            Abort::Wide => Outcome::Wide,
            Abort::NotNumeric => Outcome::NotNumeric,
        }
    }
}

/// Parser of one piece of lines with integer ids, writing its edges into its own slots of
/// the edge arrays (`src` / `dst` / `wts`, as many slots as the piece has lines, so no
/// capacity check is needed per edge).
///
/// `strict` (numeric mode) reports non-integer or too large ids as errors instead of
/// aborting with [`Abort::NotNumeric`] / [`Abort::Wide`].
struct NumParser<'n, 's, I> {
    name: &'n str,
    strict: bool,
    keep_loops: bool,
    ws: Weights,
    src: &'s mut [I],
    dst: &'s mut [I],
    /// The weight slots (empty when unweighted).
    wts: &'s mut [f64],
    loop_ids: Vec<I>,
    self_loops: usize,
    max: u64,
    any: bool,
    /// Edges stored: `src[..len]`, `dst[..len]`.
    len: usize,
    marks: Marks,
}

/// The ids of a piece's edges (self-loops aside) marked in a bitmap as they are parsed, so
/// that numbering the ids in use needs no pass of its own; given up (`None`) when an id
/// needs more than `cap` words. Alongside, what the graph build would otherwise count in a
/// pass over the edges ([`PartCounts`]): the edge ends per word of the bitmap.
pub(crate) struct Marks {
    bits: Option<Vec<u64>>,
    /// Edge ends (two per edge) whose id is in word `w` of `bits`, for each `w`.
    ends: Vec<u32>,
    cap: usize,
}

impl Marks {
    /// No marking.
    fn off() -> Self {
        Self::with(None, 0)
    }

    /// Marking into at most `cap` words.
    fn on(cap: usize) -> Self {
        Self::with(Some(Vec::new()), cap)
    }

    fn with(bits: Option<Vec<u64>>, cap: usize) -> Self {
        Self {
            bits,
            ends: Vec::new(),
            cap,
        }
    }

    #[inline(always)]
    fn mark(&mut self, id: u64) {
        if let Some(bits) = &mut self.bits {
            let w = (id >> 6) as usize;
            if w >= bits.len() {
                if w >= self.cap {
                    self.bits = None;
                    self.ends = Vec::new();
                    return;
                }
                bits.resize((w + 1).next_power_of_two().min(self.cap), 0);
                self.ends.resize(bits.len(), 0);
            }
            bits[w] |= 1 << (id & 63);
            self.ends[w] = self.ends[w].wrapping_add(1);
        }
    }

    /// The build's counts of a piece of `len` edges, when it marked them (and no count can
    /// have wrapped).
    fn counts(&mut self, len: usize) -> Option<PartCounts> {
        (self.bits.is_some() && len <= (u32::MAX / 2) as usize).then(|| PartCounts {
            ends: std::mem::take(&mut self.ends),
        })
    }
}

/// What a piece's parse leaves besides the edges in its slots.
struct PieceOut<I> {
    len: usize,
    loop_ids: Vec<I>,
    self_loops: usize,
    max: u64,
    any: bool,
    /// The piece's ids marked, when it marked them ([`Marks`]).
    marks: Option<Vec<u64>>,
    /// The build's counts for the piece, when it marked its ids.
    counts: Option<PartCounts>,
}

impl<'n, 's, I: RawId> NumParser<'n, 's, I> {
    fn new(
        name: &'n str,
        opts: &EdgeListOptions,
        strict: bool,
        (src, dst, wts): Slots<'s, I>,
    ) -> Self {
        Self {
            name,
            strict,
            keep_loops: opts.loop_only_nodes,
            ws: Weights::new(opts),
            src,
            dst,
            wts,
            loop_ids: Vec::new(),
            self_loops: 0,
            max: 0,
            any: false,
            len: 0,
            marks: Marks::off(),
        }
    }

    fn finish(mut self) -> PieceOut<I> {
        let counts = self.marks.counts(self.len);
        PieceOut {
            len: self.len,
            loop_ids: self.loop_ids,
            self_loops: self.self_loops,
            max: self.max,
            any: self.any,
            marks: self.marks.bits,
            counts,
        }
    }

    /// The 1-based line of byte `p` within the piece (the caller adds the lines before it).
    #[cold]
    fn line(&self, buf: &[u8], p: usize) -> usize {
        text::line_of(buf, p)
    }

    /// Records one edge; `Ok(Some(_))` when the ids need a wider type.
    #[inline(always)]
    fn push(&mut self, u: u64, v: u64, w: f64, buf: &[u8], p: usize) -> Result<Option<Abort>> {
        let (Some(iu), Some(iv)) = (I::from_u64(u), I::from_u64(v)) else {
            if self.strict {
                return Err(self.too_large(u.max(v), buf, p));
            }
            return Ok(Some(Abort::Wide));
        };
        if self.strict && u.max(v) >= u32::MAX as u64 {
            return Err(self.too_large(u.max(v), buf, p));
        }
        self.any = true;
        self.max = self.max.max(u).max(v);
        if u == v {
            self.self_loops += 1;
            if self.keep_loops {
                self.loop_ids.push(iu);
            }
        } else {
            // A piece has a slot per line, and a line holds at most one edge.
            self.src[self.len] = iu;
            self.dst[self.len] = iv;
            if let Some(x) = self.wts.get_mut(self.len) {
                *x = w;
            }
            self.len += 1;
            self.marks.mark(u);
            self.marks.mark(v);
        }
        Ok(None)
    }

    /// The hot loop for unweighted lines `digits sep digits [\r] \n` with ids of at most 15
    /// digits: two or four eight-byte loads per line, no per-byte loop, edges written by
    /// index into the room of `src` / `dst`. Returns where it stopped (at the first line of
    /// any other shape, or an id too large for `I`, for the general loop to take).
    #[inline(never)]
    fn tight(&mut self, buf: &[u8], mut p: usize) -> usize {
        const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
        /// The number starting at `at` (at most 15 digits) and the offset after it.
        #[inline(always)]
        fn num(w: &[u8; WINDOW], at: usize) -> Option<(u64, usize)> {
            let x = load8(w, at);
            let k = digit_run(x);
            if k == 0 {
                return None;
            }
            if k < 8 {
                return Some((eight_digits(x << (8 * (8 - k))), at + k));
            }
            let hi = eight_digits(x);
            let y = load8(w, at + 8);
            let k2 = digit_run(y);
            if k2 == 0 {
                return Some((hi, at + 8));
            }
            if k2 == 8 {
                return None;
            }
            let lo = eight_digits(y << (8 * (8 - k2)));
            Some((hi * POW10[k2] + lo, at + 8 + k2))
        }
        // One parsed line `u v`: the edge into slot k, or a self-loop counted (and kept).
        #[inline(always)]
        fn record<I: PartialEq>(
            (iu, iv, u, v): (I, I, u64, u64),
            (src, dst, k): (&mut [I], &mut [I], &mut usize),
            (loops, kept): (&mut usize, Option<&mut Vec<I>>),
            marks: &mut Marks,
        ) {
            if iu != iv {
                src[*k] = iu;
                dst[*k] = iv;
                *k += 1;
                marks.mark(u);
                marks.mark(v);
            } else {
                *loops += 1;
                if let Some(kept) = kept {
                    kept.push(iu);
                }
            }
        }
        #[inline(always)]
        fn load8(w: &[u8; WINDOW], at: usize) -> u64 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&w[at..at + 8]);
            u64::from_le_bytes(b)
        }
        // A line of this shape is at most 15 + 1 + 15 + 2 bytes, and the loads read
        // at most 8 bytes past each number's start.
        const WINDOW: usize = 40;
        let start = p;
        let keep_loops = self.keep_loops;
        // Ids at or above this go to the general path (which reports or widens).
        let limit = if self.strict || I::from_u64(u32::MAX as u64 + 1).is_none() {
            u32::MAX as u64
        } else {
            u64::MAX
        };
        let mut max = self.max;
        let mut loops = 0usize;
        let mut k = self.len;
        let cap = self.src.len().min(self.dst.len());
        let src = &mut self.src[..cap];
        let dst = &mut self.dst[..cap];
        let loop_ids = &mut self.loop_ids;
        // A local for the loop (put back below), so that its bitmap's pointer and length
        // stay in registers instead of being reloaded after every store to the slots.
        let mut own_marks = std::mem::replace(&mut self.marks, Marks::off());
        let marks = &mut own_marks;
        // Blocks of 64 bytes starting at a line start: one mask of the non-digit bytes per
        // block, then every complete line in it read off the mask (the next line's start
        // comes from a shift and a trailing-zero count, not from the previous line's
        // digits: the lines' work overlaps). A line that runs past the block starts the
        // next block; the last bytes of the piece go to the per-line loop below.
        'blocks: while k < cap {
            let Some(blk) = buf.get(p..p + BLOCK + 8) else {
                break;
            };
            let Ok(blk) = <&[u8; BLOCK + 8]>::try_from(blk) else {
                break;
            };
            let mask = non_digits(blk);
            let mut a = 0usize;
            loop {
                // u: digits at a..a + e1, one separator, v: digits up to e, a line end.
                let e1 = (mask >> a).trailing_zeros() as usize;
                let s1 = a + e1;
                if e1 == 0 || e1 > 15 || s1 + 1 >= BLOCK || (blk[s1] != b'\t' && blk[s1] != b' ') {
                    break;
                }
                let k2 = (mask >> (s1 + 1)).trailing_zeros() as usize;
                let e = s1 + 1 + k2;
                if k2 == 0 || k2 > 15 || e >= BLOCK {
                    break;
                }
                let next = match blk[e] {
                    b'\n' => e + 1,
                    b'\r' if blk[e + 1] == b'\n' => e + 2,
                    _ => break,
                };
                let u = digits_at(blk, a, e1);
                let v = digits_at(blk, s1 + 1, k2);
                let big = u.max(v);
                if big >= limit || k >= cap {
                    break;
                }
                max = max.max(big);
                let (iu, iv) = (I::from_u64_unchecked(u), I::from_u64_unchecked(v));
                record(
                    (iu, iv, u, v),
                    (src, dst, &mut k),
                    (&mut loops, keep_loops.then_some(&mut *loop_ids)),
                    marks,
                );
                a = next;
                if a >= BLOCK {
                    p += a;
                    continue 'blocks;
                }
            }
            if a == 0 {
                // Not a plain line: the loop below (or the general path) takes it.
                break;
            }
            p += a;
        }
        while k < cap {
            let Some(w) = buf.get(p..p + WINDOW) else {
                break;
            };
            let Ok(w) = <&[u8; WINDOW]>::try_from(w) else {
                break;
            };
            let Some((u, e1)) = num(w, 0) else {
                break;
            };
            if w[e1] != b'\t' && w[e1] != b' ' {
                break;
            }
            let Some((v, e)) = num(w, e1 + 1) else {
                break;
            };
            let next = match w[e] {
                b'\n' => e + 1,
                b'\r' if w[e + 1] == b'\n' => e + 2,
                _ => break,
            };
            let big = u.max(v);
            if big >= limit {
                break;
            }
            max = max.max(big);
            let (iu, iv) = (I::from_u64_unchecked(u), I::from_u64_unchecked(v));
            record(
                (iu, iv, u, v),
                (src, dst, &mut k),
                (&mut loops, keep_loops.then_some(&mut *loop_ids)),
                marks,
            );
            p += next;
        }
        self.len = k;
        self.any |= p > start;
        self.max = max;
        self.self_loops += loops;
        self.marks = own_marks;
        p
    }

    #[cold]
    fn too_large(&self, id: u64, buf: &[u8], p: usize) -> crate::Error {
        perr(
            self.name,
            Some(self.line(buf, p)),
            K::IndexOutOfRange,
            format!("node id {id} does not fit in 32 bits"),
        )
    }

    /// Parses every line of the piece `buf`; `Ok(Err(_))`: why the numeric parse gave up.
    fn parse(&mut self, buf: &[u8]) -> Result<std::result::Result<(), Abort>> {
        let n = buf.len();
        let mut p = 0usize;
        while p < n {
            if self.ws.opt.or(self.ws.auto) == Some(false) {
                p = self.tight(buf, p);
                if p >= n {
                    break;
                }
            }
            let b = buf[p];
            if b.is_ascii_digit() {
                if let Some((u, v, w, next)) = fast_line(buf, p) {
                    let ok = match (self.ws.opt.or(self.ws.auto), w) {
                        (None, w) => {
                            self.ws.auto = Some(w.is_some());
                            true
                        }
                        (Some(true), Some(_)) | (Some(false), None) => true,
                        (Some(false), Some(_)) => self.ws.opt == Some(false),
                        (Some(true), None) => false,
                    };
                    if ok {
                        if let Some(a) = self.push(u, v, w.unwrap_or(1.0), buf, p)? {
                            return Ok(Err(a));
                        }
                        p = next;
                        continue;
                    }
                }
            } else if b == b'#' || b == b'%' {
                p = memchr::memchr(b'\n', &buf[p..]).map_or(n, |k| p + k + 1);
                continue;
            } else if b == b'\n' {
                p += 1;
                continue;
            }
            // General path for this one line.
            let end = memchr::memchr(b'\n', &buf[p..]).map_or(n, |k| p + k);
            let line = &buf[p..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let ln = || self.line(buf, p);
            let mut ws = self.ws;
            let f = fields(line, &ln, self.name, &mut ws)?;
            self.ws = ws;
            if let Some((a, c, w)) = f {
                match (text::parse_u64(a), text::parse_u64(c)) {
                    (Some(u), Some(v)) => {
                        if let Some(a) = self.push(u, v, w.unwrap_or(1.0), buf, p)? {
                            return Ok(Err(a));
                        }
                    }
                    (x, _) => {
                        if self.strict {
                            let bad = if x.is_none() { a } else { c };
                            return Err(perr(
                                self.name,
                                Some(self.line(buf, p)),
                                K::BadValue,
                                format!(
                                    "node id {} is not a non-negative integer",
                                    text::show(bad)
                                ),
                            ));
                        }
                        return Ok(Err(Abort::NotNumeric));
                    }
                }
            }
            p = end + 1;
        }
        Ok(Ok(()))
    }
}

/// One piece's slots: sources, targets, weights (empty when unweighted).
type Slots<'s, I> = (&'s mut [I], &'s mut [I], &'s mut [f64]);

/// Size of the pieces the input is parsed in (in parallel): at least this, and a few per
/// thread.
const CHUNK: usize = 1 << 20;

/// The pieces of `buf` for the parallel parse, each ending just after a line break (the
/// last at the end of the input): a few per thread, at least [`CHUNK`] bytes, or about
/// `chunk` bytes when given. Where the pieces fall never changes the result (they are
/// joined in order).
fn pieces(buf: &[u8], chunk: Option<usize>) -> Vec<(usize, usize)> {
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
fn parse_numeric<I: RawId + Send + Sync>(
    buf: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    strict: bool,
    skip: usize,
    chunk: Option<usize>,
) -> Result<Outcome<I>> {
    let ws = Weights::decide(buf, opts);
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
    fn assemble(
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
    fn len(&self) -> usize {
        self.parts.iter().map(|&(a, b)| b - a).sum()
    }

    /// Closes the gaps between the parts (one memmove per part, in order), so that the
    /// edges are `src[..len]` / `dst[..len]`.
    fn close_gaps(&mut self) {
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
    fn part_slices(&self) -> impl Iterator<Item = &[I]> {
        self.parts
            .iter()
            .flat_map(|&(a, b)| [&self.src[a..b], &self.dst[a..b]])
    }
}

/// Ids per parallel task when numbering.
const ID_CHUNK: usize = 1 << 16;

/// Numeric mode: ids as given.
fn numeric_as_given(raw: Raw<u32>, name: &str) -> Result<Parsed> {
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
fn mark_ids<I: RawId>(raw: &Raw<I>, words: usize) -> Vec<u64> {
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
fn compact<I: RawId>(mut raw: Raw<I>, name: &str) -> Result<Parsed> {
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

// ---------------------------------------------------------------------------------------
// Labels.

fn parse_labels<'a>(buf: &'a [u8], name: &str, opts: &EdgeListOptions) -> Result<EdgeList> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*).
    fn rng(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// An edge list with everything the reader must handle: comments (at the top and
    /// between data lines), blank lines, CRLF and LF line ends, tabs and spaces, self-loops,
    /// duplicates and reversed duplicates, ids with gaps (so they are renumbered), and an
    /// optional weight column. No final line break.
    pub(super) fn messy_text(lines: usize, max_id: u64, weighted: bool, seed: u64) -> String {
        let mut st = seed;
        let mut t = String::from("# a comment\n% another\n\n");
        for i in 0..lines {
            let r = rng(&mut st);
            let u = 3 * (rng(&mut st) % max_id) + 1;
            let v = match r % 10 {
                0 => u,                          // self-loop
                1 => 3 * (rng(&mut st) % 4) + 1, // a hub: many duplicates
                _ => 3 * (rng(&mut st) % max_id) + 1,
            };
            let sep = if r.is_multiple_of(3) { "\t" } else { " " };
            let end = if r.is_multiple_of(4) { "\r\n" } else { "\n" };
            if weighted {
                t.push_str(&format!("{u}{sep}{v}{sep}{}.5{end}", r % 7));
            } else {
                t.push_str(&format!("{u}{sep}{v}{end}"));
            }
            if i.is_multiple_of(97) {
                t.push_str("# between\n\n");
            }
        }
        t.pop();
        t
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// The parse and the graph under `threads` threads and pieces of about `chunk` bytes.
    fn read_with(
        text: &str,
        opts: &EdgeListOptions,
        threads: usize,
        chunk: Option<usize>,
    ) -> (EdgeList, Graph) {
        pool(threads).install(|| {
            let el = parse_in(text.as_bytes(), "t", opts, chunk)
                .unwrap()
                .into_edge_list();
            let g = parse_in(text.as_bytes(), "t", opts, chunk)
                .unwrap()
                .into_graph()
                .unwrap();
            (el, g)
        })
    }

    #[test]
    fn results_do_not_depend_on_threads_or_pieces() {
        for (weighted, ids, loops) in [
            (false, IdMode::Auto, false),
            (true, IdMode::Auto, false),
            (false, IdMode::Auto, true),
            (false, IdMode::Numeric, false),
            (true, IdMode::Labels, false),
        ] {
            let text = messy_text(3000, 500, weighted, 7);
            let opts = EdgeListOptions {
                ids,
                loop_only_nodes: loops,
                ..Default::default()
            };
            let (el, g) = read_with(&text, &opts, 1, None);
            assert!(el.len() > 2000 && el.self_loops > 100);
            assert_eq!(el.weights.is_some(), weighted);
            // Auto renumbers (ids 1, 4, 7, ...), Numeric keeps ids (isolated gaps).
            assert_eq!(el.labels.is_some(), ids != IdMode::Numeric);
            // The graph built straight from the parse equals the one built from the list.
            assert_eq!(g, el.clone().into_graph().unwrap());
            for (threads, chunk) in [(4, None), (1, Some(64)), (3, Some(7)), (4, Some(1))] {
                let (el2, g2) = read_with(&text, &opts, threads, chunk);
                assert_eq!(el2, el, "{threads} threads, pieces of {chunk:?}");
                assert_eq!(g2, g, "{threads} threads, pieces of {chunk:?}");
            }
        }
    }

    #[test]
    fn block_parser_matches_the_line_parser() {
        // Ids of 1 to 17 characters (leading zeros make long tokens of small values),
        // single and double separators, trailing blanks, CRLF, signs, self-loops: pieces
        // of whole files take the 64-byte block loop, one-line pieces (shorter than a
        // block) the per-line loop and the general path; they must agree everywhere.
        let mut st = 11u64;
        let mut t = String::new();
        for _ in 0..20_000 {
            let id = |st: &mut u64| {
                let r = rng(st);
                let v = rng(st) % 5000;
                let width = (r % 17 + 1) as usize;
                format!("{v:0width$}")
            };
            let r = rng(&mut st);
            let u = id(&mut st);
            let v = if r.is_multiple_of(23) {
                u.clone()
            } else {
                id(&mut st)
            };
            let sep = ["\t", " ", "  ", " \t"][(r >> 8) as usize % 4];
            let sign = if r.is_multiple_of(97) { "+" } else { "" };
            let tail = ["", "", "", " ", "\t"][(r >> 16) as usize % 5];
            let end = if (r >> 24).is_multiple_of(3) {
                "\r\n"
            } else {
                "\n"
            };
            t.push_str(&format!("{sign}{u}{sep}{v}{tail}{end}"));
        }
        for ids in [IdMode::Auto, IdMode::Numeric] {
            let opts = EdgeListOptions {
                ids,
                ..Default::default()
            };
            let (el, g) = read_with(&t, &opts, 2, None);
            assert!(el.len() > 15_000 && el.self_loops > 500, "{}", el.len());
            let (el1, g1) = read_with(&t, &opts, 2, Some(1));
            assert_eq!(el, el1);
            assert_eq!(g, g1);
        }
    }

    #[test]
    fn errors_in_a_later_piece_name_the_file_line() {
        let mut text = messy_text(600, 50, false, 3);
        let line = text.lines().count() + 1;
        text.push_str("\n5 x7\n1 2\n");
        for ids in [IdMode::Auto, IdMode::Numeric] {
            let opts = EdgeListOptions {
                ids,
                weighted: Some(false),
                ..Default::default()
            };
            for (threads, chunk) in [(1, None), (4, Some(16)), (2, Some(1))] {
                let r = pool(threads).install(|| parse_in(text.as_bytes(), "f.txt", &opts, chunk));
                match (ids, r) {
                    // Auto falls back to labels: `x7` is a label.
                    (IdMode::Auto, Ok(p)) => assert!(p.into_edge_list().labels.is_some()),
                    (IdMode::Numeric, Err(crate::Error::Parse(e))) => {
                        assert_eq!(e.line, Some(line), "{e}");
                        assert!(e.to_string().contains("f.txt"), "{e}");
                        assert!(e.to_string().contains("x7"), "{e}");
                    }
                    (_, r) => panic!("{ids:?}: {:?}", r.map(|p| p.into_edge_list())),
                }
            }
        }
        // A line with one field, deep in the file.
        let mut text = messy_text(600, 50, false, 4);
        let line = text.lines().count() + 1;
        text.push_str("\n17\n");
        for (threads, chunk) in [(1, None), (4, Some(16))] {
            let e = pool(threads)
                .install(|| parse_in(text.as_bytes(), "g.txt", &EdgeListOptions::default(), chunk))
                .map(|p| p.into_edge_list())
                .unwrap_err();
            let crate::Error::Parse(e) = e else {
                panic!("{e}")
            };
            assert_eq!(e.line, Some(line), "{e}");
        }
    }

    #[test]
    fn swar_digits_match_the_plain_parser() {
        let cases: &[&[u8]] = &[
            b"0",
            b"7\t",
            b"12 ",
            b"123456\n",
            b"1234567 8",
            b"12345678",
            b"123456789\t1",
            b"9999999999999999999",
            b"99999999999999999999",
            b"00000000000000012",
            b"x1",
            b"",
            b"42",
            b"4294967296 ",
            b"18446744073709551615",
        ];
        for c in cases {
            let end = c
                .iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(c.len());
            let want = if end == 0 || end > 19 {
                None
            } else {
                text::parse_u64(&c[..end]).map(|v| (v, end))
            };
            assert_eq!(scan_uint(c, 0), want, "{:?}", String::from_utf8_lossy(c));
            // And in the middle of a longer buffer.
            let mut b = b"ab".to_vec();
            b.extend_from_slice(c);
            b.extend_from_slice(b"\n0123456789");
            let got = scan_uint(&b, 2).map(|(v, p)| (v, p - 2));
            let end2 = b[2..].iter().position(|x| !x.is_ascii_digit()).unwrap();
            let want2 = if end2 == 0 || end2 > 19 {
                None
            } else {
                text::parse_u64(&b[2..2 + end2]).map(|v| (v, end2))
            };
            assert_eq!(got, want2, "{:?}", String::from_utf8_lossy(c));
        }
        for k in 0..200u64 {
            let v = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (k % 64);
            let s = format!("{v} ");
            let want = (s.len() - 1 <= 19).then_some((v, s.len() - 1));
            assert_eq!(scan_uint(s.as_bytes(), 0), want);
        }
    }
}

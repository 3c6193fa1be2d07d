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
//! Integer-id files are read in 1 MiB pieces (no whole-file buffer) by a single-pass byte
//! parser: eight digits at a time, no per-line allocation, no UTF-8 checks; lines of
//! another shape, and label files (read whole), take a line-by-line tokenizer. The graph is
//! then built in linear time (see `benches/benches/read.rs` for the throughput benchmark).
//!
//! [`ParseErrorKind::IndexOutOfRange`]: crate::ParseErrorKind::IndexOutOfRange

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::text::{self, Lines};
use super::{perr, refuse, Detected, Input};
use crate::alloc;
use crate::error::{ParseErrorKind as K, Result, ResultExt};
use crate::graph::Graph;

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
pub fn read_graph(path: impl AsRef<Path>, opts: &EdgeListOptions) -> Result<Graph> {
    let path = path.as_ref();
    read_edges(path, opts)?
        .into_graph()
        .context(|| path.display())
}

/// Reads an edge-list file into an [`EdgeList`] (parsing and numbering, no graph build).
///
/// The input is read once ([`Input::read`]: `-` is standard input, gzip is decompressed) and
/// parsed in parallel pieces.
pub fn read_edges(path: impl AsRef<Path>, opts: &EdgeListOptions) -> Result<EdgeList> {
    let input = Input::read(path)?;
    match input.detect() {
        Detected::Text => parse_edges(&input.bytes, &input.name, opts),
        other => Err(refuse(&input.name, other, "an edge list")),
    }
}

/// Parses edge-list bytes into a graph; `name` is the file name used in errors.
pub fn parse_edge_list(bytes: &[u8], name: &str, opts: &EdgeListOptions) -> Result<Graph> {
    parse_edges(bytes, name, opts)?
        .into_graph()
        .context(|| name)
}

/// Parses edge-list bytes into an [`EdgeList`]; `name` is the file name used in errors.
///
/// A leading UTF-8 byte-order mark is ignored. In the `Auto` and `Numeric` modes a first data
/// line whose two id fields are both non-numeric, followed by numeric lines, is a column
/// header (`source target`): it is skipped and reported in [`EdgeList::notes`].
pub fn parse_edges(bytes: &[u8], name: &str, opts: &EdgeListOptions) -> Result<EdgeList> {
    let bytes = super::strip_bom(bytes);
    if opts.ids != IdMode::Labels {
        if let Some((ln, line, rest_at)) = header_line(bytes) {
            let rest = &bytes[rest_at..];
            let skip = memchr::memchr_iter(b'\n', &bytes[..rest_at]).count();
            if let Ok(mut el) = edges_from(rest, name, opts, skip, false) {
                el.notes.push(format!(
                    "{name}:{ln}: skipped the header line {}",
                    text::show(line)
                ));
                return Ok(el);
            }
        }
    }
    edges_from(bytes, name, opts, 0, true)
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
/// whether `Auto` may fall back to labels.
fn edges_from(
    input: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    skip: usize,
    label_fallback: bool,
) -> Result<EdgeList> {
    let labels = |input: &[u8]| -> Result<EdgeList> {
        if !label_fallback {
            return Err(perr(name, None, K::BadValue, "non-numeric node id"));
        }
        parse_labels(input, name, opts)
    };
    match opts.ids {
        IdMode::Labels => labels(input),
        IdMode::Numeric => match parse_numeric::<u32>(input, name, opts, true, skip)? {
            Outcome::Done(raw) => numeric_as_given(raw, name),
            // Strict mode reports these as errors itself.
            Outcome::Wide | Outcome::NotNumeric => {
                Err(perr(name, None, K::BadValue, "non-numeric node id"))
            }
        },
        IdMode::Auto => match parse_numeric::<u32>(input, name, opts, false, skip)? {
            Outcome::Done(raw) => compact(raw, name),
            Outcome::NotNumeric => labels(input),
            Outcome::Wide => match parse_numeric::<u64>(input, name, opts, false, skip)? {
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
trait RawId: Copy + Ord + Default + Send + Sync + Into<u64> {
    fn from_u64(v: u64) -> Option<Self>;
    fn from_u32(v: u32) -> Self;
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
    #[inline]
    fn from_u32(v: u32) -> Self {
        v
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
    #[inline]
    fn from_u32(v: u32) -> Self {
        v as u64
    }
    #[inline(always)]
    fn from_u64_unchecked(v: u64) -> Self {
        v
    }
    fn into_u32s(v: Vec<Self>) -> Vec<u32> {
        v.into_iter().map(|x| x as u32).collect()
    }
}

struct Raw<I> {
    src: Vec<I>,
    dst: Vec<I>,
    weights: Option<Vec<f64>>,
    /// Ids of self-loop lines (only kept when `loop_only_nodes`).
    loop_ids: Vec<I>,
    self_loops: usize,
    /// Largest id seen, self-loops included.
    max: Option<u64>,
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

/// Incremental parser of lines with integer ids: [`NumParser::feed`] takes the input in
/// pieces (the complete lines of each), so a file can be read in chunks that stay in cache.
///
/// `strict` (numeric mode) reports non-integer or too large ids as errors instead of
/// aborting with [`Abort::NotNumeric`] / [`Abort::Wide`].
struct NumParser<'n, I> {
    name: &'n str,
    strict: bool,
    keep_loops: bool,
    ws: Weights,
    src: Vec<I>,
    dst: Vec<I>,
    wts: Vec<f64>,
    loop_ids: Vec<I>,
    self_loops: usize,
    max: u64,
    any: bool,
    /// Lines in the pieces already consumed.
    lines_before: usize,
    /// Edges stored during [`NumParser::feed`]: `src[..len]`, `dst[..len]`; the rest of
    /// `src` / `dst` is room, written by index (no capacity check per edge).
    len: usize,
}

impl<'n, I: RawId> NumParser<'n, I> {
    fn new(name: &'n str, opts: &EdgeListOptions, strict: bool) -> Self {
        Self {
            name,
            strict,
            keep_loops: opts.loop_only_nodes,
            ws: Weights::new(opts),
            src: Vec::new(),
            dst: Vec::new(),
            wts: Vec::new(),
            loop_ids: Vec::new(),
            self_loops: 0,
            max: 0,
            any: false,
            lines_before: 0,
            len: 0,
        }
    }

    /// Stores an edge at `len`, growing the room when it is full.
    #[inline(always)]
    fn store(&mut self, iu: I, iv: I) {
        if self.len >= self.src.len() || self.len >= self.dst.len() {
            let want = self.len + self.len.max(1024);
            self.src.resize(want, I::default());
            self.dst.resize(want, I::default());
        }
        self.src[self.len] = iu;
        self.dst[self.len] = iv;
        self.len += 1;
    }

    /// Room for `edges` more edges (fallible: the size comes from the input).
    fn reserve(&mut self, edges: usize) -> Result<()> {
        let name = self.name;
        let what = || format!("parsing {edges} edge lines");
        let e = |e: alloc::AllocError| perr(name, None, K::TooLarge, e.to_string());
        alloc::try_reserve(&mut self.src, edges, what).map_err(e)?;
        alloc::try_reserve(&mut self.dst, edges, what).map_err(e)?;
        if self.ws.weighted() {
            alloc::try_reserve(&mut self.wts, edges, what).map_err(e)?;
        }
        Ok(())
    }

    /// The 1-based line of byte `p` of the current piece.
    fn line(&self, buf: &[u8], p: usize) -> usize {
        self.lines_before + text::line_of(buf, p)
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
            self.store(iu, iv);
            if self.ws.weighted() {
                self.wts.push(w);
            }
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
            if u != v {
                src[k] = iu;
                dst[k] = iv;
                k += 1;
            } else {
                loops += 1;
                if keep_loops {
                    loop_ids.push(iu);
                }
            }
            p += next;
        }
        self.len = k;
        self.any |= p > start;
        self.max = max;
        self.self_loops += loops;
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

    /// Parses the complete lines of `buf` (all of it when `last`); returns the bytes
    /// consumed, or why the numeric parse gave up.
    fn feed(&mut self, buf: &[u8], last: bool) -> Result<std::result::Result<usize, Abort>> {
        // The reserved room becomes writable slots; cut back to the edges stored after.
        let room = self.src.capacity().max(self.dst.capacity()).max(self.len);
        self.src.resize(room, I::default());
        self.dst.resize(room, I::default());
        let r = self.feed_lines(buf, last);
        self.src.truncate(self.len);
        self.dst.truncate(self.len);
        r
    }

    fn feed_lines(&mut self, buf: &[u8], last: bool) -> Result<std::result::Result<usize, Abort>> {
        let limit = if last {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', buf) {
                Some(k) => k + 1,
                None => return Ok(Ok(0)),
            }
        };
        let buf = &buf[..limit];
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
        self.lines_before += memchr::memchr_iter(b'\n', buf).count();
        Ok(Ok(limit))
    }
}

/// Size of the pieces the input is parsed in (in parallel): at least this, and a few per
/// thread.
const CHUNK: usize = 1 << 20;

/// Runs the numeric parser over the whole input: pieces split at line breaks, parsed in
/// parallel, joined in order (the first piece that fails decides, as a sequential parse
/// would). `skip`: lines before `buf` in the file, for error line numbers.
fn parse_numeric<I: RawId + Send + Sync>(
    buf: &[u8],
    name: &str,
    opts: &EdgeListOptions,
    strict: bool,
    skip: usize,
) -> Result<Outcome<I>> {
    use rayon::prelude::*;
    // Decide the weight column from the first data line once, for every piece.
    let mut ws = Weights::new(opts);
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
    // Piece boundaries, each just after a line break.
    let threads = rayon::current_num_threads().max(1);
    let target = (buf.len() / (threads * 4)).max(CHUNK);
    let mut bounds = vec![0usize];
    let mut at = 0usize;
    while at < buf.len() {
        let want = at.saturating_add(target);
        let end = if want >= buf.len() {
            buf.len()
        } else {
            memchr::memchr(b'\n', &buf[want..]).map_or(buf.len(), |k| want + k + 1)
        };
        bounds.push(end);
        at = end;
    }
    let pieces: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let parsed: Vec<Result<std::result::Result<NumParser<'_, I>, Abort>>> = pieces
        .par_iter()
        .map(|&(a, b)| {
            let piece = &buf[a..b];
            let mut p = NumParser::<I>::new(name, opts, strict);
            p.ws = ws;
            p.reserve(memchr::memchr_iter(b'\n', piece).count() + 1)?;
            Ok(p.feed(piece, true)?.map(|_| p))
        })
        .collect();
    let mut parts = Vec::with_capacity(parsed.len());
    for (k, r) in parsed.into_iter().enumerate() {
        match r {
            Ok(Ok(p)) => parts.push(p),
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
    }
    join(parts, name)
}

/// Joins the pieces' results in order.
fn join<I: RawId + Send + Sync>(parts: Vec<NumParser<'_, I>>, name: &str) -> Result<Outcome<I>> {
    use rayon::prelude::*;
    let too_large = |e: alloc::AllocError| perr(name, None, K::TooLarge, e.to_string());
    if !parts.iter().any(|p| p.any) {
        return Err(perr(name, None, K::Empty, "no edges in the file"));
    }
    let weighted = parts[0].ws.weighted();
    let total: usize = parts.iter().map(|p| p.src.len()).sum();
    let max = parts.iter().map(|p| p.max).max().unwrap_or(0);
    let self_loops = parts.iter().map(|p| p.self_loops).sum();
    let what = || format!("{total} edges");
    // Concatenate in parallel: each piece copies into its own slice of the result.
    fn concat<T: Copy + Default + Send + Sync>(
        parts: &[&[T]],
        total: usize,
        what: impl FnOnce() -> String,
    ) -> std::result::Result<Vec<T>, alloc::AllocError> {
        if parts.len() == 1 {
            return Ok(parts[0].to_vec());
        }
        let mut out = alloc::try_vec(total, T::default(), what)?;
        let mut rest = &mut out[..];
        let mut slices = Vec::with_capacity(parts.len());
        for p in parts {
            let (a, b) = rest.split_at_mut(p.len());
            slices.push(a);
            rest = b;
        }
        slices
            .into_par_iter()
            .zip(parts.par_iter())
            .for_each(|(dst, src)| dst.copy_from_slice(src));
        Ok(out)
    }
    let src = concat(
        &parts.iter().map(|p| &p.src[..]).collect::<Vec<_>>(),
        total,
        what,
    )
    .map_err(too_large)?;
    let dst = concat(
        &parts.iter().map(|p| &p.dst[..]).collect::<Vec<_>>(),
        total,
        what,
    )
    .map_err(too_large)?;
    let weights = if weighted {
        Some(
            concat(
                &parts.iter().map(|p| &p.wts[..]).collect::<Vec<_>>(),
                total,
                what,
            )
            .map_err(too_large)?,
        )
    } else {
        None
    };
    let loop_ids = parts
        .iter()
        .flat_map(|p| p.loop_ids.iter().copied())
        .collect();
    Ok(Outcome::Done(Raw {
        src,
        dst,
        weights,
        loop_ids,
        self_loops,
        max: Some(max),
    }))
}

/// Numeric mode: ids as given.
fn numeric_as_given(raw: Raw<u32>, name: &str) -> Result<EdgeList> {
    let n = raw.max.map_or(0, |m| m as usize + 1);
    if u32::try_from(n).is_err() {
        return Err(perr(
            name,
            None,
            K::IndexOutOfRange,
            "node ids exceed 32 bits",
        ));
    }
    Ok(EdgeList {
        num_nodes: n,
        src: raw.src,
        dst: raw.dst,
        weights: raw.weights,
        labels: None,
        self_loops: raw.self_loops,
        notes: Vec::new(),
    })
}

/// The decimal text of an id.
fn id_label(mut v: u64) -> String {
    let mut b = [0u8; 20];
    let mut k = b.len();
    loop {
        k -= 1;
        b[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    b[k..].iter().map(|&c| c as char).collect()
}

/// Ids per parallel task when numbering.
const ID_CHUNK: usize = 1 << 16;

/// Auto mode with integer ids: the ids in use, in increasing order.
fn compact<I: RawId>(raw: Raw<I>, name: &str) -> Result<EdgeList> {
    let Raw {
        src,
        dst,
        weights,
        loop_ids,
        self_loops,
        max,
    } = raw;
    let max = max.unwrap_or(0);
    let occurrences = src.len() * 2 + loop_ids.len();
    let dense = max < u32::MAX as u64 && max <= (occurrences as u64).saturating_mul(8) + 65536;
    let (num_nodes, src, dst, labels) = if dense {
        // A bitmap of the ids in use (max / 8 bytes: stays in cache), set in parallel, and
        // per-word ranks.
        let words = (max as usize >> 6) + 1;
        let bits: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
        for ids in [&src, &dst, &loop_ids] {
            ids.par_chunks(ID_CHUNK).for_each(|c| {
                for &id in c {
                    let id: u64 = id.into();
                    let (w, b) = (&bits[(id >> 6) as usize], 1u64 << (id & 63));
                    // Most ids repeat: test before the (locked) write.
                    if w.load(Ordering::Relaxed) & b == 0 {
                        w.fetch_or(b, Ordering::Relaxed);
                    }
                }
            });
        }
        let bits: Vec<u64> = bits.into_iter().map(AtomicU64::into_inner).collect();
        let mut rank = vec![0u32; words];
        let mut count: u64 = 0;
        for (r, &w) in rank.iter_mut().zip(&bits) {
            *r = count as u32;
            count += w.count_ones() as u64;
        }
        let n = count as usize;
        if count == max + 1 {
            // Every id 0..=max is used: keep the numbering, no labels.
            (n, I::into_u32s(src), I::into_u32s(dst), None)
        } else {
            let relabel = |mut v: Vec<I>| -> Vec<u32> {
                v.par_iter_mut().for_each(|x| {
                    let id: u64 = (*x).into();
                    let w = (id >> 6) as usize;
                    *x = I::from_u32(rank[w] + (bits[w] & ((1u64 << (id & 63)) - 1)).count_ones());
                });
                I::into_u32s(v)
            };
            let mut labels = Vec::with_capacity(n);
            for (w, &word) in bits.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    let b = word.trailing_zeros() as u64;
                    labels.push(id_label(((w as u64) << 6) | b));
                    word &= word - 1;
                }
            }
            (n, relabel(src), relabel(dst), Some(labels))
        }
    } else {
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
        let labels = ids.iter().map(|&x| id_label(x)).collect();
        (ids.len(), src, dst, Some(labels))
    };
    Ok(EdgeList {
        num_nodes,
        src,
        dst,
        weights,
        labels,
        self_loops,
        notes: Vec::new(),
    })
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

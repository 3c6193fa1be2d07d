//! Matrix Market (`.mtx`) reader and writer.
//!
//! Supported: `matrix coordinate` with field `real` (also `double`), `integer` or `pattern`
//! (every stored entry becomes 1) and symmetry `general`, `symmetric` or `skew-symmetric`;
//! `matrix array` (dense, column-major as the format specifies) with field `real` /
//! `integer` and the same symmetries (the lower triangle is stored). `complex` fields and
//! `hermitian` symmetry give [`ParseErrorKind::Unsupported`].
//!
//! * Banner words are case-insensitive. `%` comment lines and blank lines may appear
//!   anywhere after the banner; CRLF line ends are accepted.
//! * Indices are 1-based; 0 or an index beyond the declared size is
//!   [`ParseErrorKind::IndexOutOfRange`].
//! * A symmetric file may store either triangle (or a mix): every off-diagonal entry is
//!   mirrored, a diagonal entry is kept once. Skew-symmetric mirrors with the sign flipped
//!   and may not store diagonal entries.
//! * Values must be finite in the target type (NaN, `inf` and values that overflow `f32`
//!   are [`ParseErrorKind::BadValue`]); Fortran `D` exponents are accepted. `integer` values
//!   must be integers.
//! * The entry count on the size line must match the entries present
//!   ([`ParseErrorKind::EntryCount`]).
//!
//! The writers print values with Rust's shortest round-trip formatting, so reading a
//! written file gives back exactly the same values.
//!
//! [`ParseErrorKind::Unsupported`]: crate::ParseErrorKind::Unsupported
//! [`ParseErrorKind::IndexOutOfRange`]: crate::ParseErrorKind::IndexOutOfRange
//! [`ParseErrorKind::BadValue`]: crate::ParseErrorKind::BadValue
//! [`ParseErrorKind::EntryCount`]: crate::ParseErrorKind::EntryCount

use std::fmt::Write as _;
use std::path::Path;

use super::text::{self, Lines};
use super::{perr, read_file, refuse, Detected};
use crate::coo::Coo;
use crate::dense::Dense;
use crate::error::{ParseErrorKind as K, Result, ResultExt};
use crate::graph::Graph;
use crate::scalar::Scalar;

/// A Matrix Market file's content: `coordinate` files are sparse, `array` files dense.
#[derive(Debug, Clone, PartialEq)]
pub enum MatrixMarket<T> {
    /// A `coordinate` file (symmetric storage already expanded).
    Sparse(Coo<T>),
    /// An `array` file (symmetric storage already expanded).
    Dense(Dense<T>),
}

impl<T: Scalar> MatrixMarket<T> {
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        match self {
            MatrixMarket::Sparse(c) => c.shape(),
            MatrixMarket::Dense(d) => d.shape(),
        }
    }

    /// The matrix as COO (a dense matrix contributes its non-zeros).
    pub fn into_coo(self) -> Coo<T> {
        match self {
            MatrixMarket::Sparse(c) => c,
            MatrixMarket::Dense(d) => Coo::from_dense(&d),
        }
    }
}

/// The storage format on the banner line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `coordinate`: sparse triplets.
    Coordinate,
    /// `array`: dense, column-major.
    Array,
}

/// The value field on the banner line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `real` (or `double`).
    Real,
    /// `integer`.
    Integer,
    /// `pattern`: no values, every entry is 1.
    Pattern,
}

/// The symmetry on the banner line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symmetry {
    /// `general`: every entry stored.
    General,
    /// `symmetric`: one triangle stored, mirrored on reading.
    Symmetric,
    /// `skew-symmetric`: one strict triangle stored, mirrored with the sign flipped.
    SkewSymmetric,
}

/// The banner and size line of a Matrix Market file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Storage format.
    pub format: Format,
    /// Value field.
    pub field: Field,
    /// Symmetry.
    pub symmetry: Symmetry,
    /// Declared rows.
    pub rows: usize,
    /// Declared columns.
    pub cols: usize,
    /// Stored entries the file declares (`coordinate`) or implies (`array`).
    pub entries: usize,
}

/// Reads a Matrix Market file (sparse or dense).
pub fn read_matrix_market<T: Scalar>(path: impl AsRef<Path>) -> Result<MatrixMarket<T>> {
    let input = read_file(path.as_ref())?;
    match input.detect() {
        Detected::MatrixMarket | Detected::Text => parse_matrix_market(&input.bytes, &input.name),
        other => Err(refuse(&input.name, other, "a Matrix Market file")),
    }
}

/// Reads a Matrix Market file as COO; an `array` file contributes its non-zeros.
pub fn read_coo<T: Scalar>(path: impl AsRef<Path>) -> Result<Coo<T>> {
    Ok(read_matrix_market(path)?.into_coo())
}

/// Reads a Matrix Market file as a dense matrix; a `coordinate` file is densified
/// (duplicates summed). A coordinate matrix too large to allocate densely gives
/// [`ParseErrorKind::TooLarge`](crate::ParseErrorKind::TooLarge), naming the bytes.
pub fn read_dense<T: Scalar>(path: impl AsRef<Path>) -> Result<Dense<T>> {
    let path = path.as_ref();
    let name = path.display().to_string();
    match read_matrix_market(path)? {
        MatrixMarket::Dense(d) => Ok(d),
        MatrixMarket::Sparse(c) => coo_to_dense(&c, &name),
    }
}

/// Parses Matrix Market bytes; `name` is the file name used in errors.
pub fn parse_matrix_market<T: Scalar>(bytes: &[u8], name: &str) -> Result<MatrixMarket<T>> {
    Ok(parse_matrix_market_with_header(bytes, name)?.1)
}

/// As [`parse_matrix_market`], also returning the parsed banner and size line.
pub fn parse_matrix_market_with_header<T: Scalar>(
    bytes: &[u8],
    name: &str,
) -> Result<(Header, MatrixMarket<T>)> {
    let mut lines = Lines::new(bytes);
    let header = parse_header_lines(&mut lines, bytes, name)?;
    let body = match header.format {
        Format::Coordinate => MatrixMarket::Sparse(parse_coordinate(&header, lines, bytes, name)?),
        Format::Array => MatrixMarket::Dense(parse_array(&header, lines, name)?),
    };
    Ok((header, body))
}

/// Parses only the banner and size line.
pub fn parse_header(bytes: &[u8], name: &str) -> Result<Header> {
    parse_header_lines(&mut Lines::new(bytes), bytes, name)
}

/// The graph of a square Matrix Market file (see [`super::read_graph_auto`]).
pub(crate) fn parse_graph(bytes: &[u8], name: &str) -> Result<Graph> {
    let (h, m) = parse_matrix_market_with_header::<f64>(bytes, name)?;
    if h.rows != h.cols {
        return Err(perr(
            name,
            None,
            K::BadHeader,
            format!("a graph needs a square matrix, got {} x {}", h.rows, h.cols),
        ));
    }
    if u32::try_from(h.rows).is_err() {
        return Err(perr(
            name,
            None,
            K::Unsupported,
            format!("{} nodes do not fit in 32-bit node ids", h.rows),
        ));
    }
    // Node u is the file's row/column u + 1, and is labelled so: every command prints the
    // file's ids.
    Ok(Graph::from_coo(&m.into_coo(), h.field != Field::Pattern)
        .context(|| name)?
        .with_one_based_labels())
}

fn parse_header_lines(lines: &mut Lines<'_>, bytes: &[u8], name: &str) -> Result<Header> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(perr(name, None, K::Empty, "empty file"));
    }
    let (ln, banner) = lines
        .next()
        .ok_or_else(|| perr(name, None, K::Empty, "empty file"))?;
    let banner = banner.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(banner);
    let mut toks = text::tokens(banner);
    let head = toks.next().unwrap_or(b"");
    if !head.eq_ignore_ascii_case(b"%%MatrixMarket") {
        let msg = if head.starts_with(b"%%") {
            format!(
                "the first line starts with %% but {} is not a Matrix Market banner \
                 (expected %%MatrixMarket matrix <format> <field> <symmetry>)",
                text::show(head)
            )
        } else {
            "missing %%MatrixMarket banner".to_owned()
        };
        return Err(perr(name, Some(ln), K::BadHeader, msg));
    }
    let mut word = |what: &str| -> Result<String> {
        let t = toks.next().ok_or_else(|| {
            perr(
                name,
                Some(ln),
                K::BadHeader,
                format!("banner lacks the {what}"),
            )
        })?;
        Ok(String::from_utf8_lossy(t).to_ascii_lowercase())
    };
    let object = word("object")?;
    let format = word("format")?;
    let field = word("field")?;
    let symmetry = word("symmetry")?;
    let bad = |kind, msg: String| perr(name, Some(ln), kind, msg);
    match object.as_str() {
        "matrix" => {}
        "vector" => {
            return Err(bad(
                K::Unsupported,
                "vector objects are not supported".into(),
            ))
        }
        o => return Err(bad(K::BadHeader, format!("unknown object {o:?}"))),
    }
    let format = match format.as_str() {
        "coordinate" => Format::Coordinate,
        "array" => Format::Array,
        f => return Err(bad(K::BadHeader, format!("unknown format {f:?}"))),
    };
    let field = match field.as_str() {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => {
            return Err(bad(
                K::Unsupported,
                "complex matrices are not supported".into(),
            ))
        }
        f => return Err(bad(K::BadHeader, format!("unknown field {f:?}"))),
    };
    let symmetry = match symmetry.as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => {
            return Err(bad(
                K::Unsupported,
                "hermitian matrices are not supported".into(),
            ))
        }
        s => return Err(bad(K::BadHeader, format!("unknown symmetry {s:?}"))),
    };
    if format == Format::Array && field == Field::Pattern {
        return Err(bad(
            K::BadHeader,
            "the pattern field is only valid for coordinate matrices".into(),
        ));
    }

    // Size line: the first line that is neither blank nor a comment.
    let (ln, size) = loop {
        match lines.next() {
            None => {
                return Err(perr(
                    name,
                    Some(lines.line()),
                    K::Truncated,
                    "file ends before the size line",
                ))
            }
            Some((_, l)) if text::is_blank(l) || text::first_byte(l) == Some(b'%') => {}
            Some(x) => break x,
        }
    };
    let want = if format == Format::Coordinate { 3 } else { 2 };
    let mut nums = [0usize; 3];
    let mut count = 0;
    for t in text::tokens(size) {
        if count == want {
            return Err(perr(
                name,
                Some(ln),
                K::BadHeader,
                format!("size line has more than {want} fields"),
            ));
        }
        nums[count] = text::parse_u64(t)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| {
                perr(
                    name,
                    Some(ln),
                    K::BadHeader,
                    format!("bad number {} on the size line", text::show(t)),
                )
            })?;
        count += 1;
    }
    if count < want {
        return Err(perr(
            name,
            Some(ln),
            K::BadHeader,
            format!("size line needs {want} numbers, has {count}"),
        ));
    }
    let (rows, cols) = (nums[0], nums[1]);
    if symmetry != Symmetry::General && rows != cols {
        return Err(perr(
            name,
            Some(ln),
            K::BadHeader,
            format!("a {symmetry:?} matrix must be square, got {rows} x {cols}"),
        ));
    }
    let entries = if format == Format::Coordinate {
        nums[2]
    } else {
        let n = rows as u128;
        let e = match symmetry {
            Symmetry::General => n * cols as u128,
            Symmetry::Symmetric => n * (n + 1) / 2,
            Symmetry::SkewSymmetric => n * n.saturating_sub(1) / 2,
        };
        usize::try_from(e).map_err(|_| {
            perr(
                name,
                Some(ln),
                K::BadHeader,
                format!("{rows} x {cols} is too large"),
            )
        })?
    };
    Ok(Header {
        format,
        field,
        symmetry,
        rows,
        cols,
        entries,
    })
}

fn parse_value<T: Scalar>(tok: &[u8], field: Field, name: &str, ln: usize) -> Result<T> {
    let v = match field {
        Field::Integer => text::parse_i64(tok).map(|i| i as f64),
        _ => text::parse_f64(tok),
    };
    let v = v.ok_or_else(|| {
        perr(
            name,
            Some(ln),
            K::BadValue,
            format!("bad {} value {}", field_name(field), text::show(tok)),
        )
    })?;
    let x = T::from_f64(v);
    if !x.is_finite() {
        return Err(perr(
            name,
            Some(ln),
            K::BadValue,
            format!("value {} is not a finite {}", text::show(tok), T::NAME),
        ));
    }
    Ok(x)
}

fn field_name(f: Field) -> &'static str {
    match f {
        Field::Real => "real",
        Field::Integer => "integer",
        Field::Pattern => "pattern",
    }
}

fn parse_index(tok: &[u8], limit: usize, what: &str, name: &str, ln: usize) -> Result<usize> {
    let v = text::parse_u64(tok).ok_or_else(|| {
        perr(
            name,
            Some(ln),
            K::BadValue,
            format!("bad {what} index {}", text::show(tok)),
        )
    })?;
    if v == 0 || v > limit as u64 {
        return Err(perr(
            name,
            Some(ln),
            K::IndexOutOfRange,
            format!("{what} index {v} outside 1..={limit}"),
        ));
    }
    Ok(v as usize - 1)
}

fn parse_coordinate<T: Scalar>(
    h: &Header,
    lines: Lines<'_>,
    bytes: &[u8],
    name: &str,
) -> Result<Coo<T>> {
    // Never trust the declared count for allocation: an entry needs at least 4 bytes.
    let mirror = h.symmetry != Symmetry::General;
    let cap = h.entries.min(bytes.len() / 4 + 1) * if mirror { 2 } else { 1 };
    let mut ri = Vec::with_capacity(cap);
    let mut ci = Vec::with_capacity(cap);
    let mut vals: Vec<T> = Vec::with_capacity(cap);
    let mut seen = 0usize;
    for (ln, line) in lines {
        if !is_entry(line) {
            continue;
        }
        if seen == h.entries {
            return Err(perr(
                name,
                Some(ln),
                K::EntryCount,
                format!("more entries than the {} declared", h.entries),
            ));
        }
        let (i, j, v) = parse_entry::<T>(h, line, name, ln)?;
        seen += 1;
        ri.push(i);
        ci.push(j);
        vals.push(v);
        if mirror && i != j {
            ri.push(j);
            ci.push(i);
            vals.push(if h.symmetry == Symmetry::SkewSymmetric {
                -v
            } else {
                v
            });
        }
    }
    if seen < h.entries {
        return Err(perr(
            name,
            None,
            K::EntryCount,
            format!("the size line declares {} entries, found {seen}", h.entries),
        ));
    }
    Coo::from_triplets(h.rows, h.cols, ri, ci, vals)
}

/// Whether a line of a coordinate file's body is an entry (not blank, not a comment).
fn is_entry(line: &[u8]) -> bool {
    text::tokens(line)
        .next()
        .is_some_and(|first| first.first() != Some(&b'%'))
}

/// The entry on line `ln` (0-based row and column, and value; an entry line, see
/// [`is_entry`]), checked: its field count, its indices, and no diagonal in a
/// skew-symmetric matrix.
fn parse_entry<T: Scalar>(
    h: &Header,
    line: &[u8],
    name: &str,
    ln: usize,
) -> Result<(usize, usize, T)> {
    let want = if h.field == Field::Pattern { 2 } else { 3 };
    let mut f: [&[u8]; 3] = [b"", b"", b""];
    let mut k = 0;
    for t in text::tokens(line) {
        if k == want {
            return Err(perr(
                name,
                Some(ln),
                K::BadValue,
                format!(
                    "unexpected extra field {} (a {} entry has {want} fields)",
                    text::show(t),
                    field_name(h.field)
                ),
            ));
        }
        f[k] = t;
        k += 1;
    }
    if k < want {
        return Err(perr(
            name,
            Some(ln),
            K::Truncated,
            format!("entry has {k} fields, need {want}"),
        ));
    }
    let i = parse_index(f[0], h.rows, "row", name, ln)?;
    let j = parse_index(f[1], h.cols, "column", name, ln)?;
    let v: T = if h.field == Field::Pattern {
        T::one()
    } else {
        parse_value(f[2], h.field, name, ln)?
    };
    if h.symmetry == Symmetry::SkewSymmetric && i == j {
        return Err(perr(
            name,
            Some(ln),
            K::IndexOutOfRange,
            format!(
                "skew-symmetric matrix stores diagonal entry ({}, {})",
                i + 1,
                j + 1
            ),
        ));
    }
    Ok((i, j, v))
}

/// A coordinate file's header, where its body starts (byte offset) and the lines before
/// it, from `head`, the file's first bytes: `None` unless the header is a square coordinate
/// matrix of up to 2^32 rows that `head` holds whole (its size line ends in it), the body
/// that the distributed reader reads in byte ranges ([`parse_graph_part`]).
pub(crate) fn graph_body(head: &[u8], whole: bool, name: &str) -> Option<(Header, usize, usize)> {
    let mut lines = Lines::new(head);
    let h = parse_header_lines(&mut lines, head, name).ok()?;
    let pos = lines.pos();
    let complete = whole || (pos > 0 && head[pos - 1] == b'\n');
    (complete
        && h.format == Format::Coordinate
        && h.rows == h.cols
        && u32::try_from(h.rows).is_ok())
    .then_some((h, pos, lines.line()))
}

/// The graph edges of a byte range of a coordinate file's body (cut at line starts;
/// `first_line` lines of the file come before it), as [`parse_graph`] reads them: each
/// entry off the diagonal is an edge (`src`, `dst`, 0-based), each on it a self-loop,
/// counted. With `values` (a `real` or `integer` file), each edge's weight too: its value,
/// or for a skew-symmetric file the larger of the value and its mirror's negation, which
/// is what one process keeps of the two entries the mirror makes. Parsed in parallel
/// chunks; the first error in file order is reported. Also the number of entries.
pub(crate) fn parse_graph_part(
    h: &Header,
    bytes: &[u8],
    name: &str,
    first_line: usize,
    values: bool,
) -> Result<GraphPart> {
    use rayon::prelude::*;
    let pieces = crate::io::edgelist::pieces(bytes, None);
    let lines_in: Vec<usize> = pieces
        .par_iter()
        .map(|&(a, b)| memchr::memchr_iter(b'\n', &bytes[a..b]).count())
        .collect();
    let mut line0 = vec![0usize; pieces.len()];
    for k in 1..pieces.len() {
        line0[k] = line0[k - 1] + lines_in[k - 1];
    }
    let parts: Vec<Result<GraphPart>> = pieces
        .par_iter()
        .zip(line0)
        .map(|(&(a, b), line0)| {
            let mut p = GraphPart::default();
            for (k, line) in Lines::new(&bytes[a..b]) {
                if !is_entry(line) {
                    continue;
                }
                let (i, j, v) = parse_entry::<f64>(h, line, name, first_line + line0 + k)?;
                p.entries += 1;
                if i == j {
                    p.self_loops += 1;
                } else {
                    p.src.push(i as u32);
                    p.dst.push(j as u32);
                    if values {
                        let skew = h.symmetry == Symmetry::SkewSymmetric && -v > v;
                        p.weights.push(if skew { -v } else { v });
                    }
                }
            }
            Ok(p)
        })
        .collect();
    let mut all = GraphPart::default();
    for p in parts {
        let p = p?;
        all.src.extend_from_slice(&p.src);
        all.dst.extend_from_slice(&p.dst);
        all.weights.extend_from_slice(&p.weights);
        all.self_loops += p.self_loops;
        all.entries += p.entries;
    }
    Ok(all)
}

/// The line of the `k`-th entry (0-based) of `bytes`, a byte range of a coordinate file's
/// body after `first_line` lines, if it holds that many.
pub(crate) fn entry_line(bytes: &[u8], k: usize, first_line: usize) -> Option<usize> {
    Lines::new(bytes)
        .filter(|(_, l)| is_entry(l))
        .nth(k)
        .map(|(ln, _)| first_line + ln)
}

/// The edges of a byte range of a coordinate file ([`parse_graph_part`]).
#[derive(Debug, Default)]
pub(crate) struct GraphPart {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// The edges' weights, when asked for (else empty).
    pub weights: Vec<f64>,
    pub self_loops: usize,
    pub entries: usize,
}

fn parse_array<T: Scalar>(h: &Header, lines: Lines<'_>, name: &str) -> Result<Dense<T>> {
    let mut vals: Vec<T> = Vec::new();
    for (ln, line) in lines {
        if text::first_byte(line) == Some(b'%') {
            continue;
        }
        for t in text::tokens(line) {
            if vals.len() == h.entries {
                return Err(perr(
                    name,
                    Some(ln),
                    K::EntryCount,
                    format!("more values than the {} expected", h.entries),
                ));
            }
            vals.push(parse_value(t, h.field, name, ln)?);
        }
    }
    if vals.len() < h.entries {
        return Err(perr(
            name,
            None,
            K::EntryCount,
            format!(
                "a {} x {} {:?} array needs {} values, found {}",
                h.rows,
                h.cols,
                h.symmetry,
                h.entries,
                vals.len()
            ),
        ));
    }
    let (r, c) = (h.rows, h.cols);
    let dense = |len: usize| {
        crate::alloc::try_zeroed_vec::<T>(len, || format!("a dense {r} x {c} {} matrix", T::NAME))
            .map_err(|e| perr(name, None, K::TooLarge, e.to_string()))
    };
    if h.symmetry == Symmetry::General {
        // Column-major to row-major.
        let mut data = dense(vals.len())?;
        for j in 0..if r == 0 { 0 } else { c } {
            for i in 0..r {
                data[i * c + j] = vals[j * r + i];
            }
        }
        return Dense::from_vec(r, c, data);
    }
    // Square, lower triangle stored column by column (strictly lower when skew).
    let n = r;
    let mut d = Dense::from_vec(n, n, dense(n * n)?)?;
    let skew = h.symmetry == Symmetry::SkewSymmetric;
    let mut k = 0;
    for j in 0..n {
        let first = if skew { j + 1 } else { j };
        for i in first..n {
            let v = vals[k];
            k += 1;
            d.set(i, j, v);
            d.set(j, i, if skew { -v } else { v });
        }
    }
    Ok(d)
}

pub(crate) fn coo_to_dense<T: Scalar>(c: &Coo<T>, name: &str) -> Result<Dense<T>> {
    let (r, k) = (c.rows(), c.cols());
    let what = || format!("a dense {r} x {k} {} matrix", T::NAME);
    let len = r.checked_mul(k).ok_or_else(|| {
        perr(
            name,
            None,
            K::TooLarge,
            format!(
                "cannot allocate {} for {}",
                crate::alloc::human_bytes(r as u128 * k as u128 * std::mem::size_of::<T>() as u128),
                what()
            ),
        )
    })?;
    let mut data: Vec<T> = crate::alloc::try_zeroed_vec(len, what)
        .map_err(|e| perr(name, None, K::TooLarge, e.to_string()))?;
    for (i, j, v) in c.iter() {
        data[i * k + j] += v;
    }
    Dense::from_vec(r, k, data)
}

fn value_str<T: Scalar>(v: T, out: &mut String) {
    text::fmt_float(v.to_f64(), T::NAME == "f32", out);
}

/// Writes a COO matrix as `matrix coordinate real general` (1-based indices; every stored
/// triplet, duplicates included).
pub fn write_coo<T: Scalar>(path: impl AsRef<Path>, m: &Coo<T>) -> Result<()> {
    let path = path.as_ref();
    let mut s = String::with_capacity(32 + m.nnz() * 24);
    s.push_str("%%MatrixMarket matrix coordinate real general\n");
    s.push_str("% written by trident\n");
    let _ = writeln!(s, "{} {} {}", m.rows(), m.cols(), m.nnz());
    for (i, j, v) in m.iter() {
        let _ = write!(s, "{} {} ", i + 1, j + 1);
        value_str(v, &mut s);
        s.push('\n');
    }
    write_all(path, s.as_bytes())
}

/// Writes a dense matrix as `matrix array real general` (values column by column).
pub fn write_dense<T: Scalar>(path: impl AsRef<Path>, m: &Dense<T>) -> Result<()> {
    let path = path.as_ref();
    let mut s = String::with_capacity(32 + m.rows() * m.cols() * 24);
    s.push_str("%%MatrixMarket matrix array real general\n");
    s.push_str("% written by trident\n");
    let _ = writeln!(s, "{} {}", m.rows(), m.cols());
    for j in 0..m.cols() {
        for i in 0..m.rows() {
            value_str(m.get(i, j), &mut s);
            s.push('\n');
        }
    }
    write_all(path, s.as_bytes())
}

/// Whole or not at all (through a temporary file renamed into place).
fn write_all(path: &Path, bytes: &[u8]) -> Result<()> {
    super::write_file(path, |f| std::io::Write::write_all(f, bytes))
}

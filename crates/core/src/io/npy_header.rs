//! The preamble and header of a `.npy` file (the magic string, the version, the Python dict
//! literal of `descr`, `fortran_order` and `shape`), apart from the reader: the input layer
//! ([`super::Input`]) needs it to know when a streamed `.npy` is complete, and the reader
//! ([`super::npy`]) needs that layer, so neither may hold it.

use super::perr;
use crate::error::{ParseErrorKind as K, Result};

pub(super) const MAGIC: &[u8] = b"\x93NUMPY";

/// The `descr` of a `.npy` header (the last one, as numpy reads it), if the header parses.
pub(super) fn stored_descr(bytes: &[u8]) -> Option<String> {
    if !bytes.starts_with(MAGIC) || bytes.len() < 10 {
        return None;
    }
    let (hlen, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return None,
    };
    let header = std::str::from_utf8(bytes.get(start..start.checked_add(hlen)?)?).ok()?;
    let dict = Parser::new(header).dict()?;
    dict.into_iter().rev().find_map(|(k, v)| match v {
        Value::Str(s) if k == "descr" => Some(s),
        _ => None,
    })
}

/// The longest `.npy` header accepted, in bytes: numpy's own default limit
/// (`max_header_size`). A longer one is refused before anything else is read.
pub const MAX_HEADER_BYTES: usize = 10_000;

/// What a `.npy` header says: the shape, the element size, the order, where the data start.
pub(super) struct NpyHeader {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) size: usize,
    pub(super) descr: &'static str,
    pub(super) fortran: bool,
    pub(super) data_start: usize,
}

/// The total length a `.npy` file whose first bytes are `head` must have (preamble, header
/// and data), once its header is complete in `head`; `Ok(None)` while it is not. An error
/// for a header that is already bad (or longer than [`MAX_HEADER_BYTES`]), so that a reader
/// of a stream can stop early instead of reading on.
pub(super) fn expected_len(head: &[u8], name: &str) -> Result<Option<u64>> {
    match header(head, name, false, true) {
        Ok(Some(h)) => Ok(Some(
            (h.data_start as u64).saturating_add(
                (h.rows as u64)
                    .saturating_mul(h.cols as u64)
                    .saturating_mul(h.size as u64),
            ),
        )),
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Parses the preamble and header of `bytes`. With `partial`, `Ok(None)` when `bytes` end
/// before the header does; otherwise that is an error.
pub(super) fn header(
    bytes: &[u8],
    name: &str,
    matrix: bool,
    partial: bool,
) -> Result<Option<NpyHeader>> {
    let err = |kind, msg: String| perr(name, None, kind, msg);
    if bytes.is_empty() {
        if partial {
            return Ok(None);
        }
        return Err(err(K::Empty, "empty file".into()));
    }
    let m = bytes.len().min(MAGIC.len());
    if bytes[..m] != MAGIC[..m] {
        return Err(err(K::BadHeader, "not a NumPy file (bad magic)".into()));
    }
    if bytes.len() < 10 {
        if partial {
            return Ok(None);
        }
        return Err(err(K::Truncated, "file ends inside the preamble".into()));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, start): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                if partial {
                    return Ok(None);
                }
                return Err(err(K::Truncated, "file ends inside the preamble".into()));
            }
            let l = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            (l as usize, 12)
        }
        _ => {
            return Err(err(
                K::Unsupported,
                format!("npy format version {major}.{minor}"),
            ))
        }
    };
    // (A whole file shorter than its header says is reported as truncated, below.)
    if hlen > MAX_HEADER_BYTES && (partial || start + hlen <= bytes.len()) {
        return Err(err(
            K::TooLarge,
            format!(
                "header length {hlen} is over the limit of {MAX_HEADER_BYTES} bytes \
                 (numpy's own default)"
            ),
        ));
    }
    let Some(data_start) = start.checked_add(hlen).filter(|&e| e <= bytes.len()) else {
        if partial {
            return Ok(None);
        }
        return Err(err(
            K::Truncated,
            format!(
                "header length {hlen} runs past the end of the file ({} bytes)",
                bytes.len()
            ),
        ));
    };
    let header = std::str::from_utf8(&bytes[start..data_start])
        .ok()
        .filter(|h| major == 3 || h.is_ascii())
        .ok_or_else(|| err(K::BadHeader, "header is not text".into()))?;
    let dict = Parser::new(header)
        .dict()
        .ok_or_else(|| err(K::BadHeader, format!("cannot parse header {header:?}")))?;
    // numpy's header is a Python dict literal, where a repeated key keeps its last value;
    // taking either one would read a file differently from one of the two readers.
    for (i, (k, _)) in dict.iter().enumerate() {
        if dict[..i].iter().any(|(k0, _)| k0 == k) {
            return Err(err(
                K::BadHeader,
                format!("header has the key '{k}' twice: {header:?}"),
            ));
        }
    }
    let get = |key: &str| {
        dict.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| err(K::BadHeader, format!("header lacks '{key}'")))
    };
    let descr: &'static str = match get("descr")? {
        Value::Str(s) => match s.as_str() {
            "<f8" => "<f8",
            "<f4" => "<f4",
            ">f8" | ">f4" => return Err(err(K::Unsupported, format!("big-endian dtype {s:?}"))),
            d => {
                return Err(err(
                    K::Unsupported,
                    format!("dtype {d:?} (only <f4 and <f8 are supported)"),
                ))
            }
        },
        _ => {
            return Err(err(
                K::Unsupported,
                "structured dtypes are not supported".into(),
            ))
        }
    };
    let size: usize = if descr == "<f8" { 8 } else { 4 };
    let fortran = match get("fortran_order")? {
        Value::Bool(b) => *b,
        _ => return Err(err(K::BadHeader, "fortran_order is not a bool".into())),
    };
    let shape = match get("shape")? {
        Value::Tuple(t) => t,
        _ => return Err(err(K::BadHeader, "shape is not a tuple".into())),
    };
    let (rows, cols) = match shape.as_slice() {
        [n] if matrix => {
            return Err(err(
                K::Unsupported,
                format!(
                    "a 1-D array of {n} values, not a matrix (need 2 dimensions; reshape it \
                     to {n} x 1 or 1 x {n})"
                ),
            ))
        }
        [n] => (*n, 1),
        [r, c] => (*r, *c),
        s => {
            return Err(err(
                K::Unsupported,
                format!("{}-dimensional arrays (need 1 or 2)", s.len()),
            ))
        }
    };
    let too_big = || err(K::BadHeader, format!("shape {rows} x {cols} is too large"));
    rows.checked_mul(cols)
        .and_then(|c| c.checked_mul(size))
        .ok_or_else(too_big)?;
    Ok(Some(NpyHeader {
        rows,
        cols,
        size,
        descr,
        fortran,
        data_start,
    }))
}

/// The Python literals that appear in `.npy` headers.
#[derive(Debug)]
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
    /// Anything else that parses (lists, `None`, …): only ever unsupported.
    Other,
}

/// A small parser for the header's Python dict literal.
struct Parser<'a> {
    s: &'a [u8],
    p: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Self {
            s: s.as_bytes(),
            p: 0,
        }
    }

    fn ws(&mut self) {
        while self.p < self.s.len() && self.s[self.p].is_ascii_whitespace() {
            self.p += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.p) == Some(&c) {
            self.p += 1;
            true
        } else {
            false
        }
    }

    fn dict(&mut self) -> Option<Vec<(String, Value)>> {
        if !self.eat(b'{') {
            return None;
        }
        let mut out = Vec::new();
        loop {
            if self.eat(b'}') {
                break;
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            let v = self.value(0)?;
            out.push((key, v));
            if !self.eat(b',') {
                if !self.eat(b'}') {
                    return None;
                }
                break;
            }
        }
        self.ws();
        // Only padding may follow.
        (self.p == self.s.len()).then_some(out)
    }

    fn string(&mut self) -> Option<String> {
        self.ws();
        let q = *self.s.get(self.p)?;
        if q != b'\'' && q != b'"' {
            return None;
        }
        let start = self.p + 1;
        let len = self.s[start..].iter().position(|&c| c == q)?;
        self.p = start + len + 1;
        String::from_utf8(self.s[start..start + len].to_vec()).ok()
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > 16 {
            return None;
        }
        self.ws();
        match *self.s.get(self.p)? {
            b'\'' | b'"' => self.string().map(Value::Str),
            b'(' => {
                self.p += 1;
                let mut dims = Vec::new();
                let mut ints = true;
                loop {
                    if self.eat(b')') {
                        break;
                    }
                    self.ws();
                    if self.s.get(self.p).is_some_and(|c| c.is_ascii_digit()) {
                        dims.push(self.int()?);
                    } else {
                        self.value(depth + 1)?;
                        ints = false;
                    }
                    if !self.eat(b',') {
                        if !self.eat(b')') {
                            return None;
                        }
                        break;
                    }
                }
                Some(if ints {
                    Value::Tuple(dims)
                } else {
                    Value::Other
                })
            }
            b'[' | b'{' => {
                let close = if self.s[self.p] == b'[' { b']' } else { b'}' };
                self.p += 1;
                loop {
                    if self.eat(close) {
                        break;
                    }
                    self.value(depth + 1)?;
                    if close == b'}' {
                        if !self.eat(b':') {
                            return None;
                        }
                        self.value(depth + 1)?;
                    }
                    if !self.eat(b',') {
                        if !self.eat(close) {
                            return None;
                        }
                        break;
                    }
                }
                Some(Value::Other)
            }
            _ => {
                let start = self.p;
                while self.p < self.s.len()
                    && (self.s[self.p].is_ascii_alphanumeric() || self.s[self.p] == b'_')
                {
                    self.p += 1;
                }
                match &self.s[start..self.p] {
                    b"True" => Some(Value::Bool(true)),
                    b"False" => Some(Value::Bool(false)),
                    b"" => None,
                    _ => Some(Value::Other),
                }
            }
        }
    }

    fn int(&mut self) -> Option<usize> {
        self.ws();
        let start = self.p;
        while self.p < self.s.len() && self.s[self.p].is_ascii_digit() {
            self.p += 1;
        }
        let v = std::str::from_utf8(&self.s[start..self.p])
            .ok()?
            .parse()
            .ok()?;
        // Python 2 long suffix.
        if self.p < self.s.len() && self.s[self.p] == b'L' {
            self.p += 1;
        }
        Some(v)
    }
}

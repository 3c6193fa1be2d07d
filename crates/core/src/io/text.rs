//! Small text helpers shared by the text readers: line splitting, tokens, number parsing.

/// Lines of `buf` with their 1-based numbers; the `\n` and one trailing `\r` are removed.
pub(crate) struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    /// Lines of `buf`, starting at line 1.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            line: 0,
        }
    }

    /// Number of the last line returned (0 before the first).
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The byte offset of the next line.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let rest = &self.buf[self.pos..];
        let (line, adv) = match memchr::memchr(b'\n', rest) {
            Some(k) => (&rest[..k], k + 1),
            None => (rest, rest.len()),
        };
        self.pos += adv;
        self.line += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some((self.line, line))
    }
}

/// Field separators: space, tab, and the other ASCII whitespace except newline.
#[inline]
pub(crate) fn is_sep(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

/// Whitespace-separated fields of a line.
pub(crate) fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| is_sep(b)).filter(|t| !t.is_empty())
}

/// True for a line with nothing but separators.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_sep(b))
}

/// The first non-separator byte of a line, if any.
pub(crate) fn first_byte(line: &[u8]) -> Option<u8> {
    line.iter().copied().find(|&b| !is_sep(b))
}

/// A non-negative decimal integer (optional leading `+`); `None` on anything else or overflow.
#[inline]
pub(crate) fn parse_u64(tok: &[u8]) -> Option<u64> {
    let digits = tok.strip_prefix(b"+").unwrap_or(tok);
    if digits.is_empty() {
        return None;
    }
    let mut acc: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(acc)
}

/// A signed decimal integer.
pub(crate) fn parse_i64(tok: &[u8]) -> Option<i64> {
    match tok.strip_prefix(b"-") {
        Some(rest) if !rest.starts_with(b"+") => {
            let m = parse_u64(rest)?;
            if m <= i64::MAX as u64 + 1 {
                Some((m as i64).wrapping_neg())
            } else {
                None
            }
        }
        Some(_) => None,
        None => i64::try_from(parse_u64(tok)?).ok(),
    }
}

/// A floating-point number as Rust parses it, also accepting a Fortran `D` exponent
/// (`1.5D+03`). Non-finite results (`nan`, `inf`, overflow) are returned as they are; the
/// caller rejects them.
pub(crate) fn parse_f64(tok: &[u8]) -> Option<f64> {
    // Fast path: plain integers.
    if tok.len() <= 15 {
        if let Some(v) = parse_u64(tok) {
            return Some(v as f64);
        }
    }
    let s = std::str::from_utf8(tok).ok()?;
    match s.parse::<f64>() {
        Ok(v) => Some(v),
        Err(_) if s.bytes().any(|b| b == b'd' || b == b'D') && s.len() <= 64 => {
            let t: String = s
                .chars()
                .map(|c| if c == 'd' || c == 'D' { 'e' } else { c })
                .collect();
            t.parse::<f64>().ok()
        }
        Err(_) => None,
    }
}

/// A token for an error message: lossy UTF-8, at most 40 characters.
pub(crate) fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    format!("{out:?}")
}

/// 1-based number of the line holding byte `pos`.
pub(crate) fn line_of(buf: &[u8], pos: usize) -> usize {
    let end = pos.min(buf.len());
    memchr::memchr_iter(b'\n', &buf[..end]).count() + 1
}

/// Formats a float so that parsing it gives the same value back: Rust's shortest
/// round-trip digits, in plain notation for moderate magnitudes and exponent notation
/// otherwise.
pub(crate) fn fmt_float(v: f64, f32_digits: bool, out: &mut String) {
    use std::fmt::Write;
    let a = v.abs();
    let plain = a == 0.0 || (1e-5..1e16).contains(&a);
    let _ = if f32_digits {
        let x = v as f32;
        if plain {
            write!(out, "{x}")
        } else {
            write!(out, "{x:e}")
        }
    } else if plain {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"+17"), Some(17));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"+"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_i64(b"-5"), Some(-5));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b"-+5"), None);
        assert_eq!(parse_i64(b"9223372036854775808"), None);
    }

    #[test]
    fn floats() {
        assert_eq!(parse_f64(b"1.5D+03"), Some(1500.0));
        assert_eq!(parse_f64(b"-2.5e-1"), Some(-0.25));
        assert_eq!(parse_f64(b"12"), Some(12.0));
        assert!(parse_f64(b"nan").unwrap().is_nan());
        assert_eq!(parse_f64(b"x"), None);
        for v in [0.1, -1e300, 3.0, 1e-7, 123456.789, f64::MIN_POSITIVE] {
            let mut s = String::new();
            fmt_float(v, false, &mut s);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
        }
    }

    #[test]
    fn lines() {
        let v: Vec<_> = Lines::new(b"a\r\nb\n\nc").collect();
        assert_eq!(
            v,
            vec![
                (1, &b"a"[..]),
                (2, &b"b"[..]),
                (3, &b""[..]),
                (4, &b"c"[..])
            ]
        );
        assert_eq!(line_of(b"a\nb\nc", 4), 3);
    }
}

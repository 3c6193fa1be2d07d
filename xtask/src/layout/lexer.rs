//! Just enough of a Rust lexer for the layout checks: comments removed, and string and
//! character literals blanked, with every newline kept so that line numbers stay right.

/// A source file with its comments replaced by spaces (`code`), and also its string and
/// character literals' contents (`bare`); both have the input's lines.
pub struct Stripped {
    /// Comments removed; literals as written (for the names passed to `env::var`).
    pub code: String,
    /// Comments removed and literals blanked (for paths and braces).
    pub bare: String,
}

/// Strips `src` (see [`Stripped`]). Handles line and nested block comments, escapes in
/// strings, raw strings (`r"…"`, `r#"…"#`, `br"…"`) and tells lifetimes (`'a`) from
/// character literals (`'a'`, `'\n'`).
pub fn strip(src: &str) -> Stripped {
    let c: Vec<char> = src.chars().collect();
    let mut code = String::with_capacity(src.len());
    let mut bare = String::with_capacity(src.len());
    // Blanks one char in both outputs (comments) or only in `bare` (literals).
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut code, c[i]);
                blank(&mut bare, c[i]);
                i += 1;
            }
            continue;
        }
        if ch == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    for _ in 0..2 {
                        blank(&mut code, ' ');
                        blank(&mut bare, ' ');
                    }
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    for _ in 0..2 {
                        blank(&mut code, ' ');
                        blank(&mut bare, ' ');
                    }
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut code, c[i]);
                    blank(&mut bare, c[i]);
                    i += 1;
                }
            }
            continue;
        }
        // Raw strings: r"…", r#"…"#, br"…" (not an identifier ending in r or br).
        let raw_at = if !ident_before && ch == 'r' {
            Some(i + 1)
        } else if !ident_before && ch == 'b' && next == Some('r') {
            Some(i + 2)
        } else {
            None
        };
        if let Some(mut j) = raw_at {
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) == Some(&'"') {
                for &k in &c[i..=j] {
                    code.push(k);
                    bare.push(k);
                }
                i = j + 1;
                while i < c.len() {
                    if c[i] == '"' && (0..hashes).all(|h| c.get(i + 1 + h) == Some(&'#')) {
                        break;
                    }
                    code.push(c[i]);
                    blank(&mut bare, c[i]);
                    i += 1;
                }
                for &k in &c[i..(i + 1 + hashes).min(c.len())] {
                    code.push(k);
                    bare.push(k);
                }
                i += 1 + hashes;
                continue;
            }
        }
        if ch == '"' {
            code.push('"');
            bare.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                let n = if c[i] == '\\' { 2 } else { 1 };
                for &k in &c[i..(i + n).min(c.len())] {
                    code.push(k);
                    blank(&mut bare, k);
                }
                i += n;
            }
            if i < c.len() {
                code.push('"');
                bare.push('"');
                i += 1;
            }
            continue;
        }
        if ch == '\'' {
            // A character literal: '\…' or 'x'; otherwise a lifetime or label.
            let end = if next == Some('\\') {
                (i + 2..c.len()).find(|&k| c[k] == '\'')
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(end) = end {
                code.push('\'');
                bare.push('\'');
                for &k in &c[i + 1..end] {
                    code.push(k);
                    blank(&mut bare, k);
                }
                code.push('\'');
                bare.push('\'');
                i = end + 1;
                continue;
            }
        }
        code.push(ch);
        bare.push(ch);
        i += 1;
    }
    Stripped { code, bare }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_go_lines_stay() {
        let src = "a // crate::x\n/* b /* nested */ crate::y */ c\n\"crate::z\" r#\"q\"# 'x' '\\n' &'a T\nd";
        let s = strip(src);
        assert_eq!(s.code.lines().count(), src.lines().count());
        assert!(!s.code.contains("crate::x") && !s.code.contains("crate::y"));
        assert!(s.code.contains("\"crate::z\""));
        assert!(!s.bare.contains("crate::z") && !s.bare.contains('q'));
        assert!(s.bare.contains("&'a T"));
        assert!(s.bare.ends_with("\nd"));
        assert_eq!(s.bare.len(), s.code.len());
    }
}

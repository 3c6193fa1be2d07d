//! NumPy `.npy` reader and writer for real matrices.
//!
//! Reads format versions 1.0, 2.0 and 3.0 holding little-endian `<f4` or `<f8` data of one
//! or two dimensions, in C (row-major) or Fortran (column-major) order; a 1-D array of
//! length `n` becomes an `n x 1` matrix. Values are converted to the requested scalar type
//! and must be finite in it. Big-endian data, other dtypes and other dimensions give
//! [`ParseErrorKind::Unsupported`](crate::ParseErrorKind::Unsupported); a header that does
//! not fit the file or data shorter than the shape needs give
//! [`ParseErrorKind::Truncated`](crate::ParseErrorKind::Truncated), data longer than it
//! needs [`ParseErrorKind::EntryCount`](crate::ParseErrorKind::EntryCount). Errors carry no
//! line number (the format is binary).
//!
//! [`write_npy`] writes version 1.0, C order, `<f4` for `f32` and `<f8` for `f64`.

use std::path::Path;

pub use super::npy_header::MAX_HEADER_BYTES;
use super::npy_header::{header, stored_descr, NpyHeader, MAGIC};
use super::{perr, read_file, refuse, Detected};
use crate::dense::Dense;
use crate::error::{ParseErrorKind as K, Result};
use crate::scalar::Scalar;

/// Reads a `.npy` file as a dense matrix.
pub fn read_npy<T: Scalar>(path: impl AsRef<Path>) -> Result<Dense<T>> {
    let input = read_file(path.as_ref())?;
    match input.detect() {
        Detected::Npy => parse_npy(&input.bytes, &input.name),
        other => Err(refuse(&input.name, other, "a NumPy .npy array")),
    }
}

/// Reads a `.npy` file that must hold a matrix: exactly two dimensions (a 1-D array is
/// [`ParseErrorKind::Unsupported`](crate::ParseErrorKind::Unsupported)), any values including
/// NaN and infinities (for products that propagate them, as `trident matmul` does).
pub fn read_npy_matrix<T: Scalar>(path: impl AsRef<Path>) -> Result<Dense<T>> {
    let input = read_file(path.as_ref())?;
    match input.detect() {
        Detected::Npy => parse(&input.bytes, &input.name, true, true),
        other => Err(refuse(&input.name, other, "a NumPy .npy array")),
    }
}

/// [`read_npy_matrix`] of an input already read, with the element type its header declares
/// (`"f32"` or `"f64"`), for commands whose element type follows their inputs.
pub fn npy_matrix_of<T: Scalar>(input: &super::Input) -> Result<(Dense<T>, &'static str)> {
    match input.detect() {
        Detected::Npy => {
            let m = parse(&input.bytes, &input.name, true, true)?;
            let stored = match stored_descr(&input.bytes).as_deref() {
                Some("<f4") => "f32",
                _ => "f64",
            };
            Ok((m, stored))
        }
        other => Err(refuse(&input.name, other, "a NumPy .npy array")),
    }
}

/// Parses `.npy` bytes; `name` is the file name used in errors.
pub fn parse_npy<T: Scalar>(bytes: &[u8], name: &str) -> Result<Dense<T>> {
    parse(bytes, name, false, false)
}

/// As [`parse_npy`] for an array that must have exactly two dimensions (a 1-D array is
/// [`ParseErrorKind::Unsupported`](crate::ParseErrorKind::Unsupported)); values must be
/// finite.
pub fn parse_npy_2d<T: Scalar>(bytes: &[u8], name: &str) -> Result<Dense<T>> {
    parse(bytes, name, true, false)
}

/// [`parse_npy`]; `two_d`: refuse 1-D arrays; `non_finite`: accept NaN and infinities.
fn parse<T: Scalar>(bytes: &[u8], name: &str, two_d: bool, non_finite: bool) -> Result<Dense<T>> {
    let err = |kind, msg: String| perr(name, None, kind, msg);
    let Some(NpyHeader {
        rows,
        cols,
        size,
        descr,
        fortran,
        data_start,
    }) = header(bytes, name, two_d, false)?
    else {
        return Err(err(K::Truncated, "file ends inside the header".into()));
    };
    let too_big = || err(K::BadHeader, format!("shape {rows} x {cols} is too large"));
    let count = rows.checked_mul(cols).ok_or_else(too_big)?;
    let need = count.checked_mul(size).ok_or_else(too_big)?;
    let data = &bytes[data_start..];
    if data.len() < need {
        return Err(err(
            K::Truncated,
            format!(
                "{rows} x {cols} {descr} needs {need} data bytes, file has {}",
                data.len()
            ),
        ));
    }
    if data.len() > need {
        return Err(err(
            K::EntryCount,
            format!("{} bytes after the {rows} x {cols} data", data.len() - need),
        ));
    }
    let mut vals: Vec<T> = Vec::with_capacity(count);
    if size == 8 {
        for c in data.chunks_exact(8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            vals.push(T::from_f64(f64::from_le_bytes(a)));
        }
    } else {
        for c in data.chunks_exact(4) {
            let a = [c[0], c[1], c[2], c[3]];
            vals.push(T::from_f64(f32::from_le_bytes(a) as f64));
        }
    }
    if let Some(k) = vals
        .iter()
        .position(|v| !v.is_finite())
        .filter(|_| !non_finite)
    {
        return Err(err(
            K::BadValue,
            format!("element {k} is not a finite {}", T::NAME),
        ));
    }
    let vals = if fortran && rows > 1 && cols > 1 {
        let mut out = vec![T::zero(); count];
        for j in 0..cols {
            for i in 0..rows {
                out[i * cols + j] = vals[j * rows + i];
            }
        }
        out
    } else {
        vals
    };
    Dense::from_vec(rows, cols, vals)
}

/// Writes a dense matrix as `.npy` version 1.0 (C order; `<f4` for f32, `<f8` for f64),
/// whole or not at all (through a temporary file renamed into place).
pub fn write_npy<T: Scalar>(path: impl AsRef<Path>, m: &Dense<T>) -> Result<()> {
    super::write_file(path.as_ref(), |f| write_npy_to(f, m))
}

/// [`write_npy`] to any writer.
pub fn write_npy_to<T: Scalar>(w: &mut impl std::io::Write, m: &Dense<T>) -> std::io::Result<()> {
    let is32 = T::NAME == "f32";
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({}, {}), }}",
        if is32 { "<f4" } else { "<f8" },
        m.rows(),
        m.cols()
    );
    // Pad with spaces so that the data starts at a multiple of 64, ending with '\n'.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    w.write_all(&out)?;
    // The data in pieces (no second copy of a large matrix).
    let mut buf = Vec::with_capacity(1 << 16);
    for piece in m.as_slice().chunks(1 << 13) {
        buf.clear();
        for &v in piece {
            if is32 {
                buf.extend_from_slice(&(v.to_f64() as f32).to_le_bytes());
            } else {
                buf.extend_from_slice(&v.to_f64().to_le_bytes());
            }
        }
        w.write_all(&buf)?;
    }
    w.flush()
}

//! Fallible host allocations for every buffer whose size comes from the input.
//!
//! A size read from a file (a Matrix Market size line, a node count, an ELLPACK-R width
//! driven by one long row) must never abort the process: these helpers reserve with
//! [`Vec::try_reserve_exact`] and, when that fails, return an [`AllocError`] that says how
//! many bytes were needed and what for. It converts into [`Error::OutOfMemory`] with the
//! backend name `"host"`; the readers turn it into a parse error naming the file.

use std::fmt;

use crate::error::Error;

/// A host allocation that could not be made: how many bytes, and what they were for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocError {
    /// Bytes requested (saturated at `u128::MAX` for sizes that overflow).
    pub bytes: u128,
    /// What the memory was for, e.g. `"the row pointers of a 4294967294-row matrix"`.
    pub what: String,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot allocate {} for {}",
            human_bytes(self.bytes),
            self.what
        )
    }
}

impl std::error::Error for AllocError {}

impl From<AllocError> for Error {
    fn from(e: AllocError) -> Self {
        Error::out_of_memory("host", e.to_string())
    }
}

/// `n` bytes for people: `"34359738368 bytes (32.0 GiB)"`.
pub fn human_bytes(n: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64;
    let mut unit = "bytes";
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{n} bytes ({v:.1} {unit})")
}

/// An empty vector with room for exactly `len` elements, or an [`AllocError`] naming `what`.
pub fn try_with_capacity<T>(
    len: usize,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    try_reserve(&mut v, len, what)?;
    Ok(v)
}

/// `len` copies of `value`, or an [`AllocError`] naming `what`.
pub fn try_vec<T: Clone>(
    len: usize,
    value: T,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, AllocError> {
    let mut v = try_with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// Room for `extra` more elements in `v`, or an [`AllocError`] naming `what`.
pub fn try_reserve<T>(
    v: &mut Vec<T>,
    extra: usize,
    what: impl FnOnce() -> String,
) -> Result<(), AllocError> {
    v.try_reserve_exact(extra).map_err(|_| AllocError {
        bytes: (v.len() as u128 + extra as u128) * std::mem::size_of::<T>().max(1) as u128,
        what: what(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors_with_the_size() {
        let e = try_vec(usize::MAX / 2, 0u64, || "a test buffer".into()).unwrap_err();
        assert!(e.bytes > u64::MAX as u128, "{e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with("cannot allocate") && msg.contains("EiB"),
            "{msg}"
        );
        assert_eq!(try_vec(3, 7u8, || unreachable!()).unwrap(), vec![7, 7, 7]);
        assert_eq!(human_bytes(34_359_738_368), "34359738368 bytes (32.0 GiB)");
    }
}

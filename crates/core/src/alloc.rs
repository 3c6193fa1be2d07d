//! Fallible host allocations for every buffer whose size comes from the input.
//!
//! A size read from a file (a Matrix Market size line, a node count, an ELLPACK-R width
//! driven by one long row) must never abort the process: these helpers reserve with
//! [`Vec::try_reserve_exact`] and, when that fails, return an [`AllocError`] that says how
//! many bytes were needed and what for. It converts into [`Error::OutOfMemory`] with the
//! backend name `"host"`; the readers turn it into a parse error naming the file.

use std::fmt;

use rayon::prelude::*;

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

/// `len` zeros, or an [`AllocError`] naming `what`, without writing them: `vec![0; len]` takes
/// zeroed pages from the allocator (`calloc`; a large block is a fresh mapping whose pages
/// the OS zeroes when they are first touched), so the zeroing is not a sequential pass up
/// front but happens in whichever (parallel) pass writes the memory first. [`try_vec`] would
/// write every element on the calling thread. The reservation is tried first, so a size the
/// allocator refuses is an error, never an abort.
///
/// Transparent huge pages (`madvise(MADV_HUGEPAGE)` on these blocks) are not used: they
/// speed up a repeated read in one process but slow down a process's first read, which is
/// what a CLI load is (figures in `benches/results/history/h100-2026-11-23.md`).
pub fn try_zeroed_vec<T: Clone + num_traits::Zero>(
    len: usize,
    what: impl FnOnce() -> String,
) -> Result<Vec<T>, AllocError> {
    drop(try_with_capacity::<T>(len, what)?);
    Ok(vec![T::zero(); len])
}

/// Room for `extra` more elements in `v`, or an [`AllocError`] naming `what`.
///
/// A request larger than the machine's physical memory ([`physical_memory`]) is refused
/// before the allocator is asked: with overcommit the allocator would grant it and the
/// process would be killed later, when the pages are touched.
pub fn try_reserve<T>(
    v: &mut Vec<T>,
    extra: usize,
    what: impl FnOnce() -> String,
) -> Result<(), AllocError> {
    let bytes = (v.len() as u128 + extra as u128) * std::mem::size_of::<T>().max(1) as u128;
    if v.capacity() - v.len() >= extra {
        return Ok(());
    }
    let what = fits(bytes, what)?;
    v.try_reserve_exact(extra).map_err(|_| AllocError {
        bytes,
        what: what(),
    })
}

/// `Ok(what)` (not yet called) when `bytes` may be asked of the allocator; an
/// [`AllocError`] when they are more than physical memory.
fn fits<F: FnOnce() -> String>(bytes: u128, what: F) -> Result<F, AllocError> {
    match physical_memory() {
        Some(mem) if bytes > u128::from(mem) => Err(AllocError {
            bytes,
            what: format!(
                "{}: more than this machine's {} of memory",
                what(),
                human_bytes(u128::from(mem))
            ),
        }),
        _ => Ok(what),
    }
}

/// Checks that `bytes` (several buffers' total, say) are no more than the machine's
/// physical memory; an [`AllocError`] naming `what` and the bytes otherwise. For work that
/// allocates several large buffers and would only be killed when touching the last.
pub fn ensure_fits(bytes: u128, what: impl FnOnce() -> String) -> Result<(), AllocError> {
    fits(bytes, what).map(|_| ())
}

/// Physical memory in bytes (`MemTotal` of `/proc/meminfo`), read once; `None` where the
/// system does not say.
pub fn physical_memory() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The input limit of the readers when the caller sets none
/// ([`crate::io::ReadOptions::max_input_bytes`]): half of physical memory, unlimited where
/// that is unknown.
pub fn default_max_input_bytes() -> u64 {
    physical_memory().map(|m| m / 2).unwrap_or(u64::MAX)
}

/// Bytes per piece of [`par_copy`].
const COPY_PIECE: usize = 1 << 20;

/// Copies `src` into `dst` (of the same length) with all the threads of the current pool, in
/// pieces of 1 MiB: one thread copies a few GB/s, the memory system several times that (large
/// buffers between processes, and into page-locked staging memory on their way to a device).
pub fn par_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "par_copy of unequal lengths");
    dst.par_chunks_mut(COPY_PIECE)
        .zip(src.par_chunks(COPY_PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
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

//! The streamed read of an integer-id edge-list file: the file is read in batches (a few
//! MiB per thread, by all threads at once) into one reused buffer, and each batch's whole
//! lines are parsed in parallel straight into the growing edge arrays ([`Raw::parse_more`]).
//!
//! The whole input is never in memory: no buffer the size of the file to fault in and
//! fill (about a fifth of a one-core read), and the parse reads bytes that were just
//! copied, still in cache. The result is the one the whole-input parse gives (where the
//! pieces fall never matters). Anything but the plain case steps aside to that parse,
//! which then gives the result or the error: standard input and pipes, gzip, a format other
//! than text, labels or ids wider than 32 bits, a header line, any error (so error messages
//! and line numbers are the whole-input parse's), a very long line, or a file that changes
//! size while being read.

use std::fs::File;
use std::path::Path;

use super::{compact, header_line, numeric_as_given, weight_column, EdgeListOptions, IdMode};
use super::{Parsed, Raw};
use crate::alloc;
use crate::io::input::long_line;
use crate::io::{detect, strip_bom, Detected, MAX_LINE_BYTES};

/// Bytes read per batch and thread.
const BATCH_PER_THREAD: usize = 4 << 20;
/// Bytes per positioned read (the threads share a batch's reads).
const READ_PIECE: usize = 1 << 20;
/// The longest unfinished line carried from one batch to the next; a longer one steps
/// aside (so the whole-input parse applies the line limit, [`MAX_LINE_BYTES`]).
const MAX_CARRY: usize = MAX_LINE_BYTES / 2;

/// The parse of the edge-list file `path` read in batches, or `None` when it is not a
/// plain integer-id edge-list file (see the [module documentation](self)): the caller
/// then reads the whole input.
pub(crate) fn parse_file(path: &Path, opts: &EdgeListOptions) -> Option<Parsed> {
    let threads = rayon::current_num_threads().max(1);
    parse_file_in(path, opts, BATCH_PER_THREAD * threads)
}

/// [`parse_file`] with batches of `batch` bytes.
pub(super) fn parse_file_in(path: &Path, opts: &EdgeListOptions, batch: usize) -> Option<Parsed> {
    if opts.ids == IdMode::Labels || path.as_os_str() == "-" {
        return None;
    }
    let f = File::open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() >= alloc::max_input_bytes() {
        return None;
    }
    let len = usize::try_from(meta.len()).ok()?;
    if len == 0 {
        return None;
    }
    let name = path.display().to_string();
    let strict = opts.ids == IdMode::Numeric;
    let mut buf =
        alloc::try_zeroed_vec::<u8>((batch.max(1) + MAX_CARRY).min(len), || String::new()).ok()?;
    // File offset of the next read; bytes in `buf` (an unfinished line carried at its start).
    let (mut off, mut filled) = (0usize, 0usize);
    let mut state: Option<(Raw<u32>, super::Weights)> = None;
    loop {
        let want = (buf.len() - filled).min(len - off);
        read_at(&f, &mut buf[filled..filled + want], off).ok()?;
        off += want;
        filled += want;
        let eof = off == len;
        let mut skip = 0usize;
        if state.is_none() {
            // The first batch decides: text, no header line, the weight column.
            let head = &buf[..filled];
            if detect(head) != Detected::Text {
                return None;
            }
            skip = head.len() - strip_bom(head).len();
            // Whole lines only: the first data line must not be cut off.
            let head = &head[skip..];
            let head = if eof {
                head
            } else {
                &head[..memchr::memrchr(b'\n', head)? + 1]
            };
            let ws = weight_column(head, opts);
            if ws.opt.or(ws.auto).is_none() || header_line(head).is_some() {
                // No data line in the first batch, or a header: the whole parse decides.
                return None;
            }
            state = Some((Raw::new(ws.weighted()), ws));
        }
        let (raw, ws) = state.as_mut()?;
        let window = &buf[skip..filled];
        let cut = if eof {
            window.len()
        } else {
            memchr::memrchr(b'\n', window)? + 1
        };
        let part = &window[..cut];
        long_line(part, 0).ok()?;
        match raw.parse_more(part, &name, opts, strict, *ws, 0, None) {
            Ok(Ok(())) => {}
            _ => return None,
        }
        if eof {
            break;
        }
        let carried = skip + cut..filled;
        if carried.len() > MAX_CARRY {
            return None;
        }
        filled = carried.len();
        buf.copy_within(carried, 0);
    }
    // A file that grew while being read: the whole parse reads it as it is.
    let mut one = [0u8; 1];
    if read_at_most(&f, &mut one, len).ok()? != 0 {
        return None;
    }
    let (raw, _) = state?;
    let raw = raw.finish(&name).ok()?;
    match opts.ids {
        IdMode::Numeric => numeric_as_given(raw, &name).ok(),
        _ => compact(raw, &name).ok(),
    }
}

/// Fills `dst` from the file at `off`, the threads sharing the reads.
#[cfg(unix)]
fn read_at(f: &File, dst: &mut [u8], off: usize) -> std::io::Result<()> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    dst.par_chunks_mut(READ_PIECE)
        .enumerate()
        .try_for_each(|(k, p)| f.read_exact_at(p, (off + k * READ_PIECE) as u64))
}

/// Reads into `dst` at `off`: the number of bytes read.
#[cfg(unix)]
fn read_at_most(f: &File, dst: &mut [u8], off: usize) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    f.read_at(dst, off as u64)
}

#[cfg(not(unix))]
fn read_at(_: &File, _: &mut [u8], _: usize) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(not(unix))]
fn read_at_most(_: &File, _: &mut [u8], _: usize) -> std::io::Result<usize> {
    Err(std::io::ErrorKind::Unsupported.into())
}

//! A square coordinate Matrix Market file read in byte ranges of its body.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use rayon::prelude::*;

use super::{build, homed, line_start, read_range, reduce_one, Comm, DistGraph, Names, Op, Phases};
use crate::error::{Error, Result};
use crate::io::{self, ReadOptions};

/// Bytes of a file's head in which a Matrix Market header must end for a byte-range read.
const MTX_HEAD: u64 = 1 << 20;

/// A square coordinate Matrix Market file, read in byte ranges of its body as
/// [`crate::io::mtx`] reads it whole (one-based labels, each entry off the diagonal an edge,
/// diagonal entries counted as self-loops, the entry count checked; with `keep`, a `real`
/// or `integer` file's values are the edges' weights, as one process weighs them); `None`
/// for any other file (every rank decides alike from the file's head; the whole-file
/// readers take it).
pub(super) fn read_mtx(
    c: &dyn Comm,
    path: &Path,
    read: &ReadOptions,
    keep: bool,
) -> Result<Option<DistGraph>> {
    use crate::io::mtx;
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let Ok(mut f) = File::open(path) else {
        return Ok(None);
    };
    let len = f.metadata().map_err(io_err)?.len();
    if len >= read.input_limit() {
        return Ok(None);
    }
    let mut head = vec![0u8; len.min(MTX_HEAD) as usize];
    f.read_exact(&mut head).map_err(io_err)?;
    if io::detect(&head) != io::Detected::MatrixMarket {
        return Ok(None);
    }
    let name = path.display().to_string();
    let Some((h, body, header_lines)) = mtx::graph_body(&head, head.len() as u64 == len, &name)
    else {
        return Ok(None);
    };
    let values = keep && h.field != mtx::Field::Pattern;
    drop(head);
    let (p, me) = (c.size() as u64, c.rank() as u64);
    let (body, span) = (body as u64, len - body as u64);
    let start = line_start(&f, body + span * me / p, len).map_err(io_err)?;
    let end = line_start(&f, body + span * (me + 1) / p, len).map_err(io_err)?;
    let mut phases = Phases::default();
    let bytes = read_range(&f, start, end).map_err(io_err)?;
    phases.lap("read");
    let lines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
    let skip = header_lines + crate::dist::exclusive_sum(c, lines)? as usize;
    // A line past the text limit fails the file, as one process refuses it.
    io::check_range_lines(&bytes, &name, skip)?;
    let part = mtx::parse_graph_part(&h, &bytes, &name, skip, values)?;
    phases.lap("parse");
    // The entry count, as the whole-file reader checks it: the rank holding the first
    // entry past the declared count names its line; too few, rank 0 says so.
    let first = crate::dist::exclusive_sum(c, part.entries as u64)? as usize;
    if first + part.entries > h.entries && first <= h.entries {
        let ln = mtx::entry_line(&bytes, h.entries - first, skip);
        return Err(crate::io::perr(
            &name,
            ln,
            crate::ParseErrorKind::EntryCount,
            format!("more entries than the {} declared", h.entries),
        ));
    }
    let total = reduce_one(c, part.entries as u64, Op::Sum)? as usize;
    if total < h.entries && me == 0 {
        return Err(crate::io::perr(
            &name,
            None,
            crate::ParseErrorKind::EntryCount,
            format!(
                "the size line declares {} entries, found {total}",
                h.entries
            ),
        ));
    }
    drop(bytes);
    let self_loops = reduce_one(c, part.self_loops as u64, Op::Sum)?;
    let keys: Vec<u64> = part
        .src
        .par_iter()
        .zip(&part.dst)
        .map(|(&u, &v)| homed(u, v))
        .collect();
    let weights = values.then_some(part.weights);
    phases.lap("ids");
    build(
        c,
        h.rows,
        (keys, weights),
        self_loops,
        Names::OneBased,
        Vec::new(),
        (true, phases),
    )
    .map(Some)
}

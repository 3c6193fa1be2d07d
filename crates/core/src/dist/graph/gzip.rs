//! A gzip edge list with integer ids read over the ranks without any rank holding all of it:
//! every rank decompresses the whole stream (a gzip stream cannot be entered in the
//! middle), cuts the text at line breaks into pieces of about [`PIECE`] bytes, and keeps and
//! parses only every `p`-th piece (its rank's). Every rank sees every byte, so each piece's
//! line number is known exactly and errors name the file's line. The numbering is that of
//! the plain edge lists (`numbered`: ids in use, or as given), which does not depend on which
//! rank holds which edge. Labels (whose numbering follows the file's order) and anything
//! the head does not settle are left to the whole-file readers.

use std::io::Read;
use std::path::Path;

use rayon::prelude::*;

use super::{header_note, numbered, reduce_one, Comm, DistGraph, Op, Part, Phases};
use crate::error::Result;
use crate::io::edgelist::{self, EdgeListOptions, IdMode, PartEdges, PartOutcome};
use crate::io::{self, ReadOptions};

/// Decompressed bytes a piece holds before it is cut at its last line break.
const PIECE: usize = 8 << 20;

/// This rank's pieces of the decompressed text: each with the file's lines before it.
type Pieces = Vec<(usize, Vec<u8>)>;

/// The graph of the gzip edge list `path`, this rank holding its pieces' edges (see the
/// module docs); `None` on every rank where it is not read so (not gzip, labels, a head the
/// whole-file readers must settle, a stream that fails to decompress, is over the input
/// limit, or holds a line past the text limit: the whole-file readers report those as one
/// process does).
pub(super) fn read_gz(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
    keep: bool,
) -> Result<Option<DistGraph>> {
    read_gz_in(c, path, opts, read, keep, PIECE)
}

/// [`read_gz`] in pieces of about `piece` bytes (tests cut small ones).
pub(crate) fn read_gz_in(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
    keep: bool,
    piece: usize,
) -> Result<Option<DistGraph>> {
    if c.size() == 1 || opts.ids == IdMode::Labels {
        return Ok(None);
    }
    let mut phases = Phases::default();
    let got = pieces(path, opts, read, (c.rank(), c.size()), piece);
    // Every rank decompresses the same stream, so they agree; agreed all the same.
    let none = reduce_one(c, u64::from(got.is_none()), Op::Max)?;
    let Some((plan, mine)) = got.filter(|_| none == 0) else {
        return Ok(None);
    };
    phases.lap("read");
    let name = path.display().to_string();
    let parsed: Vec<Result<PartOutcome>> = mine
        .par_iter()
        .map(|(skip, bytes)| {
            io::check_range_lines(bytes, &name, *skip)?;
            edgelist::parse_part(bytes, &name, opts, *skip, plan.weights)
        })
        .collect();
    drop(mine);
    let mut edges = PartEdges {
        src: Vec::new(),
        dst: Vec::new(),
        loop_ids: Vec::new(),
        self_loops: 0,
        max: None,
        weights: plan.weights.weighted().then(Vec::new),
    };
    // 0: every id an integer; 1: some too wide; 2: some not an integer.
    let mut code = 0;
    for outcome in parsed {
        match outcome? {
            PartOutcome::Edges(e) => {
                edges.src.extend_from_slice(&e.src);
                edges.dst.extend_from_slice(&e.dst);
                edges.loop_ids.extend_from_slice(&e.loop_ids);
                edges.self_loops += e.self_loops;
                edges.max = edges.max.max(e.max);
                if let (Some(all), Some(w)) = (edges.weights.as_mut(), e.weights) {
                    all.extend_from_slice(&w);
                }
            }
            PartOutcome::Wide => code = code.max(1),
            PartOutcome::NotNumeric => code = 2,
        }
    }
    phases.lap("parse");
    if reduce_one(c, code, Op::Max)? != 0 {
        // Wide ids, or labels: the whole-file readers (as for a plain file).
        return Ok(None);
    }
    if !keep {
        edges.weights = None;
    }
    let notes = header_note(&name, &plan.header);
    numbered(c, Part { edges, name }, opts, notes, phases).map(Some)
}

/// Decompresses `path` whole, keeping the pieces of rank `me` of `p` (see the module docs),
/// with the plan of its head; `None` where the whole-file readers must read it.
fn pieces(
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
    (me, p): (usize, usize),
    piece: usize,
) -> Option<(edgelist::HeadPlan, Pieces)> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut magic = [0u8; 2];
    f.read_exact(&mut magic).ok()?;
    if magic != [0x1f, 0x8b] {
        return None;
    }
    let f = std::fs::File::open(path).ok()?;
    let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 20, f));
    let limit = read.input_limit();
    // The head, as a plain file's: up to HEAD bytes.
    let mut buf = Vec::with_capacity(piece + (1 << 20));
    let head = edgelist::HEAD as usize;
    let eof = fill(&mut gz, &mut buf, head + 1)?;
    // Exactly the head a plain file's plan reads (the reads may have brought more).
    let plan = edgelist::head_plan(&buf[..buf.len().min(head)], eof && buf.len() <= head, opts)?;
    let body = plan.header.as_ref().map_or(plan.start, |h| h.2) as usize;
    let mut lines = memchr::memchr_iter(b'\n', &buf[..body]).count();
    buf.drain(..body);
    let mut total = body as u64;
    let (mut mine, mut index) = (Vec::new(), 0usize);
    let mut done = eof;
    loop {
        if !done {
            done = fill(&mut gz, &mut buf, piece + 1)?;
        }
        // The text after the body is cut into pieces by the text alone (not by how much
        // each read returned), so that every rank cuts the same: while more than `piece`
        // bytes remain, a piece ends at the last line break of the next `piece` bytes;
        // the rest is the last piece.
        let cut = if buf.len() > piece {
            match memchr::memrchr(b'\n', &buf[..piece]) {
                Some(k) => k + 1,
                // A line longer than a piece (and the text limit): the whole-file readers
                // refuse it as one process does.
                None => return None,
            }
        } else {
            // Fewer than `piece` + 1 bytes came: the stream has ended.
            buf.len()
        };
        if cut == 0 {
            return Some((plan, mine));
        }
        total += cut as u64;
        if total >= limit {
            return None;
        }
        let piece_lines = memchr::memchr_iter(b'\n', &buf[..cut]).count();
        if index % p == me {
            mine.push((lines, buf[..cut].to_vec()));
        }
        lines += piece_lines;
        index += 1;
        buf.drain(..cut);
    }
}

/// Reads from `r` until `buf` holds at least `want` bytes or the stream ends; whether it
/// ended. `None` on a read (decompression) error.
fn fill(r: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> Option<bool> {
    let mut chunk = vec![0u8; 1 << 20];
    while buf.len() < want {
        match r.read(&mut chunk) {
            Ok(0) => return Some(true),
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(false)
}

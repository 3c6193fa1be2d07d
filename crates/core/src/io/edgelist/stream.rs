//! Integer-id edge-list files parsed as they are read: every piece of the file is read by
//! its own task in blocks (positioned reads into one small buffer that stays in cache) and
//! parsed block by block into its slots of the edge arrays.
//!
//! Against reading the whole file first and then parsing it, this saves the file-sized
//! buffer (its page faults and a trip of every byte through main memory) and the pass that
//! counts the lines: a piece's slots are bounded by its length instead (an edge line takes
//! at least 4 bytes, `u v` and its line break), in an allocation that is only touched
//! where edges are written.
//!
//! Only the common case streams: a regular, plain (not gzip) text file whose first data
//! line is numeric, read in the `Auto` or `Numeric` mode, with ids below 2^32 and lines
//! shorter than a block. Anything else, and any error, makes [`read_numeric`] step aside
//! (`None`) for the whole-file path, which handles every other input and reports errors
//! with their line numbers. The pieces are joined in file order, so the result is the
//! whole-file path's, whatever the number of threads.

use std::path::Path;

use rayon::prelude::*;

use super::Weights;
use super::{compact, header_line, numeric_as_given, Marks, NumParser, Parsed, PieceOut, Raw};
use super::{EdgeListOptions, IdMode};
use crate::alloc;
use crate::error::Result;
use crate::io::{detect, Detected};

/// Bytes per positioned read; a line longer than two steps aside (so the whole-file path
/// applies its limit on line length).
const BLOCK: usize = 256 << 10;
/// Words of the bitmaps the pieces mark their ids in, together (32 MiB): beyond that (ids
/// in the hundreds of millions, or very many threads), the numbering marks them in a pass
/// of its own.
const MARKS_WORDS: usize = 1 << 22;
/// Bytes read first, to tell the format and the weight column from the first data line.
pub(crate) const HEAD: u64 = 64 << 10;
/// Pieces are a few per thread, and at least this many bytes.
const PIECE_MIN: u64 = 1 << 20;

/// Reads and parses `path` as an integer-id edge list when it is the common case (see the
/// module's documentation); `Ok(None)` sends it to the whole-file path, as does a file of
/// `limit` bytes or more (the input limit, which the whole-file path reports).
pub(super) fn read_numeric(
    path: &Path,
    opts: &EdgeListOptions,
    limit: u64,
) -> Result<Option<Parsed>> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() >= limit) {
        return Ok(None);
    }
    stream_in(path, opts, None, BLOCK)
}

/// Whether `path` is a plain integer-id edge list that can be read in pieces (not a label
/// file, standard input, compressed, a METIS file or what may start one, or headed by a
/// column header), and then the open file, its length and the weight column decided from
/// its first data line. The streamed reader asks it; any trouble opening or reading is
/// `None` (the whole-file readers then report it).
#[cfg(unix)]
pub(crate) fn streamable(
    path: &Path,
    opts: &EdgeListOptions,
) -> Option<(std::fs::File, u64, Weights)> {
    if opts.ids == IdMode::Labels {
        return None;
    }
    let plan = range_plan(path, opts)?;
    (plan.header.is_none() && plan.start == 0).then_some((plan.file, plan.len, plan.weights))
}

/// A plain text edge list that can be read in byte ranges: the open file, its length, a
/// column header line (as the whole-file reader finds it: its line number, its text, the
/// offset just after it) and the weight column decided from the first data line (after the
/// header, where there is one: the numeric reading) and from the very first (`labelled`:
/// the reading of every line as labels, the header too, as the whole-file reader falls
/// back to it). Offsets are the file's: after a UTF-8 byte-order mark, which one process
/// skips too, the lines start at `start` (3, else 0).
pub(crate) struct RangePlan {
    pub file: std::fs::File,
    pub len: u64,
    /// Where the first line starts (after a byte-order mark).
    pub start: u64,
    pub header: Option<(usize, String, u64)>,
    pub weights: Weights,
    pub labelled: Weights,
    /// The column header of the reading as labels ([`super::weight_header`]: a weighted
    /// file's first line whose weight is not a number), which `labelled` comes after.
    pub label_header: Option<(usize, String, u64)>,
}

/// [`streamable`]'s test without its exclusions of label files, headers and byte-order
/// marks: a regular, plain (not gzip) text file that is not METIS, with its first data
/// line (and, after a header, the next) whole in its head. The distributed reader
/// (`crate::dist::graph`) asks it; any trouble opening or reading is `None`.
#[cfg(unix)]
pub(crate) fn range_plan(path: &Path, opts: &EdgeListOptions) -> Option<RangePlan> {
    use std::os::unix::fs::FileExt;
    if path.as_os_str() == "-" {
        return None;
    }
    // Any trouble opening or reading: the whole-file path reports it.
    let Ok(f) = std::fs::File::open(path) else {
        return None;
    };
    let Ok(meta) = f.metadata() else {
        return None;
    };
    let len = meta.len();
    if !meta.is_file() || len == 0 {
        return None;
    }
    let mut head = vec![0u8; len.min(HEAD) as usize];
    if f.read_exact_at(&mut head, 0).is_err() {
        return None;
    }
    let whole = head.len() as u64 == len;
    let h = head_plan(&head, whole, opts)?;
    Some(RangePlan {
        file: f,
        len,
        start: h.start,
        header: h.header,
        weights: h.weights,
        labelled: h.labelled,
        label_header: h.label_header,
    })
}

/// What [`range_plan`] finds in a file's head (the whole file where `whole`), its offsets the
/// file's: where the lines start, a column header, the weight columns. `None` where the
/// whole-file readers must decide (not text, METIS, no data line in the head).
pub(crate) struct HeadPlan {
    pub start: u64,
    pub header: Option<(usize, String, u64)>,
    pub weights: Weights,
    pub labelled: Weights,
    pub label_header: Option<(usize, String, u64)>,
}

/// The head analysis of [`range_plan`] on `head`, the first bytes of a text (all of it
/// where `whole`): also the decompressed head of a gzip file (`crate::dist::graph`).
pub(crate) fn head_plan(head: &[u8], whole: bool, opts: &EdgeListOptions) -> Option<HeadPlan> {
    if detect(head) != Detected::Text {
        return None;
    }
    // The first data line decides the weight column (and a non-numeric one is a header
    // or a label file): it must be whole in the head.
    let mut head = head;
    if !whole {
        let end = memchr::memrchr(b'\n', head)?;
        head = &head[..end + 1];
    }
    // A METIS file (or what may start one) is left to the whole-file readers, which tell
    // METIS from an edge list with the whole content (`super::super::metis::is_metis`).
    // The lines start after a byte-order mark: the head is read from there, and its
    // offsets are moved back to the file's below.
    let start = (head.len() - super::super::strip_bom(head).len()) as u64;
    let head = &head[start as usize..];
    if (whole && super::super::metis::is_metis(head))
        || (!whole && super::super::metis::could_start_metis(head))
    {
        return None;
    }
    let label_header = super::weight_header(head, opts)
        .map(|(ln, line, rest)| (ln, super::text::show(line), start + rest as u64));
    let after = label_header.as_ref().map_or(0, |h| (h.2 - start) as usize);
    // Whether `text` has a data line (the weight option aside).
    let data = |text: &[u8]| {
        let any = EdgeListOptions {
            weighted: None,
            ..*opts
        };
        Weights::decide(text, &any).auto.is_some()
    };
    // No data line in the head: the whole-file readers decide.
    if !data(&head[after..]) {
        return None;
    }
    let labelled = Weights::decide(&head[after..], opts);
    let header = match header_line(head) {
        Some((ln, line, rest)) if opts.ids != IdMode::Labels => {
            Some((ln, super::text::show(line), start + rest as u64))
        }
        _ => None,
    };
    let weights = match &header {
        Some((_, _, rest)) => {
            let body = &head[(rest - start) as usize..];
            // A header and no data line after it in the head: the whole-file readers
            // (one process then reads the line as the file's data).
            if !data(body) {
                return None;
            }
            Weights::decide(body, opts)
        }
        None => Weights::decide(head, opts),
    };
    Some(HeadPlan {
        start,
        header,
        weights,
        labelled,
        label_header,
    })
}

/// [`read_numeric`] with a chosen piece length (`None`: the default) and block size.
#[cfg(unix)]
fn stream_in(
    path: &Path,
    opts: &EdgeListOptions,
    piece: Option<u64>,
    block: usize,
) -> Result<Option<Parsed>> {
    use std::os::unix::fs::FileExt;
    let Some((f, len, ws)) = streamable(path, opts) else {
        return Ok(None);
    };
    let weighted = ws.weighted();
    let strict = opts.ids == IdMode::Numeric;
    let name = path.display().to_string();

    // Pieces [a, b) of the file; a piece owns the lines that start in it.
    let threads = rayon::current_num_threads().max(1) as u64;
    let target = piece
        .unwrap_or_else(|| (len / (threads * 4)).max(PIECE_MIN))
        .max(1);
    let bounds: Vec<(u64, u64)> = (0..len.div_ceil(target))
        .map(|k| (k * target, ((k + 1) * target).min(len)))
        .collect();
    // Slots per piece: its edge lines start at least 4 bytes apart.
    let room: Vec<usize> = bounds
        .iter()
        .map(|&(a, b)| ((b - a) / 4 + 1) as usize)
        .collect();
    let total: usize = room.iter().sum();
    let what = || format!("parsing up to {total} edge lines");
    let (Ok(mut src), Ok(mut dst)) = (
        alloc::try_zeroed_vec::<u32>(total, what),
        alloc::try_zeroed_vec::<u32>(total, what),
    ) else {
        return Ok(None);
    };
    let mut wts = if weighted {
        match alloc::try_zeroed_vec::<f64>(total, what) {
            Ok(w) => w,
            Err(_) => return Ok(None),
        }
    } else {
        Vec::new()
    };
    // Each piece marks its ids for the numbering, within a share of MARKS_WORDS.
    let marks_cap = MARKS_WORDS / bounds.len().max(1);
    let mut jobs = Vec::with_capacity(bounds.len());
    let mut start = 0usize;
    {
        let (mut rs, mut rd, mut rw) = (&mut src[..], &mut dst[..], &mut wts[..]);
        for (&(a, b), &r) in bounds.iter().zip(&room) {
            let (s, rs2) = std::mem::take(&mut rs).split_at_mut(r);
            let (d, rd2) = std::mem::take(&mut rd).split_at_mut(r);
            let (w, rw2) = std::mem::take(&mut rw).split_at_mut(if weighted { r } else { 0 });
            (rs, rd, rw) = (rs2, rd2, rw2);
            jobs.push((start, a, b, (s, d, w)));
            start += r;
        }
    }
    let outs: Option<Vec<(usize, PieceOut<u32>)>> = jobs
        .into_par_iter()
        .map(|(start, a, b, slots)| {
            let mut p = NumParser::<u32>::new(&name, opts, strict, slots);
            p.ws = ws;
            if !strict {
                p.marks = Marks::on(marks_cap);
            }
            let read = |buf: &mut [u8], at: u64| f.read_exact_at(buf, at).is_ok();
            parse_piece(&mut p, read, a, b, len, block)?;
            Some((start, p.finish()))
        })
        .collect();
    let Some(outs) = outs else {
        return Ok(None);
    };
    // Longer than it said (growing while read): the whole-file path reads it as a stream.
    let mut one = [0u8; 1];
    if !matches!(f.read_at(&mut one, len), Ok(0)) {
        return Ok(None);
    }
    let Some(raw) = Raw::assemble(src, dst, weighted.then_some(wts), outs) else {
        return Ok(None);
    };
    if strict {
        numeric_as_given(raw, &name).map(Some)
    } else {
        compact(raw, &name).map(Some)
    }
}

#[cfg(not(unix))]
pub(crate) fn streamable(_: &Path, _: &EdgeListOptions) -> Option<(std::fs::File, u64, Weights)> {
    None
}

#[cfg(not(unix))]
pub(crate) fn range_plan(_: &Path, _: &EdgeListOptions) -> Option<RangePlan> {
    None
}

#[cfg(not(unix))]
fn stream_in(_: &Path, _: &EdgeListOptions, _: Option<u64>, _: usize) -> Result<Option<Parsed>> {
    Ok(None)
}

/// Parses the lines that start in `[a, b)` of a file of `len` bytes, read through `read`
/// (`read(buf, at)` fills `buf` from offset `at`, false on failure) in blocks of `block`
/// bytes. `None`: a read failed, a line is longer than a block, or the parser gave up.
fn parse_piece(
    p: &mut NumParser<'_, '_, u32>,
    read: impl Fn(&mut [u8], u64) -> bool,
    a: u64,
    b: u64,
    len: u64,
    block: usize,
) -> Option<()> {
    let mut parse = |lines: &[u8]| matches!(p.parse(lines), Ok(Ok(()))).then_some(());
    let mut buf: Vec<u8> = Vec::with_capacity(2 * block);
    // Reads from one byte early: a line break there means a line starts at `a`; otherwise
    // the line running into the piece is the previous piece's, skipped up to its end.
    let mut pos = a.saturating_sub(1);
    let mut skipping = a > 0;
    // File offset of buf[0].
    let mut base = pos;
    loop {
        let want = (block as u64).min(len - pos) as usize;
        if want == 0 {
            // The end of the file: a last line without a line break.
            if !skipping && !buf.is_empty() {
                parse(&buf)?;
            }
            return Some(());
        }
        let old = buf.len();
        buf.resize(old + want, 0);
        if !read(&mut buf[old..], pos) {
            return None;
        }
        pos += want as u64;
        if skipping {
            match memchr::memchr(b'\n', &buf) {
                Some(i) => {
                    buf.drain(..=i);
                    base += i as u64 + 1;
                    skipping = false;
                }
                None => {
                    base += buf.len() as u64;
                    buf.clear();
                    continue;
                }
            }
            if base >= b {
                // The line that ran into the piece also ran past it.
                return Some(());
            }
        }
        // The piece's last line ends at the first line break at or after byte b - 1.
        let from = (b - 1 - base) as usize;
        if from < buf.len() {
            if let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
                return parse(&buf[..from + i + 1]);
            }
        }
        // Parse the whole lines, keep the unfinished one for the next block.
        match memchr::memrchr(b'\n', &buf) {
            Some(i) => {
                parse(&buf[..=i])?;
                buf.copy_within(i + 1.., 0);
                buf.truncate(buf.len() - i - 1);
                base += i as u64 + 1;
            }
            None if buf.len() >= block => return None,
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::edgelist::{parse_edges, tests::messy_text};

    fn scratch(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("trident-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// The streamed parse equals the whole-file parse, for every piece length (down to one
    /// byte, so pieces start and end inside lines, at line breaks, inside CRLF pairs) and
    /// block size down to the longest line.
    #[test]
    fn streaming_equals_the_whole_file_parse() {
        for (k, weighted) in [(0u64, false), (1, true), (2, false)] {
            let text = messy_text(300, 40, weighted, 7 + k);
            let text = if k == 2 { text + "\n" } else { text };
            let path = scratch(&format!("messy{k}.el"), text.as_bytes());
            for (ids, loop_only_nodes) in [
                (IdMode::Auto, false),
                (IdMode::Auto, true),
                (IdMode::Numeric, false),
            ] {
                let opts = EdgeListOptions {
                    ids,
                    loop_only_nodes,
                    ..Default::default()
                };
                let want =
                    parse_edges(text.as_bytes(), &path.display().to_string(), &opts).unwrap();
                for piece in [1u64, 2, 3, 5, 17, 64, 1000, 1 << 20] {
                    for block in [32usize, 33, 100, 4096] {
                        let got = stream_in(&path, &opts, Some(piece), block)
                            .unwrap()
                            .unwrap_or_else(|| panic!("stepped aside: {piece} {block}"))
                            .into_edge_list();
                        assert_eq!(got, want, "{ids:?} piece {piece} block {block}");
                    }
                }
            }
        }
    }

    /// Marking gives up past its cap, and the numbering then marks in a pass of its own.
    #[test]
    fn marks_give_up_past_their_cap() {
        let mut m = Marks::on(2);
        m.mark(5);
        m.mark(127);
        assert_eq!(m.bits.as_deref(), Some(&[1u64 << 5, 1 << 63][..]));
        m.mark(128);
        assert!(m.bits.is_none());
        m.mark(1);
        assert!(m.bits.is_none());
    }

    /// Every input the stream does not handle steps aside, so the whole-file path gives
    /// its answer or its error.
    #[test]
    fn other_inputs_step_aside() {
        let opts = EdgeListOptions::default();
        for (name, text) in [
            ("labels.el", &b"a b\nb c\n"[..]),
            ("header.el", b"source target\n1 2\n"),
            ("bom.el", b"\xEF\xBB\xBF1 2\n2 3\n"),
            ("gzip.el", b"\x1f\x8b\x08\x00"),
            (
                "mtx.el",
                b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n",
            ),
            ("bad.el", b"1 2\n3 x\n"),
            ("wide.el", b"1 2\n99999999999 3\n"),
            ("comments.el", b"# nothing\n"),
            ("long.el", format!("1 2\n3{}4\n", " ".repeat(70)).as_bytes()),
        ] {
            let path = scratch(name, text);
            let got = stream_in(&path, &opts, Some(3), 32).unwrap();
            assert!(got.is_none(), "{name}");
        }
        let labels = EdgeListOptions {
            ids: IdMode::Labels,
            ..Default::default()
        };
        let path = scratch("plain.el", b"1 2\n2 3\n");
        assert!(stream_in(&path, &labels, None, BLOCK).unwrap().is_none());
        assert!(stream_in(&path, &opts, None, BLOCK).unwrap().is_some());
        let missing = path.with_file_name("missing.el");
        assert!(stream_in(&missing, &opts, None, BLOCK).unwrap().is_none());
    }
}

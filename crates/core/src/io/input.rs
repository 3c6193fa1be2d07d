//! Input bytes, read exactly once: files, `-` (standard input), pipes, FIFOs and process
//! substitution alike, gzip-compressed input decompressed on the fly; the format told from
//! the content (banner, magic bytes), never from the file name alone.
//!
//! # Limits
//!
//! * Every buffer is reserved fallibly: input that does not fit in memory is a
//!   [`ParseErrorKind::TooLarge`] error saying how many bytes were needed, never an abort.
//! * Text input (anything that is not `.npy`) may not have a line longer than
//!   [`MAX_LINE_BYTES`] (1 MiB): a stream without line breaks is refused as soon as it
//!   passes the limit, instead of being buffered until memory runs out.
//!
//! [`ParseErrorKind::TooLarge`]: crate::ParseErrorKind::TooLarge

use std::io::Read;
use std::path::{Path, PathBuf};

use super::perr;
use crate::alloc;
use crate::error::{Error, ParseErrorKind as K, Result};

/// The longest line a text format (Matrix Market, edge lists) may have, in bytes.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The name used for standard input in messages.
pub const STDIN_NAME: &str = "<stdin>";

/// What a file holds, told from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// Starts with a `%%MatrixMarket` banner (after an optional UTF-8 byte-order mark).
    MatrixMarket,
    /// Starts with the NumPy magic `\x93NUMPY`.
    Npy,
    /// Starts with the gzip magic (only seen in bytes that were not decompressed).
    Gzip,
    /// A compressed or binary format Trident does not read (its name).
    Binary(&'static str),
    /// Anything else: text, read by the graph readers as METIS when it is one
    /// ([`crate::io::metis::is_metis`]), else as an edge list.
    Text,
    /// Nothing but white space (or nothing at all).
    Empty,
}

impl Detected {
    /// A short description for messages ("a Matrix Market file", "a NumPy .npy array").
    pub fn describe(self) -> String {
        match self {
            Detected::MatrixMarket => "a Matrix Market file".into(),
            Detected::Npy => "a NumPy .npy array".into(),
            Detected::Gzip => "gzip-compressed data".into(),
            Detected::Binary(what) => what.into(),
            Detected::Text => "a text file (edge list)".into(),
            Detected::Empty => "an empty file".into(),
        }
    }
}

/// The format of `bytes`, from their content (never from a file name):
///
/// * the NumPy magic `\x93NUMPY`: [`Detected::Npy`];
/// * a first line starting with `%%` (after an optional UTF-8 byte-order mark):
///   [`Detected::MatrixMarket`], whether or not the banner is valid, so that a misspelt
///   banner (`%%MatrixMarkt ...`) is reported by the Matrix Market reader (file, line 1,
///   the problem) instead of the file being read as an edge list;
/// * gzip, other compressed or binary formats (or NUL bytes in the first 4 KiB):
///   [`Detected::Gzip`] / [`Detected::Binary`];
/// * nothing but white space: [`Detected::Empty`];
/// * anything else: [`Detected::Text`] (an edge list for the graph readers).
///
/// [`detect_format`] is the same with the cases no reader takes turned into errors.
pub fn detect(bytes: &[u8]) -> Detected {
    let b = strip_bom(bytes);
    let starts = |m: &[u8]| b.len() >= m.len() && &b[..m.len()] == m;
    if starts(b"%%") {
        return Detected::MatrixMarket;
    }
    if starts(b"\x93NUMPY") {
        return Detected::Npy;
    }
    if starts(b"\x1f\x8b") {
        return Detected::Gzip;
    }
    for (magic, what) in [
        (
            &b"\x28\xb5\x2f\xfd"[..],
            "zstd-compressed data (decompress it first)",
        ),
        (b"BZh", "bzip2-compressed data (decompress it first)"),
        (b"\xfd7zXZ\x00", "xz-compressed data (decompress it first)"),
        (b"PK\x03\x04", "a zip archive (extract it first)"),
        (b"\x7fELF", "an executable (ELF), not data"),
        (b"\x89HDF", "an HDF5 file (not supported)"),
        (b"PAR1", "a Parquet file (not supported)"),
    ] {
        if starts(magic) {
            return Detected::Binary(what);
        }
    }
    let head = &b[..b.len().min(4096)];
    if memchr::memchr(0, head).is_some() {
        return Detected::Binary("binary data (NUL bytes), not a text format");
    }
    if b.iter().all(|c| c.is_ascii_whitespace()) {
        return Detected::Empty;
    }
    Detected::Text
}

/// The format of `bytes` ([`detect`]) as one of those Trident reads
/// ([`Detected::MatrixMarket`], [`Detected::Npy`] or [`Detected::Text`]), or the error to
/// give: `name: empty file` ([`K::Empty`]), or what the data is (compressed, binary;
/// [`K::Unsupported`]). The one content-based choice of format for every command: call it
/// (or [`Input::format`]) instead of looking at the file name.
pub fn detect_format(bytes: &[u8], name: &str) -> Result<Detected> {
    match detect(bytes) {
        d @ (Detected::MatrixMarket | Detected::Npy | Detected::Text) => Ok(d),
        Detected::Empty => Err(perr(name, None, K::Empty, "empty file")),
        other => Err(perr(
            name,
            None,
            K::Unsupported,
            format!("this is {}, not a format Trident reads", other.describe()),
        )),
    }
}

/// `bytes` without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// How the readers read an input: the limits a caller may set (the CLI takes them from its
/// environment). The default is what every `read_*` function without options uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// The most bytes an input (after decompression) may hold in memory; `None` (default):
    /// half of physical memory ([`alloc::default_max_input_bytes`]). With overcommit the
    /// kernel grants any reservation and kills the process once the pages are touched, so a
    /// decompression bomb (a small `.gz` of newlines, say) is refused at this limit, with a
    /// message ([`is_input_limit`] tells that error), before it can take the machine's memory.
    pub max_input_bytes: Option<u64>,
}

impl ReadOptions {
    /// The input limit in bytes: [`Self::max_input_bytes`], else the default.
    pub fn input_limit(&self) -> u64 {
        self.max_input_bytes
            .unwrap_or_else(alloc::default_max_input_bytes)
    }
}

/// Part of the message of the error for an input over [`ReadOptions::input_limit`].
const OVER_LIMIT: &str = "allowed as an input";

/// True when `e` is the error for an input larger than [`ReadOptions::input_limit`] (so
/// that a caller can say how its users change the limit).
pub fn is_input_limit(e: &Error) -> bool {
    matches!(e, Error::Parse(p) if p.kind == K::TooLarge && p.message.contains(OVER_LIMIT))
}

/// A whole input in memory.
#[derive(Debug, Clone)]
pub struct Input {
    /// The name for messages: the path as given, or [`STDIN_NAME`].
    pub name: String,
    /// The path as given (`-` for standard input).
    pub path: PathBuf,
    /// The bytes, decompressed when the input was gzip.
    pub bytes: Vec<u8>,
    /// True when the input was gzip-compressed.
    pub was_gzip: bool,
}

impl Input {
    /// Reads `path` once: `-` is standard input; a gzip stream (told by its magic bytes,
    /// whatever the name) is decompressed. Pipes and FIFOs give the same bytes as a file.
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        Self::read_limited(path, &ReadOptions::default())
    }

    /// [`Input::read`] with the limits of `read`.
    pub fn read_limited(path: impl AsRef<Path>, read: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        if path.as_os_str() == "-" {
            let stdin = std::io::stdin();
            let lock = stdin.lock();
            return Self::from_reader_limited(lock, STDIN_NAME, path, None, read);
        }
        let io_err = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let f = std::fs::File::open(path).map_err(io_err)?;
        let meta = f.metadata().map_err(io_err)?;
        if meta.is_dir() {
            return Err(perr(
                &path.display().to_string(),
                None,
                K::Io,
                "is a directory, not a file",
            ));
        }
        // Only a regular file's length is a size hint; a pipe or FIFO says 0.
        let hint = meta.is_file().then_some(meta.len());
        let name = path.display().to_string();
        if let Some(len) = hint {
            if let Some(bytes) = read_parallel(&f, len, &name, path, read.input_limit())? {
                return Ok(Self {
                    name,
                    path: path.to_path_buf(),
                    bytes,
                    was_gzip: false,
                });
            }
        }
        Self::from_reader_limited(f, &name, path, hint, read)
    }

    /// Reads everything from `r` (see [`Input::read`]); `name` is used in messages.
    pub fn from_reader(
        r: impl Read,
        name: &str,
        path: &Path,
        size_hint: Option<u64>,
    ) -> Result<Self> {
        Self::from_reader_limited(r, name, path, size_hint, &ReadOptions::default())
    }

    /// [`Input::from_reader`] with the limits of `read`.
    pub fn from_reader_limited(
        mut r: impl Read,
        name: &str,
        path: &Path,
        size_hint: Option<u64>,
        read: &ReadOptions,
    ) -> Result<Self> {
        let limit = read.input_limit();
        let io_err = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        // Peek at the first two bytes for the gzip magic, then read on from there.
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            match r.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(e)),
            }
        }
        let chained = (&head[..got]).chain(r);
        let (bytes, was_gzip) = if head[..got] == [0x1f, 0x8b] {
            let mut gz = flate2::read::MultiGzDecoder::new(chained);
            (slurp(&mut gz, name, path, None, true, limit)?, true)
        } else {
            let mut plain = chained;
            (
                slurp(&mut plain, name, path, size_hint, false, limit)?,
                false,
            )
        };
        Ok(Self {
            name: name.to_owned(),
            path: path.to_path_buf(),
            bytes,
            was_gzip,
        })
    }

    /// Input from bytes already in memory (gzip bytes are decompressed).
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<Self> {
        if detect(&bytes) == Detected::Gzip {
            return Self::from_reader(&bytes[..], name, Path::new(name), None);
        }
        check_lines(&bytes, name)?;
        Ok(Self {
            name: name.to_owned(),
            path: PathBuf::from(name),
            bytes,
            was_gzip: false,
        })
    }

    /// The format of the content.
    pub fn detect(&self) -> Detected {
        detect(&self.bytes)
    }

    /// The format of the content as [`detect_format`] gives it: Matrix Market, NumPy or
    /// text, else an error naming the file (empty, compressed, binary).
    pub fn format(&self) -> Result<Detected> {
        detect_format(&self.bytes, &self.name)
    }
}

/// Files at least this large are read by several threads at once.
const PARALLEL_READ_MIN: u64 = 16 << 20;
/// Bytes per parallel read.
const READ_PIECE: usize = 4 << 20;

/// A large plain (not gzip) regular file of `len` bytes read in pieces by the rayon
/// threads (positioned reads into disjoint parts of one zeroed buffer: the copy out of the
/// page cache and the page faults of the buffer spread over the cores). `None`: not such a
/// file (small, gzip, one thread, at or beyond the input limit `limit`, or its size changed
/// while being read): the caller reads it as a stream from the start, which also gives the
/// errors.
fn read_parallel(
    f: &std::fs::File,
    len: u64,
    name: &str,
    path: &Path,
    limit: u64,
) -> Result<Option<Vec<u8>>> {
    if len >= limit {
        return Ok(None);
    }
    read_parallel_in(f, len, name, path, PARALLEL_READ_MIN, READ_PIECE)
}

/// [`read_parallel`] for files of at least `min` bytes, read in pieces of `piece` bytes.
#[cfg(unix)]
fn read_parallel_in(
    f: &std::fs::File,
    len: u64,
    name: &str,
    path: &Path,
    min: u64,
    piece: usize,
) -> Result<Option<Vec<u8>>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    if len < min.max(2) || rayon::current_num_threads() < 2 {
        return Ok(None);
    }
    let Ok(size) = usize::try_from(len) else {
        return Ok(None);
    };
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    // gzip, binary data, and a .npy file whose header is bad or does not match the file's
    // length: read as a stream, which refuses them early with the right message.
    let mut head = vec![0u8; size.min(16 << 10)];
    f.read_exact_at(&mut head, 0).map_err(io_err)?;
    match detect(&head) {
        Detected::Gzip | Detected::Binary(_) => return Ok(None),
        Detected::Npy if !matches!(super::npy_header::expected_len(&head, name), Ok(Some(w)) if w == len) => {
            return Ok(None)
        }
        _ => {}
    }
    let mut buf = alloc::try_zeroed_vec::<u8>(size, || "reading the input".to_owned())
        .map_err(|e| perr(name, None, K::TooLarge, e.to_string()))?;
    let r: std::io::Result<()> = buf
        .par_chunks_mut(piece)
        .enumerate()
        .try_for_each(|(k, p)| f.read_exact_at(p, (k * piece) as u64));
    match r {
        Ok(()) => {}
        // Shorter than it said: read it as a stream instead.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(io_err(e)),
    }
    // Longer than it said (growing): read it as a stream instead.
    let mut one = [0u8; 1];
    if f.read_at(&mut one, len).map_err(io_err)? != 0 {
        return Ok(None);
    }
    check_lines(&buf, name)?;
    Ok(Some(buf))
}

#[cfg(not(unix))]
fn read_parallel_in(
    _: &std::fs::File,
    _: u64,
    _: &str,
    _: &Path,
    _: u64,
    _: usize,
) -> Result<Option<Vec<u8>>> {
    Ok(None)
}

/// Refuses text with a line longer than [`MAX_LINE_BYTES`].
fn check_lines(bytes: &[u8], name: &str) -> Result<()> {
    if detect(bytes) == Detected::Npy {
        return Ok(());
    }
    match long_line(bytes, 0) {
        Ok(_) => Ok(()),
        Err(start) => Err(too_long_line(bytes, start, name)),
    }
}

/// Checks the lines of `bytes` from `line_start` (the start of a line) on, jumping from line
/// break to line break at most [`MAX_LINE_BYTES`] apart (a search backwards from the end of
/// each window, so a file of short lines costs a few bytes per MiB). `Ok(s)`: every line
/// that starts before `s` is within the limit, `s` is the start of a line and at most
/// `MAX_LINE_BYTES` bytes follow it (an unfinished line, to check again when more bytes
/// come); `Err(s)`: the line starting at `s` is too long.
fn long_line(bytes: &[u8], mut line_start: usize) -> std::result::Result<usize, usize> {
    while bytes.len() - line_start > MAX_LINE_BYTES {
        // A line of at most MAX_LINE_BYTES bytes ends within the next MAX_LINE_BYTES + 1.
        let window = &bytes[line_start..line_start + MAX_LINE_BYTES + 1];
        match memchr::memrchr(b'\n', window) {
            Some(k) => line_start += k + 1,
            None => return Err(line_start),
        }
    }
    Ok(line_start)
}

/// [`check_lines`] of whole lines of a file after its first `skip` lines (a byte range of
/// it): a line longer than [`MAX_LINE_BYTES`] is the error one process gives for the file,
/// naming the file's line.
pub(crate) fn check_range_lines(bytes: &[u8], name: &str, skip: usize) -> Result<()> {
    match long_line(bytes, 0) {
        Ok(_) => Ok(()),
        Err(start) => Err(too_long_line_after(bytes, start, name, skip)),
    }
}

#[cold]
fn too_long_line(bytes: &[u8], line_start: usize, name: &str) -> Error {
    too_long_line_after(bytes, line_start, name, 0)
}

#[cold]
fn too_long_line_after(bytes: &[u8], line_start: usize, name: &str, skip: usize) -> Error {
    let line = skip + memchr::memchr_iter(b'\n', &bytes[..line_start.min(bytes.len())]).count() + 1;
    perr(
        name,
        Some(line),
        K::TooLarge,
        format!(
            "line longer than the limit of {MAX_LINE_BYTES} bytes (1 MiB) for text input; \
             is this a text file with line breaks?"
        ),
    )
}

/// Reads all of `r`, growing the buffer fallibly and (for text) enforcing the line limit and
/// the input limit `limit` (bytes).
fn slurp(
    r: &mut dyn Read,
    name: &str,
    path: &Path,
    size_hint: Option<u64>,
    gzip: bool,
    limit: u64,
) -> Result<Vec<u8>> {
    const STEP: usize = 1 << 22;
    let too_large = |e: alloc::AllocError| perr(name, None, K::TooLarge, e.to_string());
    let what = || {
        format!(
            "reading {}",
            if gzip {
                "the decompressed input"
            } else {
                "the input"
            }
        )
    };
    let mut buf: Vec<u8> = Vec::new();
    let first = size_hint
        .map(|h| usize::try_from(h).unwrap_or(usize::MAX).saturating_add(1))
        .unwrap_or(1 << 16);
    alloc::try_reserve(&mut buf, first, what).map_err(too_large)?;
    // Text unless the content says otherwise (decided once 4 KiB are in, or at the end).
    let mut text: Option<bool> = None;
    // A .npy stream's length, once its header is in.
    let mut npy_len: Option<u64> = None;
    // Start of a line at or before the current (unfinished) one; lines before it are checked.
    let mut line_start = 0usize;
    loop {
        if buf.len() as u64 >= limit {
            return Err(perr(
                name,
                None,
                K::TooLarge,
                format!(
                    "{} is larger than the {} {OVER_LIMIT} \
                     (the default limit is half this machine's memory)",
                    if gzip {
                        "the decompressed input"
                    } else {
                        "the input"
                    },
                    alloc::human_bytes(u128::from(limit)),
                ),
            ));
        }
        if buf.len() == buf.capacity() {
            let extra = buf.len().clamp(STEP, 1 << 30);
            alloc::try_reserve(&mut buf, extra, what).map_err(too_large)?;
        }
        let len = buf.len();
        let room = (buf.capacity() - len).min(STEP) as u64;
        // `read_to_end` on a `take` appends into the spare capacity without zeroing it first.
        let k = match (&mut *r).take(room).read_to_end(&mut buf) {
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let len = buf.len();
                if gzip
                    && matches!(
                        e.kind(),
                        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
                    )
                {
                    return Err(perr(
                        name,
                        None,
                        K::BadValue,
                        format!("corrupt gzip stream after {len} decompressed bytes: {e}"),
                    ));
                }
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
        };
        // Fewer bytes than asked for: the reader is at its end.
        let eof = (k as u64) < room;
        if text.is_none() && (buf.len() >= 4096 || eof) {
            let d = detect(&buf);
            if let Detected::Binary(what) = d {
                // Binary data is refused at once, not read to the input limit first.
                return Err(perr(
                    name,
                    None,
                    K::Unsupported,
                    format!("this is {what}, not a format Trident reads"),
                ));
            }
            text = Some(d != Detected::Npy);
        }
        if text == Some(true) {
            line_start = long_line(&buf, line_start).map_err(|s| too_long_line(&buf, s, name))?;
        }
        if text == Some(false) {
            // A .npy stream: its header says how long it is; refuse a bad header or more
            // bytes than it says as soon as they are seen.
            if npy_len.is_none() {
                npy_len = super::npy_header::expected_len(&buf, name)?;
            }
            if let Some(want) = npy_len.filter(|&w| buf.len() as u64 > w) {
                return Err(perr(
                    name,
                    None,
                    K::EntryCount,
                    format!(
                        "more bytes than the .npy header says the file has ({want}): \
                         at least {} after the data",
                        buf.len() as u64 - want
                    ),
                ));
            }
        }
        if eof {
            break;
        }
    }
    Ok(buf)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The input limit comes from the options alone: a gzip stream and a plain file (past
    /// one read step) over `max_input_bytes` are refused with the limit's error, and the same
    /// inputs read whole under the default limit (the graph readers: `io::edgelist`'s
    /// `graph_readers_keep_the_input_limit`).
    #[test]
    fn read_options_limit_the_input() {
        use std::io::Write;
        let text = b"0 1\n1 2\n2 0\n".repeat(450_000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        let small = ReadOptions {
            max_input_bytes: Some(1 << 20),
        };
        let refused = |r: Result<Input>| match r {
            Err(e) => assert!(
                is_input_limit(&e) && e.to_string().contains("1048576"),
                "{e}"
            ),
            Ok(i) => panic!("read {} bytes past the limit", i.bytes.len()),
        };
        let p = Path::new("t.gz");
        refused(Input::from_reader_limited(&gz[..], "t.gz", p, None, &small));
        let whole = Input::from_reader(&gz[..], "t.gz", p, None).unwrap();
        assert!(whole.bytes == text);
        let dir = std::env::temp_dir().join(format!("trident-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("g.el");
        std::fs::write(&f, &text).unwrap();
        refused(Input::read_limited(&f, &small));
        assert!(!is_input_limit(&Error::invalid("x", "y")));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn parallel_read_gives_the_bytes_or_steps_aside() {
        let dir = std::env::temp_dir().join(format!("trident-par-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{} {}\n", i, i.wrapping_mul(7919) % 1000).into_bytes())
            .collect();
        let p = dir.join("a.txt");
        std::fs::write(&p, &text).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let read = |p: &Path, min: u64| {
            let f = std::fs::File::open(p).unwrap();
            let len = f.metadata().unwrap().len();
            pool.install(|| read_parallel_in(&f, len, "a", p, min, 4096))
        };
        assert_eq!(read(&p, 0).unwrap().unwrap(), text);
        // Small files, and gzip (read as a stream, decompressed), step aside.
        assert!(read(&p, 1 << 40).unwrap().is_none());
        let gz = dir.join("a.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &text).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert!(read(&gz, 0).unwrap().is_none());
        // The line limit holds on this path too.
        let mut long = text.clone();
        long.extend(std::iter::repeat_n(b'7', MAX_LINE_BYTES + 10));
        std::fs::write(&p, &long).unwrap();
        let e = read(&p, 0).unwrap_err();
        assert!(e.to_string().contains("line longer"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

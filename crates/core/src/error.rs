//! The one error type of Trident, and the parse error that names file, line and problem.

use std::fmt;
use std::path::PathBuf;

/// A boxed underlying error, kept as the [`std::error::Error::source`] of a Trident error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias used throughout Trident.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong while reading a file; tests match on this rather than on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// Missing, malformed or unknown header / banner line.
    BadHeader,
    /// The size line promises a different number of entries than the file holds.
    EntryCount,
    /// A row or column index outside the declared shape (or zero in a 1-based format).
    IndexOutOfRange,
    /// A value that is not a number, or is NaN / infinite where a finite number is needed.
    BadValue,
    /// A line with too few fields, or a file that ends early.
    Truncated,
    /// No data at all.
    Empty,
    /// A valid but unsupported variant (e.g. complex field, hermitian symmetry, big-endian npy).
    Unsupported,
    /// The file could not be read.
    Io,
    /// The input needs more memory than can be allocated, or breaks a documented limit
    /// (such as [`crate::io::MAX_LINE_BYTES`]).
    TooLarge,
}

/// An input-file error: the file, the 1-based line where it is known, and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// File the error is in (`<memory>` for in-memory input).
    pub file: PathBuf,
    /// 1-based line number, if the error belongs to a line.
    pub line: Option<usize>,
    /// Class of the problem.
    pub kind: ParseErrorKind,
    /// Human-readable description.
    pub message: String,
}

impl ParseError {
    /// A new parse error.
    pub fn new(
        file: impl Into<PathBuf>,
        line: Option<usize>,
        kind: ParseErrorKind,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            line,
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// Every error Trident returns. Nothing in Trident panics on user input or on device failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file is malformed.
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// An operating-system I/O failure on a named file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A format invariant does not hold (unsorted CSR columns, bad row pointers, …).
    #[error("invalid {format}: {message}")]
    Invalid {
        /// The format whose invariant failed, e.g. `"CSR"`.
        format: &'static str,
        /// Which invariant and where.
        message: String,
    },
    /// Operand shapes do not agree.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// An index or size does not fit in the chosen index type.
    #[error("index {value} does not fit in the index type {index_type}")]
    IndexOverflow {
        /// The offending value.
        value: u128,
        /// Name of the index type, e.g. `"u32"`.
        index_type: &'static str,
    },
    /// The backend has no usable device (no driver, no platform, no GPU).
    #[error("{backend}: no device: {message}")]
    NoDevice {
        /// Backend name.
        backend: &'static str,
        /// Why.
        message: String,
        /// The underlying driver or library error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The device (or, with backend `"host"`, the host) ran out of memory.
    #[error("{backend}: out of {} memory: {message}", if *backend == "host" { "host" } else { "device" })]
    OutOfMemory {
        /// Backend name.
        backend: &'static str,
        /// What was being allocated.
        message: String,
        /// The underlying driver or library error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// Any other backend failure (kernel build, launch, driver error).
    #[error("{backend}: {message}")]
    Backend {
        /// Backend name.
        backend: &'static str,
        /// The driver's or compiler's message.
        message: String,
        /// The underlying driver or library error, if any.
        #[source]
        source: Option<BoxError>,
    },
    /// The request is valid but not implemented by this backend or format.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// In a job of many processes, another rank failed at a step all ranks take together
    /// (that rank reports its own error and ends the job); this rank stops because of it.
    #[error("rank {rank} failed: {message}")]
    OtherRank {
        /// The rank that failed.
        rank: usize,
        /// The step it failed at.
        message: String,
    },
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(format: &'static str, message: impl Into<String>) -> Self {
        Error::Invalid {
            format,
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Shape`].
    pub fn shape(message: impl Into<String>) -> Self {
        Error::Shape(message.into())
    }

    /// [`Error::Backend`] of `backend` with `message` and no source.
    pub fn backend(backend: &'static str, message: impl Into<String>) -> Self {
        Error::Backend {
            backend,
            message: message.into(),
            source: None,
        }
    }

    /// [`Error::NoDevice`] of `backend` with `message` and no source.
    pub fn no_device(backend: &'static str, message: impl Into<String>) -> Self {
        Error::NoDevice {
            backend,
            message: message.into(),
            source: None,
        }
    }

    /// [`Error::OutOfMemory`] of `backend` with `message` and no source.
    pub fn out_of_memory(backend: &'static str, message: impl Into<String>) -> Self {
        Error::OutOfMemory {
            backend,
            message: message.into(),
            source: None,
        }
    }

    /// The same error with `source` as its underlying cause (backend errors only; other
    /// kinds are returned unchanged).
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        if let Error::Backend { source: s, .. }
        | Error::NoDevice { source: s, .. }
        | Error::OutOfMemory { source: s, .. } = &mut self
        {
            *s = Some(source.into());
        }
        self
    }

    /// The same error with `what: ` in front of its message (backend errors, shape and
    /// invalid-format errors, index overflows (which become [`Error::Invalid`]); others are
    /// returned unchanged): what was being done.
    pub fn context(mut self, what: impl std::fmt::Display) -> Self {
        match &mut self {
            Error::Backend { message, .. }
            | Error::NoDevice { message, .. }
            | Error::OutOfMemory { message, .. }
            | Error::Invalid { message, .. }
            | Error::Shape(message) => *message = format!("{what}: {message}"),
            // An index overflow gains the context as an invalid-index error, so that the
            // file (or operation) it came from is named.
            Error::IndexOverflow { value, index_type } => {
                return Error::invalid(
                    "index",
                    format!("{what}: index {value} does not fit in the index type {index_type}"),
                )
            }
            _ => {}
        }
        self
    }

    /// [`Error::OtherRank`]: rank `rank` failed at `message`.
    pub fn other_rank(rank: usize, message: impl Into<String>) -> Self {
        Error::OtherRank {
            rank,
            message: message.into(),
        }
    }

    /// True for [`Error::OtherRank`]: the error that explains it is another rank's, which
    /// that rank reports.
    pub fn is_other_rank(&self) -> bool {
        matches!(self, Error::OtherRank { .. })
    }

    /// True for [`Error::NoDevice`]: the caller may fall back to another backend or skip.
    pub fn is_no_device(&self) -> bool {
        matches!(self, Error::NoDevice { .. })
    }

    /// The parse error inside, if this is one.
    pub fn as_parse(&self) -> Option<&ParseError> {
        match self {
            Error::Parse(p) => Some(p),
            _ => None,
        }
    }
}

/// Adds what was being done to the error of a `Result` (see [`Error::context`]), lazily.
pub trait ResultExt<T> {
    /// `self`, with `what()` in front of the error's message.
    fn context<D: std::fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T> ResultExt<T> for Result<T> {
    fn context<D: std::fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.context(what()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_context_are_kept() {
        let io = std::io::Error::other("driver said no");
        let e = Error::backend("cuda", "launching k")
            .with_source(io)
            .context("spmv");
        assert_eq!(e.to_string(), "cuda: spmv: launching k");
        let src = std::error::Error::source(&e).expect("source kept");
        assert_eq!(src.to_string(), "driver said no");
        let r: Result<()> = Err(Error::shape("x"));
        assert_eq!(
            r.context(|| "matmul").unwrap_err().to_string(),
            "shape mismatch: matmul: x"
        );
    }
}

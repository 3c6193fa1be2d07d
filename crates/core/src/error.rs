//! The one error type of Trident, and the parse error that names file, line and problem.

use std::fmt;
use std::path::PathBuf;

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
    },
    /// The device ran out of memory.
    #[error("{backend}: out of device memory: {message}")]
    OutOfMemory {
        /// Backend name.
        backend: &'static str,
        /// What was being allocated.
        message: String,
    },
    /// Any other backend failure (kernel build, launch, driver error).
    #[error("{backend}: {message}")]
    Backend {
        /// Backend name.
        backend: &'static str,
        /// The driver's or compiler's message.
        message: String,
    },
    /// The request is valid but not implemented by this backend or format.
    #[error("unsupported: {0}")]
    Unsupported(String),
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

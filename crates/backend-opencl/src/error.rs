//! OpenCL failures as Trident errors that keep the OpenCL status as their source.

use std::fmt;

use ocl::core::Status;
use trident_core::{Error, Result};

use crate::BACKEND;

/// An OpenCL failure in one line: the status name and code where there is one (ocl's own
/// rendering spans a dozen lines), else ocl's message. The
/// [`std::error::Error::source`] of every Trident error that an OpenCL call caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClError {
    /// The OpenCL status code, e.g. -4, if the failure has one.
    pub status: Option<i32>,
    /// The status name, e.g. `CL_MEM_OBJECT_ALLOCATION_FAILURE`, or ocl's message.
    pub message: String,
}

impl ClError {
    /// The status of `e` (or its message).
    pub fn new(e: impl Into<ocl::Error>) -> Self {
        let e = e.into();
        match e.api_status() {
            Some(s) => Self {
                status: Some(s as i32),
                message: format!("{s:?}"),
            },
            None => Self {
                status: None,
                message: e.to_string().trim().to_string(),
            },
        }
    }

    /// True for the statuses of a failed allocation.
    fn is_out_of_memory(&self) -> bool {
        [
            Status::CL_MEM_OBJECT_ALLOCATION_FAILURE,
            Status::CL_OUT_OF_RESOURCES,
            Status::CL_OUT_OF_HOST_MEMORY,
            Status::CL_INVALID_BUFFER_SIZE,
        ]
        .iter()
        .any(|&s| self.status == Some(s as i32))
    }
}

impl fmt::Display for ClError {
    /// `CL_NAME (code)`, or ocl's message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(code) => write!(f, "{} ({code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ClError {}

/// [`Error::Backend`] saying what was being done, with `e` as its source.
pub(crate) fn cl_error(what: impl Into<String>, e: impl Into<ocl::Error>) -> Error {
    Error::backend(BACKEND, what).with_source(ClError::new(e))
}

/// Like [`cl_error`], but allocation failures (`CL_MEM_OBJECT_ALLOCATION_FAILURE`,
/// `CL_OUT_OF_RESOURCES`, …) are [`Error::OutOfMemory`].
pub(crate) fn alloc_error(what: impl Into<String>, e: impl Into<ocl::Error>) -> Error {
    alloc_error_of(what, ClError::new(e))
}

fn alloc_error_of(what: impl Into<String>, e: ClError) -> Error {
    if e.is_out_of_memory() {
        Error::out_of_memory(BACKEND, what).with_source(e)
    } else {
        Error::backend(BACKEND, what).with_source(e)
    }
}

/// Turns the ocl errors of a `Result` into Trident errors that say what was being done
/// (evaluated only on failure) and keep the OpenCL status as their source.
pub(crate) trait ClResultExt<T> {
    /// [`cl_error`].
    fn or_cl<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T>;
    /// [`alloc_error`].
    fn or_alloc<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Into<ocl::Error>> ClResultExt<T> for std::result::Result<T, E> {
    fn or_cl<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| cl_error(what(), e))
    }

    fn or_alloc<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| alloc_error(what(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_kept_as_the_source() {
        let oom = ClError {
            status: Some(Status::CL_MEM_OBJECT_ALLOCATION_FAILURE as i32),
            message: "CL_MEM_OBJECT_ALLOCATION_FAILURE".into(),
        };
        let e = alloc_error_of("uploading x", oom);
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
        let source = std::error::Error::source(&e).expect("source");
        let cl = source.downcast_ref::<ClError>().expect("a ClError");
        assert_eq!(cl.status, Some(-4));
        assert_eq!(cl.to_string(), "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
        let e = alloc_error("x", ocl::core::Error::from("plain message"));
        assert!(matches!(e, Error::Backend { .. }));
        let source = std::error::Error::source(&e).expect("source").to_string();
        assert!(source.contains("plain message"), "{source}");
    }
}

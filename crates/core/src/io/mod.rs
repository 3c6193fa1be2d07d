//! Readers and writers: Matrix Market, edge lists (SNAP / ABC), NumPy `.npy`.
//!
//! Every reader returns [`crate::Result`] and never panics, whatever the input bytes: a
//! malformed file gives [`Error::Parse`] with the file name, the 1-based line where one
//! applies, and a [`ParseErrorKind`]; a file that cannot be opened gives [`Error::Io`].
//! Each `read_*` function has a `parse_*` twin that works on bytes in memory and takes the
//! name to use in errors.
//!
//! | module | formats |
//! |---|---|
//! | [`mtx`] | Matrix Market `coordinate` (real, integer, pattern; general, symmetric, skew-symmetric) and `array` |
//! | [`edgelist`] | whitespace-separated edge lists: SNAP, mcl ABC (`label label weight`), `u v [w]` |
//! | [`npy`] | NumPy `.npy` 1.0 / 2.0 / 3.0, little-endian `<f4` / `<f8`, 1-D or 2-D, C or Fortran order |
//!
//! [`read_graph_auto`] picks the graph reader from the file extension.

use std::path::Path;

use crate::error::{Error, ParseError, ParseErrorKind, Result};
use crate::graph::Graph;

pub mod edgelist;
pub mod mtx;
pub mod npy;

mod text;

pub use edgelist::{
    parse_edge_list, parse_edges, read_edges, read_graph, EdgeList, EdgeListOptions, IdMode,
};
pub use mtx::{
    parse_matrix_market, read_coo, read_dense, read_matrix_market, write_coo, write_dense,
    MatrixMarket,
};
pub use npy::{parse_npy, read_npy, write_npy};

/// Reads a graph, choosing the reader by extension.
///
/// * `.mtx` (any case): Matrix Market. The matrix must be square; node `i` is row/column `i`
///   (0-based, so the file's `i + 1`), and every node of the declared size exists. `pattern`
///   files give an unweighted graph, `real` / `integer` files a weighted one whose weights
///   are the values (a symmetric file's stored triangle is mirrored; duplicate and reversed
///   entries are merged keeping the largest value). Diagonal entries are self-loops: each
///   stored diagonal entry is counted in [`Graph::self_loops_dropped`].
/// * anything else: an edge list read with [`EdgeListOptions::default`] (see
///   [`edgelist`] for the node-numbering rule).
pub fn read_graph_auto(path: impl AsRef<Path>) -> Result<Graph> {
    let path = path.as_ref();
    let is_mtx = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("mtx"));
    if is_mtx {
        let bytes = read_file(path)?;
        mtx::parse_graph(&bytes, &path.display().to_string())
    } else {
        read_graph(path, &EdgeListOptions::default())
    }
}

/// Reads a whole file, mapping failures to [`Error::Io`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Builds an [`Error::Parse`].
pub(crate) fn perr(
    name: &str,
    line: Option<usize>,
    kind: ParseErrorKind,
    message: impl Into<String>,
) -> Error {
    Error::Parse(ParseError::new(name, line, kind, message))
}

/// Wraps a writer failure as [`Error::Io`].
pub(crate) fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

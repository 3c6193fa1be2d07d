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
//! | [`metis`] | METIS graph files (MLR-MCL's input), told from edge lists by content ([`metis::is_metis`]) |
//! | [`npy`] | NumPy `.npy` 1.0 / 2.0 / 3.0, little-endian `<f4` / `<f8`, 1-D or 2-D, C or Fortran order |
//!
//! [`read_graph_auto`] picks the graph reader from the content ([`detect`]); every reader
//! reads its input once through [`Input`] (`-` is standard input, gzip is decompressed).

use std::path::Path;

use crate::dense::Dense;
use crate::error::{Error, ParseError, ParseErrorKind, Result};
use crate::graph::Graph;
use crate::scalar::Scalar;

pub mod edgelist;
pub mod metis;
pub mod mtx;
pub mod npy;

mod input;
mod npy_header;
mod output;
mod text;

pub(crate) use input::check_range_lines;
pub use input::{
    detect, detect_format, is_input_limit, strip_bom, Detected, Input, ReadOptions, MAX_LINE_BYTES,
    STDIN_NAME,
};
pub use output::{check_output, check_outputs, commit_all, write_file, OutputFile};

pub use edgelist::{
    parse_edge_list, parse_edges, read_edges, read_graph, EdgeList, EdgeListOptions, IdMode,
};
pub use metis::{is_metis, parse_metis};
pub use mtx::{
    parse_matrix_market, read_coo, read_dense, read_matrix_market, write_coo, write_dense,
    MatrixMarket,
};
pub use npy::{parse_npy, parse_npy_2d, read_npy, write_npy};

/// Reads a graph, choosing the reader from the content (not the file name).
///
/// `path` may be `-` (standard input), a pipe or a FIFO: the input is read exactly once.
/// Gzip-compressed input is decompressed whatever its name.
///
/// * A file whose first line starts with `%%`: Matrix Market (a misspelt banner is an
///   error naming line 1, never an edge list). The matrix must be square; node `i` is
///   row/column `i + 1` of the file and is labelled `i + 1` ([`Graph::label`]), so that
///   commands print the file's ids; every node of the declared size exists. `pattern` files give an unweighted graph, `real` / `integer`
///   files a weighted one whose weights are the values (a symmetric file's stored triangle
///   is mirrored; duplicate and reversed entries are merged keeping the largest value).
///   Diagonal entries are self-loops: each stored diagonal entry is counted in
///   [`Graph::self_loops_dropped`].
/// * Text that is a METIS file by [`is_metis`] (a `n m [fmt [ncon]]` header, exactly `n`
///   vertex lines, `2m` neighbour entries): read by [`metis`]; vertex `i` is node `i - 1`,
///   labelled `i`, every vertex kept.
/// * Other text: an edge list read with [`EdgeListOptions::default`] (see [`edgelist`] for
///   the node-numbering rule).
/// * Anything else (a `.npy` array, a zstd or zip file, binary data) is refused with an
///   error that says what the file is.
pub fn read_graph_auto(path: impl AsRef<Path>) -> Result<Graph> {
    read_graph_with(path, &EdgeListOptions::default())
}

/// [`read_graph_auto`] with the edge-list options `opts` (e.g.
/// [`EdgeListOptions::loop_only_nodes`], so that a node whose only line is a self-loop is
/// kept as an isolated node; Matrix Market files keep every declared node anyway).
pub fn read_graph_with(path: impl AsRef<Path>, opts: &EdgeListOptions) -> Result<Graph> {
    read_graph_limited(path, opts, &ReadOptions::default())
}

/// [`read_graph_with`] with the input limits of `read`.
pub fn read_graph_limited(
    path: impl AsRef<Path>,
    opts: &EdgeListOptions,
    read: &ReadOptions,
) -> Result<Graph> {
    let path = path.as_ref();
    // A plain integer-id edge list is parsed as it is read; anything else is read whole.
    if let Some(g) = edgelist::read_graph_streamed(path, opts, read)? {
        return Ok(g);
    }
    graph_from_input_with(&Input::read_limited(path, read)?, opts)
}

/// Reads a dense matrix, choosing the reader from the content ([`detect_format`]), never
/// from the file name: a NumPy `.npy` array (exactly 2-D, finite values) or a Matrix Market
/// file (`array`, or `coordinate` densified). An edge list, an empty file or binary data is
/// an error naming the file and what it is.
pub fn read_dense_auto<T: Scalar>(path: impl AsRef<Path>) -> Result<Dense<T>> {
    read_dense_limited(path, &ReadOptions::default())
}

/// [`read_dense_auto`] with the input limits of `read`.
pub fn read_dense_limited<T: Scalar>(
    path: impl AsRef<Path>,
    read: &ReadOptions,
) -> Result<Dense<T>> {
    let input = Input::read_limited(path.as_ref(), read)?;
    let name = &input.name;
    match input.format()? {
        Detected::Npy => npy::parse_npy_2d(&input.bytes, name),
        Detected::MatrixMarket => match parse_matrix_market::<T>(&input.bytes, name)? {
            MatrixMarket::Dense(d) => Ok(d),
            MatrixMarket::Sparse(c) => mtx::coo_to_dense(&c, name),
        },
        other => Err(refuse(
            name,
            other,
            "a matrix (NumPy .npy or Matrix Market)",
        )),
    }
}

/// Reads a whole text file (`-` is standard input; gzip is decompressed) with the readers'
/// limits: binary data (NUL bytes, compressed or NumPy data) is refused after its first
/// bytes, a line longer than [`MAX_LINE_BYTES`] is refused as soon as it is seen, and
/// invalid UTF-8 is an error naming the line. For the small text inputs of commands
/// (complexes, cluster lists) that are not a graph or a matrix. An empty file gives `""`.
pub fn read_text(path: impl AsRef<Path>) -> Result<String> {
    read_text_limited(path, &ReadOptions::default())
}

/// [`read_text`] with the input limits of `read`.
pub fn read_text_limited(path: impl AsRef<Path>, read: &ReadOptions) -> Result<String> {
    let input = Input::read_limited(path.as_ref(), read)?;
    match input.detect() {
        Detected::Text | Detected::Empty => {}
        other => return Err(refuse(&input.name, other, "a text file")),
    }
    let name = input.name;
    String::from_utf8(input.bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = memchr::memchr_iter(b'\n', &e.as_bytes()[..at]).count() + 1;
        perr(
            &name,
            Some(line),
            ParseErrorKind::BadValue,
            "not valid UTF-8 text",
        )
    })
}

/// The graph in an [`Input`], as [`read_graph_auto`] reads it.
pub fn graph_from_input(input: &Input) -> Result<Graph> {
    graph_from_input_with(input, &EdgeListOptions::default())
}

/// The graph in an [`Input`], as [`read_graph_with`] reads it.
pub fn graph_from_input_with(input: &Input, opts: &EdgeListOptions) -> Result<Graph> {
    let name = &input.name;
    match input.detect() {
        Detected::MatrixMarket => mtx::parse_graph(&input.bytes, name),
        Detected::Text if metis::is_metis(&input.bytes) => metis::parse_metis(&input.bytes, name),
        Detected::Text => parse_edge_list(&input.bytes, name, opts),
        other => Err(refuse(
            name,
            other,
            "a graph (Matrix Market, METIS or edge list)",
        )),
    }
}

/// The error for input of the wrong kind: says what the file is and what was expected.
pub(crate) fn refuse(name: &str, what: Detected, wanted: &str) -> Error {
    if what == Detected::Empty {
        return perr(name, None, ParseErrorKind::Empty, "empty file");
    }
    perr(
        name,
        None,
        ParseErrorKind::Unsupported,
        format!("this is {}, not {wanted}", what.describe()),
    )
}

/// Reads a whole input once ([`Input::read`]: `-` is stdin, gzip is decompressed).
pub(crate) fn read_file(path: &Path) -> Result<Input> {
    Input::read(path)
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

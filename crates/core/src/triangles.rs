//! Triangle counting of undirected graphs: the [`TriangleCount`] trait and its options.

use crate::backend::Backend;
use crate::error::Result;
use crate::graph::Graph;

/// Options for [`TriangleCount`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriangleOptions {
    /// Also return the number of triangles through each node (default false).
    pub per_node: bool,
}

/// Triangle counts of an undirected graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriangleCounts {
    /// Number of triangles.
    pub total: u64,
    /// Triangles through each node, if requested.
    pub per_node: Option<Vec<u64>>,
}

/// Triangle counting by sorted-list intersection.
pub trait TriangleCount: Backend {
    /// Counts the triangles of `g`.
    fn count_triangles(&self, g: &Graph, opts: &TriangleOptions) -> Result<TriangleCounts>;
}

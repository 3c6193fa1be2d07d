//! Undirected simple graphs stored as symmetric CSR adjacency.

mod build;
pub(crate) mod bytes;
mod ids;

pub(crate) use ids::{id_label, DenseIds};

use std::sync::OnceLock;

use crate::coo::Coo;
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::{Index, Scalar};

/// What the parse of one part of the edges (its slots hold no self-loops, and every id is
/// at most the largest it saw) counted on the way, so that the CSR build needs no counting
/// pass of its own: the edge ends (two per edge) whose input id `i` has `i / 64 = w`, for
/// each `w`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartCounts {
    pub ends: Vec<u32>,
}

/// An undirected graph without self-loops or parallel edges.
///
/// Stored as a symmetric CSR adjacency structure: both `(u, v)` and `(v, u)` are present,
/// each row's neighbours are sorted and distinct, no row contains its own node. Optional
/// per-edge weights (the same on both directions) and node labels (e.g. protein names).
#[derive(Debug, Clone)]
pub struct Graph {
    indptr: Vec<usize>,
    adj: Vec<u32>,
    weights: Option<Vec<f64>>,
    labels: Labels,
    self_loops_dropped: usize,
    stats: BuildStats,
    notes: Vec<String>,
}

/// What building a graph kept, merged and dropped ([`Graph::build_stats`]), so that a
/// command can say so ([`BuildStats::notes`] are in [`Graph::notes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BuildStats {
    /// Edge entries given (edge-list lines, Matrix Market entries after a symmetric file's
    /// mirroring), self-loops included.
    pub entries: usize,
    /// Self-loop entries dropped.
    pub self_loops: usize,
    /// Entries that repeated an edge already given (in either direction) and were merged
    /// into it: `entries - self_loops - edges`.
    pub duplicates: usize,
    /// Undirected edges kept.
    pub edges: usize,
    /// Nodes without any edge (a Matrix Market file's unused rows, say).
    pub isolated_nodes: usize,
    /// Integer ids of a renumbered edge list that lie between its smallest and largest id
    /// but are in no edge (other than a self-loop), so are not nodes.
    pub absent_ids: u64,
}

impl BuildStats {
    /// Remarks for the user, one per thing merged or dropped; none for a clean input. An
    /// input that lists every edge exactly twice (once in each direction, as symmetric
    /// SNAP files and mirrored Matrix Market files do) is not remarked on.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let kept = self.entries.saturating_sub(self.self_loops);
        if self.duplicates > 0 && kept != 2 * self.edges {
            out.push(format!(
                "merged {} repeated edge entries: {kept} entries (self-loops aside) give {} \
                 distinct undirected edges",
                self.duplicates, self.edges
            ));
        }
        if self.self_loops > 0 {
            out.push(format!(
                "dropped {} self-loop entries (a graph here has no self-loops)",
                self.self_loops
            ));
        }
        if self.isolated_nodes > 0 {
            out.push(format!(
                "{} nodes have no edges (isolated)",
                self.isolated_nodes
            ));
        }
        out
    }
}

impl Graph {
    /// Builds from unweighted edges on nodes `0..n`, in any order and direction. Self-loops are
    /// dropped (and counted), duplicates and reversed duplicates merged.
    pub fn from_edges(n: usize, edges: impl IntoIterator<Item = (usize, usize)>) -> Result<Self> {
        Self::build(n, edges.into_iter().map(|(u, v)| (u, v, 1.0)), false)
    }

    /// As [`Graph::from_edges`] with weights; a merged duplicate keeps the largest weight.
    pub fn from_weighted_edges(
        n: usize,
        edges: impl IntoIterator<Item = (usize, usize, f64)>,
    ) -> Result<Self> {
        Self::build(n, edges, true)
    }

    /// The graph of a square matrix's pattern (values become weights when `weighted`).
    pub fn from_coo<T: Scalar>(coo: &Coo<T>, weighted: bool) -> Result<Self> {
        if coo.rows() != coo.cols() {
            return Err(Error::shape(format!(
                "a graph needs a square matrix, got {} x {}",
                coo.rows(),
                coo.cols()
            )));
        }
        Self::build(
            coo.rows(),
            coo.iter().map(|(r, c, v)| (r, c, v.to_f64())),
            weighted,
        )
    }

    fn build(
        n: usize,
        edges: impl IntoIterator<Item = (usize, usize, f64)>,
        weighted: bool,
    ) -> Result<Self> {
        u32::try_from_usize(n)?;
        let edges = edges.into_iter();
        let (lo, _) = edges.size_hint();
        let mut src: Vec<u32> = Vec::with_capacity(lo);
        let mut dst: Vec<u32> = Vec::with_capacity(lo);
        let mut wts: Vec<f64> = Vec::with_capacity(if weighted { lo } else { 0 });
        let mut self_loops = 0usize;
        for (u, v, w) in edges {
            if u >= n || v >= n {
                return Err(Error::invalid(
                    "graph",
                    format!("edge ({u}, {v}) names a node outside 0..{n}"),
                ));
            }
            if u == v {
                self_loops += 1;
                continue;
            }
            src.push(u as u32);
            dst.push(v as u32);
            if weighted {
                wts.push(w);
            }
        }
        Self::from_arrays(n, &src, &dst, weighted.then_some(&wts[..]), self_loops)
    }

    /// Builds from parallel edge arrays on nodes `0..n` (the fast path of the readers).
    ///
    /// Self-loops are dropped and counted on top of `self_loops`; duplicates and reversed
    /// duplicates are merged keeping the largest weight.
    ///
    /// Linear time, parallel (rayon) and cache-friendly, without a second copy of the
    /// adjacency: see [`build`] for the passes.
    pub(crate) fn from_arrays(
        n: usize,
        src: &[u32],
        dst: &[u32],
        weights: Option<&[f64]>,
        self_loops: usize,
    ) -> Result<Self> {
        Self::from_parts(
            n,
            src,
            dst,
            weights,
            &[(0, src.len())],
            None,
            self_loops,
            None,
        )
    }

    /// As [`Graph::from_arrays`] for the edges in the ranges `parts` of the arrays (a
    /// parallel parse's pieces, with unused slots between them), their ids renumbered by
    /// `map` when given (then `n` is the number of ids it keeps), with the parse's counts of
    /// every part when it made them ([`PartCounts`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        n: usize,
        src: &[u32],
        dst: &[u32],
        weights: Option<&[f64]>,
        parts: &[(usize, usize)],
        map: Option<&DenseIds>,
        self_loops: usize,
        counts: Option<&[PartCounts]>,
    ) -> Result<Self> {
        u32::try_from_usize(n)?;
        let b = build::build(n, src, dst, weights, parts, map, self_loops, counts)?;
        // Slots hold the entries the parse kept plus any self-loops the build found.
        let slots: usize = parts.iter().map(|&(a, e)| e - a).sum();
        let non_loop = slots.saturating_sub(b.self_loops.saturating_sub(self_loops));
        let edges = b.adj.len() / 2;
        let isolated_nodes = {
            use rayon::prelude::*;
            b.indptr.par_windows(2).filter(|w| w[0] == w[1]).count()
        };
        let stats = BuildStats {
            entries: non_loop + b.self_loops,
            self_loops: b.self_loops,
            duplicates: non_loop.saturating_sub(edges),
            edges,
            isolated_nodes,
            absent_ids: 0,
        };
        Ok(Self {
            indptr: b.indptr,
            adj: b.adj,
            weights: b.weights,
            labels: Labels::None,
            self_loops_dropped: b.self_loops,
            notes: stats.notes(),
            stats,
        })
    }

    /// Attaches node labels (one per node).
    pub fn with_labels(mut self, labels: Vec<String>) -> Result<Self> {
        if labels.len() != self.num_nodes() {
            return Err(Error::shape(format!(
                "{} labels for {} nodes",
                labels.len(),
                self.num_nodes()
            )));
        }
        self.labels = Labels::Names(labels);
        Ok(self)
    }

    /// Labels nodes by the original integer ids of a renumbered file (node `k` is the `k`-th
    /// kept id), formatted only when [`Graph::labels`] asks for them all.
    pub(crate) fn with_id_labels(mut self, ids: DenseIds) -> Result<Self> {
        if ids.len() != self.num_nodes() {
            return Err(Error::shape(format!(
                "{} labels for {} nodes",
                ids.len(),
                self.num_nodes()
            )));
        }
        if !ids.is_empty() {
            let (lo, hi) = (ids.id_of(0), ids.id_of(ids.len() - 1));
            let absent = (hi - lo + 1) - ids.len() as u64;
            self.stats.absent_ids = absent;
            if absent > 0 {
                self.notes.push(format!(
                    "node ids run from {lo} to {hi}, but {absent} ids in that range are in no \
                     edge (other than a self-loop) and are not nodes; the {} nodes are \
                     renumbered and keep the file's ids as labels",
                    ids.len()
                ));
            }
        }
        self.labels = Labels::Ids {
            ids,
            names: OnceLock::new(),
        };
        Ok(self)
    }

    /// Labels node `u` by the id `u + 1`: the graph of a file that numbers its nodes from 1
    /// (Matrix Market), so that every command prints the file's ids. Formatted only when
    /// [`Graph::labels`] asks for them all.
    pub fn with_one_based_labels(mut self) -> Self {
        self.labels = Labels::OneBased {
            n: self.num_nodes(),
            names: OnceLock::new(),
        };
        self
    }

    /// Adds remarks about how the graph was read (see [`Graph::notes`]).
    pub fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes.extend(notes);
        self
    }

    /// Remarks for the user about how the input was read, e.g. a skipped header line
    /// (`file:1: skipped the header line "source target"`). Commands print them on stderr.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.indptr.len() - 1
    }
    /// The row pointers, neighbours and weights, borrowed ([`Adjacency`]).
    pub fn as_adjacency(&self) -> Adjacency<'_> {
        Adjacency {
            indptr: &self.indptr,
            adj: &self.adj,
            weights: self.weights.as_deref(),
        }
    }
    /// Number of undirected edges.
    pub fn num_edges(&self) -> usize {
        self.adj.len() / 2
    }
    /// Self-loops that were in the input and were dropped.
    pub fn self_loops_dropped(&self) -> usize {
        self.self_loops_dropped
    }
    /// What the build kept, merged and dropped (its remarks are in [`Graph::notes`]).
    pub fn build_stats(&self) -> BuildStats {
        self.stats
    }
    /// Sorted neighbours of `u`.
    pub fn neighbors(&self, u: usize) -> &[u32] {
        &self.adj[self.indptr[u]..self.indptr[u + 1]]
    }
    /// Weights of `u`'s edges, aligned with [`Graph::neighbors`].
    pub fn neighbor_weights(&self, u: usize) -> Option<&[f64]> {
        self.weights
            .as_ref()
            .map(|w| &w[self.indptr[u]..self.indptr[u + 1]])
    }
    /// Degree of `u`.
    pub fn degree(&self, u: usize) -> usize {
        self.indptr[u + 1] - self.indptr[u]
    }
    /// Row pointers of the symmetric adjacency.
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }
    /// Concatenated sorted neighbour lists.
    pub fn adjacency(&self) -> &[u32] {
        &self.adj
    }
    /// Edge weights, if the graph is weighted.
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }
    /// Node labels, if any.
    pub fn labels(&self) -> Option<&[String]> {
        self.labels.names()
    }
    /// The label of node `u`, or its number.
    pub fn label(&self, u: usize) -> String {
        match &self.labels {
            Labels::None => u.to_string(),
            Labels::Names(l) => l[u].clone(),
            Labels::Ids { ids, .. } => id_label(ids.id_of(u)),
            Labels::OneBased { .. } => id_label(u as u64 + 1),
        }
    }
    /// The adjacency matrix as CSR (weights, or ones when unweighted).
    ///
    /// Fails when a weight is not finite in `T` (e.g. `1e39` in `f32`): a weight that would
    /// silently become infinite is an error, never a wrong answer.
    pub fn to_csr<T: Scalar>(&self) -> Result<Csr<T, u32>> {
        let n = self.num_nodes();
        let values = match &self.weights {
            Some(w) => {
                let v: Vec<T> = w.iter().map(|&x| T::from_f64(x)).collect();
                if let Some(k) = v.iter().position(|x| !x.is_finite()) {
                    let u = self.indptr.partition_point(|&p| p <= k) - 1;
                    return Err(Error::invalid(
                        "graph",
                        format!(
                            "the weight {} of edge ({}, {}) is not a finite {}",
                            w[k],
                            self.label(u),
                            self.label(self.adj[k] as usize),
                            T::NAME
                        ),
                    ));
                }
                v
            }
            None => vec![T::one(); self.adj.len()],
        };
        Ok(Csr::from_parts_unchecked(
            n,
            n,
            self.indptr.clone(),
            self.adj.clone(),
            values,
        ))
    }
}

/// A graph's node labels: none, names, or the original integer ids of a renumbered file.
/// Ids are formatted as strings only when all labels are asked for (a file of millions of
/// ids would otherwise spend a twentieth of its read making strings that are seldom used).
#[derive(Debug, Clone)]
enum Labels {
    None,
    Names(Vec<String>),
    Ids {
        ids: DenseIds,
        names: OnceLock<Vec<String>>,
    },
    /// Node `u` is the file's id `u + 1` (Matrix Market).
    OneBased {
        n: usize,
        names: OnceLock<Vec<String>>,
    },
}

impl Labels {
    fn names(&self) -> Option<&[String]> {
        match self {
            Labels::None => None,
            Labels::Names(l) => Some(l),
            Labels::Ids { ids, names } => Some(names.get_or_init(|| ids.map_ids(id_label))),
            Labels::OneBased { n, names } => Some(names.get_or_init(|| {
                use rayon::prelude::*;
                (1..=*n)
                    .into_par_iter()
                    .map(|u| id_label(u as u64))
                    .collect()
            })),
        }
    }
}

/// Two graphs are equal when they hold the same graph: nodes, edges, weights, labels and the
/// self-loops dropped. How it was read ([`Graph::build_stats`], [`Graph::notes`]) is not
/// compared: the same graph reached through the streamed parse or through an `EdgeList`
/// is the same graph.
impl PartialEq for Graph {
    fn eq(&self, other: &Self) -> bool {
        self.indptr == other.indptr
            && self.adj == other.adj
            && self.weights == other.weights
            && self.labels == other.labels
            && self.self_loops_dropped == other.self_loops_dropped
    }
}

impl PartialEq for Labels {
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names()
    }
}

/// A graph's adjacency, borrowed: all that R-MCL's `M_G` is built from
/// ([`crate::mcl::Transition::new_part_of`]), taken from a [`Graph`] ([`Graph::as_adjacency`]) or
/// read in place from the bytes a host's first rank shared with the host's other ranks
/// (`dist::graph::share_on_host_or_part`), without copying the graph.
#[derive(Debug, Clone, Copy)]
pub struct Adjacency<'a> {
    /// Row pointers: `n + 1`, from 0 to `adj.len()`, non-decreasing.
    pub indptr: &'a [usize],
    /// Every node's neighbours (below `n`), sorted, each undirected edge in both rows.
    pub adj: &'a [u32],
    /// The edges' weights in `adj`'s order, if weighted.
    pub weights: Option<&'a [f64]>,
}

impl Adjacency<'_> {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Neighbours of `u` ([`Graph::neighbors`]).
    pub fn neighbors(&self, u: usize) -> &[u32] {
        &self.adj[self.indptr[u]..self.indptr[u + 1]]
    }
    /// Weights of `u`'s edges ([`Graph::neighbor_weights`]).
    pub fn neighbor_weights(&self, u: usize) -> Option<&[f64]> {
        self.weights.map(|w| &w[self.indptr[u]..self.indptr[u + 1]])
    }
}

//! Undirected simple graphs stored as symmetric CSR adjacency.

use crate::coo::Coo;
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::{Index, Scalar};

/// An undirected graph without self-loops or parallel edges.
///
/// Stored as a symmetric CSR adjacency structure: both `(u, v)` and `(v, u)` are present,
/// each row's neighbours are sorted and distinct, no row contains its own node. Optional
/// per-edge weights (the same on both directions) and node labels (e.g. protein names).
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    indptr: Vec<usize>,
    adj: Vec<u32>,
    weights: Option<Vec<f64>>,
    labels: Option<Vec<String>>,
    self_loops_dropped: usize,
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
        let mut list: Vec<(u32, u32, f64)> = Vec::new();
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
            let (a, b) = if u < v { (u, v) } else { (v, u) };
            list.push((a as u32, b as u32, w));
        }
        list.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
        // Merge duplicates keeping the largest weight.
        let mut m = 0usize;
        for k in 0..list.len() {
            if m > 0 && list[m - 1].0 == list[k].0 && list[m - 1].1 == list[k].1 {
                if list[k].2 > list[m - 1].2 {
                    list[m - 1].2 = list[k].2;
                }
            } else {
                list[m] = list[k];
                m += 1;
            }
        }
        list.truncate(m);

        let mut indptr = vec![0usize; n + 1];
        for &(a, b, _) in &list {
            indptr[a as usize + 1] += 1;
            indptr[b as usize + 1] += 1;
        }
        for i in 0..n {
            indptr[i + 1] += indptr[i];
        }
        let mut next = indptr.clone();
        let mut adj = vec![0u32; 2 * list.len()];
        let mut wts = if weighted {
            vec![0f64; 2 * list.len()]
        } else {
            Vec::new()
        };
        // Sorted by (a, b) with a < b: filling lower neighbours (a into row b) happens in
        // increasing a, and upper neighbours (b into row a) in increasing b. Fill the lower
        // part first so each row ends up sorted.
        for &(a, b, w) in &list {
            let p = next[b as usize];
            adj[p] = a;
            if weighted {
                wts[p] = w;
            }
            next[b as usize] += 1;
        }
        for &(a, b, w) in &list {
            let p = next[a as usize];
            adj[p] = b;
            if weighted {
                wts[p] = w;
            }
            next[a as usize] += 1;
        }
        Ok(Self {
            indptr,
            adj,
            weights: weighted.then_some(wts),
            labels: None,
            self_loops_dropped: self_loops,
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
        self.labels = Some(labels);
        Ok(self)
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Number of undirected edges.
    pub fn num_edges(&self) -> usize {
        self.adj.len() / 2
    }
    /// Self-loops that were in the input and were dropped.
    pub fn self_loops_dropped(&self) -> usize {
        self.self_loops_dropped
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
        self.labels.as_deref()
    }
    /// The label of node `u`, or its number.
    pub fn label(&self, u: usize) -> String {
        match &self.labels {
            Some(l) => l[u].clone(),
            None => u.to_string(),
        }
    }
    /// The adjacency matrix as CSR (weights, or ones when unweighted).
    pub fn to_csr<T: Scalar>(&self) -> Csr<T, u32> {
        let n = self.num_nodes();
        let values = match &self.weights {
            Some(w) => w.iter().map(|&x| T::from_f64(x)).collect(),
            None => vec![T::one(); self.adj.len()],
        };
        Csr::from_parts_unchecked(n, n, self.indptr.clone(), self.adj.clone(), values)
    }
}

//! Undirected simple graphs stored as symmetric CSR adjacency.

use crate::alloc;
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
    notes: Vec<String>,
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
    /// Linear time and cache-friendly: both directions of every edge are first partitioned
    /// into buckets of at most 2^16 consecutive rows (few sequential write streams, straight
    /// into the final adjacency array), then each bucket, small enough for the cache, is
    /// counting-sorted by row, and each row sorted, deduplicated and compacted in place.
    pub(crate) fn from_arrays(
        n: usize,
        src: &[u32],
        dst: &[u32],
        weights: Option<&[f64]>,
        self_loops: usize,
    ) -> Result<Self> {
        u32::try_from_usize(n)?;
        if src.len() != dst.len() || weights.is_some_and(|w| w.len() != src.len()) {
            return Err(Error::invalid("graph", "edge arrays differ in length"));
        }
        let weighted = weights.is_some();
        // Rows per bucket: 2^shift (at most 2^16, so that a row within its bucket fits in a
        // u16), aiming at about 2^21 adjacency entries per bucket: few buckets keep the
        // partition pass streaming; the per-bucket work then runs in the last-level cache.
        let per_row = (2 * src.len()).div_ceil(n.max(1)).max(1);
        let target = ((1usize << 21) / per_row).max(1);
        let shift = (usize::BITS - 1 - target.leading_zeros()).clamp(4, 16);
        let mask = (1u32 << shift) - 1;
        let nb = (n >> shift) + 1;

        // Pass 1: range check, self-loops, bucket sizes.
        let mut self_loops = self_loops;
        let mut bstart = vec![0usize; nb + 1];
        for (&u, &v) in src.iter().zip(dst) {
            if u as usize >= n || v as usize >= n {
                return Err(Error::invalid(
                    "graph",
                    format!("edge ({u}, {v}) names a node outside 0..{n}"),
                ));
            }
            if u == v {
                self_loops += 1;
                continue;
            }
            bstart[(u >> shift) as usize + 1] += 1;
            bstart[(v >> shift) as usize + 1] += 1;
        }
        let mut largest = 0;
        for b in 0..nb {
            largest = largest.max(bstart[b + 1]);
            bstart[b + 1] += bstart[b];
        }
        let total = bstart[nb];

        // Pass 2: partition by bucket: the column into `adj`, the row within the bucket
        // into `lrow`, the weight into `wts`.
        let mut adj = alloc::try_vec(total, 0u32, || {
            format!("the adjacency of {total} directed edges")
        })?;
        let mut lrow = alloc::try_vec(total, 0u16, || format!("sorting {total} directed edges"))?;
        let mut wts = if weighted {
            alloc::try_vec(total, 0f64, || {
                format!("the weights of {total} directed edges")
            })?
        } else {
            Vec::new()
        };
        let mut bnext: Vec<usize> = bstart[..nb].to_vec();
        for (k, (&u, &v)) in src.iter().zip(dst).enumerate() {
            if u == v {
                continue;
            }
            let bu = (u >> shift) as usize;
            let pu = bnext[bu];
            adj[pu] = v;
            lrow[pu] = (u & mask) as u16;
            bnext[bu] = pu + 1;
            let bv = (v >> shift) as usize;
            let pv = bnext[bv];
            adj[pv] = u;
            lrow[pv] = (v & mask) as u16;
            bnext[bv] = pv + 1;
            if let Some(w) = weights {
                wts[pu] = w[k];
                wts[pv] = w[k];
            }
        }
        drop(bnext);

        // Pass 3: per bucket, counting sort by row into a scratch buffer, then sort, merge
        // and compact each row back into `adj` (the write position never passes the read
        // position, and the bucket was copied out first).
        let mut indptr = alloc::try_vec(n + 1, 0usize, || {
            format!("the row pointers of a graph of {n} nodes")
        })?;
        let mut cnt: Vec<usize> = Vec::with_capacity((1 << shift) + 1);
        let mut tmp: Vec<u32> =
            alloc::try_vec(largest, 0, || format!("sorting {largest} directed edges"))?;
        let mut tmpw: Vec<f64> = if weighted {
            alloc::try_vec(largest, 0.0, || format!("sorting {largest} weights"))?
        } else {
            Vec::new()
        };
        let mut scratch: Vec<(u32, f64)> = Vec::new();
        let mut out = 0usize;
        for b in 0..nb {
            let r0 = b << shift;
            let r1 = ((b + 1) << shift).min(n);
            if r0 >= r1 {
                break;
            }
            let (s0, s1) = (bstart[b], bstart[b + 1]);
            cnt.clear();
            cnt.resize(r1 - r0 + 1, 0);
            for &r in &lrow[s0..s1] {
                cnt[r as usize + 1] += 1;
            }
            for i in 0..r1 - r0 {
                cnt[i + 1] += cnt[i];
            }
            // cnt[i] is the start of local row i; fill while advancing it.
            for k in s0..s1 {
                let r = lrow[k] as usize;
                let p = cnt[r];
                tmp[p] = adj[k];
                if weighted {
                    tmpw[p] = wts[k];
                }
                cnt[r] = p + 1;
            }
            // cnt[i] is now the end of local row i.
            let mut start = 0usize;
            for i in 0..r1 - r0 {
                let end = cnt[i];
                let row_out = out;
                indptr[r0 + i] = row_out;
                if weighted {
                    scratch.clear();
                    scratch.extend(
                        tmp[start..end]
                            .iter()
                            .copied()
                            .zip(tmpw[start..end].iter().copied()),
                    );
                    scratch.sort_by_key(|e| e.0);
                    for &(c, x) in &scratch {
                        if out > row_out && adj[out - 1] == c {
                            if x > wts[out - 1] {
                                wts[out - 1] = x;
                            }
                        } else {
                            adj[out] = c;
                            wts[out] = x;
                            out += 1;
                        }
                    }
                } else {
                    let row = &mut tmp[start..end];
                    // Rows of (src, dst)-sorted files often come out sorted already.
                    if !row.windows(2).all(|w| w[0] <= w[1]) {
                        row.sort_unstable();
                    }
                    if let Some((&first, rest)) = row.split_first() {
                        // Branch-free merge of equal neighbours.
                        adj[out] = first;
                        out += 1;
                        for &c in rest {
                            adj[out] = c;
                            out += (c != adj[out - 1]) as usize;
                        }
                    }
                }
                start = end;
            }
        }
        drop(lrow);
        drop(tmp);
        drop(tmpw);
        indptr[n] = out;
        adj.truncate(out);
        adj.shrink_to_fit();
        if weighted {
            wts.truncate(out);
            wts.shrink_to_fit();
        }
        Ok(Self {
            indptr,
            adj,
            weights: weighted.then_some(wts),
            labels: None,
            self_loops_dropped: self_loops,
            notes: Vec::new(),
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

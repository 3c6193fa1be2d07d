//! Triangle counting of undirected graphs: the [`TriangleCount`] trait, its options, the
//! degree-ordered orientation every backend counts on ([`OrientedGraph`]), the choice of
//! intersection algorithm ([`TriangleAlgorithm`]) and an independent host reference
//! ([`reference_counts`]).
//!
//! # Input policy
//!
//! A [`Graph`] is already undirected and simple: the readers and [`Graph::from_edges`]
//! symmetrise directed or one-directional input (an edge listed as `u v`, as `v u` or both is
//! one undirected edge), merge duplicates and drop self-loops (counted in
//! [`Graph::self_loops_dropped`]). Weights are ignored. So a triangle is a set of three
//! distinct nodes that are pairwise adjacent, counted once, whatever the file listed.
//!
//! # Orientation
//!
//! Every edge `{u, v}` is directed from the lower-ranked to the higher-ranked end, where the
//! rank orders nodes by degree, ties by id: `(deg u, u) < (deg v, v)`. Each triangle
//! `a < b < c` (in rank) is then found exactly once, at the oriented edge `a → b` as the
//! common out-neighbour `c` of `a` and `b`, and the out-degree of every node is at most
//! `sqrt(2m)`, so the long rows of hubs shrink. Nodes are relabelled by rank, so that rows
//! are sorted by rank and hubs are contiguous (see [`OrientedGraph`]); per-node results are
//! mapped back to the graph's ids.

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;

use crate::alloc;
use crate::backend::Backend;
use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::graph::Graph;

pub mod device;
pub mod plan;

/// How the two sorted out-neighbour lists of an oriented edge are intersected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum TriangleAlgorithm {
    /// Chosen per graph and backend from its [`DegreeStats`] (see [`TriangleAlgorithm::resolve`]).
    #[default]
    Auto,
    /// Linear merge of both lists (the seed's block-per-row merge on GPUs, with the row cached
    /// in shared / local memory). Best when lists are short and of similar length.
    Merge,
    /// Each element of the shorter list searched in the longer one (on GPUs a group of 32
    /// lanes per edge). Best for skewed lists.
    BinarySearch,
    /// The first list put in a set, the second looked up in it: on the CPU a bitmap of all
    /// nodes per thread; on GPUs the rows binned by out-degree ([`plan::RowBins`]), a hash
    /// table in shared / local memory per warp (short rows) or per work-group, and a bitmap
    /// of all nodes in global memory per work-group for the longest rows.
    Hash,
}

impl TriangleAlgorithm {
    /// Every algorithm a user can force, in a fixed order.
    pub const FORCED: [TriangleAlgorithm; 3] = [Self::Merge, Self::BinarySearch, Self::Hash];

    /// Stable lower-case name (`auto`, `merge`, `binary-search`, `hash`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Merge => "merge",
            Self::BinarySearch => "binary-search",
            Self::Hash => "hash",
        }
    }

    /// The concrete algorithm for a graph with these statistics: `self` unless it is `Auto`.
    ///
    /// CPU (`gpu == false`): the bitmap (`Hash`) wherever one bitmap per thread (n bits) is
    /// small (up to 2^27 nodes, 16 MiB), since it costs one bit test per element of the
    /// second list; otherwise `BinarySearch` for skewed rows and `Merge` for flat ones.
    /// GPU: `BinarySearch` (the searches of a chunk of edges flattened over a work-group,
    /// `tc_search_flat`, or the kernel of [`TriangleOptions::search`]:
    /// [`plan::SearchKernel`]), the fastest GPU algorithm on the benchmark's Kronecker graphs
    /// (`benches/results/triangles.md`), except that a graph whose rows are all short and
    /// flat gets `Merge`.
    pub fn resolve(self, stats: &DegreeStats, gpu: bool) -> TriangleAlgorithm {
        if self != Self::Auto {
            return self;
        }
        if gpu {
            if stats.max_out <= 8 {
                Self::Merge
            } else {
                Self::BinarySearch
            }
        } else if stats.nodes <= 1 << 27 {
            Self::Hash
        } else if stats.max_out as f64 > 8.0 * stats.mean_out.max(1.0) {
            Self::BinarySearch
        } else {
            Self::Merge
        }
    }
}

/// Entries of the rows a GPU work-group caches in shared / local memory (`u32`s): the
/// `TC_CACHE` of `kernels/opencl/triangles.cl` (the kernels of both backends).
pub const GPU_ROW_CACHE: usize = 2048;

impl fmt::Display for TriangleAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TriangleAlgorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "merge" => Ok(Self::Merge),
            "binary-search" | "binarysearch" | "search" | "bsearch" => Ok(Self::BinarySearch),
            "hash" | "bitmap" => Ok(Self::Hash),
            _ => Err(Error::invalid(
                "triangle algorithm",
                format!("{s:?} (expected auto, merge, binary-search or hash)"),
            )),
        }
    }
}

/// Options for [`TriangleCount`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriangleOptions {
    /// Also return the number of triangles through each node (default false).
    pub per_node: bool,
    /// The intersection algorithm (default [`TriangleAlgorithm::Auto`]).
    pub algorithm: TriangleAlgorithm,
    /// The GPU kernel of [`TriangleAlgorithm::BinarySearch`] (default
    /// [`plan::DEFAULT_SEARCH`]); the CPU ignores it.
    pub search: plan::SearchKernel,
    /// The limits of the GPU plan: row bins of the hash kernels and work-group caps
    /// (default: what the kernels are tuned for); the CPU ignores them.
    pub limits: plan::PlanLimits,
}

/// Triangle counts of an undirected graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriangleCounts {
    /// Number of triangles.
    pub total: u64,
    /// Triangles through each node, if requested.
    pub per_node: Option<Vec<u64>>,
}

impl TriangleCounts {
    /// Local clustering coefficients (see [`local_clustering`]), if per-node counts are here.
    pub fn clustering(&self, g: &Graph) -> Option<Vec<f64>> {
        self.per_node.as_ref().map(|t| local_clustering(g, t))
    }
}

/// Local clustering coefficient of every node: `2 t(v) / (d(v) (d(v) - 1))`, the fraction of
/// pairs of `v`'s neighbours that are adjacent; 0 for nodes of degree below 2.
pub fn local_clustering(g: &Graph, per_node: &[u64]) -> Vec<f64> {
    per_node
        .iter()
        .enumerate()
        .map(|(v, &t)| clustering_coefficient(t, g.degree(v)))
        .collect()
}

/// The local clustering coefficient of a node of `degree` in `triangles` triangles:
/// `2t / (d (d - 1))`, 0 below degree 2.
pub fn clustering_coefficient(triangles: u64, degree: usize) -> f64 {
    let d = degree as f64;
    if d < 2.0 {
        0.0
    } else {
        2.0 * triangles as f64 / (d * (d - 1.0))
    }
}

/// Triangle counting by sorted-list intersection on the degree-ordered orientation.
///
/// The split into [`TriangleCount::upload_oriented`] and [`TriangleCount::count_oriented`]
/// lets callers time the preprocessing (orientation, transfer) apart from the counting and
/// count one uploaded graph many times.
pub trait TriangleCount: Backend {
    /// An oriented graph in device memory.
    type Oriented: Send;
    /// Moves (CPU) or copies (GPU) an oriented graph to the device. GPU backends refuse a
    /// graph that does not fit with [`Error::OutOfMemory`], saying how much it needs.
    fn upload_oriented(&self, g: OrientedGraph) -> Result<Self::Oriented>;
    /// Counts the triangles of an uploaded graph.
    fn count_oriented(&self, g: &Self::Oriented, opts: &TriangleOptions) -> Result<TriangleCounts>;
    /// The memory an oriented graph may take on this backend's device
    /// ([`OrientedGraph::device_bytes`]), if it has a limit of its own (GPUs: the device
    /// memory); the distributed count replicates a graph only where it fits.
    fn memory_limit(&self) -> Option<u64> {
        None
    }
    /// Uploads the rows that the ranks of `c` assemble (the distributed count's replicated
    /// layout, [`RowExchange`]); every rank calls it together. By default the rows travel
    /// through the host ([`crate::comm::all_to_all`]); a GPU backend with a device engine
    /// for the ranks ([`crate::device::Device::exchange_mem`]: NCCL) moves them device to
    /// device instead.
    /// `true` with the graph when the rows went device to device.
    fn upload_exchanged(&self, c: &dyn Comm, x: RowExchange<'_>) -> Result<(Self::Oriented, bool)> {
        let adj = x.exchange_on_host(c)?;
        let g =
            OrientedGraph::from_sorted_parts(x.indptr, adj, None).with_counted_rows(x.counted)?;
        Ok((self.upload_oriented(g)?, false))
    }
    /// Orients, uploads and counts `g`.
    fn count_triangles(&self, g: &Graph, opts: &TriangleOptions) -> Result<TriangleCounts> {
        let d = self.upload_oriented(OrientedGraph::from_graph(g)?)?;
        self.count_oriented(&d, opts)
    }
}

/// An oriented graph whose rows every rank of a [`Comm`] contributes to
/// ([`TriangleCount::upload_exchanged`]): this rank's rows are `indptr` (from 0, the first
/// `counted` of them counted), and their out-neighbour ids are the concatenation, in rank
/// order, of `recv[r]` ids from each rank `r`, less `shift`. This rank sends
/// `send[parts[r].clone()]` to rank `r`.
#[derive(Debug)]
pub struct RowExchange<'a> {
    /// Row pointers from 0 (`indptr[n]` = the sum of `recv`).
    pub indptr: Vec<u64>,
    /// The rows counted (the first ones).
    pub counted: usize,
    /// This rank's out-neighbour ids, and the range of them each rank receives.
    pub send: &'a [u32],
    /// The range of `send` for each rank.
    pub parts: Vec<std::ops::Range<usize>>,
    /// The ids received from each rank.
    pub recv: Vec<usize>,
    /// Subtracted from every id received.
    pub shift: u32,
}

impl RowExchange<'_> {
    /// The out-neighbour ids exchanged through the host, not shifted.
    pub fn exchange_ids(&self, c: &dyn Comm) -> Result<Vec<u32>> {
        let send: Vec<u32> = self
            .parts
            .iter()
            .flat_map(|p| self.send[p.clone()].iter().copied())
            .collect();
        let counts: Vec<usize> = self.parts.iter().map(|p| p.len()).collect();
        let (adj, got) = crate::comm::all_to_all(c, &send, &counts)?;
        if got != self.recv || adj.len() as u64 != self.indptr[self.indptr.len() - 1] {
            return Err(Error::backend(
                "dist",
                format!(
                    "rank {} expected {:?} ids, received {got:?}",
                    c.rank(),
                    self.recv
                ),
            ));
        }
        Ok(adj)
    }

    /// The out-neighbour ids exchanged through the host and shifted.
    pub fn exchange_on_host(&self, c: &dyn Comm) -> Result<Vec<u32>> {
        let mut adj = self.exchange_ids(c)?;
        let shift = self.shift;
        adj.par_iter_mut().for_each(|u| *u -= shift);
        Ok(adj)
    }
}

/// Degree statistics of an oriented graph, from which [`TriangleAlgorithm::Auto`] chooses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DegreeStats {
    /// Number of nodes.
    pub nodes: usize,
    /// Number of oriented (= undirected) edges.
    pub edges: usize,
    /// Largest out-degree.
    pub max_out: usize,
    /// Mean out-degree over nodes with at least one out-neighbour.
    pub mean_out: f64,
}

impl DegreeStats {
    /// The statistics of the first `counted` rows of row pointers `indptr`.
    pub fn of_rows(indptr: &[u64], counted: usize) -> Self {
        let (max_out, nonzero) = (0..counted)
            .into_par_iter()
            .map(|v| {
                let d = (indptr[v + 1] - indptr[v]) as usize;
                (d, usize::from(d > 0))
            })
            .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1 + b.1));
        let edges = indptr[counted] as usize;
        DegreeStats {
            nodes: indptr.len() - 1,
            edges,
            max_out,
            mean_out: edges as f64 / nonzero.max(1) as f64,
        }
    }
}

/// The degree-ordered orientation of a [`Graph`] as CSR of out-neighbours (see the module
/// documentation), with nodes relabelled by rank: node `r` here is the `r`-th node of the
/// graph in `(degree, id)` order ([`OrientedGraph::original`] maps back), so every edge
/// points from a lower to a higher id, row `r` holds the neighbours of rank above `r`
/// sorted, and the hubs' rows, read most often, sit together at the end (GAP's `tc`
/// relabels the same way). Every undirected edge appears exactly once.
///
/// `indptr` is `u64` (so that GPU backends upload it as is and edge offsets beyond 2^32
/// work), node ids are `u32`, as in [`Graph`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrientedGraph {
    indptr: Vec<u64>,
    adj: Vec<u32>,
    /// `original[r]`: the graph's id of node `r`; `None` for the identity.
    original: Option<Vec<u32>>,
    /// Rows `0..counted` are counted; the rows after them are only read (the rows another
    /// process counts, or that this one's edges need: see [`crate::dist::triangles`]).
    counted: usize,
}

/// Nodes per rayon task when orienting: large enough to amortise scheduling.
const ORIENT_CHUNK: usize = 2048;

impl OrientedGraph {
    /// The degree-ordered orientation of `g`, relabelled by rank, built in parallel (rayon)
    /// straight from `g`'s adjacency: a parallel sort ranks the nodes, one pass over the
    /// adjacency keeps and sorts each row's upper part at the front of its chunk's room in
    /// an array with room for every edge end (untouched room costs no memory), and the
    /// chunks are closed up in place. It holds half of `g`'s adjacency plus two ids per node.
    pub fn from_graph(g: &Graph) -> Result<Self> {
        let n = g.num_nodes();
        let ip = g.indptr();
        let adj = g.adjacency();
        // Rank order: (degree, id), as one u64 key.
        let mut keys: Vec<u64> = (0..n)
            .into_par_iter()
            .map(|v| ((ip[v + 1] - ip[v]) as u64) << 32 | v as u64)
            .collect();
        keys.par_sort_unstable();
        let original: Vec<u32> = keys.par_iter().map(|&k| k as u32).collect();
        drop(keys);
        let mut rank = vec![0u32; n];
        for (r, &v) in original.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        // One array with room for every edge end, cut per chunk of ranks by the chunk's
        // degrees (pages are only touched where written). Each chunk keeps its rows' upper
        // parts (each row sorted) at the front of its room, then the chunks are closed up:
        // one pass of rank lookups over the adjacency instead of a counting pass and a
        // copying pass, and no second copy.
        let nchunks = n.div_ceil(ORIENT_CHUNK);
        let room: Vec<usize> = (0..nchunks)
            .into_par_iter()
            .map(|c| {
                original[c * ORIENT_CHUNK..((c + 1) * ORIENT_CHUNK).min(n)]
                    .iter()
                    .map(|&v| ip[v as usize + 1] - ip[v as usize])
                    .sum()
            })
            .collect();
        let ends = adj.len();
        let mut out = alloc::try_zeroed_vec::<u32>(ends, || format!("orienting {ends} edge ends"))?;
        let mut pieces: Vec<(usize, &mut [u32])> = Vec::with_capacity(nchunks);
        let mut rest: &mut [u32] = &mut out;
        for (c, &len) in room.iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
            pieces.push((c, head));
            rest = tail;
        }
        let lens: Vec<Vec<u64>> = pieces
            .into_par_iter()
            .map(|(c, piece)| {
                let (r0, r1) = (c * ORIENT_CHUNK, ((c + 1) * ORIENT_CHUNK).min(n));
                let mut lens = Vec::with_capacity(r1 - r0);
                let mut k = 0;
                for (r, &v) in original.iter().enumerate().take(r1).skip(r0) {
                    let v = v as usize;
                    let start = k;
                    // Every neighbour's rank written, the ones above r kept: no branch on
                    // the (unpredictable) comparison. The row's writes stay within the
                    // room of the rows so far.
                    for &u in &adj[ip[v]..ip[v + 1]] {
                        let ru = rank[u as usize];
                        piece[k] = ru;
                        k += usize::from(ru as usize > r);
                    }
                    piece[start..k].sort_unstable();
                    lens.push((k - start) as u64);
                }
                lens
            })
            .collect();
        let mut indptr = vec![0u64; n + 1];
        for (r, &len) in lens.iter().flatten().enumerate() {
            indptr[r + 1] = indptr[r] + len;
        }
        // Close up: every chunk's rows moved down to their place. Chunk c's rows go from
        // from[c] to at(c) <= from[c] (its first row pointer). A run of chunks c0..c1 whose
        // places all end before chunk c0's rows begin moves in parallel (the places and the
        // rows are disjoint, and later chunks' rows lie beyond); the runs grow about twofold
        // each (a chunk keeps about half of its room), so there are about log2(chunks).
        let at = |c: usize| indptr[(c * ORIENT_CHUNK).min(n)] as usize;
        let mut from = vec![0usize; nchunks + 1];
        for c in 0..nchunks {
            from[c + 1] = from[c] + room[c];
        }
        let mut c0 = 0;
        while c0 < nchunks {
            let mut c1 = c0;
            while c1 < nchunks && at(c1 + 1) <= from[c0] {
                c1 += 1;
            }
            if c1 == c0 {
                // The chunk's place overlaps its own rows: a memmove.
                out.copy_within(from[c0]..from[c0] + at(c0 + 1) - at(c0), at(c0));
                c0 += 1;
                continue;
            }
            let (places, rows) = out.split_at_mut(from[c0]);
            let mut places = &mut places[at(c0)..at(c1)];
            let mut moves = Vec::with_capacity(c1 - c0);
            for c in c0..c1 {
                let kept = at(c + 1) - at(c);
                let (to, rest) = std::mem::take(&mut places).split_at_mut(kept);
                places = rest;
                let src = from[c] - from[c0];
                moves.push((to, &rows[src..src + kept]));
            }
            moves
                .into_par_iter()
                .for_each(|(to, from)| to.copy_from_slice(from));
            c0 = c1;
        }
        let m = indptr[n] as usize;
        debug_assert_eq!(m, g.num_edges());
        out.truncate(m);
        out.shrink_to_fit();
        Ok(Self {
            indptr,
            adj: out,
            original: Some(original),
            counted: n,
        })
    }

    /// The graph's id of node `r` of this orientation.
    pub fn original(&self, r: usize) -> usize {
        match &self.original {
            Some(o) => o[r] as usize,
            None => r,
        }
    }

    /// The graph's id of every node of this orientation; `None` for the identity.
    pub(crate) fn original_ids(&self) -> Option<&[u32]> {
        self.original.as_deref()
    }

    /// Reorders per-node values of this orientation's nodes into the graph's node order.
    pub fn to_original_order(&self, per_node: Vec<u64>) -> Vec<u64> {
        plan::to_original_order(self.original.as_deref(), per_node)
    }

    /// The row pointers, the rows and the relabelling (`None` for the identity), by value.
    pub(crate) fn into_parts(self) -> (Vec<u64>, Vec<u32>, Option<Vec<u32>>) {
        (self.indptr, self.adj, self.original)
    }

    /// Drops the relabelling, keeping only what a device needs to count; returns it for
    /// [`OrientedGraph::to_original_order`]-style mapping by the caller.
    pub fn take_original(&mut self) -> Option<Vec<u32>> {
        self.original.take()
    }

    /// Builds from raw parts with the identity labelling, checking that rows are sorted,
    /// distinct and in range. (That the orientation is acyclic and holds each undirected edge
    /// once is the caller's promise: then each triangle is counted once.)
    pub fn from_parts(indptr: Vec<u64>, adj: Vec<u32>) -> Result<Self> {
        let bad = |m: String| Err(Error::invalid("oriented graph", m));
        if indptr.is_empty() || indptr[0] != 0 || indptr[indptr.len() - 1] != adj.len() as u64 {
            return bad("indptr must start at 0 and end at the number of edges".into());
        }
        let n = indptr.len() - 1;
        for v in 0..n {
            if indptr[v] > indptr[v + 1] {
                return bad(format!("indptr decreases at row {v}"));
            }
            let row = &adj[indptr[v] as usize..indptr[v + 1] as usize];
            if !row.windows(2).all(|w| w[0] < w[1]) || row.iter().any(|&u| u as usize >= n) {
                return bad(format!("row {v} is not sorted, distinct and in range"));
            }
        }
        Ok(Self {
            counted: n,
            indptr,
            adj,
            original: None,
        })
    }

    /// [`OrientedGraph::from_parts`] without the checks, for parts built sorted, distinct and
    /// in range by construction (the distributed build), with `original` ids if relabelled.
    pub(crate) fn from_sorted_parts(
        indptr: Vec<u64>,
        adj: Vec<u32>,
        original: Option<Vec<u32>>,
    ) -> Self {
        debug_assert!(!indptr.is_empty() && indptr[indptr.len() - 1] == adj.len() as u64);
        Self {
            counted: indptr.len() - 1,
            indptr,
            adj,
            original,
        }
    }

    /// Counts only the triangles found at rows `0..rows` (those whose lowest-ranked node is
    /// below `rows`); the later rows are only read. A process of a distributed count holds
    /// the rows it counts first and the rows they reach after them. Refuses `rows` above
    /// [`OrientedGraph::num_nodes`].
    pub fn with_counted_rows(mut self, rows: usize) -> Result<Self> {
        if rows > self.num_nodes() {
            return Err(Error::invalid(
                "oriented graph",
                format!("{rows} counted rows of {} nodes", self.num_nodes()),
            ));
        }
        self.counted = rows;
        Ok(self)
    }

    /// The rows counted: `0..counted_rows()` (all rows unless
    /// [`OrientedGraph::with_counted_rows`] said otherwise).
    pub fn counted_rows(&self) -> usize {
        self.counted
    }

    /// The edges of the counted rows: `adjacency()[..counted_edges()]`.
    pub fn counted_edges(&self) -> usize {
        self.indptr[self.counted] as usize
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.indptr.len() - 1
    }
    /// Number of oriented edges (the undirected edges of the graph).
    pub fn num_edges(&self) -> usize {
        self.adj.len()
    }
    /// Row pointers (`num_nodes() + 1`).
    pub fn indptr(&self) -> &[u64] {
        &self.indptr
    }
    /// Concatenated out-neighbour lists.
    pub fn adjacency(&self) -> &[u32] {
        &self.adj
    }
    /// Sorted out-neighbours of `v`.
    #[inline]
    pub fn out_neighbors(&self, v: usize) -> &[u32] {
        &self.adj[self.indptr[v] as usize..self.indptr[v + 1] as usize]
    }
    /// Out-degree of `v`.
    pub fn out_degree(&self, v: usize) -> usize {
        (self.indptr[v + 1] - self.indptr[v]) as usize
    }
    /// Degree statistics (for [`TriangleAlgorithm::resolve`]) of the counted rows: `edges`
    /// and the out-degrees are theirs, `nodes` is every node.
    pub fn stats(&self) -> DegreeStats {
        DegreeStats::of_rows(&self.indptr, self.counted)
    }
    /// Bytes a GPU backend needs for this graph: `indptr` (8 bytes per node + 8), `adj`
    /// (4 per edge), the per-node counts when asked (8 per node) and the work-group sums.
    pub fn device_bytes(&self, per_node: bool) -> u64 {
        Self::bytes_on_device(self.num_nodes(), self.num_edges(), per_node)
    }
    /// [`OrientedGraph::device_bytes`] of a graph of `n` nodes and `m` edges.
    pub fn bytes_on_device(n: usize, m: usize, per_node: bool) -> u64 {
        let n = n as u64;
        8 * (n + 1) + 4 * m as u64 + if per_node { 8 * n } else { 8 } + (1 << 20)
    }
}

/// Triangles of `g` by the plain node iterator, independently of the orientation and of any
/// backend: for every `u < v < w` with `v, w` neighbours of `u` and `w` a neighbour of `v`
/// (binary search). `O(sum of squared degrees)`: for tests and small graphs.
pub fn reference_counts(g: &Graph) -> TriangleCounts {
    let n = g.num_nodes();
    let mut per = vec![0u64; n];
    let mut total = 0u64;
    for u in 0..n {
        let nu = g.neighbors(u);
        for (i, &v) in nu.iter().enumerate() {
            if (v as usize) <= u {
                continue;
            }
            let nv = g.neighbors(v as usize);
            for &w in &nu[i + 1..] {
                if nv.binary_search(&w).is_ok() {
                    total += 1;
                    per[u] += 1;
                    per[v as usize] += 1;
                    per[w as usize] += 1;
                }
            }
        }
    }
    TriangleCounts {
        total,
        per_node: Some(per),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clique(k: usize) -> Graph {
        let e = (0..k).flat_map(|i| (i + 1..k).map(move |j| (i, j)));
        Graph::from_edges(k, e).unwrap()
    }

    /// A graph of many chunks of ranks (skewed degrees, so that chunks keep very different
    /// shares of their room and the close-up runs both ways): the orientation holds every
    /// edge once, from the lower to the higher (degree, id), every row sorted.
    #[test]
    fn orientation_of_many_chunks() {
        let n = 9 * ORIENT_CHUNK + 17;
        let mut rng = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move |k: usize| {
            let x = rng();
            (x % k as u64) as usize
        };
        // Random edges, many of them to a few hubs.
        let edges: Vec<(usize, usize)> = (0..12 * n)
            .map(|i| (next(n), if i % 3 == 0 { next(40) } else { next(n) }))
            .collect();
        let g = Graph::from_edges(n, edges).unwrap();
        let o = OrientedGraph::from_graph(&g).unwrap();
        assert_eq!(o.num_edges(), g.num_edges());
        let key = |v: usize| (g.degree(v), v);
        let mut seen = Vec::with_capacity(g.num_edges());
        for r in 0..n {
            let row = o.out_neighbors(r);
            assert!(row.windows(2).all(|w| w[0] < w[1]), "row {r} not sorted");
            for &u in row {
                let (v, u) = (o.original(r), o.original(u as usize));
                assert!(key(u) > key(v));
                seen.push((v.min(u), v.max(u)));
            }
        }
        seen.sort_unstable();
        let mut want: Vec<(usize, usize)> = (0..n)
            .flat_map(|v| g.neighbors(v).iter().map(move |&u| (v, u as usize)))
            .filter(|&(v, u)| v < u)
            .collect();
        want.sort_unstable();
        assert_eq!(seen, want);
    }

    #[test]
    fn orientation_keeps_every_edge_once_and_points_up_in_degree() {
        // A star with a triangle on two leaves: 0 is the hub.
        let g = Graph::from_edges(5, [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (2, 1)]).unwrap();
        let o = OrientedGraph::from_graph(&g).unwrap();
        assert_eq!(o.num_edges(), g.num_edges());
        let mut seen = Vec::new();
        for r in 0..5 {
            let row = o.out_neighbors(r);
            assert!(row.windows(2).all(|w| w[0] < w[1]));
            for &u in row {
                assert!(u as usize > r);
                let (v, u) = (o.original(r), o.original(u as usize));
                let (dv, du) = (g.degree(v), g.degree(u));
                assert!(du > dv || (du == dv && u > v));
                seen.push((v.min(u), v.max(u)));
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2)]);
        // The hub has the highest degree: the last rank, no out-edges.
        assert_eq!(o.original(4), 0);
        assert!(o.out_neighbors(4).is_empty());
        assert_eq!(o.to_original_order(vec![0, 1, 2, 3, 4])[0], 4);
        assert_eq!(reference_counts(&g).total, 1);
    }

    #[test]
    fn reference_counts_cliques() {
        for k in 0..8 {
            let c = reference_counts(&clique(k));
            let t = (k * k.saturating_sub(1) * k.saturating_sub(2) / 6) as u64;
            assert_eq!(c.total, t);
            let per = c.per_node.unwrap();
            assert_eq!(per.iter().sum::<u64>(), 3 * t);
            let cc = local_clustering(&clique(k), &per);
            if k >= 3 {
                assert!(cc.iter().all(|&x| (x - 1.0).abs() < 1e-12));
            }
        }
    }

    #[test]
    fn auto_resolves() {
        let s = DegreeStats {
            nodes: 100,
            edges: 300,
            max_out: 5,
            mean_out: 3.0,
        };
        assert_eq!(
            TriangleAlgorithm::Auto.resolve(&s, false),
            TriangleAlgorithm::Hash
        );
        assert_eq!(
            TriangleAlgorithm::Auto.resolve(&s, true),
            TriangleAlgorithm::Merge
        );
        let skewed = DegreeStats { max_out: 900, ..s };
        assert_eq!(
            TriangleAlgorithm::Auto.resolve(&skewed, true),
            TriangleAlgorithm::BinarySearch
        );
        assert_eq!(
            TriangleAlgorithm::Merge.resolve(&s, false),
            TriangleAlgorithm::Merge
        );
        for a in TriangleAlgorithm::FORCED {
            assert_eq!(a.name().parse::<TriangleAlgorithm>().unwrap(), a);
        }
        assert!("quick".parse::<TriangleAlgorithm>().is_err());
    }

    #[test]
    fn from_parts_checks() {
        assert!(OrientedGraph::from_parts(vec![0, 1], vec![0]).is_ok());
        assert!(OrientedGraph::from_parts(vec![0, 2], vec![0, 0]).is_err());
        assert!(OrientedGraph::from_parts(vec![0, 1], vec![5]).is_err());
        assert!(OrientedGraph::from_parts(vec![], vec![]).is_err());
    }
}

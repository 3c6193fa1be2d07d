//! The host side that the CUDA and OpenCL triangle backends share: which kernels to launch
//! for an algorithm, on how many work-groups, over which rows ([`GpuPlan`]); the rows binned
//! by out-degree for the hash kernels ([`RowBins`]); the device-memory check
//! ([`check_device_memory`]) and the mapping of per-node counts back to the graph's ids
//! ([`to_original_order`]). The backends only allocate, set the (identical) kernel arguments
//! and launch: see `kernels/{cuda,opencl}/triangles.*` for the kernels and their signature.

use crate::error::{Error, Result};
use crate::triangles::{OrientedGraph, TriangleAlgorithm};

/// Work-items per work-group of every triangle kernel (`TC_WG`).
pub const GPU_WG: usize = 256;
/// Lanes per team (a warp) of `tc_search` and `tc_hash_warp` (`TC_LANES`).
pub const GPU_LANES: usize = 32;
/// Longest row (out-degree) that `tc_hash_warp` takes, one warp per row with its hash table
/// in shared / local memory (`TC_WARP_MAX`).
pub const GPU_WARP_MAX: usize = 64;
/// Longest row that `tc_hash_block` takes, one work-group per row with its hash table in
/// shared / local memory (`TC_BLOCK_MAX`); longer rows go to the global-bitmap `tc_hash`.
pub const GPU_BLOCK_MAX: usize = 2048;
/// At most this many work-groups (and global bitmaps) for `tc_hash`.
pub const GPU_BITMAP_GROUPS: usize = 1024;
/// Most work-groups of one launch of the shared-table kernels: they loop over their rows,
/// so a few waves of resident work-groups (an H100 holds about a thousand) amortise each
/// group's table set-up and final sum while leaving enough groups to balance the load.
pub const GPU_ROW_GROUPS: usize = 4096;

/// A triangle kernel of `kernels/{cuda,opencl}/triangles.*`, all with one argument list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriangleKernel {
    /// `tc_merge`: [`GPU_WG`] oriented edges per work-group, one per work-item, merge.
    Merge,
    /// `tc_search`: one warp per oriented edge, binary search.
    Search,
    /// `tc_search_row`: one warp per row of the row list, binary search per out-neighbour
    /// ([`SearchKernel::Row`]).
    SearchRow,
    /// `tc_search_flat`: [`GPU_WG`] oriented edges per work-group, the binary searches of all
    /// of them flattened over its work-items ([`SearchKernel::Flat`]).
    SearchFlat,
    /// `tc_search_flat_global`: `tc_search_flat` without the row cache
    /// ([`SearchKernel::FlatGlobal`]).
    SearchFlatGlobal,
    /// `tc_hash_warp`: one warp per row of the row list, shared hash table.
    HashWarp,
    /// `tc_hash_block`: one work-group per row of the row list, shared hash table.
    HashBlock,
    /// `tc_hash`: one work-group per row of the row list, a bitmap of all nodes in global
    /// memory per work-group ([`GpuPlan::scratch_words`]).
    HashBitmap,
}

impl TriangleKernel {
    /// Every kernel, in a fixed order.
    pub const ALL: [TriangleKernel; 8] = [
        Self::Merge,
        Self::Search,
        Self::SearchRow,
        Self::SearchFlat,
        Self::SearchFlatGlobal,
        Self::HashWarp,
        Self::HashBlock,
        Self::HashBitmap,
    ];

    /// The kernel's function name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Merge => "tc_merge",
            Self::Search => "tc_search",
            Self::SearchRow => "tc_search_row",
            Self::SearchFlat => "tc_search_flat",
            Self::SearchFlatGlobal => "tc_search_flat_global",
            Self::HashWarp => "tc_hash_warp",
            Self::HashBlock => "tc_hash_block",
            Self::HashBitmap => "tc_hash",
        }
    }
}

/// The rows of an oriented graph with at least two out-neighbours (others close no
/// triangle), binned by out-degree for the hash kernels: `rows` holds the rows of out-degree
/// in `2..=GPU_WARP_MAX`, then `(GPU_WARP_MAX, GPU_BLOCK_MAX]`, then the longer ones, each
/// bin in increasing row order; `ends[b]` is where bin `b` ends. Uploaded once with the graph.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowBins {
    /// The binned rows (node ids of the orientation).
    pub rows: Vec<u32>,
    /// End of each bin in `rows`: warp bin `0..ends[0]`, block bin `ends[0]..ends[1]`,
    /// bitmap bin `ends[1]..ends[2]`.
    pub ends: [usize; 3],
}

/// Environment override of the plan's limits: `WARP_MAX,BLOCK_MAX[,GROUPS]` (see
/// [`RowBins::new`] and [`GpuPlan::new`]).
pub const BINS_ENV: &str = "TRIDENT_TC_BINS";

/// The limits `(warp_max, block_max, max_groups)`: [`GPU_WARP_MAX`], [`GPU_BLOCK_MAX`],
/// [`GPU_ROW_GROUPS`], or those of `TRIDENT_TC_BINS=W,B[,G]` ([`BINS_ENV`]; for timing the
/// bins against each other without a rebuild, and for tests: `0,0` sends every row to the
/// global-bitmap `tc_hash`, `G = 1` makes one work-group per kernel loop over all its rows,
/// `tc_search_flat` included, which otherwise takes a work-group per chunk of edges).
pub fn limits() -> (usize, usize, usize) {
    let default = (GPU_WARP_MAX, GPU_BLOCK_MAX, GPU_ROW_GROUPS);
    match bins_env() {
        Some((w, b, g)) => (w, b, g.unwrap_or(default.2)),
        None => default,
    }
}

/// `TRIDENT_TC_BINS=W,B[,G]` parsed (`G` at least 1), if set and well formed.
fn bins_env() -> Option<(usize, usize, Option<usize>)> {
    let v = std::env::var(BINS_ENV).ok()?;
    let f: Vec<Option<usize>> = v.split(',').map(|x| x.trim().parse().ok()).collect();
    match f[..] {
        [Some(w), Some(b)] => Some((w, b, None)),
        [Some(w), Some(b), Some(g)] => Some((w, b, Some(g.max(1)))),
        _ => None,
    }
}

/// The work-group count `G` of `TRIDENT_TC_BINS=W,B,G`, if given: the cap of the kernels
/// that otherwise take one work-group per chunk (`tc_search_flat`).
fn group_limit() -> Option<usize> {
    bins_env().and_then(|(_, _, g)| g)
}

/// The GPU kernel of [`TriangleAlgorithm::BinarySearch`]: all of them count every triangle
/// once by binary search in sorted out-neighbour lists, on different work layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchKernel {
    /// `tc_search`: a warp per oriented edge `v -> u`, its 32 lanes striding over the shorter
    /// of `N+(v)`, `N+(u)` and searching the longer (each edge first finds its row by binary
    /// search in `indptr`). H100, Kronecker scale 22: 171.8 ms.
    Edge,
    /// `tc_search_row`: a warp per row `v` of out-degree >= 2 ([`RowBins`], all bins), the
    /// out-neighbours `u` of `v` one after the other, the lanes striding over one list and
    /// searching the other. H100, Kronecker scale 22: 90.9 ms (CUDA), 90.5 ms (OpenCL).
    Row,
    /// `tc_search_flat`: a work-group per [`GPU_WG`] consecutive oriented edges (split rows,
    /// shared rows, as `tc_merge`; the rows they span cached in local memory when they fit in
    /// [`crate::triangles::GPU_ROW_CACHE`]). Each work-item sets up one edge `v -> u`: only
    /// `w` in `N+(v)` after `u` and in `N+(u)` up to `max N+(v)` can close a triangle, so it
    /// picks the cheaper of "scan `N+(u)` (up to `max N+(v)`), search `N+(v)` after `u`" and
    /// "scan `N+(v)` after `u`, search `N+(u)`"; a prefix sum over the work-group then
    /// flattens the scanned elements ("items") of all its edges, and work-item `l` takes items
    /// `l, l + GPU_WG, ...`, each one binary search. No lane idles on short lists, and no edge
    /// waits for another's round.
    Flat,
    /// `tc_search_flat_global`: [`SearchKernel::Flat`] without the row cache, every list read
    /// from global memory: 10 KiB of shared / local memory per work-group instead of 18, which
    /// leaves the L1 cache (which shares the SM's memory with it) more room for the lists
    /// searched in. Which of the two wins is for the H100 to say.
    FlatGlobal,
}

impl SearchKernel {
    /// Every variant, in a fixed order.
    pub const ALL: [SearchKernel; 4] = [Self::Edge, Self::Row, Self::Flat, Self::FlatGlobal];

    /// The name `TRIDENT_TC_SEARCH` takes ([`SEARCH_ENV`]).
    pub fn name(self) -> &'static str {
        match self {
            Self::Edge => "edge",
            Self::Row => "row",
            Self::Flat => "flat",
            Self::FlatGlobal => "flat-global",
        }
    }

    /// The kernel it launches.
    pub fn kernel(self) -> TriangleKernel {
        match self {
            Self::Edge => TriangleKernel::Search,
            Self::Row => TriangleKernel::SearchRow,
            Self::Flat => TriangleKernel::SearchFlat,
            Self::FlatGlobal => TriangleKernel::SearchFlatGlobal,
        }
    }
}

/// The `BinarySearch` kernel when `TRIDENT_TC_SEARCH` ([`SEARCH_ENV`]) is unset or names
/// none: `tc_search_flat`, the fastest measured on the H100 (`benches/peers/tc_h100.sh`,
/// Kronecker ef16 scale 22, counting medians: flat 63.1 ms CUDA / 64.4 OpenCL, flat-global
/// 65.0 / 64.4, row 91.1 / 90.2, edge 173.2 / 173.5).
pub const DEFAULT_SEARCH: SearchKernel = SearchKernel::Flat;

/// Environment switch of the `BinarySearch` kernel ([`SearchKernel`]): `edge`, `row`, `flat`
/// or `flat-global`; unset or anything else, [`DEFAULT_SEARCH`]. Read when a graph is counted, for
/// comparing the kernels in one run (`benches/peers/tc_h100.sh`) without a rebuild, and for
/// the tests that check each of them (`tests/triangles_plan.rs` of the GPU backends).
pub const SEARCH_ENV: &str = "TRIDENT_TC_SEARCH";

/// The `BinarySearch` kernel that `TRIDENT_TC_SEARCH` ([`SEARCH_ENV`]) selects, else
/// [`DEFAULT_SEARCH`].
pub fn search_kernel() -> SearchKernel {
    SearchKernel::parse(std::env::var(SEARCH_ENV).ok().as_deref())
}

impl SearchKernel {
    /// The kernel a value of `TRIDENT_TC_SEARCH` names (any case, blanks around ignored),
    /// else (`None` too) [`DEFAULT_SEARCH`].
    pub fn parse(value: Option<&str>) -> SearchKernel {
        let v = value.unwrap_or("").trim();
        SearchKernel::ALL
            .into_iter()
            .find(|k| v.eq_ignore_ascii_case(k.name()))
            .unwrap_or(DEFAULT_SEARCH)
    }
}

impl RowBins {
    /// Bins the rows of `g` (one pass over `indptr`) with the limits of [`limits`].
    pub fn new(g: &OrientedGraph) -> Self {
        let (w, b, _) = limits();
        Self::with_limits(g, w, b)
    }

    /// Bins the rows of `g`: out-degree `2..=warp_max` to the warp bin, up to `block_max` to
    /// the block bin, longer to the bitmap bin (limits clamped to [`GPU_WARP_MAX`] and
    /// [`GPU_BLOCK_MAX`], which the kernels' tables are sized for).
    pub fn with_limits(g: &OrientedGraph, warp_max: usize, block_max: usize) -> Self {
        let warp_max = warp_max.min(GPU_WARP_MAX);
        let block_max = block_max.min(GPU_BLOCK_MAX);
        let ip = g.indptr();
        let bin = |v: usize| -> Option<usize> {
            match (ip[v + 1] - ip[v]) as usize {
                0 | 1 => None,
                d if d <= warp_max => Some(0),
                d if d <= block_max => Some(1),
                _ => Some(2),
            }
        };
        let n = g.num_nodes();
        let mut counts = [0usize; 3];
        for v in 0..n {
            if let Some(b) = bin(v) {
                counts[b] += 1;
            }
        }
        let ends = [
            counts[0],
            counts[0] + counts[1],
            counts[0] + counts[1] + counts[2],
        ];
        let mut next = [0, ends[0], ends[1]];
        let mut rows = vec![0u32; ends[2]];
        for v in 0..n {
            if let Some(b) = bin(v) {
                rows[next[b]] = v as u32;
                next[b] += 1;
            }
        }
        Self { rows, ends }
    }

    /// The row range `[begin, end)` of bin `b` (0 warp, 1 block, 2 bitmap) in `rows`.
    pub fn bin(&self, b: usize) -> (usize, usize) {
        (if b == 0 { 0 } else { self.ends[b - 1] }, self.ends[b])
    }
}

/// One kernel launch: `groups` work-groups of [`GPU_WG`]; the row-list kernels take the rows
/// `rows[row_begin..row_end]` of [`RowBins::rows`] (the others ignore them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriangleLaunch {
    /// Which kernel.
    pub kernel: TriangleKernel,
    /// Number of work-groups (fits a CUDA grid: below 2^31).
    pub groups: u32,
    /// First entry of the row list this launch takes.
    pub row_begin: u64,
    /// One past its last entry.
    pub row_end: u64,
}

/// What a GPU backend launches to count the triangles of one uploaded graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuPlan {
    /// The concrete algorithm (never `Auto`).
    pub algorithm: TriangleAlgorithm,
    /// The launches, in order (all add into the same counters).
    pub launches: Vec<TriangleLaunch>,
    /// `u32` words of zeroed scratch for `tc_hash`'s bitmaps (`groups * ceil(n / 32)`); 0 when
    /// no launch needs them (allocate at least one word: the argument is always passed).
    pub scratch_words: usize,
}

impl GpuPlan {
    /// The plan for `algorithm` (resolved from `stats` if `Auto`) on an `n`-node, `m`-edge
    /// orientation binned as `bins`, with at most `scratch_budget` bytes for `tc_hash`'s
    /// bitmaps (at least one bitmap is always planned); the hash kernels get at most
    /// [`GPU_ROW_GROUPS`] work-groups each (or the limit of [`limits`]).
    pub fn new(
        algorithm: TriangleAlgorithm,
        stats: &crate::triangles::DegreeStats,
        bins: &RowBins,
        scratch_budget: usize,
    ) -> Result<Self> {
        Self::with_search(algorithm, search_kernel(), stats, bins, scratch_budget)
    }

    /// [`GpuPlan::new`] with `BinarySearch` on the kernel `search` rather than the one of
    /// [`search_kernel`].
    pub fn with_search(
        algorithm: TriangleAlgorithm,
        search: SearchKernel,
        stats: &crate::triangles::DegreeStats,
        bins: &RowBins,
        scratch_budget: usize,
    ) -> Result<Self> {
        let (n, m) = (stats.nodes, stats.edges);
        let algorithm = algorithm.resolve(stats, true);
        let max_groups = limits().2;
        let grid = |kernel: TriangleKernel, groups: usize| -> Result<u32> {
            u32::try_from(groups)
                .ok()
                .filter(|&g| g < 1 << 31)
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "{m} edges need {groups} work-groups of {}, more than a grid holds",
                        kernel.name()
                    ))
                })
        };
        let mut launches = Vec::new();
        let mut scratch_words = 0;
        if m > 0 {
            match algorithm {
                TriangleAlgorithm::Merge | TriangleAlgorithm::Auto => {
                    let k = TriangleKernel::Merge;
                    launches.push(TriangleLaunch {
                        kernel: k,
                        groups: grid(k, m.div_ceil(GPU_WG))?,
                        row_begin: 0,
                        row_end: 0,
                    });
                }
                TriangleAlgorithm::BinarySearch => match search {
                    SearchKernel::Row => {
                        let k = TriangleKernel::SearchRow;
                        let rows = bins.ends[2];
                        if rows > 0 {
                            launches.push(TriangleLaunch {
                                kernel: k,
                                groups: grid(k, rows.div_ceil(GPU_WG / GPU_LANES).min(max_groups))?,
                                row_begin: 0,
                                row_end: rows as u64,
                            });
                        }
                    }
                    SearchKernel::Edge => {
                        let k = TriangleKernel::Search;
                        launches.push(TriangleLaunch {
                            kernel: k,
                            groups: grid(k, m.div_ceil(GPU_WG / GPU_LANES))?,
                            row_begin: 0,
                            row_end: 0,
                        });
                    }
                    SearchKernel::Flat | SearchKernel::FlatGlobal => {
                        // A work-group per chunk of GPU_WG edges (the hardware balances the
                        // uneven chunks); the work-groups loop over the chunks when there
                        // are more than a grid holds, or than TRIDENT_TC_BINS's G says.
                        let k = search.kernel();
                        let cap = group_limit().unwrap_or(1 << 30);
                        launches.push(TriangleLaunch {
                            kernel: k,
                            groups: grid(k, m.div_ceil(GPU_WG).min(cap))?,
                            row_begin: 0,
                            row_end: 0,
                        });
                    }
                },
                TriangleAlgorithm::Hash => {
                    let kernels = [
                        (TriangleKernel::HashWarp, GPU_WG / GPU_LANES),
                        (TriangleKernel::HashBlock, 1),
                        (TriangleKernel::HashBitmap, 1),
                    ];
                    for (b, (k, rows_per_group)) in kernels.into_iter().enumerate() {
                        let (begin, end) = bins.bin(b);
                        if begin == end {
                            continue;
                        }
                        let mut groups = (end - begin).div_ceil(rows_per_group);
                        if k == TriangleKernel::HashBitmap {
                            let words = n.div_ceil(32).max(1);
                            groups = groups
                                .min(GPU_BITMAP_GROUPS)
                                .min((scratch_budget / (4 * words)).max(1));
                            scratch_words = groups * words;
                        }
                        launches.push(TriangleLaunch {
                            kernel: k,
                            groups: grid(k, groups.min(max_groups))?,
                            row_begin: begin as u64,
                            row_end: end as u64,
                        });
                    }
                }
            }
        }
        Ok(Self {
            algorithm,
            launches,
            scratch_words,
        })
    }
}

/// Refuses, with [`Error::OutOfMemory`] saying how much it needs, a graph whose
/// [`OrientedGraph::device_bytes`] (with per-node counts) exceed the device's `have` bytes
/// (0: unknown, not checked).
pub fn check_device_memory(
    backend: &'static str,
    device: &str,
    g: &OrientedGraph,
    have: u64,
) -> Result<()> {
    let need = g.device_bytes(true);
    if have > 0 && need > have {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(Error::out_of_memory(
            backend,
            format!(
                "the oriented graph ({} nodes, {} edges) needs {need} bytes ({:.2} GiB) of \
                 device memory with per-node counts, {device} has {have} ({:.2} GiB)",
                g.num_nodes(),
                g.num_edges(),
                gib(need),
                gib(have)
            ),
        ));
    }
    Ok(())
}

/// Per-node values in rank order (`per_node[r]` for node `r` of the orientation) reordered
/// to the graph's ids, given the orientation's `original` ids (`None`: the identity).
pub fn to_original_order(original: Option<&[u32]>, per_node: Vec<u64>) -> Vec<u64> {
    match original {
        None => per_node,
        Some(o) => {
            let mut out = vec![0u64; per_node.len()];
            for (r, x) in per_node.into_iter().enumerate() {
                out[o[r] as usize] = x;
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `v` of the result has out-degree `degs[v]` (out-neighbours the next ids, wrapping
    /// into a large id space so that rows stay sorted and in range).
    fn oriented(degs: &[usize]) -> OrientedGraph {
        let n = degs.len() + *degs.iter().max().unwrap_or(&0) + 1;
        let mut indptr = vec![0u64];
        let mut adj = Vec::new();
        for v in 0..n {
            let d = degs.get(v).copied().unwrap_or(0);
            adj.extend((v + 1..v + 1 + d).map(|u| u as u32));
            indptr.push(adj.len() as u64);
        }
        OrientedGraph::from_parts(indptr, adj).unwrap()
    }

    #[test]
    fn bins_by_out_degree() {
        let degs = [0, 1, 2, 64, 65, 2048, 2049, 3, 5000, 100];
        let g = oriented(&degs);
        let b = RowBins::new(&g);
        assert_eq!(b.bin(0), (0, 3));
        assert_eq!(&b.rows[0..3], &[2, 3, 7]);
        assert_eq!(b.bin(1), (3, 6));
        assert_eq!(&b.rows[3..6], &[4, 5, 9]);
        assert_eq!(b.bin(2), (6, 8));
        assert_eq!(&b.rows[6..8], &[6, 8]);
        assert_eq!(RowBins::new(&oriented(&[])), RowBins::default());
        // Other limits, clamped to the kernels' tables.
        let b = RowBins::with_limits(&g, 0, 0);
        assert_eq!((b.bin(0), b.bin(1), b.bin(2)), ((0, 0), (0, 0), (0, 8)));
        let b = RowBins::with_limits(&g, 1000, 100_000);
        assert_eq!(b, RowBins::new(&g));
    }

    #[test]
    fn plans_each_algorithm() {
        let g = oriented(&[0, 1, 2, 64, 65, 2048, 2049, 3, 5000, 100]);
        let (s, b) = (g.stats(), RowBins::new(&g));
        let m = g.num_edges();
        let p = GpuPlan::new(TriangleAlgorithm::Merge, &s, &b, 1 << 30).unwrap();
        assert_eq!(p.launches.len(), 1);
        assert_eq!(p.launches[0].kernel.name(), "tc_merge");
        assert_eq!(p.launches[0].groups as usize, m.div_ceil(GPU_WG));
        assert_eq!(p.scratch_words, 0);
        // Binary search by row: one warp per row of out-degree >= 2 (8 warps per group).
        let bs = |k| GpuPlan::with_search(TriangleAlgorithm::BinarySearch, k, &s, &b, 1 << 30);
        let p = bs(SearchKernel::Row).unwrap();
        assert_eq!(p.launches.len(), 1);
        assert_eq!(p.launches[0].kernel, TriangleKernel::SearchRow);
        assert_eq!(p.launches[0].row_end as usize, b.ends[2]);
        assert_eq!(p.launches[0].groups as usize, b.ends[2].div_ceil(8));
        // By edge: a warp per edge; flattened: a work-group per GPU_WG edges.
        let p = bs(SearchKernel::Edge).unwrap();
        assert_eq!(p.launches[0].kernel.name(), "tc_search");
        assert_eq!(p.launches[0].groups as usize, m.div_ceil(8));
        for (k, name) in [
            (SearchKernel::Flat, "tc_search_flat"),
            (SearchKernel::FlatGlobal, "tc_search_flat_global"),
        ] {
            let p = bs(k).unwrap();
            assert_eq!(p.launches.len(), 1);
            assert_eq!(p.launches[0].kernel.name(), name);
            assert_eq!(p.launches[0].groups as usize, m.div_ceil(GPU_WG));
            assert_eq!(p.scratch_words, 0);
        }
        for k in SearchKernel::ALL {
            assert_eq!(k.kernel(), bs(k).unwrap().launches[0].kernel);
            assert!(TriangleKernel::ALL.contains(&k.kernel()));
            assert_eq!(SearchKernel::parse(Some(k.name())), k);
            assert_eq!(
                SearchKernel::parse(Some(&format!(" {} ", k.name().to_uppercase()))),
                k
            );
        }
        assert_eq!(
            SearchKernel::parse(Some("flat-global")),
            SearchKernel::FlatGlobal
        );
        assert_eq!(SearchKernel::parse(None), DEFAULT_SEARCH);
        assert_eq!(SearchKernel::parse(Some("bogus")), DEFAULT_SEARCH);
        assert_eq!(
            GpuPlan::new(TriangleAlgorithm::BinarySearch, &s, &b, 1 << 30)
                .unwrap()
                .launches[0]
                .kernel,
            search_kernel().kernel()
        );
        let p = GpuPlan::new(TriangleAlgorithm::Hash, &s, &b, 1 << 30).unwrap();
        let ks: Vec<_> = p.launches.iter().map(|l| l.kernel).collect();
        assert_eq!(
            ks,
            [
                TriangleKernel::HashWarp,
                TriangleKernel::HashBlock,
                TriangleKernel::HashBitmap
            ]
        );
        assert_eq!(p.launches[0].groups, 1); // 3 rows, 8 warps per group
        assert_eq!((p.launches[1].row_begin, p.launches[1].row_end), (3, 6));
        assert_eq!(p.launches[1].groups, 3);
        assert_eq!(p.launches[2].groups, 2);
        let words = g.num_nodes().div_ceil(32);
        assert_eq!(p.scratch_words, 2 * words);
        // A tiny scratch budget still plans one bitmap.
        let p = GpuPlan::new(TriangleAlgorithm::Hash, &s, &b, 1).unwrap();
        assert_eq!(p.launches[2].groups, 1);
        assert_eq!(p.scratch_words, words);
        // Only the non-empty bins launch; no edges, no launch.
        let small = oriented(&[2, 3]);
        let p = GpuPlan::new(
            TriangleAlgorithm::Hash,
            &small.stats(),
            &RowBins::new(&small),
            1 << 30,
        )
        .unwrap();
        assert_eq!(p.launches.len(), 1);
        // Many short rows: capped groups, which loop over the rows.
        let many = oriented(&vec![3; 100_000]);
        let p = GpuPlan::new(
            TriangleAlgorithm::Hash,
            &many.stats(),
            &RowBins::new(&many),
            1 << 30,
        )
        .unwrap();
        assert_eq!(p.launches.len(), 1);
        assert_eq!(p.launches[0].groups as usize, GPU_ROW_GROUPS);
        assert_eq!(p.launches[0].row_end, 100_000);
        let empty = oriented(&[]);
        let p = GpuPlan::new(
            TriangleAlgorithm::Merge,
            &empty.stats(),
            &RowBins::new(&empty),
            0,
        )
        .unwrap();
        assert!(p.launches.is_empty());
        // Auto is resolved for a GPU.
        let p = GpuPlan::new(TriangleAlgorithm::Auto, &s, &b, 1 << 30).unwrap();
        assert_ne!(p.algorithm, TriangleAlgorithm::Auto);
    }

    #[test]
    fn memory_check_and_reorder() {
        let g = oriented(&[2, 3]);
        assert!(check_device_memory("x", "dev", &g, 0).is_ok());
        assert!(check_device_memory("x", "dev", &g, 1 << 40).is_ok());
        let e = check_device_memory("x", "dev", &g, 16).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
        assert!(e.to_string().contains("needs"), "{e}");
        assert_eq!(to_original_order(None, vec![1, 2]), vec![1, 2]);
        assert_eq!(
            to_original_order(Some(&[2, 0, 1]), vec![7, 8, 9]),
            vec![8, 9, 7]
        );
    }
}

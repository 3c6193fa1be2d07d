//! The host side that the CUDA and OpenCL triangle backends share: which kernels to launch
//! for an algorithm, on how many work-groups, over which rows ([`GpuPlan`]); the rows binned
//! by out-degree for the hash kernels ([`RowBins`]); the device-memory check
//! ([`check_device_memory`]) and the mapping of per-node counts back to the graph's ids
//! ([`to_original_order`]). The backends only allocate, set the (identical) kernel arguments
//! and launch: see `kernels/opencl/triangles.cl` (one source for both backends) for the
//! kernels and their signature.

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

/// A triangle kernel of `kernels/opencl/triangles.cl`, all with one argument list.
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

/// The limits of a GPU plan ([`RowBins::with_limits`] and [`GpuPlan::new`]), a field of
/// [`crate::triangles::TriangleOptions`]: the defaults are what the kernels are tuned for;
/// others are for timing the bins against each other and for tests, which force every
/// branch a plan can take on small graphs (`warp_max = block_max = 0` sends every row to the
/// global-bitmap `tc_hash`; `max_groups = Some(1)` makes one work-group of each kernel loop
/// over all its rows, `tc_search_flat` included, which otherwise takes a work-group per
/// chunk of edges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanLimits {
    /// Rows of out-degree `2..=warp_max` go to `tc_hash_warp` (clamped to [`GPU_WARP_MAX`]).
    pub warp_max: usize,
    /// Rows of out-degree up to `block_max` (and above `warp_max`) go to `tc_hash_block`,
    /// longer ones to `tc_hash` (clamped to [`GPU_BLOCK_MAX`]).
    pub block_max: usize,
    /// At most this many work-groups per launch (at least 1) of the kernels that loop over
    /// their rows or chunks of edges (the hash kernels, `tc_search_row`, `tc_search_flat`
    /// and `tc_search_flat_global`); `None`: [`GPU_ROW_GROUPS`] for the row-list kernels, one
    /// per chunk of edges for the others. `tc_merge` and `tc_search` have no such loop and
    /// always take one work-group per chunk of edges.
    pub max_groups: Option<usize>,
}

impl Default for PlanLimits {
    fn default() -> Self {
        Self {
            warp_max: GPU_WARP_MAX,
            block_max: GPU_BLOCK_MAX,
            max_groups: None,
        }
    }
}

impl PlanLimits {
    /// The bin limits `(warp_max, block_max)` as [`RowBins::with_limits`] applies them
    /// (clamped to the kernels' tables).
    pub fn bin_limits(&self) -> (usize, usize) {
        (
            self.warp_max.min(GPU_WARP_MAX),
            self.block_max.min(GPU_BLOCK_MAX),
        )
    }

    /// Whether rows binned with these limits are binned as with the defaults (as the GPU
    /// backends bin them at upload); otherwise a count rebins them.
    pub fn default_bins(&self) -> bool {
        self.bin_limits() == Self::default().bin_limits()
    }

    /// Parses `W,B[,G]` (`G` at least 1): the benchmarks' and the CLI's spelling.
    pub fn parse(value: &str) -> Result<Self> {
        let f: Vec<Option<usize>> = value.split(',').map(|x| x.trim().parse().ok()).collect();
        let (warp_max, block_max, max_groups) = match f[..] {
            [Some(w), Some(b)] => (w, b, None),
            [Some(w), Some(b), Some(g)] if g >= 1 => (w, b, Some(g)),
            _ => {
                return Err(Error::invalid(
                    "triangle plan limits",
                    format!("{value:?} (expected WARP_MAX,BLOCK_MAX[,GROUPS], GROUPS >= 1)"),
                ))
            }
        };
        Ok(Self {
            warp_max,
            block_max,
            max_groups,
        })
    }
}

/// The GPU kernel of [`TriangleAlgorithm::BinarySearch`]: all of them count every triangle
/// once by binary search in sorted out-neighbour lists, on different work layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchKernel {
    /// `tc_search`: a warp per oriented edge `v -> u`, its 32 lanes striding over the shorter
    /// of `N+(v)`, `N+(u)` and searching the longer (each edge first finds its row by binary
    /// search in `indptr`).
    Edge,
    /// `tc_search_row`: a warp per row `v` of out-degree >= 2 ([`RowBins`], all bins), the
    /// out-neighbours `u` of `v` one after the other, the lanes striding over one list and
    /// searching the other.
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
    /// searched in.
    FlatGlobal,
}

impl SearchKernel {
    /// Every variant, in a fixed order.
    pub const ALL: [SearchKernel; 4] = [Self::Edge, Self::Row, Self::Flat, Self::FlatGlobal];

    /// The name [`SearchKernel::from_str`](std::str::FromStr) takes.
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

/// The default `BinarySearch` kernel ([`crate::triangles::TriangleOptions::search`]):
/// `tc_search_flat`, the fastest of the four in the benchmark (`benches/peers/tc_h100.sh`;
/// every kernel's time in `benches/results/triangles.md`).
pub const DEFAULT_SEARCH: SearchKernel = SearchKernel::Flat;

impl Default for SearchKernel {
    fn default() -> Self {
        DEFAULT_SEARCH
    }
}

impl std::str::FromStr for SearchKernel {
    type Err = Error;
    /// The kernel a name of [`SearchKernel::name`] names (any case, blanks around ignored).
    fn from_str(value: &str) -> Result<Self> {
        let v = value.trim();
        SearchKernel::ALL
            .into_iter()
            .find(|k| v.eq_ignore_ascii_case(k.name()))
            .ok_or_else(|| {
                Error::invalid(
                    "binary-search kernel",
                    format!("{value:?} (expected edge, row, flat or flat-global)"),
                )
            })
    }
}

impl RowBins {
    /// Bins the rows of `g` (one pass over `indptr`) with the default limits
    /// ([`PlanLimits::default`]).
    pub fn new(g: &OrientedGraph) -> Self {
        Self::with_limits(g, GPU_WARP_MAX, GPU_BLOCK_MAX)
    }

    /// Bins the rows of `g`: out-degree `2..=warp_max` to the warp bin, up to `block_max` to
    /// the block bin, longer to the bitmap bin (limits clamped to [`GPU_WARP_MAX`] and
    /// [`GPU_BLOCK_MAX`], which the kernels' tables are sized for).
    pub fn with_limits(g: &OrientedGraph, warp_max: usize, block_max: usize) -> Self {
        Self::from_indptr(g.indptr(), warp_max, block_max)
    }

    /// [`RowBins::with_limits`] of the oriented graph with row pointers `ip` (what a GPU
    /// backend reads back from the device to rebin for other [`PlanLimits`]).
    pub fn from_indptr(ip: &[u64], warp_max: usize, block_max: usize) -> Self {
        let warp_max = warp_max.min(GPU_WARP_MAX);
        let block_max = block_max.min(GPU_BLOCK_MAX);
        let bin = |v: usize| -> Option<usize> {
            match (ip[v + 1] - ip[v]) as usize {
                0 | 1 => None,
                d if d <= warp_max => Some(0),
                d if d <= block_max => Some(1),
                _ => Some(2),
            }
        };
        let n = ip.len().saturating_sub(1);
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
    /// The plan for `algorithm` (resolved from `stats` if `Auto`), `BinarySearch` on the
    /// kernel `search`, on an `n`-node, `m`-edge orientation binned as `bins` (with the bin
    /// limits of `limits`), with at most `scratch_budget` bytes for `tc_hash`'s bitmaps (at
    /// least one bitmap is always planned); the hash kernels get at most [`GPU_ROW_GROUPS`]
    /// work-groups each, every kernel at most `limits.max_groups` when given.
    pub fn new(
        algorithm: TriangleAlgorithm,
        search: SearchKernel,
        limits: &PlanLimits,
        stats: &crate::triangles::DegreeStats,
        bins: &RowBins,
        scratch_budget: usize,
    ) -> Result<Self> {
        let (n, m) = (stats.nodes, stats.edges);
        let algorithm = algorithm.resolve(stats, true);
        let max_groups = limits.max_groups.map_or(GPU_ROW_GROUPS, |g| g.max(1));
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
                        // are more than a grid holds, or than `limits.max_groups` says.
                        let k = search.kernel();
                        let cap = limits.max_groups.map_or(1 << 30, |g| g.max(1));
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
    check_device_rows(backend, device, g.num_nodes(), g.num_edges(), have)
}

/// [`check_device_memory`] for an oriented graph of `n` nodes and `m` edges not held on the
/// host (the rows a distributed count exchanges between devices).
pub fn check_device_rows(
    backend: &'static str,
    device: &str,
    n: usize,
    m: usize,
    have: u64,
) -> Result<()> {
    let need = OrientedGraph::bytes_on_device(n, m, true);
    if have > 0 && need > have {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(Error::out_of_memory(
            backend,
            format!(
                "the oriented graph ({n} nodes, {m} edges) needs {need} bytes ({:.2} GiB) of \
                 device memory with per-node counts, {device} has {have} ({:.2} GiB)",
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
        let d = PlanLimits::default();
        let p = GpuPlan::new(
            TriangleAlgorithm::Merge,
            DEFAULT_SEARCH,
            &d,
            &s,
            &b,
            1 << 30,
        )
        .unwrap();
        assert_eq!(p.launches.len(), 1);
        assert_eq!(p.launches[0].kernel.name(), "tc_merge");
        assert_eq!(p.launches[0].groups as usize, m.div_ceil(GPU_WG));
        assert_eq!(p.scratch_words, 0);
        // Binary search by row: one warp per row of out-degree >= 2 (8 warps per group).
        let bs = |k| GpuPlan::new(TriangleAlgorithm::BinarySearch, k, &d, &s, &b, 1 << 30);
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
            assert_eq!(k.name().parse::<SearchKernel>().unwrap(), k);
            assert_eq!(
                format!(" {} ", k.name().to_uppercase())
                    .parse::<SearchKernel>()
                    .unwrap(),
                k
            );
        }
        assert_eq!(
            "flat-global".parse::<SearchKernel>().unwrap(),
            SearchKernel::FlatGlobal
        );
        assert!("bogus".parse::<SearchKernel>().is_err());
        assert_eq!(SearchKernel::default(), DEFAULT_SEARCH);
        // The group cap applies to every kernel, the flattened search included.
        let one = PlanLimits {
            max_groups: Some(1),
            ..d
        };
        // (tc_search and tc_merge have no loop: a work-group per chunk of edges always.)
        for k in SearchKernel::ALL {
            let p = GpuPlan::new(TriangleAlgorithm::BinarySearch, k, &one, &s, &b, 1 << 30);
            let want = if k == SearchKernel::Edge {
                m.div_ceil(8)
            } else {
                1
            };
            assert_eq!(p.unwrap().launches[0].groups as usize, want);
        }
        let p = GpuPlan::new(
            TriangleAlgorithm::Hash,
            DEFAULT_SEARCH,
            &one,
            &s,
            &b,
            1 << 30,
        );
        assert!(p.unwrap().launches.iter().all(|l| l.groups == 1));
        assert_eq!(PlanLimits::parse("8, 100").unwrap().bin_limits(), (8, 100));
        assert_eq!(PlanLimits::parse("0,0,3").unwrap().max_groups, Some(3));
        assert!(PlanLimits::parse("1,2,0").is_err());
        assert!(PlanLimits::parse("x").is_err());
        assert!(PlanLimits::default().default_bins());
        assert!(!PlanLimits::parse("0,0").unwrap().default_bins());
        let p = GpuPlan::new(TriangleAlgorithm::Hash, DEFAULT_SEARCH, &d, &s, &b, 1 << 30).unwrap();
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
        let p = GpuPlan::new(TriangleAlgorithm::Hash, DEFAULT_SEARCH, &d, &s, &b, 1).unwrap();
        assert_eq!(p.launches[2].groups, 1);
        assert_eq!(p.scratch_words, words);
        // Only the non-empty bins launch; no edges, no launch.
        let small = oriented(&[2, 3]);
        let p = GpuPlan::new(
            TriangleAlgorithm::Hash,
            DEFAULT_SEARCH,
            &d,
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
            DEFAULT_SEARCH,
            &d,
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
            DEFAULT_SEARCH,
            &d,
            &empty.stats(),
            &RowBins::new(&empty),
            0,
        )
        .unwrap();
        assert!(p.launches.is_empty());
        // Auto is resolved for a GPU.
        let p = GpuPlan::new(TriangleAlgorithm::Auto, DEFAULT_SEARCH, &d, &s, &b, 1 << 30).unwrap();
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

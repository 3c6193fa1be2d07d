//! Triangle counting on CUDA: `kernels/cuda/triangles.cu` (`tc_merge`, `tc_search`,
//! `tc_hash`, one per [`TriangleAlgorithm`]) on the degree-ordered orientation; the same
//! kernels, geometry and arguments as the OpenCL backend's `kernels/opencl/triangles.cl`.

use trident_core::triangles::{DegreeStats, OrientedGraph};
use trident_core::{
    Error, Result, TriangleAlgorithm, TriangleCount, TriangleCounts, TriangleOptions,
};

use crate::driver;
use crate::kernels::Module;
use crate::launch::LaunchConfig;
use crate::memory::DevBuf;
use crate::Cuda;

/// Threads per block (`TC_WG`; the kernels are compiled with `__launch_bounds__(256)`).
const WG: usize = 256;
/// Lanes per edge of `tc_search` (`TC_LANES`, a warp).
const LANES: usize = 32;
/// At most this many blocks (and bitmaps) for `tc_hash`.
const HASH_GROUPS: usize = 1024;

/// An oriented graph in CUDA device memory (see [`TriangleCount`]).
pub struct CudaOriented {
    n: u64,
    m: u64,
    indptr: DevBuf<u64>,
    adj: DevBuf<u32>,
    stats: DegreeStats,
    /// The graph's id of each node (rank order), for per-node results.
    original: Option<Vec<u32>>,
}

impl std::fmt::Debug for CudaOriented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaOriented")
            .field("nodes", &self.n)
            .field("edges", &self.m)
            .finish()
    }
}

impl TriangleCount for Cuda {
    type Oriented = CudaOriented;

    fn upload_oriented(&self, mut g: OrientedGraph) -> Result<CudaOriented> {
        let need = g.device_bytes(true);
        let have = self.total_memory() as u64;
        if need > have {
            return Err(Error::out_of_memory(
                driver::BACKEND,
                format!(
                    "the oriented graph ({} nodes, {} edges) needs {need} bytes ({:.2} GiB) of \
                     device memory with per-node counts, {} has {have} ({:.2} GiB)",
                    g.num_nodes(),
                    g.num_edges(),
                    need as f64 / (1u64 << 30) as f64,
                    self.device_name(),
                    have as f64 / (1u64 << 30) as f64
                ),
            ));
        }
        self.shared.make_current()?;
        Ok(CudaOriented {
            n: g.num_nodes() as u64,
            m: g.num_edges() as u64,
            indptr: DevBuf::from_host(&self.shared, g.indptr(), "indptr")?,
            adj: DevBuf::from_host(&self.shared, g.adjacency(), "adjacency")?,
            stats: g.stats(),
            original: g.take_original(),
        })
    }

    fn count_oriented(&self, d: &CudaOriented, opts: &TriangleOptions) -> Result<TriangleCounts> {
        self.check_same_device(d.indptr.shared())?;
        let n = d.n as usize;
        if d.m == 0 {
            return Ok(TriangleCounts {
                total: 0,
                per_node: opts.per_node.then(|| vec![0; n]),
            });
        }
        self.shared.make_current()?;
        let alg = opts.algorithm.resolve(&d.stats, true);
        let m = d.m as usize;
        let (name, groups, scratch_len) = match alg {
            TriangleAlgorithm::Hash => {
                let words = n.div_ceil(32);
                let budget = (self.total_memory() / 8).max(1 << 26);
                let groups = HASH_GROUPS.min(n).min((budget / (4 * words)).max(1));
                ("tc_hash", groups, groups * words)
            }
            TriangleAlgorithm::BinarySearch => ("tc_search", m.div_ceil(WG / LANES), 0),
            TriangleAlgorithm::Merge | TriangleAlgorithm::Auto => ("tc_merge", m.div_ceil(WG), 0),
        };
        let grid = u32::try_from(groups).map_err(|_| {
            Error::Unsupported(format!(
                "{m} edges need {groups} blocks of the {alg} kernel, more than a grid holds"
            ))
        })?;
        let kernel = self.kernel_plain(Module::Triangles, name)?;
        let total = DevBuf::<u64>::zeroed(&self.shared, 1, "the triangle counter")?;
        let per_node = DevBuf::<u64>::zeroed(
            &self.shared,
            if opts.per_node { n } else { 0 },
            "per-node counts",
        )?;
        let scratch = DevBuf::<u32>::zeroed(&self.shared, scratch_len, "tc_hash bitmaps")?;
        let mut args = kernel.builder();
        // (u64 n, u64 m, const u64 *indptr, const u32 *adj, u64 *total, u64 *per_node,
        //  u32 want_per_node, u32 *scratch)
        args.arg(d.n)
            .arg(d.m)
            .arg(&d.indptr)
            .arg(&d.adj)
            .arg(&total)
            .arg(&per_node)
            .arg(u32::from(opts.per_node))
            .arg(&scratch);
        // SAFETY: the arguments are two u64s, four device buffers, a u32 and a device buffer,
        // matching the kernel's (u64, u64, const u64*, const u32*, u64*, u64*, u32, u32*).
        // indptr holds n + 1 row pointers and adj m ids < n (OrientedGraph invariants; m > 0
        // so n > 0); the kernels read indptr[0..=n] and adj[0..m] only, for edges e < m
        // (tc_merge: 256 per block; tc_search: 8 per block; tc_hash: rows v < n). `total` has
        // one element; `per_node` n when want_per_node, and is not touched otherwise (null);
        // `scratch` holds `groups * ceil(n/32)` zeroed words for tc_hash, which uses those of
        // its own block only, and is not touched by the others. The buffers stay allocated
        // until the kernel finishes: the synchronize below waits for it.
        unsafe { args.launch(LaunchConfig::grid_1d(grid, WG as u32)) }?;
        self.shared.synchronize()?;
        let mut t = [0u64];
        total.copy_to_host(&mut t)?;
        let per_node = if opts.per_node {
            let mut p = vec![0u64; n];
            per_node.copy_to_host(&mut p)?;
            Some(match &d.original {
                Some(o) => {
                    let mut q = vec![0u64; n];
                    for (r, x) in p.into_iter().enumerate() {
                        q[o[r] as usize] = x;
                    }
                    q
                }
                None => p,
            })
        } else {
            None
        };
        Ok(TriangleCounts {
            total: t[0],
            per_node,
        })
    }
}

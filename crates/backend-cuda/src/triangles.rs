//! Triangle counting on CUDA: the kernels of `kernels/cuda/triangles.cu` on the
//! degree-ordered orientation, launched as the shared host plan says
//! ([`trident_core::triangles::plan`]: kernels, blocks, row bins); the same kernels, geometry
//! and arguments as the OpenCL backend's `kernels/opencl/triangles.cl`.

use trident_core::triangles::plan::{self, GpuPlan, RowBins, GPU_WG};
use trident_core::triangles::{DegreeStats, OrientedGraph};
use trident_core::{Result, TriangleCount, TriangleCounts, TriangleOptions};

use crate::driver;
use crate::kernels::Module;
use crate::launch::LaunchConfig;
use crate::memory::DevBuf;
use crate::Cuda;

/// Threads per block (`TC_WG`; the kernels are compiled with `__launch_bounds__(256)`).
const WG: u32 = GPU_WG as u32;

/// An oriented graph in CUDA device memory (see [`TriangleCount`]).
pub struct CudaOriented {
    n: u64,
    m: u64,
    indptr: DevBuf<u64>,
    adj: DevBuf<u32>,
    stats: DegreeStats,
    /// The rows binned by out-degree ([`RowBins`]) on the device, and where the bins end.
    rows: DevBuf<u32>,
    bins: RowBins,
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
        plan::check_device_memory(
            driver::BACKEND,
            self.device_name(),
            &g,
            self.total_memory() as u64,
        )?;
        self.shared.make_current()?;
        let mut bins = RowBins::new(&g);
        let rows = DevBuf::from_host(&self.shared, &bins.rows, "row bins")?;
        bins.rows = Vec::new();
        Ok(CudaOriented {
            n: g.num_nodes() as u64,
            m: g.num_edges() as u64,
            indptr: DevBuf::from_host(&self.shared, g.indptr(), "indptr")?,
            adj: DevBuf::from_host(&self.shared, g.adjacency(), "adjacency")?,
            stats: g.stats(),
            rows,
            bins,
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
        let budget = (self.total_memory() / 8).max(1 << 26);
        // Rows binned at upload with the default limits; other limits rebin them from the
        // row pointers read back (for tests and experiments).
        let rebinned = if opts.limits.default_bins() {
            None
        } else {
            let mut ip = vec![0u64; n + 1];
            d.indptr.copy_to_host(&mut ip)?;
            let (w, b) = opts.limits.bin_limits();
            let bins = RowBins::from_indptr(&ip, w, b);
            let rows = DevBuf::from_host(&self.shared, &bins.rows, "rebinned rows")?;
            Some((rows, bins))
        };
        let (rows, bins) = match &rebinned {
            Some((r, b)) => (r, b),
            None => (&d.rows, &d.bins),
        };
        let plan = GpuPlan::new(
            opts.algorithm,
            opts.search,
            &opts.limits,
            &d.stats,
            bins,
            budget,
        )?;
        let total = DevBuf::<u64>::zeroed(&self.shared, 1, "the triangle counter")?;
        let per_node = DevBuf::<u64>::zeroed(
            &self.shared,
            if opts.per_node { n } else { 0 },
            "per-node counts",
        )?;
        let scratch = DevBuf::<u32>::zeroed(&self.shared, plan.scratch_words, "tc_hash bitmaps")?;
        for l in &plan.launches {
            let kernel = self.kernel_plain(Module::Triangles, l.kernel.name())?;
            let mut args = kernel.builder();
            // (u64 n, u64 m, const u64 *indptr, const u32 *adj, u64 *total, u64 *per_node,
            //  u32 want_per_node, u32 *scratch, const u32 *rows, u64 row_begin, u64 row_end)
            args.arg(d.n)
                .arg(d.m)
                .arg(&d.indptr)
                .arg(&d.adj)
                .arg(&total)
                .arg(&per_node)
                .arg(u32::from(opts.per_node))
                .arg(&scratch)
                .arg(rows)
                .arg(l.row_begin)
                .arg(l.row_end);
            // SAFETY: the arguments are two u64s, four device buffers, a u32, two device
            // buffers and two u64s, matching the kernel's (u64, u64, const u64*, const u32*,
            // u64*, u64*, u32, u32*, const u32*, u64, u64). indptr holds n + 1 row pointers and
            // adj m ids < n (OrientedGraph invariants; m > 0 so n > 0); the kernels read
            // indptr[0..=n] and adj[0..m] only: tc_merge, tc_search and tc_search_flat for
            // edges e < m (256, 8 resp. 256 per block and chunk), the hash kernels and
            // tc_search_row for
            // rows[row_begin..row_end), a range of the uploaded (or rebinned) bins (RowBins: rows < n,
            // out-degree within the kernel's bin, at least 2).
            // `total` has one element; `per_node` n when want_per_node, and is not touched
            // otherwise (null); `scratch` holds the plan's `groups * ceil(n/32)` zeroed words
            // for tc_hash, which uses those of its own block only and leaves them zero, and is
            // not touched by the others. The buffers stay allocated until the kernels finish:
            // the synchronize below waits for them (one stream, in order).
            unsafe { args.launch(LaunchConfig::grid_1d(l.groups, WG)) }?;
        }
        self.shared.synchronize()?;
        let mut t = [0u64];
        total.copy_to_host(&mut t)?;
        let per_node = if opts.per_node {
            let mut p = vec![0u64; n];
            per_node.copy_to_host(&mut p)?;
            Some(plan::to_original_order(d.original.as_deref(), p))
        } else {
            None
        };
        Ok(TriangleCounts {
            total: t[0],
            per_node,
        })
    }
}

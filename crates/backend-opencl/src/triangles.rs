//! Triangle counting on OpenCL: the kernels of `kernels/opencl/triangles.cl` on the
//! degree-ordered orientation, launched as the shared host plan says
//! ([`trident_core::triangles::plan`]: kernels, work-groups, row bins).

use std::fmt;

use ocl::Buffer;
use trident_core::triangles::plan::{self, GpuPlan, RowBins, GPU_WG};
use trident_core::triangles::{DegreeStats, OrientedGraph};
use trident_core::{Error, Result, TriangleCount, TriangleCounts, TriangleOptions};

use crate::error::ClResultExt;
use crate::kernels::Module;
use crate::program::LaunchDims;
use crate::{OpenCl, BACKEND};

/// Work-group size of every triangle kernel (`TC_WG`, fixed by `reqd_work_group_size`).
const WG: usize = GPU_WG;

/// An oriented graph in OpenCL device memory (see [`TriangleCount`]).
pub struct ClOriented {
    n: u64,
    m: u64,
    indptr: Buffer<u64>,
    adj: Buffer<u32>,
    stats: DegreeStats,
    /// The rows binned by out-degree ([`RowBins`]) on the device, and where the bins end.
    rows: Buffer<u32>,
    bins: RowBins,
    /// The graph's id of each node (rank order), for per-node results.
    original: Option<Vec<u32>>,
    owner: u64,
}

impl fmt::Debug for ClOriented {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClOriented")
            .field("nodes", &self.n)
            .field("edges", &self.m)
            .finish()
    }
}

/// The triangle kernel for `alg` (built on first use), checked for the fixed work-group size.
fn kernel_for<'a>(b: &'a OpenCl, name: &str) -> Result<&'a crate::program::CachedKernel> {
    let k = b.kernel_plain(Module::Triangles, name)?;
    if k.local != WG {
        return Err(Error::Unsupported(format!(
            "{name} needs work-groups of {WG} on {}, which allows {}",
            b.info.description(),
            k.local
        )));
    }
    Ok(k)
}

impl TriangleCount for OpenCl {
    type Oriented = ClOriented;

    fn upload_oriented(&self, mut g: OrientedGraph) -> Result<ClOriented> {
        kernel_for(self, "tc_merge")?;
        plan::check_device_memory(
            BACKEND,
            &self.info.description(),
            &g,
            self.info.global_mem_bytes,
        )?;
        let mut bins = RowBins::new(&g);
        let rows = self.alloc(
            bins.rows.len(),
            (!bins.rows.is_empty()).then_some(&bins.rows[..]),
            "uploading the row bins",
        )?;
        bins.rows = Vec::new();
        Ok(ClOriented {
            n: g.num_nodes() as u64,
            m: g.num_edges() as u64,
            indptr: self.alloc(g.indptr().len(), Some(g.indptr()), "uploading indptr")?,
            adj: self.alloc(g.num_edges(), Some(g.adjacency()), "uploading adjacency")?,
            stats: g.stats(),
            rows,
            bins,
            original: g.take_original(),
            owner: self.id,
        })
    }

    fn count_oriented(&self, d: &ClOriented, opts: &TriangleOptions) -> Result<TriangleCounts> {
        self.check_owner(d.owner, "counting triangles")?;
        let n = d.n as usize;
        let zero = |len: usize, what: &str| -> Result<Buffer<u64>> {
            let b = self.alloc::<u64>(len, None, what)?;
            b.cmd().fill(0u64, None).enq().or_cl(|| what)?;
            Ok(b)
        };
        if d.m == 0 {
            return Ok(TriangleCounts {
                total: 0,
                per_node: opts.per_node.then(|| vec![0; n]),
            });
        }
        let budget = (self.info.max_alloc_bytes as usize).max(1 << 26) / 2;
        // Rows binned at upload with the default limits; other limits rebin them from the
        // row pointers read back (for tests and experiments).
        let rebinned = if opts.limits.default_bins() {
            None
        } else {
            let mut ip = vec![0u64; n + 1];
            d.indptr
                .read(&mut ip[..])
                .queue(&self.queue)
                .enq()
                .or_cl(|| "reading indptr back to rebin the rows")?;
            let (w, b) = opts.limits.bin_limits();
            let bins = RowBins::from_indptr(&ip, w, b);
            let rows = self.alloc(
                bins.rows.len(),
                (!bins.rows.is_empty()).then_some(&bins.rows[..]),
                "uploading the rebinned rows",
            )?;
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
        let total = zero(1, "allocating the triangle counter")?;
        let per_node = zero(
            if opts.per_node { n } else { 1 },
            "allocating per-node counts",
        )?;
        let scratch = self.alloc::<u32>(plan.scratch_words, None, "allocating tc_hash bitmaps")?;
        scratch
            .cmd()
            .fill(0u32, None)
            .enq()
            .or_cl(|| "zeroing tc_hash bitmaps")?;
        let want = u32::from(opts.per_node);
        for l in &plan.launches {
            let kernel = kernel_for(self, l.kernel.name())?;
            let mut args = kernel.builder();
            // (ulong n, ulong m, const ulong *indptr, const uint *adj, ulong *total,
            //  ulong *per_node, uint want_per_node, uint *scratch, const uint *rows,
            //  ulong row_begin, ulong row_end)
            args.arg(d.n)
                .arg(d.m)
                .arg(&d.indptr)
                .arg(&d.adj)
                .arg(&total)
                .arg(&per_node)
                .arg(want)
                .arg(&scratch)
                .arg(rows)
                .arg(l.row_begin)
                .arg(l.row_end);
            // SAFETY: the eleven arguments have the kernel's types (two u64, four buffers, a
            // u32, two buffers, two u64), all made in this instance's context (owner check).
            // indptr holds n + 1 row pointers and adj m ids < n (OrientedGraph invariants,
            // m > 0 so n > 0); the kernels read indptr[0..=n] and adj[0..m] only: tc_merge,
            // tc_search and tc_search_flat for edges e < m (WG, WG/LANES resp. WG edges per
            // group and chunk), the hash kernels and tc_search_row for rows[row_begin..row_end),
            // a range of the uploaded (or rebinned) bins (RowBins: rows < n, out-degree within the kernel's
            // bin, at least 2). `total` has one element, `per_node` n when
            // want_per_node (else it is not touched), and scratch holds the plan's
            // `groups * ceil(n/32)` zeroed words for tc_hash, which uses words
            // [g*words, (g+1)*words) of group g < groups and leaves them zero. The buffers
            // outlive the kernels: the blocking reads below wait for them (one in-order queue).
            unsafe {
                args.launch(
                    &self.queue,
                    LaunchDims::new([l.groups as usize * WG], Some([WG])),
                )
            }?;
        }
        let mut t = [0u64];
        total
            .read(&mut t[..])
            .queue(&self.queue)
            .enq()
            .or_cl(|| "reading the triangle count")?;
        let per_node = if opts.per_node {
            let mut p = vec![0u64; n];
            per_node
                .read(&mut p)
                .queue(&self.queue)
                .enq()
                .or_cl(|| "reading per-node counts")?;
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

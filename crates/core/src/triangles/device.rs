//! Triangle counting on any [`Device`]: the kernels of `kernels/opencl/triangles.cl` (one
//! source for both backends; CUDA compiles it through `kernels/cuda/triangles.cu`) on the
//! degree-ordered orientation, launched as the host plan says ([`super::plan`]: kernels,
//! work-groups, row bins).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::plan::{self, GpuPlan, RowBins, GPU_WG};
use super::{
    DegreeStats, OrientedGraph, RowExchange, TriangleCount, TriangleCounts, TriangleOptions,
};
use crate::device::{Buf, Device, Geometry, KernelHandle};
use crate::error::{Error, Result};
use crate::gpu::KernelList;

/// The kernels of the `triangles` kernel file (plain: no precision), as both backends'
/// kernel tables list them: every [`plan::TriangleKernel`]'s name.
pub const KERNELS: KernelList = KernelList::new(
    &[],
    &[
        "tc_merge",
        "tc_search",
        "tc_search_row",
        "tc_search_flat",
        "tc_search_flat_global",
        "tc_hash_warp",
        "tc_hash_block",
        "tc_hash",
        "tc_shift",
    ],
);

/// An oriented graph in device memory (see [`TriangleCount`]).
pub struct DeviceOriented<D: Device> {
    n: u64,
    /// The counted edges (those of the counted rows, a prefix of `adj`).
    m: u64,
    /// The counted rows (`0..counted`).
    counted: usize,
    indptr: Buf<D, u64>,
    adj: Buf<D, u32>,
    stats: DegreeStats,
    /// The rows binned by out-degree ([`RowBins`]) on the device, and where the bins end.
    rows: Buf<D, u32>,
    bins: RowBins,
    /// The graph's id of each node (rank order), for per-node results.
    original: Option<Vec<u32>>,
}

impl<D: Device> std::fmt::Debug for DeviceOriented<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceOriented")
            .field("nodes", &self.n)
            .field("edges", &self.m)
            .finish()
    }
}

/// The triangle kernel `name` (loaded on first use), checked for the fixed work-group size
/// `GPU_WG` (`TC_WG` of the kernel files: CUDA's launch bounds, OpenCL's
/// `reqd_work_group_size`).
fn kernel_for<'a, D: Device>(d: &'a D, name: &str) -> Result<D::Kernel<'a>> {
    let k = d.kernel_plain("triangles", name)?;
    if k.group_limit() < GPU_WG {
        return Err(Error::Unsupported(format!(
            "{name} needs work-groups of {GPU_WG} on {}, which allows {}",
            d.device(),
            k.group_limit()
        )));
    }
    Ok(k)
}

/// The scratch budget of `tc_hash`'s bitmaps: an eighth of the device memory, at most half
/// the largest allocation (the bitmaps are one buffer), at least 64 MiB.
fn scratch_budget<D: Device>(d: &D) -> usize {
    let q = d.query();
    let bytes = (q.total_memory / 8).min(q.max_alloc / 2);
    usize::try_from(bytes).unwrap_or(usize::MAX).max(1 << 26)
}

impl<D: Device> TriangleCount for D {
    type Oriented = DeviceOriented<D>;

    fn upload_oriented(&self, mut g: OrientedGraph) -> Result<DeviceOriented<D>> {
        kernel_for(self, "tc_merge")?;
        plan::check_device_memory(self.name(), &self.device(), &g, self.query().total_memory)?;
        // Only the counted rows are binned, and the edge kernels take the counted edges.
        let mut bins = RowBins::from_indptr(
            &g.indptr()[..=g.counted_rows()],
            plan::GPU_WARP_MAX,
            plan::GPU_BLOCK_MAX,
        );
        let rows = Buf::upload(self, &bins.rows, "uploading the row bins")?;
        bins.rows = Vec::new();
        Ok(DeviceOriented {
            n: g.num_nodes() as u64,
            m: g.counted_edges() as u64,
            counted: g.counted_rows(),
            indptr: Buf::upload(self, g.indptr(), "uploading indptr")?,
            adj: Buf::upload(self, g.adjacency(), "uploading adjacency")?,
            stats: g.stats(),
            rows,
            bins,
            original: g.take_original(),
        })
    }

    fn memory_limit(&self) -> Option<u64> {
        Some(self.query().total_memory)
    }

    fn upload_exchanged(
        &self,
        c: &dyn crate::comm::Comm,
        x: RowExchange<'_>,
    ) -> Result<(DeviceOriented<D>, bool)> {
        kernel_for(self, "tc_merge")?;
        let (n, m) = (x.indptr.len() - 1, x.indptr[x.indptr.len() - 1] as usize);
        let have = self.query().total_memory;
        plan::check_device_rows(self.name(), &self.device(), n, m, have)?;
        // The ids device to device where the backend can (NCCL), else through the host;
        // either way shifted on the device (`tc_shift`), so the host never touches them.
        let w = std::mem::size_of::<u32>();
        let parts: Vec<_> = x.parts.iter().map(|p| p.start * w..p.end * w).collect();
        let recv: Vec<usize> = x.recv.iter().map(|&k| k * w).collect();
        let bytes: &[u8] = bytemuck::cast_slice(x.send);
        let (adj, device) = match self.exchange_mem(c, bytes, &parts, &recv, "exchanging rows")? {
            Some(mem) => (Buf::from_mem(mem, m), true),
            None => (
                Buf::upload(self, &x.exchange_ids(c)?, "uploading adjacency")?,
                false,
            ),
        };
        if x.shift > 0 && m > 0 {
            let k = kernel_for(self, "tc_shift")?;
            let groups = m.div_ceil(GPU_WG).min(65_536);
            // SAFETY: `tc_shift` takes (adj, m, by) and touches adj[0..m) only, which `adj`
            // holds; the geometry is a whole number of TC_WG work-groups (its required size).
            unsafe {
                self.launch(&k)
                    .arg(&adj)
                    .arg(m as u64)
                    .arg(x.shift)
                    .launch(Geometry::linear(groups, GPU_WG))?;
            }
        }
        let stats = DegreeStats::of_rows(&x.indptr, x.counted);
        let mut bins = RowBins::from_indptr(
            &x.indptr[..=x.counted],
            plan::GPU_WARP_MAX,
            plan::GPU_BLOCK_MAX,
        );
        let rows = Buf::upload(self, &bins.rows, "uploading the row bins")?;
        bins.rows = Vec::new();
        let d = DeviceOriented {
            n: n as u64,
            m: x.indptr[x.counted],
            counted: x.counted,
            indptr: Buf::upload(self, &x.indptr, "uploading indptr")?,
            adj,
            stats,
            rows,
            bins,
            original: None,
        };
        Ok((d, device))
    }

    fn count_oriented(
        &self,
        d: &DeviceOriented<D>,
        opts: &TriangleOptions,
    ) -> Result<TriangleCounts> {
        let n = d.n as usize;
        if d.m == 0 {
            return Ok(TriangleCounts {
                total: 0,
                per_node: opts.per_node.then(|| vec![0; n]),
            });
        }
        // Rows binned at upload with the default limits; other limits rebin them from the
        // row pointers read back (for tests and experiments).
        let rebinned = if opts.limits.default_bins() {
            None
        } else {
            let ip = d
                .indptr
                .download(self, "reading indptr back to rebin the rows")?;
            let (w, b) = opts.limits.bin_limits();
            let bins = RowBins::from_indptr(&ip[..=d.counted], w, b);
            let rows = Buf::upload(self, &bins.rows, "uploading the rebinned rows")?;
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
            scratch_budget(self),
        )?;
        let total = Buf::<D, u64>::zeroed(self, 1, "allocating the triangle counter")?;
        let per_node = Buf::<D, u64>::zeroed(
            self,
            if opts.per_node { n } else { 0 },
            "allocating per-node counts",
        )?;
        let scratch =
            Buf::<D, u32>::zeroed(self, plan.scratch_words, "allocating tc_hash bitmaps")?;
        let want = u32::from(opts.per_node);
        for l in &plan.launches {
            let kernel = kernel_for(self, l.kernel.name())?;
            let mut args = self.launch(&kernel);
            // (u64 n, u64 m, const u64 *indptr, const u32 *adj, u64 *total, u64 *per_node,
            //  u32 want_per_node, u32 *scratch, const u32 *rows, u64 row_begin, u64 row_end)
            args.arg(d.n).arg(d.m).arg(&d.indptr).arg(&d.adj);
            args.arg(&total).arg(&per_node).arg(want).arg(&scratch);
            args.arg(rows).arg(l.row_begin).arg(l.row_end);
            // SAFETY: the eleven arguments have the kernel's types (two u64, four buffers, a
            // u32, two buffers, two u64), all this device's (checked as they are added).
            // indptr holds n + 1 row pointers into adj, whose ids are < n (OrientedGraph
            // invariants); m = indptr[counted] <= len(adj) is the counted edges (m > 0 so
            // n > 0); the kernels read indptr[0..=n] and the rows adj[indptr[v]..indptr[v+1])
            // of nodes v < n only: tc_merge, tc_search and tc_search_flat for edges e < m,
            // whose rows are counted rows (GPU_WG, GPU_WG / GPU_LANES resp.
            // GPU_WG edges per group and chunk), the hash kernels and tc_search_row for
            // rows[row_begin..row_end), a range of the uploaded (or rebinned) bins (RowBins:
            // rows < n, out-degree within the kernel's bin, at least 2). `total` has one
            // element, `per_node` n when want_per_node (else it is not touched), and
            // scratch holds the plan's `groups * ceil(n/32)` zeroed words for tc_hash,
            // which uses words [g*words, (g+1)*words) of group g < groups and leaves them
            // zero; the other kernels do not touch it. Work-groups of GPU_WG, as the kernels
            // require. The buffers outlive the kernels: the downloads below wait for them
            // (one in-order queue).
            unsafe { args.launch(Geometry::linear(l.groups as usize, GPU_WG)) }?;
        }
        let t = total.download(self, "reading the triangle count")?;
        let per_node = if opts.per_node {
            let p = per_node.download(self, "reading per-node counts")?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_every_planned_kernel() {
        let mut names: Vec<&str> = plan::TriangleKernel::ALL.iter().map(|k| k.name()).collect();
        // And the distributed count's shift of received ids.
        names.push("tc_shift");
        assert_eq!(names, KERNELS.plain);
    }
}

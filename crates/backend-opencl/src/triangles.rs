//! Triangle counting on OpenCL: `kernels/opencl/triangles.cl` (`tc_merge`, `tc_search`,
//! `tc_hash`, one per [`TriangleAlgorithm`]) on the degree-ordered orientation.

use std::fmt;

use ocl::Buffer;
use trident_core::triangles::{DegreeStats, OrientedGraph};
use trident_core::{
    Error, Result, TriangleAlgorithm, TriangleCount, TriangleCounts, TriangleOptions,
};

use crate::error::ClResultExt;
use crate::kernels::Module;
use crate::program::LaunchDims;
use crate::{OpenCl, BACKEND};

/// Work-group size of every triangle kernel (`TC_WG`, fixed by `reqd_work_group_size`).
const WG: usize = 256;
/// Lanes per edge of `tc_search` (`TC_LANES`).
const LANES: usize = 32;
/// At most this many work-groups (and bitmaps) for `tc_hash`.
const HASH_GROUPS: usize = 1024;

/// An oriented graph in OpenCL device memory (see [`TriangleCount`]).
pub struct ClOriented {
    n: u64,
    m: u64,
    indptr: Buffer<u64>,
    adj: Buffer<u32>,
    stats: DegreeStats,
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
        let need = g.device_bytes(true);
        let have = self.info.global_mem_bytes;
        if have > 0 && need > have {
            return Err(Error::out_of_memory(
                BACKEND,
                format!(
                    "the oriented graph ({} nodes, {} edges) needs {need} bytes ({:.2} GiB) of \
                     device memory with per-node counts, {} has {have} ({:.2} GiB)",
                    g.num_nodes(),
                    g.num_edges(),
                    need as f64 / (1u64 << 30) as f64,
                    self.info.description(),
                    have as f64 / (1u64 << 30) as f64
                ),
            ));
        }
        Ok(ClOriented {
            n: g.num_nodes() as u64,
            m: g.num_edges() as u64,
            indptr: self.alloc(g.indptr().len(), Some(g.indptr()), "uploading indptr")?,
            adj: self.alloc(g.num_edges(), Some(g.adjacency()), "uploading adjacency")?,
            stats: g.stats(),
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
        let alg = opts.algorithm.resolve(&d.stats, true);
        let total = zero(1, "allocating the triangle counter")?;
        let per_node = zero(
            if opts.per_node { n } else { 1 },
            "allocating per-node counts",
        )?;
        let m = d.m as usize;
        let (name, groups, scratch_len) = match alg {
            TriangleAlgorithm::Hash => {
                let words = n.div_ceil(32);
                let budget = (self.info.max_alloc_bytes as usize).max(1 << 26) / 2;
                let groups = HASH_GROUPS.min(n).min((budget / (4 * words)).max(1));
                ("tc_hash", groups, groups * words)
            }
            TriangleAlgorithm::BinarySearch => ("tc_search", m.div_ceil(WG / LANES), 1),
            TriangleAlgorithm::Merge | TriangleAlgorithm::Auto => ("tc_merge", m.div_ceil(WG), 1),
        };
        let kernel = kernel_for(self, name)?;
        let scratch = self.alloc::<u32>(scratch_len, None, "allocating tc_hash bitmaps")?;
        scratch
            .cmd()
            .fill(0u32, None)
            .enq()
            .or_cl(|| "zeroing tc_hash bitmaps")?;
        let want = u32::from(opts.per_node);
        let mut args = kernel.builder();
        // (ulong n, ulong m, const ulong *indptr, const uint *adj, ulong *total,
        //  ulong *per_node, uint want_per_node, uint *scratch)
        args.arg(d.n)
            .arg(d.m)
            .arg(&d.indptr)
            .arg(&d.adj)
            .arg(&total)
            .arg(&per_node)
            .arg(want)
            .arg(&scratch);
        // SAFETY: the eight arguments have the kernel's types (two u64, four buffers, a u32,
        // a buffer), all made in this instance's context (owner check). indptr holds n + 1
        // row pointers and adj m ids < n (OrientedGraph invariants, m > 0 so n > 0); the
        // kernels read indptr[0..=n] and adj[0..m] only, for edges e < m (tc_merge: group
        // g's edges g*WG.. < m; tc_search: WG/LANES edges per group; tc_hash: rows v < n).
        // `total` has one element, `per_node` n when want_per_node (else it is not touched),
        // and scratch `groups * ceil(n/32)` zeroed words for tc_hash, which uses words
        // [g*words, (g+1)*words) of group g < groups. The buffers outlive the kernel: the
        // blocking reads below wait for it.
        unsafe { args.launch(&self.queue, LaunchDims::new([groups * WG], Some([WG]))) }?;
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

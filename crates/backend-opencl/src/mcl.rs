//! R-MCL on OpenCL: `kernels/opencl/mcl.cl`, one fused work-group pass per column, the whole
//! loop on the device (only the chaos and entry count are read back per iteration). See the
//! kernel file for the launch sequence and [`trident_core::mcl`] for the algorithm.

use std::time::Instant;

use ocl::{Buffer, OclPrm};
use trident_core::mcl::{
    empty_clustering, interpret, stop_reason, Clustering, Columns, Expansion, MarkovCluster,
    MclOptions, MclProgress, Transition,
};
use trident_core::{Error, Graph, Result, Scalar};

use crate::error::cl_error;
use crate::kernels::Module;
use crate::program::{CachedKernel, LaunchDims, Real};
use crate::{ClScalar, OpenCl, BACKEND};

/// Largest hash table per work-group in local memory (slots): `LCAP` of the kernel file.
const LCAP: usize = 2048;
/// Environment variable that lowers the local hash table (slots, at least 4), so that tests
/// on small graphs exercise the global-memory path of hub columns.
pub const LCAP_ENV: &str = "TRIDENT_MCL_LCAP";
/// Work-items per column work-group (a power of two).
const COLUMN_WG: usize = 128;
/// Upper bound on the global scratch of the hub-column path.
const SCRATCH_BUDGET: usize = 1 << 30;

impl OpenCl {
    fn read_one<P: OclPrm>(&self, b: &Buffer<P>) -> Result<P> {
        let mut v = vec![P::default(); 1];
        b.read(&mut v)
            .queue(&self.queue)
            .enq()
            .map_err(|e| cl_error("reading an R-MCL scalar", e))?;
        Ok(v[0])
    }

    fn read_all<P: OclPrm>(&self, b: &Buffer<P>, len: usize) -> Result<Vec<P>> {
        let mut v = vec![P::default(); len];
        if len > 0 {
            b.read(&mut v)
                .queue(&self.queue)
                .enq()
                .map_err(|e| cl_error("downloading M", e))?;
        }
        Ok(v)
    }
}

impl<T: ClScalar> MarkovCluster<T> for OpenCl {
    fn cluster_with_progress(
        &self,
        g: &Graph,
        opts: &MclOptions,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering> {
        let kernel = |root: &str| self.kernel::<T>(Module::Mcl, root);
        let (k_mass, k_penalty, k_local, k_global, k_reduce): (
            &CachedKernel,
            &CachedKernel,
            &CachedKernel,
            &CachedKernel,
            &CachedKernel,
        ) = (
            kernel("mcl_mass")?,
            kernel("mcl_penalty")?,
            kernel("mcl_column_local")?,
            kernel("mcl_column_global")?,
            kernel("mcl_reduce")?,
        );
        let lcap = std::env::var(LCAP_ENV)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(LCAP, |v| v.clamp(4, LCAP).next_power_of_two());
        let tr = Transition::new(g, opts)?;
        let n = tr.n;
        if n == 0 {
            return Ok(empty_clustering());
        }
        let k = opts.max_per_column;
        let m0 = Columns::<T>::initial(&tr, k)?;
        let right_m = opts.expansion == Expansion::Mcl;
        let balanced = opts.balanced();

        // Hub columns: those whose candidate products may exceed the local table.
        let bound = |j: usize| -> usize {
            if right_m {
                k * k
            } else {
                (tr.ptr[j + 1] - tr.ptr[j]) as usize * k
            }
        };
        let hubs = (0..n).filter(|&j| 2 * bound(j) > lcap).count();
        let max_bound = (0..n).map(bound).max().unwrap_or(1);
        let region = if hubs == 0 {
            1
        } else {
            (2 * max_bound).next_power_of_two()
        };
        let slot_bytes = 4 + 8 + 4 + std::mem::size_of::<T>();
        let groups = hubs
            .min(256)
            .min((SCRATCH_BUDGET / (region * slot_bytes)).max(1))
            .max(1);
        let scratch = groups
            .checked_mul(region)
            .ok_or_else(|| Error::OutOfMemory {
                backend: crate::BACKEND,
                message: format!("R-MCL hub scratch: {groups} × {region} slots"),
                source: None,
            })?;

        let slots = n * k;
        let rval: Vec<T> = tr.val.iter().map(|&x| T::from_f64(x)).collect();
        let a = "R-MCL buffers";
        let rptr = self.alloc(n + 1, Some(&tr.ptr), a)?;
        let rrow = self.alloc(tr.row.len(), Some(&tr.row), a)?;
        let rvalb = self.alloc(rval.len(), Some(&rval), a)?;
        let idx = [
            self.alloc(slots, Some(&m0.idx), a)?,
            self.alloc::<u32>(slots, None, a)?,
        ];
        let val = [
            self.alloc(slots, Some(&m0.val), a)?,
            self.alloc::<T>(slots, None, a)?,
        ];
        let len = [
            self.alloc(n, Some(&m0.len), a)?,
            self.alloc::<u32>(n, None, a)?,
        ];
        let pen = self.alloc(n, Some(&vec![T::one(); n]), a)?;
        let mass = self.alloc(n, Some(&vec![0u64; n]), a)?;
        let sq = self.alloc(2 * n, Some(&vec![0u64; 2 * n]), a)?;
        let overflow = self.alloc(n + 1, Some(&vec![0u32; n + 1]), a)?;
        let out_chaos = self.alloc::<T>(2, None, a)?;
        let out_entries = self.alloc::<u64>(1, None, a)?;
        let g_keys = self.alloc::<u32>(scratch, None, a)?;
        let g_acc = self.alloc::<u64>(scratch, None, a)?;
        let g_crow = self.alloc::<u32>(scratch, None, a)?;
        let g_cy = self.alloc::<T>(scratch, None, a)?;

        let n64 = n as u64;
        let k32 = k as u32;
        let flags: u32 = u32::from(right_m)
            | (u32::from(balanced) << 1)
            | (u32::from(opts.inflation == 2.0) << 2);
        let inflation = T::from_f64(opts.inflation);
        let prune = T::from_f64(opts.prune_threshold);
        let b = T::from_f64(opts.balance);
        let region64 = region as u64;
        let wg1 = k_mass.local;
        let wgc = k_local.local.min(COLUMN_WG);
        let wgr = k_reduce.local.min(1024);
        let lcap64 = lcap as u64;

        let start = Instant::now();
        let mut chaos_now = f64::INFINITY;
        let mut change_now = f64::INFINITY;
        let mut iterations = 0;
        let (mut cur, mut nxt) = (0usize, 1usize);
        let stop = loop {
            if let Some(reason) = stop_reason(opts, iterations, chaos_now, change_now) {
                break reason;
            }
            if balanced {
                let mut args = k_mass.builder();
                args.arg(n64).arg(k32);
                args.arg(&idx[cur]).arg(&val[cur]).arg(&len[cur]).arg(&mass);
                // SAFETY: (ulong n, uint K, const uint *idx, const REAL *val,
                // const uint *len, ulong *mass), as in kernels/opencl/mcl.cl: items j < n
                // read len[j] (n entries) and slots j*K + s < n*K of idx/val (len[j] <= K),
                // and add to mass[row] with row < n (rows of M are node numbers).
                unsafe { args.launch(&self.queue, LaunchDims::linear(n, wg1)) }?;
                let mut args = k_penalty.builder();
                args.arg(n64).arg(Real(b)).arg(&mass).arg(&pen);
                // SAFETY: (ulong n, REAL b, ulong *mass, REAL *pen): items i < n touch
                // mass[i] and pen[i], both of n entries.
                unsafe { args.launch(&self.queue, LaunchDims::linear(n, wg1)) }?;
            }
            let column = |kern: &CachedKernel, first: u64, groups: usize| -> Result<()> {
                let mut args = kern.builder();
                args.arg(n64)
                    .arg(k32)
                    .arg(flags)
                    .arg(Real(inflation))
                    .arg(Real(prune));
                args.arg(&rptr).arg(&rrow).arg(&rvalb);
                args.arg(&idx[cur]).arg(&val[cur]).arg(&len[cur]).arg(&pen);
                args.arg(&idx[nxt]).arg(&val[nxt]).arg(&len[nxt]);
                args.arg(&sq).arg(&overflow);
                args.arg(&g_keys).arg(&g_acc).arg(&g_crow).arg(&g_cy);
                args.arg(region64).arg(first).arg(lcap64);
                // SAFETY: the 24 parameters of mcl_column_local / mcl_column_global, in order
                // and type (kernels/opencl/mcl.cl). Column j < n reads rptr[j..=j+1] (n + 1
                // entries) and rrow/rval within them, or column j of M; columns k named
                // there are < n, their slots < n*K; it writes slots j*K + r with r < K of
                // the other half of the ping-pong pair, len[j] (n entries), sq[j] and sq[n + j] (2n entries) and the
                // overflow list (n + 1 entries: each column is appended at most once per
                // iteration). The global variant's group g uses slots g*region .. +region of
                // the g_* arrays (groups * region each), and a column whose candidates do not
                // fit is reported, not processed.
                unsafe { args.launch(&self.queue, LaunchDims::new([groups * wgc], Some([wgc]))) }
            };
            column(k_local, 0, n)?;
            let mut first = 0u64;
            while (first as usize) < hubs {
                column(k_global, first, groups)?;
                first += groups as u64;
            }
            let mut args = k_reduce.builder();
            args.arg(n64)
                .arg(k32)
                .arg(&val[nxt])
                .arg(&sq)
                .arg(&len[nxt]);
            args.arg(&overflow).arg(&out_chaos).arg(&out_entries);
            // SAFETY: (ulong n, uint K, const REAL *val, ulong *sq, const uint *len,
            // uint *overflow, REAL *out_chaos, ulong *out_entries): one work-group strides
            // over j < n (val[j*K] < n*K, len n entries, sq[j] and sq[n + j] of 2n) and
            // writes out_chaos[0..2], out_entries[0] and overflow[0].
            unsafe { args.launch(&self.queue, LaunchDims::new([wgr], Some([wgr]))) }?;
            let c = self.read_all(&out_chaos, 2)?;
            chaos_now = Scalar::to_f64(c[0]);
            change_now = Scalar::to_f64(c[1]);
            let entries = self.read_one(&out_entries)?;
            if chaos_now.is_nan() {
                return Err(Error::backend(
                    BACKEND,
                    "R-MCL: a hub column exceeded its scratch region (a bug)",
                ));
            }
            std::mem::swap(&mut cur, &mut nxt);
            iterations += 1;
            progress(&MclProgress {
                iteration: iterations,
                chaos: chaos_now,
                change: change_now,
                entries,
                seconds: start.elapsed().as_secs_f64(),
            });
        };
        let m = Columns::<T> {
            n,
            k,
            idx: self.read_all(&idx[cur], slots)?,
            val: self.read_all(&val[cur], slots)?,
            len: self.read_all(&len[cur], n)?,
        };
        Ok(Clustering {
            clusters: interpret(&m),
            iterations,
            chaos: chaos_now,
            change: change_now,
            stop,
            converged: stop.converged(),
        })
    }
}

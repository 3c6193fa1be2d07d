//! R-MCL on CUDA: `kernels/cuda/mcl.cu`, one fused block pass per column, the whole loop on
//! the device (only the chaos and entry count are read back per iteration). The same kernels,
//! arguments, launch geometry and hub-column scheduling as the OpenCL backend
//! (`crates/backend-opencl/src/mcl.rs` with `kernels/opencl/mcl.cl`); see the kernel file for
//! the launch sequence and [`trident_core::mcl`] for the algorithm.

use std::time::Instant;

use trident_core::gpu::Precision;
use trident_core::mcl::{
    empty_clustering, interpret, stop_reason, Clustering, Columns, Expansion, MarkovCluster,
    MclOptions, MclProgress, Transition,
};
use trident_core::{Error, Graph, Result, Scalar};

use crate::driver;
use crate::kernels::Module;
use crate::launch::{Kernel, LaunchArgs, LaunchConfig};
use crate::memory::{CudaScalar, DevBuf};
use crate::Cuda;

/// Largest hash table per block in shared memory (slots): `LCAP` of the kernel file.
const LCAP: usize = 2048;
/// Environment variable that lowers the shared-memory hash table (slots, at least 4), so that
/// tests on small graphs exercise the global-memory path of hub columns (the OpenCL
/// backend reads the same one).
pub const LCAP_ENV: &str = "TRIDENT_MCL_LCAP";
/// Threads per column block (a power of two, at most the kernels' `__launch_bounds__`).
const COLUMN_WG: u32 = 128;
/// Threads per block of `mcl_mass` / `mcl_penalty`.
const LINEAR_WG: u32 = 256;
/// Threads of the one `mcl_reduce` block (`WG_MAX`).
const REDUCE_WG: u32 = 1024;
/// Upper bound on the global scratch of the hub-column path.
const SCRATCH_BUDGET: usize = 1 << 30;

/// Blocks of a 1-D launch over `n` items, as a grid dimension.
fn blocks(n: usize, wg: u32) -> Result<u32> {
    u32::try_from(n.div_ceil(wg as usize))
        .map_err(|_| Error::Unsupported(format!("R-MCL: {n} items exceed a CUDA grid")))
}

/// Appends a `T` parameter (`float` or `double`) of value `v` rounded to `T`.
fn real_arg<T: CudaScalar>(args: &mut LaunchArgs<'_, '_>, v: f64) {
    match Precision::of::<T>() {
        Precision::F32 => args.arg(v as f32),
        Precision::F64 => args.arg(v),
    };
}

impl<T: CudaScalar> MarkovCluster<T> for Cuda {
    fn cluster_with_progress(
        &self,
        g: &Graph,
        opts: &MclOptions,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering> {
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

        // Hub columns: those whose candidate products may exceed the shared-memory table.
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
        let tsz = std::mem::size_of::<T>();
        let slot_bytes = 4 + 8 + 4 + tsz;
        let groups = hubs
            .min(256)
            .min((SCRATCH_BUDGET / (region * slot_bytes)).max(1))
            .max(1);
        let scratch = groups
            .checked_mul(region)
            .ok_or_else(|| Error::OutOfMemory {
                backend: driver::BACKEND,
                message: format!("R-MCL hub scratch: {groups} × {region} slots"),
                source: None,
            })?;
        let slots = n * k;

        // Device memory, all of it, before allocating any: a clear error when it cannot fit.
        let need = (2 * slots * (4 + tsz)) as u128
            + (n as u128) * (2 * 4 + tsz as u128 + 8 + 8 + 4)
            + (n as u128 + 1) * 8
            + tr.row.len() as u128 * (4 + tsz as u128)
            + scratch as u128 * slot_bytes as u128;
        let have = self.total_memory() as u128;
        if need > have {
            return Err(Error::out_of_memory(
                driver::BACKEND,
                format!(
                    "R-MCL on {n} nodes with K = {k} needs {need} bytes ({:.2} GiB) of device \
                     memory, {} has {have} ({:.2} GiB); lower --max-per-column or use the CPU",
                    need as f64 / (1u64 << 30) as f64,
                    self.device_name(),
                    have as f64 / (1u64 << 30) as f64
                ),
            ));
        }

        let kernel = |root: &str| self.kernel::<T>(Module::Mcl, root);
        let (k_mass, k_penalty, k_local, k_global, k_reduce): (
            Kernel<'_>,
            Kernel<'_>,
            Kernel<'_>,
            Kernel<'_>,
            Kernel<'_>,
        ) = (
            kernel("mcl_mass")?,
            kernel("mcl_penalty")?,
            kernel("mcl_column_local")?,
            kernel("mcl_column_global")?,
            kernel("mcl_reduce")?,
        );

        let sh = &self.shared;
        sh.make_current()?;
        let rval: Vec<T> = tr.val.iter().map(|&x| T::from_f64(x)).collect();
        let a = "R-MCL buffers";
        let rptr = DevBuf::from_host(sh, &tr.ptr, a)?;
        let rrow = DevBuf::from_host(sh, &tr.row, a)?;
        let rvalb = DevBuf::from_host(sh, &rval, a)?;
        // The second half of each ping-pong pair starts zeroed (mcl_reduce reads val[j*K]).
        let idx = [
            DevBuf::from_host(sh, &m0.idx, a)?,
            DevBuf::<u32>::zeroed(sh, slots, a)?,
        ];
        let val = [
            DevBuf::from_host(sh, &m0.val, a)?,
            DevBuf::<T>::zeroed(sh, slots, a)?,
        ];
        let len = [
            DevBuf::from_host(sh, &m0.len, a)?,
            DevBuf::<u32>::zeroed(sh, n, a)?,
        ];
        let pen = DevBuf::from_host(sh, &vec![T::one(); n], a)?;
        let mass = DevBuf::<u64>::zeroed(sh, n, a)?;
        let sq = DevBuf::<u64>::zeroed(sh, 2 * n, a)?;
        let overflow = DevBuf::<u32>::zeroed(sh, n + 1, a)?;
        let out_chaos = DevBuf::<T>::zeroed(sh, 2, a)?;
        let out_entries = DevBuf::<u64>::zeroed(sh, 1, a)?;
        let g_keys = DevBuf::<u32>::zeroed(sh, scratch, a)?;
        let g_acc = DevBuf::<u64>::zeroed(sh, scratch, a)?;
        let g_crow = DevBuf::<u32>::zeroed(sh, scratch, a)?;
        let g_cy = DevBuf::<T>::zeroed(sh, scratch, a)?;

        let n64 = n as u64;
        let k32 = k as u32;
        let flags: u32 = u32::from(right_m)
            | (u32::from(balanced) << 1)
            | (u32::from(opts.inflation == 2.0) << 2);
        let region64 = region as u64;
        let lcap64 = lcap as u64;
        let linear = LaunchConfig::grid_1d(blocks(n, LINEAR_WG)?, LINEAR_WG);
        let col_grid = u32::try_from(n)
            .map_err(|_| Error::Unsupported(format!("R-MCL: {n} columns exceed a CUDA grid")))?;

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
                // SAFETY: (u64 n, u32 K, const u32 *idx, const T *val, const u32 *len,
                // u64 *mass), as in kernels/cuda/mcl.cu: threads j < n read len[j] (n
                // entries) and slots j*K + s < n*K of idx/val (len[j] <= K), and add to
                // mass[row] with row < n (rows of M are node numbers).
                unsafe { args.launch(linear) }?;
                let mut args = k_penalty.builder();
                args.arg(n64);
                real_arg::<T>(&mut args, opts.balance);
                args.arg(&mass).arg(&pen);
                // SAFETY: (u64 n, T b, u64 *mass, T *pen): threads i < n touch mass[i] and
                // pen[i], both of n entries.
                unsafe { args.launch(linear) }?;
            }
            let column = |kern: &Kernel<'_>, first: u64, grid: u32| -> Result<()> {
                let mut args = kern.builder();
                args.arg(n64).arg(k32).arg(flags);
                real_arg::<T>(&mut args, opts.inflation);
                real_arg::<T>(&mut args, opts.prune_threshold);
                args.arg(&rptr).arg(&rrow).arg(&rvalb);
                args.arg(&idx[cur]).arg(&val[cur]).arg(&len[cur]).arg(&pen);
                args.arg(&idx[nxt]).arg(&val[nxt]).arg(&len[nxt]);
                args.arg(&sq).arg(&overflow);
                args.arg(&g_keys).arg(&g_acc).arg(&g_crow).arg(&g_cy);
                args.arg(region64).arg(first).arg(lcap64);
                // SAFETY: the 24 parameters of mcl_column_local / mcl_column_global, in order
                // and type (kernels/cuda/mcl.cu). Column j < n reads rptr[j..=j+1] (n + 1
                // entries) and rrow/rval within them, or column j of M; columns k named
                // there are < n, their slots < n*K; it writes slots j*K + r with r < K of
                // the other half of the ping-pong pair, len[j] (n entries), sq[j] and sq[n + j] (2n entries) and the
                // overflow list (n + 1 entries: each column is appended at most once per
                // iteration). The global variant's block g uses slots g*region .. +region of
                // the g_* arrays (groups * region each), and a column whose candidates do not
                // fit is reported, not processed. Blocks of COLUMN_WG (a power of two within
                // the kernels' launch bounds); static shared memory only.
                unsafe { args.launch(LaunchConfig::grid_1d(grid, COLUMN_WG)) }
            };
            column(&k_local, 0, col_grid)?;
            let mut first = 0u64;
            while (first as usize) < hubs {
                column(&k_global, first, groups as u32)?;
                first += groups as u64;
            }
            let mut args = k_reduce.builder();
            args.arg(n64)
                .arg(k32)
                .arg(&val[nxt])
                .arg(&sq)
                .arg(&len[nxt]);
            args.arg(&overflow).arg(&out_chaos).arg(&out_entries);
            // SAFETY: (u64 n, u32 K, const T *val, u64 *sq, const u32 *len, u32 *overflow,
            // T *out_chaos, u64 *out_entries): one block of REDUCE_WG (= WG_MAX) threads
            // strides over j < n (val[j*K] < n*K, len n entries, sq[j] and sq[n + j] of 2n)
            // and writes out_chaos[0..2], out_entries[0] and overflow[0].
            unsafe { args.launch(LaunchConfig::grid_1d(1, REDUCE_WG)) }?;
            sh.synchronize()?;
            let mut c = [T::zero(); 2];
            out_chaos.copy_to_host(&mut c)?;
            let mut e = [0u64];
            out_entries.copy_to_host(&mut e)?;
            chaos_now = Scalar::to_f64(c[0]);
            change_now = Scalar::to_f64(c[1]);
            if chaos_now.is_nan() {
                return Err(driver::backend(
                    "R-MCL: a hub column exceeded its scratch region (a bug)",
                ));
            }
            std::mem::swap(&mut cur, &mut nxt);
            iterations += 1;
            progress(&MclProgress {
                iteration: iterations,
                chaos: chaos_now,
                change: change_now,
                entries: e[0],
                seconds: start.elapsed().as_secs_f64(),
            });
        };
        sh.synchronize()?;
        let mut m = Columns::<T> {
            n,
            k,
            idx: vec![0; slots],
            val: vec![T::zero(); slots],
            len: vec![0; n],
        };
        idx[cur].copy_to_host(&mut m.idx)?;
        val[cur].copy_to_host(&mut m.val)?;
        len[cur].copy_to_host(&mut m.len)?;
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

//! R-MCL on CUDA: the device steps ([`MclKernels`]) of the shared driver
//! [`trident_core::mcl::gpu`], which plans the buffers and runs the loop; the kernels are
//! `kernels/cuda/mcl.cu`, one fused block pass per column (the same kernels, arguments and
//! launch geometry as the OpenCL backend with `kernels/opencl/mcl.cl`).

use trident_core::gpu::Precision;
use trident_core::mcl::gpu::{
    self, GpuPlan, IterationReport, MclKernels, FLAG_BALANCED, LINEAR_WG, REDUCE_WG,
};
use trident_core::mcl::{Clustering, Columns, MarkovCluster, MclOptions, MclProgress, Transition};
use trident_core::{Error, Graph, Result, Scalar};

use crate::kernels::Module;
use crate::launch::{Kernel, LaunchArgs, LaunchConfig};
use crate::memory::{CudaScalar, DevBuf};
use crate::Cuda;

/// Blocks of a 1-D launch over `n` items, as a grid dimension.
fn blocks(n: usize, wg: usize) -> Result<u32> {
    u32::try_from(n.div_ceil(wg))
        .map_err(|_| Error::Unsupported(format!("R-MCL: {n} items exceed a CUDA grid")))
}

/// Appends a `T` parameter (`float` or `double`) of value `v` rounded to `T`.
fn real_arg<T: CudaScalar>(args: &mut LaunchArgs<'_, '_>, v: f64) {
    match Precision::of::<T>() {
        Precision::F32 => args.arg(v as f32),
        Precision::F64 => args.arg(v),
    };
}

/// The device buffers of one run; `cur` is the current half of each ping-pong pair.
pub struct State<T: CudaScalar> {
    rptr: DevBuf<u64>,
    rrow: DevBuf<u32>,
    rval: DevBuf<T>,
    idx: [DevBuf<u32>; 2],
    val: [DevBuf<T>; 2],
    len: [DevBuf<u32>; 2],
    pen: DevBuf<T>,
    mass: DevBuf<u64>,
    sq: DevBuf<u64>,
    overflow: DevBuf<u32>,
    out_chaos: DevBuf<T>,
    out_entries: DevBuf<u64>,
    g_keys: DevBuf<u32>,
    g_acc: DevBuf<u64>,
    g_crow: DevBuf<u32>,
    g_cy: DevBuf<T>,
    cur: usize,
}

impl<T: CudaScalar> MclKernels<T> for Cuda {
    type State = State<T>;

    fn mcl_memory(&self) -> u64 {
        self.total_memory() as u64
    }

    fn mcl_load(&self) -> Result<()> {
        for root in [
            "mcl_mass",
            "mcl_penalty",
            "mcl_column_local",
            "mcl_column_global",
            "mcl_reduce",
            "mcl_attractor",
            "mcl_target",
        ] {
            self.kernel::<T>(Module::Mcl, root)?;
        }
        Ok(())
    }

    fn mcl_upload(&self, plan: &GpuPlan, tr: &Transition, m0: &Columns<T>) -> Result<State<T>> {
        let sh = &self.shared;
        sh.make_current()?;
        let (n, slots, scratch) = (plan.n, plan.slots, plan.scratch);
        let rval = tr.values::<T>();
        let a = "R-MCL buffers";
        // The second half of each ping-pong pair starts zeroed (mcl_reduce reads val[j*K]).
        Ok(State {
            rptr: DevBuf::from_host(sh, &tr.ptr, a)?,
            rrow: DevBuf::from_host(sh, &tr.row, a)?,
            rval: DevBuf::from_host(sh, &rval, a)?,
            idx: [
                DevBuf::from_host(sh, &m0.idx, a)?,
                DevBuf::<u32>::zeroed(sh, slots, a)?,
            ],
            val: [
                DevBuf::from_host(sh, &m0.val, a)?,
                DevBuf::<T>::zeroed(sh, slots, a)?,
            ],
            len: [
                DevBuf::from_host(sh, &m0.len, a)?,
                DevBuf::<u32>::zeroed(sh, n, a)?,
            ],
            pen: DevBuf::from_host(sh, &vec![T::one(); n], a)?,
            mass: DevBuf::<u64>::zeroed(sh, n, a)?,
            sq: DevBuf::<u64>::zeroed(sh, 2 * n, a)?,
            overflow: DevBuf::<u32>::zeroed(sh, n + 1, a)?,
            out_chaos: DevBuf::<T>::zeroed(sh, 2, a)?,
            out_entries: DevBuf::<u64>::zeroed(sh, 1, a)?,
            g_keys: DevBuf::<u32>::zeroed(sh, scratch, a)?,
            g_acc: DevBuf::<u64>::zeroed(sh, scratch, a)?,
            g_crow: DevBuf::<u32>::zeroed(sh, scratch, a)?,
            g_cy: DevBuf::<T>::zeroed(sh, scratch, a)?,
            cur: 0,
        })
    }

    fn mcl_iterate(
        &self,
        st: &mut State<T>,
        plan: &GpuPlan,
        opts: &MclOptions,
        flags: u32,
    ) -> Result<IterationReport> {
        let kernel = |root: &str| self.kernel::<T>(Module::Mcl, root);
        let (cur, nxt) = (st.cur, 1 - st.cur);
        let n64 = plan.n as u64;
        let k32 = plan.k as u32;
        let linear = LaunchConfig::grid_1d(blocks(plan.n, LINEAR_WG)?, LINEAR_WG as u32);
        let s = &*st;
        if flags & FLAG_BALANCED != 0 {
            let k_mass = kernel("mcl_mass")?;
            let mut args = k_mass.builder();
            args.arg(n64).arg(k32);
            args.arg(&s.idx[cur])
                .arg(&s.val[cur])
                .arg(&s.len[cur])
                .arg(&s.mass);
            // SAFETY: (u64 n, u32 K, const u32 *idx, const T *val, const u32 *len,
            // u64 *mass), as in kernels/cuda/mcl.cu: threads j < n read len[j] (n
            // entries) and slots j*K + s < n*K of idx/val (len[j] <= K), and add to
            // mass[row] with row < n (rows of M are node numbers).
            unsafe { args.launch(linear) }?;
            let k_penalty = kernel("mcl_penalty")?;
            let mut args = k_penalty.builder();
            args.arg(n64);
            real_arg::<T>(&mut args, opts.balance);
            args.arg(&s.mass).arg(&s.pen);
            // SAFETY: (u64 n, T b, u64 *mass, T *pen): threads i < n touch mass[i] and
            // pen[i], both of n entries.
            unsafe { args.launch(linear) }?;
        }
        let column = |kern: &Kernel<'_>, grid: u32| -> Result<()> {
            let mut args = kern.builder();
            args.arg(n64).arg(k32).arg(flags);
            real_arg::<T>(&mut args, opts.inflation);
            real_arg::<T>(&mut args, opts.prune_threshold);
            args.arg(&s.rptr).arg(&s.rrow).arg(&s.rval);
            args.arg(&s.idx[cur])
                .arg(&s.val[cur])
                .arg(&s.len[cur])
                .arg(&s.pen);
            args.arg(&s.idx[nxt]).arg(&s.val[nxt]).arg(&s.len[nxt]);
            args.arg(&s.sq).arg(&s.overflow);
            args.arg(&s.g_keys)
                .arg(&s.g_acc)
                .arg(&s.g_crow)
                .arg(&s.g_cy);
            args.arg(plan.region as u64).arg(0u64).arg(plan.lcap as u64);
            // SAFETY: the 24 parameters of mcl_column_local / mcl_column_global, in order
            // and type (kernels/cuda/mcl.cu). Column j < n reads rptr[j..=j+1] (n + 1
            // entries) and rrow/rval within them, or column j of M; columns k named there
            // are < n, their slots < n*K; it writes slots j*K + r with r < K of the other
            // half of the ping-pong pair, len[j] (n entries), sq[j] and sq[n + j] (2n
            // entries) and the overflow list (n + 1 entries: each column is appended at
            // most once per iteration). The global variant's block g uses slots
            // g*region .. +region of the g_* arrays (groups * region each, the plan's
            // scratch), striding over the overflow list, and a column whose candidates do
            // not fit is reported, not processed. Blocks of plan.column_wg (a power of two
            // within the kernels' launch bounds); static shared memory only.
            unsafe { args.launch(LaunchConfig::grid_1d(grid, plan.column_wg as u32)) }
        };
        let col_grid = u32::try_from(plan.n).map_err(|_| {
            Error::Unsupported(format!("R-MCL: {} columns exceed a CUDA grid", plan.n))
        })?;
        column(&kernel("mcl_column_local")?, col_grid)?;
        if plan.hubs > 0 {
            column(&kernel("mcl_column_global")?, plan.groups as u32)?;
        }
        let k_reduce = kernel("mcl_reduce")?;
        let mut args = k_reduce.builder();
        args.arg(n64)
            .arg(k32)
            .arg(&s.val[nxt])
            .arg(&s.sq)
            .arg(&s.len[nxt]);
        args.arg(&s.overflow).arg(&s.out_chaos).arg(&s.out_entries);
        // SAFETY: (u64 n, u32 K, const T *val, u64 *sq, const u32 *len, u32 *overflow,
        // T *out_chaos, u64 *out_entries): one block of REDUCE_WG (= WG_MAX) threads
        // strides over j < n (val[j*K] < n*K, len n entries, sq[j] and sq[n + j] of 2n)
        // and writes out_chaos[0..2], out_entries[0] and overflow[0].
        unsafe { args.launch(LaunchConfig::grid_1d(1, REDUCE_WG as u32)) }?;
        self.shared.synchronize()?;
        let mut c = [T::zero(); 2];
        s.out_chaos.copy_to_host(&mut c)?;
        let mut e = [0u64];
        s.out_entries.copy_to_host(&mut e)?;
        st.cur = nxt;
        Ok(IterationReport {
            chaos: Scalar::to_f64(c[0]),
            change: Scalar::to_f64(c[1]),
            entries: e[0],
        })
    }

    fn mcl_targets(&self, st: &State<T>, plan: &GpuPlan) -> Result<Vec<u32>> {
        let sh = &self.shared;
        sh.make_current()?;
        let n = plan.n;
        let a = "R-MCL interpretation";
        let attr = DevBuf::<u32>::zeroed(sh, n, a)?;
        let target = DevBuf::<u32>::zeroed(sh, n, a)?;
        let (cur, n64, k32) = (st.cur, n as u64, plan.k as u32);
        let linear = LaunchConfig::grid_1d(blocks(n, LINEAR_WG)?, LINEAR_WG as u32);
        for root in ["mcl_attractor", "mcl_target"] {
            let k = self.kernel::<T>(Module::Mcl, root)?;
            let mut args = k.builder();
            args.arg(n64).arg(k32);
            args.arg(&st.idx[cur])
                .arg(&st.val[cur])
                .arg(&st.len[cur])
                .arg(&attr)
                .arg(&target);
            // SAFETY: (u64 n, u32 K, const u32 *idx, const T *val, const u32 *len,
            // u32 *attr, u32 *target), as in kernels/cuda/mcl.cu: threads j < n read len[j]
            // (n entries) and slots j*K + s < n*K of idx/val (len[j] <= K), write attr[j] /
            // target[j] (n entries each) and read attr[row] with row < n (rows of M are node
            // numbers); mcl_target runs after mcl_attractor on the same stream.
            unsafe { args.launch(linear) }?;
        }
        self.shared.synchronize()?;
        let mut out = vec![0u32; n];
        target.copy_to_host(&mut out)?;
        Ok(out)
    }
}

impl<T: CudaScalar> MarkovCluster<T> for Cuda {
    fn cluster_with_progress(
        &self,
        g: &Graph,
        opts: &MclOptions,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering> {
        gpu::cluster::<T, Self>(self, g, opts, progress)
    }

    fn load_kernels(&self) -> Result<()> {
        <Self as MclKernels<T>>::mcl_load(self)
    }
}

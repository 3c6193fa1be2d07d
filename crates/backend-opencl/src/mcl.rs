//! R-MCL on OpenCL: the device steps ([`MclKernels`]) of the shared driver
//! [`trident_core::mcl::gpu`], which plans the buffers and runs the loop; the kernels are
//! `kernels/opencl/mcl.cl`, one fused work-group pass per column (the same kernels,
//! arguments and launch geometry as the CUDA backend with `kernels/cuda/mcl.cu`).

use ocl::{Buffer, OclPrm};
use trident_core::mcl::gpu::{
    self, GpuPlan, IterationReport, MclKernels, FLAG_BALANCED, REDUCE_WG,
};
use trident_core::mcl::{Clustering, Columns, MarkovCluster, MclOptions, MclProgress, Transition};
use trident_core::{Graph, Result, Scalar};

use crate::error::cl_error;
use crate::kernels::Module;
use crate::program::{CachedKernel, LaunchDims, Real};
use crate::{ClScalar, OpenCl};

/// The kernels of `kernels/opencl/mcl.cl`.
const KERNELS: [&str; 7] = [
    "mcl_mass",
    "mcl_penalty",
    "mcl_column_local",
    "mcl_column_global",
    "mcl_reduce",
    "mcl_attractor",
    "mcl_target",
];

impl OpenCl {
    fn read_all<P: OclPrm>(&self, b: &Buffer<P>, len: usize, what: &str) -> Result<Vec<P>> {
        let mut v = vec![P::default(); len];
        if len > 0 {
            b.read(&mut v)
                .queue(&self.queue)
                .enq()
                .map_err(|e| cl_error(what, e))?;
        }
        Ok(v)
    }
}

/// The device buffers of one run; `cur` is the current half of each ping-pong pair.
pub struct State<T: ClScalar> {
    rptr: Buffer<u64>,
    rrow: Buffer<u32>,
    rval: Buffer<T>,
    idx: [Buffer<u32>; 2],
    val: [Buffer<T>; 2],
    len: [Buffer<u32>; 2],
    pen: Buffer<T>,
    mass: Buffer<u64>,
    sq: Buffer<u64>,
    overflow: Buffer<u32>,
    out_chaos: Buffer<T>,
    out_entries: Buffer<u64>,
    g_keys: Buffer<u32>,
    g_acc: Buffer<u64>,
    g_crow: Buffer<u32>,
    g_cy: Buffer<T>,
    cur: usize,
}

impl<T: ClScalar> MclKernels<T> for OpenCl {
    type State = State<T>;

    fn mcl_memory(&self) -> u64 {
        self.info.global_mem_bytes
    }

    fn mcl_load(&self) -> Result<()> {
        for root in KERNELS {
            self.kernel::<T>(Module::Mcl, root)?;
        }
        Ok(())
    }

    fn mcl_upload(&self, plan: &GpuPlan, tr: &Transition, m0: &Columns<T>) -> Result<State<T>> {
        let (n, slots, scratch) = (plan.n, plan.slots, plan.scratch);
        let rval = tr.values::<T>();
        let a = "R-MCL buffers";
        Ok(State {
            rptr: self.alloc(n + 1, Some(&tr.ptr), a)?,
            rrow: self.alloc(tr.row.len(), Some(&tr.row), a)?,
            rval: self.alloc(rval.len(), Some(&*rval), a)?,
            idx: [
                self.alloc(slots, Some(&m0.idx), a)?,
                self.alloc::<u32>(slots, None, a)?,
            ],
            val: [
                self.alloc(slots, Some(&m0.val), a)?,
                self.alloc::<T>(slots, None, a)?,
            ],
            len: [
                self.alloc(n, Some(&m0.len), a)?,
                self.alloc::<u32>(n, None, a)?,
            ],
            pen: self.alloc(n, Some(&vec![T::one(); n]), a)?,
            mass: self.alloc(n, Some(&vec![0u64; n]), a)?,
            sq: self.alloc(2 * n, Some(&vec![0u64; 2 * n]), a)?,
            overflow: self.alloc(n + 1, Some(&vec![0u32; n + 1]), a)?,
            out_chaos: self.alloc::<T>(2, None, a)?,
            out_entries: self.alloc::<u64>(1, None, a)?,
            g_keys: self.alloc::<u32>(scratch, None, a)?,
            g_acc: self.alloc::<u64>(scratch, None, a)?,
            g_crow: self.alloc::<u32>(scratch, None, a)?,
            g_cy: self.alloc::<T>(scratch, None, a)?,
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
        let s = &*st;
        if flags & FLAG_BALANCED != 0 {
            let k_mass = kernel("mcl_mass")?;
            let wg1 = k_mass.local;
            let mut args = k_mass.builder();
            args.arg(n64).arg(k32);
            args.arg(&s.idx[cur])
                .arg(&s.val[cur])
                .arg(&s.len[cur])
                .arg(&s.mass);
            // SAFETY: (ulong n, uint K, const uint *idx, const REAL *val,
            // const uint *len, ulong *mass), as in kernels/opencl/mcl.cl: items j < n
            // read len[j] (n entries) and slots j*K + s < n*K of idx/val (len[j] <= K),
            // and add to mass[row] with row < n (rows of M are node numbers).
            unsafe { args.launch(&self.queue, LaunchDims::linear(plan.n, wg1)) }?;
            let k_penalty = kernel("mcl_penalty")?;
            let mut args = k_penalty.builder();
            args.arg(n64)
                .arg(Real(T::from_f64(opts.balance)))
                .arg(&s.mass)
                .arg(&s.pen);
            // SAFETY: (ulong n, REAL b, ulong *mass, REAL *pen): items i < n touch
            // mass[i] and pen[i], both of n entries.
            unsafe { args.launch(&self.queue, LaunchDims::linear(plan.n, wg1)) }?;
        }
        let column = |kern: &CachedKernel, groups: usize| -> Result<()> {
            let wgc = kern.local.min(plan.column_wg);
            let mut args = kern.builder();
            args.arg(n64)
                .arg(k32)
                .arg(flags)
                .arg(Real(T::from_f64(opts.inflation)))
                .arg(Real(T::from_f64(opts.prune_threshold)));
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
            // and type (kernels/opencl/mcl.cl). Column j < n reads rptr[j..=j+1] (n + 1
            // entries) and rrow/rval within them, or column j of M; columns k named there
            // are < n, their slots < n*K; it writes slots j*K + r with r < K of the other
            // half of the ping-pong pair, len[j] (n entries), sq[j] and sq[n + j] (2n
            // entries) and the overflow list (n + 1 entries: each column is appended at
            // most once per iteration). The global variant's group g uses slots
            // g*region .. +region of the g_* arrays (groups * region each, the plan's
            // scratch), striding over the overflow list, and a column whose candidates do
            // not fit is reported, not processed.
            unsafe { args.launch(&self.queue, LaunchDims::new([groups * wgc], Some([wgc]))) }
        };
        column(kernel("mcl_column_local")?, plan.n)?;
        if plan.hubs > 0 {
            column(kernel("mcl_column_global")?, plan.groups)?;
        }
        let k_reduce = kernel("mcl_reduce")?;
        let wgr = k_reduce.local.min(REDUCE_WG);
        let mut args = k_reduce.builder();
        args.arg(n64)
            .arg(k32)
            .arg(&s.val[nxt])
            .arg(&s.sq)
            .arg(&s.len[nxt]);
        args.arg(&s.overflow).arg(&s.out_chaos).arg(&s.out_entries);
        // SAFETY: (ulong n, uint K, const REAL *val, ulong *sq, const uint *len,
        // uint *overflow, REAL *out_chaos, ulong *out_entries): one work-group strides
        // over j < n (val[j*K] < n*K, len n entries, sq[j] and sq[n + j] of 2n) and
        // writes out_chaos[0..2], out_entries[0] and overflow[0].
        unsafe { args.launch(&self.queue, LaunchDims::new([wgr], Some([wgr]))) }?;
        let c = self.read_all(&s.out_chaos, 2, "reading the R-MCL chaos")?;
        let e = self.read_all(&s.out_entries, 1, "reading the R-MCL entry count")?;
        st.cur = nxt;
        Ok(IterationReport {
            chaos: Scalar::to_f64(c[0]),
            change: Scalar::to_f64(c[1]),
            entries: e[0],
        })
    }

    fn mcl_targets(&self, st: &State<T>, plan: &GpuPlan) -> Result<Vec<u32>> {
        let n = plan.n;
        let a = "R-MCL interpretation";
        let attr = self.alloc::<u32>(n, None, a)?;
        let target = self.alloc::<u32>(n, None, a)?;
        let (cur, n64, k32) = (st.cur, n as u64, plan.k as u32);
        for root in ["mcl_attractor", "mcl_target"] {
            let k = self.kernel::<T>(Module::Mcl, root)?;
            let wg = k.local;
            let mut args = k.builder();
            args.arg(n64).arg(k32);
            args.arg(&st.idx[cur])
                .arg(&st.val[cur])
                .arg(&st.len[cur])
                .arg(&attr)
                .arg(&target);
            // SAFETY: (ulong n, uint K, const uint *idx, const REAL *val, const uint *len,
            // uint *attr, uint *target), as in kernels/opencl/mcl.cl: items j < n read
            // len[j] (n entries) and slots j*K + s < n*K of idx/val (len[j] <= K), write
            // attr[j] / target[j] (n entries each) and read attr[row] with row < n (rows of M
            // are node numbers); mcl_target runs after mcl_attractor on the in-order queue.
            unsafe { args.launch(&self.queue, LaunchDims::linear(n, wg)) }?;
        }
        self.read_all(&target, n, "reading the cluster pointers")
    }
}

impl<T: ClScalar> MarkovCluster<T> for OpenCl {
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

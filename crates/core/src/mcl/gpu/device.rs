//! The device steps of R-MCL ([`MclKernels`]) on any [`Device`], written once: the buffers
//! of [`GpuPlan`], the launches of `kernels/opencl/mcl.cl` (one source for both backends;
//! `kernels/cuda/mcl.cu` compiles it as CUDA) and the read-backs; and [`MarkovCluster`] for
//! every device through the driver [`super::cluster`].

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::fetch::checks::{rows_round_trip, select_round_trip};
use super::fetch::{own_on_host, rows_elsewhere, slot_rows, Csc, Fetch, Span};
use super::pack::{gather_rounds, pack_round_trip, Packing};
use super::{
    GpuPlan, IterationReport, MclKernels, FLAG_BALANCED, FLAG_RIGHT_IS_M, LINEAR_WG, REDUCE_WG,
};
use rayon::prelude::*;

use crate::comm::{Comm, Op, Solo};
use crate::device::{Buf, Device, Geometry, KernelHandle};
use crate::error::Result;
use crate::gpu::KernelList;
use crate::mcl::drive::{LevelRun, Output};
use crate::mcl::mlr::IterationPlan;
use crate::mcl::mlr::Level;
use crate::mcl::ranks::{gather_packed, targets_part, Slots};
use crate::mcl::Variant;
use crate::mcl::{
    Columns, Expansion, FetchTimes, MarkovCluster, MclOptions, MclProgress, Transition,
    TransitionPart,
};
use crate::scalar::Scalar;
use std::time::Instant;

/// The kernels of the `mcl` kernel file, as both backends' kernel tables list them.
pub const KERNELS: KernelList = KernelList::new(
    &[
        "mcl_mass",
        "mcl_penalty",
        "mcl_column_local",
        "mcl_column_global",
        "mcl_reduce",
        "mcl_attractor",
        "mcl_target",
        "mcl_colmass",
        "mcl_regularize",
        "mcl_dpr",
        "mcl_block_sums",
        "mcl_scan_blocks",
        "mcl_pack",
        "mcl_unpack",
        "mcl_mark_rows",
        "mcl_slot_rows",
        "mcl_move_lens",
        "mcl_offsets_at",
        "mcl_list_rows",
        "mcl_route_sel",
        "mcl_column_starts",
    ],
    &[],
);

/// The device buffers of one run; `cur` is the current half of each pair: one process swaps
/// the halves (both `n` columns); over many ranks, half 1 holds this rank's new columns and
/// half 0 all of `M`, gathered into it after every iteration, or, partitioned, this rank's
/// columns and those fetched from other ranks ([`MclKernels::mcl_prepare`]).
pub struct DeviceState<D: Device, T: Scalar> {
    rptr: Buf<D, u64>,
    rrow: Buf<D, u32>,
    rval: Buf<D, T>,
    idx: [Buf<D, u32>; 2],
    val: [Buf<D, T>; 2],
    len: [Buf<D, u32>; 2],
    pen: Buf<D, T>,
    mass: Buf<D, u64>,
    sq: Buf<D, u64>,
    overflow: Buf<D, u32>,
    out_chaos: Buf<D, T>,
    out_entries: Buf<D, u64>,
    g_keys: Buf<D, u32>,
    g_acc: Buf<D, u64>,
    g_crow: Buf<D, u32>,
    g_cy: Buf<D, T>,
    /// MLR-MCL: `M_R` of the iteration, or, once the DPR phase started, `M_G`'s DPR form.
    reg: Buf<D, T>,
    /// MLR-MCL: the column penalties of the balance.
    cpen: Buf<D, T>,
    /// The DPR phase started: the expansion takes `reg`.
    dpr: bool,
    cur: usize,
    /// Over ranks: the packed gathers ([`MclKernels::mcl_publish`]).
    pack: Option<Packing<D, T>>,
    /// Over ranks, partitioned: the routes and buffers of the regularised expansion's fetch
    /// ([`MclKernels::mcl_prepare`]), made at the first one.
    fetch: Option<Fetch<D, T>>,
    /// Partitioned, in an `M·M` iteration: the routes and buffers of its fetch, routed
    /// again every iteration.
    fetch_mm: Option<Fetch<D, T>>,
    /// Partitioned, in an `M·M` iteration: the right operand, this rank's columns with their
    /// rows as local slots, in place of `M_G`.
    mm: Option<Csc<D, T>>,
}

/// A copy of `host`, of one zero when empty (no zero-byte allocations).
fn upload_some<D: Device, P: crate::device::DeviceElem>(
    d: &D,
    host: &[P],
    what: &str,
) -> Result<Buf<D, P>> {
    if host.is_empty() {
        Buf::zeroed(d, 1, what)
    } else {
        Buf::upload(d, host, what)
    }
}

/// `mcl_mass`: the row sums of the current `M` into `mass` (Trident's penalty and MLR-MCL's
/// balance both start from them).
fn launch_mass<T: Scalar, D: Device>(d: &D, s: &DeviceState<D, T>, plan: &GpuPlan) -> Result<()> {
    let cur = s.cur;
    let k_mass = d.kernel::<T>("mcl", "mcl_mass")?;
    let mut args = d.launch(&k_mass);
    let cols = plan.mass_columns();
    args.arg(cols as u64).arg(plan.k as u32);
    args.arg(&s.idx[cur]).arg(&s.val[cur]).arg(&s.len[cur]);
    args.arg(&s.mass);
    // SAFETY: (u64 n, u32 K, const u32 *idx, const T *val, const u32 *len,
    // u64 *mass), as in the kernel files, n = cols (all of M, or this rank's columns, the
    // first of the held ones): items j < cols read len[j] (at least cols entries) and slots
    // j*K + s < cols*K of idx/val (len[j] <= K), and add to mass[row] with row < plan.n
    // (rows of M are node numbers; mass has plan.n entries); items j >= cols do nothing.
    unsafe { args.launch(linear(&k_mass, cols, LINEAR_WG)) }?;
    Ok(())
}

/// MLR-MCL's DPR form of `M_G` into `reg` (`mcl_dpr`).
fn launch_dpr<T: Scalar, D: Device>(
    d: &D,
    s: &DeviceState<D, T>,
    plan: &GpuPlan,
    opts: &MclOptions,
) -> Result<()> {
    {
        let (cur, own, k32) = (s.cur, plan.own as u64, plan.k as u32);
        let k_dpr = d.kernel::<T>("mcl", "mcl_dpr")?;
        let wg = k_dpr.group_limit().min(plan.column_wg);
        let mut args = d.launch(&k_dpr);
        args.arg(own).arg(plan.local_col0() as u64).arg(k32);
        args.real::<T>(opts.dpr_threshold);
        args.arg(&s.rptr).arg(&s.rrow).arg(&s.rval);
        args.arg(&s.idx[cur]).arg(&s.val[cur]).arg(&s.len[cur]);
        args.arg(&s.reg);
        // SAFETY: (u64 n, u64 col0, u32 K, T threshold, const u64 *rptr, const u32 *rrow,
        // const T *src, const u32 *idx, const T *val, const u32 *len, T *dst), as in the
        // kernel files: group i < own reads rptr[i..=i+1] (own + 1 entries) and the M_G
        // entries between them (rrow/src, nnz each), columns col0 + i and rrow[t] of the held
        // M, both < plan.held() (local_col0: col0, or 0 partitioned, where rrow are local
        // slots; slots < held*K, len[j] <= K), and writes dst[t] for the
        // same entries (reg holds nnz entries for the MLR-MCL variant, the only one that
        // starts DPR). Groups of a power-of-two size within the kernel's bound; static local
        // memory only.
        unsafe { args.launch(Geometry::linear(plan.own, wg)) }?;
        Ok(())
    }
}

/// A 1-D launch over `n` items in groups of at most `wg` (and the kernel's limit).
fn linear<K: KernelHandle>(k: &K, n: usize, wg: usize) -> Geometry {
    let wg = k.group_limit().min(wg);
    Geometry::linear(n.div_ceil(wg), wg)
}

impl<T: Scalar, D: Device> MclKernels<T> for D {
    type State = DeviceState<D, T>;

    fn mcl_memory(&self) -> u64 {
        self.query().total_memory
    }

    fn mcl_load(&self) -> Result<()> {
        for root in KERNELS.typed {
            self.kernel::<T>("mcl", root)?;
        }
        Ok(())
    }

    fn mcl_upload(&self, plan: &GpuPlan, tr: &Transition, m0: &Columns<T>) -> Result<Self::State> {
        let (n, own, slots, scratch) = (plan.n, plan.own, plan.slots, plan.scratch);
        let rval = tr.values::<T>();
        let a = "R-MCL buffers";
        let mlr = plan.mlr;
        // Everything the kernels do not upload starts zeroed (mcl_reduce reads val[j*K] of
        // the second half of the pair). Over ranks, this rank's columns of the starting M
        // go to the second half; the first gather (mcl_publish) fills all of M.
        let (idx, val, len) = if plan.partitioned {
            // This rank's columns of the starting M go to the second half, as if an
            // iteration had made them; they and the ghosts arrive in the first half before
            // every iteration (mcl_prepare).
            let (held, k, c0) = (plan.held(), plan.k, plan.col0);
            let (s0, s1) = (c0 * k, (c0 + own) * k);
            (
                [
                    Buf::zeroed(self, (held * k).max(1), a)?,
                    upload_some(self, &m0.idx[s0..s1], a)?,
                ],
                [
                    Buf::zeroed(self, (held * k).max(1), a)?,
                    upload_some(self, &m0.val[s0..s1], a)?,
                ],
                [
                    Buf::zeroed(self, held.max(1), a)?,
                    upload_some(self, &m0.len[c0..c0 + own], a)?,
                ],
            )
        } else if plan.ranks() > 1 {
            let (c0, k) = (plan.col0, plan.k);
            let (s0, s1) = (c0 * k, (c0 + own) * k);
            (
                [
                    Buf::zeroed(self, n * k, a)?,
                    Buf::upload(self, &m0.idx[s0..s1], a)?,
                ],
                [
                    Buf::zeroed(self, n * k, a)?,
                    Buf::upload(self, &m0.val[s0..s1], a)?,
                ],
                [
                    Buf::zeroed(self, n, a)?,
                    Buf::upload(self, &m0.len[c0..c0 + own], a)?,
                ],
            )
        } else {
            (
                [Buf::upload(self, &m0.idx, a)?, Buf::zeroed(self, slots, a)?],
                [Buf::upload(self, &m0.val, a)?, Buf::zeroed(self, slots, a)?],
                [Buf::upload(self, &m0.len, a)?, Buf::zeroed(self, own, a)?],
            )
        };
        let pack = if plan.ranks() > 1 && !plan.partitioned {
            Some(Packing::new(self, plan, a)?)
        } else {
            None
        };
        // Partitioned, M_G's rows are slots of the held M: this rank's columns, then the
        // ghosts.
        let (c0, c1) = (plan.col0, plan.col0 + own);
        let rrow = if plan.partitioned {
            let slots = Slots {
                c0,
                c1,
                ghosts: &plan.ghosts,
            };
            upload_some(
                self,
                &tr.row
                    .par_iter()
                    .map(|&r| slots.slot(r))
                    .collect::<Vec<_>>(),
                a,
            )?
        } else {
            Buf::upload(self, &tr.row, a)?
        };
        Ok(DeviceState {
            rptr: Buf::upload(self, &tr.ptr, a)?,
            rrow,
            rval: Buf::upload(self, &rval, a)?,
            idx,
            val,
            len,
            pen: Buf::upload(self, &vec![T::one(); n], a)?,
            mass: Buf::zeroed(self, n, a)?,
            sq: Buf::zeroed(self, 2 * own, a)?,
            overflow: Buf::zeroed(self, own + 1, a)?,
            out_chaos: Buf::zeroed(self, 2, a)?,
            out_entries: Buf::zeroed(self, 2, a)?,
            g_keys: Buf::zeroed(self, scratch, a)?,
            g_acc: Buf::zeroed(self, scratch, a)?,
            g_crow: Buf::zeroed(self, scratch, a)?,
            g_cy: Buf::zeroed(self, scratch, a)?,
            reg: Buf::zeroed(self, if mlr { tr.row.len().max(1) } else { 1 }, a)?,
            cpen: Buf::zeroed(self, if mlr { plan.held().max(1) } else { 1 }, a)?,
            dpr: false,
            cur: 0,
            pack,
            fetch: None,
            fetch_mm: None,
            mm: None,
        })
    }

    fn mcl_prepare(
        &self,
        c: &dyn Comm,
        st: &mut Self::State,
        plan: &GpuPlan,
        step: &IterationPlan,
        times: &mut FetchTimes,
    ) -> Result<(bool, u64)> {
        if !plan.partitioned {
            return Ok((false, 0));
        }
        let what = "R-MCL: the columns fetched from other ranks";
        let k = plan.k;
        let [held_idx, new_idx] = &mut st.idx;
        let [held_val, new_val] = &mut st.val;
        let [held_len, new_len] = &mut st.len;
        let new = ((&*new_idx, &*new_val), &*new_len);
        // M_G's neighbours, fetched on the device, for the regularised expansion.
        if step.expansion != Expansion::Mcl {
            st.mm = None;
            let f = match &mut st.fetch {
                Some(f) => f,
                none => none.insert(Fetch::new(self, c, plan, &plan.ghosts)?),
            };
            return f.run(self, c, plan, new, ((held_idx, held_val), held_len), times);
        }
        // M·M reads the rows of this rank's columns: those held elsewhere are fetched (on the
        // device too), and its columns, with their rows as held slots, are the right operand.
        let t = Instant::now();
        let marked = rows_elsewhere(self, Span::of(plan), new)?;
        let f = match &mut st.fetch_mm {
            Some(f) => f,
            none => none.insert(Fetch::for_mm(self, c, plan)?),
        };
        f.reroute(self, c, plan, &marked)?;
        let held = plan.own + marked.total;
        if held_idx.len() < held * k {
            // More columns than the regularised expansion's: the held half grows, freed
            // first.
            *held_idx = Buf::zeroed(self, 1, what)?;
            *held_val = Buf::zeroed(self, 1, what)?;
            *held_idx = Buf::zeroed(self, held * k, what)?;
            *held_val = Buf::zeroed(self, held * k, what)?;
        }
        times.route += t.elapsed().as_secs_f64();
        let got = f.run(self, c, plan, new, ((held_idx, held_val), held_len), times)?;
        let t = Instant::now();
        st.mm = Some(slot_rows(self, Span::of(plan), new, &marked, st.mm.take())?);
        times.operand += t.elapsed().as_secs_f64();
        Ok(got)
    }

    fn mcl_iterate(
        &self,
        c: &dyn Comm,
        st: &mut Self::State,
        plan: &GpuPlan,
        opts: &MclOptions,
        step: &IterationPlan,
        flags: u32,
    ) -> Result<IterationReport> {
        let kernel = |root: &str| self.kernel::<T>("mcl", root);
        let (cur, nxt) = (st.cur, 1 - st.cur);
        let (n64, own) = (plan.n as u64, plan.own as u64);
        let k32 = plan.k as u32;
        if step.start_dpr {
            launch_dpr(self, st, plan, opts)?;
            st.dpr = true;
        }
        let masses = step.column_balance || flags & FLAG_BALANCED != 0;
        if plan.partitioned && masses {
            // This rank's columns' share of the rows' masses, summed over the ranks (integer
            // sums: the bits of one process).
            let what = "R-MCL: the rows' masses over the ranks";
            launch_mass(self, st, plan)?;
            // Device to device where the backend can (NCCL), else through the hosts.
            if !self.sum_mem_u64(c, st.mass.mem(), plan.n, what)? {
                let mut mass = st.mass.download(self, what)?;
                c.all_reduce_u64(&mut mass, Op::Sum)?;
                st.mass = Buf::upload(self, &mass, what)?;
            }
        }
        let s = &*st;
        if step.column_balance {
            if !plan.partitioned {
                launch_mass(self, s, plan)?;
            }
            let k_col = kernel("mcl_colmass")?;
            let mut args = self.launch(&k_col);
            let held = plan.held();
            args.arg(held as u64).arg(k32).real::<T>(opts.balance);
            args.arg(&s.idx[cur]).arg(&s.val[cur]).arg(&s.len[cur]);
            args.arg(&s.mass).arg(&s.cpen);
            // SAFETY: (u64 n, u32 K, T b, const u32 *idx, const T *val, const u32 *len,
            // const u64 *mass, T *cpen), n = held (all of M, or partitioned this rank's and
            // its ghosts, as mcl_prepare uploaded them: the regularised expansion's): items
            // y < held read len[y] (held entries), slots y*K + s < held*K of idx/val and
            // mass[row] with row < plan.n, and write cpen[y] (held entries for the MLR-MCL
            // variant, the only one with column balance); items y >= held do nothing.
            unsafe { args.launch(linear(&k_col, held, LINEAR_WG)) }?;
            let k_reg = kernel("mcl_regularize")?;
            let mut args = self.launch(&k_reg);
            args.arg(own)
                .arg(n64)
                .arg(&s.rptr)
                .arg(&s.rrow)
                .arg(&s.rval);
            args.arg(&s.cpen).arg(&s.reg).arg(&s.mass);
            // SAFETY: (u64 n, u64 rows, const u64 *rptr, const u32 *rrow, const T *rval,
            // const T *cpen, T *reg, u64 *mass): items i < own read rptr[i..=i+1] (own + 1
            // entries), the M_G entries between them (rrow/rval, nnz each) and cpen[row]
            // with row < plan.n (n entries), and write reg at the same entries (nnz); items
            // i < rows = plan.n clear mass[i] (n entries). The launch covers
            // max(own, n) = n items; the others do nothing.
            unsafe { args.launch(linear(&k_reg, plan.n.max(plan.own), LINEAR_WG)) }?;
        }
        // The expansion's weights: M_G, or M_R / the DPR form.
        let right = if step.column_balance || s.dpr {
            &s.reg
        } else {
            &s.rval
        };
        if flags & FLAG_BALANCED != 0 {
            if !plan.partitioned {
                launch_mass(self, s, plan)?;
            }
            let k_penalty = kernel("mcl_penalty")?;
            let mut args = self.launch(&k_penalty);
            args.arg(n64)
                .real::<T>(opts.mass_penalty)
                .arg(&s.mass)
                .arg(&s.pen);
            // SAFETY: (u64 n, T b, u64 *mass, T *pen): items i < n touch mass[i] and
            // pen[i], both of n entries; items i >= n do nothing.
            unsafe { args.launch(linear(&k_penalty, plan.n, LINEAR_WG)) }?;
        }
        // Partitioned, M·M takes this rank's columns as M_G's CSC (rows as slots of the held
        // M), not as the held columns of global numbers the flag would read.
        let (rptr, rrow, right, flags) = match &s.mm {
            Some(m) => (&m.ptr, &m.row, &m.val, flags & !FLAG_RIGHT_IS_M),
            None => (&s.rptr, &s.rrow, right, flags),
        };
        let column = |root: &str, groups: usize| -> Result<()> {
            let kern = kernel(root)?;
            let wg = kern.group_limit().min(plan.column_wg);
            let mut args = self.launch(&kern);
            args.arg(own).arg(k32).arg(flags);
            args.real::<T>(opts.inflation)
                .real::<T>(opts.prune_threshold);
            args.arg(rptr).arg(rrow).arg(right);
            args.arg(&s.idx[cur]).arg(&s.val[cur]).arg(&s.len[cur]);
            args.arg(&s.pen);
            args.arg(&s.idx[nxt]).arg(&s.val[nxt]).arg(&s.len[nxt]);
            args.arg(&s.sq).arg(&s.overflow);
            args.arg(&s.g_keys)
                .arg(&s.g_acc)
                .arg(&s.g_crow)
                .arg(&s.g_cy);
            args.arg(plan.region as u64).arg(0u64).arg(plan.lcap as u64);
            args.arg(plan.local_col0() as u64);
            // SAFETY: the 25 parameters of mcl_column_local / mcl_column_global, in order
            // and type (the kernel files), n = own. Column j < own reads rptr[j..=j+1]
            // (own + 1 entries: M_G's, or partitioned in M·M this rank's packed columns) and
            // rrow/rval within them, and column local_col0 + j < held of the held M (in_*;
            // all of M, or partitioned this rank's columns first, then those mcl_prepare
            // fetched); columns k named there (rrow: global, or partitioned slots of the held
            // M; in_idx under RIGHT_IS_M, never set partitioned: node numbers < n = held)
            // are < held, their slots < held*K; it writes slots j*K + r with r < K of the new columns (own*K slots),
            // len[j] (own entries), sq[j] and sq[own + j] (2·own entries) and the overflow
            // list (own + 1 entries: each column is appended at most once per iteration). The global variant's group g uses slots g*region .. +region of
            // the g_* arrays (groups * region each, the plan's scratch), striding over the
            // overflow list, and a column whose candidates do not fit is reported, not
            // processed. Groups of at most plan.column_wg (a power of two within the
            // kernels' launch bounds); static local memory only.
            unsafe { args.launch(Geometry::linear(groups, wg)) }
        };
        column("mcl_column_local", plan.own)?;
        if plan.hubs > 0 {
            column("mcl_column_global", plan.groups)?;
        }
        {
            let k_reduce = kernel("mcl_reduce")?;
            let wg = k_reduce.group_limit().min(REDUCE_WG);
            let mut args = self.launch(&k_reduce);
            args.arg(own)
                .arg(k32)
                .arg(&s.val[nxt])
                .arg(&s.sq)
                .arg(&s.len[nxt]);
            args.arg(&s.overflow).arg(&s.out_chaos).arg(&s.out_entries);
            // SAFETY: (u64 n, u32 K, const T *val, u64 *sq, const u32 *len, u32 *overflow,
            // T *out_chaos, u64 *out_entries), n = own: one group of at most REDUCE_WG
            // (= WG_MAX) items strides over j < own (val[j*K] < own*K, len own entries,
            // sq[j] and sq[own + j] of 2·own) and writes out_chaos[0..2], out_entries[0..2]
            // and overflow[0].
            unsafe { args.launch(Geometry::linear(1, wg)) }?;
        }
        let c = s.out_chaos.download(self, "reading the R-MCL chaos")?;
        let e = s
            .out_entries
            .download(self, "reading the R-MCL entry count")?;
        Ok(IterationReport {
            chaos: Scalar::to_f64(c[0]),
            change: Scalar::to_f64(c[1]),
            entries: e[0],
            sq: e[1],
        })
    }

    fn mcl_publish(
        &self,
        c: &dyn Comm,
        st: &mut Self::State,
        plan: &GpuPlan,
    ) -> Result<(bool, u64)> {
        if plan.partitioned {
            // Partitioned: the new columns stay on the device until the next fetch
            // (mcl_prepare).
            return Ok((false, 0));
        }
        let Some(pk) = st.pack.as_mut() else {
            st.cur = 1 - st.cur;
            return Ok((false, 0));
        };
        // Over ranks half 0 is all of M, half 1 this rank's new columns.
        let [all_idx, own_idx] = &st.idx;
        let [all_val, own_val] = &st.val;
        let [all_len, own_len] = &mut st.len;
        let own = ((own_idx, own_val), &*own_len);
        gather_rounds(self, c, plan, pk, own, ((all_idx, all_val), all_len))
    }

    fn mcl_columns(&self, c: &dyn Comm, st: &Self::State, plan: &GpuPlan) -> Result<Columns<T>> {
        if plan.partitioned {
            let own = own_on_host(self, plan, ((&st.idx[1], &st.val[1]), &st.len[1]))?;
            return gather_packed(c, &own, plan.n, plan.k);
        }
        let cur = st.cur;
        let what = "reading R-MCL's M";
        let idx = st.idx[cur].download(self, what)?;
        let val = st.val[cur].download(self, what)?;
        let len = st.len[cur].download(self, what)?;
        let n = len.len();
        Ok(Columns {
            n,
            k: idx.len().checked_div(n).unwrap_or(0),
            idx,
            val,
            len,
        })
    }

    fn mcl_targets(
        &self,
        c: &dyn Comm,
        st: &Self::State,
        plan: &GpuPlan,
        opts: &MclOptions,
    ) -> Result<Vec<u32>> {
        if plan.partitioned {
            let own = own_on_host(self, plan, ((&st.idx[1], &st.val[1]), &st.len[1]))?;
            return targets_part(c, &own, plan.col0, opts);
        }
        let n = plan.n;
        let a = "R-MCL interpretation";
        // MLR-MCL: every row counts as an attractor, so the target is the largest entry.
        let (attr, roots): (Buf<D, u32>, &[&str]) = match opts.variant {
            Variant::Trident => (Buf::zeroed(self, n, a)?, &["mcl_attractor", "mcl_target"]),
            Variant::MlrMcl => (Buf::upload(self, &vec![1u32; n], a)?, &["mcl_target"]),
        };
        let target = Buf::<D, u32>::zeroed(self, n, a)?;
        let (cur, n64, k32) = (st.cur, n as u64, plan.k as u32);
        for &root in roots {
            let k = self.kernel::<T>("mcl", root)?;
            let mut args = self.launch(&k);
            args.arg(n64).arg(k32);
            args.arg(&st.idx[cur]).arg(&st.val[cur]).arg(&st.len[cur]);
            args.arg(&attr).arg(&target);
            // SAFETY: (u64 n, u32 K, const u32 *idx, const T *val, const u32 *len,
            // u32 *attr, u32 *target), as in the kernel files: items j < n read len[j]
            // (n entries) and slots j*K + s < n*K of idx/val (len[j] <= K), write attr[j] /
            // target[j] (n entries each) and read attr[row] with row < n (rows of M are node
            // numbers); mcl_target runs after mcl_attractor on the in-order queue.
            unsafe { args.launch(linear(&k, n, LINEAR_WG)) }?;
        }
        target.download(self, "reading the R-MCL targets")
    }
}

impl<T: Scalar, D: Device> MarkovCluster<T> for D {
    fn cluster_level(
        &self,
        tr: &Transition,
        m0: Columns<T>,
        opts: &MclOptions,
        level: Level,
        output: Output,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<LevelRun<T>> {
        super::cluster_level::<T, Self>(
            self,
            &Solo,
            (tr, &[0, tr.n]),
            m0,
            opts,
            level,
            output,
            progress,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn cluster_level_ranks(
        &self,
        c: &dyn Comm,
        part: &TransitionPart,
        m0: Columns<T>,
        opts: &MclOptions,
        level: Level,
        output: Output,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<LevelRun<T>> {
        super::cluster_level::<T, Self>(
            self,
            c,
            (&part.own, &part.splits),
            m0,
            opts,
            level,
            output,
            progress,
        )
    }

    fn load_kernels(&self) -> Result<()> {
        <Self as MclKernels<T>>::mcl_load(self)
    }

    fn pack_round_trip(&self, m: &Columns<T>) -> Option<Result<Columns<T>>> {
        // The windows of the replicated gathers, then the partitioned fetch's selections and
        // its M·M rows.
        Some(pack_round_trip(self, m).and_then(|got| {
            select_round_trip(self, m)?;
            rows_round_trip(self, m)?;
            Ok(got)
        }))
    }
}

//! R-MCL on a GPU: the host side that the CUDA and OpenCL backends share. [`GpuPlan`] sizes
//! the device buffers (the hub-column scratch and the device-memory estimate, refused up
//! front with the bytes needed); [`MclKernels`] are the device steps (upload, one iteration on
//! the device, the read-back of each node's cluster pointer), written once for every
//! [`Device`](crate::device::Device) in `gpu/device.rs` ([`DeviceState`]); [`cluster`](crate::mcl::drive::cluster) is the
//! one driver loop (stop rule, the expansion of each iteration, progress, phase times,
//! interpretation) every GPU backend runs.
//!
//! The kernels (`kernels/opencl/mcl.cl`, one source for both backends, compiled as CUDA by
//! `kernels/cuda/mcl.cu`) are described at the top of that file; per iteration a backend
//! enqueues, without waiting, `mcl_mass` and `mcl_penalty` (balanced iterations only),
//! `mcl_column_local` over all `n` columns, `mcl_column_global` over the columns that
//! spilled out of the local hash table (when [`GpuPlan::hubs`] > 0: [`GpuPlan::groups`]
//! work-groups stride over the overflow list), and `mcl_reduce`, then reads back the chaos,
//! the change and the entry count: the loop stays on the device.

use std::time::Instant;

mod device;
mod fetch;
mod pack;
pub use device::{DeviceState, KERNELS};

use rayon::prelude::*;

use super::drive::{LevelRun, Output};
use super::mlr::{IterationPlan, Level, Schedule};
use super::{Columns, Expansion, FetchTimes, MclOptions, MclProgress, MclTimings, Transition};
use crate::backend::Backend;
use crate::comm::{Comm, Layout, Op};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Largest hash table per work-group in local (shared) memory, in slots: `LCAP` of the
/// kernel files. [`MclOptions::local_table`] can lower it (a power of two of at least
/// [`MIN_LOCAL_TABLE`]), so that tests on small graphs exercise the global-memory path of hub
/// columns.
pub const LCAP: usize = 2048;
/// Smallest [`MclOptions::local_table`].
pub const MIN_LOCAL_TABLE: usize = 4;
/// Work-items per column work-group (a power of two within the kernels' launch bounds; see
/// [`MclOptions::column_wg`]): the fastest in the benchmark's work-group sweep
/// (`benches/results/mcl.md` and its history).
pub const COLUMN_WG: usize = 256;
/// Smallest and largest [`MclOptions::column_wg`].
pub const COLUMN_WG_RANGE: (usize, usize) = (32, 1024);
/// Work-items of the one `mcl_reduce` work-group (`WG_MAX` of the kernel files).
pub const REDUCE_WG: usize = 1024;
/// Work-items per work-group of `mcl_mass` / `mcl_penalty`.
pub const LINEAR_WG: usize = 256;
/// Columns per work-group of the packing kernels of the gathers between ranks (`PACK_WG`
/// of the kernel file): their launches take exactly this many work-items.
pub const PACK_WG: usize = 256;
/// Packed entries per round of the gather of `M` between replicating ranks (default of
/// [`MclOptions::gather_round`]): a rank holds two buffers of at most this many entries (its
/// part of the round, and the round) instead of every rank's packed columns, so that a
/// replicated `M` of nearly a device's memory can still be gathered.
pub const GATHER_ROUND: usize = 1 << 28;
/// Upper bound on the bytes of the global scratch of the hub-column path.
pub const SCRATCH_BUDGET: usize = 1 << 30;
/// Most work-groups of the hub-column pass (few columns spill now that a column over half
/// the local table tries it first, so a small pass with a small scratch suffices).
pub const MAX_HUB_GROUPS: usize = 256;

/// Kernel flag: the right operand of the expansion is `M` itself (plain MCL).
pub const FLAG_RIGHT_IS_M: u32 = 1;
/// Kernel flag: multiply row `i` of the product by `pen[i]` (the balance penalty).
pub const FLAG_BALANCED: u32 = 2;
/// Kernel flag: inflation 2 as `x·x`.
pub const FLAG_SQUARE: u32 = 4;
/// Kernel flag: MLR-MCL's pruning cut ([`super::mlr::prune_cut`]).
pub const FLAG_PRUNE_MLR: u32 = 8;
/// Kernel flag: the change is the squared L2 distance ([`super::mlr::column_change_sq`]).
pub const FLAG_CHANGE_L2: u32 = 16;

/// Device buffer sizes of one R-MCL run (see the module docs): of one process, or of one rank
/// of many, which computes the columns `col0 .. col0 + own` and holds all of `M`
/// ([`Layout::Replicate`]) or its columns and `ghosts` ([`Layout::Partition`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuPlan {
    /// Nodes (columns of `M`, rows of every column).
    pub n: usize,
    /// The first column this process computes (0 for one process).
    pub col0: usize,
    /// Columns this process computes (`n` for one process).
    pub own: usize,
    /// Every rank's first column and the end: `[0, n]` for one process.
    pub splits: Vec<usize>,
    /// `K`, entries per column.
    pub k: usize,
    /// Local hash table slots in use (`≤ LCAP`).
    pub lcap: usize,
    /// Columns whose candidate products may exceed half the local table in some iteration
    /// (0: the global pass is never launched). Such a column still tries the local table
    /// and spills to the global pass only when its distinct rows do not fit.
    pub hubs: usize,
    /// Slots of one work-group's global scratch region (a power of two ≥ twice the largest
    /// candidate count; 1 when there are no hubs).
    pub region: usize,
    /// Work-groups of the global pass.
    pub groups: usize,
    /// `groups · region`: slots of each global scratch array.
    pub scratch: usize,
    /// `own · K`: slots of the new columns (the half of `M` each iteration writes).
    pub slots: usize,
    /// Device memory of all buffers, in bytes.
    pub bytes: u64,
    /// Work-items per column work-group ([`MclOptions::column_wg`], default [`COLUMN_WG`]).
    pub column_wg: usize,
    /// The MLR-MCL variant's buffers (`M_R`, column penalties) are allocated.
    pub mlr: bool,
    /// Over ranks, [`Layout::Partition`]: the device holds this rank's columns of `M` (local
    /// slots `0..own`) and the columns its expansion reads from other ranks after them,
    /// fetched before every iteration; `M_G`'s rows are local slots.
    pub partitioned: bool,
    /// With [`GpuPlan::partitioned`]: `M_G`'s neighbours of this rank's columns held by other
    /// ranks (sorted), the columns of `M` the regularised expansion fetches (the `M·M`
    /// expansion fetches the rows of this rank's columns instead).
    pub ghosts: Vec<u32>,
    /// Partitioned: entries per column the packed exchange buffers start with (this rank's
    /// mean `M_G` column, at most `K`); they grow when an iteration has more.
    pub mean: usize,
    /// Replicated over ranks: packed entries per round of the gather of `M`
    /// ([`MclOptions::gather_round`], at most `n·K`, at least one per rank).
    pub round: usize,
}

impl GpuPlan {
    /// Plans a run on `tr` with `opts` for elements of `scalar_size` bytes, a local table of
    /// `lcap` slots and a device of `total_memory` bytes (named `device` in the error,
    /// `backend` the error's backend). A run that does not fit is
    /// [`Error::OutOfMemory`], naming the bytes needed.
    pub fn new(
        tr: &Transition,
        opts: &MclOptions,
        lcap: usize,
        scalar_size: usize,
        total_memory: u64,
        backend: &'static str,
        device: &str,
    ) -> Result<Self> {
        let splits = vec![0, tr.n];
        Self::part(
            tr,
            (&splits, 0, Layout::Replicate),
            opts,
            lcap,
            scalar_size,
            (total_memory, backend, device),
        )
    }

    /// Plans rank `rank`'s part of a run over `splits.len() - 1` ranks: `tr` holds the
    /// columns `splits[rank]..splits[rank + 1]` of `M_G` (rows global); the device holds all
    /// `splits[last]` columns of `M` besides ([`Layout::Replicate`], or [`Layout::Auto`]), or
    /// the columns the expansion reads from other ranks ([`Layout::Partition`]). See
    /// [`GpuPlan::new`].
    pub fn part(
        tr: &Transition,
        (splits, rank, layout): (&[usize], usize, Layout),
        opts: &MclOptions,
        lcap: usize,
        scalar_size: usize,
        (total_memory, backend, device): (u64, &'static str, &str),
    ) -> Result<Self> {
        let n = *splits.last().expect("at least one boundary");
        let col0 = splits[rank];
        let own = splits[rank + 1] - col0;
        debug_assert_eq!(own, tr.n);
        let k = opts.max_per_column;
        let oom = |message: String| Error::out_of_memory(backend, message);
        // A column of M·M_G combines deg(j)+1 columns of at most K entries; one of M·M
        // combines at most K columns of at most K.
        let regularized = opts.expansion == Expansion::Regularized;
        let finishes = opts.expansion == Expansion::Mcl || opts.finish_after > 0;
        let bound = |j: usize| -> usize {
            let r = if regularized {
                (tr.ptr[j + 1] - tr.ptr[j]) as usize * k
            } else {
                0
            };
            if finishes {
                r.max(k * k)
            } else {
                r
            }
        };
        // The hub count and the largest bound, in one parallel pass.
        let (hubs, max_bound) = (0..own)
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(|j| {
                let b = bound(j);
                (usize::from(2 * b > lcap), b)
            })
            .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1.max(y.1)));
        let max_bound = max_bound.max(1);
        let region = if hubs == 0 {
            1
        } else {
            (2 * max_bound)
                .checked_next_power_of_two()
                .ok_or_else(|| oom(format!("R-MCL hub scratch of {max_bound} candidates")))?
        };
        let slot_bytes = 4 + 8 + 4 + scalar_size;
        let groups = hubs
            .min(MAX_HUB_GROUPS)
            .min((SCRATCH_BUDGET / (region * slot_bytes)).max(1))
            .max(1);
        let scratch = groups
            .checked_mul(region)
            .ok_or_else(|| oom(format!("R-MCL hub scratch: {groups} × {region} slots")))?;
        let slots = own
            .checked_mul(k)
            .ok_or_else(|| oom(format!("R-MCL: {own} nodes × K = {k} slots")))?;
        let partitioned = splits.len() > 2 && layout == Layout::Partition;
        let ghosts = if partitioned {
            super::ranks::neighbours_elsewhere(tr, (col0, col0 + own))
        } else {
            Vec::new()
        };
        let held = if partitioned { own + ghosts.len() } else { n };
        // Every buffer, before allocating any: the held columns of M and the new columns
        // (idx, val, len), pen and mass (n), sq (2 · own), the overflow list (own + 1), the
        // columns' M_G (ptr, row, val) and the scratch; attr and target (n each) of the
        // interpretation after the loop.
        let (t, nn, no, nh) = (scalar_size as u128, n as u128, own as u128, held as u128);
        let s = (nh + no) * k as u128;
        // MLR-MCL: M_R / the DPR form of M_G (nnz) and the column penalties (held columns).
        let mlr = if opts.variant == super::Variant::MlrMcl {
            tr.row.len() as u128 * t + nh * t
        } else {
            0
        };
        // Partitioned, the fetched packed entries are counted at the starting M's: this
        // rank's mean M_G column, at most K, for every held column; a later iteration that
        // needs more and finds no memory is an out-of-memory error. Replicated, the gather's
        // round buffers are counted whole.
        let mean = tr.row.len().div_ceil(own.max(1)).clamp(1, k.max(1));
        // At least one entry of every rank a round, at most all of M.
        let round = opts
            .gather_round
            .unwrap_or(GATHER_ROUND)
            .min(n.saturating_mul(k))
            .max(splits.len() - 1);
        let packing = if partitioned {
            // The fetch's packed entries: those sent (this rank's columns, and those others
            // ask for, counted as many as it asks for itself) and those received (the held
            // columns), the selections and lengths of both and their block offsets.
            2 * nh * mean as u128 * (4 + t) + 4 * nh * 4 + (2 * nh / PACK_WG as u128 + 5) * 8
        } else if splits.len() > 2 {
            // Over ranks, replicated: one round's packed entries (this rank's share, and
            // every rank's) and the block offsets.
            let r = round as u128;
            let share = (r / (splits.len() as u128 - 1)).max(1);
            (share.min(no * k as u128) + r) * (4 + t) + ((nn + no) / PACK_WG as u128 + 3) * 8
        } else {
            0
        };
        let need = s * (4 + t)
            + (nh + no) * 4
            + nn * (t + 8 + 8)
            + no * (16 + 4)
            + (no + 1) * 8
            + tr.row.len() as u128 * (4 + t)
            + scratch as u128 * slot_bytes as u128
            + mlr
            + packing;
        let have = u128::from(total_memory);
        if need > have {
            return Err(oom(format!(
                "R-MCL on {n} nodes with K = {k} needs {need} bytes ({:.2} GiB) of device \
                 memory{}, {device} has {have} ({:.2} GiB); lower --max-per-column{}",
                need as f64 / (1u64 << 30) as f64,
                if partitioned {
                    format!(" for {own} columns and {} fetched", ghosts.len())
                } else {
                    String::new()
                },
                have as f64 / (1u64 << 30) as f64,
                if splits.len() > 2 && !partitioned {
                    ", use --layout partition (each rank holds its columns and those it reads) \
                     or the CPU"
                } else if partitioned {
                    ", use more ranks or the CPU"
                } else {
                    ", run over more GPUs (mpirun) or use the CPU"
                }
            )));
        }
        Ok(Self {
            n,
            col0,
            own,
            splits: splits.to_vec(),
            k,
            lcap,
            hubs,
            region,
            groups,
            scratch,
            slots,
            bytes: need as u64,
            column_wg: opts.column_wg.unwrap_or(COLUMN_WG),
            mlr: opts.variant == super::Variant::MlrMcl,
            partitioned,
            ghosts,
            mean,
            round,
        })
    }
}

impl GpuPlan {
    /// Ranks of the run (1: one process).
    pub fn ranks(&self) -> usize {
        self.splits.len() - 1
    }

    /// Columns of `M` the device holds (the input half): `n`, or, partitioned, this rank's
    /// and its ghosts.
    pub fn held(&self) -> usize {
        if self.partitioned {
            self.own + self.ghosts.len()
        } else {
            self.n
        }
    }

    /// Replicated over ranks: packed entries each rank sends in a round of the gather of `M`
    /// (its share of [`GpuPlan::round`], at least one).
    pub fn share(&self) -> usize {
        (self.round / self.ranks()).max(1)
    }

    /// Where this rank's first column sits in the held `M`: `col0`, or 0 when partitioned.
    pub fn local_col0(&self) -> usize {
        if self.partitioned {
            0
        } else {
            self.col0
        }
    }

    /// The held columns whose entries make the rows' masses: all of `M`, or, partitioned,
    /// this rank's (the masses are then summed over the ranks).
    pub fn mass_columns(&self) -> usize {
        if self.partitioned {
            self.own
        } else {
            self.n
        }
    }
}

/// The kernel flags of an iteration ([`IterationPlan`]).
pub fn flags(opts: &MclOptions, plan: &IterationPlan) -> u32 {
    let mut f = 0;
    if plan.expansion == Expansion::Mcl {
        f |= FLAG_RIGHT_IS_M;
    }
    if plan.row_penalty {
        f |= FLAG_BALANCED;
    }
    if opts.inflation == 2.0 {
        f |= FLAG_SQUARE;
    }
    if opts.variant == super::Variant::MlrMcl {
        f |= FLAG_PRUNE_MLR | FLAG_CHANGE_L2;
    }
    f
}

/// What one device iteration reports (read back from `mcl_reduce`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationReport {
    /// Global chaos; NaN when a hub column did not fit its scratch region (a bug).
    pub chaos: f64,
    /// Largest column L1 change.
    pub change: f64,
    /// Entries of `M` after the iteration.
    pub entries: u64,
    /// Total squared column change, fixed point at 2^32 ([`super::mlr::Schedule::record`]).
    pub sq: u64,
}

/// The device steps of the R-MCL driver [`cluster`](crate::mcl::drive::cluster).
pub trait MclKernels<T: Scalar>: Backend {
    /// The device buffers of one run (`M` twice, `M_G`, penalties, scratch) and which half
    /// of `M` is current.
    type State;

    /// Device memory in bytes (the plan refuses larger runs up front).
    fn mcl_memory(&self) -> u64;
    /// Loads (or builds) the R-MCL kernels, so that neither a build error nor the build time
    /// lands in the transfers or the iterations.
    fn mcl_load(&self) -> Result<()>;
    /// Allocates the buffers of `plan` and uploads `M_G`'s columns of this process (`tr`,
    /// [`GpuPlan::own`] columns) and the starting `M` (all of it).
    fn mcl_upload(&self, plan: &GpuPlan, tr: &Transition, m0: &Columns<T>) -> Result<Self::State>;
    /// Over ranks with [`GpuPlan::partitioned`], before every iteration: fetches the columns
    /// of `M` that `step`'s expansion reads from the ranks holding them ([`GpuPlan::ghosts`],
    /// or the rows of this rank's columns for `M·M`) and places them after this rank's
    /// columns. Returns whether they went device to device (NCCL), and the bytes received;
    /// `(false, 0)` and nothing done otherwise. The host's time is added to `times`.
    fn mcl_prepare(
        &self,
        c: &dyn Comm,
        st: &mut Self::State,
        plan: &GpuPlan,
        step: &IterationPlan,
        times: &mut FetchTimes,
    ) -> Result<(bool, u64)>;
    /// One iteration as `step` says, with kernel `flags` ([`flags`]): MLR-MCL's DPR form of
    /// `M_G` when [`IterationPlan::start_dpr`], its balance (`M_R`) when
    /// [`IterationPlan::column_balance`], Trident's mass penalty when [`FLAG_BALANCED`], the
    /// column passes, the reduction over this process's columns; returns the read-back
    /// scalars ([`MclKernels::mcl_publish`] then makes the new columns current). The rows'
    /// masses are summed over the ranks of `c` when partitioned.
    fn mcl_iterate(
        &self,
        c: &dyn Comm,
        st: &mut Self::State,
        plan: &GpuPlan,
        opts: &MclOptions,
        step: &IterationPlan,
        flags: u32,
    ) -> Result<IterationReport>;
    /// Makes the columns the last iteration computed current: one process swaps the halves
    /// of `M`; the ranks of `c` gather every rank's new columns into all of `M`, device to
    /// device where the backend can ([`crate::device::Device::gather_mem`]: NCCL), else
    /// through the hosts; partitioned, each rank reads its new columns back (packed), for
    /// [`MclKernels::mcl_prepare`] to send. Every rank calls it after every iteration.
    /// Returns whether the gather went device to device, and the bytes this rank received.
    fn mcl_publish(
        &self,
        c: &dyn Comm,
        st: &mut Self::State,
        plan: &GpuPlan,
    ) -> Result<(bool, u64)>;
    /// Each node's pointer of the current `M` ([`super::drive::level_targets`], computed on
    /// the device by `mcl_attractor` (Trident's variant) and `mcl_target`), read back: `n`
    /// numbers instead of `M`'s `n·K` entries (waits for pending work). Partitioned, each
    /// rank's on the host, gathered over the ranks of `c`.
    fn mcl_targets(
        &self,
        c: &dyn Comm,
        st: &Self::State,
        plan: &GpuPlan,
        opts: &MclOptions,
    ) -> Result<Vec<u32>>;
    /// The current `M`, read back (a coarse level's flow, projected on the host); gathered
    /// over the ranks of `c` when partitioned.
    fn mcl_columns(&self, c: &dyn Comm, st: &Self::State, plan: &GpuPlan) -> Result<Columns<T>>;
}

/// One level of R-MCL on a GPU backend over the ranks of `c` (its
/// [`super::MarkovCluster::cluster_level`] with [`crate::comm::Solo`] and `[0, n]`, and
/// [`super::MarkovCluster::cluster_level_ranks`]): each rank computes its block of columns
/// (`own`, of `M_G`; every rank's first column in `splits`, cut at about equal `M_G` entries by
/// [`Transition::column_splits`]) and holds all of `M`, gathered
/// after every iteration ([`MclKernels::mcl_publish`]); the chaos, change and counts are
/// reduced over the ranks. Plans device memory (refused up front with the bytes needed),
/// uploads, iterates on the device as [`Schedule`] says, and reads back the pointers or `M`
/// (every rank: the same). Each column's bits depend only on `M` and its `M_G` column, and
/// the reductions are maxima and integer sums, so every rank count gives one process's run.
#[allow(clippy::too_many_arguments)]
pub fn cluster_level<T: Scalar, B: MclKernels<T>>(
    b: &B,
    c: &dyn Comm,
    (own, splits): (&Transition, &[usize]),
    m0: Columns<T>,
    opts: &MclOptions,
    level: Level,
    output: Output,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<LevelRun<T>> {
    let (p, rank) = (c.size(), c.rank());
    super::ranks::check_part(c, splits, own)?;
    let plan_as = |layout: Layout| {
        GpuPlan::part(
            own,
            (splits, rank, layout),
            opts,
            opts.local_table.unwrap_or(LCAP),
            std::mem::size_of::<T>(),
            (b.mcl_memory(), b.name(), &b.device()),
        )
    };
    let mut plan = plan_as(opts.layout);
    if p > 1 && opts.layout == Layout::Auto {
        // All of M on every device where it fits every rank's, else partitioned.
        let mut short = [u64::from(matches!(plan, Err(Error::OutOfMemory { .. })))];
        c.all_reduce_u64(&mut short, Op::Max)?;
        if short[0] != 0 {
            plan = plan_as(Layout::Partition);
        }
    }
    // A rank that cannot plan (out of memory) fails the level on every rank; the others
    // name it (the last that failed) and leave its error to it.
    let mut failed = [if plan.is_err() { rank as u64 + 1 } else { 0 }];
    c.all_reduce_u64(&mut failed, Op::Max)?;
    let plan = match plan {
        Err(e) => return Err(e),
        Ok(_) if failed[0] != 0 => {
            return Err(Error::other_rank(
                failed[0] as usize - 1,
                "R-MCL could not plan its device memory",
            ))
        }
        Ok(plan) => plan,
    };
    b.mcl_load()?;
    let mut timings = MclTimings::default();
    let t = Instant::now();
    let mut st = b.mcl_upload(&plan, own, &m0)?;
    timings.partitioned = plan.partitioned;
    if p > 1 && !plan.partitioned {
        // Every rank uploaded its columns of the starting M: gathered into all of M.
        b.mcl_publish(c, &mut st, &plan)?;
    }
    // The starting M lives on the device now: its host copy (n·K entries, over a GiB at a
    // million nodes, whose pages take the OS a tenth of a second to take back) is freed on a
    // thread of its own while the device iterates.
    let freeing = std::thread::spawn(move || drop(m0));
    b.synchronize()?;
    timings.upload = t.elapsed().as_secs_f64();

    let start = Instant::now();
    let mut sched = Schedule::new(opts, level);
    let stop = loop {
        let step = match sched.plan_next() {
            Ok(s) => s,
            Err(reason) => break reason,
        };
        if plan.partitioned {
            // The columns this iteration reads from other ranks, fetched (timed with the
            // gathers: the ranks' exchange of M).
            let t = Instant::now();
            let (device, received) = b.mcl_prepare(c, &mut st, &plan, &step, &mut timings.fetch)?;
            timings.gather_device |= device;
            timings.gather_bytes += received;
            timings.gather += t.elapsed().as_secs_f64();
        }
        let mut r = b.mcl_iterate(c, &mut st, &plan, opts, &step, flags(opts, &step))?;
        if p > 1 {
            // The gather timed on its own (the iteration's kernels finished at the read-back).
            let t = Instant::now();
            let (device, received) = b.mcl_publish(c, &mut st, &plan)?;
            b.synchronize()?;
            timings.gather_device |= device;
            timings.gather += t.elapsed().as_secs_f64();
            timings.gather_bytes += received;
        } else {
            b.mcl_publish(c, &mut st, &plan)?;
        }
        if p > 1 {
            // Maxima of non-negative floats (and NaN, the bug flag) are maxima of their bits
            // (+ 0.0 turns a -0 into +0); the sums are integers.
            let mut maxes = [(r.chaos + 0.0).to_bits(), (r.change + 0.0).to_bits()];
            c.all_reduce_u64(&mut maxes, Op::Max)?;
            let mut sums = [r.entries, r.sq];
            c.all_reduce_u64(&mut sums, Op::Sum)?;
            r = IterationReport {
                chaos: f64::from_bits(maxes[0]),
                change: f64::from_bits(maxes[1]),
                entries: sums[0],
                sq: sums[1],
            };
        }
        if r.chaos.is_nan() {
            return Err(Error::backend(
                b.name(),
                "R-MCL: a hub column exceeded its scratch region (a bug)",
            ));
        }
        sched.record(plan.n, r.chaos, r.change, r.sq);
        progress(&MclProgress {
            iteration: sched.iterations,
            level: 0,
            chaos: sched.chaos,
            change: sched.change,
            entries: r.entries,
            seconds: start.elapsed().as_secs_f64(),
        });
    };
    timings.iterate = start.elapsed().as_secs_f64();
    let t = Instant::now();
    let (m, targets) = match output {
        Output::Targets => (None, b.mcl_targets(c, &st, &plan, opts)?),
        Output::Flow => (Some(b.mcl_columns(c, &st, &plan)?), Vec::new()),
    };
    drop(st);
    timings.download = t.elapsed().as_secs_f64();
    let _ = freeing.join();
    Ok(LevelRun {
        m,
        targets,
        iterations: sched.iterations,
        chaos: sched.chaos,
        change: sched.change,
        stop,
        timings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Graph;

    fn star(leaves: usize) -> Transition {
        let g = Graph::from_edges(leaves + 1, (1..=leaves).map(|i| (0, i))).unwrap();
        Transition::new(&g, &MclOptions::default()).unwrap()
    }

    #[test]
    fn hubs_and_regions_follow_the_degrees() {
        // R-MCL only (no finishing phase): the centre of a 40-leaf star has 41 columns of
        // K = 8 to combine (328 candidates, > 512 / 2): the only hub.
        let opts = MclOptions {
            max_per_column: 8,
            finish_after: 0,
            ..MclOptions::default()
        };
        let tr = star(40);
        let p = GpuPlan::new(&tr, &opts, 512, 8, 1 << 40, "test", "dev").unwrap();
        assert_eq!((p.n, p.k, p.hubs, p.slots), (41, 8, 1, 41 * 8));
        assert_eq!(p.region, 1024);
        assert_eq!(p.groups, 1);
        assert_eq!(p.scratch, 1024);
        // A large table: no hubs, a one-slot region.
        let p = GpuPlan::new(&tr, &opts, 2048, 8, 1 << 40, "test", "dev").unwrap();
        assert_eq!((p.hubs, p.region, p.scratch), (0, 1, 1));
        // With the M·M finish every column may combine K columns of K: K = 33 gives 1089
        // candidates, twice that exceeds 2048 for every column.
        let fin = MclOptions {
            max_per_column: 33,
            ..MclOptions::default()
        };
        let p = GpuPlan::new(&tr, &fin, 2048, 8, 1 << 40, "test", "dev").unwrap();
        assert_eq!(p.hubs, 41);
        assert_eq!(p.region, (2 * 41 * 33usize).next_power_of_two());
        assert_eq!(p.groups, 41);
    }

    #[test]
    fn memory_estimate_counts_every_buffer_and_names_the_need() {
        let opts = MclOptions {
            max_per_column: 8,
            finish_after: 0,
            ..MclOptions::default()
        };
        let tr = star(3); // 4 nodes, 3 + 3 + 4 = 10 entries in M_G, no hubs.
        let p = GpuPlan::new(&tr, &opts, 2048, 8, 1 << 40, "test", "dev").unwrap();
        let want = 2 * 32 * 12 + 4 * (8 + 8 + 8 + 16 + 4 + 8) + 5 * 8 + 10 * 12 + 24;
        assert_eq!(p.bytes, want);
        // One byte short: a clear error that says how much was needed.
        let e = GpuPlan::new(&tr, &opts, 2048, 8, want - 1, "test", "the test device").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
        assert!(msg.contains(&format!("needs {want} bytes")), "{msg}");
        assert!(msg.contains("the test device"), "{msg}");
        assert!(GpuPlan::new(&tr, &opts, 2048, 8, want, "test", "dev").is_ok());
    }

    #[test]
    fn a_partitioned_rank_holds_its_columns_and_their_neighbours() {
        use crate::mcl::TransitionPart;
        // A path of 40 nodes over 2 ranks: each holds its 20 columns and the one neighbour
        // across the cut, where replicated each holds all 40.
        let g = Graph::from_edges(40, (0..39).map(|i| (i, i + 1))).unwrap();
        let opts = MclOptions {
            max_per_column: 8,
            finish_after: 0,
            ..MclOptions::default()
        };
        let tr = Transition::new(&g, &opts).unwrap();
        for rank in 0..2 {
            let part = TransitionPart::of(tr.clone(), 2, rank);
            let plan = |layout, mem| {
                GpuPlan::part(
                    &part.own,
                    (&part.splits, rank, layout),
                    &opts,
                    2048,
                    8,
                    (mem, "test", "dev"),
                )
            };
            let rep = plan(Layout::Replicate, 1 << 40).unwrap();
            let par = plan(Layout::Partition, 1 << 40).unwrap();
            let cut = part.splits[1];
            assert_eq!(cut, 20);
            assert!(!rep.partitioned && rep.ghosts.is_empty() && rep.held() == 40);
            let across = if rank == 0 {
                cut as u32
            } else {
                cut as u32 - 1
            };
            assert!(par.partitioned);
            assert_eq!(par.ghosts, vec![across]);
            assert_eq!(
                (par.held(), par.local_col0(), par.mass_columns()),
                (21, 0, 20)
            );
            assert_eq!(
                (rep.local_col0(), rep.mass_columns()),
                (part.splits[rank], 40)
            );
            assert!(par.bytes < rep.bytes, "{} !< {}", par.bytes, rep.bytes);
            // A device between the two: replicated is refused (naming the layout that fits),
            // partitioned fits; Auto plans replicated (cluster_level falls back).
            let e = plan(Layout::Replicate, par.bytes).unwrap_err();
            assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
            assert!(e.to_string().contains("--layout partition"), "{e}");
            assert_eq!(plan(Layout::Partition, par.bytes).unwrap(), par);
            assert!(plan(Layout::Auto, 1 << 40).unwrap() == rep);
            // One process ignores the layout.
            let one = GpuPlan::part(
                &tr,
                (&[0, 40], 0, Layout::Partition),
                &opts,
                2048,
                8,
                (1 << 40, "test", "dev"),
            )
            .unwrap();
            assert!(!one.partitioned && one.held() == 40);
        }
    }

    #[test]
    fn replicated_gathers_go_in_rounds_of_every_ranks_share() {
        use crate::mcl::TransitionPart;
        // A path of 40 nodes over 4 ranks, K = 8: all of M is 320 slots.
        let g = Graph::from_edges(40, (0..39).map(|i| (i, i + 1))).unwrap();
        let base = MclOptions {
            max_per_column: 8,
            ..MclOptions::default()
        };
        let tr = Transition::new(&g, &base).unwrap();
        let part = TransitionPart::of(tr, 4, 1);
        let plan = |round: Option<usize>| {
            let opts = MclOptions {
                gather_round: round,
                ..base.clone()
            };
            let splits = (&part.splits[..], 1, Layout::Replicate);
            GpuPlan::part(&part.own, splits, &opts, 2048, 8, (1 << 40, "t", "d")).unwrap()
        };
        // (asked, round, share): all of M at most, one entry of every rank at least.
        for (asked, round, share) in [
            (None, 320, 80),
            (Some(1000), 320, 80),
            (Some(100), 100, 25),
            (Some(7), 7, 1),
            (Some(1), 4, 1),
        ] {
            let p = plan(asked);
            assert_eq!((p.round, p.share()), (round, share), "{asked:?}");
            assert!(p.share() * p.ranks() <= p.round);
        }
        // Smaller rounds, smaller buffers: the round (320 against 7 entries) and this rank's
        // share (80, or its own entries if fewer, against 1), 12 bytes an entry.
        let own_slots = plan(None).own as u64 * 8;
        let fewer = (320 + 80u64.min(own_slots)) - (7 + 1);
        assert_eq!(plan(None).bytes - plan(Some(7)).bytes, fewer * 12);
    }

    /// The flags of the `t`-th iteration's plan, as the schedule gives it.
    fn flags_at(o: &MclOptions, t: usize) -> u32 {
        let mut s = Schedule::new(o, Level::Finest);
        for _ in 0..t {
            s.plan_next().unwrap();
            s.record(1, 1.0, 1.0, u64::MAX);
        }
        flags(o, &s.plan_next().unwrap())
    }

    #[test]
    fn flags_follow_the_phase() {
        let o = MclOptions {
            finish_after: 3,
            max_iterations: 2000,
            ..MclOptions::default()
        };
        assert_eq!(flags_at(&o, 0), FLAG_BALANCED | FLAG_SQUARE);
        assert_eq!(flags_at(&o, 2), FLAG_BALANCED | FLAG_SQUARE);
        assert_eq!(flags_at(&o, 3), FLAG_RIGHT_IS_M | FLAG_SQUARE);
        let pure = MclOptions {
            finish_after: 0,
            inflation: 1.5,
            max_iterations: 2000,
            ..MclOptions::default()
        };
        assert_eq!(flags_at(&pure, 1000), FLAG_BALANCED);
        let mlr = MclOptions::mlrmcl();
        assert_eq!(
            flags_at(&mlr, 3),
            FLAG_SQUARE | FLAG_PRUNE_MLR | FLAG_CHANGE_L2
        );
    }
}

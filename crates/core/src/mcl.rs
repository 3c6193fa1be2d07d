//! Regularized Markov clustering (R-MCL): the [`MarkovCluster`] trait, its options, the
//! preparation every backend shares, the cluster interpretation, a sequential f64 reference
//! ([`reference`]) and the scoring of clusters against gold-standard complexes ([`eval`]).
//!
//! # The algorithm
//!
//! 1. **Graph to transition matrix** ([`Transition::new`]). `A + I`: the edge weights are kept
//!    (a graph's duplicate and reversed edges were already merged, keeping the largest weight,
//!    see [`Graph`]); node `j` gets a self-loop of [`MclOptions::self_loop_weight`] times the
//!    largest weight of its edges (1 for an unweighted graph), as `mcl` does. An isolated node
//!    always gets a loop of weight 1 (it is its own cluster). Columns are normalised to sum 1:
//!    `M_G`.
//! 2. **Start** from `M = M_G`, each column cut to its `K` largest entries
//!    ([`MclOptions::max_per_column`]) and renormalised (a no-op for degree < K).
//! 3. **Iterate** ([`column_step`] is the one definition of an iteration's column): with
//!    [`Expansion::Regularized`] `M ← M·M_G` (R-MCL, Satuluri & Parthasarathy 2009), with
//!    the balance of Satuluri, Parthasarathy & Ucar 2010: row `i` of the product is scaled by
//!    the penalty `max(m_i, 1)^(−b)`, where `m = M·1` is the flow node `i` already attracts
//!    and `b` = [`MclOptions::balance`], so flow into a node that attracts more than its own
//!    unit is damped — this keeps attractors from swallowing dense networks (`b = 0` is plain
//!    R-MCL). [`Expansion::Mcl`] is van Dongen's `M ← M·M` (no balance). Then inflate (every
//!    entry to the power `r`, computed as `(x / max)^r` times a power of two, [`inflate`]:
//!    the column scaled by its maximum, so that no `r` underflows or overflows it; the
//!    normalisation removes the factor), prune (entries below
//!    [`MclOptions::prune_threshold`] times the column's inflated sum are dropped, and at
//!    most `K` largest kept, ties broken by the smaller row), renormalise.
//! 4. **Stop** when the global chaos `max_j (max_i M_ij − Σ_i M_ij²)` is below
//!    [`MclOptions::chaos_tolerance`], when the iterate is stationary (no column's L1 change
//!    above [`MclOptions::stationary_tolerance`], see "Convergence"), or after
//!    [`MclOptions::max_iterations`] ([`stop_reason`]; [`Clustering::stop`] says which, the
//!    CLI prints it and warns on the cap). With [`Expansion::Regularized`], the first
//!    [`MclOptions::finish_after`] iterations are R-MCL's and the rest van Dongen's `M·M`
//!    without balance ([`MclOptions::expansion_at`]): the R-MCL phase forms the clusters,
//!    the `M·M` finish makes `M` idempotent so that the chaos test is met (see
//!    "Convergence").
//! 5. **Interpret** ([`interpret`]).
//!
//! # Convergence: why R-MCL alone does not stop, and the `M·M` finish
//!
//! R-MCL's iteration `M = Γ_r(D·M·M_G)` has no idempotent fixed point: a node whose
//! neighbours lie in two clusters receives, every iteration, the `M_G`-weighted average of
//! its neighbours' columns, so such boundary columns keep `max − Σ²` near 0.2 for ever
//! (collins2007: the chaos settles at 0.231 by iteration 40). With balance the flow does not
//! even become stationary, and the reason is exact: inside a cluster of `s` nodes whose
//! columns split their flow `x : 1−x` between two attractors, the expansion keeps the split,
//! the penalty scales it by `(s·x)^(−b)` and inflation raises it to the power `r`, so the
//! split maps to `x^(r(1−b)) : (1−x)^(r(1−b))` — with the defaults `r = 2`, `b = 0.5` that
//! is `x : 1−x`, every split is a fixed point, and the flow drifts between the attractors
//! of a cluster without restoring force. Measured (CPU, f64, defaults, R-MCL only): on
//! collins2007 about 450 columns still change by more than 1e-4 at iteration 100 (column 723
//! moves from 0.72 to 0.79 on attractor 723 against 720 in six iterations) while the
//! partition barely moves (matched fraction 0.883 from iteration 34 on); on
//! krogan2006_extended a few nodes still switch clusters every iteration at 100. Neither
//! another balance (0.25 to 1: never stationary on krogan2006_extended in 100 iterations),
//! nor freezing the penalty (flow then coarsens like plain R-MCL: collins2007 falls to 0.68),
//! nor damping it (an average of the masses: drifts the same), nor a partition-stability
//! test (krogan2006_extended's partition never holds for two iterations) gives a stop.
//!
//! So the iteration has two phases. The first [`MclOptions::finish_after`] (default
//! [`FINISH_AFTER`] = 10) iterations are R-MCL, balance included: they decide the clusters
//! (the matched fraction is within about 0.02 of its value at iteration 100 by then). Then the
//! expansion becomes van Dongen's `M ← M·M` without balance, which squares the flow: each
//! column's flow collects on its attractors, attractor systems merge, and `M` becomes
//! idempotent, so MCL's own chaos test is met about 20 iterations later. Measured (CPU, f64,
//! defaults; matched fraction of CYC2008 complexes, `mcl -I 2.0` for comparison):
//!
//! | network | `mcl` | R-MCL only: iterations, matched | with the finish: iterations, matched |
//! |---|---|---|---|
//! | collins2007 | 0.828 | 100 (cap), 0.883 | 30 (chaos), 0.862 |
//! | gavin2006 | 0.748 | 100 (cap), 0.818 | 30 (chaos), 0.804 |
//! | krogan2006_core | 0.734 | 100 (cap), 0.740 | 29 (chaos), 0.793 |
//! | krogan2006_extended | 0.565 | 100 (cap), 0.672 | 31 (chaos), 0.677 |
//!
//! and a planted partition of 100,000 nodes (1,000 communities, mean degree 40, mixing 0.2,
//! [`crate::generate::planted`]) stops after 27 iterations with all 1,000 communities
//! matched. Finishing after 5, 8, 10 or 15 R-MCL iterations gives 0.855 / 0.848 / 0.862 /
//! 0.855 on collins2007 and 0.667 / 0.677 / 0.677 / 0.672 on krogan2006_extended, so the
//! default is not a knife edge. `finish_after = 0` keeps R-MCL throughout (the earlier
//! behaviour, which ends at the cap with balance).
//!
//! The second test, **stationarity**, stays: stop when no column's L1 change
//! `‖M_t[:,j] − M_(t−1)[:,j]‖₁` exceeds [`MclOptions::stationary_tolerance`] (default
//! [`STATIONARY_TOLERANCE`] = 1e-4). Each backend computes it in its column pass (every new
//! entry looks its row up in the previous column `j`, at most `K` entries, and the previous
//! entries whose row is gone count in full; [`column_change`]), as a fixed-point sum, and
//! reduces the maximum beside the chaos, so the host still reads two scalars per iteration
//! and every backend stops at the same iteration. Why 1e-4: a column sums to 1, so a change
//! below 1e-4 moves no entry by more than 1e-4 and can only change a node's cluster where two
//! of its entries tie within 1e-4; it is well above f32 rounding noise (about `K·2^-24` ≈
//! 4e-6 for `K` = 64), so f32 runs reach it too. It ends plain R-MCL runs (balance 0,
//! `finish_after = 0`), whose iterate settles: collins2007 after 90 iterations,
//! krogan2006_extended after 84.
//!
//! # Storage
//!
//! `M` is sparse throughout: `n` columns of width `K` (a transposed ELLPACK-R: column `j`'s
//! entries are `idx/val[j·K .. j·K + len[j]]`, ordered by value descending, ties by row), so
//! memory is `O(n·K)` whatever the graph. A column of `M·M_R` combines the `deg(j)+1` columns
//! of `M` named by column `j` of `M_R`, each of at most `K` entries.
//!
//! # Determinism
//!
//! Every backend computes a column the same way, so all give the same partition: products are
//! rounded to the element type, then summed as fixed-point integers (`round-toward-zero(p ·
//! 2^60)`, see [`to_fixed`]) — integer addition is associative, so the order in which threads
//! add does not matter — and converted back. Column sums (for normalisation and chaos) are
//! fixed-point sums too; the mass `m` is a fixed-point sum at scale 2^32. Top-K ties go to the
//! smaller row. For `f64`, inflation 2 (`x·x`) and balance 0, 0.5 (`1/√m`) or 1 (`1/m`) every
//! operation is correctly rounded, so the backends agree bit for bit; other exponents use
//! `pow`, whose last bit may differ between math libraries.

use rayon::prelude::*;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::scalar::Scalar;

pub mod eval;
pub mod gpu;
pub mod reference;

/// How `M` is expanded each iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Expansion {
    /// R-MCL: `M ← M·M_R` (the regularised, balanced `M_G`). The default.
    #[default]
    Regularized,
    /// Van Dongen's MCL: `M ← M·M` (balance does not apply).
    Mcl,
}

/// Options for [`MarkovCluster`] (R-MCL).
#[derive(Debug, Clone, PartialEq)]
pub struct MclOptions {
    /// Inflation exponent `r > 1` (default 2.0); larger gives smaller clusters.
    pub inflation: f64,
    /// Balance exponent `b ≥ 0` of R-MCL (default 0.5): flow into node `i` is scaled by
    /// `max(m_i, 1)^(−b)`, where `m_i` is the flow `i` already attracts. 0 turns the balance
    /// off; 0.5 keeps the yeast networks from collapsing into a few giant clusters.
    pub balance: f64,
    /// Expansion rule (default [`Expansion::Regularized`]).
    pub expansion: Expansion,
    /// Self-loop weight, as a multiple of the node's largest edge weight (default 1.0; 0
    /// adds none except on isolated nodes).
    pub self_loop_weight: f64,
    /// After inflation, entries below this fraction of the column's sum are dropped (default
    /// 1e-5).
    pub prune_threshold: f64,
    /// `K`: at most this many entries kept per column (default 64). Bounds memory at about
    /// `n·K` entries; columns rarely need more once clusters form.
    pub max_per_column: usize,
    /// Stop when the global chaos falls below this (default 1e-3).
    pub chaos_tolerance: f64,
    /// Stop when the iterate is stationary: no column's L1 change `‖M_t[:,j] −
    /// M_(t−1)[:,j]‖₁` exceeds this (default [`STATIONARY_TOLERANCE`]; 0 turns the test off).
    /// See the module docs, "Convergence".
    pub stationary_tolerance: f64,
    /// Give up after this many iterations (default 100); reported in [`Clustering`].
    pub max_iterations: usize,
    /// With [`Expansion::Regularized`]: after this many R-MCL iterations the expansion
    /// becomes van Dongen's `M ← M·M` (no balance) until the chaos test is met (default
    /// [`FINISH_AFTER`]; 0 never switches: pure R-MCL, which rarely meets the chaos test on
    /// real networks). See the module docs, "Convergence".
    pub finish_after: usize,
    /// GPU backends: slots of the column pass's hash table in local (shared) memory (default
    /// `None`: [`gpu::LCAP`]; else a power of two in [`gpu::MIN_LOCAL_TABLE`]`..=LCAP`). A
    /// column whose distinct rows exceed half of it takes the global-memory (hub) path, so a
    /// small table runs that path on small graphs (the conformance suite does). The partition
    /// does not depend on it. The CPU ignores it.
    pub local_table: Option<usize>,
    /// GPU backends: work-items per column work-group (default `None`: [`gpu::COLUMN_WG`];
    /// else a power of two in [`gpu::COLUMN_WG_RANGE`], at most the device's limit). The
    /// partition does not depend on it (fixed-point sums, a total order for the top K). The
    /// CPU ignores it.
    pub column_wg: Option<usize>,
}

impl Default for MclOptions {
    fn default() -> Self {
        Self {
            inflation: 2.0,
            balance: 0.5,
            expansion: Expansion::Regularized,
            self_loop_weight: 1.0,
            prune_threshold: 1e-5,
            max_per_column: 64,
            chaos_tolerance: 1e-3,
            stationary_tolerance: STATIONARY_TOLERANCE,
            max_iterations: 100,
            finish_after: FINISH_AFTER,
            local_table: None,
            column_wg: None,
        }
    }
}

/// Largest `K` accepted (the GPU kernels rank entries with 32-bit counters and keep a column
/// of `K` in one work-group).
pub const MAX_K: usize = 4096;

/// Floor of the mass in the balance penalty `max(m_i, MASS_FLOOR)^(−b)`: nodes that attract
/// less than their own unit of flow are not penalised (and the penalty is at most 1).
pub const MASS_FLOOR: f64 = 1.0;

impl MclOptions {
    /// Checks the options: inflation > 1 and finite, balance ≥ 0 and finite, self-loop weight
    /// ≥ 0, prune threshold in `[0, 1)`, `1 ≤ K ≤ MAX_K`, chaos tolerance > 0, stationary
    /// tolerance ≥ 0.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::invalid("mcl options", what));
        if !(self.inflation.is_finite() && self.inflation > 1.0) {
            return bad(format!("inflation must be > 1, got {}", self.inflation));
        }
        if !(self.balance.is_finite() && self.balance >= 0.0) {
            return bad(format!("balance must be >= 0, got {}", self.balance));
        }
        if !(self.self_loop_weight.is_finite() && self.self_loop_weight >= 0.0) {
            return bad(format!(
                "self-loop weight must be >= 0, got {}",
                self.self_loop_weight
            ));
        }
        if !(self.prune_threshold >= 0.0 && self.prune_threshold < 1.0) {
            return bad(format!(
                "prune threshold must be in [0, 1), got {}",
                self.prune_threshold
            ));
        }
        if self.max_per_column == 0 || self.max_per_column > MAX_K {
            return bad(format!(
                "max entries per column K must be in 1..={MAX_K}, got {}",
                self.max_per_column
            ));
        }
        if !(self.chaos_tolerance.is_finite() && self.chaos_tolerance > 0.0) {
            return bad(format!(
                "chaos tolerance must be > 0, got {}",
                self.chaos_tolerance
            ));
        }
        if !(self.stationary_tolerance.is_finite() && self.stationary_tolerance >= 0.0) {
            return bad(format!(
                "stationary tolerance must be >= 0, got {}",
                self.stationary_tolerance
            ));
        }
        if let Some(t) = self.local_table {
            if !(t.is_power_of_two() && (gpu::MIN_LOCAL_TABLE..=gpu::LCAP).contains(&t)) {
                return bad(format!(
                    "the local hash table must be a power of two in {}..={}, got {t}",
                    gpu::MIN_LOCAL_TABLE,
                    gpu::LCAP
                ));
            }
        }
        if let Some(w) = self.column_wg {
            let (lo, hi) = gpu::COLUMN_WG_RANGE;
            if !(w.is_power_of_two() && (lo..=hi).contains(&w)) {
                return bad(format!(
                    "the column work-group size must be a power of two in {lo}..={hi}, got {w}"
                ));
            }
        }
        Ok(())
    }

    /// True when the balance penalty is applied (regularised expansion and `b > 0`) in the
    /// R-MCL iterations.
    pub fn balanced(&self) -> bool {
        self.expansion == Expansion::Regularized && self.balance > 0.0
    }

    /// The expansion of iteration `iteration` (0-based): [`Expansion::Mcl`] throughout for
    /// `Mcl`; for `Regularized`, R-MCL's `M·M_R` for the first
    /// [`MclOptions::finish_after`] iterations (all of them when it is 0), then `M·M`.
    pub fn expansion_at(&self, iteration: usize) -> Expansion {
        match self.expansion {
            Expansion::Regularized if self.finish_after == 0 || iteration < self.finish_after => {
                Expansion::Regularized
            }
            _ => Expansion::Mcl,
        }
    }

    /// True when iteration `iteration` (0-based) applies the balance penalty.
    pub fn balanced_at(&self, iteration: usize) -> bool {
        self.balanced() && self.expansion_at(iteration) == Expansion::Regularized
    }
}

/// A clustering of the nodes of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    /// The clusters, each a sorted list of nodes; every node is in exactly one. Largest
    /// first, ties by smallest node.
    pub clusters: Vec<Vec<usize>>,
    /// Iterations run.
    pub iterations: usize,
    /// Global chaos at the end.
    pub chaos: f64,
    /// Largest column L1 change of the last iteration (infinite when none ran).
    pub change: f64,
    /// Why the iterations stopped.
    pub stop: StopReason,
    /// True when the chaos or stationary test was met; false when
    /// [`MclOptions::max_iterations`] ran out first (the clusters are then those of the last
    /// iterate).
    pub converged: bool,
    /// Where the time went.
    pub timings: MclTimings,
}

/// Seconds spent in each phase of a clustering run (zero where a phase does not apply).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MclTimings {
    /// Building `M_G` and the starting `M`, planning device memory, loading the kernels.
    pub prepare: f64,
    /// Of `prepare`, loading the kernels (GPU backends: the CUDA module's PTX JIT, the
    /// OpenCL program build; zero when they were loaded before, and on the CPU).
    pub load: f64,
    /// Copying `M_G` and `M` to the device (GPU backends).
    pub upload: f64,
    /// The iterations.
    pub iterate: f64,
    /// Copying `M` back (GPU backends).
    pub download: f64,
    /// Interpreting `M` as clusters.
    pub interpret: f64,
}

/// Why R-MCL stopped iterating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The global chaos fell below [`MclOptions::chaos_tolerance`] (MCL's own test).
    Chaos,
    /// The iterate was stationary: no column changed by more than
    /// [`MclOptions::stationary_tolerance`] (L1) in the last iteration.
    Stationary,
    /// [`MclOptions::max_iterations`] ran out (not converged).
    IterationCap,
}

impl StopReason {
    /// True for the two convergence tests.
    pub fn converged(self) -> bool {
        self != StopReason::IterationCap
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Chaos => "chaos below tolerance",
            StopReason::Stationary => "stationary",
            StopReason::IterationCap => "iteration cap",
        })
    }
}

/// The stopping rule every backend applies after each iteration (`iterations` run so far,
/// `chaos` and largest column L1 `change` of the last one; both infinite before the first):
/// `Some(reason)` to stop. The chaos test is checked first, then stationarity, then the cap.
pub fn stop_reason(
    opts: &MclOptions,
    iterations: usize,
    chaos: f64,
    change: f64,
) -> Option<StopReason> {
    if chaos < opts.chaos_tolerance {
        Some(StopReason::Chaos)
    } else if change < opts.stationary_tolerance {
        Some(StopReason::Stationary)
    } else if iterations >= opts.max_iterations {
        Some(StopReason::IterationCap)
    } else {
        None
    }
}

impl Clustering {
    /// The cluster number of every node.
    pub fn assignment(&self, n: usize) -> Vec<usize> {
        let mut a = vec![usize::MAX; n];
        for (c, members) in self.clusters.iter().enumerate() {
            for &u in members {
                if u < n {
                    a[u] = c;
                }
            }
        }
        a
    }
}

/// What a backend reports after each iteration (the CLI prints it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MclProgress {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Global chaos after it.
    pub chaos: f64,
    /// Largest column L1 change `max_j ‖M_t[:,j] − M_(t−1)[:,j]‖₁` in it.
    pub change: f64,
    /// Entries of `M` after pruning.
    pub entries: u64,
    /// Seconds since the iterations started.
    pub seconds: f64,
}

/// Regularized Markov clustering.
pub trait MarkovCluster<T: Scalar>: Backend {
    /// Clusters the nodes of `g`, calling `progress` after every iteration.
    fn cluster_with_progress(
        &self,
        g: &Graph,
        opts: &MclOptions,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering>;

    /// Clusters the nodes of `g`.
    fn cluster(&self, g: &Graph, opts: &MclOptions) -> Result<Clustering> {
        self.cluster_with_progress(g, opts, &mut |_| {})
    }

    /// Loads the kernels R-MCL runs in `T` now (GPU backends: the CUDA module's PTX JIT, the
    /// OpenCL program build), so that a caller can overlap it with other work, such as
    /// reading the network; a clustering then finds them loaded. Without this call the
    /// clustering loads them itself (see [`MclTimings::load`]). The CPU has nothing to load.
    fn load_kernels(&self) -> Result<()> {
        Ok(())
    }
}

/// `M_G`: the column-normalised `A + I` in compressed sparse columns (rows ascending).
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// Number of nodes.
    pub n: usize,
    /// Column pointers (`n + 1`).
    pub ptr: Vec<u64>,
    /// Row indices.
    pub row: Vec<u32>,
    /// Values; every column sums to 1.
    pub val: Vec<f64>,
}

impl Transition {
    /// `M_G` of `g` (see the module docs, step 1). Weights must be finite and positive.
    pub fn new(g: &Graph, opts: &MclOptions) -> Result<Self> {
        opts.validate()?;
        let n = g.num_nodes();
        if let Some(w) = g.weights() {
            if let Some(bad) = w
                .par_iter()
                .with_min_len(1 << 14)
                .find_first(|x| !(x.is_finite() && **x > 0.0))
            {
                return Err(Error::invalid(
                    "mcl",
                    format!("edge weights must be finite and > 0, found {bad}"),
                ));
            }
        }
        // Column j holds its neighbours and, unless the loop weight is 0, itself: the counts
        // in parallel, then their prefix sums.
        let has_loop = |j: usize| g.neighbors(j).is_empty() || opts.self_loop_weight > 0.0;
        let what = || format!("M_G of {n} nodes");
        let mut ptr: Vec<u64> = crate::alloc::try_zeroed_vec(n + 1, what)?;
        ptr[1..]
            .par_iter_mut()
            .enumerate()
            .with_min_len(1 << 12)
            .for_each(|(j, p)| *p = g.neighbors(j).len() as u64 + u64::from(has_loop(j)));
        for j in 0..n {
            ptr[j + 1] += ptr[j];
        }
        let total = usize::try_from(ptr[n])
            .map_err(|_| Error::invalid("mcl", format!("M_G of {n} nodes: too many entries")))?;
        // Zeroed by the allocator, not written here: each block below touches its own pages.
        let mut row: Vec<u32> = crate::alloc::try_zeroed_vec(total, what)?;
        let mut val: Vec<f64> = crate::alloc::try_zeroed_vec(total, what)?;
        // Blocks of columns in parallel, each writing its own slices of row / val.
        const BLOCK: usize = 4096;
        let mut parts = Vec::with_capacity(n.div_ceil(BLOCK));
        let (mut rr, mut vr) = (&mut row[..], &mut val[..]);
        for b0 in (0..n).step_by(BLOCK) {
            let b1 = (b0 + BLOCK).min(n);
            let len = (ptr[b1] - ptr[b0]) as usize;
            let (r, rrest) = std::mem::take(&mut rr).split_at_mut(len);
            let (v, vrest) = std::mem::take(&mut vr).split_at_mut(len);
            (rr, vr) = (rrest, vrest);
            parts.push((b0, b1, r, v));
        }
        parts.into_par_iter().for_each(|(b0, b1, r, v)| {
            let mut at = 0;
            for j in b0..b1 {
                let nb = g.neighbors(j);
                let ws = g.neighbor_weights(j);
                let w = |t: usize| ws.map_or(1.0, |w| w[t]);
                let max_w = (0..nb.len()).map(w).fold(0.0f64, f64::max);
                let loop_w = if nb.is_empty() {
                    1.0
                } else {
                    opts.self_loop_weight * max_w
                };
                let start = at;
                let mut placed = false;
                for (t, &i) in nb.iter().enumerate() {
                    if !placed && i as usize > j {
                        if loop_w > 0.0 {
                            (r[at], v[at]) = (j as u32, loop_w);
                            at += 1;
                        }
                        placed = true;
                    }
                    (r[at], v[at]) = (i, w(t));
                    at += 1;
                }
                if !placed && loop_w > 0.0 {
                    (r[at], v[at]) = (j as u32, loop_w);
                    at += 1;
                }
                let s: f64 = v[start..at].iter().sum();
                v[start..at].iter_mut().for_each(|x| *x /= s);
            }
        });
        Ok(Self { n, ptr, row, val })
    }

    /// The values in `T`, for a backend's iterations (rounded in parallel; for `f64` the
    /// values themselves, borrowed, not copied).
    pub fn values<T: Scalar>(&self) -> std::borrow::Cow<'_, [T]> {
        match (&self.val as &dyn std::any::Any).downcast_ref::<Vec<T>>() {
            Some(same) => std::borrow::Cow::Borrowed(same.as_slice()),
            None => std::borrow::Cow::Owned(
                self.val
                    .par_iter()
                    .with_min_len(1 << 14)
                    .map(|&x| T::from_f64(x))
                    .collect(),
            ),
        }
    }

    /// Entries of column `j`: `(rows, values)`.
    pub fn column(&self, j: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.ptr[j] as usize, self.ptr[j + 1] as usize);
        (&self.row[a..b], &self.val[a..b])
    }
}

/// `M` in `n` columns of width `K` (see the module docs): column `j`'s entries are
/// `idx/val[j·K .. j·K + len[j]]`, value descending, ties by row.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns<T> {
    /// Number of columns (nodes).
    pub n: usize,
    /// Width `K`.
    pub k: usize,
    /// Row indices, `n·K`.
    pub idx: Vec<u32>,
    /// Values, `n·K`.
    pub val: Vec<T>,
    /// Entries per column, `n`.
    pub len: Vec<u32>,
}

impl<T: Scalar> Columns<T> {
    /// The starting `M`: `M_G` with each column cut to its `K` largest entries (ties by row)
    /// and renormalised (in f64, then rounded to `T`).
    pub fn initial(tr: &Transition, k: usize) -> Result<Self> {
        let n = tr.n;
        let mut m = Self::zeroed(n, k)?;
        m.idx
            .par_chunks_mut(k)
            .zip(m.val.par_chunks_mut(k))
            .zip(m.len.par_iter_mut())
            .enumerate()
            .with_min_len(64)
            .for_each_init(
                Vec::new,
                |col: &mut Vec<(u32, f64)>, (j, ((oi, ov), ol))| {
                    let (r, v) = tr.column(j);
                    let top = r.len().min(k);
                    // The order of the top K: value descending, ties by row.
                    let ranked =
                        |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
                    // `M_G`'s column is in row order, which often is the order of the top K
                    // already (all values equal, as in an unweighted graph whose loops weigh
                    // as much as its edges): then it is used as it is, neither copied nor
                    // sorted (the same entries in the same order: the same sum and values).
                    let in_order = r
                        .windows(2)
                        .zip(v.windows(2))
                        .all(|(r2, v2)| ranked(&(r2[0], v2[0]), &(r2[1], v2[1])).is_le());
                    if !in_order {
                        col.clear();
                        col.extend(r.iter().copied().zip(v.iter().copied()));
                        col.sort_by(ranked);
                    }
                    let entry = |t: usize| if in_order { (r[t], v[t]) } else { col[t] };
                    let s: f64 = (0..top).map(|t| entry(t).1).sum();
                    for t in 0..top {
                        let (i, x) = entry(t);
                        (oi[t], ov[t]) = (i, T::from_f64(x / s));
                    }
                    *ol = top as u32;
                },
            );
        Ok(m)
    }

    /// `n` empty columns of width `K`, all slots zero. The memory comes zeroed from the
    /// allocator ([`crate::alloc::try_zeroed_vec`]), so this costs no pass over the `n·K`
    /// slots: their pages are touched first by the (parallel) pass that fills them.
    pub fn zeroed(n: usize, k: usize) -> Result<Self> {
        let slots = n
            .checked_mul(k)
            .filter(|s| *s <= isize::MAX as usize / 16)
            .ok_or_else(|| Error::invalid("mcl", format!("{n} nodes × K = {k} overflow")))?;
        let what = || format!("M: {n} columns of K = {k} entries");
        Ok(Self {
            n,
            k,
            idx: crate::alloc::try_zeroed_vec(slots, what)?,
            val: crate::alloc::try_zeroed_vec(slots, what)?,
            len: crate::alloc::try_zeroed_vec(n, what)?,
        })
    }

    /// Entries of column `j`.
    pub fn column(&self, j: usize) -> (&[u32], &[T]) {
        let a = j * self.k;
        let b = a + self.len[j] as usize;
        (&self.idx[a..b], &self.val[a..b])
    }

    /// Total stored entries.
    pub fn entries(&self) -> u64 {
        self.len.iter().map(|&l| u64::from(l)).sum()
    }
}

/// Scale of the fixed-point sums of column entries (every entry and column sum is ≤ 1 up to
/// rounding, far below the 16 that fits).
pub const FIXED_SCALE: f64 = 1152921504606846976.0; // 2^60
/// Default [`MclOptions::stationary_tolerance`]: see the module docs, "Convergence".
pub const STATIONARY_TOLERANCE: f64 = 1e-4;
/// Default [`MclOptions::finish_after`]: see the module docs, "Convergence".
pub const FINISH_AFTER: usize = 10;

/// Scale of the fixed-point mass `m = M·1` (a node can attract up to `n`).
pub const MASS_SCALE: f64 = 4294967296.0; // 2^32

/// `p` in fixed point: `p · 2^60` rounded toward zero (what a C cast does). `p` must be in
/// `[0, 16)`.
#[inline]
pub fn to_fixed<T: Scalar>(p: T) -> u64 {
    (p * T::from_f64(FIXED_SCALE)).to_u64().unwrap_or(0)
}

/// A fixed-point sum back in `T` (rounded to nearest).
#[inline]
pub fn from_fixed<T: Scalar>(a: u64) -> T {
    <T as num_traits::NumCast>::from(a).unwrap_or_else(T::zero) * T::from_f64(1.0 / FIXED_SCALE)
}

/// An entry's contribution to the fixed-point mass.
#[inline]
pub fn to_mass<T: Scalar>(p: T) -> u64 {
    (p * T::from_f64(MASS_SCALE)).to_u64().unwrap_or(0)
}

/// The balance penalty of a node of fixed-point mass `m`: `max(m, MASS_FLOOR)^(−b)`, with
/// `b = 0.5` and `b = 1` computed as `1/√m` and `1/m` (correctly rounded everywhere).
#[inline]
pub fn penalty<T: Scalar>(mass: u64, b: f64) -> T {
    let m = <T as num_traits::NumCast>::from(mass).unwrap_or_else(T::zero)
        * T::from_f64(1.0 / MASS_SCALE);
    let m = m.max(T::from_f64(MASS_FLOOR));
    if b == 0.5 {
        T::one() / m.sqrt()
    } else if b == 1.0 {
        T::one() / m
    } else {
        m.powf(T::from_f64(-b))
    }
}

/// The power-of-two scale of a column's inflated values: `1 / 2^⌈log2 distinct⌉` for a
/// column of `distinct` rows (1 for none or one), so that the inflated values, each at most 1
/// ([`inflate`]), sum to at most 1 and their fixed-point sums cannot overflow. Multiplying by
/// it is exact.
#[inline]
pub fn inflation_scale<T: Scalar>(distinct: usize) -> T {
    T::one()
        / <T as num_traits::NumCast>::from(distinct.max(1).next_power_of_two())
            .unwrap_or_else(T::one)
}

/// Inflation of one entry `x` of a column whose largest entry is `max`: `(x / max)^r ·
/// scale` ([`inflation_scale`]), with `r = 2` as `q·q` (exact rounding everywhere). Raising
/// the column scaled by its maximum, not `x` itself, keeps every accepted `r` in range: the
/// largest entry becomes exactly `scale` (no underflow of the whole column, as `x^20` of
/// entries near 0.01 gave) and none exceeds it (no overflow). The normalisation divides the
/// factor `max^r / scale` out again, so the column is `x^r / Σ x^r` as before. A column
/// whose entries are all 0 (`max = 0`) inflates to `scale` everywhere.
#[inline]
pub fn inflate<T: Scalar>(x: T, max: T, r: f64, scale: T) -> T {
    let q = if max > T::zero() { x / max } else { T::one() };
    let p = if r == 2.0 {
        q * q
    } else {
        q.powf(T::from_f64(r))
    };
    p * scale
}

/// One column of an iteration, after the expansion's sums are known: `acc` holds `(row,
/// fixed-point sum)` of column `j` of the product (any order, rows distinct) and `pen` the
/// balance penalties (empty: none). Scales by the penalty, inflates, prunes,
/// keeps the `K` largest (ties by row), normalises; writes the column into `out_idx/out_val`
/// (length ≥ `K`) and returns `(entries, chaos, change)`, where `change` is the fixed-point L1
/// distance to the previous column `prev` ([`column_change`]). This is the host definition
/// that the GPU kernels mirror step by step.
pub fn column_step<T: Scalar>(
    acc: &[(u32, u64)],
    pen: &[T],
    opts: &MclOptions,
    prev: (&[u32], &[T]),
    scratch: &mut Vec<(u32, T)>,
    out_idx: &mut [u32],
    out_val: &mut [T],
) -> (usize, T, u64) {
    let k = opts.max_per_column;
    scratch.clear();
    let mut s1: u64 = 0;
    // The penalised sums, their maximum and the scale of the inflation (see [`inflate`]).
    let penalised = |i: u32, a: u64| {
        let x = from_fixed::<T>(a);
        if pen.is_empty() {
            x
        } else {
            x * pen[i as usize]
        }
    };
    let max = acc
        .iter()
        .map(|&(i, a)| penalised(i, a))
        .fold(T::zero(), |m, x| if x > m { x } else { m });
    let scale = inflation_scale::<T>(acc.len());
    let value = |i: u32, a: u64| inflate(penalised(i, a), max, opts.inflation, scale);
    for &(i, a) in acc {
        let y = value(i, a);
        s1 = s1.wrapping_add(to_fixed(y));
        scratch.push((i, y));
    }
    let cut = T::from_f64(opts.prune_threshold) * from_fixed::<T>(s1);
    let all = scratch.len();
    scratch.retain(|e| e.1 >= cut);
    if scratch.is_empty() && all > 0 {
        // Only when every entry is below the cut (impossible unless > 1/threshold entries):
        // keep them all rather than none.
        for &(i, a) in acc {
            scratch.push((i, value(i, a)));
        }
    }
    let by_rank = |a: &(u32, T), b: &(u32, T)| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0));
    if scratch.len() > k {
        scratch.select_nth_unstable_by(k - 1, by_rank);
        scratch.truncate(k);
    }
    scratch.sort_unstable_by(by_rank);
    let s2: u64 = scratch
        .iter()
        .fold(0u64, |s, e| s.wrapping_add(to_fixed(e.1)));
    let s2 = from_fixed::<T>(s2);
    let mut sq: u64 = 0;
    for (t, &(i, y)) in scratch.iter().enumerate() {
        let v = y / s2;
        out_idx[t] = i;
        out_val[t] = v;
        sq = sq.wrapping_add(to_fixed(v * v));
    }
    let chaos = match scratch.first() {
        Some(_) => (out_val[0] - from_fixed::<T>(sq)).max(T::zero()),
        None => T::zero(),
    };
    let len = scratch.len();
    let change = column_change(prev, (&out_idx[..len], &out_val[..len]));
    (len, chaos, change)
}

/// The L1 distance between a column's previous and new entries (rows distinct within each,
/// any order), in fixed point: `Σ to_fixed(|new_i − prev_i|)` over the new entries (a row
/// missing from `prev` counts `new_i`), plus `Σ to_fixed(prev_i)` over the previous entries
/// whose row is gone. Every difference is correctly rounded and the sum is an integer sum,
/// so all backends get the same bits; the kernels compute it in their normalisation loop.
/// Linear look-ups: both columns have at most `K` entries.
pub fn column_change<T: Scalar>(prev: (&[u32], &[T]), new: (&[u32], &[T])) -> u64 {
    let mut d: u64 = 0;
    for (&i, &v) in new.0.iter().zip(new.1) {
        let old = prev
            .0
            .iter()
            .position(|&r| r == i)
            .map_or(T::zero(), |s| prev.1[s]);
        d = d.wrapping_add(to_fixed((v - old).abs()));
    }
    for (&i, &x) in prev.0.iter().zip(prev.1) {
        if !new.0.contains(&i) {
            d = d.wrapping_add(to_fixed(x));
        }
    }
    d
}

/// The clusters of `M` (every node in exactly one, largest cluster first, ties by smallest
/// node). Attractors are the nodes with a non-zero diagonal entry. Every node `j` points at the
/// attractor with the largest entry in its column (ties: the smaller row), or, when its
/// column holds no attractor (only before convergence), at its largest entry's row; the
/// clusters are the connected components of these pointers. So an attractor whose column
/// prefers another attractor joins it (attractor systems), and each other node joins the
/// attractor it sends most flow to — one cluster per node, deterministically, even where
/// R-MCL leaves a boundary node's flow split. Isolated nodes are their own attractors, hence
/// singletons.
pub fn interpret<T: Scalar>(m: &Columns<T>) -> Vec<Vec<usize>> {
    interpret_targets(&targets(m))
}

/// No target: a column without a positive entry (see [`targets`]).
pub const NO_TARGET: u32 = u32::MAX;

/// Each node's pointer of [`interpret`]: the row of the largest positive entry of column `j`
/// among the attractors (ties: the smaller row), else among all rows, else [`NO_TARGET`].
/// The GPU backends compute the same on the device (`mcl_attractor`, `mcl_target`) and read
/// back only these `n` numbers, not `M`.
pub fn targets<T: Scalar>(m: &Columns<T>) -> Vec<u32> {
    let n = m.n;
    let is_attr: Vec<bool> = (0..n)
        .into_par_iter()
        .map(|j| {
            let (r, v) = m.column(j);
            r.iter()
                .zip(v)
                .any(|(&i, &x)| i as usize == j && x > T::zero())
        })
        .collect();
    let best = |j: usize, want_attr: bool| -> Option<u32> {
        let (r, v) = m.column(j);
        let mut best: Option<(u32, T)> = None;
        for (&i, &x) in r.iter().zip(v) {
            if (want_attr && !is_attr[i as usize]) || x <= T::zero() {
                continue;
            }
            best = match best {
                Some((bi, bx)) if bx > x || (bx == x && bi < i) => Some((bi, bx)),
                _ => Some((i, x)),
            };
        }
        best.map(|b| b.0)
    };
    (0..n)
        .into_par_iter()
        .map(|j| {
            best(j, true)
                .or_else(|| best(j, false))
                .unwrap_or(NO_TARGET)
        })
        .collect()
}

/// The clusters of [`interpret`] from each node's pointer ([`targets`]): the connected
/// components of the pointers (a pointer outside `0..n`, e.g. [`NO_TARGET`], is none).
///
/// In parallel: a lock-free union-find whose links always go from the larger root to the
/// smaller, so every component's root ends as its smallest node whatever the order in which
/// threads link (the result does not depend on the thread count), then
/// [`clusters_of_min_roots`].
pub fn interpret_targets(target: &[u32]) -> Vec<Vec<usize>> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let n = target.len();
    let parent: Vec<AtomicUsize> = (0..n).into_par_iter().map(AtomicUsize::new).collect();
    // The root of `x`, halving the path on the way (a parent only ever moves to an ancestor,
    // so a failed or stale halving step is harmless).
    let find = |mut x: usize| loop {
        let p = parent[x].load(Relaxed);
        if p == x {
            return x;
        }
        let gp = parent[p].load(Relaxed);
        if gp != p {
            let _ = parent[x].compare_exchange_weak(p, gp, Relaxed, Relaxed);
        }
        x = gp;
    };
    target
        .par_iter()
        .enumerate()
        .with_min_len(1 << 12)
        .for_each(|(j, &t)| {
            let t = t as usize;
            if t >= n {
                return;
            }
            loop {
                let (a, b) = (find(t), find(j));
                if a == b {
                    return;
                }
                let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                // Link `hi` under `lo` only while `hi` is still a root; else look again.
                if parent[hi]
                    .compare_exchange(hi, lo, Relaxed, Relaxed)
                    .is_ok()
                {
                    return;
                }
            }
        });
    let root: Vec<usize> = (0..n).into_par_iter().map(find).collect();
    clusters_of_min_roots(&root)
}

/// [`clusters_from_roots`] for labels that are each cluster's smallest member (`root[u] ≤
/// u` and `root[root[u]] = root[u]`, as [`interpret_targets`]' union-find leaves them): the
/// cluster sizes by atomic counts and the order of the clusters (size descending, smallest
/// member) in parallel, then one pass places the nodes in ascending order into a flat array
/// cut at the cluster starts, and the clusters are copied out of it in parallel.
pub fn clusters_of_min_roots(root: &[usize]) -> Vec<Vec<usize>> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let n = root.len();
    debug_assert!(root
        .iter()
        .enumerate()
        .all(|(u, &r)| r <= u && root[r] == r));
    let size: Vec<AtomicUsize> = (0..n)
        .into_par_iter()
        .map(|_| AtomicUsize::new(0))
        .collect();
    root.par_iter().with_min_len(1 << 12).for_each(|&r| {
        size[r].fetch_add(1, Relaxed);
    });
    let size: Vec<usize> = size.into_par_iter().map(AtomicUsize::into_inner).collect();
    // The roots, largest cluster first, ties by the root (its smallest member).
    let mut order: Vec<usize> = (0..n).into_par_iter().filter(|&u| root[u] == u).collect();
    order.par_sort_unstable_by(|&a, &b| size[b].cmp(&size[a]).then(a.cmp(&b)));
    // `next[r]`: where the next member of root r's cluster goes in `flat`.
    let mut next = vec![0usize; n];
    let mut start = Vec::with_capacity(order.len() + 1);
    let mut at = 0;
    for &r in &order {
        start.push(at);
        next[r] = at;
        at += size[r];
    }
    start.push(at);
    let mut flat = vec![0usize; n];
    for (u, &r) in root.iter().enumerate() {
        flat[next[r]] = u;
        next[r] += 1;
    }
    start
        .par_windows(2)
        .map(|w| flat[w[0]..w[1]].to_vec())
        .collect()
}

/// Groups nodes by label; clusters sorted largest first, ties by smallest member.
pub fn clusters_from_roots(root: &[usize]) -> Vec<Vec<usize>> {
    let mut map = std::collections::HashMap::new();
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for (u, &r) in root.iter().enumerate() {
        let c = *map.entry(r).or_insert_with(|| {
            clusters.push(Vec::new());
            clusters.len() - 1
        });
        clusters[c].push(u);
    }
    sort_clusters(&mut clusters);
    clusters
}

/// Sorts members, then clusters largest first, ties by smallest member.
pub fn sort_clusters(clusters: &mut [Vec<usize>]) {
    for c in clusters.iter_mut() {
        c.sort_unstable();
    }
    clusters.sort_by(|a, b| b.len().cmp(&a.len()).then(a.first().cmp(&b.first())));
}

/// Which of two clusterings' clusters differ: `None` when they are the same partition, else a
/// short description of the first difference (for test messages).
pub fn partition_difference(a: &[Vec<usize>], b: &[Vec<usize>]) -> Option<String> {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    sort_clusters(&mut a);
    sort_clusters(&mut b);
    if a == b {
        return None;
    }
    if a.len() != b.len() {
        return Some(format!("{} clusters vs {}", a.len(), b.len()));
    }
    let (x, y) = a.iter().zip(&b).find(|(x, y)| x != y)?;
    let show = |c: &Vec<usize>| {
        let s: Vec<String> = c.iter().take(12).map(|u| u.to_string()).collect();
        format!("[{}{}]", s.join(" "), if c.len() > 12 { " …" } else { "" })
    };
    Some(format!("cluster {} vs {}", show(x), show(y)))
}

/// Clustering of a graph with no nodes.
pub fn empty_clustering() -> Clustering {
    Clustering {
        clusters: Vec::new(),
        iterations: 0,
        chaos: 0.0,
        change: 0.0,
        stop: StopReason::Chaos,
        converged: true,
        timings: MclTimings::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_round_trips() {
        assert_eq!(to_fixed(1.0f64), 1u64 << 60);
        assert_eq!(from_fixed::<f64>(1u64 << 59), 0.5);
        assert_eq!(to_fixed(0.0f32), 0);
    }

    #[test]
    fn options_are_validated() {
        let ok = MclOptions::default();
        assert!(ok.validate().is_ok());
        for bad in [
            MclOptions {
                inflation: 1.0,
                ..ok.clone()
            },
            MclOptions {
                inflation: f64::NAN,
                ..ok.clone()
            },
            MclOptions {
                max_per_column: 0,
                ..ok.clone()
            },
            MclOptions {
                balance: -1.0,
                ..ok.clone()
            },
            MclOptions {
                prune_threshold: 1.0,
                ..ok.clone()
            },
            MclOptions {
                local_table: Some(3),
                ..ok.clone()
            },
            MclOptions {
                local_table: Some(2 * gpu::LCAP),
                ..ok.clone()
            },
            MclOptions {
                column_wg: Some(100),
                ..ok.clone()
            },
            MclOptions {
                column_wg: Some(16),
                ..ok.clone()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        for good in [
            MclOptions {
                local_table: Some(4),
                column_wg: Some(1024),
                ..ok.clone()
            },
            MclOptions {
                local_table: Some(gpu::LCAP),
                column_wg: Some(32),
                ..ok.clone()
            },
        ] {
            assert!(good.validate().is_ok(), "{good:?}");
        }
    }

    #[test]
    fn transition_columns_sum_to_one_with_loops() {
        let g = Graph::from_weighted_edges(4, [(0, 1, 2.0), (1, 2, 1.0)]).unwrap();
        let t = Transition::new(&g, &MclOptions::default()).unwrap();
        // Column 1: rows 0, 1 (loop = max weight 2), 2.
        assert_eq!(t.column(1).0, [0, 1, 2]);
        let v = t.column(1).1;
        assert!((v[0] - 0.4).abs() < 1e-15 && (v[1] - 0.4).abs() < 1e-15);
        // Isolated node 3: a loop of 1.
        assert_eq!(t.column(3), (&[3u32][..], &[1.0][..]));
        for j in 0..4 {
            assert!((t.column(j).1.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn bad_weights_are_errors() {
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let g = Graph::from_weighted_edges(2, [(0, 1, w)]).unwrap();
            assert!(Transition::new(&g, &MclOptions::default()).is_err(), "{w}");
        }
        // The first bad weight is named, whichever thread finds one.
        let edges = (0..50_000).map(|u| (u, u + 1, if u >= 30_000 { -(u as f64) } else { 1.0 }));
        let g = Graph::from_weighted_edges(50_001, edges).unwrap();
        let e = Transition::new(&g, &MclOptions::default()).unwrap_err();
        assert!(e.to_string().contains("found -30000"), "{e}");
    }

    /// A small xorshift, for test graphs.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Test graphs of `n` nodes: an unweighted one (all of a column's values equal: the
    /// starting `M` needs no sort) and a weighted one with many tied weights, hubs and
    /// isolated nodes (columns that need the sort, ties broken by row).
    fn graphs(n: usize) -> [Graph; 2] {
        let mut r = rng(7);
        let mut plain = Vec::new();
        let mut weighted = Vec::new();
        for u in 0..n - n / 50 {
            let d = 1 + (r() % 12) as usize;
            for _ in 0..d {
                let v = (r() % (n as u64)) as usize;
                plain.push((u, v));
                weighted.push((u, v, 1.0 + (r() % 3) as f64));
            }
            if u % 997 == 0 {
                // A hub: more than K neighbours.
                for v in 0..200 {
                    weighted.push((u, (u + 1 + v * 31) % n, 0.5));
                }
            }
        }
        [
            Graph::from_edges(n, plain).unwrap(),
            Graph::from_weighted_edges(n, weighted).unwrap(),
        ]
    }

    /// Runs `f` on a rayon pool of `threads` threads.
    fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    #[test]
    fn preparation_does_not_depend_on_the_thread_count() {
        for g in graphs(40_000) {
            for opts in [
                MclOptions::default(),
                MclOptions {
                    max_per_column: 7,
                    self_loop_weight: 0.0,
                    ..MclOptions::default()
                },
            ] {
                let k = opts.max_per_column;
                let run = || {
                    let tr = Transition::new(&g, &opts).unwrap();
                    let plan = gpu::GpuPlan::new(&tr, &opts, 512, 8, 1 << 40, "t", "d").unwrap();
                    let m0 = Columns::<f64>::initial(&tr, k).unwrap();
                    let m32 = Columns::<f32>::initial(&tr, k).unwrap();
                    let v32 = tr.values::<f32>().into_owned();
                    (tr, plan, m0, m32, v32)
                };
                let one = on_threads(1, run);
                let three = on_threads(3, run);
                assert!(one == three, "k = {k}: 1 thread and 3 threads differ");
                let (tr, _, m0, _, v32) = one;
                assert!(matches!(tr.values::<f64>(), std::borrow::Cow::Borrowed(_)));
                assert_eq!(v32, tr.val.iter().map(|&x| x as f32).collect::<Vec<_>>());
                // Against the plain definition: every column sorted (value descending, ties by
                // row), cut to K, divided by the sum of what is left.
                for j in 0..tr.n {
                    let (r, v) = tr.column(j);
                    let mut col: Vec<(u32, f64)> =
                        r.iter().copied().zip(v.iter().copied()).collect();
                    col.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
                    col.truncate(k);
                    let s: f64 = col.iter().map(|e| e.1).sum();
                    let want: Vec<(u32, f64)> = col.iter().map(|&(i, x)| (i, x / s)).collect();
                    let (gi, gv) = m0.column(j);
                    let got: Vec<(u32, f64)> = gi.iter().copied().zip(gv.iter().copied()).collect();
                    assert_eq!(got, want, "column {j}");
                }
            }
        }
    }

    /// The sequential union-find and grouping (the definition of [`interpret_targets`]).
    fn components(target: &[u32]) -> Vec<Vec<usize>> {
        let n = target.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                x = p[x];
            }
            x
        }
        for (j, &t) in target.iter().enumerate() {
            if (t as usize) < n {
                let (a, b) = (find(&mut parent, t as usize), find(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
        let root: Vec<usize> = (0..n).map(|j| find(&mut parent, j)).collect();
        clusters_from_roots(&root)
    }

    #[test]
    fn interpretation_does_not_depend_on_the_thread_count() {
        let mut r = rng(11);
        for (n, spread) in [(1, 1), (7, 3), (50_000, 40), (50_000, 50_000), (30_000, 2)] {
            // Pointers into a window of `spread` (clusters of every size), some none, some
            // out of range, some self-pointers, cycles.
            let target: Vec<u32> = (0..n)
                .map(|j| match r() % 20 {
                    0 => NO_TARGET,
                    1 => (n + 5) as u32,
                    2 => j as u32,
                    _ => ((j as u64 + r() % spread) % n as u64) as u32,
                })
                .collect();
            let want = components(&target);
            for threads in [1, 2, 4] {
                let got = on_threads(threads, || interpret_targets(&target));
                assert!(
                    got == want,
                    "n = {n}, {threads} threads: {:?}",
                    partition_difference(&got, &want)
                );
            }
        }
        assert!(interpret_targets(&[]).is_empty());
    }
}

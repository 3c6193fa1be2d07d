//! Regularized Markov clustering (R-MCL): the [`MarkovCluster`] trait, its options, the
//! preparation every backend shares, the cluster interpretation, a sequential f64 reference
//! ([`reference`](mod@reference)) and the scoring of clusters against gold-standard complexes ([`eval`]).
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
//!    a balance after Satuluri, Parthasarathy & Ucar 2010 (MLR-MCL's own formula is the other
//!    variant, [`Variant::MlrMcl`], see [`mlr`]): row `i` of the product is scaled by
//!    the penalty `max(m_i, 1)^(−p)`, where `m = M·1` is the flow node `i` already attracts
//!    and `p` = [`MclOptions::mass_penalty`], so flow into a node that attracts more than its own
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

use crate::backend::Backend;
use crate::comm::Layout;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::scalar::Scalar;

mod clusters;
pub(crate) mod columns;
pub mod drive;
pub mod eval;
pub mod gpu;
pub mod mlr;
pub mod pass;
pub mod ranks;
pub mod reference;
mod step;
#[cfg(test)]
mod tests;

pub use clusters::{
    clusters_from_roots, clusters_of_min_roots, empty_clustering, interpret, interpret_targets,
    partition_difference, sort_clusters, targets, NO_TARGET,
};
pub use columns::{Columns, Transition, TransitionPart};
pub use step::{
    column_change, column_step, from_fixed, inflate, inflation_scale, penalty, to_fixed, to_mass,
    FINISH_AFTER, FIXED_SCALE, MASS_SCALE, STATIONARY_TOLERANCE,
};

/// Which R-MCL: Trident's (the module docs above) or the authors' (MLR-MCL 1.2's, see
/// [`mlr`]). Each has its own parameters in [`MclOptions`]; a field that belongs to the other
/// variant is ignored, and the CLI refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// Trident's R-MCL: `A + I` normalised, the row mass penalty
    /// ([`MclOptions::mass_penalty`]), pruning relative to the column sum with a top-`K`,
    /// the `M·M` finish, chaos and stationarity stops, attractor systems merged.
    #[default]
    Trident,
    /// MLR-MCL 1.2's R-MCL (Satuluri & Parthasarathy): `M_G` weights `1/dᵢ + 1/dⱼ`, the
    /// column-mass balance ([`MclOptions::balance`]), its adaptive pruning threshold, the
    /// Frobenius stop and the DPR phase, nodes grouped by attractor; multi-level when
    /// [`MclOptions::coarsen_to`] > 0. See [`mlr`].
    MlrMcl,
}

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
    /// Which R-MCL (default [`Variant::Trident`]; [`MclOptions::mlrmcl`] gives MLR-MCL's
    /// defaults).
    pub variant: Variant,
    /// Inflation exponent `r > 1` (default 2.0); larger gives smaller clusters. Both variants.
    pub inflation: f64,
    /// [`Variant::Trident`]: mass penalty exponent `p ≥ 0` (default 0.5): flow into node `i`
    /// is scaled by `max(m_i, 1)^(−p)`, where `m_i` is the flow `i` already attracts. 0
    /// turns it off (plain R-MCL); 0.5 keeps the yeast networks from collapsing into a few
    /// giant clusters. (Named `balance` before MLR-MCL's balance, a different formula, came
    /// in.)
    pub mass_penalty: f64,
    /// [`Variant::MlrMcl`]: MLR-MCL's balance `b ≥ 0` (its `-b`, default 0.5): each
    /// iteration the entries of `M_G` in row `y` are scaled by `k_y^(−b)` where the column
    /// mass `k_y = Σ_x M(x,y)·rowsum_x` exceeds 1, and `M_G` is renormalised (see [`mlr`]).
    pub balance: f64,
    /// [`Variant::MlrMcl`]: coarsen the graph by heavy-edge matching until at most this many
    /// nodes remain, cluster the coarsest graph, project the flow down a level at a time
    /// (MLR-MCL's `-c`; default 0: single level, [`MclOptions::mlrmcl`] gives MLR-MCL's
    /// 1000). A graph of at most this many nodes is clustered single-level.
    pub coarsen_to: usize,
    /// [`Variant::MlrMcl`]: iterations on every coarse level (default 4).
    pub iterations_per_level: usize,
    /// [`Variant::MlrMcl`]: the DPR phase keeps an edge `(y, i)` of `M_G` only when
    /// `‖M(:,i) − M(:,y)‖₂` is below this (default 0.4).
    pub dpr_threshold: f64,
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
    /// GPU backends over many ranks: [`Layout::Replicate`] holds all of `M` on every device,
    /// gathered after every iteration (device to device where NCCL serves); [`Layout::Partition`]
    /// holds a rank's columns and the columns its expansion needs (`M_G`'s neighbours, or in
    /// the `M·M` phase the rows of its columns), fetched from their owners every iteration
    /// through the hosts, for a network whose `M` does not fit one device twice;
    /// [`Layout::Auto`] (the default) replicates when that fits every rank's device. The
    /// partition does not depend on it. The CPU backend always partitions; one process
    /// ignores it.
    pub layout: Layout,
    /// GPU backends over many ranks, [`Layout::Replicate`]: packed entries per round of the
    /// gather of `M` after every iteration (default `None`: [`gpu::GATHER_ROUND`]). A rank
    /// holds one round's entries, not every rank's, so smaller rounds save device memory for
    /// more launches; the conformance suite forces small ones. The partition does not
    /// depend on it.
    pub gather_round: Option<usize>,
}

impl Default for MclOptions {
    fn default() -> Self {
        Self {
            variant: Variant::Trident,
            inflation: 2.0,
            mass_penalty: 0.5,
            balance: 0.5,
            coarsen_to: 0,
            iterations_per_level: mlr::ITERATIONS_PER_LEVEL,
            dpr_threshold: mlr::DPR_THRESHOLD,
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
            layout: Layout::Auto,
            gather_round: None,
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
        if !(self.mass_penalty.is_finite() && self.mass_penalty >= 0.0) {
            return bad(format!(
                "mass penalty must be >= 0, got {}",
                self.mass_penalty
            ));
        }
        if !(self.balance.is_finite() && self.balance >= 0.0) {
            return bad(format!("balance must be >= 0, got {}", self.balance));
        }
        if !(self.dpr_threshold.is_finite() && self.dpr_threshold > 0.0) {
            return bad(format!(
                "DPR threshold must be > 0, got {}",
                self.dpr_threshold
            ));
        }
        if self.variant == Variant::MlrMcl && self.coarsen_to > 0 && self.iterations_per_level == 0
        {
            return bad("iterations per coarse level must be >= 1".to_string());
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
        if self.gather_round == Some(0) {
            return bad("the gather's rounds must hold at least one entry, got 0".into());
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

    /// MLR-MCL 1.2's defaults ([`Variant::MlrMcl`]): inflation 2, balance 0.5, coarsening
    /// to 1000 nodes, 4 iterations per coarse level, at most 25 at full size, DPR threshold
    /// 0.4. `K` ([`MclOptions::max_per_column`]) bounds storage only (MLR-MCL keeps no top
    /// K): 256, which its pruning rarely reaches.
    pub fn mlrmcl() -> Self {
        Self {
            variant: Variant::MlrMcl,
            coarsen_to: mlr::COARSEN_TO,
            max_iterations: mlr::MAX_ITERATIONS,
            max_per_column: mlr::K,
            ..Self::default()
        }
    }

    /// True when Trident's mass penalty is applied (its variant, regularised expansion and
    /// `p > 0`) in the R-MCL iterations.
    pub fn balanced(&self) -> bool {
        self.variant == Variant::Trident
            && self.expansion == Expansion::Regularized
            && self.mass_penalty > 0.0
    }

    /// The expansion of iteration `iteration` (0-based): [`Expansion::Mcl`] throughout for
    /// `Mcl`; for `Regularized`, R-MCL's `M·M_R` for the first
    /// [`MclOptions::finish_after`] iterations (all of them when it is 0), then `M·M`.
    pub fn expansion_at(&self, iteration: usize) -> Expansion {
        if self.variant == Variant::MlrMcl {
            return Expansion::Regularized;
        }
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
    /// Levels run: 1, or more in MLR-MCL's multi-level mode ([`MclOptions::coarsen_to`]).
    /// [`Clustering::iterations`] counts the iterations of all of them.
    pub levels: usize,
    /// Where the time went.
    pub timings: MclTimings,
}

/// Seconds spent in each phase of a clustering run (zero where a phase does not apply).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MclTimings {
    /// Building `M_G` and the starting `M`, planning device memory, loading the kernels.
    pub prepare: f64,
    /// MLR-MCL's multi-level mode: coarsening the graph (part of `prepare`) and projecting
    /// the flow between levels, on the host.
    pub coarsen: f64,
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
    /// Over many ranks: the gathers of every rank's new columns after each iteration (part
    /// of `iterate`; the GPU backends' device pass).
    pub gather: f64,
    /// The bytes this rank received in those gathers.
    pub gather_bytes: u64,
    /// The gathers (replicated) or the fetches (partitioned) went device to device (NCCL),
    /// not through the hosts.
    pub gather_device: bool,
    /// Over ranks on a GPU backend: `M` was partitioned ([`Layout::Partition`]: each rank
    /// fetched the columns it read every iteration) rather than gathered whole.
    pub partitioned: bool,
    /// Partitioned: the host's share of the fetches (part of `gather`).
    pub fetch: FetchTimes,
}

/// Where the host's time in the partitioned layout's fetches went (seconds, summed over the
/// iterations; the device's packing and the exchange run behind them and are not counted).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FetchTimes {
    /// `M·M`: marking the rows held elsewhere (the bitmap read back), agreeing the routes
    /// with their owners and making the selections.
    pub route: f64,
    /// The columns' lengths moved and exchanged on the device, and each rank's part of the
    /// packed entries read back.
    pub lengths: f64,
    /// The entries: buffers sized, packing and unpacking launched, the exchange issued.
    pub entries: f64,
    /// `M·M`: this rank's columns made the right operand (`slot_rows`).
    pub operand: f64,
}

impl std::ops::AddAssign for FetchTimes {
    fn add_assign(&mut self, o: Self) {
        self.route += o.route;
        self.lengths += o.lengths;
        self.entries += o.entries;
        self.operand += o.operand;
    }
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
    /// 1-based iteration number (counting every level's).
    pub iteration: usize,
    /// Level of a multi-level run (0: full size).
    pub level: usize,
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
    /// Runs the iterations of one level from `m0` on `M_G` = `tr`, as [`mlr::Schedule`]
    /// says for `opts` and `level`, and returns what `output` asks for (the backend's part
    /// of a run; [`drive::cluster`] drives the levels). `progress` gets level-local
    /// iteration numbers.
    fn cluster_level(
        &self,
        tr: &Transition,
        m0: Columns<T>,
        opts: &MclOptions,
        level: mlr::Level,
        output: drive::Output,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<drive::LevelRun<T>>;

    /// [`MarkovCluster::cluster_level`] over the ranks of `c`, every rank with its part of
    /// `M_G` ([`TransitionPart`]: its block of columns, [`Transition::column_splits`]) and
    /// returning the whole output: each rank computes its block, of which `m0` must hold the
    /// starting values (its other columns are not read), and the run is one process's, bit
    /// for bit. The GPU backends run their device
    /// pass ([`gpu::cluster_level`]); the default (the CPU) runs the host pass over the
    /// ranks ([`ranks::cluster_level`]), and one rank is [`MarkovCluster::cluster_level`].
    #[allow(clippy::too_many_arguments)]
    fn cluster_level_ranks(
        &self,
        c: &dyn crate::comm::Comm,
        part: &TransitionPart,
        m0: Columns<T>,
        opts: &MclOptions,
        level: mlr::Level,
        output: drive::Output,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<drive::LevelRun<T>> {
        if c.size() == 1 {
            self.cluster_level(&part.own, m0, opts, level, output, progress)
        } else {
            ranks::cluster_level(c, part, m0, opts, level, output, progress)
        }
    }

    /// The device round trip of the gathers' packing (`m` uploaded, packed to its entries,
    /// unpacked into fresh slots, read back), for the conformance suite: one process
    /// launches every packing kernel, so that the sanitizers see them without thread-ranks.
    /// The partitioned fetch's selections go there and back too, and its `M·M` rows are
    /// marked and made slots, all checked on the host (an error names the first entry or
    /// column that differs). `None` where the backend has no device pass (the CPU).
    #[doc(hidden)]
    fn pack_round_trip(&self, m: &Columns<T>) -> Option<Result<Columns<T>>> {
        let _ = m;
        None
    }

    /// Clusters the nodes of `g`, calling `progress` after every iteration.
    fn cluster_with_progress(
        &self,
        g: &Graph,
        opts: &MclOptions,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering> {
        drive::cluster::<T, Self>(self, g, opts, progress)
    }

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

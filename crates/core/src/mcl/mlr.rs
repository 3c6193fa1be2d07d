//! MLR-MCL's R-MCL ([`Variant::MlrMcl`]): the authors' algorithm (Satuluri & Parthasarathy,
//! KDD 2009; Satuluri, Parthasarathy & Ucar 2010) as MLR-MCL 1.2 computes it, in the pieces
//! that differ from Trident's variant. Every backend runs them; the GPU kernels
//! (`kernels/opencl/mcl.cl`) mirror them step by step, with the same fixed-point sums, so
//! all backends give the same partition.
//!
//! 1. **`M_G`** ([`super::Transition::new`]): every node gets a self-loop of weight 1 (the
//!    largest weight of its edges in a weighted graph); edge `(i, j)` weighs
//!    `w_ij·(1/dᵢ + 1/dⱼ)`, `d` the weighted degree counting the loop; columns normalised.
//! 2. **Balance** ([`column_penalties`], [`regularize`]): before each iteration, with the row
//!    sums `r_x = Σ_c M(x,c)` (fixed point at 2^32, as Trident's mass) and the column masses
//!    `k_y = Σ_x M(x,y)·r_x`, row `y` of `M_G` is scaled by `k_y^(−b)` where `k_y > 1`, and
//!    each column renormalised (a fixed-point sum): `M_R`. Then `M ← M·M_R`.
//! 3. **Inflation and pruning** ([`prune_cut`]): each column is raised to `r` (computed, as
//!    in Trident's variant, relative to its maximum so that no `r` under- or overflows), then
//!    entries below `0.9·avg·(1 − 2(max − avg))` of the unnormalised inflated column (clamped
//!    to `[1e-7, max]`) are dropped; no top `K` beyond the storage bound `K`
//!    ([`MclOptions::max_per_column`]; MLR-MCL has none, see "Differences").
//! 4. **Stopping and DPR** ([`Schedule`]): at full size, from iteration [`CHANGE_FROM`] on,
//!    the change `‖M_t − M_(t−1)‖_F / n` is measured; below [`STOP_CHANGE`] the run stops.
//!    The first time it is below [`DPR_CHANGE`], `M_G` is replaced once by its DPR form
//!    ([`dpr`]): column `i` keeps the entries `(y, i)` with `‖M(:,i) − M(:,y)‖₂` below
//!    [`MclOptions::dpr_threshold`], renormalised; the balance is off from then on. At most
//!    [`MclOptions::max_iterations`] (MLR-MCL: 25) iterations.
//! 5. **Clusters** ([`attractor_clusters`]): each node joins its attractor, the row of the
//!    largest entry of its column (ties: the smaller row; an entry above 0.5 is the largest),
//!    nodes grouped by equal attractor, no transitive merging.
//! 6. **Multi-level** ([`coarsen`]): with [`MclOptions::coarsen_to`] > 0 the graph is
//!    coarsened by heavy-edge matching, each coarse level runs
//!    [`MclOptions::iterations_per_level`] iterations (no stop test, no DPR), and the flow is
//!    projected to the finer level; full size runs as in 4.
//!
//! # Differences from MLR-MCL 1.2, named
//! - Precision: MLR-MCL computes in `float` with sequential sums; Trident in `f32` or `f64`
//!   with fixed-point sums (the same bits on every backend).
//! - `K`: MLR-MCL keeps every entry above its threshold; Trident stores at most `K` per
//!   column (default 256 in this variant), keeping the largest.
//! - The change at iteration 10: MLR-MCL compares it against a matrix whose columns are not
//!   sorted yet, which overstates it, so its first usable change is iteration 11's; Trident
//!   measures from iteration 11 ([`CHANGE_FROM`]), the same schedule in practice.
//! - Matching: MLR-MCL visits nodes in a random order from `rand()`; Trident in a fixed
//!   order ([`coarsen`]), so coarse graphs differ.
//! - Weights: MLR-MCL reads integer weights only; Trident keeps real weights.
//! - Inflation relative to the column maximum: when `x^r` underflows (`r` ≥ about 20 in
//!   `float`), MLR-MCL's column becomes zero and its pruning degenerate; Trident keeps the
//!   largest entries.

use rayon::prelude::*;

pub use super::step::{
    column_change_sq, column_distance_sq, prune_cut, PRUNE_A, PRUNE_B, PRUNE_FLOOR,
};
use super::{
    from_fixed, to_fixed, to_mass, Columns, Expansion, MclOptions, StopReason, Transition, Variant,
    MASS_SCALE,
};
use crate::scalar::Scalar;

pub mod coarsen;
pub use super::columns::edge_weight;

/// MLR-MCL's default size of the coarsest graph (`-c`).
pub const COARSEN_TO: usize = 1000;
/// MLR-MCL's iterations per coarse level.
pub const ITERATIONS_PER_LEVEL: usize = 4;
/// MLR-MCL's iterations at full size.
pub const MAX_ITERATIONS: usize = 25;
/// MLR-MCL's DPR distance threshold.
pub const DPR_THRESHOLD: f64 = 0.4;
/// Storage bound `K` of [`MclOptions::mlrmcl`].
pub const K: usize = 256;
/// First 0-based iteration whose change `‖ΔM‖_F / n` is measured (see the module docs).
pub const CHANGE_FROM: usize = 11;
/// The run stops when the change falls below this.
pub const STOP_CHANGE: f64 = 1e-5;
/// The DPR phase starts when the change first falls below this.
pub const DPR_CHANGE: f64 = 1e-3;
/// Right shift from a column's fixed-point squared change (2^60) to the scale of their
/// total (2^32): each column's is at most 2, so the total of `n < 2^31` columns fits.
pub const CHANGE_SHIFT: u32 = 28;

/// Which level of a multi-level run an iteration loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Full size (single level, or the last of a multi-level run): stop test, DPR, the
    /// iteration cap.
    Finest,
    /// A coarse level: exactly [`MclOptions::iterations_per_level`] iterations.
    Coarse,
}

/// What the next iteration does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IterationPlan {
    /// The expansion (MLR-MCL: always `M·M_R`).
    pub expansion: Expansion,
    /// Trident's row mass penalty.
    pub row_penalty: bool,
    /// MLR-MCL's column balance: expand by `M_R` ([`regularize`]) instead of `M_G`.
    pub column_balance: bool,
    /// Replace `M_G` by its DPR form ([`dpr`]) before this iteration (once).
    pub start_dpr: bool,
}

/// The iteration control every backend's loop consults (one definition of both variants'
/// stopping rules and phases): [`Schedule::plan_next`] before each iteration, then
/// [`Schedule::record`] with what it measured.
#[derive(Debug, Clone)]
pub struct Schedule<'a> {
    opts: &'a MclOptions,
    level: Level,
    /// Iterations run.
    pub iterations: usize,
    dpr: bool,
    /// Global chaos of the last iteration (infinite before the first).
    pub chaos: f64,
    /// Change of the last iteration: Trident's largest column L1 change; MLR-MCL's
    /// `‖ΔM‖_F / n` (infinite while not measured).
    pub change: f64,
}

impl<'a> Schedule<'a> {
    /// The schedule of one level.
    pub fn new(opts: &'a MclOptions, level: Level) -> Self {
        Self {
            opts,
            level,
            iterations: 0,
            dpr: false,
            chaos: f64::INFINITY,
            change: f64::INFINITY,
        }
    }

    /// `Err(reason)` to stop, else what the next iteration does.
    pub fn plan_next(&mut self) -> std::result::Result<IterationPlan, StopReason> {
        let o = self.opts;
        let t = self.iterations;
        match o.variant {
            Variant::Trident => {
                if let Some(r) = super::stop_reason(o, t, self.chaos, self.change) {
                    return Err(r);
                }
                Ok(IterationPlan {
                    expansion: o.expansion_at(t),
                    row_penalty: o.balanced_at(t),
                    column_balance: false,
                    start_dpr: false,
                })
            }
            Variant::MlrMcl => {
                let finest = self.level == Level::Finest;
                if finest && self.change < STOP_CHANGE {
                    return Err(StopReason::Stationary);
                }
                let cap = if finest {
                    o.max_iterations
                } else {
                    o.iterations_per_level
                };
                if t >= cap {
                    return Err(StopReason::IterationCap);
                }
                let start_dpr = finest && !self.dpr && self.change < DPR_CHANGE;
                self.dpr |= start_dpr;
                Ok(IterationPlan {
                    expansion: Expansion::Regularized,
                    row_penalty: false,
                    column_balance: o.balance > 0.0 && !self.dpr,
                    start_dpr,
                })
            }
        }
    }

    /// Records the iteration just run: its chaos, Trident's largest column L1 change
    /// (`l1`), and MLR-MCL's total squared change in fixed point at 2^32 (`sq`, the sum of
    /// each column's [`column_change_sq`] shifted right by [`CHANGE_SHIFT`]).
    pub fn record(&mut self, n: usize, chaos: f64, l1: f64, sq: u64) {
        let t = self.iterations;
        self.iterations += 1;
        self.chaos = chaos;
        self.change = match self.opts.variant {
            Variant::Trident => l1,
            Variant::MlrMcl if self.level == Level::Finest && t >= CHANGE_FROM => {
                frobenius_change(sq, n)
            }
            Variant::MlrMcl => f64::INFINITY,
        };
    }
}

/// `‖ΔM‖_F / n` from the fixed-point total `sq` (2^32) of the squared column changes.
pub fn frobenius_change(sq: u64, n: usize) -> f64 {
    (sq as f64 / MASS_SCALE).sqrt() / n.max(1) as f64
}

/// The balance penalties of the columns of `M` ([`MclOptions::balance`] = `b`): with the row
/// sums `r_x` in fixed point at 2^32 ([`to_mass`]), the column mass `k_y = Σ_x M(x,y)·r_x`
/// in fixed point at 2^32 (each term rounded to `T`, then [`to_mass`]), and `pen_y =
/// k_y^(−b)` where `k_y > 1`, else 1 (`b` = 0.5 and 1 as `1/√k` and `1/k`).
pub fn column_penalties<T: Scalar>(m: &Columns<T>, b: f64) -> Vec<T> {
    penalties_from_mass(m, &row_masses(m, m.n), b)
}

/// Each of the `rows` rows' mass over the columns of `m` (fixed point, [`to_mass`]): a
/// distributed run sums these over its ranks.
pub fn row_masses<T: Scalar>(m: &Columns<T>, rows: usize) -> Vec<u64> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let mass: Vec<AtomicU64> = (0..rows).map(|_| AtomicU64::new(0)).collect();
    (0..m.n).into_par_iter().with_min_len(256).for_each(|j| {
        let (r, v) = m.column(j);
        for (&i, &x) in r.iter().zip(v) {
            mass[i as usize].fetch_add(to_mass(x), Relaxed);
        }
    });
    mass.into_iter().map(AtomicU64::into_inner).collect()
}

/// [`column_penalties`] of the columns of `m` given the rows' masses `mass` (of the whole
/// `M`: a distributed run's columns are a part of it).
pub fn penalties_from_mass<T: Scalar>(m: &Columns<T>, mass: &[u64], b: f64) -> Vec<T> {
    (0..m.n)
        .into_par_iter()
        .with_min_len(256)
        .map(|y| {
            let (r, v) = m.column(y);
            let k = r.iter().zip(v).fold(0u64, |k, (&x, &f)| {
                k.wrapping_add(to_mass(f * row_sum::<T>(mass[x as usize])))
            });
            column_penalty(k, b)
        })
        .collect()
}

/// A row sum in fixed point at 2^32 as `T`.
#[inline]
pub fn row_sum<T: Scalar>(mass: u64) -> T {
    <T as num_traits::NumCast>::from(mass).unwrap_or_else(T::zero) * T::from_f64(1.0 / MASS_SCALE)
}

/// The penalty of a column of fixed-point mass `k` (2^32): `k^(−b)` where `k > 1`, else 1.
#[inline]
pub fn column_penalty<T: Scalar>(k: u64, b: f64) -> T {
    let k = row_sum::<T>(k);
    if k <= T::one() {
        T::one()
    } else if b == 0.5 {
        T::one() / k.sqrt()
    } else if b == 1.0 {
        T::one() / k
    } else {
        k.powf(T::from_f64(-b))
    }
}

/// `M_R` of one iteration: column `i` of `tr` with weights `w` (`M_G`'s, in `T`), each entry
/// `(y, i)` scaled by `pen[y]`, divided by the column's fixed-point sum of the scaled
/// weights. Written into `out` (as long as `w`).
pub fn regularize<T: Scalar>(tr: &Transition, w: &[T], pen: &[T], out: &mut [T]) {
    let ptr = &tr.ptr;
    let mut parts: Vec<(usize, &mut [T])> = Vec::new();
    let mut rest = out;
    const BLOCK: usize = 4096;
    for b0 in (0..tr.n).step_by(BLOCK) {
        let b1 = (b0 + BLOCK).min(tr.n);
        let (a, r) = std::mem::take(&mut rest).split_at_mut((ptr[b1] - ptr[b0]) as usize);
        rest = r;
        parts.push((b0, a));
    }
    parts.into_par_iter().for_each(|(b0, o)| {
        let base = ptr[b0] as usize;
        let b1 = (b0 + BLOCK).min(tr.n);
        for i in b0..b1 {
            let (a, b) = (ptr[i] as usize, ptr[i + 1] as usize);
            let s = (a..b).fold(0u64, |s, t| {
                s.wrapping_add(to_fixed(w[t] * pen[tr.row[t] as usize]))
            });
            let s = from_fixed::<T>(s);
            for t in a..b {
                o[t - base] = w[t] * pen[tr.row[t] as usize] / s;
            }
        }
    });
}

/// The DPR form of `M_G` (weights `w`, in `T`): entry `(y, i)` is kept when the distance
/// `√(from_fixed(column_distance_sq(M(:,i), M(:,y))))` is below `threshold` (the loop `y =
/// i` always is), and column `i`'s kept weights are divided by their fixed-point sum;
/// dropped entries become 0 (the expansion skips zero weights).
pub fn dpr<T: Scalar>(tr: &Transition, w: &[T], m: &Columns<T>, threshold: f64) -> Vec<T> {
    let th = T::from_f64(threshold);
    let cols: Vec<Vec<T>> = (0..tr.n)
        .into_par_iter()
        .with_min_len(64)
        .map(|i| {
            let (a, b) = (tr.ptr[i] as usize, tr.ptr[i + 1] as usize);
            let keep: Vec<bool> = (a..b)
                .map(|t| {
                    let y = tr.row[t] as usize;
                    y == i || {
                        let d = column_distance_sq(m.column(i), m.column(y));
                        from_fixed::<T>(d).sqrt() < th
                    }
                })
                .collect();
            let s = (a..b)
                .zip(&keep)
                .filter(|(_, &k)| k)
                .fold(0u64, |s, (t, _)| s.wrapping_add(to_fixed(w[t])));
            let s = from_fixed::<T>(s);
            (a..b)
                .zip(&keep)
                .map(|(t, &k)| if k { w[t] / s } else { T::zero() })
                .collect()
        })
        .collect();
    cols.into_iter().flatten().collect()
}

/// The clusters of MLR-MCL from each node's attractor (`targets[j]`, a row of column `j`,
/// or anything `≥ n` for none): nodes with the same attractor form a cluster, a node without
/// one is alone; largest first, ties by smallest node (as [`super::sort_clusters`]).
pub fn attractor_clusters(targets: &[u32]) -> Vec<Vec<usize>> {
    let n = targets.len();
    super::clusters::clusters_by_key(n, |u| {
        let t = targets[u];
        ((t as usize) < n).then_some(u64::from(t))
    })
}

#[cfg(test)]
mod tests;

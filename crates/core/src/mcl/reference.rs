//! The sequential f64 reference of R-MCL, written for clarity, not speed: a `BTreeMap` per
//! column, no threads, no scratch reuse. It sums like every backend (fixed point, see the
//! [module docs](super#determinism)) — plain f64 sums in another order would break exact ties
//! of symmetric graphs differently — so the conformance suite can demand the same partition.

use std::collections::BTreeMap;

use super::drive::{level_targets, LevelRun, Output};
use super::mlr::{self, Level, Schedule};
use super::{
    column_change, from_fixed, inflate, inflation_scale, penalty, to_fixed, to_mass, Clustering,
    Columns, Expansion, MarkovCluster, MclOptions, MclProgress, MclTimings, Transition, Variant,
};
use crate::backend::Backend;
use crate::error::Result;
use crate::graph::Graph;
use crate::scalar::Scalar;

/// The sequential reference as a backend (a [`MarkovCluster`] whose levels run one column
/// after another); [`crate::mcl::drive`] drives its levels as every backend's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sequential;

impl Backend for Sequential {
    fn name(&self) -> &'static str {
        "reference"
    }
    fn device(&self) -> String {
        "sequential f64 reference".to_string()
    }
}

/// Clusters `g` sequentially in `T` (see the [module docs](super) for the algorithm).
pub fn cluster<T: Scalar>(g: &Graph, opts: &MclOptions) -> Result<Clustering> {
    MarkovCluster::<T>::cluster(&Sequential, g, opts)
}

impl<T: Scalar> MarkovCluster<T> for Sequential {
    fn cluster_level(
        &self,
        tr: &Transition,
        m0: Columns<T>,
        opts: &MclOptions,
        level: Level,
        output: Output,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<LevelRun<T>> {
        level_run(tr, m0, opts, level, output, progress)
    }
}

fn level_run<T: Scalar>(
    tr: &Transition,
    m0: Columns<T>,
    opts: &MclOptions,
    level: Level,
    output: Output,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<LevelRun<T>> {
    let n = tr.n;
    let k = opts.max_per_column;
    // Columns as vectors of (row, value).
    let mut m: Vec<Vec<(u32, T)>> = (0..n)
        .map(|j| {
            let (r, v) = m0.column(j);
            r.iter().copied().zip(v.iter().copied()).collect()
        })
        .collect();
    let as_columns = |m: &Vec<Vec<(u32, T)>>| {
        let mut cols = Columns::<T> {
            n,
            k,
            idx: vec![0; n * k],
            val: vec![T::zero(); n * k],
            len: vec![0; n],
        };
        for (j, c) in m.iter().enumerate() {
            for (t, &(i, x)) in c.iter().enumerate() {
                cols.idx[j * k + t] = i;
                cols.val[j * k + t] = x;
            }
            cols.len[j] = c.len() as u32;
        }
        cols
    };
    let mut base: Vec<T> = tr.val.iter().map(|&x| T::from_f64(x)).collect();
    let mut sched = Schedule::new(opts, level);
    let stop = loop {
        let plan = match sched.plan_next() {
            Ok(p) => p,
            Err(reason) => break reason,
        };
        if plan.start_dpr {
            base = mlr::dpr(tr, &base, &as_columns(&m), opts.dpr_threshold);
        }
        // Trident's penalty per node: max(mass, floor)^(-p).
        let pen: Vec<T> = if plan.row_penalty {
            let mut mass = vec![0u64; n];
            for c in &m {
                for &(i, x) in c {
                    mass[i as usize] += to_mass(x);
                }
            }
            mass.iter()
                .map(|&x| penalty(x, opts.mass_penalty))
                .collect()
        } else {
            vec![T::one(); n]
        };
        // MLR-MCL's balance: M_R from the column masses.
        let rval: Vec<T> = if plan.column_balance {
            let cp = mlr::column_penalties(&as_columns(&m), opts.balance);
            let mut reg = vec![T::zero(); base.len()];
            mlr::regularize(tr, &base, &cp, &mut reg);
            reg
        } else {
            base.clone()
        };
        let mut next = Vec::with_capacity(n);
        let mut chaos = 0.0f64;
        let mut max_change: u64 = 0;
        let mut sq_total: u64 = 0;
        for j in 0..n {
            // The right operand's column j: (k, weight), zero weights (dropped by DPR) left out.
            let right: Vec<(usize, T)> = match plan.expansion {
                Expansion::Regularized => {
                    let (a, b) = (tr.ptr[j] as usize, tr.ptr[j + 1] as usize);
                    (a..b)
                        .map(|t| (tr.row[t] as usize, rval[t]))
                        .filter(|e| e.1 != T::zero())
                        .collect()
                }
                Expansion::Mcl => m[j].iter().map(|&(i, x)| (i as usize, x)).collect(),
            };
            let mut acc: BTreeMap<u32, u64> = BTreeMap::new();
            for &(kk, w) in &right {
                for &(i, x) in &m[kk] {
                    *acc.entry(i).or_insert(0) += to_fixed(x * w);
                }
            }
            // Penalty, then inflation relative to the column's maximum (see `inflate`).
            let x: Vec<(u32, T)> = acc
                .into_iter()
                .map(|(i, a)| (i, from_fixed::<T>(a) * pen[i as usize]))
                .collect();
            let max = x
                .iter()
                .fold(T::zero(), |m, e| if e.1 > m { e.1 } else { m });
            let scale = inflation_scale::<T>(x.len());
            let mut col: Vec<(u32, T)> = x
                .iter()
                .map(|&(i, v)| (i, inflate(v, max, opts.inflation, scale)))
                .collect();
            let s1: u64 = col.iter().map(|e| to_fixed(e.1)).sum();
            let cut = match opts.variant {
                Variant::Trident => T::from_f64(opts.prune_threshold) * from_fixed::<T>(s1),
                Variant::MlrMcl => mlr::prune_cut(s1, col.len(), max, opts.inflation, scale),
            };
            let kept: Vec<(u32, T)> = col.iter().copied().filter(|e| e.1 >= cut).collect();
            if !kept.is_empty() {
                col = kept;
            }
            col.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
            col.truncate(k);
            let s = from_fixed::<T>(col.iter().map(|e| to_fixed(e.1)).sum());
            col.iter_mut().for_each(|e| e.1 /= s);
            let max = col.first().map_or(T::zero(), |e| e.1);
            let sq = from_fixed::<T>(col.iter().map(|e| to_fixed(e.1 * e.1)).sum());
            chaos = chaos.max((max - sq).max(T::zero()).to_f64());
            // The change from the previous column j: L1 (Trident) or squared L2 (MLR-MCL).
            let (pr, pv): (Vec<u32>, Vec<T>) = m[j].iter().copied().unzip();
            let (nr, nv): (Vec<u32>, Vec<T>) = col.iter().copied().unzip();
            max_change = max_change.max(column_change((&pr, &pv), (&nr, &nv)));
            let d2 = mlr::column_change_sq((&pr, &pv), (&nr, &nv));
            sq_total = sq_total.wrapping_add(d2 >> mlr::CHANGE_SHIFT);
            next.push(col);
        }
        m = next;
        let l1 = from_fixed::<T>(max_change).to_f64();
        sched.record(n, chaos, l1, sq_total);
        progress(&MclProgress {
            iteration: sched.iterations,
            level: 0,
            chaos: sched.chaos,
            change: sched.change,
            entries: m.iter().map(|c| c.len() as u64).sum(),
            seconds: 0.0,
        });
    };
    let cols = as_columns(&m);
    let targets = match output {
        Output::Targets => level_targets(&cols, opts),
        Output::Flow => Vec::new(),
    };
    Ok(LevelRun {
        m: (output == Output::Flow).then_some(cols),
        targets,
        iterations: sched.iterations,
        chaos: sched.chaos,
        change: sched.change,
        stop,
        timings: MclTimings::default(),
    })
}

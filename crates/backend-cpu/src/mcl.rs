//! R-MCL on the CPU: the host column pass ([`trident_core::mcl::pass::HostPass`], the host
//! twin of `kernels/*/mcl.*`) over every column, each iteration.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use trident_core::mcl::drive::{level_targets, LevelRun, Output};
use trident_core::mcl::mlr::{self, Level, Schedule};
use trident_core::mcl::pass::HostPass;
use trident_core::mcl::{
    from_fixed, penalty, to_mass, Columns, Expansion, MarkovCluster, MclOptions, MclProgress,
    MclTimings, Transition,
};
use trident_core::{Result, Scalar};

use crate::Cpu;

impl<T: Scalar> MarkovCluster<T> for Cpu {
    fn cluster_level(
        &self,
        tr: &Transition,
        m0: Columns<T>,
        opts: &MclOptions,
        level: Level,
        output: Output,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<LevelRun<T>> {
        let n = tr.n;
        let k = opts.max_per_column;
        // M_G's weights in T; MLR-MCL's DPR replaces them once (`base`), its balance derives
        // M_R from them every iteration (`reg`).
        let mut base: Vec<T> = tr.values::<T>().into_owned();
        let mut reg: Vec<T> = Vec::new();
        let mut m = m0;
        // Every column of `next` is written (entries and length) before it is read.
        let mut next = Columns::<T>::zeroed(n, k)?;
        let mut chaos_col = vec![(T::zero(), 0u64); n];
        let pass = HostPass::<T>::new(n);
        let start = Instant::now();
        let mut sched = Schedule::new(opts, level);
        let stop = loop {
            let plan = match sched.plan_next() {
                Ok(p) => p,
                Err(reason) => break reason,
            };
            let iterations = sched.iterations;
            if plan.start_dpr {
                base = mlr::dpr(tr, &base, &m, opts.dpr_threshold);
            }
            let pen: Vec<T> = if plan.row_penalty {
                let mass: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
                (0..n).into_par_iter().with_min_len(256).for_each(|j| {
                    let (r, v) = m.column(j);
                    for (&i, &x) in r.iter().zip(v) {
                        mass[i as usize].fetch_add(to_mass(x), Ordering::Relaxed);
                    }
                });
                mass.par_iter()
                    .map(|a| penalty::<T>(a.load(Ordering::Relaxed), opts.mass_penalty))
                    .collect()
            } else {
                Vec::new()
            };
            let rval: &[T] = if plan.column_balance {
                let cp = mlr::column_penalties(&m, opts.balance);
                reg.resize(base.len(), T::zero());
                mlr::regularize(tr, &base, &cp, &mut reg);
                &reg
            } else {
                &base
            };
            let mref = &m;
            let expansion = plan.expansion;
            pass.run(
                iterations,
                &m,
                |j, out| right_column(j, tr, rval, mref, expansion, out),
                &pen,
                opts,
                (&mut next, &mut chaos_col),
            )?;
            std::mem::swap(&mut m, &mut next);
            let chaos = chaos_col
                .iter()
                .map(|c| Scalar::to_f64(c.0))
                .fold(0.0, f64::max);
            let d = chaos_col.iter().map(|c| c.1).max().unwrap_or(0);
            let sq = chaos_col
                .iter()
                .fold(0u64, |a, c| a.wrapping_add(c.1 >> mlr::CHANGE_SHIFT));
            sched.record(n, chaos, Scalar::to_f64(from_fixed::<T>(d)), sq);
            progress(&MclProgress {
                iteration: sched.iterations,
                level: 0,
                chaos: sched.chaos,
                change: sched.change,
                entries: m.entries(),
                seconds: start.elapsed().as_secs_f64(),
            });
        };
        let timings = MclTimings {
            iterate: start.elapsed().as_secs_f64(),
            ..MclTimings::default()
        };
        let targets = match output {
            Output::Targets => level_targets(&m, opts),
            Output::Flow => Vec::new(),
        };
        Ok(LevelRun {
            m: (output == Output::Flow).then_some(m),
            targets,
            iterations: sched.iterations,
            chaos: sched.chaos,
            change: sched.change,
            stop,
            timings,
        })
    }
}

/// Column `j` of the right operand as `(k, weight)`: `M_G`'s column, or `M`'s own column
/// for plain MCL expansion.
fn right_column<T: Scalar>(
    j: usize,
    tr: &Transition,
    rval: &[T],
    m: &Columns<T>,
    expansion: Expansion,
    out: &mut Vec<(u32, T)>,
) {
    out.clear();
    match expansion {
        Expansion::Regularized => {
            let (a, b) = (tr.ptr[j] as usize, tr.ptr[j + 1] as usize);
            let rows = &tr.row[a..b];
            // Zero weights (edges the DPR phase dropped) contribute nothing.
            out.extend(
                rows.iter()
                    .copied()
                    .zip(rval[a..b].iter().copied())
                    .filter(|e| e.1 != T::zero()),
            );
        }
        Expansion::Mcl => {
            let (r, v) = m.column(j);
            out.extend(r.iter().copied().zip(v.iter().copied()));
        }
    }
}

//! R-MCL's host column pass over many ranks ([`cluster_level`], the CPU backend's
//! [`super::MarkovCluster::cluster_level_ranks`]): the columns of `M` are cut over the ranks
//! in blocks of about equal `M_G` entries ([`Transition::column_splits`]: ids that are
//! neighbours stay together when the input numbers them so); each iteration, a rank fetches
//! the K-bounded columns its expansion needs from the ranks holding them (one all-to-all:
//! `M_G`'s neighbours of its columns, or, in van Dongen's `M·M` phase, the rows of its
//! columns), sums the rows' masses with the others where a penalty needs them, runs the host
//! column pass ([`super::pass::HostPass`]) over its columns, and reduces the chaos, the
//! change and the entries with the others. Row ids stay global and every sum is an integer,
//! so each column's bits, and the partition, are those of one process, on any number of
//! ranks.

use std::time::Instant;

use rayon::prelude::*;

use super::drive::{level_targets, LevelRun, Output};
use super::mlr::{self, Level, Schedule};
use super::pass::HostPass;
use super::{
    from_fixed, penalty, Columns, Expansion, MclOptions, MclProgress, MclTimings, Transition,
    TransitionPart,
};
use crate::comm::{all_gather, all_to_all, route, Comm, Op};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Where a rank's columns and the columns it fetched sit in its local `M`: its own columns
/// `c0..c1` first, then `ghosts` (sorted global ids) in order.
struct Slots {
    c0: usize,
    c1: usize,
    ghosts: Vec<u32>,
}

impl Slots {
    fn slot(&self, id: u32) -> u32 {
        let id_u = id as usize;
        if (self.c0..self.c1).contains(&id_u) {
            (id_u - self.c0) as u32
        } else {
            let g = self.ghosts.partition_point(|&x| x < id);
            debug_assert_eq!(self.ghosts.get(g), Some(&id));
            (self.c1 - self.c0 + g) as u32
        }
    }
}

/// The columns `want` (sorted, none of them this rank's) of the distributed `M`, fetched
/// from their owners (`splits`), after this rank's own columns `own`: the local `M`.
fn fetch<T: Scalar>(
    c: &dyn Comm,
    splits: &[usize],
    own: &Columns<T>,
    want: &[u32],
) -> Result<Columns<T>> {
    let p = c.size();
    let c0 = splits[c.rank()];
    let owner = |id: &u32| (splits.partition_point(|&s| s <= *id as usize) - 1).min(p - 1);
    let mut asked_counts = vec![0usize; p];
    for id in want {
        asked_counts[owner(id)] += 1;
    }
    let asked = route(c, want, owner)?;
    let per: Vec<u64> = asked_counts.iter().map(|&k| k as u64).collect();
    let (per_rank, _) = all_to_all(c, &per, &vec![1; p])?;
    let counts: Vec<usize> = per_rank.iter().map(|&k| k as usize).collect();
    // Answers: each asked column's length, then its rows and values.
    let lens: Vec<u32> = asked.iter().map(|&id| own.len[id as usize - c0]).collect();
    let mut idx = Vec::new();
    let mut val = Vec::new();
    let mut out_counts = vec![0usize; p];
    let mut at = 0;
    for (r, &k) in counts.iter().enumerate() {
        for &id in &asked[at..at + k] {
            let (ri, rv) = own.column(id as usize - c0);
            idx.extend_from_slice(ri);
            val.extend(rv.iter().map(|&x| Scalar::to_f64(x).to_bits()));
            out_counts[r] += ri.len();
        }
        at += k;
    }
    let (got_lens, _) = all_to_all(c, &lens, &counts)?;
    let (got_idx, _) = all_to_all(c, &idx, &out_counts)?;
    let (got_val, _) = all_to_all(c, &val, &out_counts)?;
    let (n_own, k) = (own.n, own.k);
    let mut loc = Columns::<T>::zeroed(n_own + want.len(), k)?;
    loc.idx[..n_own * k].copy_from_slice(&own.idx);
    loc.val[..n_own * k].copy_from_slice(&own.val);
    loc.len[..n_own].copy_from_slice(&own.len);
    let mut at = 0;
    for (g, &l) in got_lens.iter().enumerate() {
        let (s, l) = ((n_own + g) * k, l as usize);
        loc.idx[s..s + l].copy_from_slice(&got_idx[at..at + l]);
        for (d, &b) in loc.val[s..s + l].iter_mut().zip(&got_val[at..at + l]) {
            *d = T::from_f64(f64::from_bits(b));
        }
        loc.len[n_own + g] = l as u32;
        at += l;
    }
    Ok(loc)
}

/// Every rank's columns of `M` gathered: the whole `M` on every rank.
fn gather_all<T: Scalar>(c: &dyn Comm, own: &Columns<T>, n: usize) -> Result<Columns<T>> {
    let k = own.k;
    let (len, _) = all_gather(c, &own.len)?;
    let (idx, _) = all_gather(c, &own.idx)?;
    let vals: Vec<u64> = own
        .val
        .iter()
        .map(|&x| Scalar::to_f64(x).to_bits())
        .collect();
    let (val, _) = all_gather(c, &vals)?;
    if len.len() != n || idx.len() != n * k {
        return Err(Error::backend("dist", "gathered M has the wrong size"));
    }
    Ok(Columns {
        n,
        k,
        idx,
        val: val
            .into_iter()
            .map(|b| T::from_f64(f64::from_bits(b)))
            .collect(),
        len,
    })
}

/// One level of R-MCL over the ranks of `c` on this rank's part of `M_G` (its columns) from
/// the starting `M` (its columns filled), with the host column pass; returns `output` (the
/// whole final `M`, or every node's pointer) on every rank.
pub fn cluster_level<T: Scalar>(
    c: &dyn Comm,
    part: &TransitionPart,
    m0: Columns<T>,
    opts: &MclOptions,
    level: Level,
    output: Output,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<LevelRun<T>> {
    let (n, k) = (part.n(), opts.max_per_column);
    check_part(c, &part.splits, &part.own)?;
    let (c0, c1) = (part.splits[c.rank()], part.splits[c.rank() + 1]);
    let mine = &part.own;
    // M_G's neighbours of this rank's columns held elsewhere: the static fetch list.
    let mut near: Vec<u32> = mine
        .row
        .par_iter()
        .copied()
        .filter(|&r| !(c0..c1).contains(&(r as usize)))
        .collect();
    near.par_sort_unstable();
    near.dedup();
    let near_slots = Slots {
        c0,
        c1,
        ghosts: near.clone(),
    };
    // `mine` with rows as local slots (for the right operand, DPR and M_R).
    let local_tr = Transition {
        n: mine.n,
        ptr: mine.ptr.clone(),
        row: mine.row.par_iter().map(|&r| near_slots.slot(r)).collect(),
        val: mine.val.clone(),
    };
    let mut own = Columns::<T>::zeroed(c1 - c0, k)?;
    own.idx.copy_from_slice(&m0.idx[c0 * k..c1 * k]);
    own.val.copy_from_slice(&m0.val[c0 * k..c1 * k]);
    own.len.copy_from_slice(&m0.len[c0..c1]);
    drop(m0);
    let mut next = Columns::<T>::zeroed(c1 - c0, k)?;
    let mut chaos_col = vec![(T::zero(), 0u64); c1 - c0];
    let mut base: Vec<T> = local_tr.values::<T>().into_owned();
    let mut reg: Vec<T> = Vec::new();
    let pass = HostPass::<T>::new(n);
    let start = Instant::now();
    let mut sched = Schedule::new(opts, level);
    let stop = loop {
        let plan = match sched.plan_next() {
            Ok(p) => p,
            Err(reason) => break reason,
        };
        let iterations = sched.iterations;
        // This iteration's local M: own columns, then the columns the expansion reads.
        let (loc, slots) = match plan.expansion {
            Expansion::Regularized => (fetch(c, &part.splits, &own, &near)?, None),
            Expansion::Mcl => {
                let mut want: Vec<u32> = (0..own.n)
                    .into_par_iter()
                    .flat_map_iter(|j| own.column(j).0.iter().copied())
                    .filter(|&r| !(c0..c1).contains(&(r as usize)))
                    .collect();
                want.par_sort_unstable();
                want.dedup();
                let loc = fetch(c, &part.splits, &own, &want)?;
                (
                    loc,
                    Some(Slots {
                        c0,
                        c1,
                        ghosts: want,
                    }),
                )
            }
        };
        if plan.start_dpr {
            base = mlr::dpr(&local_tr, &base, &loc, opts.dpr_threshold);
        }
        // The rows' masses over every rank's columns, when a penalty needs them.
        let mass = if plan.row_penalty || plan.column_balance {
            let mut mass = mlr::row_masses(&own, n);
            c.all_reduce_u64(&mut mass, Op::Sum)?;
            mass
        } else {
            Vec::new()
        };
        let pen: Vec<T> = if plan.row_penalty {
            mass.par_iter()
                .map(|&a| penalty::<T>(a, opts.mass_penalty))
                .collect()
        } else {
            Vec::new()
        };
        let rval: &[T] = if plan.column_balance {
            let cp = mlr::penalties_from_mass(&loc, &mass, opts.balance);
            reg.resize(base.len(), T::zero());
            mlr::regularize(&local_tr, &base, &cp, &mut reg);
            &reg
        } else {
            &base
        };
        let locr = &loc;
        let (ltr, slots) = (&local_tr, &slots);
        pass.run(
            iterations,
            &loc,
            |j, out| {
                out.clear();
                match slots {
                    None => {
                        let (a, b) = (ltr.ptr[j] as usize, ltr.ptr[j + 1] as usize);
                        out.extend(
                            ltr.row[a..b]
                                .iter()
                                .copied()
                                .zip(rval[a..b].iter().copied())
                                .filter(|e| e.1 != T::zero()),
                        );
                    }
                    Some(s) => {
                        let (r, v) = locr.column(j);
                        out.extend(r.iter().map(|&i| s.slot(i)).zip(v.iter().copied()));
                    }
                }
            },
            &pen,
            opts,
            (&mut next, &mut chaos_col),
        )?;
        drop(loc);
        std::mem::swap(&mut own, &mut next);
        // Chaos and change: maxima (non-negative floats compare as their bits), the squared
        // change a wrapping sum, as one process computes them.
        let chaos = chaos_col
            .iter()
            .map(|x| Scalar::to_f64(x.0))
            .fold(0.0, f64::max);
        let mut maxes = [
            chaos.to_bits(),
            chaos_col.iter().map(|x| x.1).max().unwrap_or(0),
        ];
        c.all_reduce_u64(&mut maxes, Op::Max)?;
        let mut sums = [
            chaos_col
                .iter()
                .fold(0u64, |a, x| a.wrapping_add(x.1 >> mlr::CHANGE_SHIFT)),
            own.entries(),
        ];
        c.all_reduce_u64(&mut sums, Op::Sum)?;
        sched.record(
            n,
            f64::from_bits(maxes[0]),
            Scalar::to_f64(from_fixed::<T>(maxes[1])),
            sums[0],
        );
        progress(&MclProgress {
            iteration: sched.iterations,
            level: 0,
            chaos: sched.chaos,
            change: sched.change,
            entries: sums[1],
            seconds: start.elapsed().as_secs_f64(),
        });
    };
    let iterate = start.elapsed().as_secs_f64();
    let m = gather_all(c, &own, n)?;
    let (m, targets) = match output {
        Output::Flow => (Some(m), Vec::new()),
        Output::Targets => (None, level_targets(&m, opts)),
    };
    Ok(LevelRun {
        m,
        targets,
        iterations: sched.iterations,
        chaos: sched.chaos,
        change: sched.change,
        stop,
        timings: MclTimings {
            iterate,
            ..MclTimings::default()
        },
    })
}

/// A rank's part of `M_G` must be cut for the ranks of `c`.
pub(crate) fn check_part(c: &dyn Comm, splits: &[usize], own: &Transition) -> Result<()> {
    let r = c.rank();
    if splits.len() != c.size() + 1 || own.n != splits[r + 1] - splits[r] {
        return Err(Error::invalid(
            "mcl",
            format!(
                "rank {r} of {}: M_G's part is cut for {} ranks and holds {} columns",
                c.size(),
                splits.len().saturating_sub(1),
                own.n
            ),
        ));
    }
    Ok(())
}

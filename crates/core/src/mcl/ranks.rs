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

use super::drive::{LevelRun, Output};
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
pub(crate) struct Slots<'a> {
    pub c0: usize,
    pub c1: usize,
    pub ghosts: &'a [u32],
}

impl Slots<'_> {
    pub fn slot(&self, id: u32) -> u32 {
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

/// The rows of `mine` (a rank's columns of `M_G`, rows global) outside its columns
/// `c0..c1`, sorted and distinct: the columns of `M` its regularised expansion reads from
/// other ranks.
pub(crate) fn neighbours_elsewhere(mine: &Transition, (c0, c1): (usize, usize)) -> Vec<u32> {
    elsewhere(mine.row.par_iter().copied(), (c0, c1))
}

/// The rows of `own`'s columns outside `c0..c1`, sorted and distinct: the columns of `M`
/// the `M·M` expansion of those columns reads from other ranks.
pub(crate) fn rows_elsewhere<T: Scalar>(own: &Packed<T>, (c0, c1): (usize, usize)) -> Vec<u32> {
    elsewhere(own.idx.par_iter().copied(), (c0, c1))
}

fn elsewhere(rows: impl ParallelIterator<Item = u32>, (c0, c1): (usize, usize)) -> Vec<u32> {
    let mut v: Vec<u32> = rows
        .filter(|&r| !(c0..c1).contains(&(r as usize)))
        .collect();
    v.par_sort_unstable();
    v.dedup();
    v
}

/// Columns of `M` without their empty slots: column `j`'s entries are
/// `idx/val[off[j]..off[j + 1]]` (`off` has `len.len() + 1` entries). What ranks send each
/// other, and what a GPU rank packs on its device ([`super::gpu`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Packed<T> {
    pub len: Vec<u32>,
    pub off: Vec<usize>,
    pub idx: Vec<u32>,
    pub val: Vec<T>,
}

impl<T: Scalar> Packed<T> {
    /// Columns of lengths `len` whose entries follow each other in `idx`/`val`.
    pub fn new(len: Vec<u32>, idx: Vec<u32>, val: Vec<T>) -> Result<Self> {
        let mut off = Vec::with_capacity(len.len() + 1);
        off.push(0);
        let mut at = 0usize;
        for &l in &len {
            at += l as usize;
            off.push(at);
        }
        if at != idx.len() || at != val.len() {
            return Err(Error::backend(
                "mcl",
                format!(
                    "packed columns: the lengths count {at} entries, {} rows and {} values came",
                    idx.len(),
                    val.len()
                ),
            ));
        }
        Ok(Self { len, off, idx, val })
    }

    /// Columns `c0..c1` of `m`, packed.
    pub fn of(m: &Columns<T>, (c0, c1): (usize, usize)) -> Self {
        let len = m.len[c0..c1].to_vec();
        let mut idx = Vec::with_capacity(m.len[c0..c1].iter().map(|&l| l as usize).sum());
        let mut val = Vec::with_capacity(idx.capacity());
        for j in c0..c1 {
            let (r, v) = m.column(j);
            idx.extend_from_slice(r);
            val.extend_from_slice(v);
        }
        Self::new(len, idx, val).expect("the lengths count the entries copied")
    }

    /// Columns.
    pub fn n(&self) -> usize {
        self.len.len()
    }

    /// Column `j`'s rows and values.
    pub fn column(&self, j: usize) -> (&[u32], &[T]) {
        let (a, b) = (self.off[j], self.off[j + 1]);
        (&self.idx[a..b], &self.val[a..b])
    }

    /// The entries of columns `cols` (in that order), concatenated, in parallel.
    pub fn select(&self, cols: &[usize]) -> (Vec<u32>, Vec<T>) {
        // Blocks of columns, each copied into its own slice of the output.
        const BLOCK: usize = 4096;
        let mut starts = Vec::with_capacity(cols.len().div_ceil(BLOCK) + 1);
        let mut at = 0usize;
        for (b, &j) in cols.iter().enumerate() {
            if b % BLOCK == 0 {
                starts.push(at);
            }
            at += self.len[j] as usize;
        }
        starts.push(at);
        let mut idx = vec![0u32; at];
        let mut val = vec![T::zero(); at];
        let mut parts = Vec::with_capacity(starts.len());
        let (mut ri, mut rv) = (&mut idx[..], &mut val[..]);
        for w in starts.windows(2) {
            let (a, b) = (ri.split_at_mut(w[1] - w[0]), rv.split_at_mut(w[1] - w[0]));
            parts.push((a.0, b.0));
            (ri, rv) = (a.1, b.1);
        }
        parts
            .into_par_iter()
            .zip(cols.par_chunks(BLOCK))
            .for_each(|((oi, ov), block)| {
                let mut at = 0;
                for &j in block {
                    let (r, v) = self.column(j);
                    oi[at..at + r.len()].copy_from_slice(r);
                    ov[at..at + v.len()].copy_from_slice(v);
                    at += r.len();
                }
            });
        (idx, val)
    }

    /// The columns in slots of width `k` (lengths at most `k`).
    pub fn unpack(&self, k: usize) -> Result<Columns<T>> {
        let mut m = Columns::<T>::zeroed(self.n(), k)?;
        m.idx
            .par_chunks_mut(k.max(1))
            .zip(m.val.par_chunks_mut(k.max(1)))
            .enumerate()
            .for_each(|(j, (ri, rv))| {
                let (r, v) = self.column(j);
                ri[..r.len()].copy_from_slice(r);
                rv[..v.len()].copy_from_slice(v);
            });
        m.len.copy_from_slice(&self.len);
        Ok(m)
    }
}

/// The columns `want` (sorted, none of them this rank's) of the distributed `M`, fetched
/// from their owners (`splits`), after this rank's own columns `own`: the local `M`,
/// packed; and the bytes received.
pub(crate) fn fetch_packed<T: Scalar>(
    c: &dyn Comm,
    splits: &[usize],
    own: &Packed<T>,
    want: &[u32],
) -> Result<(Packed<T>, u64)> {
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
    let cols: Vec<usize> = asked.iter().map(|&id| id as usize - c0).collect();
    let lens: Vec<u32> = cols.iter().map(|&j| own.len[j]).collect();
    let (idx, val) = own.select(&cols);
    let mut out_counts = vec![0usize; p];
    let mut at = 0;
    for (r, &k) in counts.iter().enumerate() {
        out_counts[r] = lens[at..at + k].iter().map(|&l| l as usize).sum();
        at += k;
    }
    let (got_lens, _) = all_to_all(c, &lens, &counts)?;
    let (got_idx, _) = all_to_all(c, &idx, &out_counts)?;
    let (got_val, _) = all_to_all(c, &val, &out_counts)?;
    let bytes = (got_lens.len() * 4 + got_idx.len() * (4 + std::mem::size_of::<T>())) as u64;
    if got_lens.len() != want.len() {
        return Err(Error::backend(
            "dist",
            format!("asked for {} columns, {} came", want.len(), got_lens.len()),
        ));
    }
    let len = [&own.len[..], &got_lens].concat();
    let idx = par_concat(&own.idx, &got_idx);
    let val = par_concat(&own.val, &got_val);
    Ok((Packed::new(len, idx, val)?, bytes))
}

/// `a` then `b`, copied in parallel.
fn par_concat<P: Copy + Default + Send + Sync>(a: &[P], b: &[P]) -> Vec<P> {
    const CHUNK: usize = 1 << 16;
    let mut out = vec![P::default(); a.len() + b.len()];
    let (oa, ob) = out.split_at_mut(a.len());
    for (o, s) in [(oa, a), (ob, b)] {
        o.par_chunks_mut(CHUNK)
            .zip(s.par_chunks(CHUNK))
            .for_each(|(o, s)| o.copy_from_slice(s));
    }
    out
}

/// [`fetch_packed`] from and into columns of width `K`.
fn fetch<T: Scalar>(
    c: &dyn Comm,
    splits: &[usize],
    own: &Columns<T>,
    want: &[u32],
) -> Result<Columns<T>> {
    let (loc, _) = fetch_packed(c, splits, &Packed::of(own, (0, own.n)), want)?;
    loc.unpack(own.k)
}

/// Every rank's columns (`own`, packed) gathered: the whole `M` of `n` columns of width `k`
/// on every rank.
pub(crate) fn gather_packed<T: Scalar>(
    c: &dyn Comm,
    own: &Packed<T>,
    n: usize,
    k: usize,
) -> Result<Columns<T>> {
    let (len, _) = all_gather(c, &own.len)?;
    let (idx, _) = all_gather(c, &own.idx)?;
    let (val, _) = all_gather(c, &own.val)?;
    if len.len() != n {
        return Err(Error::backend("dist", "gathered M has the wrong size"));
    }
    Packed::new(len, idx, val)?.unpack(k)
}

/// The pointers of [`super::drive::level_targets`] over the ranks of `c`, each holding its columns `own`
/// (packed) of `M`, the first of them column `c0`: every node's, on every rank, without
/// gathering `M` (the attractor flags are gathered, then the pointers).
pub(crate) fn targets_part<T: Scalar>(
    c: &dyn Comm,
    own: &Packed<T>,
    c0: usize,
    opts: &MclOptions,
) -> Result<Vec<u32>> {
    let col = |j: usize| own.column(j);
    let mine = match opts.variant {
        super::Variant::Trident => {
            let attr: Vec<u8> = super::clusters::attractors_by(own.n(), c0, col)
                .into_iter()
                .map(u8::from)
                .collect();
            let (all, _) = all_gather(c, &attr)?;
            let all: Vec<bool> = all.into_iter().map(|a| a != 0).collect();
            super::clusters::targets_by(own.n(), &all, col)
        }
        super::Variant::MlrMcl => super::drive::top_rows_by(own.n(), col),
    };
    Ok(all_gather(c, &mine)?.0)
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
    let near = neighbours_elsewhere(mine, (c0, c1));
    let near_slots = Slots {
        c0,
        c1,
        ghosts: &near,
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
                let want = rows_elsewhere(&Packed::of(&own, (0, own.n)), (c0, c1));
                let loc = fetch(c, &part.splits, &own, &want)?;
                (loc, Some(want))
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
                    Some(want) => {
                        let s = Slots {
                            c0,
                            c1,
                            ghosts: want,
                        };
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
    let packed = Packed::of(&own, (0, own.n));
    drop(own);
    let (m, targets) = match output {
        Output::Flow => (Some(gather_packed(c, &packed, n, k)?), Vec::new()),
        Output::Targets => (None, targets_part(c, &packed, c0, opts)?),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_columns_select_and_unpack_as_counted_one_by_one() {
        // Columns of every length 0..=K over several selection blocks, against a count
        // entry by entry.
        let (n, k) = (10_000usize, 7usize);
        let mut next = crate::testing::xorshift(99);
        let mut m = Columns::<f64>::zeroed(n, k).unwrap();
        for j in 0..n {
            let l = (next() % (k as u64 + 1)) as usize;
            m.len[j] = l as u32;
            for s in 0..l {
                m.idx[j * k + s] = (next() % 1000) as u32;
                m.val[j * k + s] = (next() % 1000) as f64 / 7.0;
            }
        }
        let p = Packed::of(&m, (0, n));
        assert_eq!(p.idx.len() as u64, m.entries());
        let back = p.unpack(k).unwrap();
        for j in 0..n {
            assert_eq!(back.column(j), m.column(j), "column {j}");
        }
        let cols: Vec<usize> = (0..9000).map(|_| (next() % n as u64) as usize).collect();
        let (idx, val) = p.select(&cols);
        let (mut wi, mut wv) = (Vec::new(), Vec::new());
        for &j in &cols {
            let (r, v) = m.column(j);
            wi.extend_from_slice(r);
            wv.extend_from_slice(v);
        }
        assert_eq!((idx, val), (wi, wv));
        assert_eq!(par_concat(&[1u32, 2], &[3]), vec![1, 2, 3]);
        assert!(Packed::<f64>::new(vec![2], vec![1], vec![0.5]).is_err());
    }
}

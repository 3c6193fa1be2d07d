//! The column pass of one R-MCL iteration on the host (rayon): for every output column `j`,
//! combine the columns of `M` that its right operand names (each ≤ K entries) in a dense
//! fixed-point accumulator with a touched list, then inflate, prune, keep the top K,
//! normalise and compute the column's chaos and change ([`super::column_step`]).
//!
//! The CPU backend runs it over all columns; a rank of a distributed run
//! ([`crate::dist::mcl`]) over its own columns, with the columns it fetched after them. The
//! sums are integers (wrapping adds of fixed-point products) and [`super::column_step`] does
//! not depend on the order of its list, so a column's result depends only on its inputs:
//! whichever process computes it, the bits are the same.

use std::sync::Mutex;

use rayon::prelude::*;

use super::{column_step, to_fixed, Columns, MclOptions};
use crate::error::Result;
use crate::scalar::Scalar;

/// Per-thread scratch, allocated once per run (a dense accumulator of one entry per row
/// would cost `O(n)` per allocation, far too much per column or per iteration).
struct Scratch<T> {
    acc: Vec<u64>,
    /// `mark[i]` = the (iteration, column) stamp of the column that last touched row `i`.
    mark: Vec<u64>,
    touched: Vec<(u32, u64)>,
    rows: Vec<u32>,
    right: Vec<(u32, T)>,
    step: Vec<(u32, T)>,
}

/// The host column pass, with its per-thread scratch (see the module documentation).
pub struct HostPass<T> {
    rows: usize,
    pool: Vec<Mutex<Option<Scratch<T>>>>,
}

impl<T: Scalar> HostPass<T> {
    /// A pass over columns whose row ids are below `rows`.
    pub fn new(rows: usize) -> Self {
        Self {
            rows,
            pool: (0..rayon::current_num_threads().max(1))
                .map(|_| Mutex::new(None))
                .collect(),
        }
    }

    /// Writes column `j` of `out.0` (all of its columns) and `out.1[j]` (the column's chaos
    /// and change) for iteration `iteration`: the product of the columns `m.column(s)` for the
    /// `(s, w)` that `right(j, list)` lists, penalised by `pen` (when not empty), through
    /// [`super::column_step`] with `m.column(j)` as the previous column.
    pub fn run<R>(
        &self,
        iteration: usize,
        m: &Columns<T>,
        right: R,
        pen: &[T],
        opts: &MclOptions,
        (out, chaos): (&mut Columns<T>, &mut [(T, u64)]),
    ) -> Result<()>
    where
        R: Fn(usize, &mut Vec<(u32, T)>) + Sync,
    {
        let k = out.k;
        let rows = self.rows;
        out.idx
            .par_chunks_mut(k)
            .zip(out.val.par_chunks_mut(k))
            .zip(out.len.par_iter_mut())
            .zip(chaos.par_iter_mut())
            .enumerate()
            .with_min_len(16)
            .for_each(|(j, (((oi, ov), ol), oc))| {
                let slot = rayon::current_thread_index().unwrap_or(0) % self.pool.len();
                let mut guard = self.pool[slot].lock().unwrap_or_else(|e| e.into_inner());
                let s = guard.get_or_insert_with(|| Scratch::<T> {
                    acc: vec![0; rows],
                    mark: vec![u64::MAX; rows],
                    touched: Vec::new(),
                    rows: Vec::new(),
                    right: Vec::new(),
                    step: Vec::new(),
                });
                let stamp = ((iteration as u64) << 32) | j as u64;
                right(j, &mut s.right);
                s.rows.clear();
                for &(kk, w) in &s.right {
                    let (r, v) = m.column(kk as usize);
                    for (&i, &x) in r.iter().zip(v) {
                        let fx = to_fixed(x * w);
                        let iu = i as usize;
                        if s.mark[iu] != stamp {
                            s.mark[iu] = stamp;
                            s.acc[iu] = 0;
                            s.rows.push(i);
                        }
                        s.acc[iu] = s.acc[iu].wrapping_add(fx);
                    }
                }
                s.touched.clear();
                s.touched
                    .extend(s.rows.iter().map(|&i| (i, s.acc[i as usize])));
                let prev = m.column(j);
                let (len, c, d) = column_step(&s.touched, pen, opts, prev, &mut s.step, oi, ov);
                *ol = len as u32;
                *oc = (c, d);
            });
        Ok(())
    }
}

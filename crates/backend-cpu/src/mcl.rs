//! R-MCL on the CPU: one fused pass per output column (rayon), the host twin of
//! `kernels/*/mcl.*`: combine the `deg(j)+1` columns of `M` named by column `j` of `M_R`
//! (each ≤ K entries) in a dense fixed-point accumulator with a touched list, then inflate,
//! prune, keep the top K, normalise and compute the column's chaos
//! ([`trident_core::mcl::column_step`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use trident_core::mcl::{
    column_step, empty_clustering, from_fixed, interpret, penalty, stop_reason, to_fixed, to_mass,
    Clustering, Columns, Expansion, MarkovCluster, MclOptions, MclProgress, MclTimings, Transition,
};
use trident_core::{Graph, Result, Scalar};

use crate::Cpu;

/// Per-thread scratch of the column pass, allocated once per run (a dense accumulator of `n`
/// entries would cost `O(n)` per allocation, far too much per task or per iteration).
struct Scratch<T> {
    acc: Vec<u64>,
    /// `mark[i]` = the (iteration, column) stamp of the column that last touched row `i`.
    mark: Vec<u64>,
    touched: Vec<(u32, u64)>,
    rows: Vec<u32>,
    right: Vec<(u32, T)>,
    step: Vec<(u32, T)>,
}

impl<T: Scalar> MarkovCluster<T> for Cpu {
    fn cluster_with_progress(
        &self,
        g: &Graph,
        opts: &MclOptions,
        progress: &mut dyn FnMut(&MclProgress),
    ) -> Result<Clustering> {
        let t = Instant::now();
        let tr = Transition::new(g, opts)?;
        let n = tr.n;
        if n == 0 {
            return Ok(empty_clustering());
        }
        let k = opts.max_per_column;
        let rval = tr.values::<T>();
        let mut m = Columns::<T>::initial(&tr, k)?;
        // Every column of `next` is written (entries and length) before it is read.
        let mut next = Columns::<T>::zeroed(n, k)?;
        let mut chaos_col = vec![(T::zero(), 0u64); n];
        let mut timings = MclTimings {
            prepare: t.elapsed().as_secs_f64(),
            ..MclTimings::default()
        };
        // One scratch per worker thread (rayon::current_thread_index), locked uncontended.
        let pool: Vec<Mutex<Option<Scratch<T>>>> = (0..rayon::current_num_threads().max(1))
            .map(|_| Mutex::new(None))
            .collect();
        let start = Instant::now();
        let mut chaos = f64::INFINITY;
        let mut change = f64::INFINITY;
        let mut iterations = 0;
        let stop = loop {
            if let Some(reason) = stop_reason(opts, iterations, chaos, change) {
                break reason;
            }
            let expansion = opts.expansion_at(iterations);
            let pen: Vec<T> = if opts.balanced_at(iterations) {
                let mass: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
                (0..n).into_par_iter().with_min_len(256).for_each(|j| {
                    let (r, v) = m.column(j);
                    for (&i, &x) in r.iter().zip(v) {
                        mass[i as usize].fetch_add(to_mass(x), Ordering::Relaxed);
                    }
                });
                mass.par_iter()
                    .map(|a| penalty::<T>(a.load(Ordering::Relaxed), opts.balance))
                    .collect()
            } else {
                Vec::new()
            };
            let mref = &m;
            let (tr, rval, pen) = (&tr, &*rval, &pen);
            next.idx
                .par_chunks_mut(k)
                .zip(next.val.par_chunks_mut(k))
                .zip(next.len.par_iter_mut())
                .zip(chaos_col.par_iter_mut())
                .enumerate()
                .with_min_len(16)
                .for_each(|(j, (((oi, ov), ol), oc))| {
                    let slot = rayon::current_thread_index().unwrap_or(0) % pool.len();
                    let mut guard = pool[slot].lock().unwrap_or_else(|e| e.into_inner());
                    let s = guard.get_or_insert_with(|| Scratch::<T> {
                        acc: vec![0; n],
                        mark: vec![u64::MAX; n],
                        touched: Vec::new(),
                        rows: Vec::new(),
                        right: Vec::new(),
                        step: Vec::new(),
                    });
                    let stamp = ((iterations as u64) << 32) | j as u64;
                    right_column(j, tr, rval, mref, expansion, &mut s.right);
                    s.rows.clear();
                    for &(kk, w) in &s.right {
                        let (r, v) = mref.column(kk as usize);
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
                    let prev = mref.column(j);
                    let (len, c, d) = column_step(&s.touched, pen, opts, prev, &mut s.step, oi, ov);
                    *ol = len as u32;
                    *oc = (c, d);
                });
            std::mem::swap(&mut m, &mut next);
            chaos = chaos_col
                .iter()
                .map(|c| Scalar::to_f64(c.0))
                .fold(0.0, f64::max);
            let d = chaos_col.iter().map(|c| c.1).max().unwrap_or(0);
            change = Scalar::to_f64(from_fixed::<T>(d));
            iterations += 1;
            progress(&MclProgress {
                iteration: iterations,
                chaos,
                change,
                entries: m.entries(),
                seconds: start.elapsed().as_secs_f64(),
            });
        };
        timings.iterate = start.elapsed().as_secs_f64();
        let t = Instant::now();
        let clusters = interpret(&m);
        timings.interpret = t.elapsed().as_secs_f64();
        Ok(Clustering {
            clusters,
            iterations,
            chaos,
            change,
            stop,
            converged: stop.converged(),
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
            out.extend(rows.iter().copied().zip(rval[a..b].iter().copied()));
        }
        Expansion::Mcl => {
            let (r, v) = m.column(j);
            out.extend(r.iter().copied().zip(v.iter().copied()));
        }
    }
}

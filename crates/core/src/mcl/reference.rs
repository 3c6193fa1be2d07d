//! The sequential f64 reference of R-MCL, written for clarity, not speed: a `BTreeMap` per
//! column, no threads, no scratch reuse. It sums like every backend (fixed point, see the
//! [module docs](super#determinism)) — plain f64 sums in another order would break exact ties
//! of symmetric graphs differently — so the conformance suite can demand the same partition.

use std::collections::BTreeMap;

use super::{
    column_change, from_fixed, inflate, inflation_scale, interpret, penalty, stop_reason, to_fixed,
    to_mass, Clustering, Columns, Expansion, MclOptions, Transition,
};
use crate::error::Result;
use crate::graph::Graph;
use crate::scalar::Scalar;

/// Clusters `g` sequentially in `T` (see the [module docs](super) for the algorithm).
pub fn cluster<T: Scalar>(g: &Graph, opts: &MclOptions) -> Result<Clustering> {
    let tr = Transition::new(g, opts)?;
    let n = tr.n;
    if n == 0 {
        return Ok(super::empty_clustering());
    }
    let k = opts.max_per_column;
    // Columns as vectors of (row, value).
    let init = Columns::<T>::initial(&tr, k)?;
    let mut m: Vec<Vec<(u32, T)>> = (0..n)
        .map(|j| {
            let (r, v) = init.column(j);
            r.iter().copied().zip(v.iter().copied()).collect()
        })
        .collect();
    let rval: Vec<T> = tr.val.iter().map(|&x| T::from_f64(x)).collect();
    let mut chaos = f64::INFINITY;
    let mut change = f64::INFINITY;
    let mut iterations = 0;
    let stop = loop {
        if let Some(reason) = stop_reason(opts, iterations, chaos, change) {
            break reason;
        }
        // Balance penalty per node: max(mass, floor)^(-b).
        let pen: Vec<T> = if opts.balanced_at(iterations) {
            let mut mass = vec![0u64; n];
            for c in &m {
                for &(i, x) in c {
                    mass[i as usize] += to_mass(x);
                }
            }
            mass.iter().map(|&x| penalty(x, opts.balance)).collect()
        } else {
            vec![T::one(); n]
        };
        let mut next = Vec::with_capacity(n);
        chaos = 0.0;
        let mut max_change: u64 = 0;
        for j in 0..n {
            // The right operand's column j: (k, weight).
            let right: Vec<(usize, T)> = match opts.expansion_at(iterations) {
                Expansion::Regularized => {
                    let (a, b) = (tr.ptr[j] as usize, tr.ptr[j + 1] as usize);
                    (a..b).map(|t| (tr.row[t] as usize, rval[t])).collect()
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
            let s = from_fixed::<T>(col.iter().map(|e| to_fixed(e.1)).sum());
            let cut = T::from_f64(opts.prune_threshold) * s;
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
            // The L1 change from the previous column j (see column_change).
            let (pr, pv): (Vec<u32>, Vec<T>) = m[j].iter().copied().unzip();
            let (nr, nv): (Vec<u32>, Vec<T>) = col.iter().copied().unzip();
            max_change = max_change.max(column_change((&pr, &pv), (&nr, &nv)));
            next.push(col);
        }
        m = next;
        change = from_fixed::<T>(max_change).to_f64();
        iterations += 1;
    };
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
    Ok(Clustering {
        clusters: interpret(&cols),
        iterations,
        chaos,
        change,
        stop,
        converged: stop.converged(),
        timings: super::MclTimings::default(),
    })
}

//! MLR-MCL's multi-level mode on the host: the weighted graph with self-loops that `M_G` is
//! built from ([`LoopGraph`]), coarsening by heavy-edge matching ([`LoopGraph::coarsen`]),
//! and the projection of a coarse level's flow to the finer level ([`project`]).
//!
//! Coarsening, as MLR-MCL 1.2 does it (`Coarsen2Way`, `Match_SHEMN`, `CreateCoarseGraph`):
//! nodes are visited in a shuffled order; an unmatched node `i` is matched with the
//! unmatched neighbour `k ≠ i` of largest `w_ik·(1/dᵢ + 1/d_k)` (ties: the first in its
//! list) whose vertex weight keeps the pair within `maxvwgt` (⌈10·n/c⌉ for `c` > 100,
//! ⌈2·n/c⌉ for `c` ≤ 100, ⌈1.5·n/c⌉ below 5), else it stays alone. Coarse nodes are numbered
//! in visiting order; a coarse node's lists are the union of its members' lists, weights
//! summed, the edges inside the pair kept as its self-loop; degrees and vertex weights are
//! summed. Levels are made while the graph has more than `c` nodes, each shrinks it below
//! 0.9 of the finer one, and it keeps more list entries than half its nodes. The order is a
//! fixed shuffle (splitmix64, seed [`SEED`]), so runs repeat; MLR-MCL shuffles with
//! `rand()`, so its coarse graphs differ from Trident's.

pub use super::super::columns::LoopGraph;
use super::super::columns::{build_lists, edge_weight};
use super::super::Columns;
use crate::error::Result;
use crate::scalar::Scalar;

/// Seed of the visiting order's shuffle.
pub const SEED: u64 = 4321;
/// A coarse level must have fewer than this fraction of the finer level's nodes.
pub const SHRINK: f64 = 0.9;

/// One coarsening step: the coarse graph and, per finer node, its coarse node (`cmap`), and
/// per coarse node its representative finer node (`rmap`: the member of larger degree, ties
/// the member visited first), which receives the projected flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Coarsening {
    /// The coarse graph.
    pub graph: LoopGraph,
    /// Coarse node of each finer node.
    pub cmap: Vec<u32>,
    /// Representative finer node of each coarse node.
    pub rmap: Vec<u32>,
}

impl LoopGraph {
    /// The largest vertex weight of a pair when coarsening towards `c` nodes.
    pub fn max_vertex_weight(&self, c: usize) -> u64 {
        let n = self.n() as f64;
        let c = c.max(1) as f64;
        let f = if c < 5.0 {
            1.5
        } else if c <= 100.0 {
            2.0
        } else {
            10.0
        };
        (f * n / c).ceil() as u64
    }

    /// One matching step (see the module docs), `None` when it would not shrink the graph
    /// enough.
    pub fn coarsen_once(&self, maxvwgt: u64, seed: u64) -> Option<Coarsening> {
        let n = self.n();
        let d = self.degrees();
        let order = shuffled(n, seed);
        const NONE: u32 = u32::MAX;
        let mut cmap = vec![NONE; n];
        let mut rmap = Vec::new();
        let mut members: Vec<(u32, u32)> = Vec::new();
        for &i in &order {
            let i = i as usize;
            if cmap[i] != NONE {
                continue;
            }
            let (adj, w) = self.list(i);
            let mut best: Option<(usize, f64)> = None;
            for (&k, &wk) in adj.iter().zip(w) {
                let k = k as usize;
                if k == i || cmap[k] != NONE || self.vwgt[i] + self.vwgt[k] > maxvwgt {
                    continue;
                }
                let s = edge_weight(wk, d[i], d[k]);
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((k, s));
                }
            }
            let c = rmap.len() as u32;
            cmap[i] = c;
            match best {
                Some((k, _)) => {
                    cmap[k] = c;
                    rmap.push(if d[k] > d[i] { k as u32 } else { i as u32 });
                    members.push((i as u32, k as u32));
                }
                None => {
                    rmap.push(i as u32);
                    members.push((i as u32, NONE));
                }
            }
        }
        let cn = rmap.len();
        if cn as f64 >= SHRINK * n as f64 {
            return None;
        }
        // The coarse lists: both members' lists mapped through cmap, weights summed (coarse
        // nodes in parallel).
        let (ptr, adj, w) = build_lists(cn, |c, adj, w| {
            let (u, v) = members[c];
            let mut acc: Vec<(u32, f64)> = Vec::new();
            for m in [u, v] {
                if m == NONE {
                    continue;
                }
                let (a, ws) = self.list(m as usize);
                acc.extend(a.iter().map(|&k| cmap[k as usize]).zip(ws.iter().copied()));
            }
            acc.sort_by_key(|e| e.0);
            let start = adj.len();
            for &(k, x) in acc.iter() {
                if adj.len() > start && *adj.last().unwrap() == k {
                    *w.last_mut().unwrap() += x;
                } else {
                    adj.push(k);
                    w.push(x);
                }
            }
        });
        let vwgt: Vec<u64> = members
            .iter()
            .map(|&(u, v)| {
                [u, v]
                    .iter()
                    .filter(|&&m| m != NONE)
                    .map(|&m| self.vwgt[m as usize])
                    .sum()
            })
            .collect();
        if (adj.len() as f64) <= cn as f64 / 2.0 {
            return None;
        }
        Some(Coarsening {
            graph: LoopGraph { ptr, adj, w, vwgt },
            cmap,
            rmap,
        })
    }

    /// The levels of MLR-MCL's coarsening towards `c` nodes, finest first (empty when the
    /// graph has at most `c` nodes).
    pub fn coarsen(&self, c: usize) -> Vec<Coarsening> {
        let maxvwgt = self.max_vertex_weight(c);
        let mut levels: Vec<Coarsening> = Vec::new();
        let mut seed = SEED;
        loop {
            let g = levels.last().map_or(self, |l| &l.graph);
            if g.n() <= c {
                break;
            }
            match g.coarsen_once(maxvwgt, seed) {
                Some(l) => levels.push(l),
                None => break,
            }
            seed = seed.wrapping_add(1);
        }
        levels
    }
}

/// The flow of a coarse level projected to the finer one: finer column `i` is coarse column
/// `cmap[i]` with each row `r` replaced by `rmap[r]` and the values kept (both members of a
/// pair get the same column; flow lands on representatives only), in `K` columns of the
/// finer size.
pub fn project<T: Scalar>(coarse: &Columns<T>, step: &Coarsening) -> Result<Columns<T>> {
    use rayon::prelude::*;
    let n = step.cmap.len();
    let k = coarse.k;
    let mut m = Columns::<T>::zeroed(n, k)?;
    // Columns in parallel, each written in place (its pages first touched here).
    m.idx
        .par_chunks_mut(k.max(1))
        .zip(m.val.par_chunks_mut(k.max(1)))
        .zip(m.len.par_iter_mut())
        .enumerate()
        .with_min_len(256)
        .for_each(|(i, ((oi, ov), ol))| {
            let (r, v) = coarse.column(step.cmap[i] as usize);
            for (t, (&row, &x)) in r.iter().zip(v).enumerate() {
                (oi[t], ov[t]) = (step.rmap[row as usize], x);
            }
            *ol = r.len() as u32;
            // Keep the order of `Columns` (value descending, ties by row): the coarse order
            // holds except among equal values, whose mapped rows may need reordering; an
            // insertion sort of the few entries does it in place.
            let len = r.len();
            for a in 1..len {
                let mut b = a;
                while b > 0 && (ov[b - 1] < ov[b] || (ov[b - 1] == ov[b] && oi[b - 1] > oi[b])) {
                    oi.swap(b - 1, b);
                    ov.swap(b - 1, b);
                    b -= 1;
                }
            }
        });
    Ok(m)
}

/// `0..n` shuffled by Fisher–Yates with splitmix64 from `seed`.
fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

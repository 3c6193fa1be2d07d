//! Triangle counting on the CPU: rayon over the rows of the degree-ordered orientation
//! ([`OrientedGraph`]); for every oriented edge `v → u`, the common out-neighbours of `v`
//! and `u` are counted by merge, binary search or a per-thread bitmap
//! ([`TriangleAlgorithm`]). Totals are `u64` sums of per-row counts; per-node counts go to
//! an array of atomics.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use trident_core::triangles::OrientedGraph;
use trident_core::{
    Error, Result, TriangleAlgorithm, TriangleCount, TriangleCounts, TriangleOptions,
};

use crate::Cpu;

impl TriangleCount for Cpu {
    type Oriented = OrientedGraph;

    fn upload_oriented(&self, g: OrientedGraph) -> Result<OrientedGraph> {
        Ok(g)
    }

    fn count_oriented(&self, g: &OrientedGraph, opts: &TriangleOptions) -> Result<TriangleCounts> {
        let alg = opts.algorithm.resolve(&g.stats(), false);
        let n = g.num_nodes();
        if !opts.per_node {
            let total = count_rows(g, alg, &|_, _, _| {});
            return Ok(TriangleCounts {
                total,
                per_node: None,
            });
        }
        let mut per = Vec::new();
        per.try_reserve_exact(n)
            .map_err(|e| Error::out_of_memory("cpu", format!("{n} per-node counts: {e}")))?;
        per.resize_with(n, || AtomicU64::new(0));
        let total = count_rows(g, alg, &|v, u, w: u32| {
            per[v].fetch_add(1, Ordering::Relaxed);
            per[u as usize].fetch_add(1, Ordering::Relaxed);
            per[w as usize].fetch_add(1, Ordering::Relaxed);
        });
        Ok(TriangleCounts {
            total,
            per_node: Some(
                g.to_original_order(per.into_iter().map(AtomicU64::into_inner).collect()),
            ),
        })
    }
}

/// Counts every triangle once, calling `found(v, u, w)` for each (`v → u` the oriented edge,
/// `w` the common out-neighbour).
fn count_rows<F>(g: &OrientedGraph, alg: TriangleAlgorithm, found: &F) -> u64
where
    F: Fn(usize, u32, u32) + Sync,
{
    let n = g.num_nodes();
    let rows = (0..g.counted_rows()).into_par_iter().with_min_len(64);
    match alg {
        TriangleAlgorithm::Hash => {
            let words = n.div_ceil(64);
            rows.map_init(
                || vec![0u64; words],
                |bits, v| {
                    let nv = g.out_neighbors(v);
                    if nv.len() < 2 {
                        return 0;
                    }
                    for &x in nv {
                        bits[x as usize >> 6] |= 1 << (x & 63);
                    }
                    // Rows are sorted: nothing in N+(u) beyond N+(v)'s largest id is marked.
                    let last = nv[nv.len() - 1];
                    let mut c = 0u64;
                    for &u in nv {
                        for &w in g.out_neighbors(u as usize) {
                            if w > last {
                                break;
                            }
                            if bits[w as usize >> 6] >> (w & 63) & 1 != 0 {
                                c += 1;
                                found(v, u, w);
                            }
                        }
                    }
                    for &x in nv {
                        bits[x as usize >> 6] = 0;
                    }
                    c
                },
            )
            .sum()
        }
        TriangleAlgorithm::BinarySearch => rows
            .map(|v| {
                let nv = g.out_neighbors(v);
                if nv.len() < 2 {
                    return 0;
                }
                nv.iter()
                    .map(|&u| {
                        let nu = g.out_neighbors(u as usize);
                        intersect_search(nv, nu, |w| found(v, u, w))
                    })
                    .sum()
            })
            .sum(),
        TriangleAlgorithm::Merge | TriangleAlgorithm::Auto => rows
            .map(|v| {
                let nv = g.out_neighbors(v);
                if nv.len() < 2 {
                    return 0;
                }
                nv.iter()
                    .map(|&u| {
                        let nu = g.out_neighbors(u as usize);
                        intersect_merge(nv, nu, |w| found(v, u, w))
                    })
                    .sum()
            })
            .sum(),
    }
}

/// `|a ∩ b|` of two sorted lists by linear merge, calling `hit` on each common element.
#[inline]
fn intersect_merge(a: &[u32], b: &[u32], mut hit: impl FnMut(u32)) -> u64 {
    let (mut i, mut j, mut c) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x == y {
            hit(x);
            c += 1;
        }
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    c
}

/// `|a ∩ b|` of two sorted lists: each element of the shorter searched in the rest of the
/// longer (galloping from the last position, then binary search), calling `hit` on each
/// common element.
#[inline]
fn intersect_search(a: &[u32], b: &[u32], mut hit: impl FnMut(u32)) -> u64 {
    let (small, mut large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut c = 0u64;
    for &x in small {
        // Gallop: find a window [lo, hi) of `large` that holds x's position.
        let mut step = 1;
        while step < large.len() && large[step - 1] < x {
            step *= 2;
        }
        let hi = step.min(large.len());
        match large[..hi].binary_search(&x) {
            Ok(p) => {
                hit(x);
                c += 1;
                large = &large[p + 1..];
            }
            Err(p) => large = &large[p..],
        }
        if large.is_empty() {
            break;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersections_agree() {
        let a = [1, 3, 5, 7, 9, 11, 40, 41, 42];
        let b = [0, 3, 4, 9, 10, 11, 12, 41, 50, 60];
        let mut m = Vec::new();
        let mut s = Vec::new();
        assert_eq!(intersect_merge(&a, &b, |x| m.push(x)), 4);
        assert_eq!(intersect_search(&a, &b, |x| s.push(x)), 4);
        assert_eq!(m, [3, 9, 11, 41]);
        assert_eq!(s, m);
        assert_eq!(intersect_search(&[], &b, |_| ()), 0);
        assert_eq!(intersect_merge(&a, &[], |_| ()), 0);
    }
}

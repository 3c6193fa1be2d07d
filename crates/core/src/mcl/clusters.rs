//! From the converged `M` to clusters: each node's target, the connected components of the
//! targets, and the order clusters are reported in.

use rayon::prelude::*;

use super::columns::Columns;
use super::{Clustering, MclTimings, StopReason};
use crate::scalar::Scalar;

/// The clusters of `M` (every node in exactly one, largest cluster first, ties by smallest
/// node). Attractors are the nodes with a non-zero diagonal entry. Every node `j` points at the
/// attractor with the largest entry in its column (ties: the smaller row), or, when its
/// column holds no attractor (only before convergence), at its largest entry's row; the
/// clusters are the connected components of these pointers. So an attractor whose column
/// prefers another attractor joins it (attractor systems), and each other node joins the
/// attractor it sends most flow to — one cluster per node, deterministically, even where
/// R-MCL leaves a boundary node's flow split. Isolated nodes are their own attractors, hence
/// singletons.
pub fn interpret<T: Scalar>(m: &Columns<T>) -> Vec<Vec<usize>> {
    interpret_targets(&targets(m))
}

/// No target: a column without a positive entry (see [`targets`]).
pub const NO_TARGET: u32 = u32::MAX;

/// Each node's pointer of [`interpret`]: the row of the largest positive entry of column `j`
/// among the attractors (ties: the smaller row), else among all rows, else [`NO_TARGET`].
/// The GPU backends compute the same on the device (`mcl_attractor`, `mcl_target`) and read
/// back only these `n` numbers, not `M`.
pub fn targets<T: Scalar>(m: &Columns<T>) -> Vec<u32> {
    let col = |j: usize| m.column(j);
    targets_by(m.n, &attractors_by(m.n, 0, col), col)
}

/// Whether each of `n` columns (`col(j)`: rows and values of column `j`, the node `c0 + j`)
/// holds a positive diagonal entry: the attractors of [`targets`].
pub(crate) fn attractors_by<'a, T: Scalar>(
    n: usize,
    c0: usize,
    col: impl Fn(usize) -> (&'a [u32], &'a [T]) + Sync,
) -> Vec<bool> {
    (0..n)
        .into_par_iter()
        .map(|j| {
            let (r, v) = col(j);
            r.iter()
                .zip(v)
                .any(|(&i, &x)| i as usize == c0 + j && x > T::zero())
        })
        .collect()
}

/// The pointers of [`targets`] of `n` columns (`col(j)`), given every node's attractor flag
/// `is_attr` (indexed by row).
pub(crate) fn targets_by<'a, T: Scalar>(
    n: usize,
    is_attr: &[bool],
    col: impl Fn(usize) -> (&'a [u32], &'a [T]) + Sync,
) -> Vec<u32> {
    let best = |j: usize, want_attr: bool| -> Option<u32> {
        let (r, v) = col(j);
        let mut best: Option<(u32, T)> = None;
        for (&i, &x) in r.iter().zip(v) {
            if (want_attr && !is_attr[i as usize]) || x <= T::zero() {
                continue;
            }
            best = match best {
                Some((bi, bx)) if bx > x || (bx == x && bi < i) => Some((bi, bx)),
                _ => Some((i, x)),
            };
        }
        best.map(|b| b.0)
    };
    (0..n)
        .into_par_iter()
        .map(|j| {
            best(j, true)
                .or_else(|| best(j, false))
                .unwrap_or(NO_TARGET)
        })
        .collect()
}

/// The clusters of [`interpret`] from each node's pointer ([`targets`]): the connected
/// components of the pointers (a pointer outside `0..n`, e.g. [`NO_TARGET`], is none).
///
/// In parallel: a lock-free union-find whose links always go from the larger root to the
/// smaller, so every component's root ends as its smallest node whatever the order in which
/// threads link (the result does not depend on the thread count), then
/// [`clusters_of_min_roots`].
pub fn interpret_targets(target: &[u32]) -> Vec<Vec<usize>> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let n = target.len();
    let parent: Vec<AtomicUsize> = (0..n).into_par_iter().map(AtomicUsize::new).collect();
    // The root of `x`, halving the path on the way (a parent only ever moves to an ancestor,
    // so a failed or stale halving step is harmless).
    let find = |mut x: usize| loop {
        let p = parent[x].load(Relaxed);
        if p == x {
            return x;
        }
        let gp = parent[p].load(Relaxed);
        if gp != p {
            let _ = parent[x].compare_exchange_weak(p, gp, Relaxed, Relaxed);
        }
        x = gp;
    };
    target
        .par_iter()
        .enumerate()
        .with_min_len(1 << 12)
        .for_each(|(j, &t)| {
            let t = t as usize;
            if t >= n {
                return;
            }
            loop {
                let (a, b) = (find(t), find(j));
                if a == b {
                    return;
                }
                let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                // Link `hi` under `lo` only while `hi` is still a root; else look again.
                if parent[hi]
                    .compare_exchange(hi, lo, Relaxed, Relaxed)
                    .is_ok()
                {
                    return;
                }
            }
        });
    let root: Vec<usize> = (0..n).into_par_iter().map(find).collect();
    clusters_of_min_roots(&root)
}

/// [`clusters_from_roots`] for labels that are each cluster's smallest member (`root[u] ≤
/// u` and `root[root[u]] = root[u]`, as [`interpret_targets`]' union-find leaves them):
/// [`clusters_by_key`] with the root as the key.
pub fn clusters_of_min_roots(root: &[usize]) -> Vec<Vec<usize>> {
    debug_assert!(root
        .iter()
        .enumerate()
        .all(|(u, &r)| r <= u && root[r] == r));
    clusters_by_key(root.len(), |u| Some(root[u] as u64))
}

/// The clusters of `n` nodes grouped by `key(u)` (nodes of one key form a cluster; `None`
/// makes a node a cluster of its own), in the order of [`sort_clusters`] (largest first, ties
/// by the smallest member; members ascending), with no pass over the nodes in one thread:
/// every keyed node as one word `key · 2^32 + node`, the words sorted by all threads (each
/// cluster's members then lie together, ascending), the clusters cut where the key changes,
/// ordered, and copied out in parallel. Nodes and keys are below 2^32, as every node
/// number of a graph is.
pub(crate) fn clusters_by_key(
    n: usize,
    key: impl Fn(usize) -> Option<u64> + Sync,
) -> Vec<Vec<usize>> {
    assert!(n as u64 <= 1 << 32, "node numbers of a graph fit 32 bits");
    let mut words: Vec<u64> = (0..n)
        .into_par_iter()
        .filter_map(|u| {
            key(u).map(|k| {
                debug_assert!(k < 1 << 32);
                k << 32 | u as u64
            })
        })
        .collect();
    words.par_sort_unstable();
    let node = |w: u64| (w & u64::from(u32::MAX)) as usize;
    // Where each keyed cluster starts in `words`, and the end.
    let cut = |i: usize| i == 0 || words[i] >> 32 != words[i - 1] >> 32;
    let mut starts: Vec<usize> = (0..words.len())
        .into_par_iter()
        .filter(|&i| cut(i))
        .collect();
    starts.push(words.len());
    let groups = starts.len() - 1;
    let lone: Vec<usize> = (0..n)
        .into_par_iter()
        .filter(|&u| key(u).is_none())
        .collect();
    // Every cluster as (size, smallest member, which): keyed cluster `which`, or the lone
    // node `which - groups`.
    let mut order: Vec<(usize, usize, usize)> = (0..groups)
        .into_par_iter()
        .map(|c| (starts[c + 1] - starts[c], node(words[starts[c]]), c))
        .chain(lone.par_iter().map(|&u| (1, u, usize::MAX)))
        .collect();
    order.par_sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order
        .par_iter()
        .map(|&(_, first, c)| {
            if c == usize::MAX {
                vec![first]
            } else {
                words[starts[c]..starts[c + 1]]
                    .iter()
                    .map(|&w| node(w))
                    .collect()
            }
        })
        .collect()
}

/// Groups nodes by label; clusters sorted largest first, ties by smallest member.
pub fn clusters_from_roots(root: &[usize]) -> Vec<Vec<usize>> {
    let mut map = std::collections::HashMap::new();
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for (u, &r) in root.iter().enumerate() {
        let c = *map.entry(r).or_insert_with(|| {
            clusters.push(Vec::new());
            clusters.len() - 1
        });
        clusters[c].push(u);
    }
    sort_clusters(&mut clusters);
    clusters
}

/// Sorts members, then clusters largest first, ties by smallest member.
pub fn sort_clusters(clusters: &mut [Vec<usize>]) {
    for c in clusters.iter_mut() {
        c.sort_unstable();
    }
    clusters.sort_by(|a, b| b.len().cmp(&a.len()).then(a.first().cmp(&b.first())));
}

/// Which of two clusterings' clusters differ: `None` when they are the same partition, else a
/// short description of the first difference (for test messages).
pub fn partition_difference(a: &[Vec<usize>], b: &[Vec<usize>]) -> Option<String> {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    sort_clusters(&mut a);
    sort_clusters(&mut b);
    if a == b {
        return None;
    }
    if a.len() != b.len() {
        return Some(format!("{} clusters vs {}", a.len(), b.len()));
    }
    let (x, y) = a.iter().zip(&b).find(|(x, y)| x != y)?;
    let show = |c: &Vec<usize>| {
        let s: Vec<String> = c.iter().take(12).map(|u| u.to_string()).collect();
        format!("[{}{}]", s.join(" "), if c.len() > 12 { " …" } else { "" })
    };
    Some(format!("cluster {} vs {}", show(x), show(y)))
}

/// Clustering of a graph with no nodes.
pub fn empty_clustering() -> Clustering {
    Clustering {
        clusters: Vec::new(),
        iterations: 0,
        chaos: 0.0,
        change: 0.0,
        stop: StopReason::Chaos,
        levels: 1,
        converged: true,
        timings: MclTimings::default(),
    }
}

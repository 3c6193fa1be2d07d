//! R-MCL written from the definition (dense `f64`, independent of the library's code paths)
//! and the weighted test graphs it is compared on.

use crate::graph::Graph;
use crate::mcl::MclOptions;

/// The xorshift stream of the test graphs below (fixed seeds: the same graphs every run).
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    crate::testing::xorshift(seed | 1)
}

/// A weighted graph of `blocks` blocks of 5 to 9 nodes, dense inside (weights in [1, 2),
/// all distinct in practice: no exact ties), sparse and light between (weights in [0.1,
/// 0.3)), with one isolated node at the end.
pub(super) fn weighted_blocks(seed: u64, blocks: usize) -> Graph {
    let mut r = xorshift(seed);
    let mut unit = move || (r() >> 11) as f64 / (1u64 << 53) as f64;
    let mut block = Vec::new();
    for b in 0..blocks {
        let size = 5 + (unit() * 5.0) as usize;
        block.extend(std::iter::repeat_n(b, size));
    }
    let n = block.len() + 1;
    let mut e = Vec::new();
    for i in 0..block.len() {
        for j in i + 1..block.len() {
            if block[i] == block[j] {
                if unit() < 0.8 {
                    e.push((i, j, 1.0 + unit()));
                }
            } else if unit() < 0.04 {
                e.push((i, j, 0.1 + 0.2 * unit()));
            }
        }
    }
    Graph::from_weighted_edges(n, e).expect("test graph")
}

/// R-MCL written from the definition, independently of the library's code paths: dense
/// `f64` matrices, plain `f64` sums (no fixed point), inflation in the log domain relative
/// to the column maximum, no top-K (the caller sets `K ≥ n`), the same stop rule and
/// interpretation rule (see the [`crate::mcl`] module docs). Returns the clusters and the
/// final chaos.
pub(super) fn dense_mcl(g: &Graph, o: &MclOptions) -> (Vec<Vec<usize>>, f64) {
    let n = g.num_nodes();
    let at = |i: usize, j: usize| i * n + j; // row i, column j
    let mut mg = vec![0.0f64; n * n];
    for j in 0..n {
        let nb = g.neighbors(j);
        let w = |t: usize| g.neighbor_weights(j).map_or(1.0, |w| w[t]);
        let mut big = 0.0f64;
        for (t, &i) in nb.iter().enumerate() {
            mg[at(i as usize, j)] = w(t);
            big = big.max(w(t));
        }
        mg[at(j, j)] = if nb.is_empty() {
            1.0
        } else {
            o.self_loop_weight * big
        };
        let s: f64 = (0..n).map(|i| mg[at(i, j)]).sum();
        for i in 0..n {
            mg[at(i, j)] /= s;
        }
    }
    let mut m = mg.clone();
    let (mut chaos, mut change) = (f64::INFINITY, f64::INFINITY);
    let mut it = 0;
    loop {
        if chaos < o.chaos_tolerance || change < o.stationary_tolerance || it >= o.max_iterations {
            break;
        }
        let rmcl = o.expansion == crate::mcl::Expansion::Regularized
            && (o.finish_after == 0 || it < o.finish_after);
        let pen: Vec<f64> = (0..n)
            .map(|i| {
                if rmcl && o.mass_penalty > 0.0 {
                    let mass: f64 = (0..n).map(|j| m[at(i, j)]).sum();
                    mass.max(1.0).powf(-o.mass_penalty)
                } else {
                    1.0
                }
            })
            .collect();
        let right = if rmcl { mg.clone() } else { m.clone() };
        let mut next = vec![0.0f64; n * n];
        (chaos, change) = (0.0, 0.0);
        for j in 0..n {
            let x: Vec<f64> = (0..n)
                .map(|i| pen[i] * (0..n).map(|k| m[at(i, k)] * right[at(k, j)]).sum::<f64>())
                .collect();
            let top = x.iter().cloned().fold(0.0, f64::max);
            let mut y: Vec<f64> = x
                .iter()
                .map(|&v| {
                    if v > 0.0 {
                        (o.inflation * (v / top).ln()).exp()
                    } else {
                        0.0
                    }
                })
                .collect();
            let s: f64 = y.iter().sum();
            y.iter_mut()
                .for_each(|v| *v = if *v >= o.prune_threshold * s { *v } else { 0.0 });
            let s: f64 = y.iter().sum();
            y.iter_mut().for_each(|v| *v /= s);
            let (mx, sq) = (
                y.iter().cloned().fold(0.0, f64::max),
                y.iter().map(|v| v * v).sum::<f64>(),
            );
            chaos = chaos.max(mx - sq);
            change = change.max((0..n).map(|i| (y[i] - m[at(i, j)]).abs()).sum::<f64>());
            for i in 0..n {
                next[at(i, j)] = y[i];
            }
        }
        m = next;
        it += 1;
    }
    // Attractors: a positive diagonal. Each node points at its column's largest entry among
    // attractors (ties: the smaller row), else its largest entry; clusters are the connected
    // components of the pointers.
    let attractor: Vec<bool> = (0..n).map(|j| m[at(j, j)] > 0.0).collect();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            x = p[x];
        }
        x
    }
    for j in 0..n {
        let best = |want: bool| {
            (0..n)
                .filter(|&i| m[at(i, j)] > 0.0 && (!want || attractor[i]))
                .fold(None, |b: Option<usize>, i| match b {
                    Some(b) if m[at(b, j)] >= m[at(i, j)] => Some(b),
                    _ => Some(i),
                })
        };
        if let Some(t) = best(true).or_else(|| best(false)) {
            let (a, b) = (find(&mut parent, t), find(&mut parent, j));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for u in 0..n {
        let r = find(&mut parent, u);
        groups.entry(r).or_default().push(u);
    }
    (groups.into_values().collect(), chaos)
}

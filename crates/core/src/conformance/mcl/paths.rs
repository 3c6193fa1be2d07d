//! Every path the options can force: inflation across its range against the dense
//! definition, every node in exactly one cluster, and every planner path on a graph with a hub.

use super::dense::{dense_mcl, weighted_blocks};
use super::{run, same_as_reference};
use crate::graph::Graph;
use crate::mcl::{partition_difference, reference, MarkovCluster, MclOptions};
use crate::scalar::Scalar;

/// Inflation across its range, 1.5 to 20, in both expansions: the backend's iterate stays
/// stochastic (finite chaos in [0, 1], column changes at most 2: checked by [`run`]), it
/// agrees with the reference in the same precision, and its partition is the one of the
/// dense `f64` definition ([`dense_mcl`], independent of the library) on graphs without ties.
/// At `r = 20` the entries of a column of 5 to 9 nodes are about 0.1, whose 20th powers
/// (1e-20) vanish in the fixed-point sums unless the column is scaled by its maximum first.
pub(super) fn inflation_range<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    for (seed, blocks) in [(5u64, 4usize), (9, 6)] {
        let g = weighted_blocks(seed, blocks);
        for r in [1.5, 2.0, 3.0, 6.0, 20.0] {
            for expansion in [
                crate::mcl::Expansion::Regularized,
                crate::mcl::Expansion::Mcl,
            ] {
                let o = MclOptions {
                    inflation: r,
                    expansion,
                    max_per_column: g.num_nodes(),
                    ..MclOptions::default()
                };
                let what = format!("seed {seed}, r = {r}, {expansion:?}, {}", T::NAME);
                let c = run::<T, B>(b, &g, &o).map_err(|e| format!("{what}: {e}"))?;
                same_as_reference::<T>(&c, &g, &o, &what)?;
                let (want, chaos) = dense_mcl(&g, &o);
                if !chaos.is_finite() {
                    return Err(format!("{what}: the dense definition's chaos is {chaos}"));
                }
                if let Some(d) = partition_difference(&c.clusters, &want) {
                    return Err(format!(
                        "{what}: differs from the dense f64 definition: {d}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every node of the graph is in exactly one cluster ([`run`] checks it), singletons
/// included: isolated nodes first, last and between blocks, a graph of isolated nodes only,
/// one node, with every expansion, with and without self-loops, at several inflations and K.
pub(super) fn every_node_once<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    // Nodes 0, 4, 9 and 10 isolated; a triangle 1-2-3 and a path 5-6-7-8.
    let g = Graph::from_edges(11, [(1, 2), (2, 3), (1, 3), (5, 6), (6, 7), (7, 8)]).unwrap();
    let one = Graph::from_edges(1, []).unwrap();
    let lonely = Graph::from_edges(4, []).unwrap();
    for (name, g) in [("mixed", &g), ("one node", &one), ("isolated", &lonely)] {
        for o in [
            MclOptions::default(),
            MclOptions {
                self_loop_weight: 0.0,
                inflation: 6.0,
                ..MclOptions::default()
            },
            MclOptions {
                expansion: crate::mcl::Expansion::Mcl,
                inflation: 20.0,
                max_per_column: 2,
                ..MclOptions::default()
            },
            MclOptions {
                max_per_column: 1,
                mass_penalty: 1.0,
                finish_after: 0,
                ..MclOptions::default()
            },
        ] {
            let c = run::<T, B>(b, g, &o).map_err(|e| format!("{name}: {e}"))?;
            let singles: Vec<usize> = c
                .clusters
                .iter()
                .filter(|c| c.len() == 1)
                .map(|c| c[0])
                .collect();
            let isolated: Vec<usize> = (0..g.num_nodes())
                .filter(|&u| g.neighbors(u).is_empty())
                .collect();
            if let Some(u) = isolated.iter().find(|u| !singles.contains(u)) {
                return Err(format!(
                    "{name}, {o:?}: isolated node {u} is not a singleton"
                ));
            }
            same_as_reference::<T>(&c, g, &o, name)?;
        }
    }
    Ok(())
}

/// A graph whose columns take every path of the GPU planners: blocks, a hub joined to 70
/// nodes (more candidates than half a small local table, and than `K`), weights.
pub(super) fn hub_graph() -> Graph {
    let mut g = weighted_blocks(13, 8);
    let n = g.num_nodes();
    let mut e: Vec<(usize, usize, f64)> = Vec::new();
    for u in 0..n {
        for (t, &v) in g.neighbors(u).iter().enumerate() {
            if (v as usize) > u {
                e.push((u, v as usize, g.neighbor_weights(u).map_or(1.0, |w| w[t])));
            }
        }
    }
    let hub = n;
    for v in 0..n.min(70) {
        e.push((hub, v, 0.5 + (v % 3) as f64 * 0.25));
    }
    g = Graph::from_weighted_edges(n + 1, e).expect("hub graph");
    g
}

/// Every path the planners can choose, forced through the options on a graph with a hub:
/// the local hash table (default) and the global-memory hub path (a local table of 4 or
/// 16 slots: most or some columns spill), column work-groups of 32 and 1024 work-items,
/// balanced and unbalanced iterations with the penalty exponents 0.5 (`1/√m`), 1 (`1/m`) and
/// others (`pow`), inflation 2 (`x·x`) and others (`pow`), both expansions and the `M·M`
/// finish, and K from 2 (every column cut) to 64. A fixed number of iterations (not
/// converged, so every entry matters): the same partition as the reference, the same stop
/// and iteration count, and chaos and change within rounding (bit for bit where every
/// operation is correctly rounded: f64, inflation 2, penalty exponent 0, 0.5 or 1).
pub(super) fn every_path<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    use crate::mcl::Expansion::{Mcl, Regularized};
    let g = hub_graph();
    // (local table, work-group, balance, inflation, expansion, finish_after, K)
    type Case = (
        Option<usize>,
        Option<usize>,
        f64,
        f64,
        crate::mcl::Expansion,
        usize,
        usize,
    );
    let cases: [Case; 10] = [
        (None, None, 0.5, 2.0, Regularized, 3, 64),
        (Some(4), None, 0.5, 2.0, Regularized, 3, 64),
        (Some(16), Some(32), 1.0, 1.7, Regularized, 0, 8),
        (Some(4), Some(1024), 0.3, 3.0, Regularized, 2, 5),
        (None, Some(32), 0.0, 2.0, Regularized, 0, 2),
        (Some(4), Some(64), 0.75, 2.0, Regularized, 4, 16),
        (None, Some(1024), 0.0, 1.5, Mcl, 0, 64),
        (Some(4), Some(32), 0.0, 2.0, Mcl, 0, 3),
        (Some(64), None, 1.0, 2.5, Regularized, 1, 32),
        (None, None, 0.25, 6.0, Regularized, 3, 10),
    ];
    for (local_table, column_wg, balance, inflation, expansion, finish_after, k) in cases {
        let o = MclOptions {
            local_table,
            column_wg,
            mass_penalty: balance,
            inflation,
            expansion,
            finish_after,
            max_per_column: k,
            max_iterations: 5,
            ..MclOptions::default()
        };
        let what = format!(
            "{} table {local_table:?}, wg {column_wg:?}, b = {balance}, r = {inflation}, \
             {expansion:?}, finish after {finish_after}, K = {k}",
            T::NAME
        );
        let c = run::<T, B>(b, &g, &o).map_err(|e| format!("{what}: {e}"))?;
        let r = reference::cluster::<T>(&g, &o).map_err(|e| e.to_string())?;
        let exact = T::NAME == "f64" && inflation == 2.0 && [0.0, 0.5, 1.0].contains(&balance);
        let tol = if exact {
            0.0
        } else if T::NAME == "f64" {
            1e-9
        } else {
            1e-3
        };
        let close = |a: f64, b: f64| (a - b).abs() <= tol * b.abs().max(1e-3);
        if (c.stop, c.iterations) != (r.stop, r.iterations)
            || !close(c.chaos, r.chaos)
            || !close(c.change, r.change)
        {
            return Err(format!(
                "{what}: stopped ({}) after {} iterations, chaos {:e}, change {:e}; the \
                 reference ({}) after {}, chaos {:e}, change {:e}",
                c.stop, c.iterations, c.chaos, c.change, r.stop, r.iterations, r.chaos, r.change
            ));
        }
        if let Some(d) = partition_difference(&c.clusters, &r.clusters) {
            return Err(format!("{what}: differs from the reference: {d}"));
        }
    }
    Ok(())
}

//! R-MCL conformance: tiny graphs checked by hand, planted partitions (proptest) and the
//! shared protein interaction networks, each compared with the sequential reference in the
//! same precision ([`crate::mcl::reference`]): every backend must give the same partition.

mod dense;
mod mlr;
mod paths;
mod ranks;

use proptest::prelude::*;

use super::{run_proptest, Check};
use crate::graph::Graph;
use crate::mcl::{
    partition_difference, reference, Clustering, MarkovCluster, MclOptions, StopReason,
};
use crate::scalar::Scalar;
use dense::weighted_blocks;
use paths::{every_node_once, every_path, hub_graph, inflation_range};

/// The R-MCL checks, in table order.
pub fn checks<B: MarkovCluster<f32> + MarkovCluster<f64> + Sync>() -> Vec<Check<B>> {
    vec![
        Check {
            name: "mcl_hand_checked_f32",
            run: hand_checked::<f32, B>,
        },
        Check {
            name: "mcl_hand_checked_f64",
            run: hand_checked::<f64, B>,
        },
        Check {
            name: "mcl_bad_input_is_error",
            run: bad_input::<B>,
        },
        Check {
            name: "mcl_planted_partition_f32",
            run: planted::<f32, B>,
        },
        Check {
            name: "mcl_planted_partition_f64",
            run: planted::<f64, B>,
        },
        Check {
            name: "mcl_ppi_networks_f64",
            run: ppi::<f64, B>,
        },
        Check {
            name: "mcl_stationary_stop_f64",
            run: stationary::<f64, B>,
        },
        Check {
            name: "mcl_converges_on_planted_f64",
            run: converges::<f64, B>,
        },
        Check {
            name: "mcl_inflation_range_f32",
            run: inflation_range::<f32, B>,
        },
        Check {
            name: "mcl_inflation_range_f64",
            run: inflation_range::<f64, B>,
        },
        Check {
            name: "mcl_every_node_once_f32",
            run: every_node_once::<f32, B>,
        },
        Check {
            name: "mcl_every_node_once_f64",
            run: every_node_once::<f64, B>,
        },
        Check {
            name: "mcl_every_path_f32",
            run: every_path::<f32, B>,
        },
        Check {
            name: "mcl_every_path_f64",
            run: every_path::<f64, B>,
        },
        Check {
            name: "mcl_mlrmcl_hand_checked_f64",
            run: mlr::hand_checked::<f64, B>,
        },
        Check {
            name: "mcl_mlrmcl_matches_reference_f32",
            run: mlr::matches_reference::<f32, B>,
        },
        Check {
            name: "mcl_mlrmcl_matches_reference_f64",
            run: mlr::matches_reference::<f64, B>,
        },
        Check {
            name: "mcl_mlrmcl_planted_f32",
            run: mlr::planted::<f32, B>,
        },
        Check {
            name: "mcl_mlrmcl_planted_f64",
            run: mlr::planted::<f64, B>,
        },
        Check {
            name: "mcl_weight_scale_invariance_f64",
            run: mlr::weight_scale::<f64, B>,
        },
        Check {
            name: "mcl_distributed_f32",
            run: ranks::distributed::<f32, B>,
        },
        Check {
            name: "mcl_distributed_f64",
            run: ranks::distributed::<f64, B>,
        },
        Check {
            name: "mcl_distributed_random_f64",
            run: ranks::distributed_random::<f64, B>,
        },
        Check {
            name: "mcl_distributed_small_f32",
            run: ranks::distributed_small::<f32, B>,
        },
        Check {
            name: "mcl_distributed_pack_round_trip_f32",
            run: ranks::pack_round_trip::<f32, B>,
        },
        Check {
            name: "mcl_distributed_pack_round_trip_f64",
            run: ranks::pack_round_trip::<f64, B>,
        },
    ]
}

/// Instantiates the R-MCL conformance suite as `#[test]`s for backend type `$ty`.
#[macro_export]
macro_rules! mcl_conformance_tests {
    ($ty:ty, $make:expr) => {
        $crate::conformance_tests!(
            $ty,
            $make,
            mcl::checks;
            mcl_hand_checked_f32,
            mcl_hand_checked_f64,
            mcl_bad_input_is_error,
            mcl_planted_partition_f32,
            mcl_planted_partition_f64,
            mcl_ppi_networks_f64,
            mcl_stationary_stop_f64,
            mcl_converges_on_planted_f64,
            mcl_inflation_range_f32,
            mcl_inflation_range_f64,
            mcl_every_node_once_f32,
            mcl_every_node_once_f64,
            mcl_every_path_f32,
            mcl_every_path_f64,
            mcl_mlrmcl_hand_checked_f64,
            mcl_mlrmcl_matches_reference_f32,
            mcl_mlrmcl_matches_reference_f64,
            mcl_mlrmcl_planted_f32,
            mcl_mlrmcl_planted_f64,
            mcl_weight_scale_invariance_f64,
            mcl_distributed_f32,
            mcl_distributed_f64,
            mcl_distributed_random_f64,
            mcl_distributed_small_f32,
            mcl_distributed_pack_round_trip_f32,
            mcl_distributed_pack_round_trip_f64
        );
    };
}

fn run<T: Scalar, B: MarkovCluster<T>>(
    b: &B,
    g: &Graph,
    o: &MclOptions,
) -> Result<Clustering, String> {
    let c = b
        .cluster(g, o)
        .map_err(|e| format!("{} {}: {e}", b.name(), T::NAME))?;
    // Every node in exactly one cluster.
    let mut seen = vec![false; g.num_nodes()];
    for &u in c.clusters.iter().flatten() {
        if u >= seen.len() || seen[u] {
            return Err(format!("node {u} out of range or in two clusters"));
        }
        seen[u] = true;
    }
    if let Some(u) = seen.iter().position(|s| !s) {
        return Err(format!("node {u} is in no cluster"));
    }
    // A stochastic iterate: the chaos is in [0, 1] and a column changes by at most 2 (L1)
    // (infinite only when no iteration ran).
    let sane = |x: f64, hi: f64| x.is_finite() && (0.0..=hi * (1.0 + 1e-5)).contains(&x);
    if c.iterations > 0 && !(sane(c.chaos, 1.0) && sane(c.change, 2.0)) {
        return Err(format!(
            "{} {}: chaos {} / column change {} outside [0, 1] / [0, 2] after {} iterations",
            b.name(),
            T::NAME,
            c.chaos,
            c.change,
            c.iterations
        ));
    }
    Ok(c)
}

fn expect(got: &Clustering, want: &[&[usize]], what: &str) -> Result<(), String> {
    let want: Vec<Vec<usize>> = want.iter().map(|c| c.to_vec()).collect();
    match partition_difference(&got.clusters, &want) {
        None => Ok(()),
        Some(d) => Err(format!("{what}: {d} (got {:?})", got.clusters)),
    }
}

fn hand_checked<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    let o = MclOptions::default();
    // Two disjoint triangles: two clusters, converged.
    let g = Graph::from_edges(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]).unwrap();
    let c = run::<T, B>(b, &g, &o)?;
    expect(&c, &[&[0, 1, 2], &[3, 4, 5]], "two triangles")?;
    if !c.converged {
        return Err(format!("two triangles did not converge: chaos {}", c.chaos));
    }
    // Isolated nodes are singletons; a single edge is one cluster.
    let g = Graph::from_edges(5, [(0, 1)]).unwrap();
    expect(
        &run::<T, B>(b, &g, &o)?,
        &[&[0, 1], &[2], &[3], &[4]],
        "edge + isolated",
    )?;
    // Only isolated nodes; no nodes at all.
    let g = Graph::from_edges(3, []).unwrap();
    expect(
        &run::<T, B>(b, &g, &o)?,
        &[&[0], &[1], &[2]],
        "isolated only",
    )?;
    let g = Graph::from_edges(0, []).unwrap();
    expect(&run::<T, B>(b, &g, &o)?, &[], "empty")?;
    // Two 4-cliques joined by one edge (3-4): the bridge does not merge them, in either
    // expansion.
    let mut e = Vec::new();
    for base in [0, 4] {
        for i in 0..4 {
            for j in i + 1..4 {
                e.push((base + i, base + j));
            }
        }
    }
    e.push((3, 4));
    let g = Graph::from_edges(8, e).unwrap();
    let bridged = g.clone();
    expect(
        &run::<T, B>(b, &g, &o)?,
        &[&[0, 1, 2, 3], &[4, 5, 6, 7]],
        "bridged cliques",
    )?;
    let mo = MclOptions {
        expansion: crate::mcl::Expansion::Mcl,
        ..o.clone()
    };
    expect(
        &run::<T, B>(b, &g, &mo)?,
        &[&[0, 1, 2, 3], &[4, 5, 6, 7]],
        "bridged cliques, mcl",
    )?;
    // A path: clusters are contiguous segments and equal the reference's.
    let g = Graph::from_edges(9, (0..8).map(|i| (i, i + 1))).unwrap();
    let c = run::<T, B>(b, &g, &o)?;
    for cl in &c.clusters {
        if cl.windows(2).any(|w| w[1] != w[0] + 1) {
            return Err(format!("path: cluster {cl:?} is not a segment"));
        }
    }
    same_as_reference::<T>(&c, &g, &o, "path")?;
    // The stop reason: the triangles stop on chaos; a one-iteration cap is reported as such.
    let g = Graph::from_edges(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]).unwrap();
    let c = run::<T, B>(b, &g, &o)?;
    if c.stop != StopReason::Chaos || !c.converged {
        return Err(format!(
            "two triangles: stop {:?}, converged {}",
            c.stop, c.converged
        ));
    }
    let capped = MclOptions {
        max_iterations: 1,
        ..o.clone()
    };
    let g = Graph::from_edges(9, (0..8).map(|i| (i, i + 1))).unwrap();
    let c = run::<T, B>(b, &g, &capped)?;
    if c.stop != StopReason::IterationCap || c.converged || c.iterations != 1 {
        return Err(format!(
            "path, 1 iteration: stop {:?}, converged {}, {} iterations",
            c.stop, c.converged, c.iterations
        ));
    }
    // The interpretation of unconverged iterates (columns spread over attractors and other
    // rows, where the pointer rule decides the partition): after 1 to 11 iterations of a
    // path, a star with tails, a star, the bridged cliques and a weighted block graph, the
    // same partition as the reference's. (Found by search: the path at r = 2 with `M·M`
    // after 6 or 8 iterations, or at r = 3 with R-MCL after 11, and the star after 4 with
    // `M·M`, split differently when attractors are taken from the off-diagonal entries or
    // when a column prefers non-attractor rows.)
    let mut spider = Vec::new();
    for leg in 0..4 {
        spider.push((0, 1 + 3 * leg));
        spider.push((1 + 3 * leg, 2 + 3 * leg));
        spider.push((2 + 3 * leg, 3 + 3 * leg));
    }
    let graphs = [
        (
            "path",
            Graph::from_edges(9, (0..8).map(|i| (i, i + 1))).unwrap(),
        ),
        ("spider", Graph::from_edges(13, spider).unwrap()),
        (
            "star",
            Graph::from_edges(9, (1..9).map(|i| (0, i))).unwrap(),
        ),
        ("bridged cliques", bridged),
        ("weighted blocks", weighted_blocks(21, 4)),
    ];
    for (name, g) in &graphs {
        for iterations in [1, 2, 4, 6, 8, 11] {
            for inflation in [2.0, 3.0] {
                for expansion in [
                    crate::mcl::Expansion::Regularized,
                    crate::mcl::Expansion::Mcl,
                ] {
                    let early = MclOptions {
                        max_iterations: iterations,
                        expansion,
                        inflation,
                        ..o.clone()
                    };
                    let c = run::<T, B>(b, g, &early)?;
                    let what =
                        format!("{name}, r = {inflation}, {iterations} iterations, {expansion:?}");
                    same_as_reference::<T>(&c, g, &early, &what)?;
                }
            }
        }
    }
    Ok(())
}

fn same_as_reference<T: Scalar>(
    c: &Clustering,
    g: &Graph,
    o: &MclOptions,
    what: &str,
) -> Result<(), String> {
    let r = reference::cluster::<T>(g, o).map_err(|e| e.to_string())?;
    match partition_difference(&c.clusters, &r.clusters) {
        None => Ok(()),
        Some(d) => Err(format!("{what}: differs from the reference: {d}")),
    }
}

fn bad_input<B: MarkovCluster<f32> + MarkovCluster<f64>>(b: &B) -> Result<(), String> {
    let g = Graph::from_edges(3, [(0, 1)]).unwrap();
    for o in [
        MclOptions {
            inflation: 1.0,
            ..MclOptions::default()
        },
        MclOptions {
            max_per_column: 0,
            ..MclOptions::default()
        },
    ] {
        if MarkovCluster::<f64>::cluster(b, &g, &o).is_ok() {
            return Err(format!("{o:?} was accepted"));
        }
    }
    let g = Graph::from_weighted_edges(2, [(0, 1, -1.0)]).unwrap();
    if MarkovCluster::<f32>::cluster(b, &g, &MclOptions::default()).is_ok() {
        return Err("a negative weight was accepted".into());
    }
    Ok(())
}

/// Blocks of 4–12 nodes, dense inside, a few edges between.
fn planted_graph() -> impl Strategy<Value = (usize, Vec<(usize, usize)>)> {
    proptest::collection::vec(4usize..12, 1..6).prop_flat_map(|sizes| {
        let n: usize = sizes.iter().sum();
        let mut block = Vec::new();
        for (b, &s) in sizes.iter().enumerate() {
            block.extend(std::iter::repeat_n(b, s));
        }
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect();
        let blocks = block.clone();
        proptest::collection::vec(0u32..100, pairs.len()).prop_map(move |coin| {
            let e = pairs
                .iter()
                .zip(&coin)
                .filter(|(&(i, j), &c)| {
                    if blocks[i] == blocks[j] {
                        c < 75
                    } else {
                        c < 3
                    }
                })
                .map(|(&p, _)| p)
                .collect();
            (n, e)
        })
    })
}

fn planted<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    run_proptest(24, &planted_graph(), |(n, e)| {
        let g = Graph::from_edges(n, e).map_err(|e| e.to_string())?;
        let o = MclOptions::default();
        let c = run::<T, B>(b, &g, &o)?;
        same_as_reference::<T>(&c, &g, &o, "planted partition")
    })
}

/// Iterations of the PPI check: every kernel and every step runs this many times on real
/// data, and the partition after them (not yet converged, so sensitive to every entry) must
/// equal the reference's. The reference (sequential, unoptimised in debug builds) dominates
/// the check's time, so this keeps the suite short; the benchmark runs to convergence.
const PPI_ITERATIONS: usize = 10;
/// R-MCL iterations of the PPI check before its `M·M` finish, so that both expansions (and
/// the hub-column path of each) run on real data.
const PPI_FINISH_AFTER: usize = 6;

/// The shared yeast networks: the same partition as the reference.
fn ppi<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(());
    };
    // One network (collins2007: weighted, 1622 nodes), PPI_ITERATIONS iterations, to keep
    // the suite short in debug builds; the benchmark checks collins2007 and
    // krogan2006_extended with the default options (to the cap) before timing.
    let name = "collins2007.txt";
    let g = crate::io::read_graph_auto(dir.join("ppi").join(name)).map_err(|e| e.to_string())?;
    let o = MclOptions {
        max_iterations: PPI_ITERATIONS,
        finish_after: PPI_FINISH_AFTER,
        ..MclOptions::default()
    };
    let c = run::<T, B>(b, &g, &o)?;
    same_as_reference::<T>(&c, &g, &o, name)
}

/// The stationary stop on real data: collins2007 with balance 0, R-MCL throughout (plain
/// R-MCL, whose iterate settles; with the default balance it keeps wandering, see the module
/// docs of [`crate::mcl`]) and a stationary tolerance of 1e-2 (reached after about 55
/// iterations, short enough for debug builds). The backend must stop for the same reason, at the same
/// iteration, with the same chaos and change (bit for bit) and the same partition as the
/// reference.
fn stationary<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(());
    };
    let name = "collins2007.txt";
    let g = crate::io::read_graph_auto(dir.join("ppi").join(name)).map_err(|e| e.to_string())?;
    let o = MclOptions {
        mass_penalty: 0.0,
        stationary_tolerance: 1e-2,
        finish_after: 0,
        ..MclOptions::default()
    };
    let c = run::<T, B>(b, &g, &o)?;
    let r = reference::cluster::<T>(&g, &o).map_err(|e| e.to_string())?;
    if r.stop != StopReason::Stationary {
        return Err(format!(
            "{name}: the reference stopped for {} after {} iterations, not stationarity",
            r.stop, r.iterations
        ));
    }
    if (c.stop, c.iterations) != (r.stop, r.iterations)
        || c.chaos.to_bits() != r.chaos.to_bits()
        || c.change.to_bits() != r.change.to_bits()
    {
        return Err(format!(
            "{name}: stopped ({}) after {} iterations, chaos {:e}, change {:e}; the reference \
             ({}) after {}, chaos {:e}, change {:e}",
            c.stop, c.iterations, c.chaos, c.change, r.stop, r.iterations, r.chaos, r.change
        ));
    }
    match partition_difference(&c.clusters, &r.clusters) {
        None => Ok(()),
        Some(d) => Err(format!("{name}: differs from the reference: {d}")),
    }
}

/// The default options converge: a planted partition (600 nodes in 30 communities of 20,
/// mean degree 10, a tenth of the edges between communities; `generate::planted`, seed 11)
/// must stop on the chaos test well before the cap (the R-MCL phase, then the `M·M` finish),
/// at the same iteration and with the same chaos and change bits and the same partition as
/// the reference, and recover the communities: at least 27 of the 30 matched by a cluster
/// with overlap `|A∩B|²/(|A|·|B|) ≥ 0.5`.
fn converges<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    let p = crate::generate::planted(&crate::generate::PlantedOptions {
        nodes: 600,
        communities: 30,
        degree: 10.0,
        mixing: 0.1,
        seed: 11,
    })
    .map_err(|e| e.to_string())?;
    let g = p.edges.to_graph().map_err(|e| e.to_string())?;
    let o = MclOptions::default();
    let c = run::<T, B>(b, &g, &o)?;
    let r = reference::cluster::<T>(&g, &o).map_err(|e| e.to_string())?;
    if r.stop != StopReason::Chaos || r.iterations > o.max_iterations / 2 {
        return Err(format!(
            "planted: the reference stopped ({}) after {} iterations, not on chaos well \
             before the cap",
            r.stop, r.iterations
        ));
    }
    if (c.stop, c.iterations) != (r.stop, r.iterations)
        || c.chaos.to_bits() != r.chaos.to_bits()
        || c.change.to_bits() != r.change.to_bits()
    {
        return Err(format!(
            "planted: stopped ({}) after {} iterations, chaos {:e}, change {:e}; the \
             reference ({}) after {}, chaos {:e}, change {:e}",
            c.stop, c.iterations, c.chaos, c.change, r.stop, r.iterations, r.chaos, r.change
        ));
    }
    if let Some(d) = partition_difference(&c.clusters, &r.clusters) {
        return Err(format!("planted: differs from the reference: {d}"));
    }
    let of = c.assignment(g.num_nodes());
    let sizes: Vec<usize> = c.clusters.iter().map(Vec::len).collect();
    let recovered = p
        .communities()
        .iter()
        .filter(|com| {
            let mut hits = std::collections::HashMap::new();
            for &u in com.iter() {
                *hits.entry(of[u as usize]).or_insert(0usize) += 1;
            }
            hits.iter()
                .any(|(&k, &h)| (h * h) as f64 / (com.len() * sizes[k]) as f64 >= 0.5)
        })
        .count();
    if recovered < 27 {
        return Err(format!(
            "planted: {recovered} of 30 communities recovered ({} clusters)",
            c.clusters.len()
        ));
    }
    Ok(())
}

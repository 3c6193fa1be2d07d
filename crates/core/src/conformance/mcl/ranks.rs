//! R-MCL over thread-ranks ([`crate::dist::mcl::cluster`]) on the backend under test, against
//! one process of the same backend: the same partition, iterations, levels, stop reason, and
//! the same chaos and change bits, at 1 to 4 ranks, in both layouts of `M` (replicated:
//! every rank but the first computes columns from an offset, `col0` in the kernels, and the
//! gathers go in one round or in many small ones; partitioned: each rank holds its columns
//! and fetches those it reads, `M_G`'s rows are local slots, and `M·M` takes its columns as
//! a CSC). The ranks share the backend, so a GPU backend's columns go through the hosts.
//! The cases force each kernel that takes an offset or a slot: the column pass on its local
//! and global (hub) paths, both expansions, the balance, and MLR-MCL's DPR and column
//! balance, on one level and on several.

use super::{hub_graph, run};
use crate::dist::{mcl, threads, Layout};
use crate::graph::Graph;
use crate::mcl::{Clustering, Expansion, MarkovCluster, MclOptions};
use crate::scalar::Scalar;

/// `got` equals `want` bit for bit (partition, counts, stop, chaos and change bits).
fn same(got: &Clustering, want: &Clustering) -> bool {
    got.clusters == want.clusters
        && (got.iterations, got.levels, got.stop) == (want.iterations, want.levels, want.stop)
        && got.chaos.to_bits() == want.chaos.to_bits()
        && got.change.to_bits() == want.change.to_bits()
}

/// [`same`], else an error that says how `got` (labelled `label`) differs from `want`.
fn same_or(label: &str, got: &Clustering, want: &Clustering) -> Result<(), String> {
    if same(got, want) {
        return Ok(());
    }
    let say = |c: &Clustering| {
        format!(
            "{} clusters, {} iterations ({}), chaos {:e}, change {:e}",
            c.clusters.len(),
            c.iterations,
            c.stop,
            c.chaos,
            c.change
        )
    };
    Err(format!("{label}: {}; one process: {}", say(got), say(want)))
}

pub(super) fn distributed<T: Scalar, B: MarkovCluster<T> + Sync>(b: &B) -> Result<(), String> {
    let planted = crate::generate::planted(&crate::generate::PlantedOptions {
        nodes: 300,
        communities: 15,
        degree: 9.0,
        mixing: 0.25,
        seed: 11,
    })
    .map_err(|e| e.to_string())?;
    let planted: Graph = planted.edges.to_graph().map_err(|e| e.to_string())?;
    let hub = hub_graph();
    let fixed = |o: MclOptions| MclOptions {
        max_iterations: 6,
        ..o
    };
    let cases: Vec<(&str, &Graph, MclOptions)> = vec![
        ("trident, planted", &planted, MclOptions::default()),
        (
            "trident, hub, global pass, M·M finish",
            &hub,
            fixed(MclOptions {
                local_table: Some(4),
                finish_after: 2,
                max_per_column: 16,
                ..MclOptions::default()
            }),
        ),
        (
            "plain MCL, b = 1, hub",
            &hub,
            fixed(MclOptions {
                expansion: Expansion::Mcl,
                finish_after: 0,
                mass_penalty: 1.0,
                max_per_column: 8,
                ..MclOptions::default()
            }),
        ),
        (
            "mlrmcl, planted",
            &planted,
            MclOptions {
                coarsen_to: 0,
                ..MclOptions::mlrmcl()
            },
        ),
        (
            "mlrmcl multi-level, planted",
            &planted,
            MclOptions {
                coarsen_to: 50,
                max_per_column: 32,
                ..MclOptions::mlrmcl()
            },
        ),
    ];
    let layouts = [Layout::Replicate, Layout::Partition];
    for (what, g, o) in &cases {
        let want = run::<T, B>(b, g, o).map_err(|e| format!("{what}: one process: {e}"))?;
        let runs = std::iter::once((1usize, Layout::Auto))
            .chain((2..=4).flat_map(|p| layouts.map(|l| (p, l))));
        for (p, layout) in runs {
            // Replicated, the gather of M goes in one round at 2 ranks and in many small
            // ones at 3 and 4 (rounds that start inside columns and blocks).
            let o = &MclOptions {
                layout,
                gather_round: [None, Some(301), Some(1000)]
                    .get(p.wrapping_sub(2))
                    .copied()
                    .flatten(),
                ..o.clone()
            };
            let got = threads::run(p, |c| mcl::cluster::<T, B>(c, b, g, o, &mut |_| {}));
            for (rank, r) in got.into_iter().enumerate() {
                let label = format!(
                    "{} {} {what}, {p} ranks ({layout}), rank {rank}",
                    b.name(),
                    T::NAME
                );
                let r = r.map_err(|e| format!("{label}: {e}"))?;
                same_or(&label, &r, &want)?;
            }
        }
    }
    Ok(())
}

/// A small run over two thread-ranks: the hub graph, three iterations of each variant (the
/// global hub pass, the `M·M` finish, MLR-MCL's DPR and balance) in both layouts (the
/// replicated gathers in rounds of 13 entries), so that
/// every kernel of the ranks' pass, gathers and fetches launches, against one process bit
/// for bit. For compute-sanitizer's memcheck (racecheck takes over 7 minutes on it, too long
/// for run.sh's list).
pub(super) fn distributed_small<T: Scalar, B: MarkovCluster<T> + Sync>(
    b: &B,
) -> Result<(), String> {
    let g = hub_graph();
    let cases = [
        MclOptions {
            local_table: Some(4),
            finish_after: 1,
            max_per_column: 8,
            max_iterations: 3,
            ..MclOptions::default()
        },
        MclOptions {
            coarsen_to: 0,
            max_iterations: 3,
            ..MclOptions::mlrmcl()
        },
    ];
    for o in &cases {
        // (Not `run`: three MLR-MCL iterations leave its change test's first value.)
        let want = b.cluster(&g, o).map_err(|e| format!("one process: {e}"))?;
        for layout in [Layout::Replicate, Layout::Partition] {
            let o = &MclOptions {
                layout,
                gather_round: Some(13),
                ..o.clone()
            };
            let got = threads::run(2, |c| mcl::cluster::<T, B>(c, b, &g, o, &mut |_| {}));
            for (rank, r) in got.into_iter().enumerate() {
                let label = format!(
                    "{} {} {:?} ({layout}), rank {rank}",
                    b.name(),
                    T::NAME,
                    o.variant
                );
                let r = r.map_err(|e| format!("{label}: {e}"))?;
                if !same(&r, &want) {
                    return Err(format!("{label}: differs from one process"));
                }
            }
        }
    }
    Ok(())
}

/// The gathers' packing on one process ([`MarkovCluster::pack_round_trip`]): columns of
/// every length from 0 to K over several blocks of `PACK_WG`, packed and unpacked into
/// poisoned slots, give back every column's entries (the slots past a column's length are
/// not part of `M`). The sanitizers run it: it launches every packing kernel without
/// thread-ranks. Backends without a device pass have nothing to check.
pub(super) fn pack_round_trip<T: Scalar, B: MarkovCluster<T>>(b: &B) -> Result<(), String> {
    for (n, k) in [(700usize, 5usize), (1, 3), (257, 64), (513, 1)] {
        let mut m = crate::mcl::Columns::<T>::zeroed(n, k).map_err(|e| e.to_string())?;
        for j in 0..n {
            let l = (j * 7 + j / 3) % (k + 1);
            m.len[j] = l as u32;
            for q in 0..k {
                m.idx[j * k + q] = (j * 31 + q) as u32;
                m.val[j * k + q] = T::from_f64(1.0 / (1.0 + (j + q) as f64));
            }
        }
        let Some(got) = b.pack_round_trip(&m) else {
            return Ok(());
        };
        let got = got.map_err(|e| format!("{} {} n = {n}, K = {k}: {e}", b.name(), T::NAME))?;
        for j in 0..n {
            if got.column(j) != m.column(j) {
                return Err(format!(
                    "{} {} n = {n}, K = {k}: column {j} came back as {:?}, was {:?}",
                    b.name(),
                    T::NAME,
                    got.column(j),
                    m.column(j)
                ));
            }
        }
    }
    Ok(())
}

/// Random runs over thread-ranks against one process of the same backend, bit for bit:
/// each case draws a graph (a planted partition, or a skewed random graph with hubs,
/// isolated nodes and, half the time, weights over many orders of magnitude), options (K
/// from 1 to 64, inflation, pruning, the loop weight, the balance, either expansion and the
/// `M·M` finish, a small local table that sends columns to the hub pass, Trident's variant or
/// MLR-MCL's on one level or several), 2 to 5 ranks, a layout, and a round size for the
/// replicated gathers. What the fixed cases above do not combine, these do.
pub(super) fn distributed_random<T: Scalar, B: MarkovCluster<T> + Sync>(
    b: &B,
) -> Result<(), String> {
    let mut state = 0x6d63_6c5f_7261_6e64u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut below = |n: usize| (next() % n as u64) as usize;
    for case in 0..RANDOM_CASES {
        let n = 8 + below(180);
        let g = if below(2) == 0 {
            // Communities of at least 2·degree + 2 nodes hold the edges drawn inside them.
            let degree = 1 + below(9.min((n - 1) / 2));
            let communities = 1 + below((n / (2 * degree + 2)).max(1));
            crate::generate::planted(&crate::generate::PlantedOptions {
                nodes: n,
                communities,
                degree: degree as f64,
                mixing: if communities > 1 {
                    below(50) as f64 / 100.0
                } else {
                    0.0
                },
                seed: case as u64,
            })
            .and_then(|p| p.edges.to_graph())
        } else {
            // Skewed ends (hubs), some nodes isolated, repeats merged.
            let m = below(4 * n);
            let weighted = below(2) == 0;
            let edges: Vec<(usize, usize, f64)> = (0..m)
                .map(|_| {
                    let a = below(n) * below(n) / n;
                    let w = if weighted {
                        (1 + below(1000)) as f64 * 10f64.powi(below(9) as i32 - 4)
                    } else {
                        1.0
                    };
                    (a, below(n), w)
                })
                .filter(|e| e.0 != e.1)
                .collect();
            if weighted {
                Graph::from_weighted_edges(n, edges)
            } else {
                Graph::from_edges(n, edges.into_iter().map(|e| (e.0, e.1)))
            }
        }
        .map_err(|e| e.to_string())?;
        let mlr = below(4) == 0;
        let base = if mlr {
            MclOptions {
                coarsen_to: [0, 20, 60][below(3)],
                max_per_column: 1 + below(64),
                ..MclOptions::mlrmcl()
            }
        } else {
            let expansion = if below(4) == 0 {
                Expansion::Mcl
            } else {
                Expansion::Regularized
            };
            MclOptions {
                expansion,
                finish_after: [0, 1, 3][below(3)],
                inflation: [1.4, 2.0, 3.0][below(3)],
                prune_threshold: [0.0, 1e-5, 0.01, 0.1][below(4)],
                self_loop_weight: [0.0, 0.5, 1.0][below(3)],
                mass_penalty: [0.0, 0.5, 1.0][below(3)],
                max_per_column: [1, 2, 3, 5, 8, 16, 64][below(7)],
                ..MclOptions::default()
            }
        };
        let o = MclOptions {
            max_iterations: 3 + below(20),
            local_table: [None, Some(4), Some(8), Some(32)][below(4)],
            ..base
        };
        let want = b
            .cluster(&g, &o)
            .map_err(|e| format!("case {case}: one process: {e}"))?;
        let p = 2 + below(4);
        let layout = [Layout::Replicate, Layout::Partition][below(2)];
        let o = MclOptions {
            layout,
            gather_round: [None, Some(7 + below(500))][below(2)],
            ..o
        };
        let got = threads::run(p, |c| mcl::cluster::<T, B>(c, b, &g, &o, &mut |_| {}));
        for (rank, r) in got.into_iter().enumerate() {
            let label = format!(
                "{} {} random case {case} ({} nodes, {} edges, {o:?}), {p} ranks, rank {rank}",
                b.name(),
                T::NAME,
                g.num_nodes(),
                g.num_edges()
            );
            let r = r.map_err(|e| format!("{label}: {e}"))?;
            same_or(&label, &r, &want)?;
        }
    }
    Ok(())
}

/// Cases of [`distributed_random`] (many more were run while it was written).
const RANDOM_CASES: usize = 32;

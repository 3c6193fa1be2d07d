//! Unit checks of MLR-MCL's pieces, against hand-computed values.

use super::coarsen::LoopGraph;
use super::*;
use crate::graph::Graph;

#[test]
fn transition_weights_are_mlrmcls() {
    // A path 0 - 1 - 2 with loops: degrees (loop counted) 2, 3, 2.
    let g = Graph::from_edges(3, [(0, 1), (1, 2)]).unwrap();
    let tr = LoopGraph::from_graph(&g).unwrap().transition();
    // Column 0: loop 1·(1/2 + 1/2) = 1, edge to 1: 1/2 + 1/3 = 5/6; normalised by 11/6.
    let (r, v) = tr.column(0);
    assert_eq!(r, &[0, 1]);
    assert!((v[0] - 6.0 / 11.0).abs() < 1e-15 && (v[1] - 5.0 / 11.0).abs() < 1e-15);
    // Column 1: 5/6, 2/3, 5/6; sum 7/3.
    let (r, v) = tr.column(1);
    assert_eq!(r, &[0, 1, 2]);
    let want = [5.0 / 14.0, 2.0 / 7.0, 5.0 / 14.0];
    for (x, w) in v.iter().zip(want) {
        assert!((x - w).abs() < 1e-15, "{v:?}");
    }
}

#[test]
fn prune_cut_matches_the_formula_in_true_units() {
    // A column of x = 0.5, 0.3, 0.2 with r = 2: true inflated values .25, .09, .04;
    // avg .38/3, max .25: threshold 0.9·avg·(1 − 2(max − avg)).
    let xs = [0.5f64, 0.3, 0.2];
    let scale = crate::mcl::inflation_scale::<f64>(3);
    let ys: Vec<f64> = xs
        .iter()
        .map(|&x| crate::mcl::inflate(x, 0.5, 2.0, scale))
        .collect();
    let sum: u64 = ys.iter().map(|&y| crate::mcl::to_fixed(y)).sum();
    let cut = prune_cut::<f64>(sum, 3, 0.5, 2.0, scale);
    let avg = 0.38 / 3.0;
    let t = 0.9 * avg * (1.0 - 2.0 * (0.25 - avg));
    // In the units of y: y = x² · scale / max².
    let f = 0.25 / scale;
    assert!((cut * f - t).abs() < 1e-12, "{} vs {t}", cut * f);
    // Kept: .25 and .09 (above t ≈ 0.0847), .04 dropped.
    let kept: Vec<bool> = ys.iter().map(|&y| y >= cut).collect();
    assert_eq!(kept, [true, true, false]);
    // The floor: a column of one entry keeps it (the cut is clamped to the maximum).
    let one = crate::mcl::to_fixed(scale);
    assert!(prune_cut::<f64>(one, 1, 1e-3, 2.0, scale) <= scale);
}

#[test]
fn schedule_measures_from_iteration_11_starts_dpr_once_and_stops() {
    let o = MclOptions::mlrmcl();
    let mut s = Schedule::new(&o, Level::Finest);
    let tiny = (1e-4f64 * 1e-4 * 4294967296.0) as u64; // ‖ΔM‖_F = 1e-4 on n = 1: 1e-4
    for t in 0..12 {
        let p = s.plan_next().unwrap();
        assert!(!p.start_dpr && p.column_balance, "iteration {t}: {p:?}");
        s.record(1, 0.5, 0.0, tiny);
        assert_eq!(s.change.is_finite(), t >= CHANGE_FROM, "{t}");
    }
    // The change of iteration 11 (1e-4 < 1e-3) starts DPR at 12, balance off from then.
    let p = s.plan_next().unwrap();
    assert!(p.start_dpr && !p.column_balance);
    s.record(1, 0.5, 0.0, tiny);
    let p = s.plan_next().unwrap();
    assert!(!p.start_dpr && !p.column_balance);
    s.record(1, 0.5, 0.0, 0);
    assert_eq!(s.plan_next(), Err(StopReason::Stationary));
    // A coarse level runs exactly its iterations, measuring nothing.
    let mut c = Schedule::new(&o, Level::Coarse);
    for _ in 0..o.iterations_per_level {
        assert!(c.plan_next().is_ok());
        c.record(1, 0.5, 0.0, 0);
    }
    assert_eq!(c.plan_next(), Err(StopReason::IterationCap));
}

#[test]
fn column_penalties_follow_the_column_mass() {
    // M: column 0 = (0: 1), column 1 = (0: 0.5, 1: 0.5). Row sums r0 = 1.5, r1 = 0.5.
    // k0 = 1·1.5 = 1.5 → 1/√1.5; k1 = 0.5·1.5 + 0.5·0.5 = 1 → 1 (not > 1).
    let m = Columns::<f64> {
        n: 2,
        k: 2,
        idx: vec![0, 0, 0, 1],
        val: vec![1.0, 0.0, 0.5, 0.5],
        len: vec![1, 2],
    };
    let p = column_penalties(&m, 0.5);
    assert!((p[0] - 1.0 / 1.5f64.sqrt()).abs() < 1e-12, "{p:?}");
    assert_eq!(p[1], 1.0);
}

#[test]
fn dpr_keeps_near_columns_and_the_loop() {
    let g = Graph::from_edges(3, [(0, 1), (1, 2)]).unwrap();
    let tr = LoopGraph::from_graph(&g).unwrap().transition();
    // Columns 0 and 1 identical, column 2 far away.
    let m = Columns::<f64> {
        n: 3,
        k: 1,
        idx: vec![0, 0, 2],
        val: vec![1.0, 1.0, 1.0],
        len: vec![1, 1, 1],
    };
    let w = dpr(&tr, &tr.val, &m, 0.4);
    // Column 1 keeps 0 and itself, drops 2; renormalised.
    let (a, b) = (tr.ptr[1] as usize, tr.ptr[2] as usize);
    let kept: Vec<f64> = w[a..b].to_vec();
    assert_eq!(kept[2], 0.0);
    assert!((kept[0] + kept[1] - 1.0).abs() < 1e-12);
    // Column 2 keeps only its loop.
    let (a, b) = (tr.ptr[2] as usize, tr.ptr[3] as usize);
    assert_eq!(&w[a..b], &[0.0, 1.0]);
}

#[test]
fn coarsening_matches_pairs_and_projects_flow_to_representatives() {
    // Two triangles joined by one edge, coarsened towards 2 nodes.
    let g = Graph::from_edges(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)]).unwrap();
    let lg = LoopGraph::from_graph(&g).unwrap();
    let levels = lg.coarsen(2);
    assert!(!levels.is_empty());
    let first = &levels[0];
    // Every node is in exactly one coarse node, a coarse node has at most 2 members, total
    // vertex weight is kept and the self-loops hold the contracted weight.
    let cn = first.graph.n();
    assert!(cn < 6);
    let mut size = vec![0; cn];
    for &c in &first.cmap {
        size[c as usize] += 1;
    }
    assert!(size.iter().all(|&s| (1..=2).contains(&s)));
    assert_eq!(first.graph.vwgt.iter().sum::<u64>(), 6);
    let total_fine: f64 = lg.w.iter().sum();
    let total_coarse: f64 = first.graph.w.iter().sum();
    assert!((total_fine - total_coarse).abs() < 1e-12);
    // Projection: identity flow on the coarse level lands on the representatives.
    let mut m = Columns::<f64>::zeroed(cn, 2).unwrap();
    for c in 0..cn {
        m.idx[c * 2] = c as u32;
        m.val[c * 2] = 1.0;
        m.len[c] = 1;
    }
    let p = coarsen::project(&m, first).unwrap();
    for i in 0..6 {
        let (r, v) = p.column(i);
        assert_eq!(r, &[first.rmap[first.cmap[i] as usize]]);
        assert_eq!(v, &[1.0]);
    }
}

#[test]
fn attractor_clusters_group_by_attractor_without_merging() {
    // 0 → 1, 1 → 2, 2 → 2, 3 → none: no transitive merge of 0 with 2.
    let c = attractor_clusters(&[1, 2, 2, u32::MAX]);
    assert_eq!(c, vec![vec![1, 2], vec![0], vec![3]]);
}

#[test]
fn attractor_clusters_are_the_groups_of_the_targets_on_any_thread_count() {
    // The definition, one node at a time: a map from attractor to members, a node without
    // one alone, then the order of sort_clusters.
    fn groups(targets: &[u32]) -> Vec<Vec<usize>> {
        let n = targets.len();
        let mut by: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
        let mut out = Vec::new();
        for (j, &t) in targets.iter().enumerate() {
            if (t as usize) < n {
                by.entry(t).or_default().push(j);
            } else {
                out.push(vec![j]);
            }
        }
        out.extend(by.into_values());
        crate::mcl::sort_clusters(&mut out);
        out
    }
    let mut r = crate::testing::xorshift(23);
    for (n, spread) in [(1, 1), (9, 4), (40_000, 30), (40_000, 40_000), (20_000, 3)] {
        // Targets in a window of `spread` (groups of every size, many of equal size), some
        // none, some out of range, some self-targets; attractors need not be members.
        let targets: Vec<u32> = (0..n)
            .map(|j| match r() % 16 {
                0 => u32::MAX,
                1 => (n + 3) as u32,
                2 => j as u32,
                _ => ((j as u64 + r() % spread) % n as u64) as u32,
            })
            .collect();
        let want = groups(&targets);
        for threads in [1, 2, 4] {
            let got = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| attractor_clusters(&targets));
            assert!(got == want, "n = {n}, spread {spread}, {threads} threads");
        }
    }
    assert!(attractor_clusters(&[]).is_empty());
}

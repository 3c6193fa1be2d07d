//! Options, the transition matrix, fixed point, and results that do not depend on the
//! thread count.

use super::*;

#[test]
fn fixed_point_round_trips() {
    assert_eq!(to_fixed(1.0f64), 1u64 << 60);
    assert_eq!(from_fixed::<f64>(1u64 << 59), 0.5);
    assert_eq!(to_fixed(0.0f32), 0);
}

#[test]
fn options_are_validated() {
    let ok = MclOptions::default();
    assert!(ok.validate().is_ok());
    for bad in [
        MclOptions {
            inflation: 1.0,
            ..ok.clone()
        },
        MclOptions {
            inflation: f64::NAN,
            ..ok.clone()
        },
        MclOptions {
            max_per_column: 0,
            ..ok.clone()
        },
        MclOptions {
            mass_penalty: -1.0,
            ..ok.clone()
        },
        MclOptions {
            prune_threshold: 1.0,
            ..ok.clone()
        },
        MclOptions {
            local_table: Some(3),
            ..ok.clone()
        },
        MclOptions {
            local_table: Some(2 * gpu::LCAP),
            ..ok.clone()
        },
        MclOptions {
            column_wg: Some(100),
            ..ok.clone()
        },
        MclOptions {
            column_wg: Some(16),
            ..ok.clone()
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
    for good in [
        MclOptions {
            local_table: Some(4),
            column_wg: Some(1024),
            ..ok.clone()
        },
        MclOptions {
            local_table: Some(gpu::LCAP),
            column_wg: Some(32),
            ..ok.clone()
        },
    ] {
        assert!(good.validate().is_ok(), "{good:?}");
    }
}

#[test]
fn transition_columns_sum_to_one_with_loops() {
    let g = Graph::from_weighted_edges(4, [(0, 1, 2.0), (1, 2, 1.0)]).unwrap();
    let t = Transition::new(&g, &MclOptions::default()).unwrap();
    // Column 1: rows 0, 1 (loop = max weight 2), 2.
    assert_eq!(t.column(1).0, [0, 1, 2]);
    let v = t.column(1).1;
    assert!((v[0] - 0.4).abs() < 1e-15 && (v[1] - 0.4).abs() < 1e-15);
    // Isolated node 3: a loop of 1.
    assert_eq!(t.column(3), (&[3u32][..], &[1.0][..]));
    for j in 0..4 {
        assert!((t.column(j).1.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }
}

#[test]
fn bad_weights_are_errors() {
    for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let g = Graph::from_weighted_edges(2, [(0, 1, w)]).unwrap();
        assert!(Transition::new(&g, &MclOptions::default()).is_err(), "{w}");
    }
    // The first bad weight is named, whichever thread finds one.
    let edges = (0..50_000).map(|u| (u, u + 1, if u >= 30_000 { -(u as f64) } else { 1.0 }));
    let g = Graph::from_weighted_edges(50_001, edges).unwrap();
    let e = Transition::new(&g, &MclOptions::default()).unwrap_err();
    assert!(e.to_string().contains("found -30000"), "{e}");
}

/// A small xorshift, for test graphs.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    crate::testing::xorshift(seed | 1)
}

/// Test graphs of `n` nodes: an unweighted one (all of a column's values equal: the
/// starting `M` needs no sort) and a weighted one with many tied weights, hubs and
/// isolated nodes (columns that need the sort, ties broken by row).
fn graphs(n: usize) -> [Graph; 2] {
    let mut r = rng(7);
    let mut plain = Vec::new();
    let mut weighted = Vec::new();
    for u in 0..n - n / 50 {
        let d = 1 + (r() % 12) as usize;
        for _ in 0..d {
            let v = (r() % (n as u64)) as usize;
            plain.push((u, v));
            weighted.push((u, v, 1.0 + (r() % 3) as f64));
        }
        if u % 997 == 0 {
            // A hub: more than K neighbours.
            for v in 0..200 {
                weighted.push((u, (u + 1 + v * 31) % n, 0.5));
            }
        }
    }
    [
        Graph::from_edges(n, plain).unwrap(),
        Graph::from_weighted_edges(n, weighted).unwrap(),
    ]
}

/// Runs `f` on a rayon pool of `threads` threads.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn preparation_does_not_depend_on_the_thread_count() {
    for g in graphs(40_000) {
        for opts in [
            MclOptions::default(),
            MclOptions {
                max_per_column: 7,
                self_loop_weight: 0.0,
                ..MclOptions::default()
            },
        ] {
            let k = opts.max_per_column;
            let run = || {
                let tr = Transition::new(&g, &opts).unwrap();
                let plan = gpu::GpuPlan::new(&tr, &opts, 512, 8, 1 << 40, "t", "d").unwrap();
                let m0 = Columns::<f64>::initial(&tr, k).unwrap();
                let m32 = Columns::<f32>::initial(&tr, k).unwrap();
                let v32 = tr.values::<f32>().into_owned();
                (tr, plan, m0, m32, v32)
            };
            let one = on_threads(1, run);
            let three = on_threads(3, run);
            assert!(one == three, "k = {k}: 1 thread and 3 threads differ");
            let (tr, _, m0, _, v32) = one;
            assert!(matches!(tr.values::<f64>(), std::borrow::Cow::Borrowed(_)));
            assert_eq!(v32, tr.val.iter().map(|&x| x as f32).collect::<Vec<_>>());
            // Against the plain definition: every column sorted (value descending, ties by
            // row), cut to K, divided by the sum of what is left.
            for j in 0..tr.n {
                let (r, v) = tr.column(j);
                let mut col: Vec<(u32, f64)> = r.iter().copied().zip(v.iter().copied()).collect();
                col.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
                col.truncate(k);
                let s: f64 = col.iter().map(|e| e.1).sum();
                let want: Vec<(u32, f64)> = col.iter().map(|&(i, x)| (i, x / s)).collect();
                let (gi, gv) = m0.column(j);
                let got: Vec<(u32, f64)> = gi.iter().copied().zip(gv.iter().copied()).collect();
                assert_eq!(got, want, "column {j}");
            }
        }
    }
}

/// The sequential union-find and grouping (the definition of [`interpret_targets`]).
fn components(target: &[u32]) -> Vec<Vec<usize>> {
    let n = target.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            x = p[x];
        }
        x
    }
    for (j, &t) in target.iter().enumerate() {
        if (t as usize) < n {
            let (a, b) = (find(&mut parent, t as usize), find(&mut parent, j));
            parent[a.max(b)] = a.min(b);
        }
    }
    let root: Vec<usize> = (0..n).map(|j| find(&mut parent, j)).collect();
    clusters_from_roots(&root)
}

#[test]
fn interpretation_does_not_depend_on_the_thread_count() {
    let mut r = rng(11);
    for (n, spread) in [(1, 1), (7, 3), (50_000, 40), (50_000, 50_000), (30_000, 2)] {
        // Pointers into a window of `spread` (clusters of every size), some none, some
        // out of range, some self-pointers, cycles.
        let target: Vec<u32> = (0..n)
            .map(|j| match r() % 20 {
                0 => NO_TARGET,
                1 => (n + 5) as u32,
                2 => j as u32,
                _ => ((j as u64 + r() % spread) % n as u64) as u32,
            })
            .collect();
        let want = components(&target);
        for threads in [1, 2, 4] {
            let got = on_threads(threads, || interpret_targets(&target));
            assert!(
                got == want,
                "n = {n}, {threads} threads: {:?}",
                partition_difference(&got, &want)
            );
        }
    }
    assert!(interpret_targets(&[]).is_empty());
}

#[test]
fn a_ranks_part_is_the_whole_transitions_columns() {
    // Each rank's part, built from the graph (Trident's variant: its columns only), is the
    // whole M_G's block of columns bit for bit, cut where the whole one's splits cut, and
    // its starting M is the whole one's columns with the others empty.
    for g in graphs(3_000) {
        for opts in [
            MclOptions::default(),
            MclOptions {
                max_per_column: 5,
                self_loop_weight: 0.0,
                ..MclOptions::default()
            },
            MclOptions::mlrmcl(),
        ] {
            let whole = Transition::new(&g, &opts).unwrap();
            let m_whole = Columns::<f32>::initial(&whole, opts.max_per_column).unwrap();
            for p in 1..=5 {
                let splits = whole.column_splits(p);
                for rank in 0..p {
                    let part = Transition::new_part(&g, &opts, p, rank).unwrap();
                    assert_eq!(part.splits, splits, "p = {p}");
                    assert_eq!((part.n(), part.ranks()), (whole.n, p));
                    let (c0, c1) = (splits[rank], splits[rank + 1]);
                    assert!(part.own == whole.columns(c0, c1), "p = {p}, rank {rank}");
                    let m = Columns::<f32>::initial_part(&part, rank, opts.max_per_column).unwrap();
                    let k = opts.max_per_column;
                    assert_eq!(m.idx[c0 * k..c1 * k], m_whole.idx[c0 * k..c1 * k]);
                    assert_eq!(m.val[c0 * k..c1 * k], m_whole.val[c0 * k..c1 * k]);
                    assert_eq!(m.len[c0..c1], m_whole.len[c0..c1]);
                    assert!(m.len[..c0].iter().chain(&m.len[c1..]).all(|&l| l == 0));
                }
            }
        }
    }
    // A part cut for other ranks is refused by the level runner.
    let g = &graphs(200)[0];
    let opts = MclOptions::default();
    let part = Transition::new_part(g, &opts, 2, 0).unwrap();
    let m0 = Columns::<f64>::initial_part(&part, 0, opts.max_per_column).unwrap();
    let e = ranks::cluster_level(
        &crate::comm::Solo,
        &part,
        m0,
        &opts,
        mlr::Level::Finest,
        drive::Output::Targets,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("cut for 2 ranks"), "{e}");
}

#[test]
fn a_prepared_run_is_the_run() {
    // Built before the backend (as the CLI does on its reading thread), then run: the same
    // clusters as the one call, for both variants (MLR-MCL multi-level included) and both
    // test graphs; an empty network; a part prepared for other ranks is refused.
    let b = reference::Sequential;
    let mlr = MclOptions {
        coarsen_to: 60,
        ..MclOptions::mlrmcl()
    };
    let mut most_levels = 0;
    for opts in [MclOptions::default(), MclOptions::mlrmcl(), mlr] {
        for g in graphs(300) {
            let want = MarkovCluster::<f64>::cluster(&b, &g, &opts).unwrap();
            let p = drive::Prepared::<f64>::new(&g, &opts, 1, 0).unwrap();
            let got = drive::cluster_prepared(&crate::comm::Solo, &b, p, &mut |_| {}).unwrap();
            assert_eq!(got.clusters, want.clusters);
            assert_eq!(
                (got.iterations, got.levels, got.stop),
                (want.iterations, want.levels, want.stop)
            );
            most_levels = most_levels.max(got.levels);
        }
    }
    assert!(most_levels > 1, "the multi-level run has one level");
    let empty = Graph::from_edges(0, std::iter::empty()).unwrap();
    let p = drive::Prepared::<f32>::new(&empty, &MclOptions::default(), 1, 0).unwrap();
    let c = drive::cluster_prepared(&crate::comm::Solo, &b, p, &mut |_| {}).unwrap();
    assert!(c.clusters.is_empty());
    let g = &graphs(50)[0];
    let p = drive::Prepared::<f64>::new(g, &MclOptions::default(), 2, 1).unwrap();
    let e = drive::cluster_prepared(&crate::comm::Solo, &b, p, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("prepared for rank 1 of 2"), "{e}");
    // Invalid options are refused when preparing.
    let bad = MclOptions {
        max_per_column: 0,
        ..MclOptions::default()
    };
    assert!(drive::Prepared::<f64>::new(g, &bad, 1, 0).is_err());
}

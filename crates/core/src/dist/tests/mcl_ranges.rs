//! R-MCL's network read in byte ranges, each rank keeping only its columns.

use super::threads;
use crate::dist::graph::read_graph_weighted;
use crate::dist::mcl::transition_part;
use crate::dist::{Comm, Phases};
use crate::io::{self, EdgeListOptions, ReadOptions};
use crate::mcl::{drive, reference, MclOptions, Transition};

/// R-MCL's network read in byte ranges with no rank holding it whole
/// (`graph::read_graph_weighted`, `mcl::transition_part`): at 2 to 4 thread-ranks each
/// rank's part of `M_G` is one process's `Transition::new_part`, bit for bit, on integer-id
/// edge lists (repeats, reversed repeats, self-loops, a node whose only line is a self-loop,
/// sparse ids) and a pattern Matrix Market file, with and without the self-loop weight; the
/// names and counts are one process's; a weighted edge list (repeats of other weights, the
/// largest kept; weights far from 1) gives one process's weighted part; a run prepared from
/// the parts gives one process's clusters; Matrix Market files with values (real
/// symmetric, integer general with repeats at other values, real skew-symmetric) give one
/// process's weighted parts, as do labelled files (weighted too); a METIS file is not read
/// so (every rank gets `None`), nor is anything at one rank.
#[test]
fn mcl_parts_from_byte_ranges_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-mcl-ranges-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text).unwrap();
        dir.join(name)
    };
    let planted = crate::generate::planted(&crate::generate::PlantedOptions {
        nodes: 600,
        communities: 30,
        degree: 8.0,
        mixing: 0.2,
        seed: 5,
    })
    .unwrap();
    let g0 = planted.edges.to_graph().unwrap();
    let mut lines = String::new();
    for u in 0..g0.num_nodes() {
        for &v in g0.neighbors(u) {
            // Every edge both ways, some twice; self-loops; a node (600) alone in a loop.
            lines.push_str(&format!("{u} {v}\n"));
            if (u + v as usize).is_multiple_of(7) {
                lines.push_str(&format!("{v} {u}\n"));
            }
        }
        if u.is_multiple_of(50) {
            lines.push_str(&format!("{u} {u}\n"));
        }
    }
    lines.push_str("600 600\n");
    let sparse: String = (0..3000u64)
        .map(|i| format!("{} {}\n", i * 1_000_003 % 999_999_937, (i * 7 + 3) % 2900))
        .collect();
    let mut mtx = String::from("%%MatrixMarket matrix coordinate pattern symmetric\n% c\n");
    let entries: Vec<(usize, usize)> = (0..400)
        .map(|i| ((i * 13) % 300, (i * 29 + 1) % 300))
        .collect();
    mtx.push_str(&format!("300 300 {}\n", entries.len()));
    for (a, b) in &entries {
        mtx.push_str(&format!("{} {}\n", a.max(b) + 1, a.min(b) + 1));
    }
    // Weighted: every edge twice or more with other weights (the largest kept), weights
    // far from 1 (the scale of the largest), sparse ids, self-loops with weights.
    let weighted: String = (0..2500u64)
        .map(|i| {
            let (u, v) = (i * 7919 % 1200 + 5000, (i * 31 + 7) % 1100 + 5000);
            let w = ((i * 37) % 101 + 1) as f64 * 1.5e7;
            format!("{u} {v} {w}\n{v} {u} {}\n", w / 3.0)
        })
        .collect::<String>()
        // Near f64::MAX: a column's sum overflows unless the weights are scaled first.
        + "5000 7001 1.7e308\n5000 7002 1.6e308\n7002 5001 1.5e308\n";
    // Matrix Market files with values: the values are the weights. A general integer file
    // with every entry both ways at other values (the largest kept); a skew-symmetric real
    // file, whose mirrored entry negates the value (one process keeps the positive one).
    let valued = |head: &str, both: bool, value: &dyn Fn(usize) -> String| {
        let pairs: Vec<(usize, usize)> = (0..700)
            .map(|i| ((i * 17) % 240, (i * 41 + 3) % 240))
            .filter(|(a, b)| a != b)
            .collect();
        let mut body = String::new();
        let mut count = 0;
        for (i, &(a, b)) in pairs.iter().enumerate() {
            body.push_str(&format!("{} {} {}\n", a.max(b) + 1, a.min(b) + 1, value(i)));
            count += 1;
            if both {
                body.push_str(&format!(
                    "{} {} {}\n",
                    a.min(b) + 1,
                    a.max(b) + 1,
                    value(i + 5)
                ));
                count += 1;
            }
        }
        format!("{head}\n% c\n240 240 {count}\n{body}")
    };
    let integer = valued(
        "%%MatrixMarket matrix coordinate integer general",
        true,
        &|i| ((i * 7) % 13 + 1).to_string(),
    );
    let skew = valued(
        "%%MatrixMarket matrix coordinate real skew-symmetric",
        false,
        &|i| {
            format!(
                "{}",
                if i % 3 == 0 { -1.0 } else { 1.0 } * (i % 11 + 1) as f64 * 0.37
            )
        },
    );
    // Labels with weights: repeats at other weights (the largest kept), a self-loop.
    let weighted_labels: String = (0..1500u64)
        .map(|i| {
            let (u, v) = (i * 7919 % 700, (i * 31 + 7) % 650);
            let w = ((i * 37) % 101 + 1) as f64 * 0.25;
            format!("n{u} m{v} {w}\nm{v} n{u} {}\nn{u} n{u} 3\n", w / 3.0)
        })
        .collect();
    let ranged = [
        write("planted.txt", lines),
        write("sparse.txt", sparse),
        write("pattern.mtx", mtx),
        write("weighted.txt", weighted),
        write(
            "real.mtx",
            "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 1.5\n3 2 2\n4 4 1\n"
                .into(),
        ),
        write("integer.mtx", integer),
        write("skew.mtx", skew),
        write("labels.txt", "a b\nb c\nc a\nc d\nzé a\ne e\n".into()),
        write("weighted_labels.txt", weighted_labels),
    ];
    let whole = [write(
        "g.metis",
        "% a METIS graph\n4 3\n2 3\n1\n1 4\n3\n".into(),
    )];
    let read_opts = EdgeListOptions {
        loop_only_nodes: true,
        ..EdgeListOptions::default()
    };
    let ro = ReadOptions::default();
    let no_loops = MclOptions {
        self_loop_weight: 0.0,
        ..MclOptions::default()
    };
    for f in &ranged {
        let one = io::read_graph_limited(f, &read_opts, &ro).unwrap();
        for mcl in [MclOptions::default(), no_loops.clone()] {
            for p in 2..=4 {
                let got = threads::run(p, |c| {
                    let g = read_graph_weighted(c, f, &read_opts, &ro)?.expect("read in ranges");
                    let part = transition_part(c, &g, &mcl, &mut Phases::default())?;
                    let names = (c.rank() == 0).then(|| g.labels());
                    let counts = (g.num_nodes(), g.num_edges(), g.weighted());
                    Ok::<_, crate::Error>((part, names, counts))
                });
                for (rank, x) in got.into_iter().enumerate() {
                    let what = format!("{}, {p} ranks, rank {rank}", f.display());
                    let (part, names, (n, m, weighted)) = x.unwrap();
                    let want = Transition::new_part(&one, &mcl, p, rank).unwrap();
                    assert!(part == want, "{what}: another part");
                    assert_eq!(
                        (n, m as usize, weighted),
                        (one.num_nodes(), one.num_edges(), one.weights().is_some()),
                        "{what}"
                    );
                    if let Some(names) = names {
                        assert_eq!(names.as_deref(), one.labels(), "{what}: names");
                    }
                }
            }
        }
        // A run prepared from the parts: one process's clusters.
        let want = reference::cluster::<f64>(&one, &MclOptions::default()).unwrap();
        for r in threads::run(3, |c| {
            let g = read_graph_weighted(c, f, &read_opts, &ro)?.expect("read in ranges");
            let mcl = MclOptions::default();
            let part = transition_part(c, &g, &mcl, &mut Phases::default())?;
            let prep = drive::Prepared::<f64>::from_part(part, &mcl, c.size(), c.rank())?;
            drive::cluster_prepared(c, &reference::Sequential, prep, &mut |_| {})
        }) {
            let r = r.unwrap();
            assert_eq!(r.clusters, want.clusters, "{}: clusters", f.display());
            assert_eq!(r.iterations, want.iterations, "{}", f.display());
        }
    }
    for f in whole.iter().chain(&ranged[..1]) {
        let p = if whole.contains(f) { 3 } else { 1 };
        for x in threads::run(p, |c| read_graph_weighted(c, f, &read_opts, &ro)) {
            assert!(
                x.unwrap().is_none(),
                "{}, {p} ranks: read in ranges",
                f.display()
            );
        }
    }
    // MLR-MCL's variant needs the whole graph.
    for x in threads::run(2, |c| {
        let g = read_graph_weighted(c, &ranged[0], &read_opts, &ro)?.expect("read in ranges");
        transition_part(c, &g, &MclOptions::mlrmcl(), &mut Phases::default())
    }) {
        assert!(x.is_err(), "MLR-MCL's part built from ranges");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A bad weight (here negative) fails the parts over ranks as it fails one process: each
/// rank checks its own columns' weights, and every edge is in two columns, so at 2 and 3
/// ranks some rank of every run refuses it, with one process's message (built from the
/// whole graph, and from byte ranges).
#[test]
fn a_bad_weight_fails_some_rank() {
    let dir = std::env::temp_dir().join(format!("trident-mcl-badw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("badw.txt");
    let mut text: String = (0..300u32)
        .map(|i| format!("{i} {} 1.5\n", (i * 7 + 1) % 300))
        .collect();
    text.push_str("17 250 -2\n");
    std::fs::write(&f, text).unwrap();
    let ro = ReadOptions::default();
    let opts = EdgeListOptions::default();
    let one = io::read_graph_limited(&f, &opts, &ro).unwrap();
    let mcl = MclOptions::default();
    let says = "edge weights must be finite and > 0, found -2";
    assert!(Transition::new_part(&one, &mcl, 1, 0)
        .unwrap_err()
        .to_string()
        .contains(says));
    for p in 2..=3 {
        let whole = (0..p).map(|r| Transition::new_part(&one, &mcl, p, r).err());
        let ranges = threads::run(p, |c| {
            let g = read_graph_weighted(c, &f, &opts, &ro)?.expect("read in ranges");
            transition_part(c, &g, &mcl, &mut Phases::default())
        });
        for (how, errs) in [
            ("whole", whole.collect::<Vec<_>>()),
            ("ranges", ranges.into_iter().map(|r| r.err()).collect()),
        ] {
            let failed: Vec<String> = errs.into_iter().flatten().map(|e| e.to_string()).collect();
            assert!(!failed.is_empty(), "{how}, {p} ranks: no rank refused it");
            assert!(failed.iter().all(|e| e.contains(says)), "{how}: {failed:?}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

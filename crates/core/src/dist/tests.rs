//! The distributed read and build against the one-process reader, at 1 to 4 ranks (threads).

use std::path::Path;

use super::graph::{read_graph, read_graph_whole, share_on_host, DistGraph};
use super::threads;
use super::Comm;
use crate::io::{self, EdgeListOptions, IdMode, ReadOptions};
use crate::Graph;

mod fuzz;
mod labels;
mod mcl_ranges;

/// Reads `path` at `p` ranks and checks every rank's view against one process's graph:
/// nodes, edges, self-loops, degrees, labels (rank 0), and the union of the ranks' edges.
fn same_as_one_process(path: &Path, opts: &EdgeListOptions, p: usize) -> Result<bool, String> {
    same_as_one_process_by(path, opts, p, |c| {
        read_graph(c, path, opts, &ReadOptions::default())
    })
}

/// [`same_as_one_process`] with the ranks reading by `read`.
fn same_as_one_process_by(
    path: &Path,
    opts: &EdgeListOptions,
    p: usize,
    read: impl Fn(&dyn Comm) -> crate::Result<DistGraph> + Sync,
) -> Result<bool, String> {
    let one: Graph = io::read_graph_limited(path, opts, &ReadOptions::default())
        .map_err(|e| format!("one process: {e}"))?;
    let results = threads::run(p, |c| {
        let g = read(c)?;
        Ok((c.rank(), g))
    });
    let mut edges = Vec::new();
    let mut parallel = false;
    for r in results {
        let (rank, g): (usize, DistGraph) = r.map_err(|e| format!("{p} ranks: {e}"))?;
        let what = format!("{}, {p} ranks, rank {rank}", path.display());
        if g.num_nodes() != one.num_nodes()
            || g.num_edges() != one.num_edges() as u64
            || g.self_loops_dropped() != one.self_loops_dropped() as u64
        {
            return Err(format!(
                "{what}: {} nodes, {} edges, {} self-loops; one process: {} {} {}",
                g.num_nodes(),
                g.num_edges(),
                g.self_loops_dropped(),
                one.num_nodes(),
                one.num_edges(),
                one.self_loops_dropped()
            ));
        }
        if let Some(v) = (0..one.num_nodes()).find(|&v| g.degree(v) != one.degree(v)) {
            return Err(format!("{what}: degree of node {v} differs"));
        }
        if rank == 0 {
            if let Some(v) = (0..one.num_nodes()).find(|&v| g.label(v) != one.label(v)) {
                return Err(format!(
                    "{what}: label of node {v}: {} vs {}",
                    g.label(v),
                    one.label(v)
                ));
            }
        }
        parallel = g.parallel_read();
        edges.extend(g.local_edges().map_err(|e| e.to_string())?);
    }
    edges.sort_unstable();
    let want: Vec<u64> = (0..one.num_nodes())
        .flat_map(|u| {
            one.neighbors(u)
                .iter()
                .filter(move |&&v| v as usize > u)
                .map(move |&v| (u as u64) << 32 | v as u64)
        })
        .collect();
    if edges != want {
        return Err(format!(
            "{}, {p} ranks: the ranks' edges differ",
            path.display()
        ));
    }
    Ok(parallel)
}

#[test]
fn shared_graphs_read_as_one_process() {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return;
    };
    let list = std::fs::read_to_string(dir.join("graphs.tsv")).unwrap();
    let opts = EdgeListOptions {
        loop_only_nodes: true,
        ..EdgeListOptions::default()
    };
    let mut parallel = 0;
    for line in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file"))
    {
        let file = line.split('\t').next().unwrap();
        for p in 1..=4 {
            parallel += usize::from(same_as_one_process(&dir.join(file), &opts, p).unwrap());
        }
    }
    // The edge lists among them are read in byte ranges.
    assert!(parallel > 10, "only {parallel} parallel reads");
}

#[test]
fn edge_list_quirks_read_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Gaps, 1-based ids, comments, CRLF, blank lines, self-loops (one id only in a loop),
    // duplicates both ways, a long line of blanks, weights.
    let mut text = String::from("# comment\r\n% another\r\n\r\n");
    for i in 0..3000u64 {
        let (u, v) = (i * 7 % 1013 + 1, i * 13 % 997 + 5);
        text.push_str(&format!("{u}\t{v}  {}\r\n", i % 5));
        if i % 100 == 0 {
            text.push_str(&format!("{v} {u} 1\n{u} {u} 2\n\n"));
        }
    }
    text.push_str("5000 5000 1\n");
    let file = dir.join("quirks.txt");
    std::fs::write(&file, &text).unwrap();
    for ids in [IdMode::Auto, IdMode::Numeric] {
        for loop_only_nodes in [false, true] {
            let opts = EdgeListOptions {
                ids,
                loop_only_nodes,
                ..EdgeListOptions::default()
            };
            for p in 1..=4 {
                let par = same_as_one_process(&file, &opts, p).unwrap();
                assert_eq!(par, p > 1, "{ids:?}, {p} ranks");
            }
        }
    }
    // Labels: read in byte ranges too, the same graph (`tests/labels.rs` has more).
    std::fs::write(dir.join("labels.txt"), "a b\nb c\nc a\nc d\n").unwrap();
    // After a UTF-8 byte-order mark (which one process skips): in byte ranges too, the
    // first label without it; with a header after it, and over integers.
    let bom = |name: &str, text: &str| {
        let f = dir.join(name);
        std::fs::write(&f, format!("\u{feff}{text}")).unwrap();
        f
    };
    let boms = [
        bom("bom_labels.txt", "a b\nb c\nc a\nc d\n"),
        bom("bom_header.txt", &format!("source target\n{}", &text[24..])),
        bom("bom_quirks.txt", &text),
    ];
    // Gzipped: read in pieces of the decompressed text (integer ids; labels are read whole).
    let gz = dir.join("quirks.txt.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, text.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    for p in 1..=3 {
        assert_eq!(
            same_as_one_process(&gz, &EdgeListOptions::default(), p),
            Ok(p > 1),
            "gzip, {p} ranks"
        );
    }
    for f in std::iter::once(dir.join("labels.txt")).chain(boms) {
        for p in 1..=3 {
            assert_eq!(
                same_as_one_process(&f, &EdgeListOptions::default(), p),
                Ok(p > 1),
                "{}, {p} ranks",
                f.display()
            );
        }
    }
    // A bad line deep in the file: every rank's error names the file's line.
    write_bad_line(&dir.join("bad.txt"));
    let numeric = EdgeListOptions {
        ids: IdMode::Numeric,
        ..EdgeListOptions::default()
    };
    let one = match io::read_graph_limited(dir.join("bad.txt"), &numeric, &ReadOptions::default()) {
        Ok(_) => panic!("one process read the bad line"),
        Err(e) => e.to_string(),
    };
    assert!(one.contains(":5001"), "{one}");
    for p in 2..=4 {
        let errs = read_errors(p, &dir.join("bad.txt"), &numeric);
        assert!(
            errs.iter().any(|e| e.contains(":5001")),
            "{p} ranks: {errs:?}; one process: {one}"
        );
    }
    // METIS (its header reads like an edge): read whole, as one process reads it.
    std::fs::write(
        dir.join("g.metis"),
        "% a METIS graph\n4 3\n2 3\n1\n1 4\n3\n",
    )
    .unwrap();
    for p in 1..=3 {
        assert!(
            !same_as_one_process(&dir.join("g.metis"), &EdgeListOptions::default(), p).unwrap()
        );
    }
    // A third field far from the first line (which has two): an error in every rank
    // count, as in one process (each range checks against the file's first line).
    let mut mixed = String::from("0 1\n");
    for i in 0..4000 {
        mixed.push_str(&format!("{i} {} 1\n", i + 1));
    }
    std::fs::write(dir.join("mixed.txt"), &mixed).unwrap();
    assert!(io::read_graph_limited(
        dir.join("mixed.txt"),
        &EdgeListOptions::default(),
        &ReadOptions::default()
    )
    .is_err());
    for p in 2..=4 {
        let results = threads::run(p, |c| {
            read_graph(
                c,
                &dir.join("mixed.txt"),
                &EdgeListOptions::default(),
                &ReadOptions::default(),
            )
            .map(|_| ())
        });
        assert!(
            results.iter().all(|r| r.is_err()),
            "{p} ranks read mixed field counts"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// [`read_graph_whole`] at `p` thread-ranks against one process's graph, on every rank:
/// nodes, every row and its weights, labels, self-loops, the build's counts and notes.
/// Returns whether the ranks read the file in byte ranges (all alike), or the first rank's
/// error.
fn whole_as_one_process(path: &Path, opts: &EdgeListOptions, p: usize) -> Result<bool, String> {
    let one = io::read_graph_limited(path, opts, &ReadOptions::default());
    let results = threads::run(p, |c| {
        read_graph_whole(c, path, opts, &ReadOptions::default())
    });
    let one = match one {
        Ok(g) => g,
        Err(e) => {
            // The ranks fail too, with one process's error.
            for r in results {
                match r {
                    Ok(_) => return Err(format!("{p} ranks read what one process refused: {e}")),
                    Err(got) if got.to_string() != e.to_string() => {
                        return Err(format!("{p} ranks: {got}; one process: {e}"))
                    }
                    Err(_) => {}
                }
            }
            return Err(e.to_string());
        }
    };
    let mut parallel = None;
    for (rank, r) in results.into_iter().enumerate() {
        let (g, par) = r.map_err(|e| format!("{p} ranks, rank {rank}: {e}"))?;
        let what = format!("{}, {p} ranks, rank {rank}", path.display());
        if *parallel.get_or_insert(par) != par {
            return Err(format!("{what}: the ranks read it differently"));
        }
        same_graph(&g, &one, &what)?;
    }
    Ok(parallel.unwrap_or(false))
}

/// `g` is `one`, node by node: sizes, build counts, notes, neighbours, weights, labels.
fn same_graph(g: &Graph, one: &Graph, what: &str) -> Result<(), String> {
    if (g.num_nodes(), g.num_edges(), g.self_loops_dropped())
        != (one.num_nodes(), one.num_edges(), one.self_loops_dropped())
        || g.build_stats() != one.build_stats()
        || g.notes() != one.notes()
    {
        return Err(format!("{what}: sizes, counts or notes differ"));
    }
    for v in 0..one.num_nodes() {
        if g.neighbors(v) != one.neighbors(v)
            || g.neighbor_weights(v) != one.neighbor_weights(v)
            || g.label(v) != one.label(v)
        {
            return Err(format!("{what}: node {v} differs"));
        }
    }
    if g.labels() != one.labels() {
        return Err(format!("{what}: labels differ"));
    }
    Ok(())
}

/// The network read once per host (`trident cluster` under mpirun, its default): the host's
/// first rank reads, every rank gets one process's graph ([`share_on_host`]), at 1 to 4
/// thread-ranks, for the shared graphs, a Matrix Market file (one-based labels), labels,
/// weights, sparse ids (id labels) and notes; the first rank's failed read is its error.
#[test]
fn graph_shared_on_host_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    if let Some(data) = crate::testing::data_dir_or_skip() {
        let list = std::fs::read_to_string(data.join("graphs.tsv")).unwrap();
        for line in list
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("file"))
            .take(4)
        {
            files.push(data.join(line.split('\t').next().unwrap()));
        }
    }
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text).unwrap();
        dir.join(name)
    };
    files.push(write(
        "weighted.txt",
        (0..500)
            .map(|i| format!("{i} {} 0.{}\n", i + 1, i % 9 + 1))
            .collect(),
    ));
    files.push(write("labels.txt", "a b\nb c\nc a\nc d\nzé a\n".into()));
    files.push(write(
        "sparse.txt",
        (0..2000u64)
            .map(|i| format!("{} {}\n", i * 1_000_003 % 999_999_937, i * 7 + 3))
            .collect(),
    ));
    // A header line skipped and repeated edges merged: notes.
    files.push(write(
        "notes.txt",
        "source target\n1 2\n2 1\n2 3\n3 3\n2 3\n".into(),
    ));
    files.push(write(
        "graph.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 1.5\n3 2 2\n4 4 1\n".into(),
    ));
    let opts = EdgeListOptions {
        loop_only_nodes: true,
        ..EdgeListOptions::default()
    };
    let read = |f: &Path| io::read_graph_limited(f, &opts, &ReadOptions::default());
    for f in &files {
        let one = read(f).unwrap();
        for p in 1..=4 {
            let got = threads::run(p, |c| {
                share_on_host(c, (c.host_ranks().0 == 0).then(|| read(f)))
            });
            for (rank, g) in got.into_iter().enumerate() {
                let what = format!("{}, {p} ranks, rank {rank}", f.display());
                let (g, shared) = g.unwrap();
                assert!(shared, "{what}: not shared");
                same_graph(&g.expect("a graph"), &one, &what).unwrap();
            }
        }
    }
    // The first rank's failed read is its error (the caller ends the job); a rank that is
    // not the host's first must not bring a graph.
    write_bad_line(&dir.join("bad.txt"));
    let numeric = EdgeListOptions {
        ids: IdMode::Numeric,
        ..EdgeListOptions::default()
    };
    let bad = || io::read_graph_limited(dir.join("bad.txt"), &numeric, &ReadOptions::default());
    let e = threads::run(1, |c| share_on_host(c, Some(bad())));
    let e = e[0].as_ref().err().map(ToString::to_string);
    assert!(e.as_ref().is_some_and(|e| e.contains(":5001")), "{e:?}");
    let e = threads::run(2, |c| {
        if c.rank() == 1 {
            share_on_host(c, Some(read(&dir.join("labels.txt"))))
        } else {
            Err(crate::Error::invalid("test", "rank 0 stays out"))
        }
    });
    let e = e[1].as_ref().err().map(ToString::to_string);
    assert!(e.as_ref().is_some_and(|e| e.contains("only it")), "{e:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// R-MCL's parts built on the host's other ranks from the shared bytes, read in place
/// ([`share_on_host_or_part`]): at 1 to 4 thread-ranks, every rank's columns of `M_G` are
/// one process's `Transition::new_part` of the graph (weights, labels, sparse ids, Matrix
/// Market), the host's first rank keeps its graph, and a part that needs the whole graph
/// (`None`: MLR-MCL's) gets the graph copied out.
#[test]
fn mcl_parts_built_in_place_from_the_shared_bytes() {
    use super::graph::{share_on_host_or_part, GraphOrPart};
    use crate::mcl::{MclOptions, Transition};
    let dir = std::env::temp_dir().join(format!("trident-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text).unwrap();
        dir.join(name)
    };
    let files = [
        write(
            "weighted.txt",
            (0..700)
                .map(|i| format!("{i} {} 0.{}\n", (i * 37 + 1) % 700, i % 9 + 1))
                .collect(),
        ),
        write("labels.txt", "a b\nb c\nc a\nc d\nzé a\ne e\n".into()),
        write(
            "sparse.txt",
            (0..2000u64)
                .map(|i| format!("{} {}\n", i * 1_000_003 % 999_999_937, i * 7 + 3))
                .collect(),
        ),
        write(
            "graph.mtx",
            "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 1.5\n3 2 2\n4 4 1\n"
                .into(),
        ),
    ];
    let read_opts = EdgeListOptions {
        loop_only_nodes: true,
        ..EdgeListOptions::default()
    };
    let read = |f: &Path| io::read_graph_limited(f, &read_opts, &ReadOptions::default());
    let mcl = MclOptions::default();
    for f in &files {
        let one = read(f).unwrap();
        for p in 1..=4 {
            let got = threads::run(p, |c| {
                let (rank, size) = (c.rank(), c.size());
                share_on_host_or_part(c, (c.host_ranks().0 == 0).then(|| read(f)), &mut |a| {
                    Transition::new_part_of(a, &mcl, size, rank).map(Some)
                })
            });
            for (rank, x) in got.into_iter().enumerate() {
                let what = format!("{}, {p} ranks, rank {rank}", f.display());
                let (x, shared) = x.unwrap();
                assert!(shared, "{what}: not shared");
                let want = Transition::new_part(&one, &mcl, p, rank).unwrap();
                match x.expect("a graph or a part") {
                    GraphOrPart::Graph(g) => {
                        assert_eq!(rank, 0, "{what}: copied the graph");
                        same_graph(&g, &one, &what).unwrap();
                    }
                    GraphOrPart::Part(part) => {
                        assert_ne!(rank, 0, "{what}: the first rank's part");
                        assert!(part == want, "{what}: another part");
                    }
                }
            }
        }
        // Work that needs the whole graph: every rank gets one process's graph.
        let got = threads::run(3, |c| {
            share_on_host_or_part::<()>(c, (c.host_ranks().0 == 0).then(|| read(f)), &mut |_| {
                Ok(None)
            })
        });
        for (rank, x) in got.into_iter().enumerate() {
            let what = format!("{}, 3 ranks, rank {rank}, no part", f.display());
            match x.unwrap().0.expect("a graph") {
                GraphOrPart::Graph(g) => same_graph(&g, &one, &what).unwrap(),
                GraphOrPart::Part(()) => panic!("{what}: a part"),
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every rank gets one process's whole graph ([`read_graph_whole`], the read of `trident
/// cluster` under mpirun): in byte ranges for the shared graphs and a file of every edge-list
/// quirk (ids as given or compacted, sparse ids, self-loop-only nodes kept or not), whole for
/// weights and labels; a bad line deep in the file and a file of comments fail as in one
/// process, naming the same line.
#[test]
fn whole_graph_read_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-whole-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<(std::path::PathBuf, bool)> = Vec::new();
    if let Some(data) = crate::testing::data_dir_or_skip() {
        let list = std::fs::read_to_string(data.join("graphs.tsv")).unwrap();
        for line in list
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("file"))
            .take(6)
        {
            files.push((data.join(line.split('\t').next().unwrap()), false));
        }
    }
    // Gaps, comments, CRLF, blank lines, self-loops (one id only in a loop), duplicates both
    // ways; unweighted (a third field is ignored only when asked: see below).
    let mut text = String::from("# comment\r\n% another\r\n\r\n");
    for i in 0..3000u64 {
        let (u, v) = (i * 7 % 1013 + 1, i * 13 % 997 + 5);
        text.push_str(&format!("{u}\t{v}\r\n"));
        if i % 100 == 0 {
            text.push_str(&format!("{v} {u}\n{u} {u}\n\n"));
        }
    }
    text.push_str("5000 5000\n");
    std::fs::write(dir.join("quirks.txt"), &text).unwrap();
    files.push((dir.join("quirks.txt"), true));
    // Sparse ids (compacted through a sorted list, not a bitmap).
    let sparse: String = (0..2000u64)
        .map(|i| {
            format!(
                "{} {}\n",
                i * 1_000_003 % 999_999_937,
                (i * 7 + 3) * 99_991 % 999_999_937
            )
        })
        .collect();
    std::fs::write(dir.join("sparse.txt"), sparse).unwrap();
    files.push((dir.join("sparse.txt"), true));
    for (file, in_ranges) in &files {
        // Sparse ids as given would be a billion nodes.
        let modes: &[IdMode] = if file.ends_with("sparse.txt") {
            &[IdMode::Auto]
        } else {
            &[IdMode::Auto, IdMode::Numeric]
        };
        for &ids in modes {
            for loop_only_nodes in [false, true] {
                let opts = EdgeListOptions {
                    ids,
                    loop_only_nodes,
                    ..EdgeListOptions::default()
                };
                for p in 1..=4 {
                    match whole_as_one_process(file, &opts, p) {
                        Ok(par) => assert!(
                            par == (p > 1) || !in_ranges,
                            "{}: {ids:?}, {p} ranks: parallel {par}",
                            file.display()
                        ),
                        Err(e) => panic!("{}: {ids:?}: {e}", file.display()),
                    }
                }
            }
        }
    }
    // Weights (repeats both ways with other weights: the largest kept): read in byte
    // ranges, the same graph; labels: read whole by every rank, the same graph.
    let weighted: String = (0..500)
        .map(|i| {
            format!(
                "{i} {} 0.{}\n{} {i} 0.{}\n",
                i + 1,
                i % 9 + 1,
                i + 1,
                i % 7 + 2
            )
        })
        .collect();
    std::fs::write(dir.join("weighted.txt"), weighted).unwrap();
    std::fs::write(dir.join("labels.txt"), "a b\nb c\nc a\nc d\n").unwrap();
    for (f, ranges) in [("weighted.txt", true), ("labels.txt", false)] {
        for p in 2..=3 {
            let par = whole_as_one_process(&dir.join(f), &EdgeListOptions::default(), p).unwrap();
            assert_eq!(par, ranges, "{f}: read in byte ranges");
        }
    }
    // A third field ignored when asked: read in ranges.
    let ignore = EdgeListOptions {
        weighted: Some(false),
        ..EdgeListOptions::default()
    };
    assert!(whole_as_one_process(&dir.join("weighted.txt"), &ignore, 3).unwrap());
    // A bad line deep in the file (ids as given, so not a label file): the ranks fail with
    // one process's error, naming its line.
    write_bad_line(&dir.join("bad.txt"));
    for p in 2..=4 {
        let numeric = EdgeListOptions {
            ids: IdMode::Numeric,
            ..EdgeListOptions::default()
        };
        let e = whole_as_one_process(&dir.join("bad.txt"), &numeric, p).unwrap_err();
        assert!(!e.contains("ranks") && e.contains(":5001"), "{e}");
    }
    // No data line: whatever one process makes of it (read whole).
    std::fs::write(dir.join("comments.txt"), "# nothing\n% here\n").unwrap();
    for p in 2..=4 {
        match whole_as_one_process(&dir.join("comments.txt"), &EdgeListOptions::default(), p) {
            Ok(par) => assert!(!par),
            Err(e) => assert!(!e.contains("ranks"), "{e}"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// An integer-id edge list whose line 5001 (of 5101) is `17 x`: an error deep in the file,
/// in a later rank's byte range.
fn write_bad_line(path: &Path) {
    let mut bad = String::new();
    for i in 0..5000 {
        bad.push_str(&format!("{i} {}\n", i + 1));
    }
    bad.push_str("17 x\n");
    for i in 0..100 {
        bad.push_str(&format!("{i} {}\n", i + 2));
    }
    std::fs::write(path, bad).unwrap();
}

/// Distributed R-MCL at 1 to 4 ranks against the sequential reference (whose partitions
/// every backend matches): the same partition, iterations, levels, stop and change bits, for
/// Trident's variant (its `M·M` finish included), MLR-MCL's single-level and multi-level
/// (balance, DPR, coarsening), in f64 and f32.
#[test]
fn mcl_matches_one_process() {
    use crate::mcl::{reference, MclOptions, Variant};
    let planted = crate::generate::planted(&crate::generate::PlantedOptions {
        nodes: 400,
        communities: 20,
        degree: 10.0,
        mixing: 0.25,
        seed: 3,
    })
    .unwrap();
    let g = planted.edges.to_graph().unwrap();
    let trident = MclOptions::default();
    let single = MclOptions {
        coarsen_to: 0,
        ..MclOptions::mlrmcl()
    };
    let multi = MclOptions {
        coarsen_to: 60,
        max_per_column: 64,
        ..MclOptions::mlrmcl()
    };
    assert_eq!(single.variant, Variant::MlrMcl);
    for (what, o) in [
        ("trident", &trident),
        ("mlrmcl", &single),
        ("mlrmcl multi-level", &multi),
    ] {
        let want = reference::cluster::<f64>(&g, o).unwrap();
        for p in 1..=4 {
            let got = threads::run(p, |c| {
                super::mcl::cluster::<f64, _>(c, &reference::Sequential, &g, o, &mut |_| {})
            });
            for (rank, r) in got.into_iter().enumerate() {
                let r = r.unwrap();
                let label = format!("{what}, {p} ranks, rank {rank}");
                assert_eq!(r.clusters, want.clusters, "{label}: partition");
                assert_eq!(
                    (r.iterations, r.levels, r.stop, r.change.to_bits()),
                    (
                        want.iterations,
                        want.levels,
                        want.stop,
                        want.change.to_bits()
                    ),
                    "{label}"
                );
            }
        }
    }
    // f32, Trident's variant, 3 ranks.
    let want = reference::cluster::<f32>(&g, &trident).unwrap();
    for r in threads::run(3, |c| {
        super::mcl::cluster::<f32, _>(c, &reference::Sequential, &g, &trident, &mut |_| {})
    }) {
        assert_eq!(r.unwrap().clusters, want.clusters, "f32, 3 ranks");
    }
}

/// Matrix Market files read in byte ranges of their body, as one process reads them whole:
/// every symmetry and field, comments and blank lines in the body, CRLF, diagonal entries
/// (self-loops), entries given both ways, a large file; and its errors (a bad entry deep in
/// the body, too many or too few entries, a skew-symmetric diagonal) naming the same line
/// as one process.
#[test]
fn matrix_market_read_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-dist-mtx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let opts = EdgeListOptions::default();
    let body = |n: u64, k: u64, crlf: bool, field: &str| -> (String, u64) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut s = String::new();
        let mut entries = 0;
        for i in 0..k {
            let (u, v) = (i * 7 % n + 1, (i * 13 + i / 5) % n + 1);
            let val = match field {
                "pattern" => String::new(),
                "integer" => format!(" {}", i % 9),
                _ => format!(" {}.5e-1", i % 9),
            };
            s.push_str(&format!("{u} {v}{val}{eol}"));
            entries += 1;
            if i % 97 == 0 {
                s.push_str(&format!("% a comment in the body{eol}{eol}"));
            }
        }
        (s, entries)
    };
    let mut files = Vec::new();
    for (sym, field, crlf, n, k) in [
        ("general", "real", false, 500, 4000),
        ("symmetric", "pattern", true, 300, 2500),
        ("symmetric", "integer", false, 64, 900),
        ("general", "pattern", false, 20_000, 120_000),
    ] {
        let (b, entries) = body(n, k, crlf, field);
        let text = format!(
            "%%MatrixMarket matrix coordinate {field} {sym}\n% header comment\n%\n{n} {n} {entries}\n{b}"
        );
        let f = dir.join(format!("{sym}-{field}-{n}.mtx"));
        std::fs::write(&f, text).unwrap();
        files.push(f);
    }
    // A symmetric file may not hold both triangles, but one with the diagonal is common.
    std::fs::write(
        dir.join("diag.mtx"),
        "%%MatrixMarket matrix coordinate real symmetric\n4 4 6\n1 1 2\n2 1 1\n2 2 2\n3 2 -1\n4 3 0\n4 4 1\n",
    )
    .unwrap();
    files.push(dir.join("diag.mtx"));
    for f in &files {
        for p in 1..=4 {
            let par = same_as_one_process(f, &opts, p).unwrap();
            assert_eq!(par, p > 1, "{}, {p} ranks", f.display());
        }
    }
    // Errors: each names what one process names (its message and line), on some rank.
    let (good, entries) = body(1000, 6000, false, "pattern");
    let head = |sym: &str, e: u64| {
        format!("%%MatrixMarket matrix coordinate pattern {sym}\n1000 1000 {e}\n")
    };
    let mut lines: Vec<&str> = good.lines().collect();
    lines[4500] = "17 1001";
    let bad_index = lines.join("\n") + "\n";
    let cases = [
        (
            "bad-index.mtx",
            format!("{}{bad_index}", head("general", entries)),
        ),
        (
            "too-many.mtx",
            format!("{}{good}", head("general", entries - 700)),
        ),
        (
            "too-few.mtx",
            format!("{}{good}", head("general", entries + 3)),
        ),
        ("skew.mtx", {
            // Off the diagonal but for one entry deep in the body.
            let mut t = String::from(
                "%%MatrixMarket matrix coordinate real skew-symmetric\n1000 1000 6000\n",
            );
            for i in 0..6000u64 {
                let (u, v) = match i {
                    4321 => (7, 7),
                    _ => (i % 1000 + 1, (i + 1 + i / 1000) % 1000 + 1),
                };
                t.push_str(&format!("{u} {v} 1.0\n"));
            }
            t
        }),
    ];
    for (file, text) in &cases {
        let f = dir.join(file);
        std::fs::write(&f, text).unwrap();
        let one = match io::read_graph_limited(&f, &opts, &ReadOptions::default()) {
            Ok(_) => panic!("{file}: one process read it"),
            Err(e) => e.to_string(),
        };
        for p in 2..=4 {
            let errs = read_errors(p, &f, &opts);
            assert!(
                errs.contains(&one),
                "{file}, {p} ranks: {errs:?}; one process: {one}"
            );
        }
    }
}

/// The errors of the ranks that failed to read `path` at `p` thread-ranks.
fn read_errors(p: usize, path: &Path, opts: &EdgeListOptions) -> Vec<String> {
    threads::run(p, |c| {
        read_graph(c, path, opts, &ReadOptions::default()).map(|_| ())
    })
    .into_iter()
    .filter_map(|r| r.err())
    .map(|e| e.to_string())
    .collect()
}

/// `m` random edges on `n` nodes, with skewed ends (the product of two draws), repeats,
/// self-loops and both directions, and their simple graph (self-loops dropped).
fn skewed_graph(next: &mut impl FnMut() -> u64, n: usize, m: usize) -> (Vec<(u32, u32)>, Graph) {
    let edges: Vec<(u32, u32)> = (0..m)
        .map(|_| {
            let a = (next() % n as u64) * (next() % n as u64) / n as u64;
            (a as u32, (next() % n as u64) as u32)
        })
        .collect();
    let g = Graph::from_edges(
        n,
        edges
            .iter()
            .filter(|&&(u, v)| u != v)
            .map(|&(u, v)| (u as usize, v as usize)),
    )
    .unwrap();
    (edges, g)
}

/// The distributed orientation at 1 to 4 ranks (threads) against one process's: the same
/// rows and relabelling, and rows cut where the work of one process's rows cuts them.
#[test]
fn orientation_matches_one_process() {
    use super::graph::{edge_cost, edge_splits, orient};
    use crate::triangles::OrientedGraph;
    let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
    for (n, m) in [(1usize, 0usize), (7, 12), (300, 4000), (5000, 60_000)] {
        let (edges, g) = skewed_graph(&mut next, n, m);
        let one = OrientedGraph::from_graph(&g).unwrap();
        let (ip, adj) = (one.indptr(), one.adjacency());
        let outdeg = |r: usize| (ip[r + 1] - ip[r]) as u32;
        let cost: Vec<u64> = (0..n)
            .map(|r| {
                adj[ip[r] as usize..ip[r + 1] as usize]
                    .iter()
                    .map(|&v| edge_cost(outdeg(r), outdeg(v as usize)))
                    .sum()
            })
            .collect();
        for p in 1..=4 {
            let want_splits = edge_splits(&cost, cost.iter().sum(), p);
            let results = threads::run(p, |c| {
                let share = &edges[edges.len() * c.rank() / p..edges.len() * (c.rank() + 1) / p];
                let d = DistGraph::from_edges(c, n, share)?;
                let o = orient(c, &d)?;
                let all = o.gather(c)?;
                Ok((o.splits().to_vec(), o.num_edges(), all))
            });
            for r in results {
                let (splits, m, all) = r.unwrap();
                let what = format!("{n} nodes, {m} edges, {p} ranks");
                assert_eq!(splits, want_splits, "{what}: splits");
                assert_eq!(m, g.num_edges() as u64, "{what}: edges");
                assert_eq!(all.indptr(), ip, "{what}: row pointers");
                assert_eq!(all.adjacency(), adj, "{what}: rows");
                assert!(
                    (0..n).all(|r| all.original(r) == one.original(r)),
                    "{what}: relabelling"
                );
            }
        }
    }
}

/// The oriented graph read once per host (`trident triangles` under mpirun, its default):
/// at 1 to 4 thread-ranks every rank's share ([`orient_on_host`], and
/// [`DistOriented::from_whole`] where each rank holds the whole graph) is the one the
/// distributed orientation gives it: the same cuts, rows and relabelling. The shared bytes
/// cut short anywhere are refused, and a flipped byte is refused or read, never a panic.
#[test]
fn orientation_shared_on_host_as_distributed() {
    use super::graph::host as host_bytes;
    use super::graph::{orient, orient_on_host, CutGraph, DistOriented};
    use crate::triangles::OrientedGraph;
    let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15u64);
    for (n, m) in [(1usize, 0usize), (9, 20), (400, 5000), (6000, 70_000)] {
        let (edges, g) = skewed_graph(&mut next, n, m);
        let one = OrientedGraph::from_graph(&g).unwrap();
        type Share = (Vec<usize>, Vec<u64>, Vec<u32>, Vec<u32>, u64, usize);
        let share = |o: &DistOriented| -> Share {
            let (ip, adj) = o.local();
            (
                o.splits().to_vec(),
                ip.to_vec(),
                adj.to_vec(),
                o.original().to_vec(),
                o.num_edges(),
                o.num_nodes(),
            )
        };
        for p in 1..=4 {
            let want = threads::run(p, |c| {
                let part = &edges[edges.len() * c.rank() / p..edges.len() * (c.rank() + 1) / p];
                let d = DistGraph::from_edges(c, n, part)?;
                Ok(share(&orient(c, &d)?))
            });
            let host = threads::run(p, |c| {
                let (o, shared) = orient_on_host(
                    c,
                    (c.host_ranks().0 == 0).then(|| Ok(CutGraph::new(one.clone(), p))),
                )?;
                assert!(shared, "not shared");
                Ok(share(&o.expect("a share")))
            });
            let whole = threads::run(p, |c| {
                Ok(share(&DistOriented::from_whole(
                    c,
                    CutGraph::new(one.clone(), p),
                )?))
            });
            for (rank, ((w, h), a)) in want.into_iter().zip(host).zip(whole).enumerate() {
                let what = format!("{n} nodes, {m} edges, {p} ranks, rank {rank}");
                let w = w.unwrap();
                assert!(h.unwrap() == w, "{what}: shared on the host");
                assert!(a.unwrap() == w, "{what}: from the whole graph");
            }
        }
        if n == 400 {
            for p in 1..=3 {
                let b = host_bytes::to_bytes(&one, p);
                for rank in 0..p {
                    assert!(!host_bytes::refuses(&b, rank, p), "{p} ranks: refused");
                    for cut in (0..b.len()).step_by(7) {
                        assert!(host_bytes::refuses(&b[..cut], rank, p), "cut at {cut}");
                    }
                }
                assert!(host_bytes::refuses(&b, 0, p + 1), "another number of ranks");
                let cut = CutGraph::new(one.clone(), p + 1);
                let e = threads::run(p, |c| {
                    DistOriented::from_whole(c, cut.clone())?;
                    orient_on_host(c, (c.host_ranks().0 == 0).then(|| Ok(cut.clone())))
                });
                assert!(
                    e.iter()
                        .all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("cut for"))),
                    "a cut for another number of ranks"
                );
                for at in (0..b.len()).step_by(5) {
                    let mut f = b.clone();
                    f[at] ^= 0x5a;
                    let _ = host_bytes::refuses(&f, p - 1, p);
                }
                // The tag, a cut and a row pointer out of order, an id out of range.
                for (at, what) in [(0, "tag"), (8 * 5, "cut"), (8 * (4 + p + 1) + 8 * 3, "row")] {
                    let mut f = b.clone();
                    f[at + 7] ^= 0x80;
                    assert!(host_bytes::refuses(&f, 0, p), "{what} flipped");
                }
                let mut f = b.clone();
                let last = f.len() - 4 * (one.num_edges() % 2) - 4;
                f[last + 3] = 0xff;
                assert!(
                    (0..p).any(|rank| host_bytes::refuses(&f, rank, p)),
                    "an id out of range"
                );
            }
        }
    }
}

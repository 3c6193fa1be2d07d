//! `trident cluster` end to end on tiny networks: mcl's output format, the progress lines,
//! `--eval`, and refusals before any work.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-cluster-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn trident(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run trident")
}

/// The clusters of mcl-format output (one tab-separated line per cluster), each sorted, in
/// sorted order.
fn sorted_clusters(text: &str) -> Vec<Vec<&str>> {
    let mut lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| {
            let mut v: Vec<&str> = l.split('\t').collect();
            v.sort_unstable();
            v
        })
        .collect();
    lines.sort();
    lines
}

/// Two labelled triangles joined by one weak edge.
fn network(d: &std::path::Path) -> PathBuf {
    let p = d.join("net.abc");
    std::fs::write(
        &p,
        "alpha\tbeta\t1\nbeta\tgamma\t1\ngamma\talpha\t1\n\
         delta\tepsilon\t1\nepsilon\tzeta\t1\nzeta\tdelta\t1\ngamma\tdelta\t0.1\n",
    )
    .unwrap();
    p
}

#[test]
fn clusters_in_mcl_format_with_progress_and_eval() {
    let d = dir("format");
    let net = network(&d);
    let cx = d.join("complexes.txt");
    std::fs::write(&cx, "# gold\nalpha beta gamma\ndelta epsilon zeta\n").unwrap();
    let out = d.join("clusters.txt");
    let o = trident(&[
        "cluster",
        net.to_str().unwrap(),
        "--backend",
        "cpu",
        "-I",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--eval",
        cx.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("iteration   1: chaos"), "{err}");
    assert!(err.contains("matched:     2/2 complexes"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        sorted_clusters(&text),
        [
            vec!["alpha", "beta", "gamma"],
            vec!["delta", "epsilon", "zeta"]
        ],
        "{text}"
    );

    // To standard output, quiet: only the clusters on stdout, no progress on stderr.
    let o = trident(&[
        "cluster",
        net.to_str().unwrap(),
        "--backend",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("iteration   1:"), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);
}

#[test]
fn non_convergence_is_reported() {
    let d = dir("cap");
    let net = network(&d);
    let o = trident(&[
        "cluster",
        net.to_str().unwrap(),
        "--backend",
        "cpu",
        "--max-iterations",
        "1",
        "--quiet",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did not converge in 1 iterations"), "{err}");
}

#[test]
fn bad_options_and_outputs_are_refused_before_work() {
    let d = dir("refuse");
    let net = network(&d);
    let n = net.to_str().unwrap();
    for args in [
        vec!["cluster", n, "-I", "1"],
        vec!["cluster", n, "--max-per-column", "0"],
        vec!["cluster", n, "--mass-penalty", "-1"],
        vec!["cluster", n, "--balance", "0.5"],
        vec!["cluster", n, "--variant", "mlrmcl", "--mass-penalty", "0.5"],
        vec!["cluster", n, "--variant", "mlrmcl", "--finish-after", "3"],
        vec!["cluster", n, "--variant", "mlrmcl", "--expansion", "mcl"],
        vec!["cluster", n, "--coarsen-to", "10"],
        vec!["cluster", n, "-o", n],
        vec!["cluster", n, "--eval", "/nonexistent/complexes.txt"],
        // A stream without line breaks is refused early (not read until memory runs out).
        vec!["cluster", n, "--eval", "/dev/zero"],
    ] {
        let o = trident(&args);
        assert!(!o.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("error:"), "{args:?}: {err}");
        assert!(!err.contains("graph:"), "{args:?} did work: {err}");
    }
    // The input is untouched.
    assert!(std::fs::read_to_string(&net).unwrap().starts_with("alpha"));
}

/// `trident generate planted` writes the same files whatever the thread count, and
/// `trident cluster --eval` on them recovers every community, printing the phase times.
#[test]
fn planted_network_is_reproducible_and_recovered() {
    let d = dir("planted");
    let gen = |threads: &str, name: &str| -> (Vec<u8>, Vec<u8>) {
        let (e, t) = (
            d.join(format!("{name}.el")),
            d.join(format!("{name}.truth")),
        );
        let o = Command::new(BIN)
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "generate",
                "planted",
                "--nodes",
                "400",
                "--communities",
                "20",
                "--degree",
                "8",
                "--mixing",
                "0.1",
                "--seed",
                "3",
                "-o",
                e.to_str().unwrap(),
                "--truth",
                t.to_str().unwrap(),
            ])
            .output()
            .expect("run trident");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (std::fs::read(&e).unwrap(), std::fs::read(&t).unwrap())
    };
    let one = gen("1", "a");
    assert_eq!(one, gen("2", "b"));
    assert_eq!(String::from_utf8_lossy(&one.1).lines().count(), 20);
    let out = d.join("clusters.txt");
    let o = trident(&[
        "cluster",
        d.join("a.el").to_str().unwrap(),
        "--backend",
        "cpu",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
        "--eval",
        d.join("a.truth").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("matched:     20/20 complexes"), "{err}");
    assert!(err.contains("(stopped: chaos below tolerance)"), "{err}");
    assert!(err.contains("phases: read "), "{err}");
    // Everything outside the clustering is timed too, so that the process time is accounted.
    for phase in [
        "prepare",
        "kernel load",
        "transfer",
        "iterations",
        "interpret",
        "write",
        "complexes",
        "backend start",
        "eval",
        "teardown",
        "process",
    ] {
        assert!(err.contains(&format!("{phase} ")), "{phase}: {err}");
    }
    // Same bytes, different files: refused.
    let e = d.join("a.el");
    let o = trident(&[
        "generate",
        "planted",
        "--nodes",
        "10",
        "--communities",
        "2",
        "-o",
        e.to_str().unwrap(),
        "--truth",
        e.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    std::fs::remove_dir_all(&d).ok();
}

/// The backends `trident info` reports available here: the CPU, and OpenCL and CUDA where a
/// device is present (PoCL counts).
fn backends() -> Vec<&'static str> {
    let o = trident(&["info"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let mut b = vec!["cpu"];
    for (name, line) in [
        ("opencl", "opencl: available"),
        ("cuda", "cuda:   available"),
    ] {
        if out.contains(line) {
            b.push(name);
        }
    }
    b
}

/// The clusters of mcl-format text, each sorted, sorted.
fn partition(text: &str) -> Vec<Vec<String>> {
    let mut p: Vec<Vec<String>> = text
        .lines()
        .map(|l| {
            let mut c: Vec<String> = l.split('\t').map(str::to_string).collect();
            c.sort();
            c
        })
        .collect();
    p.sort();
    p
}

/// The value after `key` in the summary line on stderr (`chaos 1.2e-4,` → "1.2e-4").
fn summary_field<'a>(err: &'a str, key: &str) -> &'a str {
    let line = err
        .lines()
        .find(|l| l.starts_with("clusters: "))
        .unwrap_or_else(|| panic!("no summary line: {err}"));
    let at = line
        .rfind(key)
        .unwrap_or_else(|| panic!("no {key:?} in {line:?}"))
        + key.len();
    line[at..]
        .split([',', ';', ' '])
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

/// Every input node is in exactly one cluster, as with mcl: a node whose only line is a
/// self-loop, a network of one self-loop, Matrix Market nodes without entries, on every
/// available backend and with both expansions.
#[test]
fn every_input_node_is_in_exactly_one_cluster() {
    let d = dir("nodes");
    let s = |v: &[&[&str]]| -> Vec<Vec<String>> {
        let mut p: Vec<Vec<String>> = v
            .iter()
            .map(|c| {
                let mut c: Vec<String> = c.iter().map(|x| x.to_string()).collect();
                c.sort();
                c
            })
            .collect();
        p.sort();
        p
    };
    let cases: Vec<(&str, &str, Vec<Vec<String>>)> = vec![
        (
            "loops.abc",
            "a\tb\nb\tc\nc\ta\nd\td\ne\tf\n",
            s(&[&["a", "b", "c"], &["d"], &["e", "f"]]),
        ),
        ("one_loop.abc", "x\tx\n", s(&[&["x"]])),
        ("two_loops.abc", "x x 2\ny y 1\n", s(&[&["x"], &["y"]])),
        // Integer ids with a gap (compacted, labelled by id) and a loop-only id.
        (
            "ids.txt",
            "0 1\n1 2\n2 0\n7 7\n",
            s(&[&["0", "1", "2"], &["7"]]),
        ),
    ];
    for (name, text, want) in &cases {
        let net = d.join(name);
        std::fs::write(&net, text).unwrap();
        for backend in backends() {
            for expansion in ["regularized", "mcl"] {
                let out = d.join(format!("{name}.{backend}.{expansion}.out"));
                let o = trident(&[
                    "cluster",
                    net.to_str().unwrap(),
                    "--backend",
                    backend,
                    "--expansion",
                    expansion,
                    "--quiet",
                    "-o",
                    out.to_str().unwrap(),
                ]);
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(o.status.success(), "{name} {backend} {expansion}: {err}");
                let got = partition(&std::fs::read_to_string(&out).unwrap());
                assert_eq!(&got, want, "{name} {backend} {expansion}: {err}");
            }
        }
    }
    // Matrix Market: five declared nodes, one edge (2-1) and a diagonal entry (3,3): the
    // edge's two nodes together, the three others singletons (whatever their numbering).
    let mtx = d.join("iso.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 2\n2 1\n3 3\n",
    )
    .unwrap();
    for backend in backends() {
        let o = trident(&[
            "cluster",
            mtx.to_str().unwrap(),
            "--backend",
            backend,
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got = partition(&String::from_utf8_lossy(&o.stdout));
        let mut sizes: Vec<usize> = got.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [1, 1, 1, 2], "{backend}: {got:?}");
        let mut all: Vec<&String> = got.iter().flatten().collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 5, "{backend}: {got:?}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `-I 20` on collins2007 (1622 nodes): the iterate stays stochastic (a finite chaos in [0,
/// 1], column changes at most 2), the network falls into many small clusters (mcl -I 20:
/// none above 25 members; before the fix, one cluster of 681), and the partition is the sequential f64 reference's, on every
/// available backend, in both expansions.
#[test]
fn high_inflation_on_collins2007_is_sane() {
    let d = dir("inflation");
    let net = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/collins2007.txt");
    let g = trident_core::io::read_graph_with(
        &net,
        &trident_core::io::EdgeListOptions {
            loop_only_nodes: true,
            ..Default::default()
        },
    )
    .unwrap();
    for expansion in ["regularized", "mcl"] {
        let opts = trident_core::mcl::MclOptions {
            inflation: 20.0,
            expansion: if expansion == "mcl" {
                trident_core::mcl::Expansion::Mcl
            } else {
                trident_core::mcl::Expansion::Regularized
            },
            ..Default::default()
        };
        let r = trident_core::mcl::reference::cluster::<f64>(&g, &opts).unwrap();
        assert!(
            r.chaos.is_finite() && r.chaos <= 1.0,
            "reference chaos {}",
            r.chaos
        );
        let labels = g.labels().expect("collins2007 has labels");
        let want = partition(
            &r.clusters
                .iter()
                .map(|c| {
                    c.iter()
                        .map(|&u| labels[u].as_str())
                        .collect::<Vec<_>>()
                        .join("\t")
                })
                .collect::<Vec<_>>()
                .join("\n"),
        );
        for backend in backends() {
            let what = format!("{backend} {expansion}");
            let out = d.join(format!("{backend}.{expansion}.out"));
            let o = trident(&[
                "cluster",
                net.to_str().unwrap(),
                "-I",
                "20",
                "--expansion",
                expansion,
                "--backend",
                backend,
                "-o",
                out.to_str().unwrap(),
            ]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{what}: {err}");
            for line in err.lines().filter(|l| l.starts_with("iteration")) {
                let chaos: f64 = line
                    .split("chaos ")
                    .nth(1)
                    .and_then(|s| s.split(',').next())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(f64::NAN);
                let change: f64 = line
                    .split("change ")
                    .nth(1)
                    .and_then(|s| s.split(',').next())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(f64::NAN);
                assert!(
                    (0.0..=1.0).contains(&chaos) && (0.0..=2.0).contains(&change),
                    "{what}: {line}"
                );
            }
            let chaos: f64 = summary_field(&err, "chaos ").parse().unwrap();
            assert!((0.0..=1.0).contains(&chaos), "{what}: {err}");
            let got = partition(&std::fs::read_to_string(&out).unwrap());
            let largest = got.iter().map(Vec::len).max().unwrap_or(0);
            assert_eq!(
                got.iter().map(Vec::len).sum::<usize>(),
                g.num_nodes(),
                "{what}: every node once"
            );
            // Before the fix: one cluster of 681 nodes. Measured after it: mcl 507 clusters,
            // largest 32 (mcl -I 20: 25); regularized 391, largest 98 (R-MCL's expansion by
            // M_G keeps larger clusters at every inflation: 101 at -I 6).
            let (most, least) = if expansion == "mcl" {
                (40, 450)
            } else {
                (120, 350)
            };
            assert!(
                got.len() >= least && largest <= most,
                "{what}: {} clusters, largest {largest}",
                got.len()
            );
            assert!(
                got == want,
                "{what}: {} clusters, the reference {}",
                got.len(),
                want.len()
            );
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `--from` clusters that overlap are refused, naming the node; nodes in no cluster are
/// counted in a warning and scored as singletons; complexes sharing no label with the
/// network are refused before any work; the report gives the file's counts beside the
/// matched fraction's denominator.
#[test]
fn scoring_refuses_what_it_cannot_score() {
    let d = dir("scoring");
    let net = network(&d);
    let n = net.to_str().unwrap();
    let cx = d.join("complexes.txt");
    // Three complexes of size >= 3 in the file; the third keeps only one member in the
    // network; one of size 2.
    std::fs::write(
        &cx,
        "alpha beta gamma\ndelta epsilon zeta\nalpha foo bar\nbeta gamma\n",
    )
    .unwrap();
    let c = cx.to_str().unwrap();
    let from = d.join("from.txt");
    let f = from.to_str().unwrap();

    std::fs::write(&from, "alpha\tbeta\tgamma\ngamma\tdelta\n").unwrap();
    let o = trident(&["cluster", n, "--eval", c, "--from", f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "overlap accepted: {err}");
    assert!(
        err.contains("node gamma is in cluster 1 and in cluster 2"),
        "{err}"
    );
    assert!(err.contains("from.txt"), "{err}");

    std::fs::write(&from, "alpha\tbeta\tgamma\ndelta\tepsilon\n").unwrap();
    let out = d.join("scored.txt");
    let o = trident(&[
        "cluster",
        n,
        "--eval",
        c,
        "--from",
        f,
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: 1 of the network's 6 nodes are in no cluster")
            && err.contains("zeta"),
        "{err}"
    );
    assert!(
        err.contains(
            "matched:     1/2 complexes with >= 3 members in the network (0.5000); the file \
             has 4 complexes, 3 of size >= 3"
        ),
        "{err}"
    );
    assert_eq!(
        partition(&std::fs::read_to_string(&out).unwrap()),
        partition("alpha\tbeta\tgamma\ndelta\tepsilon\nzeta\n")
    );

    std::fs::write(&cx, "YAL001C YAL002W YAL003W\n").unwrap();
    let o = trident(&["cluster", n, "--backend", "cpu", "--eval", c]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("share no label") && err.contains("complexes.txt"),
        "{err}"
    );
    assert!(
        !err.contains("iteration"),
        "clustered before refusing: {err}"
    );

    // CYC2008 on collins2007: 408 complexes, 236 of size >= 3 in the file (fewer in the
    // network); scored from a partition of singletons, so nothing is clustered.
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data");
    let single = d.join("singletons.txt");
    std::fs::write(&single, "").unwrap();
    let o = trident(&[
        "cluster",
        data.join("collins2007.txt").to_str().unwrap(),
        "--eval",
        data.join("CYC2008_complexes.txt").to_str().unwrap(),
        "--from",
        single.to_str().unwrap(),
        "-o",
        d.join("s.out").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("matched:     0/"), "{err}");
    assert!(
        err.contains("the file has 408 complexes, 236 of size >= 3"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).ok();
}

/// A METIS file (detected from its content): two disjoint triangles {1,2,3} and {4,5,6} with
/// edge weights (fmt 1); nodes are printed as the file's 1-based vertex ids.
#[test]
fn clusters_of_a_metis_file() {
    let d = dir("metis");
    let p = d.join("g.graph");
    std::fs::write(
        &p,
        "6 6 1\n2 1 3 1\n1 1 3 1\n1 1 2 1\n5 1 6 1\n4 1 6 1\n4 1 5 1\n",
    )
    .unwrap();
    let out = d.join("clusters.txt");
    let o = trident(&[
        "cluster",
        p.to_str().unwrap(),
        "--backend",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        sorted_clusters(&text),
        [vec!["1", "2", "3"], vec!["4", "5", "6"]],
        "{text}"
    );
}

#[test]
fn mlrmcl_variant_single_and_multi_level_on_a_metis_file() {
    // MLR-MCL's own input: two triangles joined by the edge 3-4.
    let d = dir("mlrmcl");
    let p = d.join("g.graph");
    std::fs::write(&p, "6 7\n2 3\n1 3\n1 2 4\n3 5 6\n4 6\n4 5\n").unwrap();
    for coarsen in ["0", "2"] {
        let out = d.join(format!("clusters_{coarsen}.txt"));
        let o = trident(&[
            "cluster",
            p.to_str().unwrap(),
            "--backend",
            "cpu",
            "--variant",
            "mlrmcl",
            "--coarsen-to",
            coarsen,
            "-o",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            sorted_clusters(&text),
            [vec!["1", "2", "3"], vec!["4", "5", "6"]],
            "coarsen to {coarsen}: {text}"
        );
        // The multi-level run names its levels, and its progress lines the coarse ones.
        assert_eq!(
            coarsen == "2",
            err.contains(" levels (coarsening "),
            "{err}"
        );
        assert_eq!(coarsen == "2", err.contains("(level 1)"), "{err}");
    }
}

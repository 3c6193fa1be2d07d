//! `mpirun -np N trident triangles|cluster …` (the `mpi` feature): at 1 to 4 ranks, on the
//! CPU backend and on OpenCL (PoCL in CI), every shared graph gives the count of `graphs.tsv`
//! and byte for byte the per-vertex file of one process, under both layouts; `cluster` writes
//! byte for byte one process's clusters on the shared PPI networks and a planted network,
//! with both R-MCL variants (MLR-MCL multi-level too); a rank that fails ends the job with
//! its message, quickly; `--layout` without mpirun is refused.
//!
//! CI sets `REQUIRE_MPI=1` (`cargo xtask test`), under which a build without the `mpi`
//! feature or a machine without `mpirun` fails instead of skipping.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn require_mpi() -> bool {
    std::env::var("REQUIRE_MPI").is_ok_and(|v| v == "1")
}

#[cfg(not(feature = "mpi"))]
#[test]
fn built_with_mpi() {
    assert!(
        !require_mpi(),
        "REQUIRE_MPI=1, but trident-cli was built without its `mpi` feature"
    );
    eprintln!("skipped: trident-cli built without the `mpi` feature");
}

/// `mpirun`, or `None` after saying why (a failure under `REQUIRE_MPI=1`).
fn mpirun() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("mpirun"))
            .find(|f| f.is_file())
    });
    if found.is_none() {
        assert!(!require_mpi(), "REQUIRE_MPI=1, but no mpirun on PATH");
        eprintln!("skipped: no mpirun on PATH");
    }
    found
}

/// One `mpirun` at a time: the jobs of this file's tests would otherwise share this
/// machine's few cores (and its shared memory) many times over.
static ONE_JOB: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cores this process may run on (as many as the ranks of an unbound `mpirun`).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// Runs `trident args` on `np` ranks, killed after `limit`.
fn run_np(mpirun: &Path, np: usize, args: &[&str], limit: Duration) -> (Output, Duration) {
    run_np_env(mpirun, np, args, limit, &[])
}

/// [`run_np`] with more environment variables.
fn run_np_env(
    mpirun: &Path,
    np: usize,
    args: &[&str],
    limit: Duration,
    env: &[(&str, &str)],
) -> (Output, Duration) {
    let np = np.to_string();
    let line: Vec<&str> = ["-np", np.as_str(), BIN]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    run_mpirun(mpirun, &line, limit, env)
}

/// Runs `mpirun --oversubscribe line…` (one program, or several separated by `:`), killed
/// after `limit`, one job at a time.
fn run_mpirun(
    mpirun: &Path,
    line: &[&str],
    limit: Duration,
    env: &[(&str, &str)],
) -> (Output, Duration) {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let t = Instant::now();
    let mut child = Command::new(mpirun)
        .arg("--oversubscribe")
        .args(line)
        .envs(env.iter().copied())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl", "self,vader")
        .env("RAYON_NUM_THREADS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    while child.try_wait().expect("wait for mpirun").is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("mpirun output");
            panic!(
                "mpirun {line:?} still running after {limit:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().expect("mpirun output");
    (o, t.elapsed())
}

fn count(o: &Output) -> Option<u64> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("triangles:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

fn data_dir() -> Option<PathBuf> {
    let d = trident_core::testing::data_dir_or_skip()?;
    Some(d)
}

fn tmp(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-mpi-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every shared graph on `backend`: `layouts(np, k)` says which layouts graph `k` runs at
/// `np` ranks.
/// The text between `after` and the next `until` on the first line of `text` that starts
/// with `line`, parsed.
fn field<T: std::str::FromStr>(text: &str, line: &str, after: &str, until: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    let l = text
        .lines()
        .find(|l| l.starts_with(line))
        .unwrap_or_else(|| panic!("no line {line:?} in {text}"));
    let rest = &l[l.find(after).unwrap_or_else(|| panic!("{after:?} in {l}")) + after.len()..];
    let end = rest
        .find(until)
        .unwrap_or_else(|| panic!("{until:?} in {l}"));
    rest[..end].trim().parse().unwrap()
}

/// The rank lines, gathered from every rank: each oriented edge is counted by exactly one
/// rank, so the counted edges add up to the graph's edges and the rows' ranges tile the
/// nodes (a gather that mixed up the ranks' parts, as an empty part once did, breaks both).
fn rank_lines_tile(stdout: &str, np: usize, what: &str) {
    let edges: u64 = field(stdout, "graph:", " nodes, ", " edges");
    let nodes: u64 = field(stdout, "graph:", "graph:", " nodes");
    let (mut counted, mut next) = (0u64, 0u64);
    for r in 0..np {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("rank {r}:")))
            .unwrap_or_else(|| panic!("{what}: no line for rank {r}"));
        counted += field::<u64>(line, "", "counts ", " in ");
        let rows = field::<String>(line, "", "rows ", ",");
        let (a, b) = rows.split_once("..").expect("rows a..b");
        assert_eq!(a.parse::<u64>().unwrap(), next, "{what}: {line}");
        next = b.parse().unwrap();
    }
    assert_eq!(
        (counted, next),
        (edges, nodes),
        "{what}: rank lines\n{stdout}"
    );
}

/// More ranks than rows with edges: some ranks own no rows and send empty parts to every
/// gather (MPI once delivered a stray byte of such a part to the next gather), at every
/// layout; the count, and the rank lines, are still right.
#[cfg(feature = "mpi")]
#[test]
fn ranks_without_rows() {
    let Some(mpirun) = mpirun() else {
        return;
    };
    let out = tmp("empty-ranks");
    let path = out.join("tiny.el");
    // One triangle and a pendant edge: two rows with out-edges, four ranks.
    std::fs::write(&path, "0 1\n1 2\n0 2\n2 3\n").unwrap();
    for layout in ["replicate", "partition"] {
        let args = [
            "triangles",
            path.to_str().unwrap(),
            "--backend",
            "cpu",
            "--layout",
            layout,
        ];
        let (o, _) = run_np(&mpirun, 4, &args, Duration::from_secs(60));
        let stdout = String::from_utf8_lossy(&o.stdout);
        let what = format!("tiny graph, 4 ranks, {layout}");
        assert!(
            o.status.success(),
            "{what}: {}\n{stdout}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(count(&o), Some(1), "{what}");
        assert!(
            stdout.contains("counts 0 in"),
            "{what}: a rank without rows\n{stdout}"
        );
        rank_lines_tile(&stdout, 4, &what);
    }
    std::fs::remove_dir_all(&out).ok();
}

/// Writes a planted network to `path` (`trident generate planted` with `args`).
#[cfg(feature = "mpi")]
fn generate_planted(path: &Path, args: &[&str]) {
    let o = Command::new(BIN)
        .args(["generate", "planted"])
        .args(args)
        .arg("-o")
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The reads of `triangles` under mpirun, one per run in turn (each graph, rank count and
/// layout takes the next), so that every read meets every layout and rank count.
const READS: [&str; 3] = ["host", "ranges", "whole"];

fn shared_graphs_on(backend: &str, layouts: impl Fn(usize, usize) -> Vec<&'static str>) {
    let (Some(mpirun), Some(dir)) = (mpirun(), data_dir()) else {
        return;
    };
    let out = tmp(backend);
    let list = std::fs::read_to_string(dir.join("graphs.tsv")).unwrap();
    let mut runs = 0;
    for (k, line) in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file"))
        .enumerate()
    {
        let f: Vec<&str> = line.split('\t').collect();
        let (file, want): (&str, u64) = (f[0], f[3].parse().unwrap());
        let path = dir.join(file);
        let path = path.to_str().unwrap();
        let one = out.join("one.tsv");
        let o = Command::new(BIN)
            .args(["triangles", path, "--backend", "cpu", "--per-vertex"])
            .arg(&one)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(count(&o), Some(want), "{file}: one process");
        let one = std::fs::read(&one).unwrap();
        for np in 1..=4 {
            for layout in layouts(np, k) {
                let read = READS[runs % READS.len()];
                let per = out.join(format!("np{np}-{layout}.tsv"));
                let args = [
                    "triangles",
                    path,
                    "--backend",
                    backend,
                    "--layout",
                    layout,
                    "--read",
                    read,
                    "--per-vertex",
                    per.to_str().unwrap(),
                ];
                let (o, _) = run_np(&mpirun, np, &args, Duration::from_secs(120));
                let what = format!("{file}, {np} ranks, {layout}, --read {read}, {backend}");
                assert!(
                    o.status.success(),
                    "{what}: {}\n{}",
                    String::from_utf8_lossy(&o.stderr),
                    String::from_utf8_lossy(&o.stdout)
                );
                assert_eq!(count(&o), Some(want), "{what}");
                let stdout = String::from_utf8_lossy(&o.stdout);
                assert!(
                    stdout.contains(&format!("layout:        {layout}")),
                    "{what}"
                );
                assert_eq!(
                    stdout.matches("triangles:").count(),
                    1,
                    "{what}: rank 0 alone prints"
                );
                rank_lines_tile(&stdout, np, &what);
                // Read once per host where the host has several ranks (a rank alone reads
                // the file itself), in byte ranges where asked (edge lists and Matrix
                // Market; other files whole).
                let load = stdout
                    .lines()
                    .find(|l| l.starts_with("load:"))
                    .unwrap_or("");
                let says: &[&str] = match read {
                    "host" if np > 1 => &["once per host: by its first rank"],
                    "ranges" => &["each rank its byte range", "whole file on every rank"],
                    _ => &["whole file on every rank"],
                };
                assert!(
                    says.iter().any(|s| load.contains(s))
                        && (read != "host" || np == 1 || load.contains(&format!("its {np} ranks"))),
                    "{what}: {load}"
                );
                assert!(
                    std::fs::read(&per).unwrap() == one,
                    "{what}: per-vertex file differs"
                );
                std::fs::remove_file(&per).unwrap();
                runs += 1;
            }
        }
    }
    assert!(runs > 20, "{runs} runs");
    std::fs::remove_dir_all(&out).ok();
}

#[cfg(feature = "mpi")]
#[test]
fn shared_graphs_cpu_every_layout_and_rank_count() {
    shared_graphs_on("cpu", |_, _| vec!["replicate", "partition"]);
}

#[cfg(feature = "mpi")]
#[test]
fn shared_graphs_opencl_every_rank_count() {
    if trident_opencl_missing() {
        return;
    }
    // Each graph runs both layouts across its rank counts.
    shared_graphs_on("opencl", |np, k| {
        vec![if (np + k) % 2 == 0 {
            "replicate"
        } else {
            "partition"
        }]
    });
}

#[cfg(feature = "mpi")]
#[test]
fn shared_graphs_cuda_every_rank_count() {
    if trident_cuda_missing() {
        return;
    }
    // The ranks share out the host's GPUs (one GPU: all on it).
    shared_graphs_on("cuda", |np, k| {
        vec![if (np + k) % 2 == 1 {
            "replicate"
        } else {
            "partition"
        }]
    });
}

/// Whether `trident info` lists no available device of `backend` (`cuda` or `opencl`); a
/// miss is a failure where `needs` is required (REQUIRE_GPU=1 or REQUIRE_OPENCL=1).
#[cfg(feature = "mpi")]
fn device_missing(backend: &str, needs: trident_core::testing::Needs) -> bool {
    let o = Command::new(BIN).arg("info").output().unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    let missing = !s
        .lines()
        .any(|l| l.starts_with(&format!("{backend}:")) && l.contains("available:"));
    if missing {
        trident_core::testing::skip(needs, format!("no {backend} device"));
    }
    missing
}

#[cfg(feature = "mpi")]
fn trident_cuda_missing() -> bool {
    device_missing("cuda", trident_core::testing::Needs::Gpu)
}

#[cfg(feature = "mpi")]
fn trident_opencl_missing() -> bool {
    device_missing("opencl", trident_core::testing::Needs::OpenCl)
}

/// `cluster` at 1 to 4 ranks writes exactly one process's clusters: the shared PPI networks
/// and a planted network, Trident's variant and MLR-MCL's (single level, and multi-level on
/// the planted one).
#[cfg(feature = "mpi")]
#[test]
fn cluster_partitions_as_one_process() {
    let (Some(mpirun), Some(dir)) = (mpirun(), data_dir()) else {
        return;
    };
    let out = tmp("cluster");
    let planted = out.join("planted.el");
    generate_planted(
        &planted,
        &[
            "--nodes",
            "3000",
            "--communities",
            "60",
            "--degree",
            "12",
            "--seed",
            "5",
        ],
    );
    // The planted network with weights (each edge's, from its line), read in byte ranges
    // with them.
    let weighted = out.join("planted_w.el");
    let text = std::fs::read_to_string(&planted).unwrap();
    let lines: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match l.starts_with('#') {
            true => format!("{l}\n"),
            false => format!("{l} {}\n", (i * 37) % 11 + 1),
        })
        .collect();
    std::fs::write(&weighted, lines).unwrap();
    let mut cases: Vec<(PathBuf, Vec<&str>)> = Vec::new();
    for f in [
        "collins2007.txt",
        "gavin2006_socioaffinities_rescaled.txt",
        "human_string.txt",
        "krogan2006_core.txt",
        "krogan2006_extended.txt",
    ] {
        cases.push((dir.join("ppi").join(f), vec![]));
        cases.push((
            dir.join("ppi").join(f),
            vec!["--variant", "mlrmcl", "--coarsen-to", "0"],
        ));
    }
    cases.push((planted.clone(), vec![]));
    cases.push((
        planted.clone(),
        vec!["--variant", "mlrmcl", "--coarsen-to", "500"],
    ));
    cases.push((weighted.clone(), vec![]));
    let mut runs = 0;
    // The CPU's host pass on every case; the device pass on PoCL (its columns gathered, or
    // fetched, through the hosts) on a few, for CI's time.
    let pocl = [0, 10, 11, 12];
    let plan = cases
        .iter()
        .enumerate()
        .map(|(k, c)| ("cpu", k, c))
        .chain(pocl.iter().map(|&k| ("opencl", k, &cases[k])));
    for (backend, k, (path, extra)) in plan {
        let one = out.join("one.txt");
        let o = Command::new(BIN)
            .args([
                "cluster",
                path.to_str().unwrap(),
                "--backend",
                backend,
                "--quiet",
                "-o",
            ])
            .arg(&one)
            .args(extra)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{path:?} {extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let one = std::fs::read(&one).unwrap();
        // Every rank count for some cases, two for the others (CI's time).
        let nps: &[usize] = match (backend, k % 3) {
            ("cpu", 0) => &[1, 2, 3, 4],
            ("cpu", _) => &[2, 3],
            _ if k == 0 => &[2, 4],
            _ => &[3],
        };
        // The device pass in both layouts of M (the CPU has one).
        let layouts: &[&str] = if backend == "cpu" {
            &["auto"]
        } else {
            &["replicate", "partition"]
        };
        for (&np, &layout) in nps
            .iter()
            .flat_map(|np| layouts.iter().map(move |l| (np, l)))
        {
            let got = out.join(format!("np{np}.txt"));
            let mut args = vec![
                "cluster",
                path.to_str().unwrap(),
                "--backend",
                backend,
                "--quiet",
                "--layout",
                layout,
                "-o",
                got.to_str().unwrap(),
            ];
            args.extend(extra.iter().copied());
            // At 3 ranks the ranks read in byte ranges, at 2 each reads the whole file, else
            // (the default) the first rank reads it and shares it with the others.
            match np {
                3 => args.extend(["--read", "ranges"]),
                2 => args.extend(["--read", "whole"]),
                _ => {}
            }
            let (o, _) = run_np(&mpirun, np, &args, Duration::from_secs(300));
            let what = format!("{backend}: {path:?} {extra:?}, {np} ranks, layout {layout}");
            assert!(
                o.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                std::fs::read(&got).unwrap() == one,
                "{what}: clusters differ from one process"
            );
            // With --read ranges the networks are read in byte ranges: every one for
            // Trident's variant (the PPI networks' labels numbered over the ranks), the
            // planted ones (integer ids) for MLR-MCL too, whose ranks gather the parsed edges
            // (its labelled networks are read whole by every rank).
            let err = String::from_utf8_lossy(&o.stderr);
            let ranges = err.contains(&format!("in byte ranges by {np} ranks"));
            let integer_ids = *path == planted || *path == weighted;
            assert_eq!(
                ranges,
                np == 3 && (integer_ids || extra.is_empty()),
                "{what}: {err}"
            );
            // Trident's variant keeps only each rank's columns of it (MLR-MCL's levels need
            // the whole network).
            let columns = err.contains("each holding only its columns");
            assert_eq!(columns, ranges && extra.is_empty(), "{what}: {err}");
            // The default, with several ranks on this host: read once and shared, by the
            // first rank with every rank's thread (one each here), up to the cores.
            let shared = err.contains(&format!(
                "once per host: by its first rank ({} threads), shared with its {np} ranks",
                np.min(cores())
            ));
            assert_eq!(shared, np == 4, "{what}: {err}");
            std::fs::remove_file(&got).unwrap();
            runs += 1;
        }
    }
    assert!(runs >= 28, "{runs} runs");
    std::fs::remove_dir_all(&out).ok();
}

/// `cluster`'s read once per host where the host's shared memory has no room for the
/// network (Open MPI's window directory on a 1 MiB tmpfs): the ranks read it in byte ranges,
/// each keeping only its columns (`triangles`: every rank reads the file itself), say so,
/// and the clusters (and triangle counts) are one process's; with room, the graph is shared.
#[cfg(feature = "mpi")]
#[test]
fn a_host_without_shared_memory_reads_on_every_rank() {
    let Some(mpirun) = mpirun() else {
        return;
    };
    let d = tmp("noroom");
    let small = d.join("shm");
    std::fs::create_dir_all(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&small)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: no tmpfs could be mounted here (not root?)");
        return;
    }
    /// Unmounts the tmpfs however the test ends.
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(small.clone());
    let f = d.join("planted.el");
    // 300,000 edges: 2.4 MB of adjacency, 1.3 MB oriented (triangles), more than the 1 MiB
    // tmpfs holds.
    generate_planted(
        &f,
        &["--nodes", "6000", "--communities", "60", "--degree", "100"],
    );
    let one = d.join("one.txt");
    let file = f.to_str().unwrap();
    let o = Command::new(BIN)
        .args(["cluster", file, "--backend", "cpu", "--quiet", "-o"])
        .arg(&one)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let one = std::fs::read(&one).unwrap();
    let per = d.join("one.tsv");
    let one_count = Command::new(BIN)
        .args(["triangles", file, "--backend", "cpu", "--per-vertex"])
        .arg(&per)
        .output()
        .unwrap();
    assert!(one_count.status.success() && count(&one_count).is_some());
    let one_per = std::fs::read(&per).unwrap();
    let got = d.join("np.txt");
    let args = [
        "cluster",
        file,
        "--backend",
        "cpu",
        "--quiet",
        "-o",
        got.to_str().unwrap(),
    ];
    let shared = format!(
        "once per host: by its first rank ({} threads), shared with its 3 ranks",
        3.min(cores())
    );
    // Without room, `cluster` reads the network in byte ranges, each rank keeping only its
    // columns; `triangles` reads it on every rank.
    for (dir, says, triangles_say) in [
        (
            small.to_str().unwrap(),
            "in byte ranges by 3 ranks, each holding only its columns: a host's shared memory",
            "by every rank: the host's shared memory",
        ),
        ("/dev/shm", &*shared, &*shared),
    ] {
        let (o, _) = run_np_env(
            &mpirun,
            3,
            &args,
            Duration::from_secs(120),
            &[("OMPI_MCA_osc_sm_backing_directory", dir)],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && err.contains(says), "{dir}: {err}");
        assert!(
            std::fs::read(&got).unwrap() == one,
            "{dir}: clusters differ"
        );
        // `triangles` likewise: the count and per-vertex counts are one process's.
        let (o, _) = run_np_env(
            &mpirun,
            3,
            &[
                "triangles",
                file,
                "--backend",
                "cpu",
                "--per-vertex",
                got.to_str().unwrap(),
            ],
            Duration::from_secs(120),
            &[("OMPI_MCA_osc_sm_backing_directory", dir)],
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && out.contains(triangles_say) && count(&o) == count(&one_count),
            "{dir}: triangles: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            std::fs::read(&got).unwrap() == one_per,
            "{dir}: per-vertex counts differ"
        );
    }
    drop(_unmount);
    std::fs::remove_dir_all(&d).ok();
}

/// A rank whose backend cannot open (the last rank's device filter matches nothing; on a GPU
/// host, a lost device) ends the job with its message within seconds, whichever way
/// `cluster` and `triangles` read their input: it does not wait for the others in the read once per host
/// while they wait for it in the backends' agreement (a collective where NCCL is agreed on,
/// so the CUDA case is the one that would hang; it runs where there is a CUDA device).
#[cfg(feature = "mpi")]
fn backend_fails_on_the_last_rank(backend: &str, filter: &str, says: &str) {
    let Some(mpirun) = mpirun() else {
        return;
    };
    let d = tmp(&format!("backend-{backend}"));
    let f = d.join("planted.el");
    generate_planted(&f, &["--nodes", "3000", "--communities", "30"]);
    let file = f.to_str().unwrap();
    let reads = ["host", "whole", "ranges"];
    for (command, read) in ["cluster", "triangles"]
        .into_iter()
        .flat_map(|c| reads.map(|r| (c, r)))
    {
        let quiet: &[&str] = if command == "cluster" {
            &["--quiet"]
        } else {
            &[]
        };
        let args: Vec<&str> = [command, file, "--backend", backend, "--read", read]
            .into_iter()
            .chain(quiet.iter().copied())
            .collect();
        // Two ranks as usual, then a third whose device filter matches nothing.
        let line: Vec<&str> = ["-np", "2", BIN]
            .into_iter()
            .chain(args.iter().copied())
            .chain([":", "-np", "1", "env", filter, BIN])
            .chain(args.iter().copied())
            .collect();
        let (o, took) = run_mpirun(&mpirun, &line, Duration::from_secs(60), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        let what = format!("{command}, {backend}, --read {read}");
        assert!(!o.status.success(), "{what}: succeeded");
        assert!(
            err.contains("rank 2 of 3") && err.contains(says),
            "{what}: {err}"
        );
        assert!(took < Duration::from_secs(30), "{what}: took {took:?}");
    }
    std::fs::remove_dir_all(&d).ok();
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_whose_backend_fails_ends_the_job_opencl() {
    if trident_opencl_missing() {
        return;
    }
    backend_fails_on_the_last_rank(
        "opencl",
        "TRIDENT_OPENCL_PLATFORM=no such platform",
        "no such platform",
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_whose_backend_fails_ends_the_job_cuda() {
    if trident_cuda_missing() {
        return;
    }
    backend_fails_on_the_last_rank("cuda", "TRIDENT_CUDA_DEVICE=99", "99");
}

/// A rank whose device is too small for its part of R-MCL (the last rank's PoCL device
/// limited to 1 GiB with `POCL_MEMORY_LIMIT`, the others' as large as the machine's memory)
/// ends the job within seconds, with its own out-of-memory error (the bytes it needed and
/// its device) and a failure status, whichever layout is asked for: the plan is refused up
/// front on that rank, and the others, which could plan, stop without waiting for it and
/// leave the message to it.
#[cfg(feature = "mpi")]
#[test]
fn a_rank_out_of_device_memory_ends_the_job() {
    if trident_opencl_missing() {
        return;
    }
    let Some(mpirun) = mpirun() else {
        return;
    };
    let d = tmp("oom");
    let f = d.join("planted.el");
    // 40,000 nodes at K = 4096: a rank's part needs 3.2 GiB (partitioned) to 4.8 GiB
    // (replicated) of device memory.
    generate_planted(&f, &["--nodes", "40000", "--communities", "400"]);
    let file = f.to_str().unwrap();
    for layout in ["auto", "replicate", "partition"] {
        let args = [
            "cluster",
            file,
            "--backend",
            "opencl",
            "--max-per-column",
            "4096",
            "--layout",
            layout,
            "--quiet",
        ];
        let line: Vec<&str> = ["-np", "2", BIN]
            .into_iter()
            .chain(args)
            .chain([":", "-np", "1", "env", "POCL_MEMORY_LIMIT=1", BIN])
            .chain(args)
            .collect();
        let (o, took) = run_mpirun(&mpirun, &line, Duration::from_secs(60), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "--layout {layout}: succeeded");
        assert!(
            err.contains("error: rank 2 of 3")
                && err.contains("out of device memory")
                && err.contains("needs")
                && err.contains("1 GiB"),
            "--layout {layout}: {err}"
        );
        assert!(
            took < Duration::from_secs(30),
            "--layout {layout}: took {took:?}"
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

/// A rank that dies in the middle of the work (killed, as by the OOM killer, or gone with its
/// node) ends the job within seconds: the other ranks, waiting for it in a collective, do not
/// hang. The last of three ranks runs under a shell that kills it (SIGKILL) 3 s into a
/// clustering that takes over a minute here; the job must fail well before that, with no
/// output written.
#[cfg(feature = "mpi")]
#[test]
fn a_killed_rank_ends_the_job() {
    let Some(mpirun) = mpirun() else {
        return;
    };
    let d = tmp("killed");
    let f = d.join("planted.el");
    generate_planted(&f, &["--nodes", "200000", "--communities", "2000"]);
    let out = d.join("clusters.txt");
    let args = [
        "cluster",
        f.to_str().unwrap(),
        "--backend",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ];
    let killer = r#""$0" "$@" & p=$!; sleep 3; kill -9 $p; wait $p"#;
    let line: Vec<&str> = ["-np", "2", BIN]
        .into_iter()
        .chain(args)
        .chain([":", "-np", "1", "sh", "-c", killer, BIN])
        .chain(args)
        .collect();
    let (o, took) = run_mpirun(&mpirun, &line, Duration::from_secs(120), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "succeeded: {err}");
    assert!(took < Duration::from_secs(25), "took {took:?}: {err}");
    assert!(!out.exists(), "clusters written by a job with a dead rank");
    std::fs::remove_dir_all(&d).ok();
}

/// A bad line in the last rank's byte range (`--read ranges`, read in byte ranges): that
/// rank reports it (file and line) and the whole job ends, with a failure status, within
/// seconds: no rank waits for it. Read once per host (the default of `triangles` and
/// `cluster`), the first rank reports it while the others wait for its graph.
#[cfg(feature = "mpi")]
#[test]
fn a_failing_rank_ends_the_job() {
    let Some(mpirun) = mpirun() else {
        return;
    };
    let d = tmp("fail");
    let mut text = String::new();
    for i in 0..20_000 {
        text += &format!("{i} {}\n", (i * 7 + 1) % 20_000);
    }
    text += "12\n";
    for i in 0..50 {
        text += &format!("{i} {}\n", i + 3);
    }
    let f = d.join("bad.el");
    std::fs::write(&f, text).unwrap();
    let file = f.to_str().unwrap();
    let runs: [(usize, usize, &str, &[&str]); 5] = [
        (
            2,
            1,
            "triangles",
            &["triangles", file, "--backend", "cpu", "--read", "ranges"],
        ),
        (
            3,
            2,
            "triangles",
            &["triangles", file, "--backend", "cpu", "--read", "ranges"],
        ),
        (3, 0, "triangles", &["triangles", file, "--backend", "cpu"]),
        (
            3,
            2,
            "cluster",
            &["cluster", file, "--backend", "cpu", "--read", "ranges"],
        ),
        (3, 0, "cluster", &["cluster", file, "--backend", "cpu"]),
    ];
    for (np, failing, command, args) in runs {
        let (o, took) = run_np(&mpirun, np, args, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success(),
            "{command}, {np} ranks: succeeded on a bad line"
        );
        assert!(
            err.contains(&format!("rank {failing} of {np}")) && err.contains("bad.el:20001"),
            "{command}, {np} ranks: {err}"
        );
        assert!(
            took < Duration::from_secs(30),
            "{command}, {np} ranks: took {took:?}"
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `--layout` (and `cluster --read`) need a job of many processes.
#[test]
fn layout_without_mpirun_is_refused() {
    let d = tmp("layout");
    let f = d.join("g.el");
    std::fs::write(&f, "0 1\n1 2\n2 0\n").unwrap();
    let o = Command::new(BIN)
        .args(["triangles", f.to_str().unwrap(), "--layout", "partition"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--layout"));
    let o = Command::new(BIN)
        .args(["triangles", f.to_str().unwrap(), "--read", "host"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--read apply"));
    // `cluster --read` likewise.
    let o = Command::new(BIN)
        .args(["cluster", f.to_str().unwrap(), "--read", "ranges"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--read applies"));
    std::fs::remove_dir_all(&d).ok();
}

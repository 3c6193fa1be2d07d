//! Hostile input and hostile machines (issue 10): one test per class, each running the built
//! `trident` in a child process under an address-space limit (`ulimit -v`) and a time limit,
//! so that an abort, a runaway allocation or a hang fails the test, not the machine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_trident");
/// Address-space limit of the child, KiB (rayon threads and the binary fit comfortably).
const MEM_KB: u64 = 2 << 20;

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Runs `trident args…` under the memory limit, with `stdin` fed, killing it after `secs`.
fn run_with(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)], secs: u64) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {MEM_KB} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn trident");
    if let Some(data) = stdin {
        let mut w = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
    }
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "trident {args:?} did not finish in {secs} s\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    // A signal (abort, kill) is never an acceptable answer.
    assert!(
        out.status.code().is_some(),
        "trident {args:?} died from a signal: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn run(args: &[&str]) -> Output {
    run_with(args, None, &[], 60)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The value after `key:` in `trident stats` output.
fn field(out: &str, key: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim_start_matches(':').trim().to_string())
        .unwrap_or_else(|| panic!("no {key} in:\n{out}"))
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

fn fails_with(o: &Output, needles: &[&str]) {
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected an error; stdout: {}",
        stdout(o)
    );
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "stderr lacks {n:?}: {e}");
    }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn class1_colliding_labels_load_in_linear_time() {
    // Labels that all collide under a hasher without final mixing.
    let mut s = String::new();
    for i in 0..100_000 {
        s.push_str(&format!("v{i:07} v{:07}\n", (i + 1) % 100_000));
    }
    let f = write("labels.txt", s.as_bytes());
    // No wall-clock assertion (tests depend only on their inputs): quadratic time shows as
    // the run's hang guard running out, the answer is checked here.
    let out = ok(&run(&["stats", p(&f)]));
    assert_eq!(field(&out, "nodes"), "100000");
    assert_eq!(field(&out, "edges"), "100000");
}

#[test]
fn class2_pipes_and_dash_give_the_same_answer_as_the_file() {
    let mut s = String::new();
    for i in 0..300_000u64 {
        s.push_str(&format!("n{} n{}\n", i % 50_000, (i * 7919) % 50_001));
    }
    let f = write("pipe.txt", s.as_bytes());
    let from_file = ok(&run(&["stats", p(&f)]));
    let from_dash = ok(&run_with(&["stats", "-"], Some(s.as_bytes()), &[], 60));
    let from_dev = ok(&run_with(
        &["stats", "/dev/stdin"],
        Some(s.as_bytes()),
        &[],
        60,
    ));
    for k in ["nodes", "edges", "self-loops dropped"] {
        assert_eq!(field(&from_file, k), field(&from_dash, k), "{k}");
        assert_eq!(field(&from_file, k), field(&from_dev, k), "{k}");
    }
}

#[test]
fn class3_byte_order_mark_is_not_part_of_a_label() {
    let f = write("bom.txt", b"\xEF\xBB\xBF1 2\n2 3\n3 1\n");
    let out = ok(&run(&["stats", p(&f)]));
    assert_eq!(field(&out, "nodes"), "3");
    let f = write("bom_labels.txt", b"\xEF\xBB\xBFa b\nb c\n");
    assert_eq!(field(&ok(&run(&["stats", p(&f)])), "nodes"), "3");
}

#[test]
fn class4_values_that_overflow_are_errors() {
    let f = write("w.txt", b"1 2 1e39\n2 3 1\n");
    fails_with(
        &run(&["spmv", p(&f), "--backend", "cpu"]),
        &["w.txt", "not a finite f32"],
    );
    // f64 holds it.
    ok(&run(&[
        "spmv",
        p(&f),
        "--backend",
        "cpu",
        "--precision",
        "f64",
        "--repeat",
        "1",
    ]));
    let f = write(
        "dup.mtx",
        b"%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 3e38\n1 1 3e38\n2 2 1\n",
    );
    fails_with(
        &run(&["spmv", p(&f), "--backend", "cpu"]),
        &["dup.mtx", "(1, 1)", "not a finite f32"],
    );
    let f = write("nan.txt", b"1 2 nan\n");
    fails_with(
        &run(&["stats", p(&f)]),
        &["nan.txt:1", "not a finite number"],
    );
}

#[test]
fn class5_memory_bombs_are_clean_errors() {
    let f = write(
        "bomb.mtx",
        b"%%MatrixMarket matrix coordinate real general\n4294967294 4294967294 0\n",
    );
    fails_with(
        &run(&["spmv", p(&f), "--backend", "cpu"]),
        &["bomb.mtx", "cannot allocate", "GiB"],
    );
    fails_with(&run(&["stats", p(&f)]), &["bomb.mtx", "cannot allocate"]);
    // A star: ELLPACK-R padding of rows x the hub's degree.
    let mut s = String::new();
    for i in 1..70_000 {
        s.push_str(&format!("0 {i}\n"));
    }
    let f = write("star.txt", s.as_bytes());
    fails_with(
        &run(&["spmv", p(&f), "--backend", "cpu"]),
        &["star.txt", "cannot allocate", "ELLPACK-R"],
    );
    // Numeric flags are bounded.
    let small = write("small.txt", b"0 1\n1 2\n");
    let o = run(&["spmv", p(&small), "--repeat", "18446744073709551615"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // No line breaks: refused at the documented line limit, never buffered without end.
    let line = vec![b'7'; 3 << 20];
    fails_with(
        &run_with(&["stats", "-"], Some(&line), &[], 60),
        &["<stdin>:1", "line longer than the limit"],
    );
}

#[test]
fn class6_formats_are_told_from_content() {
    let mtx = b"%%MatrixMarket matrix coordinate pattern symmetric\n5 5 2\n2 1\n5 4\n";
    let f = write("matrix.txt", mtx);
    let out = ok(&run(&["stats", p(&f)]));
    assert_eq!(field(&out, "nodes"), "5");
    assert_eq!(field(&out, "edges"), "2");
    // gzip, whatever the name.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"1 2\n2 3\n3 1\n").unwrap();
    let f = write("edges.dat", &gz.finish().unwrap());
    assert_eq!(field(&ok(&run(&["stats", p(&f)])), "edges"), "3");
    // A .npy given to a graph command says what it is.
    let f = write(
        "a.txt",
        b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
    );
    fails_with(&run(&["stats", p(&f)]), &["a.txt", "NumPy .npy array"]);
    let f = write("z.txt", b"\x28\xb5\x2f\xfd\x00\x00");
    fails_with(&run(&["stats", p(&f)]), &["z.txt", "zstd"]);
}

#[test]
fn class7_messages_name_file_and_line() {
    let f = write("wide.txt", b"0 1\n1 99999999999\n");
    let o = run(&["stats", p(&f)]);
    // Auto mode compacts wide ids; the graph loads.
    ok(&o);
    let f = write("hdr.txt", b"source target\n1 2\n2 3\n");
    let o = run(&["stats", p(&f)]);
    let out = ok(&o);
    assert_eq!(field(&out, "nodes"), "3");
    assert!(
        stderr(&o).contains("hdr.txt:1: skipped the header line"),
        "{}",
        stderr(&o)
    );
    let f = write("bad.txt", b"1 2\n2 3\n3\n");
    fails_with(&run(&["stats", p(&f)]), &["bad.txt:3"]);
}

#[test]
fn class8_outputs_are_checked_first_and_never_an_input() {
    let f = write("in.txt", b"0 1\n1 2\n");
    let before = std::fs::read(&f).unwrap();
    fails_with(
        &run(&["spmv", p(&f), "--backend", "cpu", "--output", p(&f)]),
        &["refusing to overwrite an input"],
    );
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // An unwritable output is refused before any work (here: the input is missing too,
    // and the output error comes first).
    let o = run(&[
        "spmv",
        "/nonexistent/in.txt",
        "--backend",
        "cpu",
        "--output",
        "/nonexistent-dir/y.npy",
    ]);
    fails_with(&o, &["/nonexistent-dir/y.npy"]);
}

#[test]
fn starts_without_gpu_runtimes() {
    // The lazy-binding libraries load the runtimes on first use; naming missing files
    // stands for a machine with neither libcuda.so.1 nor libOpenCL.so.1.
    let env = [
        ("TRIDENT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"),
        ("TRIDENT_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1"),
    ];
    let o = run_with(&["info"], None, &env, 60);
    let out = ok(&o);
    assert!(out.contains("cpu:    available"), "{out}");
    if cfg!(feature = "cuda") {
        assert!(out.contains("cuda:   no device"), "{out}");
    }
    if cfg!(feature = "opencl") {
        assert!(out.contains("opencl: no device"), "{out}");
    }
    let f = write("cpu_job.txt", b"0 1\n1 2\n2 0\n");
    let out = ok(&run_with(&["stats", p(&f)], None, &env, 60));
    assert_eq!(field(&out, "edges"), "3");
    let out = ok(&run_with(&["spmv", p(&f), "--repeat", "1"], None, &env, 60));
    assert!(out.contains("backend: cpu"), "{out}");
    // And the binary does not ask the dynamic linker for them at all.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    if let Ok(r) = Command::new("readelf").args(["-d", BIN]).output() {
        let d = String::from_utf8_lossy(&r.stdout);
        assert!(!d.contains("libcuda") && !d.contains("libOpenCL"), "{d}");
    }
}

/// A decompression bomb (a small `.gz` of newlines) is refused once the decompressed input
/// passes the machine's input limit (half its memory; lowered here through the environment),
/// with a message, instead of growing until the process is killed.
#[test]
fn class5_gzip_bombs_stop_at_the_input_limit() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![b'\n'; 32 << 20]).unwrap();
    let f = write("bomb.gz", &gz.finish().unwrap());
    let o = run_with(
        &["stats", p(&f)],
        None,
        &[("TRIDENT_MAX_INPUT_BYTES", "8000000")],
        60,
    );
    fails_with(
        &o,
        &[
            "bomb.gz",
            "decompressed input is larger than",
            "TRIDENT_MAX_INPUT_BYTES",
        ],
    );
}

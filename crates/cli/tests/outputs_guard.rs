//! The `trident` command's shared mechanisms (issue 23), end to end on the built binary:
//! outputs checked before any work and never an input, written whole or not at all; a
//! checked standard output (a closed pipe ends quietly, a full disk is an error); bounded
//! numeric flags; negative numbers reaching the options' range checks; inputs read before
//! backends are probed; `--threads`; `matmul`'s element type following its inputs.
//!
//! Every case runs on the CPU backend with inputs of a few entries, and depends only on
//! them (no timing).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

/// A fresh folder for one test.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-guard-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn trident(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run trident")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 1 (an error, not a panic's 101 or a signal) with every needle on stderr.
fn fails_with(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected an error\nstdout: {}\nstderr: {e}",
        stdout(o)
    );
    assert!(!e.contains("panicked"), "{e}");
    for n in needles {
        assert!(e.contains(n), "stderr lacks {n:?}: {e}");
    }
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed ({}): {}", o.status, stderr(o));
    stdout(o)
}

/// A `.npy` file (version 1.0, C order) written here, independently of the library.
fn npy(path: &Path, rows: usize, cols: usize, vals: &[f64], f32: bool) {
    assert_eq!(vals.len(), rows * cols);
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}",
        if f32 { "<f4" } else { "<f8" }
    );
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    for &v in vals {
        if f32 {
            b.extend_from_slice(&(v as f32).to_le_bytes());
        } else {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, b).unwrap();
}

/// The `descr` and the f64 values of a `.npy` file written by `trident` (version 1.0, C
/// order), parsed here.
fn read_npy(path: &Path) -> (String, Vec<f64>) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    let descr = if header.contains("'<f8'") {
        "<f8"
    } else if header.contains("'<f4'") {
        "<f4"
    } else {
        panic!("{header}")
    };
    let data = &b[10 + hlen..];
    let vals = if descr == "<f8" {
        data.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    } else {
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect()
    };
    (descr.to_string(), vals)
}

/// A 4 x 3 matrix and a 3 x 2 one with entries no f32 holds exactly.
fn matrices(d: &Path) -> (PathBuf, PathBuf) {
    let a = d.join("a.npy");
    let b = d.join("b.npy");
    let av: Vec<f64> = (0..12).map(|i| 1.0 + (i as f64) / 3.0).collect();
    let bv: Vec<f64> = (0..6).map(|i| 0.1 * (i as f64) - 0.25).collect();
    npy(&a, 4, 3, &av, false);
    npy(&b, 3, 2, &bv, false);
    (a, b)
}

fn triangle_graph(d: &Path) -> PathBuf {
    let g = d.join("g.txt");
    std::fs::write(&g, "0 1\n1 2\n2 0\n2 3\n").unwrap();
    g
}

/// Every file in `d`, with its content.
fn snapshot(d: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let c = std::fs::read(&p).unwrap_or_default();
            (p, c)
        })
        .collect();
    v.sort();
    v
}

// ---- 1. Lost input and late failures -------------------------------------------------

#[test]
fn svd_never_overwrites_its_input_with_values_or_vectors() {
    let d = dir("svd-input");
    let (a, _) = matrices(&d);
    let before = snapshot(&d);
    for flag in ["-s", "--u", "--vt"] {
        fails_with(
            &trident(&["svd", p(&a), "--backend", "cpu", flag, p(&a)]),
            &["a.npy", "refusing to overwrite an input"],
        );
    }
    assert_eq!(snapshot(&d), before);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn matmul_never_overwrites_an_input_even_through_links() {
    let d = dir("matmul-input");
    let (a, b) = matrices(&d);
    let hard = d.join("hard.npy");
    std::fs::hard_link(&b, &hard).unwrap();
    let soft = d.join("soft.npy");
    std::os::unix::fs::symlink(&a, &soft).unwrap();
    let before = snapshot(&d);
    for out in [&a, &b, &hard, &soft] {
        fails_with(
            &trident(&["matmul", p(&a), p(&b), "--backend", "cpu", "-o", p(out)]),
            &["refusing to overwrite an input"],
        );
    }
    assert_eq!(snapshot(&d), before);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn triangles_never_overwrites_its_graph_with_per_vertex_counts() {
    let d = dir("triangles-input");
    let g = triangle_graph(&d);
    let before = snapshot(&d);
    fails_with(
        &trident(&[
            "triangles",
            p(&g),
            "--backend",
            "cpu",
            "--per-vertex",
            p(&g),
        ]),
        &["g.txt", "refusing to overwrite an input"],
    );
    assert_eq!(snapshot(&d), before);
    // Standard input read from the file is the file.
    let o = Command::new(BIN)
        .args(["triangles", "-", "--backend", "cpu", "--per-vertex", p(&g)])
        .stdin(std::fs::File::open(&g).unwrap())
        .output()
        .unwrap();
    fails_with(&o, &["refusing to overwrite an input"]);
    assert_eq!(snapshot(&d), before);
    std::fs::remove_dir_all(&d).ok();
}

/// An output that cannot be written fails the command before any other output is written.
#[test]
fn svd_checks_every_output_before_writing_any() {
    let d = dir("svd-late");
    let (a, _) = matrices(&d);
    let s = d.join("s.txt");
    let o = trident(&[
        "svd",
        p(&a),
        "--backend",
        "cpu",
        "-s",
        p(&s),
        "--u",
        "/nonexistent-trident-dir/u.npy",
    ]);
    fails_with(&o, &["/nonexistent-trident-dir/u.npy"]);
    assert!(!s.exists(), "the values were written before the failure");
    // And before any work: nothing about the matrix was printed.
    assert!(!stdout(&o).contains("matrix:"), "{}", stdout(&o));
    // An old file there keeps its content.
    std::fs::write(&s, "old\n").unwrap();
    let o = trident(&[
        "svd",
        p(&a),
        "--backend",
        "cpu",
        "-s",
        p(&s),
        "--vt",
        "/nonexistent-trident-dir/vt.npy",
    ]);
    fails_with(&o, &["/nonexistent-trident-dir/vt.npy"]);
    assert_eq!(std::fs::read_to_string(&s).unwrap(), "old\n");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn generate_checks_the_truth_file_before_writing_the_edges() {
    let d = dir("generate-late");
    let e = d.join("edges.txt");
    let args = |truth: &str| {
        trident(&[
            "generate",
            "planted",
            "--nodes",
            "20",
            "--communities",
            "2",
            "--degree",
            "4",
            "-o",
            p(&e),
            "--truth",
            truth,
        ])
    };
    fails_with(
        &args("/nonexistent-trident-dir/truth.txt"),
        &["/nonexistent-trident-dir/truth.txt"],
    );
    assert!(!e.exists(), "the edge list was written before the failure");
    // The two outputs the same file, spelt differently.
    let same = d.join(".").join("edges.txt");
    fails_with(&args(p(&same)), &["two outputs cannot be the same file"]);
    assert!(!e.exists());
    // Both written when both can be; no temporary file is left.
    let t = d.join("truth.txt");
    ok(&args(p(&t)));
    assert!(e.exists() && t.exists());
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|x| x.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn two_outputs_of_one_command_cannot_be_the_same_file() {
    let d = dir("two-outputs");
    let (a, _) = matrices(&d);
    let s = d.join("s.txt");
    let same = d.join(".").join("s.txt");
    fails_with(
        &trident(&[
            "svd",
            p(&a),
            "--backend",
            "cpu",
            "-s",
            p(&s),
            "--u",
            p(&same),
        ]),
        &["two outputs cannot be the same file"],
    );
    assert!(!s.exists());
    std::fs::remove_dir_all(&d).ok();
}

/// Runs `trident args…` with writes limited to a few KiB (`ulimit -f`, SIGXFSZ ignored, so
/// a write past the limit fails with EFBIG): a disk that fills up in the middle of a write.
fn trident_small_disk(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4 && exec \"$0\" \"$@\"")
        .arg(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run trident")
}

/// A write that fails half-way (a full disk) leaves every old output as it was and no
/// half-written or temporary file: the values file that fitted is not put in place either.
#[test]
fn a_write_failing_half_way_clobbers_nothing() {
    let d = dir("half-written");
    let a = d.join("a.npy");
    // 40 x 30: U (thin) is 9,600 bytes, past the limit; the 30 values fit.
    let vals: Vec<f64> = (0..1200)
        .map(|i| ((i * 7919 % 1000) as f64) / 500.0 - 1.0)
        .collect();
    npy(&a, 40, 30, &vals, false);
    let s = d.join("s.txt");
    let u = d.join("u.npy");
    std::fs::write(&s, "old s\n").unwrap();
    std::fs::write(&u, "old u\n").unwrap();
    let before = snapshot(&d);
    let o = trident_small_disk(&["svd", p(&a), "--backend", "cpu", "-s", p(&s), "--u", p(&u)]);
    fails_with(&o, &["u.npy"]);
    assert_eq!(snapshot(&d), before, "{}", stderr(&o));
    // matmul's product (40 x 40, 12,800 bytes), the same.
    let b = d.join("b.npy");
    npy(&b, 30, 40, &vals, false);
    let c = d.join("c.npy");
    std::fs::write(&c, "old c\n").unwrap();
    let before = snapshot(&d);
    let o = trident_small_disk(&["matmul", p(&a), p(&b), "--backend", "cpu", "-o", p(&c)]);
    fails_with(&o, &["c.npy"]);
    assert_eq!(snapshot(&d), before, "{}", stderr(&o));
    std::fs::remove_dir_all(&d).ok();
}

/// A failure after the work (here: the product overflows f32) leaves an existing output
/// file as it was.
#[test]
fn a_failed_matmul_leaves_the_old_output() {
    let d = dir("matmul-late");
    let a = d.join("big.npy");
    npy(&a, 2, 2, &[1e30; 4], false);
    let c = d.join("c.npy");
    std::fs::write(&c, "old").unwrap();
    let o = trident(&[
        "matmul",
        p(&a),
        p(&a),
        "--backend",
        "cpu",
        "--precision",
        "f32",
        "-o",
        p(&c),
    ]);
    fails_with(&o, &["overflows f32"]);
    assert!(
        !stderr(&o).contains("wrong beyond the matmul tolerance"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&c).unwrap(), "old");
    std::fs::remove_dir_all(&d).ok();
}

// ---- 2. Panics --------------------------------------------------------------------------

#[test]
fn an_enormous_repeat_is_a_usage_error_not_a_panic() {
    let d = dir("repeat");
    let (a, b) = matrices(&d);
    for args in [
        vec!["svd", p(&a), "--backend", "cpu"],
        vec!["matmul", p(&a), p(&b), "--backend", "cpu"],
    ] {
        let mut args = args.clone();
        args.extend(["--repeat", "18446744073709551615"]);
        let o = trident(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("--repeat") && !e.contains("panicked"), "{e}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// The printing commands, each with small inputs on the CPU.
fn printing_commands(d: &Path) -> Vec<Vec<String>> {
    let (a, b) = matrices(d);
    let g = triangle_graph(d);
    let k = d.join("k.txt");
    [
        vec!["triangles", p(&g), "--backend", "cpu"],
        vec!["stats", p(&g)],
        vec!["svd", p(&a), "--backend", "cpu"],
        vec!["matmul", p(&a), p(&b), "--backend", "cpu"],
        vec!["spmv", p(&g), "--backend", "cpu", "--repeat", "1"],
        vec!["generate", "kronecker", "--scale", "3", "-o", p(&k)],
        vec!["info", "--backend", "cpu"],
        vec!["cluster", p(&g), "--backend", "cpu", "--quiet"],
        vec!["--help"],
        vec!["svd", "--help"],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect()
}

/// Standard output is a pipe whose reader has already gone: every write is EPIPE.
#[test]
fn a_closed_stdout_ends_quietly() {
    let d = dir("epipe");
    for args in printing_commands(&d) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            matches!(o.status.code(), Some(0) | Some(141)),
            "{args:?}: {}\n{e}",
            o.status
        );
        assert!(
            !e.contains("panicked") && !e.contains("error"),
            "{args:?}: {e}"
        );
    }
    // Standard error on the same closed pipe (`2>&1 | head -1`): no panic either.
    for args in printing_commands(&d) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .status()
            .unwrap();
        assert!(matches!(o.code(), Some(0) | Some(141)), "{args:?}: {o}");
    }
    // The work is still done: generate's file is written.
    assert!(d.join("k.txt").exists());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_full_stdout_is_an_error_naming_it() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let d = dir("enospc");
    for args in printing_commands(&d) {
        let o = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        fails_with(&o, &["<stdout>", "No space left on device"]);
    }
    std::fs::remove_dir_all(&d).ok();
}

// ---- 3. Messages and conventions --------------------------------------------------------

#[test]
fn negative_numbers_reach_the_range_checks() {
    let d = dir("negative");
    let g = triangle_graph(&d);
    let o = trident(&[
        "cluster",
        p(&g),
        "--backend",
        "cpu",
        "--mass-penalty",
        "-0.5",
    ]);
    fails_with(&o, &["mass penalty must be >= 0, got -0.5"]);
    let o = trident(&[
        "cluster",
        p(&g),
        "--backend",
        "cpu",
        "--variant",
        "mlrmcl",
        "--balance",
        "-0.5",
    ]);
    fails_with(&o, &["balance must be >= 0, got -0.5"]);
    let o = trident(&["cluster", p(&g), "--backend", "cpu", "-I", "-2"]);
    fails_with(&o, &["inflation must be > 1, got -2"]);
    let o = trident(&[
        "generate",
        "planted",
        "--nodes",
        "20",
        "--communities",
        "2",
        "--mixing",
        "-0.1",
        "-o",
        p(&d.join("e.txt")),
    ]);
    fails_with(&o, &["mixing must be in [0, 1], got -0.1"]);
    // An integer option says what it wants, not "unexpected argument".
    let o = trident(&["triangles", p(&g), "--backend", "cpu", "--repeat", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !stderr(&o).contains("unexpected argument"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&d).ok();
}

/// With `--backend auto` and no CUDA library, auto's fallback remarks would print; an input
/// error comes alone.
#[test]
fn input_errors_come_before_backend_probing() {
    let d = dir("probe-order");
    let (a, _) = matrices(&d);
    let missing = d.join("missing.npy");
    let missing_g = d.join("missing.txt");
    for args in [
        vec!["svd", p(&missing)],
        vec!["matmul", p(&missing), p(&a)],
        vec!["matmul", p(&a), p(&missing)],
        vec!["triangles", p(&missing_g)],
        vec!["spmv", p(&missing_g)],
        vec!["cluster", p(&missing_g)],
    ] {
        let o = Command::new(BIN)
            .args(&args)
            .env("TRIDENT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
            .env("TRIDENT_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1")
            .output()
            .unwrap();
        fails_with(&o, &["missing"]);
        assert!(
            !stderr(&o).contains("auto:") && !stdout(&o).contains("backend:"),
            "{args:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_help_names_planted_and_the_thread_count() {
    let help = ok(&trident(&["--help"]));
    assert!(help.contains("generate planted"), "{help}");
    assert!(help.contains("--threads"), "{help}");
    assert!(help.contains("RAYON_NUM_THREADS"), "{help}");
}

#[test]
fn threads_sets_the_pool() {
    let d = dir("threads");
    let g = triangle_graph(&d);
    for n in ["1", "3"] {
        let out = ok(&trident(&[
            "--threads",
            n,
            "spmv",
            p(&g),
            "--backend",
            "cpu",
            "--repeat",
            "1",
        ]));
        assert!(out.contains(&format!("cpu [{n} threads")), "{out}");
        // Also after the subcommand (a global option).
        let out = ok(&trident(&["stats", p(&g), "--threads", n]));
        assert!(out.contains("nodes:"), "{out}");
    }
    let o = trident(&["--threads", "0", "stats", p(&g)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    std::fs::remove_dir_all(&d).ok();
}

/// f64 inputs give an f64 product (named in the summary and written as `<f8`), equal to a
/// plain f64 triple loop to f64 accuracy, which f32 could not reach; f32 inputs stay f32;
/// `--precision` overrides.
#[test]
fn matmul_keeps_the_inputs_precision_and_says_so() {
    let d = dir("matmul-precision");
    let (a, b) = matrices(&d);
    let c = d.join("c.npy");
    let out = ok(&trident(&[
        "matmul",
        p(&a),
        p(&b),
        "--backend",
        "cpu",
        "-o",
        p(&c),
    ]));
    assert!(out.contains("f64"), "{out}");
    let (descr, got) = read_npy(&c);
    assert_eq!(descr, "<f8");
    let av: Vec<f64> = (0..12).map(|i| 1.0 + (i as f64) / 3.0).collect();
    let bv: Vec<f64> = (0..6).map(|i| 0.1 * (i as f64) - 0.25).collect();
    for i in 0..4 {
        for j in 0..2 {
            let want: f64 = (0..3).map(|k| av[i * 3 + k] * bv[k * 2 + j]).sum();
            let g = got[i * 2 + j];
            assert!(
                (g - want).abs() <= 1e-13 * want.abs().max(1.0),
                "{g} vs {want}"
            );
        }
    }
    // f32 inputs: an f32 product.
    let af = d.join("af.npy");
    let bf = d.join("bf.npy");
    npy(&af, 4, 3, &av, true);
    npy(&bf, 3, 2, &bv, true);
    let out = ok(&trident(&[
        "matmul",
        p(&af),
        p(&bf),
        "--backend",
        "cpu",
        "-o",
        p(&c),
    ]));
    assert!(out.contains("f32"), "{out}");
    assert_eq!(read_npy(&c).0, "<f4");
    // --precision f32 on f64 inputs.
    let out = ok(&trident(&[
        "matmul",
        p(&a),
        p(&b),
        "--backend",
        "cpu",
        "--precision",
        "f32",
        "-o",
        p(&c),
    ]));
    assert!(out.contains("f32"), "{out}");
    assert_eq!(read_npy(&c).0, "<f4");
    std::fs::remove_dir_all(&d).ok();
}

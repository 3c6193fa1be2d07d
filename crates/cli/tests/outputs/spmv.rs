//! `spmv`: y = A·1 against the row sums of the input read here.

use super::*;

/// Runs `spmv --output` on `path` and compares y with the row sums (x = 1) of `entries`,
/// within 1000 ε Σ_j |a_ij| per row. On OpenCL it runs again in 3 slot passes (the
/// accumulating launches), through `--passes 3`.
fn check_spmv(
    path: &Path,
    (rows, entries): (usize, &[(usize, usize, f64)]),
    backend: &str,
    out: &Path,
) {
    check_spmv_passes(path, (rows, entries), backend, None, out);
    if backend == "opencl" {
        check_spmv_passes(path, (rows, entries), backend, Some("3"), out);
    }
}

fn check_spmv_passes(
    path: &Path,
    (rows, entries): (usize, &[(usize, usize, f64)]),
    backend: &str,
    passes: Option<&str>,
    out: &Path,
) {
    let mut want = vec![0.0; rows];
    let mut mag = vec![0.0; rows];
    for &(i, _, v) in entries {
        want[i] += v;
        mag[i] += f64::abs(v);
    }
    for (prec, dtype, eps) in [
        ("f32", "<f4", f32::EPSILON as f64),
        ("f64", "<f8", f64::EPSILON),
    ] {
        std::fs::remove_file(out).ok();
        let what = format!(
            "spmv {} --backend {backend} --precision {prec} --passes {passes:?}",
            path.display()
        );
        let o = Command::new(BIN)
            .args([
                "spmv",
                p(path),
                "--backend",
                backend,
                "--precision",
                prec,
                "--repeat",
                "1",
                "--output",
                p(out),
            ])
            .args(passes.map(|n| ["--passes", n]).into_iter().flatten())
            .output()
            .expect("run trident");
        assert!(
            o.status.success(),
            "{what} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let (descr, shape, y) = read_npy(out);
        assert!(
            shape == [rows] || shape == [rows, 1],
            "{what}: shape {shape:?}, {rows} rows"
        );
        assert_eq!(descr, dtype, "{what}: dtype");
        for i in 0..rows {
            assert!(
                (y[i] - want[i]).abs() <= 1000.0 * eps * mag[i],
                "{what}: y[{i}] = {} but the row sum of the file is {}",
                y[i],
                want[i]
            );
        }
    }
}

/// Writes a coordinate Matrix Market file from 1-based `(i, j, v)`.
fn mtx_text(header: &str, r: usize, c: usize, e: &[(usize, usize, f64)]) -> String {
    let mut s = format!(
        "%%MatrixMarket matrix coordinate {header}\n% test\n{r} {c} {}\n",
        e.len()
    );
    for (i, j, v) in e {
        if header.starts_with("pattern") {
            s.push_str(&format!("{i} {j}\n"));
        } else if header.starts_with("integer") {
            s.push_str(&format!("{i} {j} {}\n", *v as i64));
        } else {
            s.push_str(&format!("{i} {j} {v:e}\n"));
        }
    }
    s
}

#[test]
fn spmv_output_matches_the_row_sums_of_the_file() {
    let d = dir("spmv");
    let mut r = testing::xorshift(0x5b_0001);
    let mut u = testing::unit_stream(0x5b_0002);
    let mut files: Vec<(String, String)> = Vec::new();
    // General 64x64: ~10 % dense, one long row, one empty row, mixed signs and scales.
    let mut e = BTreeMap::new();
    for _ in 0..400 {
        let (i, j) = ((r() % 64) as usize + 1, (r() % 64) as usize + 1);
        if i != 7 {
            e.insert((i, j), u() * 10f64.powi((r() % 5) as i32 - 2));
        }
    }
    for j in 1..=64 {
        e.insert((3, j), u());
    }
    let general: Vec<(usize, usize, f64)> = e.iter().map(|(&(i, j), &v)| (i, j, v)).collect();
    files.push((
        "general.mtx".into(),
        mtx_text("real general", 64, 64, &general),
    ));
    // Not square: 50 x 70.
    let wide: Vec<(usize, usize, f64)> = (0..300)
        .map(|_| (((r() % 50) as usize + 1, (r() % 70) as usize + 1), u()))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .map(|((i, j), v)| (i, j, v))
        .collect();
    files.push(("wide.mtx".into(), mtx_text("real general", 50, 70, &wide)));
    // Symmetric and skew-symmetric: the lower triangle stored.
    let lower: Vec<(usize, usize, f64)> = general
        .iter()
        .filter(|&&(i, j, _)| i >= j)
        .copied()
        .collect();
    files.push(("sym.mtx".into(), mtx_text("real symmetric", 64, 64, &lower)));
    let strict: Vec<_> = lower.iter().filter(|&&(i, j, _)| i > j).copied().collect();
    files.push((
        "skew.mtx".into(),
        mtx_text("real skew-symmetric", 64, 64, &strict),
    ));
    let ints: Vec<_> = lower
        .iter()
        .map(|&(i, j, v)| (i, j, (v * 100.0).round()))
        .collect();
    files.push((
        "int.mtx".into(),
        mtx_text("integer symmetric", 64, 64, &ints),
    ));
    files.push((
        "pattern.mtx".into(),
        mtx_text("pattern general", 64, 64, &general),
    ));
    // Duplicate entries (summed, as Matrix Market readers do) and empty trailing rows.
    files.push((
        "dup.mtx".into(),
        "%%MatrixMarket matrix coordinate real general\n5 4 4\n1 1 1.0\n1 1 2.0\n\
         2 3 4.0\n3 2 1.5\n"
            .into(),
    ));
    // A dense array, column-major (a row-major reading transposes A: row sums become
    // column sums).
    let mut arr = String::from("%%MatrixMarket matrix array real general\n20 30\n");
    for _ in 0..20 * 30 {
        arr.push_str(&format!("{:e}\n", u()));
    }
    files.push(("array.mtx".into(), arr));
    // Symmetric and skew-symmetric arrays: the lower triangle, column by column.
    for (sym, first) in [("symmetric", 0), ("skew-symmetric", 1)] {
        let mut arr = format!("%%MatrixMarket matrix array real {sym}\n12 12\n");
        for j in 0..12 {
            for _ in j + first..12 {
                arr.push_str(&format!("{:e}\n", u()));
            }
        }
        files.push((format!("array-{sym}.mtx"), arr));
    }
    let out = d.join("y.npy");
    for (name, text) in &files {
        let path = d.join(name);
        std::fs::write(&path, text).unwrap();
        let (rows, _, entries) = parse_mtx(text);
        for b in backends() {
            check_spmv(&path, (rows, &entries), b, &out);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// An edge list is read as its graph's adjacency matrix (y = A·1: the degrees, or the sums
/// of the edge weights), a `.npy` as a dense matrix. The ids 0..n appear in increasing
/// order (a path first), so the rows of y are the file's node numbers whichever way the
/// reader numbers nodes.
#[test]
fn spmv_of_edge_lists_and_npy_matches_the_row_sums() {
    let d = dir("spmv-el");
    let mut r = testing::xorshift(0x5b_0003);
    let mut u = testing::unit_stream(0x5b_0004);
    let n = 200usize;
    let mut edges = BTreeMap::new();
    for v in 1..n {
        edges.insert((v - 1, v), 1.0 + u());
    }
    for _ in 0..800 {
        let (a, b) = ((r() % n as u64) as usize, (r() % n as u64) as usize);
        if a != b && !edges.contains_key(&(b, a)) {
            edges.insert((a, b), 1.0 + u());
        }
    }
    let out = d.join("y.npy");
    for weighted in [false, true] {
        let mut text = String::from("# test graph\n");
        let mut entries = Vec::new();
        for (&(a, b), &w) in &edges {
            let w = if weighted { w } else { 1.0 };
            if weighted {
                text.push_str(&format!("{a}\t{b}\t{w}\n"));
            } else {
                text.push_str(&format!("{a}\t{b}\n"));
            }
            entries.push((a, b, w));
            entries.push((b, a, w));
        }
        let path = d.join(if weighted { "w.txt" } else { "u.txt" });
        std::fs::write(&path, text).unwrap();
        for b in backends() {
            check_spmv(&path, (n, &entries), b, &out);
        }
    }
    // A dense .npy, with zeros.
    let (rows, cols) = (30, 41);
    let vals: Vec<f64> = (0..rows * cols)
        .map(|k| if k % 7 == 3 { 0.0 } else { u() * 8.0 })
        .collect();
    let path = d.join("a.npy");
    write_npy(&path, rows, cols, &vals, false);
    let entries: Vec<(usize, usize, f64)> = (0..rows * cols)
        .map(|k| (k / cols, k % cols, vals[k]))
        .collect();
    for b in backends() {
        check_spmv(&path, (rows, &entries), b, &out);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// A real Matrix Market graph (karate, pattern symmetric): y = A·1 is the degree.
#[test]
fn spmv_of_a_real_matrix_matches_its_row_sums() {
    let Some(data) = testing::data_dir_or_skip() else {
        return;
    };
    let d = dir("spmv-real");
    let out = d.join("y.npy");
    for file in [
        "graphs/karate.mtx",
        "matrices/west0067.mtx",
        "matrices/lp_afiro.mtx",
    ] {
        let path = data.join(file);
        let (rows, _, entries) = parse_mtx(&std::fs::read_to_string(&path).unwrap());
        for b in backends() {
            check_spmv(&path, (rows, &entries), b, &out);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

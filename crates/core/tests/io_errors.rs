//! One test per error kind per format: the kind, the line, and a message naming the file.

mod common;

use common::{f8, npy};
use trident_core::io::{self, mtx, EdgeListOptions, IdMode, MatrixMarket};
use trident_core::{Dense, Error, ParseErrorKind as K};

#[track_caller]
fn check(err: Error, kind: K, line: Option<usize>, name: &str) {
    let shown = err.to_string();
    let p = err
        .as_parse()
        .unwrap_or_else(|| panic!("not a parse error: {err:?}"));
    assert_eq!(p.kind, kind, "{shown}");
    assert_eq!(p.line, line, "{shown}");
    assert!(shown.contains(name), "{shown:?} does not name {name}");
}

#[track_caller]
fn mtx_err(text: &str, kind: K, line: Option<usize>) {
    let name = "bad_input.mtx";
    let err = mtx::parse_matrix_market::<f64>(text.as_bytes(), name).unwrap_err();
    check(err, kind, line, name);
}

#[track_caller]
fn el_err_opts(text: &str, opts: &EdgeListOptions, kind: K, line: Option<usize>) {
    let name = "bad_edges.txt";
    let err = io::parse_edge_list(text.as_bytes(), name, opts).unwrap_err();
    check(err, kind, line, name);
}

#[track_caller]
fn el_err(text: &str, kind: K, line: Option<usize>) {
    el_err_opts(text, &EdgeListOptions::default(), kind, line)
}

#[track_caller]
fn npy_err(bytes: &[u8], kind: K) {
    let name = "bad_array.npy";
    let err = io::parse_npy::<f64>(bytes, name).unwrap_err();
    check(err, kind, None, name);
}

const BANNER: &str = "%%MatrixMarket matrix coordinate real general\n";

// ---------------------------------------------------------------- Matrix Market

#[test]
fn mtx_bad_header() {
    mtx_err("3 3 1\n1 1 1\n", K::BadHeader, Some(1));
    mtx_err("%%MatrixMarket matrix\n3 3 0\n", K::BadHeader, Some(1));
    mtx_err(
        "%%MatrixMarket matrix coordinate quaternion general\n3 3 0\n",
        K::BadHeader,
        Some(1),
    );
    mtx_err(
        "%%MatrixMarket matrix array pattern general\n3 3\n",
        K::BadHeader,
        Some(1),
    );
    mtx_err(&format!("{BANNER}% c\n\n3 x 1\n"), K::BadHeader, Some(4));
    mtx_err(&format!("{BANNER}3 3\n"), K::BadHeader, Some(2));
    mtx_err(&format!("{BANNER}3 3 1 7\n"), K::BadHeader, Some(2));
    mtx_err(
        "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n",
        K::BadHeader,
        Some(2),
    );
}

#[test]
fn mtx_entry_count() {
    // More entries than declared: the first extra one.
    mtx_err(
        &format!("{BANNER}2 2 1\n1 1 1.0\n2 2 2.0\n"),
        K::EntryCount,
        Some(4),
    );
    // Fewer: no line.
    mtx_err(&format!("{BANNER}2 2 3\n1 1 1.0\n"), K::EntryCount, None);
    mtx_err(
        "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n",
        K::EntryCount,
        None,
    );
    mtx_err(
        "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n",
        K::EntryCount,
        Some(5),
    );
}

#[test]
fn mtx_index_out_of_range() {
    mtx_err(
        &format!("{BANNER}2 2 1\n0 1 1.0\n"),
        K::IndexOutOfRange,
        Some(3),
    );
    mtx_err(
        &format!("{BANNER}2 2 2\n1 1 1.0\n1 3 1.0\n"),
        K::IndexOutOfRange,
        Some(4),
    );
    mtx_err(
        "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1.0\n",
        K::IndexOutOfRange,
        Some(3),
    );
}

#[test]
fn mtx_bad_value() {
    mtx_err(&format!("{BANNER}2 2 1\n1 1 abc\n"), K::BadValue, Some(3));
    mtx_err(&format!("{BANNER}2 2 1\n1 1 NaN\n"), K::BadValue, Some(3));
    mtx_err(
        &format!("{BANNER}2 2 1\n\n1 1 -inf\n"),
        K::BadValue,
        Some(4),
    );
    mtx_err(&format!("{BANNER}2 2 1\n1 x 1\n"), K::BadValue, Some(3));
    mtx_err(&format!("{BANNER}2 2 1\n1 1 1 1\n"), K::BadValue, Some(3));
    mtx_err(
        "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
        K::BadValue,
        Some(3),
    );
    // Finite in f64, not in f32.
    let err =
        mtx::parse_matrix_market::<f32>(format!("{BANNER}2 2 1\n1 1 1e39\n").as_bytes(), "big.mtx")
            .unwrap_err();
    check(err, K::BadValue, Some(3), "big.mtx");
}

#[test]
fn mtx_truncated() {
    mtx_err(&format!("{BANNER}2 2 1\n1 1\n"), K::Truncated, Some(3));
    mtx_err(
        &format!("{BANNER}% only a comment\n"),
        K::Truncated,
        Some(2),
    );
}

#[test]
fn mtx_empty() {
    mtx_err("", K::Empty, None);
    mtx_err(" \n\r\n", K::Empty, None);
}

#[test]
fn mtx_unsupported() {
    mtx_err(
        "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
        K::Unsupported,
        Some(1),
    );
    mtx_err(
        "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
        K::Unsupported,
        Some(1),
    );
    mtx_err(
        "%%MatrixMarket vector coordinate real general\n1 1\n",
        K::Unsupported,
        Some(1),
    );
}

#[test]
fn mtx_io_error_names_the_file() {
    let err = io::read_coo::<f64>("/nonexistent/dir/missing.mtx").unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("missing.mtx"));
    assert!(io::read_matrix_market::<f64>("/nonexistent/x.mtx").is_err());
    assert!(io::read_dense::<f64>("/nonexistent/x.mtx").is_err());
}

#[test]
fn mtx_error_from_a_file_names_the_path() {
    let p = std::env::temp_dir().join(format!("trident_err_{}.mtx", std::process::id()));
    std::fs::write(&p, format!("{BANNER}2 2 1\n3 1 1\n")).unwrap();
    let err = io::read_coo::<f64>(&p).unwrap_err();
    let _ = std::fs::remove_file(&p);
    let name = p.display().to_string();
    check(err, K::IndexOutOfRange, Some(3), &name);
}

#[test]
fn mtx_accepts_comments_blank_lines_and_crlf() {
    let text = "%%MatrixMarket Matrix Coordinate Pattern Symmetric\r\n% c\r\n\r\n3 3 3\r\n2 1\r\n\r\n% mid\r\n3 3\r\n1 3\r\n";
    let m = mtx::parse_matrix_market::<f64>(text.as_bytes(), "ok.mtx").unwrap();
    let MatrixMarket::Sparse(c) = m else {
        panic!("coordinate is sparse")
    };
    // (2,1) mirrored, (3,3) once, (1,3) mirrored.
    assert_eq!(c.nnz(), 5);
    let d = c.to_dense();
    assert_eq!(d.get(0, 1), 1.0);
    assert_eq!(d.get(1, 0), 1.0);
    assert_eq!(d.get(2, 2), 1.0);
    assert_eq!(d.get(0, 2), 1.0);
    assert_eq!(d.get(2, 0), 1.0);
}

#[test]
fn mtx_skew_and_array_symmetric() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n3 1 2.5\n";
    let c = mtx::parse_matrix_market::<f64>(text.as_bytes(), "s.mtx")
        .unwrap()
        .into_coo();
    let d = c.to_dense();
    assert_eq!((d.get(2, 0), d.get(0, 2)), (2.5, -2.5));
    let text = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    let MatrixMarket::Dense(d) = mtx::parse_matrix_market::<f64>(text.as_bytes(), "a").unwrap()
    else {
        panic!("array is dense")
    };
    let want = Dense::from_vec(3, 3, vec![1., 2., 3., 2., 4., 5., 3., 5., 6.]).unwrap();
    assert_eq!(d, want);
    let text = "%%MatrixMarket matrix array integer general\n2 3\n1\n2\n3\n4\n5\n6\n";
    let MatrixMarket::Dense(d) = mtx::parse_matrix_market::<f32>(text.as_bytes(), "a").unwrap()
    else {
        panic!("array is dense")
    };
    // Column-major in the file.
    assert_eq!(d.as_slice(), &[1., 3., 5., 2., 4., 6.]);
}

// ---------------------------------------------------------------- edge lists

#[test]
fn edgelist_truncated() {
    el_err("# c\n1 2\n3\n", K::Truncated, Some(3));
    // Weighted (decided by the first data line) but a line lacks its weight.
    el_err("1 2 0.5\n2 3\n", K::Truncated, Some(2));
    let opts = EdgeListOptions {
        weighted: Some(true),
        ..Default::default()
    };
    el_err_opts("a b 1\r\nb c\r\n", &opts, K::Truncated, Some(2));
}

#[test]
fn edgelist_bad_value() {
    el_err("1 2 1.0\n2 3 abc\n", K::BadValue, Some(2));
    el_err("1 2 1.0\n2 3 nan\n", K::BadValue, Some(2));
    el_err("a b 1.0\n\nb c inf\n", K::BadValue, Some(3));
    el_err("a b 1.0\nb c -Infinity\n", K::BadValue, Some(2));
    // A third field when the first data line had none.
    el_err("1 2\n2 3 4\n", K::BadValue, Some(2));
    // Too many fields on a weighted line.
    el_err("1 2 3 4\n", K::BadValue, Some(1));
    // Numeric mode needs integer ids.
    let opts = EdgeListOptions {
        ids: IdMode::Numeric,
        ..Default::default()
    };
    el_err_opts("1 2\n\n2 x\n", &opts, K::BadValue, Some(3));
    el_err_opts("1 2\n-1 2\n", &opts, K::BadValue, Some(2));
}

#[test]
fn edgelist_index_out_of_range() {
    let opts = EdgeListOptions {
        ids: IdMode::Numeric,
        ..Default::default()
    };
    el_err_opts("1 2\n5000000000 1\n", &opts, K::IndexOutOfRange, Some(2));
}

#[test]
fn edgelist_empty() {
    el_err("", K::Empty, None);
    el_err("# only\n% comments\n\n", K::Empty, None);
    let opts = EdgeListOptions {
        ids: IdMode::Labels,
        ..Default::default()
    };
    el_err_opts("\r\n# x\r\n", &opts, K::Empty, None);
}

#[test]
fn edgelist_io_error_names_the_file() {
    let err = io::read_graph("/nonexistent/edges.txt", &EdgeListOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Io { .. }));
    assert!(err.to_string().contains("edges.txt"));
    assert!(io::read_graph_auto("/nonexistent/g.mtx").is_err());
}

#[test]
fn graph_from_mtx_needs_a_square_matrix() {
    let p = std::env::temp_dir().join(format!("trident_rect_{}.mtx", std::process::id()));
    std::fs::write(&p, format!("{BANNER}2 3 1\n1 3 1\n")).unwrap();
    let err = io::read_graph_auto(&p).unwrap_err();
    let _ = std::fs::remove_file(&p);
    check(err, K::BadHeader, None, &p.display().to_string());
}

#[test]
fn edgelist_features() {
    // Tabs, CRLF, comments, both directions, duplicates, a self-loop, a 0-based file.
    let text = "# SNAP\r\n0\t1\r\n1\t0\r\n1 2\r\n\r\n% x\r\n2 2\r\n0 1\r\n2\t3  \r\n";
    let g = io::parse_edge_list(text.as_bytes(), "f", &EdgeListOptions::default()).unwrap();
    assert_eq!(
        (g.num_nodes(), g.num_edges(), g.self_loops_dropped()),
        (4, 3, 1)
    );
    assert!(g.labels().is_none() && g.weights().is_none());
    // Weighted labels (ABC): duplicate keeps the largest weight.
    let text = "A B 0.5\nB A 0.75\nB C 1e-3\n";
    let g = io::parse_edge_list(text.as_bytes(), "f", &EdgeListOptions::default()).unwrap();
    assert_eq!(g.labels().unwrap(), &["A", "B", "C"]);
    assert_eq!(g.neighbor_weights(0).unwrap(), &[0.75]);
    // Weights ignored on request.
    let opts = EdgeListOptions {
        weighted: Some(false),
        ..Default::default()
    };
    let g = io::parse_edge_list(b"1 2 x y\n2 3\n", "f", &opts).unwrap();
    assert!(g.weights().is_none());
    assert_eq!(g.labels().unwrap(), &["1", "2", "3"]);
    // Leading whitespace and '+' signs take the general path.
    let g = io::parse_edge_list(b"  3 4\n\t4 5\n+5 3\n", "f", &EdgeListOptions::default()).unwrap();
    assert_eq!((g.num_nodes(), g.num_edges()), (3, 3));
    assert_eq!(g.label(0), "3");
    // Huge ids: compacted.
    let g = io::parse_edge_list(
        b"18446744073709551615 7\n7 100000000000\n",
        "f",
        &EdgeListOptions::default(),
    )
    .unwrap();
    assert_eq!(g.num_nodes(), 3);
    assert_eq!(
        g.labels().unwrap(),
        &["7", "100000000000", "18446744073709551615"]
    );
    // A non-integer id anywhere makes the whole file labels.
    let g = io::parse_edge_list(b"1 2\n2 -3\n", "f", &EdgeListOptions::default()).unwrap();
    assert_eq!(g.labels().unwrap(), &["1", "2", "-3"]);
    // No final newline.
    let g = io::parse_edge_list(b"0 1\n1 2", "f", &EdgeListOptions::default()).unwrap();
    assert_eq!(g.num_edges(), 2);
}

// ---------------------------------------------------------------- npy

const H23: &str = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";

#[test]
fn npy_ok_variants() {
    let d: Dense<f64> = io::parse_npy(&npy(1, H23, &f8(&[0., 1., 2., 3., 4., 5.])), "a").unwrap();
    assert_eq!(d.shape(), (2, 3));
    assert_eq!(d.get(1, 0), 3.0);
    let h = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
    let d: Dense<f64> = io::parse_npy(&npy(2, h, &f8(&[0., 1., 2., 3., 4., 5.])), "a").unwrap();
    assert_eq!(d.as_slice(), &[0., 2., 4., 1., 3., 5.]);
    let h = "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3L,)}";
    let data: Vec<u8> = [1f32, 2., 3.]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let d: Dense<f32> = io::parse_npy(&npy(3, h, &data), "a").unwrap();
    assert_eq!((d.shape(), d.as_slice()), ((3, 1), &[1f32, 2., 3.][..]));
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }";
    let d: Dense<f64> = io::parse_npy(&npy(1, h, &[]), "a").unwrap();
    assert_eq!(d.shape(), (0, 4));
}

#[test]
fn npy_empty() {
    npy_err(b"", K::Empty);
}

#[test]
fn npy_bad_header() {
    npy_err(b"PK\x03\x04 not numpy", K::BadHeader);
    npy_err(
        &npy(1, "{'descr': '<f8', 'shape': (2, 3), }", &[0; 48]),
        K::BadHeader,
    );
    npy_err(
        &npy(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)",
            &[0; 48],
        ),
        K::BadHeader,
    );
    npy_err(
        &npy(
            1,
            "{'descr': '<f8', 'fortran_order': 0, 'shape': (2, 3), }",
            &[0; 48],
        ),
        K::BadHeader,
    );
    npy_err(
        &npy(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
            &[],
        ),
        K::BadHeader,
    );
}

#[test]
fn npy_unsupported() {
    for h in [
        "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 3), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 1), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
    ] {
        npy_err(&npy(1, h, &[0; 48]), K::Unsupported);
    }
    let mut v = npy(1, H23, &[0; 48]);
    v[6] = 4;
    npy_err(&v, K::Unsupported);
}

#[test]
fn npy_truncated() {
    npy_err(&npy(1, H23, &[0; 47]), K::Truncated);
    npy_err(b"\x93NUMPY\x01", K::Truncated);
    // Header length past the end of the file.
    let mut v = npy(1, H23, &[]);
    v[8] = 0xff;
    v[9] = 0xff;
    npy_err(&v, K::Truncated);
}

#[test]
fn npy_entry_count() {
    npy_err(&npy(1, H23, &[0; 56]), K::EntryCount);
}

#[test]
fn npy_bad_value() {
    npy_err(
        &npy(1, H23, &f8(&[0., 1., f64::NAN, 3., 4., 5.])),
        K::BadValue,
    );
    // Finite in f64, not in f32.
    let err =
        io::parse_npy::<f32>(&npy(1, H23, &f8(&[0., 1., 1e300, 3., 4., 5.])), "x.npy").unwrap_err();
    check(err, K::BadValue, None, "x.npy");
}

#[test]
fn npy_io_error() {
    let err = io::read_npy::<f64>("/nonexistent/a.npy").unwrap_err();
    assert!(matches!(err, Error::Io { .. }));
    assert!(err.to_string().contains("a.npy"));
}

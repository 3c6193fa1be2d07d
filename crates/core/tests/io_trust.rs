//! Issue 23 ("Trust"): input of the wrong format is never read anyway, readers report
//! what they merge and drop, allocations sized from input fail with the bytes, readers
//! stop early on garbage, and Matrix Market graphs keep the file's 1-based ids.

mod common;

use common::{f8, npy};
use std::io::Read;
use std::path::PathBuf;

use trident_core::io::{self, Detected, Input};
use trident_core::{generate, Coo, Dense, Error, ParseErrorKind as K};

/// A fresh directory for this test's files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-io-trust-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[track_caller]
fn parse_err(err: Error) -> trident_core::ParseError {
    err.as_parse()
        .unwrap_or_else(|| panic!("not a parse error: {err:?}"))
        .clone()
}

// ------------------------------------------------------------- 1. wrong format

#[test]
fn a_misspelt_banner_is_an_error_on_line_1_not_an_edge_list() {
    let d = dir("banner");
    for (text, what) in [
        (
            "%%MatrixMarkt matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n",
            "MatrixMarkt",
        ),
        (
            "%%matrixmarket_matrix coordinate real general\n2 2 1\n1 2 1\n",
            "matrixmarket_matrix",
        ),
        ("%% not a banner at all\n1 2\n", "\"%%\""),
    ] {
        let p = d.join("g.txt");
        std::fs::write(&p, text).unwrap();
        // Every graph entry point: the streamed reader, the whole-file one, the parser.
        for e in [
            io::read_graph_auto(&p).unwrap_err(),
            io::graph_from_input(&Input::read(&p).unwrap()).unwrap_err(),
            io::read_matrix_market::<f64>(&p).unwrap_err(),
        ] {
            let shown = e.to_string();
            let pe = parse_err(e);
            assert_eq!(pe.kind, K::BadHeader, "{shown}");
            assert_eq!(pe.line, Some(1), "{shown}");
            assert!(shown.contains("g.txt") && shown.contains(what), "{shown}");
            assert!(shown.contains("not a Matrix Market banner"), "{shown}");
        }
        assert_eq!(io::detect(text.as_bytes()), Detected::MatrixMarket);
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn detect_format_is_by_content_and_refuses_empty_and_binary() {
    let ok = |b: &[u8]| io::detect_format(b, "f.dat").unwrap();
    assert_eq!(
        ok(b"%%MatrixMarket matrix array real general\n1 1\n2\n"),
        Detected::MatrixMarket
    );
    assert_eq!(
        ok(b"\xEF\xBB\xBF%%MatrixMarket matrix"),
        Detected::MatrixMarket
    );
    assert_eq!(
        ok(&npy(
            1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }",
            &f8(&[1.0])
        )),
        Detected::Npy
    );
    assert_eq!(ok(b"1 2\n2 3\n"), Detected::Text);
    for empty in [&b""[..], b"\n \r\n\t", b"\xEF\xBB\xBF"] {
        let e = io::detect_format(empty, "f.dat").unwrap_err();
        let shown = e.to_string();
        assert_eq!(parse_err(e).kind, K::Empty, "{shown}");
        assert!(
            shown.contains("f.dat") && shown.contains("empty file"),
            "{shown}"
        );
    }
    let e = io::detect_format(b"1 2\n\x00\x00\x00", "f.dat").unwrap_err();
    assert!(e.to_string().contains("NUL"), "{e}");
    let e = io::detect_format(b"\x28\xb5\x2f\xfd....", "f.dat").unwrap_err();
    assert!(e.to_string().contains("zstd"), "{e}");
}

#[test]
fn matrices_are_read_by_content_whatever_the_name() {
    let d = dir("dense");
    // A Matrix Market file named .txt, and a .npy file named .mtx.
    let mm = d.join("a.txt");
    std::fs::write(
        &mm,
        "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
    )
    .unwrap();
    let a = io::read_dense_auto::<f64>(&mm).unwrap();
    assert_eq!(a, Dense::from_vec(2, 2, vec![1.0, 3.0, 2.0, 4.0]).unwrap());
    let np = d.join("b.mtx");
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }";
    std::fs::write(&np, npy(1, h, &f8(&[5.0, 6.0]))).unwrap();
    assert_eq!(
        io::read_dense_auto::<f64>(&np).unwrap(),
        Dense::from_vec(1, 2, vec![5.0, 6.0]).unwrap()
    );
    // Coordinate files are densified.
    let co = d.join("c");
    std::fs::write(
        &co,
        "%%MatrixMarket matrix coordinate real general\n2 3 1\n2 3 7.5\n",
    )
    .unwrap();
    let c = io::read_dense_auto::<f64>(&co).unwrap();
    assert_eq!((c.shape(), c.get(1, 2), c.get(0, 0)), ((2, 3), 7.5, 0.0));
    // An empty file is "empty file" for every reader, not "a text file (edge list)".
    let empty = d.join("empty.npy");
    std::fs::write(&empty, "").unwrap();
    for e in [
        io::read_dense_auto::<f64>(&empty).unwrap_err(),
        io::npy::read_npy_matrix::<f64>(&empty).unwrap_err(),
        io::read_npy::<f64>(&empty).unwrap_err(),
        io::read_graph_auto(&empty).unwrap_err(),
        io::read_matrix_market::<f64>(&empty).unwrap_err(),
    ] {
        let shown = e.to_string();
        assert_eq!(parse_err(e).kind, K::Empty, "{shown}");
        assert!(
            shown.contains("empty file") && !shown.contains("edge list"),
            "{shown}"
        );
    }
    // An edge list is not a matrix; a 1-D array is refused, saying so.
    let el = d.join("e.npy");
    std::fs::write(&el, "1 2\n").unwrap();
    let e = io::read_dense_auto::<f64>(&el).unwrap_err().to_string();
    assert!(e.contains("edge list") && e.contains("not a matrix"), "{e}");
    let v = d.join("v.npy");
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    std::fs::write(&v, npy(1, h, &f8(&[1.0, 2.0, 3.0]))).unwrap();
    let e = io::read_dense_auto::<f64>(&v).unwrap_err().to_string();
    assert!(e.contains("1-D"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn npy_header_with_a_repeated_key_is_refused() {
    // numpy keeps the last 'shape' (1, 4); taking the first would read a 2 x 2 matrix.
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), 'shape': (1, 4), }";
    let b = npy(1, h, &f8(&[1.0, 2.0, 3.0, 4.0]));
    let e = io::parse_npy::<f64>(&b, "dup.npy").unwrap_err();
    let shown = e.to_string();
    assert_eq!(parse_err(e).kind, K::BadHeader, "{shown}");
    assert!(
        shown.contains("dup.npy") && shown.contains("'shape' twice"),
        "{shown}"
    );
    let h = "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }";
    assert!(io::parse_npy::<f64>(&npy(1, h, &f8(&[1.0])), "d.npy").is_err());
}

// ------------------------------------------------------------- 4. limits

/// A reader that counts the bytes taken from it.
struct Counting<R> {
    inner: R,
    taken: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.taken += k as u64;
        Ok(k)
    }
}

#[test]
fn endless_zeros_are_refused_after_a_few_kilobytes() {
    let mut r = Counting {
        inner: std::io::repeat(0),
        taken: 0,
    };
    let e = Input::from_reader(&mut r, "/dev/zero", std::path::Path::new("/dev/zero"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("/dev/zero") && e.contains("NUL"), "{e}");
    assert!(r.taken <= 1 << 20, "read {} bytes first", r.taken);
}

#[test]
fn text_inputs_refuse_binary_data_early() {
    // `cluster --eval /dev/zero` read 2 GB before failing.
    #[cfg(unix)]
    {
        let e = trident_core::mcl::eval::read_complexes("/dev/zero")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero") && e.contains("NUL"), "{e}");
    }
    let d = dir("text");
    let p = d.join("c.txt");
    std::fs::write(&p, b"a b c\n\xff\xfe x\n").unwrap();
    let e = io::read_text(&p).unwrap_err();
    let shown = e.to_string();
    assert_eq!(parse_err(e).line, Some(2), "{shown}");
    assert!(shown.contains("UTF-8"), "{shown}");
    std::fs::write(&p, "A B C\nD E\n").unwrap();
    assert_eq!(io::read_text(&p).unwrap(), "A B C\nD E\n");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn an_npy_stream_stops_at_its_header_or_its_declared_length() {
    // A valid header followed by endless data: refused once past the declared length.
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
    let head = npy(1, h, &[]);
    let mut r = Counting {
        inner: std::io::Read::chain(&head[..], std::io::repeat(0)),
        taken: 0,
    };
    let e = Input::from_reader(&mut r, "x.npy", std::path::Path::new("x.npy"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.npy") && e.contains("header says"), "{e}");
    assert!(r.taken <= 1 << 20, "read {} bytes first", r.taken);
    // A version-2 header claiming 1 GB: refused before it is read.
    let mut b = b"\x93NUMPY\x02\x00".to_vec();
    b.extend_from_slice(&(1u32 << 30).to_le_bytes());
    let mut r = Counting {
        inner: std::io::Read::chain(&b[..], std::io::repeat(b' ')),
        taken: 0,
    };
    let e = Input::from_reader(&mut r, "h.npy", std::path::Path::new("h.npy"), None).unwrap_err();
    let shown = e.to_string();
    assert_eq!(parse_err(e).kind, K::TooLarge, "{shown}");
    assert!(shown.contains("header length"), "{shown}");
    assert!(r.taken <= 1 << 20, "read {} bytes first", r.taken);
    // In memory too.
    let mut big = b"\x93NUMPY\x02\x00".to_vec();
    big.extend_from_slice(&20_000u32.to_le_bytes());
    big.extend(std::iter::repeat_n(b' ', 20_000));
    let e = io::parse_npy::<f64>(&big, "h.npy").unwrap_err();
    assert_eq!(parse_err(e).kind, K::TooLarge);
}

// ------------------------------------------------------------- 3. allocations

#[test]
fn allocations_sized_from_input_fail_with_the_bytes() {
    // A 52-byte array header declaring 10^11 empty rows: the conversion to CSR needs
    // 800 GB of row pointers and says so instead of aborting.
    let text = "%%MatrixMarket matrix array real general\n100000000000 0\n";
    let m = io::parse_matrix_market::<f32>(text.as_bytes(), "h.mtx").unwrap();
    let e = m.into_coo().to_csr::<u32>().unwrap_err().to_string();
    assert!(e.contains("bytes") && e.contains("row pointers"), "{e}");
    let e = Coo::<f64>::new(usize::MAX / 16, 1)
        .to_csr::<u32>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("bytes"), "{e}");
    // A coordinate file densified: 8 TB.
    let text = "%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n1 1 2\n";
    let e = io::parse_matrix_market::<f64>(text.as_bytes(), "c.mtx").unwrap();
    let d = dir("alloc");
    let p = d.join("c.mtx");
    std::fs::write(&p, text).unwrap();
    drop(e);
    let e = io::read_dense_auto::<f64>(&p).unwrap_err();
    let shown = e.to_string();
    assert_eq!(parse_err(e).kind, K::TooLarge, "{shown}");
    assert!(
        shown.contains("c.mtx") && shown.contains("8000000000000 bytes"),
        "{shown}"
    );
    // Generators: 2^35 Kronecker edges need 275 GB.
    let e = generate::kronecker(31, 16, 1).unwrap_err().to_string();
    assert!(e.contains("bytes") && e.contains("Kronecker"), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

// ------------------------------------------------------------- 2. reports

#[test]
fn readers_report_merged_duplicates_dropped_loops_and_isolated_nodes() {
    let d = dir("stats");
    let p = d.join("dups.txt");
    // 6 entries: (1,2) three times (once reversed), a self-loop, (2,3), (3,4).
    std::fs::write(&p, "1 2\n2 1\n1 2\n3 3\n2 3\n3 4\n").unwrap();
    let g = io::read_graph_auto(&p).unwrap();
    let s = g.build_stats();
    assert_eq!(
        (
            s.entries,
            s.self_loops,
            s.duplicates,
            s.edges,
            s.isolated_nodes
        ),
        (6, 1, 2, 3, 0)
    );
    let notes = g.notes().join("\n");
    assert!(notes.contains("merged 2 repeated"), "{notes}");
    assert!(notes.contains("dropped 1 self-loop"), "{notes}");
    // The same through standard-input-like whole-file reading.
    let g2 = io::graph_from_input(&Input::read(&p).unwrap()).unwrap();
    assert_eq!(g2.build_stats(), s);
    // Every edge listed once in each direction: nothing to remark on.
    std::fs::write(&p, "1 2\n2 1\n2 3\n3 2\n").unwrap();
    let g = io::read_graph_auto(&p).unwrap();
    assert_eq!(g.build_stats().duplicates, 2);
    assert!(g.notes().is_empty(), "{:?}", g.notes());
    // A Matrix Market file with unused rows: isolated nodes are reported.
    let m = d.join("iso.mtx");
    std::fs::write(
        &m,
        "%%MatrixMarket matrix coordinate pattern general\n5 5 2\n1 2\n2 2\n",
    )
    .unwrap();
    let g = io::read_graph_auto(&m).unwrap();
    let s = g.build_stats();
    assert_eq!(
        (s.entries, s.self_loops, s.edges, s.isolated_nodes),
        (2, 1, 1, 3)
    );
    assert!(
        g.notes().join("\n").contains("3 nodes have no edges"),
        "{:?}",
        g.notes()
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn readers_report_ids_absent_from_a_renumbered_edge_list() {
    let d = dir("absent");
    let p = d.join("gaps.txt");
    // Ids 1, 2, 5 are nodes; 9 is only in a self-loop; 3 and 4 are in no edge.
    std::fs::write(&p, "1 2\n2 5\n5 1\n9 9\n").unwrap();
    for g in [
        io::read_graph_auto(&p).unwrap(),
        io::graph_from_input(&Input::read(&p).unwrap()).unwrap(),
    ] {
        assert_eq!(g.labels().unwrap(), &["1", "2", "5"]);
        assert_eq!(g.build_stats().absent_ids, 2);
        let notes = g.notes().join("\n");
        assert!(notes.contains("from 1 to 5, but 2 ids"), "{notes}");
    }
    // A contiguous 1-based file: nothing absent, nothing to say.
    std::fs::write(&p, "1 2\n2 3\n").unwrap();
    let g = io::read_graph_auto(&p).unwrap();
    assert_eq!(g.build_stats().absent_ids, 0);
    assert!(g.notes().is_empty(), "{:?}", g.notes());
    std::fs::remove_dir_all(&d).ok();
}

// ------------------------------------------------------------- 5. node ids

#[test]
fn matrix_market_graphs_carry_the_files_one_based_ids() {
    let d = dir("ids");
    let p = d.join("g.mtx");
    std::fs::write(
        &p,
        "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n3 1\n3 2\n",
    )
    .unwrap();
    let g = io::read_graph_auto(&p).unwrap();
    assert_eq!(g.num_nodes(), 4);
    assert_eq!(g.labels().unwrap(), &["1", "2", "3", "4"]);
    // Node k is the file's k + 1: the triangle 1-2-3 and the isolated node 4.
    assert_eq!(g.label(0), "1");
    assert_eq!(g.label(3), "4");
    assert_eq!(g.neighbors(0), &[1, 2]);
    assert_eq!(g.degree(3), 0);
    // Gzip and standard-input-like readers agree.
    let g2 = io::graph_from_input(&Input::read(&p).unwrap()).unwrap();
    assert_eq!(g2.labels().unwrap(), g.labels().unwrap());
    std::fs::remove_dir_all(&d).ok();
}

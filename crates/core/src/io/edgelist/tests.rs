//! The reader against a line-by-line model: threads, pieces, the block parser and errors.

use super::numeric::scan_uint;
use super::*;

/// A small deterministic generator (xorshift64*).
fn rng(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// An edge list with everything the reader must handle: comments (at the top and
/// between data lines), blank lines, CRLF and LF line ends, tabs and spaces, self-loops,
/// duplicates and reversed duplicates, ids with gaps (so they are renumbered), and an
/// optional weight column. No final line break.
pub(super) fn messy_text(lines: usize, max_id: u64, weighted: bool, seed: u64) -> String {
    let mut st = seed;
    let mut t = String::from("# a comment\n% another\n\n");
    for i in 0..lines {
        let r = rng(&mut st);
        let u = 3 * (rng(&mut st) % max_id) + 1;
        let v = match r % 10 {
            0 => u,                          // self-loop
            1 => 3 * (rng(&mut st) % 4) + 1, // a hub: many duplicates
            _ => 3 * (rng(&mut st) % max_id) + 1,
        };
        let sep = if r.is_multiple_of(3) { "\t" } else { " " };
        let end = if r.is_multiple_of(4) { "\r\n" } else { "\n" };
        if weighted {
            t.push_str(&format!("{u}{sep}{v}{sep}{}.5{end}", r % 7));
        } else {
            t.push_str(&format!("{u}{sep}{v}{end}"));
        }
        if i.is_multiple_of(97) {
            t.push_str("# between\n\n");
        }
    }
    t.pop();
    t
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// The parse and the graph under `threads` threads and pieces of about `chunk` bytes.
fn read_with(
    text: &str,
    opts: &EdgeListOptions,
    threads: usize,
    chunk: Option<usize>,
) -> (EdgeList, Graph) {
    pool(threads).install(|| {
        let el = parse_in(text.as_bytes(), "t", opts, chunk)
            .unwrap()
            .into_edge_list();
        let g = parse_in(text.as_bytes(), "t", opts, chunk)
            .unwrap()
            .into_graph()
            .unwrap();
        (el, g)
    })
}

#[test]
fn results_do_not_depend_on_threads_or_pieces() {
    for (weighted, ids, loops) in [
        (false, IdMode::Auto, false),
        (true, IdMode::Auto, false),
        (false, IdMode::Auto, true),
        (false, IdMode::Numeric, false),
        (true, IdMode::Labels, false),
    ] {
        let text = messy_text(3000, 500, weighted, 7);
        let opts = EdgeListOptions {
            ids,
            loop_only_nodes: loops,
            ..Default::default()
        };
        let (el, g) = read_with(&text, &opts, 1, None);
        assert!(el.len() > 2000 && el.self_loops > 100);
        assert_eq!(el.weights.is_some(), weighted);
        // Auto renumbers (ids 1, 4, 7, ...), Numeric keeps ids (isolated gaps).
        assert_eq!(el.labels.is_some(), ids != IdMode::Numeric);
        // The graph built straight from the parse equals the one built from the list.
        assert_eq!(g, el.clone().into_graph().unwrap());
        for (threads, chunk) in [(4, None), (1, Some(64)), (3, Some(7)), (4, Some(1))] {
            let (el2, g2) = read_with(&text, &opts, threads, chunk);
            assert_eq!(el2, el, "{threads} threads, pieces of {chunk:?}");
            assert_eq!(g2, g, "{threads} threads, pieces of {chunk:?}");
        }
    }
}

#[test]
fn block_parser_matches_the_line_parser() {
    // Ids of 1 to 17 characters (leading zeros make long tokens of small values),
    // single and double separators, trailing blanks, CRLF, signs, self-loops: pieces
    // of whole files take the 64-byte block loop, one-line pieces (shorter than a
    // block) the per-line loop and the general path; they must agree everywhere.
    let mut st = 11u64;
    let mut t = String::new();
    for _ in 0..20_000 {
        let id = |st: &mut u64| {
            let r = rng(st);
            let v = rng(st) % 5000;
            let width = (r % 17 + 1) as usize;
            format!("{v:0width$}")
        };
        let r = rng(&mut st);
        let u = id(&mut st);
        let v = if r.is_multiple_of(23) {
            u.clone()
        } else {
            id(&mut st)
        };
        let sep = ["\t", " ", "  ", " \t"][(r >> 8) as usize % 4];
        let sign = if r.is_multiple_of(97) { "+" } else { "" };
        let tail = ["", "", "", " ", "\t"][(r >> 16) as usize % 5];
        let end = if (r >> 24).is_multiple_of(3) {
            "\r\n"
        } else {
            "\n"
        };
        t.push_str(&format!("{sign}{u}{sep}{v}{tail}{end}"));
    }
    for ids in [IdMode::Auto, IdMode::Numeric] {
        let opts = EdgeListOptions {
            ids,
            ..Default::default()
        };
        let (el, g) = read_with(&t, &opts, 2, None);
        assert!(el.len() > 15_000 && el.self_loops > 500, "{}", el.len());
        let (el1, g1) = read_with(&t, &opts, 2, Some(1));
        assert_eq!(el, el1);
        assert_eq!(g, g1);
    }
}

#[test]
fn errors_in_a_later_piece_name_the_file_line() {
    let mut text = messy_text(600, 50, false, 3);
    let line = text.lines().count() + 1;
    text.push_str("\n5 x7\n1 2\n");
    for ids in [IdMode::Auto, IdMode::Numeric] {
        let opts = EdgeListOptions {
            ids,
            weighted: Some(false),
            ..Default::default()
        };
        for (threads, chunk) in [(1, None), (4, Some(16)), (2, Some(1))] {
            let r = pool(threads).install(|| parse_in(text.as_bytes(), "f.txt", &opts, chunk));
            match (ids, r) {
                // Auto falls back to labels: `x7` is a label.
                (IdMode::Auto, Ok(p)) => assert!(p.into_edge_list().labels.is_some()),
                (IdMode::Numeric, Err(crate::Error::Parse(e))) => {
                    assert_eq!(e.line, Some(line), "{e}");
                    assert!(e.to_string().contains("f.txt"), "{e}");
                    assert!(e.to_string().contains("x7"), "{e}");
                }
                (_, r) => panic!("{ids:?}: {:?}", r.map(|p| p.into_edge_list())),
            }
        }
    }
    // A line with one field, deep in the file.
    let mut text = messy_text(600, 50, false, 4);
    let line = text.lines().count() + 1;
    text.push_str("\n17\n");
    for (threads, chunk) in [(1, None), (4, Some(16))] {
        let e = pool(threads)
            .install(|| parse_in(text.as_bytes(), "g.txt", &EdgeListOptions::default(), chunk))
            .map(|p| p.into_edge_list())
            .unwrap_err();
        let crate::Error::Parse(e) = e else {
            panic!("{e}")
        };
        assert_eq!(e.line, Some(line), "{e}");
    }
}

#[test]
fn swar_digits_match_the_plain_parser() {
    let cases: &[&[u8]] = &[
        b"0",
        b"7\t",
        b"12 ",
        b"123456\n",
        b"1234567 8",
        b"12345678",
        b"123456789\t1",
        b"9999999999999999999",
        b"99999999999999999999",
        b"00000000000000012",
        b"x1",
        b"",
        b"42",
        b"4294967296 ",
        b"18446744073709551615",
    ];
    for c in cases {
        let end = c
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(c.len());
        let want = if end == 0 || end > 19 {
            None
        } else {
            text::parse_u64(&c[..end]).map(|v| (v, end))
        };
        assert_eq!(scan_uint(c, 0), want, "{:?}", String::from_utf8_lossy(c));
        // And in the middle of a longer buffer.
        let mut b = b"ab".to_vec();
        b.extend_from_slice(c);
        b.extend_from_slice(b"\n0123456789");
        let got = scan_uint(&b, 2).map(|(v, p)| (v, p - 2));
        let end2 = b[2..].iter().position(|x| !x.is_ascii_digit()).unwrap();
        let want2 = if end2 == 0 || end2 > 19 {
            None
        } else {
            text::parse_u64(&b[2..2 + end2]).map(|v| (v, end2))
        };
        assert_eq!(got, want2, "{:?}", String::from_utf8_lossy(c));
    }
    for k in 0..200u64 {
        let v = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (k % 64);
        let s = format!("{v} ");
        let want = (s.len() - 1 <= 19).then_some((v, s.len() - 1));
        assert_eq!(scan_uint(s.as_bytes(), 0), want);
    }
}

/// The edge-list reader that parses as it reads steps aside for a file past
/// [`crate::io::ReadOptions::max_input_bytes`], so the graph readers refuse it too; under the
/// default limit the same file is read.
#[test]
fn graph_readers_keep_the_input_limit() {
    use crate::io::{is_input_limit, read_graph_limited, read_graph_with, ReadOptions};
    let text = b"0 1\n1 2\n2 0\n".repeat(450_000);
    let small = ReadOptions {
        max_input_bytes: Some(1 << 20),
    };
    let dir = std::env::temp_dir().join(format!("trident-el-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("g.el");
    std::fs::write(&f, &text).unwrap();
    let opts = EdgeListOptions::default();
    match read_graph_limited(&f, &opts, &small) {
        Err(e) => assert!(is_input_limit(&e), "{e}"),
        Ok(_) => panic!("a graph read past the limit"),
    }
    assert_eq!(read_graph_with(&f, &opts).unwrap().num_edges(), 3);
    std::fs::remove_dir_all(&dir).ok();
}

/// A byte range's labels parsed in pieces ([`parse_labels_part`], the distributed reader's
/// parse) are the whole-file label reader's, whatever the pieces: the labels in order of
/// first appearance, the edges on them, their weights and the self-loops, and an error in a
/// later piece names the file's line.
#[test]
fn labels_parsed_in_pieces_as_the_whole_file() {
    for (weighted, loops) in [(false, false), (true, false), (false, true)] {
        let text = messy_text(3000, 500, weighted, 11).replace("1\t", "a\t");
        let opts = EdgeListOptions {
            ids: IdMode::Labels,
            loop_only_nodes: loops,
            ..Default::default()
        };
        let want = model_labels(text.as_bytes(), "t", &opts).unwrap();
        assert_eq!(parse_labels(text.as_bytes(), "t", &opts, 0).unwrap(), want);
        let ws = Weights::decide(text.as_bytes(), &opts);
        for (threads, chunk) in [(1, None), (4, Some(64)), (3, Some(7)), (4, Some(1))] {
            let got = pool(threads)
                .install(|| parse_labels_part(text.as_bytes(), "t", &opts, (0, ws), chunk))
                .unwrap();
            let what = format!("{weighted} {loops}, {threads} threads, pieces of {chunk:?}");
            let labels: Vec<String> = got
                .labels
                .iter()
                .map(|l| String::from_utf8(l.to_vec()).unwrap())
                .collect();
            assert_eq!(Some(labels), want.labels, "{what}: labels");
            assert_eq!(
                (&got.src, &got.dst),
                (&want.src, &want.dst),
                "{what}: edges"
            );
            assert_eq!(got.weights, want.weights, "{what}: weights");
            assert_eq!(got.self_loops, want.self_loops, "{what}: self-loops");
        }
    }
    let mut bad = messy_text(2000, 300, false, 3);
    let line = bad.lines().count() + 1;
    bad.push_str("\nlonely\n1 2\n");
    for chunk in [None, Some(16)] {
        let e = parse_labels_part(
            bad.as_bytes(),
            "t",
            &EdgeListOptions::default(),
            (
                5,
                Weights::decide(bad.as_bytes(), &EdgeListOptions::default()),
            ),
            chunk,
        )
        .unwrap_err();
        let crate::Error::Parse(e) = e else {
            panic!("{e}")
        };
        assert_eq!(e.line, Some(line + 5), "{e}");
    }
}

/// The label reader's model: one line after another on one thread, each new label taking
/// the next number (what the parallel reader must give).
fn model_labels<'a>(buf: &'a [u8], name: &str, opts: &EdgeListOptions) -> Result<EdgeList> {
    // A seeded hasher with full final mixing (foldhash's quality variant): labels chosen to
    // collide (`v0000000`, `v0000001`, … under a hasher without final mixing) cost no more
    // than any others, so every file of labels loads in linear time.
    let mut index: HashMap<&'a [u8], u32, foldhash::quality::RandomState> = HashMap::default();
    let mut labels: Vec<String> = Vec::new();
    let mut src = Vec::new();
    let mut dst = Vec::new();
    let mut wts = Vec::new();
    let mut self_loops = 0usize;
    let mut any = false;
    let mut ws = Weights::new(opts);
    let mut intern = |t: &'a [u8], ln: usize| -> Result<u32> {
        if let Some(&k) = index.get(t) {
            return Ok(k);
        }
        let s = std::str::from_utf8(t).map_err(|_| {
            perr(
                name,
                Some(ln),
                K::BadValue,
                format!("label {} is not valid UTF-8", text::show(t)),
            )
        })?;
        let k = u32::try_from(labels.len())
            .map_err(|_| perr(name, Some(ln), K::IndexOutOfRange, "more than 2^32 nodes"))?;
        labels.push(s.to_owned());
        index.insert(t, k);
        Ok(k)
    };
    for (ln, line) in Lines::new(buf) {
        let Some((a, b, w)) = fields(line, &|| ln, name, &mut ws)? else {
            continue;
        };
        any = true;
        if a == b {
            self_loops += 1;
            if opts.loop_only_nodes {
                intern(a, ln)?;
            }
            continue;
        }
        let u = intern(a, ln)?;
        let v = intern(b, ln)?;
        src.push(u);
        dst.push(v);
        if ws.weighted() {
            wts.push(w.unwrap_or(1.0));
        }
    }
    if !any {
        return Err(perr(name, None, K::Empty, "no edges in the file"));
    }
    Ok(EdgeList {
        num_nodes: labels.len(),
        src,
        dst,
        weights: ws.weighted().then_some(wts),
        labels: Some(labels),
        self_loops,
        notes: Vec::new(),
    })
}

/// A weighted file's header (STRING's `protein1 protein2 combined_score`: ids and weight not
/// numbers) is skipped with a note in the `Auto` and `Labels` modes, over labels and over
/// integers; a header whose third field is a number is a data line; a weight column turned
/// off leaves the line to the id rules.
#[test]
fn a_weighted_header_is_skipped() {
    let body = "9606.ENSP1 9606.ENSP2 800\n9606.ENSP2 9606.ENSP3 700\n9606.ENSP3 9606.ENSP1 900\n";
    for ids in [IdMode::Auto, IdMode::Labels] {
        let opts = EdgeListOptions {
            ids,
            ..Default::default()
        };
        let text = format!("# STRING\nprotein1 protein2 combined_score\n{body}");
        let el = parse_edges(text.as_bytes(), "s.txt", &opts).unwrap();
        let plain = parse_edges(body.as_bytes(), "s.txt", &opts).unwrap();
        assert_eq!(
            (&el.labels, &el.src, &el.dst),
            (&plain.labels, &plain.src, &plain.dst)
        );
        assert_eq!(el.weights, Some(vec![800.0, 700.0, 900.0]), "{ids:?}");
        assert_eq!(
            el.notes,
            vec![
                "s.txt:2: skipped the header line \"protein1 protein2 combined_score\"".to_string()
            ],
            "{ids:?}"
        );
        // A weight that parses but is not finite: a bad data line, not a header.
        let nan = format!("p q nan\n{body}");
        let e = parse_edges(nan.as_bytes(), "s.txt", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s.txt:1:") && e.contains("not a finite number"),
            "{e}"
        );
        // A third field that is a number: an edge.
        let edge = format!("p q 5\n{body}");
        let el = parse_edges(edge.as_bytes(), "s.txt", &opts).unwrap();
        assert_eq!(el.num_nodes, 5, "{ids:?}");
        assert!(el.notes.is_empty(), "{ids:?}");
    }
    // Over integers the header was already skipped; with the weight column off, a label file
    // keeps the line as an edge.
    let ints = "source target weight\n1 2 0.5\n2 3 0.25\n";
    let el = parse_edges(ints.as_bytes(), "i.txt", &EdgeListOptions::default()).unwrap();
    assert_eq!((el.num_nodes, el.notes.len()), (3, 1));
    let off = EdgeListOptions {
        weighted: Some(false),
        ..Default::default()
    };
    let text = format!("protein1 protein2 combined_score\n{body}");
    let el = parse_edges(text.as_bytes(), "s.txt", &off).unwrap();
    assert_eq!(el.num_nodes, 5);
}

/// A bad line after a skipped header is named by its own line of the file: after a
/// weighted labels header (the line numbers used to start again after it, one short), and
/// after a header over integers in the `Numeric` mode (the header used to be blamed) and in
/// `Auto` (the header used to be read as the first data line, then the weight column
/// decided by it).
#[test]
fn a_bad_line_after_a_header_names_its_own_line() {
    let err = |text: &str, ids: IdMode| {
        let opts = EdgeListOptions {
            ids,
            ..Default::default()
        };
        parse_edges(text.as_bytes(), "h.txt", &opts)
            .unwrap_err()
            .to_string()
    };
    let string = "protein1 protein2 combined_score\na b 1\nc d 1\ne f 2\nc d nan\n";
    for ids in [IdMode::Auto, IdMode::Labels] {
        let e = err(string, ids);
        assert_eq!(
            e, "h.txt:5: weight \"nan\" is not a finite number",
            "{ids:?}"
        );
    }
    let ints = "source target\n1 2\n2 3\nlonely\n";
    for ids in [IdMode::Auto, IdMode::Numeric] {
        let e = err(ints, ids);
        assert!(e.starts_with("h.txt:4: "), "{ids:?}: {e}");
    }
    let weighted = "source target\n7 8 nan\n8 9 1\n";
    for ids in [IdMode::Auto, IdMode::Numeric] {
        let e = err(weighted, ids);
        assert_eq!(
            e, "h.txt:2: weight \"nan\" is not a finite number",
            "{ids:?}"
        );
    }
    // A label after the header: every line is a label line in `Auto`, the header an edge.
    let el = parse_edges(
        b"source target\n1 2\nx 3\n",
        "h.txt",
        &EdgeListOptions::default(),
    )
    .unwrap();
    assert_eq!(el.num_nodes, 6);
    assert!(el.notes.is_empty());
    // Nothing after a line that reads like a header: it is the file's one edge, between
    // labels (or a loop-only node), in `Auto` as in `Labels`.
    for (text, nodes) in [("a b\n", 2), ("x\tx\n", 1), ("a b\n# c\n\n", 2)] {
        for ids in [IdMode::Auto, IdMode::Labels] {
            let opts = EdgeListOptions {
                ids,
                loop_only_nodes: true,
                ..Default::default()
            };
            let el = parse_edges(text.as_bytes(), "h.txt", &opts).unwrap();
            assert_eq!(el.num_nodes, nodes, "{text:?}, {ids:?}");
        }
    }
}

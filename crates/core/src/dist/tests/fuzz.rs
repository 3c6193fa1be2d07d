//! Random edge lists read in byte ranges against one process: files drawn from the
//! reader's whole grammar (integer ids, labels, a label late in an integer file, weights in
//! every notation, a byte-order mark, headers, comments, blank and whitespace-only lines, CRLF, leading and
//! trailing blanks, self-loops, repeats, lines longer than a rank's range, a missing last
//! line break, ids with a plus or leading zeros or past 32 and 64 bits) and, in some, one bad
//! line (one field, too many, a NUL byte, a negative id, an infinite, zero or negative
//! weight). Each file is read by one process and at 2, 3
//! and 5 thread-ranks in every id mode that applies: a file one process reads gives its
//! graph (nodes in its order, names, degrees, edges, self-loops) and its `M_G` part on
//! every rank, bit for bit; a file one process refuses fails some rank with one process's
//! message, line and all.

use super::{read_errors, same_as_one_process, same_as_one_process_by, threads};
use crate::dist::graph::read_graph_weighted;
use crate::dist::mcl::transition_part;
use crate::dist::Phases;
use crate::io::{self, EdgeListOptions, IdMode, ReadOptions};
use crate::mcl::{MclOptions, Transition, TransitionPart};

/// Random files per test in CI (thousands were read while the tests were written: raise it
/// to search further).
const FILES: u64 = 200;

/// SplitMix64: a reproducible stream of draws.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True one time in `n`.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// How a random file names its nodes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Ids {
    Integers,
    Labels,
    /// Integers, then one label somewhere (the whole file is then labels in `Auto`).
    LateLabel,
}

/// A random file (see the module docs) and whether it has integer ids only.
fn random_file(d: &mut Draws) -> (String, Ids) {
    let ids = match d.below(3) {
        0 => Ids::Integers,
        1 => Ids::Labels,
        _ => Ids::LateLabel,
    };
    let weighted = d.one_in(3);
    let nodes = 3 + d.below(120);
    // A few tiny files (a line that reads like a header may be all there is).
    let lines = if d.one_in(12) {
        1 + d.below(3)
    } else {
        5 + d.below(300)
    };
    let crlf = d.below(3); // 0: LF, 1: CRLF, 2: mixed
    let long = d.one_in(6).then(|| 200 + d.below(2000));
    let late = d.below(lines);
    // One bad line in about one file of five, somewhere.
    let bad = d.one_in(5).then(|| d.below(lines));
    let label = |d: &mut Draws, u: usize| -> String {
        match (u + d.below(2)) % 5 {
            0 => format!("{:03}", u),
            1 => format!("P{u:05}"),
            2 => format!("zé{u}"),
            3 => format!("{u}x"),
            _ => format!("n{u}"),
        }
    };
    let id = |d: &mut Draws, u: usize, line: usize| -> String {
        match ids {
            // Now and then a leading plus or zeros, or an id past 32 bits (or past 64).
            Ids::Integers => match d.below(5000) {
                0 => format!("+{u}"),
                1 => format!("00{u}"),
                // (Not beside a bad line: one error a file, so that one process and the
                // ranks name the same.)
                2 if bad.is_none() => d
                    .pick(&["4294967296", "18446744073709551615", "18446744073709551616"])
                    .into(),
                _ => u.to_string(),
            },
            Ids::Labels => {
                if long.is_some_and(|_| u == 0) {
                    format!("L{}", "o".repeat(long.unwrap_or(0)))
                } else {
                    label(d, u % 40)
                }
            }
            Ids::LateLabel if line == late => format!("late{u}"),
            Ids::LateLabel => u.to_string(),
        }
    };
    // A UTF-8 byte-order mark in one file of eight.
    let mut s = String::from(if d.one_in(8) { "\u{feff}" } else { "" });
    if d.one_in(5) {
        s.push_str(if weighted {
            d.pick(&["source target weight", "protein1 protein2 combined_score"])
        } else {
            d.pick(&["source target", "from\tto"])
        });
        s.push('\n');
    }
    let end = |d: &mut Draws, s: &mut String| {
        let crlf = crlf == 1 || (crlf == 2 && d.one_in(2));
        s.push_str(if crlf { "\r\n" } else { "\n" });
    };
    for line in 0..lines {
        if bad == Some(line) {
            s.push_str(d.pick(&[
                "lonely",
                "1 2 3 4 5",
                "a b c",
                "7 8 nan",
                "x\ty\tinf",
                "3\u{0}4 5",
                "-1 2",
                "1 2 1e400",
                "1 2 0",
                "1 2 -3",
            ]));
            end(d, &mut s);
            continue;
        }
        match d.below(30) {
            0 => s.push_str(d.pick(&["# a comment", "% another", "  # indented", "#"])),
            1 => s.push_str(d.pick(&["", " ", "\t \t"])),
            _ => {
                let u = d.below(nodes);
                let v = if d.one_in(15) { u } else { d.below(nodes) };
                if d.one_in(10) {
                    s.push_str(d.pick(&[" ", "\t", "  "]));
                }
                s.push_str(&id(d, u, line));
                s.push_str(d.pick(&[" ", "\t", "  ", " \t "]));
                s.push_str(&id(d, v, line));
                if weighted {
                    s.push_str(d.pick(&[" ", "\t"]));
                    let w = 1 + d.below(1000);
                    s.push_str(&match d.below(9) {
                        0 => w.to_string(),
                        6 => format!("+{w}"),
                        7 => format!(".{w}"),
                        8 => format!("{w}."),
                        1 => format!("{}.5", w),
                        2 => format!("{w}e-3"),
                        3 => format!("{}E+2", w as f64 / 7.0),
                        4 => format!("0.{w:03}"),
                        _ => format!("{}", w as f64 * 1.0e300),
                    });
                }
                if d.one_in(10) {
                    s.push_str(d.pick(&[" ", "\t", " \t"]));
                }
            }
        }
        if line + 1 < lines || d.one_in(2) {
            end(d, &mut s);
        }
    }
    (s, ids)
}

/// `bytes` gzipped.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// Every rank's part of `M_G` (`part`: `None` where the file is not read in ranges) is one
/// process's `Transition::new_part` of `one`, bit for bit, or fails as it fails.
fn same_parts(
    what: &str,
    one: &crate::Graph,
    p: usize,
    part: impl Fn(&dyn crate::dist::Comm, &MclOptions) -> crate::Result<Option<TransitionPart>> + Sync,
) {
    let mcl = MclOptions::default();
    for (rank, got) in threads::run(p, |c| part(c, &mcl)).into_iter().enumerate() {
        match (got, Transition::new_part(one, &mcl, p, rank)) {
            (Ok(None), _) => {}
            (Ok(Some(got)), Ok(want)) => assert!(got == want, "{what}, rank {rank}: another part"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}, rank {rank}"),
            (a, b) => panic!(
                "{what}, rank {rank}: {:?} against one process's {:?}",
                a.map(|_| ()),
                b.map(|_| ())
            ),
        }
    }
}

/// Random files read in byte ranges as one process reads them (see the module docs).
#[test]
fn random_files_read_in_ranges_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-dist-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ro = ReadOptions::default();
    let files = FILES;
    let (mut read, mut refused) = (0, 0);
    for seed in 0..files {
        let mut d = Draws(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x7472_6964);
        let (text, ids) = random_file(&mut d);
        let plain = dir.join(format!("f{seed}.txt"));
        std::fs::write(&plain, &text).unwrap();
        // Every third file gzipped (read in pieces of its decompressed text).
        let f = if seed % 3 == 0 {
            let gz = dir.join(format!("f{seed}.txt.gz"));
            std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
            gz
        } else {
            plain
        };
        let mut modes = vec![IdMode::Auto, IdMode::Labels];
        if ids == Ids::Integers {
            modes.push(IdMode::Numeric);
        }
        for ids in modes {
            let opts = EdgeListOptions {
                ids,
                loop_only_nodes: d.one_in(2),
                weighted: [None, None, Some(false)][d.below(3)],
            };
            let what = |p: usize| format!("file {seed} ({}), {opts:?}, {p} ranks", f.display());
            let one = io::read_graph_limited(&f, &opts, &ro);
            for p in [2, 3, 5] {
                match &one {
                    Err(e) => {
                        let errs = read_errors(p, &f, &opts);
                        let e = e.to_string();
                        assert!(
                            errs.contains(&e),
                            "{}: {errs:?}; one process: {e}\n{text}",
                            what(p)
                        );
                    }
                    Ok(one) => {
                        same_as_one_process(&f, &opts, p)
                            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", what(p)));
                        // R-MCL's columns, weights and all, built from the ranges.
                        same_parts(&what(p), one, p, |c, mcl| {
                            let Some(g) = read_graph_weighted(c, &f, &opts, &ro)? else {
                                return Ok(None);
                            };
                            transition_part(c, &g, mcl, &mut Phases::default()).map(Some)
                        });
                    }
                }
            }
            match one {
                Ok(_) => read += 1,
                Err(_) => refused += 1,
            }
        }
    }
    // The draws cover both outcomes.
    assert!(
        read > files as usize && refused > 10,
        "{read} read, {refused} refused"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A random square coordinate Matrix Market file: pattern, real or integer; general,
/// symmetric or skew-symmetric; comments, CRLF, blanks around fields, repeats, diagonal
/// entries, a missing last line break, and in some one flaw (an entry out of range, a
/// missing value, a wrong entry count, a field too many).
fn random_mtx(d: &mut Draws) -> String {
    let field = d.pick(&["pattern", "real", "integer"]);
    let symmetry = match field {
        "pattern" => d.pick(&["general", "symmetric"]),
        _ => d.pick(&["general", "symmetric", "skew-symmetric"]),
    };
    let n = 2 + d.below(80);
    let entries = 1 + d.below(250);
    let crlf = d.one_in(3);
    let flaw = d.one_in(5).then(|| d.below(4));
    let at = d.below(entries);
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = format!("%%MatrixMarket matrix coordinate {field} {symmetry}{eol}");
    for _ in 0..d.below(3) {
        s.push_str(d.pick(&["% a comment", "%", "% another one"]));
        s.push_str(eol);
    }
    let count = if flaw == Some(2) {
        entries + 1
    } else {
        entries
    };
    s.push_str(&format!("{n} {n} {count}{eol}"));
    for e in 0..entries {
        let (mut i, mut j) = (1 + d.below(n), 1 + d.below(n));
        if symmetry != "general" && i < j {
            std::mem::swap(&mut i, &mut j);
        }
        if symmetry == "skew-symmetric" && i == j {
            i = if i == n { i - 1 } else { i + 1 };
            if i < j {
                std::mem::swap(&mut i, &mut j);
            }
        }
        if flaw == Some(0) && e == at {
            i = n + 1;
        }
        if d.one_in(12) {
            s.push(' ');
        }
        s.push_str(&format!("{i}{}{j}", d.pick(&[" ", "\t", "  "])));
        if field != "pattern" && !(flaw == Some(1) && e == at) {
            let sign = if d.one_in(3) { "-" } else { "" };
            let v = 1 + d.below(500);
            s.push(' ');
            s.push_str(&match (field, d.below(3)) {
                ("integer", _) => format!("{sign}{v}"),
                (_, 0) => format!("{sign}{v}.25"),
                (_, 1) => format!("{sign}{v}e-2"),
                _ => format!("{sign}{}", v as f64 / 3.0),
            });
        }
        if flaw == Some(3) && e == at {
            s.push_str(" 9 9");
        }
        if d.one_in(12) {
            s.push('\t');
        }
        if e + 1 < entries || d.one_in(2) {
            s.push_str(eol);
        }
    }
    s
}

/// Random Matrix Market files read in byte ranges as one process reads them: the graph
/// and every rank's `M_G` part (the values as weights), or one process's error.
#[test]
fn random_matrix_market_files_read_in_ranges_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-dist-fuzz-mtx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ro = ReadOptions::default();
    let files = FILES;
    let opts = EdgeListOptions {
        loop_only_nodes: true,
        ..EdgeListOptions::default()
    };
    let (mut read, mut refused) = (0, 0);
    for seed in 0..files {
        let mut d = Draws(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x006d_7478);
        let text = random_mtx(&mut d);
        let f = dir.join(format!("m{seed}.mtx"));
        std::fs::write(&f, &text).unwrap();
        let what = |p: usize| format!("file {seed} ({}), {p} ranks", f.display());
        let one = io::read_graph_limited(&f, &opts, &ro);
        for p in [2, 3, 5] {
            match &one {
                Err(e) => {
                    let errs = read_errors(p, &f, &opts);
                    let e = e.to_string();
                    assert!(
                        errs.contains(&e),
                        "{}: {errs:?}; one process: {e}\n{text}",
                        what(p)
                    );
                }
                Ok(one) => {
                    same_as_one_process(&f, &opts, p)
                        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", what(p)));
                    same_parts(&what(p), one, p, |c, mcl| {
                        let g = read_graph_weighted(c, &f, &opts, &ro)?.expect("read in ranges");
                        transition_part(c, &g, mcl, &mut Phases::default()).map(Some)
                    });
                }
            }
        }
        match one {
            Ok(_) => read += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(
        read > files as usize / 2 && refused > 5,
        "{read} read, {refused} refused"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// One process reads each random file (see the module docs) alike from the file (the
/// streamed parse where it applies) and from its gzip copy (the whole-file parse), one file
/// in five repeated past the streamed reader's pieces: the same graph and notes, or the
/// same error.
#[test]
fn random_files_read_alike_streamed_and_whole() {
    let dir = std::env::temp_dir().join(format!("trident-io-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ro = ReadOptions::default();
    let mut compared = 0;
    for seed in 0..FILES {
        let mut d = Draws(seed.wrapping_mul(0xd134_2543_de82_ef95) ^ 0x0073_7472);
        let (mut text, ids) = random_file(&mut d);
        if seed % 5 == 0 {
            // Past the streamed reader's pieces (1 MiB): the lines repeated, each copy
            // ending in a line break.
            if !text.ends_with('\n') {
                text.push('\n');
            }
            let body = text.clone();
            while text.len() < 3 << 20 {
                text.push_str(&body);
            }
        }
        let plain = dir.join(format!("r{seed}.txt"));
        let gz = dir.join(format!("r{seed}.txt.gz"));
        std::fs::write(&plain, &text).unwrap();
        std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
        let mut modes = vec![IdMode::Auto, IdMode::Labels];
        if ids == Ids::Integers {
            modes.push(IdMode::Numeric);
        }
        for ids in modes {
            let opts = EdgeListOptions {
                ids,
                loop_only_nodes: d.one_in(2),
                weighted: [None, None, Some(true), Some(false)][d.below(4)],
            };
            let read = |p: &std::path::Path| {
                io::read_graph_limited(p, &opts, &ro)
                    .map(|g| {
                        let notes = g.notes().to_vec();
                        (g, notes)
                    })
                    .map_err(|e| e.to_string())
            };
            let (a, b) = (read(&plain), read(&gz));
            let name =
                |s: String| s.replace(&gz.display().to_string(), &plain.display().to_string());
            let b = b
                .map(|(g, notes)| (g, notes.into_iter().map(name).collect::<Vec<_>>()))
                .map_err(name);
            assert!(
                a == b,
                "file {seed}, {opts:?}: plain {:?}, gzip {:?}\n{text}",
                a.as_ref().map(|x| &x.1),
                b.as_ref().map(|x| &x.1)
            );
            compared += 1;
        }
    }
    assert!(compared > FILES as usize);
    std::fs::remove_dir_all(&dir).ok();
}

/// A line longer than the text limit ([`crate::io::MAX_LINE_BYTES`]) fails in byte ranges as
/// it fails one process, wherever it lies: in integer and labelled files and in a Matrix
/// Market file, first, in the middle and last.
#[test]
fn a_line_over_the_limit_fails_in_ranges_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-dist-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let long = "7".repeat(crate::io::MAX_LINE_BYTES + 10);
    let body: String = (0..20_000)
        .map(|i| format!("{} {}\n", i % 997, i % 991))
        .collect();
    let labels: String = (0..20_000)
        .map(|i| format!("a{} b{}\n", i % 997, i % 991))
        .collect();
    for (k, text) in [
        format!("{long} 1\n{body}"),
        format!("{body}{long} 1\n{body}"),
        format!("{body}1 {long}"),
        format!("{labels}x {long}\n{labels}"),
        format!(
            "%%MatrixMarket matrix coordinate pattern general\n999 999 40001\n{body}1 {long}\n{body}"
        ),
    ]
    .iter()
    .enumerate()
    {
        let f = dir.join(format!("long{k}.txt"));
        std::fs::write(&f, text).unwrap();
        let opts = EdgeListOptions::default();
        let one = io::read_graph_limited(&f, &opts, &ReadOptions::default())
            .err()
            .map(|e| e.to_string())
            .expect("one process refuses the long line");
        for p in [2, 3] {
            let errs = read_errors(p, &f, &opts);
            assert!(errs.contains(&one), "case {k}, {p} ranks: {errs:?}; one process: {one}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Random gzip files read in pieces of their decompressed text (`graph::read_gz_in`, pieces
/// as small as 16 bytes, so that each rank holds many, every `p`-th): integer files give
/// one process's graph and `M_G` parts, weights and all; bad ones one process's error;
/// label files are left to the whole-file readers (`None` on every rank).
#[test]
fn random_gzip_files_read_in_pieces_as_one_process() {
    use crate::dist::graph::read_gz_in;
    let dir = std::env::temp_dir().join(format!("trident-dist-fuzz-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ro = ReadOptions::default();
    let (mut read, mut refused, mut left) = (0, 0, 0);
    for seed in 0..FILES {
        let mut d = Draws(seed.wrapping_mul(0x5851_f42d_4c95_7f2d) ^ 0x0067_7a69);
        // Integer files mostly (labels are left to the whole-file readers).
        let (mut text, mut ids) = random_file(&mut d);
        while ids != Ids::Integers && !d.one_in(8) {
            (text, ids) = random_file(&mut d);
        }
        let f = dir.join(format!("g{seed}.txt.gz"));
        std::fs::write(&f, gzip(text.as_bytes())).unwrap();
        let piece = [16, 64, 300, 4096, 1 << 16][d.below(5)];
        let opts = EdgeListOptions {
            ids: if ids == Ids::Integers && d.one_in(3) {
                IdMode::Numeric
            } else {
                IdMode::Auto
            },
            loop_only_nodes: d.one_in(2),
            weighted: [None, None, Some(false)][d.below(3)],
        };
        let what = |p: usize| format!("file {seed}, {opts:?}, pieces of {piece}, {p} ranks");
        let one = io::read_graph_limited(&f, &opts, &ro);
        let p = [2, 3, 5][d.below(3)];
        let mcl = MclOptions::default();
        let got = threads::run(p, |c| {
            let Some(g) = read_gz_in(c, &f, &opts, &ro, true, piece)? else {
                return Ok(None);
            };
            let part = transition_part(c, &g, &mcl, &mut Phases::default());
            Ok(Some((g.num_nodes(), g.num_edges(), part)))
        });
        match &one {
            Err(e) => {
                let e = e.to_string();
                let errs: Vec<String> = got
                    .iter()
                    .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
                    .collect();
                if got.iter().all(|r| matches!(r, Ok(None))) {
                    left += 1;
                } else {
                    assert!(
                        errs.contains(&e),
                        "{}: {errs:?}; one process: {e}\n{text}",
                        what(p)
                    );
                }
                refused += 1;
            }
            Ok(one) => {
                let mut pieces = false;
                for (rank, r) in got.into_iter().enumerate() {
                    let Some((n, m, part)) = r.unwrap_or_else(|e| panic!("{}: {e}", what(p)))
                    else {
                        left += 1;
                        continue;
                    };
                    pieces = true;
                    assert_eq!(
                        (n, m as usize),
                        (one.num_nodes(), one.num_edges()),
                        "{}",
                        what(p)
                    );
                    match (part, Transition::new_part(one, &mcl, p, rank)) {
                        (Ok(part), Ok(want)) => {
                            assert!(part == want, "{}, rank {rank}: another part", what(p))
                        }
                        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                        (a, b) => panic!("{}: {:?} against {:?}", what(p), a.err(), b.err()),
                    }
                }
                if pieces {
                    same_as_one_process_by(&f, &opts, p, |c| {
                        read_gz_in(c, &f, &opts, &ro, false, piece)?
                            .ok_or_else(|| crate::Error::invalid("test", "left to the whole read"))
                    })
                    .unwrap_or_else(|e| panic!("{}: {e}\n{text}", what(p)));
                    read += 1;
                }
            }
        }
    }
    assert!(
        read > FILES as usize / 3 && refused > 10 && left > 0,
        "{read} read, {refused} refused, {left} left"
    );
    std::fs::remove_dir_all(&dir).ok();
}

//! Labelled edge lists (and headed ones) read in byte ranges, against one process.

use super::{read_errors, same_as_one_process, threads};
use crate::dist::graph::read_graph;
use crate::io::{self, EdgeListOptions, IdMode, ReadOptions};

/// Labelled files read in byte ranges at 2 to 4 thread-ranks give one process's graph:
/// the same nodes in the same order (labels numbered in order of first appearance, rank 0
/// naming them), degrees, edges and self-loops, in the `Labels` and `Auto` modes, with and
/// without loop-only nodes: labels that look like numbers (`017` is not `17`), UTF-8,
/// comments, CRLF, blank lines, repeats both ways, self-loops, a label whose only line is a
/// self-loop; a file of integers whose last line holds a label (all labels then); a header
/// line over labels (a data line then, as one process reads it) and over integers
/// (skipped, with one process's note); a weighted file's header whose weight is not a number
/// (STRING's, skipped with the note); a tiny file that leaves ranks without lines.
#[test]
fn labelled_files_read_in_ranges_as_one_process() {
    let dir = std::env::temp_dir().join(format!("trident-dist-labels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap();
        dir.join(name)
    };
    let label = |u: u64| match u % 7 {
        0 => format!("{:03}", u % 50),
        1 => format!("{}", u % 50),
        2 => format!("zé{u}"),
        _ => format!("P{:05}", u * 7919 % 100_003),
    };
    let mut quirks = String::from("# comment\r\n% another\r\n\r\n");
    for i in 0..4000u64 {
        let (u, v) = (i * 31 % 1201, i * 17 % 1187 + 3);
        quirks.push_str(&format!("{}\t{}\r\n", label(u), label(v)));
        if i % 90 == 0 {
            quirks.push_str(&format!(
                "{} {}\n{} {}\n\n",
                label(v),
                label(u),
                label(u),
                label(u)
            ));
        }
    }
    quirks.push_str("alone alone\n");
    let mut tail = String::new();
    for i in 0..3000u64 {
        tail.push_str(&format!("{} {}\n", i * 7 % 1013, i * 13 % 997 + 5));
    }
    tail.push_str("5 x\n");
    let mut headed_labels = String::from("source target\n");
    let mut headed_ints = String::from("source target\n");
    for i in 0..2000u64 {
        headed_labels.push_str(&format!("n{} n{}\n", i % 301, i * 11 % 307));
        headed_ints.push_str(&format!("{} {}\n", i % 301, i * 11 % 307));
    }
    // STRING's layout: a header whose weight is not a number (skipped), weighted labels.
    let mut string = String::from("protein1 protein2 combined_score\n");
    for i in 0..2500u64 {
        string.push_str(&format!(
            "9606.P{} 9606.P{} {}\n",
            i % 401,
            i * 13 % 409,
            i % 999 + 1
        ));
    }
    let files = [
        write("quirks.txt", &quirks),
        write("tail.txt", &tail),
        write("headed_labels.txt", &headed_labels),
        write("headed_ints.txt", &headed_ints),
        write("tiny.txt", "a b\nb c\nc a\nc d\n"),
        write("string.txt", &string),
    ];
    for f in &files {
        for ids in [IdMode::Auto, IdMode::Labels] {
            for loop_only_nodes in [false, true] {
                let opts = EdgeListOptions {
                    ids,
                    loop_only_nodes,
                    ..EdgeListOptions::default()
                };
                let one = io::read_graph_limited(f, &opts, &ReadOptions::default()).unwrap();
                for p in 1..=4 {
                    let what = format!("{}, {ids:?}, {p} ranks", f.display());
                    let parallel = same_as_one_process(f, &opts, p).expect(&what);
                    assert_eq!(parallel, p > 1, "{what}: read in ranges");
                    for g in threads::run(p, |c| read_graph(c, f, &opts, &ReadOptions::default())) {
                        let header = |n: &[String]| -> Vec<String> {
                            n.iter().filter(|x| x.contains("header")).cloned().collect()
                        };
                        assert_eq!(header(g.unwrap().notes()), header(one.notes()), "{what}");
                    }
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Bad labelled files fail over ranks as in one process: invalid UTF-8 deep in the file (the
/// error names its line), a line with one field, and labels in the `Numeric` mode.
#[test]
fn bad_labelled_files_fail_in_ranges() {
    let dir = std::env::temp_dir().join(format!("trident-dist-badlab-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut body: Vec<u8> = Vec::new();
    for i in 0..3000 {
        body.extend_from_slice(format!("a{i} b{}\n", i % 77).as_bytes());
    }
    let mut utf = body.clone();
    utf.extend_from_slice(b"ok \xff\xfe\n");
    utf.extend_from_slice(&body);
    let mut short = body.clone();
    short.extend_from_slice(b"lonely\n");
    short.extend_from_slice(&body);
    let cases = [
        ("utf.txt", utf, IdMode::Labels, "is not valid UTF-8"),
        ("short.txt", short, IdMode::Auto, "needs two node ids"),
        (
            "numeric.txt",
            body,
            IdMode::Numeric,
            "not a non-negative integer",
        ),
    ];
    for (name, bytes, ids, says) in cases {
        let f = dir.join(name);
        std::fs::write(&f, bytes).unwrap();
        let opts = EdgeListOptions {
            ids,
            ..EdgeListOptions::default()
        };
        let one = io::read_graph_limited(&f, &opts, &ReadOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(one.contains(says), "{name}: one process: {one}");
        let line = one.split(':').nth(1).unwrap_or_default().to_string();
        for p in 2..=4 {
            let errs = read_errors(p, &f, &opts);
            assert!(
                errs.iter().any(|e| e.contains(says) && e.contains(&line)),
                "{name}, {p} ranks: {errs:?}; one process: {one}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

//! The parallel graph build and the parser's wide-id fast path: several edge chunks and
//! buckets in a multi-threaded pool against a sort-and-dedup model, and ids of 8 to 15
//! digits through the reader.

use trident_core::io::{self, EdgeListOptions, IdMode};
use trident_core::Graph;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Sorted, deduplicated directed edges (both directions) with their largest weight, and
/// the self-loop count.
fn model(edges: &[(usize, usize, f64)]) -> (Vec<(u32, u32, f64)>, usize) {
    let mut d: Vec<(u32, u32, f64)> = Vec::with_capacity(edges.len() * 2);
    let mut loops = 0;
    for &(u, v, w) in edges {
        if u == v {
            loops += 1;
        } else {
            d.push((u as u32, v as u32, w));
            d.push((v as u32, u as u32, w));
        }
    }
    d.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.total_cmp(&a.2)));
    d.dedup_by_key(|e| (e.0, e.1));
    (d, loops)
}

fn check(g: &Graph, n: usize, edges: &[(usize, usize, f64)], weighted: bool) {
    let (want, loops) = model(edges);
    assert_eq!(g.num_nodes(), n);
    assert_eq!(g.self_loops_dropped(), loops);
    assert_eq!(g.adjacency().len(), want.len());
    let mut k = 0;
    for u in 0..n {
        let row = g.neighbors(u);
        for (j, &c) in row.iter().enumerate() {
            assert_eq!((want[k].0, want[k].1), (u as u32, c), "row {u}");
            if weighted {
                assert_eq!(g.neighbor_weights(u).unwrap()[j], want[k].2, "row {u}");
            }
            k += 1;
        }
    }
    assert_eq!(k, want.len());
}

fn random_edges(n: usize, m: usize, seed: u64) -> Vec<(usize, usize, f64)> {
    let mut r = Rng(seed);
    let mut e: Vec<(usize, usize, f64)> = (0..m)
        .map(|_| {
            let u = (r.next() % n as u64) as usize;
            // Some self-loops and many duplicates.
            let v = if r.next().is_multiple_of(50) {
                u
            } else {
                (r.next() % n as u64) as usize
            };
            (u, v, (r.next() % 7) as f64 - 3.0)
        })
        .collect();
    let dup: Vec<_> = e[..m / 3]
        .iter()
        .map(|&(u, v, w)| (v, u, w + 0.5))
        .collect();
    e.extend(dup);
    e
}

#[test]
fn parallel_build_matches_the_model() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    pool.install(|| {
        // Many edges per node (few buckets) and few (many buckets); above 2 x 2^16 edges,
        // so that passes 1 and 2 run in several chunks. Unweighted, the first packs a row
        // and a column into one u32 in pass 2, the second (19-bit columns, 2^16-row
        // buckets) cannot.
        for (n, m, seed) in [(3_000, 150_000, 1), (400_000, 140_000, 2)] {
            let e = random_edges(n, m, seed);
            let g = Graph::from_weighted_edges(n, e.iter().copied()).unwrap();
            check(&g, n, &e, true);
            let g = Graph::from_edges(n, e.iter().map(|&(u, v, _)| (u, v))).unwrap();
            let e1: Vec<_> = e.iter().map(|&(u, v, _)| (u, v, 1.0)).collect();
            check(&g, n, &e1, false);
        }
    });
}

#[test]
fn wide_ids_take_the_fast_path_and_keep_their_values() {
    // Ids of 8 to 15 digits, tab and space separated, CRLF on some lines.
    let ids = [
        12_345_678u64,
        99_999_999,
        100_000_000,
        4_294_967_294,
        4_294_967_295,
        4_294_967_296,
        123_456_789_012_345,
        999_999_999_999_999,
    ];
    let mut text = String::new();
    for (k, &a) in ids.iter().enumerate() {
        for &b in &ids[k + 1..] {
            let sep = if (a + b).is_multiple_of(2) { "\t" } else { " " };
            let nl = if a.is_multiple_of(3) { "\r\n" } else { "\n" };
            text.push_str(&format!("{a}{sep}{b}{nl}"));
        }
    }
    // Padding lines so that the wide lines are not all in the last bytes of the input.
    for _ in 0..8 {
        text.push_str("12345678\t99999999\n");
    }
    let g = io::parse_edge_list(text.as_bytes(), "wide.txt", &EdgeListOptions::default()).unwrap();
    assert_eq!(g.num_nodes(), ids.len());
    let labels: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    assert_eq!(g.labels().unwrap(), &labels[..]);
    for u in 0..ids.len() {
        assert_eq!(g.degree(u), ids.len() - 1, "node {}", ids[u]);
    }

    // Numeric mode: ids from 2^32 - 1 on are refused with their line.
    let opts = EdgeListOptions {
        ids: IdMode::Numeric,
        ..Default::default()
    };
    let text = "1\t2\n3\t4\n5\t4294967295\n6\t7\n".to_string() + &"8\t9\n".repeat(20);
    let e = io::parse_edge_list(text.as_bytes(), "big.txt", &opts).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("big.txt:3"), "{msg}");
    assert!(msg.contains("4294967295"), "{msg}");
}

#[test]
fn unsorted_and_sorted_inputs_with_hub_rows() {
    // A hub joined to a narrow range of columns listed in decreasing order (rows far from
    // sorted within one column digit: the insertion sort gives up and sorts), random edges
    // around it, and the same edges sorted (rows come out of the scatter in order, no
    // radix pass): both against the model, on 1 and 3 threads.
    let n = 100_000;
    let mut e = random_edges(n, 70_000, 3);
    for k in 0..3 {
        for v in (50_000..50_300).rev() {
            e.push((7, v, 0.0));
            e.push((v + k, 99_999, 0.0));
        }
    }
    let mut sorted = e.clone();
    sorted.sort_by_key(|&(u, v, _)| (u, v));
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for edges in [&e, &sorted] {
            let g = pool
                .install(|| Graph::from_edges(n, edges.iter().map(|&(u, v, _)| (u, v))))
                .unwrap();
            let e1: Vec<_> = edges.iter().map(|&(u, v, _)| (u, v, 1.0)).collect();
            check(&g, n, &e1, false);
        }
    }
}

//! The bucketed graph builder used by the readers against a plain model: same nodes,
//! sorted duplicate-free symmetric rows, the largest weight of merged duplicates, counted
//! self-loops; and the edge-list reader against the same model.

use std::collections::BTreeMap;

use proptest::prelude::*;
use trident_core::io::{self, EdgeListOptions, IdMode};
use trident_core::Graph;

fn model(n: usize, edges: &[(usize, usize, f64)]) -> (Vec<BTreeMap<u32, f64>>, usize) {
    let mut rows = vec![BTreeMap::new(); n];
    let mut loops = 0;
    for &(u, v, w) in edges {
        if u == v {
            loops += 1;
            continue;
        }
        for (a, b) in [(u, v), (v, u)] {
            let e = rows[a].entry(b as u32).or_insert(w);
            if w > *e {
                *e = w;
            }
        }
    }
    (rows, loops)
}

fn assert_matches(g: &Graph, n: usize, edges: &[(usize, usize, f64)], weighted: bool) {
    let (rows, loops) = model(n, edges);
    assert_eq!(g.num_nodes(), n);
    assert_eq!(g.self_loops_dropped(), loops);
    let m: usize = rows.iter().map(|r| r.len()).sum::<usize>() / 2;
    assert_eq!(g.num_edges(), m);
    for (u, row) in rows.iter().enumerate() {
        let want: Vec<u32> = row.keys().copied().collect();
        assert_eq!(g.neighbors(u), &want[..], "row {u}");
        if weighted {
            let ww: Vec<f64> = row.values().copied().collect();
            assert_eq!(
                g.neighbor_weights(u).unwrap(),
                &ww[..],
                "weights of row {u}"
            );
        } else {
            assert!(g.neighbor_weights(u).is_none());
        }
    }
}

fn edges(max_n: usize) -> impl Strategy<Value = (usize, Vec<(usize, usize, f64)>)> {
    (1..max_n).prop_flat_map(|n| {
        let e = (0..n, 0..n, -4i32..4).prop_map(|(u, v, w)| (u, v, w as f64 * 0.5));
        (Just(n), proptest::collection::vec(e, 0..300))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn weighted_build_matches_the_model((n, e) in edges(60)) {
        let g = Graph::from_weighted_edges(n, e.iter().copied()).unwrap();
        assert_matches(&g, n, &e, true);
    }

    #[test]
    fn unweighted_build_matches_the_model((n, e) in edges(60)) {
        let g = Graph::from_edges(n, e.iter().map(|&(u, v, _)| (u, v))).unwrap();
        let e1: Vec<_> = e.iter().map(|&(u, v, _)| (u, v, 1.0)).collect();
        assert_matches(&g, n, &e1, false);
    }

    #[test]
    fn many_buckets((n, e) in (70_000usize..300_000).prop_flat_map(|n| {
        let e = (0..n, 0..n, 0i32..3).prop_map(|(u, v, w)| (u, v, w as f64));
        (Just(n), proptest::collection::vec(e, 0..400))
    })) {
        // Also hub edges, so that some rows are long and the buckets uneven.
        let mut e = e;
        for k in 0..200 {
            e.push((n - 1, (k * 7919) % n, 1.0));
        }
        let g = Graph::from_weighted_edges(n, e.iter().copied()).unwrap();
        assert_matches(&g, n, &e, true);
    }

    /// Unweighted, unsorted, with long rows: hubs whose neighbours are dense (the rows
    /// sorted through a bitmap of columns) or spread out (by insertion, or `sort_unstable`
    /// past the insertion's budget), with repeated and reversed duplicates.
    #[test]
    fn long_rows_match_the_model(
        n in 300usize..6000,
        hubs in proptest::collection::vec((0usize..6000, 256usize..1500, 1usize..40), 1..4),
        seed in any::<u64>(),
    ) {
        let mut next = xorshift(seed | 1);
        let mut e = Vec::new();
        for &(h, deg, spread) in &hubs {
            let h = h % n;
            let base = next() % n;
            for _ in 0..deg {
                // Neighbours within `spread * deg` ids after `base` (dense when small).
                let v = (base + next() % (spread * deg)) % n;
                if next().is_multiple_of(2) { e.push((h, v, 1.0)) } else { e.push((v, h, 1.0)) }
            }
        }
        for _ in 0..n {
            e.push((next() % n, next() % n, 1.0));
        }
        // Random order (so the build takes the unsorted path), then some repeats.
        for i in (1..e.len()).rev() {
            e.swap(i, next() % (i + 1));
        }
        for k in 0..e.len() / 8 {
            let (u, v, w) = e[(k * 31) % e.len()];
            e.push((v, u, w));
        }
        let g = Graph::from_edges(n, e.iter().map(|&(u, v, _)| (u, v))).unwrap();
        assert_matches(&g, n, &e, false);
    }

    /// A long row whose columns crowd one digit of the column sort but span the graph (too
    /// sparse for a bitmap): more moves than the insertion allows, so it is sorted whole.
    #[test]
    fn crowded_long_row_matches_the_model(seed in any::<u64>(), len in 300usize..900) {
        let n = 1 << 17;
        let mut next = xorshift(seed | 1);
        let mut e: Vec<(usize, usize, f64)> = (0..len).map(|_| (5, 1 + next() % 32, 1.0)).collect();
        e.push((5, n - 1, 1.0));
        e.extend((0..2000).map(|_| (next() % n, next() % n, 1.0)));
        let g = Graph::from_edges(n, e.iter().map(|&(u, v, _)| (u, v))).unwrap();
        assert_matches(&g, n, &e, false);
    }

    #[test]
    fn edge_list_text_matches_the_model((_n, e) in edges(40), crlf in any::<bool>()) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = format!("# test{nl}");
        for &(u, v, w) in &e {
            text.push_str(&format!("{u}\t{v} {w}{nl}"));
        }
        let opts = EdgeListOptions { ids: IdMode::Numeric, ..Default::default() };
        match io::parse_edge_list(text.as_bytes(), "t", &opts) {
            Ok(g) => {
                let n_used = e.iter().map(|&(u, v, _)| u.max(v) + 1).max().unwrap_or(0);
                assert_matches(&g, n_used, &e, true);
            }
            Err(err) => {
                prop_assert!(e.is_empty(), "{err}");
            }
        }
    }
}

/// A long row of distinct columns in random order, crowded into 32 digits of the column
/// sort (32 columns each on 2^17 nodes) but spanning the graph (too sparse for a bitmap):
/// more moves than the insertion allows, so it is finished by a full sort. Only the rows
/// touched are checked against the model.
#[test]
fn crowded_distinct_row_is_sorted_whole() {
    let n = 1usize << 17;
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
    let hub = 12_345;
    let mut cols: Vec<usize> = (1..=1024).collect();
    for i in (1..cols.len()).rev() {
        cols.swap(i, next() % (i + 1));
    }
    let mut e: Vec<(usize, usize)> = cols[..1000].iter().map(|&c| (hub, c)).collect();
    e.push((hub, n - 1));
    e.extend((0..3000).map(|_| (next() % n, next() % n)));
    let g = Graph::from_edges(n, e.iter().copied()).unwrap();
    let mut rows: BTreeMap<usize, std::collections::BTreeSet<u32>> = BTreeMap::new();
    for &(u, v) in &e {
        if u != v {
            rows.entry(u).or_default().insert(v as u32);
            rows.entry(v).or_default().insert(u as u32);
        }
    }
    for (&u, want) in &rows {
        let want: Vec<u32> = want.iter().copied().collect();
        assert_eq!(g.neighbors(u), &want[..], "row {u}");
    }
    let m: usize = rows.values().map(|r| r.len()).sum::<usize>() / 2;
    assert_eq!(g.num_edges(), m);
}

#[test]
fn out_of_range_and_empty() {
    assert!(Graph::from_edges(3, [(0, 3)]).is_err());
    let g = Graph::from_edges(0, []).unwrap();
    assert_eq!((g.num_nodes(), g.num_edges()), (0, 0));
    let g = Graph::from_edges(5, [(1, 1), (2, 2)]).unwrap();
    assert_eq!(
        (g.num_nodes(), g.num_edges(), g.self_loops_dropped()),
        (5, 0, 2)
    );
}

/// [`trident_core::testing::xorshift`] as `usize` values.
fn xorshift(seed: u64) -> impl FnMut() -> usize {
    let mut next = trident_core::testing::xorshift(seed);
    move || next() as usize
}

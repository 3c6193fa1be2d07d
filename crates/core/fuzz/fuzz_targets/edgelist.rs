//! Edge-list reader on arbitrary bytes, with options taken from the first byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trident_core::io::{parse_edge_list, EdgeListOptions, IdMode};

fuzz_target!(|data: &[u8]| {
    let (sel, body) = match data.split_first() {
        Some((&s, rest)) => (s, rest),
        None => (0, data),
    };
    // Numeric mode allocates up to the largest id: only try it when ids are small.
    let small_ids = body
        .split(|b| !b.is_ascii_digit())
        .all(|run| run.len() <= 6);
    let ids = match sel % 3 {
        0 => IdMode::Auto,
        1 => IdMode::Labels,
        _ if small_ids => IdMode::Numeric,
        _ => IdMode::Auto,
    };
    let weighted = match (sel / 3) % 3 {
        0 => None,
        1 => Some(true),
        _ => Some(false),
    };
    let opts = EdgeListOptions {
        ids,
        weighted,
        loop_only_nodes: sel & 0x80 != 0,
    };
    if let Ok(g) = parse_edge_list(body, "fuzz.txt", &opts) {
        let n = g.num_nodes();
        for u in 0..n {
            let nb = g.neighbors(u);
            assert!(nb.windows(2).all(|w| w[0] < w[1]));
            assert!(nb.iter().all(|&v| (v as usize) < n && v as usize != u));
        }
        if let Some(l) = g.labels() {
            assert_eq!(l.len(), n);
        }
    }
});

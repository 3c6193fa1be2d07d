//! Times the phases of `read_graph` on one file (for profiling the reader, e.g. under
//! `valgrind --tool=callgrind`): read, parse (`parse_edges`), build (`into_graph`).
//!
//! ```text
//! cargo run --release -p trident-core --example read_profile -- FILE [REPEATS]
//! ```

use std::time::Instant;

use trident_core::io::{parse_edges, EdgeListOptions, Input};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: read_profile FILE [REPEATS]");
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let opts = EdgeListOptions::default();
    let mut best = [f64::INFINITY; 3];
    for _ in 0..repeats {
        let t0 = Instant::now();
        let input = Input::read(&path).expect("read");
        let t1 = Instant::now();
        let el = parse_edges(&input.bytes, &input.name, &opts).expect("parse");
        let t2 = Instant::now();
        let g = el.into_graph().expect("build");
        let t3 = Instant::now();
        std::hint::black_box(&g);
        for (b, t) in best.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2]) {
            *b = b.min(t.as_secs_f64());
        }
        let mb = input.bytes.len() as f64 / 1e6;
        let all = (t3 - t0).as_secs_f64();
        eprintln!(
            "{} nodes {} edges: read {:.3}s parse {:.3}s build {:.3}s total {:.3}s = {:.0} MB/s",
            g.num_nodes(),
            g.num_edges(),
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
            all,
            mb / all
        );
    }
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    let total: f64 = best.iter().sum();
    println!(
        "best: read {:.3}s parse {:.3}s build {:.3}s; sum {:.3}s = {:.0} MB/s ({} threads)",
        best[0],
        best[1],
        best[2],
        total,
        len / total,
        rayon::current_num_threads()
    );
}

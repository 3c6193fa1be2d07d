//! Times `read_graph` on one file, whole and by phase, in wall-clock and CPU time (for
//! profiling the reader, e.g. under `perf record` or `valgrind --tool=callgrind`).
//!
//! ```text
//! RAYON_NUM_THREADS=1 cargo run --release -p trident-core --example read_profile -- FILE [REPEATS]
//! ```
//!
//! * `read_graph`: the whole read (read the file, parse, symmetrise, deduplicate, build the
//!   CSR) as users get it: the headline figure, in MB of input per second.
//! * The phases, run separately: `read` ([`Input::read`]), `parse` ([`parse_edges`], which
//!   also applies the node numbering to its [`EdgeList`]) and `build`
//!   ([`EdgeList::into_graph`]). `read_graph` itself does not make an `EdgeList` for
//!   integer-id files (it builds from the parse's arrays, renumbering on the fly), so it is
//!   faster than the sum of the phases.
//!
//! Every figure is the best of `REPEATS` runs. CPU time is the process's (all threads,
//! from `/proc/self/task/*/schedstat`, Linux only; 0 elsewhere): on a machine shared with
//! other work, CPU time shows the cost of one run where wall time also shows the waiting.
//! With `RAYON_NUM_THREADS=1` the CPU-time rate is the per-core figure.
//!
//! [`EdgeList`]: trident_core::io::EdgeList
//! [`EdgeList::into_graph`]: trident_core::io::EdgeList::into_graph

use std::time::Instant;

use trident_core::io::{parse_edges, read_graph, EdgeListOptions, Input};

/// CPU time of the whole process so far, in seconds (0 where the system does not say).
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut ns = 0u64;
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
            ns += s
                .split_whitespace()
                .next()
                .and_then(|x| x.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    ns as f64 * 1e-9
}

/// Best (wall, cpu) seconds of `f` over `repeats` runs.
fn best<T>(repeats: usize, mut f: impl FnMut() -> T) -> (f64, f64) {
    best_of(repeats, || (), |()| f())
}

/// Best (wall, cpu) seconds of `f(setup())` over `repeats` runs, `setup` not timed.
fn best_of<S, T>(
    repeats: usize,
    mut setup: impl FnMut() -> S,
    mut f: impl FnMut(S) -> T,
) -> (f64, f64) {
    let mut b = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeats {
        let s = setup();
        let (w0, c0) = (Instant::now(), cpu_seconds());
        std::hint::black_box(f(s));
        let (w, c) = (w0.elapsed().as_secs_f64(), cpu_seconds() - c0);
        b = (b.0.min(w), b.1.min(c));
    }
    b
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: read_profile FILE [REPEATS]");
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let opts = EdgeListOptions::default();
    let mb = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    let threads = rayon::current_num_threads();

    let g = read_graph(&path, &opts).expect("read_graph");
    println!(
        "{path}: {mb:.1} MB, {} nodes, {} edges, {threads} threads, best of {repeats}",
        g.num_nodes(),
        g.num_edges()
    );
    drop(g);
    let whole = best(repeats, || read_graph(&path, &opts).expect("read_graph"));

    let input = Input::read(&path).expect("read");
    let read = best(repeats, || Input::read(&path).expect("read"));
    let parse = best(repeats, || {
        parse_edges(&input.bytes, &input.name, &opts).expect("parse")
    });
    let el = parse_edges(&input.bytes, &input.name, &opts).expect("parse");
    drop(input);
    let build = best_of(repeats, || el.clone(), |el| el.into_graph().expect("build"));
    let rate = |s: f64| if s > 0.0 { mb / s } else { f64::NAN };
    for (what, (w, c)) in [
        ("read", read),
        ("parse", parse),
        ("build", build),
        ("read_graph", whole),
    ] {
        println!(
            "{what:<11} wall {w:7.3} s {:6.0} MB/s   cpu {c:7.3} s {:6.0} MB/s",
            rate(w),
            rate(c)
        );
    }
}

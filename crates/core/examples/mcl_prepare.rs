//! Times the host-side preparation of R-MCL that every backend shares, piece by piece, on a
//! network file or a generated planted partition: `Transition::new` (`M_G`), `GpuPlan::new`
//! (the GPU backends' buffer plan), `Columns::initial` (the starting `M`) and
//! `interpret_targets` (the clusters from each node's pointer; the pointers here are each
//! node's largest entry of the starting `M`). Prints the median of `REPEATS` runs of each,
//! on the rayon pool that `RAYON_NUM_THREADS` sets, in wall and CPU seconds.
//!
//! ```text
//! cargo run --release -p trident-core --example mcl_prepare -- FILE|planted:NODES [REPEATS]
//! RAYON_NUM_THREADS=1 target/release/examples/mcl_prepare planted:1000000 5
//! ```
//!
//! `planted:N` generates `N` nodes in communities of 20, mean degree 35, mixing 0.1, seed 1
//! (the shape of issue 9's 1M-node network, about 17.5M edges) instead of reading a file.

use std::time::Instant;

use trident_core::generate::{planted, PlantedOptions};
use trident_core::mcl::gpu::{GpuPlan, LCAP};
use trident_core::mcl::{interpret_targets, Columns, MclOptions, Transition};
use trident_core::Graph;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// CPU seconds of all the process's threads so far (`/proc/self/task/*/schedstat`, Linux;
/// 0 elsewhere): on a shared machine they vary far less than wall time.
fn cpu() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    dir.flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        * 1e-9
}

/// Wall and CPU seconds of `f`.
fn timed<R>(f: impl FnOnce() -> R) -> (R, [f64; 2]) {
    let (t, c) = (Instant::now(), cpu());
    let r = f();
    (r, [t.elapsed().as_secs_f64(), cpu() - c])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args
        .next()
        .expect("usage: mcl_prepare FILE|planted:NODES [REPEATS]");
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let t = Instant::now();
    let g: Graph = match what.strip_prefix("planted:") {
        Some(n) => {
            let nodes: usize = n.parse().expect("planted:NODES");
            let p = planted(&PlantedOptions {
                nodes,
                communities: (nodes / 20).max(1),
                degree: 35.0,
                mixing: 0.1,
                seed: 1,
            })
            .expect("planted");
            Graph::from_edges(
                nodes,
                p.edges
                    .src
                    .iter()
                    .zip(&p.edges.dst)
                    .map(|(&u, &v)| (u as usize, v as usize)),
            )
            .expect("graph")
        }
        None => trident_core::io::read_graph_auto(&what).expect("read"),
    };
    eprintln!(
        "{} nodes, {} edges (in {:.3} s); {} rayon threads, {repeats} repeats (medians)",
        g.num_nodes(),
        g.num_edges(),
        t.elapsed().as_secs_f64(),
        rayon::current_num_threads()
    );
    let opts = MclOptions::default();
    let k = opts.max_per_column;
    // [piece][wall, cpu] samples.
    let mut samples: [[Vec<f64>; 2]; 4] = Default::default();
    let mut record = |piece: usize, t: [f64; 2]| {
        samples[piece][0].push(t[0]);
        samples[piece][1].push(t[1]);
    };
    let mut clusters = 0;
    for _ in 0..repeats {
        let (tr, t) = timed(|| Transition::new(&g, &opts).expect("transition"));
        record(0, t);
        let (plan, t) =
            timed(|| GpuPlan::new(&tr, &opts, LCAP, 8, u64::MAX, "host", "host").expect("plan"));
        record(1, t);
        std::hint::black_box(&plan);
        let (m0, t) = timed(|| Columns::<f64>::initial(&tr, k).expect("initial"));
        record(2, t);
        // Pointers: each column's largest entry (its first), as a converged M would give.
        let target: Vec<u32> = (0..m0.n).map(|j| m0.idx[j * k]).collect();
        drop(m0);
        drop(tr);
        let (c, t) = timed(|| interpret_targets(&target).len());
        record(3, t);
        clusters = c;
    }
    let names = ["transition", "plan", "initial", "interpret_targets"];
    let line: Vec<String> = names
        .iter()
        .zip(samples)
        .map(|(name, [w, c])| format!("{name} {:.3} s (cpu {:.3})", median(w), median(c)))
        .collect();
    println!(
        "threads {}: {} ({clusters} clusters)",
        rayon::current_num_threads(),
        line.join(", ")
    );
}

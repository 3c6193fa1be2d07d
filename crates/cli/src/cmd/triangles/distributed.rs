//! `trident triangles` under an MPI launcher: every rank reads its byte range of the file,
//! the graph is built and oriented across the ranks, each rank counts its rows on its own
//! backend (the GPU of its local rank, or the CPU), and rank 0 prints the summary and
//! writes the per-vertex file (see `trident_core::dist`).

use std::time::Instant;

use trident_core::dist::graph::{orient, read_graph};
use trident_core::dist::triangles::{count, Layout};
use trident_core::dist::{all_gather, reduce_one, Comm, Op, Phases};
use trident_core::triangles::DegreeStats;
use trident_core::{Error, Result, TriangleCount, TriangleOptions};

use super::Args;
use crate::files::Files;
use crate::job::Job;
use crate::median;
use crate::select;

/// The slowest rank's seconds since `t`.
fn slowest(c: &dyn Comm, t: Instant) -> Result<f64> {
    Ok(f64::from_bits(reduce_one(
        c,
        t.elapsed().as_secs_f64().to_bits(),
        Op::Max,
    )?))
}

/// Each phase of `phases` with its slowest rank's seconds (`read 1.2, parse 3.4, …`); every
/// rank must call it with the same phases.
fn slowest_phases(c: &dyn Comm, phases: &Phases) -> Result<String> {
    let mut out = Vec::new();
    for &(name, secs) in phases.laps() {
        let s = f64::from_bits(reduce_one(c, secs.to_bits(), Op::Max)?);
        out.push(format!("{name} {s:.2}"));
    }
    Ok(out.join(", "))
}

pub fn run(args: Args, job: &Job) -> Result<()> {
    let c = job.comm();
    // Rank 0 checks and writes the outputs; the others write nothing.
    let outputs = if job.is_root() {
        vec![args.per_vertex.as_deref()]
    } else {
        vec![]
    };
    let files = Files::declare(&[Some(&args.path)], &outputs)?;
    let t = Instant::now();
    let g = read_graph(
        c,
        &args.path,
        &super::read_options(),
        &crate::env::read_options(),
    )?;
    let load = slowest(c, t)?;
    if job.is_root() {
        crate::print_notes(g.notes());
    }
    let t = Instant::now();
    let o = orient(c, &g)?;
    let orientation = slowest(c, t)?;
    let phases = (
        slowest_phases(c, g.phases())?,
        slowest_phases(c, o.phases())?,
    );
    let b = select::open(args.backend)?;
    // Every rank's backend, for the summary.
    let me = format!("{}: {b}", c.host());
    let (names, lens) = all_gather(c, me.as_bytes())?;
    let mut at = 0;
    let devices: Vec<String> = lens
        .iter()
        .map(|&k| {
            let s = String::from_utf8_lossy(&names[at..at + k]).into_owned();
            at += k;
            s
        })
        .collect();
    crate::with_backend!(&b, b => finish(b, c, &g, &o, &args, files, ((load, orientation), phases), &devices))
}

#[allow(clippy::too_many_arguments)]
fn finish<B: TriangleCount>(
    b: &B,
    c: &dyn Comm,
    g: &trident_core::dist::graph::DistGraph,
    o: &trident_core::dist::graph::DistOriented,
    args: &Args,
    files: Files,
    ((load, orientation), (load_phases, orient_phases)): ((f64, f64), (String, String)),
    devices: &[String],
) -> Result<()> {
    // The whole graph's degree statistics, so that every rank runs the same algorithm.
    let (ip, _) = o.local();
    let lens = ip.windows(2).map(|w| w[1] - w[0]);
    let max_out = reduce_one(c, lens.clone().max().unwrap_or(0), Op::Max)?;
    let nonzero = reduce_one(c, lens.filter(|&d| d > 0).count() as u64, Op::Sum)?;
    let stats = DegreeStats {
        nodes: o.num_nodes(),
        edges: o.num_edges() as usize,
        max_out: max_out as usize,
        mean_out: o.num_edges() as f64 / nonzero.max(1) as f64,
    };
    let alg = args.algorithm.resolve(&stats, b.name() != "cpu");
    let opts = TriangleOptions {
        per_node: args.per_vertex.is_some(),
        algorithm: alg,
        search: args.search_kernel,
        limits: args.plan_limits.unwrap_or_default(),
    };
    let layout = args.layout.unwrap_or_default();
    let mut runs = Vec::new();
    for _ in 0..args.repeat {
        let r = count(c, b, o, layout, &opts)?;
        if let Some(prev) = runs.last() {
            let prev: &trident_core::dist::triangles::DistCounts = prev;
            if prev.counts != r.counts {
                return Err(Error::backend(b.name(), "repeated counts differ"));
            }
        }
        runs.push(r);
    }
    let counting = median(runs.iter().map(|r| r.count).collect());
    let exchange = median(runs.iter().map(|r| r.exchange).collect());
    let count_ranks: Vec<f64> = (0..c.size())
        .map(|rank| median(runs.iter().map(|r| r.count_ranks[rank]).collect()))
        .collect();
    let counted = all_gather(c, &[runs.last().map_or(0, |r| r.counted_edges as u64)])?.0;
    let r = runs
        .pop()
        .ok_or_else(|| Error::backend(b.name(), "no count"))?;
    let held = all_gather(c, &[r.held_edges as u64])?.0;
    crate::outln!("ranks:         {} ({})", c.size(), c.engine())?;
    for (rank, d) in devices.iter().enumerate() {
        crate::outln!(
            "rank {rank}:        {d}; rows {}..{}, holds {} edges, counts {} in {:.4} s",
            o.splits()[rank],
            o.splits()[rank + 1],
            held[rank],
            counted[rank],
            count_ranks[rank]
        )?;
    }
    super::print_graph(
        &args.path,
        (g.num_nodes(), g.num_edges(), g.self_loops_dropped()),
        stats.max_out,
        alg,
    )?;
    crate::outln!("layout:        {}", r.layout)?;
    crate::outln!("triangles:     {}", r.counts.total)?;
    // The slowest rank's seconds in each phase (a phase ending in a collective includes the
    // wait for the others).
    let slowest = |p: &str| {
        if p.is_empty() {
            String::new()
        } else {
            format!("; slowest rank's phases: {p}")
        }
    };
    crate::outln!(
        "load:          {load:.4} s ({}{})",
        if g.parallel_read() {
            "each rank its byte range"
        } else {
            "whole file on every rank"
        },
        slowest(&load_phases)
    )?;
    crate::outln!(
        "orientation:   {orientation:.4} s (distributed{})",
        slowest(&orient_phases)
    )?;
    crate::outln!(
        "exchange:      {exchange:.4} s ({})",
        match (r.layout, r.device_exchange) {
            (Layout::Partition, true) => {
                "the rows this rank's edges point to, device to device (NCCL), transfer included"
            }
            (Layout::Partition, false) => {
                "the rows this rank's edges point to, through the hosts, transfer included"
            }
            (_, true) => "rows device to device (NCCL), transfer included",
            (_, false) => "rows through the hosts, transfer included",
        }
    )?;
    crate::outln!(
        "counting:      {counting:.4} s ({:.3e} edges/s; median of {}, slowest rank)",
        g.num_edges() as f64 / counting.max(1e-12),
        args.repeat
    )?;
    crate::outln!(
        "total:         {:.4} s",
        load + orientation + exchange + counting
    )?;
    if let (Some(path), Some(per), true) = (&args.per_vertex, &r.counts.per_node, c.rank() == 0) {
        super::write_per_vertex(files, path, per, |v| (g.label(v), g.degree(v)))?;
    }
    Ok(())
}

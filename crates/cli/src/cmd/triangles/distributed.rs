//! `trident triangles` under an MPI launcher: the first rank of each host reads and orients
//! the graph as one process does and passes each of the host's ranks its rows through shared
//! memory (`--read host`, the default), or every rank reads its byte range of the file and
//! the graph is built and oriented across the ranks (`--read ranges`); each rank counts its
//! rows on its own backend (the GPU of its local rank, or the CPU), and rank 0 prints the
//! summary and writes the per-vertex file (see `trident_core::dist`).

use std::time::Instant;

use trident_core::dist::graph::{
    orient, orient_on_host, read_graph, CutGraph, DistGraph, DistOriented,
};
use trident_core::dist::triangles::{count, Layout};
use trident_core::dist::{all_gather, reduce_one, Comm, Op};
use trident_core::triangles::{DegreeStats, OrientedGraph};
use trident_core::{io, Backend, Error, Graph, Result, TriangleCount, TriangleOptions};

use super::Args;
use crate::files::Files;
use crate::job::{Job, ReadChoice, ReadHow};
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

/// The graph as the ranks hold it, and what the summary says of its read.
struct Input {
    /// This rank's share of the oriented graph.
    o: DistOriented,
    /// The graph read whole (rank 0 of a job that reads once per host or on every rank), for
    /// the per-vertex file's labels and degrees.
    whole: Option<Graph>,
    /// This rank's share of the graph read in byte ranges (`--read ranges`).
    ranges: Option<DistGraph>,
    /// Nodes, edges, self-loops dropped.
    sizes: (usize, u64, u64),
    /// The slowest rank's seconds reading and orienting, and rank 0's sharing (once per
    /// host).
    load: f64,
    orientation: f64,
    share: f64,
    /// How the file was read, and how the graph was oriented, for the summary.
    read_how: String,
    orient_how: String,
}

impl Input {
    /// Node `v`'s label and degree (on rank 0).
    fn node(&self, v: usize) -> (String, usize) {
        match (&self.whole, &self.ranges) {
            (Some(g), _) => (g.label(v), g.degree(v)),
            (None, Some(g)) => (g.label(v), g.degree(v)),
            (None, None) => (v.to_string(), 0),
        }
    }
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
    let (input, b) = match job.read_choice(args.read) {
        ReadChoice::Ranges => in_ranges(&args, job)?,
        choice => whole(&args, job, choice)?,
    };
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
    crate::with_backend!(&b, b => finish(b, job, &input, &args, files, &devices))
}

/// `--read ranges`: every rank reads its byte range, and the ranks build and orient the
/// graph together; the backend opens after.
fn in_ranges(args: &Args, job: &Job) -> Result<(Input, select::AnyBackend)> {
    let c = job.comm();
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
    let with_phases = |p: String| {
        if p.is_empty() {
            String::new()
        } else {
            format!("; slowest rank's phases: {p}")
        }
    };
    let read_how = format!(
        "{}{}",
        if g.parallel_read() {
            "each rank its byte range"
        } else {
            "whole file on every rank"
        },
        with_phases(g.phases().slowest(c)?)
    );
    let orient_how = format!("distributed{}", with_phases(o.phases().slowest(c)?));
    let b = select::open(args.backend)?;
    let input = Input {
        o,
        whole: None,
        sizes: (g.num_nodes(), g.num_edges(), g.self_loops_dropped()),
        ranges: Some(g),
        load,
        orientation,
        share: 0.0,
        read_how,
        orient_how,
    };
    Ok((input, b))
}

/// `--read host` (the default) and `--read whole`: the first rank of each host (or every
/// rank) reads and orients the whole graph as one process does, with the threads of the
/// host's ranks (see [`crate::job::Job::host_read_threads`]), and each rank keeps its share
/// of the rows, passed through the host's shared memory ([`orient_on_host`]). The backends
/// open meanwhile, each on a thread of its own.
fn whole(args: &Args, job: &Job, choice: ReadChoice) -> Result<(Input, select::AnyBackend)> {
    let c = job.comm();
    let host = choice == ReadChoice::Host;
    let (host_rank, host_ranks) = c.host_ranks();
    let threads = if host {
        job.host_read_threads()
    } else {
        rayon::current_num_threads()
    };
    let ranks = c.size();
    let read = || -> Result<(Graph, CutGraph, f64, f64)> {
        crate::job::on_threads(threads, || {
            let t = Instant::now();
            let g = io::read_graph_limited(
                &args.path,
                &super::read_options(),
                &crate::env::read_options(),
            )?;
            let load = t.elapsed().as_secs_f64();
            // Oriented and cut over the ranks with the host's threads.
            let t = Instant::now();
            let o = CutGraph::new(OrientedGraph::from_graph(&g)?, ranks);
            Ok((g, o, load, t.elapsed().as_secs_f64()))
        })
    };
    let (got, b, notes) = std::thread::scope(|scope| {
        // The host's first rank (every rank, read whole) reads on a thread of its own, with
        // the host's threads, while this thread opens the backend and the ranks agree on
        // the device-to-device engine (NCCL, whose communicator is then made in the
        // background during the read); the graph passes after. Only this thread talks to
        // MPI.
        let reading = (!host || host_rank == 0).then(|| scope.spawn(read));
        let (b, notes) = select::open_quiet(args.backend);
        let b = b.and_then(|b| {
            crate::with_backend!(&b, x => Backend::connect(x, c))?;
            Ok(b)
        });
        let read_done = reading.map(|r| r.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        // A rank whose backend failed did not agree (the others wait for it there): it ends
        // the job now, with its backend's error, rather than wait in the share.
        let b = match b {
            Err(e) => {
                let failed = Err(Error::backend("triangles", "the backend failed to open"));
                return (Err(e), failed, notes);
            }
            Ok(b) => b,
        };
        let got: Result<_> = (|| {
            // A failed read ends here, before the share (the caller ends the job).
            let split = |(g, o, load, orient)| (Some((g, load, orient)), Some(o));
            let (mine, oriented) = match read_done.transpose()? {
                Some(m) => split(m),
                None => (None, None),
            };
            let t = Instant::now();
            let (o, how) = if host {
                match orient_on_host(c, oriented.map(Ok))? {
                    (Some(o), true) => (o, ReadHow::Host(threads, host_ranks).to_string()),
                    (Some(o), false) => (o, ReadHow::NoRoom.to_string()),
                    (None, _) => {
                        // No room on this host for the shared window: this rank reads.
                        let (g, o, load, orient) = read()?;
                        let o = DistOriented::from_whole(c, o)?;
                        let share = t.elapsed().as_secs_f64();
                        let how = ReadHow::NoRoom.to_string();
                        return Ok((Some((g, load, orient)), o, how, share));
                    }
                }
            } else {
                let o = oriented.ok_or_else(|| Error::backend("triangles", "no read"))?;
                (
                    DistOriented::from_whole(c, o)?,
                    "whole file on every rank".into(),
                )
            };
            Ok((mine, o, how, t.elapsed().as_secs_f64()))
        })();
        (got, Ok(b), notes)
    });
    let (mine, o, read_how, share) = got?;
    // Rank 0's phases of the share, for the summary.
    let laps: Vec<String> = o
        .phases()
        .laps()
        .iter()
        .map(|(name, secs)| format!("{name} {secs:.2}"))
        .collect();
    let laps = laps.join(", ");
    for n in notes {
        crate::errln!("{n}");
    }
    let b = b?;
    let (load, orientation) = mine.as_ref().map_or((0.0, 0.0), |m| (m.1, m.2));
    let most = |x: f64| -> Result<f64> { Ok(f64::from_bits(reduce_one(c, x.to_bits(), Op::Max)?)) };
    // The share as rank 0 saw it (a first rank: from its graph to every rank's copy; the
    // host's other ranks' time holds their wait for the read).
    let (load, orientation) = (most(load)?, most(orientation)?);
    let g = mine.map(|m| m.0);
    if let (Some(g), true) = (&g, job.is_root()) {
        crate::print_notes(g.notes());
    }
    let sizes = g.as_ref().map_or((o.num_nodes(), o.num_edges(), 0), |g| {
        (
            g.num_nodes(),
            g.num_edges() as u64,
            g.self_loops_dropped() as u64,
        )
    });
    let orient_how = if host {
        "as one process, on each host's first rank"
    } else {
        "as one process, on every rank"
    };
    let input = Input {
        o,
        // Kept for the per-vertex file's labels only.
        whole: g.filter(|_| job.is_root() && args.per_vertex.is_some()),
        ranges: None,
        sizes,
        load,
        orientation,
        share,
        read_how: if host {
            format!("{read_how}; shared in {share:.4} s: {laps}")
        } else {
            read_how
        },
        orient_how: orient_how.into(),
    };
    Ok((input, b))
}

#[allow(clippy::too_many_arguments)]
fn finish<B: TriangleCount>(
    b: &B,
    job: &Job,
    input: &Input,
    args: &Args,
    files: Files,
    devices: &[String],
) -> Result<()> {
    let o = &input.o;
    let c = job.comm();
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
    super::print_graph(&args.path, input.sizes, stats.max_out, alg)?;
    crate::outln!("layout:        {}", r.layout)?;
    crate::outln!("triangles:     {}", r.counts.total)?;
    crate::outln!("load:          {:.4} s ({})", input.load, input.read_how)?;
    crate::outln!(
        "orientation:   {:.4} s ({})",
        input.orientation,
        input.orient_how
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
        input.sizes.1 as f64 / counting.max(1e-12),
        args.repeat
    )?;
    crate::outln!(
        "total:         {:.4} s",
        input.load + input.orientation + input.share + exchange + counting
    )?;
    if let (Some(path), Some(per), true) = (&args.per_vertex, &r.counts.per_node, c.rank() == 0) {
        super::write_per_vertex(files, path, per, |v| input.node(v))?;
    }
    super::print_process(job)?;
    Ok(())
}

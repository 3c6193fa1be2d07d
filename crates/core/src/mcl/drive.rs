//! The one driver of a clustering run, over any backend's level runner
//! ([`MarkovCluster::cluster_level`]): validate, build `M_G` and the starting `M` while the
//! backend loads its kernels, coarsen for MLR-MCL's multi-level mode, run every level
//! (projecting the flow down), and read the clusters off the last one.

use std::time::Instant;

use super::mlr::coarsen::{project, LoopGraph};
use super::mlr::{attractor_clusters, Level};
use super::{
    empty_clustering, interpret_targets, Clustering, Columns, MarkovCluster, MclOptions,
    MclProgress, MclTimings, StopReason, Transition, TransitionPart, Variant,
};
use crate::comm::{Comm, Solo};
use crate::error::Result;
use crate::graph::Graph;
use crate::scalar::Scalar;

/// What a backend's run of one level returns.
#[derive(Debug, Clone)]
pub struct LevelRun<T> {
    /// The final `M`, when asked for (coarse levels: it is projected to the next).
    pub m: Option<Columns<T>>,
    /// Each node's pointer when asked for (the last level): Trident's [`super::targets`],
    /// or, for [`Variant::MlrMcl`], the row of the largest entry of each column (ties: the
    /// smaller row; [`super::NO_TARGET`] for an empty column).
    pub targets: Vec<u32>,
    /// Iterations run.
    pub iterations: usize,
    /// Global chaos at the end.
    pub chaos: f64,
    /// The last change ([`super::mlr::Schedule::change`]).
    pub change: f64,
    /// Why the level stopped.
    pub stop: StopReason,
    /// Upload, iterations, download (GPU backends), in seconds.
    pub timings: MclTimings,
}

/// Which of [`LevelRun`]'s outputs a level must produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The final `M` (a coarse level).
    Flow,
    /// Each node's pointer (the last level).
    Targets,
}

/// For [`Variant::MlrMcl`]: the row of the largest positive entry of each column of `m`
/// (ties: the smaller row), else [`super::NO_TARGET`].
pub fn top_rows<T: Scalar>(m: &Columns<T>) -> Vec<u32> {
    top_rows_by(m.n, |j| m.column(j))
}

/// [`top_rows`] of `n` columns (`col(j)`: rows and values of column `j`).
pub(crate) fn top_rows_by<'a, T: Scalar>(
    n: usize,
    col: impl Fn(usize) -> (&'a [u32], &'a [T]) + Sync,
) -> Vec<u32> {
    use rayon::prelude::*;
    (0..n)
        .into_par_iter()
        .map(|j| {
            let (r, v) = col(j);
            let mut best: Option<(u32, T)> = None;
            for (&i, &x) in r.iter().zip(v) {
                if x <= T::zero() {
                    continue;
                }
                best = match best {
                    Some((bi, bx)) if bx > x || (bx == x && bi < i) => Some((bi, bx)),
                    _ => Some((i, x)),
                };
            }
            best.map_or(super::NO_TARGET, |b| b.0)
        })
        .collect()
}

/// The pointers a level asked for [`Output::Targets`] returns, by variant.
pub fn level_targets<T: Scalar>(m: &Columns<T>, opts: &MclOptions) -> Vec<u32> {
    match opts.variant {
        Variant::Trident => super::targets(m),
        Variant::MlrMcl => top_rows(m),
    }
}

/// The clusters of the last level's pointers, by variant.
pub fn clusters_of(targets: &[u32], opts: &MclOptions) -> Vec<Vec<usize>> {
    match opts.variant {
        Variant::Trident => interpret_targets(targets),
        Variant::MlrMcl => attractor_clusters(targets),
    }
}

/// The levels of a run: finest first, each with this rank's part of its `M_G`; the
/// coarsenings between them.
struct Plan {
    transitions: Vec<TransitionPart>,
    steps: Vec<super::mlr::coarsen::Coarsening>,
    coarsen: f64,
}

/// The levels of `g` for rank `rank` of `p`.
fn plan(g: &Graph, opts: &MclOptions, p: usize, rank: usize) -> Result<Plan> {
    if opts.variant == Variant::MlrMcl && opts.coarsen_to > 0 && g.num_nodes() > opts.coarsen_to {
        let t = Instant::now();
        let lg = LoopGraph::from_graph(g)?;
        let steps = lg.coarsen(opts.coarsen_to);
        let part = |tr| TransitionPart::of(tr, p, rank);
        let mut transitions = vec![part(lg.transition())];
        transitions.extend(steps.iter().map(|s| part(s.graph.transition())));
        return Ok(Plan {
            transitions,
            steps,
            coarsen: t.elapsed().as_secs_f64(),
        });
    }
    Ok(Plan {
        transitions: vec![Transition::new_part(g, opts, p, rank)?],
        steps: Vec::new(),
        coarsen: 0.0,
    })
}

/// Clusters `g` on `b` (every backend's [`MarkovCluster::cluster_with_progress`]).
pub fn cluster<T: Scalar, B: MarkovCluster<T> + ?Sized>(
    b: &B,
    g: &Graph,
    opts: &MclOptions,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<Clustering> {
    cluster_ranks(&Solo, b, g, opts, progress)
}

/// The host's part of a run, built from the network alone (no backend needed): the options,
/// this rank's part of every level's `M_G`, MLR-MCL's coarsenings, and the starting `M` of
/// the coarsest level. A caller that reads the network while its backend opens builds this
/// on the reading thread ([`Prepared::new`]), so that the build overlaps the backend's
/// start; [`cluster_prepared`] then runs it.
pub struct Prepared<T> {
    opts: MclOptions,
    /// `(ranks, rank)` it was built for.
    ranks: (usize, usize),
    /// `None` for a network without nodes.
    host: Option<(Plan, Columns<T>)>,
    /// Seconds the build took ([`MclTimings::prepare`]).
    seconds: f64,
}

impl<T: Scalar> Prepared<T> {
    /// Builds rank `rank`'s part (of `ranks`; one process is `(1, 0)`) of a run on `g` with
    /// `opts` (validated here): an invalid option or weight, or too little host memory, is
    /// an error here, before any device work.
    pub fn new(g: &Graph, opts: &MclOptions, ranks: usize, rank: usize) -> Result<Self> {
        opts.validate()?;
        let t = Instant::now();
        let host = if g.num_nodes() == 0 {
            None
        } else {
            let p = plan(g, opts, ranks, rank)?;
            let coarsest = p.transitions.last().expect("one level at least");
            let m0 = Columns::<T>::initial_part(coarsest, rank, opts.max_per_column)?;
            Some((p, m0))
        };
        Ok(Prepared {
            opts: opts.clone(),
            ranks: (ranks, rank),
            host,
            seconds: t.elapsed().as_secs_f64(),
        })
    }

    /// [`Prepared::new`] from a borrowed adjacency (the bytes a host's first rank shared,
    /// read in place: the rank holds its part of `M_G` and of the starting `M`, never the
    /// graph). Trident's variant only (MLR-MCL builds its loop graph whole): `Ok(None)` for
    /// MLR-MCL's, whose caller then needs the [`Graph`].
    pub fn from_adjacency(
        a: crate::graph::Adjacency<'_>,
        opts: &MclOptions,
        ranks: usize,
        rank: usize,
    ) -> Result<Option<Self>> {
        opts.validate()?;
        if opts.variant != Variant::Trident {
            return Ok(None);
        }
        let t = Instant::now();
        let part = Transition::new_part_of(a, opts, ranks, rank)?;
        let prepared = Self::from_part(part, opts, ranks, rank)?;
        Ok(Some(Prepared {
            // M_G's build included.
            seconds: t.elapsed().as_secs_f64(),
            ..prepared
        }))
    }

    /// [`Prepared::new`] from rank `rank`'s part of Trident's `M_G` over `ranks`, built
    /// without the whole graph ([`crate::dist::mcl::transition_part`]): the rank's part of
    /// the starting `M` is built from it. Refused for MLR-MCL's variant (its levels need the
    /// graph) and for a part of another rank count.
    pub fn from_part(
        part: TransitionPart,
        opts: &MclOptions,
        ranks: usize,
        rank: usize,
    ) -> Result<Self> {
        opts.validate()?;
        if opts.variant != Variant::Trident || part.ranks() != ranks || rank >= ranks {
            return Err(crate::error::Error::invalid(
                "mcl",
                format!(
                    "a part of M_G over {} ranks, for rank {rank} of {ranks} of {:?}",
                    part.ranks(),
                    opts.variant
                ),
            ));
        }
        let t = Instant::now();
        let host = if part.n() == 0 {
            None
        } else {
            let m0 = Columns::<T>::initial_part(&part, rank, opts.max_per_column)?;
            let p = Plan {
                transitions: vec![part],
                steps: Vec::new(),
                coarsen: 0.0,
            };
            Some((p, m0))
        };
        Ok(Prepared {
            opts: opts.clone(),
            ranks: (ranks, rank),
            host,
            seconds: t.elapsed().as_secs_f64(),
        })
    }
}

/// Clusters `g` (held whole by every rank) over the ranks of `c`, each on its backend `b`
/// ([`MarkovCluster::cluster_level_ranks`] runs every level): the clustering one process
/// computes, on every rank. Every rank builds the levels and the starting `M` itself, while
/// the backend loads its kernels.
pub fn cluster_ranks<T: Scalar, B: MarkovCluster<T> + ?Sized>(
    c: &dyn Comm,
    b: &B,
    g: &Graph,
    opts: &MclOptions,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<Clustering> {
    opts.validate()?;
    // The kernels load (CUDA's PTX JIT, OpenCL's program build: single-threaded driver work)
    // on a thread of their own while the rayon pool builds M_G and the starting M.
    let (load, host) = std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            let t = Instant::now();
            b.load_kernels().map(|()| t.elapsed().as_secs_f64())
        });
        // Over ranks each rank builds only its columns of M_G and of the starting M (the
        // level runners read no others).
        let host = Prepared::<T>::new(g, opts, c.size(), c.rank());
        let load = load.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (load, host)
    });
    // A host error (invalid weights, too little memory) comes first: it is the user's to fix.
    let host = host?;
    run(c, b, host, load?, progress)
}

/// Runs a [`Prepared`] run on the ranks of `c` (those it was built for), each on its backend
/// `b`: [`cluster_ranks`] with the host's part built beforehand.
pub fn cluster_prepared<T: Scalar, B: MarkovCluster<T> + ?Sized>(
    c: &dyn Comm,
    b: &B,
    prepared: Prepared<T>,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<Clustering> {
    if prepared.ranks != (c.size(), c.rank()) {
        return Err(crate::error::Error::invalid(
            "mcl",
            format!(
                "prepared for rank {} of {}, run as rank {} of {}",
                prepared.ranks.1,
                prepared.ranks.0,
                c.rank(),
                c.size()
            ),
        ));
    }
    let t = Instant::now();
    b.load_kernels()?;
    let load = t.elapsed().as_secs_f64();
    run(c, b, prepared, load, progress)
}

/// The levels of a prepared run (`load`: the kernel load's seconds).
fn run<T: Scalar, B: MarkovCluster<T> + ?Sized>(
    c: &dyn Comm,
    b: &B,
    prepared: Prepared<T>,
    load: f64,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<Clustering> {
    let Prepared {
        opts,
        host,
        seconds,
        ..
    } = prepared;
    let opts = &opts;
    let Some((mut p, mut m)) = host else {
        return Ok(empty_clustering());
    };
    let mut timings = MclTimings {
        prepare: seconds,
        load,
        coarsen: p.coarsen,
        ..MclTimings::default()
    };
    let levels = p.transitions.len();
    let mut iterations = 0;
    loop {
        let level = p.transitions.len() - 1;
        let tr = p.transitions.pop().expect("a level");
        let (lv, output) = if level == 0 {
            (Level::Finest, Output::Targets)
        } else {
            (Level::Coarse, Output::Flow)
        };
        let done = iterations;
        let mut report = |r: &MclProgress| {
            progress(&MclProgress {
                iteration: done + r.iteration,
                level,
                ..*r
            })
        };
        let run = b.cluster_level_ranks(c, &tr, m, opts, lv, output, &mut report)?;
        // M_G of this level is not needed again: its pages go back on a thread of their
        // own while the next level runs.
        let freeing = std::thread::spawn(move || drop(tr));
        iterations += run.iterations;
        timings.upload += run.timings.upload;
        timings.iterate += run.timings.iterate;
        timings.download += run.timings.download;
        timings.gather += run.timings.gather;
        timings.gather_bytes += run.timings.gather_bytes;
        timings.gather_device |= run.timings.gather_device;
        timings.partitioned |= run.timings.partitioned;
        timings.fetch += run.timings.fetch;
        if level == 0 {
            let t = Instant::now();
            let clusters = clusters_of(&run.targets, opts);
            timings.interpret = t.elapsed().as_secs_f64();
            let _ = freeing.join();
            let stop = run.stop;
            return Ok(Clustering {
                clusters,
                iterations,
                chaos: run.chaos,
                change: run.change,
                stop,
                converged: stop.converged(),
                levels,
                timings,
            });
        }
        let t = Instant::now();
        let step = p.steps.pop().expect("a coarsening per coarse level");
        let coarse = run.m.expect("a coarse level returns its flow");
        m = project(&coarse, &step)?;
        timings.coarsen += t.elapsed().as_secs_f64();
        let _ = freeing.join();
    }
}

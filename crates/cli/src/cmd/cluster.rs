//! `trident cluster`: regularized Markov clustering (R-MCL, [`trident_core::mcl`]) of a
//! network on a chosen backend, written in `mcl`'s output format.
//!
//! Clusters go to `-o OUT` (or standard output): one cluster per line, its members' labels
//! separated by tabs, largest cluster first. Everything else goes to standard error, as `mcl`
//! does: the backend, reader notes, one progress line per iteration (`--quiet` silences
//! those), a summary, the time of every phase (`phases: read, prepare (kernel load),
//! transfer (upload, download), iterations, interpret, write`, then the clustering and the
//! whole run; the backend starts and loads its kernels while the network is read; under
//! `mpirun … --read ranges`, a `load:` line with the slowest rank's seconds in each phase of
//! the read and of the columns' build), a
//! warning when the iteration cap ran out before convergence, and the `--eval` scores against
//! gold-standard complexes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use trident_core::dist::graph::{share_on_host_or_part, GraphOrPart};
use trident_core::dist::Layout;
use trident_core::graph::Adjacency;
use trident_core::mcl::drive::{cluster_prepared, Prepared};
use trident_core::mcl::{
    eval, Clustering, Expansion, MarkovCluster, MclOptions, MclProgress, TransitionPart, Variant,
};
use trident_core::{io, Backend, Error, Graph, Result};

use crate::files::Files;
use crate::job::{Job, ReadChoice, ReadHow};
use crate::select::{self, BackendChoice};
use crate::Precision;

/// `--expansion` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExpansionChoice {
    /// R-MCL: M ← M·M_G, with the balance penalty.
    Regularized,
    /// Van Dongen's MCL: M ← M·M.
    Mcl,
}

/// `--variant` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VariantChoice {
    /// Trident's R-MCL: mass penalty, top-K pruning, the M·M finish, attractor systems.
    Trident,
    /// MLR-MCL 1.2's R-MCL: its M_G weights, balance, pruning, stop and DPR phase, and its
    /// multi-level mode (--coarsen-to).
    Mlrmcl,
}

/// Cluster a network with regularized Markov clustering (R-MCL); writes mcl's format.
#[derive(clap::Args)]
pub struct Args {
    /// The network: ABC / SNAP edge list (string or numeric labels, optional weights) or
    /// Matrix Market.
    path: PathBuf,
    /// Which R-MCL: Trident's, or MLR-MCL 1.2's (the authors').
    #[arg(long, value_enum, default_value = "trident")]
    variant: VariantChoice,
    /// Inflation exponent r > 1; larger gives smaller clusters (MLR-MCL's -i).
    #[arg(short = 'I', long, default_value_t = 2.0)]
    inflation: f64,
    /// --variant mlrmcl: MLR-MCL's balance b >= 0 (its -b; default 0.5): M_G's row y is
    /// scaled by k_y^-b, k_y the mass of the nodes y's flow reaches. 0: plain R-MCL.
    #[arg(long)]
    balance: Option<f64>,
    /// --variant trident: mass penalty p >= 0 (default 0.5): flow into a node that attracts
    /// m > 1 is scaled by m^-p. 0: plain R-MCL.
    #[arg(long)]
    mass_penalty: Option<f64>,
    /// --variant mlrmcl: coarsen to at most N nodes, then refine level by level (MLR-MCL's
    /// -c; default 1000). 0: single level.
    #[arg(long, value_name = "N")]
    coarsen_to: Option<usize>,
    /// K: at most this many entries kept per column of M (bounds memory at about n·K;
    /// default 64, 256 with --variant mlrmcl, whose own pruning keeps columns short).
    #[arg(long)]
    max_per_column: Option<usize>,
    /// --variant trident: expansion rule (default regularized).
    #[arg(long, value_enum)]
    expansion: Option<ExpansionChoice>,
    /// Give up after this many iterations (reported on stderr; default 100, MLR-MCL's 25 at
    /// full size with --variant mlrmcl).
    #[arg(long)]
    max_iterations: Option<usize>,
    /// --variant trident: stop when no column of M changes by more than this (L1) in an
    /// iteration: R-MCL's fixed point, which its chaos test rarely reaches (default 1e-4). 0
    /// turns the test off.
    #[arg(long)]
    stationary_tolerance: Option<f64>,
    /// --variant trident, regularized expansion: after this many R-MCL iterations, finish
    /// with mcl's M ← M·M until the chaos test is met (R-MCL alone keeps moving flow between
    /// the attractors of a cluster and rarely converges; default 10). 0: R-MCL throughout.
    #[arg(long)]
    finish_after: Option<usize>,
    /// GPU backends: slots of the column pass's local hash table (a power of two, 4 to
    /// 2048; default 2048). Smaller sends more columns to the global-memory path; for
    /// timing and testing, the clusters do not depend on it.
    #[arg(long, value_name = "SLOTS", hide = true)]
    gpu_local_table: Option<usize>,
    /// GPU backends: work-items per column work-group (a power of two, 32 to 1024; default
    /// 256); for timing, the clusters do not depend on it.
    #[arg(long, value_name = "ITEMS", hide = true)]
    gpu_column_wg: Option<usize>,
    /// Under mpirun, on a GPU backend: where `M` lives: `replicate` (all of it on every
    /// device, gathered after every iteration, device to device where NCCL serves),
    /// `partition` (each rank's columns and the columns its expansion reads, fetched from
    /// their owners every iteration, through the hosts: for a network whose `M` does not fit
    /// one device) or `auto` (replicate when it fits every device). The CPU backend always
    /// partitions. The clusters do not depend on it.
    #[arg(long)]
    layout: Option<Layout>,
    /// Under mpirun: how the ranks read the network. `host` (the default): the first rank
    /// of each host reads the file with all its threads, while the host's other ranks start
    /// their devices, and passes the network to them through one shared-memory window
    /// (MPI_Win_allocate_shared): a host reads its input once. `whole`: every rank reads all
    /// of the file. `ranges`: each rank parses its byte range of an integer-id edge list
    /// without weights and the ranks gather the parsed edges (each reads a part of the file:
    /// less traffic on a shared file system; on one host with 4 ranks it was 1 s slower on a
    /// 2.3 GB file, see benches/results/distributed.md). Every rank holds the whole network
    /// either way; the clusters do not depend on it.
    #[arg(long, value_enum)]
    read: Option<ReadChoice>,
    /// Which backend clusters.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendChoice,
    /// Element type of M.
    #[arg(long, value_enum, default_value = "f64")]
    precision: Precision,
    /// Write the clusters here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// No progress line per iteration.
    #[arg(long)]
    quiet: bool,
    /// Score the clusters against gold-standard complexes (one per line, members separated by
    /// whitespace, e.g. CYC2008): matched fraction, sensitivity, PPV, accuracy, modularity.
    #[arg(long, value_name = "COMPLEXES")]
    eval: Option<PathBuf>,
    /// Do not cluster: read the clusters from this file (mcl's format, e.g. `mcl`'s output on
    /// the same network) and only score them (`--eval`) and write them; for comparing tools.
    #[arg(long, value_name = "CLUSTERS", requires = "eval")]
    from: Option<PathBuf>,
}

impl Args {
    /// The options, with each variant's defaults; an option of the other variant is
    /// refused, so that no option means two things.
    fn options(&self) -> Result<MclOptions> {
        let refuse = |what: &str, why: &str| -> Result<MclOptions> {
            Err(Error::invalid("cluster", format!("{what} {why}")))
        };
        let base = match self.variant {
            VariantChoice::Trident => {
                if self.balance.is_some() {
                    return refuse(
                        "--balance",
                        "is MLR-MCL's balance (--variant mlrmcl); Trident's variant has                          --mass-penalty",
                    );
                }
                if self.coarsen_to.is_some() {
                    return refuse("--coarsen-to", "needs --variant mlrmcl");
                }
                MclOptions {
                    mass_penalty: self.mass_penalty.unwrap_or(0.5),
                    ..MclOptions::default()
                }
            }
            VariantChoice::Mlrmcl => {
                if self.mass_penalty.is_some() {
                    return refuse(
                        "--mass-penalty",
                        "is Trident's variant's penalty; MLR-MCL's is --balance",
                    );
                }
                for (given, name) in [
                    (self.expansion.is_some(), "--expansion"),
                    (self.finish_after.is_some(), "--finish-after"),
                    (
                        self.stationary_tolerance.is_some(),
                        "--stationary-tolerance",
                    ),
                ] {
                    if given {
                        return refuse(
                            name,
                            "belongs to --variant trident; MLR-MCL expands by M_R and stops on \
                             its own change test",
                        );
                    }
                }
                let d = MclOptions::mlrmcl();
                MclOptions {
                    balance: self.balance.unwrap_or(d.balance),
                    coarsen_to: self.coarsen_to.unwrap_or(d.coarsen_to),
                    ..d
                }
            }
        };
        Ok(MclOptions {
            inflation: self.inflation,
            expansion: match self.expansion {
                Some(ExpansionChoice::Mcl) => Expansion::Mcl,
                _ => Expansion::Regularized,
            },
            max_per_column: self.max_per_column.unwrap_or(base.max_per_column),
            max_iterations: self.max_iterations.unwrap_or(base.max_iterations),
            stationary_tolerance: self
                .stationary_tolerance
                .unwrap_or(base.stationary_tolerance),
            finish_after: self.finish_after.unwrap_or(base.finish_after),
            local_table: self.gpu_local_table,
            column_wg: self.gpu_column_wg,
            layout: self.layout.unwrap_or_default(),
            ..base
        })
    }
}

pub fn run(args: Args, job: &Job) -> Result<()> {
    // Everything that can be refused is refused before the work: options, output, complexes.
    let opts = args.options()?;
    opts.validate()?;
    // Under mpirun: R-MCL over the ranks (`trident_core::dist::mcl`), each on its backend (a
    // GPU: the one of its local rank); rank 0 alone writes.
    let distributed = job.distributed();
    if !distributed && args.layout.is_some() {
        return Err(Error::invalid(
            "option",
            "--layout applies to a job of many processes (mpirun -np N trident cluster …)",
        ));
    }
    if !distributed && args.read.is_some() {
        return Err(Error::invalid(
            "option",
            "--read applies to a job of many processes (mpirun -np N trident cluster …)",
        ));
    }
    if distributed && args.from.is_some() {
        return Err(Error::invalid(
            "option",
            "--from reads clusters, with nothing to distribute: run it without mpirun",
        ));
    }
    let outputs = if job.is_root() {
        vec![args.output.as_deref()]
    } else {
        vec![]
    };
    let mut files = Files::declare(
        &[Some(&args.path), args.eval.as_deref(), args.from.as_deref()],
        &outputs,
    )?;
    let process = Instant::now();
    let complexes = args
        .eval
        .as_ref()
        .map(|p| eval::read_complexes_limited(p, &crate::env::read_options()))
        .transpose()?;
    let load_complexes = process.elapsed().as_secs_f64();
    // The backend starts (driver and context start-up) and loads its R-MCL kernels (a GPU's
    // PTX JIT or program build) while the network is read: they are independent. Under
    // mpirun the ranks also agree on the device-to-device engine (NCCL), whose communicator
    // is made in the background until the first gather. Only one thread talks to MPI: read
    // whole, the network is read on a thread of its own and the backend opens and agrees
    // here, during the read; read in byte ranges (`--read ranges`), the ranks read it
    // together here while the backend opens on a thread of its own, and agree after.
    let started = Instant::now();
    // Every input node is clustered, as mcl does: a node whose only line is a self-loop is an
    // isolated node (a singleton), not dropped.
    let read_opts = io::EdgeListOptions {
        loop_only_nodes: true,
        ..io::EdgeListOptions::default()
    };
    let read_whole = || {
        let t = Instant::now();
        io::read_graph_limited(&args.path, &read_opts, &crate::env::read_options())
            .map(|g| ((g, None), t.elapsed().as_secs_f64()))
    };
    let open = || {
        let t = Instant::now();
        // auto's remarks are printed once the network is read (an input error comes first).
        let (b, notes) = select::open_quiet(args.backend);
        let b = b.and_then(|b| {
            let open = t.elapsed().as_secs_f64();
            let t = Instant::now();
            if args.from.is_none() {
                crate::with_backend!(&b, b => match args.precision {
                    Precision::F32 => MarkovCluster::<f32>::load_kernels(b),
                    Precision::F64 => MarkovCluster::<f64>::load_kernels(b),
                })?;
            }
            Ok((b, open, t.elapsed().as_secs_f64()))
        });
        (b, notes)
    };
    let agree = |b: Result<_>| {
        b.and_then(|(b, open, kernels)| {
            let t = Instant::now();
            let engine = if distributed {
                crate::with_backend!(&b, b => Backend::connect(b, job.comm()))?
            } else {
                false
            };
            Ok((b, open, kernels, (engine, t.elapsed().as_secs_f64())))
        })
    };
    let choice = job.read_choice(args.read);
    let ranks = (job.comm().size(), job.comm().rank());
    let (host_rank, host_ranks) = job.comm().host_ranks();
    // Read in byte ranges (`--read ranges`, or a host without room to share the network),
    // Trident's variant with nothing that needs the whole graph (--from, --eval) keeps only
    // each rank's columns of the network; anything else is read in byte ranges (where it can
    // be) and gathered whole on every rank.
    let parts = opts.variant == Variant::Trident && args.from.is_none() && args.eval.is_none();
    let (b, notes, read) = std::thread::scope(|scope| {
        if choice == ReadChoice::Host {
            // The host's first rank reads on a thread while its backend opens; the others
            // open theirs. After the agreement (MPI, from this thread), the network passes
            // from the first rank to the others. The others wait meanwhile, so the first
            // rank reads with the threads of all of them (its pool's size times theirs), up
            // to the cores it may run on.
            let t = Instant::now();
            let threads = job.host_read_threads();
            let read = (host_rank == 0)
                .then(|| scope.spawn(move || crate::job::on_threads(threads, read_whole)));
            let (b, notes) = open();
            let b = agree(b);
            let read = read.map(|r| {
                r.join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
                    .map(|((g, _), _)| g)
            });
            // A rank whose backend failed did not agree (the others wait for it there): it
            // ends the job now, with its backend's error, rather than wait in the share.
            let b = match b {
                Err(e) => {
                    let failed = Err(Error::backend("cluster", "the backend failed to open"));
                    return (failed, notes, Err(e));
                }
                Ok(b) => Ok(b),
            };
            // The host's other ranks build their part of the run (their columns of M_G and
            // of the starting M) from the shared graph in place, and hold no copy of it
            // (Trident's variant; MLR-MCL's builds from the whole graph).
            let mut part = |a: Adjacency<'_>| -> Result<Option<(Prep, Net)>> {
                if args.from.is_some() {
                    return Ok(None);
                }
                let net = Net::Part {
                    nodes: a.num_nodes(),
                    edges: a.adj.len() / 2,
                    weighted: a.weights.is_some(),
                    names: None,
                };
                Ok(Prep::from_adjacency(a, &opts, args.precision, ranks)?.map(|p| (p, net)))
            };
            let shared = share_on_host_or_part(job.comm(), read, &mut part);
            // A host without room for the shared window (`/dev/shm` too small): where each
            // rank can keep only its columns, the job reads the file in byte ranges instead
            // (every rank alike: one host without room decides for all); else each rank of
            // that host reads the file whole, as below.
            let no_room = match &shared {
                Ok((_, room)) if parts => {
                    let mut any = [u64::from(!room)];
                    job.comm()
                        .all_reduce_u64(&mut any, trident_core::dist::Op::Max)
                        .map(|()| any[0] != 0)
                }
                _ => Ok(false),
            };
            let columns = match no_room {
                Ok(true) => read_columns(job, &args.path, &read_opts, &opts, args.precision),
                Ok(false) => Ok(None),
                Err(e) => Err(e),
            };
            let shared = match columns {
                Ok(Some((net, prep))) => {
                    let how = Some(ReadHow::NoRoomColumns(job.comm().size()));
                    let read = ((net, how), t.elapsed().as_secs_f64(), Some(prep));
                    return (b, notes, Ok(read));
                }
                Ok(None) => shared,
                Err(e) => Err(e),
            };
            let g = match shared {
                Ok((Some(x), shared)) => {
                    let how = if shared {
                        ReadHow::Host(threads, host_ranks)
                    } else {
                        ReadHow::NoRoom
                    };
                    let (net, prepared) = match x {
                        GraphOrPart::Graph(g) => (Net::Graph(*g), None),
                        GraphOrPart::Part((p, net)) => (net, Some(p)),
                    };
                    Ok(((net, Some(how)), t.elapsed().as_secs_f64(), prepared))
                }
                // No room on this host for the shared window: each rank reads the file.
                Ok((None, _)) => read_whole().map(|((g, _), _)| {
                    let how = Some(ReadHow::NoRoom);
                    ((Net::Graph(g), how), t.elapsed().as_secs_f64(), None)
                }),
                Err(e) => Err(e),
            };
            return (b, notes, g);
        }
        if choice == ReadChoice::Whole {
            // The reading thread also builds the host's part of the run (M_G and the
            // starting M) while the backend opens.
            let read = scope.spawn(|| {
                read_whole().and_then(|((g, how), secs)| {
                    let prepared = match &args.from {
                        Some(_) => None,
                        None => Some(Prep::new(&g, &opts, args.precision, ranks)?),
                    };
                    Ok(((Net::Graph(g), how), secs, prepared))
                })
            });
            let (b, notes) = open();
            let b = agree(b);
            let read = read.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            return (b, notes, read);
        }
        let opened = scope.spawn(open);
        let t = Instant::now();
        let read = if parts {
            read_columns(job, &args.path, &read_opts, &opts, args.precision)
        } else {
            Ok(None)
        };
        let read = match read {
            Ok(Some((net, prep))) => {
                let how = Some(ReadHow::RangesColumns(job.comm().size()));
                Ok(((net, how), t.elapsed().as_secs_f64(), Some(prep)))
            }
            Ok(None) => trident_core::dist::graph::read_graph_whole(
                job.comm(),
                &args.path,
                &read_opts,
                &crate::env::read_options(),
            )
            .map(|(g, ranges)| {
                let how = ranges.then_some(ReadHow::Ranges(job.comm().size()));
                ((Net::Graph(g), how), t.elapsed().as_secs_f64(), None)
            }),
            Err(e) => Err(e),
        };
        let (b, notes) = opened
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        // A rank that failed to read stops here (and ends the job); the others would wait
        // for it in the agreement.
        let b = match &read {
            Err(_) => b.and(Err(Error::backend("cluster", "the read failed"))),
            Ok(_) => agree(b),
        };
        (b, notes, read)
    });
    let ((net, how), read, prepared) = read?;
    // The host's part of the run was built on the reading thread, during the backend's start
    // (read whole), or from the host's shared graph (`--read host`, the host's later ranks).
    let overlapped = prepared.is_some() && choice == ReadChoice::Whole;
    // Or within the read: from the host's shared graph (`--read host`, the host's later
    // ranks), or from each rank's columns (`--read ranges`).
    let within_read = prepared.is_some() && choice != ReadChoice::Whole;
    // Rank 0 (the first rank of its host) always holds the graph: it alone scores and writes.
    let graph = || {
        net.graph().ok_or_else(|| {
            Error::backend(
                "cluster",
                "this rank holds its part of the network, not the graph",
            )
        })
    };
    // Complexes that cannot be scored against this network are refused before the work.
    let gold = match (&complexes, &args.eval, net.graph()) {
        (Some(cx), Some(path), Some(g)) => {
            Some(eval::GoldStandard::resolve(g, cx).map_err(|e| match e {
                Error::Invalid { format, message } => Error::Invalid {
                    format,
                    message: format!("{}: {message}", path.display()),
                },
                e => e,
            })?)
        }
        _ => None,
    };
    for n in notes {
        crate::errln!("{n}");
    }
    let (b, open, kernels, (engine, connect)) = b?;
    crate::errln!(
        "backend: {b} (opened in {open:.3} s, kernels loaded in {kernels:.3} s, while reading)"
    );
    if let Some(g) = net.graph() {
        crate::print_notes(g.notes());
    }
    eprintln!(
        "graph: {} nodes, {} edges{} (read in {read:.3} s{})",
        net.nodes(),
        net.edges(),
        if net.weighted() { ", weighted" } else { "" },
        how.map_or(String::new(), |h| format!(", {h}"))
    );
    let t = Instant::now();
    let c = match &args.from {
        Some(path) => read_clusters(graph()?, path)?,
        None if distributed => {
            eprintln!(
                "ranks: {} ({}), the column pass on each rank's {}{}",
                job.comm().size(),
                job.comm().engine(),
                b,
                if engine {
                    format!(
                        "; NCCL agreed on in {connect:.3} s, its communicator \
                         made in the background until the first gather"
                    )
                } else {
                    String::new()
                }
            );
            match prepared {
                Some(p) => crate::with_backend!(&b, b => p.run(job, b, args.quiet))?,
                None => crate::with_backend!(&b, b => match args.precision {
                    Precision::F32 => cluster_ranks::<f32, _>(job, b, graph()?, &opts, args.quiet),
                    Precision::F64 => cluster_ranks::<f64, _>(job, b, graph()?, &opts, args.quiet),
                })?,
            }
        }
        None => match prepared {
            Some(p) => crate::with_backend!(&b, b => p.run(job, b, args.quiet))?,
            None => crate::with_backend!(&b, b => match args.precision {
                Precision::F32 => cluster::<f32, _>(b, graph()?, &opts, args.quiet),
                Precision::F64 => cluster::<f64, _>(b, graph()?, &opts, args.quiet),
            })?,
        },
    };
    let secs = t.elapsed().as_secs_f64();
    if !c.converged && args.from.is_none() {
        match opts.variant {
            Variant::Trident => eprintln!(
                "warning: R-MCL did not converge in {} iterations (chaos {:.3e} >= {:.0e}, \
                 largest column change {:.3e} >= {:.0e}); the clusters are those of the last \
                 iterate",
                c.iterations, c.chaos, opts.chaos_tolerance, c.change, opts.stationary_tolerance
            ),
            Variant::MlrMcl => eprintln!(
                "warning: MLR-MCL's change test was not met in {} iterations at full size \
                 (||dM||_F / n = {:.3e} >= {:.0e}), as MLR-MCL stops at its cap; the clusters \
                 are those of the last iterate",
                opts.max_iterations,
                c.change,
                trident_core::mcl::mlr::STOP_CHANGE
            ),
        }
    }
    let t = Instant::now();
    if job.is_root() {
        let names = net.names().ok_or_else(|| {
            Error::backend("cluster", "the writing rank holds no names of the network")
        })?;
        write_clusters(names, &c, args.output.as_deref(), &mut files)?;
    }
    files.commit()?;
    let write = t.elapsed().as_secs_f64();
    eprintln!(
        "clusters: {} ({} singletons), largest {}; {} iterations{} (stopped: {}), chaos {:.3e}, \
         change {:.3e}",
        c.clusters.len(),
        c.clusters.iter().filter(|x| x.len() == 1).count(),
        c.clusters.first().map_or(0, Vec::len),
        c.iterations,
        if c.levels > 1 {
            format!(
                " over {} levels (coarsening {:.3} s)",
                c.levels, c.timings.coarsen
            )
        } else {
            String::new()
        },
        c.stop,
        c.chaos,
        c.change
    );
    let end_to_end = started.elapsed().as_secs_f64();
    let t = Instant::now();
    let scores = gold
        .as_ref()
        .map(|gold| Ok::<_, Error>(eval::score_gold(graph()?, &c.clusters, gold)))
        .transpose()?;
    let eval_secs = t.elapsed().as_secs_f64();
    if let (Some(s), Some(path)) = (&scores, &args.eval) {
        eprintln!("eval against {}:", path.display());
        // Both counts: the denominator is the complexes that keep 3 members in the network,
        // not the file's complexes of size >= 3.
        eprintln!(
            "  matched:     {}/{} complexes with >= 3 members in the network ({:.4}); the \
             file has {} complexes, {} of size >= 3",
            s.matched, s.complexes, s.matched_fraction, s.in_file, s.large_in_file
        );
        eprintln!("  sensitivity: {:.4}", s.sensitivity);
        eprintln!("  ppv:         {:.4}", s.ppv);
        eprintln!("  accuracy:    {:.4}", s.accuracy);
        eprintln!("  modularity:  {:.4}", s.modularity);
    }
    // Everything else the process does is timed too, so that its wall time is accounted for:
    // reading the complexes, opening the backend (driver and context start-up), the
    // evaluation, and the teardown (freeing the graph and the clusters, closing the backend:
    // context destruction, kernel modules, the staging pool).
    let p = c.timings;
    let iterations = c.iterations;
    if p.gather_bytes > 0 {
        // Over ranks on a GPU backend: the gathers of M after each iteration, or the
        // fetches of the columns each iteration reads (this rank's).
        eprintln!(
            "{}: {:.3} GB received in {:.3} s ({:.1} GB/s), {}",
            if p.partitioned {
                "layout partition (each rank's columns and those it reads), fetch"
            } else {
                "layout replicate (all of M on every device), gather"
            },
            p.gather_bytes as f64 * 1e-9,
            p.gather,
            p.gather_bytes as f64 * 1e-9 / p.gather.max(1e-9),
            if p.gather_device {
                "device to device (NCCL)"
            } else {
                "through the hosts"
            }
        );
        if p.partitioned {
            let f = p.fetch;
            eprintln!(
                "fetch on the host: route {:.3} s, lengths {:.3} s, entries {:.3} s, M·M operand \
                 {:.3} s",
                f.route, f.lengths, f.entries, f.operand
            );
        }
    }
    let t = Instant::now();
    drop(c);
    drop(net);
    drop(b);
    let teardown = t.elapsed().as_secs_f64();
    eprintln!(
        "phases: read {read:.3} s, prepare {:.3} s ({}kernel load {:.3}), transfer {:.3} s \
         (upload {:.3}, download {:.3}), iterations {:.3} s ({} iterations, {:.1} ms each), interpret {:.3} s, write \
         {write:.3} s; cluster {secs:.3} s, end to end {end_to_end:.3} s; outside it: complexes \
         {load_complexes:.3} s, backend start {open:.3} s and kernel load {kernels:.3} s (during the read{}), eval {eval_secs:.3} s, teardown \
         {teardown:.3} s; process {:.3} s",
        p.prepare,
        if within_read { "within the read; " } else { "" },
        p.load,
        p.upload + p.download,
        p.upload,
        p.download,
        p.iterate,
        iterations,
        1e3 * p.iterate / iterations.max(1) as f64,
        p.interpret,
        if overlapped { " and the preparation" } else { "" },
        process.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The network as this rank holds it: the graph, or only its part of the run and the
/// graph's size: on a host's later rank under `--read host` (built from the host's shared
/// graph in place: no copy), and on every rank under `--read ranges` (its columns, routed to
/// it: no rank holds the whole network).
enum Net {
    Graph(Graph),
    Part {
        nodes: usize,
        edges: usize,
        weighted: bool,
        /// On rank 0 of `--read ranges`, which writes: every node's name (`None` inside:
        /// the numbers); `None` on ranks that do not write.
        names: Option<Option<Vec<String>>>,
    },
}

impl Net {
    fn graph(&self) -> Option<&Graph> {
        match self {
            Net::Graph(g) => Some(g),
            Net::Part { .. } => None,
        }
    }
    /// The names to write the clusters with (`Some(None)`: the numbers); `None` on a rank
    /// that holds neither the graph nor the names.
    fn names(&self) -> Option<Option<&[String]>> {
        match self {
            Net::Graph(g) => Some(g.labels()),
            Net::Part { names, .. } => names.as_ref().map(|n| n.as_deref()),
        }
    }
    fn nodes(&self) -> usize {
        match self {
            Net::Graph(g) => g.num_nodes(),
            Net::Part { nodes, .. } => *nodes,
        }
    }
    fn edges(&self) -> usize {
        match self {
            Net::Graph(g) => g.num_edges(),
            Net::Part { edges, .. } => *edges,
        }
    }
    fn weighted(&self) -> bool {
        match self {
            Net::Graph(g) => g.weights().is_some(),
            Net::Part { weighted, .. } => *weighted,
        }
    }
}

/// The host's part of the run in the precision asked for, built while the backend opens
/// ([`Prepared`]).
enum Prep {
    F32(Prepared<f32>),
    F64(Prepared<f64>),
}

impl Prep {
    /// [`Prepared::new`] of rank `ranks.1` of `ranks.0`.
    fn new(
        g: &Graph,
        opts: &MclOptions,
        precision: Precision,
        ranks: (usize, usize),
    ) -> Result<Self> {
        Ok(match precision {
            Precision::F32 => Prep::F32(Prepared::new(g, opts, ranks.0, ranks.1)?),
            Precision::F64 => Prep::F64(Prepared::new(g, opts, ranks.0, ranks.1)?),
        })
    }

    /// [`Prepared::from_adjacency`]: `None` for MLR-MCL's variant.
    fn from_adjacency(
        a: Adjacency<'_>,
        opts: &MclOptions,
        precision: Precision,
        ranks: (usize, usize),
    ) -> Result<Option<Self>> {
        Ok(match precision {
            Precision::F32 => Prepared::from_adjacency(a, opts, ranks.0, ranks.1)?.map(Prep::F32),
            Precision::F64 => Prepared::from_adjacency(a, opts, ranks.0, ranks.1)?.map(Prep::F64),
        })
    }

    /// [`Prepared::from_part`] of this rank's part of `M_G`.
    fn from_part(
        part: TransitionPart,
        opts: &MclOptions,
        precision: Precision,
        ranks: (usize, usize),
    ) -> Result<Self> {
        Ok(match precision {
            Precision::F32 => Prep::F32(Prepared::from_part(part, opts, ranks.0, ranks.1)?),
            Precision::F64 => Prep::F64(Prepared::from_part(part, opts, ranks.0, ranks.1)?),
        })
    }

    /// Runs it on `b` over the ranks of the job, with the progress lines (rank 0's).
    fn run<B: MarkovCluster<f32> + MarkovCluster<f64>>(
        self,
        job: &Job,
        b: &B,
        quiet: bool,
    ) -> Result<Clustering> {
        let mut progress = |p: &MclProgress| {
            if !quiet {
                progress_line(p);
            }
        };
        match self {
            Prep::F32(p) => cluster_prepared::<f32, B>(job.comm(), b, p, &mut progress),
            Prep::F64(p) => cluster_prepared::<f64, B>(job.comm(), b, p, &mut progress),
        }
    }
}

/// `--read ranges` for Trident's variant: the network read in byte ranges by all ranks
/// ([`trident_core::dist::graph::read_graph_weighted`]), each rank keeping only its
/// columns ([`trident_core::dist::mcl::transition_part`]) and its part of the run; rank 0
/// keeps the names too. `None` on every rank for a network not read so (compressed,
/// METIS…: the caller reads it whole). Collective.
fn read_columns(
    job: &Job,
    path: &Path,
    read_opts: &io::EdgeListOptions,
    opts: &MclOptions,
    precision: Precision,
) -> Result<Option<(Net, Prep)>> {
    let c = job.comm();
    let read = crate::env::read_options();
    let Some(g) = trident_core::dist::graph::read_graph_weighted(c, path, read_opts, &read)? else {
        return Ok(None);
    };
    crate::print_notes(g.notes());
    let mut phases = trident_core::dist::Phases::default();
    let part = trident_core::dist::mcl::transition_part(c, &g, opts, &mut phases)?;
    // The slowest rank's seconds in each phase of the read and of the columns' build.
    let (read, columns) = (g.phases().slowest(c)?, phases.slowest(c)?);
    crate::errln!("load: {read}; columns: {columns}");
    let net = Net::Part {
        nodes: g.num_nodes(),
        edges: g.num_edges() as usize,
        weighted: g.weighted(),
        names: job.is_root().then(|| g.labels()),
    };
    drop(g);
    let prep = Prep::from_part(part, opts, precision, (c.size(), c.rank()))?;
    Ok(Some((net, prep)))
}

/// R-MCL over the ranks of the job, with the same progress lines (rank 0's).
fn cluster_ranks<T: trident_core::Scalar, B: MarkovCluster<T>>(
    job: &Job,
    b: &B,
    g: &Graph,
    opts: &MclOptions,
    quiet: bool,
) -> Result<Clustering> {
    let mut progress = |p: &MclProgress| {
        if !quiet {
            progress_line(p);
        }
    };
    trident_core::dist::mcl::cluster::<T, B>(job.comm(), b, g, opts, &mut progress)
}

/// One iteration's progress line.
fn progress_line(p: &MclProgress) {
    let level = if p.level > 0 {
        format!(" (level {})", p.level)
    } else {
        String::new()
    };
    eprintln!(
        "iteration {:>3}{level}: chaos {:.3e}, change {:.3e}, {} entries, {:.3} s",
        p.iteration, p.chaos, p.change, p.entries, p.seconds
    );
}

fn cluster<T: trident_core::Scalar, B: MarkovCluster<T>>(
    b: &B,
    g: &Graph,
    opts: &MclOptions,
    quiet: bool,
) -> Result<Clustering> {
    let mut progress = |p: &MclProgress| {
        if !quiet {
            progress_line(p);
        }
    };
    b.cluster_with_progress(g, opts, &mut progress)
}

/// Clusters in mcl's format (whitespace-separated labels of `g`'s nodes, one cluster per
/// line) as a [`Clustering`]; a label not in `g` is an error.
fn read_clusters(g: &Graph, path: &Path) -> Result<Clustering> {
    let text = io::read_text_limited(path, &crate::env::read_options())?;
    let ids: std::collections::HashMap<String, usize> =
        (0..g.num_nodes()).map(|u| (g.label(u), u)).collect();
    let mut clusters = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let c = line
            .split_whitespace()
            .map(|l| {
                ids.get(l).copied().ok_or_else(|| {
                    Error::invalid(
                        "clusters",
                        format!(
                            "{}:{}: {l:?} is not a node of the network",
                            path.display(),
                            ln + 1
                        ),
                    )
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        if !c.is_empty() {
            clusters.push(c);
        }
    }
    // The scores assume a partition of the network: overlapping clusters are refused (the
    // node named), nodes in no cluster are counted, warned about and made singletons.
    let cover =
        eval::check_partition(g.num_nodes(), &clusters, |u| g.label(u)).map_err(|e| match e {
            Error::Invalid { format, message } => Error::Invalid {
                format,
                message: format!("{}: {message}", path.display()),
            },
            e => e,
        })?;
    if let Some(first) = cover.first_missing {
        eprintln!(
            "warning: {} of the network's {} nodes are in no cluster of {} (the first: {}); \
             they are scored as singletons",
            cover.missing,
            g.num_nodes(),
            path.display(),
            g.label(first)
        );
        let mut seen = vec![false; g.num_nodes()];
        for &u in clusters.iter().flatten() {
            seen[u] = true;
        }
        clusters.extend((0..g.num_nodes()).filter(|&u| !seen[u]).map(|u| vec![u]));
    }
    trident_core::mcl::sort_clusters(&mut clusters);
    Ok(Clustering {
        clusters,
        iterations: 0,
        chaos: 0.0,
        change: 0.0,
        stop: trident_core::StopReason::Chaos,
        converged: true,
        levels: 1,
        timings: Default::default(),
    })
}

/// mcl's format: one cluster per line, tab-separated labels, largest first. The lines are
/// formatted in parallel, in pieces of about [`WRITE_PIECE`] labels, and written in order.
fn write_clusters(
    labels: Option<&[String]>,
    c: &Clustering,
    out: Option<&Path>,
    files: &mut Files,
) -> Result<()> {
    use rayon::prelude::*;
    // Pieces: runs of clusters of about WRITE_PIECE members (a larger cluster alone).
    let mut cuts = vec![0];
    let mut members = 0;
    for (i, cl) in c.clusters.iter().enumerate() {
        members += cl.len();
        if members >= WRITE_PIECE {
            cuts.push(i + 1);
            members = 0;
        }
    }
    if cuts.last() != Some(&c.clusters.len()) {
        cuts.push(c.clusters.len());
    }
    let pieces: Vec<Vec<u8>> = cuts
        .par_windows(2)
        .map(|r| {
            let mut text = Vec::new();
            for cl in &c.clusters[r[0]..r[1]] {
                for (t, &u) in cl.iter().enumerate() {
                    if t > 0 {
                        text.push(b'\t');
                    }
                    match labels {
                        Some(l) => text.extend_from_slice(l[u].as_bytes()),
                        None => {
                            let _ = write!(text, "{u}");
                        }
                    }
                }
                text.push(b'\n');
            }
            text
        })
        .collect();
    match out {
        Some(p) => files.write(p, |w| {
            for piece in &pieces {
                w.write_all(piece)?;
            }
            Ok(())
        }),
        None => {
            for piece in &pieces {
                crate::out::write_bytes(piece)?;
            }
            Ok(())
        }
    }
}

/// Labels per piece of [`write_clusters`].
const WRITE_PIECE: usize = 1 << 14;

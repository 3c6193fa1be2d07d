//! R-MCL over many processes ([`cluster`]): every rank holds the network (or only its columns
//! of it, [`transition_part`]) and builds `M_G`
//! and the starting `M`; each level's iterations are cut over the ranks by columns
//! ([`MarkovCluster::cluster_level_ranks`]): on a GPU backend the device pass, each rank
//! holding all of `M` gathered device to device (NCCL) or through the hosts
//! ([`crate::mcl::gpu::cluster_level`]); on the CPU the host pass, each rank fetching the
//! columns its expansion needs ([`crate::mcl::ranks`]). Every sum is an integer and every
//! reduction a maximum or an integer sum, so the partition is one process's, bit for bit,
//! on any number of ranks.

use rayon::prelude::*;

use super::{Comm, Phases};
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::mcl::columns::{has_loop, list_ends, scale_of_max, splits_of};
use crate::mcl::{
    drive, Clustering, MarkovCluster, MclOptions, MclProgress, Transition, TransitionPart, Variant,
};
use crate::scalar::Scalar;

/// Clusters `g` (held whole by every rank) with R-MCL over the ranks of `c`, each on its
/// backend `b` (see the module documentation): the clustering one process computes, on
/// every rank.
pub fn cluster<T: Scalar, B: MarkovCluster<T> + ?Sized>(
    c: &dyn Comm,
    b: &B,
    g: &Graph,
    opts: &MclOptions,
    progress: &mut dyn FnMut(&MclProgress),
) -> Result<Clustering> {
    drive::cluster_ranks(c, b, g, opts, progress)
}

/// Rank `c.rank()`'s part of Trident's `M_G` ([`crate::mcl::Transition::new_part`]) from a
/// graph that no rank holds whole ([`super::graph::read_graph_weighted`]): the column
/// blocks are cut from every node's degree, as one process cuts them, and each rank receives
/// the edges of its columns only (both ends of every undirected edge routed to the ranks of
/// its two columns), so a rank holds its columns of the network and never the whole. The
/// same bits as the whole graph's part. MLR-MCL's variant builds its loop graph whole:
/// refused. `phases` gets the cut, the route of the edges, their rows and `M_G`'s build.
pub fn transition_part(
    c: &dyn Comm,
    g: &super::graph::DistGraph,
    opts: &MclOptions,
    phases: &mut Phases,
) -> Result<TransitionPart> {
    opts.validate()?;
    if opts.variant != Variant::Trident {
        return Err(Error::invalid(
            "mcl",
            "MLR-MCL's M_G is built from the whole graph (Transition::new_part)",
        ));
    }
    let n = g.num_nodes();
    let p = c.size();
    let ends = list_ends(
        n,
        |j| g.degree(j) + usize::from(has_loop(opts, g.degree(j))),
        || format!("M_G's column lengths of {n} nodes"),
    )?;
    let splits = splits_of(&ends, p);
    drop(ends);
    let scale = g.max_weight(c)?.map_or(1.0, scale_of_max);
    phases.lap("cut");
    let (indptr, adj, weights) = g.rows_by(c, &splits, phases)?;
    let c0 = splits[c.rank()];
    let at = |j: usize| indptr[j - c0] as usize..indptr[j - c0 + 1] as usize;
    let row = |j: usize| &adj[at(j)];
    // Each column must hold its node's degree (the rows came whole, each edge once).
    if let Some(j) = (c0..splits[c.rank() + 1])
        .into_par_iter()
        .find_any(|&j| row(j).len() != g.degree(j))
    {
        return Err(Error::backend(
            "dist",
            format!(
                "column {j} received {} edges, its degree is {} (a bug)",
                row(j).len(),
                g.degree(j)
            ),
        ));
    }
    let column = |j: usize| (row(j), weights.as_deref().map(|w| &w[at(j)]));
    let part =
        Transition::part_of_columns(opts, splits, c.rank(), column, weights.as_deref(), scale);
    phases.lap("M_G");
    part
}

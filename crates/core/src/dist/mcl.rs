//! R-MCL over many processes ([`cluster`]): every rank holds the network and builds `M_G`
//! and the starting `M`; each level's iterations are cut over the ranks by columns
//! ([`MarkovCluster::cluster_level_ranks`]): on a GPU backend the device pass, each rank
//! holding all of `M` gathered device to device (NCCL) or through the hosts
//! ([`crate::mcl::gpu::cluster_level`]); on the CPU the host pass, each rank fetching the
//! columns its expansion needs ([`crate::mcl::ranks`]). Every sum is an integer and every
//! reduction a maximum or an integer sum, so the partition is one process's, bit for bit,
//! on any number of ranks.

use super::Comm;
use crate::error::Result;
use crate::graph::Graph;
use crate::mcl::{drive, Clustering, MarkovCluster, MclOptions, MclProgress};
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

//! Regularized Markov clustering (R-MCL): the [`MarkovCluster`] trait and its options.

use crate::backend::Backend;
use crate::error::Result;
use crate::graph::Graph;
use crate::scalar::Scalar;

/// Options for [`MarkovCluster`] (R-MCL).
#[derive(Debug, Clone, PartialEq)]
pub struct MclOptions {
    /// Inflation exponent r (default 2.0); larger gives smaller clusters.
    pub inflation: f64,
    /// Add self-loops of this weight before normalising (default 1.0; 0 disables).
    pub self_loop_weight: f64,
    /// Drop entries below this value after inflation (default 1e-4).
    pub prune_threshold: f64,
    /// Keep at most this many entries per column after pruning (default 64); bounds the
    /// ELLPACK-R width.
    pub max_entries: usize,
    /// Stop when the global chaos falls below this (default 1e-3).
    pub chaos_tolerance: f64,
    /// Give up after this many iterations (default 100).
    pub max_iterations: usize,
}

impl Default for MclOptions {
    fn default() -> Self {
        Self {
            inflation: 2.0,
            self_loop_weight: 1.0,
            prune_threshold: 1e-4,
            max_entries: 64,
            chaos_tolerance: 1e-3,
            max_iterations: 100,
        }
    }
}

/// A clustering of the nodes of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    /// The clusters, each a sorted list of nodes; every node is in exactly one.
    pub clusters: Vec<Vec<usize>>,
    /// Iterations run.
    pub iterations: usize,
    /// Global chaos at the end.
    pub chaos: f64,
}

/// Regularized Markov clustering.
pub trait MarkovCluster<T: Scalar>: Backend {
    /// Clusters the nodes of `g`.
    fn cluster(&self, g: &Graph, opts: &MclOptions) -> Result<Clustering>;
}

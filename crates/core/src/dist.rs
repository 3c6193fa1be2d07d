//! Many processes: the algorithms' distributed drivers ([`graph`]: the parallel read and the
//! distributed build and orientation of a graph; [`triangles`]: the distributed count;
//! [`mcl`]: R-MCL over ranks), written against the communicator of [`crate::comm`] (whose
//! items are re-exported here), and [`threads`], ranks as threads of one process (the tests'
//! communicator).

pub(crate) use crate::comm::zeroed;
pub use crate::comm::{
    all_gather, all_to_all, block_owner, block_start, exclusive_sum, gather_one, reduce_one, route,
    route_owned, Comm, Layout, Op, Solo,
};

pub mod graph;

/// This rank's seconds in each phase of a distributed step, in order: where a step's time
/// goes (the CLI prints the slowest rank's of each). A phase that ends in a collective also
/// holds the wait for the slowest rank.
#[derive(Debug, Clone)]
pub struct Phases {
    laps: Vec<(&'static str, f64)>,
    at: std::time::Instant,
}

impl Default for Phases {
    fn default() -> Self {
        Self {
            laps: Vec::new(),
            at: std::time::Instant::now(),
        }
    }
}

impl Phases {
    /// The phases so far, with their seconds.
    pub fn laps(&self) -> &[(&'static str, f64)] {
        &self.laps
    }
    /// Ends phase `name` (timed from the end of the last one, or from the start).
    pub(crate) fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((name, (now - self.at).as_secs_f64()));
        self.at = now;
    }
}

pub mod mcl;
pub mod threads;
pub mod triangles;

#[cfg(test)]
mod tests;

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
    /// Each phase with its slowest rank's seconds (`read 1.20, parse 3.40, …`); every rank
    /// of `c` must call it with the same phases. Collective.
    pub fn slowest(&self, c: &dyn Comm) -> crate::error::Result<String> {
        let mut secs: Vec<u64> = self.laps.iter().map(|l| l.1.to_bits()).collect();
        // Non-negative floats order as their bits.
        c.all_reduce_u64(&mut secs, Op::Max)?;
        Ok(self
            .laps
            .iter()
            .zip(secs)
            .map(|((name, _), s)| format!("{name} {:.2}", f64::from_bits(s)))
            .collect::<Vec<_>>()
            .join(", "))
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

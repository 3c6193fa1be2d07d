//! Many processes: the algorithms' distributed drivers ([`graph`]: the parallel read and the
//! distributed build and orientation of a graph; [`triangles`]: the distributed count;
//! [`mcl`]: R-MCL over ranks), written against the communicator of [`crate::comm`] (whose
//! items are re-exported here), and [`threads`], ranks as threads of one process (the tests'
//! communicator).

pub(crate) use crate::comm::zeroed;
pub use crate::comm::{
    all_gather, all_to_all, block_owner, block_start, exclusive_sum, gather_one, reduce_one, route,
    route_owned, Comm, Op, Solo,
};

pub mod graph;
pub mod mcl;
pub mod threads;
pub mod triangles;

#[cfg(test)]
mod tests;

//! A [`DistGraph`]'s names and its rows cut by other blocks: what R-MCL needs of a network
//! that no rank holds whole (each rank's columns, [`crate::dist::mcl::transition_part`]).

use rayon::prelude::*;

use super::{id_label, route_owned, rows_of, Comm, DistGraph, Names};
use crate::error::{Error, Result};

impl DistGraph {
    /// The names of every node as one process's graph labels them ([`Graph::labels`]):
    /// `None` where they are the numbers. On rank 0 of a graph read whole by every rank the
    /// labels it read; the other ranks of such a graph name numbers.
    pub fn labels(&self) -> Option<Vec<String>> {
        match &self.names {
            Names::Numbers => None,
            Names::Ids(ids) => Some(ids.map_ids(id_label)),
            Names::OneBased => Some((1..=self.n as u64).into_par_iter().map(id_label).collect()),
            Names::Labels(l) => Some(l.clone()),
        }
    }

    /// The rows `c0..c1` of the whole adjacency, cut by `splits` (every rank's first row,
    /// then `n`; rank `r` gets `splits[r]..splits[r + 1]`): each undirected edge `{u, v}` of
    /// every rank's share goes to the rank of `u` as `v` and to the rank of `v` as `u`.
    /// Row pointers (from 0) and every row's neighbours, sorted. Collective.
    pub fn rows_by(&self, c: &dyn Comm, splits: &[usize]) -> Result<(Vec<u64>, Vec<u32>)> {
        let p = c.size();
        if splits.len() != p + 1 || splits[p] != self.n || splits.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::invalid(
                "dist",
                format!(
                    "{} row boundaries for {p} ranks of {} nodes",
                    splits.len(),
                    self.n
                ),
            ));
        }
        let owner = |v: u64| splits[1..].partition_point(|&s| s as u64 <= v);
        let mut keys = crate::comm::zeroed::<u64>(2 * self.adj.len(), "rows")?;
        keys.par_chunks_mut(2)
            .zip(self.local_edges()?)
            .for_each(|(out, e)| {
                out[0] = e;
                out[1] = e.rotate_right(32);
            });
        let keys = route_owned(c, keys, |&k| owner(k >> 32))?;
        let me = c.rank();
        rows_of(&keys, splits[me], splits[me + 1], false)
    }
}

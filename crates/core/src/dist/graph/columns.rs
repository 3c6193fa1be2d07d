//! A [`DistGraph`]'s names and its rows cut by other blocks: what R-MCL needs of a network
//! that no rank holds whole (each rank's columns, [`crate::dist::mcl::transition_part`]).

use rayon::prelude::*;

use super::{
    id_label, route_owned, rows_of, weighted_rows, Comm, DistGraph, Names, Phases, Weighted,
};
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

    /// Whether the edges carry weights ([`super::read_graph_weighted`]).
    pub fn weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The largest weight of the whole graph (of weights below 0, 0), `None` when
    /// unweighted. Collective.
    pub fn max_weight(&self, c: &dyn Comm) -> Result<Option<f64>> {
        let Some(w) = &self.weights else {
            return Ok(None);
        };
        // Non-negative floats order as their bits.
        let mine = w.par_iter().copied().reduce(|| 0.0, f64::max).max(0.0);
        let mut bits = [(mine + 0.0).to_bits()];
        c.all_reduce_u64(&mut bits, crate::comm::Op::Max)?;
        Ok(Some(f64::from_bits(bits[0])))
    }

    /// The rows `c0..c1` of the whole adjacency, cut by `splits` (every rank's first row,
    /// then `n`; rank `r` gets `splits[r]..splits[r + 1]`): each undirected edge `{u, v}` of
    /// every rank's share goes to the rank of `u` as `v` and to the rank of `v` as `u`, with
    /// its weight if weighted. Row pointers (from 0), every row's neighbours, sorted, and
    /// their weights. Collective.
    pub fn rows_by(
        &self,
        c: &dyn Comm,
        splits: &[usize],
        phases: &mut Phases,
    ) -> Result<ColumnRows> {
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
        let (me, len) = (c.rank(), 2 * self.adj.len());
        // local_edges is in the order of adj (and of the weights).
        let edges = self.local_edges()?;
        let Some(w) = &self.weights else {
            let mut keys = crate::comm::zeroed::<u64>(len, "rows")?;
            keys.par_chunks_mut(2).zip(edges).for_each(|(out, e)| {
                out[0] = e;
                out[1] = e.rotate_right(32);
            });
            let keys = route_owned(c, keys, |&k| owner(k >> 32))?;
            phases.lap("route");
            let (ptr, adj) = rows_of(&keys, splits[me], splits[me + 1], false)?;
            phases.lap("rows");
            return Ok((ptr, adj, None));
        };
        let mut pairs = crate::comm::zeroed::<Weighted>(len, "rows")?;
        pairs
            .par_chunks_mut(2)
            .zip(edges.par_iter().zip(w))
            .for_each(|(out, (&key, &w))| {
                out[0] = Weighted { key, w };
                out[1] = Weighted {
                    key: key.rotate_right(32),
                    w,
                };
            });
        drop(edges);
        let pairs = route_owned(c, pairs, |e| owner(e.key >> 32))?;
        phases.lap("route");
        let (ptr, adj, w) = weighted_rows(pairs, splits[me], splits[me + 1])?;
        phases.lap("rows");
        Ok((ptr, adj, Some(w)))
    }
}

/// Rows as [`DistGraph::rows_by`] gives them: pointers (from 0), neighbours, weights.
pub type ColumnRows = (Vec<u64>, Vec<u32>, Option<Vec<f64>>);

//! Synthetic graphs: the Graph500 Kronecker (R-MAT) generator and a planted-partition
//! generator with ground-truth communities ([`planted`]).
//!
//! [`kronecker`] draws `edge_factor · 2^scale` edges on `2^scale` nodes. Each edge descends
//! `scale` levels of the 2 × 2 initiator `[[A, B], [C, D]]` with the Graph500 parameters
//! A = 0.57, B = C = 0.19, D = 0.05, picking one quadrant per level; node ids are then
//! relabelled by a random permutation (as the Graph500 reference code does, so that degree
//! does not follow id). Duplicates and self-loops are kept in the edge list; [`Graph`]
//! building removes them, as for any input.
//!
//! Reproducible whatever the thread count: edge `i`'s random numbers come from a
//! counter-based generator (SplitMix64 of `seed` and `i`), so the list is a pure function of
//! `(scale, edge_factor, seed)`, generated in parallel with rayon.

mod partition;
#[cfg(test)]
mod tests;

pub use partition::{planted, Planted, PlantedOptions};

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use crate::alloc;
use crate::error::{Error, Result};
use crate::graph::Graph;

/// Graph500 initiator probabilities.
pub const KRONECKER_A: f64 = 0.57;
/// Graph500 initiator probabilities.
pub const KRONECKER_B: f64 = 0.19;
/// Graph500 initiator probabilities.
pub const KRONECKER_C: f64 = 0.19;

/// A Kronecker edge list: `src[i] – dst[i]` on nodes `0..nodes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeArrays {
    /// Number of nodes.
    pub nodes: usize,
    /// Sources.
    pub src: Vec<u32>,
    /// Destinations.
    pub dst: Vec<u32>,
}

impl EdgeArrays {
    /// The undirected simple graph of these edges (duplicates merged, self-loops dropped).
    pub fn to_graph(&self) -> Result<Graph> {
        Graph::from_arrays(self.nodes, &self.src, &self.dst, None, 0)
    }

    /// Writes a SNAP-style edge list: a `#` header, then one `u<TAB>v` line per edge (0-based,
    /// as drawn, duplicates and self-loops included).
    ///
    /// Whole or not at all (through a temporary file renamed into place).
    pub fn write_snap(&self, path: impl AsRef<Path>, comment: &str) -> Result<()> {
        crate::io::write_file(path.as_ref(), |w| self.write_snap_to(w, comment))
    }

    /// [`write_snap`](Self::write_snap) to any writer.
    pub fn write_snap_to(&self, w: &mut impl Write, comment: &str) -> std::io::Result<()> {
        writeln!(w, "# {comment}")?;
        writeln!(w, "# Nodes: {} Edges: {}", self.nodes, self.src.len())?;
        // Lines formatted in parallel chunks, written in order.
        const CHUNK: usize = 1 << 16;
        let chunks: Vec<(&[u32], &[u32])> =
            self.src.chunks(CHUNK).zip(self.dst.chunks(CHUNK)).collect();
        for group in chunks.chunks(64) {
            let texts: Vec<Vec<u8>> = group
                .par_iter()
                .map(|(s, d)| {
                    let mut b = Vec::with_capacity(s.len() * 16);
                    for (&u, &v) in s.iter().zip(d.iter()) {
                        push_u32(&mut b, u);
                        b.push(b'\t');
                        push_u32(&mut b, v);
                        b.push(b'\n');
                    }
                    b
                })
                .collect();
            for t in texts {
                w.write_all(&t)?;
            }
        }
        w.flush()
    }
}

fn push_u32(b: &mut Vec<u8>, mut x: u32) {
    let mut tmp = [0u8; 10];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    b.extend_from_slice(&tmp[i..]);
}

/// SplitMix64: a bijective mix, used as a counter-based generator.
#[inline]
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform double in `[0, 1)` from 53 random bits.
#[inline]
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A random permutation of `0..n` (Fisher–Yates from its own stream of `key`; sequential,
/// O(n)), allocated fallibly.
fn permutation(n: usize, key: u64, what: impl FnOnce() -> String) -> Result<Vec<u32>> {
    let mut perm: Vec<u32> = alloc::try_with_capacity(n, what)?;
    perm.extend((0..n as u64).map(|i| i as u32));
    let mut state = splitmix(key ^ 0x7065_726D);
    for i in (1..n).rev() {
        state = splitmix(state);
        let j = ((state as u128 * (i as u128 + 1)) >> 64) as usize;
        perm.swap(i, j);
    }
    Ok(perm)
}

/// What an edge list holds once read as an undirected simple graph ([`EdgeArrays::tally`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeTally {
    /// Edges in the list, as drawn.
    pub drawn: usize,
    /// Self-loops among them (a reader drops them).
    pub self_loops: usize,
    /// Edges that repeat an earlier one, in either direction (a reader merges them).
    pub duplicates: usize,
    /// Distinct undirected edges: what a reader's graph has.
    pub distinct: usize,
    /// Nodes of `0..nodes` in no edge other than a self-loop (a reader of the edge list
    /// never sees them as nodes).
    pub nodes_without_edges: usize,
}

impl EdgeArrays {
    /// Counts the self-loops, duplicates, distinct undirected edges and nodes without edges
    /// (a parallel sort of the edges: 8 bytes per edge, allocated fallibly).
    pub fn tally(&self) -> Result<EdgeTally> {
        let m = self.src.len();
        let mut keys: Vec<u64> =
            alloc::try_with_capacity(m, || format!("counting the distinct edges of {m}"))?;
        keys.par_extend(
            self.src
                .par_iter()
                .zip(self.dst.par_iter())
                .filter(|(u, v)| u != v)
                .map(|(&u, &v)| (u64::from(u.min(v)) << 32) | u64::from(u.max(v))),
        );
        let self_loops = m - keys.len();
        keys.par_sort_unstable();
        let distinct = if keys.is_empty() {
            0
        } else {
            1 + keys.par_windows(2).filter(|w| w[0] != w[1]).count()
        };
        let mut seen: Vec<bool> = alloc::try_vec(self.nodes, false, || {
            format!("marking the nodes of {} in use", self.nodes)
        })?;
        for &k in &keys {
            seen[(k >> 32) as usize] = true;
            seen[(k & 0xFFFF_FFFF) as usize] = true;
        }
        Ok(EdgeTally {
            drawn: m,
            self_loops,
            duplicates: keys.len() - distinct,
            distinct,
            nodes_without_edges: seen.iter().filter(|&&x| !x).count(),
        })
    }
}

/// The Graph500 Kronecker edge list of `2^scale` nodes and `edge_factor · 2^scale` edges
/// (see the module documentation). `scale` must be in `1..=31`.
pub fn kronecker(scale: u32, edge_factor: usize, seed: u64) -> Result<EdgeArrays> {
    if !(1..=31).contains(&scale) {
        return Err(Error::invalid(
            "kronecker",
            format!("scale {scale} (expected 1 to 31)"),
        ));
    }
    let n = 1usize << scale;
    let m = edge_factor
        .checked_mul(n)
        .ok_or_else(|| Error::invalid("kronecker", "edge count overflows"))?;
    let (a, b, c) = (KRONECKER_A, KRONECKER_B, KRONECKER_C);
    let ab = a + b;
    let c_norm = c / (1.0 - ab);
    let a_norm = a / ab;
    let key = splitmix(seed ^ 0x6B72_6F6E_6563_6B72);
    let what = || format!("a scale-{scale} Kronecker graph ({n} nodes, {m} edges)");
    alloc::ensure_fits((2 * m as u128 + n as u128) * 4, what)?;
    let perm = permutation(n, key, what)?;
    let mut src: Vec<u32> = alloc::try_zeroed_vec(m, what)?;
    let mut dst: Vec<u32> = alloc::try_zeroed_vec(m, what)?;
    const CHUNK: usize = 1 << 14;
    src.par_chunks_mut(CHUNK)
        .zip(dst.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(ci, (s, d))| {
            for (k, (su, dv)) in s.iter_mut().zip(d.iter_mut()).enumerate() {
                let e = (ci * CHUNK + k) as u64;
                let mut ctr = splitmix(key ^ e.wrapping_mul(0xD1B5_4A32_D192_ED03));
                let (mut u, mut v) = (0usize, 0usize);
                for level in 0..scale {
                    // Two draws per level, as the Graph500 reference: row half, then column.
                    ctr = splitmix(ctr);
                    let r1 = unit(ctr);
                    ctr = splitmix(ctr);
                    let r2 = unit(ctr);
                    let ii = r1 > ab;
                    let jj = r2 > if ii { c_norm } else { a_norm };
                    let bit = scale - 1 - level;
                    u |= (ii as usize) << bit;
                    v |= (jj as usize) << bit;
                }
                *su = perm[u];
                *dv = perm[v];
            }
        });
    Ok(EdgeArrays { nodes: n, src, dst })
}

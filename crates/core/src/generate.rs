//! Synthetic graphs: the Graph500 Kronecker (R-MAT) generator.
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

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

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
    pub fn write_snap(&self, path: impl AsRef<Path>, comment: &str) -> Result<()> {
        let path = path.as_ref();
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let f = std::fs::File::create(path).map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        writeln!(w, "# {comment}").map_err(io)?;
        writeln!(w, "# Nodes: {} Edges: {}", self.nodes, self.src.len()).map_err(io)?;
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
                w.write_all(&t).map_err(io)?;
            }
        }
        w.flush().map_err(io)
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
    // Random relabelling: a Fisher–Yates shuffle from its own stream (sequential, O(n)).
    let mut perm: Vec<u32> = (0..n as u64).map(|i| i as u32).collect();
    let mut state = splitmix(key ^ 0x7065_726D);
    for i in (1..n).rev() {
        state = splitmix(state);
        let j = ((state as u128 * (i as u128 + 1)) >> 64) as usize;
        perm.swap(i, j);
    }
    let mut src = vec![0u32; m];
    let mut dst = vec![0u32; m];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_whatever_the_threads() {
        let a = kronecker(10, 8, 7).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| kronecker(10, 8, 7).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, kronecker(10, 8, 8).unwrap());
        assert_eq!(a.src.len(), 8 << 10);
        assert!(a.src.iter().chain(&a.dst).all(|&x| (x as usize) < a.nodes));
    }

    #[test]
    fn skewed_degrees() {
        let g = kronecker(12, 16, 1).unwrap().to_graph().unwrap();
        let max = (0..g.num_nodes()).map(|v| g.degree(v)).max().unwrap();
        let mean = 2.0 * g.num_edges() as f64 / g.num_nodes() as f64;
        assert!(max as f64 > 10.0 * mean, "max {max}, mean {mean}");
    }

    #[test]
    fn bad_scale() {
        assert!(kronecker(0, 16, 1).is_err());
        assert!(kronecker(40, 16, 1).is_err());
    }

    #[test]
    fn writes_snap_that_reads_back() {
        let k = kronecker(6, 4, 3).unwrap();
        let dir = std::env::temp_dir().join(format!("trident-kron-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("k.txt");
        k.write_snap(&p, "test").unwrap();
        let g = crate::io::read_graph_auto(&p).unwrap();
        let h = k.to_graph().unwrap();
        // The reader numbers nodes by first appearance or by id; edge counts agree anyway.
        assert_eq!(g.num_edges(), h.num_edges());
        std::fs::remove_dir_all(&dir).ok();
    }
}

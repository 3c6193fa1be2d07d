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

/// Parameters of [`planted`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlantedOptions {
    /// Nodes `n` (at least 2, at most 2^32 − 1).
    pub nodes: usize,
    /// Communities `C` (`1 ≤ C ≤ n/2`): sizes `⌊n/C⌋` or `⌈n/C⌉`, each at least 2.
    pub communities: usize,
    /// Mean degree `D > 0`: `round(n·D/2)` distinct edges. Requests that cannot be met
    /// (more edges inside the communities, or between them, than there are pairs of nodes)
    /// are refused.
    pub degree: f64,
    /// Mixing `μ` in `[0, 1]`: the fraction of edges drawn to another community (needs
    /// `C ≥ 2` when `μ > 0`).
    pub mixing: f64,
    /// Random seed.
    pub seed: u64,
}

/// A planted partition: its edge list and the ground truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planted {
    /// The edges: distinct undirected pairs, no self-loops (so a reader's graph has exactly
    /// these edges).
    pub edges: EdgeArrays,
    /// `community[u]`: the community of node `u` (in `0..C`).
    pub community: Vec<u32>,
}

impl Planted {
    /// The communities as lists of nodes, community `0` first, members ascending.
    pub fn communities(&self) -> Vec<Vec<u32>> {
        let c = self
            .community
            .iter()
            .map(|&x| x as usize + 1)
            .max()
            .unwrap_or(0);
        let mut out = vec![Vec::new(); c];
        for (u, &x) in self.community.iter().enumerate() {
            out[x as usize].push(u as u32);
        }
        out
    }

    /// Writes the communities, one per line, members separated by spaces (the format of
    /// CYC2008 and of `trident cluster --eval`; node numbers are the labels of the edge list).
    ///
    /// Whole or not at all (through a temporary file renamed into place).
    pub fn write_communities(&self, path: impl AsRef<Path>) -> Result<()> {
        crate::io::write_file(path.as_ref(), |w| self.write_communities_to(w))
    }

    /// [`write_communities`](Self::write_communities) to any writer.
    pub fn write_communities_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        let mut line = Vec::new();
        for c in self.communities() {
            line.clear();
            for (t, &u) in c.iter().enumerate() {
                if t > 0 {
                    line.push(b' ');
                }
                push_u32(&mut line, u);
            }
            line.push(b'\n');
            w.write_all(&line)?;
        }
        w.flush()
    }
}

/// A planted-partition graph (stochastic block model with a fixed edge count), reproducible
/// from the seed whatever the number of threads.
///
/// Nodes are cut into `C` communities of (nearly) equal size, then relabelled by a random
/// permutation (so that community does not follow node number). Of the `m = round(n·D/2)`
/// edges, `round(μ·m)` join two communities and the rest lie inside one (LFR's mixing
/// parameter), and all `m` are **distinct pairs of distinct nodes**: the graph a reader
/// builds has exactly `m` edges and mean degree `D` (up to the rounding of `m`). A request
/// with more edges of either kind than there are such pairs is refused with the limit.
///
/// Sparse classes (at most half of their pairs wanted) are drawn: draw `k` starts at node
/// `k mod n` (unpermuted numbering, so starts are spread evenly) and ends at a uniformly
/// drawn other node of the same community (or of another community); draws that repeat a
/// pair are discarded and more are drawn, in rounds, until `m` are distinct. Dense classes
/// are sampled as a uniform subset of all their pairs. Edge draws come from a
/// counter-based generator (SplitMix64 of the seed and the draw's number), so rounds are
/// parallel and the result does not depend on the thread count.
pub fn planted(o: &PlantedOptions) -> Result<Planted> {
    let bad = |what: String| Err(Error::invalid("planted partition", what));
    let n = o.nodes;
    if n < 2 || n > u32::MAX as usize {
        return bad(format!("nodes must be in 2..=4294967295, got {n}"));
    }
    let c = o.communities;
    if c == 0 || c > n / 2 {
        return bad(format!(
            "communities must be in 1..={} (at least 2 nodes each), got {c}",
            n / 2
        ));
    }
    if !(o.degree.is_finite() && o.degree > 0.0) {
        return bad(format!("degree must be > 0, got {}", o.degree));
    }
    if !(0.0..=1.0).contains(&o.mixing) {
        return bad(format!("mixing must be in [0, 1], got {}", o.mixing));
    }
    if o.mixing > 0.0 && c < 2 {
        return bad("mixing > 0 needs at least 2 communities".into());
    }
    let m = (n as f64 * o.degree / 2.0).round();
    if m > (1u64 << 40) as f64 {
        return bad(format!("{m} edges are too many"));
    }
    let m = m as usize;
    // Community b holds the unpermuted nodes start(b) .. start(b + 1).
    let start = |b: usize| -> usize { (b as u128 * n as u128 / c as u128) as usize };
    let block = |u: usize| -> usize {
        // The b with start(b) <= u < start(b + 1).
        let mut b = ((u as u128 * c as u128) / n as u128) as usize;
        while b + 1 < c && start(b + 1) <= u {
            b += 1;
        }
        while start(b) > u {
            b -= 1;
        }
        b
    };
    // Pairs available inside communities and between them.
    let (small, large) = (n / c, n.div_ceil(c));
    let n_large = n - small * c; // communities of size `large` (when large > small)
    let pairs = |s: usize| s as u128 * (s as u128).saturating_sub(1) / 2;
    let intra_pairs = pairs(small) * (c - n_large) as u128 + pairs(large) * n_large as u128;
    let cross_pairs = pairs(n) - intra_pairs;
    let m_cross = (o.mixing * m as f64).round() as usize;
    let m_in = m - m_cross;
    if m_in as u128 > intra_pairs {
        return bad(format!(
            "degree {} with mixing {} asks for {m_in} distinct edges inside communities of \
             {small}{} nodes, which hold only {intra_pairs} (a node has at most {} neighbours \
             in its community, so degree x (1 - mixing) must be at most that): lower \
             --degree or --communities",
            o.degree,
            o.mixing,
            if large > small {
                format!(" to {large}")
            } else {
                String::new()
            },
            small - 1
        ));
    }
    if m_cross as u128 > cross_pairs {
        return bad(format!(
            "degree {} with mixing {} asks for {m_cross} distinct edges between communities, \
             but there are only {cross_pairs} pairs of nodes in different communities: lower \
             --degree or --mixing",
            o.degree, o.mixing
        ));
    }
    let what = || format!("a planted partition of {n} nodes and {m} edges");
    // Keys (8 bytes an edge), a round's draws (16 bytes a draw, at most about 2.2 per
    // wanted edge), the output (8 bytes an edge), the permutation and the communities.
    alloc::ensure_fits(m as u128 * 40 + n as u128 * 8, what)?;
    let key = splitmix(o.seed ^ 0x706C_616E_7465_6421);
    let perm = permutation(n, key, what)?;
    // Uniform in 0..k from one 64-bit draw (Lemire's multiply-shift; bias < k / 2^64).
    let below = |x: u64, k: usize| -> usize { ((x as u128 * k as u128) >> 64) as usize };
    let pack = |u: usize, v: usize| -> u64 { ((u.min(v) as u64) << 32) | u.max(v) as u64 };
    // Draw e of the class (intra or cross): a pair of distinct unpermuted nodes.
    let draw = |cross: bool, e: u64| -> u64 {
        let salt = if cross { 0x0063_726F_7373_u64 } else { 0 };
        let r = splitmix(key ^ salt ^ e.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let u = (e % n as u64) as usize;
        let b = block(u);
        let (lo, hi) = (start(b), start(b + 1));
        let v = if cross {
            // Another community: uniform over the n - size nodes outside [lo, hi).
            let t = below(r, n - (hi - lo));
            if t < lo {
                t
            } else {
                t + (hi - lo)
            }
        } else {
            // The same community, not u itself.
            let t = lo + below(r, hi - lo - 1);
            if t < u {
                t
            } else {
                t + 1
            }
        };
        pack(u, v)
    };
    let mut keys: Vec<u64> = alloc::try_with_capacity(m, what)?;
    for (cross, want, avail) in [(false, m_in, intra_pairs), (true, m_cross, cross_pairs)] {
        if want == 0 {
            continue;
        }
        let got = if 2 * want as u128 > avail {
            dense_subset(
                n,
                cross,
                want,
                &block,
                &start,
                splitmix(key ^ 0x6465_6E73 ^ cross as u64),
                what,
            )?
        } else {
            sparse_draws(want, avail, |e| draw(cross, e), what)?
        };
        keys.extend_from_slice(&got);
    }
    let mut src: Vec<u32> = alloc::try_with_capacity(m, what)?;
    let mut dst: Vec<u32> = alloc::try_with_capacity(m, what)?;
    let perm_ref = &perm;
    src.par_extend(keys.par_iter().map(|&k| perm_ref[(k >> 32) as usize]));
    dst.par_extend(
        keys.par_iter()
            .map(|&k| perm_ref[(k & 0xFFFF_FFFF) as usize]),
    );
    drop(keys);
    // perm maps unpermuted node u to its label perm[u]; communities are by label.
    let mut community: Vec<u32> = alloc::try_zeroed_vec(n, what)?;
    for (u, &p) in perm.iter().enumerate() {
        community[p as usize] = block(u) as u32;
    }
    Ok(Planted {
        edges: EdgeArrays { nodes: n, src, dst },
        community,
    })
}

/// `want` distinct pairs (packed, sorted) from the draws `draw(0)`, `draw(1)`, …: each round
/// draws enough for the deficit (the class is at most half full, so at most about twice the
/// deficit), drops pairs already had or repeated within the round, and keeps the first
/// `deficit` new ones in draw order. Deterministic: a function of the draws alone.
fn sparse_draws(
    want: usize,
    avail: u128,
    draw: impl Fn(u64) -> u64 + Sync,
    what: impl Fn() -> String,
) -> Result<Vec<u64>> {
    let mut set: Vec<u64> = alloc::try_with_capacity(want, &what)?;
    let mut next = 0u64;
    while set.len() < want {
        let deficit = want - set.len();
        // Expected fraction of new draws that repeat a pair, at the end of this round.
        let full = want as f64 / avail as f64;
        let count = ((deficit as f64 / (1.0 - full)) * 1.1) as usize + 64;
        let mut batch: Vec<(u64, u64)> = alloc::try_with_capacity(count, &what)?;
        let set_ref = &set;
        batch.par_extend(
            (next..next + count as u64)
                .into_par_iter()
                .map(|e| (draw(e), e))
                .filter(|(k, _)| set_ref.binary_search(k).is_err()),
        );
        next += count as u64;
        // First draw of each new pair, then the first `deficit` of those in draw order.
        batch.par_sort_unstable();
        batch.dedup_by_key(|p| p.0);
        batch.par_sort_unstable_by_key(|p| p.1);
        batch.truncate(deficit);
        set.extend(batch.iter().map(|p| p.0));
        set.par_sort_unstable();
    }
    Ok(set)
}

/// `want` pairs (packed, sorted) drawn uniformly without replacement from all pairs of the
/// class (inside one community, or between two), for a class at least half full: the
/// pairs are listed (at most twice `want`) and a partial Fisher–Yates shuffle picks them.
fn dense_subset(
    n: usize,
    cross: bool,
    want: usize,
    block: &impl Fn(usize) -> usize,
    start: &impl Fn(usize) -> usize,
    mut state: u64,
    what: impl Fn() -> String,
) -> Result<Vec<u64>> {
    let mut all: Vec<u64> = alloc::try_with_capacity(2 * want + 1, &what)?;
    for u in 0..n {
        let b = block(u);
        let (from, to) = if cross {
            (start(b + 1), n)
        } else {
            (u + 1, start(b + 1))
        };
        all.extend((from..to).map(|v| ((u as u64) << 32) | v as u64));
    }
    for i in 0..want {
        state = splitmix(state);
        let j = i + ((state as u128 * (all.len() - i) as u128) >> 64) as usize;
        all.swap(i, j);
    }
    all.truncate(want);
    all.par_sort_unstable();
    Ok(all)
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

    fn small() -> PlantedOptions {
        PlantedOptions {
            nodes: 3000,
            communities: 60,
            degree: 16.0,
            mixing: 0.2,
            seed: 5,
        }
    }

    #[test]
    fn planted_is_reproducible_whatever_the_threads() {
        let a = planted(&small()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| planted(&small()).unwrap());
        assert_eq!(a, b);
        let c = planted(&PlantedOptions { seed: 6, ..small() }).unwrap();
        assert_ne!(a.edges, c.edges);
    }

    #[test]
    fn planted_degree_mixing_and_sizes() {
        let o = PlantedOptions {
            nodes: 20_000,
            communities: 100,
            degree: 20.0,
            mixing: 0.3,
            seed: 1,
        };
        let p = planted(&o).unwrap();
        let m = p.edges.src.len();
        assert_eq!(m, 200_000);
        // Sizes: 200 each; every node in exactly one.
        let cs = p.communities();
        assert_eq!(cs.len(), 100);
        assert!(cs.iter().all(|c| c.len() == 200));
        // No self-loops; the drawn degree (both ends) has mean D and every node starts
        // exactly m / n edges.
        assert!(p.edges.src.iter().zip(&p.edges.dst).all(|(u, v)| u != v));
        let mut deg = vec![0u32; o.nodes];
        for (&u, &v) in p.edges.src.iter().zip(&p.edges.dst) {
            deg[u as usize] += 1;
            deg[v as usize] += 1;
        }
        let mean = deg.iter().map(|&d| d as f64).sum::<f64>() / o.nodes as f64;
        assert!((mean - 20.0).abs() < 1e-9, "{mean}");
        // In-degree is binomial-like: no node far from D.
        assert!(deg.iter().all(|&d| (8..=40).contains(&d)));
        // Mixing: the fraction of edges between communities is μ within 4σ
        // (σ = √(μ(1−μ)/m) ≈ 0.001).
        let cross = p
            .edges
            .src
            .iter()
            .zip(&p.edges.dst)
            .filter(|(&u, &v)| p.community[u as usize] != p.community[v as usize])
            .count() as f64
            / m as f64;
        assert!((cross - 0.3).abs() < 0.005, "{cross}");
        // Cross edges spread over the communities: none has far more or fewer cross-edge
        // ends than its share (edges are stored as unordered pairs, so both ends count).
        let mut per = vec![0usize; 100];
        for (&u, &v) in p.edges.src.iter().zip(&p.edges.dst) {
            let (a, b) = (p.community[u as usize], p.community[v as usize]);
            if a != b {
                per[a as usize] += 1;
                per[b as usize] += 1;
            }
        }
        let share = (2.0 * 0.3 * m as f64) / 100.0;
        assert!(per.iter().all(|&x| (x as f64 - share).abs() < 0.2 * share));
        // The simple graph keeps every edge: they are distinct.
        let g = p.edges.to_graph().unwrap();
        assert_eq!(g.num_edges(), m);
        // Labels are permuted: community is not a function of node-number ranges.
        assert!(cs[0].windows(2).any(|w| w[1] != w[0] + 1));
    }

    /// The distinct undirected pairs of an edge list, counted independently of the
    /// generator (a hash set of ordered pairs).
    fn distinct_pairs(e: &EdgeArrays) -> usize {
        e.src
            .iter()
            .zip(&e.dst)
            .map(|(&u, &v)| (u.min(v), u.max(v)))
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    #[test]
    fn planted_edges_are_distinct_and_counted_exactly() {
        // Dense communities (the example had 178 distinct of 1000 reported), a
        // README-like sparse case, both classes dense, and mixing 0 and 1.
        for (nodes, communities, degree, mixing) in [
            (20, 2, 8.0, 0.2),
            (20, 2, 9.0, 0.0),
            (2000, 20, 40.0, 0.2),
            (30, 3, 19.0, 0.55),
            (40, 4, 6.0, 1.0),
            (10, 1, 9.0, 0.0),
        ] {
            let o = PlantedOptions {
                nodes,
                communities,
                degree,
                mixing,
                seed: 9,
            };
            let p = planted(&o).unwrap();
            let m = (nodes as f64 * degree / 2.0).round() as usize;
            assert_eq!(p.edges.src.len(), m, "{o:?}");
            assert_eq!(distinct_pairs(&p.edges), m, "{o:?}");
            assert!(p.edges.src.iter().zip(&p.edges.dst).all(|(u, v)| u != v));
            let cross = p
                .edges
                .src
                .iter()
                .zip(&p.edges.dst)
                .filter(|(&u, &v)| p.community[u as usize] != p.community[v as usize])
                .count();
            assert_eq!(cross, (mixing * m as f64).round() as usize, "{o:?}");
            let t = p.edges.tally().unwrap();
            assert_eq!((t.distinct, t.duplicates, t.self_loops), (m, 0, 0));
        }
    }

    #[test]
    fn planted_refuses_what_cannot_be_met() {
        // Communities of 10 nodes: at most 9 neighbours inside, so degree 100 (or 12 at
        // mixing 0) cannot be met; 40 nodes in 2 communities have only 400 cross pairs.
        for (nodes, communities, degree, mixing) in
            [(20, 2, 100.0, 0.2), (20, 2, 10.0, 0.0), (40, 2, 42.0, 1.0)]
        {
            let e = planted(&PlantedOptions {
                nodes,
                communities,
                degree,
                mixing,
                seed: 1,
            })
            .unwrap_err()
            .to_string();
            assert!(e.contains("distinct edges"), "{e}");
        }
    }

    #[test]
    fn kronecker_tally_matches_an_independent_count() {
        let k = kronecker(8, 16, 2).unwrap();
        let t = k.tally().unwrap();
        let loops = k.src.iter().zip(&k.dst).filter(|(u, v)| u == v).count();
        let distinct: std::collections::HashSet<_> = k
            .src
            .iter()
            .zip(&k.dst)
            .filter(|(u, v)| u != v)
            .map(|(&u, &v)| (u.min(v), u.max(v)))
            .collect();
        let mut used = vec![false; k.nodes];
        for &(u, v) in &distinct {
            used[u as usize] = true;
            used[v as usize] = true;
        }
        assert_eq!(t.drawn, 16 << 8);
        assert_eq!(t.self_loops, loops);
        assert_eq!(t.distinct, distinct.len());
        assert_eq!(t.duplicates, t.drawn - loops - distinct.len());
        assert_eq!(t.nodes_without_edges, used.iter().filter(|&&x| !x).count());
        assert!(t.duplicates > 0 && t.self_loops > 0 && t.nodes_without_edges > 0);
        assert_eq!(k.to_graph().unwrap().num_edges(), t.distinct);
    }

    #[test]
    fn planted_without_mixing_has_no_cross_edges() {
        let p = planted(&PlantedOptions {
            mixing: 0.0,
            ..small()
        })
        .unwrap();
        assert!(p
            .edges
            .src
            .iter()
            .zip(&p.edges.dst)
            .all(|(&u, &v)| p.community[u as usize] == p.community[v as usize]));
    }

    #[test]
    fn planted_rejects_bad_parameters() {
        for o in [
            PlantedOptions {
                nodes: 1,
                ..small()
            },
            PlantedOptions {
                communities: 0,
                ..small()
            },
            PlantedOptions {
                communities: 1501,
                ..small()
            },
            PlantedOptions {
                degree: 0.0,
                ..small()
            },
            PlantedOptions {
                degree: f64::NAN,
                ..small()
            },
            PlantedOptions {
                mixing: 1.5,
                ..small()
            },
            PlantedOptions {
                communities: 1,
                mixing: 0.1,
                ..small()
            },
        ] {
            assert!(planted(&o).is_err(), "{o:?}");
        }
    }

    #[test]
    fn planted_files_read_back_with_their_labels() {
        let p = planted(&PlantedOptions {
            nodes: 200,
            communities: 10,
            degree: 6.0,
            mixing: 0.1,
            seed: 3,
        })
        .unwrap();
        let dir = std::env::temp_dir().join(format!("trident-planted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (e, c) = (dir.join("p.txt"), dir.join("p.communities"));
        p.edges.write_snap(&e, "test").unwrap();
        p.write_communities(&c).unwrap();
        let g = crate::io::read_graph_auto(&e).unwrap();
        assert_eq!(g.num_edges(), p.edges.to_graph().unwrap().num_edges());
        // Every community member names a node of the graph by its label, and the labels'
        // adjacency agrees with the drawn edges.
        let cx = crate::mcl::eval::read_complexes(&c).unwrap();
        assert_eq!(cx.len(), 10);
        let ids: std::collections::HashMap<String, usize> =
            (0..g.num_nodes()).map(|u| (g.label(u), u)).collect();
        let (u, v) = (p.edges.src[0], p.edges.dst[0]);
        let (a, b) = (ids[&u.to_string()], ids[&v.to_string()]);
        assert!(g.neighbors(a).contains(&(b as u32)));
        assert!(cx.iter().flatten().all(|l| ids.contains_key(l)));
        std::fs::remove_dir_all(&dir).ok();
    }
}

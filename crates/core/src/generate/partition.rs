//! The planted-partition generator: communities of near-equal sizes, edges drawn within
//! and across them at the requested degree and mixing, each pair at most once.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use super::{permutation, push_u32, splitmix, EdgeArrays};
use crate::alloc;
use crate::error::{Error, Result};

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

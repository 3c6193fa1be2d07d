//! The sparse matrices of the iteration: `M_G` ([`Transition`], from the graph) and `M`
//! ([`Columns`], `n` columns of at most `K` entries).

use rayon::prelude::*;

use super::MclOptions;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::scalar::Scalar;

/// `M_G`: the column-normalised `A + I` in compressed sparse columns (rows ascending).
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// Number of nodes.
    pub n: usize,
    /// Column pointers (`n + 1`).
    pub ptr: Vec<u64>,
    /// Row indices.
    pub row: Vec<u32>,
    /// Values; every column sums to 1.
    pub val: Vec<f64>,
}

impl Transition {
    /// `M_G` of `g` (see [`crate::mcl`], step 1; [`super::Variant::MlrMcl`]: MLR-MCL's
    /// weights, [`super::mlr`]). Weights must be finite and positive.
    pub fn new(g: &Graph, opts: &MclOptions) -> Result<Self> {
        Ok(Self::new_part(g, opts, 1, 0)?.own)
    }

    /// Rank `rank`'s part of [`Transition::new`] over `p` ranks: its columns of the blocks
    /// [`Transition::column_splits`] cuts, the same bits as the whole one's. Trident's
    /// variant builds only those columns (the lengths of all, for the cut); MLR-MCL's builds
    /// the whole and keeps them.
    pub fn new_part(g: &Graph, opts: &MclOptions, p: usize, rank: usize) -> Result<TransitionPart> {
        opts.validate()?;
        if opts.variant == super::Variant::MlrMcl {
            return Ok(TransitionPart::of(
                LoopGraph::from_graph(g)?.transition(),
                p,
                rank,
            ));
        }
        Self::new_part_of(g.as_adjacency(), opts, p, rank)
    }

    /// [`Transition::new_part`] of Trident's variant from a borrowed adjacency (the graph's,
    /// or the bytes a host's first rank shared, read in place). MLR-MCL's variant builds its
    /// whole loop graph and needs a [`Graph`]: refused here.
    pub fn new_part_of(
        g: crate::graph::Adjacency<'_>,
        opts: &MclOptions,
        p: usize,
        rank: usize,
    ) -> Result<TransitionPart> {
        opts.validate()?;
        if opts.variant == super::Variant::MlrMcl {
            return Err(Error::invalid(
                "mcl",
                "MLR-MCL's M_G is built from the whole graph (Transition::new_part)",
            ));
        }
        let n = g.num_nodes();
        let scale = weight_scale(g.weights);
        // Column j holds its neighbours and, unless the loop weight is 0, itself.
        let lens =
            |j: usize| g.neighbors(j).len() + usize::from(has_loop(opts, g.neighbors(j).len()));
        let splits = if p == 1 {
            vec![0, n]
        } else {
            let ends = list_ends(n, lens, || format!("M_G's column lengths of {n} nodes"))?;
            splits_of(&ends, p)
        };
        // The weights checked are this rank's columns' (every edge is in two columns, so
        // some rank finds each bad weight and fails the run).
        let (a, b) = (g.indptr[splits[rank]], g.indptr[splits[rank + 1]]);
        let held = g.weights.map(|w| &w[a..b]);
        Self::part_of_columns(
            opts,
            splits,
            rank,
            |j| (g.neighbors(j), g.neighbor_weights(j)),
            held,
            scale,
        )
    }

    /// Rank `rank`'s columns of Trident's `M_G` (the blocks `splits`, which every rank
    /// agrees on) from `column(j)`: column `j`'s neighbours (sorted, each once, below `n`)
    /// and their weights (`None`: unweighted), for the rank's columns `j` only. `weights`
    /// are the weights held (checked: finite and positive) and `scale` the power of two
    /// that brings the whole graph's largest weight into `[1, 2)` ([`weight_scale`]).
    pub(crate) fn part_of_columns<'a>(
        opts: &MclOptions,
        splits: Vec<usize>,
        rank: usize,
        column: impl Fn(usize) -> (&'a [u32], Option<&'a [f64]>) + Sync,
        weights: Option<&[f64]>,
        scale: f64,
    ) -> Result<TransitionPart> {
        if let Some(w) = weights {
            if let Some(bad) = w
                .par_iter()
                .with_min_len(1 << 14)
                .find_first(|x| !(x.is_finite() && **x > 0.0))
            {
                return Err(Error::invalid(
                    "mcl",
                    format!("edge weights must be finite and > 0, found {bad}"),
                ));
            }
        }
        let (c0, c1) = (splits[rank], splits[rank + 1]);
        let len = |j: usize| {
            let d = column(j).0.len();
            d + usize::from(has_loop(opts, d))
        };
        let (ptr, row, val) = build_sized(
            c1 - c0,
            |j| len(c0 + j),
            |j, r, v| {
                let j = c0 + j;
                let (nb, ws) = column(j);
                let w = |t: usize| ws.map_or(1.0, |w| w[t] * scale);
                let max_w = (0..nb.len()).map(w).fold(0.0f64, f64::max);
                let loop_w = if nb.is_empty() {
                    1.0
                } else {
                    opts.self_loop_weight * max_w
                };
                let mut at = 0;
                let mut placed = false;
                for (t, &i) in nb.iter().enumerate() {
                    if !placed && i as usize > j {
                        if loop_w > 0.0 {
                            (r[at], v[at]) = (j as u32, loop_w);
                            at += 1;
                        }
                        placed = true;
                    }
                    (r[at], v[at]) = (i, w(t));
                    at += 1;
                }
                if !placed && loop_w > 0.0 {
                    (r[at], v[at]) = (j as u32, loop_w);
                }
                let s: f64 = v.iter().sum();
                v.iter_mut().for_each(|x| *x /= s);
            },
        )?;
        Ok(TransitionPart {
            splits,
            own: Self {
                n: c1 - c0,
                ptr,
                row,
                val,
            },
        })
    }

    /// The values in `T`, for a backend's iterations (rounded in parallel; for `f64` the
    /// values themselves, borrowed, not copied).
    pub fn values<T: Scalar>(&self) -> std::borrow::Cow<'_, [T]> {
        match (&self.val as &dyn std::any::Any).downcast_ref::<Vec<T>>() {
            Some(same) => std::borrow::Cow::Borrowed(same.as_slice()),
            None => std::borrow::Cow::Owned(
                self.val
                    .par_iter()
                    .with_min_len(1 << 14)
                    .map(|&x| T::from_f64(x))
                    .collect(),
            ),
        }
    }

    /// Entries of column `j`: `(rows, values)`.
    pub fn column(&self, j: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.ptr[j] as usize, self.ptr[j + 1] as usize);
        (&self.row[a..b], &self.val[a..b])
    }

    /// `p + 1` column boundaries cutting the columns into `p` blocks of about equal entries
    /// (a run over `p` ranks gives rank `r` the columns `splits[r]..splits[r + 1]`).
    pub fn column_splits(&self, p: usize) -> Vec<usize> {
        splits_of(&self.ptr, p)
    }

    /// The columns `c0..c1` as a transition of their own (`n = c1 - c0`, rows unchanged).
    pub fn columns(&self, c0: usize, c1: usize) -> Transition {
        let (a, b) = (self.ptr[c0] as usize, self.ptr[c1] as usize);
        Transition {
            n: c1 - c0,
            ptr: self.ptr[c0..=c1].iter().map(|&x| x - a as u64).collect(),
            row: self.row[a..b].to_vec(),
            val: self.val[a..b].to_vec(),
        }
    }
}

/// Whether Trident's `M_G` column of a node of degree `d` holds the node itself: a node
/// without neighbours always, the others unless the loop weight is 0.
pub(crate) fn has_loop(opts: &MclOptions, d: usize) -> bool {
    d == 0 || opts.self_loop_weight > 0.0
}

/// [`Transition::column_splits`] of the column pointers `ptr` (`n + 1` prefix sums).
pub(crate) fn splits_of(ptr: &[u64], p: usize) -> Vec<usize> {
    let n = ptr.len() - 1;
    let m = ptr[n];
    (0..=p)
        .map(|r| {
            if r == p {
                n
            } else {
                ptr.partition_point(|&x| x < m * r as u64 / p as u64).min(n)
            }
        })
        .collect()
}

/// `M_G` as one rank of a run over many holds it ([`Transition::new_part`]): the blocks of
/// columns of every rank, and its own columns.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionPart {
    /// Every rank's first column, and the number of nodes last
    /// ([`Transition::column_splits`]; `[0, n]` for one process).
    pub splits: Vec<usize>,
    /// This rank's columns (`n` = their count; rows are the whole graph's nodes).
    pub own: Transition,
}

impl TransitionPart {
    /// Rank `rank`'s part of `tr` over `p` ranks (one rank: `tr` itself, not copied).
    pub fn of(tr: Transition, p: usize, rank: usize) -> Self {
        let splits = tr.column_splits(p);
        let own = if p == 1 {
            tr
        } else {
            tr.columns(splits[rank], splits[rank + 1])
        };
        Self { splits, own }
    }

    /// Nodes of the whole graph.
    pub fn n(&self) -> usize {
        *self.splits.last().expect("at least one boundary")
    }

    /// Ranks of the run.
    pub fn ranks(&self) -> usize {
        self.splits.len() - 1
    }
}

/// `M` in `n` columns of width `K` (see [`crate::mcl`]): column `j`'s entries are
/// `idx/val[j·K .. j·K + len[j]]`, value descending, ties by row.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns<T> {
    /// Number of columns (nodes).
    pub n: usize,
    /// Width `K`.
    pub k: usize,
    /// Row indices, `n·K`.
    pub idx: Vec<u32>,
    /// Values, `n·K`.
    pub val: Vec<T>,
    /// Entries per column, `n`.
    pub len: Vec<u32>,
}

impl<T: Scalar> Columns<T> {
    /// The starting `M`: `M_G` with each column cut to its `K` largest entries (ties by row)
    /// and renormalised (in f64, then rounded to `T`).
    pub fn initial(tr: &Transition, k: usize) -> Result<Self> {
        Self::initial_of(tr, tr.n, 0, k)
    }

    /// [`Columns::initial`] for a rank's own columns only (`part.own`), the others empty (a
    /// rank of a run over many, which starts from its own columns).
    pub fn initial_part(part: &TransitionPart, rank: usize, k: usize) -> Result<Self> {
        Self::initial_of(&part.own, part.n(), part.splits[rank], k)
    }

    /// `n` columns of which `c0 .. c0 + tr.n` start from `tr`'s columns, the others empty.
    fn initial_of(tr: &Transition, n: usize, c0: usize, k: usize) -> Result<Self> {
        let c1 = c0 + tr.n;
        let mut m = Self::zeroed(n, k)?;
        m.idx[c0 * k..c1 * k]
            .par_chunks_mut(k)
            .zip(m.val[c0 * k..c1 * k].par_chunks_mut(k))
            .zip(m.len[c0..c1].par_iter_mut())
            .enumerate()
            .with_min_len(64)
            .for_each_init(
                Vec::new,
                |col: &mut Vec<(u32, f64)>, (j, ((oi, ov), ol))| {
                    let (r, v) = tr.column(j);
                    let top = r.len().min(k);
                    // The order of the top K: value descending, ties by row.
                    let ranked =
                        |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
                    // `M_G`'s column is in row order, which often is the order of the top K
                    // already (all values equal, as in an unweighted graph whose loops weigh
                    // as much as its edges): then it is used as it is, neither copied nor
                    // sorted (the same entries in the same order: the same sum and values).
                    let in_order = r
                        .windows(2)
                        .zip(v.windows(2))
                        .all(|(r2, v2)| ranked(&(r2[0], v2[0]), &(r2[1], v2[1])).is_le());
                    if !in_order {
                        col.clear();
                        col.extend(r.iter().copied().zip(v.iter().copied()));
                        col.sort_by(ranked);
                    }
                    let entry = |t: usize| if in_order { (r[t], v[t]) } else { col[t] };
                    let s: f64 = (0..top).map(|t| entry(t).1).sum();
                    for t in 0..top {
                        let (i, x) = entry(t);
                        (oi[t], ov[t]) = (i, T::from_f64(x / s));
                    }
                    *ol = top as u32;
                },
            );
        Ok(m)
    }

    /// `n` empty columns of width `K`, all slots zero. The memory comes zeroed from the
    /// allocator ([`crate::alloc::try_zeroed_vec`]), so this costs no pass over the `n·K`
    /// slots: their pages are touched first by the (parallel) pass that fills them.
    pub fn zeroed(n: usize, k: usize) -> Result<Self> {
        let slots = n
            .checked_mul(k)
            .filter(|s| *s <= isize::MAX as usize / 16)
            .ok_or_else(|| Error::invalid("mcl", format!("{n} nodes × K = {k} overflow")))?;
        let what = || format!("M: {n} columns of K = {k} entries");
        Ok(Self {
            n,
            k,
            idx: crate::alloc::try_zeroed_vec(slots, what)?,
            val: crate::alloc::try_zeroed_vec(slots, what)?,
            len: crate::alloc::try_zeroed_vec(n, what)?,
        })
    }

    /// Entries of column `j`.
    pub fn column(&self, j: usize) -> (&[u32], &[T]) {
        let a = j * self.k;
        let b = a + self.len[j] as usize;
        (&self.idx[a..b], &self.val[a..b])
    }

    /// Total stored entries.
    pub fn entries(&self) -> u64 {
        self.len.iter().map(|&l| u64::from(l)).sum()
    }
}

/// MLR-MCL's weight of edge `(i, j)` of weight `w`: `w·(1/dᵢ + 1/dⱼ)` (before the column
/// normalisation), with `d` the weighted degrees counting the self-loop.
#[inline]
pub fn edge_weight(w: f64, di: f64, dj: f64) -> f64 {
    w * (1.0 / di + 1.0 / dj)
}

/// A weighted graph in which every node's list holds a self-loop: `M_G`'s source at every
/// level.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopGraph {
    /// Lists: `ptr[i]..ptr[i+1]` of `adj` / `w`, rows ascending.
    pub ptr: Vec<u64>,
    /// Neighbours (and the node itself).
    pub adj: Vec<u32>,
    /// Weights.
    pub w: Vec<f64>,
    /// Vertex weights (nodes of the input graph in each node).
    pub vwgt: Vec<u64>,
}

impl LoopGraph {
    /// Nodes.
    pub fn n(&self) -> usize {
        self.vwgt.len()
    }

    /// The graph with self-loops: weight 1, or the largest weight of the node's edges in a
    /// weighted graph (1 for an isolated node).
    pub fn from_graph(g: &Graph) -> Result<Self> {
        let n = g.num_nodes();
        if let Some(w) = g.weights() {
            if let Some(bad) = w.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                return Err(Error::invalid(
                    "mcl",
                    format!("edge weights must be finite and > 0, found {bad}"),
                ));
            }
        }
        let scale = weight_scale(g.weights());
        let len = |j: usize| {
            let nb = g.neighbors(j);
            nb.len() + 1 - usize::from(nb.binary_search(&(j as u32)).is_ok())
        };
        let (ptr, adj, w) = build_sized(n, len, |j, adj, w| {
            let (mut adj, mut w) = (adj.iter_mut(), w.iter_mut());
            let mut put = |a: u32, x: f64| {
                if let (Some(pa), Some(pw)) = (adj.next(), w.next()) {
                    (*pa, *pw) = (a, x);
                }
            };
            let nb = g.neighbors(j);
            let ws = g.neighbor_weights(j);
            let wt = |t: usize| ws.map_or(1.0, |w| w[t] * scale);
            let loop_w = if ws.is_some() && !nb.is_empty() {
                (0..nb.len()).map(wt).fold(0.0f64, f64::max)
            } else {
                1.0
            };
            let mut placed = false;
            for (t, &i) in nb.iter().enumerate() {
                if !placed && i as usize > j {
                    put(j as u32, loop_w);
                    placed = true;
                }
                if i as usize != j {
                    put(i, wt(t));
                }
            }
            if !placed {
                put(j as u32, loop_w);
            }
        })?;
        Ok(Self {
            ptr,
            adj,
            w,
            vwgt: vec![1; n],
        })
    }

    /// List `i`: neighbours (and `i`) and weights.
    pub fn list(&self, i: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.ptr[i] as usize, self.ptr[i + 1] as usize);
        (&self.adj[a..b], &self.w[a..b])
    }

    /// Weighted degrees, the self-loop included.
    pub fn degrees(&self) -> Vec<f64> {
        (0..self.n())
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(|i| self.list(i).1.iter().sum())
            .collect()
    }

    /// MLR-MCL's `M_G` of this graph: entry `(j, i)` weighs `w_ij·(1/dᵢ + 1/dⱼ)`, columns
    /// normalised.
    pub fn transition(&self) -> Transition {
        let d = self.degrees();
        let n = self.n();
        let mut val: Vec<f64> = vec![0.0; self.adj.len()];
        // Lists of blocks of columns in parallel, each writing its own slice of `val`.
        let ptr = &self.ptr;
        let mut parts = Vec::new();
        let mut rest = &mut val[..];
        for b0 in (0..n).step_by(BLOCK) {
            let b1 = (b0 + BLOCK).min(n);
            let (a, r) = std::mem::take(&mut rest).split_at_mut((ptr[b1] - ptr[b0]) as usize);
            rest = r;
            parts.push((b0, b1, a));
        }
        parts.into_par_iter().for_each(|(b0, b1, out)| {
            let base = ptr[b0] as usize;
            for i in b0..b1 {
                let (a, b) = (ptr[i] as usize - base, ptr[i + 1] as usize - base);
                let (adj, w) = self.list(i);
                for (t, (&j, &x)) in adj.iter().zip(w).enumerate() {
                    out[a + t] = edge_weight(x, d[i], d[j as usize]);
                }
                let s: f64 = out[a..b].iter().sum();
                out[a..b].iter_mut().for_each(|x| *x /= s);
            }
        });
        Transition {
            n,
            ptr: self.ptr.clone(),
            row: self.adj.clone(),
            val,
        }
    }
}

/// Lists `0..n` in compressed form, built in parallel: `fill(i, adj, w)` appends list `i`'s
/// entries (blocks of lists run on the rayon pool, each into vectors of its own, which are
/// then concatenated in order).
pub(crate) fn build_lists<F>(n: usize, fill: F) -> (Vec<u64>, Vec<u32>, Vec<f64>)
where
    F: Fn(usize, &mut Vec<u32>, &mut Vec<f64>) + Sync,
{
    let blocks: Vec<(Vec<u64>, Vec<u32>, Vec<f64>)> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let (mut len, mut adj, mut w) = (Vec::new(), Vec::new(), Vec::new());
            for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
                let before = adj.len();
                fill(i, &mut adj, &mut w);
                len.push((adj.len() - before) as u64);
            }
            (len, adj, w)
        })
        .collect();
    let total: usize = blocks.iter().map(|b| b.1.len()).sum();
    let mut ptr = Vec::with_capacity(n + 1);
    ptr.push(0u64);
    let (mut adj, mut w) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for (len, a, x) in blocks {
        for l in len {
            ptr.push(ptr.last().copied().unwrap_or(0) + l);
        }
        adj.extend_from_slice(&a);
        w.extend_from_slice(&x);
    }
    (ptr, adj, w)
}

/// Lists per parallel block of [`build_lists`] and [`build_sized`].
const BLOCK: usize = 4096;

/// The `n + 1` pointers of lists `0..n` of lengths `len(i)` (their prefix sums from 0; the
/// lengths in parallel); `what` names them in an out-of-memory error.
pub(crate) fn list_ends(
    n: usize,
    len: impl Fn(usize) -> usize + Sync,
    what: impl FnOnce() -> String,
) -> Result<Vec<u64>> {
    let mut ptr: Vec<u64> = crate::alloc::try_zeroed_vec(n + 1, what)?;
    ptr[1..]
        .par_iter_mut()
        .enumerate()
        .with_min_len(1 << 12)
        .for_each(|(i, p)| *p = len(i) as u64);
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    Ok(ptr)
}

/// Lists `0..n` of known lengths `len(i)` in compressed form, allocated once and filled in
/// place in parallel: `fill(i, adj, w)` writes list `i` into its slices.
pub(crate) fn build_sized<L, F>(n: usize, len: L, fill: F) -> Result<(Vec<u64>, Vec<u32>, Vec<f64>)>
where
    L: Fn(usize) -> usize + Sync,
    F: Fn(usize, &mut [u32], &mut [f64]) + Sync,
{
    let what = || format!("M_G of {n} nodes");
    let ptr = list_ends(n, len, what)?;
    let total = ptr[n] as usize;
    let mut adj: Vec<u32> = crate::alloc::try_zeroed_vec(total, what)?;
    let mut w: Vec<f64> = crate::alloc::try_zeroed_vec(total, what)?;
    let mut parts = Vec::new();
    let (mut ra, mut rw) = (&mut adj[..], &mut w[..]);
    for b0 in (0..n).step_by(BLOCK) {
        let b1 = (b0 + BLOCK).min(n);
        let l = (ptr[b1] - ptr[b0]) as usize;
        let (a, ar) = std::mem::take(&mut ra).split_at_mut(l);
        let (x, xr) = std::mem::take(&mut rw).split_at_mut(l);
        (ra, rw) = (ar, xr);
        parts.push((b0, b1, a, x));
    }
    let p = &ptr;
    parts.into_par_iter().for_each(|(b0, b1, a, x)| {
        let base = p[b0] as usize;
        for i in b0..b1 {
            let (s, e) = (p[i] as usize - base, p[i + 1] as usize - base);
            fill(i, &mut a[s..e], &mut x[s..e]);
        }
    });
    Ok((ptr, adj, w))
}

/// The power of two `2^−e` that brings a graph's largest edge weight into `[1, 2)` (1 for an
/// unweighted graph). Both variants' `M_G` are invariant under scaling every weight (columns
/// are normalised; MLR-MCL's `w·(1/dᵢ + 1/dⱼ)` is homogeneous of degree 0), and a power of two
/// scales exactly, so the result is the same bits for ordinary weights while sums of weights
/// near `f64::MAX`, which would overflow to infinity and turn columns into zeros or NaN,
/// stay finite.
fn weight_scale(weights: Option<&[f64]>) -> f64 {
    let Some(w) = weights else {
        return 1.0;
    };
    let max = w
        .par_iter()
        .with_min_len(1 << 14)
        .copied()
        .reduce(|| 0.0, f64::max);
    scale_of_max(max)
}

/// [`weight_scale`] of a graph whose largest weight is `max`.
pub(crate) fn scale_of_max(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    2f64.powi(-(max.log2().floor() as i32))
}

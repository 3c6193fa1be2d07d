//! Tree ("TSQR") Givens QR: the plan every backend shares and the host reference that the
//! kernels mirror step for step.
//!
//! The rows are split into panels of `h ≥ cols` rows (the last one may be shorter). **Leaf**
//! (one work-group per panel): each panel is reduced to upper-trapezoidal form by
//! the Sameh–Kuck order restricted to the panel: in step `s` rotation `j` zeroes local element
//! `(i, j)`, `i = hp − 1 − s + 2j`, against local row `i − 1`, for `j < i < hp` (`hp` the
//! panel's height); the rotations of a step act on disjoint row pairs. Two rotations that
//! share a row come in column order (the step of `(i, j)` is `hp − 1 + 2j − i`), so the GPU
//! kernels take the leaf column by column, by panels of 32 columns (each row pair meets its
//! rotations in the same order; `(c, s)` as in the merges below). **Merge** (one launch
//! per tree level `l`, one work-group per pair of nodes; the GPUs overlap the levels, see
//! [`TreePlan::merge_waves`]): the nodes of level `l` span `2^l`
//! panels; node `2g` (top row `a`, always `h · 2^l ≥ cols` rows, so its triangle is a full
//! `cols × cols`) absorbs node `2g + 1` (top row `b`, triangle of `kb = min(cols, rows − b)`
//! rows): in step `t` rotation `(i, j)` with `i + j = t`, `i ≤ j`, `i < kb`, `j < cols` zeroes
//! element `(b + i, j)` against row `a + j`; the pairs of one step are disjoint (the
//! anti-diagonal wavefront), `kb + cols − 1` steps (the GPU kernels run the same rotations by panels of 32 columns:
//! per panel, one work-group per merge makes the panel's rotations, then many apply them to
//! the columns right of it; each row pair still meets its rotations in the order here, and
//! `Q q` applies them panel by panel in reverse; a panel's `(c, s)` are computed as
//! [`givens_cs`] but with an exact power-of-two scaling and one `rsqrt`, within a few ulps).
//! After `⌈log₂ P⌉` levels `R` is in the top
//! `min(rows, cols)` rows and every other row is exactly zero.
//!
//! Every element is zeroed at most once, so the rotations fit the flat layout: `(c, s)` of the
//! rotation that zeroes element `(g, j)` (global row `g`) at `cs[2 (j · rows + g)]` (leaves
//! zero `g` below the diagonal of its panel, merges zero rows `b + i` with `i ≤ j`: never the
//! same element). The partner row follows from the plan: `g − 1` in a leaf, `a + j` in a merge.
//!
//! Rotation: `(c, s) = (x, y) / hypot(x, y)` on the pair scaled by `max(|x|, |y|)`
//! ([`givens_cs`]); `x ← c x + s y`, `y ← c y − s x` (`y` of the zeroed column set to exactly
//! 0); `Q q` applies the transposes in reverse order.

use crate::scalar::Scalar;

/// Default panel height of the tree QR on GPUs (raised to `cols` when narrower).
pub const TREE_PANEL_ROWS: usize = 256;

/// Work-groups per launch that [`TreePlan::q_span`] aims at when applying `Q` (two of 1024
/// work-items per H100 SM, 132 SMs).
pub const Q_TARGET_GROUPS: usize = 264;

/// Local memory that one work-group of `qr_tree_leaf_q_local` may use for its slab of `q`:
/// 32 KiB, the least an OpenCL device with local memory offers and within CUDA's default
/// 48 KiB per block.
pub const LEAF_Q_LOCAL_BYTES: usize = 32 << 10;

/// Most columns of `q` per work-group of `qr_tree_leaf_q_local`. Every work-group of a leaf
/// reads all of the leaf's rotations, so wider slabs read them fewer times, but take more
/// local memory (fewer work-groups per SM); 16 was the fastest of 4 to 32 in both precisions,
/// and faster than the global-memory kernel (figures: `benches/results/history/`).
pub const LEAF_Q_LOCAL_COLS: usize = 16;

/// Columns per panel of the GPUs' leaves and merges (`MP` in the kernels).
pub const MERGE_PANEL: usize = 32;

/// Columns per work-group of the GPUs' update kernels (`qr_tree_leaf_update`,
/// `qr_tree_merge_update`: `UCOLS`, 4 per work-item). A lane's rotation at a stage is the
/// same for every column, so several columns per work-item share its loads and barriers.
pub const UPDATE_COLS: usize = 32;

/// The shape of a tree QR (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreePlan {
    /// Rows of the factored matrix.
    pub rows: usize,
    /// Columns of the factored matrix.
    pub cols: usize,
    /// Panel height `h` (`≥ cols`, `≥ 1`).
    pub h: usize,
    /// Number of panels `P = ⌈rows / h⌉` (at least 1).
    pub panels: usize,
    /// Merge levels `⌈log₂ P⌉`.
    pub levels: usize,
}

impl TreePlan {
    /// The plan for `rows × cols` with panels of `max(panel_rows, cols, 1)` rows.
    pub fn new(rows: usize, cols: usize, panel_rows: usize) -> Self {
        let h = panel_rows.max(cols).max(1);
        let panels = rows.div_ceil(h).max(1);
        let mut levels = 0;
        while (1usize << levels) < panels {
            levels += 1;
        }
        Self {
            rows,
            cols,
            h,
            panels,
            levels,
        }
    }

    /// `(first row, height)` of panel `p`.
    pub fn leaf(&self, p: usize) -> (usize, usize) {
        let base = p * self.h;
        (base, self.h.min(self.rows.saturating_sub(base)))
    }

    /// Steps of a leaf of height `hp`: `hp − 2 + min(hp − 1, cols)` (0 when nothing to zero).
    pub fn leaf_steps(&self, hp: usize) -> usize {
        let jc = hp.saturating_sub(1).min(self.cols);
        if jc == 0 {
            0
        } else {
            hp - 2 + jc
        }
    }

    /// The rotations `j` of leaf step `s` (local row `hp − 1 − s + 2j`): `max(0, s + 2 − hp)
    /// ..= min(s / 2, jc − 1)`, as a half-open range.
    pub fn leaf_range(&self, hp: usize, s: usize) -> std::ops::Range<usize> {
        let jc = hp.saturating_sub(1).min(self.cols);
        let lo = (s + 2).saturating_sub(hp);
        let hi = (s / 2 + 1).min(jc);
        lo..hi.max(lo)
    }

    /// Work-groups of merge level `l`: `⌊⌈P / 2^l⌉ / 2⌋`.
    pub fn merges(&self, level: usize) -> usize {
        self.panels.div_ceil(1 << level) / 2
    }

    /// `(a, b, kb)` of merge `g` at level `l`: top rows of the two nodes and the height of the
    /// absorbed triangle.
    pub fn merge(&self, level: usize, g: usize) -> (usize, usize, usize) {
        let span = self.h << level;
        let a = 2 * g * span;
        let b = a + span;
        (a, b, self.cols.min(self.rows - b))
    }

    /// Launch waves of the GPUs' merges: `levels + ⌈cols / MERGE_PANEL⌉ − 1` (0 when there is
    /// nothing to merge). Panel `p` of level `l` runs in wave `l + p`: its rows' earlier
    /// rotations (level `l`'s panels before `p`, level `l − 1`'s panels up to `p`) ran in
    /// earlier waves, and the panels of one wave touch disjoint elements (panel `p` of level
    /// `l` the rows of level `l`'s panel `p` and the absorbed rows up to it, panel `p − 1` of
    /// level `l + 1` rows of level `l`'s panels before `p`). So the levels overlap, and the
    /// chain of launches is `levels + panels` long instead of `levels · panels` (32768 × 256
    /// with the default panels: 14 waves instead of 56 level panels).
    pub fn merge_waves(&self) -> usize {
        if self.levels == 0 || self.cols == 0 {
            0
        } else {
            self.levels + self.cols.div_ceil(MERGE_PANEL) - 1
        }
    }

    /// The `(level, first column)` of the merge panels of wave `wave`, level ascending (the
    /// order in which the kernels number their work-groups).
    pub fn wave_tasks(&self, wave: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let npanels = self.cols.div_ceil(MERGE_PANEL);
        let first = (wave + 1).saturating_sub(npanels);
        (first..self.levels.min(wave + 1)).map(move |l| (l, (wave - l) * MERGE_PANEL))
    }

    /// Work-groups of one merge panel at `level`, columns from `j0`: the panel kernel's one
    /// per merge, or (`update`) the update kernel's one per merge and [`UPDATE_COLS`]
    /// columns right of the panel (none when the panel is the last).
    pub fn panel_groups(&self, level: usize, j0: usize, update: bool) -> usize {
        self.merges(level) * self.spans(j0, update)
    }

    /// Work-groups of the leaves' launch for the panel of columns from `j0`: the panel kernel's
    /// one per leaf, or (`update`) the update kernel's one per leaf and [`UPDATE_COLS`]
    /// columns right of the panel (0 when the panel is the last: no launch).
    pub fn leaf_groups(&self, j0: usize, update: bool) -> usize {
        self.panels * self.spans(j0, update)
    }

    /// Work-groups per leaf or merge for the panel of columns from `j0`: one, or (`update`)
    /// one per [`UPDATE_COLS`] columns right of the panel.
    fn spans(&self, j0: usize, update: bool) -> usize {
        if update {
            self.cols
                .saturating_sub(j0 + MERGE_PANEL)
                .div_ceil(UPDATE_COLS)
        } else {
            1
        }
    }

    /// Work-groups of the panel (or `update`) launch of merge wave `wave`: its panels'
    /// [`Self::panel_groups`], in the order of [`Self::wave_tasks`].
    pub fn wave_groups(&self, wave: usize, update: bool) -> usize {
        self.wave_tasks(wave)
            .map(|(l, j0)| self.panel_groups(l, j0, update))
            .sum()
    }

    /// Columns of `q` per work-group when the rotations of `groups` leaves or merges (one
    /// launch) are applied to `qcols` columns (`Q q`): the columns are split so that the launch
    /// has about [`Q_TARGET_GROUPS`] work-groups. Applying `Q` is one chain of steps per leaf
    /// whatever the width, and the columns are independent, so few leaves spread over many
    /// work-groups run their chains once instead of one work-group running each over every
    /// column (the GPUs' merges split their columns by 8 per work-group instead). At least 1,
    /// at most `qcols`.
    pub fn q_span(qcols: usize, groups: usize) -> usize {
        let split = Q_TARGET_GROUPS.div_ceil(groups.max(1)).max(1);
        qcols.div_ceil(split).clamp(1, qcols.max(1))
    }

    /// Columns of `q` per work-group for the GPUs' `qr_tree_leaf_q_local` (the leaf's
    /// rotations applied to a slab of `q` held in local memory: [`Self::leaf_q_local_len`]
    /// values of `elem_bytes` each, within [`LEAF_Q_LOCAL_BYTES`]): at most
    /// [`LEAF_Q_LOCAL_COLS`] and `qcols`, at least 1. `None` when not even one column of a
    /// panel fits (then the kernel that works in global memory takes the leaves).
    pub fn leaf_q_span(&self, qcols: usize, elem_bytes: usize) -> Option<usize> {
        let fit = LEAF_Q_LOCAL_BYTES / (self.h * elem_bytes.max(1));
        (fit > 0).then(|| fit.min(LEAF_Q_LOCAL_COLS).min(qcols).max(1))
    }

    /// Local-memory values of one `qr_tree_leaf_q_local` work-group with `span` columns.
    pub fn leaf_q_local_len(&self, span: usize) -> usize {
        self.h * span
    }

    /// Steps of a merge absorbing `kb` rows: `kb + cols − 1`.
    pub fn merge_steps(&self, kb: usize) -> usize {
        if kb == 0 || self.cols == 0 {
            0
        } else {
            kb + self.cols - 1
        }
    }

    /// The rotations `i` (with `j = t − i`) of merge step `t`: `max(0, t + 1 − cols) ..=
    /// min(t / 2, kb − 1)`, half-open.
    pub fn merge_range(&self, kb: usize, t: usize) -> std::ops::Range<usize> {
        let lo = (t + 1).saturating_sub(self.cols);
        let hi = (t / 2 + 1).min(kb);
        lo..hi.max(lo)
    }
}

/// The Givens rotation `(c, s)` with `c x + s y = r`, `c y − s x = 0`, computed on the pair
/// scaled by `max(|x|, |y|)` (with subnormal inputs the quotients by `hypot` would be quantised
/// and the rotation not orthogonal); `(1, 0)` when `y = 0`. The kernels compute the same.
pub fn givens_cs<T: Scalar>(x: T, y: T) -> (T, T) {
    let scale = x.abs().max(y.abs());
    if y == T::zero() || scale.is_nan() || scale <= T::zero() {
        return (T::one(), T::zero());
    }
    let (xs, ys) = (x / scale, y / scale);
    let r = xs.hypot(ys);
    if r > T::zero() {
        (xs / r, ys / r)
    } else {
        (T::one(), T::zero())
    }
}

/// Rotates rows `x`, `y` of the column-major `a` (`rows` rows) in columns `from .. cols` by
/// `(c, s)`; column `zero` of row `y` is set to exactly 0.
#[allow(clippy::too_many_arguments)]
fn rotate<T: Scalar>(
    a: &mut [T],
    rows: usize,
    cols: usize,
    x: usize,
    y: usize,
    from: usize,
    cs: (T, T),
) {
    let (c, s) = cs;
    for k in from..cols {
        let (u, v) = (a[k * rows + x], a[k * rows + y]);
        a[k * rows + x] = c * u + s * v;
        a[k * rows + y] = if k == from { T::zero() } else { c * v - s * u };
    }
}

/// Transposed rotation of rows `x`, `y` of the column-major `q` (`rows × qcols`).
fn rotate_t<T: Scalar>(q: &mut [T], rows: usize, qcols: usize, x: usize, y: usize, cs: (T, T)) {
    let (c, s) = cs;
    for k in 0..qcols {
        let (u, v) = (q[k * rows + x], q[k * rows + y]);
        q[k * rows + x] = c * u - s * v;
        q[k * rows + y] = s * u + c * v;
    }
}

/// The tree QR of the column-major `a` (`plan.rows × plan.cols`) in place (it becomes `R`, zero
/// below the diagonal); `cs` (`2 · rows · cols` values) receives the rotations. The host
/// reference of the `qr_tree_leaf` and `qr_tree_merge` kernels, in their order.
pub fn tree_qr<T: Scalar>(plan: &TreePlan, a: &mut [T], cs: &mut [T]) {
    let (rows, cols) = (plan.rows, plan.cols);
    debug_assert!(a.len() == rows * cols && cs.len() >= 2 * rows * cols);
    for p in 0..plan.panels {
        let (base, hp) = plan.leaf(p);
        for s in 0..plan.leaf_steps(hp) {
            for j in plan.leaf_range(hp, s) {
                let g = base + hp - 1 + 2 * j - s;
                let r = givens_cs(a[j * rows + g - 1], a[j * rows + g]);
                cs[2 * (j * rows + g)] = r.0;
                cs[2 * (j * rows + g) + 1] = r.1;
                rotate(a, rows, cols, g - 1, g, j, r);
            }
        }
    }
    for l in 0..plan.levels {
        for g in 0..plan.merges(l) {
            let (ta, tb, kb) = plan.merge(l, g);
            for t in 0..plan.merge_steps(kb) {
                for i in plan.merge_range(kb, t) {
                    let j = t - i;
                    let r = givens_cs(a[j * rows + ta + j], a[j * rows + tb + i]);
                    cs[2 * (j * rows + tb + i)] = r.0;
                    cs[2 * (j * rows + tb + i) + 1] = r.1;
                    rotate(a, rows, cols, ta + j, tb + i, j, r);
                }
            }
        }
    }
}

/// `q ← Q q` for the `Q` of a [`tree_qr`] (`q` column-major, `plan.rows × qcols`): the merges
/// from the last level down, then the leaves, each with its steps reversed and every rotation
/// transposed. The host reference of `qr_tree_merge_q` and `qr_tree_leaf_q`.
pub fn tree_apply_q<T: Scalar>(plan: &TreePlan, cs: &[T], q: &mut [T], qcols: usize) {
    let rows = plan.rows;
    debug_assert!(q.len() == rows * qcols);
    let at = |j: usize, g: usize| (cs[2 * (j * rows + g)], cs[2 * (j * rows + g) + 1]);
    for l in (0..plan.levels).rev() {
        for g in 0..plan.merges(l) {
            let (ta, tb, kb) = plan.merge(l, g);
            for t in (0..plan.merge_steps(kb)).rev() {
                for i in plan.merge_range(kb, t) {
                    let j = t - i;
                    rotate_t(q, rows, qcols, ta + j, tb + i, at(j, tb + i));
                }
            }
        }
    }
    for p in 0..plan.panels {
        let (base, hp) = plan.leaf(p);
        for s in (0..plan.leaf_steps(hp)).rev() {
            for j in plan.leaf_range(hp, s) {
                let g = base + hp - 1 + 2 * j - s;
                rotate_t(q, rows, qcols, g - 1, g, at(j, g));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every merge panel runs in exactly one wave, after its level's previous panel and the
    /// previous level's same panel (the rows it reads are final), and the launch sizes cover
    /// every merge of each panel.
    #[test]
    fn merge_waves_respect_the_panel_order() {
        for (rows, cols) in [(32768, 256), (1000, 70), (64, 64), (300, 1), (5000, 33)] {
            let plan = TreePlan::new(rows, cols, TREE_PANEL_ROWS);
            let npanels = cols.div_ceil(MERGE_PANEL);
            let mut wave_of = vec![vec![None; npanels]; plan.levels];
            for w in 0..plan.merge_waves() {
                for (l, j0) in plan.wave_tasks(w) {
                    assert_eq!(j0 % MERGE_PANEL, 0);
                    let p = j0 / MERGE_PANEL;
                    assert!(wave_of[l][p].replace(w).is_none(), "({l}, {p}) twice");
                    let right = cols.saturating_sub(j0 + MERGE_PANEL);
                    assert_eq!(plan.panel_groups(l, j0, false), plan.merges(l));
                    assert_eq!(
                        plan.panel_groups(l, j0, true),
                        plan.merges(l) * right.div_ceil(UPDATE_COLS)
                    );
                }
            }
            for l in 0..plan.levels {
                for p in 0..npanels {
                    let w = wave_of[l][p].expect("every panel runs");
                    if p > 0 {
                        assert!(w > wave_of[l][p - 1].unwrap());
                    }
                    if l > 0 {
                        assert!(w > wave_of[l - 1][p].unwrap());
                    }
                }
            }
        }
    }

    fn check(rows: usize, cols: usize, panel: usize) {
        let plan = TreePlan::new(rows, cols, panel);
        let a0: Vec<f64> = (0..rows * cols)
            .map(|e| ((e * 7919 + 13) % 101) as f64 / 50.0 - 1.0)
            .collect();
        let mut a = a0.clone();
        let mut cs = vec![f64::NAN; 2 * rows * cols];
        tree_qr(&plan, &mut a, &mut cs);
        for j in 0..cols {
            for i in j + 1..rows {
                assert_eq!(a[j * rows + i], 0.0, "{rows}x{cols}/{panel}: R({i}, {j})");
            }
        }
        // Q R = A
        let mut qr = a.clone();
        tree_apply_q(&plan, &cs, &mut qr, cols);
        for (e, (x, y)) in qr.iter().zip(&a0).enumerate() {
            assert!(
                (x - y).abs() < 1e-13,
                "{rows}x{cols}/{panel}: entry {e}: {x} vs {y}"
            );
        }
        // every rotation of the plan was stored, each element at most once
        let mut seen = vec![0u32; rows * cols];
        for p in 0..plan.panels {
            let (base, hp) = plan.leaf(p);
            for s in 0..plan.leaf_steps(hp) {
                for j in plan.leaf_range(hp, s) {
                    seen[j * rows + base + hp - 1 + 2 * j - s] += 1;
                }
            }
        }
        for l in 0..plan.levels {
            for g in 0..plan.merges(l) {
                let (_, tb, kb) = plan.merge(l, g);
                for t in 0..plan.merge_steps(kb) {
                    for i in plan.merge_range(kb, t) {
                        seen[(t - i) * rows + tb + i] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&c| c <= 1));
        // exactly the elements below the diagonal
        for j in 0..cols {
            for i in 0..rows {
                assert_eq!(
                    seen[j * rows + i],
                    u32::from(i > j),
                    "{rows}x{cols}/{panel} ({i}, {j})"
                );
            }
        }
    }

    #[test]
    fn tree_qr_factors() {
        for &(r, c, p) in &[
            (1, 1, 4),
            (1, 5, 4),
            (5, 1, 1),
            (9, 2, 2),
            (37, 3, 4),
            (39, 5, 4),
            (40, 5, 8),
            (17, 17, 4),
            (6, 9, 2),
            (100, 7, 7),
            (64, 4, 4),
        ] {
            check(r, c, p);
        }
    }

    #[test]
    fn leaf_q_span_fits_the_local_memory() {
        let plan = TreePlan::new(32768, 256, TREE_PANEL_ROWS);
        assert_eq!(plan.leaf_q_span(256, 4), Some(16));
        assert_eq!(plan.leaf_q_span(256, 8), Some(16));
        assert_eq!(plan.leaf_q_span(3, 8), Some(3));
        let wide = TreePlan::new(100_000, 3000, TREE_PANEL_ROWS);
        assert_eq!(wide.leaf_q_span(3000, 8), Some(1));
        let wider = TreePlan::new(100_000, 5000, TREE_PANEL_ROWS);
        assert_eq!(wider.leaf_q_span(5000, 8), None);
        assert_eq!(wider.leaf_q_span(5000, 4), Some(1));
        for (h, b) in [(1, 8), (256, 4), (256, 8), (1000, 8), (4096, 4)] {
            let p = TreePlan::new(1 << 20, h, h);
            let k = p.leaf_q_span(64, b).unwrap();
            assert!(p.leaf_q_local_len(k) * b <= LEAF_Q_LOCAL_BYTES);
        }
    }

    #[test]
    fn q_span_covers_the_columns_with_about_the_target_groups() {
        assert_eq!(TreePlan::q_span(256, 1), 1);
        assert_eq!(TreePlan::q_span(256, 64), 52);
        assert_eq!(TreePlan::q_span(256, 128), 86);
        assert_eq!(TreePlan::q_span(256, 1000), 256);
        assert_eq!(TreePlan::q_span(0, 5), 1);
        for (qcols, groups) in [(1, 1), (7, 3), (300, 2), (4096, 1), (5, 264)] {
            let span = TreePlan::q_span(qcols, groups);
            assert!(span >= 1 && span <= qcols.max(1));
            assert!(qcols.div_ceil(span) * groups <= Q_TARGET_GROUPS.max(groups));
        }
    }
}

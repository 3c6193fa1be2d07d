//! Givens QR on the CPU (the [`QrOrder::Flat`] order): the same rotations as the GPUs'
//! Sameh–Kuck order, applied panel by panel on a copy stored as column panels of [`PANEL`]
//! columns, each panel row-major: a rotation of rows `(i − 1, i)` then updates two contiguous
//! rows of a panel (all columns at once, so the chain of rotations down a column pipelines
//! across the panel's columns). The rotations that zero a panel's columns are generated in
//! order, then applied to every trailing panel in parallel. Applying `Q` works on the same
//! panels, skipping the steps that would only rotate zeros (most of them on the identity the
//! driver passes). Rotation `(c, s)` of element `(i, j)` at `cs[2 (j · rows + i)]`.
//!
//! [`QrOrder::Flat`]: trident_core::svd::QrOrder::Flat

use rayon::prelude::*;
use trident_core::Scalar;

/// Columns per Givens panel (the width of the row-major panels of [`Panels`]).
const PANEL: usize = 16;

/// The Givens rotation `(c, s, r)` with `[c s; −s c] [a; b] = [r; 0]`. The pair is first
/// scaled by `max(|a|, |b|)`: with subnormal inputs, `a / hypot(a, b)` would be quantised and
/// the rotation not orthogonal (the kernels do the same).
#[inline]
fn givens<T: Scalar>(a: T, b: T) -> (T, T, T) {
    let scale = a.abs().max(b.abs());
    if b == T::zero() || scale.is_nan() || scale <= T::zero() {
        return (T::one(), T::zero(), a);
    }
    let (x, y) = (a / scale, b / scale);
    let r = x.hypot(y);
    (x / r, y / r, r * scale)
}

/// A matrix stored as column panels of [`PANEL`] columns, each panel row-major, so that a
/// rotation of two rows updates two contiguous runs of a panel.
struct Panels<T> {
    rows: usize,
    /// `(first column, width, rows × width values)` per panel.
    panels: Vec<(usize, usize, Vec<T>)>,
}

impl<T: Scalar> Panels<T> {
    fn from_col_major(rows: usize, cols: usize, cm: &[T]) -> Self {
        let panels = (0..cols.div_ceil(PANEL))
            .into_par_iter()
            .map(|k| {
                let j0 = k * PANEL;
                let w = PANEL.min(cols - j0);
                let mut d = vec![T::zero(); rows * w];
                for jl in 0..w {
                    let col = &cm[(j0 + jl) * rows..(j0 + jl + 1) * rows];
                    for (i, &x) in col.iter().enumerate() {
                        d[i * w + jl] = x;
                    }
                }
                (j0, w, d)
            })
            .collect();
        Self { rows, panels }
    }

    fn to_col_major(&self, cm: &mut [T]) {
        let rows = self.rows;
        if rows == 0 {
            return;
        }
        cm.par_chunks_mut(rows * PANEL)
            .zip(&self.panels)
            .for_each(|(out, (_, w, d))| {
                for (jl, col) in out.chunks_mut(rows).enumerate() {
                    for (i, x) in col.iter_mut().enumerate() {
                        *x = d[i * w + jl];
                    }
                }
            });
    }
}

/// Rotates rows `i − 1` and `i` of a row-major panel `d` of width `w` (columns `from ..`):
/// `x ← c x + s y`, `y ← c y − s x` (the QR's rotation), or the transpose when `transpose`.
#[inline]
fn rotate_rows<T: Scalar>(
    d: &mut [T],
    w: usize,
    i: usize,
    from: usize,
    (c, s): (T, T),
    transpose: bool,
) {
    let (lo, hi) = d.split_at_mut(i * w);
    let (rx, ry) = (&mut lo[(i - 1) * w + from..i * w], &mut hi[from..w]);
    if transpose {
        for (u, v) in rx.iter_mut().zip(ry.iter_mut()) {
            let (x, y) = (*u, *v);
            *u = c * x - s * y;
            *v = s * x + c * y;
        }
    } else {
        for (u, v) in rx.iter_mut().zip(ry.iter_mut()) {
            let (x, y) = (*u, *v);
            *u = c * x + s * y;
            *v = c * y - s * x;
        }
    }
}

/// Givens QR of the `m × n` column-major `a` in place (`a` becomes `R`, exact zeros below
/// the diagonal); returns the rotations of its `steps = min(m − 1, n)` reduced columns.
pub(crate) fn qr<T: Scalar>(a: &mut [T], m: usize, n: usize, steps: usize) -> Vec<T> {
    let mut cs = vec![T::zero(); 2 * m * steps];
    if steps == 0 {
        return cs;
    }
    let mut pm = Panels::from_col_major(m, n, a);
    for k in 0..pm.panels.len() {
        let (head, rest) = pm.panels.split_at_mut(k + 1);
        let (j0, w, d) = &mut head[k];
        let (j0, w) = (*j0, *w);
        if j0 >= steps {
            break;
        }
        let j1 = (j0 + w).min(steps);
        // Generate the panel's rotations column by column; each is applied at once to
        // the panel's later columns.
        for j in j0..j1 {
            let jl = j - j0;
            for i in (j + 1..m).rev() {
                let (c, s, r) = givens(d[(i - 1) * w + jl], d[i * w + jl]);
                d[(i - 1) * w + jl] = r;
                d[i * w + jl] = T::zero();
                cs[2 * (j * m + i)] = c;
                cs[2 * (j * m + i) + 1] = s;
                if jl + 1 < w {
                    rotate_rows(d, w, i, jl + 1, (c, s), false);
                }
            }
        }
        // Apply them to every trailing panel.
        let cs = &cs;
        rest.par_iter_mut().for_each(|(_, wt, dt)| {
            for jp in j0..j1 {
                for i in (jp + 1..m).rev() {
                    let (c, s) = (cs[2 * (jp * m + i)], cs[2 * (jp * m + i) + 1]);
                    rotate_rows(dt, *wt, i, 0, (c, s), false);
                }
            }
        });
    }
    pm.to_col_major(a);
    cs
}

/// `q ← Q q` for the rotations `cs` of a QR of `m` rows with `steps` reduced columns; `q` is
/// `m × qcols` column-major.
pub(crate) fn apply_q<T: Scalar>(cs: &[T], steps: usize, m: usize, q: &mut [T], qcols: usize) {
    let mut pm = Panels::from_col_major(m, qcols, q);
    // Q q = G₁ᵀ ⋯ G_Kᵀ q: the last rotation first, each transposed. Step j rotates rows
    // j .. m only: while those are all zero in a panel (the identity's upper columns),
    // the step is skipped (it would rotate zeros into zeros).
    pm.panels.par_iter_mut().for_each(|(_, w, d)| {
        let w = *w;
        let mut last = d.iter().rposition(|x| *x != T::zero()).map_or(0, |e| e / w);
        for j in (0..steps).rev() {
            if j > last {
                continue;
            }
            last = m - 1;
            let cs = &cs[2 * j * m..2 * (j + 1) * m];
            for i in j + 1..m {
                rotate_rows(d, w, i, 0, (cs[2 * i], cs[2 * i + 1]), true);
            }
        }
    });
    pm.to_col_major(q);
}

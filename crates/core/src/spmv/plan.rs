//! The ELLPACK-R SpMV launch plan that every GPU backend uses: the slot passes
//! ([`plan_slot_passes`]) and the checked dimensions ([`EllpackPlan`]).

use crate::ellpack::EllpackR;
use crate::error::{Error, Result};
use crate::gpu::to_u32;
use crate::scalar::{Index, Scalar};
use crate::spmv::SpmvOptions;

/// At most this many slot passes ([`plan_slot_passes`]).
const MAX_SLOT_PASSES: usize = 8;
/// Rows per sampled window, and windows sampled, when estimating the x footprint.
const WINDOW_ROWS: usize = 1 << 16;
const WINDOWS: usize = 8;
/// At most this many entries examined per window.
const WINDOW_ENTRIES: usize = 1 << 17;

/// Splits the slots `0..width` of `a` into contiguous ranges ("slot passes") for a GPU
/// ELLPACK-R SpMV that runs one kernel launch per range, so that each launch's gathers from
/// `x` stay inside a cache of `cache_bytes` (the GPU's L2). Shared by the CUDA and OpenCL
/// backends.
///
/// **What.** Returns `[(k_begin, k_end), …]`: launch `p` handles the slots
/// `k_begin <= k < k_end` of every row, the first overwriting `y`, the later ones adding to
/// it.
///
/// **Why.** A one-thread-per-row kernel's gathers from `x` hit the cache when the part of
/// `x` in use fits there. Columns are sorted within each row, so slot `k` of random rows
/// clusters around the `k / width` quantile of the columns; handling a range of slots at a
/// time for all rows shrinks the part of `x` in use, at the cost of re-reading and
/// re-writing `y` once per extra pass. The part of `x` that consecutive rows touch is
/// estimated from the column span of up to 8 sampled windows of 65536 rows (small for
/// banded or locally clustered matrices, which then run in one pass). With
/// `budget = max(cache_bytes / 3, 1 MiB)`, the number of passes is
/// `ceil(footprint * size_of::<T>() / budget)`, at most 8 and at most `width / 2` (with
/// fewer than two slots per pass the columns of a slot cluster less and the extra `y`
/// traffic dominates), and at least 1 (the figures behind these choices:
/// `benches/results/spmv.md`).
///
/// `forced`: `Some(p)` with `p >= 1` skips the estimate and uses `p` passes (clamped to
/// `1..=max(width, 1)`), for experiments; `None` or `Some(0)` plans automatically.
///
/// **Invariants** of the result: non-empty; the first range starts at 0, the last ends at
/// `width`; ranges are contiguous (`r[p].1 == r[p + 1].0`) and, for `width > 0`, non-empty;
/// width 0 gives `[(0, 0)]`. A `width` above `u32::MAX` is the caller's to reject (both
/// backends return [`Error::IndexOverflow`] before planning); the bounds would saturate.
/// See [`slot_passes_are_valid`].
pub fn plan_slot_passes<T: Scalar, I: Index>(
    a: &EllpackR<T, I>,
    cache_bytes: usize,
    forced: Option<usize>,
) -> Vec<(u32, u32)> {
    let width = a.width();
    let passes = match forced.filter(|&p| p >= 1) {
        Some(p) => p,
        None => {
            let budget = (cache_bytes / 3).max(1 << 20);
            let footprint = x_footprint_columns(a).saturating_mul(std::mem::size_of::<T>());
            footprint
                .div_ceil(budget)
                .min(MAX_SLOT_PASSES)
                .min(width / 2)
        }
    }
    .clamp(1, width.max(1));
    let bound = |g: usize| u32::try_from(width * g / passes).unwrap_or(u32::MAX);
    (0..passes).map(|g| (bound(g), bound(g + 1))).collect()
}

/// True if `passes` satisfies the invariants of [`plan_slot_passes`]'s result for a matrix
/// of the given `width`: non-empty, starting at 0, contiguous, each `begin <= end <=
/// max(width, 1)`, the last ending at or beyond `width`. Backends re-check this before
/// launching, since their kernels trust the ranges.
pub fn slot_passes_are_valid(passes: &[(u32, u32)], width: usize) -> bool {
    let Ok(width) = u32::try_from(width) else {
        return false;
    };
    !passes.is_empty()
        && passes[0].0 == 0
        && passes.iter().all(|&(b, e)| b <= e && e <= width.max(1))
        && passes.windows(2).all(|p| p[0].1 == p[1].0)
        && passes.last().is_some_and(|p| p.1 >= width)
}

/// Estimated number of x entries that a window of consecutive rows gathers from: the mean
/// column span (max - min + 1) of up to 8 sampled windows of 65536 rows.
fn x_footprint_columns<T: Scalar, I: Index>(a: &EllpackR<T, I>) -> usize {
    let (rows, cols) = a.shape();
    if rows == 0 || cols == 0 || a.width() == 0 {
        return 0;
    }
    let window = WINDOW_ROWS.min(rows);
    let starts = WINDOWS.min(rows.div_ceil(window));
    let col_idx = a.col_indices();
    let rl = a.row_lengths();
    let (mut total, mut counted) = (0usize, 0usize);
    for w in 0..starts {
        let first = if starts == 1 {
            0
        } else {
            (rows - window) * w / (starts - 1)
        };
        let step = (window * a.width()).div_ceil(WINDOW_ENTRIES).max(1);
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        for i in (first..first + window).step_by(step) {
            for k in 0..rl[i].to_usize() {
                let c = col_idx[k * rows + i].to_usize();
                lo = lo.min(c);
                hi = hi.max(c);
            }
        }
        if lo <= hi {
            total += hi - lo + 1;
            counted += 1;
        }
    }
    total.checked_div(counted).unwrap_or(0).min(cols)
}

/// How a GPU backend launches the ELLPACK-R SpMV kernel for one matrix: the dimensions as
/// the kernels take them and the slot passes. Made once at upload by [`EllpackPlan::new`],
/// re-checked before every launch by [`EllpackPlan::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EllpackPlan {
    /// Rows (the kernels take a 32-bit count).
    pub rows: u32,
    /// Columns (the length of `x`).
    pub cols: usize,
    /// Padded row width.
    pub width: u32,
    /// Slot ranges, one launch each (see [`plan_slot_passes`]).
    pub passes: Vec<(u32, u32)>,
    /// [`SpmvOptions::max_groups`].
    pub max_groups: Option<usize>,
}

impl EllpackPlan {
    /// Plans `a` for a device with `cache_bytes` of last-level cache (0: unknown, 4 MiB
    /// assumed). The pass count comes from `opts.passes`, else from [`plan_slot_passes`]
    /// (nothing from the environment). Fails with
    /// [`Error::IndexOverflow`] when the rows or width exceed `u32`.
    pub fn new<T: Scalar, I: Index>(
        a: &EllpackR<T, I>,
        cache_bytes: usize,
        opts: &SpmvOptions,
    ) -> Result<Self> {
        let rows = to_u32(a.rows())?;
        let width = to_u32(a.width())?;
        let cache = if cache_bytes == 0 {
            4 << 20
        } else {
            cache_bytes
        };
        let forced = opts.passes;
        Ok(Self {
            rows,
            cols: a.cols(),
            width,
            passes: plan_slot_passes(a, cache, forced),
            max_groups: opts.max_groups,
        })
    }

    /// `(rows, cols)` of the matrix.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows as usize, self.cols)
    }

    /// Formats a device matrix of this plan as `name { type: "f32", plan: … }` (for the
    /// backends' `Debug` impls, whose buffers are not worth printing).
    pub fn debug_as<T: Scalar>(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        name: &str,
    ) -> std::fmt::Result {
        f.debug_struct(name)
            .field("type", &T::NAME)
            .field("plan", self)
            .finish()
    }

    /// The kernel launches of one product: `(k_begin, k_end, accumulate)` per slot pass,
    /// `accumulate` 0 for the first (which overwrites `y`) and 1 for the others.
    pub fn launches(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        (self.passes.iter().enumerate()).map(|(p, &(b, e))| (b, e, u32::from(p > 0)))
    }

    /// Everything a backend checks before launching `y = A x` with this plan: the shapes
    /// of `x` and `y` ([`crate::spmv::check_shapes`]) and the device buffers ([`Self::check`]).
    pub fn check_spmv(
        &self,
        (values, col_idx, rl): (usize, usize, usize),
        x_len: usize,
        y_len: usize,
    ) -> Result<()> {
        crate::spmv::check_shapes(self.shape(), x_len, y_len)?;
        self.check(values, col_idx, rl)
    }

    /// Fails unless device buffers of these lengths hold a matrix of this plan
    /// (`rows * width` values and columns, `rows` row lengths) and the passes are valid:
    /// the invariants that the kernels trust.
    pub fn check(&self, values: usize, col_idx: usize, rl: usize) -> Result<()> {
        let slots = (self.rows as usize).checked_mul(self.width as usize);
        if slots != Some(values) || slots != Some(col_idx) || rl != self.rows as usize {
            return Err(Error::invalid(
                "device ELLPACK-R",
                format!(
                    "{} rows x width {} with {values} values, {col_idx} columns, {rl} row lengths",
                    self.rows, self.width
                ),
            ));
        }
        if !slot_passes_are_valid(&self.passes, self.width as usize) {
            return Err(Error::invalid(
                "device ELLPACK-R",
                format!("slot passes {:?} for width {}", self.passes, self.width),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ellpack(
        rows: usize,
        cols: usize,
        width: usize,
        col: impl Fn(usize, usize) -> usize,
    ) -> EllpackR<f32> {
        let mut values = vec![0.0f32; rows * width];
        let mut col_idx = vec![0u32; rows * width];
        for i in 0..rows {
            for k in 0..width {
                values[k * rows + i] = 1.0;
                col_idx[k * rows + i] = col(i, k) as u32;
            }
        }
        EllpackR::new(rows, cols, width, values, col_idx, vec![width as u32; rows]).unwrap()
    }

    const L2: usize = 50 << 20;

    fn assert_invariants(p: &[(u32, u32)], width: usize) {
        assert!(slot_passes_are_valid(p, width), "{p:?} (width {width})");
        assert_eq!(p.first().unwrap().0, 0, "{p:?}");
        assert_eq!(p.last().unwrap().1 as usize, width, "{p:?}");
        if width > 0 {
            assert!(p.iter().all(|r| r.0 < r.1), "{p:?}");
        }
    }

    #[test]
    fn passes_cover_all_slots_in_order() {
        // Banded: one pass, whatever the size of x.
        let n = 1 << 20;
        let banded = ellpack(n, n, 16, |i, k| (i + k).min(n - 16 + k));
        assert_eq!(plan_slot_passes(&banded, L2, None), [(0, 16)]);
        // Scattered columns over a large x: several passes, covering 0..16 contiguously.
        let cols = 12_000_000; // 48 MB of f32
        let spread = ellpack(n, cols, 16, |i, k| {
            k * (cols / 16) + (i.wrapping_mul(2_654_435_761) % (cols / 16))
        });
        let p = plan_slot_passes(&spread, L2, None);
        assert_eq!(p.len(), 3, "{p:?}");
        assert_invariants(&p, 16);
        // Small x: one pass.
        let small = ellpack(1000, 1000, 4, |i, k| k * 250 + i % 250);
        assert_eq!(plan_slot_passes(&small, L2, None), [(0, 4)]);
        // Width 0 and 1.
        assert_eq!(
            plan_slot_passes(&ellpack(5, 5, 0, |_, _| 0), L2, None),
            [(0, 0)]
        );
        let one = ellpack(n, cols, 1, |i, _| i.wrapping_mul(2_654_435_761) % cols);
        assert_eq!(plan_slot_passes(&one, L2, None), [(0, 1)]);
    }

    #[test]
    fn forced_pass_counts_are_clamped() {
        let a = ellpack(100, 100, 7, |i, k| k * 14 + i % 14);
        assert_eq!(plan_slot_passes(&a, L2, Some(1)), [(0, 7)]);
        assert_eq!(plan_slot_passes(&a, L2, Some(3)), [(0, 2), (2, 4), (4, 7)]);
        // More passes than slots: one slot each.
        let p = plan_slot_passes(&a, L2, Some(100));
        assert_eq!(p.len(), 7);
        assert_invariants(&p, 7);
        // Some(0) plans automatically (here: one pass).
        assert_eq!(plan_slot_passes(&a, L2, Some(0)), [(0, 7)]);
        // Width 0 always gives one empty pass.
        let empty = ellpack(5, 5, 0, |_, _| 0);
        assert_eq!(plan_slot_passes(&empty, L2, Some(4)), [(0, 0)]);
        for forced in 1..=10 {
            assert_invariants(&plan_slot_passes(&a, 0, Some(forced)), 7);
        }
    }

    #[test]
    fn u64_indices_plan_like_u32() {
        let a = ellpack(4096, 1 << 24, 8, |i, k| {
            k * (1 << 21) + (i.wrapping_mul(2_654_435_761) % (1 << 21))
        });
        let b: EllpackR<f32, u64> = EllpackR::new(
            a.rows(),
            a.cols(),
            a.width(),
            a.values().to_vec(),
            a.col_indices().iter().map(|&c| u64::from(c)).collect(),
            a.row_lengths().iter().map(|&l| u64::from(l)).collect(),
        )
        .unwrap();
        for cache in [0, 4 << 20, L2] {
            assert_eq!(
                plan_slot_passes(&a, cache, None),
                plan_slot_passes(&b, cache, None)
            );
        }
    }

    #[test]
    fn plans_launch_each_pass_once() {
        let a = ellpack(10, 10, 4, |i, k| k * 2 + i % 2);
        let opts = SpmvOptions {
            passes: Some(2),
            ..SpmvOptions::default()
        };
        let plan = EllpackPlan::new(&a, 0, &opts).unwrap();
        assert_eq!(plan.shape(), (10, 10));
        let l: Vec<_> = plan.launches().collect();
        assert_eq!(l, [(0, 2, 0), (2, 4, 1)]);
        assert!(plan.check_spmv((40, 40, 10), 10, 10).is_ok());
        assert!(matches!(
            plan.check_spmv((40, 40, 10), 9, 10),
            Err(Error::Shape(_))
        ));
        assert!(matches!(
            plan.check_spmv((39, 40, 10), 10, 10),
            Err(Error::Invalid { .. })
        ));
    }

    #[test]
    fn pass_validation() {
        assert!(slot_passes_are_valid(&[(0, 0)], 0));
        assert!(slot_passes_are_valid(&[(0, 3), (3, 5)], 5));
        assert!(!slot_passes_are_valid(&[], 5));
        assert!(!slot_passes_are_valid(&[(1, 5)], 5));
        assert!(!slot_passes_are_valid(&[(0, 2), (3, 5)], 5));
        assert!(!slot_passes_are_valid(&[(0, 4)], 5));
        assert!(!slot_passes_are_valid(&[(0, 6)], 5));
        assert!(!slot_passes_are_valid(&[(0, 3), (3, 2)], 5));
    }
}

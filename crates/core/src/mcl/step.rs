//! One column of one iteration, the same on every backend: expansion, inflation, the
//! regularisation penalty and top-`K` pruning, summed in fixed point (see the module docs of
//! [`crate::mcl`], "Determinism").

use super::{MclOptions, Variant, MASS_FLOOR};
use crate::scalar::Scalar;

/// Scale of the fixed-point sums of column entries (every entry and column sum is ≤ 1 up to
/// rounding, far below the 16 that fits).
pub const FIXED_SCALE: f64 = 1152921504606846976.0; // 2^60
/// Default [`MclOptions::stationary_tolerance`]: see [`crate::mcl`], "Convergence".
pub const STATIONARY_TOLERANCE: f64 = 1e-4;
/// Default [`MclOptions::finish_after`]: see [`crate::mcl`], "Convergence".
pub const FINISH_AFTER: usize = 10;

/// Scale of the fixed-point mass `m = M·1` (a node can attract up to `n`).
pub const MASS_SCALE: f64 = 4294967296.0; // 2^32

/// `p` in fixed point: `p · 2^60` rounded toward zero (what a C cast does). `p` must be in
/// `[0, 16)`.
#[inline]
pub fn to_fixed<T: Scalar>(p: T) -> u64 {
    (p * T::from_f64(FIXED_SCALE)).to_u64().unwrap_or(0)
}

/// A fixed-point sum back in `T` (rounded to nearest).
#[inline]
pub fn from_fixed<T: Scalar>(a: u64) -> T {
    <T as num_traits::NumCast>::from(a).unwrap_or_else(T::zero) * T::from_f64(1.0 / FIXED_SCALE)
}

/// An entry's contribution to the fixed-point mass.
#[inline]
pub fn to_mass<T: Scalar>(p: T) -> u64 {
    (p * T::from_f64(MASS_SCALE)).to_u64().unwrap_or(0)
}

/// The balance penalty of a node of fixed-point mass `m`: `max(m, MASS_FLOOR)^(−b)`, with
/// `b = 0.5` and `b = 1` computed as `1/√m` and `1/m` (correctly rounded everywhere).
#[inline]
pub fn penalty<T: Scalar>(mass: u64, b: f64) -> T {
    let m = <T as num_traits::NumCast>::from(mass).unwrap_or_else(T::zero)
        * T::from_f64(1.0 / MASS_SCALE);
    let m = m.max(T::from_f64(MASS_FLOOR));
    if b == 0.5 {
        T::one() / m.sqrt()
    } else if b == 1.0 {
        T::one() / m
    } else {
        m.powf(T::from_f64(-b))
    }
}

/// The power-of-two scale of a column's inflated values: `1 / 2^⌈log2 distinct⌉` for a
/// column of `distinct` rows (1 for none or one), so that the inflated values, each at most 1
/// ([`inflate`]), sum to at most 1 and their fixed-point sums cannot overflow. Multiplying by
/// it is exact.
#[inline]
pub fn inflation_scale<T: Scalar>(distinct: usize) -> T {
    T::one()
        / <T as num_traits::NumCast>::from(distinct.max(1).next_power_of_two())
            .unwrap_or_else(T::one)
}

/// Inflation of one entry `x` of a column whose largest entry is `max`: `(x / max)^r ·
/// scale` ([`inflation_scale`]), with `r = 2` as `q·q` (exact rounding everywhere). Raising
/// the column scaled by its maximum, not `x` itself, keeps every accepted `r` in range: the
/// largest entry becomes exactly `scale` (no underflow of the whole column, as `x^20` of
/// entries near 0.01 gave) and none exceeds it (no overflow). The normalisation divides the
/// factor `max^r / scale` out again, so the column is `x^r / Σ x^r` as before. A column
/// whose entries are all 0 (`max = 0`) inflates to `scale` everywhere.
#[inline]
pub fn inflate<T: Scalar>(x: T, max: T, r: f64, scale: T) -> T {
    let q = if max > T::zero() { x / max } else { T::one() };
    let p = if r == 2.0 {
        q * q
    } else {
        q.powf(T::from_f64(r))
    };
    p * scale
}

/// One column of an iteration, after the expansion's sums are known: `acc` holds `(row,
/// fixed-point sum)` of column `j` of the product (any order, rows distinct) and `pen` the
/// balance penalties (empty: none). Scales by the penalty, inflates, prunes,
/// keeps the `K` largest (ties by row), normalises; writes the column into `out_idx/out_val`
/// (length ≥ `K`) and returns `(entries, chaos, change)`, where `change` is the fixed-point L1
/// distance to the previous column `prev` ([`column_change`]; [`Variant::MlrMcl`]: the
/// squared L2 distance, [`column_change_sq`], and the pruning cut is
/// [`prune_cut`]). This is the host definition
/// that the GPU kernels mirror step by step.
pub fn column_step<T: Scalar>(
    acc: &[(u32, u64)],
    pen: &[T],
    opts: &MclOptions,
    prev: (&[u32], &[T]),
    scratch: &mut Vec<(u32, T)>,
    out_idx: &mut [u32],
    out_val: &mut [T],
) -> (usize, T, u64) {
    let k = opts.max_per_column;
    scratch.clear();
    let mut s1: u64 = 0;
    // The penalised sums, their maximum and the scale of the inflation (see [`inflate`]).
    let penalised = |i: u32, a: u64| {
        let x = from_fixed::<T>(a);
        if pen.is_empty() {
            x
        } else {
            x * pen[i as usize]
        }
    };
    let max = acc
        .iter()
        .map(|&(i, a)| penalised(i, a))
        .fold(T::zero(), |m, x| if x > m { x } else { m });
    let scale = inflation_scale::<T>(acc.len());
    let value = |i: u32, a: u64| inflate(penalised(i, a), max, opts.inflation, scale);
    for &(i, a) in acc {
        let y = value(i, a);
        s1 = s1.wrapping_add(to_fixed(y));
        scratch.push((i, y));
    }
    let cut = match opts.variant {
        Variant::Trident => T::from_f64(opts.prune_threshold) * from_fixed::<T>(s1),
        Variant::MlrMcl => prune_cut(s1, acc.len(), max, opts.inflation, scale),
    };
    let all = scratch.len();
    scratch.retain(|e| e.1 >= cut);
    if scratch.is_empty() && all > 0 {
        // Only when every entry is below the cut (impossible unless > 1/threshold entries):
        // keep them all rather than none.
        for &(i, a) in acc {
            scratch.push((i, value(i, a)));
        }
    }
    let by_rank = |a: &(u32, T), b: &(u32, T)| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0));
    if scratch.len() > k {
        scratch.select_nth_unstable_by(k - 1, by_rank);
        scratch.truncate(k);
    }
    scratch.sort_unstable_by(by_rank);
    let s2: u64 = scratch
        .iter()
        .fold(0u64, |s, e| s.wrapping_add(to_fixed(e.1)));
    let s2 = from_fixed::<T>(s2);
    let mut sq: u64 = 0;
    for (t, &(i, y)) in scratch.iter().enumerate() {
        let v = y / s2;
        out_idx[t] = i;
        out_val[t] = v;
        sq = sq.wrapping_add(to_fixed(v * v));
    }
    let chaos = match scratch.first() {
        Some(_) => (out_val[0] - from_fixed::<T>(sq)).max(T::zero()),
        None => T::zero(),
    };
    let len = scratch.len();
    let new = (&out_idx[..len], &out_val[..len]);
    let change = match opts.variant {
        Variant::Trident => column_change(prev, new),
        Variant::MlrMcl => column_change_sq(prev, new),
    };
    (len, chaos, change)
}

/// The L1 distance between a column's previous and new entries (rows distinct within each,
/// any order), in fixed point: `Σ to_fixed(|new_i − prev_i|)` over the new entries (a row
/// missing from `prev` counts `new_i`), plus `Σ to_fixed(prev_i)` over the previous entries
/// whose row is gone. Every difference is correctly rounded and the sum is an integer sum,
/// so all backends get the same bits; the kernels compute it in their normalisation loop.
/// Linear look-ups: both columns have at most `K` entries.
pub fn column_change<T: Scalar>(prev: (&[u32], &[T]), new: (&[u32], &[T])) -> u64 {
    let mut d: u64 = 0;
    for (&i, &v) in new.0.iter().zip(new.1) {
        let old = prev
            .0
            .iter()
            .position(|&r| r == i)
            .map_or(T::zero(), |s| prev.1[s]);
        d = d.wrapping_add(to_fixed((v - old).abs()));
    }
    for (&i, &x) in prev.0.iter().zip(prev.1) {
        if !new.0.contains(&i) {
            d = d.wrapping_add(to_fixed(x));
        }
    }
    d
}

/// Pruning: `PRUNE_A·avg·(1 − PRUNE_B·(max − avg))`, clamped to `[PRUNE_FLOOR, max]`.
pub const PRUNE_A: f64 = 0.9;
/// See [`PRUNE_A`].
pub const PRUNE_B: f64 = 2.0;
/// See [`PRUNE_A`].
pub const PRUNE_FLOOR: f64 = 1e-7;

/// The squared L2 distance between two columns of `M` (rows distinct within each, any
/// order) in fixed point at 2^60: `Σ to_fixed((a_x − b_x)²)` over the rows of `a` (a row
/// missing from `b` counts `a_x²`), plus `Σ to_fixed(b_x²)` over the rows of `b` missing
/// from `a`. The same sum gives a column's squared change ([`column_change_sq`]) and the DPR
/// distance ([`dpr`](crate::mcl::mlr::dpr)).
pub fn column_distance_sq<T: Scalar>(a: (&[u32], &[T]), b: (&[u32], &[T])) -> u64 {
    let mut d: u64 = 0;
    for (&i, &x) in a.0.iter().zip(a.1) {
        let y =
            b.0.iter()
                .position(|&r| r == i)
                .map_or(T::zero(), |s| b.1[s]);
        let e = x - y;
        d = d.wrapping_add(to_fixed(e * e));
    }
    for (&i, &y) in b.0.iter().zip(b.1) {
        if !a.0.contains(&i) {
            d = d.wrapping_add(to_fixed(y * y));
        }
    }
    d
}

/// A column's squared change from `prev` to `new` in fixed point at 2^60
/// ([`column_distance_sq`] of new against previous).
pub fn column_change_sq<T: Scalar>(prev: (&[u32], &[T]), new: (&[u32], &[T])) -> u64 {
    column_distance_sq(new, prev)
}

/// MLR-MCL's pruning cut of one column, in the units of the inflated values `y = (x /
/// max)^r · scale` ([`inflate`]): `sum` is their fixed-point sum, `count` the
/// column's entries, `xmax` the column's largest value before inflation. With the factor
/// `F = xmax^r / scale` back to MLR-MCL's unnormalised `x^r` (`avg_t = avg·F`, `max_t =
/// scale·F`), the threshold `PRUNE_A·avg_t·(1 − PRUNE_B·(max_t − avg_t))` clamped to
/// `[PRUNE_FLOOR, max_t]`, divided by `F`: `min(scale, max(PRUNE_FLOOR / F,
/// PRUNE_A·avg·(1 − PRUNE_B·((scale − avg)·F))))`. Entries `y ≥ cut` are kept.
pub fn prune_cut<T: Scalar>(sum: u64, count: usize, xmax: T, r: f64, scale: T) -> T {
    let count = <T as num_traits::NumCast>::from(count.max(1)).unwrap_or_else(T::one);
    let avg = from_fixed::<T>(sum) / count;
    let f = if r == 2.0 {
        xmax * xmax
    } else {
        xmax.powf(T::from_f64(r))
    } / scale;
    let t = T::from_f64(PRUNE_A) * avg * (T::one() - T::from_f64(PRUNE_B) * ((scale - avg) * f));
    let t = t.max(T::from_f64(PRUNE_FLOOR) / f);
    t.min(scale)
}

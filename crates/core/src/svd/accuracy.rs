//! The SVD's and QR's accuracy contract, checked on the host in f64: the tolerance on
//! singular values ([`values_tolerance`]), the decomposition's validity ([`validity`]: the
//! factors' orthogonality, the residual and every value's own residual) and the QR's
//! ([`qr_validity`]). The conformance suite, the benchmarks and the CLI all call these.

use rayon::prelude::*;

use crate::dense::DenseView;
use crate::scalar::Scalar;
use crate::tolerance::Tolerance;

#[cfg(doc)]
use super::reorthonormalise;
use super::{driver, negligible_gram, QrFactors, SvdResult, Wide, TOL_MIN_ROWS};

/// The tolerance on singular values: `|s_i − s_ref_i| ≤ 10 · ε · min(m, n) · ‖A‖₂` (pass
/// `‖A‖₂` as the scale of [`Tolerance::check`]).
pub fn values_tolerance<T: Scalar>(m: usize, n: usize) -> Tolerance {
    Tolerance::of::<T>(10.0 * m.min(n).max(1) as f64)
}

/// Measured errors of an SVD against its input, and the bounds they must meet (see
/// [`validity`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Validity {
    /// `max |UᵀU − I|` (0 when `U` was not formed); for a full `U` with more columns than
    /// singular values, every entry involving the first `k` columns and random-sign probes of the rest
    /// (see [`validity`]).
    pub u_orth: f64,
    /// `max |V Vᵀ − I|` (0 when `V` was not formed), likewise.
    pub v_orth: f64,
    /// `max |U Σ Vᵀ − A|` (0 when vectors were not formed).
    pub residual: f64,
    /// Bound on both orthogonality errors: `4 · ε · max(m, n, 32) + 4ε`.
    pub orth_bound: f64,
    /// Bound on the residual: `10 · ε · min(m, n) · ‖A‖₂`.
    pub residual_bound: f64,
    /// The `‖A‖₂` used (`max(s_0, ‖A‖_F / √min(m, n))`, in f64).
    pub norm: f64,
    /// The largest per-value residual, relative to its own scale: for `m ≥ n`,
    /// `max_i (‖A v_i − s_i u_i‖ − √k τ)⁺ / (ε (Σ_j ‖A e_j‖ |v_ij| + s_i) + δ)`, with `δ` the
    /// precision's smallest subnormal (the spacing of a returned `s_i` below the normal range)
    /// and `τ` the working range's floor (singular values below about `2^-119 ‖A‖_F` in f32,
    /// `2^-1008 ‖A‖_F` in f64, are returned as 0: see `svd::negligible_gram`); for `m < n` the same with
    /// `Aᵀ`, `u_i`, `v_i` and the row norms (0 when vectors were not formed). One-sided
    /// Jacobi's backward error is column-scaled, so this stays small for every value, the
    /// smallest of a graded matrix included: a small singular value returned as 0 (or
    /// otherwise wrong) makes it about `σ_i / (ε · scale)`, far above the bound, where the
    /// absolute residual `max |U Σ Vᵀ − A|` cannot see it.
    pub value_residual: f64,
    /// The index `i` of [`Self::value_residual`].
    pub value_index: usize,
    /// Bound on [`Self::value_residual`]: `10 · max(min(m, n), 32)`.
    pub value_bound: f64,
}

impl Validity {
    /// `Ok` when every error is within its bound (NaN never is).
    pub fn check(&self) -> Result<(), String> {
        let ok = |e: f64, b: f64| e.is_finite() && e <= b;
        if ok(self.u_orth, self.orth_bound)
            && ok(self.v_orth, self.orth_bound)
            && ok(self.residual, self.residual_bound)
            && ok(self.value_residual, self.value_bound)
        {
            Ok(())
        } else {
            Err(format!("SVD not valid: {self}"))
        }
    }
}

impl std::fmt::Display for Validity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "max|UᵀU−I| {:.2e}, max|VVᵀ−I| {:.2e} (bound {:.2e}); max|UΣVᵀ−A| {:.2e} (bound {:.2e}, ‖A‖₂ {:.3e}); per value ‖Av_i−s_iu_i‖/(ε·scale_i) {:.3} at i = {} (bound {:.0})",
            self.u_orth,
            self.v_orth,
            self.orth_bound,
            self.residual,
            self.residual_bound,
            self.norm,
            self.value_residual,
            self.value_index,
            self.value_bound
        )
    }
}

/// The tighter bound on `max |V Vᵀ − I|` that the conformance suite checks on a 128² and a
/// 400 × 48 matrix: `ε · max(min(m, n), 64) / 4`. `U`'s orthogonality is set by the convergence
/// threshold (`max(rows, 32) · ε`: the cosines left), `V`'s only by rounding in the rotations
/// accumulated into it, which [`reorthonormalise`] keeps at a few tens of ε (LAPACK-class
/// one-sided Jacobi behaves alike); the general [`validity`] bound `4 ε max(m, n, 32)` covers
/// both.
pub fn v_orth_bound<T: Scalar>(m: usize, n: usize) -> f64 {
    T::EPS.wide() * m.min(n).max(64) as f64 / 4.0
}

/// Random-sign probes of the orthogonality of a full factor's columns beyond the first `k`
/// (see [`validity`]).
pub const ORTH_PROBES: usize = 4;

/// The SVD accuracy contract (after the HPEC 2006 seed), in f64: `max |UᵀU − I|` and
/// `max |V Vᵀ − I|` within `4 ε max(m, n, 32)` (+ 4ε; the 32 is [`TOL_MIN_ROWS`]), `max |U Σ Vᵀ − A| ≤ 10 ε min(m, n) ‖A‖₂`,
/// every singular value's own residual within its column-scaled backward-error bound
/// ([`Validity::value_residual`]), singular values finite, non-negative and descending, and
/// shapes as requested. The conformance suite, the benchmarks and the CLI all call this.
///
/// Cost `O(m n k)` for the residuals; the orthogonality of a thin factor is checked entry by
/// entry (`O(m k²)`), of a full one (`m × m` with `m > k`) every entry in the first `k`
/// columns' rows of `UᵀU` (`O(m² k)`, the cost of forming that factor) and the rest by
/// [`ORTH_PROBES`] random-sign probes (`O(m²)` each): never the `O(m³)` of all of `UᵀU`. Working
/// memory: the factors in f64 (fallible: an error names the bytes).
pub fn validity<T: Scalar>(a: DenseView<'_, T>, r: &SvdResult<T>) -> Result<Validity, String> {
    let (m, n) = a.shape();
    let k = m.min(n);
    if r.s.len() != k {
        return Err(format!(
            "{} singular values for a {m} x {n} matrix",
            r.s.len()
        ));
    }
    for (i, w) in r.s.windows(2).enumerate() {
        if w[0] < w[1] {
            return Err(format!("s[{i}] = {} < s[{}] = {}", w[0], i + 1, w[1]));
        }
    }
    if let Some(bad) = r.s.iter().position(|s| !(s.is_finite() && *s >= T::zero())) {
        return Err(format!("s[{bad}] = {}", r.s[bad]));
    }
    let eps = T::EPS.wide();
    // ‖A‖_F without overflow (f64 entries near 1e300), and every column's and row's norm
    let (_, fro) = driver::finite_max_abs(a, "validity").map_err(|e| e.to_string())?;
    let norm =
        r.s.first()
            .map_or(0.0, |s| s.wide())
            .max(fro / (k.max(1) as f64).sqrt());
    let mut out = Validity {
        u_orth: 0.0,
        v_orth: 0.0,
        residual: 0.0,
        orth_bound: 4.0 * eps * m.max(n).max(TOL_MIN_ROWS) as f64 + 4.0 * eps,
        residual_bound: 10.0 * eps * k.max(1) as f64 * norm + T::min_positive_value().wide(),
        norm,
        value_residual: 0.0,
        value_index: 0,
        value_bound: 10.0 * k.max(TOL_MIN_ROWS) as f64,
    };
    let (u, vt) = match (&r.u, &r.vt) {
        (None, None) => return Ok(out),
        (Some(u), Some(vt)) => (u, vt),
        _ => return Err("only one of U and Vᵀ formed".into()),
    };
    let ucols = u.cols();
    let vrows = vt.rows();
    if u.rows() != m || !(ucols == k || ucols == m) || vt.cols() != n || !(vrows == k || vrows == n)
    {
        return Err(format!(
            "U is {} x {}, Vᵀ is {} x {} for a {m} x {n} matrix",
            u.rows(),
            ucols,
            vrows,
            vt.cols()
        ));
    }
    let alloc = |len: usize, what: &str| {
        crate::alloc::try_zeroed_vec::<f64>(len, || format!("the SVD check's {what}"))
            .map_err(|e| e.to_string())
    };
    // In f64, rows in parallel and every inner loop over contiguous memory: the check must
    // stay cheap beside the SVD itself at n = 4096.
    let mut vf = alloc(vrows * n, "copy of Vᵀ")?;
    vf.par_iter_mut()
        .zip(vt.as_slice().par_iter())
        .for_each(|(x, v)| *x = v.wide());
    // Uᵀ, so that U's columns are contiguous.
    let mut ut = alloc(ucols * m, "copy of Uᵀ")?;
    for (i, row) in u.as_slice().chunks_exact(ucols.max(1)).enumerate().take(m) {
        for (p, v) in row.iter().enumerate() {
            ut[p * m + i] = v.wide();
        }
    }
    out.u_orth = gram_error(&ut, ucols, m, k);
    // V Vᵀ − I, as rows of Vᵀ (Vᵀ's rows are V's columns)
    out.v_orth = gram_error(&vf, vrows, n, k);
    let s: Vec<f64> = r.s.iter().map(|v| v.wide()).collect();
    out.residual = (0..m)
        .into_par_iter()
        .map(|i| {
            let mut x = vec![0.0f64; n];
            for (l, sl) in s.iter().enumerate() {
                let c = ut[l * m + i] * sl;
                for (xj, vj) in x.iter_mut().zip(&vf[l * n..(l + 1) * n]) {
                    *xj += c * vj;
                }
            }
            x.iter()
                .zip(a.row(i))
                .fold(0.0, |e, (xj, aj)| nan_max(e, (xj - aj.wide()).abs()))
        })
        .reduce(|| 0.0, nan_max);
    // Per-value residuals, in the working orientation (columns of A for m ≥ n, of Aᵀ else).
    let (ratio, at) = value_residuals(a, &s, &ut, &vf, eps)?;
    out.value_residual = ratio;
    out.value_index = at;
    Ok(out)
}

/// `max_i ‖A v_i − s_i u_i‖ / (ε (Σ_j ‖A e_j‖ |v_ij| + s_i) + δ)` (`δ`: `T`'s smallest
/// subnormal; `m ≥ n`; else with `Aᵀ`, `u`,
/// `v` and the rows exchanged) and its `i`, for `U`'s columns as rows of `ut` (`m` long) and
/// `Vᵀ`'s rows in `vf` (`n` long). Everything is computed relative to `‖A‖_F`'s power of two
/// (the entries of an f64 matrix may be near 1e300). NaN propagates.
fn value_residuals<T: Scalar>(
    a: DenseView<'_, T>,
    s: &[f64],
    ut: &[f64],
    vf: &[f64],
    eps: f64,
) -> Result<(f64, usize), String> {
    let (m, n) = a.shape();
    let k = s.len();
    if k == 0 {
        return Ok((0.0, 0));
    }
    let (_, fro) = driver::finite_max_abs(a, "validity").map_err(|e| e.to_string())?;
    // The working range (`svd::negligible_gram`, `driver::working_scale`): columns whose norm
    // falls below `tau` (about 2^-119 ‖A‖_F in f32, 2^-1008 ‖A‖_F in f64) cannot have their
    // squares represented and are returned with singular value 0, which may move the values
    // just above it by as much. That absolute part of each residual, up to √k · tau, is the
    // documented range, not an error.
    let tau = negligible_gram::<T>().wide().sqrt() / driver::working_scale::<T>(fro)
        * (s.len() as f64).sqrt();
    // an exact power of two near 1 / ‖A‖_F (A's entries may be near f64's limits)
    let sc = if fro > 1e-300 {
        1.0 / 2f64.powi(fro.log2().ceil() as i32)
    } else {
        1.0
    };
    // x_i = A v_i (m long) for m ≥ n, or Aᵀ u_i (n long); scale_i = Σ_j ‖A e_j‖ |v_ij|
    let tall = m >= n;
    let (len, olen) = if tall { (m, n) } else { (n, m) };
    // the working columns' norms: columns of A (tall) or rows of A
    let mut cn = vec![0.0f64; olen];
    let mut prod =
        crate::alloc::try_zeroed_vec::<f64>(k * len, || "the SVD check's products A V".to_string())
            .map_err(|e| e.to_string())?;
    for i in 0..m {
        let row = a.row(i);
        for (j, v) in row.iter().enumerate() {
            let x = v.wide() * sc;
            if tall {
                cn[j] += x * x;
            } else {
                cn[i] += x * x;
            }
        }
    }
    cn.iter_mut().for_each(|c| *c = c.sqrt());
    // rows of A in parallel would race on prod's columns for the wide case: go by value
    prod.par_chunks_mut(len).enumerate().for_each(|(l, x)| {
        for i in 0..m {
            let row = a.row(i);
            if tall {
                let v = &vf[l * n..(l + 1) * n];
                x[i] = row
                    .iter()
                    .zip(v)
                    .map(|(aij, vj)| aij.wide() * sc * vj)
                    .sum();
            } else {
                let ui = ut[l * m + i];
                for (xj, aij) in x.iter_mut().zip(row) {
                    *xj += aij.wide() * sc * ui;
                }
            }
        }
    });
    let mut worst = (0.0f64, 0usize);
    for l in 0..k {
        let (y, w) = if tall {
            (&ut[l * m..(l + 1) * m], &vf[l * n..(l + 1) * n])
        } else {
            (&vf[l * n..(l + 1) * n], &ut[l * m..(l + 1) * m])
        };
        let sl = s[l] * sc;
        let res = prod[l * len..(l + 1) * len]
            .iter()
            .zip(y)
            .map(|(x, yi)| (x - sl * yi).powi(2))
            .sum::<f64>()
            .sqrt();
        let scale = w.iter().zip(&cn).map(|(wj, c)| wj.abs() * c).sum::<f64>() + sl;
        // The returned s_i is a T: below T's normal range it is a multiple of T's smallest
        // subnormal, so it may be off by half of that whatever the algorithm (a graded
        // f32 matrix down to 1e-43 has such values); that much residual is allowed on top.
        let floor = T::min_positive_value().wide() * eps * sc;
        let res = (res - tau * sc).max(0.0);
        let ratio = if res == 0.0 {
            0.0
        } else {
            res / (eps * scale + floor).max(f64::MIN_POSITIVE)
        };
        if ratio.is_nan() {
            return Ok((f64::NAN, l));
        }
        if ratio > worst.0 {
            worst = (ratio, l);
        }
    }
    Ok(worst)
}

/// `max |X Xᵀ − I|` of the `rows × len` row-major `x`, rows in parallel; NaN propagates.
/// Every entry in the first `exact` rows of `X Xᵀ` (`O(exact · rows · len)`); among the other
/// rows (a full factor's completion) [`ORTH_PROBES`] random-sign probes `z = (X_c X_cᵀ − I) s`
/// (`O(rows · len)` each), `max |z_p|`: for any `E = X_c X_cᵀ − I`, `E[z_p²] = Σ_q E_pq² ≥
/// max_q E_pq²`, so one entry out of bound anywhere shows in every probe, while rounding
/// noise of `ε` per entry gives about `ε √rows`, inside the `4 ε rows` bound.
fn gram_error(x: &[f64], rows: usize, len: usize, exact: usize) -> f64 {
    let exact = exact.min(rows);
    let dot = |p: usize, q: usize| -> f64 {
        x[p * len..(p + 1) * len]
            .iter()
            .zip(&x[q * len..(q + 1) * len])
            .map(|(a, b)| a * b)
            .sum()
    };
    let head = (0..exact)
        .into_par_iter()
        .map(|p| {
            (p..rows).fold(0.0, |e, q| {
                nan_max(e, (dot(p, q) - if p == q { 1.0 } else { 0.0 }).abs())
            })
        })
        .reduce(|| 0.0, nan_max);
    let rest = rows - exact;
    if rest == 0 {
        return head;
    }
    if rest <= ORTH_PROBES {
        let tail = (exact..rows)
            .flat_map(|p| (p..rows).map(move |q| (p, q)))
            .fold(0.0, |e, (p, q)| {
                nan_max(e, (dot(p, q) - if p == q { 1.0 } else { 0.0 }).abs())
            });
        return nan_max(head, tail);
    }
    let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
    let mut worst = head;
    for _ in 0..ORTH_PROBES {
        let sign: Vec<f64> = (0..rest)
            .map(|_| if next() >> 63 == 0 { 1.0 } else { -1.0 })
            .collect();
        // y = X_cᵀ s (len long), then z_p = X_p · y − s_p
        let y = (0..rest)
            .into_par_iter()
            .fold(
                || vec![0.0f64; len],
                |mut y, t| {
                    let xp = &x[(exact + t) * len..(exact + t + 1) * len];
                    for (yi, xi) in y.iter_mut().zip(xp) {
                        *yi += sign[t] * xi;
                    }
                    y
                },
            )
            .reduce(
                || vec![0.0f64; len],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let z = (0..rest)
            .into_par_iter()
            .map(|t| {
                let xp = &x[(exact + t) * len..(exact + t + 1) * len];
                let d: f64 = xp.iter().zip(&y).map(|(a, b)| a * b).sum();
                (d - sign[t]).abs()
            })
            .reduce(|| 0.0, nan_max);
        worst = nan_max(worst, z);
    }
    worst
}

/// `max` that propagates NaN.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The QR accuracy contract: `max |QᵀQ − I| ≤ 4 ε max(m, n)` (+ 4ε), `max |Q R − A| ≤ 10 ε
/// max(m, n) ‖A‖_F`, `R` exactly zero below its diagonal, and, with or without `Q`,
/// `|(RᵀR − AᵀA)_ij| ≤ 10 ε max(m, n) ‖a_i‖ ‖a_j‖`. Returns the two errors.
pub fn qr_validity<T: Scalar>(a: DenseView<'_, T>, f: &QrFactors<T>) -> Result<(f64, f64), String> {
    let (m, n) = a.shape();
    let k = m.min(n);
    let r = &f.r;
    if r.cols() != n || !(r.rows() == k || r.rows() == m) {
        return Err(format!(
            "R is {} x {} for a {m} x {n} matrix",
            r.rows(),
            r.cols()
        ));
    }
    for i in 0..r.rows() {
        for j in 0..i.min(n) {
            if r.get(i, j) != T::zero() {
                return Err(format!("R({i}, {j}) = {} below the diagonal", r.get(i, j)));
            }
        }
    }
    // R on its own: RᵀR = AᵀA (Q orthogonal), entry (i, j) within 10 ε max(m, n) ‖a_i‖ ‖a_j‖
    // (the column-scaled backward error of Householder and Givens QR), in f64: O(m n²),
    // the cost of the factorisation. Sees a wrong R even when Q is not formed.
    let eps = T::EPS.wide();
    let cn: Vec<f64> = (0..n)
        .map(|j| {
            (0..m)
                .map(|i| a.get(i, j).wide().powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    let rb = 10.0 * eps * m.max(n).max(1) as f64;
    for i in 0..n {
        for j in i..n {
            let ata: f64 = (0..m)
                .map(|l| a.get(l, i).wide() * a.get(l, j).wide())
                .sum();
            let rtr: f64 = (0..r.rows())
                .map(|l| r.get(l, i).wide() * r.get(l, j).wide())
                .sum();
            let bound = rb * cn[i] * cn[j] + T::min_positive_value().wide();
            if (rtr - ata).abs().is_nan() || (rtr - ata).abs() > bound {
                return Err(format!(
                    "(RᵀR)({i}, {j}) = {rtr:e}, (AᵀA)({i}, {j}) = {ata:e} (bound {bound:.2e})"
                ));
            }
        }
    }
    let Some(q) = &f.q else {
        return Ok((0.0, 0.0));
    };
    if q.rows() != m || q.cols() != r.rows() {
        return Err(format!(
            "Q is {} x {} with R {} x {}",
            q.rows(),
            q.cols(),
            r.rows(),
            n
        ));
    }
    let qc = q.cols();
    let mut orth = 0.0f64;
    for p in 0..qc {
        for s in p..qc {
            let d: f64 = (0..m)
                .map(|i| q.get(i, p).wide() * q.get(i, s).wide())
                .sum();
            orth = nan_max(orth, (d - if p == s { 1.0 } else { 0.0 }).abs());
        }
    }
    let fro = (0..m)
        .flat_map(|i| a.row(i).iter())
        .map(|v| v.wide().powi(2))
        .sum::<f64>()
        .sqrt();
    let mut res = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let x: f64 = (0..qc)
                .map(|l| q.get(i, l).wide() * r.get(l, j).wide())
                .sum();
            res = nan_max(res, (x - a.get(i, j).wide()).abs());
        }
    }
    let ob = 4.0 * eps * m.max(n) as f64 + 4.0 * eps;
    let rb = 10.0 * eps * m.max(n).max(1) as f64 * fro + T::min_positive_value().wide();
    if orth.is_finite() && orth <= ob && res.is_finite() && res <= rb {
        Ok((orth, res))
    } else {
        Err(format!(
            "QR not valid: max|QᵀQ−I| {orth:.2e} (bound {ob:.2e}), max|QR−A| {res:.2e} (bound {rb:.2e})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::Dense;
    use crate::svd::SvdPrecondition;

    /// `[[H, 0], [0, B]]` (B 5 × 3 of order one, H = 1e15) with its exact SVD built from
    /// nalgebra's of B; returns the matrix and the result.
    fn block_case() -> (Dense<f64>, SvdResult<f64>) {
        let (m, n, h) = (6usize, 4usize, 1e15);
        let b = Dense::from_fn(5, 3, |i, j| {
            ((i * 7 + j * 3) % 5) as f64 - 2.0 + 0.1 * j as f64
        });
        let bs = b.to_nalgebra().svd(true, true);
        let (bu, bvt) = (bs.u.unwrap(), bs.v_t.unwrap());
        let a = Dense::from_fn(m, n, |i, j| match (i, j) {
            (0, 0) => h,
            (0, _) | (_, 0) => 0.0,
            _ => b.get(i - 1, j - 1),
        });
        let mut s = vec![h];
        s.extend(bs.singular_values.iter());
        let u = Dense::from_fn(m, n, |i, l| match (i, l) {
            (0, 0) => 1.0,
            (0, _) | (_, 0) => 0.0,
            _ => bu[(i - 1, l - 1)],
        });
        let vt = Dense::from_fn(n, n, |l, j| match (l, j) {
            (0, 0) => 1.0,
            (0, _) | (_, 0) => 0.0,
            _ => bvt[(l - 1, j - 1)],
        });
        let r = SvdResult {
            s,
            u: Some(u),
            vt: Some(vt),
            sweeps: 1,
            off: 0.0,
            converged: true,
            precondition: SvdPrecondition::None,
            tol: 1e-15,
            phases: Vec::new(),
        };
        (a, r)
    }

    #[test]
    fn validity_sees_small_singular_values_returned_as_zero() {
        let (a, good) = block_case();
        let v = validity(a.view(), &good).unwrap();
        v.check().unwrap();
        // σ₂… = 0, as the absolute thresholds once gave: U Σ Vᵀ − A is B, within the
        // absolute bound 10 ε k ‖A‖ (about 2.7 here), but every small value's own residual
        // is σ_i against a scale of ε σ_i.
        let mut bad = good.clone();
        bad.s[1..].fill(0.0);
        let v = validity(a.view(), &bad).unwrap();
        assert!(v.residual <= v.residual_bound, "{v}");
        assert!(v.check().is_err(), "{v}");
        assert!(v.value_residual > 1e10 && v.value_index >= 1, "{v}");
        // a small value 1% off
        let mut off = good;
        off.s[2] *= 1.01;
        assert!(validity(a.view(), &off).unwrap().check().is_err());
    }

    #[test]
    fn full_factor_orthogonality_is_sampled_yet_sees_a_bad_column() {
        // 200 x 200 identity as a "full U" with two columns (not among the first k = 1)
        // bent: the probes see it.
        let x: Vec<f64> = (0..200 * 200)
            .map(|p| if p / 200 == p % 200 { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(gram_error(&x, 200, 200, 1), 0.0);
        let mut y = x.clone();
        y[137 * 200 + 137] = 1.001; // its own norm: only a sampled or exact row sees it
        y[137 * 200 + 3] = 0.01;
        let e = gram_error(&y, 200, 200, 1);
        assert!(e > 1e-3, "{e}");
    }

    #[test]
    fn qr_validity_checks_r_without_q() {
        let a = Dense::from_vec(3, 2, vec![2.0f64, 1.0, 0.0, 3.0, 0.0, 0.0]).unwrap();
        let r = |v: Vec<f64>| QrFactors {
            q: None,
            r: Dense::from_vec(2, 2, v).unwrap(),
        };
        assert!(qr_validity(a.view(), &r(vec![2.0, 1.0, 0.0, 3.0])).is_ok());
        // a row's sign is free
        assert!(qr_validity(a.view(), &r(vec![-2.0, -1.0, 0.0, 3.0])).is_ok());
        // triangular, but not A's R
        assert!(qr_validity(a.view(), &r(vec![2.0, 1.0, 0.0, 3.001])).is_err());
        assert!(qr_validity(a.view(), &r(vec![2.0, 1.5, 0.0, 3.0])).is_err());
    }
}

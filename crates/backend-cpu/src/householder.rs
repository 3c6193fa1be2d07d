//! Blocked Householder QR on column-major `Vec`s: the CPU's [`QrOrder::Householder`], its
//! [`QrOrder::Auto`] (the SVD's preconditioning QR and [`trident_core::Qr`]).
//!
//! Panels of [`NB`] columns are reduced column by column (reflector `H = I − τ v vᵀ`, `v₀ =
//! 1`), their reflectors gathered in the compact WY form `H₁ ⋯ H_k = I − V T Vᵀ` (`T` upper
//! triangular), and the trailing columns updated by three `gemm`s, `A₂ ← A₂ − V Tᵀ (Vᵀ A₂)`.
//! Applying `Q = H₁ ⋯ H_K` takes the panels in reverse, `q ← q − V T (Vᵀ q)`. The same
//! factorization as the Givens sequence up to the signs of `R`'s rows (`Q R` is the same
//! product), at `gemm` speed: the Givens rotations apply `4 m n²` scalar flops with no
//! reuse.
//!
//! [`QrOrder::Householder`]: trident_core::svd::QrOrder::Householder
//! [`QrOrder::Auto`]: trident_core::svd::QrOrder::Auto

use ndarray::LinalgScalar;
use trident_core::Scalar;

use crate::gemm::gemm_cm;

/// Columns per panel.
const NB: usize = 32;

/// The reflectors of one panel: columns `j0 .. j0 + k`, `V` stored as `(m − j0) × k`
/// column-major (unit diagonal and zeros above it explicit), `T` `k × k` column-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel<T> {
    j0: usize,
    k: usize,
    v: Vec<T>,
    t: Vec<T>,
}

/// The Householder factorization's `Q` (rows `m`).
#[derive(Debug, Clone, PartialEq)]
pub struct House<T> {
    m: usize,
    panels: Vec<Panel<T>>,
}

/// The reflector that maps `x` to `β e₁`: returns `(τ, β)` and overwrites `x[1..]` with `v[1..]`
/// (`v₀ = 1`); `τ = 0` (`H = I`) when `x[1..]` is zero. Everything is computed from `x /
/// max|x|`, so that `τ` and `v` agree (`H` orthogonal) even for tiny and subnormal columns,
/// whose own products would underflow or be quantised.
fn reflector<T: Scalar>(x: &mut [T]) -> (T, T) {
    let tail = x[1..].iter().fold(T::zero(), |a, v| a.max(v.abs()));
    if tail == T::zero() || tail.is_nan() {
        return (T::zero(), x[0]);
    }
    let scale = tail.max(x[0].abs());
    for v in x.iter_mut() {
        *v /= scale;
    }
    let alpha = x[0];
    let norm = x.iter().fold(T::zero(), |a, v| a + *v * *v).sqrt();
    let beta = if alpha >= T::zero() { -norm } else { norm };
    let tau = (beta - alpha) / beta;
    let d = alpha - beta;
    for v in &mut x[1..] {
        *v /= d;
    }
    (tau, beta * scale)
}

/// `a ← Q_panelᵀ a` (`transpose`) or `a ← Q_panel a` for the `rows × cols` column-major
/// block `a` (leading dimension `lda`) of rows `j0 ..` of the matrix.
fn apply_panel<T: Scalar + LinalgScalar>(
    p: &Panel<T>,
    a: &mut [T],
    lda: usize,
    cols: usize,
    transpose: bool,
) {
    let rows = p.v.len() / p.k;
    if cols == 0 || rows == 0 {
        return;
    }
    // W = Vᵀ a (k × cols); W ← T W or Tᵀ W; a ← a − V W
    let mut w = vec![T::zero(); p.k * cols];
    gemm_cm((p.k, cols, rows), &p.v, rows, true, a, lda, &mut w, p.k);
    let mut tw = vec![T::zero(); p.k * cols];
    gemm_cm(
        (p.k, cols, p.k),
        &p.t,
        p.k,
        transpose,
        &w,
        p.k,
        &mut tw,
        p.k,
    );
    let mut vw = vec![T::zero(); rows * cols];
    gemm_cm(
        (rows, cols, p.k),
        &p.v,
        rows,
        false,
        &tw,
        p.k,
        &mut vw,
        rows,
    );
    for c in 0..cols {
        for (x, d) in a[c * lda..c * lda + rows].iter_mut().zip(&vw[c * rows..]) {
            *x -= *d;
        }
    }
}

/// Householder QR of the `m × n` column-major `a` in place: `a` becomes `R` (exact zeros
/// below the diagonal); the first `steps = min(m − 1, n)` columns are reduced.
pub fn qr<T: Scalar + LinalgScalar>(a: &mut [T], m: usize, n: usize) -> House<T> {
    let steps = m.saturating_sub(1).min(n);
    let mut panels = Vec::new();
    let mut j0 = 0;
    while j0 < steps {
        let k = NB.min(steps - j0);
        let rows = m - j0;
        let mut v = vec![T::zero(); rows * k];
        let mut tau = vec![T::zero(); k];
        for jl in 0..k {
            let j = j0 + jl;
            let col = &mut a[j * m + j..(j + 1) * m];
            let (t, beta) = reflector(col);
            tau[jl] = t;
            // v: zeros above, 1 on the diagonal, the tail below; R's column gets β and zeros
            let vc = &mut v[jl * rows..(jl + 1) * rows];
            vc[jl] = T::one();
            vc[jl + 1..].copy_from_slice(&col[1..]);
            col[0] = beta;
            col[1..].fill(T::zero());
            if t == T::zero() {
                continue;
            }
            // the panel's later columns: c ← c − τ v (vᵀ c)
            let vt = &v[jl * rows + jl..(jl + 1) * rows];
            for c in j + 1..j0 + k {
                let cc = &mut a[c * m + j..(c + 1) * m];
                let d = vt
                    .iter()
                    .zip(cc.iter())
                    .fold(T::zero(), |s, (x, y)| s + *x * *y)
                    * t;
                for (y, x) in cc.iter_mut().zip(vt) {
                    *y -= d * *x;
                }
            }
        }
        // T: T[i][i] = τ_i, T[0..i, i] = −τ_i T[0..i, 0..i] (V[:, 0..i]ᵀ v_i)
        let mut t = vec![T::zero(); k * k];
        for i in 0..k {
            t[i * k + i] = tau[i];
            if i == 0 || tau[i] == T::zero() {
                continue;
            }
            let vi = &v[i * rows..(i + 1) * rows];
            let z: Vec<T> = (0..i)
                .map(|l| {
                    v[l * rows..(l + 1) * rows]
                        .iter()
                        .zip(vi)
                        .skip(i)
                        .fold(T::zero(), |s, (x, y)| s + *x * *y)
                })
                .collect();
            for r in 0..i {
                let s = (r..i).fold(T::zero(), |s, l| s + t[l * k + r] * z[l]);
                t[i * k + r] = -tau[i] * s;
            }
        }
        let panel = Panel { j0, k, v, t };
        // trailing columns: A₂ ← Hᵀ A₂ = (I − V Tᵀ Vᵀ) A₂
        let c0 = j0 + k;
        if c0 < n {
            let (_, a2) = a.split_at_mut(c0 * m);
            apply_panel(&panel, &mut a2[j0..], m, n - c0, true);
        }
        panels.push(panel);
        j0 += k;
    }
    House { m, panels }
}

/// `q ← Q q` for the `m × cols` column-major `q`.
pub fn apply_q<T: Scalar + LinalgScalar>(h: &House<T>, q: &mut [T], cols: usize) {
    let m = h.m;
    // the rows a panel touches that are zero in every column need not be rotated: skip the
    // panel while its rows are all zero (the driver's identity and zero-padded matrices)
    let mut last = (0..cols)
        .filter_map(|c| q[c * m..(c + 1) * m].iter().rposition(|x| *x != T::zero()))
        .max();
    for p in h.panels.iter().rev() {
        match last {
            Some(l) if l >= p.j0 => {}
            _ => continue,
        }
        apply_panel(p, &mut q[p.j0..], m, cols, false);
        last = Some(m - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product<T: Scalar + LinalgScalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T]) -> Vec<T> {
        let mut c = vec![T::zero(); m * n];
        gemm_cm((m, n, k), a, m, false, b, k, &mut c, m);
        c
    }

    #[test]
    fn q_r_reproduces_a_and_q_is_orthogonal() {
        check::<f64>(1e-300);
        check::<f32>(1e-40);
    }

    fn check<T: Scalar + LinalgScalar>(tiny: f64) {
        let tol = 100.0 * T::EPS.to_f64();
        for &(m, n) in &[
            (1, 1),
            (5, 3),
            (3, 5),
            (39, 23),
            (70, 40),
            (40, 70),
            (100, 33),
            (64, 64),
        ] {
            let mut unit = trident_core::testing::unit_stream(0x1234_5678_9abc_def1);
            let mut a: Vec<T> = (0..m * n).map(|_| T::from_f64(unit())).collect();
            // a repeated column (rank-deficient) and a tiny one
            if n > 3 {
                let (c0, rest) = a.split_at_mut(m);
                rest[m..2 * m].copy_from_slice(c0);
                for v in &mut rest[..m] {
                    *v = T::from_f64(v.to_f64() * tiny); // subnormal
                }
                // every third column repeats the first (the conformance suite's pattern)
                for j in (3..n).step_by(3) {
                    let (c0, rest) = a.split_at_mut(m);
                    rest[(j - 1) * m..j * m].copy_from_slice(c0);
                }
            }
            let orig = a.clone();
            let h = qr(&mut a, m, n);
            for j in 0..n {
                for i in j + 1..m {
                    assert_eq!(a[j * m + i], T::zero(), "{m}x{n}: R({i},{j})");
                }
            }
            let mut q = vec![T::zero(); m * m];
            for i in 0..m {
                q[i * m + i] = T::one();
            }
            apply_q(&h, &mut q, m);
            let qr_ = product(m, n, m, &q, &a);
            for (u, v) in qr_.iter().zip(&orig) {
                assert!((*u - *v).abs().to_f64() < tol, "{m}x{n}: QR {u} vs A {v}");
            }
            let mut qtq = vec![T::zero(); m * m];
            gemm_cm((m, m, m), &q, m, true, &q, m, &mut qtq, m);
            for i in 0..m {
                for j in 0..m {
                    let e = qtq[j * m + i].to_f64() - (i == j) as u8 as f64;
                    assert!(
                        e.abs() < tol,
                        "{m}x{n} {}: QᵀQ({i},{j}) off by {e}",
                        T::NAME
                    );
                }
            }
        }
    }
}

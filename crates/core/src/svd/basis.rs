//! Completing an orthonormal basis: the columns that rank-deficient SVDs and full `U`s need
//! beyond the computed ones.

/// Given `r` orthonormal columns of length `m` (column-major, `known.len() == m · r`), returns
/// `want ≤ m − r` further columns (column-major, `m · want` values) such that all `r + want`
/// are orthonormal to working precision: the columns `r, r + 1, …` of the Householder `Q` of
/// the known columns, in f64. Cost `O(m · r · (r + want))`.
pub fn complete(m: usize, known: &[f64], want: usize) -> crate::error::Result<Vec<f64>> {
    let r = known.len().checked_div(m).unwrap_or(0);
    assert!(
        r + want <= m,
        "cannot complete {r} + {want} columns in dimension {m}"
    );
    if want == 0 {
        // Nothing to add: no Householder QR of the known columns (2 m r² flops on the host,
        // over a second for a thin 32768 x 256 U, which every thin SVD used to pay).
        return Ok(Vec::new());
    }
    // Householder QR of the known columns: reflector k is I − 2 v vᵀ / (vᵀ v), v zero above k.
    let mut a = known.to_vec();
    let mut reflectors: Vec<Vec<f64>> = Vec::with_capacity(r);
    for k in 0..r {
        let col = &a[k * m..(k + 1) * m];
        let norm = col[k..].iter().map(|x| x * x).sum::<f64>().sqrt();
        let mut v = vec![0.0; m];
        v[k..].copy_from_slice(&col[k..]);
        let alpha = if col[k] >= 0.0 { -norm } else { norm };
        v[k] -= alpha;
        let vv: f64 = v[k..].iter().map(|x| x * x).sum();
        if vv > 0.0 {
            for j in k..r {
                let c = &mut a[j * m..(j + 1) * m];
                let d: f64 = (k..m).map(|i| v[i] * c[i]).sum::<f64>() * 2.0 / vv;
                for i in k..m {
                    c[i] -= d * v[i];
                }
            }
        }
        reflectors.push(v);
    }
    let len = m.saturating_mul(want);
    let mut out = crate::alloc::try_zeroed_vec::<f64>(len, || {
        format!("{want} completing columns of {m} (f64)")
    })?;
    for t in 0..want {
        let e = &mut out[t * m..(t + 1) * m];
        e[r + t] = 1.0;
        for (k, v) in reflectors.iter().enumerate().rev() {
            let vv: f64 = v[k..].iter().map(|x| x * x).sum();
            if vv > 0.0 {
                let d: f64 = (k..m).map(|i| v[i] * e[i]).sum::<f64>() * 2.0 / vv;
                for i in k..m {
                    e[i] -= d * v[i];
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_to_orthonormal() {
        let m = 5;
        // two orthonormal columns
        let s = 0.5f64.sqrt();
        let known = vec![s, s, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let extra = complete(m, &known, 3).unwrap();
        let mut all = known.clone();
        all.extend_from_slice(&extra);
        for p in 0..5 {
            for q in 0..5 {
                let d: f64 = (0..m).map(|i| all[p * m + i] * all[q * m + i]).sum();
                let want = if p == q { 1.0 } else { 0.0 };
                assert!((d - want).abs() < 1e-14, "({p}, {q}): {d}");
            }
        }
        assert_eq!(complete(3, &[], 3).unwrap().len(), 9);
        assert!(complete(m, &known, 0).unwrap().is_empty());
    }
}

//! The real matrices of `shared/data/matrices`: Hilbert singular values to 40 digits, and
//! SuiteSparse matrices against LAPACK.

use super::*;

/// Reads a reference list of singular values (one per line, `#` comments).
pub(super) fn read_values(path: &std::path::Path) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.parse::<f64>()
                .map_err(|e| format!("{}: {l:?}: {e}", path.display()))
        })
        .collect()
}

/// Hilbert matrices `H_N`, N = 4 … 12 in f64, against their singular values to 40 digits.
///
/// Tolerance: `|s_i − σ_i| ≤ 64 · N · ε · σ_i + 8 · N · ε · σ_0`, i.e. high relative accuracy
/// for every singular value down to ~`8 ε σ_0`, the absolute backward-error floor below.
/// (Rounding `H` to f64 already moves its smallest singular values by up to
/// `ε ‖H‖`: no algorithm working from the rounded matrix can do better.)
pub(super) fn hilbert<B: Svd<f64>>(b: &B) -> Result<(), String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(());
    };
    let eps = f64::EPSILON;
    for nn in [4usize, 6, 8, 10, 12] {
        let want = read_values(
            &dir.join("matrices")
                .join(format!("hilbert_{nn}_singular_values_mp60.txt")),
        )?;
        let h = Dense::from_fn(nn, nn, |i, j| 1.0 / (i + j + 1) as f64);
        for pre in [
            SvdPrecondition::None,
            SvdPrecondition::Qr,
            SvdPrecondition::QrLq,
        ] {
            let opts = SvdOptions {
                precondition: Some(pre),
                vectors: Vectors::Thin,
                ..SvdOptions::default()
            };
            let r = b.svd(h.view(), &opts).map_err(|e| e.to_string())?;
            svd::validity(h.view(), &r)?.check()?;
            for (i, (got, w)) in r.s.iter().zip(&want).enumerate() {
                let bound = 64.0 * nn as f64 * eps * w + 8.0 * nn as f64 * eps * want[0];
                if (got - w).abs() > bound || got.is_nan() {
                    return Err(format!(
                        "H_{nn} ({pre:?}) s[{i}] = {got:e}, expected {w:e}: relative error {:.2e} (bound {:.2e})",
                        ((got - w) / w).abs(),
                        bound / w
                    ));
                }
            }
        }
    }
    Ok(())
}

/// SuiteSparse matrices (west0067, lp_afiro, LFAT5) against LAPACK's singular values, within
/// [`svd::values_tolerance`] of `T` (the LAPACK values are f64).
pub(super) fn suitesparse<T: Scalar, B: Svd<T>>(b: &B) -> Result<(), String> {
    let Some(dir) = crate::testing::data_dir_or_skip() else {
        return Ok(());
    };
    for name in ["west0067", "lp_afiro", "LFAT5"] {
        let dir = dir.join("matrices");
        let a: Dense<f64> = crate::io::mtx::read_dense(dir.join(format!("{name}.mtx")))
            .map_err(|e| e.to_string())?;
        let want = read_values(&dir.join(format!("{name}_singular_values_lapack.txt")))?;
        let (m, n) = a.shape();
        let opts = SvdOptions {
            vectors: Vectors::Thin,
            ..SvdOptions::default()
        };
        let r =
            check_one::<T, B>(b, m, n, a.as_slice(), &opts).map_err(|e| format!("{name}: {e}"))?;
        if r.s.len() != want.len() {
            return Err(format!(
                "{name}: {} values, LAPACK has {}",
                r.s.len(),
                want.len()
            ));
        }
        // LAPACK's values are of the f64 matrix; the f32 input is rounded: allow ε_T ‖A‖ more.
        let tol = svd::values_tolerance::<T>(m, n);
        for (i, (got, w)) in r.s.iter().zip(&want).enumerate() {
            tol.check(Scalar::to_f64(*got), *w, want[0])
                .map_err(|e| format!("{name} s[{i}]: {e}"))?;
        }
    }
    Ok(())
}

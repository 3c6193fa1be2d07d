//! [`Tolerance`]: the one error-bound type that every algorithm's accuracy contract is
//! expressed in, and that the conformance suite, the benchmarks and the CLI check with.

use crate::scalar::Scalar;

/// An error bound `|got − expected| ≤ factor · ε · scale + floor`, where `ε` is the unit
/// roundoff of the element type, `scale` the magnitude of the computation (e.g. `Σ |a_ik
/// x_k|`, or `‖A‖·‖B‖`) and `floor` absorbs underflow. NaN or infinity never passes unless
/// both sides are the same infinity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Machine epsilon of the element type.
    pub eps: f64,
    /// Multiple of `eps · scale` allowed.
    pub factor: f64,
    /// Absolute slack (default: the smallest normal number of the type).
    pub floor: f64,
}

impl Tolerance {
    /// `factor · ε_T · scale + min_positive_T`.
    pub fn of<T: Scalar>(factor: f64) -> Self {
        Self {
            eps: T::EPS.to_f64(),
            factor,
            floor: T::min_positive_value().to_f64(),
        }
    }

    /// The same bound with another absolute slack.
    pub fn with_floor(self, floor: f64) -> Self {
        Self { floor, ..self }
    }

    /// The allowed error for a computation of magnitude `scale`.
    pub fn bound(&self, scale: f64) -> f64 {
        self.factor * self.eps * scale.abs() + self.floor
    }

    /// `Ok` if `got` is within [`Self::bound`]`(scale)` of `expected`; otherwise a message
    /// with both values, the error and the bound.
    pub fn check(&self, got: f64, expected: f64, scale: f64) -> Result<(), String> {
        if got == expected {
            return Ok(());
        }
        let err = (got - expected).abs();
        let bound = self.bound(scale);
        if err.is_finite() && err <= bound {
            Ok(())
        } else {
            Err(format!(
                "got {got:e}, expected {expected:e} (|error| {err:e} > tolerance {bound:e})"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_and_inf_never_pass() {
        let t = Tolerance::of::<f32>(1e9);
        assert!(t.check(f64::NAN, 1.0, 1.0).is_err());
        assert!(t.check(1.0, f64::NAN, 1.0).is_err());
        assert!(t.check(f64::INFINITY, 1.0, 1.0).is_err());
        assert!(t.check(f64::INFINITY, f64::INFINITY, 1.0).is_ok());
        assert!(t.check(1.0 + 1e-7, 1.0, 1.0).is_ok());
        assert!(Tolerance::of::<f64>(4.0)
            .check(1.0 + 1e-7, 1.0, 1.0)
            .is_err());
    }
}

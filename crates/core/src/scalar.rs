//! Element types: the floating-point [`Scalar`]s (f32, f64) and the integer [`Index`] types.

use std::fmt::{Debug, Display};
use std::iter::Sum;

use crate::error::{Error, Result};

/// A real floating-point element type: `f32` or `f64`.
///
/// Sealed: backends compile one kernel per scalar type, so the set is closed.
pub trait Scalar:
    num_traits::Float
    + num_traits::NumAssign
    + Sum
    + Copy
    + Default
    + Debug
    + Display
    + Send
    + Sync
    + nalgebra::Scalar
    + DeviceElem
    + sealed::Sealed
    + 'static
{
    /// `"f32"` or `"f64"`; kernels are named `<kernel>_<NAME>`.
    const NAME: &'static str;
    /// Machine epsilon.
    const EPS: Self;
    /// Lossy conversion from f64.
    fn from_f64(v: f64) -> Self;
    /// Lossless widening to f64.
    fn to_f64(self) -> f64;
}

impl Scalar for f32 {
    const NAME: &'static str = "f32";
    const EPS: Self = f32::EPSILON;
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Scalar for f64 {
    const NAME: &'static str = "f64";
    const EPS: Self = f64::EPSILON;
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}

/// An unsigned index type for sparse formats (`u32`, `u64` or `usize`).
///
/// GPU kernels use `u32`, which halves index traffic; conversions into a narrower index
/// type fail with [`Error::IndexOverflow`] instead of truncating.
pub trait Index:
    Copy + Default + Ord + Debug + Display + Send + Sync + std::hash::Hash + sealed::Sealed + 'static
{
    /// `"u32"`, `"u64"` or `"usize"`.
    const NAME: &'static str;
    /// Largest representable value as usize (saturating).
    const MAX_USIZE: usize;
    /// Checked conversion from usize.
    fn try_from_usize(v: usize) -> Result<Self>;
    /// Widening conversion to usize (indices are always produced from in-range usizes).
    fn to_usize(self) -> usize;
}

macro_rules! impl_index {
    ($t:ty) => {
        impl Index for $t {
            const NAME: &'static str = stringify!($t);
            const MAX_USIZE: usize = if (<$t>::MAX as u128) > (usize::MAX as u128) {
                usize::MAX
            } else {
                <$t>::MAX as usize
            };
            #[inline]
            fn try_from_usize(v: usize) -> Result<Self> {
                <$t>::try_from(v).map_err(|_| Error::IndexOverflow {
                    value: v as u128,
                    index_type: stringify!($t),
                })
            }
            #[inline]
            fn to_usize(self) -> usize {
                self as usize
            }
        }
    };
}
impl_index!(u32);
impl_index!(u64);
impl_index!(usize);

/// The element types of device buffers ([`crate::device::Buf`]): plain numbers of any bit
/// pattern (sealed), copied to and from the device as bytes.
pub trait DeviceElem: bytemuck::Pod + Send + Sync + elem_sealed::Sealed {}

mod elem_sealed {
    pub trait Sealed {}
}

macro_rules! device_elems {
    ($($t:ty),*) => {$(
        impl elem_sealed::Sealed for $t {}
        impl DeviceElem for $t {}
    )*};
}
device_elems!(u32, u64, i32, i64, f32, f64);

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for usize {}
}

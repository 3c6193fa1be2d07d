//! The OpenCL C sources, embedded at compile time from `kernels/opencl/` (one constant per
//! `.cl` file) and built for each [`crate::OpenCl`] when it is created.

/// One OpenCL C source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// Path in the repository; build errors name it, with the line, in their message.
    pub file: &'static str,
    /// The OpenCL C text.
    pub text: &'static str,
}

/// `kernels/opencl/spmv.cl`: ELLPACK-R SpMV `y = A x`, one work-item per row. Built once per
/// precision with `-D REAL=float -D SUFFIX=f32` (kernel `spmv_ellr_f32`) and
/// `-D REAL=double -D SUFFIX=f64 -D TRIDENT_FP64` (kernel `spmv_ellr_f64`).
pub const SPMV: Source = Source {
    file: "kernels/opencl/spmv.cl",
    text: include_str!("../../../kernels/opencl/spmv.cl"),
};

/// Every embedded source.
pub const ALL: &[Source] = &[SPMV];

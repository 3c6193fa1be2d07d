// Reductions over device vectors: the one home of the small scans that several algorithms'
// host code asks of a device (trident_core::reduce).
//
// One source for OpenCL and CUDA (the dialect: kernels/common/dialect.h; the CUDA build:
// kernels/cuda/reduce.cu), built per precision: REAL = float, SUFFIX = f32 and REAL = double,
// SUFFIX = f64, TRIDENT_FP64.
//
//   any_nonfinite(ulong n, const T *v, uint *flag)
//       sets flag[0] to a nonzero value if one of v[0 .. n) is NaN or ±∞, and leaves it
//       alone otherwise (the host zeroes it first). Each item strides over the vector
//       (1-D work-groups of at most REDUCE_WG items, any 1-D global size), reading every
//       element once with the streaming hint, and only items that saw a non-finite value
//       touch the flag (an atomic or). matmul's gemm asks it before a Strassen-type schedule
//       (trident_core::matmul::MatMul::all_finite).

#if !defined(REAL) || !defined(SUFFIX)
#error "build reduce.cl with REAL = float|double and SUFFIX = f32|f64"
#endif

#define REDUCE_WG 256

__kernel KERNEL_WG_MAX(REDUCE_WG) void TRIDENT_CAT(any_nonfinite_, SUFFIX)(
    const ulong n, __global const REAL *restrict v, __global uint *restrict flag)
{
    const ulong stride = get_global_size(0);
    uint bad = 0;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        bad |= !isfinite(LOAD_STREAM(v + i));
    }
    if (bad) {
        atomic_or(flag, 1u);
    }
}

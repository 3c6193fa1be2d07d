// ELLPACK-R sparse matrix-vector product, y = A x.
//
// One source for both precisions: the host builds this file once per scalar type, with
//   -D REAL=float  -D SUFFIX=f32                  -> kernel spmv_ellr_f32
//   -D REAL=double -D SUFFIX=f64 -D TRIDENT_FP64  -> kernel spmv_ellr_f64
// (the f64 build only on devices that report cl_khr_fp64).
//
// Layout (see trident_core::ellpack): entry k of row i is at k * rows + i, so the work-items
// of a work-group (one per row, consecutive rows) read consecutive addresses: coalesced loads
// of values and col_idx. rl[i] is the length of row i; padding beyond it is never read.
//
// Slot passes (as in kernels/cuda/spmv.cu): one launch handles the slots
// k_begin <= k < k_end of every row, adding to y when `accumulate` is nonzero and overwriting
// it otherwise. The host (trident_core::spmv::plan_slot_passes) splits the width into
// several passes when x is much larger than the device's global memory cache: columns are
// sorted within each row, so slot k of random rows concentrates in one part of x, and each
// pass gathers from a cache-sized part instead of all of x. A single pass is [0, width) with
// accumulate = 0; passes run in order on the host's in-order queue.
//
// Kernel arguments (spmv_ellr_f32: T = REAL = float, spmv_ellr_f64: T = REAL = double; uint = unsigned int;
// the same in kernels/cuda/spmv.cu and kernels/opencl/spmv.cl, and the host code must match):
//   uint rows, uint k_begin, uint k_end, uint accumulate,
//   const T *values, const uint *col_idx, const uint *rl, const T *x, T *y
//
// Index arithmetic is 64-bit (ulong), so rows * width may exceed 2^32.

#ifdef TRIDENT_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if !defined(REAL) || !defined(SUFFIX)
#error "build spmv.cl with -D REAL=float|double -D SUFFIX=f32|f64"
#endif

#define TRIDENT_CAT_(a, b) a##b
#define TRIDENT_CAT(a, b) TRIDENT_CAT_(a, b)

// y[i] (+)= sum over k_begin <= k < min(rl[i], k_end) of
//           values[k * rows + i] * x[col_idx[k * rows + i]].
// The global size is rounded up to a multiple of the work-group size; surplus items return.
__kernel void TRIDENT_CAT(spmv_ellr_, SUFFIX)(const uint rows,
                                              const uint k_begin,
                                              const uint k_end,
                                              const uint accumulate,
                                              __global const REAL *restrict values,
                                              __global const uint *restrict col_idx,
                                              __global const uint *restrict rl,
                                              __global const REAL *restrict x,
                                              __global REAL *restrict y)
{
    const ulong n = rows;
    const ulong i = get_global_id(0);
    if (i >= n) {
        return;
    }
    const uint len = min(rl[i], k_end);
    if (accumulate && len <= k_begin) {
        return; // nothing to add: y[i] already holds the sum
    }
    REAL acc = accumulate ? y[i] : (REAL)0;
    ulong p = (ulong)k_begin * n + i; // k * rows + i, advanced by rows per entry
    for (uint k = k_begin; k < len; ++k) {
        acc += values[p] * x[col_idx[p]];
        p += n;
    }
    y[i] = acc;
}

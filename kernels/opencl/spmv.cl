// ELLPACK-R sparse matrix-vector product, y = A x.
//
// One source for OpenCL and CUDA (the dialect: kernels/common/dialect.h; the CUDA build:
// kernels/cuda/spmv.cu), and for both precisions: built with REAL = float, SUFFIX = f32
// (kernel spmv_ellr_f32) and REAL = double, SUFFIX = f64, TRIDENT_FP64 (spmv_ellr_f64; on
// OpenCL only on devices that report cl_khr_fp64).
//
// Layout (see trident_core::ellpack): entry k of row i is at k * rows + i, so the work-items
// of a work-group, one per row, read consecutive addresses for every k (coalesced); rl[i] is
// the length of row i, so each item stops after its own row instead of scanning the padding.
//
// Traffic: A (values and columns) and rl are read exactly once and y is written once, so they
// use the streaming hints (LOAD_STREAM / STORE_STREAM: evict-first on CUDA), which keeps the
// randomly gathered x resident in L2; x is read through the read-only path (LOAD_RO). Entries
// are processed UNROLL at a time: all column and value loads of a group are issued before the
// x gathers, which puts several independent memory requests in flight per item.
//
// Slot passes: one launch handles the slots k_begin <= k < k_end of every row, adding to y
// when `accumulate` is nonzero and overwriting it otherwise. The host
// (trident_core::spmv::plan_slot_passes) splits the width into several passes when x is much
// larger than the device's last-level cache: columns are sorted within each row, so slot k of
// random rows concentrates in one part of x, and each pass gathers from a cache-sized part
// instead of all of x. A single pass is [0, width) with accumulate = 0.
//
// Kernel arguments (T = REAL; uint = unsigned int; the host code must match):
//   uint rows, uint k_begin, uint k_end, uint accumulate,
//   const T *values, const uint *col_idx, const uint *rl, const T *x, T *y
// Launch: 1-D work-groups of at most SPMV_WG items, any 1-D global size (a grid-stride loop
// covers all rows). Index arithmetic is 64-bit, so rows * width may exceed 2^32 slots.
//
// Accuracy: one fused multiply-add per entry, summed in column order, in the precision of T;
// a pass boundary only stores the running sum in y, in the precision of T.

#if !defined(REAL) || !defined(SUFFIX)
#error "build spmv.cl with REAL = float|double and SUFFIX = f32|f64"
#endif

// Entries per group (no slower than 4 or 8 in the benchmark; few registers, so full
// occupancy at SPMV_WG items per work-group).
#define SPMV_UNROLL 2
#define SPMV_WG 256

// y[i] (+)= sum over k_begin <= k < min(rl[i], k_end) of
//           values[k * rows + i] * x[col_idx[k * rows + i]].
__kernel KERNEL_WG_MAX(SPMV_WG) void TRIDENT_CAT(spmv_ellr_, SUFFIX)(
    const uint rows, const uint k_begin, const uint k_end, const uint accumulate,
    __global const REAL *restrict values, __global const uint *restrict col_idx,
    __global const uint *restrict rl, __global const REAL *restrict x,
    __global REAL *restrict y)
{
    const ulong n = rows;
    const ulong stride = get_global_size(0);
    for (ulong i = get_global_id(0); i < n; i += stride) {
        const uint len = min(LOAD_STREAM(rl + i), k_end);
        if (accumulate && len <= k_begin) {
            continue; // nothing to add: y[i] already holds the sum
        }
        const ulong first = (ulong)k_begin * n + i; // k * rows + i, advanced by rows per entry
        __global const REAL *vp = values + first;
        __global const uint *cp = col_idx + first;
        REAL acc = accumulate ? y[i] : (REAL)0;
        uint k = k_begin;
        for (; k + SPMV_UNROLL <= len; k += SPMV_UNROLL) {
            uint c[SPMV_UNROLL];
            REAL v[SPMV_UNROLL];
#pragma unroll
            for (uint u = 0; u < SPMV_UNROLL; ++u) {
                c[u] = LOAD_STREAM(cp + u * n);
                v[u] = LOAD_STREAM(vp + u * n);
            }
#pragma unroll
            for (uint u = 0; u < SPMV_UNROLL; ++u) {
                acc = fma(v[u], LOAD_RO(x + c[u]), acc);
            }
            cp += SPMV_UNROLL * n;
            vp += SPMV_UNROLL * n;
        }
        for (; k < len; ++k) {
            acc = fma(LOAD_STREAM(vp), LOAD_RO(x + LOAD_STREAM(cp)), acc);
            cp += n;
            vp += n;
        }
        STORE_STREAM(y + i, acc);
    }
}

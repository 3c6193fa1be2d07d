// ELLPACK-R sparse matrix-vector product y = A x (Trident CUDA backend).
//
// Layout (see trident_core::ellpack): entry k of row i lives at k * rows + i in `values` and
// `col_idx` (column-major), so the threads of a warp, one per row, read consecutive addresses
// for every k (coalesced); `rl[i]` is the number of stored entries of row i, so each thread
// stops after its own row instead of scanning the padding.
//
// Traffic: A (values + columns) and rl are read exactly once and y is written once, so they
// use the streaming cache hints (__ldcs / __stcs: evict-first), which keeps the randomly
// gathered x resident in L2; x is read through the read-only path (__ldg). Entries are
// processed UNROLL at a time: all column and value loads of a group are issued before the x
// gathers, which puts several independent memory requests in flight per thread.
//
// Slot passes: one launch handles the slots k_begin <= k < k_end of every row, adding to y
// when `accumulate` is nonzero and overwriting it otherwise. The host splits the width into
// several passes when x is much larger than L2: columns are sorted within each row, so slot k
// of random rows concentrates in one part of x, and each pass gathers from an L2-sized part
// instead of all of x (the plan: trident_core::spmv::plan_slot_passes; times:
// benches/results/spmv.md). A single pass is [0, width) with accumulate = 0.
//
// Kernel arguments (spmv_ellr_f32: T = float, spmv_ellr_f64: T = double; uint = unsigned int;
// the same in kernels/cuda/spmv.cu and kernels/opencl/spmv.cl, and the host code must match):
//   uint rows, uint k_begin, uint k_end, uint accumulate,
//   const T *values, const uint *col_idx, const uint *rl, const T *x, T *y
// Launch: 1-D blocks of at most 256 threads, any 1-D grid (a grid-stride loop covers all
// rows). Index arithmetic is 64-bit, so rows * width may exceed 2^32 slots.
//
// Accuracy: one fused multiply-add per entry, summed in column order, in the precision of T
// (no fast math); a pass boundary only stores the running sum in y, in the precision of T.

#include <cstddef>

namespace {

// Entries per group (no slower than 4 or 8 in the benchmark; <= 32 registers, so full
// occupancy at 256 threads per block).
constexpr unsigned UNROLL = 2;
constexpr unsigned BLOCK = 256;

template <typename T>
__device__ __forceinline__ T fma_t(T a, T b, T c);

template <>
__device__ __forceinline__ float fma_t<float>(float a, float b, float c) {
    return __fmaf_rn(a, b, c);
}

template <>
__device__ __forceinline__ double fma_t<double>(double a, double b, double c) {
    return __fma_rn(a, b, c);
}

template <typename T>
__device__ __forceinline__ void spmv_ellr(unsigned int rows, unsigned int k_begin,
                                          unsigned int k_end, unsigned int accumulate,
                                          const T *__restrict__ values,
                                          const unsigned int *__restrict__ col_idx,
                                          const unsigned int *__restrict__ rl,
                                          const T *__restrict__ x, T *__restrict__ y) {
    const size_t n = rows;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const unsigned int len = min(__ldcs(rl + i), k_end);
        if (accumulate && len <= k_begin) {
            continue;  // nothing to add: y[i] already holds the sum
        }
        const size_t first = static_cast<size_t>(k_begin) * n + i;
        const T *vp = values + first;
        const unsigned int *cp = col_idx + first;
        T acc = accumulate ? y[i] : T(0);
        unsigned int k = k_begin;
        for (; k + UNROLL <= len; k += UNROLL) {
            unsigned int c[UNROLL];
            T v[UNROLL];
#pragma unroll
            for (unsigned u = 0; u < UNROLL; ++u) {
                c[u] = __ldcs(cp + u * n);
                v[u] = __ldcs(vp + u * n);
            }
#pragma unroll
            for (unsigned u = 0; u < UNROLL; ++u) {
                acc = fma_t(v[u], __ldg(x + c[u]), acc);
            }
            cp += UNROLL * n;
            vp += UNROLL * n;
        }
        for (; k < len; ++k) {
            acc = fma_t(__ldcs(vp), __ldg(x + __ldcs(cp)), acc);
            cp += n;
            vp += n;
        }
        __stcs(y + i, acc);
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(BLOCK)
    spmv_ellr_f32(unsigned int rows, unsigned int k_begin, unsigned int k_end,
                  unsigned int accumulate, const float *__restrict__ values,
                  const unsigned int *__restrict__ col_idx, const unsigned int *__restrict__ rl,
                  const float *__restrict__ x, float *__restrict__ y) {
    spmv_ellr<float>(rows, k_begin, k_end, accumulate, values, col_idx, rl, x, y);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    spmv_ellr_f64(unsigned int rows, unsigned int k_begin, unsigned int k_end,
                  unsigned int accumulate, const double *__restrict__ values,
                  const unsigned int *__restrict__ col_idx, const unsigned int *__restrict__ rl,
                  const double *__restrict__ x, double *__restrict__ y) {
    spmv_ellr<double>(rows, k_begin, k_end, accumulate, values, col_idx, rl, x, y);
}

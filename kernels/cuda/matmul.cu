// Dense matrix multiplication kernels (Trident CUDA backend): a tiled, register-blocked GEMM
// (the base kernel of the Strassen/Winograd schedules of trident_core::matmul) and the
// elementwise sum of strided blocks that the schedules' additions run on.
// Same algorithm, same arguments, same launch as kernels/opencl/matmul.cl.
//
// Kernel arguments (T = float for *_f32, double for *_f64; the host code must match them):
//
//   gemm_<T>(unsigned m, unsigned n, unsigned k, T alpha, T beta,
//            const T *a, unsigned long long a_off, unsigned lda,
//            const T *b, unsigned long long b_off, unsigned ldb,
//            T *c, unsigned long long c_off, unsigned ldc)
//     c[c_off + i*ldc + j] = alpha * sum_p a[a_off + i*lda + p] * b[b_off + p*ldb + j]
//                            + beta * c[...]           (c is not read when beta == 0)
//     for i < m, j < n. Launch: 1-D, GEMM_THREADS (256) threads per block, one block per
//     128 x 128 tile of C: ceil(n / 128) * ceil(m / 128) blocks; block g computes tile row
//     g / ceil(n / 128), tile column g % ceil(n / 128).
//
//   matadd_<T>(unsigned m, unsigned n, T alpha, const T *x, unsigned long long x_off,
//              unsigned ldx, T beta, const T *y, unsigned long long y_off, unsigned ldy,
//              T *d, unsigned long long d_off, unsigned ldd)
//     d[d_off + i*ldd + j] = alpha * x[x_off + i*ldx + j] + beta * y[y_off + i*ldy + j]
//     for i < m, j < n (y is not read when beta == 0). d may be x itself (each element is
//     read and written by one thread only). Launch: 1-D, any block size and any grid (a
//     grid-stride loop covers the m * n elements).
//
// Design of gemm (the well-known SIMT SGEMM): a block of 256 threads computes a 128 x 128
// tile of C; each thread an 8 x 8 register block, as four 4 x 4 sub-blocks 64 rows and 64
// columns apart (rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns likewise with tx), so
// that the 4-wide shared-memory reads of a warp are broadcasts (A) or consecutive (B). k runs
// in steps of 8: a step's 128 x 8 tile of A (stored transposed, As[kk][row], padded by 4) and
// 8 x 128 tile of B sit in shared memory, double-buffered: the next step's tiles are loaded
// from global memory into registers while the current one is multiplied, then stored into
// the other buffer, so there is one __syncthreads per step. Global loads are 4-wide vector
// loads (float4; two double2 for f64) when the block's tile lies inside A and B and the
// leading dimensions and offsets are multiples of 4 (uniform per block; cudaMalloc'd
// buffers are 256-byte aligned, so the addresses are then 16-byte aligned); otherwise, and
// for the last partial k step, scalar loads with bounds checks that fill the outside with
// zeros (nothing outside the matrices is ever read). Stores are bounds-checked. Index
// arithmetic is 64-bit. Accumulation is in T with fused multiply-adds (no TF32, no fast
// math).

#include <cstddef>

namespace {

constexpr unsigned BM = 128;
constexpr unsigned BN = 128;
constexpr unsigned BK = 8;
constexpr unsigned GEMM_THREADS = 256;
constexpr unsigned APAD = 4;

template <typename T> struct Vec4;
template <> struct Vec4<float> {
    __device__ static __forceinline__ void load(const float *p, float *r) {
        const float4 v = *reinterpret_cast<const float4 *>(p);
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    }
};
template <> struct Vec4<double> {
    __device__ static __forceinline__ void load(const double *p, double *r) {
        const double2 v0 = *reinterpret_cast<const double2 *>(p);
        const double2 v1 = *reinterpret_cast<const double2 *>(p + 2);
        r[0] = v0.x; r[1] = v0.y; r[2] = v1.x; r[3] = v1.y;
    }
};

template <typename T>
__device__ __forceinline__ void gemm_tile(unsigned m, unsigned n, unsigned k, T alpha, T beta,
                                          const T *__restrict__ a, unsigned lda,
                                          const T *__restrict__ b, unsigned ldb, T *c,
                                          unsigned ldc, bool aligned) {
    __shared__ __align__(16) T As[2][BK][BM + APAD];
    __shared__ __align__(16) T Bs[2][BK][BN];

    const unsigned tid = threadIdx.x;
    const unsigned tx = tid % 16, ty = tid / 16;
    const unsigned tiles_n = (n + BN - 1) / BN;
    const unsigned group = blockIdx.x;
    const unsigned row0 = (group / tiles_n) * BM, col0 = (group % tiles_n) * BN;

    // Staging assignment: A tile 128 x 8 (two threads per row, 4 columns each), B tile
    // 8 x 128 (32 threads per row, 4 columns each).
    const unsigned a_r = tid >> 1, a_c = (tid & 1) * 4;
    const unsigned b_r = tid >> 5, b_c = (tid & 31) * 4;
    const bool fast = aligned && row0 + BM <= m && col0 + BN <= n;

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = T(0);
    T ra[4], rb[4];

    auto load_tiles = [&](unsigned kt) {
        if (fast && kt + BK <= k) {
            Vec4<T>::load(a + static_cast<size_t>(row0 + a_r) * lda + kt + a_c, ra);
            Vec4<T>::load(b + static_cast<size_t>(kt + b_r) * ldb + col0 + b_c, rb);
        } else {
#pragma unroll
            for (unsigned q = 0; q < 4; ++q) {
                const unsigned gr = row0 + a_r, gk = kt + a_c + q;
                ra[q] = (gr < m && gk < k) ? a[static_cast<size_t>(gr) * lda + gk] : T(0);
                const unsigned hk = kt + b_r, hc = col0 + b_c + q;
                rb[q] = (hk < k && hc < n) ? b[static_cast<size_t>(hk) * ldb + hc] : T(0);
            }
        }
    };
    auto store_tiles = [&](unsigned buf) {
#pragma unroll
        for (unsigned q = 0; q < 4; ++q) {
            As[buf][a_c + q][a_r] = ra[q];
            Bs[buf][b_r][b_c + q] = rb[q];
        }
    };

    const unsigned steps = (k + BK - 1) / BK;
    if (steps > 0) {
        load_tiles(0);
        store_tiles(0);
    }
    __syncthreads();
    for (unsigned s = 0; s < steps; ++s) {
        const unsigned cur = s & 1;
        const bool more = s + 1 < steps;
        if (more)
            load_tiles((s + 1) * BK);
#pragma unroll
        for (unsigned kk = 0; kk < BK; ++kk) {
            T av[8], bv[8];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                av[q] = As[cur][kk][ty * 4 + q];
                av[4 + q] = As[cur][kk][64 + ty * 4 + q];
                bv[q] = Bs[cur][kk][tx * 4 + q];
                bv[4 + q] = Bs[cur][kk][64 + tx * 4 + q];
            }
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        // The other buffer was last read in step s - 1, before the barrier that ended it.
        if (more)
            store_tiles(cur ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const unsigned r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (r >= m)
            continue;
        T *crow = c + static_cast<size_t>(r) * ldc;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const unsigned col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (col < n) {
                T v = alpha * acc[i][j];
                if (beta != T(0))
                    v += beta * crow[col];
                crow[col] = v;
            }
        }
    }
}

template <typename T>
__device__ __forceinline__ void matadd(unsigned m, unsigned n, T alpha, const T *x,
                                       unsigned long long x_off, unsigned ldx, T beta,
                                       const T *y, unsigned long long y_off, unsigned ldy, T *d,
                                       unsigned long long d_off, unsigned ldd) {
    const size_t total = static_cast<size_t>(m) * n;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t e = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
         e += stride) {
        const size_t i = e / n, j = e % n;
        T v = alpha * x[x_off + i * ldx + j];
        if (beta != T(0))
            v += beta * y[y_off + i * ldy + j];
        d[d_off + i * ldd + j] = v;
    }
}

} // namespace

#define TRIDENT_GEMM(T, SUFFIX)                                                               \
    extern "C" __global__ void __launch_bounds__(GEMM_THREADS)                                \
        gemm_##SUFFIX(unsigned m, unsigned n, unsigned k, T alpha, T beta, const T *a,        \
                      unsigned long long a_off, unsigned lda, const T *b,                     \
                      unsigned long long b_off, unsigned ldb, T *c, unsigned long long c_off, \
                      unsigned ldc) {                                                         \
        const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && a_off % 4 == 0 &&                \
                             b_off % 4 == 0;                                                  \
        gemm_tile<T>(m, n, k, alpha, beta, a + a_off, lda, b + b_off, ldb, c + c_off, ldc,    \
                     aligned);                                                                \
    }                                                                                         \
    extern "C" __global__ void matadd_##SUFFIX(                                               \
        unsigned m, unsigned n, T alpha, const T *x, unsigned long long x_off, unsigned ldx,  \
        T beta, const T *y, unsigned long long y_off, unsigned ldy, T *d,                     \
        unsigned long long d_off, unsigned ldd) {                                             \
        matadd<T>(m, n, alpha, x, x_off, ldx, beta, y, y_off, ldy, d, d_off, ldd);            \
    }

TRIDENT_GEMM(float, f32)
TRIDENT_GEMM(double, f64)

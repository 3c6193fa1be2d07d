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
//   gemm_fused_<T>(unsigned m, unsigned n, unsigned k,
//                  const T *a, unsigned long long a0_off, unsigned long long a1_off, T sa,
//                  unsigned lda,
//                  const T *b, unsigned long long b0_off, unsigned long long b1_off, T sb,
//                  unsigned ldb,
//                  T *c, unsigned long long c0_off, T g0, T beta0,
//                  unsigned long long c1_off, T g1, T beta1, unsigned ldc)
//     One product of "ABC Strassen" (Huang, Yu & van de Geijn): with A0 = a + a0_off etc.,
//     P = (A0 + sa A1)(B0 + sb B1), then C0 = g0 P + beta0 C0 and, when g1 != 0,
//     C1 = g1 P + beta1 C1 (all blocks strided by their ld; A1 not read when sa == 0, B1
//     when sb == 0, Ci when beta_i == 0). The factor sums are formed while loading the
//     tiles (no temporaries, no addition pass); C0 and C1 are disjoint. Same launch as
//     gemm_<T>. gemm_<T> is this kernel with sa = sb = 0, g0 = alpha, beta0 = beta, g1 = 0
//     (both are instances of one template, so they cannot drift apart).
//
//   gemm_dmma_f64(same parameters and launch as gemm_f64)
//   gemm_dmma_fused_f64(same parameters and launch as gemm_fused_f64)
//     The same product on the FP64 tensor cores (DMMA, mma.sync m8n8k4 f64), CUDA only:
//     built for compute_90 (where the host selects it for f64 by default); the portable
//     compute_75 PTX holds a stub that traps, which the host never launches there.
//
//   matadd_<T>(unsigned m, unsigned n, T alpha, const T *x, unsigned long long x_off,
//              unsigned ldx, T beta, const T *y, unsigned long long y_off, unsigned ldy,
//              T *d, unsigned long long d_off, unsigned ldd)
//     d[d_off + i*ldd + j] = alpha * x[x_off + i*ldx + j] + beta * y[y_off + i*ldy + j]
//     for i < m, j < n (y is not read when beta == 0). d may be x itself (each element is
//     read and written by one thread only). Launch: 1-D, any block size and any grid: block
//     b handles rows b, b + gridDim, ... and its threads the columns of each (one block per
//     row, up to 65536, is the host's choice).
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
constexpr unsigned DPAD = 4;
// Blocks per SM the SIMT kernels are built for (their __launch_bounds__): two for f32, which
// caps them at 128 registers per thread (2 x 256 x 128 = the SM's 64 K registers), one for
// f64 (its 8 x 8 double accumulators need more).
constexpr unsigned MIN_BLOCKS_f32 = 2;
constexpr unsigned MIN_BLOCKS_f64 = 1;

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

// The operands of one (possibly fused) product, already offset: P = (a0 + sa a1)(b0 + sb b1),
// c0 = g0 P + beta0 c0, and c1 = g1 P + beta1 c1 when FUSED and g1 != 0.
template <typename T> struct Operands {
    const T *a0, *a1;
    T sa;
    unsigned lda;
    const T *b0, *b1;
    T sb;
    unsigned ldb;
    T *c0;
    T g0, beta0;
    T *c1;
    T g1, beta1;
    unsigned ldc;
    bool aligned; // every offset and leading dimension a multiple of 4
};

// Global-to-register staging of one k step, shared by the SIMT and DMMA kernels: the block's
// 128 x 8 tile of A (two threads per row, 4 columns each) and 8 x 128 tile of B (32 threads
// per row, 4 columns each), 4 values of each per thread, summed with the second term when
// FUSED. Vector loads when the block's tile lies inside C and the operands are aligned and
// the k step is whole; otherwise bounds-checked scalar loads that fill the outside with zeros.
template <typename T, bool FUSED> struct Stager {
    // This thread's first A element (row row0 + a_r, column a_c) and B element (row b_r,
    // column col0 + b_c) of k step 0, in each term; k step kt is kt columns / rows further.
    const T *pa0, *pa1, *pb0, *pb1;
    T sa, sb;
    unsigned lda, ldb;
    unsigned a_row, a_col, b_row, b_col; // global coordinates of those elements at kt = 0
    unsigned a_r, a_c, b_r, b_c;         // their place in the tiles
    unsigned m, n, k;
    bool fast;
    T ra[4], rb[4];

    __device__ __forceinline__ Stager(const Operands<T> &o, unsigned m_, unsigned n_,
                                      unsigned k_, unsigned row0, unsigned col0)
        : sa(o.sa), sb(o.sb), lda(o.lda), ldb(o.ldb), m(m_), n(n_), k(k_) {
        const unsigned tid = threadIdx.x;
        a_r = tid >> 1;
        a_c = (tid & 1) * 4;
        b_r = tid >> 5;
        b_c = (tid & 31) * 4;
        a_row = row0 + a_r;
        a_col = a_c;
        b_row = b_r;
        b_col = col0 + b_c;
        const size_t ia = static_cast<size_t>(a_row) * lda + a_col;
        const size_t ib = static_cast<size_t>(b_row) * ldb + b_col;
        pa0 = o.a0 + ia;
        pa1 = o.a1 + ia;
        pb0 = o.b0 + ib;
        pb1 = o.b1 + ib;
        fast = o.aligned && row0 + BM <= m && col0 + BN <= n;
    }

    __device__ __forceinline__ void load(unsigned kt) {
        const size_t ob = static_cast<size_t>(kt) * ldb;
        if (fast && kt + BK <= k) {
            Vec4<T>::load(pa0 + kt, ra);
            Vec4<T>::load(pb0 + ob, rb);
            if (FUSED && sa != T(0)) {
                T t[4];
                Vec4<T>::load(pa1 + kt, t);
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    ra[q] += sa * t[q];
            }
            if (FUSED && sb != T(0)) {
                T t[4];
                Vec4<T>::load(pb1 + ob, t);
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    rb[q] += sb * t[q];
            }
        } else {
#pragma unroll
            for (unsigned q = 0; q < 4; ++q) {
                T va = T(0);
                if (a_row < m && kt + a_col + q < k) {
                    va = pa0[kt + q];
                    if (FUSED && sa != T(0))
                        va += sa * pa1[kt + q];
                }
                ra[q] = va;
                T vb = T(0);
                if (kt + b_row < k && b_col + q < n) {
                    vb = pb0[ob + q];
                    if (FUSED && sb != T(0))
                        vb += sb * pb1[ob + q];
                }
                rb[q] = vb;
            }
        }
    }
};

// Writes the product's entry v at element i (row * ldc + column) of c0 (and c1): in bounds
// (checked by the caller).
template <typename T, bool FUSED>
__device__ __forceinline__ void store_c(const Operands<T> &op, size_t i, T v) {
    T x = op.g0 * v;
    if (op.beta0 != T(0))
        x += op.beta0 * op.c0[i];
    op.c0[i] = x;
    if (FUSED && op.g1 != T(0)) {
        T y = op.g1 * v;
        if (op.beta1 != T(0))
            y += op.beta1 * op.c1[i];
        op.c1[i] = y;
    }
}

// The SIMT kernel. Its staging is Stager's, written out inline: through Stager, the f32
// kernel needed 135 registers (spilling at the 128 that two blocks per SM allow); inline,
// FUSED = false compiles to the original kernel's 128 registers.
template <typename T, bool FUSED>
__device__ __forceinline__ void gemm_tile(unsigned m, unsigned n, unsigned k,
                                          const Operands<T> &op) {
    __shared__ __align__(16) T As[2][BK][BM + APAD];
    __shared__ __align__(16) T Bs[2][BK][BN];

    const T *__restrict__ a = op.a0;
    const T *__restrict__ b = op.b0;
    const unsigned lda = op.lda, ldb = op.ldb;
    const unsigned tid = threadIdx.x;
    const unsigned tx = tid % 16, ty = tid / 16;
    const unsigned tiles_n = (n + BN - 1) / BN;
    const unsigned group = blockIdx.x;
    const unsigned row0 = (group / tiles_n) * BM, col0 = (group % tiles_n) * BN;

    // Staging assignment: A tile 128 x 8 (two threads per row, 4 columns each), B tile
    // 8 x 128 (32 threads per row, 4 columns each).
    const unsigned a_r = tid >> 1, a_c = (tid & 1) * 4;
    const unsigned b_r = tid >> 5, b_c = (tid & 31) * 4;
    const bool fast = op.aligned && row0 + BM <= m && col0 + BN <= n;

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = T(0);
    T ra[4], rb[4];

    auto load_tiles = [&](unsigned kt) {
        if (fast && kt + BK <= k) {
            const size_t ia = static_cast<size_t>(row0 + a_r) * lda + kt + a_c;
            const size_t ib = static_cast<size_t>(kt + b_r) * ldb + col0 + b_c;
            Vec4<T>::load(a + ia, ra);
            Vec4<T>::load(b + ib, rb);
            if (FUSED && op.sa != T(0)) {
                T t[4];
                Vec4<T>::load(op.a1 + ia, t);
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    ra[q] += op.sa * t[q];
            }
            if (FUSED && op.sb != T(0)) {
                T t[4];
                Vec4<T>::load(op.b1 + ib, t);
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    rb[q] += op.sb * t[q];
            }
        } else {
#pragma unroll
            for (unsigned q = 0; q < 4; ++q) {
                const unsigned gr = row0 + a_r, gk = kt + a_c + q;
                ra[q] = (gr < m && gk < k) ? a[static_cast<size_t>(gr) * lda + gk] : T(0);
                if (FUSED && op.sa != T(0) && gr < m && gk < k)
                    ra[q] += op.sa * op.a1[static_cast<size_t>(gr) * lda + gk];
                const unsigned hk = kt + b_r, hc = col0 + b_c + q;
                rb[q] = (hk < k && hc < n) ? b[static_cast<size_t>(hk) * ldb + hc] : T(0);
                if (FUSED && op.sb != T(0) && hk < k && hc < n)
                    rb[q] += op.sb * op.b1[static_cast<size_t>(hk) * ldb + hc];
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
        const size_t row = static_cast<size_t>(r) * op.ldc;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const unsigned col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (col < n)
                store_c<T, FUSED>(op, row + col, acc[i][j]);
        }
    }
}

// ---- gemm_dmma_f64: the FP64 tensor-core base kernel -----------------------------------
//
// Same block tile (128 x 128 of C per block of 256 threads), same k step (8), same staging
// (Stager), same shared-memory layout (A transposed, As[kk][row]) and the same double
// buffering with one __syncthreads per k step as gemm_tile. Only the inner product differs:
// the 8 warps form a 2 x 4 grid, warp (wm, wn) owns the 64 x 32 sub-tile at rows wm*64,
// columns wn*32, as 8 x 4 tiles of 8 x 8, each accumulated by
// mma.sync.aligned.m8n8k4.row.col.f64 (PTX ISA 7.0+, sm_80+; our PTX is ISA <= 9.0). Per k
// step, two k4 halves: each lane loads its A fragments (8 doubles) and B fragments (4
// doubles) from shared memory and issues 32 DMMAs.
//
// Fragment layouts of m8n8k4 f64 (PTX ISA, "Matrix Fragments for mma.m8n8k4 with .f64";
// CUTLASS's SM80_8x4 / SM80_8x8_Row): with g = lane / 4 and t = lane % 4, a lane holds
// A[g][t] of the 8 x 4 A tile, B[t][g] of the 4 x 8 B tile, and C[g][2t], C[g][2t + 1] of
// the 8 x 8 accumulator. So the lane reads As[kk + t][row + g] and Bs[kk + t][col + g]; with
// rows padded to 132 doubles (132 = 4 mod 16), the 16 lanes of each half-warp hit 16
// distinct 8-byte bank pairs (4t + g mod 16): conflict-free.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TRIDENT_HAS_DMMA 1
#else
#define TRIDENT_HAS_DMMA 0
#endif

// d = a * b + d for one 8 x 8 x 4 tile (c0, c1: this lane's two accumulator entries).
__device__ __forceinline__ void dmma_884(double &c0, double &c1, double a, double b) {
#if TRIDENT_HAS_DMMA
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(c0), "+d"(c1)
        : "d"(a), "d"(b));
#else
    __trap();
#endif
}

template <bool FUSED>
__device__ __forceinline__ void gemm_tile_dmma(unsigned m, unsigned n, unsigned k,
                                               const Operands<double> &op) {
    __shared__ __align__(16) double As[2][BK][BM + DPAD];
    __shared__ __align__(16) double Bs[2][BK][BN + DPAD];

    const unsigned tid = threadIdx.x;
    const unsigned lane = tid % 32, warp = tid / 32;
    const unsigned g = lane / 4, t = lane % 4;
    const unsigned wrow = (warp / 4) * 64, wcol = (warp % 4) * 32;
    const unsigned tiles_n = (n + BN - 1) / BN;
    const unsigned group = blockIdx.x;
    const unsigned row0 = (group / tiles_n) * BM, col0 = (group % tiles_n) * BN;
    Stager<double, FUSED> st(op, m, n, k, row0, col0);

    double acc[8][4][2];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            acc[i][j][0] = acc[i][j][1] = 0.0;

    auto store_tiles = [&](unsigned buf) {
#pragma unroll
        for (unsigned q = 0; q < 4; ++q) {
            As[buf][st.a_c + q][st.a_r] = st.ra[q];
            Bs[buf][st.b_r][st.b_c + q] = st.rb[q];
        }
    };

    const unsigned steps = (k + BK - 1) / BK;
    if (steps > 0) {
        st.load(0);
        store_tiles(0);
    }
    __syncthreads();
    for (unsigned s = 0; s < steps; ++s) {
        const unsigned cur = s & 1;
        const bool more = s + 1 < steps;
        if (more)
            st.load((s + 1) * BK);
#pragma unroll
        for (unsigned kk = 0; kk < BK; kk += 4) {
            double af[8], bf[4];
#pragma unroll
            for (int i = 0; i < 8; ++i)
                af[i] = As[cur][kk + t][wrow + i * 8 + g];
#pragma unroll
            for (int j = 0; j < 4; ++j)
                bf[j] = Bs[cur][kk + t][wcol + j * 8 + g];
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    dmma_884(acc[i][j][0], acc[i][j][1], af[i], bf[j]);
        }
        // The other buffer was last read in step s - 1, before the barrier that ended it.
        if (more)
            store_tiles(cur ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const unsigned r = row0 + wrow + i * 8 + g;
        if (r >= m)
            continue;
        const size_t row = static_cast<size_t>(r) * op.ldc;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const unsigned col = col0 + wcol + j * 8 + 2 * t + e;
                if (col < n)
                    store_c<double, FUSED>(op, row + col, acc[i][j][e]);
            }
        }
    }
}

// Rows are spread over the blocks (grid-stride), columns over a block's threads (block-
// stride, coalesced): no per-element index division.
template <typename T>
__device__ __forceinline__ void matadd(unsigned m, unsigned n, T alpha, const T *x,
                                       unsigned long long x_off, unsigned ldx, T beta,
                                       const T *y, unsigned long long y_off, unsigned ldy, T *d,
                                       unsigned long long d_off, unsigned ldd) {
    for (unsigned i = blockIdx.x; i < m; i += gridDim.x) {
        const T *xr = x + x_off + static_cast<size_t>(i) * ldx;
        const T *yr = y + y_off + static_cast<size_t>(i) * ldy;
        T *dr = d + d_off + static_cast<size_t>(i) * ldd;
        for (unsigned j = threadIdx.x; j < n; j += blockDim.x) {
            T v = alpha * xr[j];
            if (beta != T(0))
                v += beta * yr[j];
            dr[j] = v;
        }
    }
}

// The operands of a plain product (gemm_<T>, gemm_dmma_f64).
template <typename T>
__device__ __forceinline__ Operands<T>
plain(T alpha, T beta, const T *a, unsigned long long a_off, unsigned lda, const T *b,
      unsigned long long b_off, unsigned ldb, T *c, unsigned long long c_off, unsigned ldc) {
    const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && a_off % 4 == 0 && b_off % 4 == 0;
    return Operands<T>{a + a_off, a + a_off, T(0),  lda,       b + b_off, b + b_off,
                       T(0),      ldb,       c + c_off, alpha, beta,      c + c_off,
                       T(0),      T(0),      ldc,       aligned};
}

// The operands of a fused product (gemm_fused_<T>, gemm_dmma_fused_f64).
template <typename T>
__device__ __forceinline__ Operands<T>
fused(const T *a, unsigned long long a0_off, unsigned long long a1_off, T sa, unsigned lda,
      const T *b, unsigned long long b0_off, unsigned long long b1_off, T sb, unsigned ldb,
      T *c, unsigned long long c0_off, T g0, T beta0, unsigned long long c1_off, T g1, T beta1,
      unsigned ldc) {
    const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && a0_off % 4 == 0 && a1_off % 4 == 0 &&
                         b0_off % 4 == 0 && b1_off % 4 == 0;
    return Operands<T>{a + a0_off, a + a1_off, sa, lda,       b + b0_off, b + b1_off,
                       sb,         ldb,        c + c0_off, g0, beta0,     c + c1_off,
                       g1,         beta1,      ldc,        aligned};
}

} // namespace

#define TRIDENT_GEMM_PARAMS(T)                                                                \
    unsigned m, unsigned n, unsigned k, T alpha, T beta, const T *a, unsigned long long a_off, \
        unsigned lda, const T *b, unsigned long long b_off, unsigned ldb, T *c,               \
        unsigned long long c_off, unsigned ldc
#define TRIDENT_GEMM_ARGS alpha, beta, a, a_off, lda, b, b_off, ldb, c, c_off, ldc
#define TRIDENT_FUSED_PARAMS(T)                                                               \
    unsigned m, unsigned n, unsigned k, const T *a, unsigned long long a0_off,               \
        unsigned long long a1_off, T sa, unsigned lda, const T *b, unsigned long long b0_off, \
        unsigned long long b1_off, T sb, unsigned ldb, T *c, unsigned long long c0_off, T g0, \
        T beta0, unsigned long long c1_off, T g1, T beta1, unsigned ldc
#define TRIDENT_FUSED_ARGS                                                                    \
    a, a0_off, a1_off, sa, lda, b, b0_off, b1_off, sb, ldb, c, c0_off, g0, beta0, c1_off, g1,  \
        beta1, ldc

#define TRIDENT_GEMM(T, SUFFIX)                                                               \
    extern "C" __global__ void __launch_bounds__(GEMM_THREADS, MIN_BLOCKS_##SUFFIX)          \
        gemm_##SUFFIX(TRIDENT_GEMM_PARAMS(T)) {                                               \
        gemm_tile<T, false>(m, n, k, plain<T>(TRIDENT_GEMM_ARGS));                            \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(GEMM_THREADS, MIN_BLOCKS_##SUFFIX)          \
        gemm_fused_##SUFFIX(TRIDENT_FUSED_PARAMS(T)) {                                        \
        gemm_tile<T, true>(m, n, k, fused<T>(TRIDENT_FUSED_ARGS));                            \
    }                                                                                         \
    extern "C" __global__ void matadd_##SUFFIX(                                               \
        unsigned m, unsigned n, T alpha, const T *x, unsigned long long x_off, unsigned ldx,  \
        T beta, const T *y, unsigned long long y_off, unsigned ldy, T *d,                     \
        unsigned long long d_off, unsigned ldd) {                                             \
        matadd<T>(m, n, alpha, x, x_off, ldx, beta, y, y_off, ldy, d, d_off, ldd);            \
    }

TRIDENT_GEMM(float, f32)
TRIDENT_GEMM(double, f64)

// The FP64 tensor-core variants of gemm_f64 and gemm_fused_f64: same parameters, same launch.
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
    gemm_dmma_f64(TRIDENT_GEMM_PARAMS(double)) {
    gemm_tile_dmma<false>(m, n, k, plain<double>(TRIDENT_GEMM_ARGS));
}
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
    gemm_dmma_fused_f64(TRIDENT_FUSED_PARAMS(double)) {
    gemm_tile_dmma<true>(m, n, k, fused<double>(TRIDENT_FUSED_ARGS));
}

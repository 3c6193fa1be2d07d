// Dense matrix multiplication kernels (Trident OpenCL backend): a tiled, register-blocked
// GEMM (the base kernel of the Strassen/Winograd schedules of trident_core::matmul) and the
// elementwise sum of strided blocks that the schedules' additions run on.
// Same algorithm, same arguments, same launch as kernels/cuda/matmul.cu.
//
// Built once per precision with -D REAL=float -D SUFFIX=f32 and
// -D REAL=double -D SUFFIX=f64 -D TRIDENT_FP64 (kernels gemm_f32 / matadd_f32, ...).
//
// Kernel arguments (both precisions; the host code must match them exactly):
//
//   gemm_<T>(uint m, uint n, uint k, REAL alpha, REAL beta,
//            const REAL *a, ulong a_off, uint lda,
//            const REAL *b, ulong b_off, uint ldb,
//            REAL *c, ulong c_off, uint ldc)
//     c[c_off + i*ldc + j] = alpha * sum_p a[a_off + i*lda + p] * b[b_off + p*ldb + j]
//                            + beta * c[...]           (c is not read when beta == 0)
//     for i < m, j < n. Launch: 1-D, GEMM_THREADS (256) work-items per group, one group per
//     128 x 128 tile of C: ceil(n / 128) * ceil(m / 128) groups; group g computes tile row
//     g / ceil(n / 128), tile column g % ceil(n / 128).
//
//   gemm_fused_<T>(uint m, uint n, uint k,
//                  const REAL *a, ulong a0_off, ulong a1_off, REAL sa, uint lda,
//                  const REAL *b, ulong b0_off, ulong b1_off, REAL sb, uint ldb,
//                  REAL *c, ulong c0_off, REAL g0, REAL beta0,
//                  ulong c1_off, REAL g1, REAL beta1, uint ldc)
//     One product of "ABC Strassen" (Huang, Yu & van de Geijn): with A0 = a + a0_off etc.,
//     P = (A0 + sa A1)(B0 + sb B1), then C0 = g0 P + beta0 C0 and, when g1 != 0,
//     C1 = g1 P + beta1 C1 (all blocks strided by their ld; A1 not read when sa == 0, B1
//     when sb == 0, Ci when beta_i == 0). The factor sums are formed while loading the
//     tiles; C0 and C1 are disjoint. Same launch as gemm_<T>; both kernels are the one
//     gemm_body below (fused = 0 or 1).
//
//   matadd_<T>(uint m, uint n, REAL alpha, const REAL *x, ulong x_off, uint ldx,
//              REAL beta, const REAL *y, ulong y_off, uint ldy,
//              REAL *d, ulong d_off, uint ldd)
//     d[d_off + i*ldd + j] = alpha * x[x_off + i*ldx + j] + beta * y[y_off + i*ldy + j]
//     for i < m, j < n (y is not read when beta == 0). d may be x itself (each element is
//     read and written by one work-item only). Launch: 1-D, any group size and any number
//     of groups: group g handles rows g, g + groups, ... and its work-items the columns of
//     each (one group per row, up to 65536, is the host's choice).
//
// Design of gemm (the well-known SIMT SGEMM): a group of 256 work-items computes a 128 x 128
// tile of C; each work-item an 8 x 8 register block, as four 4 x 4 sub-blocks 64 rows and 64
// columns apart (rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns likewise with tx), so
// that the 4-wide local-memory reads of a warp are broadcasts (A) or consecutive (B). k runs
// in steps of 8: a step's 128 x 8 tile of A (stored transposed, As[kk][row], padded by 4) and
// 8 x 128 tile of B sit in local memory, double-buffered: the next step's tiles are loaded
// from global memory into registers while the current one is multiplied, then stored into
// the other buffer, so there is one barrier per step. Global loads are 4-wide vector loads
// (dereferences of REAL4 pointers, which the compiler may assume aligned: 16 bytes for
// float4, 32 for double4, true when the leading dimensions and offsets are multiples of 4,
// as OpenCL buffers are at least 128-byte aligned) when the group's tile lies inside A and
// B and that holds (uniform per group); otherwise, and for the last partial k step, scalar
// loads with bounds checks that fill the outside with zeros (nothing outside the matrices is
// ever read). Local-memory reads are REAL4 reads of the 16/32-byte aligned tiles, as nvcc
// emits for the CUDA kernel's shared memory; every fixed-count loop is unrolled (#pragma
// unroll, as in the CUDA kernel), so the 8 x 8 accumulators stay in registers. Inputs are
// `restrict` (read-only path). Stores are bounds-checked. Index arithmetic is 64-bit.
//
// Tile sizes are preprocessor options (-D BM=... etc.) for experiments, but the work-item
// mapping above needs BM = BN = 128, BK = 8 and 256 work-items (checked below), exactly as
// in the CUDA kernel, whose constants they mirror.

#ifdef TRIDENT_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if !defined(REAL) || !defined(SUFFIX)
#error "build with -D REAL=float|double -D SUFFIX=f32|f64"
#endif

#define TRIDENT_CAT_(a, b) a##b
#define TRIDENT_CAT(a, b) TRIDENT_CAT_(a, b)
// float4 / double4
#define REAL4 TRIDENT_CAT(REAL, 4)

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef GEMM_THREADS
#define GEMM_THREADS 256
#endif
#ifndef APAD
#define APAD 4
#endif
#if BM != 128 || BN != 128 || BK != 8 || GEMM_THREADS != 256 || APAD % 4 != 0
#error "the work-item mapping of gemm needs BM = BN = 128, BK = 8, 256 items, APAD % 4 == 0"
#endif
// Row lengths of the local tiles (multiples of 4 values: REAL4 reads stay aligned).
#define LDA_S (BM + APAD)
#define LDB_S BN

// One k step of staging: this work-item's 4 values of the A tile (row a_r, columns a_c..+3)
// and of the B tile (row b_r, columns b_c..+3), summed with the second terms when fused.
inline void load_tiles(uint kt, uint m, uint n, uint k, int fast, int fused,
                       __global const REAL *restrict a0, __global const REAL *restrict a1,
                       REAL sa, uint lda, __global const REAL *restrict b0,
                       __global const REAL *restrict b1, REAL sb, uint ldb, uint row0,
                       uint col0, uint a_r, uint a_c, uint b_r, uint b_c, REAL *ra, REAL *rb)
{
    if (fast && kt + BK <= k) {
        const ulong ia = (ulong)(row0 + a_r) * lda + kt + a_c;
        const ulong ib = (ulong)(kt + b_r) * ldb + col0 + b_c;
        REAL4 va = *(__global const REAL4 *)(a0 + ia);
        REAL4 vb = *(__global const REAL4 *)(b0 + ib);
        if (fused && sa != (REAL)0)
            va += sa * *(__global const REAL4 *)(a1 + ia);
        if (fused && sb != (REAL)0)
            vb += sb * *(__global const REAL4 *)(b1 + ib);
        ra[0] = va.x; ra[1] = va.y; ra[2] = va.z; ra[3] = va.w;
        rb[0] = vb.x; rb[1] = vb.y; rb[2] = vb.z; rb[3] = vb.w;
    } else {
#pragma unroll
        for (uint q = 0; q < 4; ++q) {
            const uint gr = row0 + a_r, gk = kt + a_c + q;
            REAL va = (REAL)0;
            if (gr < m && gk < k) {
                va = a0[(ulong)gr * lda + gk];
                if (fused && sa != (REAL)0)
                    va += sa * a1[(ulong)gr * lda + gk];
            }
            ra[q] = va;
            const uint hk = kt + b_r, hc = col0 + b_c + q;
            REAL vb = (REAL)0;
            if (hk < k && hc < n) {
                vb = b0[(ulong)hk * ldb + hc];
                if (fused && sb != (REAL)0)
                    vb += sb * b1[(ulong)hk * ldb + hc];
            }
            rb[q] = vb;
        }
    }
}

// The tiled product of one 128 x 128 tile of C (see the top); As and Bs are the group's
// double-buffered local tiles, [2][BK][LDA_S] and [2][BK][LDB_S].
inline void gemm_body(uint m, uint n, uint k, int fused,
                      __global const REAL *restrict a0, __global const REAL *restrict a1,
                      REAL sa, uint lda, __global const REAL *restrict b0,
                      __global const REAL *restrict b1, REAL sb, uint ldb,
                      __global REAL *c0, REAL g0, REAL beta0, __global REAL *c1, REAL g1,
                      REAL beta1, uint ldc, int aligned, __local REAL *As, __local REAL *Bs)
{
    const uint tid = get_local_id(0);
    const uint tx = tid % 16, ty = tid / 16;
    const uint tiles_n = (n + BN - 1) / BN;
    const uint group = get_group_id(0);
    const uint row0 = (group / tiles_n) * BM, col0 = (group % tiles_n) * BN;

    // Staging assignment: A tile 128 x 8 (two work-items per row, 4 columns each), B tile
    // 8 x 128 (32 work-items per row, 4 columns each).
    const uint a_r = tid >> 1, a_c = (tid & 1) * 4;
    const uint b_r = tid >> 5, b_c = (tid & 31) * 4;
    const int fast = aligned && row0 + BM <= m && col0 + BN <= n;

    REAL acc[8][8];
#pragma unroll
    for (uint i = 0; i < 8; ++i)
#pragma unroll
        for (uint j = 0; j < 8; ++j)
            acc[i][j] = (REAL)0;
    REAL ra[4], rb[4];

#define LOAD(kt)                                                                              \
    load_tiles((kt), m, n, k, fast, fused, a0, a1, sa, lda, b0, b1, sb, ldb, row0, col0, a_r, \
               a_c, b_r, b_c, ra, rb)
#define STORE(buf)                                                                            \
    do {                                                                                      \
        for (uint q = 0; q < 4; ++q) {                                                        \
            As[((buf) * BK + a_c + q) * LDA_S + a_r] = ra[q];                                 \
            Bs[((buf) * BK + b_r) * LDB_S + b_c + q] = rb[q];                                 \
        }                                                                                     \
    } while (0)

    const uint steps = (k + BK - 1) / BK;
    if (steps > 0) {
        LOAD(0u);
        STORE(0u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0; s < steps; ++s) {
        const uint cur = s & 1;
        const int more = s + 1 < steps;
        if (more)
            LOAD((s + 1) * BK);
        __local const REAL *at = As + cur * BK * LDA_S;
        __local const REAL *bt = Bs + cur * BK * LDB_S;
#pragma unroll
        for (uint kk = 0; kk < BK; ++kk) {
            const REAL4 x0 = *(__local const REAL4 *)(at + kk * LDA_S + ty * 4);
            const REAL4 x1 = *(__local const REAL4 *)(at + kk * LDA_S + 64 + ty * 4);
            const REAL4 y0 = *(__local const REAL4 *)(bt + kk * LDB_S + tx * 4);
            const REAL4 y1 = *(__local const REAL4 *)(bt + kk * LDB_S + 64 + tx * 4);
            const REAL av[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
            const REAL bv[8] = {y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w};
#pragma unroll
            for (uint i = 0; i < 8; ++i)
#pragma unroll
                for (uint j = 0; j < 8; ++j)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        // The other buffer was last read in step s - 1, before the barrier that ended it.
        if (more)
            STORE(cur ^ 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef LOAD
#undef STORE

#pragma unroll
    for (uint i = 0; i < 8; ++i) {
        const uint r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (r >= m)
            continue;
        const ulong row = (ulong)r * ldc;
#pragma unroll
        for (uint j = 0; j < 8; ++j) {
            const uint col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (col < n) {
                REAL v = g0 * acc[i][j];
                if (beta0 != (REAL)0)
                    v += beta0 * c0[row + col];
                c0[row + col] = v;
                if (fused && g1 != (REAL)0) {
                    REAL w = g1 * acc[i][j];
                    if (beta1 != (REAL)0)
                        w += beta1 * c1[row + col];
                    c1[row + col] = w;
                }
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(GEMM_THREADS, 1, 1))) void
TRIDENT_CAT(gemm_, SUFFIX)(uint m, uint n, uint k, REAL alpha, REAL beta,
                           __global const REAL *restrict a, ulong a_off, uint lda,
                           __global const REAL *restrict b, ulong b_off, uint ldb,
                           __global REAL *c, ulong c_off, uint ldc)
{
    __local REAL As[2 * BK * LDA_S] __attribute__((aligned(32)));
    __local REAL Bs[2 * BK * LDB_S] __attribute__((aligned(32)));
    const int aligned = lda % 4 == 0 && ldb % 4 == 0 && a_off % 4 == 0 && b_off % 4 == 0;
    gemm_body(m, n, k, 0, a + a_off, a + a_off, (REAL)0, lda, b + b_off, b + b_off, (REAL)0,
              ldb, c + c_off, alpha, beta, c + c_off, (REAL)0, (REAL)0, ldc, aligned, As, Bs);
}

__kernel __attribute__((reqd_work_group_size(GEMM_THREADS, 1, 1))) void
TRIDENT_CAT(gemm_fused_, SUFFIX)(uint m, uint n, uint k,
                                 __global const REAL *restrict a, ulong a0_off, ulong a1_off,
                                 REAL sa, uint lda,
                                 __global const REAL *restrict b, ulong b0_off, ulong b1_off,
                                 REAL sb, uint ldb,
                                 __global REAL *c, ulong c0_off, REAL g0, REAL beta0,
                                 ulong c1_off, REAL g1, REAL beta1, uint ldc)
{
    __local REAL As[2 * BK * LDA_S] __attribute__((aligned(32)));
    __local REAL Bs[2 * BK * LDB_S] __attribute__((aligned(32)));
    const int aligned = lda % 4 == 0 && ldb % 4 == 0 && a0_off % 4 == 0 && a1_off % 4 == 0 &&
                        b0_off % 4 == 0 && b1_off % 4 == 0;
    gemm_body(m, n, k, 1, a + a0_off, a + a1_off, sa, lda, b + b0_off, b + b1_off, sb, ldb,
              c + c0_off, g0, beta0, c + c1_off, g1, beta1, ldc, aligned, As, Bs);
}

// Rows are spread over the groups (group-stride), columns over a group's work-items
// (coalesced): no per-element index division.
__kernel void TRIDENT_CAT(matadd_, SUFFIX)(uint m, uint n, REAL alpha,
                                  __global const REAL *x, ulong x_off, uint ldx, REAL beta,
                                  __global const REAL *y, ulong y_off, uint ldy,
                                  __global REAL *d, ulong d_off, uint ldd)
{
    for (uint i = get_group_id(0); i < m; i += get_num_groups(0)) {
        __global const REAL *xr = x + x_off + (ulong)i * ldx;
        __global const REAL *yr = y + y_off + (ulong)i * ldy;
        __global REAL *dr = d + d_off + (ulong)i * ldd;
        for (uint j = get_local_id(0); j < n; j += get_local_size(0)) {
            REAL v = alpha * xr[j];
            if (beta != (REAL)0)
                v += beta * yr[j];
            dr[j] = v;
        }
    }
}

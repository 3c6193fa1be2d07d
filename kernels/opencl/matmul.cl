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
//   matadd_<T>(uint m, uint n, REAL alpha, const REAL *x, ulong x_off, uint ldx,
//              REAL beta, const REAL *y, ulong y_off, uint ldy,
//              REAL *d, ulong d_off, uint ldd)
//     d[d_off + i*ldd + j] = alpha * x[x_off + i*ldx + j] + beta * y[y_off + i*ldy + j]
//     for i < m, j < n (y is not read when beta == 0). d may be x itself (each element is
//     read and written by one work-item only). Launch: 1-D, any group size and any grid (a
//     grid-stride loop covers the m * n elements).
//
// Design of gemm (the well-known SIMT SGEMM): a group of 256 work-items computes a 128 x 128
// tile of C; each work-item an 8 x 8 register block, as four 4 x 4 sub-blocks 64 rows and 64
// columns apart (rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns likewise with tx), so
// that the 4-wide local-memory reads of a warp are broadcasts (A) or consecutive (B). k runs
// in steps of 8: a step's 128 x 8 tile of A (stored transposed, As[kk][row], padded by 4) and
// 8 x 128 tile of B sit in local memory, double-buffered: the next step's tiles are loaded
// from global memory into registers while the current one is multiplied, then stored into
// the other buffer, so there is one barrier per step. Global loads are 4-wide vector loads
// when the group's tile lies inside A and B and the leading dimensions and offsets are
// multiples of 4 (uniform per group); otherwise, and for the last partial k step, scalar
// loads with bounds checks that fill the outside with zeros (nothing outside the matrices is
// ever read). Stores are bounds-checked. Index arithmetic is 64-bit.

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

#define BM 128
#define BN 128
#define BK 8
#define GEMM_THREADS 256
#define APAD 4

// Loads the A and B elements of k step `kt` that this work-item stages (4 of each) into
// ra / rb: A row a_r, columns kt + a_c .. +3; B row kt + b_r, columns b_c .. +3.
#define LOAD_TILES(kt)                                                                        \
    do {                                                                                      \
        if (fast && (kt) + BK <= k) {                                                         \
            REAL4 va = vload4(0, a + (ulong)(row0 + a_r) * lda + (kt) + a_c);                 \
            REAL4 vb = vload4(0, b + (ulong)((kt) + b_r) * ldb + col0 + b_c);                 \
            ra[0] = va.x; ra[1] = va.y; ra[2] = va.z; ra[3] = va.w;                           \
            rb[0] = vb.x; rb[1] = vb.y; rb[2] = vb.z; rb[3] = vb.w;                           \
        } else {                                                                              \
            for (uint q = 0; q < 4; ++q) {                                                    \
                uint gr = row0 + a_r, gk = (kt) + a_c + q;                                    \
                ra[q] = (gr < m && gk < k) ? a[(ulong)gr * lda + gk] : (REAL)0;               \
                uint hk = (kt) + b_r, hc = col0 + b_c + q;                                    \
                rb[q] = (hk < k && hc < n) ? b[(ulong)hk * ldb + hc] : (REAL)0;               \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#define STORE_TILES(buf)                                                                      \
    do {                                                                                      \
        for (uint q = 0; q < 4; ++q) {                                                        \
            As[buf][a_c + q][a_r] = ra[q];                                                    \
            Bs[buf][b_r][b_c + q] = rb[q];                                                    \
        }                                                                                     \
    } while (0)

__kernel __attribute__((reqd_work_group_size(GEMM_THREADS, 1, 1))) void
TRIDENT_CAT(gemm_, SUFFIX)(uint m, uint n, uint k, REAL alpha, REAL beta,
                  __global const REAL *a, ulong a_off, uint lda,
                  __global const REAL *b, ulong b_off, uint ldb,
                  __global REAL *c, ulong c_off, uint ldc)
{
    __local REAL As[2][BK][BM + APAD];
    __local REAL Bs[2][BK][BN];

    const uint tid = get_local_id(0);
    const uint tx = tid % 16, ty = tid / 16;
    const uint tiles_n = (n + BN - 1) / BN;
    const uint group = get_group_id(0);
    const uint row0 = (group / tiles_n) * BM, col0 = (group % tiles_n) * BN;
    a += a_off;
    b += b_off;
    c += c_off;

    // Staging assignment: A tile 128 x 8 (two work-items per row, 4 columns each), B tile
    // 8 x 128 (32 work-items per row, 4 columns each).
    const uint a_r = tid >> 1, a_c = (tid & 1) * 4;
    const uint b_r = tid >> 5, b_c = (tid & 31) * 4;
    const int fast = row0 + BM <= m && col0 + BN <= n && lda % 4 == 0 && ldb % 4 == 0 &&
                     a_off % 4 == 0 && b_off % 4 == 0;

    REAL acc[8][8];
    for (uint i = 0; i < 8; ++i)
        for (uint j = 0; j < 8; ++j)
            acc[i][j] = (REAL)0;
    REAL ra[4], rb[4];

    const uint steps = (k + BK - 1) / BK;
    if (steps > 0) {
        LOAD_TILES(0u);
        STORE_TILES(0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0; s < steps; ++s) {
        const uint cur = s & 1;
        const int more = s + 1 < steps;
        if (more)
            LOAD_TILES((s + 1) * BK);
        for (uint kk = 0; kk < BK; ++kk) {
            REAL4 a0 = vload4(0, &As[cur][kk][ty * 4]);
            REAL4 a1 = vload4(0, &As[cur][kk][64 + ty * 4]);
            REAL4 b0 = vload4(0, &Bs[cur][kk][tx * 4]);
            REAL4 b1 = vload4(0, &Bs[cur][kk][64 + tx * 4]);
            REAL av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            REAL bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
            for (uint i = 0; i < 8; ++i)
                for (uint j = 0; j < 8; ++j)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        // The other buffer was last read in step s - 1, before the barrier that ended it.
        if (more)
            STORE_TILES(cur ^ 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (uint i = 0; i < 8; ++i) {
        const uint r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (r >= m)
            continue;
        __global REAL *crow = c + (ulong)r * ldc;
        for (uint j = 0; j < 8; ++j) {
            const uint col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (col < n) {
                REAL v = alpha * acc[i][j];
                if (beta != (REAL)0)
                    v += beta * crow[col];
                crow[col] = v;
            }
        }
    }
}

__kernel void TRIDENT_CAT(matadd_, SUFFIX)(uint m, uint n, REAL alpha,
                                  __global const REAL *x, ulong x_off, uint ldx, REAL beta,
                                  __global const REAL *y, ulong y_off, uint ldy,
                                  __global REAL *d, ulong d_off, uint ldd)
{
    const ulong total = (ulong)m * n;
    const ulong stride = get_global_size(0);
    for (ulong e = get_global_id(0); e < total; e += stride) {
        const ulong i = e / n, j = e % n;
        REAL v = alpha * x[x_off + i * ldx + j];
        if (beta != (REAL)0)
            v += beta * y[y_off + i * ldy + j];
        d[d_off + i * ldd + j] = v;
    }
}

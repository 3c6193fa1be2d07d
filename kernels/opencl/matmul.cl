// Dense matrix multiplication kernels: a tiled, register-blocked GEMM (the base kernel of the
// Strassen/Winograd schedules of trident_core::matmul) and the elementwise sum of strided
// blocks that the schedules' additions run on.
//
// One source for OpenCL and CUDA (the dialect: kernels/common/dialect.h; the CUDA build:
// kernels/cuda/matmul.cu, which adds the FP64 tensor-core kernels gemm_dmma_f64 and
// gemm_dmma_fused_f64), and for both precisions: built with REAL = float, SUFFIX = f32
// (gemm_f32, gemm_fused_f32, matadd_f32) and REAL = double, SUFFIX = f64, TRIDENT_FP64
// (gemm_f64, ...; on OpenCL only on devices that report cl_khr_fp64).
//
// Kernel arguments (T = REAL; uint = unsigned int, ulong = 64-bit; the host code,
// trident_core::matmul::device, must match them exactly):
//
//   gemm_<T>(uint m, uint n, uint k, T alpha, T beta,
//            const T *a, ulong a_off, uint lda,
//            const T *b, ulong b_off, uint ldb,
//            T *c, ulong c_off, uint ldc)
//     c[c_off + i*ldc + j] = alpha * sum_p a[a_off + i*lda + p] * b[b_off + p*ldb + j]
//                            + beta * c[...]           (c is not read when beta == 0)
//     for i < m, j < n. Launch: 1-D, GEMM_THREADS (256) work-items per group, one group per
//     128 x 128 tile of C: ceil(n / 128) * ceil(m / 128) groups; group g computes tile row
//     g / ceil(n / 128), tile column g % ceil(n / 128).
//
//   gemm_fused_<T>(uint m, uint n, uint k,
//                  const T *a, ulong a0_off, ulong a1_off, T sa, uint lda,
//                  const T *b, ulong b0_off, ulong b1_off, T sb, uint ldb,
//                  T *c, ulong c0_off, T g0, T beta0,
//                  ulong c1_off, T g1, T beta1, uint ldc)
//     One product of "ABC Strassen" (Huang, Yu & van de Geijn): with A0 = a + a0_off etc.,
//     P = (A0 + sa A1)(B0 + sb B1), then C0 = g0 P + beta0 C0 and, when g1 != 0,
//     C1 = g1 P + beta1 C1 (all blocks strided by their ld; A1 not read when sa == 0, B1
//     when sb == 0, Ci when beta_i == 0). The factor sums are formed while loading the
//     tiles (no temporaries, no addition pass); C0 and C1 are disjoint. Same launch as
//     gemm_<T>. Both kernels are the one gemm_body below, gemm_<T> with fused = 0 (sa = sb
//     = 0, g0 = alpha, beta0 = beta, g1 = 0), so they cannot drift apart.
//
//   matadd_<T>(uint m, uint n, T alpha, const T *x, ulong x_off, uint ldx,
//              T beta, const T *y, ulong y_off, uint ldy,
//              T *d, ulong d_off, uint ldd)
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
// (load4 below) when the group's tile lies inside A and B and the leading dimensions and
// offsets are multiples of 4 (uniform per group; buffers are at least 128-byte aligned, so
// the addresses are then aligned as the vector loads need); otherwise, and for the last
// partial k step, scalar loads with bounds checks that fill the outside with zeros (nothing
// outside the matrices is ever read). Every fixed-count loop is unrolled, so the 8 x 8
// accumulators stay in registers. Stores are bounds-checked. Index arithmetic is 64-bit.
// Accumulation is in T with fused multiply-adds (no TF32, no fast math).
//
// Dialect blocks (#ifdef TRIDENT_CUDA), kept only where each dialect's former kernel file
// had its own form, so that both keep their code generation:
//   load4       a 4-wide global load (vector types are not in the dialect): CUDA float4 /
//               two double2 (no 32-byte load on sm_90), OpenCL float4 / double4;
//   read_frags  the 4-wide local-memory reads of a k slice: CUDA reads scalars, which nvcc
//               merges into ld.shared.v4 / v2 from the aligned arrays; OpenCL reads REAL4
//               explicitly, which does not depend on the OpenCL compiler merging them;
//   GEMM_IN     the GEMM kernels' inputs are `restrict` in OpenCL only: on CUDA, restrict
//               turns their loads into ld.global.nc (the read-only path), a change of cache
//               behaviour that the H100 would have to show harmless first.
// Everything else is one code path.

#if !defined(REAL) || !defined(SUFFIX)
#error "build matmul.cl with REAL = float|double and SUFFIX = f32|f64"
#endif

// Tile of C per group, k step, work-items per group: the work-item mapping above needs
// exactly these (the host's trident_core::matmul::device::{TILE, GEMM_THREADS}).
#define BM 128u
#define BN 128u
#define BK 8u
#define GEMM_THREADS 256
// Padding of the transposed A tile's rows (a multiple of 4: 4-wide reads stay aligned).
#define APAD 4u
// Groups per compute unit the GEMM kernels are built for (CUDA: their __launch_bounds__):
// two for f32, which caps them at 128 registers per work-item (2 x 256 x 128 = an H100 SM's
// 64 K registers), one for f64 (its 8 x 8 double accumulators need more).
#define GEMM_GROUPS_f32 2
#define GEMM_GROUPS_f64 1

// The dialect blocks (see the top): the 4-wide loads and the input pointers' qualifier.
#ifdef TRIDENT_CUDA
// No restrict on the GEMM kernels' inputs a and b (see the top).
#define GEMM_IN
// r[0..3] = p[0..3], one 16-byte aligned vector load (two for double).
#ifdef TRIDENT_FP64
DEVICE void load4(const double *p, double *r)
{
    const double2 v0 = *reinterpret_cast<const double2 *>(p);
    const double2 v1 = *reinterpret_cast<const double2 *>(p + 2);
    r[0] = v0.x; r[1] = v0.y; r[2] = v1.x; r[3] = v1.y;
}
#else
DEVICE void load4(const float *p, float *r)
{
    const float4 v = *reinterpret_cast<const float4 *>(p);
    r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
}
#endif
// One k slice of the register block: av = at[ty*4 + 0..3], at[64 + ty*4 + 0..3] (A, stored
// transposed) and bv likewise from bt with tx. Scalar reads in this order are the ones nvcc
// merges into 4-wide (f32) / 2-wide (f64) shared-memory loads.
DEVICE void read_frags(const REAL *at, const REAL *bt, uint tx, uint ty, REAL *av, REAL *bv)
{
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        av[q] = at[ty * 4 + q];
        av[4 + q] = at[64 + ty * 4 + q];
        bv[q] = bt[tx * 4 + q];
        bv[4 + q] = bt[64 + tx * 4 + q];
    }
}
#else
// The GEMM kernels' inputs a and b are read-only and restrict.
#define GEMM_IN restrict
// float4 / double4
#define REAL4 TRIDENT_CAT(REAL, 4)
// r[0..3] = p[0..3], one vector load (p aligned to the REAL4: 16 / 32 bytes).
DEVICE void load4(__global const REAL *p, REAL *r)
{
    const REAL4 v = *(__global const REAL4 *)p;
    r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
}
// One k slice of the register block (as the CUDA block above), as four REAL4 reads of the
// REAL4-aligned local tiles.
DEVICE void read_frags(__local const REAL *at, __local const REAL *bt, uint tx, uint ty,
                       REAL *av, REAL *bv)
{
    const REAL4 x0 = *(__local const REAL4 *)(at + ty * 4);
    const REAL4 x1 = *(__local const REAL4 *)(at + 64 + ty * 4);
    const REAL4 y0 = *(__local const REAL4 *)(bt + tx * 4);
    const REAL4 y1 = *(__local const REAL4 *)(bt + 64 + tx * 4);
    av[0] = x0.x; av[1] = x0.y; av[2] = x0.z; av[3] = x0.w;
    av[4] = x1.x; av[5] = x1.y; av[6] = x1.z; av[7] = x1.w;
    bv[0] = y0.x; bv[1] = y0.y; bv[2] = y0.z; bv[3] = y0.w;
    bv[4] = y1.x; bv[5] = y1.y; bv[6] = y1.z; bv[7] = y1.w;
}
#endif

// One k step of staging (step kt): this work-item's 4 values of the A tile (row row0 + a_r,
// columns kt + a_c + 0..3) and of the B tile (row kt + b_r, columns col0 + b_c + 0..3) into
// ra and rb, summed with the second terms when fused (and sa / sb != 0). Vector loads when
// fast (the tile lies inside C and the operands are aligned) and the k step is whole;
// otherwise bounds-checked scalar loads that fill the outside with zeros.
DEVICE void load_tiles(uint kt, uint m, uint n, uint k, bool fast, bool fused,
                       __global const REAL *a0, __global const REAL *a1, REAL sa, uint lda,
                       __global const REAL *b0, __global const REAL *b1, REAL sb, uint ldb,
                       uint row0, uint col0, uint a_r, uint a_c, uint b_r, uint b_c, REAL *ra,
                       REAL *rb)
{
    if (fast && kt + BK <= k) {
        const ulong ia = (ulong)(row0 + a_r) * lda + kt + a_c;
        const ulong ib = (ulong)(kt + b_r) * ldb + col0 + b_c;
        load4(a0 + ia, ra);
        load4(b0 + ib, rb);
        if (fused && sa != (REAL)0) {
            REAL t[4];
            load4(a1 + ia, t);
#pragma unroll
            for (int q = 0; q < 4; ++q)
                ra[q] += sa * t[q];
        }
        if (fused && sb != (REAL)0) {
            REAL t[4];
            load4(b1 + ib, t);
#pragma unroll
            for (int q = 0; q < 4; ++q)
                rb[q] += sb * t[q];
        }
    } else {
#pragma unroll
        for (uint q = 0; q < 4; ++q) {
            const uint gr = row0 + a_r, gk = kt + a_c + q;
            ra[q] = (gr < m && gk < k) ? a0[(ulong)gr * lda + gk] : (REAL)0;
            if (fused && sa != (REAL)0 && gr < m && gk < k)
                ra[q] += sa * a1[(ulong)gr * lda + gk];
            const uint hk = kt + b_r, hc = col0 + b_c + q;
            rb[q] = (hk < k && hc < n) ? b0[(ulong)hk * ldb + hc] : (REAL)0;
            if (fused && sb != (REAL)0 && hk < k && hc < n)
                rb[q] += sb * b1[(ulong)hk * ldb + hc];
        }
    }
}

// Stores a k step's staged values (load_tiles) into buffer buf of the local tiles: A
// transposed (As[buf][column][row]), B as it is.
DEVICE void store_tiles(LOCAL_PTR REAL (*As)[BK][BM + APAD], LOCAL_PTR REAL (*Bs)[BK][BN],
                        uint buf, uint a_r, uint a_c, uint b_r, uint b_c, const REAL *ra,
                        const REAL *rb)
{
#pragma unroll
    for (uint q = 0; q < 4; ++q) {
        As[buf][a_c + q][a_r] = ra[q];
        Bs[buf][b_r][b_c + q] = rb[q];
    }
}

// Writes the product's entry v at element i (row * ldc + column) of c0 (and of c1 when fused
// and g1 != 0), in bounds (checked by the caller).
DEVICE void store_c(bool fused, __global REAL *c0, REAL g0, REAL beta0, __global REAL *c1,
                    REAL g1, REAL beta1, ulong i, REAL v)
{
    REAL x = g0 * v;
    if (beta0 != (REAL)0)
        x += beta0 * c0[i];
    c0[i] = x;
    if (fused && g1 != (REAL)0) {
        REAL y = g1 * v;
        if (beta1 != (REAL)0)
            y += beta1 * c1[i];
        c1[i] = y;
    }
}

// The tiled product of one 128 x 128 tile of C (see the top): P = (a0 + sa a1)(b0 + sb b1),
// c0 = g0 P + beta0 c0, c1 = g1 P + beta1 c1 (fused only). As and Bs are the group's
// double-buffered local tiles, declared by the kernel (OpenCL allows local arrays only at
// kernel scope).
DEVICE void gemm_body(uint m, uint n, uint k, bool fused, __global const REAL *a,
                      __global const REAL *a1, REAL sa, uint lda, __global const REAL *b,
                      __global const REAL *b1, REAL sb, uint ldb, __global REAL *c0, REAL g0,
                      REAL beta0, __global REAL *c1, REAL g1, REAL beta1, uint ldc,
                      bool aligned, LOCAL_PTR REAL (*As)[BK][BM + APAD],
                      LOCAL_PTR REAL (*Bs)[BK][BN])
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
    const bool fast = aligned && row0 + BM <= m && col0 + BN <= n;

    REAL acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = (REAL)0;
    REAL ra[4], rb[4];

#define GEMM_LOAD(kt)                                                                         \
    load_tiles((kt), m, n, k, fast, fused, a, a1, sa, lda, b, b1, sb, ldb, row0, col0, a_r,   \
               a_c, b_r, b_c, ra, rb)

    const uint steps = (k + BK - 1) / BK;
    if (steps > 0) {
        GEMM_LOAD(0u);
        store_tiles(As, Bs, 0, a_r, a_c, b_r, b_c, ra, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0; s < steps; ++s) {
        const uint cur = s & 1;
        const bool more = s + 1 < steps;
        if (more)
            GEMM_LOAD((s + 1) * BK);
#pragma unroll
        for (uint kk = 0; kk < BK; ++kk) {
            REAL av[8], bv[8];
            read_frags(As[cur][kk], Bs[cur][kk], tx, ty, av, bv);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        // The other buffer was last read in step s - 1, before the barrier that ended it.
        if (more)
            store_tiles(As, Bs, cur ^ 1, a_r, a_c, b_r, b_c, ra, rb);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef GEMM_LOAD

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const uint r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (r >= m)
            continue;
        const ulong row = (ulong)r * ldc;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const uint col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (col < n)
                store_c(fused, c0, g0, beta0, c1, g1, beta1, row + col, acc[i][j]);
        }
    }
}

// The group's double-buffered local tiles (aligned for the 4-wide reads of read_frags).
#define GEMM_TILES                                                                            \
    __local REAL As[2][BK][BM + APAD] __attribute__((aligned(4 * sizeof(REAL))));             \
    __local REAL Bs[2][BK][BN] __attribute__((aligned(4 * sizeof(REAL))))

__kernel KERNEL_WG_MIN_GROUPS(GEMM_THREADS, TRIDENT_CAT(GEMM_GROUPS_, SUFFIX)) void
TRIDENT_CAT(gemm_, SUFFIX)(uint m, uint n, uint k, REAL alpha, REAL beta,
                           __global const REAL *GEMM_IN a, ulong a_off, uint lda,
                           __global const REAL *GEMM_IN b, ulong b_off, uint ldb,
                           __global REAL *c, ulong c_off, uint ldc)
{
    GEMM_TILES;
    const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && a_off % 4 == 0 && b_off % 4 == 0;
    gemm_body(m, n, k, 0, a + a_off, a + a_off, (REAL)0, lda, b + b_off, b + b_off, (REAL)0,
              ldb, c + c_off, alpha, beta, c + c_off, (REAL)0, (REAL)0, ldc, aligned, As, Bs);
}

__kernel KERNEL_WG_MIN_GROUPS(GEMM_THREADS, TRIDENT_CAT(GEMM_GROUPS_, SUFFIX)) void
TRIDENT_CAT(gemm_fused_, SUFFIX)(uint m, uint n, uint k,
                                 __global const REAL *GEMM_IN a, ulong a0_off, ulong a1_off,
                                 REAL sa, uint lda,
                                 __global const REAL *GEMM_IN b, ulong b0_off, ulong b1_off,
                                 REAL sb, uint ldb,
                                 __global REAL *c, ulong c0_off, REAL g0, REAL beta0,
                                 ulong c1_off, REAL g1, REAL beta1, uint ldc)
{
    GEMM_TILES;
    const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && a0_off % 4 == 0 && a1_off % 4 == 0 &&
                        b0_off % 4 == 0 && b1_off % 4 == 0;
    gemm_body(m, n, k, 1, a + a0_off, a + a1_off, sa, lda, b + b0_off, b + b1_off, sb, ldb,
              c + c0_off, g0, beta0, c + c1_off, g1, beta1, ldc, aligned, As, Bs);
}

// Rows are spread over the groups (group-stride), columns over a group's work-items
// (coalesced): no per-element index division.
__kernel void TRIDENT_CAT(matadd_, SUFFIX)(uint m, uint n, REAL alpha, __global const REAL *x,
                                           ulong x_off, uint ldx, REAL beta,
                                           __global const REAL *y, ulong y_off, uint ldy,
                                           __global REAL *d, ulong d_off, uint ldd)
{
    for (uint i = get_group_id(0); i < m; i += (uint)get_num_groups(0)) {
        __global const REAL *xr = x + x_off + (ulong)i * ldx;
        __global const REAL *yr = y + y_off + (ulong)i * ldy;
        __global REAL *dr = d + d_off + (ulong)i * ldd;
        for (uint j = get_local_id(0); j < n; j += (uint)get_local_size(0)) {
            REAL v = alpha * xr[j];
            if (beta != (REAL)0)
                v += beta * yr[j];
            dr[j] = v;
        }
    }
}

// One-sided block Jacobi SVD and Givens QR (trident_core::svd; the host driver is
// trident_core::svd::driver; the host code, for both dialects, crates/core/src/svd/device.rs).
// kernels/opencl/svd.cl is the same algorithm with the same argument lists (this file
// follows it function by function).
//
// Templates over T = float / double; the extern "C" kernels end in _f32 / _f64. ulong is
// unsigned long long, uint unsigned int, REAL T.
//
// Launch shape: the host launches every kernel as a 1-D grid of 1-D blocks of WG = 256
// threads, svd_pair_rotate blocks of RWG = 512, the qr_tree_* kernels (but qr_tree_merge_update
// and _q) blocks of QWG = 1024. qr_rotations, qr_apply and qr_apply_q split their 1-D grid
// themselves, (j, k) = (g mod jspan, g / jspan) with jspan = cols (resp. jcols) rounded up
// to WG (Device::FLAT_GRID); on OpenCL they take the equivalent 2-D NDRanges.
//
// Every matrix is column-major: element (i, j) of a matrix with `rows` rows is at
// j * rows + i (64-bit index arithmetic). Every kernel runs with work-groups of WG = 256,
// except svd_pair_rotate (RWG = 512) and the qr_tree_* kernels: QWG = 1024 (but
// qr_tree_merge_update and _q: WG).
//
// Kernel arguments (both files, both precisions):
//
//   svd_jacobi_round(ulong rows, uint cols, uint b, uint nb, uint round, REAL tol, REAL tiny,
//                    REAL noise_rel, REAL *w, REAL *v, ulong vrows, uint *off_bits,
//                    uint *gmax_bits)
//       One round of one sweep: work-group k (of nb / 2) takes block pair k of round
//       `round` of the round-robin order on nb blocks of b <= BMAX columns (blocks past
//       cols are empty), forms the 2b x 2b Gram matrix of the pair's columns of w in local
//       memory (GRAM: tiles of TILE rows; the one place to switch to a tiled matmul), takes
//       the largest cosine |g_pq| / (sqrt g_pp sqrt g_qq) over pairs with g_pp, g_qq > tiny
//       into off_bits[0] (atomic max of the float's bits: cosines are >= 0), sets
//       off_bits[1] = 1 when it is > tol (the sweep is then not the converged one), and if so
//       runs INNER_SWEEPS round-robin Jacobi sweeps on the Gram matrix accumulating
//       the rotations in Q (NOISE_INNER_SWEEPS when a squared column norm lies in (tiny,
//       noise_rel gmax], noise_rel = trident_core::svd::noise_level, gmax the largest seen:
//       gmax_bits[0], order_key's bits (a float's, a double's top 32), raised by every pair to its own largest and kept by
//       the host across sweeps), then applies
//       [w_I w_J] <- [w_I w_J] Q and, when vrows > 0, the same to v (vrows rows).
//   svd_pair_gram(ulong rows, uint cols, uint b, uint nb, uint round, uint chunks,
//                 const REAL *w, REAL *gpart)
//   svd_pair_rotate(uint b, uint chunks, REAL tol, REAL tiny, REAL noise_rel,
//                   const REAL *gpart, REAL *qbuf, uint *off_bits, uint *gmax_bits)
//   svd_pair_apply(ulong rows, ulong vrows, uint cols, uint b, uint nb, uint round,
//                  uint chunks, const REAL *qbuf, REAL *w, REAL *v)
//       The same round split over `chunks` work-groups per pair (JacobiPlan::chunks; rows in
//       chunks of ceil(rows / chunks) rounded up to TILE): group k chunks + c writes the
//       P x P Gram partial of its rows to gpart[(k chunks + c) P^2 ..]; group k of
//       svd_pair_rotate sums the partials (c in order), does what svd_jacobi_round does to the
//       Gram matrix (cosines, inner sweeps, REORTH) and writes Q (row-major P x P) and the
//       "rotated" flag to qbuf[k (P^2 + 1) ..]; svd_pair_apply's group k chunks + c applies
//       it to its rows of w, group (nb / 2 + k) chunks + c to its rows of v (vrows rows; the
//       host launches those groups when vrows > 0).
//   svd_column_norms(ulong rows, uint cols, const REAL *w, REAL *norms)
//       Work-group j: norms[j] = ||column j of w||, summed in double where the device has
//       it (CUDA always; OpenCL with cl_khr_fp64), rounded to REAL once.
//   svd_from_rows(ulong m, ulong n, uint transpose, REAL scale, const REAL *src, REAL *dst)
//       The working matrix of the row-major m x n src, times scale: its columns (m x n
//       column-major) or, when transpose != 0, its rows (n x m).
//   svd_gather_cols(ulong rows, ulong ncols, uint as_rows, const uint *order,
//                   const REAL *scale, const REAL *src, REAL *dst)
//       Columns order[l] (l < ncols) of src (rows rows), each times scale[l], row-major:
//       as the columns of a rows x ncols matrix, or (as_rows != 0) as the rows of an
//       ncols x rows one.
//       Both in tiles of LT x LT = 32 x 32 of the output: grid ceil(r / 32) ceil(c / 32)
//       groups for an r x c column-major output (from_rows: m x n, or n x m when
//       transpose; gather_cols: ncols x rows, or rows x ncols when as_rows).
//   svd_copy_rows(ulong src_rows, ulong dst_rows, ulong nrows, uint cols, uint upper,
//                 const REAL *src, REAL *dst)
//       The top nrows rows of the cols columns of src into the top rows of dst (R out of a
//       factored matrix, J into zero-padded U space: the driver's device copies); zeros
//       below the diagonal when upper != 0. Work-item e: (i, j) = (e mod nrows, e / nrows),
//       grid ceil(nrows cols / WG) groups.
//   qr_rotations(ulong rows, uint cols, uint step, const REAL *a, REAL *cs)
//       Step `step` of the Sameh-Kuck order: work-item j zeroes element (i, j),
//       i = rows - 1 - step + 2 j, against row i - 1 when j < i < rows: writes
//       (c, s) = (a_{i-1,j}, a_ij) / hypot to cs[2 (j rows + i)].
//   qr_apply(ulong rows, uint cols, uint step, REAL *a, const REAL *cs)
//       Applies step `step`'s rotations to the rows (i - 1, i) of every column k >= j of a:
//       global id 0 = j, id 1 = k; a_ij is set to exactly 0.
//   qr_apply_q(ulong rows, uint qcols, uint jcols, uint step, REAL *q, const REAL *cs)
//       The transposed rotations of step `step` (of a QR whose reduced columns number
//       jcols) applied to the rows of every column of q (qcols columns); run for
//       step = last ... 0, this forms Q q.
//
//   qr_tree_leaf_panel(ulong rows, uint cols, uint h, uint j0, REAL *a, REAL *cs)
//   qr_tree_leaf_update(ulong rows, uint cols, uint h, uint j0, REAL *a, const REAL *cs)
//       Tree QR (trident_core::svd::tree), leaves: leaf p is the panel of rows p h ..
//       min(p h + h, rows), reduced by the Sameh-Kuck order inside it, taken column by
//       column in panels of MP = 32 columns j0 = 0, 32, ... (in order): _panel (QWG
//       threads, one block per leaf) makes the rotations of columns j0 .. j0 + 32 and
//       applies them to those columns; _update (WG threads, UCOLS = 32 columns each, 4 per
//       thread: leaves x ceil((cols - j0 - 32) / 32) blocks, launched when columns remain)
//       applies them to the columns right of the panel. (c, s) of the rotation zeroing
//       (g, j) to cs[2 (j rows + g)].
//   qr_tree_merge_panel(ulong rows, uint cols, uint h, uint levels, uint wave, REAL *a,
//                       REAL *cs)
//   qr_tree_merge_update(ulong rows, uint cols, uint h, uint levels, uint wave, REAL *a,
//                        const REAL *cs)
//       Tree QR merges: at level l, merge g absorbs the triangle at rows b = a + h 2^l
//       (kb rows) into the one at a = 2 g h 2^l, rotation (i, j) zeroing (b + i, j)
//       against row a + j for i <= j, i < kb, by panels of MP = 32 columns j0 = 0, 32, ...
//       Panel j0 of level l runs in wave l + j0 / MP (TreePlan::wave_tasks; the host
//       launches waves 0 .. levels + ceil(cols / MP) - 1 in order, _panel then _update):
//       _panel (QWG threads, one block per merge of every panel of the wave) makes the
//       panel's rotations and applies them to its columns; _update (WG threads, UCOLS =
//       32 columns each, 4 per thread: merges x ceil((cols - j0 - 32) / 32) blocks per
//       panel of the wave) applies them to the columns right of the panel. Blocks
//       past the wave's panels idle.
//   qr_tree_merge_q(ulong rows, uint qcols, uint cols, uint h, uint level, uint j0,
//                   REAL *q, const REAL *cs)
//       The transposed rotations of merge panel j0 of one level, in reverse order, on the
//       qcols columns of q: merges x ceil(qcols / UC) blocks of WG. Run for level = last
//       ... 0 and, within a level, j0 = last panel ... 0, then qr_tree_leaf_q, this forms Q q.
//   qr_tree_leaf_q(ulong rows, uint qcols, uint cols, uint h, uint kspan, REAL *q,
//                  const REAL *cs)
//       The transposed rotations of the leaves, steps reversed, on the qcols columns of q
//       (cols: the factored matrix's columns). The columns are independent, so they are
//       split into spans of kspan (TreePlan::q_span): panels x ceil(qcols / kspan) blocks,
//       block p spans + c taking panel p and columns c kspan .. min(qcols, c kspan + kspan).
//   qr_tree_leaf_q_local(same arguments)
//       The same on WG threads per block, the block's rows of its kspan columns held in
//       h kspan values of dynamic shared memory (local: a __local REAL * argument after cs)
//       and every step run there: one load and one store of q per leaf instead of one per
//       step. The host takes it when h kspan values fit (TreePlan::leaf_q_span).
//
// Rotation formula and round-robin pairing: trident_core::svd::{jacobi_rotation,
// round_robin_pair}, mirrored below.


typedef unsigned long long u64;  // OpenCL u64
typedef unsigned int uint;

namespace {

constexpr uint WG = 256;
constexpr uint QWG = 1024;
// Threads per block of svd_pair_rotate.
constexpr uint RWG = 512;
constexpr uint BMAX = 16;
constexpr uint P = 2 * BMAX;
constexpr uint TILE = 32;
constexpr uint LD = P + 1;
static_assert(TILE == P, "REORTH keeps a P x LD matrix in tile");
static_assert(P == 32 && WG == 256, "gram_rows and apply_q give each thread a 2 x 2 block of a 32 x 32 result");
// Inner sweeps per pair visit; NOISE_INNER_SWEEPS for a pair holding a rank-deficiency noise
// column (squared norm in (tiny, noise_rel gmax], noise_rel from the host):
// trident_core::svd::{INNER_SWEEPS, NOISE_INNER_SWEEPS, noise_level}.
constexpr uint INNER_SWEEPS = 1;
constexpr uint NOISE_INNER_SWEEPS = 2;

// Pair k of round r of the round-robin tournament on n (even) players, smaller first.
__device__ __forceinline__ void rr_pair(uint n, uint r, uint k, uint *x, uint *y) {
    const uint m = n - 1;
    uint i, j;
    if (k == 0) {
        i = r;
        j = m;
    } else {
        i = (r + k) % m;
        j = (r + m - k) % m;
    }
    *x = min(i, j);
    *y = max(i, j);
}

// The Jacobi rotation of trident_core::svd::jacobi_rotation; returns 0 when none is needed.
// c = 1 / sqrt(1 + t^2) as rsqrt (within an ulp or two; REORTH restores Q's orthogonality).
template <typename T>
__device__ __forceinline__ int jacobi_rotation(T gpp, T gqq, T gpq, T tol, T tiny, T *c, T *s) {
    if (!(gpp > tiny && gqq > tiny) || fabs(gpq) <= tol * sqrt(gpp) * sqrt(gqq)) {
        return 0;
    }
    const T zeta = (gqq - gpp) / (T(2) * gpq);
    const T az = fabs(zeta);
    // past 1e15, 1 / (2 zeta) formed without zeta (on graded matrices zeta itself can overflow)
    const T t = az > T(1e15) ? gpq / (gqq - gpp) : copysign(T(1), zeta) / (az + sqrt(T(1) + zeta * zeta));
    *c = rsqrt(T(1) + t * t);
    *s = *c * t;
    return 1;
}

// An order-preserving 32-bit key of a non-negative value and back: a float's bits, a double's
// top 32 bits (a lower bound within 2^-20). The driver scales f64 matrices so that squared
// column norms reach 2^1020, beyond float: a (float) cast would give inf and make every pair
// a noise pair.
__device__ __forceinline__ uint order_key(float x) { return __float_as_uint(x); }
__device__ __forceinline__ uint order_key(double x) {
    return (uint)((unsigned long long)__double_as_longlong(x) >> 32);
}
template <typename T>
__device__ __forceinline__ T from_order_key(uint k);
template <>
__device__ __forceinline__ float from_order_key<float>(uint k) { return __uint_as_float(k); }
template <>
__device__ __forceinline__ double from_order_key<double>(uint k) {
    return __longlong_as_double((long long)((unsigned long long)k << 32));
}

// Column of slot t (0 <= t < 2b) of block pair (bi, bj), or -1 when past cols.
__device__ __forceinline__ long long slot_col(uint t, uint b, uint bi, uint bj, uint cols) {
    const u64 c = t < b ? (u64)bi * b + t : (u64)bj * b + (t - b);
    return c < cols ? (long long)c : -1;
}

// x[slots] <- x[slots] Q for the pair's columns, rows r_begin .. r_end of a matrix with `rows`
// rows (the leading dimension), by tiles of TILE rows. Runs the same barriers whether or not
// `write` is set.
template <typename T>
__device__ void apply_q(T *x, u64 rows, u64 r_begin, u64 r_end, uint b, uint bi, uint bj,
                        uint cols, T *tile, const T *q, int write) {
    const uint lid = threadIdx.x;
    const uint p = 2 * b;
    if (!write) {
        r_end = r_begin;  // uniform: no tiles, no barriers
    }
    // Register blocking: thread (rp, ap) forms rows rp, rp + 16 of the tile times columns
    // ap, ap + 16 of q (2 x 2 outputs, one local load per multiply-add).
    const uint rp = lid % 16, ap = lid / 16;
    const long long c0 = ap < p ? slot_col(ap, b, bi, bj, cols) : -1;
    const long long c1 = ap + 16 < p ? slot_col(ap + 16, b, bi, bj, cols) : -1;
    for (u64 r0 = r_begin; r0 < r_end; r0 += TILE) {
        for (uint e = lid; e < P * TILE; e += WG) {
            const uint t = e / TILE, r = e % TILE;
            const long long c = t < p ? slot_col(t, b, bi, bj, cols) : -1;
            tile[t * (TILE + 1) + r] = (c >= 0 && r0 + r < r_end) ? x[(u64)c * rows + r0 + r] : T(0);
        }
        __syncthreads();
        if (c0 >= 0 || c1 >= 0) {
            T s00 = 0, s01 = 0, s10 = 0, s11 = 0;
            for (uint t = 0; t < p; ++t) {
                const T t0 = tile[t * (TILE + 1) + rp], t1 = tile[t * (TILE + 1) + rp + 16];
                const T q0 = q[t * LD + ap], q1 = q[t * LD + ap + 16];
                s00 += t0 * q0;
                s01 += t0 * q1;
                s10 += t1 * q0;
                s11 += t1 * q1;
            }
            if (c0 >= 0) {
                if (r0 + rp < r_end) {
                    x[(u64)c0 * rows + r0 + rp] = s00;
                }
                if (r0 + rp + 16 < r_end) {
                    x[(u64)c0 * rows + r0 + rp + 16] = s10;
                }
            }
            if (c1 >= 0) {
                if (r0 + rp < r_end) {
                    x[(u64)c1 * rows + r0 + rp] = s01;
                }
                if (r0 + rp + 16 < r_end) {
                    x[(u64)c1 * rows + r0 + rp + 16] = s11;
                }
            }
        }
        __syncthreads();
    }
}

// Entry u (0 .. 3) of thread lid's 2 x 2 block of the P x P Gram matrix (gram_rows).
__device__ __forceinline__ void gram_entry(uint lid, uint u, uint *x, uint *y) {
    *x = 2 * (lid / 16) + (u >> 1);
    *y = 2 * (lid % 16) + (u & 1);
}

// GRAM: acc (entries gram_entry(lid, u) of the P x P Gram matrix) += X^T X over rows
// r_begin .. r_end of the pair's columns of w (leading dimension rows), tiles of TILE rows.
template <typename T>
__device__ void gram_rows(const T *w, u64 rows, u64 r_begin, u64 r_end, uint b, uint bi, uint bj,
                          uint cols, T *tile, T *acc) {
    const uint lid = threadIdx.x;
    const uint p = 2 * b;
    for (u64 r0 = r_begin; r0 < r_end; r0 += TILE) {
        for (uint e = lid; e < P * TILE; e += WG) {
            const uint t = e / TILE, r = e % TILE;
            const long long c = t < p ? slot_col(t, b, bi, bj, cols) : -1;
            tile[t * (TILE + 1) + r] = (c >= 0 && r0 + r < r_end) ? w[(u64)c * rows + r0 + r] : T(0);
        }
        __syncthreads();
        // Register blocking: thread (lid / 16, lid % 16) forms the 2 x 2 block of entries
        // (x0 + i, y0 + j) (gram_entry), one local load per multiply-add.
        const uint x0 = 2 * (lid / 16), y0 = 2 * (lid % 16);
        if (x0 < p && y0 < p) {
            T s00 = 0, s01 = 0, s10 = 0, s11 = 0;
            for (uint r = 0; r < TILE; ++r) {
                const T a0 = tile[x0 * (TILE + 1) + r], a1 = tile[(x0 + 1) * (TILE + 1) + r];
                const T b0 = tile[y0 * (TILE + 1) + r], b1 = tile[(y0 + 1) * (TILE + 1) + r];
                s00 += a0 * b0;
                s01 += a0 * b1;
                s10 += a1 * b0;
                s11 += a1 * b1;
            }
            acc[0] += s00;
            acc[1] += s01;
            acc[2] += s10;
            acc[3] += s11;
        }
        __syncthreads();
    }
}

// Rows of chunk c (of `chunks`) of a `rows`-row matrix: chunks of ceil(rows / chunks) rows
// rounded up to TILE.
__device__ __forceinline__ void chunk_rows(u64 rows, uint chunks, uint c, u64 *r_begin, u64 *r_end) {
    const u64 per = (rows + chunks - 1) / chunks;
    const u64 len = (per + TILE - 1) / TILE * TILE;
    *r_begin = min(rows, (u64)c * len);
    *r_end = min(rows, *r_begin + len);
}

// Partner of player i in round r of the round-robin tournament on n (even) players (the
// pairs of rr_pair: (r + k, r - k) mod n - 1 meet, and r meets n - 1).
__device__ __forceinline__ uint rr_mate(uint n, uint r, uint i) {
    const uint m = n - 1;
    if (i == m) {
        return r;
    }
    if (i == r) {
        return m;
    }
    return (2 * r + m - i) % m;
}

// The largest of v over the block of NT threads, for every thread (a warp reduction, then
// one over the warps through red[NT / 32]; barriers: call uniformly).
template <uint NT, typename T>
__device__ T block_max(T v, T *red) {
    for (uint o = 16; o > 0; o >>= 1) {
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    if (threadIdx.x % 32 == 0) {
        red[threadIdx.x / 32] = v;
    }
    __syncthreads();
    v = red[0];
    for (uint w = 1; w < NT / 32; ++w) {
        v = fmax(v, red[w]);
    }
    __syncthreads();  // every thread has read red before it is written again
    return v;
}

// The largest cosine |g_xy| / (sqrt g_xx sqrt g_yy) over x < y < p with g_xx, g_yy > tiny, for
// every thread (barriers: call uniformly, after g is written).
template <uint NT, typename T>
__device__ T max_cosine(const T *g, T *red, uint p, T tiny) {
    T off = 0;
    for (uint e = threadIdx.x; e < P * P; e += NT) {
        const uint x = e / P, y = e % P;
        if (x < y && y < p) {
            const T gx = g[x * LD + x], gy = g[y * LD + y];
            if (gx > tiny && gy > tiny) {
                off = fmax(off, fabs(g[x * LD + y]) / (sqrt(gx) * sqrt(gy)));
            }
        }
    }
    return block_max<NT>(off, red);
}

// Local memory of pair_rotation: the Gram matrix and the accumulated rotation, each twice (a
// round reads one copy and writes the other), a round's rotations ((c_i, s_i) per index),
// the partners of every inner round, the reduction's and the noise level's scratch.
template <typename T>
struct PairScratch {
    T g[2][P * LD];
    T q[2][P * LD];
    T red[32];
    T rot[2 * P];
    T noise;
    unsigned char mate[(P - 1) * P];
};

// With the fresh Gram matrix in s.g[0] (after a barrier): the largest cosine into off_bits,
// then (when above tol) the inner sweeps accumulating Q, then the Bjorck step (REORTH).
// Returns Q (P x LD, in s) and sets *any to whether a rotation was made (uniform). NT
// threads.
//
// A round of a sweep rotates the b disjoint pairs (x, y) of the round-robin order at once:
// G <- J^T G J and Q <- Q J, J the pairs' rotations. Row and column i of G take part only
// with those of i's partner m(i), so each element is made from four old ones,
//     (G J)_ij = c_j G_ij + s_j G_i,m(j),   G'_ij = c_i (G J)_ij + s_i (G J)_m(i),j,
// with (c_i, s_i) = (c, -s) for the pair's first index and (c, s) for its second: the same
// arithmetic, in the same order, as rotating the columns and then the rows. The pair's own
// off-diagonal entries become exact zeros. Threads i < p work out the rotation of i's pair
// (both indices of a pair do) into s.rot; after a barrier, a thread takes column j = lane of
// rows warp, warp + NT / 32, ..., loading all it needs before it stores (into the other
// copy: nothing a round reads is written in it); a barrier ends the round.
template <uint NT, typename T>
__device__ const T *pair_rotation(PairScratch<T> &s, uint b, T tol, T tiny, T noise_rel,
                                  uint *off_bits, uint *gmax_bits, int *any) {
    static_assert(NT % 32 == 0 && NT <= 1024, "whole warps");
    const uint lid = threadIdx.x;
    const uint lane = lid % 32, warp = lid / 32;
    const uint p = 2 * b;
    // The partners of the inner rounds, once; the rotations start as none, the second copies
    // as G's and I (elements past p are never rotated). Made visible by max_cosine's barrier.
    for (uint e = lid; e < (p - 1) * P; e += NT) {
        const uint r = e / P, i = e % P;
        s.mate[e] = (unsigned char)(i < p ? rr_mate(p, r, i) : i);
    }
    for (uint e = lid; e < 2 * P; e += NT) {
        s.rot[e] = e % 2 == 0 ? T(1) : T(0);
    }
    for (uint e = lid; e < P * P; e += NT) {
        const uint x = e / P, y = e % P;
        s.g[1][x * LD + y] = s.g[0][x * LD + y];
        s.q[1][x * LD + y] = s.q[0][x * LD + y];
    }
    // The largest squared column norm seen so far (gmax_bits: every pair's largest, an atomic
    // max of the float's bits, kept across sweeps) makes the noise level; read once, by
    // thread 0, and shared through s.noise after max_cosine's barriers.
    if (lid == 0) {
        T gd = 0;
        for (uint x = 0; x < p; ++x) {
            gd = fmax(gd, s.g[0][x * LD + x]);
        }
        const T seen = from_order_key<T>(atomicMax(gmax_bits, order_key(gd)));
        s.noise = fmax(seen, gd) * noise_rel;
    }
    // Largest cosine of the fresh Gram matrix.
    const T off = max_cosine<NT>(s.g[0], s.red, p, tiny);
    const T noise = s.noise;
    uint inner = INNER_SWEEPS;
    for (uint x = 0; x < p; ++x) {
        const T d = s.g[0][x * LD + x];
        if (d > tiny && d <= noise) {
            inner = NOISE_INNER_SWEEPS;
        }
    }
    if (lid == 0) {
        atomicMax(off_bits, __float_as_uint((float)off));
        if (off > tol) {
            off_bits[1] = 1;  // not converged (every writer writes 1)
        }
    }
    // No early return (as in svd.cl): every thread reaches every barrier below.
    const int active = off > tol;
    int rotated = 0;
    uint cur = 0;
    // A sweep is skipped (uniformly) when it would rotate nothing: the pair is converged, or
    // the previous sweep left every cosine within tol. Up to the rounding of a cosine at tol
    // itself, the result is the same.
    for (uint sweep = 0; sweep < inner; ++sweep) {
        if (!active || (sweep > 0 && max_cosine<NT>(s.g[cur], s.red, p, tiny) <= tol)) {
            break;
        }
        for (uint r = 0; r + 1 < p; ++r) {
            const unsigned char *mr = s.mate + r * P;
            const T *g = s.g[cur], *q = s.q[cur];
            T *gn = s.g[cur ^ 1], *qn = s.q[cur ^ 1];
            // The rotation of i's pair (both of its indices work it out), then the elements,
            // each thread's loaded before any is stored.
            if (lid < p) {
                const uint m = mr[lid];
                const uint x = min(lid, m), y = max(lid, m);
                T c, sn;
                if (jacobi_rotation(g[x * LD + x], g[y * LD + y], g[x * LD + y], tol, tiny, &c, &sn)) {
                    rotated = 1;
                } else {
                    c = 1;
                    sn = 0;
                }
                s.rot[2 * lid] = c;
                s.rot[2 * lid + 1] = lid == x ? -sn : sn;
            }
            __syncthreads();
            constexpr uint ROWS = P / (NT / 32);
            const uint j = lane, mj = mr[j];
            const T cj = s.rot[2 * j], sj = s.rot[2 * j + 1];
            T gv[ROWS], qv[ROWS];
#pragma unroll
            for (uint u = 0; u < ROWS; ++u) {
                const uint i = warp + u * (NT / 32), mi = mr[i];
                const T ci = s.rot[2 * i], si = s.rot[2 * i + 1];
                const T a = cj * g[i * LD + j] + sj * g[i * LD + mj];
                const T c = cj * g[mi * LD + j] + sj * g[mi * LD + mj];
                gv[u] = sj != T(0) && mi == j ? T(0) : ci * a + si * c;
                qv[u] = cj * q[i * LD + j] + sj * q[i * LD + mj];
            }
            if (j < p) {
#pragma unroll
                for (uint u = 0; u < ROWS; ++u) {
                    const uint i = warp + u * (NT / 32);
                    if (i < p) {
                        gn[i * LD + j] = gv[u];
                        qn[i * LD + j] = qv[u];
                    }
                }
            }
            __syncthreads();
            cur ^= 1;
        }
    }
    *any = __syncthreads_or(rotated);
    // REORTH: one Bjorck step Q <- Q (3 I - Q^T Q) / 2 (the spare copies hold Q^T Q and the
    // product): keeps the accumulated rotation orthogonal to O(sqrt(2b) eps)
    // (trident_core::svd::reorthonormalise).
    const T *q = s.q[cur];
    T *qtq = s.g[cur ^ 1], *out = s.q[cur ^ 1];
    for (uint e = lid; e < P * P; e += NT) {
        const uint x = e / P, y = e % P;
        T acc = 0;
        for (uint t = 0; t < p; ++t) {
            acc += q[t * LD + x] * q[t * LD + y];
        }
        qtq[x * LD + y] = acc;
    }
    __syncthreads();
    for (uint e = lid; e < P * P; e += NT) {
        const uint t = e / P, a = e % P;
        T acc = 0;
        for (uint y = 0; y < p; ++y) {
            acc += q[t * LD + y] * ((y == a ? T(3) : T(0)) - qtq[y * LD + a]);
        }
        out[t * LD + a] = acc / T(2);
    }
    __syncthreads();
    return out;
}

template <typename T>
__device__ void svd_jacobi_round(const u64 rows, const uint cols, const uint b, const uint nb,
                                 const uint round, const T tol, const T tiny, const T noise_rel,
                                 T *w, T *v, const u64 vrows, uint *off_bits, uint *gmax_bits) {
    __shared__ T tile[P * (TILE + 1)];
    __shared__ PairScratch<T> s;

    const uint lid = threadIdx.x;
    uint bi, bj;
    rr_pair(nb, round, blockIdx.x, &bi, &bj);
    T acc[P * P / WG];
    for (uint u = 0; u < P * P / WG; ++u) {
        acc[u] = 0;
    }
    gram_rows(w, rows, 0, rows, b, bi, bj, cols, tile, acc);
    for (uint u = 0; u < P * P / WG; ++u) {
        uint x, y;
        gram_entry(lid, u, &x, &y);
        s.g[0][x * LD + y] = acc[u];
        s.q[0][x * LD + y] = x == y ? T(1) : T(0);
    }
    __syncthreads();
    int any;
    const T *q = pair_rotation<WG>(s, b, tol, tiny, noise_rel, off_bits, gmax_bits, &any);
    apply_q(w, rows, 0, rows, b, bi, bj, cols, tile, q, any);
    apply_q(v, vrows, 0, vrows, b, bi, bj, cols, tile, q, any);
}

template <typename T>
__device__ void svd_pair_gram(const u64 rows, const uint cols, const uint b, const uint nb,
                              const uint round, const uint chunks, const T *w, T *gpart) {
    __shared__ T tile[P * (TILE + 1)];
    const uint lid = threadIdx.x;
    const uint grp = blockIdx.x;
    uint bi, bj;
    rr_pair(nb, round, grp / chunks, &bi, &bj);
    u64 r_begin, r_end;
    chunk_rows(rows, chunks, grp % chunks, &r_begin, &r_end);
    T acc[P * P / WG];
    for (uint u = 0; u < P * P / WG; ++u) {
        acc[u] = 0;
    }
    gram_rows(w, rows, r_begin, r_end, b, bi, bj, cols, tile, acc);
    for (uint u = 0; u < P * P / WG; ++u) {
        uint x, y;
        gram_entry(lid, u, &x, &y);
        gpart[(u64)grp * P * P + x * P + y] = acc[u];
    }
}

template <uint NT, typename T>
__device__ void svd_pair_rotate(const uint b, const uint chunks, const T tol, const T tiny,
                                const T noise_rel, const T *gpart, T *qbuf, uint *off_bits,
                                uint *gmax_bits) {
    __shared__ PairScratch<T> s;
    const uint lid = threadIdx.x;
    const u64 k = blockIdx.x;
    for (uint e = lid; e < P * P; e += NT) {
        const uint x = e / P, y = e % P;
        T sum = 0;
        for (uint c = 0; c < chunks; ++c) {
            sum += gpart[(k * chunks + c) * P * P + e];
        }
        s.g[0][x * LD + y] = sum;
        s.q[0][x * LD + y] = x == y ? T(1) : T(0);
    }
    __syncthreads();
    int any;
    const T *q = pair_rotation<NT>(s, b, tol, tiny, noise_rel, off_bits, gmax_bits, &any);
    for (uint e = lid; e < P * P; e += NT) {
        qbuf[k * (P * P + 1) + e] = q[(e / P) * LD + e % P];
    }
    if (lid == 0) {
        qbuf[k * (P * P + 1) + P * P] = any ? T(1) : T(0);
    }
}

template <typename T>
__device__ void svd_pair_apply(const u64 rows, const u64 vrows, const uint cols, const uint b,
                               const uint nb, const uint round, const uint chunks, const T *qbuf,
                               T *w, T *v) {
    __shared__ T tile[P * (TILE + 1)];
    __shared__ T q[P * LD];
    const uint lid = threadIdx.x;
    // The first nb / 2 chunks groups take w, the rest v.
    const u64 wgroups = (u64)(nb / 2) * chunks;
    const bool on_v = blockIdx.x >= wgroups;
    const u64 grp = on_v ? blockIdx.x - wgroups : blockIdx.x;
    T *x = on_v ? v : w;
    const u64 xrows = on_v ? vrows : rows;
    const u64 k = grp / chunks;
    uint bi, bj;
    rr_pair(nb, round, (uint)k, &bi, &bj);
    u64 r_begin, r_end;
    chunk_rows(xrows, chunks, (uint)(grp % chunks), &r_begin, &r_end);
    for (uint e = lid; e < P * P; e += WG) {
        q[(e / P) * LD + e % P] = qbuf[k * (P * P + 1) + e];
    }
    const int any = qbuf[k * (P * P + 1) + P * P] != T(0);
    __syncthreads();
    apply_q(x, xrows, r_begin, r_end, b, bi, bj, cols, tile, q, any);
}

// dst[j dst_rows + i] = src[j src_rows + i] for i < nrows, j < cols; 0 where i > j when
// `upper` is set. Thread e of the grid: (i, j) = (e mod nrows, e / nrows).
template <typename T>
__device__ void svd_copy_rows(const u64 src_rows, const u64 dst_rows, const u64 nrows,
                              const uint cols, const uint upper, const T *src, T *dst) {
    const u64 e = (u64)blockIdx.x * WG + threadIdx.x;
    if (nrows == 0 || e >= nrows * cols) {
        return;
    }
    const u64 i = e % nrows, j = e / nrows;
    dst[j * dst_rows + i] = upper && i > j ? T(0) : src[j * src_rows + i];
}

// ---- Layout changes between the host's row-major matrices and the column-major working
// matrices (svd_from_rows, svd_gather_cols). Both write an r x c column-major output O
// (O(i, j) at dst[j r + i]) in tiles of LT x LT: block t of a 1-D grid takes the tile at
// (i0, j0) = ((t mod ceil(r / LT)) LT, (t / ceil(r / LT)) LT). When O is a transpose of its
// source, the tile goes through shared memory so that reads and writes are both coalesced.
constexpr uint LT = 32;
static_assert(WG % LT == 0, "a block covers whole tile rows");

__device__ __forceinline__ void layout_tile(u64 r, u64 *i0, u64 *j0) {
    const u64 tr = (r + LT - 1) / LT;
    *i0 = (u64)blockIdx.x % tr * LT;
    *j0 = (u64)blockIdx.x / tr * LT;
}

// The working matrix of a row-major m x n matrix src, every value times scale: its columns
// (transpose == 0: O is m x n, O(i, j) = src[i n + j]) or its rows (transpose != 0: O is
// n x m, O(i, j) = src[j n + i], the same order as src).
template <typename T>
__device__ void svd_from_rows(const u64 m, const u64 n, const uint transpose, const T scale,
                              const T *src, T *dst) {
    __shared__ T tile[LT][LT + 1];
    const uint tx = threadIdx.x % LT, ty = threadIdx.x / LT;
    const u64 r = transpose ? n : m, c = transpose ? m : n;
    u64 i0, j0;
    layout_tile(r, &i0, &j0);
    if (transpose) {
        for (uint b = ty; b < LT; b += WG / LT) {
            const u64 i = i0 + tx, j = j0 + b;
            if (i < r && j < c) {
                dst[j * r + i] = src[j * r + i] * scale;
            }
        }
        return;
    }
    for (uint a = ty; a < LT; a += WG / LT) {
        const u64 i = i0 + a, j = j0 + tx;
        if (i < r && j < c) {
            tile[a][tx] = src[i * c + j] * scale;
        }
    }
    __syncthreads();
    for (uint b = ty; b < LT; b += WG / LT) {
        const u64 i = i0 + tx, j = j0 + b;
        if (i < r && j < c) {
            dst[j * r + i] = tile[tx][b];
        }
    }
}

// Columns order[l] (l < ncols) of the column-major src (rows rows), each times scale[l], as
// row-major output: the columns of a rows x ncols matrix (as_rows == 0: O is ncols x rows,
// O(l, i) = dst[i ncols + l]) or the rows of an ncols x rows one (as_rows != 0: O is
// rows x ncols, dst[l rows + i]).
template <typename T>
__device__ void svd_gather_cols(const u64 rows, const u64 ncols, const uint as_rows,
                                const uint *order, const T *scale, const T *src, T *dst) {
    __shared__ T tile[LT][LT + 1];
    const uint tx = threadIdx.x % LT, ty = threadIdx.x / LT;
    const u64 r = as_rows ? rows : ncols, c = as_rows ? ncols : rows;
    u64 i0, j0;
    layout_tile(r, &i0, &j0);
    if (as_rows) {
        for (uint b = ty; b < LT; b += WG / LT) {
            const u64 i = i0 + tx, l = j0 + b;
            if (i < r && l < c) {
                dst[l * r + i] = src[(u64)order[l] * rows + i] * scale[l];
            }
        }
        return;
    }
    // O(l, i) for l in the tile's rows, i in its columns: read along i (coalesced), then
    // written along l.
    for (uint a = ty; a < LT; a += WG / LT) {
        const u64 l = i0 + a, i = j0 + tx;
        if (l < r && i < c) {
            tile[a][tx] = src[(u64)order[l] * rows + i] * scale[l];
        }
    }
    __syncthreads();
    for (uint b = ty; b < LT; b += WG / LT) {
        const u64 l = i0 + tx, i = j0 + b;
        if (l < r && i < c) {
            dst[i * r + l] = tile[tx][b];
        }
    }
}

template <typename T>
__device__ void svd_column_norms(const u64 rows, const uint cols, const T *w, T *norms) {
    __shared__ double red[WG];
    const uint lid = threadIdx.x;
    const u64 j = blockIdx.x;
    double s = 0;
    for (u64 i = lid; i < rows; i += WG) {
        const double x = w[j * rows + i];
        s += x * x;
    }
    red[lid] = s;
    __syncthreads();
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (lid < h) {
            red[lid] += red[lid + h];
        }
        __syncthreads();
    }
    if (lid == 0 && j < cols) {
        norms[j] = (T)sqrt(red[0]);
    }
}

template <typename T>
__device__ void qr_rotations(const u64 rows, const uint cols, const uint step, const T *a, T *cs) {
    const u64 j = (u64)blockIdx.x * WG + threadIdx.x;
    const long long i = (long long)rows - 1 - (long long)step + 2 * (long long)j;
    if (j >= cols || i <= (long long)j || i >= (long long)rows) {
        return;
    }
    const T x = a[j * rows + i - 1], y = a[j * rows + i];
    // Scaled by max(|x|, |y|) first: with subnormal x, y the quotients by hypot(x, y) would
    // be quantised and the rotation not orthogonal (as the CPU backend's givens()).
    T c = 1, s = 0;
    const T scale = fmax(fabs(x), fabs(y));
    if (y != T(0) && scale > T(0)) {
        const T xs = x / scale, ys = y / scale;
        const T r = hypot(xs, ys);
        if (r > T(0)) {
            c = xs / r;
            s = ys / r;
        }
    }
    cs[2 * (j * rows + i)] = c;
    cs[2 * (j * rows + i) + 1] = s;
}

template <typename T>
__device__ void qr_apply(const u64 rows, const uint cols, const uint step, T *a, const T *cs) {
    const u64 jspan = ((u64)cols + WG - 1) / WG * WG;
    const u64 gid = (u64)blockIdx.x * WG + threadIdx.x;
    const u64 j = gid % jspan, k = gid / jspan;
    const long long i = (long long)rows - 1 - (long long)step + 2 * (long long)j;
    if (j >= cols || k >= cols || k < j || i <= (long long)j || i >= (long long)rows) {
        return;
    }
    const T c = cs[2 * (j * rows + i)], s = cs[2 * (j * rows + i) + 1];
    const T x = a[k * rows + i - 1], y = a[k * rows + i];
    a[k * rows + i - 1] = c * x + s * y;
    a[k * rows + i] = k == j ? T(0) : c * y - s * x;
}

template <typename T>
__device__ void qr_apply_q(const u64 rows, const uint qcols, const uint jcols, const uint step,
                           T *q, const T *cs) {
    const u64 jspan = ((u64)jcols + WG - 1) / WG * WG;
    const u64 gid = (u64)blockIdx.x * WG + threadIdx.x;
    const u64 j = gid % jspan, k = gid / jspan;
    const long long i = (long long)rows - 1 - (long long)step + 2 * (long long)j;
    if (j >= jcols || k >= qcols || i <= (long long)j || i >= (long long)rows) {
        return;
    }
    const T c = cs[2 * (j * rows + i)], s = cs[2 * (j * rows + i) + 1];
    const T x = q[k * rows + i - 1], y = q[k * rows + i];
    q[k * rows + i - 1] = c * x - s * y;
    q[k * rows + i] = s * x + c * y;
}


// ---- Tree ("TSQR") Givens QR: trident_core::svd::tree (host reference tree_qr /
// tree_apply_q, same steps and ranges), as svd.cl. Barriers are uniform: every bound below
// depends only on kernel arguments and the block index.

// (c, s) zeroing y against x: trident_core::svd::tree::givens_cs.
template <typename T>
__device__ __forceinline__ void givens_cs(T x, T y, T *c, T *s) {
    *c = 1;
    *s = 0;
    const T scale = fmax(fabs(x), fabs(y));
    if (y != T(0) && scale > T(0)) {
        const T xs = x / scale, ys = y / scale;
        const T r = hypot(xs, ys);
        if (r > T(0)) {
            *c = xs / r;
            *s = ys / r;
        }
    }
}

// givens_cs with a shorter dependency chain, for the merge panels' serial stages: the pair
// scaled by the power of two 2^-e of max(|x|, |y|) (exact, subnormal inputs included), then
// one rsqrt instead of hypot and two divisions; within a few ulps of givens_cs.
template <typename T>
__device__ __forceinline__ void givens_cs_fast(T x, T y, T *c, T *s) {
    *c = 1;
    *s = 0;
    const T scale = fmax(fabs(x), fabs(y));
    if (y != T(0) && scale > T(0)) {
        int e;
        frexp(scale, &e);
        const T xs = ldexp(x, -e), ys = ldexp(y, -e);
        const T ir = rsqrt(xs * xs + ys * ys);
        *c = xs * ir;
        *s = ys * ir;
    }
}

// The transposed rotation of rows x, y of column k.
template <typename T>
__device__ __forceinline__ void rot_rows_t(T *q, u64 rows, u64 k, u64 x, u64 y, T c, T s) {
    const T u = q[k * rows + x], v = q[k * rows + y];
    q[k * rows + x] = c * u - s * v;
    q[k * rows + y] = s * u + c * v;
}

// Panel of block p: first row and height.
__device__ __forceinline__ void tree_leaf(u64 rows, uint h, u64 p, u64 *base, u64 *hp) {
    *base = p * h;
    *hp = *base < rows ? min((u64)h, rows - *base) : 0;
}

// Leaf steps and the rotation range [lo, hi) of step s (TreePlan::leaf_steps / leaf_range).
__device__ __forceinline__ u64 leaf_jc(u64 hp, uint cols) { return hp == 0 ? 0 : min(hp - 1, (u64)cols); }
__device__ __forceinline__ u64 leaf_steps(u64 hp, u64 jc) { return jc == 0 ? 0 : hp - 2 + jc; }
__device__ __forceinline__ u64 leaf_lo(u64 hp, u64 s) { return s + 2 > hp ? s + 2 - hp : 0; }
__device__ __forceinline__ u64 leaf_hi(u64 jc, u64 s, u64 lo) { return max(lo, min(s / 2 + 1, jc)); }

// Merge g of a level: tops a, b and the absorbed height kb (0: nothing to merge).
__device__ __forceinline__ void tree_merge(u64 rows, uint cols, uint h, uint level, u64 g, u64 *ta,
                                           u64 *tb, u64 *kb) {
    const u64 span = (u64)h << level;
    *ta = 2 * g * span;
    *tb = *ta + span;
    *kb = *tb < rows ? min((u64)cols, rows - *tb) : 0;
}

// The tree kernels run in blocks of QWG = 1024 threads (four times WG: a leaf or merge is one
// block, so its serial chain of steps is shared by as many threads as the device allows). A
// step's rotations act on an n x cols (or n x qcols) set of elements (x, k) = (e mod n, e / n);
// thread lid takes e = lid, lid + QWG, ..., stepped without a 64-bit division per element:
// elem_first once per step, elem_next per element, while k < cols. n = 0 gives no elements.
__device__ __forceinline__ void elem_first(u64 n, uint lid, u64 *x, u64 *k, u64 *dx, u64 *dk) {
    if (n == 0) {
        *x = 0;
        *k = ~(u64)0;
        *dx = 0;
        *dk = 0;
        return;
    }
    *x = lid % n;
    *k = lid / n;
    *dx = QWG % n;
    *dk = QWG / n;
}
__device__ __forceinline__ void elem_next(u64 n, u64 dx, u64 dk, u64 *x, u64 *k) {
    *x += dx;
    *k += dk;
    if (*x >= n) {
        *x -= n;
        *k += 1;
    }
}

// Merges by panels of MP columns (svd.cl's qr_tree_merge_panel / qr_tree_merge_update, same
// schedule): per panel, _panel makes the panel's rotations and applies them to the panel's
// own columns, then _update applies them to the columns right of the panel. Rotation (i, j)
// is the reference's; T2 row i meets T1 rows j = i, i + 1, ... in order and T1 row j meets
// T2 rows i = 0, 1, ... in order, as in the wavefront; only the schedule differs.
constexpr uint MP = 32;
constexpr uint UC = WG / MP;
// The update kernels (qr_tree_leaf_update, qr_tree_merge_update): UCPT columns per thread,
// UCOLS = UC UCPT per block (trident_core::svd::tree::UPDATE_COLS). A lane's (c, s) at a
// stage is the same for every column, so a thread rotating several columns shares its
// loads and barriers among them.
constexpr uint UCPT = 4;
constexpr uint UCOLS = UC * UCPT;
static_assert(QWG == MP * MP, "qr_tree_merge_panel: one thread per element of an MP x MP block");

// Wave `wave` of the merges (trident_core::svd::TreePlan::wave_tasks): the panels (level l,
// columns from j0 = MP (wave - l)) for l = max(0, wave + 1 - ceil(cols / MP)) .. min(wave,
// levels - 1), level ascending, each taking merges(l) blocks (_panel) or merges(l) x spans
// blocks (_update: spans of UCOLS columns right of the panel). The panel of block blk and the
// block's index in it; false past the last panel (the block idles, uniformly).
__device__ __forceinline__ bool wave_task(u64 rows, uint cols, uint h, uint levels, uint wave,
                                          bool update, u64 blk, uint *level, uint *j0, u64 *idx) {
    const uint npanels = (cols + MP - 1) / MP;
    const u64 leaves = max((rows + h - 1) / h, (u64)1);
    for (uint l = wave + 1 > npanels ? wave + 1 - npanels : 0; l < levels && l <= wave; ++l) {
        const uint p0 = (wave - l) * MP;
        const u64 merges = ((leaves + (1ull << l) - 1) >> l) / 2;
        const uint right = cols > p0 + MP ? cols - p0 - MP : 0;
        const u64 n = update ? merges * ((right + UCOLS - 1) / UCOLS) : merges;
        if (blk < n) {
            *level = l;
            *j0 = p0;
            *idx = blk;
            return true;
        }
        blk -= n;
    }
    return false;
}

// Leaves by panels of MP columns j0 = 0, 32, ..., in order: _panel (QWG threads, one block per
// leaf) makes the panel's rotations and applies them to its columns, _update (WG threads, UC
// columns each) applies them to the columns right of it. This is the leaf's Sameh-Kuck order
// taken column by column: two of its rotations that share a row come in column order (the
// step of (g, j) is hp - 1 + 2 j - g), so every row pair meets its rotations in the same
// order, and panels keep the rows in registers and shared memory instead of going through
// global memory at every step.
//
// Lane l < wr = min(MP, jc - j0) zeroes column j = j0 + l bottom-up: it carries one row and
// takes the rows hp - 1, hp - 2, ..., j in turn (row hp - 1 - n at stage n + 2 l: lane 0 from
// a, lane l > 0 as lane l - 1 emits them, one stage later); each incoming row is the upper of
// a rotation against the carried one and becomes the carried row, the old one is emitted with
// column j exactly zero (the rotation zeroing (g, j), g = hp - n local, (c, s) to cs at
// (base + g, j)). The last lane writes the emitted rows back, every lane its final row j.
template <typename T>
__device__ void qr_tree_leaf_panel(const u64 rows, const uint cols, const uint h, const uint j0,
                                   T *a, T *cs) {
    __shared__ T inb[MP][MP + 1];
    __shared__ T buf[2][MP][MP + 1];
    __shared__ T piv[2][MP];
    const uint lid = threadIdx.x;
    const uint l = lid / MP, c = lid % MP;
    u64 base, hp;
    tree_leaf(rows, h, blockIdx.x, &base, &hp);
    const u64 jc = leaf_jc(hp, cols);
    if (j0 >= jc) {
        return;  // uniform: nothing to zero in this panel
    }
    const uint wr = (uint)min((u64)MP, jc - j0);
    const uint wd = min(MP, cols - j0);
    const u64 nin = hp - j0;
    const u64 stages = nin + wr - 1;
    const u64 k = j0 + c;
    T x = 0;
    for (u64 s = 0; s < stages; ++s) {
        const uint p = s & 1;
        if (s % MP == 0 && s < nin) {
            // Lane 0's next MP rows (hp - 1 - s - q), read down the columns.
            const uint q = lid % MP, cc = lid / MP;
            inb[q][cc] = s + q < nin && cc < wd ? a[(j0 + cc) * rows + base + hp - 1 - s - q] : T(0);
            __syncthreads();
        }
        const long long n = (long long)s - 2 * (long long)l;
        if (l < wr && n >= 0 && n < (long long)(nin - l)) {
            const T y = l == 0 ? inb[s % MP][c] : buf[p][l - 1][c];
            if (n == 0) {
                x = y;
            } else {
                const T yp = l == 0 ? inb[s % MP][l] : buf[p][l - 1][l];
                T cr, sr;
                givens_cs_fast(yp, piv[p][l], &cr, &sr);
                T e = x;
                if (c >= l) {
                    e = c == l ? T(0) : cr * x - sr * y;
                    x = cr * y + sr * x;
                } else {
                    x = y;
                }
                const u64 g = base + hp - (u64)n;
                if (c == l) {
                    cs[2 * ((u64)(j0 + l) * rows + g)] = cr;
                    cs[2 * ((u64)(j0 + l) * rows + g) + 1] = sr;
                }
                if (l == wr - 1) {
                    if (c < wd) {
                        a[k * rows + g] = e;
                    }
                } else {
                    buf[1 - p][l][c] = e;
                }
            }
        }
        if (l == c) {
            piv[1 - p][l] = x;
        }
        __syncthreads();
    }
    if (l < wr && c < wd) {
        a[k * rows + base + j0 + l] = x;
    }
}

// (c, s) of lane l's rotation at stage s of qr_tree_leaf_update (identity when it has none).
template <typename T>
__device__ __forceinline__ void leaf_cs(const T *cs, u64 rows, u64 base, u64 hp, u64 nin, uint wr,
                                        uint j0, uint l, u64 s, T *c, T *sn) {
    const long long n = (long long)s - 2 * (long long)l;
    *c = 1;
    *sn = 0;
    if (l < wr && n >= 1 && n < (long long)(nin - l)) {
        const u64 at = 2 * ((u64)(j0 + l) * rows + base + hp - (u64)n);
        *c = cs[at];
        *sn = cs[at + 1];
    }
}

// The rotations of leaf panel j0 on the columns k >= j0 + MP: block t takes leaf t / spans and
// UCOLS columns (thread (q, l) columns q, q + UC, ...); per column, lane l carries a row as in
// qr_tree_leaf_panel and the rows flow through the lanes the same way, (c, s) read a stage
// ahead.
template <typename T>
__device__ void qr_tree_leaf_update(const u64 rows, const uint cols, const uint h, const uint j0,
                                    T *a, const T *cs) {
    __shared__ T inb[UCOLS][MP];
    __shared__ T buf[2][UCOLS][MP];
    const uint lid = threadIdx.x;
    const uint q = lid / MP, l = lid % MP;
    const uint k1 = j0 + MP;
    const uint spans = (cols - k1 + UCOLS - 1) / UCOLS;
    const u64 k0 = k1 + (u64)(blockIdx.x % spans) * UCOLS;
    u64 base, hp;
    tree_leaf(rows, h, blockIdx.x / spans, &base, &hp);
    const u64 jc = leaf_jc(hp, cols);
    if (j0 >= jc) {
        return;  // uniform
    }
    const uint wr = (uint)min((u64)MP, jc - j0);
    const u64 nin = hp - j0;
    const u64 stages = nin + wr - 1;
    T x[UCPT];
#pragma unroll
    for (uint u = 0; u < UCPT; ++u) {
        x[u] = 0;
    }
    T cn, sn;
    leaf_cs(cs, rows, base, hp, nin, wr, j0, l, 0, &cn, &sn);
    for (u64 s = 0; s < stages; ++s) {
        const uint p = s & 1;
        if (s % MP == 0 && s < nin) {
#pragma unroll
            for (uint u = 0; u < UCPT; ++u) {
                const u64 k = k0 + q + UC * u;
                inb[q + UC * u][l] = k < cols && s + l < nin ? a[k * rows + base + hp - 1 - s - l] : T(0);
            }
            __syncthreads();
        }
        const T cr = cn, sr = sn;
        leaf_cs(cs, rows, base, hp, nin, wr, j0, l, s + 1, &cn, &sn);
        const long long n = (long long)s - 2 * (long long)l;
        if (l < wr && n >= 0 && n < (long long)(nin - l)) {
#pragma unroll
            for (uint u = 0; u < UCPT; ++u) {
                const uint col = q + UC * u;
                const T y = l == 0 ? inb[col][s % MP] : buf[p][col][l - 1];
                if (n == 0) {
                    x[u] = y;
                } else {
                    const T e = cr * x[u] - sr * y;
                    x[u] = cr * y + sr * x[u];
                    if (l == wr - 1) {
                        if (k0 + col < cols) {
                            a[(k0 + col) * rows + base + hp - (u64)n] = e;
                        }
                    } else {
                        buf[1 - p][col][l] = e;
                    }
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (uint u = 0; u < UCPT; ++u) {
        const u64 k = k0 + q + UC * u;
        if (k < cols && l < wr) {
            a[k * rows + base + j0 + l] = x[u];
        }
    }
}

// Panel j0 .. j0 + w of merge g (the block): thread (l, c) = (lid / MP, lid % MP) keeps T1
// element (a + j0 + l, j0 + c) in a register; T2 rows i < rr flow through the rows of
// threads (row l takes T2 row s - l at stage s, one barrier per stage) and are rotated
// against T1 row j0 + l when s - l <= j0 + l; the last row writes them back.
template <typename T>
__device__ void qr_tree_merge_panel(const u64 rows, const uint cols, const uint h, const uint levels,
                                    const uint wave, T *a, T *cs) {
    __shared__ T inb[MP][MP + 1];
    __shared__ T buf[2][MP][MP + 1];
    __shared__ T piv[2][MP];
    const uint lid = threadIdx.x;
    const uint l = lid / MP, c = lid % MP;
    uint level, j0;
    u64 g;
    if (!wave_task(rows, cols, h, levels, wave, false, blockIdx.x, &level, &j0, &g)) {
        return;
    }
    u64 ta, tb, kb;
    tree_merge(rows, cols, h, level, g, &ta, &tb, &kb);
    const uint w = min(MP, cols - j0);
    const u64 rr = min(kb, (u64)(j0 + w));
    const u64 j = j0 + l, k = j0 + c;
    T x = l < w && c < w ? a[k * rows + ta + j] : T(0);
    if (l == c) {
        piv[0][l] = x;
    }
    __syncthreads();
    const u64 stages = rr == 0 ? 0 : rr + w - 1;
    for (u64 s = 0; s < stages; ++s) {
        const uint p = s & 1;
        if (s % MP == 0 && s < rr) {
            // The next MP T2 rows of the panel, read down the columns.
            const uint q = lid % MP, cc = lid / MP;
            inb[q][cc] = s + q < rr && cc < w ? a[(j0 + cc) * rows + tb + s + q] : T(0);
            __syncthreads();
        }
        const long long i = (long long)s - (long long)l;
        if (l < w && i >= 0 && i < (long long)rr) {
            T y = l == 0 ? inb[s % MP][c] : buf[p][l - 1][c];
            if ((u64)i <= j) {
                const T yp = l == 0 ? inb[s % MP][l] : buf[p][l - 1][l];
                T cr, sr;
                givens_cs_fast(piv[p][l], yp, &cr, &sr);
                if (c >= l && c < w) {
                    const T x2 = cr * x + sr * y;
                    y = c == l ? T(0) : cr * y - sr * x;
                    x = x2;
                }
                if (c == l) {
                    cs[2 * (j * rows + tb + i)] = cr;
                    cs[2 * (j * rows + tb + i) + 1] = sr;
                }
            }
            if (l == w - 1) {
                if (c < w) {
                    a[k * rows + tb + i] = y;
                }
            } else {
                buf[1 - p][l][c] = y;
            }
        }
        if (l == c) {
            piv[1 - p][l] = x;
        }
        __syncthreads();
    }
    if (l < w && c < w) {
        a[k * rows + ta + j] = x;
    }
}

// (c, s) of lane l's rotation at stage s of qr_tree_merge_update (identity when it has none).
template <typename T>
__device__ __forceinline__ void merge_cs(const T *cs, u64 rows, u64 tb, u64 rr, uint w, u64 j0,
                                         uint l, u64 s, T *c, T *sn) {
    const long long i = (long long)s - (long long)l;
    *c = 1;
    *sn = 0;
    if (l < w && i >= 0 && i < (long long)rr && (u64)i <= j0 + l) {
        *c = cs[2 * ((j0 + l) * rows + tb + i)];
        *sn = cs[2 * ((j0 + l) * rows + tb + i) + 1];
    }
}

// The rotations of panel j0 on the columns k >= j0 + w: block t takes merge t / spans and
// UCOLS columns (thread (q, l) columns q, q + UC, ...); per column, lane l keeps T1 element
// (a + j0 + l, k) and the T2 elements flow through the lanes as in qr_tree_merge_panel, (c, s)
// read a stage ahead.
template <typename T>
__device__ void qr_tree_merge_update(const u64 rows, const uint cols, const uint h,
                                     const uint levels, const uint wave, T *a, const T *cs) {
    __shared__ T inb[UCOLS][MP];
    __shared__ T buf[2][UCOLS][MP];
    const uint lid = threadIdx.x;
    const uint q = lid / MP, l = lid % MP;
    uint level, j0;
    u64 t;
    if (!wave_task(rows, cols, h, levels, wave, true, blockIdx.x, &level, &j0, &t)) {
        return;
    }
    const uint w = min(MP, cols - j0);
    const uint k1 = j0 + w;
    const uint spans = (cols - k1 + UCOLS - 1) / UCOLS;
    const u64 k0 = k1 + (u64)(t % spans) * UCOLS;
    u64 ta, tb, kb;
    tree_merge(rows, cols, h, level, t / spans, &ta, &tb, &kb);
    const u64 rr = min(kb, (u64)k1);
    const u64 j = j0 + l;
    T x[UCPT];
#pragma unroll
    for (uint u = 0; u < UCPT; ++u) {
        const u64 k = k0 + q + UC * u;
        x[u] = k < cols && l < w ? a[k * rows + ta + j] : T(0);
    }
    const u64 stages = rr == 0 ? 0 : rr + w - 1;
    T cn, sn;
    merge_cs(cs, rows, tb, rr, w, j0, l, 0, &cn, &sn);
    for (u64 s = 0; s < stages; ++s) {
        const uint p = s & 1;
        if (s % MP == 0 && s < rr) {
#pragma unroll
            for (uint u = 0; u < UCPT; ++u) {
                const u64 k = k0 + q + UC * u;
                inb[q + UC * u][l] = k < cols && s + l < rr ? a[k * rows + tb + s + l] : T(0);
            }
            __syncthreads();
        }
        const T cr = cn, sr = sn;
        merge_cs(cs, rows, tb, rr, w, j0, l, s + 1, &cn, &sn);
        const long long i = (long long)s - (long long)l;
        if (l < w && i >= 0 && i < (long long)rr) {
#pragma unroll
            for (uint u = 0; u < UCPT; ++u) {
                const uint col = q + UC * u;
                T y = l == 0 ? inb[col][s % MP] : buf[p][col][l - 1];
                const T x2 = cr * x[u] + sr * y;
                y = cr * y - sr * x[u];
                x[u] = x2;
                if (l == w - 1) {
                    if (k0 + col < cols) {
                        a[(k0 + col) * rows + tb + i] = y;
                    }
                } else {
                    buf[1 - p][col][l] = y;
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (uint u = 0; u < UCPT; ++u) {
        const u64 k = k0 + q + UC * u;
        if (k < cols && l < w) {
            a[k * rows + ta + j] = x[u];
        }
    }
}

// Work-group `gid` of a Q launch over `groups` leaves or merges, with q's columns split into
// spans of `kspan`: the leaf or merge `*g` and the columns `*k0 .. *k0 + *kn`.
__device__ __forceinline__ void q_group(u64 gid, uint qcols, uint kspan, u64 *g, uint *k0, uint *kn) {
    const uint span = max(kspan, 1u);
    const uint spans = (qcols + span - 1) / span;
    *g = gid / spans;
    *k0 = (uint)(gid % spans) * span;
    *kn = min(span, qcols - *k0);
}

// The transposed rotations of panel j0 of one merge level, in reverse order, on the qcols
// columns of q: block t takes merge t / spans and UC columns; per column, lane l keeps q's
// row a + j0 + l and q's rows b + i flow through the lanes backwards
// (qr_tree_merge_update's stages reversed), (c, s) read a stage ahead.
template <typename T>
__device__ void qr_tree_merge_q(const u64 rows, const uint qcols, const uint cols, const uint h,
                                const uint level, const uint j0, T *q, const T *cs) {
    __shared__ T inb[UC][MP];
    __shared__ T buf[2][UC][MP];
    const uint lid = threadIdx.x;
    const uint qq = lid / MP, l = lid % MP;
    const uint w = min(MP, cols - j0);
    const uint spans = (qcols + UC - 1) / UC;
    const u64 k = (u64)(blockIdx.x % spans) * UC + qq;
    u64 ta, tb, kb;
    tree_merge(rows, cols, h, level, blockIdx.x / spans, &ta, &tb, &kb);
    const u64 rr = min(kb, (u64)(j0 + w));
    const bool live = k < qcols;
    const u64 j = j0 + l;
    T x = live && l < w ? q[k * rows + ta + j] : T(0);
    const u64 stages = rr == 0 ? 0 : rr + w - 1;
    T cn, sn;
    merge_cs(cs, rows, tb, rr, w, j0, l, stages - 1, &cn, &sn);
    for (u64 r = 0; r < stages; ++r) {
        // Reverse stage r is forward stage s: lane l takes row s - l.
        const u64 s = stages - 1 - r;
        const uint p = r & 1;
        if (r % MP == 0 && r < rr) {
            // Rows rr - 1 - r - l, the next MP to enter (at lane w - 1).
            inb[qq][l] = live && r + l < rr ? q[k * rows + tb + (rr - 1 - r - l)] : T(0);
            __syncthreads();
        }
        const T cr = cn, sr = sn;
        if (s > 0) {
            merge_cs(cs, rows, tb, rr, w, j0, l, s - 1, &cn, &sn);
        }
        const long long i = (long long)s - (long long)l;
        if (l < w && i >= 0 && i < (long long)rr) {
            T y = l == w - 1 ? inb[qq][r % MP] : buf[p][qq][l + 1];
            const T x2 = cr * x - sr * y;
            y = sr * x + cr * y;
            x = x2;
            if (l == 0) {
                if (live) {
                    q[k * rows + tb + i] = y;
                }
            } else {
                buf[1 - p][qq][l] = y;
            }
        }
        __syncthreads();
    }
    if (live && l < w) {
        q[k * rows + ta + j] = x;
    }
}

template <typename T>
__device__ void qr_tree_leaf_q(const u64 rows, const uint qcols, const uint cols, const uint h,
                               const uint kspan, T *q, const T *cs) {
    const uint lid = threadIdx.x;
    u64 p, base, hp;
    uint k0, kn;
    q_group(blockIdx.x, qcols, kspan, &p, &k0, &kn);
    tree_leaf(rows, h, p, &base, &hp);
    const u64 jc = leaf_jc(hp, cols);
    for (u64 s = leaf_steps(hp, jc); s-- > 0;) {
        const u64 lo = leaf_lo(hp, s), hi = leaf_hi(jc, s, lo), nj = hi - lo;
        u64 x, k, dx, dk;
        for (elem_first(nj, lid, &x, &k, &dx, &dk); k < kn; elem_next(nj, dx, dk, &x, &k)) {
            const u64 j = lo + x;
            const u64 g = base + hp - 1 + 2 * j - s;
            rot_rows_t(q, rows, k0 + k, g - 1, g, cs[2 * (j * rows + g)], cs[2 * (j * rows + g) + 1]);
        }
        __syncthreads();
    }
}

// qr_tree_leaf_q with the block's slab of q in shared memory (hp x kn values, row by row,
// dynamic): loaded once, the leaf's steps run on it in reverse with one barrier per
// step, written back once. The rotations of a step act on disjoint row pairs, so the items
// (rotation, column) of a step are independent.
template <typename T>
__device__ void qr_tree_leaf_q_local(const u64 rows, const uint qcols, const uint cols,
                                     const uint h, const uint kspan, T *q, const T *cs) {
    extern __shared__ __align__(16) unsigned char leaf_q_smem[];
    T *slab = reinterpret_cast<T *>(leaf_q_smem);
    const uint lid = threadIdx.x;
    u64 p, base, hp64;
    uint k0, kn;
    q_group(blockIdx.x, qcols, kspan, &p, &k0, &kn);
    tree_leaf(rows, h, p, &base, &hp64);
    const uint hp = (uint)hp64;
    const uint jc = (uint)leaf_jc(hp64, cols);
    for (uint e = lid; e < hp * kn; e += WG) {
        slab[(e % hp) * kn + e / hp] = q[(u64)(k0 + e / hp) * rows + base + e % hp];
    }
    __syncthreads();
    for (uint s = (uint)leaf_steps(hp64, jc); s-- > 0;) {
        const uint lo = (uint)leaf_lo(hp64, s), nj = (uint)leaf_hi(jc, s, lo) - lo;
        // Consecutive work-items: one rotation, consecutive columns (one (c, s) load
        // shared by the columns, consecutive local-memory words).
        for (uint e = lid; e < nj * kn; e += WG) {
            const uint k = e % kn, j = lo + e / kn, r = hp - 1 + 2 * j - s;
            const u64 at = 2 * ((u64)j * rows + base + r);
            const T c = cs[at], sn = cs[at + 1];
            const T u = slab[(r - 1) * kn + k], v = slab[r * kn + k];
            slab[(r - 1) * kn + k] = c * u - sn * v;
            slab[r * kn + k] = sn * u + c * v;
        }
        __syncthreads();
    }
    for (uint e = lid; e < hp * kn; e += WG) {
        q[(u64)(k0 + e / hp) * rows + base + e % hp] = slab[(e % hp) * kn + e / hp];
    }
}

}  // namespace

#define TRIDENT_SVD_KERNELS(T, S)                                                              \
    extern "C" __global__ void __launch_bounds__(WG)                                           \
        svd_jacobi_round_##S(u64 rows, uint cols, uint b, uint nb, uint round, T tol, T tiny, \
                             T noise_rel, T *w, T *v, u64 vrows, uint *off_bits,             \
                             uint *gmax_bits) {                                              \
        svd_jacobi_round<T>(rows, cols, b, nb, round, tol, tiny, noise_rel, w, v, vrows,       \
                            off_bits, gmax_bits);                                              \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) svd_pair_gram_##S(                        \
        u64 rows, uint cols, uint b, uint nb, uint round, uint chunks, const T *w, T *gpart) { \
        svd_pair_gram<T>(rows, cols, b, nb, round, chunks, w, gpart);                          \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(RWG) svd_pair_rotate_##S(                     \
        uint b, uint chunks, T tol, T tiny, T noise_rel, const T *gpart, T *qbuf,              \
        uint *off_bits, uint *gmax_bits) {                                                     \
        svd_pair_rotate<RWG, T>(b, chunks, tol, tiny, noise_rel, gpart, qbuf, off_bits,       \
                                 gmax_bits);                                                 \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) svd_pair_apply_##S(                       \
        u64 rows, u64 vrows, uint cols, uint b, uint nb, uint round, uint chunks,              \
        const T *qbuf, T *w, T *v) {                                                           \
        svd_pair_apply<T>(rows, vrows, cols, b, nb, round, chunks, qbuf, w, v);                \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) svd_copy_rows_##S(                        \
        u64 src_rows, u64 dst_rows, u64 nrows, uint cols, uint upper, const T *src, T *dst) {  \
        svd_copy_rows<T>(src_rows, dst_rows, nrows, cols, upper, src, dst);                    \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG)                                           \
        svd_column_norms_##S(u64 rows, uint cols, const T *w, T *norms) {                    \
        svd_column_norms<T>(rows, cols, w, norms);                                             \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) svd_from_rows_##S(                        \
        u64 m, u64 n, uint transpose, T scale, const T *src, T *dst) {                         \
        svd_from_rows<T>(m, n, transpose, scale, src, dst);                                    \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) svd_gather_cols_##S(                      \
        u64 rows, u64 ncols, uint as_rows, const uint *order, const T *scale, const T *src,   \
        T *dst) {                                                                              \
        svd_gather_cols<T>(rows, ncols, as_rows, order, scale, src, dst);                      \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG)                                           \
        qr_rotations_##S(u64 rows, uint cols, uint step, const T *a, T *cs) {                \
        qr_rotations<T>(rows, cols, step, a, cs);                                              \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG)                                           \
        qr_apply_##S(u64 rows, uint cols, uint step, T *a, const T *cs) {                    \
        qr_apply<T>(rows, cols, step, a, cs);                                                  \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) qr_apply_q_##S(                           \
        u64 rows, uint qcols, uint jcols, uint step, T *q, const T *cs) {                    \
        qr_apply_q<T>(rows, qcols, jcols, step, q, cs);                                        \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(QWG) qr_tree_leaf_panel_##S(                  \
        u64 rows, uint cols, uint h, uint j0, T *a, T *cs) {                                   \
        qr_tree_leaf_panel<T>(rows, cols, h, j0, a, cs);                                       \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) qr_tree_leaf_update_##S(                  \
        u64 rows, uint cols, uint h, uint j0, T *a, const T *cs) {                             \
        qr_tree_leaf_update<T>(rows, cols, h, j0, a, cs);                                      \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(QWG) qr_tree_merge_panel_##S(                 \
        u64 rows, uint cols, uint h, uint levels, uint wave, T *a, T *cs) {                    \
        qr_tree_merge_panel<T>(rows, cols, h, levels, wave, a, cs);                            \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) qr_tree_merge_update_##S(                 \
        u64 rows, uint cols, uint h, uint levels, uint wave, T *a, const T *cs) {              \
        qr_tree_merge_update<T>(rows, cols, h, levels, wave, a, cs);                           \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) qr_tree_merge_q_##S(                      \
        u64 rows, uint qcols, uint cols, uint h, uint level, uint j0, T *q, const T *cs) {     \
        qr_tree_merge_q<T>(rows, qcols, cols, h, level, j0, q, cs);                            \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(QWG) qr_tree_leaf_q_##S(                      \
        u64 rows, uint qcols, uint cols, uint h, uint kspan, T *q, const T *cs) {              \
        qr_tree_leaf_q<T>(rows, qcols, cols, h, kspan, q, cs);                                 \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG) qr_tree_leaf_q_local_##S(                 \
        u64 rows, uint qcols, uint cols, uint h, uint kspan, T *q, const T *cs) {              \
        qr_tree_leaf_q_local<T>(rows, qcols, cols, h, kspan, q, cs);                           \
    }

TRIDENT_SVD_KERNELS(float, f32)
TRIDENT_SVD_KERNELS(double, f64)

// One-sided block Jacobi SVD and Givens QR (trident_core::svd; the host driver is
// trident_core::svd::driver; the host code, for both dialects, crates/core/src/svd/device.rs).
//
// One source for OpenCL and CUDA (the dialect: kernels/common/dialect.h; the CUDA build:
// kernels/cuda/svd.cu), and for both precisions: built with REAL = float, SUFFIX = f32 and
// REAL = double, SUFFIX = f64, TRIDENT_FP64; kernel names end in _f32 / _f64. The dialects
// differ in three places only (#ifdef TRIDENT_CUDA): group_max and the "rotated" vote of
// pair_rotation (CUDA: warp shuffles and a block vote; OpenCL: a tree in local memory), and
// the grid of qr_apply / qr_apply_q (grid_jk: CUDA's 1-D grid, OpenCL's 2-D NDRange).
//
// Launch shape: a 1-D grid of 1-D work-groups of WG = 256 work-items, svd_pair_rotate's of
// RWG = 512, the qr_tree_* kernels' (but qr_tree_merge_update and _q) of QWG = 1024.
// qr_apply and qr_apply_q on CUDA split their 1-D grid themselves, (j, k) = (g mod jspan,
// g / jspan) with jspan = cols (resp. jcols) rounded up to WG (Device::FLAT_GRID); on
// OpenCL they take the equivalent 2-D NDRanges.
//
// Every matrix is column-major: element (i, j) of a matrix with `rows` rows is at
// j * rows + i (64-bit index arithmetic).
//
// Kernel arguments (both dialects, both precisions):
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
//       gmax_bits[0], order_key's bits (a float's, a double's top 32), raised by every
//       pair to its own largest and kept by the host across sweeps), then applies
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
//       Both in tiles of LT x LT = 32 x 32 of the output: ceil(r / 32) ceil(c / 32) groups
//       for an r x c column-major output (from_rows: m x n, or n x m when transpose;
//       gather_cols: ncols x rows, or rows x ncols when as_rows).
//   svd_copy_rows(ulong src_rows, ulong dst_rows, ulong nrows, uint cols, uint upper,
//                 const REAL *src, REAL *dst)
//       The top nrows rows of the cols columns of src into the top rows of dst (R out of a
//       factored matrix, J into zero-padded U space: the driver's device copies); zeros
//       below the diagonal when upper != 0. Work-item e: (i, j) = (e mod nrows, e / nrows),
//       ceil(nrows cols / WG) groups.
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
//       work-items, one group per leaf) makes the rotations of columns j0 .. j0 + 32 and
//       applies them to those columns; _update (WG work-items, UCOLS = 32 columns each, 4 per
//       work-item: leaves x ceil((cols - j0 - 32) / 32) groups, launched when columns remain)
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
//       _panel (QWG work-items, one group per merge of every panel of the wave) makes the
//       panel's rotations and applies them to its columns; _update (WG work-items, UCOLS =
//       32 columns each, 4 per work-item: merges x ceil((cols - j0 - 32) / 32) groups per
//       panel of the wave) applies them to the columns right of the panel. Groups
//       past the wave's panels idle.
//   qr_tree_merge_q(ulong rows, uint qcols, uint cols, uint h, uint level, uint j0,
//                   REAL *q, const REAL *cs)
//       The transposed rotations of merge panel j0 of one level, in reverse order, on the
//       qcols columns of q: merges x ceil(qcols / UC) groups of WG. Run for level = last
//       ... 0 and, within a level, j0 = last panel ... 0, then qr_tree_leaf_q, this forms Q q.
//   qr_tree_leaf_q(ulong rows, uint qcols, uint cols, uint h, uint kspan, REAL *q,
//                  const REAL *cs)
//       The transposed rotations of the leaves, steps reversed, on the qcols columns of q
//       (cols: the factored matrix's columns). The columns are independent, so they are
//       split into spans of kspan (TreePlan::q_span): panels x ceil(qcols / kspan) groups,
//       group p spans + c taking panel p and columns c kspan .. min(qcols, c kspan + kspan).
//   qr_tree_leaf_q_local(same arguments, local REAL *slab)
//       The same on WG work-items per group, the group's rows of its kspan columns held in
//       slab (h kspan values of local memory: LOCAL_PARAM, passed as Arg::Local; CUDA's
//       dynamic shared memory) and every step run there: one load and one store of q per
//       leaf instead of one per step. The host takes it when h kspan values fit
//       (TreePlan::leaf_q_span).
//
// Rotation formula and round-robin pairing: trident_core::svd::{jacobi_rotation,
// round_robin_pair}, mirrored below.

#if !defined(REAL) || !defined(SUFFIX)
#error "build svd.cl with REAL = float|double and SUFFIX = f32|f64"
#endif

// The accumulator of svd_column_norms: double where the device has it (CUDA always).
#if defined(TRIDENT_CUDA) || defined(TRIDENT_FP64) || defined(cl_khr_fp64)
#if !defined(TRIDENT_CUDA) && !defined(TRIDENT_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
typedef double WIDE;
#else
typedef float WIDE;
#endif

#define K(name) TRIDENT_CAT(name, TRIDENT_CAT(_, SUFFIX))

#define WG 256
#define QWG 1024
// Work-items per group of svd_pair_rotate.
#define RWG 512
#define BMAX 16
#define P (2 * BMAX)
#define TILE 32
#define LD (P + 1)
#if TILE != P
#error "REORTH keeps a P x LD matrix in tile"
#endif
#if P != 32 || WG != 256
#error "gram_rows and apply_q give each thread a 2 x 2 block of a 32 x 32 result"
#endif
// Inner sweeps per pair visit; NOISE_INNER_SWEEPS for a pair holding a rank-deficiency noise
// column (squared norm in (tiny, noise_rel gmax], noise_rel from the host):
// trident_core::svd::{INNER_SWEEPS, NOISE_INNER_SWEEPS, noise_level}.
#define INNER_SWEEPS 1
#define NOISE_INNER_SWEEPS 2

// Pair k of round r of the round-robin tournament on n (even) players, smaller first.
DEVICE void rr_pair(uint n, uint r, uint k, uint *x, uint *y)
{
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

// An order-preserving 32-bit key of a non-negative REAL and back: a float's bits, a double's
// top 32 bits (a lower bound within 2^-20). The driver scales f64 matrices so that squared
// column norms reach 2^1020, beyond float: a (float) cast would give inf and make every pair
// a noise pair.
#ifdef TRIDENT_FP64
DEVICE uint order_key(REAL x) { return (uint)(as_ulong(x) >> 32); }
DEVICE REAL from_order_key(uint k) { return as_double((ulong)k << 32); }
#else
DEVICE uint order_key(REAL x) { return as_uint(x); }
DEVICE REAL from_order_key(uint k) { return as_float(k); }
#endif

// The Jacobi rotation of trident_core::svd::jacobi_rotation; returns 0 when none is needed.
// c = 1 / sqrt(1 + t^2) as rsqrt (within an ulp or two; REORTH restores Q's orthogonality).
DEVICE int jacobi_rotation(REAL gpp, REAL gqq, REAL gpq, REAL tol, REAL tiny, REAL *c, REAL *s)
{
    if (!(gpp > tiny && gqq > tiny) || fabs(gpq) <= tol * sqrt(gpp) * sqrt(gqq)) {
        return 0;
    }
    const REAL zeta = (gqq - gpp) / ((REAL)2 * gpq);
    const REAL az = fabs(zeta);
    // past 1e15, 1 / (2 zeta) formed without zeta (on graded matrices zeta itself can overflow)
    const REAL t = az > (REAL)1e15 ? gpq / (gqq - gpp)
                                   : copysign((REAL)1, zeta) / (az + sqrt((REAL)1 + zeta * zeta));
    *c = rsqrt((REAL)1 + t * t);
    *s = *c * t;
    return 1;
}

// Column of slot t (0 <= t < 2b) of block pair (bi, bj), or -1 when past cols.
DEVICE long slot_col(uint t, uint b, uint bi, uint bj, uint cols)
{
    const ulong c = t < b ? (ulong)bi * b + t : (ulong)bj * b + (t - b);
    return c < cols ? (long)c : -1;
}

// x[slots] <- x[slots] Q for the pair's columns, rows r_begin .. r_end of a matrix with `rows`
// rows (the leading dimension), by tiles of TILE rows. Runs the same barriers whether or not
// `write` is set (see svd_jacobi_round).
DEVICE void apply_q(__global REAL *x, ulong rows, ulong r_begin, ulong r_end, uint b, uint bi,
                    uint bj, uint cols, LOCAL_PTR REAL *tile, LOCAL_PTR const REAL *q,
                    int write)
{
    const uint lid = get_local_id(0);
    const uint p = 2 * b;
    if (!write) {
        r_end = r_begin; // uniform: no tiles, no barriers
    }
    // Register blocking: thread (rp, ap) forms rows rp, rp + 16 of the tile times columns
    // ap, ap + 16 of q (2 x 2 outputs, one local load per multiply-add).
    const uint rp = lid % 16, ap = lid / 16;
    const long c0 = ap < p ? slot_col(ap, b, bi, bj, cols) : -1;
    const long c1 = ap + 16 < p ? slot_col(ap + 16, b, bi, bj, cols) : -1;
    for (ulong r0 = r_begin; r0 < r_end; r0 += TILE) {
        for (uint e = lid; e < P * TILE; e += WG) {
            const uint t = e / TILE, r = e % TILE;
            const long c = t < p ? slot_col(t, b, bi, bj, cols) : -1;
            tile[t * (TILE + 1) + r] = (c >= 0 && r0 + r < r_end) ? x[(ulong)c * rows + r0 + r] : (REAL)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (c0 >= 0 || c1 >= 0) {
            REAL s00 = 0, s01 = 0, s10 = 0, s11 = 0;
            for (uint t = 0; t < p; ++t) {
                const REAL t0 = tile[t * (TILE + 1) + rp], t1 = tile[t * (TILE + 1) + rp + 16];
                const REAL q0 = q[t * LD + ap], q1 = q[t * LD + ap + 16];
                s00 += t0 * q0;
                s01 += t0 * q1;
                s10 += t1 * q0;
                s11 += t1 * q1;
            }
            if (c0 >= 0) {
                if (r0 + rp < r_end) {
                    x[(ulong)c0 * rows + r0 + rp] = s00;
                }
                if (r0 + rp + 16 < r_end) {
                    x[(ulong)c0 * rows + r0 + rp + 16] = s10;
                }
            }
            if (c1 >= 0) {
                if (r0 + rp < r_end) {
                    x[(ulong)c1 * rows + r0 + rp] = s01;
                }
                if (r0 + rp + 16 < r_end) {
                    x[(ulong)c1 * rows + r0 + rp + 16] = s11;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Entry u (0 .. 3) of thread lid's 2 x 2 block of the P x P Gram matrix (gram_rows).
DEVICE void gram_entry(uint lid, uint u, uint *x, uint *y)
{
    *x = 2 * (lid / 16) + (u >> 1);
    *y = 2 * (lid % 16) + (u & 1);
}

// GRAM: acc (entries gram_entry(lid, u) of the P x P Gram matrix) += X^T X over rows
// r_begin .. r_end of the pair's columns of w (leading dimension rows), tiles of TILE rows.
DEVICE void gram_rows(__global const REAL *w, ulong rows, ulong r_begin, ulong r_end, uint b,
                      uint bi, uint bj, uint cols, LOCAL_PTR REAL *tile, REAL *acc)
{
    const uint lid = get_local_id(0);
    const uint p = 2 * b;
    for (ulong r0 = r_begin; r0 < r_end; r0 += TILE) {
        for (uint e = lid; e < P * TILE; e += WG) {
            const uint t = e / TILE, r = e % TILE;
            const long c = t < p ? slot_col(t, b, bi, bj, cols) : -1;
            tile[t * (TILE + 1) + r] = (c >= 0 && r0 + r < r_end) ? w[(ulong)c * rows + r0 + r] : (REAL)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // Register blocking: thread (lid / 16, lid % 16) forms the 2 x 2 block of entries
        // (x0 + i, y0 + j) (gram_entry), one local load per multiply-add.
        const uint x0 = 2 * (lid / 16), y0 = 2 * (lid % 16);
        if (x0 < p && y0 < p) {
            REAL s00 = 0, s01 = 0, s10 = 0, s11 = 0;
            for (uint r = 0; r < TILE; ++r) {
                const REAL a0 = tile[x0 * (TILE + 1) + r], a1 = tile[(x0 + 1) * (TILE + 1) + r];
                const REAL b0 = tile[y0 * (TILE + 1) + r], b1 = tile[(y0 + 1) * (TILE + 1) + r];
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
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Rows of chunk c (of `chunks`) of a `rows`-row matrix: chunks of ceil(rows / chunks) rows
// rounded up to TILE.
DEVICE void chunk_rows(ulong rows, uint chunks, uint c, ulong *r_begin, ulong *r_end)
{
    const ulong per = (rows + chunks - 1) / chunks;
    const ulong len = (per + TILE - 1) / TILE * TILE;
    *r_begin = min(rows, (ulong)c * len);
    *r_end = min(rows, *r_begin + len);
}

// Partner of player i in round r of the round-robin tournament on n (even) players (the
// pairs of rr_pair: (r + k, r - k) mod n - 1 meet, and r meets n - 1).
DEVICE uint rr_mate(uint n, uint r, uint i)
{
    const uint m = n - 1;
    if (i == m) {
        return r;
    }
    if (i == r) {
        return m;
    }
    return (2 * r + m - i) % m;
}

// Slots of group_max's scratch (red): CUDA one per warp (of at most 1024 threads), OpenCL
// one per work-item of the upper half of the largest group (RWG).
#ifdef TRIDENT_CUDA
#define RED_SLOTS 32
#else
#define RED_SLOTS (RWG / 2)
#endif

// The largest of v over the work-group of nt work-items (a power of two, at most 2
// RED_SLOTS; CUDA: a multiple of 32), for every work-item (barriers: call uniformly).
DEVICE REAL group_max(REAL v, LOCAL_PTR REAL *red, uint nt)
{
    const uint lid = get_local_id(0);
#ifdef TRIDENT_CUDA
    // A warp reduction by shuffles, then one over the warps through red[nt / 32].
    for (uint o = 16; o > 0; o >>= 1) {
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    if (lid % 32 == 0) {
        red[lid / 32] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    v = red[0];
    for (uint w = 1; w < nt / 32; ++w) {
        v = fmax(v, red[w]);
    }
#else
    // A tree in red[nt / 2]: the upper half's values (from `upper` on) meet the lower
    // half's, then halve.
    const uint upper = nt / 2;
    if (lid >= upper) {
        red[lid - upper] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < upper) {
        red[lid] = fmax(v, red[lid]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = upper / 2; h > 0; h >>= 1) {
        if (lid < h) {
            red[lid] = fmax(red[lid], red[lid + h]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    v = red[0];
#endif
    barrier(CLK_LOCAL_MEM_FENCE); // every work-item has read red before it is written again
    return v;
}

// The largest cosine |g_xy| / (sqrt g_xx sqrt g_yy) over x < y < p with g_xx, g_yy > tiny, for
// every work-item (barriers: call uniformly, after g is written).
DEVICE REAL max_cosine(LOCAL_PTR const REAL *g, LOCAL_PTR REAL *red, uint p, REAL tiny, uint nt)
{
    REAL off = 0;
    for (uint e = get_local_id(0); e < P * P; e += nt) {
        const uint x = e / P, y = e % P;
        if (x < y && y < p) {
            const REAL gx = g[x * LD + x], gy = g[y * LD + y];
            if (gx > tiny && gy > tiny) {
                off = fmax(off, fabs(g[x * LD + y]) / (sqrt(gx) * sqrt(gy)));
            }
        }
    }
    return group_max(off, red, nt);
}

// Local memory of pair_rotation: the Gram matrix and the accumulated rotation, each twice (a
// round reads one copy and writes the other), a round's rotations ((c_i, s_i) per index),
// the partners of every inner round, the reduction's and the noise level's scratch.
struct PairScratch {
    REAL g[2][P * LD];
    REAL q[2][P * LD];
    REAL red[RED_SLOTS];
    REAL rot[2 * P];
    REAL noise;
    uchar mate[(P - 1) * P];
};

// With the fresh Gram matrix in s->g[0] (after a barrier): the largest cosine into off_bits,
// then (when above tol) the inner sweeps accumulating Q, then the Bjorck step (REORTH).
// Returns Q (P x LD, in s) and sets *any to whether a rotation was made (uniform). nt
// work-items (a power of two and a multiple of 32, at least WG).
//
// A round of a sweep rotates the b disjoint pairs (x, y) of the round-robin order at once:
// G <- J^T G J and Q <- Q J, J the pairs' rotations. Row and column i of G take part only
// with those of i's partner m(i), so each element is made from four old ones,
//     (G J)_ij = c_j G_ij + s_j G_i,m(j),   G'_ij = c_i (G J)_ij + s_i (G J)_m(i),j,
// with (c_i, s_i) = (c, -s) for the pair's first index and (c, s) for its second: the same
// arithmetic, in the same order, as rotating the columns and then the rows. The pair's own
// off-diagonal entries become exact zeros. Work-items i < p work out the rotation of i's pair
// (both indices of a pair do) into s->rot; after a barrier, a work-item takes column
// j = lid mod 32 of rows lid / 32, lid / 32 + nt / 32, ..., loading all it needs before it
// stores (into the other copy: nothing a round reads is written in it); a barrier ends the
// round.
DEVICE LOCAL_PTR const REAL *pair_rotation(LOCAL_PTR struct PairScratch *s, uint b, REAL tol,
                                           REAL tiny, REAL noise_rel, __global uint *off_bits,
                                           __global uint *gmax_bits, uint nt, int *any)
{
    const uint lid = get_local_id(0);
    const uint lane = lid % 32, warp = lid / 32;
    const uint p = 2 * b;
    // The partners of the inner rounds, once; the rotations start as none, the second copies
    // as G's and I (elements past p are never rotated). Made visible by max_cosine's barrier.
    for (uint e = lid; e < (p - 1) * P; e += nt) {
        const uint r = e / P, i = e % P;
        s->mate[e] = (uchar)(i < p ? rr_mate(p, r, i) : i);
    }
    for (uint e = lid; e < 2 * P; e += nt) {
        s->rot[e] = e % 2 == 0 ? (REAL)1 : (REAL)0;
    }
    for (uint e = lid; e < P * P; e += nt) {
        const uint x = e / P, y = e % P;
        s->g[1][x * LD + y] = s->g[0][x * LD + y];
        s->q[1][x * LD + y] = s->q[0][x * LD + y];
    }
    // The largest squared column norm seen so far (gmax_bits: every pair's largest, an atomic
    // max of the float's bits, kept across sweeps) makes the noise level; read once, by
    // work-item 0, and shared through s->noise after max_cosine's barriers.
    if (lid == 0) {
        REAL gd = 0;
        for (uint x = 0; x < p; ++x) {
            gd = fmax(gd, s->g[0][x * LD + x]);
        }
        const REAL seen = from_order_key(atomic_max(gmax_bits, order_key(gd)));
        s->noise = fmax(seen, gd) * noise_rel;
    }
    // Largest cosine of the fresh Gram matrix.
    const REAL off = max_cosine(s->g[0], s->red, p, tiny, nt);
    const REAL noise = s->noise;
    uint inner = INNER_SWEEPS;
    for (uint x = 0; x < p; ++x) {
        const REAL d = s->g[0][x * LD + x];
        if (d > tiny && d <= noise) {
            inner = NOISE_INNER_SWEEPS;
        }
    }
    if (lid == 0) {
        atomic_max(off_bits, as_uint((float)off));
        if (off > tol) {
            off_bits[1] = 1; // not converged (every writer writes 1)
        }
    }
    // No early return: every work-item reaches every barrier below (PoCL and some drivers
    // mishandle barriers after a return, even a uniform one); a converged pair just does
    // no rotation.
    const int active = off > tol;
    int rotated = 0;
    uint cur = 0;
    // A sweep is skipped (uniformly: every work-item breaks together) when it would rotate
    // nothing: the pair is converged, or the previous sweep left every cosine within tol.
    // Up to the rounding of a cosine at tol itself, the result is the same.
    for (uint sweep = 0; sweep < inner; ++sweep) {
        if (!active || (sweep > 0 && max_cosine(s->g[cur], s->red, p, tiny, nt) <= tol)) {
            break;
        }
        for (uint r = 0; r + 1 < p; ++r) {
            LOCAL_PTR const uchar *mr = s->mate + r * P;
            LOCAL_PTR const REAL *g = s->g[cur];
            LOCAL_PTR const REAL *q = s->q[cur];
            LOCAL_PTR REAL *gn = s->g[cur ^ 1];
            LOCAL_PTR REAL *qn = s->q[cur ^ 1];
            // The rotation of i's pair (both of its indices work it out), then the elements,
            // each work-item's loaded before any is stored.
            if (lid < p) {
                const uint m = mr[lid];
                const uint x = min(lid, m), y = max(lid, m);
                REAL c, sn;
                if (jacobi_rotation(g[x * LD + x], g[y * LD + y], g[x * LD + y], tol, tiny, &c, &sn)) {
                    rotated = 1;
                } else {
                    c = 1;
                    sn = 0;
                }
                s->rot[2 * lid] = c;
                s->rot[2 * lid + 1] = lid == x ? -sn : sn;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint j = lane, mj = mr[j];
            const REAL cj = s->rot[2 * j], sj = s->rot[2 * j + 1];
            // Rows per work-item: P / (nt / 32) (P == 32), at most P * P / WG.
            REAL gv[P * P / WG], qv[P * P / WG];
#pragma unroll
            for (uint u = 0; u < P / (nt / 32); ++u) {
                const uint i = warp + u * (nt / 32), mi = mr[i];
                const REAL ci = s->rot[2 * i], si = s->rot[2 * i + 1];
                const REAL a = cj * g[i * LD + j] + sj * g[i * LD + mj];
                const REAL c = cj * g[mi * LD + j] + sj * g[mi * LD + mj];
                gv[u] = sj != (REAL)0 && mi == j ? (REAL)0 : ci * a + si * c;
                qv[u] = cj * q[i * LD + j] + sj * q[i * LD + mj];
            }
            if (j < p) {
#pragma unroll
                for (uint u = 0; u < P / (nt / 32); ++u) {
                    const uint i = warp + u * (nt / 32);
                    if (i < p) {
                        gn[i * LD + j] = gv[u];
                        qn[i * LD + j] = qv[u];
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            cur ^= 1;
        }
    }
#ifdef TRIDENT_CUDA
    *any = __syncthreads_or(rotated); // a block vote
#else
    *any = group_max((REAL)rotated, s->red, nt) != (REAL)0;
#endif
    // REORTH: one Bjorck step Q <- Q (3 I - Q^T Q) / 2 (the spare copies hold Q^T Q and the
    // product): the accumulated product of up to NOISE_INNER_SWEEPS (2b - 1) b rotations
    // drifts from orthogonality by O(rotations * eps); after the step Q^T Q - I is
    // O(sqrt(2b) eps), so V (updated by Q nb - 1 times a sweep) stays orthogonal
    // (trident_core::svd::reorthonormalise).
    LOCAL_PTR const REAL *q = s->q[cur];
    LOCAL_PTR REAL *qtq = s->g[cur ^ 1];
    LOCAL_PTR REAL *out = s->q[cur ^ 1];
    for (uint e = lid; e < P * P; e += nt) {
        const uint x = e / P, y = e % P;
        REAL acc = 0;
        for (uint t = 0; t < p; ++t) {
            acc += q[t * LD + x] * q[t * LD + y];
        }
        qtq[x * LD + y] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint e = lid; e < P * P; e += nt) {
        const uint t = e / P, a = e % P;
        REAL acc = 0;
        for (uint y = 0; y < p; ++y) {
            acc += q[t * LD + y] * ((y == a ? (REAL)3 : (REAL)0) - qtq[y * LD + a]);
        }
        out[t * LD + a] = acc / (REAL)2;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return out;
}

__kernel KERNEL_WG(WG) void K(svd_jacobi_round)(
    const ulong rows, const uint cols, const uint b, const uint nb, const uint round,
    const REAL tol, const REAL tiny, const REAL noise_rel, __global REAL *w, __global REAL *v,
    const ulong vrows, __global uint *off_bits, __global uint *gmax_bits)
{
    __local REAL tile[P * (TILE + 1)];
    __local struct PairScratch s;

    const uint lid = get_local_id(0);
    uint bi, bj;
    rr_pair(nb, round, get_group_id(0), &bi, &bj);
    REAL acc[P * P / WG];
    for (uint u = 0; u < P * P / WG; ++u) {
        acc[u] = 0;
    }
    gram_rows(w, rows, 0, rows, b, bi, bj, cols, tile, acc);
    for (uint u = 0; u < P * P / WG; ++u) {
        uint x, y;
        gram_entry(lid, u, &x, &y);
        s.g[0][x * LD + y] = acc[u];
        s.q[0][x * LD + y] = x == y ? (REAL)1 : (REAL)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int any;
    LOCAL_PTR const REAL *q =
        pair_rotation(&s, b, tol, tiny, noise_rel, off_bits, gmax_bits, WG, &any);
    apply_q(w, rows, 0, rows, b, bi, bj, cols, tile, q, any);
    apply_q(v, vrows, 0, vrows, b, bi, bj, cols, tile, q, any);
}

__kernel KERNEL_WG(WG) void K(svd_pair_gram)(
    const ulong rows, const uint cols, const uint b, const uint nb, const uint round,
    const uint chunks, __global const REAL *w, __global REAL *gpart)
{
    __local REAL tile[P * (TILE + 1)];
    const uint lid = get_local_id(0);
    const uint grp = get_group_id(0);
    uint bi, bj;
    rr_pair(nb, round, grp / chunks, &bi, &bj);
    ulong r_begin, r_end;
    chunk_rows(rows, chunks, grp % chunks, &r_begin, &r_end);
    REAL acc[P * P / WG];
    for (uint u = 0; u < P * P / WG; ++u) {
        acc[u] = 0;
    }
    gram_rows(w, rows, r_begin, r_end, b, bi, bj, cols, tile, acc);
    for (uint u = 0; u < P * P / WG; ++u) {
        uint x, y;
        gram_entry(lid, u, &x, &y);
        gpart[(ulong)grp * P * P + x * P + y] = acc[u];
    }
}

__kernel KERNEL_WG(RWG) void K(svd_pair_rotate)(
    const uint b, const uint chunks, const REAL tol, const REAL tiny, const REAL noise_rel,
    __global const REAL *gpart, __global REAL *qbuf, __global uint *off_bits,
    __global uint *gmax_bits)
{
    __local struct PairScratch s;
    const uint lid = get_local_id(0);
    const ulong k = get_group_id(0);
    for (uint e = lid; e < P * P; e += RWG) {
        const uint x = e / P, y = e % P;
        REAL sum = 0;
        for (uint c = 0; c < chunks; ++c) {
            sum += gpart[(k * chunks + c) * P * P + e];
        }
        s.g[0][x * LD + y] = sum;
        s.q[0][x * LD + y] = x == y ? (REAL)1 : (REAL)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int any;
    LOCAL_PTR const REAL *q =
        pair_rotation(&s, b, tol, tiny, noise_rel, off_bits, gmax_bits, RWG, &any);
    for (uint e = lid; e < P * P; e += RWG) {
        qbuf[k * (P * P + 1) + e] = q[(e / P) * LD + e % P];
    }
    if (lid == 0) {
        qbuf[k * (P * P + 1) + P * P] = any ? (REAL)1 : (REAL)0;
    }
}

__kernel KERNEL_WG(WG) void K(svd_pair_apply)(
    const ulong rows, const ulong vrows, const uint cols, const uint b, const uint nb,
    const uint round, const uint chunks, __global const REAL *qbuf, __global REAL *w,
    __global REAL *v)
{
    __local REAL tile[P * (TILE + 1)];
    __local REAL q[P * LD];
    const uint lid = get_local_id(0);
    // The first nb / 2 chunks groups take w, the rest v.
    const ulong wgroups = (ulong)(nb / 2) * chunks;
    const int on_v = get_group_id(0) >= wgroups;
    const ulong grp = on_v ? get_group_id(0) - wgroups : get_group_id(0);
    __global REAL *x = on_v ? v : w;
    const ulong xrows = on_v ? vrows : rows;
    const ulong k = grp / chunks;
    uint bi, bj;
    rr_pair(nb, round, k, &bi, &bj);
    ulong r_begin, r_end;
    chunk_rows(xrows, chunks, (uint)(grp % chunks), &r_begin, &r_end);
    for (uint e = lid; e < P * P; e += WG) {
        q[(e / P) * LD + e % P] = qbuf[k * (P * P + 1) + e];
    }
    const int any = qbuf[k * (P * P + 1) + P * P] != (REAL)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    apply_q(x, xrows, r_begin, r_end, b, bi, bj, cols, tile, q, any);
}

// dst[j dst_rows + i] = src[j src_rows + i] for i < nrows, j < cols; 0 where i > j when
// `upper` is set. Work-item e: (i, j) = (e mod nrows, e / nrows).
__kernel KERNEL_WG(WG) void K(svd_copy_rows)(
    const ulong src_rows, const ulong dst_rows, const ulong nrows, const uint cols,
    const uint upper, __global const REAL *src, __global REAL *dst)
{
    const ulong e = (ulong)get_group_id(0) * WG + get_local_id(0);
    if (nrows == 0 || e >= nrows * cols) {
        return;
    }
    const ulong i = e % nrows, j = e / nrows;
    dst[j * dst_rows + i] = upper && i > j ? (REAL)0 : src[j * src_rows + i];
}

__kernel KERNEL_WG(WG) void K(svd_column_norms)(
    const ulong rows, const uint cols, __global const REAL *w, __global REAL *norms)
{
    __local WIDE red[WG];
    const uint lid = get_local_id(0);
    const ulong j = get_group_id(0);
    WIDE s = 0;
    for (ulong i = lid; i < rows; i += WG) {
        const WIDE x = w[j * rows + i];
        s += x * x;
    }
    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (lid < h) {
            red[lid] += red[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && j < cols) {
        norms[j] = (REAL)sqrt(red[0]);
    }
}

// ---- Layout changes between the host's row-major matrices and the column-major working
// matrices (svd_from_rows, svd_gather_cols). Both write an r x c column-major output O
// (O(i, j) at dst[j r + i]) in tiles of LT x LT: group t of a 1-D grid takes the tile at
// (i0, j0) = ((t mod ceil(r / LT)) LT, (t / ceil(r / LT)) LT). When O is a transpose of its
// source, the tile goes through local memory so that reads and writes are both coalesced.
#define LT 32
#if WG % LT != 0
#error "a work-group covers whole tile rows"
#endif

DEVICE void layout_tile(ulong r, ulong *i0, ulong *j0)
{
    const ulong tr = (r + LT - 1) / LT;
    *i0 = (ulong)get_group_id(0) % tr * LT;
    *j0 = (ulong)get_group_id(0) / tr * LT;
}

// The working matrix of a row-major m x n matrix src, every value times scale: its columns
// (transpose == 0: O is m x n, O(i, j) = src[i n + j]) or its rows (transpose != 0: O is
// n x m, O(i, j) = src[j n + i], the same order as src).

__kernel KERNEL_WG(WG) void K(svd_from_rows)(
    const ulong m, const ulong n, const uint transpose, const REAL scale,
    __global const REAL *src, __global REAL *dst)
{
    __local REAL tile[LT][LT + 1];
    const uint tx = get_local_id(0) % LT, ty = get_local_id(0) / LT;
    const ulong r = transpose ? n : m, c = transpose ? m : n;
    ulong i0, j0;
    layout_tile(r, &i0, &j0);
    if (transpose) {
        for (uint b = ty; b < LT; b += WG / LT) {
            const ulong i = i0 + tx, j = j0 + b;
            if (i < r && j < c) {
                dst[j * r + i] = src[j * r + i] * scale;
            }
        }
        return;
    }
    for (uint a = ty; a < LT; a += WG / LT) {
        const ulong i = i0 + a, j = j0 + tx;
        if (i < r && j < c) {
            tile[a][tx] = src[i * c + j] * scale;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = ty; b < LT; b += WG / LT) {
        const ulong i = i0 + tx, j = j0 + b;
        if (i < r && j < c) {
            dst[j * r + i] = tile[tx][b];
        }
    }
}

// Columns order[l] (l < ncols) of the column-major src (rows rows), each times scale[l], as
// row-major output: the columns of a rows x ncols matrix (as_rows == 0: O is ncols x rows,
// O(l, i) = dst[i ncols + l]) or the rows of an ncols x rows one (as_rows != 0: O is
// rows x ncols, dst[l rows + i]).
__kernel KERNEL_WG(WG) void K(svd_gather_cols)(
    const ulong rows, const ulong ncols, const uint as_rows, __global const uint *order,
    __global const REAL *scale, __global const REAL *src, __global REAL *dst)
{
    __local REAL tile[LT][LT + 1];
    const uint tx = get_local_id(0) % LT, ty = get_local_id(0) / LT;
    const ulong r = as_rows ? rows : ncols, c = as_rows ? ncols : rows;
    ulong i0, j0;
    layout_tile(r, &i0, &j0);
    if (as_rows) {
        for (uint b = ty; b < LT; b += WG / LT) {
            const ulong i = i0 + tx, l = j0 + b;
            if (i < r && l < c) {
                dst[l * r + i] = src[(ulong)order[l] * rows + i] * scale[l];
            }
        }
        return;
    }
    // O(l, i) for l in the tile's rows, i in its columns: read along i (coalesced), then
    // written along l.
    for (uint a = ty; a < LT; a += WG / LT) {
        const ulong l = i0 + a, i = j0 + tx;
        if (l < r && i < c) {
            tile[a][tx] = src[(ulong)order[l] * rows + i] * scale[l];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = ty; b < LT; b += WG / LT) {
        const ulong l = i0 + tx, i = j0 + b;
        if (l < r && i < c) {
            dst[i * r + l] = tile[tx][b];
        }
    }
}

__kernel KERNEL_WG(WG) void K(qr_rotations)(
    const ulong rows, const uint cols, const uint step, __global const REAL *a,
    __global REAL *cs)
{
    const ulong j = (ulong)get_group_id(0) * WG + get_local_id(0);
    const long i = (long)rows - 1 - (long)step + 2 * (long)j;
    if (j >= cols || i <= (long)j || i >= (long)rows) {
        return;
    }
    const REAL x = a[j * rows + i - 1], y = a[j * rows + i];
    // Scaled by max(|x|, |y|) first: with subnormal x, y the quotients by hypot(x, y) would
    // be quantised and the rotation not orthogonal (as the CPU backend's givens()).
    REAL c = 1, s = 0;
    const REAL scale = fmax(fabs(x), fabs(y));
    if (y != (REAL)0 && scale > (REAL)0) {
        const REAL xs = x / scale, ys = y / scale;
        const REAL r = hypot(xs, ys);
        if (r > (REAL)0) {
            c = xs / r;
            s = ys / r;
        }
    }
    cs[2 * (j * rows + i)] = c;
    cs[2 * (j * rows + i) + 1] = s;
}

// The work-item's (j, k) of qr_apply / qr_apply_q, j < span. CUDA: a 1-D grid of
// ceil(span / WG) groups per k, split here (its grid's y extent is limited to 65535 blocks;
// Device::FLAT_GRID); OpenCL: the 2-D NDRange's ids.
DEVICE void grid_jk(uint span, ulong *j, ulong *k)
{
#ifdef TRIDENT_CUDA
    const ulong jspan = ((ulong)span + WG - 1) / WG * WG;
    const ulong gid = (ulong)get_group_id(0) * WG + get_local_id(0);
    *j = gid % jspan;
    *k = gid / jspan;
#else
    *j = get_global_id(0);
    *k = get_global_id(1);
#endif
}

__kernel KERNEL_WG(WG) void K(qr_apply)(
    const ulong rows, const uint cols, const uint step, __global REAL *a,
    __global const REAL *cs)
{
    ulong j, k;
    grid_jk(cols, &j, &k);
    const long i = (long)rows - 1 - (long)step + 2 * (long)j;
    if (j >= cols || k >= cols || k < j || i <= (long)j || i >= (long)rows) {
        return;
    }
    const REAL c = cs[2 * (j * rows + i)], s = cs[2 * (j * rows + i) + 1];
    const REAL x = a[k * rows + i - 1], y = a[k * rows + i];
    a[k * rows + i - 1] = c * x + s * y;
    a[k * rows + i] = k == j ? (REAL)0 : c * y - s * x;
}

__kernel KERNEL_WG(WG) void K(qr_apply_q)(
    const ulong rows, const uint qcols, const uint jcols, const uint step, __global REAL *q,
    __global const REAL *cs)
{
    ulong j, k;
    grid_jk(jcols, &j, &k);
    const long i = (long)rows - 1 - (long)step + 2 * (long)j;
    if (j >= jcols || k >= qcols || i <= (long)j || i >= (long)rows) {
        return;
    }
    const REAL c = cs[2 * (j * rows + i)], s = cs[2 * (j * rows + i) + 1];
    const REAL x = q[k * rows + i - 1], y = q[k * rows + i];
    q[k * rows + i - 1] = c * x - s * y;
    q[k * rows + i] = s * x + c * y;
}

// ---- Tree ("TSQR") Givens QR: trident_core::svd::tree (host reference tree_qr /
// tree_apply_q, same steps and ranges). Barriers are uniform: every bound below depends only
// on kernel arguments and the group id.

// The tree kernels run in work-groups of QWG = 1024 (four times WG: a leaf or merge is one
// work-group, so its serial chain of steps is shared by as many work-items as the device
// allows). A step's rotations act on an n x cols (or n x qcols) set of elements
// (x, k) = (e mod n, e / n); work-item lid takes e = lid, lid + QWG, ..., stepped without a
// 64-bit division per element: elem_first once per step, elem_next per element, while k < cols.
// n = 0 gives k = cols (no elements) at once.
DEVICE void elem_first(ulong n, uint lid, ulong *x, ulong *k, ulong *dx, ulong *dk)
{
    if (n == 0) {
        *x = 0;
        *k = ~(ulong)0;
        *dx = 0;
        *dk = 0;
        return;
    }
    *x = lid % n;
    *k = lid / n;
    *dx = QWG % n;
    *dk = QWG / n;
}
DEVICE void elem_next(ulong n, ulong dx, ulong dk, ulong *x, ulong *k)
{
    *x += dx;
    *k += dk;
    if (*x >= n) {
        *x -= n;
        *k += 1;
    }
}

// (c, s) zeroing y against x: trident_core::svd::tree::givens_cs.
DEVICE void givens_cs(REAL x, REAL y, REAL *c, REAL *s)
{
    *c = 1;
    *s = 0;
    const REAL scale = fmax(fabs(x), fabs(y));
    if (y != (REAL)0 && scale > (REAL)0) {
        const REAL xs = x / scale, ys = y / scale;
        const REAL r = hypot(xs, ys);
        if (r > (REAL)0) {
            *c = xs / r;
            *s = ys / r;
        }
    }
}

// givens_cs with a shorter dependency chain, for the merge panels' serial stages: the pair
// scaled by the power of two 2^-e of max(|x|, |y|) (exact, subnormal inputs included), then
// one rsqrt instead of hypot and two divisions; within a few ulps of givens_cs.
DEVICE void givens_cs_fast(REAL x, REAL y, REAL *c, REAL *s)
{
    *c = 1;
    *s = 0;
    const REAL scale = fmax(fabs(x), fabs(y));
    if (y != (REAL)0 && scale > (REAL)0) {
        int e;
        frexp(scale, &e);
        const REAL xs = ldexp(x, -e), ys = ldexp(y, -e);
        const REAL ir = rsqrt(xs * xs + ys * ys);
        *c = xs * ir;
        *s = ys * ir;
    }
}

// The transposed rotation of rows x, y of column k.
DEVICE void rot_rows_t(__global REAL *q, ulong rows, ulong k, ulong x, ulong y, REAL c, REAL s)
{
    const REAL u = q[k * rows + x], v = q[k * rows + y];
    q[k * rows + x] = c * u - s * v;
    q[k * rows + y] = s * u + c * v;
}

// Panel of group p: first row and height.
DEVICE void tree_leaf(ulong rows, uint h, ulong p, ulong *base, ulong *hp)
{
    *base = p * h;
    *hp = *base < rows ? min((ulong)h, rows - *base) : 0;
}

// Leaf steps and the rotation range [lo, hi) of step s (TreePlan::leaf_steps / leaf_range).
DEVICE ulong leaf_jc(ulong hp, uint cols) { return hp == 0 ? 0 : min(hp - 1, (ulong)cols); }
DEVICE ulong leaf_steps(ulong hp, ulong jc) { return jc == 0 ? 0 : hp - 2 + jc; }
DEVICE ulong leaf_lo(ulong hp, ulong s) { return s + 2 > hp ? s + 2 - hp : 0; }
DEVICE ulong leaf_hi(ulong jc, ulong s, ulong lo) { return max(lo, min(s / 2 + 1, jc)); }

// Merge g of a level: tops a, b and the absorbed height kb (0: nothing to merge).
DEVICE void tree_merge(ulong rows, uint cols, uint h, uint level, ulong g, ulong *ta, ulong *tb,
                       ulong *kb)
{
    const ulong span = (ulong)h << level;
    *ta = 2 * g * span;
    *tb = *ta + span;
    *kb = *tb < rows ? min((ulong)cols, rows - *tb) : 0;
}

// Merges by panels of MP columns: per panel, qr_tree_merge_panel makes the panel's rotations
// and applies them to the panel's own columns, then qr_tree_merge_update applies them to
// the columns right of the panel. Rotation (i, j) (zeroing (b + i, j) against row a + j) is
// the reference's: T2 row i meets T1 rows j = i, i + 1, ... in order and T1 row j meets T2
// rows i = 0, 1, ... in order, as in the wavefront; only the schedule differs.
#define MP 32
// Work-items per column of the update kernels' work-groups (and columns per work-group of
// qr_tree_merge_q).
#define UC (WG / MP)
// The update kernels (qr_tree_leaf_update, qr_tree_merge_update): UCPT columns per
// work-item, UCOLS = UC UCPT per group (trident_core::svd::tree::UPDATE_COLS). A lane's
// (c, s) at a stage is the same for every column, so a work-item rotating several columns
// shares its loads and barriers among them.
#define UCPT 4
#define UCOLS (UC * UCPT)

// Wave `wave` of the merges (trident_core::svd::TreePlan::wave_tasks): the panels (level l,
// columns from j0 = MP (wave - l)) for l = max(0, wave + 1 - ceil(cols / MP)) .. min(wave,
// levels - 1), level ascending, each taking merges(l) groups (_panel) or merges(l) x spans
// groups (_update: spans of UCOLS columns right of the panel). The panel of group grp and the
// group's index in it; 0 past the last panel (the group idles, uniformly).
DEVICE int wave_task(ulong rows, uint cols, uint h, uint levels, uint wave, int update, ulong grp,
                     uint *level, uint *j0, ulong *idx)
{
    const uint npanels = (cols + MP - 1) / MP;
    const ulong leaves = max((rows + h - 1) / h, (ulong)1);
    for (uint l = wave + 1 > npanels ? wave + 1 - npanels : 0; l < levels && l <= wave; ++l) {
        const uint p0 = (wave - l) * MP;
        const ulong merges = ((leaves + ((ulong)1 << l) - 1) >> l) / 2;
        const uint right = cols > p0 + MP ? cols - p0 - MP : 0;
        const ulong n = update ? merges * ((right + UCOLS - 1) / UCOLS) : merges;
        if (grp < n) {
            *level = l;
            *j0 = p0;
            *idx = grp;
            return 1;
        }
        grp -= n;
    }
    return 0;
}

// Leaves by panels of MP columns j0 = 0, 32, ..., in order: qr_tree_leaf_panel (QWG
// work-items, one group per leaf) makes the panel's rotations and applies them to its
// columns, qr_tree_leaf_update (WG work-items, UC columns each) applies them to the columns
// right of it. This is the leaf's Sameh-Kuck order taken column by column: two of its
// rotations that share a row come in column order (the step of (g, j) is hp - 1 + 2 j - g),
// so every row pair meets its rotations in the same order, and panels keep the rows in
// registers and local memory instead of going through global memory at every step.
//
// Lane l < wr = min(MP, jc - j0) zeroes column j = j0 + l bottom-up: it carries one row and
// takes the rows hp - 1, hp - 2, ..., j in turn (row hp - 1 - n at stage n + 2 l: lane 0 from
// a, lane l > 0 as lane l - 1 emits them, one stage later); each incoming row is the upper of
// a rotation against the carried one and becomes the carried row, the old one is emitted with
// column j exactly zero (the rotation zeroing (g, j), g = hp - n local, (c, s) to cs at
// (base + g, j)). The last lane writes the emitted rows back, every lane its final row j.
__kernel KERNEL_WG(QWG) void K(qr_tree_leaf_panel)(
    const ulong rows, const uint cols, const uint h, const uint j0, __global REAL *a,
    __global REAL *cs)
{
    __local REAL inb[MP][MP + 1];
    __local REAL buf[2][MP][MP + 1];
    __local REAL piv[2][MP];
    const uint lid = get_local_id(0);
    const uint l = lid / MP, c = lid % MP;
    ulong base, hp;
    tree_leaf(rows, h, get_group_id(0), &base, &hp);
    const ulong jc = leaf_jc(hp, cols);
    // No early return (see pair_rotation): the body is skipped (uniformly) when the leaf has
    // nothing to zero in this panel.
    if (j0 < jc) {
        const uint wr = (uint)min((ulong)MP, jc - j0);
        const uint wd = min((uint)MP, cols - j0);
        const ulong nin = hp - j0;
        const ulong stages = nin + wr - 1;
        const ulong k = j0 + c;
        REAL x = 0;
        for (ulong s = 0; s < stages; ++s) {
            const uint p = s & 1;
            if (s % MP == 0 && s < nin) {
                // Lane 0's next MP rows (hp - 1 - s - q), read down the columns.
                const uint q = lid % MP, cc = lid / MP;
                inb[q][cc] =
                    s + q < nin && cc < wd ? a[(j0 + cc) * rows + base + hp - 1 - s - q] : (REAL)0;
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const long n = (long)s - 2 * (long)l;
            if (l < wr && n >= 0 && n < (long)(nin - l)) {
                const REAL y = l == 0 ? inb[s % MP][c] : buf[p][l - 1][c];
                if (n == 0) {
                    x = y;
                } else {
                    const REAL yp = l == 0 ? inb[s % MP][l] : buf[p][l - 1][l];
                    REAL cr, sr;
                    givens_cs_fast(yp, piv[p][l], &cr, &sr);
                    REAL e = x;
                    if (c >= l) {
                        e = c == l ? (REAL)0 : cr * x - sr * y;
                        x = cr * y + sr * x;
                    } else {
                        x = y;
                    }
                    const ulong g = base + hp - (ulong)n;
                    if (c == l) {
                        cs[2 * ((ulong)(j0 + l) * rows + g)] = cr;
                        cs[2 * ((ulong)(j0 + l) * rows + g) + 1] = sr;
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
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (l < wr && c < wd) {
            a[k * rows + base + j0 + l] = x;
        }
    }
}

// (c, s) of lane l's rotation at stage s of qr_tree_leaf_update (identity when it has none).
DEVICE void leaf_cs(__global const REAL *cs, ulong rows, ulong base, ulong hp, ulong nin, uint wr,
                    uint j0, uint l, ulong s, REAL *c, REAL *sn)
{
    const long n = (long)s - 2 * (long)l;
    *c = 1;
    *sn = 0;
    if (l < wr && n >= 1 && n < (long)(nin - l)) {
        const ulong at = 2 * ((ulong)(j0 + l) * rows + base + hp - (ulong)n);
        *c = cs[at];
        *sn = cs[at + 1];
    }
}

// The rotations of leaf panel j0 on the columns k >= j0 + MP: work-group t takes leaf
// t / spans and UCOLS columns (spans = ceil((cols - j0 - MP) / UCOLS); work-item (q, l) the
// columns q, q + UC, ...); per column, lane l carries a row as in qr_tree_leaf_panel and the
// rows flow through the lanes the same way, (c, s) read a stage ahead.
__kernel KERNEL_WG(WG) void K(qr_tree_leaf_update)(
    const ulong rows, const uint cols, const uint h, const uint j0, __global REAL *a,
    __global const REAL *cs)
{
    __local REAL inb[UCOLS][MP];
    __local REAL buf[2][UCOLS][MP];
    const uint lid = get_local_id(0);
    const uint q = lid / MP, l = lid % MP;
    const uint k1 = j0 + MP;
    const uint spans = (cols - k1 + UCOLS - 1) / UCOLS;
    const ulong k0 = k1 + (ulong)(get_group_id(0) % spans) * UCOLS;
    ulong base, hp;
    tree_leaf(rows, h, get_group_id(0) / spans, &base, &hp);
    const ulong jc = leaf_jc(hp, cols);
    // No early return (see pair_rotation): the body is skipped uniformly.
    if (j0 < jc) {
        const uint wr = (uint)min((ulong)MP, jc - j0);
        const ulong nin = hp - j0;
        const ulong stages = nin + wr - 1;
        REAL x[UCPT];
    #pragma unroll
        for (uint u = 0; u < UCPT; ++u) {
            x[u] = 0;
        }
        REAL cn, sn;
        leaf_cs(cs, rows, base, hp, nin, wr, j0, l, 0, &cn, &sn);
        for (ulong s = 0; s < stages; ++s) {
            const uint p = s & 1;
            if (s % MP == 0 && s < nin) {
    #pragma unroll
                for (uint u = 0; u < UCPT; ++u) {
                    const ulong k = k0 + q + UC * u;
                    inb[q + UC * u][l] =
                        k < cols && s + l < nin ? a[k * rows + base + hp - 1 - s - l] : (REAL)0;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const REAL cr = cn, sr = sn;
            leaf_cs(cs, rows, base, hp, nin, wr, j0, l, s + 1, &cn, &sn);
            const long n = (long)s - 2 * (long)l;
            if (l < wr && n >= 0 && n < (long)(nin - l)) {
    #pragma unroll
                for (uint u = 0; u < UCPT; ++u) {
                    const uint col = q + UC * u;
                    const REAL y = l == 0 ? inb[col][s % MP] : buf[p][col][l - 1];
                    if (n == 0) {
                        x[u] = y;
                    } else {
                        const REAL e = cr * x[u] - sr * y;
                        x[u] = cr * y + sr * x[u];
                        if (l == wr - 1) {
                            if (k0 + col < cols) {
                                a[(k0 + col) * rows + base + hp - (ulong)n] = e;
                            }
                        } else {
                            buf[1 - p][col][l] = e;
                        }
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    #pragma unroll
        for (uint u = 0; u < UCPT; ++u) {
            const ulong k = k0 + q + UC * u;
            if (k < cols && l < wr) {
                a[k * rows + base + j0 + l] = x[u];
            }
        }
    }
}

// Panel j0 .. j0 + w (w = min(MP, cols - j0)) of merge g (the group): work-item (l, c) =
// (lid / MP, lid % MP) keeps T1 element (a + j0 + l, j0 + c) in a register. The T2 rows
// i < rr = min(kb, j0 + w) flow through the rows of work-items: row l takes T2 row s - l at
// stage s (one barrier per stage) and rotates it against T1 row j0 + l when s - l <= j0 + l,
// the rotation computed by every work-item of row l from the pivots in local memory; the
// last row writes the T2 row back. (c, s) go to cs at (b + i, j0 + l).
__kernel KERNEL_WG(QWG) void K(qr_tree_merge_panel)(
    const ulong rows, const uint cols, const uint h, const uint levels, const uint wave,
    __global REAL *a, __global REAL *cs)
{
    __local REAL inb[MP][MP + 1];
    __local REAL buf[2][MP][MP + 1];
    __local REAL piv[2][MP];
    const uint lid = get_local_id(0);
    const uint l = lid / MP, c = lid % MP;
    uint level, j0;
    ulong g;
    // No early return (see pair_rotation): a group past the wave's panels skips the body
    // (uniformly).
    if (wave_task(rows, cols, h, levels, wave, 0, get_group_id(0), &level, &j0, &g)) {
        ulong ta, tb, kb;
        tree_merge(rows, cols, h, level, g, &ta, &tb, &kb);
        const uint w = min((uint)MP, cols - j0);
        const ulong rr = min(kb, (ulong)(j0 + w));
        const ulong j = j0 + l, k = j0 + c;
        REAL x = l < w && c < w ? a[k * rows + ta + j] : (REAL)0;
        if (l == c) {
            piv[0][l] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const ulong stages = rr == 0 ? 0 : rr + w - 1;
        for (ulong s = 0; s < stages; ++s) {
            const uint p = s & 1;
            if (s % MP == 0 && s < rr) {
                // The next MP T2 rows of the panel, read down the columns.
                const uint q = lid % MP, cc = lid / MP;
                inb[q][cc] = s + q < rr && cc < w ? a[(j0 + cc) * rows + tb + s + q] : (REAL)0;
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const long i = (long)s - (long)l;
            if (l < w && i >= 0 && i < (long)rr) {
                REAL y = l == 0 ? inb[s % MP][c] : buf[p][l - 1][c];
                if ((ulong)i <= j) {
                    const REAL yp = l == 0 ? inb[s % MP][l] : buf[p][l - 1][l];
                    REAL cr, sr;
                    givens_cs_fast(piv[p][l], yp, &cr, &sr);
                    if (c >= l && c < w) {
                        const REAL x2 = cr * x + sr * y;
                        y = c == l ? (REAL)0 : cr * y - sr * x;
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
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (l < w && c < w) {
            a[k * rows + ta + j] = x;
        }
    }
}

// (c, s) of lane l's rotation at stage s of qr_tree_merge_update (identity when it has none).
DEVICE void merge_cs(__global const REAL *cs, ulong rows, ulong tb, ulong rr, uint w, ulong j0,
                     uint l, ulong s, REAL *c, REAL *sn)
{
    const long i = (long)s - (long)l;
    *c = 1;
    *sn = 0;
    if (l < w && i >= 0 && i < (long)rr && (ulong)i <= j0 + l) {
        *c = cs[2 * ((j0 + l) * rows + tb + i)];
        *sn = cs[2 * ((j0 + l) * rows + tb + i) + 1];
    }
}

// The rotations of panel j0 on the columns k >= j0 + w: work-group t takes merge
// t / spans and UCOLS columns (spans = ceil((cols - j0 - w) / UCOLS); work-item (q, l) the
// columns q, q + UC, ...); per column, lane l keeps T1 element (a + j0 + l, k) and the T2
// elements flow through the lanes as in qr_tree_merge_panel (lane l takes T2 row s - l at
// stage s), (c, s) read a stage ahead.
__kernel KERNEL_WG(WG) void K(qr_tree_merge_update)(
    const ulong rows, const uint cols, const uint h, const uint levels, const uint wave,
    __global REAL *a, __global const REAL *cs)
{
    __local REAL inb[UCOLS][MP];
    __local REAL buf[2][UCOLS][MP];
    const uint lid = get_local_id(0);
    const uint q = lid / MP, l = lid % MP;
    uint level, j0;
    ulong t;
    // No early return (see pair_rotation): a group past the wave's panels skips the body
    // (uniformly).
    if (wave_task(rows, cols, h, levels, wave, 1, get_group_id(0), &level, &j0, &t)) {
        const uint w = min((uint)MP, cols - j0);
        const uint k1 = j0 + w;
        const uint spans = (cols - k1 + UCOLS - 1) / UCOLS;
        const ulong k0 = k1 + (ulong)(t % spans) * UCOLS;
        ulong ta, tb, kb;
        tree_merge(rows, cols, h, level, t / spans, &ta, &tb, &kb);
        const ulong rr = min(kb, (ulong)k1);
        const ulong j = j0 + l;
        REAL x[UCPT];
    #pragma unroll
        for (uint u = 0; u < UCPT; ++u) {
            const ulong k = k0 + q + UC * u;
            x[u] = k < cols && l < w ? a[k * rows + ta + j] : (REAL)0;
        }
        const ulong stages = rr == 0 ? 0 : rr + w - 1;
        REAL cn, sn;
        merge_cs(cs, rows, tb, rr, w, j0, l, 0, &cn, &sn);
        for (ulong s = 0; s < stages; ++s) {
            const uint p = s & 1;
            if (s % MP == 0 && s < rr) {
    #pragma unroll
                for (uint u = 0; u < UCPT; ++u) {
                    const ulong k = k0 + q + UC * u;
                    inb[q + UC * u][l] =
                        k < cols && s + l < rr ? a[k * rows + tb + s + l] : (REAL)0;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const REAL cr = cn, sr = sn;
            merge_cs(cs, rows, tb, rr, w, j0, l, s + 1, &cn, &sn);
            const long i = (long)s - (long)l;
            if (l < w && i >= 0 && i < (long)rr) {
    #pragma unroll
                for (uint u = 0; u < UCPT; ++u) {
                    const uint col = q + UC * u;
                    REAL y = l == 0 ? inb[col][s % MP] : buf[p][col][l - 1];
                    const REAL x2 = cr * x[u] + sr * y;
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
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    #pragma unroll
        for (uint u = 0; u < UCPT; ++u) {
            const ulong k = k0 + q + UC * u;
            if (k < cols && l < w) {
                a[k * rows + ta + j] = x[u];
            }
        }
    }
}

// Work-group `gid` of a Q launch over `groups` leaves or merges, with q's columns split into
// spans of `kspan`: the leaf or merge `*g` and the columns `*k0 .. *k0 + *kn`.
DEVICE void q_group(ulong gid, uint qcols, uint kspan, ulong *g, uint *k0, uint *kn)
{
    const uint span = max(kspan, 1u);
    const uint spans = (qcols + span - 1) / span;
    *g = gid / spans;
    *k0 = (uint)(gid % spans) * span;
    *kn = min(span, qcols - *k0);
}

// The transposed rotations of panel j0 of one merge level, in reverse order, on the qcols
// columns of q: work-group t takes merge t / spans and UC columns (spans = ceil(qcols /
// UC)); per column, lane l keeps q's row a + j0 + l and q's rows b + i flow through the
// lanes backwards (qr_tree_merge_update's stages reversed: they enter at lane w - 1, leave
// at lane 0), (c, s) read a stage ahead.
__kernel KERNEL_WG(WG) void K(qr_tree_merge_q)(
    const ulong rows, const uint qcols, const uint cols, const uint h, const uint level,
    const uint j0, __global REAL *q, __global const REAL *cs)
{
    __local REAL inb[UC][MP];
    __local REAL buf[2][UC][MP];
    const uint lid = get_local_id(0);
    const uint qq = lid / MP, l = lid % MP;
    const uint w = min((uint)MP, cols - j0);
    const uint spans = (qcols + UC - 1) / UC;
    const ulong k = (ulong)(get_group_id(0) % spans) * UC + qq;
    ulong ta, tb, kb;
    tree_merge(rows, cols, h, level, get_group_id(0) / spans, &ta, &tb, &kb);
    const ulong rr = min(kb, (ulong)(j0 + w));
    const int live = k < qcols;
    const ulong j = j0 + l;
    REAL x = live && l < w ? q[k * rows + ta + j] : (REAL)0;
    const ulong stages = rr == 0 ? 0 : rr + w - 1;
    REAL cn, sn;
    merge_cs(cs, rows, tb, rr, w, j0, l, stages - 1, &cn, &sn);
    for (ulong r = 0; r < stages; ++r) {
        // Reverse stage r is forward stage s: lane l takes row s - l.
        const ulong s = stages - 1 - r;
        const uint p = r & 1;
        if (r % MP == 0 && r < rr) {
            // Rows rr - 1 - r - l, the next MP to enter (at lane w - 1).
            inb[qq][l] = live && r + l < rr ? q[k * rows + tb + (rr - 1 - r - l)] : (REAL)0;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const REAL cr = cn, sr = sn;
        if (s > 0) {
            merge_cs(cs, rows, tb, rr, w, j0, l, s - 1, &cn, &sn);
        }
        const long i = (long)s - (long)l;
        if (l < w && i >= 0 && i < (long)rr) {
            REAL y = l == w - 1 ? inb[qq][r % MP] : buf[p][qq][l + 1];
            const REAL x2 = cr * x - sr * y;
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
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (live && l < w) {
        q[k * rows + ta + j] = x;
    }
}

__kernel KERNEL_WG(QWG) void K(qr_tree_leaf_q)(
    const ulong rows, const uint qcols, const uint cols, const uint h, const uint kspan,
    __global REAL *q, __global const REAL *cs)
{
    const uint lid = get_local_id(0);
    ulong p, base, hp;
    uint k0, kn;
    q_group(get_group_id(0), qcols, kspan, &p, &k0, &kn);
    tree_leaf(rows, h, p, &base, &hp);
    const ulong jc = leaf_jc(hp, cols);
    for (ulong s = leaf_steps(hp, jc); s-- > 0;) {
        const ulong lo = leaf_lo(hp, s), hi = leaf_hi(jc, s, lo), nj = hi - lo;
        ulong x, k, dx, dk;
        for (elem_first(nj, lid, &x, &k, &dx, &dk); k < kn; elem_next(nj, dx, dk, &x, &k)) {
            const ulong j = lo + x;
            const ulong g = base + hp - 1 + 2 * j - s;
            rot_rows_t(q, rows, k0 + k, g - 1, g, cs[2 * (j * rows + g)], cs[2 * (j * rows + g) + 1]);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

// qr_tree_leaf_q with the group's slab of q in local memory (hp x kn values, row by row,
// LOCAL_PARAM): loaded once, the leaf's steps run on it in reverse with one barrier per
// step, written back once. The rotations of a step act on disjoint row pairs, so the items
// (rotation, column) of a step are independent.
__kernel KERNEL_WG(WG) void K(qr_tree_leaf_q_local)(
    const ulong rows, const uint qcols, const uint cols, const uint h, const uint kspan,
    __global REAL *q, __global const REAL *cs LOCAL_PARAM(REAL, slab))
{
    LOCAL_PARAM_INIT(REAL, slab);
    const uint lid = get_local_id(0);
    ulong p, base, hp64;
    uint k0, kn;
    q_group(get_group_id(0), qcols, kspan, &p, &k0, &kn);
    tree_leaf(rows, h, p, &base, &hp64);
    const uint hp = (uint)hp64;
    const uint jc = (uint)leaf_jc(hp64, cols);
    for (uint e = lid; e < hp * kn; e += WG) {
        slab[(e % hp) * kn + e / hp] = q[(ulong)(k0 + e / hp) * rows + base + e % hp];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = (uint)leaf_steps(hp64, jc); s-- > 0;) {
        const uint lo = (uint)leaf_lo(hp64, s), nj = (uint)leaf_hi(jc, s, lo) - lo;
        // Consecutive work-items: one rotation, consecutive columns (one (c, s) load
        // shared by the columns, consecutive local-memory words).
        for (uint e = lid; e < nj * kn; e += WG) {
            const uint k = e % kn, j = lo + e / kn, r = hp - 1 + 2 * j - s;
            const ulong at = 2 * ((ulong)j * rows + base + r);
            const REAL c = cs[at], sn = cs[at + 1];
            const REAL u = slab[(r - 1) * kn + k], v = slab[r * kn + k];
            slab[(r - 1) * kn + k] = c * u - sn * v;
            slab[r * kn + k] = sn * u + c * v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint e = lid; e < hp * kn; e += WG) {
        q[(ulong)(k0 + e / hp) * rows + base + e % hp] = slab[(e % hp) * kn + e / hp];
    }
}

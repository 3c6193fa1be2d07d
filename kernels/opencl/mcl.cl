// R-MCL iteration kernels, step for step as trident_core::mcl::column_step (the CPU
// backend), so every backend gives the same partition.
//
// One source for OpenCL and CUDA (the dialect: kernels/common/dialect.h; the CUDA build:
// kernels/cuda/mcl.cu), and for both precisions: built with REAL = float, SUFFIX = f32 and
// REAL = double, SUFFIX = f64, TRIDENT_FP64 (kernels mcl_*_f32, mcl_*_f64).
// LCAP (2048) is the hash table of a work-group in local (CUDA: static shared) memory:
// 2048 * 12 bytes + 1024 * (4 + sizeof(REAL)) = 36 KiB in f64, within the 48 KiB of every GPU;
// the `lcap` argument can lower it at run time (tests use that to exercise the global-memory
// path). OpenCL needs cl_khr_int64_base_atomics (64-bit atomic add, exchange, cmpxchg).
//
// M is stored as n columns of width K (a transposed ELLPACK-R): column j's entries are
// idx/val[j*K .. j*K + len[j]], value descending, ties by row. The right operand of the
// expansion is either M_G in CSC (rptr, rrow, rval; flag RIGHT_IS_M clear) or M itself.
// Sums are fixed point (value * 2^60 rounded toward zero, in ulong) so that the atomic
// order of additions does not change a single bit; the mass m = M.1 is fixed point at 2^32.
//
// Over many ranks (trident_core::mcl::gpu), each rank holds the whole M (in_*, n columns, as
// gathered after every iteration) and computes the columns col0 .. col0 + n_own: the column
// kernels, mcl_dpr, mcl_regularize (its rptr/rrow/rval: those columns of M_G, rows global) and
// mcl_reduce take n = n_own and write the local slots 0 .. n_own of out_*, sq and reg, while
// mcl_mass, mcl_penalty, mcl_colmass and the interpretation run over all of M (n = every
// node). One process is col0 = 0, n_own = n.
//
// Per iteration the host enqueues, without waiting:
//   mcl_mass      (balanced only)  mass[i] += m_ij * 2^32 over all entries;
//   mcl_penalty   (balanced only)  pen[i] = max(mass[i] * 2^-32, 1)^-b; mass[i] = 0;
//   mcl_column_local               one work-group per column j: expansion into a hash table
//                                  in local memory, penalty, inflation (of the column
//                                  scaled by its maximum: no under/overflow at any r),
//                                  prune, top-K (ties by row), normalisation, the column's
//                                  sum of squares and change; a column with more than
//                                  LCAP/2 distinct rows (tried only when its candidate
//                                  products exceed LCAP/2) is appended to the overflow list
//                                  instead;
//   mcl_column_global              G work-groups stride over the overflow list (group g
//                                  takes entries first + g, first + g + G, ...; one launch,
//                                  when any column can overflow), the same pass with the hash
//                                  table in a global scratch region per work-group;
//   mcl_reduce                     one work-group: max chaos and total entries, clears sq and
//                                  the overflow count;
// and reads back the chaos (and entry count): the loop stays on the device.
// MLR-MCL's variant (trident_core::mcl::mlr) adds, before the column pass: mcl_dpr (once, when
// its DPR phase starts: the DPR form of M_G into reg), or, while its balance is on, mcl_mass,
// mcl_colmass (column penalties cpen) and mcl_regularize (M_R into reg, clearing mass); the
// column pass then reads reg as its right operand's weights, with the flags PRUNE_MLR (its
// pruning cut) and CHANGE_L2 (squared L2 changes, summed by mcl_reduce into out_entries[1]).
// Zero weights (edges DPR dropped) contribute no products.
//
// Kernel arguments (both precisions; ulong = u64, uint = u32; the host code,
// trident_core::mcl::gpu (gpu/device.rs), must match):
//   mcl_mass:     ulong n, uint K, const uint *idx, const REAL *val, const uint *len,
//                 ulong *mass
//   mcl_penalty:  ulong n, REAL b, ulong *mass, REAL *pen
//   mcl_column_local / mcl_column_global:
//                 ulong n, uint K, uint flags, REAL inflation, REAL prune,
//                 const ulong *rptr, const uint *rrow, const REAL *rval,
//                 const uint *in_idx, const REAL *in_val, const uint *in_len,
//                 const REAL *pen, uint *out_idx, REAL *out_val, uint *out_len,
//                 ulong *sq, uint *overflow, uint *g_keys, ulong *g_acc, uint *g_crow,
//                 REAL *g_cy, ulong region, ulong first, ulong lcap, ulong col0
//   mcl_reduce:   ulong n, uint K, const REAL *val, ulong *sq, const uint *len,
//                 uint *overflow, REAL *out_chaos, ulong *out_entries (2: entries, and the
//                 sum of the columns' changes >> 28)
//   mcl_colmass:  ulong n, uint K, REAL b, const uint *idx, const REAL *val,
//                 const uint *len, const ulong *mass, REAL *cpen
//   mcl_regularize: ulong n, ulong rows, const ulong *rptr, const uint *rrow, const REAL *rval,
//                 const REAL *cpen, REAL *reg, ulong *mass
//   mcl_dpr:      ulong n, ulong col0, uint K, REAL threshold, const ulong *rptr, const uint *rrow,
//                 const REAL *src, const uint *idx, const REAL *val, const uint *len,
//                 REAL *dst (n work-groups)
//   mcl_attractor / mcl_target (once, after the loop; 1-D, global >= n):
//                 ulong n, uint K, const uint *idx, const REAL *val, const uint *len,
//                 uint *attr, uint *target
// sq has 2n entries (zero on entry, cleared by mcl_reduce): sq[j] collects column j's
// fixed-point sum of squares, sq[n + j] its fixed-point L1 change from the previous column j
// (in_*; trident_core::mcl::column_change). mcl_reduce forms each column's chaos
// val[j*K] - sq[j] and the maxima: out_chaos[0] = max chaos, out_chaos[1] = max change.
// flags: 1 = RIGHT_IS_M (plain MCL expansion), 2 = BALANCED (multiply by pen[row]),
//        4 = SQUARE (inflation 2 as x*x), 8 = PRUNE_MLR, 16 = CHANGE_L2. overflow[0] is the
//        count, overflow[1..] columns.
// Launch: mcl_mass / mcl_penalty: 1-D, any work-group size, global >= n. mcl_column_local:
// n work-groups (first unused; a column spills when 2 * distinct rows > min(lcap, LCAP));
// mcl_column_global (lcap unused): G work-groups, g_* regions of `region`
// slots each (G * region in all); both of a power-of-two size <= WG_MAX (1024). mcl_reduce:
// one work-group of a power-of-two size <= WG_MAX.
// Index arithmetic is 64-bit where sizes may exceed 2^32 (n*K slots, scratch regions).
//
// Rounding (the same on both backends): no floating-point sum is formed here except the
// chaos `val - sq * 2^-60`, whose product is exact (a power of two), so contraction into a
// fused multiply-add (CUDA's --fmad=true, OpenCL's default FP_CONTRACT) cannot change a bit.
// Conversions: convert_ulong rounds toward zero, convert_REAL of an integer to nearest; sqrt,
// pow and division are IEEE-accurate (no fast math).

#if !defined(REAL) || !defined(SUFFIX)
#error "build mcl.cl with REAL = float|double and SUFFIX = f32|f64"
#endif

#define LCAP 2048

#define RIGHT_IS_M 1u
#define BALANCED 2u
#define SQUARE 4u
#define PRUNE_MLR 8u
#define CHANGE_L2 16u
#define MLR_PRUNE_A 0.9
#define MLR_PRUNE_FLOOR 1e-7
#define MLR_CHANGE_SHIFT 28
#define EMPTY 0xFFFFFFFFu
#define TWO60 ((REAL)1152921504606846976.0)
#define TWO_M60 ((REAL)(1.0 / 1152921504606846976.0))
#define TWO32 ((REAL)4294967296.0)
#define TWO_M32 ((REAL)(1.0 / 4294967296.0))
#define WG_MAX 1024

// Value <-> bits in a ulong slot of acc (the inflated value replaces the sum); a quiet NaN.
#ifdef TRIDENT_FP64
#define BITS(y) as_ulong(y)
#define UNBITS(a) as_double(a)
#define NAN_REAL as_double((ulong)0x7ff8000000000000UL)
#else
#define BITS(y) ((ulong)as_uint(y))
#define UNBITS(a) as_float((uint)(a))
#define NAN_REAL as_float(0x7fc00000u)
#endif

#define convert_REAL TRIDENT_CAT(convert_, REAL)

// p * 2^60 rounded toward zero (p in [0, 16)), and back (rounded to nearest).
DEVICE ulong to_fixed(REAL p) { return convert_ulong(p * TWO60); }
DEVICE REAL from_fixed(ulong a) { return convert_REAL(a) * TWO_M60; }

DEVICE uint next_pow2(ulong x)
{
    uint c = 1;
    while (c < x) {
        c <<= 1;
    }
    return c;
}

__kernel void TRIDENT_CAT(mcl_mass_, SUFFIX)(
    const ulong n, const uint K, __global const uint *restrict idx,
    __global const REAL *restrict val, __global const uint *restrict len,
    __global ulong *restrict mass)
{
    const ulong j = get_global_id(0);
    if (j >= n) {
        return;
    }
    const ulong base = j * K;
    for (uint s = 0; s < len[j]; ++s) {
        atom_add(&mass[idx[base + s]], convert_ulong(val[base + s] * TWO32));
    }
}

// Interpretation on the device (after the loop; trident_core::mcl::targets step for step):
// mcl_attractor marks attr[j] = 1 when column j holds a positive diagonal entry, else 0;
// mcl_target then sets target[j] to column j's largest positive entry among attractor rows
// (ties by the smaller row), else among all rows, else EMPTY. Only `target` is read back.
__kernel void TRIDENT_CAT(mcl_attractor_, SUFFIX)(
    const ulong n, const uint K, __global const uint *restrict idx,
    __global const REAL *restrict val, __global const uint *restrict len,
    __global uint *restrict attr, __global uint *restrict target)
{
    const ulong j = get_global_id(0);
    if (j >= n) {
        return;
    }
    const ulong base = j * K;
    uint a = 0;
    for (uint s = 0; s < len[j]; ++s) {
        if (idx[base + s] == (uint)j && val[base + s] > (REAL)0) {
            a = 1;
        }
    }
    attr[j] = a;
}

__kernel void TRIDENT_CAT(mcl_target_, SUFFIX)(
    const ulong n, const uint K, __global const uint *restrict idx,
    __global const REAL *restrict val, __global const uint *restrict len,
    __global uint *restrict attr, __global uint *restrict target)
{
    const ulong j = get_global_id(0);
    if (j >= n) {
        return;
    }
    const ulong base = j * K;
    uint best = EMPTY;
    for (uint pass = 0; pass < 2 && best == EMPTY; ++pass) {
        REAL bx = (REAL)0;
        for (uint s = 0; s < len[j]; ++s) {
            const uint i = idx[base + s];
            const REAL x = val[base + s];
            if ((pass == 0 && attr[i] == 0) || x <= (REAL)0) {
                continue;
            }
            if (!(best != EMPTY && (bx > x || (bx == x && best < i)))) {
                best = i;
                bx = x;
            }
        }
    }
    target[j] = best;
}

__kernel void TRIDENT_CAT(mcl_penalty_, SUFFIX)(
    const ulong n, const REAL b, __global ulong *restrict mass, __global REAL *restrict pen)
{
    const ulong i = get_global_id(0);
    if (i >= n) {
        return;
    }
    REAL m = fmax(convert_REAL(mass[i]) * TWO_M32, (REAL)1);
    REAL p;
    if (b == (REAL)0.5) {
        p = (REAL)1 / sqrt(m);
    } else if (b == (REAL)1) {
        p = (REAL)1 / m;
    } else {
        p = pow(m, -b);
    }
    pen[i] = p;
    mass[i] = 0;
}

// MLR-MCL's balance (trident_core::mcl::mlr::column_penalties and regularize, step for
// step), after mcl_mass has summed the rows of M into mass (fixed point, 2^32):
//   mcl_colmass     item y: k_y = sum over column y of to_mass(M(x,y) * mass[x] * 2^-32), in
//                   fixed point at 2^32; cpen[y] = k_y^-b where k_y > 1, else 1;
//   mcl_regularize  item i: column i of M_R = column i of M_G with entry (y, i) scaled by
//                   cpen[y] and divided by the column's fixed-point sum of the scaled values;
//                   clears mass[i] for the next iteration.
__kernel void TRIDENT_CAT(mcl_colmass_, SUFFIX)(
    const ulong n, const uint K, const REAL b, __global const uint *restrict idx,
    __global const REAL *restrict val, __global const uint *restrict len,
    __global const ulong *restrict mass, __global REAL *restrict cpen)
{
    const ulong y = get_global_id(0);
    if (y >= n) {
        return;
    }
    const ulong base = y * K;
    ulong k = 0;
    for (uint s = 0; s < len[y]; ++s) {
        const REAL r = convert_REAL(mass[idx[base + s]]) * TWO_M32;
        k += convert_ulong(val[base + s] * r * TWO32);
    }
    const REAL m = convert_REAL(k) * TWO_M32;
    REAL q = (REAL)1;
    if (m > (REAL)1) {
        if (b == (REAL)0.5) {
            q = (REAL)1 / sqrt(m);
        } else if (b == (REAL)1) {
            q = (REAL)1 / m;
        } else {
            q = pow(m, -b);
        }
    }
    cpen[y] = q;
}

__kernel void TRIDENT_CAT(mcl_regularize_, SUFFIX)(
    const ulong n, const ulong rows, __global const ulong *restrict rptr,
    __global const uint *restrict rrow, __global const REAL *restrict rval,
    __global const REAL *restrict cpen, __global REAL *restrict reg,
    __global ulong *restrict mass)
{
    const ulong i = get_global_id(0);
    if (i < rows) {
        mass[i] = 0; /* read by mcl_colmass only, which ran before */
    }
    if (i >= n) {
        return;
    }
    const ulong a = rptr[i];
    const ulong e = rptr[i + 1];
    ulong s = 0;
    for (ulong t = a; t < e; ++t) {
        s += to_fixed(rval[t] * cpen[rrow[t]]);
    }
    const REAL sum = from_fixed(s);
    for (ulong t = a; t < e; ++t) {
        reg[t] = rval[t] * cpen[rrow[t]] / sum;
    }
}

// The squared L2 distance of columns a and b of M in fixed point at 2^60
// (trident_core::mcl::mlr::column_distance_sq): (x_a - x_b)^2 over a's rows (0 for a row
// missing from b), plus x_b^2 over b's rows missing from a.
DEVICE ulong column_distance_sq(const ulong a, const ulong b, const uint K,
                                __global const uint *idx, __global const REAL *val,
                                __global const uint *len)
{
    const ulong ab = a * K;
    const ulong bb = b * K;
    const uint la = len[a];
    const uint lb = len[b];
    ulong d = 0;
    for (uint s = 0; s < la; ++s) {
        const uint row = idx[ab + s];
        REAL y = 0;
        for (uint u = 0; u < lb; ++u) {
            if (idx[bb + u] == row) {
                y = val[bb + u];
            }
        }
        const REAL e = val[ab + s] - y;
        d += to_fixed(e * e);
    }
    for (uint u = 0; u < lb; ++u) {
        const uint row = idx[bb + u];
        int found = 0;
        for (uint s = 0; s < la; ++s) {
            found = found || idx[ab + s] == row;
        }
        if (!found) {
            const REAL y = val[bb + u];
            d += to_fixed(y * y);
        }
    }
    return d;
}

// MLR-MCL's DPR form of M_G (trident_core::mcl::mlr::dpr), once: work-group i keeps the entries
// (y, i) of M_G (weights src) whose columns of M lie within `threshold` (L2) of column i (the
// loop y = i always), writes them divided by their fixed-point sum into dst, and 0 for the
// others. Launch: n work-groups of a power-of-two size <= WG_MAX.
__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_dpr_, SUFFIX)(
    const ulong n, const ulong col0, const uint K, const REAL threshold,
    __global const ulong *restrict rptr,
    __global const uint *restrict rrow, __global const REAL *restrict src,
    __global const uint *restrict idx, __global const REAL *restrict val,
    __global const uint *restrict len, __global REAL *restrict dst)
{
    __local ulong kept[1];
    const ulong i = get_group_id(0); /* rptr's column; col0 + i in M */
    const ulong ig = col0 + i;
    const uint tid = get_local_id(0);
    const uint wg = get_local_size(0);
    if (tid == 0) {
        kept[0] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong a = rptr[i];
    const ulong e = rptr[i + 1];
    for (ulong t = a + tid; t < e; t += wg) {
        const ulong y = rrow[t];
        const int keep = y == ig ||
                         sqrt(from_fixed(column_distance_sq(ig, y, K, idx, val, len))) < threshold;
        dst[t] = keep ? src[t] : (REAL)0;
        if (keep) {
            atom_add(&kept[0], to_fixed(src[t]));
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const REAL sum = from_fixed(kept[0]);
    for (ulong t = a + tid; t < e; t += wg) {
        dst[t] = dst[t] / sum;
    }
}

// *p = max(*p, v), atomically, for a ulong in local memory. CUDA has the 64-bit atomic max
// natively; OpenCL's (cl_khr_int64_extended_atomics) is missing on some devices, so a
// compare-and-swap loop (cl_khr_int64_base_atomics) does it there: the same maximum.
DEVICE void local_max(LOCAL_PTR ulong *p, const ulong v)
{
#ifdef TRIDENT_CUDA
    atom_max(p, v);
#else
    ulong cur = 0; /* no plain read: the first cmpxchg returns the true value */
    while (v > cur) {
        const ulong was = atom_cmpxchg(p, cur, v);
        if (was == cur) {
            break;
        }
        cur = was;
    }
#endif
}

// The column pass, generated twice: hash table and compaction arrays in local memory
// (column_local) or in a global scratch region (column_global); on CUDA, whose pointers are
// generic, the two are the same function. `may_spill` (local version only) appends a column
// that does not fit to the overflow list. All work-items of the work-group call it (the
// barriers inside are uniform: every branch around them depends only on values that are the
// same across the work-group).
#define DEFINE_COLUMN(NAME, AS)                                                                   \
    DEVICE void NAME(const ulong j, const ulong col0, const uint K, const uint flags,             \
              const REAL inflation,                                                               \
              const REAL prune, __global const ulong *rptr, __global const uint *rrow,            \
              __global const REAL *rval, __global const uint *in_idx,                             \
              __global const REAL *in_val, __global const uint *in_len,                           \
              __global const REAL *pen, __global uint *out_idx, __global REAL *out_val,           \
              __global uint *out_len, __global ulong *sq, __global ulong *dl,                     \
              __global uint *overflow,                                                            \
              AS uint *keys, AS ulong *acc, AS uint *crow, AS REAL *cy, const ulong cap_max,      \
              const int may_spill, LOCAL_PTR ulong *sh)                                           \
    {                                                                                             \
        const uint tid = get_local_id(0);                                                         \
        const uint wg = get_local_size(0);                                                        \
        const int right_m = (flags & RIGHT_IS_M) != 0;                                            \
        /* jg: column j's number in M (in_*), col0 + j; j: its slot in out_*, sq, rptr */         \
        const ulong jg = col0 + j;                                                                \
        const ulong rb = right_m ? jg * K : rptr[j];                                              \
        const uint rl = right_m ? in_len[jg] : (uint)(rptr[j + 1] - rptr[j]);                     \
        /* sh: 0 candidates, 1 survivors, 2 inflated sum, 3 kept sum, 4 (unused), 5 distinct      \
           rows (tentative), 6 table full (a tentative column spills), 7 the column's largest     \
           penalised value (bits), 8 its distinct rows */                                         \
        if (tid == 0) {                                                                           \
            sh[0] = 0;                                                                            \
            sh[1] = 0;                                                                            \
            sh[2] = 0;                                                                            \
            sh[3] = 0;                                                                            \
            sh[4] = 0;                                                                            \
            sh[5] = 0;                                                                            \
            sh[6] = 0;                                                                            \
            sh[7] = 0;                                                                            \
            sh[8] = 0;                                                                            \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        {                                                                                         \
            /* Candidates: the lengths of the combined columns, summed by all work-items. */      \
            ulong c = 0;                                                                          \
            for (uint t = tid; t < rl; t += wg) {                                                 \
                const uint k = right_m ? in_idx[rb + t] : rrow[rb + t];                           \
                c += in_len[k];                                                                   \
            }                                                                                     \
            if (c != 0) {                                                                         \
                atom_add(&sh[0], c);                                                              \
            }                                                                                     \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        const ulong cand = sh[0];                                                                 \
        int go = 1;                                                                               \
        /* More candidates than half the table: the local version tries the whole table           \
           anyway (candidates count repeated rows; the distinct rows are usually far fewer)       \
           and spills the column to the overflow list only when its distinct rows exceed          \
           half the table. */                                                                     \
        int tentative = 0;                                                                        \
        if (2 * cand > cap_max) {                                                                 \
            if (may_spill) {                                                                      \
                tentative = 1;                                                                    \
            } else { /* regions sized wrong by the host: NaN */                                   \
                if (tid == 0) {                                                                   \
                    out_len[j] = 0xFFFFFFFFu; /* reported by mcl_reduce */                        \
                }                                                                                 \
                go = 0;                                                                           \
            }                                                                                     \
        }                                                                                         \
        /* No early return: PoCL mishandles returns before later barriers. */                     \
        if (go) {                                                                                 \
        const uint cap = tentative ? (uint)cap_max : next_pow2(max(2 * cand, (ulong)2));          \
        for (uint s = tid; s < cap; s += wg) {                                                    \
            keys[s] = EMPTY;                                                                      \
            acc[s] = 0;                                                                           \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        /* Expansion: lanes of L threads share one right-hand entry t. */                         \
        uint lanes = 1;                                                                           \
        while (lanes < K && lanes < wg) {                                                         \
            lanes <<= 1;                                                                          \
        }                                                                                         \
        for (uint t = tid / lanes; t < rl; t += wg / lanes) {                                     \
            if (tentative && atom_add(&sh[6], (ulong)0) != 0) {                                   \
                break; /* the column spills: stop early */                                        \
            }                                                                                     \
            const uint k = right_m ? in_idx[rb + t] : rrow[rb + t];                               \
            const REAL w = right_m ? in_val[rb + t] : rval[rb + t];                               \
            const ulong kb = (ulong)k * K;                                                        \
            /* a zero weight (an edge the DPR phase dropped) contributes nothing */               \
            const uint lk = w == (REAL)0 ? 0 : in_len[k];                                         \
            for (uint s = tid % lanes; s < lk; s += lanes) {                                      \
                const uint row = in_idx[kb + s];                                                  \
                const REAL p = in_val[kb + s] * w;                                                \
                const ulong fx = to_fixed(p);                                                     \
                uint h = (row * 2654435761u) & (cap - 1);                                         \
                for (uint probe = 0;; ++probe) {                                                  \
                    if (probe == cap) { /* full (tentative only): spill */                        \
                        atom_xchg(&sh[6], (ulong)1);                                              \
                        break;                                                                    \
                    }                                                                             \
                    const uint old = atomic_cmpxchg(&keys[h], EMPTY, row);                        \
                    if (old == EMPTY || old == row) {                                             \
                        if (old == EMPTY && tentative && atom_inc(&sh[5]) + 1 > cap / 2) {        \
                            atom_xchg(&sh[6], (ulong)1);                                          \
                        }                                                                         \
                        atom_add(&acc[h], fx);                                                    \
                        break;                                                                    \
                    }                                                                             \
                    h = (h + 1) & (cap - 1);                                                      \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        const ulong full = sh[6];                                                                 \
        if (full && tid == 0) {                                                                   \
            const uint slot = atomic_inc(&overflow[0]);                                           \
            overflow[1 + slot] = (uint)j;                                                         \
        }                                                                                         \
        if (!full) {                                                                              \
        /* Penalty; the penalised sum replaces the fixed-point sum (as bits); the column's        \
           maximum (the largest bits: values are >= 0) and distinct rows are collected. */        \
        ulong mb = 0;                                                                             \
        ulong cnt = 0;                                                                            \
        for (uint s = tid; s < cap; s += wg) {                                                    \
            const uint row = keys[s];                                                             \
            if (row != EMPTY) {                                                                   \
                REAL x = from_fixed(acc[s]);                                                      \
                if (flags & BALANCED) {                                                           \
                    x = x * pen[row];                                                             \
                }                                                                                 \
                acc[s] = BITS(x);                                                                 \
                mb = max(mb, BITS(x));                                                            \
                cnt += 1;                                                                         \
            }                                                                                     \
        }                                                                                         \
        if (cnt != 0) {                                                                           \
            atom_add(&sh[8], cnt);                                                                \
        }                                                                                         \
        local_max(&sh[7], mb);                                                                    \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        /* Inflation relative to the maximum (trident_core::mcl::inflate): y = (x / max)^r        \
           * scale, scale = 1 / next_pow2(distinct rows): no value under- or overflows, the       \
           sums stay <= 1; the inflated value replaces x (as bits). */                            \
        const REAL xmax = UNBITS(sh[7]);                                                          \
        const REAL scale = (REAL)1 / convert_REAL(next_pow2(max(sh[8], (ulong)1)));               \
        for (uint s = tid; s < cap; s += wg) {                                                    \
            const uint row = keys[s];                                                             \
            if (row != EMPTY) {                                                                   \
                const REAL x = UNBITS(acc[s]);                                                    \
                const REAL q = xmax > (REAL)0 ? x / xmax : (REAL)1;                               \
                const REAL y = ((flags & SQUARE) ? q * q : pow(q, inflation)) * scale;            \
                acc[s] = BITS(y);                                                                 \
                atom_add(&sh[2], to_fixed(y));                                                    \
            }                                                                                     \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        /* Prune: keep y >= prune * sum; if none passes (impossible below 1/prune entries),       \
           keep them all (a second compaction, without barriers inside the branch). */            \
        REAL cut = prune * from_fixed(sh[2]);                                                     \
        if (flags & PRUNE_MLR) { /* trident_core::mcl::mlr::prune_cut */                          \
            const REAL avg = from_fixed(sh[2]) / convert_REAL(max(sh[8], (ulong)1));              \
            const REAL f = ((flags & SQUARE) ? xmax * xmax : pow(xmax, inflation)) / scale;       \
            REAL t = (REAL)MLR_PRUNE_A * avg * ((REAL)1 - (REAL)2 * ((scale - avg) * f));         \
            t = fmax(t, (REAL)MLR_PRUNE_FLOOR / f);                                               \
            cut = fmin(t, scale);                                                                 \
        }                                                                                         \
        for (uint s = tid; s < cap; s += wg) {                                                    \
            const uint row = keys[s];                                                             \
            if (row != EMPTY && UNBITS(acc[s]) >= cut) {                                          \
                const uint p = (uint)atom_inc(&sh[1]);                                            \
                crow[p] = row;                                                                    \
                cy[p] = UNBITS(acc[s]);                                                           \
            }                                                                                     \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        const ulong got = sh[1];                                                                  \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        if (got == 0) {                                                                           \
            for (uint s = tid; s < cap; s += wg) {                                                \
                const uint row = keys[s];                                                         \
                if (row != EMPTY) {                                                               \
                    const uint p = (uint)atom_inc(&sh[1]);                                        \
                    crow[p] = row;                                                                \
                    cy[p] = UNBITS(acc[s]);                                                       \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        const uint u = (uint)sh[1];                                                               \
        const uint kept = min(u, K);                                                              \
        const ulong ob = j * K;                                                                   \
        /* Sort the u survivors, value descending, ties by row (rows are distinct: a total        \
           order), with a bitonic sort in place over P = next_pow2(u) <= cap / 2 slots (the       \
           padding sorts last: value -1, row EMPTY); the first K are written in order. This is    \
           the order the former rank (count of the entries before each) gave, in O(P log^2 P)     \
           instead of O(u^2) work; crow[0..kept] then mirrors the written rows (read              \
           by the normalisation below from local memory). */                                      \
        const uint P = next_pow2(max((ulong)u, (ulong)1));                                        \
        for (uint s = u + tid; s < P; s += wg) {                                                  \
            crow[s] = EMPTY;                                                                      \
            cy[s] = (REAL)-1;                                                                     \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        for (uint size = 2; size <= P; size <<= 1) {                                              \
            for (uint stride = size >> 1; stride > 0; stride >>= 1) {                             \
                for (uint t = tid; t < P / 2; t += wg) {                                          \
                    const uint lo = 2 * stride * (t / stride) + (t % stride);                     \
                    const uint hi = lo + stride;                                                  \
                    const REAL ylo = cy[lo];                                                      \
                    const REAL yhi = cy[hi];                                                      \
                    const uint rlo = crow[lo];                                                    \
                    const uint rhi = crow[hi];                                                    \
                    const int hi_first = (yhi > ylo) || (yhi == ylo && rhi < rlo);                \
                    const int up = (lo & size) == 0;                                              \
                    if (hi_first == up) {                                                         \
                        cy[lo] = yhi;                                                             \
                        cy[hi] = ylo;                                                             \
                        crow[lo] = rhi;                                                           \
                        crow[hi] = rlo;                                                           \
                    }                                                                             \
                }                                                                                 \
                barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                              \
            }                                                                                     \
        }                                                                                         \
        for (uint r = tid; r < kept; r += wg) {                                                   \
            out_idx[ob + r] = crow[r];                                                            \
            out_val[ob + r] = cy[r];                                                              \
            atom_add(&sh[3], to_fixed(cy[r]));                                                    \
        }                                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                      \
        const REAL s2 = from_fixed(sh[3]);                                                        \
        /* Normalise; the column's chaos (max - sum of squares) is finished by mcl_reduce         \
           from sq[j] and the first entry. The same loop adds the L1 change from the              \
           previous column j: |v - old| for every new entry, old for every previous entry         \
           whose row is gone (no work after this loop: PoCL skipped a single-thread tail          \
           after the last barrier of the global variant). */                                      \
        const ulong pb = jg * K;                                                                  \
        const uint pl = in_len[jg];                                                               \
        for (uint r = tid; r < max(kept, pl); r += wg) {                                          \
            if (r < kept) {                                                                       \
                const REAL v = out_val[ob + r] / s2;                                              \
                out_val[ob + r] = v;                                                              \
                atom_add(&sq[j], to_fixed(v * v));                                                \
                const uint row = crow[r];                                                         \
                REAL old = 0;                                                                     \
                for (uint s = 0; s < pl; ++s) {                                                   \
                    if (in_idx[pb + s] == row) {                                                  \
                        old = in_val[pb + s];                                                     \
                    }                                                                             \
                }                                                                                 \
                const REAL dv = v - old;                                                          \
                atom_add(&dl[j], (flags & CHANGE_L2) ? to_fixed(dv * dv) : to_fixed(fabs(dv)));   \
                if (r == 0) {                                                                     \
                    out_len[j] = kept;                                                            \
                }                                                                                 \
            }                                                                                     \
            if (r < pl) {                                                                         \
                const uint row = in_idx[pb + r];                                                  \
                int gone = 1;                                                                     \
                for (uint s = 0; s < kept; ++s) {                                                 \
                    gone = gone && crow[s] != row;                                                \
                }                                                                                 \
                if (gone) {                                                                       \
                    const REAL x = in_val[pb + r];                                                \
                    atom_add(&dl[j], (flags & CHANGE_L2) ? to_fixed(x * x) : to_fixed(x));        \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        }                                                                                         \
        }                                                                                         \
    }

DEFINE_COLUMN(column_in_local, LOCAL_PTR)
DEFINE_COLUMN(column_in_global, __global)

// The column kernels' arguments, with R = restrict or nothing. The kernels take them without
// `restrict` (on CUDA, `const restrict` kernel pointers would move the loads to the
// non-coherent read-only path, which the CUDA kernels have never used); the hub-column pass
// below takes them with it, as the CUDA kernels always have (out_* and the scratch regions
// are distinct buffers).
#define COLUMN_ARGS(R)                                                                            \
    const ulong n, const uint K, const uint flags, const REAL inflation, const REAL prune,        \
        __global const ulong *R rptr, __global const uint *R rrow,                                \
        __global const REAL *R rval, __global const uint *R in_idx,                               \
        __global const REAL *R in_val, __global const uint *R in_len,                             \
        __global const REAL *R pen, __global uint *R out_idx, __global REAL *R out_val,           \
        __global uint *R out_len, __global ulong *R sq, __global uint *R overflow,                \
        __global uint *R g_keys, __global ulong *R g_acc, __global uint *R g_crow,                \
        __global REAL *R g_cy, const ulong region, const ulong first, const ulong lcap,         \
        const ulong col0

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_column_local_, SUFFIX)(COLUMN_ARGS())
{
    __local uint keys[LCAP];
    __local ulong acc[LCAP];
    __local uint crow[LCAP / 2];
    __local REAL cy[LCAP / 2];
    __local ulong sh[9];
    const ulong j = get_group_id(0);
    if (j >= n) {
        return;
    }
    column_in_local(j, col0, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val, in_len,
                    pen, out_idx, out_val, out_len, sq, sq + n, overflow, keys, acc, crow, cy,
                    min(lcap, (ulong)LCAP), 1, sh);
}

// Work-group g takes overflow entries first + g, first + g + G, ...: one launch covers the
// whole list. The trip count is uniform per work-group (no early return before the barriers
// inside, which PoCL's work-group loops mishandle); the barrier at the end keeps the next
// column from resetting sh and the region while others still read them.
DEVICE void hub_columns(COLUMN_ARGS(restrict), LOCAL_PTR ulong *sh)
{
    const ulong g = get_group_id(0);
    const ulong base = g * region;
    const ulong count = overflow[0];
    for (ulong e = first + g; e < count; e += get_num_groups(0)) {
        const ulong j = overflow[1 + e];
        column_in_global(j, col0, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val,
                         in_len, pen, out_idx, out_val, out_len, sq, sq + n, overflow,
                         g_keys + base, g_acc + base, g_crow + base, g_cy + base, region, 0,
                         sh);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_column_global_, SUFFIX)(COLUMN_ARGS())
{
    __local ulong sh[9];
    hub_columns(n, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val, in_len, pen,
                out_idx, out_val, out_len, sq, overflow, g_keys, g_acc, g_crow, g_cy, region,
                first, lcap, col0, sh);
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_reduce_, SUFFIX)(
    const ulong n, const uint K, __global const REAL *restrict val, __global ulong *restrict sq,
    __global const uint *restrict len, __global uint *restrict overflow,
    __global REAL *restrict out_chaos, __global ulong *restrict out_entries)
{
    __local REAL mx[WG_MAX];
    __local ulong sm[WG_MAX];
    __local ulong s2[WG_MAX];
    const uint tid = get_local_id(0);
    const uint wg = get_local_size(0);
    __local ulong dm[WG_MAX];
    REAL m = 0;
    ulong s = 0;
    ulong d = 0;
    ulong q = 0;
    int bad = 0;
    for (ulong j = tid; j < n; j += wg) {
        const uint l = len[j];
        if (l > K) {
            bad = 1; // a hub column did not fit its scratch region (a host bug)
        } else {
            m = fmax(m, fmax(val[j * K] - from_fixed(sq[j]), (REAL)0));
            s += l;
            d = max(d, sq[n + j]);
            q += sq[n + j] >> MLR_CHANGE_SHIFT;
        }
        sq[j] = 0;
        sq[n + j] = 0;
    }
    mx[tid] = bad ? NAN_REAL : m; // (a NaN kept in m would be lost to fmax)
    sm[tid] = s;
    dm[tid] = d;
    s2[tid] = q;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = wg / 2; h > 0; h >>= 1) {
        if (tid < h) {
            // NaN wins, so that the host sees it.
            mx[tid] = isnan(mx[tid + h]) ? mx[tid + h]
                                         : (isnan(mx[tid]) ? mx[tid] : fmax(mx[tid], mx[tid + h]));
            sm[tid] += sm[tid + h];
            dm[tid] = max(dm[tid], dm[tid + h]);
            s2[tid] += s2[tid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) {
        out_chaos[0] = mx[0];
        out_chaos[1] = from_fixed(dm[0]);
        out_entries[0] = sm[0];
        out_entries[1] = s2[0];
        overflow[0] = 0;
    }
}

// Packing M's columns for the gathers between ranks (trident_core::mcl::gpu::device,
// mcl_publish): a rank packs its new columns (their len[j] entries, in column order) into one
// array, the ranks gather the packed arrays and the lengths, and every rank unpacks all n
// columns into M's slots. The offsets come from the lengths: mcl_block_sums sums them per
// block of PACK_WG columns, mcl_scan_blocks turns the block sums into exclusive offsets (one
// work-group; sums[nb] = the total, also written to total[0]), and mcl_pack / mcl_unpack
// scan within the block in local memory. Launch: mcl_block_sums over ceil(n / PACK_WG)
// work-groups of exactly PACK_WG items, mcl_pack and mcl_unpack over the blocks that meet
// their window (all of them for a whole copy), mcl_scan_blocks one work-group of a
// power-of-two size <= WG_MAX.
//
// A selection (has_sel = 1) packs or unpacks the columns sel[0..n) in that order instead of
// 0..n: the partitioned layout's fetch (trident_core::mcl::gpu::fetch) packs the columns each
// rank asked for, destination by destination, and unpacks what arrives, source by source,
// into the held columns' slots. Column j of the packed order is then sel[j]: its length is
// len[sel[j]] and its slots sel[j]*K... With has_sel = 0, sel is not read.
#ifndef PACK_WG
#define PACK_WG 256
#endif

__kernel KERNEL_WG_MAX(PACK_WG) void TRIDENT_CAT(mcl_block_sums_, SUFFIX)(
    const ulong n, __global const uint *restrict len, const uint has_sel,
    __global const uint *restrict sel, __global ulong *restrict sums)
{
    __local ulong s[PACK_WG];
    const ulong j = get_global_id(0);
    const uint tid = get_local_id(0);
    s[tid] = j < n ? len[has_sel ? sel[j] : j] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = PACK_WG / 2; h > 0; h >>= 1) {
        if (tid < h) {
            s[tid] += s[tid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) {
        sums[get_group_id(0)] = s[0];
    }
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_scan_blocks_, SUFFIX)(
    const ulong nb, __global ulong *restrict sums, __global ulong *restrict total)
{
    __local ulong part[WG_MAX];
    const uint tid = get_local_id(0);
    const uint wg = get_local_size(0);
    const ulong per = (nb + wg - 1) / wg;
    const ulong a = min(nb, (ulong)tid * per);
    const ulong e = min(nb, a + per);
    ulong t = 0;
    for (ulong i = a; i < e; ++i) {
        t += sums[i];
    }
    part[tid] = t;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid == 0) {
        ulong run = 0;
        for (uint i = 0; i < wg; ++i) {
            const ulong x = part[i];
            part[i] = run;
            run += x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong run = part[tid];
    for (ulong i = a; i < e; ++i) {
        const ulong x = sums[i];
        sums[i] = run;
        run += x;
    }
    if (tid == wg - 1) {
        sums[nb] = run;
        total[0] = run;
    }
}

// The inclusive prefix sums of the block's lengths l into s (every item of the group calls
// it), and the column of the block that holds packed entry p of the block (s[c] > p, the
// first such c): the copies below take one packed entry per work-item, so that consecutive
// items move consecutive entries (coalesced), whatever the columns' lengths.
DEVICE void block_scan(LOCAL_PTR ulong *s, const uint tid, const uint l)
{
    s[tid] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PACK_WG; d <<= 1) {
        const ulong x = tid >= d ? s[tid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[tid] += x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

DEVICE uint column_of(LOCAL_PTR ulong *s, const ulong p)
{
    uint lo = 0;
    uint hi = PACK_WG - 1;
    while (lo < hi) {
        const uint mid = (lo + hi) / 2;
        if (s[mid] > p) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

// The one copy of mcl_pack and mcl_unpack, between the packed array and M's K-wide slots:
// packed entry p of the block is slot q of its column c (s from block_scan). It reads the
// from_* arrays and writes the to_* arrays; to_packed says which side is packed: 1 (pack:
// from = M's slots, to = the packed array) or 0 (unpack: the other way round). s is the
// kernel's local array (a local array lives at kernel scope).
//
// A window of the packed order moves alone, so that a gather can go in rounds of bounded
// buffers: only the entries at packed positions lo <= x < hi move, and the packed array
// holds position x at x - lo + at (lo = 0, hi = ~0, at = 0: every entry, at its position).
// Work-group g takes the block g0 + g of PACK_WG columns (the host launches the blocks that
// meet the window).
DEVICE void move_packed(const ulong n, const uint K, const ulong g0, const ulong lo,
                        const ulong hi, const ulong at, __global const uint *restrict from_idx,
                        __global const REAL *restrict from_val,
                        __global const uint *restrict len, const uint has_sel,
                        __global const uint *restrict sel, __global const ulong *restrict offs,
                        __global uint *restrict to_idx, __global REAL *restrict to_val,
                        LOCAL_PTR ulong *s, const uint to_packed)
{
    const ulong g = g0 + get_group_id(0);
    const ulong j0 = g * PACK_WG;
    const uint tid = get_local_id(0);
    block_scan(s, tid, j0 + tid < n ? len[has_sel ? sel[j0 + tid] : j0 + tid] : 0);
    const ulong base = offs[g];
    // Only the block's entries inside the window move. (The launch covers just the blocks
    // that meet it, so at most two of them skip entries. No clamped subtraction here:
    // Oclgrind lacks the saturating one that the compiler makes of it.)
    for (ulong p = tid; p < s[PACK_WG - 1]; p += PACK_WG) {
        const ulong x = base + p;
        if (x < lo || x >= hi) {
            continue;
        }
        const uint c = column_of(s, p);
        const ulong q = p - (c > 0 ? s[c - 1] : 0);
        const ulong packed = x - lo + at;
        const ulong col = j0 + c;
        const ulong slot = (has_sel ? (ulong)sel[col] : col) * K + q;
        const ulong from = to_packed ? slot : packed;
        const ulong to = to_packed ? packed : slot;
        to_idx[to] = from_idx[from];
        to_val[to] = from_val[from];
    }
}

__kernel KERNEL_WG_MAX(PACK_WG) void TRIDENT_CAT(mcl_pack_, SUFFIX)(
    const ulong n, const uint K, const ulong g0, const ulong lo,
    const ulong hi, const ulong at, __global const uint *restrict idx,
    __global const REAL *restrict val, __global const uint *restrict len,
    const uint has_sel, __global const uint *restrict sel,
    __global const ulong *restrict offs, __global uint *restrict pidx,
    __global REAL *restrict pval)
{
    __local ulong s[PACK_WG];
    move_packed(n, K, g0, lo, hi, at, idx, val, len, has_sel, sel, offs, pidx, pval, s, 1u);
}

__kernel KERNEL_WG_MAX(PACK_WG) void TRIDENT_CAT(mcl_unpack_, SUFFIX)(
    const ulong n, const uint K, const ulong g0, const ulong lo,
    const ulong hi, const ulong at, __global const uint *restrict pidx,
    __global const REAL *restrict pval, __global const uint *restrict len,
    const uint has_sel, __global const uint *restrict sel,
    __global const ulong *restrict offs, __global uint *restrict idx,
    __global REAL *restrict val)
{
    __local ulong s[PACK_WG];
    move_packed(n, K, g0, lo, hi, at, pidx, pval, len, has_sel, sel, offs, idx, val, s, 0u);
}

// The partitioned layout's M·M fetch (trident_core::mcl::gpu::fetch): the rows of this rank's
// columns that other ranks hold (rows outside c0..c1) marked as bits of a bitmap of all
// nodes (mcl_mark_rows, one item per slot of the own*K slots; bits zeroed first), and the
// rows of the columns, packed, turned into held slots for the right operand of M·M
// (mcl_slot_rows, one item per packed entry): a row of c0..c1 is slot row - c0, another row
// own + its rank among the marked rows (base[w] marked rows before its 32-bit word w, plus
// those before it in the word).
__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_mark_rows_, SUFFIX)(
    const ulong own, const uint K, __global const uint *restrict idx,
    __global const uint *restrict len, const ulong c0, const ulong c1,
    __global uint *restrict bits)
{
    const ulong x = get_global_id(0);
    if (x >= own * K) {
        return;
    }
    const ulong j = x / K;
    if (x - j * K >= len[j]) {
        return;
    }
    const uint r = idx[x];
    if (r < c0 || r >= c1) {
        atomic_or(&bits[r >> 5], 1u << (r & 31));
    }
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_slot_rows_, SUFFIX)(
    const ulong entries, const ulong c0, const ulong c1, const ulong own,
    __global const uint *restrict bits, __global const uint *restrict base,
    __global uint *restrict rows)
{
    const ulong e = get_global_id(0);
    if (e >= entries) {
        return;
    }
    const uint r = rows[e];
    if (r >= c0 && r < c1) {
        rows[e] = (uint)(r - c0);
        return;
    }
    const uint w = r >> 5;
    const uint before = bits[w] & ((1u << (r & 31)) - 1u);
    rows[e] = (uint)(own + base[w] + popcount(before));
}

// The partitioned fetch's bookkeeping on the device (trident_core::mcl::gpu::fetch), so that
// only a rank's per-rank totals cross the hosts:
// - mcl_move_lens: the columns' lengths through a selection, gathered (to[i] = from[sel[i]],
//   the lengths each rank sends) or scattered (to[sel[i]] = from[i], the lengths received
//   placed in the held slots); one item per selected column.
// - mcl_offsets_at: the packed offset of the columns at[q0 + q] (each <= n) of the order that
//   mcl_block_sums and mcl_scan_blocks summed (sums), into out[q0 + q]: a rank's part of a
//   packed array starts there. One item per query; each adds the lengths before it in its
//   block (fewer than PACK_WG).
// - mcl_list_rows: the rows marked in the bitmap of mcl_mark_rows, in increasing order, into
//   rows[base[w]..] (one item per 32-bit word w): the rows an M·M iteration asks of others.
// - mcl_route_sel: a selection of n columns that is the identity on positions a..a+own
//   (sel[i] = i - a: this rank's own columns, to or from itself) and elsewhere, with j = i
//   (before a) or i - own (after): src[j] - c0 (recv = 0: the columns asked of this rank,
//   made local) or own + j (recv = 1: the held slots of the columns fetched, src unread).
// - mcl_column_starts: ptr[j] = the packed offset of column j (n + 1 of them, ptr[n] the
//   total) from the block sums, for the right operand of M·M; launched as mcl_block_sums.
__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_move_lens_, SUFFIX)(
    const ulong n, __global const uint *restrict sel, __global const uint *restrict from,
    __global uint *restrict to, const uint scatter)
{
    const ulong i = get_global_id(0);
    if (i >= n) {
        return;
    }
    if (scatter) {
        to[sel[i]] = from[i];
    } else {
        to[i] = from[sel[i]];
    }
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_offsets_at_, SUFFIX)(
    const ulong nq, __global const ulong *restrict at, const ulong q0, const ulong n,
    __global const uint *restrict len, const uint has_sel, __global const uint *restrict sel,
    __global const ulong *restrict sums, __global ulong *restrict out)
{
    const ulong q = get_global_id(0);
    if (q >= nq) {
        return;
    }
    const ulong a = min(at[q0 + q], n);
    const ulong g = a / PACK_WG;
    ulong o = sums[g];
    for (ulong j = g * PACK_WG; j < a; ++j) {
        o += len[has_sel ? sel[j] : j];
    }
    out[q0 + q] = o;
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_list_rows_, SUFFIX)(
    const ulong words, __global const uint *restrict bits, __global const uint *restrict base,
    __global uint *restrict rows)
{
    const ulong w = get_global_id(0);
    if (w >= words) {
        return;
    }
    const uint b = bits[w];
    uint at = base[w];
    for (uint i = 0; i < 32u; ++i) {
        if ((b >> i) & 1u) {
            rows[at] = (uint)(w * 32u + i);
            ++at;
        }
    }
}

__kernel KERNEL_WG_MAX(WG_MAX) void TRIDENT_CAT(mcl_route_sel_, SUFFIX)(
    const ulong n, const ulong a, const ulong own, const uint c0, const uint recv,
    __global const uint *restrict src, __global uint *restrict sel)
{
    const ulong i = get_global_id(0);
    if (i >= n) {
        return;
    }
    if (i >= a && i < a + own) {
        sel[i] = (uint)(i - a);
        return;
    }
    const ulong j = i < a ? i : i - own;
    sel[i] = recv ? (uint)(own + j) : src[j] - c0;
}

__kernel KERNEL_WG_MAX(PACK_WG) void TRIDENT_CAT(mcl_column_starts_, SUFFIX)(
    const ulong n, __global const uint *restrict len, __global const ulong *restrict sums,
    __global ulong *restrict ptr)
{
    __local ulong s[PACK_WG];
    const ulong g = get_group_id(0);
    const uint tid = get_local_id(0);
    const ulong j = g * PACK_WG + tid;
    const uint l = j < n ? len[j] : 0u;
    block_scan(s, tid, l);
    if (j < n) {
        ptr[j] = sums[g] + s[tid] - l;
        if (j + 1 == n) {
            ptr[n] = sums[g] + s[tid];
        }
    }
}

// The precision-dependent macros end with the file (the CUDA build includes it once per
// precision).
#undef BITS
#undef UNBITS
#undef NAN_REAL

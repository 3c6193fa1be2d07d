// R-MCL iteration kernels (Trident CUDA backend); the same algorithm, argument for argument
// and step for step, as kernels/opencl/mcl.cl and trident_core::mcl::column_step (the CPU
// backend), so every backend gives the same partition. Read mcl.cl beside this file: every
// block below has its twin there, in the same order.
//
// Each kernel root is defined for T = float (_f32) and T = double (_f64).
// LCAP (2048) is the hash table of a block in static shared memory: 2048 * 12 bytes +
// 1024 * (4 + sizeof(T)) = 36 KiB in f64, within the 48 KiB of static shared memory; the
// `lcap` argument can lower it at run time (tests use that to exercise the global path).
// 64-bit atomicAdd and 32-bit atomicCAS are native in CUDA.
//
// M is stored as n columns of width K (a transposed ELLPACK-R): column j's entries are
// idx/val[j*K .. j*K + len[j]], value descending, ties by row. The right operand of the
// expansion is either M_G in CSC (rptr, rrow, rval; flag RIGHT_IS_M clear) or M itself.
// Sums are fixed point (value * 2^60 rounded toward zero, in u64) so that the atomic order of
// additions does not change a single bit; the mass m = M.1 is fixed point at 2^32.
//
// Per iteration the host queues, without waiting:
//   mcl_mass      (balanced only)  mass[i] += m_ij * 2^32 over all entries;
//   mcl_penalty   (balanced only)  pen[i] = max(mass[i] * 2^-32, 1)^-b; mass[i] = 0;
//   mcl_column_local               one block per column j: expansion into a hash table in
//                                  shared memory, penalty, inflation (of the column scaled
//                                  by its maximum: no under/overflow at any r), prune, top-K
//                                  (ties by row), normalisation, the column's sum of squares;
//                                  a column
//                                  with more than LCAP/2 distinct rows (tried only when its
//                                  candidate products exceed LCAP/2) is appended to the
//                                  overflow list instead;
//   mcl_column_global              G blocks stride over the overflow list (block g takes
//                                  entries first + g, first + g + G, ...; one launch, when
//                                  any column can overflow), the same pass with the hash
//                                  table in a global scratch region per block;
//   mcl_reduce                     one block: max chaos and total entries, clears sq and the
//                                  overflow count;
// and reads back the chaos (and entry count): the loop stays on the device.
//
// Kernel arguments (u64 = unsigned long long, u32 = unsigned int; both precisions;
// kernels/opencl/mcl.cl has the same, ulong = u64, uint = u32, REAL = T):
//   mcl_mass:     u64 n, u32 K, const u32 *idx, const T *val, const u32 *len, u64 *mass
//   mcl_penalty:  u64 n, T b, u64 *mass, T *pen
//   mcl_column_local / mcl_column_global:
//                 u64 n, u32 K, u32 flags, T inflation, T prune,
//                 const u64 *rptr, const u32 *rrow, const T *rval,
//                 const u32 *in_idx, const T *in_val, const u32 *in_len,
//                 const T *pen, u32 *out_idx, T *out_val, u32 *out_len,
//                 u64 *sq, u32 *overflow, u32 *g_keys, u64 *g_acc, u32 *g_crow,
//                 T *g_cy, u64 region, u64 first, u64 lcap
//   mcl_reduce:   u64 n, u32 K, const T *val, u64 *sq, const u32 *len,
//                 u32 *overflow, T *out_chaos, u64 *out_entries
//   mcl_attractor / mcl_target (once, after the loop; 1-D, grid * block >= n):
//                 u64 n, u32 K, const u32 *idx, const T *val, const u32 *len,
//                 u32 *attr, u32 *target
// sq has 2n entries (zero on entry, cleared by mcl_reduce): sq[j] collects column j's
// fixed-point sum of squares, sq[n + j] its fixed-point L1 change from the previous column j
// (in_*; trident_core::mcl::column_change). mcl_reduce forms each column's chaos
// val[j*K] - sq[j] and the maxima: out_chaos[0] = max chaos, out_chaos[1] = max change.
// flags: 1 = RIGHT_IS_M (plain MCL expansion), 2 = BALANCED (multiply by pen[row]),
//        4 = SQUARE (inflation 2 as x*x). overflow[0] is the count, overflow[1..] columns.
// Launch: mcl_mass / mcl_penalty: 1-D, any block size, grid * block >= n. mcl_column_local:
// n blocks (first unused; a column spills when 2 * distinct rows > min(lcap, LCAP));
// mcl_column_global (lcap unused): G blocks, g_* regions of `region` slots each (G * region
// in all); both of a power-of-two size <= 1024. mcl_reduce: one block of a power-of-two size
// <= 1024. Index arithmetic is 64-bit where sizes may exceed 2^32 (n*K slots, regions).
//
// Rounding: nvcc compiles with --fmad=true, but no floating-point sum is formed here except
// the chaos `val - sq * 2^-60`, whose product is exact (a power of two), so contraction cannot
// change a bit. Conversions: (u64)x rounds toward zero (OpenCL convert_ulong), (T)u64 to
// nearest (convert_REAL); sqrt and division are IEEE (no fast math), as in OpenCL.

#include <cstddef>

namespace {

typedef unsigned long long u64;
typedef unsigned int u32;

constexpr u32 LCAP = 2048;
constexpr u32 RIGHT_IS_M = 1u;
constexpr u32 BALANCED = 2u;
constexpr u32 SQUARE = 4u;
constexpr u32 EMPTY = 0xFFFFFFFFu;
constexpr u32 WG_MAX = 1024;

// Value <-> bits in a u64 slot of acc (the inflated value replaces the sum), NaN.
template <typename T> struct Real;
template <> struct Real<float> {
    __device__ static u64 bits(float y) { return (u64)__float_as_uint(y); }
    __device__ static float unbits(u64 a) { return __uint_as_float((u32)a); }
    __device__ static float nan() { return __uint_as_float(0x7fc00000u); }
};
template <> struct Real<double> {
    __device__ static u64 bits(double y) { return (u64)__double_as_longlong(y); }
    __device__ static double unbits(u64 a) { return __longlong_as_double((long long)a); }
    __device__ static double nan() { return __longlong_as_double(0x7ff8000000000000ll); }
};

template <typename T> __device__ __forceinline__ T two60() { return T(1152921504606846976.0); }
template <typename T> __device__ __forceinline__ T two_m60() {
    return T(1.0 / 1152921504606846976.0);
}
template <typename T> __device__ __forceinline__ T two32() { return T(4294967296.0); }
template <typename T> __device__ __forceinline__ T two_m32() { return T(1.0 / 4294967296.0); }

// p * 2^60 rounded toward zero (p in [0, 16)), and back (rounded to nearest).
template <typename T> __device__ __forceinline__ u64 to_fixed(T p) { return (u64)(p * two60<T>()); }
template <typename T> __device__ __forceinline__ T from_fixed(u64 a) { return (T)a * two_m60<T>(); }

__device__ __forceinline__ u32 next_pow2(u64 x) {
    u32 c = 1;
    while (c < x) {
        c <<= 1;
    }
    return c;
}

template <typename T>
__device__ __forceinline__ void mcl_mass(u64 n, u32 K, const u32 *__restrict__ idx,
                                         const T *__restrict__ val, const u32 *__restrict__ len,
                                         u64 *__restrict__ mass) {
    const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    const u64 base = j * K;
    for (u32 s = 0; s < len[j]; ++s) {
        atomicAdd(&mass[idx[base + s]], (u64)(val[base + s] * two32<T>()));
    }
}

// Interpretation on the device (after the loop; trident_core::mcl::targets step for step):
// mcl_attractor marks attr[j] = 1 when column j holds a positive diagonal entry, else 0;
// mcl_target then sets target[j] to column j's largest positive entry among attractor rows
// (ties by the smaller row), else among all rows, else EMPTY. Only `target` is read back.
template <typename T>
__device__ __forceinline__ void mcl_attractor(u64 n, u32 K, const u32 *__restrict__ idx,
                                              const T *__restrict__ val,
                                              const u32 *__restrict__ len,
                                              u32 *__restrict__ attr) {
    const u64 j = u64(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    const u64 base = j * K;
    u32 a = 0;
    for (u32 s = 0; s < len[j]; ++s) {
        if (idx[base + s] == u32(j) && val[base + s] > T(0)) {
            a = 1;
        }
    }
    attr[j] = a;
}

template <typename T>
__device__ __forceinline__ void mcl_target(u64 n, u32 K, const u32 *__restrict__ idx,
                                           const T *__restrict__ val,
                                           const u32 *__restrict__ len,
                                           const u32 *__restrict__ attr,
                                           u32 *__restrict__ target) {
    const u64 j = u64(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= n) {
        return;
    }
    const u64 base = j * K;
    u32 best = EMPTY;
    for (u32 pass = 0; pass < 2 && best == EMPTY; ++pass) {
        T bx = T(0);
        for (u32 s = 0; s < len[j]; ++s) {
            const u32 i = idx[base + s];
            const T x = val[base + s];
            if ((pass == 0 && attr[i] == 0) || x <= T(0)) {
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

template <typename T>
__device__ __forceinline__ void mcl_penalty(u64 n, T b, u64 *__restrict__ mass,
                                            T *__restrict__ pen) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    T m = fmax((T)mass[i] * two_m32<T>(), T(1));
    T p;
    if (b == T(0.5)) {
        p = T(1) / sqrt(m);
    } else if (b == T(1)) {
        p = T(1) / m;
    } else {
        p = pow(m, -b);
    }
    pen[i] = p;
    mass[i] = 0;
}

// The column pass (mcl.cl's DEFINE_COLUMN): keys/acc/crow/cy point to shared memory
// (column_local) or to a global scratch region (column_global); CUDA's generic addressing
// lets one function serve both. `may_spill` (local version only) appends a column that does
// not fit to the overflow list. All threads of the block call it (the __syncthreads inside
// are uniform: every branch around them depends only on block-uniform values).
template <typename T>
__device__ void mcl_column(const u64 j, const u32 K, const u32 flags, const T inflation,
                           const T prune, const u64 *rptr, const u32 *rrow, const T *rval,
                           const u32 *in_idx, const T *in_val, const u32 *in_len, const T *pen,
                           u32 *out_idx, T *out_val, u32 *out_len, u64 *sq, u64 *dl,
                           u32 *overflow,
                           u32 *keys, u64 *acc, u32 *crow, T *cy, const u64 cap_max,
                           const int may_spill, u64 *sh) {
    const u32 tid = threadIdx.x;
    const u32 wg = blockDim.x;
    const int right_m = (flags & RIGHT_IS_M) != 0;
    const u64 rb = right_m ? j * K : rptr[j];
    const u32 rl = right_m ? in_len[j] : (u32)(rptr[j + 1] - rptr[j]);
    /* sh: 0 candidates, 1 survivors, 2 inflated sum, 3 kept sum, 4 (unused), 5 distinct rows
       (tentative), 6 table full (a tentative column spills), 7 the column's largest
       penalised value (bits), 8 its distinct rows */
    if (tid == 0) {
        sh[0] = 0;
        sh[1] = 0;
        sh[2] = 0;
        sh[3] = 0;
        sh[4] = 0;
        sh[5] = 0;
        sh[6] = 0;
        sh[7] = 0;
        sh[8] = 0;
    }
    __syncthreads();
    {
        /* Candidates: the lengths of the combined columns, summed by all threads. */
        u64 c = 0;
        for (u32 t = tid; t < rl; t += wg) {
            const u32 k = right_m ? in_idx[rb + t] : rrow[rb + t];
            c += in_len[k];
        }
        if (c != 0) {
            atomicAdd(&sh[0], c);
        }
    }
    __syncthreads();
    const u64 cand = sh[0];
    int go = 1;
    /* More candidates than half the table: the local version tries the whole table anyway
       (candidates count repeated rows; the distinct rows are usually far fewer) and spills
       the column to the overflow list only when its distinct rows exceed half the table. */
    int tentative = 0;
    if (2 * cand > cap_max) {
        if (may_spill) {
            tentative = 1;
        } else { /* regions sized wrong by the host: NaN */
            if (tid == 0) {
                out_len[j] = 0xFFFFFFFFu; /* reported by mcl_reduce */
            }
            go = 0;
        }
    }
    if (go) {
        const u32 cap = tentative ? (u32)cap_max : next_pow2(max(2 * cand, (u64)2));
        for (u32 s = tid; s < cap; s += wg) {
            keys[s] = EMPTY;
            acc[s] = 0;
        }
        __syncthreads();
        /* Expansion: lanes of L threads share one right-hand entry t. */
        u32 lanes = 1;
        while (lanes < K && lanes < wg) {
            lanes <<= 1;
        }
        for (u32 t = tid / lanes; t < rl; t += wg / lanes) {
            if (tentative && atomicAdd(&sh[6], 0ull) != 0) {
                break; /* the column spills: stop early */
            }
            const u32 k = right_m ? in_idx[rb + t] : rrow[rb + t];
            const T w = right_m ? in_val[rb + t] : rval[rb + t];
            const u64 kb = (u64)k * K;
            const u32 lk = in_len[k];
            for (u32 s = tid % lanes; s < lk; s += lanes) {
                const u32 row = in_idx[kb + s];
                const T p = in_val[kb + s] * w;
                const u64 fx = to_fixed(p);
                u32 h = (row * 2654435761u) & (cap - 1);
                for (u32 probe = 0;; ++probe) {
                    if (probe == cap) { /* full (tentative only): spill */
                        atomicExch(&sh[6], 1ull);
                        break;
                    }
                    const u32 old = atomicCAS(&keys[h], EMPTY, row);
                    if (old == EMPTY || old == row) {
                        if (old == EMPTY && tentative && atomicAdd(&sh[5], 1ull) + 1 > cap / 2) {
                            atomicExch(&sh[6], 1ull);
                        }
                        atomicAdd(&acc[h], fx);
                        break;
                    }
                    h = (h + 1) & (cap - 1);
                }
            }
        }
        __syncthreads();
        const u64 full = sh[6];
        if (full && tid == 0) {
            const u32 slot = atomicAdd(&overflow[0], 1u);
            overflow[1 + slot] = (u32)j;
        }
        if (!full) {
        /* Penalty; the penalised sum replaces the fixed-point sum (as bits); the column's
           maximum (the largest bits: values are >= 0) and distinct rows are collected. */
        u64 mb = 0;
        u64 cnt = 0;
        for (u32 s = tid; s < cap; s += wg) {
            const u32 row = keys[s];
            if (row != EMPTY) {
                T x = from_fixed<T>(acc[s]);
                if (flags & BALANCED) {
                    x = x * pen[row];
                }
                acc[s] = Real<T>::bits(x);
                mb = max(mb, Real<T>::bits(x));
                cnt += 1;
            }
        }
        if (cnt != 0) {
            atomicAdd(&sh[8], cnt);
        }
        atomicMax(&sh[7], mb);
        __syncthreads();
        /* Inflation relative to the maximum (trident_core::mcl::inflate): y = (x / max)^r
           * scale, scale = 1 / next_pow2(distinct rows): no value under- or overflows, the
           sums stay <= 1; the inflated value replaces x (as bits). */
        const T xmax = Real<T>::unbits(sh[7]);
        const T scale = T(1) / (T)next_pow2(max(sh[8], (u64)1));
        for (u32 s = tid; s < cap; s += wg) {
            const u32 row = keys[s];
            if (row != EMPTY) {
                const T x = Real<T>::unbits(acc[s]);
                const T q = xmax > T(0) ? x / xmax : T(1);
                const T y = ((flags & SQUARE) ? q * q : pow(q, inflation)) * scale;
                acc[s] = Real<T>::bits(y);
                atomicAdd(&sh[2], to_fixed(y));
            }
        }
        __syncthreads();
        /* Prune: keep y >= prune * sum; if none passes (impossible below 1/prune entries),
           keep them all (a second compaction). */
        const T cut = prune * from_fixed<T>(sh[2]);
        for (u32 s = tid; s < cap; s += wg) {
            const u32 row = keys[s];
            if (row != EMPTY && Real<T>::unbits(acc[s]) >= cut) {
                const u32 p = (u32)atomicAdd(&sh[1], 1ull);
                crow[p] = row;
                cy[p] = Real<T>::unbits(acc[s]);
            }
        }
        __syncthreads();
        const u64 got = sh[1];
        __syncthreads();
        if (got == 0) {
            for (u32 s = tid; s < cap; s += wg) {
                const u32 row = keys[s];
                if (row != EMPTY) {
                    const u32 p = (u32)atomicAdd(&sh[1], 1ull);
                    crow[p] = row;
                    cy[p] = Real<T>::unbits(acc[s]);
                }
            }
        }
        __syncthreads();
        const u32 u = (u32)sh[1];
        const u32 kept = min(u, K);
        const u64 ob = j * K;
        /* Sort the u survivors, value descending, ties by row (rows are distinct: a total
           order), with a bitonic sort in place over P = next_pow2(u) <= cap / 2 slots (the
           padding sorts last: value -1, row EMPTY); the first K are written in order. This is
           the order the former rank (count of the entries before each) gave, in O(P log^2 P)
           instead of O(u^2) work; crow[0..kept] then mirrors the written rows (read
           by the normalisation below from shared memory). */
        const u32 P = next_pow2(max((u64)u, (u64)1));
        for (u32 s = u + tid; s < P; s += wg) {
            crow[s] = EMPTY;
            cy[s] = T(-1);
        }
        __syncthreads();
        for (u32 size = 2; size <= P; size <<= 1) {
            for (u32 stride = size >> 1; stride > 0; stride >>= 1) {
                for (u32 t = tid; t < P / 2; t += wg) {
                    const u32 lo = 2 * stride * (t / stride) + (t % stride);
                    const u32 hi = lo + stride;
                    const T ylo = cy[lo];
                    const T yhi = cy[hi];
                    const u32 rlo = crow[lo];
                    const u32 rhi = crow[hi];
                    const bool hi_first = (yhi > ylo) || (yhi == ylo && rhi < rlo);
                    const bool up = (lo & size) == 0;
                    if (hi_first == up) {
                        cy[lo] = yhi;
                        cy[hi] = ylo;
                        crow[lo] = rhi;
                        crow[hi] = rlo;
                    }
                }
                __syncthreads();
            }
        }
        for (u32 r = tid; r < kept; r += wg) {
            out_idx[ob + r] = crow[r];
            out_val[ob + r] = cy[r];
            atomicAdd(&sh[3], to_fixed(cy[r]));
        }
        __syncthreads();
        const T s2 = from_fixed<T>(sh[3]);
        /* Normalise; the column's chaos (max - sum of squares) is finished by mcl_reduce
           from sq[j] and the first entry. The same loop adds the L1 change from the
           previous column j: |v - old| for every new entry, old for every previous entry
           whose row is gone. */
        const u64 pb = j * K;
        const u32 pl = in_len[j];
        for (u32 r = tid; r < max(kept, pl); r += wg) {
            if (r < kept) {
                const T v = out_val[ob + r] / s2;
                out_val[ob + r] = v;
                atomicAdd(&sq[j], to_fixed(v * v));
                const u32 row = crow[r];
                T old = 0;
                for (u32 s = 0; s < pl; ++s) {
                    if (in_idx[pb + s] == row) {
                        old = in_val[pb + s];
                    }
                }
                atomicAdd(&dl[j], to_fixed(fabs(v - old)));
                if (r == 0) {
                    out_len[j] = kept;
                }
            }
            if (r < pl) {
                const u32 row = in_idx[pb + r];
                int gone = 1;
                for (u32 s = 0; s < kept; ++s) {
                    gone = gone && crow[s] != row;
                }
                if (gone) {
                    atomicAdd(&dl[j], to_fixed(in_val[pb + r]));
                }
            }
        }
        }
    }
}

template <typename T>
__device__ __forceinline__ void mcl_column_local(
    const u64 n, const u32 K, const u32 flags, const T inflation, const T prune,
    const u64 *__restrict__ rptr, const u32 *__restrict__ rrow, const T *__restrict__ rval,
    const u32 *__restrict__ in_idx, const T *__restrict__ in_val, const u32 *__restrict__ in_len,
    const T *__restrict__ pen, u32 *__restrict__ out_idx, T *__restrict__ out_val,
    u32 *__restrict__ out_len, u64 *__restrict__ sq, u32 *__restrict__ overflow, u64 lcap) {
    __shared__ u32 keys[LCAP];
    __shared__ u64 acc[LCAP];
    __shared__ u32 crow[LCAP / 2];
    __shared__ T cy[LCAP / 2];
    __shared__ u64 sh[9];
    const u64 j = blockIdx.x;
    if (j >= n) {
        return;
    }
    mcl_column<T>(j, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val, in_len, pen,
                  out_idx, out_val, out_len, sq, sq + n, overflow, keys, acc, crow, cy,
                  min(lcap, (u64)LCAP), 1, sh);
}

template <typename T>
__device__ __forceinline__ void mcl_column_global(
    const u64 n, const u32 K, const u32 flags, const T inflation, const T prune,
    const u64 *__restrict__ rptr, const u32 *__restrict__ rrow, const T *__restrict__ rval,
    const u32 *__restrict__ in_idx, const T *__restrict__ in_val, const u32 *__restrict__ in_len,
    const T *__restrict__ pen, u32 *__restrict__ out_idx, T *__restrict__ out_val,
    u32 *__restrict__ out_len, u64 *__restrict__ sq, u32 *__restrict__ overflow,
    u32 *__restrict__ g_keys, u64 *__restrict__ g_acc, u32 *__restrict__ g_crow,
    T *__restrict__ g_cy, const u64 region, const u64 first) {
    __shared__ u64 sh[9];
    const u64 g = blockIdx.x;
    const u64 base = g * region;
    const u64 count = overflow[0];
    // Block g takes overflow entries first + g, first + g + G, ...: one launch covers the
    // whole list. The trip count is uniform per block; the barrier at the end keeps the next
    // column from resetting sh and the region while other threads still read them.
    for (u64 e = first + g; e < count; e += gridDim.x) {
        const u64 j = overflow[1 + e];
        mcl_column<T>(j, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val, in_len,
                      pen, out_idx, out_val, out_len, sq, sq + n, overflow, g_keys + base,
                      g_acc + base, g_crow + base, g_cy + base, region, 0, sh);
        __syncthreads();
    }
}

template <typename T>
__device__ __forceinline__ void mcl_reduce(const u64 n, const u32 K, const T *__restrict__ val,
                                           u64 *__restrict__ sq, const u32 *__restrict__ len,
                                           u32 *__restrict__ overflow, T *__restrict__ out_chaos,
                                           u64 *__restrict__ out_entries) {
    __shared__ T mx[WG_MAX];
    __shared__ u64 sm[WG_MAX];
    const u32 tid = threadIdx.x;
    const u32 wg = blockDim.x;
    __shared__ u64 dm[WG_MAX];
    T m = 0;
    u64 s = 0;
    u64 d = 0;
    int bad = 0;
    for (u64 j = tid; j < n; j += wg) {
        const u32 l = len[j];
        if (l > K) {
            bad = 1; // a hub column did not fit its scratch region (a host bug)
        } else {
            m = fmax(m, fmax(val[j * K] - from_fixed<T>(sq[j]), T(0)));
            s += l;
            d = max(d, sq[n + j]);
        }
        sq[j] = 0;
        sq[n + j] = 0;
    }
    mx[tid] = bad ? Real<T>::nan() : m; // (a NaN kept in m would be lost to fmax)
    sm[tid] = s;
    dm[tid] = d;
    __syncthreads();
    for (u32 h = wg / 2; h > 0; h >>= 1) {
        if (tid < h) {
            // NaN wins, so that the host sees it.
            mx[tid] = isnan(mx[tid + h]) ? mx[tid + h]
                                         : (isnan(mx[tid]) ? mx[tid] : fmax(mx[tid], mx[tid + h]));
            sm[tid] += sm[tid + h];
            dm[tid] = max(dm[tid], dm[tid + h]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        out_chaos[0] = mx[0];
        out_chaos[1] = from_fixed<T>(dm[0]);
        out_entries[0] = sm[0];
        overflow[0] = 0;
    }
}

} // namespace

#define TRIDENT_MCL(T, SUFFIX)                                                                 \
    extern "C" __global__ void mcl_mass_##SUFFIX(u64 n, u32 K, const u32 *idx, const T *val,   \
                                                 const u32 *len, u64 *mass) {                  \
        mcl_mass<T>(n, K, idx, val, len, mass);                                                \
    }                                                                                          \
    extern "C" __global__ void mcl_penalty_##SUFFIX(u64 n, T b, u64 *mass, T *pen) {           \
        mcl_penalty<T>(n, b, mass, pen);                                                       \
    }                                                                                          \
    extern "C" __global__ void mcl_attractor_##SUFFIX(u64 n, u32 K, const u32 *idx,           \
                                                      const T *val, const u32 *len, u32 *attr, \
                                                      u32 *target) {                           \
        (void)target;                                                                          \
        mcl_attractor<T>(n, K, idx, val, len, attr);                                           \
    }                                                                                          \
    extern "C" __global__ void mcl_target_##SUFFIX(u64 n, u32 K, const u32 *idx, const T *val, \
                                                   const u32 *len, u32 *attr, u32 *target) {   \
        mcl_target<T>(n, K, idx, val, len, attr, target);                                      \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG_MAX) mcl_column_local_##SUFFIX(            \
        u64 n, u32 K, u32 flags, T inflation, T prune, const u64 *rptr, const u32 *rrow,       \
        const T *rval, const u32 *in_idx, const T *in_val, const u32 *in_len, const T *pen,    \
        u32 *out_idx, T *out_val, u32 *out_len, u64 *sq, u32 *overflow, u32 *g_keys,           \
        u64 *g_acc, u32 *g_crow, T *g_cy, u64 region, u64 first, u64 lcap) {                   \
        (void)g_keys;                                                                          \
        (void)g_acc;                                                                           \
        (void)g_crow;                                                                          \
        (void)g_cy;                                                                            \
        (void)region;                                                                          \
        (void)first;                                                                           \
        mcl_column_local<T>(n, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val,   \
                            in_len, pen, out_idx, out_val, out_len, sq, overflow, lcap);       \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG_MAX) mcl_column_global_##SUFFIX(           \
        u64 n, u32 K, u32 flags, T inflation, T prune, const u64 *rptr, const u32 *rrow,       \
        const T *rval, const u32 *in_idx, const T *in_val, const u32 *in_len, const T *pen,    \
        u32 *out_idx, T *out_val, u32 *out_len, u64 *sq, u32 *overflow, u32 *g_keys,           \
        u64 *g_acc, u32 *g_crow, T *g_cy, u64 region, u64 first, u64 lcap) {                   \
        (void)lcap;                                                                            \
        mcl_column_global<T>(n, K, flags, inflation, prune, rptr, rrow, rval, in_idx, in_val,  \
                             in_len, pen, out_idx, out_val, out_len, sq, overflow, g_keys,     \
                             g_acc, g_crow, g_cy, region, first);                              \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(WG_MAX) mcl_reduce_##SUFFIX(                  \
        u64 n, u32 K, const T *val, u64 *sq, const u32 *len, u32 *overflow, T *out_chaos,      \
        u64 *out_entries) {                                                                    \
        mcl_reduce<T>(n, K, val, sq, len, overflow, out_chaos, out_entries);                   \
    }

TRIDENT_MCL(float, f32)
TRIDENT_MCL(double, f64)

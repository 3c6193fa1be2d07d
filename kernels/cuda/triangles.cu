// Triangle counting on the degree-ordered orientation (trident_core::triangles::OrientedGraph):
// row v of the CSR (indptr, adj) holds v's out-neighbours, sorted; for every oriented edge
// v -> u, the common out-neighbours w of v and u close a triangle, found exactly once.
//
// The same algorithms, the same launch geometry and the same argument signature as
// kernels/opencl/triangles.cl. Three kernels, one per TriangleAlgorithm:
//
//   tc_merge   (Merge; the seed's block-per-row merge, with work splitting): block g takes
//              the TC_WG oriented edges [g*TC_WG, (g+1)*TC_WG), one per thread. The rows those
//              edges leave from are contiguous in adj; when they span at most TC_CACHE
//              entries, the block first copies them to shared memory, and each thread merges
//              its row (from shared memory) with N+(u) (global). A long row is thus split over
//              many blocks, and many short rows share one.
//              Grid: ceil(m / TC_WG) blocks of TC_WG.
//   tc_search  (BinarySearch): one warp (32 lanes) per oriented edge (TC_WG / 32 edges per
//              block); the lanes stride over the shorter of N+(v), N+(u) and binary-search
//              each element in the longer. Keeps every lane busy on long, skewed rows.
//              Grid: ceil(m / (TC_WG / 32)) blocks of TC_WG.
//   tc_hash    (Hash): block g owns a bitmap of n bits, scratch[g * words ...] with
//              words = ceil(n / 32), all zero on entry and left zero on exit; it loops over
//              the rows v = g, g + G, ... (G blocks): marks N+(v), then each thread tests the
//              elements of N+(u) for its u in N+(v), then clears the marks.
//              Grid: G blocks of TC_WG (G chosen by the host, scratch holds G * words uints).
//
// Kernel arguments (all three kernels; the host code must match them exactly):
//   unsigned long long n              number of nodes
//   unsigned long long m              number of oriented edges (= len(adj))
//   const unsigned long long *indptr  n + 1 row pointers
//   const unsigned int *adj           m out-neighbour ids, each row sorted
//   unsigned long long *total         one counter, zero on entry: the triangles are added
//   unsigned long long *per_node      n counters, zero on entry, when want_per_node != 0
//                                     (else unused): triangles through each node are added
//   unsigned int want_per_node
//   unsigned int *scratch             tc_hash's bitmaps (see above); unused otherwise
//
// Blocks are TC_WG = 256 threads (__launch_bounds__). Counts are summed per block in shared
// memory and added once per block to *total with a 64-bit atomicAdd; per-node counts use
// 64-bit atomicAdd too. Edge offsets are 64-bit.

#include <cstddef>

namespace {

typedef unsigned long long u64;
typedef unsigned int u32;

constexpr u32 TC_WG = 256;
constexpr u32 TC_LANES = 32;
constexpr u32 TC_CACHE = 2048;

__device__ __forceinline__ void tc_add_u64(u64 *p, u64 x) { atomicAdd(p, x); }

// The row of oriented edge e: the largest v in [lo, hi] with indptr[v] <= e.
__device__ __forceinline__ u64 tc_row_of(const u64 *__restrict__ indptr, u64 lo, u64 hi, u64 e) {
    while (lo < hi) {
        u64 mid = lo + (hi - lo + 1) / 2;
        if (indptr[mid] <= e) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

// Sums `c` over the block into *total (one atomic per block). All threads call it.
__device__ __forceinline__ void tc_group_sum(u64 *sums, u64 c, u64 *total) {
    u32 lid = threadIdx.x;
    sums[lid] = c;
    __syncthreads();
    for (u32 s = TC_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sums[lid] += sums[lid + s];
        }
        __syncthreads();
    }
    if (lid == 0 && sums[0] != 0) {
        tc_add_u64(total, sums[0]);
    }
}

// Merge of a (len na; shared or global) with b (global, len nb): the number of common
// elements; each one w is added to per_node[w] when want_per_node.
__device__ __forceinline__ u64 tc_merge_lists(const u32 *a, u64 na, const u32 *__restrict__ b,
                                              u64 nb, u64 *per_node, u32 want_per_node) {
    u64 i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        u32 x = a[i];
        u32 y = b[j];
        if (x == y) {
            c++;
            if (want_per_node) {
                tc_add_u64(&per_node[x], 1);
            }
        }
        i += (x <= y);
        j += (y <= x);
    }
    return c;
}

} // namespace

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_merge(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
             u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch) {
    __shared__ u32 cache[TC_CACHE];
    __shared__ u64 sums[TC_WG];
    __shared__ u64 rows[2];
    u32 lid = threadIdx.x;
    u64 e0 = (u64)blockIdx.x * TC_WG;
    u64 e_last = min(e0 + TC_WG, m) - 1;
    u64 e = e0 + lid;
    (void)scratch;
    // The first and last rows of the block's edges.
    if (lid == 0) {
        rows[0] = tc_row_of(indptr, 0, n - 1, e0);
    } else if (lid == TC_WG - 1) {
        rows[1] = tc_row_of(indptr, 0, n - 1, e_last);
    }
    __syncthreads();
    u64 v0 = rows[0];
    u64 v1 = (e_last - e0 == TC_WG - 1) ? rows[1] : tc_row_of(indptr, v0, n - 1, e_last);
    u64 span0 = indptr[v0];
    u64 span = indptr[v1 + 1] - span0;
    bool cached = span <= TC_CACHE;
    if (cached) {
        for (u64 k = lid; k < span; k += TC_WG) {
            cache[k] = adj[span0 + k];
        }
    }
    __syncthreads();
    u64 c = 0;
    if (e < m) {
        u64 v = tc_row_of(indptr, v0, v1, e);
        u32 u = adj[e];
        u64 a0 = indptr[v];
        u64 na = indptr[v + 1] - a0;
        u64 b0 = indptr[u];
        u64 nb = indptr[u + 1] - b0;
        const u32 *a = cached ? cache + (a0 - span0) : adj + a0;
        c = tc_merge_lists(a, na, adj + b0, nb, per_node, want_per_node);
        if (want_per_node && c != 0) {
            tc_add_u64(&per_node[v], c);
            tc_add_u64(&per_node[u], c);
        }
    }
    tc_group_sum(sums, c, total);
}

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_search(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
              u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch) {
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u32 lane = lid % TC_LANES;
    u64 e = (u64)blockIdx.x * (TC_WG / TC_LANES) + lid / TC_LANES;
    u64 c = 0;
    (void)scratch;
    if (e < m) {
        u64 v = tc_row_of(indptr, 0, n - 1, e);
        u32 u = adj[e];
        u64 a0 = indptr[v];
        u64 na = indptr[v + 1] - a0;
        u64 b0 = indptr[u];
        u64 nb = indptr[u + 1] - b0;
        // small: the shorter list, searched for in the longer.
        u64 s0 = na <= nb ? a0 : b0;
        u64 ns = na <= nb ? na : nb;
        u64 l0 = na <= nb ? b0 : a0;
        u64 nl = na <= nb ? nb : na;
        for (u64 i = lane; i < ns; i += TC_LANES) {
            u32 x = adj[s0 + i];
            u64 lo = 0, hi = nl;
            while (lo < hi) {
                u64 mid = (lo + hi) / 2;
                if (adj[l0 + mid] < x) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if (lo < nl && adj[l0 + lo] == x) {
                c++;
                if (want_per_node) {
                    tc_add_u64(&per_node[x], 1);
                }
            }
        }
        if (want_per_node && c != 0) {
            tc_add_u64(&per_node[v], c);
            tc_add_u64(&per_node[u], c);
        }
    }
    tc_group_sum(sums, c, total);
}

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_hash(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
            u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch) {
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u64 words = (n + 31) / 32;
    u32 *bits = scratch + (u64)blockIdx.x * words;
    u64 c = 0;
    (void)m;
    for (u64 v = blockIdx.x; v < n; v += gridDim.x) {
        u64 a0 = indptr[v];
        u64 na = indptr[v + 1] - a0;
        if (na < 2) {
            continue; // the same for the whole block: no barrier is skipped by some only
        }
        for (u64 i = lid; i < na; i += TC_WG) {
            u32 x = adj[a0 + i];
            atomicOr(&bits[x >> 5], 1u << (x & 31));
        }
        __syncthreads();
        for (u64 i = lid; i < na; i += TC_WG) {
            u32 u = adj[a0 + i];
            u64 b0 = indptr[u];
            u64 nb = indptr[u + 1] - b0;
            u64 cu = 0;
            for (u64 j = 0; j < nb; j++) {
                u32 w = adj[b0 + j];
                if ((((volatile u32 *)bits)[w >> 5] >> (w & 31)) & 1u) {
                    cu++;
                    if (want_per_node) {
                        tc_add_u64(&per_node[w], 1);
                    }
                }
            }
            if (want_per_node && cu != 0) {
                tc_add_u64(&per_node[v], cu);
                tc_add_u64(&per_node[u], cu);
            }
            c += cu;
        }
        __syncthreads();
        for (u64 i = lid; i < na; i += TC_WG) {
            ((volatile u32 *)bits)[adj[a0 + i] >> 5] = 0;
        }
        __syncthreads();
    }
    tc_group_sum(sums, c, total);
}

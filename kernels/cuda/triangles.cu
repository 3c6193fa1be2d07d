// Triangle counting on the degree-ordered orientation (trident_core::triangles::OrientedGraph):
// row v of the CSR (indptr, adj) holds v's out-neighbours, sorted; for every oriented edge
// v -> u, the common out-neighbours w of v and u close a triangle, found exactly once.
//
// The same algorithms, the same launch geometry and the same argument signature as
// kernels/opencl/triangles.cl. The host plan (trident_core::triangles::plan::GpuPlan) says which
// kernels run, on how many blocks and over which rows:
//
//   tc_merge   (Merge; the seed's block-per-row merge, with work splitting): block g
//              takes the TC_WG oriented edges [g*TC_WG, (g+1)*TC_WG), one per thread. The
//              rows those edges leave from are contiguous in adj; when they span at most
//              TC_CACHE entries, the group first copies them to shared memory, and each
//              thread merges its row (from shared memory) with N+(u) (global). A long row is
//              thus split over many blocks, and many short rows share one.
//              Global size: ceil(m / TC_WG) * TC_WG.
//   tc_search  (BinarySearch): 32 threads per oriented edge (TC_WG / 32 edges per group);
//              the 32 lanes stride over the shorter of N+(v), N+(u) and binary-search each
//              element in the longer. Keeps every lane busy on long, skewed rows.
//              Global size: ceil(m / (TC_WG / 32)) * TC_WG.
//   tc_search_row (BinarySearch under TRIDENT_TC_SEARCH=row): a warp per row v of
//              rows[row_begin..row_end) (TC_WG / TC_LANES rows per block and round; blocks
//              loop over the list), no row search and no shared memory: for each u in N+(v) in
//              turn, the lanes either stride over N+(u) (up to the largest element of N+(v))
//              and binary-search each w in N+(v), or stride over N+(v) and binary-search each
//              element in N+(u), whichever costs fewer rounds x steps. No __syncthreads inside
//              the row loop. Grid: any G >= 1 blocks of TC_WG.
//   tc_search_flat (BinarySearch, the default; TRIDENT_TC_SEARCH=flat): block g takes the chunks of
//              TC_WG oriented edges g, g + G, ... (chunk k: edges [k*TC_WG, (k+1)*TC_WG)); the
//              rows they leave from are cached in shared memory as in tc_merge. Thread l sets
//              up edge e = v -> u (u = N+(v)[i]): a triangle (v, u, w) needs w in N+(v)[i+1..]
//              and in N+(u) up to vmax = max N+(v), the first `cut` elements of N+(u) (one
//              binary search). The thread picks the cheaper (items x search steps) of: scan
//              N+(u)[0..cut) and binary-search each element in N+(v)[i+1..], or scan
//              N+(v)[i+1..] and search N+(u)[0..cut) (N+(v) from the cache when the rows fit in
//              it). An exclusive prefix sum of the item counts over the block (offs, in shared
//              memory) flattens the items of all TC_WG edges: thread l takes items
//              l, l + TC_WG, ..., finding the edge of each by galloping forward in offs, so
//              that no lane idles on a short list and no edge waits for another's round.
//              Per-node counts: per_node[w] per triangle, per_node[v] and [u] once per run of
//              a thread's items on one edge. Grid: any G >= 1 blocks (the host: one per chunk).
//   tc_search_flat_global (BinarySearch under TRIDENT_TC_SEARCH=flat-global): tc_search_flat
//              without the row cache (N+(v) read from global memory too): 10 KB of shared
//              memory per block instead of 18, more of the SM's memory left to the L1 cache.
//   Hash: three kernels, each over a bin of rows rows[row_begin..row_end) chosen by
//   out-degree on the host (trident_core::triangles::plan::RowBins), so that each launch is
//   uniform. Each takes a row v, puts N+(v) in a set, and tests every w of N+(u) for every u
//   in N+(v) against it (w beyond the largest element of N+(v) ends N+(u)'s scan):
//   tc_hash_warp  rows of out-degree 2..TC_WARP_MAX: a team of TC_LANES threads per row
//              (TC_WG / TC_LANES rows per group and round), the set an open-addressing hash
//              table of TC_WARP_SLOTS in shared memory; the team's lanes walk the
//              concatenation of the lists N+(u), u in N+(v), lane l taking its elements l,
//              l + TC_LANES, ..., so short lists do not leave lanes idle.
//              Global size: G * TC_WG for any G >= 1 (groups loop over the bin).
//   tc_hash_block rows of out-degree TC_WARP_MAX+1..TC_BLOCK_MAX: a block per row, the
//              set a hash table of TC_BLOCK_SLOTS in shared memory; team t (32 lanes) takes the
//              u = N+(v)[t], N+(v)[t + TC_WG/TC_LANES], ... and walks the concatenation of
//              their lists N+(u) as tc_hash_warp does.
//   tc_hash    longer rows: a block per row, the set a bitmap of n bits in global
//              memory, scratch[g * words ...] with words = ceil(n / 32), all zero on entry and
//              left zero on exit; each thread scans N+(u) for its u in N+(v).
//              Global size: G * TC_WG (G chosen by the host, scratch holds G * words uints).
//
// Kernel arguments (all eight kernels; the host code must match them exactly):
//   unsigned long long n              number of nodes
//   unsigned long long m              number of oriented edges (= len(adj))
//   const unsigned long long *indptr  n + 1 row pointers
//   const unsigned int *adj           m out-neighbour ids, each row sorted
//   unsigned long long *total         one counter, zero on entry: the triangles are added
//   unsigned long long *per_node      n counters, zero on entry, when want_per_node != 0
//                                     (else unused): triangles through each node are added
//   unsigned int want_per_node
//   unsigned int *scratch             tc_hash's bitmaps (see above); unused otherwise
//   const unsigned int *rows          the binned row list
//   unsigned long long row_begin      the hash kernels and tc_search_row take
//   unsigned long long row_end        rows[row_begin..row_end); tc_merge, tc_search and
//                                     tc_search_flat(_global) ignore the three
//
// Blocks are TC_WG = 256 threads (__launch_bounds__). Counts are summed per block in shared
// memory and added once per block to *total with a 64-bit atomicAdd; per-node counts use
// 64-bit atomicAdd too. Edge offsets are 64-bit. Every __syncthreads is reached by all threads
// of a block: the loops around them have trip counts uniform over the block. The shared hash
// tables are only read (plain loads) after the __syncthreads that ends their inserts.

#include <cstddef>

namespace {

typedef unsigned long long u64;
typedef unsigned int u32;

constexpr u32 TC_WG = 256;
constexpr u32 TC_LANES = 32;
constexpr u32 TC_CACHE = 2048;
constexpr u32 TC_TEAMS = TC_WG / TC_LANES;
constexpr u32 TC_WARP_MAX = 64;
constexpr u32 TC_WARP_BITS = 7; // TC_WARP_SLOTS = 2^7 >= 2 * TC_WARP_MAX: load factor <= 1/2
constexpr u32 TC_WARP_SLOTS = 1u << TC_WARP_BITS;
constexpr u32 TC_BLOCK_MAX = 2048;
constexpr u32 TC_BLOCK_BITS = 12;
constexpr u32 TC_BLOCK_SLOTS = 1u << TC_BLOCK_BITS;
constexpr u32 TC_EMPTY = 0xffffffffu; // not a node id: ids are < n <= 2^32 - 1
static_assert(TC_BLOCK_SLOTS >= 2 * TC_BLOCK_MAX, "hash table load factor above 1/2");

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

// Hash slot of node id x in a table of 2^bits slots (multiplicative hashing).
__device__ __forceinline__ u32 tc_slot(u32 x, u32 bits) { return (x * 2654435761u) >> (32 - bits); }

// Inserts x (not yet present) into the table of 2^bits slots (less than half full).
__device__ __forceinline__ void tc_insert(u32 *tab, u32 x, u32 bits) {
    u32 mask = (1u << bits) - 1;
    u32 s = tc_slot(x, bits);
    while (atomicCAS(&tab[s], TC_EMPTY, x) != TC_EMPTY) {
        s = (s + 1) & mask;
    }
}

// Whether x is in the table of 2^bits slots (it has an empty slot, so the probe ends).
__device__ __forceinline__ bool tc_lookup(const u32 *tab, u32 x, u32 bits) {
    u32 mask = (1u << bits) - 1;
    u32 s = tc_slot(x, bits);
    for (;;) {
        u32 y = tab[s];
        if (y == x) {
            return true;
        }
        if (y == TC_EMPTY) {
            return false;
        }
        s = (s + 1) & mask;
    }
}

// Adds one triangle (v, u, w) to the per-node counts.
__device__ __forceinline__ void tc_found(u64 *per_node, u64 v, u32 u, u32 w) {
    tc_add_u64(&per_node[v], 1);
    tc_add_u64(&per_node[u], 1);
    tc_add_u64(&per_node[w], 1);
}

// Whether x is in the sorted list adj[l0 .. l0 + nl) (binary search).
__device__ __forceinline__ bool tc_contains(const u32 *__restrict__ adj, u64 l0, u32 nl, u32 x) {
    u32 lo = 0, hi = nl;
    while (lo < hi) {
        u32 mid = (lo + hi) / 2;
        if (adj[l0 + mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < nl && adj[l0 + lo] == x;
}

// Rounds of TC_LANES lanes over `stride` elements times the steps (1 load + a binary search
// in `searched` elements) of each: the cost model of tc_search_row's two directions.
__device__ __forceinline__ u32 tc_cost(u32 stride, u32 searched) {
    return (stride + TC_LANES - 1) / TC_LANES * (33 - __clz(searched));
}

} // namespace

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_merge(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
             u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch, const u32 *__restrict__ rows,
             u64 row_begin, u64 row_end) {
    __shared__ u32 cache[TC_CACHE];
    __shared__ u64 sums[TC_WG];
    __shared__ u64 first_last[2];
    u32 lid = threadIdx.x;
    u64 e0 = (u64)blockIdx.x * TC_WG;
    u64 e_last = min(e0 + TC_WG, m) - 1;
    u64 e = e0 + lid;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
    // The first and last rows of the block's edges.
    if (lid == 0) {
        first_last[0] = tc_row_of(indptr, 0, n - 1, e0);
    } else if (lid == TC_WG - 1) {
        first_last[1] = tc_row_of(indptr, 0, n - 1, e_last);
    }
    __syncthreads();
    u64 v0 = first_last[0];
    u64 v1 = (e_last - e0 == TC_WG - 1) ? first_last[1] : tc_row_of(indptr, v0, n - 1, e_last);
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
              u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch, const u32 *__restrict__ rows,
             u64 row_begin, u64 row_end) {
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u32 lane = lid % TC_LANES;
    u64 e = (u64)blockIdx.x * (TC_WG / TC_LANES) + lid / TC_LANES;
    u64 c = 0;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
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
    tc_search_row(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
                  u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch,
                  const u32 *__restrict__ rows, u64 row_begin, u64 row_end) {
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u32 lane = lid % TC_LANES;
    u64 c = 0;
    (void)n;
    (void)m;
    (void)scratch;
    u64 stride = (u64)gridDim.x * TC_TEAMS;
    for (u64 r = row_begin + (u64)blockIdx.x * TC_TEAMS + lid / TC_LANES; r < row_end; r += stride) {
        u64 v = rows[r];
        u64 a0 = indptr[v];
        u32 na = (u32)(indptr[v + 1] - a0); // at least 2 (the host's row list)
        u32 vmin = adj[a0];
        u32 vmax = adj[a0 + na - 1];
        for (u32 i = 0; i < na; i++) {
            u32 u = adj[a0 + i];
            u64 b0 = indptr[u];
            u32 nb = (u32)(indptr[u + 1] - b0);
            u64 cu = 0;
            if (tc_cost(nb, na) <= tc_cost(na, nb)) {
                // Scan N+(u), search N+(v) (within [vmin, vmax]; N+(u) is sorted, so past
                // vmax nothing matches).
                for (u32 j = lane; j < nb; j += TC_LANES) {
                    u32 w = adj[b0 + j];
                    if (w > vmax) {
                        break;
                    }
                    if (w >= vmin && tc_contains(adj, a0, na, w)) {
                        cu++;
                        if (want_per_node) {
                            tc_add_u64(&per_node[w], 1);
                        }
                    }
                }
            } else {
                // Scan N+(v), search N+(u).
                for (u32 j = lane; j < na; j += TC_LANES) {
                    u32 w = adj[a0 + j];
                    if (tc_contains(adj, b0, nb, w)) {
                        cu++;
                        if (want_per_node) {
                            tc_add_u64(&per_node[w], 1);
                        }
                    }
                }
            }
            if (want_per_node && cu != 0) {
                tc_add_u64(&per_node[v], cu);
                tc_add_u64(&per_node[u], cu);
            }
            c += cu;
        }
    }
    tc_group_sum(sums, c, total);
}

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_hash_warp(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
                 u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch,
                 const u32 *__restrict__ rows, u64 row_begin, u64 row_end) {
    __shared__ u32 tabs[TC_TEAMS * TC_WARP_SLOTS];
    __shared__ u32 nbs[TC_TEAMS * TC_WARP_MAX];
    __shared__ u64 b0s[TC_TEAMS * TC_WARP_MAX];
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u32 lane = lid % TC_LANES;
    u32 team = lid / TC_LANES;
    u32 *tab = tabs + team * TC_WARP_SLOTS;
    u32 *nb = nbs + team * TC_WARP_MAX;
    u64 *b0 = b0s + team * TC_WARP_MAX;
    u64 c = 0;
    (void)n;
    (void)m;
    (void)scratch;
    for (u32 s = lid; s < TC_TEAMS * TC_WARP_SLOTS; s += TC_WG) {
        tabs[s] = TC_EMPTY;
    }
    __syncthreads();
    u64 stride = (u64)gridDim.x * TC_TEAMS;
    for (u64 base = row_begin + (u64)blockIdx.x * TC_TEAMS; base < row_end; base += stride) {
        u64 r = base + team;
        u64 v = 0, a0 = 0, na = 0;
        if (r < row_end) {
            v = rows[r];
            a0 = indptr[v];
            na = indptr[v + 1] - a0;
        }
        for (u64 i = lane; i < na; i += TC_LANES) {
            u32 u = adj[a0 + i];
            tc_insert(tab, u, TC_WARP_BITS);
            u64 ub = indptr[u];
            b0[i] = ub;
            nb[i] = (u32)(indptr[u + 1] - ub);
        }
        __syncthreads();
        if (na != 0) {
            u32 vmax = adj[a0 + na - 1];
            u64 i = 0;
            u64 j = lane; // element j of N+(u_i), u_i = N+(v)[i]
            for (;;) {
                while (i < na && j >= nb[i]) {
                    j -= nb[i];
                    i++;
                }
                if (i >= na) {
                    break;
                }
                u32 w = adj[b0[i] + j];
                if (w > vmax) {
                    // The rest of N+(u_i) is larger still: on to this lane's first element
                    // of the next list.
                    j += (nb[i] - j + TC_LANES - 1) / TC_LANES * TC_LANES;
                    continue;
                }
                if (tc_lookup(tab, w, TC_WARP_BITS)) {
                    c++;
                    if (want_per_node) {
                        tc_found(per_node, v, adj[a0 + i], w);
                    }
                }
                j += TC_LANES;
            }
        }
        __syncthreads();
        for (u32 s = lane; s < TC_WARP_SLOTS; s += TC_LANES) {
            tab[s] = TC_EMPTY;
        }
        __syncthreads();
    }
    tc_group_sum(sums, c, total);
}

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_hash_block(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
                  u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch,
                  const u32 *__restrict__ rows, u64 row_begin, u64 row_end) {
    __shared__ u32 tabs[TC_BLOCK_SLOTS];
    __shared__ u32 nbs[TC_BLOCK_MAX];
    __shared__ u64 b0s[TC_BLOCK_MAX];
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u32 lane = lid % TC_LANES;
    u32 team = lid / TC_LANES;
    u64 c = 0;
    (void)n;
    (void)m;
    (void)scratch;
    for (u32 s = lid; s < TC_BLOCK_SLOTS; s += TC_WG) {
        tabs[s] = TC_EMPTY;
    }
    __syncthreads();
    for (u64 r = row_begin + blockIdx.x; r < row_end; r += gridDim.x) {
        u64 v = rows[r];
        u64 a0 = indptr[v];
        u64 na = indptr[v + 1] - a0; // 2..TC_BLOCK_MAX (the host's bins)
        for (u64 i = lid; i < na; i += TC_WG) {
            u32 u = adj[a0 + i];
            tc_insert(tabs, u, TC_BLOCK_BITS);
            u64 ub = indptr[u];
            b0s[i] = ub;
            nbs[i] = (u32)(indptr[u + 1] - ub);
        }
        __syncthreads();
        u32 vmax = adj[a0 + na - 1];
        // Team t walks the concatenation of the lists N+(u_i), i = t, t + TC_TEAMS, ...;
        // lane l takes its elements l, l + TC_LANES, ... (as in tc_hash_warp).
        u64 i = team;
        u64 j = lane;
        for (;;) {
            while (i < na && j >= nbs[i]) {
                j -= nbs[i];
                i += TC_TEAMS;
            }
            if (i >= na) {
                break;
            }
            u32 w = adj[b0s[i] + j];
            if (w > vmax) {
                j += (nbs[i] - j + TC_LANES - 1) / TC_LANES * TC_LANES;
                continue;
            }
            if (tc_lookup(tabs, w, TC_BLOCK_BITS)) {
                c++;
                if (want_per_node) {
                    tc_found(per_node, v, adj[a0 + i], w);
                }
            }
            j += TC_LANES;
        }
        __syncthreads();
        for (u32 s = lid; s < TC_BLOCK_SLOTS; s += TC_WG) {
            tabs[s] = TC_EMPTY;
        }
        __syncthreads();
    }
    tc_group_sum(sums, c, total);
}

extern "C" __global__ void __launch_bounds__(TC_WG)
    tc_hash(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
            u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch,
            const u32 *__restrict__ rows, u64 row_begin, u64 row_end) {
    __shared__ u64 sums[TC_WG];
    u32 lid = threadIdx.x;
    u64 words = (n + 31) / 32;
    u32 *bits = scratch + (u64)blockIdx.x * words;
    u64 c = 0;
    (void)m;
    for (u64 r = row_begin + blockIdx.x; r < row_end; r += gridDim.x) {
        u64 v = rows[r];
        u64 a0 = indptr[v];
        u64 na = indptr[v + 1] - a0; // at least 2 (the host's bins)
        for (u64 i = lid; i < na; i += TC_WG) {
            u32 x = adj[a0 + i];
            atomicOr(&bits[x >> 5], 1u << (x & 31));
        }
        __syncthreads();
        u32 vmax = adj[a0 + na - 1];
        for (u64 i = lid; i < na; i += TC_WG) {
            u32 u = adj[a0 + i];
            u64 b0 = indptr[u];
            u64 nb = indptr[u + 1] - b0;
            u64 cu = 0;
            for (u64 j = 0; j < nb; j++) {
                u32 w = adj[b0 + j];
                if (w > vmax) {
                    break;
                }
                // __ldcg: from L2, where the atomicOr above set the bits (not a stale L1 line).
                if ((__ldcg(&bits[w >> 5]) >> (w & 31)) & 1u) {
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
            __stcg(&bits[adj[a0 + i] >> 5], 0u);
        }
        __syncthreads();
    }
    tc_group_sum(sums, c, total);
}

namespace {

// Whether x is in the sorted list L[0 .. nl) (binary search; L in shared or global memory).
__device__ __forceinline__ bool tc_find(const u32 *L, u32 nl, u32 x) {
    u32 lo = 0, hi = nl;
    while (lo < hi) {
        u32 mid = lo + (hi - lo) / 2;
        if (L[mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < nl && L[lo] == x;
}

// The number of elements <= x in the sorted list L[0 .. nl) (global).
__device__ __forceinline__ u32 tc_upper_bound(const u32 *__restrict__ L, u32 nl, u32 x) {
    u32 lo = 0, hi = nl;
    while (lo < hi) {
        u32 mid = lo + (hi - lo) / 2;
        if (L[mid] <= x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// tc_search_flat's per-edge flags: the scanned / the searched list lies in the row cache.
constexpr u32 TC_SCAN_CACHED = 1u;
constexpr u32 TC_FIND_CACHED = 2u;

} // namespace

namespace {

// tc_search_flat's tables of the chunk's edges, in shared memory.
struct tc_flat_tables {
    u64 offs[TC_WG + 1]; // offs[t]: first item of edge t; offs[TC_WG]: the total
    u64 sbase[TC_WG];    // adj offset of edge t's scanned list
    u64 fbase[TC_WG];    // adj offset of edge t's searched list
    u32 flen[TC_WG];     // its length
    u32 flags[TC_WG];    // TC_SCAN_CACHED | TC_FIND_CACHED
    u32 ev[TC_WG];       // edge t is v -> u (for per-node counts)
    u32 eu[TC_WG];
    u64 first_last[2];
};

// The body of tc_search_flat and tc_search_flat_global: the chunk's rows are cached in
// cache[0 .. cache_cap) when they fit (cache_cap 0: never). All threads call it.
__device__ __forceinline__ void
tc_search_flat_run(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
                   u64 *total, u64 *per_node, u32 want_per_node, u32 *cache, u32 cache_cap,
                   tc_flat_tables *T) {
    u32 lid = threadIdx.x;
    u64 c = 0;
    u64 chunks = (m + TC_WG - 1) / TC_WG;
    for (u64 chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
        u64 e0 = chunk * TC_WG;
        u64 e_last = min(e0 + TC_WG, m) - 1;
        u64 e = e0 + lid;
        // The first and last rows of the chunk's edges; their span of adj cached if it fits.
        if (lid == 0) {
            T->first_last[0] = tc_row_of(indptr, 0, n - 1, e0);
        } else if (lid == TC_WG - 1) {
            T->first_last[1] = tc_row_of(indptr, 0, n - 1, e_last);
        }
        __syncthreads();
        u64 v0 = T->first_last[0];
        u64 v1 =
            (e_last - e0 == TC_WG - 1) ? T->first_last[1] : tc_row_of(indptr, v0, n - 1, e_last);
        u64 span0 = indptr[v0];
        u64 span = indptr[v1 + 1] - span0;
        bool cached = span <= cache_cap;
        if (cached) {
            for (u64 k = lid; k < span; k += TC_WG) {
                cache[k] = adj[span0 + k];
            }
        }
        // Edge e = v -> u (u = N+(v)[i]): a triangle (v, u, w) has w in N+(v)[i+1 ..] (w > u)
        // and in N+(u) up to vmax = max N+(v): the first `cut` elements of N+(u). Either
        // direction: scan N+(u)[0 .. cut) and search N+(v)[i+1 ..], or scan N+(v)[i+1 ..]
        // and search N+(u)[0 .. cut), whichever costs fewer items x search steps.
        u64 items = 0;
        u32 v = 0, u = 0, fl = 0, nf = 0;
        u64 sb = 0, fb = 0;
        if (e < m) {
            u64 row = tc_row_of(indptr, v0, v1, e);
            v = (u32)row;
            u = adj[e];
            u64 a_end = indptr[row + 1]; // N+(v) ends at a_end; N+(v)[i+1 ..] starts at e + 1
            u32 after = (u32)(a_end - 1 - e);
            u64 b0 = indptr[u];
            u32 nb = (u32)(indptr[u + 1] - b0);
            if (after != 0 && nb != 0) {
                u32 vmax = adj[a_end - 1];
                u32 cut = tc_upper_bound(adj + b0, nb, vmax);
                if (cut != 0) {
                    u64 cost_scan_u = (u64)cut * (33 - __clz(after));
                    u64 cost_scan_v = (u64)after * (33 - __clz(cut));
                    if (cost_scan_u <= cost_scan_v) {
                        items = cut;
                        sb = b0;
                        fb = e + 1;
                        nf = after;
                        fl = cached ? TC_FIND_CACHED : 0;
                    } else {
                        items = after;
                        sb = e + 1;
                        fb = b0;
                        nf = cut;
                        fl = cached ? TC_SCAN_CACHED : 0;
                    }
                }
            }
        }
        T->sbase[lid] = sb;
        T->fbase[lid] = fb;
        T->flen[lid] = nf;
        T->flags[lid] = fl;
        T->ev[lid] = v;
        T->eu[lid] = u;
        // Exclusive prefix sums of the item counts (Hillis-Steele in offs[1 ..]).
        T->offs[lid + 1] = items;
        if (lid == 0) {
            T->offs[0] = 0;
        }
        __syncthreads();
        for (u32 s = 1; s < TC_WG; s <<= 1) {
            u64 x = lid >= s ? T->offs[lid + 1 - s] : 0;
            __syncthreads();
            T->offs[lid + 1] += x;
            __syncthreads();
        }
        // The chunk's items, flattened: thread lid takes items lid, lid + TC_WG, ...; item q
        // is element q - offs[t] of edge t's scanned list, offs[t] <= q < offs[t + 1].
        u64 n_items = T->offs[TC_WG];
        // Edge t, the last one reached, in registers: its items end at `end`, item q is
        // adj[skew + q] (wrapping), searched for in the tnf elements at adj[tfb ..] (tfl:
        // which lists are cached).
        u32 t = 0, next = 0; // next: the first edge this work-item may move on to
        u64 end = 0, skew = 0, tfb = 0;
        u32 tnf = 0, tfl = 0;
        u32 hits = 0; // triangles of edge t found here, not yet added to per_node[v], [u]
        for (u64 q = lid; q < n_items; q += TC_WG) {
            if (q >= end) {
                if (hits != 0) {
                    tc_add_u64(&per_node[T->ev[t]], hits);
                    tc_add_u64(&per_node[T->eu[t]], hits);
                    hits = 0;
                }
                // On to the last edge t >= next with offs[t] <= q (edges without items are
                // passed over): gallop from `next`, then bisect; offs[TC_WG] > q ends both.
                u32 lo = next, step = 1;
                u32 hi = min(lo + 1, TC_WG);
                while (T->offs[hi] <= q) {
                    lo = hi;
                    step <<= 1;
                    hi = min(lo + step, TC_WG);
                }
                while (hi - lo > 1) {
                    u32 mid = (lo + hi) / 2;
                    if (T->offs[mid] <= q) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                t = lo;
                next = lo + 1;
                end = T->offs[lo + 1];
                skew = T->sbase[lo] - T->offs[lo];
                tfb = T->fbase[lo];
                tnf = T->flen[lo];
                tfl = T->flags[lo];
            }
            u64 si = skew + q;
            u32 x = (tfl & TC_SCAN_CACHED) ? cache[si - span0] : adj[si];
            bool hit = (tfl & TC_FIND_CACHED) ? tc_find(cache + (tfb - span0), tnf, x)
                                              : tc_find(adj + tfb, tnf, x);
            if (hit) {
                c++;
                if (want_per_node) {
                    hits++;
                    tc_add_u64(&per_node[x], 1);
                }
            }
        }
        if (hits != 0) {
            tc_add_u64(&per_node[T->ev[t]], hits);
            tc_add_u64(&per_node[T->eu[t]], hits);
        }
        // The next chunk overwrites the cache and the edge tables.
        __syncthreads();
    }
    // Every thread is past the chunk loop's last __syncthreads: offs is free for the sum.
    tc_group_sum(T->offs, c, total);
}

} // namespace

// At least 8 blocks per SM (2048 threads, 32 registers each): latency-bound searches.
extern "C" __global__ void __launch_bounds__(TC_WG, 8)
    tc_search_flat(u64 n, u64 m, const u64 *__restrict__ indptr, const u32 *__restrict__ adj,
                   u64 *total, u64 *per_node, u32 want_per_node, u32 *scratch,
                   const u32 *__restrict__ rows, u64 row_begin, u64 row_end) {
    __shared__ u32 cache[TC_CACHE];
    __shared__ tc_flat_tables tables;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
    tc_search_flat_run(n, m, indptr, adj, total, per_node, want_per_node, cache, TC_CACHE,
                       &tables);
}

extern "C" __global__ void __launch_bounds__(TC_WG, 8)
    tc_search_flat_global(u64 n, u64 m, const u64 *__restrict__ indptr,
                          const u32 *__restrict__ adj, u64 *total, u64 *per_node,
                          u32 want_per_node, u32 *scratch, const u32 *__restrict__ rows,
                          u64 row_begin, u64 row_end) {
    __shared__ u32 cache[1]; // never used: no row cache
    __shared__ tc_flat_tables tables;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
    tc_search_flat_run(n, m, indptr, adj, total, per_node, want_per_node, cache, 0, &tables);
}

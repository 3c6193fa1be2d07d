// Triangle counting on the degree-ordered orientation (trident_core::triangles::OrientedGraph):
// row v of the CSR (indptr, adj) holds v's out-neighbours, sorted; for every oriented edge
// v -> u, the common out-neighbours w of v and u close a triangle, found exactly once.
//
// The same algorithms, the same launch geometry and the same argument signature as
// kernels/cuda/triangles.cu. Three kernels, one per TriangleAlgorithm:
//
//   tc_merge   (Merge; the seed's block-per-row merge, with work splitting): work-group g
//              takes the TC_WG oriented edges [g*TC_WG, (g+1)*TC_WG), one per work-item. The
//              rows those edges leave from are contiguous in adj; when they span at most
//              TC_CACHE entries, the group first copies them to local memory, and each
//              work-item merges its row (from local memory) with N+(u) (global). A long row is
//              thus split over many work-groups, and many short rows share one.
//              Global size: ceil(m / TC_WG) * TC_WG.
//   tc_search  (BinarySearch): 32 work-items per oriented edge (TC_WG / 32 edges per group);
//              the 32 lanes stride over the shorter of N+(v), N+(u) and binary-search each
//              element in the longer. Keeps every lane busy on long, skewed rows.
//              Global size: ceil(m / (TC_WG / 32)) * TC_WG.
//   tc_hash    (Hash): work-group g owns a bitmap of n bits, scratch[g * words ...] with
//              words = ceil(n / 32), all zero on entry and left zero on exit; it loops over the
//              rows v = g, g + G, ... (G work-groups): marks N+(v), then each work-item tests
//              the elements of N+(u) for its u in N+(v), then clears the marks.
//              Global size: G * TC_WG (G chosen by the host, scratch holds G * words uints).
//
// Kernel arguments (all three kernels; the host code must match them exactly):
//   ulong n                 number of nodes
//   ulong m                 number of oriented edges (= len(adj))
//   const ulong *indptr     n + 1 row pointers
//   const uint  *adj        m out-neighbour ids, each row sorted
//   ulong *total            one counter, zero on entry: the triangles are added to it
//   ulong *per_node         n counters, zero on entry, when want_per_node != 0 (else unused,
//                           one element): triangles through each node are added
//   uint  want_per_node
//   uint  *scratch          tc_hash's bitmaps (see above); unused (one element) otherwise
//
// Work-groups are TC_WG = 256 work-items (reqd_work_group_size). Counts are summed per
// work-group in local memory and added once per group to *total, in 64 bits: with atom_add
// where the device has cl_khr_int64_base_atomics, else as two 32-bit atomic adds with carry
// into the low and high words of the (little-endian) ulong (the host may force this with
// -D TC_NO_INT64_ATOMICS in a build). Per-node counts use the same 64-bit add. Edge offsets are 64-bit.

#define TC_WG 256
#define TC_LANES 32
#define TC_CACHE 2048

#if defined(cl_khr_int64_base_atomics) && !defined(TC_NO_INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
inline void tc_add_u64(__global ulong *p, ulong x)
{
    atom_add((volatile __global ulong *)p, x);
}
#else
// Adds x to the little-endian ulong at p with 32-bit atomics: the low word, then the high
// word plus the carry out of the low word. Exact for any x as long as the sum fits in 64 bits.
inline void tc_add_u64(__global ulong *p, ulong x)
{
    volatile __global uint *w = (volatile __global uint *)p;
    uint lo = (uint)x;
    uint hi = (uint)(x >> 32);
    if (lo != 0) {
        uint old = atomic_add(&w[0], lo);
        if (old + lo < old) {
            hi += 1;
        }
    }
    if (hi != 0) {
        atomic_add(&w[1], hi);
    }
}
#endif

// The row of oriented edge e: the largest v in [lo, hi] with indptr[v] <= e.
inline ulong tc_row_of(__global const ulong *indptr, ulong lo, ulong hi, ulong e)
{
    while (lo < hi) {
        ulong mid = lo + (hi - lo + 1) / 2;
        if (indptr[mid] <= e) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

// Sums `c` over the work-group into *total (one atomic per group). All work-items call it.
inline void tc_group_sum(__local ulong *sums, ulong c, __global ulong *total)
{
    uint lid = get_local_id(0);
    sums[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = TC_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sums[lid] += sums[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && sums[0] != 0) {
        tc_add_u64(total, sums[0]);
    }
}

// Merge of a (len na, in address space SPACE) with b (global, len nb): the number of common
// elements; each one w is added to per_node[w] when want_per_node.
#define TC_DEFINE_MERGE(NAME, SPACE)                                                         \
    inline ulong NAME(SPACE const uint *a, ulong na, __global const uint *b, ulong nb,       \
                      __global ulong *per_node, uint want_per_node)                          \
    {                                                                                        \
        ulong i = 0, j = 0, c = 0;                                                           \
        while (i < na && j < nb) {                                                           \
            uint x = a[i];                                                                   \
            uint y = b[j];                                                                   \
            if (x == y) {                                                                    \
                c++;                                                                         \
                if (want_per_node) {                                                         \
                    tc_add_u64(&per_node[x], 1);                                             \
                }                                                                            \
            }                                                                                \
            i += (x <= y);                                                                   \
            j += (y <= x);                                                                   \
        }                                                                                    \
        return c;                                                                            \
    }
TC_DEFINE_MERGE(tc_merge_local, __local)
TC_DEFINE_MERGE(tc_merge_global, __global)

__kernel __attribute__((reqd_work_group_size(TC_WG, 1, 1))) void
tc_merge(const ulong n, const ulong m, __global const ulong *indptr, __global const uint *adj,
         __global ulong *total, __global ulong *per_node, const uint want_per_node,
         __global uint *scratch)
{
    __local uint cache[TC_CACHE];
    __local ulong sums[TC_WG];
    __local ulong rows[2];
    uint lid = get_local_id(0);
    ulong e0 = (ulong)get_group_id(0) * TC_WG;
    ulong e_last = min(e0 + TC_WG, m) - 1;
    ulong e = e0 + lid;
    (void)scratch;
    // The first and last rows of the group's edges.
    if (lid == 0) {
        rows[0] = tc_row_of(indptr, 0, n - 1, e0);
    } else if (lid == TC_WG - 1) {
        rows[1] = tc_row_of(indptr, 0, n - 1, e_last);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong v0 = rows[0];
    ulong v1 = (e_last - e0 == TC_WG - 1) ? rows[1] : tc_row_of(indptr, v0, n - 1, e_last);
    ulong span0 = indptr[v0];
    ulong span = indptr[v1 + 1] - span0;
    int cached = span <= TC_CACHE;
    if (cached) {
        for (ulong k = lid; k < span; k += TC_WG) {
            cache[k] = adj[span0 + k];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong c = 0;
    if (e < m) {
        ulong v = tc_row_of(indptr, v0, v1, e);
        uint u = adj[e];
        ulong a0 = indptr[v];
        ulong na = indptr[v + 1] - a0;
        ulong b0 = indptr[u];
        ulong nb = indptr[u + 1] - b0;
        if (cached) {
            c = tc_merge_local(cache + (a0 - span0), na, adj + b0, nb, per_node, want_per_node);
        } else {
            c = tc_merge_global(adj + a0, na, adj + b0, nb, per_node, want_per_node);
        }
        if (want_per_node && c != 0) {
            tc_add_u64(&per_node[v], c);
            tc_add_u64(&per_node[u], c);
        }
    }
    tc_group_sum(sums, c, total);
}

__kernel __attribute__((reqd_work_group_size(TC_WG, 1, 1))) void
tc_search(const ulong n, const ulong m, __global const ulong *indptr, __global const uint *adj,
          __global ulong *total, __global ulong *per_node, const uint want_per_node,
          __global uint *scratch)
{
    __local ulong sums[TC_WG];
    uint lid = get_local_id(0);
    uint lane = lid % TC_LANES;
    ulong e = (ulong)get_group_id(0) * (TC_WG / TC_LANES) + lid / TC_LANES;
    ulong c = 0;
    (void)scratch;
    if (e < m) {
        ulong v = tc_row_of(indptr, 0, n - 1, e);
        uint u = adj[e];
        ulong a0 = indptr[v];
        ulong na = indptr[v + 1] - a0;
        ulong b0 = indptr[u];
        ulong nb = indptr[u + 1] - b0;
        // small: the shorter list, searched for in the longer.
        ulong s0 = na <= nb ? a0 : b0;
        ulong ns = na <= nb ? na : nb;
        ulong l0 = na <= nb ? b0 : a0;
        ulong nl = na <= nb ? nb : na;
        for (ulong i = lane; i < ns; i += TC_LANES) {
            uint x = adj[s0 + i];
            ulong lo = 0, hi = nl;
            while (lo < hi) {
                ulong mid = (lo + hi) / 2;
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

__kernel __attribute__((reqd_work_group_size(TC_WG, 1, 1))) void
tc_hash(const ulong n, const ulong m, __global const ulong *indptr, __global const uint *adj,
        __global ulong *total, __global ulong *per_node, const uint want_per_node,
        __global uint *scratch)
{
    __local ulong sums[TC_WG];
    uint lid = get_local_id(0);
    ulong words = (n + 31) / 32;
    __global uint *bits = scratch + (ulong)get_group_id(0) * words;
    ulong c = 0;
    (void)m;
    for (ulong v = get_group_id(0); v < n; v += get_num_groups(0)) {
        ulong a0 = indptr[v];
        ulong na = indptr[v + 1] - a0;
        if (na < 2) {
            continue; // the same for the whole group: no barrier is skipped by some only
        }
        for (ulong i = lid; i < na; i += TC_WG) {
            uint x = adj[a0 + i];
            atomic_or(&bits[x >> 5], 1u << (x & 31));
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (ulong i = lid; i < na; i += TC_WG) {
            uint u = adj[a0 + i];
            ulong b0 = indptr[u];
            ulong nb = indptr[u + 1] - b0;
            ulong cu = 0;
            for (ulong j = 0; j < nb; j++) {
                uint w = adj[b0 + j];
                if ((bits[w >> 5] >> (w & 31)) & 1u) {
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
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (ulong i = lid; i < na; i += TC_WG) {
            bits[adj[a0 + i] >> 5] = 0;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    tc_group_sum(sums, c, total);
}

// Triangle counting on the degree-ordered orientation (trident_core::triangles::OrientedGraph):
// row v of the CSR (indptr, adj) holds v's out-neighbours, sorted; for every oriented edge
// v -> u, the common out-neighbours w of v and u close a triangle, found exactly once.
//
// One source for OpenCL and CUDA (the dialect: kernels/common/dialect.h; the CUDA build:
// kernels/cuda/triangles.cu). The kernels are plain (no REAL): one build per backend. In CUDA
// terms a work-group is a block, local memory is shared memory and a team of TC_LANES
// work-items is a warp. The host plan (trident_core::triangles::plan::GpuPlan) says which
// kernels run, on how many work-groups and over which rows:
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
//   tc_search_row (BinarySearch under TRIDENT_TC_SEARCH=row): a team of TC_LANES
//              work-items per row v of rows[row_begin..row_end) (TC_WG / TC_LANES rows per
//              group and round; groups loop over the list), no row search and no local memory:
//              for each u in N+(v) in turn, the lanes either stride over N+(u) (up to the
//              largest element of N+(v)) and binary-search each w in N+(v), or stride over
//              N+(v) and binary-search each element in N+(u), whichever costs fewer rounds x
//              steps. No barriers inside the row loop. Global size: G * TC_WG for any G >= 1.
//   tc_search_flat (BinarySearch, the default; TRIDENT_TC_SEARCH=flat): work-group g takes the chunks
//              of TC_WG oriented edges g, g + G, ... (chunk k: edges [k*TC_WG, (k+1)*TC_WG));
//              the rows they leave from are cached in local memory as in tc_merge. Work-item l
//              sets up edge e = v -> u (u = N+(v)[i]): a triangle (v, u, w) needs w in
//              N+(v)[i+1..] and in N+(u) up to vmax = max N+(v), the first `cut` elements of
//              N+(u) (one binary search). The work-item picks the cheaper (items x search
//              steps) of: scan N+(u)[0..cut) and binary-search each element in N+(v)[i+1..], or
//              scan N+(v)[i+1..] and search N+(u)[0..cut) (N+(v) from the cache when the rows
//              fit in it). An exclusive prefix sum of the item counts over the group (offs, in
//              local memory) flattens the items of all TC_WG edges: work-item l takes items l,
//              l + TC_WG, ..., finding the edge of each by galloping forward in offs, so that
//              no lane idles on a short list and no edge waits for another's round. Per-node
//              counts: per_node[w] per triangle, per_node[v] and [u] once per run of a
//              work-item's items on one edge. Global size: G * TC_WG for any G >= 1 (the host:
//              one group per chunk).
//   tc_search_flat_global (BinarySearch under TRIDENT_TC_SEARCH=flat-global): tc_search_flat
//              without the row cache (N+(v) read from global memory too): 10 KB of local
//              memory per group instead of 18, more of the SM's memory left to the L1 cache.
//   Hash: three kernels, each over a bin of rows rows[row_begin..row_end) chosen by
//   out-degree on the host (trident_core::triangles::plan::RowBins), so that each launch is
//   uniform. Each takes a row v, puts N+(v) in a set, and tests every w of N+(u) for every u
//   in N+(v) against it (w beyond the largest element of N+(v) ends N+(u)'s scan):
//   tc_hash_warp  rows of out-degree 2..TC_WARP_MAX: a team of TC_LANES work-items per row
//              (TC_WG / TC_LANES rows per group and round), the set an open-addressing hash
//              table of TC_WARP_SLOTS in local memory; the team's lanes walk the
//              concatenation of the lists N+(u), u in N+(v), lane l taking its elements l,
//              l + TC_LANES, ..., so short lists do not leave lanes idle.
//              Global size: G * TC_WG for any G >= 1 (groups loop over the bin).
//   tc_hash_block rows of out-degree TC_WARP_MAX+1..TC_BLOCK_MAX: a work-group per row, the
//              set a hash table of TC_BLOCK_SLOTS in local memory; team t (32 lanes) takes the
//              u = N+(v)[t], N+(v)[t + TC_WG/TC_LANES], ... and walks the concatenation of
//              their lists N+(u) as tc_hash_warp does.
//   tc_hash    longer rows: a work-group per row, the set a bitmap of n bits in global
//              memory, scratch[g * words ...] with words = ceil(n / 32), all zero on entry and
//              left zero on exit; each work-item scans N+(u) for its u in N+(v).
//              Global size: G * TC_WG (G chosen by the host, scratch holds G * words uints).
//
// Kernel arguments (all eight kernels; the host code, trident_core::triangles::device, must
// match them exactly):
//   ulong n                 number of nodes
//   ulong m                 the oriented edges counted: adj[0..m), the rows 0..k whose
//                           triangles the host counts (m = len(adj) unless k < n)
//   const ulong *indptr     n + 1 row pointers
//   const uint  *adj        m out-neighbour ids, each row sorted
//   ulong *total            one counter, zero on entry: the triangles are added to it
//   ulong *per_node         n counters, zero on entry, when want_per_node != 0 (else unused,
//                           one element): triangles through each node are added
//   uint  want_per_node
//   uint  *scratch          tc_hash's bitmaps (see above); unused (one element) otherwise
//   const uint *rows        the binned row list (at least one element)
//   ulong row_begin         the hash kernels and tc_search_row take rows[row_begin..row_end);
//   ulong row_end           tc_merge, tc_search, tc_search_flat(_global) ignore the three
//
// Work-groups are TC_WG = 256 work-items (KERNEL_WG: OpenCL's reqd_work_group_size, CUDA's
// __launch_bounds__). Counts are summed per work-group in local memory and added once per
// group to *total, in 64 bits: with a 64-bit atomic add (CUDA; OpenCL where the device has
// cl_khr_int64_base_atomics), else as two 32-bit atomic adds with carry into the low and high
// words of the (little-endian) ulong (an OpenCL build may force this with
// -D TC_NO_INT64_ATOMICS). Per-node counts use the same 64-bit add. Edge offsets are 64-bit.
// Every barrier is reached by all work-items of a group: the loops around them have trip
// counts uniform over the group. The local hash tables are only read (plain loads) after the
// barrier that ends their inserts.

#define TC_WG 256
#define TC_LANES 32
#define TC_CACHE 2048
#define TC_TEAMS (TC_WG / TC_LANES)
#define TC_WARP_MAX 64
#define TC_WARP_BITS 7 // TC_WARP_SLOTS = 2^7 >= 2 * TC_WARP_MAX: load factor <= 1/2
#define TC_WARP_SLOTS (1u << TC_WARP_BITS)
#define TC_BLOCK_MAX 2048
#define TC_BLOCK_BITS 12
#define TC_BLOCK_SLOTS (1u << TC_BLOCK_BITS)
#define TC_EMPTY 0xffffffffu // not a node id: ids are < n <= 2^32 - 1

#if TC_BLOCK_SLOTS < 2 * TC_BLOCK_MAX
#error "hash table load factor above 1/2"
#endif

#if defined(TRIDENT_CUDA) || (defined(cl_khr_int64_base_atomics) && !defined(TC_NO_INT64_ATOMICS))
DEVICE void tc_add_u64(__global ulong *p, ulong x)
{
    atom_add(p, x);
}
#else
// Adds x to the little-endian ulong at p with 32-bit atomics: the low word, then the high
// word plus the carry out of the low word. Exact for any x as long as the sum fits in 64 bits.
DEVICE void tc_add_u64(__global ulong *p, ulong x)
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
DEVICE ulong tc_row_of(__global const ulong *restrict indptr, ulong lo, ulong hi, ulong e)
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
DEVICE void tc_group_sum(LOCAL_PTR ulong *sums, ulong c, __global ulong *total)
{
    uint lid = get_local_id_u32(0);
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
    DEVICE ulong NAME(SPACE const uint *a, ulong na, __global const uint *restrict b,        \
                      ulong nb, __global ulong *per_node, uint want_per_node)                \
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
TC_DEFINE_MERGE(tc_merge_local, LOCAL_PTR)
TC_DEFINE_MERGE(tc_merge_global, __global)

// The merge of N+(v), from the row cache (`in_cache`) when `cached`, else from global memory
// (`in_global`), with N+(u). CUDA (whose two functions above are one and the same) reads
// either memory through a generic pointer in one merge loop; OpenCL C 1.2 has no generic
// address space, so it has a merge loop per address space.
#ifdef TRIDENT_CUDA
#define TC_MERGE_ROW(cached, in_cache, in_global, na, b, nb, per_node, want_per_node)          \
    tc_merge_local((cached) ? (in_cache) : (in_global), na, b, nb, per_node, want_per_node)
#else
#define TC_MERGE_ROW(cached, in_cache, in_global, na, b, nb, per_node, want_per_node)          \
    ((cached) ? tc_merge_local(in_cache, na, b, nb, per_node, want_per_node)                   \
              : tc_merge_global(in_global, na, b, nb, per_node, want_per_node))
#endif

__kernel KERNEL_WG(TC_WG) void
tc_merge(const ulong n, const ulong m, __global const ulong *restrict indptr,
         __global const uint *restrict adj, __global ulong *total, __global ulong *per_node,
         const uint want_per_node, __global uint *scratch, __global const uint *restrict rows,
         const ulong row_begin, const ulong row_end)
{
    __local uint cache[TC_CACHE];
    __local ulong sums[TC_WG];
    __local ulong first_last[2];
    uint lid = get_local_id_u32(0);
    ulong e0 = (ulong)get_group_id(0) * TC_WG;
    ulong e_last = min(e0 + TC_WG, m) - 1;
    ulong e = e0 + lid;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
    // The first and last rows of the group's edges.
    if (lid == 0) {
        first_last[0] = tc_row_of(indptr, 0, n - 1, e0);
    } else if (lid == TC_WG - 1) {
        first_last[1] = tc_row_of(indptr, 0, n - 1, e_last);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong v0 = first_last[0];
    ulong v1 = (e_last - e0 == TC_WG - 1) ? first_last[1] : tc_row_of(indptr, v0, n - 1, e_last);
    ulong span0 = indptr[v0];
    ulong span = indptr[v1 + 1] - span0;
    bool cached = span <= TC_CACHE;
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
        c = TC_MERGE_ROW(cached, cache + (a0 - span0), adj + a0, na, adj + b0, nb, per_node,
                         want_per_node);
        if (want_per_node && c != 0) {
            tc_add_u64(&per_node[v], c);
            tc_add_u64(&per_node[u], c);
        }
    }
    tc_group_sum(sums, c, total);
}

__kernel KERNEL_WG(TC_WG) void
tc_search(const ulong n, const ulong m, __global const ulong *restrict indptr,
          __global const uint *restrict adj, __global ulong *total, __global ulong *per_node,
          const uint want_per_node, __global uint *scratch, __global const uint *restrict rows,
          const ulong row_begin, const ulong row_end)
{
    __local ulong sums[TC_WG];
    uint lid = get_local_id_u32(0);
    uint lane = lid % TC_LANES;
    ulong e = (ulong)get_group_id(0) * (TC_WG / TC_LANES) + lid / TC_LANES;
    ulong c = 0;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
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

// Whether x is in the sorted list adj[l0 .. l0 + nl) (binary search).
DEVICE bool tc_contains(__global const uint *restrict adj, ulong l0, uint nl, uint x)
{
    uint lo = 0, hi = nl;
    while (lo < hi) {
        uint mid = (lo + hi) / 2;
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
DEVICE uint tc_cost(uint stride, uint searched)
{
    return (stride + TC_LANES - 1) / TC_LANES * (33 - clz(searched));
}

__kernel KERNEL_WG(TC_WG) void
tc_search_row(const ulong n, const ulong m, __global const ulong *restrict indptr,
              __global const uint *restrict adj, __global ulong *total, __global ulong *per_node,
              const uint want_per_node, __global uint *scratch,
              __global const uint *restrict rows, const ulong row_begin, const ulong row_end)
{
    __local ulong sums[TC_WG];
    uint lid = get_local_id_u32(0);
    uint lane = lid % TC_LANES;
    ulong c = 0;
    (void)n;
    (void)m;
    (void)scratch;
    ulong stride = (ulong)get_num_groups(0) * TC_TEAMS;
    for (ulong r = row_begin + (ulong)get_group_id(0) * TC_TEAMS + lid / TC_LANES; r < row_end;
         r += stride) {
        ulong v = rows[r];
        ulong a0 = indptr[v];
        uint na = (uint)(indptr[v + 1] - a0); // at least 2 (the host's row list)
        uint vmin = adj[a0];
        uint vmax = adj[a0 + na - 1];
        for (uint i = 0; i < na; i++) {
            uint u = adj[a0 + i];
            ulong b0 = indptr[u];
            uint nb = (uint)(indptr[u + 1] - b0);
            ulong cu = 0;
            if (tc_cost(nb, na) <= tc_cost(na, nb)) {
                // Scan N+(u), search N+(v) (within [vmin, vmax]; N+(u) is sorted, so past
                // vmax nothing matches).
                for (uint j = lane; j < nb; j += TC_LANES) {
                    uint w = adj[b0 + j];
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
                for (uint j = lane; j < na; j += TC_LANES) {
                    uint w = adj[a0 + j];
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

// Hash slot of node id x in a table of 2^bits slots (multiplicative hashing).
DEVICE uint tc_slot(uint x, uint bits)
{
    return (x * 2654435761u) >> (32 - bits);
}

// Inserts x (not yet present) into the table of 2^bits slots (less than half full).
DEVICE void tc_insert(LOCAL_PTR uint *tab, uint x, uint bits)
{
    uint mask = (1u << bits) - 1;
    uint s = tc_slot(x, bits);
    while (atomic_cmpxchg(&tab[s], TC_EMPTY, x) != TC_EMPTY) {
        s = (s + 1) & mask;
    }
}

// Whether x is in the table of 2^bits slots (it has an empty slot, so the probe ends).
DEVICE bool tc_lookup(LOCAL_PTR const uint *tab, uint x, uint bits)
{
    uint mask = (1u << bits) - 1;
    uint s = tc_slot(x, bits);
    for (;;) {
        uint y = tab[s];
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
DEVICE void tc_found(__global ulong *per_node, ulong v, uint u, uint w)
{
    tc_add_u64(&per_node[v], 1);
    tc_add_u64(&per_node[u], 1);
    tc_add_u64(&per_node[w], 1);
}

__kernel KERNEL_WG(TC_WG) void
tc_hash_warp(const ulong n, const ulong m, __global const ulong *restrict indptr,
             __global const uint *restrict adj, __global ulong *total, __global ulong *per_node,
             const uint want_per_node, __global uint *scratch,
             __global const uint *restrict rows, const ulong row_begin, const ulong row_end)
{
    __local uint tabs[TC_TEAMS * TC_WARP_SLOTS];
    __local uint nbs[TC_TEAMS * TC_WARP_MAX];
    __local ulong b0s[TC_TEAMS * TC_WARP_MAX];
    __local ulong sums[TC_WG];
    uint lid = get_local_id_u32(0);
    uint lane = lid % TC_LANES;
    uint team = lid / TC_LANES;
    LOCAL_PTR uint *tab = tabs + team * TC_WARP_SLOTS;
    LOCAL_PTR uint *nb = nbs + team * TC_WARP_MAX;
    LOCAL_PTR ulong *b0 = b0s + team * TC_WARP_MAX;
    ulong c = 0;
    (void)n;
    (void)m;
    (void)scratch;
    for (uint s = lid; s < TC_TEAMS * TC_WARP_SLOTS; s += TC_WG) {
        tabs[s] = TC_EMPTY;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong stride = (ulong)get_num_groups(0) * TC_TEAMS;
    for (ulong base = row_begin + (ulong)get_group_id(0) * TC_TEAMS; base < row_end;
         base += stride) {
        ulong r = base + team;
        ulong v = 0, a0 = 0, na = 0;
        if (r < row_end) {
            v = rows[r];
            a0 = indptr[v];
            na = indptr[v + 1] - a0;
        }
        for (ulong i = lane; i < na; i += TC_LANES) {
            uint u = adj[a0 + i];
            tc_insert(tab, u, TC_WARP_BITS);
            ulong ub = indptr[u];
            b0[i] = ub;
            nb[i] = (uint)(indptr[u + 1] - ub);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (na != 0) {
            uint vmax = adj[a0 + na - 1];
            ulong i = 0;
            ulong j = lane; // element j of N+(u_i), u_i = N+(v)[i]
            for (;;) {
                while (i < na && j >= nb[i]) {
                    j -= nb[i];
                    i++;
                }
                if (i >= na) {
                    break;
                }
                uint w = adj[b0[i] + j];
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
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = lane; s < TC_WARP_SLOTS; s += TC_LANES) {
            tab[s] = TC_EMPTY;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    tc_group_sum(sums, c, total);
}

__kernel KERNEL_WG(TC_WG) void
tc_hash_block(const ulong n, const ulong m, __global const ulong *restrict indptr,
              __global const uint *restrict adj, __global ulong *total,
              __global ulong *per_node, const uint want_per_node, __global uint *scratch,
              __global const uint *restrict rows, const ulong row_begin, const ulong row_end)
{
    __local uint tabs[TC_BLOCK_SLOTS];
    __local uint nbs[TC_BLOCK_MAX];
    __local ulong b0s[TC_BLOCK_MAX];
    __local ulong sums[TC_WG];
    uint lid = get_local_id_u32(0);
    uint lane = lid % TC_LANES;
    uint team = lid / TC_LANES;
    ulong c = 0;
    (void)n;
    (void)m;
    (void)scratch;
    for (uint s = lid; s < TC_BLOCK_SLOTS; s += TC_WG) {
        tabs[s] = TC_EMPTY;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong r = row_begin + get_group_id(0); r < row_end; r += get_num_groups(0)) {
        ulong v = rows[r];
        ulong a0 = indptr[v];
        ulong na = indptr[v + 1] - a0; // 2..TC_BLOCK_MAX (the host's bins)
        for (ulong i = lid; i < na; i += TC_WG) {
            uint u = adj[a0 + i];
            tc_insert(tabs, u, TC_BLOCK_BITS);
            ulong ub = indptr[u];
            b0s[i] = ub;
            nbs[i] = (uint)(indptr[u + 1] - ub);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint vmax = adj[a0 + na - 1];
        // Team t walks the concatenation of the lists N+(u_i), i = t, t + TC_TEAMS, ...;
        // lane l takes its elements l, l + TC_LANES, ... (as in tc_hash_warp).
        ulong i = team;
        ulong j = lane;
        for (;;) {
            while (i < na && j >= nbs[i]) {
                j -= nbs[i];
                i += TC_TEAMS;
            }
            if (i >= na) {
                break;
            }
            uint w = adj[b0s[i] + j];
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
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = lid; s < TC_BLOCK_SLOTS; s += TC_WG) {
            tabs[s] = TC_EMPTY;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    tc_group_sum(sums, c, total);
}

__kernel KERNEL_WG(TC_WG) void
tc_hash(const ulong n, const ulong m, __global const ulong *restrict indptr,
        __global const uint *restrict adj, __global ulong *total, __global ulong *per_node,
        const uint want_per_node, __global uint *scratch, __global const uint *restrict rows,
        const ulong row_begin, const ulong row_end)
{
    __local ulong sums[TC_WG];
    uint lid = get_local_id_u32(0);
    ulong words = (n + 31) / 32;
    __global uint *bits = scratch + (ulong)get_group_id(0) * words;
    ulong c = 0;
    (void)m;
    for (ulong r = row_begin + get_group_id(0); r < row_end; r += get_num_groups(0)) {
        ulong v = rows[r];
        ulong a0 = indptr[v];
        ulong na = indptr[v + 1] - a0; // at least 2 (the host's bins)
        for (ulong i = lid; i < na; i += TC_WG) {
            uint x = adj[a0 + i];
            atomic_or(&bits[x >> 5], 1u << (x & 31));
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        uint vmax = adj[a0 + na - 1];
        for (ulong i = lid; i < na; i += TC_WG) {
            uint u = adj[a0 + i];
            ulong b0 = indptr[u];
            ulong nb = indptr[u + 1] - b0;
            ulong cu = 0;
            for (ulong j = 0; j < nb; j++) {
                uint w = adj[b0 + j];
                if (w > vmax) {
                    break;
                }
                // LOAD_L2: where the atomic_or above set the bits (CUDA: not a stale L1 line).
                if ((LOAD_L2(&bits[w >> 5]) >> (w & 31)) & 1u) {
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
            STORE_L2(&bits[adj[a0 + i] >> 5], 0u);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    tc_group_sum(sums, c, total);
}

// Whether x is in the sorted list L[0 .. nl) (binary search; SPACE: local or global).
#define TC_DEFINE_FIND(NAME, SPACE)                                                          \
    DEVICE bool NAME(SPACE const uint *L, uint nl, uint x)                                   \
    {                                                                                        \
        uint lo = 0, hi = nl;                                                                \
        while (lo < hi) {                                                                    \
            uint mid = lo + (hi - lo) / 2;                                                   \
            if (L[mid] < x) {                                                                \
                lo = mid + 1;                                                                \
            } else {                                                                         \
                hi = mid;                                                                    \
            }                                                                                \
        }                                                                                    \
        return lo < nl && L[lo] == x;                                                        \
    }
TC_DEFINE_FIND(tc_find_local, LOCAL_PTR)
TC_DEFINE_FIND(tc_find_global, __global)

// The number of elements <= x in the sorted list L[0 .. nl) (global).
DEVICE uint tc_upper_bound(__global const uint *restrict L, uint nl, uint x)
{
    uint lo = 0, hi = nl;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        if (L[mid] <= x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// tc_search_flat's per-edge flags: the scanned / the searched list lies in the row cache.
#define TC_SCAN_CACHED 1u
#define TC_FIND_CACHED 2u

// tc_search_flat's tables of the chunk's edges, in local memory.
typedef struct {
    ulong offs[TC_WG + 1]; // offs[t]: first item of edge t; offs[TC_WG]: the total
    ulong sbase[TC_WG];    // adj offset of edge t's scanned list
    ulong fbase[TC_WG];    // adj offset of edge t's searched list
    uint flen[TC_WG];      // its length
    uint flags[TC_WG];     // TC_SCAN_CACHED | TC_FIND_CACHED
    uint ev[TC_WG];        // edge t is v -> u (for per-node counts)
    uint eu[TC_WG];
    ulong first_last[2];
} tc_flat_tables;

// The body of tc_search_flat and tc_search_flat_global: the chunk's rows are cached in
// cache[0 .. cache_cap) when they fit (cache_cap 0: never). All work-items call it.
DEVICE void tc_search_flat_run(ulong n, ulong m, __global const ulong *restrict indptr,
                               __global const uint *restrict adj, __global ulong *total,
                               __global ulong *per_node, uint want_per_node,
                               LOCAL_PTR uint *cache, uint cache_cap, LOCAL_PTR tc_flat_tables *T)
{
    uint lid = get_local_id_u32(0);
    ulong c = 0;
    ulong chunks = (m + TC_WG - 1) / TC_WG;
    for (ulong chunk = get_group_id(0); chunk < chunks; chunk += get_num_groups(0)) {
        ulong e0 = chunk * TC_WG;
        ulong e_last = min(e0 + TC_WG, m) - 1;
        ulong e = e0 + lid;
        // The first and last rows of the chunk's edges; their span of adj cached if it fits.
        if (lid == 0) {
            T->first_last[0] = tc_row_of(indptr, 0, n - 1, e0);
        } else if (lid == TC_WG - 1) {
            T->first_last[1] = tc_row_of(indptr, 0, n - 1, e_last);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        ulong v0 = T->first_last[0];
        ulong v1 =
            (e_last - e0 == TC_WG - 1) ? T->first_last[1] : tc_row_of(indptr, v0, n - 1, e_last);
        ulong span0 = indptr[v0];
        ulong span = indptr[v1 + 1] - span0;
        bool cached = span <= cache_cap;
        if (cached) {
            for (ulong k = lid; k < span; k += TC_WG) {
                cache[k] = adj[span0 + k];
            }
        }
        // Edge e = v -> u (u = N+(v)[i]): a triangle (v, u, w) has w in N+(v)[i+1 ..] (w > u)
        // and in N+(u) up to vmax = max N+(v): the first `cut` elements of N+(u). Either
        // direction: scan N+(u)[0 .. cut) and search N+(v)[i+1 ..], or scan N+(v)[i+1 ..]
        // and search N+(u)[0 .. cut), whichever costs fewer items x search steps.
        ulong items = 0;
        uint v = 0, u = 0, fl = 0, nf = 0;
        ulong sb = 0, fb = 0;
        if (e < m) {
            ulong row = tc_row_of(indptr, v0, v1, e);
            v = (uint)row;
            u = adj[e];
            ulong a_end = indptr[row + 1]; // N+(v) ends at a_end; N+(v)[i+1 ..] starts at e + 1
            uint after = (uint)(a_end - 1 - e);
            ulong b0 = indptr[u];
            uint nb = (uint)(indptr[u + 1] - b0);
            if (after != 0 && nb != 0) {
                uint vmax = adj[a_end - 1];
                uint cut = tc_upper_bound(adj + b0, nb, vmax);
                if (cut != 0) {
                    ulong cost_scan_u = (ulong)cut * (33 - (int)clz(after));
                    ulong cost_scan_v = (ulong)after * (33 - (int)clz(cut));
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
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = 1; s < TC_WG; s <<= 1) {
            ulong x = lid >= s ? T->offs[lid + 1 - s] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            T->offs[lid + 1] += x;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        // The chunk's items, flattened: work-item lid takes items lid, lid + TC_WG, ...;
        // item q is element q - offs[t] of edge t's scanned list, offs[t] <= q < offs[t + 1].
        ulong n_items = T->offs[TC_WG];
        // Edge t, the last one reached, in registers: its items end at `end`, item q is
        // adj[skew + q] (wrapping), searched for in the tnf elements at adj[tfb ..] (tfl:
        // which lists are cached).
        uint t = 0, next = 0; // next: the first edge this work-item may move on to
        ulong end = 0, skew = 0, tfb = 0;
        uint tnf = 0, tfl = 0;
        uint hits = 0; // triangles of edge t found here, not yet added to per_node[v], [u]
        for (ulong q = lid; q < n_items; q += TC_WG) {
            if (q >= end) {
                if (hits != 0) {
                    tc_add_u64(&per_node[T->ev[t]], hits);
                    tc_add_u64(&per_node[T->eu[t]], hits);
                    hits = 0;
                }
                // On to the last edge t >= next with offs[t] <= q (edges without items are
                // passed over): gallop from `next`, then bisect; offs[TC_WG] > q ends both.
                uint lo = next, step = 1;
                uint hi = min(lo + 1, (uint)TC_WG);
                while (T->offs[hi] <= q) {
                    lo = hi;
                    step <<= 1;
                    hi = min(lo + step, (uint)TC_WG);
                }
                while (hi - lo > 1) {
                    uint mid = (lo + hi) / 2;
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
            ulong si = skew + q;
            uint x = (tfl & TC_SCAN_CACHED) ? cache[si - span0] : adj[si];
            bool hit = (tfl & TC_FIND_CACHED) ? tc_find_local(cache + (tfb - span0), tnf, x)
                                              : tc_find_global(adj + tfb, tnf, x);
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
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // Every work-item is past the chunk loop's last barrier: offs is free for the sum.
    tc_group_sum(T->offs, c, total);
}

// At least 8 work-groups per compute unit (CUDA: 2048 threads per SM, 32 registers each):
// latency-bound searches.
__kernel KERNEL_WG_MIN_GROUPS(TC_WG, 8) void
tc_search_flat(const ulong n, const ulong m, __global const ulong *restrict indptr,
               __global const uint *restrict adj, __global ulong *total,
               __global ulong *per_node, const uint want_per_node, __global uint *scratch,
               __global const uint *restrict rows, const ulong row_begin, const ulong row_end)
{
    __local uint cache[TC_CACHE];
    __local tc_flat_tables tables;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
    tc_search_flat_run(n, m, indptr, adj, total, per_node, want_per_node, cache, TC_CACHE,
                       &tables);
}

__kernel KERNEL_WG_MIN_GROUPS(TC_WG, 8) void
tc_search_flat_global(const ulong n, const ulong m, __global const ulong *restrict indptr,
                      __global const uint *restrict adj, __global ulong *total,
                      __global ulong *per_node, const uint want_per_node,
                      __global uint *scratch, __global const uint *restrict rows,
                      const ulong row_begin, const ulong row_end)
{
    __local uint cache[1]; // never used: no row cache
    __local tc_flat_tables tables;
    (void)scratch;
    (void)rows;
    (void)row_begin;
    (void)row_end;
    tc_search_flat_run(n, m, indptr, adj, total, per_node, want_per_node, cache, 0, &tables);
}

// tc_shift (the distributed count's replicated rows, trident_core::dist::triangles): a rank
// keeps the rows from its first, r0, on, so every id it receives is lowered by r0, in place.
// Global size: any whole number of work-groups; the work-items stride over the m ids.
__kernel KERNEL_WG(TC_WG) void
tc_shift(__global uint *adj, const ulong m, const uint by)
{
    for (ulong i = get_global_id(0); i < m; i += get_global_size(0))
        adj[i] -= by;
}

// The kernel dialect: one kernel source for OpenCL and CUDA.
//
// A shared kernel file is written in OpenCL C (kernels/opencl/<name>.cl) and compiled twice:
//   - by the OpenCL backend at run time, with this header placed before it (the backend's
//     kernel table marks the file as shared; build messages give lines of the file itself);
//   - by nvcc at build time, through kernels/cuda/<name>.cu, which includes this header and
//     then the .cl file (once per precision: kernels/common/precisions.cuh).
// This is CLBlast's approach (its OpenCL kernels compiled as CUDA through a dialect header).
//
// What a shared file may use beyond OpenCL C, all defined below for both dialects:
//   DEVICE          qualifier of every helper function (`inline` / `__device__` inline);
//   LOCAL_PTR       address space of a pointer into local memory (parameters, casts);
//                   a local array declared in a kernel keeps OpenCL's `__local`;
//   LOCAL_PARAM(T, name)      a kernel's dynamically sized local buffer: written after the
//                   last parameter without a comma; the host passes its size as the last
//                   launch argument (`Arg::Local`; CUDA takes it as dynamic shared memory);
//   LOCAL_PARAM_INIT(T, name) first statement of such a kernel (CUDA binds `name`);
//   KERNEL_WG(n)    after `__kernel`: the kernel runs in work-groups of exactly n items
//                   (OpenCL: reqd_work_group_size(n, 1, 1); CUDA: __launch_bounds__(n));
//   KERNEL_WG_MAX(n) after `__kernel`: work-groups of at most n items (CUDA:
//                   __launch_bounds__(n), which lets nvcc budget registers; OpenCL: nothing);
//   KERNEL_WG_MIN_GROUPS(n, g) as KERNEL_WG(n), and built so that g work-groups fit on one
//                   compute unit (CUDA: __launch_bounds__(n, g), which caps registers);
//   LOAD_RO(p), LOAD_STREAM(p), STORE_STREAM(p, v), LOAD_L2(p), STORE_L2(p, v)   loads and
//                   stores with CUDA's cache hints (read-only path; evict-first streaming;
//                   L2 only, for data other groups' atomics change); plain in OpenCL;
//   get_local_id_u32(d)  get_local_id(d) as a uint (CUDA: threadIdx itself; through
//                   size_t, nvcc would widen the index arithmetic derived from it to 64 bits);
//   TRIDENT_CUDA    defined when compiled as CUDA: for the few blocks where the hardware path
//                   differs (warp shuffles, tensor cores), `#ifdef TRIDENT_CUDA … #else … #endif`;
//   TRIDENT_CAT(a, b), REAL, SUFFIX, TRIDENT_FP64   as in every Trident OpenCL file.
// The OpenCL built-ins a shared file may use are those defined for CUDA below: work-item
// functions, barrier, the 32- and 64-bit atomics, as_*/convert_* of scalars, clz/popcount/
// mul_hi, clamp/mad, and the scalar math functions (which CUDA overloads for float and double).
// Vector types (float4, vload4) are not in the dialect.

#ifndef TRIDENT_DIALECT_H
#define TRIDENT_DIALECT_H

#define TRIDENT_CAT_(a, b) a##b
#define TRIDENT_CAT(a, b) TRIDENT_CAT_(a, b)

#ifdef __CUDACC__
// ---------------------------------------------------------------------------------- CUDA
#define TRIDENT_CUDA 1

#include <cstddef>

// uint, ushort and ulong (unsigned long: 64-bit on the LP64 hosts nvcc targets) come from
// <sys/types.h>; uchar does not.
typedef unsigned char uchar;

#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define __constant const
#define restrict __restrict__
#define DEVICE __device__ __forceinline__
#define LOCAL_PTR
#define KERNEL_WG(n) __launch_bounds__(n)
#define KERNEL_WG_MAX(n) __launch_bounds__(n)
#define LOCAL_PARAM(T, name)
#define LOCAL_PARAM_INIT(T, name) T *name = reinterpret_cast<T *>(trident_dynamic_local)
#define LOAD_RO(p) __ldg(p)
#define LOAD_STREAM(p) __ldcs(p)
#define STORE_STREAM(p, v) __stcs((p), (v))

// Dynamic shared memory (LOCAL_PARAM): one array for every kernel of the module.
extern __shared__ __align__(16) unsigned char trident_dynamic_local[];

#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
// __syncthreads orders both shared and global accesses of the block.
#define barrier(flags) __syncthreads()

DEVICE size_t get_local_id(uint d) {
    return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z;
}
DEVICE size_t get_group_id(uint d) {
    return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z;
}
DEVICE size_t get_local_size(uint d) {
    return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z;
}
DEVICE size_t get_num_groups(uint d) {
    return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z;
}
DEVICE size_t get_global_id(uint d) {
    return get_group_id(d) * get_local_size(d) + get_local_id(d);
}
DEVICE size_t get_global_size(uint d) { return get_num_groups(d) * get_local_size(d); }

// Atomics (OpenCL 1.1 names and the cl_khr_*_atomics `atom_` names); they return the old
// value. Volatile pointers (OpenCL's usual spelling) are accepted; 64-bit ones go through
// CUDA's `unsigned long long` / `long long` atomics.
template <typename T> struct trident_atomic { typedef T type; };
template <> struct trident_atomic<unsigned long> { typedef unsigned long long type; };
template <> struct trident_atomic<long> { typedef long long type; };
#define TRIDENT_ATOMIC2(name, cuda)                                                        \
    template <typename T, typename U>                                                      \
    DEVICE T name(volatile T *p, U v) {                                                    \
        typedef typename trident_atomic<T>::type A;                                        \
        return T(cuda(reinterpret_cast<A *>(const_cast<T *>(p)), A(v)));                   \
    }
TRIDENT_ATOMIC2(atomic_add, atomicAdd)
TRIDENT_ATOMIC2(atomic_sub, atomicSub)
TRIDENT_ATOMIC2(atomic_xchg, atomicExch)
TRIDENT_ATOMIC2(atomic_min, atomicMin)
TRIDENT_ATOMIC2(atomic_max, atomicMax)
TRIDENT_ATOMIC2(atomic_and, atomicAnd)
TRIDENT_ATOMIC2(atomic_or, atomicOr)
TRIDENT_ATOMIC2(atomic_xor, atomicXor)
#undef TRIDENT_ATOMIC2
template <typename T>
DEVICE T atomic_inc(volatile T *p) { return atomic_add(p, 1); }
template <typename T>
DEVICE T atomic_dec(volatile T *p) { return atomic_sub(p, 1); }
template <typename T, typename U, typename V>
DEVICE T atomic_cmpxchg(volatile T *p, U cmp, V v) {
    typedef typename trident_atomic<T>::type A;
    return T(atomicCAS(reinterpret_cast<A *>(const_cast<T *>(p)), A(cmp), A(v)));
}
#define atom_add atomic_add
#define atom_sub atomic_sub
#define atom_inc atomic_inc
#define atom_dec atomic_dec
#define atom_xchg atomic_xchg
#define atom_cmpxchg atomic_cmpxchg
#define atom_min atomic_min
#define atom_max atomic_max
#define atom_and atomic_and
#define atom_or atomic_or
#define atom_xor atomic_xor

// Reinterpretation and conversion of scalars.
DEVICE uint as_uint(float x) { return __float_as_uint(x); }
DEVICE int as_int(float x) { return __float_as_int(x); }
DEVICE float as_float(uint x) { return __uint_as_float(x); }
DEVICE float as_float(int x) { return __int_as_float(x); }
DEVICE ulong as_ulong(double x) { return static_cast<ulong>(__double_as_longlong(x)); }
DEVICE long as_long(double x) { return static_cast<long>(__double_as_longlong(x)); }
DEVICE double as_double(ulong x) { return __longlong_as_double(static_cast<long long>(x)); }
DEVICE double as_double(long x) { return __longlong_as_double(static_cast<long long>(x)); }
#define convert_uchar(x) ((uchar)(x))
#define convert_ushort(x) ((ushort)(x))
#define convert_int(x) ((int)(x))
#define convert_uint(x) ((uint)(x))
#define convert_long(x) ((long)(x))
#define convert_ulong(x) ((ulong)(x))
#define convert_float(x) ((float)(x))
#define convert_double(x) ((double)(x))

// Integer built-ins.
DEVICE uint clz(uint x) { return static_cast<uint>(__clz(static_cast<int>(x))); }
DEVICE int clz(int x) { return __clz(x); }
DEVICE ulong clz(ulong x) { return static_cast<ulong>(__clzll(static_cast<long long>(x))); }
DEVICE uint popcount(uint x) { return static_cast<uint>(__popc(x)); }
DEVICE ulong popcount(ulong x) { return static_cast<ulong>(__popcll(x)); }
DEVICE uint mul_hi(uint a, uint b) { return __umulhi(a, b); }
DEVICE ulong mul_hi(ulong a, ulong b) { return __umul64hi(a, b); }

// Common built-ins CUDA lacks (min, max, fma, sqrt, … are CUDA's own overloads).
template <typename T>
DEVICE T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
DEVICE float mad(float a, float b, float c) { return a * b + c; }
DEVICE double mad(double a, double b, double c) { return a * b + c; }

// Loads and stores that bypass L1 (cached in L2 only), for data that atomics of other
// groups change between barriers.
#define LOAD_L2(p) __ldcg(p)
#define STORE_L2(p, v) __stcg((p), (v))
// KERNEL_WG_MIN_GROUPS(n, g): as KERNEL_WG(n), and at least g resident work-groups per
// compute unit (CUDA: __launch_bounds__'s minimum blocks per SM, which caps registers).
#define KERNEL_WG_MIN_GROUPS(n, g) __launch_bounds__(n, g)
// get_local_id_u32(d): get_local_id(d) as a uint (local ids are below 2^32). In CUDA the
// 32-bit threadIdx itself: through get_local_id's size_t, nvcc widens the index arithmetic
// derived from it to 64 bits and rematerialises values in register-capped kernels.
DEVICE uint get_local_id_u32(uint d) {
    return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z;
}

#else
// -------------------------------------------------------------------------------- OpenCL

#ifdef TRIDENT_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define DEVICE inline
#define LOCAL_PTR __local
#define KERNEL_WG(n) __attribute__((reqd_work_group_size(n, 1, 1)))
#define KERNEL_WG_MAX(n)
#define LOCAL_PARAM(T, name) , __local T *name
#define LOCAL_PARAM_INIT(T, name)
#define LOAD_RO(p) (*(p))
#define LOAD_STREAM(p) (*(p))
#define STORE_STREAM(p, v) (*(p) = (v))

#define LOAD_L2(p) (*(p))
#define STORE_L2(p, v) (*(p) = (v))
#define KERNEL_WG_MIN_GROUPS(n, g) __attribute__((reqd_work_group_size(n, 1, 1)))
DEVICE uint get_local_id_u32(uint d) { return (uint)get_local_id(d); }

#endif

#endif // TRIDENT_DIALECT_H

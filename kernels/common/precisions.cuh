// Compiles the shared kernel file TRIDENT_SOURCE (an OpenCL C file written in the dialect of
// kernels/common/dialect.h) as CUDA, once per precision, as the OpenCL backend builds it:
// REAL = float, SUFFIX = f32, then REAL = double, SUFFIX = f64 with TRIDENT_FP64. Each build
// sits in its own namespace, so that helpers which do not depend on REAL may be defined in
// both; kernels are `extern "C"` and keep their suffixed names (e.g. spmv_ellr_f32).
//
// Use (kernels/cuda/<name>.cu):
//   #define TRIDENT_SOURCE "../opencl/<name>.cl"
//   #include "../common/precisions.cuh"
// A file with plain kernels only (no REAL) includes dialect.h and the source once instead.

#include "dialect.h"

#ifndef TRIDENT_SOURCE
#error "define TRIDENT_SOURCE as the path of the shared kernel file"
#endif

namespace trident_f32 {
#define REAL float
#define SUFFIX f32
#include TRIDENT_SOURCE
#undef REAL
#undef SUFFIX
}  // namespace trident_f32

namespace trident_f64 {
#define REAL double
#define SUFFIX f64
#define TRIDENT_FP64 1
#include TRIDENT_SOURCE
#undef REAL
#undef SUFFIX
#undef TRIDENT_FP64
}  // namespace trident_f64

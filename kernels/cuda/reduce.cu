// Reductions over device vectors (Trident CUDA backend): the kernels are those of
// kernels/opencl/reduce.cl, the one source of both backends, compiled here as CUDA through
// the dialect header (kernels/common/dialect.h), once per precision.

#define TRIDENT_SOURCE "../opencl/reduce.cl"
#include "../common/precisions.cuh"

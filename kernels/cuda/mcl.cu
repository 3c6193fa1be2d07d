// R-MCL iteration kernels (Trident CUDA backend): the kernels are those of
// kernels/opencl/mcl.cl, the one source of both backends, compiled here as CUDA through the
// dialect header (kernels/common/dialect.h), once per precision (mcl_*_f32, mcl_*_f64).

#define TRIDENT_SOURCE "../opencl/mcl.cl"
#include "../common/precisions.cuh"

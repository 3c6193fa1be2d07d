// ELLPACK-R sparse matrix-vector product (Trident CUDA backend): the kernels are those of
// kernels/opencl/spmv.cl, the one source of both backends, compiled here as CUDA through the
// dialect header (kernels/common/dialect.h), once per precision (spmv_ellr_f32, spmv_ellr_f64).

#define TRIDENT_SOURCE "../opencl/spmv.cl"
#include "../common/precisions.cuh"

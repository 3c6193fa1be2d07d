// Triangle counting (Trident CUDA backend): the kernels are those of
// kernels/opencl/triangles.cl, the one source of both backends, compiled here as CUDA through
// the dialect header (kernels/common/dialect.h). The kernels are plain (no precision), so the
// file is included once (not through precisions.cuh).

#include "../common/dialect.h"
#include "../opencl/triangles.cl"

// One-sided block Jacobi SVD and Givens QR (Trident CUDA backend): the kernels are those of
// kernels/opencl/svd.cl, the one source of both backends, compiled here as CUDA through the
// dialect header (kernels/common/dialect.h), once per precision (svd_jacobi_round_f32, ...,
// qr_tree_leaf_q_local_f64).

#define TRIDENT_SOURCE "../opencl/svd.cl"
#include "../common/precisions.cuh"

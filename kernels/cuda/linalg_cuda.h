/* cuBLAS products for the CUDA kernels (C++, kernels/cuda/ only): defined in
 * linalg.cu, used by conv.cu. */
#ifndef OPS_LINALG_CUDA_H
#define OPS_LINALG_CUDA_H

#include "kernels/linalg_common.h"

/* C = alpha * A @ B (+ beta * C when f->has_s) on every batch of f, on cuda:dev's
 * current stream: f->dt float32/float64/float16/bfloat16, k > 0, sizes within int,
 * every operand addressable by ops_la_blas_layout.  Batch dims whose strides chain
 * become one strided-batched call. */
ops_status ops_cuda_gemm_run(ops_gemm_desc *f, int dev);

#endif /* OPS_LINALG_CUDA_H */

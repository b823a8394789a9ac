/* Internal: linear algebra, one driver for every device (kernels/linalg.c: checks,
 * the batched-GEMM description, the plan, output allocation rules; the schema names
 * its linalg_* functions for `CPU, CUDA`) over the device's executor of a checked
 * GEMM, reached through the stub below: OpenBLAS and a blocked loop in
 * kernels/cpu/linalg.c, cuBLAS and a tiled kernel in kernels/cuda/linalg.cu. */
#ifndef OPS_KERNELS_LINALG_H
#define OPS_KERNELS_LINALG_H

#include "kernels/linalg_common.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs g (A and B filled, checked) into out (NULL: a new tensor in *result) of shape
 * rsz, adding beta * self when self is given: makes the plan (ops_gemm_plan_make),
 * allocates what it needs, and writes out only once nothing can fail.  cmap[d] is the
 * result dim of batch dim d (d < nbd), of M (nbd) and of N (nbd + 1); -1 where the
 * result has no such dim.  Every tensor is on one device, the one of a_t. */
OPS_DECLARE_STUB(linalg_gemm, ops_status,
                 (ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t, const ops_tensor *self,
                  ops_tensor *out, int rnd, const int64_t *rsz, const int *cmap, ops_tensor **result));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_LINALG_H */

/* Internal: index_add, index_copy and index_fill (.int_Scalar, .int_Tensor), each
 * functional, out= and in-place: one driver for every device in kernels/index_add.c
 * (checks, the buffer, the conversion, out= and in-place writes) over the stub below:
 * kernels/cpu/index_add.c, kernels/cuda/index.cu.  C and C++ clean. */
#ifndef OPS_KERNELS_INDEX_ADD_H
#define OPS_KERNELS_INDEX_ADD_H

#include "kernels/index_check.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* acc (a contiguous copy of self: self's dtype for IX_FILL, its opmath dtype else)
 * gets slice i of source (IX_ADD: plus alpha * source; IX_COPY: source; IX_FILL:
 * value, source NULL) at slice index[i] along dim (wrapped; index 1-D or 0-dim, its
 * values checked, negative ones wrapped for IX_FILL), the indices in order. */
OPS_DECLARE_STUB(index_slices_loop, ops_status,
                 (const char *op, ix_mode mode, ops_tensor *acc, const ops_tensor *self, int64_t dim,
                  const ops_tensor *index, const ops_tensor *source, ops_scalar value, ops_scalar alpha));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_INDEX_ADD_H */

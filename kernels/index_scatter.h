/* Internal: the scatter ops (scatter .src/.value/.reduce/.value_reduce, scatter_add,
 * scatter_reduce.two, each functional, out= and in-place), one driver for every
 * device in kernels/index_scatter.c (checks, the accumulation buffer, the conversion and
 * the out= / in-place writes) over the stub below: kernels/cpu/index_scatter.c,
 * kernels/cuda/scatter.cu.  C and C++ clean. */
#ifndef OPS_KERNELS_INDEX_SCATTER_H
#define OPS_KERNELS_INDEX_SCATTER_H

#include "kernels/index_check.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* acc (a contiguous copy of self in self's opmath dtype, on self's device) gets the
 * scatter of src (NULL: the Scalar value) at index along dim (wrapped; index checked
 * and its values in range; an empty index changes nothing): red applied in index's row-major order along
 * each destination, touched elements starting from red's identity when
 * !include_self, mean's division (PyTorch's rounding) done. */
OPS_DECLARE_STUB(scatter_loop, ops_status,
                 (const char *op, ops_tensor *acc, const ops_tensor *self, int64_t dim, const ops_tensor *index,
                  const ops_tensor *src, ops_scalar value, sc_reduce red, bool include_self));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_INDEX_SCATTER_H */

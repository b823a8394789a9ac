/* Internal: the pooling ops max_pool1d, max_pool2d, max_pool2d_with_indices,
 * max_pool1d_with_indices, avg_pool1d, avg_pool2d, adaptive_avg_pool2d,
 * adaptive_max_pool2d and the max pools' backward ops, one driver each for every
 * device (kernels/pool.c: checks, output sizes, allocation, out=; the schema names
 * them for `CPU, CUDA`).  The passes over the elements are the device's own, reached
 * through the stubs below: the CPU loops in kernels/cpu/pool.c, the CUDA kernels in
 * kernels/cuda/pool.cu, with the window rules of kernels/nn_common.h. */
#ifndef OPS_KERNELS_POOL_H
#define OPS_KERNELS_POOL_H

#include "kernels/nn_common.h"
#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Max (values and, when indices is not NULL, int64 indices h * W + w) or average
 * pooling of self (g->dt, strided as g->xs) as g describes, into the contiguous
 * values (and indices) of g's output shape, which has elements. */
OPS_DECLARE_STUB(pool_windows, ops_status,
                 (const char *op, const ops_pool_geom *g, bool is_max, const ops_tensor *self, ops_tensor *values,
                  ops_tensor *indices));

/* res (planes x ihw, contiguous, float or double; its contents on entry do not
 * matter) = zeros, then += grad (planes x ohw, contiguous, res's dtype) at the int64
 * indices ix (planes x ohw, contiguous): res[p, ix[p, j]] += grad[p, j].  An index
 * outside [0, ihw) is never used: *bad is set (false otherwise) and res is left
 * unspecified (the caller then finds the first such index with nn_first_bad_index
 * for its message).  The stub zeroes res and checks the indices itself so that the
 * CPU loop makes one pass over res and the indices (each plane zeroed just before its
 * adds, in cache), not three. */
OPS_DECLARE_STUB(pool_scatter_add, ops_status,
                 (const char *op, const ops_tensor *grad, const ops_tensor *ix, ops_tensor *res, int64_t planes,
                  int64_t ohw, int64_t ihw, bool *bad));

/* The gradient of avg_pool2d or adaptive_avg_pool2d (g->adaptive) as g describes
 * (the forward's geometry; g->xs unused): res (planes x ih x iw, contiguous, grad's
 * dtype, float or double; its contents on entry do not matter) = for each input element
 * the sum, over the outputs whose window holds it, of grad (planes x oh x ow,
 * contiguous) divided by that output's divisor.  The CPU loop only (autograd's
 * formula, two small matrices around the gradient, does the other devices and double
 * backward). */
OPS_DECLARE_STUB(pool_avg_backward, ops_status,
                 (const char *op, const ops_pool_geom *g, const ops_tensor *grad, ops_tensor *res));

/* The gradient of avg_pool2d (adaptive false: kernel_size, stride, padding, ceil_mode,
 * count_include_pad and divisor_override as the forward's) or adaptive_avg_pool2d
 * (adaptive true: the output size is grad's) over an input of the ndim sizes, through
 * pool_avg_backward, into *result: a new tensor, or NULL (with OPS_OK) where it does
 * not apply (grad not float32/float64, grad's device without the loop, a geometry
 * that does not match grad's shape): the caller's formula then does it. */
OPS_INTERNAL ops_status pool_avg_backward_direct(const char *op, const ops_tensor *grad, int ndim, const int64_t *sizes,
                                                 bool adaptive, ops_int_list kernel_size, ops_int_list stride,
                                                 ops_int_list padding, bool ceil_mode, bool count_include_pad,
                                                 const int64_t *divisor_override, ops_tensor **result);

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_POOL_H */

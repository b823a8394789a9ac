/* Internal: the shape ops cat, stack, hstack, vstack, flip, roll, tril, triu and
 * repeat are one implementation for every device (kernels/cpu/shape.c, whose copies
 * go through ops_copy_values on either device), with two CUDA kernels of their own
 * in kernels/cuda/shape.cu (declared here, C linkage, only with OPS_WITH_CUDA).  The
 * CUDA dispatch kernels call the shape_* entry points. */
#ifndef OPS_SHAPE_BACKEND_H
#define OPS_SHAPE_BACKEND_H

#include "ops_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device work (kernels/cuda/shape.cu) ----------------------------------------------- */

/* out (a fresh contiguous CUDA tensor) = the concatenation along dim of pieces[0..n)
 * (each out's shape except at dim; an empty piece adds nothing): every piece whose
 * dtype is out's, whatever its strides, in one launch; the others are left for the
 * caller to copy with a conversion.  Pieces are read, never retained. */
ops_status ops_cuda_cat_pieces(const char *op, ops_tensor *out, int64_t n, const ops_tensor *const *pieces,
                               int64_t dim);
/* Zero the elements of t (CUDA, ndim >= 2, distinct elements) above (lower: tril
 * keeps j - i <= diagonal) or below (triu keeps j - i >= diagonal) the diagonal. */
ops_status ops_cuda_zero_triangle(const char *op, ops_tensor *t, int64_t diagonal, bool lower);

/* ---- the ops, for every device (kernels/cpu/shape.c) ------------------------------------ */

ops_tensor *shape_cat(ops_tensor_list tensors, int64_t dim);
ops_tensor *shape_stack(ops_tensor_list tensors, int64_t dim);
ops_tensor *shape_hstack(ops_tensor_list tensors);
ops_tensor *shape_vstack(ops_tensor_list tensors);
ops_tensor *shape_flip(const ops_tensor *self, ops_int_list dims);
ops_tensor *shape_roll(const ops_tensor *self, ops_int_list shifts, ops_int_list dims);
ops_tensor *shape_tril(const ops_tensor *self, int64_t diagonal);
ops_tensor *shape_triu(const ops_tensor *self, int64_t diagonal);
ops_status shape_tril_(ops_tensor *self, int64_t diagonal);
ops_status shape_triu_(ops_tensor *self, int64_t diagonal);
ops_tensor *shape_repeat(const ops_tensor *self, ops_int_list repeats);

#ifdef __cplusplus
}
#endif
#endif /* OPS_SHAPE_BACKEND_H */

/* Internal: the shape ops cat, stack, hstack, vstack, flip, roll, tril, triu and
 * repeat, one driver for every device (kernels/shape.c; the schema names it for
 * `CPU, CUDA`).  Their copies go through ops_copy_values on either device; the two
 * pieces of work a device does its own way are the stubs below. */
#ifndef OPS_KERNELS_SHAPE_H
#define OPS_KERNELS_SHAPE_H

#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = the concatenation along dim of pieces[0..n) (each has out's shape except at
 * dim; 1-D empty pieces, PyTorch's legacy empty tensor, add nothing), out's dtype
 * whatever the pieces' (converted as ops_copy_values does).  Pieces are read, never
 * retained.  CPU: one copy per piece; CUDA: every piece of out's dtype in one launch. */
OPS_DECLARE_STUB(shape_cat_pieces, ops_status,
                 (const char *op, ops_tensor *out, int64_t n, const ops_tensor *const *pieces, int64_t dim));

/* Zero the elements of t (ndim >= 2, distinct elements) above (lower: tril keeps
 * j - i <= diagonal) or below (triu keeps j - i >= diagonal) the diagonal. */
OPS_DECLARE_STUB(shape_zero_triangle, ops_status, (const char *op, ops_tensor *t, int64_t diagonal, bool lower));

/* The generic part of shape_cat_pieces for every device: one ops_copy_values per
 * piece, skipping the pieces of out's dtype when skip_same_dtype (a backend that
 * copied those already in one go). */
ops_status shape_copy_pieces(const char *op, ops_tensor *out, int64_t n, const ops_tensor *const *pieces,
                             int64_t dim, bool skip_same_dtype);

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_SHAPE_H */

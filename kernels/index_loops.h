/* Internal: index_select, gather, masked_fill, take, put, nonzero (and argwhere,
 * nonzero_numpy, where(condition)), masked_select, masked_scatter, index.Tensor,
 * index_put and repeat_interleave, one driver for every device (kernels/index.c, index_take.c,
 * index_masked.c, index_advanced.c: the checks, index values included, the result's
 * shape and allocation, out= and in-place writes) over the loops below:
 * kernels/cpu/index.c, index_take.c, index_masked.c and index_advanced.c,
 * kernels/cuda/index.cu and index_advanced.cu.  C and C++ clean. */
#ifndef OPS_KERNELS_INDEX_LOOPS_H
#define OPS_KERNELS_INDEX_LOOPS_H

#include "kernels/index_check.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* r (contiguous, self's shape with index's length along dim; 0-dim for a 0-dim self)
 * = self's slices index[i] along dim (wrapped).  The loop checks the index values (the
 * driver checks them only for a 0-dim self): on the first (in index order) outside
 * [0, size of dim), idx_index_error(op, IDX_ERR_SELECT, value, dim, size), r (a fresh
 * result) possibly partly written.  The CPU loop checks each value as it copies. */
OPS_DECLARE_STUB(index_select_loop, ops_status,
                 (const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index));
/* r (contiguous, index's shape) = self at index along dim (wrapped).  The loop checks
 * the values: on the first (row-major) outside [0, size of dim), idx_index_error(op,
 * IDX_ERR_BOUNDS, value, dim, size), r (a fresh result) possibly partly written. */
OPS_DECLARE_STUB(index_gather_loop, ops_status,
                 (const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index));
/* dst[mask] = value, mask (bool) broadcast to dst's shape (checked). */
OPS_DECLARE_STUB(index_masked_fill_loop, ops_status,
                 (const char *op, ops_tensor *dst, const ops_tensor *mask, ops_scalar value));
/* r (contiguous, index's shape) = flattened self at index.  The loop checks the values:
 * on the first (in index order) outside [-numel, numel), idx_index_error(op,
 * IDX_ERR_FLAT, value, 0, numel), r (a fresh result) possibly partly written. */
OPS_DECLARE_STUB(index_take_loop, ops_status,
                 (const char *op, ops_tensor *r, const ops_tensor *self, const ops_tensor *index));
/* *result: a new tensor of self's shape and dtype, self's values with source's put at
 * the flat positions index (checked; negative from the end): stored, the last write
 * winning, or accumulated.  Each device keeps its own buffer for the accumulation. */
OPS_DECLARE_STUB(index_put_flat_loop, ops_status,
                 (const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source,
                  bool accumulate, ops_tensor **result));

/* The sizes of these results depend on the data, so each loop counts, allocates its
 * result on self's device and fills it. */
/* *result: int64 [n, self.ndim], the coordinates of self's nonzero elements in
 * row-major order. */
OPS_DECLARE_STUB(index_nonzero_loop, ops_status, (const char *op, const ops_tensor *self, ops_tensor **result));
/* nonzero(self) by self's device (the stub above), NULL with the error set: the driver
 * of nonzero and argwhere, and advanced indexing's hook for masks (kernels/index_masked.c). */
OPS_INTERNAL ops_tensor *idx_device_nonzero(const char *op, const ops_tensor *self);
/* *result: 1-D, self's elements (read broadcast to (nd, shape)) where mask (bool, read
 * broadcast to the same shape) is true, in row-major order. */
OPS_DECLARE_STUB(index_masked_select_loop, ops_status,
                 (const char *op, const ops_tensor *self, const ops_tensor *mask, int nd, const int64_t *shape,
                  ops_tensor **result));
/* *count: the true elements of mask read broadcast to (nd, shape). */
OPS_DECLARE_STUB(index_mask_count, ops_status,
                 (const char *op, const ops_tensor *mask, int nd, const int64_t *shape, int64_t *count));
/* dst[mask] = the first elements of source in row-major order, mask broadcast to dst's
 * shape; idx_masked_scatter_count_error, dst untouched, when source has fewer elements
 * than mask has true ones. */
OPS_DECLARE_STUB(index_masked_scatter_loop, ops_status,
                 (const char *op, ops_tensor *dst, const ops_tensor *mask, const ops_tensor *source));

/* Advanced indexing over a plan (kernels/index_check.h) built for self.  Every index
 * of p in [-size, size) of its dim of self: IDX_ERR_BOUNDS on the first that is not
 * (dims in order, each index in row-major order over B). */
OPS_DECLARE_STUB(index_plan_check, ops_status, (const char *op, const ops_tensor *self, const adv_plan *p));
/* r (contiguous, the plan's result shape) = self[indices] (values checked). */
OPS_DECLARE_STUB(index_adv_gather_loop, ops_status,
                 (const char *op, const adv_plan *p, const ops_tensor *self, ops_tensor *r));
/* *result: a new tensor of self's shape and dtype, self's values with values (of
 * self's dtype, broadcast to the plan's result shape) stored at self[indices] (the
 * last write winning) or accumulated there.  Each device keeps its own buffer. */
OPS_DECLARE_STUB(index_adv_put_loop, ops_status,
                 (const char *op, const adv_plan *p, const ops_tensor *self, const ops_tensor *values,
                  bool accumulate, ops_tensor **result));

/* repeat_interleave: the counts are read and checked on the host by the driver
 * (kernels/index_take.c).  r (1-D, int32 or int64, total elements, on the device)
 * gets i repeated reps[i] times, i < n. */
OPS_DECLARE_STUB(index_repeat_fill_loop, ops_status,
                 (const char *op, ops_tensor *r, const int64_t *reps, int64_t n, int64_t total));
/* *result: a new tensor, self's slices along dim (self flattened when dim < 0) each
 * repeated reps[i] times, total slices in all. */
OPS_DECLARE_STUB(index_repeat_slices_loop, ops_status,
                 (const char *op, const ops_tensor *self, int64_t dim, const int64_t *reps, int64_t total,
                  ops_tensor **result));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_INDEX_LOOPS_H */

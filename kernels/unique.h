/* Internal: unique (_unique2, unique, unique_dim, unique_consecutive), one driver for
 * every device in kernels/unique.c (dims, the empty cases, which loop) over the stubs
 * below, which find the groups and make the results: kernels/cpu/sort_unique.c,
 * kernels/cuda/sort.cu.  C and C++ clean. */
#ifndef OPS_KERNELS_UNIQUE_H
#define OPS_KERNELS_UNIQUE_H

#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The unique values of all of self, flattened: sorted (consecutive false), or one per
 * run of equal consecutive elements.  NaNs are never equal.  *r0: the values (1-D,
 * self's dtype); *r1: each element's group (self's shape, int64) when want_inv; *r2:
 * each group's size (1-D int64) when want_cnt; a result not asked for is an empty
 * int64 tensor of shape [0].  All new, on self's device. */
OPS_DECLARE_STUB(unique_flat_loop, ops_status,
                 (const char *op, const ops_tensor *self, bool consecutive, bool want_inv, bool want_cnt,
                  ops_tensor **r0, ops_tensor **r1, ops_tensor **r2));

/* The same over the slices self[..., s, ...] along dim (wrapped; self not empty when
 * sort): sorted lexicographically, NaN largest (sort; unique_dim), or one per run of
 * equal consecutive slices.  *r0 has self's shape with dim resized to the groups;
 * *r1 has size(dim) elements (a 0-dim self: 1). */
OPS_DECLARE_STUB(unique_rows_loop, ops_status,
                 (const char *op, const ops_tensor *self, int64_t dim, bool sort, bool want_inv, bool want_cnt,
                  ops_tensor **r0, ops_tensor **r1, ops_tensor **r2));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_UNIQUE_H */

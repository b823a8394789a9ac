/* unique, for every device: _unique2, unique (torch.unique's signature), unique_dim and
 * unique_consecutive.  The schema names the unique_* functions below for CPU and CUDA;
 * each is one call of the driver of its form (dims, the empty input's checks and
 * results, which loop), and the device finds the groups through the stubs of
 * kernels/unique.h: kernels/cpu/sort_unique.c, kernels/cuda/sort.cu.
 *
 * sorted is accepted and ignored: unique always sorts (as PyTorch's CPU unique does). */
#include "kernels/unique.h"
#include "ops_kernels_unique.h"

/* unique over all of self: sorted, or one per run of equal consecutive elements. */
static ops_status
unique_flat(const char *op, const ops_tensor *self, bool consecutive, bool want_inv, bool want_cnt, ops_tensor **r0,
            ops_tensor **r1, ops_tensor **r2)
{
    const ops_device dev = ops_tensor_device(self);
    return OPS_STUB_CALL(unique_flat_loop, dev, op, self, consecutive, want_inv, want_cnt, r0, r1, r2);
}

/* unique_dim: the unique slices along dim, sorted.  An empty self has one dim of size
 * 0 (else there is nothing to compare slices by): the result is self's shape, empty,
 * with empty inverse and counts. */
static ops_status
unique_dim_run(const char *op, const ops_tensor *self, int64_t dim, bool want_inv, bool want_cnt, ops_tensor **r0,
               ops_tensor **r1, ops_tensor **r2)
{
    const ops_device dev = ops_tensor_device(self);
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (ops_shape_numel(self->ndim, self->sizes) == 0) {
        int zeros = 0;
        for (int d = 0; d < self->ndim; d++)
            zeros += self->sizes[d] == 0;
        if (zeros != 1)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: Number of zero sized dimensions is more than one, so unique cannot be applied", op);
        const int64_t zero = 0;
        ops_tensor *uo = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, dev);
        ops_tensor *inv = uo != NULL ? ops_tensor_new(op, 1, &zero, NULL, OPS_INT64, dev) : NULL;
        ops_tensor *cnt = inv != NULL ? ops_tensor_new(op, 1, &zero, NULL, OPS_INT64, dev) : NULL;
        if (cnt == NULL) {
            ops_tensor_release(uo);
            ops_tensor_release(inv);
            return ops_last_status();
        }
        *r0 = uo, *r1 = inv, *r2 = cnt;
        return OPS_OK;
    }
    return OPS_STUB_CALL(unique_rows_loop, dev, op, self, dim, true, want_inv, want_cnt, r0, r1, r2);
}

ops_status
unique_unique2(const ops_tensor *self, bool sorted, bool return_inverse, bool return_counts, ops_tensor **result0,
               ops_tensor **result1, ops_tensor **result2)
{
    (void)sorted;
    return unique_flat("_unique2", self, false, return_inverse, return_counts, result0, result1, result2);
}

ops_status
unique_unique_dim(const ops_tensor *self, int64_t dim, bool sorted, bool return_inverse, bool return_counts,
                  ops_tensor **result0, ops_tensor **result1, ops_tensor **result2)
{
    (void)sorted;
    return unique_dim_run("unique_dim", self, dim, return_inverse, return_counts, result0, result1, result2);
}

/* torch.unique's signature: _unique2 without dim, unique_dim with it. */
ops_status
unique_unique(const ops_tensor *self, bool sorted, bool return_inverse, bool return_counts, const int64_t *dim,
              ops_tensor **result0, ops_tensor **result1, ops_tensor **result2)
{
    (void)sorted;
    if (dim == NULL)
        return unique_flat("unique", self, false, return_inverse, return_counts, result0, result1, result2);
    return unique_dim_run("unique", self, *dim, return_inverse, return_counts, result0, result1, result2);
}

/* Runs of equal consecutive elements (no dim, or a 0-dim self) or slices along dim. */
ops_status
unique_unique_consecutive(const ops_tensor *self, bool return_inverse, bool return_counts, const int64_t *dim,
                          ops_tensor **result0, ops_tensor **result1, ops_tensor **result2)
{
    const char *const op = "unique_consecutive";
    if (dim != NULL) {
        int64_t d = *dim;
        if (!ops_wrap_dim(op, "dim", &d, self->ndim))
            return ops_last_status();
        if (self->ndim > 0) {
            const ops_device dev = ops_tensor_device(self);
            return OPS_STUB_CALL(unique_rows_loop, dev, op, self, d, false, return_inverse, return_counts, result0,
                                 result1, result2);
        }
    }
    return unique_flat(op, self, true, return_inverse, return_counts, result0, result1, result2);
}

/* The one-dim ops, the driver for every device: softmax, log_softmax, cumsum(_),
 * cumprod(_), cummax, cummin.  dim and dtype checks, conversion to a contiguous input
 * in the dtype computed in, allocation on the input's device and out= as the
 * reductions (kernels/reduce.c); the lines are transformed by the reduce_dim_loop and
 * reduce_cumext_loop stubs (kernels/cpu/reduce_dim.c; kernels/cuda/softmax.cu, scan.cu). */
#include <string.h>

#include "kernels/reduce.h"
#include "ops_kernels_reduce_dim.h"

/* The lines along dim of self: outer of them before it, len elements each, inner apart. */
static void
dim_lines(const ops_tensor *self, int64_t dim, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *len = *inner = 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim)
            *outer *= self->sizes[d];
        else if (d == dim)
            *len = self->sizes[d];
        else
            *inner *= self->sizes[d];
    }
}

/* kind along dim of self, into out (NULL: a new tensor in *result). */
static ops_status
dim_impl(const char *op, dim_kind kind, const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out,
         ops_tensor **result)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *res = NULL;

    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    ops_dtype cd;
    if (kind == DIM_SOFTMAX || kind == DIM_LOG_SOFTMAX) {
        cd = dtype != OPS_DTYPE_NONE ? dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE, "%s: expected a floating point dtype, but got %s", op,
                            ops_dtype_name(cd));
        if (out != NULL && out->dtype != cd)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                            ops_dtype_name(cd), ops_dtype_name(out->dtype));
    } else {
        cd = dtype != OPS_DTYPE_NONE ? dtype
             : out != NULL         ? out->dtype
             : ops_dtype_is_integral(self->dtype, true) ? OPS_INT64
                                                         : self->dtype;
    }
    if (out != NULL && (st = red_check_out(op, out, cd, self->ndim, self->sizes)) != OPS_OK)
        return st;
    if ((src = red_convert(op, self, cd, true)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if ((res = ops_tensor_new(op, self->ndim, self->sizes, NULL, cd, ops_tensor_device(self))) == NULL) {
        st = ops_last_status();
        goto done;
    }
    int64_t outer, len, inner;
    dim_lines(self, dim, &outer, &len, &inner);
    const ops_device dev = ops_tensor_device(self);
    if (ops_shape_numel(self->ndim, self->sizes) > 0) {
        if ((st = OPS_STUB_CALL(reduce_dim_loop, dev, op, kind, src, outer, len, inner, res)) != OPS_OK)
            goto done;
    }
    if (out != NULL) {
        st = red_finish_out(op, out, res);
    } else {
        *result = res;
        res = NULL;
    }
done:
    ops_tensor_release(src);
    ops_tensor_release(res);
    return st;
}

ops_tensor *
reduce_softmax(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("softmax", DIM_SOFTMAX, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
reduce_softmax_out(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("softmax", DIM_SOFTMAX, self, dim, dtype, out, NULL);
}

ops_tensor *
reduce_log_softmax(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("log_softmax", DIM_LOG_SOFTMAX, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
reduce_log_softmax_out(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("log_softmax", DIM_LOG_SOFTMAX, self, dim, dtype, out, NULL);
}

ops_tensor *
reduce_cumsum(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("cumsum", DIM_CUMSUM, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
reduce_cumsum_out(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("cumsum", DIM_CUMSUM, self, dim, dtype, out, NULL);
}

ops_tensor *
reduce_cumprod(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("cumprod", DIM_CUMPROD, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
reduce_cumprod_out(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("cumprod", DIM_CUMPROD, self, dim, dtype, out, NULL);
}

/* In-place cumsum_/cumprod_: self keeps its dtype, so a dtype= must be self's. */
static ops_status
dim_inplace(const char *op, dim_kind kind, ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (dtype != OPS_DTYPE_NONE && dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Bad in-place call: input tensor dtype %s and output tensor dtype %s should match", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(dtype));
    return dim_impl(op, kind, self, dim, dtype, self, NULL);
}

ops_status
reduce_cumsum_inplace(ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    return dim_inplace("cumsum_", DIM_CUMSUM, self, dim, dtype);
}

ops_status
reduce_cumprod_inplace(ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    return dim_inplace("cumprod_", DIM_CUMPROD, self, dim, dtype);
}

/* cummax/cummin along dim: values (self's dtype) and int64 indices, into the outs or
 * new tensors. */
static ops_status
cumext_impl(const char *op, bool is_max, const ops_tensor *self, int64_t dim, ops_tensor *values_out,
            ops_tensor *indices_out, ops_tensor **values, ops_tensor **indices)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *res = NULL, *idx = NULL;

    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (values_out != NULL &&
        (st = red_check_out2(op, values_out, self->dtype, indices_out, OPS_INT64, self->ndim, self->sizes)) != OPS_OK)
        return st;
    if ((src = red_convert(op, self, self->dtype, true)) == NULL ||
        (res = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, ops_tensor_device(self))) == NULL ||
        (idx = ops_tensor_new(op, self->ndim, self->sizes, NULL, OPS_INT64, ops_tensor_device(self))) == NULL) {
        st = ops_last_status();
        goto done;
    }
    int64_t outer, len, inner;
    dim_lines(self, dim, &outer, &len, &inner);
    const ops_device dev = ops_tensor_device(self);
    if (ops_shape_numel(self->ndim, self->sizes) > 0) {
        if ((st = OPS_STUB_CALL(reduce_cumext_loop, dev, op, is_max, src, outer, len, inner, res, idx)) != OPS_OK)
            goto done;
    }
    if (values_out != NULL) {
        st = red_finish_out2(op, values_out, res, indices_out, idx);
    } else {
        *values = res;
        *indices = idx;
        res = idx = NULL;
    }
done:
    ops_tensor_release(src);
    ops_tensor_release(res);
    ops_tensor_release(idx);
    return st;
}

ops_status
reduce_cummax(const ops_tensor *self, int64_t dim, ops_tensor **values, ops_tensor **indices)
{
    return cumext_impl("cummax", true, self, dim, NULL, NULL, values, indices);
}

ops_status
reduce_cummax_out(const ops_tensor *self, int64_t dim, ops_tensor *values, ops_tensor *indices)
{
    return cumext_impl("cummax", true, self, dim, values, indices, NULL, NULL);
}

ops_status
reduce_cummin(const ops_tensor *self, int64_t dim, ops_tensor **values, ops_tensor **indices)
{
    return cumext_impl("cummin", false, self, dim, NULL, NULL, values, indices);
}

ops_status
reduce_cummin_out(const ops_tensor *self, int64_t dim, ops_tensor *values, ops_tensor *indices)
{
    return cumext_impl("cummin", false, self, dim, values, indices, NULL, NULL);
}


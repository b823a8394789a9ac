/* The scan family (`meta: scan`, docs/codegen.md "Scans"), for every device: softmax,
 * log_softmax, cumsum(_), cumprod(_), cummax, cummin.  The generated glue of each form
 * runs scan_family_meta (dim and dtype checks, out= checks, conversion to a contiguous
 * input in the dtype computed in, allocation on the input's device, as the reductions
 * of kernels/reduce.c), the op's kernel (scan_kind_kernel: the lines transformed by the
 * reduce_dim_loop and reduce_cumext_loop stubs, kernels/cpu/reduce_dim.c;
 * kernels/cuda/softmax.cu, scan.cu), then scan_family_finish. */
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

static void
scan_release(ops_scan *s)
{
    ops_tensor_release(s->src);
    ops_tensor_release(s->res);
    ops_tensor_release(s->res2);
    s->src = s->res = s->res2 = NULL;
}

static ops_status
scan_meta(ops_scan *s, const char *op, scan_kind kind, const ops_tensor *self, int64_t dim, ops_dtype dtype,
          const ops_tensor *out, const ops_tensor *out2, bool inplace)
{
    ops_status st;

    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    /* self keeps its dtype in place, so a dtype= must be self's */
    if (inplace && dtype != OPS_DTYPE_NONE && dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Bad in-place call: input tensor dtype %s and output tensor dtype %s should match", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(dtype));
    const bool ext = kind == SCAN_CUMMAX || kind == SCAN_CUMMIN;
    ops_dtype cd;
    if (kind == SCAN_SOFTMAX || kind == SCAN_LOG_SOFTMAX) {
        cd = dtype != OPS_DTYPE_NONE ? dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE, "%s: expected a floating point dtype, but got %s", op,
                            ops_dtype_name(cd));
        if (out != NULL && out->dtype != cd)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                            ops_dtype_name(cd), ops_dtype_name(out->dtype));
    } else if (ext) {
        cd = self->dtype;
    } else {
        cd = dtype != OPS_DTYPE_NONE ? dtype
             : out != NULL         ? out->dtype
             : ops_dtype_is_integral(self->dtype, true) ? OPS_INT64
                                                         : self->dtype;
    }
    if (out != NULL) {
        st = ext ? red_check_out2(op, out, cd, out2, OPS_INT64, self->ndim, self->sizes)
                 : red_check_out(op, out, cd, self->ndim, self->sizes);
        if (st != OPS_OK)
            return st;
    }
    const ops_device dev = ops_tensor_device(self);
    /* the loops read src only: a contiguous self of the dtype computed in is read in
     * place, not copied */
    s->src = self->dtype == cd && ops_tensor_is_contiguous(self) ? ops_tensor_retain(self)
                                                                  : red_convert(op, self, cd, true);
    if (s->src == NULL ||
        (s->res = ops_tensor_new(op, self->ndim, self->sizes, NULL, cd, dev)) == NULL ||
        (ext && (s->res2 = ops_tensor_new(op, self->ndim, self->sizes, NULL, OPS_INT64, dev)) == NULL))
        return ops_last_status();
    dim_lines(self, dim, &s->outer, &s->len, &s->inner);
    return OPS_OK;
}

ops_status
scan_family_meta(ops_scan *s, const char *op, scan_kind kind, const ops_tensor *self, int64_t dim, ops_dtype dtype,
                 const ops_tensor *out, const ops_tensor *out2, bool inplace)
{
    s->op = op;
    s->kind = kind;
    s->device = ops_tensor_device(self);
    s->src = s->res = s->res2 = NULL;
    s->outer = s->len = s->inner = 1;
    const ops_status st = scan_meta(s, op, kind, self, dim, dtype, out, out2, inplace);
    if (st != OPS_OK)
        scan_release(s);
    return st;
}

ops_status
scan_family_finish(ops_scan *s, ops_status st, ops_tensor *out, ops_tensor *out2, ops_tensor **result,
                   ops_tensor **result2)
{
    if (st == OPS_OK)
        st = red_deliver(s->op, &s->res, &s->res2, out, out2, result, result2);
    scan_release(s);
    return st;
}

/* The kernel of every scan (`CPU, CUDA: scan_kind_kernel`): the kind's loops, through
 * the stubs of s's device; an empty self has no line to transform. */
ops_status
scan_kind_kernel(ops_scan *s)
{
    if (ops_tensor_numel(s->src) == 0)
        return OPS_OK;
    switch (s->kind) {
    case SCAN_CUMMAX:
    case SCAN_CUMMIN:
        return OPS_STUB_CALL(reduce_cumext_loop, s->device, s->op, s->kind == SCAN_CUMMAX, s->src, s->outer, s->len,
                             s->inner, s->res, s->res2);
    case SCAN_SOFTMAX:
        return OPS_STUB_CALL(reduce_dim_loop, s->device, s->op, DIM_SOFTMAX, s->src, s->outer, s->len, s->inner,
                             s->res);
    case SCAN_LOG_SOFTMAX:
        return OPS_STUB_CALL(reduce_dim_loop, s->device, s->op, DIM_LOG_SOFTMAX, s->src, s->outer, s->len,
                             s->inner, s->res);
    case SCAN_CUMSUM:
        return OPS_STUB_CALL(reduce_dim_loop, s->device, s->op, DIM_CUMSUM, s->src, s->outer, s->len, s->inner,
                             s->res);
    case SCAN_CUMPROD:
        return OPS_STUB_CALL(reduce_dim_loop, s->device, s->op, DIM_CUMPROD, s->src, s->outer, s->len, s->inner,
                             s->res);
    }
    return ops_fail(OPS_ERR_RUNTIME, "%s: unknown scan kind %d", s->op, (int)s->kind);
}

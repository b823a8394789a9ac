/* The scan family (`meta: scan`, docs/codegen.md "Scans"), for every device: softmax,
 * log_softmax, cumsum(_), cumprod(_), cummax, cummin.  The generated glue of each form
 * runs scan_family_meta (dim and dtype checks, out= checks, conversion to a contiguous
 * input in the dtype computed in, allocation on the input's device, as the reductions
 * of kernels/reduce.c), the op's kernel (scan_kind_kernel: the lines transformed by the
 * reduce_dim_loop and reduce_cumext_loop stubs, kernels/cpu/reduce_dim.c;
 * kernels/cuda/softmax.cu, scan.cu), then scan_family_finish.  Below them the plain
 * entries _softmax_backward_data and _log_softmax_backward_data, softmax's and
 * log_softmax's gradients. */
#include <string.h>

#include "kernels/reduce.h"
#include "ops_dispatch.h"
#include "ops_functions_binary.h"
#include "ops_functions_reduce.h"
#include "ops_functions_unary.h"
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

/* ---- _softmax_backward_data, _log_softmax_backward_data ------------------------------------
 * The gradient of softmax / log_softmax from their result y and the incoming gradient g,
 * in y's dtype: y (g - sum(g y)) and g - exp(y) sum(g) along dim.  The CPU fuses each line
 * (reduce_softmax_bwd_loop); another device runs the formula as ops in float64. */

static ops_tensor *
softmax_bwd_ops(bool log, const ops_tensor *g, const ops_tensor *y, int64_t dim)
{
    int64_t dv[1] = {dim};
    const ops_int_list dl = {dv, 1};
    ops_tensor *a = NULL, *s = NULL, *d = NULL, *r = NULL;
    if (log) {
        if ((a = ops_exp(y)) != NULL && (s = ops_sum_dim(g, &dl, true, OPS_DTYPE_NONE)) != NULL &&
            (d = ops_mul(a, s)) != NULL)
            r = ops_sub(g, d, OPS_SCALAR_INT(1));
    } else {
        if ((a = ops_mul(g, y)) != NULL && (s = ops_sum_dim(a, &dl, true, OPS_DTYPE_NONE)) != NULL &&
            (d = ops_sub(g, s, OPS_SCALAR_INT(1))) != NULL)
            r = ops_mul(y, d);
    }
    ops_tensor_release(a);
    ops_tensor_release(s);
    ops_tensor_release(d);
    return r;
}

static ops_tensor *
softmax_bwd(const char *op, unsigned declared, bool log, const ops_tensor *grad_output, const ops_tensor *output,
            int64_t dim)
{
    char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
    /* the glue has refused other dtypes (`of: output`); this guards a direct call */
    if (!(declared & OPS_DTYPE_BIT(output->dtype))) {
        ops_fail_dtype(op, output->dtype, declared);
        return NULL;
    }
    if (!ops_wrap_dim(op, "dim", &dim, output->ndim))
        return NULL;
    if (grad_output->ndim != output->ndim ||
        memcmp(grad_output->sizes, output->sizes, (size_t)output->ndim * sizeof(int64_t)) != 0)
        return ops_fail_null(OPS_ERR_SHAPE, "%s: grad_output of shape %s does not match output of shape %s", op,
                             ops_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a),
                             ops_shape_str(output->ndim, output->sizes, b, sizeof b));
    const ops_device dev = ops_tensor_device(output);
    if (!ops_device_equal(ops_tensor_device(grad_output), dev))
        return ops_fail_null(OPS_ERR_DEVICE, "%s: grad_output and output must be on the same device", op);
    const ops_dtype cd = output->dtype;
    ops_tensor *g = NULL, *y = NULL, *r = NULL;
    if ((g = grad_output->dtype == cd && ops_tensor_is_contiguous(grad_output)
                 ? ops_tensor_retain(grad_output)
                 : red_convert(op, grad_output, cd, true)) == NULL)
        return NULL;
    if (OPS_STUB_GET(reduce_softmax_bwd_loop, dev) == NULL) {
        /* in float64, rounded once to cd: the CPU's loop sums in double, and g - sum(g y)
         * cancels (float32 ops gave 1e-4 relative differences; half-type ops rounded
         * every intermediate) */
        ops_tensor *g64 = NULL, *y64 = NULL, *r64 = NULL;
        if ((g64 = red_convert(op, g, OPS_FLOAT64, false)) != NULL &&
            (y64 = red_convert(op, output, OPS_FLOAT64, false)) != NULL &&
            (r64 = softmax_bwd_ops(log, g64, y64, dim)) != NULL)
            r = cd == OPS_FLOAT64 ? ops_tensor_retain(r64) : red_convert(op, r64, cd, true);
        ops_tensor_release(g64);
        ops_tensor_release(y64);
        ops_tensor_release(r64);
        ops_tensor_release(g);
        return r;
    }
    int64_t outer, len, inner;
    dim_lines(output, dim, &outer, &len, &inner);
    if ((y = ops_tensor_is_contiguous(output) ? ops_tensor_retain(output) : red_convert(op, output, cd, true)) ==
            NULL ||
        (r = ops_tensor_new(op, output->ndim, output->sizes, NULL, cd, dev)) == NULL)
        goto done;
    if (ops_tensor_numel(r) > 0 &&
        OPS_STUB_CALL(reduce_softmax_bwd_loop, dev, op, log, g, y, outer, len, inner, r) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
done:
    ops_tensor_release(g);
    ops_tensor_release(y);
    return r;
}

ops_tensor *
scan_softmax_backward_data(const ops_tensor *grad_output, const ops_tensor *output, int64_t dim, ops_dtype input_dtype)
{
    (void)input_dtype; /* the gradient has output's dtype (PyTorch's CPU kernel) */
    return softmax_bwd("_softmax_backward_data", OPS_DTYPE_MASK__SOFTMAX_BACKWARD_DATA, false, grad_output, output,
                       dim);
}

ops_tensor *
scan_log_softmax_backward_data(const ops_tensor *grad_output, const ops_tensor *output, int64_t dim,
                               ops_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_bwd("_log_softmax_backward_data", OPS_DTYPE_MASK__LOG_SOFTMAX_BACKWARD_DATA, true, grad_output,
                       output, dim);
}

/* The max pools' backward ops, the drivers of every device (the schema's `CPU, CUDA:
 * pool_*`): max_pool2d_with_indices_backward and adaptive_max_pool2d_backward and their
 * out= forms.  Each element of grad_output is added at the input position its index
 * names (flat offsets h * W + w into its (n, c) plane, as the forward ops in
 * kernels/pool.c return them) in a zero tensor of self's shape (zeroed by the stub), by the device's
 * pool_scatter_add stub (kernels/pool.h).  Indices come from the caller, so each is
 * checked against the plane size before anything is written (an index out of range is
 * an error, not a stray write: the stub checks while it adds into a fresh tensor).  float16/bfloat16 accumulate in float (repeated
 * indices sum several gradients) and are rounded once. */
#include <string.h>

#include "kernels/pool.h"
#include "ops_dispatch.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_creation.h"
#include "ops_functions_pool_backward.h"
#include "ops_kernels_pool_backward.h"

/* ---- the max pools' backward ops ---------------------------------------------------- */

/* The checks shared by both ops: dtypes (self's among the entry's declared ones:
 * `dtypes:`, OPS_DTYPE_MASK_<ENTRY>), ranks, and grad_output/indices/self agreeing on
 * every dim but the pooled two. */
static ops_status
check_common(const char *op, unsigned declared, const ops_tensor *grad_output, const ops_tensor *self,
             const ops_tensor *indices)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (!(declared & OPS_DTYPE_BIT(self->dtype)))
        return ops_fail_dtype(op, self->dtype, declared);
    if (grad_output->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected grad_output to have dtype %s (self's), but got %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(grad_output->dtype));
    if (indices->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected indices to have dtype int64, but got %s", op,
                        ops_dtype_name(indices->dtype));
    if (self->ndim != 3 && self->ndim != 4)
        return ops_fail(OPS_ERR_SHAPE, "%s: Expected 3D or 4D tensor for self, but got %s", op,
                        ops_shape_str(self->ndim, self->sizes, b1, sizeof b1));
    if (grad_output->ndim != indices->ndim ||
        memcmp(grad_output->sizes, indices->sizes, (size_t)indices->ndim * sizeof(int64_t)) != 0)
        return ops_fail(OPS_ERR_SHAPE, "%s: Expected grad_output and indices of the same size, but got %s and %s", op,
                        ops_shape_str(grad_output->ndim, grad_output->sizes, b1, sizeof b1),
                        ops_shape_str(indices->ndim, indices->sizes, b2, sizeof b2));
    bool lead_ok = grad_output->ndim == self->ndim;
    for (int i = 0; lead_ok && i < self->ndim - 2; i++)
        lead_ok = grad_output->sizes[i] == self->sizes[i];
    if (!lead_ok)
        return ops_fail(OPS_ERR_SHAPE, "%s: Expected grad_output of size %s for input of size %s, but got %s", op,
                        self->ndim == 4 ? "[N, C, *, *]" : "[C, *, *]", ops_shape_str(self->ndim, self->sizes, b1,
                                                                                       sizeof b1),
                        ops_shape_str(grad_output->ndim, grad_output->sizes, b2, sizeof b2));
    return OPS_OK;
}

/* grad_input: zeros of self's shape and dtype with grad_output added at indices. */
static ops_tensor *
pool_indices_scatter(const char *op, const ops_tensor *grad_output, const ops_tensor *self, const ops_tensor *indices)
{
    const ops_dtype acc = self->dtype == OPS_FLOAT64 ? OPS_FLOAT64 : OPS_FLOAT32;
    const int64_t ihw = self->sizes[self->ndim - 2] * self->sizes[self->ndim - 1];
    const int64_t ohw = indices->sizes[indices->ndim - 2] * indices->sizes[indices->ndim - 1];
    int64_t planes = 1;
    for (int i = 0; i < self->ndim - 2; i++)
        planes *= self->sizes[i];
    ops_tensor *gc = NULL, *ic = NULL, *res = NULL, *r = NULL;
    ops_tensor *g0 = ops_to_dtype(grad_output, acc, false, false, OPS_MEMORY_FORMAT_NONE);
    if (g0 == NULL || (gc = ops_contiguous(g0, OPS_CONTIGUOUS_FORMAT)) == NULL ||
        (ic = ops_contiguous(indices, OPS_CONTIGUOUS_FORMAT)) == NULL)
        goto done;
    const ops_device dev = ops_tensor_device(self);
    bool bad = false;
    int64_t bad_ix = 0;
    /* the stub zeroes res and skips (and reports) indices out of range (kernels/pool.h);
     * res is ours, so a bad index fails the op with nothing visible written */
    if ((res = ops_tensor_new(op, self->ndim, self->sizes, NULL, acc, dev)) == NULL ||
        OPS_STUB_CALL(pool_scatter_add, dev, op, gc, ic, res, planes, ohw, ihw, &bad) != OPS_OK)
        goto done;
    if (bad) {
        if (OPS_STUB_CALL(nn_first_bad_index, dev, op, ic, ihw, false, 0, &bad, &bad_ix) == OPS_OK)
            ops_fail(OPS_ERR_INDEX, "%s: index %lld is out of bounds for an input plane of %lld elements", op,
                     (long long)bad_ix, (long long)ihw);
        goto done;
    }
    r = acc == self->dtype ? ops_tensor_retain(res) : ops_to_dtype(res, self->dtype, false, false,
                                                                   OPS_MEMORY_FORMAT_NONE);
done:
    ops_tensor_release(g0);
    ops_tensor_release(gc);
    ops_tensor_release(ic);
    ops_tensor_release(res);
    return r;
}

/* One pooled dim's output size (PyTorch's pooling_output_shape). */
static int64_t
pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode)
{
    const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t o = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad)
        o--;
    return o;
}

static bool
pair_of(ops_int_list l, int64_t *a, int64_t *b)
{
    if (l.len != 1 && l.len != 2)
        return false;
    *a = l.data[0];
    *b = l.data[l.len - 1];
    return true;
}

/* max_pool2d_with_indices_backward's argument checks that come before the dtype: the
 * pooling arguments, and (for self of 3 or 4 dims) grad_output's and indices' sizes;
 * a self of another rank is refused after the dtype, by check_common. */
static ops_status
max_pool_backward_geom(const ops_tensor *grad_output, const ops_tensor *self, ops_int_list kernel_size,
                       ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode,
                       const ops_tensor *indices)
{
    const char *op = "max_pool2d_with_indices_backward";
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    if (!pair_of(kernel_size, &kh, &kw))
        return ops_fail(OPS_ERR_VALUE, "%s: kernel_size must either be a single int, or a tuple of two ints", op);
    if (stride.len == 0) {
        sh = kh;
        sw = kw;
    } else if (!pair_of(stride, &sh, &sw)) {
        return ops_fail(OPS_ERR_VALUE, "%s: stride must either be omitted, a single int, or a tuple of two ints",
                        op);
    }
    if (!pair_of(padding, &ph, &pw))
        return ops_fail(OPS_ERR_VALUE, "%s: padding must either be a single int, or a tuple of two ints", op);
    if (!pair_of(dilation, &dh, &dw))
        return ops_fail(OPS_ERR_VALUE, "%s: dilation must be either a single int, or a tuple of two ints", op);
    if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0 || ph < 0 || pw < 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: kernel_size, stride and dilation must be positive and padding non-negative", op);
    if (self->ndim != 3 && self->ndim != 4)
        return OPS_OK;
    const int nd = self->ndim;
    int64_t want[4];
    memcpy(want, self->sizes, (size_t)nd * sizeof *want);
    want[nd - 2] = pooled_size(self->sizes[nd - 2], kh, ph, sh, dh, ceil_mode);
    want[nd - 1] = pooled_size(self->sizes[nd - 1], kw, pw, sw, dw, ceil_mode);
    const ops_tensor *const ts[2] = {grad_output, indices};
    const char *const names[2] = {"grad_output", "indices"};
    for (int t = 0; t < 2; t++)
        if (ts[t]->ndim != nd || memcmp(ts[t]->sizes, want, (size_t)nd * sizeof *want) != 0) {
            char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
            return ops_fail(OPS_ERR_SHAPE, "%s: Expected %s of size %s, but got %s", op, names[t],
                            ops_shape_str(nd, want, b1, sizeof b1),
                            ops_shape_str(ts[t]->ndim, ts[t]->sizes, b2, sizeof b2));
        }
    return OPS_OK;
}

/* grad_input's dtype, which the .grad_input forms check first. */
static ops_status
backward_out_check(const char *op, const ops_tensor *self, const ops_tensor *grad_input)
{
    if (grad_input->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(grad_input->dtype));
    return OPS_OK;
}

ops_status
ops_check_max_pool2d_with_indices_backward(const ops_tensor *grad_output, const ops_tensor *self,
                                           ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                                           ops_int_list dilation, bool ceil_mode, const ops_tensor *indices)
{
    return max_pool_backward_geom(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
}

ops_status
ops_check_max_pool2d_with_indices_backward_grad_input(const ops_tensor *grad_output, const ops_tensor *self,
                                                      ops_int_list kernel_size, ops_int_list stride,
                                                      ops_int_list padding, ops_int_list dilation, bool ceil_mode,
                                                      const ops_tensor *indices, ops_tensor *grad_input)
{
    ops_status st = backward_out_check("max_pool2d_with_indices_backward", self, grad_input);
    return st != OPS_OK ? st
                        : max_pool_backward_geom(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                                 indices);
}

ops_status
ops_check_adaptive_max_pool2d_backward_grad_input(const ops_tensor *grad_output, const ops_tensor *self,
                                                  const ops_tensor *indices, ops_tensor *grad_input)
{
    (void)grad_output, (void)indices;
    return backward_out_check("adaptive_max_pool2d_backward", self, grad_input);
}

/* the geometry, then check_common (the dtype first, then a self of another rank). */
static ops_tensor *
max_pool_backward_core(unsigned declared, const ops_tensor *grad_output, const ops_tensor *self,
                       ops_int_list kernel_size, ops_int_list stride, ops_int_list padding, ops_int_list dilation,
                       bool ceil_mode, const ops_tensor *indices)
{
    const char *op = "max_pool2d_with_indices_backward";
    if (max_pool_backward_geom(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices) !=
            OPS_OK ||
        check_common(op, declared, grad_output, self, indices) != OPS_OK)
        return NULL;
    return pool_indices_scatter(op, grad_output, self, indices);
}

ops_tensor *
pool_max_pool2d_with_indices_backward(const ops_tensor *grad_output, const ops_tensor *self, ops_int_list kernel_size,
                                      ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode,
                                      const ops_tensor *indices)
{
    return max_pool_backward_core(OPS_DTYPE_MASK_MAX_POOL2D_WITH_INDICES_BACKWARD, grad_output, self, kernel_size,
                                  stride, padding, dilation, ceil_mode, indices);
}

ops_status
pool_max_pool2d_with_indices_backward_out(const ops_tensor *grad_output, const ops_tensor *self,
                                          ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                                          ops_int_list dilation, bool ceil_mode, const ops_tensor *indices,
                                          ops_tensor *grad_input)
{
    const char *op = "max_pool2d_with_indices_backward";
    ops_status st = backward_out_check(op, self, grad_input);
    if (st != OPS_OK)
        return st;
    return ops_write_out(
        op,
        max_pool_backward_core(OPS_DTYPE_MASK_MAX_POOL2D_WITH_INDICES_BACKWARD_GRAD_INPUT, grad_output, self,
                               kernel_size, stride, padding, dilation, ceil_mode, indices),
        grad_input);
}

static ops_tensor *
adaptive_backward_core(unsigned declared, const ops_tensor *grad_output, const ops_tensor *self,
                       const ops_tensor *indices)
{
    const char *op = "adaptive_max_pool2d_backward";
    if (check_common(op, declared, grad_output, self, indices) != OPS_OK)
        return NULL;
    return pool_indices_scatter(op, grad_output, self, indices);
}

ops_tensor *
pool_adaptive_max_pool2d_backward(const ops_tensor *grad_output, const ops_tensor *self, const ops_tensor *indices)
{
    return adaptive_backward_core(OPS_DTYPE_MASK_ADAPTIVE_MAX_POOL2D_BACKWARD, grad_output, self, indices);
}

ops_status
pool_adaptive_max_pool2d_backward_out(const ops_tensor *grad_output, const ops_tensor *self, const ops_tensor *indices,
                                      ops_tensor *grad_input)
{
    const char *op = "adaptive_max_pool2d_backward";
    ops_status st = backward_out_check(op, self, grad_input);
    if (st != OPS_OK)
        return st;
    return ops_write_out(
        op, adaptive_backward_core(OPS_DTYPE_MASK_ADAPTIVE_MAX_POOL2D_BACKWARD_GRAD_INPUT, grad_output, self, indices),
        grad_input);
}

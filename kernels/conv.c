/* Convolution, one driver for every device: conv1d, conv2d (and their
 * padding="valid"/"same" overloads), conv_transpose1d, conv_transpose2d.
 *
 * Every op is described once as a 2-D convolution (ops_conv_geom,
 * kernels/linalg_common.h): a 1-D one is a 2-D one of height 1.  Here: the argument
 * lists and padding modes, the dtype and shape checks with their messages, and the
 * geometry (output size, padding, strides of the input as (n, c, h, w)).  The work is
 * the device's loop behind the stub conv_run (kernels/conv.h): im2col + OpenBLAS in
 * kernels/cpu/conv.c, im2col + cuBLAS in kernels/cuda/conv.cu.  Outputs are fresh
 * tensors (PyTorch has no out= form of these ops). */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "kernels/conv.h"
#include "ops_dispatch.h"
#include "ops_kernels_conv.h"

/* ---- argument checks ----------------------------------------------------------------- */

/* A stride/padding/dilation list: one value for every spatial dim, or one per dim. */
static ops_status
conv_param(const char *op, const char *name, ops_int_list l, int nsp, int64_t *v)
{
    if (l.len == 1 || l.len == nsp) {
        for (int i = 0; i < nsp; i++)
            v[i] = l.data[l.len == 1 ? 0 : i];
        return OPS_OK;
    }
    char buf[OPS_SHAPE_STR_LEN];
    return ops_fail(OPS_ERR_VALUE,
                    "%s: expected %s to be a single integer value or a list of %d values to match the convolution "
                    "dimensions, but got %s=%s",
                    op, name, nsp, name,
                    ops_shape_str(l.len <= OPS_MAX_DIMS ? (int)l.len : OPS_MAX_DIMS, l.data, buf, sizeof buf));
}

/* The input's dtype among the entry's declared ones (`dtypes:`, OPS_DTYPE_MASK_<ENTRY>:
 * PyTorch's CPU dtypes, floating and every integer type for conv (slow_conv2d), floating
 * and int64 for the transposed ops (slow_conv_transpose2d); never bool), checked after
 * input, weight and bias are found to have one dtype. */
static ops_status
conv_same_dtype(const char *op, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    if (bias != NULL && bias->dtype != input->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: Input type (%s) and bias type (%s) should be the same", op,
                        ops_dtype_name(input->dtype), ops_dtype_name(bias->dtype));
    if (weight->dtype != input->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: Input type (%s) and weight type (%s) should be the same", op,
                        ops_dtype_name(input->dtype), ops_dtype_name(weight->dtype));
    return OPS_OK;
}

static ops_status
conv_check_dtypes(const char *op, unsigned declared, const ops_tensor *input, const ops_tensor *weight,
                  const ops_tensor *bias)
{
    ops_status st;
    if ((st = conv_same_dtype(op, input, weight, bias)) != OPS_OK)
        return st;
    if (!(declared & OPS_DTYPE_BIT(input->dtype)))
        return ops_fail_dtype(op, input->dtype, declared);
    return OPS_OK;
}

/* The input's batched shape (a batch of 1 for an unbatched input), for messages. */
static const char *
batched_shape(const ops_tensor *input, bool batched, char *buf, size_t n)
{
    int64_t s[OPS_MAX_DIMS];
    int nd = 0;
    if (!batched)
        s[nd++] = 1;
    for (int i = 0; i < input->ndim && nd < OPS_MAX_DIMS; i++)
        s[nd++] = input->sizes[i];
    return ops_shape_str(nd, s, buf, n);
}

/* PyTorch's check_shape_forward and output-size rule.  pad_lo/pad_hi: padding before and
 * after each spatial dim; opad: output_padding (transposed only). */
static ops_status
conv_setup(ops_conv_geom *g, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
           const int64_t *stride, const int64_t *pad_lo, const int64_t *pad_hi, const int64_t *dil, const int64_t *opad,
           int64_t groups)
{
    const char *op = g->op;
    const int nsp = g->nsp;
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (input->ndim != nsp + 1 && input->ndim != nsp + 2)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                        op, nsp + 1, nsp + 2, op, ops_shape_str(input->ndim, input->sizes, b1, sizeof b1));
    const bool batched = input->ndim == nsp + 2;
    for (int i = 0; i < nsp; i++)
        if (pad_lo[i] < 0 || pad_hi[i] < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: negative padding is not supported", op);
    for (int i = 0; opad != NULL && i < nsp; i++)
        if (opad[i] < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: negative output_padding is not supported", op);
    for (int i = 0; i < nsp; i++)
        if (stride[i] <= 0)
            return ops_fail(OPS_ERR_VALUE, "%s: non-positive stride is not supported", op);
    for (int i = 0; i < nsp; i++)
        if (dil[i] <= 0)
            return ops_fail(OPS_ERR_VALUE, "%s: dilation should be greater than zero", op);
    if (groups <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: non-positive groups is not supported", op);
    if (weight->ndim != nsp + 2)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input "
                        "of size %s instead",
                        op, (int)weight->ndim, (int)weight->ndim,
                        ops_shape_str(weight->ndim, weight->sizes, b1, sizeof b1), nsp + 2,
                        batched_shape(input, batched, b2, sizeof b2));
    const int64_t *ws = weight->sizes;
    if (ws[0] < groups)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight of "
                        "size %s instead",
                        op, (long long)groups, (long long)groups, ops_shape_str(weight->ndim, ws, b1, sizeof b1));
    if (ws[0] % groups != 0)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight "
                        "of size %s instead",
                        op, (long long)groups, (long long)groups, ops_shape_str(weight->ndim, ws, b1, sizeof b1));
    const int cdim = batched ? 1 : 0;
    const int64_t in_c = input->sizes[cdim];
    int64_t isp[OPS_CONV_MAX_SP] = {1, 1}, ksp[OPS_CONV_MAX_SP] = {1, 1};
    for (int i = 0; i < nsp; i++) {
        isp[OPS_CONV_MAX_SP - nsp + i] = input->sizes[cdim + 1 + i];
        ksp[OPS_CONV_MAX_SP - nsp + i] = ws[2 + i];
    }
    int64_t out_c, in_c_expected;
    /* sizes from the arguments (padding, dilation, stride, groups) can leave int64:
     * every step below is checked, and one that does not fit is the error here */
    if (ops_mul_overflow_i64(ws[1], groups, &in_c_expected))
        return ops_fail(OPS_ERR_VALUE, "%s: groups=%lld times the weight's %lld channels does not fit int64", op,
                        (long long)groups, (long long)ws[1]);
    bool ovf = false;
    int64_t t;
    if (!g->transposed) {
        if (in_c != in_c_expected)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but got "
                            "%lld channels instead",
                            op, (long long)groups, ops_shape_str(weight->ndim, ws, b1, sizeof b1),
                            batched_shape(input, batched, b2, sizeof b2), (long long)in_c_expected,
                            (long long)in_c);
        out_c = ws[0];
        if (bias != NULL && (bias->ndim != 1 || bias->sizes[0] != ws[0])) {
            char b3[OPS_SHAPE_STR_LEN];
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Given weight of size %s, expected bias to be 1-dimensional with %lld elements, but "
                            "got bias of size %s instead",
                            op, ops_shape_str(weight->ndim, ws, b1, sizeof b1), (long long)ws[0],
                            ops_shape_str(bias->ndim, bias->sizes, b3, sizeof b3));
        }
        bool fits = true;
        int64_t padded[OPS_CONV_MAX_SP] = {0}, kern[OPS_CONV_MAX_SP] = {0};
        for (int i = 0; i < nsp; i++) {
            ovf |= ops_add_overflow_i64(input->sizes[cdim + 1 + i], pad_lo[i], &t) ||
                   ops_add_overflow_i64(t, pad_hi[i], &padded[i]);
            ovf |= ops_mul_overflow_i64(dil[i], ws[2 + i] - 1, &t) || ops_add_overflow_i64(t, 1, &kern[i]);
            fits = fits && padded[i] >= kern[i];
        }
        if (ovf)
            return ops_fail(OPS_ERR_VALUE, "%s: the padded input or the dilated kernel size does not fit int64", op);
        if (!fits) {
            if (nsp == 1)
                return ops_fail(OPS_ERR_SHAPE,
                                "%s: Calculated padded input size per channel: (%lld). Kernel size: (%lld). Kernel "
                                "size can't be greater than actual input size",
                                op, (long long)padded[0], (long long)kern[0]);
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Calculated padded input size per channel: (%lld x %lld). Kernel size: (%lld x "
                            "%lld). Kernel size can't be greater than actual input size",
                            op, (long long)padded[0], (long long)padded[1], (long long)kern[0], (long long)kern[1]);
        }
    } else {
        if (in_c != ws[0])
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Given transposed=1, weight of size %s, expected input%s to have %lld channels, but "
                            "got %lld channels instead",
                            op, ops_shape_str(weight->ndim, ws, b1, sizeof b1),
                            batched_shape(input, batched, b2, sizeof b2), (long long)ws[0], (long long)in_c);
        out_c = in_c_expected;
        if (bias != NULL && (bias->ndim != 1 || bias->sizes[0] != out_c)) {
            char b3[OPS_SHAPE_STR_LEN];
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Given transposed=1, weight of size %s, expected bias to be 1-dimensional with %lld "
                            "elements, but got bias of size %s instead",
                            op, ops_shape_str(weight->ndim, ws, b1, sizeof b1), (long long)out_c,
                            ops_shape_str(bias->ndim, bias->sizes, b3, sizeof b3));
        }
        for (int i = 0; i < nsp; i++)
            if (opad[i] >= stride[i] && opad[i] >= dil[i]) {
                if (nsp == 1) /* PyTorch runs it as 2-D with a height of 1 */
                    return ops_fail(OPS_ERR_VALUE,
                                    "%s: output padding must be smaller than either stride or dilation, but got "
                                    "output_padding_height: 0 output_padding_width: %lld stride_height: 1 "
                                    "stride_width: %lld dilation_height: 1 dilation_width: %lld",
                                    op, (long long)opad[0], (long long)stride[0], (long long)dil[0]);
                return ops_fail(OPS_ERR_VALUE,
                                "%s: output padding must be smaller than either stride or dilation, but got "
                                "output_padding_height: %lld output_padding_width: %lld stride_height: %lld "
                                "stride_width: %lld dilation_height: %lld dilation_width: %lld",
                                op, (long long)opad[0], (long long)opad[1], (long long)stride[0],
                                (long long)stride[1], (long long)dil[0], (long long)dil[1]);
            }
    }

    /* the geometry, as 2-D (a 1-D op has height 1) */
    const int off = OPS_CONV_MAX_SP - nsp;
    int64_t st2[2] = {1, 1}, dl2[2] = {1, 1}, lo2[2] = {0, 0}, hi2[2] = {0, 0}, op2[2] = {0, 0};
    for (int i = 0; i < nsp; i++) {
        st2[off + i] = stride[i];
        dl2[off + i] = dil[i];
        lo2[off + i] = pad_lo[i];
        hi2[off + i] = pad_hi[i];
        op2[off + i] = opad != NULL ? opad[i] : 0;
    }
    g->dt = input->dtype;
    g->ct = !ops_dtype_is_floating(input->dtype) ? OPS_INT64
            : input->dtype == OPS_FLOAT64        ? OPS_FLOAT64
                                                 : OPS_FLOAT32;
    g->n = batched ? input->sizes[0] : 1;
    g->cin = in_c;
    g->ih = isp[0];
    g->iw = isp[1];
    g->cout = out_c;
    g->kh = ksp[0];
    g->kw = ksp[1];
    g->groups = groups;
    g->sh = st2[0], g->sw = st2[1], g->dh = dl2[0], g->dw = dl2[1];
    g->pt = lo2[0], g->pb = hi2[0], g->pl = lo2[1], g->pr = hi2[1];
    int64_t osp[2];
    for (int i = 0; i < 2; i++) {
        int64_t span; /* of the dilated kernel, less one: fits (checked above for conv) */
        ovf |= ops_mul_overflow_i64(dl2[i], ksp[i] - 1, &span);
        if (!g->transposed) {
            /* padded >= kernel was checked: no step here can leave int64 */
            osp[i] = (isp[i] + lo2[i] + hi2[i] - span - 1) / st2[i] + 1;
        } else {
            ovf |= ops_mul_overflow_i64(isp[i] - 1, st2[i], &t) || ops_sub_overflow_i64(t, lo2[i], &t) ||
                   ops_sub_overflow_i64(t, hi2[i], &t) || ops_add_overflow_i64(t, span, &t) ||
                   ops_add_overflow_i64(t, op2[i], &t) || ops_add_overflow_i64(t, 1, &osp[i]);
        }
    }
    if (ovf)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: the output size for input %lld x %lld, stride %lld x %lld, padding %lld x %lld and "
                        "dilation %lld x %lld does not fit int64",
                        op, (long long)isp[0], (long long)isp[1], (long long)st2[0], (long long)st2[1],
                        (long long)lo2[0], (long long)lo2[1], (long long)dl2[0], (long long)dl2[1]);
    g->oh = osp[0];
    g->ow = osp[1];
    if (g->transposed && (g->oh <= 0 || g->ow <= 0)) {
        /* PyTorch's slow_conv_transpose2d shape check */
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Given input size per channel: (%lld x %lld). Calculated output size per channel: (%lld "
                        "x %lld). Output size is too small",
                        op, (long long)g->ih, (long long)g->iw, (long long)g->oh, (long long)g->ow);
    }
    /* input strides as (n, c, h, w) */
    g->xs[0] = batched ? input->strides[0] : 0;
    g->xs[1] = input->strides[cdim];
    g->xs[2] = nsp == 2 ? input->strides[cdim + 1] : 0;
    g->xs[3] = input->strides[cdim + nsp];
    if (g->oh > INT_MAX || g->ow > INT_MAX || g->oh * g->ow > INT_MAX || g->ih * g->iw > INT_MAX ||
        (g->cin / groups) * g->kh * g->kw > INT_MAX || (g->cout / groups) * g->kh * g->kw > INT_MAX)
        return ops_fail(OPS_ERR_VALUE, "%s: the problem is too large for the BLAS's 32-bit sizes", op);
    return OPS_OK;
}

/* A tensor of up to 4 dims as (sizes, strides) of exactly 4, leading dims of size 1,
 * with nsp == 1 tensors given a height of 1 before their last dim. */
void
ops_conv_as4(const ops_tensor *t, int nsp, int64_t *sz, int64_t *st)
{
    int nd = t->ndim;
    int64_t s[4], r[4];
    int k = 0;
    for (int i = 0; i < nd; i++) {
        if (nsp == 1 && i == nd - 1 && nd >= 2) {
            s[k] = 1;
            r[k++] = 0;
        }
        s[k] = t->sizes[i];
        r[k++] = t->strides[i];
    }
    const int lead = 4 - k;
    for (int i = 0; i < 4; i++) {
        sz[i] = i < lead ? 1 : s[i - lead];
        st[i] = i < lead ? 0 : r[i - lead];
    }
}

/* Runs checked g on the input's device: the device's conv_run loop. */
static void
conv_exec(ops_conv_geom *g, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, bool batched,
          ops_tensor **result)
{
    const ops_device dev = input->storage->device;
    conv_run_fn *const fn = OPS_STUB_GET(conv_run, dev);
    if (fn == NULL)
        ops_dispatch_no_kernel(g->op, dev);
    else
        fn(g, input, weight, bias, batched, result);
}

/* conv1d/conv2d with explicit padding (pad_lo == pad_hi unless "same" made them differ). */
static ops_tensor *
conv_forward(const char *op, unsigned declared, int nsp, const ops_tensor *input, const ops_tensor *weight,
             const ops_tensor *bias, const int64_t *stride, const int64_t *pad_lo, const int64_t *pad_hi,
             const int64_t *dil, int64_t groups)
{
    ops_conv_geom g = {.op = op, .nsp = nsp, .transposed = false};
    ops_tensor *r = NULL;
    if (conv_check_dtypes(op, declared, input, weight, bias) != OPS_OK ||
        conv_setup(&g, input, weight, bias, stride, pad_lo, pad_hi, dil, NULL, groups) != OPS_OK)
        return NULL;
    conv_exec(&g, input, weight, bias, input->ndim == nsp + 2, &r);
    return r;
}

static ops_tensor *
conv_lists(const char *op, unsigned declared, int nsp, const ops_tensor *input, const ops_tensor *weight,
           const ops_tensor *bias, ops_int_list stride, ops_int_list padding, ops_int_list dilation, int64_t groups)
{
    int64_t s[OPS_CONV_MAX_SP], p[OPS_CONV_MAX_SP], d[OPS_CONV_MAX_SP];
    if (conv_param(op, "stride", stride, nsp, s) != OPS_OK || conv_param(op, "padding", padding, nsp, p) != OPS_OK ||
        conv_param(op, "dilation", dilation, nsp, d) != OPS_OK)
        return NULL;
    return conv_forward(op, declared, nsp, input, weight, bias, s, p, p, d, groups);
}

/* The stride and dilation of the padding="valid"/"same" overloads, and the padding
 * before (lo) and after (hi) each spatial dim. */
static ops_status
conv_mode_params(const char *op, int nsp, const ops_tensor *weight, ops_int_list stride, const char *padding,
                 ops_int_list dilation, int64_t *s, int64_t *d, int64_t *lo, int64_t *hi)
{
    ops_status st;
    if ((st = conv_param(op, "stride", stride, nsp, s)) != OPS_OK ||
        (st = conv_param(op, "dilation", dilation, nsp, d)) != OPS_OK)
        return st;
    if (strcmp(padding, "same") == 0) {
        for (int i = 0; i < nsp; i++)
            if (s[i] != 1)
                return ops_fail(OPS_ERR_VALUE, "%s: padding='same' is not supported for strided convolutions", op);
        if (weight->ndim == nsp + 2)
            for (int i = 0; i < nsp; i++) {
                const int64_t total = d[i] * (weight->sizes[2 + i] - 1);
                lo[i] = total > 0 ? total / 2 : 0;
                hi[i] = total > 0 ? total - lo[i] : 0;
            }
    } else if (strcmp(padding, "valid") != 0) {
        return ops_fail(OPS_ERR_VALUE, "%s: Invalid padding string: '%s'", op, padding);
    }
    return OPS_OK;
}

/* The padding="valid"/"same" overloads (PyTorch's _convolution_mode). "same" pads
 * d * (k - 1) in all, the odd one after (on the right), as PyTorch does. */
static ops_tensor *
conv_mode(const char *op, unsigned declared, int nsp, const ops_tensor *input, const ops_tensor *weight,
          const ops_tensor *bias, ops_int_list stride, const char *padding, ops_int_list dilation, int64_t groups)
{
    int64_t s[OPS_CONV_MAX_SP], d[OPS_CONV_MAX_SP], lo[OPS_CONV_MAX_SP] = {0, 0}, hi[OPS_CONV_MAX_SP] = {0, 0};
    if (conv_mode_params(op, nsp, weight, stride, padding, dilation, s, d, lo, hi) != OPS_OK)
        return NULL;
    return conv_forward(op, declared, nsp, input, weight, bias, s, lo, hi, d, groups);
}

static ops_tensor *
conv_transpose(const char *op, unsigned declared, int nsp, const ops_tensor *input, const ops_tensor *weight,
               const ops_tensor *bias, ops_int_list stride, ops_int_list padding, ops_int_list output_padding,
               int64_t groups, ops_int_list dilation)
{
    int64_t s[OPS_CONV_MAX_SP], p[OPS_CONV_MAX_SP], o[OPS_CONV_MAX_SP], d[OPS_CONV_MAX_SP];
    if (conv_param(op, "stride", stride, nsp, s) != OPS_OK || conv_param(op, "padding", padding, nsp, p) != OPS_OK ||
        conv_param(op, "output_padding", output_padding, nsp, o) != OPS_OK ||
        conv_param(op, "dilation", dilation, nsp, d) != OPS_OK)
        return NULL;
    ops_conv_geom g = {.op = op, .nsp = nsp, .transposed = true};
    ops_tensor *r = NULL;
    if (conv_check_dtypes(op, declared, input, weight, bias) != OPS_OK ||
        conv_setup(&g, input, weight, bias, s, p, p, d, o, groups) != OPS_OK)
        return NULL;
    conv_exec(&g, input, weight, bias, input->ndim == nsp + 2, &r);
    return r;
}

/* ---- the `check:` of each entry (the schema names them) ------------------------------
 * What PyTorch checks before the dtype: the stride/padding/dilation lists (and a padding
 * string), then that input, weight and bias have one dtype.  The glue runs it, refuses
 * an undeclared dtype (`dtypes: {of: input}`), then calls the kernel, which checks the
 * same again as a guard for a direct call and then the geometry (conv_setup). */

static ops_status
conv_lists_check(const char *op, int nsp, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                 ops_int_list stride, ops_int_list padding, ops_int_list dilation)
{
    int64_t v[OPS_CONV_MAX_SP];
    ops_status st;
    if ((st = conv_param(op, "stride", stride, nsp, v)) != OPS_OK ||
        (st = conv_param(op, "padding", padding, nsp, v)) != OPS_OK ||
        (st = conv_param(op, "dilation", dilation, nsp, v)) != OPS_OK)
        return st;
    return conv_same_dtype(op, input, weight, bias);
}

static ops_status
conv_mode_check(const char *op, int nsp, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                ops_int_list stride, const char *padding, ops_int_list dilation)
{
    int64_t s[OPS_CONV_MAX_SP], d[OPS_CONV_MAX_SP], lo[OPS_CONV_MAX_SP], hi[OPS_CONV_MAX_SP];
    ops_status st;
    if ((st = conv_mode_params(op, nsp, weight, stride, padding, dilation, s, d, lo, hi)) != OPS_OK)
        return st;
    return conv_same_dtype(op, input, weight, bias);
}

static ops_status
conv_transpose_check(const char *op, int nsp, const ops_tensor *input, const ops_tensor *weight,
                     const ops_tensor *bias, ops_int_list stride, ops_int_list padding, ops_int_list output_padding,
                     ops_int_list dilation)
{
    int64_t v[OPS_CONV_MAX_SP];
    ops_status st;
    if ((st = conv_param(op, "stride", stride, nsp, v)) != OPS_OK ||
        (st = conv_param(op, "padding", padding, nsp, v)) != OPS_OK ||
        (st = conv_param(op, "output_padding", output_padding, nsp, v)) != OPS_OK ||
        (st = conv_param(op, "dilation", dilation, nsp, v)) != OPS_OK)
        return st;
    return conv_same_dtype(op, input, weight, bias);
}

ops_status
ops_check_conv1d(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
                 ops_int_list padding, ops_int_list dilation, int64_t groups)
{
    (void)groups; /* checked with the geometry, after the dtype */
    return conv_lists_check("conv1d", 1, input, weight, bias, stride, padding, dilation);
}

ops_status
ops_check_conv2d(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
                 ops_int_list padding, ops_int_list dilation, int64_t groups)
{
    (void)groups;
    return conv_lists_check("conv2d", 2, input, weight, bias, stride, padding, dilation);
}

ops_status
ops_check_conv1d_padding(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                         ops_int_list stride, const char *padding, ops_int_list dilation, int64_t groups)
{
    (void)groups;
    return conv_mode_check("conv1d", 1, input, weight, bias, stride, padding, dilation);
}

ops_status
ops_check_conv2d_padding(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                         ops_int_list stride, const char *padding, ops_int_list dilation, int64_t groups)
{
    (void)groups;
    return conv_mode_check("conv2d", 2, input, weight, bias, stride, padding, dilation);
}

ops_status
ops_check_conv_transpose1d(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                           ops_int_list stride, ops_int_list padding, ops_int_list output_padding, int64_t groups,
                           ops_int_list dilation)
{
    (void)groups;
    return conv_transpose_check("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding,
                                dilation);
}

ops_status
ops_check_conv_transpose2d_input(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                                 ops_int_list stride, ops_int_list padding, ops_int_list output_padding,
                                 int64_t groups, ops_int_list dilation)
{
    (void)groups;
    return conv_transpose_check("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding,
                                dilation);
}

/* ---- the ops (the schema names these for CPU and CUDA) ----------------------------- */

ops_tensor *
conv_conv1d(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
            ops_int_list padding, ops_int_list dilation, int64_t groups)
{
    return conv_lists("conv1d", OPS_DTYPE_MASK_CONV1D, 1, input, weight, bias, stride, padding, dilation, groups);
}

ops_tensor *
conv_conv2d(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
            ops_int_list padding, ops_int_list dilation, int64_t groups)
{
    return conv_lists("conv2d", OPS_DTYPE_MASK_CONV2D, 2, input, weight, bias, stride, padding, dilation, groups);
}

ops_tensor *
conv_conv1d_padding(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
                    const char *padding, ops_int_list dilation, int64_t groups)
{
    return conv_mode("conv1d", OPS_DTYPE_MASK_CONV1D_PADDING, 1, input, weight, bias, stride, padding, dilation,
                     groups);
}

ops_tensor *
conv_conv2d_padding(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
                    const char *padding, ops_int_list dilation, int64_t groups)
{
    return conv_mode("conv2d", OPS_DTYPE_MASK_CONV2D_PADDING, 2, input, weight, bias, stride, padding, dilation,
                     groups);
}

ops_tensor *
conv_conv_transpose1d(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, ops_int_list stride,
                      ops_int_list padding, ops_int_list output_padding, int64_t groups, ops_int_list dilation)
{
    return conv_transpose("conv_transpose1d", OPS_DTYPE_MASK_CONV_TRANSPOSE1D, 1, input, weight, bias, stride,
                          padding, output_padding, groups, dilation);
}

ops_tensor *
conv_conv_transpose2d_input(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                            ops_int_list stride, ops_int_list padding, ops_int_list output_padding, int64_t groups,
                            ops_int_list dilation)
{
    return conv_transpose("conv_transpose2d", OPS_DTYPE_MASK_CONV_TRANSPOSE2D_INPUT, 2, input, weight, bias, stride,
                          padding, output_padding, groups, dilation);
}

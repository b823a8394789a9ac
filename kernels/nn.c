/* Other neural-network ops, the drivers: one_hot, pad (constant, reflect, replicate,
 * circular), upsample_nearest1d/2d, upsample_linear1d, upsample_bilinear2d, pixel_shuffle,
 * pixel_unshuffle, glu, prelu.
 *
 * pad and upsample_nearest are gathers: every output element copies one input
 * element (or, for constant padding, the fill value).  They share one engine that
 * takes, per output dim, a table of input offsets (in elements, the input's strides
 * already applied), so any input layout is read in place and every dtype is moved as
 * raw bytes.  Bilinear interpolation follows PyTorch's source-index arithmetic
 * exactly (aten/src/ATen/native/UpSample.h: area_pixel_compute_scale,
 * area_pixel_compute_source_index, guard_index_and_lambda), in float for every dtype
 * but float64, as PyTorch's opmath.  pixel_shuffle/unshuffle are a strided view of
 * self made contiguous; glu and prelu run on the binary iterator, so they broadcast,
 * convert and check out= exactly as structured binary ops do.
 *
 * Functional results are fresh contiguous tensors; out= forms compute into one and
 * hand it to ops_write_out (resize, cast check, overlap check), so a failure leaves
 * out untouched.
 *
 * The drivers run for every device (the schema's `CPU, CUDA: nn_*`): the gather
 * tables and the interpolation tables are computed here, in host memory, and the
 * passes over the elements are the stubs of kernels/nn.h (the CPU loops in
 * kernels/cpu/nn.c, the CUDA kernels in kernels/cuda/nn.cu). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/nn.h"
#include "ops_dispatch.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_kernels_nn.h"


/* Marks an output position that takes the fill value (constant padding). */
#define NN_FILL INT64_MIN

/* ---- the gather engine -------------------------------------------------------------- */




/* Writes g into the contiguous tensor dst (dst's sizes are g->sizes). */
static ops_status
nn_gather_run(const nn_gather *g, ops_tensor *dst)
{
    if (ops_shape_numel(g->ndim, g->sizes) == 0)
        return OPS_OK;
    const ops_device dev = ops_tensor_device(dst);
    return OPS_STUB_CALL(nn_gather_rows, dev, g->op, g, dst);
}

/* Allocates the tables (one block) and the result; the caller fills the tables and
 * runs the gather.  *block is freed by the caller. */
static ops_tensor *
nn_gather_alloc(nn_gather *g, int64_t **block)
{
    int64_t total = 0;
    bool overflow = false;
    for (int d = 0; d < g->ndim; d++)
        overflow |= ops_add_overflow_i64(total, g->sizes[d], &total);
    *block = overflow ? NULL : ops_host_malloc_array(total > 0 ? total : 1, sizeof(int64_t));
    if (*block == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory (index tables)", g->op);
    int64_t *p = *block;
    for (int d = 0; d < g->ndim; d++) {
        g->tbl[d] = p;
        p += g->sizes[d];
    }
    return ops_tensor_new(g->op, g->ndim, g->sizes, NULL, g->src->dtype, ops_tensor_device(g->src));
}

/* An identity table for output dim d (same size as the input's). */
static void
nn_identity(nn_gather *g, int d)
{
    for (int64_t i = 0; i < g->sizes[d]; i++)
        g->tbl[d][i] = i * g->src->strides[d];
}

/* ---- one_hot ------------------------------------------------------------------------ */

ops_tensor *
nn_one_hot(const ops_tensor *self, int64_t num_classes)
{
    const char *op = "one_hot";
    /* the declared dtypes (`dtypes:` with its message, which the generated glue gives
     * before the kernel runs; this guards a direct call) */
    if (!(OPS_DTYPE_MASK_ONE_HOT & OPS_DTYPE_BIT(self->dtype)))
        return ops_fail_null(OPS_ERR_DTYPE, "one_hot: one_hot is only applicable to index tensor of type "
                                            "LongTensor.");
    if (self->ndim + 1 > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_SHAPE, "one_hot: input has too many dimensions (%d)", (int)self->ndim);
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    const int nd = (int)self->ndim;
    const int64_t n = ops_tensor_numel(self);
    const ops_device dev = ops_tensor_device(self);
    if (n == 0) {
        if (num_classes <= 0)
            return ops_fail_null(OPS_ERR_VALUE, "one_hot: Can not infer total number of classes from empty tensor.");
        sizes[nd] = num_classes;
        return ops_tensor_new(op, nd + 1, sizes, NULL, OPS_INT64, dev);
    }
    ops_tensor *c = NULL, *r = NULL; /* c: self made contiguous, read by the loops */
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    if ((c = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT)) == NULL ||
        OPS_STUB_CALL(nn_one_hot_range, dev, op, c, &lo, &hi) != OPS_OK)
        goto done;
    if (lo < 0) {
        ops_fail(OPS_ERR_VALUE, "one_hot: Class values must be non-negative.");
        goto done;
    }
    if (num_classes == -1) {
        if (ops_add_overflow_i64(hi, 1, &num_classes)) {
            ops_fail(OPS_ERR_VALUE, "one_hot: the largest class value %" PRId64 " leaves no count of classes", hi);
            goto done;
        }
    } else if (!(num_classes > hi)) {
        ops_fail(OPS_ERR_VALUE, "one_hot: Class values must be smaller than num_classes.");
        goto done;
    }
    sizes[nd] = num_classes;
    if ((r = ops_tensor_new(op, nd + 1, sizes, NULL, OPS_INT64, dev)) == NULL)
        goto done;
    if (OPS_STUB_CALL(nn_one_hot_fill, dev, op, c, num_classes, r) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
done:
    ops_tensor_release(c);
    return r;
}

/* ---- pad ---------------------------------------------------------------------------- */

typedef enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR } pad_mode;

static const char *const pad_mode_names[] = {"constant", "reflect", "replicate", "circular"};

/* The "input (D: 1, H: 2, W: 3)" part of the too-small messages, for the last k dims. */
static void
pad_dims_str(char *buf, size_t n, int k, const int64_t *v)
{
    static const char *const names[3] = {"D", "H", "W"};
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < k && len < n; i++) {
        const int w = snprintf(buf + len, n - len, "%s%s: %lld", i ? ", " : "", names[3 - k + i], (long long)v[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* PyTorch's checks for the reflection/replication/circular pads of the last k dims. */
static ops_status
pad_check_nonconstant(const ops_tensor *self, const int64_t *pad, int k, pad_mode mode, const int64_t *outsz)
{
    const int nd = (int)self->ndim;
    char shp[OPS_SHAPE_STR_LEN];
    ops_shape_str(nd, self->sizes, shp, sizeof shp);
    const char *kind = mode == PAD_REFLECT ? "reflection_pad" : "replication_pad";
    if (mode == PAD_CIRCULAR) {
        for (int i = 0; i < k; i++) {
            const int64_t size = self->sizes[nd - 1 - i], l = pad[2 * i], r = pad[2 * i + 1];
            if (!(l <= size && r <= size))
                return ops_fail(OPS_ERR_VALUE, "pad: Padding value causes wrapping around more than once.");
            int64_t padded;
            if (ops_add_overflow_i64(size, l, &padded) || ops_add_overflow_i64(padded, r, &padded) || padded < 0)
                return ops_fail(OPS_ERR_VALUE, "pad: Negative padding value is resulting in an empty dimension");
            /* Negative pads crop first and the wrap copies the cropped dim: a positive pad
             * longer than what is left would copy it more than once (PyTorch passes only the
             * check above there and then copies from memory it never wrote). */
            const int64_t kept = size - (l < 0 ? -l : 0) - (r < 0 ? -r : 0);
            if (l > kept || r > kept)
                return ops_fail(OPS_ERR_VALUE,
                                "pad: Padding value causes wrapping around more than once: padding (%lld, %lld) "
                                "of dimension %d leaves %lld elements to wrap",
                                (long long)l, (long long)r, nd - 1 - i, (long long)kept);
        }
        return OPS_OK;
    }
    if (self->dtype == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE, "pad: \"%s%dd\" not implemented for 'Bool'", kind, k);
    /* check_valid_input: (k+1)-D, or (k+2)-D with a possibly empty batch; no other empty dim */
    const bool batch = nd == k + 2;
    bool ok = true;
    for (int d = batch ? 1 : 0; d < nd; d++)
        ok = ok && self->sizes[d] != 0;
    if (!ok)
        return ops_fail(OPS_ERR_SHAPE,
                        "pad: Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero "
                        "dimensions for input, but got: %s",
                        k + 1, k + 2, shp);
    if (mode == PAD_REFLECT && k == 3) {
        /* reflection_pad3d checks the six pads at once, naming the W dim */
        bool bad = false;
        for (int i = 0; i < k; i++)
            bad = bad || !(pad[2 * i] < self->sizes[nd - 1 - i] && pad[2 * i + 1] < self->sizes[nd - 1 - i]);
        if (bad)
            return ops_fail(OPS_ERR_VALUE,
                            "pad: Argument #8: Padding size should be less than the corresponding input dimension, "
                            "but got: padding (%lld, %lld, %lld, %lld, %lld, %lld) at dimension %d of input %s",
                            (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3],
                            (long long)pad[4], (long long)pad[5], nd - 1, shp);
    } else if (mode == PAD_REFLECT) {
        static const int argno[2] = {4, 6};
        for (int i = 0; i < k; i++) {
            const int64_t size = self->sizes[nd - 1 - i], l = pad[2 * i], r = pad[2 * i + 1];
            if (!(l < size && r < size))
                return ops_fail(OPS_ERR_VALUE,
                                "pad: Argument #%d: Padding size should be less than the corresponding input "
                                "dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                                argno[i], (long long)l, (long long)r, nd - 1 - i, shp);
        }
    }
    bool small = false;
    for (int i = 0; i < k; i++)
        small = small || outsz[nd - 1 - i] < 1;
    if (small) {
        char a[96], b[96];
        int64_t in[3], out[3];
        for (int i = 0; i < k; i++) {
            in[i] = self->sizes[nd - k + i];
            out[i] = outsz[nd - k + i];
        }
        pad_dims_str(a, sizeof a, k, in);
        pad_dims_str(b, sizeof b, k, out);
        return ops_fail(OPS_ERR_VALUE, "pad: input (%s) is too small. Calculated output %s", a, b);
    }
    return OPS_OK;
}

ops_tensor *
nn_pad(const ops_tensor *self, ops_int_list pad, const char *mode, const double *value)
{
    pad_mode m;
    if (mode == NULL || strcmp(mode, "constant") == 0)
        m = PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0)
        m = PAD_REFLECT;
    else if (strcmp(mode, "replicate") == 0)
        m = PAD_REPLICATE;
    else if (strcmp(mode, "circular") == 0)
        m = PAD_CIRCULAR;
    else
        return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED, "pad: Unrecognised padding mode %s", mode);
    const int nd = (int)self->ndim;
    if (pad.len % 2 != 0)
        return ops_fail_null(OPS_ERR_VALUE, "pad: Padding length must be divisible by 2");
    if (pad.len > 2 * (int64_t)nd)
        return ops_fail_null(OPS_ERR_VALUE,
                             "pad: Padding length should be less than or equal to two times the input dimension but "
                             "got padding length %lld and input of dimension %d",
                             (long long)pad.len, nd);
    const int k = (int)(pad.len / 2); /* padded dims: the last k, pad[0:2] is the last dim's */
    nn_gather g = {.op = "pad", .src = self, .ndim = nd};
    memcpy(g.sizes, self->sizes, (size_t)nd * sizeof(int64_t));
    for (int i = 0; i < k; i++) {
        const int d = nd - 1 - i;
        if (ops_add_overflow_i64(self->sizes[d], pad.data[2 * i], &g.sizes[d]) ||
            ops_add_overflow_i64(g.sizes[d], pad.data[2 * i + 1], &g.sizes[d]))
            return ops_fail_null(OPS_ERR_VALUE,
                                 "pad: the input size %" PRId64 " plus padding %" PRId64 " and %" PRId64
                                 " does not fit int64",
                                 self->sizes[d], pad.data[2 * i], pad.data[2 * i + 1]);
    }
    if (m == PAD_CONSTANT) {
        for (int i = 0; i < k; i++) {
            const int d = nd - 1 - i;
            if (g.sizes[d] < 0)
                return ops_fail_null(OPS_ERR_VALUE,
                                     "pad: The input size %lld, plus negative padding %lld and %lld resulted in a "
                                     "negative output size, which is invalid. Check dimension %d of your input.",
                                     (long long)self->sizes[d], (long long)pad.data[2 * i],
                                     (long long)pad.data[2 * i + 1], d);
        }
    } else {
        if (value != NULL && *value != 0)
            return ops_fail_null(OPS_ERR_VALUE, "pad: Padding mode \"%s\" doesn't take in value argument",
                                 pad_mode_names[m]);
        if (!((k == 1 && (nd == 2 || nd == 3)) || (k == 2 && (nd == 3 || nd == 4)) ||
              (k == 3 && (nd == 4 || nd == 5))))
            return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED,
                                 "pad: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
        if (pad_check_nonconstant(self, pad.data, k, m, g.sizes) != OPS_OK)
            return NULL;
    }
    ops_scalar_store(OPS_SCALAR_FLOAT(value != NULL ? *value : 0.0), self->dtype, g.fill);
    int64_t *block = NULL;
    ops_tensor *r = nn_gather_alloc(&g, &block);
    if (r == NULL)
        goto done;
    for (int d = 0; d < nd - k; d++)
        nn_identity(&g, d);
    for (int i = 0; i < k; i++) {
        const int d = nd - 1 - i;
        const int64_t size = self->sizes[d], l = pad.data[2 * i], st = self->strides[d];
        for (int64_t j = 0; j < g.sizes[d]; j++) {
            int64_t s = j - l; /* the input index before the mode's mapping */
            switch (m) {
            case PAD_CONSTANT:
                g.tbl[d][j] = s >= 0 && s < size ? s * st : NN_FILL;
                continue;
            case PAD_REFLECT: /* PyTorch's ReflectionPad::index, shifted by the crop */
                s = s < 0 ? -s : s;
                s = s >= size ? 2 * (size - 1) - s : s;
                break;
            case PAD_REPLICATE:
                s = s < 0 ? 0 : s >= size ? size - 1 : s;
                break;
            case PAD_CIRCULAR: { /* wrap within the part a negative pad leaves (PyTorch's rule) */
                const int64_t lo = l < 0 ? -l : 0, rp = pad.data[2 * i + 1];
                const int64_t kept = size - lo - (rp < 0 ? -rp : 0); /* > 0 when g.sizes[d] > 0 */
                s = lo + (((s - lo) % kept) + kept) % kept;
                break;
            }
            }
            g.tbl[d][j] = s * st;
        }
    }
    if (nn_gather_run(&g, r) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
done:
    ops_host_free(block);
    return r;
}

/* ---- upsample ----------------------------------------------------------------------- */

/* upsample_{1,2}d_common_check and the metas' non-empty check (UpSample.h), for an
 * input (N, C, [H,] W) with k = 1 or 2 spatial dims. */
static ops_status
upsample_check(const char *op, const ops_tensor *self, ops_int_list output_size, int k)
{
    if (output_size.len != k)
        return ops_fail(OPS_ERR_VALUE, "%s: It is expected output_size equals to %d, but got size %lld", op, k,
                        (long long)output_size.len);
    if (self->ndim != k + 2)
        return ops_fail(OPS_ERR_SHAPE, "%s: It is expected input_size equals to %d, but got size %d", op, k + 2,
                        (int)self->ndim);
    bool ok = true;
    for (int i = 0; i < k; i++)
        ok = ok && self->sizes[2 + i] > 0 && output_size.data[i] > 0;
    if (!ok && k == 1)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: Input and output sizes should be greater than 0, but got input (W: %lld) and output (W: "
                        "%lld)",
                        op, (long long)self->sizes[2], (long long)output_size.data[0]);
    if (!ok)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: Input and output sizes should be greater than 0, but got input (H: %lld, W: %lld) output "
                        "(H: %lld, W: %lld)",
                        op, (long long)self->sizes[2], (long long)self->sizes[3], (long long)output_size.data[0],
                        (long long)output_size.data[1]);
    if (ops_tensor_numel(self) == 0 && self->sizes[1] == 0) {
        char shp[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_SHAPE, "%s: Non-empty %dD data tensor expected but got a tensor with sizes %s", op,
                        k + 2, ops_shape_str(k + 2, self->sizes, shp, sizeof shp));
    }
    return OPS_OK;
}

/* The entries' `check:`: the sizes, which PyTorch checks before the dtype (the glue
 * refuses an undeclared dtype after them); the drivers run upsample_check again as a
 * guard for a direct call. */
ops_status
ops_check_upsample_nearest1d(const ops_tensor *self, ops_int_list output_size, const double *scales)
{
    (void)scales;
    return upsample_check("upsample_nearest1d", self, output_size, 1);
}

ops_status
ops_check_upsample_nearest2d(const ops_tensor *self, ops_int_list output_size, const double *scales_h,
                             const double *scales_w)
{
    (void)scales_h, (void)scales_w;
    return upsample_check("upsample_nearest2d", self, output_size, 2);
}

ops_status
ops_check_upsample_linear1d(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                            const double *scales)
{
    (void)align_corners, (void)scales;
    return upsample_check("upsample_linear1d", self, output_size, 1);
}

ops_status
ops_check_upsample_bilinear2d(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                              const double *scales_h, const double *scales_w)
{
    (void)align_corners, (void)scales_h, (void)scales_w;
    return upsample_check("upsample_bilinear2d", self, output_size, 2);
}

/* (the out= forms check their out= after the computation, in ops_write_out) */
ops_status
ops_check_upsample_nearest1d_out(const ops_tensor *self, ops_int_list output_size, const double *scales,
                                 ops_tensor *out)
{
    (void)out;
    return ops_check_upsample_nearest1d(self, output_size, scales);
}

ops_status
ops_check_upsample_nearest2d_out(const ops_tensor *self, ops_int_list output_size, const double *scales_h,
                                 const double *scales_w, ops_tensor *out)
{
    (void)out;
    return ops_check_upsample_nearest2d(self, output_size, scales_h, scales_w);
}

ops_status
ops_check_upsample_linear1d_out(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                                const double *scales, ops_tensor *out)
{
    (void)out;
    return ops_check_upsample_linear1d(self, output_size, align_corners, scales);
}

ops_status
ops_check_upsample_bilinear2d_out(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                                  const double *scales_h, const double *scales_w, ops_tensor *out)
{
    (void)out;
    return ops_check_upsample_bilinear2d(self, output_size, align_corners, scales_h, scales_w);
}

/* PyTorch's nearest_idx: exact for equal and doubled sizes, else floor(dst * scale) in
 * float, scale = 1 / scales when given and positive, else input / output. */
static int64_t
nearest_idx(int64_t j, int64_t in, int64_t out, const double *scales)
{
    if (out == in)
        return j;
    if (out == 2 * in)
        return j >> 1;
    const float scale = scales != NULL && *scales > 0 ? (float)(1.0 / *scales) : (float)in / (float)out;
    /* Clamp before the conversion: a denormal scales makes scale inf, and inf or NaN
     * (0 * inf) converted to int64 is undefined (INT64_MIN on x86: an index far out). */
    const float f = floorf((float)j * scale);
    return f < (float)(in - 1) ? (int64_t)f : in - 1;
}

/* upsample_nearest{1,2}d: a gather; scales[i] is the i-th spatial dim's (may be NULL).
 * declared: the entry's dtypes (`dtypes:`, OPS_DTYPE_MASK_<ENTRY>), checked after the
 * sizes. */
static ops_tensor *
upsample_nearest_impl(const char *op, unsigned declared, const ops_tensor *self, ops_int_list output_size, int k,
                      const double *const *scales)
{
    if (upsample_check(op, self, output_size, k) != OPS_OK)
        return NULL;
    if (!(declared & OPS_DTYPE_BIT(self->dtype))) {
        ops_fail_dtype(op, self->dtype, declared);
        return NULL;
    }
    nn_gather g = {.op = op, .src = self, .ndim = k + 2, .sizes = {self->sizes[0], self->sizes[1]}};
    for (int i = 0; i < k; i++)
        g.sizes[2 + i] = output_size.data[i];
    int64_t *block = NULL;
    ops_tensor *r = nn_gather_alloc(&g, &block);
    if (r != NULL) {
        nn_identity(&g, 0);
        nn_identity(&g, 1);
        for (int i = 0; i < k; i++)
            for (int64_t j = 0; j < g.sizes[2 + i]; j++)
                g.tbl[2 + i][j] =
                    nearest_idx(j, self->sizes[2 + i], g.sizes[2 + i], scales[i]) * self->strides[2 + i];
        if (nn_gather_run(&g, r) != OPS_OK) {
            ops_tensor_release(r);
            r = NULL;
        }
    }
    ops_host_free(block);
    return r;
}

ops_tensor *
nn_upsample_nearest1d(const ops_tensor *self, ops_int_list output_size, const double *scales)
{
    const double *sc[1] = {scales};
    return upsample_nearest_impl("upsample_nearest1d", OPS_DTYPE_MASK_UPSAMPLE_NEAREST1D, self, output_size, 1, sc);
}

ops_status
nn_upsample_nearest1d_out(const ops_tensor *self, ops_int_list output_size, const double *scales, ops_tensor *out)
{
    const double *sc[1] = {scales};
    return ops_write_out(
        "upsample_nearest1d",
        upsample_nearest_impl("upsample_nearest1d", OPS_DTYPE_MASK_UPSAMPLE_NEAREST1D_OUT, self, output_size, 1, sc),
        out);
}

ops_tensor *
nn_upsample_nearest2d(const ops_tensor *self, ops_int_list output_size, const double *scales_h,
                      const double *scales_w)
{
    const double *sc[2] = {scales_h, scales_w};
    return upsample_nearest_impl("upsample_nearest2d", OPS_DTYPE_MASK_UPSAMPLE_NEAREST2D, self, output_size, 2, sc);
}

ops_status
nn_upsample_nearest2d_out(const ops_tensor *self, ops_int_list output_size, const double *scales_h,
                          const double *scales_w, ops_tensor *out)
{
    const double *sc[2] = {scales_h, scales_w};
    return ops_write_out(
        "upsample_nearest2d",
        upsample_nearest_impl("upsample_nearest2d", OPS_DTYPE_MASK_UPSAMPLE_NEAREST2D_OUT, self, output_size, 2, sc),
        out);
}

/* Source indices and weights of one output dim, for float (T = float) or double
 * opmath: compute_source_index_and_lambda of UpSample.h. */
#define NN_LINEAR_TABLE_(NAME, T, FLOOR)                                                           \
    static void NAME(int64_t in, int64_t out, bool align_corners, const double *scales, int64_t *i0, \
                     int64_t *i1, T *l0, T *l1)                                                    \
    {                                                                                              \
        T scale;                                                                                   \
        if (align_corners)                                                                         \
            scale = out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0;                                   \
        else                                                                                       \
            scale = scales != NULL && *scales > 0 ? (T)(1.0 / *scales) : (T)in / (T)out;           \
        for (int64_t j = 0; j < out; j++) {                                                        \
            if (out == in) {                                                                       \
                i0[j] = i1[j] = j;                                                                 \
                l0[j] = 1;                                                                         \
                l1[j] = 0;                                                                         \
                continue;                                                                          \
            }                                                                                      \
            T src;                                                                                 \
            if (align_corners) {                                                                   \
                src = scale * (T)j;                                                                \
            } else {                                                                               \
                src = scale * ((T)j + (T)0.5) - (T)0.5;                                            \
                src = src < (T)0 ? (T)0 : src;                                                     \
            }                                                                                      \
            /* clamped before the conversion: an inf scale (scales 1e-310) gives inf here */      \
            src = src <= (T)(in - 1) ? src : (T)(in - 1);                                          \
            int64_t a = (int64_t)FLOOR(src);                                                       \
            a = a < in - 1 ? a : in - 1;                                                           \
            T lam = src - (T)a;                                                                    \
            lam = lam < (T)0 ? (T)0 : lam > (T)1 ? (T)1 : lam;                                     \
            i0[j] = a;                                                                             \
            i1[j] = a + (a < in - 1 ? 1 : 0);                                                      \
            l1[j] = lam;                                                                           \
            l0[j] = (T)1 - lam;                                                                    \
        }                                                                                          \
    }

NN_LINEAR_TABLE_(linear_table_f32, float, floorf)
NN_LINEAR_TABLE_(linear_table_f64, double, floor)


/* upsample_linear1d (k = 1) and upsample_bilinear2d (k = 2), the floating dtypes (the
 * entry's declared ones, `declared`). */
static ops_tensor *
upsample_linear_impl(const char *op, unsigned declared, const ops_tensor *self, ops_int_list output_size, int k,
                     bool align_corners, const double *scales_h, const double *scales_w)
{
    if (upsample_check(op, self, output_size, k) != OPS_OK)
        return NULL;
    if (!(declared & OPS_DTYPE_BIT(self->dtype))) {
        ops_fail_dtype(op, self->dtype, declared);
        return NULL;
    }
    const int64_t nb = self->sizes[0], nc = self->sizes[1];
    const int64_t ih = k == 2 ? self->sizes[2] : 1, iw = self->sizes[k + 1];
    const int64_t oh = k == 2 ? output_size.data[0] : 1, ow = output_size.data[k - 1];
    const int64_t sizes[4] = {nb, nc, k == 2 ? oh : ow, ow};
    int64_t nt; /* entries of the tables: 2 * (oh + ow), from the caller's output_size */
    const bool overflow = ops_add_overflow_i64(oh, ow, &nt) || ops_mul_overflow_i64(nt, 2, &nt);
    int64_t *ibuf = overflow ? NULL : ops_host_malloc_array(nt, sizeof(int64_t));
    double *wbuf = overflow ? NULL : ops_host_malloc_array(nt, sizeof(double));
    ops_tensor *r = NULL;
    if (ibuf == NULL || wbuf == NULL) {
        ops_fail(OPS_ERR_OOM, "%s: out of memory (index tables)", op);
        goto done;
    }
    if ((r = ops_tensor_new(op, k + 2, sizes, NULL, self->dtype, ops_tensor_device(self))) == NULL)
        goto done;
    if (self->dtype == OPS_FLOAT64) {
        linear_table_f64(ih, oh, align_corners, scales_h, ibuf, ibuf + oh, wbuf, wbuf + oh);
        linear_table_f64(iw, ow, align_corners, scales_w, ibuf + 2 * oh, ibuf + 2 * oh + ow, wbuf + 2 * oh,
                         wbuf + 2 * oh + ow);
    } else {
        float *wf = (float *)wbuf;
        linear_table_f32(ih, oh, align_corners, scales_h, ibuf, ibuf + oh, wf, wf + oh);
        linear_table_f32(iw, ow, align_corners, scales_w, ibuf + 2 * oh, ibuf + 2 * oh + ow, wf + 2 * oh,
                         wf + 2 * oh + ow);
    }
    const ops_device dev = ops_tensor_device(self);
    if (nb * nc * oh * ow > 0 &&
        OPS_STUB_CALL(nn_upsample_linear_planes, dev, op, k, self, oh, ow, ibuf, wbuf, r) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
done:
    ops_host_free(ibuf);
    ops_host_free(wbuf);
    return r;
}

ops_tensor *
nn_upsample_linear1d(const ops_tensor *self, ops_int_list output_size, bool align_corners, const double *scales)
{
    return upsample_linear_impl("upsample_linear1d", OPS_DTYPE_MASK_UPSAMPLE_LINEAR1D, self, output_size, 1,
                                align_corners, NULL, scales);
}

ops_status
nn_upsample_linear1d_out(const ops_tensor *self, ops_int_list output_size, bool align_corners, const double *scales,
                         ops_tensor *out)
{
    return ops_write_out("upsample_linear1d",
                         upsample_linear_impl("upsample_linear1d", OPS_DTYPE_MASK_UPSAMPLE_LINEAR1D_OUT, self,
                                              output_size, 1, align_corners, NULL, scales),
                         out);
}

ops_tensor *
nn_upsample_bilinear2d(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                       const double *scales_h, const double *scales_w)
{
    return upsample_linear_impl("upsample_bilinear2d", OPS_DTYPE_MASK_UPSAMPLE_BILINEAR2D, self, output_size, 2,
                                align_corners, scales_h, scales_w);
}

ops_status
nn_upsample_bilinear2d_out(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                           const double *scales_h, const double *scales_w, ops_tensor *out)
{
    return ops_write_out(
        "upsample_bilinear2d",
        upsample_linear_impl("upsample_bilinear2d", OPS_DTYPE_MASK_UPSAMPLE_BILINEAR2D_OUT, self, output_size, 2,
                             align_corners, scales_h, scales_w),
        out);
}

/* ---- pixel_shuffle, pixel_unshuffle ------------------------------------------------- */

/* self (*, C, H, W) seen as the 5 trailing dims of the shuffle (a strided view: the
 * split of one dim into three, and of two dims into four, are stride arithmetic),
 * copied contiguous and viewed with the result's sizes. */
static ops_tensor *
pixel_shuffle_impl(const char *op, const ops_tensor *self, int64_t f, bool up)
{
    const int nd = (int)self->ndim;
    const char *what = up ? "upscale_factor" : "downscale_factor";
    if (nd < 3)
        return ops_fail_null(OPS_ERR_SHAPE,
                             "%s: %s expects input to have at least 3 dimensions, but got input with %d dimension(s)",
                             op, op, nd);
    if (f <= 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: %s expects a positive %s, but got %lld", op, op, what, (long long)f);
    const int64_t c = self->sizes[nd - 3], h = self->sizes[nd - 2], w = self->sizes[nd - 1];
    const int64_t sc = self->strides[nd - 3], sh = self->strides[nd - 2], sw = self->strides[nd - 1];
    /* f * f, the result's sizes and the view's strides below must all fit int64 */
    int64_t ff, scratch;
    bool big = ops_mul_overflow_i64(f, f, &ff);
    if (up)
        big = big || ops_mul_overflow_i64(h, f, &scratch) || ops_mul_overflow_i64(w, f, &scratch) ||
              ops_mul_overflow_i64(sc, ff, &scratch);
    else
        big = big || ops_mul_overflow_i64(c, ff, &scratch) || ops_mul_overflow_i64(sh, f, &scratch) ||
              ops_mul_overflow_i64(sw, f, &scratch);
    if (big) {
        char b1[OPS_SHAPE_STR_LEN];
        return ops_fail_null(OPS_ERR_VALUE, "%s: %s %lld is too large for an input of sizes %s: the result's "
                             "sizes or strides would not fit in int64", op, what, (long long)f,
                             ops_shape_str(nd, self->sizes, b1, sizeof b1));
    }
    if (up && c % ff != 0)
        return ops_fail_null(OPS_ERR_SHAPE,
                             "%s: pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                             "of upscale_factor, but input.size(-3)=%lld is not divisible by %lld",
                             op, (long long)c, (long long)ff);
    if (!up && h % f != 0)
        return ops_fail_null(OPS_ERR_SHAPE,
                             "%s: pixel_unshuffle expects height to be divisible by downscale_factor, but "
                             "input.size(-2)=%lld is not divisible by %lld",
                             op, (long long)h, (long long)f);
    if (!up && w % f != 0)
        return ops_fail_null(OPS_ERR_SHAPE,
                             "%s: pixel_unshuffle expects width to be divisible by downscale_factor, but "
                             "input.size(-1)=%lld is not divisible by %lld",
                             op, (long long)w, (long long)f);
    if (nd + 3 > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_SHAPE, "%s: input has too many dimensions (%d)", op, nd);
    const int lead = nd - 3;
    int64_t vs[OPS_MAX_DIMS], vst[OPS_MAX_DIMS], rs[OPS_MAX_DIMS];
    memcpy(vs, self->sizes, (size_t)lead * sizeof(int64_t));
    memcpy(vst, self->strides, (size_t)lead * sizeof(int64_t));
    memcpy(rs, self->sizes, (size_t)lead * sizeof(int64_t));
    int64_t *v = vs + lead, *t = vst + lead;
    if (up) {
        /* (C', r, r, H, W) -> (C', H, r, W, r) */
        const int64_t oc = c / ff;
        v[0] = oc, t[0] = sc * ff;
        v[1] = h, t[1] = sh;
        v[2] = f, t[2] = sc * f;
        v[3] = w, t[3] = sw;
        v[4] = f, t[4] = sc;
        rs[lead] = oc, rs[lead + 1] = h * f, rs[lead + 2] = w * f;
    } else {
        /* (C, H', r, W', r) -> (C, r, r, H', W') */
        const int64_t oh = h / f, ow = w / f;
        v[0] = c, t[0] = sc;
        v[1] = f, t[1] = sh;
        v[2] = f, t[2] = sw;
        v[3] = oh, t[3] = sh * f;
        v[4] = ow, t[4] = sw * f;
        rs[lead] = c * ff, rs[lead + 1] = oh, rs[lead + 2] = ow;
    }
    /* copied into a fresh row-major tensor of the view's shape, then viewed with the
     * result's sizes (a view of that fresh tensor, never of self) */
    ops_tensor v5 = ops_borrowed_view(self, nd + 2, vs, vst, self->offset);
    ops_tensor *tmp = ops_tensor_new(op, nd + 2, vs, NULL, self->dtype, ops_tensor_device(self));
    if (tmp == NULL)
        return NULL;
    ops_tensor *r = NULL;
    if (ops_copy_values(op, tmp, &v5) == OPS_OK)
        r = ops_view(tmp, (ops_int_list){rs, nd});
    ops_tensor_release(tmp);
    return r;
}

ops_tensor *
nn_pixel_shuffle(const ops_tensor *self, int64_t upscale_factor)
{
    return pixel_shuffle_impl("pixel_shuffle", self, upscale_factor, true);
}

ops_status
nn_pixel_shuffle_out(const ops_tensor *self, int64_t upscale_factor, ops_tensor *out)
{
    return ops_write_out("pixel_shuffle", pixel_shuffle_impl("pixel_shuffle", self, upscale_factor, true), out);
}

ops_tensor *
nn_pixel_unshuffle(const ops_tensor *self, int64_t downscale_factor)
{
    return pixel_shuffle_impl("pixel_unshuffle", self, downscale_factor, false);
}

ops_status
nn_pixel_unshuffle_out(const ops_tensor *self, int64_t downscale_factor, ops_tensor *out)
{
    return ops_write_out("pixel_unshuffle",
                         pixel_shuffle_impl("pixel_unshuffle", self, downscale_factor, false), out);
}

/* ---- glu and prelu: binary iterator kernels ----------------------------------------- */

typedef enum { NN_GLU, NN_PRELU } nn_binary_kind;

/* Runs a (x, y) -> result kernel over a and b through the binary iterator:
 * functional (out NULL, result in *result) or out=. */
static ops_status
nn_binary(const char *op, nn_binary_kind kind, const ops_tensor *a, const ops_tensor *b, ops_tensor *out,
          ops_tensor **result)
{
    ops_iter it;
    ops_meta_args ma = {.op = op, .mode = out != NULL ? OPS_ITER_OUT : OPS_ITER_FUNCTIONAL, .out = out,
                        .ntensors = 2, .tensors = {a, b}, .names = {"self", "other"}};
    ops_status st = ops_meta_binary(&it, &ma);
    if (st != OPS_OK)
        goto done;
    const ops_device dev = ops_tensor_device(a);
    if ((st = OPS_STUB_CALL(nn_binary_loop, dev, op, &it, kind == NN_GLU)) != OPS_OK)
        goto done;
    if ((st = ops_iter_finish(&it)) == OPS_OK && result != NULL)
        *result = ops_iter_take_result(&it);
done:
    ops_iter_release(&it);
    return st;
}

/* The dtype check before the iterator is built: a's dtype among the entry's declared
 * ones (`dtypes:`, OPS_DTYPE_MASK_<ENTRY>: floating, what the loops accept). */
static ops_status
nn_binary_checked(const char *op, unsigned declared, nn_binary_kind kind, const ops_tensor *a, const ops_tensor *b,
                  ops_tensor *out, ops_tensor **result)
{
    if (!(declared & OPS_DTYPE_BIT(a->dtype)))
        return ops_fail_dtype(op, a->dtype, declared);
    return nn_binary(op, kind, a, b, out, result);
}

/* glu's and glu.out's `check:`: the geometry, which PyTorch checks before the dtype (the
 * glue refuses an undeclared dtype after it). */
ops_status
ops_check_glu(const ops_tensor *self, int64_t dim)
{
    if (self->ndim == 0)
        return ops_fail(OPS_ERR_SHAPE, "glu: glu does not support scalars because halving size must be even");
    if (!ops_wrap_dim("glu", "dim", &dim, self->ndim))
        return ops_last_status();
    const int64_t n = self->sizes[dim];
    if (n % 2 != 0)
        return ops_fail(OPS_ERR_SHAPE, "glu: Halving dimension must be even, but dimension %lld is size %lld",
                        (long long)dim, (long long)n);
    return OPS_OK;
}

ops_status
ops_check_glu_out(const ops_tensor *self, int64_t dim, ops_tensor *out)
{
    (void)out;
    return ops_check_glu(self, dim);
}

static ops_status
glu_impl(unsigned declared, const ops_tensor *self, int64_t dim, ops_tensor *out, ops_tensor **result)
{
    const ops_status cst = ops_check_glu(self, dim); /* the glue ran it; this guards a direct call */
    if (cst != OPS_OK)
        return cst;
    ops_wrap_dim("glu", "dim", &dim, self->ndim);
    const int64_t n = self->sizes[dim];
    int64_t sz[OPS_MAX_DIMS];
    memcpy(sz, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    sz[dim] = n / 2;
    ops_tensor *a = ops_tensor_new_view(self, (int)self->ndim, sz, self->strides, self->offset);
    ops_tensor *b = ops_tensor_new_view(self, (int)self->ndim, sz, self->strides,
                                        self->offset + (n / 2) * self->strides[dim]);
    ops_status st =
        a != NULL && b != NULL ? nn_binary_checked("glu", declared, NN_GLU, a, b, out, result) : ops_last_status();
    ops_tensor_release(a);
    ops_tensor_release(b);
    return st;
}

ops_tensor *
nn_glu(const ops_tensor *self, int64_t dim)
{
    ops_tensor *r = NULL;
    glu_impl(OPS_DTYPE_MASK_GLU, self, dim, NULL, &r);
    return r;
}

ops_status
nn_glu_out(const ops_tensor *self, int64_t dim, ops_tensor *out)
{
    return glu_impl(OPS_DTYPE_MASK_GLU_OUT, self, dim, out, NULL);
}

/* prelu's `check:`: weight's dtype and geometry, which PyTorch checks before the dtype
 * (the glue refuses an undeclared dtype after it). */
ops_status
ops_check_prelu(const ops_tensor *self, const ops_tensor *weight)
{
    if (self->dtype != weight->dtype)
        return ops_fail(OPS_ERR_DTYPE, "prelu: Type promoting not supported. Got %s and %s",
                        ops_dtype_name(self->dtype), ops_dtype_name(weight->dtype));
    const int nd = (int)self->ndim;
    const int64_t wn = ops_tensor_numel(weight);
    if (wn != 1) {
        if (nd == 0)
            return ops_fail(OPS_ERR_SHAPE, "prelu: Not allow zero-dim input tensor.");
        const int64_t channels = nd > 1 ? self->sizes[1] : 1;
        if (channels != wn)
            return ops_fail(OPS_ERR_SHAPE,
                            "prelu: Mismatch of parameter numbers and input channel size. Found parameter "
                            "numbers = %lld and channel size = %lld.",
                            (long long)wn, (long long)channels);
    }
    if (weight->ndim > 1)
        return ops_fail(OPS_ERR_SHAPE, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = %d",
                        (int)weight->ndim);
    return OPS_OK;
}

ops_tensor *
nn_prelu(const ops_tensor *self, const ops_tensor *weight)
{
    if (ops_check_prelu(self, weight) != OPS_OK) /* the glue ran it; this guards a direct call */
        return NULL;
    const int nd = (int)self->ndim;
    const int64_t wn = ops_tensor_numel(weight);
    /* weight as a (1, C, 1, ...) view over self's dims (a view: weight has <= 1 dim) */
    int64_t sz[OPS_MAX_DIMS], st[OPS_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        sz[d] = 1;
        st[d] = 0;
    }
    if (nd > 1) {
        sz[1] = wn;
        st[1] = weight->ndim == 1 ? weight->strides[0] : 0;
    }
    ops_tensor *w = ops_tensor_new_view(weight, nd, sz, st, weight->offset);
    if (w == NULL)
        return NULL;
    ops_tensor *r = NULL;
    nn_binary_checked("prelu", OPS_DTYPE_MASK_PRELU, NN_PRELU, self, w, NULL, &r);
    ops_tensor_release(w);
    return r;
}

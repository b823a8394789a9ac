/* Memory formats (PyTorch's torch.memory_format): the strides a new tensor gets for
 * contiguous_format, channels_last (NHWC order of a 4-d NCHW tensor) and
 * channels_last_3d (NDHWC of a 5-d NCDHW one), preserve_format's rule for copying an
 * input's layout, and is_contiguous(memory_format=) / suggest_memory_format().
 *
 * libops tensors are plain strided views, so a format is only ever a choice of strides:
 * nothing is stored beside them, and every op reads such tensors as any strided input. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

static const char *const format_names[OPS_NUM_MEMORY_FORMATS] = {
    [OPS_PRESERVE_FORMAT] = "preserve_format",
    [OPS_CONTIGUOUS_FORMAT] = "contiguous_format",
    [OPS_CHANNELS_LAST] = "channels_last",
    [OPS_CHANNELS_LAST_3D] = "channels_last_3d",
};

const char *
ops_memory_format_name(ops_memory_format f)
{
    if ((int)f < 0 || f >= OPS_NUM_MEMORY_FORMATS)
        return "?";
    return format_names[f];
}

ops_memory_format
ops_memory_format_from_name(const char *name)
{
    if (name != NULL)
        for (int f = 0; f < OPS_NUM_MEMORY_FORMATS; f++)
            if (strcmp(name, format_names[f]) == 0)
                return (ops_memory_format)f;
    return OPS_MEMORY_FORMAT_NONE;
}

/* The dims of a channels-last tensor from innermost to outermost: C, then the spatial
 * dims from the last, then N.  Returns the rank the format needs (4 or 5), 0 for a
 * format without a fixed order. */
static int
channels_last_order(ops_memory_format f, int *order)
{
    static const int order_2d[4] = {1, 3, 2, 0};
    static const int order_3d[5] = {1, 4, 3, 2, 0};
    if (f == OPS_CHANNELS_LAST) {
        memcpy(order, order_2d, sizeof order_2d);
        return 4;
    }
    if (f == OPS_CHANNELS_LAST_3D) {
        memcpy(order, order_3d, sizeof order_3d);
        return 5;
    }
    return 0;
}

ops_status
ops_memory_format_strides(const char *op, int ndim, const int64_t *sizes, ops_memory_format f, int64_t *strides)
{
    if ((int)f < OPS_MEMORY_FORMAT_NONE || f >= OPS_NUM_MEMORY_FORMATS)
        return ops_fail(OPS_ERR_VALUE, "%s: invalid memory_format (%d)", op, (int)f);
    if (f == OPS_CONTIGUOUS_FORMAT || f == OPS_MEMORY_FORMAT_NONE) {
        /* row-major; a 0 or 1 size multiplies by 1, as ops_tensor_new's strides */
        int64_t s = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            strides[i] = s;
            s *= sizes[i] > 1 ? sizes[i] : 1;
        }
        return OPS_OK;
    }
    int order[5];
    const int need = channels_last_order(f, order);
    if (need == 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported memory format %s (it copies an input's layout, and there is none here; "
                        "name contiguous_format, channels_last or channels_last_3d)",
                        op, ops_memory_format_name(f));
    if (ndim != need)
        return ops_fail(OPS_ERR_VALUE, "%s: required rank %d tensor to use %s format (memory_format=%s, got a %d-d %s)",
                        op, need, ops_memory_format_name(f), ops_memory_format_name(f), ndim,
                        ndim == 0 ? "scalar" : "tensor");
    /* PyTorch's channels-last strides are the plain products of the inner sizes (a 0 size
     * makes the outer strides 0), unlike its contiguous ones */
    int64_t s = 1;
    for (int i = 0; i < need; i++) {
        strides[order[i]] = s;
        s *= sizes[order[i]];
    }
    return OPS_OK;
}

/* Strides for a new dense tensor of self's sizes laid out in self's memory order
 * (PyTorch's preserve_format): self's own strides when self is dense and does not
 * overlap itself, else dense strides with the dims ordered by self's strides
 * (insertion sort from the innermost; stride-0 dims keep their place). */
static void
like_strides(const ops_tensor *self, int64_t *strides)
{
    const int nd = self->ndim;
    int perm[OPS_MAX_DIMS]; /* perm[0] is the innermost dim */
    for (int i = 0; i < nd; i++)
        perm[i] = nd - 1 - i;
    for (int i = 1; i < nd; i++) {
        for (int j = i; j > 0; j--) {
            const int a = perm[j - 1], b = perm[j]; /* a is inner to b */
            const int64_t sa = llabs(self->strides[a]), sb = llabs(self->strides[b]);
            if (sa == 0 || sb == 0)
                break;
            /* Swap when a is the outer one in memory; equal strides: smaller size inside. */
            if (sa > sb || (sa == sb && self->sizes[a] > self->sizes[b])) {
                perm[j - 1] = b;
                perm[j] = a;
            } else {
                break;
            }
        }
    }
    bool same = true;
    int64_t expect = 1;
    for (int i = 0; i < nd; i++) {
        const int d = perm[i];
        strides[d] = expect;
        if (self->sizes[d] != 1 && self->strides[d] != expect)
            same = false;
        expect *= self->sizes[d] > 1 ? self->sizes[d] : 1;
    }
    if (same) /* dense and non-overlapping: keep even the strides of size-1 dims */
        for (int i = 0; i < nd; i++)
            strides[i] = self->strides[i];
}

ops_status
ops_memory_format_strides_like(const char *op, const ops_tensor *like, ops_memory_format f, int64_t *strides)
{
    if ((int)f < OPS_MEMORY_FORMAT_NONE || f >= OPS_NUM_MEMORY_FORMATS)
        return ops_fail(OPS_ERR_VALUE, "%s: invalid memory_format (%d)", op, (int)f);
    if (f == OPS_PRESERVE_FORMAT || f == OPS_MEMORY_FORMAT_NONE) {
        like_strides(like, strides);
        return OPS_OK;
    }
    return ops_memory_format_strides(op, like->ndim, like->sizes, f, strides);
}

ops_tensor *
ops_tensor_new_like_format(const char *op, const ops_tensor *like, ops_dtype dtype, ops_device device,
                           ops_memory_format f)
{
    int64_t strides[OPS_MAX_DIMS];
    if (ops_memory_format_strides_like(op, like, f, strides) != OPS_OK)
        return NULL;
    return ops_tensor_new(op, like->ndim, like->sizes, strides, dtype, device);
}

bool
ops_tensor_is_contiguous_as(const ops_tensor *t, ops_memory_format f)
{
    int order[5];
    const int need = channels_last_order(f, order);
    if (need == 0)
        return ops_tensor_is_contiguous(t);
    if (t->ndim != need)
        return false;
    /* as PyTorch: size-1 dims may have any stride, and no exception for 0 elements */
    int64_t expect = 1;
    for (int i = 0; i < need; i++) {
        const int d = order[i];
        if (t->sizes[d] == 1)
            continue;
        if (t->strides[d] != expect)
            return false;
        expect *= t->sizes[d];
    }
    return true;
}

/* Whether t's strides order its dims as f's channels-last order does, in PyTorch's sense
 * (c10's is_channels_last_strides_*): strides non-decreasing along the order (a size-1 dim
 * counts as its stride, larger dims as stride times size), no 0 size, C's stride not 0,
 * and N not tied with C (an N111 tensor or a column of one reads as contiguous). */
static bool
strides_like(const ops_tensor *t, ops_memory_format f)
{
    int order[5];
    const int need = channels_last_order(f, order);
    if (need == 0 || t->ndim != need || t->strides[1] == 0)
        return false;
    int64_t min = 0;
    for (int i = 0; i < need; i++) {
        const int d = order[i];
        if (t->sizes[d] == 0 || t->strides[d] < min)
            return false;
        if (d == 0 && min == t->strides[1])
            return false;
        min = t->strides[d];
        if (t->sizes[d] > 1)
            min *= t->sizes[d];
    }
    return true;
}

ops_memory_format
ops_tensor_suggest_memory_format(const ops_tensor *t)
{
    if (strides_like(t, OPS_CHANNELS_LAST))
        return OPS_CHANNELS_LAST;
    if (strides_like(t, OPS_CHANNELS_LAST_3D))
        return OPS_CHANNELS_LAST_3D;
    return OPS_CONTIGUOUS_FORMAT;
}

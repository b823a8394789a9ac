/* Zero-copy views: the CompositeExplicitAutograd kernels behind ops_view,
 * ops_reshape, ops_permute, ... (the generated public functions call X_impl).
 *
 * Each returns a new tensor header over self's storage (a new reference), or NULL
 * with the error set.  Geometry rules and messages follow PyTorch's, so a reader
 * who knows torch.Tensor.view knows these. */
#include <inttypes.h>
#include <string.h>

#include "ops_internal.h"

/* With the generator's headers, reshape copies through the generated (dispatched,
 * differentiable) ops_contiguous, and the kernels are checked against their
 * generated prototypes.  Without them the runtime still builds and copies itself. */
#if __has_include("ops_functions.h") && __has_include("ops_kernels.h")
#include "ops_kernels_core.h"
#include "ops_op_contiguous.h"
#define OPS_HAVE_GENERATED_OPS 1
#endif

/* ---- helpers ------------------------------------------------------------------ */

/* Every view goes through ops_tensor_new_view_op, which refuses a geometry whose
 * element count or extent does not fit int64 (naming op). */
static ops_tensor *
make_view(const char *op, const ops_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides,
          int64_t offset)
{
    return ops_tensor_new_view_op(op, self, ndim, sizes, strides, offset);
}

static ops_tensor *
alias(const char *op, const ops_tensor *self)
{
    return make_view(op, self, self->ndim, self->sizes, self->strides, self->offset);
}

static bool
check_list(const char *op, const char *arg, ops_int_list l, int64_t max_len)
{
    if (l.len < 0 || (l.len > 0 && l.data == NULL)) {
        ops_fail(OPS_ERR_VALUE, "%s: argument '%s' is not a valid int list", op, arg);
        return false;
    }
    if (l.len > max_len) {
        ops_fail(OPS_ERR_VALUE,
                 "%s: argument '%s' has %" PRId64 " entries, more than the %" PRId64
                 " dimensions a tensor may have",
                 op, arg, l.len, max_len);
        return false;
    }
    return true;
}

static const char *
list_str(ops_int_list l, char *buf, size_t n)
{
    return ops_shape_str((int)l.len, l.data, buf, n);
}

/* PyTorch's infer_size: fill out from shape, resolving one -1 against numel. */
static bool
infer_size(const char *op, ops_int_list shape, int64_t numel, int64_t *out)
{
    char buf[OPS_SHAPE_STR_LEN];
    int64_t newsize = 1;
    int64_t infer = -1;
    bool overflow = false;
    for (int64_t i = 0; i < shape.len; i++) {
        const int64_t s = shape.data[i];
        if (s == -1) {
            if (infer >= 0) {
                ops_fail(OPS_ERR_VALUE, "%s: only one dimension can be inferred", op);
                return false;
            }
            infer = i;
            out[i] = -1;
        } else if (s >= 0) {
            overflow |= ops_mul_overflow_i64(newsize, s, &newsize);
            out[i] = s;
        } else {
            {
                ops_fail(OPS_ERR_VALUE, "%s: invalid shape dimension %" PRId64, op, s);
                return false;
            }
        }
    }
    if (!overflow && (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0))) {
        if (infer >= 0) {
            if (newsize == 0) {
                ops_fail(OPS_ERR_SHAPE,
                         "%s: cannot reshape tensor of 0 elements into shape %s because the "
                         "unspecified dimension size -1 can be any value and is ambiguous",
                         op, list_str(shape, buf, sizeof buf));
                return false;
            }
            out[infer] = numel / newsize;
        }
        return true;
    }
    {
        ops_fail(OPS_ERR_SHAPE, "%s: shape '%s' is invalid for input of size %" PRId64, op,
                 list_str(shape, buf, sizeof buf), numel);
        return false;
    }
}

/* PyTorch's computeStride: strides that let the new shape view the old geometry,
 * or false when some new dim would span two non-contiguous chunks of the old. */
static bool
compute_stride(int old_nd, const int64_t *old_sizes, const int64_t *old_strides, int new_nd,
               const int64_t *new_sizes, int64_t *new_strides)
{
    if (old_nd == 0) {
        for (int i = 0; i < new_nd; i++)
            new_strides[i] = 1;
        return true;
    }
    const int64_t numel = ops_shape_numel(old_nd, old_sizes);
    if (numel == 0) {
        bool same = old_nd == new_nd && memcmp(old_sizes, new_sizes, (size_t)new_nd * sizeof(int64_t)) == 0;
        if (same) {
            memcpy(new_strides, old_strides, (size_t)new_nd * sizeof(int64_t));
        } else {
            /* Any strides describe no elements; use the ones resize would give. */
            for (int d = new_nd - 1; d >= 0; d--)
                new_strides[d] =
                    d == new_nd - 1 ? 1 : (new_sizes[d + 1] > 1 ? new_sizes[d + 1] : 1) * new_strides[d + 1];
        }
        return true;
    }
    int view_d = new_nd - 1;
    int64_t chunk_base_stride = old_strides[old_nd - 1];
    int64_t tensor_numel = 1;
    int64_t view_numel = 1;
    for (int tensor_d = old_nd - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= old_sizes[tensor_d];
        /* At the end of a chunk of dims laid out contiguously among themselves,
         * the view's dims must cover exactly that chunk. */
        if (tensor_d == 0 ||
            (old_sizes[tensor_d - 1] != 1 && old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
                /* A stride past every addressable offset cannot be written: no view. */
                if (ops_mul_overflow_i64(view_numel, chunk_base_stride, &new_strides[view_d]) ||
                    ops_mul_overflow_i64(view_numel, new_sizes[view_d], &view_numel))
                    return false;
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (tensor_d > 0) {
                chunk_base_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* A contiguous copy of a CPU tensor, element by element in row-major order.  Only
 * used by reshape when the generated ops are not in the build. */
#ifndef OPS_HAVE_GENERATED_OPS
static ops_tensor *
contiguous_copy(const char *op, const ops_tensor *self)
{
    if (self->storage->device.type != OPS_CPU)
        return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED,
                             "%s: copying a tensor off the cpu needs the generated clone", op);
    ops_tensor *out = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device);
    if (out == NULL)
        return NULL;
    const int64_t numel = ops_tensor_numel(self);
    const size_t item = ops_dtype_itemsize(self->dtype);
    const char *src = ops_tensor_data_ptr(self);
    char *dst = ops_tensor_data_ptr(out);
    int64_t idx[OPS_MAX_DIMS] = {0};
    for (int64_t k = 0; k < numel; k++) {
        int64_t off = 0;
        for (int d = 0; d < self->ndim; d++)
            off += idx[d] * self->strides[d];
        memcpy(dst + (size_t)k * item, src + off * (int64_t)item, item);
        for (int d = self->ndim - 1; d >= 0; d--) {
            if (++idx[d] < self->sizes[d])
                break;
            idx[d] = 0;
        }
    }
    return out;
}
#endif

/* ---- view, reshape ---------------------------------------------------------- */

ops_tensor *
view_impl(const ops_tensor *self, ops_int_list size)
{
    const char *op = "view";
    int64_t shape[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    if (!check_list(op, "size", size, OPS_MAX_DIMS) || !infer_size(op, size, ops_tensor_numel(self), shape))
        return NULL;
    if (!compute_stride(self->ndim, self->sizes, self->strides, (int)size.len, shape, strides))
        return ops_fail_null(
            OPS_ERR_SHAPE,
            "view: view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    return make_view(op, self, (int)size.len, shape, strides, self->offset);
}

static ops_tensor *
reshape_common(const char *op, const ops_tensor *self, ops_int_list shape_arg)
{
    int64_t shape[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    if (!check_list(op, "shape", shape_arg, OPS_MAX_DIMS) ||
        !infer_size(op, shape_arg, ops_tensor_numel(self), shape))
        return NULL;
    const int nd = (int)shape_arg.len;
    if (compute_stride(self->ndim, self->sizes, self->strides, nd, shape, strides))
        return make_view(op, self, nd, shape, strides, self->offset);
        /* No view can express it: copy into a contiguous tensor and view that.  Not
         * ops_clone: it keeps a dense input's memory order (PyTorch's preserve_format),
         * and a transposed copy would be no more viewable than the input. */
#ifdef OPS_HAVE_GENERATED_OPS
    ops_tensor *copy = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT);
#else
    ops_tensor *copy = contiguous_copy(op, self);
#endif
    if (copy == NULL)
        return NULL;
    ops_tensor *out = NULL;
    if (compute_stride(copy->ndim, copy->sizes, copy->strides, nd, shape, strides))
        out = make_view(op, copy, nd, shape, strides, copy->offset);
    else
        ops_fail(OPS_ERR_RUNTIME, "%s: contiguous returned a tensor that cannot be viewed as the new shape",
                 op);
    ops_tensor_release(copy);
    return out;
}

ops_tensor *
reshape_impl(const ops_tensor *self, ops_int_list shape)
{
    return reshape_common("reshape", self, shape);
}

/* ---- permutations ------------------------------------------------------------ */

ops_tensor *
permute_impl(const ops_tensor *self, ops_int_list dims)
{
    const char *op = "permute";
    if (!check_list(op, "dims", dims, OPS_MAX_DIMS))
        return NULL;
    if (dims.len != self->ndim)
        return ops_fail_null(
            OPS_ERR_SHAPE,
            "permute: number of dimensions in the tensor input does not match the length of the "
            "desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %" PRId64,
            self->ndim, dims.len);
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    bool seen[OPS_MAX_DIMS] = {false};
    for (int i = 0; i < self->ndim; i++) {
        int64_t d = dims.data[i];
        if (!ops_wrap_dim(op, "dims", &d, self->ndim))
            return NULL;
        if (seen[d])
            return ops_fail_null(
                OPS_ERR_VALUE,
                "permute: duplicate dims are not allowed (dim %" PRId64 " appears twice in the ordering)", d);
        seen[d] = true;
        sizes[i] = self->sizes[d];
        strides[i] = self->strides[d];
    }
    return make_view(op, self, self->ndim, sizes, strides, self->offset);
}

ops_tensor *
transpose_impl(const ops_tensor *self, int64_t dim0, int64_t dim1)
{
    const char *op = "transpose";
    if (!ops_wrap_dim(op, "dim0", &dim0, self->ndim) || !ops_wrap_dim(op, "dim1", &dim1, self->ndim))
        return NULL;
    if (self->ndim == 0)
        return alias(op, self);
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    memcpy(strides, self->strides, (size_t)self->ndim * sizeof(int64_t));
    sizes[dim0] = self->sizes[dim1];
    sizes[dim1] = self->sizes[dim0];
    strides[dim0] = self->strides[dim1];
    strides[dim1] = self->strides[dim0];
    return make_view(op, self, self->ndim, sizes, strides, self->offset);
}

ops_tensor *
t_impl(const ops_tensor *self)
{
    const char *op = "t";
    if (self->ndim > 2)
        return ops_fail_null(OPS_ERR_SHAPE, "t: t() expects a tensor with <= 2 dimensions, but self is %dD",
                             self->ndim);
    if (self->ndim < 2)
        return alias(op, self);
    return transpose_impl(self, 0, 1);
}

/* ---- expand, broadcast_to ------------------------------------------------------ */

static ops_tensor *
expand_common(const char *op, const ops_tensor *self, ops_int_list size)
{
    char tbuf[OPS_SHAPE_STR_LEN], sbuf[OPS_SHAPE_STR_LEN];
    if (!check_list(op, "size", size, OPS_MAX_DIMS))
        return NULL;
    const int n = (int)size.len;
    const int nd = self->ndim;
    if (n < nd)
        return ops_fail_null(
            OPS_ERR_SHAPE,
            "%s: the number of sizes provided (%d) must be greater or equal to the number of "
            "dimensions in the tensor (%d)",
            op, n, nd);
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    for (int i = n - 1; i >= 0; i--) {
        const int dim = nd - 1 - (n - 1 - i);
        int64_t sz = dim >= 0 ? self->sizes[dim] : 1;
        int64_t st = 1;
        if (dim >= 0)
            st = self->strides[dim];
        else if (i + 1 < n && ops_mul_overflow_i64(sizes[i + 1], strides[i + 1], &st))
            st = 0; /* a new leading dim's stride only matters once expanded, where it is 0 */
        int64_t target = size.data[i];
        if (target == -1) {
            if (dim < 0)
                return ops_fail_null(OPS_ERR_VALUE,
                                     "%s: The expanded size of the tensor (-1) isn't allowed in a leading, "
                                     "non-existing dimension %d",
                                     op, i);
            target = sz;
        } else if (target < 0) {
            return ops_fail_null(OPS_ERR_VALUE,
                                 "%s: The expanded size of the tensor (%" PRId64
                                 ") must be non-negative (or -1 to keep a size)",
                                 op, target);
        }
        if (sz != target) {
            if (sz != 1)
                return ops_fail_null(OPS_ERR_SHAPE,
                                     "%s: The expanded size of the tensor (%" PRId64
                                     ") must match the existing size (%" PRId64
                                     ") at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                                     op, target, sz, i, list_str(size, tbuf, sizeof tbuf),
                                     ops_shape_str(nd, self->sizes, sbuf, sizeof sbuf));
            sz = target;
            st = 0;
        }
        sizes[i] = sz;
        strides[i] = st;
    }
    return make_view(op, self, n, sizes, strides, self->offset);
}

ops_tensor *
expand_impl(const ops_tensor *self, ops_int_list size, bool implicit)
{
    (void)implicit; /* only autograd cares whether the expand was implicit */
    return expand_common("expand", self, size);
}

ops_tensor *
broadcast_to_impl(const ops_tensor *self, ops_int_list size)
{
    return expand_common("broadcast_to", self, size);
}

/* ---- slicing ------------------------------------------------------------------ */

static ops_tensor *
slice_common(const char *op, const ops_tensor *self, int64_t dim, const int64_t *start, const int64_t *end,
             int64_t step)
{
    if (self->ndim == 0)
        return ops_fail_null(OPS_ERR_INDEX, "%s: slice() cannot be applied to a 0-dim tensor.", op);
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return NULL;
    if (step <= 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: slice step must be positive, got %" PRId64, op, step);
    const int64_t n = self->sizes[dim];
    int64_t s = start ? *start : 0;
    int64_t e = end ? *end : INT64_MAX;
    /* Python's clamping: negative counts from the end, then clip to [0, n]. */
    if (s < 0)
        s += n;
    if (e < 0)
        e += n;
    if (s < 0)
        s = 0;
    else if (s >= n)
        s = n;
    if (e < s)
        e = s;
    else if (e >= n)
        e = n;
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    memcpy(strides, self->strides, (size_t)self->ndim * sizeof(int64_t));
    const int64_t len = e - s;
    sizes[dim] = len / step + (len % step != 0);
    /* A step past the end leaves one element, whose stride is never used: keep the old
     * one rather than a product that does not fit. */
    if (ops_mul_overflow_i64(self->strides[dim], step, &strides[dim]))
        strides[dim] = self->strides[dim];
    int64_t offset;
    if (ops_mul_overflow_i64(s, self->strides[dim], &offset) || ops_add_overflow_i64(offset, self->offset, &offset))
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: the start %" PRId64 " at stride %" PRId64 " is beyond what int64 can address", op,
                             s, self->strides[dim]);
    return make_view(op, self, self->ndim, sizes, strides, offset);
}

ops_tensor *
slice_impl(const ops_tensor *self, int64_t dim, const int64_t *start, const int64_t *end, int64_t step)
{
    return slice_common("slice", self, dim, start, end, step);
}

ops_tensor *
select_impl(const ops_tensor *self, int64_t dim, int64_t index)
{
    const char *op = "select";
    char buf[OPS_SHAPE_STR_LEN];
    if (self->ndim == 0)
        return ops_fail_null(OPS_ERR_INDEX, "select: select() cannot be applied to a 0-dim tensor.");
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return NULL;
    const int64_t n = self->sizes[dim];
    if (index < -n || index >= n)
        return ops_fail_null(OPS_ERR_INDEX,
                             "select: index %" PRId64
                             " out of range for tensor of size %s at dimension %" PRId64,
                             index, ops_shape_str(self->ndim, self->sizes, buf, sizeof buf), dim);
    if (index < 0)
        index += n;
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (i == dim)
            continue;
        sizes[k] = self->sizes[i];
        strides[k] = self->strides[i];
        k++;
    }
    return make_view(op, self, k, sizes, strides, self->offset + index * self->strides[dim]);
}

ops_tensor *
narrow_impl(const ops_tensor *self, int64_t dim, int64_t start, int64_t length)
{
    const char *op = "narrow";
    if (self->ndim == 0)
        return ops_fail_null(OPS_ERR_INDEX, "narrow: narrow() cannot be applied to a 0-dim tensor.");
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return NULL;
    if (length < 0)
        return ops_fail_null(OPS_ERR_VALUE, "narrow: narrow(): length must be non-negative, got %" PRId64,
                             length);
    const int64_t n = self->sizes[dim];
    if (start < -n || start > n)
        return ops_fail_null(OPS_ERR_INDEX,
                             "narrow: start out of range (expected to be in range of [%" PRId64 ", %" PRId64
                             "], but got %" PRId64 ")",
                             -n, n, start);
    if (start < 0)
        start += n;
    if (start > n - length)
        return ops_fail_null(OPS_ERR_VALUE,
                             "narrow: start (%" PRId64 ") + length (%" PRId64
                             ") exceeds dimension size (%" PRId64 ").",
                             start, length, n);
    const int64_t end = start + length;
    return slice_common(op, self, dim, &start, &end, 1);
}

/* The value of a 0-dim integer tensor used as an index argument (narrow's start,
 * tensor_split's sections), read on the host; what PyTorch's narrow.Tensor accepts. */
static bool
index_from_tensor(const char *op, const char *arg, const ops_tensor *t, int64_t *out)
{
    if (t->ndim != 0 || !ops_dtype_is_integral(t->dtype, false)) {
        char buf[OPS_SHAPE_STR_LEN];
        ops_fail(OPS_ERR_VALUE, "%s: %s must be an 0-dim integral Tensor, but got a %s tensor of shape %s", op, arg,
                 ops_dtype_name(t->dtype), ops_shape_str(t->ndim, t->sizes, buf, sizeof buf));
        return false;
    }
    ops_scalar v;
    if (ops_tensor_item(t, &v) != OPS_OK)
        return false;
    *out = v.v.i;
    return true;
}

ops_tensor *
narrow_tensor_impl(const ops_tensor *self, int64_t dim, const ops_tensor *start, int64_t length)
{
    int64_t s;
    if (!index_from_tensor("narrow", "start", start, &s))
        return NULL;
    return narrow_impl(self, dim, s, length);
}

/* ---- squeeze, unsqueeze ------------------------------------------------------- */

/* Drops the flagged dims whose size is 1. */
static ops_tensor *
squeeze_flagged(const ops_tensor *self, const bool *flag)
{
    const char *op = "squeeze";
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (flag[i] && self->sizes[i] == 1)
            continue;
        sizes[k] = self->sizes[i];
        strides[k] = self->strides[i];
        k++;
    }
    return make_view(op, self, k, sizes, strides, self->offset);
}

ops_tensor *
squeeze_impl(const ops_tensor *self)
{
    bool flag[OPS_MAX_DIMS];
    for (int i = 0; i < OPS_MAX_DIMS; i++)
        flag[i] = true;
    return squeeze_flagged(self, flag);
}

ops_tensor *
squeeze_dim_impl(const ops_tensor *self, int64_t dim)
{
    bool flag[OPS_MAX_DIMS] = {false};
    if (!ops_wrap_dim("squeeze", "dim", &dim, self->ndim))
        return NULL;
    if (self->ndim > 0)
        flag[dim] = true;
    return squeeze_flagged(self, flag);
}

ops_tensor *
squeeze_dims_impl(const ops_tensor *self, ops_int_list dim)
{
    bool flag[OPS_MAX_DIMS] = {false};
    if (!check_list("squeeze", "dim", dim, OPS_MAX_DIMS))
        return NULL;
    bool seen0 = false; /* a 0-dim tensor accepts dim 0 (or -1) once */
    for (int64_t i = 0; i < dim.len; i++) {
        int64_t d = dim.data[i];
        if (!ops_wrap_dim("squeeze", "dim", &d, self->ndim))
            return NULL;
        bool *slot = self->ndim > 0 ? &flag[d] : &seen0;
        if (*slot)
            return ops_fail_null(OPS_ERR_VALUE,
                                 "squeeze: dim %" PRId64 " appears multiple times in the list of dims", d);
        *slot = true;
    }
    return squeeze_flagged(self, flag);
}

ops_tensor *
unsqueeze_impl(const ops_tensor *self, int64_t dim)
{
    const char *op = "unsqueeze";
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim + 1))
        return NULL;
    if (self->ndim + 1 > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "unsqueeze: tensors have at most %d dimensions", OPS_MAX_DIMS);
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i <= self->ndim; i++) {
        if (i == dim) {
            sizes[k] = 1;
            /* the stride of a size-1 dim is never used: any value that fits will do */
            if (dim >= self->ndim || ops_mul_overflow_i64(self->sizes[dim], self->strides[dim], &strides[k]))
                strides[k] = 1;
            k++;
        }
        if (i < self->ndim) {
            sizes[k] = self->sizes[i];
            strides[k] = self->strides[i];
            k++;
        }
    }
    return make_view(op, self, k, sizes, strides, self->offset);
}

/* ---- flatten, unflatten ---------------------------------------------------------- */

ops_tensor *
flatten_impl(const ops_tensor *self, int64_t start_dim, int64_t end_dim)
{
    const char *op = "flatten";
    if (!ops_wrap_dim(op, "start_dim", &start_dim, self->ndim) ||
        !ops_wrap_dim(op, "end_dim", &end_dim, self->ndim))
        return NULL;
    if (self->ndim == 0)
        return reshape_common(op, self, OPS_INTS(1));
    if (start_dim > end_dim)
        return ops_fail_null(OPS_ERR_VALUE,
                             "flatten: flatten() has invalid args: start_dim cannot come after end_dim");
    if (start_dim == end_dim)
        return alias(op, self);
    int64_t shape[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < start_dim; i++)
        shape[k++] = self->sizes[i];
    int64_t n = 1;
    for (int64_t i = start_dim; i <= end_dim; i++)
        n *= self->sizes[i];
    shape[k++] = n;
    for (int64_t i = end_dim + 1; i < self->ndim; i++)
        shape[k++] = self->sizes[i];
    return reshape_common(op, self, (ops_int_list){shape, k});
}

ops_tensor *
unflatten_impl(const ops_tensor *self, int64_t dim, ops_int_list sizes)
{
    const char *op = "unflatten";
    char buf[OPS_SHAPE_STR_LEN];
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim) || !check_list(op, "sizes", sizes, OPS_MAX_DIMS))
        return NULL;
    if (self->ndim == 0)
        return ops_fail_null(OPS_ERR_INDEX, "unflatten: cannot unflatten a 0-dim tensor");
    if (sizes.len == 0)
        return ops_fail_null(OPS_ERR_VALUE, "unflatten: sizes must be non-empty");
    if (self->ndim - 1 + sizes.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "unflatten: the result would have more than %d dimensions",
                             OPS_MAX_DIMS);
    const int64_t n = self->sizes[dim];
    int64_t split[OPS_MAX_DIMS];
    bool has_infer = false;
    for (int64_t i = 0; i < sizes.len; i++)
        has_infer |= sizes.data[i] == -1;
    if (has_infer) {
        if (!infer_size(op, sizes, n, split))
            return NULL;
    } else {
        int64_t prod = 1;
        bool overflow = false;
        for (int64_t i = 0; i < sizes.len; i++) {
            if (sizes.data[i] < 0)
                return ops_fail_null(OPS_ERR_VALUE, "unflatten: invalid shape dimension %" PRId64,
                                     sizes.data[i]);
            overflow |= ops_mul_overflow_i64(prod, sizes.data[i], &prod);
            split[i] = sizes.data[i];
        }
        if (overflow || prod != n)
            return ops_fail_null(OPS_ERR_SHAPE,
                                 "unflatten: Provided sizes %s don't multiply up to the size of dim %" PRId64
                                 " (%" PRId64 ") in the input tensor",
                                 list_str(sizes, buf, sizeof buf), dim, n);
    }
    int64_t shape[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < dim; i++)
        shape[k++] = self->sizes[i];
    for (int64_t i = 0; i < sizes.len; i++)
        shape[k++] = split[i];
    for (int64_t i = dim + 1; i < self->ndim; i++)
        shape[k++] = self->sizes[i];
    /* Splitting one dim never crosses a chunk, so this cannot fail; checked anyway. */
    if (!compute_stride(self->ndim, self->sizes, self->strides, k, shape, strides))
        return ops_fail_null(OPS_ERR_SHAPE, "unflatten: the new shape cannot view the input");
    return make_view(op, self, k, shape, strides, self->offset);
}

/* ---- diagonal, unfold, as_strided ------------------------------------------------- */

ops_tensor *
diagonal_impl(const ops_tensor *self, int64_t offset, int64_t dim1, int64_t dim2)
{
    const char *op = "diagonal";
    if (!ops_wrap_dim(op, "dim1", &dim1, self->ndim) || !ops_wrap_dim(op, "dim2", &dim2, self->ndim))
        return NULL;
    if (self->ndim < 2)
        return ops_fail_null(OPS_ERR_SHAPE, "diagonal: expected a tensor with at least 2 dimensions, got %dD",
                             self->ndim);
    if (dim1 == dim2)
        return ops_fail_null(OPS_ERR_VALUE,
                             "diagonal: diagonal dimensions cannot be identical %" PRId64 ", %" PRId64, dim1,
                             dim2);
    const int64_t n1 = self->sizes[dim1], n2 = self->sizes[dim2];
    int64_t diag;
    int64_t storage_offset = self->offset;
    if (offset >= 0)
        diag = n1 < n2 - offset ? n1 : n2 - offset;
    else
        diag = n1 + offset < n2 ? n1 + offset : n2;
    if (diag < 0)
        diag = 0;
    if (diag > 0) {
        if (offset >= 0)
            storage_offset += offset * self->strides[dim2];
        else
            storage_offset -= offset * self->strides[dim1];
    }
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (i == dim1 || i == dim2)
            continue;
        sizes[k] = self->sizes[i];
        strides[k] = self->strides[i];
        k++;
    }
    sizes[k] = diag;
    if (ops_add_overflow_i64(self->strides[dim1], self->strides[dim2], &strides[k]))
        strides[k] = 1; /* only possible when diag <= 1 (else the input's extent would overflow) */
    k++;
    return make_view(op, self, k, sizes, strides, storage_offset);
}

ops_tensor *
unfold_impl(const ops_tensor *self, int64_t dimension, int64_t size, int64_t step)
{
    const char *op = "unfold";
    if (!ops_wrap_dim(op, "dimension", &dimension, self->ndim))
        return NULL;
    if (self->ndim + 1 > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "unfold: tensors have at most %d dimensions", OPS_MAX_DIMS);
    const int64_t max_size = self->ndim == 0 ? 1 : self->sizes[dimension];
    if (size > max_size)
        return ops_fail_null(OPS_ERR_SHAPE,
                             "unfold: maximum size for tensor at dimension %" PRId64 " is %" PRId64
                             " but size is %" PRId64,
                             dimension, max_size, size);
    if (size < 0)
        return ops_fail_null(OPS_ERR_VALUE, "unfold: size is %" PRId64 " but must be >= 0", size);
    if (step <= 0)
        return ops_fail_null(OPS_ERR_VALUE, "unfold: step is %" PRId64 " but must be > 0", step);
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    memcpy(strides, self->strides, (size_t)self->ndim * sizeof(int64_t));
    sizes[self->ndim] = size;
    strides[self->ndim] = self->ndim == 0 ? 1 : self->strides[dimension];
    if (self->ndim > 0) {
        sizes[dimension] = (self->sizes[dimension] - size) / step + 1;
        /* a step past the end leaves one window, whose stride is never used */
        if (ops_mul_overflow_i64(step, self->strides[dimension], &strides[dimension]))
            strides[dimension] = self->strides[dimension];
    }
    return make_view(op, self, self->ndim + 1, sizes, strides, self->offset);
}

ops_tensor *
as_strided_impl(const ops_tensor *self, ops_int_list size, ops_int_list stride, const int64_t *storage_offset)
{
    const char *op = "as_strided";
    char sbuf[OPS_SHAPE_STR_LEN], tbuf[OPS_SHAPE_STR_LEN];
    if (!check_list(op, "size", size, OPS_MAX_DIMS) || !check_list(op, "stride", stride, OPS_MAX_DIMS))
        return NULL;
    if (size.len != stride.len)
        return ops_fail_null(OPS_ERR_VALUE,
                             "as_strided: mismatch in length of strides and shape (%" PRId64
                             " sizes, %" PRId64 " strides)",
                             size.len, stride.len);
    const int nd = (int)size.len;
    bool empty = false;
    for (int i = 0; i < nd; i++) {
        if (size.data[i] < 0)
            return ops_fail_null(
                OPS_ERR_VALUE, "as_strided: Trying to create tensor with negative dimension %" PRId64 ": %s",
                size.data[i], list_str(size, sbuf, sizeof sbuf));
        if (stride.data[i] < 0)
            return ops_fail_null(
                OPS_ERR_VALUE,
                "as_strided: Negative strides are not supported at the moment, got strides: %s",
                list_str(stride, tbuf, sizeof tbuf));
        empty |= size.data[i] == 0;
    }
    const int64_t off = storage_offset ? *storage_offset : self->offset;
    if (off < 0)
        return ops_fail_null(OPS_ERR_VALUE, "as_strided: Tensor: invalid storage offset %" PRId64, off);
    if (!empty) {
        /* Every addressed byte must lie in the storage (PyTorch's setStorage check). */
        const int64_t item = (int64_t)ops_dtype_itemsize(self->dtype);
        int64_t extent = 1, need = 0;
        bool overflow = false;
        for (int i = 0; i < nd; i++) {
            int64_t span;
            overflow |= ops_mul_overflow_i64(size.data[i] - 1, stride.data[i], &span);
            overflow |= ops_add_overflow_i64(extent, span, &extent);
        }
        overflow |= ops_add_overflow_i64(extent, off, &need);
        overflow |= ops_mul_overflow_i64(need, item, &need);
        if (overflow || (uint64_t)need > self->storage->nbytes)
            return ops_fail_null(OPS_ERR_VALUE,
                                 "as_strided: setStorage: sizes %s, strides %s, storage offset %" PRId64
                                 ", and itemsize %" PRId64 " requiring a storage size of %" PRId64
                                 " are out of bounds for storage of size %zu",
                                 list_str(size, sbuf, sizeof sbuf), list_str(stride, tbuf, sizeof tbuf), off,
                                 item, overflow ? INT64_MAX : need, self->storage->nbytes);
    }
    return make_view(op, self, nd, size.data, stride.data, off);
}

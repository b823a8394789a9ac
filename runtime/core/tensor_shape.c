/* What a tensor is read as: its accessors (sizes, strides, dtype, device, data,
 * version, contiguity), shape arithmetic (numel, contiguous strides, dim wrapping,
 * broadcasting) and the overlap checks that in-place ops and out= make. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"
#include "ops_tensor_impl.h"

/* ---- accessors ------------------------------------------------------------ */

int64_t
ops_tensor_ndim(const ops_tensor *t)
{
    return t->ndim;
}

int64_t
ops_tensor_size(const ops_tensor *t, int64_t dim)
{
    if (t == NULL) {
        ops_fail(OPS_ERR_VALUE, "size: expected a tensor, got NULL");
        return -1;
    }
    if (!ops_wrap_dim("size", "dim", &dim, t->ndim))
        return -1;
    if (t->ndim == 0) {
        ops_fail(OPS_ERR_INDEX, "size: Dimension specified as %" PRId64 " but tensor has no dimensions", dim);
        return -1;
    }
    return t->sizes[dim];
}

const int64_t *
ops_tensor_sizes(const ops_tensor *t)
{
    return t->sizes;
}

const int64_t *
ops_tensor_strides(const ops_tensor *t)
{
    return t->strides;
}

int64_t
ops_tensor_numel(const ops_tensor *t)
{
    return ops_shape_numel(t->ndim, t->sizes);
}

int64_t
ops_tensor_storage_offset(const ops_tensor *t)
{
    return t->offset;
}

ops_dtype
ops_tensor_dtype(const ops_tensor *t)
{
    return t->dtype;
}

ops_device
ops_tensor_device(const ops_tensor *t)
{
    return t->storage->device;
}

size_t
ops_tensor_itemsize(const ops_tensor *t)
{
    return ops_dtype_itemsize(t->dtype);
}

void *
ops_tensor_data_ptr(const ops_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)ops_dtype_itemsize(t->dtype);
}

uint64_t
ops_tensor_version(const ops_tensor *t)
{
    return __atomic_load_n(&t->storage->version, __ATOMIC_RELAXED);
}

bool
ops_tensor_is_contiguous(const ops_tensor *t)
{
    int64_t expected = 1;
    bool ok = true;
    for (int i = t->ndim - 1; i >= 0; i--) {
        const int64_t n = t->sizes[i];
        if (n == 0)
            return true; /* no elements: any strides describe the same (empty) layout */
        if (n != 1) {
            ok = ok && t->strides[i] == expected;
            expected *= n;
        }
    }
    return ok;
}

bool
ops_tensor_shares_storage(const ops_tensor *a, const ops_tensor *b)
{
    return a && b && a->storage == b->storage;
}

size_t
ops_tensor_storage_nbytes(const ops_tensor *t)
{
    return t->storage->nbytes;
}

/* ---- shapes --------------------------------------------------------------- */

int64_t
ops_shape_numel(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= sizes[i];
    return n;
}

void
ops_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        /* Size 0 and 1 dims still get the stride of a 1, as PyTorch gives them. */
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

bool
ops_wrap_dim(const char *op, const char *arg, int64_t *dim, int64_t ndim)
{
    const int64_t n = ndim > 0 ? ndim : 1; /* a 0-dim tensor accepts -1 and 0 */
    const int64_t d = *dim;
    if (d < -n || d > n - 1) {
        if (arg)
            ops_fail(OPS_ERR_INDEX,
                     "%s: Dimension out of range (expected to be in range of [%" PRId64 ", %" PRId64
                     "], but got %" PRId64 ") for argument '%s'",
                     ops_op_name(op), -n, n - 1, d, arg);
        else
            ops_fail(OPS_ERR_INDEX,
                     "%s: Dimension out of range (expected to be in range of [%" PRId64 ", %" PRId64
                     "], but got %" PRId64 ")",
                     ops_op_name(op), -n, n - 1, d);
        return false;
    }
    if (d < 0)
        *dim = d + n;
    return true;
}

ops_status
ops_broadcast_shapes(const char *op, const char *name_a, int nda, const int64_t *a, const char *name_b,
                     int ndb, const int64_t *b, int *nd_out, int64_t *out)
{
    const int nd = nda > ndb ? nda : ndb;
    int64_t res[OPS_MAX_DIMS];
    if (nd > OPS_MAX_DIMS)
        return ops_fail(OPS_ERR_SHAPE, "%s: tensors have at most %d dimensions, got %d", ops_op_name(op),
                        OPS_MAX_DIMS, nd);
    for (int i = nd - 1; i >= 0; i--) {
        const int offset = nd - 1 - i;
        const int ia = nda - 1 - offset;
        const int ib = ndb - 1 - offset;
        const int64_t sa = ia >= 0 ? a[ia] : 1;
        const int64_t sb = ib >= 0 ? b[ib] : 1;
        if (sa == sb || sb == 1) {
            res[i] = sa;
        } else if (sa == 1) {
            res[i] = sb;
        } else {
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: the size of %s (%" PRId64 ") must match the size of %s (%" PRId64
                            ") at non-singleton dimension %d",
                            ops_op_name(op), name_a ? name_a : "tensor a", sa, name_b ? name_b : "tensor b", sb,
                            i);
        }
    }
    int64_t numel;
    if (ops_numel_overflow(nd, res, &numel)) {
        char buf[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_VALUE, "%s: the broadcast shape %s has more elements than int64 can count",
                        ops_op_name(op), ops_shape_str(nd, res, buf, sizeof buf));
    }
    if (nd_out)
        *nd_out = nd;
    if (out && nd > 0)
        memcpy(out, res, (size_t)nd * sizeof(int64_t));
    return OPS_OK;
}

/* ---- overlap ---------------------------------------------------------------- */

/* [lo, hi) byte addresses t may touch; false for an empty tensor. */
static bool
byte_range(const ops_tensor *t, uintptr_t *lo, uintptr_t *hi)
{
    int64_t min_off = 0, max_off = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0)
            return false;
        const int64_t span = (t->sizes[i] - 1) * t->strides[i];
        if (span < 0)
            min_off += span;
        else
            max_off += span;
    }
    const int64_t item = (int64_t)ops_dtype_itemsize(t->dtype);
    const uintptr_t base = (uintptr_t)ops_tensor_data_ptr(t);
    *lo = base + (uintptr_t)(min_off * item);
    *hi = base + (uintptr_t)((max_off + 1) * item);
    return true;
}

bool
ops_tensor_may_overlap(const ops_tensor *a, const ops_tensor *b)
{
    uintptr_t alo, ahi, blo, bhi;
    if (a == NULL || b == NULL)
        return false;
    if (!byte_range(a, &alo, &ahi) || !byte_range(b, &blo, &bhi))
        return false;
    return alo < bhi && blo < ahi;
}

static int
cmp_int64(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int
cmp_dim_stride(const void *x, const void *y)
{
    const int64_t *a = x, *b = y; /* {|stride|, size} pairs */
    return (a[0] > b[0]) - (a[0] < b[0]);
}

bool
ops_tensor_has_internal_overlap(const ops_tensor *t)
{
    int64_t dims[OPS_MAX_DIMS][2];
    int n = 0;
    int64_t numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0)
            return false;
        if (t->sizes[i] == 1)
            continue;
        if (t->strides[i] == 0)
            return true;
        dims[n][0] = t->strides[i] < 0 ? -t->strides[i] : t->strides[i];
        dims[n][1] = t->sizes[i];
        numel *= t->sizes[i];
        n++;
    }
    /* Sufficient for no overlap: sorted by stride, each stride steps over the
     * whole extent of the smaller dims (true of every non-overlapping view that
     * PyTorch-style ops make). */
    qsort(dims, (size_t)n, sizeof dims[0], cmp_dim_stride);
    int64_t extent = 0;
    bool disjoint = true;
    for (int i = 0; i < n; i++) {
        if (dims[i][0] <= extent) {
            disjoint = false;
            break;
        }
        extent += dims[i][0] * (dims[i][1] - 1);
    }
    if (disjoint)
        return false;
    /* Otherwise decide exactly by listing the offsets, when that is cheap; beyond
     * that, report no overlap (as PyTorch does for layouts too hard to decide). */
    enum { MAX_EXACT = 1 << 16 };
    if (numel > MAX_EXACT)
        return false;
    int64_t *offs = ops_host_malloc_array(numel, sizeof(int64_t));
    if (offs == NULL)
        return false;
    int64_t idx[OPS_MAX_DIMS] = {0};
    for (int64_t k = 0; k < numel; k++) {
        int64_t off = 0;
        for (int i = 0; i < n; i++)
            off += idx[i] * dims[i][0];
        offs[k] = off;
        for (int i = 0; i < n; i++) {
            if (++idx[i] < dims[i][1])
                break;
            idx[i] = 0;
        }
    }
    qsort(offs, (size_t)numel, sizeof(int64_t), cmp_int64);
    bool dup = false;
    for (int64_t k = 1; k < numel && !dup; k++)
        dup = offs[k] == offs[k - 1];
    ops_host_free(offs);
    return dup;
}

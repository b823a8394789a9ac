/* Shape ops: cat, stack, hstack, vstack, flip, roll, tril, triu, repeat, one driver
 * for every device (the schema's `CPU, CUDA: shape_*`), and the compositions tile,
 * movedim and rot90.
 *
 * These ops move elements without computing on them, so they are dtype-independent:
 * every copy goes through ops_copy_values() (runtime/dispatch/iter.c), which walks any
 * strides and converts dtypes (cat and stack promote their inputs, as PyTorch's) on
 * either device.  Two steps are the device's own, reached through the stubs of
 * kernels/shape.h: copying the pieces of a cat or stack (CUDA copies every input of
 * the result's dtype in one launch) and zeroing the triangle of tril/triu.
 * The pieces copied are views described by headers on the stack (stack_view): the
 * copy iterator neither retains nor releases its operands, so slicing a result into
 * pieces costs no allocation.
 *
 * out= forms compute the functional result first and then copy it into out (resized
 * when its shape differs, as PyTorch's resize_output), so a failure, an out that
 * aliases an input or an injected allocation failure leaves out untouched. */
#include <inttypes.h>
#include <string.h>

#include "kernels/shape.h"
#include "ops_dispatch.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_shape.h"
#include "ops_kernels_shape.h"

/* ---- helpers ------------------------------------------------------------------- */

/* t narrowed along dim to [start, start + len). */
static ops_tensor
narrow_view(const ops_tensor *t, int dim, int64_t start, int64_t len)
{
    ops_tensor v = ops_borrowed_view(t, t->ndim, t->sizes, t->strides, t->offset + start * t->strides[dim]);
    v.sizes[dim] = len;
    return v;
}

/* A new contiguous tensor holding t's values (t any layout). */
static ops_tensor *
contiguous_copy(const char *op, const ops_tensor *t, ops_dtype dtype)
{
    ops_tensor *r = ops_tensor_new(op, t->ndim, t->sizes, NULL, dtype, t->storage->device);
    if (r != NULL && ops_copy_values(op, r, t) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

static bool
wrap_dim(const char *op, int64_t *dim, int64_t ndim)
{
    return ops_wrap_dim(op, "dim", dim, ndim);
}

/* ---- cat, stack, hstack, vstack ------------------------------------------------- */

/* PyTorch skips 1-D empty tensors in cat's shape checks (the legacy "empty" tensor). */
static bool
legacy_empty(const ops_tensor *t)
{
    return t->ndim == 1 && t->sizes[0] == 0;
}

static ops_dtype
list_result_type(ops_tensor_list l)
{
    ops_dtype dt = l.data[0]->dtype;
    for (int64_t i = 1; i < l.len; i++)
        dt = ops_promote_types(dt, l.data[i]->dtype);
    return dt;
}

static ops_tensor *
cat_impl(const char *op, ops_tensor_list tensors, int64_t dim)
{
    if (tensors.len == 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected a non-empty list of Tensors", op);
    for (int64_t i = 0; i < tensors.len; i++)
        if (tensors.data[i]->ndim == 0)
            return ops_fail_null(OPS_ERR_SHAPE, "%s: zero-dimensional tensor (at position %" PRId64
                                 ") cannot be concatenated", op, i);
    const ops_dtype dtype = list_result_type(tensors);
    int64_t ref = -1;
    for (int64_t i = 0; i < tensors.len && ref < 0; i++)
        if (!legacy_empty(tensors.data[i]))
            ref = i;
    if (ref < 0) /* every input is a legacy empty tensor */
        return ops_tensor_new(op, 1, (int64_t[]){0}, NULL, dtype, tensors.data[0]->storage->device);
    const ops_tensor *r0 = tensors.data[ref];
    if (!wrap_dim(op, &dim, r0->ndim))
        return NULL;
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, r0->sizes, (size_t)r0->ndim * sizeof(int64_t));
    sizes[dim] = 0;
    for (int64_t i = 0; i < tensors.len; i++) {
        const ops_tensor *t = tensors.data[i];
        if (legacy_empty(t))
            continue;
        if (t->ndim != r0->ndim)
            return ops_fail_null(OPS_ERR_SHAPE, "%s: Tensors must have same number of dimensions: got %d and %d", op,
                                 (int)r0->ndim, (int)t->ndim);
        for (int d = 0; d < t->ndim; d++)
            if (d != dim && t->sizes[d] != r0->sizes[d])
                return ops_fail_null(OPS_ERR_SHAPE,
                                     "%s: Sizes of tensors must match except in dimension %" PRId64
                                     ". Expected size %" PRId64 " but got size %" PRId64
                                     " for tensor number %" PRId64 " in the list.",
                                     op, dim, r0->sizes[d], t->sizes[d], i);
        if (ops_add_overflow_i64(sizes[dim], t->sizes[dim], &sizes[dim]))
            return ops_fail_null(OPS_ERR_SHAPE, "%s: the concatenated size of dimension %" PRId64 " overflows", op,
                                 dim);
    }
    ops_tensor *out = ops_tensor_new(op, r0->ndim, sizes, NULL, dtype, r0->storage->device);
    if (out == NULL)
        return NULL;
    const ops_device dev = out->storage->device;
    if (OPS_STUB_CALL(shape_cat_pieces, dev, op, out, tensors.len, tensors.data, dim) != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

ops_status
shape_copy_pieces(const char *op, ops_tensor *out, int64_t n, const ops_tensor *const *pieces, int64_t dim,
                  bool skip_same_dtype)
{
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        const ops_tensor *t = pieces[i];
        if (legacy_empty(t))
            continue;
        ops_tensor piece = narrow_view(out, (int)dim, at, t->sizes[dim]);
        at += t->sizes[dim];
        if (skip_same_dtype && t->dtype == out->dtype)
            continue;
        const ops_status st = ops_copy_values(op, &piece, t);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

ops_tensor *
shape_cat(ops_tensor_list tensors, int64_t dim)
{
    return cat_impl("cat", tensors, dim);
}

/* out = stack(tensors, dim): the inputs seen with a size-1 dimension at dim are the
 * pieces of a cat along dim. */
static ops_status
stack_pieces(const char *op, ops_tensor *out, ops_tensor_list tensors, int64_t dim)
{
    ops_tensor *views = ops_host_malloc_array(tensors.len, sizeof *views);
    const ops_tensor **ptrs = ops_host_malloc_array(tensors.len, sizeof *ptrs);
    ops_status st;
    if (views == NULL || ptrs == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    } else {
        for (int64_t i = 0; i < tensors.len; i++) {
            const ops_tensor *t = tensors.data[i];
            int64_t sz[OPS_MAX_DIMS], strd[OPS_MAX_DIMS];
            for (int d = 0, k = 0; d <= t->ndim; d++) {
                sz[d] = d == dim ? 1 : t->sizes[k];
                strd[d] = d == dim ? 1 : t->strides[k];
                k += d != dim;
            }
            views[i] = ops_borrowed_view(t, t->ndim + 1, sz, strd, t->offset);
            ptrs[i] = &views[i];
        }
        const ops_device dev = out->storage->device;
        st = OPS_STUB_CALL(shape_cat_pieces, dev, op, out, tensors.len, ptrs, dim);
    }
    ops_host_free(views);
    ops_host_free(ptrs);
    return st;
}

static ops_tensor *
stack_impl(const char *op, ops_tensor_list tensors, int64_t dim)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (tensors.len == 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: stack expects a non-empty TensorList", op);
    const ops_tensor *t0 = tensors.data[0];
    if (t0->ndim + 1 > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_SHAPE, "%s: the result would have more than %d dimensions", op, OPS_MAX_DIMS);
    if (!wrap_dim(op, &dim, t0->ndim + 1))
        return NULL;
    for (int64_t i = 1; i < tensors.len; i++) {
        const ops_tensor *t = tensors.data[i];
        if (t->ndim != t0->ndim || memcmp(t->sizes, t0->sizes, (size_t)t0->ndim * sizeof(int64_t)) != 0)
            return ops_fail_null(OPS_ERR_SHAPE,
                                 "%s: stack expects each tensor to be equal size, but got %s at entry 0 and %s at "
                                 "entry %" PRId64,
                                 op, ops_shape_str(t0->ndim, t0->sizes, b1, sizeof b1),
                                 ops_shape_str(t->ndim, t->sizes, b2, sizeof b2), i);
    }
    int64_t sizes[OPS_MAX_DIMS];
    const int nd = t0->ndim + 1;
    for (int d = 0, k = 0; d < nd; d++)
        sizes[d] = d == dim ? tensors.len : t0->sizes[k++];
    ops_tensor *out = ops_tensor_new(op, nd, sizes, NULL, list_result_type(tensors), t0->storage->device);
    if (out == NULL)
        return NULL;
    if (stack_pieces(op, out, tensors, dim) != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

ops_tensor *
shape_stack(ops_tensor_list tensors, int64_t dim)
{
    return stack_impl("stack", tensors, dim);
}


/* hstack and vstack: cat of the inputs seen with at least min_nd dims (atleast_1d,
 * atleast_2d: a 0-dim tensor is [1] or [1, 1], a 1-D [n] becomes [1, n]). */
static ops_tensor *
hvstack_impl(const char *op, ops_tensor_list tensors, int min_nd, bool horizontal)
{
    if (tensors.len == 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: %s expects a non-empty TensorList", op, op);
    ops_tensor *views = ops_host_malloc_array(tensors.len, sizeof *views);
    const ops_tensor **ptrs = ops_host_malloc_array(tensors.len, sizeof *ptrs);
    ops_tensor *r = NULL;
    if (views == NULL || ptrs == NULL) {
        ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    for (int64_t i = 0; i < tensors.len; i++) {
        const ops_tensor *t = tensors.data[i];
        int64_t sz[OPS_MAX_DIMS], st[OPS_MAX_DIMS];
        int nd = t->ndim;
        memcpy(sz, t->sizes, (size_t)nd * sizeof(int64_t));
        memcpy(st, t->strides, (size_t)nd * sizeof(int64_t));
        if (nd < min_nd) {
            const int pad = min_nd - nd; /* leading size-1 dims */
            memmove(sz + pad, sz, (size_t)nd * sizeof(int64_t));
            memmove(st + pad, st, (size_t)nd * sizeof(int64_t));
            for (int d = 0; d < pad; d++) {
                sz[d] = 1;
                st[d] = 1;
            }
            nd = min_nd;
        }
        views[i] = ops_borrowed_view(t, nd, sz, st, t->offset);
        ptrs[i] = &views[i];
    }
    const int64_t dim = horizontal && views[0].ndim > 1 ? 1 : 0;
    r = cat_impl(op, (ops_tensor_list){ptrs, tensors.len}, dim);
done:
    ops_host_free(views);
    ops_host_free(ptrs);
    return r;
}

ops_tensor *
shape_hstack(ops_tensor_list tensors)
{
    return hvstack_impl("hstack", tensors, 1, true);
}


ops_tensor *
shape_vstack(ops_tensor_list tensors)
{
    return hvstack_impl("vstack", tensors, 2, false);
}


/* ---- flip, roll ------------------------------------------------------------------ */

/* Wraps every entry of dims into wrapped (and marks seen[]); duplicates are errors. */
static bool
wrap_dims(const char *op, ops_int_list dims, int64_t ndim, int64_t *wrapped, bool *seen)
{
    memset(seen, 0, OPS_MAX_DIMS * sizeof *seen);
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d = dims.data[i];
        if (!ops_wrap_dim(op, "dims", &d, ndim))
            return false;
        if (ndim > 0 && seen[d]) {
            ops_fail(OPS_ERR_VALUE, "%s: dim %" PRId64 " appears multiple times in the list of dims", op, d);
            return false;
        }
        seen[d] = true;
        wrapped[i] = d;
    }
    return true;
}

ops_tensor *
shape_flip(const ops_tensor *self, ops_int_list dims)
{
    const char *op = "flip";
    int64_t wrapped[OPS_MAX_DIMS];
    bool seen[OPS_MAX_DIMS];
    if (dims.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: too many dims (%" PRId64 ")", op, dims.len);
    if (!wrap_dims(op, dims, self->ndim, wrapped, seen))
        return NULL;
    /* read self backwards along the flipped dims: negative strides */
    ops_tensor v = ops_borrowed_view(self, self->ndim, self->sizes, self->strides, self->offset);
    for (int d = 0; d < self->ndim; d++) {
        if (!seen[d] || v.sizes[d] == 0)
            continue;
        v.offset += (v.sizes[d] - 1) * v.strides[d];
        v.strides[d] = -v.strides[d];
    }
    return contiguous_copy(op, &v, self->dtype);
}

/* dst (same shape as src, not overlapping it) = src rolled by shift along dim. */
static ops_status
roll_dim(const char *op, ops_tensor *dst, const ops_tensor *src, int dim, int64_t shift)
{
    const int64_t n = src->sizes[dim];
    if (n == 0)
        return OPS_OK;
    const int64_t s = ((shift % n) + n) % n;
    ops_tensor d1 = narrow_view(dst, dim, s, n - s), s1 = narrow_view(src, dim, 0, n - s);
    ops_status st = ops_copy_values(op, &d1, &s1);
    if (st == OPS_OK && s > 0) {
        ops_tensor d2 = narrow_view(dst, dim, 0, s), s2 = narrow_view(src, dim, n - s, s);
        st = ops_copy_values(op, &d2, &s2);
    }
    return st;
}

ops_tensor *
shape_roll(const ops_tensor *self, ops_int_list shifts, ops_int_list dims)
{
    const char *op = "roll";
    if (shifts.len == 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: `shifts` required", op);
    if (dims.len == 0 && shifts.len == 1) {
        /* roll the flattened tensor, keep self's shape */
        ops_tensor *c = contiguous_copy(op, self, self->dtype);
        ops_tensor *r = c ? ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device)
                          : NULL;
        if (r != NULL) {
            const int64_t n = ops_tensor_numel(self), one = 1;
            ops_tensor src = ops_borrowed_view(c, 1, &n, &one, c->offset), dst = ops_borrowed_view(r, 1, &n, &one, r->offset);
            if (roll_dim(op, &dst, &src, 0, shifts.data[0]) != OPS_OK) {
                ops_tensor_release(r);
                r = NULL;
            }
        }
        ops_tensor_release(c);
        return r;
    }
    if (shifts.len != dims.len)
        return ops_fail_null(OPS_ERR_VALUE, "%s: shifts and dimensions must align. shifts: %" PRId64 ", dims:%" PRId64,
                             op, shifts.len, dims.len);
    int64_t wrapped[OPS_MAX_DIMS];
    if (dims.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: too many dims (%" PRId64 ")", op, dims.len);
    for (int64_t i = 0; i < dims.len; i++) {
        wrapped[i] = dims.data[i];
        if (!ops_wrap_dim(op, "dims", &wrapped[i], self->ndim))
            return NULL;
    }
    /* A 0-dim tensor takes dim 0 or -1 (as a 1-element vector would) and rolls onto
     * itself; roll_dim would read its sizes[0], which it does not have. */
    if (self->ndim == 0)
        return contiguous_copy(op, self, self->dtype);
    /* one dim at a time, between two buffers */
    ops_tensor *cur = NULL, *next = NULL;
    for (int64_t i = 0; i < dims.len; i++) {
        next = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device);
        if (next == NULL || roll_dim(op, next, cur ? cur : self, (int)wrapped[i], shifts.data[i]) != OPS_OK) {
            ops_tensor_release(next);
            ops_tensor_release(cur);
            return NULL;
        }
        ops_tensor_release(cur);
        cur = next;
    }
    return cur;
}

/* ---- tril, triu -------------------------------------------------------------------- */

static bool
check_matrix(const char *op, const ops_tensor *self)
{
    if (self->ndim < 2) {
        ops_fail(OPS_ERR_SHAPE, "%s: input tensor must have at least 2 dimensions", op);
        return false;
    }
    return true;
}

static ops_tensor *
triangle(const char *op, const ops_tensor *self, int64_t diagonal, bool lower)
{
    if (!check_matrix(op, self))
        return NULL;
    ops_tensor *r = contiguous_copy(op, self, self->dtype);
    if (r != NULL && OPS_STUB_CALL(shape_zero_triangle, r->storage->device, op, r, diagonal, lower) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

static ops_status
triangle_(const char *op, ops_tensor *self, int64_t diagonal, bool lower)
{
    if (!check_matrix(op, self))
        return ops_last_status();
    if (ops_tensor_has_internal_overlap(self))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a single "
                        "memory location. Please clone() the tensor before performing the operation.",
                        op);
    const ops_status st = OPS_STUB_CALL(shape_zero_triangle, self->storage->device, op, self, diagonal, lower);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

ops_tensor *
shape_tril(const ops_tensor *self, int64_t diagonal)
{
    return triangle("tril", self, diagonal, true);
}


ops_status
shape_tril_(ops_tensor *self, int64_t diagonal)
{
    return triangle_("tril_", self, diagonal, true);
}

ops_tensor *
shape_triu(const ops_tensor *self, int64_t diagonal)
{
    return triangle("triu", self, diagonal, false);
}


ops_status
shape_triu_(ops_tensor *self, int64_t diagonal)
{
    return triangle_("triu_", self, diagonal, false);
}

/* ---- repeat, tile ------------------------------------------------------------------- */

ops_tensor *
shape_repeat(const ops_tensor *self, ops_int_list repeats)
{
    const char *op = "repeat";
    char b1[OPS_SHAPE_STR_LEN];
    if (repeats.len < self->ndim)
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                             "tensor",
                             op);
    if (2 * repeats.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: at most %d repeat dims are supported, got %" PRId64, op,
                             OPS_MAX_DIMS / 2, repeats.len);
    const int n = (int)repeats.len, pad = n - self->ndim;
    int64_t sizes[OPS_MAX_DIMS], src_sz[OPS_MAX_DIMS], src_st[OPS_MAX_DIMS], dst_st[OPS_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        const int64_t s = d < pad ? 1 : self->sizes[d - pad];
        if (repeats.data[d] < 0)
            return ops_fail_null(OPS_ERR_VALUE, "%s: Trying to create tensor with negative dimension %" PRId64 ": %s",
                                 op, repeats.data[d], ops_shape_str(n, repeats.data, b1, sizeof b1));
        if (ops_mul_overflow_i64(s, repeats.data[d], &sizes[d]))
            return ops_fail_null(OPS_ERR_VALUE, "%s: the result size overflows", op);
        /* the result seen as [r0, s0, r1, s1, ...]: self broadcast along each r */
        src_sz[2 * d] = repeats.data[d];
        src_st[2 * d] = 0;
        src_sz[2 * d + 1] = s;
        src_st[2 * d + 1] = d < pad ? 0 : self->strides[d - pad];
    }
    ops_tensor *r = ops_tensor_new(op, n, sizes, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return NULL;
    ops_contiguous_strides(2 * n, src_sz, dst_st);
    ops_tensor src = ops_borrowed_view(self, 2 * n, src_sz, src_st, self->offset);
    ops_tensor dst = ops_borrowed_view(r, 2 * n, src_sz, dst_st, r->offset);
    if (ops_copy_values(op, &dst, &src) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
tile_impl(const ops_tensor *self, ops_int_list dims)
{
    /* numpy.tile: fewer dims than self are padded with leading 1s */
    if (dims.len >= self->ndim)
        return ops_repeat(self, dims);
    int64_t padded[OPS_MAX_DIMS];
    const int64_t pad = self->ndim - dims.len;
    for (int64_t d = 0; d < self->ndim; d++)
        padded[d] = d < pad ? 1 : dims.data[d - pad];
    return ops_repeat(self, (ops_int_list){padded, self->ndim});
}

/* ---- movedim, rot90 ------------------------------------------------------------------ */

ops_tensor *
movedim_intlist_impl(const ops_tensor *self, ops_int_list source, ops_int_list destination)
{
    const char *op = "movedim";
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    const int nd = self->ndim;
    if (source.len != destination.len)
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: Invalid source or destination dims: source (%s dims) should contain the same number "
                             "of dims as destination (%s dims)",
                             op, ops_shape_str((int)source.len, source.data, b1, sizeof b1),
                             ops_shape_str((int)destination.len, destination.data, b2, sizeof b2));
    if (source.len > (nd > 0 ? nd : 1))
        return ops_fail_null(OPS_ERR_VALUE, "%s: got %" PRId64 " source dims for a tensor with %d dimensions", op,
                             source.len, nd);
    int64_t src[OPS_MAX_DIMS], dst[OPS_MAX_DIMS], perm[OPS_MAX_DIMS] = {0};
    bool src_used[OPS_MAX_DIMS] = {0}, dst_used[OPS_MAX_DIMS] = {0};
    for (int64_t i = 0; i < source.len; i++) {
        src[i] = source.data[i];
        dst[i] = destination.data[i];
        if (!ops_wrap_dim(op, "source", &src[i], nd) || !ops_wrap_dim(op, "destination", &dst[i], nd))
            return NULL;
    }
    for (int64_t i = 0; i < source.len; i++) {
        if (src_used[src[i]])
            return ops_fail_null(OPS_ERR_VALUE, "%s: repeated dim in `source` (%s)", op,
                                 ops_shape_str((int)source.len, source.data, b1, sizeof b1));
        if (dst_used[dst[i]])
            return ops_fail_null(OPS_ERR_VALUE, "%s: repeated dim in `destination` (%s)", op,
                                 ops_shape_str((int)destination.len, destination.data, b1, sizeof b1));
        src_used[src[i]] = dst_used[dst[i]] = true;
    }
    if (nd == 0)
        return ops_permute(self, (ops_int_list){perm, 0});
    /* the moved dims at their destinations, the others in their order elsewhere */
    for (int d = 0; d < nd; d++)
        perm[d] = -1;
    for (int64_t i = 0; i < source.len; i++)
        perm[dst[i]] = src[i];
    for (int d = 0, next = 0; d < nd; d++) {
        if (perm[d] >= 0)
            continue;
        while (src_used[next])
            next++;
        perm[d] = next++;
    }
    return ops_permute(self, (ops_int_list){perm, nd});
}

ops_tensor *
movedim_int_impl(const ops_tensor *self, int64_t source, int64_t destination)
{
    return movedim_intlist_impl(self, (ops_int_list){&source, 1}, (ops_int_list){&destination, 1});
}

ops_tensor *
rot90_impl(const ops_tensor *self, int64_t k, ops_int_list dims)
{
    const char *op = "rot90";
    const int64_t nd = self->ndim;
    if (dims.len != 2)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected total rotation dims == 2, but got dims = %" PRId64, op,
                             dims.len);
    if (nd < 2)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected total dims >= 2, but got total dims = %" PRId64, op, nd);
    int64_t d0 = dims.data[0], d1 = dims.data[1];
    if (d0 == d1 || d0 - d1 == nd || d1 - d0 == nd)
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: expected rotation dims to be different, but got dim0 = %" PRId64 " and dim1 = %" PRId64,
                             op, d0, d1);
    if (!ops_wrap_dim(op, "dims", &d0, nd) || !ops_wrap_dim(op, "dims", &d1, nd))
        return NULL;
    k = ((k % 4) + 4) % 4;
    if (k == 0)
        return ops_clone(self, OPS_MEMORY_FORMAT_NONE);
    if (k == 2)
        return ops_flip(self, (ops_int_list){(int64_t[]){d0, d1}, 2});
    /* k == 1: flip along d1 then swap; k == 3: flip along d0 then swap */
    ops_tensor *f = ops_flip(self, (ops_int_list){k == 1 ? &d1 : &d0, 1});
    if (f == NULL)
        return NULL;
    ops_tensor *r = ops_transpose(f, d0, d1);
    ops_tensor_release(f);
    return r;
}

/* ---- out= forms: the functional result copied into out ------------------------------- */

ops_status
shape_cat_out(ops_tensor_list tensors, int64_t dim, ops_tensor *out)
{
    return ops_write_out("cat", shape_cat(tensors, dim), out);
}

ops_status
shape_stack_out(ops_tensor_list tensors, int64_t dim, ops_tensor *out)
{
    return ops_write_out("stack", shape_stack(tensors, dim), out);
}

ops_status
shape_hstack_out(ops_tensor_list tensors, ops_tensor *out)
{
    return ops_write_out("hstack", shape_hstack(tensors), out);
}

ops_status
shape_vstack_out(ops_tensor_list tensors, ops_tensor *out)
{
    return ops_write_out("vstack", shape_vstack(tensors), out);
}

ops_status
shape_tril_out(const ops_tensor *self, int64_t diagonal, ops_tensor *out)
{
    return ops_write_out("tril", shape_tril(self, diagonal), out);
}

ops_status
shape_triu_out(const ops_tensor *self, int64_t diagonal, ops_tensor *out)
{
    return ops_write_out("triu", shape_triu(self, diagonal), out);
}

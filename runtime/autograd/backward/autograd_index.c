/* Backward helpers of views, shape and indexing ops (the formulas of
 * ops/derivatives.yaml section index2; codegen/gen_autograd.py RUNTIME_HELPERS):
 * select, slice, narrow, diagonal, unfold, permute, as_strided, roll, repeat, tile,
 * index_select, gather, masked_select, masked_scatter, take, repeat_interleave, pad
 * scatter / scatter_add (src) and scatter_reduce.
 *
 * Every helper is written with public ops, so under create_graph its result is
 * itself recorded and double backward works.  The gradient of a view is "zeros of
 * the input's shape with g added where the view looked"; the views whose elements
 * never overlap (select, slice, narrow, diagonal) take the fast route (zeros, then
 * copy g into the view) when no graph is wanted, since an in-place copy into a view
 * is not differentiable here.  Otherwise the positions the view reads are found by
 * applying the view to a tensor of flat positions (arange), and g is accumulated into
 * them with put(accumulate=True), whose own formulas (take <-> put) are differentiable
 * to any order (put is about 2.5x faster than index_add over single elements); the
 * accumulation also gives overlapping views (unfold, as_strided) and padding modes
 * that read one element several times (reflect, replicate, circular) their summed
 * gradient. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_any.h"
#include "ops_op_arange.h"
#include "ops_op_as_strided.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_cpu.h"
#include "ops_op_diagonal.h"
#include "ops_op_div.h"
#include "ops_op_eq.h"
#include "ops_op_full.h"
#include "ops_op_gather.h"
#include "ops_op_ge.h"
#include "ops_op_gt.h"
#include "ops_op_index_add.h"
#include "ops_op_logical_and.h"
#include "ops_op_masked_fill.h"
#include "ops_op_masked_scatter.h"
#include "ops_op_masked_select.h"
#include "ops_op_mul.h"
#include "ops_op_narrow.h"
#include "ops_op_ones_like.h"
#include "ops_op_pad.h"
#include "ops_op_permute.h"
#include "ops_op_put.h"
#include "ops_op_repeat_interleave.h"
#include "ops_op_reshape.h"
#include "ops_op_roll.h"
#include "ops_op_scatter.h"
#include "ops_op_scatter_add.h"
#include "ops_op_scatter_reduce.h"
#include "ops_op_select.h"
#include "ops_op_slice.h"
#include "ops_op_sum.h"
#include "ops_op_to.h"
#include "ops_op_unfold.h"
#include "ops_op_where.h"
#include "ops_op_zeros.h"
#include "ops_op_zeros_like.h"
#endif

/* Intermediates of one helper, released together at its end. */
typedef struct {
    ops_tensor *t[64];
    int n;
} tmp_set;

static ops_tensor *
keep(tmp_set *s, ops_tensor *t)
{
    if (t != NULL)
        s->t[s->n++] = t;
    return t;
}

static void
drop_all(tmp_set *s)
{
    for (int i = 0; i < s->n; i++)
        ops_tensor_release(s->t[i]);
    s->n = 0;
}

/* r = expr, kept in the set; leaves through `done` when it failed. */
#define STEP(r, expr)                                                                       \
    do {                                                                                    \
        if (((r) = keep(&tmp, (expr))) == NULL)                                             \
            goto done;                                                                      \
    } while (0)

static int64_t
numel_of(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= sizes[i];
    return n;
}

/* True when the gradient must be built with differentiable ops (create_graph and g
 * carries history). */
static bool
wants_graph(const ops_tensor *g)
{
    return ops_grad_enabled() && ops_tensor_requires_grad(g);
}

/* The flat positions 0..n-1 of a tensor of this shape, in that shape (int64). */
static ops_tensor *
positions(int ndim, const int64_t *sizes, ops_device dev)
{
    ops_tensor *a = ops_arange(OPS_SCALAR_INT(numel_of(ndim, sizes)), OPS_INT64, dev);
    if (a == NULL)
        return NULL;
    ops_tensor *r = ops_reshape(a, (ops_int_list){sizes, ndim});
    ops_tensor_release(a);
    return r;
}

/* Zeros of shape sizes with the elements of g added at the flat positions idx (1-D
 * int64, one per element of g in g's row-major order). */
static ops_tensor *
accumulate_at(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_tensor *idx)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *z, *gf, *a;
    const int64_t n = numel_of(ndim, sizes), minus1 = -1;
    STEP(z, ops_zeros((ops_int_list){&n, 1}, g->dtype, ops_tensor_device(g)));
    STEP(gf, ops_reshape(g, (ops_int_list){&minus1, 1}));
    STEP(a, ops_put(z, idx, gf, true));
    r = ops_reshape(a, (ops_int_list){sizes, ndim});
done:
    drop_all(&tmp);
    return r;
}

typedef ops_tensor *(*view_fn)(const ops_tensor *t, const void *ctx);

/* The gradient of a view of an input of shape sizes (see the file comment);
 * overlapping: the view may read an element more than once. */
static ops_tensor *
view_backward(const ops_tensor *g, int ndim, const int64_t *sizes, view_fn view, const void *ctx, bool overlapping)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *z, *v, *pos, *pv, *idx;
    const int64_t minus1 = -1;
    if (!overlapping && !wants_graph(g)) {
        STEP(z, ops_zeros((ops_int_list){sizes, ndim}, g->dtype, ops_tensor_device(g)));
        STEP(v, view(z, ctx));
        if (ops_copy_(v, g, false) != OPS_OK)
            goto done;
        r = ops_tensor_retain(z);
        goto done;
    }
    STEP(pos, positions(ndim, sizes, ops_tensor_device(g)));
    STEP(pv, view(pos, ctx));
    STEP(idx, ops_reshape(pv, (ops_int_list){&minus1, 1}));
    r = accumulate_at(g, ndim, sizes, idx);
done:
    drop_all(&tmp);
    return r;
}

/* ---- select, slice, narrow, diagonal, unfold ------------------------------------------ */

typedef struct {
    int64_t dim, index, step, a, b, c;
    const int64_t *start, *end;
} view_args;

static ops_tensor *
select_view(const ops_tensor *z, const void *ctx)
{
    const view_args *a = ctx;
    return ops_select(z, a->dim, a->index);
}

static ops_tensor *
slice_view(const ops_tensor *z, const void *ctx)
{
    const view_args *a = ctx;
    return ops_slice(z, a->dim, a->start, a->end, a->step);
}

static ops_tensor *
diagonal_view(const ops_tensor *z, const void *ctx)
{
    const view_args *a = ctx;
    return ops_diagonal(z, a->a, a->b, a->c);
}

static ops_tensor *
unfold_view(const ops_tensor *z, const void *ctx)
{
    const view_args *a = ctx;
    return ops_unfold(z, a->a, a->b, a->c);
}

ops_tensor *
ops_autograd_select_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim, int64_t index)
{
    view_args a = {.dim = dim, .index = index};
    return view_backward(g, ndim, sizes, select_view, &a, false);
}

ops_tensor *
ops_autograd_slice_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim, const int64_t *start,
                            const int64_t *end, int64_t step)
{
    view_args a = {.dim = dim, .start = start, .end = end, .step = step};
    return view_backward(g, ndim, sizes, slice_view, &a, false);
}

ops_tensor *
ops_autograd_narrow_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim, int64_t start,
                             int64_t length)
{
    int64_t d = dim;
    if (!ops_wrap_dim("narrow_backward", "dim", &d, ndim))
        return NULL;
    if (start < 0)
        start += sizes[d]; /* narrow's negative start counts from the end */
    const int64_t end = start + length;
    return ops_autograd_slice_backward(g, ndim, sizes, d, &start, &end, 1);
}

ops_tensor *
ops_autograd_narrow_tensor_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                    const ops_tensor *start, int64_t length)
{
    ops_scalar s;
    if (ops_tensor_item(start, &s) != OPS_OK)
        return NULL;
    return ops_autograd_narrow_backward(g, ndim, sizes, dim, s.v.i, length);
}

ops_tensor *
ops_autograd_diagonal_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t offset, int64_t dim1,
                               int64_t dim2)
{
    view_args a = {.a = offset, .b = dim1, .c = dim2};
    return view_backward(g, ndim, sizes, diagonal_view, &a, false);
}

ops_tensor *
ops_autograd_unfold_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dimension, int64_t size,
                             int64_t step)
{
    view_args a = {.a = dimension, .b = size, .c = step};
    return view_backward(g, ndim, sizes, unfold_view, &a, step < size);
}

/* ---- permute -------------------------------------------------------------------------- */

ops_tensor *
ops_autograd_permute_backward(const ops_tensor *g, ops_int_list dims)
{
    int64_t inv[OPS_MAX_DIMS];
    const int64_t nd = dims.len;
    if (nd != g->ndim || nd > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "permute_backward: %lld dims for a gradient with %d", (long long)nd,
                             g->ndim);
    for (int64_t i = 0; i < nd; i++) {
        int64_t d = dims.data[i] < 0 ? dims.data[i] + nd : dims.data[i];
        inv[d] = i;
    }
    return ops_permute(g, (ops_int_list){inv, nd});
}

/* ---- as_strided ------------------------------------------------------------------------- */

/* True when no two elements of t share a storage element (dims sorted by stride, each
 * stride clears the extent of the smaller ones). */
static bool
non_overlapping(const ops_tensor *t)
{
    int order[OPS_MAX_DIMS], n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0)
            return true;
        if (t->sizes[i] > 1)
            order[n++] = i;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[order[j]] < t->strides[order[j - 1]]; j--) {
            const int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int64_t extent = 1;
    for (int i = 0; i < n; i++) {
        const int d = order[i];
        if (t->strides[d] < extent)
            return false;
        extent = t->strides[d] * (t->sizes[d] - 1) + extent;
    }
    return true;
}

/* The view read self's storage: each element of g goes to the element of self stored
 * where the view looked (nowhere when that storage element is not part of self). */
ops_tensor *
ops_autograd_as_strided_backward(const ops_tensor *g, const ops_tensor *self, ops_int_list size, ops_int_list stride,
                                 const int64_t *storage_offset)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *map, *pos, *into, *v, *idx, *cidx, *hidx, *valid, *vi, *gf, *gs;
    if (!non_overlapping(self))
        return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED,
                             "as_strided: the derivative for 'as_strided' is not implemented for an input whose "
                             "elements overlap in memory");
    const size_t item = ops_dtype_itemsize(self->dtype);
    const int64_t nstore = (int64_t)(ops_tensor_storage_nbytes(self) / item), minus1 = -1;
    const int64_t self_off = ops_tensor_storage_offset(self);
    const ops_device dev = ops_tensor_device(g);
    /* map[p]: the flat position in self of the element stored at p, or -1 */
    STEP(map, ops_full((ops_int_list){&nstore, 1}, OPS_SCALAR_INT(-1), OPS_INT64, dev));
    STEP(pos, positions(self->ndim, self->sizes, dev));
    STEP(into, ops_as_strided(map, (ops_int_list){self->sizes, self->ndim}, (ops_int_list){self->strides, self->ndim},
                              &self_off));
    if (ops_copy_(into, pos, false) != OPS_OK)
        goto done;
    STEP(v, ops_as_strided(map, size, stride, storage_offset != NULL ? storage_offset : &self_off));
    STEP(idx, ops_reshape(v, (ops_int_list){&minus1, 1}));
    STEP(cidx, ops_contiguous(idx, OPS_CONTIGUOUS_FORMAT));
    STEP(hidx, ops_cpu(cidx)); /* read on the host; cidx itself may live on a device */
    const int64_t *p = ops_tensor_data_ptr(hidx);
    const int64_t n = ops_tensor_numel(cidx);
    bool all = true;
    for (int64_t i = 0; i < n && all; i++)
        all = p[i] >= 0;
    if (all) {
        r = accumulate_at(g, self->ndim, self->sizes, cidx);
        goto done;
    }
    STEP(valid, ops_ge_scalar(cidx, OPS_SCALAR_INT(0)));
    STEP(vi, ops_masked_select(cidx, valid));
    STEP(gf, ops_reshape(g, (ops_int_list){&minus1, 1}));
    STEP(gs, ops_masked_select(gf, valid));
    r = accumulate_at(gs, self->ndim, self->sizes, vi);
done:
    drop_all(&tmp);
    return r;
}

/* ---- roll, repeat, tile ----------------------------------------------------------------- */

ops_tensor *
ops_autograd_roll_backward(const ops_tensor *g, ops_int_list shifts, ops_int_list dims)
{
    int64_t neg[OPS_MAX_DIMS];
    if (shifts.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "roll_backward: %" PRId64 " shifts", shifts.len);
    for (int64_t i = 0; i < shifts.len; i++)
        neg[i] = -shifts.data[i];
    return ops_roll(g, (ops_int_list){neg, shifts.len}, dims);
}

/* g has shape [r_0, .., r_{e-1}, r_e * s_0, ..]: split each repeated dim into (r, s)
 * and sum the r parts (dims repeated once or of size 1 need no split). */
ops_tensor *
ops_autograd_repeat_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_int_list repeats)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *split, *summed;
    int64_t shape[2 * OPS_MAX_DIMS], sum_dims[2 * OPS_MAX_DIMS];
    int ns = 0, nd = 0;
    const int64_t extra = repeats.len - ndim;
    if (extra < 0)
        return ops_fail_null(OPS_ERR_VALUE, "repeat_backward: %" PRId64 " repeats for %d dims", repeats.len, ndim);
    for (int64_t j = 0; j < repeats.len; j++) {
        const int64_t rep = repeats.data[j], s = j < extra ? 1 : sizes[j - extra];
        if (rep != 1) {
            sum_dims[nd++] = ns;
            shape[ns++] = rep;
        }
        if (s != 1)
            shape[ns++] = s;
    }
    if (ns > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED,
                             "repeat: the derivative for 'repeat' is not implemented for more than %d split dims",
                             OPS_MAX_DIMS);
    if (nd == 0)
        return ops_reshape(g, (ops_int_list){sizes, ndim});
    STEP(split, ops_reshape(g, (ops_int_list){shape, ns}));
    STEP(summed, ops_sum_dim(split, &(ops_int_list){sum_dims, nd}, false, OPS_DTYPE_NONE));
    r = ops_reshape(summed, (ops_int_list){sizes, ndim});
done:
    drop_all(&tmp);
    return r;
}

ops_tensor *
ops_autograd_tile_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_int_list dims)
{
    int64_t reps[OPS_MAX_DIMS];
    if (dims.len >= ndim)
        return ops_autograd_repeat_backward(g, ndim, sizes, dims);
    const int64_t lead = ndim - dims.len; /* tile pads dims with leading ones */
    for (int64_t i = 0; i < ndim; i++)
        reps[i] = i < lead ? 1 : dims.data[i - lead];
    return ops_autograd_repeat_backward(g, ndim, sizes, (ops_int_list){reps, ndim});
}

/* ---- index_select, gather, take, masked_select, masked_scatter ------------------------- */

ops_tensor *
ops_autograd_index_select_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                   const ops_tensor *index)
{
    ops_tensor *z = ops_zeros((ops_int_list){sizes, ndim}, g->dtype, ops_tensor_device(g));
    if (z == NULL)
        return NULL;
    ops_tensor *r = ops_index_add(z, dim, index, g, OPS_SCALAR_INT(1));
    ops_tensor_release(z);
    return r;
}

ops_tensor *
ops_autograd_gather_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                             const ops_tensor *index)
{
    ops_tensor *z = ops_zeros((ops_int_list){sizes, ndim}, g->dtype, ops_tensor_device(g));
    if (z == NULL)
        return NULL;
    ops_tensor *r = ops_scatter_add(z, dim, index, g);
    ops_tensor_release(z);
    return r;
}

ops_tensor *
ops_autograd_take_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_tensor *index)
{
    ops_tensor *z = ops_zeros((ops_int_list){sizes, ndim}, g->dtype, ops_tensor_device(g));
    if (z == NULL)
        return NULL;
    ops_tensor *r = ops_put(z, index, g, true);
    ops_tensor_release(z);
    return r;
}

/* masked_select read self broadcast with mask: g goes back to the selected places of
 * that shape, then is summed to self's shape. */
ops_tensor *
ops_autograd_masked_select_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_tensor *mask)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *z, *s;
    int64_t shape[OPS_MAX_DIMS];
    const int nd = ndim > mask->ndim ? ndim : mask->ndim;
    for (int i = 0; i < nd; i++) {
        const int a = i - (nd - ndim), b = i - (nd - mask->ndim);
        const int64_t x = a >= 0 ? sizes[a] : 1, y = b >= 0 ? mask->sizes[b] : 1;
        shape[i] = x == 1 ? y : x;
    }
    STEP(z, ops_zeros((ops_int_list){shape, nd}, g->dtype, ops_tensor_device(g)));
    STEP(s, ops_masked_scatter(z, mask, g));
    r = ops_autograd_reduce_to(s, ndim, sizes);
done:
    drop_all(&tmp);
    return r;
}

/* masked_scatter's source: the first k elements (k selected places) took part, in
 * order; the rest get zeros. */
ops_tensor *
ops_autograd_masked_scatter_backward(const ops_tensor *g, const ops_tensor *mask, int ndim, const int64_t *sizes)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *sel, *padded;
    STEP(sel, ops_masked_select(g, mask));
    const int64_t n = numel_of(ndim, sizes), k = ops_tensor_numel(sel);
    if (k < n) {
        const int64_t pad[2] = {0, n - k};
        STEP(padded, ops_pad(sel, (ops_int_list){pad, 2}, "constant", NULL));
    } else {
        padded = sel;
    }
    r = ops_reshape(padded, (ops_int_list){sizes, ndim});
done:
    drop_all(&tmp);
    return r;
}

/* ---- repeat_interleave, pad ----------------------------------------------------------- */

/* Each element (slice along dim) of self was repeated: sum its copies, found by
 * repeating the positions 0..n-1 the same way.  repeats_t NULL: repeats_i copies. */
ops_tensor *
ops_autograd_repeat_interleave_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                        const ops_tensor *repeats_t, int64_t repeats_i, const int64_t *dim)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *base, *idx, *z;
    const int64_t zero = 0;
    int64_t d = 0;
    const bool flat = dim == NULL || ndim == 0;
    if (!flat) {
        d = *dim;
        if (!ops_wrap_dim("repeat_interleave_backward", "dim", &d, ndim))
            return NULL;
    }
    const int64_t n = flat ? numel_of(ndim, sizes) : sizes[d];
    STEP(base, ops_arange(OPS_SCALAR_INT(n), OPS_INT64, ops_tensor_device(g)));
    if (repeats_t != NULL)
        STEP(idx, ops_repeat_interleave_self_tensor(base, repeats_t, &zero, NULL));
    else
        STEP(idx, ops_repeat_interleave_self_int(base, repeats_i, &zero, NULL));
    if (flat) {
        r = accumulate_at(g, ndim, sizes, idx);
        goto done;
    }
    STEP(z, ops_zeros((ops_int_list){sizes, ndim}, g->dtype, ops_tensor_device(g)));
    r = ops_index_add(z, d, idx, g, OPS_SCALAR_INT(1));
done:
    drop_all(&tmp);
    return r;
}

/* mode 0 constant: padding with the negated amounts crops what was added and puts
 * zeros where the forward cropped; 1 reflect, 2 replicate, 3 circular: the positions
 * padded the same way say which element each output element copied. */
ops_tensor *
ops_autograd_pad_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_int_list pad, int64_t mode)
{
    static const char *const modes[] = {"constant", "reflect", "replicate", "circular"};
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *pos, *pp, *idx;
    int64_t neg[2 * OPS_MAX_DIMS];
    const int64_t minus1 = -1;
    if (pad.len > 2 * OPS_MAX_DIMS || mode < 0 || mode > 3)
        return ops_fail_null(OPS_ERR_VALUE, "pad_backward: bad arguments");
    if (mode == 0) {
        for (int64_t i = 0; i < pad.len; i++)
            neg[i] = -pad.data[i];
        return ops_pad(g, (ops_int_list){neg, pad.len}, "constant", NULL);
    }
    STEP(pos, positions(ndim, sizes, ops_tensor_device(g)));
    STEP(pp, ops_pad(pos, pad, modes[mode], NULL));
    STEP(idx, ops_reshape(pp, (ops_int_list){&minus1, 1}));
    r = accumulate_at(g, ndim, sizes, idx);
done:
    drop_all(&tmp);
    return r;
}

/* ---- scatter, scatter_add, scatter_reduce -------------------------------------------- */

/* t (shaped like the index) padded with zeros at the end of every dim to the shape of
 * src: the elements of src outside the index's shape were not scattered. */
static ops_tensor *
pad_to(const ops_tensor *t, int ndim, const int64_t *sizes)
{
    int64_t pad[2 * OPS_MAX_DIMS];
    bool same = t->ndim == ndim;
    for (int i = 0; i < ndim && same; i++)
        same = t->sizes[i] == sizes[i];
    if (same || ndim == 0)
        return ops_tensor_retain(t);
    for (int i = 0; i < ndim; i++) { /* pad lists the last dim first */
        pad[2 * i] = 0;
        pad[2 * i + 1] = sizes[ndim - 1 - i] - t->sizes[ndim - 1 - i];
    }
    return ops_pad(t, (ops_int_list){pad, 2 * ndim}, "constant", NULL);
}

/* The gradient of src in scatter / scatter_add: g at the places src was written to,
 * zeros for the elements of src outside the index's shape. */
ops_tensor *
ops_autograd_scatter_src_backward(const ops_tensor *g, int64_t dim, const ops_tensor *index, int ndim,
                                  const int64_t *sizes)
{
    ops_tensor *t = ops_gather(g, dim, index, false);
    if (t == NULL)
        return NULL;
    ops_tensor *r = pad_to(t, ndim, sizes);
    ops_tensor_release(t);
    return r;
}

/* scatter_reduce.two's gradient for self (which 0) or src (1); mode 0 sum, 1 prod,
 * 2 mean, 3 amax, 4 amin (PyTorch's formulas: amax/amin share the gradient evenly
 * among the elements equal to the result; prod divides out the factor, with the
 * zeros of self and single zeros of src handled by recomputing without them). */
ops_tensor *
ops_autograd_scatter_reduce_backward(const ops_tensor *g, const ops_tensor *self, int64_t dim,
                                     const ops_tensor *index, const ops_tensor *src, const ops_tensor *result,
                                     int64_t mode, bool include_self, int64_t which)
{
    tmp_set tmp = {.n = 0};
    ops_tensor *r = NULL, *t1, *t2, *t3, *t4, *t5, *t6;
    const ops_tensor *gs = NULL;
    const ops_dtype dt = g->dtype;
    /* only src's elements inside the index's shape take part */
    const ops_tensor *src_full = src;
    for (int i = 0; i < index->ndim && i < src->ndim; i++)
        if (src->sizes[i] != index->sizes[i]) {
            ops_tensor *n;
            STEP(n, ops_narrow(src, i, 0, index->sizes[i]));
            src = n;
        }
    switch (mode) {
    case 0: /* sum */
        if (which == 1) {
            r = ops_gather(g, dim, index, false);
            goto done;
        }
        gs = g;
        break;
    case 2: { /* mean: g / (number of values averaged into each place) */
        STEP(t1, include_self ? ops_ones_like(g, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE)
                              : ops_zeros_like(g, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE));
        STEP(t2, ops_ones_like(src, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE));
        STEP(t3, ops_scatter_add(t1, dim, index, t2));
        STEP(t4, ops_eq_scalar(t3, OPS_SCALAR_INT(0)));
        STEP(t5, ops_masked_fill_scalar(t3, t4, OPS_SCALAR_INT(1)));
        STEP(gs, ops_div(g, t5));
        if (which == 1) {
            r = ops_gather(gs, dim, index, false);
            goto done;
        }
        break;
    }
    case 3:
    case 4: { /* amax / amin: shared evenly among the elements equal to the result */
        ops_tensor *value, *self_is, *src_is, *n, *gd;
        STEP(value, ops_gather(result, dim, index, false));
        STEP(t1, ops_eq(self, result));
        STEP(self_is, ops_to_dtype(t1, dt, false, false, OPS_MEMORY_FORMAT_NONE));
        if (!include_self)
            STEP(self_is, ops_scatter_value(self_is, dim, index, OPS_SCALAR_INT(0)));
        STEP(t2, ops_eq(src, value));
        STEP(src_is, ops_to_dtype(t2, dt, false, false, OPS_MEMORY_FORMAT_NONE));
        STEP(n, ops_scatter_add(self_is, dim, index, src_is));
        STEP(gd, ops_div(g, n));
        if (which == 1) {
            STEP(t3, ops_gather(gd, dim, index, false));
            r = ops_mul(src_is, t3);
            goto done;
        }
        r = ops_mul(self_is, gd); /* zero where self was not used already */
        goto done;
    }
    case 1: { /* prod */
        if (which == 0) {
            /* self's factor divided out; a zero self recomputed as 1 */
            ops_tensor *mask, *ms, *msr, *num;
            STEP(mask, ops_eq_scalar(self, OPS_SCALAR_INT(0)));
            STEP(ms, ops_masked_fill_scalar(self, mask, OPS_SCALAR_INT(1)));
            STEP(msr, ops_scatter_reduce_two(ms, dim, index, src, "prod", include_self));
            STEP(num, ops_mul(g, msr));
            STEP(gs, ops_div(num, ms));
            break;
        }
        ops_tensor *zero, *zf, *cnt0, *cnt, *single, *many, *anym, *msrc, *msr, *gm, *ga, *gr, *grg, *den, *gb;
        STEP(zero, ops_eq_scalar(src, OPS_SCALAR_INT(0)));
        STEP(zf, ops_to_dtype(zero, dt, false, false, OPS_MEMORY_FORMAT_NONE));
        STEP(t1, ops_zeros_like(self, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE));
        STEP(cnt0, ops_scatter_add(t1, dim, index, zf));
        STEP(cnt, ops_gather(cnt0, dim, index, false));
        STEP(t2, ops_eq_scalar(cnt, OPS_SCALAR_INT(1)));
        STEP(single, ops_logical_and(zero, t2));
        if (ops_grad_enabled()) {
            STEP(many, ops_gt_scalar(cnt, OPS_SCALAR_INT(1)));
            STEP(anym, ops_any(many));
            ops_scalar any_many; /* item(): anym may live on a device */
            if (ops_tensor_item(anym, &any_many) != OPS_OK)
                goto done;
            if (any_many.v.b) {
                ops_fail(OPS_ERR_NOT_IMPLEMENTED,
                         "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
                         "scattered to the same position");
                goto done;
            }
        }
        STEP(msrc, ops_masked_fill_scalar(src, single, OPS_SCALAR_INT(1)));
        STEP(msr, ops_scatter_reduce_two(self, dim, index, msrc, "prod", include_self));
        STEP(gm, ops_mul(g, msr));
        STEP(ga, ops_gather(gm, dim, index, false));
        STEP(gr, ops_mul(g, result));
        STEP(grg, ops_gather(gr, dim, index, false));
        STEP(den, ops_masked_fill_scalar(src, zero, OPS_SCALAR_INT(1)));
        STEP(gb, ops_div(grg, den));
        r = ops_where_self(single, ga, gb);
        goto done;
    }
    default:
        ops_fail(OPS_ERR_VALUE, "scatter_reduce_backward: unknown mode %" PRId64, mode);
        goto done;
    }
    /* self's gradient gs: the places src was scattered to did not see self */
    if (include_self) {
        r = ops_tensor_retain(gs);
    } else {
        STEP(t6, ops_scatter_value(gs, dim, index, OPS_SCALAR_INT(0)));
        r = ops_tensor_retain(t6);
    }
done:
    if (r != NULL && which == 1 && src_full != src) {
        ops_tensor *p = pad_to(r, src_full->ndim, src_full->sizes);
        ops_tensor_release(r);
        r = p;
    }
    drop_all(&tmp);
    return r;
}

/* Views in autograd and in-place writes through them (PyTorch's view rebase): a view
 * made under grad mode remembers its root base; an in-place op on a view gives the base
 * a CopySlices history, and a view whose base was written since reads its region of the
 * base's new history (AsStridedBackward0).  Also copy_'s node and the checks an in-place
 * op on a leaf or a view must pass before it writes. */
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_engine.h"

#if __has_include("ops_functions.h")
#include "ops_op_clone.h"
#include "ops_op_copy.h"
#include "ops_op_empty_strided.h"
#include "ops_op_to.h"
#include "ops_op_zero.h"
#endif

/* The nodes of a view's history.  Both know the geometry of the root base (sizes,
 * strides, storage offset) and of the view, so they can place a gradient of the view
 * into a gradient of the base:
 *   AsStridedBackward0  the grad_fn of a view whose base was written in place: zeros
 *                       of the base's shape with the view's gradient in its region;
 *   CopySlices          the base's grad_fn after an in-place op on a view: the base's
 *                       gradient outside the region goes to the base's old history
 *                       (edge 0), the region to the in-place op's node (edge 1), which
 *                       sends the part for the view before the write on to the view's
 *                       old history (itself leading to the base's old history). */
typedef struct view_node {
    ops_node base;
    int32_t b_ndim, v_ndim;
    int64_t b_sizes[OPS_MAX_DIMS], b_strides[OPS_MAX_DIMS], b_offset;
    int64_t v_sizes[OPS_MAX_DIMS], v_strides[OPS_MAX_DIMS], v_offset;
    bool v_overlap; /* the view addresses some element twice (expand) */
} view_node;

static ops_status as_strided_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out);
static ops_status copy_slices_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out);
static const ops_node_vtable as_strided_vt = {"AsStridedBackward0", as_strided_apply, NULL};
static const ops_node_vtable copy_slices_vt = {"CopySlices", copy_slices_apply, NULL};

/* Whether a gradient of view can be placed in a gradient laid out like base: base
 * dense without overlap and with non-negative strides (a fresh result, permuted or
 * not), the view inside it. */
static ops_status
check_region(const char *op, const ops_tensor *base, const ops_tensor *view)
{
    int64_t bmax = base->offset, vmin = view->offset, vmax = view->offset;
    const int64_t bn = ops_tensor_numel(base), vn = ops_tensor_numel(view);
    bool ok = true;
    for (int i = 0; i < base->ndim; i++) {
        ok = ok && base->strides[i] >= 0;
        if (base->sizes[i] > 0)
            bmax += (base->sizes[i] - 1) * base->strides[i];
    }
    for (int i = 0; i < view->ndim && vn > 0; i++) {
        const int64_t span = (view->sizes[i] - 1) * view->strides[i];
        if (span < 0)
            vmin += span;
        else
            vmax += span;
    }
    ok = ok && (bn == 0 || (bmax - base->offset + 1 == bn && !ops_tensor_has_internal_overlap(base)));
    ok = ok && (vn == 0 || (vmin >= base->offset && vmax <= bmax));
    if (!ok)
        return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: in-place operations on this view are not supported by "
                        "autograd (its base is not dense or the view reaches outside it)", op);
    return OPS_OK;
}

static view_node *
view_node_new(const ops_node_vtable *vt, int num_next, const ops_tensor *base, const ops_tensor *view)
{
    view_node *n = (view_node *)ops_node_new(vt, sizeof *n, 1, num_next);
    if (n == NULL)
        return NULL;
    n->b_ndim = base->ndim;
    n->v_ndim = view->ndim;
    memcpy(n->b_sizes, base->sizes, (size_t)base->ndim * sizeof base->sizes[0]);
    memcpy(n->b_strides, base->strides, (size_t)base->ndim * sizeof base->strides[0]);
    memcpy(n->v_sizes, view->sizes, (size_t)view->ndim * sizeof view->sizes[0]);
    memcpy(n->v_strides, view->strides, (size_t)view->ndim * sizeof view->strides[0]);
    n->b_offset = base->offset;
    n->v_offset = view->offset;
    n->v_overlap = ops_tensor_has_internal_overlap(view);
    return n;
}

/* A new tensor laid out like the base (uninitialised) for a gradient of dtype/device. */
static ops_tensor *
base_like(const view_node *n, ops_dtype dtype, ops_device device)
{
    return ops_empty_strided((ops_int_list){n->b_sizes, n->b_ndim}, (ops_int_list){n->b_strides, n->b_ndim}, dtype,
                             device);
}

/* The view's region of a tensor made by base_like (a new reference). */
static ops_tensor *
region_of(const view_node *n, const ops_tensor *buf)
{
    return ops_tensor_new_view(buf, n->v_ndim, n->v_sizes, n->v_strides, buf->offset + (n->v_offset - n->b_offset));
}

/* The backward of these nodes copies through views with plain (unrecorded) ops; a
 * differentiable version would need as_strided's own derivative. */
static ops_status
view_node_check_graph(const ops_node *n, const ops_tensor *g)
{
    if (ops_grad_enabled() && ops_tensor_requires_grad(g))
        return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: double backward through an in-place operation on a view "
                        "is not implemented", n->vt->name);
    return OPS_OK;
}

static ops_status
as_strided_apply(ops_node *node, ops_tensor *const *grads, ops_tensor **out)
{
    const view_node *n = (const view_node *)node;
    const ops_tensor *g = grads[0];
    ops_tensor *z = NULL, *r = NULL;
    ops_status st = view_node_check_graph(node, g);
    if (st != OPS_OK || node->next[0].node == NULL)
        return st;
    if (n->v_overlap)
        return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: the gradient of a view that addresses an element twice "
                        "(expand) after an in-place write to its base is not implemented", node->vt->name);
    if ((z = base_like(n, g->dtype, ops_tensor_device(g))) == NULL || (st = ops_zero_(z)) != OPS_OK ||
        (r = region_of(n, z)) == NULL || (st = ops_copy_(r, g, false)) != OPS_OK) {
        st = ops_last_status();
        ops_tensor_release(z);
        z = NULL;
    }
    ops_tensor_release(r);
    out[0] = z;
    return z != NULL ? OPS_OK : st;
}

static ops_status
copy_slices_apply(ops_node *node, ops_tensor *const *grads, ops_tensor **out)
{
    const view_node *n = (const view_node *)node;
    const ops_tensor *g = grads[0];
    ops_tensor *buf = NULL, *r = NULL, *part = NULL;
    ops_status st = view_node_check_graph(node, g);
    if (st != OPS_OK)
        return st;
    if ((buf = base_like(n, g->dtype, ops_tensor_device(g))) == NULL || (st = ops_copy_(buf, g, false)) != OPS_OK ||
        (r = region_of(n, buf)) == NULL)
        goto fail;
    if (node->next[1].node != NULL && (part = ops_clone(r,
                                                        OPS_MEMORY_FORMAT_NONE)) == NULL) /* the region, for the in-place op */
        goto fail;
    if (node->next[0].node != NULL && (st = ops_zero_(r)) != OPS_OK) /* the rest, for the base's old history */
        goto fail;
    ops_tensor_release(r);
    out[0] = node->next[0].node != NULL ? buf : NULL;
    if (out[0] == NULL)
        ops_tensor_release(buf);
    out[1] = part;
    return OPS_OK;
fail:
    st = ops_last_status();
    ops_tensor_release(buf);
    ops_tensor_release(r);
    ops_tensor_release(part);
    return st;
}

/* Renews the grad_fn of a view whose base was written in place since: it now reads
 * its region of the base's current history (none when the base needs no gradient). */
ops_status
ops_ag_view_refresh(ops_tensor *t)
{
    autograd_meta *m = ops_ag_meta_of(t);
    if (m == NULL || m->view_base == NULL)
        return OPS_OK;
    const uint64_t now = ops_tensor_version(t);
    if (now == m->attr_version)
        return OPS_OK;
    view_node *n = NULL;
    if (ops_tensor_requires_grad(m->view_base)) {
        ops_status st = check_region("backward", m->view_base, t);
        if (st != OPS_OK)
            return st;
        if ((n = view_node_new(&as_strided_vt, 1, m->view_base, t)) == NULL)
            return ops_last_status();
        if ((st = ops_node_set_next(&n->base, 0, m->view_base)) != OPS_OK) {
            ops_node_release(&n->base);
            return st;
        }
        ops_node_set_input_meta(&n->base, 0, t);
    }
    ops_node_release(m->grad_fn);
    m->grad_fn = n != NULL ? &n->base : NULL;
    m->output_nr = 0;
    m->attr_version = now;
    return OPS_OK;
}

ops_tensor *
ops_autograd_make_view(ops_tensor *r, const ops_tensor *self)
{
    if (ops_ag_grad_disabled)
        return r;
    const autograd_meta *sm = ops_ag_meta_of(self);
    ops_tensor *base = sm != NULL && sm->view_base != NULL ? sm->view_base : (ops_tensor *)self;
    autograd_meta *m = ops_ag_meta_get(r, "view");
    if (m == NULL) {
        ops_tensor_release(r);
        return NULL;
    }
    if (m->view_base == NULL) {
        m->view_base = ops_tensor_retain(base);
        m->attr_version = ops_tensor_version(r);
    }
    return r;
}

ops_status
ops_autograd_make_views(ops_tensor_vec *v, const ops_tensor *self)
{
    for (int64_t i = 0; i < v->len; i++) {
        ops_tensor *e = v->data[i];
        if (!ops_autograd_view_candidate(e, self))
            continue;
        if ((v->data[i] = ops_autograd_make_view(e, self)) == NULL) {
            ops_tensor_vec_release(v);
            return ops_last_status();
        }
        if (v->data[i]->autograd != NULL)
            ops_ag_meta_of(v->data[i])->view_multi = true;
    }
    return OPS_OK;
}

ops_status
ops_autograd_rebase_history(ops_tensor *self, ops_node *fn, int self_edge)
{
    ops_status st;
    /* The op's node reads self's history before the write (the generated layer may
     * have linked a history-less copy of self instead). */
    if (self_edge >= 0 && fn->next[self_edge].node == NULL && (st = ops_node_set_next(fn, self_edge, self)) != OPS_OK)
        return st;
    autograd_meta *m = ops_ag_meta_of(self);
    if (m == NULL || m->view_base == NULL)
        return ops_autograd_set_history(self, fn, 0);
    ops_tensor *base = m->view_base;
    view_node *cs = NULL, *av = NULL;
    if ((st = check_region(fn->vt->name, base, self)) != OPS_OK)
        return st;
    if ((cs = view_node_new(&copy_slices_vt, 2, base, self)) == NULL ||
        (av = view_node_new(&as_strided_vt, 1, base, self)) == NULL)
        goto fail;
    if ((st = ops_node_set_next(&cs->base, 0, base)) != OPS_OK)
        goto fail;
    cs->base.next[1] = (ops_edge){ops_node_retain(fn), 0};
    av->base.next[0] = (ops_edge){ops_node_retain(&cs->base), 0};
    ops_node_set_input_meta(fn, 0, self);
    if ((st = ops_autograd_set_history(base, &cs->base, 0)) != OPS_OK ||
        (st = ops_autograd_set_history(self, &av->base, 0)) != OPS_OK)
        goto fail;
    m->attr_version = ops_tensor_version(self);
    ops_node_release(&cs->base);
    ops_node_release(&av->base);
    return OPS_OK;
fail:
    st = ops_last_status();
    ops_node_release(cs != NULL ? &cs->base : NULL);
    ops_node_release(av != NULL ? &av->base : NULL);
    return st;
}

/* copy_'s node: no gradient for what self held before (it is overwritten); src's is the
 * gradient in src's dtype, summed back over the dims copy_ broadcast it along. */
typedef struct copy_node {
    ops_node base;
    int32_t src_ndim;
    ops_dtype src_dtype;
    int64_t src_sizes[OPS_MAX_DIMS];
} copy_node;

static ops_status
copy_apply(ops_node *node, ops_tensor *const *grads, ops_tensor **out)
{
    const copy_node *n = (const copy_node *)node;
    ops_tensor *c = NULL;
    if (node->next[0].node == NULL)
        return OPS_OK;
    c = grads[0]->dtype == n->src_dtype ? ops_tensor_retain(grads[0])
                                        : ops_to_dtype(grads[0], n->src_dtype, false, false, OPS_MEMORY_FORMAT_NONE);
    if (c == NULL)
        return ops_last_status();
    out[0] = ops_autograd_reduce_to(c, n->src_ndim, n->src_sizes);
    ops_tensor_release(c);
    return out[0] != NULL ? OPS_OK : ops_last_status();
}

static const ops_node_vtable copy_vt = {"CopyBackwards", copy_apply, NULL};

ops_status
ops_autograd_copy_(ops_tensor *self, const ops_tensor *src, bool non_blocking)
{
    ops_status st = ops_autograd_check_inplace("copy_", self);
    if (st != OPS_OK)
        return st;
    const bool prev = ops_set_grad_enabled(false);
    st = ops_copy_(self, src, non_blocking);
    ops_set_grad_enabled(prev);
    if (st != OPS_OK || !ops_dtype_is_floating(self->dtype))
        return st; /* an integer or bool self carries no gradient */
    copy_node *n = (copy_node *)ops_node_new(&copy_vt, sizeof *n, 1, 1);
    if (n == NULL)
        return ops_last_status();
    n->src_ndim = src->ndim;
    n->src_dtype = src->dtype;
    memcpy(n->src_sizes, src->sizes, (size_t)src->ndim * sizeof src->sizes[0]);
    if (ops_dtype_is_floating(src->dtype) && (st = ops_node_set_next(&n->base, 0, src)) != OPS_OK)
        goto done;
    st = ops_autograd_rebase_history(self, &n->base, -1);
done:
    ops_node_release(&n->base);
    return st;
}

ops_status
ops_autograd_check_inplace(const char *op, const ops_tensor *self)
{
    if (ops_tensor_is_leaf(self) && ops_tensor_requires_grad(self))
        return ops_fail(OPS_ERR_VALUE, "%s: a leaf Variable that requires grad is being used in an in-place "
                        "operation.", op);
    const autograd_meta *m = ops_ag_meta_of(self);
    if (m != NULL && m->view_multi)
        return ops_fail(OPS_ERR_VALUE, "%s: this view is the output of a function that returns multiple views. "
                        "Such functions do not allow the output views to be modified inplace. You should replace "
                        "the inplace operation by an out-of-place one.", op);
    if (m != NULL && m->view_base != NULL && ops_tensor_is_leaf(m->view_base) &&
        ops_tensor_requires_grad(m->view_base))
        return ops_fail(OPS_ERR_VALUE, "%s: a view of a leaf Variable that requires grad is being used in an "
                        "in-place operation.", op);
    /* refused before the op writes anything, not after (ops_autograd_rebase_history) */
    if (m != NULL && m->view_base != NULL)
        return check_region(op, m->view_base, self);
    return OPS_OK;
}

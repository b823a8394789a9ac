/* A tensor's autograd state (include/libops/ops_autograd.h): requires_grad, is_leaf,
 * grad_fn, its .grad and the gradient slot that holds it, detach, retain_grad and the
 * hooks registered on a tensor.  A leaf's slot is what threads sharing the leaf share
 * (docs/autograd.md "Threads"): its gradient, hooks and AccumulateGrad, under the slot's
 * mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_engine.h"

static int64_t next_hook_handle = 1; /* atomic */

autograd_meta *
ops_ag_meta_get(ops_tensor *t, const char *op)
{
    if (t->autograd != NULL)
        return t->autograd;
    autograd_meta *m = ops_host_malloc(sizeof *m);
    if (m == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating autograd state", op);
    memset(m, 0, sizeof *m);
    t->autograd = m;
    return m;
}

void
ops_ag_slot_weak_release(grad_slot *s)
{
    if (__atomic_sub_fetch(&s->weak, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_destroy(&s->lock);
        ops_host_free(s);
    }
}

void
ops_ag_slot_release(grad_slot *s)
{
    if (s == NULL || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* The tensor is gone: an AccumulateGrad still running (another thread's graph)
     * sees refcount 0 under the lock and drops its gradient.  The gradient is released
     * outside the lock: its graph may hold this slot's AccumulateGrad, whose death
     * takes the lock. */
    pthread_mutex_lock(&s->lock);
    ops_tensor *g = s->grad;
    tensor_hook *hooks = s->hooks;
    s->grad = NULL;
    s->hooks = NULL;
    pthread_mutex_unlock(&s->lock);
    ops_tensor_release(g);
    for (tensor_hook *h = hooks, *nx; h != NULL; h = nx) {
        nx = h->next;
        ops_ag_tensor_hook_unref(h);
    }
    ops_ag_slot_weak_release(s);
}

/* The slot of a tensor whose autograd state exists, made on first use.  Threads
 * sharing a leaf may get here at once: the first to publish its slot wins. */
grad_slot *
ops_ag_slot_get(autograd_meta *m, const char *op)
{
    grad_slot *s = __atomic_load_n(&m->grad, __ATOMIC_ACQUIRE);
    if (s != NULL)
        return s;
    s = ops_host_malloc(sizeof *s);
    if (s == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a gradient slot", op);
    memset(s, 0, sizeof *s);
    s->refcount = 1;
    s->weak = 1;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        ops_host_free(s);
        return ops_fail_null(OPS_ERR_RUNTIME, "%s: cannot create a gradient slot's mutex", op);
    }
    grad_slot *seen = NULL;
    if (!__atomic_compare_exchange_n(&m->grad, &seen, s, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        pthread_mutex_destroy(&s->lock);
        ops_host_free(s);
        return seen;
    }
    return s;
}

void
ops_autograd_meta_free(void *p)
{
    autograd_meta *m = p;
    if (m == NULL)
        return;
    ops_node_release(m->grad_fn);
    ops_node_release(m->leaf_acc);
    ops_ag_slot_release(m->grad);
    ops_tensor_release(m->view_base);
    ops_host_free(m);
}

/* A view whose base was written in place since its grad_fn was set, while the base
 * takes part in autograd: its grad_fn is out of date (ops_ag_view_refresh renews it). */
static bool
view_stale(const autograd_meta *m, const ops_tensor *t)
{
    if (m->view_base == NULL || m->attr_version == ops_tensor_version(t))
        return false;
    const autograd_meta *bm = ops_ag_meta_of(m->view_base);
    return bm != NULL && (bm->requires_grad || bm->grad_fn != NULL);
}

bool
ops_tensor_requires_grad(const ops_tensor *t)
{
    const autograd_meta *m = t != NULL ? ops_ag_meta_of(t) : NULL;
    return m != NULL && (m->requires_grad || m->grad_fn != NULL || view_stale(m, t));
}

bool
ops_tensor_is_leaf(const ops_tensor *t)
{
    const autograd_meta *m = ops_ag_meta_of(t);
    return m == NULL || (m->grad_fn == NULL && !view_stale(m, t));
}

ops_node *
ops_tensor_grad_fn(const ops_tensor *t)
{
    const autograd_meta *m = ops_ag_meta_of(t);
    if (m == NULL)
        return NULL;
    /* A getter cannot report an error: on OOM the old grad_fn is shown. */
    (void)ops_ag_view_refresh((ops_tensor *)t);
    return m->grad_fn;
}

int
ops_tensor_output_nr(const ops_tensor *t)
{
    const autograd_meta *m = ops_ag_meta_of(t);
    return m != NULL && !view_stale(m, t) ? m->output_nr : 0;
}

ops_status
ops_tensor_set_requires_grad(ops_tensor *t, bool requires_grad)
{
    const char *op = "requires_grad_";
    if (t == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor must not be NULL", op);
    if (!ops_tensor_is_leaf(t)) {
        if (requires_grad)
            return OPS_OK;
        return ops_fail(OPS_ERR_VALUE,
                        "%s: you can only change requires_grad flags of leaf variables. If you want to use a "
                        "computed variable in a subgraph that doesn't require differentiation use "
                        "var_no_grad = var.detach().",
                        op);
    }
    if (requires_grad && !ops_dtype_is_floating(t->dtype))
        return ops_fail(OPS_ERR_DTYPE, "%s: only Tensors of floating point dtype can require gradients, got %s", op,
                        ops_dtype_name(t->dtype));
    if (!requires_grad && t->autograd == NULL)
        return OPS_OK;
    autograd_meta *m = ops_ag_meta_get(t, op);
    if (m == NULL)
        return ops_last_status();
    m->requires_grad = requires_grad;
    return OPS_OK;
}

ops_tensor *
ops_tensor_grad(const ops_tensor *t)
{
    grad_slot *s = ops_ag_slot_of(ops_ag_meta_of(t));
    if (s == NULL)
        return NULL;
    pthread_mutex_lock(&s->lock);
    ops_tensor *g = ops_tensor_retain(s->grad);
    pthread_mutex_unlock(&s->lock);
    return g;
}

ops_status
ops_tensor_set_grad(ops_tensor *t, const ops_tensor *grad)
{
    const char *op = "grad";
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (t == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor must not be NULL", op);
    if (grad != NULL && (!ops_ag_same_shape(t, grad) || grad->dtype != t->dtype))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: assigned grad has data of a different size or type: got %s %s, expected %s %s", op,
                        ops_dtype_name(grad->dtype), ops_shape_str(grad->ndim, grad->sizes, b1, sizeof b1),
                        ops_dtype_name(t->dtype), ops_shape_str(t->ndim, t->sizes, b2, sizeof b2));
    if (grad == NULL && t->autograd == NULL)
        return OPS_OK;
    autograd_meta *m = ops_ag_meta_get(t, op);
    if (m == NULL)
        return ops_last_status();
    grad_slot *s = ops_ag_slot_get(m, op);
    if (s == NULL)
        return ops_last_status();
    pthread_mutex_lock(&s->lock);
    ops_tensor *old = s->grad;
    s->grad = ops_tensor_retain(grad);
    pthread_mutex_unlock(&s->lock);
    ops_tensor_release(old); /* outside the lock: its graph may end in this slot's AccumulateGrad */
    return OPS_OK;
}

ops_tensor *
ops_tensor_detach(const ops_tensor *t)
{
    if (t == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "detach: tensor must not be NULL");
    return ops_ag_alias_without_history(t);
}

ops_status
ops_tensor_detach_(ops_tensor *t)
{
    autograd_meta *m = ops_ag_meta_of(t);
    if (m == NULL)
        return OPS_OK;
    ops_node_release(m->grad_fn);
    m->grad_fn = NULL;
    m->output_nr = 0;
    m->requires_grad = false;
    m->retains_grad = false;
    return OPS_OK;
}

void
ops_ag_tensor_hook_unref(tensor_hook *h)
{
    if (h == NULL || __atomic_sub_fetch(&h->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (h->release != NULL)
        h->release(h->ctx);
    ops_host_free(h);
}

void
ops_ag_node_hook_unref(ops_node_hook *h)
{
    if (h == NULL || __atomic_sub_fetch(&h->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (h->release != NULL)
        h->release(h->ctx);
    ops_ag_slot_release(h->slot);
    ops_host_free(h);
}

static ops_node_hook *
node_hook_new(ops_node *n, int input_nr)
{
    ops_node_hook *h = ops_host_malloc(sizeof *h);
    if (h == NULL)
        return NULL;
    memset(h, 0, sizeof *h);
    h->refcount = 1;
    h->input_nr = input_nr;
    h->handle = __atomic_fetch_add(&next_hook_handle, 1, __ATOMIC_RELAXED);
    /* Appended: hooks run in registration order. */
    ops_node_hook **p = &n->hooks;
    while (*p != NULL)
        p = &(*p)->next;
    *p = h;
    return h;
}

ops_status
ops_tensor_retain_grad(ops_tensor *t)
{
    const char *op = "retain_grad";
    if (!ops_tensor_requires_grad(t))
        return ops_fail(OPS_ERR_VALUE, "%s: can't retain_grad on Tensor that has requires_grad=False", op);
    autograd_meta *m = ops_ag_meta_of(t);
    ops_status st = ops_ag_view_refresh(t);
    if (st != OPS_OK)
        return st;
    if (m->grad_fn == NULL || m->retains_grad)
        return OPS_OK; /* leaves always keep their gradient */
    grad_slot *s = ops_ag_slot_get(m, op);
    if (s == NULL)
        return ops_last_status();
    ops_node_hook *h = node_hook_new(m->grad_fn, m->output_nr);
    if (h == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
    h->slot = s;
    m->retains_grad = true;
    return OPS_OK;
}

ops_status
ops_tensor_register_hook(ops_tensor *t, ops_grad_hook_fn fn, void *ctx, int64_t *handle)
{
    return ops_tensor_register_hook_ex(t, fn, ctx, NULL, handle);
}

ops_status
ops_tensor_register_hook_ex(ops_tensor *t, ops_grad_hook_fn fn, void *ctx, void (*release)(void *ctx),
                            int64_t *handle)
{
    const char *op = "register_hook";
    if (t == NULL || fn == NULL || handle == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor, hook and handle must not be NULL", op);
    if (!ops_tensor_requires_grad(t))
        return ops_fail(OPS_ERR_VALUE, "%s: cannot register a hook on a tensor that doesn't require gradient", op);
    autograd_meta *m = ops_ag_meta_of(t);
    ops_status st = ops_ag_view_refresh(t);
    if (st != OPS_OK)
        return st;
    if (m->grad_fn != NULL) {
        ops_node_hook *h = node_hook_new(m->grad_fn, m->output_nr);
        if (h == NULL)
            return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        h->fn = fn;
        h->ctx = ctx;
        h->release = release;
        *handle = h->handle;
        return OPS_OK;
    }
    grad_slot *s = ops_ag_slot_get(m, op);
    if (s == NULL)
        return ops_last_status();
    tensor_hook *h = ops_host_malloc(sizeof *h);
    if (h == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    *h = (tensor_hook){.refcount = 1,
                       .handle = __atomic_fetch_add(&next_hook_handle, 1, __ATOMIC_RELAXED),
                       .fn = fn,
                       .ctx = ctx,
                       .release = release};
    pthread_mutex_lock(&s->lock);
    tensor_hook **p = &s->hooks;
    while (*p != NULL)
        p = &(*p)->next;
    *p = h;
    pthread_mutex_unlock(&s->lock);
    *handle = h->handle;
    return OPS_OK;
}

bool
ops_tensor_remove_hook(ops_tensor *t, int64_t handle)
{
    autograd_meta *m = ops_ag_meta_of(t);
    if (m == NULL)
        return false;
    grad_slot *s = ops_ag_slot_of(m);
    if (s != NULL) {
        tensor_hook *found = NULL;
        pthread_mutex_lock(&s->lock);
        for (tensor_hook **p = &s->hooks; *p != NULL; p = &(*p)->next) {
            if ((*p)->handle == handle) {
                found = *p;
                *p = found->next;
                break;
            }
        }
        pthread_mutex_unlock(&s->lock);
        if (found != NULL) {
            ops_ag_tensor_hook_unref(found);
            return true;
        }
    }
    if (m->grad_fn == NULL)
        return false;
    for (ops_node_hook **p = &m->grad_fn->hooks; *p != NULL; p = &(*p)->next) {
        if ((*p)->handle == handle && (*p)->fn != NULL) {
            ops_node_hook *h = *p;
            *p = h->next;
            ops_ag_node_hook_unref(h);
            return true;
        }
    }
    return false;
}

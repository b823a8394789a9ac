/* The autograd engine: grad mode, per-tensor autograd state, backward nodes, saved
 * values and the backward pass (include/libops/ops_autograd.h, runtime/autograd/ops_autograd_impl.h).
 *
 * The backward pass is single-threaded and runs on the caller's thread:
 *   1. collect the nodes reachable from the roots and count, for each, the edges
 *      that lead into it from reachable nodes;
 *   2. order them topologically (Kahn), so a node runs only after every node that
 *      sends it a gradient;
 *   3. for autograd_grad, keep only the nodes from which a requested input can be
 *      reached (nothing else runs, and no .grad is touched);
 *   4. run them in order: each node's buffered gradients (summed over the edges that
 *      reach it; zeros where none arrived) go through its hooks and its apply, and the
 *      results are added into the buffers of the nodes its edges point to.
 * Unless retain_graph, every node that ran drops its saved values afterwards.
 *
 * Threads (docs/autograd.md "Threads"): independent graphs share nothing here but
 * atomic counters; what a leaf requiring grad shares between threads (its gradient,
 * its hooks, the one AccumulateGrad its graphs point to) lives in its grad_slot, under
 * the slot's mutex.  Nothing else takes a lock: a graph of non-leaf tensors belongs
 * to the thread that runs it. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_functions_binary.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_creation.h"
#include "ops_functions_reduce.h"
#endif

/* ---- grad mode ---------------------------------------------------------------- */

static _Thread_local bool grad_disabled; /* zero-initialised: grad mode is on */

bool
ops_grad_enabled(void)
{
    return !grad_disabled;
}

bool
ops_set_grad_enabled(bool enabled)
{
    bool prev = !grad_disabled;
    grad_disabled = !enabled;
    return prev;
}

/* ---- per-tensor state ---------------------------------------------------------- */

typedef struct tensor_hook {
    int64_t handle;
    ops_grad_hook_fn fn;
    void *ctx;
    struct tensor_hook *next;
} tensor_hook;

/* The gradient kept for a tensor, and for a leaf what its AccumulateGrad needs.
 * Strong references: the tensor's autograd state and a non-leaf's retain_grad hook
 * (which must not own the tensor: that would be a cycle through its grad_fn).  Weak
 * ones: the leaf's AccumulateGrad nodes.  An AccumulateGrad must not own its leaf:
 * under create_graph the leaf's .grad has a graph leading back to that very node, and
 * leaf -> grad -> graph -> AccumulateGrad -> leaf would never be freed.  So the node
 * holds the slot weakly and finds the leaf gone (refcount 0) when it runs late.
 * lock guards grad, hooks and accumulator: threads share a leaf (Hogwild, data
 * parallel), each backward pass adding into its .grad as PyTorch's AccumulateGrad does
 * under its mutex. */
typedef struct ops_grad_slot {
    int64_t refcount;      /* strong references (atomic) */
    int64_t weak;          /* weak references, + 1 while refcount > 0 (atomic) */
    pthread_mutex_t lock;
    ops_tensor *grad;
    tensor_hook *hooks;    /* a leaf's hooks (a non-leaf's live on its grad_fn) */
    ops_node *accumulator; /* a leaf's AccumulateGrad: weak, cleared when it dies */
} grad_slot;

typedef struct autograd_meta {
    bool requires_grad;    /* a leaf marked by the user */
    bool retains_grad;     /* a non-leaf asked to keep its gradient */
    ops_node *grad_fn;     /* owned; NULL for a leaf */
    int output_nr;
    grad_slot *grad;       /* owned; NULL until a gradient, hook or AccumulateGrad needs it */
    /* A saved leaf unpacked under create_graph (ops_saved_unpack): an alias of the
     * leaf whose gradient goes to the leaf's own AccumulateGrad (owned). */
    ops_node *leaf_acc;
    /* A view made under grad mode: the root tensor whose storage it looks into (owned;
     * never itself a view) and the storage version its grad_fn was last set at.  When
     * the version moved (an in-place write through the base or another view), the
     * grad_fn is regenerated to read the view's region of the base's history. */
    ops_tensor *view_base;
    uint64_t attr_version;
    bool view_multi; /* one of several views one call returned (split): no in-place */
} autograd_meta;

/* Hooks a node runs on one of its incoming gradients (a non-leaf's tensor hooks and
 * its retain_grad). */
struct ops_node_hook {
    int input_nr;
    int64_t handle;
    ops_grad_hook_fn fn; /* NULL: retain_grad into slot */
    void *ctx;
    grad_slot *slot;     /* owned, for retain_grad */
    ops_node_hook *next;
};

static int64_t next_hook_handle = 1; /* atomic */
static uint64_t next_node_seq = 1;   /* atomic */

static inline autograd_meta *
meta_of(const ops_tensor *t)
{
    return (autograd_meta *)t->autograd;
}

static autograd_meta *
meta_get(ops_tensor *t, const char *op)
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

static void
slot_weak_release(grad_slot *s)
{
    if (__atomic_sub_fetch(&s->weak, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_destroy(&s->lock);
        ops_host_free(s);
    }
}

static void
slot_release(grad_slot *s)
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
        ops_host_free(h);
    }
    slot_weak_release(s);
}

/* The slot of a tensor whose autograd state exists, made on first use.  Threads
 * sharing a leaf may get here at once: the first to publish its slot wins. */
static grad_slot *
slot_get(autograd_meta *m, const char *op)
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

/* The tensor's slot if it has one (no allocation). */
static inline grad_slot *
slot_of(const autograd_meta *m)
{
    return m != NULL ? __atomic_load_n(&m->grad, __ATOMIC_ACQUIRE) : NULL;
}

void
ops_autograd_meta_free(void *p)
{
    autograd_meta *m = p;
    if (m == NULL)
        return;
    ops_node_release(m->grad_fn);
    ops_node_release(m->leaf_acc);
    slot_release(m->grad);
    ops_tensor_release(m->view_base);
    ops_host_free(m);
}

/* A view whose base was written in place since its grad_fn was set, while the base
 * takes part in autograd: its grad_fn is out of date (view_refresh renews it). */
static bool
view_stale(const autograd_meta *m, const ops_tensor *t)
{
    if (m->view_base == NULL || m->attr_version == ops_tensor_version(t))
        return false;
    const autograd_meta *bm = meta_of(m->view_base);
    return bm != NULL && (bm->requires_grad || bm->grad_fn != NULL);
}

static ops_status view_refresh(ops_tensor *t);
static ops_status check_region(const char *op, const ops_tensor *base, const ops_tensor *view);

bool
ops_tensor_requires_grad(const ops_tensor *t)
{
    const autograd_meta *m = t != NULL ? meta_of(t) : NULL;
    return m != NULL && (m->requires_grad || m->grad_fn != NULL || view_stale(m, t));
}

bool
ops_tensor_is_leaf(const ops_tensor *t)
{
    const autograd_meta *m = meta_of(t);
    return m == NULL || (m->grad_fn == NULL && !view_stale(m, t));
}

ops_node *
ops_tensor_grad_fn(const ops_tensor *t)
{
    const autograd_meta *m = meta_of(t);
    if (m == NULL)
        return NULL;
    /* A getter cannot report an error: on OOM the old grad_fn is shown. */
    (void)view_refresh((ops_tensor *)t);
    return m->grad_fn;
}

int
ops_tensor_output_nr(const ops_tensor *t)
{
    const autograd_meta *m = meta_of(t);
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
    autograd_meta *m = meta_get(t, op);
    if (m == NULL)
        return ops_last_status();
    m->requires_grad = requires_grad;
    return OPS_OK;
}

ops_tensor *
ops_tensor_grad(const ops_tensor *t)
{
    grad_slot *s = slot_of(meta_of(t));
    if (s == NULL)
        return NULL;
    pthread_mutex_lock(&s->lock);
    ops_tensor *g = ops_tensor_retain(s->grad);
    pthread_mutex_unlock(&s->lock);
    return g;
}

static bool
same_shape(const ops_tensor *a, const ops_tensor *b)
{
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof a->sizes[0]) == 0;
}

ops_status
ops_tensor_set_grad(ops_tensor *t, const ops_tensor *grad)
{
    const char *op = "grad";
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (t == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor must not be NULL", op);
    if (grad != NULL && (!same_shape(t, grad) || grad->dtype != t->dtype))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: assigned grad has data of a different size or type: got %s %s, expected %s %s", op,
                        ops_dtype_name(grad->dtype), ops_shape_str(grad->ndim, grad->sizes, b1, sizeof b1),
                        ops_dtype_name(t->dtype), ops_shape_str(t->ndim, t->sizes, b2, sizeof b2));
    if (grad == NULL && t->autograd == NULL)
        return OPS_OK;
    autograd_meta *m = meta_get(t, op);
    if (m == NULL)
        return ops_last_status();
    grad_slot *s = slot_get(m, op);
    if (s == NULL)
        return ops_last_status();
    pthread_mutex_lock(&s->lock);
    ops_tensor *old = s->grad;
    s->grad = ops_tensor_retain(grad);
    pthread_mutex_unlock(&s->lock);
    ops_tensor_release(old); /* outside the lock: its graph may end in this slot's AccumulateGrad */
    return OPS_OK;
}

static ops_tensor *
alias_without_history(const ops_tensor *t)
{
    return ops_tensor_new_view(t, t->ndim, t->sizes, t->strides, t->offset);
}

ops_tensor *
ops_tensor_detach(const ops_tensor *t)
{
    if (t == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "detach: tensor must not be NULL");
    return alias_without_history(t);
}

ops_status
ops_tensor_detach_(ops_tensor *t)
{
    autograd_meta *m = meta_of(t);
    if (m == NULL)
        return OPS_OK;
    ops_node_release(m->grad_fn);
    m->grad_fn = NULL;
    m->output_nr = 0;
    m->requires_grad = false;
    m->retains_grad = false;
    return OPS_OK;
}

static ops_node_hook *
node_hook_new(ops_node *n, int input_nr)
{
    ops_node_hook *h = ops_host_malloc(sizeof *h);
    if (h == NULL)
        return NULL;
    memset(h, 0, sizeof *h);
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
    autograd_meta *m = meta_of(t);
    ops_status st = view_refresh(t);
    if (st != OPS_OK)
        return st;
    if (m->grad_fn == NULL || m->retains_grad)
        return OPS_OK; /* leaves always keep their gradient */
    grad_slot *s = slot_get(m, op);
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
    const char *op = "register_hook";
    if (t == NULL || fn == NULL || handle == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor, hook and handle must not be NULL", op);
    if (!ops_tensor_requires_grad(t))
        return ops_fail(OPS_ERR_VALUE, "%s: cannot register a hook on a tensor that doesn't require gradient", op);
    autograd_meta *m = meta_of(t);
    ops_status st = view_refresh(t);
    if (st != OPS_OK)
        return st;
    if (m->grad_fn != NULL) {
        ops_node_hook *h = node_hook_new(m->grad_fn, m->output_nr);
        if (h == NULL)
            return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        h->fn = fn;
        h->ctx = ctx;
        *handle = h->handle;
        return OPS_OK;
    }
    grad_slot *s = slot_get(m, op);
    if (s == NULL)
        return ops_last_status();
    tensor_hook *h = ops_host_malloc(sizeof *h);
    if (h == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    *h = (tensor_hook){.handle = __atomic_fetch_add(&next_hook_handle, 1, __ATOMIC_RELAXED), .fn = fn, .ctx = ctx};
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
    autograd_meta *m = meta_of(t);
    if (m == NULL)
        return false;
    grad_slot *s = slot_of(m);
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
            ops_host_free(found);
            return true;
        }
    }
    if (m->grad_fn == NULL)
        return false;
    for (ops_node_hook **p = &m->grad_fn->hooks; *p != NULL; p = &(*p)->next) {
        if ((*p)->handle == handle && (*p)->fn != NULL) {
            ops_node_hook *h = *p;
            *p = h->next;
            ops_host_free(h);
            return true;
        }
    }
    return false;
}

/* ---- nodes ------------------------------------------------------------------------ */

static ops_status accumulate_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out);

static const ops_node_vtable accumulate_vt = {"AccumulateGrad", accumulate_apply, NULL};

ops_node *
ops_node_new(const ops_node_vtable *vt, size_t size, int num_inputs, int num_next)
{
    const char *op = vt->name;
    ops_node *n = ops_host_malloc(size);
    if (n == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a backward node", op);
    memset(n, 0, size);
    n->refcount = 1;
    n->vt = vt;
    n->seq = __atomic_fetch_add(&next_node_seq, 1, __ATOMIC_RELAXED);
    n->num_inputs = num_inputs;
    n->num_next = num_next;
    if (num_next > 0) {
        n->next = ops_host_malloc((size_t)num_next * sizeof *n->next);
        if (n->next == NULL)
            goto oom;
        memset(n->next, 0, (size_t)num_next * sizeof *n->next);
    }
    if (num_inputs > 0) {
        n->in_meta = ops_host_malloc((size_t)num_inputs * sizeof *n->in_meta);
        if (n->in_meta == NULL)
            goto oom;
        memset(n->in_meta, 0, (size_t)num_inputs * sizeof *n->in_meta);
    }
    return n;
oom:
    ops_host_free(n->next);
    ops_host_free(n);
    return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a backward node", op);
}

ops_node *
ops_node_retain(ops_node *n)
{
    if (n != NULL)
        __atomic_add_fetch(&n->refcount, 1, __ATOMIC_RELAXED);
    return n;
}

/* Frees one node whose count reached zero; pushes the nodes it owned whose counts
 * reach zero in turn onto the worklist (so a long chain does not recurse). */
static void
node_destroy(ops_node *n, ops_node ***work, size_t *len, size_t *cap)
{
    if (n->vt->release_saved != NULL && !n->released)
        n->vt->release_saved(n);
    for (ops_node_hook *h = n->hooks, *nx; h != NULL; h = nx) {
        nx = h->next;
        slot_release(h->slot);
        ops_host_free(h);
    }
    grad_slot *ls = n->leaf_slot;
    if (ls != NULL) {
        pthread_mutex_lock(&ls->lock);
        if (ls->accumulator == n) /* else another one replaced it while this count was 0 */
            ls->accumulator = NULL;
        pthread_mutex_unlock(&ls->lock);
        slot_weak_release(ls);
    }
    for (int i = 0; i < n->num_next; i++) {
        ops_node *c = n->next[i].node;
        if (c == NULL || __atomic_sub_fetch(&c->refcount, 1, __ATOMIC_ACQ_REL) != 0)
            continue;
        if (*len == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            ops_node **nw = realloc(*work, nc * sizeof **work);
            if (nw == NULL) { /* cannot defer: free it right here (recursion) */
                size_t l2 = 0, c2 = 0;
                ops_node **w2 = NULL;
                node_destroy(c, &w2, &l2, &c2);
                while (l2 > 0)
                    node_destroy(w2[--l2], &w2, &l2, &c2);
                free(w2);
                continue;
            }
            *work = nw;
            *cap = nc;
        }
        (*work)[(*len)++] = c;
    }
    ops_host_free(n->next);
    ops_host_free(n->in_meta);
    ops_host_free(n);
}

void
ops_node_release(ops_node *n)
{
    if (n == NULL || __atomic_sub_fetch(&n->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    ops_node **work = NULL;
    size_t len = 0, cap = 0;
    node_destroy(n, &work, &len, &cap);
    while (len > 0)
        node_destroy(work[--len], &work, &len, &cap);
    free(work);
}

const char *
ops_node_name(const ops_node *n)
{
    return n != NULL ? n->vt->name : "None";
}

int
ops_node_num_next(const ops_node *n)
{
    return n->num_next;
}

ops_node *
ops_node_next(const ops_node *n, int i, int *input_nr)
{
    if (i < 0 || i >= n->num_next)
        return NULL;
    if (input_nr != NULL)
        *input_nr = n->next[i].input_nr;
    return n->next[i].node;
}

/* A new reference to n unless its count already reached 0 (it is being destroyed,
 * by another thread that will find it no longer is its slot's accumulator). */
static bool
node_try_retain(ops_node *n)
{
    int64_t c = __atomic_load_n(&n->refcount, __ATOMIC_RELAXED);
    while (c > 0)
        if (__atomic_compare_exchange_n(&n->refcount, &c, c + 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    return false;
}

/* The AccumulateGrad of a leaf requiring grad: the existing one, or a new one.  Under
 * the slot's lock: threads recording ops on a shared leaf get one node between them,
 * and one that is dying is replaced, never revived. */
static ops_node *
leaf_accumulator(ops_tensor *leaf)
{
    autograd_meta *m = meta_of(leaf);
    if (m->leaf_acc != NULL) /* an unpacked saved leaf: its leaf's node */
        return ops_node_retain(m->leaf_acc);
    grad_slot *s = slot_get(m, accumulate_vt.name);
    if (s == NULL)
        return NULL;
    pthread_mutex_lock(&s->lock);
    ops_node *a = s->accumulator;
    if (a == NULL || !node_try_retain(a)) {
        a = ops_node_new(&accumulate_vt, sizeof(ops_node), 1, 0);
        if (a != NULL) {
            __atomic_add_fetch(&s->weak, 1, __ATOMIC_RELAXED);
            a->leaf_slot = s;
            ops_node_set_input_meta(a, 0, leaf);
            s->accumulator = a;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return a;
}

ops_status
ops_node_set_next(ops_node *n, int i, const ops_tensor *t)
{
    if (t == NULL || !ops_tensor_requires_grad(t))
        return OPS_OK;
    autograd_meta *m = meta_of(t);
    ops_status st = view_refresh((ops_tensor *)t);
    if (st != OPS_OK)
        return st;
    ops_node *target;
    if (m->grad_fn != NULL) {
        target = ops_node_retain(m->grad_fn);
        n->next[i].input_nr = m->output_nr;
    } else {
        target = leaf_accumulator((ops_tensor *)t);
        if (target == NULL)
            return ops_last_status();
        n->next[i].input_nr = 0;
    }
    ops_node_release(n->next[i].node);
    n->next[i].node = target;
    return OPS_OK;
}

void
ops_node_set_input_meta(ops_node *n, int i, const ops_tensor *t)
{
    ops_grad_meta *g = &n->in_meta[i];
    g->ndim = t->ndim;
    g->dtype = t->dtype;
    g->device = ops_tensor_device(t);
    memcpy(g->sizes, t->sizes, (size_t)t->ndim * sizeof t->sizes[0]);
}

ops_status
ops_autograd_set_history(ops_tensor *t, ops_node *n, int output_nr)
{
    autograd_meta *m = meta_get(t, n->vt->name);
    if (m == NULL)
        return ops_last_status();
    ops_node_release(m->grad_fn);
    m->grad_fn = ops_node_retain(n);
    m->output_nr = output_nr;
    m->requires_grad = false;
    ops_node_set_input_meta(n, output_nr, t);
    return OPS_OK;
}

bool
ops_autograd_any_requires_grad(int n, const ops_tensor *const *ts)
{
    if (grad_disabled)
        return false;
    for (int i = 0; i < n; i++)
        if (ts[i] != NULL && ts[i]->autograd != NULL && ops_tensor_requires_grad(ts[i]))
            return true;
    return false;
}

/* ---- saved values ------------------------------------------------------------- */

ops_status
ops_saved_save(ops_saved_tensor *s, const ops_tensor *t, bool is_output)
{
    memset(s, 0, sizeof *s);
    if (t == NULL)
        return OPS_OK;
    s->version = ops_tensor_version(t);
    s->is_output = is_output;
    if (is_output) {
        /* Without history: the output's grad_fn is the node saving it. */
        s->data = alias_without_history(t);
        if (s->data == NULL)
            return ops_last_status();
        s->output_nr = ops_tensor_output_nr(t);
    } else if (meta_of(t) != NULL && meta_of(t)->requires_grad && ops_tensor_is_leaf(t)) {
        /* A leaf requiring grad: under create_graph its .grad gets a graph holding
         * this node, so the node must not own the leaf (leaf -> grad -> node -> leaf
         * would never be freed).  An alias shares its storage (and version counter);
         * the leaf's AccumulateGrad is where the alias's gradient goes when unpacked
         * under grad mode. */
        if ((s->leaf_acc = leaf_accumulator((ops_tensor *)t)) == NULL)
            return ops_last_status();
        if ((s->data = alias_without_history(t)) == NULL) {
            ops_saved_release(s);
            return ops_last_status();
        }
    } else if (meta_of(t) != NULL && meta_of(t)->view_base != NULL && !meta_of(t)->requires_grad) {
        /* A view keeps its base alive: saved by a node of the base's own history (an
         * in-place op on another view of the same base) it would close a cycle.  The
         * saved value is an alias carrying the view's history instead (what a formula
         * differentiates through under create_graph).  A view the user marked as a
         * leaf requiring grad is kept itself: its AccumulateGrad is its own. */
        ops_tensor *v = (ops_tensor *)t;
        ops_status st = view_refresh(v);
        if (st != OPS_OK)
            return st;
        if ((s->data = alias_without_history(t)) == NULL)
            return ops_last_status();
        const autograd_meta *m = meta_of(t);
        if (m->grad_fn != NULL) {
            autograd_meta *am = meta_get(s->data, "save");
            if (am == NULL) {
                ops_saved_release(s);
                return ops_last_status();
            }
            am->grad_fn = ops_node_retain(m->grad_fn);
            am->output_nr = m->output_nr;
        }
    } else {
        s->data = ops_tensor_retain(t);
    }
    return OPS_OK;
}

static const char *const FREED_GRAPH_MSG =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

ops_status
ops_saved_unpack(ops_saved_tensor *s, ops_node *owner, ops_tensor **out)
{
    *out = NULL;
    if (owner->released)
        return ops_fail(OPS_ERR_VALUE, "%s: %s", owner->vt->name, FREED_GRAPH_MSG);
    if (s->data == NULL)
        return OPS_OK;
    uint64_t now = ops_tensor_version(s->data);
    if (now != s->version) {
        char b[OPS_SHAPE_STR_LEN];
        const char *src = s->is_output ? owner->vt->name
                                       : (ops_tensor_grad_fn(s->data) ? ops_node_name(ops_tensor_grad_fn(s->data))
                                                                      : NULL);
        char which[160];
        if (src != NULL)
            snprintf(which, sizeof which, ", which is output %d of %s,",
                     s->is_output ? s->output_nr : ops_tensor_output_nr(s->data), src);
        else
            which[0] = '\0';
        return ops_fail(OPS_ERR_VALUE,
                        "%s: one of the variables needed for gradient computation has been modified by an inplace "
                        "operation: [%s %s]%s is at version %" PRIu64 "; expected version %" PRIu64 " instead.",
                        owner->vt->name, ops_dtype_name(s->data->dtype),
                        ops_shape_str(s->data->ndim, s->data->sizes, b, sizeof b), which, now, s->version);
    }
    if ((!s->is_output && s->leaf_acc == NULL) || grad_disabled) {
        *out = ops_tensor_retain(s->data);
        return OPS_OK;
    }
    if (s->leaf_acc != NULL) {
        /* A saved leaf under create_graph: an alias that requires grad as the leaf
         * does, its gradient going to the leaf's AccumulateGrad. */
        ops_tensor *t = alias_without_history(s->data);
        autograd_meta *m = t != NULL ? meta_get(t, owner->vt->name) : NULL;
        if (m == NULL) {
            ops_tensor_release(t);
            return ops_last_status();
        }
        m->requires_grad = true;
        m->leaf_acc = ops_node_retain(s->leaf_acc);
        *out = t;
        return OPS_OK;
    }
    /* create_graph: the output gets its history back, so the backward formula that
     * uses it is differentiable too. */
    ops_tensor *t = alias_without_history(s->data);
    if (t == NULL)
        return ops_last_status();
    autograd_meta *m = meta_get(t, owner->vt->name);
    if (m == NULL) {
        ops_tensor_release(t);
        return ops_last_status();
    }
    m->grad_fn = ops_node_retain(owner);
    m->output_nr = s->output_nr;
    *out = t;
    return OPS_OK;
}

void
ops_saved_release(ops_saved_tensor *s)
{
    ops_tensor_release(s->data);
    s->data = NULL;
    ops_node_release(s->leaf_acc);
    s->leaf_acc = NULL;
}

/* ---- AccumulateGrad ----------------------------------------------------------- */

static _Thread_local bool accumulating_with_graph; /* create_graph of the running pass */

/* Adds grads[0] into the leaf's .grad.  Under the slot's lock, except for an out of
 * place sum (create_graph, or a .grad that itself requires grad): ops_add records it,
 * and recording may take this or another leaf's lock, so the sum is computed from the
 * gradient seen and published only if no other thread published one meanwhile (else
 * computed again from the new one). */
static ops_status
accumulate_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out)
{
    (void)out;
    grad_slot *s = n->leaf_slot;
    const ops_tensor *g = grads[0];
    if (s == NULL)
        return OPS_OK;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (s->refcount == 0) { /* the leaf is gone: nobody can see its gradient */
            pthread_mutex_unlock(&s->lock);
            return OPS_OK;
        }
        ops_status st = OPS_OK;
        if (s->grad == NULL) {
            /* The first gradient: kept as it is when the pass builds a graph, else as a
             * fresh copy, so later in-place accumulation cannot write into a tensor that
             * someone else (a hook, a saved value) holds -- unless nobody else can see it:
             * the engine's buffer holds the only reference to it and to its storage (a
             * result of the node before, as PyTorch's AccumulateGrad steals it). */
            const bool alone = g->refcount == 1 && g->autograd == NULL && g->storage->refcount == 1 &&
                               g->storage->allocator != NULL && ops_tensor_is_contiguous(g) &&
                               (size_t)ops_tensor_numel(g) * ops_dtype_itemsize(g->dtype) == g->storage->nbytes;
            ops_tensor *keep = accumulating_with_graph || alone ? ops_tensor_retain(g)
                               : (ops_tensor_is_contiguous(g) ? ops_clone(g, OPS_MEMORY_FORMAT_NONE)
                                                              : ops_contiguous(g, OPS_CONTIGUOUS_FORMAT));
            if (keep == NULL) {
                st = ops_last_status();
            } else {
                if (!accumulating_with_graph && keep->autograd != NULL)
                    ops_tensor_detach_(keep);
                s->grad = keep;
            }
            pthread_mutex_unlock(&s->lock);
            return st;
        }
        if (!accumulating_with_graph && !ops_tensor_requires_grad(s->grad)) {
            /* In place: concurrent passes into one leaf each add all of theirs
             * (nothing is recorded: grad mode is off without create_graph). */
            st = ops_add_(s->grad, g, OPS_SCALAR_INT(1));
            pthread_mutex_unlock(&s->lock);
            return st;
        }
        ops_tensor *old = ops_tensor_retain(s->grad);
        pthread_mutex_unlock(&s->lock);
        ops_tensor *sum = ops_add(old, g, OPS_SCALAR_INT(1));
        if (sum == NULL) {
            ops_tensor_release(old);
            return ops_last_status();
        }
        pthread_mutex_lock(&s->lock);
        const bool published = s->refcount > 0 && s->grad == old;
        if (published)
            s->grad = sum;
        pthread_mutex_unlock(&s->lock);
        ops_tensor_release(old);
        if (published) {
            ops_tensor_release(old); /* the slot's reference */
            return OPS_OK;
        }
        ops_tensor_release(sum);
    }
}

/* ---- the backward pass ---------------------------------------------------------- */

typedef struct task_node {
    ops_node *node;
    int deps;          /* edges into it from collected nodes not yet run */
    bool needed;       /* runs (autograd_grad: leads to a requested input) */
    ops_tensor **buf;  /* num_inputs gradient buffers */
} task_node;

typedef struct task {
    task_node *nodes;
    size_t len, cap;
    size_t *slots; /* open-addressing map node -> index + 1 */
    size_t nslots;
} task;

static size_t
hash_ptr(const void *p, size_t nslots)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)(x & (nslots - 1));
}

static ssize_t
task_find(const task *tk, const ops_node *n)
{
    for (size_t h = hash_ptr(n, tk->nslots);; h = (h + 1) & (tk->nslots - 1)) {
        size_t v = tk->slots[h];
        if (v == 0)
            return -1;
        if (tk->nodes[v - 1].node == n)
            return (ssize_t)(v - 1);
    }
}

static ops_status
task_grow_map(task *tk)
{
    size_t ns = tk->nslots ? tk->nslots * 2 : 64;
    size_t *slots = ops_host_malloc(ns * sizeof *slots);
    if (slots == NULL)
        return ops_fail(OPS_ERR_OOM, "backward: out of memory");
    memset(slots, 0, ns * sizeof *slots);
    for (size_t i = 0; i < tk->len; i++) {
        size_t h = hash_ptr(tk->nodes[i].node, ns);
        while (slots[h] != 0)
            h = (h + 1) & (ns - 1);
        slots[h] = i + 1;
    }
    ops_host_free(tk->slots);
    tk->slots = slots;
    tk->nslots = ns;
    return OPS_OK;
}

/* Index of n in the task, adding it (with zeroed state) when new; -1 on OOM. */
static ssize_t
task_add(task *tk, ops_node *n, bool *added)
{
    *added = false;
    if (tk->nslots != 0) {
        ssize_t i = task_find(tk, n);
        if (i >= 0)
            return i;
    }
    if ((tk->len + 1) * 2 > tk->nslots && task_grow_map(tk) != OPS_OK)
        return -1;
    if (tk->len == tk->cap) {
        size_t nc = tk->cap ? tk->cap * 2 : 32;
        task_node *nn = ops_host_realloc(tk->nodes, nc * sizeof *nn);
        if (nn == NULL) {
            ops_fail(OPS_ERR_OOM, "backward: out of memory");
            return -1;
        }
        tk->nodes = nn;
        tk->cap = nc;
    }
    ops_tensor **buf = NULL;
    if (n->num_inputs > 0) {
        buf = ops_host_malloc((size_t)n->num_inputs * sizeof *buf);
        if (buf == NULL) {
            ops_fail(OPS_ERR_OOM, "backward: out of memory");
            return -1;
        }
        memset(buf, 0, (size_t)n->num_inputs * sizeof *buf);
    }
    tk->nodes[tk->len] = (task_node){.node = n, .buf = buf};
    size_t h = hash_ptr(n, tk->nslots);
    while (tk->slots[h] != 0)
        h = (h + 1) & (tk->nslots - 1);
    tk->slots[h] = tk->len + 1;
    *added = true;
    return (ssize_t)tk->len++;
}

static void
task_free(task *tk)
{
    for (size_t i = 0; i < tk->len; i++) {
        task_node *tn = &tk->nodes[i];
        for (int k = 0; k < tn->node->num_inputs; k++)
            ops_tensor_release(tn->buf[k]);
        ops_host_free(tn->buf);
    }
    ops_host_free(tk->nodes);
    ops_host_free(tk->slots);
}

/* Adds g into a gradient buffer (g borrowed). */
static ops_status
buffer_add(ops_tensor **slot, const ops_tensor *g)
{
    if (*slot == NULL) {
        *slot = ops_tensor_retain(g);
        return OPS_OK;
    }
    ops_tensor *sum = ops_add(*slot, g, OPS_SCALAR_INT(1));
    if (sum == NULL)
        return ops_last_status();
    ops_tensor_release(*slot);
    *slot = sum;
    return OPS_OK;
}

static ops_status
check_grad(const ops_node *n, int k, const ops_tensor *g, const char *what)
{
    const ops_grad_meta *m = &n->in_meta[k];
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (g->ndim != m->ndim || memcmp(g->sizes, m->sizes, (size_t)m->ndim * sizeof m->sizes[0]) != 0)
        return ops_fail(OPS_ERR_VALUE, "%s: %s %d has shape %s but expected shape %s", ops_node_name(n), what, k,
                        ops_shape_str(g->ndim, g->sizes, b1, sizeof b1),
                        ops_shape_str(m->ndim, m->sizes, b2, sizeof b2));
    if (g->dtype != m->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: %s %d has dtype %s but expected %s", ops_node_name(n), what, k,
                        ops_dtype_name(g->dtype), ops_dtype_name(m->dtype));
    if (!ops_device_equal(ops_tensor_device(g), m->device)) {
        char d1[32], d2[32];
        return ops_fail(OPS_ERR_DEVICE, "%s: %s %d is on %s but expected %s", ops_node_name(n), what, k,
                        ops_device_str(ops_tensor_device(g), d1, sizeof d1), ops_device_str(m->device, d2, sizeof d2));
    }
    return OPS_OK;
}

/* Runs hooks registered for gradient slot k of n (replacing buf[k] as they ask). */
static ops_status
run_node_hooks(ops_node *n, int k, ops_tensor **buf)
{
    for (ops_node_hook *h = n->hooks; h != NULL; h = h->next) {
        if (h->input_nr != k || buf[k] == NULL)
            continue;
        if (h->fn == NULL) { /* retain_grad */
            ops_tensor *keep = accumulating_with_graph ? ops_tensor_retain(buf[k]) : ops_tensor_detach(buf[k]);
            if (keep == NULL)
                return ops_last_status();
            pthread_mutex_lock(&h->slot->lock); /* against ops_tensor_grad from another thread */
            ops_tensor *old = h->slot->grad;
            h->slot->grad = keep;
            pthread_mutex_unlock(&h->slot->lock);
            ops_tensor_release(old);
            continue;
        }
        ops_tensor *rep = NULL;
        ops_status st = h->fn(buf[k], &rep, h->ctx);
        if (st != OPS_OK) {
            ops_tensor_release(rep);
            return st;
        }
        if (rep != NULL) {
            st = check_grad(n, k, rep, "hook returned a gradient for input");
            if (st != OPS_OK) {
                ops_tensor_release(rep);
                return st;
            }
            ops_tensor_release(buf[k]);
            buf[k] = rep;
        }
    }
    return OPS_OK;
}

/* Leaf hooks run before the gradient is accumulated (or captured).  They run on a
 * copy of the list taken under the slot's lock, outside it (a hook may use the leaf
 * or register hooks); one removed meanwhile by another thread may run once more. */
static ops_status
run_leaf_hooks(ops_node *acc, ops_tensor **buf)
{
    grad_slot *s = acc->leaf_slot;
    if (s == NULL)
        return OPS_OK;
    typedef struct {
        ops_grad_hook_fn fn;
        void *ctx;
    } hook_call;
    hook_call local[8], *calls = local;
    size_t nh = 0;
    pthread_mutex_lock(&s->lock);
    for (tensor_hook *h = s->hooks; h != NULL; h = h->next)
        nh++;
    if (nh > sizeof local / sizeof local[0] && (calls = ops_host_malloc(nh * sizeof *calls)) == NULL) {
        pthread_mutex_unlock(&s->lock);
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", acc->vt->name);
    }
    nh = 0;
    for (tensor_hook *h = s->hooks; h != NULL; h = h->next)
        calls[nh++] = (hook_call){h->fn, h->ctx};
    pthread_mutex_unlock(&s->lock);
    ops_status st = OPS_OK;
    for (size_t i = 0; i < nh && st == OPS_OK; i++) {
        ops_tensor *rep = NULL;
        st = calls[i].fn(buf[0], &rep, calls[i].ctx);
        if (st != OPS_OK) {
            ops_tensor_release(rep);
            break;
        }
        if (rep != NULL) {
            st = check_grad(acc, 0, rep, "hook returned a gradient for input");
            if (st != OPS_OK) {
                ops_tensor_release(rep);
                break;
            }
            ops_tensor_release(buf[0]);
            buf[0] = rep;
        }
    }
    if (calls != local)
        ops_host_free(calls);
    return st;
}

static ops_tensor *
zeros_for(const ops_grad_meta *m)
{
    return ops_zeros((ops_int_list){m->sizes, m->ndim}, m->dtype, m->device);
}

/* Where the gradient for t flows into: (node, slot), or node NULL if nowhere. */
static ops_status
gradient_edge(const ops_tensor *t, ops_node **node, int *slot)
{
    *node = NULL;
    *slot = 0;
    if (!ops_tensor_requires_grad(t))
        return OPS_OK;
    autograd_meta *m = meta_of(t);
    ops_status st = view_refresh((ops_tensor *)t);
    if (st != OPS_OK)
        return st;
    if (m->grad_fn != NULL) {
        *node = ops_node_retain(m->grad_fn);
        *slot = m->output_nr;
        return OPS_OK;
    }
    *node = leaf_accumulator((ops_tensor *)t);
    return *node != NULL ? OPS_OK : ops_last_status();
}

typedef struct capture {
    ops_node *node; /* owned */
    int slot;
    ops_tensor *grad;
} capture;

/* The pass shared by ops_backward and ops_autograd_grad.  roots: n outputs and their
 * seed gradients (owned by the caller); caps: NULL (accumulate into leaves) or ncaps
 * requested inputs. */
static ops_status
run_backward(const char *op, int n, const ops_tensor *const *outs, ops_tensor *const *seeds, bool retain_graph,
             bool create_graph, capture *caps, int ncaps)
{
    task tk = {0};
    ops_status st = OPS_OK;
    ops_node **stack = NULL;
    size_t sp = 0, scap = 0;
    size_t *order = NULL;
    ops_node **root_nodes = NULL;
    int *root_slots = NULL;
    const bool prev_mode = ops_set_grad_enabled(create_graph);
    const bool prev_graph = accumulating_with_graph;
    accumulating_with_graph = create_graph;
    retain_graph = retain_graph || create_graph;

    root_nodes = ops_host_malloc((size_t)(n > 0 ? n : 1) * sizeof *root_nodes);
    if (root_nodes != NULL) /* zeroed at once: done releases its entries */
        memset(root_nodes, 0, (size_t)(n > 0 ? n : 1) * sizeof *root_nodes);
    root_slots = ops_host_malloc((size_t)(n > 0 ? n : 1) * sizeof *root_slots);
    if (root_nodes != NULL) /* released at done: no garbage when root_slots failed */
        memset(root_nodes, 0, (size_t)(n > 0 ? n : 1) * sizeof *root_nodes);
    if (root_nodes == NULL || root_slots == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if ((st = gradient_edge(outs[i], &root_nodes[i], &root_slots[i])) != OPS_OK)
            goto done;
        if (root_nodes[i] == NULL) {
            st = ops_fail(OPS_ERR_VALUE, "%s: element %d of tensors does not require grad and does not have a grad_fn",
                          op, i);
            goto done;
        }
    }

    /* 1. Collect reachable nodes and count incoming edges. */
    for (int i = 0; i < n; i++) {
        bool added;
        ssize_t k = task_add(&tk, root_nodes[i], &added);
        if (k < 0) {
            st = ops_last_status();
            goto done;
        }
        if (!added)
            continue;
        if (sp == scap) {
            scap = scap ? scap * 2 : 64;
            ops_node **ns = ops_host_realloc(stack, scap * sizeof *ns);
            if (ns == NULL) {
                st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
                goto done;
            }
            stack = ns;
        }
        stack[sp++] = root_nodes[i];
        while (sp > 0) {
            ops_node *cur = stack[--sp];
            for (int e = 0; e < cur->num_next; e++) {
                ops_node *c = cur->next[e].node;
                if (c == NULL)
                    continue;
                bool add2;
                ssize_t j = task_add(&tk, c, &add2);
                if (j < 0) {
                    st = ops_last_status();
                    goto done;
                }
                tk.nodes[j].deps++;
                if (!add2)
                    continue;
                if (sp == scap) {
                    scap = scap ? scap * 2 : 64;
                    ops_node **ns = ops_host_realloc(stack, scap * sizeof *ns);
                    if (ns == NULL) {
                        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
                        goto done;
                    }
                    stack = ns;
                }
                stack[sp++] = c;
            }
        }
    }

    /* 2. Topological order (Kahn): a node after every node with an edge into it. */
    order = ops_host_malloc((tk.len ? tk.len : 1) * sizeof *order);
    if (order == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    {
        int *deps = ops_host_malloc((tk.len ? tk.len : 1) * sizeof *deps);
        if (deps == NULL) {
            st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
            goto done;
        }
        size_t head = 0, tail = 0;
        for (size_t i = 0; i < tk.len; i++) {
            deps[i] = tk.nodes[i].deps;
            if (deps[i] == 0)
                order[tail++] = i;
        }
        while (head < tail) {
            ops_node *cur = tk.nodes[order[head++]].node;
            for (int e = 0; e < cur->num_next; e++) {
                if (cur->next[e].node == NULL)
                    continue;
                ssize_t j = task_find(&tk, cur->next[e].node);
                if (--deps[j] == 0)
                    order[tail++] = (size_t)j;
            }
        }
        ops_host_free(deps);
    }

    /* 3. What runs: everything (backward), or what leads to a requested input. */
    for (size_t i = 0; i < tk.len; i++)
        tk.nodes[i].needed = caps == NULL;
    if (caps != NULL) {
        for (int c = 0; c < ncaps; c++) {
            if (caps[c].node == NULL)
                continue;
            ssize_t j = task_find(&tk, caps[c].node);
            if (j >= 0)
                tk.nodes[j].needed = true;
        }
        for (size_t r = tk.len; r-- > 0;) {
            task_node *tn = &tk.nodes[order[r]];
            for (int e = 0; e < tn->node->num_next && !tn->needed; e++) {
                ops_node *c = tn->node->next[e].node;
                if (c != NULL && tk.nodes[task_find(&tk, c)].needed)
                    tn->needed = true;
            }
        }
    }

    /* Seed the roots' buffers. */
    for (int i = 0; i < n; i++) {
        ssize_t j = task_find(&tk, root_nodes[i]);
        if ((st = buffer_add(&tk.nodes[j].buf[root_slots[i]], seeds[i])) != OPS_OK)
            goto done;
    }

    /* 4. Run. */
    for (size_t r = 0; r < tk.len; r++) {
        task_node *tn = &tk.nodes[order[r]];
        ops_node *node = tn->node;
        if (!tn->needed)
            continue;
        bool any = false;
        for (int k = 0; k < node->num_inputs; k++)
            any = any || tn->buf[k] != NULL;
        if (!any)
            continue;
        for (int k = 0; k < node->num_inputs; k++)
            if ((st = run_node_hooks(node, k, tn->buf)) != OPS_OK)
                goto done;
        if (node->vt == &accumulate_vt && (st = run_leaf_hooks(node, tn->buf)) != OPS_OK)
            goto done;
        if (caps != NULL) {
            for (int c = 0; c < ncaps; c++) {
                if (caps[c].node == node && tn->buf[caps[c].slot] != NULL && caps[c].grad == NULL)
                    caps[c].grad = ops_tensor_retain(tn->buf[caps[c].slot]);
            }
            if (node->vt == &accumulate_vt)
                continue; /* autograd_grad never touches .grad */
        }
        for (int k = 0; k < node->num_inputs; k++) {
            if (tn->buf[k] == NULL && (tn->buf[k] = zeros_for(&node->in_meta[k])) == NULL) {
                st = ops_last_status();
                goto done;
            }
        }
        if (node->released && node->vt->release_saved != NULL) {
            st = ops_fail(OPS_ERR_VALUE, "%s: %s", node->vt->name, FREED_GRAPH_MSG);
            goto done;
        }
        ops_tensor *outg[64];
        ops_tensor **outv = node->num_next <= 64 ? outg : ops_host_malloc((size_t)node->num_next * sizeof *outv);
        if (outv == NULL) {
            st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
            goto done;
        }
        memset(outv, 0, (size_t)node->num_next * sizeof *outv);
        st = node->vt->apply(node, tn->buf, outv);
        for (int e = 0; e < node->num_next && st == OPS_OK; e++) {
            ops_node *c = node->next[e].node;
            if (c == NULL || outv[e] == NULL)
                continue;
            ssize_t j = task_find(&tk, c);
            const ops_grad_meta *want = &c->in_meta[node->next[e].input_nr];
            const bool moved = !ops_device_equal(ops_tensor_device(outv[e]), want->device);
            if (moved || (outv[e]->dtype != want->dtype && ops_dtype_is_floating(outv[e]->dtype))) {
                /* A promoted computation (float32 input, float64 other): the gradient
                 * goes back in the input's dtype.  A device move (to(device), cpu()):
                 * back to the input's device, as PyTorch's validate_outputs does. */
                ops_tensor *cast = ops_to_device(outv[e], want->device,
                                                 ops_dtype_is_floating(outv[e]->dtype) ? want->dtype : outv[e]->dtype,
                                                 false, false, OPS_MEMORY_FORMAT_NONE);
                if (cast == NULL) {
                    st = ops_last_status();
                    break;
                }
                ops_tensor_release(outv[e]);
                outv[e] = cast;
            }
            if ((st = check_grad(c, node->next[e].input_nr, outv[e], "gradient for input")) != OPS_OK) {
                ops_fail(st, "%s: returned an invalid gradient at index %d: %s", node->vt->name, e,
                         ops_last_error());
                break;
            }
            st = buffer_add(&tk.nodes[j].buf[node->next[e].input_nr], outv[e]);
        }
        for (int e = 0; e < node->num_next; e++)
            ops_tensor_release(outv[e]);
        if (outv != outg)
            ops_host_free(outv);
        if (st != OPS_OK)
            goto done;
        for (int k = 0; k < node->num_inputs; k++) {
            ops_tensor_release(tn->buf[k]);
            tn->buf[k] = NULL;
        }
        if (!retain_graph && node->vt->release_saved != NULL) {
            node->vt->release_saved(node);
            node->released = true;
        }
    }

done:
    /* The task first: it reads its nodes, and a root may be a leaf's AccumulateGrad
     * that only root_nodes keeps alive (backward called on a leaf). */
    task_free(&tk);
    for (int i = 0; root_nodes != NULL && i < n; i++)
        ops_node_release(root_nodes[i]);
    ops_host_free(root_nodes);
    ops_host_free(root_slots);
    ops_host_free(stack);
    ops_host_free(order);
    accumulating_with_graph = prev_graph;
    ops_set_grad_enabled(prev_mode);
    return st;
}

/* The seed gradient of an output: the given one (checked), or ones for one element. */
static ops_status
make_seed(const char *op, int i, const ops_tensor *out, const ops_tensor *given, ops_tensor **seed)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (given == NULL) {
        if (ops_tensor_numel(out) != 1)
            return ops_fail(OPS_ERR_VALUE, "%s: grad can be implicitly created only for scalar outputs (output %d "
                            "has shape %s)", op, i, ops_shape_str(out->ndim, out->sizes, b1, sizeof b1));
        *seed = ops_ones_like(out, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
        return *seed != NULL ? OPS_OK : ops_last_status();
    }
    if (!same_shape(out, given))
        return ops_fail(OPS_ERR_VALUE, "%s: Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a "
                        "shape of %s.", op, i, ops_shape_str(given->ndim, given->sizes, b1, sizeof b1), i,
                        ops_shape_str(out->ndim, out->sizes, b2, sizeof b2));
    if (given->dtype != out->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: grad_output[%d] has dtype %s but output[%d] has dtype %s", op, i,
                        ops_dtype_name(given->dtype), i, ops_dtype_name(out->dtype));
    *seed = ops_tensor_retain(given);
    return OPS_OK;
}

ops_status
ops_backward(const ops_tensor *output, const ops_tensor *gradient, bool retain_graph, bool create_graph)
{
    const char *op = "backward";
    if (output == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor must not be NULL", op);
    if (!ops_tensor_requires_grad(output))
        return ops_fail(OPS_ERR_VALUE, "%s: element 0 of tensors does not require grad and does not have a grad_fn",
                        op);
    ops_tensor *seed = NULL;
    ops_status st = make_seed(op, 0, output, gradient, &seed);
    if (st != OPS_OK)
        return st;
    st = run_backward(op, 1, &output, &seed, retain_graph, create_graph, NULL, 0);
    ops_tensor_release(seed);
    return st;
}

ops_status
ops_autograd_grad(ops_tensor_list outputs, ops_tensor_list inputs, ops_tensor_list grad_outputs, bool retain_graph,
                  bool create_graph, bool allow_unused, ops_tensor_vec *result)
{
    const char *op = "autograd.grad";
    ops_status st = OPS_OK;
    ops_tensor **seeds = NULL;
    capture *caps = NULL;
    ops_tensor_vec res = {0};
    if (result == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: result must not be NULL", op);
    if (outputs.len <= 0 || outputs.data == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: grad requires at least one output", op);
    if (inputs.len <= 0 || inputs.data == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: grad requires at least one input", op);
    if (grad_outputs.len != 0 && grad_outputs.len != outputs.len)
        return ops_fail(OPS_ERR_VALUE, "%s: grad_outputs has %" PRId64 " elements, outputs %" PRId64, op,
                        grad_outputs.len, outputs.len);
    for (int64_t i = 0; i < inputs.len; i++) {
        if (inputs.data[i] == NULL || !ops_tensor_requires_grad(inputs.data[i]))
            return ops_fail(OPS_ERR_VALUE, "%s: One of the differentiated Tensors (input %" PRId64
                            ") does not require grad", op, i);
    }
    for (int64_t i = 0; i < outputs.len; i++) {
        if (outputs.data[i] == NULL || !ops_tensor_requires_grad(outputs.data[i]))
            return ops_fail(OPS_ERR_VALUE, "%s: element %" PRId64
                            " of tensors does not require grad and does not have a grad_fn", op, i);
    }
    /* each zeroed as soon as it exists: the cleanup below walks whichever one did */
    seeds = ops_host_malloc((size_t)outputs.len * sizeof *seeds);
    if (seeds != NULL)
        memset(seeds, 0, (size_t)outputs.len * sizeof *seeds);
    caps = ops_host_malloc((size_t)inputs.len * sizeof *caps);
    if (caps != NULL)
        memset(caps, 0, (size_t)inputs.len * sizeof *caps);
    if (seeds == NULL || caps == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    for (int64_t i = 0; i < outputs.len; i++) {
        const ops_tensor *g = grad_outputs.len ? grad_outputs.data[i] : NULL;
        if ((st = make_seed(op, (int)i, outputs.data[i], g, &seeds[i])) != OPS_OK)
            goto done;
    }
    for (int64_t i = 0; i < inputs.len; i++)
        if ((st = gradient_edge(inputs.data[i], &caps[i].node, &caps[i].slot)) != OPS_OK)
            goto done;
    st = run_backward(op, (int)outputs.len, outputs.data, seeds, retain_graph, create_graph, caps, (int)inputs.len);
    if (st != OPS_OK)
        goto done;
    for (int64_t i = 0; i < inputs.len; i++) {
        if (caps[i].grad == NULL && !allow_unused) {
            st = ops_fail(OPS_ERR_VALUE, "%s: One of the differentiated Tensors (input %" PRId64 ") appears to not "
                          "have been used in the graph. Set allow_unused=True if this is the desired behavior.",
                          op, i);
            goto done;
        }
    }
    if ((st = ops_tensor_vec_init(op, &res, inputs.len)) != OPS_OK)
        goto done;
    for (int64_t i = 0; i < inputs.len; i++) {
        res.data[i] = caps[i].grad;
        caps[i].grad = NULL;
    }
    *result = res;
done:
    for (int64_t i = 0; seeds != NULL && i < outputs.len; i++)
        ops_tensor_release(seeds[i]);
    for (int64_t i = 0; caps != NULL && i < inputs.len; i++) {
        ops_node_release(caps[i].node);
        ops_tensor_release(caps[i].grad);
    }
    ops_host_free(seeds);
    ops_host_free(caps);
    return st;
}

/* ---- views and in-place writes through them (PyTorch's view rebase) ------------------ */

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
static ops_status
view_refresh(ops_tensor *t)
{
    autograd_meta *m = meta_of(t);
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
    if (grad_disabled)
        return r;
    const autograd_meta *sm = meta_of(self);
    ops_tensor *base = sm != NULL && sm->view_base != NULL ? sm->view_base : (ops_tensor *)self;
    autograd_meta *m = meta_get(r, "view");
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
            meta_of(v->data[i])->view_multi = true;
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
    autograd_meta *m = meta_of(self);
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

/* ---- helpers of the generated layer ------------------------------------------- */

ops_tensor *
ops_autograd_reduce_to(const ops_tensor *g, int ndim, const int64_t *sizes)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (g->ndim == ndim && memcmp(g->sizes, sizes, (size_t)ndim * sizeof sizes[0]) == 0)
        return ops_tensor_retain(g);
    const int lead = g->ndim - ndim;
    if (lead < 0)
        return ops_fail_null(OPS_ERR_VALUE, "reduce_to: gradient of shape %s cannot be summed to shape %s",
                             ops_shape_str(g->ndim, g->sizes, b1, sizeof b1), ops_shape_str(ndim, sizes, b2, sizeof b2));
    int64_t dims[OPS_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < g->ndim; i++) {
        if (i < lead || (sizes[i - lead] == 1 && g->sizes[i] != 1))
            dims[nd++] = i;
        else if (sizes[i - lead] != g->sizes[i])
            return ops_fail_null(OPS_ERR_VALUE, "reduce_to: gradient of shape %s cannot be summed to shape %s",
                                 ops_shape_str(g->ndim, g->sizes, b1, sizeof b1),
                                 ops_shape_str(ndim, sizes, b2, sizeof b2));
    }
    ops_int_list dl = {dims, nd};
    /* Only leading dims summed (a bias's gradient): sum_dim gives the shape at once,
     * without the keepdim result and the reshape view over it. */
    const bool only_lead = nd == lead;
    ops_tensor *s = ops_sum_dim(g, &dl, !only_lead, OPS_DTYPE_NONE);
    if (s == NULL || lead == 0 || only_lead)
        return s;
    ops_tensor *r = ops_reshape(s, (ops_int_list){sizes, ndim});
    ops_tensor_release(s);
    return r;
}

static bool
differentiable_dtype(const ops_tensor *t)
{
    return t != NULL && ops_dtype_is_floating(t->dtype);
}

static ops_status
not_implemented(const char *op)
{
    return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: the derivative for '%s' is not implemented.", op, op);
}

ops_tensor *
ops_autograd_no_formula(const char *op, ops_tensor *result)
{
    if (!differentiable_dtype(result))
        return result;
    ops_tensor_release(result);
    not_implemented(op);
    return NULL;
}

ops_status
ops_autograd_no_formula_outs(const char *op, int n, ops_tensor **const *outs)
{
    bool bad = false;
    for (int i = 0; i < n; i++)
        bad = bad || differentiable_dtype(*outs[i]);
    if (!bad)
        return OPS_OK;
    for (int i = 0; i < n; i++) {
        ops_tensor_release(*outs[i]);
        *outs[i] = NULL;
    }
    return not_implemented(op);
}

ops_status
ops_autograd_no_formula_vec(const char *op, ops_tensor_vec *v)
{
    for (int64_t i = 0; i < v->len; i++) {
        if (differentiable_dtype(v->data[i])) {
            ops_tensor_vec_release(v);
            return not_implemented(op);
        }
    }
    return OPS_OK;
}

ops_status
ops_autograd_out_error(const char *op)
{
    return ops_fail(OPS_ERR_VALUE, "%s: functions with out=... arguments don't support automatic differentiation, "
                    "but one of the arguments requires grad.", op);
}

ops_status
ops_autograd_check_inplace(const char *op, const ops_tensor *self)
{
    if (ops_tensor_is_leaf(self) && ops_tensor_requires_grad(self))
        return ops_fail(OPS_ERR_VALUE, "%s: a leaf Variable that requires grad is being used in an in-place "
                        "operation.", op);
    const autograd_meta *m = meta_of(self);
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

ops_status
ops_autograd_inplace_no_formula(const char *op, const ops_tensor *self)
{
    if (!differentiable_dtype(self))
        return OPS_OK;
    ops_status st = ops_autograd_check_inplace(op, self);
    return st != OPS_OK ? st : not_implemented(op);
}

bool
ops_autograd_reduced_dims(const char *op, int ndim, const ops_int_list *dim, bool *flags)
{
    memset(flags, 0, OPS_MAX_DIMS * sizeof *flags);
    if (dim == NULL || dim->len == 0) {
        for (int i = 0; i < ndim; i++)
            flags[i] = true;
        return true;
    }
    for (int64_t i = 0; i < dim->len; i++) {
        int64_t d = dim->data[i];
        if (!ops_wrap_dim(op, "dim", &d, ndim > 0 ? ndim : 1))
            return false;
        if (ndim > 0)
            flags[d] = true;
    }
    return true;
}

ops_tensor *
ops_autograd_sum_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_int_list *dim, bool keepdim)
{
    bool flags[OPS_MAX_DIMS + 1];
    if (!ops_autograd_reduced_dims("sum_backward", ndim, dim, flags))
        return NULL;
    int64_t shape[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        shape[i] = flags[i] ? 1 : sizes[i];
    /* grad has the reduced dims dropped unless keepdim: put them back as size 1 */
    ops_tensor *k = keepdim ? ops_tensor_retain(g) : ops_reshape(g, (ops_int_list){shape, ndim});
    if (k == NULL)
        return NULL;
    ops_tensor *e = ops_expand(k, (ops_int_list){sizes, ndim}, false);
    ops_tensor_release(k);
    return e;
}

ops_tensor *
ops_autograd_mean_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_int_list *dim, bool keepdim)
{
    bool flags[OPS_MAX_DIMS + 1];
    if (!ops_autograd_reduced_dims("mean_backward", ndim, dim, flags))
        return NULL;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= flags[i] ? sizes[i] : 1;
    ops_tensor *e = ops_autograd_sum_backward(g, ndim, sizes, dim, keepdim);
    if (e == NULL)
        return NULL;
    ops_tensor *r = ops_div_scalar(e, OPS_SCALAR_INT(n));
    ops_tensor_release(e);
    return r;
}

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

/* select_backward, slice_backward and narrow_backward: runtime/autograd_index.c. */

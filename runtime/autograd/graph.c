/* Recording the backward graph: grad mode, the lifetime of nodes (a chain of any length
 * is freed without recursion), their edges to the nodes that produced their inputs, a
 * leaf's one AccumulateGrad, and the history a result gets (ops_autograd_set_history).
 * The structures are in ops_autograd_impl.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_engine.h"

/* ---- grad mode ---------------------------------------------------------------- */

_Thread_local bool ops_ag_grad_disabled; /* zero-initialised: grad mode is on */

bool
ops_grad_enabled(void)
{
    return !ops_ag_grad_disabled;
}

bool
ops_set_grad_enabled(bool enabled)
{
    bool prev = !ops_ag_grad_disabled;
    ops_ag_grad_disabled = !enabled;
    return prev;
}

/* ---- nodes ------------------------------------------------------------------------ */

static uint64_t next_node_seq = 1; /* atomic */

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
        ops_ag_node_hook_unref(h);
    }
    grad_slot *ls = n->leaf_slot;
    if (ls != NULL) {
        pthread_mutex_lock(&ls->lock);
        if (ls->accumulator == n) /* else another one replaced it while this count was 0 */
            ls->accumulator = NULL;
        pthread_mutex_unlock(&ls->lock);
        ops_ag_slot_weak_release(ls);
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
ops_node *
ops_ag_leaf_accumulator(ops_tensor *leaf)
{
    autograd_meta *m = ops_ag_meta_of(leaf);
    if (m->leaf_acc != NULL) /* an unpacked saved leaf: its leaf's node */
        return ops_node_retain(m->leaf_acc);
    grad_slot *s = ops_ag_slot_get(m, ops_ag_accumulate_vt.name);
    if (s == NULL)
        return NULL;
    pthread_mutex_lock(&s->lock);
    ops_node *a = s->accumulator;
    if (a == NULL || !node_try_retain(a)) {
        a = ops_node_new(&ops_ag_accumulate_vt, sizeof(ops_node), 1, 0);
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
    autograd_meta *m = ops_ag_meta_of(t);
    ops_status st = ops_ag_view_refresh((ops_tensor *)t);
    if (st != OPS_OK)
        return st;
    ops_node *target;
    if (m->grad_fn != NULL) {
        target = ops_node_retain(m->grad_fn);
        n->next[i].input_nr = m->output_nr;
    } else {
        target = ops_ag_leaf_accumulator((ops_tensor *)t);
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
    autograd_meta *m = ops_ag_meta_get(t, n->vt->name);
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
    if (ops_ag_grad_disabled)
        return false;
    for (int i = 0; i < n; i++)
        if (ts[i] != NULL && ts[i]->autograd != NULL && ops_tensor_requires_grad(ts[i]))
            return true;
    return false;
}

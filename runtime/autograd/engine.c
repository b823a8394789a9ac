/* The backward pass (ops_backward, ops_autograd_grad) and AccumulateGrad, the node that
 * adds a gradient into a leaf's .grad (include/libops/ops_autograd.h).
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

#include "ops_autograd_engine.h"

#if __has_include("ops_functions.h")
#include "ops_op_add.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_ones_like.h"
#include "ops_op_to.h"
#include "ops_op_zeros.h"
#endif

/* ---- AccumulateGrad ----------------------------------------------------------- */

static _Thread_local bool accumulating_with_graph; /* create_graph of the running pass */

static ops_status accumulate_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out);

const ops_node_vtable ops_ag_accumulate_vt = {"AccumulateGrad", accumulate_apply, NULL};

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

/* Calls one hook on *g, replacing *g with what it returns (checked against slot k
 * of n). */
static ops_status
call_hook(ops_node *n, int k, ops_grad_hook_fn fn, void *ctx, ops_tensor **g)
{
    ops_tensor *rep = NULL;
    ops_status st = fn(*g, &rep, ctx);
    if (st == OPS_OK && rep != NULL && (st = check_grad(n, k, rep, "hook returned a gradient for input")) == OPS_OK) {
        ops_tensor_release(*g);
        *g = rep;
        rep = NULL;
    }
    ops_tensor_release(rep);
    return st;
}

/* Runs hooks registered for gradient slot k of n (replacing buf[k] as they ask), in
 * registration order.  They run from a snapshot holding a reference to each: a hook
 * may remove itself or another (the snapshot still runs those once) or register more
 * (they run from the next pass on). */
static ops_status
run_node_hooks(ops_node *n, int k, ops_tensor **buf)
{
    if (buf[k] == NULL)
        return OPS_OK;
    ops_node_hook *local[8], **snap = local;
    size_t nh = 0;
    for (ops_node_hook *h = n->hooks; h != NULL; h = h->next)
        nh += h->input_nr == k;
    if (nh == 0)
        return OPS_OK;
    if (nh > sizeof local / sizeof local[0] && (snap = ops_host_malloc(nh * sizeof *snap)) == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", ops_node_name(n));
    nh = 0;
    for (ops_node_hook *h = n->hooks; h != NULL; h = h->next) {
        if (h->input_nr == k) {
            __atomic_add_fetch(&h->refcount, 1, __ATOMIC_RELAXED);
            snap[nh++] = h;
        }
    }
    ops_status st = OPS_OK;
    for (size_t i = 0; i < nh && st == OPS_OK; i++) {
        ops_node_hook *h = snap[i];
        if (h->fn == NULL) { /* retain_grad */
            ops_tensor *keep = accumulating_with_graph ? ops_tensor_retain(buf[k]) : ops_tensor_detach(buf[k]);
            if (keep == NULL) {
                st = ops_last_status();
                break;
            }
            pthread_mutex_lock(&h->slot->lock); /* against ops_tensor_grad from another thread */
            ops_tensor *old = h->slot->grad;
            h->slot->grad = keep;
            pthread_mutex_unlock(&h->slot->lock);
            ops_tensor_release(old);
            continue;
        }
        st = call_hook(n, k, h->fn, h->ctx, &buf[k]);
    }
    for (size_t i = 0; i < nh; i++)
        ops_ag_node_hook_unref(snap[i]);
    if (snap != local)
        ops_host_free(snap);
    return st;
}

/* Leaf hooks run before the gradient is accumulated (or captured).  They run on a
 * snapshot of the list taken under the slot's lock (each hook counted), outside it (a
 * hook may use the leaf, register or remove hooks); one removed meanwhile, by itself or
 * another thread, runs once more and is freed when the snapshot lets go of it. */
static ops_status
run_leaf_hooks(ops_node *acc, ops_tensor **buf)
{
    grad_slot *s = acc->leaf_slot;
    if (s == NULL)
        return OPS_OK;
    tensor_hook *local[8], **snap = local;
    size_t nh = 0;
    pthread_mutex_lock(&s->lock);
    for (tensor_hook *h = s->hooks; h != NULL; h = h->next)
        nh++;
    if (nh > sizeof local / sizeof local[0] && (snap = ops_host_malloc(nh * sizeof *snap)) == NULL) {
        pthread_mutex_unlock(&s->lock);
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", acc->vt->name);
    }
    nh = 0;
    for (tensor_hook *h = s->hooks; h != NULL; h = h->next) {
        __atomic_add_fetch(&h->refcount, 1, __ATOMIC_RELAXED);
        snap[nh++] = h;
    }
    pthread_mutex_unlock(&s->lock);
    ops_status st = OPS_OK;
    for (size_t i = 0; i < nh && st == OPS_OK; i++)
        st = call_hook(acc, 0, snap[i]->fn, snap[i]->ctx, &buf[0]);
    for (size_t i = 0; i < nh; i++)
        ops_ag_tensor_hook_unref(snap[i]);
    if (snap != local)
        ops_host_free(snap);
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
    autograd_meta *m = ops_ag_meta_of(t);
    ops_status st = ops_ag_view_refresh((ops_tensor *)t);
    if (st != OPS_OK)
        return st;
    if (m->grad_fn != NULL) {
        *node = ops_node_retain(m->grad_fn);
        *slot = m->output_nr;
        return OPS_OK;
    }
    *node = ops_ag_leaf_accumulator((ops_tensor *)t);
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
        if (node->vt == &ops_ag_accumulate_vt && (st = run_leaf_hooks(node, tn->buf)) != OPS_OK)
            goto done;
        if (caps != NULL) {
            for (int c = 0; c < ncaps; c++) {
                if (caps[c].node == node && tn->buf[caps[c].slot] != NULL && caps[c].grad == NULL)
                    caps[c].grad = ops_tensor_retain(tn->buf[caps[c].slot]);
            }
            if (node->vt == &ops_ag_accumulate_vt)
                continue; /* autograd_grad never touches .grad */
        }
        for (int k = 0; k < node->num_inputs; k++) {
            if (tn->buf[k] == NULL && (tn->buf[k] = zeros_for(&node->in_meta[k])) == NULL) {
                st = ops_last_status();
                goto done;
            }
        }
        if (node->released && node->vt->release_saved != NULL) {
            st = ops_fail(OPS_ERR_VALUE, "%s: %s", node->vt->name, ops_ag_freed_graph_msg);
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
    if (!ops_ag_same_shape(out, given))
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

/* libops internal: what the files of the autograd engine share and nothing else
 * includes (runtime/autograd/tensor_state.c, graph.c, saved.c, engine.c,
 * view_history.c): a tensor's autograd state and gradient slot, the hooks on them,
 * and the helpers each of those files defines for the others.  Not installed. */
#ifndef OPS_AUTOGRAD_ENGINE_H
#define OPS_AUTOGRAD_ENGINE_H

#include <pthread.h>
#include <string.h>

#include "ops_autograd_impl.h"

/* A leaf's hook.  Counted: the slot's list holds one reference and a backward pass
 * running it another, so a hook removed (by itself, or by another thread) while it
 * runs stays valid until the pass is done with it; release(ctx) runs when the last
 * reference goes (a binding's callable is dropped there). */
typedef struct tensor_hook {
    int64_t refcount; /* atomic */
    int64_t handle;
    ops_grad_hook_fn fn;
    void *ctx;
    void (*release)(void *ctx);
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
    int64_t refcount; /* atomic; as tensor_hook's: the node's list + a running pass */
    int input_nr;
    int64_t handle;
    ops_grad_hook_fn fn; /* NULL: retain_grad into slot */
    void *ctx;
    void (*release)(void *ctx);
    grad_slot *slot;     /* owned, for retain_grad */
    ops_node_hook *next;
};

/* Drop a reference to a hook; the last one releases its ctx (and retain_grad's slot)
 * and frees it (tensor_state.c). */
OPS_INTERNAL void ops_ag_tensor_hook_unref(tensor_hook *h);
OPS_INTERNAL void ops_ag_node_hook_unref(ops_node_hook *h);

/* Grad mode of this thread, false when on (graph.c; ops_grad_enabled reads it). */
OPS_INTERNAL extern _Thread_local bool ops_ag_grad_disabled;
/* The node kind of a leaf's AccumulateGrad (engine.c). */
OPS_INTERNAL extern const ops_node_vtable ops_ag_accumulate_vt;
/* The error for a graph whose saved values a backward pass freed (saved.c). */
OPS_INTERNAL extern const char ops_ag_freed_graph_msg[];

static inline autograd_meta *
ops_ag_meta_of(const ops_tensor *t)
{
    return (autograd_meta *)t->autograd;
}

/* The tensor's slot if it has one (no allocation). */
static inline grad_slot *
ops_ag_slot_of(const autograd_meta *m)
{
    return m != NULL ? __atomic_load_n(&m->grad, __ATOMIC_ACQUIRE) : NULL;
}

static inline bool
ops_ag_same_shape(const ops_tensor *a, const ops_tensor *b)
{
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof a->sizes[0]) == 0;
}

/* An alias of t sharing its storage, with no autograd state. */
static inline ops_tensor *
ops_ag_alias_without_history(const ops_tensor *t)
{
    return ops_tensor_new_view(t, t->ndim, t->sizes, t->strides, t->offset);
}

/* t's autograd state, made on first use (NULL with an OOM error) (tensor_state.c). */
OPS_INTERNAL autograd_meta *ops_ag_meta_get(ops_tensor *t, const char *op);
/* Drops a weak / a strong reference to a gradient slot (tensor_state.c). */
OPS_INTERNAL void ops_ag_slot_weak_release(grad_slot *s);
OPS_INTERNAL void ops_ag_slot_release(grad_slot *s);
/* The slot of a tensor whose autograd state exists, made on first use (tensor_state.c). */
OPS_INTERNAL grad_slot *ops_ag_slot_get(autograd_meta *m, const char *op);
/* The AccumulateGrad of a leaf requiring grad (a new reference) (graph.c). */
OPS_INTERNAL ops_node *ops_ag_leaf_accumulator(ops_tensor *leaf);
/* Renews the grad_fn of a view whose base was written in place since (view_history.c). */
OPS_INTERNAL ops_status ops_ag_view_refresh(ops_tensor *t);

#endif /* OPS_AUTOGRAD_ENGINE_H */

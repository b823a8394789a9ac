/* Saved values (ops_saved_tensor): what a node keeps of its op's inputs and outputs
 * for its backward formula, with the storage version it saw, so that an in-place write
 * since is reported when the value is unpacked.  How each kind is held (an output
 * without its history, a leaf as an alias, a view without owning its base) is what
 * keeps the graph free of reference cycles (ops_autograd_impl.h "Ownership"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops_autograd_engine.h"

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
        s->data = ops_ag_alias_without_history(t);
        if (s->data == NULL)
            return ops_last_status();
        s->output_nr = ops_tensor_output_nr(t);
    } else if (ops_ag_meta_of(t) != NULL && ops_ag_meta_of(t)->requires_grad && ops_tensor_is_leaf(t)) {
        /* A leaf requiring grad: under create_graph its .grad gets a graph holding
         * this node, so the node must not own the leaf (leaf -> grad -> node -> leaf
         * would never be freed).  An alias shares its storage (and version counter);
         * the leaf's AccumulateGrad is where the alias's gradient goes when unpacked
         * under grad mode. */
        if ((s->leaf_acc = ops_ag_leaf_accumulator((ops_tensor *)t)) == NULL)
            return ops_last_status();
        if ((s->data = ops_ag_alias_without_history(t)) == NULL) {
            ops_saved_release(s);
            return ops_last_status();
        }
    } else if (ops_ag_meta_of(t) != NULL && ops_ag_meta_of(t)->view_base != NULL && !ops_ag_meta_of(t)->requires_grad) {
        /* A view keeps its base alive: saved by a node of the base's own history (an
         * in-place op on another view of the same base) it would close a cycle.  The
         * saved value is an alias carrying the view's history instead (what a formula
         * differentiates through under create_graph).  A view the user marked as a
         * leaf requiring grad is kept itself: its AccumulateGrad is its own. */
        ops_tensor *v = (ops_tensor *)t;
        ops_status st = ops_ag_view_refresh(v);
        if (st != OPS_OK)
            return st;
        if ((s->data = ops_ag_alias_without_history(t)) == NULL)
            return ops_last_status();
        const autograd_meta *m = ops_ag_meta_of(t);
        if (m->grad_fn != NULL) {
            autograd_meta *am = ops_ag_meta_get(s->data, "save");
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

const char ops_ag_freed_graph_msg[] =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

ops_status
ops_saved_unpack(ops_saved_tensor *s, ops_node *owner, ops_tensor **out)
{
    *out = NULL;
    if (owner->released)
        return ops_fail(OPS_ERR_VALUE, "%s: %s", owner->vt->name, ops_ag_freed_graph_msg);
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
    if ((!s->is_output && s->leaf_acc == NULL) || ops_ag_grad_disabled) {
        *out = ops_tensor_retain(s->data);
        return OPS_OK;
    }
    if (s->leaf_acc != NULL) {
        /* A saved leaf under create_graph: an alias that requires grad as the leaf
         * does, its gradient going to the leaf's AccumulateGrad. */
        ops_tensor *t = ops_ag_alias_without_history(s->data);
        autograd_meta *m = t != NULL ? ops_ag_meta_get(t, owner->vt->name) : NULL;
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
    ops_tensor *t = ops_ag_alias_without_history(s->data);
    if (t == NULL)
        return ops_last_status();
    autograd_meta *m = ops_ag_meta_get(t, owner->vt->name);
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

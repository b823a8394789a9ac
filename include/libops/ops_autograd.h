/* libops public API: reverse-mode automatic differentiation.
 *
 * A tensor that requires grad records, for every op run on it while grad mode is on,
 * a backward node (its grad_fn) holding what the op's formula in ops/derivatives.yaml
 * needs.  ops_backward walks those nodes from an output back to the leaves and adds
 * each leaf's gradient into its .grad:
 *
 *     ops_tensor_set_requires_grad(w, true);
 *     ops_tensor *loss = ...ops on w...;
 *     ops_backward(loss, NULL, false, false);   // w's .grad now holds d loss / d w
 *     ops_tensor *g = ops_tensor_grad(w);       // new reference (NULL if none)
 *
 * Grad mode is per thread (ops_set_grad_enabled); the graph is freed by backward
 * unless retain_graph is set, and a second backward through a freed graph fails. */
#ifndef OPS_AUTOGRAD_H
#define OPS_AUTOGRAD_H

#include "ops_base.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A node of the backward graph (a grad_fn).  Opaque; refcounted by the graph. */
typedef struct ops_node ops_node;

/* ---- grad mode ------------------------------------------------------------ */

/* Whether ops record backward nodes on this thread (default true). */
OPS_API bool ops_grad_enabled(void);
/* Turns recording on or off for this thread; returns the previous setting, so a
 * no_grad region is `bool prev = ops_set_grad_enabled(false); ...;
 * ops_set_grad_enabled(prev);`. */
OPS_API bool ops_set_grad_enabled(bool enabled);

/* ---- per-tensor state --------------------------------------------------------- */

/* Marks a leaf as requiring grad (or not).  Only floating dtypes can require grad,
 * and a non-leaf's requires_grad cannot be turned off (detach it instead). */
OPS_API ops_status ops_tensor_set_requires_grad(ops_tensor *t, bool requires_grad);
/* True for a leaf marked with set_requires_grad and for any result of a recorded op. */
OPS_API bool ops_tensor_requires_grad(const ops_tensor *t);
/* True unless t was produced by a recorded op (it has no grad_fn). */
OPS_API bool ops_tensor_is_leaf(const ops_tensor *t);
/* The accumulated gradient: a new reference, or NULL when there is none. */
OPS_API ops_tensor *ops_tensor_grad(const ops_tensor *t);
/* Replaces (grad != NULL; same shape and dtype as t) or clears (NULL) t's .grad. */
OPS_API ops_status ops_tensor_set_grad(ops_tensor *t, const ops_tensor *grad);
/* The node that produced t (borrowed; valid while t lives), NULL for a leaf. */
OPS_API ops_node *ops_tensor_grad_fn(const ops_tensor *t);
/* Which output of its grad_fn t is (0 for a leaf). */
OPS_API int ops_tensor_output_nr(const ops_tensor *t);
/* Keep the gradient of a non-leaf in its .grad during backward (leaves always do). */
OPS_API ops_status ops_tensor_retain_grad(ops_tensor *t);
/* A new tensor sharing t's storage with no history and requires_grad false. */
OPS_API ops_tensor *ops_tensor_detach(const ops_tensor *t);
/* Cuts t from its history in place: it becomes a leaf not requiring grad. */
OPS_API ops_status ops_tensor_detach_(ops_tensor *t);

/* A gradient hook: sees the gradient flowing into t during backward.  It may set
 * *replacement to a new reference to use instead (same shape and dtype); returning
 * an error stops the backward pass with that error. */
typedef ops_status (*ops_grad_hook_fn)(const ops_tensor *grad, ops_tensor **replacement, void *ctx);
/* Registers fn on t (which must require grad); *handle identifies it for removal. */
OPS_API ops_status ops_tensor_register_hook(ops_tensor *t, ops_grad_hook_fn fn, void *ctx, int64_t *handle);
/* The same, with release(ctx) called once the hook is gone for good: removed, or its
 * tensor (a leaf) or grad_fn (a non-leaf) freed, and no backward pass running it (a
 * binding's reference to its callable is dropped there).  A hook may remove itself
 * or others while it runs. */
OPS_API ops_status ops_tensor_register_hook_ex(ops_tensor *t, ops_grad_hook_fn fn, void *ctx,
                                               void (*release)(void *ctx), int64_t *handle);
/* Removes a hook registered on t; false if there is none with that handle. */
OPS_API bool ops_tensor_remove_hook(ops_tensor *t, int64_t handle);

/* ---- nodes -------------------------------------------------------------------- */

/* "MulBackward0", "AccumulateGrad", ... */
OPS_API const char *ops_node_name(const ops_node *n);
/* Number of edges to the next nodes (one per differentiable input of the op). */
OPS_API int ops_node_num_next(const ops_node *n);
/* The i-th next node (borrowed; NULL where that input needs no gradient). */
OPS_API ops_node *ops_node_next(const ops_node *n, int i, int *input_nr);

/* ---- running backward ------------------------------------------------------ */

/* Gradients of `output` with respect to every leaf it depends on, added into the
 * leaves' .grad.  gradient: d(something)/d(output), same shape as output; NULL is
 * allowed only for a one-element output (a 1 is used).  retain_graph keeps the
 * graph for another backward; create_graph records the backward pass itself so
 * gradients can be differentiated again (implies retain_graph). */
OPS_API ops_status ops_backward(const ops_tensor *output, const ops_tensor *gradient, bool retain_graph,
                                bool create_graph);

/* As ops_backward over several outputs, but the gradients with respect to `inputs`
 * are returned (result->data[i] for inputs.data[i]) instead of accumulated into any
 * .grad.  grad_outputs: one per output (elements may be NULL for one-element outputs),
 * or an empty list.  An input the outputs do not depend on is an error unless
 * allow_unused, in which case its result is NULL. */
OPS_API ops_status ops_autograd_grad(ops_tensor_list outputs, ops_tensor_list inputs, ops_tensor_list grad_outputs,
                                     bool retain_graph, bool create_graph, bool allow_unused,
                                     ops_tensor_vec *result);

/* ---- gradcheck ------------------------------------------------------------------- */

/* The function under test: *output = f(inputs[0..n-1]) as a new reference. */
typedef ops_status (*ops_gradcheck_fn)(ops_tensor *const *inputs, int n, ops_tensor **output, void *ctx);

typedef struct ops_gradcheck_options {
    double eps;    /* finite-difference step (default 1e-6) */
    double atol;   /* |analytical - numerical| <= atol + rtol * |numerical| (1e-5, 1e-3) */
    double rtol;
    uint64_t seed; /* the random grad_output (and gradgradcheck's weights) */
} ops_gradcheck_options;

/* Checks the gradients that backward computes for f against central finite
 * differences, for every input that requires grad (float64; any strides without
 * self-overlap): for a random v, d<v, f(x)>/dx from ops_autograd_grad must match
 * (<v, f(x + eps e_j)> - <v, f(x - eps e_j)>) / 2 eps for every element j.  OPS_OK,
 * or an error naming the input, the element and both values.  opts NULL: defaults. */
OPS_API ops_status ops_gradcheck(ops_gradcheck_fn f, void *ctx, int n, ops_tensor *const *inputs,
                                 const ops_gradcheck_options *opts);
/* gradcheck of the first derivatives themselves (built with create_graph): checks
 * the backward pass of f is correctly differentiable (double backward). */
OPS_API ops_status ops_gradgradcheck(ops_gradcheck_fn f, void *ctx, int n, ops_tensor *const *inputs,
                                     const ops_gradcheck_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* OPS_AUTOGRAD_H */

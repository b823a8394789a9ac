/* libops internal: the backward-graph structures the generated autograd layer builds
 * (the engine: the files of runtime/autograd/, see its README.md).  Not installed.
 *
 * A node stands for one recorded op.  It takes one gradient per output of the op
 * (num_inputs) and produces one per differentiable input of the op, sent along its
 * edges (num_next) to the nodes that produced those inputs; an edge to a leaf goes to
 * the leaf's AccumulateGrad node, which adds the gradient into the leaf's .grad.
 *
 * Ownership: a tensor owns its grad_fn; a node owns the nodes its edges point to, so
 * the graph lives as long as some output refers to it.  A node never owns the tensors
 * it produced: a saved output is kept without its history and given it back when
 * unpacked (ops_saved_unpack), so no tensor -> node -> tensor cycle exists.  Nor does
 * a node own a leaf requiring grad: an AccumulateGrad holds its leaf's gradient slot
 * weakly and a saved leaf is kept as an alias (with the leaf's AccumulateGrad), since
 * under create_graph the leaf's .grad has a graph reaching those nodes. */
#ifndef OPS_AUTOGRAD_IMPL_H
#define OPS_AUTOGRAD_IMPL_H

#include "ops_autograd.h"
#include "ops_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ops_edge {
    ops_node *node; /* owned; NULL: that input needs no gradient */
    int input_nr;   /* which gradient slot of node */
} ops_edge;

typedef struct ops_node_vtable {
    const char *name; /* "MulBackward0" */
    /* grads[num_inputs] (never NULL: missing ones are zeros) -> out[num_next], each a new
     * reference or NULL where next[i].node is NULL or the gradient is zero. */
    ops_status (*apply)(ops_node *n, ops_tensor *const *grads, ops_tensor **out);
    /* Drops what the node saved (backward without retain_graph); NULL if nothing. */
    void (*release_saved)(ops_node *n);
} ops_node_vtable;

/* Shape, dtype and device of one gradient a node takes (its op's output). */
typedef struct ops_grad_meta {
    int32_t ndim;
    ops_dtype dtype;
    ops_device device;
    int64_t sizes[OPS_MAX_DIMS];
} ops_grad_meta;

typedef struct ops_node_hook ops_node_hook;

struct ops_node {
    int64_t refcount;
    const ops_node_vtable *vt;
    uint64_t seq;            /* creation order */
    int num_inputs;
    int num_next;
    ops_edge *next;          /* num_next */
    ops_grad_meta *in_meta;  /* num_inputs */
    ops_node_hook *hooks;    /* tensor hooks and retain_grad of non-leaf outputs */
    bool released;           /* saved values freed by a backward pass */
    /* AccumulateGrad only: the leaf's gradient slot, held weakly (the leaf's .grad may
     * have a graph leading back here: owning the leaf would be a cycle). */
    struct ops_grad_slot *leaf_slot;
};

/* A new node of `size` bytes (>= sizeof(ops_node); generated nodes embed ops_node
 * first) with zeroed edges and metadata; NULL with an OOM error on failure. */
OPS_API ops_node *ops_node_new(const ops_node_vtable *vt, size_t size, int num_inputs, int num_next);
OPS_API ops_node *ops_node_retain(ops_node *n);
OPS_API void ops_node_release(ops_node *n);
/* Points edge i at the node producing t's gradient (t's grad_fn, or its leaf's
 * AccumulateGrad); no edge when t is NULL or does not require grad. */
OPS_API ops_status ops_node_set_next(ops_node *n, int i, const ops_tensor *t);
/* Records the shape/dtype/device of gradient slot i from the op's output t. */
OPS_API void ops_node_set_input_meta(ops_node *n, int i, const ops_tensor *t);
/* Makes node (a new reference is taken) t's grad_fn, t being output output_nr. */
OPS_API ops_status ops_autograd_set_history(ops_tensor *t, ops_node *n, int output_nr);
/* True when an op over these inputs must be recorded: grad mode on and one requires grad. */
OPS_API bool ops_autograd_any_requires_grad(int n, const ops_tensor *const *ts);

/* The fast test every generated entry point makes: false at once unless some input
 * carries autograd state (then grad mode and requires_grad decide). */
static inline bool
ops_ag_needed(int n, const ops_tensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (ts[i] != NULL && ts[i]->autograd != NULL)
            return ops_autograd_any_requires_grad(n, ts);
    return false;
}

/* As ops_ag_needed for the elements of a Tensor[] argument. */
static inline bool
ops_ag_needed_list(ops_tensor_list l)
{
    return l.len > 0 && l.data != NULL && ops_ag_needed((int)l.len, l.data);
}

/* Sums a gradient back to an input's shape (the input was broadcast to g's shape). */
OPS_API ops_tensor *ops_autograd_reduce_to(const ops_tensor *g, int ndim, const int64_t *sizes);
/* Backward helpers the formulas of ops/derivatives.yaml call (codegen/gen_autograd.py
 * RUNTIME_HELPERS): the gradient of a sum / mean over dim (NULL or empty: all) of an
 * input of the given shape; of permute(dims); of select and slice (zeros with the
 * gradient written where the view looked). */
OPS_API ops_tensor *ops_autograd_sum_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                              const ops_int_list *dim, bool keepdim);
OPS_API ops_tensor *ops_autograd_mean_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                               const ops_int_list *dim, bool keepdim);
OPS_API ops_tensor *ops_autograd_permute_backward(const ops_tensor *g, ops_int_list dims);
OPS_API ops_tensor *ops_autograd_select_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                                 int64_t index);
/* matmul's gradient for self (which 0) or other (1), every 1-D and batch rule. */
OPS_API ops_tensor *ops_autograd_matmul_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *other,
                                                 int64_t which);
/* A reduced loss's gradient brought back to like's shape (reduction 0 none, 1 mean, 2 sum). */
OPS_API ops_tensor *ops_autograd_reduction_backward(const ops_tensor *g, const ops_tensor *like, int64_t reduction);
/* nll_loss / cross_entropy_loss over class indices ([C], [N, C] or [N, C, d1, ...]
 * input); cross_entropy_loss also over class probabilities (a target of self's shape),
 * for self (which 0), with probabilities for target (1), and for the class weights
 * (2; nll_loss's: nll_loss_weight_backward). */
OPS_API ops_tensor *ops_autograd_nll_loss_backward(const ops_tensor *g, const ops_tensor *self,
                                                   const ops_tensor *target, const ops_tensor *weight,
                                                   int64_t reduction, int64_t ignore_index);
OPS_API ops_tensor *ops_autograd_nll_loss_weight_backward(const ops_tensor *g, const ops_tensor *self,
                                                          const ops_tensor *target, const ops_tensor *weight,
                                                          int64_t reduction, int64_t ignore_index);
OPS_API ops_tensor *ops_autograd_cross_entropy_backward(const ops_tensor *g, const ops_tensor *self,
                                                        const ops_tensor *target, const ops_tensor *weight,
                                                        int64_t reduction, int64_t ignore_index,
                                                        double label_smoothing, int64_t which);
/* max pooling over the last two dims: from the indices of the maxima (offsets h * W + w
 * per plane), or recomputing them (max_pool2d). */
OPS_API ops_tensor *ops_autograd_pool_indices_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                       const ops_tensor *indices);
OPS_API ops_tensor *ops_autograd_max_pool2d_backward(const ops_tensor *g, const ops_tensor *self,
                                                     ops_int_list kernel_size, ops_int_list stride,
                                                     ops_int_list padding, ops_int_list dilation, bool ceil_mode);
/* conv2d's gradient for input (which 0), weight (1) or bias (2). */
OPS_API ops_tensor *ops_autograd_conv2d_backward(const ops_tensor *g, const ops_tensor *input,
                                                 const ops_tensor *weight, ops_int_list stride,
                                                 ops_int_list padding, ops_int_list dilation, int64_t groups,
                                                 int64_t which);
/* layer_norm's and native_layer_norm's gradients for input, weight and bias at once (the
 * entries of mask that are 1; NULL for the others): one fused native_layer_norm_backward
 * from mean and rstd (recomputed from x, without recording, when NULL); with create_graph
 * the call records and its own derivative gives double backward. */
OPS_API ops_status ops_autograd_layer_norm_backward_all(const ops_tensor *g, const ops_tensor *x,
                                                        ops_int_list normalized_shape, const ops_tensor *mean,
                                                        const ops_tensor *rstd, const ops_tensor *weight,
                                                        const ops_tensor *bias, double eps, ops_int_list mask,
                                                        ops_tensor_vec *out);
/* native_layer_norm_backward's own derivative: the gradients of grad_out, input and
 * weight (the entries of mask that are 1; NULL for the others) from ga, gb, gc, those
 * of its outputs dx, dweight, dbias (runtime/autograd/backward/autograd_layers.c). */
OPS_API ops_status ops_autograd_layer_norm_double_backward(const ops_tensor *x, const ops_tensor *weight,
                                                           const ops_tensor *ga, const ops_tensor *gb,
                                                           const ops_tensor *gc, const ops_tensor *g,
                                                           const ops_tensor *mean, const ops_tensor *rstd,
                                                           ops_int_list normalized_shape, ops_int_list mask,
                                                           ops_tensor_vec *out);
OPS_API ops_tensor *ops_autograd_narrow_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                                 int64_t start, int64_t length);
/* narrow.Tensor: narrow_backward with the start read from its 0-dim tensor. */
OPS_API ops_tensor *ops_autograd_narrow_tensor_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                        int64_t dim, const ops_tensor *start, int64_t length);
OPS_API ops_tensor *ops_autograd_slice_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                                const int64_t *start, const int64_t *end, int64_t step);

/* Tensor[] arguments of a node (runtime/autograd/backward/autograd_list.c).  A saved Tensor[] / Tensor?[]
 * is an array of n saved values (NULL elements stay NULL), each version-checked when
 * unpacked; the node owns the array and frees it with ops_ag_saved_list_release.
 * (struct ops_saved_tensor: defined below.) */
struct ops_saved_tensor;
OPS_API ops_status ops_ag_saved_list_save(struct ops_saved_tensor **dst, ops_tensor_list l, const char *op);
/* *out: n new references (NULL for None elements), to free with ops_ag_tensor_array_release. */
OPS_API ops_status ops_ag_saved_list_unpack(struct ops_saved_tensor *s, int64_t n, ops_node *owner, ops_tensor ***out);
OPS_API void ops_ag_saved_list_release(struct ops_saved_tensor **s, int64_t n);
OPS_API void ops_ag_tensor_array_release(ops_tensor **a, int64_t n);
/* The shapes and dtypes of a list's elements (formulas that need only those). */
OPS_API ops_status ops_ag_list_meta_save(ops_grad_meta **dst, ops_tensor_list l, const char *op);
OPS_API void ops_ag_list_meta_free(ops_grad_meta **m);
/* True when one of the edges off .. off + len - 1 leads somewhere (a list input's
 * gradients are computed only then). */
static inline bool
ops_ag_any_next(const ops_node *n, int64_t off, int64_t len)
{
    for (int64_t i = 0; i < len; i++)
        if (n->next[off + i].node != NULL)
            return true;
    return false;
}
/* cat / hstack / vstack: the gradient cut along dim into one piece per input (each
 * input's size there, its shape padded with leading 1s up to min_ndim as atleast_1d /
 * atleast_2d do; a legacy empty [0] input gets an empty piece), reshaped to the input. */
OPS_API ops_status ops_autograd_cat_tensors_backward(const ops_tensor *g, int64_t n, const ops_grad_meta *metas,
                                                     int64_t dim, int64_t min_ndim, ops_tensor_vec *out);
/* tensor_split.indices: the sum of each piece's gradient padded with zeros to self's
 * shape (pieces may overlap: tensor_split(x, [4, 2]) reads x[2:4] twice). */
OPS_API ops_tensor *ops_autograd_tensor_split_backward(ops_tensor_list grads, int ndim, const int64_t *sizes,
                                                       ops_int_list indices, int64_t dim);
/* tensor_split.tensor_indices_or_sections: the sections' or the indices' gradient, as
 * the tensor (0-dim: sections, 1-D: indices) chose in the forward. */
OPS_API ops_tensor *ops_autograd_tensor_split_tensor_backward(ops_tensor_list grads, int ndim, const int64_t *sizes,
                                                              const ops_tensor *tios, int64_t dim);
/* einsum: each operand's gradient, itself an einsum of the gradient and the other
 * operands (identity matrices for repeated subscripts, ones for subscripts only that
 * operand has, broadcast dims summed back). */
OPS_API ops_status ops_autograd_einsum_backward(const ops_tensor *g, const char *equation, ops_tensor_list tensors,
                                                ops_tensor_vec *out);
/* index.Tensor: zeros of self's shape with the gradient accumulated where self was read. */
OPS_API ops_tensor *ops_autograd_index_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                ops_tensor_list indices);

/* runtime/autograd_reduce.c.  The gradient of an extreme value (max, min, amax, amin,
 * aminmax: result reduced over dim, NULL or empty: all) shared evenly by the elements
 * equal to it; of a value-selecting reduction (max.dim, kthvalue, sort, topk: the
 * values' gradient written where indices point along dim); of cummax/cummin. */
OPS_API ops_tensor *ops_autograd_evenly_distribute_backward(const ops_tensor *g, const ops_tensor *self,
                                                            const ops_tensor *result, const ops_int_list *dim,
                                                            bool keepdim);
OPS_API ops_tensor *ops_autograd_value_selecting_reduction_backward(const ops_tensor *g, int ndim,
                                                                    const int64_t *sizes, int64_t dim,
                                                                    const ops_tensor *indices, bool keepdim);
OPS_API ops_tensor *ops_autograd_cummaxmin_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                    const ops_tensor *indices, int64_t dim);
/* prod over dim (NULL: every element) and cumprod, zeros in self included. */
OPS_API ops_tensor *ops_autograd_prod_backward(const ops_tensor *g, const ops_tensor *self, const int64_t *dim,
                                               bool keepdim);
OPS_API ops_tensor *ops_autograd_cumprod_backward(const ops_tensor *g, const ops_tensor *self,
                                                  const ops_tensor *result, int64_t dim);
/* var over dim with a correction (NULL: 1); the vector norm of order p (NULL: 2). */
OPS_API ops_tensor *ops_autograd_var_backward(const ops_tensor *g, const ops_tensor *self, const ops_int_list *dim,
                                              const ops_scalar *correction, bool keepdim);
OPS_API ops_tensor *ops_autograd_norm_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *result,
                                               const ops_scalar *p, const ops_int_list *dim, bool keepdim);
/* clamp with tensor bounds: the gradient for self (which 0), min (1) or max (2). */
OPS_API ops_tensor *ops_autograd_clamp_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *min,
                                                const ops_tensor *max, int64_t which);

/* runtime/autograd/backward/autograd_index.c: gradients of views, shape and indexing ops (select_backward,
 * slice_backward and narrow_backward above live there too); all written with public
 * ops, so they are differentiable themselves. */
OPS_API ops_tensor *ops_autograd_diagonal_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                   int64_t offset, int64_t dim1, int64_t dim2);
OPS_API ops_tensor *ops_autograd_unfold_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                 int64_t dimension, int64_t size, int64_t step);
OPS_API ops_tensor *ops_autograd_as_strided_backward(const ops_tensor *g, const ops_tensor *self, ops_int_list size,
                                                     ops_int_list stride, const int64_t *storage_offset);
OPS_API ops_tensor *ops_autograd_roll_backward(const ops_tensor *g, ops_int_list shifts, ops_int_list dims);
OPS_API ops_tensor *ops_autograd_repeat_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                 ops_int_list repeats);
OPS_API ops_tensor *ops_autograd_tile_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                               ops_int_list dims);
OPS_API ops_tensor *ops_autograd_index_select_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                       int64_t dim, const ops_tensor *index);
OPS_API ops_tensor *ops_autograd_gather_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                                 const ops_tensor *index);
OPS_API ops_tensor *ops_autograd_take_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                               const ops_tensor *index);
OPS_API ops_tensor *ops_autograd_masked_select_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                        const ops_tensor *mask);
OPS_API ops_tensor *ops_autograd_masked_scatter_backward(const ops_tensor *g, const ops_tensor *mask, int ndim,
                                                         const int64_t *sizes);
/* repeats_t NULL: repeats_i copies of each element; dim NULL: over the flattened input. */
OPS_API ops_tensor *ops_autograd_repeat_interleave_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                            const ops_tensor *repeats_t, int64_t repeats_i,
                                                            const int64_t *dim);
/* mode 0 constant, 1 reflect, 2 replicate, 3 circular. */
OPS_API ops_tensor *ops_autograd_pad_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_int_list pad,
                                              int64_t mode);
/* src of scatter / scatter_add: gather(g, dim, index) padded with zeros to src's shape. */
OPS_API ops_tensor *ops_autograd_scatter_src_backward(const ops_tensor *g, int64_t dim, const ops_tensor *index,
                                                      int ndim, const int64_t *sizes);
/* mode 0 sum, 1 prod, 2 mean, 3 amax, 4 amin; which 0 self, 1 src. */
OPS_API ops_tensor *ops_autograd_scatter_reduce_backward(const ops_tensor *g, const ops_tensor *self, int64_t dim,
                                                         const ops_tensor *index, const ops_tensor *src,
                                                         const ops_tensor *result, int64_t mode, bool include_self,
                                                         int64_t which);

/* Backward helpers of the neural-network formulas (runtime/autograd/backward/autograd_nn.c): conv1d and
 * padding="same" convolutions (which 0 input, 1 weight, 2 bias); the transposed
 * convolutions' input; max_pool1d; the
 * separable linear ops (avg pools, adaptive avg pool, upsampling: a negative scale is
 * None, mode 0 nearest, 1 linear); batch_norm and group_norm (which 0 input, 1 weight,
 * 2 bias); binary_cross_entropy_with_logits (g elementwise; which 0 self, 1 target);
 * nll_loss over [N, C, d...]; glu; prelu (which 0 self, 1 weight). */
OPS_API ops_tensor *ops_autograd_conv1d_backward(const ops_tensor *g, const ops_tensor *input,
                                                 const ops_tensor *weight, ops_int_list stride,
                                                 ops_int_list padding, ops_int_list dilation, int64_t groups,
                                                 int64_t which);
OPS_API ops_tensor *ops_autograd_conv_same_backward(const ops_tensor *g, const ops_tensor *input,
                                                    const ops_tensor *weight, ops_int_list dilation, int64_t groups,
                                                    int64_t which);
OPS_API ops_tensor *ops_autograd_conv_transpose_input_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                               const ops_tensor *weight, ops_int_list stride,
                                                               ops_int_list padding, ops_int_list dilation,
                                                               int64_t groups);
OPS_API ops_tensor *ops_autograd_max_pool1d_backward(const ops_tensor *g, const ops_tensor *self,
                                                     ops_int_list kernel_size, ops_int_list stride,
                                                     ops_int_list padding, ops_int_list dilation, bool ceil_mode);
OPS_API ops_tensor *ops_autograd_avg_pool2d_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                     ops_int_list kernel_size, ops_int_list stride,
                                                     ops_int_list padding, bool ceil_mode, bool count_include_pad,
                                                     const int64_t *divisor_override);
OPS_API ops_tensor *ops_autograd_avg_pool1d_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                     ops_int_list kernel_size, ops_int_list stride,
                                                     ops_int_list padding, bool ceil_mode, bool count_include_pad);
OPS_API ops_tensor *ops_autograd_adaptive_avg_pool2d_backward(const ops_tensor *g, int ndim, const int64_t *sizes);
OPS_API ops_tensor *ops_autograd_upsample2d_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                     bool align_corners, double scales_h, double scales_w,
                                                     int64_t mode);
OPS_API ops_tensor *ops_autograd_upsample1d_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                                     bool align_corners, double scales, int64_t mode);
OPS_API ops_tensor *ops_autograd_batch_norm_backward(const ops_tensor *g, const ops_tensor *input,
                                                     const ops_tensor *weight, const ops_tensor *running_mean,
                                                     const ops_tensor *running_var, bool training, double eps,
                                                     int64_t which);
OPS_API ops_tensor *ops_autograd_group_norm_backward(const ops_tensor *g, const ops_tensor *input,
                                                     int64_t num_groups, const ops_tensor *weight, double eps,
                                                     int64_t which);
OPS_API ops_tensor *ops_autograd_bce_logits_backward(const ops_tensor *g, const ops_tensor *self,
                                                     const ops_tensor *target, const ops_tensor *weight,
                                                     const ops_tensor *pos_weight, int64_t which);
OPS_API ops_tensor *ops_autograd_nll_loss_nd_backward(const ops_tensor *g, const ops_tensor *self,
                                                      const ops_tensor *target, const ops_tensor *weight,
                                                      int64_t reduction, int64_t ignore_index);
OPS_API ops_tensor *ops_autograd_glu_backward(const ops_tensor *g, const ops_tensor *self, int64_t dim);
OPS_API ops_tensor *ops_autograd_prelu_backward(const ops_tensor *g, const ops_tensor *self,
                                                const ops_tensor *weight, int64_t which);

/* Views and in-place writes through them (PyTorch's view rebase).  A view made under
 * grad mode remembers its root base; an in-place op on it gives the base a CopySlices
 * history and the view one reading its region of the base. */
/* Whether r, returned by a view op on self, shares self's storage (reshape, contiguous
 * and to() copy at times) and could carry gradients. */
static inline bool
ops_autograd_view_candidate(const ops_tensor *r, const ops_tensor *self)
{
    return r != NULL && r != self && r->storage == self->storage && ops_dtype_is_floating(r->dtype);
}
/* Marks r (a view of self, consumed) as a view of self's root base under grad mode;
 * returns r, or NULL (r released) on OOM.  The glue calls it on view ops' results. */
OPS_API ops_tensor *ops_autograd_make_view(ops_tensor *r, const ops_tensor *self);
static inline ops_tensor *
ops_autograd_view_result(ops_tensor *r, const ops_tensor *self)
{
    return ops_autograd_view_candidate(r, self) ? ops_autograd_make_view(r, self) : r;
}
/* As ops_autograd_view_result for the elements of a Tensor[] result (released on OOM). */
OPS_API ops_status ops_autograd_make_views(ops_tensor_vec *v, const ops_tensor *self);
/* Gives self (just written in place by the op of node fn) its new history: fn itself,
 * or for a view the rebase of its base.  self_edge: fn's edge for self (-1: none); an
 * unset one is pointed at self's history before the write. */
OPS_API ops_status ops_autograd_rebase_history(ops_tensor *self, ops_node *fn, int self_edge);
/* copy_ with autograd (it has no functional form to take a formula from). */
OPS_API ops_status ops_autograd_copy_(ops_tensor *self, const ops_tensor *src, bool non_blocking);
/* linear's gradient for input (which 0) or weight (1), without materialised transposes. */
OPS_API ops_tensor *ops_autograd_linear_backward(const ops_tensor *g, const ops_tensor *input,
                                                 const ops_tensor *weight, int64_t which);

/* The dims a reduction reduced, as flags (flags[OPS_MAX_DIMS], true at each reduced d;
 * every d < ndim for NULL or an empty list), wrapped and checked.  false (error set, naming op) on a bad dim. */
OPS_API bool ops_autograd_reduced_dims(const char *op, int ndim, const ops_int_list *dim, bool *flags);

/* An op without a formula ran on inputs requiring grad (with grad mode off): fine
 * when its results cannot carry gradients (integer or bool), else the results are
 * released and the call fails with "the derivative for 'op' is not implemented". */
OPS_API ops_tensor *ops_autograd_no_formula(const char *op, ops_tensor *result);
/* outs: the op's out-parameters (each points at a returned tensor). */
OPS_API ops_status ops_autograd_no_formula_outs(const char *op, int n, ops_tensor **const *outs);
OPS_API ops_status ops_autograd_no_formula_vec(const char *op, ops_tensor_vec *v);
/* The error of an out= call under grad mode with an argument requiring grad. */
OPS_API ops_status ops_autograd_out_error(const char *op);
/* Checks an in-place op may be recorded on self: not a leaf requiring grad. */
OPS_API ops_status ops_autograd_check_inplace(const char *op, const ops_tensor *self);
/* An in-place op without a formula with an input requiring grad: an error unless
 * self cannot carry gradients (integer or bool). */
OPS_API ops_status ops_autograd_inplace_no_formula(const char *op, const ops_tensor *self);

/* Scalar arithmetic in formulas (`exponent - 1`): integers stay integers except
 * under '/', as Python numbers do. */
static inline ops_scalar
ops_ag_scalar_arith(ops_scalar a, ops_scalar b, char op)
{
    const bool ints = a.kind != OPS_SCALAR_FLOAT && b.kind != OPS_SCALAR_FLOAT && op != '/';
    if (ints) {
        int64_t x = a.kind == OPS_SCALAR_BOOL ? a.v.b : a.v.i, y = b.kind == OPS_SCALAR_BOOL ? b.v.b : b.v.i;
        return OPS_SCALAR_INT(op == '+' ? x + y : op == '-' ? x - y : x * y);
    }
    double x = a.kind == OPS_SCALAR_FLOAT ? a.v.f : (a.kind == OPS_SCALAR_BOOL ? a.v.b : (double)a.v.i);
    double y = b.kind == OPS_SCALAR_FLOAT ? b.v.f : (b.kind == OPS_SCALAR_BOOL ? b.v.b : (double)b.v.i);
    return OPS_SCALAR_FLOAT(op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y);
}

/* Elements of a shape kept by a node. */
static inline int64_t
ops_ag_numel(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= sizes[i];
    return n;
}

/* A value saved for backward, with the version it had when saved. */
typedef struct ops_saved_tensor {
    ops_tensor *data;  /* NULL: nothing saved (an undefined optional) */
    uint64_t version;
    bool is_output;    /* data is kept without history; unpack restores it */
    int output_nr;
    /* A leaf requiring grad is kept as an alias without history (so the graph does not
     * own the leaf) and its AccumulateGrad (owned), where unpack under grad mode sends
     * the alias's gradient. */
    ops_node *leaf_acc;
} ops_saved_tensor;

OPS_API ops_status ops_saved_save(ops_saved_tensor *s, const ops_tensor *t, bool is_output);
/* New reference to the saved value; for a saved output its history points at owner.
 * Fails (naming owner) when the value was modified in place since it was saved or
 * when the graph was freed. */
OPS_API ops_status ops_saved_unpack(ops_saved_tensor *s, ops_node *owner, ops_tensor **out);
OPS_API void ops_saved_release(ops_saved_tensor *s);

/* Called by ops_tensor_release for a tensor with autograd state. */
OPS_API void ops_autograd_meta_free(void *meta);

/* For the backward helpers (runtime/autograd/backward/): one step of a chain of
 * public-op calls; a NULL result jumps to the helper's `done:`, which releases every
 * intermediate. */
#define AG_STEP(var, expr)                                                                  \
    do {                                                                                    \
        var = (expr);                                                                       \
        if (var == NULL)                                                                    \
            goto done;                                                                      \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* OPS_AUTOGRAD_IMPL_H */

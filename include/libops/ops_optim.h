/* libops public API: optimizers (SGD, Adam, AdamW) over parameters' .grad.
 *
 *     ops_optimizer *opt = ops_adam_new(params, &(ops_adam_options){.lr = 1e-3});
 *     for (...) {
 *         ops_optimizer_zero_grad(opt, true);
 *         ...forward, ops_backward(loss, ...)...
 *         ops_optimizer_step(opt);
 *     }
 *     ops_optimizer_release(opt);
 *
 * Updates run with grad mode off, in place on the parameters (their version counters
 * move, as PyTorch's), using libops ops, so they work on any device the ops do.  The
 * update rules are PyTorch's (torch.optim.SGD / Adam / AdamW, default options). */
#ifndef OPS_OPTIM_H
#define OPS_OPTIM_H

#include "ops_base.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ops_optimizer ops_optimizer;

/* SGD: d = g + weight_decay * p; with momentum, buf = momentum * buf + (1 - dampening) * d
 * (buf = d on the first step) and d = nesterov ? d + momentum * buf : buf; p -= lr * d. */
typedef struct ops_sgd_options {
    double lr;
    double momentum;
    double dampening;
    double weight_decay;
    bool nesterov; /* needs momentum > 0 and dampening == 0 */
    bool maximize;
} ops_sgd_options;

/* Adam / AdamW: m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2 (amsgrad:
 * the running max of v), p -= lr / (1 - beta1^t) * m / (sqrt(v / (1 - beta2^t)) + eps).
 * Adam adds weight_decay * p to g; AdamW multiplies p by 1 - lr * weight_decay. Zero
 * fields take PyTorch's defaults (betas 0.9, 0.999, eps 1e-8; AdamW weight_decay 1e-2). */
typedef struct ops_adam_options {
    double lr;
    double beta1, beta2;
    double eps;
    double weight_decay;
    bool amsgrad;
    bool maximize;
} ops_adam_options;

/* The optimizers keep a reference to each parameter (floating tensors requiring grad);
 * NULL with an error naming the parameter for a bad one or a bad option. */
OPS_API ops_optimizer *ops_sgd_new(ops_tensor_list params, const ops_sgd_options *opts);
OPS_API ops_optimizer *ops_adam_new(ops_tensor_list params, const ops_adam_options *opts);
OPS_API ops_optimizer *ops_adamw_new(ops_tensor_list params, const ops_adam_options *opts);
/* One update of every parameter that has a .grad (the others are skipped). */
OPS_API ops_status ops_optimizer_step(ops_optimizer *opt);
/* Clears every parameter's .grad (set_to_none), or fills it with zeros. */
OPS_API ops_status ops_optimizer_zero_grad(ops_optimizer *opt, bool set_to_none);
/* The learning rate used by the next steps (a scheduler's change; the state is kept).
 * Any lr >= 0 is taken, 0 included (the options' 0-means-default applies only at
 * creation); OPS_ERR_VALUE for a negative or NaN lr. */
OPS_API ops_status ops_optimizer_set_lr(ops_optimizer *opt, double lr);
OPS_API double ops_optimizer_get_lr(const ops_optimizer *opt);
/* All the options used by the next steps (a user or scheduler changing betas, momentum,
 * weight_decay... mid-training, as torch's param_groups allow); the state is kept.
 * Checked as at creation, except that zeros are taken as given (no defaults).  The
 * kind must match: OPS_ERR_VALUE for SGD options on an Adam optimizer and back. */
OPS_API ops_status ops_optimizer_set_sgd_options(ops_optimizer *opt, const ops_sgd_options *opts);
OPS_API ops_status ops_optimizer_set_adam_options(ops_optimizer *opt, const ops_adam_options *opts);

/* One parameter's state, in torch's optimizer state_dict terms: step (the number of
 * updates it had: Adam's bias correction), buf (SGD's momentum_buffer, Adam's exp_avg),
 * v (Adam's exp_avg_sq), vmax (max_exp_avg_sq with amsgrad).  NULL where there is none
 * yet.  A checkpoint read by get_state and written back by set_state resumes the
 * updates bit for bit. */
typedef struct ops_optimizer_state {
    int64_t step;
    ops_tensor *buf, *v, *vmax;
} ops_optimizer_state;

/* Number of parameters (the index range of the state calls). */
OPS_API int64_t ops_optimizer_num_params(const ops_optimizer *opt);
/* Parameter i's state: new references in *out (release them). */
OPS_API ops_status ops_optimizer_get_state(const ops_optimizer *opt, int64_t i, ops_optimizer_state *out);
/* Replaces parameter i's state with copies of in's tensors (each must have the
 * parameter's shape, dtype and device; NULL clears it); the state is left as it was
 * on an error. */
OPS_API ops_status ops_optimizer_set_state(ops_optimizer *opt, int64_t i, const ops_optimizer_state *in);
OPS_API void ops_optimizer_release(ops_optimizer *opt);

#ifdef __cplusplus
}
#endif

#endif /* OPS_OPTIM_H */

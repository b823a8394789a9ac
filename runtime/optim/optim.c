/* Optimizers (include/libops/ops_optim.h): per-parameter state and PyTorch's update rules,
 * written as libops ops run with grad mode off. */
#include <math.h>
#include <string.h>

#include "ops_autograd.h"
#include "ops_internal.h"
#include "ops_optim.h"

#if __has_include("ops_functions.h")
#include "ops_op_add.h"
#include "ops_op_addcdiv.h"
#include "ops_op_addcmul.h"
#include "ops_op_clone.h"
#include "ops_op_maximum.h"
#include "ops_op_mul.h"
#include "ops_op_sqrt.h"
#include "ops_op_zero.h"
#include "ops_op_zeros_like.h"
#endif

typedef enum { OPT_SGD, OPT_ADAM, OPT_ADAMW } opt_kind;

typedef struct param_state {
    ops_tensor *p;
    ops_tensor *buf;  /* SGD momentum, Adam m */
    ops_tensor *v;    /* Adam second moment */
    ops_tensor *vmax; /* amsgrad */
    int64_t step;
} param_state;

struct ops_optimizer {
    opt_kind kind;
    ops_sgd_options sgd;
    ops_adam_options adam;
    int64_t n;
    param_state *ps;
};

void
ops_optimizer_release(ops_optimizer *opt)
{
    if (opt == NULL)
        return;
    for (int64_t i = 0; i < opt->n; i++) {
        ops_tensor_release(opt->ps[i].p);
        ops_tensor_release(opt->ps[i].buf);
        ops_tensor_release(opt->ps[i].v);
        ops_tensor_release(opt->ps[i].vmax);
    }
    ops_host_free(opt->ps);
    ops_host_free(opt);
}

ops_status
ops_optimizer_set_lr(ops_optimizer *opt, double lr)
{
    if (opt == NULL)
        return ops_fail(OPS_ERR_VALUE, "optimizer_set_lr: optimizer is NULL");
    if (!(lr >= 0))
        return ops_fail(OPS_ERR_VALUE, "optimizer_set_lr: Invalid learning rate: %g", lr);
    if (opt->kind == OPT_SGD)
        opt->sgd.lr = lr;
    else
        opt->adam.lr = lr;
    return OPS_OK;
}

double
ops_optimizer_get_lr(const ops_optimizer *opt)
{
    if (opt == NULL)
        return NAN;
    return opt->kind == OPT_SGD ? opt->sgd.lr : opt->adam.lr;
}

static ops_optimizer *
opt_new(const char *op, opt_kind kind, ops_tensor_list params)
{
    if (params.len < 0 || (params.len > 0 && params.data == NULL))
        return ops_fail_null(OPS_ERR_VALUE, "%s: params is not a valid list", op);
    if (params.len == 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: optimizer got an empty parameter list", op);
    for (int64_t i = 0; i < params.len; i++) {
        const ops_tensor *p = params.data[i];
        if (p == NULL || !ops_dtype_is_floating(ops_tensor_dtype(p)) || !ops_tensor_is_leaf(p))
            return ops_fail_null(OPS_ERR_VALUE, "%s: parameter %lld must be a floating leaf tensor", op,
                                 (long long)i);
    }
    ops_optimizer *o = ops_host_malloc(sizeof *o);
    param_state *ps = ops_host_malloc_array(params.len, sizeof *ps);
    if (o == NULL || ps == NULL) {
        ops_host_free(o);
        ops_host_free(ps);
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory", op);
    }
    memset(o, 0, sizeof *o);
    memset(ps, 0, (size_t)params.len * sizeof *ps);
    o->kind = kind;
    o->n = params.len;
    o->ps = ps;
    for (int64_t i = 0; i < params.len; i++)
        ps[i].p = ops_tensor_retain(params.data[i]);
    return o;
}

static ops_status
sgd_check(const char *op, const ops_sgd_options *opts)
{
    if (opts == NULL || !(opts->lr >= 0) || !(opts->momentum >= 0) || !(opts->weight_decay >= 0))
        return ops_fail(OPS_ERR_VALUE, "%s: Invalid learning rate, momentum or weight_decay value", op);
    if (opts->nesterov && (opts->momentum <= 0 || opts->dampening != 0))
        return ops_fail(OPS_ERR_VALUE, "%s: Nesterov momentum requires a momentum and zero dampening", op);
    return OPS_OK;
}

static ops_status
adam_check(const char *op, const ops_adam_options *a)
{
    if (!(a->lr >= 0) || !(a->eps >= 0) || !(a->weight_decay >= 0))
        return ops_fail(OPS_ERR_VALUE, "%s: Invalid learning rate, epsilon or weight_decay value", op);
    if (!(a->beta1 >= 0 && a->beta1 < 1) || !(a->beta2 >= 0 && a->beta2 < 1))
        return ops_fail(OPS_ERR_VALUE, "%s: Invalid beta parameters: (%g, %g)", op, a->beta1, a->beta2);
    return OPS_OK;
}

ops_optimizer *
ops_sgd_new(ops_tensor_list params, const ops_sgd_options *opts)
{
    const char *op = "SGD";
    if (sgd_check(op, opts) != OPS_OK)
        return NULL;
    ops_optimizer *o = opt_new(op, OPT_SGD, params);
    if (o != NULL)
        o->sgd = *opts;
    return o;
}

static ops_optimizer *
adam_new(const char *op, opt_kind kind, ops_tensor_list params, const ops_adam_options *opts)
{
    ops_adam_options a = opts != NULL ? *opts : (ops_adam_options){0};
    if (a.lr == 0)
        a.lr = 1e-3;
    if (a.beta1 == 0 && a.beta2 == 0) {
        a.beta1 = 0.9;
        a.beta2 = 0.999;
    }
    if (a.eps == 0)
        a.eps = 1e-8;
    if (kind == OPT_ADAMW && a.weight_decay == 0) /* AdamW without decay is Adam */
        a.weight_decay = 1e-2;
    if (adam_check(op, &a) != OPS_OK)
        return NULL;
    ops_optimizer *o = opt_new(op, kind, params);
    if (o != NULL)
        o->adam = a;
    return o;
}

ops_optimizer *
ops_adam_new(ops_tensor_list params, const ops_adam_options *opts)
{
    return adam_new("Adam", OPT_ADAM, params, opts);
}

ops_optimizer *
ops_adamw_new(ops_tensor_list params, const ops_adam_options *opts)
{
    return adam_new("AdamW", OPT_ADAMW, params, opts);
}

/* SGD in one pass over a contiguous float32/float64 CPU parameter (the op-by-op
 * path below makes three or more): d = +-g + wd p; buf = momentum buf + (1 - dampening) d
 * (buf = d the first time); d = nesterov ? d + momentum buf : buf; p -= lr d.  The
 * same operations in the same order as the op-by-op path below, in the parameter's
 * dtype. */
static bool
sgd_fusable(const param_state *s, const ops_tensor *g)
{
    const ops_tensor *p = s->p;
    const int64_t n = ops_tensor_numel(p);
    return (p->dtype == OPS_FLOAT32 || p->dtype == OPS_FLOAT64) && g->dtype == p->dtype &&
           ops_tensor_device(p).type == OPS_CPU && ops_tensor_device(g).type == OPS_CPU &&
           ops_tensor_numel(g) == n && ops_tensor_is_contiguous(p) && ops_tensor_is_contiguous(g) &&
           !ops_tensor_may_overlap(p, g) &&
           (s->buf == NULL || (s->buf->dtype == p->dtype && ops_tensor_is_contiguous(s->buf) &&
                               ops_tensor_numel(s->buf) == n && !ops_tensor_may_overlap(p, s->buf)));
}

/* A few flops per element over three arrays: memory-bound, so a second thread pays
 * only on arrays far beyond the caches; below that, waking the team costs more than
 * the loop (an MLP's 200K-element weights run faster on one thread). */
#define SGD_PARALLEL_MIN ((int64_t)1 << 21)

#define SGD_LOOP_(T)                                                                                         \
    do {                                                                                                     \
        T *pp = ops_tensor_data_ptr(s->p);                                                                   \
        const T *gp = ops_tensor_data_ptr(g);                                                                \
        T *bp = s->buf != NULL ? (T *)ops_tensor_data_ptr(s->buf) : NULL;                                    \
        const T sign = o->maximize ? (T)-1 : (T)1, wd = (T)o->weight_decay, mom = (T)o->momentum;            \
        const T damp1 = (T)(1.0 - o->dampening), nlr = (T)(-o->lr);                                          \
        const bool use_mom = o->momentum != 0, nest = o->nesterov;                                           \
        _Pragma("omp parallel for schedule(static) num_threads(nthreads) if (n >= SGD_PARALLEL_MIN)")        \
        for (int64_t i = 0; i < n; i++) {                                                                    \
            T d = sign * gp[i];                                                                              \
            if (wd != 0)                                                                                     \
                d += wd * pp[i];                                                                             \
            if (use_mom) {                                                                                   \
                const T b = first ? d : mom * bp[i] + damp1 * d;                                             \
                bp[i] = b;                                                                                   \
                d = nest ? d + mom * b : b;                                                                  \
            }                                                                                                \
            pp[i] += nlr * d;                                                                                \
        }                                                                                                    \
    } while (0)

static ops_status
sgd_update_fused(const ops_sgd_options *o, param_state *s, const ops_tensor *g)
{
    const int64_t n = ops_tensor_numel(s->p);
    const int nthreads = ops_get_num_threads();
    const bool first = o->momentum != 0 && s->buf == NULL;
    if (first) {
        s->buf = ops_tensor_new("SGD", s->p->ndim, s->p->sizes, NULL, s->p->dtype, ops_tensor_device(s->p));
        if (s->buf == NULL)
            return ops_last_status();
    }
    if (s->p->dtype == OPS_FLOAT32)
        SGD_LOOP_(float);
    else
        SGD_LOOP_(double);
    ops_tensor_bump_version(s->p);
    if (s->buf != NULL)
        ops_tensor_bump_version(s->buf);
    return OPS_OK;
}

static ops_status
sgd_update(const ops_sgd_options *o, param_state *s, const ops_tensor *g0)
{
    if (sgd_fusable(s, g0))
        return sgd_update_fused(o, s, g0);
    ops_tensor *d = NULL;
    ops_status st = OPS_OK;
    if (o->maximize || o->weight_decay != 0) {
        d = ops_mul_scalar(g0, OPS_SCALAR_FLOAT(o->maximize ? -1.0 : 1.0));
        if (d == NULL || (o->weight_decay != 0 && ops_add_(d, s->p, OPS_SCALAR_FLOAT(o->weight_decay)) != OPS_OK))
            goto fail;
    } else {
        d = ops_tensor_retain(g0);
    }
    if (o->momentum != 0) {
        if (s->buf == NULL) {
            if ((s->buf = ops_clone(d, OPS_MEMORY_FORMAT_NONE)) == NULL)
                goto fail;
        } else if (ops_mul_scalar_(s->buf, OPS_SCALAR_FLOAT(o->momentum)) != OPS_OK ||
                   ops_add_(s->buf, d, OPS_SCALAR_FLOAT(1.0 - o->dampening)) != OPS_OK) {
            goto fail;
        }
        if (o->nesterov) {
            if (ops_tensor_data_ptr(d) == ops_tensor_data_ptr(g0)) { /* d still is the grad: copy */
                ops_tensor *c = ops_clone(d, OPS_MEMORY_FORMAT_NONE);
                ops_tensor_release(d);
                if ((d = c) == NULL)
                    goto fail;
            }
            if (ops_add_(d, s->buf, OPS_SCALAR_FLOAT(o->momentum)) != OPS_OK)
                goto fail;
        } else {
            ops_tensor_release(d);
            d = ops_tensor_retain(s->buf);
        }
    }
    st = ops_add_(s->p, d, OPS_SCALAR_FLOAT(-o->lr));
    ops_tensor_release(d);
    return st;
fail:
    ops_tensor_release(d);
    return ops_last_status();
}

static ops_status
adam_update(opt_kind kind, const ops_adam_options *o, param_state *s, const ops_tensor *g0)
{
    ops_tensor *g = NULL, *denom = NULL, *vhat = NULL;
    s->step++;
    if (kind == OPT_ADAMW && o->weight_decay != 0 &&
        ops_mul_scalar_(s->p, OPS_SCALAR_FLOAT(1.0 - o->lr * o->weight_decay)) != OPS_OK)
        goto fail;
    g = ops_mul_scalar(g0, OPS_SCALAR_FLOAT(o->maximize ? -1.0 : 1.0));
    if (g == NULL)
        goto fail;
    if (kind == OPT_ADAM && o->weight_decay != 0 && ops_add_(g, s->p, OPS_SCALAR_FLOAT(o->weight_decay)) != OPS_OK)
        goto fail;
    if (s->buf == NULL) {
        if ((s->buf = ops_zeros_like(g, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE)) == NULL ||
            (s->v = ops_zeros_like(g, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE)) == NULL)
            goto fail;
    }
    /* m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2 */
    if (ops_mul_scalar_(s->buf, OPS_SCALAR_FLOAT(o->beta1)) != OPS_OK ||
        ops_add_(s->buf, g, OPS_SCALAR_FLOAT(1.0 - o->beta1)) != OPS_OK ||
        ops_mul_scalar_(s->v, OPS_SCALAR_FLOAT(o->beta2)) != OPS_OK ||
        ops_addcmul_(s->v, g, g, OPS_SCALAR_FLOAT(1.0 - o->beta2)) != OPS_OK)
        goto fail;
    const ops_tensor *v = s->v;
    if (o->amsgrad) {
        ops_tensor *mx = s->vmax == NULL ? ops_clone(s->v, OPS_MEMORY_FORMAT_NONE) : ops_maximum(s->vmax, s->v);
        if (mx == NULL)
            goto fail;
        ops_tensor_release(s->vmax);
        s->vmax = mx;
        v = mx;
    }
    const double bc1 = 1.0 - pow(o->beta1, (double)s->step), bc2 = 1.0 - pow(o->beta2, (double)s->step);
    /* denom = sqrt(v) / sqrt(bc2) + eps;  p -= lr / bc1 * m / denom */
    if ((vhat = ops_sqrt(v)) == NULL || ops_mul_scalar_(vhat, OPS_SCALAR_FLOAT(1.0 / sqrt(bc2))) != OPS_OK)
        goto fail;
    if ((denom = ops_add_scalar(vhat, OPS_SCALAR_FLOAT(o->eps), OPS_SCALAR_INT(1))) == NULL)
        goto fail;
    if (ops_addcdiv_(s->p, s->buf, denom, OPS_SCALAR_FLOAT(-o->lr / bc1)) != OPS_OK)
        goto fail;
    ops_tensor_release(g);
    ops_tensor_release(vhat);
    ops_tensor_release(denom);
    return OPS_OK;
fail:
    ops_tensor_release(g);
    ops_tensor_release(vhat);
    ops_tensor_release(denom);
    return ops_last_status();
}

ops_status
ops_optimizer_step(ops_optimizer *opt)
{
    if (opt == NULL)
        return ops_fail(OPS_ERR_VALUE, "optimizer step: optimizer is NULL");
    const bool prev = ops_set_grad_enabled(false);
    ops_status st = OPS_OK;
    for (int64_t i = 0; i < opt->n && st == OPS_OK; i++) {
        param_state *s = &opt->ps[i];
        ops_tensor *g = ops_tensor_grad(s->p);
        if (g == NULL)
            continue;
        if (opt->kind == OPT_SGD) {
            s->step++; /* only says the parameter has state (torch's SGD keeps no step) */
            st = sgd_update(&opt->sgd, s, g);
        } else {
            st = adam_update(opt->kind, &opt->adam, s, g);
        }
        ops_tensor_release(g);
    }
    ops_set_grad_enabled(prev);
    return st;
}

ops_status
ops_optimizer_zero_grad(ops_optimizer *opt, bool set_to_none)
{
    if (opt == NULL)
        return ops_fail(OPS_ERR_VALUE, "zero_grad: optimizer is NULL");
    for (int64_t i = 0; i < opt->n; i++) {
        ops_tensor *g = ops_tensor_grad(opt->ps[i].p);
        if (g == NULL)
            continue;
        ops_status st = set_to_none ? ops_tensor_set_grad(opt->ps[i].p, NULL) : ops_zero_(g);
        ops_tensor_release(g);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

ops_status
ops_optimizer_set_sgd_options(ops_optimizer *opt, const ops_sgd_options *opts)
{
    const char *op = "optimizer_set_sgd_options";
    if (opt == NULL || opt->kind != OPT_SGD)
        return ops_fail(OPS_ERR_VALUE, "%s: the optimizer is %s, not SGD", op, opt == NULL ? "NULL" : "Adam/AdamW");
    ops_status st = sgd_check(op, opts);
    if (st == OPS_OK)
        opt->sgd = *opts;
    return st;
}

ops_status
ops_optimizer_set_adam_options(ops_optimizer *opt, const ops_adam_options *opts)
{
    const char *op = "optimizer_set_adam_options";
    if (opt == NULL || opt->kind == OPT_SGD)
        return ops_fail(OPS_ERR_VALUE, "%s: the optimizer is %s, not Adam/AdamW", op, opt == NULL ? "NULL" : "SGD");
    if (opts == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: options are NULL", op);
    ops_status st = adam_check(op, opts);
    if (st == OPS_OK)
        opt->adam = *opts;
    return st;
}

int64_t
ops_optimizer_num_params(const ops_optimizer *opt)
{
    return opt == NULL ? 0 : opt->n;
}

ops_status
ops_optimizer_get_state(const ops_optimizer *opt, int64_t i, ops_optimizer_state *out)
{
    if (opt == NULL || out == NULL)
        return ops_fail(OPS_ERR_VALUE, "optimizer_get_state: optimizer and out must not be NULL");
    if (i < 0 || i >= opt->n)
        return ops_fail(OPS_ERR_INDEX, "optimizer_get_state: parameter index %lld out of range [0, %lld)",
                        (long long)i, (long long)opt->n);
    const param_state *s = &opt->ps[i];
    *out = (ops_optimizer_state){.step = s->step,
                                 .buf = s->buf ? ops_tensor_retain(s->buf) : NULL,
                                 .v = s->v ? ops_tensor_retain(s->v) : NULL,
                                 .vmax = s->vmax ? ops_tensor_retain(s->vmax) : NULL};
    return OPS_OK;
}

/* A contiguous copy of t for parameter p's state (what the fused SGD loop needs);
 * *ok false with an error if t does not fit p. */
static ops_tensor *
state_copy(const ops_tensor *p, const ops_tensor *t, const char *name, int64_t i, bool *ok)
{
    *ok = true;
    if (t == NULL)
        return NULL;
    const char *op = "optimizer_set_state";
    bool same = ops_tensor_ndim(t) == ops_tensor_ndim(p);
    for (int64_t d = 0; same && d < ops_tensor_ndim(p); d++)
        same = ops_tensor_sizes(t)[d] == ops_tensor_sizes(p)[d];
    if (!same || ops_tensor_dtype(t) != ops_tensor_dtype(p) ||
        !ops_device_equal(ops_tensor_device(t), ops_tensor_device(p))) {
        *ok = false;
        ops_fail(OPS_ERR_VALUE, "%s: %s of parameter %lld must have the parameter's shape, dtype (%s) and device; "
                 "got %lld dims, %s", op, name, (long long)i, ops_dtype_name(ops_tensor_dtype(p)),
                 (long long)ops_tensor_ndim(t), ops_dtype_name(ops_tensor_dtype(t)));
        return NULL;
    }
    const bool prev = ops_set_grad_enabled(false);
    ops_tensor *c = ops_clone(t, OPS_CONTIGUOUS_FORMAT);
    ops_set_grad_enabled(prev);
    *ok = c != NULL;
    return c;
}

ops_status
ops_optimizer_set_state(ops_optimizer *opt, int64_t i, const ops_optimizer_state *in)
{
    if (opt == NULL || in == NULL)
        return ops_fail(OPS_ERR_VALUE, "optimizer_set_state: optimizer and state must not be NULL");
    if (i < 0 || i >= opt->n)
        return ops_fail(OPS_ERR_INDEX, "optimizer_set_state: parameter index %lld out of range [0, %lld)",
                        (long long)i, (long long)opt->n);
    if (in->step < 0)
        return ops_fail(OPS_ERR_VALUE, "optimizer_set_state: step %lld of parameter %lld is negative",
                        (long long)in->step, (long long)i);
    param_state *s = &opt->ps[i];
    bool ok1, ok2 = false, ok3 = false;
    ops_tensor *b = state_copy(s->p, in->buf, "buf (momentum_buffer / exp_avg)", i, &ok1);
    ops_tensor *v = ok1 ? state_copy(s->p, in->v, "v (exp_avg_sq)", i, &ok2) : NULL;
    ops_tensor *vm = ok2 ? state_copy(s->p, in->vmax, "vmax (max_exp_avg_sq)", i, &ok3) : NULL;
    if (ok3 && opt->kind != OPT_SGD && (b == NULL) != (v == NULL)) {
        ok3 = false;
        ops_fail(OPS_ERR_VALUE, "optimizer_set_state: parameter %lld: exp_avg and exp_avg_sq go together", (long long)i);
    }
    if (!ok3) {
        ops_tensor_release(b);
        ops_tensor_release(v);
        ops_tensor_release(vm);
        return ops_last_status();
    }
    ops_tensor_release(s->buf);
    ops_tensor_release(s->v);
    ops_tensor_release(s->vmax);
    s->buf = b;
    s->v = v;
    s->vmax = vm;
    s->step = in->step;
    return OPS_OK;
}

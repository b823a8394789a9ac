/* gradcheck and gradgradcheck (include/libops/ops_autograd.h): backward against central
 * finite differences, in float64.
 *
 * f maps the inputs to one output.  With a random v of the output's shape, the
 * scalar <v, f(x)> has gradient J^T v, which backward computes in one pass
 * (ops_autograd_grad with grad_outputs v); the finite differences perturb one input
 * element at a time, writing through the input's strides, with grad mode off. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_add.h"
#include "ops_op_mul.h"
#include "ops_op_sum.h"
#include "ops_op_to.h"
#endif

static const ops_gradcheck_options DEFAULTS = {1e-6, 1e-5, 1e-3, 12345};

/* splitmix64: a fixed, portable stream for v and the weights. */
static double
next_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* [-1, 1) */
}

static ops_tensor *
random_like(const ops_tensor *t, uint64_t *state)
{
    ops_tensor *r = ops_tensor_new("gradcheck", t->ndim, t->sizes, NULL, OPS_FLOAT64, ops_tensor_device(t));
    if (r == NULL)
        return NULL;
    double *p = ops_tensor_data_ptr(r);
    for (int64_t i = 0; i < ops_tensor_numel(r); i++)
        p[i] = next_uniform(state);
    return r;
}

/* Address of the i-th element (row-major logical order) of a float64 tensor. */
static double *
element(const ops_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t s = t->sizes[d];
        off += (i % s) * t->strides[d];
        i /= s;
    }
    return (double *)t->storage->data + t->offset + off;
}

/* <v, f(x)> with grad mode off. */
static ops_status
probe(ops_gradcheck_fn f, void *ctx, int n, ops_tensor *const *inputs, const ops_tensor *v, double *out)
{
    ops_tensor *y = NULL, *y64 = NULL;
    ops_status st = f(inputs, n, &y, ctx);
    if (st != OPS_OK)
        return st;
    y64 = ops_to_dtype(y, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE);
    if (y64 == NULL) {
        ops_tensor_release(y);
        return ops_last_status();
    }
    double s = 0;
    for (int64_t i = 0; i < ops_tensor_numel(y64); i++)
        s += *element(y64, i) * *element(v, i);
    *out = s;
    ops_tensor_release(y64);
    ops_tensor_release(y);
    return OPS_OK;
}

ops_status
ops_gradcheck(ops_gradcheck_fn f, void *ctx, int n, ops_tensor *const *inputs, const ops_gradcheck_options *opts)
{
    const char *op = "gradcheck";
    const ops_gradcheck_options o = opts != NULL ? *opts : DEFAULTS;
    uint64_t state = o.seed;
    ops_status st = OPS_OK;
    ops_tensor *y = NULL, *v = NULL;
    ops_tensor_vec an = {0};
    const ops_tensor *diff[16];
    int idx[16], nd = 0;
    for (int i = 0; i < n; i++) {
        if (inputs[i] == NULL || !ops_tensor_requires_grad(inputs[i]))
            continue;
        if (inputs[i]->dtype != OPS_FLOAT64)
            return ops_fail(OPS_ERR_DTYPE, "%s: input %d must be float64, got %s", op, i,
                            ops_dtype_name(inputs[i]->dtype));
        if (ops_tensor_device(inputs[i]).type != OPS_CPU) {
            /* the finite differences perturb elements in place on the host */
            char dev[32];
            return ops_fail(OPS_ERR_NOT_IMPLEMENTED,
                            "%s: input %d is on %s; gradcheck runs on cpu tensors (check a cpu copy)", op, i,
                            ops_device_str(ops_tensor_device(inputs[i]), dev, sizeof dev));
        }
        if (ops_tensor_has_internal_overlap(inputs[i]))
            return ops_fail(OPS_ERR_VALUE, "%s: input %d has elements that share memory", op, i);
        if (nd == 16)
            return ops_fail(OPS_ERR_VALUE, "%s: at most 16 inputs requiring grad", op);
        idx[nd] = i;
        diff[nd++] = inputs[i];
    }
    if (nd == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: no input requires grad", op);
    if ((st = f(inputs, n, &y, ctx)) != OPS_OK)
        return st;
    if (!ops_tensor_requires_grad(y)) {
        st = ops_fail(OPS_ERR_VALUE, "%s: the output does not require grad (no formula recorded it)", op);
        goto done;
    }
    if ((v = random_like(y, &state)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    {
        ops_tensor *vy = v;
        if (y->dtype != OPS_FLOAT64 && (vy = ops_to_dtype(v, y->dtype, false, false, OPS_MEMORY_FORMAT_NONE)) == NULL) {
            st = ops_last_status();
            goto done;
        }
        const ops_tensor *outs[1] = {y}, *gos[1] = {vy};
        st = ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){diff, nd}, (ops_tensor_list){gos, 1},
                               false, false, true, &an);
        if (vy != v)
            ops_tensor_release(vy);
        if (st != OPS_OK)
            goto done;
    }
    const bool prev = ops_set_grad_enabled(false);
    for (int k = 0; k < nd && st == OPS_OK; k++) {
        const ops_tensor *x = diff[k];
        ops_tensor *a = an.data[k] != NULL ? ops_to_dtype(an.data[k], OPS_FLOAT64, false, false,
                                                          OPS_MEMORY_FORMAT_NONE) : NULL;
        if (an.data[k] != NULL && a == NULL) {
            st = ops_last_status();
            break;
        }
        for (int64_t j = 0; j < ops_tensor_numel(x); j++) {
            double *p = element(x, j), orig = *p, fp, fm;
            *p = orig + o.eps;
            st = probe(f, ctx, n, inputs, v, &fp);
            *p = orig - o.eps;
            if (st == OPS_OK)
                st = probe(f, ctx, n, inputs, v, &fm);
            *p = orig;
            if (st != OPS_OK)
                break;
            const double num = (fp - fm) / (2 * o.eps);
            const double ana = a != NULL ? *element(a, j) : 0.0;
            if (!(fabs(ana - num) <= o.atol + o.rtol * fabs(num))) {
                st = ops_fail(OPS_ERR_RUNTIME,
                              "%s: Jacobian mismatch for input %d at element %" PRId64 ": analytical %.10g, "
                              "numerical %.10g",
                              op, idx[k], j, ana, num);
                break;
            }
        }
        ops_tensor_release(a);
    }
    ops_set_grad_enabled(prev);
done:
    ops_tensor_vec_release(&an);
    ops_tensor_release(v);
    ops_tensor_release(y);
    return st;
}

/* gradgradcheck: h(x, v) = sum_k <w_k, d<v, f(x)>/dx_k>, the first derivatives
 * built with create_graph, checked by gradcheck in x and v. */
typedef struct {
    ops_gradcheck_fn f;
    void *ctx;
    int n;
    uint64_t seed;
} gg_ctx;

static ops_status
first_derivatives(ops_tensor *const *in, int n1, ops_tensor **out, void *p)
{
    const gg_ctx *c = p;
    const int n = c->n;
    const ops_tensor *v = in[n];
    ops_tensor *y = NULL, *acc = NULL;
    ops_tensor_vec g = {0};
    const ops_tensor *diff[16];
    int nd = 0;
    (void)n1;
    for (int i = 0; i < n; i++)
        if (in[i] != NULL && ops_tensor_requires_grad(in[i]) && nd < 16)
            diff[nd++] = in[i];
    /* The first derivatives need the graph even when the caller (gradcheck's finite
     * differences) runs with grad mode off. */
    const bool prev = ops_set_grad_enabled(true);
    ops_status st = c->f(in, n, &y, c->ctx);
    if (st != OPS_OK) {
        ops_set_grad_enabled(prev);
        return st;
    }
    const ops_tensor *outs[1] = {y}, *gos[1] = {v};
    st = ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){diff, nd}, (ops_tensor_list){gos, 1},
                           true, true, true, &g);
    uint64_t state = c->seed ^ 0x5bd1e995u;
    for (int k = 0; k < nd && st == OPS_OK; k++) {
        ops_tensor *w = random_like(diff[k], &state);
        ops_tensor *prod = NULL, *s = NULL;
        if (w == NULL) {
            st = ops_last_status();
            break;
        }
        if (g.data[k] != NULL) {
            prod = ops_mul(g.data[k], w);
            s = prod != NULL ? ops_sum(prod, OPS_DTYPE_NONE) : NULL;
            if (s == NULL)
                st = ops_last_status();
        }
        ops_tensor_release(prod);
        ops_tensor_release(w);
        if (st == OPS_OK && s != NULL) {
            ops_tensor *nacc = acc == NULL ? ops_tensor_retain(s) : ops_add(acc, s, OPS_SCALAR_INT(1));
            if (nacc == NULL)
                st = ops_last_status();
            ops_tensor_release(acc);
            acc = nacc;
        }
        ops_tensor_release(s);
    }
    ops_tensor_vec_release(&g);
    ops_tensor_release(y);
    ops_set_grad_enabled(prev);
    if (st == OPS_OK && acc == NULL)
        st = ops_fail(OPS_ERR_VALUE, "gradgradcheck: no first derivative depends on the inputs");
    if (st != OPS_OK) {
        ops_tensor_release(acc);
        return st;
    }
    *out = acc;
    return OPS_OK;
}

ops_status
ops_gradgradcheck(ops_gradcheck_fn f, void *ctx, int n, ops_tensor *const *inputs, const ops_gradcheck_options *opts)
{
    const ops_gradcheck_options o = opts != NULL ? *opts : DEFAULTS;
    ops_tensor *inputs2[17];
    if (n > 16)
        return ops_fail(OPS_ERR_VALUE, "gradgradcheck: at most 16 inputs");
    for (int i = 0; i < n; i++)
        if (inputs[i] != NULL && ops_tensor_device(inputs[i]).type != OPS_CPU) {
            char dev[32];
            return ops_fail(OPS_ERR_NOT_IMPLEMENTED,
                            "gradgradcheck: input %d is on %s; gradcheck runs on cpu tensors (check a cpu copy)", i,
                            ops_device_str(ops_tensor_device(inputs[i]), dev, sizeof dev));
        }
    /* v: the grad_output, itself an input of the first derivatives. */
    ops_tensor *y = NULL;
    ops_status st = f(inputs, n, &y, ctx);
    if (st != OPS_OK)
        return st;
    uint64_t state = o.seed;
    ops_tensor *v = random_like(y, &state);
    ops_tensor_release(y);
    if (v == NULL)
        return ops_last_status();
    if ((st = ops_tensor_set_requires_grad(v, true)) != OPS_OK) {
        ops_tensor_release(v);
        return st;
    }
    memcpy(inputs2, inputs, (size_t)n * sizeof *inputs);
    inputs2[n] = v;
    gg_ctx c = {f, ctx, n, o.seed};
    /* First derivatives that do not depend on x or v (sign, floor: zero) leave
     * nothing to check. */
    ops_tensor *h = NULL;
    st = first_derivatives(inputs2, n + 1, &h, &c);
    const bool constant = st == OPS_OK && !ops_tensor_requires_grad(h);
    ops_tensor_release(h);
    if (st == OPS_OK && !constant)
        st = ops_gradcheck(first_derivatives, &c, n + 1, inputs2, &o);
    ops_tensor_release(v);
    return st;
}

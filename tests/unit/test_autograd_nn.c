/* Neural-network gradients the conformance runner's gradient family cannot reach
 * (it gradchecks every formula on the op's own cases, tests/conformance/runner.c):
 * batch_norm in training mode with running statistics (its cases have none, since
 * the runner refuses inputs that change), whose running stats are updated but get no
 * gradient; binary_cross_entropy's gradient at the ends of [0, 1], where PyTorch
 * clamps the denominator; transposed convolutions whose output_padding reaches the
 * stride; and cross_entropy beyond [N, C] class indices (N-D inputs, [C] inputs,
 * probability targets) and the class losses' weights under every combination of
 * their arguments, more than their conformance samples.  Expected values come from PyTorch 1.13 (torch.autograd.grad
 * on the same data), written out below, or by hand. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops_autograd_impl.h"
#include "ops_op_batch_norm.h"
#include "ops_op_binary_cross_entropy.h"
#include "ops_op_contiguous.h"
#include "ops_op_conv_transpose1d.h"
#include "ops_op_conv_transpose2d.h"
#include "ops_op_cross_entropy_loss.h"
#include "ops_op_full.h"
#include "ops_op_mul.h"
#include "ops_op_sum.h"
#include "ops_op_zeros.h"
#include "ops_tensor.h"

static ops_tensor *
vec(const double *d, int64_t n0, int64_t n1)
{
    const int64_t sz[2] = {n0, n1};
    return ops_tensor_from_data(d, (ops_int_list){sz, n1 > 0 ? 2 : 1}, OPS_FLOAT64);
}

static void
expect_values(const ops_tensor *t, const double *want, int64_t n, double tol)
{
    ck_assert_ptr_nonnull(t);
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(ops_tensor_numel(c), n);
    const double *p = ops_tensor_data_ptr(c);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(p[i] - want[i]) <= tol * (1 + fabs(want[i])), "element %lld: got %.17g, want %.17g",
                      (long long)i, p[i], want[i]);
    ops_tensor_release(c);
}

typedef struct {
    ops_tensor *rm, *rv;
} bn_ctx;

/* batch_norm(x, w, b) in training mode with running stats (updated on every call) */
static ops_status
bn_fn(ops_tensor *const *in, int n, ops_tensor **out, void *p)
{
    const bn_ctx *c = p;
    (void)n;
    *out = ops_batch_norm(in[0], in[1], in[2], c->rm, c->rv, true, 0.1, 1e-5, true);
    return *out != NULL ? OPS_OK : ops_last_status();
}

START_TEST(test_batch_norm_training_with_running_stats)
{
    static const double xd[12] = {0.5, -1.0, 2.0, 1.5, 0.25, -0.5, -2.0, 1.0, 0.75, 0.0, -0.25, 1.25};
    static const double vd[12] = {1.0, 2.0, -1.0, 0.5, -0.5, 1.5, 2.0, 1.0, 0.0, -1.0, 0.25, 0.5};
    ops_tensor *x = vec(xd, 4, 3), *v = vec(vd, 4, 3);
    ops_tensor *w = vec((double[]){1.5, -0.5, 2.0}, 3, 0), *b = vec((double[]){0.1, 0.2, 0.3}, 3, 0);
    ops_tensor *rm = vec((double[]){0.0, 0.5, -0.5}, 3, 0), *rv = vec((double[]){1.0, 2.0, 0.5}, 3, 0);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(b, true), OPS_OK);
    ops_tensor *y = ops_batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5, true);
    ck_assert_ptr_nonnull(y);
    ops_tensor *yv = ops_mul(y, v);
    ops_tensor *s = ops_sum(yv, OPS_DTYPE_NONE);
    const ops_tensor *ins[3] = {x, w, b}, *outs[1] = {s};
    ops_tensor_vec g = {0};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 3},
                                       (ops_tensor_list){NULL, 0}, false, false, false, &g),
                     OPS_OK);
    expect_values(g.data[0],
                  (double[]){0.6901742817257708, -0.5170201432552941, -0.5079988880897509, 0.5996563573770087,
                             0.718775873835891, 0.01039982051236697, 0.6222957950376149, -0.5977101686409789,
                             -0.7982384722262871, -1.9121264341403945, 0.39595443806038205, 1.2958375398036706},
                  12, 1e-12);
    expect_values(g.data[1], (double[]){-2.1572708487737784, -1.6292212250791684, -3.2966336306255717}, 3, 1e-12);
    expect_values(g.data[2], (double[]){2.5, 2.75, 1.0}, 3, 1e-12);
    /* the running stats were updated once (momentum 0.1, unbiased variance) and carry
     * no gradient */
    expect_values(rm, (double[]){0.0, 0.45, -0.3625}, 3, 1e-12);
    expect_values(rv, (double[]){1.1166666666666667, 1.8708333333333333, 0.5604166666666667}, 3, 1e-12);
    ck_assert(!ops_tensor_requires_grad(rm) && !ops_tensor_requires_grad(rv));
    ops_tensor_vec_release(&g);
    /* and the formula is right to second order around other data too */
    bn_ctx c = {rm, rv};
    ops_tensor *in[3] = {x, w, b};
    ck_assert_int_eq(ops_gradcheck(bn_fn, &c, 3, in, NULL), OPS_OK);
    ck_assert_int_eq(ops_gradgradcheck(bn_fn, &c, 3, in, NULL), OPS_OK);
    ops_tensor *const all[] = {x, v, w, b, rm, rv, y, yv, s};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_binary_cross_entropy_at_the_ends)
{
    ops_tensor *x = vec((double[]){0.0, 0.3, 1.0}, 3, 0), *t = vec((double[]){0.2, 0.5, 0.7}, 3, 0);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    ops_tensor *l = ops_binary_cross_entropy(x, t, NULL, 2);
    ck_assert_ptr_nonnull(l);
    const ops_tensor *ins[2] = {x, t}, *outs[1] = {l};
    ops_tensor_vec g = {0};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 2},
                                       (ops_tensor_list){NULL, 0}, false, false, false, &g),
                     OPS_OK);
    /* (x - t) / max(x (1 - x), 1e-12): finite at 0 and 1, as PyTorch's */
    expect_values(g.data[0], (double[]){-2.0e11, -0.95238095238095233, 3.0e11}, 3, 1e-12);
    /* the target's log(1 - x) - log(x) is not clamped (PyTorch's neither) */
    ops_tensor *gt = ops_contiguous(g.data[1], OPS_CONTIGUOUS_FORMAT);
    const double *p = ops_tensor_data_ptr(gt);
    ck_assert(isinf(p[0]) && p[0] > 0 && isinf(p[2]) && p[2] < 0);
    ck_assert(fabs(p[1] - 0.84729786038720367) < 1e-12);
    ops_tensor_release(gt);
    ops_tensor_vec_release(&g);
    ops_tensor_release(l);
    ops_tensor_release(x);
    ops_tensor_release(t);
}
END_TEST

/* conv_transpose1d/2d with output_padding >= stride (allowed below the dilation): the
 * convolution giving the input's gradient comes out longer than the input and is cut
 * (PyTorch's gradcheck passes on the same configuration). */
static ops_status
ct1_fn(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    *out = ops_conv_transpose1d(in[0], in[1], in[2], OPS_INTS(1), OPS_INTS(0), OPS_INTS(1), 1, OPS_INTS(2));
    return *out != NULL ? OPS_OK : ops_last_status();
}

static ops_status
ct2_fn(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    *out = ops_conv_transpose2d_input(in[0], in[1], in[2], OPS_INTS(1, 2), OPS_INTS(0, 1), OPS_INTS(1, 0), 1,
                                      OPS_INTS(2, 1));
    return *out != NULL ? OPS_OK : ops_last_status();
}

static ops_tensor *
ramp(int nd, const int64_t *sizes, double scale)
{
    ops_tensor *t = ops_zeros((ops_int_list){sizes, nd}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    double *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        p[i] = scale * (double)((i * 7) % 11 - 5); /* distinct-ish values of both signs */
    ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    return t;
}

START_TEST(test_conv_transpose_output_padding_past_stride)
{
    ops_tensor *x = ramp(3, (int64_t[]){2, 3, 5}, 0.1), *w = ramp(3, (int64_t[]){3, 4, 3}, 0.07);
    ops_tensor *b = ramp(1, (int64_t[]){4}, 0.3);
    ops_tensor *in[3] = {x, w, b};
    ops_tensor *y = NULL;
    ck_assert_int_eq(ct1_fn(in, 3, &y, NULL), OPS_OK);
    ck_assert_int_eq(ops_tensor_sizes(y)[2], 10); /* PyTorch: [2, 4, 10] */
    ops_tensor_release(y);
    ck_assert_int_eq(ops_gradcheck(ct1_fn, NULL, 3, in, NULL), OPS_OK);
    ck_assert_int_eq(ops_gradgradcheck(ct1_fn, NULL, 3, in, NULL), OPS_OK);
    ops_tensor *x2 = ramp(4, (int64_t[]){1, 3, 4, 3}, 0.1), *w2 = ramp(4, (int64_t[]){3, 2, 2, 3}, 0.07);
    ops_tensor *b2 = ramp(1, (int64_t[]){2}, 0.3);
    ops_tensor *in2[3] = {x2, w2, b2};
    ck_assert_int_eq(ops_gradcheck(ct2_fn, NULL, 3, in2, NULL), OPS_OK);
    ck_assert_int_eq(ops_gradgradcheck(ct2_fn, NULL, 3, in2, NULL), OPS_OK);
    ops_tensor *const all[] = {x, w, b, x2, w2, b2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* cross_entropy beyond [N, C] with class indices: over [N, C, d1, ...] (classes along
 * dim 1, one target per position), over [C] with a 0-dim target, and with class
 * probabilities (a floating target of self's shape, which gets a gradient too), for
 * every reduction, with class weights, ignore_index and label smoothing.  These
 * backwards once refused with "not implemented". */
typedef struct {
    const ops_tensor *target, *weight;
    int64_t reduction, ignore_index;
    double smoothing;
} ce_ctx;

/* in[0]: self; then a probability target when c->target is NULL; then the class
 * weights when c->weight is NULL and inputs are left */
static ops_status
ce_fn(ops_tensor *const *in, int n, ops_tensor **out, void *p)
{
    const ce_ctx *c = p;
    int k = 1;
    const ops_tensor *t = c->target != NULL ? c->target : in[k++];
    const ops_tensor *w = c->weight != NULL || k >= n ? c->weight : in[k];
    *out = ops_cross_entropy_loss(in[0], t, w, c->reduction, c->ignore_index, c->smoothing);
    return *out != NULL ? OPS_OK : ops_last_status();
}

START_TEST(test_cross_entropy_nd_and_probability_gradients)
{
    static const int64_t xs[4] = {2, 3, 2, 2}, ts[3] = {2, 2, 2}, x1s[1] = {3};
    ops_tensor *x = ramp(4, xs, 0.3), *x1 = ramp(1, x1s, 0.4);
    ops_tensor *probs = ramp(4, xs, 0.05); /* soft targets (need not sum to 1) */
    ops_tensor *probs1 = ramp(1, x1s, 0.1);
    ops_tensor *idx = ops_tensor_from_data((int64_t[]){0, 1, 2, 1, 2, 0, 1, 1}, (ops_int_list){ts, 3}, OPS_INT64);
    ops_tensor *idx0 = ops_tensor_from_data((int64_t[]){2}, (ops_int_list){NULL, 0}, OPS_INT64);
    ops_tensor *w = vec((double[]){0.5, 2.0, 1.25}, 3, 0);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ck_assert_ptr_nonnull(idx);
    ck_assert_ptr_nonnull(idx0);
    for (int64_t red = 0; red < 3; red++) {
        for (int weighted = 0; weighted < 2; weighted++) {
            for (int k = 0; k < 2; k++) {
                const double eps = k == 0 ? 0.0 : 0.2;
                const ops_tensor *wt = weighted ? w : NULL;
                /* class indices over [N, C, d1, d2], ignoring class 1 at 3 positions */
                ce_ctx c = {idx, wt, red, k == 0 ? -100 : 1, eps};
                ck_assert_msg(ops_gradcheck(ce_fn, &c, 1, &x, NULL) == OPS_OK, "indices red %lld: %s",
                              (long long)red, ops_last_error());
                ck_assert_msg(ops_gradgradcheck(ce_fn, &c, 1, &x, NULL) == OPS_OK, "indices red %lld: %s",
                              (long long)red, ops_last_error());
                /* one sample of C classes */
                ce_ctx c0 = {idx0, wt, red, -100, eps};
                ck_assert_msg(ops_gradcheck(ce_fn, &c0, 1, &x1, NULL) == OPS_OK, "[C] red %lld: %s",
                              (long long)red, ops_last_error());
                /* probabilities: self and target */
                ce_ctx cp = {NULL, wt, red, -100, eps};
                ops_tensor *in[2] = {x, probs}, *in1[2] = {x1, probs1};
                ck_assert_msg(ops_gradcheck(ce_fn, &cp, 2, in, NULL) == OPS_OK, "probabilities red %lld: %s",
                              (long long)red, ops_last_error());
                ck_assert_msg(ops_gradgradcheck(ce_fn, &cp, 2, in, NULL) == OPS_OK, "probabilities red %lld: %s",
                              (long long)red, ops_last_error());
                ck_assert_msg(ops_gradcheck(ce_fn, &cp, 2, in1, NULL) == OPS_OK, "[C] probabilities red %lld: %s",
                              (long long)red, ops_last_error());
            }
        }
        /* the class weights as an input too (PyTorch 1.13 refuses them requiring grad
         * for class indices; the loss is linear in them) */
        for (int k = 0; k < 2; k++) {
            const double eps = k == 0 ? 0.0 : 0.2;
            ce_ctx c = {idx, NULL, red, k == 0 ? -100 : 1, eps};
            ops_tensor *in[2] = {x, w}, *in1[2] = {x1, w};
            ck_assert_msg(ops_gradcheck(ce_fn, &c, 2, in, NULL) == OPS_OK, "weights red %lld: %s", (long long)red,
                          ops_last_error());
            ck_assert_msg(ops_gradgradcheck(ce_fn, &c, 2, in, NULL) == OPS_OK, "weights red %lld: %s",
                          (long long)red, ops_last_error());
            ce_ctx c0 = {idx0, NULL, red, -100, eps};
            ck_assert_msg(ops_gradcheck(ce_fn, &c0, 2, in1, NULL) == OPS_OK, "[C] weights red %lld: %s",
                          (long long)red, ops_last_error());
            ce_ctx cp = {NULL, NULL, red, -100, eps};
            ops_tensor *inp[3] = {x, probs, w};
            ck_assert_msg(ops_gradcheck(ce_fn, &cp, 3, inp, NULL) == OPS_OK, "probabilities, weights red %lld: %s",
                          (long long)red, ops_last_error());
            ck_assert_msg(ops_gradgradcheck(ce_fn, &cp, 3, inp, NULL) == OPS_OK,
                          "probabilities, weights red %lld: %s", (long long)red, ops_last_error());
        }
    }
    /* by hand: x = [0, 0] and t = [0.25, 0.75], sum: softmax(x) = [0.5, 0.5], so
     * d/dx = softmax(x) sum(t) - t = [0.25, -0.25] and d/dt = -log_softmax(x) = log 2 */
    ops_tensor *hx = vec((double[]){0.0, 0.0}, 2, 0), *ht = vec((double[]){0.25, 0.75}, 2, 0);
    ck_assert_int_eq(ops_tensor_set_requires_grad(hx, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(ht, true), OPS_OK);
    ops_tensor *l = ops_cross_entropy_loss(hx, ht, NULL, 2, -100, 0.0);
    ck_assert_ptr_nonnull(l);
    const ops_tensor *ins[2] = {hx, ht}, *outs[1] = {l};
    ops_tensor_vec g = {0};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 2},
                                       (ops_tensor_list){NULL, 0}, false, false, false, &g),
                     OPS_OK);
    expect_values(g.data[0], (double[]){0.25, -0.25}, 2, 1e-15);
    expect_values(g.data[1], (double[]){log(2.0), log(2.0)}, 2, 1e-15);
    ops_tensor_vec_release(&g);
    ops_tensor *const all[] = {x, x1, probs, probs1, idx, idx0, w, hx, ht, l};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* Every allocation in a backward helper may fail: each helper of runtime/autograd/backward/autograd_nn.c
 * (called directly, as a node's apply calls it) with the nth allocation failing for
 * n = 1, 2, ... until it succeeds three times in a row.  A failed call must return
 * NULL with an error and leave nothing behind (the sanitizer tree's LeakSanitizer
 * checks that). */
typedef ops_tensor *(*helper_fn)(ops_tensor *const *in);

static ops_tensor *
h_glu(ops_tensor *const *in)
{
    return ops_autograd_glu_backward(in[2], in[0], 1);
}

static ops_tensor *
h_conv_same(ops_tensor *const *in)
{
    ops_tensor *a = ops_autograd_conv_same_backward(in[2], in[0], in[1], OPS_INTS(1), 1, 0);
    ops_tensor *b = a != NULL ? ops_autograd_conv_same_backward(in[2], in[0], in[1], OPS_INTS(1), 1, 1) : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_conv1d(ops_tensor *const *in)
{
    ops_tensor *a = ops_autograd_conv1d_backward(in[2], in[0], in[1], OPS_INTS(1), OPS_INTS(1), OPS_INTS(1), 1, 0);
    ops_tensor *b =
        a != NULL ? ops_autograd_conv1d_backward(in[2], in[0], in[1], OPS_INTS(1), OPS_INTS(1), OPS_INTS(1), 1, 1)
                  : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_avg_pool(ops_tensor *const *in)
{
    return ops_autograd_avg_pool2d_backward(in[2], in[0]->ndim, in[0]->sizes, OPS_INTS(2), OPS_INTS(1), OPS_INTS(1),
                                            true, false, NULL);
}

static ops_tensor *
h_bilinear(ops_tensor *const *in)
{
    return ops_autograd_upsample2d_backward(in[2], in[0]->ndim, in[0]->sizes, false, -1.0, 1.5, 1);
}

static ops_tensor *
h_max_pool1d(ops_tensor *const *in)
{
    return ops_autograd_max_pool1d_backward(in[2], in[0], OPS_INTS(2), OPS_INTS(1), OPS_INTS(0), OPS_INTS(1), false);
}

static ops_tensor *
h_batch_norm(ops_tensor *const *in)
{
    ops_tensor *a = ops_autograd_batch_norm_backward(in[2], in[0], in[1], NULL, NULL, true, 1e-5, 0);
    ops_tensor *b = a != NULL ? ops_autograd_batch_norm_backward(in[2], in[0], in[1], NULL, NULL, true, 1e-5, 1) : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_group_norm(ops_tensor *const *in)
{
    ops_tensor *a = ops_autograd_group_norm_backward(in[2], in[0], 2, in[1], 1e-5, 0);
    ops_tensor *b = a != NULL ? ops_autograd_group_norm_backward(in[2], in[0], 2, in[1], 1e-5, 1) : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_prelu(ops_tensor *const *in)
{
    ops_tensor *a = ops_autograd_prelu_backward(in[2], in[0], in[1], 0);
    ops_tensor *b = a != NULL ? ops_autograd_prelu_backward(in[2], in[0], in[1], 1) : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_bce_logits(ops_tensor *const *in)
{
    ops_tensor *a = ops_autograd_bce_logits_backward(in[2], in[0], in[2], in[1], in[1], 0);
    ops_tensor *b = a != NULL ? ops_autograd_bce_logits_backward(in[2], in[0], in[2], in[1], in[1], 1) : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_ce_prob(ops_tensor *const *in)
{
    /* in[0] doubles as the probability target; a mean of smoothed, weighted terms */
    ops_tensor *a = ops_autograd_cross_entropy_backward(in[2], in[0], in[0], in[1], 1, -100, 0.1, 0);
    ops_tensor *b = a != NULL ? ops_autograd_cross_entropy_backward(in[2], in[0], in[0], in[1], 1, -100, 0.1, 1) : NULL;
    ops_tensor_release(a);
    return b;
}

static ops_tensor *
h_nll_weight(ops_tensor *const *in)
{
    /* every target class 2 but class 1 at position 0 (ignored); a mean over N-D input */
    ops_tensor *t = ops_full(OPS_INTS(2, 4), OPS_SCALAR_INT(2), OPS_INT64, OPS_DEVICE_CPU);
    if (t != NULL)
        ((int64_t *)ops_tensor_data_ptr(t))[0] = 1;
    ops_tensor *r = t != NULL ? ops_autograd_nll_loss_weight_backward(in[2], in[0], t, in[1], 1, 1) : NULL;
    ops_tensor *r2 = r != NULL ? ops_autograd_nll_loss_nd_backward(in[2], in[0], t, in[1], 1, 1) : NULL;
    ops_tensor_release(t);
    ops_tensor_release(r);
    return r2;
}

static ops_tensor *
h_nll_nd(ops_tensor *const *in)
{
    /* every target class 0: none ignored (ignore_index 1) */
    ops_tensor *t = ops_zeros(OPS_INTS(2, 4), OPS_INT64, OPS_DEVICE_CPU);
    ops_tensor *r = t != NULL ? ops_autograd_nll_loss_nd_backward(in[2], in[0], t, NULL, 0, 1) : NULL;
    ops_tensor_release(t);
    return r;
}

/* batch_norm in training writes its running statistics last: an allocation that
 * fails anywhere, the staging of the new statistics included, leaves both running_mean
 * and running_var as they were (the op failed), never one updated and the other not. */
START_TEST(test_batch_norm_failure_leaves_running_stats)
{
    static const double xd[12] = {0.5, -1.0, 2.0, 1.5, 0.25, -0.5, -2.0, 1.0, 0.75, 0.0, -0.25, 1.25};
    static const double rm0[3] = {0.0, 0.5, -0.5}, rv0[3] = {1.0, 2.0, 0.5};
    ops_tensor *x = vec(xd, 4, 3), *w = vec((double[]){1.5, -0.5, 2.0}, 3, 0);
    int ok_in_a_row = 0, failures = 0;
    for (int64_t nth = 1; ok_in_a_row < 3 && nth < 1000; nth++) {
        ops_tensor *rm = vec(rm0, 3, 0), *rv = vec(rv0, 3, 0);
        ops_alloc_fail_nth(nth);
        ops_tensor *y = ops_batch_norm(x, w, NULL, rm, rv, true, 0.1, 1e-5, true);
        ops_alloc_fail_nth(0);
        const double *m = ops_tensor_data_ptr(rm), *v = ops_tensor_data_ptr(rv);
        if (y != NULL) {
            ok_in_a_row++;
            ck_assert_msg(m[1] != rm0[1] && v[1] != rv0[1], "allocation %lld: the running stats were not updated",
                          (long long)nth);
        } else {
            ok_in_a_row = 0;
            failures++;
            for (int c = 0; c < 3; c++)
                ck_assert_msg(m[c] == rm0[c] && v[c] == rv0[c],
                              "allocation %lld failed but running stat %d changed: mean %g (was %g), var %g (was %g)",
                              (long long)nth, c, m[c], rm0[c], v[c], rv0[c]);
        }
        ops_tensor_release(y);
        ops_tensor_release(rm);
        ops_tensor_release(rv);
    }
    ck_assert_int_eq(ok_in_a_row, 3);
    ck_assert_int_gt(failures, 0);
    ops_tensor_release(x);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_backward_helper_allocation_failures)
{
    /* inputs: x (s0), a second operand (s1; weight), grad (sg) */
    static const struct {
        const char *name;
        helper_fn f;
        int64_t s0[4], s1[4], sg[4];
        int nd0, nd1, ndg;
    } cases[] = {
        {"glu", h_glu, {2, 4, 3}, {1}, {2, 2, 3}, 3, 1, 3},
        {"conv_same", h_conv_same, {1, 2, 4, 4}, {3, 2, 2, 2}, {1, 3, 4, 4}, 4, 4, 4},
        {"conv1d", h_conv1d, {2, 2, 6}, {3, 2, 3}, {2, 3, 6}, 3, 3, 3},
        {"avg_pool2d", h_avg_pool, {1, 2, 4, 5}, {1}, {1, 2, 5, 6}, 4, 1, 4},
        {"upsample_bilinear2d", h_bilinear, {1, 2, 3, 2}, {1}, {1, 2, 5, 3}, 4, 1, 4},
        {"max_pool1d", h_max_pool1d, {2, 3, 6}, {1}, {2, 3, 5}, 3, 1, 3},
        {"batch_norm", h_batch_norm, {4, 3}, {3}, {4, 3}, 2, 1, 2},
        {"group_norm", h_group_norm, {2, 4, 3}, {4}, {2, 4, 3}, 3, 1, 3},
        {"prelu", h_prelu, {2, 3, 2}, {3}, {2, 3, 2}, 3, 1, 3},
        {"bce_logits", h_bce_logits, {3, 4}, {4}, {3, 4}, 2, 1, 2},
        {"cross_entropy (probabilities)", h_ce_prob, {2, 4, 3}, {4}, {1}, 3, 1, 0},
        {"nll_loss_nd", h_nll_nd, {2, 3, 4}, {1}, {2, 4}, 3, 1, 2},
        {"nll_loss (weights)", h_nll_weight, {2, 3, 4}, {3}, {1}, 3, 1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ops_tensor *in[3] = {ramp(cases[c].nd0, cases[c].s0, 0.1), ramp(cases[c].nd1, cases[c].s1, 0.2),
                             ramp(cases[c].ndg, cases[c].sg, 0.3)};
        ops_tensor *r = cases[c].f(in);
        ck_assert_msg(r != NULL, "%s: %s", cases[c].name, ops_last_error());
        ops_tensor_release(r);
        int ok_in_a_row = 0;
        int64_t nth = 1;
        for (; ok_in_a_row < 3 && nth < 20000; nth++) {
            ops_alloc_fail_nth(nth);
            r = cases[c].f(in);
            ops_alloc_fail_nth(0);
            if (r != NULL) {
                ok_in_a_row++;
                ops_tensor_release(r);
            } else {
                ok_in_a_row = 0;
                ck_assert_msg(ops_last_error()[0] != 0, "%s: allocation %lld failed without a message",
                              cases[c].name, (long long)nth);
            }
        }
        ck_assert_msg(ok_in_a_row == 3, "%s: still failing after %lld allocations", cases[c].name, (long long)nth);
        for (int i = 0; i < 3; i++)
            ops_tensor_release(in[i]);
    }
}
END_TEST

static Suite *
autograd_nn_suite(void)
{
    Suite *s = suite_create("autograd_nn");
    TCase *tc = tcase_create("nn");
    tcase_set_timeout(tc, 280); /* the allocation-failure sweep, under the sanitizers */
    tcase_add_test(tc, test_batch_norm_training_with_running_stats);
    tcase_add_test(tc, test_binary_cross_entropy_at_the_ends);
    tcase_add_test(tc, test_cross_entropy_nd_and_probability_gradients);
    tcase_add_test(tc, test_conv_transpose_output_padding_past_stride);
    tcase_add_test(tc, test_backward_helper_allocation_failures);
    tcase_add_test(tc, test_batch_norm_failure_leaves_running_stats);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(autograd_nn_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

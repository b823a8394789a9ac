/* gradcheck itself (it passes correct gradients and catches a wrong one) and the
 * autograd layer seen from the public API: out= and leaf in-place errors, ops without
 * a formula, in-place ops rebasing history, the version check, broadcasting and
 * dtype promotion in gradients.  Every formula of ops/derivatives.yaml is gradchecked
 * (and gradgradchecked) by the conformance runner's gradient family on the op's own
 * conformance cases (tests/conformance/runner.c). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_impl.h"
#include "ops_op_dropout.h"
#include "ops_op_embedding.h"
#include "ops_op_exp.h"
#include "ops_op_full.h"
#include "ops_op_gt.h"
#include "ops_op_histc.h"
#include "ops_op_linear.h"
#include "ops_op_mul.h"
#include "ops_op_native_dropout.h"
#include "ops_op_ones.h"
#include "ops_op_sin.h"
#include "ops_op_sum.h"
#include "ops_op_to.h"
#include "ops_op_unique.h"
#include "ops_op_zeros.h"
#include "ops_op_zeros_like.h"
#include "ops_registry.h"

/* The formula tables of ops/derivatives.yaml (generated ops_autograd_gen.c), declared
 * here as the umbrella ops_autograd_gen.h declares them, rather than through it: it
 * includes every family's header, so this file would be recompiled by every op added
 * (docs/codegen.md "The edit loop"). */
OPS_INTERNAL extern const char *const ops_autograd_formula_entries[];
OPS_INTERNAL extern const int ops_autograd_num_formula_entries;
OPS_INTERNAL extern const char *const ops_autograd_formula_inputs[];

/* f(x) = x * detach(x): backward sees only one factor (grad * x) while the true
 * derivative is 2x, so gradcheck must report a mismatch. */
static ops_status
half_detached(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    ops_tensor *d = ops_tensor_detach(in[0]);
    *out = ops_mul(in[0], d);
    ops_tensor_release(d);
    return *out != NULL ? OPS_OK : ops_last_status();
}

/* f(x) = x * x: correct first and second derivatives. */
static ops_status
square_fn(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    *out = ops_mul(in[0], in[0]);
    return *out != NULL ? OPS_OK : ops_last_status();
}

START_TEST(test_gradcheck_detects_wrong_gradients)
{
    ops_tensor *x = ops_tensor_from_data((double[]){0.5, -1.5, 2.0, 0.25}, (ops_int_list){(int64_t[]){2, 2}, 2},
                                         OPS_FLOAT64);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ops_tensor *in[1] = {x};
    ck_assert_int_eq(ops_gradcheck(square_fn, NULL, 1, in, NULL), OPS_OK);
    ck_assert_int_eq(ops_gradgradcheck(square_fn, NULL, 1, in, NULL), OPS_OK);
    ck_assert_int_ne(ops_gradcheck(half_detached, NULL, 1, in, NULL), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Jacobian mismatch for input 0"));
    /* the inputs are restored after the finite differences */
    const double *p = ops_tensor_data_ptr(x);
    ck_assert(p[0] == 0.5 && p[1] == -1.5 && p[2] == 2.0 && p[3] == 0.25);
    /* not float64: refused */
    ops_tensor *f = ops_ones((ops_int_list){(int64_t[]){2}, 1}, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_set_requires_grad(f, true), OPS_OK);
    ops_tensor *in2[1] = {f};
    ck_assert_int_eq(ops_gradcheck(square_fn, NULL, 1, in2, NULL), OPS_ERR_DTYPE);
    ops_tensor_release(f);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_every_formula_has_a_node)
{
    /* the generated table the conformance runner's gradient family walks */
    ck_assert_int_gt(ops_autograd_num_formula_entries, 0);
    for (int e = 0; e < ops_autograd_num_formula_entries; e++) {
        ck_assert_ptr_nonnull(ops_registry_find(ops_autograd_formula_entries[e], NULL));
        ck_assert_ptr_nonnull(ops_autograd_formula_inputs[e]);
    }
}
END_TEST

static ops_tensor *
leaf3(void)
{
    ops_tensor *t = ops_tensor_from_data((double[]){1.0, -2.0, 3.0}, (ops_int_list){(int64_t[]){3}, 1}, OPS_FLOAT64);
    ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    return t;
}

START_TEST(test_layer_errors)
{
    ops_tensor *x = leaf3();
    ops_tensor *out = ops_zeros((ops_int_list){(int64_t[]){3}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    /* out= with an input requiring grad */
    ck_assert_int_ne(ops_exp_out(x, out), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "functions with out=... arguments don't support automatic "
                                                   "differentiation"));
    /* in-place on a leaf requiring grad */
    ck_assert_int_ne(ops_exp_(x), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "a leaf Variable that requires grad is being used in an in-place"));
    /* a formula that refuses (unique's values, as in PyTorch): the op runs and records,
     * backward is a clear error naming the op */
    ops_tensor *u = NULL, *inv = NULL, *cnt = NULL;
    ck_assert_int_eq(ops_unique(x, true, false, false, NULL, &u, &inv, &cnt), OPS_OK);
    ck_assert(ops_tensor_requires_grad(u));
    ops_tensor *us = ops_sum(u, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(us, NULL, false, false), OPS_ERR_NOT_IMPLEMENTED);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "unique"));
    ops_tensor_release(us);
    ops_tensor_release(u);
    ops_tensor_release(inv);
    ops_tensor_release(cnt);
    /* a piecewise-constant op (histc): its result carries no gradient */
    ops_tensor *h = ops_histc(x, 4, OPS_SCALAR_INT(0), OPS_SCALAR_INT(0));
    ck_assert_ptr_nonnull(h);
    ck_assert(!ops_tensor_requires_grad(h));
    ops_tensor_release(h);
    /* integer results carry no gradient and are fine */
    ops_tensor *gt = ops_gt_scalar(x, OPS_SCALAR_INT(0));
    ck_assert_ptr_nonnull(gt);
    ck_assert(!ops_tensor_requires_grad(gt));
    /* factories from a tensor: no gradient */
    ops_tensor *z = ops_zeros_like(x, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    ck_assert(!ops_tensor_requires_grad(z));
    /* under no_grad nothing is recorded and out= works */
    bool prev = ops_set_grad_enabled(false);
    ck_assert_int_eq(ops_exp_out(x, out), OPS_OK);
    ops_tensor *e = ops_exp(x);
    ck_assert(!ops_tensor_requires_grad(e));
    ops_set_grad_enabled(prev);
    ops_tensor_release(e);
    ops_tensor_release(z);
    ops_tensor_release(gt);
    ops_tensor_release(out);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_inplace_on_non_leaf)
{
    /* y = x * 2; y.exp_(); loss = sum(y): d loss/dx = 2 exp(2x) (rebased history) */
    ops_tensor *x = leaf3();
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(2));
    ck_assert_int_eq(ops_exp_(y), OPS_OK);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(y)), "ExpBackward0");
    ops_tensor *loss = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(x);
    const double *gp = ops_tensor_data_ptr(g);
    const double xs[3] = {1.0, -2.0, 3.0};
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol(gp[i], 2 * exp(2 * xs[i]), 1e-9 * exp(2 * xs[i]));
    ops_tensor_release(g);
    ops_tensor_release(loss);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_inplace_saved_value_modified)
{
    /* z = exp(y) saves its output; modifying z in place makes backward fail */
    ops_tensor *x = leaf3();
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(1));
    ops_tensor *z = ops_exp(y);
    ops_tensor *w = ops_sin(z);
    ck_assert_int_eq(ops_mul_scalar_(z, OPS_SCALAR_INT(3)), OPS_OK); /* z is saved by ExpBackward0 */
    ops_tensor *loss = ops_sum(w, OPS_DTYPE_NONE);
    ck_assert_int_ne(ops_backward(loss, NULL, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "modified by an inplace operation"));
    ops_tensor_release(loss);
    ops_tensor_release(w);
    ops_tensor_release(z);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_broadcast_grads_and_dtypes)
{
    /* a float32 [3,1] + float64 [4]: grads come back in each input's shape and dtype */
    ops_tensor *a = ops_ones((ops_int_list){(int64_t[]){3, 1}, 2}, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *b = ops_ones((ops_int_list){(int64_t[]){4}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_set_requires_grad(a, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(b, true), OPS_OK);
    ops_tensor *c = ops_mul(a, b);
    ops_tensor *loss = ops_sum(c, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    ops_tensor *ga = ops_tensor_grad(a), *gb = ops_tensor_grad(b);
    ck_assert_int_eq(ops_tensor_dtype(ga), OPS_FLOAT32);
    ck_assert_int_eq(ops_tensor_ndim(ga), 2);
    ck_assert_int_eq(ops_tensor_size(ga, 0), 3);
    ck_assert_int_eq(ops_tensor_size(ga, 1), 1);
    ck_assert_float_eq(((float *)ops_tensor_data_ptr(ga))[0], 4.0f); /* sum over the 4 broadcast columns */
    ck_assert_int_eq(ops_tensor_dtype(gb), OPS_FLOAT64);
    ck_assert_double_eq(((double *)ops_tensor_data_ptr(gb))[2], 3.0);
    ops_tensor_release(ga);
    ops_tensor_release(gb);
    ops_tensor_release(loss);
    ops_tensor_release(c);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_absent_optional_input)
{
    /* linear(x, w, bias=None) with w requiring grad: the node keeps nothing of the
     * absent bias, and w's gradient is grad^T x = column sums of x per output row */
    ops_tensor *x = ops_ones((ops_int_list){(int64_t[]){2, 3}, 2}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ops_tensor *w = ops_ones((ops_int_list){(int64_t[]){4, 3}, 2}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ops_tensor *y = ops_linear(x, w, NULL);
    ck_assert_ptr_nonnull(y);
    ops_tensor *loss = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    ops_tensor *gw = ops_tensor_grad(w);
    ck_assert_ptr_nonnull(gw);
    ck_assert_int_eq(ops_tensor_size(gw, 0), 4);
    ck_assert_int_eq(ops_tensor_size(gw, 1), 3);
    for (int i = 0; i < 12; i++)
        ck_assert_double_eq(((double *)ops_tensor_data_ptr(gw))[i], 2.0); /* two rows of ones */
    ops_tensor_release(gw);
    ops_tensor_release(loss);
    ops_tensor_release(y);
    ops_tensor_release(w);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_dropout_backward)
{
    /* d sum(dropout(x)) / dx is 1 / (1 - p) where an element was kept, else 0; the
     * mask is read off the result (x has no zeros) and native_dropout's own mask. */
    ops_tensor *x = ops_full((ops_int_list){(int64_t[]){64}, 1}, OPS_SCALAR_FLOAT(0.5), OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ops_tensor *y = ops_dropout(x, 0.25, true);
    ops_tensor *s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(x);
    const double *yp = ops_tensor_data_ptr(y), *gp = ops_tensor_data_ptr(g);
    int kept = 0;
    for (int i = 0; i < 64; i++) {
        ck_assert_double_eq(gp[i], yp[i] != 0 ? 1.0 / 0.75 : 0.0);
        kept += yp[i] != 0;
    }
    ck_assert(kept > 0 && kept < 64);
    ops_tensor_release(g);
    ops_tensor_release(s);
    ops_tensor_release(y);
    ck_assert_int_eq(ops_tensor_set_grad(x, NULL), OPS_OK);
    ops_tensor *out = NULL, *mask = NULL;
    ck_assert_int_eq(ops_native_dropout(x, 0.25, &(bool){true}, &out, &mask), OPS_OK);
    ck_assert(!ops_tensor_requires_grad(mask));
    s = ops_sum(out, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    g = ops_tensor_grad(x);
    ops_tensor *m64 = ops_to_dtype(mask, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE);
    const double *mp = ops_tensor_data_ptr(m64);
    gp = ops_tensor_data_ptr(g);
    for (int i = 0; i < 64; i++)
        ck_assert_double_eq(gp[i], mp[i] / 0.75);
    ops_tensor_release(m64);
    ops_tensor_release(g);
    ops_tensor_release(s);
    ops_tensor_release(out);
    ops_tensor_release(mask);
    /* not training: the identity */
    ck_assert_int_eq(ops_tensor_set_grad(x, NULL), OPS_OK);
    y = ops_dropout(x, 0.25, false);
    s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    g = ops_tensor_grad(x);
    ck_assert_double_eq(((double *)ops_tensor_data_ptr(g))[7], 1.0);
    ops_tensor_release(g);
    ops_tensor_release(s);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_embedding_backward)
{
    /* d sum(v * embedding(w, idx)) / dw[r] = sum of v's rows whose index is r, except
     * for padding_idx (no gradient); hand-derived for idx = [[1, 3], [1, 0]]. */
    ops_tensor *w = ops_zeros((ops_int_list){(int64_t[]){4, 2}, 2}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ops_tensor *idx = ops_tensor_from_data((int64_t[]){1, 3, 1, 0}, (ops_int_list){(int64_t[]){2, 2}, 2}, OPS_INT64);
    const double vs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ops_tensor *v = ops_tensor_from_data(vs, (ops_int_list){(int64_t[]){2, 2, 2}, 3}, OPS_FLOAT64);
    for (int pad = -1; pad <= 3; pad += 4) { /* no padding, then padding_idx 3 */
        ck_assert_int_eq(ops_tensor_set_grad(w, NULL), OPS_OK);
        ops_tensor *e = ops_embedding(w, idx, pad, false, false);
        ops_tensor *p = ops_mul(e, v);
        ops_tensor *s = ops_sum(p, OPS_DTYPE_NONE);
        ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
        ops_tensor *g = ops_tensor_grad(w);
        const double *gp = ops_tensor_data_ptr(g);
        /* row 0 <- v[1][1] = (7, 8); row 1 <- v[0][0] + v[1][0] = (1+5, 2+6); row 2 none;
         * row 3 <- v[0][1] = (3, 4) unless it is padding_idx */
        const double want[8] = {7, 8, 6, 8, 0, 0, pad == 3 ? 0 : 3, pad == 3 ? 0 : 4};
        for (int i = 0; i < 8; i++)
            ck_assert_double_eq(gp[i], want[i]);
        ops_tensor_release(g);
        ops_tensor_release(s);
        ops_tensor_release(p);
        ops_tensor_release(e);
    }
    ops_tensor_release(v);
    ops_tensor_release(idx);
    ops_tensor_release(w);
}
END_TEST

static Suite *
gradcheck_suite(void)
{
    Suite *s = suite_create("gradcheck");
    TCase *tc = tcase_create("gradcheck");
    tcase_add_test(tc, test_gradcheck_detects_wrong_gradients);
    tcase_add_test(tc, test_every_formula_has_a_node);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("layer");
    tcase_add_test(tl, test_layer_errors);
    tcase_add_test(tl, test_inplace_on_non_leaf);
    tcase_add_test(tl, test_inplace_saved_value_modified);
    tcase_add_test(tl, test_broadcast_grads_and_dtypes);
    tcase_add_test(tl, test_absent_optional_input);
    tcase_add_test(tl, test_dropout_backward);
    tcase_add_test(tl, test_embedding_backward);
    suite_add_tcase(s, tl);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(gradcheck_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

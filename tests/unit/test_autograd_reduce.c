/* Gradients the conformance runner cannot gradcheck (its cases hold random values, and
 * finite differences are meaningless at ties and at zeros of a product): prod and
 * cumprod with zeros in the input (first and second derivatives), amax/max ties and
 * NaN, norms at their kinks, clamp with crossed bounds.  Every expected value is
 * derived by hand in the comment above it (and agrees with PyTorch 1.13). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops_autograd.h"
#include "ops_op_amax.h"
#include "ops_op_clamp.h"
#include "ops_op_contiguous.h"
#include "ops_op_cumprod.h"
#include "ops_op_linalg_vector_norm.h"
#include "ops_op_max.h"
#include "ops_op_min.h"
#include "ops_op_norm.h"
#include "ops_op_ones.h"
#include "ops_op_prod.h"
#include "ops_op_sum.h"

static ops_tensor *
leaf(const double *data, int ndim, const int64_t *sizes)
{
    ops_tensor *t = ops_tensor_from_data(data, (ops_int_list){sizes, ndim}, OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    return t;
}

static void
expect_values(const ops_tensor *t, const double *want, int64_t n)
{
    ck_assert_int_eq(ops_tensor_numel(t), n);
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    ck_assert_ptr_nonnull(c);
    const double *p = ops_tensor_data_ptr(c);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i]))
            ck_assert_msg(isnan(p[i]), "element %lld: got %g, want NaN", (long long)i, p[i]);
        else
            ck_assert_msg(p[i] == want[i], "element %lld: got %g, want %g", (long long)i, p[i], want[i]);
    }
    ops_tensor_release(c);
}

/* d <v, y> / dx (v NULL: y has one element), create_graph as asked; a new reference. */
static ops_tensor *
grad_of(const ops_tensor *y, const ops_tensor *x, const ops_tensor *v, bool create_graph)
{
    const ops_tensor *outs[1] = {y}, *ins[1] = {x}, *gos[1] = {v};
    ops_tensor_vec r = {0};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 1},
                                       (ops_tensor_list){gos, 1}, create_graph, create_graph, false, &r),
                     OPS_OK);
    ck_assert_int_eq(r.len, 1);
    ops_tensor *g = ops_tensor_retain(r.data[0]);
    ops_tensor_vec_release(&r);
    return g;
}

START_TEST(test_prod_with_zeros)
{
    /* d prod(x) / dx_k is the product of the other elements: for [2, 0, 3, 4] only the
     * zero's is nonzero (2 * 3 * 4 = 24); with two zeros every such product holds one. */
    ops_tensor *x = leaf((double[]){2, 0, 3, 4}, 1, (int64_t[]){4});
    ops_tensor *y = ops_prod(x, OPS_DTYPE_NONE);
    ops_tensor *g = grad_of(y, x, NULL, false);
    expect_values(g, (double[]){0, 24, 0, 0}, 4);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);

    x = leaf((double[]){0, 2, 0, 5}, 2, (int64_t[]){2, 2});
    y = ops_prod(x, OPS_DTYPE_NONE);
    g = grad_of(y, x, NULL, false);
    expect_values(g, (double[]){0, 0, 0, 0}, 4);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);

    /* prod over dim 1 of [[2, 0, 3], [1, 2, 3], [0, 0, 5]] with v = [1, 2, 3]:
     * row 0: only the zero, 2 * 3 = 6; row 1: 2 * (6/1, 6/2, 6/3) = (12, 6, 4);
     * row 2: two zeros, nothing. */
    x = leaf((double[]){2, 0, 3, 1, 2, 3, 0, 0, 5}, 2, (int64_t[]){3, 3});
    y = ops_prod_dim(x, 1, false, OPS_DTYPE_NONE);
    ops_tensor *v = ops_tensor_from_data((double[]){1, 2, 3}, (ops_int_list){(int64_t[]){3}, 1}, OPS_FLOAT64);
    g = grad_of(y, x, v, false);
    expect_values(g, (double[]){0, 6, 0, 12, 6, 4, 0, 0, 0}, 9);
    ops_tensor_release(g);
    ops_tensor_release(v);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_prod_double_backward_with_zero)
{
    /* f = x0 x1 x2 at x = [2, 0, 3]: grad = (x1 x2, x0 x2, x0 x1) = (0, 6, 0), and
     * d sum(grad) / dx_m = sum over k != m of the product of the third element:
     * (x2 + x1, x2 + x0, x1 + x0) = (3, 5, 2). */
    ops_tensor *x = leaf((double[]){2, 0, 3}, 1, (int64_t[]){3});
    ops_tensor *y = ops_prod(x, OPS_DTYPE_NONE);
    ops_tensor *g = grad_of(y, x, NULL, true);
    expect_values(g, (double[]){0, 6, 0}, 3);
    ops_tensor *s = ops_sum(g, OPS_DTYPE_NONE);
    ops_tensor *h = grad_of(s, x, NULL, false);
    expect_values(h, (double[]){3, 5, 2}, 3);
    ops_tensor_release(h);
    ops_tensor_release(s);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);

    /* x = [2, 0, 3, 0]: the gradient is 0, but d^2 prod / dx_1 dx_3 = x0 x2 = 6 (every
     * other second derivative holds a zero), so d sum(grad) / dx = (0, 6, 0, 6). */
    x = leaf((double[]){2, 0, 3, 0}, 2, (int64_t[]){2, 2});
    y = ops_prod(x, OPS_DTYPE_NONE);
    g = grad_of(y, x, NULL, true);
    expect_values(g, (double[]){0, 0, 0, 0}, 4);
    s = ops_sum(g, OPS_DTYPE_NONE);
    h = grad_of(s, x, NULL, false);
    expect_values(h, (double[]){0, 6, 0, 6}, 4);
    ops_tensor_release(h);
    ops_tensor_release(s);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_cumprod_with_zeros)
{
    /* y = cumprod([2, 0, 3, 0, 5]) = [2, 0, 0, 0, 0]; d sum(y) / dx_k sums, over j >= k,
     * the product of x_0..x_j without x_k: k = 0: 1 (every later product holds x_1 = 0);
     * k = 1 (the first zero): x0 + x0 x2 = 2 + 6 = 8 (later ones hold x_3 = 0);
     * k >= 2: every product holds x_1 = 0. */
    ops_tensor *x = leaf((double[]){2, 0, 3, 0, 5}, 1, (int64_t[]){5});
    ops_tensor *y = ops_cumprod(x, 0, OPS_DTYPE_NONE);
    ops_tensor *v = ops_ones((ops_int_list){(int64_t[]){5}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ops_tensor *g = grad_of(y, x, v, false);
    expect_values(g, (double[]){1, 8, 0, 0, 0}, 5);
    ops_tensor_release(g);
    ops_tensor_release(v);
    ops_tensor_release(y);
    ops_tensor_release(x);

    /* the same x with create_graph: sum(y) = sum over j of P_j = x_0 ... x_j, and
     * d^2 sum(y) / dx_k dx_m sums P_j / (x_k x_m) over j >= max(k, m); only products
     * without a zero left count: (0, 1): 1 + x2 = 4; (1, 2): x0 = 2; (1, 3): x0 x2 +
     * x0 x2 x4 = 36.  So d sum(grad) / dx = (4, 4 + 2 + 36, 2, 36, 0). */
    x = leaf((double[]){2, 0, 3, 0, 5}, 1, (int64_t[]){5});
    y = ops_cumprod(x, 0, OPS_DTYPE_NONE);
    v = ops_ones((ops_int_list){(int64_t[]){5}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    g = grad_of(y, x, v, true);
    expect_values(g, (double[]){1, 8, 0, 0, 0}, 5);
    ops_tensor *s2 = ops_sum(g, OPS_DTYPE_NONE);
    ops_tensor *h2 = grad_of(s2, x, NULL, false);
    expect_values(h2, (double[]){4, 42, 2, 36, 0}, 5);
    ops_tensor_release(h2);
    ops_tensor_release(s2);
    ops_tensor_release(g);
    ops_tensor_release(v);
    ops_tensor_release(y);
    ops_tensor_release(x);

    /* x = [2, 0, 3, 1] along dim 1 of a [1, 4] tensor: sum(y) = x0 + x0 x1 + x0 x1 x2 +
     * x0 x1 x2 x3, so grad = (1 + x1 + x1 x2 + x1 x2 x3, x0 + x0 x2 + x0 x2 x3, x0 x1 +
     * x0 x1 x3, x0 x1 x2) = (1, 14, 0, 0); the derivatives of sum(grad):
     * m = 0: (1 + x2 + x2 x3) + (x1 + x1 x3) + x1 x2 = 7;
     * m = 1: (1 + x2 + x2 x3) + (x0 + x0 x3) + x0 x2 = 7 + 4 + 6 = 17;
     * m = 2: (x1 + x1 x3) + (x0 + x0 x3) + x0 x1 = 4;  m = 3: x1 x2 + x0 x2 + x0 x1 = 6. */
    x = leaf((double[]){2, 0, 3, 1}, 2, (int64_t[]){1, 4});
    y = ops_cumprod(x, 1, OPS_DTYPE_NONE);
    v = ops_ones((ops_int_list){(int64_t[]){1, 4}, 2}, OPS_FLOAT64, OPS_DEVICE_CPU);
    g = grad_of(y, x, v, true);
    expect_values(g, (double[]){1, 14, 0, 0}, 4);
    ops_tensor *s = ops_sum(g, OPS_DTYPE_NONE);
    ops_tensor *h = grad_of(s, x, NULL, false);
    expect_values(h, (double[]){7, 17, 4, 6}, 4);
    ops_tensor_release(h);
    ops_tensor_release(s);
    ops_tensor_release(g);
    ops_tensor_release(v);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_extreme_ties)
{
    /* amax over dim 1 of [[1, 3, 3], [2, 2, 1]]: each row's gradient is shared by its
     * two maxima. */
    ops_tensor *x = leaf((double[]){1, 3, 3, 2, 2, 1}, 2, (int64_t[]){2, 3});
    ops_tensor *y = ops_amax(x, (ops_int_list){(int64_t[]){1}, 1}, false);
    ops_tensor *v = ops_ones((ops_int_list){(int64_t[]){2}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ops_tensor *g = grad_of(y, x, v, false);
    expect_values(g, (double[]){0, 0.5, 0.5, 0.5, 0.5, 0}, 6);
    ops_tensor_release(g);
    ops_tensor_release(v);
    ops_tensor_release(y);

    /* min over everything: the two 1s */
    y = ops_min(x);
    g = grad_of(y, x, NULL, false);
    expect_values(g, (double[]){0.5, 0, 0, 0, 0, 0.5}, 6);
    ops_tensor_release(g);
    ops_tensor_release(y);

    /* max.dim picks one index (the first of a tie), which alone gets the gradient */
    ops_tensor *vals = NULL, *idx = NULL;
    ck_assert_int_eq(ops_max_dim(x, 1, false, &vals, &idx), OPS_OK);
    v = ops_tensor_from_data((double[]){2, 5}, (ops_int_list){(int64_t[]){2}, 1}, OPS_FLOAT64);
    g = grad_of(vals, x, v, false);
    expect_values(g, (double[]){0, 2, 0, 5, 0, 0}, 6);
    ops_tensor_release(g);
    ops_tensor_release(v);
    ops_tensor_release(vals);
    ops_tensor_release(idx);
    ops_tensor_release(x);

    /* a NaN maximum: the NaNs share the gradient */
    x = leaf((double[]){1, NAN, NAN}, 1, (int64_t[]){3});
    y = ops_max(x);
    g = grad_of(y, x, NULL, false);
    expect_values(g, (double[]){0, 0.5, 0.5}, 3);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_norm_kinks)
{
    /* the inf norm of [3, -3, 1] is 3, reached twice: sign(x) / 2 there */
    ops_tensor *x = leaf((double[]){3, -3, 1}, 1, (int64_t[]){3});
    ops_tensor *y = ops_linalg_vector_norm(x, OPS_SCALAR_FLOAT(INFINITY), NULL, false, OPS_DTYPE_NONE);
    ops_tensor *g = grad_of(y, x, NULL, false);
    expect_values(g, (double[]){0.5, -0.5, 0}, 3);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);

    /* the 2-norm (and the 3-norm) of zeros: subgradient 0, not x / 0 */
    for (int p = 2; p <= 3; p++) {
        x = leaf((double[]){0, 0, 0}, 1, (int64_t[]){3});
        y = ops_norm_scalar(x, OPS_SCALAR_INT(p));
        g = grad_of(y, x, NULL, false);
        expect_values(g, (double[]){0, 0, 0}, 3);
        ops_tensor_release(g);
        ops_tensor_release(y);
        ops_tensor_release(x);
    }
}
END_TEST

START_TEST(test_clamp_tensor_bounds)
{
    /* clamp(x, min, max) = min(max(x, min), max) with x = [0.5, 2, -1], min = [1, 0, -2],
     * max = [0, 3, -1.5]: element 0 has min > max (result max), element 1 is inside,
     * element 2 is above max.  self gets (0, 1, 0), min nothing, max (1, 0, 1). */
    ops_tensor *x = leaf((double[]){0.5, 2, -1}, 1, (int64_t[]){3});
    ops_tensor *lo = leaf((double[]){1, 0, -2}, 1, (int64_t[]){3});
    ops_tensor *hi = leaf((double[]){0, 3, -1.5}, 1, (int64_t[]){3});
    ops_tensor *y = ops_clamp(x, lo, hi);
    expect_values(y, (double[]){0, 2, -1.5}, 3);
    ops_tensor *s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *gx = ops_tensor_grad(x), *glo = ops_tensor_grad(lo), *ghi = ops_tensor_grad(hi);
    expect_values(gx, (double[]){0, 1, 0}, 3);
    expect_values(glo, (double[]){0, 0, 0}, 3);
    expect_values(ghi, (double[]){1, 0, 1}, 3);
    ops_tensor_release(gx);
    ops_tensor_release(glo);
    ops_tensor_release(ghi);
    ops_tensor_release(s);
    ops_tensor_release(y);

    /* only a max, broadcast from [1]: its gradient sums the clamped elements (2) */
    ops_tensor *m = leaf((double[]){1}, 1, (int64_t[]){1});
    y = ops_clamp(x, NULL, m);
    s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *gm = ops_tensor_grad(m);
    expect_values(gm, (double[]){1}, 1);
    ops_tensor_release(gm);
    ops_tensor_release(s);
    ops_tensor_release(y);
    ops_tensor_release(m);
    ops_tensor_release(hi);
    ops_tensor_release(lo);
    ops_tensor_release(x);
}
END_TEST

static Suite *
autograd_reduce_suite(void)
{
    Suite *s = suite_create("autograd_reduce");
    TCase *tc = tcase_create("reductions");
    tcase_add_test(tc, test_prod_with_zeros);
    tcase_add_test(tc, test_prod_double_backward_with_zero);
    tcase_add_test(tc, test_cumprod_with_zeros);
    tcase_add_test(tc, test_extreme_ties);
    tcase_add_test(tc, test_norm_kinks);
    tcase_add_test(tc, test_clamp_tensor_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(autograd_reduce_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

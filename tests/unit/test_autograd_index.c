/* Backward helpers of views and indexing ops (runtime/autograd/backward/autograd_index.c) in the cases
 * the conformance runner's gradient family does not reach: the gradient of a view's
 * backward taken by hand (double backward of select), as_strided over a view that
 * reads storage outside its input and over an input that overlaps itself, and
 * scatter_reduce(prod)'s refusal of double backward with repeated zeros.  Gradcheck and
 * gradgradcheck of every formula run in tests/conformance (run_gradients). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd.h"
#include "ops_op_as_strided.h"
#include "ops_op_contiguous.h"
#include "ops_op_expand.h"
#include "ops_op_mul.h"
#include "ops_op_scatter_reduce.h"
#include "ops_op_select.h"
#include "ops_op_slice.h"
#include "ops_op_sum.h"

#define L(...) ((ops_int_list){(const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / 8})

static ops_tensor *
f64(const double *d, ops_int_list sizes)
{
    ops_tensor *t = ops_tensor_from_data(d, sizes, OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void
expect_values(const ops_tensor *t, const double *want, int64_t n)
{
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(ops_tensor_numel(c), n);
    const double *p = ops_tensor_data_ptr(c);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(p[i] - want[i]) < 1e-12, "element %lld: %g, expected %g", (long long)i, p[i], want[i]);
    ops_tensor_release(c);
}

/* y = x[1] (x [3, 2]); dx = select_backward(v) must itself be differentiable in v:
 * d/dv sum(dx * w) = w[1]. */
START_TEST(test_select_double_backward)
{
    ops_tensor *x = f64((double[]){1, 2, 3, 4, 5, 6}, L(3, 2));
    ops_tensor *v = f64((double[]){7, 8}, L(2));
    ops_tensor *w = f64((double[]){1, 2, 3, 4, 5, 6}, L(3, 2));
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(v, true), OPS_OK);
    ops_tensor *y = ops_select(x, 0, 1);
    ck_assert_ptr_nonnull(y);
    ops_tensor_vec g = {0};
    const ops_tensor *outs[1] = {y}, *ins[1] = {x}, *gos[1] = {v};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 1},
                                       (ops_tensor_list){gos, 1}, true, true, false, &g),
                     OPS_OK);
    expect_values(g.data[0], (double[]){0, 0, 7, 8, 0, 0}, 6);
    ck_assert(ops_tensor_requires_grad(g.data[0]));
    ops_tensor *p = ops_mul(g.data[0], w);
    ops_tensor *s = ops_sum(p, OPS_DTYPE_NONE);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *gv = ops_tensor_grad(v);
    ck_assert_ptr_nonnull(gv);
    expect_values(gv, (double[]){3, 4}, 2);
    ops_tensor_release(gv);
    ops_tensor_release(s);
    ops_tensor_release(p);
    ops_tensor_vec_release(&g);
    ops_tensor_release(y);
    ops_tensor_release(w);
    ops_tensor_release(v);
    ops_tensor_release(x);
}
END_TEST

/* self = base[1:5] (storage offset 1); as_strided(self, [3], [2], 0) reads storage
 * elements 0, 2, 4: element 0 is not part of self, 2 and 4 are self[1] and self[3]. */
START_TEST(test_as_strided_outside_input)
{
    ops_tensor *base = f64((double[]){0, 1, 2, 3, 4, 5}, L(6));
    const int64_t start = 1, end = 5;
    ops_tensor *self = ops_slice(base, 0, &start, &end, 1);
    ck_assert_ptr_nonnull(self);
    ck_assert_int_eq(ops_tensor_set_requires_grad(self, true), OPS_OK);
    const int64_t off = 0;
    ops_tensor *y = ops_as_strided(self, L(3), L(2), &off);
    ck_assert_ptr_nonnull(y);
    expect_values(y, (double[]){0, 2, 4}, 3);
    ops_tensor *s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(self);
    ck_assert_ptr_nonnull(g);
    expect_values(g, (double[]){0, 1, 0, 1}, 4);
    ops_tensor_release(g);
    ops_tensor_release(s);
    ops_tensor_release(y);
    ops_tensor_release(self);
    ops_tensor_release(base);
}
END_TEST

/* An input whose elements share memory (expanded) has no single element per storage
 * place: refused, naming the op. */
START_TEST(test_as_strided_overlapping_input)
{
    ops_tensor *x = f64((double[]){2}, L(1));
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ops_tensor *e = ops_expand(x, L(3), false);
    ck_assert_ptr_nonnull(e);
    ops_tensor *y = ops_as_strided(e, L(2), L(0), NULL);
    ck_assert_ptr_nonnull(y);
    ops_tensor *s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_ERR_NOT_IMPLEMENTED);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "as_strided"));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "overlap"));
    ops_tensor_release(s);
    ops_tensor_release(y);
    ops_tensor_release(e);
    ops_tensor_release(x);
}
END_TEST

/* Two zeros of src meet at self[0]: the first derivatives are right (zero for both,
 * the other factor being zero), double backward is refused as PyTorch does. */
START_TEST(test_scatter_reduce_prod_zeros)
{
    ops_tensor *self = f64((double[]){2, 3}, L(2));
    ops_tensor *src = f64((double[]){0, 0, 5}, L(3));
    ops_tensor *index = ops_tensor_from_data((int64_t[]){0, 0, 1}, L(3), OPS_INT64);
    ck_assert_int_eq(ops_tensor_set_requires_grad(src, true), OPS_OK);
    ops_tensor *y = ops_scatter_reduce_two(self, 0, index, src, "prod", true);
    ck_assert_ptr_nonnull(y);
    expect_values(y, (double[]){0, 15}, 2);
    ops_tensor *s = ops_sum(y, OPS_DTYPE_NONE);
    ops_tensor_vec g = {0};
    const ops_tensor *outs[1] = {s}, *ins[1] = {src};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 1},
                                       (ops_tensor_list){NULL, 0}, true, false, false, &g),
                     OPS_OK);
    expect_values(g.data[0], (double[]){0, 0, 3}, 3);
    ops_tensor_vec_release(&g);
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 1},
                                       (ops_tensor_list){NULL, 0}, true, true, false, &g),
                     OPS_ERR_NOT_IMPLEMENTED);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Double backward is unsupported for src"));
    ops_tensor_release(s);
    ops_tensor_release(y);
    ops_tensor_release(index);
    ops_tensor_release(src);
    ops_tensor_release(self);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("autograd_index");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_select_double_backward);
    tcase_add_test(tc, test_as_strided_outside_input);
    tcase_add_test(tc, test_as_strided_overlapping_input);
    tcase_add_test(tc, test_scatter_reduce_prod_zeros);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

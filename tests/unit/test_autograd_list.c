/* Autograd through Tensor[] arguments and returns (codegen/gen_autograd.py,
 * runtime/autograd/backward/autograd_list.c), checked by hand on small cases: a split whose pieces are
 * partly used (the engine's zeros for the others), cat with one input not requiring
 * grad, index with repeated indices, the version check of a saved Tensor?[] element,
 * in-place index_put_ on a non-leaf, where(condition) recording nothing, and a second
 * backward through a freed list node, and every allocation failing in turn.  The conformance runner gradchecks every one of
 * these formulas on the ops' own cases (tests/conformance/runner.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd.h"
#include "ops_op_cat.h"
#include "ops_op_contiguous.h"
#include "ops_op_einsum.h"
#include "ops_op_fill.h"
#include "ops_op_index.h"
#include "ops_op_index_put.h"
#include "ops_op_mul.h"
#include "ops_op_nonzero_numpy.h"
#include "ops_op_split.h"
#include "ops_op_stack.h"
#include "ops_op_sum.h"
#include "ops_op_unbind.h"
#include "ops_op_where.h"

#define SHAPE(...) ((ops_int_list){(int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})

static ops_tensor *
leaf(const double *v, ops_int_list shape)
{
    ops_tensor *t = ops_tensor_from_data(v, shape, OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    return t;
}

static void
assert_values(const ops_tensor *t, const double *want, int64_t n)
{
    ck_assert_int_eq(ops_tensor_numel(t), n);
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    const double *p = ops_tensor_data_ptr(c);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(p[i] == want[i], "element %lld: %g, expected %g", (long long)i, p[i], want[i]);
    ops_tensor_release(c);
}

START_TEST(test_split_partly_used)
{
    /* x [5] split into [2, 2, 1]; loss = 3 * sum(piece 1): the other pieces get zeros */
    ops_tensor *x = leaf((double[]){1, 2, 3, 4, 5}, SHAPE(5));
    ops_tensor_vec parts = {NULL, 0};
    ck_assert_int_eq(ops_split(x, 2, 0, &parts), OPS_OK);
    ck_assert_int_eq(parts.len, 3);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(parts.data[0])), "SplitBackward0");
    ck_assert_int_eq(ops_tensor_output_nr(parts.data[2]), 2);
    ops_tensor *m = ops_mul_scalar(parts.data[1], OPS_SCALAR_INT(3));
    ops_tensor *s = ops_sum(m, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(x);
    assert_values(g, (double[]){0, 0, 3, 3, 0}, 5);
    ops_tensor_release(g);
    ops_tensor_release(s);
    ops_tensor_release(m);
    ops_tensor_vec_release(&parts);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_cat_one_input_without_grad)
{
    /* cat([a (2), b (3)]) * w: a gets w[0:2]; b does not require grad */
    ops_tensor *a = leaf((double[]){1, 2}, SHAPE(2));
    ops_tensor *b = ops_tensor_from_data((double[]){3, 4, 5}, SHAPE(3), OPS_FLOAT64);
    ops_tensor *w = ops_tensor_from_data((double[]){10, 20, 30, 40, 50}, SHAPE(5), OPS_FLOAT64);
    const ops_tensor *in[2] = {b, a}; /* b first: a's gradient is the end of the cut */
    ops_tensor *c = ops_cat((ops_tensor_list){in, 2}, 0);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(c)), "CatBackward0");
    ops_tensor *p = ops_mul(c, w);
    ops_tensor *s = ops_sum(p, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, true, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(a);
    assert_values(g, (double[]){40, 50}, 2);
    ck_assert(!ops_tensor_requires_grad(b));
    ops_tensor_release(g);
    /* retained: a second pass adds up; without retain_graph the list node is freed */
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    g = ops_tensor_grad(a);
    assert_values(g, (double[]){80, 100}, 2);
    ops_tensor_release(g);
    ck_assert_int_ne(ops_backward(s, NULL, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Trying to backward through the graph a second time"));
    ops_tensor_release(s);
    ops_tensor_release(p);
    ops_tensor_release(c);
    ops_tensor_release(w);
    ops_tensor_release(b);
    ops_tensor_release(a);
}
END_TEST

START_TEST(test_index_repeated_and_version)
{
    /* sum(x[[0, 0, 2]]): element 0 read twice */
    ops_tensor *x = leaf((double[]){1, 2, 3}, SHAPE(3));
    ops_tensor *idx = ops_tensor_from_data((int64_t[]){0, 0, 2}, SHAPE(3), OPS_INT64);
    const ops_tensor *ind[1] = {idx};
    ops_tensor *y = ops_index(x, (ops_tensor_list){ind, 1});
    ops_tensor *s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(x);
    assert_values(g, (double[]){2, 0, 1}, 3);
    ops_tensor_release(g);
    ops_tensor_release(s);
    ops_tensor_release(y);
    /* the saved index changed in place after the op: backward refuses */
    y = ops_index(x, (ops_tensor_list){ind, 1});
    s = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_fill_(idx, OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_int_ne(ops_backward(s, NULL, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "modified by an inplace operation"));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "IndexBackward0"));
    ops_tensor_release(s);
    ops_tensor_release(y);
    ops_tensor_release(idx);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_index_put_inplace_non_leaf)
{
    /* y = 2x; y[[1, 3]] = v; loss = sum(y * w): x's gradient is 2w with the written
     * places zeroed, v's is w there */
    ops_tensor *x = leaf((double[]){1, 2, 3, 4}, SHAPE(4));
    ops_tensor *v = leaf((double[]){7, 8}, SHAPE(2));
    ops_tensor *w = ops_tensor_from_data((double[]){1, 2, 3, 4}, SHAPE(4), OPS_FLOAT64);
    ops_tensor *idx = ops_tensor_from_data((int64_t[]){1, 3}, SHAPE(2), OPS_INT64);
    const ops_tensor *ind[1] = {idx};
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(2));
    ck_assert_int_eq(ops_index_put_(y, (ops_tensor_list){ind, 1}, v, false), OPS_OK);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(y)), "IndexPutBackward0");
    ops_tensor *p = ops_mul(y, w);
    ops_tensor *s = ops_sum(p, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    ops_tensor *gx = ops_tensor_grad(x), *gv = ops_tensor_grad(v);
    assert_values(gx, (double[]){2, 0, 6, 0}, 4);
    assert_values(gv, (double[]){2, 4}, 2);
    ops_tensor_release(gx);
    ops_tensor_release(gv);
    ops_tensor_release(s);
    ops_tensor_release(p);
    ops_tensor_release(y);
    ops_tensor_release(idx);
    ops_tensor_release(w);
    ops_tensor_release(v);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_where_condition_records_nothing)
{
    ops_tensor *x = leaf((double[]){0, 1.5, 0, -2}, SHAPE(2, 2));
    ops_tensor_vec r = {NULL, 0};
    ck_assert_int_eq(ops_where(x, &r), OPS_OK);
    ck_assert_int_eq(r.len, 2);
    ck_assert(!ops_tensor_requires_grad(r.data[0]));
    ck_assert_ptr_null(ops_tensor_grad_fn(r.data[1]));
    ops_tensor_vec_release(&r);
    ck_assert_int_eq(ops_nonzero_numpy(x, &r), OPS_OK);
    ck_assert(!ops_tensor_requires_grad(r.data[0]));
    ops_tensor_vec_release(&r);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_stack_unbind_einsum)
{
    /* unbind(stack([a, b]))[1] is b; einsum("i,i->", a, b) = a.b */
    ops_tensor *a = leaf((double[]){1, 2}, SHAPE(2));
    ops_tensor *b = leaf((double[]){3, 5}, SHAPE(2));
    const ops_tensor *in[2] = {a, b};
    ops_tensor *st = ops_stack((ops_tensor_list){in, 2}, 0);
    ops_tensor_vec rows = {NULL, 0};
    ck_assert_int_eq(ops_unbind_int(st, 0, &rows), OPS_OK);
    ops_tensor *e = ops_einsum("i,i->", (ops_tensor_list){(const ops_tensor *const *)rows.data, 2}, NULL);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(e)), "EinsumBackward0");
    ck_assert_int_eq(ops_backward(e, NULL, false, false), OPS_OK);
    ops_tensor *ga = ops_tensor_grad(a), *gb = ops_tensor_grad(b);
    assert_values(ga, (double[]){3, 5}, 2);
    assert_values(gb, (double[]){1, 2}, 2);
    ops_tensor_release(ga);
    ops_tensor_release(gb);
    ops_tensor_release(e);
    ops_tensor_vec_release(&rows);
    ops_tensor_release(st);
    ops_tensor_release(b);
    ops_tensor_release(a);
}
END_TEST

/* Every allocation of recording (and of backward) failed in turn: a clean error each
 * time, nothing leaked (LSan), and the call works once the failures stop. */
START_TEST(test_allocation_failures)
{
    ops_tensor *x = leaf((double[]){1, 2, 3, 4, 5, 6}, SHAPE(2, 3));
    ops_tensor *idx = ops_tensor_from_data((int64_t[]){1, 0}, SHAPE(2), OPS_INT64);
    const ops_tensor *ind[2] = {NULL, idx};
    for (int which = 0; which < 3; which++) {
        bool passed = false;
        for (int64_t n = 1; n < 200 && !passed; n++) {
            ops_alloc_fail_nth(n);
            ops_status st = OPS_OK;
            if (which == 0) { /* a Tensor[] return, then backward through it */
                ops_tensor_vec parts = {NULL, 0};
                st = ops_split(x, 1, 1, &parts);
                ops_tensor *s = st == OPS_OK ? ops_sum(parts.data[2], OPS_DTYPE_NONE) : NULL;
                st = st != OPS_OK ? st : s == NULL ? ops_last_status() : ops_backward(s, NULL, false, false);
                ops_tensor_release(s);
                ops_tensor_vec_release(&parts);
            } else if (which == 1) { /* a Tensor[] input with shapes kept */
                const ops_tensor *in[2] = {x, x};
                ops_tensor *c = ops_cat((ops_tensor_list){in, 2}, 1);
                ops_tensor *s = c != NULL ? ops_sum(c, OPS_DTYPE_NONE) : NULL;
                st = s == NULL ? ops_last_status() : ops_backward(s, NULL, false, false);
                ops_tensor_release(s);
                ops_tensor_release(c);
            } else { /* a saved Tensor?[] */
                ops_tensor *y = ops_index(x, (ops_tensor_list){ind, 2});
                ops_tensor *s = y != NULL ? ops_sum(y, OPS_DTYPE_NONE) : NULL;
                st = s == NULL ? ops_last_status() : ops_backward(s, NULL, false, false);
                ops_tensor_release(s);
                ops_tensor_release(y);
            }
            ops_alloc_fail_nth(0);
            if (st == OPS_OK)
                passed = true;
            else
                ck_assert_int_eq(st, OPS_ERR_OOM);
            ck_assert_int_eq(ops_tensor_set_grad(x, NULL), OPS_OK);
        }
        ck_assert_msg(passed, "case %d never succeeded", which);
    }
    ops_tensor_release(idx);
    ops_tensor_release(x);
}
END_TEST

static Suite *
list_suite(void)
{
    Suite *s = suite_create("autograd_list");
    TCase *tc = tcase_create("lists");
    tcase_add_test(tc, test_split_partly_used);
    tcase_add_test(tc, test_cat_one_input_without_grad);
    tcase_add_test(tc, test_index_repeated_and_version);
    tcase_add_test(tc, test_index_put_inplace_non_leaf);
    tcase_add_test(tc, test_where_condition_records_nothing);
    tcase_add_test(tc, test_stack_unbind_einsum);
    tcase_add_test(tc, test_allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(list_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

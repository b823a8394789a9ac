/* The autograd engine (runtime/autograd.c) with backward nodes written here by hand,
 * the way the generated layer will write them: mul (saves both inputs), exp (saves
 * its output), sum (saves only a shape).  Expected gradients are derived by hand
 * (d/dx sum(x * w) = w, d/dx exp(x) = exp(x), ...), never computed by the engine's
 * own code path.  The ops run below the autograd layer (ops_base_*), so only these
 * hand-written nodes are recorded.  Leaks (graphs built and dropped, saved outputs) are caught by the
 * sanitizer build's LeakSanitizer. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_impl.h"
#include "ops_autograd_gen.h"
#include "ops_functions.h"

/* ---- hand-written recorded ops ----------------------------------------------- */

typedef struct {
    ops_node base;
    ops_saved_tensor self, other;
} mul_node;

static ops_tensor *rec_mul(const ops_tensor *a, const ops_tensor *b);
static ops_tensor *rec_sum(const ops_tensor *a);

static ops_status
mul_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out)
{
    mul_node *m = (mul_node *)n;
    ops_tensor *a = NULL, *b = NULL;
    ops_status st = ops_saved_unpack(&m->self, n, &a);
    if (st == OPS_OK)
        st = ops_saved_unpack(&m->other, n, &b);
    if (st == OPS_OK && n->next[0].node != NULL && (out[0] = rec_mul(grads[0], b)) == NULL)
        st = ops_last_status();
    if (st == OPS_OK && n->next[1].node != NULL && (out[1] = rec_mul(grads[0], a)) == NULL)
        st = ops_last_status();
    ops_tensor_release(a);
    ops_tensor_release(b);
    return st;
}

static void
mul_release(ops_node *n)
{
    mul_node *m = (mul_node *)n;
    ops_saved_release(&m->self);
    ops_saved_release(&m->other);
}

static const ops_node_vtable mul_vt = {"MulBackward0", mul_apply, mul_release};

/* mul, recorded when grad mode is on and an input requires grad. */
static ops_tensor *
rec_mul(const ops_tensor *a, const ops_tensor *b)
{
    ops_tensor *r = ops_base_mul(a, b); /* below autograd: this test records by hand */
    const ops_tensor *ins[2] = {a, b};
    if (r == NULL || !ops_autograd_any_requires_grad(2, ins))
        return r;
    mul_node *n = (mul_node *)ops_node_new(&mul_vt, sizeof(mul_node), 1, 2);
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ops_node_set_next(&n->base, 0, a), OPS_OK);
    ck_assert_int_eq(ops_node_set_next(&n->base, 1, b), OPS_OK);
    ck_assert_int_eq(ops_saved_save(&n->self, a, false), OPS_OK);
    ck_assert_int_eq(ops_saved_save(&n->other, b, false), OPS_OK);
    ck_assert_int_eq(ops_autograd_set_history(r, &n->base, 0), OPS_OK);
    ops_node_release(&n->base);
    return r;
}

typedef struct {
    ops_node base;
    ops_saved_tensor result;
} exp_node;

static ops_status
exp_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out)
{
    exp_node *e = (exp_node *)n;
    ops_tensor *r = NULL;
    ops_status st = ops_saved_unpack(&e->result, n, &r);
    if (st == OPS_OK && (out[0] = rec_mul(grads[0], r)) == NULL)
        st = ops_last_status();
    ops_tensor_release(r);
    return st;
}

static void
exp_release(ops_node *n)
{
    ops_saved_release(&((exp_node *)n)->result);
}

static const ops_node_vtable exp_vt = {"ExpBackward0", exp_apply, exp_release};

static ops_tensor *
rec_exp(const ops_tensor *a)
{
    ops_tensor *r = ops_base_exp(a);
    if (r == NULL || !ops_autograd_any_requires_grad(1, &a))
        return r;
    exp_node *n = (exp_node *)ops_node_new(&exp_vt, sizeof(exp_node), 1, 1);
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ops_node_set_next(&n->base, 0, a), OPS_OK);
    ck_assert_int_eq(ops_autograd_set_history(r, &n->base, 0), OPS_OK);
    ck_assert_int_eq(ops_saved_save(&n->result, r, true), OPS_OK); /* a saved output */
    ops_node_release(&n->base);
    return r;
}

typedef struct {
    ops_node base;
    int64_t ndim;
    int64_t sizes[OPS_MAX_DIMS];
} sum_node;

static ops_status
sum_apply(ops_node *n, ops_tensor *const *grads, ops_tensor **out)
{
    sum_node *s = (sum_node *)n;
    /* d sum / d x = ones: the grad broadcast back to x's shape, then materialised so
     * the next node gets an ordinary tensor. */
    ops_tensor *e = ops_expand(grads[0], (ops_int_list){s->sizes, s->ndim}, false);
    if (e == NULL)
        return ops_last_status();
    out[0] = ops_clone(e);
    ops_tensor_release(e);
    return out[0] != NULL ? OPS_OK : ops_last_status();
}

static const ops_node_vtable sum_vt = {"SumBackward0", sum_apply, NULL};

static ops_tensor *
rec_sum(const ops_tensor *a)
{
    ops_tensor *r = ops_base_sum(a, OPS_DTYPE_NONE);
    if (r == NULL || !ops_autograd_any_requires_grad(1, &a))
        return r;
    sum_node *n = (sum_node *)ops_node_new(&sum_vt, sizeof(sum_node), 1, 1);
    ck_assert_ptr_nonnull(n);
    n->ndim = ops_tensor_ndim(a);
    for (int64_t i = 0; i < n->ndim; i++)
        n->sizes[i] = ops_tensor_size(a, i);
    ck_assert_int_eq(ops_node_set_next(&n->base, 0, a), OPS_OK);
    ck_assert_int_eq(ops_autograd_set_history(r, &n->base, 0), OPS_OK);
    ops_node_release(&n->base);
    return r;
}

/* ---- helpers ------------------------------------------------------------------- */

static ops_tensor *
vec(const double *v, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(v, (ops_int_list){(int64_t[]){n}, 1}, OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ops_tensor *
leaf(const double *v, int64_t n)
{
    ops_tensor *t = vec(v, n);
    ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    return t;
}

static void
expect_values(const ops_tensor *t, const double *want, int64_t n)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_numel(t), n);
    ck_assert_int_eq(ops_tensor_dtype(t), OPS_FLOAT64);
    ops_tensor *c = ops_contiguous(t);
    const double *p = ops_tensor_data_ptr(c);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(p[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])), "element %lld: %.17g != %.17g",
                      (long long)i, p[i], want[i]);
    ops_tensor_release(c);
}

static void
expect_grad(const ops_tensor *t, const double *want, int64_t n)
{
    ops_tensor *g = ops_tensor_grad(t);
    expect_values(g, want, n);
    ops_tensor_release(g);
}

static const double X[3] = {0.5, -1.25, 2.0};
static const double W[3] = {3.0, 0.25, -4.0};

/* ---- tests ---------------------------------------------------------------------- */

START_TEST(test_leaf_state)
{
    ops_tensor *x = vec(X, 3);
    ck_assert(!ops_tensor_requires_grad(x));
    ck_assert(ops_tensor_is_leaf(x));
    ck_assert_ptr_null(ops_tensor_grad_fn(x));
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ck_assert(ops_tensor_requires_grad(x));
    ck_assert_ptr_null(ops_tensor_grad(x));
    ops_tensor *i = ops_tensor_from_data((int64_t[]){1, 2}, (ops_int_list){(int64_t[]){2}, 1}, OPS_INT64);
    ck_assert_int_eq(ops_tensor_set_requires_grad(i, true), OPS_ERR_DTYPE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "only Tensors of floating point dtype can require gradients"));
    ops_tensor_release(i);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_mul_sum_backward)
{
    ops_tensor *x = leaf(X, 3), *w = leaf(W, 3);
    ops_tensor *y = rec_mul(x, w);
    ck_assert(ops_tensor_requires_grad(y));
    ck_assert(!ops_tensor_is_leaf(y));
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(y)), "MulBackward0");
    ops_tensor *loss = rec_sum(y);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(loss)), "SumBackward0");
    ck_assert_int_eq(ops_node_num_next(ops_tensor_grad_fn(loss)), 1);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    expect_grad(x, W, 3); /* d/dx sum(x*w) = w */
    expect_grad(w, X, 3);
    ck_assert_ptr_null(ops_tensor_grad(y)); /* non-leaf: not retained */
    ops_tensor_release(loss);
    ops_tensor_release(y);
    ops_tensor_release(x);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_accumulation_and_retain_graph)
{
    ops_tensor *x = leaf(X, 3), *w = vec(W, 3);
    ops_tensor *y = rec_mul(x, w);
    ops_tensor *loss = rec_sum(y);
    ops_tensor_release(y); /* the product lives on in the graph only as MulBackward0's input */
    ck_assert_int_eq(ops_backward(loss, NULL, true, false), OPS_OK);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    double twice[3] = {2 * W[0], 2 * W[1], 2 * W[2]};
    expect_grad(x, twice, 3);
    /* The graph is freed now: a third pass fails clearly. */
    ck_assert_int_ne(ops_backward(loss, NULL, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Trying to backward through the graph a second time"));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "MulBackward0"));
    ck_assert_int_eq(ops_tensor_set_grad(x, NULL), OPS_OK);
    ck_assert_ptr_null(ops_tensor_grad(x));
    ops_tensor_release(loss);
    ops_tensor_release(x);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_seed_gradient_and_errors)
{
    ops_tensor *x = leaf(X, 3), *w = vec(W, 3);
    ops_tensor *y = rec_mul(x, w);
    ck_assert_int_ne(ops_backward(y, NULL, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "grad can be implicitly created only for scalar outputs"));
    ops_tensor *bad = vec(X, 2);
    ck_assert_int_ne(ops_backward(y, bad, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Mismatch in shape"));
    const double G[3] = {1.0, 10.0, 100.0};
    ops_tensor *g = vec(G, 3);
    ck_assert_int_eq(ops_backward(y, g, false, false), OPS_OK);
    const double want[3] = {W[0] * G[0], W[1] * G[1], W[2] * G[2]};
    expect_grad(x, want, 3);
    ck_assert_int_ne(ops_backward(w, NULL, false, false), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "does not require grad and does not have a grad_fn"));
    ops_tensor_release(bad);
    ops_tensor_release(g);
    ops_tensor_release(y);
    ops_tensor_release(x);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_saved_output_and_version_check)
{
    ops_tensor *x = leaf(X, 3);
    ops_tensor *y = rec_exp(x);
    ops_tensor *loss = rec_sum(y);
    ck_assert_int_eq(ops_backward(loss, NULL, true, false), OPS_OK);
    double e[3] = {exp(X[0]), exp(X[1]), exp(X[2])};
    expect_grad(x, e, 3);
    /* Modify the saved output in place: the next backward must refuse. */
    ops_tensor *one = vec((double[]){1, 1, 1}, 3);
    ck_assert_int_eq(ops_add_(y, one, OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_int_ne(ops_backward(loss, NULL, false, false), OPS_OK);
    const char *msg = ops_last_error();
    ck_assert_ptr_nonnull(strstr(msg, "modified by an inplace operation"));
    ck_assert_ptr_nonnull(strstr(msg, "which is output 0 of ExpBackward0"));
    ck_assert_ptr_nonnull(strstr(msg, "is at version 1; expected version 0 instead"));
    ops_tensor_release(one);
    ops_tensor_release(loss);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_no_grad)
{
    ops_tensor *x = leaf(X, 3);
    ck_assert(ops_grad_enabled());
    bool prev = ops_set_grad_enabled(false);
    ck_assert(prev);
    ops_tensor *y = rec_exp(x);
    ck_assert(!ops_tensor_requires_grad(y));
    ck_assert_ptr_null(ops_tensor_grad_fn(y));
    ops_set_grad_enabled(prev);
    ck_assert(ops_grad_enabled());
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

static ops_status
triple_hook(const ops_tensor *grad, ops_tensor **rep, void *ctx)
{
    int *calls = ctx;
    (*calls)++;
    ops_tensor *three = ops_full((ops_int_list){(int64_t[]){1}, 1}, OPS_SCALAR_FLOAT(3.0), OPS_FLOAT64,
                                 OPS_DEVICE_CPU);
    *rep = ops_mul(grad, three);
    ops_tensor_release(three);
    return *rep != NULL ? OPS_OK : ops_last_status();
}

START_TEST(test_hooks_and_retain_grad)
{
    ops_tensor *x = leaf(X, 3), *w = vec(W, 3);
    int leaf_calls = 0, mid_calls = 0;
    int64_t h_leaf, h_mid;
    ck_assert_int_eq(ops_tensor_register_hook(x, triple_hook, &leaf_calls, &h_leaf), OPS_OK);
    ops_tensor *y = rec_mul(x, w);
    ck_assert_int_eq(ops_tensor_retain_grad(y), OPS_OK);
    ck_assert_int_eq(ops_tensor_register_hook(y, triple_hook, &mid_calls, &h_mid), OPS_OK);
    ops_tensor *loss = rec_sum(y);
    ck_assert_int_eq(ops_backward(loss, NULL, true, false), OPS_OK);
    /* y's hook triples its gradient after retain_grad stored it (registration order);
     * x's hook triples again: 9 * w. */
    expect_grad(y, (double[]){1, 1, 1}, 3);
    expect_grad(x, (double[]){9 * W[0], 9 * W[1], 9 * W[2]}, 3);
    ck_assert_int_eq(leaf_calls, 1);
    ck_assert_int_eq(mid_calls, 1);
    ck_assert(ops_tensor_remove_hook(x, h_leaf));
    ck_assert(ops_tensor_remove_hook(y, h_mid));
    ck_assert(!ops_tensor_remove_hook(y, h_mid));
    ck_assert_int_eq(ops_tensor_set_grad(x, NULL), OPS_OK);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    expect_grad(x, W, 3);
    ck_assert_int_eq(leaf_calls, 1);
    ops_tensor_release(loss);
    ops_tensor_release(y);
    ops_tensor_release(x);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_autograd_grad)
{
    ops_tensor *x = leaf(X, 3), *w = leaf(W, 3), *u = leaf(X, 3);
    ops_tensor *y = rec_mul(x, w);
    ops_tensor *loss = rec_sum(y);
    ops_tensor_vec r = {0};
    const ops_tensor *outs[1] = {loss}, *ins[2] = {w, x};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 2},
                                       (ops_tensor_list){NULL, 0}, true, false, false, &r),
                     OPS_OK);
    ck_assert_int_eq(r.len, 2);
    expect_values(r.data[0], X, 3);
    expect_values(r.data[1], W, 3);
    ops_tensor_vec_release(&r);
    ck_assert_ptr_null(ops_tensor_grad(x)); /* .grad untouched */
    ck_assert_ptr_null(ops_tensor_grad(w));
    /* An input the output does not depend on. */
    const ops_tensor *ins2[2] = {x, u};
    ck_assert_int_ne(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins2, 2},
                                       (ops_tensor_list){NULL, 0}, true, false, false, &r),
                     OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "appears to not have been used in the graph"));
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins2, 2},
                                       (ops_tensor_list){NULL, 0}, false, false, true, &r),
                     OPS_OK);
    ck_assert_ptr_null(r.data[1]);
    expect_values(r.data[0], W, 3);
    ops_tensor_vec_release(&r);
    ops_tensor_release(loss);
    ops_tensor_release(y);
    ops_tensor_release(x);
    ops_tensor_release(w);
    ops_tensor_release(u);
}
END_TEST

START_TEST(test_double_backward)
{
    /* f = sum(x * exp(x)) along one path per use: g = df/dx through ExpBackward0's
     * saved output, which create_graph gives back its history; then
     * d(sum g)/dx with g = exp(x) * w is exp(x) * w (w constant). */
    ops_tensor *x = leaf(X, 3), *w = vec(W, 3);
    ops_tensor *e = rec_exp(x);
    ops_tensor *y = rec_mul(e, w);
    ops_tensor *f = rec_sum(y);
    ops_tensor_vec g = {0};
    const ops_tensor *outs[1] = {f}, *ins[1] = {x};
    ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 1},
                                       (ops_tensor_list){NULL, 0}, false, true, false, &g),
                     OPS_OK);
    const double want[3] = {exp(X[0]) * W[0], exp(X[1]) * W[1], exp(X[2]) * W[2]};
    expect_values(g.data[0], want, 3);
    ck_assert(ops_tensor_requires_grad(g.data[0]));
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(g.data[0])), "MulBackward0");
    ops_tensor *s = rec_sum(g.data[0]);
    ck_assert_int_eq(ops_backward(s, NULL, false, false), OPS_OK);
    expect_grad(x, want, 3);
    ops_tensor_release(s);
    ops_tensor_vec_release(&g);
    ops_tensor_release(f);
    ops_tensor_release(y);
    ops_tensor_release(e);
    ops_tensor_release(x);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_graphs_freed)
{
    /* A graph that never runs backward, and a long chain: both freed with their last
     * output (LeakSanitizer checks; the chain must not overflow the stack). */
    ops_tensor *x = leaf(X, 3);
    ops_tensor *y = rec_exp(x);
    ops_tensor_release(y);
    ops_tensor *cur = ops_tensor_retain(x);
    ops_tensor *one = vec((double[]){1, 1, 1}, 3);
    for (int i = 0; i < 200000; i++) {
        ops_tensor *nx = rec_mul(cur, one);
        ops_tensor_release(cur);
        cur = nx;
    }
    ops_tensor_release(cur);
    ops_tensor_release(one);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_detach)
{
    ops_tensor *x = leaf(X, 3);
    ops_tensor *y = rec_exp(x);
    ops_tensor *d = ops_tensor_detach(y);
    ck_assert(!ops_tensor_requires_grad(d));
    ck_assert_ptr_eq(ops_tensor_data_ptr(d), ops_tensor_data_ptr(y));
    ck_assert_int_eq(ops_tensor_set_requires_grad(y, false), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_tensor_detach_(y), OPS_OK);
    ck_assert(ops_tensor_is_leaf(y));
    ck_assert(!ops_tensor_requires_grad(y));
    ops_tensor_release(d);
    ops_tensor_release(y);
    ops_tensor_release(x);
}
END_TEST

static Suite *
autograd_suite(void)
{
    Suite *s = suite_create("autograd");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_leaf_state);
    tcase_add_test(tc, test_mul_sum_backward);
    tcase_add_test(tc, test_accumulation_and_retain_graph);
    tcase_add_test(tc, test_seed_gradient_and_errors);
    tcase_add_test(tc, test_saved_output_and_version_check);
    tcase_add_test(tc, test_no_grad);
    tcase_add_test(tc, test_hooks_and_retain_grad);
    tcase_add_test(tc, test_autograd_grad);
    tcase_add_test(tc, test_double_backward);
    tcase_add_test(tc, test_graphs_freed);
    tcase_add_test(tc, test_detach);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(autograd_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

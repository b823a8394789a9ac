/* The autograd engine (runtime/autograd/engine.c) with backward nodes written here by hand,
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
#include "ops_autograd_gen_binary.h"
#include "ops_autograd_gen_reduce.h"
#include "ops_autograd_gen_unary.h"
#include "ops_op_add.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_exp.h"
#include "ops_op_expand.h"
#include "ops_op_full.h"
#include "ops_op_mul.h"
#include "ops_op_narrow.h"
#include "ops_op_select.h"
#include "ops_op_split.h"
#include "ops_op_sum.h"
#include "ops_op_transpose.h"
#include "ops_op_zeros.h"

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
    out[0] = ops_clone(e, OPS_MEMORY_FORMAT_NONE);
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
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
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

/* Hooks with a release function (what a binding's callable needs): release runs once,
 * when the hook is removed or its tensor / grad_fn goes, never while a pass runs it; a
 * hook may remove itself while it runs; an error from a hook stops backward with it
 * and leaves .grad as it was. */
typedef struct {
    int calls, released;
    ops_tensor *t; /* the tensor to remove the hook from while running, or NULL */
    int64_t handle;
    bool fail;
} counted_hook;

static ops_status
counted_hook_fn(const ops_tensor *grad, ops_tensor **rep, void *ctx)
{
    (void)grad;
    (void)rep;
    counted_hook *c = ctx;
    ck_assert_int_eq(c->released, 0);
    c->calls++;
    if (c->t != NULL)
        ck_assert(ops_tensor_remove_hook(c->t, c->handle));
    ck_assert_int_eq(c->released, 0); /* the running pass still holds it */
    if (c->fail)
        return ops_fail(OPS_ERR_VALUE, "counted_hook: asked to fail");
    return OPS_OK;
}

static void
counted_hook_release(void *ctx)
{
    ((counted_hook *)ctx)->released++;
}

START_TEST(test_hook_release)
{
    ops_tensor *x = leaf(X, 3), *w = vec(W, 3);
    counted_hook self_rm = {0}, kept = {0}, mid = {0}, failing = {.fail = true};
    ck_assert_int_eq(ops_tensor_register_hook_ex(x, counted_hook_fn, &self_rm, counted_hook_release, &self_rm.handle),
                     OPS_OK);
    self_rm.t = x;
    int64_t hk;
    ck_assert_int_eq(ops_tensor_register_hook_ex(x, counted_hook_fn, &kept, counted_hook_release, &hk), OPS_OK);
    ops_tensor *y = rec_mul(x, w);
    int64_t hm;
    ck_assert_int_eq(ops_tensor_register_hook_ex(y, counted_hook_fn, &mid, counted_hook_release, &hm), OPS_OK);
    mid.t = y;
    mid.handle = hm;
    ops_tensor *loss = rec_sum(y);
    ck_assert_int_eq(ops_backward(loss, NULL, true, false), OPS_OK);
    ck_assert(self_rm.calls == 1 && self_rm.released == 1); /* removed itself: released after its run */
    ck_assert(mid.calls == 1 && mid.released == 1);
    ck_assert(kept.calls == 1 && kept.released == 0);
    expect_grad(x, W, 3);
    ck_assert_int_eq(ops_backward(loss, NULL, true, false), OPS_OK);
    ck_assert(self_rm.calls == 1 && mid.calls == 1 && kept.calls == 2);
    /* A failing hook: backward fails with its error; x.grad stays as it was. */
    int64_t hf;
    ck_assert_int_eq(ops_tensor_register_hook_ex(x, counted_hook_fn, &failing, counted_hook_release, &hf), OPS_OK);
    ck_assert_int_eq(ops_backward(loss, NULL, true, false), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "asked to fail"));
    expect_grad(x, (double[]){2 * W[0], 2 * W[1], 2 * W[2]}, 3);
    ck_assert(ops_tensor_remove_hook(x, hf));
    ck_assert_int_eq(failing.released, 1);
    /* A non-leaf's hook goes with its grad_fn (y and loss hold it). */
    counted_hook mid2 = {0};
    ck_assert_int_eq(ops_tensor_register_hook_ex(y, counted_hook_fn, &mid2, counted_hook_release, &hm), OPS_OK);
    ops_tensor_release(loss);
    ck_assert_int_eq(mid2.released, 0);
    ops_tensor_release(y);
    ck_assert_int_eq(mid2.released, 1);
    ck_assert_int_eq(kept.released, 0);
    ops_tensor_release(x); /* the leaf's hooks go with it */
    ck_assert_int_eq(kept.released, 1);
    ck_assert_int_eq(self_rm.released, 1);
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

/* The leaf's data comes from a blob whose deleter counts: it runs exactly when the
 * leaf's storage is freed, so a graph still owning the leaf shows as 0. */
static int blob_freed;

static void
count_free(void *data, void *ctx)
{
    (void)ctx;
    free(data);
    blob_freed++;
}

START_TEST(test_create_graph_frees_the_leaf)
{
    /* f = sum(x * x * w): under create_graph x.grad = 2 x w has a graph whose nodes
     * save x and lead to x's AccumulateGrad; x owns its .grad.  Looping such steps and
     * dropping x must free everything (no leaf <-> gradient cycle), and the gradient's
     * graph must still differentiate: d(sum x.grad)/dx = 2 w. */
    blob_freed = 0;
    for (int step = 0; step < 50; step++) {
        double *data = malloc(3 * sizeof *data);
        ck_assert_ptr_nonnull(data);
        memcpy(data, X, sizeof X);
        ops_tensor *x = ops_tensor_from_blob(data, OPS_INTS(3), OPS_INTS(1), OPS_FLOAT64, OPS_DEVICE_CPU, count_free,
                                             NULL);
        ck_assert_ptr_nonnull(x);
        ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
        ops_tensor *w = vec(W, 3), *xx = rec_mul(x, x), *y = rec_mul(xx, w), *f = rec_sum(y);
        ck_assert_int_eq(ops_backward(f, NULL, false, true), OPS_OK);
        ops_tensor *g = ops_tensor_grad(x);
        const double want[3] = {2 * X[0] * W[0], 2 * X[1] * W[1], 2 * X[2] * W[2]};
        expect_values(g, want, 3);
        ck_assert(ops_tensor_requires_grad(g));
        if (step == 0) {
            /* second order through the gradient's graph: into a second leaf's grad
             * via autograd_grad (x.grad itself is the graph's input) */
            ops_tensor_vec h = {0};
            ops_tensor *sg = rec_sum(g);
            const ops_tensor *outs[1] = {sg}, *ins[1] = {x};
            ck_assert_int_eq(ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 1},
                                               (ops_tensor_list){NULL, 0}, false, false, false, &h),
                             OPS_OK);
            const double want2[3] = {2 * W[0], 2 * W[1], 2 * W[2]};
            expect_values(h.data[0], want2, 3);
            ops_tensor_vec_release(&h);
            ops_tensor_release(sg);
        }
        ops_tensor *all[] = {g, f, y, xx, w};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            ops_tensor_release(all[i]);
        ck_assert_int_eq(blob_freed, step); /* x still alive: its storage is not freed */
        ops_tensor_release(x);
        ck_assert_int_eq(blob_freed, step + 1);
    }
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

/* ---- in-place ops on views (through the generated layer) ------------------------ */

static ops_tensor *
mat(const double *v, int64_t r, int64_t c)
{
    ops_tensor *t = ops_tensor_from_data(v, (ops_int_list){(int64_t[]){r, c}, 2}, OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    return t;
}

static const double X23[6] = {0.5, -1.25, 2.0, 1.5, 0.75, -3.0};

/* y = x * 2; y[0] *= 3: d sum(y) / dx is 6 in row 0 and 2 in row 1. */
START_TEST(test_inplace_on_view_of_nonleaf)
{
    ops_tensor *x = mat(X23, 2, 3);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(2));
    ops_tensor *other = ops_select(y, 0, 0); /* a second view of row 0, made before the write */
    ops_tensor *v = ops_select(y, 0, 0);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(v)), "SelectBackward0");
    ck_assert_int_eq(ops_mul_scalar_(v, OPS_SCALAR_INT(3)), OPS_OK);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(y)), "CopySlices");
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(v)), "AsStridedBackward0");
    /* the other view now reads its region of y's new history too */
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(other)), "AsStridedBackward0");
    ck_assert_uint_eq(ops_tensor_version(y), 1);
    ck_assert_uint_eq(ops_tensor_version(other), 1);
    ops_tensor *loss = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    expect_grad(x, (const double[]){6, 6, 6, 2, 2, 2}, 6);
    ck_assert_int_eq(ops_tensor_set_grad(x, NULL), OPS_OK);
    /* through the stale view: row 0 of y is 6 x[0] */
    ops_tensor *l2 = ops_sum(other, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(l2, NULL, false, false), OPS_OK);
    expect_grad(x, (const double[]){6, 6, 6, 0, 0, 0}, 6);
    ops_tensor *const all[] = {x, y, other, v, loss, l2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* buf = zeros(4, 3); buf[1:3] = w; loss = sum(buf * c): buf gets history, w's gradient
 * is rows 1..2 of c; the other rows of buf get none. */
START_TEST(test_copy_into_view_of_buffer)
{
    static const double C[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    ops_tensor *buf = ops_zeros(OPS_INTS(4, 3), OPS_FLOAT64, OPS_DEVICE_CPU);
    ops_tensor *w = mat(X23, 2, 3), *c = mat(C, 4, 3);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ops_tensor *v = ops_narrow(buf, 0, 1, 2);
    ck_assert(!ops_tensor_requires_grad(v));
    ck_assert_int_eq(ops_copy_(v, w, false), OPS_OK);
    ck_assert(ops_tensor_requires_grad(buf));
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(buf)), "CopySlices");
    expect_values(buf, (const double[]){0, 0, 0, 0.5, -1.25, 2.0, 1.5, 0.75, -3.0, 0, 0, 0}, 12);
    ops_tensor *p = ops_mul(buf, c);
    ops_tensor *loss = ops_sum(p, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    expect_grad(w, C + 3, 6);
    /* a float32 source: its gradient comes back in float32, broadcast rows summed */
    ops_tensor *buf2 = ops_zeros(OPS_INTS(4, 3), OPS_FLOAT64, OPS_DEVICE_CPU);
    ops_tensor *w32 = ops_tensor_from_data((const float[]){1, 2, 3}, (ops_int_list){(int64_t[]){3}, 1}, OPS_FLOAT32);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w32, true), OPS_OK);
    ops_tensor *v2 = ops_narrow(buf2, 0, 0, 3);
    ck_assert_int_eq(ops_copy_(v2, w32, false), OPS_OK);
    ops_tensor *p2 = ops_mul(buf2, c), *l2 = ops_sum(p2, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(l2, NULL, false, false), OPS_OK);
    ops_tensor *g32 = ops_tensor_grad(w32);
    ck_assert_int_eq(ops_tensor_dtype(g32), OPS_FLOAT32);
    const float *gp = ops_tensor_data_ptr(g32);
    ck_assert(gp[0] == 12 && gp[1] == 15 && gp[2] == 18); /* c[0:3] summed over rows */
    ops_tensor *const all[] = {buf, w, c, v, p, loss, buf2, w32, v2, p2, l2, g32};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* An in-place op whose formula reads self (mul_) on a plain non-leaf: self's gradient
 * flows through self's history before the write.  y = x * 2; y *= w: dx = 2 w, dw = 2 x. */
START_TEST(test_inplace_reading_self)
{
    ops_tensor *x = leaf(X, 3), *w = leaf(W, 3);
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(2));
    ck_assert_int_eq(ops_mul_(y, w), OPS_OK);
    ck_assert_str_eq(ops_node_name(ops_tensor_grad_fn(y)), "MulBackward0");
    ops_tensor *loss = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    expect_grad(x, (const double[]){2 * W[0], 2 * W[1], 2 * W[2]}, 3);
    expect_grad(w, (const double[]){2 * X[0], 2 * X[1], 2 * X[2]}, 3);
    ops_tensor *const all[] = {x, w, y, loss};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* A chain of views: y = x * 1 (3x4); u = t(y)[1:3][:, 2] is y[2, 1:3]; u *= z.
 * d sum(y * c) / dx is c, except at y[2, 1:3] where it is c * z; dz = c * x there. */
START_TEST(test_chain_of_views)
{
    double xv[12], cv[12];
    for (int i = 0; i < 12; i++) {
        xv[i] = 0.25 * i - 1;
        cv[i] = 1 + i;
    }
    ops_tensor *x = mat(xv, 3, 4), *c = mat(cv, 3, 4), *z = vec((const double[]){2, -3}, 2);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(z, true), OPS_OK);
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(1));
    ops_tensor *t = ops_transpose(y, 0, 1);
    ops_tensor *n = ops_narrow(t, 0, 1, 2);
    ops_tensor *u = ops_select(n, 1, 2);
    ck_assert_int_eq(ops_mul_(u, z), OPS_OK);
    ops_tensor *p = ops_mul(y, c), *loss = ops_sum(p, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    double want[12];
    memcpy(want, cv, sizeof want);
    want[9] = cv[9] * 2;
    want[10] = cv[10] * -3;
    expect_grad(x, want, 12);
    expect_grad(z, (const double[]){cv[9] * xv[9], cv[10] * xv[10]}, 2);
    ops_tensor *const all[] = {x, c, z, y, t, n, u, p, loss};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* gradcheck of functions writing through views: f(x, z) = y * y with y = x * 1 and
 * y[2, 1:3] (through transpose, narrow, select) multiplied by z; g(w) = buf * buf with
 * w copied into rows 1..2 of a zero buffer. */
static ops_status
through_views(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    ops_tensor *y = ops_mul_scalar(in[0], OPS_SCALAR_INT(1)), *t = NULL, *nw = NULL, *u = NULL;
    ops_status st = OPS_ERR_VALUE;
    if (y != NULL && (t = ops_transpose(y, 0, 1)) != NULL && (nw = ops_narrow(t, 0, 1, 2)) != NULL &&
        (u = ops_select(nw, 1, 2)) != NULL && ops_mul_(u, in[1]) == OPS_OK)
        st = (*out = ops_mul(y, y)) != NULL ? OPS_OK : ops_last_status();
    ops_tensor *const all[] = {y, t, nw, u};
    for (size_t i = 0; i < 4; i++)
        ops_tensor_release(all[i]);
    return st;
}

static ops_status
copy_into_buffer(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    ops_tensor *buf = ops_zeros(OPS_INTS(4, 3), OPS_FLOAT64, OPS_DEVICE_CPU), *v = NULL;
    ops_status st = OPS_ERR_VALUE;
    if (buf != NULL && (v = ops_narrow(buf, 0, 1, 2)) != NULL && ops_copy_(v, in[0], false) == OPS_OK)
        st = (*out = ops_mul(buf, buf)) != NULL ? OPS_OK : ops_last_status();
    ops_tensor_release(v);
    ops_tensor_release(buf);
    return st;
}

/* exp_ (its formula reads the result, saved through the view) on a column of y = x * 1. */
static ops_status
exp_on_column(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    ops_tensor *y = ops_mul_scalar(in[0], OPS_SCALAR_INT(1)), *col = NULL;
    ops_status st = OPS_ERR_VALUE;
    if (y != NULL && (col = ops_select(y, 1, 1)) != NULL && ops_exp_(col) == OPS_OK)
        st = (*out = ops_mul(y, y)) != NULL ? OPS_OK : ops_last_status();
    ops_tensor_release(col);
    ops_tensor_release(y);
    return st;
}

/* y[0] *= y[1]: the in-place op's node saves the other view of the same base; no
 * reference cycle (the sanitizer build's LeakSanitizer checks), right gradient. */
static ops_status
row_times_row(ops_tensor *const *in, int n, ops_tensor **out, void *ctx)
{
    (void)n, (void)ctx;
    ops_tensor *y = ops_mul_scalar(in[0], OPS_SCALAR_INT(1)), *a = NULL, *b = NULL;
    ops_status st = OPS_ERR_VALUE;
    if (y != NULL && (a = ops_select(y, 0, 0)) != NULL && (b = ops_select(y, 0, 1)) != NULL &&
        ops_mul_(a, b) == OPS_OK)
        st = (*out = ops_mul(y, y)) != NULL ? OPS_OK : ops_last_status();
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(y);
    return st;
}

START_TEST(test_gradcheck_through_views)
{
    double xv[12];
    for (int i = 0; i < 12; i++)
        xv[i] = 0.3 * i - 1.7;
    ops_tensor *x = mat(xv, 3, 4), *z = vec((const double[]){0.7, -1.3}, 2), *w = mat(X23, 2, 3);
    ops_tensor *const in[2] = {x, z};
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(ops_tensor_set_requires_grad(in[i], true), OPS_OK);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ck_assert_msg(ops_gradcheck(through_views, NULL, 2, in, NULL) == OPS_OK, "%s", ops_last_error());
    ck_assert_msg(ops_gradcheck(copy_into_buffer, NULL, 1, &w, NULL) == OPS_OK, "%s", ops_last_error());
    ck_assert_msg(ops_gradcheck(exp_on_column, NULL, 1, &x, NULL) == OPS_OK, "%s", ops_last_error());
    ck_assert_msg(ops_gradcheck(row_times_row, NULL, 1, &x, NULL) == OPS_OK, "%s", ops_last_error());
    ops_tensor *unused = NULL; /* recorded and dropped without a backward pass */
    ck_assert_int_eq(row_times_row(&x, 1, &unused, NULL), OPS_OK);
    ops_tensor_release(unused);
    /* double backward through CopySlices: a clear error, not a wrong number */
    ck_assert_int_eq(ops_gradgradcheck(copy_into_buffer, NULL, 1, &w, NULL), OPS_ERR_NOT_IMPLEMENTED);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "double backward through an in-place operation on a view"));
    ops_tensor_release(x);
    ops_tensor_release(z);
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_inplace_view_errors)
{
    ops_tensor *x = mat(X23, 2, 3);
    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
    /* a view of a leaf that requires grad: refused, x untouched */
    ops_tensor *v = ops_select(x, 0, 1);
    ck_assert_int_eq(ops_mul_scalar_(v, OPS_SCALAR_INT(2)), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "a view of a leaf Variable that requires grad is being used "
                                                    "in an in-place operation."));
    expect_values(x, X23, 6);
    ck_assert_uint_eq(ops_tensor_version(x), 0);
    /* ... but fine under no_grad (an optimizer step) */
    bool prev = ops_set_grad_enabled(false);
    ck_assert_int_eq(ops_mul_scalar_(v, OPS_SCALAR_INT(1)), OPS_OK);
    ops_set_grad_enabled(prev);
    /* the version counter is shared: a saved base written through a view fails backward */
    ops_tensor *e = ops_exp(x);
    ops_tensor *ev = ops_select(e, 0, 0);
    ck_assert_int_eq(ops_mul_scalar_(ev, OPS_SCALAR_INT(2)), OPS_OK);
    ck_assert_uint_eq(ops_tensor_version(e), 1);
    ops_tensor *loss = ops_sum(e, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "modified by an inplace operation"));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "which is output 0 of ExpBackward0, is at version 1; expected "
                                                    "version 0 instead."));
    /* the same through a saved input: y saved by mul, written through a view */
    ops_tensor *y = ops_mul_scalar(x, OPS_SCALAR_INT(1));
    ops_tensor *sq = ops_mul(y, y);
    ops_tensor *yv = ops_narrow(y, 1, 0, 2);
    prev = ops_set_grad_enabled(false);
    ck_assert_int_eq(ops_add_scalar_(yv, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)), OPS_OK);
    ops_set_grad_enabled(prev);
    ops_tensor *l2 = ops_sum(sq, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(l2, NULL, false, false), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "is at version 1; expected version 0 instead."));
    /* the views of a function returning several views may not be written in place */
    ops_tensor *buf = ops_zeros(OPS_INTS(4, 3), OPS_FLOAT64, OPS_DEVICE_CPU);
    ops_tensor_vec parts = {0};
    ck_assert_int_eq(ops_split(buf, 2, 0, &parts), OPS_OK);
    ops_tensor *w = mat(X23, 2, 3);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    ck_assert_int_eq(ops_copy_(parts.data[0], w, false), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "function that returns multiple views"));
    ops_tensor_vec_release(&parts);
    ops_tensor *const all[] = {x, v, e, ev, loss, y, sq, yv, l2, buf, w};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* AccumulateGrad keeps a gradient without copying only when nobody else can see it: a
 * gradient the caller passed in (or a hook kept) is copied, so a later in-place
 * accumulation cannot write into the caller's tensor. */
START_TEST(test_accumulate_keeps_only_private_gradients)
{
    ops_tensor *x = leaf(X, 3), *g = vec(W, 3);
    ck_assert_int_eq(ops_backward(x, g, false, false), OPS_OK);
    ops_tensor *xg = ops_tensor_grad(x);
    ck_assert(!ops_tensor_shares_storage(xg, g));
    ck_assert_int_eq(ops_backward(x, g, false, false), OPS_OK); /* accumulates in place into x's grad */
    expect_values(g, W, 3);
    expect_grad(x, (const double[]){2 * W[0], 2 * W[1], 2 * W[2]}, 3);
    ops_tensor_release(xg);
    ops_tensor_release(g);
    ops_tensor_release(x);
}
END_TEST

/* Every allocation of a write through a view and its backward may fail: each failure
 * is a clean error (no crash; the sanitizer build checks for leaks), and once nothing
 * fails the gradient is right. */
START_TEST(test_inplace_on_view_allocation_failures)
{
    bool done = false;
    for (int64_t nth = 1; nth < 2000 && !done; nth++) {
        ops_tensor *x = mat(X23, 2, 3), *y = NULL, *v = NULL, *loss = NULL;
        ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
        ops_alloc_fail_nth(nth);
        bool ok = (y = ops_mul_scalar(x, OPS_SCALAR_INT(2))) != NULL && (v = ops_select(y, 0, 1)) != NULL &&
                  ops_mul_scalar_(v, OPS_SCALAR_INT(3)) == OPS_OK && (loss = ops_sum(y, OPS_DTYPE_NONE)) != NULL &&
                  ops_backward(loss, NULL, false, false) == OPS_OK;
        ops_alloc_fail_nth(0);
        if (!ok) {
            ck_assert_int_ne(ops_last_status(), OPS_OK);
        } else {
            ops_tensor *g = ops_tensor_grad(x);
            if (g != NULL) { /* an injected failure can only come before this point */
                expect_values(g, (const double[]){2, 2, 2, 6, 6, 6}, 6);
                done = true;
            }
            ops_tensor_release(g);
        }
        ops_tensor *const all[] = {x, y, v, loss};
        for (size_t i = 0; i < 4; i++)
            ops_tensor_release(all[i]);
    }
    ck_assert(done);
}
END_TEST

/* Every allocation of autograd_grad may fail (its seed and capture arrays included):
 * a clean error each time, .grad untouched, and the right gradients once none fails. */
START_TEST(test_autograd_grad_allocation_failures)
{
    bool done = false;
    for (int64_t nth = 1; nth < 500 && !done; nth++) {
        ops_tensor *x = leaf(X, 3), *w = leaf(W, 3);
        ops_tensor *y = rec_mul(x, w);
        ops_tensor *loss = rec_sum(y);
        ops_tensor_vec r = {0};
        const ops_tensor *outs[1] = {loss}, *ins[2] = {w, x};
        ops_alloc_fail_nth(nth);
        const ops_status st = ops_autograd_grad((ops_tensor_list){outs, 1}, (ops_tensor_list){ins, 2},
                                                (ops_tensor_list){NULL, 0}, false, false, false, &r);
        ops_alloc_fail_nth(0);
        if (st == OPS_OK) {
            expect_values(r.data[0], X, 3);
            expect_values(r.data[1], W, 3);
            ops_tensor_vec_release(&r);
            done = true;
        } else {
            ck_assert_int_eq(r.len, 0);
        }
        ck_assert_ptr_null(ops_tensor_grad(x));
        ops_tensor_release(loss);
        ops_tensor_release(y);
        ops_tensor_release(x);
        ops_tensor_release(w);
    }
    ck_assert(done);
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
    tcase_add_test(tc, test_autograd_grad_allocation_failures);
    tcase_add_test(tc, test_double_backward);
    tcase_add_test(tc, test_graphs_freed);
    tcase_add_test(tc, test_create_graph_frees_the_leaf);
    tcase_add_test(tc, test_detach);
    tcase_add_test(tc, test_inplace_on_view_of_nonleaf);
    tcase_add_test(tc, test_copy_into_view_of_buffer);
    tcase_add_test(tc, test_inplace_reading_self);
    tcase_add_test(tc, test_chain_of_views);
    tcase_add_test(tc, test_gradcheck_through_views);
    tcase_add_test(tc, test_inplace_view_errors);
    tcase_add_test(tc, test_accumulate_keeps_only_private_gradients);
    tcase_add_test(tc, test_inplace_on_view_allocation_failures);
    tcase_add_test(tc, test_hook_release);
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

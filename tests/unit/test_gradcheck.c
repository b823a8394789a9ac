/* Every formula of ops/derivatives.yaml against finite differences (ops_gradcheck)
 * and its double backward (ops_gradgradcheck), through the boxed registry, on
 * float64 inputs (contiguous and transposed), plus the autograd layer's behaviour
 * seen from the public API: in-place ops, out= errors, leaves, broadcasting.
 *
 * Each case is an op and an argument spec: "T3,4" a random float64 tensor requiring
 * grad, "P3,4" the same with positive values (log, sqrt), "C3,4" a constant tensor
 * (no grad), "B3,4" a random bool tensor, "s2.5" a Scalar, "i1" an int, "b1" a bool,
 * "L0,1" an int list, "N" None.  An entry of derivatives.yaml without a case here
 * fails the test (coverage). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_gen.h"
#include "ops_functions.h"
#include "ops_registry.h"

typedef struct {
    const char *name, *overload, *spec;
    bool no_double;     /* double backward: not supported (select/slice) or trivial (sign) */
    bool contiguous_only; /* view needs strides compatible with its new shape */
} grad_case;

static const grad_case CASES[] = {
    {"add", "Tensor", "T3,4 T4 s1.5", false, false},
    {"add", "Scalar", "T3,4 s2 s1", false, false},
    {"sub", "Tensor", "T3,1 T1,4 s2", false, false},
    {"sub", "Scalar", "T3,4 s2 s1", false, false},
    {"mul", "Tensor", "T3,4 T3,4", false, false},
    {"mul", "Scalar", "T3,4 s-1.5", false, false},
    {"div", "Tensor", "T3,4 P4", false, false},
    {"div", "Scalar", "T3,4 s4", false, false},
    {"pow", "Tensor_Scalar", "P3,4 s2.5", false, false},
    {"pow", "Tensor", "P3,4 T3,4", false, false},
    {"neg", "", "T3,4", false, false},
    {"exp", "", "T3,4", false, false},
    {"log", "", "P3,4", false, false},
    {"sqrt", "", "P3,4", false, false},
    {"rsqrt", "", "P3,4", false, false},
    {"reciprocal", "", "P3,4", false, false},
    {"square", "", "T3,4", false, false},
    {"abs", "", "T3,4", false, false},
    {"sin", "", "T3,4", false, false},
    {"cos", "", "T3,4", false, false},
    {"tanh", "", "T3,4", false, false},
    {"sigmoid", "", "T3,4", false, false},
    {"relu", "", "T3,4", false, false},
    {"silu", "", "T3,4", false, false},
    {"sign", "", "T3,4", true, false},
    {"where", "", "B3,4 T3,4 T4", false, false},
    {"where", "ScalarSelf", "B3,4 s2 T4", false, false},
    {"where", "ScalarOther", "B3,4 T3,4 s2", false, false},
    {"clone", "", "T3,4", false, false},
    {"contiguous", "", "T3,4", false, false},
    {"to", "dtype", "T3,4 D", false, false},
    {"view", "", "T3,4 L2,6", false, true},
    {"reshape", "", "T3,4 L4,3", false, false},
    {"flatten", "", "T2,3,2 i0 i-1", false, false},
    {"permute", "", "T2,3,4 L2,0,1", false, false},
    {"transpose", "", "T2,3,4 i0 i2", false, false},
    {"t", "", "T3,4", false, false},
    {"expand", "", "T3,1 L2,3,4 b0", false, false},
    {"squeeze", "", "T3,1,4", false, false},
    {"squeeze", "dim", "T3,1,4 i1", false, false},
    {"unsqueeze", "", "T3,4 i1", false, false},
    {"select", "", "T3,4 i1 i-1", true, false},
    {"slice", "", "T5,4 i0 i1 i5 i2", true, false},
    {"mm", "", "T3,4 T4,2", false, false},
    {"bmm", "", "T2,3,4 T2,4,2", false, false},
    {"mv", "", "T3,4 T4", false, false},
    {"dot", "", "T4 T4", false, false},
    {"outer", "", "T3 T4", false, false},
    {"addmm", "", "T3,2 T3,4 T4,2 s0.5 s2", false, false},
    {"sum", "", "T3,4 N", false, false},
    {"sum", "dim", "T3,4,2 L0,2 b0 N", false, false},
    {"mean", "", "T3,4 N", false, false},
    {"mean", "dim", "T3,4,2 L1 b1 N", false, false},
    {"softmax", "", "T3,4 i1 N", false, false},
    {"log_softmax", "", "T3,4 i0 N", false, false},
};

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static double
uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

typedef struct {
    const ops_op_info *op;
    int nargs;
    ops_ivalue args[8];
    ops_tensor *owned[8];
    int64_t lists[8][8];
} call_spec;

static ops_tensor *
make_tensor(char kind, const char *dims, bool transposed)
{
    int64_t sizes[8];
    int nd = 0;
    for (const char *p = dims; *p && *p != ' ';) {
        sizes[nd++] = strtoll(p, (char **)&p, 10);
        if (*p == ',')
            p++;
    }
    ops_dtype dt = kind == 'B' ? OPS_BOOL : OPS_FLOAT64;
    ops_tensor *t;
    if (transposed && nd >= 2) {
        /* a transposed layout: allocate [.., n, m], transpose the last two dims */
        int64_t s2[8];
        memcpy(s2, sizes, sizeof s2);
        s2[nd - 1] = sizes[nd - 2];
        s2[nd - 2] = sizes[nd - 1];
        ops_tensor *base = ops_zeros((ops_int_list){s2, nd}, dt, OPS_DEVICE_CPU);
        t = ops_transpose(base, nd - 2, nd - 1);
        ops_tensor_release(base);
    } else {
        t = ops_zeros((ops_int_list){sizes, nd}, dt, OPS_DEVICE_CPU);
    }
    ck_assert_ptr_nonnull(t);
    /* fill through the strides via a contiguous temporary and copy_ */
    ops_tensor *tmp = ops_zeros((ops_int_list){sizes, nd}, dt, OPS_DEVICE_CPU);
    int64_t n = ops_tensor_numel(tmp);
    if (dt == OPS_BOOL) {
        bool *p = ops_tensor_data_ptr(tmp);
        for (int64_t i = 0; i < n; i++)
            p[i] = uniform() < 0.5;
    } else {
        double *p = ops_tensor_data_ptr(tmp);
        for (int64_t i = 0; i < n; i++)
            p[i] = kind == 'P' ? 0.5 + 1.5 * uniform() : 2.0 * uniform() - 1.0;
    }
    ck_assert_int_eq(ops_copy_(t, tmp, false), OPS_OK);
    ops_tensor_release(tmp);
    if (kind == 'T' || kind == 'P')
        ck_assert_int_eq(ops_tensor_set_requires_grad(t, true), OPS_OK);
    return t;
}

static void
build(call_spec *c, const grad_case *gc, bool transposed)
{
    memset(c, 0, sizeof *c);
    c->op = ops_registry_find(gc->name, gc->overload);
    ck_assert_msg(c->op != NULL, "no op %s.%s", gc->name, gc->overload);
    const char *p = gc->spec;
    int i = 0;
    while (*p) {
        char k = *p++;
        ops_ivalue v = ops_ivalue_none();
        switch (k) {
        case 'T': case 'P': case 'C': case 'B':
            c->owned[i] = make_tensor(k, p, transposed);
            v = ops_ivalue_tensor(c->owned[i]);
            break;
        case 's': v = ops_ivalue_scalar(OPS_SCALAR_FLOAT(strtod(p, NULL))); break;
        case 'i': v = ops_ivalue_int(strtoll(p, NULL, 10)); break;
        case 'b': v = ops_ivalue_bool(*p == '1'); break;
        case 'D': v = ops_ivalue_dtype(OPS_FLOAT64); break;
        case 'N': v = ops_ivalue_none(); break;
        case 'L': {
            int n = 0;
            for (const char *q = p; *q && *q != ' ';) {
                c->lists[i][n++] = strtoll(q, (char **)&q, 10);
                if (*q == ',')
                    q++;
            }
            v = ops_ivalue_int_list((ops_int_list){c->lists[i], n});
            break;
        }
        default: ck_abort_msg("bad spec %s", gc->spec);
        }
        /* to.dtype takes non_blocking and copy after the dtype */
        c->args[i++] = v;
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    while (i < c->op->num_args) { /* trailing defaults the spec leaves out (bools) */
        c->args[i] = ops_ivalue_bool(false);
        i++;
    }
    c->nargs = i;
}

static void
release(call_spec *c)
{
    for (int i = 0; i < 8; i++)
        ops_tensor_release(c->owned[i]);
}

/* f(inputs): the boxed call with the tensors replaced by the given inputs. */
static ops_status
boxed_fn(ops_tensor *const *inputs, int n, ops_tensor **out, void *ctx)
{
    call_spec *c = ctx;
    ops_ivalue args[8];
    memcpy(args, c->args, sizeof args);
    for (int i = 0; i < n; i++)
        if (c->owned[i] != NULL)
            args[i] = ops_ivalue_tensor(inputs[i]);
    ops_ivalue r;
    ops_status st = c->op->call(args, &r);
    if (st != OPS_OK)
        return st;
    *out = r.v.tensor;
    return OPS_OK;
}

static void
run_case(const grad_case *gc, bool transposed)
{
    call_spec c;
    build(&c, gc, transposed);
    ops_status st = ops_gradcheck(boxed_fn, &c, c.nargs, c.owned, NULL);
    ck_assert_msg(st == OPS_OK, "gradcheck %s.%s (%s)%s: %s", gc->name, gc->overload, gc->spec,
                  transposed ? " transposed" : "", ops_last_error());
    if (!gc->no_double) {
        st = ops_gradgradcheck(boxed_fn, &c, c.nargs, c.owned, NULL);
        ck_assert_msg(st == OPS_OK, "gradgradcheck %s.%s (%s)%s: %s", gc->name, gc->overload, gc->spec,
                      transposed ? " transposed" : "", ops_last_error());
    }
    release(&c);
}

START_TEST(test_formulas)
{
    run_case(&CASES[_i], false);
    if (!CASES[_i].contiguous_only)
        run_case(&CASES[_i], true);
}
END_TEST

START_TEST(test_every_formula_has_a_case)
{
    /* Coverage: every entry of derivatives.yaml with a formula has a case above, and
     * every case names such an entry. */
    const int n = (int)(sizeof CASES / sizeof CASES[0]);
    for (int e = 0; e < ops_autograd_num_formula_entries; e++) {
        bool found = false;
        for (int i = 0; i < n && !found; i++) {
            char full[96];
            snprintf(full, sizeof full, "%s%s%s", CASES[i].name, CASES[i].overload[0] ? "." : "", CASES[i].overload);
            found = strcmp(full, ops_autograd_formula_entries[e]) == 0;
        }
        ck_assert_msg(found, "derivatives.yaml entry %s has no gradcheck case", ops_autograd_formula_entries[e]);
    }
    ck_assert_int_eq(n, ops_autograd_num_formula_entries);
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
    /* an op without a formula: a clear error, not a silently detached result */
    ck_assert_ptr_null(ops_atan(x));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "the derivative for 'atan' is not implemented"));
    /* integer results carry no gradient and are fine */
    ops_tensor *gt = ops_gt_scalar(x, OPS_SCALAR_INT(0));
    ck_assert_ptr_nonnull(gt);
    ck_assert(!ops_tensor_requires_grad(gt));
    /* factories from a tensor: no gradient */
    ops_tensor *z = ops_zeros_like(x, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
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

static Suite *
gradcheck_suite(void)
{
    Suite *s = suite_create("gradcheck");
    TCase *tc = tcase_create("formulas");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_formulas, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_test(tc, test_every_formula_has_a_case);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("layer");
    tcase_add_test(tl, test_layer_errors);
    tcase_add_test(tl, test_inplace_on_non_leaf);
    tcase_add_test(tl, test_inplace_saved_value_modified);
    tcase_add_test(tl, test_broadcast_grads_and_dtypes);
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

/* The generated C API and boxed registry, through the built library: the glue's
 * checks and messages (docs/codegen.md "What the generated glue does"), Scalar
 * wrapping, the three forms of a structured op, and the registry's descriptions and
 * boxed calls.  Expected values are worked out by hand from the schema and
 * PyTorch's rules. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ops_functions_binary.h"
#include "ops_functions_core.h"
#include "ops_functions_creation.h"
#include "ops_functions_unary.h"
#include "ops_internal.h"
#include "ops_registry.h"

static ops_tensor *
f32(const float *data, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(data, (ops_int_list){(int64_t[]){n}, 1}, OPS_FLOAT32);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ops_tensor *
i64(const int64_t *data, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(data, (ops_int_list){(int64_t[]){n}, 1}, OPS_INT64);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void
assert_f32(const ops_tensor *t, const float *want, int64_t n)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_dtype(t), OPS_FLOAT32);
    ck_assert_int_eq(ops_tensor_numel(t), n);
    ck_assert(ops_tensor_is_contiguous(t));
    const float *got = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++)
        ck_assert_float_eq(got[i], want[i]);
}

static void
assert_error(ops_status want, const char *msg)
{
    ck_assert_int_eq(ops_last_status(), want);
    ck_assert_str_eq(ops_last_error(), msg);
    ops_clear_error();
}

/* ---- the glue ---------------------------------------------------------- */

START_TEST(test_null_tensor_arguments)
{
    const float xs[] = {1, 2};
    ops_tensor *x = f32(xs, 2);
    ops_tensor *out = f32(xs, 2);

    ck_assert_ptr_null(ops_add(NULL, x, OPS_SCALAR_INT(1)));
    assert_error(OPS_ERR_VALUE, "add: argument 'self' must be a Tensor, got NULL");
    ck_assert_ptr_null(ops_add(x, NULL, OPS_SCALAR_INT(1)));
    assert_error(OPS_ERR_VALUE, "add: argument 'other' must be a Tensor, got NULL");
    ck_assert_int_eq(ops_add_(NULL, x, OPS_SCALAR_INT(1)), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add_: argument 'self' must be a Tensor, got NULL");
    ck_assert_int_eq(ops_add_out(x, x, OPS_SCALAR_INT(1), NULL), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add: argument 'out' must be a Tensor, got NULL");
    ck_assert_int_eq(ops_add_scalar_(NULL, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add_: argument 'self' must be a Tensor, got NULL");
    ck_assert_ptr_null(ops_neg(NULL));
    assert_error(OPS_ERR_VALUE, "neg: argument 'self' must be a Tensor, got NULL");

    /* The failed out= call left out untouched. */
    const float *o = ops_tensor_data_ptr(out);
    ck_assert_float_eq(o[0], 1);
    ck_assert_float_eq(o[1], 2);
    ops_tensor_release(x);
    ops_tensor_release(out);
}
END_TEST

START_TEST(test_bad_int_list)
{
    const float xs[] = {1, 2, 3, 4};
    ops_tensor *x = f32(xs, 4);
    ck_assert_ptr_null(ops_view(x, (ops_int_list){NULL, 2}));
    assert_error(OPS_ERR_VALUE, "view: argument 'size' is not a valid int list (negative length or NULL data)");
    ck_assert_ptr_null(ops_view(x, (ops_int_list){(const int64_t[]){4}, -1}));
    assert_error(OPS_ERR_VALUE, "view: argument 'size' is not a valid int list (negative length or NULL data)");
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_factory_device)
{
    /* No tensors: the device argument picks the kernel; unspecified is cpu. */
    ops_tensor *z = ops_zeros(OPS_INTS(3), OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
    const float zero3[] = {0, 0, 0};
    assert_f32(z, zero3, 3);
    ck_assert(ops_device_equal(ops_tensor_device(z), OPS_DEVICE_CPU));
    ops_tensor_release(z);

    ops_device bogus = {(ops_device_type)7, 0};
    ck_assert_ptr_null(ops_zeros(OPS_INTS(3), OPS_DTYPE_NONE, bogus));
    assert_error(OPS_ERR_DEVICE, "zeros: invalid device type 7");
#ifndef OPS_WITH_CUDA
    /* A CPU-only build has no CUDA column in the dispatch table. */
    ck_assert_ptr_null(ops_zeros(OPS_INTS(3), OPS_DTYPE_NONE, OPS_DEVICE_CUDA(0)));
    assert_error(OPS_ERR_NOT_IMPLEMENTED, "zeros: no kernel for device cuda:0");
#endif
}
END_TEST

START_TEST(test_structured_forms_agree)
{
    const float xs[] = {1, -2, 3.5f};
    const float want[] = {-1, 2, -3.5f};
    ops_tensor *x = f32(xs, 3);

    ops_tensor *r = ops_neg(x);
    assert_f32(r, want, 3);
    ck_assert_ptr_ne(r, x);
    assert_f32(x, xs, 3); /* functional leaves its input alone */

    ops_tensor *out = ops_tensor_new("test", 1, (const int64_t[]){3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_neg_out(x, out), OPS_OK);
    assert_f32(out, want, 3);

    uint64_t v = ops_tensor_version(x);
    ck_assert_int_eq(ops_neg_(x), OPS_OK);
    assert_f32(x, want, 3);
    ck_assert_uint_gt(ops_tensor_version(x), v);

    ops_tensor_release(r);
    ops_tensor_release(out);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_scalar_overloads_wrap_numbers)
{
    /* add.Scalar: other is a wrapped number, so an int scalar keeps int64 and a
     * float scalar lifts the int tensor to the default float dtype (PyTorch). */
    const int64_t xs[] = {1, 2, 3};
    ops_tensor *x = i64(xs, 3);

    ops_tensor *r = ops_add_scalar(x, OPS_SCALAR_INT(2), OPS_SCALAR_INT(3));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(ops_tensor_dtype(r), OPS_INT64);
    const int64_t *ri = ops_tensor_data_ptr(r);
    ck_assert_int_eq(ri[0], 7); /* 1 + 3 * 2 */
    ck_assert_int_eq(ri[1], 8);
    ck_assert_int_eq(ri[2], 9);
    ops_tensor_release(r);

    r = ops_add_scalar(x, OPS_SCALAR_FLOAT(0.5), OPS_SCALAR_INT(1));
    const float want[] = {1.5f, 2.5f, 3.5f};
    assert_f32(r, want, 3);
    ops_tensor_release(r);

    ck_assert_int_eq(ops_add_scalar_(x, OPS_SCALAR_INT(-1), OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_int_eq(((const int64_t *)ops_tensor_data_ptr(x))[2], 2);
    ops_tensor_release(x);
}
END_TEST

/* ---- the registry ------------------------------------------------------ */

START_TEST(test_registry_lookup)
{
    int n = ops_registry_count();
    ck_assert_int_gt(n, 0);
    ck_assert_ptr_null(ops_registry_at(-1));
    ck_assert_ptr_null(ops_registry_at(n));
    for (int i = 0; i < n; i++) {
        const ops_op_info *op = ops_registry_at(i);
        ck_assert_ptr_nonnull(op);
        ck_assert_ptr_eq(ops_registry_find(op->name, op->overload), op);
        ck_assert(strncmp(op->c_name, "ops_", 4) == 0);
        ck_assert(strncmp(op->schema, op->name, strlen(op->name)) == 0);
        ck_assert_ptr_nonnull(op->call);
        /* Each op is the member of its own group for its kind. */
        const ops_op_info *self = op->kind == OPS_KIND_FUNCTIONAL ? op->functional
                                  : op->kind == OPS_KIND_INPLACE  ? op->inplace
                                                                   : op->out;
        ck_assert_ptr_eq(self, op);
        for (int a = 0; a < op->num_args; a++)
            ck_assert(!op->args[a].is_out || op->args[a].kwarg_only);
    }
    ck_assert_ptr_eq(ops_registry_find("add.Scalar", NULL), ops_registry_find("add", "Scalar"));
    ck_assert_ptr_eq(ops_registry_find("neg", NULL), ops_registry_find("neg", ""));
    ck_assert_ptr_nonnull(ops_registry_find("neg", NULL));
    ck_assert_ptr_null(ops_registry_find("add", NULL)); /* every add has an overload */
    ck_assert_ptr_null(ops_registry_find("ad", "Tensor"));
    ck_assert_ptr_null(ops_registry_find("add", "Tenso"));
    ck_assert_ptr_null(ops_registry_find("no_such_op", NULL));
    ck_assert_ptr_null(ops_registry_find(NULL, NULL));
}
END_TEST

START_TEST(test_registry_describes_add)
{
    const ops_op_info *op = ops_registry_find("add", "Tensor");
    ck_assert_ptr_nonnull(op);
    ck_assert_str_eq(op->name, "add");
    ck_assert_str_eq(op->overload, "Tensor");
    ck_assert_str_eq(op->c_name, "ops_add");
    ck_assert_str_eq(op->schema, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    ck_assert_int_eq(op->kind, OPS_KIND_FUNCTIONAL);
    ck_assert_int_eq(op->num_args, 3);
    ck_assert_str_eq(op->args[0].name, "self");
    ck_assert_str_eq(op->args[0].type, "Tensor");
    ck_assert_ptr_null(op->args[0].default_value);
    ck_assert(!op->args[0].kwarg_only);
    ck_assert_str_eq(op->args[2].name, "alpha");
    ck_assert_str_eq(op->args[2].type, "Scalar");
    ck_assert_str_eq(op->args[2].default_value, "1");
    ck_assert(op->args[2].kwarg_only);
    ck_assert(!op->args[2].is_out);
    ck_assert_int_eq(op->num_returns, 1);
    ck_assert_str_eq(op->returns[0].type, "Tensor");
    ck_assert_ptr_eq(op->inplace, ops_registry_find("add_", "Tensor"));
    ck_assert_ptr_eq(op->out, ops_registry_find("add", "out"));

    const ops_op_info *out = op->out;
    ck_assert_int_eq(out->kind, OPS_KIND_OUT);
    ck_assert_int_eq(out->num_args, 4);
    ck_assert(out->args[3].is_out);
    ck_assert_str_eq(out->args[3].type, "Tensor(a!)");
    ck_assert_ptr_eq(out->functional, op);
    ck_assert_ptr_nonnull(out->conformance); /* the structured entry carries it */
    ck_assert_int_eq(out->conformance[0], '{');

    const ops_op_info *s = ops_registry_find("add_", "Scalar");
    ck_assert_int_eq(s->kind, OPS_KIND_INPLACE);
    ck_assert_ptr_eq(s->functional, ops_registry_find("add", "Scalar"));
    ck_assert_ptr_eq(s->out, ops_registry_find("add", "Scalar_out"));
}
END_TEST

START_TEST(test_boxed_calls)
{
    const float xs[] = {1, -2, 3};
    const float neg[] = {-1, 2, -3};
    ops_tensor *x = f32(xs, 3);
    ops_ivalue ret = ops_ivalue_int(42);

    /* Tag checked against the schema type; rets are None after a failure. */
    const ops_op_info *op = ops_registry_find("neg", NULL);
    ops_ivalue bad = ops_ivalue_int(3);
    ck_assert_int_eq(op->call(&bad, &ret), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "neg: argument 'self' must be Tensor, not int");
    ck_assert_int_eq(ret.tag, OPS_IVALUE_NONE);
    ck_assert_int_eq(op->call(NULL, &ret), OPS_ERR_VALUE);
    ops_clear_error();

    ops_ivalue arg = ops_ivalue_tensor(x);
    ck_assert_int_eq(op->call(&arg, &ret), OPS_OK);
    ck_assert_int_eq(ret.tag, OPS_IVALUE_TENSOR);
    assert_f32(ret.v.tensor, neg, 3);
    ops_ivalue_release(&ret);
    ck_assert_int_eq(ret.tag, OPS_IVALUE_NONE);

    /* Scalar accepts ints and doubles; in-place returns a new reference to self. */
    op = ops_registry_find("add_", "Scalar");
    ops_ivalue args[3] = {ops_ivalue_tensor(x), ops_ivalue_double(0.5), ops_ivalue_int(2)};
    ck_assert_int_eq(op->call(args, &ret), OPS_OK);
    ck_assert_ptr_eq(ret.v.tensor, x);
    ops_ivalue_release(&ret); /* drops the returned reference, not ours */
    const float plus1[] = {2, -1, 4};
    assert_f32(x, plus1, 3);

    args[1] = ops_ivalue_str("one");
    ck_assert_int_eq(op->call(args, &ret), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add_: argument 'other' must be Scalar, not str");

    /* Optional arguments take None. */
    op = ops_registry_find("zeros", NULL);
    ops_ivalue zargs[3] = {ops_ivalue_int_list(OPS_INTS(2)), ops_ivalue_none(), ops_ivalue_none()};
    ck_assert_int_eq(op->call(zargs, &ret), OPS_OK);
    const float zero2[] = {0, 0};
    assert_f32(ret.v.tensor, zero2, 2);
    ops_ivalue_release(&ret);
    zargs[0] = ops_ivalue_none();
    ck_assert_int_eq(op->call(zargs, &ret), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "zeros: argument 'size' must be int[], not None");

    ops_tensor_release(x);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("generated_api");
    TCase *tc = tcase_create("glue");
    tcase_add_test(tc, test_null_tensor_arguments);
    tcase_add_test(tc, test_bad_int_list);
    tcase_add_test(tc, test_factory_device);
    tcase_add_test(tc, test_structured_forms_agree);
    tcase_add_test(tc, test_scalar_overloads_wrap_numbers);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry");
    tcase_add_test(tc, test_registry_lookup);
    tcase_add_test(tc, test_registry_describes_add);
    tcase_add_test(tc, test_boxed_calls);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

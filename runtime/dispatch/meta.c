/* The iterator families named by `meta:` in ops/native_functions.yaml.  Each one
 * decides the computation and result dtypes (and checks what is particular to its
 * ops), then hands over to ops_iter_build(), which does the rest. */
#include <string.h>

#include "ops_dispatch.h"
#include "ops_iter.h"

static inline const char *
op_name(const char *op)
{
    return op ? op : "ops";
}

/* result_type over the Tensor arguments [first, first + count).  All of one dtype
 * and none a wrapped number (the common case) needs no promotion walk. */
static ops_dtype
common_dtype(const ops_meta_args *a, int first, int count)
{
    ops_dtype dt = OPS_DTYPE_NONE;
    bool simple = true;
    for (int i = first; i < first + count && i < a->ntensors; i++) {
        const ops_tensor *t = a->tensors[i];
        if (t == NULL)
            continue;
        if (t->flags & OPS_TENSOR_WRAPPED_NUMBER || (dt != OPS_DTYPE_NONE && t->dtype != dt)) {
            simple = false;
            break;
        }
        dt = t->dtype;
    }
    if (simple)
        return dt;
    const int n = a->ntensors - first < count ? a->ntensors - first : count;
    return ops_result_type(n, a->tensors + first, 0, NULL);
}

ops_dtype
ops_meta_input_dtype(const ops_meta_args *a, int first, bool scalars)
{
    if (scalars)
        return ops_result_type(a->ntensors, a->tensors, a->nscalars, a->scalars);
    return common_dtype(a, first, a->ntensors - first);
}

ops_status
ops_check_dtype_declared(const char *op, ops_dtype dt, unsigned mask, const char *message)
{
    /* (a factory's dtype argument arrives unchecked: 37 is no dtype, and no bit to test) */
    if (dt == OPS_DTYPE_NONE || ((int)dt >= 0 && dt < OPS_NUM_DTYPES && (mask & OPS_DTYPE_BIT(dt))))
        return OPS_OK;
    if (message != NULL) {
        /* "{dtype}" in a declared message (codegen/dtypes.py allows no other
         * placeholder) is the refused dtype's name, as PyTorch words some refusals */
        const char *ph = strstr(message, "{dtype}");
        if (ph != NULL)
            return ops_fail(OPS_ERR_DTYPE, "%s: %.*s%s%s", op_name(op), (int)(ph - message), message,
                            ops_dtype_name(dt), ph + strlen("{dtype}"));
        return ops_fail(OPS_ERR_DTYPE, "%s: %s", op_name(op), message);
    }
    return ops_fail_dtype(op, dt, mask);
}

static ops_status
fail_no_inputs(ops_iter *it, const ops_meta_args *a)
{
    ops_iter_init(it, a->op, a->mode);
    return ops_fail(OPS_ERR_VALUE, "%s: expected at least one input tensor", op_name(a->op));
}

static inline ops_dtype
to_float(ops_dtype dt)
{
    return ops_dtype_is_floating(dt) ? dt : ops_default_float_dtype();
}

ops_status
ops_meta_binary(ops_iter *it, const ops_meta_args *a)
{
    const ops_dtype dt = common_dtype(a, 0, a->ntensors);
    if (dt == OPS_DTYPE_NONE)
        return fail_no_inputs(it, a);
    return ops_iter_build(it, a, dt, dt, 0);
}

ops_status
ops_meta_binary_float(ops_iter *it, const ops_meta_args *a)
{
    ops_dtype dt = common_dtype(a, 0, a->ntensors);
    if (dt == OPS_DTYPE_NONE)
        return fail_no_inputs(it, a);
    dt = to_float(dt);
    return ops_iter_build(it, a, dt, dt, 0);
}

ops_status
ops_meta_bool_out(ops_iter *it, const ops_meta_args *a)
{
    const ops_dtype dt = common_dtype(a, 0, a->ntensors);
    if (dt == OPS_DTYPE_NONE)
        return fail_no_inputs(it, a);
    return ops_iter_build(it, a, dt, OPS_BOOL, 0);
}

ops_status
ops_meta_unary(ops_iter *it, const ops_meta_args *a)
{
    return ops_meta_binary(it, a);
}

ops_status
ops_meta_unary_float(ops_iter *it, const ops_meta_args *a)
{
    /* exp, log, tanh, sigmoid, erf...: transcendental, worth threads at fewer elements */
    const ops_status st = ops_meta_binary_float(it, a);
    if (st == OPS_OK)
        ops_iter_set_cost(it, OPS_COST_MATH);
    return st;
}

ops_status
ops_meta_where(ops_iter *it, const ops_meta_args *a)
{
    const ops_tensor *cond = a->ntensors > 0 ? a->tensors[0] : NULL;
    if (cond == NULL || a->ntensors != 3 || a->tensors[1] == NULL || a->tensors[2] == NULL) {
        ops_iter_init(it, a->op, a->mode);
        return ops_fail(OPS_ERR_VALUE, "%s: expected condition, self and other tensors", op_name(a->op));
    }
    if (cond->dtype != OPS_BOOL) {
        ops_iter_init(it, a->op, a->mode);
        return ops_fail(OPS_ERR_DTYPE, "%s: expected condition to be a boolean tensor, but got a tensor with dtype %s",
                        op_name(a->op), ops_dtype_name(cond->dtype));
    }
    const ops_dtype dt = common_dtype(a, 1, 2);
    return ops_iter_build(it, a, dt, dt, 1u);
}

ops_status
ops_meta_div_mode(ops_iter *it, const ops_meta_args *a)
{
    const char *mode = a->nstrs > 0 ? a->strs[0] : NULL;
    if (mode == NULL)
        return ops_meta_binary_float(it, a);
    if (strcmp(mode, "trunc") == 0 || strcmp(mode, "floor") == 0)
        return ops_meta_binary(it, a);
    ops_iter_init(it, a->op, a->mode);
    return ops_fail(OPS_ERR_VALUE,
                    "%s: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                    op_name(a->op), mode);
}

ops_status
ops_meta_clamp(ops_iter *it, const ops_meta_args *a)
{
    bool have_bound;
    if (a->ntensors > 1) /* clamp.Tensor: self, min, max */
        have_bound = a->tensors[1] != NULL || (a->ntensors > 2 && a->tensors[2] != NULL);
    else /* clamp: self, Scalar? min, Scalar? max */
        have_bound = (a->nscalars > 0 && a->scalars[0] != NULL) || (a->nscalars > 1 && a->scalars[1] != NULL);
    if (!have_bound || a->ntensors < 1 || a->tensors[0] == NULL) {
        ops_iter_init(it, a->op, a->mode);
        return ops_fail(OPS_ERR_VALUE, "%s: at least one of 'min' or 'max' must not be None", op_name(a->op));
    }
    const ops_dtype dt = ops_result_type(a->ntensors, a->tensors, a->nscalars, a->scalars);
    return ops_iter_build(it, a, dt, dt, 0);
}

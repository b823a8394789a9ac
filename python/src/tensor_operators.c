/* The Python operators of libops.Tensor (+ - * / // % ** @ & | ^ << >>, their
 * in-place forms, unary -, +, abs, ~, bool/int/float/index conversion and the rich
 * comparisons) with PyTorch's scalar promotion: a Python number becomes a
 * wrapped-number tensor, which does not promote a tensor within its category. */
#include "pyops.h"
#include "ops_op_abs.h"
#include "ops_op_add.h"
#include "ops_op_bitwise_and.h"
#include "ops_op_bitwise_left_shift.h"
#include "ops_op_bitwise_not.h"
#include "ops_op_bitwise_or.h"
#include "ops_op_bitwise_right_shift.h"
#include "ops_op_bitwise_xor.h"
#include "ops_op_copy.h"
#include "ops_op_div.h"
#include "ops_op_eq.h"
#include "ops_op_ge.h"
#include "ops_op_gt.h"
#include "ops_op_le.h"
#include "ops_op_lt.h"
#include "ops_op_matmul.h"
#include "ops_op_mul.h"
#include "ops_op_ne.h"
#include "ops_op_neg.h"
#include "ops_op_pow.h"
#include "ops_op_remainder.h"
#include "ops_op_sub.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The operand as a tensor: a Tensor (borrowed: *tmp stays NULL) or a Python number
 * (a wrapped number, which *tmp owns).  1 done, 0 not an operand (no exception), -1
 * error (raised). */
static int
operand(PyObject *o, const ops_tensor **out, ops_tensor **tmp)
{
    *tmp = NULL;
    if (PYOPS_TENSOR_CHECK(o)) {
        *out = PYOPS_T(o);
        return 1;
    }
    ops_scalar s;
    if (!pyops_scalar_from_object(o, &s))
        return 0;
    *tmp = ops_wrap_scalar(s);
    if (*tmp == NULL) {
        pyops_raise();
        return -1;
    }
    *out = *tmp;
    return 1;
}

typedef enum binop {
    B_ADD, B_SUB, B_MUL, B_DIV, B_FLOORDIV, B_MOD, B_POW, B_MATMUL, B_AND, B_OR, B_XOR, B_LSHIFT, B_RSHIFT,
    B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE,
} binop;

static ops_tensor *
apply_binop(binop op, const ops_tensor *a, const ops_tensor *b)
{
    static const ops_scalar one = {.kind = OPS_SCALAR_INT, .v.i = 1};
    switch (op) {
    case B_ADD:
        return ops_add(a, b, one);
    case B_SUB:
        return ops_sub(a, b, one);
    case B_MUL:
        return ops_mul(a, b);
    case B_DIV:
        return ops_div(a, b);
    case B_FLOORDIV:
        return ops_div_tensor_mode(a, b, "floor");
    case B_MOD:
        return ops_remainder(a, b);
    case B_POW:
        return ops_pow(a, b);
    case B_MATMUL:
        return ops_matmul(a, b);
    case B_AND:
        return ops_bitwise_and(a, b);
    case B_OR:
        return ops_bitwise_or(a, b);
    case B_XOR:
        return ops_bitwise_xor(a, b);
    case B_LSHIFT:
        return ops_bitwise_left_shift(a, b);
    case B_RSHIFT:
        return ops_bitwise_right_shift(a, b);
    case B_EQ:
        return ops_eq(a, b);
    case B_NE:
        return ops_ne(a, b);
    case B_LT:
        return ops_lt(a, b);
    case B_LE:
        return ops_le(a, b);
    case B_GT:
        return ops_gt(a, b);
    case B_GE:
        return ops_ge(a, b);
    }
    return NULL;
}

static PyObject *
binary(PyObject *x, PyObject *y, binop op)
{
    ops_tensor *tx = NULL, *ty = NULL;
    const ops_tensor *a = NULL, *b = NULL;
    int ra = operand(x, &a, &tx);
    int rb = ra > 0 ? operand(y, &b, &ty) : 0;
    if (ra <= 0 || rb <= 0) {
        ops_tensor_release(tx);
        if (ra < 0 || rb < 0)
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    ops_tensor *r;
    if (ops_tensor_numel(a) >= PYOPS_GIL_RELEASE_NUMEL || ops_tensor_numel(b) >= PYOPS_GIL_RELEASE_NUMEL) {
        Py_BEGIN_ALLOW_THREADS
        r = apply_binop(op, a, b);
        Py_END_ALLOW_THREADS
    } else {
        r = apply_binop(op, a, b);
    }
    ops_tensor_release(tx);
    ops_tensor_release(ty);
    return pyops_wrap(r);
}

static ops_status
apply_inplace(binop op, ops_tensor *a, const ops_tensor *b)
{
    static const ops_scalar one = {.kind = OPS_SCALAR_INT, .v.i = 1};
    switch (op) {
    case B_ADD:
        return ops_add_(a, b, one);
    case B_SUB:
        return ops_sub_(a, b, one);
    case B_MUL:
        return ops_mul_(a, b);
    case B_DIV:
        return ops_div_(a, b);
    case B_FLOORDIV:
        return ops_div_tensor_mode_(a, b, "floor");
    case B_MOD:
        return ops_remainder_(a, b);
    case B_POW:
        return ops_pow_(a, b);
    case B_AND:
        return ops_bitwise_and_(a, b);
    case B_OR:
        return ops_bitwise_or_(a, b);
    case B_XOR:
        return ops_bitwise_xor_(a, b);
    case B_LSHIFT:
        return ops_bitwise_left_shift_(a, b);
    case B_RSHIFT:
        return ops_bitwise_right_shift_(a, b);
    default: {
        /* a @= b: torch computes a @ b and copies it back into a */
        ops_tensor *r = apply_binop(op, a, b);
        if (r == NULL)
            return ops_last_status();
        ops_status st = ops_copy_(a, r, false);
        ops_tensor_release(r);
        return st;
    }
    }
}

static PyObject *
inplace(PyObject *x, PyObject *y, binop op)
{
    if (!PYOPS_TENSOR_CHECK(x))
        Py_RETURN_NOTIMPLEMENTED;
    ops_tensor *ty = NULL;
    const ops_tensor *b = NULL;
    int rb = operand(y, &b, &ty);
    if (rb < 0)
        return NULL;
    if (rb == 0)
        Py_RETURN_NOTIMPLEMENTED;
    ops_status st;
    if (ops_tensor_numel(PYOPS_T(x)) >= PYOPS_GIL_RELEASE_NUMEL) {
        Py_BEGIN_ALLOW_THREADS
        st = apply_inplace(op, PYOPS_T(x), b);
        Py_END_ALLOW_THREADS
    } else {
        st = apply_inplace(op, PYOPS_T(x), b);
    }
    ops_tensor_release(ty);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_INCREF(x);
    return x;
}

/* One function per number slot (CPython needs a pointer per slot). */
static PyObject *
nb_add(PyObject *x, PyObject *y)
{
    return binary(x, y, B_ADD);
}

static PyObject *
nb_iadd(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_ADD);
}

static PyObject *
nb_sub(PyObject *x, PyObject *y)
{
    return binary(x, y, B_SUB);
}

static PyObject *
nb_isub(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_SUB);
}

static PyObject *
nb_mul(PyObject *x, PyObject *y)
{
    return binary(x, y, B_MUL);
}

static PyObject *
nb_imul(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_MUL);
}

static PyObject *
nb_div(PyObject *x, PyObject *y)
{
    return binary(x, y, B_DIV);
}

static PyObject *
nb_idiv(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_DIV);
}

static PyObject *
nb_floordiv(PyObject *x, PyObject *y)
{
    return binary(x, y, B_FLOORDIV);
}

static PyObject *
nb_ifloordiv(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_FLOORDIV);
}

static PyObject *
nb_mod(PyObject *x, PyObject *y)
{
    return binary(x, y, B_MOD);
}

static PyObject *
nb_imod(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_MOD);
}

static PyObject *
nb_matmul(PyObject *x, PyObject *y)
{
    return binary(x, y, B_MATMUL);
}

static PyObject *
nb_imatmul(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_MATMUL);
}

static PyObject *
nb_and(PyObject *x, PyObject *y)
{
    return binary(x, y, B_AND);
}

static PyObject *
nb_iand(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_AND);
}

static PyObject *
nb_or(PyObject *x, PyObject *y)
{
    return binary(x, y, B_OR);
}

static PyObject *
nb_ior(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_OR);
}

static PyObject *
nb_xor(PyObject *x, PyObject *y)
{
    return binary(x, y, B_XOR);
}

static PyObject *
nb_ixor(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_XOR);
}

static PyObject *
nb_lshift(PyObject *x, PyObject *y)
{
    return binary(x, y, B_LSHIFT);
}

static PyObject *
nb_ilshift(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_LSHIFT);
}

static PyObject *
nb_rshift(PyObject *x, PyObject *y)
{
    return binary(x, y, B_RSHIFT);
}

static PyObject *
nb_irshift(PyObject *x, PyObject *y)
{
    return inplace(x, y, B_RSHIFT);
}

static PyObject *
nb_pow(PyObject *x, PyObject *y, PyObject *mod)
{
    if (mod != Py_None) {
        PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported for tensors");
        return NULL;
    }
    return binary(x, y, B_POW);
}

static PyObject *
nb_ipow(PyObject *x, PyObject *y, PyObject *mod)
{
    (void)mod;
    return inplace(x, y, B_POW);
}

static PyObject *
nb_neg(PyObject *x)
{
    return pyops_wrap(ops_neg(PYOPS_T(x)));
}

static PyObject *
nb_pos(PyObject *x)
{
    Py_INCREF(x);
    return x;
}

static PyObject *
nb_abs(PyObject *x)
{
    return pyops_wrap(ops_abs(PYOPS_T(x)));
}

static PyObject *
nb_invert(PyObject *x)
{
    return pyops_wrap(ops_bitwise_not(PYOPS_T(x)));
}

static int
nb_bool(PyObject *x)
{
    ops_tensor *t = PYOPS_T(x);
    if (ops_tensor_numel(t) != 1) {
        if (ops_tensor_numel(t) == 0)
            PyErr_SetString(PyExc_RuntimeError, "Boolean value of Tensor with no values is ambiguous");
        else
            PyErr_SetString(PyExc_RuntimeError, "Boolean value of Tensor with more than one value is ambiguous");
        return -1;
    }
    ops_scalar s;
    ops_status st = ops_tensor_item(t, &s);
    if (st != OPS_OK) {
        pyops_raise_status(st);
        return -1;
    }
    return ops_scalar_to_double(s) != 0.0;
}

static PyObject *
one_element(PyObject *x, bool as_int)
{
    ops_tensor *t = PYOPS_T(x);
    if (ops_tensor_numel(t) != 1) {
        PyErr_SetString(PyExc_TypeError, "only one element tensors can be converted to Python scalars");
        return NULL;
    }
    ops_scalar s;
    ops_status st = ops_tensor_item(t, &s);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    if (as_int)
        return s.kind == OPS_SCALAR_FLOAT ? PyLong_FromDouble(s.v.f) : PyLong_FromLongLong(ops_scalar_to_int64(s));
    return PyFloat_FromDouble(ops_scalar_to_double(s));
}

static PyObject *
nb_int(PyObject *x)
{
    return one_element(x, true);
}

static PyObject *
nb_float(PyObject *x)
{
    return one_element(x, false);
}

static PyObject *
nb_index(PyObject *x)
{
    ops_dtype dt = ops_tensor_dtype(PYOPS_T(x));
    if (!ops_dtype_is_integral(dt, true) || ops_tensor_numel(PYOPS_T(x)) != 1) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return one_element(x, true);
}

PyNumberMethods pyops_tensor_as_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_remainder = nb_mod,
    .nb_power = nb_pow,
    .nb_negative = nb_neg,
    .nb_positive = nb_pos,
    .nb_absolute = nb_abs,
    .nb_bool = nb_bool,
    .nb_invert = nb_invert,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_and = nb_and,
    .nb_xor = nb_xor,
    .nb_or = nb_or,
    .nb_int = nb_int,
    .nb_float = nb_float,
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul,
    .nb_inplace_remainder = nb_imod,
    .nb_inplace_power = nb_ipow,
    .nb_inplace_lshift = nb_ilshift,
    .nb_inplace_rshift = nb_irshift,
    .nb_inplace_and = nb_iand,
    .nb_inplace_xor = nb_ixor,
    .nb_inplace_or = nb_ior,
    .nb_floor_divide = nb_floordiv,
    .nb_true_divide = nb_div,
    .nb_inplace_floor_divide = nb_ifloordiv,
    .nb_inplace_true_divide = nb_idiv,
    .nb_index = nb_index,
    .nb_matrix_multiply = nb_matmul,
    .nb_inplace_matrix_multiply = nb_imatmul,
};

PyObject *
pyops_tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    /* Python swaps the operands of a reflected comparison itself (2 < x calls
     * x.__gt__(2)), so `a` is the tensor here or the call is for b's type. */
    static const binop map[] = {[Py_LT] = B_LT, [Py_LE] = B_LE, [Py_EQ] = B_EQ,
                                [Py_NE] = B_NE, [Py_GT] = B_GT, [Py_GE] = B_GE};
    return binary(a, b, map[op]);
}

/* Conversions of the argument parser of libops._C: one Python object to the boxed value
 * (ops_ivalue) of an argument's schema type -- ints with torch's index rules, int[] and
 * Tensor[] lists into the call's arena, Scalars, dtypes, devices, generators -- and,
 * when it does not match, why (the text of the TypeError or RuntimeError). */
#include "pyops_args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void *
parsed_alloc(pyops_parsed *p, size_t nbytes)
{
    if (p->nheap == PYOPS_MAX_ARGS)
        return NULL;
    void *m = PyMem_Malloc(nbytes ? nbytes : 1);
    if (m != NULL)
        p->heap[p->nheap++] = m;
    return m;
}

/* ---- conversions: 1 converted, 0 does not match (no exception set) ----------- */

void
pyops_say(pyops_reason *why, bool value, const char *fmt, ...)
{
    if (why == NULL || why->text[0] != '\0')
        return; /* the first reason found is the one reported */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why->text, sizeof why->text, fmt, ap);
    va_end(ap);
    why->value = value;
}

/* What the message shows of a value: its repr, cut short (a 10**5000 has no repr at
 * all on Python 3.11). */
void
pyops_short_repr(PyObject *o, char *buf, size_t n)
{
    PyObject *r = PyObject_Repr(o);
    const char *s = r != NULL ? PyUnicode_AsUTF8(r) : NULL;
    if (s == NULL) {
        PyErr_Clear();
        snprintf(buf, n, "a %s", Py_TYPE(o)->tp_name);
    } else if (strlen(s) > 48) {
        snprintf(buf, n, "%.40s...", s);
    } else {
        snprintf(buf, n, "%s", s);
    }
    Py_XDECREF(r);
}

/* How a list element is named in a message: None, or its type. */
static const char *
elem_name(PyObject *o)
{
    return o == Py_None ? "None" : PYOPS_TENSOR_CHECK(o) ? "Tensor" : Py_TYPE(o)->tp_name;
}

static bool
is_int_object(PyObject *o)
{
    if (PyBool_Check(o))
        return false;
    if (PyLong_CheckExact(o) || PyLong_Check(o))
        return true;
    /* NumPy integers and other __index__ types (a Tensor is not an int here). */
    return !PYOPS_TENSOR_CHECK(o) && !PyFloat_Check(o) && PyIndex_Check(o);
}

/* 1 converted, 0 not an int, -1 an int that does not fit in int64 (no exception). */
static int
to_int_checked(PyObject *o, int64_t *out)
{
    if (!is_int_object(o))
        return 0;
    int overflow = 0;
    PyObject *ix = PyNumber_Index(o);
    if (ix == NULL) {
        PyErr_Clear();
        return 0;
    }
    long long v = PyLong_AsLongLongAndOverflow(ix, &overflow);
    Py_DECREF(ix);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = (int64_t)v;
    return 1;
}

static int
to_int(PyObject *o, int64_t *out)
{
    return to_int_checked(o, out) == 1;
}

/* An index as torch's int arguments take it: an int, or a 0-dim integer tensor (not
 * bool), read on the host: narrow(x, 0, torch.tensor(1), 2), x.view(t, 3), [t, 2] for
 * an int[].  A bare tensor for a whole int[] stays refused, as in torch. */
int
pyops_to_index_checked(PyObject *o, int64_t *out)
{
    if (!PYOPS_TENSOR_CHECK(o))
        return to_int_checked(o, out);
    const ops_tensor *t = PYOPS_T(o);
    ops_scalar s;
    if (ops_tensor_ndim(t) != 0 || !ops_dtype_is_integral(ops_tensor_dtype(t), false) ||
        ops_tensor_item(t, &s) != OPS_OK)
        return 0;
    *out = s.v.i;
    return 1;
}

/* An int argument; a mismatch says why. */
static int
to_int_arg(PyObject *o, int64_t *out, pyops_reason *why)
{
    int rc = pyops_to_index_checked(o, out);
    if (rc < 0) {
        char r[64];
        pyops_short_repr(o, r, sizeof r);
        pyops_say(why, true, ": %s does not fit in int64", r);
    }
    return rc == 1;
}

static int
to_int_list(pyops_parsed *p, const pyops_arg *a, PyObject *o, ops_int_list *out, pyops_reason *why)
{
    int64_t one;
    if (!PYOPS_TENSOR_CHECK(o) && to_int_arg(o, &one, why)) {
        /* torch accepts a bare int for int[] (dim=0, size=3): an int[N] repeats it */
        int64_t n = a->size > 0 ? a->size : 1;
        int64_t *buf;
        if (p->nints + n <= PYOPS_ARENA_INTS) {
            buf = p->ints + p->nints;
            p->nints += (int)n;
        } else if ((buf = parsed_alloc(p, (size_t)n * sizeof *buf)) == NULL) {
            return 0;
        }
        for (int64_t i = 0; i < n; i++)
            buf[i] = one;
        *out = (ops_int_list){buf, n};
        return 1;
    }
    if (!PyTuple_Check(o) && !PyList_Check(o))
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (a->size > 0 && n != a->size && n != 1) {
        pyops_say(why, false, " must be a sequence of %d ints (or one int), but has %zd elements", a->size, n);
        return 0;
    }
    int64_t *buf;
    if (p->nints + n <= PYOPS_ARENA_INTS) {
        buf = p->ints + p->nints;
        p->nints += (int)n;
    } else if ((buf = parsed_alloc(p, (size_t)n * sizeof *buf)) == NULL) {
        return 0;
    }
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        int rc = pyops_to_index_checked(items[i], &buf[i]);
        if (rc < 0) {
            char r[64];
            pyops_short_repr(items[i], r, sizeof r);
            pyops_say(why, true, ": element %zd (%s) does not fit in int64", i, r);
        } else if (rc == 0) {
            pyops_say(why, false, " must be a sequence of ints, but element %zd is %s", i, elem_name(items[i]));
        }
        if (rc != 1)
            return 0;
    }
    if (a->size > 0 && n == 1 && a->size != 1) {
        /* int[2] given as [k]: torch expands a one-element list like a bare int */
        int64_t v = buf[0];
        int64_t *b2 = parsed_alloc(p, (size_t)a->size * sizeof *b2);
        if (b2 == NULL)
            return 0;
        for (int i = 0; i < a->size; i++)
            b2[i] = v;
        buf = b2;
        n = a->size;
    }
    *out = (ops_int_list){buf, n};
    return 1;
}

/* bool[] / bool[N]: a list or tuple of Python bools (not ints: a mask of [1, 0, 1] is
 * refused naming the element, so a caller's int list is never read as a mask). */
static int
to_bool_list(pyops_parsed *p, const pyops_arg *a, PyObject *o, ops_bool_list *out, pyops_reason *why)
{
    if (!PyTuple_Check(o) && !PyList_Check(o))
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (a->size > 0 && n != a->size) {
        pyops_say(why, false, " must be a sequence of %d bools, but has %zd elements", a->size, n);
        return 0;
    }
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBool_Check(items[i])) {
            pyops_say(why, false, " must be a sequence of bools, but element %zd is %s", i, elem_name(items[i]));
            return 0;
        }
    }
    bool *buf;
    if (p->nbools + n <= PYOPS_ARENA_BOOLS) {
        buf = p->bools + p->nbools;
        p->nbools += (int)n;
    } else if ((buf = parsed_alloc(p, (size_t)n * sizeof *buf)) == NULL) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        buf[i] = items[i] == Py_True;
    *out = (ops_bool_list){buf, n};
    return 1;
}

static int
to_tensor_list(pyops_parsed *p, const pyops_arg *a, PyObject *o, ops_tensor_list *out, pyops_reason *why)
{
    if (!PyTuple_Check(o) && !PyList_Check(o))
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    const ops_tensor **buf;
    if (p->ntensors + n <= PYOPS_ARENA_TENSORS) {
        buf = p->tensors + p->ntensors;
        p->ntensors += (int)n;
    } else if ((buf = parsed_alloc(p, (size_t)n * sizeof *buf)) == NULL) {
        return 0;
    }
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (items[i] == Py_None && (a->flags & PYOPS_F_ELEM_OPTIONAL))
            buf[i] = NULL;
        else if (PYOPS_TENSOR_CHECK(items[i]))
            buf[i] = PYOPS_T(items[i]);
        else {
            pyops_say(why, false, " must be a sequence of %s, but element %zd is %s",
                (a->flags & PYOPS_F_ELEM_OPTIONAL) ? "Tensors and Nones" : "Tensors", i, elem_name(items[i]));
            return 0;
        }
    }
    *out = (ops_tensor_list){buf, n};
    return 1;
}

bool
pyops_scalar_from_object(PyObject *o, ops_scalar *out)
{
    if (PyBool_Check(o)) {
        *out = OPS_SCALAR_BOOL(o == Py_True);
        return true;
    }
    if (PyFloat_Check(o)) {
        *out = OPS_SCALAR_FLOAT(PyFloat_AS_DOUBLE(o));
        return true;
    }
    int64_t i;
    if (to_int(o, &i)) {
        *out = OPS_SCALAR_INT(i);
        return true;
    }
    if (PYOPS_TENSOR_CHECK(o))
        return false;
    /* NumPy floating scalars and other __float__ numbers */
    if (PyNumber_Check(o) && Py_TYPE(o)->tp_as_number->nb_float != NULL && !PyComplex_Check(o)) {
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
        }
        *out = OPS_SCALAR_FLOAT(d);
        return true;
    }
    return false;
}

PyObject *
pyops_scalar_to_object(ops_scalar s)
{
    switch (s.kind) {
    case OPS_SCALAR_BOOL:
        return PyBool_FromLong(s.v.b);
    case OPS_SCALAR_INT:
        return PyLong_FromLongLong(s.v.i);
    default:
        return PyFloat_FromDouble(s.v.f);
    }
}

/* One argument: 1 converted, 0 no match (why, when given, may say more than the
 * type's name: a bad element, an out-of-range value). */
int
pyops_convert_arg(pyops_parsed *p, const pyops_arg *a, PyObject *o, ops_ivalue *iv, pyops_reason *why)
{
    if (o == Py_None && ((a->flags & PYOPS_F_OPTIONAL) || a->type == PYOPS_T_GENERATOR)) {
        *iv = ops_ivalue_none();
        return 1;
    }
    switch (a->type) {
    case PYOPS_T_TENSOR:
        if (!PYOPS_TENSOR_CHECK(o))
            return 0;
        *iv = ops_ivalue_tensor(PYOPS_T(o));
        return 1;
    case PYOPS_T_TENSOR_LIST: {
        ops_tensor_list l;
        if (!to_tensor_list(p, a, o, &l, why))
            return 0;
        *iv = ops_ivalue_tensor_list(l);
        return 1;
    }
    case PYOPS_T_SCALAR: {
        ops_scalar s;
        int64_t i;
        /* an int beyond int64 is refused, not silently made a float */
        if (is_int_object(o) && !to_int_arg(o, &i, why))
            return 0;
        if (!pyops_scalar_from_object(o, &s))
            return 0;
        *iv = ops_ivalue_scalar(s);
        return 1;
    }
    case PYOPS_T_INT: {
        int64_t i;
        if (!to_int_arg(o, &i, why))
            return 0;
        *iv = ops_ivalue_int(i);
        return 1;
    }
    case PYOPS_T_INT_LIST: {
        ops_int_list l;
        if (!to_int_list(p, a, o, &l, why))
            return 0;
        *iv = ops_ivalue_int_list(l);
        return 1;
    }
    case PYOPS_T_BOOL_LIST: {
        ops_bool_list l;
        if (!to_bool_list(p, a, o, &l, why))
            return 0;
        *iv = ops_ivalue_bool_list(l);
        return 1;
    }
    case PYOPS_T_FLOAT: {
        if (PyFloat_Check(o)) {
            *iv = ops_ivalue_double(PyFloat_AS_DOUBLE(o));
            return 1;
        }
        int64_t i;
        if (to_int(o, &i)) {
            *iv = ops_ivalue_double((double)i);
            return 1;
        }
        ops_scalar s;
        if (!PyBool_Check(o) && pyops_scalar_from_object(o, &s)) {
            *iv = ops_ivalue_double(ops_scalar_to_double(s));
            return 1;
        }
        return 0;
    }
    case PYOPS_T_BOOL:
        if (!PyBool_Check(o))
            return 0;
        *iv = ops_ivalue_bool(o == Py_True);
        return 1;
    case PYOPS_T_STR: {
        if (!PyUnicode_Check(o))
            return 0;
        const char *s = PyUnicode_AsUTF8(o);
        if (s == NULL) {
            PyErr_Clear();
            pyops_say(why, true, ": the string cannot be encoded as UTF-8");
            return 0;
        }
        *iv = ops_ivalue_str(s);
        return 1;
    }
    case PYOPS_T_DTYPE: {
        ops_dtype dt = pyops_dtype_from_object(o);
        if (dt == OPS_DTYPE_NONE)
            return 0;
        *iv = ops_ivalue_dtype(dt);
        return 1;
    }
    case PYOPS_T_DEVICE: {
        ops_device d;
        char bad[160];
        int rc = pyops_device_convert(o, &d, bad, sizeof bad);
        if (rc < 0)
            pyops_say(why, true, ": %s", bad);
        if (rc != 1)
            return 0;
        *iv = ops_ivalue_device(d);
        return 1;
    }
    case PYOPS_T_MEMORY_FORMAT: {
        /* only the libops.memory_format objects: torch refuses ints and strings too */
        ops_memory_format f = pyops_memory_format_from_object(o);
        if (f == OPS_MEMORY_FORMAT_NONE)
            return 0;
        *iv = ops_ivalue_memory_format(f);
        return 1;
    }
    case PYOPS_T_GENERATOR:
        /* the Python object outlives the call (the caller holds it), and so does its
         * generator */
        if (!pyops_generator_check(o))
            return 0;
        *iv = ops_ivalue_generator(((pyops_generator *)o)->g);
        return 1;
    }
    return 0;
}

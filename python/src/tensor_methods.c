/* The hand-written methods of libops.Tensor (size, stride, item, tolist, backward,
 * detach, requires_grad_, to and the dtype shorthands, cpu/cuda, type, ...) and their
 * table, which pyops_tensor_type_prepare (tensor.c) puts before the generated
 * methods of the schema. */
#include "pyops.h"
#include "ops_op_contiguous.h"
#include "ops_op_cpu.h"
#include "ops_op_to.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The int `dim` argument of fname() (x.size(dim), x.stride(dim)): 0 converted, -1 with
 * an exception naming the method, the argument and what was given. */
static int
dim_arg(PyObject *o, const char *fname, int64_t *out)
{
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyObject *ix = PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o) ? NULL : PyNumber_Index(o);
        if (ix == NULL) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' (position 1) must be int, not %s", fname,
                         Py_TYPE(o)->tp_name);
            return -1;
        }
        Py_DECREF(ix);
    }
    int overflow = 0;
    long long d = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
        PyErr_Format(PyExc_RuntimeError, "%s(): argument 'dim' (position 1): %S does not fit in int64", fname, o);
        return -1;
    }
    if (d == -1 && PyErr_Occurred())
        return -1;
    *out = d;
    return 0;
}

static PyObject *
m_size(PyObject *self, PyObject *args)
{
    PyObject *dim = Py_None;
    if (!PyArg_ParseTuple(args, "|O:size", &dim))
        return NULL;
    ops_tensor *t = PYOPS_T(self);
    if (dim == Py_None)
        return pyops_int_tuple(ops_tensor_ndim(t), ops_tensor_sizes(t));
    int64_t d;
    if (dim_arg(dim, "size", &d) < 0)
        return NULL;
    if (!ops_wrap_dim("size", "dim", &d, ops_tensor_ndim(t)))
        return pyops_raise();
    return PyLong_FromLongLong(ops_tensor_sizes(t)[d]);
}

static PyObject *
m_stride(PyObject *self, PyObject *args)
{
    PyObject *dim = Py_None;
    if (!PyArg_ParseTuple(args, "|O:stride", &dim))
        return NULL;
    ops_tensor *t = PYOPS_T(self);
    if (dim == Py_None)
        return pyops_int_tuple(ops_tensor_ndim(t), ops_tensor_strides(t));
    int64_t d;
    if (dim_arg(dim, "stride", &d) < 0)
        return NULL;
    if (!ops_wrap_dim("stride", "dim", &d, ops_tensor_ndim(t)))
        return pyops_raise();
    return PyLong_FromLongLong(ops_tensor_strides(t)[d]);
}

static PyObject *
m_dim(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(ops_tensor_ndim(PYOPS_T(self)));
}

static PyObject *
m_numel(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(ops_tensor_numel(PYOPS_T(self)));
}

static PyObject *
m_storage_offset(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(ops_tensor_storage_offset(PYOPS_T(self)));
}

/* is_contiguous(memory_format=contiguous_format): torch takes only a memory_format
 * object (keyword or positional), answering channels_last's question for channels_last. */
static PyObject *
m_is_contiguous(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"memory_format", NULL};
    PyObject *fmt = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:is_contiguous", kw, &fmt))
        return NULL;
    ops_memory_format f = OPS_CONTIGUOUS_FORMAT;
    if (fmt != NULL && (f = pyops_memory_format_from_object(fmt)) == OPS_MEMORY_FORMAT_NONE) {
        PyErr_Format(PyExc_TypeError, "is_contiguous(): argument 'memory_format' must be libops.memory_format, not %s",
                     Py_TYPE(fmt)->tp_name);
        return NULL;
    }
    return PyBool_FromLong(ops_tensor_is_contiguous_as(PYOPS_T(self), f));
}

static PyObject *
m_element_size(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromSize_t(ops_tensor_itemsize(PYOPS_T(self)));
}

static PyObject *
m_data_ptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromVoidPtr(ops_tensor_data_ptr(PYOPS_T(self)));
}

static PyObject *
m_is_floating_point(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(ops_dtype_is_floating(ops_tensor_dtype(PYOPS_T(self))));
}

static PyObject *
m_item(PyObject *self, PyObject *unused)
{
    (void)unused;
    ops_scalar s;
    ops_status st = ops_tensor_item(PYOPS_T(self), &s);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    return pyops_scalar_to_object(s);
}

/* tolist: nested lists of Python numbers, read from a contiguous copy */
static PyObject *
tolist_rec(const ops_tensor *t, int d, const char **p, ops_dtype dt, size_t isz)
{
    if (d == ops_tensor_ndim(t)) {
        ops_scalar s = ops_scalar_load(*p, dt);
        *p += isz;
        return pyops_scalar_to_object(s);
    }
    int64_t n = ops_tensor_sizes(t)[d];
    PyObject *l = PyList_New(n);
    if (l == NULL)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        PyObject *x = tolist_rec(t, d + 1, p, dt, isz);
        if (x == NULL) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *
m_tolist(PyObject *self, PyObject *unused)
{
    (void)unused;
    /* a contiguous host copy (a device tensor is copied to the cpu first) */
    ops_tensor *h = ops_cpu(PYOPS_T(self));
    ops_tensor *c = h != NULL ? ops_contiguous(h, OPS_CONTIGUOUS_FORMAT) : NULL;
    ops_tensor_release(h);
    if (c == NULL)
        return pyops_raise();
    const char *p = ops_tensor_data_ptr(c);
    PyObject *r = tolist_rec(c, 0, &p, ops_tensor_dtype(c), ops_tensor_itemsize(c));
    ops_tensor_release(c);
    return r;
}

static PyObject *
m_backward(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"gradient", "retain_graph", "create_graph", NULL};
    PyObject *grad = Py_None, *retain = Py_None;
    int create = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOp:backward", kw, &grad, &retain, &create))
        return NULL;
    if (grad != Py_None && !PYOPS_TENSOR_CHECK(grad)) {
        PyErr_Format(PyExc_TypeError, "backward(): argument 'gradient' must be Tensor, not %s",
                     Py_TYPE(grad)->tp_name);
        return NULL;
    }
    int retain_graph = retain == Py_None ? create : PyObject_IsTrue(retain);
    if (retain_graph < 0)
        return NULL;
    ops_status st = ops_backward(PYOPS_T(self), grad == Py_None ? NULL : PYOPS_T(grad), retain_graph, create);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *
m_detach(PyObject *self, PyObject *unused)
{
    (void)unused;
    return pyops_wrap(ops_tensor_detach(PYOPS_T(self)));
}

static PyObject *
m_detach_(PyObject *self, PyObject *unused)
{
    (void)unused;
    ops_status st = ops_tensor_detach_(PYOPS_T(self));
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_INCREF(self);
    return self;
}

static PyObject *
m_requires_grad_(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"requires_grad", NULL};
    int rg = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:requires_grad_", kw, &rg))
        return NULL;
    ops_status st = ops_tensor_set_requires_grad(PYOPS_T(self), rg);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_INCREF(self);
    return self;
}

static PyObject *
m_retain_grad(PyObject *self, PyObject *unused)
{
    (void)unused;
    ops_status st = ops_tensor_retain_grad(PYOPS_T(self));
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

/* The result of a conversion that may return self (to, cpu, cuda): the same Python
 * object then, as torch's `x.to(x.device) is x`. */
static PyObject *
wrap_maybe_self(PyObject *self, ops_tensor *r)
{
    if (r != NULL && r == PYOPS_T(self)) {
        ops_tensor_release(r);
        Py_INCREF(self);
        return self;
    }
    return pyops_wrap(r);
}

/* One bool argument of to(): torch takes only a bool there (an int 1 is refused, as a
 * misplaced positional would otherwise pass silently). */
static int
to_bool_arg(PyObject *v, const char *name, Py_ssize_t pos, int *out)
{
    if (v == NULL)
        return 0;
    if (!PyBool_Check(v)) {
        if (pos > 0)
            PyErr_Format(PyExc_TypeError, "to(): argument '%s' (position %zd) must be bool, not %s", name, pos,
                         Py_TYPE(v)->tp_name);
        else
            PyErr_Format(PyExc_TypeError, "to(): argument '%s' must be bool, not %s", name, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = v == Py_True;
    return 0;
}

/* x.to(...) as torch's three overloads, each with a keyword-only memory_format=None:
 *   to(dtype, non_blocking=False, copy=False, *, memory_format=None)
 *   to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None)
 *   to(other, non_blocking=False, copy=False, *, memory_format=None)
 * The first positional (a dtype, a Tensor, anything else), or without one the keyword
 * 'other', picks the overload; positionals then take that overload's names in order and
 * keywords fill the rest, so x.to(float64, False, True) means copy=True as in torch. All
 * end in to.device (self itself when nothing changes, unless copy=True). */
static PyObject *
m_to(PyObject *self, PyObject *args, PyObject *kwargs)
{
    enum { TO_DTYPE, TO_DEVICE, TO_OTHER };
    static const char *const names[3][5] = {
        {"dtype", "non_blocking", "copy", NULL},
        {"device", "dtype", "non_blocking", "copy", NULL},
        {"other", "non_blocking", "copy", NULL},
    };
    const Py_ssize_t npos = PyTuple_GET_SIZE(args);
    PyObject *first = npos > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
    int which = TO_DEVICE;
    if (first != NULL && pyops_dtype_from_object(first) != OPS_DTYPE_NONE)
        which = TO_DTYPE;
    else if (first != NULL ? PYOPS_TENSOR_CHECK(first)
                           : kwargs != NULL && PyDict_GetItemString(kwargs, "other") != NULL)
        which = TO_OTHER;
    const char *const *nm = names[which];
    int nnames = 0;
    while (nm[nnames] != NULL)
        nnames++;
    if (npos > nnames) {
        PyErr_Format(PyExc_TypeError, "to() takes at most %d positional arguments after a %s (%zd given)", nnames,
                     which == TO_DTYPE ? "dtype" : which == TO_OTHER ? "Tensor" : "device", npos);
        return NULL;
    }
    PyObject *val[4] = {NULL, NULL, NULL, NULL};
    PyObject *fmt = NULL; /* memory_format=, keyword only */
    Py_ssize_t posof[4] = {0, 0, 0, 0}; /* 1-based position, 0 for a keyword */
    for (Py_ssize_t i = 0; i < npos; i++) {
        val[i] = PyTuple_GET_ITEM(args, i);
        posof[i] = i + 1;
    }
    if (kwargs != NULL) {
        PyObject *key, *v;
        Py_ssize_t it = 0;
        while (PyDict_Next(kwargs, &it, &key, &v)) {
            const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            if (k == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "to(): keywords must be strings");
                return NULL;
            }
            if (strcmp(k, "memory_format") == 0) {
                fmt = v;
                continue;
            }
            int slot = -1;
            for (int j = 0; j < nnames; j++)
                if (strcmp(k, nm[j]) == 0)
                    slot = j;
            if (slot < 0) {
                PyErr_Format(PyExc_TypeError, "to(): got an unexpected keyword argument '%s'%s", k,
                             which == TO_DEVICE ? "" : " after a dtype or Tensor first argument");
                return NULL;
            }
            if (val[slot] != NULL) {
                PyErr_Format(PyExc_TypeError, "to(): got multiple values for argument '%s'", k);
                return NULL;
            }
            val[slot] = v;
        }
    }
    ops_tensor *t = PYOPS_T(self);
    ops_dtype target = ops_tensor_dtype(t);
    ops_device dev = ops_tensor_device(t);
    PyObject *dt = NULL;
    int non_blocking = 0, copy = 0;
    const int flags = which == TO_DEVICE ? 2 : 1; /* index of non_blocking */
    if (to_bool_arg(val[flags], "non_blocking", posof[flags], &non_blocking) < 0 ||
        to_bool_arg(val[flags + 1], "copy", posof[flags + 1], &copy) < 0)
        return NULL;
    if (which == TO_DTYPE) {
        dt = val[0];
    } else if (which == TO_OTHER) {
        if (!PYOPS_TENSOR_CHECK(val[0])) {
            PyErr_Format(PyExc_TypeError, "to(): argument 'other' must be Tensor, not %s", Py_TYPE(val[0])->tp_name);
            return NULL;
        }
        target = ops_tensor_dtype(PYOPS_T(val[0]));
        dev = ops_tensor_device(PYOPS_T(val[0]));
    } else {
        dt = val[1];
        PyObject *d = val[0];
        if (d != NULL && d != Py_None) {
            if (posof[0] == 0) {
                if (pyops_device_arg(d, "to", NULL, &dev) < 0)
                    return NULL;
            } else {
                char why[160];
                int rc = pyops_device_convert(d, &dev, why, sizeof why);
                if (rc < 0) {
                    PyErr_Format(PyExc_RuntimeError, "to(): %s", why);
                    return NULL;
                }
                if (rc == 0) {
                    PyErr_Format(PyExc_TypeError,
                                 "to(): argument 'dtype_or_device' (position 1) must be dtype, device, str or "
                                 "Tensor, not %s",
                                 Py_TYPE(d)->tp_name);
                    return NULL;
                }
            }
        }
    }
    if (dt != NULL && dt != Py_None) {
        target = pyops_dtype_from_object(dt);
        if (target == OPS_DTYPE_NONE) {
            if (posof[which == TO_DTYPE ? 0 : 1] > 0)
                PyErr_Format(PyExc_TypeError, "to(): argument 'dtype' (position %zd) must be dtype, not %s",
                             posof[which == TO_DTYPE ? 0 : 1], Py_TYPE(dt)->tp_name);
            else
                PyErr_Format(PyExc_TypeError, "to(): argument 'dtype' must be dtype, not %s", Py_TYPE(dt)->tp_name);
            return NULL;
        }
    }
    ops_memory_format mf = OPS_MEMORY_FORMAT_NONE;
    if (fmt != NULL && fmt != Py_None && (mf = pyops_memory_format_from_object(fmt)) == OPS_MEMORY_FORMAT_NONE) {
        PyErr_Format(PyExc_TypeError, "to(): argument 'memory_format' must be libops.memory_format, not %s",
                     Py_TYPE(fmt)->tp_name);
        return NULL;
    }
    return wrap_maybe_self(self, ops_to_device(t, dev, target, non_blocking, copy, mf));
}

/* The keyword-only memory_format= of the conversion shorthands (float(), cpu(),
 * cuda(), ...): None when absent; -1 with a TypeError naming the method otherwise. */
static int
memory_format_kw(PyObject *fmt, const char *fname, ops_memory_format *out)
{
    *out = OPS_MEMORY_FORMAT_NONE;
    if (fmt == NULL || fmt == Py_None)
        return 0;
    if ((*out = pyops_memory_format_from_object(fmt)) == OPS_MEMORY_FORMAT_NONE) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'memory_format' must be libops.memory_format, not %s", fname,
                     Py_TYPE(fmt)->tp_name);
        return -1;
    }
    return 0;
}

/* x.float(memory_format=preserve_format) and its siblings: to(dtype, memory_format=). */
static PyObject *
to_dtype_method(PyObject *self, PyObject *args, PyObject *kwargs, const char *fname, ops_dtype dt)
{
    static char *kw[] = {"memory_format", NULL};
    char format[32];
    snprintf(format, sizeof format, "|$O:%s", fname);
    PyObject *fmt = NULL;
    ops_memory_format mf;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kw, &fmt) || memory_format_kw(fmt, fname, &mf) < 0)
        return NULL;
    return pyops_wrap(ops_to_dtype(PYOPS_T(self), dt, false, false, mf));
}

#define PYOPS_TO_DTYPE_METHOD(fn, name, dt)                                                    \
    static PyObject *fn(PyObject *self, PyObject *args, PyObject *kwargs)                      \
    {                                                                                          \
        return to_dtype_method(self, args, kwargs, name, dt);                                  \
    }
PYOPS_TO_DTYPE_METHOD(m_float, "float", OPS_FLOAT32)
PYOPS_TO_DTYPE_METHOD(m_double, "double", OPS_FLOAT64)
PYOPS_TO_DTYPE_METHOD(m_half, "half", OPS_FLOAT16)
PYOPS_TO_DTYPE_METHOD(m_long, "long", OPS_INT64)
PYOPS_TO_DTYPE_METHOD(m_int, "int", OPS_INT32)
PYOPS_TO_DTYPE_METHOD(m_bool, "bool", OPS_BOOL)
#undef PYOPS_TO_DTYPE_METHOD

static PyObject *
m_cpu(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"memory_format", NULL};
    PyObject *fmt = NULL;
    ops_memory_format mf;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:cpu", kw, &fmt) || memory_format_kw(fmt, "cpu", &mf) < 0)
        return NULL;
    if (mf == OPS_MEMORY_FORMAT_NONE)
        return wrap_maybe_self(self, ops_cpu(PYOPS_T(self)));
    return wrap_maybe_self(self, ops_to_device(PYOPS_T(self), OPS_DEVICE_CPU, OPS_DTYPE_NONE, false, false, mf));
}

static PyObject *
m_pin_memory(PyObject *self, PyObject *unused)
{
    (void)unused;
    return wrap_maybe_self(self, ops_tensor_pin_memory(PYOPS_T(self)));
}

static PyObject *
m_is_pinned(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(ops_tensor_is_pinned(PYOPS_T(self)));
}

/* x.cuda(device=None, non_blocking=False): device None is cuda:0 (the one current
 * device libops has), an int N is cuda:N. */
static PyObject *
m_cuda(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"device", "non_blocking", "memory_format", NULL};
    PyObject *devarg = Py_None, *fmt = NULL;
    int non_blocking = 0;
    ops_memory_format mf;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op$O:cuda", kw, &devarg, &non_blocking, &fmt) ||
        memory_format_kw(fmt, "cuda", &mf) < 0)
        return NULL;
    ops_device dev = OPS_DEVICE_CUDA(0);
    if (PyLong_Check(devarg)) {
        int overflow = 0;
        const long long n = PyLong_AsLongLongAndOverflow(devarg, &overflow);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        if (overflow || n < 0 || n > INT_MAX) {
            /* (int)n would wrap to another device */
            PyErr_Format(PyExc_RuntimeError, "cuda(): argument 'device': invalid device index %S (expected 0 <= index "
                         "<= %d)", devarg, INT_MAX);
            return NULL;
        }
        dev = OPS_DEVICE_CUDA((int)n);
    } else if (devarg != Py_None && pyops_device_arg(devarg, "cuda", ", int", &dev) < 0) {
        return NULL;
    }
    if (dev.type != OPS_CUDA) {
        char buf[32];
        PyErr_Format(PyExc_RuntimeError, "Invalid device, must be cuda device (got %s)",
                     ops_device_str(dev, buf, sizeof buf));
        return NULL;
    }
    return wrap_maybe_self(self, ops_to_device(PYOPS_T(self), dev, OPS_DTYPE_NONE, non_blocking, false, mf));
}

/* x.type(dtype=None, non_blocking=False) as torch's: non_blocking is the second
 * positional (a copy to another dtype is synchronous either way). */
static PyObject *
m_type(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"dtype", "non_blocking", NULL};
    PyObject *dt = Py_None, *nb = Py_False;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:type", kw, &dt, &nb))
        return NULL;
    if (!PyBool_Check(nb)) {
        PyErr_Format(PyExc_TypeError, "type(): argument 'non_blocking' must be bool, not %s", Py_TYPE(nb)->tp_name);
        return NULL;
    }
    if (dt == Py_None)
        return PyUnicode_FromFormat("libops.%s", ops_dtype_name(ops_tensor_dtype(PYOPS_T(self))));
    ops_dtype d = pyops_dtype_from_object(dt);
    if (d == OPS_DTYPE_NONE) {
        PyErr_Format(PyExc_TypeError, "type(): argument 'dtype' (position 1) must be dtype, not %s",
                     Py_TYPE(dt)->tp_name);
        return NULL;
    }
    return pyops_wrap(ops_to_dtype(PYOPS_T(self), d, false, false, OPS_MEMORY_FORMAT_NONE));
}

static PyObject *
m_new_tensor(PyObject *self, PyObject *args)
{
    PyObject *data;
    if (!PyArg_ParseTuple(args, "O:new_tensor", &data))
        return NULL;
    return pyops_tensor_new_from_data(data, ops_tensor_dtype(PYOPS_T(self)), false);
}

static PyObject *
m_array_wrap(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *arr;
    if (!PyArg_ParseTuple(args, "O|OO", &arr, &self, &self))
        return NULL;
    return pyops_from_numpy(NULL, arr);
}

PyMethodDef pyops_tensor_methods[] = {
    {"size", m_size, METH_VARARGS, "size(dim=None): the sizes, or one size"},
    {"stride", m_stride, METH_VARARGS, "stride(dim=None): the strides in elements, or one stride"},
    {"dim", m_dim, METH_NOARGS, "number of dimensions"},
    {"ndimension", m_dim, METH_NOARGS, "number of dimensions"},
    {"numel", m_numel, METH_NOARGS, "number of elements"},
    {"nelement", m_numel, METH_NOARGS, "number of elements"},
    {"storage_offset", m_storage_offset, METH_NOARGS, "offset in the storage, in elements"},
    {"is_contiguous", (PyCFunction)(void (*)(void))m_is_contiguous, METH_VARARGS | METH_KEYWORDS,
     "is_contiguous(memory_format=contiguous_format): strides are memory_format's (row-major by default)"},
    {"is_floating_point", m_is_floating_point, METH_NOARGS, "float16 .. float64"},
    {"element_size", m_element_size, METH_NOARGS, "bytes per element"},
    {"data_ptr", m_data_ptr, METH_NOARGS, "address of the first element"},
    {"item", m_item, METH_NOARGS, "the value of a one-element tensor"},
    {"tolist", m_tolist, METH_NOARGS, "nested lists of Python numbers"},
    {"numpy", pyops_tensor_numpy, METH_NOARGS, "a NumPy array sharing the memory (CPU)"},
    {"__array__", (PyCFunction)(void (*)(void))pyops_tensor_array, METH_VARARGS | METH_KEYWORDS,
     "NumPy conversion (zero-copy unless a dtype is asked)"},
    {"__array_wrap__", m_array_wrap, METH_VARARGS, "NumPy ufunc results come back as tensors"},
    {"__dlpack__", (PyCFunction)(void (*)(void))pyops_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None): a DLPack capsule sharing the memory"},
    {"__dlpack_device__", pyops_tensor_dlpack_device, METH_NOARGS, "(device_type, device_id) in DLPack's codes"},
    {"share_memory_", pyops_tensor_share_memory_, METH_NOARGS, "move the storage into shared memory; returns self"},
    /* pickling (python/src/serialize.c; the rules are in libops/serialization.py) */
    {"__reduce_ex__", pyops_tensor_reduce_ex, METH_O,
     "pickle: dtype, shape, the contiguous CPU values, requires_grad, device"},
    {"__copy__", pyops_tensor_copy, METH_NOARGS, "copy.copy: a new tensor sharing the storage, as torch"},
    {"__deepcopy__", pyops_tensor_deepcopy, METH_O, "copy.deepcopy: a leaf over a copy of the storage (and .grad)"},
    {"is_shared", pyops_tensor_is_shared, METH_NOARGS, "whether the storage is in shared memory"},
    {"shm_handle", pyops_tensor_shm_handle, METH_NOARGS,
     "a str that libops.from_shm_handle opens in another process (the tensor must be shared)"},
    {"backward", (PyCFunction)(void (*)(void))m_backward, METH_VARARGS | METH_KEYWORDS,
     "backward(gradient=None, retain_graph=None, create_graph=False)"},
    {"detach", m_detach, METH_NOARGS, "a view that does not require grad"},
    {"detach_", m_detach_, METH_NOARGS, "detach in place"},
    {"requires_grad_", (PyCFunction)(void (*)(void))m_requires_grad_, METH_VARARGS | METH_KEYWORDS,
     "requires_grad_(requires_grad=True)"},
    {"retain_grad", m_retain_grad, METH_NOARGS, "keep .grad on a non-leaf"},
    {"to", (PyCFunction)(void (*)(void))m_to, METH_VARARGS | METH_KEYWORDS,
     "to(dtype, non_blocking=False, copy=False, *, memory_format=None) | to(device=None, dtype=None, "
     "non_blocking=False, copy=False, *, memory_format=None) | to(other, non_blocking=False, copy=False, *, "
     "memory_format=None)"},
    {"float", (PyCFunction)(void (*)(void))m_float, METH_VARARGS | METH_KEYWORDS, "to float32 (memory_format=None)"},
    {"double", (PyCFunction)(void (*)(void))m_double, METH_VARARGS | METH_KEYWORDS, "to float64 (memory_format=None)"},
    {"half", (PyCFunction)(void (*)(void))m_half, METH_VARARGS | METH_KEYWORDS, "to float16 (memory_format=None)"},
    {"long", (PyCFunction)(void (*)(void))m_long, METH_VARARGS | METH_KEYWORDS, "to int64 (memory_format=None)"},
    {"int", (PyCFunction)(void (*)(void))m_int, METH_VARARGS | METH_KEYWORDS, "to int32 (memory_format=None)"},
    {"bool", (PyCFunction)(void (*)(void))m_bool, METH_VARARGS | METH_KEYWORDS, "to bool (memory_format=None)"},
    {"cpu", (PyCFunction)(void (*)(void))m_cpu, METH_VARARGS | METH_KEYWORDS, "the tensor on the CPU (memory_format=None)"},
    {"pin_memory", m_pin_memory, METH_NOARGS, "a copy in pinned host memory (itself when pinned already)"},
    {"is_pinned", m_is_pinned, METH_NOARGS, "whether the data is in pinned host memory"},
    {"cuda", (PyCFunction)(void (*)(void))m_cuda, METH_VARARGS | METH_KEYWORDS,
     "cuda(device=None, non_blocking=False, *, memory_format=None): the tensor on a CUDA device"},
    {"type", (PyCFunction)(void (*)(void))m_type, METH_VARARGS | METH_KEYWORDS,
     "type(dtype=None, non_blocking=False)"},
    {"new_tensor", m_new_tensor, METH_VARARGS, "libops.tensor(data) with this tensor's dtype"},
    {NULL, NULL, 0, NULL},
};

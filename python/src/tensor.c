/* libops.Tensor: the Python object around an ops_tensor.  Attributes (shape, dtype,
 * device, strides, autograd state), the hand-written methods (size, item, tolist,
 * backward, ...), the Python operators with PyTorch's scalar promotion (a Python
 * number becomes a wrapped-number tensor, which does not promote a tensor within its
 * category), __len__/iteration/__bool__, repr.  The generated methods of the schema
 * (python_bindings.c) are added to the type at module init. */
#include "pyops.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

PyObject *
pyops_wrap(ops_tensor *t)
{
    if (t == NULL)
        return pyops_raise();
    pyops_tensor *o = PyObject_New(pyops_tensor, &pyops_tensor_type);
    if (o == NULL) {
        ops_tensor_release(t);
        return NULL;
    }
    o->t = t;
    o->weakrefs = NULL;
    o->grad_cache = NULL;
    return (PyObject *)o;
}

static void
tensor_dealloc(PyObject *self)
{
    pyops_tensor *o = (pyops_tensor *)self;
    if (o->weakrefs != NULL)
        PyObject_ClearWeakRefs(self);
    Py_CLEAR(o->grad_cache);
    ops_tensor_release(o->t);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError, "libops.Tensor cannot be created directly: use libops.tensor(data) or a "
                                     "factory such as libops.zeros(size)");
    return NULL;
}

/* ---- attributes --------------------------------------------------------------- */

static PyObject *
int_tuple(int64_t n, const int64_t *v)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (x == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *
get_shape(PyObject *self, void *c)
{
    (void)c;
    ops_tensor *t = PYOPS_T(self);
    return int_tuple(ops_tensor_ndim(t), ops_tensor_sizes(t));
}

static PyObject *
get_dtype(PyObject *self, void *c)
{
    (void)c;
    PyObject *d = pyops_dtype_object(ops_tensor_dtype(PYOPS_T(self)));
    Py_XINCREF(d);
    return d;
}

static PyObject *
get_device(PyObject *self, void *c)
{
    (void)c;
    return pyops_device_object(ops_tensor_device(PYOPS_T(self)));
}

static PyObject *
get_ndim(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(ops_tensor_ndim(PYOPS_T(self)));
}

static PyObject *
get_requires_grad(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(ops_tensor_requires_grad(PYOPS_T(self)));
}

static int
set_requires_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (v == NULL || !PyBool_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
        return -1;
    }
    ops_status st = ops_tensor_set_requires_grad(PYOPS_T(self), v == Py_True);
    if (st != OPS_OK) {
        pyops_raise_status(st);
        return -1;
    }
    return 0;
}

/* .grad returns the same Python object while the C gradient is the same tensor, as
 * torch does (`x.grad is x.grad`; a gradient accumulated in place keeps its object).
 * The cached wrapper holds a reference to its tensor, so a new gradient can never
 * reuse the cached one's address while it is cached. */
static PyObject *
get_grad(PyObject *self, void *c)
{
    (void)c;
    pyops_tensor *o = (pyops_tensor *)self;
    ops_tensor *g = ops_tensor_grad(o->t); /* a new reference */
    if (g == NULL) {
        Py_CLEAR(o->grad_cache);
        Py_RETURN_NONE;
    }
    if (o->grad_cache != NULL && PYOPS_T(o->grad_cache) == g) {
        ops_tensor_release(g);
        Py_INCREF(o->grad_cache);
        return o->grad_cache;
    }
    PyObject *w = pyops_wrap(g);
    if (w == NULL)
        return NULL;
    Py_INCREF(w);
    Py_XSETREF(o->grad_cache, w);
    return w;
}

static int
set_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    const ops_tensor *g = NULL;
    if (v != NULL && v != Py_None) {
        if (!PYOPS_TENSOR_CHECK(v)) {
            PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got grad of type %s",
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        g = PYOPS_T(v);
    }
    ops_status st = ops_tensor_set_grad(PYOPS_T(self), g);
    if (st != OPS_OK) {
        pyops_raise_status(st);
        return -1;
    }
    /* `x.grad = g; x.grad is g` when the library keeps g's tensor itself */
    pyops_tensor *o = (pyops_tensor *)self;
    ops_tensor *kept = ops_tensor_grad(o->t); /* a new reference */
    if (g != NULL && kept == g) {
        Py_INCREF(v);
        Py_XSETREF(o->grad_cache, v);
    } else {
        Py_CLEAR(o->grad_cache);
    }
    ops_tensor_release(kept);
    return 0;
}

/* grad_fn: the node that produced a tensor.  The node is borrowed from the tensor, so
 * the object keeps the tensor alive. */
typedef struct pyops_node {
    PyObject_HEAD
    PyObject *owner;
    ops_node *node;
} pyops_node;

static void
node_dealloc(PyObject *self)
{
    Py_XDECREF(((pyops_node *)self)->owner);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
node_name(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyUnicode_FromString(ops_node_name(((pyops_node *)self)->node));
}

static PyObject *
node_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<%s object at %p>", ops_node_name(((pyops_node *)self)->node), self);
}

static PyObject *
node_next_functions(PyObject *self, void *c)
{
    (void)c;
    pyops_node *o = (pyops_node *)self;
    int n = ops_node_num_next(o->node);
    PyObject *tup = PyTuple_New(n);
    if (tup == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        int nr = 0;
        ops_node *next = ops_node_next(o->node, i, &nr);
        PyObject *item;
        if (next == NULL) {
            item = Py_BuildValue("(Oi)", Py_None, 0);
        } else {
            extern PyTypeObject pyops_node_type;
            pyops_node *no = PyObject_New(pyops_node, &pyops_node_type);
            if (no == NULL) {
                Py_DECREF(tup);
                return NULL;
            }
            /* the next node lives as long as this node, which the owner keeps */
            no->owner = o->owner;
            Py_INCREF(o->owner);
            no->node = next;
            item = Py_BuildValue("(Ni)", (PyObject *)no, nr);
        }
        if (item == NULL) {
            Py_DECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, item);
    }
    return tup;
}

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "The node's name, e.g. MulBackward0."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, NULL, "(node, input_nr) per input edge", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pyops_node_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "libops.Node",
    .tp_basicsize = sizeof(pyops_node),
    .tp_dealloc = node_dealloc,
    .tp_repr = node_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A backward node of the autograd graph (Tensor.grad_fn).",
    .tp_methods = node_methods,
    .tp_getset = node_getset,
};

static PyObject *
get_grad_fn(PyObject *self, void *c)
{
    (void)c;
    ops_node *n = ops_tensor_grad_fn(PYOPS_T(self));
    if (n == NULL)
        Py_RETURN_NONE;
    pyops_node *o = PyObject_New(pyops_node, &pyops_node_type);
    if (o == NULL)
        return NULL;
    o->owner = self;
    Py_INCREF(self);
    o->node = n;
    return (PyObject *)o;
}

static PyObject *
get_is_leaf(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(ops_tensor_is_leaf(PYOPS_T(self)));
}

static PyObject *
get_T(PyObject *self, void *c)
{
    (void)c;
    ops_tensor *t = PYOPS_T(self);
    int64_t n = ops_tensor_ndim(t);
    int64_t dims[OPS_MAX_DIMS];
    for (int64_t i = 0; i < n; i++)
        dims[i] = n - 1 - i;
    return pyops_wrap(ops_permute(t, (ops_int_list){dims, n}));
}

static PyObject *
get_data(PyObject *self, void *c)
{
    (void)c;
    return pyops_wrap(ops_tensor_detach(PYOPS_T(self)));
}

static PyObject *
get_is_cuda(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(ops_tensor_device(PYOPS_T(self)).type == OPS_CUDA);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "the sizes, as a tuple", NULL},
    {"dtype", get_dtype, NULL, "the element type", NULL},
    {"device", get_device, NULL, "where the data lives", NULL},
    {"ndim", get_ndim, NULL, "number of dimensions", NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, "whether autograd records ops on it", NULL},
    {"grad", get_grad, set_grad, "the accumulated gradient (leaves)", NULL},
    {"grad_fn", get_grad_fn, NULL, "the node that produced it, None for a leaf", NULL},
    {"is_leaf", get_is_leaf, NULL, "True for tensors not produced by a recorded op", NULL},
    {"T", get_T, NULL, "the dimensions reversed", NULL},
    {"data", get_data, NULL, "the tensor detached from autograd", NULL},
    {"is_cuda", get_is_cuda, NULL, "on a CUDA device", NULL},
    {"__array_interface__", pyops_tensor_array_interface, NULL, "NumPy's array interface (zero-copy)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- methods ---------------------------------------------------------------- */

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
        return int_tuple(ops_tensor_ndim(t), ops_tensor_sizes(t));
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
        return int_tuple(ops_tensor_ndim(t), ops_tensor_strides(t));
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

static PyMethodDef tensor_methods[] = {
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

/* ---- repr ---------------------------------------------------------------------- */

static PyObject *
tensor_repr(PyObject *self)
{
    ops_tensor *t = PYOPS_T(self);
    char *s = ops_tensor_to_string(t);
    if (s == NULL)
        return pyops_raise();
    /* The C printer always ends in ", dtype=D, shape=[...])"; torch names the dtype
     * only when it is not the one inferred from Python numbers (float32, int64, bool)
     * and never the shape, but shows the autograd state. */
    char *tail = strstr(s, ", dtype=");
    for (char *p = tail; p != NULL; p = strstr(p + 1, ", dtype="))
        tail = p;
    if (tail != NULL)
        *tail = '\0';
    ops_dtype dt = ops_tensor_dtype(t);
    char extra[96] = "";
    size_t k = 0;
    if (dt != OPS_FLOAT32 && dt != OPS_INT64 && dt != OPS_BOOL)
        k += (size_t)snprintf(extra + k, sizeof extra - k, ", dtype=libops.%s", ops_dtype_name(dt));
    if (ops_tensor_requires_grad(t) && k < sizeof extra) {
        ops_node *n = ops_tensor_grad_fn(t);
        if (n != NULL)
            snprintf(extra + k, sizeof extra - k, ", grad_fn=<%s>", ops_node_name(n));
        else
            snprintf(extra + k, sizeof extra - k, ", requires_grad=True");
    }
    PyObject *r = PyUnicode_FromFormat("%s%s%s", s, extra, tail != NULL ? ")" : "");
    free(s);
    return r;
}

/* ---- operators ------------------------------------------------------------------ */

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

static Py_hash_t
tensor_hash(PyObject *self)
{
    /* by identity, as torch does */
    return _Py_HashPointer(self);
}

/* ---- sequence protocol: len() and iteration ---------------------------------------- */

static Py_ssize_t
sq_length(PyObject *self)
{
    ops_tensor *t = PYOPS_T(self);
    if (ops_tensor_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)ops_tensor_sizes(t)[0];
}

static PyObject *
sq_item(PyObject *self, Py_ssize_t i)
{
    ops_tensor *t = PYOPS_T(self);
    if (ops_tensor_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    if (i >= ops_tensor_sizes(t)[0]) {
        PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for dimension 0 with size %lld", i,
                     (long long)ops_tensor_sizes(t)[0]);
        return NULL;
    }
    return pyops_wrap(ops_select(t, 0, i));
}

static PyObject *
tensor_iter(PyObject *self)
{
    if (ops_tensor_ndim(PYOPS_T(self)) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    return PySeqIter_New(self);
}

PySequenceMethods pyops_tensor_as_sequence = {
    .sq_length = sq_length,
    .sq_item = sq_item,
};

PyMappingMethods pyops_tensor_as_mapping = {
    .mp_length = sq_length,
    .mp_subscript = pyops_tensor_getitem,
    .mp_ass_subscript = pyops_tensor_setitem,
};

PyTypeObject pyops_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "libops.Tensor",
    .tp_basicsize = sizeof(pyops_tensor),
    .tp_dealloc = tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_as_number = &pyops_tensor_as_number,
    .tp_as_sequence = &pyops_tensor_as_sequence,
    .tp_as_mapping = &pyops_tensor_as_mapping,
    .tp_hash = tensor_hash,
    .tp_as_buffer = &pyops_tensor_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A strided view of typed data on a device (libops.tensor, libops.zeros, ...).",
    .tp_richcompare = pyops_tensor_richcompare,
    .tp_weaklistoffset = offsetof(pyops_tensor, weakrefs),
    .tp_iter = tensor_iter,
    .tp_getset = tensor_getset,
    .tp_new = tensor_new,
};

/* The type's methods: the hand-written ones first (they win over a generated method
 * of the same name), then every generated one.  Called once before PyType_Ready. */
int
pyops_tensor_type_prepare(void)
{
    size_t nh = sizeof tensor_methods / sizeof tensor_methods[0] - 1, ng = 0;
    while (pyops_generated_methods[ng].ml_name != NULL)
        ng++;
    PyMethodDef *all = PyMem_Calloc(nh + ng + 1, sizeof *all);
    if (all == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < nh; i++)
        all[k++] = tensor_methods[i];
    for (size_t i = 0; i < ng; i++) {
        bool dup = false;
        for (size_t j = 0; j < nh && !dup; j++)
            dup = strcmp(tensor_methods[j].ml_name, pyops_generated_methods[i].ml_name) == 0;
        if (!dup)
            all[k++] = pyops_generated_methods[i];
    }
    /* lives as long as the type (the process) */
    pyops_tensor_type.tp_methods = all;
    if (PyType_Ready(&pyops_node_type) < 0)
        return -1;
    return 0;
}

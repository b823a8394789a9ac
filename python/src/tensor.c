/* libops.Tensor: the Python object around an ops_tensor, its type and attributes
 * (shape, dtype, device, strides, autograd state and the grad_fn node object),
 * __len__/iteration, repr and hashing.  Its hand-written methods (size, item, tolist,
 * backward, to, ...) are in tensor_methods.c, the Python operators in
 * tensor_operators.c, indexing in indexing.c; the generated methods of the schema
 * (python_bindings.c) are added to the type at module init. */
#include "pyops.h"
#include "ops_op_permute.h"
#include "ops_op_select.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

PyObject *
pyops_wrap(ops_tensor *t)
{
    return pyops_wrap_as(&pyops_tensor_type, t);
}

PyObject *
pyops_wrap_as(PyTypeObject *type, ops_tensor *t)
{
    if (t == NULL)
        return pyops_raise();
    /* a subclass (nn.Parameter) through its tp_alloc (its dict, GC); Tensor itself by
     * PyObject_New, the cheaper path every op result takes */
    pyops_tensor *o = type == &pyops_tensor_type ? PyObject_New(pyops_tensor, &pyops_tensor_type)
                                                 : (pyops_tensor *)type->tp_alloc(type, 0);
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

PyObject *
pyops_int_tuple(int64_t n, const int64_t *v)
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
    return pyops_int_tuple(ops_tensor_ndim(t), ops_tensor_sizes(t));
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
    /* BASETYPE for nn.Parameter (made by _make_subclass; ops return plain Tensors). */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
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
    size_t nh = 0, ng = 0;
    while (pyops_tensor_methods[nh].ml_name != NULL)
        nh++;
    while (pyops_generated_methods[ng].ml_name != NULL)
        ng++;
    PyMethodDef *all = PyMem_Calloc(nh + ng + 1, sizeof *all);
    if (all == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < nh; i++)
        all[k++] = pyops_tensor_methods[i];
    for (size_t i = 0; i < ng; i++) {
        bool dup = false;
        for (size_t j = 0; j < nh && !dup; j++)
            dup = strcmp(pyops_tensor_methods[j].ml_name, pyops_generated_methods[i].ml_name) == 0;
        if (!dup)
            all[k++] = pyops_generated_methods[i];
    }
    /* lives as long as the type (the process) */
    pyops_tensor_type.tp_methods = all;
    if (PyType_Ready(&pyops_node_type) < 0)
        return -1;
    return 0;
}

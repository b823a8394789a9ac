/* libops._C: module init, the dtype objects, errors, libops.tensor(data) with torch's
 * dtype inference, grad mode and libops.autograd.grad.  The Python package
 * (python/libops/__init__.py) re-exports all of it and adds no_grad and device. */
#include "pyops.h"
#include "ops_op_contiguous.h"
#include "ops_op_empty.h"
#include "ops_op_to.h"

#include <limits.h>
#include <string.h>

int pyops_tensor_type_prepare(void);

/* ---- errors ------------------------------------------------------------------- */

PyObject *
pyops_raise_status(ops_status st)
{
    if (pyops_hook_exception_restore())
        return NULL;
    const char *msg = ops_last_error();
    if (msg == NULL || msg[0] == '\0')
        msg = ops_status_str(st);
    PyObject *exc = PyExc_RuntimeError;
    switch (st) {
    case OPS_ERR_INDEX:
        exc = PyExc_IndexError;
        break;
    case OPS_ERR_NOT_IMPLEMENTED:
        exc = PyExc_NotImplementedError;
        break;
    default:
        break;
    }
    PyErr_SetString(exc, msg);
    ops_clear_error();
    return NULL;
}

PyObject *
pyops_raise(void)
{
    if (PyErr_Occurred())
        return NULL;
    ops_status st = ops_last_status();
    return pyops_raise_status(st == OPS_OK ? OPS_ERR_RUNTIME : st);
}

/* ---- dtypes ------------------------------------------------------------------- */

static pyops_dtype dtype_objects[OPS_NUM_DTYPES];

static PyObject *
dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("libops.%s", ops_dtype_name(((pyops_dtype *)self)->dtype));
}

static PyObject *
dtype_itemsize(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(ops_dtype_size(((pyops_dtype *)self)->dtype));
}

static PyObject *
dtype_is_floating(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(ops_dtype_is_floating(((pyops_dtype *)self)->dtype));
}

static PyObject *
dtype_is_signed(PyObject *self, void *c)
{
    (void)c;
    ops_dtype d = ((pyops_dtype *)self)->dtype;
    return PyBool_FromLong(d != OPS_BOOL && d != OPS_UINT8);
}

static PyObject *
dtype_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyUnicode_FromString(ops_dtype_name(((pyops_dtype *)self)->dtype));
}

static PyGetSetDef dtype_getset[] = {
    {"itemsize", dtype_itemsize, NULL, "bytes per element", NULL},
    {"is_floating_point", dtype_is_floating, NULL, "float16 .. float64", NULL},
    {"is_signed", dtype_is_signed, NULL, "has negative values", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, "pickled as the module attribute"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyops_dtype_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "libops.dtype",
    .tp_basicsize = sizeof(pyops_dtype),
    .tp_repr = dtype_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An element type: libops.float32, libops.int64, ...",
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
};

PyObject *
pyops_dtype_object(ops_dtype dt)
{
    if (dt < 0 || dt >= OPS_NUM_DTYPES) {
        PyErr_SetString(PyExc_RuntimeError, "invalid dtype");
        return NULL;
    }
    return (PyObject *)&dtype_objects[dt];
}

ops_dtype
pyops_dtype_from_object(PyObject *o)
{
    if (Py_TYPE(o) == &pyops_dtype_type)
        return ((pyops_dtype *)o)->dtype;
    /* torch accepts Python's types: float is float64, int is int64 */
    if (o == (PyObject *)&PyFloat_Type)
        return OPS_FLOAT64;
    if (o == (PyObject *)&PyLong_Type)
        return OPS_INT64;
    if (o == (PyObject *)&PyBool_Type)
        return OPS_BOOL;
    return OPS_DTYPE_NONE;
}

/* ---- memory formats: libops.contiguous_format, channels_last, ... ---- */

static pyops_memory_format memory_format_objects[OPS_NUM_MEMORY_FORMATS];

static PyObject *
memory_format_repr(PyObject *self)
{
    return PyUnicode_FromFormat("libops.%s", ops_memory_format_name(((pyops_memory_format *)self)->format));
}

static PyObject *
memory_format_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyUnicode_FromString(ops_memory_format_name(((pyops_memory_format *)self)->format));
}

static PyMethodDef memory_format_methods[] = {
    {"__reduce__", memory_format_reduce, METH_NOARGS, "pickled as the module attribute"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyops_memory_format_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "libops.memory_format",
    .tp_basicsize = sizeof(pyops_memory_format),
    .tp_repr = memory_format_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A memory layout for new tensors: libops.contiguous_format, channels_last, channels_last_3d, "
              "preserve_format",
    .tp_methods = memory_format_methods,
};

ops_memory_format
pyops_memory_format_from_object(PyObject *o)
{
    if (Py_TYPE(o) == &pyops_memory_format_type)
        return ((pyops_memory_format *)o)->format;
    return OPS_MEMORY_FORMAT_NONE;
}

/* ---- devices: libops.device is a small Python class (python/libops/__init__.py) ---- */

static PyObject *device_class;

PyObject *
pyops_device_object(ops_device dev)
{
    char buf[32];
    ops_device_str(dev, buf, sizeof buf);
    if (device_class == NULL)
        return PyUnicode_FromString(buf);
    return PyObject_CallFunction(device_class, "s", buf);
}

int
pyops_device_convert(PyObject *o, ops_device *out, char *why, size_t n)
{
    PyObject *s = NULL;
    if (PyUnicode_Check(o)) {
        s = o;
        Py_INCREF(s);
    } else if (device_class != NULL && PyObject_TypeCheck(o, (PyTypeObject *)device_class)) {
        s = PyObject_Str(o);
    } else {
        return 0;
    }
    const char *text = s != NULL ? PyUnicode_AsUTF8(s) : NULL;
    if (text == NULL) {
        PyErr_Clear();
        Py_XDECREF(s);
        if (why != NULL && n > 0)
            snprintf(why, n, "invalid device: the string cannot be encoded as UTF-8");
        return -1;
    }
    int rc = 1;
    if (ops_device_parse(text, out) != OPS_OK) {
        /* the libops message is consumed here: the caller raises its own */
        ops_clear_error();
        if (why != NULL && n > 0)
            snprintf(why, n, "invalid device '%.64s%s': expected 'cpu' or 'cuda[:N]'", text,
                     strlen(text) > 64 ? "..." : "");
        rc = -1;
    }
    Py_DECREF(s);
    return rc;
}

bool
pyops_device_from_object(PyObject *o, ops_device *out)
{
    return pyops_device_convert(o, out, NULL, 0) == 1;
}

int
pyops_device_arg(PyObject *o, const char *fname, const char *also, ops_device *out)
{
    char why[160];
    int rc = pyops_device_convert(o, out, why, sizeof why);
    if (rc < 0)
        PyErr_Format(PyExc_RuntimeError, "%s(): %s", fname, why);
    else if (rc == 0)
        PyErr_Format(PyExc_TypeError, "%s(): argument 'device' must be device%s or str, not %s", fname,
                     also != NULL ? also : "", Py_TYPE(o)->tp_name);
    return rc == 1 ? 0 : -1;
}

static PyObject *
set_device_class(PyObject *mod, PyObject *cls)
{
    (void)mod;
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "expected a class");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(device_class, cls);
    Py_RETURN_NONE;
}

/* ---- libops.tensor(data) ---------------------------------------------------------- */

/* What nested data holds: the shape, and the widest category seen (bool < int <
 * float), as torch infers it. */
typedef struct infer {
    int ndim;
    int64_t sizes[OPS_MAX_DIMS];
    int kind; /* 0 bool, 1 int, 2 float; -1 nothing seen */
    ops_dtype tensor_dtype; /* the promoted dtype of Tensor/array leaves, or NONE */
} infer;

static int
scan(PyObject *o, int depth, infer *inf)
{
    if (PYOPS_TENSOR_CHECK(o)) {
        ops_tensor *t = PYOPS_T(o);
        int64_t nd = ops_tensor_ndim(t);
        if (depth + nd > OPS_MAX_DIMS) {
            PyErr_SetString(PyExc_ValueError, "tensor: too many dimensions");
            return -1;
        }
        if (inf->ndim < 0) {
            inf->ndim = depth + (int)nd;
            for (int64_t i = 0; i < nd; i++)
                inf->sizes[depth + i] = ops_tensor_sizes(t)[i];
        }
        ops_dtype dt = ops_tensor_dtype(t);
        inf->tensor_dtype = inf->tensor_dtype == OPS_DTYPE_NONE ? dt : ops_promote_types(inf->tensor_dtype, dt);
        return 0;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {
        if (depth >= OPS_MAX_DIMS) {
            PyErr_SetString(PyExc_ValueError, "tensor: too many dimensions");
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (inf->ndim < 0 && n == 0) {
            inf->ndim = depth + 1;
            inf->sizes[depth] = 0;
            return 0;
        }
        if (inf->ndim >= 0 && (depth >= inf->ndim || inf->sizes[depth] != n)) {
            PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)",
                         (long long)(depth < inf->ndim ? inf->sizes[depth] : 0), depth, n);
            return -1;
        }
        if (inf->ndim < 0)
            inf->sizes[depth] = n;
        /* the list is re-read at every step and each element held while it is read:
         * an element's __float__ may change the list (fill refuses the result) */
        for (Py_ssize_t i = 0; i < n && i < PySequence_Fast_GET_SIZE(o); i++) {
            if (inf->ndim < 0 && i > 0) {
                PyErr_SetString(PyExc_ValueError, "tensor: ragged nested sequence");
                return -1;
            }
            PyObject *item = PySequence_Fast_ITEMS(o)[i];
            Py_INCREF(item);
            int rc = scan(item, depth + 1, inf);
            Py_DECREF(item);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    if (PyObject_CheckBuffer(o) && !PyBytes_Check(o)) {
        /* a NumPy array inside the data: scanned through a zero-copy tensor */
        PyObject *t = pyops_from_numpy(NULL, o);
        if (t == NULL)
            return -1;
        int rc = scan(t, depth, inf);
        Py_DECREF(t);
        return rc;
    }
    if (PyLong_Check(o) && !PyBool_Check(o)) {
        /* as torch: an int that int64 cannot hold is an error, not a float */
        int overflow = 0;
        (void)PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            PyErr_Format(PyExc_RuntimeError, "tensor(): the integer %R in the data does not fit in int64", o);
            return -1;
        }
    }
    ops_scalar s;
    if (!pyops_scalar_from_object(o, &s)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (inf->ndim < 0)
        inf->ndim = depth;
    else if (inf->ndim != depth) {
        PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got a number)",
                     (long long)inf->sizes[depth], depth);
        return -1;
    }
    int k = s.kind == OPS_SCALAR_BOOL ? 0 : s.kind == OPS_SCALAR_INT ? 1 : 2;
    if (k > inf->kind)
        inf->kind = k;
    return 0;
}

/* The data changed between scan and fill (a __float__ or __index__ of an element can
 * run Python code that grows or shrinks a list, or a tensor in it): refused, never
 * written past the buffer sized by scan. */
static int
data_changed(void)
{
    PyErr_SetString(PyExc_RuntimeError, "tensor(): the data changed while it was being read "
                                        "(an element's __float__/__index__ modified a list or tensor in it)");
    return -1;
}

/* Fill dst (contiguous, dtype dt, cap elements) from the data; pos counts elements
 * written. */
static int
fill(PyObject *o, char *dst, ops_dtype dt, size_t isz, int64_t *pos, int64_t cap)
{
    if (PYOPS_TENSOR_CHECK(o) || (PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyList_Check(o) &&
                                  !PyTuple_Check(o))) {
        PyObject *holder = NULL;
        if (!PYOPS_TENSOR_CHECK(o)) {
            holder = pyops_from_numpy(NULL, o);
            if (holder == NULL)
                return -1;
            o = holder;
        }
        ops_tensor *c = ops_to_dtype(PYOPS_T(o), dt, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor *cc = c ? ops_contiguous(c, OPS_CONTIGUOUS_FORMAT) : NULL;
        ops_tensor_release(c);
        Py_XDECREF(holder);
        if (cc == NULL) {
            pyops_raise();
            return -1;
        }
        int64_t n = ops_tensor_numel(cc);
        if (n > cap - *pos) {
            ops_tensor_release(cc);
            return data_changed();
        }
        memcpy(dst + *pos * (int64_t)isz, ops_tensor_data_ptr(cc), (size_t)n * isz);
        *pos += n;
        ops_tensor_release(cc);
        return 0;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++) {
            PyObject *item = PySequence_Fast_ITEMS(o)[i];
            Py_INCREF(item);
            int rc = fill(item, dst, dt, isz, pos, cap);
            Py_DECREF(item);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    ops_scalar s;
    if (!pyops_scalar_from_object(o, &s)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (*pos >= cap)
        return data_changed();
    ops_scalar_store(s, dt, dst + *pos * (int64_t)isz);
    (*pos)++;
    return 0;
}

PyObject *
pyops_tensor_new_from_data(PyObject *data, ops_dtype dtype, bool requires_grad)
{
    infer inf = {.ndim = -1, .kind = -1, .tensor_dtype = OPS_DTYPE_NONE};
    PyObject *seq = data;
    if (scan(data, 0, &inf) < 0)
        return NULL;
    if (dtype == OPS_DTYPE_NONE) {
        ops_dtype from_scalars = inf.kind == 0 ? OPS_BOOL
                                 : inf.kind == 1 ? OPS_INT64
                                 : inf.kind == 2 ? ops_default_float_dtype()
                                                 : OPS_DTYPE_NONE;
        if (inf.tensor_dtype != OPS_DTYPE_NONE)
            dtype = from_scalars == OPS_DTYPE_NONE ? inf.tensor_dtype
                                                   : ops_promote_types(inf.tensor_dtype, from_scalars);
        else
            dtype = from_scalars == OPS_DTYPE_NONE ? ops_default_float_dtype() : from_scalars;
    }
    if (inf.ndim < 0)
        inf.ndim = 0;
    ops_tensor *t = ops_empty((ops_int_list){inf.sizes, inf.ndim}, dtype, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    if (t == NULL)
        return pyops_raise();
    int64_t pos = 0;
    const int64_t cap = ops_tensor_numel(t);
    if (fill(seq, ops_tensor_data_ptr(t), dtype, ops_tensor_itemsize(t), &pos, cap) < 0 ||
        (pos != cap && data_changed() < 0)) {
        ops_tensor_release(t);
        return NULL;
    }
    if (requires_grad) {
        ops_status st = ops_tensor_set_requires_grad(t, true);
        if (st != OPS_OK) {
            ops_tensor_release(t);
            return pyops_raise_status(st);
        }
    }
    return pyops_wrap(t);
}

static PyObject *
py_tensor(PyObject *mod, PyObject *args, PyObject *kwargs)
{
    (void)mod;
    static char *kw[] = {"data", "dtype", "device", "requires_grad", NULL};
    PyObject *data, *dtype = Py_None, *device = Py_None;
    int rg = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOp:tensor", kw, &data, &dtype, &device, &rg))
        return NULL;
    ops_dtype dt = OPS_DTYPE_NONE;
    if (dtype != Py_None && (dt = pyops_dtype_from_object(dtype)) == OPS_DTYPE_NONE) {
        PyErr_Format(PyExc_TypeError, "tensor(): argument 'dtype' must be dtype, not %s", Py_TYPE(dtype)->tp_name);
        return NULL;
    }
    ops_device dev;
    if (device != Py_None) {
        if (pyops_device_arg(device, "tensor", NULL, &dev) < 0)
            return NULL;
        if (dev.type != OPS_CPU) {
            /* built on the host, then copied; the device tensor is the leaf */
            PyObject *h = pyops_tensor_new_from_data(data, dt, false);
            if (h == NULL)
                return NULL;
            PyObject *r = pyops_wrap(ops_to_device(PYOPS_T(h), dev, OPS_DTYPE_NONE, false, false,
                                                   OPS_MEMORY_FORMAT_NONE));
            Py_DECREF(h);
            if (r != NULL && rg) {
                const ops_status st = ops_tensor_set_requires_grad(PYOPS_T(r), true);
                if (st != OPS_OK) {
                    Py_DECREF(r);
                    return pyops_raise_status(st);
                }
            }
            return r;
        }
    }
    return pyops_tensor_new_from_data(data, dt, rg);
}

/* ---- grad mode and autograd.grad ------------------------------------------------ */

static PyObject *
py_set_grad_enabled(PyObject *mod, PyObject *arg)
{
    (void)mod;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    return PyBool_FromLong(ops_set_grad_enabled(on));
}

static PyObject *
py_is_grad_enabled(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyBool_FromLong(ops_grad_enabled());
}

/* grad()'s argument `what` (position pos): a tensor or a sequence of tensors (None
 * elements too when allow_none), as borrowed pointers in *out (PyMem); -1 with a
 * TypeError naming the argument, what it must be and what it got. */
static int
tensor_seq(PyObject *o, const char *what, int pos, bool allow_none, PyObject **fast, const ops_tensor ***out,
           Py_ssize_t *n)
{
    const char *expected =
        allow_none ? "a Tensor or a sequence of Tensors or None" : "a Tensor or a sequence of Tensors";
    if (PYOPS_TENSOR_CHECK(o)) {
        *fast = PyTuple_Pack(1, o);
    } else if (PyList_Check(o) || PyTuple_Check(o)) {
        *fast = PySequence_Fast(o, "");
    } else {
        PyErr_Format(PyExc_TypeError, "grad(): argument '%s' (position %d) must be %s, not %s", what, pos, expected,
                     o == Py_None ? "None" : Py_TYPE(o)->tp_name);
        return -1;
    }
    if (*fast == NULL)
        return -1;
    *n = PySequence_Fast_GET_SIZE(*fast);
    *out = PyMem_Calloc((size_t)*n + 1, sizeof **out);
    if (*out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(*fast, i);
        if (x == Py_None && allow_none)
            continue;
        if (!PYOPS_TENSOR_CHECK(x)) {
            PyErr_Format(PyExc_TypeError, "grad(): argument '%s' (position %d) must be %s, but element %zd is %s",
                         what, pos, expected, i, x == Py_None ? "None" : Py_TYPE(x)->tp_name);
            return -1;
        }
        (*out)[i] = PYOPS_T(x);
    }
    return 0;
}

static PyObject *
py_autograd_grad(PyObject *mod, PyObject *args, PyObject *kwargs)
{
    (void)mod;
    static char *kw[] = {"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "allow_unused", NULL};
    PyObject *outs, *ins, *gouts = Py_None, *retain = Py_None;
    int create = 0, allow_unused = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOpp:grad", kw, &outs, &ins, &gouts, &retain, &create,
                                     &allow_unused))
        return NULL;
    PyObject *fo = NULL, *fi = NULL, *fg = NULL, *result = NULL;
    const ops_tensor **po = NULL, **pi = NULL, **pg = NULL;
    Py_ssize_t no = 0, ni = 0, ng = 0;
    ops_tensor_vec res = {NULL, 0};
    if (tensor_seq(outs, "outputs", 1, false, &fo, &po, &no) < 0 ||
        tensor_seq(ins, "inputs", 2, false, &fi, &pi, &ni) < 0)
        goto done;
    if (gouts != Py_None && tensor_seq(gouts, "grad_outputs", 3, true, &fg, &pg, &ng) < 0)
        goto done;
    int rg = retain == Py_None ? create : PyObject_IsTrue(retain);
    if (rg < 0)
        goto done;
    ops_status st = ops_autograd_grad((ops_tensor_list){po, no}, (ops_tensor_list){pi, ni},
                                      (ops_tensor_list){pg, ng}, rg, create, allow_unused, &res);
    if (st != OPS_OK) {
        pyops_raise_status(st);
        goto done;
    }
    result = PyTuple_New(res.len);
    for (int64_t i = 0; result != NULL && i < res.len; i++) {
        PyObject *x;
        if (res.data[i] == NULL) {
            x = Py_None;
            Py_INCREF(x);
        } else {
            x = pyops_wrap(ops_tensor_retain(res.data[i]));
        }
        if (x == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, i, x);
    }
done:
    ops_tensor_vec_release(&res);
    PyMem_Free(po);
    PyMem_Free(pi);
    PyMem_Free(pg);
    Py_XDECREF(fo);
    Py_XDECREF(fi);
    Py_XDECREF(fg);
    return result;
}

static PyObject *
py_set_num_threads(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (!PyLong_Check(arg) || PyBool_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "set_num_threads(): argument 'n' (position 1) must be int, not %s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || n > INT_MAX || n < INT_MIN) {
        /* (int)n would wrap to another count */
        PyErr_Format(PyExc_RuntimeError, "set_num_threads(): argument 'n' (position 1): %S does not fit in int", arg);
        return NULL;
    }
    ops_set_num_threads((int)n);
    Py_RETURN_NONE;
}

static PyObject *
py_get_num_threads(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromLong(ops_get_num_threads());
}

static PyObject *
py_cpu_capability(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyUnicode_FromString(ops_cpu_capability());
}

static PyObject *
py_promote_types(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:promote_types", &a, &b))
        return NULL;
    ops_dtype x = pyops_dtype_from_object(a), y = pyops_dtype_from_object(b);
    if (x == OPS_DTYPE_NONE || y == OPS_DTYPE_NONE) {
        const bool first = x == OPS_DTYPE_NONE;
        PyErr_Format(PyExc_TypeError, "promote_types(): argument '%s' (position %d) must be dtype, not %s",
                     first ? "type1" : "type2", first ? 1 : 2, Py_TYPE(first ? a : b)->tp_name);
        return NULL;
    }
    PyObject *r = pyops_dtype_object(ops_promote_types(x, y));
    Py_XINCREF(r);
    return r;
}

static PyObject *
py_allocated_bytes(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    ops_alloc_stats st;
    ops_cpu_allocator_stats(&st);
    return PyLong_FromLongLong(st.allocated_bytes);
}

static PyObject *
py_alloc_fail_nth(PyObject *mod, PyObject *arg)
{
    (void)mod;
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    ops_alloc_fail_nth(n);
    Py_RETURN_NONE;
}

static PyObject *
py_is_tensor(PyObject *mod, PyObject *o)
{
    (void)mod;
    return PyBool_FromLong(PYOPS_TENSOR_CHECK(o));
}

static PyMethodDef module_methods[] = {
    {"tensor", (PyCFunction)(void (*)(void))py_tensor, METH_VARARGS | METH_KEYWORDS,
     "tensor(data, *, dtype=None, device=None, requires_grad=False): a new tensor holding a copy of data "
     "(nested lists, numbers, arrays), with torch's dtype inference"},
    {"from_numpy", pyops_from_numpy, METH_O, "from_numpy(a): a tensor sharing a's memory (a stays alive)"},
    {"from_dlpack", pyops_from_dlpack, METH_O,
     "from_dlpack(ext_tensor): a tensor sharing the memory of an object with __dlpack__ or of a DLPack capsule"},
    {"to_dlpack", pyops_to_dlpack, METH_O, "to_dlpack(tensor): a DLPack capsule sharing the tensor's memory"},
    {"from_shm_handle", pyops_from_shm_handle, METH_O,
     "from_shm_handle(handle): a tensor over the shared memory that Tensor.shm_handle() names"},
    {"_set_grad_enabled", py_set_grad_enabled, METH_O, "set grad mode; returns the previous mode"},
    {"is_grad_enabled", py_is_grad_enabled, METH_NOARGS, "whether grad mode is on"},
    {"_autograd_grad", (PyCFunction)(void (*)(void))py_autograd_grad, METH_VARARGS | METH_KEYWORDS,
     "grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False)"},
    {"_set_device_class", set_device_class, METH_O, "the class that represents devices"},
    {"set_num_threads", py_set_num_threads, METH_O, "threads used by libops loops"},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "threads used by libops loops"},
    {"cpu_capability", py_cpu_capability, METH_NOARGS,
     "the instruction-set level of the CPU vector loops: default, avx2 or avx512 (OPS_CPU_CAPABILITY)"},
    {"promote_types", py_promote_types, METH_VARARGS, "the smallest dtype both can be cast to"},
    {"is_tensor", py_is_tensor, METH_O, "isinstance(obj, libops.Tensor)"},
    {"_alloc_fail_nth", py_alloc_fail_nth, METH_O, "fault injection: the n-th libops allocation fails (0: off)"},
    {"_allocated_bytes", py_allocated_bytes, METH_NOARGS, "live bytes of the CPU allocator (leak tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "libops._C",
    .m_doc = "libops: tensor operators in C, declared once in YAML (the extension module).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__C(void)
{
    if (pyops_tensor_type_prepare() < 0 || PyType_Ready(&pyops_tensor_type) < 0 ||
        PyType_Ready(&pyops_dtype_type) < 0 || PyType_Ready(&pyops_memory_format_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (pyops_init_sigs(m) < 0 || PyModule_AddFunctions(m, pyops_generated_functions) < 0 ||
        pyops_generator_init(m) < 0 || pyops_serialize_init(m) < 0 ||
        pyops_nn_init(m) < 0)
        goto fail;
    Py_INCREF(&pyops_tensor_type);
    if (PyModule_AddObject(m, "Tensor", (PyObject *)&pyops_tensor_type) < 0) {
        Py_DECREF(&pyops_tensor_type);
        goto fail;
    }
    Py_INCREF(&pyops_dtype_type);
    if (PyModule_AddObject(m, "dtype", (PyObject *)&pyops_dtype_type) < 0) {
        Py_DECREF(&pyops_dtype_type);
        goto fail;
    }
    for (int d = 0; d < OPS_NUM_DTYPES; d++) {
        /* static instances: never freed, so their refcount only needs to stay >= 1 */
        PyObject *o = (PyObject *)&dtype_objects[d];
        if (Py_REFCNT(o) == 0)
            (void)PyObject_Init(o, &pyops_dtype_type);
        dtype_objects[d].dtype = (ops_dtype)d;
        Py_INCREF(o);
        if (PyModule_AddObject(m, ops_dtype_name((ops_dtype)d), o) < 0) {
            Py_DECREF(o);
            goto fail;
        }
    }
    Py_INCREF(&pyops_memory_format_type);
    if (PyModule_AddObject(m, "memory_format", (PyObject *)&pyops_memory_format_type) < 0) {
        Py_DECREF(&pyops_memory_format_type);
        goto fail;
    }
    for (int f = 0; f < OPS_NUM_MEMORY_FORMATS; f++) {
        PyObject *o = (PyObject *)&memory_format_objects[f];
        if (Py_REFCNT(o) == 0)
            (void)PyObject_Init(o, &pyops_memory_format_type);
        memory_format_objects[f].format = (ops_memory_format)f;
        Py_INCREF(o);
        if (PyModule_AddObject(m, ops_memory_format_name((ops_memory_format)f), o) < 0) {
            Py_DECREF(o);
            goto fail;
        }
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}

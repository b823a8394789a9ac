/* Tensors in files from Python, over include/libops/ops_serialize.h: the private
 * functions libops/serialization.py builds save_safetensors / load_safetensors and
 * save / savez / load on.  Paths are str or os.PathLike (encoded as the file system
 * does); the GIL is released while a file is read or written. */
#include "pyops.h"
#include "ops_serialize.h"

/* A dict {name: Tensor} in the dict's order; NULL with an exception set. */
static PyObject *
tensors_of(ops_tensor_dict *d)
{
    PyObject *res = PyDict_New();
    if (res == NULL)
        return NULL;
    for (int64_t i = 0; i < ops_tensor_dict_size(d); i++) {
        PyObject *t = pyops_wrap(ops_tensor_retain(ops_tensor_dict_tensor(d, i)));
        if (t == NULL || PyDict_SetItemString(res, ops_tensor_dict_name(d, i), t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(res);
            return NULL;
        }
        Py_DECREF(t);
    }
    return res;
}

static PyObject *
metadata_of(ops_tensor_dict *d)
{
    PyObject *res = PyDict_New();
    if (res == NULL)
        return NULL;
    for (int64_t i = 0; i < ops_tensor_dict_metadata_size(d); i++) {
        PyObject *v = PyUnicode_FromString(ops_tensor_dict_metadata_value(d, i));
        if (v == NULL || PyDict_SetItemString(res, ops_tensor_dict_metadata_key(d, i), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(res);
            return NULL;
        }
        Py_DECREF(v);
    }
    return res;
}

/* A C dict of the mapping's str -> Tensor items (and str -> str metadata when given). */
static ops_tensor_dict *
dict_from(PyObject *tensors, PyObject *metadata, const char *fname)
{
    if (!PyDict_Check(tensors)) {
        PyErr_Format(PyExc_TypeError, "%s: tensors must be a dict of str to Tensor, not %.100s", fname,
                     Py_TYPE(tensors)->tp_name);
        return NULL;
    }
    if (metadata != NULL && metadata != Py_None && !PyDict_Check(metadata)) {
        PyErr_Format(PyExc_TypeError, "%s: metadata must be a dict of str to str or None, not %.100s", fname,
                     Py_TYPE(metadata)->tp_name);
        return NULL;
    }
    ops_tensor_dict *d = ops_tensor_dict_new();
    if (d == NULL)
        return (ops_tensor_dict *)pyops_raise();
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(tensors, &pos, &k, &v)) {
        if (!PyUnicode_Check(k) || !PYOPS_TENSOR_CHECK(v)) {
            PyErr_Format(PyExc_TypeError, "%s: tensors must be a dict of str to Tensor, got an item %.100s: %.100s",
                         fname, Py_TYPE(k)->tp_name, Py_TYPE(v)->tp_name);
            goto fail;
        }
        const char *name = PyUnicode_AsUTF8(k);
        if (name == NULL)
            goto fail;
        if (ops_tensor_dict_set(d, name, PYOPS_T(v)) != OPS_OK) {
            pyops_raise();
            goto fail;
        }
    }
    pos = 0;
    while (metadata != NULL && metadata != Py_None && PyDict_Next(metadata, &pos, &k, &v)) {
        if (!PyUnicode_Check(k) || !PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: metadata must be a dict of str to str, got an item %.100s: %.100s",
                         fname, Py_TYPE(k)->tp_name, Py_TYPE(v)->tp_name);
            goto fail;
        }
        const char *ks = PyUnicode_AsUTF8(k), *vs = PyUnicode_AsUTF8(v);
        if (ks == NULL || vs == NULL)
            goto fail;
        if (ops_tensor_dict_set_metadata(d, ks, vs) != OPS_OK) {
            pyops_raise();
            goto fail;
        }
    }
    return d;
fail:
    ops_tensor_dict_free(d);
    return NULL;
}

/* _safetensors_load(path or bytes) -> (tensors, metadata) */
static PyObject *
py_safetensors_load(PyObject *mod, PyObject *arg)
{
    (void)mod;
    ops_tensor_dict *d = NULL;
    ops_status st;
    if (PyBytes_Check(arg) || PyByteArray_Check(arg)) {
        Py_buffer view;
        if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
            return NULL;
        Py_BEGIN_ALLOW_THREADS
        st = ops_safetensors_load_buffer(view.buf, (size_t)view.len, "<bytes>", &d);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&view);
    } else {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(arg, &path))
            return NULL;
        Py_BEGIN_ALLOW_THREADS
        st = ops_safetensors_load(PyBytes_AS_STRING(path), &d);
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    }
    if (st != OPS_OK)
        return pyops_raise_status(st);
    PyObject *t = tensors_of(d), *m = t ? metadata_of(d) : NULL;
    ops_tensor_dict_free(d);
    if (m == NULL) {
        Py_XDECREF(t);
        return NULL;
    }
    return Py_BuildValue("(NN)", t, m);
}

/* _safetensors_save(path, tensors, metadata) */
static PyObject *
py_safetensors_save(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path = NULL, *tensors, *metadata;
    if (!PyArg_ParseTuple(args, "O&OO:save_safetensors", PyUnicode_FSConverter, &path, &tensors, &metadata))
        return NULL;
    ops_tensor_dict *d = dict_from(tensors, metadata, "save_safetensors");
    if (d == NULL) {
        Py_DECREF(path);
        return NULL;
    }
    ops_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops_safetensors_save(PyBytes_AS_STRING(path), d);
    Py_END_ALLOW_THREADS
    ops_tensor_dict_free(d);
    Py_DECREF(path);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

/* _npy_load(path) -> Tensor */
static PyObject *
py_npy_load(PyObject *mod, PyObject *arg)
{
    (void)mod;
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    ops_tensor *t = NULL;
    ops_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops_npy_load(PyBytes_AS_STRING(path), &t);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    return pyops_wrap(t);
}

/* _npy_save(path, tensor) */
static PyObject *
py_npy_save(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path = NULL, *t;
    if (!PyArg_ParseTuple(args, "O&O!:save", PyUnicode_FSConverter, &path, &pyops_tensor_type, &t))
        return NULL;
    ops_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops_npy_save(PyBytes_AS_STRING(path), PYOPS_T(t));
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

/* _npz_load(path) -> {name: Tensor} */
static PyObject *
py_npz_load(PyObject *mod, PyObject *arg)
{
    (void)mod;
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    ops_tensor_dict *d = NULL;
    ops_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops_npz_load(PyBytes_AS_STRING(path), &d);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    PyObject *res = tensors_of(d);
    ops_tensor_dict_free(d);
    return res;
}

/* _npz_save(path, tensors, compress) */
static PyObject *
py_npz_save(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path = NULL, *tensors;
    int compress;
    if (!PyArg_ParseTuple(args, "O&Op:savez", PyUnicode_FSConverter, &path, &tensors, &compress))
        return NULL;
    ops_tensor_dict *d = dict_from(tensors, NULL, "savez");
    if (d == NULL) {
        Py_DECREF(path);
        return NULL;
    }
    ops_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ops_npz_save(PyBytes_AS_STRING(path), d, compress != 0);
    Py_END_ALLOW_THREADS
    ops_tensor_dict_free(d);
    Py_DECREF(path);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

/* ---- raw bytes <-> tensors: the torch.save reader and Tensor pickling ------------ */

static void
release_view(void *data, void *ctx)
{
    (void)data;
    Py_buffer *view = ctx;
    /* the last tensor of the storage may go on a thread without the GIL */
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyMem_RawFree(view);
    PyGILState_Release(g);
}

/* _tensor_from_buffer(buffer, offset, nbytes, dtype) -> a 1-d Tensor of
 * nbytes / itemsize elements over buffer[offset:offset + nbytes].  Shared (the Py_buffer,
 * and so the object, lives until the last view of the storage goes) when the buffer is
 * writable and the bytes start at a multiple of the element size (kernels load whole
 * elements); copied otherwise, so an immutable bytes object is never written through.
 * Bool bytes other than 0 and 1 give a normalised copy, as every import does. */
static PyObject *
py_tensor_from_buffer(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *obj, *dtobj;
    long long offset, nbytes;
    if (!PyArg_ParseTuple(args, "OLLO:_tensor_from_buffer", &obj, &offset, &nbytes, &dtobj))
        return NULL;
    ops_dtype dt = pyops_dtype_from_object(dtobj);
    if (dt == OPS_DTYPE_NONE) {
        PyErr_Format(PyExc_TypeError, "_tensor_from_buffer: dtype must be a libops.dtype, not %.100s",
                     Py_TYPE(dtobj)->tp_name);
        return NULL;
    }
    const long long item = (long long)ops_dtype_size(dt);
    Py_buffer *view = PyMem_RawMalloc(sizeof *view);
    if (view == NULL)
        return PyErr_NoMemory();
    bool writable = true;
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        writable = false;
        if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
            PyMem_RawFree(view);
            return NULL;
        }
    }
    if (offset < 0 || nbytes < 0 || offset > (long long)view->len || nbytes > (long long)view->len - offset ||
        nbytes % item != 0) {
        PyErr_Format(PyExc_ValueError,
                     "_tensor_from_buffer: bytes [%lld, +%lld) of %s do not fit a buffer of %zd bytes "
                     "(or are not a whole number of %lld-byte elements)",
                     offset, nbytes, ops_dtype_name(dt), view->len, item);
        goto fail;
    }
    int64_t n = (int64_t)(nbytes / item);
    char *p = (char *)view->buf + offset;
    ops_tensor *t;
    if (writable && (uintptr_t)p % (uintptr_t)item == 0) {
        t = ops_tensor_from_blob(p, (ops_int_list){&n, 1}, (ops_int_list){NULL, 0}, dt, OPS_DEVICE_CPU,
                                 release_view, view);
        if (t == NULL) {
            pyops_raise();
            goto fail;
        }
        /* from here the tensor owns the buffer */
    } else {
        t = ops_tensor_from_data(p, (ops_int_list){&n, 1}, dt);
        PyBuffer_Release(view);
        PyMem_RawFree(view);
        if (t == NULL)
            return pyops_raise();
    }
    return pyops_wrap(ops_tensor_normalize_bool_import("_tensor_from_buffer", t));
fail:
    PyBuffer_Release(view);
    PyMem_RawFree(view);
    return NULL;
}

/* _tensor_to_bytes(t) -> bytes: the values of a contiguous CPU tensor, as stored
 * (native byte order; bfloat16 as its 16-bit patterns). */
static PyObject *
py_tensor_to_bytes(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (!PYOPS_TENSOR_CHECK(arg)) {
        PyErr_Format(PyExc_TypeError, "_tensor_to_bytes: expected a Tensor, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    const ops_tensor *t = PYOPS_T(arg);
    if (ops_tensor_device(t).type != OPS_CPU || !ops_tensor_is_contiguous(t)) {
        PyErr_SetString(PyExc_ValueError, "_tensor_to_bytes: the tensor must be contiguous and on the CPU");
        return NULL;
    }
    const int64_t n = ops_tensor_numel(t) * (int64_t)ops_tensor_itemsize(t);
    return PyBytes_FromStringAndSize(n > 0 ? ops_tensor_data_ptr(t) : "", (Py_ssize_t)n);
}

/* _storage_span(t) -> (address of the storage's first byte, its size in bytes): what
 * tells deepcopy that two tensors are views of one storage (torch keeps them so). */
static PyObject *
py_storage_span(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (!PYOPS_TENSOR_CHECK(arg)) {
        PyErr_Format(PyExc_TypeError, "_storage_span: expected a Tensor, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    const ops_tensor *t = PYOPS_T(arg);
    const uintptr_t base = (uintptr_t)ops_tensor_data_ptr(t) -
                           (uintptr_t)(ops_tensor_storage_offset(t) * (int64_t)ops_tensor_itemsize(t));
    return Py_BuildValue("(KK)", (unsigned long long)base, (unsigned long long)ops_tensor_storage_nbytes(t));
}

/* ---- Tensor pickling: the Tensor methods forward to libops/serialization.py ---------- */

static PyObject *
call_serialization(const char *fn, PyObject *self, PyObject *arg)
{
    PyObject *mod = PyImport_ImportModule("libops.serialization");
    if (mod == NULL)
        return NULL;
    PyObject *f = PyObject_GetAttrString(mod, fn);
    Py_DECREF(mod);
    if (f == NULL)
        return NULL;
    PyObject *r = arg != NULL ? PyObject_CallFunctionObjArgs(f, self, arg, NULL)
                              : PyObject_CallFunctionObjArgs(f, self, NULL);
    Py_DECREF(f);
    return r;
}

PyObject *
pyops_tensor_reduce_ex(PyObject *self, PyObject *protocol)
{
    return call_serialization("_reduce_tensor", self, protocol);
}

PyObject *
pyops_tensor_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_serialization("_copy_tensor", self, NULL);
}

PyObject *
pyops_tensor_deepcopy(PyObject *self, PyObject *memo)
{
    return call_serialization("_deepcopy_tensor", self, memo);
}

static PyMethodDef serialize_methods[] = {
    {"_safetensors_load", py_safetensors_load, METH_O,
     "_safetensors_load(path or bytes) -> (tensors, metadata): the file mapped, tensors are views of it"},
    {"_safetensors_save", py_safetensors_save, METH_VARARGS, "_safetensors_save(path, tensors, metadata)"},
    {"_npy_load", py_npy_load, METH_O, "_npy_load(path) -> Tensor"},
    {"_npy_save", py_npy_save, METH_VARARGS, "_npy_save(path, tensor)"},
    {"_npz_load", py_npz_load, METH_O, "_npz_load(path) -> {name: Tensor}"},
    {"_npz_save", py_npz_save, METH_VARARGS, "_npz_save(path, tensors, compress)"},
    {"_tensor_from_buffer", py_tensor_from_buffer, METH_VARARGS,
     "_tensor_from_buffer(buffer, offset, nbytes, dtype) -> 1-d Tensor (shared when writable and aligned)"},
    {"_tensor_to_bytes", py_tensor_to_bytes, METH_O, "_tensor_to_bytes(t) -> bytes of a contiguous CPU tensor"},
    {"_storage_span", py_storage_span, METH_O, "_storage_span(t) -> (storage address, storage bytes)"},
    {NULL, NULL, 0, NULL},
};

int
pyops_serialize_init(PyObject *m)
{
    return PyModule_AddFunctions(m, serialize_methods);
}

/* NumPy interop without NumPy's C API: libops.from_numpy(a) borrows a's memory through
 * the buffer protocol (the Py_buffer, and so the array, stays alive until the last view
 * of the storage goes); a Tensor exports the buffer protocol and
 * __array_interface__, so t.numpy(), np.asarray(t) and memoryview(t) share its memory
 * and keep it alive.  Every export marks the storage exported (until the buffer is
 * released; for __array_interface__, for good), so the bytes never move under the
 * consumer (docs/interop.md, "Exported storage"). */
#include "pyops.h"

#include <string.h>

static const char *
format_of(ops_dtype dt)
{
    switch (dt) {
    case OPS_BOOL: return "?";
    case OPS_UINT8: return "B";
    case OPS_INT8: return "b";
    case OPS_INT16: return "h";
    case OPS_INT32: return "i";
    case OPS_INT64: return "q";
    case OPS_FLOAT16: return "e";
    case OPS_FLOAT32: return "f";
    case OPS_FLOAT64: return "d";
    default: return NULL;
    }
}

static const char *
typestr_of(ops_dtype dt)
{
    switch (dt) {
    case OPS_BOOL: return "|b1";
    case OPS_UINT8: return "|u1";
    case OPS_INT8: return "|i1";
    case OPS_INT16: return "<i2";
    case OPS_INT32: return "<i4";
    case OPS_INT64: return "<i8";
    case OPS_FLOAT16: return "<f2";
    case OPS_FLOAT32: return "<f4";
    case OPS_FLOAT64: return "<f8";
    default: return NULL;
    }
}

static ops_dtype
dtype_of_format(const char *f, Py_ssize_t itemsize)
{
    if (f == NULL)
        return OPS_UINT8;
    if (*f == '<' || *f == '=' || *f == '@' || *f == '|')
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return OPS_DTYPE_NONE;
    switch (f[0]) {
    case '?': return OPS_BOOL;
    case 'B': return OPS_UINT8;
    case 'b': return OPS_INT8;
    case 'h': return OPS_INT16;
    case 'i': return itemsize == 4 ? OPS_INT32 : OPS_DTYPE_NONE;
    case 'l': case 'q': return itemsize == 8 ? OPS_INT64 : (itemsize == 4 ? OPS_INT32 : OPS_DTYPE_NONE);
    case 'e': return OPS_FLOAT16;
    case 'f': return OPS_FLOAT32;
    case 'd': return OPS_FLOAT64;
    default: return OPS_DTYPE_NONE;
    }
}

static void
release_buffer(void *data, void *ctx)
{
    (void)data;
    Py_buffer *view = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyMem_RawFree(view);
    PyGILState_Release(g);
}

PyObject *
pyops_from_numpy(PyObject *mod, PyObject *arr)
{
    (void)mod;
    if (PYOPS_TENSOR_CHECK(arr)) {
        PyErr_SetString(PyExc_TypeError, "expected np.ndarray (got Tensor)");
        return NULL;
    }
    Py_buffer *view = PyMem_RawMalloc(sizeof *view);
    if (view == NULL)
        return PyErr_NoMemory();
    /* writable when the array is; a read-only array is shared read-only anyway, as
     * torch does (it warns) */
    if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(arr, view, PyBUF_RECORDS_RO) < 0) {
            PyMem_RawFree(view);
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(arr)->tp_name);
            return NULL;
        }
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "The given NumPy array is not writable, and libops does not support non-writable "
                         "tensors. Writing to the tensor is undefined behavior; copy the array first.",
                         1) < 0)
            goto fail;
    }
    ops_dtype dt = dtype_of_format(view->format, view->itemsize);
    if (dt == OPS_DTYPE_NONE || (Py_ssize_t)ops_dtype_size(dt) != view->itemsize) {
        PyErr_Format(PyExc_TypeError,
                     "can't convert np.ndarray of type %s. The only supported types are: float64, float32, float16, "
                     "int64, int32, int16, int8, uint8, and bool.",
                     view->format ? view->format : "?");
        goto fail;
    }
    if (view->ndim > OPS_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "from_numpy: at most %d dimensions, got %d", OPS_MAX_DIMS, view->ndim);
        goto fail;
    }
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    /* the storage runs from the lowest to the highest byte any element touches; negative
     * strides become a storage offset */
    int64_t lo = 0, hi = 0, numel = 1;
    for (int i = 0; i < view->ndim; i++) {
        sizes[i] = view->shape[i];
        numel *= sizes[i];
        Py_ssize_t sb = view->strides ? view->strides[i] : 0;
        if (sb % view->itemsize != 0) {
            PyErr_SetString(PyExc_ValueError, "given numpy array strides not a multiple of the element byte size. "
                                              "Copy the numpy array to reallocate the memory.");
            goto fail;
        }
        strides[i] = sb / view->itemsize;
    }
    if (view->strides == NULL) { /* C-contiguous */
        int64_t s = 1;
        for (int i = view->ndim - 1; i >= 0; i--) {
            strides[i] = s;
            s *= sizes[i];
        }
    }
    if (numel > 0) {
        for (int i = 0; i < view->ndim; i++) {
            if (strides[i] < 0)
                lo += strides[i] * (sizes[i] - 1);
            else
                hi += strides[i] * (sizes[i] - 1);
        }
    }
    int64_t extent = numel > 0 ? hi - lo + 1 : 0;
    char *base = (char *)view->buf + lo * view->itemsize;
    ops_tensor *blob = ops_tensor_from_blob(base, (ops_int_list){&extent, 1}, (ops_int_list){NULL, 0}, dt,
                                            OPS_DEVICE_CPU, release_buffer, view);
    if (blob == NULL) {
        pyops_raise();
        goto fail;
    }
    /* from here the blob owns the buffer */
    ops_tensor *t = ops_tensor_new_view(blob, view->ndim, sizes, strides, -lo);
    ops_tensor_release(blob);
    /* bool bytes other than 0/1 (a uint8 array viewed as bool): a normalised copy */
    return pyops_wrap(ops_tensor_normalize_bool_import("from_numpy", t));
fail:
    PyBuffer_Release(view);
    PyMem_RawFree(view);
    return NULL;
}

/* ---- export ---------------------------------------------------------------------- */

static int
check_exportable(ops_tensor *t)
{
    if (ops_tensor_device(t).type != OPS_CPU) {
        char buf[32];
        PyErr_Format(PyExc_TypeError,
                     "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                     "memory first.",
                     ops_device_str(ops_tensor_device(t), buf, sizeof buf));
        return -1;
    }
    if (format_of(ops_tensor_dtype(t)) == NULL) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", ops_dtype_name(ops_tensor_dtype(t)));
        return -1;
    }
    return 0;
}

static int
tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    ops_tensor *t = PYOPS_T(self);
    if (check_exportable(t) < 0) {
        view->obj = NULL;
        return -1;
    }
    int64_t nd = ops_tensor_ndim(t);
    size_t isz = ops_tensor_itemsize(t);
    /* shape and strides in one block, freed by releasebuffer */
    Py_ssize_t *geo = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(2 * nd + 1));
    if (geo == NULL) {
        PyErr_NoMemory();
        view->obj = NULL;
        return -1;
    }
    for (int64_t i = 0; i < nd; i++) {
        geo[i] = (Py_ssize_t)ops_tensor_sizes(t)[i];
        geo[nd + i] = (Py_ssize_t)(ops_tensor_strides(t)[i] * (int64_t)isz);
    }
    bool contig = ops_tensor_is_contiguous(t);
    if ((flags & PyBUF_ND) != PyBUF_ND || ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !contig)) {
        PyMem_Free(geo);
        PyErr_SetString(PyExc_BufferError, "libops.Tensor: the consumer must accept strides (non-contiguous)");
        view->obj = NULL;
        return -1;
    }
    view->buf = ops_tensor_data_ptr(t);
    view->obj = self;
    Py_INCREF(self);
    view->len = (Py_ssize_t)(ops_tensor_numel(t) * (int64_t)isz);
    view->readonly = 0;
    view->itemsize = (Py_ssize_t)isz;
    view->format = (flags & PyBUF_FORMAT) ? (char *)format_of(ops_tensor_dtype(t)) : NULL;
    view->ndim = (int)nd;
    view->shape = geo;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? geo + nd : NULL;
    view->suboffsets = NULL;
    view->internal = geo;
    /* The consumer (a memoryview, a NumPy array over it) holds buf until it
     * releases the buffer: the storage must not move before. */
    ops_storage_export_begin(t->storage);
    return 0;
}

static void
tensor_releasebuffer(PyObject *self, Py_buffer *view)
{
    /* A Tensor object never changes its ops_tensor, nor a tensor its storage, so
     * this is the storage getbuffer marked. */
    ops_storage_export_end(PYOPS_T(self)->storage);
    PyMem_Free(view->internal);
}

PyBufferProcs pyops_tensor_as_buffer = {
    .bf_getbuffer = tensor_getbuffer,
    .bf_releasebuffer = tensor_releasebuffer,
};

static PyObject *
numpy_module(void)
{
    return PyImport_ImportModule("numpy");
}

PyObject *
pyops_tensor_numpy(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (ops_tensor_requires_grad(PYOPS_T(self))) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return NULL;
    }
    if (check_exportable(PYOPS_T(self)) < 0)
        return NULL;
    PyObject *np = numpy_module();
    if (np == NULL)
        return NULL;
    /* np.asarray(memoryview(t)): the array's base is the memoryview, which holds the
     * tensor */
    PyObject *mv = PyMemoryView_FromObject(self);
    PyObject *r = NULL;
    if (mv != NULL) {
        r = PyObject_CallMethod(np, "asarray", "O", mv);
        Py_DECREF(mv);
    }
    Py_DECREF(np);
    return r;
}

PyObject *
pyops_tensor_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kw, &dtype, &copy))
        return NULL;
    PyObject *base = self;
    PyObject *det = NULL;
    if (ops_tensor_requires_grad(PYOPS_T(self))) {
        det = pyops_wrap(ops_tensor_detach(PYOPS_T(self)));
        if (det == NULL)
            return NULL;
        base = det;
    }
    PyObject *arr = pyops_tensor_numpy(base, NULL);
    Py_XDECREF(det);
    if (arr == NULL || dtype == Py_None)
        return arr;
    PyObject *r = PyObject_CallMethod(arr, "astype", "O", dtype);
    Py_DECREF(arr);
    return r;
}

PyObject *
pyops_tensor_array_interface(PyObject *self, void *closure)
{
    (void)closure;
    ops_tensor *t = PYOPS_T(self);
    if (check_exportable(t) < 0)
        return NULL;
    int64_t nd = ops_tensor_ndim(t);
    size_t isz = ops_tensor_itemsize(t);
    PyObject *shape = PyTuple_New(nd), *strides = PyTuple_New(nd);
    if (shape == NULL || strides == NULL)
        goto fail;
    for (int64_t i = 0; i < nd; i++) {
        PyObject *a = PyLong_FromLongLong(ops_tensor_sizes(t)[i]);
        PyObject *b = PyLong_FromLongLong(ops_tensor_strides(t)[i] * (int64_t)isz);
        if (a == NULL || b == NULL) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            goto fail;
        }
        PyTuple_SET_ITEM(shape, i, a);
        PyTuple_SET_ITEM(strides, i, b);
    }
    PyObject *r = Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i}", "shape", shape, "typestr",
                                typestr_of(ops_tensor_dtype(t)), "data", PyLong_FromVoidPtr(ops_tensor_data_ptr(t)),
                                Py_False, "strides", strides, "version", 3);
    /* The address goes out with no way to learn when its user is done (an array
     * made from it keeps this object as its base, nothing more): the storage stays
     * exported, its bytes pinned, for the rest of its life. */
    if (r != NULL)
        ops_storage_export_begin(t->storage);
    return r;
fail:
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return NULL;
}

/* Zero-copy interop from Python over include/libops/ops_interop.h: DLPack (Tensor.__dlpack__,
 * Tensor.__dlpack_device__, libops.from_dlpack, libops.to_dlpack) and shared memory
 * (Tensor.share_memory_, Tensor.is_shared, Tensor.shm_handle, libops.from_shm_handle).
 *
 * DLPack capsules follow the protocol every framework uses: a capsule named "dltensor"
 * owns its DLManagedTensor until a consumer renames it "used_dltensor"; the capsule's
 * destructor calls the deleter only while the name is still "dltensor" (nobody took
 * it).  The versioned struct travels as "dltensor_versioned" / "used_dltensor_versioned"
 * and is offered only when libops was built against a DLPack header that has it. */
#include "pyops.h"
#include "ops_op_clone.h"

#include <string.h>

#include <dlpack/dlpack.h>

static const char CAP_NAME[] = "dltensor";
static const char CAP_USED[] = "used_dltensor";
static const char CAP_NAME_V[] = "dltensor_versioned";
static const char CAP_USED_V[] = "used_dltensor_versioned";

/* ---- export --------------------------------------------------------------------- */

/* Capsule destructor of "dltensor": the capsule still owns m when nobody renamed it. */
static void
dltensor_capsule_destructor(PyObject *cap)
{
    /* runs during garbage collection too: keep a pending exception as it is */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyCapsule_IsValid(cap, CAP_NAME)) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, CAP_NAME);
        if (m != NULL && m->deleter != NULL)
            m->deleter(m);
    }
    PyErr_Restore(type, value, tb);
}

#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
static void
dltensor_versioned_capsule_destructor(PyObject *cap)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyCapsule_IsValid(cap, CAP_NAME_V)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, CAP_NAME_V);
        if (m != NULL && m->deleter != NULL)
            m->deleter(m);
    }
    PyErr_Restore(type, value, tb);
}
#endif

/* A "dltensor" capsule owning a new DLManagedTensor of t. */
static PyObject *
capsule_of(const ops_tensor *t)
{
    DLManagedTensor *m = ops_tensor_to_dlpack(t);
    if (m == NULL)
        return pyops_raise();
    PyObject *cap = PyCapsule_New(m, CAP_NAME, dltensor_capsule_destructor);
    if (cap == NULL)
        m->deleter(m);
    return cap;
}

/* The versioned capsule; NULL without an exception when this build has no versioned
 * struct (the caller then falls back to the legacy one). */
static PyObject *
capsule_of_versioned(const ops_tensor *t)
{
#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
    DLManagedTensorVersioned *m = ops_tensor_to_dlpack_versioned(t);
    if (m == NULL)
        return pyops_raise();
    PyObject *cap = PyCapsule_New(m, CAP_NAME_V, dltensor_versioned_capsule_destructor);
    if (cap == NULL)
        m->deleter(m);
    return cap;
#else
    (void)t;
    return NULL;
#endif
}

/* max_version=(major, minor) asks for the versioned struct when major >= 1. */
static int
wants_versioned(PyObject *max_version, bool *out)
{
    *out = false;
    if (max_version == NULL || max_version == Py_None)
        return 0;
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) != 2) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__(): max_version must be None or a tuple (major, minor)");
        return -1;
    }
    long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred())
        return -1;
    *out = major >= 1 && ops_dlpack_has_versioned();
    return 0;
}

/* Tensor.__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None).
 * stream, as in torch: None or an int (a CUDA stream; libops runs its CUDA work on
 * the legacy default stream, synchronous with the host, so there is nothing to wait
 * for).  dl_device must be the tensor's own device (we do not move tensors on
 * export); copy=True exports a fresh copy, copy=False/None shares. */
PyObject *
pyops_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:__dlpack__", kwlist, &stream, &max_version,
                                     &dl_device, &copy))
        return NULL;
    ops_tensor *t = PYOPS_T(self);
    if (ops_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "Can't export tensors that require gradient, use tensor.detach()");
        return NULL;
    }
    if (stream != Py_None && !PyLong_Check(stream)) {
        PyErr_SetString(PyExc_TypeError, "stream must be ``int`` or ``none``");
        return NULL;
    }
    bool versioned;
    if (wants_versioned(max_version, &versioned) < 0)
        return NULL;
    if (dl_device != Py_None) {
        int32_t type, id;
        ops_status st = ops_tensor_dlpack_device(t, &type, &id);
        if (st != OPS_OK)
            return pyops_raise_status(st);
        long want_type = -1, want_id = -1;
        if (!PyTuple_Check(dl_device) || PyTuple_GET_SIZE(dl_device) != 2 ||
            ((want_type = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 0))) == -1 && PyErr_Occurred()) ||
            ((want_id = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 1))) == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "__dlpack__(): dl_device must be None or a tuple (device_type, device_id)");
            return NULL;
        }
        if (want_type != type || want_id != id) {
            PyErr_Format(PyExc_BufferError,
                         "__dlpack__(): cannot export a tensor on DLPack device (%d, %d) to device (%ld, %ld)",
                         (int)type, (int)id, want_type, want_id);
            return NULL;
        }
    }
    int do_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    if (do_copy < 0)
        return NULL;
    ops_tensor *src = t;
    if (do_copy) {
        src = ops_clone(t, OPS_MEMORY_FORMAT_NONE);
        if (src == NULL)
            return pyops_raise();
    }
    PyObject *cap = NULL;
    if (versioned)
        cap = capsule_of_versioned(src);
    if (cap == NULL && !PyErr_Occurred())
        cap = capsule_of(src);
    if (do_copy)
        ops_tensor_release(src); /* the capsule holds its own reference */
    return cap;
}

/* Tensor.__dlpack_device__() -> (device_type, device_id): (1, 0) on the CPU. */
PyObject *
pyops_tensor_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    int32_t type, id;
    ops_status st = ops_tensor_dlpack_device(PYOPS_T(self), &type, &id);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    return Py_BuildValue("(ii)", (int)type, (int)id);
}

/* libops.to_dlpack(t): a "dltensor" capsule sharing t's memory (like
 * torch.utils.dlpack.to_dlpack, it does not look at requires_grad). */
PyObject *
pyops_to_dlpack(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (!PYOPS_TENSOR_CHECK(arg)) {
        PyErr_Format(PyExc_TypeError, "to_dlpack(): argument 'tensor' must be Tensor, not %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    return capsule_of(PYOPS_T(arg));
}

/* ---- import --------------------------------------------------------------------- */

static PyObject *
import_capsule(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, CAP_NAME)) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, CAP_NAME);
        if (m == NULL)
            return NULL;
        /* renamed first: from here on ops_tensor_from_dlpack owns m, whether it
         * succeeds or not, and the capsule must not delete it again */
        if (PyCapsule_SetName(cap, CAP_USED) < 0)
            return NULL;
        return pyops_wrap(ops_tensor_from_dlpack(m));
    }
#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
    if (ops_dlpack_has_versioned() && PyCapsule_IsValid(cap, CAP_NAME_V)) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, CAP_NAME_V);
        if (m == NULL)
            return NULL;
        if (PyCapsule_SetName(cap, CAP_USED_V) < 0)
            return NULL;
        return pyops_wrap(ops_tensor_from_dlpack_versioned(m));
    }
#else
    (void)CAP_NAME_V;
    (void)CAP_USED_V;
#endif
    PyErr_SetString(PyExc_RuntimeError,
                    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                    "once, so you might have already constructed a tensor from it once.");
    return NULL;
}

/* libops.from_dlpack(obj): obj is anything with __dlpack__ (a NumPy array, a torch
 * tensor, a libops tensor) or a raw "dltensor" capsule.  The result shares obj's
 * memory and keeps it alive through the producer's deleter. */
PyObject *
pyops_from_dlpack(PyObject *mod, PyObject *obj)
{
    (void)mod;
    if (PyCapsule_CheckExact(obj))
        return import_capsule(obj);
    PyObject *cap = NULL, *res = NULL;
    PyObject *fn = PyObject_GetAttrString(obj, "__dlpack__");
    if (fn == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "from_dlpack(): argument 'ext_tensor' must be an object with __dlpack__ or a DLPack capsule, "
                     "not %s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    /* A CUDA producer is told the stream we read on: the legacy default stream, which
     * the array API spells 1.  Everyone else gets the plain call, as torch does. */
    PyObject *kwargs = NULL;
    PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (dev == NULL)
        goto done;
    long dev_type = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2)
        dev_type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
    Py_DECREF(dev);
    if (dev_type == -1 && PyErr_Occurred())
        goto done;
    if (dev_type == kDLCUDA) {
        kwargs = Py_BuildValue("{s:i}", "stream", 1);
        if (kwargs == NULL)
            goto done;
    }
    if (ops_dlpack_has_versioned()) {
        /* ask for the versioned struct; producers that predate it refuse the keyword */
        PyObject *kw2 = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
        if (kw2 == NULL)
            goto done;
        PyObject *mv = Py_BuildValue("(ii)", 1, 0);
        if (mv == NULL || PyDict_SetItemString(kw2, "max_version", mv) < 0) {
            Py_XDECREF(mv);
            Py_DECREF(kw2);
            goto done;
        }
        Py_DECREF(mv);
        PyObject *empty = PyTuple_New(0);
        if (empty == NULL) {
            Py_DECREF(kw2);
            goto done;
        }
        cap = PyObject_Call(fn, empty, kw2);
        Py_DECREF(empty);
        Py_DECREF(kw2);
        if (cap == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                goto done;
            PyErr_Clear();
        }
    }
    if (cap == NULL) {
        PyObject *empty = PyTuple_New(0);
        if (empty == NULL)
            goto done;
        cap = PyObject_Call(fn, empty, kwargs);
        Py_DECREF(empty);
        if (cap == NULL)
            goto done;
    }
    if (!PyCapsule_CheckExact(cap)) {
        PyErr_Format(PyExc_TypeError, "from_dlpack(): __dlpack__ returned %s, expected a DLPack capsule",
                     Py_TYPE(cap)->tp_name);
        goto done;
    }
    res = import_capsule(cap);
done:
    Py_XDECREF(kwargs);
    Py_XDECREF(cap);
    Py_DECREF(fn);
    return res;
}

/* ---- shared memory ---------------------------------------------------------------- */

/* Tensor.share_memory_(): moves the storage into a POSIX shared-memory segment in
 * place (every view sees it); returns self, as torch does. */
PyObject *
pyops_tensor_share_memory_(PyObject *self, PyObject *unused)
{
    (void)unused;
    ops_status st = ops_tensor_share_memory_(PYOPS_T(self));
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_INCREF(self);
    return self;
}

PyObject *
pyops_tensor_is_shared(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(ops_tensor_is_shared(PYOPS_T(self)));
}

/* Tensor.shm_handle() -> str: the line another process passes to
 * libops.from_shm_handle.  The tensor must be shared already; keep it alive until
 * the receiver has opened the handle (the creator owns the segment's name). */
PyObject *
pyops_tensor_shm_handle(PyObject *self, PyObject *unused)
{
    (void)unused;
    ops_shm_handle h;
    char buf[OPS_SHM_HANDLE_STR_MAX];
    ops_status st = ops_tensor_shm_handle(PYOPS_T(self), &h);
    if (st == OPS_OK)
        st = ops_shm_handle_to_string(&h, buf, sizeof buf);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    return PyUnicode_FromString(buf);
}

/* libops.from_shm_handle(handle): a CPU tensor over the segment the handle names. */
PyObject *
pyops_from_shm_handle(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "from_shm_handle(): argument 'handle' must be str, not %s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t len;
    const char *text = PyUnicode_AsUTF8AndSize(arg, &len);
    if (text == NULL)
        return NULL;
    if ((size_t)len != strlen(text)) {
        PyErr_SetString(PyExc_ValueError, "from_shm_handle(): embedded null character in the handle");
        return NULL;
    }
    ops_shm_handle h;
    ops_status st = ops_shm_handle_from_string(text, &h);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    return pyops_wrap(ops_tensor_from_shm_handle(&h));
}

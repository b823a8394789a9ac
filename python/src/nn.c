/* What libops.nn and libops.optim need from C: Tensor subclasses (nn.Parameter is one,
 * made by _make_subclass as torch's Tensor._make_subclass), the optimizers of
 * include/libops/ops_optim.h behind a capsule (libops/optim/optimizer.py wraps them:
 * options, per-parameter state for state_dict), and Tensor.register_hook over the
 * engine's tensor hooks. */
#include "pyops.h"

/* _make_subclass(cls, data, requires_grad): an instance of cls (a Python subclass of
 * Tensor) sharing data's storage with no history, requires_grad as given. */
static PyObject *
py_make_subclass(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *cls, *data;
    int requires_grad;
    if (!PyArg_ParseTuple(args, "OO!p:_make_subclass", &cls, &pyops_tensor_type, &data, &requires_grad))
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &pyops_tensor_type)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass: cls must be a subclass of libops.Tensor");
        return NULL;
    }
    ops_tensor *t = ops_tensor_detach(PYOPS_T(data));
    if (t == NULL)
        return pyops_raise();
    if (requires_grad && ops_tensor_set_requires_grad(t, true) != OPS_OK) {
        ops_tensor_release(t);
        return pyops_raise();
    }
    return pyops_wrap_as((PyTypeObject *)cls, t);
}

/* ---- optimizers ---------------------------------------------------------------- */

#define OPTIM_CAPSULE "libops.optimizer"

static void
optim_capsule_free(PyObject *cap)
{
    ops_optimizer_release(PyCapsule_GetPointer(cap, OPTIM_CAPSULE));
}

static ops_optimizer *
optim_of(PyObject *cap)
{
    return PyCapsule_GetPointer(cap, OPTIM_CAPSULE); /* NULL with TypeError/ValueError set */
}

/* _optimizer_new(kind, params, lr, momentum, dampening, weight_decay, nesterov, maximize,
 * beta1, beta2, eps, amsgrad): kind "sgd" | "adam" | "adamw"; params a sequence of
 * Tensors.  The options are passed as given (the Python classes hold torch's defaults). */
static PyObject *
py_optimizer_new(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *kind;
    PyObject *params;
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    int nesterov, maximize, amsgrad;
    if (!PyArg_ParseTuple(args, "sOddddppdddp:_optimizer_new", &kind, &params, &lr, &momentum, &dampening,
                          &weight_decay, &nesterov, &maximize, &beta1, &beta2, &eps, &amsgrad))
        return NULL;
    PyObject *seq = PySequence_Fast(params, "_optimizer_new: params must be a sequence of Tensors");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const ops_tensor **ts = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof *ts);
    if (ts == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PySequence_Fast_GET_ITEM(seq, i);
        if (!PYOPS_TENSOR_CHECK(p)) {
            PyErr_Format(PyExc_TypeError, "optimizer can only optimize Tensors, but one of the params is %.100s",
                         Py_TYPE(p)->tp_name);
            PyMem_Free(ts);
            Py_DECREF(seq);
            return NULL;
        }
        ts[i] = PYOPS_T(p);
    }
    ops_tensor_list list = {ts, (int64_t)n};
    ops_optimizer *o = NULL;
    if (strcmp(kind, "sgd") == 0) {
        ops_sgd_options so = {.lr = lr, .momentum = momentum, .dampening = dampening,
                              .weight_decay = weight_decay, .nesterov = nesterov, .maximize = maximize};
        o = ops_sgd_new(list, &so);
    } else if (strcmp(kind, "adam") == 0 || strcmp(kind, "adamw") == 0) {
        /* The C constructors read 0 as "torch's default": make it with the defaults,
         * then set the options exactly as asked (zeros included).  AdamW stays AdamW
         * with a zero decay, as a later param_groups change may give it one. */
        ops_adam_options ao = {.lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps, .weight_decay = weight_decay,
                               .amsgrad = amsgrad, .maximize = maximize};
        o = kind[4] == 'w' ? ops_adamw_new(list, NULL) : ops_adam_new(list, NULL);
        if (o != NULL && ops_optimizer_set_adam_options(o, &ao) != OPS_OK) {
            ops_optimizer_release(o);
            o = NULL;
        }
    } else {
        PyErr_Format(PyExc_ValueError, "_optimizer_new: unknown kind '%s'", kind);
        PyMem_Free(ts);
        Py_DECREF(seq);
        return NULL;
    }
    PyMem_Free(ts);
    Py_DECREF(seq);
    if (o == NULL)
        return pyops_raise();
    PyObject *cap = PyCapsule_New(o, OPTIM_CAPSULE, optim_capsule_free);
    if (cap == NULL)
        ops_optimizer_release(o);
    return cap;
}

static PyObject *
py_optimizer_step(PyObject *mod, PyObject *cap)
{
    (void)mod;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    ops_status st = ops_optimizer_step(o);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *
py_optimizer_zero_grad(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *cap;
    int set_to_none;
    if (!PyArg_ParseTuple(args, "Op:_optimizer_zero_grad", &cap, &set_to_none))
        return NULL;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    ops_status st = ops_optimizer_zero_grad(o, set_to_none);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *
py_optimizer_set_lr(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *cap;
    double lr;
    if (!PyArg_ParseTuple(args, "Od:_optimizer_set_lr", &cap, &lr))
        return NULL;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    ops_status st = ops_optimizer_set_lr(o, lr);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *
py_optimizer_get_lr(PyObject *mod, PyObject *cap)
{
    (void)mod;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    return PyFloat_FromDouble(ops_optimizer_get_lr(o));
}

/* _optimizer_set_options(opt, kind, lr, momentum, dampening, weight_decay, nesterov,
 * maximize, beta1, beta2, eps, amsgrad): a param group's options, as they are now, for
 * the next steps (kind "sgd" or "adam"/"adamw"). */
static PyObject *
py_optimizer_set_options(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *cap;
    const char *kind;
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    int nesterov, maximize, amsgrad;
    if (!PyArg_ParseTuple(args, "Osddddppdddp:_optimizer_set_options", &cap, &kind, &lr, &momentum, &dampening,
                          &weight_decay, &nesterov, &maximize, &beta1, &beta2, &eps, &amsgrad))
        return NULL;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    ops_status st;
    if (strcmp(kind, "sgd") == 0) {
        ops_sgd_options so = {.lr = lr, .momentum = momentum, .dampening = dampening,
                              .weight_decay = weight_decay, .nesterov = nesterov, .maximize = maximize};
        st = ops_optimizer_set_sgd_options(o, &so);
    } else {
        ops_adam_options ao = {.lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps, .weight_decay = weight_decay,
                               .amsgrad = amsgrad, .maximize = maximize};
        st = ops_optimizer_set_adam_options(o, &ao);
    }
    if (st != OPS_OK) {
        ops_status s2 = st;
        const char *msg = ops_last_error();
        PyErr_SetString(PyExc_ValueError, msg != NULL && msg[0] ? msg : ops_status_str(s2));
        ops_clear_error();
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
tensor_or_none(ops_tensor *t)
{
    if (t == NULL)
        Py_RETURN_NONE;
    return pyops_wrap(t);
}

/* _optimizer_get_state(opt, i) -> (step, buf, v, vmax): parameter i's state (tensors
 * shared with the optimizer, None where there is none). */
static PyObject *
py_optimizer_get_state(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *cap;
    long long i;
    if (!PyArg_ParseTuple(args, "OL:_optimizer_get_state", &cap, &i))
        return NULL;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    ops_optimizer_state s;
    ops_status st = ops_optimizer_get_state(o, (int64_t)i, &s);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    PyObject *b = tensor_or_none(s.buf), *v = tensor_or_none(s.v), *vm = tensor_or_none(s.vmax);
    if (b == NULL || v == NULL || vm == NULL) {
        Py_XDECREF(b);
        Py_XDECREF(v);
        Py_XDECREF(vm);
        return NULL;
    }
    return Py_BuildValue("(LNNN)", (long long)s.step, b, v, vm);
}

static bool
optional_tensor(PyObject *o, const char *name, ops_tensor **out)
{
    if (o == Py_None) {
        *out = NULL;
        return true;
    }
    if (!PYOPS_TENSOR_CHECK(o)) {
        PyErr_Format(PyExc_TypeError, "_optimizer_set_state: %s must be a Tensor or None, not %.100s", name,
                     Py_TYPE(o)->tp_name);
        return false;
    }
    *out = PYOPS_T(o);
    return true;
}

/* _optimizer_set_state(opt, i, step, buf, v, vmax): copies in. */
static PyObject *
py_optimizer_set_state(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *cap, *b, *v, *vm;
    long long i, step;
    if (!PyArg_ParseTuple(args, "OLLOOO:_optimizer_set_state", &cap, &i, &step, &b, &v, &vm))
        return NULL;
    ops_optimizer *o = optim_of(cap);
    if (o == NULL)
        return NULL;
    ops_optimizer_state s = {.step = (int64_t)step};
    if (!optional_tensor(b, "buf", &s.buf) || !optional_tensor(v, "v", &s.v) || !optional_tensor(vm, "vmax", &s.vmax))
        return NULL;
    ops_status st = ops_optimizer_set_state(o, (int64_t)i, &s);
    if (st != OPS_OK)
        return pyops_raise_status(st);
    Py_RETURN_NONE;
}

/* ---- tensor hooks (Tensor.register_hook) ------------------------------------------ */

/* The exception a Python hook raised, kept for the backward() call that ran it: the
 * engine only carries a status and a message up, so the hook parks its exception here
 * (under the GIL, per thread) with the message it set, and pyops_raise_status raises
 * it instead of the message when that message is the one that reached it. */
static _Thread_local PyObject *hook_exc_type, *hook_exc_value, *hook_exc_tb;
static _Thread_local char hook_exc_msg[256];

static void
hook_exc_clear(void)
{
    Py_CLEAR(hook_exc_type);
    Py_CLEAR(hook_exc_value);
    Py_CLEAR(hook_exc_tb);
    hook_exc_msg[0] = '\0';
}

bool
pyops_hook_exception_restore(void)
{
    if (hook_exc_type == NULL)
        return false;
    const char *msg = ops_last_error();
    if (msg == NULL || strcmp(msg, hook_exc_msg) != 0) { /* stale: some other error now */
        hook_exc_clear();
        return false;
    }
    PyErr_Restore(hook_exc_type, hook_exc_value, hook_exc_tb);
    hook_exc_type = hook_exc_value = hook_exc_tb = NULL;
    hook_exc_msg[0] = '\0';
    ops_clear_error();
    return true;
}

/* Parks the pending Python exception; returns the error status for the engine. */
static ops_status
hook_exc_park(void)
{
    hook_exc_clear();
    PyErr_Fetch(&hook_exc_type, &hook_exc_value, &hook_exc_tb);
    const char *tn = hook_exc_type != NULL ? ((PyTypeObject *)hook_exc_type)->tp_name : "exception";
    ops_status st = ops_fail(OPS_ERR_RUNTIME, "backward: a tensor hook raised %s", tn);
    const char *msg = ops_last_error();
    snprintf(hook_exc_msg, sizeof hook_exc_msg, "%s", msg != NULL ? msg : "");
    return st;
}

static ops_status
py_grad_hook(const ops_tensor *grad, ops_tensor **replacement, void *ctx)
{
    PyGILState_STATE gs = PyGILState_Ensure();
    ops_status st = OPS_OK;
    PyObject *g = pyops_wrap(ops_tensor_retain((ops_tensor *)grad));
    PyObject *r = g != NULL ? PyObject_CallOneArg((PyObject *)ctx, g) : NULL;
    Py_XDECREF(g);
    if (r == NULL) {
        st = hook_exc_park();
    } else if (r != Py_None) {
        if (PYOPS_TENSOR_CHECK(r)) {
            *replacement = ops_tensor_retain(PYOPS_T(r));
        } else {
            PyErr_Format(PyExc_TypeError, "hook returned an object of type %.100s: expected a Tensor or None",
                         Py_TYPE(r)->tp_name);
            st = hook_exc_park();
        }
    }
    Py_XDECREF(r);
    PyGILState_Release(gs);
    return st;
}

/* The engine drops a hook (removed, or its tensor / grad_fn freed) possibly without
 * the GIL held by this thread (a C caller freeing the last reference). */
static void
py_grad_hook_release(void *ctx)
{
#if PY_VERSION_HEX >= 0x030D0000
    if (!Py_IsInitialized() || Py_IsFinalizing())
#else
    if (!Py_IsInitialized() || _Py_IsFinalizing())
#endif
        return; /* the interpreter is going: the callable goes with it */
    PyGILState_STATE gs = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(gs);
}

/* The handle register_hook returns: remove() takes the hook off (once; later calls do
 * nothing), as torch.utils.hooks.RemovableHandle.  It keeps the tensor (not its
 * Python object) alive, so the handle stays valid after the tensor's last name goes. */
typedef struct {
    PyObject_HEAD
    ops_tensor *t; /* owned; NULL once removed */
    int64_t id;
} hook_handle;

static void
hook_handle_dealloc(PyObject *self)
{
    ops_tensor_release(((hook_handle *)self)->t);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
hook_handle_remove(PyObject *self, PyObject *unused)
{
    (void)unused;
    hook_handle *h = (hook_handle *)self;
    ops_tensor *t = h->t;
    h->t = NULL;
    if (t != NULL) {
        (void)ops_tensor_remove_hook(t, h->id);
        ops_tensor_release(t);
    }
    Py_RETURN_NONE;
}

static PyObject *
hook_handle_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return self;
}

static PyObject *
hook_handle_exit(PyObject *self, PyObject *args)
{
    (void)args;
    return hook_handle_remove(self, NULL);
}

static PyObject *
hook_handle_id(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong((long long)((hook_handle *)self)->id);
}

static PyMethodDef hook_handle_methods[] = {
    {"remove", hook_handle_remove, METH_NOARGS, "remove the hook"},
    {"__enter__", hook_handle_enter, METH_NOARGS, NULL},
    {"__exit__", hook_handle_exit, METH_VARARGS, "removes the hook"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef hook_handle_getset[] = {
    {"id", hook_handle_id, NULL, "the hook's handle number", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject hook_handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "libops._C.TensorHookHandle",
    .tp_basicsize = sizeof(hook_handle),
    .tp_dealloc = hook_handle_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Returned by Tensor.register_hook; remove() takes the hook off.",
    .tp_methods = hook_handle_methods,
    .tp_getset = hook_handle_getset,
};

/* Tensor.register_hook(hook): hook(grad) -> Tensor or None runs when the gradient
 * with respect to this tensor is computed, before it is accumulated into .grad (a
 * leaf) or passed on (a non-leaf); a Tensor it returns replaces the gradient.  Hooks
 * run in registration order.  An exception in a hook stops backward() with it. */
static PyObject *
tensor_register_hook(PyObject *self, PyObject *fn)
{
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "register_hook: hook must be callable, not %.100s", Py_TYPE(fn)->tp_name);
        return NULL;
    }
    if (!ops_tensor_requires_grad(PYOPS_T(self))) {
        PyErr_SetString(PyExc_RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    hook_handle *h = PyObject_New(hook_handle, &hook_handle_type);
    if (h == NULL)
        return NULL;
    h->t = NULL;
    Py_INCREF(fn);
    ops_status st = ops_tensor_register_hook_ex(PYOPS_T(self), py_grad_hook, fn, py_grad_hook_release, &h->id);
    if (st != OPS_OK) {
        Py_DECREF(fn);
        Py_DECREF(h);
        return pyops_raise_status(st);
    }
    h->t = ops_tensor_retain(PYOPS_T(self));
    return (PyObject *)h;
}

static PyMethodDef tensor_hook_method = {
    "register_hook", tensor_register_hook, METH_O,
    "register_hook(hook): hook(grad) -> Tensor or None, called with the gradient during backward; "
    "returns a handle with remove()"};

static PyMethodDef nn_methods[] = {
    {"_make_subclass", py_make_subclass, METH_VARARGS,
     "_make_subclass(cls, data, requires_grad) -> cls instance sharing data's storage"},
    {"_optimizer_new", py_optimizer_new, METH_VARARGS,
     "_optimizer_new(kind, params, lr, momentum, dampening, weight_decay, nesterov, maximize, beta1, beta2, "
     "eps, amsgrad) -> capsule"},
    {"_optimizer_step", py_optimizer_step, METH_O, "_optimizer_step(opt)"},
    {"_optimizer_zero_grad", py_optimizer_zero_grad, METH_VARARGS, "_optimizer_zero_grad(opt, set_to_none)"},
    {"_optimizer_set_lr", py_optimizer_set_lr, METH_VARARGS, "_optimizer_set_lr(opt, lr)"},
    {"_optimizer_get_lr", py_optimizer_get_lr, METH_O, "_optimizer_get_lr(opt) -> float"},
    {"_optimizer_set_options", py_optimizer_set_options, METH_VARARGS,
     "_optimizer_set_options(opt, kind, lr, momentum, dampening, weight_decay, nesterov, maximize, beta1, beta2, "
     "eps, amsgrad)"},
    {"_optimizer_get_state", py_optimizer_get_state, METH_VARARGS,
     "_optimizer_get_state(opt, i) -> (step, buf, v, vmax)"},
    {"_optimizer_set_state", py_optimizer_set_state, METH_VARARGS,
     "_optimizer_set_state(opt, i, step, buf, v, vmax)"},
    {NULL, NULL, 0, NULL},
};

int
pyops_nn_init(PyObject *m)
{
    if (PyType_Ready(&hook_handle_type) < 0)
        return -1;
    /* Tensor.register_hook joins the (ready) Tensor type here, next to its binding,
     * rather than in tensor_methods.c's table. */
    PyObject *descr = PyDescr_NewMethod(&pyops_tensor_type, &tensor_hook_method);
    if (descr == NULL)
        return -1;
    int rc = PyDict_SetItemString(pyops_tensor_type.tp_dict, "register_hook", descr);
    Py_DECREF(descr);
    if (rc < 0)
        return -1;
    PyType_Modified(&pyops_tensor_type);
    Py_INCREF(&hook_handle_type);
    if (PyModule_AddObject(m, "TensorHookHandle", (PyObject *)&hook_handle_type) < 0) {
        Py_DECREF(&hook_handle_type);
        return -1;
    }
    return PyModule_AddFunctions(m, nn_methods);
}

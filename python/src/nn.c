/* What libops.nn and libops.optim need from C: Tensor subclasses (nn.Parameter is one,
 * made by _make_subclass as torch's Tensor._make_subclass) and the optimizers of
 * include/libops/ops_optim.h behind a capsule (libops/optim/optimizer.py wraps them). */
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
        /* The C options read 0 as "torch's default"; a 0 asked for here is set after. */
        ops_adam_options ao = {.lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps, .weight_decay = weight_decay,
                               .amsgrad = amsgrad, .maximize = maximize};
        if (beta1 == 0 && beta2 == 0)
            PyErr_SetString(PyExc_ValueError, "Adam: betas (0, 0) are not supported");
        else if (eps == 0)
            PyErr_SetString(PyExc_ValueError, "Adam: eps must be > 0");
        else if (kind[4] == 'w' && weight_decay > 0)
            o = ops_adamw_new(list, &ao);
        else /* AdamW without decay is Adam */
            o = ops_adam_new(list, &ao);
        if (PyErr_Occurred()) {
            PyMem_Free(ts);
            Py_DECREF(seq);
            return NULL;
        }
        if (o != NULL && lr == 0)
            (void)ops_optimizer_set_lr(o, 0.0);
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
    {NULL, NULL, 0, NULL},
};

int
pyops_nn_init(PyObject *m)
{
    return PyModule_AddFunctions(m, nn_methods);
}

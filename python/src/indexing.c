/* Tensor indexing: x[...] and x[...] = v, as torch does them.  Ints select, slices
 * (any positive step) narrow, None adds a dimension, ... stands for the dimensions not
 * named: all of these are views (select, slice, unsqueeze).  Integer and boolean
 * tensors (and lists of ints or bools) index advanced-style through index.Tensor, which
 * copies; assignment goes through copy_/fill_ on the basic view, or index_put_. */
#include "pyops.h"

#include <string.h>

/* The result of walking an index: a basic view and the advanced indices per dimension
 * of that view (NULL where none).  Owns its references. */
typedef struct walked {
    ops_tensor *view;
    ops_tensor *adv[OPS_MAX_DIMS];
    int nadv; /* entries used in adv (dimensions up to the last advanced one) */
    bool any_adv;
} walked;

static void
walked_release(walked *w)
{
    ops_tensor_release(w->view);
    w->view = NULL;
    for (int i = 0; i < OPS_MAX_DIMS; i++) {
        ops_tensor_release(w->adv[i]);
        w->adv[i] = NULL;
    }
}

static bool
replace(walked *w, ops_tensor *next)
{
    if (next == NULL)
        return false;
    ops_tensor_release(w->view);
    w->view = next;
    return true;
}

/* A list/tuple used as one index, or a non-integer non-bool tensor: as an index tensor
 * (new reference) or NULL with an exception. */
static ops_tensor *
index_tensor_of(PyObject *o)
{
    if (PYOPS_TENSOR_CHECK(o)) {
        ops_dtype dt = ops_tensor_dtype(PYOPS_T(o));
        if (!ops_dtype_is_integral(dt, true)) {
            PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
            return NULL;
        }
        return ops_tensor_retain(PYOPS_T(o));
    }
    PyObject *t = pyops_tensor_new_from_data(o, OPS_DTYPE_NONE, false);
    if (t == NULL)
        return NULL;
    ops_tensor *r = ops_tensor_retain(PYOPS_T(t));
    Py_DECREF(t);
    ops_dtype dt = ops_tensor_dtype(r);
    if (!ops_dtype_is_integral(dt, true)) {
        ops_tensor_release(r);
        PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
        return NULL;
    }
    return r;
}

/* How many dimensions of self an index item consumes; -1 with an exception. */
static int
consumed(PyObject *item, int64_t *out)
{
    if (item == Py_None || item == Py_Ellipsis) {
        *out = 0;
    } else if (PYOPS_TENSOR_CHECK(item)) {
        ops_tensor *t = PYOPS_T(item);
        *out = ops_tensor_dtype(t) == OPS_BOOL ? ops_tensor_ndim(t) : 1;
    } else if (PyBool_Check(item)) {
        *out = 0;
    } else {
        *out = 1;
    }
    return 0;
}

static int
walk(PyObject *self, PyObject *index, walked *w)
{
    memset(w, 0, sizeof *w);
    PyObject *tup;
    /* torch treats a tuple as several indices; a list is one advanced index */
    if (PyTuple_Check(index)) {
        tup = index;
        Py_INCREF(tup);
    } else {
        tup = PyTuple_Pack(1, index);
        if (tup == NULL)
            return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    ops_tensor *t = PYOPS_T(self);
    int64_t ndim = ops_tensor_ndim(t);
    int64_t used = 0;
    int ellipses = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t c;
        PyObject *it = PyTuple_GET_ITEM(tup, i);
        if (it == Py_Ellipsis)
            ellipses++;
        consumed(it, &c);
        used += c;
    }
    if (ellipses > 1) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        goto fail;
    }
    if (used > ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %lld", (long long)ndim);
        goto fail;
    }
    w->view = ops_tensor_retain(t);
    int64_t dim = 0; /* the dimension of w->view the next item applies to */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PyTuple_GET_ITEM(tup, i);
        if (it == Py_Ellipsis) {
            dim += ndim - used;
        } else if (it == Py_None) {
            if (!replace(w, ops_unsqueeze(w->view, dim))) {
                pyops_raise();
                goto fail;
            }
            dim++;
        } else if (PySlice_Check(it)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(it, &start, &stop, &step) < 0)
                goto fail;
            if (step <= 0) {
                PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
                goto fail;
            }
            PySliceObject *s = (PySliceObject *)it;
            int64_t st = start, en = stop;
            /* None bounds go to the op as None (it clamps the rest) */
            if (!replace(w, ops_slice(w->view, dim, s->start == Py_None ? NULL : &st,
                                      s->stop == Py_None ? NULL : &en, step))) {
                pyops_raise();
                goto fail;
            }
            dim++;
        } else if (PyBool_Check(it)) {
            /* x[True] adds a dimension like None; x[False] adds one of size 0 */
            if (!replace(w, ops_unsqueeze(w->view, dim))) {
                pyops_raise();
                goto fail;
            }
            if (it == Py_False) {
                int64_t none_val = 0;
                ops_tensor *idx = ops_tensor_from_data(&none_val, (ops_int_list){(int64_t[]){0}, 1}, OPS_INT64);
                if (idx == NULL) {
                    pyops_raise();
                    goto fail;
                }
                w->adv[dim] = idx;
                w->any_adv = true;
            }
            dim++;
        } else if (PYOPS_TENSOR_CHECK(it) || PyList_Check(it) || PyTuple_Check(it)) {
            ops_tensor *idx = index_tensor_of(it);
            if (idx == NULL)
                goto fail;
            if (ops_tensor_dtype(idx) == OPS_BOOL || ops_tensor_dtype(idx) == OPS_UINT8) {
                /* a mask over k dimensions: its nonzero() coordinates, one index each */
                int64_t k = ops_tensor_ndim(idx);
                ops_tensor *nz = ops_nonzero(idx);
                ops_tensor_release(idx);
                if (nz == NULL) {
                    pyops_raise();
                    goto fail;
                }
                if (k == 0) {
                    /* a 0-d mask: like True/False above */
                    ops_tensor_release(nz);
                    PyErr_SetString(PyExc_IndexError, "0-dimensional boolean tensors as indices are not supported");
                    goto fail;
                }
                for (int64_t j = 0; j < k; j++) {
                    if (dim + j >= OPS_MAX_DIMS) {
                        ops_tensor_release(nz);
                        PyErr_SetString(PyExc_IndexError, "too many indices");
                        goto fail;
                    }
                    w->adv[dim + j] = ops_select(nz, 1, j);
                    if (w->adv[dim + j] == NULL) {
                        ops_tensor_release(nz);
                        pyops_raise();
                        goto fail;
                    }
                }
                ops_tensor_release(nz);
                dim += k;
            } else {
                if (dim >= OPS_MAX_DIMS) {
                    ops_tensor_release(idx);
                    PyErr_SetString(PyExc_IndexError, "too many indices");
                    goto fail;
                }
                w->adv[dim] = idx;
                dim++;
            }
            w->any_adv = true;
        } else {
            int64_t k;
            int overflow = 0;
            PyObject *ix = PyIndex_Check(it) ? PyNumber_Index(it) : NULL;
            if (ix == NULL) {
                PyErr_Clear();
                PyErr_Format(PyExc_IndexError,
                             "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got %s)",
                             Py_TYPE(it)->tp_name);
                goto fail;
            }
            k = PyLong_AsLongLongAndOverflow(ix, &overflow);
            Py_DECREF(ix);
            if (overflow) {
                PyErr_SetString(PyExc_IndexError, "index out of range");
                goto fail;
            }
            int64_t size = ops_tensor_sizes(w->view)[dim];
            if (k < -size || k >= size) {
                PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %lld with size %lld",
                             (long long)k, (long long)dim, (long long)size);
                goto fail;
            }
            if (!replace(w, ops_select(w->view, dim, k))) {
                pyops_raise();
                goto fail;
            }
        }
    }
    w->nadv = (int)ops_tensor_ndim(w->view);
    Py_DECREF(tup);
    return 0;
fail:
    Py_DECREF(tup);
    walked_release(w);
    return -1;
}

static ops_tensor_list
adv_list(walked *w)
{
    /* trailing dimensions without an index need no entry */
    int n = w->nadv;
    while (n > 0 && w->adv[n - 1] == NULL)
        n--;
    return (ops_tensor_list){(const ops_tensor *const *)w->adv, n};
}

PyObject *
pyops_tensor_getitem(PyObject *self, PyObject *index)
{
    walked w;
    if (walk(self, index, &w) < 0)
        return NULL;
    ops_tensor *r;
    if (w.any_adv) {
        r = ops_index(w.view, adv_list(&w));
    } else {
        r = w.view;
        w.view = NULL;
    }
    walked_release(&w);
    return pyops_wrap(r);
}

int
pyops_tensor_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "Tensor does not support item deletion");
        return -1;
    }
    walked w;
    int rc = -1;
    ops_tensor *vt = NULL;
    ops_scalar s;
    bool is_scalar = false;
    if (PYOPS_TENSOR_CHECK(value)) {
        vt = ops_tensor_retain(PYOPS_T(value));
    } else if (pyops_scalar_from_object(value, &s)) {
        is_scalar = true;
    } else {
        PyObject *o = pyops_tensor_new_from_data(value, ops_tensor_dtype(PYOPS_T(self)), false);
        if (o == NULL)
            return -1;
        vt = ops_tensor_retain(PYOPS_T(o));
        Py_DECREF(o);
    }
    if (walk(self, index, &w) < 0)
        goto done;
    ops_status st;
    if (!w.any_adv) {
        st = is_scalar ? ops_fill_(w.view, s) : ops_copy_(w.view, vt, false);
    } else {
        if (is_scalar) {
            vt = ops_scalar_tensor(s, ops_tensor_dtype(w.view));
            if (vt == NULL) {
                walked_release(&w);
                pyops_raise();
                goto done;
            }
        }
        st = ops_index_put_(w.view, adv_list(&w), vt, false);
    }
    walked_release(&w);
    if (st != OPS_OK) {
        pyops_raise_status(st);
        goto done;
    }
    rc = 0;
done:
    ops_tensor_release(vt);
    return rc;
}

/* Tensor indexing: x[...] and x[...] = v, as torch does them.  Ints select, slices
 * (any positive step) narrow, None adds a dimension, ... stands for the dimensions not
 * named: all of these are views (select, slice, unsqueeze).  Integer and boolean
 * tensors (and lists of ints or bools) index advanced-style through index.Tensor, which
 * copies; assignment goes through copy_/fill_ on the basic view, or index_put_. */
#include "pyops.h"
#include "ops_op_copy.h"
#include "ops_op_fill.h"
#include "ops_op_index.h"
#include "ops_op_index_put.h"
#include "ops_op_select.h"
#include "ops_op_slice.h"
#include "ops_op_unsqueeze.h"

#include <string.h>

/* The result of walking an index: a basic view, and the advanced indices for
 * index/index_put_ on it.  at[d] is the index tensor that starts at dimension d of the
 * view and width[d] the dimensions it covers: 1 for an integer index, k for a k-dim
 * boolean mask, which goes to the op whole so that the op checks its shape against the
 * dimensions it covers (turning it into nonzero() coordinates here lost that check).
 * Owns its references. */
typedef struct walked {
    ops_tensor *view;
    ops_tensor *at[OPS_MAX_DIMS];
    int width[OPS_MAX_DIMS];
    bool any_adv;
    const ops_tensor *list[OPS_MAX_DIMS]; /* adv_list's result, borrowed from at[] */
} walked;

static void
walked_release(walked *w)
{
    ops_tensor_release(w->view);
    w->view = NULL;
    for (int i = 0; i < OPS_MAX_DIMS; i++) {
        ops_tensor_release(w->at[i]);
        w->at[i] = NULL;
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

static bool
is_mask_dtype(ops_dtype dt)
{
    return dt == OPS_BOOL || dt == OPS_UINT8;
}

/* A list/tuple, array or tensor used as one index: as an index tensor (new reference)
 * or NULL with an exception. */
static ops_tensor *
index_tensor_of(PyObject *o)
{
    ops_tensor *r;
    if (PYOPS_TENSOR_CHECK(o)) {
        r = ops_tensor_retain(PYOPS_T(o));
    } else {
        PyObject *t = pyops_tensor_new_from_data(o, OPS_DTYPE_NONE, false);
        if (t == NULL)
            return NULL;
        r = ops_tensor_retain(PYOPS_T(t));
        Py_DECREF(t);
    }
    ops_dtype dt = ops_tensor_dtype(r);
    if (!ops_dtype_is_integral(dt, true)) {
        ops_tensor_release(r);
        PyErr_Format(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors (got %s)",
                     ops_dtype_name(dt));
        return NULL;
    }
    return r;
}

/* One item of an index, classified once so that counting the dimensions it consumes
 * and applying it agree. */
typedef enum item_kind { ITEM_NONE, ITEM_ELLIPSIS, ITEM_SLICE, ITEM_BOOL, ITEM_INT, ITEM_TENSOR } item_kind;

typedef struct item {
    item_kind kind;
    PyObject *obj;      /* the Python object (borrowed) */
    bool b;             /* ITEM_BOOL: its value */
    ops_tensor *tensor; /* ITEM_TENSOR: owned */
} item;

/* A buffer exporter (a NumPy array or scalar) seen as an index: a 0-d bool is a bool,
 * another 0-d one an integer (or an error from the integer path), anything else an
 * index tensor.  0 classified, -1 with an exception. */
static int
classify_buffer(PyObject *o, item *out)
{
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        out->kind = ITEM_INT; /* let the integer path say what is wrong with it */
        return 0;
    }
    const bool scalar = view.ndim == 0;
    const bool boolean = view.format != NULL && strcmp(view.format, "?") == 0 && view.itemsize == 1;
    bool value = scalar && boolean && *(const unsigned char *)view.buf != 0;
    PyBuffer_Release(&view);
    if (scalar && boolean) {
        out->kind = ITEM_BOOL;
        out->b = value;
        return 0;
    }
    if (scalar) {
        out->kind = ITEM_INT;
        return 0;
    }
    out->kind = ITEM_TENSOR;
    out->tensor = index_tensor_of(o);
    return out->tensor == NULL ? -1 : 0;
}

static int
classify(PyObject *o, item *out)
{
    memset(out, 0, sizeof *out);
    out->obj = o;
    if (o == Py_None) {
        out->kind = ITEM_NONE;
    } else if (o == Py_Ellipsis) {
        out->kind = ITEM_ELLIPSIS;
    } else if (PySlice_Check(o)) {
        out->kind = ITEM_SLICE;
    } else if (PyBool_Check(o)) {
        out->kind = ITEM_BOOL;
        out->b = o == Py_True;
    } else if (PyLong_Check(o)) {
        out->kind = ITEM_INT;
    } else if (PYOPS_TENSOR_CHECK(o)) {
        ops_tensor *t = PYOPS_T(o);
        if (ops_tensor_ndim(t) == 0 && is_mask_dtype(ops_tensor_dtype(t))) {
            /* a 0-d mask acts as the bool it holds, as in torch */
            ops_scalar v;
            if (ops_tensor_item(t, &v) != OPS_OK) {
                pyops_raise();
                return -1;
            }
            out->kind = ITEM_BOOL;
            out->b = ops_scalar_to_double(v) != 0;
            return 0;
        }
        out->kind = ITEM_TENSOR;
        out->tensor = index_tensor_of(o);
        return out->tensor == NULL ? -1 : 0;
    } else if (PyList_Check(o) || PyTuple_Check(o)) {
        out->kind = ITEM_TENSOR;
        out->tensor = index_tensor_of(o);
        return out->tensor == NULL ? -1 : 0;
    } else if (PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyByteArray_Check(o)) {
        return classify_buffer(o, out);
    } else {
        out->kind = ITEM_INT;
    }
    return 0;
}

/* How many dimensions of self an item consumes. */
static int64_t
consumed(const item *it)
{
    switch (it->kind) {
    case ITEM_SLICE:
    case ITEM_INT:
        return 1;
    case ITEM_TENSOR:
        return is_mask_dtype(ops_tensor_dtype(it->tensor)) ? ops_tensor_ndim(it->tensor) : 1;
    default:
        return 0;
    }
}

/* An int64 index tensor of n zeros (n is 0 or 1): what a bool index selects along the
 * dimension of size 1 it adds. */
static ops_tensor *
bool_index(bool value)
{
    const int64_t zero = 0, n = value ? 1 : 0;
    return ops_tensor_from_data(&zero, (ops_int_list){&n, 1}, OPS_INT64);
}

/* Record index tensor t (stolen) for dimensions dim .. dim + width - 1 of the view. */
static int
record(walked *w, int64_t dim, int width, ops_tensor *t)
{
    if (dim + width > OPS_MAX_DIMS) {
        ops_tensor_release(t);
        PyErr_Format(PyExc_IndexError, "too many indices: libops tensors have at most %d dimensions", OPS_MAX_DIMS);
        return -1;
    }
    w->at[dim] = t;
    w->width[dim] = width;
    w->any_adv = true;
    return 0;
}

/* Select index ix (an int object) of dimension dim. */
static int
apply_int(walked *w, int64_t dim, PyObject *obj)
{
    PyObject *ix = PyIndex_Check(obj) ? PyNumber_Index(obj) : NULL;
    if (ix == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_IndexError,
                     "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                     "valid indices (got %s)",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long k = PyLong_AsLongLongAndOverflow(ix, &overflow);
    int64_t size = ops_tensor_sizes(w->view)[dim];
    if (overflow) {
        PyErr_Format(PyExc_IndexError,
                     "index %S is out of bounds for dimension %lld with size %lld (it does not fit in int64)", ix,
                     (long long)dim, (long long)size);
        Py_DECREF(ix);
        return -1;
    }
    Py_DECREF(ix);
    if (k == -1 && PyErr_Occurred())
        return -1;
    if (k < -size || k >= size) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %lld with size %lld", k,
                     (long long)dim, (long long)size);
        return -1;
    }
    if (!replace(w, ops_select(w->view, dim, k))) {
        pyops_raise();
        return -1;
    }
    return 0;
}

/* Whether a non-tuple index is read as a tuple of indices, by torch's rule (taken from
 * NumPy's old one): a short sequence (under 32 items) of which an item is a tensor, a
 * sequence, a slice, ... or None, so x[[[0, 2], [1, 3]]] is x[[0, 2], [1, 3]] and
 * x[[slice(0, 3), 1]] is x[0:3, 1], while x[[0, 2]] stays one index array.  A tensor or
 * an array (a buffer exporter, read as an index tensor whole, as NumPy does) and str are
 * never split; a sequence that fails to answer is one index, its error cleared, as in
 * torch. */
static bool
sequence_as_tuple(PyObject *index)
{
    if (PYOPS_TENSOR_CHECK(index) || PyUnicode_Check(index) || PyObject_CheckBuffer(index) ||
        !PySequence_Check(index))
        return false;
    const Py_ssize_t n = PySequence_Size(index);
    if (n < 0) {
        PyErr_Clear();
        return false;
    }
    if (n >= 32)
        return false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_GetItem(index, i);
        if (o == NULL) {
            PyErr_Clear();
            return false;
        }
        const bool split = PYOPS_TENSOR_CHECK(o) || PySequence_Check(o) || PySlice_Check(o) || o == Py_Ellipsis ||
                           o == Py_None;
        Py_DECREF(o);
        if (split)
            return true;
    }
    return false;
}

static int
walk(PyObject *self, PyObject *index, walked *w)
{
    memset(w, 0, sizeof *w);
    PyObject *tup;
    /* a tuple is several indices, and so is a list that holds indices of their own */
    if (PyTuple_Check(index)) {
        tup = index;
        Py_INCREF(tup);
    } else if (sequence_as_tuple(index)) {
        tup = PySequence_Tuple(index);
        if (tup == NULL)
            return -1;
    } else {
        tup = PyTuple_Pack(1, index);
        if (tup == NULL)
            return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    item *items = PyMem_Calloc((size_t)n + 1, sizeof *items);
    if (items == NULL) {
        Py_DECREF(tup);
        PyErr_NoMemory();
        return -1;
    }
    ops_tensor *t = PYOPS_T(self);
    int64_t ndim = ops_tensor_ndim(t);
    int64_t used = 0;
    int ellipses = 0;
    int64_t true_dims[OPS_MAX_DIMS];
    int ntrue = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (classify(PyTuple_GET_ITEM(tup, i), &items[i]) < 0)
            goto fail;
        ellipses += items[i].kind == ITEM_ELLIPSIS;
        used += consumed(&items[i]);
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
        item *it = &items[i];
        switch (it->kind) {
        case ITEM_ELLIPSIS:
            dim += ndim - used;
            break;
        case ITEM_NONE:
            if (!replace(w, ops_unsqueeze(w->view, dim))) {
                pyops_raise();
                goto fail;
            }
            dim++;
            break;
        case ITEM_SLICE: {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(it->obj, &start, &stop, &step) < 0)
                goto fail;
            if (step <= 0) {
                PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
                goto fail;
            }
            PySliceObject *s = (PySliceObject *)it->obj;
            int64_t st = start, en = stop;
            /* None bounds go to the op as None (it clamps the rest) */
            if (!replace(w, ops_slice(w->view, dim, s->start == Py_None ? NULL : &st,
                                      s->stop == Py_None ? NULL : &en, step))) {
                pyops_raise();
                goto fail;
            }
            dim++;
            break;
        }
        case ITEM_BOOL:
            /* x[True] adds a dimension like None and x[False] one of size 0 (torch's
             * index tensors [0] and [], the first only needed beside other advanced
             * indices, with which it broadcasts) */
            if (!replace(w, ops_unsqueeze(w->view, dim))) {
                pyops_raise();
                goto fail;
            }
            if (!it->b) {
                ops_tensor *idx = bool_index(false);
                if (idx == NULL) {
                    pyops_raise();
                    goto fail;
                }
                if (record(w, dim, 1, idx) < 0)
                    goto fail;
            } else if (dim < OPS_MAX_DIMS) {
                true_dims[ntrue++] = dim;
            }
            dim++;
            break;
        case ITEM_TENSOR: {
            const int width = (int)consumed(it);
            ops_tensor *idx = it->tensor;
            it->tensor = NULL;
            if (record(w, dim, width, idx) < 0)
                goto fail;
            dim += width;
            break;
        }
        case ITEM_INT:
            if (apply_int(w, dim, it->obj) < 0)
                goto fail;
            break;
        }
    }
    for (int j = 0; j < ntrue && w->any_adv; j++) {
        ops_tensor *idx = bool_index(true);
        if (idx == NULL) {
            pyops_raise();
            goto fail;
        }
        if (record(w, true_dims[j], 1, idx) < 0)
            goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        ops_tensor_release(items[i].tensor);
    PyMem_Free(items);
    Py_DECREF(tup);
    return 0;
fail:
    for (Py_ssize_t i = 0; i < n; i++)
        ops_tensor_release(items[i].tensor);
    PyMem_Free(items);
    Py_DECREF(tup);
    walked_release(w);
    return -1;
}

/* The indices argument of index/index_put_: one entry per dimension of the view up to
 * the last indexed one (None where no index), a mask standing for all it covers. */
static ops_tensor_list
adv_list(walked *w)
{
    int n = 0, last = 0;
    const int ndim = (int)ops_tensor_ndim(w->view);
    for (int d = 0; d < ndim && d < OPS_MAX_DIMS;) {
        w->list[n++] = w->at[d];
        if (w->at[d] != NULL) {
            last = n;
            d += w->width[d] > 0 ? w->width[d] : 1;
        } else {
            d++;
        }
    }
    return (ops_tensor_list){w->list, last};
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

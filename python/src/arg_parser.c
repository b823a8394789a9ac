/* The generic argument parser of libops._C: binds a vectorcall's positional and
 * keyword arguments to one overload of a Python name (the tables of the generated
 * python_bindings.c), converts them to boxed values, calls the registry entry and turns
 * its returns into Python objects.  Every generated function and method goes through
 * pyops_call; nothing here is specific to one op.  The conversion of one argument is
 * in arg_convert.c. */
#include "pyops_args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void
parsed_free(pyops_parsed *p)
{
    for (int i = 0; i < p->nheap; i++)
        PyMem_Free(p->heap[i]);
    p->nheap = 0;
}

/* Position of the argument named `name` (functions call self `input`), or -1. */
static int
find_arg(const pyops_sig *sig, bool method, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) {
        PyErr_Clear();
        return -1;
    }
    for (int i = 0; i < sig->nargs; i++) {
        const char *an = sig->args[i].name;
        if (strcmp(an, "self") == 0) {
            if (method)
                continue;
            if (strcmp(s, "input") == 0 || strcmp(s, "self") == 0)
                return i;
            continue;
        }
        if (strcmp(an, s) == 0)
            return i;
    }
    return -1;
}

static ops_ivalue
default_value(const pyops_arg *a)
{
    if (a->flags & PYOPS_F_DEFAULT_NONE)
        return ops_ivalue_none();
    switch (a->type) {
    case PYOPS_T_SCALAR:
        return ops_ivalue_scalar(a->def.scalar);
    case PYOPS_T_INT:
        return ops_ivalue_int(a->def.i);
    case PYOPS_T_INT_LIST:
        return ops_ivalue_int_list(a->def.ints);
    case PYOPS_T_BOOL_LIST:
        return ops_ivalue_bool_list(a->def.bools);
    case PYOPS_T_FLOAT:
        return ops_ivalue_double(a->def.d);
    case PYOPS_T_BOOL:
        return ops_ivalue_bool(a->def.b);
    case PYOPS_T_STR:
        return ops_ivalue_str(a->def.str);
    case PYOPS_T_DTYPE:
        return ops_ivalue_dtype(a->def.dtype);
    case PYOPS_T_MEMORY_FORMAT:
        return ops_ivalue_memory_format(a->def.memory_format);
    case PYOPS_T_DEVICE: {
        ops_device d = OPS_DEVICE_CPU;
        if (a->def.str != NULL && ops_device_parse(a->def.str, &d) != OPS_OK)
            d = OPS_DEVICE_CPU;
        return ops_ivalue_device(d);
    }
    default:
        return ops_ivalue_none();
    }
}

/* A type as torch's messages name it (Tensor, not libops.Tensor). */
static const char *
type_name(PyObject *o)
{
    return PYOPS_TENSOR_CHECK(o) ? "Tensor" : Py_TYPE(o)->tp_name;
}

static bool
is_factory(const pyops_sig *sig)
{
    for (int i = 0; i < sig->nargs; i++)
        if (sig->args[i].type == PYOPS_T_DEVICE)
            return true;
    return false;
}

/* What an argument must be, for messages. */
static const char *
expected_name(const pyops_arg *a)
{
    static const char *const names[] = {
        [PYOPS_T_TENSOR] = "Tensor",       [PYOPS_T_TENSOR_LIST] = "a sequence of Tensors",
        [PYOPS_T_SCALAR] = "Number",       [PYOPS_T_INT] = "int",
        [PYOPS_T_INT_LIST] = "tuple of ints", [PYOPS_T_FLOAT] = "float",
        [PYOPS_T_BOOL] = "bool",           [PYOPS_T_STR] = "str",
        [PYOPS_T_DTYPE] = "dtype",         [PYOPS_T_DEVICE] = "device or str",
        [PYOPS_T_GENERATOR] = "Generator",  [PYOPS_T_MEMORY_FORMAT] = "memory_format",
        [PYOPS_T_BOOL_LIST] = "tuple of bools",
    };
    static const char *const optional[] = {
        [PYOPS_T_TENSOR] = "Tensor or None",   [PYOPS_T_TENSOR_LIST] = "a sequence of Tensors or None",
        [PYOPS_T_SCALAR] = "Number or None",   [PYOPS_T_INT] = "int or None",
        [PYOPS_T_INT_LIST] = "tuple of ints or None", [PYOPS_T_FLOAT] = "float or None",
        [PYOPS_T_BOOL] = "bool or None",       [PYOPS_T_STR] = "str or None",
        [PYOPS_T_DTYPE] = "dtype or None",     [PYOPS_T_DEVICE] = "device, str or None",
        [PYOPS_T_GENERATOR] = "Generator",     [PYOPS_T_MEMORY_FORMAT] = "memory_format or None",
        [PYOPS_T_BOOL_LIST] = "tuple of bools",
    };
    _Static_assert(sizeof names / sizeof names[0] == PYOPS_T_BOOL_LIST + 1, "a name per pyops_type");
    _Static_assert(sizeof optional / sizeof optional[0] == PYOPS_T_BOOL_LIST + 1, "a name per pyops_type");
    if ((unsigned)a->type > PYOPS_T_BOOL_LIST)
        return "?";
    return (a->flags & PYOPS_F_OPTIONAL) ? optional[a->type] : names[a->type];
}

/* Try one overload.  1 bound (p filled), 0 no match.  With `why` set, a mismatch
 * writes a torch-style reason there (empty when only the list of signatures can say
 * what is wrong). */
static int
bind(const pyops_sig *sig, bool method, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
     PyObject *kwnames, pyops_parsed *p, pyops_reason *why)
{
    const size_t whylen = sizeof why->text;
    const int n = sig->nargs;
    if (n > PYOPS_MAX_ARGS)
        return 0;
    for (int i = 0; i < n; i++) {
        p->obj[i] = NULL;
        p->pos[i] = 0;
    }
    p->nints = p->ntensors = p->nbools = 0;
    p->nheap = 0;
    p->requires_grad = -1;

    /* positional arguments fill the non-keyword-only parameters in order (self is bound
     * to the receiver for methods) */
    Py_ssize_t k = 0;
    int last_pos = -1;
    for (int i = 0; i < n; i++) {
        const pyops_arg *a = &sig->args[i];
        if (method && i == sig->self_index) {
            p->obj[i] = self;
            continue;
        }
        if (a->flags & PYOPS_F_KWONLY)
            continue;
        last_pos = i;
        if (k < nargs) {
            p->pos[i] = (int)k + 1;
            p->obj[i] = args[k++];
        }
    }
    PyObject *varargs = NULL;
    if (k < nargs) {
        /* torch's varargs sizes: zeros(2, 3), x.view(2, 3), x.permute(1, 0): an int[]
         * that is the only positional parameter left takes the remaining ints */
        int target = -1;
        for (int i = 0; i <= last_pos; i++) {
            const pyops_arg *a = &sig->args[i];
            if (method && i == sig->self_index)
                continue;
            if (!(a->flags & PYOPS_F_KWONLY)) {
                target = i;
                break;
            }
        }
        if (target < 0 || sig->args[target].type != PYOPS_T_INT_LIST) {
            if (why)
                snprintf(why->text, whylen, "%s() takes %d positional arguments but %zd were given", sig->pyname,
                         last_pos + 1 - (method ? 1 : 0), nargs);
            return 0;
        }
        /* every positional argument must be an int, and the int[] must be the only
         * positional parameter taking them */
        for (Py_ssize_t j = 0; j < nargs; j++) {
            int64_t dummy;
            int rc = pyops_to_index_checked(args[j], &dummy);
            if (rc < 0 && why) {
                char r[64];
                pyops_short_repr(args[j], r, sizeof r);
                snprintf(why->text, whylen, "%s(): argument '%s': element %zd (%s) does not fit in int64",
                         sig->pyname, sig->args[target].name, j, r);
                why->value = true;
            }
            /* another type: the signatures say what the ints could have been */
            if (rc != 1)
                return 0;
        }
        varargs = PyTuple_New(nargs);
        if (varargs == NULL) {
            PyErr_Clear();
            return 0;
        }
        for (Py_ssize_t j = 0; j < nargs; j++) {
            Py_INCREF(args[j]);
            PyTuple_SET_ITEM(varargs, j, args[j]);
        }
        for (int i = target + 1; i <= last_pos; i++) {
            if (!(method && i == sig->self_index)) {
                p->obj[i] = NULL;
                p->pos[i] = 0;
            }
        }
        p->obj[target] = varargs;
    }

    int rc = 0;
    if (kwnames != NULL) {
        Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t j = 0; j < nk; j++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, j);
            int i = find_arg(sig, method, name);
            if (i < 0 && is_factory(sig) && PyUnicode_CompareWithASCIIString(name, "requires_grad") == 0 &&
                PyBool_Check(args[nargs + j])) {
                /* torch's factories take requires_grad=; the schema has no such argument */
                p->requires_grad = args[nargs + j] == Py_True;
                continue;
            }
            if (i < 0) {
                if (why)
                    snprintf(why->text, whylen, "%s() got an unexpected keyword argument '%s'", sig->pyname,
                             PyUnicode_AsUTF8(name));
                goto done;
            }
            if (p->obj[i] != NULL) {
                if (why)
                    snprintf(why->text, whylen, "%s() got multiple values for argument '%s'", sig->pyname,
                             PyUnicode_AsUTF8(name));
                goto done;
            }
            p->obj[i] = args[nargs + j];
        }
    }

    for (int i = 0; i < n; i++) {
        const pyops_arg *a = &sig->args[i];
        const char *shown = (!method && i == sig->self_index) ? "input" : a->name;
        if (p->obj[i] == NULL) {
            if (!(a->flags & PYOPS_F_HAS_DEFAULT)) {
                if (why)
                    snprintf(why->text, whylen, "%s() missing required argument '%s'", sig->pyname, shown);
                goto done;
            }
            p->iv[i] = default_value(a);
            continue;
        }
        pyops_reason detail = {"", false};
        if (!pyops_convert_arg(p, a, p->obj[i], &p->iv[i], why ? &detail : NULL)) {
            if (why) {
                char at[32] = "";
                if (p->pos[i] > 0)
                    snprintf(at, sizeof at, " (position %d)", p->pos[i]);
                if (detail.text[0] != '\0')
                    snprintf(why->text, whylen, "%s(): argument '%s'%s%.300s", sig->pyname, shown, at, detail.text);
                else
                    snprintf(why->text, whylen, "%s(): argument '%s'%s must be %s, not %s", sig->pyname, shown, at,
                             expected_name(a), type_name(p->obj[i]));
                why->value = detail.value;
            }
            goto done;
        }
    }
    rc = 1;
done:
    if (rc == 0)
        parsed_free(p);
    /* the varargs tuple's items are borrowed from args, which outlive the call; the
     * ivalues point into the arena, not into the tuple */
    Py_XDECREF(varargs);
    return rc;
}

static PyObject *
box_return(const pyops_sig *sig, int j, ops_ivalue *r)
{
    switch (r->tag) {
    case OPS_IVALUE_TENSOR: {
        ops_tensor *t = r->v.tensor;
        r->tag = OPS_IVALUE_NONE;
        return pyops_wrap(t);
    }
    case OPS_IVALUE_TENSOR_LIST: {
        PyObject *tup = PyTuple_New(r->v.tensor_list.len);
        if (tup == NULL)
            return NULL;
        for (int64_t i = 0; i < r->v.tensor_list.len; i++) {
            PyObject *o = pyops_wrap(ops_tensor_retain(r->v.tensor_list.data[i]));
            if (o == NULL) {
                Py_DECREF(tup);
                return NULL;
            }
            PyTuple_SET_ITEM(tup, i, o);
        }
        return tup;
    }
    case OPS_IVALUE_BOOL:
        return PyBool_FromLong(r->v.b);
    case OPS_IVALUE_INT:
        return PyLong_FromLongLong(r->v.i);
    case OPS_IVALUE_DOUBLE:
        return PyFloat_FromDouble(r->v.d);
    case OPS_IVALUE_SCALAR:
        return pyops_scalar_to_object(r->v.scalar);
    case OPS_IVALUE_NONE:
        Py_RETURN_NONE;
    default:
        PyErr_Format(PyExc_RuntimeError, "%s: return %d has an unsupported type", sig->full_name, j);
        return NULL;
    }
}

bool
pyops_is_big_call(const ops_ivalue *iv, int n)
{
    bool big = false;
    for (int i = 0; i < n; i++) {
        /* a Tensor[] argument borrows its tensors from a Python list another thread could
         * change while the GIL is released: such calls keep the GIL */
        if (iv[i].tag == OPS_IVALUE_TENSOR_LIST)
            return false;
        if (iv[i].tag == OPS_IVALUE_TENSOR && iv[i].v.tensor != NULL &&
            ops_tensor_numel(iv[i].v.tensor) >= PYOPS_GIL_RELEASE_NUMEL)
            big = true;
    }
    return big;
}

static PyObject *
invoke(const pyops_sig *sig, pyops_parsed *p)
{
    ops_ivalue rets[8];
    PyObject *result = NULL;
    int nr = sig->nrets;
    for (int j = 0; j < nr && j < 8; j++)
        rets[j] = ops_ivalue_none();
    if (nr > 8) {
        PyErr_Format(PyExc_RuntimeError, "%s: too many returns", sig->full_name);
        goto done;
    }
    ops_status st;
    if (pyops_is_big_call(p->iv, sig->nargs)) {
        /* other Python threads run while a large op computes; libops keeps its error
         * message and grad mode per thread, so nothing here needs the GIL */
        Py_BEGIN_ALLOW_THREADS
        st = sig->op->call(p->iv, rets);
        Py_END_ALLOW_THREADS
    } else {
        st = sig->op->call(p->iv, rets);
    }
    if (st != OPS_OK) {
        pyops_raise_status(st);
        goto done;
    }
    if (sig->kind == OPS_KIND_INPLACE || sig->kind == OPS_KIND_OUT) {
        /* return the very objects written (x.add_(y) is x; add(.., out=o) is o) */
        int nout = 0;
        PyObject *outs[8];
        for (int i = 0; i < sig->nargs; i++) {
            const pyops_arg *a = &sig->args[i];
            if ((sig->kind == OPS_KIND_INPLACE && i == sig->self_index) ||
                (sig->kind == OPS_KIND_OUT && (a->flags & PYOPS_F_OUT))) {
                if (nout < 8)
                    outs[nout++] = p->obj[i];
            }
        }
        if (nout == 1) {
            result = outs[0];
            Py_INCREF(result);
        } else {
            result = PyTuple_New(nout);
            if (result != NULL) {
                for (int i = 0; i < nout; i++) {
                    Py_INCREF(outs[i]);
                    PyTuple_SET_ITEM(result, i, outs[i]);
                }
            }
        }
        goto done;
    }
    if (nr == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    if (nr == 1) {
        if (p->requires_grad == 1 && rets[0].tag == OPS_IVALUE_TENSOR) {
            st = ops_tensor_set_requires_grad(rets[0].v.tensor, true);
            if (st != OPS_OK) {
                pyops_raise_status(st);
                goto done;
            }
        }
        result = box_return(sig, 0, &rets[0]);
        goto done;
    }
    result = sig->ret_type != NULL ? PyStructSequence_New(sig->ret_type) : PyTuple_New(nr);
    if (result == NULL)
        goto done;
    for (int j = 0; j < nr; j++) {
        PyObject *o = box_return(sig, j, &rets[j]);
        if (o == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        if (sig->ret_type != NULL)
            PyStructSequence_SET_ITEM(result, j, o);
        else
            PyTuple_SET_ITEM(result, j, o);
    }
done:
    for (int j = 0; j < nr && j < 8; j++)
        ops_ivalue_release(&rets[j]);
    return result;
}

/* torch's message when no overload fits: what was given, then every accepted
 * signature.  Returns NULL with the TypeError set. */
static PyObject *
raise_signatures(const pyops_name *nm, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *got = PyUnicode_FromString("");
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; got != NULL && j < nargs + nk; j++) {
        PyObject *piece;
        const char *tn = type_name(args[j]);
        if (j < nargs)
            piece = PyUnicode_FromFormat("%s%s", j ? ", " : "", tn);
        else
            piece = PyUnicode_FromFormat("%s%U=%s", j ? ", " : "", PyTuple_GET_ITEM(kwnames, j - nargs), tn);
        if (piece == NULL) {
            Py_CLEAR(got);
            break;
        }
        PyObject *cat = PyUnicode_Concat(got, piece);
        Py_DECREF(piece);
        Py_SETREF(got, cat);
    }
    if (got == NULL)
        return NULL;
    PyObject *msg = PyUnicode_FromFormat("%s() received an invalid combination of arguments - got (%U), but "
                                         "expected one of:",
                                         nm->name, got);
    Py_DECREF(got);
    for (int s = 0; msg != NULL && s < nm->nsigs; s++) {
        const pyops_sig *sig = nm->sigs[s];
        PyObject *line = PyUnicode_FromFormat("\n * %s", nm->method ? sig->pysig_method : sig->pysig);
        if (line == NULL) {
            Py_CLEAR(msg);
            break;
        }
        PyObject *cat = PyUnicode_Concat(msg, line);
        Py_DECREF(line);
        Py_SETREF(msg, cat);
    }
    if (msg != NULL) {
        PyErr_SetObject(PyExc_TypeError, msg);
        Py_DECREF(msg);
    }
    return NULL;
}

/* Keyword flags that torch's Python layer, not its schema, turns into another op:
 * nonzero(as_tuple=True) is nonzero_numpy (a tuple of 1-D index tensors, one per dim;
 * torch.nonzero's binding), max_pool1d/2d(return_indices=True) the *_with_indices ops
 * (torch.nn.functional's).  flag=False is the op itself. */
static const struct flag_op {
    const char *name, *flag, *target;
} flag_ops[] = {
    {"nonzero", "as_tuple", "nonzero_numpy"},
    {"max_pool1d", "return_indices", "max_pool1d_with_indices"},
    {"max_pool2d", "return_indices", "max_pool2d_with_indices"},
};

static PyObject *
call_by_name(const char *name, bool method, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
             PyObject *kwnames)
{
    for (const PyMethodDef *d = method ? pyops_generated_methods : pyops_generated_functions; d->ml_name; d++)
        if (strcmp(d->ml_name, name) == 0)
            return ((PyObject * (*)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *))(void (*)(void))
                        d->ml_meth)(self, args, nargs, kwnames);
    return PyErr_Format(PyExc_RuntimeError, "libops: no generated %s named %s", method ? "method" : "function",
                        name);
}

/* *handled false: nm has no such flag among the keywords, nothing was done. */
static PyObject *
call_flagged(const pyops_name *nm, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             bool *handled)
{
    *handled = false;
    const struct flag_op *e = NULL;
    for (size_t i = 0; i < sizeof flag_ops / sizeof flag_ops[0] && e == NULL; i++)
        if (strcmp(flag_ops[i].name, nm->name) == 0)
            e = &flag_ops[i];
    if (e == NULL)
        return NULL;
    const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    Py_ssize_t at = -1;
    bool has_out = false;
    for (Py_ssize_t j = 0; j < nk; j++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, j);
        if (PyUnicode_CompareWithASCIIString(k, e->flag) == 0)
            at = j;
        else if (PyUnicode_CompareWithASCIIString(k, "out") == 0)
            has_out = true;
    }
    if (at < 0)
        return NULL;
    *handled = true;
    PyObject *v = args[nargs + at];
    if (!PyBool_Check(v))
        return PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be bool, not %s", nm->name, e->flag,
                            type_name(v));
    if (v == Py_True && has_out)
        return PyErr_Format(PyExc_RuntimeError, "%s does not support the out kwarg when %s is True", nm->name,
                            e->flag);
    /* the same call without the flag */
    PyObject **rest = PyMem_Malloc((size_t)(nargs + nk) * sizeof *rest);
    PyObject *names = PyTuple_New(nk - 1);
    PyObject *r = NULL;
    if (rest == NULL || names == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < nargs; j++)
        rest[j] = args[j];
    for (Py_ssize_t j = 0, o = 0; j < nk; j++) {
        if (j == at)
            continue;
        rest[nargs + o] = args[nargs + j];
        PyObject *k = PyTuple_GET_ITEM(kwnames, j);
        Py_INCREF(k);
        PyTuple_SET_ITEM(names, o, k);
        o++;
    }
    if (v == Py_True)
        r = call_by_name(e->target, nm->method, self, rest, nargs, nk > 1 ? names : NULL);
    else
        r = pyops_call(nm, self, rest, nargs, nk > 1 ? names : NULL);
done:
    PyMem_Free(rest);
    Py_XDECREF(names);
    return r;
}

PyObject *
pyops_call(const pyops_name *nm, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    pyops_parsed p;
    nargs = PyVectorcall_NARGS(nargs);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        bool handled;
        PyObject *r = call_flagged(nm, self, args, nargs, kwnames, &handled);
        if (handled)
            return r;
    }
    for (int s = 0; s < nm->nsigs; s++) {
        const pyops_sig *sig = nm->sigs[s];
        if (bind(sig, nm->method, self, args, nargs, kwnames, &p, NULL)) {
            PyObject *r = invoke(sig, &p);
            parsed_free(&p);
            return r;
        }
    }
    if (PyErr_Occurred())
        return NULL;
    /* one overload (an out= form aside, which torch shows as an optional out=
     * argument of the same signature): say which argument is wrong */
    int plain = -1, nplain = 0;
    bool has_out_kw = false;
    for (Py_ssize_t j = 0; kwnames != NULL && j < PyTuple_GET_SIZE(kwnames); j++)
        has_out_kw |= PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, j), "out") == 0;
    for (int s = 0; s < nm->nsigs; s++) {
        if ((nm->sigs[s]->kind == OPS_KIND_OUT) == has_out_kw) {
            plain = s;
            nplain++;
        }
    }
    pyops_reason why = {"", false};
    if (nplain == 1 || nm->nsigs == 1) {
        bind(nm->sigs[nplain == 1 ? plain : 0], nm->method, self, args, nargs, kwnames, &p, &why);
    } else {
        /* several overloads: an argument of the right type with an unusable value (an
         * int beyond int64, a device string naming no device) is what went wrong in
         * the overload it fits; other mismatches only the signatures can explain */
        for (int s = 0; s < nm->nsigs && !why.value; s++) {
            why = (pyops_reason){"", false};
            bind(nm->sigs[s], nm->method, self, args, nargs, kwnames, &p, &why);
        }
        if (!why.value)
            why.text[0] = '\0';
    }
    if (PyErr_Occurred())
        return NULL;
    if (why.text[0] != '\0') {
        PyErr_SetString(why.value ? PyExc_RuntimeError : PyExc_TypeError, why.text);
        return NULL;
    }
    return raise_signatures(nm, args, nargs, kwnames);
}

int
pyops_init_sigs(PyObject *module)
{
    (void)module;
    for (int i = 0; i < pyops_num_sigs; i++) {
        pyops_sig *sig = pyops_all_sigs[i];
        sig->op = ops_registry_at(sig->reg);
        if (sig->op == NULL || strcmp(sig->op->name, sig->pyname) != 0 || sig->op->num_args != sig->nargs) {
            PyErr_Format(PyExc_ImportError, "libops: the bindings of %s do not match the library's registry",
                         sig->full_name);
            return -1;
        }
        if (sig->ret_names != NULL && sig->ret_type == NULL) {
            PyStructSequence_Field fields[9];
            int nr = sig->nrets < 8 ? sig->nrets : 8;
            for (int j = 0; j < nr; j++)
                fields[j] = (PyStructSequence_Field){sig->ret_names[j], NULL};
            fields[nr] = (PyStructSequence_Field){NULL, NULL};
            /* torch.return_types.max and the like */
            char *tname = PyMem_Malloc(strlen(sig->pyname) + 32);
            if (tname == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            sprintf(tname, "libops.return_types.%s", sig->pyname);
            PyStructSequence_Desc desc = {tname, NULL, fields, nr};
            sig->ret_type = PyStructSequence_NewType(&desc);
            if (sig->ret_type == NULL)
                return -1;
            /* tp_name keeps pointing at tname for the life of the process */
        }
    }
    return 0;
}

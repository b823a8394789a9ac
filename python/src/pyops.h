/* Internal header of the CPython extension module libops._C: the Tensor object, the
 * dtype objects, the signature tables that codegen/gen_python.py generates
 * (python_bindings.c) and the generic argument parser that reads them
 * (arg_parser.c, arg_convert.c; its own state is in pyops_args.h). */
#ifndef PYOPS_H
#define PYOPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cuda.h"
#include "ops_internal.h"
#include "ops_registry.h"

/* ---- objects ---------------------------------------------------------------- */

/* libops.Tensor: owns one reference to an ops_tensor. */
typedef struct pyops_tensor {
    PyObject_HEAD
    ops_tensor *t;
    PyObject *weakrefs;
    /* The wrapper .grad returned last (owned), so that `x.grad is x.grad`: reused while
     * the C gradient is still that wrapper's tensor; NULL when none. */
    PyObject *grad_cache;
} pyops_tensor;

/* libops.dtype: one immortal instance per ops_dtype. */
typedef struct pyops_dtype {
    PyObject_HEAD
    ops_dtype dtype;
} pyops_dtype;

/* libops.memory_format: one immortal instance per ops_memory_format
 * (libops.contiguous_format, channels_last, channels_last_3d, preserve_format). */
typedef struct pyops_memory_format {
    PyObject_HEAD
    ops_memory_format format;
} pyops_memory_format;

/* libops.Generator (generator.c): owns its ops_generator, except the one object of
 * libops.default_generator, which wraps the process-wide generator. */
typedef struct pyops_generator {
    PyObject_HEAD
    ops_generator *g;
    ops_device device; /* Generator(device=...): reported, the stream is the same */
} pyops_generator;

extern PyTypeObject pyops_tensor_type;
extern PyTypeObject pyops_dtype_type;
extern PyTypeObject pyops_memory_format_type;
extern PyTypeObject pyops_generator_type;

/* Whether o is a libops.Generator. */
bool pyops_generator_check(PyObject *o);
/* Ready the Generator type and add Generator, default_generator, manual_seed, seed,
 * initial_seed, get_rng_state and set_rng_state to the module; -1 with an exception. */
int pyops_generator_init(PyObject *m);
/* Adds the file functions of serialize.c (_safetensors_load, _npy_save, ...). */
int pyops_serialize_init(PyObject *m);
/* Tensor.__reduce_ex__ / __copy__ / __deepcopy__ (serialize.c): forward to
 * libops.serialization's _reduce_tensor / _copy_tensor / _deepcopy_tensor. */
PyObject *pyops_tensor_reduce_ex(PyObject *self, PyObject *protocol);
PyObject *pyops_tensor_copy(PyObject *self, PyObject *unused);
PyObject *pyops_tensor_deepcopy(PyObject *self, PyObject *memo);
/* Adds nn.c's _make_subclass, the _optimizer_* functions and Tensor.register_hook
 * (call after the Tensor type is ready). */
int pyops_nn_init(PyObject *m);
/* If the pending libops error is the one a Python tensor hook raised during backward,
 * restore the hook's exception and return true (nn.c; pyops_raise_status asks). */
bool pyops_hook_exception_restore(void);

#define PYOPS_TENSOR_CHECK(o) PyObject_TypeCheck((o), &pyops_tensor_type)
#define PYOPS_T(o) (((pyops_tensor *)(o))->t)

/* New Python Tensor owning t (the reference is stolen; t NULL raises the libops error). */
PyObject *pyops_wrap(ops_tensor *t);
/* The same as an instance of type, Tensor or a Python subclass of it. */
PyObject *pyops_wrap_as(PyTypeObject *type, ops_tensor *t);
/* Raise the pending libops error (ops_last_error) as a Python exception; returns NULL. */
PyObject *pyops_raise(void);
/* Raise for status st (the message of ops_last_error); returns NULL. */
PyObject *pyops_raise_status(ops_status st);
/* The dtype object of dt (borrowed). */
PyObject *pyops_dtype_object(ops_dtype dt);
/* A libops.device for dev (new reference). */
PyObject *pyops_device_object(ops_device dev);
/* Python number -> scalar; false (no exception) when o is not a bool, int or float. */
bool pyops_scalar_from_object(PyObject *o, ops_scalar *out);
/* ops_scalar -> Python bool, int or float. */
PyObject *pyops_scalar_to_object(ops_scalar s);
/* dtype object (or Python's bool/int/float types) -> dtype; OPS_DTYPE_NONE otherwise. */
ops_dtype pyops_dtype_from_object(PyObject *o);
/* The format of a libops.memory_format object; OPS_MEMORY_FORMAT_NONE for anything else
 * (no exception set). */
ops_memory_format pyops_memory_format_from_object(PyObject *o);
/* str or libops.device -> device; false (no exception) when o is neither or unparsable. */
bool pyops_device_from_object(PyObject *o, ops_device *out);
/* The same, saying why: 1 converted, 0 o is not a str or device, -1 a string that names
 * no device (why gets "invalid device 'gpu': expected ...").  No exception. */
int pyops_device_convert(PyObject *o, ops_device *out, char *why, size_t n);
/* The `device` argument of fname(): 0 converted, -1 with a TypeError (another type;
 * `also` names other accepted types, as ", int") or a RuntimeError (a string that
 * names no device), each naming fname, the argument and what was given. */
int pyops_device_arg(PyObject *o, const char *fname, const char *also, ops_device *out);

/* libops.tensor(data, dtype=None, device=None, requires_grad=False). */
PyObject *pyops_tensor_new_from_data(PyObject *data, ops_dtype dtype, bool requires_grad);
/* libops.from_numpy(a): shares a's memory and keeps a alive. */
PyObject *pyops_from_numpy(PyObject *mod, PyObject *arr);

/* ---- generated signature tables ---------------------------------------------- */

typedef enum pyops_type {
    PYOPS_T_TENSOR,
    PYOPS_T_TENSOR_LIST,
    PYOPS_T_SCALAR,
    PYOPS_T_INT,
    PYOPS_T_INT_LIST,
    PYOPS_T_FLOAT,
    PYOPS_T_BOOL,
    PYOPS_T_STR,
    PYOPS_T_DTYPE,
    PYOPS_T_DEVICE,
    PYOPS_T_GENERATOR,
    PYOPS_T_MEMORY_FORMAT,
    PYOPS_T_BOOL_LIST, /* bool[], bool[N]: a list or tuple of bools (True/False only) */
} pyops_type;

#define PYOPS_F_OPTIONAL 1u      /* the type ends in '?': None is accepted */
#define PYOPS_F_ELEM_OPTIONAL 2u /* Tensor?[]: elements may be None */
#define PYOPS_F_KWONLY 4u        /* after the bare '*' */
#define PYOPS_F_OUT 8u           /* a keyword-only out= tensor */
#define PYOPS_F_HAS_DEFAULT 16u  /* the schema gives a default (def, or None) */
#define PYOPS_F_DEFAULT_NONE 32u /* ... and it is None */

typedef union pyops_default {
    int64_t i;
    double d;
    bool b;
    const char *str; /* str and Device defaults */
    ops_dtype dtype;
    ops_memory_format memory_format;
    ops_scalar scalar;
    ops_int_list ints;
    ops_bool_list bools;
} pyops_default;

typedef struct pyops_arg {
    const char *name;
    pyops_type type;
    unsigned flags;
    int size; /* N of int[N] / bool[N], 0 otherwise */
    pyops_default def;
} pyops_arg;

typedef struct pyops_sig {
    int reg;                   /* index in the registry (file order) */
    const char *full_name;     /* "add.Tensor" */
    const char *pyname;        /* "add" */
    const char *pysig;         /* "(Tensor input, Tensor other, *, Number alpha=1, Tensor out)" */
    const char *pysig_method;  /* the same without self */
    ops_op_kind kind;
    int nargs;
    int self_index;            /* the argument named self, -1 if none */
    const pyops_arg *args;
    int nrets;
    bool ret_list;             /* one Tensor[] return: a tuple of tensors */
    const char *const *ret_names; /* several named returns: a struct sequence */
    const ops_op_info *op;     /* filled by pyops_init_sigs */
    PyTypeObject *ret_type;    /* the struct sequence type, when ret_names */
} pyops_sig;

typedef struct pyops_name {
    const char *name;
    int nsigs;
    pyops_sig *const *sigs; /* in the order they are tried */
    bool method;
} pyops_name;

extern pyops_sig *const pyops_all_sigs[];
extern const int pyops_num_sigs;
extern PyMethodDef pyops_generated_functions[];
extern PyMethodDef pyops_generated_methods[];

/* Resolve every pyops_sig's registry entry and build the return types; -1 with an
 * exception on failure. */
int pyops_init_sigs(PyObject *module);
/* The generic parser: bind args/kwnames (vectorcall convention) to one of nm's
 * overloads, call it through the registry and convert its returns. */
PyObject *pyops_call(const pyops_name *nm, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);

/* Calls with a tensor of at least this many elements release the GIL while the op
 * runs (releasing it costs more than a small op does). */
#define PYOPS_GIL_RELEASE_NUMEL 32768
/* Whether a call with these arguments releases the GIL. */
bool pyops_is_big_call(const ops_ivalue *iv, int n);

/* ---- pieces of the Tensor type (tensor*.c, indexing.c, numpy.c) --------------- */

/* A tuple of Python ints from n int64 values (tensor.c). */
PyObject *pyops_int_tuple(int64_t n, const int64_t *v);
/* The hand-written methods, ended by a NULL entry (tensor_methods.c). */
extern PyMethodDef pyops_tensor_methods[];
extern PyMappingMethods pyops_tensor_as_mapping;
extern PySequenceMethods pyops_tensor_as_sequence;
extern PyNumberMethods pyops_tensor_as_number;
extern PyBufferProcs pyops_tensor_as_buffer;
PyObject *pyops_tensor_getitem(PyObject *self, PyObject *index);
int pyops_tensor_setitem(PyObject *self, PyObject *index, PyObject *value);
PyObject *pyops_tensor_richcompare(PyObject *a, PyObject *b, int op);
PyObject *pyops_tensor_numpy(PyObject *self, PyObject *unused);
PyObject *pyops_tensor_array(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pyops_tensor_array_interface(PyObject *self, void *closure);

/* ---- zero-copy interop (interop.c): DLPack and shared memory ------------------- */

PyObject *pyops_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pyops_tensor_dlpack_device(PyObject *self, PyObject *unused);
PyObject *pyops_to_dlpack(PyObject *mod, PyObject *arg);
PyObject *pyops_from_dlpack(PyObject *mod, PyObject *obj);
PyObject *pyops_tensor_share_memory_(PyObject *self, PyObject *unused);
PyObject *pyops_tensor_is_shared(PyObject *self, PyObject *unused);
PyObject *pyops_tensor_shm_handle(PyObject *self, PyObject *unused);
PyObject *pyops_from_shm_handle(PyObject *mod, PyObject *arg);

#endif /* PYOPS_H */

/* libops.Generator: the Python object around an ops_generator (include/libops/ops_random.h),
 * libops.default_generator (the process-wide generator, one Python object for the life
 * of the module, as torch.default_generator), and the module functions that act on
 * the default one: manual_seed, seed, initial_seed, get_rng_state, set_rng_state.
 *
 * A generator's whole state is its Philox key (the seed) and the index of its next
 * unused block (the offset), so get_state() is a uint8 tensor of 16 bytes: the seed
 * then the offset, each a little-endian uint64.  set_state() takes such a tensor
 * back; the state is not torch's (a Mersenne Twister's 5056 bytes), and a torch state
 * is refused by its size. */
#include "pyops.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ops_cuda.h"
#include "ops_random.h"
#include "ops_op_contiguous.h"

#define PYOPS_RNG_STATE_BYTES 16

static pyops_generator *default_object; /* libops.default_generator; module owns it */

bool
pyops_generator_check(PyObject *o)
{
    return PyObject_TypeCheck(o, &pyops_generator_type);
}

/* ---- seeds ---------------------------------------------------------------------- */

/* A seed from a Python int: [-2^63, 2^64) as torch takes it, negative values wrapping
 * to their two's complement.  -1 with an exception otherwise (torch's messages). */
static int
seed_from_object(PyObject *o, const char *what, uint64_t *out)
{
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_RuntimeError, "%s expected a long, but got %s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
        *out = (uint64_t)u;
        return 0;
    }
    if (!PyErr_ExceptionMatches(PyExc_OverflowError))
        return -1;
    PyErr_Clear();
    long long s = PyLong_AsLongLong(o);
    if (s == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
        }
        return -1;
    }
    *out = (uint64_t)s;
    return 0;
}

/* A non-deterministic 64-bit seed (torch's Generator.seed()): the kernel's entropy
 * pool, or the clock and the address space layout when getrandom is unavailable. */
static uint64_t
fresh_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s)
        return s;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&ts;
    /* splitmix64's finaliser spreads the few changing bits over the whole word */
    s ^= s >> 30;
    s *= 0xBF58476D1CE4E5B9ull;
    s ^= s >> 27;
    s *= 0x94D049BB133111EBull;
    s ^= s >> 31;
    return s;
}

/* ---- state ---------------------------------------------------------------------- */

static PyObject *
state_of(const ops_generator *g)
{
    uint8_t bytes[PYOPS_RNG_STATE_BYTES];
    uint64_t v[2] = {ops_generator_seed(g), ops_generator_offset(g)};
    for (int w = 0; w < 2; w++)
        for (int b = 0; b < 8; b++)
            bytes[w * 8 + b] = (uint8_t)(v[w] >> (8 * b));
    const int64_t n = PYOPS_RNG_STATE_BYTES;
    return pyops_wrap(ops_tensor_from_data(bytes, (ops_int_list){&n, 1}, OPS_UINT8));
}

static PyObject *
set_state_of(ops_generator *g, PyObject *state)
{
    if (!PYOPS_TENSOR_CHECK(state)) {
        PyErr_Format(PyExc_TypeError, "expected a libops.Tensor of dtype uint8, but got %s", Py_TYPE(state)->tp_name);
        return NULL;
    }
    const ops_tensor *t = PYOPS_T(state);
    if (ops_tensor_dtype(t) != OPS_UINT8) {
        PyErr_Format(PyExc_TypeError, "RNG state must be a uint8 tensor, got %s", ops_dtype_name(ops_tensor_dtype(t)));
        return NULL;
    }
    if (ops_tensor_device(t).type != OPS_CPU) {
        PyErr_SetString(PyExc_RuntimeError, "RNG state must be a CPU tensor");
        return NULL;
    }
    if (ops_tensor_numel(t) != PYOPS_RNG_STATE_BYTES) {
        PyErr_Format(PyExc_RuntimeError,
                     "RNG state is wrong size: expected %d bytes (seed and offset), got %lld", PYOPS_RNG_STATE_BYTES,
                     (long long)ops_tensor_numel(t));
        return NULL;
    }
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    if (c == NULL)
        return pyops_raise();
    const uint8_t *bytes = ops_tensor_data_ptr(c);
    uint64_t v[2] = {0, 0};
    for (int w = 0; w < 2; w++)
        for (int b = 0; b < 8; b++)
            v[w] |= (uint64_t)bytes[w * 8 + b] << (8 * b);
    ops_tensor_release(c);
    /* set_seed resets the offset, so the offset goes second */
    ops_generator_set_seed(g, v[0]);
    ops_generator_set_offset(g, v[1]);
    Py_RETURN_NONE;
}

/* ---- the type ------------------------------------------------------------------- */

static PyObject *
generator_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"device", NULL};
    PyObject *dev = NULL;
    ops_device d = OPS_DEVICE_CPU;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", kw, &dev))
        return NULL;
    if (dev != NULL && dev != Py_None) {
        if (pyops_device_arg(dev, "Generator", NULL, &d) < 0)
            return NULL;
        /* a generator is the same Philox stream on every device, so a CUDA one is a
         * generator that says cuda:N; as torch, one only for a device that exists */
        if (d.type == OPS_CUDA && (d.index < 0 || d.index >= ops_cuda_device_count())) {
            PyErr_Format(PyExc_RuntimeError, "Generator(): cuda:%d is not available (%d CUDA devices found)",
                         d.index, ops_cuda_device_count());
            return NULL;
        }
    }
    pyops_generator *o = (pyops_generator *)type->tp_alloc(type, 0);
    if (o == NULL)
        return NULL;
    o->device = d;
    o->g = ops_generator_create(OPS_DEFAULT_RNG_SEED);
    if (o->g == NULL) {
        Py_DECREF(o);
        return pyops_raise();
    }
    return (PyObject *)o;
}

static void
generator_dealloc(PyObject *self)
{
    pyops_generator *o = (pyops_generator *)self;
    /* the default generator is never released (ops_generator_release ignores it) */
    ops_generator_release(o->g);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
g_manual_seed(PyObject *self, PyObject *arg)
{
    uint64_t s;
    if (seed_from_object(arg, "manual_seed", &s) < 0)
        return NULL;
    ops_generator_set_seed(((pyops_generator *)self)->g, s);
    Py_INCREF(self);
    return self;
}

static PyObject *
g_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    uint64_t s = fresh_seed();
    ops_generator_set_seed(((pyops_generator *)self)->g, s);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *
g_initial_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(ops_generator_seed(((pyops_generator *)self)->g));
}

static PyObject *
g_get_offset(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(ops_generator_offset(((pyops_generator *)self)->g));
}

static PyObject *
g_set_offset(PyObject *self, PyObject *arg)
{
    uint64_t off;
    if (seed_from_object(arg, "set_offset", &off) < 0)
        return NULL;
    ops_generator_set_offset(((pyops_generator *)self)->g, off);
    Py_INCREF(self);
    return self;
}

static PyObject *
g_get_state(PyObject *self, PyObject *unused)
{
    (void)unused;
    return state_of(((pyops_generator *)self)->g);
}

static PyObject *
g_set_state(PyObject *self, PyObject *state)
{
    if (set_state_of(((pyops_generator *)self)->g, state) == NULL)
        return NULL;
    Py_INCREF(self);
    return self;
}

static PyObject *
g_clone_state(PyObject *self, PyObject *unused)
{
    (void)unused;
    pyops_generator *o = PyObject_New(pyops_generator, &pyops_generator_type);
    if (o == NULL)
        return NULL;
    o->device = ((pyops_generator *)self)->device;
    o->g = ops_generator_clone(((pyops_generator *)self)->g);
    if (o->g == NULL) {
        Py_DECREF(o);
        return pyops_raise();
    }
    return (PyObject *)o;
}

static PyObject *
g_get_device(PyObject *self, void *c)
{
    (void)c;
    return pyops_device_object(((pyops_generator *)self)->device);
}

static PyObject *
generator_repr(PyObject *self)
{
    pyops_generator *o = (pyops_generator *)self;
    return PyUnicode_FromFormat("<libops.Generator%s seed=%llu offset=%llu>",
                                self == (PyObject *)default_object ? " (default)" : "",
                                (unsigned long long)ops_generator_seed(o->g),
                                (unsigned long long)ops_generator_offset(o->g));
}

static PyMethodDef generator_methods[] = {
    {"manual_seed", g_manual_seed, METH_O, "manual_seed(seed): reseed (offset back to 0); returns the generator"},
    {"seed", g_seed, METH_NOARGS, "seed(): reseed from a non-deterministic source; returns the new seed"},
    {"initial_seed", g_initial_seed, METH_NOARGS, "initial_seed(): the seed the stream was started from"},
    {"get_offset", g_get_offset, METH_NOARGS, "get_offset(): the index of the next unused Philox block"},
    {"set_offset", g_set_offset, METH_O, "set_offset(offset): move within the stream; returns the generator"},
    {"get_state", g_get_state, METH_NOARGS,
     "get_state(): the state as a uint8 tensor of 16 bytes (seed, offset: little-endian uint64s)"},
    {"set_state", g_set_state, METH_O, "set_state(state): restore a state from get_state(); returns the generator"},
    {"clone_state", g_clone_state, METH_NOARGS, "clone_state(): a new generator at the same seed and offset"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef generator_getset[] = {
    {"device", g_get_device, NULL, "the generator's device", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pyops_generator_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "libops.Generator",
    .tp_basicsize = sizeof(pyops_generator),
    .tp_dealloc = generator_dealloc,
    .tp_repr = generator_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Generator(device='cpu'): a Philox4x32-10 random number generator for the `generator=` argument "
              "of the random ops (on any device: a 'cuda' generator draws the same stream)",
    .tp_methods = generator_methods,
    .tp_getset = generator_getset,
    .tp_new = generator_new,
};

/* ---- module functions (the default generator) ------------------------------------ */

static PyObject *
py_manual_seed(PyObject *mod, PyObject *arg)
{
    (void)mod;
    return g_manual_seed((PyObject *)default_object, arg);
}

static PyObject *
py_seed(PyObject *mod, PyObject *unused)
{
    (void)mod;
    return g_seed((PyObject *)default_object, unused);
}

static PyObject *
py_initial_seed(PyObject *mod, PyObject *unused)
{
    (void)mod;
    return g_initial_seed((PyObject *)default_object, unused);
}

static PyObject *
py_get_rng_state(PyObject *mod, PyObject *unused)
{
    (void)mod;
    return g_get_state((PyObject *)default_object, unused);
}

static PyObject *
py_set_rng_state(PyObject *mod, PyObject *state)
{
    (void)mod;
    return set_state_of(default_object->g, state);
}

static PyMethodDef generator_functions[] = {
    {"manual_seed", py_manual_seed, METH_O, "manual_seed(seed): reseed the default generator; returns it"},
    {"seed", py_seed, METH_NOARGS, "seed(): reseed the default generator non-deterministically; returns the seed"},
    {"initial_seed", py_initial_seed, METH_NOARGS, "initial_seed(): the default generator's seed"},
    {"get_rng_state", py_get_rng_state, METH_NOARGS, "get_rng_state(): the default generator's state"},
    {"set_rng_state", py_set_rng_state, METH_O, "set_rng_state(state): restore the default generator's state"},
    {NULL, NULL, 0, NULL},
};

int
pyops_generator_init(PyObject *m)
{
    if (PyType_Ready(&pyops_generator_type) < 0)
        return -1;
    if (default_object == NULL) {
        default_object = PyObject_New(pyops_generator, &pyops_generator_type);
        if (default_object == NULL)
            return -1;
        default_object->g = ops_default_generator();
        default_object->device = OPS_DEVICE_CPU;
    }
    Py_INCREF(&pyops_generator_type);
    if (PyModule_AddObject(m, "Generator", (PyObject *)&pyops_generator_type) < 0) {
        Py_DECREF(&pyops_generator_type);
        return -1;
    }
    Py_INCREF(default_object);
    if (PyModule_AddObject(m, "default_generator", (PyObject *)default_object) < 0) {
        Py_DECREF(default_object);
        return -1;
    }
    return PyModule_AddFunctions(m, generator_functions);
}

/* libops public API: the boxed registry of operators.
 *
 * One ops_op_info per entry of ops/native_functions.yaml, generated into
 * ops_registry.c: its schema, its arguments and returns, the other forms of the
 * same op, its conformance metadata, and a boxed call taking and returning tagged
 * values.  It serves the conformance runner, the Python bindings and FFIs, which
 * cannot call the typed C functions of ops_functions.h one by one.
 *
 *     const ops_op_info *op = ops_registry_find("add", "Tensor");
 *     ops_ivalue args[3] = {ops_ivalue_tensor(a), ops_ivalue_tensor(b),
 *                           ops_ivalue_scalar(OPS_SCALAR_INT(1))};
 *     ops_ivalue ret;
 *     if (op->call(args, &ret) == OPS_OK)
 *         ...use ret.v.tensor, then ops_ivalue_release(&ret);
 *
 * Arguments are borrowed and given in schema order, every one of them (defaults are
 * described in ops_arg_info but not applied).  Returned tensors are always new
 * references, also for in-place and out= ops (a new reference to the tensor they
 * wrote).  On failure the call returns the error status, ops_last_error() holds the
 * message, and every ret is OPS_IVALUE_NONE. */
#ifndef OPS_REGISTRY_H
#define OPS_REGISTRY_H

#include "ops_base.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- boxed values ----------------------------------------------------- */

typedef enum ops_ivalue_tag {
    OPS_IVALUE_NONE,        /* None, for any optional argument */
    OPS_IVALUE_TENSOR,      /* Tensor (v.tensor) */
    OPS_IVALUE_TENSOR_LIST, /* Tensor[] (v.tensor_list) */
    OPS_IVALUE_SCALAR,      /* Scalar (v.scalar) */
    OPS_IVALUE_INT,         /* int, SymInt (v.i); also accepted for Scalar and float */
    OPS_IVALUE_INT_LIST,    /* int[], int[N] (v.int_list) */
    OPS_IVALUE_DOUBLE,      /* float (v.d); also accepted for Scalar */
    OPS_IVALUE_BOOL,        /* bool (v.b); also accepted for Scalar */
    OPS_IVALUE_STR,         /* str (v.str) */
    OPS_IVALUE_DTYPE,       /* ScalarType (v.dtype) */
    OPS_IVALUE_DEVICE,      /* Device (v.device) */
    OPS_IVALUE_GENERATOR,   /* Generator (v.generator); None is the default generator */
    OPS_IVALUE_MEMORY_FORMAT, /* MemoryFormat (v.memory_format) */
    OPS_IVALUE_BOOL_LIST,   /* bool[], bool[N] (v.bool_list) */
    OPS_NUM_IVALUE_TAGS
} ops_ivalue_tag;

/* A tagged value: one boxed argument or return. */
typedef struct ops_ivalue {
    ops_ivalue_tag tag;
    union {
        ops_tensor *tensor; /* borrowed as an argument; a new reference as a return */
        ops_tensor_list tensor_list;
        ops_scalar scalar;
        int64_t i;
        ops_int_list int_list;
        double d;
        bool b;
        const char *str;
        ops_dtype dtype;
        ops_device device;
        ops_generator *generator;
        ops_memory_format memory_format;
        ops_bool_list bool_list;
    } v;
} ops_ivalue;

/* "tensor", "int", ...; "?" for an invalid tag.  For messages. */
OPS_API const char *ops_ivalue_tag_name(ops_ivalue_tag tag);

/* Boxing helpers (the tensor is borrowed, not retained). */
static inline ops_ivalue
ops_ivalue_none(void)
{
    ops_ivalue v = {OPS_IVALUE_NONE, {0}};
    return v;
}

static inline ops_ivalue
ops_ivalue_tensor(const ops_tensor *t)
{
    ops_ivalue v = {OPS_IVALUE_TENSOR, {0}};
    v.v.tensor = (ops_tensor *)t; /* borrowed; in-place ops write through it */
    return v;
}

static inline ops_ivalue
ops_ivalue_tensor_list(ops_tensor_list l)
{
    ops_ivalue v = {OPS_IVALUE_TENSOR_LIST, {0}};
    v.v.tensor_list = l;
    return v;
}

static inline ops_ivalue
ops_ivalue_scalar(ops_scalar s)
{
    ops_ivalue v = {OPS_IVALUE_SCALAR, {0}};
    v.v.scalar = s;
    return v;
}

static inline ops_ivalue
ops_ivalue_int(int64_t i)
{
    ops_ivalue v = {OPS_IVALUE_INT, {0}};
    v.v.i = i;
    return v;
}

static inline ops_ivalue
ops_ivalue_int_list(ops_int_list l)
{
    ops_ivalue v = {OPS_IVALUE_INT_LIST, {0}};
    v.v.int_list = l;
    return v;
}

static inline ops_ivalue
ops_ivalue_bool_list(ops_bool_list l)
{
    ops_ivalue v = {OPS_IVALUE_BOOL_LIST, {0}};
    v.v.bool_list = l;
    return v;
}

static inline ops_ivalue
ops_ivalue_double(double d)
{
    ops_ivalue v = {OPS_IVALUE_DOUBLE, {0}};
    v.v.d = d;
    return v;
}

static inline ops_ivalue
ops_ivalue_bool(bool b)
{
    ops_ivalue v = {OPS_IVALUE_BOOL, {0}};
    v.v.b = b;
    return v;
}

static inline ops_ivalue
ops_ivalue_str(const char *s)
{
    ops_ivalue v = {OPS_IVALUE_STR, {0}};
    v.v.str = s;
    return v;
}

static inline ops_ivalue
ops_ivalue_dtype(ops_dtype dt)
{
    ops_ivalue v = {OPS_IVALUE_DTYPE, {0}};
    v.v.dtype = dt;
    return v;
}

static inline ops_ivalue
ops_ivalue_device(ops_device d)
{
    ops_ivalue v = {OPS_IVALUE_DEVICE, {0}};
    v.v.device = d;
    return v;
}

static inline ops_ivalue
ops_ivalue_memory_format(ops_memory_format f)
{
    ops_ivalue v = {OPS_IVALUE_MEMORY_FORMAT, {0}};
    v.v.memory_format = f;
    return v;
}

static inline ops_ivalue
ops_ivalue_generator(ops_generator *g)
{
    ops_ivalue v = {OPS_IVALUE_GENERATOR, {0}};
    v.v.generator = g;
    return v;
}

/* A returned Tensor[]: the ivalue takes over the vector (its array and references);
 * ops_ivalue_release frees them.  Only returns own their lists: a Tensor[] argument
 * built with ops_ivalue_tensor_list is borrowed and must not be released. */
static inline ops_ivalue
ops_ivalue_tensor_vec(ops_tensor_vec vec)
{
    ops_ivalue v = {OPS_IVALUE_TENSOR_LIST, {0}};
    v.v.tensor_list.data = (const ops_tensor *const *)vec.data;
    v.v.tensor_list.len = vec.len;
    return v;
}

/* Release a returned value (drops its tensor references, frees a returned list's
 * array) and make it None. */
static inline void
ops_ivalue_release(ops_ivalue *v)
{
    if (v->tag == OPS_IVALUE_TENSOR) {
        ops_tensor_release(v->v.tensor);
    } else if (v->tag == OPS_IVALUE_TENSOR_LIST) {
        ops_tensor_vec vec = {(ops_tensor **)v->v.tensor_list.data, v->v.tensor_list.len};
        ops_tensor_vec_release(&vec);
    }
    *v = ops_ivalue_none();
}

/* ---- operator descriptions --------------------------------------------- */

typedef enum ops_op_kind {
    OPS_KIND_FUNCTIONAL, /* returns new tensors */
    OPS_KIND_INPLACE,    /* name ends in '_': writes self */
    OPS_KIND_OUT,        /* writes its keyword-only out= arguments */
} ops_op_kind;

/* Bits of ops_op_info.variants (the schema's `variants:`). */
#define OPS_VARIANT_FUNCTION 1u
#define OPS_VARIANT_METHOD 2u

typedef struct ops_arg_info {
    const char *name;          /* "self" */
    const char *type;          /* as in the schema: "Tensor(a!)", "Scalar?", "int[2]" */
    const char *default_value; /* as in the schema ("1", "None", "[0, 1]"), or NULL */
    bool kwarg_only;           /* after the bare '*' */
    bool is_out;               /* a keyword-only out= tensor */
    bool optional;             /* the type ends in '?': OPS_IVALUE_NONE is accepted */
} ops_arg_info;

typedef struct ops_return_info {
    const char *name; /* "values", or NULL when the schema does not name it */
    const char *type; /* "Tensor", "Tensor(a!)", "bool", ... */
} ops_return_info;

typedef struct ops_op_info ops_op_info;

struct ops_op_info {
    const char *name;     /* "add", "add_" */
    const char *overload; /* "Tensor", "" when none */
    const char *c_name;   /* "ops_add" */
    const char *schema;   /* "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" */
    ops_op_kind kind;
    unsigned variants;    /* OPS_VARIANT_* bits */
    int num_args;
    const ops_arg_info *args; /* num_args entries, schema order */
    int num_returns;
    const ops_return_info *returns;
    /* The functional, in-place and out= forms of the same op (same base name and
     * non-out arguments), this one included; NULL where a form does not exist. */
    const ops_op_info *functional;
    const ops_op_info *inplace;
    const ops_op_info *out;
    /* The entry's conformance metadata (its key in ops/conformance/<family>.yaml) as JSON
     * (docs/conformance.md), or NULL. */
    const char *conformance;
    /* Boxed call: args[num_args] in schema order, rets[num_returns] filled on success. */
    ops_status (*call)(const ops_ivalue *args, ops_ivalue *rets);
};

/* Number of operators (entries of native_functions.yaml). */
OPS_API int ops_registry_count(void);
/* The i-th operator in file order, or NULL when i is out of range. */
OPS_API const ops_op_info *ops_registry_at(int i);
/* The operator name.overload ("add", "Tensor"); overload NULL or "" is the entry
 * without one, and ("add.Tensor", NULL) is accepted too.  NULL if there is none. */
OPS_API const ops_op_info *ops_registry_find(const char *name, const char *overload);

#ifdef __cplusplus
}
#endif
#endif /* OPS_REGISTRY_H */

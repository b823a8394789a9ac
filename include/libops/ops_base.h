/* libops public API: the value types every other header uses.
 *
 * dtypes, devices, scalars, list arguments, status codes and the thread-local
 * error slot.  Everything here is plain data; nothing allocates. */
#ifndef OPS_BASE_H
#define OPS_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_config.h" /* OPS_WITH_CUDA when the CUDA backend is built */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define OPS_API __attribute__((visibility("default")))
#else
#define OPS_API
#endif

/* Most dimensions a tensor may have; sizes and strides are stored inline. */
#define OPS_MAX_DIMS 16

/* ---- status and errors ----------------------------------------------- */

/* One list makes both the enum and the message table, so they cannot drift. */
#define OPS_FOREACH_STATUS(X)                                                 \
    X(OPS_OK, "success")                                                      \
    X(OPS_ERR_VALUE, "invalid value")                                         \
    X(OPS_ERR_SHAPE, "shape mismatch")                                        \
    X(OPS_ERR_DTYPE, "unsupported or mismatched dtype")                       \
    X(OPS_ERR_DEVICE, "unsupported or mismatched device")                     \
    X(OPS_ERR_INDEX, "index out of range")                                    \
    X(OPS_ERR_OOM, "out of memory")                                           \
    X(OPS_ERR_NOT_IMPLEMENTED, "not implemented")                             \
    X(OPS_ERR_RUNTIME, "runtime error")

typedef enum ops_status {
#define OPS_X_(e, msg) e,
    OPS_FOREACH_STATUS(OPS_X_)
#undef OPS_X_
    OPS_NUM_STATUS
} ops_status;

OPS_API const char *ops_status_str(ops_status st);
/* The message of the last failed call on this thread ("" if none since the thread
 * started or since ops_clear_error()).  Only a failure writes it: a call that succeeds
 * never changes or clears it, so after a NULL/error return it says why even if other
 * calls succeeded in between, and a non-empty message does not mean the latest call
 * failed (test the return value).  Each thread has its own; the pointer stays valid
 * for the thread's life, and its text until the thread's next failure. */
OPS_API const char *ops_last_error(void);
/* The status of the last failed call on this thread (OPS_OK if none); same contract
 * as ops_last_error(). */
OPS_API ops_status ops_last_status(void);
/* Forget the last error on this thread (status OPS_OK, message ""). */
OPS_API void ops_clear_error(void);

/* ---- dtypes ---------------------------------------------------------- */

/* The order is the promotion order inside each category and is ABI. */
#define OPS_FOREACH_DTYPE(X)                                                  \
    X(OPS_BOOL, "bool", 1)                                                    \
    X(OPS_UINT8, "uint8", 1)                                                  \
    X(OPS_INT8, "int8", 1)                                                    \
    X(OPS_INT16, "int16", 2)                                                  \
    X(OPS_INT32, "int32", 4)                                                  \
    X(OPS_INT64, "int64", 8)                                                  \
    X(OPS_FLOAT16, "float16", 2)                                              \
    X(OPS_BFLOAT16, "bfloat16", 2)                                            \
    X(OPS_FLOAT32, "float32", 4)                                              \
    X(OPS_FLOAT64, "float64", 8)

typedef enum ops_dtype {
    OPS_DTYPE_NONE = -1, /* "not given" for optional dtype arguments */
#define OPS_X_(e, name, size) e,
    OPS_FOREACH_DTYPE(OPS_X_)
#undef OPS_X_
    OPS_NUM_DTYPES
} ops_dtype;

/* Bit for one dtype in a dtype set (kernels and conformance tables use sets). */
#define OPS_DTYPE_BIT(dt) (1u << (unsigned)(dt))

OPS_API const char *ops_dtype_name(ops_dtype dt);      /* "float32"; "?" if invalid */
OPS_API size_t ops_dtype_size(ops_dtype dt);           /* bytes per element, 0 if invalid */
OPS_API bool ops_dtype_is_floating(ops_dtype dt);      /* float16 .. float64 */
OPS_API bool ops_dtype_is_integral(ops_dtype dt, bool include_bool);
OPS_API ops_dtype ops_dtype_from_name(const char *name); /* OPS_DTYPE_NONE if unknown */
/* PyTorch's promote_types(a, b): the smallest dtype both can be cast to. */
OPS_API ops_dtype ops_promote_types(ops_dtype a, ops_dtype b);
/* PyTorch's can_cast(from, to): false for float->integral and non-bool->bool. */
OPS_API bool ops_can_cast(ops_dtype from, ops_dtype to);
/* The dtype new floating tensors get when none is named (float32). */
OPS_API ops_dtype ops_default_float_dtype(void);

/* ---- devices --------------------------------------------------------- */

typedef enum ops_device_type {
    OPS_DEVICE_TYPE_NONE = -1, /* "not given" for optional device arguments */
    OPS_CPU = 0,
    OPS_CUDA = 1,
    OPS_NUM_DEVICE_TYPES
} ops_device_type;

typedef struct ops_device {
    ops_device_type type;
    int index; /* 0 for cpu; N for cuda:N */
} ops_device;

#define OPS_DEVICE_CPU ((ops_device){OPS_CPU, 0})
#define OPS_DEVICE_CUDA(n) ((ops_device){OPS_CUDA, (n)})
#define OPS_DEVICE_UNSPECIFIED ((ops_device){OPS_DEVICE_TYPE_NONE, 0})

/* Parse "cpu", "cuda", "cuda:1".  Returns OPS_OK or OPS_ERR_VALUE with the error set. */
OPS_API ops_status ops_device_parse(const char *text, ops_device *out);
/* Writes "cpu" or "cuda:N" into buf (always NUL-terminated); returns buf. */
OPS_API const char *ops_device_str(ops_device dev, char *buf, size_t buflen);
OPS_API bool ops_device_equal(ops_device a, ops_device b);
/* Number of CUDA devices usable now: 0 in a CPU-only build or without a device. */
OPS_API int ops_cuda_device_count(void);

/* ---- memory formats ----------------------------------------------------- */

/* PyTorch's torch.memory_format: the order in which a new tensor's dims are laid out in
 * memory.  libops is strided, so channels_last is a real layout (NHWC strides over NCHW
 * sizes), not a flag: ops that take memory_format= allocate those strides and copy. */
typedef enum ops_memory_format {
    OPS_MEMORY_FORMAT_NONE = -1, /* "not given" for MemoryFormat? arguments: the op's default */
    OPS_PRESERVE_FORMAT = 0,     /* the input's layout when it is dense, else its dim order */
    OPS_CONTIGUOUS_FORMAT,       /* row-major */
    OPS_CHANNELS_LAST,           /* 4-d only: N, H, W, C from outermost to innermost */
    OPS_CHANNELS_LAST_3D,        /* 5-d only: N, D, H, W, C */
    OPS_NUM_MEMORY_FORMATS
} ops_memory_format;

/* "preserve_format", "contiguous_format", "channels_last", "channels_last_3d"; "?" if invalid. */
OPS_API const char *ops_memory_format_name(ops_memory_format f);
/* The format named so (the names above), or OPS_MEMORY_FORMAT_NONE. */
OPS_API ops_memory_format ops_memory_format_from_name(const char *name);

/* ---- scalars --------------------------------------------------------- */

typedef enum ops_scalar_kind { OPS_SCALAR_BOOL, OPS_SCALAR_INT, OPS_SCALAR_FLOAT } ops_scalar_kind;

/* A Python-style number: bool, int (int64) or float (double).  Scalars take part in
 * type promotion by category only, as Python numbers do in PyTorch. */
typedef struct ops_scalar {
    ops_scalar_kind kind;
    union {
        bool b;
        int64_t i;
        double f;
    } v;
} ops_scalar;

#define OPS_SCALAR_INT(x) ((ops_scalar){.kind = OPS_SCALAR_INT, .v.i = (int64_t)(x)})
#define OPS_SCALAR_FLOAT(x) ((ops_scalar){.kind = OPS_SCALAR_FLOAT, .v.f = (double)(x)})
#define OPS_SCALAR_BOOL(x) ((ops_scalar){.kind = OPS_SCALAR_BOOL, .v.b = (bool)(x)})

OPS_API double ops_scalar_to_double(ops_scalar s);
OPS_API int64_t ops_scalar_to_int64(ops_scalar s);

/* ---- list arguments -------------------------------------------------- */

/* int[] arguments: a borrowed array and its length. */
typedef struct ops_int_list {
    const int64_t *data;
    int64_t len;
} ops_int_list;

/* OPS_INTS(2, 3) is an int[] of {2, 3}; OPS_INTS() is the empty list. */
#define OPS_INTS(...)                                                                   \
    ((ops_int_list){(const int64_t[]){0, ##__VA_ARGS__} + 1,                           \
                    (int64_t)(sizeof((int64_t[]){0, ##__VA_ARGS__}) / sizeof(int64_t)) - 1})

/* bool[] / bool[N] arguments (PyTorch's `bool[3] output_mask`): a borrowed array of
 * bools and its length, as ops_int_list. */
typedef struct ops_bool_list {
    const bool *data;
    int64_t len;
} ops_bool_list;

/* OPS_BOOLS(true, false, true) is a bool[] of {true, false, true}; OPS_BOOLS() is empty. */
#define OPS_BOOLS(...)                                                                  \
    ((ops_bool_list){(const bool[]){0, ##__VA_ARGS__} + 1,                             \
                     (int64_t)(sizeof((bool[]){0, ##__VA_ARGS__}) / sizeof(bool)) - 1})

typedef struct ops_tensor ops_tensor;

/* Tensor[] arguments: a borrowed array of borrowed tensors.  For a `Tensor?[]`
 * argument an element may be NULL (None). */
typedef struct ops_tensor_list {
    const ops_tensor *const *data;
    int64_t len;
} ops_tensor_list;

/* Tensor[] returns: an owned array of new references (split, unbind, ...); free it
 * with ops_tensor_vec_release (ops_tensor.h). */
typedef struct ops_tensor_vec {
    ops_tensor **data;
    int64_t len;
} ops_tensor_vec;

/* A random-number generator (include/libops/ops_random.h); `Generator?` arguments take one,
 * NULL meaning the default generator. */
typedef struct ops_generator ops_generator;

/* ---- threads --------------------------------------------------------- */

/* Threads used by libops loops (and by the BLAS); <= 0 restores the default. */
OPS_API void ops_set_num_threads(int n);
OPS_API int ops_get_num_threads(void);

/* ---- CPU capability -------------------------------------------------- */

/* The instruction-set level the CPU kernels' vector loops run at in this process:
 * "default" (x86-64 baseline SSE2, or NEON on aarch64), "avx2" (AVX2 + FMA) or
 * "avx512" (AVX-512 F/BW/VL/DQ).  Chosen once, at the first call or the first vector
 * loop, as the best level this CPU supports; the environment variable
 * OPS_CPU_CAPABILITY=default|avx2|avx512 asks for a lower one (for tests and
 * benchmarks).  A level the CPU lacks, or an unknown name, is refused with one line on
 * stderr and the best supported level is used (docs/cpu-dispatch.md). */
OPS_API const char *ops_cpu_capability(void);

#ifdef __cplusplus
}
#endif
#endif /* OPS_BASE_H */

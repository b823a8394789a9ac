/* The CPU's vector loops, compiled once per instruction-set level (docs/cpu-dispatch.md).
 *
 * kernels/cpu/vec/vec_math.c is compiled by kernels/cpu/vec/meson.build once per level
 * with that level's flags (-mavx2 -mfma, -mavx512f ...) and OPS_VEC_SUFFIX naming the
 * copy; each copy exports only its table, ops_vec_table_<suffix>.  The kernels in
 * kernels/cpu/ call ops_vec(), which gives the table of the level the runtime chose
 * (runtime/dispatch/cpu_level.c): one pointer, picked once per process.
 *
 * This header holds the unary math table (vec_math.c); other families of loops have
 * their own header and per-level source beside it, picked the same way (OPS_VEC_PICK).
 *
 * A loop reads n contiguous elements of x and writes n of y; y may be x (in place),
 * no other overlap. */
#ifndef OPS_KERNELS_CPU_VEC_H
#define OPS_KERNELS_CPU_VEC_H

#include <stdint.h>

#include "ops_cpu_level.h"

/* Every per-level source (cpu_vec_sources in kernels/cpu/vec/meson.build) exports its
 * loops as one table per level, BASE_default, BASE_avx2 and BASE_avx512 (OPS_VEC_NAME
 * in vec_isa.h), of a type its own header declares:
 *
 *     OPS_VEC_DECLARE_TABLES(ops_vec_reduce_table, ops_vec_reduce_table);
 *     static inline const ops_vec_reduce_table *ops_vec_reduce(void)
 *     {
 *         return OPS_VEC_PICK(ops_vec_reduce_table);
 *     }
 *
 * OPS_VEC_PICK(BASE) is the table of the level the runtime chose for this process. */
#define OPS_VEC_HIDDEN_ __attribute__((visibility("hidden")))
#if defined(__x86_64__)
#define OPS_VEC_DECLARE_TABLES(TYPE, BASE)                                               \
    OPS_VEC_HIDDEN_ extern const TYPE BASE##_default;                                    \
    OPS_VEC_HIDDEN_ extern const TYPE BASE##_avx2;                                       \
    OPS_VEC_HIDDEN_ extern const TYPE BASE##_avx512
#define OPS_VEC_PICK(BASE)                                                               \
    (ops_cpu_level_get() == OPS_CPU_LEVEL_AVX512 ? &BASE##_avx512                         \
     : ops_cpu_level_get() == OPS_CPU_LEVEL_AVX2 ? &BASE##_avx2                           \
                                                 : &BASE##_default)
#else
#define OPS_VEC_DECLARE_TABLES(TYPE, BASE) OPS_VEC_HIDDEN_ extern const TYPE BASE##_default
#define OPS_VEC_PICK(BASE) (&BASE##_default)
#endif

/* The unary functions with vector loops, X(ENUM, name): their index in a table
 * (OPS_VEC_<ENUM>) and the op's name (bench bench_vec prints it).  Each is the same
 * formula as the op's scalar form (ops_scalar_math.h), but sigmoid and silu, which
 * take e^x / (1 + e^x) below 0 so that they never overflow (vec_math.c). */
#define OPS_VEC_UNARY_LIST(X)                                                            \
    X(EXP, exp) X(LOG, log) X(TANH, tanh) X(SIGMOID, sigmoid) X(EXPM1, expm1)            \
    X(LOG1P, log1p) X(LOG2, log2) X(LOG10, log10) X(SIN, sin) X(COS, cos) X(TAN, tan)    \
    X(ASIN, asin) X(ACOS, acos) X(ATAN, atan) X(SINH, sinh) X(COSH, cosh)                \
    X(ASINH, asinh) X(ACOSH, acosh) X(ATANH, atanh) X(ERF, erf) X(ERFC, erfc)            \
    X(SQRT, sqrt) X(RSQRT, rsqrt) X(SILU, silu) X(GELU, gelu) X(GELU_TANH, gelu_tanh)

#define OPS_VEC_ENUM_(E, name) OPS_VEC_##E,
typedef enum ops_vec_unary { OPS_VEC_UNARY_LIST(OPS_VEC_ENUM_) OPS_VEC_NUM_UNARY } ops_vec_unary;
#undef OPS_VEC_ENUM_

typedef void ops_vec_unary_f32_fn(const float *x, float *y, int64_t n);
typedef void ops_vec_unary_f64_fn(const double *x, double *y, int64_t n);

typedef struct ops_vec_table {
    const char *level; /* "default", "avx2", "avx512" */
    ops_vec_unary_f32_fn *unary_f32[OPS_VEC_NUM_UNARY];
    ops_vec_unary_f64_fn *unary_f64[OPS_VEC_NUM_UNARY];
} ops_vec_table;

OPS_VEC_DECLARE_TABLES(ops_vec_table, ops_vec_table);

/* The unary table of the process's level. */
static inline const ops_vec_table *
ops_vec(void)
{
    return OPS_VEC_PICK(ops_vec_table);
}

#endif /* OPS_KERNELS_CPU_VEC_H */

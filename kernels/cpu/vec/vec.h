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

/* The unary functions with vector loops; their index in a table. */
typedef enum ops_vec_unary {
    OPS_VEC_EXP,
    OPS_VEC_LOG,
    OPS_VEC_TANH,
    OPS_VEC_SIGMOID, /* 1 / (1 + e^-x), as e^x / (1 + e^x) below 0 (vec_math.c) */
    OPS_VEC_NUM_UNARY
} ops_vec_unary;

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

/* The CPU's vector loops, compiled once per instruction-set level (docs/cpu-dispatch.md).
 *
 * kernels/cpu/vec/vec_math.c is compiled by kernels/cpu/vec/meson.build once per level
 * with that level's flags (-mavx2 -mfma, -mavx512f ...) and OPS_VEC_SUFFIX naming the
 * copy; each copy exports only its table, ops_vec_table_<suffix>.  The kernels in
 * kernels/cpu/ call ops_vec(), which gives the table of the level the runtime chose
 * (runtime/dispatch/cpu_level.c): one pointer, picked once per process.
 *
 * A loop reads n contiguous elements of x and writes n of y; y may be x (in place),
 * no other overlap. */
#ifndef OPS_KERNELS_CPU_VEC_H
#define OPS_KERNELS_CPU_VEC_H

#include <stdint.h>

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

/* The table of the process's level. */
__attribute__((visibility("hidden"))) const ops_vec_table *ops_vec(void);

/* One per compiled level (only ops_vec_table_default off x86-64). */
__attribute__((visibility("hidden"))) extern const ops_vec_table ops_vec_table_default;
#if defined(__x86_64__)
__attribute__((visibility("hidden"))) extern const ops_vec_table ops_vec_table_avx2;
__attribute__((visibility("hidden"))) extern const ops_vec_table ops_vec_table_avx512;
#endif

#endif /* OPS_KERNELS_CPU_VEC_H */

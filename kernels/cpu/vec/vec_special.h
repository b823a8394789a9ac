/* The vector loops of erfinv, logit and cbrt (kernels/cpu/vec/vec_special.c), compiled
 * once per instruction-set level (docs/cpu-dispatch.md "erfinv, logit, cbrt").
 *
 * A loop reads n contiguous x and writes n y (y may be x, no other overlap); p holds
 * the op's parameter in the loop's precision: logit's eps (p[0] < 0: none, no clamp);
 * erfinv and cbrt take none (p may be NULL).  Every loop computes its last n % width
 * elements through one padded vector, so an element's result does not depend on where
 * its run starts. */
#ifndef OPS_KERNELS_CPU_VEC_SPECIAL_H
#define OPS_KERNELS_CPU_VEC_SPECIAL_H

#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

/* X(ENUM, name): the index in a table (OPS_VEC_SPECIAL_<ENUM>) and the op's name. */
#define OPS_VEC_SPECIAL_LIST(X) X(ERFINV, erfinv) X(LOGIT, logit) X(CBRT, cbrt)

#define OPS_VEC_SPECIAL_ENUM_(E, name) OPS_VEC_SPECIAL_##E,
typedef enum ops_vec_special_op {
    OPS_VEC_SPECIAL_LIST(OPS_VEC_SPECIAL_ENUM_) OPS_VEC_NUM_SPECIAL
} ops_vec_special_op;
#undef OPS_VEC_SPECIAL_ENUM_

typedef void ops_vec_special_f32_fn(const float *x, float *y, int64_t n, const float *p);
typedef void ops_vec_special_f64_fn(const double *x, double *y, int64_t n, const double *p);

typedef struct ops_vec_special_table {
    ops_vec_special_f32_fn *f32[OPS_VEC_NUM_SPECIAL];
    ops_vec_special_f64_fn *f64[OPS_VEC_NUM_SPECIAL];
} ops_vec_special_table;

OPS_VEC_DECLARE_TABLES(ops_vec_special_table, ops_vec_special_table);

/* The erfinv/logit/cbrt table of the process's level. */
static inline const ops_vec_special_table *
ops_vec_special(void)
{
    return OPS_VEC_PICK(ops_vec_special_table);
}

#endif /* OPS_KERNELS_CPU_VEC_SPECIAL_H */

/* The activation and binary-math vector loops (vec_act.c), compiled once per
 * instruction-set level (docs/cpu-dispatch.md "Activations"): elu/selu/celu, softplus,
 * mish, log_sigmoid, hardsigmoid, hardswish, leaky_relu, pow (tensor^tensor and tensor^scalar)
 * and atan2 over contiguous float32/float64.
 *
 * A unary loop reads n contiguous x and writes n y (y may be x, no other overlap); p
 * holds its parameters in the loop's precision (ops_vec_act_op says which).  A binary
 * loop reads a and b and writes y (y may be a or b).  Every loop computes its last
 * n % width elements through one padded vector, so an element's result does not
 * depend on where its run starts. */
#ifndef OPS_KERNELS_CPU_VEC_ACT_H
#define OPS_KERNELS_CPU_VEC_ACT_H

#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

/* The unary loops with parameters; their index in a table, and what p holds. */
typedef enum ops_vec_act_op {
    OPS_VEC_ACT_ELU,         /* p = {negcoef, poscoef, negiptcoef} (ops_math_elu) */
    OPS_VEC_ACT_SOFTPLUS,    /* p = {beta, threshold} */
    OPS_VEC_ACT_MISH,        /* no p */
    OPS_VEC_ACT_LOG_SIGMOID, /* no p */
    OPS_VEC_ACT_HARDSIGMOID, /* no p */
    OPS_VEC_ACT_HARDSWISH,   /* no p */
    OPS_VEC_ACT_LEAKY_RELU,  /* p = {negative_slope} */
    OPS_VEC_ACT_POW_SCALAR,  /* p = {exponent}: x^e, with PyTorch's forms of e = 2, 3,
                              * 0.5, -0.5, -1, -2 (x*x, x*x*x, sqrt, 1/sqrt, 1/x, (1/x)^2) */
    OPS_VEC_NUM_ACT
} ops_vec_act_op;

/* The binary loops. */
typedef enum ops_vec_act2_op {
    OPS_VEC_ACT2_POW,   /* a^b */
    OPS_VEC_ACT2_ATAN2, /* atan2(a, b) */
    OPS_VEC_NUM_ACT2
} ops_vec_act2_op;

typedef void ops_vec_act_f32_fn(const float *x, float *y, int64_t n, const float *p);
typedef void ops_vec_act_f64_fn(const double *x, double *y, int64_t n, const double *p);
typedef void ops_vec_act2_f32_fn(const float *a, const float *b, float *y, int64_t n);
typedef void ops_vec_act2_f64_fn(const double *a, const double *b, double *y, int64_t n);

typedef struct ops_vec_act_table {
    ops_vec_act_f32_fn *act_f32[OPS_VEC_NUM_ACT];
    ops_vec_act_f64_fn *act_f64[OPS_VEC_NUM_ACT];
    ops_vec_act2_f32_fn *act2_f32[OPS_VEC_NUM_ACT2];
    ops_vec_act2_f64_fn *act2_f64[OPS_VEC_NUM_ACT2];
} ops_vec_act_table;

OPS_VEC_DECLARE_TABLES(ops_vec_act_table, ops_vec_act_table);

/* The activation table of the process's level. */
static inline const ops_vec_act_table *
ops_vec_act(void)
{
    return OPS_VEC_PICK(ops_vec_act_table);
}

#endif /* OPS_KERNELS_CPU_VEC_ACT_H */

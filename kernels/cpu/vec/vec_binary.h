/* Vector loops of the binary arithmetic ops (add, sub, mul, div, maximum, minimum, fmax, fmin) over float32,
 * float64, float16 and bfloat16 runs, compiled once per instruction-set level
 * (kernels/cpu/vec/vec_binary.c; docs/cpu-dispatch.md "Elementwise loops and threads").
 *
 * A loop computes n elements of out from x and y, each of the run's three layouts the
 * iterator's inner loop meets most: both inputs contiguous (OPS_VEC_BC_NONE), x one
 * broadcast element (OPS_VEC_BC_X: stride 0, a scalar or a row broadcast along the
 * inner dim) or y one element (OPS_VEC_BC_Y); out is contiguous and may be exactly x
 * or y (in place), no other overlap.  float16/bfloat16 compute in float and round once
 * on store, bit for bit what the scalar loop (OPS_LOAD, float arithmetic, OPS_STORE)
 * gives, NaN included (stored as the quiet NaN 0x7e00 / input >> 16 | 0x40 with its
 * sign).  The _ALPHA forms compute x + alpha * y and x - alpha * y (two roundings, no
 * fused multiply-add, as the scalar loop); alpha points at the opmath value (float
 * for float32/float16/bfloat16, double for float64). */
#ifndef OPS_KERNELS_CPU_VEC_BINARY_H
#define OPS_KERNELS_CPU_VEC_BINARY_H

#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

typedef enum ops_vec_binary {
    OPS_VEC_BIN_ADD,
    OPS_VEC_BIN_SUB,
    OPS_VEC_BIN_MUL,
    OPS_VEC_BIN_DIV,
    OPS_VEC_BIN_ADD_ALPHA, /* x + alpha * y */
    OPS_VEC_BIN_SUB_ALPHA, /* x - alpha * y */
    OPS_VEC_BIN_MAX,       /* maximum: (x >= y || x != x) ? x : y (NaN from either) */
    OPS_VEC_BIN_MIN,       /* minimum: (x <= y || x != x) ? x : y */
    OPS_VEC_BIN_FMAX,      /* fmax: (x != x || y > x) ? y : x (a NaN loses to a number) */
    OPS_VEC_BIN_FMIN,      /* fmin: (x != x || y < x) ? y : x */
    OPS_VEC_NUM_BINARY
} ops_vec_binary_op;

/* Which input of a run is one broadcast element (stride 0). */
enum { OPS_VEC_BC_NONE = 0, OPS_VEC_BC_X = 1, OPS_VEC_BC_Y = 2 };

typedef void ops_vec_binary_fn(void *out, const void *x, const void *y, int64_t n, int bc,
                               const void *alpha);

/* The dtypes with loops, their column in the table. */
typedef enum ops_vec_binary_dtype {
    OPS_VEC_BDT_F32,
    OPS_VEC_BDT_F64,
    OPS_VEC_BDT_F16,
    OPS_VEC_BDT_BF16,
    OPS_VEC_NUM_BDT
} ops_vec_binary_dtype;

typedef struct ops_vec_binary_table {
    ops_vec_binary_fn *fn[OPS_VEC_NUM_BINARY][OPS_VEC_NUM_BDT];
} ops_vec_binary_table;

OPS_VEC_DECLARE_TABLES(ops_vec_binary_table, ops_vec_binary_table);

/* The binary table of the process's level. */
static inline const ops_vec_binary_table *
ops_vec_binary(void)
{
    return OPS_VEC_PICK(ops_vec_binary_table);
}

#endif /* OPS_KERNELS_CPU_VEC_BINARY_H */

/* Vector loops converting float16 and bfloat16 runs to float32 and back, compiled once
 * per instruction-set level (kernels/cpu/vec/vec_convert.c; docs/cpu-dispatch.md "What
 * has vector loops so far").  The half-type path of the unary math kernels
 * (kernels/cpu/unary.c) widens a block with to_f32, runs the float32 loop and narrows
 * it with from_f32.
 *
 * Each loop gives, element by element, the bits of the scalar conversions of
 * ops_scalar_math.h: widening is exact (a float16 signaling NaN may come out quiet at
 * the F16C levels; narrowing makes every NaN the same quiet NaN, so a half result does
 * not see the difference); narrowing rounds to nearest even, overflow to inf, a float16
 * NaN stored as 0x7e00 with its sign, a bfloat16 NaN as x >> 16 | 0x40.  So a result
 * does not depend on the level or where a run starts.  Runs are contiguous; n any
 * length (the tail element by element, the same conversion).  The entries are never
 * NULL: a level without F16C (the baseline, an AVX2 CPU lacking it) has the scalar
 * loops. */
#ifndef OPS_KERNELS_CPU_VEC_CONVERT_H
#define OPS_KERNELS_CPU_VEC_CONVERT_H

#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

/* The half types, their index in the table. */
enum { OPS_VEC_CVT_F16 = 0, OPS_VEC_CVT_BF16 = 1, OPS_VEC_NUM_CVT = 2 };

typedef void ops_vec_to_f32_fn(float *y, const uint16_t *x, int64_t n);
typedef void ops_vec_from_f32_fn(uint16_t *y, const float *x, int64_t n);

typedef struct ops_vec_convert_table {
    ops_vec_to_f32_fn *to_f32[OPS_VEC_NUM_CVT];
    ops_vec_from_f32_fn *from_f32[OPS_VEC_NUM_CVT];
} ops_vec_convert_table;

OPS_VEC_DECLARE_TABLES(ops_vec_convert_table, ops_vec_convert_table);

/* The conversion table of the process's level. */
static inline const ops_vec_convert_table *
ops_vec_convert(void)
{
    return OPS_VEC_PICK(ops_vec_convert_table);
}

#endif /* OPS_KERNELS_CPU_VEC_CONVERT_H */

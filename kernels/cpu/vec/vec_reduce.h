/* The reductions' vector loops (kernels/cpu/vec/vec_reduce.c), compiled once per
 * instruction-set level; kernels/cpu/reduce.c and reduce_outer.c take the table of the
 * process's level with ops_vec_reduce() (docs/cpu-dispatch.md "Reductions").
 *
 * Run loops (contiguous x[0..n)): sums (and counts) are blocked: each block of OPS_VEC_RED_BLOCK
 * elements is summed plainly in four vector accumulators (a lane adds at most
 * OPS_VEC_RED_BLOCK / 16 elements), the block vectors are merged pairwise like a binary
 * counter, lane by lane, and the lanes added in a fixed tree at the end, so the error
 * grows with log(n) as the scalar pairwise loop's does.  The result depends only on x and n (and the level), never
 * on threads.  max/min return NaN when some element is NaN (and may when +inf and -inf
 * are both there), else the extreme, whose sign when it is zero need not be the scalar
 * loop's: callers redo a NaN or zero result with the scalar loop, whose rules (the first
 * NaN wins, ties keep the first) are the contract.
 *
 * Row loops (outer reductions): acc[c] op= x[c] for c < n, element by element exactly as
 * the scalar statements written beside each. */
#ifndef OPS_KERNELS_CPU_VEC_REDUCE_H
#define OPS_KERNELS_CPU_VEC_REDUCE_H

#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

/* Elements per plainly summed block of the run sums. */
#define OPS_VEC_RED_BLOCK 1024

typedef struct ops_vec_reduce_table {
    const char *level;
    /* run sums: x, |x|, x*x, x with NaN as 0, exp(x - m) */
    float (*sum_f32)(const float *x, int64_t n);
    double (*sum_f64)(const double *x, int64_t n);
    float (*sumabs_f32)(const float *x, int64_t n);
    double (*sumabs_f64)(const double *x, int64_t n);
    float (*sumsq_f32)(const float *x, int64_t n);
    double (*sumsq_f64)(const double *x, int64_t n);
    float (*nansum_f32)(const float *x, int64_t n);
    double (*nansum_f64)(const double *x, int64_t n);
    float (*sumexp_f32)(const float *x, int64_t n, float m);
    double (*sumexp_f64)(const double *x, int64_t n, double m);
    /* the count of elements that are not NaN (nanmean's divisor; exact for n < 2^24
     * at float32, the callers' pieces being 65536 at most) */
    float (*count_f32)(const float *x, int64_t n);
    double (*count_f64)(const double *x, int64_t n);
    /* bfloat16 / float16 runs (uint16_t bits) summed in float32 as sum_f32; sum_f16 is
     * NULL where the level has no conversion, and at avx2 needs F16C
     * (__builtin_cpu_supports("f16c")) */
    float (*sum_bf16)(const uint16_t *x, int64_t n);
    float (*sum_f16)(const uint16_t *x, int64_t n);
    /* var/std: the sum of x and of (x - mean)^2 in float64 */
    double (*sum_f32_f64)(const float *x, int64_t n);
    double (*sqdev_f32)(const float *x, int64_t n, double mean);
    double (*sqdev_f64)(const double *x, int64_t n, double mean);
    /* run products (lane by lane, then the lanes in a fixed tree) */
    float (*prod_f32)(const float *x, int64_t n);
    double (*prod_f64)(const double *x, int64_t n);
    /* run max/min (n >= 1); NaN when a NaN is there (see above) */
    float (*max_f32)(const float *x, int64_t n);
    double (*max_f64)(const double *x, int64_t n);
    float (*min_f32)(const float *x, int64_t n);
    double (*min_f64)(const double *x, int64_t n);
    /* min returned and max into *hi in one pass (n >= 1; NaN for both as max/min) */
    float (*minmax_f32)(const float *x, int64_t n, float *hi);
    double (*minmax_f64)(const double *x, int64_t n, double *hi);
    /* max/min of |x| (n >= 1; NaN as max/min), the sum of |x|^p (SLEEF's pow) */
    float (*absmax_f32)(const float *x, int64_t n);
    double (*absmax_f64)(const double *x, int64_t n);
    float (*absmin_f32)(const float *x, int64_t n);
    double (*absmin_f64)(const double *x, int64_t n);
    float (*sumpow_f32)(const float *x, int64_t n, float p);
    double (*sumpow_f64)(const double *x, int64_t n, double p);
    /* the sum of |x|^3 as |x| * |x| * |x| */
    float (*sumcube_f32)(const float *x, int64_t n);
    double (*sumcube_f64)(const double *x, int64_t n);
    /* the first i < n with x[i] == v (v NaN: the first NaN), or n */
    int64_t (*find_f32)(const float *x, int64_t n, float v);
    int64_t (*find_f64)(const double *x, int64_t n, double v);
    /* integer run sums, wrapping as uint64_t */
    uint64_t (*sum_i32)(const int32_t *x, int64_t n);
    uint64_t (*sum_i64)(const int64_t *x, int64_t n);
    /* rows: acc[c] += x[c]; acc[c] = x[c] + acc[c]; acc[c] += (x[c] == x[c] ? x[c] : 0);
     * acc[c] *= x[c]; acc[c] = ops_red_max_nan(acc[c], x[c]); ... min */
    void (*row_add_f32)(float *acc, const float *x, int64_t n);
    void (*row_add_f64)(double *acc, const double *x, int64_t n);
    void (*row_radd_f32)(float *acc, const float *x, int64_t n);
    void (*row_radd_f64)(double *acc, const double *x, int64_t n);
    void (*row_nanadd_f32)(float *acc, const float *x, int64_t n);
    void (*row_nanadd_f64)(double *acc, const double *x, int64_t n);
    void (*row_mul_f32)(float *acc, const float *x, int64_t n);
    void (*row_mul_f64)(double *acc, const double *x, int64_t n);
    void (*row_max_f32)(float *acc, const float *x, int64_t n);
    void (*row_max_f64)(double *acc, const double *x, int64_t n);
    void (*row_min_f32)(float *acc, const float *x, int64_t n);
    void (*row_min_f64)(double *acc, const double *x, int64_t n);
} ops_vec_reduce_table;

OPS_VEC_DECLARE_TABLES(ops_vec_reduce_table, ops_vec_reduce_table);

/* The reduction table of the process's level. */
static inline const ops_vec_reduce_table *
ops_vec_reduce(void)
{
    return OPS_VEC_PICK(ops_vec_reduce_table);
}

#endif /* OPS_KERNELS_CPU_VEC_REDUCE_H */

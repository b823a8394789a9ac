/* The pooling loops of the CPU, compiled once per instruction-set level
 * (kernels/cpu/vec/vec_pool.c; docs/cpu-dispatch.md "Pooling").
 *
 * A loop computes the outputs [ox0, ox1) of one output row of one plane, float32 or
 * float64 (float16 and bfloat16 planes go through float32 copies, kernels/cpu/pool.c),
 * a window of whole taps (no clipping) for each of them: the window's rows y0, y0 +
 * dh, ... below y1, its taps ox * sw - pw + kx * dw (kx < kw) inside the row.  Each
 * output is computed by the same comparisons or sums, in the same order (rows, then
 * taps), as the scalar loops of kernels/cpu/pool.c, so the values and indices are
 * theirs: NaN wins (the last NaN), the first of equal maxima wins. */
#ifndef OPS_KERNELS_CPU_VEC_POOL_H
#define OPS_KERNELS_CPU_VEC_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

typedef struct ops_vec_pool_row {
    const void *x; /* the input plane (float or double), contiguous rows */
    int64_t sy;     /* its row stride (elements) */
    int64_t y0, y1, dh, iw, kw, sw, dw, pw;
    /* the outputs; with sw == 2 the element after each window's last tap is in the
     * row too (the loops read pairs) */
    int64_t ox0, ox1;
} ops_vec_pool_row;

/* One output position of every channel of an image: the window's rows y0, y0 + dh,
 * ... below y1 and columns x0, x0 + dw, ... below x1, already clipped to the input
 * (the scalar loop's window).  Every channel shares the window, one lane per channel:
 * loads where the channels are contiguous (channels-last, sc == 1), gathers at stride
 * sc otherwise (NCHW planes: adaptive pooling, whose windows differ along a row). */
typedef struct ops_vec_pool_cl {
    const void *x; /* the element (channel 0, row 0, column 0) of the image */
    int64_t sy, sx; /* row and column strides (elements) */
    int64_t y0, y1, dh, x0, x1, dw;
    int64_t nc; /* channels */
    int64_t sc; /* channel stride (elements); above 1, (width - 1) * sc below 2^31 */
} ops_vec_pool_cl;

typedef struct ops_vec_pool_table {
    const char *level; /* "default", "avx2", "avx512" */
    int width;         /* float32 outputs per vector: a loop does nothing for fewer (false) */
    int width_f64;     /* the same for the float64 loops */
    /* max over the windows into out[ox], their flat indices y * iw + x into idx[ox]
     * when idx is not NULL */
    bool (*max_f32)(const ops_vec_pool_row *r, float *out, int64_t *idx);
    /* the sum over the windows (from 0) divided by div into out[ox] */
    bool (*avg_f32)(const ops_vec_pool_row *r, float div, float *out);
    /* the max of each channel into m[c] and the number of its winning tap (in the
     * scan order: rows, then columns) into k[c] when k is not NULL; a non-empty
     * window, at least `width` channels and a channel stride the gathers can take
     * (false otherwise) */
    bool (*max_cl_f32)(const ops_vec_pool_cl *r, float *m, int32_t *k);
    /* the sum of each channel over the window (from 0, in the scan order) divided
     * by div into m[c]; the same conditions */
    bool (*avg_cl_f32)(const ops_vec_pool_cl *r, float div, float *m);
    /* the same four at float64 (the same scans; width_f64 in place of width) */
    bool (*max_f64)(const ops_vec_pool_row *r, double *out, int64_t *idx);
    bool (*avg_f64)(const ops_vec_pool_row *r, double div, double *out);
    bool (*max_cl_f64)(const ops_vec_pool_cl *r, double *m, int32_t *k);
    bool (*avg_cl_f64)(const ops_vec_pool_cl *r, double div, double *m);
    /* y[i] += x[i], i < n (avg pooling's gradient adds a row's share to each row of
     * its windows): each element by one addition, the same bits at every level */
    void (*addto_f32)(float *y, const float *x, int64_t n);
    void (*addto_f64)(double *y, const double *x, int64_t n);
    /* y[i] = x[i] / d[i], i < n (each output's gradient by its divisor): correctly
     * rounded, the same bits at every level */
    void (*div_f32)(float *y, const float *x, const float *d, int64_t n);
    void (*div_f64)(double *y, const double *x, const double *d, int64_t n);
} ops_vec_pool_table;

OPS_VEC_DECLARE_TABLES(ops_vec_pool_table, ops_vec_pool_table);

/* The pooling table of the process's level. */
static inline const ops_vec_pool_table *
ops_vec_pool(void)
{
    return OPS_VEC_PICK(ops_vec_pool_table);
}

#endif /* OPS_KERNELS_CPU_VEC_POOL_H */

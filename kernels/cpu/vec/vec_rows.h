/* The fused row loops of softmax, log_softmax, cross_entropy and layer_norm, compiled
 * once per instruction-set level (kernels/cpu/vec/vec_rows.c; docs/cpu-dispatch.md
 * "Row kernels"); the CPU kernels (kernels/cpu/reduce_dim.c, loss.c, norm.c) take the
 * table of the process's level with ops_vec_rows().
 *
 * A row is n contiguous elements; every loop computes one row (or one block of
 * columns) alone, in a fixed order, so a result never depends on how the rows were
 * split across threads.  float32 rows accumulate in float (several vector
 * accumulators), as PyTorch's CPU softmax does, except the layer_norm moments (float
 * blocks summed in double, kernels/cpu/norm.c's precision).  NaN and infinities give
 * what the scalar formulas give: a NaN anywhere in a row makes the sum of
 * exponentials NaN, so the whole row's softmax is NaN; a row of -inf is NaN
 * (-inf - -inf). */
#ifndef OPS_KERNELS_CPU_VEC_ROWS_H
#define OPS_KERNELS_CPU_VEC_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/vec/vec.h"

typedef struct ops_vec_rows_table {
    const char *level; /* "default", "avx2", "avx512" */
    /* y = softmax(x) (log: log_softmax) of one row of n; y may be x. */
    void (*softmax_f32)(const float *x, float *y, int64_t n, bool log);
    void (*softmax_f64)(const double *x, double *y, int64_t n, bool log);
    /* The same along len rows inner apart, for the cols (<= inner) contiguous columns
     * starting at x (and y): each column is one softmax, the columns in vectors. */
    void (*softmax_cols_f32)(const float *x, float *y, int64_t len, int64_t inner, int64_t cols, bool log);
    void (*softmax_cols_f64)(const double *x, double *y, int64_t len, int64_t inner, int64_t cols, bool log);
    /* The backward of one row from the forward's result y and its gradient gy:
     * gx = y (gy - sum(gy y)) (softmax), gx = gy - exp(y) sum(gy) (log_softmax), the
     * sum in double; gx may be gy. */
    void (*softmax_bwd_f32)(const float *gy, const float *y, float *gx, int64_t n, bool log);
    void (*softmax_bwd_f64)(const double *gy, const double *y, double *gx, int64_t n, bool log);
    /* *m = max of the row, *ls = log(sum(exp(x - m))): log_softmax(x)[k] is
     * (x[k] - m) - ls, as the softmax loops compute it. */
    void (*logsumexp_f32)(const float *x, int64_t n, float *m, float *ls);
    void (*logsumexp_f64)(const double *x, int64_t n, double *m, double *ls);
    /* Mean and biased variance of a row (two passes, the sums in double). */
    void (*moments_f32)(const float *x, int64_t n, double *mean, double *var);
    void (*moments_f64)(const double *x, int64_t n, double *mean, double *var);
    /* y = (x - m) * r * w + b; w and b may be NULL (1 and 0). */
    void (*norm_apply_f32)(const float *x, float *y, int64_t n, float m, float r, const float *w, const float *b);
    void (*norm_apply_f64)(const double *x, double *y, int64_t n, double m, double r, const double *w,
                           const double *b);
    /* layer_norm's backward over rows rows of n (g, x, dx: rows x n; mean, rstd: one
     * per row; w: n, or NULL for 1): dx = rstd (g w - mean(g w) - x^ mean(g w x^))
     * with x^ = (x - mean) rstd, when dx is not NULL; the rows' sums of g x^ and of g
     * added to dw[j] and db[j] (in the rows' order) when dw (db) is not NULL. */
    void (*ln_bwd_f32)(const float *g, const float *x, const float *w, const float *mean, const float *rstd,
                       int64_t rows, int64_t n, float *dx, float *dw, float *db);
    void (*ln_bwd_f64)(const double *g, const double *x, const double *w, const double *mean, const double *rstd,
                       int64_t rows, int64_t n, double *dx, double *dw, double *db);
    /* softmax_bwd down len rows inner apart, for the cols (<= inner) contiguous columns
     * at gy, y and gx (each column one row of softmax_bwd; gx may be gy). */
    void (*softmax_bwd_cols_f32)(const float *gy, const float *y, float *gx, int64_t len, int64_t inner, int64_t cols,
                                 bool log);
    void (*softmax_bwd_cols_f64)(const double *gy, const double *y, double *gx, int64_t len, int64_t inner,
                                 int64_t cols, bool log);
    /* cross_entropy over a row of n classes: *m and *ls as logsumexp; with smooth,
     * *sw = sum_k w[k] (x[k] - m) (w NULL: 1; else 0). */
    void (*ce_row_f32)(const float *x, int64_t n, const float *w, bool smooth, float *m, float *ls, double *sw);
    void (*ce_row_f64)(const double *x, int64_t n, const double *w, bool smooth, double *m, double *ls, double *sw);
    /* cross_entropy over cols contiguous positions at x whose len classes are inner
     * apart ([N, C, d1...] inputs): m[j], ls[j] per position (as logsumexp), sw[j] =
     * sum_k w[k] (x[k inner + j] - m[j]) unless sw is NULL; unless gx is NULL, the
     * gradient gx[k inner + j] = a[j] softmax(x)[k] - b[j] w[k] (b NULL: no second
     * term; w NULL: 1). */
    void (*ce_cols_f32)(const float *x, int64_t len, int64_t inner, int64_t cols, const float *w, float *m,
                        float *ls, double *sw, float *gx, const float *a, const float *b);
    void (*ce_cols_f64)(const double *x, int64_t len, int64_t inner, int64_t cols, const double *w, double *m,
                        double *ls, double *sw, double *gx, const double *a, const double *b);
} ops_vec_rows_table;

OPS_VEC_DECLARE_TABLES(ops_vec_rows_table, ops_vec_rows_table);

/* The row table of the process's level. */
static inline const ops_vec_rows_table *
ops_vec_rows(void)
{
    return OPS_VEC_PICK(ops_vec_rows_table);
}

#endif /* OPS_KERNELS_CPU_VEC_ROWS_H */

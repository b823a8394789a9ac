/* Normalization and embedding loops (CPU), registered for the stubs of kernels/norm.h
 * and called by the drivers of kernels/norm.c.
 *
 * Statistics are two-pass (mean, then the sum of squared deviations from it) with
 * double accumulators, so a large mean does not cancel the variance away and a float
 * row of a million elements keeps its precision; the normalizing pass runs in the
 * compute type (float or double).  Work is split across OpenMP threads by rows
 * (layer_norm), channels (batch_norm statistics) or (batch, group) blocks above the
 * grain size. */
#include <math.h>
#include <string.h>

#include "kernels/cpu/vec/vec_rows.h"
#include "kernels/norm.h"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(norm_layer_rows, CPU, norm_layer_rows_cpu);
OPS_REGISTER_STUB(norm_layer_backward_rows, CPU, norm_layer_backward_rows_cpu);
OPS_REGISTER_STUB(norm_batch_stats, CPU, norm_batch_stats_cpu);
OPS_REGISTER_STUB(norm_batch_apply, CPU, norm_batch_apply_cpu);
OPS_REGISTER_STUB(norm_group_blocks, CPU, norm_group_blocks_cpu);
OPS_REGISTER_STUB(norm_embedding_rows, CPU, norm_embedding_rows_cpu);

#ifdef _OPENMP
#define NRM_SIMD_SUM_(v) OPS_PRAGMA_(omp simd reduction(+ : v))
#define NRM_PARALLEL_FOR_(cond) OPS_PRAGMA_(omp parallel for schedule(static) if (cond))
#else
#define NRM_SIMD_SUM_(v)
#define NRM_PARALLEL_FOR_(cond)
#endif

static const void *
nrm_data(const ops_tensor *t)
{
    return t != NULL ? ops_tensor_data_ptr(t) : NULL;
}

/* Mean and biased variance of n contiguous elements (two passes, double sums). */
#define NRM_DEFINE_MOMENTS_(SUF, T)                                                                \
    static void nrm_moments_##SUF(const T *x, int64_t n, double *mean, double *var)                \
    {                                                                                              \
        double s = 0, q = 0;                                                                       \
        NRM_SIMD_SUM_(s)                                                                           \
        for (int64_t j = 0; j < n; j++)                                                            \
            s += (double)x[j];                                                                     \
        const double mu = s / (double)n;                                                           \
        NRM_SIMD_SUM_(q)                                                                           \
        for (int64_t j = 0; j < n; j++) {                                                          \
            const double d = (double)x[j] - mu;                                                    \
            q += d * d;                                                                            \
        }                                                                                          \
        *mean = mu;                                                                                \
        *var = q / (double)n;                                                                      \
    }

NRM_DEFINE_MOMENTS_(f32, float)
NRM_DEFINE_MOMENTS_(f64, double)

/* y = (x - m) * s + b with one scale (r * w) and shift (b) for the whole run: batch_norm and
 * group_norm, whose parameters are per channel. */
#define NRM_DEFINE_AFFINE_(SUF, T)                                                                 \
    static void nrm_affine_##SUF(const T *restrict x, T *restrict y, int64_t n, T m, T s, T b)     \
    {                                                                                              \
        OPS_SIMD_LOOP                                                                              \
        for (int64_t j = 0; j < n; j++)                                                            \
            y[j] = (x[j] - m) * s + b;                                                             \
    }

NRM_DEFINE_AFFINE_(f32, float)
NRM_DEFINE_AFFINE_(f64, double)

/* M rows of N: y, and each row's mean and rstd (when mean is not NULL), through the
 * row loops of the process's ISA level (kernels/cpu/vec/vec_rows.c: the same two-pass
 * moments, float blocks summed in double). */
#define LN_DEFINE_(SUF, T)                                                                         \
    static void ln_rows_##SUF(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, int64_t M, \
                              int64_t N, double eps)                                               \
    {                                                                                              \
        const ops_vec_rows_table *vt = ops_vec_rows();                                             \
        const bool par = M > 1 && (double)M * (double)N > OPS_GRAIN_SIZE;                          \
        (void)par;                                                                                 \
        NRM_PARALLEL_FOR_(par)                                                                     \
        for (int64_t i = 0; i < M; i++) {                                                          \
            double mu, var;                                                                        \
            vt->moments_##SUF(x + i * N, N, &mu, &var);                                            \
            const double rs = 1.0 / sqrt(var + eps);                                               \
            if (mean != NULL) {                                                                    \
                mean[i] = (T)mu;                                                                   \
                rstd[i] = (T)rs;                                                                   \
            }                                                                                      \
            vt->norm_apply_##SUF(x + i * N, y + i * N, N, (T)mu, (T)rs, w, b);                     \
        }                                                                                          \
    }

LN_DEFINE_(f32, float)
LN_DEFINE_(f64, double)

/* layer_norm's backward over M rows of N (the per-level row loop of vec_rows.c).  The
 * rows go in fixed chunks of LN_BWD_CHUNK_; each chunk adds its rows' g x^ and g into
 * its own column partials (float for float rows), and the chunks' partials are summed
 * in double in chunk order afterwards: dw and db are the same bits for any thread
 * count or split (the chunks do not depend on the threads), and a column's float sum
 * never runs over more than LN_BWD_CHUNK_ rows. */
#define LN_BWD_CHUNK_ 32
#define LN_BWD_DEFINE_(SUF, T)                                                                     \
    static ops_status ln_bwd_##SUF(const char *op, const T *g, const T *x, const T *mean, const T *rstd, \
                                   const T *w, T *dx, T *dw, T *db, int64_t M, int64_t N)          \
    {                                                                                              \
        const ops_vec_rows_table *vt = ops_vec_rows();                                             \
        const int64_t nch = (M + LN_BWD_CHUNK_ - 1) / LN_BWD_CHUNK_;                               \
        const bool cols = dw != NULL || db != NULL;                                                \
        T *part = NULL;                                                                            \
        if (cols && nch > 0 && N > 0) {                                                            \
            /* (ops_host_malloc_array sets no error: its NULL must not read as OK) */             \
            if ((part = ops_host_malloc_array(nch * 2 * N, sizeof(T))) == NULL)                    \
                return ops_fail(OPS_ERR_OOM, "%s: out of memory (dweight/dbias partials)", op);    \
            memset(part, 0, (size_t)nch * 2 * (size_t)N * sizeof(T));                              \
        }                                                                                          \
        const bool par = nch > 1 && (double)M * (double)N > OPS_GRAIN_SIZE;                        \
        (void)par;                                                                                 \
        NRM_PARALLEL_FOR_(par)                                                                     \
        for (int64_t c = 0; c < nch; c++) {                                                        \
            const int64_t r0 = c * LN_BWD_CHUNK_, nr = M - r0 < LN_BWD_CHUNK_ ? M - r0 : LN_BWD_CHUNK_; \
            T *pw = part != NULL && dw != NULL ? part + (size_t)c * 2 * (size_t)N : NULL;          \
            T *pb = part != NULL && db != NULL ? part + ((size_t)c * 2 + 1) * (size_t)N : NULL;    \
            vt->ln_bwd_##SUF(g + r0 * N, x + r0 * N, w, mean + r0, rstd + r0, nr, N,               \
                             dx != NULL ? dx + r0 * N : NULL, pw, pb);                             \
        }                                                                                          \
        if (cols) {                                                                                \
            for (int k = 0; k < 2; k++) {                                                          \
                T *out = k == 0 ? dw : db;                                                         \
                if (out == NULL)                                                                   \
                    continue;                                                                      \
                for (int64_t j = 0; j < N; j++) {                                                  \
                    double s = 0;                                                                  \
                    for (int64_t c = 0; c < nch; c++)                                              \
                        s += (double)part[((size_t)c * 2 + (size_t)k) * (size_t)N + (size_t)j];    \
                    out[j] = (T)s;                                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        ops_host_free(part);                                                                       \
        return OPS_OK;                                                                             \
    }

LN_BWD_DEFINE_(f32, float)
LN_BWD_DEFINE_(f64, double)

/* Per-channel mean and sum of squared deviations of x (N x C x S). */
#define BN_DEFINE_STATS_(SUF, T)                                                                   \
    static void bn_stats_##SUF(const T *x, int64_t N, int64_t C, int64_t S, double *mean, double *m2) \
    {                                                                                              \
        const bool par = C > 1 && (double)N * (double)C * (double)S > OPS_GRAIN_SIZE;              \
        (void)par;                                                                                 \
        NRM_PARALLEL_FOR_(par)                                                                     \
        for (int64_t c = 0; c < C; c++) {                                                          \
            double s = 0, q = 0;                                                                   \
            for (int64_t n = 0; n < N; n++) {                                                      \
                const T *p = x + (n * C + c) * S;                                                  \
                NRM_SIMD_SUM_(s)                                                                   \
                for (int64_t j = 0; j < S; j++)                                                    \
                    s += (double)p[j];                                                             \
            }                                                                                      \
            const double mu = s / (double)(N * S);                                                 \
            for (int64_t n = 0; n < N; n++) {                                                      \
                const T *p = x + (n * C + c) * S;                                                  \
                NRM_SIMD_SUM_(q)                                                                   \
                for (int64_t j = 0; j < S; j++) {                                                  \
                    const double d = (double)p[j] - mu;                                            \
                    q += d * d;                                                                    \
                }                                                                                  \
            }                                                                                      \
            mean[c] = mu;                                                                          \
            m2[c] = q;                                                                             \
        }                                                                                          \
    }

BN_DEFINE_STATS_(f32, float)
BN_DEFINE_STATS_(f64, double)

/* y = (x - mean[c]) * invstd[c] * w[c] + b[c] over x (N x C x S); w, b may be NULL. */
#define BN_DEFINE_APPLY_(SUF, T)                                                                   \
    static void bn_apply_##SUF(const T *x, T *y, int64_t N, int64_t C, int64_t S, const double *mean, \
                               const double *invstd, const T *w, const T *b)                       \
    {                                                                                              \
        const bool par = N * C > 1 && (double)N * (double)C * (double)S > OPS_GRAIN_SIZE;          \
        (void)par;                                                                                 \
        NRM_PARALLEL_FOR_(par)                                                                     \
        for (int64_t nc = 0; nc < N * C; nc++) {                                                   \
            const int64_t c = nc % C;                                                              \
            const T s = (T)(invstd[c] * (w != NULL ? (double)w[c] : 1.0));                        \
            nrm_affine_##SUF(x + nc * S, y + nc * S, S, (T)mean[c], s, b != NULL ? b[c] : (T)0);   \
        }                                                                                          \
    }

BN_DEFINE_APPLY_(f32, float)
BN_DEFINE_APPLY_(f64, double)


/* x (N x C x S) in G groups of Cg = C / G channels: each (n, g) block of Cg * S
 * contiguous elements is normalized by its own statistics, then scaled per channel;
 * the statistics go to mean and rstd (N x G) when mean is not NULL. */
#define GN_DEFINE_(SUF, T)                                                                         \
    static void gn_##SUF(const T *x, T *y, int64_t N, int64_t C, int64_t S, int64_t G, const T *w, \
                         const T *b, double eps, T *mean, T *rstd)                                 \
    {                                                                                              \
        const int64_t Cg = C / G;                                                                  \
        const bool par = N * G > 1 && (double)N * (double)C * (double)S > OPS_GRAIN_SIZE;          \
        (void)par;                                                                                 \
        NRM_PARALLEL_FOR_(par)                                                                     \
        for (int64_t ng = 0; ng < N * G; ng++) {                                                   \
            const T *xb = x + ng * Cg * S;                                                         \
            T *yb = y + ng * Cg * S;                                                               \
            double mu, var;                                                                        \
            nrm_moments_##SUF(xb, Cg * S, &mu, &var);                                              \
            const double rs = 1.0 / sqrt(var + eps);                                               \
            if (mean != NULL) {                                                                    \
                mean[ng] = (T)mu;                                                                  \
                rstd[ng] = (T)rs;                                                                  \
            }                                                                                      \
            for (int64_t k = 0; k < Cg; k++) {                                                     \
                const int64_t c = (ng % G) * Cg + k;                                               \
                const T s = (T)(rs * (w != NULL ? (double)w[c] : 1.0));                            \
                nrm_affine_##SUF(xb + k * S, yb + k * S, S, (T)mu, s, b != NULL ? b[c] : (T)0);    \
            }                                                                                      \
        }                                                                                          \
    }

GN_DEFINE_(f32, float)
GN_DEFINE_(f64, double)

ops_status
norm_layer_rows_cpu(const char *op, const ops_tensor *x, const ops_tensor *w, const ops_tensor *b, ops_tensor *y,
                    ops_tensor *mean, ops_tensor *rstd, int64_t M, int64_t N, double eps)
{
    (void)op;
    if (x->dtype == OPS_FLOAT32)
        ln_rows_f32(nrm_data(x), nrm_data(w), nrm_data(b), (float *)nrm_data(y), (float *)nrm_data(mean),
                    (float *)nrm_data(rstd), M, N, eps);
    else
        ln_rows_f64(nrm_data(x), nrm_data(w), nrm_data(b), (double *)nrm_data(y), (double *)nrm_data(mean),
                    (double *)nrm_data(rstd), M, N, eps);
    return OPS_OK;
}

ops_status
norm_layer_backward_rows_cpu(const char *op, const ops_tensor *g, const ops_tensor *x, const ops_tensor *mean,
                             const ops_tensor *rstd, const ops_tensor *w, ops_tensor *dx, ops_tensor *dw, ops_tensor *db,
                             int64_t M, int64_t N)
{
    if (x->dtype == OPS_FLOAT32)
        return ln_bwd_f32(op, nrm_data(g), nrm_data(x), nrm_data(mean), nrm_data(rstd), nrm_data(w),
                          (float *)nrm_data(dx), (float *)nrm_data(dw), (float *)nrm_data(db), M, N);
    return ln_bwd_f64(op, nrm_data(g), nrm_data(x), nrm_data(mean), nrm_data(rstd), nrm_data(w),
                      (double *)nrm_data(dx), (double *)nrm_data(dw), (double *)nrm_data(db), M, N);
}

ops_status
norm_batch_stats_cpu(const char *op, const ops_tensor *x, int64_t N, int64_t C, int64_t S, double *mean_host,
                     double *m2_host)
{
    (void)op;
    if (x->dtype == OPS_FLOAT32)
        bn_stats_f32(nrm_data(x), N, C, S, mean_host, m2_host);
    else
        bn_stats_f64(nrm_data(x), N, C, S, mean_host, m2_host);
    return OPS_OK;
}

ops_status
norm_batch_apply_cpu(const char *op, const ops_tensor *x, ops_tensor *y, int64_t N, int64_t C, int64_t S,
                     const double *mean_host, const double *invstd_host, const ops_tensor *w, const ops_tensor *b)
{
    (void)op;
    if (x->dtype == OPS_FLOAT32)
        bn_apply_f32(nrm_data(x), (float *)nrm_data(y), N, C, S, mean_host, invstd_host, nrm_data(w), nrm_data(b));
    else
        bn_apply_f64(nrm_data(x), (double *)nrm_data(y), N, C, S, mean_host, invstd_host, nrm_data(w), nrm_data(b));
    return OPS_OK;
}

ops_status
norm_group_blocks_cpu(const char *op, const ops_tensor *x, ops_tensor *y, int64_t N, int64_t C, int64_t S, int64_t G,
                      const ops_tensor *w, const ops_tensor *b, double eps, ops_tensor *mean, ops_tensor *rstd)
{
    (void)op;
    if (x->dtype == OPS_FLOAT32)
        gn_f32(nrm_data(x), (float *)nrm_data(y), N, C, S, G, nrm_data(w), nrm_data(b), eps, (float *)nrm_data(mean),
               (float *)nrm_data(rstd));
    else
        gn_f64(nrm_data(x), (double *)nrm_data(y), N, C, S, G, nrm_data(w), nrm_data(b), eps,
               (double *)nrm_data(mean), (double *)nrm_data(rstd));
    return OPS_OK;
}

/* One pass: each index is checked as its row is copied; a bad one is skipped and the
 * first (in index order) reported once the loop is done, the result (fresh, the
 * driver's) then discarded. */
ops_status
norm_embedding_rows_cpu(const char *op, const ops_tensor *weight, const ops_tensor *k, ops_tensor *r)
{
    const int64_t n = ops_tensor_numel(k), V = weight->sizes[0], D = weight->sizes[1], *kd = nrm_data(k);
    const size_t isz = ops_dtype_itemsize(weight->dtype);
    const char *wb = (const char *)weight->storage->data + weight->offset * (int64_t)isz;
    char *rb = (char *)ops_tensor_data_ptr(r);
    const bool dense = weight->strides[1] == 1 || D == 1;
    int64_t bad = n;
#ifdef _OPENMP
    const bool par = n > 1 && (double)n * (double)D > OPS_GRAIN_SIZE;
#pragma omp parallel for schedule(static) if (par) reduction(min : bad)
#endif
    for (int64_t i = 0; i < n; i++) {
        const int64_t ki = kd[i];
        if ((uint64_t)ki >= (uint64_t)V) {
            bad = i < bad ? i : bad;
            continue;
        }
        const char *src = wb + ki * weight->strides[0] * (int64_t)isz;
        char *dst = rb + i * D * (int64_t)isz;
        if (dense)
            memcpy(dst, src, (size_t)D * isz);
        else
            ops_convert_run(weight->dtype, dst, (int64_t)isz, weight->dtype, src, weight->strides[1] * (int64_t)isz, D);
    }
    return bad < n ? nrm_embedding_index_error(op, kd[bad], V) : OPS_OK;
}

/* The one-dim ops, the CPU loops: softmax, log_softmax, cumsum, cumprod (the
 * reduce_dim_loop stub of kernels/reduce.h) and cummax, cummin (reduce_cumext_loop).
 * Each line along dim is transformed on its own; the driver (kernels/reduce_dim.c) has
 * made the input contiguous in the dtype computed in. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/reduce_cpu.h"
#include "kernels/cpu/vec/vec_rows.h"
#include "kernels/reduce.h"

OPS_REGISTER_STUB(reduce_dim_loop, CPU, reduce_dim_loop_cpu);
OPS_REGISTER_STUB(reduce_cumext_loop, CPU, reduce_cumext_loop_cpu);
OPS_REGISTER_STUB(reduce_softmax_bwd_loop, CPU, reduce_softmax_bwd_loop_cpu);

/* Lines of len elements, inner apart, in contiguous src and dst of the same shape. */
typedef struct {
    int64_t outer, len, inner;
} dim_geom;

#ifdef _OPENMP
#define DIM_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) if (dim_par_on_)")
#define DIM_PARALLEL_REGION_ _Pragma("omp parallel if (dim_par_on_)")
#define DIM_FOR_ _Pragma("omp for schedule(static)")
#else
#define DIM_PARALLEL_FOR_
#define DIM_PARALLEL_REGION_
#define DIM_FOR_
#endif

/* softmax and log_softmax through the fused row loops of the process's ISA level
 * (kernels/cpu/vec/vec_rows.c; docs/cpu-dispatch.md "Row kernels"), one line per
 * thread at a time, so a line's result does not depend on the thread split:
 * - float32/float64 with inner == 1: each line is a contiguous row;
 * - float32/float64 with inner >= 16: the inner columns of each outer block in
 *   vectors, in tasks of SM_COLS_ columns (a multiple of every level's width, so a
 *   column is computed by the same lanes whatever the split);
 * - otherwise (float16/bfloat16, or a few inner columns): each line gathered into a
 *   row of float (double for float64), the row loop, scattered back.
 * Threads from SM_GRAIN_ elements on: an exponential per element pays for a fork at
 * far fewer elements than OPS_GRAIN_SIZE's copies. */
#define SM_GRAIN_ 8192
#define SM_COLS_ 64

#define SM_DEFINE_CONTIG_(SUF, T)                                                                  \
    static void sm_rows_##SUF(bool log, const dim_geom *g, const T *x, T *y)                      \
    {                                                                                              \
        const ops_vec_rows_table *vt = ops_vec_rows();                                             \
        const int64_t len = g->len, inner = g->inner;                                              \
        const double work = (double)g->outer * (double)len * (double)inner;                      \
        if (inner == 1) {                                                                          \
            const bool dim_par_on_ = g->outer > 1 && work > SM_GRAIN_;                             \
            (void)dim_par_on_;                                                                     \
            DIM_PARALLEL_FOR_                                                                      \
            for (int64_t l = 0; l < g->outer; l++)                                                 \
                vt->softmax_##SUF(x + l * len, y + l * len, len, log);                             \
            return;                                                                                \
        }                                                                                          \
        const int64_t nb = (inner + SM_COLS_ - 1) / SM_COLS_, tasks = g->outer * nb;               \
        const bool dim_par_on_ = tasks > 1 && work > SM_GRAIN_;                                    \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_FOR_                                                                          \
        for (int64_t t = 0; t < tasks; t++) {                                                      \
            const int64_t o = t / nb, c = (t % nb) * SM_COLS_;                                     \
            const int64_t base = o * len * inner + c;                                              \
            vt->softmax_cols_##SUF(x + base, y + base, len, inner,                                 \
                                   inner - c < SM_COLS_ ? inner - c : SM_COLS_, log);              \
        }                                                                                          \
    }

SM_DEFINE_CONTIG_(f32, float)
SM_DEFINE_CONTIG_(f64, double)

/* Lines gathered into a row of ACC (float or double), through the row loop FN. */
#define SM_DEFINE_GATHER_(SUF, T, ACC, FN)                                                         \
    static bool sm_gather_##SUF(bool log, const dim_geom *g, const T *x, T *y)                    \
    {                                                                                              \
        const ops_vec_rows_table *vt = ops_vec_rows();                                             \
        const int64_t lines = g->outer * g->inner, len = g->len, inner = g->inner;                 \
        const bool dim_par_on_ = lines > 1 && (double)lines * (double)len > SM_GRAIN_;             \
        bool ok = true;                                                                            \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_REGION_                                                                       \
        {                                                                                          \
            ACC *buf = malloc((size_t)len * sizeof(ACC));                                          \
            if (buf == NULL)                                                                       \
                ok = false;                                                                        \
            DIM_FOR_                                                                               \
            for (int64_t l = 0; l < lines; l++) {                                                  \
                if (buf == NULL)                                                                   \
                    continue;                                                                      \
                const int64_t base = (l / inner) * len * inner + l % inner;                        \
                for (int64_t k = 0; k < len; k++)                                                  \
                    buf[k] = (ACC)OPS_LOAD(&x[base + k * inner]);                                  \
                vt->FN(buf, buf, len, log);                                                        \
                for (int64_t k = 0; k < len; k++)                                                  \
                    OPS_STORE(&y[base + k * inner], buf[k]);                                       \
            }                                                                                      \
            free(buf);                                                                             \
        }                                                                                          \
        return ok;                                                                                 \
    }

SM_DEFINE_GATHER_(f16, ops_half, float, softmax_f32)
SM_DEFINE_GATHER_(bf16, ops_bfloat16, float, softmax_f32)
SM_DEFINE_GATHER_(f32, float, float, softmax_f32)
SM_DEFINE_GATHER_(f64, double, double, softmax_f64)

/* softmax/log_softmax of dtype dt through the row loops; false when a buffer could
 * not be had (the scalar lines below then compute it). */
static bool
sm_run(dim_kind kind, ops_dtype dt, const dim_geom *g, const char *src, char *dst)
{
    const bool log = kind == DIM_LOG_SOFTMAX;
    const bool cols = g->inner == 1 || g->inner >= 16;
    switch (dt) {
    case OPS_FLOAT32:
        if (cols) {
            sm_rows_f32(log, g, (const float *)src, (float *)dst);
            return true;
        }
        return sm_gather_f32(log, g, (const float *)src, (float *)dst);
    case OPS_FLOAT64:
        if (cols) {
            sm_rows_f64(log, g, (const double *)src, (double *)dst);
            return true;
        }
        return sm_gather_f64(log, g, (const double *)src, (double *)dst);
    case OPS_FLOAT16: return sm_gather_f16(log, g, (const ops_half *)src, (ops_half *)dst);
    case OPS_BFLOAT16: return sm_gather_bf16(log, g, (const ops_bfloat16 *)src, (ops_bfloat16 *)dst);
    default: return false;
    }
}

/* Floating lines, computed in ACC (softmax) or double (scans, as PyTorch's CPU
 * acc_type of float).  softmax comes here only when sm_run could not have a buffer. */
#define DIM_DEFINE_FLT_(SUF, T, ACC)                                                               \
    static void dim_flt_##SUF(dim_kind kind, const dim_geom *g, const char *src, char *dst)        \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const int64_t lines = g->outer * g->inner, len = g->len, inner = g->inner;                 \
        const bool dim_par_on_ = lines > 1 && (double)lines * (double)len > OPS_GRAIN_SIZE;        \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_FOR_                                                                          \
        for (int64_t l = 0; l < lines; l++) {                                                      \
            const int64_t base = (l / inner) * len * inner + l % inner;                            \
            const T *const x = in + base;                                                          \
            T *const y = out + base;                                                               \
            if (kind == DIM_CUMSUM || kind == DIM_CUMPROD) {                                       \
                double acc = kind == DIM_CUMPROD ? 1.0 : 0.0;                                      \
                for (int64_t k = 0; k < len; k++) {                                                \
                    const double v = (double)OPS_LOAD(&x[k * inner]);                              \
                    acc = kind == DIM_CUMPROD ? acc * v : acc + v;                                 \
                    OPS_STORE(&y[k * inner], (ACC)acc);                                            \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            ACC m = -INFINITY;                                                                     \
            for (int64_t k = 0; k < len; k++)                                                      \
                m = OPS_RED_MAX_NAN(m, (ACC)OPS_LOAD(&x[k * inner]));                              \
            ACC s = 0;                                                                             \
            for (int64_t k = 0; k < len; k++)                                                      \
                s += CPU_FP1(expf, exp, (ACC)(OPS_LOAD(&x[k * inner]) - m));                       \
            if (kind == DIM_SOFTMAX) {                                                             \
                for (int64_t k = 0; k < len; k++)                                                  \
                    OPS_STORE(&y[k * inner], CPU_FP1(expf, exp, (ACC)(OPS_LOAD(&x[k * inner]) - m)) / s); \
            } else {                                                                               \
                const ACC ls = CPU_FP1(logf, log, s);                                              \
                for (int64_t k = 0; k < len; k++)                                                  \
                    OPS_STORE(&y[k * inner], (ACC)(OPS_LOAD(&x[k * inner]) - m - ls));             \
            }                                                                                      \
        }                                                                                          \
    }

DIM_DEFINE_FLT_(f16, ops_half, float)
DIM_DEFINE_FLT_(bf16, ops_bfloat16, float)
DIM_DEFINE_FLT_(f32, float, float)
DIM_DEFINE_FLT_(f64, double, double)

/* Integer (and bool) scans wrap in uint64_t. */
#define DIM_DEFINE_INT_(SUF, T)                                                                    \
    static void dim_int_##SUF(dim_kind kind, const dim_geom *g, const char *src, char *dst)        \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const int64_t lines = g->outer * g->inner, len = g->len, inner = g->inner;                 \
        const bool dim_par_on_ = lines > 1 && (double)lines * (double)len > OPS_GRAIN_SIZE;        \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_FOR_                                                                          \
        for (int64_t l = 0; l < lines; l++) {                                                      \
            const int64_t base = (l / inner) * len * inner + l % inner;                            \
            uint64_t acc = kind == DIM_CUMPROD ? 1 : 0;                                            \
            for (int64_t k = 0; k < len; k++) {                                                    \
                const uint64_t v = (uint64_t)(int64_t)in[base + k * inner];                        \
                acc = kind == DIM_CUMPROD ? acc * v : acc + v;                                     \
                out[base + k * inner] = (T)(int64_t)acc;                                           \
            }                                                                                      \
        }                                                                                          \
    }

DIM_DEFINE_INT_(b, bool)
DIM_DEFINE_INT_(u8, uint8_t)
DIM_DEFINE_INT_(i8, int8_t)
DIM_DEFINE_INT_(i16, int16_t)
DIM_DEFINE_INT_(i32, int32_t)
DIM_DEFINE_INT_(i64, int64_t)

/* cummax/cummin along each line: the running extreme, and the position it was last
 * taken at.  Ties move the position forward (>=, <=); once a NaN is seen the value
 * stays NaN and only a later NaN moves the position (PyTorch's CPU rule). */
#define DIM_DEFINE_CUMEXT_(SUF, T, ACC, ISNAN)                                                     \
    static void dim_cumext_##SUF(bool is_max, const dim_geom *g, const char *src, char *dst,       \
                                 int64_t *idx)                                                     \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const int64_t lines = g->outer * g->inner, len = g->len, inner = g->inner;                 \
        const bool dim_par_on_ = lines > 1 && (double)lines * (double)len > OPS_GRAIN_SIZE;        \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_FOR_                                                                          \
        for (int64_t l = 0; l < lines; l++) {                                                      \
            const int64_t base = (l / inner) * len * inner + l % inner;                            \
            ACC best = 0;                                                                          \
            int64_t bi = 0;                                                                        \
            for (int64_t k = 0; k < len; k++) {                                                    \
                const int64_t at = base + k * inner;                                               \
                const ACC x = OPS_LOAD(&in[at]);                                                   \
                if (k == 0 || ISNAN(x) || (!ISNAN(best) && (is_max ? x >= best : x <= best))) {    \
                    best = x;                                                                      \
                    bi = k;                                                                        \
                }                                                                                  \
                OPS_STORE(&out[at], best);                                                         \
                idx[at] = bi;                                                                      \
            }                                                                                      \
        }                                                                                          \
    }

DIM_DEFINE_CUMEXT_(b, bool, bool, RED_NONAN_)
DIM_DEFINE_CUMEXT_(u8, uint8_t, uint8_t, RED_NONAN_)
DIM_DEFINE_CUMEXT_(i8, int8_t, int8_t, RED_NONAN_)
DIM_DEFINE_CUMEXT_(i16, int16_t, int16_t, RED_NONAN_)
DIM_DEFINE_CUMEXT_(i32, int32_t, int32_t, RED_NONAN_)
DIM_DEFINE_CUMEXT_(i64, int64_t, int64_t, RED_NONAN_)
DIM_DEFINE_CUMEXT_(f16, ops_half, float, RED_ISNAN_)
DIM_DEFINE_CUMEXT_(bf16, ops_bfloat16, float, RED_ISNAN_)
DIM_DEFINE_CUMEXT_(f32, float, float, RED_ISNAN_)
DIM_DEFINE_CUMEXT_(f64, double, double, RED_ISNAN_)

static void
dim_cumext_run(bool is_max, ops_dtype dt, const dim_geom *g, const char *src, char *dst, int64_t *idx)
{
    switch (dt) {
    case OPS_BOOL: dim_cumext_b(is_max, g, src, dst, idx); break;
    case OPS_UINT8: dim_cumext_u8(is_max, g, src, dst, idx); break;
    case OPS_INT8: dim_cumext_i8(is_max, g, src, dst, idx); break;
    case OPS_INT16: dim_cumext_i16(is_max, g, src, dst, idx); break;
    case OPS_INT32: dim_cumext_i32(is_max, g, src, dst, idx); break;
    case OPS_INT64: dim_cumext_i64(is_max, g, src, dst, idx); break;
    case OPS_FLOAT16: dim_cumext_f16(is_max, g, src, dst, idx); break;
    case OPS_BFLOAT16: dim_cumext_bf16(is_max, g, src, dst, idx); break;
    case OPS_FLOAT32: dim_cumext_f32(is_max, g, src, dst, idx); break;
    case OPS_FLOAT64: dim_cumext_f64(is_max, g, src, dst, idx); break;
    default: break;
    }
}

static void
dim_run(dim_kind kind, ops_dtype dt, const dim_geom *g, const char *src, char *dst)
{
    switch (dt) {
    case OPS_BOOL: dim_int_b(kind, g, src, dst); break;
    case OPS_UINT8: dim_int_u8(kind, g, src, dst); break;
    case OPS_INT8: dim_int_i8(kind, g, src, dst); break;
    case OPS_INT16: dim_int_i16(kind, g, src, dst); break;
    case OPS_INT32: dim_int_i32(kind, g, src, dst); break;
    case OPS_INT64: dim_int_i64(kind, g, src, dst); break;
    case OPS_FLOAT16: dim_flt_f16(kind, g, src, dst); break;
    case OPS_BFLOAT16: dim_flt_bf16(kind, g, src, dst); break;
    case OPS_FLOAT32: dim_flt_f32(kind, g, src, dst); break;
    case OPS_FLOAT64: dim_flt_f64(kind, g, src, dst); break;
    default: break;
    }
}

ops_status
reduce_dim_loop_cpu(const char *op, dim_kind kind, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                    ops_tensor *res)
{
    (void)op;
    const dim_geom g = {outer, len, inner};
    if ((kind == DIM_SOFTMAX || kind == DIM_LOG_SOFTMAX) &&
        sm_run(kind, src->dtype, &g, (const char *)ops_tensor_data_ptr(src), (char *)ops_tensor_data_ptr(res)))
        return OPS_OK;
    dim_run(kind, src->dtype, &g, (const char *)ops_tensor_data_ptr(src), (char *)ops_tensor_data_ptr(res));
    return OPS_OK;
}

ops_status
reduce_cumext_loop_cpu(const char *op, bool is_max, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                       ops_tensor *res, ops_tensor *idx)
{
    (void)op;
    const dim_geom g = {outer, len, inner};
    dim_cumext_run(is_max, src->dtype, &g, (const char *)ops_tensor_data_ptr(src), (char *)ops_tensor_data_ptr(res),
                   (int64_t *)ops_tensor_data_ptr(idx));
    return OPS_OK;
}

/* softmax's and log_softmax's gradients, one line per thread at a time (the row loop
 * of vec_rows.c): float32/float64 rows (inner == 1) in place, other lines gathered into
 * rows of float (double for float64) and scattered back. */
#define SMB_DEFINE_(SUF, T, ACC, FN)                                                               \
    static bool smb_##SUF(bool log, const dim_geom *gm, const T *g, const T *y, T *r)             \
    {                                                                                              \
        const ops_vec_rows_table *vt = ops_vec_rows();                                             \
        const int64_t lines = gm->outer * gm->inner, len = gm->len, inner = gm->inner;             \
        const bool dim_par_on_ = lines > 1 && (double)lines * (double)len > SM_GRAIN_;             \
        const bool direct = inner == 1 && sizeof(T) == sizeof(ACC);                                \
        bool ok = true;                                                                            \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_REGION_                                                                       \
        {                                                                                          \
            ACC *buf = direct ? NULL : malloc(2 * (size_t)len * sizeof(ACC));                      \
            if (!direct && buf == NULL)                                                            \
                ok = false;                                                                        \
            DIM_FOR_                                                                               \
            for (int64_t l = 0; l < lines; l++) {                                                  \
                const int64_t base = (l / inner) * len * inner + l % inner;                        \
                if (direct) {                                                                      \
                    vt->FN((const ACC *)(const void *)(g + base), (const ACC *)(const void *)(y + base), \
                           (ACC *)(void *)(r + base), len, log);                                   \
                    continue;                                                                      \
                }                                                                                  \
                if (buf == NULL)                                                                   \
                    continue;                                                                      \
                for (int64_t k = 0; k < len; k++) {                                                \
                    buf[k] = (ACC)OPS_LOAD(&g[base + k * inner]);                                  \
                    buf[len + k] = (ACC)OPS_LOAD(&y[base + k * inner]);                            \
                }                                                                                  \
                vt->FN(buf, buf + len, buf, len, log);                                             \
                for (int64_t k = 0; k < len; k++)                                                  \
                    OPS_STORE(&r[base + k * inner], buf[k]);                                       \
            }                                                                                      \
            free(buf);                                                                             \
        }                                                                                          \
        return ok;                                                                                 \
    }

/* float32/float64 lines of a non-last dim with inner >= 16: the columns in vectors, in
 * tasks of SM_COLS_ columns, as the forward (sm_rows_*). */
#define SMB_DEFINE_COLS_(SUF, T)                                                                   \
    static void smb_cols_##SUF(bool log, const dim_geom *gm, const T *g, const T *y, T *r)        \
    {                                                                                              \
        const ops_vec_rows_table *vt = ops_vec_rows();                                             \
        const int64_t len = gm->len, inner = gm->inner;                                            \
        const int64_t nb = (inner + SM_COLS_ - 1) / SM_COLS_, tasks = gm->outer * nb;              \
        const bool dim_par_on_ = tasks > 1 && (double)gm->outer * (double)len * (double)inner > SM_GRAIN_; \
        (void)dim_par_on_;                                                                         \
        DIM_PARALLEL_FOR_                                                                          \
        for (int64_t t = 0; t < tasks; t++) {                                                      \
            const int64_t base = (t / nb) * len * inner + (t % nb) * SM_COLS_;                     \
            const int64_t c = (t % nb) * SM_COLS_;                                                 \
            vt->softmax_bwd_cols_##SUF(g + base, y + base, r + base, len, inner,                   \
                                       inner - c < SM_COLS_ ? inner - c : SM_COLS_, log);          \
        }                                                                                          \
    }

SMB_DEFINE_COLS_(f32, float)
SMB_DEFINE_COLS_(f64, double)

SMB_DEFINE_(f16, ops_half, float, softmax_bwd_f32)
SMB_DEFINE_(bf16, ops_bfloat16, float, softmax_bwd_f32)
SMB_DEFINE_(f32, float, float, softmax_bwd_f32)
SMB_DEFINE_(f64, double, double, softmax_bwd_f64)

ops_status
reduce_softmax_bwd_loop_cpu(const char *op, bool log, const ops_tensor *g, const ops_tensor *y, int64_t outer,
                            int64_t len, int64_t inner, ops_tensor *res)
{
    const dim_geom gm = {outer, len, inner};
    const void *gp = ops_tensor_data_ptr(g), *yp = ops_tensor_data_ptr(y);
    void *rp = ops_tensor_data_ptr(res);
    bool ok;
    if (inner >= 16 && (y->dtype == OPS_FLOAT32 || y->dtype == OPS_FLOAT64)) {
        if (y->dtype == OPS_FLOAT32)
            smb_cols_f32(log, &gm, gp, yp, rp);
        else
            smb_cols_f64(log, &gm, gp, yp, rp);
        return OPS_OK;
    }
    switch (y->dtype) {
    case OPS_FLOAT16: ok = smb_f16(log, &gm, gp, yp, rp); break;
    case OPS_BFLOAT16: ok = smb_bf16(log, &gm, gp, yp, rp); break;
    case OPS_FLOAT32: ok = smb_f32(log, &gm, gp, yp, rp); break;
    case OPS_FLOAT64: ok = smb_f64(log, &gm, gp, yp, rp); break;
    default: return ops_fail(OPS_ERR_DTYPE, "%s: unsupported dtype %s", op, ops_dtype_name(y->dtype));
    }
    return ok ? OPS_OK : ops_fail(OPS_ERR_OOM, "%s: out of memory (lines of %" PRId64 " elements)", op, len);
}

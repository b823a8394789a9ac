/* Pooling loops (CPU), registered for the stubs of kernels/pool.h and called by the
 * drivers of kernels/pool.c: the forward windows (max with indices, average) over
 * (N, C, H, W) planes read through the input's strides, and the max pools' backward
 * scatter.  Planes are split across threads above a grain size (each plane is written
 * by one thread only).
 *
 * Max pooling propagates NaN (a NaN wins over any number) and keeps the first of equal
 * maxima; its indices are flat offsets h * W + w into the input plane, as PyTorch's.
 * Averages accumulate in float for float16/bfloat16; int64 averages (PyTorch's CPU
 * avg_pool2d takes them) sum in int64 and truncate the quotient. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/cpu/vec/vec_convert.h"
#include "kernels/cpu/vec/vec_pool.h"
#include "kernels/pool.h"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(pool_windows, CPU, pool_windows_cpu);
OPS_REGISTER_STUB(pool_scatter_add, CPU, pool_scatter_add_cpu);
OPS_REGISTER_STUB(pool_avg_backward, CPU, pool_avg_backward_cpu);

typedef ops_pool_geom pool_geom;

/* ---- typed loops ------------------------------------------------------------------- */

#ifdef _OPENMP
#define POOL_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) num_threads(pool_nt_) if (pool_par_)")
#else
#define POOL_PARALLEL_FOR_
#endif

/* The outputs [lo, hi) of a row whose windows are whole taps inside the input row
 * (with sw == 2 one more element too, which the vector loops read): none when the
 * pooling is adaptive, the rows are not contiguous, or fewer than a vector. */
static bool
pool_interior_(const pool_geom *g, int64_t kw, int64_t dw, int width, int64_t *lo, int64_t *hi)
{
    if (g->adaptive || g->xs[3] != 1 || width == 0)
        return false;
    const int64_t extra = g->sw == 2 ? 1 : 0;
    const int64_t num = g->iw - extra - 1 - (kw - 1) * dw + g->pw;
    if (num < 0)
        return false;
    *lo = (g->pw + g->sw - 1) / g->sw;
    *hi = num / g->sw + 1 < g->ow ? num / g->sw + 1 : g->ow;
    return *hi - *lo >= width;
}

/* The float32 or float64 rows through the level's vector loops
 * (kernels/cpu/vec/vec_pool.c): the same comparisons and sums in the same order as the
 * scalar loops below, which do the outputs outside [*vlo, *vhi). */
static void
pool_max_row_(const pool_geom *g, bool f64, const void *xp, int64_t y0, int64_t y1, void *out, int64_t *idx,
              int64_t *vlo, int64_t *vhi)
{
    const ops_vec_pool_table *vt = ops_vec_pool();
    int64_t lo, hi;
    if (!pool_interior_(g, g->kw, g->dw, f64 ? vt->width_f64 : vt->width, &lo, &hi))
        return;
    const ops_vec_pool_row r = {xp, g->xs[2], y0, y1, g->dh, g->iw, g->kw, g->sw, g->dw, g->pw, lo, hi};
    if (f64 ? vt->max_f64(&r, out, idx) : vt->max_f32(&r, out, idx))
        *vlo = lo, *vhi = hi;
}

static void
pool_avg_row_(const pool_geom *g, bool f64, const void *xp, int64_t oy, void *out, int64_t *vlo, int64_t *vhi)
{
    const ops_vec_pool_table *vt = ops_vec_pool();
    int64_t lo, hi, y0, y1, x0, x1, div;
    if (!pool_interior_(g, g->kw, 1, f64 ? vt->width_f64 : vt->width, &lo, &hi) ||
        !ops_nn_avg_window(oy, lo, g->ih, g->iw, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->count_include_pad,
                           g->divisor, &y0, &y1, &x0, &x1, &div))
        return;
    const ops_vec_pool_row r = {xp, g->xs[2], y0, y1, 1, g->iw, g->kw, g->sw, 1, g->pw, lo, hi};
    if (f64 ? vt->avg_f64(&r, (double)div, out) : vt->avg_f32(&r, (float)div, out))
        *vlo = lo, *vhi = hi;
}

#define POOL_MAX_ROW_NONE_(g, xp, y0, y1, out, idx, vlo, vhi) ((void)0)
#define POOL_MAX_ROW_F32_(g, xp, y0, y1, out, idx, vlo, vhi) pool_max_row_(g, false, xp, y0, y1, out, idx, vlo, vhi)
#define POOL_MAX_ROW_F64_(g, xp, y0, y1, out, idx, vlo, vhi) pool_max_row_(g, true, xp, y0, y1, out, idx, vlo, vhi)
#define POOL_AVG_ROW_NONE_(g, xp, oy, out, vlo, vhi) ((void)0)
#define POOL_AVG_ROW_F32_(g, xp, oy, out, vlo, vhi) pool_avg_row_(g, false, xp, oy, out, vlo, vhi)
#define POOL_AVG_ROW_F64_(g, xp, oy, out, vlo, vhi) pool_avg_row_(g, true, xp, oy, out, vlo, vhi)

/* Max over each window (NaN wins; the first of equal maxima wins), with its index
 * h * W + w when idx is not NULL.  An empty window gives LOWEST.  VROW may do the
 * outputs [vlo, vhi) of a row. */
#define POOL_DEFINE_MAX_(NAME, SCALAR, ISNAN, LOWEST, VROW)                                              \
    static void NAME(const pool_geom *g, const SCALAR *x, SCALAR *out, int64_t *idx)               \
    {                                                                                              \
        typedef __typeof__(OPS_LOAD((const SCALAR *)0)) opm_t;                                     \
        const int64_t planes = g->nb * g->c, ohw = g->oh * g->ow;                                  \
        const int64_t dh = g->adaptive ? 1 : g->dh, dw = g->adaptive ? 1 : g->dw;                  \
        const int pool_nt_ = ops_get_num_threads();                                                \
        (void)pool_nt_;                                                                            \
        const bool pool_par_ = planes > 1 && planes * ohw * g->kh * g->kw > OPS_GRAIN_SIZE;        \
        (void)pool_par_;                                                                           \
        POOL_PARALLEL_FOR_                                                                         \
        for (int64_t pl = 0; pl < planes; pl++) {                                                  \
            const SCALAR *xp = x + (pl / g->c) * g->xs[0] + (pl % g->c) * g->xs[1];                \
            SCALAR *op_ = out + pl * ohw;                                                          \
            int64_t *ip = idx ? idx + pl * ohw : NULL;                                             \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                int64_t y0, y1;                                                                    \
                ops_nn_pool_window(g->adaptive, oy, g->ih, g->oh, g->kh, g->sh, g->ph, g->dh, &y0, &y1);   \
                int64_t vlo = 0, vhi = 0;                                                          \
                VROW(g, xp, y0, y1, op_ + oy * g->ow, ip ? ip + oy * g->ow : NULL, &vlo, &vhi);    \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    if (ox >= vlo && ox < vhi)                                                     \
                        continue;                                                                  \
                    int64_t x0, x1;                                                                \
                    ops_nn_pool_window(g->adaptive, ox, g->iw, g->ow, g->kw, g->sw, g->pw, g->dw, &x0,     \
                                       &x1);                                                       \
                    int64_t best = y0 * g->iw + x0;                                                \
                    opm_t m = LOWEST;                                                              \
                    bool found = false;                                                            \
                    for (int64_t y = y0; y < y1; y += dh)                                          \
                        for (int64_t xx = x0; xx < x1; xx += dw) {                                 \
                            const opm_t v = OPS_LOAD(xp + y * g->xs[2] + xx * g->xs[3]);           \
                            if (!found || v > m || ISNAN(v)) {                                     \
                                m = v;                                                             \
                                best = y * g->iw + xx;                                             \
                                found = true;                                                      \
                            }                                                                      \
                        }                                                                          \
                    OPS_STORE(op_ + oy * g->ow + ox, m);                                           \
                    if (ip)                                                                        \
                        ip[oy * g->ow + ox] = best;                                                \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

#define POOL_NAN_F_(v) isnan(v)
#define POOL_NAN_I_(v) ((void)(v), false)

POOL_DEFINE_MAX_(max_u8, uint8_t, POOL_NAN_I_, 0, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_i8, int8_t, POOL_NAN_I_, INT8_MIN, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_i16, int16_t, POOL_NAN_I_, INT16_MIN, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_i32, int32_t, POOL_NAN_I_, INT32_MIN, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_i64, int64_t, POOL_NAN_I_, INT64_MIN, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_f16, ops_half, POOL_NAN_F_, -INFINITY, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_bf16, ops_bfloat16, POOL_NAN_F_, -INFINITY, POOL_MAX_ROW_NONE_)
POOL_DEFINE_MAX_(max_f32, float, POOL_NAN_F_, -INFINITY, POOL_MAX_ROW_F32_)
POOL_DEFINE_MAX_(max_f64, double, POOL_NAN_F_, -INFINITY, POOL_MAX_ROW_F64_)

/* Average over each window: avg_pool2d's divisor rules (count_include_pad counts the
 * padding inside the window, not past it; divisor_override replaces both), or the
 * adaptive window's size.  VROW may do the outputs [vlo, vhi) of a row. */
#define POOL_DEFINE_AVG_(NAME, SCALAR, ACC, VROW)                                                        \
    static void NAME(const pool_geom *g, const SCALAR *x, SCALAR *out)                             \
    {                                                                                              \
        const int64_t planes = g->nb * g->c, ohw = g->oh * g->ow;                                  \
        const int pool_nt_ = ops_get_num_threads();                                                \
        (void)pool_nt_;                                                                            \
        const bool pool_par_ = planes > 1 && planes * ohw * g->kh * g->kw > OPS_GRAIN_SIZE;        \
        (void)pool_par_;                                                                           \
        POOL_PARALLEL_FOR_                                                                         \
        for (int64_t pl = 0; pl < planes; pl++) {                                                  \
            const SCALAR *xp = x + (pl / g->c) * g->xs[0] + (pl % g->c) * g->xs[1];                \
            SCALAR *op_ = out + pl * ohw;                                                          \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                int64_t vlo = 0, vhi = 0;                                                          \
                VROW(g, xp, oy, op_ + oy * g->ow, &vlo, &vhi);                                     \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    int64_t y0, y1, x0, x1, div;                                                   \
                    if (ox >= vlo && ox < vhi)                                                     \
                        continue;                                                                  \
                    if (g->adaptive) {                                                             \
                        ops_nn_pool_window(true, oy, g->ih, g->oh, 0, 0, 0, 1, &y0, &y1);          \
                        ops_nn_pool_window(true, ox, g->iw, g->ow, 0, 0, 0, 1, &x0, &x1);          \
                        div = (y1 - y0) * (x1 - x0);                                               \
                    } else if (!ops_nn_avg_window(oy, ox, g->ih, g->iw, g->kh, g->kw, g->sh, g->sw,    \
                                                  g->ph, g->pw, g->count_include_pad, g->divisor,  \
                                                  &y0, &y1, &x0, &x1, &div)) {                     \
                        OPS_STORE(op_ + oy * g->ow + ox, (ACC)0);                                  \
                        continue;                                                                  \
                    }                                                                              \
                    ACC sum = 0;                                                                   \
                    for (int64_t y = y0; y < y1; y++)                                              \
                        for (int64_t xx = x0; xx < x1; xx++)                                       \
                            sum += OPS_LOAD(xp + y * g->xs[2] + xx * g->xs[3]);                    \
                    OPS_STORE(op_ + oy * g->ow + ox, sum / (ACC)div);                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

POOL_DEFINE_AVG_(avg_f16, ops_half, float, POOL_AVG_ROW_NONE_)
POOL_DEFINE_AVG_(avg_bf16, ops_bfloat16, float, POOL_AVG_ROW_NONE_)
POOL_DEFINE_AVG_(avg_f32, float, float, POOL_AVG_ROW_F32_)
POOL_DEFINE_AVG_(avg_f64, double, double, POOL_AVG_ROW_F64_)
POOL_DEFINE_AVG_(avg_i64, int64_t, int64_t, POOL_AVG_ROW_NONE_) /* the quotient truncates, as PyTorch's */

/* Pooling along the channels (kernels/cpu/vec/vec_pool.c's channel loops): every
 * channel of an output position shares the window, one lane per channel, each lane the
 * scalar loop's scan.  Taken for channels-last inputs (the channels contiguous, the
 * columns not: loads) and for adaptive pooling of any other layout (the planes' stride
 * between lanes: a gather per tap; the row loops cannot take adaptive windows, which
 * differ from output to output along a row).  *sc is the channel stride; false when
 * neither holds, the level has no such loops, or there are fewer channels than a
 * vector. */
#define POOL_CL_MAX_C_ 1024 /* channels per pass: stack buffers per output position */
static bool
pool_cl_layout_(const pool_geom *g, int width, int64_t *sc)
{
    if (width == 0 || g->c < width)
        return false;
    if (g->xs[1] == 1 && g->xs[3] != 1)
        *sc = 1;
    else if (g->adaptive && g->xs[1] >= 1 && g->xs[1] <= INT32_MAX / 16) /* 16: the widest gather */
        *sc = g->xs[1];
    else
        return false;
    return true;
}

/* The channels [*c0, *c0 + *nc) of pass `pass` (POOL_CL_MAX_C_ at a time, the last
 * pass ending at the last channel, so that each pass has a vector's worth when the
 * image has). */
static inline void
pool_cl_pass_(const pool_geom *g, int64_t pass, int64_t *c0, int64_t *nc)
{
    *nc = g->c < POOL_CL_MAX_C_ ? g->c : POOL_CL_MAX_C_;
    *c0 = pass * POOL_CL_MAX_C_;
    if (*c0 + *nc > g->c)
        *c0 = g->c - *nc;
}

/* float32/float64 max pooling along the channels, written into the NCHW result.
 * False (nothing done) unless pool_cl_layout_ takes the input. */
#define POOL_DEFINE_CL_MAX_(NAME, T, WIDTH, VMAX)                                                             \
    static bool NAME(const pool_geom *g, const T *x, T *out, int64_t *idx)                                    \
    {                                                                                                         \
        const ops_vec_pool_table *vt = ops_vec_pool();                                                        \
        int64_t sc;                                                                                           \
        if (!pool_cl_layout_(g, vt->WIDTH, &sc))                                                              \
            return false;                                                                                     \
        const int64_t ohw = g->oh * g->ow, rows = g->nb * g->oh;                                              \
        const int64_t passes = (g->c + POOL_CL_MAX_C_ - 1) / POOL_CL_MAX_C_;                                  \
        const int64_t dh = g->adaptive ? 1 : g->dh, dw = g->adaptive ? 1 : g->dw;                             \
        const int pool_nt_ = ops_get_num_threads();                                                           \
        (void)pool_nt_;                                                                                       \
        const bool pool_par_ = rows > 1 && g->nb * g->c * ohw * g->kh * g->kw > OPS_GRAIN_SIZE;               \
        (void)pool_par_;                                                                                      \
        POOL_PARALLEL_FOR_                                                                                    \
        for (int64_t r = 0; r < rows; r++) {                                                                  \
            const int64_t n = r / g->oh, oy = r % g->oh;                                                      \
            T m[POOL_CL_MAX_C_];                                                                              \
            int32_t k[POOL_CL_MAX_C_];                                                                        \
            int64_t y0, y1;                                                                                   \
            ops_nn_pool_window(g->adaptive, oy, g->ih, g->oh, g->kh, g->sh, g->ph, g->dh, &y0, &y1);          \
            for (int64_t ox = 0; ox < g->ow; ox++) {                                                          \
                int64_t x0, x1;                                                                               \
                ops_nn_pool_window(g->adaptive, ox, g->iw, g->ow, g->kw, g->sw, g->pw, g->dw, &x0, &x1);      \
                const int64_t nx = (x1 - x0 + dw - 1) / dw;                                                   \
                for (int64_t pass = 0; pass < passes; pass++) {                                               \
                    int64_t c0, nc;                                                                           \
                    pool_cl_pass_(g, pass, &c0, &nc);                                                         \
                    const ops_vec_pool_cl cl = {x + n * g->xs[0] + c0 * sc, g->xs[2], g->xs[3], y0, y1, dh,   \
                                                x0, x1, dw, nc, sc};                                          \
                    if (!vt->VMAX(&cl, m, idx ? k : NULL)) {                                                  \
                        /* an empty window (LOWEST at y0 * W + x0) or one the loop refuses: the               \
                         * scalar scan */                                                                     \
                        for (int64_t c = 0; c < nc; c++) {                                                    \
                            T best = -INFINITY;                                                               \
                            int32_t kb = 0, kk = 0;                                                           \
                            for (int64_t y = y0; y < y1; y += dh)                                             \
                                for (int64_t xx = x0; xx < x1; xx += dw, kk++) {                              \
                                    const T v = ((const T *)cl.x)[c * sc + y * cl.sy + xx * cl.sx];           \
                                    if (kk == 0 || v > best || isnan(v))                                      \
                                        best = v, kb = kk;                                                    \
                                }                                                                             \
                            m[c] = best;                                                                      \
                            k[c] = kb;                                                                        \
                        }                                                                                     \
                    }                                                                                         \
                    T *const o = out + (n * g->c + c0) * ohw + oy * g->ow + ox;                               \
                    for (int64_t c = 0; c < nc; c++)                                                          \
                        o[c * ohw] = m[c];                                                                    \
                    if (idx != NULL) {                                                                        \
                        int64_t *const io = idx + (n * g->c + c0) * ohw + oy * g->ow + ox;                    \
                        for (int64_t c = 0; c < nc; c++)                                                      \
                            io[c * ohw] = nx > 0 ? (y0 + (k[c] / nx) * dh) * g->iw + x0 + (k[c] % nx) * dw    \
                                                 : y0 * g->iw + x0;                                           \
                    }                                                                                         \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        return true;                                                                                          \
    }
POOL_DEFINE_CL_MAX_(max_cl_f32_, float, width, max_cl_f32)
POOL_DEFINE_CL_MAX_(max_cl_f64_, double, width_f64, max_cl_f64)

/* float32/float64 average pooling along the channels, the same way: per output
 * position the window and divisor of avg_f32's loop, the sum per channel in its
 * order (the scalar scan where the loop refuses). */
#define POOL_DEFINE_CL_AVG_(NAME, T, WIDTH, VAVG)                                                           \
    static bool NAME(const pool_geom *g, const T *x, T *out)                                                  \
    {                                                                                                         \
        const ops_vec_pool_table *vt = ops_vec_pool();                                                        \
        int64_t sc;                                                                                           \
        if (!pool_cl_layout_(g, vt->WIDTH, &sc))                                                              \
            return false;                                                                                     \
        const int64_t ohw = g->oh * g->ow, rows = g->nb * g->oh;                                              \
        const int64_t passes = (g->c + POOL_CL_MAX_C_ - 1) / POOL_CL_MAX_C_;                                  \
        const int pool_nt_ = ops_get_num_threads();                                                           \
        (void)pool_nt_;                                                                                       \
        const bool pool_par_ = rows > 1 && g->nb * g->c * ohw * g->kh * g->kw > OPS_GRAIN_SIZE;               \
        (void)pool_par_;                                                                                      \
        POOL_PARALLEL_FOR_                                                                                    \
        for (int64_t r = 0; r < rows; r++) {                                                                  \
            const int64_t n = r / g->oh, oy = r % g->oh;                                                      \
            T m[POOL_CL_MAX_C_];                                                                              \
            for (int64_t ox = 0; ox < g->ow; ox++) {                                                          \
                int64_t y0, y1, x0, x1, div;                                                                  \
                bool some = true;                                                                             \
                if (g->adaptive) {                                                                            \
                    ops_nn_pool_window(true, oy, g->ih, g->oh, 0, 0, 0, 1, &y0, &y1);                         \
                    ops_nn_pool_window(true, ox, g->iw, g->ow, 0, 0, 0, 1, &x0, &x1);                         \
                    div = (y1 - y0) * (x1 - x0);                                                              \
                } else {                                                                                      \
                    some = ops_nn_avg_window(oy, ox, g->ih, g->iw, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw,  \
                                             g->count_include_pad, g->divisor, &y0, &y1, &x0, &x1, &div);     \
                }                                                                                             \
                for (int64_t pass = 0; pass < passes; pass++) {                                               \
                    int64_t c0, nc;                                                                           \
                    pool_cl_pass_(g, pass, &c0, &nc);                                                         \
                    const ops_vec_pool_cl cl = {x + n * g->xs[0] + c0 * sc, g->xs[2], g->xs[3], y0, y1, 1,    \
                                                x0, x1, 1, nc, sc};                                           \
                    if (!some) /* wholly in the padding: 0 */                                                 \
                        for (int64_t c = 0; c < nc; c++)                                                      \
                            m[c] = 0;                                                                         \
                    else if (!vt->VAVG(&cl, (T)div, m))                                                       \
                        for (int64_t c = 0; c < nc; c++) { /* empty (0 / div) or refused: the scan */         \
                            T sum = 0;                                                                        \
                            for (int64_t y = y0; y < y1; y++)                                                 \
                                for (int64_t xx = x0; xx < x1; xx++)                                          \
                                    sum += ((const T *)cl.x)[c * sc + y * cl.sy + xx * cl.sx];                \
                            m[c] = sum / (T)div;                                                              \
                        }                                                                                     \
                    T *const o = out + (n * g->c + c0) * ohw + oy * g->ow + ox;                               \
                    for (int64_t c = 0; c < nc; c++)                                                          \
                        o[c * ohw] = m[c];                                                                    \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        return true;                                                                                          \
    }
POOL_DEFINE_CL_AVG_(avg_cl_f32_, float, width, avg_cl_f32)
POOL_DEFINE_CL_AVG_(avg_cl_f64_, double, width_f64, avg_cl_f64)

/* float16/bfloat16 through the float32 loops: the input widened to float32 (exactly),
 * pooled by the float32 code above, the results narrowed once.  The scalar half loops
 * compare and sum in float too (OPS_LOAD widens, the average accumulates in float and
 * divides by the float divisor), so every value and index is theirs.  NCHW inputs with
 * contiguous rows go plane by plane (threads split the planes); dense images that the
 * channel loops take (channels-last; NCHW when adaptive, whose windows the row loops
 * cannot take), image by image (the float32 channel loop splits the rows).  False
 * (nothing done) for other layouts or when the buffers cannot be had: the scalar
 * loops then do it. */
static bool
pool_half_(const pool_geom *g, bool is_max, const uint16_t *x, uint16_t *out, int64_t *idx)
{
    const ops_vec_convert_table *cv = ops_vec_convert();
    const int t = g->dt == OPS_FLOAT16 ? OPS_VEC_CVT_F16 : OPS_VEC_CVT_BF16;
    const int64_t ihw = g->ih * g->iw, ohw = g->oh * g->ow;
    if (ops_vec_pool()->width == 0)
        return false;
    const bool dense_cl = g->xs[1] == 1 && g->xs[3] == g->c && g->xs[2] == g->iw * g->c;
    const bool dense_nchw = g->xs[3] == 1 && g->xs[2] == g->iw && g->xs[1] == ihw;
    int64_t sc;
    const bool chan = (dense_cl || (g->adaptive && dense_nchw)) && pool_cl_layout_(g, ops_vec_pool()->width, &sc);
    if (g->xs[3] == 1 && !chan) {
        const int64_t planes = g->nb * g->c;
        const int pool_nt_ = ops_get_num_threads();
        const bool pool_par_ = planes > 1 && planes * ohw * g->kh * g->kw > OPS_GRAIN_SIZE;
        const int64_t per = ihw + ohw;
        float *buf = malloc((size_t)(pool_par_ ? pool_nt_ : 1) * (size_t)per * sizeof(float));
        if (buf == NULL)
            return false;
        pool_geom g1 = *g;
        g1.nb = g1.c = 1;
        g1.xs[0] = g1.xs[1] = 0;
        g1.xs[2] = g->iw;
        POOL_PARALLEL_FOR_
        for (int64_t pl = 0; pl < planes; pl++) {
#ifdef _OPENMP
            float *const xf = buf + (size_t)omp_get_thread_num() * (size_t)per;
#else
            float *const xf = buf;
#endif
            float *const of = xf + ihw;
            const uint16_t *xp = x + (pl / g->c) * g->xs[0] + (pl % g->c) * g->xs[1];
            for (int64_t y = 0; y < g->ih; y++)
                cv->to_f32[t](xf + y * g->iw, xp + y * g->xs[2], g->iw);
            if (is_max)
                max_f32(&g1, xf, of, idx ? idx + pl * ohw : NULL);
            else
                avg_f32(&g1, xf, of);
            cv->from_f32[t](out + pl * ohw, of, ohw);
        }
        free(buf);
        return true;
    }
    if (!chan) /* not a dense image in a layout the channel loops take */
        return false;
    const int64_t per = g->c * (ihw + ohw);
    float *const xf = malloc((size_t)per * sizeof(float));
    if (xf == NULL)
        return false;
    float *const of = xf + g->c * ihw;
    pool_geom g1 = *g;
    g1.nb = 1;
    g1.xs[0] = 0;
    for (int64_t n = 0; n < g->nb; n++) {
        cv->to_f32[t](xf, x + n * g->xs[0], g->c * ihw);
        if (is_max)
            max_cl_f32_(&g1, xf, of, idx ? idx + n * g->c * ohw : NULL);
        else
            avg_cl_f32_(&g1, xf, of);
        cv->from_f32[t](out + n * g->c * ohw, of, g->c * ohw);
    }
    free(xf);
    return true;
}

ops_status
pool_windows_cpu(const char *op, const ops_pool_geom *g, bool is_max, const ops_tensor *self, ops_tensor *values,
                 ops_tensor *indices)
{
    (void)op;
    const char *x = (const char *)ops_tensor_data_ptr(self);
    void *o = ops_tensor_data_ptr(values);
    int64_t *ip = indices ? (int64_t *)ops_tensor_data_ptr(indices) : NULL;
    if (is_max) {
        switch (g->dt) {
        case OPS_UINT8: max_u8(g, (const uint8_t *)x, o, ip); break;
        case OPS_INT8: max_i8(g, (const int8_t *)x, o, ip); break;
        case OPS_INT16: max_i16(g, (const int16_t *)x, o, ip); break;
        case OPS_INT32: max_i32(g, (const int32_t *)x, o, ip); break;
        case OPS_INT64: max_i64(g, (const int64_t *)x, o, ip); break;
        case OPS_FLOAT16:
            if (!pool_half_(g, true, (const uint16_t *)x, o, ip))
                max_f16(g, (const ops_half *)x, o, ip);
            break;
        case OPS_BFLOAT16:
            if (!pool_half_(g, true, (const uint16_t *)x, o, ip))
                max_bf16(g, (const ops_bfloat16 *)x, o, ip);
            break;
        case OPS_FLOAT32:
            if (!max_cl_f32_(g, (const float *)x, o, ip))
                max_f32(g, (const float *)x, o, ip);
            break;
        case OPS_FLOAT64:
            if (!max_cl_f64_(g, (const double *)x, o, ip))
                max_f64(g, (const double *)x, o, ip);
            break;
        default: break; /* refused by pool_check_dtype */
        }
    } else {
        switch (g->dt) {
        case OPS_FLOAT16:
            if (!pool_half_(g, false, (const uint16_t *)x, o, NULL))
                avg_f16(g, (const ops_half *)x, o);
            break;
        case OPS_BFLOAT16:
            if (!pool_half_(g, false, (const uint16_t *)x, o, NULL))
                avg_bf16(g, (const ops_bfloat16 *)x, o);
            break;
        case OPS_FLOAT32:
            if (!avg_cl_f32_(g, (const float *)x, o))
                avg_f32(g, (const float *)x, o);
            break;
        case OPS_FLOAT64:
            if (!avg_cl_f64_(g, (const double *)x, o))
                avg_f64(g, (const double *)x, o);
            break;
        case OPS_INT64: avg_i64(g, (const int64_t *)x, o); break;
        default: break;
        }
    }
    return OPS_OK;
}

/* ---- backward ------------------------------------------------------------------------ */

#ifdef _OPENMP
#define NNB_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) num_threads(nt_) if (par_)")
#define NNB_ATOMIC_WRITE_ _Pragma("omp atomic write")
#define NNB_THREAD_ omp_get_thread_num()
#else
#define NNB_PARALLEL_FOR_
#define NNB_ATOMIC_WRITE_
#define NNB_THREAD_ 0
#endif

/* The scatter over contiguous grad (acc_t: float or double) into res of the same
 * type, each plane zeroed just before its adds (kernels/pool.h: the plane is then in
 * cache for them, and res is written in one pass); an index outside the plane is
 * skipped and makes the result true. */
#define NNB_DEFINE_SCATTER_(NAME, ACC)                                                           \
    static bool NAME(const ACC *g, const int64_t *ix, ACC *res, int64_t planes, int64_t ohw,     \
                     int64_t ihw)                                                                \
    {                                                                                            \
        bool bad_ = false;                                                                       \
        const int nt_ = ops_get_num_threads();                                                   \
        (void)nt_;                                                                               \
        const bool par_ = planes > 1 && planes * (ohw + ihw) > OPS_GRAIN_SIZE;                   \
        (void)par_;                                                                              \
        NNB_PARALLEL_FOR_                                                                        \
        for (int64_t p = 0; p < planes; p++) {                                                   \
            const ACC *gp = g + p * ohw;                                                         \
            const int64_t *ip = ix + p * ohw;                                                    \
            ACC *rp = res + p * ihw;                                                             \
            bool pbad = false;                                                                   \
            memset(rp, 0, (size_t)ihw * sizeof(ACC));                                            \
            for (int64_t j = 0; j < ohw; j++) {                                                  \
                const int64_t i = ip[j];                                                         \
                if ((uint64_t)i < (uint64_t)ihw)                                                 \
                    rp[i] += gp[j];                                                              \
                else                                                                             \
                    pbad = true;                                                                 \
            }                                                                                    \
            if (pbad) {                                                                          \
                NNB_ATOMIC_WRITE_                                                                \
                bad_ = true;                                                                     \
            }                                                                                    \
        }                                                                                        \
        return bad_;                                                                             \
    }
NNB_DEFINE_SCATTER_(scatter_f32, float)
NNB_DEFINE_SCATTER_(scatter_f64, double)

ops_status
pool_scatter_add_cpu(const char *op, const ops_tensor *grad, const ops_tensor *ix, ops_tensor *res, int64_t planes,
                     int64_t ohw, int64_t ihw, bool *bad)
{
    (void)op;
    const int64_t *ixd = ops_tensor_data_ptr(ix);
    if (res->dtype == OPS_FLOAT64)
        *bad = scatter_f64(ops_tensor_data_ptr(grad), ixd, ops_tensor_data_ptr(res), planes, ohw, ihw);
    else
        *bad = scatter_f32(ops_tensor_data_ptr(grad), ixd, ops_tensor_data_ptr(res), planes, ohw, ihw);
    return OPS_OK;
}

/* The windows of avg_pool2d's or adaptive_avg_pool2d's outputs, the same for every
 * plane: rows [y0[oy], y1[oy]), columns [x0[ox], x1[ox]) (clipped to the input; empty
 * where the forward's window is wholly in the padding, its output a constant 0) and
 * the divisor of each output (1 for the empty ones). */
typedef struct nnb_windows {
    int64_t *y0, *y1, *x0, *x1;
    double *div;
} nnb_windows;

static bool
nnb_windows_of(const pool_geom *g, nnb_windows *w)
{
    const int64_t oh = g->oh, ow = g->ow;
    int64_t *b = malloc((size_t)(2 * (oh + ow)) * sizeof(int64_t));
    double *d = malloc((size_t)(oh * ow > 0 ? oh * ow : 1) * sizeof(double));
    if (b == NULL || d == NULL) {
        free(b);
        free(d);
        return false;
    }
    *w = (nnb_windows){b, b + oh, b + 2 * oh, b + 2 * oh + ow, d};
    for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t y0, y1, x0, x1, div;
            if (g->adaptive) {
                ops_nn_pool_window(true, oy, g->ih, g->oh, 0, 0, 0, 1, &y0, &y1);
                ops_nn_pool_window(true, ox, g->iw, g->ow, 0, 0, 0, 1, &x0, &x1);
                div = (y1 - y0) * (x1 - x0);
            } else if (!ops_nn_avg_window(oy, ox, g->ih, g->iw, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw,
                                          g->count_include_pad, g->divisor, &y0, &y1, &x0, &x1, &div)) {
                /* wholly in the padding: the rows or the columns are empty (each depends on
                 * its own dim only) */
                div = 1;
                y1 = y1 > y0 ? y1 : y0;
                x1 = x1 > x0 ? x1 : x0;
            }
            w->y0[oy] = y0, w->y1[oy] = y1, w->x0[ox] = x0, w->x1[ox] = x1;
            d[oy * ow + ox] = (double)div;
        }
    return true;
}

/* avg_pool2d's and adaptive_avg_pool2d's gradient, plane by plane: v = grad / divisor
 * (the level's division loop), then for each output row oy the row's share r[x] = the
 * sum (in output order) of v over the outputs whose columns hold x, added to each
 * input row of oy's window (the level's vector loop).  Each element gets the same
 * scalar sums and elementwise vector operations in the same order at every level, so
 * the same bits.  Buffers per thread: the plane's v and a row. */
#define NNB_DEFINE_AVG_BWD_(NAME, T, ADDTO, DIV)                                                         \
    static bool NAME(const pool_geom *g, const T *gr, T *res)                                            \
    {                                                                                                    \
        const ops_vec_pool_table *vt = ops_vec_pool();                                                   \
        const int64_t planes = g->nb * g->c, ohw = g->oh * g->ow, ihw = g->ih * g->iw;                   \
        const int nt_ = ops_get_num_threads();                                                           \
        const bool par_ = planes > 1 && planes * (ohw * g->kw + ihw) > OPS_GRAIN_SIZE;                   \
        const int64_t per = ohw + g->iw;                                                                 \
        nnb_windows w;                                                                                   \
        T *const buf = malloc((size_t)(par_ ? nt_ : 1) * (size_t)per * sizeof(T) + (size_t)ohw * sizeof(T)); \
        if (buf == NULL || !nnb_windows_of(g, &w)) {                                                     \
            free(buf);                                                                                   \
            return false;                                                                                \
        }                                                                                                \
        T *const dv = buf + (size_t)(par_ ? nt_ : 1) * (size_t)per;                                      \
        for (int64_t o = 0; o < ohw; o++)                                                                \
            dv[o] = (T)w.div[o];                                                                         \
        NNB_PARALLEL_FOR_                                                                                \
        for (int64_t p = 0; p < planes; p++) {                                                           \
            T *const v = buf + (size_t)(par_ ? NNB_THREAD_ : 0) * (size_t)per, *const r = v + ohw;       \
            T *const rp = res + p * ihw;                                                                 \
            vt->DIV(v, gr + p * ohw, dv, ohw);                                                           \
            memset(rp, 0, (size_t)ihw * sizeof(T));                                                      \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                                     \
                if (w.y0[oy] >= w.y1[oy])                                                                \
                    continue;                                                                            \
                const T *const vr = v + oy * g->ow;                                                      \
                memset(r, 0, (size_t)g->iw * sizeof(T));                                                 \
                for (int64_t ox = 0; ox < g->ow; ox++)                                                   \
                    for (int64_t x = w.x0[ox]; x < w.x1[ox]; x++)                                        \
                        r[x] += vr[ox];                                                                  \
                for (int64_t y = w.y0[oy]; y < w.y1[oy]; y++)                                            \
                    vt->ADDTO(rp + y * g->iw, r, g->iw);                                                 \
            }                                                                                            \
        }                                                                                                \
        free(buf);                                                                                       \
        free(w.y0);                                                                                      \
        free(w.div);                                                                                     \
        return true;                                                                                     \
    }
NNB_DEFINE_AVG_BWD_(avg_bwd_f32, float, addto_f32, div_f32)
NNB_DEFINE_AVG_BWD_(avg_bwd_f64, double, addto_f64, div_f64)

ops_status
pool_avg_backward_cpu(const char *op, const ops_pool_geom *g, const ops_tensor *grad, ops_tensor *res)
{
    const bool ok = res->dtype == OPS_FLOAT64
                        ? avg_bwd_f64(g, ops_tensor_data_ptr(grad), ops_tensor_data_ptr(res))
                        : avg_bwd_f32(g, ops_tensor_data_ptr(grad), ops_tensor_data_ptr(res));
    return ok ? OPS_OK : ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
}

/* Reductions, the CPU loops of the outer path (kernels/cpu/reduce.c runs it when it
 * applies): the kept dims inner and contiguous, whole reduced rows folded into an
 * accumulator row. */
#include <string.h>

#include "kernels/cpu/reduce_cpu.h"
#include "kernels/cpu/vec/vec_reduce.h"

/* ---- outer reductions ------------------------------------------------------------------ */

/* When the kept dims are inner and contiguous (output o's base is input element o), the
 * reduced elements of consecutive outputs are consecutive in memory: a reduced "row"
 * holds every output's element at one reduced position.  Rather than walk each output's
 * strided column (one cache line per element), whole rows are folded into an
 * accumulator row, a tile of columns at a time, threads over tiles.  Sums keep the
 * per-column pairwise scheme of pw_*: blocks of RED_BLOCK rows summed plainly, merged
 * like a binary counter through level rows, in the same order as the column walk. */

/* Columns per tile: long runs of each row for the prefetcher; narrower (down to 256)
 * when that leaves threads idle. */
#define RED_OUTER_TILE 8192
/* Fewer outputs than this: the column walk is as good. */
#define RED_OUTER_MIN_OUT 16

/* True when the plan's outputs are the inner contiguous elements of each reduced row. */
bool
red_outer_ok(const red_plan *p)
{
    if (p->nout < RED_OUTER_MIN_OUT || p->nred < 2)
        return false;
    int64_t expect = 1;
    for (int d = p->nk - 1; d >= 0; d--) {
        if (p->ksz[d] != 1 && p->kst[d] != expect)
            return false;
        expect *= p->ksz[d];
    }
    return true;
}

/* Level rows a pairwise row sum of p->nred rows needs (one per bit of the block count). */
int
red_outer_levels(const red_plan *p)
{
    int l = 0;
    for (uint64_t n = (uint64_t)(p->nred / RED_BLOCK); n != 0; n >>= 1)
        l++;
    return l;
}

/* Tile width for the plan: RED_OUTER_TILE, or less so that every thread gets a tile. */
static int64_t
red_outer_tile(const red_plan *p)
{
    const int nt = ops_get_num_threads();
    int64_t w = RED_OUTER_TILE;
    if (nt > 1 && (p->nout + w - 1) / w < nt) {
        w = (p->nout + nt - 1) / nt;
        w = (w + 15) / 16 * 16;
        if (w < 256)
            w = 256;
    }
    return w;
}

/* Threads over tiles, when there is enough work and more than one tile. */
#ifdef _OPENMP
#define RED_OUTER_FOR_ _Pragma("omp parallel for schedule(static) if (red_par_on_)")
#else
#define RED_OUTER_FOR_
#endif

/* Runs BODY with `const SCALAR *ROW`, the tile's start in each reduced row, in order. */
#define RED_ROWS(P, IN, C0, SCALAR, ROW, ...)                                                      \
    for (int64_t j_ = 0; j_ < (P)->nro; j_++) {                                                    \
        for (int64_t i_ = 0; i_ < (P)->rin; i_++) {                                                \
            const SCALAR *restrict const ROW = (IN) + (P)->roff[j_] + i_ * (P)->rstep + (C0);      \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

/* The row steps of the floating outer reductions, element by element: the vector loops
 * of the process's level for float32/float64 (kernels/cpu/vec/vec_reduce.h, the same
 * per-element arithmetic, so the same bits at every level), plain loops for the half
 * types (converted on load). */
#define RED_ROW_VEC_(SUF, T)                                                                       \
    static inline void red_row_add_##SUF(T *acc, const T *x, int64_t n)                           \
    {                                                                                              \
        ops_vec_reduce()->row_add_##SUF(acc, x, n);                                                \
    }                                                                                              \
    static inline void red_row_nanadd_##SUF(T *acc, const T *x, int64_t n)                        \
    {                                                                                              \
        ops_vec_reduce()->row_nanadd_##SUF(acc, x, n);                                             \
    }                                                                                              \
    static inline void red_row_mul_##SUF(T *acc, const T *x, int64_t n)                           \
    {                                                                                              \
        ops_vec_reduce()->row_mul_##SUF(acc, x, n);                                                \
    }                                                                                              \
    static inline void red_row_max_##SUF(T *acc, const T *x, int64_t n)                           \
    {                                                                                              \
        ops_vec_reduce()->row_max_##SUF(acc, x, n);                                                \
    }                                                                                              \
    static inline void red_row_min_##SUF(T *acc, const T *x, int64_t n)                           \
    {                                                                                              \
        ops_vec_reduce()->row_min_##SUF(acc, x, n);                                                \
    }
RED_ROW_VEC_(f32, float)
RED_ROW_VEC_(f64, double)

#define RED_ROW_HALF_(SUF, T)                                                                      \
    static inline void red_row_add_##SUF(float *acc, const T *x, int64_t n)                       \
    {                                                                                              \
        for (int64_t c = 0; c < n; c++)                                                            \
            acc[c] += (float)OPS_LOAD(&x[c]);                                                      \
    }                                                                                              \
    static inline void red_row_nanadd_##SUF(float *acc, const T *x, int64_t n)                    \
    {                                                                                              \
        for (int64_t c = 0; c < n; c++) {                                                          \
            const float v = OPS_LOAD(&x[c]);                                                       \
            acc[c] += v == v ? v : 0.0f;                                                           \
        }                                                                                          \
    }                                                                                              \
    static inline void red_row_mul_##SUF(float *acc, const T *x, int64_t n)                       \
    {                                                                                              \
        for (int64_t c = 0; c < n; c++)                                                            \
            acc[c] *= (float)OPS_LOAD(&x[c]);                                                      \
    }                                                                                              \
    static inline void red_row_max_##SUF(float *acc, const T *x, int64_t n)                       \
    {                                                                                              \
        for (int64_t c = 0; c < n; c++)                                                            \
            acc[c] = OPS_RED_MAX_NAN(acc[c], (float)OPS_LOAD(&x[c]));                              \
    }                                                                                              \
    static inline void red_row_min_##SUF(float *acc, const T *x, int64_t n)                       \
    {                                                                                              \
        for (int64_t c = 0; c < n; c++)                                                            \
            acc[c] = OPS_RED_MIN_NAN(acc[c], (float)OPS_LOAD(&x[c]));                              \
    }
RED_ROW_HALF_(f16, ops_half)
RED_ROW_HALF_(bf16, ops_bfloat16)

/* acc[c] = lv[c] + acc[c]: merging a level row, by the accumulator's type. */
static inline void
red_row_radd_float(float *acc, const float *lv, int64_t n)
{
    ops_vec_reduce()->row_radd_f32(acc, lv, n);
}

static inline void
red_row_radd_double(double *acc, const double *lv, int64_t n)
{
    ops_vec_reduce()->row_radd_f64(acc, lv, n);
}

/* Floating outer reductions: sum, nansum, mean, prod, amax, amin, aminmax (its maxima
 * into dst2). ws holds (levels + 1) * nout ACC, and 2 * nout at least for aminmax. */
#define RED_DEFINE_OUTER_FLT_(SUF, T, ACC)                                                         \
    static void red_outer_flt_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,  \
                                    char *dst2, void *ws)                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const int64_t nout = p->nout, w = red_outer_tile(p), ntile = (nout + w - 1) / w;           \
        const int nlev = red_outer_levels(p);                                                      \
        const bool red_par_on_ = ntile > 1 && red_par_(p);                                         \
        (void)red_par_on_;                                                                         \
        RED_OUTER_FOR_                                                                             \
        for (int64_t t = 0; t < ntile; t++) {                                                      \
            const int64_t c0 = t * w, n = nout - c0 < w ? nout - c0 : w;                           \
            ACC *restrict const acc = (ACC *)ws + c0;                                              \
            if (kind == RED_SUM || kind == RED_MEAN || kind == RED_NANSUM) {                       \
                int64_t inblk = 0;                                                                 \
                uint64_t nblk = 0;                                                                 \
                RED_ROWS(p, in, c0, T, row, {                                                      \
                    if (inblk == 0) {                                                              \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = 0;                                                            \
                    }                                                                              \
                    if (kind == RED_NANSUM)                                                        \
                        red_row_nanadd_##SUF(acc, row, n);                                         \
                    else                                                                           \
                        red_row_add_##SUF(acc, row, n);                                            \
                    if (++inblk == RED_BLOCK) {                                                    \
                        uint64_t b = nblk++;                                                       \
                        int k = 0;                                                                 \
                        for (; b & 1; b >>= 1, k++) {                                              \
                            red_row_radd_##ACC(acc, (const ACC *)ws + (k + 1) * nout + c0, n);     \
                        }                                                                          \
                        ACC *restrict const dl = (ACC *)ws + (k + 1) * nout + c0;                  \
                        for (int64_t c = 0; c < n; c++)                                            \
                            dl[c] = acc[c];                                                        \
                        inblk = 0;                                                                 \
                    }                                                                              \
                })                                                                                 \
                if (inblk == 0) {                                                                  \
                    for (int64_t c = 0; c < n; c++)                                                \
                        acc[c] = 0;                                                                \
                }                                                                                  \
                uint64_t b = nblk;                                                                 \
                for (int k = 0; b != 0 && k < nlev; b >>= 1, k++) {                                \
                    if (b & 1) {                                                                   \
                        red_row_radd_##ACC(acc, (const ACC *)ws + (k + 1) * nout + c0, n);         \
                    }                                                                              \
                }                                                                                  \
                if (kind == RED_MEAN) {                                                            \
                    for (int64_t c = 0; c < n; c++)                                                \
                        acc[c] = acc[c] / (ACC)p->nred;                                            \
                }                                                                                  \
            } else {                                                                               \
                /* aminmax: the running maxima in ws's second row */                               \
                ACC *restrict const hi = kind == RED_AMINMAX ? (ACC *)ws + nout + c0 : NULL;       \
                bool first = true;                                                                 \
                RED_ROWS(p, in, c0, T, row, {                                                      \
                    if (first) {                                                                   \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = kind == RED_PROD ? (ACC)1 : (ACC)OPS_LOAD(&row[c]);           \
                        if (hi != NULL) {                                                          \
                            for (int64_t c = 0; c < n; c++)                                        \
                                hi[c] = acc[c];                                                    \
                        }                                                                          \
                        first = false;                                                             \
                        if (kind != RED_PROD)                                                      \
                            continue;                                                              \
                    }                                                                              \
                    if (kind == RED_PROD) {                                                        \
                        red_row_mul_##SUF(acc, row, n);                                            \
                    } else if (kind == RED_AMAX) {                                                 \
                        red_row_max_##SUF(acc, row, n);                                            \
                    } else if (kind == RED_AMINMAX) {                                              \
                        red_row_min_##SUF(acc, row, n);                                            \
                        red_row_max_##SUF(hi, row, n);                                             \
                    } else {                                                                       \
                        red_row_min_##SUF(acc, row, n);                                            \
                    }                                                                              \
                })                                                                                 \
                if (hi != NULL) {                                                                  \
                    for (int64_t c = 0; c < n; c++)                                                \
                        OPS_STORE(&((T *)dst2)[c0 + c], hi[c]);                                    \
                }                                                                                  \
            }                                                                                      \
            for (int64_t c = 0; c < n; c++)                                                        \
                OPS_STORE(&out[c0 + c], acc[c]);                                                   \
        }                                                                                          \
    }

RED_DEFINE_OUTER_FLT_(f16, ops_half, float)
RED_DEFINE_OUTER_FLT_(bf16, ops_bfloat16, float)
RED_DEFINE_OUTER_FLT_(f32, float, float)
RED_DEFINE_OUTER_FLT_(f64, double, double)

/* Integer (and bool) outer reductions: sum, nansum, prod wrap in uint64_t; amax, amin,
 * aminmax (its maxima in place in dst2). */
#define RED_DEFINE_OUTER_INT_(SUF, T)                                                              \
    static void red_outer_int_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,  \
                                    char *dst2, void *ws)                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const int64_t nout = p->nout, w = red_outer_tile(p), ntile = (nout + w - 1) / w;           \
        const bool red_par_on_ = ntile > 1 && red_par_(p);                                         \
        (void)red_par_on_;                                                                         \
        RED_OUTER_FOR_                                                                             \
        for (int64_t t = 0; t < ntile; t++) {                                                      \
            const int64_t c0 = t * w, n = nout - c0 < w ? nout - c0 : w;                           \
            if (kind == RED_SUM || kind == RED_NANSUM || kind == RED_PROD) {                       \
                uint64_t *restrict const acc = (uint64_t *)ws + c0;                                \
                for (int64_t c = 0; c < n; c++)                                                    \
                    acc[c] = kind == RED_PROD ? 1 : 0;                                             \
                if (kind == RED_PROD) {                                                            \
                    RED_ROWS(p, in, c0, T, row, {                                                  \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] *= (uint64_t)(int64_t)row[c];                                   \
                    })                                                                             \
                } else {                                                                           \
                    RED_ROWS(p, in, c0, T, row, {                                                  \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] += (uint64_t)(int64_t)row[c];                                   \
                    })                                                                             \
                }                                                                                  \
                for (int64_t c = 0; c < n; c++)                                                    \
                    out[c0 + c] = (T)(int64_t)acc[c];                                              \
            } else if (kind == RED_AMAX || kind == RED_AMIN || kind == RED_AMINMAX) {              \
                T *restrict const acc = out + c0;                                                  \
                T *restrict const hi = kind == RED_AMINMAX ? (T *)dst2 + c0 : NULL;                \
                bool first = true;                                                                 \
                RED_ROWS(p, in, c0, T, row, {                                                      \
                    if (first) {                                                                   \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = row[c];                                                       \
                        if (hi != NULL) {                                                          \
                            for (int64_t c = 0; c < n; c++)                                        \
                                hi[c] = row[c];                                                    \
                        }                                                                          \
                        first = false;                                                             \
                    } else if (kind == RED_AMAX) {                                                 \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = row[c] > acc[c] ? row[c] : acc[c];                            \
                    } else if (kind == RED_AMINMAX) {                                              \
                        for (int64_t c = 0; c < n; c++) {                                          \
                            acc[c] = row[c] < acc[c] ? row[c] : acc[c];                            \
                            hi[c] = row[c] > hi[c] ? row[c] : hi[c];                               \
                        }                                                                          \
                    } else {                                                                       \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = row[c] < acc[c] ? row[c] : acc[c];                            \
                    }                                                                              \
                })                                                                                 \
            }                                                                                      \
        }                                                                                          \
    }

RED_DEFINE_OUTER_INT_(b, bool)
RED_DEFINE_OUTER_INT_(u8, uint8_t)
RED_DEFINE_OUTER_INT_(i8, int8_t)
RED_DEFINE_OUTER_INT_(i16, int16_t)
RED_DEFINE_OUTER_INT_(i32, int32_t)
RED_DEFINE_OUTER_INT_(i64, int64_t)

/* max.dim/min.dim over an outer dim: each reduced row updates the running extremes (in
 * ACC, the first nout of ws) and their positions (written in place into dst2), with the
 * column walk's rules: the first extreme wins a tie, a NaN is taken once and kept. */
#define RED_DEFINE_OUTER_EXT_(SUF, T, ACC, ISNAN)                                                  \
    static void red_outer_ext_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,  \
                                    char *dst2, void *ws)                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const int64_t nout = p->nout, w = red_outer_tile(p), ntile = (nout + w - 1) / w;           \
        const bool red_par_on_ = ntile > 1 && red_par_(p);                                         \
        (void)red_par_on_;                                                                         \
        RED_OUTER_FOR_                                                                             \
        for (int64_t t = 0; t < ntile; t++) {                                                      \
            const int64_t c0 = t * w, n = nout - c0 < w ? nout - c0 : w;                           \
            ACC *restrict const best = (ACC *)ws + c0;                                             \
            int64_t *restrict const idx = (int64_t *)dst2 + c0;                                    \
            int64_t k = 0;                                                                         \
            RED_ROWS(p, in, c0, T, row, {                                                          \
                if (k == 0) {                                                                      \
                    for (int64_t c = 0; c < n; c++) {                                              \
                        best[c] = OPS_LOAD(&row[c]);                                               \
                        idx[c] = 0;                                                                \
                    }                                                                              \
                } else if (kind == RED_MAXDIM) {                                                   \
                    for (int64_t c = 0; c < n; c++) {                                              \
                        const ACC x = OPS_LOAD(&row[c]), b = best[c];                              \
                        const bool take = !(x <= b) && !ISNAN(b);                                  \
                        best[c] = take ? x : b;                                                    \
                        idx[c] = take ? k : idx[c];                                                \
                    }                                                                              \
                } else {                                                                           \
                    for (int64_t c = 0; c < n; c++) {                                              \
                        const ACC x = OPS_LOAD(&row[c]), b = best[c];                              \
                        const bool take = !(x >= b) && !ISNAN(b);                                  \
                        best[c] = take ? x : b;                                                    \
                        idx[c] = take ? k : idx[c];                                                \
                    }                                                                              \
                }                                                                                  \
                k++;                                                                               \
            })                                                                                     \
            for (int64_t c = 0; c < n; c++)                                                        \
                OPS_STORE(&out[c0 + c], best[c]);                                                  \
        }                                                                                          \
    }

RED_DEFINE_OUTER_EXT_(b, bool, bool, RED_NONAN_)
RED_DEFINE_OUTER_EXT_(u8, uint8_t, uint8_t, RED_NONAN_)
RED_DEFINE_OUTER_EXT_(i8, int8_t, int8_t, RED_NONAN_)
RED_DEFINE_OUTER_EXT_(i16, int16_t, int16_t, RED_NONAN_)
RED_DEFINE_OUTER_EXT_(i32, int32_t, int32_t, RED_NONAN_)
RED_DEFINE_OUTER_EXT_(i64, int64_t, int64_t, RED_NONAN_)
RED_DEFINE_OUTER_EXT_(f16, ops_half, float, RED_ISNAN_)
RED_DEFINE_OUTER_EXT_(bf16, ops_bfloat16, float, RED_ISNAN_)
RED_DEFINE_OUTER_EXT_(f32, float, float, RED_ISNAN_)
RED_DEFINE_OUTER_EXT_(f64, double, double, RED_ISNAN_)

/* True for the kinds the outer path implements. */
bool
red_outer_kind(red_kind kind)
{
    return kind == RED_SUM || kind == RED_NANSUM || kind == RED_MEAN || kind == RED_PROD || kind == RED_AMAX ||
           kind == RED_AMIN || kind == RED_MAXDIM || kind == RED_MINDIM || kind == RED_AMINMAX;
}

/* The outer path for kind on dtype dt; false when it has none (the column walk runs). */
bool
red_run_outer(red_kind kind, ops_dtype dt, const red_plan *p, const char *src, char *dst, char *dst2, void *ws)
{
    if (!red_outer_kind(kind))
        return false;
    if (kind == RED_MAXDIM || kind == RED_MINDIM) {
        switch (dt) {
        case OPS_BOOL: red_outer_ext_b(kind, p, src, dst, dst2, ws); break;
        case OPS_UINT8: red_outer_ext_u8(kind, p, src, dst, dst2, ws); break;
        case OPS_INT8: red_outer_ext_i8(kind, p, src, dst, dst2, ws); break;
        case OPS_INT16: red_outer_ext_i16(kind, p, src, dst, dst2, ws); break;
        case OPS_INT32: red_outer_ext_i32(kind, p, src, dst, dst2, ws); break;
        case OPS_INT64: red_outer_ext_i64(kind, p, src, dst, dst2, ws); break;
        case OPS_FLOAT16: red_outer_ext_f16(kind, p, src, dst, dst2, ws); break;
        case OPS_BFLOAT16: red_outer_ext_bf16(kind, p, src, dst, dst2, ws); break;
        case OPS_FLOAT32: red_outer_ext_f32(kind, p, src, dst, dst2, ws); break;
        case OPS_FLOAT64: red_outer_ext_f64(kind, p, src, dst, dst2, ws); break;
        default: return false;
        }
        return true;
    }
    switch (dt) {
    case OPS_BOOL: red_outer_int_b(kind, p, src, dst, dst2, ws); break;
    case OPS_UINT8: red_outer_int_u8(kind, p, src, dst, dst2, ws); break;
    case OPS_INT8: red_outer_int_i8(kind, p, src, dst, dst2, ws); break;
    case OPS_INT16: red_outer_int_i16(kind, p, src, dst, dst2, ws); break;
    case OPS_INT32: red_outer_int_i32(kind, p, src, dst, dst2, ws); break;
    case OPS_INT64: red_outer_int_i64(kind, p, src, dst, dst2, ws); break;
    case OPS_FLOAT16: red_outer_flt_f16(kind, p, src, dst, dst2, ws); break;
    case OPS_BFLOAT16: red_outer_flt_bf16(kind, p, src, dst, dst2, ws); break;
    case OPS_FLOAT32: red_outer_flt_f32(kind, p, src, dst, dst2, ws); break;
    case OPS_FLOAT64: red_outer_flt_f64(kind, p, src, dst, dst2, ws); break;
    default: return false;
    }
    return true;
}

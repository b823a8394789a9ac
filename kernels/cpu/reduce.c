/* Reductions, the CPU loops: the reduce_loop stub of kernels/reduce.h (sum, nansum,
 * mean, nanmean, prod, amax, amin, aminmax, max/min (.dim with indices), argmax,
 * argmin, all, any, var, std (and their _mean forms), logsumexp, vector norms).  The
 * driver (kernels/reduce.c) has checked the arguments, converted the input to the
 * dtype computed in and allocated the contiguous results; this file plans and loops.
 *
 * A reduction is planned once (red_plan, reduce_cpu.h): the input's dims split into
 * kept dims (one output element per index) and reduced dims.  The reduced elements of
 * an output sit at the same offsets from its base for every output, so those offsets
 * are listed once (the innermost reduced dim is a strided run); any strides, 0 and
 * negative included, are read in place.  Floating sums accumulate in opmath (float for
 * float16/bfloat16) pairwise, in blocks of RED_BLOCK merged like a binary counter, so
 * 2^24 ones sum to 2^24 exactly; integer sums and products wrap in uint64_t as
 * PyTorch's int64 ones do.  When the kept dims are inner and contiguous (sum over dim
 * 0 of a matrix) whole rows are folded into an accumulator row instead
 * (reduce_outer.c), with the same per-element order and result.  When the innermost
 * reduced dim is contiguous, most float kinds and integer sums run on the vector loops
 * of the CPU's level instead (red_run_vec below; docs/cpu-dispatch.md "Reductions"). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu/reduce_cpu.h"
#include "kernels/cpu/vec/vec_reduce.h"
#include "kernels/reduce.h"

#ifdef _OPENMP
#include <omp.h>
#endif

OPS_REGISTER_STUB(reduce_loop, CPU, reduce_loop_cpu);

/* Fills p (but not roff) from t's geometry and the mask. */
void
red_plan_geometry(red_plan *p, const ops_tensor *t, const bool *mask, bool keepdim)
{
    int64_t rsz[OPS_MAX_DIMS], rst[OPS_MAX_DIMS];
    int nr = 0;
    p->nk = 0;
    p->ond = 0;
    p->nout = 1;
    p->nred = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (mask[d]) {
            rsz[nr] = t->sizes[d];
            rst[nr++] = t->strides[d];
            p->nred *= t->sizes[d];
            if (keepdim)
                p->osz[p->ond++] = 1;
        } else {
            p->ksz[p->nk] = t->sizes[d];
            p->kst[p->nk++] = t->strides[d];
            p->nout *= t->sizes[d];
            p->osz[p->ond++] = t->sizes[d];
        }
    }
    p->rin = nr > 0 ? rsz[nr - 1] : 1;
    p->rstep = nr > 0 ? rst[nr - 1] : 0;
    p->nro = p->rin > 0 ? p->nred / p->rin : 0;
    p->roff = NULL; /* the outer reduced dims' offsets: red_plan_offsets */
}

/* Allocates (one entry at least) and fills p->roff, the offsets of the runs, for t.
 * Returns false on OOM (error set). */
bool
red_plan_offsets(const char *op, red_plan *p, const ops_tensor *t, const bool *mask)
{
    int64_t rsz[OPS_MAX_DIMS], rst[OPS_MAX_DIMS];
    int nr = 0;
    for (int d = 0; d < t->ndim; d++)
        if (mask[d]) {
            rsz[nr] = t->sizes[d];
            rst[nr++] = t->strides[d];
        }
    const int64_t n = p->nro > 0 ? p->nro : 1;
    /* One offset per run: a huge zero-stride view has more runs than memory can list. */
    size_t bytes;
    const bool too_large = ops_nbytes_overflow(n, sizeof(int64_t), &bytes);
    p->roff = too_large ? NULL : ops_host_malloc(bytes);
    if (p->roff == NULL) {
        char buf[OPS_SHAPE_STR_LEN];
        ops_fail(OPS_ERR_OOM, "%s: %s: reducing a tensor of sizes %s needs a plan of %" PRId64 " offsets", op,
                 too_large ? "too large to allocate" : "out of memory",
                 ops_shape_str(t->ndim, t->sizes, buf, sizeof buf), n);
        return false;
    }
    int64_t idx[OPS_MAX_DIMS] = {0};
    int64_t off = 0;
    for (int64_t j = 0; j < p->nro; j++) {
        p->roff[j] = off;
        /* advance the counter over the outer reduced dims (0 .. nr-2) */
        for (int d = nr - 2; d >= 0; d--) {
            idx[d]++;
            off += rst[d];
            if (idx[d] < rsz[d])
                break;
            off -= idx[d] * rst[d];
            idx[d] = 0;
        }
    }
    if (p->nro == 0)
        p->roff[0] = 0;
    return true;
}

/* ---- typed reduction loops ---------------------------------------------------------- */

/* Integer (and bool) inputs: sums and products wrap in uint64_t. */
#define RED_DEFINE_INT_(SUF, T)                                                                    \
    static void red_int_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,        \
                              char *dst2)                                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            if (kind == RED_SUM || kind == RED_NANSUM || kind == RED_PROD) {                       \
                uint64_t acc = kind == RED_PROD ? 1 : 0;                                           \
                if (kind == RED_PROD) {                                                            \
                    RED_EACH(p, b, T, v, acc *= (uint64_t)(int64_t)*v;)                            \
                } else {                                                                           \
                    RED_EACH(p, b, T, v, acc += (uint64_t)(int64_t)*v;)                            \
                }                                                                                  \
                ((T *)dst)[o] = (T)(int64_t)acc;                                                   \
            } else if (kind == RED_AMAX || kind == RED_AMIN) {                                     \
                T acc = *(b + p->roff[0]);                                                         \
                if (kind == RED_AMAX) {                                                            \
                    RED_EACH(p, b, T, v, if (*v > acc) acc = *v;)                                  \
                } else {                                                                           \
                    RED_EACH(p, b, T, v, if (*v < acc) acc = *v;)                                  \
                }                                                                                  \
                ((T *)dst)[o] = acc;                                                               \
            } else if (kind == RED_AMINMAX) {                                                      \
                T lo = *(b + p->roff[0]), hi = lo;                                                 \
                RED_EACH(p, b, T, v, {                                                             \
                    if (*v < lo)                                                                   \
                        lo = *v;                                                                   \
                    if (*v > hi)                                                                   \
                        hi = *v;                                                                   \
                })                                                                                 \
                ((T *)dst)[o] = lo;                                                                \
                ((T *)dst2)[o] = hi;                                                               \
            }                                                                                      \
        }                                                                                          \
    }

RED_DEFINE_INT_(b, bool)
RED_DEFINE_INT_(u8, uint8_t)
RED_DEFINE_INT_(i8, int8_t)
RED_DEFINE_INT_(i16, int16_t)
RED_DEFINE_INT_(i32, int32_t)
RED_DEFINE_INT_(i64, int64_t)

/* Floating inputs, computed in ACC (float for float16/bfloat16). */
#define RED_DEFINE_FLT_(SUF, T, ACC)                                                               \
    static void red_flt_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,        \
                              char *dst2)                                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            ACC r = 0;                                                                             \
            if (kind == RED_SUM || kind == RED_MEAN || kind == RED_NANSUM || kind == RED_NANMEAN) { \
                pw_##ACC s;                                                                        \
                pw_init_##ACC(&s);                                                                 \
                int64_t cnt = 0; /* nanmean: the elements that are not NaN */                      \
                if (kind == RED_NANSUM || kind == RED_NANMEAN) {                                   \
                    RED_EACH(p, b, T, v, {                                                         \
                        const ACC x = OPS_LOAD(v);                                                 \
                        if (x == x) {                                                              \
                            pw_add_##ACC(&s, x);                                                   \
                            cnt++;                                                                 \
                        }                                                                          \
                    })                                                                             \
                } else {                                                                           \
                    RED_EACH(p, b, T, v, pw_add_##ACC(&s, OPS_LOAD(v));)                           \
                }                                                                                  \
                r = pw_total_##ACC(&s);                                                            \
                if (kind == RED_MEAN)                                                              \
                    r = r / (ACC)p->nred;                                                          \
                else if (kind == RED_NANMEAN)                                                      \
                    r = r / (ACC)cnt; /* none left: 0 / 0, NaN */                                 \
            } else if (kind == RED_PROD) {                                                         \
                r = 1;                                                                             \
                RED_EACH(p, b, T, v, r *= OPS_LOAD(v);)                                            \
            } else if (kind == RED_AMAX) {                                                         \
                r = OPS_LOAD(b + p->roff[0]);                                                      \
                RED_EACH(p, b, T, v, r = OPS_RED_MAX_NAN(r, OPS_LOAD(v));)                         \
            } else if (kind == RED_AMIN) {                                                         \
                r = OPS_LOAD(b + p->roff[0]);                                                      \
                RED_EACH(p, b, T, v, r = OPS_RED_MIN_NAN(r, OPS_LOAD(v));)                         \
            } else if (kind == RED_AMINMAX) {                                                      \
                r = OPS_LOAD(b + p->roff[0]);                                                      \
                ACC hi = r;                                                                        \
                RED_EACH(p, b, T, v, {                                                             \
                    const ACC x = OPS_LOAD(v);                                                     \
                    r = OPS_RED_MIN_NAN(r, x);                                                     \
                    hi = OPS_RED_MAX_NAN(hi, x);                                                   \
                })                                                                                 \
                OPS_STORE(&((T *)dst2)[o], hi);                                                    \
            } else if (kind == RED_LSE) {                                                          \
                ACC m = -INFINITY;                                                                 \
                RED_EACH(p, b, T, v, m = OPS_RED_MAX_NAN(m, OPS_LOAD(v));)                         \
                m = OPS_RED_LSE_SHIFT(m);                                                          \
                pw_##ACC s;                                                                        \
                pw_init_##ACC(&s);                                                                 \
                RED_EACH(p, b, T, v, pw_add_##ACC(&s, CPU_FP1(expf, exp, (ACC)(OPS_LOAD(v) - m)));) \
                r = CPU_FP1(logf, log, pw_total_##ACC(&s)) + m;                                    \
            }                                                                                      \
            OPS_STORE(&out[o], r);                                                                 \
        }                                                                                          \
    }

RED_DEFINE_FLT_(f16, ops_half, float)
RED_DEFINE_FLT_(bf16, ops_bfloat16, float)
RED_DEFINE_FLT_(f32, float, float)
RED_DEFINE_FLT_(f64, double, double)

/* var/std of floating inputs: two passes (the mean, then the squared deviations from
 * it), both pairwise in double, so that a large common offset costs no precision.
 * dst2, when not NULL, gets the means (var_mean, std_mean). */
#define RED_DEFINE_VAR_(SUF, T, ACC)                                                               \
    static void red_var_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,        \
                              char *dst2)                                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        T *const means = (T *)dst2;                                                                \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            pw_double s;                                                                           \
            pw_init_double(&s);                                                                    \
            RED_EACH(p, b, T, v, pw_add_double(&s, (double)OPS_LOAD(v));)                          \
            const double mean = pw_total_double(&s) / (double)p->nred; /* empty: NaN */           \
            if (means != NULL)                                                                     \
                OPS_STORE(&means[o], (ACC)mean);                                                   \
            pw_init_double(&s);                                                                    \
            RED_EACH(p, b, T, v, {                                                                 \
                const double d = (double)OPS_LOAD(v) - mean;                                       \
                pw_add_double(&s, d * d);                                                          \
            })                                                                                     \
            double r = pw_total_double(&s) / ops_red_var_divisor(p->nred, p->arg);                 \
            if (kind == RED_STD)                                                                   \
                r = sqrt(r);                                                                       \
            OPS_STORE(&out[o], (ACC)r);                                                            \
        }                                                                                          \
    }

RED_DEFINE_VAR_(f16, ops_half, float)
RED_DEFINE_VAR_(bf16, ops_bfloat16, float)
RED_DEFINE_VAR_(f32, float, float)
RED_DEFINE_VAR_(f64, double, double)

/* argmax/argmin into int64: the position (in the reduced elements' row-major order) of
 * the first extreme; a NaN is the extreme of both, as in PyTorch, so the first NaN wins. */
#define RED_DEFINE_ARG_(SUF, T, ACC, ISNAN)                                                        \
    static void red_arg_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst)        \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        int64_t *const out = (int64_t *)dst;                                                       \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            ACC best = OPS_LOAD(b + p->roff[0]);                                                   \
            int64_t bi = 0, k = 0;                                                                 \
            bool found_nan = ISNAN(best);                                                          \
            RED_EACH(p, b, T, v, {                                                                 \
                if (!found_nan) {                                                                  \
                    const ACC x = OPS_LOAD(v);                                                     \
                    if (ISNAN(x)) {                                                                \
                        bi = k;                                                                    \
                        found_nan = true;                                                          \
                    } else if (kind == RED_ARGMAX ? x > best : x < best) {                         \
                        best = x;                                                                  \
                        bi = k;                                                                    \
                    }                                                                              \
                }                                                                                  \
                k++;                                                                               \
            })                                                                                     \
            out[o] = bi;                                                                           \
        }                                                                                          \
    }

RED_DEFINE_ARG_(b, bool, bool, RED_NONAN_)
RED_DEFINE_ARG_(u8, uint8_t, uint8_t, RED_NONAN_)
RED_DEFINE_ARG_(i8, int8_t, int8_t, RED_NONAN_)
RED_DEFINE_ARG_(i16, int16_t, int16_t, RED_NONAN_)
RED_DEFINE_ARG_(i32, int32_t, int32_t, RED_NONAN_)
RED_DEFINE_ARG_(i64, int64_t, int64_t, RED_NONAN_)
RED_DEFINE_ARG_(f16, ops_half, float, RED_ISNAN_)
RED_DEFINE_ARG_(bf16, ops_bfloat16, float, RED_ISNAN_)
RED_DEFINE_ARG_(f32, float, float, RED_ISNAN_)
RED_DEFINE_ARG_(f64, double, double, RED_ISNAN_)

/* Vector norms of floating inputs, computed in ACC: order 0 counts the nonzero elements
 * (NaN included), inf and -inf take the largest and the smallest magnitude (a NaN
 * wins), 1 and 2 sum |x| and x*x pairwise, any other order sums |x|^p and takes the
 * 1/p power.  A single reduced element gives |x| (x != 0 for order 0) exactly, as
 * PyTorch does, where x*x could overflow. */
#define RED_DEFINE_NORM_(SUF, T, ACC)                                                              \
    static void red_norm_##SUF(const red_plan *p, const char *src, char *dst)                      \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const out = (T *)dst;                                                                   \
        const double ord = p->arg;                                                                 \
        const ACC pw = (ACC)ord, inv = (ACC)(1.0 / ord);                                           \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            ACC r;                                                                                 \
            if (p->nred == 1) {                                                                    \
                const ACC x = OPS_LOAD(b + p->roff[0]);                                            \
                r = ord == 0 ? (ACC)(x != 0) : CPU_FP1(fabsf, fabs, x);                            \
            } else if (ord == 0) {                                                                 \
                int64_t cnt = 0;                                                                   \
                RED_EACH(p, b, T, v, cnt += OPS_LOAD(v) != 0;)                                     \
                r = (ACC)cnt;                                                                      \
            } else if (ord == INFINITY) {                                                          \
                r = 0;                                                                             \
                RED_EACH(p, b, T, v,                                                               \
                         r = OPS_RED_MAX_NAN(r, CPU_FP1(fabsf, fabs, (ACC)OPS_LOAD(v)));)          \
            } else if (ord == -INFINITY) {                                                         \
                r = INFINITY;                                                                      \
                RED_EACH(p, b, T, v,                                                               \
                         r = OPS_RED_MIN_NAN(r, CPU_FP1(fabsf, fabs, (ACC)OPS_LOAD(v)));)          \
            } else {                                                                               \
                pw_##ACC s;                                                                        \
                pw_init_##ACC(&s);                                                                 \
                if (ord == 1) {                                                                    \
                    RED_EACH(p, b, T, v, pw_add_##ACC(&s, CPU_FP1(fabsf, fabs, (ACC)OPS_LOAD(v)));) \
                } else if (ord == 2) {                                                             \
                    RED_EACH(p, b, T, v, {                                                         \
                        const ACC x = OPS_LOAD(v);                                                 \
                        pw_add_##ACC(&s, x * x);                                                   \
                    })                                                                             \
                } else {                                                                           \
                    RED_EACH(p, b, T, v, {                                                         \
                        const ACC x = OPS_LOAD(v);                                                 \
                        pw_add_##ACC(&s, CPU_FP2(powf, pow, CPU_FP1(fabsf, fabs, x), pw));         \
                    })                                                                             \
                }                                                                                  \
                r = pw_total_##ACC(&s);                                                            \
                if (ord == 2)                                                                      \
                    r = CPU_FP1(sqrtf, sqrt, r);                                                   \
                else if (ord != 1)                                                                 \
                    r = CPU_FP2(powf, pow, r, inv);                                                \
            }                                                                                      \
            OPS_STORE(&out[o], r);                                                                 \
        }                                                                                          \
    }

RED_DEFINE_NORM_(f16, ops_half, float)
RED_DEFINE_NORM_(bf16, ops_bfloat16, float)
RED_DEFINE_NORM_(f32, float, float)
RED_DEFINE_NORM_(f64, double, double)

/* max.dim/min.dim: the extreme of each output's run (the one reduced dim) into dst and
 * its position into the int64 dst2.  Ties keep the first position, and a NaN is taken
 * at once and ends the scan (PyTorch's CPU rule): `!(x <= best)` is true for a larger
 * x and for NaN, so the common case costs one compare per element. */
#define RED_EXT_SCAN_(ACC, ISNAN, CMP, LOADX)                                                      \
    for (int64_t i = 1; i < n; i++) {                                                              \
        const ACC x = LOADX;                                                                       \
        if (!(x CMP best)) {                                                                       \
            best = x;                                                                              \
            bi = i;                                                                                \
            if (ISNAN(x))                                                                          \
                break;                                                                             \
        }                                                                                          \
    }
#define RED_DEFINE_EXT_(SUF, T, ACC, ISNAN)                                                        \
    static void red_ext_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst,        \
                              char *dst2)                                                          \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        T *const vals = (T *)dst;                                                                  \
        int64_t *const idx = (int64_t *)dst2;                                                      \
        const int64_t n = p->rin, st = p->rstep;                                                   \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *restrict const q = in + red_base(p, o) + p->roff[0];                          \
            ACC best = OPS_LOAD(q);                                                                \
            int64_t bi = 0;                                                                        \
            if (!ISNAN(best)) {                                                                    \
                if (kind == RED_MAXDIM && st == 1) {                                               \
                    RED_EXT_SCAN_(ACC, ISNAN, <=, OPS_LOAD(q + i))                                 \
                } else if (kind == RED_MAXDIM) {                                                   \
                    RED_EXT_SCAN_(ACC, ISNAN, <=, OPS_LOAD(q + i * st))                            \
                } else if (st == 1) {                                                              \
                    RED_EXT_SCAN_(ACC, ISNAN, >=, OPS_LOAD(q + i))                                 \
                } else {                                                                           \
                    RED_EXT_SCAN_(ACC, ISNAN, >=, OPS_LOAD(q + i * st))                            \
                }                                                                                  \
            }                                                                                      \
            OPS_STORE(&vals[o], best);                                                             \
            idx[o] = bi;                                                                           \
        }                                                                                          \
    }

RED_DEFINE_EXT_(b, bool, bool, RED_NONAN_)
RED_DEFINE_EXT_(u8, uint8_t, uint8_t, RED_NONAN_)
RED_DEFINE_EXT_(i8, int8_t, int8_t, RED_NONAN_)
RED_DEFINE_EXT_(i16, int16_t, int16_t, RED_NONAN_)
RED_DEFINE_EXT_(i32, int32_t, int32_t, RED_NONAN_)
RED_DEFINE_EXT_(i64, int64_t, int64_t, RED_NONAN_)
RED_DEFINE_EXT_(f16, ops_half, float, RED_ISNAN_)
RED_DEFINE_EXT_(bf16, ops_bfloat16, float, RED_ISNAN_)
RED_DEFINE_EXT_(f32, float, float, RED_ISNAN_)
RED_DEFINE_EXT_(f64, double, double, RED_ISNAN_)

/* The truth of a contiguous run of n elements of es bytes as bit patterns: an element
 * is true when its bits and m are not 0 (m: every bit, or all but the sign bit of a
 * floating dtype, so that -0.0 is false and NaN true).  all: no false element; any:
 * some true one.  Blocks of RED_TRUTH_BLOCK elements are folded with plain loops the
 * compiler vectorises (OR of the masked bits; OR of "is zero"), stopping at the first
 * block that decides. */
#define RED_TRUTH_BLOCK 512
/* `omp simd`: GCC's -O2 cost model leaves these loops scalar (a byte at a time). */
#ifdef _OPENMP
#define RED_SIMD_OR_ACC_ _Pragma("omp simd reduction(| : acc)")
#define RED_SIMD_ADD_K_ _Pragma("omp simd reduction(+ : k)")
#else
#define RED_SIMD_OR_ACC_
#define RED_SIMD_ADD_K_
#endif
#define RED_TRUTH_RUN_(UT)                                                                         \
    static bool red_truth_run_##UT(const void *xp, int64_t n, UT m, bool all)                      \
    {                                                                                              \
        const UT *const x = (const UT *)xp;                                                        \
        for (int64_t b0 = 0; b0 < n; b0 += RED_TRUTH_BLOCK) {                                      \
            const int64_t e = n - b0 < RED_TRUTH_BLOCK ? n : b0 + RED_TRUTH_BLOCK;                 \
            UT acc = 0;                                                                            \
            if (all) {                                                                             \
                RED_SIMD_OR_ACC_                                                                  \
                for (int64_t i = b0; i < e; i++)                                                   \
                    acc |= (UT)((x[i] & m) == 0);                                                  \
                if (acc != 0)                                                                      \
                    return false;                                                                  \
            } else {                                                                               \
                RED_SIMD_OR_ACC_                                                                  \
                for (int64_t i = b0; i < e; i++)                                                   \
                    acc |= x[i] & m;                                                               \
                if (acc != 0)                                                                      \
                    return true;                                                                   \
            }                                                                                      \
        }                                                                                          \
        return all;                                                                                \
    }
RED_TRUTH_RUN_(uint8_t)
RED_TRUTH_RUN_(uint16_t)
RED_TRUTH_RUN_(uint32_t)
RED_TRUTH_RUN_(uint64_t)

/* all/any of one output whose runs are contiguous (p->rstep 1), elements of es bytes,
 * floating when fl. */
static bool
red_truth_runs(red_kind kind, const red_plan *p, const char *b, size_t es, bool fl)
{
    const bool all = kind == RED_ALL;
    for (int64_t j = 0; j < p->nro; j++) {
        const char *const x = b + (size_t)p->roff[j] * es;
        bool r;
        switch (es) {
        case 1: r = red_truth_run_uint8_t(x, p->rin, 0xff, all); break;
        case 2: r = red_truth_run_uint16_t(x, p->rin, fl ? 0x7fff : 0xffff, all); break;
        case 4: r = red_truth_run_uint32_t(x, p->rin, fl ? 0x7fffffffu : 0xffffffffu, all); break;
        default:
            r = red_truth_run_uint64_t(x, p->rin, fl ? 0x7fffffffffffffffull : 0xffffffffffffffffull, all);
            break;
        }
        if (r != all)
            return r;
    }
    return all;
}

/* all/any of any dtype into bool or uint8 (the truth of each element); contiguous runs
 * as bit patterns (red_truth_runs). */
#define RED_DEFINE_TRUTH_(SUF, T, FL)                                                              \
    static void red_truth_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst)      \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        const bool red_par_on_ = red_par_(p);                                                      \
        const bool runs_ = p->rstep == 1 && p->rin >= 16;                                          \
        const bool fl_ = (FL);                                                                     \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            bool r = kind == RED_ALL;                                                              \
            if (runs_) {                                                                           \
                r = red_truth_runs(kind, p, (const char *)b, sizeof(T), fl_);                      \
            } else if (kind == RED_ALL) {                                                          \
                RED_EACH(p, b, T, v, r = r && OPS_LOAD(v) != 0;)                                   \
            } else {                                                                               \
                RED_EACH(p, b, T, v, r = r || OPS_LOAD(v) != 0;)                                   \
            }                                                                                      \
            dst[o] = (char)r; /* bool and uint8 both hold 0 or 1 in one byte */                    \
        }                                                                                          \
    }

RED_DEFINE_TRUTH_(b, bool, false)
RED_DEFINE_TRUTH_(u8, uint8_t, false)
RED_DEFINE_TRUTH_(i8, int8_t, false)
RED_DEFINE_TRUTH_(i16, int16_t, false)
RED_DEFINE_TRUTH_(i32, int32_t, false)
RED_DEFINE_TRUTH_(i64, int64_t, false)
RED_DEFINE_TRUTH_(f16, ops_half, true)
RED_DEFINE_TRUTH_(bf16, ops_bfloat16, true)
RED_DEFINE_TRUTH_(f32, float, true)
RED_DEFINE_TRUTH_(f64, double, true)

/* ---- the vector path: contiguous runs ------------------------------------------------ */

/* When the innermost reduced dim is contiguous and long enough, float32/float64 sums,
 * means, nansums, products, amax/amin, argmax/argmin, norms of order 1 and 2, var/std
 * and logsumexp, and int32/int64 sums, run on the vector loops of the process's level
 * (kernels/cpu/vec/vec_reduce.h).  An output's reduced elements are cut into units
 * that depend on the plan alone, never on the thread count: a run of RED_VEC_SEG or
 * more elements into pieces of RED_VEC_SEG, shorter runs grouped RED_VEC_SEG / rin to a
 * unit.  Each unit's partial (its runs' blocked vector sums merged pairwise, in float64)
 * is computed by one thread, and the partials are merged pairwise in unit order by the
 * calling thread, so the result is the same for any number of threads.  When there are
 * fewer outputs than threads (the all-reduce), the threads split each output's units;
 * otherwise they split the outputs.  The vector max/min says NaN when a NaN is there (or
 * +inf and -inf both): amax/amin/argmax/argmin/logsumexp are then redone by the scalar
 * loop, as are amax/amin whose result is zero, so that the rules stay the scalar loop's:
 * the first NaN wins, ties keep the first (the sign of a zero maximum). */
#define RED_VEC_MIN_RUN 16
#define RED_VEC_SEG 65536
/* Elements of work below which threads cost more than they save at vector speed (about
 * 0.1 ns an element, against some microseconds to wake a thread). */
#define RED_VEC_PAR_WORK (1 << 18)

enum { RV_SUM, RV_NANSUM, RV_ABS, RV_SQ, RV_EXP, RV_MEAN64, RV_DEV64, RV_PROD, RV_MAX, RV_MIN, RV_COUNT,
       RV_ABSMAX, RV_ABSMIN, RV_POW, RV_NONZERO };

typedef struct {
    const ops_vec_reduce_table *t;
    const red_plan *p;
    bool f64;           /* double elements (else float, or float16/bfloat16 summed in float) */
    ops_dtype dt;
    size_t es;          /* bytes per element */
    int64_t nunit, ppr; /* units; pieces per run when runs are split (else 1) */
    int64_t g;          /* runs per unit when they are grouped */
} red_vctx;

static double
red_vrun(const red_vctx *c, int op, const char *x, int64_t n, double a)
{
    const ops_vec_reduce_table *t = c->t;
    if (c->dt == OPS_FLOAT16) /* the half types: sums only (red_run_vec) */
        return t->sum_f16((const uint16_t *)x, n);
    if (c->dt == OPS_BFLOAT16)
        return t->sum_bf16((const uint16_t *)x, n);
    if (c->f64) {
        const double *v = (const double *)x;
        switch (op) {
        case RV_SUM: return t->sum_f64(v, n);
        case RV_NANSUM: return t->nansum_f64(v, n);
        case RV_ABS: return t->sumabs_f64(v, n);
        case RV_SQ: return t->sumsq_f64(v, n);
        case RV_EXP: return t->sumexp_f64(v, n, a);
        case RV_MEAN64: return t->sum_f64(v, n);
        case RV_DEV64: return t->sqdev_f64(v, n, a);
        case RV_PROD: return t->prod_f64(v, n);
        case RV_MAX: return t->max_f64(v, n);
        case RV_COUNT: return t->count_f64(v, n);
        case RV_ABSMAX: return t->absmax_f64(v, n);
        case RV_ABSMIN: return t->absmin_f64(v, n);
        case RV_POW: return a == 3 ? t->sumcube_f64(v, n) : t->sumpow_f64(v, n, a);
        case RV_NONZERO: {
            int64_t k = 0; /* NaN counts: it is not 0 */
            RED_SIMD_ADD_K_
            for (int64_t i = 0; i < n; i++)
                k += v[i] != 0;
            return (double)k;
        }
        default: return t->min_f64(v, n);
        }
    }
    const float *v = (const float *)x;
    switch (op) {
    case RV_SUM: return t->sum_f32(v, n);
    case RV_NANSUM: return t->nansum_f32(v, n);
    case RV_ABS: return t->sumabs_f32(v, n);
    case RV_SQ: return t->sumsq_f32(v, n);
    case RV_EXP: return t->sumexp_f32(v, n, (float)a);
    case RV_MEAN64: return t->sum_f32_f64(v, n);
    case RV_DEV64: return t->sqdev_f32(v, n, a);
    case RV_PROD: return t->prod_f32(v, n);
    case RV_MAX: return t->max_f32(v, n);
    case RV_COUNT: return t->count_f32(v, n);
    case RV_ABSMAX: return t->absmax_f32(v, n);
    case RV_ABSMIN: return t->absmin_f32(v, n);
    case RV_POW: return a == 3 ? t->sumcube_f32(v, n) : t->sumpow_f32(v, n, (float)a);
    case RV_NONZERO: {
        int32_t k = 0; /* n <= RED_VEC_SEG */
        RED_SIMD_ADD_K_
        for (int64_t i = 0; i < n; i++)
            k += v[i] != 0;
        return (double)k;
    }
    default: return t->min_f32(v, n);
    }
}

/* Partials of op merged: pairwise (sums), product, or the NaN-first max/min. */
typedef struct {
    int op;
    pw_double s;
    double r;
    bool any;
} red_vacc;

static void
red_vacc_init(red_vacc *a, int op)
{
    a->op = op;
    pw_init_double(&a->s);
    a->r = op == RV_PROD ? 1.0 : 0.0;
    a->any = false;
}

static void
red_vacc_add(red_vacc *a, double v)
{
    if (a->op == RV_PROD)
        a->r *= v;
    else if (a->op == RV_MAX || a->op == RV_ABSMAX)
        a->r = a->any ? ops_red_max_nan_f64(a->r, v) : v;
    else if (a->op == RV_MIN || a->op == RV_ABSMIN)
        a->r = a->any ? ops_red_min_nan_f64(a->r, v) : v;
    else
        pw_add_double(&a->s, v);
    a->any = true;
}

static double
red_vacc_total(const red_vacc *a)
{
    return a->op == RV_PROD || a->op == RV_MAX || a->op == RV_MIN || a->op == RV_ABSMAX || a->op == RV_ABSMIN
               ? a->r
               : pw_total_double(&a->s);
}

/* Unit u's partial of op over the output whose first element is b. */
static double
red_vunit(const red_vctx *c, int op, const char *b, int64_t u, double a)
{
    const red_plan *p = c->p;
    const size_t es = c->es;
    if (c->ppr > 1) {
        const int64_t j = u / c->ppr, k0 = u % c->ppr * RED_VEC_SEG;
        const int64_t n = p->rin - k0 < RED_VEC_SEG ? p->rin - k0 : RED_VEC_SEG;
        return red_vrun(c, op, b + (size_t)(p->roff[j] + k0) * es, n, a);
    }
    const int64_t j1 = (u + 1) * c->g < p->nro ? (u + 1) * c->g : p->nro;
    red_vacc acc;
    red_vacc_init(&acc, op);
    for (int64_t j = u * c->g; j < j1; j++)
        red_vacc_add(&acc, red_vrun(c, op, b + (size_t)p->roff[j] * es, p->rin, a));
    return red_vacc_total(&acc);
}

/* op over one output: its units' partials merged in unit order; parts (nunit entries)
 * given: the units computed by the threads first. */
static double
red_vpass(const red_vctx *c, int op, const char *b, double a, double *parts)
{
    red_vacc acc;
    red_vacc_init(&acc, op);
    if (parts != NULL) {
        /* dynamic: a thread the OS takes away for a while (a machine busier than its
         * cores) leaves its units to the others instead of making them wait; each unit
         * writes its own entry, so the result does not depend on who computed what */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
        for (int64_t u = 0; u < c->nunit; u++)
            parts[u] = red_vunit(c, op, b, u, a);
        for (int64_t u = 0; u < c->nunit; u++)
            red_vacc_add(&acc, parts[u]);
    } else {
        for (int64_t u = 0; u < c->nunit; u++)
            red_vacc_add(&acc, red_vunit(c, op, b, u, a));
    }
    return red_vacc_total(&acc);
}

/* The position of the first element equal to v (NaN: the first NaN) in the reduced
 * elements' order. */
static int64_t
red_vfind(const red_vctx *c, const char *b, double v)
{
    const red_plan *p = c->p;
    for (int64_t j = 0; j < p->nro; j++) {
        int64_t i;
        if (c->f64)
            i = c->t->find_f64((const double *)b + p->roff[j], p->rin, v);
        else
            i = c->t->find_f32((const float *)b + p->roff[j], p->rin, (float)v);
        if (i < p->rin)
            return j * p->rin + i;
    }
    return 0; /* not reached: v is one of the elements */
}

/* The min (*lo) and max (*hi) of one output's runs, one pass over each (NaN for both
 * when a NaN is there). */
static void
red_vminmax(const red_vctx *c, const char *b, double *lo, double *hi)
{
    const red_plan *p = c->p;
    *lo = *hi = 0; /* p->nro >= 1 */
    for (int64_t j = 0; j < p->nro; j++) {
        double l, h;
        if (c->f64) {
            l = c->t->minmax_f64((const double *)b + p->roff[j], p->rin, &h);
        } else {
            float hf;
            l = c->t->minmax_f32((const float *)b + p->roff[j], p->rin, &hf);
            h = hf;
        }
        *lo = j == 0 ? l : ops_red_min_nan_f64(*lo, l);
        *hi = j == 0 ? h : ops_red_max_nan_f64(*hi, h);
    }
}

/* Output o of kind by the vector loops; false when the scalar loop must give it (amax
 * and amin at zero or NaN). */
static bool
red_vout(const red_vctx *c, red_kind kind, const char *src, int64_t o, char *dst, char *dst2, double *parts)
{
    const red_plan *p = c->p;
    const char *const b = src + (size_t)red_base(p, o) * c->es;
    double r;
    switch (kind) {
    case RED_SUM:
    case RED_MEAN: {
        r = red_vpass(c, RV_SUM, b, 0, parts);
        if (kind == RED_MEAN)
            r = c->f64 ? r / (double)p->nred : (double)((float)r / (float)p->nred);
        break;
    }
    case RED_NANSUM: r = red_vpass(c, RV_NANSUM, b, 0, parts); break;
    case RED_NANMEAN: {
        /* the sum of the elements that are not NaN over their count (a second pass;
         * none left: 0 / 0, NaN), divided in the dtype as the scalar loop */
        r = red_vpass(c, RV_NANSUM, b, 0, parts);
        const double cnt = red_vpass(c, RV_COUNT, b, 0, parts);
        r = c->f64 ? r / cnt : (double)((float)r / (float)cnt);
        break;
    }
    case RED_PROD: r = red_vpass(c, RV_PROD, b, 0, parts); break;
    case RED_NORM:
        if (p->arg == 1) {
            r = red_vpass(c, RV_ABS, b, 0, parts);
        } else if (p->arg == 2) {
            r = red_vpass(c, RV_SQ, b, 0, parts);
            r = c->f64 ? sqrt(r) : (double)sqrtf((float)r);
        } else if (p->arg == 0) {
            r = red_vpass(c, RV_NONZERO, b, 0, parts);
        } else if (p->arg == INFINITY || p->arg == -INFINITY) {
            r = red_vpass(c, p->arg > 0 ? RV_ABSMAX : RV_ABSMIN, b, 0, parts);
            if (r != r)
                return false; /* a NaN: the scalar loop's */
        } else {
            r = red_vpass(c, RV_POW, b, p->arg, parts);
            r = c->f64 ? pow(r, 1.0 / p->arg) : (double)powf((float)r, (float)(1.0 / p->arg));
        }
        break;
    case RED_AMAX:
    case RED_AMIN:
        r = red_vpass(c, kind == RED_AMAX ? RV_MAX : RV_MIN, b, 0, parts);
        if (r == 0 || r != r)
            return false;
        break;
    case RED_ARGMAX:
    case RED_ARGMIN: {
        const double m = red_vpass(c, kind == RED_ARGMAX ? RV_MAX : RV_MIN, b, 0, parts);
        if (m != m)
            return false; /* a NaN (or +inf and -inf): the scalar loop finds the first */
        ((int64_t *)dst)[o] = red_vfind(c, b, m);
        return true;
    }
    case RED_AMINMAX: {
        /* min into dst, max into dst2: one pass over each run (merging extremes is
         * exact, so how the runs are cut changes nothing), or, when the threads split
         * the output's units, a pass each; a zero or NaN extreme: the scalar loop's rules
         * (as amax/amin) */
        double hi = 0;
        r = 0;
        if (parts != NULL) {
            r = red_vpass(c, RV_MIN, b, 0, parts);
            hi = r == 0 || r != r ? r : red_vpass(c, RV_MAX, b, 0, parts);
        } else {
            red_vminmax(c, b, &r, &hi);
        }
        if (r == 0 || r != r || hi == 0 || hi != hi)
            return false;
        if (c->f64)
            ((double *)dst2)[o] = hi;
        else
            ((float *)dst2)[o] = (float)hi;
        break;
    }
    case RED_MAXDIM:
    case RED_MINDIM: {
        /* the extreme, then its first position; the value stored is that element's, so
         * a zero extreme has the sign of its first occurrence (the scalar `!(x <= best)`
         * keeps the first of -0.0 and 0.0) */
        const double m = red_vpass(c, kind == RED_MAXDIM ? RV_MAX : RV_MIN, b, 0, parts);
        if (m != m)
            return false; /* a NaN (or +inf and -inf): the scalar loop takes the first */
        const int64_t pos = red_vfind(c, b, m);
        const char *const e = b + (size_t)(p->roff[pos / p->rin] + pos % p->rin) * c->es;
        memcpy(dst + (size_t)o * c->es, e, c->es);
        ((int64_t *)dst2)[o] = pos;
        return true;
    }
    case RED_LSE: {
        double m = red_vpass(c, RV_MAX, b, 0, parts);
        if (m != m)
            return false; /* a NaN, or +inf and -inf (whose logsumexp is inf) */
        if (c->f64) {
            m = ops_red_lse_shift_f64(m);
            r = log(red_vpass(c, RV_EXP, b, m, parts)) + m;
        } else {
            const float mf = ops_red_lse_shift_f32((float)m);
            r = (double)(logf((float)red_vpass(c, RV_EXP, b, mf, parts)) + mf);
        }
        break;
    }
    default: { /* RED_VAR, RED_STD */
        const double mean = red_vpass(c, RV_MEAN64, b, 0, parts) / (double)p->nred;
        if (dst2 != NULL) {
            if (c->f64)
                ((double *)dst2)[o] = mean;
            else
                ((float *)dst2)[o] = (float)mean;
        }
        r = red_vpass(c, RV_DEV64, b, mean, parts) / ops_red_var_divisor(p->nred, p->arg);
        if (kind == RED_STD)
            r = sqrt(r);
        break;
    }
    }
    if (c->dt == OPS_FLOAT16)
        OPS_STORE((ops_half *)dst + o, (float)r);
    else if (c->dt == OPS_BFLOAT16)
        OPS_STORE((ops_bfloat16 *)dst + o, (float)r);
    else if (c->f64)
        ((double *)dst)[o] = r;
    else
        ((float *)dst)[o] = (float)r;
    return true;
}

/* True when the threads should split each output rather than the outputs. */
static bool
red_vsplit_units(const red_plan *p, int64_t nunit)
{
#ifdef _OPENMP
    if (omp_in_parallel())
        return false;
#endif
    const int nt = ops_get_num_threads();
    return nt > 1 && p->nout < nt && nunit > 1 && p->nred >= RED_VEC_PAR_WORK;
}

static bool
red_vkind(red_kind kind, const red_plan *p)
{
    switch (kind) {
    case RED_SUM: case RED_MEAN: case RED_NANSUM: case RED_NANMEAN: case RED_PROD: case RED_AMAX: case RED_AMIN:
    case RED_ARGMAX: case RED_ARGMIN: case RED_LSE: case RED_VAR: case RED_STD: case RED_MAXDIM: case RED_MINDIM:
    case RED_AMINMAX:
        return true;
    case RED_NORM: return p->arg == p->arg; /* every order */
    default: return false;
    }
}

/* The scalar loop of kind for one output (the vector path's fallback). */
static void red_run_one(red_kind kind, ops_dtype dt, const red_plan *p, int64_t o, const char *src, char *dst,
                        char *dst2);

/* Integer sums of int32/int64 runs: wrapping, so any split gives the same bits. */
static void
red_vint(ops_dtype dt, const red_plan *p, const char *src, char *dst)
{
    const ops_vec_reduce_table *t = ops_vec_reduce();
    const bool red_par_on_ = (double)p->nout * (double)p->nred >= RED_VEC_PAR_WORK && p->nout > 1;
    (void)red_par_on_;
    RED_PARALLEL_FOR_(p)
    for (int64_t o = 0; o < p->nout; o++) {
        const int64_t base = red_base(p, o);
        uint64_t s = 0;
        for (int64_t j = 0; j < p->nro; j++) {
            if (dt == OPS_INT32)
                s += t->sum_i32((const int32_t *)src + base + p->roff[j], p->rin);
            else
                s += t->sum_i64((const int64_t *)src + base + p->roff[j], p->rin);
        }
        if (dt == OPS_INT32)
            ((int32_t *)dst)[o] = (int32_t)(int64_t)s;
        else
            ((int64_t *)dst)[o] = (int64_t)s;
    }
}

/* True when the level's table sums dt (float16 at avx2 needs F16C, outside the
 * level's own flags). */
static bool
red_vhalf_ok(const ops_vec_reduce_table *t, ops_dtype dt)
{
    if (dt == OPS_BFLOAT16)
        return true;
    if (t->sum_f16 == NULL)
        return false;
#if defined(__x86_64__)
    return __builtin_cpu_supports("f16c") != 0; /* reads libgcc's cpuid record */
#else
    return true;
#endif
}

/* The vector path for kind over the plan; false when it does not apply. */
static bool
red_run_vec(red_kind kind, ops_dtype dt, const red_plan *p, const char *src, char *dst, char *dst2)
{
    if (p->rstep != 1 || p->rin < RED_VEC_MIN_RUN)
        return false;
    if ((dt == OPS_INT32 || dt == OPS_INT64) && (kind == RED_SUM || kind == RED_NANSUM)) {
        red_vint(dt, p, src, dst);
        return true;
    }
    /* an output's runs one after another in memory (every reduced dim contiguous, as in
     * the all-reduce of a contiguous tensor) are one run: long loops, one horizontal
     * step per piece rather than per run */
    red_plan q = *p;
    if (p->nro > 1 && p->roff[p->nro - 1] == (p->nro - 1) * p->rin) {
        bool flat = true;
        for (int64_t j = 1; j < p->nro && flat; j++)
            flat = p->roff[j] == j * p->rin;
        if (flat) {
            q.rin = p->nred;
            q.nro = 1;
        }
    }
    red_vctx c = {.t = ops_vec_reduce(), .p = &q, .f64 = dt == OPS_FLOAT64, .dt = dt, .es = ops_dtype_size(dt),
                  .ppr = 1, .g = 1};
    if (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) {
        /* sums and means of the half types in float32, where the level converts them */
        if ((kind != RED_SUM && kind != RED_MEAN) || !red_vhalf_ok(c.t, dt))
            return false;
    } else if ((dt != OPS_FLOAT32 && dt != OPS_FLOAT64) || !red_vkind(kind, p)) {
        return false;
    }
    if (q.rin >= RED_VEC_SEG) {
        c.ppr = (q.rin + RED_VEC_SEG - 1) / RED_VEC_SEG;
        c.nunit = q.nro * c.ppr;
    } else {
        c.g = RED_VEC_SEG / q.rin;
        c.nunit = (q.nro + c.g - 1) / c.g;
    }
    if (red_vsplit_units(p, c.nunit)) {
        double *parts = ops_host_malloc_array(c.nunit, sizeof(double));
        if (parts != NULL) {
            for (int64_t o = 0; o < p->nout; o++)
                if (!red_vout(&c, kind, src, o, dst, dst2, parts))
                    red_run_one(kind, dt, p, o, src, dst, dst2);
            ops_host_free(parts);
            return true;
        }
        /* no memory for the partials: the same units, one thread */
    }
    /* threads over outputs, in chunks of about RED_VEC_SEG elements taken dynamically
     * (as the units above) */
    const bool red_par_on_ = p->nout > 1 && (double)p->nout * (double)p->nred >= RED_VEC_PAR_WORK;
    const int64_t chunk = p->nred >= RED_VEC_SEG ? 1 : RED_VEC_SEG / p->nred;
    (void)red_par_on_;
    (void)chunk;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, chunk) if (red_par_on_)
#endif
    for (int64_t o = 0; o < p->nout; o++)
        if (!red_vout(&c, kind, src, o, dst, dst2, NULL))
            red_run_one(kind, dt, p, o, src, dst, dst2);
    return true;
}

/* kind over the plan from src into dst (and dst2: var_mean's means, max.dim's indices,
 * aminmax's maxima). */
static void
red_run(red_kind kind, ops_dtype dt, const red_plan *p, const char *src, char *dst, char *dst2)
{
    if (kind == RED_VAR || kind == RED_STD) {
        switch (dt) {
        case OPS_FLOAT16: red_var_f16(kind, p, src, dst, dst2); break;
        case OPS_BFLOAT16: red_var_bf16(kind, p, src, dst, dst2); break;
        case OPS_FLOAT32: red_var_f32(kind, p, src, dst, dst2); break;
        case OPS_FLOAT64: red_var_f64(kind, p, src, dst, dst2); break;
        default: break;
        }
        return;
    }
    if (kind == RED_NORM) {
        switch (dt) {
        case OPS_FLOAT16: red_norm_f16(p, src, dst); break;
        case OPS_BFLOAT16: red_norm_bf16(p, src, dst); break;
        case OPS_FLOAT32: red_norm_f32(p, src, dst); break;
        case OPS_FLOAT64: red_norm_f64(p, src, dst); break;
        default: break;
        }
        return;
    }
    if (kind == RED_MAXDIM || kind == RED_MINDIM) {
        switch (dt) {
        case OPS_BOOL: red_ext_b(kind, p, src, dst, dst2); break;
        case OPS_UINT8: red_ext_u8(kind, p, src, dst, dst2); break;
        case OPS_INT8: red_ext_i8(kind, p, src, dst, dst2); break;
        case OPS_INT16: red_ext_i16(kind, p, src, dst, dst2); break;
        case OPS_INT32: red_ext_i32(kind, p, src, dst, dst2); break;
        case OPS_INT64: red_ext_i64(kind, p, src, dst, dst2); break;
        case OPS_FLOAT16: red_ext_f16(kind, p, src, dst, dst2); break;
        case OPS_BFLOAT16: red_ext_bf16(kind, p, src, dst, dst2); break;
        case OPS_FLOAT32: red_ext_f32(kind, p, src, dst, dst2); break;
        case OPS_FLOAT64: red_ext_f64(kind, p, src, dst, dst2); break;
        default: break;
        }
        return;
    }
    if (kind == RED_ARGMAX || kind == RED_ARGMIN) {
        switch (dt) {
        case OPS_BOOL: red_arg_b(kind, p, src, dst); break;
        case OPS_UINT8: red_arg_u8(kind, p, src, dst); break;
        case OPS_INT8: red_arg_i8(kind, p, src, dst); break;
        case OPS_INT16: red_arg_i16(kind, p, src, dst); break;
        case OPS_INT32: red_arg_i32(kind, p, src, dst); break;
        case OPS_INT64: red_arg_i64(kind, p, src, dst); break;
        case OPS_FLOAT16: red_arg_f16(kind, p, src, dst); break;
        case OPS_BFLOAT16: red_arg_bf16(kind, p, src, dst); break;
        case OPS_FLOAT32: red_arg_f32(kind, p, src, dst); break;
        case OPS_FLOAT64: red_arg_f64(kind, p, src, dst); break;
        default: break;
        }
        return;
    }
    if (kind == RED_ALL || kind == RED_ANY) {
        switch (dt) {
        case OPS_BOOL: red_truth_b(kind, p, src, dst); break;
        case OPS_UINT8: red_truth_u8(kind, p, src, dst); break;
        case OPS_INT8: red_truth_i8(kind, p, src, dst); break;
        case OPS_INT16: red_truth_i16(kind, p, src, dst); break;
        case OPS_INT32: red_truth_i32(kind, p, src, dst); break;
        case OPS_INT64: red_truth_i64(kind, p, src, dst); break;
        case OPS_FLOAT16: red_truth_f16(kind, p, src, dst); break;
        case OPS_BFLOAT16: red_truth_bf16(kind, p, src, dst); break;
        case OPS_FLOAT32: red_truth_f32(kind, p, src, dst); break;
        case OPS_FLOAT64: red_truth_f64(kind, p, src, dst); break;
        default: break;
        }
        return;
    }
    switch (dt) {
    case OPS_BOOL: red_int_b(kind, p, src, dst, dst2); break;
    case OPS_UINT8: red_int_u8(kind, p, src, dst, dst2); break;
    case OPS_INT8: red_int_i8(kind, p, src, dst, dst2); break;
    case OPS_INT16: red_int_i16(kind, p, src, dst, dst2); break;
    case OPS_INT32: red_int_i32(kind, p, src, dst, dst2); break;
    case OPS_INT64: red_int_i64(kind, p, src, dst, dst2); break;
    case OPS_FLOAT16: red_flt_f16(kind, p, src, dst, dst2); break;
    case OPS_BFLOAT16: red_flt_bf16(kind, p, src, dst, dst2); break;
    case OPS_FLOAT32: red_flt_f32(kind, p, src, dst, dst2); break;
    case OPS_FLOAT64: red_flt_f64(kind, p, src, dst, dst2); break;
    default: break;
    }
}

/* The scalar loop of kind for output o alone: the plan narrowed to that output. */
static void
red_run_one(red_kind kind, ops_dtype dt, const red_plan *p, int64_t o, const char *src, char *dst, char *dst2)
{
    red_plan q = *p;
    const size_t es = ops_dtype_size(dt);
    const int64_t base = red_base(p, o);
    q.nout = 1;
    q.nk = 0;
    const size_t os = kind == RED_ARGMAX || kind == RED_ARGMIN ? sizeof(int64_t) : es;
    const size_t os2 = kind == RED_MAXDIM || kind == RED_MINDIM ? sizeof(int64_t) : es; /* the indices */
    red_run(kind, dt, &q, src + (size_t)base * es, dst + (size_t)o * os, dst2 != NULL ? dst2 + (size_t)o * os2 : NULL);
}

/* Kinds whose result does not depend on the order the reduced elements are visited in,
 * beyond rounding (no "first" NaN or position is reported): their reduced dims may be
 * reordered. */
static bool
red_order_free(red_kind kind)
{
    switch (kind) {
    case RED_SUM: case RED_MEAN: case RED_NANSUM: case RED_NANMEAN: case RED_PROD: case RED_VAR: case RED_STD:
    case RED_NORM: case RED_ALL: case RED_ANY:
        return true;
    default:
        return false;
    }
}

/* When the innermost reduced dim is strided but another reduced dim has stride 1 (the
 * sum over dims (0, 1) of a transposed matrix), *view becomes src with those two dims
 * swapped, so that the runs are contiguous and take the vector loops rather than a
 * gather of one element per cache line.  Only the reduced dims move: the kept dims, and
 * so the outputs, stay where they are.  Returns the tensor to plan over. */
static const ops_tensor *
red_contiguous_run(red_kind kind, const ops_tensor *src, const bool *mask, ops_tensor *view)
{
    if (!red_order_free(kind))
        return src;
    int last = -1, unit = -1;
    for (int d = 0; d < src->ndim; d++) {
        if (!mask[d])
            continue;
        last = d;
        if (src->strides[d] == 1 && src->sizes[d] > 1)
            unit = d;
    }
    if (unit < 0 || unit == last || (src->strides[last] == 1 && src->sizes[last] > 1))
        return src;
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    memcpy(sizes, src->sizes, (size_t)src->ndim * sizeof(int64_t));
    memcpy(strides, src->strides, (size_t)src->ndim * sizeof(int64_t));
    sizes[unit] = src->sizes[last];
    strides[unit] = src->strides[last];
    sizes[last] = src->sizes[unit];
    strides[last] = 1;
    *view = ops_borrowed_view(src, src->ndim, sizes, strides, src->offset);
    return view;
}

/* The loop of the reduce_loop stub: the plan of src's reduction (the runs' offsets, the
 * outer path's workspace when it applies), then the reduction into res (and res2). */
ops_status
reduce_loop_cpu(const char *op, red_kind kind, const ops_tensor *src0, const bool *mask, double arg, ops_tensor *res,
                ops_tensor *res2)
{
    red_plan p;
    void *ws = NULL;
    ops_tensor view;
    const ops_tensor *const src = red_contiguous_run(kind, src0, mask, &view);
    red_plan_geometry(&p, src, mask, false);
    p.arg = arg;
    if (p.nout == 0)
        return OPS_OK;
    if (!red_plan_offsets(op, &p, src, mask))
        return ops_last_status();
    if (red_outer_kind(kind) && red_outer_ok(&p)) {
        /* the outer path's accumulator and level rows, 8 bytes covering every ACC */
        size_t rows = (size_t)red_outer_levels(&p) + 1;
        if (kind == RED_AMINMAX && rows < 2)
            rows = 2; /* the minima and the maxima */
        if ((ws = ops_host_malloc_array(p.nout, rows * 8)) == NULL) {
            ops_host_free(p.roff);
            return ops_fail(OPS_ERR_OOM, "%s: out of memory (a workspace of %zu rows of %" PRId64 " entries)", op,
                            rows, p.nout);
        }
    }
    char *const dst = (char *)ops_tensor_data_ptr(res);
    char *const dst2 = res2 != NULL ? (char *)ops_tensor_data_ptr(res2) : NULL;
    const char *const in = (const char *)ops_tensor_data_ptr(src);
    if (!(ws != NULL && red_run_outer(kind, src->dtype, &p, in, dst, dst2, ws)) &&
        !red_run_vec(kind, src->dtype, &p, in, dst, dst2))
        red_run(kind, src->dtype, &p, in, dst, dst2);
    ops_host_free(ws);
    ops_host_free(p.roff);
    return OPS_OK;
}

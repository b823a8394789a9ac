/* Reductions (CPU): sum, mean, prod, nansum, nanmean, amax, amin, aminmax, max, min
 * (whole tensor, and over one dim with indices), argmax, argmin, var, std, var_mean, std_mean,
 * norm, frobenius_norm, linalg_vector_norm, all, any, logsumexp, and the one-dim ops
 * softmax, log_softmax, cumsum(_), cumprod(_), cummax, cummin.
 *
 * A reduction is planned once (red_plan): the input's dims split into kept dims (one
 * output element per index) and reduced dims.  The reduced elements of an output sit
 * at the same offsets from its base for every output, so those offsets are listed once
 * (the innermost reduced dim is a strided run); any strides, 0 and negative included,
 * are read in place.  The input is first converted to the dtype the op computes in
 * when that differs (sum of int32 is an int64 sum, sum(dtype=float64) a float64 one).
 * Floating sums accumulate in opmath (float for float16/bfloat16) pairwise, in blocks
 * of RED_BLOCK merged like a binary counter, so 2^24 ones sum to 2^24 exactly;
 * integer sums and products wrap in uint64_t as PyTorch's int64 ones do.  When the kept
 * dims are inner and contiguous (sum over dim 0 of a matrix) whole rows are folded into
 * an accumulator row instead (red_outer_*), with the same per-element order and result.
 *
 * Results are computed into a fresh contiguous tensor; an out= tensor is checked and
 * resized only once every allocation has succeeded, then written in one strided copy
 * that cannot fail, so a failed call leaves out= untouched.
 *
 * The drivers (reduce_core2, dim_impl, cumext_impl and what calls them) serve CUDA
 * tensors too: the kernels/cuda entry points call these same functions, so dims,
 * dtype rules, error messages and out= handling are one code; for a tensor on a CUDA
 * device the element loops are kernels/cuda's (ops_reduce_common.h), and the final
 * out= write is a device copy. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/ops_reduce_common.h"
#include "ops_functions_copy.h"
#include "ops_functions_linalg.h"
#include "ops_functions_reduce.h"
#include "ops_kernels_reduce.h"
#ifdef OPS_WITH_CUDA
#include "ops_cuda_backend.h"
#endif

/* Elements summed plainly before a block joins the pairwise tree. */
#define RED_BLOCK 128

typedef struct {
    int64_t nout;                  /* output elements */
    int64_t nred;                  /* reduced elements per output */
    int nk;                        /* kept dims */
    int64_t ksz[OPS_MAX_DIMS];     /* their sizes */
    int64_t kst[OPS_MAX_DIMS];     /* their input strides (elements) */
    int64_t rin, rstep;            /* innermost reduced dim: size and stride */
    int64_t nro;                   /* runs of rin elements per output */
    int64_t *roff;                 /* offsets of those runs from an output's base */
    int ond;                       /* output rank */
    int64_t osz[OPS_MAX_DIMS];     /* output sizes */
    double arg;                    /* var/std: the correction (divisor nred - arg, at least
                                      0); norm: its order */
} red_plan;

/* Marks the reduced dims of a tensor of rank ndim in mask; dims NULL or empty: all.
 * Errors name the op: out-of-range and repeated dims. */
static ops_status
red_dims(const char *op, int ndim, const ops_int_list *dims, bool *mask)
{
    for (int d = 0; d < OPS_MAX_DIMS; d++)
        mask[d] = false;
    if (dims == NULL || dims->len == 0) {
        for (int d = 0; d < ndim; d++)
            mask[d] = true;
        return OPS_OK;
    }
    for (int64_t i = 0; i < dims->len; i++) {
        int64_t d = dims->data[i];
        if (!ops_wrap_dim(op, "dim", &d, ndim))
            return ops_last_status();
        if (ndim == 0)
            continue;
        if (mask[d])
            return ops_fail(OPS_ERR_VALUE, "%s: dim %lld appears multiple times in the list of dims", op,
                            (long long)d);
        mask[d] = true;
    }
    return OPS_OK;
}

/* Fills p (but not roff) from t's geometry and the mask. */
static void
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
static bool
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

/* Element offset of output o's base in the input. */
static inline int64_t
red_base(const red_plan *p, int64_t o)
{
    int64_t off = 0;
    for (int d = p->nk - 1; d >= 0; d--) {
        off += (o % p->ksz[d]) * p->kst[d];
        o /= p->ksz[d];
    }
    return off;
}

/* Runs BODY with `const SCALAR *V` at every reduced element of output base B. */
#define RED_EACH(P, B, SCALAR, V, ...)                                                             \
    for (int64_t j_ = 0; j_ < (P)->nro; j_++) {                                                    \
        const SCALAR *const q_ = (B) + (P)->roff[j_];                                              \
        for (int64_t i_ = 0; i_ < (P)->rin; i_++) {                                                \
            const SCALAR *const V = q_ + i_ * (P)->rstep;                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

/* Threads over outputs; the loop declares red_par_on_ (red_par_) before it. */
#ifdef _OPENMP
#define RED_PARALLEL_FOR_(P) _Pragma("omp parallel for schedule(static) if (red_par_on_)")
#else
#define RED_PARALLEL_FOR_(P)
#endif

/* Threads over outputs only when there are several and enough work in all. */
static inline bool
red_par_(const red_plan *p)
{
    return p->nout > 1 && (double)p->nout * (double)(p->nred + 1) > OPS_GRAIN_SIZE;
}

/* ---- pairwise summation ------------------------------------------------------------ */

#define RED_DEFINE_PAIRWISE_(ACC)                                                                  \
    typedef struct {                                                                               \
        ACC lev[64];                                                                               \
        ACC blk;                                                                                   \
        int64_t inblk;                                                                             \
        uint64_t nblk;                                                                             \
    } pw_##ACC;                                                                                    \
    static inline void pw_init_##ACC(pw_##ACC *s)                                                  \
    {                                                                                              \
        s->blk = 0;                                                                                \
        s->inblk = 0;                                                                              \
        s->nblk = 0;                                                                               \
    }                                                                                              \
    static inline void pw_add_##ACC(pw_##ACC *s, ACC v)                                            \
    {                                                                                              \
        s->blk += v;                                                                               \
        if (++s->inblk < RED_BLOCK)                                                                \
            return;                                                                                \
        ACC c = s->blk;                                                                            \
        uint64_t n = s->nblk++;                                                                    \
        int k = 0;                                                                                 \
        for (; n & 1; n >>= 1, k++)                                                                \
            c = s->lev[k] + c;                                                                     \
        s->lev[k] = c;                                                                             \
        s->blk = 0;                                                                                \
        s->inblk = 0;                                                                              \
    }                                                                                              \
    static inline ACC pw_total_##ACC(const pw_##ACC *s)                                            \
    {                                                                                              \
        ACC t = s->blk;                                                                            \
        uint64_t n = s->nblk;                                                                      \
        for (int k = 0; n != 0; n >>= 1, k++)                                                      \
            if (n & 1)                                                                             \
                t = s->lev[k] + t;                                                                 \
        return t;                                                                                  \
    }

RED_DEFINE_PAIRWISE_(float)
RED_DEFINE_PAIRWISE_(double)

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
#define RED_ISNAN_(x) ((x) != (x))
#define RED_NONAN_(x) false
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

/* all/any of any dtype into bool or uint8 (the truth of each element). */
#define RED_DEFINE_TRUTH_(SUF, T)                                                                  \
    static void red_truth_##SUF(red_kind kind, const red_plan *p, const char *src, char *dst)      \
    {                                                                                              \
        const T *const in = (const T *)src;                                                        \
        const bool red_par_on_ = red_par_(p);                                                      \
        (void)red_par_on_;                                                                         \
        RED_PARALLEL_FOR_(p)                                                                       \
        for (int64_t o = 0; o < p->nout; o++) {                                                    \
            const T *const b = in + red_base(p, o);                                                \
            bool r = kind == RED_ALL;                                                              \
            if (kind == RED_ALL) {                                                                 \
                RED_EACH(p, b, T, v, r = r && OPS_LOAD(v) != 0;)                                   \
            } else {                                                                               \
                RED_EACH(p, b, T, v, r = r || OPS_LOAD(v) != 0;)                                   \
            }                                                                                      \
            dst[o] = (char)r; /* bool and uint8 both hold 0 or 1 in one byte */                    \
        }                                                                                          \
    }

RED_DEFINE_TRUTH_(b, bool)
RED_DEFINE_TRUTH_(u8, uint8_t)
RED_DEFINE_TRUTH_(i8, int8_t)
RED_DEFINE_TRUTH_(i16, int16_t)
RED_DEFINE_TRUTH_(i32, int32_t)
RED_DEFINE_TRUTH_(i64, int64_t)
RED_DEFINE_TRUTH_(f16, ops_half)
RED_DEFINE_TRUTH_(bf16, ops_bfloat16)
RED_DEFINE_TRUTH_(f32, float)
RED_DEFINE_TRUTH_(f64, double)

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
#define RED_OUTER_TILE 2048
/* Fewer outputs than this: the column walk is as good. */
#define RED_OUTER_MIN_OUT 16

/* True when the plan's outputs are the inner contiguous elements of each reduced row. */
static bool
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
static int
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
                    if (kind == RED_NANSUM) {                                                      \
                        for (int64_t c = 0; c < n; c++) {                                          \
                            const ACC x = OPS_LOAD(&row[c]);                                       \
                            acc[c] += x == x ? x : (ACC)0;                                         \
                        }                                                                          \
                    } else {                                                                       \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] += (ACC)OPS_LOAD(&row[c]);                                      \
                    }                                                                              \
                    if (++inblk == RED_BLOCK) {                                                    \
                        uint64_t b = nblk++;                                                       \
                        int k = 0;                                                                 \
                        for (; b & 1; b >>= 1, k++) {                                              \
                            const ACC *restrict const lv = (const ACC *)ws + (k + 1) * nout + c0;  \
                            for (int64_t c = 0; c < n; c++)                                        \
                                acc[c] = lv[c] + acc[c];                                           \
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
                        const ACC *restrict const lv = (const ACC *)ws + (k + 1) * nout + c0;      \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = lv[c] + acc[c];                                               \
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
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] *= (ACC)OPS_LOAD(&row[c]);                                      \
                    } else if (kind == RED_AMAX) {                                                 \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = OPS_RED_MAX_NAN(acc[c], (ACC)OPS_LOAD(&row[c]));              \
                    } else if (kind == RED_AMINMAX) {                                              \
                        for (int64_t c = 0; c < n; c++) {                                          \
                            const ACC x = OPS_LOAD(&row[c]);                                       \
                            acc[c] = OPS_RED_MIN_NAN(acc[c], x);                                   \
                            hi[c] = OPS_RED_MAX_NAN(hi[c], x);                                     \
                        }                                                                          \
                    } else {                                                                       \
                        for (int64_t c = 0; c < n; c++)                                            \
                            acc[c] = OPS_RED_MIN_NAN(acc[c], (ACC)OPS_LOAD(&row[c]));              \
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
static bool
red_outer_kind(red_kind kind)
{
    return kind == RED_SUM || kind == RED_NANSUM || kind == RED_MEAN || kind == RED_PROD || kind == RED_AMAX ||
           kind == RED_AMIN || kind == RED_MAXDIM || kind == RED_MINDIM || kind == RED_AMINMAX;
}

/* The outer path for kind on dtype dt; false when it has none (the column walk runs). */
static bool
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

/* ---- the CUDA backend's loops ---------------------------------------------------------- */

/* The drivers below are device-generic: for a tensor on a CUDA device only these
 * calls differ (kernels/cuda/reduce.cu, softmax.cu, scan.cu); a CPU-only build has no
 * such tensors, and says so should one reach here. */
#ifndef OPS_WITH_CUDA
static ops_status
red_no_cuda(const char *op)
{
    return ops_fail(OPS_ERR_DEVICE, "%s: libops was built without CUDA support", op);
}
#endif

static ops_status
red_run_device(const char *op, red_kind kind, const ops_tensor *src, const bool *mask, double arg, ops_tensor *res,
               ops_tensor *res2)
{
#ifdef OPS_WITH_CUDA
    return ops_cuda_reduce_run(op, kind, src, mask, arg, res, res2);
#else
    (void)kind, (void)src, (void)mask, (void)arg, (void)res, (void)res2;
    return red_no_cuda(op);
#endif
}

/* ---- shared driver pieces ------------------------------------------------------------ */

/* Copies the contiguous elements at src into t's strided elements (same dtype). */
static void
red_store_strided(ops_tensor *t, const char *src)
{
    const size_t isz = ops_dtype_itemsize(t->dtype);
    const int64_t n = ops_shape_numel(t->ndim, t->sizes);
    char *base = (char *)ops_tensor_data_ptr(t);
    int64_t idx[OPS_MAX_DIMS] = {0};
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        memcpy(base + off * (int64_t)isz, src + (size_t)i * isz, isz);
        for (int d = t->ndim - 1; d >= 0; d--) {
            idx[d]++;
            off += t->strides[d];
            if (idx[d] < t->sizes[d])
                break;
            off -= idx[d] * t->strides[d];
            idx[d] = 0;
        }
    }
}

/* Checks an out= tensor before anything is allocated: its dtype (when want is not
 * OPS_DTYPE_NONE) and that its elements do not share memory. */
static ops_status
red_check_out(const char *op, const ops_tensor *out, ops_dtype want, int nd, const int64_t *sizes)
{
    if (want != OPS_DTYPE_NONE && out->dtype != want)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                        ops_dtype_name(want), ops_dtype_name(out->dtype));
    const bool same = out->ndim == nd && memcmp(out->sizes, sizes, (size_t)nd * sizeof(int64_t)) == 0;
    if (same && ops_tensor_has_internal_overlap(out))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                        "single memory location. Please clone() the tensor before performing the operation.",
                        op);
    return OPS_OK;
}

/* self converted to dtype dt (a new contiguous tensor), or a new reference to self
 * when it already has dt and contiguous is false. */
static ops_tensor *
red_convert(const char *op, const ops_tensor *self, ops_dtype dt, bool contiguous)
{
    if (self->dtype == dt && !contiguous) {
        return ops_tensor_retain(self);
    }
    ops_tensor *t = ops_tensor_new(op, self->ndim, self->sizes, NULL, dt, ops_tensor_device(self));
    if (t == NULL)
        return NULL;
    if (ops_copy_(t, self, false) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

/* The contiguous r's elements into out's (same shape and dtype, same device).  On the
 * CPU this cannot fail; on a CUDA device only a CUDA error can make it fail. */
static ops_status
red_write_values(const char *op, ops_tensor *out, const ops_tensor *r)
{
    if (ops_tensor_device(r).type == OPS_CPU) {
        red_store_strided(out, (const char *)ops_tensor_data_ptr(r));
        return OPS_OK;
    }
#ifdef OPS_WITH_CUDA
    return ops_cuda_copy_same_device(op, out, r);
#else
    return ops_fail(OPS_ERR_DEVICE, "%s: libops was built without CUDA support", op);
#endif
}

/* Writes the contiguous result r into out (resized if its shape differs): the last
 * step, after every allocation but out's own resize. */
static ops_status
red_finish_out(const char *op, ops_tensor *out, const ops_tensor *r)
{
    const bool same = out->ndim == r->ndim && memcmp(out->sizes, r->sizes, (size_t)r->ndim * sizeof(int64_t)) == 0;
    ops_status st;
    if (!same && (st = ops_tensor_resize_(op, out, r->ndim, r->sizes)) != OPS_OK)
        return st;
    if ((st = red_write_values(op, out, r)) != OPS_OK)
        return st;
    ops_tensor_bump_version(out);
    return OPS_OK;
}

/* Writes r0 into out0 and r1 into out1 (the results of an op with two returns): both
 * are resized before either is written, and when the second resize fails the first
 * out's geometry is put back, so a failure leaves both as they were. */
static ops_status
red_finish_out2(const char *op, ops_tensor *out0, const ops_tensor *r0, ops_tensor *out1, const ops_tensor *r1)
{
    const int nd0 = out0->ndim;
    const int64_t off0 = out0->offset;
    int64_t sz0[OPS_MAX_DIMS], st0[OPS_MAX_DIMS];
    memcpy(sz0, out0->sizes, sizeof sz0);
    memcpy(st0, out0->strides, sizeof st0);
    ops_status st;
    if (!(out0->ndim == r0->ndim && memcmp(out0->sizes, r0->sizes, (size_t)r0->ndim * sizeof(int64_t)) == 0) &&
        (st = ops_tensor_resize_(op, out0, r0->ndim, r0->sizes)) != OPS_OK)
        return st;
    if (!(out1->ndim == r1->ndim && memcmp(out1->sizes, r1->sizes, (size_t)r1->ndim * sizeof(int64_t)) == 0) &&
        (st = ops_tensor_resize_(op, out1, r1->ndim, r1->sizes)) != OPS_OK) {
        out0->ndim = nd0;
        out0->offset = off0;
        memcpy(out0->sizes, sz0, sizeof sz0);
        memcpy(out0->strides, st0, sizeof st0);
        return st;
    }
    if ((st = red_write_values(op, out0, r0)) != OPS_OK || (st = red_write_values(op, out1, r1)) != OPS_OK)
        return st;
    ops_tensor_bump_version(out0);
    ops_tensor_bump_version(out1);
    return OPS_OK;
}

/* Checks the two outs of an op with two returns: each as red_check_out, and that they
 * do not share memory. */
static ops_status
red_check_out2(const char *op, const ops_tensor *out0, ops_dtype want0, const ops_tensor *out1, ops_dtype want1,
               int nd, const int64_t *sizes)
{
    ops_status st;
    if ((st = red_check_out(op, out0, want0, nd, sizes)) != OPS_OK ||
        (st = red_check_out(op, out1, want1, nd, sizes)) != OPS_OK)
        return st;
    if (ops_tensor_numel(out0) > 0 && ops_tensor_numel(out1) > 0 && ops_tensor_may_overlap(out0, out1))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: some elements of the input tensor and the written-to tensor "
                        "refer to a single memory location. Please clone() the tensor before performing the "
                        "operation.",
                        op);
    return OPS_OK;
}

/* ---- the reduction driver ------------------------------------------------------------ */

/* The CPU loops of a plan with outputs: the runs' offsets (into p->roff, which the
 * caller frees), the outer path's workspace when it applies, then the reduction of
 * src into res (and res2). */
static ops_status
red_run_host(const char *op, red_kind kind, red_plan *p, const ops_tensor *src, const bool *mask, ops_tensor *res,
             ops_tensor *res2)
{
    void *ws = NULL;
    if (!red_plan_offsets(op, p, src, mask))
        return ops_last_status();
    if (red_outer_kind(kind) && red_outer_ok(p)) {
        /* the outer path's accumulator and level rows, 8 bytes covering every ACC */
        size_t rows = (size_t)red_outer_levels(p) + 1;
        if (kind == RED_AMINMAX && rows < 2)
            rows = 2; /* the minima and the maxima */
        if ((ws = ops_host_malloc_array(p->nout, rows * 8)) == NULL)
            return ops_fail(OPS_ERR_OOM, "%s: out of memory (a workspace of %zu rows of %" PRId64 " entries)", op,
                            rows, p->nout);
    }
    char *const dst = (char *)ops_tensor_data_ptr(res);
    char *const dst2 = res2 != NULL ? (char *)ops_tensor_data_ptr(res2) : NULL;
    const char *const in = (const char *)ops_tensor_data_ptr(src);
    if (!(ws != NULL && red_run_outer(kind, src->dtype, p, in, dst, dst2, ws)))
        red_run(kind, src->dtype, p, in, dst, dst2);
    ops_host_free(ws);
    return OPS_OK;
}

/* kind over dims (NULL: all) of self, into out (NULL: a new tensor in *result); arg is
 * var/std's correction or norm's order.  Kinds with a second result (var_mean's means
 * with RED_VAR/RED_STD, max.dim's indices) write it into out2 or *result2 when either
 * is given. */
static ops_status
reduce_core2(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
             ops_dtype dtype, double arg, ops_tensor *out, ops_tensor *out2, ops_tensor **result,
             ops_tensor **result2)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *res = NULL, *res2 = NULL;
    red_plan p;
    bool mask[OPS_MAX_DIMS];
    const bool two = out2 != NULL || result2 != NULL;
    p.roff = NULL;
    p.arg = arg;

    if ((st = red_dims(op, self->ndim, dims, mask)) != OPS_OK)
        return st;
    red_plan_geometry(&p, self, mask, keepdim);

    /* the dtype computed in (cd) and the result's (rd) */
    ops_dtype cd = self->dtype, rd;
    switch (kind) {
    case RED_SUM:
    case RED_NANSUM:
    case RED_PROD:
        if (dtype != OPS_DTYPE_NONE)
            cd = dtype;
        else if (out != NULL)
            cd = out->dtype;
        else if (ops_dtype_is_integral(self->dtype, true))
            cd = OPS_INT64;
        rd = cd;
        break;
    case RED_MEAN:
        cd = dtype != OPS_DTYPE_NONE ? dtype : out != NULL ? out->dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: could not infer output dtype. %s dtype must be either a floating point or complex "
                            "dtype. Got: %s",
                            op, dtype != OPS_DTYPE_NONE ? "Optional" : "Input", ops_dtype_name(cd));
        rd = cd;
        break;
    case RED_LSE:
        cd = ops_dtype_is_floating(self->dtype) ? self->dtype : OPS_FLOAT32;
        if (out != NULL) {
            if (!ops_dtype_is_floating(out->dtype))
                return ops_fail(OPS_ERR_DTYPE, "%s: Expected floating point type for result tensor, but got: %s",
                                op, ops_dtype_name(out->dtype));
            cd = out->dtype;
        }
        rd = cd;
        break;
    case RED_NANMEAN:
        if (!ops_dtype_is_floating(self->dtype))
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: expected input to have floating point or complex dtype but got %s", op,
                            ops_dtype_name(self->dtype));
        cd = dtype != OPS_DTYPE_NONE ? dtype : out != NULL ? out->dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                            ops_dtype_name(self->dtype), ops_dtype_name(cd));
        rd = cd;
        break;
    case RED_VAR:
    case RED_STD:
        if (!ops_dtype_is_floating(self->dtype))
            return ops_fail(OPS_ERR_DTYPE, "%s: std and var only support floating point and complex dtypes, but got %s",
                            op, ops_dtype_name(self->dtype));
        rd = cd;
        break;
    case RED_ARGMAX:
    case RED_ARGMIN:
        rd = OPS_INT64;
        break;
    case RED_NORM: /* the dtypes were checked by norm_impl */
        cd = dtype != OPS_DTYPE_NONE ? dtype : self->dtype;
        rd = cd;
        break;
    case RED_MAXDIM:
    case RED_MINDIM:
    case RED_AMINMAX:
        rd = cd;
        break;
    case RED_AMAX:
    case RED_AMIN:
        rd = cd;
        if (out != NULL && out->dtype != cd)
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: Expected the dtype for input and out to match, but got %s for input's dtype and "
                            "%s for out's dtype.",
                            op, ops_dtype_name(cd), ops_dtype_name(out->dtype));
        break;
    default: /* all, any */
        rd = self->dtype == OPS_UINT8 ? OPS_UINT8 : OPS_BOOL;
        if (out != NULL && out->dtype != rd)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                            ops_dtype_name(rd), ops_dtype_name(out->dtype));
        break;
    }
    if (kind == RED_MAXDIM || kind == RED_MINDIM) {
        for (int d = 0; d < self->ndim; d++)
            if (mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", op, d);
    }
    if (kind == RED_AMAX || kind == RED_AMIN || kind == RED_ARGMAX || kind == RED_ARGMIN) {
        if (dims == NULL || dims->len == 0) {
            if (ops_shape_numel(self->ndim, self->sizes) == 0)
                return ops_fail(OPS_ERR_INDEX,
                                "%s: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                "reduction dim with the 'dim' argument.",
                                op);
        } else {
            for (int d = 0; d < self->ndim; d++)
                if (mask[d] && self->sizes[d] == 0)
                    return ops_fail(OPS_ERR_INDEX, "%s: Expected reduction dim %d to have non-zero size.", op, d);
        }
    }
    if (kind == RED_AMINMAX) {
        if (dims == NULL && ops_shape_numel(self->ndim, self->sizes) == 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot compute aminmax over an empty dimension as the operation has no identity.", op);
        for (int d = 0; d < self->ndim; d++)
            if (mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_VALUE, "%s: Expected reduction dim %d to have non-zero size.", op, d);
    }
    const ops_dtype rd2 = kind == RED_MAXDIM || kind == RED_MINDIM ? OPS_INT64 : rd;
    if (out2 != NULL) {
        if ((st = red_check_out2(op, out, rd, out2, rd2, p.ond, p.osz)) != OPS_OK)
            return st;
    } else if (out != NULL && (st = red_check_out(op, out, rd, p.ond, p.osz)) != OPS_OK) {
        return st;
    }

    if ((src = red_convert(op, self, kind == RED_ALL || kind == RED_ANY ? self->dtype : cd, false)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    red_plan_geometry(&p, src, mask, keepdim);
    const ops_device dev = ops_tensor_device(self);
    if ((res = ops_tensor_new(op, p.ond, p.osz, NULL, rd, dev)) == NULL ||
        (two && (res2 = ops_tensor_new(op, p.ond, p.osz, NULL, rd2, dev)) == NULL)) {
        st = ops_last_status();
        goto done;
    }
    if (dev.type != OPS_CPU)
        st = red_run_device(op, kind, src, mask, p.arg, res, res2);
    else if (p.nout > 0)
        st = red_run_host(op, kind, &p, src, mask, res, res2);
    if (st != OPS_OK)
        goto done;
    if (out2 != NULL) {
        st = red_finish_out2(op, out, res, out2, res2);
    } else if (out != NULL) {
        st = red_finish_out(op, out, res);
    } else {
        *result = res;
        res = NULL;
        if (two) {
            *result2 = res2;
            res2 = NULL;
        }
    }
done:
    ops_host_free(p.roff);
    ops_tensor_release(src);
    ops_tensor_release(res);
    ops_tensor_release(res2);
    return st;
}

/* reduce_core2 for the ops with one result. */
static ops_status
reduce_core(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
            ops_dtype dtype, double arg, ops_tensor *out, ops_tensor **result)
{
    return reduce_core2(op, kind, self, dims, keepdim, dtype, arg, out, NULL, result, NULL);
}

/* reduce_core for the ops without a correction. */
static ops_status
reduce_impl(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
            ops_dtype dtype, ops_tensor *out, ops_tensor **result)
{
    return reduce_core(op, kind, self, dims, keepdim, dtype, 1.0, out, result);
}

static ops_tensor *
reduce_new(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
           ops_dtype dtype)
{
    ops_tensor *r = NULL;
    reduce_impl(op, kind, self, dims, keepdim, dtype, NULL, &r);
    return r;
}

/* ---- entry points ---------------------------------------------------------------------- */

ops_tensor *
sum_cpu(const ops_tensor *self, ops_dtype dtype)
{
    return reduce_new("sum", RED_SUM, self, NULL, false, dtype);
}

ops_status
sum_out_cpu(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("sum", RED_SUM, self, NULL, false, dtype, out, NULL);
}

ops_tensor *
sum_dim_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("sum", RED_SUM, self, dim, keepdim, dtype);
}

ops_status
sum_dim_out_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("sum", RED_SUM, self, dim, keepdim, dtype, out, NULL);
}

ops_tensor *
nansum_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("nansum", RED_NANSUM, self, dim, keepdim, dtype);
}

ops_status
nansum_out_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("nansum", RED_NANSUM, self, dim, keepdim, dtype, out, NULL);
}

ops_tensor *
mean_cpu(const ops_tensor *self, ops_dtype dtype)
{
    return reduce_new("mean", RED_MEAN, self, NULL, false, dtype);
}

ops_status
mean_out_cpu(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("mean", RED_MEAN, self, NULL, false, dtype, out, NULL);
}

ops_tensor *
mean_dim_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("mean", RED_MEAN, self, dim, keepdim, dtype);
}

ops_status
mean_dim_out_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("mean", RED_MEAN, self, dim, keepdim, dtype, out, NULL);
}

ops_tensor *
prod_cpu(const ops_tensor *self, ops_dtype dtype)
{
    return reduce_new("prod", RED_PROD, self, NULL, false, dtype);
}

ops_status
prod_out_cpu(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("prod", RED_PROD, self, NULL, false, dtype, out, NULL);
}

ops_tensor *
prod_dim_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_dtype dtype)
{
    const ops_int_list d = {&dim, 1};
    return reduce_new("prod", RED_PROD, self, &d, keepdim, dtype);
}

ops_status
prod_dim_out_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    const ops_int_list d = {&dim, 1};
    return reduce_impl("prod", RED_PROD, self, &d, keepdim, dtype, out, NULL);
}

ops_tensor *
amax_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    return reduce_new("amax", RED_AMAX, self, &dim, keepdim, OPS_DTYPE_NONE);
}

ops_status
amax_out_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return reduce_impl("amax", RED_AMAX, self, &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
amin_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    return reduce_new("amin", RED_AMIN, self, &dim, keepdim, OPS_DTYPE_NONE);
}

ops_status
amin_out_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return reduce_impl("amin", RED_AMIN, self, &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
all_cpu(const ops_tensor *self)
{
    return reduce_new("all", RED_ALL, self, NULL, false, OPS_DTYPE_NONE);
}

ops_status
all_out_cpu(const ops_tensor *self, ops_tensor *out)
{
    return reduce_impl("all", RED_ALL, self, NULL, false, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
all_dim_cpu(const ops_tensor *self, int64_t dim, bool keepdim)
{
    const ops_int_list d = {&dim, 1};
    return reduce_new("all", RED_ALL, self, &d, keepdim, OPS_DTYPE_NONE);
}

ops_status
all_dim_out_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *out)
{
    const ops_int_list d = {&dim, 1};
    return reduce_impl("all", RED_ALL, self, &d, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
any_cpu(const ops_tensor *self)
{
    return reduce_new("any", RED_ANY, self, NULL, false, OPS_DTYPE_NONE);
}

ops_status
any_out_cpu(const ops_tensor *self, ops_tensor *out)
{
    return reduce_impl("any", RED_ANY, self, NULL, false, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
any_dim_cpu(const ops_tensor *self, int64_t dim, bool keepdim)
{
    const ops_int_list d = {&dim, 1};
    return reduce_new("any", RED_ANY, self, &d, keepdim, OPS_DTYPE_NONE);
}

ops_status
any_dim_out_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *out)
{
    const ops_int_list d = {&dim, 1};
    return reduce_impl("any", RED_ANY, self, &d, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
logsumexp_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    return reduce_new("logsumexp", RED_LSE, self, &dim, keepdim, OPS_DTYPE_NONE);
}

ops_status
logsumexp_out_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return reduce_impl("logsumexp", RED_LSE, self, &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
nanmean_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("nanmean", RED_NANMEAN, self, dim, keepdim, dtype);
}

ops_status
nanmean_out_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("nanmean", RED_NANMEAN, self, dim, keepdim, dtype, out, NULL);
}

/* argmax/argmin: dim NULL reduces every dim (the flat index). */
static ops_status
arg_impl(const char *op, red_kind kind, const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out,
         ops_tensor **result)
{
    const ops_int_list d = {dim, 1};
    return reduce_impl(op, kind, self, dim != NULL ? &d : NULL, keepdim, OPS_DTYPE_NONE, out, result);
}

ops_tensor *
argmax_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    ops_tensor *r = NULL;
    arg_impl("argmax", RED_ARGMAX, self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
argmax_out_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out)
{
    return arg_impl("argmax", RED_ARGMAX, self, dim, keepdim, out, NULL);
}

ops_tensor *
argmin_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    ops_tensor *r = NULL;
    arg_impl("argmin", RED_ARGMIN, self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
argmin_out_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out)
{
    return arg_impl("argmin", RED_ARGMIN, self, dim, keepdim, out, NULL);
}

/* var/std: correction None is 1 (Bessel's). */
static double
red_correction(const ops_scalar *correction)
{
    return correction != NULL ? ops_scalar_to_double(*correction) : 1.0;
}

ops_tensor *
var_correction_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim)
{
    ops_tensor *r = NULL;
    reduce_core("var", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL, &r);
    return r;
}

ops_status
var_correction_out_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                       ops_tensor *out)
{
    return reduce_core("var", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out, NULL);
}

ops_tensor *
std_correction_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim)
{
    ops_tensor *r = NULL;
    reduce_core("std", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL, &r);
    return r;
}

ops_status
std_correction_out_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                       ops_tensor *out)
{
    return reduce_core("std", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out, NULL);
}

/* ---- max, min: whole tensor, and over one dim with indices ------------------------- */

/* max()/min() of every element; out= may have any dtype the result can be cast to. */
static ops_status
minmax_all(const char *op, red_kind kind, const ops_tensor *self, ops_tensor *out, ops_tensor **result)
{
    if (ops_shape_numel(self->ndim, self->sizes) == 0)
        return ops_fail(OPS_ERR_INDEX,
                        "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                        "reduction dim with the 'dim' argument.",
                        op);
    if (out == NULL || out->dtype == self->dtype)
        return reduce_impl(op, kind, self, NULL, false, OPS_DTYPE_NONE, out, result);
    if (!ops_can_cast(self->dtype, out->dtype))
        return ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(out->dtype));
    ops_tensor *r = NULL, *c = NULL;
    ops_status st = reduce_impl(op, kind, self, NULL, false, OPS_DTYPE_NONE, NULL, &r);
    if (st == OPS_OK && (c = red_convert(op, r, out->dtype, false)) == NULL)
        st = ops_last_status();
    if (st == OPS_OK)
        st = red_finish_out(op, out, c);
    ops_tensor_release(r);
    ops_tensor_release(c);
    return st;
}

ops_tensor *
max_cpu(const ops_tensor *self)
{
    ops_tensor *r = NULL;
    minmax_all("max", RED_AMAX, self, NULL, &r);
    return r;
}

ops_status
max_unary_out_cpu(const ops_tensor *self, ops_tensor *out)
{
    return minmax_all("max", RED_AMAX, self, out, NULL);
}

ops_tensor *
min_cpu(const ops_tensor *self)
{
    ops_tensor *r = NULL;
    minmax_all("min", RED_AMIN, self, NULL, &r);
    return r;
}

ops_status
min_unary_out_cpu(const ops_tensor *self, ops_tensor *out)
{
    return minmax_all("min", RED_AMIN, self, out, NULL);
}

/* max.dim/min.dim: values (self's dtype) and int64 indices along dim. */
static ops_status
minmax_dim(const char *op, red_kind kind, const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *values_out,
           ops_tensor *indices_out, ops_tensor **values, ops_tensor **indices)
{
    const ops_int_list d = {&dim, 1};
    return reduce_core2(op, kind, self, &d, keepdim, OPS_DTYPE_NONE, 0.0, values_out, indices_out, values, indices);
}

ops_status
max_dim_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, ops_tensor **indices)
{
    return minmax_dim("max", RED_MAXDIM, self, dim, keepdim, NULL, NULL, values, indices);
}

ops_status
max_dim_max_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *max, ops_tensor *max_values)
{
    /* PyTorch's names: max holds the values, max_values the indices */
    return minmax_dim("max", RED_MAXDIM, self, dim, keepdim, max, max_values, NULL, NULL);
}

ops_status
min_dim_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, ops_tensor **indices)
{
    return minmax_dim("min", RED_MINDIM, self, dim, keepdim, NULL, NULL, values, indices);
}

ops_status
min_dim_min_cpu(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *min, ops_tensor *min_indices)
{
    return minmax_dim("min", RED_MINDIM, self, dim, keepdim, min, min_indices, NULL, NULL);
}

/* ---- aminmax --------------------------------------------------------------------------- */

/* The minimum and the maximum in one pass over dim (NULL: every element); NaN
 * propagates into both, as PyTorch's (and NumPy's amin/amax). */
static ops_status
aminmax_impl(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out_min, ops_tensor *out_max,
             ops_tensor **min, ops_tensor **max)
{
    const ops_int_list d = {dim, 1};
    return reduce_core2("aminmax", RED_AMINMAX, self, dim != NULL ? &d : NULL, keepdim, OPS_DTYPE_NONE, 0.0, out_min,
                        out_max, min, max);
}

ops_status
aminmax_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor **min, ops_tensor **max)
{
    return aminmax_impl(self, dim, keepdim, NULL, NULL, min, max);
}

ops_status
aminmax_out_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *min, ops_tensor *max)
{
    return aminmax_impl(self, dim, keepdim, min, max, NULL, NULL);
}

/* ---- var_mean, std_mean ---------------------------------------------------------------- */

ops_status
var_mean_correction_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                        ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("var_mean", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL,
                        NULL, result0, result1);
}

ops_status
var_mean_correction_out_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction,
                            bool keepdim, ops_tensor *out0, ops_tensor *out1)
{
    return reduce_core2("var_mean", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out0,
                        out1, NULL, NULL);
}

ops_status
var_mean_cpu(const ops_tensor *self, bool unbiased, ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("var_mean", RED_VAR, self, NULL, false, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

ops_status
var_mean_dim_cpu(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor **result0,
                 ops_tensor **result1)
{
    return reduce_core2("var_mean", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

ops_status
std_mean_correction_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                        ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("std_mean", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL,
                        NULL, result0, result1);
}

ops_status
std_mean_correction_out_cpu(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction,
                            bool keepdim, ops_tensor *out0, ops_tensor *out1)
{
    return reduce_core2("std_mean", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out0,
                        out1, NULL, NULL);
}

ops_status
std_mean_cpu(const ops_tensor *self, bool unbiased, ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("std_mean", RED_STD, self, NULL, false, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

ops_status
std_mean_dim_cpu(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor **result0,
                 ops_tensor **result1)
{
    return reduce_core2("std_mean", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

/* ---- norm, frobenius_norm, linalg_vector_norm ------------------------------------------ */

/* The vector norm of order ord over dims (NULL or empty: all) in dtype (NONE: self's),
 * with PyTorch's checks: floating self, a floating dtype self converts to without
 * narrowing, and no inf or negative order over nothing (those have no identity).
 * linalg picks linalg.vector_norm's wording over norm's. */
static ops_status
norm_impl(const char *op, bool linalg, const ops_tensor *self, double ord, const ops_int_list *dims, bool keepdim,
          ops_dtype dtype, ops_tensor *out, ops_tensor **result)
{
    if (!ops_dtype_is_floating(self->dtype))
        return linalg ? ops_fail(OPS_ERR_DTYPE, "%s: Expected a floating point or complex tensor as input. Got %s",
                                 op, ops_dtype_name(self->dtype))
                      : ops_fail(OPS_ERR_DTYPE,
                                 "%s: input dtype should be either floating point or complex. Got %s instead.", op,
                                 ops_dtype_name(self->dtype));
    if (dtype != OPS_DTYPE_NONE) {
        if (!ops_dtype_is_floating(dtype))
            return linalg ? ops_fail(OPS_ERR_DTYPE, "%s: dtype should be floating point or complex, but got %s", op,
                                     ops_dtype_name(dtype))
                          : ops_fail(OPS_ERR_DTYPE,
                                     "%s: the desired output dtype should be either floating point or complex. Got "
                                     "%s instead.",
                                     op, ops_dtype_name(dtype));
        if (ops_promote_types(self->dtype, dtype) != dtype)
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: the dtype of the input (%s) should be convertible without narrowing to the "
                            "specified dtype (%s)",
                            op, ops_dtype_name(self->dtype), ops_dtype_name(dtype));
    }
    if (ops_shape_numel(self->ndim, self->sizes) == 0 && (ord < 0 || ord == INFINITY)) {
        if (dims == NULL || dims->len == 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot compute the %g norm on an empty tensor because the operation does not "
                            "have an identity",
                            op, ord);
        for (int64_t i = 0; i < dims->len; i++) {
            int64_t d = dims->data[i];
            if (!ops_wrap_dim(op, "dim", &d, self->ndim))
                return ops_last_status();
            if (self->ndim > 0 && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_VALUE,
                                "%s: cannot compute the %g norm on the dimension %lld because this dimension is "
                                "empty and the operation does not have an identity",
                                op, ord, (long long)d);
        }
    }
    return reduce_core(op, RED_NORM, self, dims, keepdim, dtype, ord, out, result);
}

/* norm's p: None is 2. */
static double
norm_order(const ops_scalar *p)
{
    return p != NULL ? ops_scalar_to_double(*p) : 2.0;
}

ops_tensor *
norm_scalar_cpu(const ops_tensor *self, ops_scalar p)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, ops_scalar_to_double(p), NULL, false, OPS_DTYPE_NONE, NULL, &r);
    return r;
}

ops_status
norm_scalar_out_cpu(const ops_tensor *self, ops_scalar p, ops_tensor *out)
{
    return norm_impl("norm", false, self, ops_scalar_to_double(p), NULL, false, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
norm_scalaropt_dim_cpu(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, norm_order(p), &dim, keepdim, OPS_DTYPE_NONE, NULL, &r);
    return r;
}

ops_status
norm_out_cpu(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return norm_impl("norm", false, self, norm_order(p), &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
norm_scalaropt_dim_dtype_cpu(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim,
                             ops_dtype dtype)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, norm_order(p), &dim, keepdim, dtype, NULL, &r);
    return r;
}

ops_status
norm_dtype_out_cpu(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_dtype dtype,
                   ops_tensor *out)
{
    return norm_impl("norm", false, self, norm_order(p), &dim, keepdim, dtype, out, NULL);
}

ops_tensor *
norm_scalaropt_dtype_cpu(const ops_tensor *self, const ops_scalar *p, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, norm_order(p), NULL, false, dtype, NULL, &r);
    return r;
}

ops_status
norm_scalaropt_dtype_out_cpu(const ops_tensor *self, const ops_scalar *p, ops_dtype dtype, ops_tensor *out)
{
    return norm_impl("norm", false, self, norm_order(p), NULL, false, dtype, out, NULL);
}

/* frobenius_norm: the 2-norm over at most two dims. */
static ops_status
frobenius_impl(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out, ops_tensor **result)
{
    if (dim.len > 2)
        return ops_fail(OPS_ERR_VALUE,
                        "frobenius_norm: Expected at most 2 dimensions, but got %lld dimensions instead.",
                        (long long)dim.len);
    return norm_impl("frobenius_norm", false, self, 2.0, &dim, keepdim, OPS_DTYPE_NONE, out, result);
}

ops_tensor *
frobenius_norm_dim_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    ops_tensor *r = NULL;
    frobenius_impl(self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
frobenius_norm_out_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return frobenius_impl(self, dim, keepdim, out, NULL);
}

/* norm.str, torch.norm(self, 'fro' | 'nuc', dim, keepdim, dtype) (a libops extension of
 * the schema; PyTorch does this in Python): 'fro' is the 2-norm over dim (None: every
 * dim), 'nuc' the nuclear norm over dim (None: a 2-D self's two dims). */
ops_tensor *
norm_str_impl(const ops_tensor *self, const char *p, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    const char *op = "norm";
    if (strcmp(p, "fro") == 0) {
        if (!ops_dtype_is_floating(self->dtype))
            return ops_fail_null(OPS_ERR_DTYPE,
                                 "%s: input dtype should be either floating point or complex. Got %s instead.", op,
                                 ops_dtype_name(self->dtype));
        return ops_linalg_vector_norm(self, OPS_SCALAR_FLOAT(2.0), dim, keepdim, dtype);
    }
    if (strcmp(p, "nuc") != 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: only valid string values of p are 'fro' and 'nuc', found '%s'", op,
                             p);
    if (dtype != OPS_DTYPE_NONE)
        return ops_fail_null(OPS_ERR_VALUE, "%s: dtype argument is not supported in nuclear norm", op);
    if (dim == NULL)
        return ops_nuclear_norm(self, keepdim);
    if (dim->len != 2) {
        char buf[OPS_SHAPE_STR_LEN];
        return ops_fail_null(OPS_ERR_VALUE, "%s: nuclear norm requires a 'dim' argument of size 2, but got dim=%s", op,
                             ops_shape_str(dim->len <= OPS_MAX_DIMS ? (int)dim->len : OPS_MAX_DIMS, dim->data, buf,
                                           sizeof buf));
    }
    return ops_nuclear_norm_dim(self, *dim, keepdim);
}

ops_tensor *
linalg_vector_norm_cpu(const ops_tensor *self, ops_scalar ord, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    norm_impl("linalg_vector_norm", true, self, ops_scalar_to_double(ord), dim, keepdim, dtype, NULL, &r);
    return r;
}

ops_status
linalg_vector_norm_out_cpu(const ops_tensor *self, ops_scalar ord, const ops_int_list *dim, bool keepdim,
                           ops_dtype dtype, ops_tensor *out)
{
    return norm_impl("linalg_vector_norm", true, self, ops_scalar_to_double(ord), dim, keepdim, dtype, out, NULL);
}

/* ---- one-dim ops: softmax, log_softmax, cumsum, cumprod, cummax, cummin -------------- */


/* Lines of len elements, inner apart, in contiguous src and dst of the same shape. */
typedef struct {
    int64_t outer, len, inner;
} dim_geom;

#ifdef _OPENMP
#define DIM_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) if (dim_par_on_)")
#else
#define DIM_PARALLEL_FOR_
#endif

static ops_status
dim_run_device(const char *op, dim_kind kind, const ops_tensor *src, const dim_geom *g, ops_tensor *res)
{
#ifdef OPS_WITH_CUDA
    if (kind == DIM_SOFTMAX || kind == DIM_LOG_SOFTMAX)
        return ops_cuda_softmax_run(op, kind == DIM_LOG_SOFTMAX, src, g->outer, g->len, g->inner, res);
    return ops_cuda_cumscan_run(op, kind == DIM_CUMPROD, src, g->outer, g->len, g->inner, res);
#else
    (void)kind, (void)src, (void)g, (void)res;
    return red_no_cuda(op);
#endif
}

static ops_status
cumext_run_device(const char *op, bool is_max, const ops_tensor *src, const dim_geom *g, ops_tensor *res,
                  ops_tensor *idx)
{
#ifdef OPS_WITH_CUDA
    return ops_cuda_cumext_run(op, is_max, src, g->outer, g->len, g->inner, res, idx);
#else
    (void)is_max, (void)src, (void)g, (void)res, (void)idx;
    return red_no_cuda(op);
#endif
}

/* Floating lines, computed in ACC (softmax) or double (scans, as PyTorch's CPU
 * acc_type of float). */
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

/* kind along dim of self, into out (NULL: a new tensor in *result). */
static ops_status
dim_impl(const char *op, dim_kind kind, const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out,
         ops_tensor **result)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *res = NULL;

    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    ops_dtype cd;
    if (kind == DIM_SOFTMAX || kind == DIM_LOG_SOFTMAX) {
        cd = dtype != OPS_DTYPE_NONE ? dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE, "%s: expected a floating point dtype, but got %s", op,
                            ops_dtype_name(cd));
        if (out != NULL && out->dtype != cd)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                            ops_dtype_name(cd), ops_dtype_name(out->dtype));
    } else {
        cd = dtype != OPS_DTYPE_NONE ? dtype
             : out != NULL         ? out->dtype
             : ops_dtype_is_integral(self->dtype, true) ? OPS_INT64
                                                         : self->dtype;
    }
    if (out != NULL && (st = red_check_out(op, out, cd, self->ndim, self->sizes)) != OPS_OK)
        return st;
    if ((src = red_convert(op, self, cd, true)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if ((res = ops_tensor_new(op, self->ndim, self->sizes, NULL, cd, ops_tensor_device(self))) == NULL) {
        st = ops_last_status();
        goto done;
    }
    dim_geom g = {1, 1, 1};
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim)
            g.outer *= self->sizes[d];
        else if (d == dim)
            g.len = self->sizes[d];
        else
            g.inner *= self->sizes[d];
    }
    if (ops_shape_numel(self->ndim, self->sizes) > 0) {
        if (ops_tensor_device(self).type == OPS_CPU)
            dim_run(kind, cd, &g, (const char *)ops_tensor_data_ptr(src), (char *)ops_tensor_data_ptr(res));
        else if ((st = dim_run_device(op, kind, src, &g, res)) != OPS_OK)
            goto done;
    }
    if (out != NULL) {
        st = red_finish_out(op, out, res);
    } else {
        *result = res;
        res = NULL;
    }
done:
    ops_tensor_release(src);
    ops_tensor_release(res);
    return st;
}

ops_tensor *
softmax_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("softmax", DIM_SOFTMAX, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
softmax_out_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("softmax", DIM_SOFTMAX, self, dim, dtype, out, NULL);
}

ops_tensor *
log_softmax_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("log_softmax", DIM_LOG_SOFTMAX, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
log_softmax_out_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("log_softmax", DIM_LOG_SOFTMAX, self, dim, dtype, out, NULL);
}

ops_tensor *
cumsum_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("cumsum", DIM_CUMSUM, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
cumsum_out_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("cumsum", DIM_CUMSUM, self, dim, dtype, out, NULL);
}

ops_tensor *
cumprod_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    dim_impl("cumprod", DIM_CUMPROD, self, dim, dtype, NULL, &r);
    return r;
}

ops_status
cumprod_out_cpu(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    return dim_impl("cumprod", DIM_CUMPROD, self, dim, dtype, out, NULL);
}

/* In-place cumsum_/cumprod_: self keeps its dtype, so a dtype= must be self's. */
static ops_status
dim_inplace(const char *op, dim_kind kind, ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (dtype != OPS_DTYPE_NONE && dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Bad in-place call: input tensor dtype %s and output tensor dtype %s should match", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(dtype));
    return dim_impl(op, kind, self, dim, dtype, self, NULL);
}

ops_status
cumsum_inplace_cpu(ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    return dim_inplace("cumsum_", DIM_CUMSUM, self, dim, dtype);
}

ops_status
cumprod_inplace_cpu(ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    return dim_inplace("cumprod_", DIM_CUMPROD, self, dim, dtype);
}

/* cummax/cummin along dim: values (self's dtype) and int64 indices, into the outs or
 * new tensors. */
static ops_status
cumext_impl(const char *op, bool is_max, const ops_tensor *self, int64_t dim, ops_tensor *values_out,
            ops_tensor *indices_out, ops_tensor **values, ops_tensor **indices)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *res = NULL, *idx = NULL;

    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (values_out != NULL &&
        (st = red_check_out2(op, values_out, self->dtype, indices_out, OPS_INT64, self->ndim, self->sizes)) != OPS_OK)
        return st;
    if ((src = red_convert(op, self, self->dtype, true)) == NULL ||
        (res = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, ops_tensor_device(self))) == NULL ||
        (idx = ops_tensor_new(op, self->ndim, self->sizes, NULL, OPS_INT64, ops_tensor_device(self))) == NULL) {
        st = ops_last_status();
        goto done;
    }
    dim_geom g = {1, 1, 1};
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim)
            g.outer *= self->sizes[d];
        else if (d == dim)
            g.len = self->sizes[d];
        else
            g.inner *= self->sizes[d];
    }
    if (ops_shape_numel(self->ndim, self->sizes) > 0) {
        if (ops_tensor_device(self).type == OPS_CPU)
            dim_cumext_run(is_max, self->dtype, &g, (const char *)ops_tensor_data_ptr(src),
                           (char *)ops_tensor_data_ptr(res), (int64_t *)ops_tensor_data_ptr(idx));
        else if ((st = cumext_run_device(op, is_max, src, &g, res, idx)) != OPS_OK)
            goto done;
    }
    if (values_out != NULL) {
        st = red_finish_out2(op, values_out, res, indices_out, idx);
    } else {
        *values = res;
        *indices = idx;
        res = idx = NULL;
    }
done:
    ops_tensor_release(src);
    ops_tensor_release(res);
    ops_tensor_release(idx);
    return st;
}

ops_status
cummax_cpu(const ops_tensor *self, int64_t dim, ops_tensor **values, ops_tensor **indices)
{
    return cumext_impl("cummax", true, self, dim, NULL, NULL, values, indices);
}

ops_status
cummax_out_cpu(const ops_tensor *self, int64_t dim, ops_tensor *values, ops_tensor *indices)
{
    return cumext_impl("cummax", true, self, dim, values, indices, NULL, NULL);
}

ops_status
cummin_cpu(const ops_tensor *self, int64_t dim, ops_tensor **values, ops_tensor **indices)
{
    return cumext_impl("cummin", false, self, dim, NULL, NULL, values, indices);
}

ops_status
cummin_out_cpu(const ops_tensor *self, int64_t dim, ops_tensor *values, ops_tensor *indices)
{
    return cumext_impl("cummin", false, self, dim, values, indices, NULL, NULL);
}

/* ---- var/std with `unbiased` (CompositeExplicitAutograd) ---------------------------------
 * PyTorch's older overloads: unbiased is correction 1, biased correction 0.  They call
 * the correction= forms through the public API, so they run on every device. */

static ops_scalar
unbiased_correction(bool unbiased)
{
    return OPS_SCALAR_INT(unbiased ? 1 : 0);
}

ops_tensor *
var_unbiased_impl(const ops_tensor *self, bool unbiased)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_var_correction(self, NULL, &c, false);
}

ops_tensor *
var_dim_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_var_correction(self, dim, &c, keepdim);
}

ops_status
var_out_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor *out)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_var_correction_out(self, dim, &c, keepdim, out);
}

ops_tensor *
std_unbiased_impl(const ops_tensor *self, bool unbiased)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_std_correction(self, NULL, &c, false);
}

ops_tensor *
std_dim_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_std_correction(self, dim, &c, keepdim);
}

ops_status
std_out_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor *out)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_std_correction_out(self, dim, &c, keepdim, out);
}

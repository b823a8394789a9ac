/* Random sampling kernels (CPU): rand, randn, randint (and .low), rand_like,
 * randn_like, randint_like (and .low_dtype), randperm, bernoulli (Tensor
 * probabilities, .out, .p, bernoulli_.float), multinomial (and .out), the in-place
 * normal_, uniform_, exponential_, random_ (and .from, .to), dropout and
 * native_dropout; the out= forms of rand, randn, randint and randperm (PyTorch's .out
 * and .generator_out overloads).
 *
 * Every op draws from a Philox4x32-10 generator (runtime/ops_random.h has the stream
 * layout): element i of a result, in row-major order, uses the words i*k .. i*k+k-1 of
 * the range the op reserved, k fixed per op and dtype (below).  So the values depend on
 * the generator's seed and offset only, never on the thread count, and a CUDA kernel
 * that computes the same block for the same element reproduces them.
 *
 *   uniform      k = 1: the top `digits` bits of one word (24 for float32, 11 for
 *                float16, 8 for bfloat16: PyTorch's rule, so u < 1 exactly in the
 *                dtype), k = 2 for float64 (53 bits); x = u * (to - from) + from.
 *   normal       Box-Muller: elements 2m and 2m + 1 are r cos(2 pi u2) and r sin(2 pi u2),
 *                r = sqrt(-2 log(1 - u1)), from the pair's words (u1, u2 24-bit: k = 1;
 *                53-bit for float64: k = 2).
 *   exponential  -log(1 - u) / lambda, u as for normal's u1 (k = 1, float64 k = 2).
 *   bernoulli    1 when w / 2^32 < p (k = 1), so p = 0 never and p = 1 always.
 *   integers     low + r % range, r one word (range <= 2^32, k = 1) or two (k = 2).
 *
 * PyTorch's argument checks and messages; a failed op writes nothing, and an op that
 * fails after reserving its range (it never does: every check and allocation comes
 * first) would only skip values. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_dispatch.h"
#include "ops_functions.h"
#include "ops_kernels.h"
#include "ops_random.h"

#ifdef _OPENMP
#define RAND_PARALLEL_FOR_ _Pragma("omp parallel for if (n >= OPS_GRAIN_SIZE) num_threads(nthreads) schedule(static)")
#else
#define RAND_PARALLEL_FOR_
#endif

/* ---- element access by dtype ------------------------------------------------------- */

static double
load_real(ops_dtype dt, const char *base, int64_t i)
{
    switch (dt) {
    case OPS_FLOAT16:
        return ops_half_to_float(((const ops_half *)base)[i]);
    case OPS_BFLOAT16:
        return ops_bfloat16_to_float(((const ops_bfloat16 *)base)[i]);
    case OPS_FLOAT32:
        return ((const float *)base)[i];
    default:
        return ((const double *)base)[i];
    }
}

/* v already in the dtype's range (integers: exact). */
static void
store_int(ops_dtype dt, char *base, int64_t i, int64_t v)
{
    switch (dt) {
    case OPS_BOOL:
        ((bool *)base)[i] = v != 0;
        break;
    case OPS_UINT8:
        ((uint8_t *)base)[i] = (uint8_t)v;
        break;
    case OPS_INT8:
        ((int8_t *)base)[i] = (int8_t)v;
        break;
    case OPS_INT16:
        ((int16_t *)base)[i] = (int16_t)v;
        break;
    case OPS_INT32:
        ((int32_t *)base)[i] = (int32_t)v;
        break;
    case OPS_INT64:
        ((int64_t *)base)[i] = v;
        break;
    case OPS_FLOAT16:
        ((ops_half *)base)[i] = ops_float_to_half((float)v);
        break;
    case OPS_BFLOAT16:
        ((ops_bfloat16 *)base)[i] = ops_float_to_bfloat16((float)v);
        break;
    case OPS_FLOAT32:
        ((float *)base)[i] = (float)v;
        break;
    default:
        ((double *)base)[i] = (double)v;
        break;
    }
}

/* floating dtypes only */
static void
store_real(ops_dtype dt, char *base, int64_t i, double v)
{
    switch (dt) {
    case OPS_FLOAT16:
        ((ops_half *)base)[i] = ops_float_to_half((float)v);
        break;
    case OPS_BFLOAT16:
        ((ops_bfloat16 *)base)[i] = ops_float_to_bfloat16((float)v);
        break;
    case OPS_FLOAT32:
        ((float *)base)[i] = (float)v;
        break;
    default:
        ((double *)base)[i] = v;
        break;
    }
}

/* Significand bits of a floating dtype (std::numeric_limits<T>::digits). */
static int
float_digits(ops_dtype dt)
{
    return dt == OPS_FLOAT16 ? 11 : dt == OPS_BFLOAT16 ? 8 : dt == OPS_FLOAT32 ? 24 : 53;
}

/* ---- distributions ------------------------------------------------------------------- */

typedef enum dist_kind {
    DIST_UNIFORM,     /* a = from, b = to */
    DIST_NORMAL,      /* a = mean, b = std */
    DIST_EXPONENTIAL, /* a = lambda */
    DIST_BERNOULLI,   /* a = p, or p[i] when p != NULL */
    DIST_INTEGER,     /* lo + r % range */
} dist_kind;

typedef struct dist {
    dist_kind kind;
    double a, b;
    int64_t lo;
    uint64_t range;
    const char *p;    /* DIST_BERNOULLI: contiguous probabilities of dtype p_dtype */
    ops_dtype p_dtype;
} dist;

/* 32-bit words per element (1, 2 or 4; see the file comment). */
static int
words_per_element(const dist *d, ops_dtype dt)
{
    const bool f64 = dt == OPS_FLOAT64;
    switch (d->kind) {
    case DIST_UNIFORM:
    case DIST_EXPONENTIAL:
    case DIST_NORMAL: /* in pairs: one Box-Muller draw makes two elements */
        return f64 ? 2 : 1;
    case DIST_BERNOULLI:
        return 1;
    default:
        return d->range > UINT64_C(0x100000000) ? 2 : 1;
    }
}

/* Runs BODY for every element e < n of the stream s, K words per element: BODY sees
 * `e` and `x`, the element's K words.  Blocks are split over threads above the grain
 * size; which thread computes a block changes nothing. */
#define GEN_BLOCKS_(K, BODY)                                                             \
    do {                                                                                 \
        const int64_t gen_nb_ = (int64_t)ops_philox_blocks_for(n, (K));                  \
        RAND_PARALLEL_FOR_                                                               \
        for (int64_t gen_b_ = 0; gen_b_ < gen_nb_; gen_b_++) {                           \
            uint32_t gen_w_[4];                                                          \
            ops_philox_block(s, (uint64_t)gen_b_, gen_w_);                               \
            for (int gen_j_ = 0; gen_j_ < 4 / (K); gen_j_++) {                           \
                const int64_t e = gen_b_ * (4 / (K)) + gen_j_;                           \
                const uint32_t *const x = gen_w_ + gen_j_ * (K);                         \
                (void)x;                                                                 \
                if (e < n) {                                                             \
                    BODY                                                                 \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    } while (0)

/* The same loop once per floating dtype: VALUE (a double or float expression of e and
 * x) is rounded into the dtype.  K32 words per element for float16, bfloat16 and
 * float32, K64 for float64. */
#define GEN_FLOATING_(K32, K64, VALUE32, VALUE64)                                        \
    switch (dt) {                                                                        \
    case OPS_FLOAT16:                                                                    \
        GEN_BLOCKS_(K32, ((ops_half *)dst)[e] = ops_float_to_half((float)(VALUE32)););   \
        break;                                                                           \
    case OPS_BFLOAT16:                                                                   \
        GEN_BLOCKS_(K32, ((ops_bfloat16 *)dst)[e] = ops_float_to_bfloat16((float)(VALUE32));); \
        break;                                                                           \
    case OPS_FLOAT32:                                                                    \
        GEN_BLOCKS_(K32, ((float *)dst)[e] = (float)(VALUE32););                         \
        break;                                                                           \
    default:                                                                             \
        GEN_BLOCKS_(K64, ((double *)dst)[e] = (VALUE64););                               \
        break;                                                                           \
    }

/* The same loop once per dtype for an int64-valued VALUE (exact in the dtype). */
#define GEN_INTEGER_(K, VALUE)                                                           \
    switch (dt) {                                                                        \
    case OPS_BOOL:                                                                       \
        GEN_BLOCKS_(K, ((bool *)dst)[e] = (VALUE) != 0;);                                \
        break;                                                                           \
    case OPS_UINT8:                                                                      \
        GEN_BLOCKS_(K, ((uint8_t *)dst)[e] = (uint8_t)(VALUE););                         \
        break;                                                                           \
    case OPS_INT8:                                                                       \
        GEN_BLOCKS_(K, ((int8_t *)dst)[e] = (int8_t)(VALUE););                           \
        break;                                                                           \
    case OPS_INT16:                                                                      \
        GEN_BLOCKS_(K, ((int16_t *)dst)[e] = (int16_t)(VALUE););                         \
        break;                                                                           \
    case OPS_INT32:                                                                      \
        GEN_BLOCKS_(K, ((int32_t *)dst)[e] = (int32_t)(VALUE););                         \
        break;                                                                           \
    case OPS_INT64:                                                                      \
        GEN_BLOCKS_(K, ((int64_t *)dst)[e] = (VALUE););                                  \
        break;                                                                           \
    case OPS_FLOAT16:                                                                    \
        GEN_BLOCKS_(K, ((ops_half *)dst)[e] = ops_float_to_half((float)(VALUE)););       \
        break;                                                                           \
    case OPS_BFLOAT16:                                                                   \
        GEN_BLOCKS_(K, ((ops_bfloat16 *)dst)[e] = ops_float_to_bfloat16((float)(VALUE)););  \
        break;                                                                           \
    case OPS_FLOAT32:                                                                    \
        GEN_BLOCKS_(K, ((float *)dst)[e] = (float)(VALUE););                             \
        break;                                                                           \
    default:                                                                             \
        GEN_BLOCKS_(K, ((double *)dst)[e] = (double)(VALUE););                           \
        break;                                                                           \
    }

/* cos(2 pi u) and sin(2 pi u) for u in [0, 1).  The reduction is exact (4u is split
 * into the nearest quarter turn k and a remainder f in [-1/2, 1/2]), then Taylor
 * series in theta = f pi / 2, |theta| <= pi/4, to theta^17 (truncation below 1e-19).
 * libm's cos costs ten times this on our machines, and a polynomial gives the same
 * bits everywhere. */
static inline void
sincos_2pi(double u, double *sn, double *cs)
{
    const double v = 4.0 * u;
    const double kf = floor(v + 0.5);
    const double t = (v - kf) * 1.5707963267948966192313216916398;
    const double t2 = t * t;
    const double s =
        t * (1.0 + t2 * (-1.0 / 6 + t2 * (1.0 / 120 + t2 * (-1.0 / 5040 + t2 * (1.0 / 362880 +
            t2 * (-1.0 / 39916800 + t2 * (1.0 / 6227020800.0 + t2 * (-1.0 / 1307674368000.0 +
            t2 * (1.0 / 355687428096000.0)))))))));
    const double c =
        1.0 + t2 * (-1.0 / 2 + t2 * (1.0 / 24 + t2 * (-1.0 / 720 + t2 * (1.0 / 40320 +
            t2 * (-1.0 / 3628800 + t2 * (1.0 / 479001600.0 + t2 * (-1.0 / 87178291200.0 +
            t2 * (1.0 / 20922789888000.0))))))));
    switch ((int)kf & 3) {
    case 0:
        *cs = c, *sn = s;
        break;
    case 1:
        *cs = -s, *sn = c;
        break;
    case 2:
        *cs = -c, *sn = -s;
        break;
    default:
        *cs = s, *sn = -c;
        break;
    }
}

/* Box-Muller: two independent standard normals from two uniforms in [0, 1). */
static inline void
box_muller(double u1, double u2, double *z0, double *z1)
{
    const double r = sqrt(-2.0 * log1p(-u1));
    double sn, cs;
    sincos_2pi(u2, &sn, &cs);
    *z0 = r * cs;
    *z1 = r * sn;
}

/* Normal samples: element pairs (2m, 2m + 1) share one Box-Muller draw (words 2m and
 * 2m + 1 as 24-bit uniforms; float64: words 4m .. 4m + 3 as two 53-bit uniforms), so
 * a pair never straddles a block. */
static void
generate_normal(ops_dtype dt, char *dst, int64_t n, const ops_philox_stream *s, double mean, double std)
{
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    const bool f64 = dt == OPS_FLOAT64;
    const int64_t per = f64 ? 2 : 4; /* elements per block */
    const int64_t nblocks = (n + per - 1) / per;
    RAND_PARALLEL_FOR_
    for (int64_t b = 0; b < nblocks; b++) {
        uint32_t w[4];
        double z[4];
        ops_philox_block(s, (uint64_t)b, w);
        if (f64) {
            box_muller(ops_uniform53(w[0], w[1]), ops_uniform53(w[2], w[3]), &z[0], &z[1]);
        } else {
            box_muller(ops_uniform24(w[0]), ops_uniform24(w[1]), &z[0], &z[1]);
            box_muller(ops_uniform24(w[2]), ops_uniform24(w[3]), &z[2], &z[3]);
        }
        for (int64_t j = 0; j < per && b * per + j < n; j++) {
            const int64_t e = b * per + j;
            store_real(dt, dst, e, mean + std * z[j]);
        }
    }
}

/* Bernoulli with per-element probabilities p (contiguous, floating dtype pdt). */
static inline int64_t
bernoulli_at(uint32_t w, const char *p, ops_dtype pdt, int64_t e)
{
    return (double)w * (1.0 / 4294967296.0) < load_real(pdt, p, e);
}

/* n contiguous elements of dtype dt at dst from the reserved stream s (the
 * per-distribution layouts of the file comment). */
static void
generate(const dist *d, ops_dtype dt, char *dst, int64_t n, const ops_philox_stream *s)
{
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    switch (d->kind) {
    case DIST_UNIFORM: {
        /* float math for the 16- and 32-bit dtypes, from `digits` bits (PyTorch's rule) */
        const int digits = float_digits(dt);
        const int shift = 32 - digits;
        const float scale = ldexpf(1.0f, -digits);
        const float from32 = (float)d->a, range32 = (float)d->b - (float)d->a;
        const double from = d->a, range = d->b - d->a;
        GEN_FLOATING_(1, 2, (float)(x[0] >> shift) * scale * range32 + from32,
                      ops_uniform53(x[0], x[1]) * range + from);
        break;
    }
    case DIST_NORMAL:
        generate_normal(dt, dst, n, s, d->a, d->b);
        break;
    case DIST_EXPONENTIAL: {
        const double lambd = d->a;
        GEN_FLOATING_(1, 2, -log1p(-(double)ops_uniform24(x[0])) / lambd,
                      -log1p(-ops_uniform53(x[0], x[1])) / lambd);
        break;
    }
    case DIST_BERNOULLI:
        if (d->p != NULL) {
            const char *p = d->p;
            const ops_dtype pdt = d->p_dtype;
            GEN_INTEGER_(1, bernoulli_at(x[0], p, pdt, e));
        } else {
            const double p = d->a;
            GEN_INTEGER_(1, (int64_t)((double)x[0] * (1.0 / 4294967296.0) < p));
        }
        break;
    default: {
        const uint64_t lo = (uint64_t)d->lo, range = d->range;
        if (range > UINT64_C(0x100000000)) {
            GEN_INTEGER_(2, (int64_t)(lo + ((uint64_t)x[1] << 32 | x[0]) % range));
        } else {
            GEN_INTEGER_(1, (int64_t)(lo + x[0] % range));
        }
        break;
    }
    }
}

static ops_status
check_no_internal_overlap(const char *op, const ops_tensor *t)
{
    if (!ops_tensor_has_internal_overlap(t))
        return OPS_OK;
    return ops_fail(OPS_ERR_VALUE,
                    "%s: unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location; clone() the tensor before performing the operation",
                    op);
}

/* Fill every element of t (any strides, distinct elements) from d: directly when t
 * is contiguous, else through a contiguous temporary allocated before the generator
 * is touched.  Does not bump t's version. */
static ops_status
fill_dist(const char *op, ops_tensor *t, const dist *d, ops_generator *gen)
{
    const int64_t n = ops_tensor_numel(t);
    ops_tensor *tmp = NULL;
    char *dst = ops_tensor_data_ptr(t);
    if (n == 0)
        return OPS_OK;
    if (!ops_tensor_is_contiguous(t)) {
        tmp = ops_tensor_new(op, t->ndim, t->sizes, NULL, t->dtype, OPS_DEVICE_CPU);
        if (tmp == NULL)
            return ops_last_status();
        dst = ops_tensor_data_ptr(tmp);
    }
    const int k = words_per_element(d, t->dtype);
    ops_philox_stream s;
    ops_generator_reserve(gen, ops_philox_blocks_for(n, k), &s);
    generate(d, t->dtype, dst, n, &s);
    ops_status st = OPS_OK;
    if (tmp != NULL) {
        st = ops_copy_values(op, t, tmp);
        ops_tensor_release(tmp);
    }
    return st;
}

/* In-place form: checks, fill, version bump. */
static ops_status
fill_inplace(const char *op, ops_tensor *self, const dist *d, ops_generator *gen)
{
    ops_status st = check_no_internal_overlap(op, self);
    if (st == OPS_OK)
        st = fill_dist(op, self, d, gen);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

/* ---- argument checks ------------------------------------------------------------------ */

/* A CPU factory accepts no device (None) or cpu; other devices get their allocator's
 * error (no CUDA in this build, bad index) or a refusal. */
static bool
check_cpu_device(const char *op, ops_device device)
{
    if (device.type == OPS_DEVICE_TYPE_NONE || device.type == OPS_CPU)
        return true;
    if (ops_device_allocator(op, device) == NULL)
        return false;
    char buf[32];
    ops_fail(OPS_ERR_DEVICE, "%s: the cpu kernel cannot create a tensor on %s", op,
             ops_device_str(device, buf, sizeof buf));
    return false;
}

static bool
check_floating(const char *op, ops_dtype dt)
{
    if (ops_dtype_is_floating(dt))
        return true;
    ops_fail_dtype(op, dt, OPS_MASK_FLOATING);
    return false;
}

/* A new contiguous CPU tensor of the given size for a factory. */
static ops_tensor *
new_factory_tensor(const char *op, ops_int_list size, ops_dtype dtype, ops_device device)
{
    if (!check_cpu_device(op, device))
        return NULL;
    if (size.len < 0 || size.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %" PRId64, op, OPS_MAX_DIMS,
                             size.len);
    return ops_tensor_new(op, (int)size.len, size.data, NULL, dtype, OPS_DEVICE_CPU);
}

/* A new tensor shaped like self (self's memory order), of dtype (None: self's). */
static ops_tensor *
new_like_tensor(const char *op, const ops_tensor *self, ops_dtype dtype, ops_device device)
{
    if (!check_cpu_device(op, device))
        return NULL;
    return ops_empty_like(self, dtype, device);
}

/* Builds the result, fills it; releases it on failure. */
static ops_tensor *
filled_or_null(const char *op, ops_tensor *t, const dist *d, ops_generator *gen)
{
    if (t != NULL && fill_dist(op, t, d, gen) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

/* ---- rand, randn and their _like forms, uniform_, normal_, exponential_ ----------------- */

static const dist uniform01 = {.kind = DIST_UNIFORM, .a = 0.0, .b = 1.0};
static const dist normal01 = {.kind = DIST_NORMAL, .a = 0.0, .b = 1.0};

ops_tensor *
rand_cpu(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (!check_floating("rand", dtype))
        return NULL;
    return filled_or_null("rand", new_factory_tensor("rand", size, dtype, device), &uniform01, generator);
}

ops_tensor *
randn_cpu(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (!check_floating("randn", dtype))
        return NULL;
    return filled_or_null("randn", new_factory_tensor("randn", size, dtype, device), &normal01, generator);
}

ops_tensor *
rand_like_cpu(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    if (!check_floating("rand_like", dtype == OPS_DTYPE_NONE ? self->dtype : dtype))
        return NULL;
    return filled_or_null("rand_like", new_like_tensor("rand_like", self, dtype, device), &uniform01, generator);
}

ops_tensor *
randn_like_cpu(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    if (!check_floating("randn_like", dtype == OPS_DTYPE_NONE ? self->dtype : dtype))
        return NULL;
    return filled_or_null("randn_like", new_like_tensor("randn_like", self, dtype, device), &normal01, generator);
}

/* Largest finite value of a floating dtype. */
static double
floating_max(ops_dtype dt)
{
    switch (dt) {
    case OPS_FLOAT16:
        return 65504.0;
    case OPS_BFLOAT16:
        return 3.3895313892515355e38;
    case OPS_FLOAT32:
        return 3.4028234663852886e38;
    default:
        return 1.7976931348623157e308;
    }
}

ops_status
uniform_cpu_(ops_tensor *self, double from, double to, ops_generator *generator)
{
    const char *op = "uniform_";
    if (!check_floating(op, self->dtype))
        return ops_last_status();
    if (!(from <= to))
        return ops_fail(OPS_ERR_VALUE, "%s: uniform_ expects to return a [from, to) range, but found from=%.17g > to=%.17g",
                        op, from, to);
    if (!(to - from <= floating_max(self->dtype)))
        return ops_fail(OPS_ERR_VALUE, "%s: uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found "
                        "to=%.17g and from=%.17g which result in to-from to exceed the limit",
                        op, ops_dtype_name(self->dtype), to, from);
    const dist d = {.kind = DIST_UNIFORM, .a = from, .b = to};
    return fill_inplace(op, self, &d, generator);
}

ops_status
normal_cpu_(ops_tensor *self, double mean, double std, ops_generator *generator)
{
    const char *op = "normal_";
    if (!check_floating(op, self->dtype))
        return ops_last_status();
    if (!(std >= 0.0))
        return ops_fail(OPS_ERR_VALUE, "%s: normal expects std >= 0.0, but found std %.17g", op, std);
    const dist d = {.kind = DIST_NORMAL, .a = mean, .b = std};
    return fill_inplace(op, self, &d, generator);
}

ops_status
exponential_cpu_(ops_tensor *self, double lambd, ops_generator *generator)
{
    const char *op = "exponential_";
    if (!check_floating(op, self->dtype))
        return ops_last_status();
    if (!(lambd > 0.0))
        return ops_fail(OPS_ERR_VALUE, "%s: exponential_ expects lambda > 0.0, but found lambda=%.17g", op, lambd);
    const dist d = {.kind = DIST_EXPONENTIAL, .a = lambd};
    return fill_inplace(op, self, &d, generator);
}

/* ---- integers: randint, randint_like, random_ ----------------------------------------- */

/* The integers a dtype holds exactly: [lo, hi] (floats: +-2^digits). */
static void
int_bounds(ops_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case OPS_BOOL:
        *lo = 0, *hi = 1;
        break;
    case OPS_UINT8:
        *lo = 0, *hi = UINT8_MAX;
        break;
    case OPS_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        break;
    case OPS_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        break;
    case OPS_INT32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        break;
    case OPS_INT64:
        *lo = INT64_MIN, *hi = INT64_MAX;
        break;
    default:
        *hi = INT64_C(1) << float_digits(dt);
        *lo = -*hi;
        break;
    }
}

/* PyTorch's random_from_to checks: from < to, and from and to - 1 held by dt. */
static ops_status
check_from_to(const char *op, int64_t from, int64_t to, ops_dtype dt)
{
    if (!(from < to))
        return ops_fail(OPS_ERR_VALUE, "%s: random_ expects 'from' to be less than 'to', but got from=%" PRId64
                        " >= to=%" PRId64, op, from, to);
    int64_t lo, hi;
    int_bounds(dt, &lo, &hi);
    if (from < lo || from > hi)
        return ops_fail(OPS_ERR_VALUE, "%s: from is out of bounds for %s", op, ops_dtype_name(dt));
    if (to - 1 < lo || to - 1 > hi)
        return ops_fail(OPS_ERR_VALUE, "%s: to - 1 is out of bounds for %s", op, ops_dtype_name(dt));
    return OPS_OK;
}

static dist
integer_dist(int64_t from, int64_t to)
{
    return (dist){.kind = DIST_INTEGER, .lo = from, .range = (uint64_t)to - (uint64_t)from};
}

ops_tensor *
randint_low_cpu(int64_t low, int64_t high, ops_int_list size, ops_generator *generator, ops_dtype dtype,
                ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = OPS_INT64;
    if (check_from_to("randint", low, high, dtype) != OPS_OK)
        return NULL;
    const dist d = integer_dist(low, high);
    return filled_or_null("randint", new_factory_tensor("randint", size, dtype, device), &d, generator);
}

ops_tensor *
randint_cpu(int64_t high, ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return randint_low_cpu(0, high, size, generator, dtype, device);
}

ops_tensor *
randint_like_low_dtype_cpu(const ops_tensor *self, int64_t low, int64_t high, ops_generator *generator,
                           ops_dtype dtype, ops_device device)
{
    if (check_from_to("randint_like", low, high, dtype == OPS_DTYPE_NONE ? self->dtype : dtype) != OPS_OK)
        return NULL;
    const dist d = integer_dist(low, high);
    return filled_or_null("randint_like", new_like_tensor("randint_like", self, dtype, device), &d, generator);
}

ops_tensor *
randint_like_cpu(const ops_tensor *self, int64_t high, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return randint_like_low_dtype_cpu(self, 0, high, generator, dtype, device);
}

ops_status
random_from_cpu_(ops_tensor *self, int64_t from, const int64_t *to, ops_generator *generator)
{
    const char *op = "random_";
    int64_t lo, hi;
    int_bounds(self->dtype, &lo, &hi);
    int64_t end;
    if (to != NULL) {
        end = *to;
    } else {
        /* to=None: up to the dtype's largest integer, inclusive */
        if (from < lo || from > hi)
            return ops_fail(OPS_ERR_VALUE, "%s: from is out of bounds for %s", op, ops_dtype_name(self->dtype));
        if (hi == INT64_MAX) {
            /* [from, 2^63): the range may be 2^64 - 1 wide at most, so it fits */
            const dist d = {.kind = DIST_INTEGER, .lo = from, .range = (uint64_t)INT64_MAX - (uint64_t)from + 1u};
            if (d.range == 0)
                return ops_fail(OPS_ERR_VALUE, "%s: from=%" PRId64 " leaves an empty range", op, from);
            return fill_inplace(op, self, &d, generator);
        }
        end = hi + 1;
    }
    const ops_status st = check_from_to(op, from, end, self->dtype);
    if (st != OPS_OK)
        return st;
    const dist d = integer_dist(from, end);
    return fill_inplace(op, self, &d, generator);
}

ops_status
random_to_cpu_(ops_tensor *self, int64_t to, ops_generator *generator)
{
    return random_from_cpu_(self, 0, &to, generator);
}

ops_status
random_cpu_(ops_tensor *self, ops_generator *generator)
{
    /* [0, the largest integer the dtype holds]: 2^digits for floats */
    int64_t lo, hi;
    int_bounds(self->dtype, &lo, &hi);
    (void)lo;
    if (hi == INT64_MAX)
        return random_from_cpu_(self, 0, NULL, generator);
    const int64_t to = hi + 1;
    return random_from_cpu_(self, 0, &to, generator);
}

/* ---- randperm ------------------------------------------------------------------------------ */

ops_tensor *
randperm_cpu(int64_t n, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    const char *op = "randperm";
    if (dtype == OPS_DTYPE_NONE)
        dtype = OPS_INT64;
    if (n < 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: n must be non-negative, got %" PRId64, op, n);
    if (dtype == OPS_BOOL || (int)dtype < 0 || dtype >= OPS_NUM_DTYPES) {
        ops_fail_dtype(op, dtype, OPS_MASK_NUMERIC);
        return NULL;
    }
    int64_t lo, hi;
    int_bounds(dtype, &lo, &hi);
    (void)lo;
    if (n > 0 && n - 1 > hi)
        return ops_fail_null(OPS_ERR_VALUE, "%s: n is too large for result tensor type: '%s'", op,
                             ops_dtype_name(dtype));
    ops_tensor *t = new_factory_tensor(op, (ops_int_list){&n, 1}, dtype, device);
    if (t == NULL)
        return NULL;
    int64_t *perm = dtype == OPS_INT64 ? ops_tensor_data_ptr(t) : ops_host_malloc((size_t)(n > 0 ? n : 1) * 8);
    if (perm == NULL) {
        ops_tensor_release(t);
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory", op);
    }
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    if (n > 1) {
        /* Fisher-Yates: step i swaps i with i + r_i % (n - i), r_i the 64-bit draw i
         * (words 2i, 2i + 1 of the stream; the bias of the modulo is below 2^-40). */
        ops_philox_stream s;
        ops_generator_reserve(generator, ops_philox_blocks_for(n - 1, 2), &s);
        uint32_t w[4];
        for (int64_t i = 0; i + 1 < n; i++) {
            if (i % 2 == 0)
                ops_philox_block(&s, (uint64_t)(i / 2), w);
            const uint32_t *x = w + (i % 2) * 2;
            const uint64_t r = (uint64_t)x[1] << 32 | x[0];
            const int64_t j = i + (int64_t)(r % (uint64_t)(n - i));
            const int64_t v = perm[i];
            perm[i] = perm[j];
            perm[j] = v;
        }
    }
    if (dtype != OPS_INT64) {
        char *dst = ops_tensor_data_ptr(t);
        for (int64_t i = 0; i < n; i++)
            store_int(dtype, dst, i, perm[i]);
        ops_host_free(perm);
    }
    return t;
}

/* ---- the out= forms of the factories ------------------------------------------------------ */

/* PyTorch's rand.out and friends: the result has out's dtype, and out is resized to
 * the size when its shape differs (ops_write_out; out untouched on failure). */

ops_status
rand_generator_out_cpu(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("rand", rand_cpu(size, generator, out->dtype, OPS_DEVICE_UNSPECIFIED), out);
}

ops_status
rand_out_cpu(ops_int_list size, ops_tensor *out)
{
    return rand_generator_out_cpu(size, NULL, out);
}

ops_status
randn_generator_out_cpu(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randn", randn_cpu(size, generator, out->dtype, OPS_DEVICE_UNSPECIFIED), out);
}

ops_status
randn_out_cpu(ops_int_list size, ops_tensor *out)
{
    return randn_generator_out_cpu(size, NULL, out);
}

ops_status
randint_low_generator_out_cpu(int64_t low, int64_t high, ops_int_list size, ops_generator *generator,
                              ops_tensor *out)
{
    return ops_write_out("randint",
                         randint_low_cpu(low, high, size, generator, out->dtype, OPS_DEVICE_UNSPECIFIED), out);
}

ops_status
randint_low_out_cpu(int64_t low, int64_t high, ops_int_list size, ops_tensor *out)
{
    return randint_low_generator_out_cpu(low, high, size, NULL, out);
}

ops_status
randint_generator_out_cpu(int64_t high, ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return randint_low_generator_out_cpu(0, high, size, generator, out);
}

ops_status
randint_out_cpu(int64_t high, ops_int_list size, ops_tensor *out)
{
    return randint_low_generator_out_cpu(0, high, size, NULL, out);
}

ops_status
randperm_generator_out_cpu(int64_t n, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randperm", randperm_cpu(n, generator, out->dtype, OPS_DEVICE_UNSPECIFIED), out);
}

ops_status
randperm_out_cpu(int64_t n, ops_tensor *out)
{
    return randperm_generator_out_cpu(n, NULL, out);
}

/* ---- bernoulli -------------------------------------------------------------------------------- */

/* A contiguous view or copy of t (new reference), or NULL. */
static ops_tensor *
contiguous_of(const ops_tensor *t)
{
    return ops_contiguous(t);
}

ops_tensor *
bernoulli_cpu(const ops_tensor *self, ops_generator *generator)
{
    const char *op = "bernoulli";
    ops_tensor *p = NULL, *r = NULL;
    if (!check_floating(op, self->dtype))
        return NULL;
    p = contiguous_of(self);
    if (p == NULL)
        return NULL;
    const char *pd = ops_tensor_data_ptr(p);
    const int64_t n = ops_tensor_numel(p);
    for (int64_t i = 0; i < n; i++) {
        const double v = load_real(p->dtype, pd, i);
        if (!(v >= 0.0 && v <= 1.0)) {
            ops_fail(OPS_ERR_VALUE, "%s: Expected p_in >= 0 && p_in <= 1 to be true, but got p=%.17g", op, v);
            goto done;
        }
    }
    r = ops_empty_like(self, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
    if (r == NULL)
        goto done;
    {
        /* element i of r (row-major) takes p's element i: r follows self's memory
         * order, so write a contiguous result when r is not contiguous */
        const dist d = {.kind = DIST_BERNOULLI, .p = pd, .p_dtype = p->dtype};
        if (fill_dist(op, r, &d, generator) != OPS_OK) {
            ops_tensor_release(r);
            r = NULL;
        }
    }
done:
    ops_tensor_release(p);
    return r;
}

ops_status
bernoulli_out_cpu(const ops_tensor *self, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("bernoulli", bernoulli_cpu(self, generator), out);
}

static ops_status
check_p(const char *op, double p)
{
    if (p >= 0.0 && p <= 1.0)
        return OPS_OK;
    return ops_fail(OPS_ERR_VALUE, "%s: bernoulli_ expects p to be in [0, 1], but got p=%.17g", op, p);
}

ops_tensor *
bernoulli_p_cpu(const ops_tensor *self, double p, ops_generator *generator)
{
    if (check_p("bernoulli", p) != OPS_OK)
        return NULL;
    const dist d = {.kind = DIST_BERNOULLI, .a = p};
    return filled_or_null("bernoulli", ops_empty_like(self, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED), &d, generator);
}

ops_status
bernoulli_float_cpu_(ops_tensor *self, double p, ops_generator *generator)
{
    const ops_status st = check_p("bernoulli_", p);
    if (st != OPS_OK)
        return st;
    const dist d = {.kind = DIST_BERNOULLI, .a = p};
    return fill_inplace("bernoulli_", self, &d, generator);
}

/* ---- multinomial ------------------------------------------------------------------------------ */

typedef struct keyed {
    double key;
    int64_t index;
} keyed;

/* Largest key first; ties: the lower index. */
static int
keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* PyTorch's checks, the probabilities' included; *pc gets a contiguous view or copy
 * of self (a new reference) on success. */
static ops_status
multinomial_check(const ops_tensor *self, int64_t num_samples, bool replacement, ops_tensor **pc)
{
    const char *op = "multinomial";
    *pc = NULL;
    if (!ops_dtype_is_floating(self->dtype))
        return ops_fail(OPS_ERR_DTYPE, "%s: multinomial only supports floating-point dtypes for input, got: %s", op,
                        ops_dtype_name(self->dtype));
    if (self->ndim != 1 && self->ndim != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: prob_dist must be 1 or 2 dim", op);
    const int64_t ncat = self->sizes[self->ndim - 1];
    const int64_t rows = self->ndim == 2 ? self->sizes[0] : 1;
    if (ncat > (INT64_C(1) << 24))
        return ops_fail(OPS_ERR_VALUE, "%s: number of categories cannot exceed 2^24", op);
    if (num_samples <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: cannot sample n_sample <= 0 samples", op);
    if (!replacement && num_samples > ncat)
        return ops_fail(OPS_ERR_VALUE, "%s: cannot sample n_sample > prob_dist.size(-1) samples without replacement",
                        op);
    ops_tensor *p = contiguous_of(self);
    if (p == NULL)
        return ops_last_status();
    const char *pd = ops_tensor_data_ptr(p);
    ops_status st = OPS_OK;
    for (int64_t row = 0; row < rows && st == OPS_OK; row++) {
        double sum = 0.0;
        int64_t nonzero = 0;
        for (int64_t c = 0; c < ncat; c++) {
            const double v = load_real(p->dtype, pd, row * ncat + c);
            if (!(v >= 0.0) || isinf(v)) {
                st = ops_fail(OPS_ERR_VALUE, "%s: probability tensor contains either `inf`, `nan` or element < 0", op);
                break;
            }
            sum += v;
            nonzero += v > 0.0;
        }
        if (st != OPS_OK)
            break;
        if (!(sum > 0.0))
            st = ops_fail(OPS_ERR_VALUE, "%s: invalid multinomial distribution (sum of probabilities <= 0)", op);
        else if (!replacement && nonzero < num_samples)
            st = ops_fail(OPS_ERR_VALUE,
                          "%s: invalid multinomial distribution (with replacement=False, not enough non-negative "
                          "category to sample)",
                          op);
    }
    if (st != OPS_OK) {
        ops_tensor_release(p);
        return st;
    }
    *pc = p;
    return OPS_OK;
}

ops_tensor *
multinomial_cpu(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator)
{
    const char *op = "multinomial";
    ops_tensor *p = NULL, *r = NULL;
    double *cdf = NULL;
    keyed *keys = NULL;
    if (multinomial_check(self, num_samples, replacement, &p) != OPS_OK)
        return NULL;
    const char *pd = ops_tensor_data_ptr(p);
    const int64_t ncat = self->sizes[self->ndim - 1];
    const int64_t rows = self->ndim == 2 ? self->sizes[0] : 1;
    int64_t shape[2] = {rows, num_samples};
    r = ops_tensor_new(op, self->ndim, self->ndim == 2 ? shape : shape + 1, NULL, OPS_INT64, OPS_DEVICE_CPU);
    if (r == NULL)
        goto done;
    if (replacement)
        cdf = ops_host_malloc((size_t)(ncat > 0 ? ncat : 1) * sizeof *cdf);
    else
        keys = ops_host_malloc((size_t)(ncat > 0 ? ncat : 1) * sizeof *keys);
    if (cdf == NULL && keys == NULL) {
        ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        ops_tensor_release(r);
        r = NULL;
        goto done;
    }
    int64_t *res = ops_tensor_data_ptr(r);
    ops_philox_stream s;
    /* two words (one 53-bit uniform) per sample with replacement, per category without */
    const int64_t per_row = replacement ? num_samples : ncat;
    ops_generator_reserve(generator, ops_philox_blocks_for(rows * per_row, 2), &s);
    for (int64_t row = 0; row < rows; row++) {
        const int64_t first = row * per_row; /* stream element of this row's first draw */
        uint32_t w[4];
        if (replacement) {
            double acc = 0.0;
            for (int64_t c = 0; c < ncat; c++) {
                acc += load_real(p->dtype, pd, row * ncat + c);
                cdf[c] = acc;
            }
            for (int64_t j = 0; j < num_samples; j++) {
                const int64_t e = first + j;
                ops_philox_block(&s, (uint64_t)(e / 2), w);
                const double x = ops_uniform53(w[(e % 2) * 2], w[(e % 2) * 2 + 1]) * acc;
                /* the first category whose cumulative sum exceeds x: never one of
                 * probability 0, since its sum equals its predecessor's */
                int64_t lo = 0, hi = ncat - 1;
                while (lo < hi) {
                    const int64_t mid = lo + (hi - lo) / 2;
                    if (cdf[mid] > x)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                res[row * num_samples + j] = lo;
            }
        } else {
            /* the exponential trick (as PyTorch): the num_samples largest p / E, E ~ Exp(1) */
            for (int64_t c = 0; c < ncat; c++) {
                const int64_t e = first + c;
                ops_philox_block(&s, (uint64_t)(e / 2), w);
                const double u = ops_uniform53(w[(e % 2) * 2], w[(e % 2) * 2 + 1]);
                const double ex = -log1p(-u);
                const double v = load_real(p->dtype, pd, row * ncat + c);
                keys[c].key = v > 0.0 ? (ex > 0.0 ? v / ex : INFINITY) : -1.0;
                keys[c].index = c;
            }
            qsort(keys, (size_t)ncat, sizeof *keys, keyed_cmp);
            for (int64_t j = 0; j < num_samples; j++)
                res[row * num_samples + j] = keys[j].index;
        }
    }
done:
    ops_host_free(cdf);
    ops_host_free(keys);
    ops_tensor_release(p);
    return r;
}

ops_status
multinomial_out_cpu(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator,
                    ops_tensor *out)
{
    ops_tensor *p = NULL;
    const ops_status st = multinomial_check(self, num_samples, replacement, &p);
    ops_tensor_release(p);
    if (st != OPS_OK)
        return st;
    if (out->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "multinomial: multinomial expects Long tensor out, got: %s",
                        ops_dtype_name(out->dtype));
    return ops_write_out("multinomial", multinomial_cpu(self, num_samples, replacement, generator), out);
}

/* ---- dropout ---------------------------------------------------------------------------------- */

/* output[i] = keep ? x * scale : 0 with keep = (word i / 2^32 < 1 - p); mask (may be
 * NULL) gets keep.  input is contiguous; output and mask are fresh contiguous tensors. */
static void
dropout_fill(const ops_tensor *in, ops_tensor *outp, ops_tensor *mask, double p)
{
    const int64_t n = ops_tensor_numel(in);
    const ops_dtype dt = in->dtype;
    const char *src = ops_tensor_data_ptr(in);
    char *dst = ops_tensor_data_ptr(outp);
    bool *m = mask != NULL ? ops_tensor_data_ptr(mask) : NULL;
    const double q = 1.0 - p;
    const double scale = p < 1.0 ? 1.0 / q : 0.0;
    ops_philox_stream s;
    ops_generator_reserve(NULL, ops_philox_blocks_for(n, 1), &s);
    const int64_t nblocks = (int64_t)ops_philox_blocks_for(n, 1);
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    RAND_PARALLEL_FOR_
    for (int64_t b = 0; b < nblocks; b++) {
        uint32_t w[4];
        ops_philox_block(&s, (uint64_t)b, w);
        for (int j = 0; j < 4; j++) {
            const int64_t e = b * 4 + j;
            if (e >= n)
                break;
            const bool keep = (double)w[j] * (1.0 / 4294967296.0) < q;
            double v = 0.0;
            if (keep) {
                /* the float dtypes scale in float, as PyTorch's input * (noise / (1 - p)) */
                if (dt == OPS_FLOAT64)
                    v = load_real(dt, src, e) * scale;
                else
                    v = (double)((float)load_real(dt, src, e) * (float)scale);
            }
            store_real(dt, dst, e, v);
            if (m != NULL)
                m[e] = keep;
        }
    }
}

static ops_status
dropout_check(const char *op, const ops_tensor *input, double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return ops_fail(OPS_ERR_VALUE, "%s: dropout probability has to be between 0 and 1, but got %.17g", op, p);
    if (!ops_dtype_is_floating(input->dtype))
        return ops_fail_dtype(op, input->dtype, OPS_MASK_FLOATING);
    return OPS_OK;
}

ops_tensor *
dropout_cpu(const ops_tensor *input, double p, bool train)
{
    const char *op = "dropout";
    if (dropout_check(op, input, p) != OPS_OK)
        return NULL;
    if (!train || p == 0.0 || ops_tensor_numel(input) == 0)
        return ops_clone(input); /* PyTorch returns input itself; a copy keeps "new tensor" */
    ops_tensor *in = contiguous_of(input);
    if (in == NULL)
        return NULL;
    ops_tensor *r = ops_tensor_new(op, in->ndim, in->sizes, NULL, in->dtype, OPS_DEVICE_CPU);
    if (r != NULL)
        dropout_fill(in, r, NULL, p);
    ops_tensor_release(in);
    return r;
}

ops_status
native_dropout_cpu(const ops_tensor *input, double p, const bool *train, ops_tensor **result0, ops_tensor **result1)
{
    const char *op = "native_dropout";
    ops_tensor *in = NULL, *o = NULL, *m = NULL;
    ops_status st = dropout_check(op, input, p);
    if (st != OPS_OK)
        return st;
    const bool training = train == NULL || *train;
    in = contiguous_of(input);
    if (in == NULL)
        goto fail;
    o = ops_tensor_new(op, in->ndim, in->sizes, NULL, in->dtype, OPS_DEVICE_CPU);
    m = ops_tensor_new(op, in->ndim, in->sizes, NULL, OPS_BOOL, OPS_DEVICE_CPU);
    if (o == NULL || m == NULL)
        goto fail;
    if (training && ops_tensor_numel(in) > 0) {
        dropout_fill(in, o, m, p);
    } else {
        /* not training: the input, and a mask of ones */
        const size_t nb = (size_t)ops_tensor_numel(in) * ops_dtype_size(in->dtype);
        if (nb > 0)
            memcpy(ops_tensor_data_ptr(o), ops_tensor_data_ptr(in), nb);
        if (ops_tensor_numel(m) > 0)
            memset(ops_tensor_data_ptr(m), 1, (size_t)ops_tensor_numel(m));
    }
    ops_tensor_release(in);
    *result0 = o;
    *result1 = m;
    return OPS_OK;
fail:
    st = ops_last_status();
    ops_tensor_release(in);
    ops_tensor_release(o);
    ops_tensor_release(m);
    return st != OPS_OK ? st : OPS_ERR_OOM;
}

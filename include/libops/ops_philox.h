/* The Philox4x32-10 stream and every mapping from its words to sample values, for
 * the CPU kernels (kernels/cpu/random.c) and the CUDA kernels (kernels/cuda/random.cu)
 * alike: everything here is static inline and OPS_HOST_DEVICE, C and C++ clean, so
 * both backends compile the same definitions and produce the same stream for the
 * same generator seed and offset (issue 7, item 3).
 *
 * The layout (include/libops/ops_random.h): block b of a reserved range is
 * philox4x32_10({lo32(base + b), hi32(base + b), 0, 0}, key); element e of a result
 * (row-major) uses the words e*k .. e*k + k - 1, k = 1 or 2 words per element, so
 * block b holds elements b * (4/k) .. b * (4/k) + 4/k - 1.  ops_rand_block() turns a
 * block into those elements' values; a kernel, whichever device, loops over blocks
 * and stores the values where the elements live.
 *
 * Bit-identical on both devices: the integers, bernoulli and the uniforms (their
 * products and sums are spelled with ops_fmul_rn_/ops_dmul_rn_, so nvcc cannot fuse
 * them into an FMA the host does not do).  Normal and exponential samples call
 * log1p and sqrt, and the polynomial sincos is contracted differently: those agree
 * to a few ulps. */
#ifndef OPS_PHILOX_H
#define OPS_PHILOX_H

#include <stdbool.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_scalar_math.h" /* OPS_HOST_DEVICE, OPS_INLINE, float16/bfloat16 */

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel draws from: the key and the first block of a reserved range. */
typedef struct ops_philox_stream {
    uint32_t key[2];
    uint64_t base; /* block index of the stream's word 0 */
} ops_philox_stream;

/* Blocks for n elements of k words each (k in 1, 2, 4). */
OPS_INLINE uint64_t
ops_philox_blocks_for(int64_t n, int k)
{
    return ((uint64_t)n * (uint64_t)k + 3u) / 4u;
}

/* One Philox4x32 round: two 32x32->64 multiplies, the high halves xored with the
 * other counter words and the key. */
OPS_INLINE_ALWAYS void
ops_philox4x32_round_(uint32_t c[4], const uint32_t k[2])
{
    const uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    const uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    const uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    const uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    const uint32_t n0 = hi1 ^ c[1] ^ k[0];
    const uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

/* Philox4x32-10: out = the block for counter ctr under key (ten rounds, the key
 * bumped by the Weyl constants 0x9E3779B9 and 0xBB67AE85 between rounds). */
OPS_INLINE_ALWAYS void
ops_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
        ops_philox4x32_round_(c, k);
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
}

/* Block `b` of stream s (block s->base + b). */
OPS_INLINE_ALWAYS void
ops_philox_block(const ops_philox_stream *s, uint64_t b, uint32_t out[4])
{
    const uint64_t idx = s->base + b;
    const uint32_t ctr[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), 0u, 0u};
    ops_philox4x32_10(ctr, s->key, out);
}

/* Correctly rounded float and double products and sums that nvcc may not contract
 * into an FMA (the host compilers do not contract across these either). */
OPS_INLINE_ALWAYS float
ops_fmul_rn_(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

OPS_INLINE_ALWAYS float
ops_fadd_rn_(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

OPS_INLINE_ALWAYS double
ops_dmul_rn_(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

OPS_INLINE_ALWAYS double
ops_dadd_rn_(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

/* Uniform in [0, 1) from the top 24 (float) or 53 (double) bits: multiples of 2^-24
 * or 2^-53, so 1 is never returned. */
OPS_INLINE_ALWAYS float
ops_uniform24(uint32_t w)
{
    return (float)(w >> 8) * (1.0f / 16777216.0f);
}

OPS_INLINE_ALWAYS double
ops_uniform53(uint32_t lo, uint32_t hi)
{
    const uint64_t v = ((uint64_t)hi << 32 | lo) >> 11;
    return (double)v * (1.0 / 9007199254740992.0);
}

/* One word as a uniform in [0, 1) with 32 bits (bernoulli, dropout): exact in double. */
OPS_INLINE_ALWAYS double
ops_uniform32(uint32_t w)
{
    return (double)w * (1.0 / 4294967296.0);
}

/* cos(2 pi u) and sin(2 pi u) for u in [0, 1).  The reduction is exact (4u is split
 * into the nearest quarter turn k and a remainder f in [-1/2, 1/2]), then Taylor
 * series in theta = f pi / 2, |theta| <= pi/4, to theta^17 (truncation below 1e-19).
 * libm's cos costs ten times this on our CPUs, and a polynomial gives the same values
 * everywhere (up to FMA contraction on the device). */
OPS_INLINE_ALWAYS void
ops_sincos_2pi(double u, double *sn, double *cs)
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
OPS_INLINE_ALWAYS void
ops_box_muller(double u1, double u2, double *z0, double *z1)
{
    const double r = sqrt(-2.0 * log1p(-u1));
    double sn, cs;
    ops_sincos_2pi(u2, &sn, &cs);
    *z0 = r * cs;
    *z1 = r * sn;
}

/* ---- distributions ---------------------------------------------------------- */

typedef enum ops_rand_kind {
    OPS_RAND_UNIFORM,     /* a = from, b = to */
    OPS_RAND_NORMAL,      /* a = mean, b = std */
    OPS_RAND_EXPONENTIAL, /* a = lambda */
    OPS_RAND_BERNOULLI,   /* a = p (a probability tensor: the caller compares u < p[e]) */
    OPS_RAND_INTEGER,     /* lo + r % range */
} ops_rand_kind;

/* A distribution with everything its block mapping needs (built on the host by
 * ops_rand_dist_make, passed by value to a CUDA kernel). */
typedef struct ops_rand_dist {
    ops_rand_kind kind;
    int k;        /* 32-bit words per element: 1 or 2 */
    int digits;   /* uniform: significand bits of the dtype (11, 8, 24 or 53) */
    double a, b;
    int64_t lo;
    uint64_t range;
    /* uniform with k = 1, in float: 2^-digits, from and to - from */
    float scale32, from32, range32;
} ops_rand_dist;

/* Significand bits of a floating dtype (std::numeric_limits<T>::digits). */
OPS_INLINE int
ops_rand_float_digits(ops_dtype dt)
{
    return dt == OPS_FLOAT16 ? 11 : dt == OPS_BFLOAT16 ? 8 : dt == OPS_FLOAT32 ? 24 : 53;
}

/* Fills in k and digits for results of dtype dt:
 *   uniform      k = 1: the top `digits` bits of one word (24 for float32, 11 for
 *                float16, 8 for bfloat16: PyTorch's rule, so u < 1 exactly in the
 *                dtype), x = u * (to - from) + from in float; k = 2 for float64 (53
 *                bits, double);
 *   normal       Box-Muller: elements 2m and 2m + 1 are r cos(2 pi u2) and r sin(2 pi u2),
 *                r = sqrt(-2 log(1 - u1)), from the pair's words (24-bit uniforms:
 *                k = 1; 53-bit for float64: k = 2), so a pair never straddles a block;
 *   exponential  -log(1 - u) / lambda, u as normal's (k = 1, float64 k = 2);
 *   bernoulli    1 when w / 2^32 < p (k = 1), so p = 0 never and p = 1 always;
 *   integers     lo + r % range, r one word (range <= 2^32, k = 1) or two (k = 2). */
OPS_INLINE ops_rand_dist
ops_rand_dist_make(ops_rand_kind kind, ops_dtype dt, double a, double b, int64_t lo, uint64_t range)
{
    ops_rand_dist d;
    d.kind = kind;
    d.a = a;
    d.b = b;
    d.lo = lo;
    d.range = range;
    d.digits = ops_rand_float_digits(dt);
    d.scale32 = d.digits < 32 ? 1.0f / (float)(1u << d.digits) : 0.0f; /* exact: a power of two */
    d.from32 = (float)a;
    d.range32 = (float)b - (float)a;
    switch (kind) {
    case OPS_RAND_UNIFORM:
    case OPS_RAND_NORMAL:
    case OPS_RAND_EXPONENTIAL:
        d.k = dt == OPS_FLOAT64 ? 2 : 1;
        break;
    case OPS_RAND_BERNOULLI:
        d.k = 1;
        break;
    default:
        d.k = range > UINT64_C(0x100000000) ? 2 : 1;
        break;
    }
    return d;
}

/* A uniform with k = 1 (float16, bfloat16, float32) from one word, in float: the
 * top `digits` bits scaled by 2^-digits (exact), so only the product and the sum round. */
OPS_INLINE_ALWAYS float
ops_rand_uniform32(const ops_rand_dist *d, uint32_t w)
{
    const float u = (float)(w >> (32 - d->digits)) * d->scale32;
    return ops_fadd_rn_(ops_fmul_rn_(u, d->range32), d->from32);
}

/* The values of the elements of a block from its four words w (4 / d->k of them,
 * from element b * (4 / d->k) on for block b): floating distributions in f[] (as
 * double; a float-computed uniform converts exactly), integers in iv[].  Bernoulli
 * puts the uniform in f[] and (f < p) in iv[].  Returns the element count. */
OPS_INLINE_ALWAYS int
ops_rand_from_words(const ops_rand_dist *d, const uint32_t w[4], double f[4], int64_t iv[4])
{
    const int per = 4 / d->k;
    switch (d->kind) {
    case OPS_RAND_UNIFORM:
        if (d->k == 2) {
            const double range = d->b - d->a;
            for (int j = 0; j < 2; j++)
                f[j] = ops_dadd_rn_(ops_dmul_rn_(ops_uniform53(w[2 * j], w[2 * j + 1]), range), d->a);
        } else {
            for (int j = 0; j < 4; j++)
                f[j] = ops_rand_uniform32(d, w[j]);
        }
        break;
    case OPS_RAND_NORMAL: {
        double z[4];
        if (d->k == 2) {
            ops_box_muller(ops_uniform53(w[0], w[1]), ops_uniform53(w[2], w[3]), &z[0], &z[1]);
        } else {
            ops_box_muller(ops_uniform24(w[0]), ops_uniform24(w[1]), &z[0], &z[1]);
            ops_box_muller(ops_uniform24(w[2]), ops_uniform24(w[3]), &z[2], &z[3]);
        }
        for (int j = 0; j < per; j++)
            f[j] = ops_dadd_rn_(d->a, ops_dmul_rn_(d->b, z[j]));
        break;
    }
    case OPS_RAND_EXPONENTIAL:
        for (int j = 0; j < per; j++) {
            const double u = d->k == 2 ? ops_uniform53(w[2 * j], w[2 * j + 1]) : (double)ops_uniform24(w[j]);
            f[j] = -log1p(-u) / d->a;
        }
        break;
    case OPS_RAND_BERNOULLI:
        for (int j = 0; j < 4; j++) {
            f[j] = ops_uniform32(w[j]);
            iv[j] = f[j] < d->a;
        }
        break;
    default: {
        const uint64_t lo = (uint64_t)d->lo;
        for (int j = 0; j < per; j++) {
            const uint64_t r = d->k == 2 ? ((uint64_t)w[2 * j + 1] << 32 | w[2 * j]) : w[j];
            iv[j] = (int64_t)(lo + r % d->range);
        }
        break;
    }
    }
    return per;
}

/* The same from the block's Philox words (the CPU's vector Philox gives the words of
 * many blocks at once: kernels/cpu/vec/vec_random.c). */
OPS_INLINE_ALWAYS int
ops_rand_block(const ops_rand_dist *d, const ops_philox_stream *s, uint64_t b, double f[4], int64_t iv[4])
{
    uint32_t w[4];
    ops_philox_block(s, b, w);
    return ops_rand_from_words(d, w, f, iv);
}

/* Whether ops_rand_block gives dt's values in iv[] (integers, bernoulli) or f[]. */
OPS_INLINE bool
ops_rand_is_integer_valued(const ops_rand_dist *d)
{
    return d->kind == OPS_RAND_INTEGER || d->kind == OPS_RAND_BERNOULLI;
}

/* Store a value (already in the dtype's range; integers exact) into the element at p. */
OPS_INLINE_ALWAYS void
ops_rand_store_int(ops_dtype dt, void *p, int64_t v)
{
    switch (dt) {
    case OPS_BOOL:
        *(bool *)p = v != 0;
        break;
    case OPS_UINT8:
        *(uint8_t *)p = (uint8_t)v;
        break;
    case OPS_INT8:
        *(int8_t *)p = (int8_t)v;
        break;
    case OPS_INT16:
        *(int16_t *)p = (int16_t)v;
        break;
    case OPS_INT32:
        *(int32_t *)p = (int32_t)v;
        break;
    case OPS_INT64:
        *(int64_t *)p = v;
        break;
    case OPS_FLOAT16:
        *(ops_half *)p = ops_float_to_half((float)v);
        break;
    case OPS_BFLOAT16:
        *(ops_bfloat16 *)p = ops_float_to_bfloat16((float)v);
        break;
    case OPS_FLOAT32:
        *(float *)p = (float)v;
        break;
    default:
        *(double *)p = (double)v;
        break;
    }
}

/* Floating dtypes only: v rounded into the dtype (through float for the 16-bit ones,
 * as the CPU kernels always did). */
OPS_INLINE_ALWAYS void
ops_rand_store_real(ops_dtype dt, void *p, double v)
{
    switch (dt) {
    case OPS_FLOAT16:
        *(ops_half *)p = ops_float_to_half((float)v);
        break;
    case OPS_BFLOAT16:
        *(ops_bfloat16 *)p = ops_float_to_bfloat16((float)v);
        break;
    case OPS_FLOAT32:
        *(float *)p = (float)v;
        break;
    default:
        *(double *)p = v;
        break;
    }
}

/* A floating element at p as a double. */
OPS_INLINE_ALWAYS double
ops_rand_load_real(ops_dtype dt, const void *p)
{
    switch (dt) {
    case OPS_FLOAT16:
        return ops_half_to_float(*(const ops_half *)p);
    case OPS_BFLOAT16:
        return ops_bfloat16_to_float(*(const ops_bfloat16 *)p);
    case OPS_FLOAT32:
        return *(const float *)p;
    default:
        return *(const double *)p;
    }
}

/* dropout's element: x kept (scaled) when the word's uniform is below q = 1 - p, the
 * float dtypes scaling in float as PyTorch's input * (noise / (1 - p)). */
OPS_INLINE double
ops_dropout_value(ops_dtype dt, double x, bool keep, double scale)
{
    if (!keep)
        return 0.0;
    return dt == OPS_FLOAT64 ? ops_dmul_rn_(x, scale) : (double)ops_fmul_rn_((float)x, (float)scale);
}

/* randperm's Fisher-Yates step i (0 <= i < n - 1) swaps i with i + r_i % (n - i), r_i
 * the 64-bit draw i: words 2i, 2i + 1 of the stream (block i / 2). */
OPS_INLINE int64_t
ops_randperm_target(const uint32_t block[4], int64_t i, int64_t n)
{
    const uint32_t *x = block + (i % 2) * 2;
    const uint64_t r = (uint64_t)x[1] << 32 | x[0];
    return i + (int64_t)(r % (uint64_t)(n - i));
}

/* multinomial's draw e (two words, one 53-bit uniform) of the stream. */
OPS_INLINE double
ops_multinomial_uniform(const ops_philox_stream *s, int64_t e)
{
    uint32_t w[4];
    ops_philox_block(s, (uint64_t)(e / 2), w);
    return ops_uniform53(w[(e % 2) * 2], w[(e % 2) * 2 + 1]);
}

/* multinomial without replacement (the exponential trick, as PyTorch): category c
 * with probability v > 0 gets the key v / E, E = -log(1 - u) ~ Exp(1); the
 * num_samples largest keys win (ties: the lower index).  -1 for v == 0, which never
 * wins against a positive probability. */
OPS_INLINE double
ops_multinomial_key(double v, double u)
{
    const double ex = -log1p(-u);
    return v > 0.0 ? (ex > 0.0 ? v / ex : INFINITY) : -1.0;
}

/* The first category whose cumulative sum exceeds x (cdf non-decreasing, ncat > 0):
 * never one of probability 0, since its sum equals its predecessor's. */
OPS_INLINE int64_t
ops_multinomial_search(const double *cdf, int64_t ncat, double x)
{
    int64_t lo = 0, hi = ncat - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

#ifdef __cplusplus
}
#endif
#endif /* OPS_PHILOX_H */

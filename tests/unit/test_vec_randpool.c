/* The vector loops of the random ops and of pooling (kernels/cpu/vec/vec_random.c,
 * vec_pool.c) against their scalar definitions, at the CPU level of the process
 * (OPS_CPU_CAPABILITY; tests/unit/meson.build runs this program once per level).
 *
 * Random numbers: every element of rand, randn, normal_, uniform_ and bernoulli_ at
 * float32 and float64, a few thousand of them from several stream offsets and at 1
 * and 2 threads, must be bit for bit the scalar definition of the stream
 * (ops_rand_block of include/libops/ops_philox.h, the function the CUDA kernels use
 * too), computed here element by element.
 *
 * Pooling: max_pool2d (values and indices) and avg_pool2d at float32, float64,
 * float16 and bfloat16 on inputs with
 * NaN, infinities and ties, widths that are not multiples of any vector, strides 1, 2
 * and 3, padding and dilation, a row stride wider than the row, channels-last inputs
 * (the channels vectorised, 37 of them: a tail), must equal plain
 * loops written here from PyTorch's definitions (NaN wins, the first of equal maxima
 * wins; the sum from 0 in row order divided by the window's divisor).
 *
 * Adaptive pooling (adaptive_max_pool2d with indices, adaptive_avg_pool2d) the same way,
 * over windows that do not divide the input (and overlap), NCHW (contiguous, and with a
 * row stride wider than the row) and channels-last, 3, 37 and 1100 channels (fewer
 * than a vector; a tail; more than one pass of the channel loops). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_op_adaptive_avg_pool2d.h"
#include "ops_op_adaptive_max_pool2d.h"
#include "ops_op_avg_pool2d.h"
#include "ops_op_bernoulli.h"
#include "ops_op_empty.h"
#include "ops_op_max_pool2d_with_indices.h"
#include "ops_op_narrow.h"
#include "ops_op_normal.h"
#include "ops_op_permute.h"
#include "ops_op_rand.h"
#include "ops_op_randn.h"
#include "ops_op_to.h"
#include "ops_op_uniform.h"
#include "ops_internal.h"
#include "ops_random.h"

/* ---- random numbers ---------------------------------------------------------------- */

enum { R_RAND, R_RANDN, R_NORMAL, R_UNIFORM, R_BERNOULLI, R_NUM };
static const char *const r_names[R_NUM] = {"rand", "randn", "normal_", "uniform_", "bernoulli_"};

/* n elements of op `which` at dtype dt from generator (seed, offset). */
static ops_tensor *
draw(int which, ops_dtype dt, int64_t n, uint64_t seed, uint64_t offset)
{
    ops_generator *g = ops_generator_create(seed);
    ops_generator_set_offset(g, offset);
    const ops_int_list size = {&n, 1};
    ops_tensor *t = NULL;
    switch (which) {
    case R_RAND:
        t = ops_rand(size, g, dt, OPS_DEVICE_UNSPECIFIED);
        break;
    case R_RANDN:
        t = ops_randn(size, g, dt, OPS_DEVICE_UNSPECIFIED);
        break;
    default:
        t = ops_empty(size, dt, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(which == R_NORMAL    ? ops_normal_(t, 0.5, 3.0, g)
                         : which == R_UNIFORM ? ops_uniform_(t, -2.0, 7.0, g)
                                              : ops_bernoulli_float_(t, 0.3, g),
                         OPS_OK);
        break;
    }
    ck_assert_ptr_nonnull(t);
    ops_generator_release(g);
    return t;
}

/* Element e of the same draw by the scalar definition. */
static double
reference(int which, ops_dtype dt, int64_t e, uint64_t seed, uint64_t offset)
{
    const ops_rand_kind kind = which == R_RAND || which == R_UNIFORM ? OPS_RAND_UNIFORM
                               : which == R_BERNOULLI                 ? OPS_RAND_BERNOULLI
                                                                      : OPS_RAND_NORMAL;
    const double a = which == R_NORMAL ? 0.5 : which == R_UNIFORM ? -2.0 : which == R_BERNOULLI ? 0.3 : 0.0;
    const double b = which == R_NORMAL ? 3.0 : which == R_UNIFORM ? 7.0 : 1.0;
    const ops_rand_dist d = ops_rand_dist_make(kind, dt, a, b, 0, 0);
    const ops_philox_stream s = {{(uint32_t)seed, (uint32_t)(seed >> 32)}, offset};
    const int per = 4 / d.k;
    double f[4];
    int64_t iv[4];
    ops_rand_block(&d, &s, (uint64_t)(e / per), f, iv);
    return ops_rand_is_integer_valued(&d) ? (double)iv[e % per] : f[e % per];
}

static void
check_stream(int which, ops_dtype dt, int64_t n, uint64_t seed, uint64_t offset)
{
    ops_tensor *t = draw(which, dt, n, seed, offset);
    const char *p = ops_tensor_data_ptr(t);
    for (int64_t e = 0; e < n; e++) {
        const double r = reference(which, dt, e, seed, offset);
        bool same;
        double got;
        if (dt == OPS_FLOAT32) {
            const float rf = (float)r;
            float gf;
            memcpy(&gf, p + 4 * e, 4);
            same = memcmp(&gf, &rf, 4) == 0;
            got = gf;
        } else {
            memcpy(&got, p + 8 * e, 8);
            same = memcmp(&got, &r, 8) == 0;
        }
        ck_assert_msg(same, "%s %s n=%lld offset=%llu element %lld at level %s: %.17g, the definition %.17g",
                      r_names[which], dt == OPS_FLOAT32 ? "float32" : "float64", (long long)n,
                      (unsigned long long)offset, (long long)e, ops_cpu_capability(), got, r);
    }
    ops_tensor_release(t);
}

START_TEST(test_random_streams)
{
    /* lengths around the vectors (4 to 64 blocks) and the 256-block chunks, offsets
     * that start mid-vector */
    static const int64_t ns[] = {1, 3, 4, 5, 63, 64, 65, 257, 1029, 4099};
    static const uint64_t offsets[] = {0, 3, 1000};
    for (int which = 0; which < R_NUM; which++)
        for (int di = 0; di < 2; di++)
            for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
                for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
                    check_stream(which, di ? OPS_FLOAT64 : OPS_FLOAT32, ns[i], UINT64_C(0x9e3779b97f4a7c15) + i,
                                 offsets[o]);
}
END_TEST

/* Above the grain size with two threads (each thread starts its chunks anywhere), and
 * a counter whose low word wraps inside a vector. */
START_TEST(test_random_streams_threads)
{
    ops_set_num_threads(2);
    for (int which = 0; which < R_NUM; which++) {
        check_stream(which, OPS_FLOAT32, 100003, 42, 17);
        check_stream(which, OPS_FLOAT32, 4099, 43, UINT64_C(0xFFFFFFFF) - 5);
        check_stream(which, OPS_FLOAT64, 4099, 43, UINT64_C(0x1FFFFFFFF) - 7);
    }
    ops_set_num_threads(1);
}
END_TEST

/* u1 = 0 (a word below 2^8: r = 0) with mean -0.0: the sign of the zero is the
 * scalar definition's (-0 + +0 = +0), at a block found by search (about one in 2^24). */
START_TEST(test_random_normal_zero_radius)
{
    const uint64_t seed = 7;
    const ops_philox_stream s = {{(uint32_t)seed, (uint32_t)(seed >> 32)}, 0};
    uint64_t b = 0;
    uint32_t w[4];
    for (;; b++) {
        ops_philox_block(&s, b, w);
        if ((w[0] >> 8) == 0 || (w[2] >> 8) == 0)
            break;
    }
    const uint64_t offset = b > 5 ? b - 5 : 0;
    ops_generator *g = ops_generator_create(seed);
    ops_generator_set_offset(g, offset);
    const int64_t n = 256;
    ops_tensor *t = ops_empty((ops_int_list){&n, 1}, OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_normal_(t, -0.0, 1.0, g), OPS_OK);
    const float *p = ops_tensor_data_ptr(t);
    const ops_rand_dist d = ops_rand_dist_make(OPS_RAND_NORMAL, OPS_FLOAT32, -0.0, 1.0, 0, 0);
    const ops_philox_stream st = {{(uint32_t)seed, (uint32_t)(seed >> 32)}, offset};
    for (int64_t e = 0; e < n; e++) {
        double f[4];
        int64_t iv[4];
        ops_rand_block(&d, &st, (uint64_t)(e / 4), f, iv);
        const float r = (float)f[e % 4];
        ck_assert_msg(memcmp(&p[e], &r, 4) == 0, "normal_(-0.0, 1) element %lld (block %llu) at %s: %g, the definition %g",
                      (long long)e, (unsigned long long)(offset + (uint64_t)e / 4), ops_cpu_capability(), p[e], r);
    }
    ops_tensor_release(t);
    ops_generator_release(g);
}
END_TEST

/* ---- pooling --------------------------------------------------------------------------- */

typedef struct pool_case {
    int64_t h, w, kh, kw, sh, sw, ph, pw, dh, dw;
} pool_case;

static int64_t
out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

/* x[i] of a contiguous tensor of dtype dt (float16, bfloat16, float32, float64) as a
 * double. */
static double
elem(const ops_tensor *t, int64_t i)
{
    const void *p = ops_tensor_data_ptr(t);
    switch (t->dtype) {
    case OPS_FLOAT16: return ops_half_to_float(((const ops_half *)p)[i]);
    case OPS_BFLOAT16: return ops_bfloat16_to_float(((const ops_bfloat16 *)p)[i]);
    case OPS_FLOAT64: return ((const double *)p)[i];
    default: return ((const float *)p)[i];
    }
}

/* The value want (computed in float, or in double for float64) rounded once to dt. */
static double
round_to(ops_dtype dt, double want)
{
    switch (dt) {
    case OPS_FLOAT16: return ops_half_to_float(ops_float_to_half((float)want));
    case OPS_BFLOAT16: return ops_bfloat16_to_float(ops_float_to_bfloat16((float)want));
    case OPS_FLOAT64: return want;
    default: return (float)want;
    }
}

static bool
same(double a, double b)
{
    return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* x: [2, ch, h, w] of dtype dt, NCHW with its row stride rs >= w (a narrowed view when
 * rs > w), or channels-last (cl; rs == w).  The values (small integers, NaN,
 * infinities) are exact in every dtype, so the reference scans them as doubles;
 * averages are summed in float (in double for float64) and rounded once, as the
 * scalar loops do. */
static void
check_pool(const pool_case *c, int64_t rs, int64_t ch, bool cl, unsigned seed, ops_dtype dt)
{
    const int64_t nb = 2, planes = nb * ch;
    const bool f64 = dt == OPS_FLOAT64;
    float *buf = malloc(sizeof(float) * (size_t)(planes * c->h * rs));
    srand(seed);
    for (int64_t i = 0; i < planes * c->h * rs; i++) {
        const int r = rand() % 1000;
        /* few distinct values (ties), some NaN and infinities */
        buf[i] = r < 5 ? NAN : r < 10 ? INFINITY : r < 15 ? -INFINITY : (float)(rand() % 7) - 3.0f;
    }
    /* element (n, ch, y, x) of the input at buf[AT(plane, y, x)] */
#define AT(pl, y, xx) (cl ? (((pl) / ch * c->h + (y)) * c->w + (xx)) * ch + (pl) % ch : ((pl) * c->h + (y)) * rs + (xx))
    const int64_t full[4] = {nb, ch, c->h, rs}, full_cl[4] = {nb, c->h, c->w, ch}, perm[4] = {0, 3, 1, 2};
    ops_tensor *base32 = ops_tensor_from_data(buf, (ops_int_list){cl ? full_cl : full, 4}, OPS_FLOAT32);
    ops_tensor *base = ops_to_dtype(base32, dt, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(base);
    ops_tensor *x = cl ? ops_permute(base, (ops_int_list){perm, 4}) : ops_narrow(base, 3, 0, c->w);
    ck_assert_ptr_nonnull(x);
    const int64_t k[2] = {c->kh, c->kw}, s[2] = {c->sh, c->sw}, p[2] = {c->ph, c->pw}, d[2] = {c->dh, c->dw};
    ops_tensor *v = NULL, *ix = NULL;
    ck_assert_int_eq(ops_max_pool2d_with_indices(x, (ops_int_list){k, 2}, (ops_int_list){s, 2},
                                                 (ops_int_list){p, 2}, (ops_int_list){d, 2}, false, &v, &ix),
                     OPS_OK);
    const int64_t oh = out_size(c->h, c->kh, c->sh, c->ph, c->dh), ow = out_size(c->w, c->kw, c->sw, c->pw, c->dw);
    ck_assert_int_eq(v->sizes[2], oh);
    ck_assert_int_eq(v->sizes[3], ow);
    ck_assert_int_eq(v->dtype, dt);
    const int64_t *pi = ops_tensor_data_ptr(ix);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                float m = -INFINITY;
                int64_t best = -1;
                for (int64_t ky = 0; ky < c->kh; ky++)
                    for (int64_t kx = 0; kx < c->kw; kx++) {
                        const int64_t y = oy * c->sh - c->ph + ky * c->dh, xx = ox * c->sw - c->pw + kx * c->dw;
                        if (y < 0 || y >= c->h || xx < 0 || xx >= c->w)
                            continue;
                        const float e = buf[AT(pl, y, xx)];
                        if (best < 0 || e > m || isnan(e))
                            m = e, best = y * c->w + xx;
                    }
                const int64_t o = (pl * oh + oy) * ow + ox;
                const double got = elem(v, o);
                ck_assert_msg(same(got, m) && pi[o] == best,
                              "max_pool2d %s %lldx%lld k%lldx%lld s%lldx%lld p%lldx%lld d%lldx%lld rs %lld cl %d at "
                              "%s: output (%lld, %lld, %lld) %g at %lld, expected %g at %lld",
                              ops_dtype_name(dt), (long long)c->h, (long long)c->w, (long long)c->kh,
                              (long long)c->kw, (long long)c->sh, (long long)c->sw, (long long)c->ph,
                              (long long)c->pw, (long long)c->dh, (long long)c->dw, (long long)rs, (int)cl,
                              ops_cpu_capability(), (long long)pl, (long long)oy, (long long)ox, got,
                              (long long)pi[o], m, (long long)best);
            }
    ops_tensor_release(v);
    ops_tensor_release(ix);
    if (c->dh == 1 && c->dw == 1 && 2 * c->ph <= c->kh && 2 * c->pw <= c->kw)
        for (int cip = 0; cip < 2; cip++) {
            ops_tensor *a = ops_avg_pool2d(x, (ops_int_list){k, 2}, (ops_int_list){s, 2}, (ops_int_list){p, 2},
                                           false, cip, NULL);
            ck_assert_ptr_nonnull(a);
            ck_assert_int_eq(a->dtype, dt);
            for (int64_t pl = 0; pl < planes; pl++)
                for (int64_t oy = 0; oy < oh; oy++)
                    for (int64_t ox = 0; ox < ow; ox++) {
                        const int64_t y0 = oy * c->sh - c->ph, x0 = ox * c->sw - c->pw;
                        const int64_t y1 = y0 + c->kh < c->h + c->ph ? y0 + c->kh : c->h + c->ph;
                        const int64_t x1 = x0 + c->kw < c->w + c->pw ? x0 + c->kw : c->w + c->pw;
                        const int64_t padded = (y1 - y0) * (x1 - x0);
                        float sum = 0.0f;
                        double sumd = 0.0;
                        int64_t cnt = 0;
                        for (int64_t y = y0; y < y1; y++)
                            for (int64_t xx = x0; xx < x1; xx++)
                                if (y >= 0 && y < c->h && xx >= 0 && xx < c->w) {
                                    sum += buf[AT(pl, y, xx)];
                                    sumd += buf[AT(pl, y, xx)];
                                    cnt++;
                                }
                        const int64_t dv = cip ? padded : cnt;
                        const double want = round_to(dt, f64 ? sumd / (double)dv : (double)(sum / (float)dv));
                        const double got = elem(a, (pl * oh + oy) * ow + ox);
                        ck_assert_msg(same(got, want),
                                      "avg_pool2d %s %lldx%lld k%lld s%lld p%lld cip %d cl %d at %s: (%lld, %lld, "
                                      "%lld) %g, expected %g",
                                      ops_dtype_name(dt), (long long)c->h, (long long)c->w, (long long)c->kw,
                                      (long long)c->sw, (long long)c->pw, cip, (int)cl, ops_cpu_capability(),
                                      (long long)pl, (long long)oy, (long long)ox, got, want);
                    }
            ops_tensor_release(a);
        }
#undef AT
    ops_tensor_release(x);
    ops_tensor_release(base);
    ops_tensor_release(base32);
    free(buf);
}

START_TEST(test_pool_rows)
{
    static const pool_case cases[] = {
        {56, 56, 3, 3, 2, 2, 0, 0, 1, 1}, /* the ResNet stem's pooling, without and with padding */
        {56, 56, 3, 3, 2, 2, 1, 1, 1, 1},
        {37, 41, 2, 2, 2, 2, 0, 0, 1, 1},
        {19, 77, 3, 3, 1, 1, 1, 1, 1, 1}, /* stride 1: plain loads */
        {23, 100, 3, 3, 3, 3, 0, 0, 1, 1}, /* stride 3: gathers */
        {30, 90, 3, 3, 2, 2, 1, 1, 2, 2}, /* dilation */
        {21, 131, 5, 4, 2, 2, 2, 2, 1, 1},
        {9, 35, 1, 1, 2, 2, 0, 0, 1, 1},
        {12, 9, 3, 3, 1, 1, 0, 0, 1, 1}, /* rows shorter than a vector */
    };
    static const ops_dtype dts[] = {OPS_FLOAT32, OPS_FLOAT64, OPS_FLOAT16, OPS_BFLOAT16};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const unsigned sd = 1000 * (unsigned)t + (unsigned)i;
            check_pool(&cases[i], cases[i].w, 3, false, 100 + sd, dts[t]);
            check_pool(&cases[i], cases[i].w + 5, 3, false, 200 + sd, dts[t]);
            /* channels-last: fewer channels than a vector, a few vectors and a tail */
            check_pool(&cases[i], cases[i].w, 3, true, 300 + sd, dts[t]);
            check_pool(&cases[i], cases[i].w, 37, true, 400 + sd, dts[t]);
        }
}
END_TEST

/* x: [2, ch, h, w] of dtype dt in layout lay (0: NCHW, 1: NCHW with a row stride of
 * w + 5, 2: channels-last); the same values as check_pool.  adaptive_max_pool2d and
 * adaptive_avg_pool2d to [oh, ow] against the scans written here: window
 * [o * in / out, ceil((o + 1) * in / out)) per dim, NaN wins, the first of equal maxima
 * wins, the sum from 0 in row order (in float; double for float64) divided by the
 * window's size, rounded once. */
static void
check_adaptive(int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t ch, int lay, unsigned seed, ops_dtype dt)
{
    const int64_t nb = 2, planes = nb * ch, rs = lay == 1 ? w + 5 : w;
    const bool f64 = dt == OPS_FLOAT64, cl = lay == 2;
    float *buf = malloc(sizeof(float) * (size_t)(planes * h * rs));
    srand(seed);
    for (int64_t i = 0; i < planes * h * rs; i++) {
        const int r = rand() % 1000;
        buf[i] = r < 5 ? NAN : r < 10 ? INFINITY : r < 15 ? -INFINITY : (float)(rand() % 7) - 3.0f;
    }
#define AT(pl, y, xx) (cl ? (((pl) / ch * h + (y)) * w + (xx)) * ch + (pl) % ch : ((pl) * h + (y)) * rs + (xx))
    const int64_t full[4] = {nb, ch, h, rs}, full_cl[4] = {nb, h, w, ch}, perm[4] = {0, 3, 1, 2};
    ops_tensor *base32 = ops_tensor_from_data(buf, (ops_int_list){cl ? full_cl : full, 4}, OPS_FLOAT32);
    ops_tensor *base = ops_to_dtype(base32, dt, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(base);
    ops_tensor *x = cl ? ops_permute(base, (ops_int_list){perm, 4}) : ops_narrow(base, 3, 0, w);
    ck_assert_ptr_nonnull(x);
    const int64_t os[2] = {oh, ow};
    ops_tensor *v = NULL, *ix = NULL;
    ck_assert_int_eq(ops_adaptive_max_pool2d(x, (ops_int_list){os, 2}, &v, &ix), OPS_OK);
    ops_tensor *a = ops_adaptive_avg_pool2d(x, (ops_int_list){os, 2});
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(v->dtype, dt);
    ck_assert_int_eq(a->dtype, dt);
    const int64_t *pi = ops_tensor_data_ptr(ix);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                const int64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
                const int64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
                float m = -INFINITY, sum = 0.0f;
                double sumd = 0.0;
                int64_t best = -1;
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t xx = x0; xx < x1; xx++) {
                        const float e = buf[AT(pl, y, xx)];
                        if (best < 0 || e > m || isnan(e))
                            m = e, best = y * w + xx;
                        sum += e;
                        sumd += e;
                    }
                const int64_t o = (pl * oh + oy) * ow + ox, dv = (y1 - y0) * (x1 - x0);
                const double want = round_to(dt, f64 ? sumd / (double)dv : (double)(sum / (float)dv));
                const double got = elem(v, o), gota = elem(a, o);
                ck_assert_msg(same(got, m) && pi[o] == best && same(gota, want),
                              "adaptive pools %s %lldx%lld -> %lldx%lld, %lld channels, layout %d at %s: output "
                              "(%lld, %lld, %lld) max %g at %lld, expected %g at %lld; avg %g, expected %g",
                              ops_dtype_name(dt), (long long)h, (long long)w, (long long)oh, (long long)ow,
                              (long long)ch, lay, ops_cpu_capability(), (long long)pl, (long long)oy, (long long)ox,
                              got, (long long)pi[o], m, (long long)best, gota, want);
            }
#undef AT
    ops_tensor_release(v);
    ops_tensor_release(ix);
    ops_tensor_release(a);
    ops_tensor_release(x);
    ops_tensor_release(base);
    ops_tensor_release(base32);
    free(buf);
}

START_TEST(test_pool_adaptive)
{
    /* {h, w, oh, ow}: ResNet's head (to 1x1), windows that divide, windows that do not
     * (overlapping), more outputs than inputs along a dim */
    static const int64_t cases[][4] = {{7, 7, 1, 1}, {56, 56, 7, 7}, {13, 11, 4, 5}, {9, 10, 3, 7}, {5, 3, 7, 2}};
    static const ops_dtype dts[] = {OPS_FLOAT32, OPS_FLOAT64, OPS_FLOAT16, OPS_BFLOAT16};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int lay = 0; lay < 3; lay++) {
                const unsigned sd = 1000 * (unsigned)t + 10 * (unsigned)i + (unsigned)lay;
                const int64_t *c = cases[i];
                check_adaptive(c[0], c[1], c[2], c[3], 3, lay, 500 + sd, dts[t]);
                check_adaptive(c[0], c[1], c[2], c[3], 37, lay, 600 + sd, dts[t]);
                if (c[0] * c[1] <= 100) /* small planes: two passes of the channel loops */
                    check_adaptive(c[0], c[1], c[2], c[3], 1100, lay, 700 + sd, dts[t]);
            }
}
END_TEST

static Suite *
vec_randpool_suite(void)
{
    Suite *s = suite_create("vec_randpool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_random_streams);
    tcase_add_test(tc, test_random_streams_threads);
    tcase_add_test(tc, test_random_normal_zero_radius);
    tcase_add_test(tc, test_pool_rows);
    tcase_add_test(tc, test_pool_adaptive);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    printf("CPU level: %s\n", ops_cpu_capability());
    SRunner *sr = srunner_create(vec_randpool_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

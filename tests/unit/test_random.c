/* Random numbers: the Philox4x32-10 block function against the Random123 known-answer
 * vectors, the generator objects (seed, offset, clone, the default generator, a
 * shared generator under threads), reproducibility (same seed and offset, 1 vs 2
 * threads, the documented stream layout), and statistical tests of every sampling op
 * at fixed seeds.
 *
 * The statistical bounds come from the distributions, never from our output: means
 * and variances within 5 standard errors (the standard errors written out from the
 * distribution's moments), and chi-square goodness-of-fit statistics below the 0.999
 * quantile of the chi-square distribution with the test's degrees of freedom, taken
 * from the standard table (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.4; the
 * Wilson-Hilferty approximation agrees to 0.2%).  At a fixed seed each test is
 * deterministic; a correct generator fails one of them with probability ~1e-3. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_op_bernoulli.h"
#include "ops_op_dropout.h"
#include "ops_op_empty.h"
#include "ops_op_exponential.h"
#include "ops_op_multinomial.h"
#include "ops_op_native_dropout.h"
#include "ops_op_normal.h"
#include "ops_op_ones.h"
#include "ops_op_rand.h"
#include "ops_op_randint.h"
#include "ops_op_randn.h"
#include "ops_op_randperm.h"
#include "ops_op_select.h"
#include "ops_op_uniform.h"
#include "ops_op_zeros.h"
#include "ops_internal.h"
#include "ops_random.h"

/* chi-square 0.999 quantiles (upper-tail probability 0.001), by degrees of freedom */
#define CHI2_999_DF3 16.266
#define CHI2_999_DF9 27.877
#define CHI2_999_DF25 52.620
#define CHI2_999_DF50 86.661
#define CHI2_999_DF99 148.230

#define N_STAT 1000000

/* ---- Philox known answers ---------------------------------------------------------- */

/* Random123's kat_vectors, philox4x32 with 10 rounds: counter[4] key[2] -> output[4]. */
START_TEST(test_philox_kat)
{
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        uint32_t out[4];
        ops_philox4x32_10(kat[i].ctr, kat[i].key, out);
        for (int j = 0; j < 4; j++)
            ck_assert_msg(out[j] == kat[i].out[j], "vector %zu word %d: %08x, expected %08x", i, j, out[j],
                          kat[i].out[j]);
    }
}
END_TEST

/* ---- generator objects --------------------------------------------------------------- */

START_TEST(test_generator_state)
{
    ops_generator *g = ops_generator_create(1234);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(ops_generator_seed(g), 1234);
    ck_assert_uint_eq(ops_generator_offset(g), 0);
    ops_philox_stream s;
    ops_generator_reserve(g, 10, &s);
    ck_assert_uint_eq(s.base, 0);
    ck_assert_uint_eq(s.key[0], 1234);
    ck_assert_uint_eq(s.key[1], 0);
    ck_assert_uint_eq(ops_generator_offset(g), 10);
    ops_generator *c = ops_generator_clone(g);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(ops_generator_seed(c), 1234);
    ck_assert_uint_eq(ops_generator_offset(c), 10);
    ops_generator_set_offset(g, 77);
    ck_assert_uint_eq(ops_generator_offset(g), 77);
    ck_assert_uint_eq(ops_generator_offset(c), 10); /* a clone is independent */
    ops_generator_set_seed(g, UINT64_C(0x123456789abcdef0));
    ck_assert_uint_eq(ops_generator_offset(g), 0); /* reseeding restarts the stream */
    ops_generator_reserve(g, 1, &s);
    ck_assert_uint_eq(s.key[0], 0x9abcdef0u);
    ck_assert_uint_eq(s.key[1], 0x12345678u);
    ops_generator_release(g);
    ops_generator_release(c);
    ops_generator_release(NULL);

    /* the default generator: NULL everywhere, reseeded by ops_manual_seed */
    ops_generator *d = ops_default_generator();
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(ops_generator_seed(NULL), OPS_DEFAULT_RNG_SEED);
    ops_manual_seed(99);
    ck_assert_uint_eq(ops_generator_seed(d), 99);
    ck_assert_uint_eq(ops_generator_offset(NULL), 0);
    ops_generator_release(d); /* a no-op */
    ck_assert_uint_eq(ops_generator_seed(NULL), 99);
}
END_TEST

START_TEST(test_generator_oom)
{
    ops_alloc_fail_nth(1);
    ops_generator *g = ops_generator_create(1);
    ops_alloc_fail_nth(0);
    ck_assert_ptr_null(g);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
}
END_TEST

typedef struct reserver {
    ops_generator *g;
    uint64_t *bases;
    int n;
} reserver;

static void *
reserve_many(void *arg)
{
    reserver *r = arg;
    for (int i = 0; i < r->n; i++) {
        ops_philox_stream s;
        ops_generator_reserve(r->g, 3, &s);
        r->bases[i] = s.base;
    }
    return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Four threads taking ranges from one generator get disjoint ranges covering the
 * stream without gaps. */
START_TEST(test_generator_threads)
{
    enum { T = 4, PER = 20000 };
    ops_generator *g = ops_generator_create(5);
    uint64_t *bases = malloc(sizeof(uint64_t) * T * PER);
    ck_assert_ptr_nonnull(bases);
    pthread_t th[T];
    reserver r[T];
    for (int t = 0; t < T; t++) {
        r[t] = (reserver){g, bases + t * PER, PER};
        ck_assert_int_eq(pthread_create(&th[t], NULL, reserve_many, &r[t]), 0);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    ck_assert_uint_eq(ops_generator_offset(g), (uint64_t)T * PER * 3);
    qsort(bases, T * PER, sizeof *bases, cmp_u64);
    for (int i = 0; i < T * PER; i++)
        ck_assert_uint_eq(bases[i], (uint64_t)i * 3);
    free(bases);
    ops_generator_release(g);
}
END_TEST

/* ---- reproducibility ----------------------------------------------------------------- */

static ops_tensor *
rand_n(int64_t n, ops_generator *g, ops_dtype dt)
{
    ops_tensor *t = ops_rand((ops_int_list){&n, 1}, g, dt, OPS_DEVICE_UNSPECIFIED);
    ck_assert_msg(t != NULL, "rand: %s", ops_last_error());
    return t;
}

static bool
same_bytes(const ops_tensor *a, const ops_tensor *b)
{
    return ops_tensor_numel(a) == ops_tensor_numel(b) && ops_tensor_dtype(a) == ops_tensor_dtype(b) &&
           memcmp(ops_tensor_data_ptr(a), ops_tensor_data_ptr(b), (size_t)ops_tensor_numel(a) * ops_tensor_itemsize(a)) ==
               0;
}

START_TEST(test_same_seed_same_values)
{
    ops_generator *g = ops_generator_create(2024);
    ops_tensor *a = rand_n(1000, g, OPS_FLOAT32);
    /* 1000 float32 uniforms use one word each: 250 blocks */
    ck_assert_uint_eq(ops_generator_offset(g), 250);
    ops_tensor *b = rand_n(1000, g, OPS_FLOAT32);
    ck_assert(!same_bytes(a, b)); /* the stream moved on */
    ops_generator_set_seed(g, 2024);
    ops_tensor *c = rand_n(1000, g, OPS_FLOAT32);
    ck_assert(same_bytes(a, c));

    /* the default generator, through ops_manual_seed */
    ops_manual_seed(2024);
    ops_tensor *d = rand_n(1000, NULL, OPS_FLOAT32);
    ck_assert(same_bytes(a, d));

    /* a clone continues where the original stands */
    ops_generator_set_offset(g, 250);
    ops_generator *k = ops_generator_clone(g);
    ops_tensor *e = rand_n(1000, k, OPS_FLOAT32);
    ck_assert(same_bytes(b, e));
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
    ops_tensor_release(d);
    ops_tensor_release(e);
    ops_generator_release(g);
    ops_generator_release(k);
}
END_TEST

/* The out= forms draw the same values as the functional ones, into out's dtype, and
 * refuse a dtype the op does not produce, leaving out as it was. */
START_TEST(test_out_forms)
{
    ops_generator *g = ops_generator_create(8);
    ops_tensor *a = ops_randn(OPS_INTS(3, 4), g, OPS_FLOAT64, OPS_DEVICE_UNSPECIFIED);
    ops_generator_set_offset(g, 0);
    ops_tensor *o = ops_empty(OPS_INTS(0), OPS_FLOAT64, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_randn_generator_out(OPS_INTS(3, 4), g, o), OPS_OK);
    ck_assert_int_eq(ops_tensor_ndim(o), 2);
    ck_assert(same_bytes(a, o));
    ops_tensor *i = ops_zeros(OPS_INTS(5), OPS_INT64, OPS_DEVICE_UNSPECIFIED);
    ck_assert_int_ne(ops_rand_out(OPS_INTS(5), i), OPS_OK);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DTYPE);
    for (int k = 0; k < 5; k++)
        ck_assert(((int64_t *)ops_tensor_data_ptr(i))[k] == 0);
    ck_assert_int_eq(ops_randperm_out(5, i), OPS_OK);
    int64_t sum = 0;
    for (int k = 0; k < 5; k++)
        sum += ((int64_t *)ops_tensor_data_ptr(i))[k];
    ck_assert_int_eq(sum, 10);
    ops_tensor_release(i);
    ops_tensor_release(o);
    ops_tensor_release(a);
    ops_generator_release(g);
}
END_TEST

/* The documented layout: element i of a float32 rand uses word i of the stream, so at
 * offset 5 (blocks) the values are those of offset 0 shifted by 20 elements, and
 * element 0 is the top 24 bits of word 0 of block (seed, offset). */
START_TEST(test_stream_layout)
{
    const uint64_t seed = UINT64_C(0xfeedface12345678);
    ops_generator *g = ops_generator_create(seed);
    ops_tensor *a = rand_n(120, g, OPS_FLOAT32);
    ops_generator_set_offset(g, 5);
    ops_tensor *b = rand_n(100, g, OPS_FLOAT32);
    const float *pa = ops_tensor_data_ptr(a), *pb = ops_tensor_data_ptr(b);
    ck_assert(memcmp(pa + 20, pb, 100 * sizeof(float)) == 0);
    ck_assert(memcmp(pa, pb, 100 * sizeof(float)) != 0); /* different offsets differ */

    const uint32_t ctr[4] = {0, 0, 0, 0}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    ops_philox4x32_10(ctr, key, w);
    for (int j = 0; j < 4; j++)
        ck_assert(pa[j] == (float)(w[j] >> 8) / 16777216.0f);
    /* float64 uses two words per element: element 1 is words 2 and 3 */
    ops_generator_set_offset(g, 0);
    ops_tensor *c = rand_n(2, g, OPS_FLOAT64);
    ck_assert_uint_eq(ops_generator_offset(g), 1);
    const double *pc = ops_tensor_data_ptr(c);
    ck_assert(pc[1] == (double)((((uint64_t)w[3] << 32) | w[2]) >> 11) / 9007199254740992.0);
    /* randn float64: elements 2m and 2m + 1 are r cos(2 pi u2), r sin(2 pi u2) of block m,
     * checked here against libm at many blocks (the kernel has its own sin/cos) */
    ops_generator_set_offset(g, 0);
    ops_tensor *z = ops_randn(OPS_INTS(2000), g, OPS_FLOAT64, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(z);
    ck_assert_uint_eq(ops_generator_offset(g), 1000);
    const double *pz = ops_tensor_data_ptr(z);
    for (uint32_t m = 0; m < 1000; m++) {
        const uint32_t cm[4] = {m, 0, 0, 0};
        ops_philox4x32_10(cm, key, w);
        const double u1 = (double)((((uint64_t)w[1] << 32) | w[0]) >> 11) / 9007199254740992.0;
        const double u2 = (double)((((uint64_t)w[3] << 32) | w[2]) >> 11) / 9007199254740992.0;
        const double r = sqrt(-2.0 * log1p(-u1));
        const double z0 = r * cos(2 * M_PI * u2), z1 = r * sin(2 * M_PI * u2);
        ck_assert_msg(fabs(pz[2 * m] - z0) <= 1e-14 * (1 + fabs(z0)), "block %u: %.17g vs %.17g", m, pz[2 * m], z0);
        ck_assert_msg(fabs(pz[2 * m + 1] - z1) <= 1e-14 * (1 + fabs(z1)), "block %u: %.17g vs %.17g", m, pz[2 * m + 1],
                      z1);
    }
    ops_tensor_release(z);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
    ops_generator_release(g);
}
END_TEST

/* Values do not depend on the thread count (sizes above the grain size). */
START_TEST(test_threads_same_values)
{
    const int64_t n = 300001;
    for (int kind = 0; kind < 4; kind++) {
        ops_tensor *r[2];
        for (int t = 0; t < 2; t++) {
            ops_set_num_threads(t + 1);
            ops_generator *g = ops_generator_create(77);
            const ops_int_list size = {&n, 1};
            switch (kind) {
            case 0:
                r[t] = ops_rand(size, g, OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED);
                break;
            case 1:
                r[t] = ops_randn(size, g, OPS_FLOAT64, OPS_DEVICE_UNSPECIFIED);
                break;
            case 2:
                r[t] = ops_randint_low(-5, 1000, size, g, OPS_INT32, OPS_DEVICE_UNSPECIFIED);
                break;
            default: {
                ops_tensor *x = ops_ones(size, OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED);
                ops_generator_set_offset(NULL, 3);
                r[t] = ops_dropout(x, 0.25, true);
                ops_tensor_release(x);
                break;
            }
            }
            ck_assert_msg(r[t] != NULL, "%s", ops_last_error());
            ops_generator_release(g);
        }
        ops_set_num_threads(0);
        ck_assert_msg(same_bytes(r[0], r[1]), "kind %d differs between 1 and 2 threads", kind);
        ops_tensor_release(r[0]);
        ops_tensor_release(r[1]);
    }
}
END_TEST

/* ---- statistics ----------------------------------------------------------------------- */

static double
as_double(const ops_tensor *t, int64_t i)
{
    ops_scalar s = ops_scalar_load((const char *)ops_tensor_data_ptr(t) + i * (int64_t)ops_tensor_itemsize(t),
                                   ops_tensor_dtype(t));
    return ops_scalar_to_double(s);
}

static void
moments(const ops_tensor *t, double *mean, double *var)
{
    const int64_t n = ops_tensor_numel(t);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++)
        s += as_double(t, i);
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        const double d = as_double(t, i) - *mean;
        s2 += d * d;
    }
    *var = s2 / (double)(n - 1);
}

/* sum (obs - exp)^2 / exp */
static double
chi2(const int64_t *obs, const double *expct, int bins)
{
    double c = 0;
    for (int b = 0; b < bins; b++)
        c += ((double)obs[b] - expct[b]) * ((double)obs[b] - expct[b]) / expct[b];
    return c;
}

START_TEST(test_uniform_stats)
{
    /* U(0,1): mean 1/2, variance 1/12; SE(mean) = sqrt(1/12 / n) = 2.887e-4, SE(var) =
     * sqrt((1/80 - 1/144) / n) = 7.45e-5 for n = 1e6 */
    const ops_dtype dts[2] = {OPS_FLOAT32, OPS_FLOAT64};
    for (int k = 0; k < 2; k++) {
        ops_generator *g = ops_generator_create(11 + (uint64_t)k);
        ops_tensor *t = rand_n(N_STAT, g, dts[k]);
        double mean, var, lo = 1, hi = 0;
        moments(t, &mean, &var);
        ck_assert_msg(fabs(mean - 0.5) < 5 * 2.887e-4, "mean %g", mean);
        ck_assert_msg(fabs(var - 1.0 / 12) < 5 * 7.45e-5, "variance %g", var);
        int64_t obs[100] = {0};
        double expct[100];
        for (int64_t i = 0; i < N_STAT; i++) {
            const double v = as_double(t, i);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
            obs[(int)(v * 100)]++;
        }
        ck_assert(lo >= 0.0 && hi < 1.0);
        for (int b = 0; b < 100; b++)
            expct[b] = N_STAT / 100.0;
        const double c = chi2(obs, expct, 100);
        ck_assert_msg(c < CHI2_999_DF99, "chi-square %g (df 99)", c);
        ops_tensor_release(t);
        ops_generator_release(g);
    }
    /* uniform_(from, to) on a strided float16 view stays in [from, to] */
    ops_generator *g = ops_generator_create(3);
    ops_tensor *h = ops_empty(OPS_INTS(200, 2), OPS_FLOAT16, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *v = ops_select(h, 1, 0);
    ck_assert_int_eq(ops_uniform_(v, -2.0, 3.0, g), OPS_OK);
    for (int64_t i = 0; i < 200; i++) {
        const double x = as_double(h, 2 * i);
        ck_assert(x >= -2.0 && x <= 3.0);
    }
    ops_tensor_release(v);
    ops_tensor_release(h);
    ops_generator_release(g);
}
END_TEST

static double
normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

START_TEST(test_normal_stats)
{
    /* N(0,1): SE(mean) = 1e-3, SE(var) = sqrt(2 / n) = 1.414e-3 */
    const ops_dtype dts[2] = {OPS_FLOAT32, OPS_FLOAT64};
    for (int k = 0; k < 2; k++) {
        ops_generator *g = ops_generator_create(21 + (uint64_t)k);
        const int64_t n = N_STAT;
        ops_tensor *t = ops_randn((ops_int_list){&n, 1}, g, dts[k], OPS_DEVICE_UNSPECIFIED);
        ck_assert_ptr_nonnull(t);
        double mean, var;
        moments(t, &mean, &var);
        ck_assert_msg(fabs(mean) < 5 * 1e-3, "mean %g", mean);
        ck_assert_msg(fabs(var - 1.0) < 5 * 1.414e-3, "variance %g", var);
        /* 26 bins: (-inf, -3), [-3 + 0.25 j, -2.75 + 0.25 j) for j < 24, [3, inf) */
        int64_t obs[26] = {0};
        double expct[26];
        for (int64_t i = 0; i < n; i++) {
            const double v = as_double(t, i);
            const int b = v < -3 ? 0 : v >= 3 ? 25 : 1 + (int)((v + 3) / 0.25);
            obs[b]++;
        }
        for (int b = 0; b < 26; b++) {
            const double lo = b == 0 ? -INFINITY : -3 + 0.25 * (b - 1);
            const double hi = b == 25 ? INFINITY : -3 + 0.25 * b;
            expct[b] = (double)n * (normal_cdf(hi) - normal_cdf(lo));
        }
        const double c = chi2(obs, expct, 26);
        ck_assert_msg(c < CHI2_999_DF25, "chi-square %g (df 25)", c);
        ops_tensor_release(t);
        ops_generator_release(g);
    }
    /* normal_(mean, std) in place: moments move accordingly (SE(mean) = 3e-3 * ...) */
    ops_generator *g = ops_generator_create(5);
    ops_tensor *t = ops_empty(OPS_INTS(1000, 1000), OPS_FLOAT64, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_normal_(t, 10.0, 3.0, g), OPS_OK);
    double mean, var;
    moments(t, &mean, &var);
    ck_assert_msg(fabs(mean - 10.0) < 5 * 3e-3, "mean %g", mean);
    ck_assert_msg(fabs(var - 9.0) < 5 * 9 * 1.414e-3, "variance %g", var);
    ops_tensor_release(t);
    ops_generator_release(g);
}
END_TEST

START_TEST(test_exponential_stats)
{
    /* Exp(lambda = 2): mean 1/2, SE = 0.5 / sqrt(n) = 5e-4; chi-square over 51 bins of
     * width 0.05 up to 2.5 and a tail */
    ops_generator *g = ops_generator_create(31);
    ops_tensor *t = ops_empty(OPS_INTS(N_STAT), OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_exponential_(t, 2.0, g), OPS_OK);
    double mean, var;
    moments(t, &mean, &var);
    ck_assert_msg(fabs(mean - 0.5) < 5 * 5e-4, "mean %g", mean);
    int64_t obs[51] = {0};
    double expct[51];
    for (int64_t i = 0; i < N_STAT; i++) {
        const double v = as_double(t, i);
        ck_assert(v >= 0);
        const int b = (int)(v / 0.05);
        obs[b < 50 ? b : 50]++;
    }
    for (int b = 0; b < 51; b++) {
        const double lo = 0.05 * b, hi = b == 50 ? INFINITY : 0.05 * (b + 1);
        expct[b] = N_STAT * (exp(-2 * lo) - (isinf(hi) ? 0 : exp(-2 * hi)));
    }
    const double c = chi2(obs, expct, 51);
    ck_assert_msg(c < CHI2_999_DF50, "chi-square %g (df 50)", c);
    ops_tensor_release(t);
    ops_generator_release(g);
}
END_TEST

START_TEST(test_randint_stats)
{
    ops_generator *g = ops_generator_create(41);
    const int64_t n = N_STAT;
    ops_tensor *t = ops_randint(10, (ops_int_list){&n, 1}, g, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_dtype(t), OPS_INT64); /* PyTorch's default */
    int64_t obs[10] = {0};
    double expct[10];
    const int64_t *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++) {
        ck_assert(p[i] >= 0 && p[i] < 10);
        obs[p[i]]++;
    }
    for (int b = 0; b < 10; b++)
        expct[b] = n / 10.0;
    const double c = chi2(obs, expct, 10);
    ck_assert_msg(c < CHI2_999_DF9, "chi-square %g (df 9)", c);
    ops_tensor_release(t);

    /* a range wider than 2^32 (two words per element) and a negative low, int8 bounds */
    ops_tensor *w = ops_randint_low(-(INT64_C(1) << 40), INT64_C(1) << 40, OPS_INTS(1000), g, OPS_INT64,
                                    OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(w);
    const int64_t *pw = ops_tensor_data_ptr(w);
    int64_t negatives = 0;
    for (int i = 0; i < 1000; i++) {
        ck_assert(pw[i] >= -(INT64_C(1) << 40) && pw[i] < (INT64_C(1) << 40));
        negatives += pw[i] < 0;
    }
    /* Binomial(1000, 1/2): SE 15.8 */
    ck_assert_msg(llabs(negatives - 500) < 80, "%lld negatives", (long long)negatives);
    ops_tensor_release(w);
    ops_tensor *s = ops_randint_low(-128, 128, OPS_INTS(5000), g, OPS_INT8, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(s);
    bool seen_min = false, seen_max = false;
    for (int i = 0; i < 5000; i++) {
        seen_min |= ((int8_t *)ops_tensor_data_ptr(s))[i] == -128;
        seen_max |= ((int8_t *)ops_tensor_data_ptr(s))[i] == 127;
    }
    ck_assert(seen_min && seen_max); /* each is missed with probability (255/256)^5000 ~ 3e-9 */
    ops_tensor_release(s);

    /* errors */
    ck_assert_ptr_null(ops_randint_low(5, 5, OPS_INTS(3), g, OPS_INT64, OPS_DEVICE_UNSPECIFIED));
    ck_assert_str_eq(ops_last_error(), "randint: random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
    ck_assert_ptr_null(ops_randint(300, OPS_INTS(3), g, OPS_UINT8, OPS_DEVICE_UNSPECIFIED));
    ck_assert_str_eq(ops_last_error(), "randint: to - 1 is out of bounds for uint8");
    ops_generator_release(g);
}
END_TEST

START_TEST(test_randperm)
{
    ops_generator *g = ops_generator_create(51);
    for (int64_t n = 0; n < 40; n += 13) {
        ops_tensor *t = ops_randperm(n, g, OPS_INT64, OPS_DEVICE_UNSPECIFIED);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(ops_tensor_numel(t), n);
        bool seen[40] = {false};
        for (int64_t i = 0; i < n; i++) {
            const int64_t v = ((int64_t *)ops_tensor_data_ptr(t))[i];
            ck_assert(v >= 0 && v < n && !seen[v]);
            seen[v] = true;
        }
        ops_tensor_release(t);
    }
    /* float32 result, and uniformity of the first element over 3 values:
     * 30000 permutations of 3, chi-square with df 2 below 13.816 */
    int64_t first[3] = {0};
    for (int r = 0; r < 30000; r++) {
        ops_tensor *t = ops_randperm(3, g, OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED);
        ck_assert_ptr_nonnull(t);
        const float *p = ops_tensor_data_ptr(t);
        ck_assert(p[0] + p[1] + p[2] == 3.0f && p[0] != p[1] && p[1] != p[2] && p[0] != p[2]);
        first[(int)p[0]]++;
        ops_tensor_release(t);
    }
    const double e3[3] = {10000, 10000, 10000};
    ck_assert_msg(chi2(first, e3, 3) < 13.816, "chi-square %g (df 2)", chi2(first, e3, 3));
    ck_assert_ptr_null(ops_randperm(-1, g, OPS_INT64, OPS_DEVICE_UNSPECIFIED));
    ck_assert_ptr_null(ops_randperm(300, g, OPS_UINT8, OPS_DEVICE_UNSPECIFIED));
    ck_assert(strstr(ops_last_error(), "n is too large for result tensor type") != NULL);
    ops_tensor *d = ops_randperm(5, NULL, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
    ck_assert_int_eq(ops_tensor_dtype(d), OPS_INT64);
    ops_tensor_release(d);
    ops_generator_release(g);
}
END_TEST

START_TEST(test_bernoulli)
{
    /* bernoulli.p: frequency of ones within 5 SE (SE = sqrt(0.3 * 0.7 / n) = 4.58e-4) */
    ops_generator *g = ops_generator_create(61);
    ops_tensor *z = ops_zeros(OPS_INTS(N_STAT), OPS_INT32, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *b = ops_bernoulli_p(z, 0.3, g);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(ops_tensor_dtype(b), OPS_INT32);
    double mean, var;
    moments(b, &mean, &var);
    ck_assert_msg(fabs(mean - 0.3) < 5 * 4.58e-4, "frequency %g", mean);
    ops_tensor_release(b);

    /* bernoulli(probabilities): p = 0 never, p = 1 always, p = 0.5 about half */
    ops_tensor *p = ops_empty(OPS_INTS(3, 100000), OPS_FLOAT64, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    double *pp = ops_tensor_data_ptr(p);
    for (int i = 0; i < 300000; i++)
        pp[i] = i < 100000 ? 0.0 : i < 200000 ? 1.0 : 0.5;
    b = ops_bernoulli(p, g);
    ck_assert_ptr_nonnull(b);
    const double *pb = ops_tensor_data_ptr(b);
    int64_t half = 0;
    for (int i = 0; i < 300000; i++) {
        if (i < 100000)
            ck_assert(pb[i] == 0.0);
        else if (i < 200000)
            ck_assert(pb[i] == 1.0);
        else
            half += pb[i] == 1.0;
    }
    /* Binomial(1e5, 1/2): SE 158 */
    ck_assert_msg(llabs(half - 50000) < 5 * 158, "%lld ones", (long long)half);
    ops_tensor_release(b);
    pp[7] = 1.5;
    ck_assert_ptr_null(ops_bernoulli(p, g));
    ck_assert(strstr(ops_last_error(), "p_in >= 0 && p_in <= 1") != NULL);

    /* bernoulli_ in place on bool, and its argument check leaving self untouched */
    ops_tensor *t = ops_zeros(OPS_INTS(1000), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ck_assert_int_eq(ops_bernoulli_float_(t, 1.0, g), OPS_OK);
    for (int i = 0; i < 1000; i++)
        ck_assert(((bool *)ops_tensor_data_ptr(t))[i]);
    ck_assert_int_ne(ops_bernoulli_float_(t, -0.5, g), OPS_OK);
    ck_assert_str_eq(ops_last_error(), "bernoulli_: bernoulli_ expects p to be in [0, 1], but got p=-0.5");
    ops_tensor_release(t);
    ops_tensor_release(p);
    ops_tensor_release(z);
    ops_generator_release(g);
}
END_TEST

START_TEST(test_multinomial)
{
    ops_generator *g = ops_generator_create(71);
    /* with replacement: frequencies of [0.1, 0.2, 0.3, 0.4] (weights 1:2:3:4, unnormalised) */
    const float w[4] = {1, 2, 3, 4};
    ops_tensor *p = ops_tensor_from_data(w, OPS_INTS(4), OPS_FLOAT32);
    const int64_t n = 100000;
    ops_tensor *s = ops_multinomial(p, n, true, g);
    ck_assert_msg(s != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_dtype(s), OPS_INT64);
    ck_assert_int_eq(ops_tensor_numel(s), n);
    int64_t obs[4] = {0};
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = ((int64_t *)ops_tensor_data_ptr(s))[i];
        ck_assert(v >= 0 && v < 4);
        obs[v]++;
    }
    const double e4[4] = {0.1 * n, 0.2 * n, 0.3 * n, 0.4 * n};
    ck_assert_msg(chi2(obs, e4, 4) < CHI2_999_DF3, "chi-square %g (df 3)", chi2(obs, e4, 4));
    ops_tensor_release(s);
    ops_tensor_release(p);

    /* without replacement, 2-D: distinct indices per row, never a zero-probability one */
    double q[5 * 6];
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 6; c++)
            q[r * 6 + c] = c == r ? 0.0 : 1.0 + c;
    p = ops_tensor_from_data(q, OPS_INTS(5, 6), OPS_FLOAT64);
    for (int rep = 0; rep < 200; rep++) {
        s = ops_multinomial(p, 5, false, g);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(ops_tensor_size(s, 0), 5);
        ck_assert_int_eq(ops_tensor_size(s, 1), 5);
        const int64_t *v = ops_tensor_data_ptr(s);
        for (int r = 0; r < 5; r++) {
            bool seen[6] = {false};
            for (int j = 0; j < 5; j++) {
                const int64_t x = v[r * 5 + j];
                ck_assert(x >= 0 && x < 6 && x != r && !seen[x]);
                seen[x] = true;
            }
        }
        ops_tensor_release(s);
    }
    /* PyTorch's errors */
    ck_assert_ptr_null(ops_multinomial(p, 6, false, g));
    ck_assert(strstr(ops_last_error(), "not enough non-negative category to sample") != NULL);
    ck_assert_ptr_null(ops_multinomial(p, 7, false, g));
    ck_assert(strstr(ops_last_error(), "cannot sample n_sample > prob_dist.size(-1) samples without replacement"));
    ck_assert_ptr_null(ops_multinomial(p, 0, true, g));
    ck_assert(strstr(ops_last_error(), "cannot sample n_sample <= 0 samples"));
    q[3] = -1;
    ops_tensor_release(p);
    p = ops_tensor_from_data(q, OPS_INTS(5, 6), OPS_FLOAT64);
    ck_assert_ptr_null(ops_multinomial(p, 2, true, g));
    ck_assert(strstr(ops_last_error(), "probability tensor contains either `inf`, `nan` or element < 0"));
    ops_tensor_release(p);
    ops_generator_release(g);
}
END_TEST

START_TEST(test_dropout)
{
    ops_manual_seed(81);
    ops_tensor *x = ops_ones(OPS_INTS(1000, 1000), OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *y = ops_dropout(x, 0.3, true);
    ck_assert_ptr_nonnull(y);
    /* zero fraction 0.3 within 5 SE (SE 4.58e-4); survivors scaled by 1 / 0.7 */
    const float *py = ops_tensor_data_ptr(y);
    int64_t zeros = 0;
    const float scale = (float)(1.0 / 0.7);
    for (int64_t i = 0; i < N_STAT; i++) {
        if (py[i] == 0.0f)
            zeros++;
        else
            ck_assert_msg(py[i] == scale, "element %lld is %g", (long long)i, py[i]);
    }
    ck_assert_msg(fabs((double)zeros / N_STAT - 0.3) < 5 * 4.58e-4, "%lld zeros", (long long)zeros);
    ops_tensor_release(y);

    /* not training: a copy of the input; p = 1: all zeros; p outside [0, 1]: error */
    y = ops_dropout(x, 0.3, false);
    ck_assert_ptr_nonnull(y);
    ck_assert(memcmp(ops_tensor_data_ptr(y), ops_tensor_data_ptr(x), 4 * (size_t)N_STAT) == 0);
    ops_tensor_release(y);
    y = ops_dropout(x, 1.0, true);
    for (int64_t i = 0; i < N_STAT; i++)
        ck_assert(((float *)ops_tensor_data_ptr(y))[i] == 0.0f);
    ops_tensor_release(y);
    ck_assert_ptr_null(ops_dropout(x, 1.5, true));
    ck_assert_str_eq(ops_last_error(), "dropout: dropout probability has to be between 0 and 1, but got 1.5");

    /* native_dropout: the mask marks the survivors */
    ops_tensor *o = NULL, *m = NULL;
    const bool train = true;
    ck_assert_int_eq(ops_native_dropout(x, 0.5, &train, &o, &m), OPS_OK);
    ck_assert_int_eq(ops_tensor_dtype(m), OPS_BOOL);
    int64_t kept = 0;
    for (int64_t i = 0; i < N_STAT; i++) {
        const bool k = ((bool *)ops_tensor_data_ptr(m))[i];
        const float v = ((float *)ops_tensor_data_ptr(o))[i];
        ck_assert(k ? v == 2.0f : v == 0.0f);
        kept += k;
    }
    /* SE sqrt(0.25 / n) = 5e-4 */
    ck_assert(fabs((double)kept / N_STAT - 0.5) < 5 * 5e-4);
    ops_tensor_release(o);
    ops_tensor_release(m);
    ops_tensor_release(x);
}
END_TEST

/* Argument errors leave the in-place target untouched. */
START_TEST(test_inplace_errors)
{
    ops_tensor *t = ops_zeros(OPS_INTS(4), OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED);
    ck_assert_int_ne(ops_normal_(t, 0.0, -1.0, NULL), OPS_OK);
    ck_assert_str_eq(ops_last_error(), "normal_: normal expects std >= 0.0, but found std -1");
    ck_assert_int_ne(ops_uniform_(t, 2.0, 1.0, NULL), OPS_OK);
    ck_assert(strstr(ops_last_error(), "uniform_ expects to return a [from, to) range, but found from=2 > to=1"));
    ck_assert_int_ne(ops_exponential_(t, 0.0, NULL), OPS_OK);
    ck_assert(strstr(ops_last_error(), "exponential_ expects lambda > 0.0, but found lambda=0"));
    for (int i = 0; i < 4; i++)
        ck_assert(((float *)ops_tensor_data_ptr(t))[i] == 0.0f);
    ops_tensor *i64 = ops_zeros(OPS_INTS(4), OPS_INT64, OPS_DEVICE_UNSPECIFIED);
    ck_assert_int_ne(ops_normal_(i64, 0.0, 1.0, NULL), OPS_OK);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DTYPE);
    ops_tensor_release(i64);
    ops_tensor_release(t);
}
END_TEST

static Suite *
random_suite(void)
{
    Suite *s = suite_create("random");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_philox_kat);
    tcase_add_test(tc, test_generator_state);
    tcase_add_test(tc, test_generator_oom);
    tcase_add_test(tc, test_generator_threads);
    tcase_add_test(tc, test_same_seed_same_values);
    tcase_add_test(tc, test_stream_layout);
    tcase_add_test(tc, test_out_forms);
    tcase_add_test(tc, test_threads_same_values);
    tcase_add_test(tc, test_uniform_stats);
    tcase_add_test(tc, test_normal_stats);
    tcase_add_test(tc, test_exponential_stats);
    tcase_add_test(tc, test_randint_stats);
    tcase_add_test(tc, test_randperm);
    tcase_add_test(tc, test_bernoulli);
    tcase_add_test(tc, test_multinomial);
    tcase_add_test(tc, test_dropout);
    tcase_add_test(tc, test_inplace_errors);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(random_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* bench_special: the vector loops of erfinv, logit and cbrt (kernels/cpu/vec/vec_special.c,
 * docs/cpu-dispatch.md "erfinv, logit, cbrt") at every instruction-set level this CPU
 * runs, called through each level's table, as bench_vec does for the unary math table:
 *
 *   - accuracy: the largest error in ulps, float32 over every STEP-th bit pattern
 *     (--step 1: all 2^32) against a double reference, float64 over a dense sample
 *     against a long double one:
 *       erfinv  float32: the scalar float64 form (ops_special_math.h: Giles' start and a
 *               Halley step on glibc's erf/erfc, about 1 ulp of double); float64: that
 *               result refined by one Newton step in long double (erfl/erfcl);
 *       logit   log1p((2x - 1) / (1 - x)) on [1/4, 3/4] (2x - 1 and 1 - x exact, one
 *               rounded division), log(x) - log1p(-x) elsewhere, in double / long double;
 *       cbrt    glibc's cbrt / cbrtl;
 *   - speed: 1M contiguous elements in random order (erfinv in (-1, 1), logit in (0, 1),
 *     cbrt in (-100, 100)), ns per element, best of --reps rounds, one thread.
 *
 *   bench bench_special [--step N] [--f64-points N] [--reps N] [--level avx2]
 *                       [--no-accuracy] [--no-speed] */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bench_util.h"
#include "kernels/ops_special_math.h"
#include "kernels/cpu/vec/vec_special.h"

#define NAME_(E, name) #name,
static const char *const sp_names[OPS_VEC_NUM_SPECIAL] = {OPS_VEC_SPECIAL_LIST(NAME_)};
#undef NAME_

static double
logit_ref_d(double x)
{
    if (!(x >= 0.0 && x <= 1.0))
        return NAN;
    if (x >= 0.25 && x <= 0.75)
        return log1p((2.0 * x - 1.0) / (1.0 - x));
    return log(x) - log1p(-x);
}

static long double
logit_ref_l(long double x)
{
    if (!(x >= 0.0L && x <= 1.0L))
        return NAN;
    if (x >= 0.25L && x <= 0.75L)
        return log1pl((2.0L * x - 1.0L) / (1.0L - x));
    return logl(x) - log1pl(-x);
}

/* erfinv in long double: the float64 form refined by one Newton step (erfcl in the
 * tails, where 1 - |x| is exact). */
static long double
erfinv_ref_l(double x)
{
    const double r0 = ops_math_erfinv_f64(x);
    if (!isfinite(r0) || r0 == 0.0)
        return r0;
    const long double a = fabsl((long double)x), r = fabsl((long double)r0);
    const long double g = a <= 0.5L ? erfl(r) - a : (1.0L - a) - erfcl(r);
    const long double y = r - g / (1.1283791670955126L * expl(-r * r));
    return x < 0 ? -y : y;
}

static double
ref_f32(int fn, float x)
{
    switch (fn) {
    case OPS_VEC_SPECIAL_ERFINV: return ops_math_erfinv_f64((double)x);
    case OPS_VEC_SPECIAL_LOGIT: return logit_ref_d((double)x);
    default: return cbrt((double)x);
    }
}

static long double
ref_f64(int fn, double x)
{
    switch (fn) {
    case OPS_VEC_SPECIAL_ERFINV: return erfinv_ref_l(x);
    case OPS_VEC_SPECIAL_LOGIT: return logit_ref_l((long double)x);
    default: return cbrtl((long double)x);
    }
}

/* |y - ref| in ulps of the format (MANT bits, MIN_EXP) at ref's exponent; a result equal
 * to ref rounded to the format counts 0; NaN against non-NaN and a wrong infinity 1e30. */
static double
ulp_err(long double y, long double ref, long double rounded, int mant, int min_exp)
{
    if (isnan(ref) || isnan(y))
        return (isnan(ref) && isnan(y)) ? 0.0 : 1e30;
    if (y == rounded)
        return 0.0;
    if (isinf(ref) || isinf(y))
        return 1e30;
    int e;
    frexpl(ref, &e); /* ref = f 2^e, f in [0.5, 1): the format's exponent is e - 1 */
    e -= 1;
    if (e < min_exp)
        e = min_exp;
    return (double)(fabsl(y - ref) / ldexpl(1.0L, e - mant));
}

typedef struct sp_level {
    const char *name;
    const ops_vec_special_table *table;
    int supported;
} sp_level;

static double
speed_input(int fn, double u)
{
    switch (fn) {
    case OPS_VEC_SPECIAL_ERFINV: return -0.999999 + u * 1.999998;
    case OPS_VEC_SPECIAL_LOGIT: return 1e-6 + u * 0.999998;
    default: return -100.0 + u * 200.0;
    }
}

int
main(int argc, char **argv)
{
    int64_t step = 97, nd = 1 << 18;
    int reps = 7, accuracy = 1, speed = 1;
    const char *only_level = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
            step = atoll(argv[++i]);
        else if (strcmp(argv[i], "--f64-points") == 0 && i + 1 < argc)
            nd = atoll(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc)
            only_level = argv[++i];
        else if (strcmp(argv[i], "--no-accuracy") == 0)
            accuracy = 0;
        else if (strcmp(argv[i], "--no-speed") == 0)
            speed = 0;
    }
    if (step < 1)
        step = 1;
    printf("bench_special: libops level %s\n", ops_cpu_capability());
    sp_level levels[3];
    int nlevels = 0;
    levels[nlevels++] = (sp_level){"default", &ops_vec_special_table_default, 1};
#if defined(__x86_64__)
    __builtin_cpu_init();
    levels[nlevels++] = (sp_level){"avx2", &ops_vec_special_table_avx2,
                                   __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")};
    levels[nlevels++] = (sp_level){"avx512", &ops_vec_special_table_avx512,
                                   __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")};
#endif
    enum { BLK = 4096 };
    static float xf[BLK], yf[BLK];
    for (int l = 0; l < nlevels; l++) {
        if (only_level && strcmp(only_level, levels[l].name) != 0)
            levels[l].supported = 0;
        if (!levels[l].supported) {
            printf("  %-8s not run\n", levels[l].name);
            continue;
        }
        const ops_vec_special_table *t = levels[l].table;
        for (int fn = 0; accuracy && fn < OPS_VEC_NUM_SPECIAL; fn++) {
            /* float32: every step-th bit pattern */
            double worst = 0.0;
            float worst_x = 0.0f;
            int64_t count = 0;
            for (uint64_t b = 0; b <= 0xffffffffull;) {
                int k = 0;
                for (; k < BLK && b <= 0xffffffffull; k++, b += (uint64_t)step) {
                    const uint32_t u = (uint32_t)b;
                    memcpy(&xf[k], &u, sizeof u);
                }
                t->f32[fn](xf, yf, k, NULL);
                for (int i = 0; i < k; i++) {
                    const double ref = ref_f32(fn, xf[i]);
                    const double e = ulp_err(yf[i], ref, (float)ref, FLT_MANT_DIG - 1, FLT_MIN_EXP - 1);
                    if (e > worst) {
                        worst = e;
                        worst_x = xf[i];
                    }
                }
                count += k;
            }
            /* float64: half evenly spaced over the domain, half log-spaced magnitudes */
            double worst64 = 0.0, worst64_x = 0.0;
            for (int64_t i = 0; i < nd; i++) {
                double x;
                const double u = (double)i / (double)nd;
                if (i % 2 == 0)
                    x = fn == OPS_VEC_SPECIAL_CBRT ? -1e3 + 2e3 * u : fn == OPS_VEC_SPECIAL_LOGIT ? u : -1.0 + 2.0 * u;
                else if (fn == OPS_VEC_SPECIAL_CBRT)
                    x = (i % 4 == 1 ? -1 : 1) * pow(10.0, -320.0 + 628.0 * u);
                else if (fn == OPS_VEC_SPECIAL_LOGIT)
                    x = i % 4 == 1 ? pow(10.0, -320.0 * u) : 1.0 - pow(10.0, -16.0 * u);
                else
                    x = (i % 4 == 1 ? -1 : 1) * (i % 8 < 4 ? pow(10.0, -320.0 * u) : 1.0 - pow(10.0, -16.0 * u));
                double y;
                t->f64[fn](&x, &y, 1, NULL);
                const long double ref = ref_f64(fn, x);
                const double e = ulp_err(y, ref, (double)ref, DBL_MANT_DIG - 1, DBL_MIN_EXP - 1);
                if (e > worst64) {
                    worst64 = e;
                    worst64_x = x;
                }
            }
            printf("  %-8s %-7s f32 max %.3f ulp (at %.9g, %lld inputs)  f64 max %.3f ulp (at %.17g, %lld points)\n",
                   levels[l].name, sp_names[fn], worst, (double)worst_x, (long long)count, worst64, worst64_x,
                   (long long)nd);
        }
        for (int fn = 0; speed && fn < OPS_VEC_NUM_SPECIAL; fn++) {
            const int64_t n = 1 << 20;
            float *a = malloc((size_t)n * sizeof *a), *y = malloc((size_t)n * sizeof *y);
            double *ad = malloc((size_t)n * sizeof *ad), *yd = malloc((size_t)n * sizeof *yd);
            uint64_t s = 12345;
            for (int64_t i = 0; i < n; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                ad[i] = speed_input(fn, (double)(s >> 11) * 0x1p-53);
                a[i] = (float)ad[i];
            }
            double best32 = 1e30, best64 = 1e30;
            for (int r = 0; r < reps; r++) {
                double t0 = bench_now();
                t->f32[fn](a, y, n, NULL);
                double t1 = bench_now();
                t->f64[fn](ad, yd, n, NULL);
                double t2 = bench_now();
                if (t1 - t0 < best32)
                    best32 = t1 - t0;
                if (t2 - t1 < best64)
                    best64 = t2 - t1;
            }
            printf("  %-8s %-7s speed f32 %.3f ns/elem  f64 %.3f ns/elem\n", levels[l].name, sp_names[fn],
                   best32 * 1e9 / (double)n, best64 * 1e9 / (double)n);
            free(a);
            free(y);
            free(ad);
            free(yd);
        }
    }
    return 0;
}

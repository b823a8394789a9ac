/* bench_vec: the CPU's vector math loops (kernels/cpu/vec/vec_math.c,
 * docs/cpu-dispatch.md), at every instruction-set level this CPU runs, called
 * directly through each level's table:
 *
 *   - the level this process chose (ops_cpu_capability(), OPS_CPU_CAPABILITY);
 *   - accuracy: the largest error in ulps of every function of the table (OPS_VEC_UNARY_LIST)
 *     against a higher-precision reference: float32 over every STEP-th bit pattern
 *     (--step 1: all 2^32) against glibc's double functions (29 more bits than float32,
 *     and glibc's double functions are within 1 ulp of double: the reference's own error
 *     is below 2^-28 float32 ulp), float64 over a dense sample (half evenly spaced over the
 *     function's interesting range, half log-spaced magnitudes from 1e-300 up) against
 *     glibc's long double functions (11 more bits; their error, about 1 ulp of long double,
 *     is below 2^-10 float64 ulp);
 *   - speed: 1M-element contiguous float32 and float64 runs of inputs in random order
 *     (each function's own range), ns per element, against the scalar libm loop of the
 *     op's scalar form (best of several rounds, one thread).
 *
 *   bench bench_vec [--step N] [--reps N] [--fn exp,log,...] [--level avx2]
 *                   [--f64-points N] [--no-accuracy] [--no-speed] */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bench_util.h"
#include "kernels/cpu/vec/vec.h"

typedef struct level {
    const char *name;
    const ops_vec_table *table;
    int supported;
} level;

#define NAME_(E, name) #name,
static const char *const fn_names[OPS_VEC_NUM_UNARY] = {OPS_VEC_UNARY_LIST(NAME_)};
#undef NAME_

/* gelu's tanh form: x/2 * (1 + tanh(u)) is x / (1 + e^(-2u)) exactly, which the
 * references take (no cancellation where tanh(u) is near -1). */
#define GELU_K_ 0.79788456080286535588

/* The float32 reference: fn at x in double. */
static double
ref_d(int fn, double x)
{
    switch (fn) {
    case OPS_VEC_EXP: return exp(x);
    case OPS_VEC_LOG: return log(x);
    case OPS_VEC_TANH: return tanh(x);
    case OPS_VEC_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case OPS_VEC_EXPM1: return expm1(x);
    case OPS_VEC_LOG1P: return log1p(x);
    case OPS_VEC_LOG2: return log2(x);
    case OPS_VEC_LOG10: return log10(x);
    case OPS_VEC_SIN: return sin(x);
    case OPS_VEC_COS: return cos(x);
    case OPS_VEC_TAN: return tan(x);
    case OPS_VEC_ASIN: return asin(x);
    case OPS_VEC_ACOS: return acos(x);
    case OPS_VEC_ATAN: return atan(x);
    case OPS_VEC_SINH: return sinh(x);
    case OPS_VEC_COSH: return cosh(x);
    case OPS_VEC_ASINH: return asinh(x);
    case OPS_VEC_ACOSH: return acosh(x);
    case OPS_VEC_ATANH: return atanh(x);
    case OPS_VEC_ERF: return erf(x);
    case OPS_VEC_ERFC: return erfc(x);
    case OPS_VEC_SQRT: return sqrt(x);
    case OPS_VEC_RSQRT: return 1.0 / sqrt(x);
    case OPS_VEC_SILU: return x / (1.0 + exp(-x));
    case OPS_VEC_GELU: return 0.5 * x * erfc(-x * 0.70710678118654752440);
    default: return x / (1.0 + exp(-2.0 * GELU_K_ * (x + 0.044715 * x * x * x)));
    }
}

/* The float64 reference: fn at x in long double. */
static long double
ref_ld(int fn, long double x)
{
    switch (fn) {
    case OPS_VEC_EXP: return expl(x);
    case OPS_VEC_LOG: return logl(x);
    case OPS_VEC_TANH: return tanhl(x);
    case OPS_VEC_SIGMOID: return 1.0L / (1.0L + expl(-x));
    case OPS_VEC_EXPM1: return expm1l(x);
    case OPS_VEC_LOG1P: return log1pl(x);
    case OPS_VEC_LOG2: return log2l(x);
    case OPS_VEC_LOG10: return log10l(x);
    case OPS_VEC_SIN: return sinl(x);
    case OPS_VEC_COS: return cosl(x);
    case OPS_VEC_TAN: return tanl(x);
    case OPS_VEC_ASIN: return asinl(x);
    case OPS_VEC_ACOS: return acosl(x);
    case OPS_VEC_ATAN: return atanl(x);
    case OPS_VEC_SINH: return sinhl(x);
    case OPS_VEC_COSH: return coshl(x);
    case OPS_VEC_ASINH: return asinhl(x);
    case OPS_VEC_ACOSH: return acoshl(x);
    case OPS_VEC_ATANH: return atanhl(x);
    case OPS_VEC_ERF: return erfl(x);
    case OPS_VEC_ERFC: return erfcl(x);
    case OPS_VEC_SQRT: return sqrtl(x);
    case OPS_VEC_RSQRT: return 1.0L / sqrtl(x);
    case OPS_VEC_SILU: return x / (1.0L + expl(-x));
    case OPS_VEC_GELU: return 0.5L * x * erfcl(-x * 0.707106781186547524400844362104849039L);
    default: return x / (1.0L + expl(-2.0L * (long double)GELU_K_ * (x + 0.044715L * x * x * x)));
    }
}

/* The float64 sample of fn: [lo, hi] evenly spaced (even i), and magnitudes
 * 10^[-300, log10(mag)] log-spaced (odd i), of both signs unless positive. */
typedef struct sample_range {
    double lo, hi, mag;
    int positive;
} sample_range;

static sample_range
range_of(int fn)
{
    switch (fn) {
    case OPS_VEC_EXP: return (sample_range){-745, 709.7, 709.7, 0};
    case OPS_VEC_EXPM1: return (sample_range){-40, 709.7, 709.7, 0};
    case OPS_VEC_LOG:
    case OPS_VEC_LOG2:
    case OPS_VEC_LOG10:
    case OPS_VEC_SQRT:
    case OPS_VEC_RSQRT: return (sample_range){0, 10, 1e300, 1};
    case OPS_VEC_LOG1P: return (sample_range){-1, 10, 1e300, 0};
    case OPS_VEC_SIN:
    case OPS_VEC_COS:
    case OPS_VEC_TAN: return (sample_range){-10, 10, 1e15, 0};
    case OPS_VEC_ASIN:
    case OPS_VEC_ACOS:
    case OPS_VEC_ATANH: return (sample_range){-1, 1, 1, 0};
    case OPS_VEC_SINH:
    case OPS_VEC_COSH: return (sample_range){-710, 710, 710, 0};
    case OPS_VEC_ACOSH: return (sample_range){1, 20, 1e300, 1};
    case OPS_VEC_ERF: return (sample_range){-6, 6, 6, 0};
    case OPS_VEC_ERFC: return (sample_range){-6, 27, 27, 0};
    case OPS_VEC_ATAN:
    case OPS_VEC_ASINH: return (sample_range){-10, 10, 1e300, 0};
    default: return (sample_range){-40, 40, 1e3, 0};
    }
}

static void
fill_f64(int fn, double *x, int64_t n)
{
    const sample_range r = range_of(fn);
    const double top = log10(r.mag);
    for (int64_t i = 0; i < n; i++) {
        const double t = (double)(i / 2) / (double)(n / 2 - 1);
        if (i % 2 == 0) {
            x[i] = r.lo + t * (r.hi - r.lo);
        } else {
            const double m = pow(10.0, -300.0 + t * (top + 300.0));
            x[i] = (!r.positive && (i / 2) % 2) ? -m : m;
        }
    }
}

/* |y - ref| in units of the last place of ref's format (mant_bits, min_exp: float or
 * double); 0 when y is ref rounded to the format (overflow to inf, underflow to 0
 * included), a large number when one is NaN and the other not. */
static double
ulp_error(long double ref, double y, int mant_bits, int min_exp, double rounded)
{
    if (isnan(ref) || isnan(y))
        return isnan(ref) && isnan(y) ? 0 : 1e30;
    if (y == rounded)
        return 0;
    if (isinf(y) || isinf(ref))
        return 1e30;
    int e;
    frexpl(ref, &e);
    if (e < min_exp)
        e = min_exp;
    const long double ulp = ldexpl(1.0L, e - mant_bits);
    return (double)(fabsl((long double)y - ref) / ulp);
}

/* The scalar loop the kernels ran before (the op's scalar form, glibc per element). */
static float
plain_f32_1(int fn, float x)
{
    switch (fn) {
    case OPS_VEC_EXP: return expf(x);
    case OPS_VEC_LOG: return logf(x);
    case OPS_VEC_TANH: return tanhf(x);
    case OPS_VEC_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case OPS_VEC_EXPM1: return expm1f(x);
    case OPS_VEC_LOG1P: return log1pf(x);
    case OPS_VEC_LOG2: return log2f(x);
    case OPS_VEC_LOG10: return log10f(x);
    case OPS_VEC_SIN: return sinf(x);
    case OPS_VEC_COS: return cosf(x);
    case OPS_VEC_TAN: return tanf(x);
    case OPS_VEC_ASIN: return asinf(x);
    case OPS_VEC_ACOS: return acosf(x);
    case OPS_VEC_ATAN: return atanf(x);
    case OPS_VEC_SINH: return sinhf(x);
    case OPS_VEC_COSH: return coshf(x);
    case OPS_VEC_ASINH: return asinhf(x);
    case OPS_VEC_ACOSH: return acoshf(x);
    case OPS_VEC_ATANH: return atanhf(x);
    case OPS_VEC_ERF: return erff(x);
    case OPS_VEC_ERFC: return erfcf(x);
    case OPS_VEC_SQRT: return sqrtf(x);
    case OPS_VEC_RSQRT: return 1.0f / sqrtf(x);
    case OPS_VEC_SILU: return x / (1.0f + expf(-x));
    case OPS_VEC_GELU: return 0.5f * x * erfcf(-x * 0.70710678118654752440f);
    default: return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
    }
}

static double
plain_f64_1(int fn, double x)
{
    switch (fn) {
    case OPS_VEC_EXP: return exp(x);
    case OPS_VEC_LOG: return log(x);
    case OPS_VEC_TANH: return tanh(x);
    case OPS_VEC_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case OPS_VEC_EXPM1: return expm1(x);
    case OPS_VEC_LOG1P: return log1p(x);
    case OPS_VEC_LOG2: return log2(x);
    case OPS_VEC_LOG10: return log10(x);
    case OPS_VEC_SIN: return sin(x);
    case OPS_VEC_COS: return cos(x);
    case OPS_VEC_TAN: return tan(x);
    case OPS_VEC_ASIN: return asin(x);
    case OPS_VEC_ACOS: return acos(x);
    case OPS_VEC_ATAN: return atan(x);
    case OPS_VEC_SINH: return sinh(x);
    case OPS_VEC_COSH: return cosh(x);
    case OPS_VEC_ASINH: return asinh(x);
    case OPS_VEC_ACOSH: return acosh(x);
    case OPS_VEC_ATANH: return atanh(x);
    case OPS_VEC_ERF: return erf(x);
    case OPS_VEC_ERFC: return erfc(x);
    case OPS_VEC_SQRT: return sqrt(x);
    case OPS_VEC_RSQRT: return 1.0 / sqrt(x);
    case OPS_VEC_SILU: return x / (1.0 + exp(-x));
    case OPS_VEC_GELU: return 0.5 * x * erfc(-x * 0.70710678118654752440);
    default: return 0.5 * x * (1.0 + tanh(GELU_K_ * (x + 0.044715 * x * x * x)));
    }
}

static void
plain_f32(int fn, const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = plain_f32_1(fn, x[i]);
}

static void
plain_f64(int fn, const double *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = plain_f64_1(fn, x[i]);
}

/* The speed run's inputs: u in [0, 1) mapped into fn's usual range. */
static float
speed_input(int fn, float u)
{
    switch (fn) {
    case OPS_VEC_LOG:
    case OPS_VEC_LOG2:
    case OPS_VEC_LOG10:
    case OPS_VEC_LOG1P:
    case OPS_VEC_SQRT:
    case OPS_VEC_RSQRT: return 0.001f + u * 100.0f;
    case OPS_VEC_ACOSH: return 1.0f + u * 100.0f;
    case OPS_VEC_ASIN:
    case OPS_VEC_ACOS:
    case OPS_VEC_ATANH: return -0.999f + u * 1.998f;
    default: return -10.0f + u * 20.0f;
    }
}

static int
listed(const char *list, const char *name)
{
    if (!list)
        return 1;
    const size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return 0;
}

int
main(int argc, char **argv)
{
    int64_t step = 97, nd = 1 << 20;
    int reps = 7, accuracy = 1, speed = 1;
    const char *fns = NULL, *only_level = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--no-accuracy") == 0)
            accuracy = 0;
        else if (strcmp(argv[i], "--no-speed") == 0)
            speed = 0;
        else if (v && strcmp(argv[i], "--step") == 0)
            step = atoll(argv[++i]);
        else if (v && strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[++i]);
        else if (v && strcmp(argv[i], "--fn") == 0)
            fns = argv[++i];
        else if (v && strcmp(argv[i], "--level") == 0)
            only_level = argv[++i];
        else if (v && strcmp(argv[i], "--f64-points") == 0)
            nd = atoll(argv[++i]);
        else {
            fprintf(stderr, "bench_vec: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (step < 1)
        step = 1;
    if (nd < 4)
        nd = 4;
    level levels[3];
    int nlevels = 0;
    levels[nlevels++] = (level){"default", &ops_vec_table_default, 1};
#if defined(__x86_64__)
    __builtin_cpu_init();
    levels[nlevels++] = (level){"avx2", &ops_vec_table_avx2,
                                __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")};
    levels[nlevels++] = (level){"avx512", &ops_vec_table_avx512,
                                __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")};
#endif
    for (int l = 0; l < nlevels; l++)
        if (only_level && strcmp(only_level, levels[l].name) != 0)
            levels[l].supported = 0;
    printf("libops CPU capability: %s (OPS_CPU_CAPABILITY=%s)\n", ops_cpu_capability(),
           getenv("OPS_CPU_CAPABILITY") ? getenv("OPS_CPU_CAPABILITY") : "unset");

    /* ---- accuracy ------------------------------------------------------------ */
    enum { CHUNK = 1 << 16 };
    float *xf = malloc(CHUNK * sizeof(float)), *yf = malloc(CHUNK * sizeof(float));
    double *xd = malloc((size_t)nd * sizeof(double)), *yd = malloc((size_t)nd * sizeof(double));
    if (!xf || !yf || !xd || !yd)
        bench_die("bench_vec", "malloc");
    if (accuracy)
        printf("max error in ulps: float32 every %lld-th bit pattern (%lld inputs) vs double, "
               "float64 %lld points per function vs long double\n",
               (long long)step, (long long)((((int64_t)1 << 32) + step - 1) / step), (long long)nd);
    for (int l = 0; accuracy && l < nlevels; l++) {
        if (!levels[l].supported) {
            printf("  %-8s not run (not supported by this CPU, or not asked for)\n", levels[l].name);
            continue;
        }
        for (int fn = 0; fn < OPS_VEC_NUM_UNARY; fn++) {
            if (!listed(fns, fn_names[fn]))
                continue;
            double worst32 = 0, worst64 = 0;
            float at32 = 0;
            double at64 = 0;
            int64_t k = 0;
            const double t0 = bench_now();
            for (int64_t b = 0; b < ((int64_t)1 << 32); b += step) {
                uint32_t bits = (uint32_t)b;
                memcpy(&xf[k++], &bits, sizeof bits);
                if (k == CHUNK || b + step >= ((int64_t)1 << 32)) {
                    levels[l].table->unary_f32[fn](xf, yf, k);
                    for (int64_t i = 0; i < k; i++) {
                        const double r = ref_d(fn, xf[i]);
                        const double e = ulp_error(r, yf[i], 24, -125, (float)r);
                        if (e > worst32) {
                            worst32 = e;
                            at32 = xf[i];
                        }
                    }
                    k = 0;
                }
            }
            fill_f64(fn, xd, nd);
            levels[l].table->unary_f64[fn](xd, yd, nd);
            for (int64_t i = 0; i < nd; i++) {
                const long double r = ref_ld(fn, xd[i]);
                const double e = ulp_error(r, yd[i], 53, -1021, (double)r);
                if (e > worst64) {
                    worst64 = e;
                    at64 = xd[i];
                }
            }
            printf("  %-8s %-9s float32 %.3f ulp (at %.9g)   float64 %.3f ulp (at %.17g)  [%.0f s]\n",
                   levels[l].name, fn_names[fn], worst32, (double)at32, worst64, at64,
                   bench_now() - t0);
            fflush(stdout);
        }
    }

    /* ---- speed ------------------------------------------------------------------ */
    const int64_t n = 1 << 20;
    float *a = malloc((size_t)n * sizeof(float)), *c = malloc((size_t)n * sizeof(float));
    double *ad = malloc((size_t)n * sizeof(double)), *cd = malloc((size_t)n * sizeof(double));
    if (!a || !c || !ad || !cd)
        bench_die("bench_vec", "malloc");
    for (int prec = 0; speed && prec < 2; prec++) {
        printf("1M %s, contiguous, one thread: ns per element (ratio to the scalar libm loop)\n",
               prec == 0 ? "float32" : "float64");
        for (int fn = 0; fn < OPS_VEC_NUM_UNARY; fn++) {
            if (!listed(fns, fn_names[fn]))
                continue;
            /* pseudo-random order (an LCG), as real data is: sorted inputs would let the
             * branch predictor hide the branches of glibc's loops */
            uint64_t state = 0x9E3779B97F4A7C15u;
            for (int64_t i = 0; i < n; i++) {
                state = state * 6364136223846793005u + 1442695040888963407u;
                const float u = (float)(state >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
                a[i] = speed_input(fn, u);
                ad[i] = a[i];
            }
            double best_plain = 1e9, best[3] = {1e9, 1e9, 1e9};
            for (int r = 0; r < reps; r++) {
                double t0 = bench_now();
                if (prec == 0)
                    plain_f32(fn, a, c, n);
                else
                    plain_f64(fn, ad, cd, n);
                best_plain = fmin(best_plain, bench_now() - t0);
                for (int l = 0; l < nlevels; l++) {
                    if (!levels[l].supported)
                        continue;
                    t0 = bench_now();
                    if (prec == 0)
                        levels[l].table->unary_f32[fn](a, c, n);
                    else
                        levels[l].table->unary_f64[fn](ad, cd, n);
                    best[l] = fmin(best[l], bench_now() - t0);
                }
            }
            printf("  %-9s libm %.3f", fn_names[fn], best_plain * 1e9 / (double)n);
            for (int l = 0; l < nlevels; l++)
                if (levels[l].supported)
                    printf("   %s %.3f (%.2fx)", levels[l].name, best[l] * 1e9 / (double)n,
                           best[l] / best_plain);
            printf("\n");
            fflush(stdout);
        }
    }
    free(xf);
    free(yf);
    free(xd);
    free(yd);
    free(a);
    free(c);
    free(ad);
    free(cd);
    return 0;
}

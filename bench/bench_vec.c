/* bench_vec: the CPU's vector loops (kernels/cpu/vec/, docs/cpu-dispatch.md), at every
 * instruction-set level this CPU runs, called directly through each level's table:
 *
 *   - the level this process chose (ops_cpu_capability(), OPS_CPU_CAPABILITY);
 *   - accuracy: the largest error in ulps of exp, log, tanh and sigmoid against a long
 *     double reference, float32 over every STEP-th bit pattern (--step 1: all 2^32),
 *     float64 over a dense sample of each function's interesting range;
 *   - speed: 1M-element contiguous float32 and float64 runs of inputs in random order
 *     (log: [0.001, 100], others [-10, 10]), ns per element, against the scalar libm loop
 *     the kernels ran before (best of several rounds, one thread).
 *
 *   bench bench_vec [--step N] [--reps N] */
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

static const char *const fn_names[OPS_VEC_NUM_UNARY] = {"exp", "log", "tanh", "sigmoid"};

static long double
ref_ld(int fn, long double x)
{
    switch (fn) {
    case OPS_VEC_EXP:
        return expl(x);
    case OPS_VEC_LOG:
        return logl(x);
    case OPS_VEC_TANH:
        return tanhl(x);
    default:
        return 1.0L / (1.0L + expl(-x));
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

static void
fill_f64(int fn, double *x, int64_t n)
{
    /* dense over the range each function uses: exp to its overflow, log over
     * [1e-300, 1e300] log-uniformly, tanh/sigmoid over [-40, 40] */
    for (int64_t i = 0; i < n; i++) {
        const double t = (double)i / (double)(n - 1);
        switch (fn) {
        case OPS_VEC_EXP:
            x[i] = -745.0 + t * (709.7 + 745.0);
            break;
        case OPS_VEC_LOG:
            x[i] = exp(-690.0 + t * 1380.0);
            break;
        default:
            x[i] = -40.0 + t * 80.0;
        }
    }
}

static void
plain_f32(int fn, const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (fn) {
        case OPS_VEC_EXP:
            y[i] = expf(x[i]);
            break;
        case OPS_VEC_LOG:
            y[i] = logf(x[i]);
            break;
        case OPS_VEC_TANH:
            y[i] = tanhf(x[i]);
            break;
        default:
            y[i] = 1.0f / (1.0f + expf(-x[i]));
        }
    }
}

static void
plain_f64(int fn, const double *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (fn) {
        case OPS_VEC_EXP:
            y[i] = exp(x[i]);
            break;
        case OPS_VEC_LOG:
            y[i] = log(x[i]);
            break;
        case OPS_VEC_TANH:
            y[i] = tanh(x[i]);
            break;
        default:
            y[i] = 1.0 / (1.0 + exp(-x[i]));
        }
    }
}

int
main(int argc, char **argv)
{
    int64_t step = 97;
    int reps = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--step") == 0)
            step = atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
    }
    if (step < 1)
        step = 1;
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
    printf("libops CPU capability: %s (OPS_CPU_CAPABILITY=%s)\n", ops_cpu_capability(),
           getenv("OPS_CPU_CAPABILITY") ? getenv("OPS_CPU_CAPABILITY") : "unset");

    /* ---- accuracy ------------------------------------------------------------ */
    enum { CHUNK = 1 << 16 };
    float *xf = malloc(CHUNK * sizeof(float)), *yf = malloc(CHUNK * sizeof(float));
    const int64_t nd = 1 << 22;
    double *xd = malloc((size_t)nd * sizeof(double)), *yd = malloc((size_t)nd * sizeof(double));
    if (!xf || !yf || !xd || !yd)
        bench_die("bench_vec", "malloc");
    printf("max error in ulps vs long double: float32 every %lld-th bit pattern (%lld inputs), "
           "float64 %lld points per function\n",
           (long long)step, (long long)((((int64_t)1 << 32) + step - 1) / step), (long long)nd);
    for (int l = 0; l < nlevels; l++) {
        if (!levels[l].supported) {
            printf("  %-8s not supported by this CPU\n", levels[l].name);
            continue;
        }
        for (int fn = 0; fn < OPS_VEC_NUM_UNARY; fn++) {
            double worst32 = 0, worst64 = 0;
            float at32 = 0;
            double at64 = 0;
            int64_t k = 0;
            for (int64_t b = 0; b < ((int64_t)1 << 32); b += step) {
                uint32_t bits = (uint32_t)b;
                memcpy(&xf[k++], &bits, sizeof bits);
                if (k == CHUNK || b + step >= ((int64_t)1 << 32)) {
                    levels[l].table->unary_f32[fn](xf, yf, k);
                    for (int64_t i = 0; i < k; i++) {
                        const long double r = ref_ld(fn, xf[i]);
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
            printf("  %-8s %-8s float32 %.3f ulp (at %.9g)   float64 %.3f ulp (at %.17g)\n", levels[l].name,
                   fn_names[fn], worst32, (double)at32, worst64, at64);
        }
    }

    /* ---- speed ------------------------------------------------------------------ */
    const int64_t n = 1 << 20;
    float *a = malloc((size_t)n * sizeof(float)), *c = malloc((size_t)n * sizeof(float));
    double *ad = malloc((size_t)n * sizeof(double)), *cd = malloc((size_t)n * sizeof(double));
    if (!a || !c || !ad || !cd)
        bench_die("bench_vec", "malloc");
    for (int prec = 0; prec < 2; prec++) {
        printf("1M %s, contiguous, one thread: ns per element (ratio to the scalar libm loop)\n",
               prec == 0 ? "float32" : "float64");
        for (int fn = 0; fn < OPS_VEC_NUM_UNARY; fn++) {
            /* pseudo-random order (an LCG), as real data is: sorted inputs would let the
             * branch predictor hide the branches of glibc's loops */
            uint64_t state = 0x9E3779B97F4A7C15u;
            for (int64_t i = 0; i < n; i++) {
                state = state * 6364136223846793005u + 1442695040888963407u;
                const float u = (float)(state >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
                a[i] = fn == OPS_VEC_LOG ? 0.001f + u * 100.0f : -10.0f + u * 20.0f;
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
            printf("  %-8s libm %.3f", fn_names[fn], best_plain * 1e9 / (double)n);
            for (int l = 0; l < nlevels; l++)
                if (levels[l].supported)
                    printf("   %s %.3f (%.2fx)", levels[l].name, best[l] * 1e9 / (double)n,
                           best[l] / best_plain);
            printf("\n");
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

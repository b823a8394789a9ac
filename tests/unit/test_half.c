/* float16 / bfloat16 conversions, the scalar math of ops_scalar_math.h, and the unary
 * kernels on every float16 and bfloat16 pattern, against the oracle table
 * gen_half_table.py writes at build time with NumPy and Python's math module
 * (half_oracle.txt in build/tests/unit/, or $OPS_HALF_ORACLE). */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_op_abs.h"
#include "ops_op_ceil.h"
#include "ops_op_cos.h"
#include "ops_op_exp.h"
#include "ops_op_expm1.h"
#include "ops_op_floor.h"
#include "ops_op_log.h"
#include "ops_op_log1p.h"
#include "ops_op_neg.h"
#include "ops_op_reciprocal.h"
#include "ops_op_round.h"
#include "ops_op_sin.h"
#include "ops_op_slice.h"
#include "ops_op_sqrt.h"
#include "ops_op_tanh.h"
#include "ops_op_trunc.h"
#include "ops_scalar_math.h"

/* ---- the oracle table -------------------------------------------------------- */

typedef struct pair32 {
    uint32_t in, out;
} pair32;

typedef struct fn_rec {
    char name[16];
    float x;
    double y;
    double a, b, c; /* nan_to_num's replacements */
} fn_rec;

/* One op applied to all 65536 patterns of a 16-bit dtype. */
typedef struct kernel_rec {
    char op[16];
    bool bf16;
    uint16_t *out; /* 65536 results, indexed by the input pattern */
} kernel_rec;

#define MAX_KERNEL_RECS 64

typedef struct oracle {
    pair32 *h2f, *b2f, *f2h, *f2b;
    int64_t nh2f, nb2f, nf2h, nf2b;
    fn_rec *fn;
    int64_t nfn;
    kernel_rec kernels[MAX_KERNEL_RECS];
    int nkernels;
} oracle;

static oracle g_oracle;

static double
d_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void
push_pair(pair32 **arr, int64_t *n, uint32_t in, uint32_t out)
{
    /* Grow at every power of two from 1024; the table is read once per process. */
    if (*n == 0 || (*n >= 1024 && (*n & (*n - 1)) == 0)) {
        *arr = realloc(*arr, (size_t)(*n ? *n * 2 : 1024) * sizeof **arr);
        ck_assert_ptr_nonnull(*arr);
    }
    (*arr)[(*n)++] = (pair32){in, out};
}

static void
oracle_path(char *buf, size_t n)
{
    const char *env = getenv("OPS_HALF_ORACLE");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_msg(len > 0, "cannot find the test executable: %s", strerror(errno));
    exe[len] = '\0';
#ifdef OPS_CHECK_PROGRAM
    /* linked into the runner build/tests/checks (tests/check_runner.c); the table is
     * built in build/tests/unit/ */
    snprintf(buf, n, "%s/unit/half_oracle.txt", dirname(exe));
#else
    snprintf(buf, n, "%s/half_oracle.txt", dirname(exe));
#endif
}

static unsigned
hex_digit(char c)
{
    return (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
}

/* "k16 <op> <hex>" / "kb16 <op> <hex>": 65536 big-endian 16-bit results. */
static void
parse_kernel_record(const char *line, bool bf16)
{
    ck_assert_int_lt(g_oracle.nkernels, MAX_KERNEL_RECS);
    kernel_rec *k = &g_oracle.kernels[g_oracle.nkernels++];
    int pos = 0;
    ck_assert_int_eq(sscanf(line, "%*s %15s %n", k->op, &pos), 1);
    const char *hex = line + pos;
    ck_assert_msg(strspn(hex, "0123456789abcdef") == 4 * 65536, "short kernel record for %s", k->op);
    k->bf16 = bf16;
    k->out = malloc(65536 * sizeof *k->out);
    ck_assert_ptr_nonnull(k->out);
    for (int i = 0; i < 65536; i++) {
        const char *h = hex + 4 * i;
        k->out[i] = (uint16_t)(hex_digit(h[0]) << 12 | hex_digit(h[1]) << 8 | hex_digit(h[2]) << 4 |
                               hex_digit(h[3]));
    }
}

static void
oracle_load(void)
{
    if (g_oracle.h2f)
        return;
    char path[PATH_MAX + 32];
    oracle_path(path, sizeof path);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open the oracle table %s: %s", path, strerror(errno));
    char *line = NULL; /* kernel records are 256 KiB lines */
    size_t cap = 0;
    int64_t cap_fn = 0;
    while (getline(&line, &cap, f) > 0) {
        char kind[8], name[16];
        unsigned a, b;
        unsigned long long x, y, r1, r2, r3;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        ck_assert_int_eq(sscanf(line, "%7s", kind), 1);
        if (strcmp(kind, "k16") == 0 || strcmp(kind, "kb16") == 0) {
            parse_kernel_record(line, kind[1] == 'b');
            continue;
        }
        if (strcmp(kind, "fn") == 0 || strcmp(kind, "fn4") == 0) {
            fn_rec rec = {0};
            if (kind[2] == '4') {
                ck_assert_int_eq(sscanf(line, "%*s %15s %llx %llx %llx %llx %llx", name, &x, &r1, &r2, &r3, &y), 6);
                rec.a = d_from_bits(r1);
                rec.b = d_from_bits(r2);
                rec.c = d_from_bits(r3);
            } else {
                ck_assert_int_eq(sscanf(line, "%*s %15s %llx %llx", name, &x, &y), 3);
            }
            memcpy(rec.name, name, sizeof rec.name);
            rec.x = ops_f32_from_bits((uint32_t)x);
            rec.y = d_from_bits(y);
            if (g_oracle.nfn == cap_fn) {
                cap_fn = cap_fn ? cap_fn * 2 : 1024;
                g_oracle.fn = realloc(g_oracle.fn, (size_t)cap_fn * sizeof *g_oracle.fn);
                ck_assert_ptr_nonnull(g_oracle.fn);
            }
            g_oracle.fn[g_oracle.nfn++] = rec;
            continue;
        }
        ck_assert_msg(sscanf(line, "%*s %x %x", &a, &b) == 2, "bad oracle line: %.80s", line);
        if (strcmp(kind, "h2f") == 0)
            push_pair(&g_oracle.h2f, &g_oracle.nh2f, a, b);
        else if (strcmp(kind, "b2f") == 0)
            push_pair(&g_oracle.b2f, &g_oracle.nb2f, a, b);
        else if (strcmp(kind, "f2h") == 0)
            push_pair(&g_oracle.f2h, &g_oracle.nf2h, a, b);
        else if (strcmp(kind, "f2b") == 0)
            push_pair(&g_oracle.f2b, &g_oracle.nf2b, a, b);
        else
            ck_abort_msg("unknown oracle record: %.80s", line);
    }
    free(line);
    fclose(f);
}

static bool
f32_is_nan_bits(uint32_t u)
{
    return (u & 0x7fffffffu) > 0x7f800000u;
}

static bool
f16_is_nan_bits(uint32_t u)
{
    return (u & 0x7fffu) > 0x7c00u;
}

static bool
bf16_is_nan_bits(uint32_t u)
{
    return (u & 0x7fffu) > 0x7f80u;
}

/* ---- conversions -------------------------------------------------------------- */

START_TEST(test_half_to_float_every_pattern)
{
    oracle_load();
    ck_assert_int_eq(g_oracle.nh2f, 65536);
    for (int64_t i = 0; i < g_oracle.nh2f; i++) {
        const pair32 p = g_oracle.h2f[i];
        ck_assert_uint_eq(p.in, (uint32_t)i); /* the table lists each pattern once */
        const uint32_t got = ops_f32_bits(ops_half_to_float((ops_half){(uint16_t)p.in}));
        if (f32_is_nan_bits(p.out))
            ck_assert_msg(f32_is_nan_bits(got), "half %04x: got %08x, want NaN", p.in, got);
        else
            ck_assert_msg(got == p.out, "half %04x: got %08x, want %08x", p.in, got, p.out);
    }
}
END_TEST

START_TEST(test_bfloat16_to_float_every_pattern)
{
    oracle_load();
    ck_assert_int_eq(g_oracle.nb2f, 65536);
    for (int64_t i = 0; i < g_oracle.nb2f; i++) {
        const pair32 p = g_oracle.b2f[i];
        const uint32_t got = ops_f32_bits(ops_bfloat16_to_float((ops_bfloat16){(uint16_t)p.in}));
        if (f32_is_nan_bits(p.out))
            ck_assert_msg(f32_is_nan_bits(got), "bf16 %04x: got %08x, want NaN", p.in, got);
        else
            ck_assert_msg(got == p.out, "bf16 %04x: got %08x, want %08x", p.in, got, p.out);
    }
}
END_TEST

START_TEST(test_float_to_half)
{
    oracle_load();
    ck_assert_int_gt(g_oracle.nf2h, 10000);
    int64_t nan = 0, inf = 0, sub = 0;
    for (int64_t i = 0; i < g_oracle.nf2h; i++) {
        const pair32 p = g_oracle.f2h[i];
        const uint32_t got = ops_float_to_half(ops_f32_from_bits(p.in)).bits;
        if (f16_is_nan_bits(p.out)) {
            nan++;
            ck_assert_msg(f16_is_nan_bits(got), "float %08x: got %04x, want NaN", p.in, got);
        } else {
            inf += (p.out & 0x7fffu) == 0x7c00u;
            sub += (p.out & 0x7c00u) == 0 && (p.out & 0x3ffu) != 0;
            ck_assert_msg(got == p.out, "float %08x (%.9g): got %04x, want %04x", p.in,
                          (double)ops_f32_from_bits(p.in), got, p.out);
        }
    }
    /* The table covers the cases that matter, not just easy values. */
    ck_assert_int_gt(nan, 10);
    ck_assert_int_gt(inf, 10);
    ck_assert_int_gt(sub, 100);
}
END_TEST

START_TEST(test_float_to_bfloat16)
{
    oracle_load();
    ck_assert_int_gt(g_oracle.nf2b, 10000);
    int64_t nan = 0, ties = 0;
    for (int64_t i = 0; i < g_oracle.nf2b; i++) {
        const pair32 p = g_oracle.f2b[i];
        const uint32_t got = ops_float_to_bfloat16(ops_f32_from_bits(p.in)).bits;
        if (bf16_is_nan_bits(p.out)) {
            nan++;
            ck_assert_msg(bf16_is_nan_bits(got), "float %08x: got %04x, want NaN", p.in, got);
        } else {
            ties += (p.in & 0xffffu) == 0x8000u;
            ck_assert_msg(got == p.out, "float %08x (%.9g): got %04x, want %04x", p.in,
                          (double)ops_f32_from_bits(p.in), got, p.out);
        }
    }
    ck_assert_int_gt(nan, 10);
    ck_assert_int_gt(ties, 1000);
}
END_TEST

/* Every finite or infinite half survives half -> float -> half, bit for bit. */
START_TEST(test_half_round_trip)
{
    for (uint32_t h = 0; h < 65536; h++) {
        const ops_half x = {(uint16_t)h};
        const ops_half y = ops_float_to_half(ops_half_to_float(x));
        if (f16_is_nan_bits(h))
            ck_assert(f16_is_nan_bits(y.bits));
        else
            ck_assert_msg(y.bits == h, "half %04x came back as %04x", h, y.bits);
        const ops_bfloat16 b = {(uint16_t)h};
        const ops_bfloat16 c = ops_float_to_bfloat16(ops_bfloat16_to_float(b));
        if (bf16_is_nan_bits(h))
            ck_assert(bf16_is_nan_bits(c.bits));
        else
            ck_assert_msg(c.bits == h, "bf16 %04x came back as %04x", h, c.bits);
    }
}
END_TEST

/* ---- scalar math -------------------------------------------------------------- */

typedef struct math_fn {
    const char *name;
    float (*f32)(float);
    double (*f64)(double);
    /* |got - want| <= atol + rtol * |want|.  The double forms evaluate the same
     * formulas as the oracle, so they agree to a few ulps except where noted. */
    double rtol64;
    double atol32, rtol32;
} math_fn;

/* Wrappers, so the test calls the inline functions through plain pointers. */
#define OPS_TEST_WRAP_(fn)                                                               \
    static float w_##fn##_f32(float x) { return ops_math_##fn##_f32(x); }                \
    static double w_##fn##_f64(double x) { return ops_math_##fn##_f64(x); }
OPS_TEST_WRAP_(sigmoid)
OPS_TEST_WRAP_(silu)
OPS_TEST_WRAP_(gelu)
OPS_TEST_WRAP_(gelu_tanh)
OPS_TEST_WRAP_(rsqrt)
OPS_TEST_WRAP_(frac)
OPS_TEST_WRAP_(round_even)
OPS_TEST_WRAP_(trunc)
OPS_TEST_WRAP_(floor)
OPS_TEST_WRAP_(ceil)
OPS_TEST_WRAP_(sign)
OPS_TEST_WRAP_(relu)

static const math_fn g_math[] = {
    {"sigmoid", w_sigmoid_f32, w_sigmoid_f64, 1e-15, 1e-7, 4e-7},
    {"silu", w_silu_f32, w_silu_f64, 1e-15, 1e-7, 4e-7},
    /* erfc(y) has relative condition number ~2y^2 in its tail: y = 8.5 at x = -12. */
    {"gelu", w_gelu_f32, w_gelu_f64, 2e-13, 1e-7, 4e-7},
    /* 1 + tanh(u) cancels for x << 0: the result keeps an absolute, not a relative,
     * accuracy of a few ulps of 1 (times |x|/2). */
    {"gelu_tanh", w_gelu_tanh_f32, w_gelu_tanh_f64, 1e-9, 1e-6, 4e-7},
    {"rsqrt", w_rsqrt_f32, w_rsqrt_f64, 1e-15, 0, 2e-7},
    {"frac", w_frac_f32, w_frac_f64, 0, 0, 0},
    {"round_even", w_round_even_f32, w_round_even_f64, 0, 0, 0},
    {"trunc", w_trunc_f32, w_trunc_f64, 0, 0, 0},
    {"floor", w_floor_f32, w_floor_f64, 0, 0, 0},
    {"ceil", w_ceil_f32, w_ceil_f64, 0, 0, 0},
    {"sign", w_sign_f32, w_sign_f64, 0, 0, 0},
    {"relu", w_relu_f32, w_relu_f64, 0, 0, 0},
};

/* NaN matches NaN, inf matches the same inf, finite values within the tolerance.
 * An f32 result that the oracle puts outside float's range is rounded first. */
static bool
close_enough(double got, double want, double atol, double rtol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

START_TEST(test_scalar_math)
{
    oracle_load();
    int64_t seen[sizeof g_math / sizeof g_math[0]] = {0};
    for (int64_t i = 0; i < g_oracle.nfn; i++) {
        const fn_rec *r = &g_oracle.fn[i];
        if (strcmp(r->name, "nan_to_num") == 0)
            continue;
        size_t k = 0;
        while (k < sizeof g_math / sizeof g_math[0] && strcmp(g_math[k].name, r->name) != 0)
            k++;
        ck_assert_msg(k < sizeof g_math / sizeof g_math[0], "no such function: %s", r->name);
        const math_fn *m = &g_math[k];
        seen[k]++;

        const double got64 = m->f64((double)r->x);
        ck_assert_msg(close_enough(got64, r->y, 0, m->rtol64), "%s_f64(%.9g) = %.17g, want %.17g",
                      m->name, (double)r->x, got64, r->y);

        /* The float form is judged against the oracle rounded to float. */
        const double want32 = (double)(float)r->y;
        const double got32 = (double)m->f32(r->x);
        ck_assert_msg(close_enough(got32, want32, m->atol32, m->rtol32),
                      "%s_f32(%.9g) = %.9g, want %.9g", m->name, (double)r->x, got32, want32);

        /* The type-generic names pick the form from the argument's type. */
        if (strcmp(m->name, "sigmoid") == 0) {
            const float xf = r->x;
            const double xd = r->x;
            ck_assert(memcmp(&(float){ops_math_sigmoid(xf)}, &(float){ops_math_sigmoid_f32(xf)}, 4) == 0);
            ck_assert(memcmp(&(double){ops_math_sigmoid(xd)}, &(double){ops_math_sigmoid_f64(xd)}, 8) == 0);
        }
    }
    for (size_t k = 0; k < sizeof g_math / sizeof g_math[0]; k++)
        ck_assert_msg(seen[k] > 500, "%s: only %lld oracle values", g_math[k].name, (long long)seen[k]);
}
END_TEST

START_TEST(test_nan_to_num)
{
    oracle_load();
    int64_t n = 0;
    for (int64_t i = 0; i < g_oracle.nfn; i++) {
        const fn_rec *r = &g_oracle.fn[i];
        if (strcmp(r->name, "nan_to_num") != 0)
            continue;
        n++;
        const double got64 = ops_math_nan_to_num_f64(r->x, r->a, r->b, r->c);
        ck_assert_msg(got64 == r->y, "nan_to_num_f64(%g) = %g, want %g", (double)r->x, got64, r->y);
        const float got32 = ops_math_nan_to_num_f32(r->x, (float)r->a, (float)r->b, (float)r->c);
        ck_assert_msg(got32 == (float)r->y, "nan_to_num_f32(%g) = %g, want %g", (double)r->x,
                      (double)got32, r->y);
    }
    ck_assert_int_gt(n, 1000);
}
END_TEST

static bool
same_f32(float a, float b)
{
    return (isnan(a) && isnan(b)) || ops_f32_bits(a) == ops_f32_bits(b);
}

static bool
same_f64(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return (isnan(a) && isnan(b)) || x == y;
}

/* The branch-free rounding functions against libm's, bit for bit (signed zeros
 * included), over a sweep of float32 patterns that visits every exponent and both
 * signs, and over random doubles of every magnitude around 2^52. */
/* ck_assert on every value would cost a pipe write each (Check's mark points);
 * record the first failure and assert once. */
#define CHECK_SAME_(SAME, GOT, WANT, NAME, X)                                            \
    do {                                                                                 \
        if (!SAME(GOT, WANT) && bad++ == 0)                                              \
            snprintf(first, sizeof first, "%s(%a) = %a, libm says %a", NAME, (double)(X), \
                     (double)(GOT), (double)(WANT));                                     \
    } while (0)

START_TEST(test_rounding_vs_libm)
{
    int64_t n = 0, bad = 0;
    char first[160] = "";
    for (uint64_t u = 0; u < (1ull << 32); u += 4099) {
        for (uint32_t k = 0; k < 3; k++) { /* the pattern and its two neighbours */
            const float x = ops_f32_from_bits((uint32_t)u + k);
            CHECK_SAME_(same_f32, ops_math_floor_f32(x), floorf(x), "floor_f32", x);
            CHECK_SAME_(same_f32, ops_math_ceil_f32(x), ceilf(x), "ceil_f32", x);
            CHECK_SAME_(same_f32, ops_math_trunc_f32(x), truncf(x), "trunc_f32", x);
            CHECK_SAME_(same_f32, ops_math_round_even_f32(x), nearbyintf(x), "round_even_f32", x);
            n++;
        }
    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 1000000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64 */
        double x;
        if (i & 1) {
            memcpy(&x, &s, sizeof x);
        } else { /* |x| in [2^-8, 2^60): fractions, ties and the 2^52 boundary */
            x = ldexp((double)(s >> 11), (int)(s % 68) - 61);
            if (s & 1024)
                x = -x;
        }
        CHECK_SAME_(same_f64, ops_math_floor_f64(x), floor(x), "floor_f64", x);
        CHECK_SAME_(same_f64, ops_math_ceil_f64(x), ceil(x), "ceil_f64", x);
        CHECK_SAME_(same_f64, ops_math_trunc_f64(x), trunc(x), "trunc_f64", x);
        CHECK_SAME_(same_f64, ops_math_round_even_f64(x), nearbyint(x), "round_even_f64", x);
    }
    ck_assert_msg(bad == 0, "%lld mismatches; first: %s", (long long)bad, first);
    ck_assert_int_gt(n, 3000000);
}
END_TEST

/* Values every reader can check by hand. */
START_TEST(test_scalar_math_by_hand)
{
    ck_assert(ops_math_round_even_f32(2.5f) == 2.0f);
    ck_assert(ops_math_round_even_f32(3.5f) == 4.0f);
    ck_assert(ops_math_round_even_f64(-0.5) == 0.0 && signbit(ops_math_round_even_f64(-0.5)));
    ck_assert(ops_math_sigmoid_f32(0.0f) == 0.5f);
    ck_assert(ops_math_sigmoid_f32(-200.0f) == 0.0f);
    ck_assert(ops_math_sigmoid_f32(200.0f) == 1.0f);
    ck_assert(ops_math_gelu_f64(0.0) == 0.0);
    ck_assert(ops_math_gelu_tanh_f64(0.0) == 0.0);
    ck_assert(ops_math_sign_f32(NAN) == 0.0f && ops_math_sign_f32(-3.0f) == -1.0f);
    ck_assert(ops_math_sign_f64(-0.0) == 0.0 && !signbit(ops_math_sign_f64(-0.0)));
    ck_assert(isnan(ops_math_relu_f64(NAN)));
    ck_assert(ops_math_rsqrt_f32(0.25f) == 2.0f);
    ck_assert(ops_math_rsqrt_f64(-0.0) == -INFINITY);
    ck_assert(ops_math_frac_f64(-1.75) == -0.75);
    ck_assert(isnan(ops_math_frac_f32(INFINITY)));
    ck_assert(ops_math_floor_f32(-0.5f) == -1.0f && ops_math_ceil_f32(-0.5f) == 0.0f);
    ck_assert(signbit(ops_math_ceil_f32(-0.5f)) && signbit(ops_math_floor_f64(-0.0)));
    ck_assert(ops_math_trunc_f64(-2.75) == -2.0 && ops_math_floor_f64(8388608.5) == 8388608.0);
}
END_TEST

/* ---- the unary kernels on every 16-bit pattern ------------------------------------ */

typedef ops_tensor *(*unary_fn)(const ops_tensor *);

/* The libops op for each NumPy ufunc in the table; `exact`: correctly rounded in
 * float32 on both sides, so the results must agree bit for bit.  Elsewhere NumPy's
 * float32 exp/sin/... and glibc's may differ by a float32 ulp, which can move the
 * final rounding by one 16-bit ulp. */
static const struct {
    const char *op;
    unary_fn fn;
    bool exact;
} g_kernels[] = {
    {"neg", ops_neg, true},       {"abs", ops_abs, true},       {"sqrt", ops_sqrt, true},
    {"reciprocal", ops_reciprocal, true}, {"floor", ops_floor, true},  {"ceil", ops_ceil, true},
    {"trunc", ops_trunc, true},   {"round", ops_round, true},   {"exp", ops_exp, false},
    {"expm1", ops_expm1, false},  {"log", ops_log, false},      {"log1p", ops_log1p, false},
    {"sin", ops_sin, false},      {"cos", ops_cos, false},      {"tanh", ops_tanh, false},
};

/* Distance in units in the last place between two 16-bit patterns of one format. */
static int
ulp_distance16(uint16_t a, uint16_t b)
{
    const int ia = (a & 0x8000u) ? -(int)(a & 0x7fffu) : (int)a;
    const int ib = (b & 0x8000u) ? -(int)(b & 0x7fffu) : (int)b;
    return abs(ia - ib);
}

/* Runs fn over a tensor of every pattern (and over a stride-3 view of it) and
 * compares with the oracle; returns the number of disagreements, describing the
 * first one in `first`. */
static int64_t
check_kernel_16(const kernel_rec *k, unary_fn fn, bool exact, char *first, size_t n)
{
    const ops_dtype dt = k->bf16 ? OPS_BFLOAT16 : OPS_FLOAT16;
    uint16_t in[65536];
    for (int i = 0; i < 65536; i++)
        in[i] = (uint16_t)i;
    ops_tensor *t = ops_tensor_from_data(in, OPS_INTS(65536), dt);
    ck_assert_msg(t != NULL, "%s", ops_last_error());
    const int64_t start = 1;
    ops_tensor *view = ops_slice(t, 0, &start, NULL, 3); /* patterns 1, 4, 7, ... */
    ck_assert_msg(view != NULL, "%s", ops_last_error());
    int64_t bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        ops_tensor *r = fn(pass == 0 ? t : view);
        ck_assert_msg(r != NULL, "%s(%s): %s", k->op, ops_dtype_name(dt), ops_last_error());
        ck_assert_int_eq(ops_tensor_dtype(r), dt);
        const uint16_t *got = ops_tensor_data_ptr(r);
        const int64_t count = ops_tensor_numel(r);
        ck_assert(ops_tensor_is_contiguous(r));
        for (int64_t j = 0; j < count; j++) {
            const int i = pass == 0 ? (int)j : (int)(1 + 3 * j);
            const uint16_t want = k->out[i], g = got[j];
            const bool want_nan = k->bf16 ? bf16_is_nan_bits(want) : f16_is_nan_bits(want);
            const bool got_nan = k->bf16 ? bf16_is_nan_bits(g) : f16_is_nan_bits(g);
            const uint16_t inf = k->bf16 ? 0x7f80u : 0x7c00u;
            bool ok;
            if (want_nan || got_nan)
                ok = want_nan && got_nan;
            else if ((want & 0x7fffu) == inf || exact)
                ok = g == want || ((want & 0x7fffu) == 0 && (g & 0x7fffu) == 0 && !exact);
            else
                ok = ulp_distance16(g, want) <= 1;
            if (!ok && bad++ == 0)
                snprintf(first, n, "%s(%s %04x%s) = %04x, NumPy says %04x", k->op, ops_dtype_name(dt), i,
                         pass ? ", strided" : "", g, want);
        }
        ops_tensor_release(r);
    }
    ops_tensor_release(view);
    ops_tensor_release(t);
    return bad;
}

START_TEST(test_unary_kernels_16bit)
{
    oracle_load();
    int checked = 0;
    for (int r = 0; r < g_oracle.nkernels; r++) {
        const kernel_rec *k = &g_oracle.kernels[r];
        size_t j = 0;
        while (j < sizeof g_kernels / sizeof g_kernels[0] && strcmp(g_kernels[j].op, k->op) != 0)
            j++;
        ck_assert_msg(j < sizeof g_kernels / sizeof g_kernels[0], "no libops op for %s", k->op);
        char first[160] = "";
        const int64_t bad = check_kernel_16(k, g_kernels[j].fn, g_kernels[j].exact, first, sizeof first);
        ck_assert_msg(bad == 0, "%lld disagreements; first: %s", (long long)bad, first);
        checked++;
    }
    /* every op in both dtypes */
    ck_assert_int_eq(checked, 2 * (int)(sizeof g_kernels / sizeof g_kernels[0]));
}
END_TEST

static Suite *
half_suite(void)
{
    Suite *s = suite_create("half");
    TCase *tc = tcase_create("conversions");
    tcase_set_timeout(tc, 120); /* sanitizer builds are several times slower */
    tcase_add_test(tc, test_half_to_float_every_pattern);
    tcase_add_test(tc, test_bfloat16_to_float_every_pattern);
    tcase_add_test(tc, test_float_to_half);
    tcase_add_test(tc, test_float_to_bfloat16);
    tcase_add_test(tc, test_half_round_trip);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("scalar_math");
    tcase_set_timeout(tm, 120);
    tcase_add_test(tm, test_scalar_math);
    tcase_add_test(tm, test_nan_to_num);
    tcase_add_test(tm, test_scalar_math_by_hand);
    tcase_add_test(tm, test_rounding_vs_libm);
    suite_add_tcase(s, tm);
    TCase *tk = tcase_create("kernels");
    tcase_set_timeout(tk, 120);
    tcase_add_test(tk, test_unary_kernels_16bit);
    suite_add_tcase(s, tk);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(half_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

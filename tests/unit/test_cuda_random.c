/* The random, creation and shape ops on cuda:0 against the CPU (kernels/cuda/
 * random.cu, creation.cu, shape.cu), where the conformance suite cannot reach:
 *
 *  - the Philox stream: every sampler gives the CPU's values for the same generator
 *    seed and offset (bit for bit for uniforms, integers, bernoulli, randperm and
 *    multinomial; within rounding for normal and exponential, whose log1p/sqrt come
 *    from the device's libm), at several seeds and offsets (one crossing the 2^32
 *    block boundary) and sizes past one grid of the kernels, and both generators end
 *    at the same offset; the default generators (CPU's and cuda:0's, reseeded by
 *    ops_manual_seed) on two successive calls; strided and transposed outputs;
 *  - errors found in device data (bernoulli's p, multinomial's rows) with the CPU's
 *    message, the output untouched;
 *  - arange, linspace, eye, zeros/ones/full (large, strided out=), and cat of many
 *    inputs of mixed layouts and dtypes, stack, hstack/vstack, flip, roll, tril/triu,
 *    repeat.
 *
 * The oracle is always the CPU kernel's result for the same arguments.  Without a
 * CUDA device (or in a CPU build) the program exits 77 (SKIP). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_op_arange.h"
#include "ops_op_bernoulli.h"
#include "ops_op_cat.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_dropout.h"
#include "ops_op_empty.h"
#include "ops_op_empty_like.h"
#include "ops_op_exponential.h"
#include "ops_op_eye.h"
#include "ops_op_flip.h"
#include "ops_op_full.h"
#include "ops_op_hstack.h"
#include "ops_op_linspace.h"
#include "ops_op_multinomial.h"
#include "ops_op_native_dropout.h"
#include "ops_op_normal.h"
#include "ops_op_ones.h"
#include "ops_op_permute.h"
#include "ops_op_rand.h"
#include "ops_op_randint.h"
#include "ops_op_randn.h"
#include "ops_op_random.h"
#include "ops_op_randperm.h"
#include "ops_op_repeat.h"
#include "ops_op_roll.h"
#include "ops_op_select.h"
#include "ops_op_slice.h"
#include "ops_op_stack.h"
#include "ops_op_t.h"
#include "ops_op_transpose.h"
#include "ops_op_tril.h"
#include "ops_op_triu.h"
#include "ops_op_uniform.h"
#include "ops_op_vstack.h"
#include "ops_op_zeros.h"
#include "ops_cuda.h"
#include "ops_internal.h"

#define CUDA0 OPS_DEVICE_CUDA(0)
#define CPU OPS_DEVICE_CPU

/* Past one grid pass of the kernels (2048 blocks of 128 threads, kernels/cuda/
 * strided_index.h; 4 elements per thread for 1-word samplers), and odd so that the
 * last Philox block is partial. */
#define BIG ((1 << 20) + 4099)

static ops_tensor *
to_device(const ops_tensor *t, ops_device dev)
{
    ops_tensor *r = ops_empty((ops_int_list){ops_tensor_sizes(t), ops_tensor_ndim(t)}, ops_tensor_dtype(t), dev,
                              OPS_MEMORY_FORMAT_NONE);
    ck_assert_msg(r != NULL, "empty: %s", ops_last_error());
    ck_assert_msg(ops_copy_(r, t, false) == OPS_OK, "copy_: %s", ops_last_error());
    return r;
}

/* Relative tolerance of a comparison: 0 means bit for bit. */
static void
assert_close(const ops_tensor *want_cpu, const ops_tensor *got_cuda, double tol, const char *what)
{
    ck_assert_msg(got_cuda != NULL, "%s: %s", what, ops_last_error());
    ck_assert_int_eq(ops_tensor_device(got_cuda).type, OPS_CUDA);
    ck_assert_int_eq(ops_tensor_dtype(want_cpu), ops_tensor_dtype(got_cuda));
    ck_assert_int_eq(ops_tensor_ndim(want_cpu), ops_tensor_ndim(got_cuda));
    for (int64_t d = 0; d < ops_tensor_ndim(want_cpu); d++)
        ck_assert_int_eq(ops_tensor_size(want_cpu, d), ops_tensor_size(got_cuda, d));
    ops_tensor *got = to_device(got_cuda, CPU);
    ops_tensor *want = ops_contiguous(want_cpu, OPS_CONTIGUOUS_FORMAT);
    const ops_dtype dt = ops_tensor_dtype(want);
    const size_t is = ops_dtype_size(dt);
    const char *a = ops_tensor_data_ptr(want), *b = ops_tensor_data_ptr(got);
    const int64_t n = ops_tensor_numel(want);
    for (int64_t i = 0; i < n; i++) {
        if (tol == 0.0) {
            ck_assert_msg(memcmp(a + i * is, b + i * is, is) == 0, "%s: element %lld differs (%g vs %g)", what,
                          (long long)i, ops_scalar_to_double(ops_scalar_load(a + i * is, dt)),
                          ops_scalar_to_double(ops_scalar_load(b + i * is, dt)));
        } else {
            const double x = ops_scalar_to_double(ops_scalar_load(a + i * is, dt));
            const double y = ops_scalar_to_double(ops_scalar_load(b + i * is, dt));
            ck_assert_msg(fabs(x - y) <= tol * (1.0 + fabs(x)), "%s: element %lld: %.17g vs %.17g", what,
                          (long long)i, x, y);
        }
    }
    ops_tensor_release(want);
    ops_tensor_release(got);
}

/* The rounding a normal or exponential sample may differ by (the double computation
 * differs in its last bits; the dtype's rounding can then flip one ulp). */
static double
libm_tol(ops_dtype dt)
{
    return dt == OPS_FLOAT64 ? 1e-12 : dt == OPS_FLOAT32 ? 3e-7 : dt == OPS_FLOAT16 ? 1e-3 : 8e-3;
}

/* Two generators at (seed, offset). */
static void
gen_pair(uint64_t seed, uint64_t offset, ops_generator **a, ops_generator **b)
{
    *a = ops_generator_create(seed);
    *b = ops_generator_create(seed);
    ops_generator_set_offset(*a, offset);
    ops_generator_set_offset(*b, offset);
}

static const uint64_t seeds[] = {0, 42, 0x123456789abcull};
/* the last one makes the counter's low word wrap inside the op's range */
static const uint64_t offsets[] = {0, 5, 0xfffffff0ull};

/* ---- samplers: one (seed, offset) per loop index ------------------------------------ */

typedef enum sampler {
    S_RAND, S_RANDN, S_RANDINT, S_RANDINT_WIDE, S_UNIFORM, S_NORMAL, S_EXPONENTIAL, S_BERNOULLI_P, S_RANDOM,
    S_RANDOM_FROM, S_NSAMPLERS
} sampler;

/* Runs sampler k into a new tensor of n elements on dev with generator g. */
static ops_tensor *
run_sampler(sampler k, ops_dtype dt, int64_t n, ops_device dev, ops_generator *g)
{
    ops_int_list size = {(const int64_t[]){n}, 1};
    ops_tensor *t = NULL;
    switch (k) {
    case S_RAND:
        return ops_rand(size, g, dt, dev);
    case S_RANDN:
        return ops_randn(size, g, dt, dev);
    case S_RANDINT:
        return ops_randint_low(-7, 100, size, g, dt, dev);
    case S_RANDINT_WIDE: /* a range past 2^32: two words per element */
        return ops_randint_low(-(INT64_C(1) << 40), INT64_C(1) << 41, size, g, OPS_INT64, dev);
    default:
        break;
    }
    t = ops_empty(size, dt, dev, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(t);
    ops_status st = OPS_OK;
    switch (k) {
    case S_UNIFORM:
        st = ops_uniform_(t, -3.5, 11.25, g);
        break;
    case S_NORMAL:
        st = ops_normal_(t, 2.0, 0.75, g);
        break;
    case S_EXPONENTIAL:
        st = ops_exponential_(t, 1.5, g);
        break;
    case S_BERNOULLI_P:
        st = ops_bernoulli_float_(t, 0.3, g);
        break;
    case S_RANDOM:
        st = ops_random_(t, g);
        break;
    default: {
        const int64_t to = 1000;
        st = ops_random_from_(t, -20, &to, g);
        break;
    }
    }
    ck_assert_msg(st == OPS_OK, "sampler %d: %s", (int)k, ops_last_error());
    return t;
}

static ops_dtype
sampler_dtype(sampler k, int variant)
{
    static const ops_dtype floating[] = {OPS_FLOAT32, OPS_FLOAT64, OPS_FLOAT16, OPS_BFLOAT16};
    static const ops_dtype integral[] = {OPS_INT64, OPS_INT32, OPS_INT8, OPS_FLOAT32};
    switch (k) {
    case S_RANDINT:
    case S_RANDOM:
    case S_RANDOM_FROM:
    case S_BERNOULLI_P:
        return k == S_RANDOM_FROM && variant == 2 ? OPS_INT16 : integral[variant % 4];
    case S_RANDINT_WIDE:
        return OPS_INT64;
    default:
        return floating[variant % 4];
    }
}

START_TEST(test_streams_match_cpu)
{
    const sampler k = (sampler)_i;
    for (int v = 0; v < 4; v++) {
        const ops_dtype dt = sampler_dtype(k, v);
        const uint64_t seed = seeds[v % 3], offset = offsets[(v + k) % 3];
        const int64_t n = v == 0 ? BIG : 1 + 37 * v; /* one big, three small and odd */
        ops_generator *gc, *gg;
        gen_pair(seed, offset, &gc, &gg);
        ops_tensor *want = run_sampler(k, dt, n, CPU, gc);
        ops_tensor *got = run_sampler(k, dt, n, CUDA0, gg);
        char what[96];
        snprintf(what, sizeof what, "sampler %d dtype %s seed %llu offset %llu", (int)k, ops_dtype_name(dt),
                 (unsigned long long)seed, (unsigned long long)offset);
        const bool libm = k == S_RANDN || k == S_NORMAL || k == S_EXPONENTIAL;
        assert_close(want, got, libm ? libm_tol(dt) : 0.0, what);
        /* the same number of blocks taken from both */
        ck_assert_uint_eq(ops_generator_offset(gc), ops_generator_offset(gg));
        ck_assert_uint_gt(ops_generator_offset(gc), offset);
        ops_tensor_release(want);
        ops_tensor_release(got);
        ops_generator_release(gc);
        ops_generator_release(gg);
    }
}
END_TEST

/* No generator: the CPU default and cuda:0's default, both reseeded by
 * ops_manual_seed, give the same values on two successive calls. */
START_TEST(test_default_generators_advance_alike)
{
    ops_manual_seed(1234);
    for (int call = 0; call < 2; call++) {
        ops_tensor *want = ops_rand(OPS_INTS(1001), NULL, OPS_FLOAT32, CPU);
        ops_tensor *got = ops_rand(OPS_INTS(1001), NULL, OPS_FLOAT32, CUDA0);
        assert_close(want, got, 0.0, call == 0 ? "first call" : "second call");
        ops_tensor_release(want);
        ops_tensor_release(got);
    }
    ck_assert_uint_eq(ops_generator_offset(NULL), ops_generator_offset(ops_device_default_generator(CUDA0)));
    ck_assert_uint_eq(ops_generator_seed(ops_device_default_generator(CUDA0)), 1234);
    /* dropout draws from the device's default generator (the input from its own) */
    ops_generator *gi = ops_generator_create(4);
    ops_tensor *x = ops_randn(OPS_INTS(37, 41), gi, OPS_FLOAT32, CPU);
    ops_generator_release(gi);
    ops_tensor *xg = to_device(x, CUDA0);
    ops_tensor *xt = ops_t(x), *xgt = ops_t(xg); /* a strided input */
    ops_tensor *m1 = NULL, *m2 = NULL, *o1 = NULL, *o2 = NULL;
    ck_assert_int_eq(ops_native_dropout(xt, 0.4, NULL, &o1, &m1), OPS_OK);
    ck_assert_int_eq(ops_native_dropout(xgt, 0.4, NULL, &o2, &m2), OPS_OK);
    assert_close(o1, o2, 0.0, "native_dropout output");
    assert_close(m1, m2, 0.0, "native_dropout mask");
    ops_tensor *d1 = ops_dropout(x, 0.25, true), *d2 = ops_dropout(xg, 0.25, true);
    assert_close(d1, d2, 0.0, "dropout");
    const bool eval = false;
    ops_tensor_release(o1), ops_tensor_release(o2), ops_tensor_release(m1), ops_tensor_release(m2);
    ck_assert_int_eq(ops_native_dropout(xt, 0.4, &eval, &o1, &m1), OPS_OK);
    ck_assert_int_eq(ops_native_dropout(xgt, 0.4, &eval, &o2, &m2), OPS_OK);
    assert_close(o1, o2, 0.0, "native_dropout, not training");
    assert_close(m1, m2, 0.0, "native_dropout mask, not training");
    ck_assert_uint_eq(ops_generator_offset(NULL), ops_generator_offset(ops_device_default_generator(CUDA0)));
    ops_tensor *all[] = {x, xg, xt, xgt, o1, o2, m1, m2, d1, d2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* In-place samplers on strided views write element e of the row-major order with
 * stream element e, as the CPU does through its temporary. */
START_TEST(test_strided_outputs)
{
    ops_tensor *base_c = ops_zeros(OPS_INTS(64, 130), OPS_FLOAT32, CPU);
    ops_tensor *base_g = ops_zeros(OPS_INTS(64, 130), OPS_FLOAT32, CUDA0);
    const int64_t start = 3, end = 123;
    ops_tensor *vc0 = ops_slice(base_c, 1, &start, &end, 2), *vg0 = ops_slice(base_g, 1, &start, &end, 2);
    ops_tensor *vc = ops_t(vc0), *vg = ops_t(vg0);
    ops_generator *gc, *gg;
    gen_pair(77, 9, &gc, &gg);
    ck_assert_int_eq(ops_uniform_(vc, 0.0, 2.0, gc), OPS_OK);
    ck_assert_int_eq(ops_uniform_(vg, 0.0, 2.0, gg), OPS_OK);
    ck_assert_int_eq(ops_normal_(vc, 0.0, 1.0, gc), OPS_OK);
    ck_assert_int_eq(ops_normal_(vg, 0.0, 1.0, gg), OPS_OK);
    /* the whole base: the untouched columns stay 0 on both */
    assert_close(base_c, base_g, libm_tol(OPS_FLOAT32), "strided normal_");
    ops_generator *gi = ops_generator_create(3); /* the inputs' own stream */
    ops_tensor *pc = ops_rand(OPS_INTS(40, 33), gi, OPS_FLOAT64, CPU);
    ops_generator_release(gi);
    ops_tensor *pg = to_device(pc, CUDA0);
    ops_tensor *pct = ops_t(pc), *pgt = ops_t(pg);
    ops_tensor *bc = ops_bernoulli(pct, gc), *bg = ops_bernoulli(pgt, gg);
    assert_close(bc, bg, 0.0, "bernoulli with strided probabilities");
    ops_tensor *all[] = {base_c, base_g, vc0, vg0, vc, vg, pc, pg, pct, pgt, bc, bg};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
    ops_generator_release(gc);
    ops_generator_release(gg);
}
END_TEST

START_TEST(test_randperm_and_multinomial)
{
    const int64_t sizes[] = {1, 2, 1000, 100003};
    const ops_dtype dts[] = {OPS_INT64, OPS_INT32, OPS_FLOAT32, OPS_INT64};
    for (int i = 0; i < 4; i++) {
        ops_generator *gc, *gg;
        gen_pair(seeds[i % 3], offsets[i % 3], &gc, &gg);
        ops_tensor *want = ops_randperm(sizes[i], gc, dts[i], CPU);
        ops_tensor *got = ops_randperm(sizes[i], gg, dts[i], CUDA0);
        assert_close(want, got, 0.0, "randperm");
        ck_assert_uint_eq(ops_generator_offset(gc), ops_generator_offset(gg));
        ops_tensor_release(want);
        ops_tensor_release(got);
        ops_generator_release(gc);
        ops_generator_release(gg);
    }
    /* rows of different shapes: zeros, a dominant category, many small ones */
    ops_generator *gc, *gg;
    gen_pair(5, 3, &gc, &gg);
    ops_generator *gi = ops_generator_create(8); /* the inputs' own stream */
    ops_tensor *p = ops_rand(OPS_INTS(7, 300), gi, OPS_FLOAT32, CPU);
    float *pd = ops_tensor_data_ptr(p);
    for (int c = 0; c < 300; c += 3)
        pd[c] = 0.0f;
    pd[300 + 5] = 1000.0f;
    ops_tensor *pg = to_device(p, CUDA0);
    for (int repl = 0; repl < 2; repl++) {
        ops_tensor *want = ops_multinomial(p, 150, repl, gc);
        ops_tensor *got = ops_multinomial(pg, 150, repl, gg);
        assert_close(want, got, 0.0, repl ? "multinomial with replacement" : "multinomial without replacement");
        ops_tensor_release(want);
        ops_tensor_release(got);
        ck_assert_uint_eq(ops_generator_offset(gc), ops_generator_offset(gg));
    }
    ops_tensor_release(p);
    ops_tensor_release(pg);
    /* every category of 3001 drawn without replacement: the whole sorted order of
     * the keys (a row length that is not a power of two) */
    p = ops_rand(OPS_INTS(2, 3001), gi, OPS_FLOAT64, CPU);
    pg = to_device(p, CUDA0);
    ops_tensor *want = ops_multinomial(p, 3001, false, gc);
    ops_tensor *got = ops_multinomial(pg, 3001, false, gg);
    assert_close(want, got, 0.0, "multinomial, a full permutation");
    ck_assert_uint_eq(ops_generator_offset(gc), ops_generator_offset(gg));
    ops_tensor_release(want);
    ops_tensor_release(got);
    ops_tensor_release(p);
    ops_tensor_release(pg);
    ops_generator_release(gi);
    ops_generator_release(gc);
    ops_generator_release(gg);
}
END_TEST

/* Errors that need the device's data: the CPU's message, nothing drawn or written. */
START_TEST(test_errors_from_device_data)
{
    ops_tensor *p = ops_full(OPS_INTS(5, 9), OPS_SCALAR_FLOAT(0.5), OPS_FLOAT32, CPU);
    ((float *)ops_tensor_data_ptr(p))[31] = 1.5f;
    ((float *)ops_tensor_data_ptr(p))[40] = -1.0f;
    ops_tensor *pg = to_device(p, CUDA0);
    char want[256];
    ck_assert_ptr_null(ops_bernoulli(p, NULL));
    snprintf(want, sizeof want, "%s", ops_last_error());
    const uint64_t before = ops_generator_offset(ops_device_default_generator(CUDA0));
    ck_assert_ptr_null(ops_bernoulli(pg, NULL));
    ck_assert_str_eq(ops_last_error(), want);
    ck_assert_uint_eq(ops_generator_offset(ops_device_default_generator(CUDA0)), before);
    /* multinomial: the first bad row's error, each rule in turn (row 3 has a
     * negative value and row 4 sums to 0; then row 4 alone; then row 4 has one
     * nonzero category for two samples without replacement) */
    ops_tensor *q = ops_full(OPS_INTS(5, 4), OPS_SCALAR_FLOAT(0.25), OPS_FLOAT64, CPU);
    double *qd = ops_tensor_data_ptr(q);
    qd[3 * 4 + 2] = -0.5;
    for (int c = 0; c < 4; c++)
        qd[4 * 4 + c] = 0.0;
    ops_tensor *qg = NULL;
    const char *rules[] = {"element < 0", "sum of probabilities <= 0", "not enough non-negative category"};
    for (int rule = 0; rule < 3; rule++) {
        if (rule == 1)
            qd[3 * 4 + 2] = 0.25;
        if (rule == 2)
            qd[4 * 4 + 1] = 3.0;
        ops_tensor_release(qg);
        qg = to_device(q, CUDA0);
        ck_assert_ptr_null(ops_multinomial(q, 2, false, NULL));
        snprintf(want, sizeof want, "%s", ops_last_error());
        ck_assert_msg(strstr(want, rules[rule]) != NULL, "rule %d: %s", rule, want);
        ck_assert_ptr_null(ops_multinomial(qg, 2, false, NULL));
        ck_assert_str_eq(ops_last_error(), want);
    }
    ops_tensor *all[] = {p, pg, q, qg};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- creation ------------------------------------------------------------------------ */

START_TEST(test_creation_matches_cpu)
{
    const ops_dtype dts[] = {OPS_INT64, OPS_INT32, OPS_INT8, OPS_UINT8, OPS_FLOAT16, OPS_BFLOAT16, OPS_FLOAT32, OPS_FLOAT64};
    for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
        const ops_dtype dt = dts[i];
        const bool small = dt == OPS_INT8 || dt == OPS_UINT8;
        ops_tensor *a = ops_arange_start_step(OPS_SCALAR_INT(small ? 0 : -5), OPS_SCALAR_INT(small ? 100 : BIG),
                                              OPS_SCALAR_INT(small ? 1 : 3), dt, CPU);
        ops_tensor *b = ops_arange_start_step(OPS_SCALAR_INT(small ? 0 : -5), OPS_SCALAR_INT(small ? 100 : BIG),
                                              OPS_SCALAR_INT(small ? 1 : 3), dt, CUDA0);
        assert_close(a, b, 0.0, "arange");
        ops_tensor_release(a), ops_tensor_release(b);
        if (ops_dtype_is_floating(dt)) {
            a = ops_arange_start_step(OPS_SCALAR_FLOAT(-1.3), OPS_SCALAR_FLOAT(70.1), OPS_SCALAR_FLOAT(0.37), dt, CPU);
            b = ops_arange_start_step(OPS_SCALAR_FLOAT(-1.3), OPS_SCALAR_FLOAT(70.1), OPS_SCALAR_FLOAT(0.37), dt, CUDA0);
            assert_close(a, b, 0.0, "arange, float steps");
            ops_tensor_release(a), ops_tensor_release(b);
        }
        const int64_t steps[] = {0, 1, 2, 7, BIG};
        for (int s = 0; s < 5; s++) {
            const ops_scalar lo = small ? OPS_SCALAR_INT(3) : OPS_SCALAR_FLOAT(-2.5);
            const ops_scalar hi = small ? OPS_SCALAR_INT(90) : OPS_SCALAR_FLOAT(17.75);
            a = ops_linspace(lo, hi, steps[s], dt, CPU);
            b = ops_linspace(lo, hi, steps[s], dt, CUDA0);
            assert_close(a, b, 0.0, "linspace");
            ops_tensor_release(a), ops_tensor_release(b);
        }
        a = ops_eye_m(37, 53, dt, CPU), b = ops_eye_m(37, 53, dt, CUDA0);
        assert_close(a, b, 0.0, "eye");
        ops_tensor_release(a), ops_tensor_release(b);
        a = ops_full(OPS_INTS(3, 1000), OPS_SCALAR_INT(7), dt, CPU), b = ops_full(OPS_INTS(3, 1000), OPS_SCALAR_INT(7), dt, CUDA0);
        assert_close(a, b, 0.0, "full");
        ops_tensor_release(a), ops_tensor_release(b);
        a = ops_ones(OPS_INTS(BIG), dt, CPU), b = ops_ones(OPS_INTS(BIG), dt, CUDA0);
        assert_close(a, b, 0.0, "ones");
        ops_tensor_release(a), ops_tensor_release(b);
        a = ops_zeros(OPS_INTS(5, 7), dt, CPU), b = ops_zeros(OPS_INTS(5, 7), dt, CUDA0);
        assert_close(a, b, 0.0, "zeros");
        ops_tensor_release(a), ops_tensor_release(b);
    }
    /* out= into strided views: every other element of a row, a transposed matrix */
    ops_tensor *bc = ops_full(OPS_INTS(2, 200), OPS_SCALAR_FLOAT(-9.0), OPS_FLOAT32, CPU);
    ops_tensor *bg = ops_full(OPS_INTS(2, 200), OPS_SCALAR_FLOAT(-9.0), OPS_FLOAT32, CUDA0);
    const int64_t zero = 0, one = 1;
    ops_tensor *rc = ops_slice(bc, 0, &one, NULL, 1), *rg = ops_slice(bg, 0, &one, NULL, 1);
    ops_tensor *rc1 = ops_select(rc, 0, 0), *rg1 = ops_select(rg, 0, 0);
    ops_tensor *sc = ops_slice(rc1, 0, &zero, NULL, 2), *sg = ops_slice(rg1, 0, &zero, NULL, 2);
    ck_assert_int_eq(ops_arange_start_out(OPS_SCALAR_FLOAT(1.0), OPS_SCALAR_FLOAT(101.0), OPS_SCALAR_INT(1), sc), OPS_OK);
    ck_assert_int_eq(ops_arange_start_out(OPS_SCALAR_FLOAT(1.0), OPS_SCALAR_FLOAT(101.0), OPS_SCALAR_INT(1), sg), OPS_OK);
    assert_close(bc, bg, 0.0, "arange out= strided");
    ck_assert_int_eq(ops_linspace_out(OPS_SCALAR_FLOAT(1.0), OPS_SCALAR_FLOAT(-3.0), 100, sc), OPS_OK);
    ck_assert_int_eq(ops_linspace_out(OPS_SCALAR_FLOAT(1.0), OPS_SCALAR_FLOAT(-3.0), 100, sg), OPS_OK);
    assert_close(bc, bg, 0.0, "linspace out= strided");
    ops_tensor *ec = ops_t(bc), *eg = ops_t(bg);
    ck_assert_int_eq(ops_eye_m_out(200, 2, ec), OPS_OK);
    ck_assert_int_eq(ops_eye_m_out(200, 2, eg), OPS_OK);
    assert_close(bc, bg, 0.0, "eye out= transposed");
    ops_tensor *all[] = {bc, bg, rc, rg, rc1, rg1, sc, sg, ec, eg};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- shape ------------------------------------------------------------------------------ */

/* ops(x) on the CPU and on the device copy of x agree bit for bit. */
typedef ops_tensor *(*unary_shape_fn)(const ops_tensor *x);

static ops_tensor *
flip_02(const ops_tensor *x)
{
    return ops_flip(x, OPS_INTS(0, 2));
}

static ops_tensor *
roll_2(const ops_tensor *x)
{
    return ops_roll(x, OPS_INTS(5, -3), OPS_INTS(2, 0));
}

static ops_tensor *
roll_flat(const ops_tensor *x)
{
    return ops_roll(x, OPS_INTS(17), OPS_INTS());
}

static ops_tensor *
tril_1(const ops_tensor *x)
{
    return ops_tril(x, 1);
}

static ops_tensor *
triu_m2(const ops_tensor *x)
{
    return ops_triu(x, -2);
}

static ops_tensor *
repeat_3(const ops_tensor *x)
{
    return ops_repeat(x, OPS_INTS(2, 1, 3, 2));
}

START_TEST(test_shape_matches_cpu)
{
    ops_generator *g = ops_generator_create(11);
    ops_tensor *x = ops_randn(OPS_INTS(6, 9, 13), g, OPS_FLOAT32, CPU);
    ops_tensor *xg = to_device(x, CUDA0);
    ops_tensor *xp = ops_permute(x, OPS_INTS(2, 0, 1)), *xgp = ops_permute(xg, OPS_INTS(2, 0, 1));
    const unary_shape_fn fns[] = {flip_02, roll_2, roll_flat, tril_1, triu_m2, repeat_3};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        ops_tensor *a = fns[i](x), *b = fns[i](xg);
        assert_close(a, b, 0.0, "shape op");
        ops_tensor_release(a), ops_tensor_release(b);
        a = fns[i](xp), b = fns[i](xgp);
        assert_close(a, b, 0.0, "shape op, permuted input");
        ops_tensor_release(a), ops_tensor_release(b);
    }
    /* in-place triangles on a transposed view */
    ops_tensor *c = ops_clone(x, OPS_MEMORY_FORMAT_NONE), *cg = to_device(x, CUDA0);
    ops_tensor *ct = ops_transpose(c, 1, 2), *cgt = ops_transpose(cg, 1, 2);
    ck_assert_int_eq(ops_tril_(ct, -1), OPS_OK);
    ck_assert_int_eq(ops_tril_(cgt, -1), OPS_OK);
    ck_assert_int_eq(ops_triu_(ct, -3), OPS_OK);
    ck_assert_int_eq(ops_triu_(cgt, -3), OPS_OK);
    assert_close(c, cg, 0.0, "tril_/triu_ on a transposed view");
    /* cat of 150 inputs: varied lengths, some transposed, some empty, one float64 */
    enum { N = 150 };
    const ops_tensor *lc[N], *lg[N];
    ops_tensor *own[4 * N];
    int nown = 0;
    for (int i = 0; i < N; i++) {
        const int64_t len = i % 7 == 3 ? 0 : 1 + (i * 37) % 11;
        ops_tensor *t = ops_randn(OPS_INTS(len, 5), g, i == 77 ? OPS_FLOAT64 : OPS_FLOAT32, CPU);
        if (i % 4 == 1) { /* a strided input with the same values shape */
            ops_tensor *w = ops_randn(OPS_INTS(5, len), g, OPS_FLOAT32, CPU);
            ops_tensor_release(t);
            own[nown++] = w;
            t = ops_t(w);
        }
        ops_tensor *tg = ops_empty_like(t, OPS_DTYPE_NONE, CUDA0, OPS_MEMORY_FORMAT_NONE);
        ck_assert_int_eq(ops_copy_(tg, t, false), OPS_OK);
        own[nown++] = t;
        own[nown++] = tg;
        lc[i] = t;
        lg[i] = tg;
    }
    ops_tensor *a = ops_cat((ops_tensor_list){lc, N}, 0), *b = ops_cat((ops_tensor_list){lg, N}, 0);
    assert_close(a, b, 0.0, "cat of 150 inputs");
    ops_tensor_release(a), ops_tensor_release(b);
    a = ops_hstack((ops_tensor_list){lc + 10, 3}), b = ops_hstack((ops_tensor_list){lg + 10, 3});
    ck_assert_ptr_null(a); /* their row counts differ: the same error on both */
    ck_assert_ptr_null(b);
    ops_tensor *x2 = ops_randn(OPS_INTS(6, 9, 13), g, OPS_FLOAT32, CPU), *x2g = to_device(x2, CUDA0);
    const ops_tensor *sc[3] = {x, x2, x}, *sg[3] = {xg, x2g, xg};
    for (int dim = 0; dim <= 3; dim++) {
        a = ops_stack((ops_tensor_list){sc, 3}, dim), b = ops_stack((ops_tensor_list){sg, 3}, dim);
        assert_close(a, b, 0.0, "stack");
        ops_tensor_release(a), ops_tensor_release(b);
    }
    a = ops_vstack((ops_tensor_list){sc, 3}), b = ops_vstack((ops_tensor_list){sg, 3});
    assert_close(a, b, 0.0, "vstack");
    ops_tensor_release(a), ops_tensor_release(b);
    for (int i = 0; i < nown; i++)
        ops_tensor_release(own[i]);
    ops_tensor *all[] = {x, xg, xp, xgp, c, cg, ct, cgt, x2, x2g};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
    ops_generator_release(g);
}
END_TEST

int
main(void)
{
    if (ops_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    Suite *s = suite_create("cuda_random");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_streams_match_cpu, 0, S_NSAMPLERS);
    tcase_add_test(tc, test_default_generators_advance_alike);
    tcase_add_test(tc, test_strided_outputs);
    tcase_add_test(tc, test_randperm_and_multinomial);
    tcase_add_test(tc, test_errors_from_device_data);
    suite_add_tcase(s, tc);
    TCase *tc2 = tcase_create("creation_shape");
    tcase_set_timeout(tc2, 600);
    tcase_add_test(tc2, test_creation_matches_cpu);
    tcase_add_test(tc2, test_shape_matches_cpu);
    suite_add_tcase(s, tc2);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

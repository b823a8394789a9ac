/* Binary arithmetic kernels (CPU): add, sub, mul, div (true, trunc, floor),
 * remainder, fmod, pow, maximum, minimum, fmax, fmin, atan2.
 *
 * The meta has converted both inputs to it->common_dtype (operands 1 and 2) and
 * chosen the output's dtype, so each kernel dispatches once on the common dtype,
 * over the dtypes its schema entry declares (OPS_DISPATCH_DECLARED, ops_kernels_binary.h) where
 * one switch covers them; the generated glue has refused the others already.
 * The per-element arithmetic (integer division and remainder with PyTorch's rules,
 * floor division of floats, powi, NaN-propagating maximum) is
 * kernels/ops_elementwise_math.h's, shared with kernels/cuda/binary.cu.  The argument
 * checks (add and sub's alpha, sub's bool operands, pow's negative integer exponent)
 * are the entries' `check:` functions (kernels/elementwise_check.c), which the glue has
 * run before the kernel; bool is refused by the entries' dtypes.  A zero integer
 * divisor, found in the data, is reported before anything is written.  float16/bfloat16
 * compute in float.
 *
 * add, sub, mul, div, maximum, minimum, fmax and fmin at floating dtypes take the per-level vector loops of
 * kernels/cpu/vec/vec_binary.c (AVX2/AVX-512 at runtime, F16C for float16) for the runs
 * whose inputs are contiguous or one broadcast element (OPS_BINARY_KERNEL_VEC); the
 * loops compute exactly what the expression here does, so any run may take either.
 * pow and atan2 run the float32/float64 loops of kernels/cpu/vec/vec_act.c, and
 * float16/bfloat16 through the float32 ones (compute in float, round once). */
#include <math.h>
#include <string.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_binary.h"
#include "kernels/cpu/vec/vec_binary.h"

/* The vector loop of OP for the iterator's dtype, or NULL (integers and bool keep the
 * macro's loops: the compiler vectorises those at the baseline width). */
static ops_vec_binary_fn *
vec_binary_fn(const ops_iter *it, ops_vec_binary_op op)
{
    ops_vec_binary_dtype col;
    switch (it->common_dtype) {
    case OPS_FLOAT32:
        col = OPS_VEC_BDT_F32;
        break;
    case OPS_FLOAT64:
        col = OPS_VEC_BDT_F64;
        break;
    case OPS_FLOAT16:
        col = OPS_VEC_BDT_F16;
        break;
    case OPS_BFLOAT16:
        col = OPS_VEC_BDT_BF16;
        break;
    default:
        return NULL;
    }
    if (it->dtypes[0] != it->common_dtype || it->dtypes[1] != it->common_dtype ||
        it->dtypes[2] != it->common_dtype)
        return NULL;
    return ops_vec_binary()->fn[op][col];
}

/* add and sub: the plain loop when alpha is 1 (x + 1 * y is x + y, bit for bit). */
#define ALPHA_KERNEL_(IT, ENTRY, PLAIN, WITH_ALPHA, ALPHA, EXPR)                            \
    do {                                                                                    \
        ops_vec_binary_fn *const vplain_ = vec_binary_fn((IT), (PLAIN));                    \
        ops_vec_binary_fn *const valpha_ = vec_binary_fn((IT), (WITH_ALPHA));               \
        OPS_DISPATCH_DECLARED(ENTRY, (IT)->common_dtype, (IT)->op, {                        \
            const opmath_t a = OPS_SCALAR_AS(opmath_t, (ALPHA));                            \
            OPS_BINARY_KERNEL_VEC((IT), scalar_t, scalar_t, scalar_t,                       \
                                  a == (opmath_t)1 ? vplain_ : valpha_, &a, EXPR);          \
        });                                                                                 \
    } while (0)
#include "kernels/cpu/vec/vec_act.h"
#include "kernels/cpu/vec_loop.h"

/* Integer division and remainder by zero, scanned in the divisor (operand 2). */
static ops_status
check_divisor(const ops_iter *it)
{
    if (!ops_dtype_is_integral(it->common_dtype, true))
        return OPS_OK;
    bool found = false;
    const size_t size = ops_dtype_size(it->dtypes[2]);
    OPS_ITER_LOOP(it, data, strides, n, {
        const char *p = data[2];
        const int64_t s = strides[2];
        bool zero = false;
        switch (size) {
        case 1:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint8_t *)(p + i * s) == 0;
            break;
        case 2:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint16_t *)(p + i * s) == 0;
            break;
        case 4:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint32_t *)(p + i * s) == 0;
            break;
        default:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint64_t *)(p + i * s) == 0;
            break;
        }
        if (zero)
            __atomic_store_n(&found, true, __ATOMIC_RELAXED);
    });
    if (found)
        return ops_fail_zero_division(it->op);
    return OPS_OK;
}

/* The body of the rounding divisions and remainders (numeric dtypes, by their
 * entries): integer divisors are checked for zero before anything is written, floats
 * follow IEEE. */
#define DIVISION_KERNEL_(IT, FN)                                                            \
    do {                                                                                    \
        ops_status st_;                                                                     \
        if (ops_dtype_is_floating((IT)->common_dtype)) {                                    \
            OPS_DISPATCH_FLOATING((IT)->common_dtype, (IT)->op,                             \
                                  OPS_BINARY_KERNEL(IT, scalar_t, scalar_t, scalar_t, FN(x, y)););  \
            return OPS_OK;                                                                  \
        }                                                                                   \
        if ((st_ = check_divisor(IT)) != OPS_OK)                                            \
            return st_;                                                                     \
        OPS_DISPATCH_INTEGRAL((IT)->common_dtype, (IT)->op,                                 \
                              OPS_BINARY_KERNEL(IT, scalar_t, scalar_t, scalar_t, FN(x, y)););      \
        return OPS_OK;                                                                      \
    } while (0)

/* ---- add, sub, mul -------------------------------------------------------------- */

ops_status
add_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    ALPHA_KERNEL_(it, ADD_OUT, OPS_VEC_BIN_ADD, OPS_VEC_BIN_ADD_ALPHA, alpha, x + a * y);
    return OPS_OK;
}

ops_status
sub_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    ALPHA_KERNEL_(it, SUB_OUT, OPS_VEC_BIN_SUB, OPS_VEC_BIN_SUB_ALPHA, alpha, x - a * y);
    return OPS_OK;
}

ops_status
mul_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    if (it->common_dtype == OPS_BOOL) {
        OPS_BINARY_KERNEL(it, bool, bool, bool, x && y);
        return OPS_OK;
    }
    ops_vec_binary_fn *const vf = vec_binary_fn(it, OPS_VEC_BIN_MUL);
    OPS_DISPATCH_NUMERIC(it->common_dtype, it->op,
                         OPS_BINARY_KERNEL_VEC(it, scalar_t, scalar_t, scalar_t, vf, NULL, x * y););
    return OPS_OK;
}

/* ---- division ------------------------------------------------------------------- */

ops_status
div_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    ops_vec_binary_fn *const vf = vec_binary_fn(it, OPS_VEC_BIN_DIV);
    OPS_DISPATCH_DECLARED(DIV_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL_VEC(it, scalar_t, scalar_t, scalar_t, vf, NULL, x / y););
    return OPS_OK;
}

ops_status
div_out_mode_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, const char *rounding_mode)
{
    if (rounding_mode == NULL)
        return div_out_cpu(it, self, other);
    /* "trunc" or "floor": the meta (ops_meta_div_mode) refused any other mode */
    if (strcmp(rounding_mode, "trunc") == 0)
        DIVISION_KERNEL_(it, ops_math_div_trunc);
    DIVISION_KERNEL_(it, ops_math_div_floor);
}

ops_status
remainder_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    DIVISION_KERNEL_(it, ops_math_remainder);
}

ops_status
fmod_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    DIVISION_KERNEL_(it, ops_math_fmod);
}

/* ---- pow, maximum, minimum, atan2 ---------------------------------------------- */

/* Widens m float16/bfloat16 elements at p (stride s bytes) into f with the level's
 * conversion loop (exact), gathering a strided run into h first. */
static void
half_widen(const ops_vec_convert_table *cv, int k, float *f, uint16_t *h, const char *p, int64_t s,
           int64_t m)
{
    const uint16_t *src = (const uint16_t *)p;
    if (s != 2) {
        for (int64_t i = 0; i < m; i++)
            h[i] = *(const uint16_t *)(p + i * s);
        src = h;
    }
    cv->to_f32[k](f, src, m);
}

/* One run of float16/bfloat16 pow or atan2 through the float32 loops of the level
 * (kernels/cpu/vec/vec_act.c): blocks of OPS_VEC_LOOP_BUF, both inputs widened (a
 * strided or broadcast input gathered first), the float32 loop in place, each result
 * rounded once to nearest even by the level's narrowing loop.  That is the scalar half
 * loop's rule (compute in float, round once) with the float32 op as the float function,
 * so a half result is the float32 op's result on the converted inputs, rounded: the
 * same bits whatever the layout, level or split.  With `scalar` (pow) a run whose
 * exponent is one broadcast element takes the float32 scalar-exponent loop, as the
 * float32 kernel does (its special forms are the tensor^tensor loop's, lane by lane). */
static void
half_binary_run(const ops_vec_convert_table *cv, int k, ops_vec_act2_f32_fn *fn,
                ops_vec_act_f32_fn *scalar, char *const *data, const int64_t *strides, int64_t n)
{
    float a[OPS_VEC_LOOP_BUF], b[OPS_VEC_LOOP_BUF];
    uint16_t h[OPS_VEC_LOOP_BUF];
    const int64_t so = strides[0], sa = strides[1], sb = strides[2];
    const bool one_exponent = scalar != NULL && sb == 0;
    float e = 0;
    if (one_exponent)
        cv->to_f32[k](&e, (const uint16_t *)data[2], 1);
    for (int64_t i0 = 0; i0 < n; i0 += OPS_VEC_LOOP_BUF) {
        const int64_t m = n - i0 < OPS_VEC_LOOP_BUF ? n - i0 : OPS_VEC_LOOP_BUF;
        half_widen(cv, k, a, h, data[1] + i0 * sa, sa, m);
        if (one_exponent) {
            scalar(a, a, m, &e);
        } else {
            half_widen(cv, k, b, h, data[2] + i0 * sb, sb, m);
            fn(a, b, a, m);
        }
        if (so == 2) {
            cv->from_f32[k]((uint16_t *)(data[0] + i0 * so), a, m);
        } else {
            cv->from_f32[k](h, a, m);
            for (int64_t i = 0; i < m; i++)
                *(uint16_t *)(data[0] + (i0 + i) * so) = h[i];
        }
    }
}

/* pow (with `scalar`) or atan2 at float16/bfloat16 with every operand of that dtype:
 * through the float32 loops; false for any other dtype. */
static bool
half_binary(ops_iter *it, ops_vec_act2_op op, ops_vec_act_f32_fn *scalar)
{
    const ops_dtype dt = it->dtypes[1];
    if ((dt != OPS_FLOAT16 && dt != OPS_BFLOAT16) || it->dtypes[0] != dt || it->dtypes[2] != dt)
        return false;
    const ops_vec_convert_table *const cv = ops_vec_convert();
    const int k = dt == OPS_FLOAT16 ? OPS_VEC_CVT_F16 : OPS_VEC_CVT_BF16;
    ops_vec_act2_f32_fn *const fn = ops_vec_act()->act2_f32[op];
    OPS_ITER_LOOP(it, vd_, vs_, vn_, { half_binary_run(cv, k, fn, scalar, vd_, vs_, vn_); });
    return true;
}

ops_status
pow_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *exponent)
{
    (void)self;
    (void)exponent;
    /* float32/float64 with all operands of one dtype: the vector loops of the CPU's
     * level (kernels/cpu/vec/vec_act.c); a run whose exponent is one broadcast value
     * (pow(x, 2.0), stride 0) takes PyTorch's forms of 2, 3, 0.5, -0.5, -1, -2.
     * float16/bfloat16: the float32 loops (half_binary). */
    const ops_dtype pdt = it->dtypes[1];
    if ((pdt == OPS_FLOAT32 || pdt == OPS_FLOAT64) && it->dtypes[0] == pdt && it->dtypes[2] == pdt) {
        const ops_vec_act_table *const vt = ops_vec_act();
        if (pdt == OPS_FLOAT32) {
            OPS_ITER_LOOP(it, vd_, vs_, vn_, {
                if (vs_[2] == 0) {
                    const float e = *(const float *)vd_[2];
                    OPS_VEC_RUN_UNARY(float, vt->act_f32[OPS_VEC_ACT_POW_SCALAR], &e, vd_, vs_, vn_);
                } else {
                    OPS_VEC_RUN_BINARY(float, vt->act2_f32[OPS_VEC_ACT2_POW], vd_, vs_, vn_);
                }
            });
        } else {
            OPS_ITER_LOOP(it, vd_, vs_, vn_, {
                if (vs_[2] == 0) {
                    const double e = *(const double *)vd_[2];
                    OPS_VEC_RUN_UNARY(double, vt->act_f64[OPS_VEC_ACT_POW_SCALAR], &e, vd_, vs_, vn_);
                } else {
                    OPS_VEC_RUN_BINARY(double, vt->act2_f64[OPS_VEC_ACT2_POW], vd_, vs_, vn_);
                }
            });
        }
        return OPS_OK;
    }
    if (half_binary(it, OPS_VEC_ACT2_POW, ops_vec_act()->act_f32[OPS_VEC_ACT_POW_SCALAR]))
        return OPS_OK;
    OPS_DISPATCH_DECLARED(POW_OUT, it->common_dtype, it->op,
                         OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_pow(x, y)););
    return OPS_OK;
}

ops_status
maximum_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    ops_vec_binary_fn *const vf = vec_binary_fn(it, OPS_VEC_BIN_MAX);
    OPS_DISPATCH_DECLARED(MAXIMUM_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL_VEC(it, scalar_t, scalar_t, scalar_t, vf, NULL, ops_math_max(x, y)););
    return OPS_OK;
}

ops_status
minimum_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    ops_vec_binary_fn *const vf = vec_binary_fn(it, OPS_VEC_BIN_MIN);
    OPS_DISPATCH_DECLARED(MINIMUM_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL_VEC(it, scalar_t, scalar_t, scalar_t, vf, NULL, ops_math_min(x, y)););
    return OPS_OK;
}

/* fmax/fmin: the vector loops at the float dtypes (OPS_VEC_BIN_FMAX/FMIN), the
 * macro's loops (vectorised by the compiler) for the integers and bool */
ops_status
fmax_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    ops_vec_binary_fn *const vf = vec_binary_fn(it, OPS_VEC_BIN_FMAX);
    OPS_DISPATCH_DECLARED(FMAX_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL_VEC(it, scalar_t, scalar_t, scalar_t, vf, NULL, ops_math_fmax(x, y)););
    return OPS_OK;
}

ops_status
fmin_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    ops_vec_binary_fn *const vf = vec_binary_fn(it, OPS_VEC_BIN_FMIN);
    OPS_DISPATCH_DECLARED(FMIN_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL_VEC(it, scalar_t, scalar_t, scalar_t, vf, NULL, ops_math_fmin(x, y)););
    return OPS_OK;
}

ops_status
atan2_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    /* float32/float64: the vector loop of the CPU's level (kernels/cpu/vec/vec_act.c);
     * float16/bfloat16 through the float32 one (half_binary) */
    const ops_dtype adt = it->dtypes[1];
    if ((adt == OPS_FLOAT32 || adt == OPS_FLOAT64) && it->dtypes[0] == adt && it->dtypes[2] == adt) {
        const ops_vec_act_table *const vt = ops_vec_act();
        if (adt == OPS_FLOAT32)
            OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_BINARY(float, vt->act2_f32[OPS_VEC_ACT2_ATAN2], vd_, vs_, vn_); });
        else
            OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_BINARY(double, vt->act2_f64[OPS_VEC_ACT2_ATAN2], vd_, vs_, vn_); });
        return OPS_OK;
    }
    if (half_binary(it, OPS_VEC_ACT2_ATAN2, NULL))
        return OPS_OK;
    OPS_DISPATCH_DECLARED(ATAN2_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_atan2(x, y)););
    return OPS_OK;
}

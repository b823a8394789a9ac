/* Binary arithmetic kernels (CPU): add, sub, mul, div (true, trunc, floor),
 * remainder, fmod, pow, maximum, minimum, atan2.
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
 * add, sub, mul, div, maximum and minimum at floating dtypes take the per-level vector loops of
 * kernels/cpu/vec/vec_binary.c (AVX2/AVX-512 at runtime, F16C for float16) for the runs
 * whose inputs are contiguous or one broadcast element (OPS_BINARY_KERNEL_VEC); the
 * loops compute exactly what the expression here does, so any run may take either. */
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

ops_status
pow_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *exponent)
{
    (void)self;
    (void)exponent;
    /* float32/float64 with all operands of one dtype: the vector loops of the CPU's
     * level (kernels/cpu/vec/vec_act.c); a run whose exponent is one broadcast value
     * (pow(x, 2.0), stride 0) takes PyTorch's forms of 2, 3, 0.5, -0.5, -1, -2. */
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

ops_status
atan2_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    /* float32/float64: the vector loop of the CPU's level (kernels/cpu/vec/vec_act.c) */
    const ops_dtype adt = it->dtypes[1];
    if ((adt == OPS_FLOAT32 || adt == OPS_FLOAT64) && it->dtypes[0] == adt && it->dtypes[2] == adt) {
        const ops_vec_act_table *const vt = ops_vec_act();
        if (adt == OPS_FLOAT32)
            OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_BINARY(float, vt->act2_f32[OPS_VEC_ACT2_ATAN2], vd_, vs_, vn_); });
        else
            OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_BINARY(double, vt->act2_f64[OPS_VEC_ACT2_ATAN2], vd_, vs_, vn_); });
        return OPS_OK;
    }
    OPS_DISPATCH_DECLARED(ATAN2_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_atan2(x, y)););
    return OPS_OK;
}

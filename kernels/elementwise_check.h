/* Internal: host-side validation of the elementwise families, shared by the CPU
 * kernels (kernels/cpu/ binary.c, unary.c, ternary.c and activation.c define these
 * functions) and the CUDA ones (the .cu files of the same names), so both refuse the
 * same inputs with the same messages before anything is written.  A kernels/ header:
 * the runtime neither declares nor calls kernel functions.  Checks that need the data
 * (integer division by zero) are per backend; their message is ops_fail_zero_division. */
#ifndef OPS_KERNELS_ELEMENTWISE_CHECK_H
#define OPS_KERNELS_ELEMENTWISE_CHECK_H

#include "ops_internal.h"
#include "ops_iter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dtype a kernel computes dt in (float for float16/bfloat16); Scalars are
 * converted to this, so that is the range they are checked against. */
static inline ops_dtype
ops_opmath_dtype(ops_dtype dt)
{
    return dt == OPS_FLOAT16 || dt == OPS_BFLOAT16 ? OPS_FLOAT32 : dt;
}

/* PyTorch's Scalar::to<T>() check: OPS_ERR_VALUE "op: value of 'arg' cannot be
 * converted to type T without overflow" unless s is representable in dt.
 * kernels/cpu/binary.c. */
ops_status ops_check_scalar_fits(const char *op, const char *arg, ops_scalar s, ops_dtype dt);

/* ---- binary.c ---- */
/* add/sub's alpha: bool only for bool results, no float alpha for integers, and it
 * must fit the computation dtype. */
ops_status ops_check_alpha(const ops_iter *it, ops_scalar alpha);
/* sub: no bool operand (PyTorch's messages), then the alpha check. */
ops_status ops_check_sub(const ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha);
/* div's rounding_mode: "trunc" or "floor" (NULL is true division, not passed here);
 * *trunc tells which. */
ops_status ops_check_rounding_mode(const char *op, const char *rounding_mode, bool *trunc);
/* The rounding divisions, remainder and fmod: bool is refused. */
ops_status ops_check_division_dtype(const ops_iter *it);
/* Integer division or remainder by zero (found in the data by each backend). */
ops_status ops_fail_zero_division(const char *op);
/* pow: bool refused; an integer tensor to a negative integer Scalar refused. */
ops_status ops_check_pow(const ops_iter *it, const ops_tensor *exponent);

/* ---- unary.c ---- */
/* neg, relu and square of bool; floor/ceil/round/trunc of bool. */
ops_status ops_check_neg(ops_dtype dt);
ops_status ops_check_relu(ops_dtype dt);
ops_status ops_check_square(ops_dtype dt);
ops_status ops_check_rounding_dtype(const char *op, ops_dtype dt);
/* gelu's approximate: NULL or "none" (*tanh_form false) or "tanh" (*tanh_form true). */
ops_status ops_check_gelu_approximate(const char *approximate, bool *tanh_form);
/* nan_to_num's default replacement for +inf (its negation for -inf): the largest
 * finite value of the floating dtype dt. */
double ops_nan_to_num_limit(ops_dtype dt);

/* ---- ternary.c ---- */
/* clamp with Scalar bounds: bool refused, bounds must fit. */
ops_status ops_check_clamp(const ops_iter *it, const ops_scalar *min, const ops_scalar *max);
/* lerp: end (and a tensor weight) of self's dtype; *scalar_weight tells whether the
 * weight is a wrapped Scalar, and then *weight is its value. */
ops_status ops_check_lerp(const ops_iter *it, const ops_tensor *self, const ops_tensor *end,
                          const ops_tensor *weight, bool *scalar_weight, double *weight_value);
ops_status ops_check_addcmul(const ops_iter *it, ops_scalar value);
ops_status ops_check_addcdiv(const ops_iter *it, const ops_tensor *tensor1, const ops_tensor *tensor2,
                             ops_scalar value);

/* ---- activation.c ---- */
/* celu: alpha 0 refused. */
ops_status ops_check_celu(const char *op, double alpha);
/* hardtanh: bool refused; for integer dtypes the limits as int64 (uint8 refuses
 * negative ones). */
ops_status ops_check_hardtanh(const ops_iter *it, ops_scalar min_val, ops_scalar max_val, int64_t *lo,
                              int64_t *hi);
/* softsign: integers are computed in float (unary_float), bool refused (PyTorch's
 * x / (1 + x.abs()) fails in abs). */
ops_status ops_check_softsign(ops_dtype dt);
/* threshold: numeric dtypes; for integer dtypes threshold and value converted with
 * PyTorch's checked conversion. */
ops_status ops_check_threshold(const ops_iter *it, ops_scalar threshold, ops_scalar value, int64_t *t,
                               int64_t *v);

#ifdef __cplusplus
}
#endif

#endif /* OPS_KERNELS_ELEMENTWISE_CHECK_H */

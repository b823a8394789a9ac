/* Internal: what the elementwise kernels of both backends share on the host, defined
 * in kernels/elementwise_check.c.  The ops' argument checks themselves (ops_check_add,
 * ops_check_lerp, ...) are declared by the generated ops_kernels_elementwise_check.h
 * and called by the generated glue before the kernel (the entries' `check:` key,
 * docs/codegen.md "Argument checks"), so no kernel calls one.  A kernels/ header: the
 * runtime neither declares nor calls kernel functions.  Checks that need the data
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

/* Integer division or remainder by zero (found in the data by each backend: the one
 * check the glue cannot run before the kernel). */
ops_status ops_fail_zero_division(const char *op);

/* What a kernel reads from arguments its entry's check (run by the glue) has already
 * accepted, without checking again. */
/* lerp: whether the weight is a wrapped Scalar, and then *value is its value. */
bool ops_lerp_scalar_weight(const ops_tensor *weight, double *value);
/* gelu: whether approximate is "tanh" (else the exact form). */
bool ops_gelu_tanh_form(const char *approximate);
/* nan_to_num's default replacement for +inf (its negation for -inf): the largest
 * finite value of the floating dtype dt. */
double ops_nan_to_num_limit(ops_dtype dt);

#ifdef __cplusplus
}
#endif

#endif /* OPS_KERNELS_ELEMENTWISE_CHECK_H */

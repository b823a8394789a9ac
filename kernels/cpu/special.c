/* erfinv, logit (and logit_backward), cbrt (CPU).
 *
 * The impl half of structured ops (meta: unary_float; logit_backward binary_float):
 * integral and bool inputs arrive converted to the default float dtype.  float32 and
 * float64 run the vector loops of the CPU's instruction-set level
 * (kernels/cpu/vec/vec_special.c, docs/cpu-dispatch.md "erfinv, logit, cbrt"); float16
 * and bfloat16 go through the float32 loop in blocks, widened and each result rounded
 * once (the rule of kernels/cpu/unary.c's half path).  The scalar loops
 * (kernels/ops_special_math.h, the CUDA kernels' functions too) take what is left: an
 * out= whose dtype differs from the computation's.  logit_backward is a plain element
 * loop (PyTorch's formula, a division and compares). */
#include <math.h>

#include "ops_dispatch.h"
#include "kernels/ops_special_math.h"
#include "ops_kernels_special.h"
#include "kernels/cpu/vec_loop.h"
#include "kernels/cpu/vec/vec_convert.h"
#include "kernels/cpu/vec/vec_special.h"

/* One run of a float16/bfloat16 op through the float32 loop F (parameter P): blocks
 * widened by the level's conversion loop (a strided run gathered first), F in place,
 * each result rounded once to the half type (scattered after, if strided). */
static void
half_run_(const ops_vec_convert_table *cv, int k, ops_vec_special_f32_fn *f, const float *p, char *const *data,
          const int64_t *strides, int64_t n)
{
    char *const o = data[0];
    const char *const a = data[1];
    const int64_t so = strides[0], sa = strides[1];
    float buf[OPS_VEC_LOOP_BUF];
    uint16_t h[OPS_VEC_LOOP_BUF];
    for (int64_t b = 0; b < n; b += OPS_VEC_LOOP_BUF) {
        const int64_t m = n - b < OPS_VEC_LOOP_BUF ? n - b : OPS_VEC_LOOP_BUF;
        const uint16_t *src = (const uint16_t *)(const void *)(a + b * 2);
        if (sa != 2) {
            for (int64_t i = 0; i < m; i++)
                h[i] = *(const uint16_t *)(const void *)(a + (b + i) * sa);
            src = h;
        }
        cv->to_f32[k](buf, src, m);
        f(buf, buf, m, p);
        if (so == 2) {
            cv->from_f32[k]((uint16_t *)(void *)(o + b * 2), buf, m);
        } else {
            cv->from_f32[k](h, buf, m);
            for (int64_t i = 0; i < m; i++)
                *(uint16_t *)(void *)(o + (b + i) * so) = h[i];
        }
    }
}

/* The vector loop OP with parameter p0 (logit's eps, -1 for none) for the iterator's
 * dtype; false for an output dtype other than the input's (the scalar loop's). */
static bool
special_vec_(ops_iter *it, ops_vec_special_op op, double p0)
{
    const ops_dtype dt = it->dtypes[1];
    if (it->dtypes[0] != dt)
        return false;
    const ops_vec_special_table *const vt = ops_vec_special();
    ops_vec_special_f32_fn *const f = vt->f32[op];
    const float pf[1] = {(float)p0};
    switch (dt) {
    case OPS_FLOAT32:
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_UNARY(float, f, pf, vd_, vs_, vn_); });
        return true;
    case OPS_FLOAT64: {
        ops_vec_special_f64_fn *const g = vt->f64[op];
        const double pd[1] = {p0};
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_UNARY(double, g, pd, vd_, vs_, vn_); });
        return true;
    }
    case OPS_FLOAT16:
    case OPS_BFLOAT16: {
        const ops_vec_convert_table *const cv = ops_vec_convert();
        const int k = dt == OPS_FLOAT16 ? OPS_VEC_CVT_F16 : OPS_VEC_CVT_BF16;
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { half_run_(cv, k, f, pf, vd_, vs_, vn_); });
        return true;
    }
    default:
        return false;
    }
}

ops_status
erfinv_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (special_vec_(it, OPS_VEC_SPECIAL_ERFINV, 0.0))
        return OPS_OK;
    OPS_DISPATCH_DECLARED(ERFINV_OUT, it->common_dtype, "erfinv",
                          OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_erfinv(x)););
    return OPS_OK;
}

ops_status
cbrt_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (special_vec_(it, OPS_VEC_SPECIAL_CBRT, 0.0))
        return OPS_OK;
    OPS_DISPATCH_DECLARED(CBRT_OUT, it->common_dtype, "cbrt",
                          OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_cbrt(x)););
    return OPS_OK;
}

/* eps rounded to the computation's precision (float for float32 and the half types),
 * as PyTorch's kernels take it; None is -1 (no clamp). */
ops_status
logit_out_cpu(ops_iter *it, const ops_tensor *self, const double *eps)
{
    (void)self;
    const double e = eps != NULL ? *eps : -1.0;
    if (special_vec_(it, OPS_VEC_SPECIAL_LOGIT, e))
        return OPS_OK;
    OPS_DISPATCH_DECLARED(LOGIT_OUT, it->common_dtype, "logit", {
        const opmath_t ev = (opmath_t)e;
        OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_logit(x, ev));
    });
    return OPS_OK;
}

ops_status
logit_backward_out_cpu(ops_iter *it, const ops_tensor *grad_output, const ops_tensor *self, const double *eps)
{
    (void)grad_output;
    (void)self;
    const double e = eps != NULL ? *eps : -1.0;
    OPS_DISPATCH_DECLARED(LOGIT_BACKWARD_GRAD_INPUT, it->common_dtype, "logit_backward", {
        const opmath_t ev = (opmath_t)e;
        OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_logit_backward(x, y, ev));
    });
    return OPS_OK;
}

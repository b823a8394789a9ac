/* dtype dispatch for kernel authors: the C form of AT_DISPATCH_* plus typed
 * load/store and the elementwise loop macros over an ops_iter.
 *
 *   ops_status
 *   add_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
 *   {
 *       OPS_DISPATCH_ALL(it->common_dtype, "add", {
 *           const opmath_t a = OPS_SCALAR_AS(opmath_t, alpha);
 *           OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x + a * y);
 *       });
 *       return OPS_OK;
 *   }
 *
 * Each case of a dispatch macro binds `scalar_t` (the storage type) and `opmath_t`
 * (the type arithmetic happens in: float for float16/bfloat16, the type itself
 * otherwise).  An undeclared dtype returns OPS_ERR_DTYPE from the enclosing function
 * with "add: dtype bool is not supported (supported: ...)".
 *
 * The stride rule: kernels honour every operand's strides (which may be 0 for
 * broadcast operands, or negative); the contiguous case is a fast path chosen from
 * the strides, never an assumption. */
#ifndef OPS_DISPATCH_H
#define OPS_DISPATCH_H

#include "ops_iter.h"
#include "ops_scalar_math.h"

/* ---- typed load/store: opmath_t in registers, scalar_t in memory ---------- */

OPS_INLINE bool ops_ld_bool(const bool *p) { return *p; }
OPS_INLINE uint8_t ops_ld_u8(const uint8_t *p) { return *p; }
OPS_INLINE int8_t ops_ld_i8(const int8_t *p) { return *p; }
OPS_INLINE int16_t ops_ld_i16(const int16_t *p) { return *p; }
OPS_INLINE int32_t ops_ld_i32(const int32_t *p) { return *p; }
OPS_INLINE int64_t ops_ld_i64(const int64_t *p) { return *p; }
OPS_INLINE float ops_ld_f16(const ops_half *p) { return ops_half_to_float(*p); }
OPS_INLINE float ops_ld_bf16(const ops_bfloat16 *p) { return ops_bfloat16_to_float(*p); }
OPS_INLINE float ops_ld_f32(const float *p) { return *p; }
OPS_INLINE double ops_ld_f64(const double *p) { return *p; }

OPS_INLINE void ops_st_bool(bool *p, bool v) { *p = v; }
OPS_INLINE void ops_st_u8(uint8_t *p, uint8_t v) { *p = v; }
OPS_INLINE void ops_st_i8(int8_t *p, int8_t v) { *p = v; }
OPS_INLINE void ops_st_i16(int16_t *p, int16_t v) { *p = v; }
OPS_INLINE void ops_st_i32(int32_t *p, int32_t v) { *p = v; }
OPS_INLINE void ops_st_i64(int64_t *p, int64_t v) { *p = v; }
OPS_INLINE void ops_st_f16(ops_half *p, float v) { *p = ops_float_to_half(v); }
OPS_INLINE void ops_st_bf16(ops_bfloat16 *p, float v) { *p = ops_float_to_bfloat16(v); }
OPS_INLINE void ops_st_f32(float *p, float v) { *p = v; }
OPS_INLINE void ops_st_f64(double *p, double v) { *p = v; }

/* OPS_LOAD(p): *p as its opmath type.  p must be a pointer to const scalar_t. */
#define OPS_LOAD(p)                                                                      \
    _Generic((p), const bool *: ops_ld_bool, const uint8_t *: ops_ld_u8,                 \
             const int8_t *: ops_ld_i8, const int16_t *: ops_ld_i16,                     \
             const int32_t *: ops_ld_i32, const int64_t *: ops_ld_i64,                   \
             const ops_half *: ops_ld_f16, const ops_bfloat16 *: ops_ld_bf16,            \
             const float *: ops_ld_f32, const double *: ops_ld_f64)(p)

/* OPS_STORE(p, v): store the opmath value v (converted, rounded) into *p. */
#define OPS_STORE(p, v)                                                                  \
    _Generic((p), bool *: ops_st_bool, uint8_t *: ops_st_u8, int8_t *: ops_st_i8,        \
             int16_t *: ops_st_i16, int32_t *: ops_st_i32, int64_t *: ops_st_i64,        \
             ops_half *: ops_st_f16, ops_bfloat16 *: ops_st_bf16, float *: ops_st_f32,   \
             double *: ops_st_f64)((p), (v))

/* A Scalar converted to a C arithmetic type T (bool: nonzero; ints: truncation). */
#define OPS_SCALAR_AS(T, s)                                                              \
    ((s).kind == OPS_SCALAR_FLOAT ? (T)(s).v.f                                           \
     : (s).kind == OPS_SCALAR_INT ? (T)(s).v.i                                           \
                                  : (T)(s).v.b)

/* ---- dispatch -------------------------------------------------------------- */

OPS_API ops_status ops_fail_dtype(const char *op, ops_dtype dt, unsigned supported_mask);

#define OPS_DISPATCH_CASE_(ENUM, SCALAR, OPMATH, ...)                                    \
    case ENUM: {                                                                         \
        typedef SCALAR scalar_t;                                                         \
        typedef OPMATH opmath_t;                                                         \
        __VA_ARGS__                                                                      \
    } break;

#define OPS_CASE_BOOL(...) OPS_DISPATCH_CASE_(OPS_BOOL, bool, bool, __VA_ARGS__)
#define OPS_CASE_UINT8(...) OPS_DISPATCH_CASE_(OPS_UINT8, uint8_t, uint8_t, __VA_ARGS__)
#define OPS_CASE_INT8(...) OPS_DISPATCH_CASE_(OPS_INT8, int8_t, int8_t, __VA_ARGS__)
#define OPS_CASE_INT16(...) OPS_DISPATCH_CASE_(OPS_INT16, int16_t, int16_t, __VA_ARGS__)
#define OPS_CASE_INT32(...) OPS_DISPATCH_CASE_(OPS_INT32, int32_t, int32_t, __VA_ARGS__)
#define OPS_CASE_INT64(...) OPS_DISPATCH_CASE_(OPS_INT64, int64_t, int64_t, __VA_ARGS__)
#define OPS_CASE_FLOAT16(...) OPS_DISPATCH_CASE_(OPS_FLOAT16, ops_half, float, __VA_ARGS__)
#define OPS_CASE_BFLOAT16(...) OPS_DISPATCH_CASE_(OPS_BFLOAT16, ops_bfloat16, float, __VA_ARGS__)
#define OPS_CASE_FLOAT32(...) OPS_DISPATCH_CASE_(OPS_FLOAT32, float, float, __VA_ARGS__)
#define OPS_CASE_FLOAT64(...) OPS_DISPATCH_CASE_(OPS_FLOAT64, double, double, __VA_ARGS__)

#define OPS_MASK_INTEGRAL                                                                \
    (OPS_DTYPE_BIT(OPS_UINT8) | OPS_DTYPE_BIT(OPS_INT8) | OPS_DTYPE_BIT(OPS_INT16) |     \
     OPS_DTYPE_BIT(OPS_INT32) | OPS_DTYPE_BIT(OPS_INT64))
#define OPS_MASK_FLOATING                                                                \
    (OPS_DTYPE_BIT(OPS_FLOAT16) | OPS_DTYPE_BIT(OPS_BFLOAT16) |                          \
     OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64))
#define OPS_MASK_NUMERIC (OPS_MASK_INTEGRAL | OPS_MASK_FLOATING)
#define OPS_MASK_ALL (OPS_MASK_NUMERIC | OPS_DTYPE_BIT(OPS_BOOL))

#define OPS_CASES_INTEGRAL_(...)                                                         \
    OPS_CASE_UINT8(__VA_ARGS__)                                                          \
    OPS_CASE_INT8(__VA_ARGS__)                                                           \
    OPS_CASE_INT16(__VA_ARGS__)                                                          \
    OPS_CASE_INT32(__VA_ARGS__)                                                          \
    OPS_CASE_INT64(__VA_ARGS__)
#define OPS_CASES_FLOATING_(...)                                                         \
    OPS_CASE_FLOAT16(__VA_ARGS__)                                                        \
    OPS_CASE_BFLOAT16(__VA_ARGS__)                                                       \
    OPS_CASE_FLOAT32(__VA_ARGS__)                                                        \
    OPS_CASE_FLOAT64(__VA_ARGS__)

/* The switch itself; MASK lists the supported dtypes for the error message. */
#define OPS_DISPATCH_SWITCH_(DT, NAME, MASK, CASES)                                      \
    do {                                                                                 \
        const ops_dtype ops_dt_ = (DT);                                                  \
        switch (ops_dt_) {                                                               \
            CASES                                                                        \
        default:                                                                         \
            return ops_fail_dtype((NAME), ops_dt_, (MASK));                              \
        }                                                                                \
    } while (0)

/* Every dtype. */
#define OPS_DISPATCH_ALL(DT, NAME, ...)                                                  \
    OPS_DISPATCH_SWITCH_(DT, NAME, OPS_MASK_ALL,                                         \
                         OPS_CASE_BOOL(__VA_ARGS__) OPS_CASES_INTEGRAL_(__VA_ARGS__)     \
                             OPS_CASES_FLOATING_(__VA_ARGS__))
/* Every dtype but bool. */
#define OPS_DISPATCH_NUMERIC(DT, NAME, ...)                                              \
    OPS_DISPATCH_SWITCH_(DT, NAME, OPS_MASK_NUMERIC,                                     \
                         OPS_CASES_INTEGRAL_(__VA_ARGS__) OPS_CASES_FLOATING_(__VA_ARGS__))
/* float16, bfloat16, float32, float64. */
#define OPS_DISPATCH_FLOATING(DT, NAME, ...)                                             \
    OPS_DISPATCH_SWITCH_(DT, NAME, OPS_MASK_FLOATING, OPS_CASES_FLOATING_(__VA_ARGS__))
/* uint8 .. int64. */
#define OPS_DISPATCH_INTEGRAL(DT, NAME, ...)                                             \
    OPS_DISPATCH_SWITCH_(DT, NAME, OPS_MASK_INTEGRAL, OPS_CASES_INTEGRAL_(__VA_ARGS__))
/* bool and uint8 .. int64. */
#define OPS_DISPATCH_INTEGRAL_AND_BOOL(DT, NAME, ...)                                    \
    OPS_DISPATCH_SWITCH_(DT, NAME, OPS_MASK_INTEGRAL | OPS_DTYPE_BIT(OPS_BOOL),          \
                         OPS_CASE_BOOL(__VA_ARGS__) OPS_CASES_INTEGRAL_(__VA_ARGS__))

/* ---- elementwise loops over a built iterator ---------------------------------
 *
 * Each macro runs EXPR for every element of the iterator, split across threads above
 * OPS_GRAIN_SIZE, with a contiguous fast path chosen from the strides.  Operand 0 is
 * the output; inputs are loaded as opmath values named x, y, z (in input order) and
 * EXPR's value is stored with OPS_STORE.  The types name each operand's scalar_t.
 *
 *   OPS_NULLARY_KERNEL(it, OUT_T, EXPR)                  (fill: no inputs)
 *   OPS_UNARY_KERNEL(it, OUT_T, X_T, EXPR)
 *   OPS_BINARY_KERNEL(it, OUT_T, X_T, Y_T, EXPR)
 *   OPS_TERNARY_KERNEL(it, OUT_T, X_T, Y_T, Z_T, EXPR)
 *
 * OPS_ITER_LOOP(it, DATA, STRIDES, N, BODY) is the general form: BODY runs once per
 * 1-D run with `char **DATA` (operand base pointers), `const int64_t *STRIDES` (byte
 * strides, one per operand) and `int64_t N` (run length).  (Defined below by the
 * iterator's owner.) */

#endif /* OPS_DISPATCH_H */

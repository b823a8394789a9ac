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

/* A bool byte other than 0/1 (written behind the library's back through an export or
 * a shared segment) reads as true, never as an invalid _Bool. */
OPS_INLINE bool ops_ld_bool(const bool *p) { return *(const uint8_t *)p != 0; }
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

#ifdef __cplusplus
/* C++ (kernels/cuda/): ops_load(p) / ops_store(p, v), the overloaded spelling of
 * OPS_LOAD / OPS_STORE, and ops_opmath<T>::type, the opmath type of a scalar_t. */
OPS_INLINE bool ops_load(const bool *p) { return *(const uint8_t *)p != 0; }
OPS_INLINE uint8_t ops_load(const uint8_t *p) { return *p; }
OPS_INLINE int8_t ops_load(const int8_t *p) { return *p; }
OPS_INLINE int16_t ops_load(const int16_t *p) { return *p; }
OPS_INLINE int32_t ops_load(const int32_t *p) { return *p; }
OPS_INLINE int64_t ops_load(const int64_t *p) { return *p; }
OPS_INLINE float ops_load(const ops_half *p) { return ops_half_to_float(*p); }
OPS_INLINE float ops_load(const ops_bfloat16 *p) { return ops_bfloat16_to_float(*p); }
OPS_INLINE float ops_load(const float *p) { return *p; }
OPS_INLINE double ops_load(const double *p) { return *p; }
OPS_INLINE void ops_store(bool *p, bool v) { *p = v; }
OPS_INLINE void ops_store(uint8_t *p, uint8_t v) { *p = v; }
OPS_INLINE void ops_store(int8_t *p, int8_t v) { *p = v; }
OPS_INLINE void ops_store(int16_t *p, int16_t v) { *p = v; }
OPS_INLINE void ops_store(int32_t *p, int32_t v) { *p = v; }
OPS_INLINE void ops_store(int64_t *p, int64_t v) { *p = v; }
OPS_INLINE void ops_store(ops_half *p, float v) { *p = ops_float_to_half(v); }
OPS_INLINE void ops_store(ops_bfloat16 *p, float v) { *p = ops_float_to_bfloat16(v); }
OPS_INLINE void ops_store(float *p, float v) { *p = v; }
OPS_INLINE void ops_store(double *p, double v) { *p = v; }
template <typename T> struct ops_opmath { typedef T type; };
template <> struct ops_opmath<ops_half> { typedef float type; };
template <> struct ops_opmath<ops_bfloat16> { typedef float type; };
#endif

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

/* A Scalar converted to a C arithmetic type T (bool: nonzero; ints: truncation).  A
 * float goes to an integer type through int64 (PyTorch's static_cast_with_inter_type):
 * -2.0 to uint8 is 254, where a direct conversion of a value out of T's range is
 * undefined.  (The callers' checks keep the float within int64.) */
#define OPS_SCALAR_AS(T, s)                                                              \
    ((s).kind == OPS_SCALAR_FLOAT                                                        \
         ? ((T)0.5 == (T)0 ? (T)(int64_t)(s).v.f : (T)(s).v.f)                           \
     : (s).kind == OPS_SCALAR_INT ? (T)(s).v.i                                           \
                                  : (T)(s).v.b)

/* ---- dispatch -------------------------------------------------------------- */

/* C linkage from the .cu files too (runtime/dispatch/iter.c defines it). */
#ifdef __cplusplus
extern "C" {
#endif
OPS_API ops_status ops_fail_dtype(const char *op, ops_dtype dt, unsigned supported_mask);
#ifdef __cplusplus
}
#endif

#define OPS_DISPATCH_CASE_(ENUM, SCALAR, OPMATH, ...)                                    \
    case ENUM: {                                                                         \
        typedef SCALAR scalar_t __attribute__((unused)); /* a body may use only one */   \
        typedef OPMATH opmath_t __attribute__((unused));                                 \
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

/* Dispatch over a chosen set of dtypes: CASES is a run of OPS_CASE_<DTYPE>(body)
 * and MASK the same set as OPS_DTYPE_BIT()s, for the error message.  The named
 * OPS_DISPATCH_* macros below are this with fixed sets:
 *
 *   OPS_DISPATCH_CASES(dt, "logit", OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64),
 *                      OPS_CASE_FLOAT32(body) OPS_CASE_FLOAT64(body));              */
#define OPS_DISPATCH_CASES(DT, NAME, MASK, CASES)                                      \
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
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_ALL,                                         \
                         OPS_CASE_BOOL(__VA_ARGS__) OPS_CASES_INTEGRAL_(__VA_ARGS__)     \
                             OPS_CASES_FLOATING_(__VA_ARGS__))
/* Every dtype but bool. */
#define OPS_DISPATCH_NUMERIC(DT, NAME, ...)                                              \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_NUMERIC,                                     \
                         OPS_CASES_INTEGRAL_(__VA_ARGS__) OPS_CASES_FLOATING_(__VA_ARGS__))
/* float16, bfloat16, float32, float64. */
#define OPS_DISPATCH_FLOATING(DT, NAME, ...)                                             \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_FLOATING, OPS_CASES_FLOATING_(__VA_ARGS__))
/* uint8 .. int64. */
#define OPS_DISPATCH_INTEGRAL(DT, NAME, ...)                                             \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_INTEGRAL, OPS_CASES_INTEGRAL_(__VA_ARGS__))
/* bool and uint8 .. int64. */
#define OPS_DISPATCH_INTEGRAL_AND_BOOL(DT, NAME, ...)                                    \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_INTEGRAL | OPS_DTYPE_BIT(OPS_BOOL),          \
                         OPS_CASE_BOOL(__VA_ARGS__) OPS_CASES_INTEGRAL_(__VA_ARGS__))

/* Dispatch over the dtypes an op's schema entry declares (`dtypes:`,
 * docs/codegen.md "Dtypes"): ENTRY is the entry's C name without ops_, upper-case
 * (EXP_OUT for exp.out), whose set OPS_DTYPES_<ENTRY>(M, ...) and OPS_DTYPE_MASK_<ENTRY>
 * the kernel's generated shard (ops_kernels_<file>.h) defines:
 *
 *   OPS_DISPATCH_DECLARED(EXP_OUT, it->common_dtype, "exp", body);
 *
 * The generated glue has already refused the undeclared dtypes, so the default case
 * only guards a direct call. */
#define OPS_DTYPES_CASE_(DTYPE, ...) OPS_CASE_##DTYPE(__VA_ARGS__)
#define OPS_DISPATCH_DECLARED(ENTRY, DT, NAME, ...)                                      \
    OPS_DISPATCH_CASES(DT, NAME, OPS_DTYPE_MASK_##ENTRY, OPS_DTYPES_##ENTRY(OPS_DTYPES_CASE_, __VA_ARGS__))

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


/* ---- loop machinery (iterator owner) -------------------------------------------
 *
 * Rules for BODY and EXPR: they may run on several threads at once (each on its own
 * range of elements), so they must not `return`, `break` out of the loop, or write
 * shared variables other than through atomics.  Variables they read from the
 * enclosing function (alpha, bounds, ...) are shared read-only.  The names x, y, z
 * are the loaded inputs; the macros' own locals start with ops_.
 *
 * Element loops carry OPS_SIMD_LOOP: they have no loop-carried dependence even when
 * the output is exactly an input (in-place), which is the only aliasing the iterator
 * lets through (partial overlap of out and an input is rejected by the metas). */

#define OPS_PRAGMA_(x) _Pragma(#x)
#ifdef _OPENMP
#include <omp.h>
#define OPS_SIMD_LOOP OPS_PRAGMA_(omp simd)
#define OPS_OMP_THREAD_NUM_() omp_get_thread_num()
#define OPS_OMP_NUM_THREADS_() omp_get_num_threads()
#else
#if defined(__clang__)
#define OPS_SIMD_LOOP OPS_PRAGMA_(clang loop vectorize(assume_safety))
#elif defined(__GNUC__)
#define OPS_SIMD_LOOP OPS_PRAGMA_(GCC ivdep)
#else
#define OPS_SIMD_LOOP
#endif
#define OPS_OMP_THREAD_NUM_() 0
#define OPS_OMP_NUM_THREADS_() 1
#endif

/* Position of a walk over the loop geometry: counters per dim and the operand
 * pointers at the current element. */
typedef struct ops_iter_walk_ {
    int64_t idx[OPS_MAX_DIMS];
    char *ptr[OPS_ITER_MAX_OPERANDS];
} ops_iter_walk_;

/* Start a walk at linear element `begin` (dim 0 varies fastest). */
static inline void
ops_iter_walk_init_(ops_iter_walk_ *w, const ops_iter *it, int64_t begin)
{
    const int nops = it->noperands;
    for (int k = 0; k < nops; k++)
        w->ptr[k] = it->data[k];
    if (begin == 0) { /* the serial case: no divisions */
        for (int d = 0; d < it->ndim; d++)
            w->idx[d] = 0;
        return;
    }
    for (int d = 0; d < it->ndim; d++) {
        const int64_t sz = it->loop_shape[d];
        const int64_t i = begin % sz;
        begin /= sz;
        w->idx[d] = i;
        if (i != 0)
            for (int k = 0; k < nops; k++)
                w->ptr[k] += i * it->loop_strides[d][k];
    }
}

/* Step past a run of n elements along dim 0, carrying into the outer dims.  Only
 * called when more elements follow, so the pointers never leave the operands. */
static inline void
ops_iter_walk_advance_(ops_iter_walk_ *w, const ops_iter *it, int64_t n)
{
    const int nops = it->noperands;
    w->idx[0] += n;
    for (int k = 0; k < nops; k++)
        w->ptr[k] += n * it->loop_strides[0][k];
    for (int d = 0; d + 1 < it->ndim && w->idx[d] == it->loop_shape[d]; d++) {
        for (int k = 0; k < nops; k++)
            w->ptr[k] += it->loop_strides[d + 1][k] - it->loop_shape[d] * it->loop_strides[d][k];
        w->idx[d] = 0;
        w->idx[d + 1]++;
    }
}

/* Runs BODY over the 1-D runs covering linear elements [BEGIN, END). */
#define OPS_ITER_RANGE_(IT, BEGIN, END, DATA, STRIDES, N, ...)                           \
    do {                                                                                 \
        ops_iter_walk_ ops_w_;                                                           \
        ops_iter_walk_init_(&ops_w_, (IT), (BEGIN));                                     \
        int64_t ops_left_ = (END) - (BEGIN);                                             \
        const int64_t ops_inner_ = (IT)->loop_shape[0];                                  \
        while (ops_left_ > 0) {                                                          \
            const int64_t ops_room_ = ops_inner_ - ops_w_.idx[0];                        \
            const int64_t N = ops_room_ < ops_left_ ? ops_room_ : ops_left_;             \
            char **const DATA = ops_w_.ptr;                                              \
            const int64_t *const STRIDES = (IT)->loop_strides[0];                        \
            (void)DATA;                                                                  \
            (void)STRIDES;                                                               \
            {__VA_ARGS__}                                                                \
            ops_left_ -= N;                                                              \
            if (ops_left_ > 0)                                                           \
                ops_iter_walk_advance_(&ops_w_, (IT), N);                                \
        }                                                                                \
    } while (0)

/* The iterator's grain: elements below which a loop stays serial, OPS_GRAIN_SIZE unless
 * the meta or the kernel set a cost per element (ops_iter_set_cost, ops_iter.h). */
#define OPS_ITER_GRAIN_(IT) ((IT)->grain > 0 ? (IT)->grain : (int64_t)OPS_GRAIN_SIZE)

/* The general loop (see the comment above): serial below the grain size, else an
 * OpenMP region whose threads take contiguous slices of [0, numel). */
#define OPS_ITER_LOOP(it, DATA, STRIDES, N, ...)                                         \
    do {                                                                                 \
        const ops_iter *const ops_li_ = (it);                                            \
        const int64_t ops_lnumel_ = ops_li_->numel;                                      \
        if (ops_lnumel_ > 0) {                                                           \
            const int ops_lnt_ =                                                         \
                ops_lnumel_ < OPS_ITER_GRAIN_(ops_li_) ? 1 : ops_iter_num_tasks(ops_li_); \
            if (ops_lnt_ <= 1) {                                                         \
                OPS_ITER_RANGE_(ops_li_, 0, ops_lnumel_, DATA, STRIDES, N, __VA_ARGS__); \
            } else {                                                                     \
                OPS_PRAGMA_(omp parallel num_threads(ops_lnt_))                          \
                {                                                                        \
                    const int64_t ops_tid_ = OPS_OMP_THREAD_NUM_();                      \
                    const int64_t ops_nth_ = OPS_OMP_NUM_THREADS_();                     \
                    const int64_t ops_q_ = ops_lnumel_ / ops_nth_;                       \
                    const int64_t ops_r_ = ops_lnumel_ % ops_nth_;                       \
                    const int64_t ops_b_ =                                               \
                        ops_q_ * ops_tid_ + (ops_tid_ < ops_r_ ? ops_tid_ : ops_r_);     \
                    const int64_t ops_e_ = ops_b_ + ops_q_ + (ops_tid_ < ops_r_ ? 1 : 0); \
                    OPS_ITER_RANGE_(ops_li_, ops_b_, ops_e_, DATA, STRIDES, N,           \
                                    __VA_ARGS__);                                        \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    } while (0)

/* x, y, z need not all appear in EXPR. */
#define OPS_UNUSED_ __attribute__((unused))

/* The opmath type OPS_LOAD gives for a pointer to T. */
#define OPS_OPMATH_OF_(T) __typeof__(OPS_LOAD((const T *)0))

#define OPS_NULLARY_KERNEL(it, OUT_T, ...)                                               \
    OPS_ITER_LOOP((it), ops_kd_, ops_ks_, ops_kn_, {                                     \
        char *const ops_o_ = ops_kd_[0];                                                 \
        const int64_t ops_so_ = ops_ks_[0];                                              \
        if (ops_so_ == (int64_t)sizeof(OUT_T)) {                                         \
            OUT_T *const ops_po_ = (OUT_T *)ops_o_;                                      \
            OPS_SIMD_LOOP                                                                \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++)                         \
                OPS_STORE(&ops_po_[ops_i_], (__VA_ARGS__));                              \
        } else {                                                                         \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++)                         \
                OPS_STORE((OUT_T *)(ops_o_ + ops_i_ * ops_so_), (__VA_ARGS__));          \
        }                                                                                \
    })

#define OPS_UNARY_KERNEL(it, OUT_T, X_T, ...)                                            \
    OPS_ITER_LOOP((it), ops_kd_, ops_ks_, ops_kn_, {                                     \
        char *const ops_o_ = ops_kd_[0];                                                 \
        const char *const ops_a_ = ops_kd_[1];                                           \
        const int64_t ops_so_ = ops_ks_[0], ops_sa_ = ops_ks_[1];                        \
        if (ops_so_ == (int64_t)sizeof(OUT_T) && ops_sa_ == (int64_t)sizeof(X_T)) {      \
            OUT_T *const ops_po_ = (OUT_T *)ops_o_;                                      \
            const X_T *const ops_pa_ = (const X_T *)ops_a_;                              \
            OPS_SIMD_LOOP                                                                \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ = OPS_LOAD(&ops_pa_[ops_i_]);    \
                OPS_STORE(&ops_po_[ops_i_], (__VA_ARGS__));                              \
            }                                                                            \
        } else {                                                                         \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ =                                \
                    OPS_LOAD((const X_T *)(ops_a_ + ops_i_ * ops_sa_));                  \
                OPS_STORE((OUT_T *)(ops_o_ + ops_i_ * ops_so_), (__VA_ARGS__));          \
            }                                                                            \
        }                                                                                \
    })

/* Paths: all contiguous; one input a broadcast scalar (stride 0) and the rest
 * contiguous, with that input loaded once; anything else strided. */
#define OPS_BINARY_KERNEL(it, OUT_T, X_T, Y_T, ...)                                      \
    OPS_ITER_LOOP((it), ops_kd_, ops_ks_, ops_kn_, {                                     \
        char *const ops_o_ = ops_kd_[0];                                                 \
        const char *const ops_a_ = ops_kd_[1];                                           \
        const char *const ops_b_ = ops_kd_[2];                                           \
        const int64_t ops_so_ = ops_ks_[0], ops_sa_ = ops_ks_[1], ops_sb_ = ops_ks_[2];  \
        OUT_T *const ops_po_ = (OUT_T *)ops_o_;                                          \
        const X_T *const ops_pa_ = (const X_T *)ops_a_;                                  \
        const Y_T *const ops_pb_ = (const Y_T *)ops_b_;                                  \
        if (ops_so_ == (int64_t)sizeof(OUT_T) && ops_sa_ == (int64_t)sizeof(X_T) &&      \
            ops_sb_ == (int64_t)sizeof(Y_T)) {                                           \
            OPS_SIMD_LOOP                                                                \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ = OPS_LOAD(&ops_pa_[ops_i_]);    \
                const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ = OPS_LOAD(&ops_pb_[ops_i_]);    \
                OPS_STORE(&ops_po_[ops_i_], (__VA_ARGS__));                              \
            }                                                                            \
        } else if (ops_so_ == (int64_t)sizeof(OUT_T) &&                                  \
                   ops_sa_ == (int64_t)sizeof(X_T) && ops_sb_ == 0) {                    \
            const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ = OPS_LOAD(ops_pb_);                 \
            OPS_SIMD_LOOP                                                                \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ = OPS_LOAD(&ops_pa_[ops_i_]);    \
                OPS_STORE(&ops_po_[ops_i_], (__VA_ARGS__));                              \
            }                                                                            \
        } else if (ops_so_ == (int64_t)sizeof(OUT_T) && ops_sa_ == 0 &&                  \
                   ops_sb_ == (int64_t)sizeof(Y_T)) {                                    \
            const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ = OPS_LOAD(ops_pa_);                 \
            OPS_SIMD_LOOP                                                                \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ = OPS_LOAD(&ops_pb_[ops_i_]);    \
                OPS_STORE(&ops_po_[ops_i_], (__VA_ARGS__));                              \
            }                                                                            \
        } else {                                                                         \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ =                                \
                    OPS_LOAD((const X_T *)(ops_a_ + ops_i_ * ops_sa_));                  \
                const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ =                                \
                    OPS_LOAD((const Y_T *)(ops_b_ + ops_i_ * ops_sb_));                  \
                OPS_STORE((OUT_T *)(ops_o_ + ops_i_ * ops_so_), (__VA_ARGS__));          \
            }                                                                            \
        }                                                                                \
    })

/* OPS_BINARY_KERNEL with a run function for the layouts it covers:
 *
 *   OPS_BINARY_KERNEL_VEC(it, OUT_T, X_T, Y_T, VFN, VARG, EXPR)
 *
 * VFN (NULL: none, then this is OPS_BINARY_KERNEL) is called as
 * VFN(out, x, y, n, bc, VARG) for each run whose output is contiguous and whose inputs
 * are contiguous or one broadcast element (bc: 0 both contiguous, 1 x has stride 0,
 * 2 y has stride 0; the numbering of kernels/cpu/vec/vec_binary.h); every other run
 * takes OPS_BINARY_KERNEL's loops with EXPR.  VFN must compute exactly EXPR: which
 * path a run takes depends on its strides and on where a thread's slice starts. */
#define OPS_BINARY_KERNEL_VEC(it, OUT_T, X_T, Y_T, VFN, VARG, ...)                       \
    do {                                                                                 \
        __typeof__(VFN) const ops_vf_ = (VFN);                                           \
        if (ops_vf_ == NULL) {                                                           \
            OPS_BINARY_KERNEL(it, OUT_T, X_T, Y_T, __VA_ARGS__);                         \
            break;                                                                       \
        }                                                                                \
        OPS_ITER_LOOP((it), ops_kd_, ops_ks_, ops_kn_, {                                 \
            const int64_t ops_so_ = ops_ks_[0], ops_sa_ = ops_ks_[1], ops_sb_ = ops_ks_[2]; \
            const bool ops_va_ = ops_sa_ == (int64_t)sizeof(X_T);                       \
            const bool ops_vb_ = ops_sb_ == (int64_t)sizeof(Y_T);                       \
            if (ops_so_ == (int64_t)sizeof(OUT_T) && (ops_va_ || ops_vb_) &&             \
                (ops_va_ || ops_sa_ == 0) && (ops_vb_ || ops_sb_ == 0)) {                \
                ops_vf_(ops_kd_[0], ops_kd_[1], ops_kd_[2], ops_kn_,                     \
                        ops_va_ ? (ops_vb_ ? 0 : 2) : 1, (VARG));                       \
            } else {                                                                     \
                char *const ops_o_ = ops_kd_[0];                                         \
                const char *const ops_a_ = ops_kd_[1];                                   \
                const char *const ops_b_ = ops_kd_[2];                                   \
                for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                   \
                    const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ =                            \
                        OPS_LOAD((const X_T *)(ops_a_ + ops_i_ * ops_sa_));              \
                    const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ =                            \
                        OPS_LOAD((const Y_T *)(ops_b_ + ops_i_ * ops_sb_));              \
                    OPS_STORE((OUT_T *)(ops_o_ + ops_i_ * ops_so_), (__VA_ARGS__));      \
                }                                                                        \
            }                                                                            \
        });                                                                              \
    } while (0)

#define OPS_TERNARY_KERNEL(it, OUT_T, X_T, Y_T, Z_T, ...)                                \
    OPS_ITER_LOOP((it), ops_kd_, ops_ks_, ops_kn_, {                                     \
        char *const ops_o_ = ops_kd_[0];                                                 \
        const char *const ops_a_ = ops_kd_[1];                                           \
        const char *const ops_b_ = ops_kd_[2];                                           \
        const char *const ops_c_ = ops_kd_[3];                                           \
        const int64_t ops_so_ = ops_ks_[0], ops_sa_ = ops_ks_[1], ops_sb_ = ops_ks_[2],  \
                      ops_sc_ = ops_ks_[3];                                              \
        if (ops_so_ == (int64_t)sizeof(OUT_T) && ops_sa_ == (int64_t)sizeof(X_T) &&      \
            ops_sb_ == (int64_t)sizeof(Y_T) && ops_sc_ == (int64_t)sizeof(Z_T)) {        \
            OUT_T *const ops_po_ = (OUT_T *)ops_o_;                                      \
            const X_T *const ops_pa_ = (const X_T *)ops_a_;                              \
            const Y_T *const ops_pb_ = (const Y_T *)ops_b_;                              \
            const Z_T *const ops_pc_ = (const Z_T *)ops_c_;                              \
            OPS_SIMD_LOOP                                                                \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ = OPS_LOAD(&ops_pa_[ops_i_]);    \
                const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ = OPS_LOAD(&ops_pb_[ops_i_]);    \
                const OPS_OPMATH_OF_(Z_T) z OPS_UNUSED_ = OPS_LOAD(&ops_pc_[ops_i_]);    \
                OPS_STORE(&ops_po_[ops_i_], (__VA_ARGS__));                              \
            }                                                                            \
        } else {                                                                         \
            for (int64_t ops_i_ = 0; ops_i_ < ops_kn_; ops_i_++) {                       \
                const OPS_OPMATH_OF_(X_T) x OPS_UNUSED_ =                                \
                    OPS_LOAD((const X_T *)(ops_a_ + ops_i_ * ops_sa_));                  \
                const OPS_OPMATH_OF_(Y_T) y OPS_UNUSED_ =                                \
                    OPS_LOAD((const Y_T *)(ops_b_ + ops_i_ * ops_sb_));                  \
                const OPS_OPMATH_OF_(Z_T) z OPS_UNUSED_ =                                \
                    OPS_LOAD((const Z_T *)(ops_c_ + ops_i_ * ops_sc_));                  \
                OPS_STORE((OUT_T *)(ops_o_ + ops_i_ * ops_so_), (__VA_ARGS__));          \
            }                                                                            \
        }                                                                                \
    })

#endif /* OPS_DISPATCH_H */

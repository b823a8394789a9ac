/* dtype conversion loops: every (destination, source) pair of dtypes, the one place
 * values change dtype (copy_, to, the iterator's promotion of inputs and its
 * write-back into out=).
 *
 * Float -> integer conversions are defined for every input (C leaves out-of-range
 * values undefined): in-range values truncate toward zero; NaN and out-of-range
 * values give what x86's cvttsd2si gives (the type's minimum for int32/int64, then
 * the low bits for the narrower types), which is what PyTorch and NumPy produce on
 * x86.  Integer narrowing wraps.  float16/bfloat16 round to nearest even; a double
 * reaches float16 through float, as in PyTorch.  The value rules live in ops_convert.h,
 * shared with the CUDA copy kernel (kernels/cuda/copy.cu). */
#include <string.h>

#include "ops_convert.h"
#include "ops_dispatch.h"

typedef void (*convert_fn)(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n);

static inline int64_t
i64_to_i64(int64_t v)
{
    return v;
}

static inline int32_t
i64_to_i32(int64_t v)
{
    return (int32_t)v;
}

/* w is the loaded source value: an integer type, float or double. */
#define CVT_I64_(w) _Generic((w), float: ops_convert_f64_to_i64, double: ops_convert_f64_to_i64, default: i64_to_i64)(w)
#define CVT_I32_(w) _Generic((w), float: ops_convert_f64_to_i32, double: ops_convert_f64_to_i32, default: i64_to_i32)(w)

#define STORE_b1(w) ((w) != 0)
#define STORE_u8(w) ((uint8_t)CVT_I32_(w))
#define STORE_i8(w) ((int8_t)CVT_I32_(w))
#define STORE_i16(w) ((int16_t)CVT_I32_(w))
#define STORE_i32(w) (CVT_I32_(w))
#define STORE_i64(w) (CVT_I64_(w))
#define STORE_f16(w) (ops_float_to_half((float)(w)))
#define STORE_bf16(w) (ops_float_to_bfloat16((float)(w)))
#define STORE_f32(w) ((float)(w))
#define STORE_f64(w) ((double)(w))

#define LOAD_b1(v) (v)
#define LOAD_u8(v) (v)
#define LOAD_i8(v) (v)
#define LOAD_i16(v) (v)
#define LOAD_i32(v) (v)
#define LOAD_i64(v) (v)
#define LOAD_f16(v) (ops_half_to_float(v))
#define LOAD_bf16(v) (ops_bfloat16_to_float(v))
#define LOAD_f32(v) (v)
#define LOAD_f64(v) (v)

#define ENUM_b1 OPS_BOOL
#define ENUM_u8 OPS_UINT8
#define ENUM_i8 OPS_INT8
#define ENUM_i16 OPS_INT16
#define ENUM_i32 OPS_INT32
#define ENUM_i64 OPS_INT64
#define ENUM_f16 OPS_FLOAT16
#define ENUM_bf16 OPS_BFLOAT16
#define ENUM_f32 OPS_FLOAT32
#define ENUM_f64 OPS_FLOAT64

/* X(DT, DN, ST, SN) for every source type, with the destination fixed. */
#define FOR_EACH_SRC(X, DT, DN)                                                          \
    X(DT, DN, bool, b1)                                                                \
    X(DT, DN, uint8_t, u8)                                                               \
    X(DT, DN, int8_t, i8)                                                                \
    X(DT, DN, int16_t, i16)                                                              \
    X(DT, DN, int32_t, i32)                                                              \
    X(DT, DN, int64_t, i64)                                                              \
    X(DT, DN, ops_half, f16)                                                             \
    X(DT, DN, ops_bfloat16, bf16)                                                        \
    X(DT, DN, float, f32)                                                                \
    X(DT, DN, double, f64)

/* convert_<dst>_from_<src>: one strided run, with a contiguous fast path. */
#define DEFINE_CONVERT(DT, DN, ST, SN)                                                   \
    static void convert_##DN##_from_##SN(char *dst, int64_t ds, const char *src, int64_t ss, \
                                         int64_t n)                                      \
    {                                                                                    \
        if (ds == (int64_t)sizeof(DT) && ss == (int64_t)sizeof(ST)) {                    \
            DT *d = (DT *)dst;                                                           \
            const ST *s = (const ST *)src;                                               \
            OPS_SIMD_LOOP                                                                \
            for (int64_t i = 0; i < n; i++)                                              \
                d[i] = STORE_##DN(LOAD_##SN(s[i]));                                      \
        } else {                                                                         \
            for (int64_t i = 0; i < n; i++)                                              \
                *(DT *)(dst + i * ds) = STORE_##DN(LOAD_##SN(*(const ST *)(src + i * ss))); \
        }                                                                                \
    }

FOR_EACH_SRC(DEFINE_CONVERT, bool, b1)
FOR_EACH_SRC(DEFINE_CONVERT, uint8_t, u8)
FOR_EACH_SRC(DEFINE_CONVERT, int8_t, i8)
FOR_EACH_SRC(DEFINE_CONVERT, int16_t, i16)
FOR_EACH_SRC(DEFINE_CONVERT, int32_t, i32)
FOR_EACH_SRC(DEFINE_CONVERT, int64_t, i64)
FOR_EACH_SRC(DEFINE_CONVERT, ops_half, f16)
FOR_EACH_SRC(DEFINE_CONVERT, ops_bfloat16, bf16)
FOR_EACH_SRC(DEFINE_CONVERT, float, f32)
FOR_EACH_SRC(DEFINE_CONVERT, double, f64)

#define CONVERT_ENTRY(DT, DN, ST, SN) [ENUM_##SN] = convert_##DN##_from_##SN,
#define CONVERT_ROW(DT, DN) [ENUM_##DN] = {FOR_EACH_SRC(CONVERT_ENTRY, DT, DN)},

static const convert_fn convert_table[OPS_NUM_DTYPES][OPS_NUM_DTYPES] = {
    CONVERT_ROW(bool, b1) CONVERT_ROW(uint8_t, u8) CONVERT_ROW(int8_t, i8) CONVERT_ROW(int16_t, i16)
    CONVERT_ROW(int32_t, i32) CONVERT_ROW(int64_t, i64) CONVERT_ROW(ops_half, f16)
    CONVERT_ROW(ops_bfloat16, bf16) CONVERT_ROW(float, f32) CONVERT_ROW(double, f64)
};

_Static_assert(OPS_NUM_DTYPES == 10, "convert_table lists 10 dtypes: add the new one");

/* Same dtype: the bytes themselves (NaN payloads and -0 survive). */
#define DEFINE_MOVE(T, NAME)                                                             \
    static void NAME(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n)      \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                  \
            *(T *)(dst + i * ds) = *(const T *)(src + i * ss);                           \
    }

DEFINE_MOVE(uint8_t, move_1)
DEFINE_MOVE(uint16_t, move_2)
DEFINE_MOVE(uint32_t, move_4)
DEFINE_MOVE(uint64_t, move_8)

void
ops_convert_run(ops_dtype dst_dt, char *dst, int64_t dst_stride, ops_dtype src_dt, const char *src,
                int64_t src_stride, int64_t n)
{
    if (n <= 0)
        return;
    if (dst_dt == src_dt) {
        const int64_t size = (int64_t)ops_dtype_size(dst_dt);
        if (dst_stride == size && src_stride == size) {
            memmove(dst, src, (size_t)(n * size));
            return;
        }
        switch (size) {
        case 1:
            move_1(dst, dst_stride, src, src_stride, n);
            return;
        case 2:
            move_2(dst, dst_stride, src, src_stride, n);
            return;
        case 4:
            move_4(dst, dst_stride, src, src_stride, n);
            return;
        default:
            move_8(dst, dst_stride, src, src_stride, n);
            return;
        }
    }
    convert_table[dst_dt][src_dt](dst, dst_stride, src, src_stride, n);
}

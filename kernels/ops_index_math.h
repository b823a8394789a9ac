/* Scalar math of the indexing and sorting kernels, shared by the CPU (kernels/cpu/
 * index*.c, sort.c) and CUDA (kernels/cuda/index*.cu, scatter.cu, sort.cu) backends so
 * the two cannot drift (CUDA issue, item 4): wrapping integer accumulation as
 * PyTorch's scatter does it, scatter's NaN-propagating max/min, the nonzero test of
 * nonzero/masked ops, and the order-preserving sort keys.  C and C++ clean; every
 * function is static inline OPS_HOST_DEVICE. */
#ifndef OPS_INDEX_MATH_H
#define OPS_INDEX_MATH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ops_base.h"
#include "ops_scalar_math.h"

/* ---- wrapping integer arithmetic (C's signed overflow would be undefined) -------- */

OPS_INLINE bool ops_ix_add_b(bool a, bool b) { return a || b; }
OPS_INLINE uint8_t ops_ix_add_u8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
OPS_INLINE int8_t ops_ix_add_i8(int8_t a, int8_t b) { return (int8_t)(uint8_t)((uint32_t)a + (uint32_t)b); }
OPS_INLINE int16_t ops_ix_add_i16(int16_t a, int16_t b) { return (int16_t)(uint16_t)((uint32_t)a + (uint32_t)b); }
OPS_INLINE int32_t ops_ix_add_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
OPS_INLINE int64_t ops_ix_add_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
OPS_INLINE float ops_ix_add_f32(float a, float b) { return a + b; }
OPS_INLINE double ops_ix_add_f64(double a, double b) { return a + b; }

OPS_INLINE bool ops_ix_mul_b(bool a, bool b) { return a && b; }
OPS_INLINE uint8_t ops_ix_mul_u8(uint8_t a, uint8_t b) { return (uint8_t)((uint32_t)a * (uint32_t)b); }
OPS_INLINE int8_t ops_ix_mul_i8(int8_t a, int8_t b) { return (int8_t)(uint8_t)((uint32_t)a * (uint32_t)b); }
OPS_INLINE int16_t ops_ix_mul_i16(int16_t a, int16_t b) { return (int16_t)(uint16_t)((uint32_t)a * (uint32_t)b); }
OPS_INLINE int32_t ops_ix_mul_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
OPS_INLINE int64_t ops_ix_mul_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
OPS_INLINE float ops_ix_mul_f32(float a, float b) { return a * b; }
OPS_INLINE double ops_ix_mul_f64(double a, double b) { return a * b; }

/* std::max/std::min as PyTorch's scatter uses them, with a NaN src winning; a NaN
 * already in the buffer stays (max(NaN, x) keeps its first argument). */
#define OPS_IX_MAX(a, v) ((v) != (v) ? (v) : ((a) < (v) ? (v) : (a)))
#define OPS_IX_MIN(a, v) ((v) != (v) ? (v) : ((v) < (a) ? (v) : (a)))

#ifdef __cplusplus
/* The overloaded spelling for C++ kernels (C uses _Generic in index_util.h). */
OPS_INLINE bool ops_ix_add(bool a, bool b) { return ops_ix_add_b(a, b); }
OPS_INLINE uint8_t ops_ix_add(uint8_t a, uint8_t b) { return ops_ix_add_u8(a, b); }
OPS_INLINE int8_t ops_ix_add(int8_t a, int8_t b) { return ops_ix_add_i8(a, b); }
OPS_INLINE int16_t ops_ix_add(int16_t a, int16_t b) { return ops_ix_add_i16(a, b); }
OPS_INLINE int32_t ops_ix_add(int32_t a, int32_t b) { return ops_ix_add_i32(a, b); }
OPS_INLINE int64_t ops_ix_add(int64_t a, int64_t b) { return ops_ix_add_i64(a, b); }
OPS_INLINE float ops_ix_add(float a, float b) { return ops_ix_add_f32(a, b); }
OPS_INLINE double ops_ix_add(double a, double b) { return ops_ix_add_f64(a, b); }
OPS_INLINE bool ops_ix_mul(bool a, bool b) { return ops_ix_mul_b(a, b); }
OPS_INLINE uint8_t ops_ix_mul(uint8_t a, uint8_t b) { return ops_ix_mul_u8(a, b); }
OPS_INLINE int8_t ops_ix_mul(int8_t a, int8_t b) { return ops_ix_mul_i8(a, b); }
OPS_INLINE int16_t ops_ix_mul(int16_t a, int16_t b) { return ops_ix_mul_i16(a, b); }
OPS_INLINE int32_t ops_ix_mul(int32_t a, int32_t b) { return ops_ix_mul_i32(a, b); }
OPS_INLINE int64_t ops_ix_mul(int64_t a, int64_t b) { return ops_ix_mul_i64(a, b); }
OPS_INLINE float ops_ix_mul(float a, float b) { return ops_ix_mul_f32(a, b); }
OPS_INLINE double ops_ix_mul(double a, double b) { return ops_ix_mul_f64(a, b); }
#endif

/* ---- nonzero ------------------------------------------------------------------- */

/* True when the element of dtype dt at p is nonzero (NaN counts; -0.0 does not). */
OPS_INLINE bool
ops_ix_is_nonzero(const char *p, ops_dtype dt)
{
    switch (dt) {
    case OPS_BOOL:
    case OPS_UINT8:
    case OPS_INT8:
        return *(const uint8_t *)p != 0;
    case OPS_INT16:
    case OPS_FLOAT16:
    case OPS_BFLOAT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return dt == OPS_INT16 ? v != 0 : (v & 0x7fffu) != 0;
    }
    case OPS_INT32:
    case OPS_FLOAT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return dt == OPS_INT32 ? v != 0 : (v & 0x7fffffffu) != 0; /* NaN != 0 too */
    }
    case OPS_INT64:
    case OPS_FLOAT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        return dt == OPS_INT64 ? v != 0 : (v & 0x7fffffffffffffffull) != 0;
    }
    default:
        return false;
    }
}

/* ---- sort keys ------------------------------------------------------------------ */

/* Unsigned keys that order like the values do in PyTorch's sort: integers with the
 * sign bit flipped, floats by their bits with negatives inverted, every NaN the
 * largest key, -0.0 mapped to +0.0's key (they compare equal). */
OPS_INLINE uint64_t ops_ix_key_b(bool v) { return v ? 1u : 0u; }
OPS_INLINE uint64_t ops_ix_key_u8(uint8_t v) { return v; }
OPS_INLINE uint64_t ops_ix_key_i8(int8_t v) { return (uint8_t)((uint8_t)v ^ 0x80u); }
OPS_INLINE uint64_t ops_ix_key_i16(int16_t v) { return (uint16_t)((uint16_t)v ^ 0x8000u); }
OPS_INLINE uint64_t ops_ix_key_i32(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
OPS_INLINE uint64_t ops_ix_key_i64(int64_t v) { return (uint64_t)v ^ 0x8000000000000000ull; }

/* float16/bfloat16 bits with the exponent mask of their format's infinity. */
OPS_INLINE uint64_t
ops_ix_key_h16(uint16_t b, uint16_t inf)
{
    if ((b & 0x7fffu) > inf)
        return 0xffffu;
    if (b == 0x8000u)
        b = 0;
    return (b & 0x8000u) ? (uint16_t)~b : (uint16_t)(b | 0x8000u);
}

OPS_INLINE uint64_t ops_ix_key_f16(ops_half h) { return ops_ix_key_h16(h.bits, 0x7c00u); }
OPS_INLINE uint64_t ops_ix_key_bf16(ops_bfloat16 h) { return ops_ix_key_h16(h.bits, 0x7f80u); }

OPS_INLINE uint64_t
ops_ix_key_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0xffffffffu;
    if (u == 0x80000000u)
        u = 0;
    return (u & 0x80000000u) ? (uint32_t)~u : (u | 0x80000000u);
}

OPS_INLINE uint64_t
ops_ix_key_f64(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)
        return ~0ull;
    if (u == 0x8000000000000000ull)
        u = 0;
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}

/* The key of the element of dtype dt at p (ascending). */
OPS_INLINE uint64_t
ops_ix_key_at(ops_dtype dt, const char *p)
{
    switch (dt) {
    case OPS_BOOL: return *(const uint8_t *)p != 0;
    case OPS_UINT8: return ops_ix_key_u8(*(const uint8_t *)p);
    case OPS_INT8: return ops_ix_key_i8(*(const int8_t *)p);
    case OPS_INT16: { int16_t v; memcpy(&v, p, 2); return ops_ix_key_i16(v); }
    case OPS_INT32: { int32_t v; memcpy(&v, p, 4); return ops_ix_key_i32(v); }
    case OPS_INT64: { int64_t v; memcpy(&v, p, 8); return ops_ix_key_i64(v); }
    case OPS_FLOAT16: { ops_half v; memcpy(&v, p, 2); return ops_ix_key_f16(v); }
    case OPS_BFLOAT16: { ops_bfloat16 v; memcpy(&v, p, 2); return ops_ix_key_bf16(v); }
    case OPS_FLOAT32: { float v; memcpy(&v, p, 4); return ops_ix_key_f32(v); }
    case OPS_FLOAT64: { double v; memcpy(&v, p, 8); return ops_ix_key_f64(v); }
    default: return 0;
    }
}

/* Bits of a dtype's key: its element size (bool has 8). */
OPS_INLINE int
ops_ix_key_bits(ops_dtype dt)
{
    switch (dt) {
    case OPS_BOOL: case OPS_UINT8: case OPS_INT8: return 8;
    case OPS_INT16: case OPS_FLOAT16: case OPS_BFLOAT16: return 16;
    case OPS_INT32: case OPS_FLOAT32: return 32;
    default: return 64;
    }
}

/* The key every NaN of a floating dtype gets (no other value has it). */
OPS_INLINE uint64_t
ops_ix_nan_key(ops_dtype dt)
{
    return ~0ull >> (64 - ops_ix_key_bits(dt));
}

/* Two elements are one unique value when their keys agree and they are not NaN
 * (PyTorch's unique keeps every NaN apart: NaN != NaN); fl: a floating dtype. */
OPS_INLINE bool
ops_ix_same(bool fl, uint64_t nan, uint64_t a, uint64_t b)
{
    return a == b && !(fl && a == nan);
}

#endif /* OPS_INDEX_MATH_H */

/* float16/bfloat16 <-> float32 conversion loops, compiled once per instruction-set level
 * (kernels/cpu/vec/meson.build; the table and its contract: vec_convert.h), over the
 * level's conversions of one vector in vec_isa.h (vf_load_bf16/vf_load_f16,
 * vf_store_bf16/vf_store_f16: one implementation, shared with the reductions).
 *
 * float16 with F16C (vcvtph2ps; vcvtps2ph with round-to-nearest-even), its AVX-512
 * forms at avx512; AVX2 does not imply F16C, so the avx2 loops check it at run time
 * (__builtin_cpu_supports) and take the scalar loop without it.  bfloat16 by shifts at
 * every x86 level: widen x << 16 (exact); narrow (u + 0x7fff + lsb) >> 16, round to
 * nearest even (a carry into the exponent makes inf, as it should), NaN as u >> 16 | 0x40
 * (quiet, payload kept), the scalar conversion's formula lane by lane.  Tails
 * (n % width) element by element with the scalar conversions: the same bits wherever a
 * run starts. */
#include "kernels/cpu/vec/vec_convert.h"

#include "kernels/cpu/vec/vec_isa.h"

#include "include/libops/ops_scalar_math.h"

/* ---- scalar loops (every level: the tails, and the levels without vector forms) ---- */

static inline float
sc_f16_to_f32_(uint16_t b)
{
    ops_half h;
    h.bits = b;
    return ops_half_to_float(h);
}

static inline float
sc_bf16_to_f32_(uint16_t b)
{
    ops_bfloat16 h;
    h.bits = b;
    return ops_bfloat16_to_float(h);
}

#define SC_LOOPS_(NAME, WIDEN, NARROW)                                                     \
    static inline void NAME##_to_f32_scalar(float *y, const uint16_t *x, int64_t n, int64_t i)    \
    {                                                                                      \
        for (; i < n; i++)                                                                 \
            y[i] = WIDEN(x[i]);                                                            \
    }                                                                                      \
    static inline void NAME##_from_f32_scalar(uint16_t *y, const float *x, int64_t n, int64_t i)  \
    {                                                                                      \
        for (; i < n; i++)                                                                 \
            y[i] = NARROW(x[i]).bits;                                                      \
    }                                                                                      \
    static inline void NAME##_to_f32_sc(float *y, const uint16_t *x, int64_t n)                   \
    {                                                                                      \
        NAME##_to_f32_scalar(y, x, n, 0);                                                  \
    }                                                                                      \
    static inline void NAME##_from_f32_sc(uint16_t *y, const float *x, int64_t n)                 \
    {                                                                                      \
        NAME##_from_f32_scalar(y, x, n, 0);                                                \
    }

SC_LOOPS_(f16, sc_f16_to_f32_, ops_float_to_half)
SC_LOOPS_(bf16, sc_bf16_to_f32_, ops_float_to_bfloat16)

/* ---- the level's vector forms: vec_isa.h's conversions of one vector ---------------- */

#if defined(__x86_64__)

/* bfloat16 at every x86 level */
static void
bf16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + vf_n <= n; i += vf_n)
        vf_store(y + i, vf_load_bf16(x + i));
    bf16_to_f32_scalar(y, x, n, i);
}
static void
bf16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + vf_n <= n; i += vf_n)
        vf_store_bf16(y + i, vf_load(x + i));
    bf16_from_f32_scalar(y, x, n, i);
}
#define BF16_TO_ bf16_to_f32_v
#define BF16_FROM_ bf16_from_f32_v

#if VEC_HAS_F16_ /* avx2, avx512: F16C (VEC_F16_TARGET_ where the flags lack it) */
VEC_F16_TARGET_ static void
f16_to_f32_f16c(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + vf_n <= n; i += vf_n)
        vf_store(y + i, vf_load_f16(x + i));
    f16_to_f32_scalar(y, x, n, i);
}
VEC_F16_TARGET_ static void
f16_from_f32_f16c(uint16_t *y, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + vf_n <= n; i += vf_n)
        vf_store_f16(y + i, vf_load(x + i));
    f16_from_f32_scalar(y, x, n, i);
}
#if defined(__F16C__) || defined(__AVX512F__) /* vcvtph2ps zmm is AVX512F */
#define F16_TO_ f16_to_f32_f16c
#define F16_FROM_ f16_from_f32_f16c
#else
/* F16C is its own CPUID bit (AVX2 does not imply it): checked per call (a load and a
 * test after the first) */
static void
f16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    if (__builtin_cpu_supports("f16c"))
        f16_to_f32_f16c(y, x, n);
    else
        f16_to_f32_sc(y, x, n);
}
static void
f16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    if (__builtin_cpu_supports("f16c"))
        f16_from_f32_f16c(y, x, n);
    else
        f16_from_f32_sc(y, x, n);
}
#define F16_TO_ f16_to_f32_v
#define F16_FROM_ f16_from_f32_v
#endif
#else /* SSE2: no F16C */
#define F16_TO_ f16_to_f32_sc
#define F16_FROM_ f16_from_f32_sc
#endif

#else /* elsewhere: the scalar loops */

#define F16_TO_ f16_to_f32_sc
#define F16_FROM_ f16_from_f32_sc
#define BF16_TO_ bf16_to_f32_sc
#define BF16_FROM_ bf16_from_f32_sc

#endif

const ops_vec_convert_table OPS_VEC_NAME(ops_vec_convert_table) = {
    .to_f32 = {[OPS_VEC_CVT_F16] = F16_TO_, [OPS_VEC_CVT_BF16] = BF16_TO_},
    .from_f32 = {[OPS_VEC_CVT_F16] = F16_FROM_, [OPS_VEC_CVT_BF16] = BF16_FROM_},
};

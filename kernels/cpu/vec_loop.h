/* Running the per-level vector loops of kernels/cpu/vec/ over the iterator's 1-D runs
 * (docs/cpu-dispatch.md): the one mechanism of the unary math kernels
 * (kernels/cpu/unary.c), the activations (kernels/cpu/activation.c) and the pow and
 * atan2 kernels of kernels/cpu/binary.c.
 *
 * A contiguous run goes to the loop directly; any other (strided, or an input
 * broadcast with stride 0) is gathered into contiguous buffers of
 * OPS_VEC_LOOP_BUF elements, computed there and scattered back, so every element goes
 * through the same vector code whatever the layout: a strided input gives the bits of
 * the contiguous one.  float16/bfloat16 runs go through a float32 loop in blocks of
 * OPS_VEC_LOOP_BUF: widened by the level's conversion loop, computed in float, each
 * result rounded once to the half type (OPS_VEC_RUN_HALF).
 *
 * A unary loop is a function FN over n contiguous elements of x into y (y may be x):
 * either FN(x, y, n, P) with its parameters P (the activations, vec_act.h:
 * OPS_VEC_CALL_P) or FN(x, y, n) (the math functions, vec.h: OPS_VEC_CALL_0); CALL
 * names the form. */
#ifndef OPS_KERNELS_CPU_VEC_LOOP_H
#define OPS_KERNELS_CPU_VEC_LOOP_H

#include <stdint.h>

#include "kernels/cpu/vec/vec_convert.h"

#define OPS_VEC_LOOP_BUF 256

#define OPS_VEC_CALL_P(FN, P, X, Y, N) (FN)((X), (Y), (N), (P))
#define OPS_VEC_CALL_0(FN, P, X, Y, N) (FN)((X), (Y), (N))

/* One run of the unary loop FN (called as CALL says) over element type T: operand 0
 * out, operand 1 in. */
#define OPS_VEC_RUN(T, CALL, FN, P, DATA, STRIDES, N)                                   \
    do {                                                                                 \
        char *const vl_o_ = (DATA)[0];                                                   \
        const char *const vl_a_ = (DATA)[1];                                             \
        const int64_t vl_so_ = (STRIDES)[0], vl_sa_ = (STRIDES)[1];                      \
        if (vl_so_ == (int64_t)sizeof(T) && vl_sa_ == (int64_t)sizeof(T)) {              \
            CALL(FN, P, (const T *)vl_a_, (T *)vl_o_, (N));                              \
        } else {                                                                         \
            T vl_buf_[OPS_VEC_LOOP_BUF];                                                 \
            for (int64_t vl_b_ = 0; vl_b_ < (N); vl_b_ += OPS_VEC_LOOP_BUF) {            \
                const int64_t vl_m_ =                                                    \
                    (N) - vl_b_ < OPS_VEC_LOOP_BUF ? (N) - vl_b_ : OPS_VEC_LOOP_BUF;     \
                for (int64_t vl_i_ = 0; vl_i_ < vl_m_; vl_i_++)                          \
                    vl_buf_[vl_i_] = *(const T *)(vl_a_ + (vl_b_ + vl_i_) * vl_sa_);     \
                CALL(FN, P, vl_buf_, vl_buf_, vl_m_);                                    \
                for (int64_t vl_i_ = 0; vl_i_ < vl_m_; vl_i_++)                          \
                    *(T *)(vl_o_ + (vl_b_ + vl_i_) * vl_so_) = vl_buf_[vl_i_];           \
            }                                                                            \
        }                                                                                \
    } while (0)

/* FN(x, y, n, P): the activations' and pow's form */
#define OPS_VEC_RUN_UNARY(T, FN, P, DATA, STRIDES, N)                                    \
    OPS_VEC_RUN(T, OPS_VEC_CALL_P, FN, P, DATA, STRIDES, N)

/* One run of a float16/bfloat16 op through the float32 loop FN: blocks of
 * OPS_VEC_LOOP_BUF elements widened to float by the level's conversion loop
 * CV->to_f32[K] (a strided run gathered first), FN in place (called as CALL says),
 * each result rounded once to the half type by CV->from_f32[K] (round to nearest
 * even; scattered after, if strided).  That is the rule of the scalar half loops
 * (compute in float, round once on store) with FN as the float function: the conversion loops give the scalar
 * conversions' bits (kernels/cpu/vec/vec_convert.h). */
#define OPS_VEC_RUN_HALF(CV, K, CALL, FN, P, DATA, STRIDES, N)                           \
    do {                                                                                 \
        char *const vh_o_ = (DATA)[0];                                                   \
        const char *const vh_a_ = (DATA)[1];                                             \
        const int64_t vh_so_ = (STRIDES)[0], vh_sa_ = (STRIDES)[1];                      \
        float vh_buf_[OPS_VEC_LOOP_BUF];                                                 \
        uint16_t vh_h_[OPS_VEC_LOOP_BUF];                                                \
        for (int64_t vh_b_ = 0; vh_b_ < (N); vh_b_ += OPS_VEC_LOOP_BUF) {                \
            const int64_t vh_m_ =                                                        \
                (N) - vh_b_ < OPS_VEC_LOOP_BUF ? (N) - vh_b_ : OPS_VEC_LOOP_BUF;         \
            const uint16_t *vh_src_ = (const uint16_t *)(vh_a_ + vh_b_ * 2);             \
            if (vh_sa_ != 2) {                                                           \
                for (int64_t vh_i_ = 0; vh_i_ < vh_m_; vh_i_++)                          \
                    vh_h_[vh_i_] = *(const uint16_t *)(vh_a_ + (vh_b_ + vh_i_) * vh_sa_); \
                vh_src_ = vh_h_;                                                         \
            }                                                                            \
            (CV)->to_f32[K](vh_buf_, vh_src_, vh_m_);                                    \
            CALL(FN, P, vh_buf_, vh_buf_, vh_m_);                                        \
            if (vh_so_ == 2) {                                                           \
                (CV)->from_f32[K]((uint16_t *)(vh_o_ + vh_b_ * 2), vh_buf_, vh_m_);      \
            } else {                                                                     \
                (CV)->from_f32[K](vh_h_, vh_buf_, vh_m_);                                \
                for (int64_t vh_i_ = 0; vh_i_ < vh_m_; vh_i_++)                          \
                    *(uint16_t *)(vh_o_ + (vh_b_ + vh_i_) * vh_so_) = vh_h_[vh_i_];      \
            }                                                                            \
        }                                                                                \
    } while (0)

/* One run of a binary loop FN(a, b, y, n): operand 0 out, operands 1 and 2 in. */
#define OPS_VEC_RUN_BINARY(T, FN, DATA, STRIDES, N)                                      \
    do {                                                                                 \
        char *const vl_o_ = (DATA)[0];                                                   \
        const char *const vl_a_ = (DATA)[1];                                             \
        const char *const vl_c_ = (DATA)[2];                                             \
        const int64_t vl_so_ = (STRIDES)[0], vl_sa_ = (STRIDES)[1], vl_sc_ = (STRIDES)[2]; \
        if (vl_so_ == (int64_t)sizeof(T) && vl_sa_ == (int64_t)sizeof(T) &&              \
            vl_sc_ == (int64_t)sizeof(T)) {                                              \
            (FN)((const T *)vl_a_, (const T *)vl_c_, (T *)vl_o_, (N));                   \
        } else {                                                                         \
            T vl_ba_[OPS_VEC_LOOP_BUF], vl_bc_[OPS_VEC_LOOP_BUF];                        \
            for (int64_t vl_b_ = 0; vl_b_ < (N); vl_b_ += OPS_VEC_LOOP_BUF) {            \
                const int64_t vl_m_ =                                                    \
                    (N) - vl_b_ < OPS_VEC_LOOP_BUF ? (N) - vl_b_ : OPS_VEC_LOOP_BUF;     \
                for (int64_t vl_i_ = 0; vl_i_ < vl_m_; vl_i_++) {                        \
                    vl_ba_[vl_i_] = *(const T *)(vl_a_ + (vl_b_ + vl_i_) * vl_sa_);      \
                    vl_bc_[vl_i_] = *(const T *)(vl_c_ + (vl_b_ + vl_i_) * vl_sc_);      \
                }                                                                        \
                (FN)(vl_ba_, vl_bc_, vl_ba_, vl_m_);                                     \
                for (int64_t vl_i_ = 0; vl_i_ < vl_m_; vl_i_++)                          \
                    *(T *)(vl_o_ + (vl_b_ + vl_i_) * vl_so_) = vl_ba_[vl_i_];            \
            }                                                                            \
        }                                                                                \
    } while (0)

#endif /* OPS_KERNELS_CPU_VEC_LOOP_H */

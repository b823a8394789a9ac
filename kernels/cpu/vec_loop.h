/* Running the per-level vector loops of kernels/cpu/vec/ over the iterator's 1-D runs
 * (docs/cpu-dispatch.md), for the kernels with parameters or two inputs
 * (kernels/cpu/activation.c, the pow and atan2 kernels of kernels/cpu/binary.c).
 *
 * A contiguous run goes to the loop directly; any other (strided, or an input
 * broadcast with stride 0) is gathered into contiguous buffers of
 * OPS_VEC_LOOP_BUF elements, computed there and scattered back, so every element goes
 * through the same vector code whatever the layout: a strided input gives the bits of
 * the contiguous one. */
#ifndef OPS_KERNELS_CPU_VEC_LOOP_H
#define OPS_KERNELS_CPU_VEC_LOOP_H

#include <stdint.h>

#define OPS_VEC_LOOP_BUF 256

/* One run of a unary loop FN(x, y, n, P) over element type T: operand 0 out,
 * operand 1 in. */
#define OPS_VEC_RUN_UNARY(T, FN, P, DATA, STRIDES, N)                                    \
    do {                                                                                 \
        char *const vl_o_ = (DATA)[0];                                                   \
        const char *const vl_a_ = (DATA)[1];                                             \
        const int64_t vl_so_ = (STRIDES)[0], vl_sa_ = (STRIDES)[1];                      \
        if (vl_so_ == (int64_t)sizeof(T) && vl_sa_ == (int64_t)sizeof(T)) {              \
            (FN)((const T *)vl_a_, (T *)vl_o_, (N), (P));                                \
        } else {                                                                         \
            T vl_buf_[OPS_VEC_LOOP_BUF];                                                 \
            for (int64_t vl_b_ = 0; vl_b_ < (N); vl_b_ += OPS_VEC_LOOP_BUF) {            \
                const int64_t vl_m_ =                                                    \
                    (N) - vl_b_ < OPS_VEC_LOOP_BUF ? (N) - vl_b_ : OPS_VEC_LOOP_BUF;     \
                for (int64_t vl_i_ = 0; vl_i_ < vl_m_; vl_i_++)                          \
                    vl_buf_[vl_i_] = *(const T *)(vl_a_ + (vl_b_ + vl_i_) * vl_sa_);     \
                (FN)(vl_buf_, vl_buf_, vl_m_, (P));                                      \
                for (int64_t vl_i_ = 0; vl_i_ < vl_m_; vl_i_++)                          \
                    *(T *)(vl_o_ + (vl_b_ + vl_i_) * vl_so_) = vl_buf_[vl_i_];           \
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

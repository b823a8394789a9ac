/* Helpers shared by the indexing kernels (index_*.c): row-major walks over strided
 * operands and broadcast strides.  Private to kernels/cpu. */
#ifndef OPS_INDEX_UTIL_H
#define OPS_INDEX_UTIL_H

#include <string.h>

#include "kernels/ops_index_math.h"
#include "ops_internal.h"
#include <stdbool.h>
#include <stdint.h>

/* nonzero(self): an int64 [n, ndim] tensor of the coordinates of self's nonzero
 * elements in row-major order (index_masked.c; index_advanced.c expands masks with it). */
OPS_INTERNAL ops_tensor *idx_nonzero(const char *op, const ops_tensor *self);

/* Chunks a loop of n independent elements splits into: one below OPS_GRAIN_SIZE,
 * else up to the library's thread count, each at least a grain. */
static inline int64_t
idx_num_chunks(int64_t n)
{
    if (n < OPS_GRAIN_SIZE)
        return 1;
    const int64_t t = ops_get_num_threads(), g = n / OPS_GRAIN_SIZE;
    return t < g ? (t > 0 ? t : 1) : g;
}

#ifdef _OPENMP
#define IDX_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) if (nchunks > 1)")
#else
#define IDX_PARALLEL_FOR_
#endif

/* Advance a row-major counter over sizes[nd] by one element, moving the element
 * offsets off[k] of nops operands with strides st[k]. */
static inline void
idx_walk_next(int nd, const int64_t *sizes, int64_t *ctr, int nops, const int64_t *const *st, int64_t *off)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++ctr[d] < sizes[d]) {
            for (int k = 0; k < nops; k++)
                off[k] += st[k][d];
            return;
        }
        for (int k = 0; k < nops; k++)
            off[k] -= (sizes[d] - 1) * st[k][d];
        ctr[d] = 0;
    }
}

/* Copy one element of is bytes; the fixed sizes become plain loads and stores
 * (a memcpy of a variable size would be a call per element). */
static inline void
idx_copy_elem(char *dst, const char *src, size_t is)
{
    switch (is) {
    case 1:
        *dst = *src;
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    default:
        memcpy(dst, src, is);
        break;
    }
}

/* The linear-th element (row-major) of an int64 tensor. */
static inline int64_t
idx_read_i64(const ops_tensor *t, int64_t linear)
{
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (linear % t->sizes[d]) * t->strides[d];
        linear /= t->sizes[d];
    }
    return ((const int64_t *)t->storage->data)[off];
}

/* True when the element of dtype dt at p is nonzero (NaN counts; -0.0 does not). */
static inline bool
idx_is_nonzero(const char *p, ops_dtype dt)
{
    return ops_ix_is_nonzero(p, dt);
}

/* Wrapping integer accumulation (PyTorch's integer scatter wraps; C's signed overflow
 * would be undefined): ops_ix_add_* / ops_ix_mul_* of ops_index_math.h, shared with
 * the CUDA kernels. */
#define SC_ADD(a, b)                                                                      \
    _Generic((a), bool: ops_ix_add_b, uint8_t: ops_ix_add_u8, int8_t: ops_ix_add_i8, int16_t: ops_ix_add_i16, \
             int32_t: ops_ix_add_i32, int64_t: ops_ix_add_i64, float: ops_ix_add_f32, double: ops_ix_add_f64)((a), (b))
#define SC_MUL(a, b)                                                                      \
    _Generic((a), bool: ops_ix_mul_b, uint8_t: ops_ix_mul_u8, int8_t: ops_ix_mul_i8, int16_t: ops_ix_mul_i16, \
             int32_t: ops_ix_mul_i32, int64_t: ops_ix_mul_i64, float: ops_ix_mul_f32, double: ops_ix_mul_f64)((a), (b))
#endif /* OPS_INDEX_UTIL_H */

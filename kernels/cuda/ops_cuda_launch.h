/* Host-side launch arithmetic of the CUDA backend, usable from C (the host tests)
 * and from .cu files (host and device code):
 * - ops_launch_iter: an iteration over operands with sizes and per-operand strides
 *   (in elements; 0 for a broadcast dimension, negative for a flipped one);
 * - 32-bit indexing: whether an iteration's element offsets fit int32, and the rule
 *   that splits a larger one into pieces that do (halve the dimension with the
 *   widest extent, as PyTorch's TensorIterator::split does);
 * - ops_offset_calc32: linear index -> every operand's element offset, with the
 *   divisions by the sizes done by multiply-high magic numbers (ops_int_divider);
 * - launch configuration: grid and block for n elements, and the vector width that
 *   aligned contiguous operands allow.
 * The stride rule: kernels honour strides and never assume contiguity; vector loads
 * are an optimisation chosen here only when every operand allows them. */
#ifndef OPS_CUDA_LAUNCH_H
#define OPS_CUDA_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_scalar_math.h" /* OPS_HOST_DEVICE, OPS_INLINE */

/* Operands of one launch (the output and up to three inputs: where, addcmul). */
#define OPS_LAUNCH_MAX_ARGS 4
/* Default threads per block and elements per thread of elementwise kernels. */
#define OPS_LAUNCH_BLOCK 128
#define OPS_LAUNCH_ELEMS_PER_THREAD 4
/* Widest vector access, in bytes (a 128-bit load). */
#define OPS_LAUNCH_MAX_VEC_BYTES 16

/* ---- integer division by a fixed divisor ------------------------------------ */

/* n / d for n < 2^31 as (umulhi(n, magic) + n) >> shift (Granlund and Montgomery):
 * shift = ceil(log2 d), magic = floor(2^32 (2^shift - d) / d) + 1. */
typedef struct ops_int_divider {
    uint32_t divisor;
    uint32_t magic;
    uint32_t shift;
} ops_int_divider;

/* d >= 1 and d < 2^31 (a size that passed ops_launch_can_use_32bit). */
OPS_INLINE ops_int_divider
ops_int_divider_make(uint32_t d)
{
    ops_int_divider r;
    uint32_t s = 0;
    while (s < 32 && ((uint64_t)1 << s) < d)
        s++;
    r.divisor = d;
    r.shift = s;
    r.magic = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
    return r;
}

OPS_INLINE uint32_t
ops_int_divider_div(ops_int_divider dv, uint32_t n)
{
#if defined(__CUDA_ARCH__)
    uint32_t t = __umulhi(n, dv.magic);
#else
    uint32_t t = (uint32_t)(((uint64_t)n * dv.magic) >> 32);
#endif
    return (t + n) >> dv.shift;
}

/* ---- iterations ------------------------------------------------------------- */

/* Row-major: dimension ndim-1 varies fastest.  base[a] is operand a's element offset
 * of the iteration's first element (pieces of a split start past 0); origin is the
 * first element's index in the iteration it was split from. */
typedef struct ops_launch_iter {
    int ndim;
    int nargs;
    int64_t sizes[OPS_MAX_DIMS];
    int64_t strides[OPS_LAUNCH_MAX_ARGS][OPS_MAX_DIMS];
    int64_t base[OPS_LAUNCH_MAX_ARGS];
    int64_t origin[OPS_MAX_DIMS];
} ops_launch_iter;

OPS_INLINE int64_t
ops_launch_numel(const ops_launch_iter *it)
{
    int64_t n = 1;
    for (int d = 0; d < it->ndim; d++)
        n *= it->sizes[d];
    return n;
}

/* sum over d of (size_d - 1) * |stride_d| for operand a: the widest element offset
 * (either sign) relative to base.  Saturates at INT64_MAX. */
OPS_INLINE int64_t
ops_launch_extent(const ops_launch_iter *it, int a)
{
    int64_t e = 0;
    for (int d = 0; d < it->ndim; d++) {
        int64_t s = it->strides[a][d] < 0 ? -it->strides[a][d] : it->strides[a][d];
        int64_t n = it->sizes[d] - 1;
        if (n > 0 && s > 0) {
            if (s > (INT64_MAX - e) / n)
                return INT64_MAX;
            e += n * s;
        }
    }
    return e;
}

/* The element count and every operand's offsets fit int32 (offsets are relative to
 * base, which the host adds to the pointer in 64 bits). */
OPS_INLINE bool
ops_launch_can_use_32bit(const ops_launch_iter *it)
{
    for (int d = 0; d < it->ndim; d++)
        if (it->sizes[d] > INT32_MAX)
            return false;
    if (ops_launch_numel(it) > INT32_MAX)
        return false;
    for (int a = 0; a < it->nargs; a++)
        if (ops_launch_extent(it, a) > INT32_MAX)
            return false;
    return true;
}

/* Drop size-1 dimensions and merge neighbours d-1, d whose strides chain for every
 * operand (stride[d-1] == size[d] * stride[d]), as the CPU iterator does, so kernels
 * divide less.  Only for iterations that were not split (origin is reset to 0). */
OPS_INLINE void
ops_launch_coalesce(ops_launch_iter *it)
{
    int out = 0;
    for (int d = 0; d < it->ndim; d++) {
        if (it->sizes[d] == 1 && it->ndim > 1)
            continue;
        if (out > 0) {
            bool chain = true;
            for (int a = 0; a < it->nargs; a++)
                chain = chain && it->strides[a][out - 1] == it->sizes[d] * it->strides[a][d];
            if (chain) {
                it->sizes[out - 1] *= it->sizes[d];
                for (int a = 0; a < it->nargs; a++)
                    it->strides[a][out - 1] = it->strides[a][d];
                continue;
            }
        }
        it->sizes[out] = it->sizes[d];
        for (int a = 0; a < it->nargs; a++)
            it->strides[a][out] = it->strides[a][d];
        out++;
    }
    if (out == 0 && it->ndim > 0) { /* every dimension had size 1 */
        it->sizes[0] = 1;
        for (int a = 0; a < it->nargs; a++)
            it->strides[a][0] = 0;
        out = 1;
    }
    if (it->ndim > 0)
        it->ndim = out;
    for (int d = 0; d < OPS_MAX_DIMS; d++)
        it->origin[d] = 0;
}

/* Called once per 32-bit-indexable piece; a nonzero return stops the split and is
 * returned by ops_launch_split_32bit. */
typedef int (*ops_launch_piece_fn)(const ops_launch_iter *piece, void *ctx);

/* The dimension to halve: the one with the widest extent over the operands, or,
 * when every extent fits and only the count does not, the largest one. */
OPS_INLINE int
ops_launch_split_dim_(const ops_launch_iter *it)
{
    int best = -1;
    int64_t best_key = -1;
    for (int d = 0; d < it->ndim; d++) {
        if (it->sizes[d] < 2)
            continue;
        int64_t key = 0;
        for (int a = 0; a < it->nargs; a++) {
            int64_t s = it->strides[a][d] < 0 ? -it->strides[a][d] : it->strides[a][d];
            int64_t e = s > INT64_MAX / (it->sizes[d] - 1) ? INT64_MAX : (it->sizes[d] - 1) * s;
            key = e > key ? e : key;
        }
        if (key <= INT32_MAX && it->sizes[d] <= INT32_MAX && ops_launch_numel(it) > INT32_MAX)
            key = it->sizes[d]; /* the count is what overflows: split the longest */
        if (key > best_key) {
            best_key = key;
            best = d;
        }
    }
    return best;
}

/* Calls fn on it itself when it fits 32-bit indexing, else on the pieces of the
 * split, in an order that visits the first half of each halved dimension first.
 * The pieces are disjoint and cover the iteration. */
static inline int
ops_launch_split_32bit(const ops_launch_iter *it, ops_launch_piece_fn fn, void *ctx)
{
    if (ops_launch_can_use_32bit(it))
        return fn(it, ctx);
    int d = ops_launch_split_dim_(it);
    if (d < 0) /* cannot happen: a non-fitting iteration has a dimension >= 2 */
        return fn(it, ctx);
    ops_launch_iter half = *it;
    int64_t h = it->sizes[d] / 2;
    half.sizes[d] = h;
    int rc = ops_launch_split_32bit(&half, fn, ctx);
    if (rc != 0)
        return rc;
    half.sizes[d] = it->sizes[d] - h;
    half.origin[d] = it->origin[d] + h;
    for (int a = 0; a < it->nargs; a++)
        half.base[a] = it->base[a] + h * it->strides[a][d];
    return ops_launch_split_32bit(&half, fn, ctx);
}

/* ---- offsets with 32-bit index math ----------------------------------------- */

/* Dimension 0 here is the fastest (reversed from ops_launch_iter) so the device
 * loop peels remainders from the linear index in order. */
typedef struct ops_offset_calc32 {
    int ndim;
    int nargs;
    ops_int_divider sizes[OPS_MAX_DIMS];
    int32_t strides[OPS_MAX_DIMS][OPS_LAUNCH_MAX_ARGS];
} ops_offset_calc32;

/* false when it does not fit 32-bit indexing (split it first). */
OPS_INLINE bool
ops_offset_calc32_init(ops_offset_calc32 *oc, const ops_launch_iter *it)
{
    if (!ops_launch_can_use_32bit(it))
        return false;
    oc->ndim = it->ndim;
    oc->nargs = it->nargs;
    for (int d = 0; d < it->ndim; d++) {
        int src = it->ndim - 1 - d;
        oc->sizes[d] = ops_int_divider_make(it->sizes[src] > 0 ? (uint32_t)it->sizes[src] : 1u);
        for (int a = 0; a < OPS_LAUNCH_MAX_ARGS; a++)
            oc->strides[d][a] = a < it->nargs ? (int32_t)it->strides[a][src] : 0;
    }
    return true;
}

/* Element offsets (relative to each operand's base) of the element at linear index
 * `linear` (row-major, < numel). */
OPS_INLINE void
ops_offset_calc32_get(const ops_offset_calc32 *oc, uint32_t linear, int32_t offsets[OPS_LAUNCH_MAX_ARGS])
{
    for (int a = 0; a < OPS_LAUNCH_MAX_ARGS; a++)
        offsets[a] = 0;
    for (int d = 0; d < oc->ndim; d++) {
        uint32_t q = ops_int_divider_div(oc->sizes[d], linear);
        int32_t r = (int32_t)(linear - q * oc->sizes[d].divisor);
        for (int a = 0; a < OPS_LAUNCH_MAX_ARGS; a++)
            offsets[a] += r * oc->strides[d][a];
        linear = q;
    }
}

/* ---- launch configuration --------------------------------------------------- */

typedef struct ops_launch_config {
    uint32_t grid;  /* blocks (0 when there is nothing to do) */
    uint32_t block; /* threads per block */
    /* elements one block covers per pass; with the grid capped, kernels loop
     * (grid-stride) until n */
    int64_t elems_per_block;
} ops_launch_config;

/* Grid and block for n elements, each thread handling elems_per_thread of them,
 * the grid capped at max_grid (the device's gridDim.x limit, or fewer). */
OPS_INLINE ops_launch_config
ops_launch_config_1d(int64_t n, uint32_t block, uint32_t elems_per_thread, int64_t max_grid)
{
    ops_launch_config c;
    c.block = block ? block : 1;
    c.elems_per_block = (int64_t)c.block * (elems_per_thread ? elems_per_thread : 1);
    int64_t g = n > 0 ? (n - 1) / c.elems_per_block + 1 : 0;
    if (max_grid < 1)
        max_grid = 1;
    if (g > max_grid)
        g = max_grid;
    c.grid = (uint32_t)g;
    return c;
}

/* Elements per vector access for contiguous operands of itemsize bytes: the largest
 * power of two v <= 8 with v * itemsize <= 16 that divides every pointer's alignment
 * (in bytes, v * itemsize).  1 when some pointer is misaligned for any wider access. */
OPS_INLINE int
ops_launch_vec_width(const void *const *ptrs, int nptrs, size_t itemsize)
{
    if (itemsize == 0)
        return 1;
    for (int v = 8; v > 1; v /= 2) {
        size_t bytes = (size_t)v * itemsize;
        if (bytes > OPS_LAUNCH_MAX_VEC_BYTES)
            continue;
        bool ok = true;
        for (int i = 0; i < nptrs; i++)
            ok = ok && ((uintptr_t)ptrs[i] % bytes) == 0;
        if (ok)
            return v;
    }
    return 1;
}

#endif /* OPS_CUDA_LAUNCH_H */

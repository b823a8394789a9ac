/* libops internal header: checked size arithmetic.
 *
 * Every size, count, byte count and offset the runtime and the kernels compute from
 * sizes and strides goes through these, so that a product or sum that does not fit
 * is an error instead of a wrapped value (a 2^62-element zero-stride view is valid
 * and costs nothing; a buffer of one int64 per element would be 2^65 bytes, and
 * (size_t)n * 8 silently makes that 0).  Each returns true when the result does NOT
 * fit, like the compiler builtins they wrap, so the idiom reads
 *
 *     size_t bytes;
 *     if (ops_mul_overflow_size(n, sizeof(int64_t), &bytes) || !(buf = ops_host_malloc(bytes)))
 *         return ops_fail(OPS_ERR_OOM, "sum: a plan of %" PRId64 " offsets is too large", n);
 *
 * or, for arrays, ops_host_malloc_array (ops_internal.h), which does both.
 * Plain C (static inline, no allocation), so CUDA host code can include it too. */
#ifndef OPS_CHECKED_H
#define OPS_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a * b into *r; true on overflow (then *r is the wrapped value). */
static inline bool
ops_mul_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

/* a - b into *r; true on overflow. */
static inline bool
ops_sub_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_sub_overflow(a, b, r);
}

/* a * b * c into *r (a buffer's entries from three extents); true on overflow. */
static inline bool
ops_mul3_overflow_i64(int64_t a, int64_t b, int64_t c, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r) || __builtin_mul_overflow(*r, c, r);
}

/* a + b into *r; true on overflow. */
static inline bool
ops_add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r);
}

/* a * b into *r; true on overflow. */
static inline bool
ops_mul_overflow_size(size_t a, size_t b, size_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

/* a + b into *r; true on overflow. */
static inline bool
ops_add_overflow_size(size_t a, size_t b, size_t *r)
{
    return __builtin_add_overflow(a, b, r);
}

/* ceil(a / b) for a >= 0, b > 0, without the a + b - 1 that can overflow. */
static inline int64_t
ops_ceil_div_i64(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* The bytes of count elements of item bytes each, into *nbytes; true when count is
 * negative or the product exceeds PTRDIFF_MAX (no object may be larger: pointer
 * differences inside it must fit ptrdiff_t). */
static inline bool
ops_nbytes_overflow(int64_t count, size_t item, size_t *nbytes)
{
    uint64_t n;
    if (count < 0 || __builtin_mul_overflow((uint64_t)count, (uint64_t)item, &n) || n > (uint64_t)PTRDIFF_MAX)
        return true;
    *nbytes = (size_t)n;
    return false;
}

/* The element count of a shape into *numel; true when a size is negative or the
 * product of the nonzero sizes does not fit int64.  Zero sizes are skipped on
 * purpose: every partial product of the sizes of an accepted shape then fits, so
 * code that multiplies some of a tensor's sizes (flatten, a reduction's kept dims)
 * cannot overflow.  *numel is 0 when some size is. */
static inline bool
ops_numel_overflow(int ndim, const int64_t *sizes, int64_t *numel)
{
    int64_t n = 1;
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return true;
        if (sizes[i] == 0)
            empty = true;
        else if (__builtin_mul_overflow(n, sizes[i], &n))
            return true;
    }
    *numel = empty ? 0 : n;
    return false;
}

#ifdef __cplusplus
}
#endif
#endif /* OPS_CHECKED_H */

/* What the CPU and CUDA kernels of searchsorted, bucketize, bincount and histc share
 * (kernels/search.c defines them): the argument checks, run on the host
 * before anything is written, and the messages of the checks on the data; and the
 * stubs of the drivers in kernels/search.c (the loops: kernels/cpu/sort_search.c,
 * kernels/cuda/sort_search.cu).  C and C++ clean. */
#ifndef OPS_SEARCH_COMMON_H
#define OPS_SEARCH_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPS_SS_SORTER_RANGE_MSG "%s: sorter index out of range"
#define OPS_BINCOUNT_MSG "%s: bincount only supports 1-d non-negative integral inputs."

/* Values per boundaries row (0: every value searches the one row of 1-D boundaries). */
int64_t ops_ss_per_row(const ops_tensor *boundaries, const ops_tensor *self);
/* A Scalar as the 0-dim CPU tensor PyTorch makes of it (int64, float64 or bool). */
ops_tensor *ops_ss_scalar(ops_scalar s);
/* A device's search (the stub of the searchsorted/bucketize drivers, kernels/search.c,
 * which checked the arguments and the dtype first): boundaries/self/sorter as
 * searchsorted takes them, right the resolved direction (side folded in), cd the dtype
 * both are compared in, op the public name for messages; the result into *result, or
 * into out. */
OPS_DECLARE_STUB(search_sorted, ops_status,
                 (const char *op, const ops_tensor *boundaries, const ops_tensor *self, bool out_int32, bool right,
                  const ops_tensor *sorter, ops_dtype cd, ops_tensor *out, ops_tensor **result));

/* bincount's checks, self's dtype first against declared (the set of the entry whose
 * kernel runs, OPS_DTYPE_MASK_<ENTRY>); *empty: a 1-D empty self (the result is
 * minlength int64 zeros). */
ops_status ops_bincount_check(unsigned declared, const ops_tensor *self, const ops_tensor *weights, int64_t minlength,
                              bool *empty);
/* int64 counts, float32 sums of float32 weights, float64 sums of any other weights. */
ops_dtype ops_bincount_dtype(const ops_tensor *weights);

/* bincount's loops.  The smallest and largest of the n > 0 elements of x (contiguous
 * int64), read on the host. */
OPS_DECLARE_STUB(search_bincount_minmax, ops_status,
                 (const char *op, const ops_tensor *x, int64_t *lo, int64_t *hi));
/* r (contiguous, int64 counts or float32/float64 sums) zeroed, then r[x[i]] += 1 (w
 * NULL) or w[i] (contiguous, r's dtype) for the elements of x (NULL: none); x's
 * values are in range (the driver checked them). */
OPS_DECLARE_STUB(search_bincount_count, ops_status,
                 (const char *op, ops_tensor *r, const ops_tensor *x, const ops_tensor *w));

/* histc's checks, self's dtype first against declared (as bincount's). */
ops_status ops_histc_check(unsigned declared, const ops_tensor *self, int64_t bins, const ops_tensor *out);
/* The range [lo, hi] made usable (widened by 1 when empty) or refused as the CPU does,
 * also when an edge is not finite in dt (histc counts with the edges in self's dtype). */
ops_status ops_histc_range(ops_dtype dt, double *lo, double *hi);
/* histc's loops.  The range of the elements of x (contiguous floating, not empty) as
 * the CPU's NaN-propagating min and max give it: a NaN when there is one. */
OPS_DECLARE_STUB(search_histc_minmax, ops_status, (const char *op, const ops_tensor *x, double *lo, double *hi));
/* r (contiguous, x's dtype, its bins) zeroed, then each element of x in [lo, hi]
 * (usable: ops_histc_range) counted into bin (x - lo) * bins / (hi - lo), the edges as
 * x's dtype holds them, the last bin closed. */
OPS_DECLARE_STUB(search_histc_count, ops_status,
                 (const char *op, ops_tensor *r, const ops_tensor *x, double lo, double hi));

#ifdef __cplusplus
}
#endif

#endif /* OPS_SEARCH_COMMON_H */

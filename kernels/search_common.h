/* What the CPU and CUDA kernels of searchsorted, bucketize, bincount and histc share
 * (kernels/search.c defines them): the argument checks, run on the host
 * before anything is written, and the messages of the checks on the data; and the
 * stub of the searchsorted/bucketize drivers (kernels/search.c).  C and C++
 * clean. */
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

/* searchsorted's checks (bucketize's too, with op "bucketize"): side/right (the
 * resolved direction into *right), sorter, shapes, out's dtype; *cd: the dtype both
 * operands are compared in (their promotion). */
ops_status ops_ss_check(const char *op, const ops_tensor *boundaries, const ops_tensor *self, bool out_int32,
                        bool *right, const char *side, const ops_tensor *sorter, const ops_tensor *out,
                        ops_dtype *cd);
/* Values per boundaries row (0: every value searches the one row of 1-D boundaries). */
int64_t ops_ss_per_row(const ops_tensor *boundaries, const ops_tensor *self);
/* A Scalar as the 0-dim CPU tensor PyTorch makes of it (int64, float64 or bool). */
ops_tensor *ops_ss_scalar(ops_scalar s);
/* A device's search (the stub of the searchsorted/bucketize drivers, kernels/search.c):
 * boundaries/self/side/sorter as searchsorted takes them, op the public name for
 * messages; the result into *result, or into out. */
OPS_DECLARE_STUB(search_sorted, ops_status,
                 (const char *op, const ops_tensor *boundaries, const ops_tensor *self, bool out_int32, bool right,
                  const char *side, const ops_tensor *sorter, ops_tensor *out, ops_tensor **result));

/* bincount's checks; *empty: a 1-D empty self (the result is minlength int64 zeros). */
ops_status ops_bincount_check(const ops_tensor *self, const ops_tensor *weights, int64_t minlength, bool *empty);
/* int64 counts, float32 sums of float32 weights, float64 sums of any other weights. */
ops_dtype ops_bincount_dtype(const ops_tensor *weights);

ops_status ops_histc_check(const ops_tensor *self, int64_t bins, const ops_tensor *out);
/* The range [lo, hi] made usable (widened by 1 when empty) or refused as the CPU does,
 * also when an edge is not finite in dt (histc counts with the edges in self's dtype). */
ops_status ops_histc_range(ops_dtype dt, double *lo, double *hi);

#ifdef __cplusplus
}
#endif

#endif /* OPS_SEARCH_COMMON_H */

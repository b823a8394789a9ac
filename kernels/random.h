/* Internal: the random ops, one driver for every device (kernels/random.c:
 * argument checks, result allocation, the generator) over per-device element work
 * reached through the stubs below: the CPU loops in kernels/cpu/random.c, the CUDA
 * kernels in kernels/cuda/random.cu.  Both devices check the same things with the
 * same messages and advance the generator by the same number of blocks.  The schema
 * names the drivers (random_<op>_<overload>) for `CPU, CUDA`; the generated glue
 * declares them (ops_kernels.h) and makes the op's device current around the call. */
#ifndef OPS_KERNELS_RANDOM_H
#define OPS_KERNELS_RANDOM_H

#include "ops_internal.h"
#include "ops_philox.h"
#include "ops_random.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the device loops: stubs (CPU loops in kernels/cpu/random.c, CUDA loops in
 * kernels/cuda/random.cu), each reserving its range of gen only after everything it
 * allocates is allocated ------------------------------------------------------------------ */

/* Element e (row-major) of t (any strides, distinct elements, numel > 0) gets value
 * e of d from a range of gen reserved here; bernoulli with probabilities p (t's shape,
 * contiguous, floating) when p is not NULL.  Does not bump t's version. */
OPS_DECLARE_STUB(random_fill, ops_status,
                 (const char *op, ops_tensor *t, const ops_rand_dist *d, ops_generator *gen, const ops_tensor *p));
/* The row-major index of p's (contiguous) first element outside [0, 1] (NaN
 * included) and its value; *index = -1 when there is none. */
OPS_DECLARE_STUB(random_bernoulli_find_invalid, ops_status,
                 (const char *op, const ops_tensor *p, int64_t *index, double *value));
/* The permutation of randperm (n >= 0) into t (a new contiguous tensor of n elements,
 * any dtype that holds n - 1), drawing from gen when n > 1. */
OPS_DECLARE_STUB(random_randperm_fill, ops_status, (const char *op, ops_tensor *t, int64_t n, ops_generator *gen));
/* Checks every row of p (contiguous [rows, ncat] floating): *bad_row gets the first
 * invalid row (-1 when none) and *bad_kind its error (1: inf, NaN or negative; 2:
 * sum <= 0; 3: too few nonzero categories for num_samples without replacement). */
OPS_DECLARE_STUB(random_multinomial_check, ops_status,
                 (const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                  bool replacement, int64_t *bad_row, int *bad_kind));
/* The samples of checked p into r (contiguous int64 [rows, num_samples]). */
OPS_DECLARE_STUB(random_multinomial_draw, ops_status,
                 (const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                  bool replacement, ops_generator *gen, ops_tensor *r));
/* dropout of in (any strides) into out (contiguous, in's shape and dtype) and mask
 * (contiguous bool, or NULL); gen NULL: not drawing (out = in, mask all true). */
OPS_DECLARE_STUB(random_dropout_fill, ops_status,
                 (const char *op, const ops_tensor *in, ops_tensor *out, ops_tensor *mask, double p,
                  ops_generator *gen));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_RANDOM_H */

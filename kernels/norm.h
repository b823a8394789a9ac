/* Internal: the normalizations batch_norm, native_batch_norm, layer_norm,
 * native_layer_norm, group_norm, native_group_norm and embedding, one driver each for
 * every device (kernels/norm.c: checks, the compute dtype, contiguous operands on the
 * input's device, the statistics batch_norm combines with the running ones, the
 * result and its rounding; the schema names them for `CPU, CUDA`).  The passes over
 * the elements are the device's own, reached through the stubs below: the CPU loops
 * in kernels/cpu/norm.c, the CUDA kernels in kernels/cuda/norm.cu.
 *
 * Every tensor a stub sees is contiguous, on the device the stub runs for, in the
 * compute dtype cd (float32 or float64, x's dtype); optional ones (w, b, mean, rstd)
 * may be NULL.  Arrays named *_host are host memory of C doubles. */
#ifndef OPS_KERNELS_NORM_H
#define OPS_KERNELS_NORM_H

#include "kernels/nn_common.h"
#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* layer_norm of x seen as M rows of N: y, and each row's mean and rstd when mean is
 * not NULL (w, b: N elements). */
OPS_DECLARE_STUB(norm_layer_rows, ops_status,
                 (const char *op, const ops_tensor *x, const ops_tensor *w, const ops_tensor *b, ops_tensor *y,
                  ops_tensor *mean, ops_tensor *rstd, int64_t M, int64_t N, double eps));

/* native_layer_norm_backward over M rows of N (g, x: M x N; mean, rstd: M; w: N or
 * NULL): dx (M x N) when not NULL; dw and db (N, the sums over the rows of g x^ and
 * of g) when not NULL.  The CPU's loop and CUDA's (one block per row; column partials
 * added in a fixed order). */
OPS_DECLARE_STUB(norm_layer_backward_rows, ops_status,
                 (const char *op, const ops_tensor *g, const ops_tensor *x, const ops_tensor *mean,
                  const ops_tensor *rstd, const ops_tensor *w, ops_tensor *dx, ops_tensor *dw, ops_tensor *db,
                  int64_t M, int64_t N));

/* batch_norm's per-channel mean and sum of squared deviations of x (N x C x S). */
OPS_DECLARE_STUB(norm_batch_stats, ops_status,
                 (const char *op, const ops_tensor *x, int64_t N, int64_t C, int64_t S, double *mean_host,
                  double *m2_host));

/* y = (x - mean[c]) * invstd[c] * w[c] + b[c] over x (N x C x S). */
OPS_DECLARE_STUB(norm_batch_apply, ops_status,
                 (const char *op, const ops_tensor *x, ops_tensor *y, int64_t N, int64_t C, int64_t S,
                  const double *mean_host, const double *invstd_host, const ops_tensor *w, const ops_tensor *b));

/* group_norm of x (N x C x S) in G groups: y, and mean and rstd (N x G) when mean is
 * not NULL (w, b: C elements). */
OPS_DECLARE_STUB(norm_group_blocks, ops_status,
                 (const char *op, const ops_tensor *x, ops_tensor *y, int64_t N, int64_t C, int64_t S, int64_t G,
                  const ops_tensor *w, const ops_tensor *b, double eps, ops_tensor *mean, ops_tensor *rstd));

/* embedding: row i of r (contiguous, n x D, weight's dtype) = row k[i] of weight (2-D,
 * any strides and dtype), for the n int64 indices of k (contiguous).  The loop checks
 * the indices: on the first (in index order) outside [0, weight's rows),
 * nrm_embedding_index_error, r (a fresh result) possibly partly written.  The CPU loop
 * checks each index as it copies its row (one pass); the CUDA one checks first. */
OPS_DECLARE_STUB(norm_embedding_rows, ops_status,
                 (const char *op, const ops_tensor *weight, const ops_tensor *k, ops_tensor *r));
/* OPS_ERR_INDEX: "op: index out of range in self (index k in 'indices', 'weight' has
 * rows rows)"; returns the status. */
OPS_INTERNAL ops_status nrm_embedding_index_error(const char *op, int64_t k, int64_t rows);

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_NORM_H */

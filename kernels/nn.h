/* Internal: the other neural-network ops one_hot, pad, upsample_nearest1d/2d,
 * upsample_linear1d, upsample_bilinear2d, pixel_shuffle, pixel_unshuffle, glu and
 * prelu, one driver each for every device (kernels/nn.c: checks, output shapes, the
 * host tables of the gathers and of the linear interpolation, out=; the schema names
 * them for `CPU, CUDA`).  The passes over the elements are the device's own, reached
 * through the stubs below: the CPU loops in kernels/cpu/nn.c, the CUDA kernels in
 * kernels/cuda/nn.cu. */
#ifndef OPS_KERNELS_NN_H
#define OPS_KERNELS_NN_H

#include "kernels/nn_common.h"
#include "ops_internal.h"
#include "ops_iter.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks an output position that takes the fill value (constant padding). */
#define NN_FILL INT64_MIN

/* A gather (pad, upsample_nearest): every output element copies one input element
 * or the fill value.  Per output dim a table of input offsets in elements (the
 * input's strides applied) or NN_FILL; the tables lie one after the other in host
 * memory from tbl[0] on. */
typedef struct {
    const char *op;
    const ops_tensor *src;
    int ndim;
    int64_t sizes[OPS_MAX_DIMS]; /* output sizes */
    int64_t *tbl[OPS_MAX_DIMS];  /* per dim: input offset (elements) or NN_FILL */
    unsigned char fill[8];       /* the fill value in the output dtype */
} nn_gather;

/* Writes g into dst (contiguous, g's sizes and src's dtype, with elements); every
 * dtype is moved as raw bytes. */
OPS_DECLARE_STUB(nn_gather_rows, ops_status, (const char *op, const nn_gather *g, ops_tensor *dst));

/* The min and max of the int64 elements of x (contiguous, with elements). */
OPS_DECLARE_STUB(nn_one_hot_range, ops_status, (const char *op, const ops_tensor *x, int64_t *lo, int64_t *hi));

/* out (contiguous int64, x's elements x K) = one_hot(x) (x contiguous, checked). */
OPS_DECLARE_STUB(nn_one_hot_fill, ops_status, (const char *op, const ops_tensor *x, int64_t K, ops_tensor *out));

/* upsample_linear1d (k = 1) / bilinear2d (k = 2) of self (floating, any strides:
 * n, c, [h,] w) into y (contiguous, planes x oh x ow) with the host tables of
 * kernels/nn.c: ibuf = ih0, ih1 (oh each), iw0, iw1 (ow each); wbuf the weights in
 * the same order, double for float64 and float otherwise.  k == 2 computes
 * h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11) (PyTorch's order). */
OPS_DECLARE_STUB(nn_upsample_linear_planes, ops_status,
                 (const char *op, int k, const ops_tensor *self, int64_t oh, int64_t ow, const int64_t *ibuf,
                  const void *wbuf, ops_tensor *y));

/* glu's x * sigmoid(y) (glu) or prelu's x > 0 ? x : y * x over the binary iterator
 * it (floating common dtype). */
OPS_DECLARE_STUB(nn_binary_loop, ops_status, (const char *op, ops_iter *it, bool glu));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_NN_H */

/* Internal: convolution (conv1d, conv2d and their padding="valid"/"same" overloads,
 * conv_transpose1d, conv_transpose2d), one driver for every device (kernels/conv.c:
 * the argument lists and padding modes, the checks and their messages, the geometry;
 * the schema names its conv_* functions for `CPU, CUDA`) over the device's
 * convolution of a checked geometry, reached through the stub below: im2col + OpenBLAS
 * in kernels/cpu/conv.c, im2col + cuBLAS in kernels/cuda/conv.cu. */
#ifndef OPS_KERNELS_CONV_H
#define OPS_KERNELS_CONV_H

#include "kernels/linalg_common.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the checked convolution g (input, weight and bias on one device) into a new
 * tensor of g->dt (*result); batched: the input has a batch dim (else the result has
 * none either). */
OPS_DECLARE_STUB(conv_run, ops_status,
                 (ops_conv_geom *g, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                  bool batched, ops_tensor **result));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_CONV_H */

/* Internal: the creation ops empty, empty_strided, zeros, ones, full, arange,
 * linspace and eye, one driver for every device (kernels/creation.c: checks, dtype
 * rules, allocation on the requested device, out= resizing; the schema names it for
 * `CPU, CUDA`).  The element writes are the device's own, reached through the stubs
 * below: the CPU loops in kernels/cpu/creation.c, the CUDA kernels in
 * kernels/cuda/creation.cu.  Neither bumps the tensor's version: the driver does,
 * where the op writes into a tensor the caller already holds. */
#ifndef OPS_KERNELS_CREATION_H
#define OPS_KERNELS_CREATION_H

#include "kernels/creation_math.h"
#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every element of t (any strides) gets the element whose bytes are the low itemsize
 * bytes of pattern (little-endian, as ops_scalar_store leaves them): a fill only
 * copies bytes, so one loop per element size serves every dtype. */
OPS_DECLARE_STUB(creation_fill_bytes, ops_status, (const char *op, ops_tensor *t, int64_t pattern));

/* Element i of t (1-D, any stride, distinct elements) gets element i of the sequence
 * q (kernels/creation_math.h).  A failure leaves t untouched. */
OPS_DECLARE_STUB(creation_sequence, ops_status, (const char *op, ops_tensor *t, const ops_seq *q));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_CREATION_H */

/* Internal: the creation ops empty, empty_strided, zeros, ones, full, arange,
 * linspace and eye are one implementation for every device (kernels/cpu/creation.c:
 * checks, allocation on the requested device, out= resizing) over per-device
 * element writes: the CPU loops in creation.c, the CUDA kernels in
 * kernels/cuda/creation.cu (declared here, C linkage, only with OPS_WITH_CUDA).  The
 * CUDA dispatch kernels call the creation_* entry points, so both devices check the
 * same things with the same messages. */
#ifndef OPS_CREATION_BACKEND_H
#define OPS_CREATION_BACKEND_H

#include "kernels/creation_math.h"
#include "ops_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device work (kernels/cuda/creation.cu) ------------------------------------------ */

/* Every element of t (a CUDA tensor, any strides) gets the element whose bytes are
 * the low itemsize bytes of pattern (little-endian, as ops_scalar_store leaves them). */
ops_status ops_cuda_fill_bytes(const char *op, ops_tensor *t, int64_t pattern);
/* Element i of t (a 1-D CUDA tensor, any stride) gets element i of the sequence q. */
ops_status ops_cuda_sequence(const char *op, ops_tensor *t, const ops_seq *q);

/* ---- the ops, for every device (kernels/cpu/creation.c) -------------------------------- */

/* memory_format: None or contiguous_format row-major, channels_last(_3d) for 4-d (5-d) sizes */
ops_tensor *creation_empty(ops_int_list size, ops_dtype dtype, ops_device device, ops_memory_format memory_format);
ops_tensor *creation_empty_strided(ops_int_list size, ops_int_list stride, ops_dtype dtype, ops_device device);
ops_tensor *creation_zeros(ops_int_list size, ops_dtype dtype, ops_device device);
ops_tensor *creation_ones(ops_int_list size, ops_dtype dtype, ops_device device);
ops_tensor *creation_full(ops_int_list size, ops_scalar fill_value, ops_dtype dtype, ops_device device);
ops_tensor *creation_arange(ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dtype, ops_device device);
ops_status creation_arange_out(ops_scalar start, ops_scalar end, ops_scalar step, ops_tensor *out);
ops_tensor *creation_linspace(ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dtype, ops_device device);
ops_status creation_linspace_out(ops_scalar start, ops_scalar end, int64_t steps, ops_tensor *out);
ops_tensor *creation_eye(int64_t n, int64_t m, ops_dtype dtype, ops_device device);
ops_status creation_eye_out(int64_t n, int64_t m, ops_tensor *out);

#ifdef __cplusplus
}
#endif
#endif /* OPS_CREATION_BACKEND_H */

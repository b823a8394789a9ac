/* Internal: float32 forward convolution through oneDNN (kernels/cpu/conv_dnnl.c), the
 * fast path of kernels/cpu/conv.c's conv_run_cpu where the build found oneDNN. */
#ifndef OPS_KERNELS_CPU_CONV_DNNL_H
#define OPS_KERNELS_CPU_CONV_DNNL_H

#include <stdbool.h>

#include "kernels/linalg_common.h"

/* Runs the checked, non-transposed float32 convolution g into out (the new result,
 * [n, cout, oh, ow] contiguous): input x read with g->xs, weight read with wst (its
 * (cout, cin/g, kh, kw) strides), bias (or NULL) with stride bst.  True when done;
 * false when this build has no oneDNN, oneDNN has no implementation for g, or a work
 * buffer could not be allocated: the caller then runs its own path, which overwrites
 * all of out (nothing else was touched, no error is set). */
bool ops_conv_dnnl_f32(const ops_conv_geom *g, const float *x, const float *w, const int64_t *wst, const float *bias,
                       int64_t bst, float *out);

/* Turns the oneDNN path on or off for the whole process (on unless OPS_CONV_DNNL=0
 * is in the environment; for tests and benchmarks); false when this build or machine
 * has no oneDNN. */
bool ops_conv_dnnl_enable(bool on);

#endif /* OPS_KERNELS_CPU_CONV_DNNL_H */

/* Row-major element index -> element offset for one tensor of any strides, in 64
 * bits, for the CUDA kernels whose element index has a meaning of its own (the
 * Philox counter of a random op, the position in arange or a triangle): those
 * cannot use the 32-bit split of ops_cuda_launch.h, whose pieces renumber their
 * elements.  Dimensions are coalesced first, so a contiguous tensor costs no
 * division at all and a typical strided one one or two. */
#ifndef OPS_STRIDED_INDEX_H
#define OPS_STRIDED_INDEX_H

#include "ops_internal.h"
#include "ops_scalar_math.h"

typedef struct ops_strided64 {
    int ndim;        /* after coalescing; 0 for a tensor of one element */
    bool contiguous; /* offset == index */
    int64_t sizes[OPS_MAX_DIMS];
    int64_t strides[OPS_MAX_DIMS];
} ops_strided64;

/* t's sizes and strides with size-1 dimensions dropped and neighbours whose strides
 * chain merged (host). */
static inline ops_strided64
ops_strided64_of(const ops_tensor *t)
{
    ops_strided64 l;
    l.ndim = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1)
            continue;
        if (l.ndim > 0 && l.strides[l.ndim - 1] == t->sizes[d] * t->strides[d]) {
            l.sizes[l.ndim - 1] *= t->sizes[d];
            l.strides[l.ndim - 1] = t->strides[d];
            continue;
        }
        l.sizes[l.ndim] = t->sizes[d];
        l.strides[l.ndim] = t->strides[d];
        l.ndim++;
    }
    l.contiguous = l.ndim == 0 || (l.ndim == 1 && l.strides[0] == 1);
    return l;
}

/* The element offset of row-major element e (< numel). */
OPS_INLINE int64_t
ops_strided64_offset(const ops_strided64 *l, int64_t e)
{
    if (l->contiguous)
        return e;
    int64_t off = 0;
    for (int d = l->ndim - 1; d > 0; d--) {
        const int64_t q = e / l->sizes[d];
        off += (e - q * l->sizes[d]) * l->strides[d];
        e = q;
    }
    return off + e * l->strides[0];
}

#ifdef __cplusplus
#include "ops_cuda_launch.h"
#include "ops_cuda_rt.h"

/* Grid-stride kernels over an element index (kernels/cuda/{random,creation,shape}.cu). */
namespace ops_strided {

/* Threads per block, and the grid cap: larger results loop (grid-stride). */
constexpr unsigned kBlock = 128;
constexpr int64_t kMaxGrid = 2048; /* 262144 threads: a full H100 (132 SMs x 2048) is ~270k */

/* At least one block: a grid of 0 is a launch error, and the kernels' grid-stride
 * loops do nothing when there is no work. */
inline unsigned
grid_for(int64_t work)
{
    const unsigned g = ops_launch_config_1d(work, kBlock, 1, kMaxGrid).grid;
    return g > 0 ? g : 1;
}

__device__ inline int64_t
global_thread()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ inline int64_t
grid_threads()
{
    return (int64_t)gridDim.x * blockDim.x;
}

/* A tensor's first element and layout, for a kernel argument. */
struct strided_arg {
    char *data;
    size_t itemsize;
    ops_dtype dtype;
    ops_strided64 layout;
};

inline strided_arg
strided_of(const ops_tensor *t)
{
    strided_arg a;
    a.data = (char *)ops_tensor_data_ptr(t);
    a.itemsize = ops_dtype_size(t->dtype);
    a.dtype = t->dtype;
    a.layout = ops_strided64_of(t);
    return a;
}

__device__ inline char *
element(const strided_arg &a, int64_t e)
{
    return a.data + ops_strided64_offset(&a.layout, e) * (int64_t)a.itemsize;
}

} // namespace ops_strided
#endif /* __cplusplus */

#endif /* OPS_STRIDED_INDEX_H */

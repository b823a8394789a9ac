/* The CUDA loops of the creation ops empty, empty_strided, zeros, ones, full, arange,
 * linspace and eye (the stubs of kernels/creation.h; fill_ / zero_ are
 * kernels/cuda's elementwise family's).
 *
 * The ops (checks, dtype rules, allocation, out= resizing) are the drivers of
 * kernels/creation.c, shared with the CPU.  Here: a byte-pattern fill (zeros, ones,
 * full, eye's zeros and its diagonal, a one-element linspace) and the sequences,
 * one thread per output element through the 64-bit offset calculator of
 * strided_index.h, element i's value from kernels/creation_math.h, the formulas the
 * CPU loops call, so arange and linspace write the CPU's bits. */
#include "cuda_common.h"
#include "kernels/creation.h"
#include "strided_index.h"

namespace {

using namespace ops_strided;

/* Every element gets the pattern's low itemsize bytes (a fill only copies bytes, so
 * one kernel per element size serves every dtype). */
template <typename T>
__global__ void
fill_bytes_kernel(strided_arg t, int64_t n, T value)
{
    for (int64_t e = global_thread(); e < n; e += grid_threads())
        *(T *)element(t, e) = value;
}

__global__ void
sequence_kernel(strided_arg t, int64_t n, ops_seq q)
{
    for (int64_t i = global_thread(); i < n; i += grid_threads())
        ops_seq_store(&q, i, element(t, i));
}

template <typename T>
ops_status
launch_fill(const char *op, const ops_tensor *t, int64_t pattern, cudaStream_t stream)
{
    T v;
    memcpy(&v, &pattern, sizeof v); /* the low bytes on a little-endian host */
    const int64_t n = ops_tensor_numel(t);
    OPS_LAUNCH(fill_bytes_kernel<T>, grid_for(n), kBlock, 0, stream, strided_of(t), n, v);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

int
device_of(const ops_tensor *t)
{
    return t->storage->device.index;
}

} // namespace

OPS_REGISTER_STUB(creation_fill_bytes, CUDA, creation_fill_bytes_cuda);
OPS_REGISTER_STUB(creation_sequence, CUDA, creation_sequence_cuda);

ops_status
creation_fill_bytes_cuda(const char *op, ops_tensor *t, int64_t pattern)
{
    const int dev = device_of(t);
    ops_cuda_device_guard g(dev);
    if (ops_tensor_numel(t) == 0)
        return OPS_OK;
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    switch (ops_dtype_size(t->dtype)) {
    case 1:
        return launch_fill<uint8_t>(op, t, pattern, stream);
    case 2:
        return launch_fill<uint16_t>(op, t, pattern, stream);
    case 4:
        return launch_fill<uint32_t>(op, t, pattern, stream);
    default:
        return launch_fill<uint64_t>(op, t, pattern, stream);
    }
}

ops_status
creation_sequence_cuda(const char *op, ops_tensor *t, const ops_seq *q)
{
    const int dev = device_of(t);
    ops_cuda_device_guard g(dev);
    const int64_t n = ops_tensor_numel(t);
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(sequence_kernel, grid_for(n), kBlock, 0, ops_cuda_current_stream(dev), strided_of(t), n, *q);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

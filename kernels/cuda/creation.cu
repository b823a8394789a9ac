/* Creation ops on CUDA devices: the device work of kernels/creation_backend.h and the
 * *_cuda dispatch kernels of empty, empty_strided, zeros, ones, full, arange,
 * linspace and eye (not fill_ / zero_: kernels/cuda's elementwise family has them).
 *
 * The ops (checks, dtype rules, allocation, out= resizing) are creation.c's
 * creation_* functions, shared with the CPU.  Here: a byte-pattern fill (zeros, ones,
 * full, eye's zeros and its diagonal, a one-element linspace) and the sequences,
 * one thread per output element through the 64-bit offset calculator of
 * strided_index.h, element i's value from kernels/creation_math.h, the formulas the
 * CPU loops call, so arange and linspace write the CPU's bits. */
#include "cuda_common.h"
#include "kernels/creation_backend.h"
#include "ops_kernels.h"
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

/* OPS_SCALAR_INT is a C compound literal */
ops_scalar
int_scalar(int64_t v)
{
    ops_scalar s;
    s.kind = OPS_SCALAR_INT;
    s.v.i = v;
    return s;
}

} // namespace

extern "C" ops_status
ops_cuda_fill_bytes(const char *op, ops_tensor *t, int64_t pattern)
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

extern "C" ops_status
ops_cuda_sequence(const char *op, ops_tensor *t, const ops_seq *q)
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

/* ---- the CUDA dispatch kernels ------------------------------------------------------------ */

ops_tensor *
empty_cuda(ops_int_list size, ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    ops_cuda_device_guard g(device.index);
    return creation_empty(size, dtype, device, memory_format);
}

ops_tensor *
empty_strided_cuda(ops_int_list size, ops_int_list stride, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_empty_strided(size, stride, dtype, device);
}

ops_tensor *
zeros_cuda(ops_int_list size, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_zeros(size, dtype, device);
}

ops_tensor *
ones_cuda(ops_int_list size, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_ones(size, dtype, device);
}

ops_tensor *
full_cuda(ops_int_list size, ops_scalar fill_value, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_full(size, fill_value, dtype, device);
}

ops_tensor *
arange_start_step_cuda(ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_arange(start, end, step, dtype, device);
}

ops_tensor *
arange_start_cuda(ops_scalar start, ops_scalar end, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_arange(start, end, int_scalar(1), dtype, device);
}

ops_tensor *
arange_cuda(ops_scalar end, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_arange(int_scalar(0), end, int_scalar(1), dtype, device);
}

ops_status
arange_start_out_cuda(ops_scalar start, ops_scalar end, ops_scalar step, ops_tensor *out)
{
    ops_cuda_device_guard g(device_of(out));
    return creation_arange_out(start, end, step, out);
}

ops_tensor *
linspace_cuda(ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_linspace(start, end, steps, dtype, device);
}

ops_status
linspace_out_cuda(ops_scalar start, ops_scalar end, int64_t steps, ops_tensor *out)
{
    ops_cuda_device_guard g(device_of(out));
    return creation_linspace_out(start, end, steps, out);
}

ops_tensor *
eye_m_cuda(int64_t n, int64_t m, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_eye(n, m, dtype, device);
}

ops_tensor *
eye_cuda(int64_t n, ops_dtype dtype, ops_device device)
{
    ops_cuda_device_guard g(device.index);
    return creation_eye(n, n, dtype, device);
}

ops_status
eye_m_out_cuda(int64_t n, int64_t m, ops_tensor *out)
{
    ops_cuda_device_guard g(device_of(out));
    return creation_eye_out(n, m, out);
}

ops_status
eye_out_cuda(int64_t n, ops_tensor *out)
{
    ops_cuda_device_guard g(device_of(out));
    return creation_eye_out(n, n, out);
}

/* Copies between devices (host<->cuda:N, cuda:M<->cuda:N), for copy_values_cuda (copy.cu),
 * and the loop of the stub copy_read_bytes (a few device bytes to the host, for item()).
 *
 * A transfer moves bytes only: cudaMemcpyAsync (or the peer form) between two
 * contiguous tensors of one dtype and one shape.  Everything else is staged so that
 * layout and dtype work happens where the data is, with the same code as a
 * same-device copy: the source side gathers src into a contiguous buffer (converting
 * to dst's dtype in the same pass when it has to gather anyway), the bytes move, and
 * the destination side converts/scatters them into dst (the CPU copy on the host,
 * ops_cuda_copy_same_device on a device).  A contiguous end is used in place.
 *
 * Ordering: every device's work runs on its current stream (ops_cuda_current_stream).
 * A copy returns after the transfer finished, except a direct transfer with
 * non_blocking whose host end is pinned memory (ops_tensor_pin_memory; PyTorch's rule: pageable memory
 * cannot be read or written asynchronously, and a staged copy frees its buffers).
 * A peer copy first waits for the destination device's queued work, since it is
 * ordered on the source device's stream only. */
#include "cuda_common.h"
#include "kernels/copy.h"
#include "ops_cuda_backend.h"
#include "ops_iter.h"

namespace {

bool
on_cpu(const ops_tensor *t)
{
    return t->storage->device.type == OPS_CPU;
}

char *
data_of(const ops_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)ops_dtype_itemsize(t->dtype);
}

bool
same_sizes(const ops_tensor *a, const ops_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i])
            return false;
    return true;
}

/* Moves the bytes of src into dst: both contiguous, same dtype and sizes, on
 * different devices, at least one of them CUDA. */
ops_status
transfer(const char *op, ops_tensor *dst, const ops_tensor *src, bool may_return_early)
{
    const size_t n = (size_t)ops_tensor_numel(src) * ops_dtype_itemsize(src->dtype);
    if (n == 0)
        return OPS_OK;
    const int sdev = src->storage->device.index, ddev = dst->storage->device.index;
    /* the device whose stream orders the copy: the source's, unless it is the host */
    const int dev = on_cpu(src) ? ddev : sdev;
    ops_cuda_device_guard guard(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    cudaError_t err;
    if (!on_cpu(src) && !on_cpu(dst)) {
        {
            ops_cuda_device_guard dguard(ddev);
            if ((err = cudaStreamSynchronize(ops_cuda_current_stream(ddev))) != cudaSuccess)
                return ops_cuda_fail(op, "cudaStreamSynchronize (destination device)", err);
        }
        err = cudaMemcpyPeerAsync(data_of(dst), ddev, data_of(src), sdev, n, stream);
        if (err != cudaSuccess)
            return ops_cuda_fail(op, "cudaMemcpyPeerAsync", err);
    } else {
        err = cudaMemcpyAsync(data_of(dst), data_of(src), n,
                              on_cpu(src) ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream);
        if (err != cudaSuccess)
            return ops_cuda_fail(op, on_cpu(src) ? "cudaMemcpyAsync (host to device)" : "cudaMemcpyAsync (device to host)",
                                 err);
    }
    if (may_return_early)
        return OPS_OK;
    if ((err = cudaStreamSynchronize(stream)) != cudaSuccess)
        return ops_cuda_fail(op, "cudaStreamSynchronize", err);
    return OPS_OK;
}

/* A new contiguous tensor of sizes like t on device, or NULL with the error set. */
ops_tensor *
new_contiguous(const char *op, const ops_tensor *t, ops_dtype dtype, ops_device device)
{
    return ops_tensor_new(op, t->ndim, t->sizes, NULL, dtype, device);
}

ops_status
check_cuda_end(const char *op, const ops_tensor *t)
{
    return on_cpu(t) ? OPS_OK : ops_cuda_check_device(op, t->storage->device.index);
}

} // namespace

extern "C" ops_status
ops_cuda_copy_across(const char *op, ops_tensor *dst, const ops_tensor *src, bool non_blocking)
{
    ops_status st;
    if ((st = check_cuda_end(op, dst)) != OPS_OK || (st = check_cuda_end(op, src)) != OPS_OK)
        return st;
    {
        /* the same shape rule and message as every copy (src broadcasts to dst) */
        ops_iter it;
        st = ops_iter_build_copy(&it, op, dst, src);
        ops_iter_release(&it);
        if (st != OPS_OK)
            return st;
    }
    if (ops_tensor_numel(dst) == 0)
        return OPS_OK;
    const bool dst_direct = ops_tensor_is_contiguous(dst) && same_sizes(dst, src);
    if (dst_direct && dst->dtype == src->dtype && ops_tensor_is_contiguous(src)) {
        const bool host_pinned = on_cpu(src) ? ops_tensor_is_pinned(src) : ops_tensor_is_pinned(dst);
        return transfer(op, dst, src, non_blocking && host_pinned);
    }

    /* source side: contiguous, in dst's dtype when it has to be gathered anyway */
    ops_tensor *s1 = NULL, *d1 = NULL;
    if (ops_tensor_is_contiguous(src)) {
        s1 = ops_tensor_retain(src);
    } else {
        s1 = new_contiguous(op, src, dst->dtype, src->storage->device);
        if (s1 == NULL)
            return ops_last_status();
        if ((st = ops_copy_values(op, s1, src)) != OPS_OK)
            goto done;
    }
    /* destination side: straight into dst when it can take the bytes as they are */
    if (dst_direct && dst->dtype == s1->dtype) {
        d1 = ops_tensor_retain(dst);
    } else if ((d1 = new_contiguous(op, s1, s1->dtype, dst->storage->device)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    st = transfer(op, d1, s1, false);
    if (st == OPS_OK && d1 != dst)
        st = ops_copy_values(op, dst, d1);
done:
    ops_tensor_release(s1);
    ops_tensor_release(d1);
    return st;
}

OPS_REGISTER_STUB(copy_read_bytes, CUDA, copy_read_bytes_cuda);

extern "C" ops_status
copy_read_bytes_cuda(const char *op, ops_device device, void *dst, const void *src, size_t n)
{
    const int index = device.index;
    ops_status st = ops_cuda_check_device(op, index);
    if (st != OPS_OK || n == 0)
        return st;
    ops_cuda_device_guard guard(index);
    const cudaStream_t stream = ops_cuda_current_stream(index);
    cudaError_t err = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream);
    if (err != cudaSuccess)
        return ops_cuda_fail(op, "cudaMemcpyAsync (device to host)", err);
    if ((err = cudaStreamSynchronize(stream)) != cudaSuccess)
        return ops_cuda_fail(op, "cudaStreamSynchronize", err);
    return OPS_OK;
}

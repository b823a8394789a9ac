/* The CUDA loop of the copies (the stub copy_values of kernels/copy.h; the drivers
 * are kernels/copy.c): within one CUDA device, ops_cuda_copy_same_device below, every
 * (destination, source) dtype pair, src broadcast to dst, any strides; between
 * devices, the transfers of transfer.cu.
 *
 * The geometry comes from the same builder the CPU copy uses (ops_iter_build_copy:
 * broadcast check and message, dims sorted by stride and coalesced), so both devices
 * refuse the same shapes with the same words; the elementwise launcher then picks
 * the contiguous/vectorised or the offset-calculator path and splits for 32-bit
 * offsets.  Values convert by ops_convert.h's rules, the definitions the CPU's
 * ops_convert_run uses; a same-dtype copy moves the bytes (NaN payloads and -0
 * survive, as on the CPU). */
#include "cuda_common.h"
#include "kernels/copy.h"
#include "ops_convert.h"
#include "ops_cuda_backend.h"
#include "ops_cuda_loops.cuh"

namespace {

/* dst's opmath value from src's: the shared conversion, then the launcher's store
 * rounds to float16/bfloat16 where dst is one (ops_convert's rule goes through float
 * to them as well). */
template <typename D, typename S> struct convert_op {
    OPS_HOST_DEVICE typename ops_opmath<D>::type operator()(typename ops_opmath<S>::type x) const
    {
        return ops_convert<typename ops_opmath<D>::type>(x);
    }
};

/* Same dtype: an integer of the element's size carries the bytes unchanged. */
template <typename T> struct move_op {
    OPS_HOST_DEVICE T operator()(T x) const { return x; }
};

template <typename T>
ops_status
move_bytes(ops_iter *it)
{
    return ops_cuda_elementwise<T, T>(it, move_op<T>());
}

ops_status
copy_run(ops_iter *it)
{
    const ops_dtype ddt = it->dtypes[0], sdt = it->dtypes[1];
    if (ddt == sdt) {
        switch (ops_dtype_itemsize(ddt)) {
        case 1:
            return move_bytes<int8_t>(it);
        case 2:
            return move_bytes<int16_t>(it);
        case 4:
            return move_bytes<int32_t>(it);
        default:
            return move_bytes<int64_t>(it);
        }
    }
    OPS_DISPATCH_ALL(ddt, it->op, {
        typedef scalar_t dst_t;
        OPS_DISPATCH_ALL(sdt, it->op, {
            /* (equal types moved bytes above: no kernels for them here) */
            if constexpr (!std::is_same<dst_t, scalar_t>::value)
                return ops_cuda_elementwise<dst_t, scalar_t>(it, convert_op<dst_t, scalar_t>());
        });
    });
    return OPS_OK;
}

} /* namespace */

extern "C" ops_status
ops_cuda_copy_same_device(const char *op, ops_tensor *dst, const ops_tensor *src)
{
    if (dst != NULL && src != NULL &&
        (dst->storage->device.type != OPS_CUDA || src->storage->device.type != OPS_CUDA ||
         dst->storage->device.index != src->storage->device.index)) {
        char a[32], b[32];
        return ops_fail(OPS_ERR_DEVICE, "%s: expected both tensors on the same CUDA device, got %s and %s", op,
                        ops_device_str(dst->storage->device, a, sizeof a),
                        ops_device_str(src->storage->device, b, sizeof b));
    }
    ops_iter it;
    ops_status st = ops_iter_build_copy(&it, op, dst, src);
    if (st == OPS_OK)
        st = copy_run(&it);
    ops_iter_release(&it);
    return st;
}

OPS_REGISTER_STUB(copy_values, CUDA, copy_values_cuda);

/* dst or src (or both) on a CUDA device: a device copy when both are on one device,
 * else a transfer; the CUDA tensor's device (dst's when both are) is current. */
ops_status
copy_values_cuda(const char *op, ops_tensor *dst, const ops_tensor *src, bool non_blocking)
{
    const ops_device dd = dst->storage->device, sd = src->storage->device;
    const int index = dd.type == OPS_CUDA ? dd.index : sd.index;
    ops_status st = ops_cuda_check_device(op, index);
    if (st != OPS_OK)
        return st;
    ops_cuda_device_guard guard(index);
    if (ops_device_equal(dd, sd))
        return ops_cuda_copy_same_device(op, dst, src);
    return ops_cuda_copy_across(op, dst, src, non_blocking);
}

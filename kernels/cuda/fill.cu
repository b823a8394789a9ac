/* fill_ on a CUDA tensor (zero_ is the composite fill_(0)).  As on the CPU
 * (kernels/cpu/creation.c, fill_cpu_): the value must fit the dtype (the shared check, same
 * message), is converted once on the host, and its bytes are written to every
 * element whatever its strides; one kernel per element size serves every dtype. */
#include "ops_convert.h"
#include "ops_cuda_loops.cuh"
#include "ops_kernels_fill.h"

namespace {

template <typename T> struct pattern_op {
    T value;
    OPS_HOST_DEVICE T operator()() const { return value; }
};

template <typename T>
ops_status
fill_bytes(ops_iter *it, const void *pattern)
{
    pattern_op<T> f;
    memcpy(&f.value, pattern, sizeof(T));
    return ops_cuda_elementwise<T>(it, f);
}

} /* namespace */

extern "C" ops_status
fill_cuda_(ops_tensor *self, ops_scalar value)
{
    ops_status st = ops_check_fill_value("fill_", value, self->dtype);
    if (st != OPS_OK)
        return st;
    int64_t pattern = 0; /* room for the widest dtype */
    ops_scalar_store(value, self->dtype, &pattern);
    ops_iter it;
    st = ops_iter_build_nullary(&it, "fill_", self);
    if (st == OPS_OK) {
        switch (ops_dtype_itemsize(self->dtype)) {
        case 1:
            st = fill_bytes<int8_t>(&it, &pattern);
            break;
        case 2:
            st = fill_bytes<int16_t>(&it, &pattern);
            break;
        case 4:
            st = fill_bytes<int32_t>(&it, &pattern);
            break;
        default:
            st = fill_bytes<int64_t>(&it, &pattern);
            break;
        }
    }
    if (st == OPS_OK)
        st = ops_iter_finish(&it);
    ops_iter_release(&it);
    return st;
}

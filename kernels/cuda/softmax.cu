// softmax and log_softmax on CUDA devices, along one dim of a contiguous tensor seen
// as lines (outer x len x inner, elements inner apart), with reduce.c's arithmetic:
// m = the maximum (NaN propagating), s = sum exp(x - m) in opmath, then
// exp(x - m) / s or x - m - log(s).
//  - inner == 1 and long lines: a row of threads (a warp, or the block) per line,
//    coalesced, with block all-reductions for m and s;
//  - otherwise a thread per line, adjacent threads on adjacent lines (coalesced when
//    inner is large), in the CPU's order.
// The entry points run kernels/cpu/reduce.c's driver (dtype checks, conversion, out=).
#include "ops_cuda_reduce.cuh"
#include "ops_kernels_reduce.h"
#include "ops_kernels_softmax.h"

// Lines shorter than this take a thread each even when contiguous.
#define SOFTMAX_ROW_MIN_LEN 64

template <typename T, typename A>
__device__ inline void
softmax_write(T *y, const T *x, int64_t k, int64_t inner, A m, A s_or_log, bool is_log)
{
    const A v = ops_load(&x[k * inner]);
    if (is_log)
        ops_store(&y[k * inner], (A)(v - m - s_or_log));
    else
        ops_store(&y[k * inner], red_exp((A)(v - m)) / s_or_log);
}

template <typename T>
__global__ void
softmax_row_kernel(const T *in, T *out, int64_t lines, int64_t len, bool is_log)
{
    typedef typename ops_opmath<T>::type A;
    OPS_SHARED_DYNAMIC(double, softmax_smem_raw);
    A *const smem = reinterpret_cast<A *>(softmax_smem_raw);
    const red_max_nan_op<A> max_op{};
    const red_add_op<A> add_op{};
    for (int64_t l0 = (int64_t)blockIdx.x * blockDim.y; l0 < lines; l0 += (int64_t)gridDim.x * blockDim.y) {
        const int64_t l = l0 + threadIdx.y;
        const bool live = l < lines; // every thread takes part in the row reductions
        const T *const x = in + (live ? l : 0) * len;
        T *const y = out + (live ? l : 0) * len;
        A m = max_op.identity();
        if (live)
            for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
                m = max_op.combine(m, (A)ops_load(&x[k]));
        m = red_row_allreduce(max_op, m, smem);
        A s = add_op.identity();
        if (live)
            for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
                s += red_exp((A)(ops_load(&x[k]) - m));
        s = red_row_allreduce(add_op, s, smem);
        const A t = is_log ? red_log(s) : s;
        if (live)
            for (int64_t k = threadIdx.x; k < len; k += blockDim.x)
                softmax_write(y, x, k, 1, m, t, is_log);
    }
}

template <typename T>
__global__ void
softmax_col_kernel(const T *in, T *out, int64_t lines, int64_t len, int64_t inner, bool is_log)
{
    typedef typename ops_opmath<T>::type A;
    for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += (int64_t)gridDim.x * blockDim.x) {
        const int64_t base = (l / inner) * len * inner + l % inner;
        const T *const x = in + base;
        T *const y = out + base;
        A m = -INFINITY;
        for (int64_t k = 0; k < len; k++)
            m = ops_red_max_nan(m, (A)ops_load(&x[k * inner]));
        A s = 0;
        for (int64_t k = 0; k < len; k++)
            s += red_exp((A)(ops_load(&x[k * inner]) - m));
        const A t = is_log ? red_log(s) : s;
        for (int64_t k = 0; k < len; k++)
            softmax_write(y, x, k, inner, m, t, is_log);
    }
}

template <typename T>
static ops_status
softmax_launch(const char *op, bool is_log, const void *src, int64_t outer, int64_t len, int64_t inner, void *dst,
               int dev)
{
    typedef typename ops_opmath<T>::type A;
    const T *const in = static_cast<const T *>(src);
    T *const out = static_cast<T *>(dst);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    const int64_t lines = outer * inner;
    if (inner == 1 && len >= SOFTMAX_ROW_MIN_LEN) {
        unsigned bx = 32;
        while (bx < RED_BLOCK_THREADS && (int64_t)bx * 2 * 4 <= len)
            bx *= 2;
        const dim3 block(bx, RED_BLOCK_THREADS / bx);
        const int64_t blocks = red_ceil_div(lines, block.y);
        const unsigned grid = (unsigned)(blocks < RED_MAX_GRID ? blocks : RED_MAX_GRID);
        // the block reduction's per-warp slots, and one per row for the broadcast
        const size_t smem = (size_t)RED_BLOCK_THREADS / 32 * sizeof(A);
        OPS_LAUNCH_COOP((softmax_row_kernel<T>), grid, block, smem, stream, in, out, lines, len, is_log);
    } else {
        const int64_t blocks = red_ceil_div(lines, RED_BLOCK_THREADS);
        const unsigned grid = (unsigned)(blocks < RED_MAX_GRID ? blocks : RED_MAX_GRID);
        OPS_LAUNCH((softmax_col_kernel<T>), grid, RED_BLOCK_THREADS, 0, stream, in, out, lines, len, inner, is_log);
    }
    return ops_cuda_check_launch(op);
}

extern "C" ops_status
ops_cuda_softmax_run(const char *op, bool is_log, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                     ops_tensor *res)
{
    const int dev = ops_tensor_device(src).index;
    if (outer * len * inner == 0)
        return OPS_OK;
    ops_cuda_device_guard guard(dev);
    const void *in = ops_tensor_data_ptr(src);
    void *out = ops_tensor_data_ptr(res);
    switch (src->dtype) {
    case OPS_FLOAT16: return softmax_launch<ops_half>(op, is_log, in, outer, len, inner, out, dev);
    case OPS_BFLOAT16: return softmax_launch<ops_bfloat16>(op, is_log, in, outer, len, inner, out, dev);
    case OPS_FLOAT32: return softmax_launch<float>(op, is_log, in, outer, len, inner, out, dev);
    case OPS_FLOAT64: return softmax_launch<double>(op, is_log, in, outer, len, inner, out, dev);
    default:
        return ops_fail(OPS_ERR_DTYPE, "%s: expected a floating point dtype, but got %s", op,
                        ops_dtype_name(src->dtype));
    }
}

// ---- entry points (reduce.c's driver; see reduce.cu) ------------------------------------------

extern "C" ops_tensor *
softmax_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return softmax_cpu(self, dim, dtype);
}

extern "C" ops_status
softmax_out_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return softmax_out_cpu(self, dim, dtype, out);
}

extern "C" ops_tensor *
log_softmax_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return log_softmax_cpu(self, dim, dtype);
}

extern "C" ops_status
log_softmax_out_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return log_softmax_out_cpu(self, dim, dtype, out);
}


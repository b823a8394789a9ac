// cumsum, cumprod, cummax, cummin on CUDA devices, along one dim of a contiguous
// tensor seen as lines (outer x len x inner, elements inner apart), with reduce.c's
// rules: floating sums and products accumulate in double (PyTorch's CPU acc_type),
// integer ones wrap in uint64_t; cummax/cummin move the position forward on ties, and
// once a NaN is seen keep NaN, moving only to a later NaN.
//
// A scan is a functor over a state: identity(), element(k) (the state of the line's
// element k alone), combine(earlier, later) (associative, not commutative) and
// store(at, state).  Two kernels run it:
//  - a thread per line, walking it in order from the identity: the CPU's own order,
//    so results equal the CPU's; adjacent threads take adjacent lines (coalesced when
//    inner is large).  Used whenever there are lines enough to fill the device;
//  - a block per long contiguous line (few lines): tiles of SCAN_TILE elements, each
//    thread reduces its run of SCAN_PER_THREAD, a warp-shuffle and shared-memory scan
//    gives each thread the state before its run (carried across tiles), and the
//    thread rescans its run from there.  Sums and products are re-associated (in
//    double: the float32 results agree after rounding in all but rare last-bit
//    cases); integer scans and cummax/cummin stay exact.
// The entry points run kernels/cpu/reduce.c's driver (dtype rules, conversion, out=).
#include "ops_cuda_reduce.cuh"
#include "ops_kernels_reduce.h"
#include "ops_kernels_scan.h"

#define SCAN_PER_THREAD 16
#define SCAN_TILE (RED_BLOCK_THREADS * SCAN_PER_THREAD)
// The block path: lines at least this long, and fewer lines than this.
#define SCAN_BLOCK_MIN_LEN 4096
#define SCAN_BLOCK_MAX_LINES 2048

// cumsum (PROD false) and cumprod.
template <typename T, bool PROD> struct scan_arith_op {
    typedef typename std::conditional<red_is_floating<T>::value, double, uint64_t>::type state_t;
    const T *in;
    T *out;
    __device__ state_t identity() const { return PROD ? state_t(1) : state_t(0); }
    __device__ state_t element(int64_t at, int64_t) const
    {
        if constexpr (red_is_floating<T>::value)
            return (double)ops_load(&in[at]);
        else
            return (uint64_t)(int64_t)in[at];
    }
    __device__ state_t combine(state_t a, state_t b) const { return PROD ? a * b : a + b; }
    __device__ void store(int64_t at, state_t s) const
    {
        if constexpr (red_is_floating<T>::value)
            ops_store(&out[at], (typename ops_opmath<T>::type)s);
        else
            out[at] = (T)(int64_t)s;
    }
};

template <typename V> struct scan_ext_state {
    V v;
    int64_t i; // -1: no element yet
};

// cummax (MAX) and cummin: the later state wins when it is NaN, when the earlier is
// not NaN and the later is at least as large (small), or when the earlier is empty.
template <typename T, bool MAX> struct scan_ext_op {
    typedef typename std::conditional<red_is_floating<T>::value, typename ops_opmath<T>::type, T>::type V;
    typedef scan_ext_state<V> state_t;
    const T *in;
    T *out;
    int64_t *idx;
    __device__ state_t identity() const { return {V(0), -1}; }
    __device__ state_t element(int64_t at, int64_t k) const { return {(V)ops_load(&in[at]), k}; }
    __device__ state_t combine(state_t a, state_t b) const
    {
        if (b.i < 0)
            return a;
        if (a.i < 0 || b.v != b.v)
            return b;
        if (a.v != a.v)
            return a;
        return (MAX ? b.v >= a.v : b.v <= a.v) ? b : a;
    }
    __device__ void store(int64_t at, state_t s) const
    {
        ops_store(&out[at], s.v);
        idx[at] = s.i;
    }
};

template <class Op>
__global__ void
scan_line_kernel(Op op, int64_t lines, int64_t len, int64_t inner)
{
    for (int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += (int64_t)gridDim.x * blockDim.x) {
        const int64_t base = (l / inner) * len * inner + l % inner;
        typename Op::state_t run = op.identity();
        for (int64_t k = 0; k < len; k++) {
            const int64_t at = base + k * inner;
            run = op.combine(run, op.element(at, k));
            op.store(at, run);
        }
    }
}

// A block per contiguous line (inner == 1); blockDim.x == RED_BLOCK_THREADS.  Shared
// memory: the warps' totals, the state before each warp, and the carry of the tiles
// before (2 * warps + 1 states).
template <class Op>
__global__ void
scan_block_kernel(Op op, int64_t lines, int64_t len)
{
    typedef typename Op::state_t S;
    OPS_SHARED_DYNAMIC(double, scan_smem_raw);
    S *const wsum = reinterpret_cast<S *>(scan_smem_raw);
    const unsigned nw = blockDim.x >> 5, lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    S *const wpre = wsum + nw;
    S *const carry = wpre + nw;
    for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
        const int64_t base = l * len;
        if (threadIdx.x == 0)
            *carry = op.identity();
        __syncthreads();
        for (int64_t t0 = 0; t0 < len; t0 += SCAN_TILE) {
            const int64_t lo = t0 + (int64_t)threadIdx.x * SCAN_PER_THREAD;
            const int64_t hi = lo + SCAN_PER_THREAD < len ? lo + SCAN_PER_THREAD : len;
            S inc = op.identity();
            for (int64_t k = lo; k < hi; k++)
                inc = op.combine(inc, op.element(base + k, k));
            for (unsigned d = 1; d < 32; d <<= 1) { // inclusive scan over the warp
                const S y = red_shfl_up(inc, d);
                if (lane >= d)
                    inc = op.combine(y, inc);
            }
            if (lane == 31)
                wsum[warp] = inc;
            __syncthreads();
            if (threadIdx.x == 0) {
                S run = *carry;
                for (unsigned w = 0; w < nw; w++) {
                    wpre[w] = run;
                    run = op.combine(run, wsum[w]);
                }
                *carry = run;
            }
            __syncthreads();
            const S before_in_warp = red_shfl_up(inc, 1);
            S run = wpre[warp];
            if (lane > 0)
                run = op.combine(run, before_in_warp);
            for (int64_t k = lo; k < hi; k++) {
                run = op.combine(run, op.element(base + k, k));
                op.store(base + k, run);
            }
            __syncthreads(); // wsum, wpre and carry are rewritten by the next tile
        }
    }
}

template <class Op>
static ops_status
scan_launch(const char *op, const Op &fn, int64_t outer, int64_t len, int64_t inner, int dev)
{
    const int64_t lines = outer * inner;
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (inner == 1 && len >= SCAN_BLOCK_MIN_LEN && lines < SCAN_BLOCK_MAX_LINES) {
        const size_t smem = (2 * RED_BLOCK_THREADS / 32 + 1) * sizeof(typename Op::state_t);
        OPS_LAUNCH_COOP((scan_block_kernel<Op>), (unsigned)lines, RED_BLOCK_THREADS, smem, stream, fn, lines, len);
    } else {
        const int64_t blocks = red_ceil_div(lines, RED_BLOCK_THREADS);
        const unsigned grid = (unsigned)(blocks < RED_MAX_GRID ? blocks : RED_MAX_GRID);
        OPS_LAUNCH((scan_line_kernel<Op>), grid, RED_BLOCK_THREADS, 0, stream, fn, lines, len, inner);
    }
    return ops_cuda_check_launch(op);
}

template <typename T>
static ops_status
cumscan_typed(const char *op, bool prod, const void *src, int64_t outer, int64_t len, int64_t inner, void *dst,
              int dev)
{
    const T *const in = static_cast<const T *>(src);
    T *const out = static_cast<T *>(dst);
    if (prod)
        return scan_launch(op, scan_arith_op<T, true>{in, out}, outer, len, inner, dev);
    return scan_launch(op, scan_arith_op<T, false>{in, out}, outer, len, inner, dev);
}

template <typename T>
static ops_status
cumext_typed(const char *op, bool is_max, const void *src, int64_t outer, int64_t len, int64_t inner, void *dst,
             int64_t *idx, int dev)
{
    const T *const in = static_cast<const T *>(src);
    T *const out = static_cast<T *>(dst);
    if (is_max)
        return scan_launch(op, scan_ext_op<T, true>{in, out, idx}, outer, len, inner, dev);
    return scan_launch(op, scan_ext_op<T, false>{in, out, idx}, outer, len, inner, dev);
}

// Calls LAUNCH<T>(ARGS) for src's dtype T (every dtype but complex).
#define SCAN_DISPATCH(op, dt, LAUNCH, ...)                                                             \
    switch (dt) {                                                                                      \
    case OPS_BOOL: return LAUNCH<bool>(__VA_ARGS__);                                                   \
    case OPS_UINT8: return LAUNCH<uint8_t>(__VA_ARGS__);                                               \
    case OPS_INT8: return LAUNCH<int8_t>(__VA_ARGS__);                                                 \
    case OPS_INT16: return LAUNCH<int16_t>(__VA_ARGS__);                                               \
    case OPS_INT32: return LAUNCH<int32_t>(__VA_ARGS__);                                               \
    case OPS_INT64: return LAUNCH<int64_t>(__VA_ARGS__);                                               \
    case OPS_FLOAT16: return LAUNCH<ops_half>(__VA_ARGS__);                                            \
    case OPS_BFLOAT16: return LAUNCH<ops_bfloat16>(__VA_ARGS__);                                       \
    case OPS_FLOAT32: return LAUNCH<float>(__VA_ARGS__);                                               \
    case OPS_FLOAT64: return LAUNCH<double>(__VA_ARGS__);                                              \
    default: return ops_fail(OPS_ERR_DTYPE, "%s: unsupported dtype %s on CUDA", op, ops_dtype_name(dt)); \
    }

extern "C" ops_status
ops_cuda_cumscan_run(const char *op, bool prod, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                     ops_tensor *res)
{
    const int dev = ops_tensor_device(src).index;
    if (outer * len * inner == 0)
        return OPS_OK;
    ops_cuda_device_guard guard(dev);
    SCAN_DISPATCH(op, src->dtype, cumscan_typed, op, prod, ops_tensor_data_ptr(src), outer, len, inner,
                  ops_tensor_data_ptr(res), dev)
}

extern "C" ops_status
ops_cuda_cumext_run(const char *op, bool is_max, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                    ops_tensor *res, ops_tensor *idx)
{
    const int dev = ops_tensor_device(src).index;
    if (outer * len * inner == 0)
        return OPS_OK;
    ops_cuda_device_guard guard(dev);
    SCAN_DISPATCH(op, src->dtype, cumext_typed, op, is_max, ops_tensor_data_ptr(src), outer, len, inner,
                  ops_tensor_data_ptr(res), static_cast<int64_t *>(ops_tensor_data_ptr(idx)), dev)
}

// ---- entry points (reduce.c's driver; see reduce.cu) ------------------------------------------

extern "C" ops_tensor *
cumsum_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return cumsum_cpu(self, dim, dtype);
}

extern "C" ops_status
cumsum_out_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return cumsum_out_cpu(self, dim, dtype, out);
}

extern "C" ops_tensor *
cumprod_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return cumprod_cpu(self, dim, dtype);
}

extern "C" ops_status
cumprod_out_cuda(const ops_tensor *self, int64_t dim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return cumprod_out_cpu(self, dim, dtype, out);
}

extern "C" ops_status
cumsum_inplace_cuda(ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return cumsum_inplace_cpu(self, dim, dtype);
}

extern "C" ops_status
cumprod_inplace_cuda(ops_tensor *self, int64_t dim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return cumprod_inplace_cpu(self, dim, dtype);
}

extern "C" ops_status
cummax_cuda(const ops_tensor *self, int64_t dim, ops_tensor **values, ops_tensor **indices)
{
    RED_ON_DEVICE_OF(self);
    return cummax_cpu(self, dim, values, indices);
}

extern "C" ops_status
cummax_out_cuda(const ops_tensor *self, int64_t dim, ops_tensor *values, ops_tensor *indices)
{
    RED_ON_DEVICE_OF(self);
    return cummax_out_cpu(self, dim, values, indices);
}

extern "C" ops_status
cummin_cuda(const ops_tensor *self, int64_t dim, ops_tensor **values, ops_tensor **indices)
{
    RED_ON_DEVICE_OF(self);
    return cummin_cpu(self, dim, values, indices);
}

extern "C" ops_status
cummin_out_cuda(const ops_tensor *self, int64_t dim, ops_tensor *values, ops_tensor *indices)
{
    RED_ON_DEVICE_OF(self);
    return cummin_out_cpu(self, dim, values, indices);
}


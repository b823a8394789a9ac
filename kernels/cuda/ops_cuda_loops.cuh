/* The device side of the iterator contract (runtime/dispatch/ops_iter.h): the generic elementwise
 * launcher every elementwise CUDA kernel goes through.
 *
 *     ops_status
 *     mul_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
 *     {
 *         OPS_DISPATCH_ALL(it->common_dtype, "mul", {
 *             return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>(
 *                 it, [] __host__ __device__(opmath_t x, opmath_t y) -> opmath_t { return x * y; });
 *         });
 *         return OPS_OK;
 *     }
 *
 * ops_cuda_elementwise<out_t, in_t...>(it, f) writes f(x, y, ...) to every element of
 * operand 0, the inputs being operands 1.. (as many as in_t, at most three) loaded as
 * their opmath values (float for ops_half/ops_bfloat16); f's result is converted to
 * out_t's opmath type and stored.  With no in_t it is the nullary form (fill).  The
 * types are the storage types the iterator gives (it->dtypes), checked on entry.
 *
 * What it does with the iterator's loop geometry:
 *  - operands in it->host_scalars are host memory holding one value: their bytes are
 *    copied into the kernel's arguments, never read through the pointer on the device;
 *  - when every other operand is contiguous, a 1-D kernel with 64-bit indices that
 *    moves V elements of each operand per access, V the widest that
 *    ops_launch_vec_width allows for every pointer (at most 16 bytes and 8 elements:
 *    8 for 1- and 2-byte types, 4 for 4-byte ones, 2 for 8-byte ones; down to 1 for a
 *    misaligned slice), the tail element by element; grid-stride;
 *  - otherwise ops_offset_calc32 maps each linear index to the operands' offsets,
 *    after ops_launch_split_32bit cut the iteration into pieces whose offsets fit
 *    int32 (each piece's base added to the pointers in 64 bits on the host).
 * Everything runs on the device's current stream under a device guard; a failed
 * launch is OPS_ERR_RUNTIME naming it->op.  f must be a functor or a
 * __host__ __device__ lambda; it is copied into the kernel's arguments.
 *
 * Rule for f: same arithmetic as the CPU kernel, so take the scalar functions from
 * ops_scalar_math.h (or another shared header), never rewrite them here. */
#ifndef OPS_CUDA_LOOPS_CUH
#define OPS_CUDA_LOOPS_CUH

#include <string.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "cuda_common.h"
#include "ops_cuda_launch.h"
#include "ops_dispatch.h"

/* Blocks per launch at most; past that the kernels grid-stride.  Large enough to
 * fill any current GPU several times over. */
#define OPS_CUDA_MAX_GRID 4096

/* ---- operands in kernel arguments ----------------------------------------------- */

/* The pointers of one launch, with the values of host-scalar operands carried by
 * value (a kernel argument lives in memory the device reads). */
struct ops_cuda_operands {
    char *ptr[OPS_LAUNCH_MAX_ARGS];
    /* storage bytes of each host-scalar operand (at most 8 bytes: int64/float64) */
    alignas(8) unsigned char scalar[OPS_LAUNCH_MAX_ARGS][8];
    unsigned scalar_mask; /* bit a: operand a is in scalar[a], stride 0 */
};

/* Operand a's element at byte offset off (0 for a scalar). */
template <typename T>
static __device__ inline typename ops_opmath<T>::type
ops_cuda_load(const ops_cuda_operands &ops, int a, int64_t off)
{
    if ((ops.scalar_mask >> a) & 1u)
        return ops_load(reinterpret_cast<const T *>(ops.scalar[a]));
    return ops_load(reinterpret_cast<const T *>(ops.ptr[a] + off));
}

/* f's result stored as out_t (converted to out_t's opmath type first, as the CPU's
 * OPS_STORE converts its argument). */
template <typename out_t, typename R>
static __device__ inline void
ops_cuda_store(out_t *p, R v)
{
    ops_store(p, static_cast<typename ops_opmath<out_t>::type>(v));
}

/* ---- a minimal tuple for device code (a pack of vectors, one per input) ---------- */

template <size_t I, typename T> struct ops_cuda_leaf {
    T value;
};
template <typename Seq, typename... T> struct ops_cuda_tuple_impl;
template <size_t... I, typename... T>
struct ops_cuda_tuple_impl<std::index_sequence<I...>, T...> : ops_cuda_leaf<I, T>... {
};
template <typename... T>
using ops_cuda_tuple = ops_cuda_tuple_impl<std::index_sequence_for<T...>, T...>;
template <size_t I, typename T>
static __device__ inline T &
ops_cuda_get(ops_cuda_leaf<I, T> &l)
{
    return l.value;
}

/* V elements of T, aligned as one V * sizeof(T)-byte access. */
template <typename T, int V> struct alignas(sizeof(T) * V) ops_cuda_vec {
    T v[V];
};

/* ---- kernels -------------------------------------------------------------------- */

/* Element i of a 32-bit-indexable iteration: offsets from the calculator. */
template <typename out_t, typename... in_t, typename F, size_t... I>
static __device__ inline void
ops_cuda_strided_one(const ops_cuda_operands &ops, const ops_offset_calc32 &oc, uint32_t i, F &f,
                     std::index_sequence<I...>)
{
    int32_t off[OPS_LAUNCH_MAX_ARGS];
    ops_offset_calc32_get(&oc, i, off);
    ops_cuda_store(reinterpret_cast<out_t *>(ops.ptr[0] + (int64_t)off[0] * (int64_t)sizeof(out_t)),
                   f(ops_cuda_load<in_t>(ops, (int)I + 1, (int64_t)off[I + 1] * (int64_t)sizeof(in_t))...));
}

template <typename F, typename out_t, typename... in_t>
__global__ void
ops_cuda_strided_kernel(int32_t n, ops_offset_calc32 oc, ops_cuda_operands ops, F f)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        ops_cuda_strided_one<out_t, in_t...>(ops, oc, (uint32_t)i, f, std::index_sequence_for<in_t...>{});
}

/* Element i of a contiguous iteration. */
template <typename out_t, typename... in_t, typename F, size_t... I>
static __device__ inline void
ops_cuda_contig_one(const ops_cuda_operands &ops, int64_t i, F &f, std::index_sequence<I...>)
{
    ops_cuda_store(reinterpret_cast<out_t *>(ops.ptr[0]) + i,
                   f(ops_cuda_load<in_t>(ops, (int)I + 1, i * (int64_t)sizeof(in_t))...));
}

template <int V, typename T>
static __device__ inline void
ops_cuda_vec_load(ops_cuda_vec<T, V> &dst, const ops_cuda_operands &ops, int a, int64_t v)
{
    if ((ops.scalar_mask >> a) & 1u) {
        const T x = *reinterpret_cast<const T *>(ops.scalar[a]);
        for (int j = 0; j < V; j++)
            dst.v[j] = x;
    } else {
        dst = reinterpret_cast<const ops_cuda_vec<T, V> *>(ops.ptr[a])[v];
    }
}

/* V elements starting at element v * V: one vector access per operand (a scalar
 * operand is repeated instead of read). */
template <int V, typename out_t, typename... in_t, typename F, size_t... I>
static __device__ inline void
ops_cuda_contig_vec(const ops_cuda_operands &ops, int64_t v, F &f, std::index_sequence<I...>)
{
    ops_cuda_tuple<ops_cuda_vec<in_t, V>...> in;
    (void)in;
    (ops_cuda_vec_load<V>(ops_cuda_get<I>(in), ops, (int)I + 1, v), ...);
    ops_cuda_vec<out_t, V> out;
    for (int j = 0; j < V; j++)
        ops_cuda_store(&out.v[j], f(ops_load(&ops_cuda_get<I>(in).v[j])...));
    reinterpret_cast<ops_cuda_vec<out_t, V> *>(ops.ptr[0])[v] = out;
}

template <int V, typename F, typename out_t, typename... in_t>
__global__ void
ops_cuda_contig_kernel(int64_t n, ops_cuda_operands ops, F f)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nvec = n / V;
    if (V > 1) {
        for (int64_t v = first; v < nvec; v += step)
            ops_cuda_contig_vec<V, out_t, in_t...>(ops, v, f, std::index_sequence_for<in_t...>{});
    }
    for (int64_t i = (V > 1 ? nvec * V : 0) + first; i < n; i += step)
        ops_cuda_contig_one<out_t, in_t...>(ops, i, f, std::index_sequence_for<in_t...>{});
}

/* ---- host side ------------------------------------------------------------------ */

/* What the split callback needs to launch one piece. */
template <typename F> struct ops_cuda_launch_ctx {
    const char *op;
    cudaStream_t stream;
    const ops_cuda_operands *ops;
    const size_t *itemsize;
    F *f;
    ops_status status;
};

template <typename F, typename out_t, typename... in_t>
static int
ops_cuda_launch_piece(const ops_launch_iter *piece, void *vctx)
{
    ops_cuda_launch_ctx<F> *ctx = static_cast<ops_cuda_launch_ctx<F> *>(vctx);
    ops_offset_calc32 oc;
    ops_offset_calc32_init(&oc, piece); /* fits: the split made sure */
    ops_cuda_operands ops = *ctx->ops;
    for (int a = 0; a < piece->nargs; a++)
        if (!((ops.scalar_mask >> a) & 1u))
            ops.ptr[a] += piece->base[a] * (int64_t)ctx->itemsize[a];
    const int64_t n = ops_launch_numel(piece);
    const ops_launch_config cfg =
        ops_launch_config_1d(n, OPS_LAUNCH_BLOCK, OPS_LAUNCH_ELEMS_PER_THREAD, OPS_CUDA_MAX_GRID);
    if (cfg.grid == 0)
        return 0;
    auto kernel = ops_cuda_strided_kernel<F, out_t, in_t...>;
    OPS_LAUNCH(kernel, cfg.grid, cfg.block, 0, ctx->stream, (int32_t)n, oc, ops, *ctx->f);
    ctx->status = ops_cuda_check_launch(ctx->op);
    return ctx->status != OPS_OK;
}

template <int V, typename F, typename out_t, typename... in_t>
static ops_status
ops_cuda_launch_contig(const char *op, cudaStream_t stream, int64_t n, const ops_cuda_operands &ops, F &f)
{
    const ops_launch_config cfg =
        ops_launch_config_1d(n, OPS_LAUNCH_BLOCK, OPS_LAUNCH_ELEMS_PER_THREAD, OPS_CUDA_MAX_GRID);
    auto kernel = ops_cuda_contig_kernel<V, F, out_t, in_t...>;
    OPS_LAUNCH(kernel, cfg.grid, cfg.block, 0, stream, n, ops, f);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* See the file comment. */
template <typename out_t, typename... in_t, typename F>
static ops_status
ops_cuda_elementwise(ops_iter *it, F f)
{
    constexpr int nin = (int)sizeof...(in_t);
    static_assert(nin + 1 <= OPS_LAUNCH_MAX_ARGS, "ops_cuda_elementwise: at most three inputs");
    const char *op = it->op != NULL ? it->op : "elementwise";
    const size_t itemsize[OPS_LAUNCH_MAX_ARGS] = {sizeof(out_t), sizeof(in_t)...};
    if (it->noperands != nin + 1 || it->noutputs > 1 || (it->host_scalars & 1u))
        return ops_fail(OPS_ERR_RUNTIME, "%s: the CUDA kernel expects one output and %d input(s), the iterator has %d operand(s)",
                        op, nin, it->noperands);
    for (int a = 0; a <= nin; a++)
        if (ops_dtype_itemsize(it->dtypes[a]) != itemsize[a])
            return ops_fail(OPS_ERR_RUNTIME, "%s: the CUDA kernel's operand %d is not of dtype %s", op, a,
                            ops_dtype_name(it->dtypes[a]));
    if (it->numel == 0)
        return OPS_OK;
    const int dev = it->device.index;
    ops_status st = ops_cuda_check_device(op, dev);
    if (st != OPS_OK)
        return st;
    ops_cuda_device_guard guard(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);

    /* The launch geometry: row-major (the iterator's dim 0 is the innermost), strides
     * in elements. */
    ops_launch_iter li;
    memset(&li, 0, sizeof li);
    li.ndim = it->ndim;
    li.nargs = nin + 1;
    ops_cuda_operands ops;
    memset(&ops, 0, sizeof ops);
    for (int a = 0; a <= nin; a++) {
        const bool scalar = (it->host_scalars >> a) & 1u;
        if (scalar) {
            memcpy(ops.scalar[a], it->data[a], itemsize[a]);
            ops.scalar_mask |= 1u << a;
        } else {
            ops.ptr[a] = it->data[a];
        }
        for (int d = 0; d < it->ndim; d++)
            li.strides[a][it->ndim - 1 - d] = scalar ? 0 : it->loop_strides[d][a] / (int64_t)itemsize[a];
    }
    for (int d = 0; d < it->ndim; d++)
        li.sizes[it->ndim - 1 - d] = it->loop_shape[d];
    ops_launch_coalesce(&li);
    const int64_t n = ops_launch_numel(&li);

    bool contiguous = li.ndim == 1;
    for (int a = 0; a <= nin && contiguous; a++)
        contiguous = ((ops.scalar_mask >> a) & 1u) || li.strides[a][0] == 1;
    if (contiguous) {
        int vec = 8;
        for (int a = 0; a <= nin; a++) {
            if ((ops.scalar_mask >> a) & 1u)
                continue;
            const void *p = ops.ptr[a];
            const int w = ops_launch_vec_width(&p, 1, itemsize[a]);
            vec = w < vec ? w : vec;
        }
        /* 8 elements only where every operand has at most 2 bytes (a 16-byte access
         * at most), so wider types do not instantiate a kernel they cannot use. */
        constexpr size_t widest = std::max({sizeof(out_t), sizeof(in_t)...});
        if constexpr (widest <= 2) {
            if (vec >= 8)
                return ops_cuda_launch_contig<8, F, out_t, in_t...>(op, stream, n, ops, f);
        }
        if (vec >= 4)
            return ops_cuda_launch_contig<4, F, out_t, in_t...>(op, stream, n, ops, f);
        if (vec >= 2)
            return ops_cuda_launch_contig<2, F, out_t, in_t...>(op, stream, n, ops, f);
        return ops_cuda_launch_contig<1, F, out_t, in_t...>(op, stream, n, ops, f);
    }
    ops_cuda_launch_ctx<F> ctx = {op, stream, &ops, itemsize, &f, OPS_OK};
    ops_launch_split_32bit(&li, ops_cuda_launch_piece<F, out_t, in_t...>, &ctx);
    return ctx.status;
}

/* ---- checks over one input's data ------------------------------------------------
 *
 * ops_cuda_any<T>(it, a, pred, &found): whether pred(x) holds for some element x of
 * input operand a (its opmath value), for validation that needs the data before a
 * kernel writes anything (integer division by zero).  Runs a checking kernel over the
 * operand's own strides (split as the launcher splits), which sets a flag in device
 * memory; the host reads it back, so this call synchronizes the stream.  A host-scalar
 * operand is tested on the host. */

template <typename T, typename P>
__global__ void
ops_cuda_any_kernel(int32_t n, ops_offset_calc32 oc, const char *p, P pred, int32_t *flag)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int32_t off[OPS_LAUNCH_MAX_ARGS];
        ops_offset_calc32_get(&oc, (uint32_t)i, off);
        /* every finder stores the same 1: no atomic needed */
        if (pred(ops_load(reinterpret_cast<const T *>(p + (int64_t)off[0] * (int64_t)sizeof(T)))))
            *flag = 1;
    }
}

template <typename P> struct ops_cuda_any_ctx {
    const char *op;
    cudaStream_t stream;
    const char *ptr;
    size_t itemsize;
    P *pred;
    int32_t *flag;
    ops_status status;
};

template <typename T, typename P>
static int
ops_cuda_any_piece(const ops_launch_iter *piece, void *vctx)
{
    ops_cuda_any_ctx<P> *ctx = static_cast<ops_cuda_any_ctx<P> *>(vctx);
    ops_offset_calc32 oc;
    ops_offset_calc32_init(&oc, piece);
    const int64_t n = ops_launch_numel(piece);
    const ops_launch_config cfg =
        ops_launch_config_1d(n, OPS_LAUNCH_BLOCK, OPS_LAUNCH_ELEMS_PER_THREAD, OPS_CUDA_MAX_GRID);
    if (cfg.grid == 0)
        return 0;
    auto kernel = ops_cuda_any_kernel<T, P>;
    OPS_LAUNCH(kernel, cfg.grid, cfg.block, 0, ctx->stream, (int32_t)n, oc,
               ctx->ptr + piece->base[0] * (int64_t)ctx->itemsize, *ctx->pred, ctx->flag);
    ctx->status = ops_cuda_check_launch(ctx->op);
    return ctx->status != OPS_OK;
}

template <typename T, typename P>
static ops_status
ops_cuda_any(const ops_iter *it, int a, P pred, bool *found)
{
    const char *op = it->op != NULL ? it->op : "elementwise";
    *found = false;
    if (ops_dtype_itemsize(it->dtypes[a]) != sizeof(T))
        return ops_fail(OPS_ERR_RUNTIME, "%s: the CUDA check's operand %d is not of dtype %s", op, a,
                        ops_dtype_name(it->dtypes[a]));
    if (it->numel == 0)
        return OPS_OK;
    if ((it->host_scalars >> a) & 1u) {
        *found = pred(ops_load(reinterpret_cast<const T *>(it->data[a])));
        return OPS_OK;
    }
    const int dev = it->device.index;
    ops_status st = ops_cuda_check_device(op, dev);
    if (st != OPS_OK)
        return st;
    ops_cuda_device_guard guard(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);

    ops_launch_iter li;
    memset(&li, 0, sizeof li);
    li.ndim = it->ndim;
    li.nargs = 1;
    for (int d = 0; d < it->ndim; d++) {
        li.sizes[it->ndim - 1 - d] = it->loop_shape[d];
        li.strides[0][it->ndim - 1 - d] = it->loop_strides[d][a] / (int64_t)sizeof(T);
    }
    ops_launch_coalesce(&li);

    /* the flag: one int32 from the device's cache, zeroed on the stream */
    ops_tensor *flag_t = ops_tensor_new(op, 0, NULL, NULL, OPS_INT32, it->device);
    if (flag_t == NULL)
        return ops_last_status();
    int32_t *flag = static_cast<int32_t *>(ops_tensor_data_ptr(flag_t));
    cudaError_t err = cudaMemsetAsync(flag, 0, sizeof(int32_t), stream);
    if (err != cudaSuccess) {
        ops_tensor_release(flag_t);
        return ops_cuda_fail(op, "cudaMemsetAsync", err);
    }
    ops_cuda_any_ctx<P> ctx = {op, stream, it->data[a], sizeof(T), &pred, flag, OPS_OK};
    ops_launch_split_32bit(&li, ops_cuda_any_piece<T, P>, &ctx);
    int32_t h = 0;
    if (ctx.status == OPS_OK) {
        err = cudaMemcpyAsync(&h, flag, sizeof h, cudaMemcpyDeviceToHost, stream);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess)
            ctx.status = ops_cuda_fail(op, "reading the check's result", err);
    }
    ops_tensor_release(flag_t);
    *found = h != 0;
    return ctx.status;
}

#endif /* OPS_CUDA_LOOPS_CUH */

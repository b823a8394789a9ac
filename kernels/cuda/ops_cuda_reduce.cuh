// The CUDA reduction launcher (reduce.cu, softmax.cu): geometry, block reductions
// and the multi-pass driver.
//
// A reduction has nout outputs, each over nred elements.  The input's dims split into
// kept dims (output o's base offset, row-major over them) and reduced dims (reduced
// element r's offset from that base, row-major, so r is the position PyTorch's
// argmax reports); both lists are coalesced, size-1 dims dropped, and read with any
// strides.  Each output's r-range may be cut into nsplit chunks, giving
// nout * nsplit work items (item i = c * nout + o):
//  - row kernel: bx threads (a warp, or the whole block) share one item, strided
//    over r (coalesced when the reduced dim is the fastest one), then a warp-shuffle
//    and shared-memory block reduction;
//  - column kernel: one thread per item walks its range in order (coalesced when
//    the outputs are the fastest dim, e.g. a sum over dim 0);
//  - when the items are too few to fill the device (a full sum of 2^24 elements),
//    the items write partial accumulators to a device buffer, which is itself
//    reduced the same way (a reduction of nout outputs over nsplit partials), until
//    one pass finishes: no atomics, and the same result for the same launch.
// An op is a functor: acc_t, identity(), project(x, r, o) from an input element,
// combine(a, b) (associative and commutative: ties compare indices, not order),
// finish(o, acc) that writes the results.
#ifndef OPS_CUDA_REDUCE_CUH
#define OPS_CUDA_REDUCE_CUH

#include <type_traits>

#include "cuda_common.h"
#include "kernels/ops_reduce_common.h"
#include "ops_dispatch.h"

#define RED_BLOCK_THREADS 256
// Work the launcher aims to give the device before it splits a reduction: blocks in
// the row kernel and threads in the column kernel (H100: 132 SMs x 2048 threads).
#define RED_TARGET_BLOCKS 1024
#define RED_TARGET_THREADS (RED_TARGET_BLOCKS * RED_BLOCK_THREADS)
// A split leaves each thread at least this many elements of a chunk.
#define RED_MIN_PER_THREAD 32
#define RED_MAX_GRID 65535

// ---- geometry -----------------------------------------------------------------------

// An index space: index -> element offset, row-major over n dims (dim n-1 fastest).
struct red_dims {
    int n;
    int64_t size[OPS_MAX_DIMS];
    int64_t stride[OPS_MAX_DIMS];
};

__host__ __device__ inline int64_t
red_offset(const red_dims &d, int64_t i)
{
    if (d.n == 1) // the common case: one coalesced dim, no division
        return i * d.stride[0];
    int64_t off = 0;
    for (int k = d.n - 1; k > 0; k--) {
        const int64_t q = i / d.size[k];
        off += (i - q * d.size[k]) * d.stride[k];
        i = q;
    }
    return d.n > 0 ? off + i * d.stride[0] : 0;
}

// Appends a dim, dropping size 1 and merging with the previous dim when the strides
// chain (which keeps the row-major order of the indices).
inline void
red_dims_push(red_dims &d, int64_t size, int64_t stride)
{
    if (size == 1)
        return;
    if (d.n > 0 && d.stride[d.n - 1] == stride * size) {
        d.size[d.n - 1] *= size;
        d.stride[d.n - 1] = stride;
        return;
    }
    d.size[d.n] = size;
    d.stride[d.n] = stride;
    d.n++;
}

struct red_geom {
    int64_t nout, nred;
    red_dims kept, red;
};

// The geometry of a reduction of t over the dims marked in mask.
inline red_geom
red_geom_make(const ops_tensor *t, const bool *mask)
{
    red_geom g;
    g.nout = 1;
    g.nred = 1;
    g.kept.n = 0;
    g.red.n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (mask[d]) {
            g.nred *= t->sizes[d];
            red_dims_push(g.red, t->sizes[d], t->strides[d]);
        } else {
            g.nout *= t->sizes[d];
            red_dims_push(g.kept, t->sizes[d], t->strides[d]);
        }
    }
    return g;
}

// nout outputs over nred values laid out as part[r * nout + o] (a split's partials).
inline red_geom
red_geom_partials(int64_t nout, int64_t nsplit)
{
    red_geom g;
    g.nout = nout;
    g.nred = nsplit;
    g.kept.n = 0;
    g.red.n = 0;
    red_dims_push(g.kept, nout, 1);
    red_dims_push(g.red, nsplit, nout);
    return g;
}

// ---- math picked by type (float or double) -------------------------------------------

__host__ __device__ inline float red_exp(float x) { return expf(x); }
__host__ __device__ inline double red_exp(double x) { return exp(x); }
__host__ __device__ inline float red_log(float x) { return logf(x); }
__host__ __device__ inline double red_log(double x) { return log(x); }
__host__ __device__ inline float red_sqrt(float x) { return sqrtf(x); }
__host__ __device__ inline double red_sqrt(double x) { return sqrt(x); }
__host__ __device__ inline float red_abs(float x) { return fabsf(x); }
__host__ __device__ inline double red_abs(double x) { return fabs(x); }
__host__ __device__ inline float red_pow(float x, float y) { return powf(x, y); }
__host__ __device__ inline double red_pow(double x, double y) { return pow(x, y); }

template <typename T> struct red_is_floating { static constexpr bool value = false; };
template <> struct red_is_floating<ops_half> { static constexpr bool value = true; };
template <> struct red_is_floating<ops_bfloat16> { static constexpr bool value = true; };
template <> struct red_is_floating<float> { static constexpr bool value = true; };
template <> struct red_is_floating<double> { static constexpr bool value = true; };

// The lowest and highest values of an integer (or bool) type: amax/amin identities.
template <typename T> struct red_int_limits {
    static constexpr T lowest = (T)(T(-1) < T(0) ? (T)((uint64_t)1 << (8 * sizeof(T) - 1)) : T(0));
    static constexpr T highest = (T)~lowest;
};
template <> struct red_int_limits<bool> {
    static constexpr bool lowest = false;
    static constexpr bool highest = true;
};

// ---- warp and block reductions -------------------------------------------------------

// __shfl_down_sync of any trivially copyable value, 32 bits at a time.
template <typename T>
__device__ inline T
red_shfl_down(const T &v, unsigned delta)
{
    constexpr int words = (int)((sizeof(T) + 3) / 4);
    int w[words];
    T r = v;
    memcpy(w, &v, sizeof(T));
    for (int k = 0; k < words; k++)
        w[k] = __shfl_down_sync(0xffffffffu, w[k], delta);
    memcpy(&r, w, sizeof(T));
    return r;
}

// __shfl_up_sync likewise (scans).
template <typename T>
__device__ inline T
red_shfl_up(const T &v, unsigned delta)
{
    constexpr int words = (int)((sizeof(T) + 3) / 4);
    int w[words];
    T r = v;
    memcpy(w, &v, sizeof(T));
    for (int k = 0; k < words; k++)
        w[k] = __shfl_up_sync(0xffffffffu, w[k], delta);
    memcpy(&r, w, sizeof(T));
    return r;
}

// Lane 0 of each warp gets the combination of the warp's 32 values.
template <class Op>
__device__ inline typename Op::acc_t
red_warp_reduce(const Op &op, typename Op::acc_t a)
{
    for (unsigned off = 16; off > 0; off >>= 1)
        a = op.combine(a, red_shfl_down(a, off));
    return a;
}

// The combination over each row of the block (threads with the same threadIdx.y;
// blockDim.x a multiple of 32), in the row's thread x = 0.  Every thread of the block
// must call it; smem holds blockDim.x / 32 * blockDim.y values.  Ends with a barrier,
// so smem may be reused at once.
template <class Op>
__device__ inline typename Op::acc_t
red_block_reduce(const Op &op, typename Op::acc_t a, typename Op::acc_t *smem)
{
    a = red_warp_reduce(op, a);
    if (blockDim.x == 32) // a warp per row: done (uniform over the block)
        return a;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0)
        smem[threadIdx.y * nw + warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < nw ? smem[threadIdx.y * nw + lane] : op.identity();
        a = red_warp_reduce(op, a);
    }
    __syncthreads();
    return a;
}

// ---- sources: where an item's values come from ------------------------------------------

// The op's input elements, projected.
template <typename T> struct red_src_input {
    const T *p;
    template <class Op>
    __device__ typename Op::acc_t load(const Op &op, int64_t off, int64_t r, int64_t o) const
    {
        return op.project(ops_load(p + off), r, o);
    }
};

// A previous pass's partial accumulators.
template <typename A> struct red_src_partial {
    const A *p;
    template <class Op>
    __device__ A load(const Op &, int64_t off, int64_t, int64_t) const
    {
        return p[off];
    }
};

// The item's result: a partial into part[i], or the op's finish.
template <class Op>
__device__ inline void
red_item_done(const Op &op, typename Op::acc_t *part, int64_t i, int64_t o, typename Op::acc_t a)
{
    if (part != nullptr)
        part[i] = a;
    else
        op.finish(o, a);
}

// ---- kernels ---------------------------------------------------------------------------

template <class Op, class Src>
__global__ void
red_row_kernel(Op op, Src src, red_geom g, int64_t chunk, int64_t nsplit, typename Op::acc_t *part)
{
    typedef typename Op::acc_t acc_t;
    OPS_SHARED_DYNAMIC(double, red_smem_raw);
    acc_t *const smem = reinterpret_cast<acc_t *>(red_smem_raw);
    const int64_t nitems = g.nout * nsplit, bx = blockDim.x, by = blockDim.y;
    for (int64_t i0 = (int64_t)blockIdx.x * by; i0 < nitems; i0 += (int64_t)gridDim.x * by) {
        const int64_t i = i0 + threadIdx.y;
        const int64_t o = i % g.nout, c = i / g.nout;
        acc_t a = op.identity();
        if (i < nitems) {
            const int64_t base = red_offset(g.kept, o);
            const int64_t lo = c * chunk, hi = lo + chunk < g.nred ? lo + chunk : g.nred;
            int64_t r = lo + threadIdx.x;
            // four independent loads in flight per thread before they are combined
            acc_t a1 = op.identity(), a2 = op.identity(), a3 = op.identity();
            for (; r + 3 * bx < hi; r += 4 * bx) {
                a = op.combine(a, src.load(op, base + red_offset(g.red, r), r, o));
                a1 = op.combine(a1, src.load(op, base + red_offset(g.red, r + bx), r + bx, o));
                a2 = op.combine(a2, src.load(op, base + red_offset(g.red, r + 2 * bx), r + 2 * bx, o));
                a3 = op.combine(a3, src.load(op, base + red_offset(g.red, r + 3 * bx), r + 3 * bx, o));
            }
            for (; r < hi; r += bx)
                a = op.combine(a, src.load(op, base + red_offset(g.red, r), r, o));
            a = op.combine(op.combine(a, a1), op.combine(a2, a3));
        }
        a = red_block_reduce(op, a, smem);
        if (threadIdx.x == 0 && i < nitems)
            red_item_done(op, part, i, o, a);
    }
}

template <class Op, class Src>
__global__ void
red_col_kernel(Op op, Src src, red_geom g, int64_t chunk, int64_t nsplit, typename Op::acc_t *part)
{
    typedef typename Op::acc_t acc_t;
    const int64_t nitems = g.nout * nsplit;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nitems;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = i % g.nout, c = i / g.nout;
        const int64_t base = red_offset(g.kept, o);
        const int64_t lo = c * chunk, hi = lo + chunk < g.nred ? lo + chunk : g.nred;
        acc_t a = op.identity();
        for (int64_t r = lo; r < hi; r++)
            a = op.combine(a, src.load(op, base + red_offset(g.red, r), r, o));
        red_item_done(op, part, i, o, a);
    }
}

// ---- the launch plan ----------------------------------------------------------------------

struct red_config {
    bool row;           // row kernel (else column)
    unsigned bx, by;    // row kernel: threads per item, items per block
    int64_t nsplit;     // chunks per output
    int64_t chunk;      // reduced elements per chunk
    unsigned grid;
};

inline int64_t
red_ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

inline int64_t
red_abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

// Row kernel when the reduced elements are closer together in memory than the outputs
// (and there are enough of them to share), or when there is a single output.
inline red_config
red_plan_launch(const red_geom &g)
{
    red_config c;
    const int64_t rstride = g.red.n > 0 ? red_abs64(g.red.stride[g.red.n - 1]) : 0;
    const int64_t kstride = g.kept.n > 0 ? red_abs64(g.kept.stride[g.kept.n - 1]) : INT64_MAX;
    c.row = g.nred > 1 && (g.nout == 1 || (g.nred >= 64 && rstride <= kstride));
    c.nsplit = 1;
    if (c.row) {
        c.bx = 32;
        while (c.bx < RED_BLOCK_THREADS && (int64_t)c.bx * 2 * 8 <= g.nred)
            c.bx *= 2; // a thread of a row gets 8 elements at least before it widens
        c.by = RED_BLOCK_THREADS / c.bx;
        const int64_t blocks = red_ceil_div(g.nout, c.by);
        if (blocks < RED_TARGET_BLOCKS) {
            const int64_t want = red_ceil_div(RED_TARGET_BLOCKS, blocks);
            const int64_t most = g.nred / ((int64_t)c.bx * RED_MIN_PER_THREAD);
            c.nsplit = want < most ? want : most;
        }
    } else {
        c.bx = RED_BLOCK_THREADS;
        c.by = 1;
        if (g.nout < RED_TARGET_THREADS) {
            const int64_t want = red_ceil_div(RED_TARGET_THREADS, g.nout);
            const int64_t most = g.nred / RED_MIN_PER_THREAD;
            c.nsplit = want < most ? want : most;
        }
    }
    if (c.nsplit < 1)
        c.nsplit = 1;
    c.chunk = c.nsplit > 1 ? red_ceil_div(g.nred, c.nsplit) : g.nred;
    if (c.nsplit > 1)
        c.nsplit = red_ceil_div(g.nred, c.chunk); // no empty chunk
    const int64_t nitems = g.nout * c.nsplit;
    const int64_t grid = c.row ? red_ceil_div(nitems, c.by) : red_ceil_div(nitems, c.bx);
    c.grid = (unsigned)(grid < RED_MAX_GRID ? grid : RED_MAX_GRID);
    return c;
}

// A device buffer of n bytes from the device's caching allocator, held by a tensor
// (released stream-ordered after the kernels queued before the release).
inline ops_tensor *
red_workspace(const char *opname, int device, int64_t nbytes)
{
    ops_device dev;
    dev.type = OPS_CUDA;
    dev.index = device;
    return ops_tensor_new(opname, 1, &nbytes, NULL, OPS_UINT8, dev);
}

// Runs op over g reading src on cuda:device (current) until one pass finishes.
template <class Op, class Src>
ops_status
red_launch(const char *opname, const Op &op, Src src, const red_geom &g, int device)
{
    typedef typename Op::acc_t acc_t;
    if (g.nout == 0)
        return OPS_OK;
    const red_config c = red_plan_launch(g);
    const cudaStream_t stream = ops_cuda_current_stream(device);
    ops_tensor *ws = NULL;
    acc_t *part = nullptr;
    if (c.nsplit > 1) {
        if ((ws = red_workspace(opname, device, g.nout * c.nsplit * (int64_t)sizeof(acc_t))) == NULL)
            return ops_last_status();
        part = static_cast<acc_t *>(ops_tensor_data_ptr(ws));
    }
    if (c.row) {
        const dim3 block(c.bx, c.by);
        const size_t smem = (size_t)(c.bx / 32) * c.by * sizeof(acc_t);
        OPS_LAUNCH_COOP((red_row_kernel<Op, Src>), c.grid, block, smem, stream, op, src, g, c.chunk, c.nsplit, part);
    } else {
        OPS_LAUNCH((red_col_kernel<Op, Src>), c.grid, c.bx, 0, stream, op, src, g, c.chunk, c.nsplit, part);
    }
    ops_status st = ops_cuda_check_launch(opname);
    if (st == OPS_OK && c.nsplit > 1) {
        red_src_partial<acc_t> next;
        next.p = part;
        st = red_launch(opname, op, next, red_geom_partials(g.nout, c.nsplit), device);
    }
    ops_tensor_release(ws);
    return st;
}

// Every reduce.cu / softmax.cu / scan.cu entry point runs on its input's device.
#define RED_ON_DEVICE_OF(t) ops_cuda_device_guard red_guard_(ops_tensor_device(t).index)

// The combination over each row of the block (as red_block_reduce) given to every
// thread of the row.  smem as red_block_reduce's, and one value per row at least.
template <class Op>
__device__ inline typename Op::acc_t
red_row_allreduce(const Op &op, typename Op::acc_t a, typename Op::acc_t *smem)
{
    a = red_block_reduce(op, a, smem);
    if (threadIdx.x == 0)
        smem[threadIdx.y] = a;
    __syncthreads();
    a = smem[threadIdx.y];
    __syncthreads();
    return a;
}

// ---- small ops for block reductions outside the launcher (softmax) -----------------------

template <typename A> struct red_max_nan_op {
    typedef A acc_t;
    __device__ A identity() const { return -INFINITY; }
    __device__ A combine(A a, A b) const { return ops_red_max_nan(a, b); }
};

template <typename A> struct red_add_op {
    typedef A acc_t;
    __device__ A identity() const { return 0; }
    __device__ A combine(A a, A b) const { return a + b; }
};

// ---- the lines of reduce_dim_loop_cuda (reduce.cu) ------------------------------------

// softmax (is_log: log_softmax) along the lines (outer x len x inner, inner apart) of
// the contiguous src into the contiguous res of the same shape and dtype (softmax.cu);
// cumsum (prod: cumprod) likewise (scan.cu).  The CUDA backend's own functions: the
// driver reaches them through the reduce_dim_loop stub (kernels/reduce.h).
extern "C" ops_status ops_cuda_softmax_run(const char *op, bool is_log, const ops_tensor *src, int64_t outer,
                                           int64_t len, int64_t inner, ops_tensor *res);
extern "C" ops_status ops_cuda_cumscan_run(const char *op, bool prod, const ops_tensor *src, int64_t outer,
                                           int64_t len, int64_t inner, ops_tensor *res);

#endif // OPS_CUDA_REDUCE_CUH

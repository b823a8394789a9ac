// Shared by the CUDA indexing and sorting kernels (index.cu, scatter.cu,
// index_advanced.cu, sort.cu): strided geometry on the device, launch shape, device
// scratch, the checking kernel that finds the first out-of-range index, and the
// "compute into a fresh contiguous buffer, then convert" steps the CPU kernels use
// (kernels/cpu/index*.c), so both backends produce the same values and fail alike.
//
// Host code never touches device memory: values the host needs (a bad index, a
// count) come back through cudaMemcpy after a small kernel.  Copies between tensors
// (conversions, out=, in-place writes back) are the runtime's ops_copy_values and
// ops_write_out, which handle CUDA tensors.
#ifndef OPS_INDEX_CUDA_CUH
#define OPS_INDEX_CUDA_CUH

#include <stdint.h>
#include <type_traits>

#include "cuda_common.h"
#include "kernels/index_check.h"
#include "ops_dispatch.h"
#include "kernels/ops_index_math.h"

#define IXC_BLOCK 256
// Grids are capped and kernels grid-stride: enough blocks to fill the device,
// few enough that an emulated launch stays cheap.
#define IXC_MAX_GRID 4096

// A strided operand as the device sees it: sizes and element strides, row-major
// (dim nd-1 fastest).  The storage offset is folded into the pointer passed with it.
struct ixc_geom {
    int nd;
    int64_t sizes[OPS_MAX_DIMS];
    int64_t strides[OPS_MAX_DIMS];
};

// Element offset of the linear-th element (row-major) of g.
OPS_HOST_DEVICE inline int64_t
ixc_off(const ixc_geom &g, int64_t linear)
{
    int64_t off = 0;
    for (int d = g.nd - 1; d >= 0; d--) {
        const int64_t sz = g.sizes[d];
        off += (linear % sz) * g.strides[d];
        linear /= sz;
    }
    return off;
}

// Reads an int32 or int64 index at element offset off.
OPS_HOST_DEVICE inline int64_t
ixc_read_index(const void *p, bool i32, int64_t off)
{
    return i32 ? (int64_t)((const int32_t *)p)[off] : ((const int64_t *)p)[off];
}

// Unsigned type of an element of n bytes: elements move as bits (any dtype).
template <int N> struct ixc_bits;
template <> struct ixc_bits<1> { typedef uint8_t type; };
template <> struct ixc_bits<2> { typedef uint16_t type; };
template <> struct ixc_bits<4> { typedef uint32_t type; };
template <> struct ixc_bits<8> { typedef uint64_t type; };

// Calls f(T()) with T the unsigned type of itemsize bytes.
template <class F>
inline void
ixc_by_size(size_t itemsize, F f)
{
    switch (itemsize) {
    case 1: f(uint8_t()); break;
    case 2: f(uint16_t()); break;
    case 4: f(uint32_t()); break;
    default: f(uint64_t()); break;
    }
}

// ---- host helpers (index.cu) ---------------------------------------------------------

// t's geometry (0-dim: nd 0, one element).
ixc_geom ixc_geom_of(const ops_tensor *t);
// t read broadcast to (nd, shape): stride 0 along the dims t lacks or has as 1.
ixc_geom ixc_geom_bcast(const ops_tensor *t, int nd, const int64_t *shape);
// A contiguous geometry of (nd, shape).
ixc_geom ixc_geom_contig(int nd, const int64_t *shape);
// t's data pointer (storage offset applied).
inline char *
ixc_ptr(const ops_tensor *t)
{
    return (char *)ops_tensor_data_ptr(t);
}
// Blocks for n work items (at least 1, at most IXC_MAX_GRID).
unsigned ixc_grid(int64_t n);
// The device index of a CUDA tensor.
inline int
ixc_dev(const ops_tensor *t)
{
    return t->storage->device.index;
}
inline cudaStream_t
ixc_stream(const ops_tensor *t)
{
    return ops_cuda_current_stream(ixc_dev(t));
}

// The dtype a kernel accumulates dt in (float for float16/bfloat16), as the CPU's.
inline ops_dtype
ixc_opmath_dtype(ops_dtype dt)
{
    return dt == OPS_FLOAT16 || dt == OPS_BFLOAT16 ? OPS_FLOAT32 : dt;
}

// A fresh contiguous tensor on like's device.
ops_tensor *ixc_new(const char *op, const ops_tensor *like, int nd, const int64_t *sizes, ops_dtype dt);
// A fresh contiguous copy of self (shape (nd, shape), self broadcast to it) in dtype dt.
ops_tensor *ixc_clone_as(const char *op, const ops_tensor *self, int nd, const int64_t *shape, ops_dtype dt);
// acc converted to dtype dt: acc itself when it has dt, else a fresh tensor (acc is
// released either way; NULL on failure).
ops_tensor *ixc_convert(const char *op, ops_tensor *acc, ops_dtype dt);
// cudaMemcpy device -> host after the stream's work (the result of a checking or
// counting kernel).
ops_status ixc_read(const char *op, void *dst, const void *src, size_t n);
// n bytes set to byte v on the device.
ops_status ixc_memset(const char *op, const ops_tensor *like, void *p, int v, size_t n);

// The first element (row-major over g's shape, n elements) of an int32/int64 index
// at p whose value is outside [lo, hi): *pos its position (-1 when none), *val its
// value.  A checking kernel records the position with atomicMin; the host reads it
// back, then the value.
ops_status ixc_first_bad(const char *op, const ops_tensor *like, const void *p, bool i32, const ixc_geom &g,
                         int64_t n, int64_t lo, int64_t hi, int64_t *pos, int64_t *val);
// ixc_first_bad over index (its own shape), failing with idx_index_error(kind, value,
// dim, size) on the first bad value: the CUDA loop of the stub idx_check_values
// (kernels/index_check.h), registered in index.cu.
extern "C" ops_status idx_check_values_cuda(const char *op, const ops_tensor *index, int64_t lo, int64_t hi,
                                            idx_err_kind kind, int64_t dim, int64_t size);

// index_select(self, dim, index) on the device (index.cu), dim already wrapped.
ops_tensor *ixc_index_select(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index);

// Exclusive prefix sum of n int64 counts in place on the device (any n); *total gets
// the sum (read back) when not NULL.
ops_status ixc_exclusive_scan(const char *op, const ops_tensor *like, int64_t *d, int64_t n, int64_t *total);

// Scratch device memory of n elements of dtype dt on like's device, released with the
// holder.
struct ixc_buf {
    ops_tensor *t;
    ixc_buf() : t(nullptr) {}
    ~ixc_buf() { ops_tensor_release(t); }
    ixc_buf(const ixc_buf &) = delete;
    ixc_buf &operator=(const ixc_buf &) = delete;
    bool alloc(const char *op, const ops_tensor *like, int64_t n, ops_dtype dt)
    {
        t = ixc_new(op, like, 1, &n, dt);
        return t != nullptr;
    }
    template <class T> T *as() const { return (T *)ixc_ptr(t); }
};

// Releases a tensor at scope exit unless taken.
struct ixc_ref {
    ops_tensor *t;
    explicit ixc_ref(ops_tensor *p = nullptr) : t(p) {}
    ~ixc_ref() { ops_tensor_release(t); }
    ixc_ref(const ixc_ref &) = delete;
    ixc_ref &operator=(const ixc_ref &) = delete;
    ops_tensor *take()
    {
        ops_tensor *p = t;
        t = nullptr;
        return p;
    }
};

// The grid-stride loop of every 1-D kernel here.
#define IXC_FOR(i, n)                                                                               \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

// Launch a plain (no __syncthreads) kernel over n items on like's stream, checked.
#define IXC_LAUNCH(op, like, n, kernel, ...)                                                        \
    do {                                                                                            \
        OPS_LAUNCH(kernel, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(like), __VA_ARGS__);              \
        OPS_CUDA_CHECK_LAUNCH(op);                                                                  \
    } while (0)

// ---- writing values at computed destinations (put, index_put) ----------------------

// What an accumulating write sums S in: its opmath type for floating types (float
// for float16/bfloat16, as the CPU's buffer), int64 for integers and bool (atomics
// exist for it; wrapping sums truncate to the CPU's wrapped result, a nonzero bool
// sum is the CPU's logical or).
template <class S> struct ixc_accum {
    typedef typename ops_opmath<S>::type opm;
    typedef typename std::conditional<std::is_floating_point<opm>::value, opm, int64_t>::type type;
};

__device__ inline void ixc_atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ inline void ixc_atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ inline void
ixc_atomic_add(int64_t *p, int64_t v)
{
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

// The last writer (largest item) of each destination: win[dest(i)] = max i.
template <class D>
__global__ void
ixc_win_kernel(D dest, int64_t n, long long *win)
{
    IXC_FOR(i, n)
    atomicMax(win + dest(i), (long long)i);
}

// Each destination's last writer stores its value: "last write wins" as the CPU's
// sequential loop.
template <class D, class T>
__global__ void
ixc_win_write_kernel(D dest, int64_t n, const long long *win, T *r, const T *src, ixc_geom sg)
{
    IXC_FOR(i, n)
    {
        const int64_t k = dest(i);
        if (win[k] == i)
            r[k] = src[ixc_off(sg, i)];
    }
}

template <class D, class S, class A>
__global__ void
ixc_accum_kernel(D dest, int64_t n, A *acc, const S *src, ixc_geom sg)
{
    IXC_FOR(i, n)
    ixc_atomic_add(acc + dest(i), (A)ops_load(src + ixc_off(sg, i)));
}

// r (a fresh contiguous tensor holding self's values, taken over) gets n values of src,
// item i read at sg.off(i), at offsets dest(i): stored (the last write in item order
// wins) or added.  *res: the result in r's dtype, or NULL with the error set.
template <class D>
ops_status
ixc_put_values(const char *op, ops_tensor *r, D dest, int64_t n, const ops_tensor *src, const ixc_geom &sg,
               bool accumulate, ops_tensor **res)
{
    ixc_ref rr(r);
    *res = NULL;
    if (n == 0) {
        *res = rr.take();
        return OPS_OK;
    }
    if (!accumulate) {
        ixc_buf win;
        if (!win.alloc(op, r, ops_tensor_numel(r), OPS_INT64) ||
            ixc_memset(op, r, win.as<void>(), 0xff, (size_t)ops_tensor_numel(r) * sizeof(int64_t)) != OPS_OK)
            return ops_last_status();
        IXC_LAUNCH(op, r, n, ixc_win_kernel<D>, dest, n, win.as<long long>());
        ixc_by_size(ops_dtype_itemsize(r->dtype), [&](auto tag) {
            typedef decltype(tag) T;
            OPS_LAUNCH((ixc_win_write_kernel<D, T>), ixc_grid(n), IXC_BLOCK, 0, ixc_stream(r), dest, n,
                       (const long long *)win.as<long long>(), (T *)ixc_ptr(r), (const T *)ixc_ptr(src), sg);
        });
        OPS_CUDA_CHECK_LAUNCH(op);
        *res = rr.take();
        return OPS_OK;
    }
    const ops_dtype acc_dt = ops_dtype_is_floating(r->dtype) ? ixc_opmath_dtype(r->dtype) : OPS_INT64;
    ixc_ref acc(ixc_clone_as(op, r, r->ndim, r->sizes, acc_dt));
    if (acc.t == NULL)
        return ops_last_status();
    OPS_DISPATCH_ALL(src->dtype, op, {
        typedef typename ixc_accum<scalar_t>::type A;
        OPS_LAUNCH((ixc_accum_kernel<D, scalar_t, A>), ixc_grid(n), IXC_BLOCK, 0, ixc_stream(r), dest, n,
                   (A *)ixc_ptr(acc.t), (const scalar_t *)ixc_ptr(src), sg);
    });
    OPS_CUDA_CHECK_LAUNCH(op);
    *res = ixc_convert(op, acc.take(), r->dtype);
    return *res != NULL ? OPS_OK : ops_last_status();
}

#endif // OPS_INDEX_CUDA_CUH

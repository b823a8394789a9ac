/* Searching and counting (CUDA): searchsorted, bucketize, bincount, histc.
 *
 * The argument checks are the CPU's (kernels/search_common.h); bincount and histc are
 * the loops of the drivers in kernels/search.c.  Checks on the data
 * (a sorter index out of range, a negative bincount input) and the sizes the result
 * depends on (bincount's largest value, histc's data range) are found by a small
 * kernel that records them in device memory; the host reads them back (a
 * synchronizing copy) and fails with the CPU's message before anything is written.
 *  - searchsorted: one thread per value, the CPU's binary search (same midpoints and
 *    comparisons in opmath), so unsorted boundaries give the CPU's answer too.  A
 *    Scalar value (the .Scalar overloads) is passed by argument, not copied over.
 *  - bincount: atomicAdd per element (float sums in another order than the CPU's,
 *    within rounding).
 *  - histc: bins counted exactly in uint64 with atomics, then stored in the dtype as
 *    the CPU's repeated `h += 1` in that dtype leaves them: the count, saturated at
 *    2^p (p: the dtype's significand bits; 2048 for float16, 256 for bfloat16), where
 *    adding 1 no longer changes the value. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include <type_traits>

#include "cuda_common.h"
#include "ops_cuda_launch.h"
#include "ops_dispatch.h"
#include "ops_kernels_sort_search.h"

#include "kernels/search_common.h"

#define SS_BLOCK 256
#define SS_MAX_GRID 65535

#define SS_GRID_STRIDE(e, total)                                                                                   \
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < (total); e += (int64_t)gridDim.x * blockDim.x)

static ops_launch_config
ss_cfg(int64_t n)
{
    return ops_launch_config_1d(n, SS_BLOCK, 1, SS_MAX_GRID);
}

/* ---- device scratch: values the host reads back ---------------------------------------- */

/* A few int64 slots in device memory, set from the host, read back after the
 * kernels queued so far (cudaMemcpy on the legacy stream waits for them). */
struct ss_scratch {
    const char *op;
    ops_tensor *t = NULL;
    ~ss_scratch() { ops_tensor_release(t); }
    ops_status init(int dev, const int64_t *vals, int64_t n)
    {
        t = ops_tensor_new(op, 1, &n, NULL, OPS_INT64, OPS_DEVICE_CUDA(dev));
        if (t == NULL)
            return ops_last_status();
        const cudaError_t err = cudaMemcpy(ptr(), vals, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice);
        return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemcpy to the device", err);
    }
    int64_t *ptr() const { return (int64_t *)ops_tensor_data_ptr(t); }
    ops_status read(int64_t *vals, int64_t n) const
    {
        const cudaError_t err = cudaMemcpy(vals, ptr(), (size_t)n * sizeof(int64_t), cudaMemcpyDeviceToHost);
        return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemcpy to the host", err);
    }
};

/* self converted to dt, contiguous, on device dev (a new reference; self itself when
 * it already is).  The conversion is the runtime's device copy. */
static ops_tensor *
ss_contig(const char *op, const ops_tensor *self, ops_dtype dt, int dev)
{
    if (self->dtype == dt && ops_tensor_is_contiguous(self) && ops_tensor_device(self).type == OPS_CUDA)
        return ops_tensor_retain(self);
    ops_tensor *t = ops_tensor_new(op, self->ndim, self->sizes, NULL, dt, OPS_DEVICE_CUDA(dev));
    if (t == NULL)
        return NULL;
    if (ops_copy_values(op, t, self) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

static ops_status
ss_zero(const char *op, ops_tensor *t)
{
    const size_t bytes = (size_t)ops_shape_numel(t->ndim, t->sizes) * ops_dtype_itemsize(t->dtype);
    const cudaError_t err =
        cudaMemsetAsync(ops_tensor_data_ptr(t), 0, bytes, ops_cuda_current_stream(ops_tensor_device(t).index));
    return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemsetAsync", err);
}

/* The result r into *result, or copied into out (r released). */
static ops_status
ss_finish(const char *op, ops_tensor *r, ops_tensor *out, ops_tensor **result)
{
    if (out != NULL)
        return ops_write_out(op, r, out);
    *result = r;
    return OPS_OK;
}

/* ---- searchsorted ---------------------------------------------------------------------- */

/* The first position e with sorter[e] outside [0, n), into *bad (atomicMin). */
__global__ void
ss_sorter_check_kernel(const int64_t *sorter, int64_t total, int64_t n, unsigned long long *bad)
{
    SS_GRID_STRIDE(e, total)
    if (sorter[e] < 0 || sorter[e] >= n)
        atomicMin(bad, (unsigned long long)e);
}

/* nv binary searches, value e in row e / per_row (0: row 0) of the boundaries, through
 * sorter when given; v NULL: every value is vs. */
template <typename T>
__global__ void
ss_search_kernel(const T *bd, const int64_t *sorter, int64_t n, const T *v, T vs, int64_t nv, int64_t per_row,
                 bool right, int64_t *o64, int32_t *o32)
{
    SS_GRID_STRIDE(e, nv)
    {
        const int64_t row = per_row > 0 ? e / per_row : 0;
        const T *b = bd + row * n;
        const int64_t *s = sorter != NULL ? sorter + row * n : NULL;
        const auto x = ops_load(v != NULL ? v + e : &vs);
        int64_t lo = 0, hi = n;
        while (lo < hi) {
            const int64_t mid = lo + ((hi - lo) >> 1);
            const auto m = ops_load(b + (s != NULL ? s[mid] : mid));
            if (right ? !(m > x) : !(m >= x))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (o64 != NULL)
            o64[e] = lo;
        else
            o32[e] = (int32_t)lo;
    }
}

template <typename T>
static ops_status
ss_search_launch(const char *op, const ops_tensor *b, const int64_t *sorter, int64_t n, const ops_tensor *v,
                 int64_t nv, int64_t per_row, bool right, ops_tensor *r)
{
    /* a CPU v is a Scalar's one value: passed by argument */
    const bool host = ops_tensor_device(v).type != OPS_CUDA;
    T vs;
    memset(&vs, 0, sizeof vs);
    if (host)
        memcpy(&vs, ops_tensor_data_ptr(v), sizeof vs);
    const bool i32 = r->dtype == OPS_INT32;
    const ops_launch_config c = ss_cfg(nv);
    OPS_LAUNCH(ss_search_kernel<T>, c.grid, c.block, 0, ops_cuda_current_stream(ops_tensor_device(r).index),
               (const T *)ops_tensor_data_ptr(b), sorter, n, host ? (const T *)NULL : (const T *)ops_tensor_data_ptr(v),
               vs, nv, per_row, right, i32 ? (int64_t *)NULL : (int64_t *)ops_tensor_data_ptr(r),
               i32 ? (int32_t *)ops_tensor_data_ptr(r) : (int32_t *)NULL);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

OPS_REGISTER_STUB(search_sorted, CUDA, search_sorted_cuda);

ops_status
search_sorted_cuda(const char *op, const ops_tensor *boundaries, const ops_tensor *self, bool out_int32, bool right,
                   const ops_tensor *sorter, ops_dtype cd, ops_tensor *out, ops_tensor **result)
{
    const int dev = ops_tensor_device(boundaries).index;
    ops_status st;
    if ((st = ops_cuda_check_device(op, dev)) != OPS_OK)
        return st;
    ops_cuda_device_guard guard(dev);
    const int64_t n = boundaries->sizes[boundaries->ndim - 1], vn = ops_shape_numel(self->ndim, self->sizes);
    const bool host_value = ops_tensor_device(self).type != OPS_CUDA;
    ops_tensor *b = NULL, *v = NULL, *s = NULL, *r = NULL;
    ss_scratch bad = {op};
    if (sorter != NULL && ops_shape_numel(sorter->ndim, sorter->sizes) > 0) {
        if ((s = ss_contig(op, sorter, OPS_INT64, dev)) == NULL)
            goto fail;
        const int64_t sn = ops_shape_numel(s->ndim, s->sizes), none = INT64_MAX;
        int64_t first;
        if ((st = bad.init(dev, &none, 1)) != OPS_OK)
            goto done;
        const ops_launch_config c = ss_cfg(sn);
        OPS_LAUNCH(ss_sorter_check_kernel, c.grid, c.block, 0, ops_cuda_current_stream(dev),
                   (const int64_t *)ops_tensor_data_ptr(s), sn, n, (unsigned long long *)bad.ptr());
        if ((st = ops_cuda_check_launch(op)) != OPS_OK || (st = bad.read(&first, 1)) != OPS_OK)
            goto done;
        if (first != INT64_MAX) {
            st = ops_fail(OPS_ERR_INDEX, OPS_SS_SORTER_RANGE_MSG, op);
            goto done;
        }
    }
    if ((b = ss_contig(op, boundaries, cd, dev)) == NULL)
        goto fail;
    if (host_value) {
        /* the Scalar's 0-dim CPU tensor, converted to cd on the host */
        if ((v = ops_tensor_new(op, 0, NULL, NULL, cd, OPS_DEVICE_CPU)) == NULL)
            goto fail;
        if ((st = ops_copy_values(op, v, self)) != OPS_OK)
            goto done;
    } else if ((v = ss_contig(op, self, cd, dev)) == NULL) {
        goto fail;
    }
    if ((r = ops_tensor_new(op, self->ndim, self->sizes, NULL, out_int32 ? OPS_INT32 : OPS_INT64,
                            OPS_DEVICE_CUDA(dev))) == NULL)
        goto fail;
    if (vn > 0) {
        const int64_t *sd = s != NULL ? (const int64_t *)ops_tensor_data_ptr(s) : NULL;
        const int64_t per_row = ops_ss_per_row(boundaries, self);
        switch (cd) {
        case OPS_UINT8: st = ss_search_launch<uint8_t>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_INT8: st = ss_search_launch<int8_t>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_INT16: st = ss_search_launch<int16_t>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_INT32: st = ss_search_launch<int32_t>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_INT64: st = ss_search_launch<int64_t>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_FLOAT16: st = ss_search_launch<ops_half>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_BFLOAT16: st = ss_search_launch<ops_bfloat16>(op, b, sd, n, v, vn, per_row, right, r); break;
        case OPS_FLOAT32: st = ss_search_launch<float>(op, b, sd, n, v, vn, per_row, right, r); break;
        default: st = ss_search_launch<double>(op, b, sd, n, v, vn, per_row, right, r); break;
        }
        if (st != OPS_OK)
            goto done;
    }
    st = ss_finish(op, r, out, result);
    r = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_tensor_release(b);
    ops_tensor_release(v);
    ops_tensor_release(s);
    ops_tensor_release(r);
    return st;
}

/* ---- bincount ------------------------------------------------------------------------ */

/* mm[0] = min(x), mm[1] = max(x). */
__global__ void
bc_minmax_kernel(const int64_t *x, int64_t n, long long *mm)
{
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    SS_GRID_STRIDE(e, n)
    {
        lo = x[e] < lo ? x[e] : lo;
        hi = x[e] > hi ? x[e] : hi;
    }
    atomicMin(&mm[0], lo);
    atomicMax(&mm[1], hi);
}

template <typename W>
__global__ void
bc_count_kernel(const int64_t *x, const W *w, int64_t n, W *c)
{
    SS_GRID_STRIDE(e, n)
    {
        if constexpr (std::is_same<W, int64_t>::value)
            atomicAdd((unsigned long long *)&c[x[e]], 1ULL);
        else
            atomicAdd(&c[x[e]], w[e]);
    }
}

template <typename W>
static ops_status
bc_count_launch(const char *op, const ops_tensor *x, const ops_tensor *w, int64_t n, ops_tensor *r)
{
    const ops_launch_config c = ss_cfg(n);
    OPS_LAUNCH(bc_count_kernel<W>, c.grid, c.block, 0, ops_cuda_current_stream(ops_tensor_device(r).index),
               (const int64_t *)ops_tensor_data_ptr(x), w != NULL ? (const W *)ops_tensor_data_ptr(w) : (const W *)NULL,
               n, (W *)ops_tensor_data_ptr(r));
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

OPS_REGISTER_STUB(search_bincount_minmax, CUDA, search_bincount_minmax_cuda);
extern "C" ops_status
search_bincount_minmax_cuda(const char *op, const ops_tensor *x, int64_t *lo, int64_t *hi)
{
    const int dev = ops_tensor_device(x).index;
    const int64_t n = ops_tensor_numel(x);
    const int64_t init[2] = {INT64_MAX, INT64_MIN};
    int64_t got[2];
    ss_scratch mm = {op};
    ops_status st = mm.init(dev, init, 2);
    if (st != OPS_OK)
        return st;
    const ops_launch_config c = ss_cfg(n);
    OPS_LAUNCH(bc_minmax_kernel, c.grid, c.block, 0, ops_cuda_current_stream(dev),
               (const int64_t *)ops_tensor_data_ptr(x), n, (long long *)mm.ptr());
    if ((st = ops_cuda_check_launch(op)) != OPS_OK || (st = mm.read(got, 2)) != OPS_OK)
        return st;
    *lo = got[0];
    *hi = got[1];
    return OPS_OK;
}

OPS_REGISTER_STUB(search_bincount_count, CUDA, search_bincount_count_cuda);
extern "C" ops_status
search_bincount_count_cuda(const char *op, ops_tensor *r, const ops_tensor *x, const ops_tensor *w)
{
    ops_status st = ss_zero(op, r);
    if (st != OPS_OK || x == NULL)
        return st;
    const int64_t n = ops_tensor_numel(x);
    return r->dtype == OPS_INT64     ? bc_count_launch<int64_t>(op, x, NULL, n, r)
           : r->dtype == OPS_FLOAT32 ? bc_count_launch<float>(op, x, w, n, r)
                                     : bc_count_launch<double>(op, x, w, n, r);
}

/* ---- histc ------------------------------------------------------------------------------ */

/* An order-preserving unsigned key of a double (negative values flipped). */
static __device__ inline unsigned long long
hc_key(double v)
{
    const unsigned long long b = (unsigned long long)__double_as_longlong(v);
    return (b >> 63) ? ~b : b | (1ULL << 63);
}

static inline double
hc_unkey(unsigned long long k)
{
    const unsigned long long b = (k >> 63) ? k & ~(1ULL << 63) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* mm[0], mm[1]: keys of min(x), max(x); mm[2]: the first index of a NaN (the CPU's
 * min/max propagate the first NaN they meet). */
template <typename T>
__global__ void
hc_minmax_kernel(const T *x, int64_t n, unsigned long long *mm)
{
    unsigned long long lo = ~0ULL, hi = 0, nan_at = ~0ULL;
    SS_GRID_STRIDE(e, n)
    {
        const double v = (double)ops_load(x + e);
        if (v != v) {
            nan_at = (unsigned long long)e < nan_at ? (unsigned long long)e : nan_at;
            continue;
        }
        const unsigned long long k = hc_key(v);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    atomicMin(&mm[0], lo);
    atomicMax(&mm[1], hi);
    atomicMin(&mm[2], nan_at);
}

/* cnt[bin] += 1 for every x in [lo, hi]: bin (x - lo) * bins / (hi - lo) in opmath, the
 * last bin closed (the CPU's arithmetic). */
template <typename T>
__global__ void
hc_count_kernel(const T *x, int64_t n, int64_t bins, typename ops_opmath<T>::type lo,
                typename ops_opmath<T>::type hi, unsigned long long *cnt)
{
    typedef typename ops_opmath<T>::type acc_t;
    const acc_t width = hi - lo, nb = (acc_t)bins;
    SS_GRID_STRIDE(e, n)
    {
        const acc_t v = ops_load(x + e);
        if (!(v >= lo && v <= hi))
            continue;
        /* NaN (inf / inf when hi - lo overflows) and the top edge: the last bin */
        const acc_t f = (v - lo) * nb / width;
        const int64_t pos = f < nb ? (int64_t)f : bins - 1;
        atomicAdd(&cnt[pos < bins ? pos : bins - 1], 1ULL);
    }
}

/* h[i] = min(cnt[i], sat) in T. */
template <typename T>
__global__ void
hc_store_kernel(T *h, const unsigned long long *cnt, int64_t bins, unsigned long long sat)
{
    SS_GRID_STRIDE(e, bins)
    ops_store(h + e, (typename ops_opmath<T>::type)(cnt[e] < sat ? cnt[e] : sat));
}

template <typename T>
static ops_status
hc_minmax(const char *op, int dev, const ops_tensor *x, int64_t n, double *lo, double *hi)
{
    const T *xd = (const T *)ops_tensor_data_ptr(x);
    ss_scratch mm = {op};
    const int64_t init[3] = {-1, 0, -1}; /* keys ~0, 0 and "no NaN" */
    int64_t got[3];
    ops_status st = mm.init(dev, init, 3);
    if (st != OPS_OK)
        return st;
    const ops_launch_config c = ss_cfg(n);
    OPS_LAUNCH(hc_minmax_kernel<T>, c.grid, c.block, 0, ops_cuda_current_stream(dev), xd, n,
               (unsigned long long *)mm.ptr());
    if ((st = ops_cuda_check_launch(op)) != OPS_OK || (st = mm.read(got, 3)) != OPS_OK)
        return st;
    if (got[2] != -1) {
        T nan_v;
        const cudaError_t err = cudaMemcpy(&nan_v, xd + got[2], sizeof nan_v, cudaMemcpyDeviceToHost);
        if (err != cudaSuccess)
            return ops_cuda_fail(op, "cudaMemcpy to the host", err);
        *lo = *hi = (double)ops_load(&nan_v);
    } else {
        *lo = hc_unkey((unsigned long long)got[0]);
        *hi = hc_unkey((unsigned long long)got[1]);
    }
    return OPS_OK;
}

template <typename T>
static ops_status
hc_count(const char *op, int dev, ops_tensor *r, const ops_tensor *x, int64_t n, double lo, double hi)
{
    typedef typename ops_opmath<T>::type acc_t;
    const T *xd = (const T *)ops_tensor_data_ptr(x);
    const int64_t bins = ops_tensor_numel(r);
    /* the edges as the dtype holds them (PyTorch's bin_edges) */
    T elo, ehi;
    ops_store(&elo, (acc_t)lo);
    ops_store(&ehi, (acc_t)hi);
    ops_tensor *cnt = ops_tensor_new(op, 1, &bins, NULL, OPS_INT64, OPS_DEVICE_CUDA(dev));
    if (cnt == NULL)
        return ops_last_status();
    unsigned long long *cd = (unsigned long long *)ops_tensor_data_ptr(cnt);
    /* 2^p: adding 1 to it in T rounds back to it (ties to even) */
    const int p = x->dtype == OPS_FLOAT16 ? 11 : x->dtype == OPS_BFLOAT16 ? 8 : x->dtype == OPS_FLOAT32 ? 24 : 53;
    ops_status st = ss_zero(op, cnt);
    if (st == OPS_OK && n > 0) {
        const ops_launch_config c = ss_cfg(n);
        OPS_LAUNCH(hc_count_kernel<T>, c.grid, c.block, 0, ops_cuda_current_stream(dev), xd, n, bins, ops_load(&elo),
                   ops_load(&ehi), cd);
        st = ops_cuda_check_launch(op);
    }
    if (st == OPS_OK) {
        const ops_launch_config c = ss_cfg(bins);
        OPS_LAUNCH(hc_store_kernel<T>, c.grid, c.block, 0, ops_cuda_current_stream(dev), (T *)ops_tensor_data_ptr(r),
                   cd, bins, 1ULL << p);
        st = ops_cuda_check_launch(op);
    }
    ops_tensor_release(cnt);
    return st;
}

OPS_REGISTER_STUB(search_histc_minmax, CUDA, search_histc_minmax_cuda);
extern "C" ops_status
search_histc_minmax_cuda(const char *op, const ops_tensor *x, double *lo, double *hi)
{
    const int dev = ops_tensor_device(x).index;
    const int64_t n = ops_tensor_numel(x);
    switch (x->dtype) {
    case OPS_FLOAT16: return hc_minmax<ops_half>(op, dev, x, n, lo, hi);
    case OPS_BFLOAT16: return hc_minmax<ops_bfloat16>(op, dev, x, n, lo, hi);
    case OPS_FLOAT32: return hc_minmax<float>(op, dev, x, n, lo, hi);
    default: return hc_minmax<double>(op, dev, x, n, lo, hi);
    }
}

OPS_REGISTER_STUB(search_histc_count, CUDA, search_histc_count_cuda);
extern "C" ops_status
search_histc_count_cuda(const char *op, ops_tensor *r, const ops_tensor *x, double lo, double hi)
{
    const int dev = ops_tensor_device(x).index;
    const int64_t n = ops_tensor_numel(x);
    switch (x->dtype) {
    case OPS_FLOAT16: return hc_count<ops_half>(op, dev, r, x, n, lo, hi);
    case OPS_BFLOAT16: return hc_count<ops_bfloat16>(op, dev, r, x, n, lo, hi);
    case OPS_FLOAT32: return hc_count<float>(op, dev, r, x, n, lo, hi);
    default: return hc_count<double>(op, dev, r, x, n, lo, hi);
    }
}

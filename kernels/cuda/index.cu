// Indexing ops on CUDA: the loops of index_select, gather, take, put, masked_fill,
// index_add, index_copy, index_fill and repeat_interleave (the stubs of
// kernels/index_loops.h and kernels/index_add.h; their drivers are kernels/index.c,
// index_take.c, index_add.c), the check of index values (the stub idx_check_values:
// a checking kernel whose first bad position the host reads back), and the helpers
// of index_cuda.cuh.
//
// As on the CPU, everything is validated before anything is written: shapes and
// dtypes by the drivers (kernels/index_check.c), index values by the checking kernel.  Writes
// go into a fresh contiguous buffer (the opmath dtype where the CPU accumulates),
// converted into the result, self or out= at the end.  Where several indices hit one
// destination, one thread walks them in index order (index_add/copy/fill: a thread per
// slice position), so results are the CPU's, bit for bit; put finds the last writer
// per destination with atomicMax and accumulates with atomicAdd (exact for integers,
// float sums may round differently).
#include <inttypes.h>

#include "index_cuda.cuh"
#include "kernels/index_add.h"
#include "kernels/index_loops.h"

// ---- helpers ------------------------------------------------------------------------

ixc_geom
ixc_geom_of(const ops_tensor *t)
{
    ixc_geom g;
    g.nd = t->ndim;
    for (int d = 0; d < t->ndim; d++) {
        g.sizes[d] = t->sizes[d];
        g.strides[d] = t->strides[d];
    }
    return g;
}

ixc_geom
ixc_geom_bcast(const ops_tensor *t, int nd, const int64_t *shape)
{
    ixc_geom g;
    g.nd = nd;
    for (int d = 0; d < nd; d++) {
        const int td = d - (nd - t->ndim);
        g.sizes[d] = shape[d];
        g.strides[d] = (td < 0 || t->sizes[td] == 1) ? 0 : t->strides[td];
    }
    return g;
}

ixc_geom
ixc_geom_contig(int nd, const int64_t *shape)
{
    ixc_geom g;
    g.nd = nd;
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        g.sizes[d] = shape[d];
        g.strides[d] = s;
        s *= shape[d];
    }
    return g;
}

unsigned
ixc_grid(int64_t n)
{
    const int64_t b = (n + IXC_BLOCK - 1) / IXC_BLOCK;
    return (unsigned)(b < 1 ? 1 : b > IXC_MAX_GRID ? IXC_MAX_GRID : b);
}

ops_tensor *
ixc_new(const char *op, const ops_tensor *like, int nd, const int64_t *sizes, ops_dtype dt)
{
    return ops_tensor_new(op, nd, sizes, NULL, dt, like->storage->device);
}

ops_tensor *
ixc_clone_as(const char *op, const ops_tensor *self, int nd, const int64_t *shape, ops_dtype dt)
{
    ops_tensor *r = ixc_new(op, self, nd, shape, dt);
    if (r != NULL && ops_copy_values(op, r, self) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
ixc_convert(const char *op, ops_tensor *acc, ops_dtype dt)
{
    if (acc == NULL || acc->dtype == dt)
        return acc;
    ops_tensor *r = ixc_clone_as(op, acc, acc->ndim, acc->sizes, dt);
    ops_tensor_release(acc);
    return r;
}

ops_status
ixc_read(const char *op, void *dst, const void *src, size_t n)
{
    const cudaError_t err = cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
    return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "reading back a result", err);
}

ops_status
ixc_memset(const char *op, const ops_tensor *like, void *p, int v, size_t n)
{
    const cudaError_t err = cudaMemsetAsync(p, v, n, ixc_stream(like));
    return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemsetAsync", err);
}

__global__ void
ixc_check_kernel(const void *p, bool i32, ixc_geom g, int64_t n, int64_t lo, int64_t hi,
                 unsigned long long *first)
{
    IXC_FOR(i, n)
    {
        const int64_t v = ixc_read_index(p, i32, ixc_off(g, i));
        if (v < lo || v >= hi)
            atomicMin(first, (unsigned long long)i);
    }
}

ops_status
ixc_first_bad(const char *op, const ops_tensor *like, const void *p, bool i32, const ixc_geom &g, int64_t n,
              int64_t lo, int64_t hi, int64_t *pos, int64_t *val)
{
    *pos = -1;
    if (n == 0)
        return OPS_OK;
    ixc_buf first;
    if (!first.alloc(op, like, 1, OPS_INT64))
        return ops_last_status();
    ops_status st = ixc_memset(op, like, first.as<void>(), 0xff, sizeof(uint64_t));
    if (st != OPS_OK)
        return st;
    IXC_LAUNCH(op, like, n, ixc_check_kernel, p, i32, g, n, lo, hi, first.as<unsigned long long>());
    unsigned long long at = 0;
    if ((st = ixc_read(op, &at, first.as<void>(), sizeof at)) != OPS_OK || at == ~0ull)
        return st;
    *pos = (int64_t)at;
    const int64_t off = ixc_off(g, *pos);
    if (i32) {
        int32_t v32 = 0;
        st = ixc_read(op, &v32, (const int32_t *)p + off, sizeof v32);
        *val = v32;
    } else {
        st = ixc_read(op, val, (const int64_t *)p + off, sizeof *val);
    }
    return st;
}

OPS_REGISTER_STUB(idx_check_values, CUDA, idx_check_values_cuda);
extern "C" ops_status
idx_check_values_cuda(const char *op, const ops_tensor *index, int64_t lo, int64_t hi, idx_err_kind kind, int64_t dim,
                      int64_t size)
{
    int64_t pos, val = 0;
    const ops_status st = ixc_first_bad(op, index, ixc_ptr(index), index->dtype == OPS_INT32, ixc_geom_of(index),
                                        ops_tensor_numel(index), lo, hi, &pos, &val);
    if (st != OPS_OK)
        return st;
    return pos < 0 ? OPS_OK : idx_index_error(op, kind, val, dim, size);
}

// Block-wise inclusive scan in shared memory (Hillis-Steele), written back exclusive;
// each block's total goes to sums.
__global__ void
ixc_scan_block_kernel(int64_t *d, int64_t n, int64_t *sums)
{
    __shared__ int64_t s[IXC_BLOCK];
    const int64_t i = blockIdx.x * (int64_t)IXC_BLOCK + threadIdx.x;
    const int64_t v = i < n ? d[i] : 0;
    s[threadIdx.x] = v;
    __syncthreads();
    for (int o = 1; o < IXC_BLOCK; o <<= 1) {
        const int64_t t = (int)threadIdx.x >= o ? s[threadIdx.x - o] : 0;
        __syncthreads();
        s[threadIdx.x] += t;
        __syncthreads();
    }
    if (i < n)
        d[i] = s[threadIdx.x] - v;
    if (threadIdx.x == IXC_BLOCK - 1)
        sums[blockIdx.x] = s[IXC_BLOCK - 1];
}

__global__ void
ixc_scan_add_kernel(int64_t *d, int64_t n, const int64_t *sums)
{
    IXC_FOR(i, n)
    d[i] += sums[i / IXC_BLOCK];
}

ops_status
ixc_exclusive_scan(const char *op, const ops_tensor *like, int64_t *d, int64_t n, int64_t *total)
{
    if (n == 0) {
        if (total != NULL)
            *total = 0;
        return OPS_OK;
    }
    const int64_t nb = (n + IXC_BLOCK - 1) / IXC_BLOCK;
    ixc_buf sums;
    if (!sums.alloc(op, like, nb, OPS_INT64))
        return ops_last_status();
    OPS_LAUNCH_COOP(ixc_scan_block_kernel, (unsigned)nb, IXC_BLOCK, 0, ixc_stream(like), d, n, sums.as<int64_t>());
    OPS_CUDA_CHECK_LAUNCH(op);
    if (nb == 1)
        return total != NULL ? ixc_read(op, total, sums.as<int64_t>(), sizeof *total) : OPS_OK;
    // the block totals, scanned, are each block's offset
    const ops_status st = ixc_exclusive_scan(op, like, sums.as<int64_t>(), nb, total);
    if (st != OPS_OK)
        return st;
    IXC_LAUNCH(op, like, n, ixc_scan_add_kernel, d, n, (const int64_t *)sums.as<int64_t>());
    return OPS_OK;
}

// Geometry with a 0-dim tensor read as 1-D of size 1 (PyTorch's ensure_nonempty_dim).
static ixc_geom
geom_nonempty(const ops_tensor *t)
{
    ixc_geom g = ixc_geom_of(t);
    if (g.nd == 0) {
        g.nd = 1;
        g.sizes[0] = 1;
        g.strides[0] = 0;
    }
    return g;
}

// ---- index_select, gather -------------------------------------------------------------

// out (contiguous, shape og) [c...] = self[c... with c[dim] = index[c... read through ig]].
template <class T>
__global__ void
gather_dim_kernel(T *out, ixc_geom og, int64_t n, const T *self, ixc_geom sg, const void *idx, bool i32,
                  ixc_geom ig, int dim)
{
    IXC_FOR(i, n)
    {
        int64_t l = i, so = 0, io = 0;
        for (int d = og.nd - 1; d >= 0; d--) {
            const int64_t c = l % og.sizes[d];
            l /= og.sizes[d];
            io += c * ig.strides[d];
            if (d != dim)
                so += c * sg.strides[d];
        }
        if (dim < og.nd)
            so += ixc_read_index(idx, i32, io) * sg.strides[dim];
        out[i] = self[so];
    }
}

static ops_status
launch_gather_dim(const char *op, ops_tensor *r, const ixc_geom &og, const ops_tensor *self, const ixc_geom &sg,
                  const ops_tensor *index, const ixc_geom &ig, int dim)
{
    const int64_t n = ops_tensor_numel(r);
    if (n == 0)
        return OPS_OK;
    ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
        typedef decltype(tag) T;
        OPS_LAUNCH(gather_dim_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(r), (T *)ixc_ptr(r), og, n,
                   (const T *)ixc_ptr(self), sg, (const void *)ixc_ptr(index), index->dtype == OPS_INT32, ig, dim);
    });
    return ops_cuda_check_launch(op);
}

// self's slices index[i] along dim into r (contiguous, the result's shape).
OPS_REGISTER_STUB(index_select_loop, CUDA, index_select_loop_cuda);
extern "C" ops_status
index_select_loop_cuda(const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    // the values are the loop's to check (kernels/index_loops.h)
    const int64_t size = self->ndim > 0 ? self->sizes[dim] : 1;
    const ops_status st = idx_check_values_cuda(op, index, 0, size, IDX_ERR_SELECT, dim, size);
    if (st != OPS_OK)
        return st;
    // index read along dim only: stride 0 elsewhere
    ixc_geom ig = ixc_geom_contig(r->ndim, r->sizes);
    for (int d = 0; d < r->ndim; d++)
        ig.strides[d] = d == dim && index->ndim == 1 ? index->strides[0] : 0;
    return launch_gather_dim(op, r, ixc_geom_contig(r->ndim, r->sizes), self, ixc_geom_of(self), index, ig, (int)dim);
}

// index_select within the CUDA backend (repeat_interleave's slices): the driver's
// checks and allocation (kernels/index.c) for a self on the device.
ops_tensor *
ixc_index_select(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    if (idx_check_select(op, self, &dim, index) != OPS_OK)
        return NULL;
    const int64_t n = ops_tensor_numel(index);
    const int64_t size = self->ndim > 0 ? self->sizes[dim] : 1;
    // the loop checks the values; a 0-dim self's here, before the count (as the driver)
    if (self->ndim == 0 && idx_check_values_cuda(op, index, 0, size, IDX_ERR_SELECT, dim, size) != OPS_OK)
        return NULL;
    if (self->ndim == 0 && n != 1) {
        ops_fail(OPS_ERR_INDEX, "%s: Index to scalar can have only 1 value, got %" PRId64 " value(s)", op, n);
        return NULL;
    }
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    if (self->ndim > 0)
        sizes[dim] = n;
    ixc_ref r(ixc_new(op, self, self->ndim, sizes, self->dtype));
    if (r.t == NULL || index_select_loop_cuda(op, r.t, self, dim, index) != OPS_OK)
        return NULL;
    return r.take();
}

OPS_REGISTER_STUB(index_gather_loop, CUDA, index_gather_loop_cuda);
extern "C" ops_status
index_gather_loop_cuda(const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    // the values are the loop's to check (kernels/index_loops.h)
    const int64_t size = self->ndim ? self->sizes[dim] : 1;
    const ops_status st = idx_check_values_cuda(op, index, 0, size, IDX_ERR_BOUNDS, dim, size);
    if (st != OPS_OK)
        return st;
    const ixc_geom sg = geom_nonempty(self), ig = geom_nonempty(index);
    return launch_gather_dim(op, r, ixc_geom_contig(ig.nd, ig.sizes), self, sg, index, ig, (int)dim);
}

// ---- take, put --------------------------------------------------------------------------

// out[i] = self[flat index[i]] (self read through sg in row-major order).
template <class T>
__global__ void
take_kernel(T *out, int64_t n, const T *self, ixc_geom sg, int64_t numel, const int64_t *idx, ixc_geom ig)
{
    IXC_FOR(i, n)
    {
        int64_t k = idx[ixc_off(ig, i)];
        if (k < 0)
            k += numel;
        out[i] = self[ixc_off(sg, k)];
    }
}

OPS_REGISTER_STUB(index_take_loop, CUDA, index_take_loop_cuda);
extern "C" ops_status
index_take_loop_cuda(const char *op, ops_tensor *r, const ops_tensor *self, const ops_tensor *index)
{
    const int64_t numel = ops_tensor_numel(self), n = ops_tensor_numel(index);
    if (n == 0)
        return OPS_OK;
    // the values are the loop's to check (kernels/index_loops.h)
    const ops_status st = idx_check_values_cuda(op, index, -numel, numel, IDX_ERR_FLAT, 0, numel);
    if (st != OPS_OK)
        return st;
    ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
        typedef decltype(tag) T;
        OPS_LAUNCH(take_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(self), (T *)ixc_ptr(r), n,
                   (const T *)ixc_ptr(self), ixc_geom_of(self), numel, (const int64_t *)ixc_ptr(index),
                   ixc_geom_of(index));
    });
    return ops_cuda_check_launch(op);
}

// put's destination of item i: index[i] wrapped, an offset into the contiguous result.
struct put_dest {
    const int64_t *idx;
    ixc_geom ig;
    int64_t numel;
    __device__ int64_t operator()(int64_t i) const
    {
        const int64_t k = idx[ixc_off(ig, i)];
        return k < 0 ? k + numel : k;
    }
};

// self cloned, then the values put (the last writer of each destination stores;
// accumulation in ixc_put_values' own buffer).
OPS_REGISTER_STUB(index_put_flat_loop, CUDA, index_put_flat_loop_cuda);
extern "C" ops_status
index_put_flat_loop_cuda(const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source,
                         bool accumulate, ops_tensor **result)
{
    const int64_t numel = ops_tensor_numel(self);
    ops_tensor *r = ixc_clone_as(op, self, self->ndim, self->sizes, self->dtype);
    if (r == NULL)
        return ops_last_status();
    const put_dest dest = {(const int64_t *)ixc_ptr(index), ixc_geom_of(index), numel};
    return ixc_put_values(op, r, dest, ops_tensor_numel(index), source, ixc_geom_of(source), accumulate, result);
}

// ---- masked_fill ------------------------------------------------------------------------

// dst[i] = v where mask[i] (dst and mask read through their geometries over one shape).
template <class T>
__global__ void
masked_fill_kernel(T *dst, ixc_geom dg, const bool *mask, ixc_geom mg, int64_t n, T v)
{
    IXC_FOR(i, n)
    {
        if (mask[ixc_off(mg, i)])
            dst[ixc_off(dg, i)] = v;
    }
}

// dst[mask] = value, mask broadcast to dst's shape (checked by the driver).
OPS_REGISTER_STUB(index_masked_fill_loop, CUDA, index_masked_fill_loop_cuda);
extern "C" ops_status
index_masked_fill_loop_cuda(const char *op, ops_tensor *dst, const ops_tensor *mask, ops_scalar value)
{
    const int64_t n = ops_tensor_numel(dst);
    if (n == 0)
        return OPS_OK;
    unsigned char v[16] = {0};
    ops_scalar_store(value, dst->dtype, v);
    ixc_by_size(ops_dtype_itemsize(dst->dtype), [&](auto tag) {
        typedef decltype(tag) T;
        T tv;
        memcpy(&tv, v, sizeof tv);
        OPS_LAUNCH(masked_fill_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(dst), (T *)ixc_ptr(dst),
                   ixc_geom_of(dst), (const bool *)ixc_ptr(mask), ixc_geom_bcast(mask, dst->ndim, dst->sizes), n, tv);
    });
    return ops_cuda_check_launch(op);
}

// ---- index_add, index_copy, index_fill -------------------------------------------------

// One thread per position p of a slice (self's dims but dim): it walks the n indices in
// order, so duplicates apply in the CPU's order.  acc contiguous (opmath dtype);
// pg/spg: the slice positions' offsets in acc and in source.
template <class S, class A>
__global__ void
index_func_kernel(A *acc, ixc_geom pg, int64_t per, int64_t adim, const S *src, ixc_geom spg, int64_t sdim,
                  const void *idx, bool i32, int64_t istride, int64_t n, int64_t size, bool add, A alpha)
{
    IXC_FOR(p, per)
    {
        A *const a = acc + ixc_off(pg, p);
        const S *const s = src + ixc_off(spg, p);
        for (int64_t i = 0; i < n; i++) {
            int64_t k = ixc_read_index(idx, i32, i * istride);
            if (k < 0)
                k += size;
            const A v = (A)ops_load(s + i * sdim);
            a[k * adim] = add ? ops_ix_add(a[k * adim], ops_ix_mul(alpha, v)) : v;
        }
    }
}

template <class T>
__global__ void
index_fill_kernel(T *acc, ixc_geom pg, int64_t per, int64_t adim, const int64_t *idx, int64_t istride, int64_t n,
                  int64_t size, T v)
{
    IXC_FOR(p, per)
    {
        T *const a = acc + ixc_off(pg, p);
        for (int64_t i = 0; i < n; i++) {
            int64_t k = idx[i * istride];
            if (k < 0)
                k += size;
            a[k * adim] = v;
        }
    }
}

// The slice geometry of t (self's shape) without dim: sizes of self, strides of t (0
// when t is 0-dim: a scalar source).
static ixc_geom
slice_geom(const ops_tensor *self, const ops_tensor *t, int64_t dim)
{
    ixc_geom g;
    g.nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d == dim)
            continue;
        g.sizes[g.nd] = self->sizes[d];
        g.strides[g.nd++] = t->ndim ? t->strides[d] : 0;
    }
    return g;
}

// The stub index_slices_loop (the driver: kernels/index_add.c): one launch over the
// positions of a slice; acc is the driver's contiguous buffer.
OPS_REGISTER_STUB(index_slices_loop, CUDA, index_slices_loop_cuda);
extern "C" ops_status
index_slices_loop_cuda(const char *op, ix_mode mode, ops_tensor *acc, const ops_tensor *self, int64_t dim,
                       const ops_tensor *index, const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    const int64_t size = self->ndim ? self->sizes[dim] : 1;
    const ixc_geom pg = slice_geom(self, acc, dim);
    int64_t per = 1;
    for (int d = 0; d < pg.nd; d++)
        per *= pg.sizes[d];
    const int64_t n = ops_tensor_numel(index), adim = self->ndim ? acc->strides[dim] : 0;
    const int64_t istride = index->ndim ? index->strides[0] : 0;
    if (per == 0 || n == 0)
        return OPS_OK;
    if (mode == IX_FILL) {
        unsigned char v[16] = {0};
        ops_scalar_store(value, self->dtype, v);
        ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
            typedef decltype(tag) T;
            T tv;
            memcpy(&tv, v, sizeof tv);
            OPS_LAUNCH(index_fill_kernel<T>, ixc_grid(per), IXC_BLOCK, 0, ixc_stream(self), (T *)ixc_ptr(acc), pg,
                       per, adim, (const int64_t *)ixc_ptr(index), istride, n, size, tv);
        });
    } else {
        const ixc_geom spg = slice_geom(self, source, dim);
        const int64_t sdim = source->ndim ? source->strides[dim] : 0;
        const bool add = mode == IX_ADD, i32 = index->dtype == OPS_INT32;
        OPS_DISPATCH_ALL(self->dtype, op, {
            scalar_t sa;
            ops_scalar_store(alpha, self->dtype, &sa);
            const opmath_t av = ops_load(&sa);
            OPS_LAUNCH((index_func_kernel<scalar_t, opmath_t>), ixc_grid(per), IXC_BLOCK, 0, ixc_stream(self),
                       (opmath_t *)ixc_ptr(acc), pg, per, adim, (const scalar_t *)ixc_ptr(source), spg, sdim,
                       (const void *)ixc_ptr(index), i32, istride, n, size, add, av);
        });
    }
    return ops_cuda_check_launch(op);
}

// ---- repeat_interleave (the driver: kernels/index_take.c) ------------------------------

// The driver reads the counts on the host; the slices move on the device as an
// index_select by "i repeated reps[i] times".

// The device tensor of dtype dt holding i repeated reps[i] times (i < n, total values),
// written into d: built on the host, then copied over.
OPS_REGISTER_STUB(index_repeat_fill_loop, CUDA, index_repeat_fill_loop_cuda);
extern "C" ops_status
index_repeat_fill_loop_cuda(const char *op, ops_tensor *d, const int64_t *reps, int64_t n, int64_t total)
{
    ixc_ref h(ops_tensor_new(op, 1, &total, NULL, d->dtype, OPS_DEVICE_CPU));
    if (h.t == NULL)
        return ops_last_status();
    idx_repeat_fill(d->dtype, reps, n, ops_tensor_data_ptr(h.t));
    return ops_copy_values(op, d, h.t);
}

OPS_REGISTER_STUB(index_repeat_slices_loop, CUDA, index_repeat_slices_loop_cuda);
extern "C" ops_status
index_repeat_slices_loop_cuda(const char *op, const ops_tensor *self, int64_t dim, const int64_t *reps, int64_t total,
                              ops_tensor **result)
{
    // dim < 0: self flattened (a contiguous copy when self is not contiguous)
    const int64_t numel = ops_tensor_numel(self), one = 1;
    ixc_ref flat, base;
    if (dim < 0) {
        const ops_tensor *c = self;
        if (!ops_tensor_is_contiguous(self)) {
            flat.t = ixc_clone_as(op, self, self->ndim, self->sizes, self->dtype);
            c = flat.t;
        }
        if (c != NULL)
            base.t = ops_tensor_new_view(c, 1, &numel, &one, c->offset);
    }
    const ops_tensor *b = dim < 0 ? base.t : self;
    if (b == NULL)
        return ops_last_status();
    ixc_ref index(ixc_new(op, self, 1, &total, OPS_INT64));
    if (index.t == NULL ||
        index_repeat_fill_loop_cuda(op, index.t, reps, dim < 0 ? numel : self->sizes[dim], total) != OPS_OK)
        return ops_last_status();
    *result = ixc_index_select(op, b, dim < 0 ? 0 : dim, index.t);
    return *result != NULL ? OPS_OK : ops_last_status();
}

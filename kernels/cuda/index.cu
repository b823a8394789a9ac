// Indexing ops on CUDA: index_select, gather, take, put, masked_fill, index_add,
// index_copy, index_fill, repeat_interleave (ports of kernels/cpu/index.c,
// index_add.c, index_take.c), and the helpers of index_cuda.cuh.
//
// As on the CPU, everything is validated before anything is written: shapes and
// dtypes by the functions the CPU kernels call (kernels/index_check.c), index
// values by a checking kernel whose first bad position the host reads back.  Writes
// go into a fresh contiguous buffer (the opmath dtype where the CPU accumulates),
// converted into the result, self or out= at the end.  Where several indices hit one
// destination, one thread walks them in index order (index_add/copy/fill: a thread per
// slice position), so results are the CPU's, bit for bit; put finds the last writer
// per destination with atomicMax and accumulates with atomicAdd (exact for integers,
// float sums may round differently).
#include <inttypes.h>

#include "index_cuda.cuh"

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
ixc_write_inplace(const char *op, ops_tensor *self, ops_tensor *r)
{
    if (r == NULL)
        return ops_last_status();
    const ops_status st = ops_copy_values(op, self, r);
    ops_tensor_release(r);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
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

ops_status
ixc_check_index(const char *op, const ops_tensor *index, int64_t lo, int64_t hi, idx_err_kind kind, int64_t dim,
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

static ops_tensor *
index_select_impl(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_select(op, self, &dim, index) != OPS_OK)
        return NULL;
    const int64_t n = ops_tensor_numel(index);
    const int64_t size = self->ndim > 0 ? self->sizes[dim] : 1;
    if (ixc_check_index(op, index, 0, size, IDX_ERR_SELECT, dim, size) != OPS_OK)
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
    if (r.t == NULL)
        return NULL;
    // index read along dim only: stride 0 elsewhere
    ixc_geom ig = ixc_geom_contig(self->ndim, sizes);
    for (int d = 0; d < self->ndim; d++)
        ig.strides[d] = d == dim && index->ndim == 1 ? index->strides[0] : 0;
    if (launch_gather_dim(op, r.t, ixc_geom_contig(self->ndim, sizes), self, ixc_geom_of(self), index, ig,
                          (int)dim) != OPS_OK)
        return NULL;
    return r.take();
}

ops_tensor *
ixc_index_select(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    return index_select_impl(op, self, dim, index);
}

extern "C" ops_tensor *
index_select_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    return index_select_impl("index_select", self, dim, index);
}

extern "C" ops_status
index_select_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("index_select", index_select_impl("index_select", self, dim, index), out);
}

static ops_tensor *
gather_impl(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_gather(op, self, &dim, index) != OPS_OK)
        return NULL;
    const ixc_geom sg = geom_nonempty(self), ig = geom_nonempty(index);
    const int64_t size = sg.sizes[dim];
    if (ixc_check_index(op, index, 0, size, IDX_ERR_BOUNDS, dim, size) != OPS_OK)
        return NULL;
    ixc_ref r(ixc_new(op, self, index->ndim, index->sizes, self->dtype));
    if (r.t == NULL ||
        launch_gather_dim(op, r.t, ixc_geom_contig(ig.nd, ig.sizes), self, sg, index, ig, (int)dim) != OPS_OK)
        return NULL;
    return r.take();
}

extern "C" ops_tensor *
gather_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, bool sparse_grad)
{
    (void)sparse_grad; // a gradient-layout hint; no effect on values
    return gather_impl("gather", self, dim, index);
}

extern "C" ops_status
gather_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, bool sparse_grad, ops_tensor *out)
{
    (void)sparse_grad;
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("gather", gather_impl("gather", self, dim, index), out);
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

static ops_tensor *
take_impl(const char *op, const ops_tensor *self, const ops_tensor *index)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_take(op, self, index) != OPS_OK)
        return NULL;
    const int64_t numel = ops_tensor_numel(self), n = ops_tensor_numel(index);
    if (ixc_check_index(op, index, -numel, numel, IDX_ERR_FLAT, 0, numel) != OPS_OK)
        return NULL;
    ixc_ref r(ixc_new(op, self, index->ndim, index->sizes, self->dtype));
    if (r.t == NULL)
        return NULL;
    if (n > 0) {
        ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
            typedef decltype(tag) T;
            OPS_LAUNCH(take_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(self), (T *)ixc_ptr(r.t), n,
                       (const T *)ixc_ptr(self), ixc_geom_of(self), numel, (const int64_t *)ixc_ptr(index),
                       ixc_geom_of(index));
        });
        if (ops_cuda_check_launch(op) != OPS_OK)
            return NULL;
    }
    return r.take();
}

extern "C" ops_tensor *
take_cuda(const ops_tensor *self, const ops_tensor *index)
{
    return take_impl("take", self, index);
}

extern "C" ops_status
take_out_cuda(const ops_tensor *self, const ops_tensor *index, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("take", take_impl("take", self, index), out);
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

static ops_tensor *
put_compute(const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source,
            bool accumulate)
{
    if (idx_check_put(op, self, index, source) != OPS_OK)
        return NULL;
    const int64_t numel = ops_tensor_numel(self);
    if (ixc_check_index(op, index, -numel, numel, IDX_ERR_FLAT, 0, numel) != OPS_OK)
        return NULL;
    ops_tensor *r = ixc_clone_as(op, self, self->ndim, self->sizes, self->dtype);
    const put_dest dest = {(const int64_t *)ixc_ptr(index), ixc_geom_of(index), numel};
    ops_tensor *res = NULL;
    if (r == NULL || ixc_put_values(op, r, dest, ops_tensor_numel(index), source, ixc_geom_of(source), accumulate,
                                    &res) != OPS_OK)
        return NULL;
    return res;
}

extern "C" ops_tensor *
put_cuda(const ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return put_compute("put", self, index, source, accumulate);
}

extern "C" ops_status
put_cuda_(ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    const char *op = "put_";
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return ixc_write_inplace(op, self, put_compute(op, self, index, source, accumulate));
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

// dst[mask] = value, mask broadcast to dst's shape (checked by the caller).
static ops_status
fill_masked(const char *op, ops_tensor *dst, const ops_tensor *mask, ops_scalar value)
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

static ops_status
masked_fill_inplace(const char *op, ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    ops_status st = idx_check_fill_mask(op, mask);
    if (st == OPS_OK)
        st = idx_check_inplace_self(op, self);
    if (st != OPS_OK)
        return st;
    // the CPU kernel's copy iterator decides (and words) whether mask broadcasts to self
    ops_iter it;
    st = ops_iter_build_copy(&it, op, self, mask);
    ops_iter_release(&it);
    if (st == OPS_OK && (st = fill_masked(op, self, mask, value)) == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

static ops_tensor *
masked_fill_functional(const char *op, const ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    if (idx_check_fill_mask(op, mask) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    ixc_ref r(ixc_clone_as(op, self, nd, shape, self->dtype));
    if (r.t == NULL || fill_masked(op, r.t, mask, value) != OPS_OK)
        return NULL;
    return r.take();
}

// A 0-dim value tensor's element (item() reads host or device memory).
static ops_status
value_item(const char *op, const char *what, const ops_tensor *value, ops_scalar *s)
{
    const ops_status st = idx_check_value_tensor(op, what, value);
    return st != OPS_OK ? st : ops_tensor_item(value, s);
}

extern "C" ops_tensor *
masked_fill_scalar_cuda(const ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return masked_fill_functional("masked_fill", self, mask, value);
}

extern "C" ops_status
masked_fill_scalar_cuda_(ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return masked_fill_inplace("masked_fill_", self, mask, value);
}

extern "C" ops_tensor *
masked_fill_tensor_cuda(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *value)
{
    const char *op = "masked_fill";
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_scalar s;
    if (idx_check_fill_mask(op, mask) != OPS_OK || value_item(op, "masked_fill_", value, &s) != OPS_OK)
        return NULL;
    return masked_fill_functional(op, self, mask, s);
}

extern "C" ops_status
masked_fill_tensor_cuda_(ops_tensor *self, const ops_tensor *mask, const ops_tensor *value)
{
    const char *op = "masked_fill_";
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_scalar s;
    ops_status st = idx_check_fill_mask(op, mask);
    if (st == OPS_OK)
        st = value_item(op, "masked_fill_", value, &s);
    if (st == OPS_OK)
        st = masked_fill_inplace(op, self, mask, s);
    return st;
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

static ops_tensor *
ix_compute(const char *op, ix_mode mode, const ops_tensor *self, int64_t dim, const ops_tensor *index,
           const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    if (idx_check_func(op, mode, self, &dim, index, source) != OPS_OK)
        return NULL;
    const int64_t size = self->ndim ? self->sizes[dim] : 1;
    if (ixc_check_index(op, index, mode == IX_FILL ? -size : 0, size, mode == IX_ADD ? IDX_ERR_ADD : IDX_ERR_BOUNDS,
                        dim, size) != OPS_OK)
        return NULL;
    if (mode == IX_ADD && idx_check_alpha(op, self, alpha) != OPS_OK)
        return NULL;
    // index_fill stores the value in self's dtype directly; the others go through opmath
    const ops_dtype acc_dt = mode == IX_FILL ? self->dtype : ixc_opmath_dtype(self->dtype);
    ixc_ref acc(ixc_clone_as(op, self, self->ndim, self->sizes, acc_dt));
    if (acc.t == NULL)
        return NULL;
    const ixc_geom pg = slice_geom(self, acc.t, dim);
    int64_t per = 1;
    for (int d = 0; d < pg.nd; d++)
        per *= pg.sizes[d];
    const int64_t n = ops_tensor_numel(index), adim = self->ndim ? acc.t->strides[dim] : 0;
    const int64_t istride = index->ndim ? index->strides[0] : 0;
    if (per > 0 && n > 0) {
        if (mode == IX_FILL) {
            unsigned char v[16] = {0};
            ops_scalar_store(value, self->dtype, v);
            ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
                typedef decltype(tag) T;
                T tv;
                memcpy(&tv, v, sizeof tv);
                OPS_LAUNCH(index_fill_kernel<T>, ixc_grid(per), IXC_BLOCK, 0, ixc_stream(self), (T *)ixc_ptr(acc.t),
                           pg, per, adim, (const int64_t *)ixc_ptr(index), istride, n, size, tv);
            });
        } else {
            const ixc_geom spg = slice_geom(self, source, dim);
            const int64_t sdim = source->ndim ? source->strides[dim] : 0;
            const bool add = mode == IX_ADD, i32 = index->dtype == OPS_INT32;
            const ops_status st = [&]() -> ops_status {
                OPS_DISPATCH_ALL(self->dtype, op, {
                    scalar_t sa;
                    ops_scalar_store(alpha, self->dtype, &sa);
                    const opmath_t av = ops_load(&sa);
                    OPS_LAUNCH((index_func_kernel<scalar_t, opmath_t>), ixc_grid(per), IXC_BLOCK, 0,
                               ixc_stream(self), (opmath_t *)ixc_ptr(acc.t), pg, per, adim,
                               (const scalar_t *)ixc_ptr(source), spg, sdim, (const void *)ixc_ptr(index), i32,
                               istride, n, size, add, av);
                });
                return OPS_OK;
            }();
            if (st != OPS_OK)
                return NULL;
        }
        if (ops_cuda_check_launch(op) != OPS_OK)
            return NULL;
    }
    return ixc_convert(op, acc.take(), self->dtype);
}

static ops_status
ix_inplace(const char *op, ix_mode mode, ops_tensor *self, int64_t dim, const ops_tensor *index,
           const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return ixc_write_inplace(op, self, ix_compute(op, mode, self, dim, index, source, value, alpha));
}

static const ops_scalar zero_ = ixc_scalar_int(0);

extern "C" ops_tensor *
index_add_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
               ops_scalar alpha)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ix_compute("index_add", IX_ADD, self, dim, index, source, zero_, alpha);
}

extern "C" ops_status
index_add_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
                   ops_scalar alpha, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("index_add", ix_compute("index_add", IX_ADD, self, dim, index, source, zero_, alpha), out);
}

extern "C" ops_status
index_add_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source, ops_scalar alpha)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ix_inplace("index_add_", IX_ADD, self, dim, index, source, zero_, alpha);
}

extern "C" ops_tensor *
index_copy_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ix_compute("index_copy", IX_COPY, self, dim, index, source, zero_, zero_);
}

extern "C" ops_status
index_copy_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
                    ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("index_copy", ix_compute("index_copy", IX_COPY, self, dim, index, source, zero_, zero_),
                         out);
}

extern "C" ops_status
index_copy_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ix_inplace("index_copy_", IX_COPY, self, dim, index, source, zero_, zero_);
}

extern "C" ops_tensor *
index_fill_int_scalar_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ix_compute("index_fill", IX_FILL, self, dim, index, NULL, value, zero_);
}

extern "C" ops_status
index_fill_int_scalar_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                               ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("index_fill", ix_compute("index_fill", IX_FILL, self, dim, index, NULL, value, zero_), out);
}

extern "C" ops_status
index_fill_int_scalar_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ix_inplace("index_fill_", IX_FILL, self, dim, index, NULL, value, zero_);
}

extern "C" ops_tensor *
index_fill_int_tensor_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_scalar s;
    if (value_item("index_fill", "index_fill_", value, &s) != OPS_OK)
        return NULL;
    return ix_compute("index_fill", IX_FILL, self, dim, index, NULL, s, zero_);
}

extern "C" ops_status
index_fill_int_tensor_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value,
                               ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_scalar s;
    if (value_item("index_fill", "index_fill_", value, &s) != OPS_OK)
        return ops_last_status();
    return ops_write_out("index_fill", ix_compute("index_fill", IX_FILL, self, dim, index, NULL, s, zero_), out);
}

extern "C" ops_status
index_fill_int_tensor_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_scalar s;
    if (value_item("index_fill_", "index_fill_", value, &s) != OPS_OK)
        return ops_last_status();
    return ix_inplace("index_fill_", IX_FILL, self, dim, index, NULL, s, zero_);
}

// ---- repeat_interleave ----------------------------------------------------------------

// The counts decide the result's size, and the CPU's checks read them one by one: the
// (small) repeats tensor is read on the host, the slices move on the device as an
// index_select by "i repeated reps[i] times".

// t's values in a fresh CPU tensor.
static ops_tensor *
host_copy(const char *op, const ops_tensor *t)
{
    ops_tensor *h = ops_tensor_new(op, t->ndim, t->sizes, NULL, t->dtype, OPS_DEVICE_CPU);
    if (h != NULL && ops_copy_values(op, h, t) != OPS_OK) {
        ops_tensor_release(h);
        return NULL;
    }
    return h;
}

// The device tensor of dtype dt holding i repeated reps[i] times (i < n, total values).
static ops_tensor *
repeat_index(const char *op, const ops_tensor *like, ops_dtype dt, const int64_t *reps, int64_t n, int64_t total)
{
    ixc_ref h(ops_tensor_new(op, 1, &total, NULL, dt, OPS_DEVICE_CPU));
    if (h.t == NULL)
        return NULL;
    idx_repeat_fill(dt, reps, n, ops_tensor_data_ptr(h.t));
    ixc_ref d(ixc_new(op, like, 1, &total, dt));
    if (d.t == NULL || ops_copy_values(op, d.t, h.t) != OPS_OK)
        return NULL;
    return d.take();
}

extern "C" ops_tensor *
repeat_interleave_tensor_cuda(const ops_tensor *repeats, const int64_t *output_size)
{
    const char *op = "repeat_interleave";
    ops_cuda_device_guard guard(ixc_dev(repeats));
    ixc_ref hr(host_copy(op, repeats));
    int64_t *reps = NULL, total;
    if (hr.t == NULL || idx_repeat_tensor_counts(op, hr.t, output_size, &reps, &total) != OPS_OK)
        return NULL;
    ops_tensor *r = repeat_index(op, repeats, repeats->dtype, reps, repeats->sizes[0], total);
    ops_host_free(reps);
    return r;
}

extern "C" ops_status
repeat_interleave_tensor_out_cuda(const ops_tensor *repeats, const int64_t *output_size, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(repeats));
    return ops_write_out("repeat_interleave", repeat_interleave_tensor_cuda(repeats, output_size), out);
}

static ops_tensor *
repeat_interleave_self(const char *op, const ops_tensor *self, const ops_tensor *repeats, int64_t rep_int,
                       const int64_t *dim_opt, const int64_t *output_size)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    ixc_ref hr(repeats != NULL ? host_copy(op, repeats) : NULL);
    int64_t *reps = NULL, dim, total;
    if ((repeats != NULL && hr.t == NULL) ||
        idx_repeat_counts(op, self, hr.t, rep_int, dim_opt, output_size, &reps, &dim, &total) != OPS_OK)
        return NULL;
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
    ixc_ref index(b != NULL ? repeat_index(op, self, OPS_INT64, reps, dim < 0 ? numel : self->sizes[dim], total)
                            : NULL);
    ops_host_free(reps);
    if (index.t == NULL)
        return NULL;
    return index_select_impl(op, b, dim < 0 ? 0 : dim, index.t);
}

extern "C" ops_tensor *
repeat_interleave_self_tensor_cuda(const ops_tensor *self, const ops_tensor *repeats, const int64_t *dim,
                                   const int64_t *output_size)
{
    return repeat_interleave_self("repeat_interleave", self, repeats, 0, dim, output_size);
}

extern "C" ops_tensor *
repeat_interleave_self_int_cuda(const ops_tensor *self, int64_t repeats, const int64_t *dim,
                                const int64_t *output_size)
{
    return repeat_interleave_self("repeat_interleave", self, NULL, repeats, dim, output_size);
}

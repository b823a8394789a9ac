// Data-dependent indexing on CUDA: the loops of nonzero (argwhere, nonzero_numpy and
// where(cond) too), masked_select and masked_scatter (the stubs of
// kernels/index_loops.h; their drivers are kernels/index_masked.c), and advanced
// indexing index.Tensor / index_put (a port of kernels/cpu/index_advanced.c, whose
// checks and indexing plan it shares).
//
// Result sizes known only from the data are counted on the device: a flag per
// element, an exclusive prefix sum (ixc_exclusive_scan) that gives every selected
// element its place, the total read back; then the result is allocated and a second
// kernel fills it.  Elements are taken in row-major order, as on the CPU.
#include "index_cuda.cuh"
#include "kernels/index_loops.h"

// flag[i] = 1 when element i (row-major over g) of the dtype-dt data at p is nonzero.
__global__ void
nonzero_flag_kernel(const char *p, ops_dtype dt, int isz, ixc_geom g, int64_t n, int64_t *flag)
{
    IXC_FOR(i, n)
    flag[i] = ops_ix_is_nonzero(p + ixc_off(g, i) * isz, dt) ? 1 : 0;
}

// The flags (1 where selected) of n elements and their exclusive scan; *count the
// number selected (read back).
struct select_flags {
    ixc_buf flag, place;
    int64_t count = 0;

    // flags of the elements of t read through g (n elements), nonzero test
    ops_status of(const char *op, const ops_tensor *t, const ixc_geom &g, int64_t n)
    {
        if (!flag.alloc(op, t, n, OPS_INT64) || !place.alloc(op, t, n, OPS_INT64))
            return ops_last_status();
        if (n == 0)
            return OPS_OK;
        IXC_LAUNCH(op, t, n, nonzero_flag_kernel, (const char *)ixc_ptr(t), t->dtype,
                   (int)ops_dtype_itemsize(t->dtype), g, n, flag.as<int64_t>());
        if (cudaMemcpyAsync(place.as<void>(), flag.as<void>(), (size_t)n * sizeof(int64_t),
                            cudaMemcpyDeviceToDevice, ixc_stream(t)) != cudaSuccess)
            return ops_cuda_fail(op, "cudaMemcpyAsync", cudaGetLastError());
        return ixc_exclusive_scan(op, t, place.as<int64_t>(), n, &count);
    }
    const int64_t *f() const { return flag.as<int64_t>(); }
    const int64_t *at() const { return place.as<int64_t>(); }
};

// ---- nonzero ------------------------------------------------------------------------

// Row place[i] of r ([count, nd]) gets the coordinates of selected element i.
__global__ void
nonzero_fill_kernel(const int64_t *flag, const int64_t *place, ixc_geom g, int64_t n, int64_t *r)
{
    IXC_FOR(i, n)
    {
        if (!flag[i])
            continue;
        int64_t *const row = r + place[i] * g.nd;
        int64_t l = i;
        for (int d = g.nd - 1; d >= 0; d--) {
            row[d] = l % g.sizes[d];
            l /= g.sizes[d];
        }
    }
}

// nonzero(self): int64 [n, ndim], the coordinates of self's nonzero elements (the
// stub index_nonzero_loop; the driver is kernels/index_masked.c).
OPS_REGISTER_STUB(index_nonzero_loop, CUDA, index_nonzero_loop_cuda);
extern "C" ops_status
index_nonzero_loop_cuda(const char *op, const ops_tensor *self, ops_tensor **result)
{
    const ixc_geom g = ixc_geom_of(self);
    const int64_t total = ops_tensor_numel(self);
    select_flags s;
    ops_status st = s.of(op, self, g, total);
    if (st != OPS_OK)
        return st;
    const int64_t rs[2] = {s.count, self->ndim};
    ixc_ref r(ixc_new(op, self, 2, rs, OPS_INT64));
    if (r.t == NULL)
        return ops_last_status();
    if (s.count > 0 && self->ndim > 0) {
        OPS_LAUNCH(nonzero_fill_kernel, ixc_grid(total), IXC_BLOCK, 0, ixc_stream(self), s.f(), s.at(), g, total,
                   (int64_t *)ixc_ptr(r.t));
        if ((st = ops_cuda_check_launch(op)) != OPS_OK)
            return st;
    }
    *result = r.take();
    return OPS_OK;
}

// ---- masked_select, masked_scatter -------------------------------------------------------

// r[place[i]] = self[i] for the selected i (self read through sg).
template <class T>
__global__ void
masked_select_kernel(const int64_t *flag, const int64_t *place, int64_t n, const T *self, ixc_geom sg, T *r)
{
    IXC_FOR(i, n)
    {
        if (flag[i])
            r[place[i]] = self[ixc_off(sg, i)];
    }
}

OPS_REGISTER_STUB(index_masked_select_loop, CUDA, index_masked_select_loop_cuda);
extern "C" ops_status
index_masked_select_loop_cuda(const char *op, const ops_tensor *self, const ops_tensor *mask, int nd,
                              const int64_t *shape, ops_tensor **result)
{
    const int64_t total = ops_shape_numel(nd, shape);
    select_flags s;
    ops_status st = s.of(op, mask, ixc_geom_bcast(mask, nd, shape), total);
    if (st != OPS_OK)
        return st;
    ixc_ref r(ixc_new(op, self, 1, &s.count, self->dtype));
    if (r.t == NULL)
        return ops_last_status();
    if (s.count > 0) {
        const ixc_geom sg = ixc_geom_bcast(self, nd, shape);
        ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
            typedef decltype(tag) T;
            OPS_LAUNCH(masked_select_kernel<T>, ixc_grid(total), IXC_BLOCK, 0, ixc_stream(self), s.f(), s.at(),
                       total, (const T *)ixc_ptr(self), sg, (T *)ixc_ptr(r.t));
        });
        if ((st = ops_cuda_check_launch(op)) != OPS_OK)
            return st;
    }
    *result = r.take();
    return OPS_OK;
}

OPS_REGISTER_STUB(index_mask_count, CUDA, index_mask_count_cuda);
extern "C" ops_status
index_mask_count_cuda(const char *op, const ops_tensor *mask, int nd, const int64_t *shape, int64_t *count)
{
    select_flags s;
    const ops_status st = s.of(op, mask, ixc_geom_bcast(mask, nd, shape), ops_shape_numel(nd, shape));
    *count = s.count;
    return st;
}

// dst[i] = source[place[i]] (source in its row-major order) for the selected i.
template <class T>
__global__ void
masked_scatter_kernel(const int64_t *flag, const int64_t *place, int64_t n, T *dst, ixc_geom dg, const T *src,
                      ixc_geom sg)
{
    IXC_FOR(i, n)
    {
        if (flag[i])
            dst[ixc_off(dg, i)] = src[ixc_off(sg, place[i])];
    }
}

// dst[mask] = the first elements of source; mask broadcasts to dst's shape.  Checks
// source's size against the mask's count first.
OPS_REGISTER_STUB(index_masked_scatter_loop, CUDA, index_masked_scatter_loop_cuda);
extern "C" ops_status
index_masked_scatter_loop_cuda(const char *op, ops_tensor *dst, const ops_tensor *mask, const ops_tensor *source)
{
    const int64_t total = ops_tensor_numel(dst);
    select_flags s;
    ops_status st = s.of(op, mask, ixc_geom_bcast(mask, dst->ndim, dst->sizes), total);
    if (st != OPS_OK)
        return st;
    if (ops_tensor_numel(source) < s.count)
        return idx_masked_scatter_count_error(op, ops_tensor_numel(source), s.count);
    if (s.count == 0)
        return OPS_OK;
    ixc_by_size(ops_dtype_itemsize(dst->dtype), [&](auto tag) {
        typedef decltype(tag) T;
        OPS_LAUNCH(masked_scatter_kernel<T>, ixc_grid(total), IXC_BLOCK, 0, ixc_stream(dst), s.f(), s.at(), total,
                   (T *)ixc_ptr(dst), ixc_geom_of(dst), (const T *)ixc_ptr(source), ixc_geom_of(source));
    });
    return ops_cuda_check_launch(op);
}

// ---- index.Tensor, index_put ------------------------------------------------------------------

// The plan (index_check.h's adv_plan) as a kernel argument: where result element
// rctr reads in a tensor of self's sizes with strides st.
struct adv_dev_plan {
    int nd, rnd, bpos, bnd;
    int64_t rshape[OPS_MAX_DIMS];
    int64_t size[OPS_MAX_DIMS], st[OPS_MAX_DIMS];
    int rpos[OPS_MAX_DIMS];
    const void *idx[OPS_MAX_DIMS]; // NULL: dim not indexed
    bool i32[OPS_MAX_DIMS];
    int64_t ist[OPS_MAX_DIMS][OPS_MAX_DIMS];

    // The element offset (in the strided target) result element i reads or writes.
    __device__ int64_t operator()(int64_t i) const
    {
        int64_t rctr[OPS_MAX_DIMS];
        for (int d = rnd - 1; d >= 0; d--) {
            rctr[d] = i % rshape[d];
            i /= rshape[d];
        }
        int64_t off = 0;
        for (int k = 0; k < nd; k++) {
            if (idx[k] == nullptr) {
                off += rctr[rpos[k]] * st[k];
                continue;
            }
            int64_t e = 0;
            for (int j = 0; j < bnd; j++)
                e += rctr[bpos + j] * ist[k][j];
            int64_t v = ixc_read_index(idx[k], i32[k], e);
            if (v < 0)
                v += size[k];
            off += v * st[k];
        }
        return off;
    }
};

static adv_dev_plan
dev_plan(const adv_plan &p, const ops_tensor *self, const int64_t *strides)
{
    adv_dev_plan d;
    memset(&d, 0, sizeof d);
    d.nd = p.nd, d.rnd = p.rnd, d.bpos = p.bpos, d.bnd = p.bnd;
    memcpy(d.rshape, p.rshape, sizeof d.rshape);
    memcpy(d.rpos, p.rpos, sizeof d.rpos);
    memcpy(d.ist, p.ist, sizeof d.ist);
    for (int k = 0; k < p.nd; k++) {
        d.size[k] = self->sizes[k];
        d.st[k] = strides[k];
        d.idx[k] = p.idx[k] != NULL ? (const void *)ixc_ptr(p.idx[k]) : nullptr;
        d.i32[k] = p.idx[k] != NULL && p.idx[k]->dtype == OPS_INT32;
    }
    return d;
}

// Every index value of the plan checked on the device (the stub index_plan_check;
// the driver, kernels/index_advanced.c, builds the plan).
OPS_REGISTER_STUB(index_plan_check, CUDA, index_plan_check_cuda);
extern "C" ops_status
index_plan_check_cuda(const char *op, const ops_tensor *self, const adv_plan *p)
{
    ops_status st = OPS_OK;
    const int64_t nb = ops_shape_numel(p->bnd, p->bshape);
    for (int k = 0; k < p->nd && st == OPS_OK; k++) {
        const ops_tensor *t = p->idx[k];
        if (t == NULL)
            continue;
        ixc_geom g;
        g.nd = p->bnd;
        memcpy(g.sizes, p->bshape, sizeof g.sizes);
        memcpy(g.strides, p->ist[k], sizeof g.strides);
        int64_t pos, val = 0;
        const int64_t size = self->sizes[k];
        st = ixc_first_bad(op, self, ixc_ptr(t), t->dtype == OPS_INT32, g, nb, -size, size, &pos, &val);
        if (st == OPS_OK && pos >= 0)
            st = idx_index_error(op, IDX_ERR_BOUNDS, val, k, size);
    }
    return st;
}

template <class T>
__global__ void
index_gather_kernel(T *r, int64_t n, const T *self, adv_dev_plan p)
{
    IXC_FOR(i, n)
    r[i] = self[p(i)];
}

OPS_REGISTER_STUB(index_adv_gather_loop, CUDA, index_adv_gather_loop_cuda);
extern "C" ops_status
index_adv_gather_loop_cuda(const char *op, const adv_plan *p, const ops_tensor *self, ops_tensor *r)
{
    const int64_t n = ops_shape_numel(p->rnd, p->rshape);
    if (n == 0)
        return OPS_OK;
    const adv_dev_plan d = dev_plan(*p, self, self->strides);
    ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
        typedef decltype(tag) T;
        OPS_LAUNCH(index_gather_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(self), (T *)ixc_ptr(r), n,
                   (const T *)ixc_ptr(self), d);
    });
    return ops_cuda_check_launch(op);
}

// self cloned, then the values put (the last writer of each destination stores;
// accumulation in ixc_put_values' own buffer).
OPS_REGISTER_STUB(index_adv_put_loop, CUDA, index_adv_put_loop_cuda);
extern "C" ops_status
index_adv_put_loop_cuda(const char *op, const adv_plan *p, const ops_tensor *self, const ops_tensor *values,
                        bool accumulate, ops_tensor **result)
{
    ops_tensor *r = ixc_clone_as(op, self, self->ndim, self->sizes, self->dtype);
    if (r == NULL)
        return ops_last_status();
    const adv_dev_plan d = dev_plan(*p, self, r->strides);
    return ixc_put_values(op, r, d, ops_shape_numel(p->rnd, p->rshape), values,
                          ixc_geom_bcast(values, p->rnd, p->rshape), accumulate, result);
}

// Data-dependent indexing on CUDA: nonzero, argwhere, nonzero_numpy, where(cond),
// masked_select, masked_scatter, and advanced indexing index.Tensor / index_put
// (ports of kernels/cpu/index_masked.c and index_advanced.c, whose checks and
// indexing plan they share).
//
// Result sizes known only from the data are counted on the device: a flag per
// element, an exclusive prefix sum (ixc_exclusive_scan) that gives every selected
// element its place, the total read back; then the result is allocated and a second
// kernel fills it.  Elements are taken in row-major order, as on the CPU.
#include "index_cuda.cuh"

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

// nonzero(self): int64 [n, ndim], the coordinates of self's nonzero elements.
static ops_tensor *
nonzero_impl(const char *op, const ops_tensor *self)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    const ixc_geom g = ixc_geom_of(self);
    const int64_t total = ops_tensor_numel(self);
    select_flags s;
    if (s.of(op, self, g, total) != OPS_OK)
        return NULL;
    const int64_t rs[2] = {s.count, self->ndim};
    ixc_ref r(ixc_new(op, self, 2, rs, OPS_INT64));
    if (r.t == NULL)
        return NULL;
    if (s.count > 0 && self->ndim > 0) {
        OPS_LAUNCH(nonzero_fill_kernel, ixc_grid(total), IXC_BLOCK, 0, ixc_stream(self), s.f(), s.at(), g, total,
                   (int64_t *)ixc_ptr(r.t));
        if (ops_cuda_check_launch(op) != OPS_OK)
            return NULL;
    }
    return r.take();
}

static ops_tensor *
nonzero_of_mask(const char *op, const ops_tensor *mask)
{
    return nonzero_impl(op, mask);
}

extern "C" ops_tensor *
nonzero_cuda(const ops_tensor *self)
{
    return nonzero_impl("nonzero", self);
}

extern "C" ops_status
nonzero_out_cuda(const ops_tensor *self, ops_tensor *out)
{
    if (out->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "nonzero: Expected out tensor to have scalar type int64 but got scalar type %s",
                        ops_dtype_name(out->dtype));
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("nonzero", nonzero_impl("nonzero", self), out);
}

extern "C" ops_tensor *
argwhere_cuda(const ops_tensor *self)
{
    return nonzero_impl("argwhere", self);
}

// One int64 [n] tensor per dim of self (a 0-dim self counts as 1-D): views of the
// columns of nonzero(self), as the CPU's nonzero_tuple.
static ops_status
nonzero_tuple(const char *op, const ops_tensor *self, ops_tensor_vec *result)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_tensor_vec v = {NULL, 0};
    ixc_ref nz(nonzero_impl(op, self));
    ops_status st = nz.t != NULL ? OPS_OK : ops_last_status();
    const int nd = self->ndim ? self->ndim : 1;
    if (st == OPS_OK)
        st = ops_tensor_vec_init(op, &v, nd);
    for (int j = 0; st == OPS_OK && j < nd; j++) {
        if (self->ndim == 0) {
            // the single column of nonzero(self.unsqueeze(0)): zeros
            const int64_t n = nz.t->sizes[0];
            v.data[j] = ixc_new(op, self, 1, &n, OPS_INT64);
            if (v.data[j] != NULL && n > 0)
                st = ixc_memset(op, self, ixc_ptr(v.data[j]), 0, sizeof(int64_t));
        } else {
            v.data[j] = ops_tensor_new_view(nz.t, 1, nz.t->sizes, &nz.t->strides[0], nz.t->offset + j);
        }
        if (st == OPS_OK && v.data[j] == NULL)
            st = ops_last_status();
    }
    if (st != OPS_OK) {
        ops_tensor_vec_release(&v);
        return st;
    }
    *result = v;
    return OPS_OK;
}

extern "C" ops_status
nonzero_numpy_cuda(const ops_tensor *self, ops_tensor_vec *result)
{
    return nonzero_tuple("nonzero_numpy", self, result);
}

extern "C" ops_status
where_condition_cuda(const ops_tensor *condition, ops_tensor_vec *result)
{
    return nonzero_tuple("where", condition, result);
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

static ops_tensor *
masked_select_impl(const char *op, const ops_tensor *self, const ops_tensor *mask)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_select_mask(op, mask) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    const int64_t total = ops_shape_numel(nd, shape);
    select_flags s;
    if (s.of(op, mask, ixc_geom_bcast(mask, nd, shape), total) != OPS_OK)
        return NULL;
    ixc_ref r(ixc_new(op, self, 1, &s.count, self->dtype));
    if (r.t == NULL)
        return NULL;
    if (s.count > 0) {
        const ixc_geom sg = ixc_geom_bcast(self, nd, shape);
        ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
            typedef decltype(tag) T;
            OPS_LAUNCH(masked_select_kernel<T>, ixc_grid(total), IXC_BLOCK, 0, ixc_stream(self), s.f(), s.at(),
                       total, (const T *)ixc_ptr(self), sg, (T *)ixc_ptr(r.t));
        });
        if (ops_cuda_check_launch(op) != OPS_OK)
            return NULL;
    }
    return r.take();
}

extern "C" ops_tensor *
masked_select_cuda(const ops_tensor *self, const ops_tensor *mask)
{
    return masked_select_impl("masked_select", self, mask);
}

extern "C" ops_status
masked_select_out_cuda(const ops_tensor *self, const ops_tensor *mask, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("masked_select", masked_select_impl("masked_select", self, mask), out);
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
static ops_status
masked_scatter_into(const char *op, ops_tensor *dst, const ops_tensor *mask, const ops_tensor *source)
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

static ops_tensor *
masked_scatter_impl(const char *op, const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_masked_scatter(op, self, mask, source) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    ixc_ref r(ixc_new(op, self, nd, shape, self->dtype));
    if (r.t == NULL || ops_copy_values(op, r.t, self) != OPS_OK || masked_scatter_into(op, r.t, mask, source) != OPS_OK)
        return NULL;
    return r.take();
}

extern "C" ops_tensor *
masked_scatter_cuda(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    return masked_scatter_impl("masked_scatter", self, mask, source);
}

extern "C" ops_status
masked_scatter_out_cuda(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("masked_scatter", masked_scatter_impl("masked_scatter", self, mask, source), out);
}

extern "C" ops_status
masked_scatter_cuda_(ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    const char *op = "masked_scatter_";
    ops_cuda_device_guard guard(ixc_dev(self));
    ops_status st = idx_check_masked_scatter(op, self, mask, source);
    if (st == OPS_OK)
        st = idx_check_masked_scatter_inplace(op, self, mask);
    if (st == OPS_OK && (st = masked_scatter_into(op, self, mask, source)) == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
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

// The plan of self[indices] with every index value checked on the device.
static ops_status
plan_build(const char *op, const ops_tensor *self, ops_tensor_list indices, adv_plan *p)
{
    ops_status st = idx_plan_build(op, self, indices, nonzero_of_mask, p);
    if (st != OPS_OK)
        return st;
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
    if (st != OPS_OK)
        idx_plan_release(p);
    return st;
}

template <class T>
__global__ void
index_gather_kernel(T *r, int64_t n, const T *self, adv_dev_plan p)
{
    IXC_FOR(i, n)
    r[i] = self[p(i)];
}

static ops_tensor *
index_impl(const char *op, const ops_tensor *self, ops_tensor_list indices)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    adv_plan p;
    if (plan_build(op, self, indices, &p) != OPS_OK)
        return NULL;
    ixc_ref r(ixc_new(op, self, p.rnd, p.rshape, self->dtype));
    const int64_t n = ops_shape_numel(p.rnd, p.rshape);
    if (r.t != NULL && n > 0) {
        const adv_dev_plan d = dev_plan(p, self, self->strides);
        ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
            typedef decltype(tag) T;
            OPS_LAUNCH(index_gather_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(self), (T *)ixc_ptr(r.t), n,
                       (const T *)ixc_ptr(self), d);
        });
        if (ops_cuda_check_launch(op) != OPS_OK)
            ops_tensor_release(r.take());
    }
    idx_plan_release(&p);
    return r.take();
}

extern "C" ops_tensor *
index_tensor_cuda(const ops_tensor *self, ops_tensor_list indices)
{
    return index_impl("index", self, indices);
}

extern "C" ops_status
index_tensor_out_cuda(const ops_tensor *self, ops_tensor_list indices, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("index", index_impl("index", self, indices), out);
}

static ops_tensor *
index_put_impl(const char *op, const ops_tensor *self, ops_tensor_list indices, const ops_tensor *values,
               bool accumulate)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    ops_cuda_device_guard guard(ixc_dev(self));
    if (values->dtype != self->dtype) {
        ops_fail(OPS_ERR_DTYPE,
                 "%s: Index put requires the source and destination dtypes match, got %s for the destination and %s "
                 "for the source.",
                 op, ops_dtype_name(self->dtype), ops_dtype_name(values->dtype));
        return NULL;
    }
    adv_plan p;
    if (plan_build(op, self, indices, &p) != OPS_OK)
        return NULL;
    // values must broadcast to the indexing result's shape
    int nb;
    int64_t bs[OPS_MAX_DIMS];
    ops_tensor *res = NULL;
    if (ops_broadcast_shapes(op, "values", values->ndim, values->sizes, "result", p.rnd, p.rshape, &nb, bs) !=
            OPS_OK ||
        nb != p.rnd || memcmp(bs, p.rshape, (size_t)nb * sizeof(int64_t)) != 0) {
        ops_clear_error();
        ops_fail(OPS_ERR_SHAPE,
                 "%s: shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s", op,
                 ops_shape_str(values->ndim, values->sizes, b1, sizeof b1),
                 ops_shape_str(p.rnd, p.rshape, b2, sizeof b2));
    } else {
        ops_tensor *r = ixc_clone_as(op, self, self->ndim, self->sizes, self->dtype);
        if (r != NULL) {
            const adv_dev_plan d = dev_plan(p, self, r->strides);
            ixc_put_values(op, r, d, ops_shape_numel(p.rnd, p.rshape), values,
                           ixc_geom_bcast(values, p.rnd, p.rshape), accumulate, &res);
        }
    }
    idx_plan_release(&p);
    return res;
}

extern "C" ops_tensor *
index_put_cuda(const ops_tensor *self, ops_tensor_list indices, const ops_tensor *values, bool accumulate)
{
    return index_put_impl("index_put", self, indices, values, accumulate);
}

extern "C" ops_status
index_put_out_cuda(const ops_tensor *self, ops_tensor_list indices, const ops_tensor *values, bool accumulate,
                   ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out("index_put", index_put_impl("index_put", self, indices, values, accumulate), out);
}

extern "C" ops_status
index_put_cuda_(ops_tensor *self, ops_tensor_list indices, const ops_tensor *values, bool accumulate)
{
    const char *op = "index_put_";
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return ixc_write_inplace(op, self, index_put_impl(op, self, indices, values, accumulate));
}

// Scatter ops on CUDA: scatter (src, value, reduce, value_reduce), scatter_add and
// scatter_reduce.two with their out= and in-place forms (port of
// kernels/cpu/index_scatter.c, whose checks it calls).
//
// Determinism: the elements of index that can hit one destination differ only in
// their coordinate along dim (self[..., index[i][j][k], ...] for dim 1 shares i and
// k with its destination).  So one thread takes each column of index along dim and
// applies its elements in order: duplicates are processed in index order, as the
// CPU's row-major walk does ("last write wins" for plain scatter, the same sum and
// product order for the reductions), with no atomics, and the results are the CPU's
// bit for bit.  The accumulation buffer is the CPU's: contiguous, in the opmath
// dtype, converted into the result at the end.
#include "index_cuda.cuh"

// The columns of index along dim: position c (over index's dims but dim) has offsets
// ig/sg/ag.off(c) into index, src and the buffer; the column's j-th element is at
// + j * ist (index), + j * sst (src), and its destination is
// buffer[ag.off(c) + index_value * ast].
struct sc_columns {
    ixc_geom ig, sg, ag;
    int64_t ncol, len;
    int64_t ist, sst, ast;
};

template <class S, class A>
__global__ void
scatter_column_kernel(A *acc, const int64_t *idx, const S *src, sc_columns c, A val, A ident, int red,
                      bool include_self, int64_t *count)
{
    IXC_FOR(col, c.ncol)
    {
        const int64_t *const ip = idx + ixc_off(c.ig, col);
        const S *const sp = src != nullptr ? src + ixc_off(c.sg, col) : nullptr;
        A *const ap = acc + ixc_off(c.ag, col);
        if (!include_self) // touched elements start from the reduction's identity
            for (int64_t j = 0; j < c.len; j++)
                ap[ip[j * c.ist] * c.ast] = ident;
        for (int64_t j = 0; j < c.len; j++) {
            const int64_t k = ip[j * c.ist];
            A &a = ap[k * c.ast];
            const A v = sp != nullptr ? (A)ops_load(sp + j * c.sst) : val;
            switch (red) {
            case SC_ASSIGN: a = v; break;
            case SC_SUM:
            case SC_MEAN: a = ops_ix_add(a, v); break;
            case SC_PROD: a = ops_ix_mul(a, v); break;
            case SC_AMAX: a = OPS_IX_MAX(a, v); break;
            default: a = OPS_IX_MIN(a, v); break;
            }
            if (count != nullptr)
                count[ap - acc + k * c.ast]++;
        }
    }
}

// mean: the sum divided by the count (1 for untouched elements), floating sums
// rounded to self's dtype first as PyTorch does, integers by floor division.
template <class S, class A>
__global__ void
scatter_mean_kernel(A *acc, const int64_t *count, int64_t n, bool floating)
{
    IXC_FOR(i, n)
    {
        const int64_t c = count[i] ? count[i] : 1;
        if (floating) {
            S s;
            ops_store(&s, acc[i]);
            acc[i] = (A)(ops_load(&s) / (A)c);
        } else {
            const int64_t a = (int64_t)acc[i];
            int64_t q = a / c;
            if (a % c != 0 && a < 0)
                q--;
            acc[i] = (A)q;
        }
    }
}

__global__ void
scatter_count_init_kernel(int64_t *count, int64_t n, int64_t v)
{
    IXC_FOR(i, n)
    count[i] = v;
}

// index's columns along dim, with src (may be NULL) and the buffer acc (self's shape).
static sc_columns
columns_of(const ops_tensor *index, const ops_tensor *src, const ops_tensor *acc, int64_t dim)
{
    sc_columns c;
    memset(&c, 0, sizeof c);
    const int nd = index->ndim ? index->ndim : 1;
    int m = 0;
    c.ncol = 1;
    for (int d = 0; d < nd; d++) {
        const int64_t isz = index->ndim ? index->sizes[d] : 1;
        const int64_t ist = index->ndim ? index->strides[d] : 0;
        const int64_t sst = src != NULL && src->ndim ? src->strides[d] : 0;
        const int64_t ast = acc->ndim ? acc->strides[d] : 0;
        if (d == dim) {
            c.len = isz, c.ist = ist, c.sst = sst, c.ast = ast;
            continue;
        }
        c.ig.sizes[m] = c.sg.sizes[m] = c.ag.sizes[m] = isz;
        c.ig.strides[m] = ist, c.sg.strides[m] = sst, c.ag.strides[m] = ast;
        c.ncol *= isz;
        m++;
    }
    c.ig.nd = c.sg.nd = c.ag.nd = m;
    return c;
}

// The result of scatter as a new contiguous tensor of self's dtype and shape, or NULL
// with the error set.  src NULL means value.
static ops_tensor *
scatter_compute(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                ops_scalar value, sc_reduce red, bool include_self)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_scatter(op, self, &dim, index, src) != OPS_OK)
        return NULL;
    const int64_t n = ops_tensor_numel(index), numel = ops_tensor_numel(self);
    const int64_t bound = self->ndim ? self->sizes[dim] : 1;
    if (n > 0 && ixc_check_index(op, index, 0, bound, IDX_ERR_BOUNDS, dim, bound) != OPS_OK)
        return NULL;
    const ops_dtype acc_dt = ixc_opmath_dtype(self->dtype);
    ixc_ref acc(ixc_clone_as(op, self, self->ndim, self->sizes, acc_dt));
    if (acc.t == NULL)
        return NULL;
    if (n == 0)
        return ixc_convert(op, acc.take(), self->dtype);
    ixc_buf count;
    if (red == SC_MEAN) {
        if (!count.alloc(op, self, numel, OPS_INT64))
            return NULL;
        OPS_LAUNCH(scatter_count_init_kernel, ixc_grid(numel), IXC_BLOCK, 0, ixc_stream(self), count.as<int64_t>(),
                   numel, (int64_t)(include_self ? 1 : 0));
        if (ops_cuda_check_launch(op) != OPS_OK)
            return NULL;
    }
    const sc_columns c = columns_of(index, src, acc.t, dim);
    const ops_scalar ident_s = idx_reduce_identity(red, acc_dt);
    const bool floating = ops_dtype_is_floating(self->dtype);
    const ops_status st = [&]() -> ops_status {
        OPS_DISPATCH_ALL(self->dtype, op, {
            scalar_t vs;
            ops_scalar_store(value, self->dtype, &vs);
            const opmath_t val = ops_load(&vs);
            opmath_t ident;
            ops_scalar_store(ident_s, acc_dt, &ident);
            OPS_LAUNCH((scatter_column_kernel<scalar_t, opmath_t>), ixc_grid(c.ncol), IXC_BLOCK, 0, ixc_stream(self),
                       (opmath_t *)ixc_ptr(acc.t), (const int64_t *)ixc_ptr(index),
                       src != NULL ? (const scalar_t *)ixc_ptr(src) : (const scalar_t *)nullptr, c, val, ident,
                       (int)red, include_self, red == SC_MEAN ? count.as<int64_t>() : (int64_t *)nullptr);
            OPS_CUDA_CHECK_LAUNCH(op);
            if (red == SC_MEAN) {
                OPS_LAUNCH((scatter_mean_kernel<scalar_t, opmath_t>), ixc_grid(numel), IXC_BLOCK, 0,
                           ixc_stream(self), (opmath_t *)ixc_ptr(acc.t), (const int64_t *)count.as<int64_t>(), numel,
                           floating);
                OPS_CUDA_CHECK_LAUNCH(op);
            }
        });
        return OPS_OK;
    }();
    if (st != OPS_OK)
        return NULL;
    return ixc_convert(op, acc.take(), self->dtype);
}

static ops_tensor *
scatter_reduce_str(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index,
                   const ops_tensor *src, ops_scalar value, const char *reduce, bool new_options, bool include_self)
{
    sc_reduce red = SC_ASSIGN;
    if (idx_parse_reduce(op, self, reduce, new_options, &red) != OPS_OK)
        return NULL;
    return scatter_compute(op, self, dim, index, src, value, red, include_self);
}

// The arguments of one scatter call, for the in-place and out= wrappers.
struct sc_call {
    int64_t dim;
    const ops_tensor *index, *src;
    ops_scalar value;
    const char *reduce; // NULL: plain scatter / scatter_add (red)
    sc_reduce red;
    bool new_options, include_self;
};

static ops_tensor *
sc_functional(const char *op, const ops_tensor *self, const sc_call &a)
{
    if (a.reduce != NULL)
        return scatter_reduce_str(op, self, a.dim, a.index, a.src, a.value, a.reduce, a.new_options,
                                  a.include_self);
    return scatter_compute(op, self, a.dim, a.index, a.src, a.value, a.red, a.include_self);
}

static ops_status
sc_out(const char *op, const ops_tensor *self, const sc_call &a, ops_tensor *out)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    return ops_write_out(op, sc_functional(op, self, a), out);
}

static ops_status
sc_inplace(const char *op, ops_tensor *self, const sc_call &a)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return ixc_write_inplace(op, self, sc_functional(op, self, a));
}

static sc_call
plain(int64_t dim, const ops_tensor *index, const ops_tensor *src, ops_scalar value, sc_reduce red)
{
    return sc_call{dim, index, src, value, NULL, red, false, true};
}

static sc_call
reducing(int64_t dim, const ops_tensor *index, const ops_tensor *src, ops_scalar value, const char *reduce,
         bool new_options, bool include_self)
{
    return sc_call{dim, index, src, value, reduce, SC_ASSIGN, new_options, include_self};
}

static const ops_scalar no_value = ixc_scalar_int(0);

// ---- scatter.src / scatter.value --------------------------------------------------------

extern "C" ops_tensor *
scatter_src_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return sc_functional("scatter", self, plain(dim, index, src, no_value, SC_ASSIGN));
}

extern "C" ops_status
scatter_src_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                     ops_tensor *out)
{
    return sc_out("scatter", self, plain(dim, index, src, no_value, SC_ASSIGN), out);
}

extern "C" ops_status
scatter_src_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return sc_inplace("scatter_", self, plain(dim, index, src, no_value, SC_ASSIGN));
}

extern "C" ops_tensor *
scatter_value_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return sc_functional("scatter", self, plain(dim, index, NULL, value, SC_ASSIGN));
}

extern "C" ops_status
scatter_value_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                       ops_tensor *out)
{
    return sc_out("scatter", self, plain(dim, index, NULL, value, SC_ASSIGN), out);
}

extern "C" ops_status
scatter_value_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return sc_inplace("scatter_", self, plain(dim, index, NULL, value, SC_ASSIGN));
}

// ---- scatter.reduce / scatter.value_reduce ("add" | "multiply") ---------------------------

extern "C" ops_tensor *
scatter_reduce_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                    const char *reduce)
{
    return sc_functional("scatter", self, reducing(dim, index, src, no_value, reduce, false, true));
}

extern "C" ops_status
scatter_reduce_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                        const char *reduce, ops_tensor *out)
{
    return sc_out("scatter", self, reducing(dim, index, src, no_value, reduce, false, true), out);
}

extern "C" ops_status
scatter_reduce_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                     const char *reduce)
{
    return sc_inplace("scatter_", self, reducing(dim, index, src, no_value, reduce, false, true));
}

extern "C" ops_tensor *
scatter_value_reduce_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                          const char *reduce)
{
    return sc_functional("scatter", self, reducing(dim, index, NULL, value, reduce, false, true));
}

extern "C" ops_status
scatter_value_reduce_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                              const char *reduce, ops_tensor *out)
{
    return sc_out("scatter", self, reducing(dim, index, NULL, value, reduce, false, true), out);
}

extern "C" ops_status
scatter_value_reduce_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                           const char *reduce)
{
    return sc_inplace("scatter_", self, reducing(dim, index, NULL, value, reduce, false, true));
}

// ---- scatter_add ----------------------------------------------------------------------------

extern "C" ops_tensor *
scatter_add_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return sc_functional("scatter_add", self, plain(dim, index, src, no_value, SC_SUM));
}

extern "C" ops_status
scatter_add_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                     ops_tensor *out)
{
    return sc_out("scatter_add", self, plain(dim, index, src, no_value, SC_SUM), out);
}

extern "C" ops_status
scatter_add_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return sc_inplace("scatter_add_", self, plain(dim, index, src, no_value, SC_SUM));
}

// ---- scatter_reduce.two ------------------------------------------------------------------------

extern "C" ops_tensor *
scatter_reduce_two_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                        const char *reduce, bool include_self)
{
    return sc_functional("scatter_reduce", self, reducing(dim, index, src, no_value, reduce, true, include_self));
}

extern "C" ops_status
scatter_reduce_two_out_cuda(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                            const char *reduce, bool include_self, ops_tensor *out)
{
    return sc_out("scatter_reduce", self, reducing(dim, index, src, no_value, reduce, true, include_self), out);
}

extern "C" ops_status
scatter_reduce_two_cuda_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                         const char *reduce, bool include_self)
{
    return sc_inplace("scatter_reduce_", self, reducing(dim, index, src, no_value, reduce, true, include_self));
}

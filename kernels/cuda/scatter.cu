// The scatter ops' CUDA loop: the stub scatter_loop of kernels/index_scatter.h (the driver,
// with the checks, the buffer and the out= and in-place forms, is kernels/index_scatter.c;
// the CPU loop kernels/cpu/index_scatter.c).
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
#include "kernels/index_scatter.h"

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

// acc (self's contiguous opmath copy, on the device) gets the scatter; index is checked
// (the driver).
OPS_REGISTER_STUB(scatter_loop, CUDA, scatter_loop_cuda);
extern "C" ops_status
scatter_loop_cuda(const char *op, ops_tensor *acc, const ops_tensor *self, int64_t dim, const ops_tensor *index,
                  const ops_tensor *src, ops_scalar value, sc_reduce red, bool include_self)
{
    const int64_t numel = ops_tensor_numel(self);
    const ops_dtype acc_dt = acc->dtype;
    if (ops_tensor_numel(index) == 0)
        return OPS_OK;
    ixc_buf count;
    if (red == SC_MEAN) {
        if (!count.alloc(op, self, numel, OPS_INT64))
            return ops_last_status();
        OPS_LAUNCH(scatter_count_init_kernel, ixc_grid(numel), IXC_BLOCK, 0, ixc_stream(self), count.as<int64_t>(),
                   numel, (int64_t)(include_self ? 1 : 0));
        if (ops_cuda_check_launch(op) != OPS_OK)
            return ops_last_status();
    }
    const sc_columns c = columns_of(index, src, acc, dim);
    const ops_scalar ident_s = idx_reduce_identity(red, acc_dt);
    const bool floating = ops_dtype_is_floating(self->dtype);
    OPS_DISPATCH_ALL(self->dtype, op, {
        scalar_t vs;
        ops_scalar_store(value, self->dtype, &vs);
        const opmath_t val = ops_load(&vs);
        opmath_t ident;
        ops_scalar_store(ident_s, acc_dt, &ident);
        OPS_LAUNCH((scatter_column_kernel<scalar_t, opmath_t>), ixc_grid(c.ncol), IXC_BLOCK, 0, ixc_stream(self),
                   (opmath_t *)ixc_ptr(acc), (const int64_t *)ixc_ptr(index),
                   src != NULL ? (const scalar_t *)ixc_ptr(src) : (const scalar_t *)nullptr, c, val, ident, (int)red,
                   include_self, red == SC_MEAN ? count.as<int64_t>() : (int64_t *)nullptr);
        OPS_CUDA_CHECK_LAUNCH(op);
        if (red == SC_MEAN) {
            OPS_LAUNCH((scatter_mean_kernel<scalar_t, opmath_t>), ixc_grid(numel), IXC_BLOCK, 0, ixc_stream(self),
                       (opmath_t *)ixc_ptr(acc), (const int64_t *)count.as<int64_t>(), numel, floating);
            OPS_CUDA_CHECK_LAUNCH(op);
        }
    });
    return OPS_OK;
}

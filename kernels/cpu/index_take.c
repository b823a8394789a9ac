/* Flat-index and repeat ops (CPU): the loops of take and put (the stubs of
 * kernels/index_loops.h; the driver, with the checks, is kernels/index_take.c), and
 * repeat_interleave's (.Tensor, .self_Tensor, .self_int; the same driver counts).
 *
 * take and put index self as if it were flattened (row-major), negative indices
 * counting from the end (the driver checked every index). */
#include <inttypes.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_loops.h"
#include "index_util.h"
#include "ops_kernels_index_take.h"

/* ---- take (the driver: kernels/index_take.c) ---------------------------------------------- */

OPS_REGISTER_STUB(index_take_loop, CPU, index_take_loop_cpu);
ops_status
index_take_loop_cpu(const char *op, ops_tensor *r, const ops_tensor *self, const ops_tensor *index)
{
    const int64_t numel = ops_tensor_numel(self), n = ops_tensor_numel(index);
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sb = (const char *)self->storage->data;
    char *rp = (char *)ops_tensor_data_ptr(r);
    /* contiguous operands skip the per-element unravelling */
    const int64_t *ip = ops_tensor_is_contiguous(index) ? (const int64_t *)index->storage->data + index->offset : NULL;
    const bool self_contig = ops_tensor_is_contiguous(self);
    const int64_t nchunks = idx_num_chunks(n);
    /* each index is checked where it is read (no pass of its own over index): a value
     * outside [-numel, numel) is skipped and the smallest such position reported */
    int64_t bad = n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (nchunks > 1) reduction(min : bad)
#endif
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t lo = n / nchunks * c + (c < n % nchunks ? c : n % nchunks);
        const int64_t hi = lo + n / nchunks + (c < n % nchunks ? 1 : 0);
        for (int64_t i = lo; i < hi; i++) {
            int64_t k = ip != NULL ? ip[i] : idx_read_i64(index, i);
            if (k < -numel || k >= numel) {
                bad = i < bad ? i : bad;
                continue;
            }
            if (k < 0)
                k += numel;
            const int64_t off = self_contig ? self->offset + k : idx_linear_offset(self, k);
            idx_copy_elem(rp + (size_t)i * is, sb + (size_t)off * is, is);
        }
    }
    if (bad < n)
        return idx_index_error(op, IDX_ERR_FLAT, ip != NULL ? ip[bad] : idx_read_i64(index, bad), 0, numel);
    return OPS_OK;
}

/* ---- put (the driver: kernels/index_take.c) ------------------------------------------------ */

/* acc (contiguous, opmath dtype of source's dtype)[index[i]] = (or +=) source[i]. */
static ops_status
put_typed(const char *op, ops_tensor *acc, const ops_tensor *index, const ops_tensor *source, bool accumulate,
          int64_t numel)
{
    const int64_t n = ops_tensor_numel(index);
    /* walk index and source together, each in its own row-major order */
    int64_t ictr[OPS_MAX_DIMS] = {0}, ioff[1] = {index->offset};
    int64_t sctr[OPS_MAX_DIMS] = {0}, soff[1] = {source->offset};
    const int64_t *ist[1] = {index->strides}, *sst[1] = {source->strides};
    const int64_t *ip = (const int64_t *)index->storage->data;
    OPS_DISPATCH_ALL(source->dtype, op, {
        opmath_t *a = (opmath_t *)ops_tensor_data_ptr(acc);
        const scalar_t *sp = (const scalar_t *)source->storage->data;
        for (int64_t i = 0; i < n; i++) {
            int64_t k = ip[ioff[0]];
            if (k < 0)
                k += numel;
            const opmath_t v = OPS_LOAD(sp + soff[0]);
            a[k] = accumulate ? SC_ADD(a[k], v) : v;
            idx_walk_next(index->ndim, index->sizes, ictr, 1, ist, ioff);
            idx_walk_next(source->ndim, source->sizes, sctr, 1, sst, soff);
        }
    });
    return OPS_OK;
}

/* The result computed into a contiguous buffer of the opmath dtype (float for
 * float16/bfloat16), so accumulated duplicates round once, then converted. */
OPS_REGISTER_STUB(index_put_flat_loop, CPU, index_put_flat_loop_cpu);
ops_status
index_put_flat_loop_cpu(const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source,
                        bool accumulate, ops_tensor **result)
{
    const int64_t numel = ops_tensor_numel(self);
    ops_tensor *acc, *r;
    ops_status st = idx_accum_begin(op, self, cpu_opmath_dtype(self->dtype), &acc, &r);
    if (st != OPS_OK)
        return st;
    st = put_typed(op, acc, index, source, accumulate, numel);
    *result = idx_accum_end(op, st, acc, r);
    return *result != NULL ? OPS_OK : ops_last_status();
}

/* ---- repeat_interleave (the driver: kernels/index_take.c) ------------------------------- */

OPS_REGISTER_STUB(index_repeat_fill_loop, CPU, index_repeat_fill_loop_cpu);
ops_status
index_repeat_fill_loop_cpu(const char *op, ops_tensor *r, const int64_t *reps, int64_t n, int64_t total)
{
    (void)op;
    (void)total;
    idx_repeat_fill(r->dtype, reps, n, ops_tensor_data_ptr(r));
    return OPS_OK;
}

/* Slice i of the input (dim removed) goes to reps[i] consecutive slices of the result;
 * dim < 0: self flattened (a contiguous copy first when it is not contiguous). */
OPS_REGISTER_STUB(index_repeat_slices_loop, CPU, index_repeat_slices_loop_cpu);
ops_status
index_repeat_slices_loop_cpu(const char *op, const ops_tensor *self, int64_t dim, const int64_t *reps, int64_t total,
                             ops_tensor **result)
{
    ops_tensor *flat = NULL, *r = NULL;
    /* the input's geometry over base's storage: self, or self flattened */
    const ops_tensor *base = self;
    int nd = self->ndim;
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS], offset = self->offset;
    if (dim < 0) {
        dim = 0;
        nd = 1;
        sizes[0] = ops_tensor_numel(self);
        strides[0] = self->ndim == 1 ? self->strides[0] : 1;
        if (self->ndim > 1 && !ops_tensor_is_contiguous(self)) {
            flat = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device);
            if (flat == NULL || ops_copy_values(op, flat, self) != OPS_OK)
                goto fail;
            base = flat;
            offset = flat->offset;
        }
    } else {
        memcpy(sizes, self->sizes, (size_t)nd * sizeof(int64_t));
        memcpy(strides, self->strides, (size_t)nd * sizeof(int64_t));
    }
    const int64_t size = sizes[dim];
    int64_t rsizes[OPS_MAX_DIMS];
    memcpy(rsizes, sizes, (size_t)nd * sizeof(int64_t));
    rsizes[dim] = total;
    r = ops_tensor_new(op, nd, rsizes, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        goto fail;
    int64_t ssz[OPS_MAX_DIMS], sst[OPS_MAX_DIMS], rst[OPS_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (d == dim)
            continue;
        ssz[m] = sizes[d];
        sst[m] = strides[d];
        rst[m++] = r->strides[d];
    }
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *bb = (const char *)base->storage->data;
    char *rb = (char *)r->storage->data;
    for (int64_t i = 0, j = 0; i < size; i++) {
        const int64_t soff = offset + i * strides[dim];
        for (int64_t k = 0; k < reps[i]; k++, j++) {
            const int64_t roff = r->offset + j * r->strides[dim];
            if (m == 0) {
                memcpy(rb + (size_t)roff * is, bb + (size_t)soff * is, is);
                continue;
            }
            ops_tensor src = ops_borrowed_view(base, m, ssz, sst, soff);
            ops_tensor dst = ops_borrowed_view(r, m, ssz, rst, roff);
            if (ops_copy_values(op, &dst, &src) != OPS_OK)
                goto fail;
        }
    }
    ops_tensor_release(flat);
    *result = r;
    return OPS_OK;
fail:
    ops_tensor_release(flat);
    ops_tensor_release(r);
    return ops_last_status();
}

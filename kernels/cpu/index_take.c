/* Flat-index and repeat ops (CPU): take, put / put_, repeat_interleave (.Tensor,
 * .self_Tensor, .self_int).
 *
 * take and put index self as if it were flattened (row-major), negative indices
 * counting from the end.  Every index is checked before anything is allocated or
 * written.  put computes into a contiguous buffer of the opmath dtype (float for
 * float16/bfloat16), so accumulated duplicates round once, then converts into the
 * result or self. */
#include <inttypes.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_check.h"
#include "index_util.h"
#include "ops_kernels_index_take.h"

/* Every index in [-numel, numel): PyTorch's take/put message otherwise. */
static ops_status
check_flat_indices(const char *op, const ops_tensor *index, int64_t numel)
{
    const int64_t n = ops_tensor_numel(index);
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = idx_read_i64(index, i);
        if (k < -numel || k >= numel)
            return idx_index_error(op, IDX_ERR_FLAT, k, 0, numel);
    }
    return OPS_OK;
}

/* ---- take -------------------------------------------------------------------------------- */

static ops_tensor *
take_impl(const char *op, const ops_tensor *self, const ops_tensor *index)
{
    if (idx_check_take(op, self, index) != OPS_OK)
        return NULL;
    const int64_t numel = ops_tensor_numel(self), n = ops_tensor_numel(index);
    if (check_flat_indices(op, index, numel) != OPS_OK)
        return NULL;
    ops_tensor *r = ops_tensor_new(op, index->ndim, index->sizes, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return NULL;
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sb = (const char *)self->storage->data;
    char *rp = (char *)ops_tensor_data_ptr(r);
    /* contiguous operands skip the per-element unravelling */
    const int64_t *ip = ops_tensor_is_contiguous(index) ? (const int64_t *)index->storage->data + index->offset : NULL;
    const bool self_contig = ops_tensor_is_contiguous(self);
    const int64_t nchunks = idx_num_chunks(n);
    IDX_PARALLEL_FOR_
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t lo = n / nchunks * c + (c < n % nchunks ? c : n % nchunks);
        const int64_t hi = lo + n / nchunks + (c < n % nchunks ? 1 : 0);
        for (int64_t i = lo; i < hi; i++) {
            int64_t k = ip != NULL ? ip[i] : idx_read_i64(index, i);
            if (k < 0)
                k += numel;
            const int64_t off = self_contig ? self->offset + k : idx_linear_offset(self, k);
            idx_copy_elem(rp + (size_t)i * is, sb + (size_t)off * is, is);
        }
    }
    return r;
}

ops_tensor *
take_cpu(const ops_tensor *self, const ops_tensor *index)
{
    return take_impl("take", self, index);
}

ops_status
take_out_cpu(const ops_tensor *self, const ops_tensor *index, ops_tensor *out)
{
    return ops_write_out("take", take_impl("take", self, index), out);
}

/* ---- put ---------------------------------------------------------------------------------- */

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

static ops_tensor *
put_compute(const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source,
            bool accumulate)
{
    if (idx_check_put(op, self, index, source) != OPS_OK)
        return NULL;
    const int64_t numel = ops_tensor_numel(self);
    if (check_flat_indices(op, index, numel) != OPS_OK)
        return NULL;
    const ops_dtype acc_dt = cpu_opmath_dtype(self->dtype);
    ops_tensor *acc = ops_tensor_new(op, self->ndim, self->sizes, NULL, acc_dt, self->storage->device);
    ops_tensor *r = NULL;
    if (acc == NULL || ops_copy_values(op, acc, self) != OPS_OK)
        goto fail;
    if (acc_dt != self->dtype &&
        (r = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device)) == NULL)
        goto fail;
    if (put_typed(op, acc, index, source, accumulate, numel) != OPS_OK)
        goto fail;
    if (r == NULL)
        return acc;
    if (ops_copy_values(op, r, acc) != OPS_OK)
        goto fail;
    ops_tensor_release(acc);
    return r;
fail:
    ops_tensor_release(acc);
    ops_tensor_release(r);
    return NULL;
}

ops_tensor *
put_cpu(const ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    return put_compute("put", self, index, source, accumulate);
}

ops_status
put_cpu_(ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    const char *op = "put_";
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    ops_tensor *r = put_compute(op, self, index, source, accumulate);
    if (r == NULL)
        return ops_last_status();
    ops_status st = ops_copy_values(op, self, r);
    ops_tensor_release(r);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

/* ---- repeat_interleave ---------------------------------------------------------------------- */

ops_tensor *
repeat_interleave_tensor_cpu(const ops_tensor *repeats, const int64_t *output_size)
{
    const char *op = "repeat_interleave";
    int64_t *reps, total;
    if (idx_repeat_tensor_counts(op, repeats, output_size, &reps, &total) != OPS_OK)
        return NULL;
    ops_tensor *r = ops_tensor_new(op, 1, &total, NULL, repeats->dtype, repeats->storage->device);
    if (r != NULL)
        idx_repeat_fill(repeats->dtype, reps, repeats->sizes[0], ops_tensor_data_ptr(r));
    ops_host_free(reps);
    return r;
}

/* self's slices along dim (or its elements, flattened, when dim is NULL) repeated
 * reps[i] times each; repeats is a tensor (0-dim or one element: the same count for
 * every slice), or NULL for the int rep_int. */
static ops_tensor *
repeat_interleave_self(const char *op, const ops_tensor *self, const ops_tensor *repeats, int64_t rep_int,
                       const int64_t *dim_opt, const int64_t *output_size)
{
    ops_tensor *flat = NULL, *r = NULL;
    int64_t *reps = NULL, dim, total;
    if (idx_repeat_counts(op, self, repeats, rep_int, dim_opt, output_size, &reps, &dim, &total) != OPS_OK)
        return NULL;
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
    /* slice i of the input (dim removed) goes to reps[i] consecutive slices of r */
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
    ops_host_free(reps);
    ops_tensor_release(flat);
    return r;
fail:
    ops_host_free(reps);
    ops_tensor_release(flat);
    ops_tensor_release(r);
    return NULL;
}

ops_tensor *
repeat_interleave_self_tensor_cpu(const ops_tensor *self, const ops_tensor *repeats, const int64_t *dim,
                                  const int64_t *output_size)
{
    return repeat_interleave_self("repeat_interleave", self, repeats, 0, dim, output_size);
}

ops_tensor *
repeat_interleave_self_int_cpu(const ops_tensor *self, int64_t repeats, const int64_t *dim,
                               const int64_t *output_size)
{
    return repeat_interleave_self("repeat_interleave", self, NULL, repeats, dim, output_size);
}

ops_status
repeat_interleave_tensor_out_cpu(const ops_tensor *repeats, const int64_t *output_size, ops_tensor *out)
{
    return ops_write_out("repeat_interleave", repeat_interleave_tensor_cpu(repeats, output_size), out);
}

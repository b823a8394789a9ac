/* Indexing ops (CPU): the loops of index_select, gather and masked_fill (the stubs of
 * kernels/index_loops.h; the drivers, with the checks and allocation, are
 * kernels/index.c), and the CPU's check of index values (the stub idx_check_values).
 *
 * Elements are moved as bytes (any dtype) through their strides; index_select copies
 * whole slices as bytes (ops_copy_values() over view headers on the stack where the
 * result's dtype differs from self's). */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_loops.h"
#include "ops_dispatch.h"
#include "ops_kernels_index.h"

/* Element offset (in elements, from the storage start) of t's linear-th element
 * in row-major order. */
static int64_t
element_offset(const ops_tensor *t, int64_t linear)
{
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (linear % t->sizes[d]) * t->strides[d];
        linear /= t->sizes[d];
    }
    return off;
}

/* The linear-th element of an int32 or int64 tensor. */
static int64_t
read_index(const ops_tensor *t, int64_t linear)
{
    const char *p = (const char *)t->storage->data + element_offset(t, linear) * (int64_t)ops_dtype_itemsize(t->dtype);
    if (t->dtype == OPS_INT32) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* idx_check_values on the CPU: index walked in row-major order, the first value
 * outside [lo, hi) reported. */
OPS_REGISTER_STUB(idx_check_values, CPU, idx_check_values_cpu);
ops_status
idx_check_values_cpu(const char *op, const ops_tensor *index, int64_t lo, int64_t hi, idx_err_kind kind,
                     int64_t dim, int64_t size)
{
    const int64_t n = ops_tensor_numel(index);
    if (n == 0)
        return OPS_OK;
    const bool i32 = index->dtype == OPS_INT32;
    const char *base = (const char *)index->storage->data;
    int64_t ctr[OPS_MAX_DIMS] = {0}, off = index->offset;
    for (int64_t i = 0; i < n; i++) {
        int64_t k;
        if (i32) {
            int32_t v;
            memcpy(&v, base + off * 4, 4);
            k = v;
        } else {
            memcpy(&k, base + off * 8, 8);
        }
        if (k < lo || k >= hi)
            return idx_index_error(op, kind, k, dim, size);
        for (int d = index->ndim - 1; d >= 0; d--) {
            if (++ctr[d] < index->sizes[d]) {
                off += index->strides[d];
                break;
            }
            off -= (index->sizes[d] - 1) * index->strides[d];
            ctr[d] = 0;
        }
    }
    return OPS_OK;
}

/* ---- index_select ------------------------------------------------------------------- */

#ifdef _OPENMP
#define ISEL_PARALLEL_FOR_                                                                  \
    _Pragma("omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1) reduction(min : bad)")
#else
#define ISEL_PARALLEL_FOR_
#endif

/* Whether the m dims (sizes, strides in elements) are row-major contiguous. */
static bool
isel_dense(int m, const int64_t *sizes, const int64_t *st)
{
    int64_t expect = 1;
    for (int d = m - 1; d >= 0; d--) {
        if (sizes[d] != 1 && st[d] != expect)
            return false;
        expect *= sizes[d];
    }
    return true;
}

/* One element of `is` bytes; the common sizes as one load and store. */
static inline void
isel_elem(char *dst, const char *src, size_t is)
{
    switch (is) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, is); break;
    }
}

/* index_select as bytes when self and the result share a dtype: slice i of r is slice
 * index[i] of self, copied whole (memcpy) where both slices are dense, else element by
 * element through the strides.  A per-slice ops_copy_values() built an iterator per
 * index (700 ns per index of a 1-D self).  Each index is checked where it is read (a
 * separate pass over the index first made index_select of 1M elements 1.5x torch): a
 * value outside [0, size of dim) is skipped, and the first position holding one (the
 * smallest i, whichever thread saw it) is returned; n when every value is in range. */
static int64_t
isel_bytes(ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index, int64_t n, int m,
           const int64_t *sizes, const int64_t *sst, const int64_t *rst, int64_t slice)
{
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sbase = (const char *)self->storage->data + self->offset * (int64_t)is;
    char *rbase = (char *)r->storage->data + r->offset * (int64_t)is;
    const int64_t sdim = self->strides[dim], rdim = r->strides[dim], size = self->sizes[dim];
    const bool dense = isel_dense(m, sizes, sst) && isel_dense(m, sizes, rst);
    const int nthreads = n * slice >= OPS_GRAIN_SIZE ? ops_get_num_threads() : 1;
    (void)nthreads;
    /* index is 0-d or 1-d (the driver checked): its i-th value at ibase + i * istride */
    const size_t iis = ops_dtype_itemsize(index->dtype);
    const char *ibase = (const char *)index->storage->data + index->offset * (int64_t)iis;
    const int64_t istride = index->ndim ? index->strides[0] : 0;
    const bool i32 = index->dtype == OPS_INT32;
    int64_t bad = n;
#define ISEL_INDEX_(i)                                                                   \
    (i32 ? (int64_t)((const int32_t *)ibase)[(i) * istride] : ((const int64_t *)ibase)[(i) * istride])
    if (dense && slice == 1 && (is == 4 || is == 8)) {
        /* a gather of elements: the common case of a 1-d self, one typed loop */
        if (is == 4 && sdim == 1 && rdim == 1 && istride == 1 && !i32 && size > 0) {
            /* the commonest form (a 1-D float32/int32 self, int64 indices) with unit
             * strides the compiler can see: out-of-range values read element 0 (in
             * range: size > 0) and are recorded without a branch around the copy */
            const uint32_t *sp = (const uint32_t *)(const void *)sbase;
            uint32_t *rp = (uint32_t *)(void *)rbase;
            const int64_t *ip = (const int64_t *)(const void *)ibase;
            ISEL_PARALLEL_FOR_
            for (int64_t i = 0; i < n; i++) {
                const int64_t k = ip[i];
                const bool ok = (uint64_t)k < (uint64_t)size;
                rp[i] = sp[ok ? k : 0];
                bad = ok || i >= bad ? bad : i;
            }
        } else if (is == 4) {
            const uint32_t *sp = (const uint32_t *)(const void *)sbase;
            uint32_t *rp = (uint32_t *)(void *)rbase;
            ISEL_PARALLEL_FOR_
            for (int64_t i = 0; i < n; i++) {
                const int64_t k = ISEL_INDEX_(i);
                if ((uint64_t)k >= (uint64_t)size) {
                    bad = i < bad ? i : bad;
                    continue;
                }
                rp[i * rdim] = sp[k * sdim];
            }
        } else {
            const uint64_t *sp = (const uint64_t *)(const void *)sbase;
            uint64_t *rp = (uint64_t *)(void *)rbase;
            ISEL_PARALLEL_FOR_
            for (int64_t i = 0; i < n; i++) {
                const int64_t k = ISEL_INDEX_(i);
                if ((uint64_t)k >= (uint64_t)size) {
                    bad = i < bad ? i : bad;
                    continue;
                }
                rp[i * rdim] = sp[k * sdim];
            }
        }
        return bad;
    }
    ISEL_PARALLEL_FOR_
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = ISEL_INDEX_(i);
        if ((uint64_t)k >= (uint64_t)size) {
            bad = i < bad ? i : bad;
            continue;
        }
        const char *src = sbase + k * sdim * (int64_t)is;
        char *dst = rbase + i * rdim * (int64_t)is;
        if (dense) {
            if (slice == 1)
                isel_elem(dst, src, is);
            else
                memcpy(dst, src, (size_t)slice * is);
            continue;
        }
        int64_t ctr[OPS_MAX_DIMS] = {0}, so = 0, ro = 0;
        for (int64_t j = 0; j < slice; j++) {
            isel_elem(dst + ro * (int64_t)is, src + so * (int64_t)is, is);
            for (int d = m - 1; d >= 0; d--) {
                if (++ctr[d] < sizes[d]) {
                    so += sst[d];
                    ro += rst[d];
                    break;
                }
                so -= (sizes[d] - 1) * sst[d];
                ro -= (sizes[d] - 1) * rst[d];
                ctr[d] = 0;
            }
        }
    }
#undef ISEL_INDEX_
    return bad;
}

OPS_REGISTER_STUB(index_select_loop, CPU, index_select_loop_cpu);
ops_status
index_select_loop_cpu(const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    if (self->ndim == 0) {
        /* the one element (index checked to hold one 0) */
        const int64_t one = 1;
        ops_tensor src = ops_borrowed_view(self, 0, &one, &one, self->offset);
        return ops_copy_values(op, r, &src);
    }
    const int64_t n = ops_tensor_numel(index);
    int64_t sizes[OPS_MAX_DIMS], sst[OPS_MAX_DIMS], rst[OPS_MAX_DIMS];
    /* slice i of the result is slice index[i] of self (dim removed from both) */
    int m = 0;
    int64_t slice = 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d == dim)
            continue;
        sizes[m] = self->sizes[d];
        sst[m] = self->strides[d];
        rst[m++] = r->strides[d];
        slice *= self->sizes[d];
    }
    if (r->dtype == self->dtype && slice > 0) {
        const int64_t bad = isel_bytes(r, self, dim, index, n, m, sizes, sst, rst, slice);
        if (bad < n)
            return idx_index_error(op, IDX_ERR_SELECT, read_index(index, bad), dim, self->sizes[dim]);
        return OPS_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = read_index(index, i);
        if (k < 0 || k >= self->sizes[dim])
            return idx_index_error(op, IDX_ERR_SELECT, k, dim, self->sizes[dim]);
        ops_tensor src = ops_borrowed_view(self, m, sizes, sst, self->offset + k * self->strides[dim]);
        ops_tensor dst = ops_borrowed_view(r, m, sizes, rst, r->offset + i * r->strides[dim]);
        const ops_status st = ops_copy_values(op, &dst, &src);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

/* ---- gather -------------------------------------------------------------------------- */

OPS_REGISTER_STUB(index_gather_loop, CPU, index_gather_loop_cpu);
ops_status
index_gather_loop_cpu(const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    const int snd = self->ndim > 0 ? self->ndim : 1, ind = index->ndim > 0 ? index->ndim : 1;
    const int64_t one = 1, zero = 0;
    const int64_t *sst = self->ndim ? self->strides : &zero;
    const int64_t *isz = index->ndim ? index->sizes : &one;
    const int64_t n = ops_tensor_numel(index);
    /* r[i...] = self[i... with i[dim] = index[i...]]: a row-major counter over index */
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sbase = (const char *)self->storage->data;
    char *rbase = (char *)ops_tensor_data_ptr(r);
    const int64_t size = self->ndim ? self->sizes[dim] : 1;
    int64_t ctr[OPS_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        /* each value checked where it is read: the first bad one ends the loop (r is a
         * fresh result, released by the driver) */
        const int64_t k = read_index(index, i);
        if (k < 0 || k >= size)
            return idx_index_error(op, IDX_ERR_BOUNDS, k, dim, size);
        int64_t off = self->offset;
        for (int d = 0; d < snd; d++)
            off += (d == dim ? k : ctr[d]) * sst[d];
        memcpy(rbase + (size_t)i * is, sbase + (size_t)off * is, is);
        for (int d = ind - 1; d >= 0; d--) {
            if (++ctr[d] < isz[d])
                break;
            ctr[d] = 0;
        }
    }
    return OPS_OK;
}

/* ---- masked_fill ------------------------------------------------------------------------ */

/* dst[mask] = value through the copy iterator (mask broadcast to dst). */
OPS_REGISTER_STUB(index_masked_fill_loop, CPU, index_masked_fill_loop_cpu);
ops_status
index_masked_fill_loop_cpu(const char *op, ops_tensor *dst, const ops_tensor *mask, ops_scalar value)
{
    unsigned char v[16];
    const size_t is = ops_dtype_itemsize(dst->dtype);
    ops_scalar_store(value, dst->dtype, v);
    ops_iter it;
    ops_status st = ops_iter_build_copy(&it, op, dst, mask);
    if (st == OPS_OK) {
        OPS_ITER_LOOP(&it, data, strides, n, {
            for (int64_t i = 0; i < n; i++)
                if (*(const uint8_t *)(data[1] + i * strides[1]) != 0)
                    memcpy(data[0] + i * strides[0], v, is);
        });
    }
    ops_iter_release(&it);
    return st;
}

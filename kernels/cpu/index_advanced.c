/* Advanced indexing (CPU): the loops of index.Tensor (self[indices]) and index_put
 * (self[indices] = values): the stubs index_plan_check, index_adv_gather_loop and
 * index_adv_put_loop (kernels/index_loops.h; the driver, with the plan and the
 * checks, is kernels/index_advanced.c).
 *
 * indices has one entry per leading dim of self: NULL (a full slice), an integer
 * tensor (int64 or int32; negative values count from the end) or a bool/uint8 mask
 * (replaced by its nonzero() coordinates, one integer tensor per mask dim, as
 * PyTorch's expandTensors does).  The integer tensors broadcast together to one
 * shape B.  As in NumPy and PyTorch, when the indexed dims are adjacent B takes
 * their place in the result; when a NULL separates them B comes first, followed by
 * every non-indexed dim.  Slices (a:b:c) are applied by the caller as views before
 * calling these. */
#include <inttypes.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_loops.h"
#include "index_util.h"
#include "ops_kernels_index_advanced.h"

/* Every index of the plan in [-size, size) of its dim. */
OPS_REGISTER_STUB(index_plan_check, CPU, index_plan_check_cpu);
ops_status
index_plan_check_cpu(const char *op, const ops_tensor *self, const adv_plan *p)
{
    /* every index in [-size, size) */
    const int64_t nb = ops_shape_numel(p->bnd, p->bshape);
    for (int k = 0; k < p->nd; k++) {
        const ops_tensor *t = p->idx[k];
        if (t == NULL)
            continue;
        const int64_t size = self->sizes[k];
        const size_t is = ops_dtype_itemsize(t->dtype);
        const char *base = (const char *)t->storage->data;
        const int64_t *st[1] = {p->ist[k]};
        int64_t ctr[OPS_MAX_DIMS] = {0}, off[1] = {t->offset};
        for (int64_t e = 0; e < nb; e++) {
            int64_t v;
            if (is == 4) {
                int32_t v32;
                memcpy(&v32, base + (size_t)off[0] * 4, 4);
                v = v32;
            } else {
                memcpy(&v, base + (size_t)off[0] * 8, 8);
            }
            if (v < -size || v >= size) {
                idx_index_error(op, IDX_ERR_BOUNDS, v, k, size);
                return ops_last_status();
            }
            idx_walk_next(p->bnd, p->bshape, ctr, 1, st, off);
        }
    }
    return OPS_OK;
}

/* Element offset, in a tensor with self's sizes and the given strides/offset, of the
 * element the result element at coordinates rctr reads. */
static int64_t
plan_offset(const adv_plan *p, const int64_t *sizes, const int64_t *strides, int64_t offset, const int64_t *rctr)
{
    int64_t off = offset;
    for (int k = 0; k < p->nd; k++) {
        const ops_tensor *t = p->idx[k];
        if (t == NULL) {
            off += rctr[p->rpos[k]] * strides[k];
            continue;
        }
        int64_t e = t->offset;
        for (int j = 0; j < p->bnd; j++)
            e += rctr[p->bpos + j] * p->ist[k][j];
        int64_t v;
        if (t->dtype == OPS_INT32)
            v = ((const int32_t *)t->storage->data)[e];
        else
            v = ((const int64_t *)t->storage->data)[e];
        if (v < 0)
            v += sizes[k];
        off += v * strides[k];
    }
    return off;
}

static void
rctr_next(const adv_plan *p, int64_t *rctr)
{
    for (int d = p->rnd - 1; d >= 0; d--) {
        if (++rctr[d] < p->rshape[d])
            return;
        rctr[d] = 0;
    }
}

/* ---- index.Tensor ------------------------------------------------------------------------ */

/* The gather of index.Tensor, by blocks: each position of B fixes one offset into
 * self through the indexed dims, and the non-indexed dims form a block copied from
 * there into the result.  Positions of B are split across threads above a grain. */
static void
index_gather(const adv_plan *p, const ops_tensor *self, ops_tensor *r)
{
    const size_t is = ops_dtype_itemsize(self->dtype);
    int m = 0, nk = 0, kd[OPS_MAX_DIMS];
    int64_t bsz[OPS_MAX_DIMS], bsst[OPS_MAX_DIMS], brst[OPS_MAX_DIMS];
    for (int k = 0; k < p->nd; k++) {
        if (p->idx[k] != NULL) {
            kd[nk++] = k;
            continue;
        }
        bsz[m] = self->sizes[k];
        bsst[m] = self->strides[k];
        brst[m++] = r->strides[p->rpos[k]];
    }
    const int64_t per = ops_shape_numel(m, bsz), nb = ops_shape_numel(p->bnd, p->bshape);
    if (per == 0 || nb == 0)
        return;
    const int64_t *rbst = r->strides + p->bpos;
    const int64_t *bst[2] = {bsst, brst};
    const char *sb = (const char *)self->storage->data;
    char *rb = (char *)r->storage->data;
    int64_t nchunks = idx_num_chunks(nb * per);
    if (nchunks > nb)
        nchunks = nb;
    if (nk == 1 && p->bnd == 1 && m == 0) {
        /* x[i] with x and i 1-D: a tight loop keeps many cache misses in flight */
        const int k = kd[0];
        const ops_tensor *t = p->idx[k];
        const int64_t ist = p->ist[k][0], sst = self->strides[k], size = self->sizes[k], rst = rbst[0];
        const int64_t *i64 = t->dtype == OPS_INT64 ? (const int64_t *)t->storage->data + t->offset : NULL;
        const int32_t *i32 = t->dtype == OPS_INT32 ? (const int32_t *)t->storage->data + t->offset : NULL;
        IDX_PARALLEL_FOR_
        for (int64_t c = 0; c < nchunks; c++) {
            const int64_t lo = nb / nchunks * c + (c < nb % nchunks ? c : nb % nchunks);
            const int64_t hi = lo + nb / nchunks + (c < nb % nchunks ? 1 : 0);
            for (int64_t b = lo; b < hi; b++) {
                int64_t v = i64 != NULL ? i64[b * ist] : i32[b * ist];
                v += v < 0 ? size : 0;
                idx_copy_elem(rb + (size_t)(r->offset + b * rst) * is, sb + (size_t)(self->offset + v * sst) * is,
                              is);
            }
        }
        return;
    }
    IDX_PARALLEL_FOR_
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t lo = nb / nchunks * c + (c < nb % nchunks ? c : nb % nchunks);
        const int64_t hi = lo + nb / nchunks + (c < nb % nchunks ? 1 : 0);
        int64_t bctr[OPS_MAX_DIMS] = {0}, ctr[OPS_MAX_DIMS] = {0};
        for (int64_t i = lo, d = p->bnd - 1; d >= 0; d--) {
            bctr[d] = i % p->bshape[d];
            i /= p->bshape[d];
        }
        for (int64_t b = lo; b < hi; b++) {
            int64_t off[2] = {self->offset, r->offset};
            for (int j = 0; j < p->bnd; j++)
                off[1] += bctr[j] * rbst[j];
            for (int q = 0; q < nk; q++) {
                const int k = kd[q];
                const ops_tensor *t = p->idx[k];
                int64_t e = t->offset, v;
                for (int j = 0; j < p->bnd; j++)
                    e += bctr[j] * p->ist[k][j];
                if (t->dtype == OPS_INT32)
                    v = ((const int32_t *)t->storage->data)[e];
                else
                    v = ((const int64_t *)t->storage->data)[e];
                off[0] += (v < 0 ? v + self->sizes[k] : v) * self->strides[k];
            }
            if (m == 0) {
                idx_copy_elem(rb + (size_t)off[1] * is, sb + (size_t)off[0] * is, is);
            } else if (m == 1 && bsst[0] == 1 && brst[0] == 1) {
                /* a contiguous row (embedding-style gathers) */
                memcpy(rb + (size_t)off[1] * is, sb + (size_t)off[0] * is, (size_t)per * is);
            } else {
                /* a full walk of the block leaves ctr at zero again */
                for (int64_t j = 0; j < per; j++) {
                    idx_copy_elem(rb + (size_t)off[1] * is, sb + (size_t)off[0] * is, is);
                    idx_walk_next(m, bsz, ctr, 2, bst, off);
                }
            }
            for (int d = p->bnd - 1; d >= 0; d--) {
                if (++bctr[d] < p->bshape[d])
                    break;
                bctr[d] = 0;
            }
        }
    }
}

OPS_REGISTER_STUB(index_adv_gather_loop, CPU, index_adv_gather_loop_cpu);
ops_status
index_adv_gather_loop_cpu(const char *op, const adv_plan *p, const ops_tensor *self, ops_tensor *r)
{
    (void)op;
    index_gather(p, self, r);
    return OPS_OK;
}

/* ---- index_put ----------------------------------------------------------------------------- */

static ops_status
put_typed(const char *op, const adv_plan *p, ops_tensor *acc, const ops_tensor *values, const int64_t *vst,
          bool accumulate)
{
    const int64_t n = ops_shape_numel(p->rnd, p->rshape);
    OPS_DISPATCH_ALL(values->dtype, op, {
        opmath_t *a = (opmath_t *)acc->storage->data;
        const scalar_t *vp = (const scalar_t *)values->storage->data;
        int64_t rctr[OPS_MAX_DIMS] = {0};
        for (int64_t i = 0; i < n; i++) {
            const int64_t off = plan_offset(p, acc->sizes, acc->strides, acc->offset, rctr);
            int64_t voff = values->offset;
            for (int d = 0; d < p->rnd; d++)
                voff += rctr[d] * vst[d];
            const opmath_t v = OPS_LOAD(vp + voff);
            a[off] = accumulate ? SC_ADD(a[off], v) : v;
            rctr_next(p, rctr);
        }
    });
    return OPS_OK;
}

/* The values computed into a contiguous buffer of the opmath dtype (float for
 * float16/bfloat16), so accumulated duplicates round once, then converted. */
OPS_REGISTER_STUB(index_adv_put_loop, CPU, index_adv_put_loop_cpu);
ops_status
index_adv_put_loop_cpu(const char *op, const adv_plan *p, const ops_tensor *self, const ops_tensor *values,
                       bool accumulate, ops_tensor **result)
{
    int64_t vst[OPS_MAX_DIMS];
    idx_bcast_strides(values, p->rnd, p->rshape, vst);
    ops_tensor *acc, *r;
    ops_status st = idx_accum_begin(op, self, cpu_opmath_dtype(self->dtype), &acc, &r);
    if (st != OPS_OK)
        return st;
    st = put_typed(op, p, acc, values, vst, accumulate);
    *result = idx_accum_end(op, st, acc, r);
    return *result != NULL ? OPS_OK : ops_last_status();
}

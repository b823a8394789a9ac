/* sort (and its stable overloads), argsort, msort, topk and kthvalue, for every
 * device: the schema names the sort_* functions below for CPU and CUDA; the device
 * orders the lines through the stub sort_order_lines (kernels/sort.h):
 * kernels/cpu/sort.c, kernels/cuda/sort.cu.
 *
 * Results are computed into fresh contiguous tensors, or straight into out= tensors
 * when every out given already has the result's shape, is contiguous, lives on
 * self's device and overlaps neither self nor another out.  Outs are checked before
 * anything is allocated and written after every allocation, all of them or none (a
 * failed call leaves out= untouched).
 *
 * Each op's variants (functional, out=, the stable overloads, argsort's and msort's
 * single result) are one call of sort_run; the schema's signatures are what keeps
 * them separate C functions.  stable is accepted and ignored: every sort here is
 * stable (as PyTorch's CPU sort), and topk's sorted=False returns the k in sorted
 * order too (PyTorch leaves that order unspecified; the sorted one is
 * deterministic). */
#include <string.h>

#include "kernels/sort.h"
#include "ops_dispatch.h"
#include "ops_kernels_sort.h"

/* kind LINE_SORT: sort along dim; LINE_TOPK: the k first of the order (largest when
 * desc); LINE_KTH: the k-th smallest, dim kept as size 1 when keepdim.  want_v/want_i:
 * which results to make.  Outs (NULL: functional) get the results; otherwise *rv /
 * *ri get new references.  declared: the dtypes self may have (topk, kthvalue: a guard
 * for a direct call, their glue checks first; 0: every dtype). */
static ops_status
sort_run(const char *op, unsigned declared, line_kind kind, const ops_tensor *self, int64_t dim, bool desc, int64_t k,
         bool keepdim, bool want_v, bool want_i, ops_tensor *out_v, ops_tensor *out_i, ops_tensor **rv, ops_tensor **ri)
{
    ops_status st = OPS_OK;
    ops_tensor *tv = NULL, *ti = NULL;
    const ops_device dev = self->storage->device;
    int ond;
    int64_t osz[OPS_MAX_DIMS];
    if ((st = sort_result_shape(op, declared, kind, self, &dim, k, keepdim, &ond, osz)) != OPS_OK)
        return st;
    const int64_t len = self->ndim == 0 ? 1 : self->sizes[dim];
    if ((st = sort_check_out(op, "values", out_v, self->dtype, ond, osz)) != OPS_OK ||
        (st = sort_check_out(op, "indices", out_i, OPS_INT64, ond, osz)) != OPS_OK)
        return st;

    /* Outs that already have the result's shape, contiguous and apart from self and
     * from each other, are written in place; if any out needs a resize, every result
     * goes through a fresh tensor first (so a failed resize leaves all outs as they
     * were). */
    bool direct = out_v != NULL || out_i != NULL;
    ops_tensor *const outs[2] = {out_v, out_i};
    for (int o = 0; o < 2 && direct; o++) {
        const ops_tensor *t = outs[o];
        if (t == NULL)
            continue;
        direct = t->ndim == ond && memcmp(t->sizes, osz, (size_t)ond * sizeof(int64_t)) == 0 &&
                 ops_tensor_is_contiguous(t) && !ops_tensor_may_overlap(t, self) &&
                 ops_device_equal(t->storage->device, dev);
    }
    if (direct && out_v != NULL && out_i != NULL && ops_tensor_may_overlap(out_v, out_i))
        direct = false;
    if (!direct) {
        if (want_v && (tv = ops_tensor_new(op, ond, osz, NULL, self->dtype, dev)) == NULL)
            goto fail;
        if (want_i && (ti = ops_tensor_new(op, ond, osz, NULL, OPS_INT64, dev)) == NULL)
            goto fail;
    }

    sort_plan p;
    memset(&p, 0, sizeof p);
    p.self = self;
    p.dim = dim;
    p.len = len;
    p.nlines = len == 0 ? 0 : ops_tensor_numel(self) / len;
    p.desc = desc;
    p.kind = kind;
    p.k = kind == LINE_TOPK && self->ndim == 0 ? 1 : k; /* PyTorch copies a 0-dim self's one element for any valid k */
    p.olen = kind == LINE_SORT ? len : kind == LINE_TOPK ? p.k : 1;
    p.inner = 1;
    for (int d = (int)dim + 1; d < self->ndim && kind != LINE_KTH; d++) /* kthvalue: one result per line, in order */
        p.inner *= self->sizes[d];
    p.vals = direct ? out_v : tv;
    p.idx = direct ? out_i : ti;
    if ((st = OPS_STUB_CALL(sort_order_lines, dev, op, &p)) != OPS_OK)
        goto done;

    if (direct) {
        for (int o = 0; o < 2; o++)
            if (outs[o] != NULL)
                ops_tensor_bump_version(outs[o]);
    } else if (out_v != NULL || out_i != NULL) {
        ops_tensor *rs[2], *os[2];
        int n = 0;
        if (out_v != NULL)
            rs[n] = tv, os[n++] = out_v;
        if (out_i != NULL)
            rs[n] = ti, os[n++] = out_i;
        st = sort_write_outs(op, n, rs, os);
    } else {
        if (rv != NULL)
            *rv = tv, tv = NULL;
        if (ri != NULL)
            *ri = ti, ti = NULL;
    }
    goto done;
fail:
    st = ops_last_status();
done:
    ops_tensor_release(tv);
    ops_tensor_release(ti);
    return st;
}

ops_status
sort_sort(const ops_tensor *self, int64_t dim, bool descending, ops_tensor **values, ops_tensor **indices)
{
    return sort_run("sort", 0, LINE_SORT, self, dim, descending, 0, false, true, true, NULL, NULL, values, indices);
}

ops_status
sort_sort_values(const ops_tensor *self, int64_t dim, bool descending, ops_tensor *values, ops_tensor *indices)
{
    return sort_run("sort", 0, LINE_SORT, self, dim, descending, 0, false, true, true, values, indices, NULL, NULL);
}

ops_status
sort_sort_stable(const ops_tensor *self, const bool *stable, int64_t dim, bool descending, ops_tensor **values,
                 ops_tensor **indices)
{
    (void)stable;
    return sort_run("sort", 0, LINE_SORT, self, dim, descending, 0, false, true, true, NULL, NULL, values, indices);
}

ops_status
sort_sort_values_stable(const ops_tensor *self, const bool *stable, int64_t dim, bool descending,
                        ops_tensor *values, ops_tensor *indices)
{
    (void)stable;
    return sort_run("sort", 0, LINE_SORT, self, dim, descending, 0, false, true, true, values, indices, NULL, NULL);
}

ops_tensor *
sort_argsort(const ops_tensor *self, int64_t dim, bool descending)
{
    ops_tensor *r = NULL;
    sort_run("argsort", 0, LINE_SORT, self, dim, descending, 0, false, false, true, NULL, NULL, NULL, &r);
    return r;
}

ops_tensor *
sort_argsort_stable(const ops_tensor *self, bool stable, int64_t dim, bool descending)
{
    (void)stable;
    ops_tensor *r = NULL;
    sort_run("argsort", 0, LINE_SORT, self, dim, descending, 0, false, false, true, NULL, NULL, NULL, &r);
    return r;
}

ops_status
sort_argsort_stable_out(const ops_tensor *self, bool stable, int64_t dim, bool descending, ops_tensor *out)
{
    (void)stable;
    return sort_run("argsort", 0, LINE_SORT, self, dim, descending, 0, false, false, true, NULL, out, NULL, NULL);
}

ops_tensor *
sort_msort(const ops_tensor *self)
{
    ops_tensor *r = NULL;
    sort_run("msort", 0, LINE_SORT, self, 0, false, 0, false, true, false, NULL, NULL, &r, NULL);
    return r;
}

ops_status
sort_msort_out(const ops_tensor *self, ops_tensor *out)
{
    return sort_run("msort", 0, LINE_SORT, self, 0, false, 0, false, true, false, out, NULL, NULL, NULL);
}

ops_status
sort_topk(const ops_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, ops_tensor **values,
          ops_tensor **indices)
{
    (void)sorted;
    return sort_run("topk", OPS_DTYPE_MASK_TOPK, LINE_TOPK, self, dim, largest, k, false, true, true, NULL, NULL,
                    values, indices);
}

ops_status
sort_topk_values(const ops_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, ops_tensor *values,
                 ops_tensor *indices)
{
    (void)sorted;
    return sort_run("topk", SORT_NUMERIC_MASK, LINE_TOPK, self, dim, largest, k, false, true, true, values, indices,
                    NULL, NULL);
}

ops_status
sort_kthvalue(const ops_tensor *self, int64_t k, int64_t dim, bool keepdim, ops_tensor **values,
              ops_tensor **indices)
{
    return sort_run("kthvalue", OPS_DTYPE_MASK_KTHVALUE, LINE_KTH, self, dim, false, k, keepdim, true, true, NULL, NULL,
                    values, indices);
}

ops_status
sort_kthvalue_values(const ops_tensor *self, int64_t k, int64_t dim, bool keepdim, ops_tensor *values,
                     ops_tensor *indices)
{
    return sort_run("kthvalue", SORT_NUMERIC_MASK, LINE_KTH, self, dim, false, k, keepdim, true, true, values,
                    indices, NULL, NULL);
}

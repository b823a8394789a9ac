/* unique's CPU loops (the stubs of kernels/unique.h; the driver of _unique2, unique,
 * unique_dim and unique_consecutive is kernels/unique.c).  The flattened forms sort
 * (key, position) pairs with sort.c's stable radix sort (sort_pairs.h), so equal
 * values keep their input order; the dim forms compare whole slices. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_check.h"
#include "kernels/ops_index_math.h"
#include "ops_functions_copy.h"
#include "kernels/unique.h"
#include "sort_pairs.h"

OPS_REGISTER_STUB(unique_flat_loop, CPU, unique_flat_loop_cpu);
OPS_REGISTER_STUB(unique_rows_loop, CPU, unique_rows_loop_cpu);

/* ---- unique ------------------------------------------------------------------------- */

/* Fresh int64 tensor of shape [0] (the slot of a result that was not asked for). */
static ops_tensor *
sort_empty_long(const char *op)
{
    return ops_tensor_new(op, 1, (int64_t[]){0}, NULL, OPS_INT64, OPS_DEVICE_CPU);
}

/* unique over all of self (sorted), or over runs of equal consecutive elements
 * (consecutive).  inverse has self's shape; output and counts are 1-D. */
ops_status
unique_flat_loop_cpu(const char *op, const ops_tensor *self, bool consecutive, bool want_inv, bool want_cnt,
            ops_tensor **r0, ops_tensor **r1, ops_tensor **r2)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *uo = NULL, *inv = NULL, *cnt = NULL;
    sort_p64 *a = NULL, *b = NULL;
    const ops_dtype dt = self->dtype;
    const size_t isz = ops_dtype_itemsize(dt);
    const int64_t n = ops_shape_numel(self->ndim, self->sizes);
    const bool fl = ops_dtype_is_floating(dt);
    const uint64_t nan = ops_ix_nan_key(dt);

    if ((src = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT)) == NULL)
        goto fail;
    if (n > 0) {
        if ((a = (sort_p64 *)ops_host_malloc_array(n, sizeof *a)) == NULL ||
            (!consecutive && (b = (sort_p64 *)ops_host_malloc_array(n, sizeof *b)) == NULL)) {
            st = ops_fail(OPS_ERR_OOM, "%s: out of memory (scratch for %" PRId64 " elements)", op, n);
            goto done;
        }
    }
    const char *const data = (const char *)ops_tensor_data_ptr(src);
    sort_p64 *r = a;
    if (n > 0) {
        sort_gather_p64(dt, a, data, (int64_t)isz, n, false);
        if (!consecutive)
            r = sort_p64_sort(a, b, n, dt);
    }
    int64_t groups = 0;
    for (int64_t j = 0; j < n; j++)
        if (j == 0 || !ops_ix_same(fl, nan, r[j - 1].k, r[j].k))
            groups++;

    if ((uo = ops_tensor_new(op, 1, (int64_t[]){groups}, NULL, dt, OPS_DEVICE_CPU)) == NULL)
        goto fail;
    inv = want_inv ? ops_tensor_new(op, self->ndim, self->sizes, NULL, OPS_INT64, OPS_DEVICE_CPU)
                   : sort_empty_long(op);
    if (inv == NULL)
        goto fail;
    cnt = want_cnt ? ops_tensor_new(op, 1, (int64_t[]){groups}, NULL, OPS_INT64, OPS_DEVICE_CPU)
                   : sort_empty_long(op);
    if (cnt == NULL)
        goto fail;
    char *const ud = (char *)ops_tensor_data_ptr(uo);
    int64_t *const id = want_inv ? (int64_t *)ops_tensor_data_ptr(inv) : NULL;
    int64_t *const cd = want_cnt ? (int64_t *)ops_tensor_data_ptr(cnt) : NULL;
    int64_t g = -1;
    for (int64_t j = 0; j < n; j++) {
        if (j == 0 || !ops_ix_same(fl, nan, r[j - 1].k, r[j].k)) {
            g++;
            memcpy(ud + (size_t)g * isz, data + (size_t)r[j].i * isz, isz);
            if (cd != NULL)
                cd[g] = 0;
        }
        if (id != NULL)
            id[r[j].i] = g;
        if (cd != NULL)
            cd[g]++;
    }
    *r0 = uo, *r1 = inv, *r2 = cnt;
    uo = inv = cnt = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_host_free(a);
    ops_host_free(b);
    ops_tensor_release(src);
    ops_tensor_release(uo);
    ops_tensor_release(inv);
    ops_tensor_release(cnt);
    return st;
}

/* unique_consecutive along dim (wrapped, self not 0-dim): runs of equal consecutive
 * slices self[..., s, ...]. */
static ops_status
unique_consecutive_dim(const char *op, const ops_tensor *self, int64_t dim, bool want_inv, bool want_cnt,
                       ops_tensor **r0, ops_tensor **r1, ops_tensor **r2)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *uo = NULL, *inv = NULL, *cnt = NULL;
    int64_t *first = NULL;
    const ops_dtype dt = self->dtype;
    const size_t isz = ops_dtype_itemsize(dt);
    const bool fl = ops_dtype_is_floating(dt);
    const uint64_t nan = ops_ix_nan_key(dt);
    const int64_t len = self->sizes[dim];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim)
            outer *= self->sizes[d];
        else if (d > dim)
            inner *= self->sizes[d];
    }
    if ((src = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT)) == NULL)
        goto fail;
    if ((first = (int64_t *)ops_host_malloc_array(len > 0 ? len : 1, sizeof *first)) == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    const char *const data = (const char *)ops_tensor_data_ptr(src);
    int64_t groups = 0;
    for (int64_t s = 0; s < len; s++) {
        bool same = s > 0;
        for (int64_t o = 0; same && o < outer; o++)
            for (int64_t i = 0; same && i < inner; i++) {
                const int64_t e = (o * len + s) * inner + i;
                same = ops_ix_same(fl, nan, ops_ix_key_at(dt, data + (size_t)(e - inner) * isz),
                                 ops_ix_key_at(dt, data + (size_t)e * isz));
            }
        if (!same)
            first[groups++] = s;
    }
    int64_t osz[OPS_MAX_DIMS];
    memcpy(osz, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    osz[dim] = groups;
    if ((uo = ops_tensor_new(op, self->ndim, osz, NULL, dt, OPS_DEVICE_CPU)) == NULL)
        goto fail;
    inv = want_inv ? ops_tensor_new(op, 1, (int64_t[]){len}, NULL, OPS_INT64, OPS_DEVICE_CPU) : sort_empty_long(op);
    if (inv == NULL)
        goto fail;
    cnt = want_cnt ? ops_tensor_new(op, 1, (int64_t[]){groups}, NULL, OPS_INT64, OPS_DEVICE_CPU)
                   : sort_empty_long(op);
    if (cnt == NULL)
        goto fail;
    char *const ud = (char *)ops_tensor_data_ptr(uo);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t g = 0; g < groups; g++)
            memcpy(ud + (size_t)((o * groups + g) * inner) * isz, data + (size_t)((o * len + first[g]) * inner) * isz,
                   (size_t)inner * isz);
    for (int64_t g = 0; g < groups; g++) {
        const int64_t end = g + 1 < groups ? first[g + 1] : len;
        if (want_cnt)
            ((int64_t *)ops_tensor_data_ptr(cnt))[g] = end - first[g];
        if (want_inv)
            for (int64_t s = first[g]; s < end; s++)
                ((int64_t *)ops_tensor_data_ptr(inv))[s] = g;
    }
    *r0 = uo, *r1 = inv, *r2 = cnt;
    uo = inv = cnt = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_host_free(first);
    ops_tensor_release(src);
    ops_tensor_release(uo);
    ops_tensor_release(inv);
    ops_tensor_release(cnt);
    return st;
}

/* Row comparison for unique_dim's sort: slices as rows of keys, lexicographic, ties
 * by position (so the order is the stable one). */
typedef struct {
    const uint64_t *keys;
    int64_t width;
} row_ctx;

static int
row_cmp(const void *x, const void *y, void *ctx)
{
    const row_ctx *c = (const row_ctx *)ctx;
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    const uint64_t *ra = c->keys + a * c->width, *rb = c->keys + b * c->width;
    for (int64_t e = 0; e < c->width; e++)
        if (ra[e] != rb[e])
            return ra[e] < rb[e] ? -1 : 1;
    return (a > b) - (a < b);
}

/* unique_dim: the unique slices self[..., s, ...] along dim (wrapped; self not empty),
 * sorted lexicographically (NaN largest); output has self's shape with dim resized,
 * inverse has size(dim). */
static ops_status
unique_dim_impl(const char *op, const ops_tensor *self, int64_t dim, bool want_inv, bool want_cnt,
                ops_tensor **r0, ops_tensor **r1, ops_tensor **r2)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *uo = NULL, *inv = NULL, *cnt = NULL;
    uint64_t *keys = NULL;
    int64_t *ord = NULL, *first = NULL;
    const ops_dtype dt = self->dtype;
    const size_t isz = ops_dtype_itemsize(dt);
    const bool fl = ops_dtype_is_floating(dt);
    const uint64_t nan = ops_ix_nan_key(dt);
    const int64_t numel = ops_shape_numel(self->ndim, self->sizes);
    const int64_t len = self->ndim == 0 ? 1 : self->sizes[dim];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim)
            outer *= self->sizes[d];
        else if (d > dim)
            inner *= self->sizes[d];
    }
    const int64_t width = outer * inner;
    if ((src = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT)) == NULL)
        goto fail;
    if ((keys = (uint64_t *)ops_host_malloc_array(numel, sizeof *keys)) == NULL ||
        (ord = (int64_t *)ops_host_malloc_array(len, sizeof *ord)) == NULL ||
        (first = (int64_t *)ops_host_malloc_array(len, sizeof *first)) == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory (scratch for %" PRId64 " elements)", op, numel);
        goto done;
    }
    const char *const data = (const char *)ops_tensor_data_ptr(src);
    /* row s holds slice s: its elements in (outer, inner) order */
    for (int64_t o = 0; o < outer; o++)
        for (int64_t s = 0; s < len; s++)
            for (int64_t i = 0; i < inner; i++)
                keys[s * width + o * inner + i] = ops_ix_key_at(dt, data + (size_t)((o * len + s) * inner + i) * isz);
    for (int64_t s = 0; s < len; s++)
        ord[s] = s;
    row_ctx ctx = {keys, width};
    qsort_r(ord, (size_t)len, sizeof *ord, row_cmp, &ctx);
    int64_t groups = 0;
    for (int64_t j = 0; j < len; j++) {
        bool same = j > 0;
        for (int64_t e = 0; same && e < width; e++)
            same = ops_ix_same(fl, nan, keys[ord[j - 1] * width + e], keys[ord[j] * width + e]);
        if (!same)
            first[groups++] = j;
    }
    int64_t osz[OPS_MAX_DIMS];
    memcpy(osz, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    if (self->ndim > 0)
        osz[dim] = groups;
    if ((uo = ops_tensor_new(op, self->ndim, osz, NULL, dt, OPS_DEVICE_CPU)) == NULL)
        goto fail;
    inv = want_inv ? ops_tensor_new(op, 1, (int64_t[]){len}, NULL, OPS_INT64, OPS_DEVICE_CPU) : sort_empty_long(op);
    if (inv == NULL)
        goto fail;
    cnt = want_cnt ? ops_tensor_new(op, 1, (int64_t[]){groups}, NULL, OPS_INT64, OPS_DEVICE_CPU)
                   : sort_empty_long(op);
    if (cnt == NULL)
        goto fail;
    char *const ud = (char *)ops_tensor_data_ptr(uo);
    for (int64_t g = 0; g < groups; g++) {
        const int64_t s = ord[first[g]];
        const int64_t end = g + 1 < groups ? first[g + 1] : len;
        for (int64_t o = 0; o < outer; o++)
            memcpy(ud + (size_t)((o * groups + g) * inner) * isz, data + (size_t)((o * len + s) * inner) * isz,
                   (size_t)inner * isz);
        if (want_cnt)
            ((int64_t *)ops_tensor_data_ptr(cnt))[g] = end - first[g];
        if (want_inv)
            for (int64_t j = first[g]; j < end; j++)
                ((int64_t *)ops_tensor_data_ptr(inv))[ord[j]] = g;
    }
    *r0 = uo, *r1 = inv, *r2 = cnt;
    uo = inv = cnt = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_host_free(keys);
    ops_host_free(ord);
    ops_host_free(first);
    ops_tensor_release(src);
    ops_tensor_release(uo);
    ops_tensor_release(inv);
    ops_tensor_release(cnt);
    return st;
}

/* unique_dim's sorted slices, or unique_consecutive's runs of them. */
ops_status
unique_rows_loop_cpu(const char *op, const ops_tensor *self, int64_t dim, bool sort, bool want_inv, bool want_cnt,
                     ops_tensor **r0, ops_tensor **r1, ops_tensor **r2)
{
    if (sort)
        return unique_dim_impl(op, self, dim, want_inv, want_cnt, r0, r1, r2);
    return unique_consecutive_dim(op, self, dim, want_inv, want_cnt, r0, r1, r2);
}

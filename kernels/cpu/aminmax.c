/* aminmax (CPU): aminmax and aminmax.out, the minimum and the maximum of self in one
 * pass, over one dim or over every element.  NaN propagates into both results, as
 * PyTorch's (and NumPy's amin/amax).
 *
 * Both results are computed into fresh contiguous tensors first; out= tensors are
 * checked before anything is allocated and written only after every allocation has
 * succeeded.  The two outs are resized together: if the second resize fails, the first
 * gets its old geometry back (a grown storage is harmless), so a failed call leaves
 * both outs as they were. */
#include <string.h>

#include "ops_dispatch.h"
#include "ops_functions.h"
#include "ops_kernels.h"

#define AMM_OP "aminmax"

/* The result shape of aminmax over dim (NULL: every element); *outer, *n and *inner
 * split self's elements as outer x n x inner with n the reduced run. */
static ops_status
amm_plan(const ops_tensor *self, const int64_t *dim, bool keepdim, int *nd, int64_t *sizes, int64_t *outer,
         int64_t *n, int64_t *inner)
{
    const int64_t numel = ops_shape_numel(self->ndim, self->sizes);
    *nd = 0;
    if (dim == NULL) {
        if (numel == 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot compute aminmax over an empty dimension as the operation has no identity.",
                            AMM_OP);
        if (keepdim) {
            for (int d = 0; d < self->ndim; d++)
                sizes[(*nd)++] = 1;
        }
        *outer = 1;
        *n = numel;
        *inner = 1;
        return OPS_OK;
    }
    int64_t d = *dim;
    if (!ops_wrap_dim(AMM_OP, "dim", &d, self->ndim))
        return ops_last_status();
    if (self->ndim == 0) {
        *outer = *n = *inner = 1;
        return OPS_OK;
    }
    if (self->sizes[d] == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: Expected reduction dim %lld to have non-zero size.", AMM_OP,
                        (long long)d);
    *outer = 1;
    *inner = 1;
    for (int k = 0; k < self->ndim; k++) {
        if (k < d)
            *outer *= self->sizes[k];
        else if (k > d)
            *inner *= self->sizes[k];
        if (k != d)
            sizes[(*nd)++] = self->sizes[k];
        else if (keepdim)
            sizes[(*nd)++] = 1;
    }
    *n = self->sizes[d];
    return OPS_OK;
}

/* An out= tensor: self's dtype, and no elements sharing memory when it has the result's
 * shape already (otherwise it is resized and gets fresh contiguous strides). */
static ops_status
amm_check_out(const ops_tensor *out, const char *name, ops_dtype want, int nd, const int64_t *sizes)
{
    if (out->dtype != want)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor '%s' to have dtype %s, but got %s instead", AMM_OP,
                        name, ops_dtype_name(want), ops_dtype_name(out->dtype));
    const bool same = out->ndim == nd && memcmp(out->sizes, sizes, (size_t)nd * sizeof(int64_t)) == 0;
    if (same && ops_tensor_has_internal_overlap(out))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                        "single memory location. Please clone() the tensor before performing the operation.",
                        AMM_OP);
    return OPS_OK;
}

/* Copies the contiguous elements at src into t's strided elements (same dtype). */
static void
amm_store_strided(ops_tensor *t, const char *src)
{
    const size_t isz = ops_dtype_itemsize(t->dtype);
    const int64_t count = ops_shape_numel(t->ndim, t->sizes);
    char *base = (char *)ops_tensor_data_ptr(t);
    int64_t idx[OPS_MAX_DIMS] = {0};
    int64_t off = 0;
    for (int64_t i = 0; i < count; i++) {
        memcpy(base + off * (int64_t)isz, src + (size_t)i * isz, isz);
        for (int d = t->ndim - 1; d >= 0; d--) {
            idx[d]++;
            off += t->strides[d];
            if (idx[d] < t->sizes[d])
                break;
            off -= idx[d] * t->strides[d];
            idx[d] = 0;
        }
    }
}

/* The reduction over contiguous src (outer x n x inner) into contiguous mn and mx. */
static ops_status
amm_run(ops_dtype dt, const char *src, char *mn, char *mx, int64_t outer, int64_t n, int64_t inner)
{
    const int64_t nout = outer * inner;
    /* threads over outputs only when there are several and enough work in all */
    const bool par = nout > 1 && (double)nout * (double)n > OPS_GRAIN_SIZE;
    (void)par;
    OPS_DISPATCH_ALL(dt, AMM_OP, {
        const scalar_t *x = (const scalar_t *)src;
        scalar_t *lo = (scalar_t *)mn, *hi = (scalar_t *)mx;
        _Pragma("omp parallel for if (par)")
        for (int64_t o = 0; o < nout; o++) {
            const scalar_t *p = x + (o / inner) * n * inner + o % inner;
            opmath_t a = OPS_LOAD(p), b = a;
            for (int64_t k = 1; k < n; k++) {
                const opmath_t v = OPS_LOAD(p + k * inner);
                /* a NaN already held stays; a new NaN replaces (v != v is false for ints) */
                a = (a <= v || a != a) ? a : v;
                b = (b >= v || b != b) ? b : v;
            }
            OPS_STORE(&lo[o], a);
            OPS_STORE(&hi[o], b);
        }
    });
    return OPS_OK;
}

/* aminmax of self into new tensors (*rmin, *rmax), or into out_min/out_max. */
static ops_status
amm_impl(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out_min, ops_tensor *out_max,
         ops_tensor **rmin, ops_tensor **rmax)
{
    ops_status st;
    ops_tensor *src = NULL, *mn = NULL, *mx = NULL;
    int nd = 0;
    int64_t sizes[OPS_MAX_DIMS], outer = 1, n = 1, inner = 1;
    if ((st = amm_plan(self, dim, keepdim, &nd, sizes, &outer, &n, &inner)) != OPS_OK)
        return st;
    if (out_min != NULL && ((st = amm_check_out(out_min, "min", self->dtype, nd, sizes)) != OPS_OK ||
                            (st = amm_check_out(out_max, "max", self->dtype, nd, sizes)) != OPS_OK))
        return st;
    if (ops_tensor_is_contiguous(self)) {
        src = ops_tensor_retain(self);
    } else {
        src = ops_tensor_new(AMM_OP, self->ndim, self->sizes, NULL, self->dtype, OPS_DEVICE_CPU);
        if (src == NULL || (st = ops_copy_(src, self, false)) != OPS_OK) {
            st = ops_last_status();
            goto done;
        }
    }
    mn = ops_tensor_new(AMM_OP, nd, sizes, NULL, self->dtype, OPS_DEVICE_CPU);
    mx = mn != NULL ? ops_tensor_new(AMM_OP, nd, sizes, NULL, self->dtype, OPS_DEVICE_CPU) : NULL;
    if (mx == NULL) {
        st = ops_last_status();
        goto done;
    }
    if ((st = amm_run(self->dtype, (const char *)ops_tensor_data_ptr(src), (char *)ops_tensor_data_ptr(mn),
                      (char *)ops_tensor_data_ptr(mx), outer, n, inner)) != OPS_OK)
        goto done;
    if (out_min == NULL) {
        *rmin = mn;
        *rmax = mx;
        mn = mx = NULL;
        goto done;
    }
    /* resize both outs (which may allocate), or neither */
    ops_tensor saved = *out_min;
    const bool same_min = out_min->ndim == nd && memcmp(out_min->sizes, sizes, (size_t)nd * sizeof(int64_t)) == 0;
    const bool same_max = out_max->ndim == nd && memcmp(out_max->sizes, sizes, (size_t)nd * sizeof(int64_t)) == 0;
    if (!same_min && (st = ops_tensor_resize_(AMM_OP, out_min, nd, sizes)) != OPS_OK)
        goto done;
    if (!same_max && (st = ops_tensor_resize_(AMM_OP, out_max, nd, sizes)) != OPS_OK) {
        out_min->ndim = saved.ndim;
        memcpy(out_min->sizes, saved.sizes, sizeof saved.sizes);
        memcpy(out_min->strides, saved.strides, sizeof saved.strides);
        goto done;
    }
    amm_store_strided(out_min, (const char *)ops_tensor_data_ptr(mn));
    amm_store_strided(out_max, (const char *)ops_tensor_data_ptr(mx));
    ops_tensor_bump_version(out_min);
    ops_tensor_bump_version(out_max);
done:
    ops_tensor_release(src);
    ops_tensor_release(mn);
    ops_tensor_release(mx);
    return st;
}

ops_status
aminmax_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor **min, ops_tensor **max)
{
    return amm_impl(self, dim, keepdim, NULL, NULL, min, max);
}

ops_status
aminmax_out_cpu(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *min, ops_tensor *max)
{
    return amm_impl(self, dim, keepdim, min, max, NULL, NULL);
}

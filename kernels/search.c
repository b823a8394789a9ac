/* Searching and counting, for every device: the argument checks of searchsorted,
 * bucketize, bincount and histc that both backends run before anything is written
 * (declared in kernels/search_common.h), and one driver for searchsorted and
 * bucketize (the schema names the search_* functions below for CPU and CUDA):
 * the checks and a Scalar self as a 0-dim tensor here, then the device's
 * search through the stub search_sorted: kernels/cpu/sort_search.c,
 * kernels/cuda/sort_search.cu.  bincount and histc likewise: the checks, the result's
 * size and range, allocation and out= here; the passes over the data (the input's
 * range, the counting) are the stubs search_bincount_* and search_histc_*. */
#include <float.h>
#include <inttypes.h>
#include <math.h>

#include "kernels/search_common.h"
#include "ops_dispatch.h"
#include "ops_kernels_search.h"

/* ---- the checks both backends run (kernels/search_common.h) ------------------------- */

/* searchsorted's argument checks (bucketize's too, with op "bucketize"): side/right
 * (the resolved direction into *right_io), sorter, shapes, out's dtype, which PyTorch
 * makes before the dtype. */
static ops_status
ss_check_args(const char *op, const ops_tensor *boundaries, const ops_tensor *self, bool out_int32, bool *right_io,
              const char *side, const ops_tensor *sorter, const ops_tensor *out)
{
    char s1[OPS_SHAPE_STR_LEN], s2[OPS_SHAPE_STR_LEN];
    bool right = *right_io;

    if (side != NULL) {
        if (strcmp(side, "left") != 0 && strcmp(side, "right") != 0)
            return ops_fail(OPS_ERR_VALUE, "%s: side can only be 'left' or 'right' but got %s", op, side);
        if (right && strcmp(side, "right") != 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: side and right can't be set to opposites, got side of %s while right was True", op,
                            side);
        right = strcmp(side, "right") == 0;
    }
    const int64_t bnd = boundaries->ndim;
    if (sorter != NULL) {
        if (sorter->ndim != bnd || memcmp(sorter->sizes, boundaries->sizes, (size_t)bnd * sizeof(int64_t)) != 0)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: boundary and sorter must have the same size, but got boundary tensor %s and got "
                            "sorter tensor %s",
                            op, ops_shape_str((int)bnd, boundaries->sizes, s1, sizeof s1),
                            ops_shape_str(sorter->ndim, sorter->sizes, s2, sizeof s2));
        if (sorter->dtype != OPS_INT64)
            return ops_fail(OPS_ERR_DTYPE, "%s: sorter must be a tensor of long dtype but got dtype %s", op,
                            ops_dtype_name(sorter->dtype));
    }
    const int64_t vn = ops_shape_numel(self->ndim, self->sizes);
    if (!(self->ndim > 0 || (vn == 1 && bnd == 1)))
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: input value can be a scalar only when boundaries tensor dimension is 1, but we got "
                        "boundaries tensor dim(%d) and input value's dim(%d) numel(%" PRId64 ")",
                        op, (int)bnd, self->ndim, vn);
    if (bnd == 0)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: boundaries tensor should have positive dimension, but got 0 dimension", op);
    if (bnd != 1 && (bnd != self->ndim ||
                     memcmp(boundaries->sizes, self->sizes, (size_t)(bnd - 1) * sizeof(int64_t)) != 0))
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                        "tensor and input value tensor must match, but we got boundaries tensor %s and input value "
                        "tensor %s",
                        op, ops_shape_str((int)bnd, boundaries->sizes, s1, sizeof s1),
                        ops_shape_str(self->ndim, self->sizes, s2, sizeof s2));
    const ops_dtype odt = out_int32 ? OPS_INT32 : OPS_INT64;
    if (out != NULL && out->dtype != odt)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending on "
                        "whether out_int32 flag is True, but we got output tensor's dtype %s and out_int32 flag is %s",
                        op, ops_dtype_name(out->dtype), out_int32 ? "True" : "False");
    const int64_t n = boundaries->sizes[bnd - 1];
    if (out_int32 && n >= INT32_MAX)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: the size of boundaries' last dimension should be less than %d, but we got %" PRId64, op,
                        INT32_MAX, n);
    *right_io = right;
    return OPS_OK;
}

/* ss_check_args, then the dtype both operands are compared in (their promotion, into
 * *cd_out) against declared, the set of the entry whose kernel runs
 * (OPS_DTYPE_MASK_<ENTRY>), last as PyTorch checks it. */
static ops_status
ss_check(const char *op, unsigned declared, const ops_tensor *boundaries, const ops_tensor *self, bool out_int32,
         bool *right_io, const char *side, const ops_tensor *sorter, const ops_tensor *out, ops_dtype *cd_out)
{
    ops_status st;
    if ((st = ss_check_args(op, boundaries, self, out_int32, right_io, side, sorter, out)) != OPS_OK)
        return st;
    const ops_tensor *const pair[2] = {boundaries, self};
    const ops_dtype cd = ops_result_type(2, pair, 0, NULL);
    if (!(declared & OPS_DTYPE_BIT(cd)))
        return ops_fail_dtype(op, cd, declared);
    *cd_out = cd;
    return OPS_OK;
}

/* A Scalar as the 0-dim tensor PyTorch makes of it (scalar_to_tensor: int64, float64
 * or bool), so that it promotes with the boundaries as a 0-dim tensor. */
ops_tensor *
ops_ss_scalar(ops_scalar s)
{
    const ops_dtype dt = s.kind == OPS_SCALAR_FLOAT ? OPS_FLOAT64 : s.kind == OPS_SCALAR_INT ? OPS_INT64 : OPS_BOOL;
    return ops_scalar_tensor(s, dt);
}

int64_t
ops_ss_per_row(const ops_tensor *boundaries, const ops_tensor *self)
{
    return boundaries->ndim == 1 ? 0 : (self->ndim > 0 ? self->sizes[self->ndim - 1] : 1);
}

/* PyTorch's rules: counts in int64; with weights, float32 weights sum in float32 and any
 * other weights are converted to float64 and sum there.  An empty self gives
 * minlength zeros of int64 (weights or not), as PyTorch's CPU bincount. */
ops_status
ops_bincount_check(unsigned declared, const ops_tensor *self, const ops_tensor *weights, int64_t minlength,
                   bool *empty)
{
    const char *op = "bincount";
    if (!(declared & OPS_DTYPE_BIT(self->dtype)))
        return ops_fail_dtype(op, self->dtype, declared);
    if (minlength < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: minlength should be >= 0", op);
    const int64_t n = ops_shape_numel(self->ndim, self->sizes);
    *empty = self->ndim == 1 && n == 0;
    if (*empty)
        return OPS_OK;
    if (self->ndim != 1)
        return ops_fail(OPS_ERR_VALUE, OPS_BINCOUNT_MSG, op);
    if (weights != NULL && (weights->ndim != 1 || weights->sizes[0] != n))
        return ops_fail(OPS_ERR_SHAPE, "%s: weights should be 1-d and have the same length as input", op);
    return OPS_OK;
}

ops_dtype
ops_bincount_dtype(const ops_tensor *weights)
{
    return weights == NULL ? OPS_INT64 : weights->dtype == OPS_FLOAT32 ? OPS_FLOAT32 : OPS_FLOAT64;
}

ops_status
ops_histc_check(unsigned declared, const ops_tensor *self, int64_t bins, const ops_tensor *out)
{
    const char *op = "histc";
    const ops_dtype dt = self->dtype;
    if (!(declared & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, declared);
    if (bins <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: bins must be > 0, but got %" PRId64 " for dimension 0", op, bins);
    if (out != NULL && out->dtype != dt)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                        ops_dtype_name(dt), ops_dtype_name(out->dtype));
    return OPS_OK;
}

ops_status
ops_histc_range(ops_dtype dt, double *lo, double *hi)
{
    const char *op = "histc";
    if (*lo == *hi) {
        *lo -= 1;
        *hi += 1;
    }
    /* The largest finite value of dt: an edge beyond it becomes inf in dt, and the
     * counting loop would divide inf by inf (min=-1e300 on float32). */
    const double big = dt == OPS_FLOAT16 ? 65504.0 : dt == OPS_BFLOAT16 ? 3.3895313892515355e38
                     : dt == OPS_FLOAT32 ? (double)FLT_MAX : DBL_MAX;
    if (!isfinite(*lo) || !isfinite(*hi) || fabs(*lo) > big || fabs(*hi) > big)
        return ops_fail(OPS_ERR_VALUE, "%s: range of [%g, %g] is not finite in %s", op, *lo, *hi,
                        ops_dtype_name(dt));
    if (!(*lo < *hi))
        return ops_fail(OPS_ERR_VALUE, "%s: max must be larger than min", op);
    return OPS_OK;
}

/* ---- searchsorted and bucketize ---------------------------------------------------------- */

static ops_status
bucketize_check(const ops_tensor *boundaries)
{
    if (boundaries->ndim != 1)
        return ops_fail(OPS_ERR_SHAPE, "bucketize: boundaries tensor must be 1 dimension, but got dim(%d)",
                        boundaries->ndim);
    return OPS_OK;
}

/* The `check:` of the Tensor forms of searchsorted and bucketize: their argument
 * checks, which PyTorch makes before the dtype; the glue then refuses an undeclared
 * promoted dtype of the two Tensors (bool only when both are bool, as their promotion
 * here), and ss_run runs the same checks again as a guard for a direct call.  The
 * Scalar forms compare in the promotion with the Scalar made a 0-dim tensor, which the
 * glue's `of:` cannot name: their kernels refuse. */
ops_status
ops_check_searchsorted(const ops_tensor *sorted_sequence, const ops_tensor *self, bool out_int32, bool right,
                       const char *side, const ops_tensor *sorter)
{
    return ss_check_args("searchsorted", sorted_sequence, self, out_int32, &right, side, sorter, NULL);
}

ops_status
ops_check_searchsorted_out(const ops_tensor *sorted_sequence, const ops_tensor *self, bool out_int32, bool right,
                           const char *side, const ops_tensor *sorter, ops_tensor *out)
{
    return ss_check_args("searchsorted", sorted_sequence, self, out_int32, &right, side, sorter, out);
}

ops_status
ops_check_bucketize(const ops_tensor *self, const ops_tensor *boundaries, bool out_int32, bool right)
{
    ops_status st;
    if ((st = bucketize_check(boundaries)) != OPS_OK)
        return st;
    return ss_check_args("bucketize", boundaries, self, out_int32, &right, NULL, NULL, NULL);
}

ops_status
ops_check_bucketize_out(const ops_tensor *self, const ops_tensor *boundaries, bool out_int32, bool right,
                        ops_tensor *out)
{
    ops_status st;
    if ((st = bucketize_check(boundaries)) != OPS_OK)
        return st;
    return ss_check_args("bucketize", boundaries, self, out_int32, &right, NULL, NULL, out);
}

/* The work of every searchsorted/bucketize op: bucketize's check, a Scalar self made
 * the 0-dim tensor PyTorch makes of it, searchsorted's checks (ss_check, the dtype
 * against declared), then the device's search under the public op's name. */
static ops_status
ss_run(unsigned declared, bool bucketize, const ops_tensor *boundaries, const ops_tensor *self,
       const ops_scalar *scalar_self, bool out_int32, bool right, const char *side, const ops_tensor *sorter,
       ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    if (bucketize && (st = bucketize_check(boundaries)) != OPS_OK)
        return st;
    ops_tensor *v = NULL;
    if (scalar_self != NULL && (self = v = ops_ss_scalar(*scalar_self)) == NULL)
        return ops_last_status();
    const char *op = bucketize ? "bucketize" : "searchsorted";
    const ops_device dev = boundaries->storage->device;
    ops_dtype cd = OPS_BOOL; /* ss_check sets it when it passes */
    if ((st = ss_check(op, declared, boundaries, self, out_int32, &right, side, sorter, out, &cd)) == OPS_OK)
        st = OPS_STUB_CALL(search_sorted, dev, op, boundaries, self, out_int32, right, sorter, cd, out, result);
    ops_tensor_release(v);
    return st;
}

ops_tensor *
search_searchsorted(const ops_tensor *sorted_sequence, const ops_tensor *self, bool out_int32, bool right,
                    const char *side, const ops_tensor *sorter)
{
    ops_tensor *r = NULL;
    ss_run(OPS_DTYPE_MASK_SEARCHSORTED, false, sorted_sequence, self, NULL, out_int32, right, side, sorter, NULL, &r);
    return r;
}

ops_status
search_searchsorted_tensor_out(const ops_tensor *sorted_sequence, const ops_tensor *self, bool out_int32, bool right,
                               const char *side, const ops_tensor *sorter, ops_tensor *out)
{
    return ss_run(OPS_DTYPE_MASK_SEARCHSORTED_TENSOR_OUT, false,
                  sorted_sequence, self, NULL, out_int32, right, side, sorter, out, NULL);
}

ops_tensor *
search_searchsorted_scalar(const ops_tensor *sorted_sequence, ops_scalar self, bool out_int32, bool right,
                           const char *side, const ops_tensor *sorter)
{
    ops_tensor *r = NULL;
    ss_run(OPS_DTYPE_MASK_SEARCHSORTED_SCALAR, false,
           sorted_sequence, NULL, &self, out_int32, right, side, sorter, NULL, &r);
    return r;
}

ops_status
search_searchsorted_scalar_out(const ops_tensor *sorted_sequence, ops_scalar self, bool out_int32, bool right,
                               const char *side, const ops_tensor *sorter, ops_tensor *out)
{
    return ss_run(OPS_DTYPE_MASK_SEARCHSORTED_SCALAR_OUT, false,
                  sorted_sequence, NULL, &self, out_int32, right, side, sorter, out, NULL);
}

ops_tensor *
search_bucketize(const ops_tensor *self, const ops_tensor *boundaries, bool out_int32, bool right)
{
    ops_tensor *r = NULL;
    ss_run(OPS_DTYPE_MASK_BUCKETIZE, true, boundaries, self, NULL, out_int32, right, NULL, NULL, NULL, &r);
    return r;
}

ops_status
search_bucketize_tensor_out(const ops_tensor *self, const ops_tensor *boundaries, bool out_int32, bool right,
                            ops_tensor *out)
{
    return ss_run(OPS_DTYPE_MASK_BUCKETIZE_TENSOR_OUT, true,
                  boundaries, self, NULL, out_int32, right, NULL, NULL, out, NULL);
}

ops_tensor *
search_bucketize_scalar(ops_scalar self, const ops_tensor *boundaries, bool out_int32, bool right)
{
    ops_tensor *r = NULL;
    ss_run(OPS_DTYPE_MASK_BUCKETIZE_SCALAR, true, boundaries, NULL, &self, out_int32, right, NULL, NULL, NULL, &r);
    return r;
}

ops_status
search_bucketize_scalar_out(ops_scalar self, const ops_tensor *boundaries, bool out_int32, bool right, ops_tensor *out)
{
    return ss_run(OPS_DTYPE_MASK_BUCKETIZE_SCALAR_OUT, true,
                  boundaries, NULL, &self, out_int32, right, NULL, NULL, out, NULL);
}

/* ---- bincount and histc ------------------------------------------------------------------ */

/* t as a contiguous tensor of dtype dt on dev (t itself, retained, when it is one). */
static ops_tensor *
search_contig(const char *op, const ops_tensor *t, ops_dtype dt, ops_device dev)
{
    if (t->dtype == dt && ops_tensor_is_contiguous(t) && ops_device_equal(t->storage->device, dev))
        return ops_tensor_retain(t);
    ops_tensor *c = ops_tensor_new(op, t->ndim, t->sizes, NULL, dt, dev);
    if (c != NULL && ops_copy_values(op, c, t) != OPS_OK) {
        ops_tensor_release(c);
        return NULL;
    }
    return c;
}

/* The result r (NULL: the error is set) into *result, or written into out. */
static ops_status
search_finish(const char *op, ops_tensor *r, ops_tensor *out, ops_tensor **result)
{
    if (out != NULL)
        return ops_write_out(op, r, out);
    *result = r;
    return r != NULL ? OPS_OK : ops_last_status();
}

/* bincount: the bins are max(minlength, the largest value + 1), so the input's range
 * is found first (a negative value fails before anything is allocated for the
 * result); the weights are converted to the result's dtype. */
static ops_status
bincount_run(unsigned declared, const ops_tensor *self, const ops_tensor *weights, int64_t minlength, ops_tensor *out,
             ops_tensor **result)
{
    const char *op = "bincount";
    bool empty;
    ops_status st = ops_bincount_check(declared, self, weights, minlength, &empty);
    if (st != OPS_OK)
        return st;
    const ops_device dev = self->storage->device;
    const ops_dtype rdt = empty ? OPS_INT64 : ops_bincount_dtype(weights);
    int64_t nbins = minlength;
    ops_tensor *x = NULL, *w = NULL, *r = NULL;
    if (!empty) {
        int64_t lo, hi;
        if ((x = search_contig(op, self, OPS_INT64, dev)) == NULL)
            goto fail;
        if ((st = OPS_STUB_CALL(search_bincount_minmax, dev, op, x, &lo, &hi)) != OPS_OK)
            goto done;
        if (lo < 0) {
            st = ops_fail(OPS_ERR_VALUE, OPS_BINCOUNT_MSG, op);
            goto done;
        }
        if (hi + 1 > nbins)
            nbins = hi + 1;
        if (weights != NULL && (w = search_contig(op, weights, rdt, dev)) == NULL)
            goto fail;
    }
    if ((r = ops_tensor_new(op, 1, &nbins, NULL, rdt, dev)) == NULL)
        goto fail;
    if ((st = OPS_STUB_CALL(search_bincount_count, dev, op, r, x, w)) != OPS_OK)
        goto done;
    st = search_finish(op, r, out, result);
    r = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_tensor_release(x);
    ops_tensor_release(w);
    ops_tensor_release(r);
    return st;
}

ops_tensor *
search_bincount(const ops_tensor *self, const ops_tensor *weights, int64_t minlength)
{
    ops_tensor *r = NULL;
    bincount_run(OPS_DTYPE_MASK_BINCOUNT, self, weights, minlength, NULL, &r);
    return r;
}

ops_status
search_bincount_out(const ops_tensor *self, const ops_tensor *weights, int64_t minlength, ops_tensor *out)
{
    return bincount_run(OPS_DTYPE_MASK_BINCOUNT_OUT, self, weights, minlength, out, NULL);
}

/* histc: min == max (with data) takes the data's range, as PyTorch does. */
static ops_status
histc_run(unsigned declared, const ops_tensor *self, int64_t bins, ops_scalar min, ops_scalar max, ops_tensor *out,
          ops_tensor **result)
{
    const char *op = "histc";
    ops_status st = ops_histc_check(declared, self, bins, out);
    if (st != OPS_OK)
        return st;
    const ops_device dev = self->storage->device;
    const ops_dtype dt = self->dtype;
    ops_tensor *x = search_contig(op, self, dt, dev), *r = NULL;
    if (x == NULL)
        return ops_last_status();
    const int64_t n = ops_tensor_numel(x);
    double lo = ops_scalar_to_double(min), hi = ops_scalar_to_double(max);
    if (lo == hi && n > 0 && (st = OPS_STUB_CALL(search_histc_minmax, dev, op, x, &lo, &hi)) != OPS_OK)
        goto done;
    if ((st = ops_histc_range(dt, &lo, &hi)) != OPS_OK)
        goto done;
    if ((r = ops_tensor_new(op, 1, &bins, NULL, dt, dev)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if ((st = OPS_STUB_CALL(search_histc_count, dev, op, r, x, lo, hi)) != OPS_OK)
        goto done;
    st = search_finish(op, r, out, result);
    r = NULL;
done:
    ops_tensor_release(x);
    ops_tensor_release(r);
    return st;
}

ops_tensor *
search_histc(const ops_tensor *self, int64_t bins, ops_scalar min, ops_scalar max)
{
    ops_tensor *r = NULL;
    histc_run(OPS_DTYPE_MASK_HISTC, self, bins, min, max, NULL, &r);
    return r;
}

ops_status
search_histc_out(const ops_tensor *self, int64_t bins, ops_scalar min, ops_scalar max, ops_tensor *out)
{
    return histc_run(OPS_DTYPE_MASK_HISTC_OUT, self, bins, min, max, out, NULL);
}

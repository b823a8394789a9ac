/* Normalization and embedding: the drivers of every device (the schema's
 * `CPU, CUDA: norm_*`) of batch_norm, native_batch_norm, layer_norm,
 * native_layer_norm, group_norm, native_group_norm and embedding, and the composite
 * embedding_renorm_.
 *
 * The normalizations compute in float (float16, bfloat16, float32 inputs) or double
 * (float64) over contiguous buffers on the input's device: an input that is already
 * a contiguous tensor of that dtype is used in place, anything else (strided, half
 * types, parameters of another dtype) is converted once into a contiguous copy.  The
 * passes over the elements are the stubs of kernels/norm.h (two-pass statistics with
 * double accumulators on every device); results are rounded once to the input's
 * dtype.  Every check runs before anything is written; batch_norm's statistics are
 * combined with the running ones here, in double, for every device, and the running
 * statistics (the one write into an argument) are updated last, after every
 * allocation has succeeded. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/norm.h"
#include "ops_dispatch.h"
#include "ops_functions_binary.h"
#include "ops_functions_compare.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_creation.h"
#include "ops_functions_index.h"
#include "ops_functions_index_add.h"
#include "ops_functions_reduce.h"
#include "ops_functions_reduce_norm.h"
#include "ops_functions_unique.h"
#include "ops_kernels_norm.h"

/* ---- shared pieces ---------------------------------------------------------------- */

/* t as a contiguous tensor of dtype dt on device dev: a new reference to t when it
 * already is one, else a converted copy.  NULL with the error set on failure. */
static ops_tensor *
nrm_contig_on(const char *op, const ops_tensor *t, ops_dtype dt, ops_device dev)
{
    if (t->dtype == dt && ops_tensor_is_contiguous(t) && ops_device_equal(ops_tensor_device(t), dev))
        return ops_tensor_retain(t);
    ops_tensor *c = ops_tensor_new(op, t->ndim, t->sizes, NULL, dt, dev);
    if (c == NULL)
        return NULL;
    if (ops_copy_values(op, c, t) != OPS_OK) {
        ops_tensor_release(c);
        return NULL;
    }
    return c;
}

/* The same on t's own device. */
static ops_tensor *
nrm_contig(const char *op, const ops_tensor *t, ops_dtype dt)
{
    return nrm_contig_on(op, t, dt, ops_tensor_device(t));
}

/* t (owned, contiguous) converted to dtype dt: t itself when it has dt, else a new
 * tensor (t released either way on failure). */
static ops_tensor *
nrm_cast(const char *op, ops_tensor *t, ops_dtype dt)
{
    if (t == NULL || t->dtype == dt)
        return t;
    ops_tensor *c = ops_tensor_new(op, t->ndim, t->sizes, NULL, dt, ops_tensor_device(t));
    if (c != NULL && ops_copy_values(op, c, t) != OPS_OK) {
        ops_tensor_release(c);
        c = NULL;
    }
    ops_tensor_release(t);
    return c;
}

/* The dtype the normalizations compute in, after checking input's dtype is one the
 * entry declares (`dtypes:`, OPS_DTYPE_MASK_<ENTRY>; floating, the compute dtype being
 * float32 or float64).  Where the entry says `of: input`, the generated glue has
 * refused the others before the kernel runs; this guards a direct call. */
static ops_status
nrm_compute_dtype(const char *op, unsigned declared, const ops_tensor *input, ops_dtype *cd)
{
    if (!(declared & OPS_DTYPE_BIT(input->dtype)))
        return ops_fail_dtype(op, input->dtype, declared);
    *cd = input->dtype == OPS_FLOAT64 ? OPS_FLOAT64 : OPS_FLOAT32;
    return OPS_OK;
}

/* An optional parameter as a contiguous cd tensor on device dev (NULL stays NULL).
 * Returns false on failure. */
static bool
nrm_param(const char *op, const ops_tensor *t, ops_dtype cd, ops_device dev, ops_tensor **out)
{
    *out = NULL;
    if (t == NULL)
        return true;
    if (!ops_dtype_is_floating(t->dtype)) {
        ops_fail_dtype(op, t->dtype, OPS_MASK_FLOATING);
        return false;
    }
    return (*out = nrm_contig_on(op, t, cd, dev)) != NULL;
}

static const void *
nrm_data(const ops_tensor *t)
{
    return t != NULL ? ops_tensor_data_ptr(t) : NULL;
}
/* A host float64 tensor of t's shape holding the doubles v[0..n), or NULL with the
 * error set: what a copy into t (any device, strides and dtype) converts and places. */
static ops_tensor *
nrm_host_doubles(const char *op, const ops_tensor *t, const double *v, int64_t n)
{
    ops_tensor *h = ops_tensor_new(op, t->ndim, t->sizes, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    if (h != NULL)
        memcpy(ops_tensor_data_ptr(h), v, (size_t)n * sizeof(double));
    return h;
}

/* The doubles v[0..n) (host memory) into t (any device, strides and dtype). */
static ops_status
nrm_store_doubles(const char *op, ops_tensor *t, const double *v, int64_t n)
{
    ops_tensor *h = nrm_host_doubles(op, t, v, n);
    if (h == NULL)
        return ops_last_status();
    const ops_status st = ops_copy_values(op, t, h);
    ops_tensor_release(h);
    return st;
}

/* ---- layer_norm ----------------------------------------------------------------------- */

/* The shape checks of layer_norm's input, normalized_shape, weight and bias (PyTorch's
 * messages); M rows of N elements. */
static ops_status
ln_check(const char *op, const ops_tensor *input, ops_int_list ns, const ops_tensor *weight, const ops_tensor *bias,
         int64_t *M, int64_t *N)
{
    char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
    const int nn = (int)ns.len;
    if (nn < 1)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                        "element, but got normalized_shape = []",
                        op);
    ops_shape_str(nn > OPS_MAX_DIMS ? OPS_MAX_DIMS : nn, ns.data, b, sizeof b);
    const ops_tensor *params[2] = {weight, bias};
    static const char *const pnames[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) {
        const ops_tensor *p = params[k];
        if (p != NULL && (p->ndim != nn || memcmp(p->sizes, ns.data, (size_t)nn * sizeof(int64_t)) != 0))
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Expected %s to be of same shape as normalized_shape, but got %s of shape %s and "
                            "normalized_shape = %s",
                            op, pnames[k], pnames[k], ops_shape_str(p->ndim, p->sizes, a, sizeof a), b);
    }
    const int axis = input->ndim - nn;
    if (axis < 0 || memcmp(input->sizes + axis, ns.data, (size_t)nn * sizeof(int64_t)) != 0) {
        char want[OPS_SHAPE_STR_LEN + 8] = "[*";
        for (int d = 0; d < nn && d < OPS_MAX_DIMS; d++)
            snprintf(want + strlen(want), sizeof want - strlen(want), ", %" PRId64, ns.data[d]);
        snprintf(want + strlen(want), sizeof want - strlen(want), "]");
        return ops_fail(OPS_ERR_SHAPE, "%s: Given normalized_shape=%s, expected input with shape %s, but got input of size%s",
                        op, b, want, ops_shape_str(input->ndim, input->sizes, a, sizeof a));
    }
    *M = *N = 1;
    for (int d = 0; d < input->ndim; d++)
        *(d < axis ? M : N) *= input->sizes[d];
    return OPS_OK;
}

/* layer_norm over the trailing dims normalized_shape; *mean and *rstd (shape
 * input.shape[:axis] + [1] * len(normalized_shape)) when mean is not NULL. */
static ops_status
ln_impl(const char *op, unsigned declared, const ops_tensor *input, ops_int_list ns, const ops_tensor *weight,
        const ops_tensor *bias, double eps, ops_tensor **result, ops_tensor **mean, ops_tensor **rstd)
{
    ops_status st = OPS_OK;
    ops_dtype cd = OPS_FLOAT32;
    if ((st = nrm_compute_dtype(op, declared, input, &cd)) != OPS_OK)
        return st;
    int64_t M = 1, N = 1;
    if ((st = ln_check(op, input, ns, weight, bias, &M, &N)) != OPS_OK)
        return st;
    const int axis = input->ndim - (int)ns.len;
    ops_tensor *x = NULL, *w = NULL, *bb = NULL, *y = NULL, *mu = NULL, *rs = NULL;
    const ops_device dev = ops_tensor_device(input);
    int64_t sshape[OPS_MAX_DIMS];
    for (int d = 0; d < input->ndim; d++)
        sshape[d] = d < axis ? input->sizes[d] : 1;
    if ((x = nrm_contig(op, input, cd)) == NULL || !nrm_param(op, weight, cd, dev, &w) ||
        !nrm_param(op, bias, cd, dev, &bb) ||
        (y = ops_tensor_new(op, input->ndim, input->sizes, NULL, cd, dev)) == NULL ||
        (mean != NULL && ((mu = ops_tensor_new(op, input->ndim, sshape, NULL, cd, dev)) == NULL ||
                          (rs = ops_tensor_new(op, input->ndim, sshape, NULL, cd, dev)) == NULL))) {
        st = ops_last_status();
        goto done;
    }
    if ((st = OPS_STUB_CALL(norm_layer_rows, dev, op, x, w, bb, y, mu, rs, M, N, eps)) != OPS_OK)
        goto done;
    if ((y = nrm_cast(op, y, input->dtype)) == NULL ||
        (mean != NULL && ((mu = nrm_cast(op, mu, input->dtype)) == NULL || (rs = nrm_cast(op, rs, input->dtype)) == NULL))) {
        st = ops_last_status();
        goto done;
    }
    *result = y;
    y = NULL;
    if (mean != NULL) {
        *mean = mu;
        *rstd = rs;
        mu = rs = NULL;
    }
done:
    ops_tensor_release(x);
    ops_tensor_release(w);
    ops_tensor_release(bb);
    ops_tensor_release(y);
    ops_tensor_release(mu);
    ops_tensor_release(rs);
    return st;
}

ops_tensor *
norm_layer_norm(const ops_tensor *input, ops_int_list normalized_shape, const ops_tensor *weight,
                const ops_tensor *bias, double eps, bool cudnn_enable)
{
    (void)cudnn_enable; /* PyTorch's flag for its cuDNN path; no meaning here */
    ops_tensor *r = NULL;
    ln_impl("layer_norm", OPS_DTYPE_MASK_LAYER_NORM, input, normalized_shape, weight, bias, eps, &r, NULL, NULL);
    return r;
}

ops_status
norm_native_layer_norm(const ops_tensor *input, ops_int_list normalized_shape, const ops_tensor *weight,
                       const ops_tensor *bias, double eps, ops_tensor **result0, ops_tensor **result1,
                       ops_tensor **result2)
{
    return ln_impl("native_layer_norm", OPS_DTYPE_MASK_NATIVE_LAYER_NORM, input, normalized_shape, weight, bias, eps,
                   result0, result1, result2);
}

ops_status
norm_native_layer_norm_backward(const ops_tensor *grad_out, const ops_tensor *input, ops_int_list normalized_shape,
                                const ops_tensor *mean, const ops_tensor *rstd, const ops_tensor *weight,
                                const ops_tensor *bias, ops_bool_list output_mask, ops_tensor **result0,
                                ops_tensor **result1, ops_tensor **result2)
{
    const char *op = "native_layer_norm_backward";
    char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
    ops_status st = OPS_OK;
    ops_dtype cd = OPS_FLOAT32;
    if ((st = nrm_compute_dtype(op, OPS_DTYPE_MASK_NATIVE_LAYER_NORM_BACKWARD, input, &cd)) != OPS_OK)
        return st;
    int64_t M = 1, N = 1;
    if ((st = ln_check(op, input, normalized_shape, weight, bias, &M, &N)) != OPS_OK)
        return st;
    const ops_device dev = ops_tensor_device(input);
    if (grad_out->ndim != input->ndim || memcmp(grad_out->sizes, input->sizes, (size_t)input->ndim * sizeof(int64_t)))
        return ops_fail(OPS_ERR_SHAPE, "%s: grad_out of shape %s does not match input of shape %s", op,
                        ops_shape_str(grad_out->ndim, grad_out->sizes, a, sizeof a),
                        ops_shape_str(input->ndim, input->sizes, b, sizeof b));
    const ops_tensor *stats[2] = {mean, rstd};
    static const char *const snames[2] = {"mean", "rstd"};
    for (int k = 0; k < 2; k++) {
        if (ops_tensor_numel(stats[k]) != M)
            return ops_fail(OPS_ERR_SHAPE, "%s: %s of shape %s should have %" PRId64 " elements (one per row of %s)",
                            op, snames[k], ops_shape_str(stats[k]->ndim, stats[k]->sizes, a, sizeof a), M,
                            ops_shape_str(input->ndim, input->sizes, b, sizeof b));
    }
    const ops_tensor *all[5] = {grad_out, mean, rstd, weight, bias};
    static const char *const anames[5] = {"grad_out", "mean", "rstd", "weight", "bias"};
    for (int k = 0; k < 5; k++) {
        if (all[k] == NULL)
            continue;
        if (!ops_dtype_is_floating(all[k]->dtype))
            return ops_fail(OPS_ERR_DTYPE, "%s: %s must be a floating tensor, got %s", op, anames[k],
                            ops_dtype_name(all[k]->dtype));
        if (!ops_device_equal(ops_tensor_device(all[k]), dev))
            return ops_fail(OPS_ERR_DEVICE, "%s: %s is on another device than input", op, anames[k]);
    }
    /* bool[3]: the glue has checked the length */
    const bool want[3] = {output_mask.data[0], output_mask.data[1], output_mask.data[2]};
    const ops_dtype rdt[3] = {input->dtype, weight != NULL ? weight->dtype : input->dtype,
                              bias != NULL ? bias->dtype : weight != NULL ? weight->dtype : input->dtype};
    ops_tensor *g = NULL, *x = NULL, *mu = NULL, *rs = NULL, *w = NULL, *r[3] = {0};
    const int nn = (int)normalized_shape.len;
    int64_t zero = 0;
    if ((g = nrm_contig(op, grad_out, cd)) == NULL || (x = nrm_contig(op, input, cd)) == NULL ||
        (mu = nrm_contig(op, mean, cd)) == NULL || (rs = nrm_contig(op, rstd, cd)) == NULL ||
        !nrm_param(op, weight, cd, dev, &w))
        goto fail;
    for (int k = 0; k < 3; k++) {
        const int nd = !want[k] ? 1 : k == 0 ? input->ndim : nn;
        const int64_t *sz = !want[k] ? &zero : k == 0 ? input->sizes : normalized_shape.data;
        if ((r[k] = ops_tensor_new(op, nd, sz, NULL, want[k] ? cd : rdt[k], dev)) == NULL)
            goto fail;
    }
    ops_tensor *dx = want[0] ? r[0] : NULL, *dw = want[1] ? r[1] : NULL, *db = want[2] ? r[2] : NULL;
    /* the device's row loop (kernels/cpu/norm.c, kernels/cuda/norm.cu) */
    st = OPS_STUB_CALL(norm_layer_backward_rows, dev, op, g, x, mu, rs, w, dx, dw, db, M, N);
    if (st != OPS_OK)
        goto done;
    for (int k = 0; k < 3; k++)
        if (want[k] && (r[k] = nrm_cast(op, r[k], rdt[k])) == NULL)
            goto fail;
    *result0 = r[0];
    *result1 = r[1];
    *result2 = r[2];
    r[0] = r[1] = r[2] = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_tensor_release(g);
    ops_tensor_release(x);
    ops_tensor_release(mu);
    ops_tensor_release(rs);
    ops_tensor_release(w);
    for (int k = 0; k < 3; k++)
        ops_tensor_release(r[k]);
    return st;
}

/* ---- batch_norm ------------------------------------------------------------------------ */
/* batch_norm / native_batch_norm.  *save_mean and *save_invstd (when save_mean is not
 * NULL): the batch statistics in training, empty [0] tensors in evaluation, as
 * PyTorch's CPU kernel returns. */
static ops_status
bn_impl(const char *op, unsigned declared, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
        const ops_tensor *running_mean, const ops_tensor *running_var, bool training, double momentum, double eps,
        ops_tensor **result, ops_tensor **save_mean, ops_tensor **save_invstd)
{
    ops_status st = OPS_OK;
    ops_dtype cd = OPS_FLOAT32;
    if ((st = nrm_compute_dtype(op, declared, input, &cd)) != OPS_OK)
        return st;
    if (input->ndim < 2 && save_mean == NULL && ops_tensor_numel(input) == 0) {
        /* PyTorch's batch_norm returns a copy of an empty input before it looks for a
         * channel dim (a (0,) input is one of its own samples); the running statistics
         * stay as they are.  native_batch_norm has no such path and refuses it below. */
        *result = ops_clone(input, OPS_MEMORY_FORMAT_NONE);
        return *result != NULL ? OPS_OK : ops_last_status();
    }
    if (input->ndim < 2)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Dimension out of range (expected to be in range of [-%d, %d], but got 1)", op,
                        input->ndim > 0 ? input->ndim : 1, input->ndim > 0 ? input->ndim - 1 : 0);
    const int64_t N = input->sizes[0], C = input->sizes[1];
    int64_t S = 1;
    for (int d = 2; d < input->ndim; d++)
        S *= input->sizes[d];
    const ops_tensor *params[4] = {running_mean, running_var, weight, bias};
    static const char *const pnames[4] = {"running_mean", "running_var", "weight", "bias"};
    for (int k = 0; k < 4; k++) {
        const ops_tensor *p = params[k];
        if (p == NULL) {
            if (k < 2 && !training)
                return ops_fail(OPS_ERR_VALUE, "%s: %s must be defined in evaluation mode", op, pnames[k]);
            continue;
        }
        if (ops_tensor_numel(p) != C)
            return ops_fail(OPS_ERR_SHAPE, "%s: %s should contain %" PRId64 " elements not %" PRId64, op, pnames[k],
                            C, ops_tensor_numel(p));
        if (!ops_dtype_is_floating(p->dtype))
            return ops_fail_dtype(op, p->dtype, OPS_MASK_FLOATING);
    }
    /* the running statistics are written in place: they must not overlap themselves */
    for (int k = 0; k < 2 && training; k++) {
        if (params[k] != NULL && ops_tensor_has_internal_overlap(params[k]))
            return ops_fail(OPS_ERR_VALUE,
                            "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                            "single memory location. Please clone() the tensor before performing the operation.",
                            op);
    }

    ops_tensor *x = NULL, *w = NULL, *b = NULL, *rm = NULL, *rv = NULL, *y = NULL, *sm = NULL, *si = NULL;
    ops_tensor *hm = NULL, *hv = NULL; /* the new running statistics, staged */
    const ops_device dev = ops_tensor_device(input);
    double *stats = NULL;
    const int64_t zero = 0;
    if ((x = nrm_contig(op, input, cd)) == NULL || !nrm_param(op, weight, cd, dev, &w) ||
        !nrm_param(op, bias, cd, dev, &b) ||
        /* the running statistics in host memory: combined here */
        !nrm_param(op, running_mean, OPS_FLOAT64, OPS_DEVICE_CPU, &rm) ||
        !nrm_param(op, running_var, OPS_FLOAT64, OPS_DEVICE_CPU, &rv) ||
        (y = ops_tensor_new(op, input->ndim, input->sizes, NULL, cd, dev)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if (save_mean != NULL) {
        const int64_t *ss = training ? &C : &zero;
        if ((sm = ops_tensor_new(op, 1, ss, NULL, input->dtype, dev)) == NULL ||
            (si = ops_tensor_new(op, 1, ss, NULL, input->dtype, dev)) == NULL) {
            st = ops_last_status();
            goto done;
        }
    }
    /* mean, m2 (sum of squared deviations), invstd, new running mean and var */
    if ((stats = ops_host_malloc_array(C > 0 ? C : 1, 5 * sizeof(double))) == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    double *mean = stats, *m2 = stats + C, *invstd = stats + 2 * C, *new_rm = stats + 3 * C, *new_rv = stats + 4 * C;
    const int64_t count = N * S;
    if (training) {
        if ((st = OPS_STUB_CALL(norm_batch_stats, dev, op, x, N, C, S, mean, m2)) != OPS_OK)
            goto done;
        for (int64_t c = 0; c < C; c++) {
            invstd[c] = 1.0 / sqrt(m2[c] / (double)count + eps);
            if (rm != NULL)
                new_rm[c] = momentum * mean[c] + (1 - momentum) * ((const double *)nrm_data(rm))[c];
            if (rv != NULL)
                new_rv[c] = momentum * (m2[c] / (double)(count - 1)) + (1 - momentum) * ((const double *)nrm_data(rv))[c];
        }
    } else {
        for (int64_t c = 0; c < C; c++) {
            mean[c] = ((const double *)nrm_data(rm))[c];
            invstd[c] = 1.0 / sqrt(((const double *)nrm_data(rv))[c] + eps);
        }
    }
    if ((st = OPS_STUB_CALL(norm_batch_apply, dev, op, x, y, N, C, S, mean, invstd, w, b)) != OPS_OK)
        goto done;
    if ((y = nrm_cast(op, y, input->dtype)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if (sm != NULL && training &&
        ((st = nrm_store_doubles(op, sm, mean, C)) != OPS_OK || (st = nrm_store_doubles(op, si, invstd, C)) != OPS_OK))
        goto done;
    /* the one write into the arguments, after everything that can fail (PyTorch skips
     * the update for an empty batch): both staged in host memory first, so an
     * allocation failure leaves both running statistics as they were; the copies into
     * a CPU tensor cannot fail, those to a device come last */
    if (training && count > 0) {
        if ((running_mean != NULL && (hm = nrm_host_doubles(op, running_mean, new_rm, C)) == NULL) ||
            (running_var != NULL && (hv = nrm_host_doubles(op, running_var, new_rv, C)) == NULL)) {
            st = ops_last_status();
            goto done;
        }
        if (hm != NULL) {
            if ((st = ops_copy_values(op, (ops_tensor *)running_mean, hm)) != OPS_OK)
                goto done;
            ops_tensor_bump_version((ops_tensor *)running_mean);
        }
        if (hv != NULL) {
            if ((st = ops_copy_values(op, (ops_tensor *)running_var, hv)) != OPS_OK)
                goto done;
            ops_tensor_bump_version((ops_tensor *)running_var);
        }
    }
    *result = y;
    y = NULL;
    if (save_mean != NULL) {
        *save_mean = sm;
        *save_invstd = si;
        sm = si = NULL;
    }
done:
    ops_host_free(stats);
    ops_tensor_release(x);
    ops_tensor_release(w);
    ops_tensor_release(b);
    ops_tensor_release(rm);
    ops_tensor_release(rv);
    ops_tensor_release(y);
    ops_tensor_release(sm);
    ops_tensor_release(si);
    ops_tensor_release(hm);
    ops_tensor_release(hv);
    return st;
}

ops_tensor *
norm_batch_norm(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                const ops_tensor *running_mean, const ops_tensor *running_var, bool training, double momentum,
                double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled; /* PyTorch's flag for its cuDNN path; no meaning here */
    ops_tensor *r = NULL;
    bn_impl("batch_norm", OPS_DTYPE_MASK_BATCH_NORM, input, weight, bias, running_mean, running_var, training, momentum,
            eps, &r, NULL, NULL);
    return r;
}

ops_status
norm_native_batch_norm(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                       const ops_tensor *running_mean, const ops_tensor *running_var, bool training, double momentum,
                       double eps, ops_tensor **result0, ops_tensor **result1, ops_tensor **result2)
{
    return bn_impl("native_batch_norm", OPS_DTYPE_MASK_NATIVE_BATCH_NORM, input, weight, bias, running_mean, running_var,
                   training, momentum, eps, result0, result1, result2);
}

/* ---- group_norm ------------------------------------------------------------------------ */
/* group_norm of input seen as (N, C, S) in G groups (the caller checked the input's
 * geometry); *mean and *rstd of shape [N, G] when mean is not NULL. */
static ops_status
gn_impl(const char *op, unsigned declared, const ops_tensor *input, int64_t N, int64_t C, int64_t S, int64_t G,
        const ops_tensor *weight, const ops_tensor *bias, double eps, ops_tensor **result, ops_tensor **mean, ops_tensor **rstd)
{
    char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
    ops_status st = OPS_OK;
    ops_dtype cd = OPS_FLOAT32;
    if ((st = nrm_compute_dtype(op, declared, input, &cd)) != OPS_OK)
        return st;
    if (G <= 0 || C % G != 0)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected number of channels in input to be divisible by num_groups, but got input of "
                        "shape %s and num_groups=%" PRId64,
                        op, ops_shape_str(input->ndim, input->sizes, a, sizeof a), G);
    const ops_tensor *params[2] = {weight, bias};
    static const char *const pnames[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) {
        const ops_tensor *p = params[k];
        if (p != NULL && (p->ndim != 1 || p->sizes[0] != C))
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Expected %s to be a vector of size equal to the number of channels in input, but "
                            "got %s of shape %s and input of shape %s",
                            op, pnames[k], pnames[k], ops_shape_str(p->ndim, p->sizes, a, sizeof a),
                            ops_shape_str(input->ndim, input->sizes, b, sizeof b));
    }
    ops_tensor *x = NULL, *w = NULL, *bb = NULL, *y = NULL, *mu = NULL, *rs = NULL;
    const ops_device dev = ops_tensor_device(input);
    const int64_t sshape[2] = {N, G};
    if ((x = nrm_contig(op, input, cd)) == NULL || !nrm_param(op, weight, cd, dev, &w) ||
        !nrm_param(op, bias, cd, dev, &bb) ||
        (y = ops_tensor_new(op, input->ndim, input->sizes, NULL, cd, dev)) == NULL ||
        (mean != NULL && ((mu = ops_tensor_new(op, 2, sshape, NULL, cd, dev)) == NULL ||
                          (rs = ops_tensor_new(op, 2, sshape, NULL, cd, dev)) == NULL))) {
        st = ops_last_status();
        goto done;
    }
    if ((st = OPS_STUB_CALL(norm_group_blocks, dev, op, x, y, N, C, S, G, w, bb, eps, mu, rs)) != OPS_OK)
        goto done;
    if ((y = nrm_cast(op, y, input->dtype)) == NULL ||
        (mean != NULL && ((mu = nrm_cast(op, mu, input->dtype)) == NULL || (rs = nrm_cast(op, rs, input->dtype)) == NULL))) {
        st = ops_last_status();
        goto done;
    }
    *result = y;
    y = NULL;
    if (mean != NULL) {
        *mean = mu;
        *rstd = rs;
        mu = rs = NULL;
    }
done:
    ops_tensor_release(x);
    ops_tensor_release(w);
    ops_tensor_release(bb);
    ops_tensor_release(y);
    ops_tensor_release(mu);
    ops_tensor_release(rs);
    return st;
}

/* group_norm's and native_group_norm's `check:`: input's rank (native_group_norm: the
 * geometry it is given), which PyTorch checks before the dtype; the glue refuses an
 * undeclared dtype after it, and the drivers run it again as a guard for a direct call. */
ops_status
ops_check_group_norm(const ops_tensor *input, int64_t num_groups, const ops_tensor *weight, const ops_tensor *bias,
                     double eps, bool cudnn_enabled)
{
    (void)num_groups, (void)weight, (void)bias, (void)eps, (void)cudnn_enabled;
    if (input->ndim < 2)
        return ops_fail(OPS_ERR_SHAPE, "group_norm: Expected at least 2 dimensions for input tensor but received %d",
                        (int)input->ndim);
    return OPS_OK;
}

ops_status
ops_check_native_group_norm(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, int64_t N,
                            int64_t C, int64_t HxW, int64_t group, double eps)
{
    (void)weight, (void)bias, (void)group, (void)eps;
    if (N < 0 || C < 0 || HxW < 0 || input->ndim < 2 || input->sizes[0] != N || input->sizes[1] != C ||
        ops_tensor_numel(input) != N * C * HxW) {
        char a[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_SHAPE,
                        "native_group_norm: Expected input of shape [N, C, *] with N=%" PRId64 ", C=%" PRId64
                        " and HxW=%" PRId64 " elements per channel, but got input of shape %s",
                        N, C, HxW, ops_shape_str(input->ndim, input->sizes, a, sizeof a));
    }
    return OPS_OK;
}

ops_tensor *
norm_group_norm(const ops_tensor *input, int64_t num_groups, const ops_tensor *weight, const ops_tensor *bias,
                double eps, bool cudnn_enabled)
{
    if (ops_check_group_norm(input, num_groups, weight, bias, eps, cudnn_enabled) != OPS_OK)
        return NULL;
    int64_t S = 1;
    for (int d = 2; d < input->ndim; d++)
        S *= input->sizes[d];
    ops_tensor *r = NULL;
    gn_impl("group_norm", OPS_DTYPE_MASK_GROUP_NORM, input, input->sizes[0], input->sizes[1], S, num_groups, weight, bias,
            eps, &r, NULL, NULL);
    return r;
}

/* PyTorch's native_group_norm: the geometry is given (N, C, HxW), as autograd passes it. */
ops_status
norm_native_group_norm(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, int64_t N, int64_t C,
                       int64_t HxW, int64_t group, double eps, ops_tensor **result0, ops_tensor **result1,
                       ops_tensor **result2)
{
    const char *op = "native_group_norm";
    ops_status st = ops_check_native_group_norm(input, weight, bias, N, C, HxW, group, eps);
    if (st != OPS_OK)
        return st;
    return gn_impl(op, OPS_DTYPE_MASK_NATIVE_GROUP_NORM, input, N, C, HxW, group, weight, bias, eps, result0, result1,
                   result2);
}

/* ---- embedding ------------------------------------------------------------------------- */

ops_status
nrm_embedding_index_error(const char *op, int64_t k, int64_t rows)
{
    return ops_fail(OPS_ERR_INDEX,
                    "%s: index out of range in self (index %" PRId64 " in 'indices', 'weight' has %" PRId64 " rows)",
                    op, k, rows);
}

/* Rows of weight gathered by indices: result shape indices.shape + [D], weight's
 * dtype (any).  The device loop checks every index (the first bad one in index order
 * named) while it fills the fresh result, which is dropped on failure; padding_idx,
 * scale_grad_by_freq and sparse only change the backward pass. */
static ops_status
embedding_impl(const ops_tensor *weight, const ops_tensor *indices, ops_tensor **result)
{
    const char *op = "embedding";
    if (weight->ndim != 2)
        return ops_fail(OPS_ERR_SHAPE, "%s: 'weight' must be 2-D", op);
    if (indices->dtype != OPS_INT64 && indices->dtype != OPS_INT32)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Expected tensor for argument #1 'indices' to have one of the following scalar "
                        "types: Long, Int; but got %s instead (while checking arguments for embedding)",
                        op, ops_dtype_name(indices->dtype));
    if (indices->ndim + 1 > OPS_MAX_DIMS)
        return ops_fail(OPS_ERR_SHAPE, "%s: indices have too many dimensions (%d)", op, (int)indices->ndim);
    const int64_t D = weight->sizes[1];
    const ops_device dev = ops_tensor_device(weight);
    ops_status st = OPS_OK;
    ops_tensor *idx = NULL, *r = NULL;
    if ((idx = nrm_contig(op, indices, OPS_INT64)) == NULL)
        return ops_last_status();
    int64_t shape[OPS_MAX_DIMS];
    memcpy(shape, indices->sizes, (size_t)indices->ndim * sizeof(int64_t));
    shape[indices->ndim] = D;
    if ((r = ops_tensor_new(op, indices->ndim + 1, shape, NULL, weight->dtype, dev)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if ((st = OPS_STUB_CALL(norm_embedding_rows, dev, op, weight, idx, r)) != OPS_OK)
        goto done;
    *result = r;
    r = NULL;
done:
    ops_tensor_release(idx);
    ops_tensor_release(r);
    return st;
}

ops_tensor *
norm_embedding(const ops_tensor *weight, const ops_tensor *indices, int64_t padding_idx, bool scale_grad_by_freq,
               bool sparse)
{
    (void)padding_idx;
    (void)scale_grad_by_freq;
    (void)sparse;
    ops_tensor *r = NULL;
    embedding_impl(weight, indices, &r);
    return r;
}

/* embedding_renorm_ (F.embedding's max_norm): every distinct row of self named by
 * indices whose norm_type-norm exceeds max_norm is scaled by max_norm / (norm + 1e-7),
 * PyTorch's rule, once however often it is named.  Written with other ops, so it runs
 * on any device: the distinct indices (sorted, so the first and last bound them; the
 * two are read on the host for the range check), their rows, the rows' norms in float
 * (double for float64), the scales (1 where the norm is within max_norm), and one
 * index_copy_ of the scaled rows.  Everything is checked and computed before that
 * write, so a failure leaves self as it was. */
/* embedding_renorm_'s `check:`: self's rank, checked before its dtype. */
ops_status
ops_check_embedding_renorm_(ops_tensor *self, const ops_tensor *indices, double max_norm, double norm_type)
{
    (void)indices, (void)max_norm, (void)norm_type;
    if (self->ndim != 2)
        return ops_fail(OPS_ERR_SHAPE, "embedding_renorm_: 'self' must be 2-D, got %d dimensions", (int)self->ndim);
    return OPS_OK;
}

ops_status
embedding_renorm_impl_(ops_tensor *self, const ops_tensor *indices, double max_norm, double norm_type)
{
    const char *op = "embedding_renorm_";
    if (ops_check_embedding_renorm_(self, indices, max_norm, norm_type) != OPS_OK)
        return ops_last_status();
    if (!(OPS_DTYPE_MASK_EMBEDDING_RENORM_ & OPS_DTYPE_BIT(self->dtype))) /* the glue's; a direct call's guard */
        return ops_fail_dtype(op, self->dtype, OPS_DTYPE_MASK_EMBEDDING_RENORM_);
    if (indices->dtype != OPS_INT64 && indices->dtype != OPS_INT32)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                        "Long, Int; but got %s instead",
                        op, ops_dtype_name(indices->dtype));
    if (!ops_device_equal(ops_tensor_device(self), ops_tensor_device(indices)))
        return ops_fail(OPS_ERR_DEVICE, "%s: indices are on another device than self", op);
    if (ops_tensor_has_internal_overlap(self))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                        "single memory location. Please clone() the tensor before performing the operation.",
                        op);
    ops_status st = OPS_OK;
    ops_tensor *idx64 = NULL, *uniq = NULL, *unused1 = NULL, *unused2 = NULL, *host = NULL, *rows = NULL;
    ops_tensor *norms = NULL;
    ops_tensor *den = NULL, *num = NULL, *scale = NULL, *within = NULL, *filled = NULL, *scaled = NULL;
    ops_tensor *cast = NULL;
    /* int64 indices (index_select/index_copy_ take Long), distinct and sorted */
    if ((idx64 = ops_to_dtype(indices, OPS_INT64, false, false, OPS_MEMORY_FORMAT_NONE)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if ((st = ops__unique2(idx64, true, false, false, &uniq, &unused1, &unused2)) != OPS_OK)
        goto done;
    const int64_t k = ops_tensor_numel(uniq), V = self->sizes[0];
    if (k > 0) {
        if ((host = nrm_contig_on(op, uniq, OPS_INT64, OPS_DEVICE_CPU)) == NULL) {
            st = ops_last_status();
            goto done;
        }
        const int64_t *hk = nrm_data(host);
        if (hk[0] < 0 || hk[k - 1] >= V) {
            st = ops_fail(OPS_ERR_INDEX, "%s: index out of range in self (index %" PRId64 " with %" PRId64 " rows)",
                          op, hk[0] < 0 ? hk[0] : hk[k - 1], V);
            goto done;
        }
    }
    if (k == 0 || self->sizes[1] == 0) {
        ops_tensor_bump_version(self); /* an in-place op bumps it, written or not (as PyTorch) */
        goto done;
    }
    const ops_dtype acc = self->dtype == OPS_FLOAT64 ? OPS_FLOAT64 : OPS_FLOAT32;
    const int64_t one = 1;
    if ((rows = ops_index_select(self, 0, uniq)) == NULL ||
        (norms = ops_linalg_vector_norm(rows, OPS_SCALAR_FLOAT(norm_type), &(ops_int_list){&one, 1}, true, acc)) ==
            NULL ||
        (den = ops_add_scalar(norms, OPS_SCALAR_FLOAT(1e-7), OPS_SCALAR_INT(1))) == NULL ||
        (num = ops_full_like(norms, OPS_SCALAR_FLOAT(max_norm), OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE)) == NULL ||
        (scale = ops_div(num, den)) == NULL || (within = ops_le_scalar(norms, OPS_SCALAR_FLOAT(max_norm))) == NULL ||
        (filled = ops_masked_fill_scalar(scale, within, OPS_SCALAR_INT(1))) == NULL ||
        (scaled = ops_mul(rows, filled)) == NULL || (cast = ops_to_dtype(scaled, self->dtype, false, false, OPS_MEMORY_FORMAT_NONE)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    st = ops_index_copy_(self, 0, uniq, cast);
done:
    ops_tensor_release(idx64);
    ops_tensor_release(uniq);
    ops_tensor_release(unused1);
    ops_tensor_release(unused2);
    ops_tensor_release(host);
    ops_tensor_release(rows);
    ops_tensor_release(norms);
    ops_tensor_release(den);
    ops_tensor_release(num);
    ops_tensor_release(scale);
    ops_tensor_release(within);
    ops_tensor_release(filled);
    ops_tensor_release(scaled);
    ops_tensor_release(cast);
    return st;
}

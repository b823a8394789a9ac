/* searchsorted and bucketize, one driver for every device (the schema names the
 * search_* functions below for CPU and CUDA): bucketize's check and a Scalar self as
 * a 0-dim tensor here, then the device's search through the stub search_sorted
 * (kernels/search_common.h): kernels/cpu/sort_search.c, kernels/cuda/sort_search.cu. */
#include "kernels/search_common.h"
#include "ops_dispatch.h"
#include "ops_kernels.h"

static ops_status
bucketize_check(const ops_tensor *boundaries)
{
    if (boundaries->ndim != 1)
        return ops_fail(OPS_ERR_SHAPE, "bucketize: boundaries tensor must be 1 dimension, but got dim(%d)",
                        boundaries->ndim);
    return OPS_OK;
}

/* The work of every searchsorted/bucketize op: bucketize's check, a Scalar self made
 * the 0-dim tensor PyTorch makes of it, then the device's search under the public
 * op's name. */
static ops_status
ss_run(bool bucketize, const ops_tensor *boundaries, const ops_tensor *self, const ops_scalar *scalar_self,
       bool out_int32, bool right, const char *side, const ops_tensor *sorter, ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    if (bucketize && (st = bucketize_check(boundaries)) != OPS_OK)
        return st;
    ops_tensor *v = NULL;
    if (scalar_self != NULL && (self = v = ops_ss_scalar(*scalar_self)) == NULL)
        return ops_last_status();
    const char *op = bucketize ? "bucketize" : "searchsorted";
    const ops_device dev = boundaries->storage->device;
    st = OPS_STUB_CALL(search_sorted, dev, op, boundaries, self, out_int32, right, side, sorter, out, result);
    ops_tensor_release(v);
    return st;
}

ops_tensor *
search_searchsorted(const ops_tensor *sorted_sequence, const ops_tensor *self, bool out_int32, bool right,
                    const char *side, const ops_tensor *sorter)
{
    ops_tensor *r = NULL;
    ss_run(false, sorted_sequence, self, NULL, out_int32, right, side, sorter, NULL, &r);
    return r;
}

ops_status
search_searchsorted_tensor_out(const ops_tensor *sorted_sequence, const ops_tensor *self, bool out_int32, bool right,
                               const char *side, const ops_tensor *sorter, ops_tensor *out)
{
    return ss_run(false, sorted_sequence, self, NULL, out_int32, right, side, sorter, out, NULL);
}

ops_tensor *
search_searchsorted_scalar(const ops_tensor *sorted_sequence, ops_scalar self, bool out_int32, bool right,
                           const char *side, const ops_tensor *sorter)
{
    ops_tensor *r = NULL;
    ss_run(false, sorted_sequence, NULL, &self, out_int32, right, side, sorter, NULL, &r);
    return r;
}

ops_status
search_searchsorted_scalar_out(const ops_tensor *sorted_sequence, ops_scalar self, bool out_int32, bool right,
                               const char *side, const ops_tensor *sorter, ops_tensor *out)
{
    return ss_run(false, sorted_sequence, NULL, &self, out_int32, right, side, sorter, out, NULL);
}

ops_tensor *
search_bucketize(const ops_tensor *self, const ops_tensor *boundaries, bool out_int32, bool right)
{
    ops_tensor *r = NULL;
    ss_run(true, boundaries, self, NULL, out_int32, right, NULL, NULL, NULL, &r);
    return r;
}

ops_status
search_bucketize_tensor_out(const ops_tensor *self, const ops_tensor *boundaries, bool out_int32, bool right,
                            ops_tensor *out)
{
    return ss_run(true, boundaries, self, NULL, out_int32, right, NULL, NULL, out, NULL);
}

ops_tensor *
search_bucketize_scalar(ops_scalar self, const ops_tensor *boundaries, bool out_int32, bool right)
{
    ops_tensor *r = NULL;
    ss_run(true, boundaries, NULL, &self, out_int32, right, NULL, NULL, NULL, &r);
    return r;
}

ops_status
search_bucketize_scalar_out(ops_scalar self, const ops_tensor *boundaries, bool out_int32, bool right, ops_tensor *out)
{
    return ss_run(true, boundaries, NULL, &self, out_int32, right, NULL, NULL, out, NULL);
}

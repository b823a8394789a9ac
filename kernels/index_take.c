/* Flat-index and repeat ops, for every device: take (and out=), put / put_,
 * repeat_interleave (.Tensor and its out=, .self_Tensor, .self_int).  The schema
 * names the functions below for CPU and CUDA; the element loops are the stubs
 * index_take_loop, index_put_flat_loop and index_repeat_* (kernels/index_loops.h):
 * kernels/cpu/index_take.c, kernels/cuda/index.cu.
 *
 * take and put index self as if it were flattened (row-major), negative indices
 * counting from the end.  Every index is checked before anything but a fresh result is
 * written (put: the stub idx_check_values first; take: its loop, into its fresh result,
 * released on failure). */
#include "kernels/index_loops.h"
#include "ops_dispatch.h"
#include "ops_kernels_index_take.h"

/* ---- take -------------------------------------------------------------------------------- */

static ops_tensor *
take_run(const char *op, const ops_tensor *self, const ops_tensor *index)
{
    const ops_device dev = self->storage->device;
    if (idx_check_take(op, self, index) != OPS_OK)
        return NULL;
    /* the loop checks the index values (on the CPU as it copies: one pass over index)
     * into this fresh result, released on failure */
    ops_tensor *r = ops_tensor_new(op, index->ndim, index->sizes, NULL, self->dtype, dev);
    if (r != NULL && OPS_STUB_CALL(index_take_loop, dev, op, r, self, index) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
index_take(const ops_tensor *self, const ops_tensor *index)
{
    return take_run("take", self, index);
}

ops_status
index_take_out(const ops_tensor *self, const ops_tensor *index, ops_tensor *out)
{
    return ops_write_out("take", take_run("take", self, index), out);
}

/* ---- put ---------------------------------------------------------------------------------- */

static ops_tensor *
put_run(const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    const ops_device dev = self->storage->device;
    if (idx_check_put(op, self, index, source) != OPS_OK)
        return NULL;
    const int64_t numel = ops_tensor_numel(self);
    if (OPS_STUB_CALL(idx_check_values, dev, op, index, -numel, numel, IDX_ERR_FLAT, 0, numel) != OPS_OK)
        return NULL;
    ops_tensor *r = NULL;
    if (OPS_STUB_CALL(index_put_flat_loop, dev, op, self, index, source, accumulate, &r) != OPS_OK)
        return NULL;
    return r;
}

ops_tensor *
index_put_flat(const ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    return put_run("put", self, index, source, accumulate);
}

ops_status
index_put_flat_(ops_tensor *self, const ops_tensor *index, const ops_tensor *source, bool accumulate)
{
    const char *op = "put_";
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return idx_deliver(op, IDX_INPLACE, put_run(op, self, index, source, accumulate), self, NULL, NULL);
}

/* ---- repeat_interleave ---------------------------------------------------------------------- */

/* repeats where the host can read it: itself on the CPU, else a new host copy in *tmp. */
static const ops_tensor *
host_readable(const char *op, const ops_tensor *repeats, ops_tensor **tmp)
{
    *tmp = NULL;
    if (repeats == NULL || repeats->storage->device.type == OPS_CPU)
        return repeats;
    *tmp = ops_tensor_new(op, repeats->ndim, repeats->sizes, NULL, repeats->dtype, OPS_DEVICE_CPU);
    if (*tmp != NULL && ops_copy_values(op, *tmp, repeats) != OPS_OK) {
        ops_tensor_release(*tmp);
        *tmp = NULL;
    }
    return *tmp;
}

/* repeats' rank, before its dtype (the entry's `check:`: the glue runs it, then refuses
 * an undeclared dtype in PyTorch's words, as the kernel did). */
ops_status
ops_check_repeat_interleave_tensor(const ops_tensor *repeats, const int64_t *output_size)
{
    (void)output_size;
    return idx_repeat_tensor_rank("repeat_interleave", repeats);
}

ops_tensor *
index_repeat_interleave_tensor(const ops_tensor *repeats, const int64_t *output_size)
{
    const char *op = "repeat_interleave";
    const ops_device dev = repeats->storage->device;
    ops_tensor *tmp, *r = NULL;
    int64_t *reps = NULL, total;
    const ops_tensor *hr = host_readable(op, repeats, &tmp);
    if (hr == NULL ||
        idx_repeat_tensor_counts(op, OPS_DTYPE_MASK_REPEAT_INTERLEAVE, hr, output_size, &reps, &total) != OPS_OK)
        goto done;
    if ((r = ops_tensor_new(op, 1, &total, NULL, repeats->dtype, dev)) != NULL &&
        OPS_STUB_CALL(index_repeat_fill_loop, dev, op, r, reps, repeats->sizes[0], total) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
done:
    ops_host_free(reps);
    ops_tensor_release(tmp);
    return r;
}

ops_status
index_repeat_interleave_tensor_out(const ops_tensor *repeats, const int64_t *output_size, ops_tensor *out)
{
    return ops_write_out("repeat_interleave", index_repeat_interleave_tensor(repeats, output_size), out);
}

/* self's slices along dim (or its elements, flattened, when dim is NULL) repeated
 * reps[i] times each; repeats is a tensor (0-dim or one element: the same count for
 * every slice), or NULL for the int rep_int. */
static ops_tensor *
repeat_self_run(const char *op, const ops_tensor *self, const ops_tensor *repeats, int64_t rep_int,
                const int64_t *dim_opt, const int64_t *output_size)
{
    const ops_device dev = self->storage->device;
    ops_tensor *tmp, *r = NULL;
    int64_t *reps = NULL, dim, total;
    const ops_tensor *hr = host_readable(op, repeats, &tmp);
    if ((repeats != NULL && hr == NULL) ||
        idx_repeat_counts(op, self, hr, rep_int, dim_opt, output_size, &reps, &dim, &total) != OPS_OK)
        goto done;
    if (OPS_STUB_CALL(index_repeat_slices_loop, dev, op, self, dim, reps, total, &r) != OPS_OK)
        r = NULL;
done:
    ops_host_free(reps);
    ops_tensor_release(tmp);
    return r;
}

ops_tensor *
index_repeat_interleave_self_tensor(const ops_tensor *self, const ops_tensor *repeats, const int64_t *dim,
                                    const int64_t *output_size)
{
    return repeat_self_run("repeat_interleave", self, repeats, 0, dim, output_size);
}

ops_tensor *
index_repeat_interleave_self_int(const ops_tensor *self, int64_t repeats, const int64_t *dim,
                                 const int64_t *output_size)
{
    return repeat_self_run("repeat_interleave", self, NULL, repeats, dim, output_size);
}

/* Slice-indexed writes, for every device: index_add, index_copy, index_fill
 * (.int_Scalar, .int_Tensor), each with its out= and in-place forms.  The schema names
 * the functions below for CPU and CUDA; the device's work is the stub
 * index_slices_loop (kernels/index_add.h): kernels/cpu/index_add.c,
 * kernels/cuda/index.cu.
 *
 * Slice index[i] of self along dim receives slice i of source (index_add: adds
 * alpha * source; index_copy: copies) or the value (index_fill).  Everything is
 * checked first (every index included); the result is computed into a fresh
 * contiguous buffer of the opmath dtype (float for float16/bfloat16, so duplicates
 * of index_add round once) and then converted into the result, out= or self.
 *
 * Each entry's functional, out= and in-place forms are one call of ix_run with a
 * mode; the schema's signatures are what keeps them separate C functions. */
#include "kernels/elementwise_check.h"
#include "kernels/index_add.h"
#include "ops_dispatch.h"
#include "ops_kernels_index_add.h"

static ops_tensor *
ix_compute(const char *op, ix_mode mode, const ops_tensor *self, int64_t dim, const ops_tensor *index,
           const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    const ops_device dev = self->storage->device;
    if (idx_check_func(op, mode, self, &dim, index, source) != OPS_OK)
        return NULL;
    /* every index in range: [0, size) for index_add and index_copy, [-size, size) for
     * index_fill */
    const int64_t size = self->ndim ? self->sizes[dim] : 1;
    if (OPS_STUB_CALL(idx_check_values, dev, op, index, mode == IX_FILL ? -size : 0, size,
                      mode == IX_ADD ? IDX_ERR_ADD : IDX_ERR_BOUNDS, dim, size) != OPS_OK)
        return NULL;
    if (mode == IX_ADD && idx_check_alpha(op, self, alpha) != OPS_OK)
        return NULL;
    /* index_fill stores the value in self's dtype directly; the others go through opmath */
    const ops_dtype acc_dt = mode == IX_FILL ? self->dtype : ops_opmath_dtype(self->dtype);
    ops_tensor *acc, *r;
    if (idx_accum_begin(op, self, acc_dt, &acc, &r) != OPS_OK)
        return NULL;
    const ops_status st = OPS_STUB_CALL(index_slices_loop, dev, op, mode, acc, self, dim, index, source, value, alpha);
    return idx_accum_end(op, st, acc, r);
}

/* One call: value_t (index_fill.int_Tensor's 0-dim value, read first; NULL: value)
 * and the form.  IDX_FUNCTIONAL returns the result in *res. */
static ops_status
ix_run(const char *op, idx_form form, ix_mode mode, const ops_tensor *self, int64_t dim, const ops_tensor *index,
       const ops_tensor *source, ops_scalar value, const ops_tensor *value_t, ops_scalar alpha, ops_tensor *out,
       ops_tensor **res)
{
    if (value_t != NULL) {
        if (idx_check_value_tensor(op, "index_fill_", value_t) != OPS_OK)
            return ops_last_status();
        ops_status st = ops_tensor_item(value_t, &value);
        if (st != OPS_OK)
            return st;
    }
    if (form == IDX_INPLACE && idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return idx_deliver(op, form, ix_compute(op, mode, self, dim, index, source, value, alpha), self, out, res);
}

static ops_tensor *
ix_functional(const char *op, ix_mode mode, const ops_tensor *self, int64_t dim, const ops_tensor *index,
              const ops_tensor *source, ops_scalar value, const ops_tensor *value_t, ops_scalar alpha)
{
    ops_tensor *r = NULL;
    ix_run(op, IDX_FUNCTIONAL, mode, self, dim, index, source, value, value_t, alpha, NULL, &r);
    return r;
}

static const ops_scalar zero_ = {.kind = OPS_SCALAR_INT, .v.i = 0};

/* ---- index_add ------------------------------------------------------------------------ */

ops_tensor *
index_add(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source, ops_scalar alpha)
{
    return ix_functional("index_add", IX_ADD, self, dim, index, source, zero_, NULL, alpha);
}

ops_status
index_add_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
              ops_scalar alpha, ops_tensor *out)
{
    return ix_run("index_add", IDX_OUT, IX_ADD, self, dim, index, source, zero_, NULL, alpha, out, NULL);
}

ops_status
index_add_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source, ops_scalar alpha)
{
    return ix_run("index_add_", IDX_INPLACE, IX_ADD, self, dim, index, source, zero_, NULL, alpha, NULL, NULL);
}

/* ---- index_copy ----------------------------------------------------------------------- */

ops_tensor *
index_copy(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source)
{
    return ix_functional("index_copy", IX_COPY, self, dim, index, source, zero_, NULL, zero_);
}

ops_status
index_copy_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
               ops_tensor *out)
{
    return ix_run("index_copy", IDX_OUT, IX_COPY, self, dim, index, source, zero_, NULL, zero_, out, NULL);
}

ops_status
index_copy_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source)
{
    return ix_run("index_copy_", IDX_INPLACE, IX_COPY, self, dim, index, source, zero_, NULL, zero_, NULL, NULL);
}

/* ---- index_fill ----------------------------------------------------------------------- */

ops_tensor *
index_fill_int_scalar(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return ix_functional("index_fill", IX_FILL, self, dim, index, NULL, value, NULL, zero_);
}

ops_status
index_fill_int_scalar_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                          ops_tensor *out)
{
    return ix_run("index_fill", IDX_OUT, IX_FILL, self, dim, index, NULL, value, NULL, zero_, out, NULL);
}

ops_status
index_fill_int_scalar_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return ix_run("index_fill_", IDX_INPLACE, IX_FILL, self, dim, index, NULL, value, NULL, zero_, NULL, NULL);
}

ops_tensor *
index_fill_int_tensor(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value)
{
    return ix_functional("index_fill", IX_FILL, self, dim, index, NULL, zero_, value, zero_);
}

ops_status
index_fill_int_tensor_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value,
                          ops_tensor *out)
{
    return ix_run("index_fill", IDX_OUT, IX_FILL, self, dim, index, NULL, zero_, value, zero_, out, NULL);
}

ops_status
index_fill_int_tensor_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value)
{
    return ix_run("index_fill_", IDX_INPLACE, IX_FILL, self, dim, index, NULL, zero_, value, zero_, NULL, NULL);
}

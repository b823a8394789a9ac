/* Scatter ops, for every device: scatter (src, value, reduce, value_reduce),
 * scatter_add and scatter_reduce.two, with their out= and in-place forms.  The schema
 * names the functions below for CPU and CUDA; the device's work is the stub
 * scatter_loop (kernels/index_scatter.h): kernels/cpu/index_scatter.c,
 * kernels/cuda/scatter.cu.
 *
 * PyTorch's rules: index is int64 with as many dims as self (0-dim counts as 1-D of
 * size 1), index.size(d) <= self.size(d) for d != dim and <= src.size(d) for every d;
 * only the index.shape-sized corner of src is read.  An empty index skips the shape
 * checks and leaves self as it is.
 *
 * Every index is checked before anything is allocated or written.  The result is
 * computed into a fresh contiguous buffer of the opmath dtype (float for
 * float16/bfloat16, as PyTorch's accumulation buffer), so sums and products of
 * duplicate indices round once; the buffer is then converted into the result, out=
 * or self.  Elements along one destination are applied in index's row-major order,
 * so "last write wins" for plain scatter with duplicate indices (PyTorch leaves that
 * order unspecified) and both devices give the same values.
 *
 * Each entry's functional, out= and in-place forms are one call of scatter_run with
 * a mode; the schema's signatures (Tensor src or Scalar value, a reduce string,
 * include_self) are what keeps them separate C functions. */
#include "kernels/elementwise_check.h"
#include "kernels/index_scatter.h"
#include "ops_dispatch.h"
#include "ops_kernels_index_scatter.h"

/* The result of scatter as a new contiguous tensor of self's dtype and shape, or NULL
 * with the error set.  src NULL means value. */
static ops_tensor *
scatter_compute(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                ops_scalar value, sc_reduce red, bool include_self)
{
    const ops_device dev = self->storage->device;
    if (idx_check_scatter(op, self, &dim, index, src) != OPS_OK)
        return NULL;
    const int64_t n = ops_tensor_numel(index);
    const int64_t bound = self->ndim ? self->sizes[dim] : 1;
    if (n > 0 && OPS_STUB_CALL(idx_check_values, dev, op, index, 0, bound, IDX_ERR_BOUNDS, dim, bound) != OPS_OK)
        return NULL;
    const ops_dtype acc_dt = ops_opmath_dtype(self->dtype);
    ops_tensor *acc, *r;
    if (idx_accum_begin(op, self, acc_dt, &acc, &r) != OPS_OK)
        return NULL;
    const ops_status st = OPS_STUB_CALL(scatter_loop, dev, op, acc, self, dim, index, src, value, red, include_self);
    return idx_accum_end(op, st, acc, r);
}

/* One scatter call: reduce NULL means red as given (plain scatter, scatter_add), else
 * the string parsed (new_options: scatter_reduce's names).  IDX_FUNCTIONAL returns the
 * result in *res; IDX_OUT writes it into out; IDX_INPLACE into self. */
static ops_status
scatter_run(const char *op, idx_form mode, const ops_tensor *self, int64_t dim, const ops_tensor *index,
            const ops_tensor *src, ops_scalar value, const char *reduce, sc_reduce red, bool new_options,
            bool include_self, ops_tensor *out, ops_tensor **res)
{
    if (mode == IDX_INPLACE && idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    if (reduce != NULL && idx_parse_reduce(op, self, reduce, new_options, &red) != OPS_OK)
        return ops_last_status();
    return idx_deliver(op, mode, scatter_compute(op, self, dim, index, src, value, red, include_self), self, out,
                       res);
}

static ops_tensor *
scatter_functional(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index,
                   const ops_tensor *src, ops_scalar value, const char *reduce, sc_reduce red, bool new_options,
                   bool include_self)
{
    ops_tensor *r = NULL;
    scatter_run(op, IDX_FUNCTIONAL, self, dim, index, src, value, reduce, red, new_options, include_self, NULL, &r);
    return r;
}

static const ops_scalar no_value = {.kind = OPS_SCALAR_INT, .v.i = 0};

/* ---- scatter.src / scatter.value ----------------------------------------------------- */

ops_tensor *
scatter_src(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return scatter_functional("scatter", self, dim, index, src, no_value, NULL, SC_ASSIGN, false, true);
}

ops_status
scatter_src_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src, ops_tensor *out)
{
    return scatter_run("scatter", IDX_OUT, self, dim, index, src, no_value, NULL, SC_ASSIGN, false, true, out, NULL);
}

ops_status
scatter_src_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return scatter_run("scatter_", IDX_INPLACE, self, dim, index, src, no_value, NULL, SC_ASSIGN, false, true, NULL,
                       NULL);
}

ops_tensor *
scatter_value(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return scatter_functional("scatter", self, dim, index, NULL, value, NULL, SC_ASSIGN, false, true);
}

ops_status
scatter_value_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value, ops_tensor *out)
{
    return scatter_run("scatter", IDX_OUT, self, dim, index, NULL, value, NULL, SC_ASSIGN, false, true, out, NULL);
}

ops_status
scatter_value_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return scatter_run("scatter_", IDX_INPLACE, self, dim, index, NULL, value, NULL, SC_ASSIGN, false, true, NULL,
                       NULL);
}

/* ---- scatter.reduce / scatter.value_reduce ("add" | "multiply") ------------------------ */

ops_tensor *
scatter_reduce(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
               const char *reduce)
{
    return scatter_functional("scatter", self, dim, index, src, no_value, reduce, SC_ASSIGN, false, true);
}

ops_status
scatter_reduce_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                   const char *reduce, ops_tensor *out)
{
    return scatter_run("scatter", IDX_OUT, self, dim, index, src, no_value, reduce, SC_ASSIGN, false, true, out, NULL);
}

ops_status
scatter_reduce_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src, const char *reduce)
{
    return scatter_run("scatter_", IDX_INPLACE, self, dim, index, src, no_value, reduce, SC_ASSIGN, false, true, NULL,
                       NULL);
}

ops_tensor *
scatter_value_reduce(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                     const char *reduce)
{
    return scatter_functional("scatter", self, dim, index, NULL, value, reduce, SC_ASSIGN, false, true);
}

ops_status
scatter_value_reduce_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                         const char *reduce, ops_tensor *out)
{
    return scatter_run("scatter", IDX_OUT, self, dim, index, NULL, value, reduce, SC_ASSIGN, false, true, out, NULL);
}

ops_status
scatter_value_reduce_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value, const char *reduce)
{
    return scatter_run("scatter_", IDX_INPLACE, self, dim, index, NULL, value, reduce, SC_ASSIGN, false, true, NULL,
                       NULL);
}

/* ---- scatter_add ------------------------------------------------------------------------ */

ops_tensor *
scatter_add(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return scatter_functional("scatter_add", self, dim, index, src, no_value, NULL, SC_SUM, false, true);
}

ops_status
scatter_add_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src, ops_tensor *out)
{
    return scatter_run("scatter_add", IDX_OUT, self, dim, index, src, no_value, NULL, SC_SUM, false, true, out, NULL);
}

ops_status
scatter_add_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return scatter_run("scatter_add_", IDX_INPLACE, self, dim, index, src, no_value, NULL, SC_SUM, false, true, NULL,
                       NULL);
}

/* ---- scatter_reduce.two ------------------------------------------------------------------ */

ops_tensor *
scatter_reduce_two(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                   const char *reduce, bool include_self)
{
    return scatter_functional("scatter_reduce", self, dim, index, src, no_value, reduce, SC_ASSIGN, true,
                              include_self);
}

ops_status
scatter_reduce_two_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                       const char *reduce, bool include_self, ops_tensor *out)
{
    return scatter_run("scatter_reduce", IDX_OUT, self, dim, index, src, no_value, reduce, SC_ASSIGN, true,
                       include_self, out, NULL);
}

ops_status
scatter_reduce_two_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                    const char *reduce, bool include_self)
{
    return scatter_run("scatter_reduce_", IDX_INPLACE, self, dim, index, src, no_value, reduce, SC_ASSIGN, true,
                       include_self, NULL, NULL);
}

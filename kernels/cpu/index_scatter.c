/* Scatter ops (CPU): scatter (src, value, reduce, value_reduce), scatter_add and
 * scatter_reduce.two, with their out= and in-place forms.
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
 * or self.  Elements are visited in index's row-major order, so "last write wins" for
 * plain scatter with duplicate indices (PyTorch leaves that order unspecified). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_check.h"
#include "index_util.h"
#include "ops_kernels_index_scatter.h"

#define SC_MAX(a, v) OPS_IX_MAX(a, v)
#define SC_MIN(a, v) OPS_IX_MIN(a, v)

/* ---- checks ---------------------------------------------------------------------- */

/* idx_check_scatter, then every index value in [0, self.size(dim)). */
static ops_status
scatter_check(const char *op, const ops_tensor *self, int64_t *dim, const ops_tensor *index, const ops_tensor *src)
{
    if (idx_check_scatter(op, self, dim, index, src) != OPS_OK)
        return ops_last_status();
    const int64_t n = ops_tensor_numel(index);
    if (n == 0)
        return OPS_OK;
    const int64_t bound = self->ndim ? self->sizes[*dim] : 1;
    const int64_t *ip = (const int64_t *)index->storage->data;
    int64_t ctr[OPS_MAX_DIMS] = {0}, off = index->offset;
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = ip[off];
        if (k < 0 || k >= bound)
            return idx_index_error(op, IDX_ERR_BOUNDS, k, *dim, bound);
        for (int d = index->ndim - 1; d >= 0; d--) {
            if (++ctr[d] < index->sizes[d]) {
                off += index->strides[d];
                break;
            }
            off -= (index->sizes[d] - 1) * index->strides[d];
            ctr[d] = 0;
        }
    }
    return OPS_OK;
}

/* ---- the computation --------------------------------------------------------------- */

/* Walk index in row-major order: for each element, IOFF (into index), SOFF (into src)
 * and AOFF (into the contiguous buffer, dim excluded) are the element offsets. */
#define SC_WALK(BODY)                                                                     \
    do {                                                                                  \
        int64_t ctr_[OPS_MAX_DIMS] = {0};                                                 \
        int64_t IOFF = index->offset, SOFF = src ? src->offset : 0, AOFF = 0;             \
        for (int64_t i_ = 0; i_ < n; i_++) {                                              \
            BODY;                                                                         \
            for (int d_ = nd - 1; d_ >= 0; d_--) {                                        \
                if (++ctr_[d_] < isz[d_]) {                                               \
                    IOFF += ist[d_], SOFF += sst[d_], AOFF += ast[d_];                    \
                    break;                                                                \
                }                                                                         \
                IOFF -= (isz[d_] - 1) * ist[d_], SOFF -= (isz[d_] - 1) * sst[d_];         \
                AOFF -= (isz[d_] - 1) * ast[d_];                                          \
                ctr_[d_] = 0;                                                             \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* One pass applying UPDATE(a, v) with a the buffer element (opmath_t lvalue) and v the
 * source value (opmath_t). */
#define SC_PASS(UPDATE)                                                                   \
    SC_WALK({                                                                             \
        opmath_t *a_ = acc + AOFF + ip[IOFF] * dstride;                                   \
        const opmath_t v_ = src ? OPS_LOAD(sp + SOFF) : val;                              \
        UPDATE(*a_, v_);                                                                  \
    })

#define SC_U_ASSIGN(a, v) ((a) = (v))
#define SC_U_ASSIGN_IDENT(a, v) ((void)(v), (a) = ident)
#define SC_U_SUM(a, v) ((a) = SC_ADD((a), (v)))
#define SC_U_PROD(a, v) ((a) = SC_MUL((a), (v)))
#define SC_U_MAX(a, v) ((a) = SC_MAX((a), (v)))
#define SC_U_MIN(a, v) ((a) = SC_MIN((a), (v)))

static ops_status
scatter_typed(const char *op, const ops_tensor *self, ops_tensor *accbuf, int64_t dim, const ops_tensor *index,
              const ops_tensor *src, ops_scalar value, sc_reduce red, bool include_self, int64_t *count)
{
    const int64_t n = ops_tensor_numel(index);
    const int nd = index->ndim ? index->ndim : 1;
    const int64_t one = 1, zero = 0;
    const int64_t *isz = index->ndim ? index->sizes : &one;
    const int64_t *ist = index->ndim ? index->strides : &zero;
    int64_t sst[OPS_MAX_DIMS] = {0}, ast[OPS_MAX_DIMS] = {0};
    for (int d = 0; d < nd && src; d++)
        sst[d] = src->ndim ? src->strides[d] : 0;
    for (int d = 0; d < nd; d++)
        ast[d] = d == dim ? 0 : (self->ndim ? accbuf->strides[d] : 0);
    const int64_t dstride = self->ndim ? accbuf->strides[dim] : 0;
    const int64_t *ip = n ? (const int64_t *)index->storage->data : NULL;
    const int64_t numel = ops_tensor_numel(self);
    if (n == 0)
        return OPS_OK;
    OPS_DISPATCH_ALL(self->dtype, op, {
        opmath_t *acc = (opmath_t *)ops_tensor_data_ptr(accbuf);
        const scalar_t *sp = src ? (const scalar_t *)src->storage->data : NULL;
        scalar_t vs;
        ops_scalar_store(value, self->dtype, &vs);
        const opmath_t val = OPS_LOAD((const scalar_t *)&vs);
        if (!include_self) {
            /* touched elements start from the reduction's identity */
            unsigned char ib[sizeof(opmath_t)];
            opmath_t ident;
            ops_scalar_store(idx_reduce_identity(red, accbuf->dtype), accbuf->dtype, ib);
            memcpy(&ident, ib, sizeof ident);
            SC_PASS(SC_U_ASSIGN_IDENT);
        }
        switch (red) {
        case SC_ASSIGN: SC_PASS(SC_U_ASSIGN); break;
        case SC_SUM: SC_PASS(SC_U_SUM); break;
        case SC_MEAN: SC_PASS(SC_U_SUM); break;
        case SC_PROD: SC_PASS(SC_U_PROD); break;
        case SC_AMAX: SC_PASS(SC_U_MAX); break;
        case SC_AMIN: SC_PASS(SC_U_MIN); break;
        }
        if (red == SC_MEAN) {
            for (int64_t i = 0; i < numel; i++)
                count[i] = include_self ? 1 : 0;
            SC_WALK(count[AOFF + ip[IOFF] * dstride]++);
            for (int64_t i = 0; i < numel; i++) {
                const int64_t c = count[i] ? count[i] : 1;
                if (ops_dtype_is_floating(self->dtype)) {
                    /* PyTorch divides the sum after storing it in self's dtype */
                    scalar_t s;
                    OPS_STORE(&s, acc[i]);
                    acc[i] = (opmath_t)(OPS_LOAD((const scalar_t *)&s) / (opmath_t)c);
                } else {
                    const int64_t a = (int64_t)acc[i];
                    int64_t q = a / c;
                    if (a % c != 0 && a < 0)
                        q--;
                    acc[i] = (opmath_t)q;
                }
            }
        }
    });
    return OPS_OK;
}

/* The result of scatter as a new contiguous tensor of self's dtype and shape, or NULL
 * with the error set.  src NULL means value. */
static ops_tensor *
scatter_compute(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                ops_scalar value, sc_reduce red, bool include_self)
{
    ops_tensor *acc = NULL, *r = NULL;
    int64_t *count = NULL;
    if (scatter_check(op, self, &dim, index, src) != OPS_OK)
        return NULL;
    const ops_dtype acc_dt = cpu_opmath_dtype(self->dtype);
    acc = ops_tensor_new(op, self->ndim, self->sizes, NULL, acc_dt, self->storage->device);
    if (acc == NULL)
        goto fail;
    if (ops_copy_values(op, acc, self) != OPS_OK)
        goto fail;
    const int64_t numel = ops_tensor_numel(self);
    if (red == SC_MEAN && numel > 0) {
        count = ops_host_malloc_array(numel, sizeof(int64_t));
        if (count == NULL) {
            ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
            goto fail;
        }
    }
    if (acc_dt != self->dtype) {
        r = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device);
        if (r == NULL)
            goto fail;
    }
    if (scatter_typed(op, self, acc, dim, index, src, value, red, include_self, count) != OPS_OK)
        goto fail;
    ops_host_free(count);
    if (r == NULL)
        return acc;
    if (ops_copy_values(op, r, acc) != OPS_OK)
        goto fail;
    ops_tensor_release(acc);
    return r;
fail:
    ops_host_free(count);
    ops_tensor_release(acc);
    ops_tensor_release(r);
    return NULL;
}

static ops_status
write_inplace(const char *op, ops_tensor *self, ops_tensor *r)
{
    if (r == NULL)
        return ops_last_status();
    ops_status st = ops_copy_values(op, self, r);
    ops_tensor_release(r);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

static ops_tensor *
scatter_reduce_str(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index,
                   const ops_tensor *src, ops_scalar value, const char *reduce, bool new_options, bool include_self)
{
    sc_reduce red = SC_ASSIGN;
    if (idx_parse_reduce(op, self, reduce, new_options, &red) != OPS_OK)
        return NULL;
    return scatter_compute(op, self, dim, index, src, value, red, include_self);
}

/* ---- scatter.src / scatter.value ----------------------------------------------------- */

static const ops_scalar no_value = {.kind = OPS_SCALAR_INT, .v.i = 0};

ops_tensor *
scatter_src_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return scatter_compute("scatter", self, dim, index, src, no_value, SC_ASSIGN, true);
}

ops_status
scatter_src_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                    ops_tensor *out)
{
    return ops_write_out("scatter", scatter_compute("scatter", self, dim, index, src, no_value, SC_ASSIGN, true),
                         out);
}

ops_status
scatter_src_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    if (idx_check_inplace_self("scatter_", self) != OPS_OK)
        return ops_last_status();
    return write_inplace("scatter_", self,
                         scatter_compute("scatter_", self, dim, index, src, no_value, SC_ASSIGN, true));
}

ops_tensor *
scatter_value_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return scatter_compute("scatter", self, dim, index, NULL, value, SC_ASSIGN, true);
}

ops_status
scatter_value_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                      ops_tensor *out)
{
    return ops_write_out("scatter", scatter_compute("scatter", self, dim, index, NULL, value, SC_ASSIGN, true), out);
}

ops_status
scatter_value_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    if (idx_check_inplace_self("scatter_", self) != OPS_OK)
        return ops_last_status();
    return write_inplace("scatter_", self, scatter_compute("scatter_", self, dim, index, NULL, value, SC_ASSIGN, true));
}

/* ---- scatter.reduce / scatter.value_reduce ("add" | "multiply") ------------------------ */

ops_tensor *
scatter_reduce_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                   const char *reduce)
{
    return scatter_reduce_str("scatter", self, dim, index, src, no_value, reduce, false, true);
}

ops_status
scatter_reduce_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                       const char *reduce, ops_tensor *out)
{
    return ops_write_out("scatter",
                         scatter_reduce_str("scatter", self, dim, index, src, no_value, reduce, false, true), out);
}

ops_status
scatter_reduce_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src, const char *reduce)
{
    if (idx_check_inplace_self("scatter_", self) != OPS_OK)
        return ops_last_status();
    return write_inplace("scatter_", self,
                         scatter_reduce_str("scatter_", self, dim, index, src, no_value, reduce, false, true));
}

ops_tensor *
scatter_value_reduce_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                         const char *reduce)
{
    return scatter_reduce_str("scatter", self, dim, index, NULL, value, reduce, false, true);
}

ops_status
scatter_value_reduce_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                             const char *reduce, ops_tensor *out)
{
    return ops_write_out("scatter", scatter_reduce_str("scatter", self, dim, index, NULL, value, reduce, false, true),
                         out);
}

ops_status
scatter_value_reduce_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                          const char *reduce)
{
    if (idx_check_inplace_self("scatter_", self) != OPS_OK)
        return ops_last_status();
    return write_inplace("scatter_", self,
                         scatter_reduce_str("scatter_", self, dim, index, NULL, value, reduce, false, true));
}

/* ---- scatter_add ------------------------------------------------------------------------ */

ops_tensor *
scatter_add_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    return scatter_compute("scatter_add", self, dim, index, src, no_value, SC_SUM, true);
}

ops_status
scatter_add_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                    ops_tensor *out)
{
    return ops_write_out("scatter_add", scatter_compute("scatter_add", self, dim, index, src, no_value, SC_SUM, true),
                         out);
}

ops_status
scatter_add_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src)
{
    if (idx_check_inplace_self("scatter_add_", self) != OPS_OK)
        return ops_last_status();
    return write_inplace("scatter_add_", self,
                         scatter_compute("scatter_add_", self, dim, index, src, no_value, SC_SUM, true));
}

/* ---- scatter_reduce.two ------------------------------------------------------------------ */

ops_tensor *
scatter_reduce_two_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                       const char *reduce, bool include_self)
{
    return scatter_reduce_str("scatter_reduce", self, dim, index, src, no_value, reduce, true, include_self);
}

ops_status
scatter_reduce_two_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                           const char *reduce, bool include_self, ops_tensor *out)
{
    return ops_write_out(
        "scatter_reduce",
        scatter_reduce_str("scatter_reduce", self, dim, index, src, no_value, reduce, true, include_self), out);
}

ops_status
scatter_reduce_two_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *src,
                        const char *reduce, bool include_self)
{
    if (idx_check_inplace_self("scatter_reduce_", self) != OPS_OK)
        return ops_last_status();
    return write_inplace(
        "scatter_reduce_", self,
        scatter_reduce_str("scatter_reduce_", self, dim, index, src, no_value, reduce, true, include_self));
}

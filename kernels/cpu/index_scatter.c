/* The scatter ops' CPU loop (the stub scatter_loop of kernels/index_scatter.h; the driver,
 * with the checks, the buffer and the out= and in-place forms, is kernels/index_scatter.c).
 *
 * index is walked in row-major order, applying each element to the opmath buffer, so
 * duplicates along one destination apply in index order ("last write wins" for plain
 * scatter) and sums and products round once. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_scatter.h"
#include "index_util.h"
#include "ops_kernels_index_scatter.h"

#define SC_MAX(a, v) OPS_IX_MAX(a, v)
#define SC_MIN(a, v) OPS_IX_MIN(a, v)

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

OPS_REGISTER_STUB(scatter_loop, CPU, scatter_loop_cpu);
ops_status
scatter_loop_cpu(const char *op, ops_tensor *acc, const ops_tensor *self, int64_t dim, const ops_tensor *index,
                 const ops_tensor *src, ops_scalar value, sc_reduce red, bool include_self)
{
    int64_t *count = NULL;
    const int64_t numel = ops_tensor_numel(self);
    if (red == SC_MEAN && numel > 0) {
        count = ops_host_malloc_array(numel, sizeof(int64_t));
        if (count == NULL)
            return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    }
    const ops_status st = scatter_typed(op, self, acc, dim, index, src, value, red, include_self, count);
    ops_host_free(count);
    return st;
}


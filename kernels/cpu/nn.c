/* Other neural-network ops (CPU loops), registered for the stubs of kernels/nn.h and
 * called by the drivers of kernels/nn.c: the gather engine of pad and
 * upsample_nearest (every dtype moved as raw bytes), one_hot's range and fill, the
 * linear interpolation over (n, c) planes in PyTorch's order of the products, and
 * glu's and prelu's binary iterator kernels.  Rows and planes are split across
 * threads above a grain size. */
#include <stdint.h>
#include <string.h>

#include "kernels/nn.h"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(nn_gather_rows, CPU, nn_gather_rows_cpu);
OPS_REGISTER_STUB(nn_one_hot_range, CPU, nn_one_hot_range_cpu);
OPS_REGISTER_STUB(nn_one_hot_fill, CPU, nn_one_hot_fill_cpu);
OPS_REGISTER_STUB(nn_upsample_linear_planes, CPU, nn_upsample_linear_planes_cpu);
OPS_REGISTER_STUB(nn_binary_loop, CPU, nn_binary_loop_cpu);

#ifdef _OPENMP
#define NN_PARALLEL_FOR_(COND) OPS_PRAGMA_(omp parallel for schedule(static) num_threads(ops_get_num_threads()) if (COND))
#else
#define NN_PARALLEL_FOR_(COND)
#endif

static inline void
nn_copy_elem(char *d, const char *s, size_t isz)
{
    switch (isz) {
    case 1: *(uint8_t *)d = *(const uint8_t *)s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    default: memcpy(d, s, 8); break;
    }
}

ops_status
nn_gather_rows_cpu(const char *op, const nn_gather *g, ops_tensor *dst)
{
    (void)op;
    const size_t isz = ops_dtype_itemsize(dst->dtype);
    const int nd = g->ndim;
    const int64_t inner = nd > 0 ? g->sizes[nd - 1] : 1;
    const int64_t numel = ops_shape_numel(nd, g->sizes);
    if (numel == 0)
        return OPS_OK;
    const int64_t rows = numel / inner;
    const char *src = (const char *)ops_tensor_data_ptr(g->src);
    char *out = (char *)ops_tensor_data_ptr(dst);
    static const int64_t zero = 0;
    const int64_t *last = nd > 0 ? g->tbl[nd - 1] : &zero;
    const bool par = numel > OPS_GRAIN_SIZE && rows > 1;
    (void)par;
    NN_PARALLEL_FOR_(par)
    for (int64_t r = 0; r < rows; r++) {
        /* the row's base offset from the outer dims' tables */
        int64_t base = 0, rem = r;
        bool fill_row = false;
        for (int d = nd - 2; d >= 0; d--) {
            const int64_t i = rem % g->sizes[d];
            rem /= g->sizes[d];
            const int64_t o = g->tbl[d][i];
            if (o == NN_FILL)
                fill_row = true;
            else
                base += o;
        }
        char *o = out + r * inner * (int64_t)isz;
        for (int64_t j = 0; j < inner; j++, o += isz) {
            const int64_t off = last[j];
            if (fill_row || off == NN_FILL)
                nn_copy_elem(o, (const char *)g->fill, isz);
            else
                nn_copy_elem(o, src + (base + off) * (int64_t)isz, isz);
        }
    }
    return OPS_OK;
}

ops_status
nn_one_hot_range_cpu(const char *op, const ops_tensor *x, int64_t *lo, int64_t *hi)
{
    (void)op;
    const int64_t n = ops_tensor_numel(x), *v = (const int64_t *)ops_tensor_data_ptr(x);
    int64_t l = INT64_MAX, h = INT64_MIN;
    for (int64_t e = 0; e < n; e++) {
        l = v[e] < l ? v[e] : l;
        h = v[e] > h ? v[e] : h;
    }
    *lo = l;
    *hi = h;
    return OPS_OK;
}

ops_status
nn_one_hot_fill_cpu(const char *op, const ops_tensor *x, int64_t K, ops_tensor *out)
{
    (void)op;
    const int64_t n = ops_tensor_numel(x), *v = (const int64_t *)ops_tensor_data_ptr(x);
    int64_t *o = (int64_t *)ops_tensor_data_ptr(out);
    memset(o, 0, (size_t)(n * K) * sizeof(int64_t));
    for (int64_t e = 0; e < n; e++)
        o[e * K + v[e]] = 1;
    return OPS_OK;
}

/* Over every (n, c) plane: k == 2 computes
 *   h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11)    (PyTorch's order),
 * k == 1 computes w0 * x0 + w1 * x1.  The tables: ih0, ih1, iw0, iw1 (indices) and
 * lh0, lh1, lw0, lw1 (weights, opmath T); for k == 1 the h tables are unused. */
#define NN_LINEAR_LOOP_(SCALAR, T)                                                                 \
    do {                                                                                           \
        const SCALAR *x = (const SCALAR *)ops_tensor_data_ptr(self);                               \
        SCALAR *y = (SCALAR *)ops_tensor_data_ptr(r);                                              \
        const T *lh0 = (const T *)wbuf, *lh1 = lh0 + oh, *lw0 = lh1 + oh, *lw1 = lw0 + ow;         \
        const int64_t *ih0 = ibuf, *ih1 = ih0 + oh, *iw0 = ih1 + oh, *iw1 = iw0 + ow;              \
        const int64_t sh = k == 2 ? self->strides[2] : 0, sw = self->strides[k + 1];               \
        const int64_t planes = nb * nc;                                                            \
        const bool par_ = planes > 1 && planes * oh * ow > OPS_GRAIN_SIZE;                         \
        (void)par_;                                                                                \
        NN_PARALLEL_FOR_(par_)                                                                     \
        for (int64_t p = 0; p < planes; p++) {                                                     \
            const SCALAR *xp = x + (p / nc) * self->strides[0] + (p % nc) * self->strides[1];      \
            SCALAR *yp = y + p * oh * ow;                                                          \
            for (int64_t a = 0; a < oh; a++) {                                                     \
                const SCALAR *r0 = xp + ih0[a] * sh, *r1 = xp + ih1[a] * sh;                       \
                for (int64_t b = 0; b < ow; b++) {                                                 \
                    const T x00 = OPS_LOAD(r0 + iw0[b] * sw), x01 = OPS_LOAD(r0 + iw1[b] * sw);    \
                    T v = lw0[b] * x00 + lw1[b] * x01;                                             \
                    if (k == 2) {                                                                  \
                        const T x10 = OPS_LOAD(r1 + iw0[b] * sw), x11 = OPS_LOAD(r1 + iw1[b] * sw); \
                        v = lh0[a] * v + lh1[a] * (lw0[b] * x10 + lw1[b] * x11);                   \
                    }                                                                              \
                    OPS_STORE(&yp[a * ow + b], v);                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)


ops_status
nn_upsample_linear_planes_cpu(const char *op, int k, const ops_tensor *self, int64_t oh, int64_t ow,
                              const int64_t *ibuf, const void *wbuf, ops_tensor *r)
{
    (void)op;
    const int64_t nb = self->sizes[0], nc = self->sizes[1];
    if (self->dtype == OPS_FLOAT64) {
        NN_LINEAR_LOOP_(double, double);
    } else {
        switch (self->dtype) {
        case OPS_FLOAT16: NN_LINEAR_LOOP_(ops_half, float); break;
        case OPS_BFLOAT16: NN_LINEAR_LOOP_(ops_bfloat16, float); break;
        default: NN_LINEAR_LOOP_(float, float); break;
        }
    }
    return OPS_OK;
}

ops_status
nn_binary_loop_cpu(const char *op, ops_iter *it, bool glu)
{
    if (glu) {
        OPS_DISPATCH_CASES(it->common_dtype, op, OPS_MASK_FLOATING, OPS_CASES_FLOATING_({
                               OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x * ops_math_sigmoid(y));
                           }));
    } else {
        OPS_DISPATCH_CASES(it->common_dtype, op, OPS_MASK_FLOATING, OPS_CASES_FLOATING_({
                               OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, OPS_NN_PRELU(x, y));
                           }));
    }
    return OPS_OK;
}

/* Convolution (CPU loops): the stub conv_run (kernels/conv.h) for a checked geometry
 * (ops_conv_geom; a 1-D convolution is a 2-D one of height 1).  float32 forward
 * convolution (but unpadded 1x1 kernels) runs on oneDNN where the build has it
 * (kernels/cpu/conv_dnnl.c: 0.47x this path's time over ResNet-18's convolutions);
 * everything else, and float32 where oneDNN declines, runs here.  The work is im2col +
 * GEMM per image and group, as PyTorch's slow path: the input windows are gathered
 * into a (Cin/g * kh * kw) x (oh * ow) column matrix, read straight from the input's
 * strides, and one cblas_?gemm multiplies the group's weights by it into the output.  A transposed convolution runs the other way:
 * one GEMM of the transposed weights by the input gives the columns, which col2im adds
 * into the output.  float16/bfloat16 are widened to float while gathering (weights,
 * inputs) and go through cblas_sgemm, so they accumulate in float and are rounded once
 * at the end, as PyTorch's CPU kernels do.  Integer dtypes (PyTorch's CPU set: every
 * integer type for conv, int64 alone for the transposed ops) are gathered as int64 and
 * multiplied by conv_gemm_int below, in uint64_t: exact, and wrapping as the narrow
 * type's own arithmetic would once the result is truncated to it (no float round trip,
 * so int64 values past 2^53 stay exact).
 *
 * Threads: only the BLAS's.  im2col/col2im stay on one thread on purpose: an OpenMP
 * region between two cblas calls for every image made libgomp's and OpenBLAS's worker
 * threads spin against each other (bench/bench_conv.c on a loaded 2-core machine: 4x
 * slower than the same im2col on one thread), and the GEMM is where the time goes.
 *
 * The driver (kernels/conv.c) has checked everything; every buffer is allocated before
 * the output is written. */
#include <cblas.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "kernels/conv.h"
#include "kernels/cpu/conv_dnnl.h"
#include "ops_dispatch.h"

/* ---- typed gathers ----------------------------------------------------------------- */

/* col[K x oh*ow] (ct) from the image at x (strides g->xs[1..3]), channels c0.. of the
 * group: the windows of every output position, zeros in the padding. */
#define CONV_DEFINE_IM2COL_(NAME, SCALAR, CT)                                                      \
    static void NAME(const ops_conv_geom *g, const SCALAR *x, CT *col)                                 \
    {                                                                                              \
        const int64_t cg = g->cin / g->groups, kh = g->kh, kw = g->kw, oh = g->oh, ow = g->ow;     \
        const int64_t rows = cg * kh * kw, ohw = oh * ow;                                          \
        const int64_t xsc = g->xs[1], xsh = g->xs[2], xsw = g->xs[3];                              \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            const int64_t c = r / (kh * kw), ki = (r / kw) % kh, kj = r % kw;                      \
            CT *dst = col + r * ohw;                                                               \
            const int64_t xoff = kj * g->dw - g->pl; /* ix = ox * sw + xoff */                     \
            int64_t ox0 = 0, ox1 = ow;                                                             \
            if (xoff < 0)                                                                          \
                ox0 = (-xoff + g->sw - 1) / g->sw;                                                 \
            if (g->iw - 1 - xoff < 0)                                                              \
                ox1 = 0;                                                                           \
            else if ((g->iw - 1 - xoff) / g->sw + 1 < ow)                                          \
                ox1 = (g->iw - 1 - xoff) / g->sw + 1;                                              \
            if (ox0 > ox1)                                                                         \
                ox0 = ox1;                                                                         \
            for (int64_t oy = 0; oy < oh; oy++) {                                                  \
                CT *d = dst + oy * ow;                                                             \
                const int64_t iy = oy * g->sh - g->pt + ki * g->dh;                                \
                if (iy < 0 || iy >= g->ih) {                                                       \
                    for (int64_t ox = 0; ox < ow; ox++)                                            \
                        d[ox] = 0;                                                                 \
                    continue;                                                                      \
                }                                                                                  \
                for (int64_t ox = 0; ox < ox0; ox++)                                               \
                    d[ox] = 0;                                                                     \
                if (ox0 < ox1) {                                                                   \
                    /* the first tap inside the input; the pointer never leaves it */              \
                    const SCALAR *src = x + c * xsc + iy * xsh + (ox0 * g->sw + xoff) * xsw;       \
                    if (g->sw == 1 && xsw == 1) {                                                  \
                        for (int64_t ox = ox0; ox < ox1; ox++)                                     \
                            d[ox] = OPS_LOAD(src + (ox - ox0));                                    \
                    } else {                                                                       \
                        const int64_t step = g->sw * xsw;                                          \
                        for (int64_t ox = ox0; ox < ox1; ox++)                                     \
                            d[ox] = OPS_LOAD(src + (ox - ox0) * step);                             \
                    }                                                                              \
                }                                                                                  \
                for (int64_t ox = ox1; ox < ow; ox++)                                              \
                    d[ox] = 0;                                                                     \
            }                                                                                      \
        }                                                                                          \
    }

CONV_DEFINE_IM2COL_(im2col_f32, float, float)
CONV_DEFINE_IM2COL_(im2col_f64, double, double)
CONV_DEFINE_IM2COL_(im2col_f16, ops_half, float)
CONV_DEFINE_IM2COL_(im2col_bf16, ops_bfloat16, float)
CONV_DEFINE_IM2COL_(im2col_u8, uint8_t, int64_t)
CONV_DEFINE_IM2COL_(im2col_i8, int8_t, int64_t)
CONV_DEFINE_IM2COL_(im2col_i16, int16_t, int64_t)
CONV_DEFINE_IM2COL_(im2col_i32, int32_t, int64_t)
CONV_DEFINE_IM2COL_(im2col_i64, int64_t, int64_t)

static void
im2col(const ops_conv_geom *g, const char *x, void *col)
{
    switch (g->dt) {
    case OPS_FLOAT32: im2col_f32(g, (const float *)x, col); break;
    case OPS_FLOAT64: im2col_f64(g, (const double *)x, col); break;
    case OPS_FLOAT16: im2col_f16(g, (const ops_half *)x, col); break;
    case OPS_BFLOAT16: im2col_bf16(g, (const ops_bfloat16 *)x, col); break;
    case OPS_UINT8: im2col_u8(g, (const uint8_t *)x, col); break;
    case OPS_INT8: im2col_i8(g, (const int8_t *)x, col); break;
    case OPS_INT16: im2col_i16(g, (const int16_t *)x, col); break;
    case OPS_INT32: im2col_i32(g, (const int32_t *)x, col); break;
    case OPS_INT64: im2col_i64(g, (const int64_t *)x, col); break;
    default: break; /* refused by the driver's dtype check */
    }
}

/* dst (ct, contiguous, n0 x n1 x n2 x n3) = src read with the given strides. */
#define CONV_DEFINE_PACK_(NAME, SCALAR, CT)                                                        \
    static void NAME(CT *dst, const SCALAR *src, const int64_t *sz, const int64_t *st)             \
    {                                                                                              \
        for (int64_t a = 0; a < sz[0]; a++)                                                        \
            for (int64_t b = 0; b < sz[1]; b++)                                                    \
                for (int64_t c = 0; c < sz[2]; c++) {                                              \
                    const SCALAR *s = src + a * st[0] + b * st[1] + c * st[2];                     \
                    for (int64_t d = 0; d < sz[3]; d++)                                            \
                        *dst++ = OPS_LOAD(s + d * st[3]);                                          \
                }                                                                                  \
    }

CONV_DEFINE_PACK_(pack_f32, float, float)
CONV_DEFINE_PACK_(pack_f64, double, double)
CONV_DEFINE_PACK_(pack_f16, ops_half, float)
CONV_DEFINE_PACK_(pack_bf16, ops_bfloat16, float)
CONV_DEFINE_PACK_(pack_u8, uint8_t, int64_t)
CONV_DEFINE_PACK_(pack_i8, int8_t, int64_t)
CONV_DEFINE_PACK_(pack_i16, int16_t, int64_t)
CONV_DEFINE_PACK_(pack_i32, int32_t, int64_t)
CONV_DEFINE_PACK_(pack_i64, int64_t, int64_t)

static void
pack4(ops_dtype dt, void *dst, const char *src, const int64_t *sz, const int64_t *st)
{
    switch (dt) {
    case OPS_FLOAT32: pack_f32(dst, (const float *)src, sz, st); break;
    case OPS_FLOAT64: pack_f64(dst, (const double *)src, sz, st); break;
    case OPS_FLOAT16: pack_f16(dst, (const ops_half *)src, sz, st); break;
    case OPS_BFLOAT16: pack_bf16(dst, (const ops_bfloat16 *)src, sz, st); break;
    case OPS_UINT8: pack_u8(dst, (const uint8_t *)src, sz, st); break;
    case OPS_INT8: pack_i8(dst, (const int8_t *)src, sz, st); break;
    case OPS_INT16: pack_i16(dst, (const int16_t *)src, sz, st); break;
    case OPS_INT32: pack_i32(dst, (const int32_t *)src, sz, st); break;
    case OPS_INT64: pack_i64(dst, (const int64_t *)src, sz, st); break;
    default: break;
    }
}

/* Store ct values of a contiguous buffer into dst of dtype dt: float16/bfloat16 rounded
 * from float, the narrow integer types truncated from int64 (two's complement: the
 * value the narrow type's wrapping arithmetic gives). */
static void
store_from_ct(ops_dtype dt, void *dst, const void *src, int64_t n)
{
    if (!ops_dtype_is_floating(dt)) {
        const int64_t *s = src;
        for (int64_t i = 0; i < n; i++) {
            switch (dt) {
            case OPS_UINT8: ((uint8_t *)dst)[i] = (uint8_t)s[i]; break;
            case OPS_INT8: ((int8_t *)dst)[i] = (int8_t)(uint8_t)s[i]; break;
            case OPS_INT16: ((int16_t *)dst)[i] = (int16_t)(uint16_t)s[i]; break;
            case OPS_INT32: ((int32_t *)dst)[i] = (int32_t)(uint32_t)s[i]; break;
            default: break; /* int64 is written directly */
            }
        }
    } else if (dt == OPS_FLOAT16) {
        const float *s = src;
        ops_half *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = ops_float_to_half(s[i]);
    } else {
        const float *s = src;
        ops_bfloat16 *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = ops_float_to_bfloat16(s[i]);
    }
}

/* The integer GEMM (row-major; A is m x k, or k x m read transposed when ta): C = A @ B
 * (+ C when beta is 1), in uint64_t so products and sums wrap without signed overflow.
 * The i-k-j order streams rows of B and C. */
static void
conv_gemm_int(bool ta, int m, int n, int k, const int64_t *a, int lda, const int64_t *b, int ldb, double beta,
              int64_t *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        uint64_t *ci = (uint64_t *)(c + (size_t)i * ldc);
        if (beta == 0.0)
            memset(ci, 0, (size_t)n * sizeof *ci);
        for (int p = 0; p < k; p++) {
            const uint64_t aip = (uint64_t)(ta ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p]);
            const int64_t *bp = b + (size_t)p * ldb;
            if (aip == 0)
                continue;
            for (int j = 0; j < n; j++)
                ci[j] += aip * (uint64_t)bp[j];
        }
    }
}

static void
gemm(ops_dtype ct, bool ta, int m, int n, int k, const void *a, int lda, const void *b, int ldb, double beta,
     void *c, int ldc)
{
    const enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans;
    if (ct == OPS_INT64)
        conv_gemm_int(ta, m, n, k, a, lda, b, ldb, beta, c, ldc);
    else if (ct == OPS_FLOAT32)
        cblas_sgemm(CblasRowMajor, TA, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, (float)beta, c, ldc);
    else
        cblas_dgemm(CblasRowMajor, TA, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

/* Fill nrows rows of len elements of out (ct) with bias[row] (or 0). */
static void
fill_rows(ops_dtype ct, void *out, const void *bias, int64_t nrows, int64_t len)
{
    for (int64_t r = 0; r < nrows; r++) {
        if (ct == OPS_INT64) {
            int64_t *o = (int64_t *)out + r * len;
            const int64_t v = bias ? ((const int64_t *)bias)[r] : 0;
            for (int64_t i = 0; i < len; i++)
                o[i] = v;
        } else if (ct == OPS_FLOAT32) {
            float *o = (float *)out + r * len;
            const float v = bias ? ((const float *)bias)[r] : 0.0f;
            for (int64_t i = 0; i < len; i++)
                o[i] = v;
        } else {
            double *o = (double *)out + r * len;
            const double v = bias ? ((const double *)bias)[r] : 0.0;
            for (int64_t i = 0; i < len; i++)
                o[i] = v;
        }
    }
}

/* col2im of the transposed convolution: out[co, oy, ox] += col[co, ki, kj, iy, ix] for
 * the cout_g output channels of one group. */
#define CONV_DEFINE_COL2IM_(NAME, CT)                                                              \
    static void NAME(const ops_conv_geom *g, const CT *col, CT *out)                                   \
    {                                                                                              \
        const int64_t cog = g->cout / g->groups, kh = g->kh, kw = g->kw;                           \
        const int64_t ih = g->ih, iw = g->iw, oh = g->oh, ow = g->ow;                              \
        for (int64_t co = 0; co < cog; co++) {                                                     \
            CT *o = out + co * oh * ow;                                                            \
            for (int64_t ki = 0; ki < kh; ki++)                                                    \
                for (int64_t kj = 0; kj < kw; kj++) {                                              \
                    const CT *c = col + ((co * kh + ki) * kw + kj) * ih * iw;                      \
                    for (int64_t iy = 0; iy < ih; iy++) {                                          \
                        const int64_t oy = iy * g->sh - g->pt + ki * g->dh;                        \
                        if (oy < 0 || oy >= oh)                                                    \
                            continue;                                                              \
                        for (int64_t ix = 0; ix < iw; ix++) {                                      \
                            const int64_t ox = ix * g->sw - g->pl + kj * g->dw;                    \
                            if (ox >= 0 && ox < ow)                                                \
                                o[oy * ow + ox] += c[iy * iw + ix];                                \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
        }                                                                                          \
    }

CONV_DEFINE_COL2IM_(col2im_f32, float)
CONV_DEFINE_COL2IM_(col2im_f64, double)
CONV_DEFINE_COL2IM_(col2im_int, uint64_t) /* int64 buffers, summed without signed overflow */

/* ---- the loop ---------------------------------------------------------------------- */

OPS_REGISTER_STUB(conv_run, CPU, conv_run_cpu);

/* Runs the convolution described by g into a new tensor (*result). */
ops_status
conv_run_cpu(ops_conv_geom *g, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
             bool batched, ops_tensor **result)
{
    const char *op = g->op;
    ops_status st = OPS_OK;
    ops_tensor *res = NULL;
    void *wbuf = NULL, *bbuf = NULL, *col = NULL, *xbuf = NULL, *obuf = NULL;
    const size_t csz = ops_dtype_itemsize(g->ct);
    const int64_t G = g->groups, cig = g->cin / G, cog = g->cout / G;
    const int64_t ihw = g->ih * g->iw, ohw = g->oh * g->ow, kk = g->kh * g->kw;

    /* the result's shape */
    int64_t rs[OPS_MAX_DIMS];
    int rnd = 0;
    if (batched)
        rs[rnd++] = g->n;
    rs[rnd++] = g->cout;
    if (g->nsp == 2)
        rs[rnd++] = g->oh;
    rs[rnd++] = g->ow;
    int64_t onumel, nw, ncol, nx;
    if (ops_mul3_overflow_i64(g->n, g->cout, ohw, &onumel))
        return ops_fail(OPS_ERR_VALUE, "%s: the output of %" PRId64 " x %" PRId64 " x %" PRId64
                        " elements does not fit int64", op, g->n, g->cout, ohw);
    const bool empty = onumel == 0;
    const bool direct = g->dt == g->ct; /* the BLAS writes the result itself */
    /* a 1x1 kernel over an input whose planes are contiguous needs no im2col */
    const bool pointwise = !g->transposed && g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 &&
                           g->pt == 0 && g->pb == 0 && g->pl == 0 && g->pr == 0 && direct && g->xs[3] == 1 &&
                           (g->ih == 1 || g->xs[2] == g->iw) && g->xs[1] == ihw;

    /* float32 forward convolution: oneDNN's where the build has it (conv_dnnl.c);
     * this file's path runs where it declines */
    if (!empty && g->dt == OPS_FLOAT32 && !g->transposed && cig * kk > 0) {
        if ((res = ops_tensor_new(op, rnd, rs, NULL, g->dt, OPS_DEVICE_CPU)) == NULL) {
            st = ops_last_status();
            goto done;
        }
        int64_t wsz[4], wst[4];
        ops_conv_as4(weight, g->nsp, wsz, wst);
        if (ops_conv_dnnl_f32(g, ops_tensor_data_ptr(input), ops_tensor_data_ptr(weight), wst,
                              bias ? ops_tensor_data_ptr(bias) : NULL, bias ? bias->strides[0] : 0,
                              ops_tensor_data_ptr(res)))
            goto written;
    }
    if (!empty) {
        /* weights, contiguous in ct: [Cout, Cin/g, kh, kw] or [Cin, Cout/g, kh, kw] */
        int64_t wsz[4], wst[4];
        ops_conv_as4(weight, g->nsp, wsz, wst);
        if (ops_numel_overflow(4, wsz, &nw) || (wbuf = ops_host_malloc_array(nw, csz)) == NULL)
            goto oom;
        pack4(g->dt, wbuf, (const char *)ops_tensor_data_ptr(weight), wsz, wst);
        if (bias != NULL) {
            int64_t bsz[4] = {1, 1, 1, bias->sizes[0]}, bst[4] = {0, 0, 0, bias->strides[0]};
            if ((bbuf = ops_host_malloc_array(bias->sizes[0], csz)) == NULL)
                goto oom;
            pack4(g->dt, bbuf, (const char *)ops_tensor_data_ptr(bias), bsz, bst);
        }
        if (!g->transposed) {
            if (!pointwise && (ops_mul3_overflow_i64(cig, kk, ohw, &ncol) ||
                               (col = ops_host_malloc_array(ncol, csz)) == NULL))
                goto oom;
        } else {
            /* the input, contiguous in ct, and the columns of one image and group */
            if (ops_mul3_overflow_i64(g->n, g->cin, ihw, &nx) || ops_mul3_overflow_i64(cog, kk, ihw, &ncol) ||
                (xbuf = ops_host_malloc_array(nx, csz)) == NULL || (col = ops_host_malloc_array(ncol, csz)) == NULL)
                goto oom;
        }
        if (!direct && (obuf = ops_host_malloc_array(onumel, csz)) == NULL)
            goto oom;
    }
    if (res == NULL && (res = ops_tensor_new(op, rnd, rs, NULL, g->dt, OPS_DEVICE_CPU)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if (empty)
        goto written;

    /* nothing fails from here on */
    char *out = direct ? (char *)ops_tensor_data_ptr(res) : (char *)obuf;
    const char *x = (const char *)ops_tensor_data_ptr(input);
    const size_t isz = ops_dtype_itemsize(g->dt);
    if (!g->transposed) {
        for (int64_t n = 0; n < g->n; n++)
            for (int64_t gi = 0; gi < G; gi++) {
                const char *xg = x + (size_t)(n * g->xs[0] + gi * cig * g->xs[1]) * isz;
                char *og = out + (size_t)((n * g->cout + gi * cog) * ohw) * csz;
                const char *bg = bbuf ? (const char *)bbuf + (size_t)(gi * cog) * csz : NULL;
                fill_rows(g->ct, og, bg, cog, ohw);
                if (cig * kk == 0) /* no input channels: the bias alone */
                    continue;
                const void *B = xg;
                if (!pointwise) {
                    im2col(g, xg, col);
                    B = col;
                }
                const char *wg = (const char *)wbuf + (size_t)(gi * cog * cig * kk) * csz;
                gemm(g->ct, false, (int)cog, (int)ohw, (int)(cig * kk), wg, (int)(cig * kk), B, (int)ohw, 1.0, og,
                     (int)ohw);
            }
    } else {
        int64_t xsz[4] = {g->n, g->cin, g->ih, g->iw};
        pack4(g->dt, xbuf, x, xsz, g->xs);
        for (int64_t n = 0; n < g->n; n++)
            for (int64_t gi = 0; gi < G; gi++) {
                const char *xg = (const char *)xbuf + (size_t)((n * g->cin + gi * cig) * ihw) * csz;
                char *og = out + (size_t)((n * g->cout + gi * cog) * ohw) * csz;
                const char *bg = bbuf ? (const char *)bbuf + (size_t)(gi * cog) * csz : NULL;
                fill_rows(g->ct, og, bg, cog, ohw);
                if (ihw == 0) /* an empty input adds nothing to the bias */
                    continue;
                /* col [cog*kh*kw x ih*iw] = W_g^T @ X_g, W_g the rows gi*cig.. of [Cin, cog*kh*kw] */
                gemm(g->ct, true, (int)(cog * kk), (int)ihw, (int)cig,
                     (const char *)wbuf + (size_t)(gi * cig * cog * kk) * csz, (int)(cog * kk), xg, (int)ihw, 0.0,
                     col, (int)ihw);
                if (g->ct == OPS_FLOAT32)
                    col2im_f32(g, col, (float *)og);
                else if (g->ct == OPS_FLOAT64)
                    col2im_f64(g, col, (double *)og);
                else
                    col2im_int(g, col, (uint64_t *)og);
            }
    }
    if (!direct)
        store_from_ct(g->dt, ops_tensor_data_ptr(res), obuf, onumel);
written:
    *result = res;
    res = NULL;
    goto done;
oom:
    st = ops_fail(OPS_ERR_OOM, "%s: out of memory (a %s work buffer)", op, ops_dtype_name(g->ct));
done:
    ops_host_free(wbuf);
    ops_host_free(bbuf);
    ops_host_free(col);
    ops_host_free(xbuf);
    ops_host_free(obuf);
    ops_tensor_release(res);
    return st;
}

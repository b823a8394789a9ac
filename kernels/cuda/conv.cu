/* Convolution (CUDA loops): the stub conv_run of kernels/conv.h, for conv1d, conv2d
 * (and their padding="valid"/"same" overloads), conv_transpose1d, conv_transpose2d.
 *
 * The arguments, checks and geometry are the one driver's (kernels/conv.c); the work
 * is the CPU's algorithm on the device: im2col + GEMM, in the compute type ct
 * (float for float16/bfloat16/float32, double for float64, int64 for the integer types,
 * whose GEMMs take the runner's exact integer kernel) so half-precision inputs
 * accumulate in float and are rounded once at the end, as on the CPU.  cuDNN is not
 * used (the emulated device cannot run it).
 *  - forward: the windows of a chunk of images are gathered into columns
 *    [image][group][Cin/g * kh * kw][oh * ow]; per group one strided-batched GEMM over
 *    the chunk's images multiplies the group's weights by them into the output,
 *    which starts as the bias (beta = 1);
 *  - transposed: per group one strided-batched GEMM of the transposed weights by the
 *    input gives columns [image][group][Cout/g * kh * kw][ih * iw]; col2im then
 *    gathers, for each output element, the columns that land on it (no atomics, so
 *    the sums are deterministic) and adds them to the bias.
 * The chunk of images is sized so the columns stay under LA_CONV_COL_ELEMS elements. */
#include <string.h>

#include "cuda_common.h"
#include "ops_cuda_launch.h"
#include "ops_dispatch.h"

#include "kernels/conv.h"
#include "linalg_cuda.h"

#define CONV_BLOCK 256
#define CONV_MAX_GRID 65535
#define CONV_COL_ELEMS ((int64_t)1 << 26) /* 256 MiB of float columns per chunk */

#define CONV_GRID_STRIDE(e, total)                                                                                 \
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < (total); e += (int64_t)gridDim.x * blockDim.x)

/* dst (ct, contiguous over sz) = src (dt) read with 4-D strides st. */
template <typename T, typename CT>
__global__ void
conv_pack_kernel(CT *dst, const T *src, int64_t s1, int64_t s2, int64_t s3, int64_t t0, int64_t t1, int64_t t2,
                 int64_t t3, int64_t total)
{
    CONV_GRID_STRIDE(e, total)
    {
        const int64_t d = e % s3, c = (e / s3) % s2, b = (e / (s3 * s2)) % s1, a = e / (s3 * s2 * s1);
        dst[e] = (CT)ops_load(src + a * t0 + b * t1 + c * t2 + d * t3);
    }
}

/* out[n][co][p] = bias[co] (ct) or 0, for a contiguous [n][cout][ohw] output. */
template <typename CT>
__global__ void
conv_fill_kernel(CT *out, const CT *bias, int64_t cout, int64_t ohw, int64_t total)
{
    CONV_GRID_STRIDE(e, total)
    out[e] = bias != NULL ? bias[(e / ohw) % cout] : CT(0);
}

/* Columns of images n0 .. n0 + nb: col[n][gi][(c * kh + ki) * kw + kj][oy * ow + ox] =
 * x[n0 + n][gi * cig + c][oy * sh - pt + ki * dh][ox * sw - pl + kj * dw], 0 in the
 * padding. */
template <typename T, typename CT>
__global__ void
conv_im2col_kernel(CT *col, const T *x, ops_conv_geom g, int64_t n0, int64_t total)
{
    const int64_t cig = g.cin / g.groups, kk = g.kh * g.kw, ohw = g.oh * g.ow, rows = cig * kk;
    CONV_GRID_STRIDE(e, total)
    {
        const int64_t p = e % ohw, r = (e / ohw) % rows, gi = (e / (ohw * rows)) % g.groups,
                      n = e / (ohw * rows * g.groups);
        const int64_t oy = p / g.ow, ox = p % g.ow, c = r / kk, ki = (r / g.kw) % g.kh, kj = r % g.kw;
        const int64_t iy = oy * g.sh - g.pt + ki * g.dh, ix = ox * g.sw - g.pl + kj * g.dw;
        CT v = 0;
        if (iy >= 0 && iy < g.ih && ix >= 0 && ix < g.iw)
            v = (CT)ops_load(x + (n0 + n) * g.xs[0] + (gi * cig + c) * g.xs[1] + iy * g.xs[2] + ix * g.xs[3]);
        col[e] = v;
    }
}

/* The transposed convolution's col2im as a gather: out[n0 + n][co][oy][ox] += the
 * column entries col[n][gi][(co' * kh + ki) * kw + kj][iy * iw + ix] with
 * oy = iy * sh - pt + ki * dh and ox = ix * sw - pl + kj * dw. */
template <typename CT>
__global__ void
conv_col2im_kernel(CT *out, const CT *col, ops_conv_geom g, int64_t n0, int64_t total)
{
    const int64_t cog = g.cout / g.groups, kk = g.kh * g.kw, ihw = g.ih * g.iw, ohw = g.oh * g.ow;
    CONV_GRID_STRIDE(e, total)
    {
        const int64_t p = e % ohw, co = (e / ohw) % g.cout, n = e / (ohw * g.cout);
        const int64_t oy = p / g.ow, ox = p % g.ow, gi = co / cog, cl = co % cog;
        const CT *cn = col + ((n * g.groups + gi) * cog + cl) * kk * ihw;
        CT acc = 0;
        for (int64_t ki = 0; ki < g.kh; ki++) {
            const int64_t ty = oy + g.pt - ki * g.dh; /* iy * sh */
            if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.ih)
                continue;
            for (int64_t kj = 0; kj < g.kw; kj++) {
                const int64_t tx = ox + g.pl - kj * g.dw;
                if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.iw)
                    continue;
                acc += cn[(ki * g.kw + kj) * ihw + (ty / g.sh) * g.iw + tx / g.sw];
            }
        }
        out[(n0 + n) * g.cout * ohw + e % (g.cout * ohw)] += acc;
    }
}

/* dst (dt) = src (ct), n contiguous elements. */
template <typename T, typename CT>
__global__ void
conv_store_kernel(T *dst, const CT *src, int64_t total)
{
    CONV_GRID_STRIDE(e, total)
    ops_store(dst + e, (typename ops_opmath<T>::type)src[e]);
}

static ops_launch_config
conv_cfg(int64_t n)
{
    return ops_launch_config_1d(n, CONV_BLOCK, 1, CONV_MAX_GRID);
}

/* The kernels of one (storage type T, compute type CT) pair. */
template <typename T, typename CT> struct conv_run_typed {
    const ops_conv_geom *g;
    int dev;
    cudaStream_t stream;

    /* dst = t (dt) as a contiguous ct array over its 4-D view. */
    ops_status pack(CT *dst, const ops_tensor *t, const int64_t *sz, const int64_t *st) const
    {
        const int64_t total = sz[0] * sz[1] * sz[2] * sz[3];
        if (total == 0)
            return OPS_OK;
        const ops_launch_config c = conv_cfg(total);
        OPS_LAUNCH((conv_pack_kernel<T, CT>), c.grid, c.block, 0, stream, dst, (const T *)ops_tensor_data_ptr(t), sz[1],
                   sz[2], sz[3], st[0], st[1], st[2], st[3], total);
        OPS_CUDA_CHECK_LAUNCH(g->op);
        return OPS_OK;
    }

    /* One GEMM per group over the nb images of a chunk: C[n] (m x nn) = A[n] (m x k) @
     * B[n] (k x nn) (+ C[n] when accumulate), each operand given by its group-0
     * pointer, strides and the step from one group to the next. */
    ops_status group_gemms(int64_t nb, int64_t m, int64_t nn, int64_t k, const ops_la_operand &a, int64_t a_group,
                           const ops_la_operand &b, int64_t b_group, const ops_la_operand &c, int64_t c_group,
                           bool accumulate) const
    {
        for (int64_t gi = 0; gi < g->groups; gi++) {
            ops_gemm_desc d;
            memset(&d, 0, sizeof d);
            d.op = g->op;
            d.dt = g->ct;
            d.nbd = 1;
            d.bsz[0] = nb;
            d.nbatch = nb;
            d.m = m, d.n = nn, d.k = k;
            d.a = a, d.b = b, d.c = c;
            d.a.data += gi * a_group * (int64_t)sizeof(CT);
            d.b.data += gi * b_group * (int64_t)sizeof(CT);
            d.c.data += gi * c_group * (int64_t)sizeof(CT);
            d.has_s = accumulate; /* C holds the bias: beta = 1; else cuBLAS does not read C */
            d.alpha = ops_la_int_scalar(1);
            d.beta = ops_la_int_scalar(1);
            const ops_status st = ops_cuda_gemm_run(&d, dev);
            if (st != OPS_OK)
                return st;
        }
        return OPS_OK;
    }

    /* out (ct, contiguous [n][cout][oh*ow]) = the convolution, bias included. */
    ops_status run(CT *out, const void *xdata, const CT *w, const CT *bias, CT *col, int64_t chunk) const
    {
        const int64_t G = g->groups, cig = g->cin / G, cog = g->cout / G, kk = g->kh * g->kw;
        const int64_t ihw = g->ih * g->iw, ohw = g->oh * g->ow, onumel = g->n * g->cout * ohw;
        ops_launch_config c = conv_cfg(onumel);
        OPS_LAUNCH(conv_fill_kernel<CT>, c.grid, c.block, 0, stream, out, bias, g->cout, ohw, onumel);
        OPS_CUDA_CHECK_LAUNCH(g->op);
        for (int64_t n0 = 0; n0 < g->n; n0 += chunk) {
            const int64_t nb = g->n - n0 < chunk ? g->n - n0 : chunk;
            ops_la_operand a = {}, b = {}, o = {};
            ops_status st;
            if (!g->transposed) {
                if (cig * kk == 0) /* no input channels: the bias alone */
                    break;
                const int64_t total = nb * G * cig * kk * ohw;
                c = conv_cfg(total);
                OPS_LAUNCH((conv_im2col_kernel<T, CT>), c.grid, c.block, 0, stream, col, (const T *)xdata, *g, n0,
                           total);
                OPS_CUDA_CHECK_LAUNCH(g->op);
                /* out_g[n] (cog x ohw) += W_g (cog x cig*kk) @ col[n][g] (cig*kk x ohw) */
                a.data = (char *)w, a.rs = cig * kk, a.cs = 1;
                b.data = (char *)col, b.bst[0] = G * cig * kk * ohw, b.rs = ohw, b.cs = 1;
                o.data = (char *)(out + n0 * g->cout * ohw), o.bst[0] = g->cout * ohw, o.rs = ohw, o.cs = 1;
                st = group_gemms(nb, cog, ohw, cig * kk, a, cog * cig * kk, b, cig * kk * ohw, o, cog * ohw, true);
            } else {
                if (ihw == 0) /* an empty input adds nothing to the bias */
                    break;
                const CT *xc = (const CT *)xdata; /* packed in ct: [n][cin][ih*iw] */
                /* col[n][g] (cog*kk x ihw) = W_g^T @ X_g[n], W_g the rows gi*cig.. of
                 * [Cin, cog*kk]: its transpose is read column-major */
                a.data = (char *)w, a.rs = 1, a.cs = cog * kk;
                b.data = (char *)(xc + n0 * g->cin * ihw), b.bst[0] = g->cin * ihw, b.rs = ihw, b.cs = 1;
                o.data = (char *)col, o.bst[0] = G * cog * kk * ihw, o.rs = ihw, o.cs = 1;
                st = group_gemms(nb, cog * kk, ihw, cig, a, cig * cog * kk, b, cig * ihw, o, cog * kk * ihw, false);
                if (st == OPS_OK) {
                    const int64_t on = nb * g->cout * ohw;
                    c = conv_cfg(on);
                    OPS_LAUNCH(conv_col2im_kernel<CT>, c.grid, c.block, 0, stream, out, col, *g, n0, on);
                    OPS_CUDA_CHECK_LAUNCH(g->op);
                }
            }
            if (st != OPS_OK)
                return st;
        }
        return OPS_OK;
    }

    ops_status store(const ops_tensor *res, const CT *src, int64_t n) const
    {
        const ops_launch_config c = conv_cfg(n);
        OPS_LAUNCH((conv_store_kernel<T, CT>), c.grid, c.block, 0, stream, (T *)ops_tensor_data_ptr(res), src, n);
        OPS_CUDA_CHECK_LAUNCH(g->op);
        return OPS_OK;
    }
};

/* Device buffer of n elements of dt, or NULL for n == 0. */
static ops_status
conv_buffer(const char *op, int dev, ops_dtype dt, int64_t n, ops_tensor **t)
{
    if (n == 0)
        return OPS_OK;
    *t = ops_tensor_new(op, 1, &n, NULL, dt, OPS_DEVICE_CUDA(dev));
    return *t != NULL ? OPS_OK : ops_last_status();
}

static void *
conv_ptr(ops_tensor *t)
{
    return t != NULL ? ops_tensor_data_ptr(t) : NULL;
}

template <typename T, typename CT>
static ops_status
conv_run_as(ops_conv_geom *g, int dev, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
            ops_tensor *res)
{
    const char *op = g->op;
    conv_run_typed<T, CT> k = {g, dev, ops_cuda_current_stream(dev)};
    const int64_t G = g->groups, cig = g->cin / G, cog = g->cout / G, kk = g->kh * g->kw;
    const int64_t ihw = g->ih * g->iw, ohw = g->oh * g->ow, onumel = g->n * g->cout * ohw;
    const bool direct = g->dt == g->ct; /* the GEMMs write the result itself */
    const int64_t per_image = g->transposed ? G * cog * kk * ihw : G * cig * kk * ohw;
    int64_t chunk = per_image > 0 ? CONV_COL_ELEMS / per_image : g->n;
    chunk = chunk < 1 ? 1 : chunk > g->n ? g->n : chunk;
    ops_tensor *wbuf = NULL, *bbuf = NULL, *col = NULL, *xbuf = NULL, *obuf = NULL;
    int64_t wsz[4], wst[4];
    ops_conv_as4(weight, g->nsp, wsz, wst);
    const int64_t xsz[4] = {g->n, g->cin, g->ih, g->iw};
    ops_status st;
    if ((st = conv_buffer(op, dev, g->ct, wsz[0] * wsz[1] * wsz[2] * wsz[3], &wbuf)) != OPS_OK ||
        (bias != NULL && (st = conv_buffer(op, dev, g->ct, bias->sizes[0], &bbuf)) != OPS_OK) ||
        (st = conv_buffer(op, dev, g->ct, chunk * per_image, &col)) != OPS_OK ||
        (g->transposed && (st = conv_buffer(op, dev, g->ct, g->n * g->cin * ihw, &xbuf)) != OPS_OK) ||
        (!direct && (st = conv_buffer(op, dev, g->ct, onumel, &obuf)) != OPS_OK))
        goto done;
    if ((st = k.pack((CT *)conv_ptr(wbuf), weight, wsz, wst)) != OPS_OK)
        goto done;
    if (bias != NULL) {
        const int64_t bsz[4] = {1, 1, 1, bias->sizes[0]}, bst[4] = {0, 0, 0, bias->strides[0]};
        if ((st = k.pack((CT *)conv_ptr(bbuf), bias, bsz, bst)) != OPS_OK)
            goto done;
    }
    /* the transposed GEMMs read the input contiguous in ct, as [n][cin][ih*iw] */
    if (g->transposed && (st = k.pack((CT *)conv_ptr(xbuf), input, xsz, g->xs)) != OPS_OK)
        goto done;
    {
        CT *out = direct ? (CT *)ops_tensor_data_ptr(res) : (CT *)conv_ptr(obuf);
        st = k.run(out, g->transposed ? conv_ptr(xbuf) : ops_tensor_data_ptr(input), (const CT *)conv_ptr(wbuf),
                   (const CT *)conv_ptr(bbuf), (CT *)conv_ptr(col), chunk);
        if (st == OPS_OK && !direct)
            st = k.store(res, out, onumel);
    }
done:
    ops_tensor_release(wbuf);
    ops_tensor_release(bbuf);
    ops_tensor_release(col);
    ops_tensor_release(xbuf);
    ops_tensor_release(obuf);
    return st;
}

OPS_REGISTER_STUB(conv_run, CUDA, conv_run_cuda);

/* The convolution of checked g into a new tensor on the input's device. */
ops_status
conv_run_cuda(ops_conv_geom *g, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
              bool batched, ops_tensor **result)
{
    const char *op = g->op;
    const int dev = ops_tensor_device(input).index;
    ops_status st = ops_cuda_check_device(op, dev);
    if (st != OPS_OK)
        return st;
    ops_cuda_device_guard guard(dev);
    int64_t rs[OPS_MAX_DIMS];
    int rnd = 0;
    if (batched)
        rs[rnd++] = g->n;
    rs[rnd++] = g->cout;
    if (g->nsp == 2)
        rs[rnd++] = g->oh;
    rs[rnd++] = g->ow;
    ops_tensor *res = ops_tensor_new(op, rnd, rs, NULL, g->dt, OPS_DEVICE_CUDA(dev));
    if (res == NULL)
        return ops_last_status();
    if (g->n * g->cout * g->oh * g->ow > 0) {
        switch (g->dt) {
        case OPS_FLOAT16: st = conv_run_as<ops_half, float>(g, dev, input, weight, bias, res); break;
        case OPS_BFLOAT16: st = conv_run_as<ops_bfloat16, float>(g, dev, input, weight, bias, res); break;
        case OPS_FLOAT32: st = conv_run_as<float, float>(g, dev, input, weight, bias, res); break;
        case OPS_FLOAT64: st = conv_run_as<double, double>(g, dev, input, weight, bias, res); break;
        /* integers (the CPU's dtypes, which PyTorch's CUDA refuses): int64 columns and the
         * GEMM runner's integer kernel, exact as on the CPU */
        case OPS_UINT8: st = conv_run_as<uint8_t, int64_t>(g, dev, input, weight, bias, res); break;
        case OPS_INT8: st = conv_run_as<int8_t, int64_t>(g, dev, input, weight, bias, res); break;
        case OPS_INT16: st = conv_run_as<int16_t, int64_t>(g, dev, input, weight, bias, res); break;
        case OPS_INT32: st = conv_run_as<int32_t, int64_t>(g, dev, input, weight, bias, res); break;
        case OPS_INT64: st = conv_run_as<int64_t, int64_t>(g, dev, input, weight, bias, res); break;
        default: /* refused by the checks */
            st = ops_fail(OPS_ERR_DTYPE, "%s: dtype %s is not supported", op, ops_dtype_name(g->dt));
            break;
        }
    }
    if (st != OPS_OK) {
        ops_tensor_release(res);
        return st;
    }
    *result = res;
    return OPS_OK;
}

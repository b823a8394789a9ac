/* Random sampling on CUDA devices: the CUDA loops of the stubs of kernels/random.h.
 *
 * The ops themselves (checks, result allocation, how many Philox blocks they take
 * from which generator) are the drivers of kernels/random.c, shared with the CPU,
 * so both devices fail alike and advance a generator alike.  Here each thread
 * computes whole Philox blocks with the functions of include/libops/ops_philox.h, the ones
 * the CPU loops call, and stores each block's elements where they live (any strides:
 * element e of the row-major order is the stream's element e).  So a CUDA result
 * equals the CPU's for the same seed and offset: bit for bit for integers, bernoulli,
 * uniforms and randperm, to the device libm's ulps for normal and exponential.
 *
 * The sequential algorithms: randperm's Fisher-Yates shuffle runs in one device
 * thread (the same draws and swaps as the CPU); multinomial with replacement builds
 * each row's cumulative sums in one thread (the CPU's summation order), then samples
 * in parallel; without replacement it sorts each row's keys p / Exp(1) with a
 * bitonic network in the CPU's order (larger first, ties by index), so the samples
 * are the CPU's; only keys computed with the device's log1p, which may differ from
 * the host's by an ulp, could reorder two keys that close. */
#include <math.h>

#include "cuda_common.h"
#include "kernels/random.h"
#include "ops_cuda_launch.h"
#include "strided_index.h"

namespace {

using namespace ops_strided;

/* Element e of the row-major order of out gets element e of the distribution;
 * bernoulli compares with p's element e when has_p. */
__global__ void
random_fill_kernel(ops_rand_dist d, ops_philox_stream s, int64_t n, strided_arg out, bool has_p, strided_arg p)
{
    const int per = 4 / d.k;
    const int64_t nblocks = (n + per - 1) / per;
    const bool integer = ops_rand_is_integer_valued(&d);
    for (int64_t b = global_thread(); b < nblocks; b += grid_threads()) {
        double f[4];
        int64_t iv[4];
        ops_rand_block(&d, &s, (uint64_t)b, f, iv);
        for (int j = 0; j < per && b * per + j < n; j++) {
            const int64_t e = b * per + j;
            char *q = element(out, e);
            if (has_p)
                ops_rand_store_int(out.dtype, q, f[j] < ops_rand_load_real(p.dtype, element(p, e)));
            else if (integer)
                ops_rand_store_int(out.dtype, q, iv[j]);
            else
                ops_rand_store_real(out.dtype, q, f[j]);
        }
    }
}

/* *first = the smallest e whose probability is outside [0, 1] (NaN too). */
__global__ void
bernoulli_invalid_kernel(strided_arg p, int64_t n, unsigned long long *first)
{
    for (int64_t e = global_thread(); e < n; e += grid_threads()) {
        const double v = ops_rand_load_real(p.dtype, element(p, e));
        if (!(v >= 0.0 && v <= 1.0))
            atomicMin(first, (unsigned long long)e);
    }
}

__global__ void
iota_kernel(int64_t *perm, int64_t n)
{
    for (int64_t i = global_thread(); i < n; i += grid_threads())
        perm[i] = i;
}

/* Fisher-Yates, one thread: the CPU's draws and swaps (ops_randperm_target). */
__global__ void
randperm_shuffle_kernel(int64_t *perm, int64_t n, ops_philox_stream s)
{
    if (global_thread() != 0)
        return;
    uint32_t w[4];
    for (int64_t i = 0; i + 1 < n; i++) {
        if (i % 2 == 0)
            ops_philox_block(&s, (uint64_t)(i / 2), w);
        const int64_t j = ops_randperm_target(w, i, n);
        const int64_t v = perm[i];
        perm[i] = perm[j];
        perm[j] = v;
    }
}

/* The int64 permutation into another dtype (which holds n - 1: checked); src NULL:
 * the identity. */
__global__ void
store_ints_kernel(const int64_t *src, int64_t n, ops_dtype dt, size_t itemsize, char *dst)
{
    for (int64_t i = global_thread(); i < n; i += grid_threads())
        ops_rand_store_int(dt, dst + i * (int64_t)itemsize, src != nullptr ? src[i] : i);
}

/* One thread per row, the CPU's checks in its order: *first gets min(row * 4 + kind)
 * over the bad rows (kind 1, 2, 3 as ops_cuda_multinomial_check documents). */
__global__ void
multinomial_check_kernel(const char *p, ops_dtype dt, size_t itemsize, int64_t rows, int64_t ncat, int64_t ns,
                         bool replacement, unsigned long long *first)
{
    for (int64_t row = global_thread(); row < rows; row += grid_threads()) {
        double sum = 0.0;
        int64_t nonzero = 0;
        int kind = 0;
        for (int64_t c = 0; c < ncat && kind == 0; c++) {
            const double v = ops_rand_load_real(dt, p + (row * ncat + c) * (int64_t)itemsize);
            if (!(v >= 0.0) || isinf(v))
                kind = 1;
            sum += v;
            nonzero += v > 0.0;
        }
        if (kind == 0 && !(sum > 0.0))
            kind = 2;
        else if (kind == 0 && !replacement && nonzero < ns)
            kind = 3;
        if (kind != 0)
            atomicMin(first, (unsigned long long)(row * 4 + kind));
    }
}

/* Row r's cumulative sums in category order (one thread per row: the CPU's sums). */
__global__ void
multinomial_cdf_kernel(const char *p, ops_dtype dt, size_t itemsize, int64_t rows, int64_t ncat, double *cdf)
{
    for (int64_t row = global_thread(); row < rows; row += grid_threads()) {
        double acc = 0.0;
        for (int64_t c = 0; c < ncat; c++) {
            acc += ops_rand_load_real(dt, p + (row * ncat + c) * (int64_t)itemsize);
            cdf[row * ncat + c] = acc;
        }
    }
}

__global__ void
multinomial_sample_kernel(const double *cdf, int64_t rows, int64_t ncat, int64_t ns, ops_philox_stream s,
                          int64_t *res)
{
    for (int64_t e = global_thread(); e < rows * ns; e += grid_threads()) {
        const double *row_cdf = cdf + (e / ns) * ncat;
        res[e] = ops_multinomial_search(row_cdf, ncat, ops_multinomial_uniform(&s, e) * row_cdf[ncat - 1]);
    }
}

/* Without replacement: category c of row r (stream element r * ncat + c) gets its
 * key; each row is padded to m (a power of two) with keys that sort last. */
__global__ void
multinomial_keys_kernel(const char *p, ops_dtype dt, size_t itemsize, int64_t rows, int64_t ncat, int64_t m,
                        ops_philox_stream s, double *keys, int64_t *idx)
{
    for (int64_t e = global_thread(); e < rows * m; e += grid_threads()) {
        const int64_t row = e / m, c = e - row * m;
        const int64_t pe = row * ncat + c; /* the stream element and p's element */
        keys[e] = c < ncat ? ops_multinomial_key(ops_rand_load_real(dt, p + pe * (int64_t)itemsize),
                                                 ops_multinomial_uniform(&s, pe))
                           : -INFINITY;
        idx[e] = c;
    }
}

/* The CPU's order: larger key first, ties by lower index (its sort's comparator). */
__device__ inline bool
multinomial_before(double ka, int64_t ia, double kb, int64_t ib)
{
    return ka > kb || (ka == kb && ia < ib);
}

/* One step (k, j) of a bitonic sorting network over every row's m entries: entry i
 * and its partner i ^ j are put in order (the CPU's order where i & k == 0, the
 * reverse elsewhere); after every step of every k each row is sorted.  The order is
 * total (indices differ), so the result is the CPU's sort's whatever the network. */
__global__ void
bitonic_step_kernel(double *keys, int64_t *idx, int64_t rows, int64_t m, int64_t k, int64_t j)
{
    for (int64_t e = global_thread(); e < rows * m; e += grid_threads()) {
        const int64_t row = e / m, i = e - row * m, l = i ^ j;
        if (l <= i)
            continue;
        double *rk = keys + row * m;
        int64_t *ri = idx + row * m;
        const bool forward = (i & k) == 0;
        const bool out_of_order = forward ? multinomial_before(rk[l], ri[l], rk[i], ri[i])
                                          : multinomial_before(rk[i], ri[i], rk[l], ri[l]);
        if (out_of_order) {
            const double tk = rk[i];
            const int64_t ti = ri[i];
            rk[i] = rk[l], ri[i] = ri[l];
            rk[l] = tk, ri[l] = ti;
        }
    }
}

/* The first ns entries of each sorted row are its samples. */
__global__ void
multinomial_take_kernel(const int64_t *idx, int64_t rows, int64_t m, int64_t ns, int64_t *res)
{
    for (int64_t e = global_thread(); e < rows * ns; e += grid_threads()) {
        const int64_t row = e / ns;
        res[e] = idx[row * m + (e - row * ns)];
    }
}

/* out[e] (contiguous) = dropout of in's element e; mask[e] = kept.  !training: a
 * copy and a mask of ones. */
__global__ void
dropout_kernel(strided_arg in, int64_t n, char *out, bool *mask, bool training, double q, double scale,
               ops_philox_stream s)
{
    const int64_t nblocks = (n + 3) / 4;
    for (int64_t b = global_thread(); b < nblocks; b += grid_threads()) {
        uint32_t w[4] = {0, 0, 0, 0};
        if (training)
            ops_philox_block(&s, (uint64_t)b, w);
        for (int j = 0; j < 4 && b * 4 + j < n; j++) {
            const int64_t e = b * 4 + j;
            const bool keep = !training || ops_uniform32(w[j]) < q;
            const double x = ops_rand_load_real(in.dtype, element(in, e));
            ops_rand_store_real(in.dtype, out + e * (int64_t)in.itemsize,
                                training ? ops_dropout_value(in.dtype, x, keep, scale) : x);
            if (mask != nullptr)
                mask[e] = keep;
        }
    }
}

/* A device scratch value initialised to all ones (UINT64_MAX), for atomicMin. */
struct device_min {
    ops_tensor *t = nullptr;
    ~device_min() { ops_tensor_release(t); }
    ops_status init(const char *op, int index, cudaStream_t stream)
    {
        const int64_t one = 1;
        t = ops_tensor_new(op, 1, &one, nullptr, OPS_INT64, OPS_DEVICE_CUDA(index));
        if (t == nullptr)
            return ops_last_status();
        const cudaError_t err = cudaMemsetAsync(ops_tensor_data_ptr(t), 0xff, 8, stream);
        return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemsetAsync", err);
    }
    unsigned long long *ptr() const { return (unsigned long long *)ops_tensor_data_ptr(t); }
};

/* n bytes of device memory into host memory, after the stream's work. */
ops_status
read_back(const char *op, void *dst, const void *src, size_t n, cudaStream_t stream)
{
    cudaError_t err = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "reading a check's result back", err);
}

int
device_of(const ops_tensor *t)
{
    return t->storage->device.index;
}

} // namespace

/* ---- the device work (the helpers of the stub loops below) ---------------------------- */

/* A row's length padded for the sort of multinomial without replacement. */
static int64_t ops_cuda_multinomial_row_pad(int64_t ncat);

static ops_status
ops_cuda_random_fill(const char *op, ops_tensor *t, const ops_rand_dist *d, const ops_philox_stream *s,
                     const ops_tensor *p)
{
    const int dev = device_of(t);
    ops_cuda_device_guard g(dev);
    const int64_t n = ops_tensor_numel(t);
    const int64_t nblocks = (int64_t)ops_philox_blocks_for(n, d->k);
    const strided_arg out = strided_of(t);
    const strided_arg prob = p != nullptr ? strided_of(p) : out;
    OPS_LAUNCH(random_fill_kernel, grid_for(nblocks), kBlock, 0, ops_cuda_current_stream(dev), *d, *s, n, out,
               p != nullptr, prob);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

static ops_status
ops_cuda_bernoulli_find_invalid(const char *op, const ops_tensor *p, int64_t *index, double *value)
{
    const int dev = device_of(p);
    ops_cuda_device_guard g(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    const int64_t n = ops_tensor_numel(p);
    *index = -1;
    if (n == 0)
        return OPS_OK;
    device_min first;
    ops_status st = first.init(op, dev, stream);
    if (st != OPS_OK)
        return st;
    const strided_arg pa = strided_of(p);
    OPS_LAUNCH(bernoulli_invalid_kernel, grid_for(n), kBlock, 0, stream, pa, n, first.ptr());
    OPS_CUDA_CHECK_LAUNCH(op);
    unsigned long long e;
    if ((st = read_back(op, &e, first.ptr(), sizeof e, stream)) != OPS_OK || e == ~0ull)
        return st;
    /* the bad element itself, converted as the CPU converts it */
    int64_t raw = 0;
    const int64_t off = ops_strided64_offset(&pa.layout, (int64_t)e);
    if ((st = read_back(op, &raw, pa.data + off * (int64_t)pa.itemsize, pa.itemsize, stream)) != OPS_OK)
        return st;
    *index = (int64_t)e;
    *value = ops_rand_load_real(p->dtype, &raw);
    return OPS_OK;
}

static ops_status
ops_cuda_randperm(const char *op, ops_tensor *t, int64_t n, const ops_philox_stream *s, ops_tensor *scratch)
{
    const int dev = device_of(t);
    ops_cuda_device_guard g(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    const bool direct = t->dtype == OPS_INT64 || n < 2;
    int64_t *perm = (int64_t *)ops_tensor_data_ptr(direct ? t : scratch);
    if (t->dtype != OPS_INT64 && n < 2) { /* [0] in t's dtype */
        OPS_LAUNCH(store_ints_kernel, 1, 1, 0, stream, nullptr, n, t->dtype, ops_dtype_size(t->dtype),
                   (char *)ops_tensor_data_ptr(t));
        OPS_CUDA_CHECK_LAUNCH(op);
        return OPS_OK;
    }
    OPS_LAUNCH(iota_kernel, grid_for(n), kBlock, 0, stream, perm, n);
    OPS_CUDA_CHECK_LAUNCH(op);
    if (n > 1) {
        OPS_LAUNCH(randperm_shuffle_kernel, 1, 1, 0, stream, perm, n, *s);
        OPS_CUDA_CHECK_LAUNCH(op);
    }
    if (!direct) {
        OPS_LAUNCH(store_ints_kernel, grid_for(n), kBlock, 0, stream, perm, n, t->dtype, ops_dtype_size(t->dtype),
                   (char *)ops_tensor_data_ptr(t));
        OPS_CUDA_CHECK_LAUNCH(op);
    }
    return OPS_OK;
}

static ops_status
ops_cuda_multinomial_check(const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                           bool replacement, int64_t *bad_row, int *bad_kind)
{
    const int dev = device_of(p);
    ops_cuda_device_guard g(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    *bad_row = -1;
    *bad_kind = 0;
    device_min first;
    ops_status st = first.init(op, dev, stream);
    if (st != OPS_OK)
        return st;
    OPS_LAUNCH(multinomial_check_kernel, grid_for(rows), kBlock, 0, stream, (const char *)ops_tensor_data_ptr(p),
               p->dtype, ops_dtype_size(p->dtype), rows, ncat, num_samples, replacement, first.ptr());
    OPS_CUDA_CHECK_LAUNCH(op);
    unsigned long long v;
    if ((st = read_back(op, &v, first.ptr(), sizeof v, stream)) != OPS_OK || v == ~0ull)
        return st;
    *bad_row = (int64_t)(v / 4);
    *bad_kind = (int)(v % 4);
    return OPS_OK;
}

static ops_status
ops_cuda_multinomial(const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                     bool replacement, const ops_philox_stream *s, ops_tensor *work, ops_tensor *r)
{
    const int dev = device_of(p);
    ops_cuda_device_guard g(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    const char *pd = (const char *)ops_tensor_data_ptr(p);
    const size_t is = ops_dtype_size(p->dtype);
    double *w = (double *)ops_tensor_data_ptr(work);
    int64_t *res = (int64_t *)ops_tensor_data_ptr(r);
    if (replacement) {
        OPS_LAUNCH(multinomial_cdf_kernel, grid_for(rows), kBlock, 0, stream, pd, p->dtype, is, rows, ncat, w);
        OPS_LAUNCH(multinomial_sample_kernel, grid_for(rows * num_samples), kBlock, 0, stream, w, rows, ncat,
                   num_samples, *s, res);
    } else {
        /* sort every row's keys (a bitonic network: (log2 m)(log2 m + 1)/2 launches,
         * each over rows * m entries) and take the first num_samples */
        const int64_t m = ops_cuda_multinomial_row_pad(ncat);
        int64_t *idx = (int64_t *)(w + rows * m);
        OPS_LAUNCH(multinomial_keys_kernel, grid_for(rows * m), kBlock, 0, stream, pd, p->dtype, is, rows, ncat, m,
                   *s, w, idx);
        OPS_CUDA_CHECK_LAUNCH(op);
        for (int64_t k = 2; k <= m; k <<= 1) {
            for (int64_t j = k >> 1; j > 0; j >>= 1) {
                OPS_LAUNCH(bitonic_step_kernel, grid_for(rows * m), kBlock, 0, stream, w, idx, rows, m, k, j);
                OPS_CUDA_CHECK_LAUNCH(op);
            }
        }
        OPS_LAUNCH(multinomial_take_kernel, grid_for(rows * num_samples), kBlock, 0, stream, idx, rows, m,
                   num_samples, res);
    }
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

static int64_t
ops_cuda_multinomial_row_pad(int64_t ncat)
{
    int64_t m = 1;
    while (m < ncat)
        m <<= 1;
    return m;
}

static int64_t
ops_cuda_multinomial_work(int64_t rows, int64_t ncat, bool replacement)
{
    return replacement ? rows * ncat : 2 * rows * ops_cuda_multinomial_row_pad(ncat);
}

static ops_status
ops_cuda_dropout(const char *op, const ops_tensor *in, ops_tensor *out, ops_tensor *mask, double p,
                 const ops_philox_stream *s)
{
    const int dev = device_of(in);
    ops_cuda_device_guard g(dev);
    const int64_t n = ops_tensor_numel(in);
    if (n == 0)
        return OPS_OK;
    const double q = 1.0 - p;
    const double scale = p < 1.0 ? 1.0 / q : 0.0;
    ops_philox_stream none = {{0, 0}, 0};
    OPS_LAUNCH(dropout_kernel, grid_for((n + 3) / 4), kBlock, 0, ops_cuda_current_stream(dev), strided_of(in), n,
               (char *)ops_tensor_data_ptr(out), mask != nullptr ? (bool *)ops_tensor_data_ptr(mask) : nullptr,
               s != nullptr, q, scale, s != nullptr ? *s : none);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- the stub loops of kernels/random.h: each reserves its range of the
 * generator after what it allocates, as the CPU loops do ------------------------------- */

OPS_REGISTER_STUB(random_fill, CUDA, random_fill_cuda);
OPS_REGISTER_STUB(random_bernoulli_find_invalid, CUDA, random_bernoulli_find_invalid_cuda);
OPS_REGISTER_STUB(random_randperm_fill, CUDA, random_randperm_fill_cuda);
OPS_REGISTER_STUB(random_multinomial_check, CUDA, random_multinomial_check_cuda);
OPS_REGISTER_STUB(random_multinomial_draw, CUDA, random_multinomial_draw_cuda);
OPS_REGISTER_STUB(random_dropout_fill, CUDA, random_dropout_fill_cuda);

ops_status
random_fill_cuda(const char *op, ops_tensor *t, const ops_rand_dist *d, ops_generator *gen, const ops_tensor *p)
{
    ops_philox_stream s;
    ops_generator_reserve(gen, ops_philox_blocks_for(ops_tensor_numel(t), d->k), &s);
    return ops_cuda_random_fill(op, t, d, &s, p);
}

ops_status
random_bernoulli_find_invalid_cuda(const char *op, const ops_tensor *p, int64_t *index, double *value)
{
    return ops_cuda_bernoulli_find_invalid(op, p, index, value);
}

/* Other dtypes than int64 shuffle an int64 scratch, allocated before the generator is
 * touched; n == 1 is [0] with no draw. */
ops_status
random_randperm_fill_cuda(const char *op, ops_tensor *t, int64_t n, ops_generator *gen)
{
    ops_philox_stream s;
    ops_status st = OPS_OK;
    ops_tensor *scratch = NULL;
    if (n > 1 && t->dtype != OPS_INT64) {
        scratch = ops_tensor_new(op, 1, &n, NULL, OPS_INT64, t->storage->device);
        st = scratch != NULL ? OPS_OK : ops_last_status();
    }
    if (st == OPS_OK && n > 1)
        ops_generator_reserve(gen, ops_philox_blocks_for(n - 1, 2), &s);
    if (st == OPS_OK && n > 0)
        st = ops_cuda_randperm(op, t, n, &s, scratch);
    ops_tensor_release(scratch);
    return st;
}

ops_status
random_multinomial_check_cuda(const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                              bool replacement, int64_t *bad_row, int *bad_kind)
{
    return ops_cuda_multinomial_check(op, p, rows, ncat, num_samples, replacement, bad_row, bad_kind);
}

/* Every row's cumulative sums or keys, as doubles, allocated before the generator is
 * touched. */
ops_status
random_multinomial_draw_cuda(const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                             bool replacement, ops_generator *gen, ops_tensor *r)
{
    const int64_t total = ops_cuda_multinomial_work(rows, ncat, replacement);
    ops_tensor *dwork = ops_tensor_new(op, 1, &total, NULL, OPS_FLOAT64, p->storage->device);
    if (dwork == NULL)
        return ops_last_status();
    ops_philox_stream s;
    /* two words (one 53-bit uniform) per sample with replacement, per category without */
    const int64_t per_row = replacement ? num_samples : ncat;
    ops_generator_reserve(gen, ops_philox_blocks_for(rows * per_row, 2), &s);
    const ops_status st = ops_cuda_multinomial(op, p, rows, ncat, num_samples, replacement, &s, dwork, r);
    ops_tensor_release(dwork);
    return st;
}

ops_status
random_dropout_fill_cuda(const char *op, const ops_tensor *in, ops_tensor *out, ops_tensor *mask, double p,
                         ops_generator *gen)
{
    ops_philox_stream s;
    if (gen != NULL)
        ops_generator_reserve(gen, ops_philox_blocks_for(ops_tensor_numel(in), 1), &s);
    return ops_cuda_dropout(op, in, out, mask, p, gen != NULL ? &s : NULL);
}

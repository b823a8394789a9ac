/* Linear algebra (CUDA loops): the executor of a checked batched GEMM (the stub
 * linalg_gemm of kernels/linalg.h), for mm, bmm, mv, dot, vdot, addmm, addmv, baddbmm,
 * addbmm, matmul and linear, whose one driver (kernels/linalg.c) checks them and
 * describes each as one batched GEMM.  Here:
 *  - float32/float64 go to cublas{S,D}gemm, float16/bfloat16 to cublasGemmEx with
 *    float compute (CUBLAS_COMPUTE_32F), alpha/beta in the compute type;
 *  - cuBLAS is column-major: a row-major C = A B is computed as C^T = B^T A^T, and an
 *    operand stored column-major is the transpose of a row-major one, so every layout
 *    with one unit stride is read in place (ops_la_blas_layout picks transpose and
 *    leading dim); other operands are packed by a copy kernel first;
 *  - batches go to cublas*StridedBatched over the innermost batch dim (after merging
 *    batch dims whose strides chain), looping over the outer ones; addbmm packs its
 *    batches side by side along K and runs one GEMM (one rounding, as the CPU), or,
 *    past int K, one GEMM per batch accumulating with beta = 1;
 *  - integers, k == 0 and sizes past cuBLAS's int use a tiled kernel of ours with the
 *    CPU loop's accumulation (uint64_t for integers: exact wrap-around; float for
 *    float16/bfloat16), so alpha/beta semantics match the CPU exactly;
 *  - TF32 for float32 only when ops_cuda_set_allow_tf32(true) (PyTorch's default off).
 * One cuBLAS handle per device, created on first use under a lock and kept for the
 * process's life (destroying it at exit can race the driver's own teardown). */
#include <mutex>
#include <type_traits>

#include "cuda_common.h"
#include "ops_cuda_launch.h"
#include "ops_dispatch.h"

#include "kernels/linalg.h"
#include "linalg_cuda.h"
#include "ops_cuda_backend.h"

/* ---- cuBLAS handles and the TF32 switch ----------------------------------------------- */

static std::mutex la_handle_mutex;
static cublasHandle_t la_handles[OPS_CUDA_MAX_DEVICES];
static bool la_tf32_allowed = false; /* read and written under la_handle_mutex */

/* The handle of cuda:dev (current), bound to the current stream, with the math mode
 * the TF32 switch asks for. */
static ops_status
la_cublas(const char *op, int dev, cublasHandle_t *out)
{
    bool tf32;
    {
        std::lock_guard<std::mutex> lock(la_handle_mutex);
        if (la_handles[dev] == NULL) {
            const cublasStatus_t cs = cublasCreate(&la_handles[dev]);
            if (cs != CUBLAS_STATUS_SUCCESS) {
                la_handles[dev] = NULL;
                return ops_cublas_fail(op, "cublasCreate", cs);
            }
        }
        *out = la_handles[dev];
        tf32 = la_tf32_allowed;
    }
    cublasStatus_t cs = cublasSetStream(*out, ops_cuda_current_stream(dev));
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasSetMathMode(*out, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    return cs == CUBLAS_STATUS_SUCCESS ? OPS_OK : ops_cublas_fail(op, "cublasSetStream/cublasSetMathMode", cs);
}

extern "C" ops_status
linalg_cuda_set_allow_tf32(bool allow)
{
    std::lock_guard<std::mutex> lock(la_handle_mutex);
    la_tf32_allowed = allow;
    return OPS_OK;
}

extern "C" bool
linalg_cuda_allow_tf32(void)
{
    std::lock_guard<std::mutex> lock(la_handle_mutex);
    return la_tf32_allowed;
}

/* ---- device kernels ------------------------------------------------------------------- */

#define LA_BLOCK_1D 256
#define LA_MAX_GRID 65535
#define LA_TILE 16

/* The accumulation type of the loop kernel, as the CPU's: uint64_t for integers
 * (products and sums wrap exactly as the narrow type's would, without signed
 * overflow), float for float16/bfloat16, the type itself otherwise. */
template <typename T> struct la_acc {
    static constexpr bool integral = std::is_integral<T>::value;
    typedef typename std::conditional<integral, uint64_t, typename ops_opmath<T>::type>::type type;
};

template <typename T>
OPS_HOST_DEVICE inline typename la_acc<T>::type
la_load(const T *p)
{
    if constexpr (la_acc<T>::integral)
        return (uint64_t)(int64_t)*p;
    else
        return ops_load(p);
}

template <typename T>
OPS_HOST_DEVICE inline void
la_store(T *p, typename la_acc<T>::type v)
{
    if constexpr (la_acc<T>::integral)
        *p = (T)(int64_t)v;
    else
        ops_store(p, v);
}

/* d = s for nb matrices of rows x cols (batch b at g's batch offsets), elements of
 * sizeof(U) bytes moved as U. */
template <typename U>
__global__ void
la_copy_kernel(ops_gemm_desc g, ops_la_operand d, ops_la_operand s, int64_t rows, int64_t cols, int64_t total)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = e % cols, r = e / cols, i = r % rows, b = r / rows;
        ((U *)d.data)[ops_la_batch_offset(&g, d.bst, b) + i * d.rs + j * d.cs] =
            ((const U *)s.data)[ops_la_batch_offset(&g, s.bst, b) + i * s.rs + j * s.cs];
    }
}

/* C = alpha * A @ B (+ beta * S) with every operand read at its strides: one
 * LA_TILE x LA_TILE block of C per thread block, A and B staged in shared memory a
 * tile of K at a time.  blockIdx.z (grid-stride) walks the result matrices; addbmm
 * (sum_batch) sums every batch into its one result.  Loop bounds are uniform in a
 * block, so every thread reaches each __syncthreads. */
template <typename T>
__global__ void
la_loop_kernel(ops_gemm_desc g, typename la_acc<T>::type alpha, typename la_acc<T>::type beta, int64_t tiles_n,
               int64_t ntiles, int64_t nbc)
{
    typedef typename la_acc<T>::type acc_t;
    __shared__ acc_t as[LA_TILE][LA_TILE + 1];
    __shared__ acc_t bs[LA_TILE][LA_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t bz = blockIdx.z; bz < nbc; bz += gridDim.z) {
        for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
            const int64_t i = (t / tiles_n) * LA_TILE + ty, j = (t % tiles_n) * LA_TILE + tx;
            const int64_t b0 = g.sum_batch ? 0 : bz, b1 = g.sum_batch ? g.nbatch : bz + 1;
            acc_t sum = 0;
            for (int64_t bb = b0; bb < b1; bb++) {
                const T *A = (const T *)g.a.data + ops_la_batch_offset(&g, g.a.bst, bb);
                const T *B = (const T *)g.b.data + ops_la_batch_offset(&g, g.b.bst, bb);
                for (int64_t k0 = 0; k0 < g.k; k0 += LA_TILE) {
                    as[ty][tx] = i < g.m && k0 + tx < g.k ? la_load(A + i * g.a.rs + (k0 + tx) * g.a.cs) : acc_t(0);
                    bs[ty][tx] = k0 + ty < g.k && j < g.n ? la_load(B + (k0 + ty) * g.b.rs + j * g.b.cs) : acc_t(0);
                    __syncthreads();
                    for (int kk = 0; kk < LA_TILE; kk++)
                        sum += as[ty][kk] * bs[kk][tx];
                    __syncthreads();
                }
            }
            if (i < g.m && j < g.n) {
                acc_t v = alpha * sum;
                if (g.has_s)
                    v += beta * la_load((const T *)g.s.data + ops_la_batch_offset(&g, g.s.bst, bz) + i * g.s.rs +
                                        j * g.s.cs);
                la_store((T *)g.c.data + ops_la_batch_offset(&g, g.c.bst, bz) + i * g.c.rs + j * g.c.cs, v);
            }
        }
    }
}

/* ---- host helpers --------------------------------------------------------------------- */

/* d = s over nb rows x cols matrices of g's dtype. */
static ops_status
la_copy(const char *op, int dev, const ops_gemm_desc *g, int64_t nb, int64_t rows, int64_t cols,
        const ops_la_operand *d, const ops_la_operand *s)
{
    const int64_t total = nb * rows * cols;
    if (total == 0)
        return OPS_OK;
    const ops_launch_config c = ops_launch_config_1d(total, LA_BLOCK_1D, 1, LA_MAX_GRID);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    switch (ops_dtype_itemsize(g->dt)) {
    case 1: OPS_LAUNCH(la_copy_kernel<uint8_t>, c.grid, c.block, 0, stream, *g, *d, *s, rows, cols, total); break;
    case 2: OPS_LAUNCH(la_copy_kernel<uint16_t>, c.grid, c.block, 0, stream, *g, *d, *s, rows, cols, total); break;
    case 4: OPS_LAUNCH(la_copy_kernel<uint32_t>, c.grid, c.block, 0, stream, *g, *d, *s, rows, cols, total); break;
    default: OPS_LAUNCH(la_copy_kernel<uint64_t>, c.grid, c.block, 0, stream, *g, *d, *s, rows, cols, total); break;
    }
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

template <typename T>
static ops_status
la_loop_launch(const ops_gemm_desc *g, int dev, int64_t nbc)
{
    typedef typename la_acc<T>::type acc_t;
    acc_t alpha, beta;
    if constexpr (la_acc<T>::integral) {
        alpha = (uint64_t)ops_scalar_to_int64(g->alpha);
        beta = (uint64_t)ops_scalar_to_int64(g->beta);
    } else {
        alpha = (acc_t)ops_scalar_to_double(g->alpha);
        beta = (acc_t)ops_scalar_to_double(g->beta);
    }
    const int64_t tiles_m = (g->m + LA_TILE - 1) / LA_TILE, tiles_n = (g->n + LA_TILE - 1) / LA_TILE;
    const int64_t ntiles = tiles_m * tiles_n;
    const dim3 grid((unsigned)(ntiles < INT_MAX ? ntiles : INT_MAX), 1,
                    (unsigned)(nbc < LA_MAX_GRID ? nbc : LA_MAX_GRID));
    OPS_LAUNCH_COOP(la_loop_kernel<T>, grid, dim3(LA_TILE, LA_TILE), 0, ops_cuda_current_stream(dev), *g, alpha,
                    beta, tiles_n, ntiles, nbc);
    OPS_CUDA_CHECK_LAUNCH(g->op);
    return OPS_OK;
}

static ops_status
la_run_loop(const ops_gemm_desc *g, int dev, int64_t nbc)
{
    switch (g->dt) {
    case OPS_UINT8: return la_loop_launch<uint8_t>(g, dev, nbc);
    case OPS_INT8: return la_loop_launch<int8_t>(g, dev, nbc);
    case OPS_INT16: return la_loop_launch<int16_t>(g, dev, nbc);
    case OPS_INT32: return la_loop_launch<int32_t>(g, dev, nbc);
    case OPS_INT64: return la_loop_launch<int64_t>(g, dev, nbc);
    case OPS_FLOAT16: return la_loop_launch<ops_half>(g, dev, nbc);
    case OPS_BFLOAT16: return la_loop_launch<ops_bfloat16>(g, dev, nbc);
    case OPS_FLOAT32: return la_loop_launch<float>(g, dev, nbc);
    case OPS_FLOAT64: return la_loop_launch<double>(g, dev, nbc);
    default: /* refused by the checks before */
        return ops_fail(OPS_ERR_DTYPE, "%s: dtype %s is not supported", g->op, ops_dtype_name(g->dt));
    }
}

/* One (strided-batched) cuBLAS call for count products of g's shape at the given
 * element offsets; every operand BLAS-addressable. */
static ops_status
la_cublas_gemm(cublasHandle_t h, const ops_gemm_desc *g, int64_t aoff, int64_t boff, int64_t coff, int64_t sa,
               int64_t sb, int64_t sc, int count, double alpha, double beta)
{
    bool ta = false, tb = false, tc = false;
    int lda = 1, ldb = 1, ldc = 1;
    ops_la_blas_layout(g->m, g->k, g->a.rs, g->a.cs, &ta, &lda);
    ops_la_blas_layout(g->k, g->n, g->b.rs, g->b.cs, &tb, &ldb);
    ops_la_blas_layout(g->m, g->n, g->c.rs, g->c.cs, &tc, &ldc);
    const size_t isz = ops_dtype_itemsize(g->dt);
    const char *A = g->a.data + aoff * (int64_t)isz, *B = g->b.data + boff * (int64_t)isz;
    char *C = g->c.data + coff * (int64_t)isz;
    /* column-major C^T (n x m) = B^T A^T when C is row-major; C = A B when it is
     * column-major.  A row-major operand is its transpose in column-major. */
    const void *X, *Y;
    int ldx, ldy, rows, cols;
    long long sx, sy;
    cublasOperation_t ox, oy;
    if (!tc) {
        X = B, ldx = ldb, sx = sb, ox = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        Y = A, ldy = lda, sy = sa, oy = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
        rows = (int)g->n, cols = (int)g->m;
    } else {
        X = A, ldx = lda, sx = sa, ox = ta ? CUBLAS_OP_N : CUBLAS_OP_T;
        Y = B, ldy = ldb, sy = sb, oy = tb ? CUBLAS_OP_N : CUBLAS_OP_T;
        rows = (int)g->m, cols = (int)g->n;
    }
    const int k = (int)g->k;
    cublasStatus_t cs;
    if (g->dt == OPS_FLOAT64) {
        cs = count == 1 ? cublasDgemm(h, ox, oy, rows, cols, k, &alpha, (const double *)X, ldx, (const double *)Y, ldy,
                                      &beta, (double *)C, ldc)
                        : cublasDgemmStridedBatched(h, ox, oy, rows, cols, k, &alpha, (const double *)X, ldx, sx,
                                                    (const double *)Y, ldy, sy, &beta, (double *)C, ldc, sc, count);
    } else if (g->dt == OPS_FLOAT32) {
        const float af = (float)alpha, bf = (float)beta;
        cs = count == 1 ? cublasSgemm(h, ox, oy, rows, cols, k, &af, (const float *)X, ldx, (const float *)Y, ldy, &bf,
                                      (float *)C, ldc)
                        : cublasSgemmStridedBatched(h, ox, oy, rows, cols, k, &af, (const float *)X, ldx, sx,
                                                    (const float *)Y, ldy, sy, &bf, (float *)C, ldc, sc, count);
    } else {
        /* float16/bfloat16 in memory, float arithmetic (the CPU loop's accumulation) */
        const cudaDataType_t t = g->dt == OPS_FLOAT16 ? CUDA_R_16F : CUDA_R_16BF;
        const float af = (float)alpha, bf = (float)beta;
        cs = count == 1 ? cublasGemmEx(h, ox, oy, rows, cols, k, &af, X, t, ldx, Y, t, ldy, &bf, C, t, ldc,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
                        : cublasGemmStridedBatchedEx(h, ox, oy, rows, cols, k, &af, X, t, ldx, sx, Y, t, ldy, sy, &bf,
                                                     C, t, ldc, sc, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    return cs == CUBLAS_STATUS_SUCCESS ? OPS_OK : ops_cublas_fail(g->op, "cuBLAS gemm", cs);
}

/* Merges adjacent batch dims whose strides chain in A, B and C (one strided batch
 * covers them). */
static void
la_merge_batch_dims(ops_gemm_desc *f)
{
    for (int d = f->nbd - 1; d > 0; d--) {
        const ops_la_operand *ops_[3] = {&f->a, &f->b, &f->c};
        bool chain = true;
        for (int o = 0; o < 3; o++)
            chain = chain && ops_[o]->bst[d - 1] == ops_[o]->bst[d] * f->bsz[d];
        if (!chain)
            continue;
        f->bsz[d - 1] *= f->bsz[d];
        f->a.bst[d - 1] = f->a.bst[d], f->b.bst[d - 1] = f->b.bst[d], f->c.bst[d - 1] = f->c.bst[d];
        for (int e = d; e + 1 < f->nbd; e++) {
            f->bsz[e] = f->bsz[e + 1];
            f->a.bst[e] = f->a.bst[e + 1], f->b.bst[e] = f->b.bst[e + 1], f->c.bst[e] = f->c.bst[e + 1];
        }
        f->nbd--;
    }
}

/* C = alpha * A @ B + beta * C on every batch of f (C already holds self or
 * anything when beta is 0: cuBLAS does not read C then).  Integer dtypes, which
 * cuBLAS has no GEMM for (the integer convolutions), take the tiled loop kernel with
 * C as its S: each output element reads its own C before writing it. */
ops_status
ops_cuda_gemm_run(ops_gemm_desc *f, int dev)
{
    if (ops_dtype_is_integral(f->dt, false)) {
        ops_gemm_desc g = *f;
        if (g.has_s)
            g.s = g.c;
        return la_run_loop(&g, dev, g.sum_batch ? 1 : g.nbatch);
    }
    cublasHandle_t h = NULL;
    ops_status st = la_cublas(f->op, dev, &h);
    if (st != OPS_OK)
        return st;
    const double alpha = ops_scalar_to_double(f->alpha), beta = f->has_s ? ops_scalar_to_double(f->beta) : 0.0;
    if (f->sum_batch) {
        for (int64_t bt = 0; bt < f->nbatch && st == OPS_OK; bt++)
            st = la_cublas_gemm(h, f, ops_la_batch_offset(f, f->a.bst, bt), ops_la_batch_offset(f, f->b.bst, bt), 0, 0,
                                0, 0, 1, alpha, bt > 0 ? 1.0 : beta);
        return st;
    }
    la_merge_batch_dims(f);
    /* the innermost batch dim is one strided batch; the outer ones a loop */
    const int inner = f->nbd - 1;
    const int64_t count = f->nbd > 0 ? f->bsz[inner] : 1;
    const int64_t sa = f->nbd > 0 ? f->a.bst[inner] : 0, sb = f->nbd > 0 ? f->b.bst[inner] : 0,
                  sc = f->nbd > 0 ? f->c.bst[inner] : 0;
    ops_gemm_desc outer = *f;
    outer.nbd = f->nbd > 0 ? f->nbd - 1 : 0;
    outer.nbatch = f->nbatch / count;
    for (int64_t ob = 0; ob < outer.nbatch && st == OPS_OK; ob++) {
        const int64_t ao = ops_la_batch_offset(&outer, f->a.bst, ob), bo = ops_la_batch_offset(&outer, f->b.bst, ob),
                      co = ops_la_batch_offset(&outer, f->c.bst, ob);
        for (int64_t i0 = 0; i0 < count && st == OPS_OK; i0 += INT_MAX) {
            const int64_t cnt = count - i0 < INT_MAX ? count - i0 : INT_MAX;
            st = la_cublas_gemm(h, f, ao + i0 * sa, bo + i0 * sb, co + i0 * sc, sa, sb, sc, (int)cnt, alpha, beta);
        }
    }
    return st;
}

/* A device work buffer of n elements of dt (released by the caller). */
static ops_status
la_buffer(const char *op, int dev, ops_dtype dt, int64_t n, ops_tensor **t)
{
    *t = ops_tensor_new(op, 1, &n, NULL, dt, OPS_DEVICE_CUDA(dev));
    return *t != NULL ? OPS_OK : ops_last_status();
}

/* ---- the CUDA executor ---------------------------------------------------------------- */

OPS_REGISTER_STUB(linalg_gemm, CUDA, linalg_gemm_cuda);

/* The CPU's plan, device buffers for what cuBLAS cannot read, out written only once
 * every buffer exists. */
ops_status
linalg_gemm_cuda(ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t, const ops_tensor *self,
                 ops_tensor *out, int rnd, const int64_t *rsz, const int *cmap, ops_tensor **result)
{
    const char *op = g->op;
    const int dev = ops_tensor_device(a_t).index;
    ops_status st = ops_cuda_check_device(op, dev);
    if (st != OPS_OK)
        return st;
    ops_cuda_device_guard guard(dev);
    const bool blas_dt =
        g->dt == OPS_FLOAT32 || g->dt == OPS_FLOAT64 || g->dt == OPS_FLOAT16 || g->dt == OPS_BFLOAT16;
    ops_gemm_plan p;
    if ((st = ops_gemm_plan_make(g, a_t, b_t, self, out, rnd, rsz, cmap, blas_dt, &p)) != OPS_OK)
        return st;

    /* addbmm: the batches side by side along K ([A_0 .. A_B-1] @ [B_0; ..; B_B-1]), one
     * GEMM that sums them in its float accumulator and rounds once, as the CPU does
     * (a GEMM per batch would round float16/bfloat16 sums at every batch) */
    const bool cat = p.blas && g->sum_batch && g->nbatch > 1 && g->nbatch * g->k <= INT_MAX;
    ops_tensor *pack_a = NULL, *pack_b = NULL, *tmp_c = NULL, *fresh = NULL;
    if (((p.pack_a || cat) && (st = la_buffer(op, dev, g->dt, g->nbatch * g->m * g->k, &pack_a)) != OPS_OK) ||
        ((p.pack_b || cat) && (st = la_buffer(op, dev, g->dt, g->nbatch * g->k * g->n, &pack_b)) != OPS_OK) ||
        (p.tmp_c && (st = la_buffer(op, dev, g->dt, p.nbc * g->m * g->n, &tmp_c)) != OPS_OK))
        goto done;
    if (out == NULL) {
        if ((fresh = ops_tensor_new(op, rnd, rsz, NULL, g->dt, OPS_DEVICE_CUDA(dev))) == NULL) {
            st = ops_last_status();
            goto done;
        }
    } else if (p.resize && (st = ops_tensor_resize_(op, out, rnd, rsz)) != OPS_OK) {
        goto done;
    }
    if (!p.empty) {
        ops_tensor *dst = fresh != NULL ? fresh : out;
        if (pack_a) {
            ops_la_operand q = {};
            if (cat) /* A_b at columns b * k .. of one m x (B * k) matrix */
                q.data = (char *)ops_tensor_data_ptr(pack_a), q.bst[0] = g->k, q.rs = g->nbatch * g->k, q.cs = 1;
            else
                ops_la_contiguous_operand(g, true, g->m, g->k, (char *)ops_tensor_data_ptr(pack_a), &q);
            if ((st = la_copy(op, dev, g, g->nbatch, g->m, g->k, &q, &g->a)) != OPS_OK)
                goto done;
            g->a = q;
        }
        if (pack_b) {
            ops_la_operand q = {};
            if (cat) /* B_b at rows b * k .. of one (B * k) x n matrix */
                q.data = (char *)ops_tensor_data_ptr(pack_b), q.bst[0] = g->k * g->n, q.rs = g->n, q.cs = 1;
            else
                ops_la_contiguous_operand(g, true, g->k, g->n, (char *)ops_tensor_data_ptr(pack_b), &q);
            if ((st = la_copy(op, dev, g, g->nbatch, g->k, g->n, &q, &g->b)) != OPS_OK)
                goto done;
            g->b = q;
        }
        ops_la_operand oc;
        ops_gemm_bind(g, &p, cmap, dst, tmp_c != NULL ? (char *)ops_tensor_data_ptr(tmp_c) : NULL, self, &oc);
        if (cat) { /* after the bind, which maps the result through the batch dims */
            g->k *= g->nbatch;
            g->nbd = 0;
            g->nbatch = 1;
            g->sum_batch = false;
        }
        if (!p.blas) {
            st = la_run_loop(g, dev, p.nbc);
        } else {
            /* C starts as self, scaled by cuBLAS's beta; without self beta is 0 and
             * cuBLAS does not read C (a NaN left in out does not leak) */
            if (g->has_s && !(tmp_c == NULL && ops_la_same_view(self, dst)))
                st = la_copy(op, dev, g, p.nbc, g->m, g->n, &g->c, &g->s);
            ops_gemm_desc f = *g; /* folded for cuBLAS only: the copy into out below uses g */
            ops_la_fold_batches(&f);
            if (st == OPS_OK)
                st = ops_cuda_gemm_run(&f, dev);
        }
        if (st == OPS_OK && tmp_c != NULL)
            st = la_copy(op, dev, g, p.nbc, g->m, g->n, &oc, &g->c);
        if (st != OPS_OK)
            goto done;
    }
    if (fresh == NULL)
        ops_tensor_bump_version(out);
    if (result)
        *result = fresh;
    fresh = NULL;
done:
    ops_tensor_release(pack_a);
    ops_tensor_release(pack_b);
    ops_tensor_release(tmp_c);
    ops_tensor_release(fresh);
    return st;
}

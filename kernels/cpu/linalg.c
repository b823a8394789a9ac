/* Linear algebra (CPU): mm, bmm, mv, dot, vdot, outer, addmm, addmv, baddbmm, addbmm,
 * matmul, linear; nuclear_norm and _linalg_polar (a Jacobi SVD, at the end).
 *
 * Every product is described once, as a batched GEMM (ops_gemm_desc): batch dims, M, N, K
 * and, per operand, batch strides plus row and column strides, all read in place
 * (a vector is a matrix with a size-1 dim, a broadcast batch dim has stride 0).
 * float32/float64 go to OpenBLAS (cblas_?gemm, ?gemv, ?dot) with the transpose flags
 * and leading dimensions taken from the strides, so transposed and sliced operands are
 * read without a copy; only an operand the BLAS cannot address (a zero or negative
 * stride, no unit stride) is packed first.  The other dtypes use a blocked loop that
 * accumulates in float (float16, bfloat16) or, for integers, in uint64_t: products
 * and sums then wrap exactly as the narrow type's would, without signed overflow.
 *
 * The argument checks, the GEMM description and the plan (what to pack, where C goes)
 * are shared with the CUDA kernels (kernels/linalg_common.h): the ops_la_* functions
 * take the backend's executor, gemm_exec here. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "ops_dispatch.h"
#include "ops_functions_binary.h"
#include "ops_functions_core.h"
#include "ops_kernels_linalg.h"
#include "kernels/linalg_common.h"

/* Output columns one pass of the loop kernel accumulates (kept on the stack). */
#define LA_BLOCK 64

/* ---- the loop kernel (every numeric dtype) ---------------------------------------- */

#ifdef _OPENMP
#define LA_PARALLEL_FOR_ _Pragma("omp parallel for schedule(static) num_threads(la_nt_) if (la_par_)")
#else
#define LA_PARALLEL_FOR_
#endif

#define LA_LD_INT_(p) ((uint64_t)(int64_t) * (p))
#define LA_ST_INT_(p, v) (*(p) = (__typeof__(*(p)))(int64_t)(v))
#define LA_LD_FP_(p) OPS_LOAD(p)
#define LA_ST_FP_(p, v) OPS_STORE((p), (v))

/* C = alpha * A @ B (+ beta * S), row by row, LA_BLOCK output columns at a time. */
#define LA_DEFINE_LOOP_(NAME, SCALAR, ACC, LD, ST)                                                 \
    static void NAME(const ops_gemm_desc *g, ACC alpha, ACC beta)                                      \
    {                                                                                              \
        const SCALAR *A = (const SCALAR *)g->a.data, *B = (const SCALAR *)g->b.data;               \
        const SCALAR *S = (const SCALAR *)g->s.data;                                               \
        SCALAR *C = (SCALAR *)g->c.data;                                                           \
        const int64_t m = g->m, n = g->n, k = g->k;                                                \
        const int64_t rows = (g->sum_batch ? 1 : g->nbatch) * m;                                   \
        const double work_ = (double)rows * (double)n * (double)(k + 1) *                          \
                             (g->sum_batch ? (double)g->nbatch : 1.0);                             \
        const int la_nt_ = ops_get_num_threads();                                                  \
        const bool la_par_ = rows > 1 && work_ > OPS_GRAIN_SIZE;                                   \
        (void)la_nt_;                                                                              \
        (void)la_par_;                                                                             \
        LA_PARALLEL_FOR_                                                                           \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            const int64_t b = r / m, i = r % m;                                                    \
            const int64_t b0 = g->sum_batch ? 0 : b, b1 = g->sum_batch ? g->nbatch : b + 1;        \
            const int64_t coff = ops_la_batch_offset(g, g->c.bst, b) + i * g->c.rs;                       \
            const int64_t soff = g->has_s ? ops_la_batch_offset(g, g->s.bst, b) + i * g->s.rs : 0;        \
            for (int64_t j0 = 0; j0 < n; j0 += LA_BLOCK) {                                         \
                const int64_t jn = n - j0 < LA_BLOCK ? n - j0 : LA_BLOCK;                          \
                ACC acc[LA_BLOCK];                                                                 \
                for (int64_t jj = 0; jj < jn; jj++)                                                \
                    acc[jj] = 0;                                                                   \
                for (int64_t bb = b0; bb < b1; bb++) {                                             \
                    const SCALAR *ar = A + ops_la_batch_offset(g, g->a.bst, bb) + i * g->a.rs;            \
                    const SCALAR *bm = B + ops_la_batch_offset(g, g->b.bst, bb) + j0 * g->b.cs;           \
                    for (int64_t kk = 0; kk < k; kk++) {                                           \
                        const ACC av = LD(ar + kk * g->a.cs);                                      \
                        const SCALAR *br = bm + kk * g->b.rs;                                      \
                        for (int64_t jj = 0; jj < jn; jj++)                                        \
                            acc[jj] += av * LD(br + jj * g->b.cs);                                 \
                    }                                                                              \
                }                                                                                  \
                for (int64_t jj = 0; jj < jn; jj++) {                                              \
                    ACC v = alpha * acc[jj];                                                       \
                    if (g->has_s)                                                                  \
                        v += beta * LD(S + soff + (j0 + jj) * g->s.cs);                            \
                    ST(C + coff + (j0 + jj) * g->c.cs, v);                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

LA_DEFINE_LOOP_(loop_u8, uint8_t, uint64_t, LA_LD_INT_, LA_ST_INT_)
LA_DEFINE_LOOP_(loop_i8, int8_t, uint64_t, LA_LD_INT_, LA_ST_INT_)
LA_DEFINE_LOOP_(loop_i16, int16_t, uint64_t, LA_LD_INT_, LA_ST_INT_)
LA_DEFINE_LOOP_(loop_i32, int32_t, uint64_t, LA_LD_INT_, LA_ST_INT_)
LA_DEFINE_LOOP_(loop_i64, int64_t, uint64_t, LA_LD_INT_, LA_ST_INT_)
LA_DEFINE_LOOP_(loop_f16, ops_half, float, LA_LD_FP_, LA_ST_FP_)
LA_DEFINE_LOOP_(loop_bf16, ops_bfloat16, float, LA_LD_FP_, LA_ST_FP_)
LA_DEFINE_LOOP_(loop_f32, float, float, LA_LD_FP_, LA_ST_FP_)
LA_DEFINE_LOOP_(loop_f64, double, double, LA_LD_FP_, LA_ST_FP_)

static void
run_loop(const ops_gemm_desc *g)
{
    const uint64_t ia = (uint64_t)ops_scalar_to_int64(g->alpha), ib = (uint64_t)ops_scalar_to_int64(g->beta);
    const double fa = ops_scalar_to_double(g->alpha), fb = ops_scalar_to_double(g->beta);
    switch (g->dt) {
    case OPS_UINT8: loop_u8(g, ia, ib); break;
    case OPS_INT8: loop_i8(g, ia, ib); break;
    case OPS_INT16: loop_i16(g, ia, ib); break;
    case OPS_INT32: loop_i32(g, ia, ib); break;
    case OPS_INT64: loop_i64(g, ia, ib); break;
    case OPS_FLOAT16: loop_f16(g, (float)fa, (float)fb); break;
    case OPS_BFLOAT16: loop_bf16(g, (float)fa, (float)fb); break;
    case OPS_FLOAT32: loop_f32(g, (float)fa, (float)fb); break;
    case OPS_FLOAT64: loop_f64(g, fa, fb); break;
    default: break; /* refused by la_check_dtype before */
    }
}

/* ---- the BLAS path (float32, float64) ---------------------------------------------- */

/* How the BLAS addresses a rows x cols matrix with strides (rs, cs): row-major with
 * leading dimension *ld (trans false), or column-major (trans true).  Strides of
 * size-1 dims do not matter and are normalised.  False when neither fits. */
bool
ops_la_blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int *ld)
{
    if (rows > INT_MAX || cols > INT_MAX)
        return false;
    const int64_t minr = cols > 1 ? cols : 1, minc = rows > 1 ? rows : 1;
    const int64_t r1 = rows <= 1 ? minr : rs, c1 = cols <= 1 ? 1 : cs;
    if (c1 == 1 && r1 >= minr && r1 <= INT_MAX) {
        *trans = false;
        *ld = (int)r1;
        return true;
    }
    const int64_t r2 = rows <= 1 ? 1 : rs, c2 = cols <= 1 ? minc : cs;
    if (r2 == 1 && c2 >= minc && c2 <= INT_MAX) {
        *trans = true;
        *ld = (int)c2;
        return true;
    }
    return false;
}

static void
blas_gemm(ops_dtype dt, enum CBLAS_ORDER order, bool ta, bool tb, int m, int n, int k, double alpha,
          const void *a, int lda, const void *b, int ldb, double beta, void *c, int ldc)
{
    const enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    if (dt == OPS_FLOAT32)
        cblas_sgemm(order, TA, TB, m, n, k, (float)alpha, a, lda, b, ldb, (float)beta, c, ldc);
    else
        cblas_dgemm(order, TA, TB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* y = alpha * op(A) x + beta * y, A stored row-major rows x cols with leading dim lda. */
static void
blas_gemv(ops_dtype dt, bool trans, int rows, int cols, double alpha, const void *a, int lda, const void *x,
          int incx, double beta, void *y, int incy)
{
    const enum CBLAS_TRANSPOSE T = trans ? CblasTrans : CblasNoTrans;
    if (dt == OPS_FLOAT32)
        cblas_sgemv(CblasRowMajor, T, rows, cols, (float)alpha, a, lda, x, incx, (float)beta, y, incy);
    else
        cblas_dgemv(CblasRowMajor, T, rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}

/* One batch: C = alpha * A @ B + beta * C, every operand BLAS-addressable. */
static void
blas_one(const ops_gemm_desc *g, const char *a, const char *b, char *c, double alpha, double beta)
{
    bool ta = false, tb = false, tc = false;
    int lda = 1, ldb = 1, ldc = 1;
    const int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    ops_la_blas_layout(g->m, g->k, g->a.rs, g->a.cs, &ta, &lda);
    ops_la_blas_layout(g->k, g->n, g->b.rs, g->b.cs, &tb, &ldb);
    ops_la_blas_layout(g->m, g->n, g->c.rs, g->c.cs, &tc, &ldc);
    if (m == 1 && n == 1) {
        /* a dot product: the strides of a row (A) and a column (B) */
        const int incx = ta ? lda : 1, incy = tb ? 1 : ldb;
        if (g->dt == OPS_FLOAT32) {
            float *cp = (float *)c;
            const float d = cblas_sdot(k, (const float *)a, incx, (const float *)b, incy);
            *cp = (float)alpha * d + (beta != 0 ? (float)beta * *cp : 0.0f);
        } else {
            double *cp = (double *)c;
            const double d = cblas_ddot(k, (const double *)a, incx, (const double *)b, incy);
            *cp = alpha * d + (beta != 0 ? beta * *cp : 0.0);
        }
    } else if (n == 1) {
        /* matrix @ vector: x is B's column, y is C's */
        const int incx = tb ? 1 : ldb, incy = tc ? 1 : ldc;
        if (!ta)
            blas_gemv(g->dt, false, m, k, alpha, a, lda, b, incx, beta, c, incy);
        else
            blas_gemv(g->dt, true, k, m, alpha, a, lda, b, incx, beta, c, incy);
    } else if (m == 1) {
        /* vector @ matrix: y = B^T x, x is A's row, y is C's */
        const int incx = ta ? lda : 1, incy = tc ? ldc : 1;
        if (!tb)
            blas_gemv(g->dt, true, k, n, alpha, b, ldb, a, incx, beta, c, incy);
        else
            blas_gemv(g->dt, false, n, k, alpha, b, ldb, a, incx, beta, c, incy);
    } else if (!tc) {
        blas_gemm(g->dt, CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else {
        /* C is column-major: a row-major operand is a transposed column-major one */
        blas_gemm(g->dt, CblasColMajor, !ta, !tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
}

/* matmul's (b, m, k) @ (k, n) as one (b * m, k) @ (k, n) product, as PyTorch folds it:
 * innermost batch dims merge into M while B is broadcast over them and A, C (and self)
 * step over them exactly as over their next rows.  BLAS path only, one dim at a time,
 * kept only where A and C stay BLAS-addressable. */
void
ops_la_fold_batches(ops_gemm_desc *g)
{
    while (g->nbd > 0 && !g->sum_batch && g->m > 1) {
        const int d = g->nbd - 1;
        const int64_t sz = g->bsz[d], m = g->m * sz;
        bool tr;
        int ld;
        if (g->b.bst[d] != 0 || g->a.bst[d] != g->m * g->a.rs || g->c.bst[d] != g->m * g->c.rs ||
            (g->has_s && g->s.bst[d] != g->m * g->s.rs) || m > INT_MAX ||
            !ops_la_blas_layout(m, g->k, g->a.rs, g->a.cs, &tr, &ld) ||
            !ops_la_blas_layout(m, g->n, g->c.rs, g->c.cs, &tr, &ld))
            return;
        g->m = m;
        g->nbd--;
        g->nbatch /= sz;
    }
}

static void
run_blas(const ops_gemm_desc *g)
{
    const size_t isz = ops_dtype_itemsize(g->dt);
    const double alpha = ops_scalar_to_double(g->alpha), beta = ops_scalar_to_double(g->beta);
    for (int64_t bt = 0; bt < g->nbatch; bt++) {
        const char *a = g->a.data + ops_la_batch_offset(g, g->a.bst, bt) * (int64_t)isz;
        const char *b = g->b.data + ops_la_batch_offset(g, g->b.bst, bt) * (int64_t)isz;
        char *c = g->c.data + ops_la_batch_offset(g, g->c.bst, bt) * (int64_t)isz;
        /* C holds self (has_s) or zeros: the first product scales it by beta; the
         * next batches of addbmm add to it */
        const double bt_beta = g->sum_batch && bt > 0 ? 1.0 : g->has_s ? beta : 0.0;
        blas_one(g, a, b, c, alpha, bt_beta);
    }
}

/* ---- buffers ----------------------------------------------------------------------- */

/* Copies nbatch rows x cols matrices (strides in elements) between layouts, one dtype. */
static void
copy_mats(const ops_gemm_desc *g, size_t isz, int64_t nbatch, int64_t rows, int64_t cols, const ops_la_operand *d,
          const ops_la_operand *s)
{
    for (int64_t bt = 0; bt < nbatch; bt++) {
        const int64_t db = ops_la_batch_offset(g, d->bst, bt), sb = ops_la_batch_offset(g, s->bst, bt);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                memcpy(d->data + (db + i * d->rs + j * d->cs) * (int64_t)isz,
                       s->data + (sb + i * s->rs + j * s->cs) * (int64_t)isz, isz);
    }
}

/* Zeros nbatch rows x cols matrices of o. */
static void
zero_mats(const ops_gemm_desc *g, size_t isz, int64_t nbatch, int64_t rows, int64_t cols, const ops_la_operand *o)
{
    for (int64_t bt = 0; bt < nbatch; bt++) {
        const int64_t ob = ops_la_batch_offset(g, o->bst, bt);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                memset(o->data + (ob + i * o->rs + j * o->cs) * (int64_t)isz, 0, isz);
    }
}

/* o: a contiguous rows x cols buffer per batch of g (batched) or one for all. */
void
ops_la_contiguous_operand(const ops_gemm_desc *g, bool batched, int64_t rows, int64_t cols, char *data,
                          ops_la_operand *o)
{
    o->data = data;
    o->rs = cols;
    o->cs = 1;
    int64_t st = rows * cols;
    for (int d = g->nbd - 1; d >= 0; d--) {
        o->bst[d] = batched ? st : 0;
        st *= g->bsz[d];
    }
}

bool
ops_la_same_view(const ops_tensor *a, const ops_tensor *b)
{
    return a->storage == b->storage && a->offset == b->offset && a->ndim == b->ndim &&
           memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof(int64_t)) == 0 &&
           memcmp(a->strides, b->strides, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* ---- checks ------------------------------------------------------------------------ */

static ops_status
la_check_dtype(const char *op, ops_dtype dt)
{
    if (!(OPS_MASK_NUMERIC & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, OPS_MASK_NUMERIC);
    return OPS_OK;
}

/* PyTorch refuses float beta/alpha for integer tensors. */
static ops_status
la_check_scalars(const char *op, ops_dtype dt, ops_scalar beta, ops_scalar alpha)
{
    if (ops_dtype_is_floating(dt))
        return OPS_OK;
    if (beta.kind == OPS_SCALAR_FLOAT)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: For integral input tensors, argument beta must not be a floating point number.", op);
    if (alpha.kind == OPS_SCALAR_FLOAT)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: For integral input tensors, argument alpha must not be a floating point number.", op);
    return OPS_OK;
}

/* self broadcast to the result shape (PyTorch's expand): its strides in result space. */
static ops_status
expand_strides(const char *op, const ops_tensor *self, int rnd, const int64_t *rsz, int64_t *st)
{
    char t1[OPS_SHAPE_STR_LEN], t2[OPS_SHAPE_STR_LEN];
    if (self->ndim > rnd)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: expand(%s, size=%s): the number of sizes provided (%d) must be greater or equal to "
                        "the number of dimensions in the tensor (%d)",
                        op, ops_shape_str(self->ndim, self->sizes, t1, sizeof t1),
                        ops_shape_str(rnd, rsz, t2, sizeof t2), rnd, (int)self->ndim);
    for (int d = 0; d < rnd; d++) {
        const int sd = d - (rnd - self->ndim);
        if (sd < 0) {
            st[d] = 0;
        } else if (self->sizes[sd] == rsz[d]) {
            st[d] = rsz[d] == 1 ? 0 : self->strides[sd];
        } else if (self->sizes[sd] == 1) {
            st[d] = 0;
        } else {
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                            "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                            op, (long long)rsz[d], (long long)self->sizes[sd], d,
                            ops_shape_str(rnd, rsz, t1, sizeof t1),
                            ops_shape_str(self->ndim, self->sizes, t2, sizeof t2));
        }
    }
    return OPS_OK;
}

/* An operand over result-space strides: cmap[d] is the result dim of batch dim d
 * (d < nbd), of M (nbd) and of N (nbd + 1); -1 where the result has no such dim. */
static void
map_operand(const ops_gemm_desc *g, const int *cmap, const int64_t *rst, char *data, ops_la_operand *o)
{
    o->data = data;
    for (int d = 0; d < g->nbd; d++)
        o->bst[d] = cmap[d] >= 0 ? rst[cmap[d]] : 0;
    o->rs = cmap[g->nbd] >= 0 ? rst[cmap[g->nbd]] : 0;
    o->cs = cmap[g->nbd + 1] >= 0 ? rst[cmap[g->nbd + 1]] : 0;
}

/* ---- the plan (shared with the CUDA kernels) ------------------------------------------ */

ops_status
ops_gemm_plan_make(ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t, const ops_tensor *self,
                   const ops_tensor *out, int rnd, const int64_t *rsz, const int *cmap, bool blas_dtype,
                   ops_gemm_plan *p)
{
    const char *op = g->op;
    ops_status st;
    memset(p, 0, sizeof *p);
    g->nbatch = 1;
    for (int d = 0; d < g->nbd; d++)
        g->nbatch *= g->bsz[d];
    if (self != NULL && (st = expand_strides(op, self, rnd, rsz, p->sst)) != OPS_OK)
        return st;
    g->has_s = self != NULL && ops_scalar_to_double(g->beta) != 0;

    if (out != NULL) {
        if (out->dtype != g->dt)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                            ops_dtype_name(g->dt), ops_dtype_name(out->dtype));
        p->resize = out->ndim != rnd || memcmp(out->sizes, rsz, (size_t)rnd * sizeof(int64_t)) != 0;
        if (!p->resize && ops_tensor_has_internal_overlap(out))
            return ops_fail(OPS_ERR_VALUE,
                            "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                            "single memory location. Please clone() the tensor before performing the operation.",
                            op);
    }

    p->empty = g->m == 0 || g->n == 0 || (g->nbatch == 0 && !g->sum_batch);
    p->blas = blas_dtype && !p->empty && g->k > 0 && g->nbatch > 0 && g->m <= INT_MAX && g->n <= INT_MAX &&
              g->k <= INT_MAX;
    bool tr;
    int ld;
    p->pack_a = p->blas && !ops_la_blas_layout(g->m, g->k, g->a.rs, g->a.cs, &tr, &ld);
    p->pack_b = p->blas && !ops_la_blas_layout(g->k, g->n, g->b.rs, g->b.cs, &tr, &ld);
    p->nbc = g->sum_batch ? 1 : g->nbatch;

    /* where C goes: straight into out, or a buffer copied into out at the end */
    if (out != NULL && !p->empty) {
        if (p->resize) {
            p->tmp_c = ops_tensor_shares_storage(out, a_t) || ops_tensor_shares_storage(out, b_t) ||
                       (self != NULL && ops_tensor_shares_storage(out, self));
        } else {
            ops_la_operand oc;
            map_operand(g, cmap, out->strides, NULL, &oc);
            p->tmp_c = ops_tensor_may_overlap(out, a_t) || ops_tensor_may_overlap(out, b_t) ||
                       (g->has_s && !ops_la_same_view(self, out) && ops_tensor_may_overlap(out, self)) ||
                       (p->blas && !ops_la_blas_layout(g->m, g->n, oc.rs, oc.cs, &tr, &ld));
        }
    }
    return OPS_OK;
}

void
ops_gemm_bind(ops_gemm_desc *g, const ops_gemm_plan *p, const int *cmap, ops_tensor *dst, char *tmp,
              const ops_tensor *self, ops_la_operand *oc)
{
    map_operand(g, cmap, dst->strides, (char *)ops_tensor_data_ptr(dst), oc);
    if (tmp)
        ops_la_contiguous_operand(g, !g->sum_batch, g->m, g->n, tmp, &g->c);
    else
        g->c = *oc;
    if (self != NULL)
        map_operand(g, cmap, p->sst, (char *)ops_tensor_data_ptr(self), &g->s);
}

/* ---- the CPU driver ------------------------------------------------------------------ */

/* The CPU's ops_gemm_exec_fn: packs what the BLAS cannot read into host buffers and
 * writes out only once nothing can fail. */
static ops_status
gemm_exec(ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t, const ops_tensor *self, ops_tensor *out,
          int rnd, const int64_t *rsz, const int *cmap, ops_tensor **result)
{
    const char *op = g->op;
    const size_t isz = ops_dtype_itemsize(g->dt);
    char *pack_a = NULL, *pack_b = NULL, *tmp_c = NULL;
    ops_tensor *fresh = NULL;
    ops_gemm_plan p;
    ops_status st = ops_gemm_plan_make(g, a_t, b_t, self, out, rnd, rsz, cmap,
                                       g->dt == OPS_FLOAT32 || g->dt == OPS_FLOAT64, &p);
    if (st != OPS_OK)
        return st;

    int64_t na, nb, nc;
    if (p.pack_a && (ops_mul3_overflow_i64(g->nbatch, g->m, g->k, &na) || !(pack_a = ops_host_malloc_array(na, isz))))
        goto oom;
    if (p.pack_b && (ops_mul3_overflow_i64(g->nbatch, g->k, g->n, &nb) || !(pack_b = ops_host_malloc_array(nb, isz))))
        goto oom;
    if (p.tmp_c && (ops_mul3_overflow_i64(p.nbc, g->m, g->n, &nc) || !(tmp_c = ops_host_malloc_array(nc, isz))))
        goto oom;
    if (out == NULL) {
        if ((fresh = ops_tensor_new(op, rnd, rsz, NULL, g->dt, OPS_DEVICE_CPU)) == NULL) {
            st = ops_last_status();
            goto done;
        }
    } else if (p.resize && (st = ops_tensor_resize_(op, out, rnd, rsz)) != OPS_OK) {
        goto done;
    }
    ops_tensor *dst = fresh != NULL ? fresh : out;
    if (p.empty)
        goto written;

    /* nothing fails from here on */
    if (pack_a) {
        ops_la_operand q;
        ops_la_contiguous_operand(g, true, g->m, g->k, pack_a, &q);
        copy_mats(g, isz, g->nbatch, g->m, g->k, &q, &g->a);
        g->a = q;
    }
    if (pack_b) {
        ops_la_operand q;
        ops_la_contiguous_operand(g, true, g->k, g->n, pack_b, &q);
        copy_mats(g, isz, g->nbatch, g->k, g->n, &q, &g->b);
        g->b = q;
    }
    ops_la_operand oc;
    ops_gemm_bind(g, &p, cmap, dst, tmp_c, self, &oc);

    if (!p.blas) {
        run_loop(g);
    } else {
        /* C starts as self (scaled by the BLAS's beta).  Without self, beta is 0:
         * ?gemm stores zeros then, but ?gemv and our dot scale y by beta, so a NaN
         * left in out is zeroed first rather than multiplied by 0 */
        if (g->has_s && !(tmp_c == NULL && ops_la_same_view(self, dst)))
            copy_mats(g, isz, p.nbc, g->m, g->n, &g->c, &g->s);
        else if (!g->has_s && (g->m == 1 || g->n == 1))
            zero_mats(g, isz, p.nbc, g->m, g->n, &g->c);
        ops_gemm_desc f = *g; /* folded for the BLAS only: the copy into out below uses g */
        ops_la_fold_batches(&f);
        run_blas(&f);
    }
    if (tmp_c)
        copy_mats(g, isz, p.nbc, g->m, g->n, &oc, &g->c);
written:
    if (fresh == NULL)
        ops_tensor_bump_version(out);
    if (result)
        *result = fresh;
    fresh = NULL;
    goto done;
oom:
    st = ops_fail(OPS_ERR_OOM, "%s: out of memory (a %s work buffer)", op, ops_dtype_name(g->dt));
done:
    ops_host_free(pack_a);
    ops_host_free(pack_b);
    ops_host_free(tmp_c);
    ops_tensor_release(fresh);
    return st;
}

static inline char *
data_of(const ops_tensor *t)
{
    return (char *)ops_tensor_data_ptr(t);
}

/* ---- mm, addmm ----------------------------------------------------------------------- */

ops_status
ops_la_addmm(ops_gemm_exec_fn exec, const char *op, const ops_tensor *self, const ops_tensor *m1, const ops_tensor *m2,
             ops_scalar beta, ops_scalar alpha, ops_tensor *out, ops_tensor **result, bool inplace)
{
    if (m1->ndim != 2) {
        if (self == NULL)
            return ops_fail(OPS_ERR_SHAPE, "%s: self must be a matrix", op);
        return ops_fail(OPS_ERR_SHAPE, "%s: mat1 must be a matrix, got %d-D tensor", op, (int)m1->ndim);
    }
    if (m2->ndim != 2)
        return ops_fail(OPS_ERR_SHAPE, "%s: mat2 must be a matrix, got %d-D tensor", op, (int)m2->ndim);
    if (m1->sizes[1] != m2->sizes[0])
        return ops_fail(OPS_ERR_SHAPE, "%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)", op,
                        (long long)m1->sizes[0], (long long)m1->sizes[1], (long long)m2->sizes[0],
                        (long long)m2->sizes[1]);
    if (m1->dtype != m2->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected m1 and m2 to have the same dtype, but got: %s != %s", op,
                        ops_dtype_name(m1->dtype), ops_dtype_name(m2->dtype));
    if (self != NULL && self->dtype != m2->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: self and mat2 must have the same dtype, but got %s and %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(m2->dtype));
    ops_status st;
    if ((st = la_check_dtype(op, m1->dtype)) != OPS_OK ||
        (st = la_check_scalars(op, m1->dtype, beta, alpha)) != OPS_OK)
        return st;
    const int64_t rsz[2] = {m1->sizes[0], m2->sizes[1]};
    if (inplace && (self->ndim != 2 || self->sizes[0] != rsz[0] || self->sizes[1] != rsz[1]))
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: The input tensor must be a matrix with size %lldx%lld, but got a %d-D tensor with size "
                        "%lldx%lld",
                        op, (long long)rsz[0], (long long)rsz[1], (int)self->ndim,
                        (long long)(self->ndim > 0 ? self->sizes[0] : 1),
                        (long long)(self->ndim > 1 ? self->sizes[1] : 1));
    ops_gemm_desc g = {.op = op, .dt = m1->dtype, .nbd = 0, .m = rsz[0], .n = rsz[1], .k = m1->sizes[1],
                   .alpha = alpha, .beta = beta};
    g.a = (ops_la_operand){.data = data_of(m1), .rs = m1->strides[0], .cs = m1->strides[1]};
    g.b = (ops_la_operand){.data = data_of(m2), .rs = m2->strides[0], .cs = m2->strides[1]};
    static const int cmap[2] = {0, 1};
    return exec(&g, m1, m2, self, out, 2, rsz, cmap, result);
}

/* ---- bmm, baddbmm, addbmm -------------------------------------------------------------- */

ops_status
ops_la_baddbmm(ops_gemm_exec_fn exec, const char *op, const ops_tensor *self, const ops_tensor *b1,
               const ops_tensor *b2, ops_scalar beta, ops_scalar alpha, ops_tensor *out, ops_tensor **result,
               bool inplace, bool sum_batch)
{
    if (b1->ndim != 3)
        return ops_fail(OPS_ERR_SHAPE, "%s: batch1 must be a 3D tensor", op);
    if (b2->ndim != 3)
        return ops_fail(OPS_ERR_SHAPE, "%s: batch2 must be a 3D tensor", op);
    if (b1->sizes[0] != b2->sizes[0])
        return ops_fail(OPS_ERR_SHAPE, "%s: batch1 and batch2 must have same number of batches, got %lld and %lld",
                        op, (long long)b1->sizes[0], (long long)b2->sizes[0]);
    if (b1->sizes[2] != b2->sizes[1])
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: "
                        "[%lld, %lld].",
                        op, (long long)b1->sizes[0], (long long)b1->sizes[2], (long long)b2->sizes[0],
                        (long long)b2->sizes[1]);
    if (b1->dtype != b2->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected batch1 and batch2 to have the same dtype, but got: %s != %s", op,
                        ops_dtype_name(b1->dtype), ops_dtype_name(b2->dtype));
    if (self != NULL && self->dtype != b1->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: self and batch2 must have the same dtype, but got %s and %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(b2->dtype));
    ops_status st;
    if ((st = la_check_dtype(op, b1->dtype)) != OPS_OK ||
        (st = la_check_scalars(op, b1->dtype, beta, alpha)) != OPS_OK)
        return st;
    const int64_t full[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    const int rnd = sum_batch ? 2 : 3;
    const int64_t *rsz = sum_batch ? full + 1 : full;
    if (inplace && (self->ndim != rnd || memcmp(self->sizes, rsz, (size_t)rnd * sizeof(int64_t)) != 0)) {
        char t1[OPS_SHAPE_STR_LEN], t2[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_SHAPE, "%s: Expected an input tensor shape with shape %s but got shape: %s", op,
                        ops_shape_str(rnd, rsz, t1, sizeof t1), ops_shape_str(self->ndim, self->sizes, t2, sizeof t2));
    }
    ops_gemm_desc g = {.op = op, .dt = b1->dtype, .nbd = 1, .bsz = {full[0]}, .m = full[1], .n = full[2],
                   .k = b1->sizes[2], .alpha = alpha, .beta = beta, .sum_batch = sum_batch};
    g.a = (ops_la_operand){.data = data_of(b1), .bst = {b1->strides[0]}, .rs = b1->strides[1], .cs = b1->strides[2]};
    g.b = (ops_la_operand){.data = data_of(b2), .bst = {b2->strides[0]}, .rs = b2->strides[1], .cs = b2->strides[2]};
    static const int cmap3[3] = {0, 1, 2}, cmap2[3] = {-1, 0, 1};
    return exec(&g, b1, b2, self, out, rnd, rsz, sum_batch ? cmap2 : cmap3, result);
}

/* ---- mv, addmv, dot ---------------------------------------------------------------------- */

ops_status
ops_la_addmv(ops_gemm_exec_fn exec, const char *op, const ops_tensor *self, const ops_tensor *mat,
             const ops_tensor *vec, ops_scalar beta, ops_scalar alpha, ops_tensor *out, ops_tensor **result,
             bool inplace)
{
    const int sdim = self != NULL ? (int)self->ndim : 1;
    if (mat->ndim != 2 || vec->ndim != 1 || sdim > 1)
        return ops_fail(OPS_ERR_SHAPE, "%s: vector + matrix @ vector expected, got %d, %d, %d", op, sdim,
                        (int)mat->ndim, (int)vec->ndim);
    const int64_t in = self == NULL ? mat->sizes[0] : self->ndim == 0 ? 1 : self->sizes[0];
    if (mat->sizes[1] != vec->sizes[0] || !(in == mat->sizes[0] || (in == 1 && !inplace)) ||
        (inplace && self->ndim != 1))
        return ops_fail(OPS_ERR_SHAPE, "%s: size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)", op,
                        (long long)in, (long long)mat->sizes[0], (long long)mat->sizes[1], (long long)vec->sizes[0]);
    if (self != NULL && self->dtype != vec->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected self and vec to have the same dtype, but got: %s != %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(vec->dtype));
    if (mat->dtype != vec->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected %s and vec to have the same dtype, but got: %s != %s", op,
                        self == NULL ? "self" : "mat", ops_dtype_name(mat->dtype), ops_dtype_name(vec->dtype));
    ops_status st;
    if ((st = la_check_dtype(op, mat->dtype)) != OPS_OK ||
        (st = la_check_scalars(op, mat->dtype, beta, alpha)) != OPS_OK)
        return st;
    const int64_t rsz[1] = {mat->sizes[0]};
    ops_gemm_desc g = {.op = op, .dt = mat->dtype, .nbd = 0, .m = rsz[0], .n = 1, .k = mat->sizes[1],
                   .alpha = alpha, .beta = beta};
    g.a = (ops_la_operand){.data = data_of(mat), .rs = mat->strides[0], .cs = mat->strides[1]};
    g.b = (ops_la_operand){.data = data_of(vec), .rs = vec->strides[0], .cs = 0};
    static const int cmap[2] = {0, -1};
    return exec(&g, mat, vec, self, out, 1, rsz, cmap, result);
}

ops_status
ops_la_dot(ops_gemm_exec_fn exec, const char *op, const ops_tensor *self, const ops_tensor *other, ops_tensor *out,
           ops_tensor **result)
{
    if (self->ndim != 1 || other->ndim != 1)
        return ops_fail(OPS_ERR_SHAPE, "%s: 1D tensors expected, but got %dD and %dD tensors", op, (int)self->ndim,
                        (int)other->ndim);
    if (self->sizes[0] != other->sizes[0])
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number "
                        "of elements, but got %lld and %lld elements respectively",
                        op, (long long)self->sizes[0], (long long)other->sizes[0], (long long)self->sizes[0],
                        (long long)other->sizes[0]);
    if (self->dtype != other->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: dot : expected both vectors to have same dtype, but found %s and %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(other->dtype));
    ops_status st;
    if ((st = la_check_dtype(op, self->dtype)) != OPS_OK)
        return st;
    ops_gemm_desc g = {.op = op, .dt = self->dtype, .nbd = 0, .m = 1, .n = 1, .k = self->sizes[0],
                   .alpha = OPS_SCALAR_INT(1), .beta = OPS_SCALAR_INT(0)};
    g.a = (ops_la_operand){.data = data_of(self), .rs = 0, .cs = self->strides[0]};
    g.b = (ops_la_operand){.data = data_of(other), .rs = other->strides[0], .cs = 0};
    static const int cmap[2] = {-1, -1};
    static const int64_t none[1] = {0}; /* a 0-dim result has no sizes */
    return exec(&g, self, other, NULL, out, 0, none, cmap, result);
}

/* ---- outer: self[:, None] * vec2 (mul's promotion, every dtype) -------------------------- */

static ops_status
outer_check(const ops_tensor *self, const ops_tensor *vec2)
{
    if (self->ndim != 1)
        return ops_fail(OPS_ERR_SHAPE, "outer: Expected 1-D argument self, but got %d-D", (int)self->ndim);
    if (vec2->ndim != 1)
        return ops_fail(OPS_ERR_SHAPE, "outer: Expected 1-D argument vec2, but got %d-D", (int)vec2->ndim);
    return OPS_OK;
}

static ops_tensor *
column_view(const ops_tensor *self)
{
    const int64_t sizes[2] = {self->sizes[0], 1}, strides[2] = {self->strides[0], 1};
    return ops_tensor_new_view(self, 2, sizes, strides, self->offset);
}

/* Device-generic (views and mul): the CUDA kernels call it too. */
ops_tensor *
ops_la_outer(const ops_tensor *self, const ops_tensor *vec2)
{
    if (outer_check(self, vec2) != OPS_OK)
        return NULL;
    ops_tensor *col = column_view(self);
    if (col == NULL)
        return NULL;
    ops_tensor *r = ops_mul(col, vec2);
    ops_tensor_release(col);
    return r;
}

ops_status
ops_la_outer_out(const ops_tensor *self, const ops_tensor *vec2, ops_tensor *out)
{
    ops_status st = outer_check(self, vec2);
    if (st != OPS_OK)
        return st;
    ops_tensor *col = column_view(self);
    if (col == NULL)
        return ops_last_status();
    st = ops_mul_out(col, vec2, out);
    ops_tensor_release(col);
    return st;
}

/* ---- matmul and linear: one batched GEMM with broadcast batch dims ----------------------- */

/* a (..., m, k) @ b (..., k, n) with NumPy's rules (1-D a: no m dim; 1-D b: no n dim;
 * batch dims broadcast), plus bias broadcast to the result (linear).  b_t: a 2-D b is
 * given as n x k (linear's weight). */
ops_status
ops_la_matmul(ops_gemm_exec_fn exec, const char *op, const ops_tensor *a, const ops_tensor *b, bool b_t,
              const ops_tensor *bias, ops_tensor *out, ops_tensor **result)
{
    const int da = (int)a->ndim, db = (int)b->ndim;
    if (da == 0 || db == 0)
        return ops_fail(OPS_ERR_SHAPE, "%s: both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                        op, da, db);
    if (da == 1 && db == 1 && bias == NULL)
        return ops_la_dot(exec, op, a, b, out, result);
    const int64_t m = da >= 2 ? a->sizes[da - 2] : 1, ka = a->sizes[da - 1];
    /* b's dims holding k and n (b_t: stored n x k) */
    const int kd = db == 1 ? 0 : b_t ? db - 1 : db - 2, nd = db == 1 ? -1 : b_t ? db - 2 : db - 1;
    const int64_t kb = b->sizes[kd], n = nd >= 0 ? b->sizes[nd] : 1;
    if (ka != kb) {
        if (da == 2 && db == 1)
            return ops_fail(OPS_ERR_SHAPE, "%s: size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)", op,
                            (long long)m, (long long)m, (long long)ka, (long long)kb);
        const int64_t rows = da >= 2 ? ops_shape_numel(da - 1, a->sizes) : 1;
        return ops_fail(OPS_ERR_SHAPE, "%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)", op,
                        (long long)rows, (long long)ka, (long long)kb, (long long)n);
    }
    if (a->dtype != b->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected m1 and m2 to have the same dtype, but got: %s != %s", op,
                        ops_dtype_name(a->dtype), ops_dtype_name(b->dtype));
    if (bias != NULL && bias->dtype != a->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: self and mat2 must have the same dtype, but got %s and %s", op,
                        ops_dtype_name(bias->dtype), ops_dtype_name(b->dtype));
    ops_status st;
    if ((st = la_check_dtype(op, a->dtype)) != OPS_OK)
        return st;
    const int nba = da > 2 ? da - 2 : 0, nbb = db > 2 ? db - 2 : 0;
    ops_gemm_desc g = {.op = op, .dt = a->dtype, .m = m, .n = n, .k = ka, .alpha = OPS_SCALAR_INT(1),
                   .beta = OPS_SCALAR_INT(1)};
    /* the batch dims broadcast (PyTorch's infer_size, with its message) */
    g.nbd = nba > nbb ? nba : nbb;
    for (int d = 0; d < g.nbd; d++) {
        const int ia = d - (g.nbd - nba), ib = d - (g.nbd - nbb);
        const int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                            "non-singleton dimension %d",
                            op, (long long)sa, (long long)sb, d);
        g.bsz[d] = sa == 1 ? sb : sa;
    }
    int64_t rsz[OPS_MAX_DIMS];
    int cmap[OPS_MAX_DIMS + 2];
    int rnd = 0;
    for (int d = 0; d < g.nbd; d++) {
        const int ia = d - (g.nbd - nba), ib = d - (g.nbd - nbb);
        g.a.bst[d] = ia >= 0 && a->sizes[ia] != 1 ? a->strides[ia] : 0;
        g.b.bst[d] = ib >= 0 && b->sizes[ib] != 1 ? b->strides[ib] : 0;
        cmap[d] = rnd;
        rsz[rnd++] = g.bsz[d];
    }
    g.a.data = data_of(a);
    g.a.rs = da >= 2 ? a->strides[da - 2] : 0;
    g.a.cs = a->strides[da - 1];
    g.b.data = data_of(b);
    g.b.rs = b->strides[kd];
    g.b.cs = nd >= 0 ? b->strides[nd] : 0;
    cmap[g.nbd] = da >= 2 ? rnd : -1;
    if (da >= 2)
        rsz[rnd++] = m;
    cmap[g.nbd + 1] = nd >= 0 ? rnd : -1;
    if (nd >= 0)
        rsz[rnd++] = n;
    return exec(&g, a, b, bias, out, rnd, rsz, cmap, result);
}

ops_tensor *
ops_la_linear(ops_gemm_exec_fn exec, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    ops_tensor *r = NULL;
    if (weight->ndim > 2)
        return ops_fail_null(OPS_ERR_SHAPE, "linear: weight must be 1-D or 2-D, got %d-D", (int)weight->ndim);
    ops_la_matmul(exec, "linear", input, weight, weight->ndim == 2, bias, NULL, &r);
    return r;
}

/* ---- the dispatch kernels ------------------------------------------------------------ */

ops_tensor *
mm_cpu(const ops_tensor *self, const ops_tensor *mat2)
{
    ops_tensor *r = NULL;
    ops_la_addmm(gemm_exec, "mm", NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), NULL, &r, false);
    return r;
}

ops_status
mm_out_cpu(const ops_tensor *self, const ops_tensor *mat2, ops_tensor *out)
{
    return ops_la_addmm(gemm_exec, "mm", NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), out, NULL,
                        false);
}

ops_tensor *
addmm_cpu(const ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta, ops_scalar alpha)
{
    ops_tensor *r = NULL;
    ops_la_addmm(gemm_exec, "addmm", self, mat1, mat2, beta, alpha, NULL, &r, false);
    return r;
}

ops_status
addmm_out_cpu(const ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta, ops_scalar alpha,
              ops_tensor *out)
{
    return ops_la_addmm(gemm_exec, "addmm", self, mat1, mat2, beta, alpha, out, NULL, false);
}

ops_status
addmm_cpu_(ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta, ops_scalar alpha)
{
    return ops_la_addmm(gemm_exec, "addmm_", self, mat1, mat2, beta, alpha, self, NULL, true);
}

ops_tensor *
bmm_cpu(const ops_tensor *self, const ops_tensor *mat2)
{
    ops_tensor *r = NULL;
    ops_la_baddbmm(gemm_exec, "bmm", NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), NULL, &r, false,
                   false);
    return r;
}

ops_status
bmm_out_cpu(const ops_tensor *self, const ops_tensor *mat2, ops_tensor *out)
{
    return ops_la_baddbmm(gemm_exec, "bmm", NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), out, NULL,
                          false, false);
}

ops_tensor *
baddbmm_cpu(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
            ops_scalar alpha)
{
    ops_tensor *r = NULL;
    ops_la_baddbmm(gemm_exec, "baddbmm", self, batch1, batch2, beta, alpha, NULL, &r, false, false);
    return r;
}

ops_status
baddbmm_out_cpu(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                ops_scalar alpha, ops_tensor *out)
{
    return ops_la_baddbmm(gemm_exec, "baddbmm", self, batch1, batch2, beta, alpha, out, NULL, false, false);
}

ops_status
baddbmm_cpu_(ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta, ops_scalar alpha)
{
    return ops_la_baddbmm(gemm_exec, "baddbmm_", self, batch1, batch2, beta, alpha, self, NULL, true, false);
}

ops_tensor *
addbmm_cpu(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
           ops_scalar alpha)
{
    ops_tensor *r = NULL;
    ops_la_baddbmm(gemm_exec, "addbmm", self, batch1, batch2, beta, alpha, NULL, &r, false, true);
    return r;
}

ops_status
addbmm_out_cpu(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
               ops_scalar alpha, ops_tensor *out)
{
    return ops_la_baddbmm(gemm_exec, "addbmm", self, batch1, batch2, beta, alpha, out, NULL, false, true);
}

ops_status
addbmm_cpu_(ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta, ops_scalar alpha)
{
    return ops_la_baddbmm(gemm_exec, "addbmm_", self, batch1, batch2, beta, alpha, self, NULL, true, true);
}

ops_tensor *
mv_cpu(const ops_tensor *self, const ops_tensor *vec)
{
    ops_tensor *r = NULL;
    ops_la_addmv(gemm_exec, "mv", NULL, self, vec, ops_la_int_scalar(0), ops_la_int_scalar(1), NULL, &r, false);
    return r;
}

ops_status
mv_out_cpu(const ops_tensor *self, const ops_tensor *vec, ops_tensor *out)
{
    return ops_la_addmv(gemm_exec, "mv", NULL, self, vec, ops_la_int_scalar(0), ops_la_int_scalar(1), out, NULL, false);
}

ops_tensor *
addmv_cpu(const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta, ops_scalar alpha)
{
    ops_tensor *r = NULL;
    ops_la_addmv(gemm_exec, "addmv", self, mat, vec, beta, alpha, NULL, &r, false);
    return r;
}

ops_status
addmv_out_cpu(const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta, ops_scalar alpha,
              ops_tensor *out)
{
    return ops_la_addmv(gemm_exec, "addmv", self, mat, vec, beta, alpha, out, NULL, false);
}

ops_status
addmv_cpu_(ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta, ops_scalar alpha)
{
    return ops_la_addmv(gemm_exec, "addmv_", self, mat, vec, beta, alpha, self, NULL, true);
}

ops_tensor *
dot_cpu(const ops_tensor *self, const ops_tensor *tensor)
{
    ops_tensor *r = NULL;
    ops_la_dot(gemm_exec, "dot", self, tensor, NULL, &r);
    return r;
}

ops_status
dot_out_cpu(const ops_tensor *self, const ops_tensor *tensor, ops_tensor *out)
{
    return ops_la_dot(gemm_exec, "dot", self, tensor, out, NULL);
}

/* vdot: conj(self) . other; every dtype here is real, so it is dot (PyTorch's vdot
 * calls at::dot for real dtypes, with dot's checks and messages). */
ops_tensor *
vdot_cpu(const ops_tensor *self, const ops_tensor *other)
{
    ops_tensor *r = NULL;
    ops_la_dot(gemm_exec, "vdot", self, other, NULL, &r);
    return r;
}

ops_status
vdot_out_cpu(const ops_tensor *self, const ops_tensor *other, ops_tensor *out)
{
    return ops_la_dot(gemm_exec, "vdot", self, other, out, NULL);
}

ops_tensor *
outer_cpu(const ops_tensor *self, const ops_tensor *vec2)
{
    return ops_la_outer(self, vec2);
}

ops_status
outer_out_cpu(const ops_tensor *self, const ops_tensor *vec2, ops_tensor *out)
{
    return ops_la_outer_out(self, vec2, out);
}

ops_tensor *
matmul_cpu(const ops_tensor *self, const ops_tensor *other)
{
    ops_tensor *r = NULL;
    ops_la_matmul(gemm_exec, "matmul", self, other, false, NULL, NULL, &r);
    return r;
}

ops_status
matmul_out_cpu(const ops_tensor *self, const ops_tensor *other, ops_tensor *out)
{
    return ops_la_matmul(gemm_exec, "matmul", self, other, false, NULL, out, NULL);
}

ops_tensor *
linear_cpu(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    return ops_la_linear(gemm_exec, input, weight, bias);
}

/* ---- singular values: nuclear_norm, _linalg_polar ---------------------------------- */

/* One-sided Jacobi SVD (Hestenes) of w, p x q column-major (column j at w + j * p),
 * p >= q, in place: column pairs are rotated until every pair is orthogonal to working
 * precision.  Then the singular values are the column norms, the left singular vectors
 * the normalised columns and, when v (q x q, column-major) is given, the right singular
 * vectors are its columns.  No LAPACK is linked, and the matrices these ops see are
 * small; each sweep costs O(p q^2), and a few sweeps converge (quadratically at the end). */
static void
jacobi_svd(double *w, int64_t p, int64_t q, double *v)
{
    if (v != NULL)
        for (int64_t i = 0; i < q * q; i++)
            v[i] = i % (q + 1) == 0 ? 1.0 : 0.0;
    for (int sweep = 0; sweep < 80; sweep++) {
        bool rotated = false;
        for (int64_t i = 0; i + 1 < q; i++)
            for (int64_t j = i + 1; j < q; j++) {
                double *wi = w + i * p, *wj = w + j * p;
                double a = 0, b = 0, c = 0;
                for (int64_t r = 0; r < p; r++) {
                    a += wi[r] * wi[r];
                    b += wj[r] * wj[r];
                    c += wi[r] * wj[r];
                }
                if (c == 0 || fabs(c) <= 1e-15 * sqrt(a * b))
                    continue;
                rotated = true;
                /* tan of the angle that zeroes the pair's dot product, the smaller root */
                const double zeta = (b - a) / (2 * c);
                const double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
                const double cs = 1 / sqrt(1 + t * t), sn = cs * t;
                for (int64_t r = 0; r < p; r++) {
                    const double x = wi[r], y = wj[r];
                    wi[r] = cs * x - sn * y;
                    wj[r] = sn * x + cs * y;
                }
                if (v != NULL) {
                    double *vi = v + i * q, *vj = v + j * q;
                    for (int64_t r = 0; r < q; r++) {
                        const double x = vi[r], y = vj[r];
                        vi[r] = cs * x - sn * y;
                        vj[r] = sn * x + cs * y;
                    }
                }
            }
        if (!rotated)
            break;
    }
}

/* The two matrix dims of self: dim wrapped, distinct. */
static ops_status
svd_dims(const char *op, const ops_tensor *self, ops_int_list dim, int64_t *d0, int64_t *d1)
{
    if (dim.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: dim must have 2 elements, got %lld", op, (long long)dim.len);
    *d0 = dim.data[0];
    *d1 = dim.data[1];
    if (!ops_wrap_dim(op, "dim", d0, self->ndim) || !ops_wrap_dim(op, "dim", d1, self->ndim))
        return ops_last_status();
    if (*d0 == *d1)
        return ops_fail(OPS_ERR_VALUE, "%s: duplicate or invalid dimensions [%lld, %lld]", op,
                        (long long)dim.data[0], (long long)dim.data[1]);
    return OPS_OK;
}

/* Runs the Jacobi SVD on every matrix of self over (d0, d1), in float64: *sum gets each
 * matrix's sum of singular values (batch order: the other dims in order), or *polar
 * (float64, contiguous, [other dims..., m, n]) its U Vᴴ with the singular values at
 * most max(m, n) * eps * the largest dropped (PyTorch's rank cut-off for pinv). */
static ops_status
svd_run(const char *op, const ops_tensor *self, int64_t d0, int64_t d1, ops_tensor **sum, ops_tensor **polar)
{
    if (self->dtype != OPS_FLOAT32 && self->dtype != OPS_FLOAT64)
        return ops_fail_dtype(op, self->dtype, OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64));
    const int nd = self->ndim;
    int64_t perm[OPS_MAX_DIMS], bsz[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < nd; i++)
        if (i != d0 && i != d1) {
            bsz[k] = self->sizes[i];
            perm[k++] = i;
        }
    const int nb = k;
    perm[k++] = d0;
    perm[k++] = d1;
    const int64_t m = self->sizes[d0], n = self->sizes[d1];
    const int64_t p = m >= n ? m : n, q = m >= n ? n : m;
    int64_t batch = 1;
    for (int i = 0; i < nb; i++)
        batch *= bsz[i];
    ops_status st = OPS_OK;
    ops_tensor *moved = NULL, *a = NULL, *r = NULL;
    double *w = NULL, *v = NULL;
    if ((moved = ops_permute(self, (ops_int_list){perm, nd})) == NULL ||
        (a = ops_tensor_new(op, nd, moved->sizes, NULL, OPS_FLOAT64, OPS_DEVICE_CPU)) == NULL ||
        ops_copy_values(op, a, moved) != OPS_OK)
        goto fail;
    if (sum != NULL)
        r = ops_tensor_new(op, nb, bsz, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    else
        r = ops_tensor_new(op, nd, moved->sizes, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    if (r == NULL)
        goto fail;
    if (batch > 0 && p * q > 0 &&
        ((w = ops_host_malloc_array(p * q, sizeof(double))) == NULL ||
         (polar != NULL && (v = ops_host_malloc_array(q * q, sizeof(double))) == NULL))) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory (the SVD's work buffers)", op);
        goto done;
    }
    const double *ad = ops_tensor_data_ptr(a);
    double *rd = ops_tensor_data_ptr(r);
    for (int64_t b = 0; b < batch; b++) {
        const double *ab = ad + b * m * n; /* row-major m x n */
        if (p * q == 0) {
            if (sum != NULL)
                rd[b] = 0;
            continue;
        }
        /* w's columns: A's columns when m >= n, else A's rows (the SVD of Aᵀ) */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                w[m >= n ? j * p + i : i * p + j] = ab[i * n + j];
        jacobi_svd(w, p, q, v);
        double s_max = 0, total = 0;
        for (int64_t c = 0; c < q; c++) {
            double s2 = 0;
            for (int64_t i = 0; i < p; i++)
                s2 += w[c * p + i] * w[c * p + i];
            const double s = sqrt(s2);
            total += s;
            s_max = s > s_max ? s : s_max;
        }
        if (sum != NULL) {
            rd[b] = total;
            continue;
        }
        /* U Vᴴ = sum over kept c of (w_c / s_c) v_cᵀ, a p x q matrix of the SVD'd one */
        const double cut = (double)p * 2.220446049250313e-16 * s_max;
        double *out = rd + b * m * n;
        memset(out, 0, (size_t)(m * n) * sizeof(double));
        for (int64_t c = 0; c < q; c++) {
            double s2 = 0;
            for (int64_t i = 0; i < p; i++)
                s2 += w[c * p + i] * w[c * p + i];
            const double s = sqrt(s2);
            if (s <= cut || s == 0)
                continue;
            for (int64_t i = 0; i < p; i++)
                for (int64_t j = 0; j < q; j++) {
                    const double e = w[c * p + i] / s * v[c * q + j];
                    /* (i, j) of the p x q factor is (i, j) of A's, or (j, i) when A was transposed */
                    out[m >= n ? i * n + j : j * n + i] += e;
                }
        }
    }
    if (sum != NULL)
        *sum = r;
    else
        *polar = r;
    r = NULL;
    goto done;
fail:
    st = ops_last_status();
done:
    ops_host_free(w);
    ops_host_free(v);
    ops_tensor_release(moved);
    ops_tensor_release(a);
    ops_tensor_release(r);
    return st;
}

/* The sums of singular values over (d0, d1) as self's dtype, the two dims kept as size
 * 1 when keepdim. */
static ops_tensor *
nuclear_norm_impl(const char *op, const ops_tensor *self, int64_t d0, int64_t d1, bool keepdim)
{
    ops_tensor *s = NULL, *res = NULL;
    if (svd_run(op, self, d0, d1, &s, NULL) != OPS_OK)
        return NULL;
    int64_t shape[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (i != d0 && i != d1)
            shape[k++] = self->sizes[i];
        else if (keepdim)
            shape[k++] = 1;
    }
    /* the batch order is the other dims' order, so the values are already in place */
    ops_tensor *shaped = ops_view(s, (ops_int_list){shape, k});
    if (shaped != NULL && (res = ops_tensor_new(op, k, shape, NULL, self->dtype, OPS_DEVICE_CPU)) != NULL &&
        ops_copy_values(op, res, shaped) != OPS_OK) {
        ops_tensor_release(res);
        res = NULL;
    }
    ops_tensor_release(shaped);
    ops_tensor_release(s);
    return res;
}

ops_tensor *
nuclear_norm_cpu(const ops_tensor *self, bool keepdim)
{
    const char *op = "nuclear_norm";
    if (self->ndim != 2)
        return ops_fail_null(OPS_ERR_SHAPE,
                             "%s: Expected a tensor with 2 dimensions, but got a tensor with %d dimensions instead.",
                             op, (int)self->ndim);
    return nuclear_norm_impl(op, self, 0, 1, keepdim);
}

ops_tensor *
nuclear_norm_dim_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    const char *op = "nuclear_norm";
    int64_t d0, d1;
    if (svd_dims(op, self, dim, &d0, &d1) != OPS_OK)
        return NULL;
    return nuclear_norm_impl(op, self, d0, d1, keepdim);
}

ops_tensor *
linalg_polar_cpu(const ops_tensor *self, ops_int_list dim)
{
    const char *op = "_linalg_polar";
    int64_t d0, d1;
    ops_tensor *pol = NULL, *res = NULL;
    if (svd_dims(op, self, dim, &d0, &d1) != OPS_OK || svd_run(op, self, d0, d1, NULL, &pol) != OPS_OK)
        return NULL;
    /* pol is [other dims..., m, n]: put m and n back at d0 and d1 */
    int64_t inv[OPS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < self->ndim; i++)
        if (i != d0 && i != d1)
            inv[i] = k++;
    inv[d0] = k;
    inv[d1] = k + 1;
    ops_tensor *back = ops_permute(pol, (ops_int_list){inv, self->ndim});
    if (back != NULL && (res = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, OPS_DEVICE_CPU)) != NULL &&
        ops_copy_values(op, res, back) != OPS_OK) {
        ops_tensor_release(res);
        res = NULL;
    }
    ops_tensor_release(back);
    ops_tensor_release(pol);
    return res;
}

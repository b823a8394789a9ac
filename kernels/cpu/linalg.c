/* Linear algebra (CPU loops): the executor of a checked batched GEMM (the stub
 * linalg_gemm; the ops' drivers are kernels/linalg.c), and nuclear_norm and
 * _linalg_polar (a Jacobi SVD, at the end; CPU only).
 *
 * float32/float64 go to OpenBLAS (cblas_?gemm, ?gemv, ?dot) with the transpose flags
 * and leading dimensions taken from the strides, so transposed and sliced operands are
 * read without a copy; only an operand the BLAS cannot address (a zero or negative
 * stride, no unit stride) is packed first.  The other dtypes use a blocked loop that
 * accumulates in float (float16, bfloat16) or, for integers, in uint64_t: products
 * and sums then wrap exactly as the narrow type's would, without signed overflow. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "kernels/linalg.h"
#include "ops_dispatch.h"
#include "ops_functions_core.h"
#include "ops_kernels_linalg.h"

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

/* One row of cols elements of isz bytes, d[j * dcs] = s[j * scs].  The cases a GEMM's
 * C meets take a fast path: a contiguous row (one memcpy: addmm's [M, N] self, linear's
 * [N] bias broadcast over the rows) and a broadcast element (a fill: a [M, 1] self);
 * the general case still copies by element, typed, so that the compiler does not call
 * memcpy once per element (that per-element call made the bias cost as much as the
 * product at small sizes, docs/backends.md). */
static void
copy_row(char *d, int64_t dcs, const char *s, int64_t scs, int64_t cols, size_t isz)
{
#define LA_COPY_ROW_(T)                                                                              \
    do {                                                                                           \
        T *dp = (T *)d;                                                                            \
        const T *sp = (const T *)s;                                                                \
        if (scs == 0) {                                                                            \
            const T v = *sp;                                                                       \
            for (int64_t j = 0; j < cols; j++)                                                     \
                dp[j * dcs] = v;                                                                   \
        } else {                                                                                   \
            for (int64_t j = 0; j < cols; j++)                                                     \
                dp[j * dcs] = sp[j * scs];                                                         \
        }                                                                                          \
    } while (0)
    if (dcs == 1 && scs == 1) {
        memcpy(d, s, (size_t)cols * isz);
        return;
    }
    switch (isz) {
    case 1: LA_COPY_ROW_(uint8_t); break;
    case 2: LA_COPY_ROW_(uint16_t); break;
    case 4: LA_COPY_ROW_(uint32_t); break;
    case 8: LA_COPY_ROW_(uint64_t); break;
    default:
        for (int64_t j = 0; j < cols; j++)
            memcpy(d + j * dcs * (int64_t)isz, s + j * scs * (int64_t)isz, isz);
        break;
    }
#undef LA_COPY_ROW_
}

/* Copies nbatch rows x cols matrices (strides in elements) between layouts, one dtype,
 * row by row (a matrix with contiguous rows: one memcpy per row); d and s do not overlap
 * (the plan gives C a buffer where out may overlap an operand). */
static void
copy_mats(const ops_gemm_desc *g, size_t isz, int64_t nbatch, int64_t rows, int64_t cols, const ops_la_operand *d,
          const ops_la_operand *s)
{
    const int64_t dcs = cols == 1 ? 1 : d->cs, scs = cols == 1 ? 1 : s->cs;
    for (int64_t bt = 0; bt < nbatch; bt++) {
        char *db = d->data + ops_la_batch_offset(g, d->bst, bt) * (int64_t)isz;
        const char *sb = s->data + ops_la_batch_offset(g, s->bst, bt) * (int64_t)isz;
        if (rows > 1 && cols > 1 && dcs == 1 && scs == 1 && d->rs == cols && s->rs == cols) {
            memcpy(db, sb, (size_t)(rows * cols) * isz); /* both contiguous: one copy */
            continue;
        }
        for (int64_t i = 0; i < rows; i++)
            copy_row(db + i * d->rs * (int64_t)isz, dcs, sb + i * s->rs * (int64_t)isz, scs, cols, isz);
    }
}

/* Zeros nbatch rows x cols matrices of o. */
static void
zero_mats(const ops_gemm_desc *g, size_t isz, int64_t nbatch, int64_t rows, int64_t cols, const ops_la_operand *o)
{
    for (int64_t bt = 0; bt < nbatch; bt++) {
        const int64_t ob = ops_la_batch_offset(g, o->bst, bt);
        for (int64_t i = 0; i < rows; i++) {
            char *r = o->data + (ob + i * o->rs) * (int64_t)isz;
            if (o->cs == 1 || cols == 1)
                memset(r, 0, (size_t)cols * isz);
            else
                for (int64_t j = 0; j < cols; j++)
                    memset(r + j * o->cs * (int64_t)isz, 0, isz);
        }
    }
}

/* ---- the executor ---------------------------------------------------------------------- */

OPS_REGISTER_STUB(linalg_gemm, CPU, linalg_gemm_cpu);

/* Packs what the BLAS cannot read into host buffers and writes out only once nothing
 * can fail. */
ops_status
linalg_gemm_cpu(ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t, const ops_tensor *self,
                ops_tensor *out, int rnd, const int64_t *rsz, const int *cmap, ops_tensor **result)
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
 * most max(m, n) * eps * the largest dropped (PyTorch's rank cut-off for pinv).  declared:
 * the set of the entry whose kernel runs (OPS_DTYPE_MASK_<ENTRY>), float32 and float64. */
static ops_status
svd_run(const char *op, unsigned declared, const ops_tensor *self, int64_t d0, int64_t d1, ops_tensor **sum,
        ops_tensor **polar)
{
    if (!(declared & OPS_DTYPE_BIT(self->dtype)))
        return ops_fail_dtype(op, self->dtype, declared);
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
nuclear_norm_impl(const char *op, unsigned declared, const ops_tensor *self, int64_t d0, int64_t d1, bool keepdim)
{
    ops_tensor *s = NULL, *res = NULL;
    if (svd_run(op, declared, self, d0, d1, &s, NULL) != OPS_OK)
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
    return nuclear_norm_impl(op, OPS_DTYPE_MASK_NUCLEAR_NORM, self, 0, 1, keepdim);
}

ops_tensor *
nuclear_norm_dim_cpu(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    const char *op = "nuclear_norm";
    int64_t d0, d1;
    if (svd_dims(op, self, dim, &d0, &d1) != OPS_OK)
        return NULL;
    return nuclear_norm_impl(op, OPS_DTYPE_MASK_NUCLEAR_NORM_DIM, self, d0, d1, keepdim);
}

ops_tensor *
linalg_polar_cpu(const ops_tensor *self, ops_int_list dim)
{
    const char *op = "_linalg_polar";
    int64_t d0, d1;
    ops_tensor *pol = NULL, *res = NULL;
    if (svd_dims(op, self, dim, &d0, &d1) != OPS_OK ||
        svd_run(op, OPS_DTYPE_MASK__LINALG_POLAR, self, d0, d1, NULL, &pol) != OPS_OK)
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

/* Linear algebra, one driver for every device: mm, bmm, mv, dot, vdot, outer, addmm,
 * addmv, baddbmm, addbmm, matmul, linear (the schema names the linalg_* functions at
 * the end for `CPU, CUDA`).
 *
 * Every product is described once, as a batched GEMM (ops_gemm_desc,
 * kernels/linalg_common.h): batch dims, M, N, K and, per operand, batch strides plus
 * row and column strides, all read in place (a vector is a matrix with a size-1 dim,
 * a broadcast batch dim has stride 0).  Here: the argument checks and their messages,
 * the description, and the plan both backends follow (what the BLAS can address in
 * place, what is packed, where C goes: ops_gemm_plan_make).  The execution is the
 * device's loop behind the stub linalg_gemm (kernels/linalg.h): OpenBLAS and a
 * blocked loop in kernels/cpu/linalg.c, cuBLAS and a tiled kernel in
 * kernels/cuda/linalg.cu.  outer is a view and a mul, so it needs no loop of its own. */
#include <limits.h>
#include <string.h>

#include "kernels/linalg.h"
#include "ops_dispatch.h"
#include "ops_functions_binary.h"
#include "ops_kernels_linalg.h"

/* ---- BLAS addressing and the plan (shared by the backends) --------------------------- */

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

/* declared: the set of the entry whose kernel runs (OPS_DTYPE_MASK_<ENTRY>, its
 * `dtypes:`); checked after the shape and same-dtype checks, as PyTorch does. */
static ops_status
la_check_dtype(const char *op, ops_dtype dt, unsigned declared)
{
    if (!(declared & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, declared);
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

/* ---- the plan (every backend's linalg_gemm follows it) --------------------------------- */

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

static inline char *
data_of(const ops_tensor *t)
{
    return (char *)ops_tensor_data_ptr(t);
}

/* Runs the checked product g on its operands' device: the device's linalg_gemm loop. */
static ops_status
la_exec(ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t, const ops_tensor *self, ops_tensor *out,
        int rnd, const int64_t *rsz, const int *cmap, ops_tensor **result)
{
    const ops_device dev = a_t->storage->device;
    linalg_gemm_fn *const fn = OPS_STUB_GET(linalg_gemm, dev);
    if (fn == NULL)
        return ops_dispatch_no_kernel(g->op, dev);
    return fn(g, a_t, b_t, self, out, rnd, rsz, cmap, result);
}

/* ---- mm, addmm ----------------------------------------------------------------------- */

/* mm's and addmm's checks before the dtype (self NULL: mm): two matrices that can be
 * multiplied, of one dtype, and self's dtype. */
static ops_status
la_addmm_check(const char *op, const ops_tensor *self, const ops_tensor *m1, const ops_tensor *m2)
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
    return OPS_OK;
}

static ops_status
la_addmm(const char *op, unsigned declared,
         const ops_tensor *self, const ops_tensor *m1, const ops_tensor *m2, ops_scalar beta,
         ops_scalar alpha, ops_tensor *out, ops_tensor **result, bool inplace)
{
    ops_status st;
    if ((st = la_addmm_check(op, self, m1, m2)) != OPS_OK ||
        (st = la_check_dtype(op, m1->dtype, declared)) != OPS_OK ||
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
    return la_exec(&g, m1, m2, self, out, 2, rsz, cmap, result);
}

/* ---- bmm, baddbmm, addbmm -------------------------------------------------------------- */

/* bmm's, baddbmm's and addbmm's checks before the dtype (self NULL: bmm): two 3-D
 * batches that can be multiplied, of one dtype, and self's dtype. */
static ops_status
la_baddbmm_check(const char *op, const ops_tensor *self, const ops_tensor *b1, const ops_tensor *b2)
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
    return OPS_OK;
}

static ops_status
la_baddbmm(const char *op, unsigned declared,
           const ops_tensor *self, const ops_tensor *b1, const ops_tensor *b2, ops_scalar beta,
           ops_scalar alpha, ops_tensor *out, ops_tensor **result, bool inplace, bool sum_batch)
{
    ops_status st;
    if ((st = la_baddbmm_check(op, self, b1, b2)) != OPS_OK ||
        (st = la_check_dtype(op, b1->dtype, declared)) != OPS_OK ||
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
    return la_exec(&g, b1, b2, self, out, rnd, rsz, sum_batch ? cmap2 : cmap3, result);
}

/* ---- mv, addmv, dot ---------------------------------------------------------------------- */

/* mv's and addmv's checks before the dtype (self NULL: mv; inplace: addmv_, whose self
 * is the result): a matrix and a vector that can be multiplied, self's size, one dtype. */
static ops_status
la_addmv_check(const char *op, const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, bool inplace)
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
    return OPS_OK;
}

static ops_status
la_addmv(const char *op, unsigned declared,
         const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta,
         ops_scalar alpha, ops_tensor *out, ops_tensor **result, bool inplace)
{
    ops_status st;
    if ((st = la_addmv_check(op, self, mat, vec, inplace)) != OPS_OK ||
        (st = la_check_dtype(op, mat->dtype, declared)) != OPS_OK ||
        (st = la_check_scalars(op, mat->dtype, beta, alpha)) != OPS_OK)
        return st;
    const int64_t rsz[1] = {mat->sizes[0]};
    ops_gemm_desc g = {.op = op, .dt = mat->dtype, .nbd = 0, .m = rsz[0], .n = 1, .k = mat->sizes[1],
                   .alpha = alpha, .beta = beta};
    g.a = (ops_la_operand){.data = data_of(mat), .rs = mat->strides[0], .cs = mat->strides[1]};
    g.b = (ops_la_operand){.data = data_of(vec), .rs = vec->strides[0], .cs = 0};
    static const int cmap[2] = {0, -1};
    return la_exec(&g, mat, vec, self, out, 1, rsz, cmap, result);
}

static ops_status
la_dot_check(const char *op, const ops_tensor *self, const ops_tensor *other)
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
    return OPS_OK;
}

/* The `check:` of dot, vdot and their out= forms: la_dot_check, which PyTorch makes
 * before the dtype (the glue refuses an undeclared one after it; la_dot runs it again
 * as a guard for a direct call). */
ops_status
ops_check_dot(const ops_tensor *self, const ops_tensor *tensor)
{
    return la_dot_check("dot", self, tensor);
}

ops_status
ops_check_dot_out(const ops_tensor *self, const ops_tensor *tensor, ops_tensor *out)
{
    (void)out; /* checked after the dtype, when the result is written (la_exec) */
    return la_dot_check("dot", self, tensor);
}

ops_status
ops_check_vdot(const ops_tensor *self, const ops_tensor *other)
{
    return la_dot_check("vdot", self, other);
}

ops_status
ops_check_vdot_out(const ops_tensor *self, const ops_tensor *other, ops_tensor *out)
{
    (void)out;
    return la_dot_check("vdot", self, other);
}

static ops_status
la_dot(const char *op, unsigned declared,
       const ops_tensor *self, const ops_tensor *other, ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    if ((st = la_dot_check(op, self, other)) != OPS_OK || (st = la_check_dtype(op, self->dtype, declared)) != OPS_OK)
        return st;
    ops_gemm_desc g = {.op = op, .dt = self->dtype, .nbd = 0, .m = 1, .n = 1, .k = self->sizes[0],
                   .alpha = OPS_SCALAR_INT(1), .beta = OPS_SCALAR_INT(0)};
    g.a = (ops_la_operand){.data = data_of(self), .rs = 0, .cs = self->strides[0]};
    g.b = (ops_la_operand){.data = data_of(other), .rs = other->strides[0], .cs = 0};
    static const int cmap[2] = {-1, -1};
    static const int64_t none[1] = {0}; /* a 0-dim result has no sizes */
    return la_exec(&g, self, other, NULL, out, 0, none, cmap, result);
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

/* Views and mul, so any device. */
static ops_tensor *
la_outer(const ops_tensor *self, const ops_tensor *vec2)
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

static ops_status
la_outer_out(const ops_tensor *self, const ops_tensor *vec2, ops_tensor *out)
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
/* matmul's and linear's checks before the dtype: at least 1-D operands, dot's checks
 * for two vectors (no bias), k agreeing, one dtype, bias's dtype.  The batch dims'
 * broadcast is checked after the dtype (la_matmul), as PyTorch does. */
static ops_status
la_matmul_check(const char *op, const ops_tensor *a, const ops_tensor *b, bool b_t, const ops_tensor *bias)
{
    const int da = (int)a->ndim, db = (int)b->ndim;
    if (da == 0 || db == 0)
        return ops_fail(OPS_ERR_SHAPE, "%s: both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                        op, da, db);
    if (da == 1 && db == 1 && bias == NULL)
        return la_dot_check(op, a, b);
    const int64_t m = da >= 2 ? a->sizes[da - 2] : 1, ka = a->sizes[da - 1];
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
    return OPS_OK;
}

static ops_status
la_matmul(const char *op, unsigned declared,
          const ops_tensor *a, const ops_tensor *b, bool b_t, const ops_tensor *bias, ops_tensor *out,
          ops_tensor **result)
{
    const int da = (int)a->ndim, db = (int)b->ndim;
    if (da == 1 && db == 1 && bias == NULL)
        return la_dot(op, declared, a, b, out, result);
    ops_status st;
    if ((st = la_matmul_check(op, a, b, b_t, bias)) != OPS_OK ||
        (st = la_check_dtype(op, a->dtype, declared)) != OPS_OK)
        return st;
    const int64_t m = da >= 2 ? a->sizes[da - 2] : 1, ka = a->sizes[da - 1];
    /* b's dims holding k and n (b_t: stored n x k) */
    const int kd = db == 1 ? 0 : b_t ? db - 1 : db - 2, nd = db == 1 ? -1 : b_t ? db - 2 : db - 1;
    const int64_t n = nd >= 0 ? b->sizes[nd] : 1;
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
    return la_exec(&g, a, b, bias, out, rnd, rsz, cmap, result);
}

/* linear's checks before the dtype: weight's rank, then matmul's with weight as n x k. */
static ops_status
la_linear_check(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    if (weight->ndim > 2)
        return ops_fail(OPS_ERR_SHAPE, "linear: weight must be 1-D or 2-D, got %d-D", (int)weight->ndim);
    return la_matmul_check("linear", input, weight, weight->ndim == 2, bias);
}

static ops_tensor *
la_linear(unsigned declared, const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    ops_tensor *r = NULL;
    if (la_linear_check(input, weight, bias) != OPS_OK)
        return NULL;
    la_matmul("linear", declared, input, weight, weight->ndim == 2, bias, NULL, &r);
    return r;
}

/* ---- the `check:` of each entry (the schema names them) -------------------------------
 * The shape and same-dtype checks above, which PyTorch makes before the dtype: the glue
 * runs them, then refuses an undeclared dtype (`dtypes: {of: ...}`), then calls the
 * kernel, whose driver runs the same checks again as a guard for a direct call.  An
 * out= form's out= is checked after the dtype, when the result is written (la_exec). */

ops_status
ops_check_mm(const ops_tensor *self, const ops_tensor *mat2)
{
    return la_addmm_check("mm", NULL, self, mat2);
}

ops_status
ops_check_mm_out(const ops_tensor *self, const ops_tensor *mat2, ops_tensor *out)
{
    (void)out;
    return la_addmm_check("mm", NULL, self, mat2);
}

ops_status
ops_check_addmm(const ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta,
                ops_scalar alpha)
{
    (void)beta, (void)alpha; /* checked after the dtype (la_check_scalars) */
    return la_addmm_check("addmm", self, mat1, mat2);
}

ops_status
ops_check_addmm_out(const ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta,
                    ops_scalar alpha, ops_tensor *out)
{
    (void)beta, (void)alpha, (void)out;
    return la_addmm_check("addmm", self, mat1, mat2);
}

ops_status
ops_check_addmm_(ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta, ops_scalar alpha)
{
    (void)beta, (void)alpha; /* and self's shape: after the dtype */
    return la_addmm_check("addmm_", self, mat1, mat2);
}

ops_status
ops_check_bmm(const ops_tensor *self, const ops_tensor *mat2)
{
    return la_baddbmm_check("bmm", NULL, self, mat2);
}

ops_status
ops_check_bmm_out(const ops_tensor *self, const ops_tensor *mat2, ops_tensor *out)
{
    (void)out;
    return la_baddbmm_check("bmm", NULL, self, mat2);
}

ops_status
ops_check_baddbmm(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                  ops_scalar alpha)
{
    (void)beta, (void)alpha;
    return la_baddbmm_check("baddbmm", self, batch1, batch2);
}

ops_status
ops_check_baddbmm_out(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                      ops_scalar alpha, ops_tensor *out)
{
    (void)beta, (void)alpha, (void)out;
    return la_baddbmm_check("baddbmm", self, batch1, batch2);
}

ops_status
ops_check_baddbmm_(ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                   ops_scalar alpha)
{
    (void)beta, (void)alpha;
    return la_baddbmm_check("baddbmm_", self, batch1, batch2);
}

ops_status
ops_check_addbmm(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                 ops_scalar alpha)
{
    (void)beta, (void)alpha;
    return la_baddbmm_check("addbmm", self, batch1, batch2);
}

ops_status
ops_check_addbmm_out(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                     ops_scalar alpha, ops_tensor *out)
{
    (void)beta, (void)alpha, (void)out;
    return la_baddbmm_check("addbmm", self, batch1, batch2);
}

ops_status
ops_check_addbmm_(ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                  ops_scalar alpha)
{
    (void)beta, (void)alpha;
    return la_baddbmm_check("addbmm_", self, batch1, batch2);
}

ops_status
ops_check_mv(const ops_tensor *self, const ops_tensor *vec)
{
    return la_addmv_check("mv", NULL, self, vec, false);
}

ops_status
ops_check_mv_out(const ops_tensor *self, const ops_tensor *vec, ops_tensor *out)
{
    (void)out;
    return la_addmv_check("mv", NULL, self, vec, false);
}

ops_status
ops_check_addmv(const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta,
                ops_scalar alpha)
{
    (void)beta, (void)alpha;
    return la_addmv_check("addmv", self, mat, vec, false);
}

ops_status
ops_check_addmv_out(const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta,
                    ops_scalar alpha, ops_tensor *out)
{
    (void)beta, (void)alpha, (void)out;
    return la_addmv_check("addmv", self, mat, vec, false);
}

ops_status
ops_check_addmv_(ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta, ops_scalar alpha)
{
    (void)beta, (void)alpha;
    return la_addmv_check("addmv_", self, mat, vec, true);
}

ops_status
ops_check_matmul(const ops_tensor *self, const ops_tensor *other)
{
    return la_matmul_check("matmul", self, other, false, NULL);
}

ops_status
ops_check_matmul_out(const ops_tensor *self, const ops_tensor *other, ops_tensor *out)
{
    (void)out;
    return la_matmul_check("matmul", self, other, false, NULL);
}

ops_status
ops_check_linear(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    return la_linear_check(input, weight, bias);
}

/* ---- the ops (the schema names these for CPU and CUDA) -------------------------------- */

ops_tensor *
linalg_mm(const ops_tensor *self, const ops_tensor *mat2)
{
    ops_tensor *r = NULL;
    la_addmm("mm", OPS_DTYPE_MASK_MM, NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), NULL, &r, false);
    return r;
}

ops_status
linalg_mm_out(const ops_tensor *self, const ops_tensor *mat2, ops_tensor *out)
{
    return la_addmm("mm", OPS_DTYPE_MASK_MM_OUT,
                    NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), out, NULL, false);
}

ops_tensor *
linalg_addmm(const ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta, ops_scalar alpha)
{
    ops_tensor *r = NULL;
    la_addmm("addmm", OPS_DTYPE_MASK_ADDMM, self, mat1, mat2, beta, alpha, NULL, &r, false);
    return r;
}

ops_status
linalg_addmm_out(const ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta,
                 ops_scalar alpha, ops_tensor *out)
{
    return la_addmm("addmm", OPS_DTYPE_MASK_ADDMM_OUT, self, mat1, mat2, beta, alpha, out, NULL, false);
}

ops_status
linalg_addmm_(ops_tensor *self, const ops_tensor *mat1, const ops_tensor *mat2, ops_scalar beta, ops_scalar alpha)
{
    return la_addmm("addmm_", OPS_DTYPE_MASK_ADDMM_, self, mat1, mat2, beta, alpha, self, NULL, true);
}

ops_tensor *
linalg_bmm(const ops_tensor *self, const ops_tensor *mat2)
{
    ops_tensor *r = NULL;
    la_baddbmm("bmm", OPS_DTYPE_MASK_BMM,
               NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), NULL, &r, false, false);
    return r;
}

ops_status
linalg_bmm_out(const ops_tensor *self, const ops_tensor *mat2, ops_tensor *out)
{
    return la_baddbmm("bmm", OPS_DTYPE_MASK_BMM_OUT,
                      NULL, self, mat2, ops_la_int_scalar(0), ops_la_int_scalar(1), out, NULL, false, false);
}

ops_tensor *
linalg_baddbmm(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
               ops_scalar alpha)
{
    ops_tensor *r = NULL;
    la_baddbmm("baddbmm", OPS_DTYPE_MASK_BADDBMM, self, batch1, batch2, beta, alpha, NULL, &r, false, false);
    return r;
}

ops_status
linalg_baddbmm_out(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                   ops_scalar alpha, ops_tensor *out)
{
    return la_baddbmm("baddbmm", OPS_DTYPE_MASK_BADDBMM_OUT,
                      self, batch1, batch2, beta, alpha, out, NULL, false, false);
}

ops_status
linalg_baddbmm_(ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta, ops_scalar alpha)
{
    return la_baddbmm("baddbmm_", OPS_DTYPE_MASK_BADDBMM_, self, batch1, batch2, beta, alpha, self, NULL, true, false);
}

ops_tensor *
linalg_addbmm(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
              ops_scalar alpha)
{
    ops_tensor *r = NULL;
    la_baddbmm("addbmm", OPS_DTYPE_MASK_ADDBMM, self, batch1, batch2, beta, alpha, NULL, &r, false, true);
    return r;
}

ops_status
linalg_addbmm_out(const ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta,
                  ops_scalar alpha, ops_tensor *out)
{
    return la_baddbmm("addbmm", OPS_DTYPE_MASK_ADDBMM_OUT, self, batch1, batch2, beta, alpha, out, NULL, false, true);
}

ops_status
linalg_addbmm_(ops_tensor *self, const ops_tensor *batch1, const ops_tensor *batch2, ops_scalar beta, ops_scalar alpha)
{
    return la_baddbmm("addbmm_", OPS_DTYPE_MASK_ADDBMM_, self, batch1, batch2, beta, alpha, self, NULL, true, true);
}

ops_tensor *
linalg_mv(const ops_tensor *self, const ops_tensor *vec)
{
    ops_tensor *r = NULL;
    la_addmv("mv", OPS_DTYPE_MASK_MV, NULL, self, vec, ops_la_int_scalar(0), ops_la_int_scalar(1), NULL, &r, false);
    return r;
}

ops_status
linalg_mv_out(const ops_tensor *self, const ops_tensor *vec, ops_tensor *out)
{
    return la_addmv("mv", OPS_DTYPE_MASK_MV_OUT,
                    NULL, self, vec, ops_la_int_scalar(0), ops_la_int_scalar(1), out, NULL, false);
}

ops_tensor *
linalg_addmv(const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta, ops_scalar alpha)
{
    ops_tensor *r = NULL;
    la_addmv("addmv", OPS_DTYPE_MASK_ADDMV, self, mat, vec, beta, alpha, NULL, &r, false);
    return r;
}

ops_status
linalg_addmv_out(const ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta,
                 ops_scalar alpha, ops_tensor *out)
{
    return la_addmv("addmv", OPS_DTYPE_MASK_ADDMV_OUT, self, mat, vec, beta, alpha, out, NULL, false);
}

ops_status
linalg_addmv_(ops_tensor *self, const ops_tensor *mat, const ops_tensor *vec, ops_scalar beta, ops_scalar alpha)
{
    return la_addmv("addmv_", OPS_DTYPE_MASK_ADDMV_, self, mat, vec, beta, alpha, self, NULL, true);
}

ops_tensor *
linalg_dot(const ops_tensor *self, const ops_tensor *tensor)
{
    ops_tensor *r = NULL;
    la_dot("dot", OPS_DTYPE_MASK_DOT, self, tensor, NULL, &r);
    return r;
}

ops_status
linalg_dot_out(const ops_tensor *self, const ops_tensor *tensor, ops_tensor *out)
{
    return la_dot("dot", OPS_DTYPE_MASK_DOT_OUT, self, tensor, out, NULL);
}

/* vdot: conj(self) . other; every dtype here is real, so it is dot (PyTorch's vdot
 * calls at::dot for real dtypes, with dot's checks and messages). */
ops_tensor *
linalg_vdot(const ops_tensor *self, const ops_tensor *other)
{
    ops_tensor *r = NULL;
    la_dot("vdot", OPS_DTYPE_MASK_VDOT, self, other, NULL, &r);
    return r;
}

ops_status
linalg_vdot_out(const ops_tensor *self, const ops_tensor *other, ops_tensor *out)
{
    return la_dot("vdot", OPS_DTYPE_MASK_VDOT_OUT, self, other, out, NULL);
}

ops_tensor *
linalg_outer(const ops_tensor *self, const ops_tensor *vec2)
{
    return la_outer(self, vec2);
}

ops_status
linalg_outer_out(const ops_tensor *self, const ops_tensor *vec2, ops_tensor *out)
{
    return la_outer_out(self, vec2, out);
}

ops_tensor *
linalg_matmul(const ops_tensor *self, const ops_tensor *other)
{
    ops_tensor *r = NULL;
    la_matmul("matmul", OPS_DTYPE_MASK_MATMUL, self, other, false, NULL, NULL, &r);
    return r;
}

ops_status
linalg_matmul_out(const ops_tensor *self, const ops_tensor *other, ops_tensor *out)
{
    return la_matmul("matmul", OPS_DTYPE_MASK_MATMUL_OUT, self, other, false, NULL, out, NULL);
}

ops_tensor *
linalg_linear(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias)
{
    return la_linear(OPS_DTYPE_MASK_LINEAR, input, weight, bias);
}

/* What the drivers of linear algebra and convolution (kernels/linalg.c,
 * kernels/conv.c) share with the device loops behind their stubs (kernels/linalg.h,
 * kernels/conv.h): the description of a product as one batched GEMM and the plan of
 * which operands the BLAS (OpenBLAS, cuBLAS) can read in place, and the geometry of a
 * convolution.  The drivers check everything on the host before anything is written,
 * so both backends fail with the same messages.  C and C++ (kernels/cuda/) clean. */
#ifndef OPS_LINALG_COMMON_H
#define OPS_LINALG_COMMON_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops_internal.h"
#include "ops_scalar_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GEMM description ------------------------------------------------------------- */

typedef struct ops_la_operand {
    char *data;                /* element [0, 0] of batch 0 */
    int64_t bst[OPS_MAX_DIMS]; /* batch strides in elements; 0 where broadcast */
    int64_t rs, cs;            /* row and column strides in elements */
} ops_la_operand;

typedef struct ops_gemm_desc {
    const char *op;
    ops_dtype dt;
    int nbd;                   /* batch dims */
    int64_t bsz[OPS_MAX_DIMS]; /* their sizes */
    int64_t nbatch;            /* their product */
    int64_t m, n, k;
    ops_la_operand a, b; /* A (m x k) @ B (k x n) */
    ops_la_operand c;    /* the result, m x n per batch */
    ops_la_operand s;    /* self, added times beta (has_s) */
    bool has_s;          /* a self is given and beta != 0 (beta == 0 ignores it, NaN included) */
    bool sum_batch;      /* addbmm: the batches are summed into one m x n result */
    ops_scalar alpha, beta;
} ops_gemm_desc;

/* Offset in elements of batch b (row-major over bsz) for batch strides bst; the CUDA
 * kernels take the description by value and call it on the device. */
static inline OPS_HOST_DEVICE int64_t
ops_la_batch_offset(const ops_gemm_desc *g, const int64_t *bst, int64_t b)
{
    int64_t off = 0;
    if (g->nbatch == 0) /* addbmm over no batches: only its result, no batch dims */
        return 0;
    for (int d = g->nbd - 1; d >= 0; d--) {
        off += (b % g->bsz[d]) * bst[d];
        b /= g->bsz[d];
    }
    return off;
}

/* How a BLAS addresses a rows x cols matrix with strides (rs, cs): row-major with
 * leading dimension *ld (trans false), or column-major (trans true).  Strides of
 * size-1 dims do not matter and are normalised.  False when neither fits. */
bool ops_la_blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int *ld);

/* What a backend does with g, decided before anything is allocated or written. */
typedef struct ops_gemm_plan {
    bool resize;         /* out gets the result's shape */
    bool empty;          /* nothing to compute (only out's shape) */
    bool blas;           /* the BLAS runs it (else the backend's loop kernel) */
    bool pack_a, pack_b; /* the BLAS cannot address A (B): a contiguous copy first */
    bool tmp_c;          /* C goes to a contiguous buffer, copied into out at the end */
    int64_t nbc;         /* result matrices (1 for addbmm) */
    int64_t sst[OPS_MAX_DIMS]; /* self's strides broadcast to the result */
} ops_gemm_plan;

/* Checks self (broadcastable) and out (dtype, internal overlap), sets g->nbatch and
 * g->has_s and fills *p.  blas_dtype: the backend's BLAS takes g->dt. */
ops_status ops_gemm_plan_make(ops_gemm_desc *g, const ops_tensor *a_t, const ops_tensor *b_t,
                              const ops_tensor *self, const ops_tensor *out, int rnd, const int64_t *rsz,
                              const int *cmap, bool blas_dtype, ops_gemm_plan *p);

/* After the result tensor dst exists and the packed copies are made: points g->c at
 * tmp (contiguous, when the plan has one) or at dst, and g->s at self; *oc is dst's
 * view as an operand (where a tmp result is copied to). */
void ops_gemm_bind(ops_gemm_desc *g, const ops_gemm_plan *p, const int *cmap, ops_tensor *dst, char *tmp,
                   const ops_tensor *self, ops_la_operand *oc);

/* o: a contiguous rows x cols buffer per batch of g (batched) or one for all. */
void ops_la_contiguous_operand(const ops_gemm_desc *g, bool batched, int64_t rows, int64_t cols, char *data,
                               ops_la_operand *o);

/* matmul's (b, m, k) @ (k, n) folded into one (b * m, k) @ (k, n) where the BLAS can
 * still address A and C (PyTorch folds it so). */
void ops_la_fold_batches(ops_gemm_desc *g);

bool ops_la_same_view(const ops_tensor *a, const ops_tensor *b);

/* An integer Scalar without C's compound literal (C++ has none). */
static inline ops_scalar
ops_la_int_scalar(int64_t v)
{
    ops_scalar s;
    s.kind = OPS_SCALAR_INT;
    s.v.i = v;
    return s;
}

/* ---- convolution ------------------------------------------------------------------ */

#define OPS_CONV_MAX_SP 2 /* spatial dims handled: 1 or 2 */

typedef struct ops_conv_geom {
    const char *op;
    int nsp;         /* spatial dims of the op (1 or 2) */
    bool transposed; /* conv_transpose */
    ops_dtype dt;    /* input dtype; ct is its compute type (float32 or float64) */
    ops_dtype ct;
    int64_t n, cin, ih, iw; /* input (height 1 for 1-D) */
    int64_t cout, kh, kw, groups;
    int64_t sh, sw, dh, dw; /* stride, dilation */
    int64_t pt, pb, pl, pr; /* padding top, bottom, left, right */
    int64_t oh, ow;         /* output */
    int64_t xs[4];          /* input strides (n, c, h, w) in elements */
} ops_conv_geom;

/* A tensor's dims as (n, c, h, w) sizes and strides (1-D: h of size 1). */
void ops_conv_as4(const ops_tensor *t, int nsp, int64_t *sz, int64_t *st);

#ifdef __cplusplus
}
#endif

#endif /* OPS_LINALG_COMMON_H */

/* Internal: the reduction family (kernels/reduce.c: sum, mean, prod, amax, argmax,
 * var, norm, all, ...; kernels/reduce_dim.c: softmax, log_softmax and the scans), one
 * driver for every device; the schema names the drivers for `CPU, CUDA`.  A device
 * brings only the element loops, through the stubs below (docs/backends.md). */
#ifndef OPS_KERNELS_REDUCE_H
#define OPS_KERNELS_REDUCE_H

#include "kernels/ops_reduce_common.h"
#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kind over the dims marked in mask of src (already in the dtype computed in; any
 * strides) into the contiguous results res (and res2: var_mean's means, max.dim's
 * indices, aminmax's maxima; NULL otherwise), allocated on src's device with the
 * driver's output shape.  arg is var/std's correction or norm's order.  The reduced
 * extent may be 0 and res may be empty.  CPU: kernels/cpu/reduce.c; CUDA:
 * kernels/cuda/reduce.cu (leaves the work queued on the device's stream). */
OPS_DECLARE_STUB(reduce_loop, ops_status,
                 (const char *op, red_kind kind, const ops_tensor *src, const bool *mask, double arg,
                  ops_tensor *res, ops_tensor *res2));

/* softmax, log_softmax, cumsum, cumprod along the lines (outer x len x inner, inner
 * apart; none of them 0) of the contiguous src into the contiguous res of the same
 * shape and dtype.  CPU: kernels/cpu/reduce_dim.c; CUDA: kernels/cuda/reduce.cu. */
OPS_DECLARE_STUB(reduce_dim_loop, ops_status,
                 (const char *op, dim_kind kind, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                  ops_tensor *res));

/* cummax (is_max) / cummin along the lines of the contiguous src likewise: values into
 * res, int64 positions into idx.  CPU: kernels/cpu/reduce_dim.c; CUDA:
 * kernels/cuda/scan.cu. */
OPS_DECLARE_STUB(reduce_cumext_loop, ops_status,
                 (const char *op, bool is_max, const ops_tensor *src, int64_t outer, int64_t len, int64_t inner,
                  ops_tensor *res, ops_tensor *idx));

/* _softmax_backward_data (log false) / _log_softmax_backward_data (log true) along the
 * lines of the contiguous g (the incoming gradient) and y (the forward's result), of
 * the same shape and dtype, into res (kernels/reduce_dim.c).  CPU:
 * kernels/cpu/reduce_dim.c; a device without it takes the formula as ops. */
OPS_DECLARE_STUB(reduce_softmax_bwd_loop, ops_status,
                 (const char *op, bool log, const ops_tensor *g, const ops_tensor *y, int64_t outer, int64_t len,
                  int64_t inner, ops_tensor *res));

/* ---- driver pieces shared by kernels/reduce*.c -------------------------------------------- */

/* Checks an out= tensor before anything is allocated: its dtype (when want is not
 * OPS_DTYPE_NONE) and, when it has the result's shape (nd, sizes), that its elements
 * do not share memory. */
ops_status red_check_out(const char *op, const ops_tensor *out, ops_dtype want, int nd, const int64_t *sizes);
/* The two outs of an op with two returns: each as red_check_out, and that they do not
 * share memory. */
ops_status red_check_out2(const char *op, const ops_tensor *out0, ops_dtype want0, const ops_tensor *out1,
                          ops_dtype want1, int nd, const int64_t *sizes);
/* self converted to dtype dt (a new contiguous tensor on self's device), or a new
 * reference to self when it already has dt and contiguous is false. */
ops_tensor *red_convert(const char *op, const ops_tensor *self, ops_dtype dt, bool contiguous);
/* Writes the contiguous result r into out (resized if its shape differs): the last
 * step, after every allocation but out's own resize. */
ops_status red_finish_out(const char *op, ops_tensor *out, const ops_tensor *r);
/* r0 into out0 and r1 into out1: both resized before either is written; a failure
 * leaves both as they were. */
ops_status red_finish_out2(const char *op, ops_tensor *out0, const ops_tensor *r0, ops_tensor *out1,
                           const ops_tensor *r1);
/* A family's last step (reduce_family_finish, scan_family_finish): the results *res
 * (and *res2, for two returns) written into out (and out2) when given, else handed to
 * *result (and *result2), their references moved (*res set to NULL). */
ops_status red_deliver(const char *op, ops_tensor **res, ops_tensor **res2, ops_tensor *out, ops_tensor *out2,
                       ops_tensor **result, ops_tensor **result2);

/* ---- the structured reduction family (`meta: reduction`, docs/codegen.md) -----------------
 *
 * The generated glue of every form of a reduction (functional, out=, dim, dim out=,
 * dim=None) runs the family's meta step, reduce_family_meta, then the op's one kernel
 * (`ops_status k(ops_reduce *r, <the op's own arguments>)`, declared by the schema),
 * then reduce_family_finish.  The kernel sees only what the meta made: a kind's kernel
 * runs the element loops (reduce_family_loop), an op outside the kinds (`reduce: [rows,
 * ...]`: ptp, docs/adding-an-op.md) computes its rows itself. */

/* rules of an op outside the kinds (or-ed; `reduce: [rows, floating, no_identity]`), and norm's */
#define REDUCE_META_FLOATING 1u    /* self must be floating: "<op>: expected a floating point input, but got int64" */
#define REDUCE_META_NO_IDENTITY 2u /* reducing nothing is an error (amax's messages) */
/* RED_NORM's dtype messages are torch.linalg.vector_norm's (`reduce: [norm, linalg]`) */
#define REDUCE_META_LINALG 4u
/* RED_AMAX/RED_AMIN as torch.max()/min() (`reduce: [amax, cast_out]`): out= may have any
 * dtype the result (self's) can be cast to, written cast by reduce_family_finish; the
 * refusal of an empty reduction reads "max(): ...", as max.dim's */
#define REDUCE_META_CAST_OUT 8u

typedef struct ops_reduce {
    const char *op;        /* the schema name, for messages */
    red_kind kind;         /* the op's rule (RED_ROWS: its own rows) */
    ops_device device;     /* self's */
    /* the call's arguments, borrowed for its duration (a kernel's own checks: norm's) */
    const ops_tensor *self;
    const ops_int_list *dims; /* as given: NULL or empty is every dim */
    ops_dtype dtype;          /* as given: OPS_DTYPE_NONE is None */
    bool mask[OPS_MAX_DIMS]; /* the reduced dims of self */
    /* a kind: self in the dtype computed in (any strides).  RED_ROWS: self (its dtype),
     * contiguous, nout rows of nred elements: the reduced elements of output o in row o,
     * in their row-major order */
    ops_tensor *src;
    ops_tensor *res;  /* contiguous, the output's shape and dtype, on device: nout elements */
    ops_tensor *res2; /* the second result (var_mean's means, max.dim's indices, aminmax's
                         maxima), or NULL */
    int64_t nout, nred;
} ops_reduce;

/* The meta step: dims (NULL or empty: all) against self (out of range, repeated), the
 * rule's dtypes (the result's from dtype, NONE: the op's rule, and out's), its identity
 * checks, out= (dtype, no internal overlap; out2 too, and no overlap of the two), then
 * src and the results.  two: the op has a second result.  On failure r holds no tensor. */
ops_status reduce_family_meta(ops_reduce *r, const char *op, red_kind kind, unsigned rules, const ops_tensor *self,
                              const ops_int_list *dims, bool keepdim, ops_dtype dtype, const ops_tensor *out,
                              const ops_tensor *out2, bool two);
/* A kind's loops, through the reduce_loop stub of r's device; arg is var/std's
 * correction or norm's order (1.0 where the kind has none). */
ops_status reduce_family_loop(ops_reduce *r, double arg);
/* The last step: when st is OPS_OK, r's results go into out/out2 (resized when their
 * shape differs; both resized before either is written) or to *result and *result2 (out
 * NULL); r's tensors are released either way.  Returns st, or the error of the write. */
ops_status reduce_family_finish(ops_reduce *r, ops_status st, ops_tensor *out, ops_tensor *out2, ops_tensor **result,
                                ops_tensor **result2);

/* ---- the structured scan family (`meta: scan`, docs/codegen.md "Scans") ------------------
 *
 * softmax, log_softmax, cumsum, cumprod, cummax, cummin: an op along one dim whose
 * result has self's shape.  The generated glue of every form (functional, out=, in-place)
 * runs scan_family_meta, the op's one kernel (`ops_status k(ops_scan *s)`), then
 * scan_family_finish; the op's rule is its `scan:` kind. */

typedef enum scan_kind {
    SCAN_SOFTMAX,     /* floating dtype (dtype=, else self's); out= must have it */
    SCAN_LOG_SOFTMAX, /* likewise */
    SCAN_CUMSUM,      /* dtype=, else out='s, else int64 for integral and bool self, else self's */
    SCAN_CUMPROD,     /* likewise */
    SCAN_CUMMAX,      /* values (self's dtype) and int64 indices */
    SCAN_CUMMIN,      /* likewise */
} scan_kind;

typedef struct ops_scan {
    const char *op;    /* the schema name, for messages */
    scan_kind kind;
    ops_device device; /* self's */
    /* the lines along the (wrapped) dim: outer of them before it, len elements each,
     * inner apart */
    int64_t outer, len, inner;
    ops_tensor *src;  /* self, contiguous, in the dtype computed in */
    ops_tensor *res;  /* contiguous, self's shape, the result's dtype, on device */
    ops_tensor *res2; /* cummax/cummin's int64 indices, or NULL */
} ops_scan;

/* The meta step: dim against self, the kind's dtype rule and refusals (the computed
 * dtype from dtype, NONE: the rule; out's), out= checks (dtype, no internal overlap; two
 * outs not overlapping), then src and the results.  inplace: out is self, written in
 * place (a dtype= must be self's: "Bad in-place call").  On failure s holds no tensor. */
ops_status scan_family_meta(ops_scan *s, const char *op, scan_kind kind, const ops_tensor *self, int64_t dim,
                            ops_dtype dtype, const ops_tensor *out, const ops_tensor *out2, bool inplace);
/* The last step: when st is OPS_OK, s's results go into out/out2 (resized when their
 * shape differs; both before either is written) or to *result and *result2 (out NULL);
 * s's tensors are released either way.  Returns st, or the error of the write. */
ops_status scan_family_finish(ops_scan *s, ops_status st, ops_tensor *out, ops_tensor *out2, ops_tensor **result,
                              ops_tensor **result2);

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_REDUCE_H */

/* The tensor iterator: the "meta" half of every elementwise op (DESIGN.md §5).
 *
 * A structured op's generated glue fills an ops_meta_args from the schema, calls the
 * op's meta family (ops_meta_<family>, named by `meta:` in native_functions.yaml),
 * then the device kernel with the built iterator, then ops_iter_finish():
 *
 *     ops_iter it;
 *     st = ops_meta_binary(&it, &args);      // broadcast, dtypes, out= checks, alloc
 *     if (st == OPS_OK) st = kernel(&it, self, other, alpha);   // typed loops
 *     if (st == OPS_OK) st = ops_iter_finish(&it);             // write-back, version
 *     result = ops_iter_take_result(&it);                       // functional only
 *     ops_iter_release(&it);                                    // always
 *
 * The meta step broadcasts the inputs, computes the common (computation) dtype,
 * checks out= / in-place rules, allocates the functional output in the layout of the
 * first input, and reorders + coalesces dims so kernels only see 1-D strided runs.
 * Nothing is written to any user tensor before the kernel runs, and a failed meta
 * leaves every argument untouched. */
#ifndef OPS_ITER_H
#define OPS_ITER_H

#include "ops_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPS_ITER_MAX_INPUTS 4
#define OPS_ITER_MAX_OPERANDS 5 /* one output + inputs */

typedef enum ops_iter_mode {
    OPS_ITER_FUNCTIONAL, /* allocate a new output */
    OPS_ITER_INPLACE,    /* the output is self (args.out); self may not broadcast */
    OPS_ITER_OUT,        /* the output is the out= tensor (args.out) */
} ops_iter_mode;

/* What the generated glue knows from the schema, handed to a meta family. */
typedef struct ops_meta_args {
    const char *op;    /* name for messages: "add", "add_", ... */
    ops_iter_mode mode;
    ops_tensor *out;   /* out= tensor or self for in-place; NULL for functional */
    /* Tensor and Tensor? arguments other than out, in schema order (NULL = None). */
    int ntensors;
    const ops_tensor *tensors[OPS_ITER_MAX_INPUTS];
    const char *names[OPS_ITER_MAX_INPUTS];
    /* Scalar and Scalar? arguments in schema order (NULL = None); metas whose
     * result dtype depends on scalars (clamp) read them. */
    int nscalars;
    const ops_scalar *scalars[OPS_ITER_MAX_INPUTS];
    /* str and str? arguments in schema order (NULL = None); div's rounding_mode. */
    int nstrs;
    const char *strs[2];
} ops_meta_args;

typedef struct ops_iter {
    const char *op;
    ops_iter_mode mode;
    int noutputs; /* operands [0, noutputs) are outputs, the rest inputs */
    int noperands;
    /* Owned references to what the loops read and write (temporaries included). */
    ops_tensor *operands[OPS_ITER_MAX_OPERANDS];
    ops_dtype common_dtype; /* the computation dtype */
    ops_device device;
    /* Broadcast shape, in the tensors' own dim order. */
    int shape_ndim;
    int64_t shape[OPS_MAX_DIMS];
    int64_t numel;
    /* Loop geometry after reordering and coalescing; dim 0 is the innermost. */
    int ndim;
    int64_t loop_shape[OPS_MAX_DIMS];
    int64_t loop_strides[OPS_ITER_MAX_OPERANDS][OPS_MAX_DIMS]; /* bytes */
    char *data[OPS_ITER_MAX_OPERANDS];
    /* Result delivery (see ops_iter_finish). */
    ops_tensor *result;    /* functional output, owned until taken */
    ops_tensor *writeback; /* user out= / self to copy operands[0] into, when they differ */
} ops_iter;

/* ---- meta families: each is `meta: <family>` in native_functions.yaml ---- */

/* Inputs promoted to result_type; output of that dtype (add, mul, maximum, ...). */
OPS_API ops_status ops_meta_binary(ops_iter *it, const ops_meta_args *a);
/* As binary, integral/bool results computed in the default float dtype (div, atan2). */
OPS_API ops_status ops_meta_binary_float(ops_iter *it, const ops_meta_args *a);
/* Inputs promoted to result_type, output bool (eq, lt, logical_and, isnan, ...). */
OPS_API ops_status ops_meta_bool_out(ops_iter *it, const ops_meta_args *a);
/* One input, output of its dtype (neg, abs, floor, ...). */
OPS_API ops_status ops_meta_unary(ops_iter *it, const ops_meta_args *a);
/* One input; integral/bool computed in the default float dtype (sqrt, exp, sin, ...). */
OPS_API ops_status ops_meta_unary_float(ops_iter *it, const ops_meta_args *a);
/* where(condition, self, other): condition must be bool, self/other promoted. */
OPS_API ops_status ops_meta_where(ops_iter *it, const ops_meta_args *a);
/* div with rounding_mode (strs[0]): None is binary_float, "trunc"/"floor" binary. */
OPS_API ops_status ops_meta_div_mode(ops_iter *it, const ops_meta_args *a);
/* clamp: result_type over self and the (optional) Scalar or Tensor bounds. */
OPS_API ops_status ops_meta_clamp(ops_iter *it, const ops_meta_args *a);

/* After a successful kernel: copy into args.out when a temporary was used (dtype
 * differs), and bump the version of the written user tensor. */
OPS_API ops_status ops_iter_finish(ops_iter *it);
/* The functional result (new reference), or NULL if none. */
OPS_API ops_tensor *ops_iter_take_result(ops_iter *it);
/* Drop every reference the iterator holds.  Safe after any failure, and twice. */
OPS_API void ops_iter_release(ops_iter *it);

#ifdef __cplusplus
}
#endif
#endif /* OPS_ITER_H */

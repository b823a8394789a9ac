/* The tensor iterator: the "meta" half of every elementwise op.
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
 * checks out= / in-place rules, allocates the functional output, and reorders +
 * coalesces dims so kernels only see 1-D strided runs.  Nothing is written to any
 * user tensor before the kernel runs, and a failed meta leaves every argument
 * untouched (an empty out= is resized only by ops_iter_finish, after the kernel).
 *
 * Family rules (what each ops_meta_* computes):
 *   common dtype   ops_result_type over the Tensor arguments (wrapped numbers promote by
 *                  category only), then the family's rule (binary_float/unary_float:
 *                  integral and bool become the default float dtype).
 *   inputs         every input whose dtype differs from the common dtype is converted
 *                  into a temporary (one-element inputs into a buffer inside the
 *                  iterator, without allocating), so kernels see one dtype for all
 *                  inputs; where's condition stays bool.
 *   result dtype   the common dtype; bool for bool_out.
 *   FUNCTIONAL     a new output of the broadcast shape whose memory order follows the
 *                  operands' strides (PyTorch's rule: the first input's layout when it
 *                  decides, row-major when nothing does).
 *   OUT            result dtype must be castable to out's dtype ("add: result type
 *                  float32 can't be cast to the desired output type int64"); out must
 *                  have the broadcast shape unless it is empty (then it is resized);
 *                  out may not overlap itself, nor overlap an input other than by being
 *                  exactly the same view.  When out's dtype differs from the result
 *                  dtype, or out is empty, the kernel writes a temporary that
 *                  ops_iter_finish copies (converting, resizing) into out.
 *   INPLACE        as OUT with out = self, and the broadcast shape must be self's shape
 *                  ("add_: output with shape [3] doesn't match the broadcast shape [2, 3]").
 *
 * Loop geometry: size-1 dims dropped, dims sorted so that dim 0 is the innermost in
 * memory (the output's strides first, inputs break ties), adjacent dims coalesced
 * when every operand allows it; strides in bytes (0 for broadcast, may be negative). */
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

/* The input dtype an entry's `dtypes:` declaration is about (docs/codegen.md): the
 * promoted dtype of the tensor inputs from a->tensors[first] on (where: 1, past the
 * condition), with the Scalars too when `scalars` (clamp, as its meta), before a *_float
 * family converts integers.  OPS_DTYPE_NONE when there are no inputs. */
OPS_API ops_dtype ops_meta_input_dtype(const ops_meta_args *a, int first, bool scalars);
/* The glue's check of a declared dtype set (mask of OPS_DTYPE_BIT) before dispatch:
 * OPS_ERR_DTYPE "op: <message>" when message is not NULL (its "{dtype}", if any, the
 * refused dtype's name), else ops_fail_dtype's
 * "op: dtype X is not supported (supported: ...)".  OPS_DTYPE_NONE passes. */
OPS_API ops_status ops_check_dtype_declared(const char *op, ops_dtype dt, unsigned mask, const char *message);

typedef struct ops_iter {
    const char *op;
    ops_iter_mode mode;
    int noutputs; /* operands [0, noutputs) are outputs, the rest inputs */
    int noperands;
    /* What the loops read and write.  Inputs are the caller's tensors (borrowed: the
     * caller keeps them alive for the call) unless replaced by a converted temporary;
     * operands whose bit is set in `owned` are references the iterator holds.  An
     * input converted into `scalar_buf` keeps its original tensor here, so kernels
     * read operand dtypes from `dtypes`, never from operands[i]->dtype. */
    ops_tensor *operands[OPS_ITER_MAX_OPERANDS];
    unsigned owned;
    /* dtype of each operand as the loops see it (data[i] points at this type). */
    ops_dtype dtypes[OPS_ITER_MAX_OPERANDS];
    /* Operands whose data[] is host memory holding one element (a converted one-element
     * input in scalar_buf, or a CPU 0-dim tensor taking part in a CUDA op, as PyTorch
     * allows): bit i for operand i, loop stride 0.  A CUDA kernel passes the value by
     * argument instead of reading data[i] on the device; CPU kernels ignore the mask
     * and read data[] as usual. */
    unsigned host_scalars;
    ops_dtype common_dtype; /* the computation dtype (all inputs but where's condition) */
    ops_dtype result_dtype; /* dtype of operand 0: common, or bool for bool_out */
    ops_device device;
    /* Broadcast shape, in the tensors' own dim order. */
    int shape_ndim;
    int64_t shape[OPS_MAX_DIMS];
    int64_t numel; /* elements the loops visit (the broadcast numel; nullary: see below) */
    /* Elements below which the loops stay on one thread; 0: OPS_GRAIN_SIZE (a copy's
     * or an add's cost per element).  ops_iter_set_cost lowers it for costlier ops. */
    int64_t grain;
    /* Loop geometry after reordering and coalescing; dim 0 is the innermost.  Always
     * ndim >= 1 (a 0-dim or one-element op is one run of length 1). */
    int ndim;
    int64_t loop_shape[OPS_MAX_DIMS];
    int64_t loop_strides[OPS_MAX_DIMS][OPS_ITER_MAX_OPERANDS]; /* [dim][operand], bytes */
    char *data[OPS_ITER_MAX_OPERANDS];
    /* Result delivery (see ops_iter_finish). */
    ops_tensor *result;    /* functional output, owned until taken */
    ops_tensor *writeback; /* user out= / self to copy operands[0] into, when they differ */
    ops_tensor *written;   /* user tensor whose version ops_iter_finish bumps */
    bool resize_out;       /* writeback is an empty out= that finish resizes first */
    /* One-element inputs converted to the common dtype live here, not on the heap. */
    union {
        int64_t i;
        double f;
    } scalar_buf[OPS_ITER_MAX_OPERANDS];
} ops_iter;

/* ---- meta families: each is `meta: <family>` in native_functions.yaml ---- */

/* Inputs promoted to result_type; output of that dtype (add, mul, maximum, lerp, ...). */
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
/* clamp: result_type over self and the (optional) Scalar or Tensor bounds; operands
 * are the output, self, then whichever Tensor bounds are present (min before max). */
OPS_API ops_status ops_meta_clamp(ops_iter *it, const ops_meta_args *a);

/* ---- builders for kernels that drive the iterator themselves -------------- */

/* The machinery under every meta family: the non-NULL a->tensors are the inputs;
 * inputs are converted to compute_dtype (OPS_DTYPE_NONE: each keeps its own) except
 * those whose bit (by position in a->tensors) is set in keep_mask; operand 0 has
 * result_dtype.  A family computes the dtypes and calls this. */
OPS_API ops_status ops_iter_build(ops_iter *it, const ops_meta_args *a, ops_dtype compute_dtype,
                                  ops_dtype result_dtype, unsigned keep_mask);

/* An iterator over out alone (fill_, zero_, arange on any strided tensor): operand 0
 * is out, of out's dtype; ops_iter_finish bumps out's version.  Dims along which out
 * repeats itself (stride 0) are walked once: a nullary kernel writes the same value
 * there anyway. */
OPS_API ops_status ops_iter_build_nullary(ops_iter *it, const char *op, ops_tensor *out);
/* An iterator that reads src broadcast to dst's shape, each operand in its own dtype
 * (copy_): "op: output with shape [3] doesn't match the broadcast shape [2, 3]" when
 * src does not broadcast to dst.  No overlap checks (the caller decides). */
OPS_API ops_status ops_iter_build_copy(ops_iter *it, const char *op, ops_tensor *dst,
                                       const ops_tensor *src);
/* Copy src into dst converting dtypes (src broadcast to dst's shape; dst must not
 * overlap src).  Does not bump dst's version.  Any devices: CPU<->CPU here, the rest
 * through the stub copy_values of the device that is not the host (kernels/copy.h;
 * synchronous); OPS_ERR_DEVICE in a CPU build. */
OPS_API ops_status ops_copy_values(const char *op, ops_tensor *dst, const ops_tensor *src);
/* The checks copy_ makes on every device before it writes (one function, so the CPU
 * and CUDA copies fail alike): src broadcasts to self's shape, self has no internal
 * overlap.  When src partially overlaps self, *snapshot is a new contiguous copy of
 * src (on src's device) to read from instead; else NULL. */
OPS_API ops_status ops_copy_prepare(const char *op, ops_tensor *self, const ops_tensor *src,
                                    ops_tensor **snapshot);
/* The out= step of an op that computes its result first: r (a new reference, or NULL
 * after a failure, which is passed on) is copied into out, which is resized when its
 * shape differs; an unsafe cast or an out that overlaps itself is an error with out
 * untouched.  Bumps out's version.  Releases r. */
OPS_API ops_status ops_write_out(const char *op, ops_tensor *r, ops_tensor *out);
/* The out= memory and dtype rules of an entry's `out_checks:` (run by the generated
 * glue before dispatch, so every device refuses alike and nothing is written): out
 * (named `written` in the message: "out=", or "self" for an in-place entry) may share
 * no element with args[i], or, when bit i of same_view_ok is set, only be that very
 * view (the element-for-element reads of gather's index); when dtype_of is not NULL,
 * out must have its dtype (no cast).  NULL args are skipped. */
OPS_API ops_status ops_check_out_args(const char *op, const char *written, const ops_tensor *out, int n,
                                      const ops_tensor *const *args, const char *const *names, unsigned same_view_ok,
                                      const ops_tensor *dtype_of, const char *dtype_name);
/* ops_check_out_args's overlap rule for each tensor of a Tensor[] argument (cat's). */
OPS_API ops_status ops_check_out_list(const char *op, const char *written, const ops_tensor *out,
                                      ops_tensor_list list, const char *name, bool same_view_ok);
/* Convert n elements between any two dtypes: dst[i*dst_stride] = src[i*src_stride]
 * (byte strides).  Same dtype copies the bytes; float->integral out of range or NaN
 * gives the type's minimum (x86's "integer indefinite", as PyTorch on x86) without
 * undefined behaviour; narrowing integers wrap; float16/bfloat16 round to nearest
 * even.  The single conversion routine every copy and dtype promotion goes through. */
OPS_API void ops_convert_run(ops_dtype dst_dt, char *dst, int64_t dst_stride, ops_dtype src_dt,
                             const char *src, int64_t src_stride, int64_t n);

/* Strides for a new tensor with t's sizes in t's memory order, when t is
 * non-overlapping and dense with positive strides (PyTorch's preserve_format);
 * false (strides untouched) means "use contiguous". */
OPS_API bool ops_dense_strides_like(const ops_tensor *t, int64_t *strides);

/* ---- after the kernel ---------------------------------------------------- */

/* Put it in the empty state ops_iter_release() accepts (every meta and builder
 * starts with this, so release is safe whatever they return). */
OPS_API void ops_iter_init(ops_iter *it, const char *op, ops_iter_mode mode);
/* After a successful kernel: resize an empty out= and copy the result into it when
 * a temporary was used (dtype differs, or out= was empty), and bump the version of
 * the written user tensor. */
OPS_API ops_status ops_iter_finish(ops_iter *it);
/* The functional result (new reference), or NULL if none. */
OPS_API ops_tensor *ops_iter_take_result(ops_iter *it);
/* Drop every reference the iterator holds.  Safe after any failure, and twice. */
OPS_API void ops_iter_release(ops_iter *it);

/* Number of tasks a loop over the iterator splits into: 1 below the iterator's grain
 * (OPS_GRAIN_SIZE elements unless ops_iter_set_cost lowered it; no OpenMP region is
 * entered), else min(threads, ceil(numel / grain)). */
OPS_API int ops_iter_num_tasks(const ops_iter *it);

/* Cost per element of an op's loop, relative to a copy or an add (which are bound by
 * memory): a loop splits across threads from OPS_GRAIN_SIZE / cost elements on, so a
 * transcendental, which spends tens of cycles per element, pays for a parallel region
 * at far fewer elements than a copy.  Metas set it for their family (unary_float:
 * OPS_COST_MATH); a kernel may set it before its loop.  Never changes a result: the
 * loops give the same bits however the elements are split. */
enum {
    OPS_COST_MEMORY = 1, /* copy, add, mul, compare: the default */
    OPS_COST_MATH = 8,   /* exp, log, tanh, sin, erf, pow...: vector math, ~10-40 cycles */
    OPS_COST_HEAVY = 32, /* scalar libm loops, special functions */
};
OPS_API void ops_iter_set_cost(ops_iter *it, int cost);

#ifdef __cplusplus
}
#endif
#endif /* OPS_ITER_H */

/* The conformance runner's shared declarations: its run state (runner.c), the
 * checking helpers (runner_support.c), the CPU families (runner_families.c), the
 * gradients (runner_grad.c) and the CUDA family (runner_cuda.c).  One program: these
 * are the seams of one file, split to keep each readable (docs/conformance.md). */
#ifndef CONFORMANCE_RUNNER_H
#define CONFORMANCE_RUNNER_H

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases.h"
#include "ops_autograd.h"

/* The formula tables of ops/derivatives.yaml (generated ops_autograd_gen.c), declared
 * here rather than through the umbrella ops_autograd_gen.h: that header includes every
 * family's shard, so the runner's files would be recompiled by every op added
 * (docs/codegen.md "The edit loop").  The declarations are the umbrella's. */
OPS_INTERNAL extern const char *const ops_autograd_formula_entries[];
OPS_INTERNAL extern const int ops_autograd_num_formula_entries;
OPS_INTERNAL extern const char *const ops_autograd_formula_inputs[];
OPS_INTERNAL extern const char *const ops_autograd_formula_outputs[];

enum { MAX_FAULTS = 64 }; /* injected allocation failures tried per call before giving up */

/* ---- run state (runner.c) ---------------------------------------------------- */

typedef struct run_counts {
    long runs;     /* op x dtype x variant runs whose result was checked */
    long errors;   /* expected errors checked (per form) */
    long faults;   /* injected allocation failures */
    long cuda_skipped;
    long cuda_run;
    long cuda_grads; /* gradient comparisons cuda:0 vs cpu */
    long grads;    /* gradcheck runs (each with its gradgradcheck unless skipped) */
    long gradgrad_skipped; /* double backward not implemented for the op's backward */
    long grad_not_implemented; /* the formula refuses the case (a not_implemented branch) */
} run_counts;

extern case_file cf;
extern int *selected;
extern int nselected;
extern uint64_t runner_seed;
extern bool runner_values_only; /* --values: no allocation-failure injection */
extern int nregistry;
extern bool *covered;               /* by by_ptr's index: a checked call of the entry ran */
extern const ops_op_info **by_ptr; /* registry entries sorted by address */
extern run_counts counts;
extern bool *grad_checked;  /* by formula entry: some gradcheck ran */
extern bool *grad_eligible; /* by formula entry: the selection has a value case of its op */
extern bool *no_formula;    /* by by_ptr index: differentiable (a floating result from an input
                      * requiring grad) but no formula in ops/derivatives.yaml */
extern bool *has_f64_case;  /* by by_ptr's index: the op has a float64 value case */
extern const char *cuda_skip_reason;
extern bool *cuda_missing; /* by by_ptr index: some call found no CUDA kernel */
extern bool backend_only;  /* --backend cuda: only the CUDA family (and the CPU calls it needs) */

/* ---- shared types ------------------------------------------------------------- */

/* Fail the current Check test with the case's description and a reason. */
#define FAIL(c, op, args, variant, ...)                                                \
    do {                                                                              \
        char desc_[4096], why_[1024];                                                 \
        describe(desc_, sizeof desc_, (c), (op), (args), (variant));                  \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                     \
        ck_abort_msg("%s\n  -> %s", desc_, why_);                                     \
    } while (0)

typedef enum { MAP_SAME, MAP_OUTER, MAP_INNER } index_map;

/* What a call returned: rets[0..n-1] as the boxed call filled them (new references; a
 * Tensor[] return owns its elements and array, which ops_ivalue_release frees). */
typedef struct result {
    int n;
    ops_ivalue v[MAX_RETS];
} result;

typedef enum {
    LAY_CONTIGUOUS,
    LAY_STRIDED,
    LAY_TRANSPOSED,
    LAY_BROADCAST, /* size-1 and missing leading dims expanded to the result's (stride 0) */
    LAY_OUTER0,    /* an extra outer dim of size 2, stride 0 (result: the expected twice) */
    LAY_INNER0,    /* an extra inner dim of size 2, stride 0 (every element twice) */
    LAY_RANDOM,
} lay_kind;

extern const char *const lay_names[];

typedef struct argset {
    ops_ivalue v[MAX_ARGS];
    guarded g[MAX_ARGS];
    ops_tensor *view[MAX_ARGS];
    bool has[MAX_ARGS];
    /* Tensor[] arguments: a guarded copy of each element, and the array passed */
    guarded *lg[MAX_ARGS];
    const ops_tensor **ldata[MAX_ARGS];
    int64_t llen[MAX_ARGS];
    int changed; /* tensors not in their plain contiguous layout */
} argset;

enum { MAX_GRAD_INPUTS = 64 }; /* floating tensors of a case, list elements counted one by one */

/* One function for ops_gradcheck: the op with its floating tensor inputs (those of
 * Tensor[] arguments element by element) replaced, returning one of its outputs:
 * return out_ret, or element out_elem of it when it is a Tensor[]. */
typedef struct {
    const ops_op_info *op;
    ops_ivalue args[MAX_ARGS];
    int nargs;
    int ninputs;
    int arg_of[MAX_GRAD_INPUTS];  /* flattened input -> argument */
    int elem_of[MAX_GRAD_INPUTS]; /* -> element of a Tensor[] argument, or -1 */
    int out_ret;
    int out_elem;
} grad_call;

/* ---- runner.c -------------------------------------------------------------------- */

int cmp_ptr(const void *a, const void *b);
void mark(const ops_op_info *op);

/* ---- runner_support.c ------------------------------------------------------------ */

void describe(char *buf, size_t n, const test_case *c, const ops_op_info *op, const ops_ivalue *args,
              const char *variant);
bool check_values(const test_case *c, const ops_tensor *exp, const ops_tensor *got, index_map map, bool cast_ok,
                  bool values, char *msg, size_t n);
result *call_all(const ops_op_info *op, const ops_ivalue *args, ops_status *st);
ops_tensor *ret_tensor(const result *r, int i);
ops_tensor *call(const ops_op_info *op, const ops_ivalue *args, ops_status *st);
bool check_results(const test_case *c, const ops_op_info *op, const result *got, index_map map, char *msg, size_t n);
bool tensor_returns(const test_case *c);
ops_tensor *new_tensor(int nd, const int64_t *sizes, ops_dtype dt);
int out_indices(const ops_op_info *op, int *idx);
const char *out_name(const ops_op_info *op, int k);
int out_index(const ops_op_info *op);
bool dims_may_change(const test_case *c);
void argset_build(argset *s, const ops_ivalue *args, int n, lay_kind kind, int written, const ops_tensor *result,
                  bool new_dims, uint64_t *rng);
int argset_touched_after(argset *s, const ops_op_info *op);
void argset_free(argset *s);
void map_args(const test_case *c, const ops_op_info *op, ops_ivalue *out);
int category(ops_dtype dt);
bool same_shape(const ops_tensor *a, const ops_tensor *b);
bool tensors_identical(const ops_tensor *a, const ops_tensor *b, char *why, size_t n);
void prefill(guarded *g, const ops_tensor *exp, bool nan);
void expect_error_n(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                    const char *fragment, const argset *s, const guarded *const *ws, int nw,
                    const ops_tensor *const *empties, int ne);
void expect_error(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                  const char *fragment, const argset *s, const guarded *w);
void inject_faults_n(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                     const argset *s, const guarded *const *ws, int nw, const ops_tensor *const *empties, int ne);
void inject_faults(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                   const argset *s, const guarded *w, const ops_tensor *empty_out);
void check_written_ret(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                       const guarded *g, const ops_tensor *r, const void *ptr, const int64_t *strides, bool cast_ok,
                       int ri);
void check_written(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                   const guarded *g, const ops_tensor *r, const void *ptr, const int64_t *strides, bool cast_ok);

/* ---- runner_families.c ----------------------------------------------------------- */

void run_primary(const test_case *c);
void run_layouts(const test_case *c, int case_index);
void run_out(const test_case *c, int case_index);
void run_inplace(const test_case *c, int case_index);
void run_error(const test_case *c);

/* ---- runner_grad.c --------------------------------------------------------------- */

int by_ptr_index(const ops_op_info *op);
int formula_index(const ops_op_info *op);
ops_status grad_fn(ops_tensor *const *inputs, int n, ops_tensor **out, void *ctx);
void run_gradients(const test_case *c);
void run_formula_probe(const test_case *c);

/* ---- runner_cuda.c --------------------------------------------------------------- */

void cuda_run(const test_case *c, const ops_op_info *op, const ops_ivalue *dargs, const char *variant, const result *cpu);
void cuda_written_check(const test_case *c);
void cuda_check(const test_case *c, const ops_ivalue *args, const result *cpu_result);
void cuda_error(const test_case *c);
void cuda_grad_check(const test_case *c, const grad_call *g, ops_tensor *const *inputs);
void run_backend(const test_case *c);

#endif

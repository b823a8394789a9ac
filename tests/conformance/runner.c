/* Every op against NumPy, driven by the schema (docs/conformance.md).
 *
 *     conformance CASES.bin [--op NAME] [--dtype DTYPE] [--coverage] [--seed N]
 *
 * tests/conformance/gen_cases.py wrote the cases at build time: for each op and dtype,
 * the arguments and the value NumPy computed (or the error expected).  This runner
 * calls each op through the boxed registry and runs the families of checks below on
 * every case; expected values never come from libops.
 *
 *   values     dtype, shape and values against NumPy: rtol/atol per dtype, NaN, the sign
 *              of infinities and of zeros, and the NMSE of the case (ggml's metric);
 *   layouts    the same with every tensor input strided, transposed, expanded (stride
 *              0, broadcast dims and extra outer/inner dims) and, in the property run,
 *              in random layouts drawn from --seed;
 *   out=       into an empty out (resized), a NaN-filled one, strided and transposed
 *              ones (their strides kept); a wrongly shaped out, an out the result
 *              cannot be cast to and an out overlapping itself are errors that write
 *              nothing;
 *   in-place   same storage, version bumped, strided self; an unsafe cast, a self
 *              that would need broadcasting and an expanded self are errors;
 *   errors     undeclared dtypes and the metadata's `errors:` fail with the expected
 *              message, in every form, leaving inputs and out= byte-identical;
 *   guards     every tensor the runner makes lives in a buffer of sentinel bytes
 *              (before, after, and in the gaps of strided layouts): an op must not
 *              write outside its output, nor into its inputs at all;
 *   faults     every allocation of the call failed in turn (ops_alloc_fail_nth) gives
 *              a clean out-of-memory error and leaves inputs and outputs untouched;
 *   gradients  for an op with a formula in ops/derivatives.yaml: ops_gradcheck and
 *              ops_gradgradcheck (backward and double backward against finite
 *              differences) on the case's inputs in float64, contiguous and transposed,
 *              each element of a Tensor[] input an input of its own, once per floating
 *              output (every return, every element of a Tensor[] return: the others
 *              get the engine's zeros); a full run fails when some formula had no
 *              gradient run;
 *   CUDA       with a CUDA build and a device, the case again on cuda:0, compared with
 *              the CPU result; otherwise counted as skipped.
 *
 * A full run (no --op or --dtype) also fails when some registry entry had no
 * conformance run; --coverage lists those entries. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases.h"
#include "ops_autograd.h"
#include "ops_autograd_gen.h"

enum { MAX_FAULTS = 64 };

/* ---- run state ---------------------------------------------------------------- */

static case_file cf;
static int *selected;
static int nselected;
static uint64_t runner_seed = 1;

static int nregistry;
static bool *covered;               /* by by_ptr's index: a checked call of the entry ran */
static const ops_op_info **by_ptr; /* registry entries sorted by address */

static struct {
    long runs;     /* op x dtype x variant runs whose result was checked */
    long errors;   /* expected errors checked (per form) */
    long faults;   /* injected allocation failures */
    long cuda_skipped;
    long cuda_run;
    long cuda_grads; /* gradient comparisons cuda:0 vs cpu */
    long grads;    /* gradcheck runs (each with its gradgradcheck unless skipped) */
    long gradgrad_skipped; /* double backward not implemented for the op's backward */
    long grad_not_implemented; /* the formula refuses the case (a not_implemented branch) */
} counts;
static bool *grad_checked;  /* by formula entry: some gradcheck ran */
static bool *grad_eligible; /* by formula entry: the selection has a value case of its op */
static bool *no_formula;    /* by by_ptr index: differentiable (a floating result from an input
                             * requiring grad) but no formula in ops/derivatives.yaml */
static bool *has_f64_case;  /* by by_ptr's index: the op has a float64 value case */
static const char *cuda_skip_reason;

static int
cmp_ptr(const void *a, const void *b)
{
    /* addresses of distinct objects compare as integers, not as pointers */
    const uintptr_t x = (uintptr_t) * (const ops_op_info *const *)a, y = (uintptr_t) * (const ops_op_info *const *)b;
    return x < y ? -1 : x > y;
}

/* covered[] slot of a registry entry (by_ptr's order), or NULL. */
static bool *
coverage_slot(const ops_op_info *op)
{
    const ops_op_info **hit = bsearch(&op, by_ptr, (size_t)nregistry, sizeof *by_ptr, cmp_ptr);
    return hit != NULL ? &covered[hit - by_ptr] : NULL;
}

static void
mark(const ops_op_info *op)
{
    bool *slot = coverage_slot(op);
    if (slot != NULL)
        *slot = true;
}

/* ---- failure messages ------------------------------------------------------------ */

/* "add.Tensor [float32] (strided inputs)" + the label + every tensor argument's
 * dtype, shape and strides. */
static void
describe(char *buf, size_t n, const test_case *c, const ops_op_info *op, const ops_ivalue *args,
         const char *variant)
{
    size_t used = (size_t)snprintf(buf, n, "%s%s%s [%s] (%s): %s", op->name, op->overload[0] ? "." : "",
                                   op->overload, c->dtype == OPS_DTYPE_NONE ? "-" : ops_dtype_name(c->dtype),
                                   variant, c->label);
    for (int i = 0; i < op->num_args && used < n; i++) {
        const bool list = args[i].tag == OPS_IVALUE_TENSOR_LIST;
        if (args[i].tag != OPS_IVALUE_TENSOR && !list)
            continue;
        const int64_t count = list ? args[i].v.tensor_list.len : 1;
        if (list && count == 0)
            used += (size_t)snprintf(buf + used, n - used, "\n    %s: []", op->args[i].name);
        for (int64_t k = 0; k < count && used < n; k++) {
            const ops_tensor *t = list ? args[i].v.tensor_list.data[k] : args[i].v.tensor;
            char s1[160], s2[160], name[160];
            if (list)
                snprintf(name, sizeof name, "%s[%lld]", op->args[i].name, (long long)k);
            else
                snprintf(name, sizeof name, "%s", op->args[i].name);
            if (t == NULL) {
                used += (size_t)snprintf(buf + used, n - used, "\n    %s: None", name);
                continue;
            }
            int nd = (int)ops_tensor_ndim(t);
            used += (size_t)snprintf(buf + used, n - used, "\n    %s: %s sizes %s strides %s", name,
                                     ops_dtype_name(ops_tensor_dtype(t)),
                                     dims_str(nd, ops_tensor_sizes(t), s1, sizeof s1),
                                     dims_str(nd, ops_tensor_strides(t), s2, sizeof s2));
        }
    }
}

/* Fail the current Check test with the case's description and a reason. */
#define FAIL(c, op, args, variant, ...)                                                \
    do {                                                                              \
        char desc_[4096], why_[1024];                                                 \
        describe(desc_, sizeof desc_, (c), (op), (args), (variant));                  \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                     \
        ck_abort_msg("%s\n  -> %s", desc_, why_);                                     \
    } while (0)

/* ---- comparing with NumPy's values --------------------------------------------- */

typedef enum { MAP_SAME, MAP_OUTER, MAP_INNER } index_map;

static const struct {
    double rtol, atol;
} default_tol[OPS_NUM_DTYPES] = {
    /* gen_cases.py's TOL: for results stored in a dtype other than the expected one */
    [OPS_FLOAT16] = {2e-3, 1e-3},
    [OPS_BFLOAT16] = {1.6e-2, 1e-2},
    [OPS_FLOAT32] = {1e-5, 1e-6},
    [OPS_FLOAT64] = {1e-12, 1e-12},
};

static void
index_str(const ops_tensor *t, int64_t linear, char *buf, size_t n)
{
    int nd = (int)ops_tensor_ndim(t);
    int64_t idx[OPS_MAX_DIMS];
    for (int d = nd - 1; d >= 0; d--) {
        int64_t s = ops_tensor_sizes(t)[d];
        idx[d] = s ? linear % s : 0;
        linear = s ? linear / s : 0;
    }
    dims_str(nd, idx, buf, n);
}

/* Compare got with exp, the case's expected values (mapped through map); on mismatch
 * write why into msg and return false.  got's dtype may differ from the expected
 * one only for in-place results (cast_ok): a bool result stored as numbers, or a
 * float result rounded to self's float dtype. */
static bool
check_values(const test_case *c, const ops_tensor *exp, const ops_tensor *got, index_map map, bool cast_ok,
             bool values, char *msg, size_t n)
{
    const ops_dtype ed = ops_tensor_dtype(exp), gd = ops_tensor_dtype(got);
    char s1[256], s2[256];
    if (gd != ed && !cast_ok) {
        snprintf(msg, n, "result dtype %s, expected %s", ops_dtype_name(gd), ops_dtype_name(ed));
        return false;
    }
    int end = (int)ops_tensor_ndim(exp);
    int64_t want[OPS_MAX_DIMS + 1];
    int wnd = 0;
    if (map == MAP_OUTER)
        want[wnd++] = 2;
    for (int d = 0; d < end; d++)
        want[wnd++] = ops_tensor_sizes(exp)[d];
    if (map == MAP_INNER)
        want[wnd++] = 2;
    if (ops_tensor_ndim(got) != wnd || memcmp(ops_tensor_sizes(got), want, sizeof(int64_t) * (size_t)wnd) != 0) {
        snprintf(msg, n, "result shape %s, expected %s",
                 dims_str((int)ops_tensor_ndim(got), ops_tensor_sizes(got), s1, sizeof s1),
                 dims_str(wnd, want, s2, sizeof s2));
        return false;
    }
    if (!ops_device_equal(ops_tensor_device(got), OPS_DEVICE_CPU)) {
        snprintf(msg, n, "result is not on the cpu");
        return false;
    }
    if (!values)
        return true;
    double rtol = c->rtol, atol = c->atol;
    if (gd != ed && ops_dtype_is_floating(gd)) {
        rtol = fmax(rtol, default_tol[gd].rtol);
        atol = fmax(atol, default_tol[gd].atol);
    }
    const bool floating = ops_dtype_is_floating(gd);
    const int64_t numel = ops_tensor_numel(got), enumel = ops_tensor_numel(exp);
    double err2 = 0, ref2 = 0;
    int64_t bad = -1;
    const char *why = "";
    for (int64_t i = 0; i < numel; i++) {
        const int64_t j = map == MAP_OUTER ? i % enumel : map == MAP_INNER ? i / 2 : i;
        const char *gp = element_ptr(got, i), *ep = element_ptr(exp, j);
        const double a = read_double(gd, gp), e = read_double(ed, ep);
        bool ok;
        if (gd == OPS_INT64 && ed == OPS_INT64) {
            int64_t ai, ei;
            memcpy(&ai, gp, 8);
            memcpy(&ei, ep, 8);
            ok = ai == ei;
            why = "";
        } else if (!floating || !ops_dtype_is_floating(ed)) {
            ok = a == e;
            why = "";
        } else if (isnan(e) || isnan(a)) {
            ok = isnan(e) && isnan(a);
            why = " (NaN mismatch)";
        } else if (isinf(e) || isinf(a)) {
            ok = a == e;
            why = " (infinity mismatch)";
        } else {
            ok = fabs(a - e) <= atol + rtol * fabs(e);
            why = "";
            if (ok && a == 0 && e == 0 && (c->flags & F_SIGNED_ZEROS) && signbit(a) != signbit(e)) {
                ok = false;
                why = " (the sign of zero differs)";
            }
            err2 += (a - e) * (a - e);
            ref2 += e * e;
        }
        if (!ok && bad < 0) {
            bad = i;
            char idx[256];
            index_str(got, i, idx, sizeof idx);
            snprintf(msg, n, "element %lld (index %s) is %.9g, expected %.9g%s [rtol %g, atol %g]", (long long)i,
                     idx, a, e, why, rtol, atol);
        }
    }
    const double nmse = ref2 > 0 ? err2 / ref2 : 0.0;
    if (bad >= 0) {
        size_t used = strlen(msg);
        if (floating)
            snprintf(msg + used, n - used, "; NMSE of the case %.3g (bound %.3g)", nmse, c->nmse);
        return false;
    }
    if (floating && gd == ed && c->nmse > 0 && nmse > c->nmse) {
        snprintf(msg, n, "NMSE %.3g exceeds %.3g (every element is within rtol %g, atol %g)", nmse, c->nmse, rtol,
                 atol);
        return false;
    }
    return true;
}

/* ---- calling ---------------------------------------------------------------------- */

/* What a call returned: rets[0..n-1] as the boxed call filled them (new references; a
 * Tensor[] return owns its elements and array, which ops_ivalue_release frees). */
typedef struct result {
    int n;
    ops_ivalue v[MAX_RETS];
} result;

static void
result_free(void *p)
{
    result *r = p;
    for (int i = 0; i < r->n; i++)
        ops_ivalue_release(&r->v[i]);
    free(r);
}

/* Call op; every return (owned: owned_drop it), or NULL when the call failed. */
static result *
call_all(const ops_op_info *op, const ops_ivalue *args, ops_status *st)
{
    result *r = calloc(1, sizeof *r);
    if (r == NULL || op->num_returns > MAX_RETS) {
        fprintf(stderr, "conformance: %s: out of memory or more than %d returns\n", op->name, MAX_RETS);
        exit(2);
    }
    r->n = op->num_returns;
    for (int i = 0; i < MAX_RETS; i++)
        r->v[i] = ops_ivalue_none();
    ops_clear_error();
    *st = op->call(args, r->v);
    if (*st != OPS_OK) {
        free(r);
        return NULL;
    }
    owned_add(r, result_free);
    return r;
}

/* Return i of a call's result when it is a tensor, else NULL. */
static ops_tensor *
ret_tensor(const result *r, int i)
{
    return r != NULL && i < r->n && r->v[i].tag == OPS_IVALUE_TENSOR ? r->v[i].v.tensor : NULL;
}

/* Call op; its first return when that is a tensor (a new, owned reference), or NULL.
 * Every other return is released. */
static ops_tensor *
call(const ops_op_info *op, const ops_ivalue *args, ops_status *st)
{
    result *res = call_all(op, args, st);
    if (res == NULL)
        return NULL;
    ops_tensor *r = ret_tensor(res, 0);
    if (r != NULL)
        res->v[0] = ops_ivalue_none();
    owned_drop(res);
    owned_add(r, owned_release_tensor);
    return r;
}

/* The name of op's return i, for messages ("min", or "result1" when unnamed). */
static const char *
ret_name(const ops_op_info *op, int i, char *buf, size_t n)
{
    if (i < op->num_returns && op->returns[i].name != NULL)
        snprintf(buf, n, "%s", op->returns[i].name);
    else if (op->num_returns == 1)
        snprintf(buf, n, "result");
    else
        snprintf(buf, n, "result%d", i);
    return buf;
}

/* Every return of got against the case's expected ones (count, then each return's
 * dtype, shape and values; a Tensor[] return element by element: views allowed). */
static bool
check_results(const test_case *c, const ops_op_info *op, const result *got, index_map map, char *msg, size_t n)
{
    char name[64], why[900];
    if (got->n != c->nret) {
        snprintf(msg, n, "%d returns, expected %d", got->n, c->nret);
        return false;
    }
    for (int i = 0; i < c->nret; i++) {
        const expected_ret *e = &c->ret[i];
        const bool values = (c->flags & F_VALUES) && (e->flags & RET_COMPARE);
        ret_name(op, i, name, sizeof name);
        if (e->flags & RET_LIST) {
            if (got->v[i].tag != OPS_IVALUE_TENSOR_LIST) {
                snprintf(msg, n, "return '%s' is a %s, not a tensor list", name, ops_ivalue_tag_name(got->v[i].tag));
                return false;
            }
            const ops_tensor_list l = got->v[i].v.tensor_list;
            if (l.len != e->len) {
                snprintf(msg, n, "return '%s' has %lld tensors, expected %lld", name, (long long)l.len,
                         (long long)e->len);
                return false;
            }
            for (int64_t k = 0; k < l.len; k++) {
                if (l.data[k] == NULL) {
                    snprintf(msg, n, "return '%s'[%lld] is NULL", name, (long long)k);
                    return false;
                }
                if (!check_values(c, e->list[k], l.data[k], map, false, values, why, sizeof why)) {
                    snprintf(msg, n, "return '%s'[%lld]: %s", name, (long long)k, why);
                    return false;
                }
            }
            continue;
        }
        const ops_tensor *t = ret_tensor(got, i);
        if (t == NULL) {
            snprintf(msg, n, "return '%s' is a %s, not a tensor", name, ops_ivalue_tag_name(got->v[i].tag));
            return false;
        }
        if (!check_values(c, e->t, t, map, false, values, why, sizeof why)) {
            if (c->nret > 1)
                snprintf(msg, n, "return '%s': %s", name, why);
            else
                snprintf(msg, n, "%s", why);
            return false;
        }
    }
    return true;
}

/* True when every expected return is a Tensor (no Tensor[]). */
static bool
tensor_returns(const test_case *c)
{
    for (int i = 0; i < c->nret; i++)
        if (c->ret[i].flags & RET_LIST)
            return false;
    return c->nret > 0;
}

/* A new (owned) CPU tensor of the runner's; exits if memory runs out. */
static ops_tensor *
new_tensor(int nd, const int64_t *sizes, ops_dtype dt)
{
    ops_tensor *t = ops_tensor_new("conformance", nd, sizes, NULL, dt, OPS_DEVICE_CPU);
    if (t == NULL) {
        fprintf(stderr, "conformance: cannot allocate a tensor: %s\n", ops_last_error());
        exit(2);
    }
    owned_add(t, owned_release_tensor);
    return t;
}

static int
arg_index(const ops_op_info *op, const char *name)
{
    for (int i = 0; i < op->num_args; i++)
        if (strcmp(op->args[i].name, name) == 0)
            return i;
    return -1;
}

/* The indices of op's out= arguments, in schema order (the order of its returns); their count. */
static int
out_indices(const ops_op_info *op, int *idx)
{
    int n = 0;
    for (int i = 0; i < op->num_args && n < MAX_RETS; i++)
        if (op->args[i].is_out)
            idx[n++] = i;
    return n;
}

/* The name of op's k-th out= argument (in-place: self), for messages. */
static const char *
out_name(const ops_op_info *op, int k)
{
    int idx[MAX_RETS];
    const int n = out_indices(op, idx);
    return k < n ? op->args[idx[k]].name : op->kind == OPS_KIND_INPLACE ? "self" : "out";
}

static int
out_index(const ops_op_info *op)
{
    for (int i = 0; i < op->num_args; i++)
        if (op->args[i].is_out)
            return i;
    return -1;
}

/* ---- argument sets: guarded copies of the case's tensors ------------------------ */

typedef enum {
    LAY_CONTIGUOUS,
    LAY_STRIDED,
    LAY_TRANSPOSED,
    LAY_BROADCAST, /* size-1 and missing leading dims expanded to the result's (stride 0) */
    LAY_OUTER0,    /* an extra outer dim of size 2, stride 0 (result: the expected twice) */
    LAY_INNER0,    /* an extra inner dim of size 2, stride 0 (every element twice) */
    LAY_RANDOM,
} lay_kind;

static const char *const lay_names[] = {
    "contiguous inputs",       "strided inputs",          "transposed inputs", "broadcast inputs expanded",
    "outer stride-0 dim added", "inner stride-0 dim added", "random layouts",
};

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

/* True when adding dims to every input keeps the result dtype: dims do not decide
 * promotion when all tensors share one dtype, or none is 0-dim. */
static bool
dims_may_change(const test_case *c)
{
    ops_dtype first = OPS_DTYPE_NONE;
    bool same = true, zero_dim = false;
    for (int a = 0; a < c->nargs; a++) {
        if (c->args[a].tag != OPS_IVALUE_TENSOR)
            continue;
        const ops_tensor *t = c->args[a].v.tensor;
        zero_dim |= ops_tensor_ndim(t) == 0;
        if (first == OPS_DTYPE_NONE)
            first = ops_tensor_dtype(t);
        same &= ops_tensor_dtype(t) == first;
    }
    return same || !zero_dim;
}

/* One tensor argument, in layout kind.  Returns false when the kind does not apply
 * to it (the plain contiguous copy is made instead). */
static bool
make_arg(argset *s, int a, const ops_tensor *t, lay_kind kind, const ops_tensor *result, bool new_dims,
         uint64_t *rng)
{
    const int nd = (int)ops_tensor_ndim(t);
    const int64_t *sz = ops_tensor_sizes(t);
    const ops_dtype dt = ops_tensor_dtype(t);
    const int64_t numel = ops_tensor_numel(t);
    layout l = layout_contiguous(nd);
    bool applies = false;
    if (kind == LAY_STRIDED && nd >= 1 && numel >= 2) {
        l = layout_strided(nd);
        applies = true;
    } else if (kind == LAY_TRANSPOSED && nd >= 2 && numel >= 2) {
        l = layout_transposed(nd);
        applies = true;
    } else if (kind == LAY_RANDOM && nd >= 1 && numel >= 1) {
        l = layout_random(nd, rng);
        applies = true;
    }
    guarded_new(&s->g[a], nd, sz, dt, &l, t);
    s->has[a] = true;
    ops_tensor *base = s->g[a].t;
    s->v[a] = ops_ivalue_tensor(base);

    /* stride-0 views over the guarded copy */
    int64_t vs[OPS_MAX_DIMS], vst[OPS_MAX_DIMS];
    int vnd = 0;
    const int64_t *bst = ops_tensor_strides(base);
    if (kind == LAY_OUTER0 || kind == LAY_INNER0) {
        /* the outer dim goes before the result's dims: pad with size-1 dims to its rank */
        const int pad = kind == LAY_OUTER0 && result != NULL ? (int)ops_tensor_ndim(result) - nd : 0;
        if (nd + 1 + pad > OPS_MAX_DIMS || pad < 0 || !new_dims)
            return applies;
        if (kind == LAY_OUTER0) {
            vs[vnd] = 2;
            vst[vnd++] = 0;
            for (int d = 0; d < pad; d++) {
                vs[vnd] = 1;
                vst[vnd++] = 0;
            }
        }
        for (int d = 0; d < nd; d++) {
            vs[vnd] = sz[d];
            vst[vnd++] = bst[d];
        }
        if (kind == LAY_INNER0) {
            vs[vnd] = 2;
            vst[vnd++] = 0;
        }
    } else if ((kind == LAY_BROADCAST || (kind == LAY_RANDOM && (rng_next(rng) & 1))) && result != NULL) {
        const int rnd = (int)ops_tensor_ndim(result);
        const int64_t *rs = ops_tensor_sizes(result);
        if (rnd < nd)
            return applies;
        const int lead = rnd - nd;
        bool any = false;
        for (int d = 0; d < rnd; d++) {
            const int td = d - lead;
            if (td < 0) {
                vs[d] = rs[d];
                vst[d] = 0;
                any = true;
            } else if (sz[td] == 1 && rs[d] != 1) {
                vs[d] = rs[d];
                vst[d] = 0;
                any = true;
            } else {
                vs[d] = sz[td];
                vst[d] = bst[td];
            }
        }
        /* extra leading dims change a 0-dim input's part in promotion */
        if (!any || (nd == 0 && !new_dims))
            return applies;
        vnd = rnd;
    } else {
        return applies;
    }
    s->view[a] = ops_tensor_new_view(base, vnd, vs, vst, ops_tensor_storage_offset(base));
    if (s->view[a] == NULL) {
        fprintf(stderr, "conformance: new_view failed: %s\n", ops_last_error());
        exit(2);
    }
    owned_add(s->view[a], owned_release_tensor);
    s->v[a] = ops_ivalue_tensor(s->view[a]);
    return true;
}

/* Copies of args (op's argument list, n of them) with every tensor in a guarded
 * buffer laid out by kind; written (the out= or in-place index, or -1) is left for
 * the caller.  result: the expected tensor (for LAY_BROADCAST). */
static void
argset_build(argset *s, const ops_ivalue *args, int n, lay_kind kind, int written, const ops_tensor *result,
             bool new_dims, uint64_t *rng)
{
    memset(s, 0, sizeof *s);
    for (int a = 0; a < n; a++) {
        s->v[a] = args[a];
        if (a != written && args[a].tag == OPS_IVALUE_TENSOR_LIST) {
            /* each element in its own guarded buffer, laid out by kind (the
             * elementwise kinds do not apply: list ops are not iterator ops) */
            const ops_tensor_list l = args[a].v.tensor_list;
            const int64_t m = l.len > 0 ? l.len : 1;
            s->llen[a] = l.len;
            s->lg[a] = calloc((size_t)m, sizeof *s->lg[a]);
            s->ldata[a] = calloc((size_t)m, sizeof *s->ldata[a]);
            if (s->lg[a] == NULL || s->ldata[a] == NULL) {
                fprintf(stderr, "conformance: out of memory\n");
                exit(2);
            }
            owned_add(s->lg[a], free);
            owned_add(s->ldata[a], free);
            for (int64_t k = 0; k < l.len; k++) {
                const ops_tensor *t = l.data[k];
                if (t == NULL) /* a None element of a Tensor?[] */
                    continue;
                const int nd = (int)ops_tensor_ndim(t);
                const int64_t numel = ops_tensor_numel(t);
                layout lay = layout_contiguous(nd);
                bool applies = false;
                if (kind == LAY_STRIDED && nd >= 1 && numel >= 2) {
                    lay = layout_strided(nd);
                    applies = true;
                } else if (kind == LAY_TRANSPOSED && nd >= 2 && numel >= 2) {
                    lay = layout_transposed(nd);
                    applies = true;
                } else if (kind == LAY_RANDOM && nd >= 1 && numel >= 1) {
                    lay = layout_random(nd, rng);
                    applies = true;
                }
                guarded_new(&s->lg[a][k], nd, ops_tensor_sizes(t), ops_tensor_dtype(t), &lay, t);
                guarded_snapshot(&s->lg[a][k]);
                s->ldata[a][k] = s->lg[a][k].t;
                s->changed += applies;
            }
            s->v[a] = ops_ivalue_tensor_list((ops_tensor_list){s->ldata[a], l.len});
            continue;
        }
        if (a == written || args[a].tag != OPS_IVALUE_TENSOR)
            continue;
        if (make_arg(s, a, args[a].v.tensor, kind, result, new_dims, rng))
            s->changed++;
        guarded_snapshot(&s->g[a]);
    }
}

/* The index of an input whose buffer changed, or -1. */
static int
argset_touched(const argset *s)
{
    for (int a = 0; a < MAX_ARGS; a++) {
        if (s->has[a] && !guarded_untouched(&s->g[a]))
            return a;
        for (int64_t k = 0; s->lg[a] != NULL && k < s->llen[a]; k++)
            if (s->lg[a][k].t != NULL && !guarded_untouched(&s->lg[a][k]))
                return a;
    }
    return -1;
}

/* True when a successful call of op may write its argument a: a mutable functional's
 * `Tensor(a!)` positional argument (batch norm's running stats), not an out= or an
 * in-place self (those are checked as written tensors). */
static bool
arg_written(const ops_op_info *op, int a)
{
    return a < op->num_args && !op->args[a].is_out && !(op->kind == OPS_KIND_INPLACE && a == 0) &&
           strchr(op->args[a].type, '!') != NULL;
}

/* After a successful call of op: the index of an input whose buffer changed, or -1.
 * Arguments op writes may change their elements but not their sentinels; they are
 * snapshot again (the state the next call starts from). */
static int
argset_touched_after(argset *s, const ops_op_info *op)
{
    for (int a = 0; a < MAX_ARGS; a++) {
        if (s->has[a] && arg_written(op, a)) {
            int64_t where;
            if (!guarded_sentinels_ok(&s->g[a], &where))
                return a;
            guarded_snapshot(&s->g[a]);
        }
    }
    for (int a = 0; a < MAX_ARGS; a++) {
        if (s->has[a] && !arg_written(op, a) && !guarded_untouched(&s->g[a]))
            return a;
        for (int64_t k = 0; s->lg[a] != NULL && k < s->llen[a]; k++)
            if (s->lg[a][k].t != NULL && !guarded_untouched(&s->lg[a][k]))
                return a;
    }
    return -1;
}

static void
argset_free(argset *s)
{
    for (int a = 0; a < MAX_ARGS; a++) {
        owned_drop(s->view[a]);
        if (s->has[a])
            guarded_free(&s->g[a]);
        if (s->lg[a] != NULL) {
            for (int64_t k = 0; k < s->llen[a]; k++)
                if (s->lg[a][k].t != NULL)
                    guarded_free(&s->lg[a][k]);
            owned_drop(s->lg[a]);
            owned_drop(s->ldata[a]);
        }
    }
    memset(s, 0, sizeof *s);
}

/* The case's arguments in the order of op (a form of the same op: the names match),
 * None where op has an argument the case's entry lacks (its out=). */
static void
map_args(const test_case *c, const ops_op_info *op, ops_ivalue *out)
{
    for (int i = 0; i < op->num_args; i++) {
        const int j = arg_index(c->op, op->args[i].name);
        out[i] = j >= 0 ? c->args[j] : ops_ivalue_none();
    }
}

static int
category(ops_dtype dt)
{
    return dt == OPS_BOOL ? 0 : ops_dtype_is_floating(dt) ? 2 : 1;
}

static bool
same_shape(const ops_tensor *a, const ops_tensor *b)
{
    return ops_tensor_ndim(a) == ops_tensor_ndim(b) &&
           memcmp(ops_tensor_sizes(a), ops_tensor_sizes(b), sizeof(int64_t) * (size_t)ops_tensor_ndim(a)) == 0;
}

#ifdef OPS_WITH_CUDA
/* Byte-equal elements (same dtype and shape): a failed call must not change inputs. */
static bool
tensors_identical(const ops_tensor *a, const ops_tensor *b, char *why, size_t n)
{
    if (!same_shape(a, b) || ops_tensor_dtype(a) != ops_tensor_dtype(b)) {
        snprintf(why, n, "its shape or dtype changed");
        return false;
    }
    const size_t isz = ops_tensor_itemsize(a);
    for (int64_t i = 0; i < ops_tensor_numel(a); i++) {
        if (memcmp(element_ptr(a, i), element_ptr(b, i), isz) != 0) {
            snprintf(why, n, "element %lld differs", (long long)i);
            return false;
        }
    }
    return true;
}
#endif

/* Fill g's elements with values that differ from every expected one (so an element
 * the op forgets to write is caught), or with NaN. */
static void
prefill(guarded *g, const ops_tensor *exp, bool nan)
{
    const ops_dtype dt = ops_tensor_dtype(g->t);
    const size_t is = ops_tensor_itemsize(g->t);
    for (int64_t i = 0; i < ops_tensor_numel(g->t); i++) {
        unsigned char *p = (unsigned char *)element_ptr(g->t, i);
        const unsigned char *e = (const unsigned char *)element_ptr(exp, i);
        if (nan && dt == OPS_FLOAT16) {
            const uint16_t v = 0x7E00;
            memcpy(p, &v, 2);
        } else if (nan && dt == OPS_BFLOAT16) {
            const uint16_t v = 0x7FC0;
            memcpy(p, &v, 2);
        } else if (nan && dt == OPS_FLOAT32) {
            const float v = NAN;
            memcpy(p, &v, 4);
        } else if (nan && dt == OPS_FLOAT64) {
            const double v = NAN;
            memcpy(p, &v, 8);
        } else if (dt == OPS_BOOL) {
            *p = *e ? 0 : 1;
        } else {
            for (size_t b = 0; b < is; b++)
                p[b] = (unsigned char)~e[b];
        }
    }
}

/* The call must fail with fragment in its message, leaving the inputs in s and
 * every written tensor ws[0..nw-1] byte-identical and every empty out empties[0..ne-1]
 * empty. */
static void
expect_error_n(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
               const char *fragment, const argset *s, const guarded *const *ws, int nw,
               const ops_tensor *const *empties, int ne)
{
    ops_status st;
    result *r = call_all(op, args, &st);
    if (st == OPS_OK) {
        owned_drop(r);
        FAIL(c, op, args, variant, "expected an error containing \"%s\"; the call succeeded", fragment);
    }
    if (strstr(ops_last_error(), fragment) == NULL)
        FAIL(c, op, args, variant, "the error \"%s\" does not contain \"%s\"", ops_last_error(), fragment);
    const int a = argset_touched(s);
    if (a >= 0)
        FAIL(c, op, args, variant, "argument '%s' changed by a failed call", op->args[a].name);
    for (int k = 0; k < nw; k++)
        if (ws[k] != NULL && !guarded_untouched(ws[k]))
            FAIL(c, op, args, variant, "the written tensor '%s' changed by a failed call",
                 nw > 1 ? out_name(op, k) : "out");
    for (int k = 0; k < ne; k++)
        if (empties[k] != NULL && (ops_tensor_ndim(empties[k]) != 1 || ops_tensor_numel(empties[k]) != 0))
            FAIL(c, op, args, variant, "a failed call resized the empty out= '%s'", out_name(op, k));
    counts.errors++;
    mark(op);
}

static void
expect_error(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
             const char *fragment, const argset *s, const guarded *w)
{
    expect_error_n(c, op, args, variant, fragment, s, &w, 1, NULL, 0);
}

/* Fail the 1st, 2nd, ... allocation of the call until it succeeds: each failure must
 * be a clean OPS_ERR_OOM that leaves the inputs, every written tensor ws[0..nw-1] and
 * every empty out= empties[0..ne-1] as they were. */
static void
inject_faults_n(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                const argset *s, const guarded *const *ws, int nw, const ops_tensor *const *empties, int ne)
{
    for (int64_t nth = 1; nth <= MAX_FAULTS; nth++) {
        ops_status st;
        ops_alloc_fail_nth(nth);
        result *r = call_all(op, args, &st);
        ops_alloc_fail_nth(0);
        if (st == OPS_OK) {
            owned_drop(r);
            (void)argset_touched_after((argset *)s, op); /* what it wrote is the next call's start */
            return;
        }
        counts.faults++;
        if (st != OPS_ERR_OOM)
            FAIL(c, op, args, variant, "with allocation %lld failing, the error is \"%s\" (%s), not out of memory",
                 (long long)nth, ops_last_error(), ops_status_str(st));
        const int a = argset_touched(s);
        if (a >= 0)
            FAIL(c, op, args, variant, "allocation %lld failing: argument '%s' changed", (long long)nth,
                 op->args[a].name);
        for (int k = 0; k < nw; k++)
            if (ws[k] != NULL && !guarded_untouched(ws[k]))
                FAIL(c, op, args, variant, "allocation %lld failing: the written tensor '%s' changed", (long long)nth,
                     nw > 1 ? out_name(op, k) : "out");
        for (int k = 0; k < ne; k++)
            if (empties[k] != NULL && ops_tensor_numel(empties[k]) != 0)
                FAIL(c, op, args, variant, "allocation %lld failing: the empty out= '%s' was resized", (long long)nth,
                     out_name(op, k));
    }
    FAIL(c, op, args, variant, "still failing after %d injected allocation failures", MAX_FAULTS);
}

static void
inject_faults(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
              const argset *s, const guarded *w, const ops_tensor *empty_out)
{
    inject_faults_n(c, op, args, variant, s, &w, 1, &empty_out, 1);
}

/* After a successful write into g: g is the result (r), kept its storage and
 * strides, has the expected values and intact sentinels. */
static void
check_written_ret(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                  const guarded *g, const ops_tensor *r, const void *ptr, const int64_t *strides, bool cast_ok,
                  int ri)
{
    char msg[1024];
    int64_t where;
    const int nd = (int)ops_tensor_ndim(g->t);
    if (r != g->t)
        FAIL(c, op, args, variant, "did not return the tensor it wrote");
    if (ops_tensor_data_ptr(g->t) != ptr)
        FAIL(c, op, args, variant, "the written tensor's storage moved");
    if (memcmp(ops_tensor_strides(g->t), strides, sizeof(int64_t) * (size_t)nd) != 0) {
        char s1[160], s2[160];
        FAIL(c, op, args, variant, "the written tensor's strides changed from %s to %s",
             dims_str(nd, strides, s1, sizeof s1), dims_str(nd, ops_tensor_strides(g->t), s2, sizeof s2));
    }
    const bool values = (c->flags & F_VALUES) && (c->ret[ri].flags & RET_COMPARE);
    if (!check_values(c, c->ret[ri].t, g->t, MAP_SAME, cast_ok, values, msg, sizeof msg))
        FAIL(c, op, args, variant, "%s%s%.900s", c->nret > 1 ? out_name(op, ri) : "", c->nret > 1 ? ": " : "", msg);
    if (!guarded_sentinels_ok(g, &where))
        FAIL(c, op, args, variant,
             "wrote outside its output%s%s: the sentinel byte at offset %lld from its data pointer changed",
             c->nret > 1 ? " " : "", c->nret > 1 ? out_name(op, ri) : "", (long long)where);
}

static void
check_written(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
              const guarded *g, const ops_tensor *r, const void *ptr, const int64_t *strides, bool cast_ok)
{
    check_written_ret(c, op, args, variant, g, r, ptr, strides, cast_ok, 0);
}

/* ---- CUDA: the backend family (ggml's test-backend-ops idea) ----------------------
 *
 * With a CUDA build and a device, every value case runs again on cuda:0 -- inputs
 * copied there contiguous and then with their last two dims swapped in memory, the
 * functional form, the out= form into empty device outs, the in-place form on a device
 * self -- and each result, copied back, is compared with the CPU's result under the
 * case's tolerance.  Error cases must fail on the device with the CPU's message and
 * leave the device inputs as they were.  Ops with a formula: the gradients that
 * backward computes on the device (float64 inputs, a fixed grad_output) match the
 * CPU's.  An op with no CUDA kernel is counted as skipped and listed at the end. */

static bool *cuda_missing; /* by by_ptr index: some call found no CUDA kernel */
static bool backend_only;  /* --backend cuda: only the CUDA family (and the CPU calls it needs) */
static int by_ptr_index(const ops_op_info *op);
static const char *base_name(const char *name, char *buf, size_t n);

#ifdef OPS_WITH_CUDA
static void
cuda_note_missing(const ops_op_info *op)
{
    const int k = by_ptr_index(op);
    if (k >= 0)
        cuda_missing[k] = true;
    cuda_skip_reason = "no CUDA kernel";
    counts.cuda_skipped++;
}

enum { DEV_CONTIGUOUS, DEV_TRANSPOSED };

/* A copy of t on cuda:0 (owned): row-major, or for DEV_TRANSPOSED with 2+ dims the
 * transpose of a contiguous tensor with the last two sizes swapped, so kernels see
 * a non-contiguous operand.  NULL with *st set when the copy failed. */
static ops_tensor *
to_device(const ops_tensor *t, int layout, ops_status *st)
{
    const int nd = (int)ops_tensor_ndim(t);
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, ops_tensor_sizes(t), sizeof(int64_t) * (size_t)nd);
    const bool swap = layout == DEV_TRANSPOSED && nd >= 2;
    if (swap) {
        const int64_t s = sizes[nd - 1];
        sizes[nd - 1] = sizes[nd - 2];
        sizes[nd - 2] = s;
    }
    ops_tensor *d = ops_tensor_new("conformance", nd, sizes, NULL, ops_tensor_dtype(t), OPS_DEVICE_CUDA(0));
    if (d != NULL && swap) {
        ops_tensor *v = ops_transpose(d, nd - 2, nd - 1);
        ops_tensor_release(d);
        d = v;
    }
    owned_add(d, owned_release_tensor);
    *st = d != NULL ? ops_copy_(d, t, false) : ops_last_status();
    return *st == OPS_OK ? d : NULL;
}

/* op's args with every tensor (and Tensor[] element) copied to cuda:0 and every
 * Device argument, given or left to its default, made cuda:0; false with *st set
 * when a copy failed. */
static bool
device_args(const ops_op_info *op, const ops_ivalue *args, int layout, ops_ivalue *dargs, ops_status *st)
{
    *st = OPS_OK;
    for (int a = 0; a < op->num_args && *st == OPS_OK; a++) {
        dargs[a] = args[a];
        if (args[a].tag == OPS_IVALUE_DEVICE || strncmp(op->args[a].type, "Device", 6) == 0) {
            dargs[a] = ops_ivalue_device(OPS_DEVICE_CUDA(0));
        } else if (args[a].tag == OPS_IVALUE_TENSOR_LIST) {
            const ops_tensor_list l = args[a].v.tensor_list;
            const ops_tensor **data = calloc((size_t)(l.len > 0 ? l.len : 1), sizeof *data);
            if (data == NULL) {
                fprintf(stderr, "conformance: out of memory\n");
                exit(2);
            }
            owned_add(data, free);
            for (int64_t k = 0; k < l.len && *st == OPS_OK; k++)
                data[k] = l.data[k] != NULL ? to_device(l.data[k], layout, st) : NULL;
            dargs[a] = ops_ivalue_tensor_list((ops_tensor_list){data, l.len});
        } else if (args[a].tag == OPS_IVALUE_TENSOR && args[a].v.tensor != NULL) {
            dargs[a] = ops_ivalue_tensor(to_device(args[a].v.tensor, layout, st));
        }
    }
    return *st == OPS_OK;
}

/* A host copy of the device tensor t (owned), or NULL with *st set. */
static ops_tensor *
to_host(const ops_tensor *t, ops_status *st)
{
    ops_tensor *host = ops_tensor_new("conformance", (int)ops_tensor_ndim(t), ops_tensor_sizes(t), NULL,
                                      ops_tensor_dtype(t), OPS_DEVICE_CPU);
    owned_add(host, owned_release_tensor);
    *st = host ? ops_copy_(host, t, false) : ops_last_status();
    return *st == OPS_OK ? host : NULL;
}

/* The device results dev against the CPU ones, return by return (Tensor[] element by
 * element); false with msg on a mismatch, *st set when a copy failed. */
static bool
cuda_compare(const test_case *c, const result *cpu, const result *dev, ops_status *st, char *msg, size_t n)
{
    char why[900];
    for (int i = 0; i < cpu->n && i < c->nret && *st == OPS_OK; i++) {
        const bool values = (c->flags & F_VALUES) && (c->ret[i].flags & RET_COMPARE);
        const bool list = cpu->v[i].tag == OPS_IVALUE_TENSOR_LIST;
        if (dev->v[i].tag != cpu->v[i].tag) {
            snprintf(msg, n, "return %d is a %s on cuda:0, a %s on the cpu", i, ops_ivalue_tag_name(dev->v[i].tag),
                     ops_ivalue_tag_name(cpu->v[i].tag));
            return false;
        }
        const int64_t count = list ? cpu->v[i].v.tensor_list.len : cpu->v[i].tag == OPS_IVALUE_TENSOR;
        if (list && dev->v[i].v.tensor_list.len != count) {
            snprintf(msg, n, "return %d has %lld tensors on cuda:0, %lld on the cpu", i,
                     (long long)dev->v[i].v.tensor_list.len, (long long)count);
            return false;
        }
        for (int64_t k = 0; k < count && *st == OPS_OK; k++) {
            const ops_tensor *ct = list ? cpu->v[i].v.tensor_list.data[k] : cpu->v[i].v.tensor;
            const ops_tensor *dt = list ? dev->v[i].v.tensor_list.data[k] : dev->v[i].v.tensor;
            /* results stay on the inputs' device (the one op meant to leave it: cpu()) */
            const bool to_cpu = strcmp(c->op->name, "cpu") == 0;
            if (!ops_device_equal(ops_tensor_device(dt), to_cpu ? OPS_DEVICE_CPU : OPS_DEVICE_CUDA(0))) {
                snprintf(msg, n, "return %d%s is not on %s", i, list ? " (an element)" : "", to_cpu ? "the cpu" : "cuda:0");
                return false;
            }
            ops_tensor *host = to_host(dt, st);
            if (host != NULL && !check_values(c, ct, host, MAP_SAME, false, values, why, sizeof why)) {
                snprintf(msg, n, "return %d%s: %s", i, list ? " (an element)" : "", why);
                return false;
            }
            owned_drop(host);
        }
    }
    return true;
}

/* One device call of op (args already on cuda:0) compared with the CPU's result. */
static void
cuda_run(const test_case *c, const ops_op_info *op, const ops_ivalue *dargs, const char *variant, const result *cpu)
{
    char msg[1024];
    ops_status st;
    result *r = call_all(op, dargs, &st);
    const bool same = st == OPS_OK && cuda_compare(c, cpu, r, &st, msg, sizeof msg);
    if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "no kernel for device cuda") != NULL)
        cuda_note_missing(op);
    else if (st != OPS_OK)
        FAIL(c, op, dargs, variant, "failed on cuda:0: %s", ops_last_error());
    else if (!same)
        FAIL(c, op, dargs, variant, "cuda:0 vs cpu: %.900s", msg);
    else {
        counts.cuda_run++;
        counts.runs++;
    }
    owned_drop(r);
}

/* The out= form on cuda:0 into empty device outs (resized by the op). */
static void
cuda_out(const test_case *c, const result *cpu)
{
    const ops_op_info *op = c->op->out;
    int oi[MAX_RETS];
    const int nout = out_indices(op, oi);
    if (!tensor_returns(c) || nout != c->nret)
        return;
    ops_ivalue base[MAX_ARGS], dargs[MAX_ARGS];
    ops_status st;
    map_args(c, op, base);
    for (int k = 0; k < nout; k++)
        base[oi[k]] = ops_ivalue_none();
    if (!device_args(op, base, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, base, "cuda:0 out=", "copy to cuda:0 failed: %s", ops_last_error());
    for (int k = 0; k < nout; k++) {
        ops_tensor *o = ops_tensor_new("conformance", 1, (int64_t[]){0}, NULL, ops_tensor_dtype(c->ret[k].t),
                                       OPS_DEVICE_CUDA(0));
        ck_assert_ptr_nonnull(o);
        owned_add(o, owned_release_tensor);
        dargs[oi[k]] = ops_ivalue_tensor(o);
    }
    cuda_run(c, op, dargs, "cuda:0 out=, empty", cpu);
}

/* The in-place form on a device copy of self, when it keeps self's shape and dtype. */
static void
cuda_inplace(const test_case *c, const result *cpu)
{
    const ops_op_info *op = c->op->inplace;
    const ops_tensor *exp = ret_tensor(cpu, 0);
    if (c->args[0].tag != OPS_IVALUE_TENSOR || c->nret != 1 || exp == NULL)
        return;
    const ops_tensor *self = c->args[0].v.tensor;
    if (!same_shape(self, exp) || ops_tensor_dtype(self) != ops_tensor_dtype(exp))
        return;
    ops_ivalue base[MAX_ARGS], dargs[MAX_ARGS];
    ops_status st;
    map_args(c, op, base);
    if (!device_args(op, base, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, base, "cuda:0 in-place", "copy to cuda:0 failed: %s", ops_last_error());
    cuda_run(c, op, dargs, "cuda:0 in-place", cpu);
}
#endif

/* An entry that only has an in-place or out= form (fill_, copy_, arange.out): on a
 * device copy of self, or into an empty device out, against the same on the CPU. */
static void
cuda_written_check(const test_case *c)
{
#ifdef OPS_WITH_CUDA
    const ops_op_info *op = c->op;
    if (ops_cuda_device_count() == 0 || !tensor_returns(c))
        return;
    const int w = op->kind == OPS_KIND_OUT ? out_index(op) : 0;
    const ops_tensor *given = c->args[w].v.tensor;
    if (w < 0 || given == NULL)
        return;
    ops_ivalue args[MAX_ARGS], dargs[MAX_ARGS];
    ops_status st;
    memcpy(args, c->args, sizeof(ops_ivalue) * (size_t)c->nargs);
    ops_tensor *self = op->kind == OPS_KIND_OUT ? new_tensor(1, (int64_t[]){0}, ops_tensor_dtype(given))
                                                : ops_clone(given, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(self);
    if (op->kind != OPS_KIND_OUT)
        owned_add(self, owned_release_tensor);
    args[w] = ops_ivalue_tensor(self);
    result *cpu = call_all(op, args, &st);
    if (cpu == NULL)
        FAIL(c, op, args, "cuda:0 (the cpu run)", "failed: %s", ops_last_error());
    if (!device_args(op, c->args, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, c->args, "cuda:0", "copy to cuda:0 failed: %s", ops_last_error());
    if (op->kind == OPS_KIND_OUT) {
        ops_tensor *o = ops_tensor_new("conformance", 1, (int64_t[]){0}, NULL, ops_tensor_dtype(given),
                                       OPS_DEVICE_CUDA(0));
        ck_assert_ptr_nonnull(o);
        owned_add(o, owned_release_tensor);
        dargs[w] = ops_ivalue_tensor(o);
    }
    cuda_run(c, op, dargs, op->kind == OPS_KIND_OUT ? "cuda:0 out=, empty" : "cuda:0 in-place", cpu);
    owned_drop(cpu);
#else
    (void)c;
#endif
}

/* The functional case on cuda:0 (contiguous and transposed inputs), then its out= and
 * in-place forms. */
static void
cuda_check(const test_case *c, const ops_ivalue *args, const result *cpu_result)
{
#ifdef OPS_WITH_CUDA
    if (ops_cuda_device_count() > 0) {
        const ops_op_info *op = c->op;
        ops_ivalue dargs[MAX_ARGS];
        ops_status st;
        bool matrix = false;
        for (int a = 0; a < op->num_args; a++)
            matrix |= args[a].tag == OPS_IVALUE_TENSOR && args[a].v.tensor != NULL &&
                      ops_tensor_ndim(args[a].v.tensor) >= 2;
        const long missing = counts.cuda_skipped;
        const bool relayout = matrix && (c->flags & F_LAYOUTS); /* as the layouts family: not view, as_strided */
        for (int layout = DEV_CONTIGUOUS; layout <= (relayout ? DEV_TRANSPOSED : DEV_CONTIGUOUS); layout++) {
            const char *variant = layout == DEV_CONTIGUOUS ? "cuda:0" : "cuda:0, transposed inputs";
            if (!device_args(op, args, layout, dargs, &st))
                FAIL(c, op, args, variant, "copy to cuda:0 failed: %s", ops_last_error());
            cuda_run(c, op, dargs, variant, cpu_result);
            if (counts.cuda_skipped != missing)
                return; /* no kernel: the other forms would only say so again */
        }
        if ((c->flags & F_VARIANTS) && c->op->out)
            cuda_out(c, cpu_result);
        if ((c->flags & F_VARIANTS) && c->op->inplace)
            cuda_inplace(c, cpu_result);
        return;
    }
    cuda_skip_reason = "no CUDA device";
#else
    cuda_skip_reason = "libops built without CUDA";
#endif
    (void)c;
    (void)args;
    (void)cpu_result;
    counts.cuda_skipped++;
}

/* An error case on cuda:0: the CPU's message, and device inputs left as they were. */
static void
cuda_error(const test_case *c)
{
#ifdef OPS_WITH_CUDA
    const ops_op_info *op = c->op;
    if (ops_cuda_device_count() == 0 || !(c->forms & FORM_FUNCTIONAL) || op->kind != OPS_KIND_FUNCTIONAL)
        return;
    ops_ivalue dargs[MAX_ARGS];
    ops_status st;
    if (!device_args(op, c->args, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, c->args, "cuda:0, expected error", "copy to cuda:0 failed: %s", ops_last_error());
    result *r = call_all(op, dargs, &st);
    if (st == OPS_OK) {
        owned_drop(r);
        FAIL(c, op, dargs, "cuda:0, expected error", "expected an error containing \"%s\"; the call succeeded",
             c->error);
    }
    if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "no kernel for device cuda") != NULL) {
        cuda_note_missing(op);
        return;
    }
    if (strstr(ops_last_error(), c->error) == NULL)
        FAIL(c, op, dargs, "cuda:0, expected error", "the error \"%s\" does not contain \"%s\"", ops_last_error(),
             c->error);
    for (int a = 0; a < op->num_args; a++) {
        if (dargs[a].tag != OPS_IVALUE_TENSOR || dargs[a].v.tensor == NULL)
            continue;
        char why[900];
        ops_tensor *host = to_host(dargs[a].v.tensor, &st);
        if (host == NULL)
            FAIL(c, op, dargs, "cuda:0, expected error", "copy back failed: %s", ops_last_error());
        if (!tensors_identical(c->args[a].v.tensor, host, why, sizeof why))
            FAIL(c, op, dargs, "cuda:0, expected error", "argument '%s' changed by a failed call: %s",
                 op->args[a].name, why);
        owned_drop(host);
    }
    counts.errors++;
#else
    (void)c;
#endif
}

/* ---- the families ------------------------------------------------------------------- */

/* The case as written: functional ops on contiguous guarded inputs; entries that
 * have only an in-place or out= form (fill_, copy_, arange.start_out) on a guarded
 * self or a fresh empty out.  Then every allocation failed in turn. */
static void
run_primary(const test_case *c)
{
    const ops_op_info *op = c->op;
    char msg[1024];
    ops_status st;
    argset s;
    if (op->kind == OPS_KIND_FUNCTIONAL) {
        argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, -1, NULL, false, NULL);
        result *got = call_all(op, s.v, &st);
        if (got == NULL)
            FAIL(c, op, s.v, "contiguous", "failed: %s", ops_last_error());
        const int a = argset_touched_after(&s, op);
        if (a >= 0)
            FAIL(c, op, s.v, "contiguous", "wrote into its input '%s'", op->args[a].name);
        if (!check_results(c, op, got, MAP_SAME, msg, sizeof msg))
            FAIL(c, op, s.v, "contiguous", "%s", msg);
        counts.runs++;
        mark(op);
        cuda_check(c, s.v, got);
        owned_drop(got);
        inject_faults(c, op, s.v, "contiguous, allocation failures", &s, NULL, NULL);
        argset_free(&s);
        return;
    }
    const int w = op->kind == OPS_KIND_OUT ? out_index(op) : 0;
    const ops_tensor *given = c->args[w].v.tensor;
    const int nd = (int)ops_tensor_ndim(given);
    argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, w, NULL, false, NULL);
    if (op->kind == OPS_KIND_INPLACE) {
        for (int pass = 0; pass < 2; pass++) {
            guarded g;
            layout l = pass == 0 ? layout_contiguous(nd) : layout_strided(nd);
            l.lead = 3;
            guarded_new(&g, nd, ops_tensor_sizes(given), ops_tensor_dtype(given), &l, given);
            guarded_snapshot(&g);
            s.v[w] = ops_ivalue_tensor(g.t);
            const char *variant = pass == 0 ? "in-place" : "in-place, strided self";
            if (pass == 0)
                inject_faults(c, op, s.v, "in-place, allocation failures", &s, &g, NULL);
            guarded_free(&g);
            guarded_new(&g, nd, ops_tensor_sizes(given), ops_tensor_dtype(given), &l, given);
            s.v[w] = ops_ivalue_tensor(g.t);
            int64_t strides[OPS_MAX_DIMS];
            memcpy(strides, ops_tensor_strides(g.t), sizeof(int64_t) * (size_t)nd);
            const void *ptr = ops_tensor_data_ptr(g.t);
            const uint64_t version = ops_tensor_version(g.t);
            ops_tensor *r = call(op, s.v, &st);
            if (st != OPS_OK)
                FAIL(c, op, s.v, variant, "failed: %s", ops_last_error());
            if (ops_tensor_version(g.t) <= version)
                FAIL(c, op, s.v, variant, "the version counter was not bumped");
            check_written(c, op, s.v, variant, &g, r, ptr, strides, false);
            const int a = argset_touched_after(&s, op);
            if (a >= 0)
                FAIL(c, op, s.v, variant, "wrote into its input '%s'", op->args[a].name);
            owned_drop(r);
            guarded_free(&g);
            counts.runs++;
            mark(op);
            if (nd == 0 || ops_tensor_numel(given) < 2)
                break;
        }
    } else {
        for (int pass = 0; pass < 2; pass++) {
            ops_tensor *o = new_tensor(nd, ops_tensor_sizes(given), ops_tensor_dtype(given));
            s.v[w] = ops_ivalue_tensor(o);
            if (pass == 0) {
                inject_faults(c, op, s.v, "out=, allocation failures", &s, NULL,
                              ops_tensor_numel(given) == 0 ? o : NULL);
                owned_drop(o);
                continue;
            }
            ops_tensor *r = call(op, s.v, &st);
            if (st != OPS_OK)
                FAIL(c, op, s.v, "out=", "failed: %s", ops_last_error());
            if (r != o)
                FAIL(c, op, s.v, "out=", "did not return out");
            if (!check_values(c, c->expected, o, MAP_SAME, false, (c->flags & F_VALUES) && (c->ret[0].flags & RET_COMPARE),
                              msg, sizeof msg))
                FAIL(c, op, s.v, "out=", "%s", msg);
            owned_drop(r);
            owned_drop(o);
            counts.runs++;
            mark(op);
        }
    }
    argset_free(&s);
    cuda_written_check(c);
}

/* Non-contiguous and expanded inputs give the same values. */
static void
run_layouts(const test_case *c, int case_index)
{
    static const lay_kind kinds[] = {LAY_STRIDED, LAY_TRANSPOSED, LAY_BROADCAST, LAY_OUTER0,
                                     LAY_INNER0,  LAY_RANDOM,     LAY_RANDOM};
    const bool new_dims = dims_may_change(c);
    char msg[1024];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const lay_kind kind = kinds[k];
        const bool elementwise_only = kind == LAY_BROADCAST || kind == LAY_OUTER0 || kind == LAY_INNER0;
        if (elementwise_only && !(c->flags & F_ELEMENTWISE))
            continue;
        if (kind == LAY_RANDOM && !(c->flags & F_RANDOM))
            continue;
        uint64_t rng = runner_seed * 0x9E3779B97F4A7C15ull + (uint64_t)case_index * 131u + k;
        argset s;
        argset_build(&s, c->args, c->nargs, kind, -1, c->expected, new_dims, &rng);
        if (s.changed == 0) {
            argset_free(&s);
            continue;
        }
        ops_status st;
        const char *variant = lay_names[kind];
        result *got = call_all(c->op, s.v, &st);
        if (got == NULL)
            FAIL(c, c->op, s.v, variant, "failed: %s", ops_last_error());
        const index_map map = kind == LAY_OUTER0 ? MAP_OUTER : kind == LAY_INNER0 ? MAP_INNER : MAP_SAME;
        if (!check_results(c, c->op, got, map, msg, sizeof msg))
            FAIL(c, c->op, s.v, variant, "%s", msg);
        const int a = argset_touched_after(&s, c->op);
        if (a >= 0)
            FAIL(c, c->op, s.v, variant, "wrote into its input '%s'", c->op->args[a].name);
        owned_drop(got);
        argset_free(&s);
        counts.runs++;
    }
}

/* The out= form (PyTorch's test_out): empty (resized), NaN-filled, strided and
 * transposed outs; wrong shapes, unsafe casts and self-overlapping outs refused.  An op
 * with several returns has one out= per return (out i holds return i): every check
 * gives all of them the same kind of out, and an error case makes one of them wrong in
 * turn, the others right, and requires all of them byte-identical afterwards. */
static void
run_out(const test_case *c, int case_index)
{
    const ops_op_info *op = c->op->out;
    int oi[MAX_RETS];
    const int nout = out_indices(op, oi);
    if (!tensor_returns(c) || nout != c->nret)
        return; /* Tensor[] returns have no out= form here */
    const bool elementwise = (c->flags & F_ELEMENTWISE) != 0;
    char msg[1024];
    ops_status st;
    ops_ivalue base[MAX_ARGS];
    map_args(c, op, base);
    argset s;
    argset_build(&s, base, op->num_args, LAY_CONTIGUOUS, oi[0], NULL, false, NULL);
    for (int k = 1; k < nout; k++)
        s.v[oi[k]] = ops_ivalue_none();

    /* empty outs are resized; allocation failures leave them empty */
    ops_tensor *o[MAX_RETS];
    for (int k = 0; k < nout; k++) {
        o[k] = new_tensor(1, (int64_t[]){0}, ops_tensor_dtype(c->ret[k].t));
        s.v[oi[k]] = ops_ivalue_tensor(o[k]);
    }
    inject_faults_n(c, op, s.v, "out=, empty, allocation failures", &s, NULL, 0, (const ops_tensor *const *)o, nout);
    for (int k = 0; k < nout; k++) {
        owned_drop(o[k]);
        o[k] = new_tensor(1, (int64_t[]){0}, ops_tensor_dtype(c->ret[k].t));
        s.v[oi[k]] = ops_ivalue_tensor(o[k]);
    }
    result *r = call_all(op, s.v, &st);
    if (r == NULL)
        FAIL(c, op, s.v, "out=, empty", "failed: %s", ops_last_error());
    for (int k = 0; k < nout; k++) {
        if (ret_tensor(r, k) != o[k])
            FAIL(c, op, s.v, "out=, empty", "did not return %s", nout > 1 ? out_name(op, k) : "out");
        const bool values = (c->flags & F_VALUES) && (c->ret[k].flags & RET_COMPARE);
        if (!check_values(c, c->ret[k].t, o[k], MAP_SAME, false, values, msg, sizeof msg))
            FAIL(c, op, s.v, "out=, empty", "%s%s%.900s", nout > 1 ? out_name(op, k) : "", nout > 1 ? ": " : "",
                 msg);
    }
    if (argset_touched_after(&s, op) >= 0)
        FAIL(c, op, s.v, "out=, empty", "wrote into an input");
    owned_drop(r);
    for (int k = 0; k < nout; k++)
        owned_drop(o[k]);
    counts.runs++;
    mark(op);

    /* outs of the right shape: their storage and strides are kept */
    enum { OUT_NAN, OUT_CONTIG, OUT_STRIDED, OUT_TRANSPOSED, OUT_RANDOM, OUT_KINDS };
    static const char *const names[] = {"out=, NaN-filled", "out=, contiguous", "out=, strided",
                                        "out=, transposed", "out=, random layout"};
    guarded g[MAX_RETS];
    const guarded *gp[MAX_RETS];
    for (int kind = 0; kind < OUT_KINDS; kind++) {
        /* a kind runs when it applies to some out (the others get a contiguous one) */
        bool any = false;
        for (int k = 0; k < nout; k++) {
            const ops_tensor *exp = c->ret[k].t;
            const int nd = (int)ops_tensor_ndim(exp);
            const int64_t numel = ops_tensor_numel(exp);
            any |= (kind == OUT_NAN && ops_dtype_is_floating(ops_tensor_dtype(exp))) || kind == OUT_CONTIG ||
                   (kind == OUT_STRIDED && nd >= 1 && numel >= 2) || (kind == OUT_TRANSPOSED && nd >= 2 && numel >= 2) ||
                   (kind == OUT_RANDOM && (c->flags & F_RANDOM) && nd >= 1);
        }
        if (!any)
            continue;
        uint64_t rng = runner_seed * 0xD1B54A32D192ED03ull + (uint64_t)case_index;
        layout l[MAX_RETS];
        for (int k = 0; k < nout; k++) {
            const ops_tensor *exp = c->ret[k].t;
            const int nd = (int)ops_tensor_ndim(exp);
            const int64_t numel = ops_tensor_numel(exp);
            l[k] = layout_contiguous(nd);
            if (kind == OUT_STRIDED && nd >= 1 && numel >= 2)
                l[k] = layout_strided(nd);
            else if (kind == OUT_TRANSPOSED && nd >= 2 && numel >= 2)
                l[k] = layout_transposed(nd);
            else if (kind == OUT_RANDOM && nd >= 1)
                l[k] = layout_random(nd, &rng);
            if (kind <= OUT_CONTIG)
                l[k].lead = 2;
            guarded_new(&g[k], nd, ops_tensor_sizes(exp), ops_tensor_dtype(exp), &l[k], NULL);
            prefill(&g[k], exp, kind == OUT_NAN && ops_dtype_is_floating(ops_tensor_dtype(exp)));
            gp[k] = &g[k];
        }
        if (kind == OUT_CONTIG) {
            for (int k = 0; k < nout; k++) {
                guarded_snapshot(&g[k]);
                s.v[oi[k]] = ops_ivalue_tensor(g[k].t);
            }
            inject_faults_n(c, op, s.v, "out=, allocation failures", &s, gp, nout, NULL, 0);
            for (int k = 0; k < nout; k++) {
                const ops_tensor *exp = c->ret[k].t;
                guarded_free(&g[k]);
                guarded_new(&g[k], (int)ops_tensor_ndim(exp), ops_tensor_sizes(exp), ops_tensor_dtype(exp), &l[k],
                            NULL);
                prefill(&g[k], exp, false);
            }
        }
        int64_t strides[MAX_RETS][OPS_MAX_DIMS];
        const void *ptr[MAX_RETS];
        for (int k = 0; k < nout; k++) {
            s.v[oi[k]] = ops_ivalue_tensor(g[k].t);
            memcpy(strides[k], ops_tensor_strides(g[k].t), sizeof(int64_t) * (size_t)ops_tensor_ndim(g[k].t));
            ptr[k] = ops_tensor_data_ptr(g[k].t);
        }
        r = call_all(op, s.v, &st);
        if (r == NULL)
            FAIL(c, op, s.v, names[kind], "failed: %s", ops_last_error());
        for (int k = 0; k < nout; k++)
            check_written_ret(c, op, s.v, names[kind], &g[k], ret_tensor(r, k), ptr[k], strides[k], false, k);
        if (argset_touched_after(&s, op) >= 0)
            FAIL(c, op, s.v, names[kind], "wrote into an input");
        owned_drop(r);
        for (int k = 0; k < nout; k++)
            guarded_free(&g[k]);
        counts.runs++;
    }

    /* one bad out (k) among right ones: an error, and no out written */
    for (int bad = 0; bad < nout; bad++) {
        const ops_tensor *bexp = c->ret[bad].t;
        const int bnd = (int)ops_tensor_ndim(bexp);
        const int64_t *bsizes = ops_tensor_sizes(bexp);
        const ops_dtype bed = ops_tensor_dtype(bexp);
        enum { BAD_SHAPE, BAD_CAST, BAD_DTYPE, BAD_OVERLAP, BAD_KINDS };
        for (int why = 0; why < BAD_KINDS; why++) {
            /* the out's geometry and dtype, and the message expected */
            int64_t wrong[OPS_MAX_DIMS];
            int wnd = bnd;
            ops_dtype od = bed;
            layout bl = layout_contiguous(bnd);
            char shape[160], variant[200];
            const char *fragment = NULL;
            memcpy(wrong, bsizes, sizeof(int64_t) * (size_t)bnd);
            if (why == BAD_SHAPE && elementwise) {
                /* a non-empty out of another shape (non-elementwise ops resize it, as PyTorch's) */
                wnd = bnd > 0 ? bnd : 1;
                for (int d = 0; d < bnd; d++)
                    wrong[d] = bsizes[d] > 0 ? bsizes[d] : 1;
                if (bnd == 0)
                    wrong[0] = 2;
                else
                    wrong[bnd - 1] += 1;
                bl = layout_contiguous(wnd);
                fragment = dims_str(wnd, wrong, shape, sizeof shape);
                snprintf(variant, sizeof variant, "out=, wrong shape%s%s", nout > 1 ? " of " : "",
                         nout > 1 ? out_name(op, bad) : "");
            } else if (why == BAD_CAST && elementwise && category(bed) > 0) {
                /* an out the result cannot be cast to (float into int, int into bool) */
                od = category(bed) == 2 ? OPS_INT64 : OPS_BOOL;
                fragment = "can't be cast to the desired output type";
                snprintf(variant, sizeof variant, "out=, unsafe cast");
            } else if (why == BAD_DTYPE && !elementwise && nout > 1) {
                /* several returns: each out must have exactly its return's dtype */
                od = bed == OPS_INT64 ? OPS_INT32 : ops_dtype_is_floating(bed) ? OPS_INT64 : OPS_FLOAT32;
                fragment = op->name;
                snprintf(variant, sizeof variant, "out=, %s of dtype %s for %s", out_name(op, bad), ops_dtype_name(od),
                         ops_dtype_name(bed));
            } else if (why == BAD_OVERLAP && (elementwise || nout > 1) && ops_tensor_numel(bexp) >= 2) {
                /* an out whose elements share memory */
                bl = layout_expanded(bnd);
                fragment = "more than one element of the written-to tensor";
                snprintf(variant, sizeof variant, "out=, %s overlapping itself", nout > 1 ? out_name(op, bad) : "out");
            }
            if (fragment == NULL)
                continue;
            for (int k = 0; k < nout; k++) {
                const ops_tensor *exp = c->ret[k].t;
                layout lk = layout_contiguous((int)ops_tensor_ndim(exp));
                if (k == bad)
                    guarded_new(&g[k], wnd, wrong, od, &bl, NULL);
                else
                    guarded_new(&g[k], (int)ops_tensor_ndim(exp), ops_tensor_sizes(exp), ops_tensor_dtype(exp), &lk,
                                NULL);
                guarded_snapshot(&g[k]);
                gp[k] = &g[k];
                s.v[oi[k]] = ops_ivalue_tensor(g[k].t);
            }
            expect_error_n(c, op, s.v, variant, fragment, &s, gp, nout, NULL, 0);
            for (int k = 0; k < nout; k++)
                guarded_free(&g[k]);
        }
    }
    argset_free(&s);
}

/* The in-place form: same storage, version bumped, strides kept, sentinels intact;
 * a result self cannot hold, a self that would need broadcasting and a self whose
 * elements share memory are errors. */
static void
run_inplace(const test_case *c, int case_index)
{
    const ops_op_info *op = c->op->inplace;
    if (c->args[0].tag != OPS_IVALUE_TENSOR || c->nret != 1 || !tensor_returns(c))
        return;
    const ops_tensor *self = c->args[0].v.tensor, *exp = c->expected;
    const ops_dtype sd = ops_tensor_dtype(self), ed = ops_tensor_dtype(exp);
    const int nd = (int)ops_tensor_ndim(self);
    const int64_t *sizes = ops_tensor_sizes(self);
    const bool elementwise = (c->flags & F_ELEMENTWISE) != 0;
    ops_status st;
    argset s;
    ops_ivalue base[MAX_ARGS];
    map_args(c, op, base);
    argset_build(&s, base, op->num_args, LAY_CONTIGUOUS, 0, NULL, false, NULL);
    guarded g;
    layout l;
    if (same_shape(self, exp)) {
        const bool comparable = sd == ed || ed == OPS_BOOL || (ops_dtype_is_floating(sd) && ops_dtype_is_floating(ed));
        if (comparable) {
            enum { IP_CONTIG, IP_STRIDED, IP_TRANSPOSED, IP_RANDOM, IP_KINDS };
            static const char *const names[] = {"in-place", "in-place, strided self", "in-place, transposed self",
                                                "in-place, random layout"};
            const int64_t numel = ops_tensor_numel(self);
            for (int k = 0; k < IP_KINDS; k++) {
                if ((k == IP_STRIDED && (nd < 1 || numel < 2)) || (k == IP_TRANSPOSED && (nd < 2 || numel < 2)) ||
                    (k == IP_RANDOM && (!(c->flags & F_RANDOM) || nd < 1)))
                    continue;
                uint64_t rng = runner_seed * 0xA24BAED4963EE407ull + (uint64_t)case_index;
                l = k == IP_STRIDED ? layout_strided(nd) : k == IP_TRANSPOSED ? layout_transposed(nd)
                    : k == IP_RANDOM ? layout_random(nd, &rng) : layout_contiguous(nd);
                if (k == IP_CONTIG) {
                    l.lead = 3;
                    guarded_new(&g, nd, sizes, sd, &l, self);
                    guarded_snapshot(&g);
                    s.v[0] = ops_ivalue_tensor(g.t);
                    inject_faults(c, op, s.v, "in-place, allocation failures", &s, &g, NULL);
                    guarded_free(&g);
                }
                guarded_new(&g, nd, sizes, sd, &l, self);
                s.v[0] = ops_ivalue_tensor(g.t);
                int64_t strides[OPS_MAX_DIMS];
                memcpy(strides, ops_tensor_strides(g.t), sizeof(int64_t) * (size_t)nd);
                const void *ptr = ops_tensor_data_ptr(g.t);
                const uint64_t version = ops_tensor_version(g.t);
                ops_tensor *r = call(op, s.v, &st);
                if (st != OPS_OK)
                    FAIL(c, op, s.v, names[k], "failed: %s", ops_last_error());
                if (ops_tensor_version(g.t) <= version)
                    FAIL(c, op, s.v, names[k], "the version counter was not bumped");
                check_written(c, op, s.v, names[k], &g, r, ptr, strides, true);
                if (argset_touched_after(&s, op) >= 0)
                    FAIL(c, op, s.v, names[k], "wrote into an input");
                owned_drop(r);
                guarded_free(&g);
                counts.runs++;
                mark(op);
            }
            if (elementwise && numel >= 2) {
                l = layout_expanded(nd);
                guarded_new(&g, nd, sizes, sd, &l, self);
                guarded_snapshot(&g);
                s.v[0] = ops_ivalue_tensor(g.t);
                expect_error(c, op, s.v, "in-place, expanded self", "more than one element of the written-to tensor",
                             &s, &g);
                guarded_free(&g);
            }
        } else if (elementwise && category(ed) > category(sd)) {
            l = layout_contiguous(nd);
            guarded_new(&g, nd, sizes, sd, &l, self);
            guarded_snapshot(&g);
            s.v[0] = ops_ivalue_tensor(g.t);
            expect_error(c, op, s.v, "in-place, unsafe cast", "can't be cast to the desired output type", &s, &g);
            guarded_free(&g);
        }
    } else if (elementwise && category(ed) <= category(sd)) {
        l = layout_contiguous(nd);
        guarded_new(&g, nd, sizes, sd, &l, self);
        guarded_snapshot(&g);
        s.v[0] = ops_ivalue_tensor(g.t);
        expect_error(c, op, s.v, "in-place, self would broadcast", "doesn't match the broadcast shape", &s, &g);
        guarded_free(&g);
    }
    argset_free(&s);
}

/* An expected error, in every form the case names. */
static void
run_error(const test_case *c)
{
    const ops_op_info *op = c->op;
    argset s;
    guarded g;
    layout l;
    ops_ivalue base[MAX_ARGS];
    /* an undeclared dtype, or one of the metadata's `errors:` */
    const bool undeclared = (c->flags & F_DTYPE_ERROR) != 0;
    if ((c->forms & FORM_FUNCTIONAL) && op->kind == OPS_KIND_FUNCTIONAL) {
        argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, -1, NULL, false, NULL);
        expect_error(c, op, s.v, undeclared ? "undeclared dtype" : "expected error", c->error, &s, NULL);
        argset_free(&s);
    }
    const ops_op_info *o = op->kind == OPS_KIND_OUT ? op : op->out;
    if ((c->forms & FORM_OUT) && o != NULL) {
        /* every out= argument: its template (guarded), then all of them empty */
        map_args(c, o, base);
        int oi[MAX_RETS] = {0};
        const int nout = out_indices(o, oi);
        argset_build(&s, base, o->num_args, LAY_CONTIGUOUS, nout > 0 ? oi[0] : -1, NULL, false, NULL);
        for (int k = 1; k < nout; k++)
            s.v[oi[k]] = ops_ivalue_none();
        guarded gs[MAX_RETS];
        const guarded *gp[MAX_RETS];
        ops_tensor *e[MAX_RETS] = {0}; /* GCC -O2 cannot see the loops fill nout of them */
        ops_dtype od[MAX_RETS];
        const bool templates = c->nouts == nout && nout > 0;
        for (int k = 0; k < nout; k++) {
            const ops_tensor *t = templates ? c->out_templates[k] : NULL;
            od[k] = t ? ops_tensor_dtype(t) : c->dtype != OPS_DTYPE_NONE ? c->dtype : OPS_FLOAT32;
            if (templates) {
                l = layout_contiguous((int)ops_tensor_ndim(t));
                l.lead = 2;
                guarded_new(&gs[k], (int)ops_tensor_ndim(t), ops_tensor_sizes(t), od[k], &l, t);
                guarded_snapshot(&gs[k]);
                gp[k] = &gs[k];
                s.v[oi[k]] = ops_ivalue_tensor(gs[k].t);
            }
        }
        if (templates) {
            expect_error_n(c, o, s.v, undeclared ? "undeclared dtype, out=" : "expected error, out=", c->error, &s,
                           gp, nout, NULL, 0);
            for (int k = 0; k < nout; k++)
                guarded_free(&gs[k]);
        }
        for (int k = 0; k < nout; k++) {
            e[k] = new_tensor(1, (int64_t[]){0}, od[k]);
            s.v[oi[k]] = ops_ivalue_tensor(e[k]);
        }
        const char *variant = undeclared ? "undeclared dtype, empty out=" : "expected error, empty out=";
        expect_error_n(c, o, s.v, variant, c->error, &s, NULL, 0, (const ops_tensor *const *)e, nout);
        for (int k = 0; k < nout; k++)
            owned_drop(e[k]);
        argset_free(&s);
    }
    const ops_op_info *ip = op->kind == OPS_KIND_INPLACE ? op : op->inplace;
    if ((c->forms & FORM_INPLACE) && ip != NULL) {
        map_args(c, ip, base);
        if (base[0].tag == OPS_IVALUE_TENSOR) {
            const ops_tensor *self = base[0].v.tensor;
            argset_build(&s, base, ip->num_args, LAY_CONTIGUOUS, 0, NULL, false, NULL);
            l = layout_contiguous((int)ops_tensor_ndim(self));
            l.lead = 3;
            guarded_new(&g, (int)ops_tensor_ndim(self), ops_tensor_sizes(self), ops_tensor_dtype(self), &l, self);
            guarded_snapshot(&g);
            s.v[0] = ops_ivalue_tensor(g.t);
            expect_error(c, ip, s.v, undeclared ? "undeclared dtype, in-place" : "expected error, in-place", c->error,
                         &s, &g);
            guarded_free(&g);
            argset_free(&s);
        }
    }
}

/* ---- gradients ---------------------------------------------------------------- */

static int
by_ptr_index(const ops_op_info *op)
{
    const ops_op_info **hit = bsearch(&op, by_ptr, (size_t)nregistry, sizeof *by_ptr, cmp_ptr);
    return hit != NULL ? (int)(hit - by_ptr) : -1;
}

/* The formula entry of a functional op, or -1. */
static int
formula_index(const ops_op_info *op)
{
    char full[160];
    snprintf(full, sizeof full, "%s%s%s", op->name, op->overload[0] ? "." : "", op->overload);
    for (int e = 0; e < ops_autograd_num_formula_entries; e++)
        if (strcmp(ops_autograd_formula_entries[e], full) == 0)
            return e;
    return -1;
}

static bool
in_list(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *q = strchr(p, ',');
        const size_t len = q != NULL ? (size_t)(q - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = q != NULL ? q + 1 : p + len;
    }
    return false;
}

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

/* The case's arguments with inputs[] in place; lists[a] holds a Tensor[] argument's
 * new element array. */
static void
grad_args(const grad_call *g, ops_tensor *const *inputs, ops_ivalue *args,
          const ops_tensor *(*lists)[MAX_GRAD_INPUTS])
{
    memcpy(args, g->args, sizeof g->args);
    for (int a = 0; a < g->nargs; a++) {
        if (args[a].tag != OPS_IVALUE_TENSOR_LIST)
            continue;
        const ops_tensor_list l = args[a].v.tensor_list;
        for (int64_t k = 0; k < l.len && k < MAX_GRAD_INPUTS; k++)
            lists[a][k] = l.data[k];
        args[a].v.tensor_list.data = lists[a];
    }
    for (int i = 0; i < g->ninputs; i++) {
        if (inputs[i] == NULL)
            continue;
        if (g->elem_of[i] < 0)
            args[g->arg_of[i]] = ops_ivalue_tensor(inputs[i]);
        else
            lists[g->arg_of[i]][g->elem_of[i]] = inputs[i];
    }
}

/* f(inputs) for ops_gradcheck: the boxed call, keeping the output under test. */
static ops_status
grad_fn(ops_tensor *const *inputs, int n, ops_tensor **out, void *ctx)
{
    const grad_call *g = ctx;
    ops_ivalue args[MAX_ARGS], r[MAX_RETS];
    const ops_tensor *lists[MAX_ARGS][MAX_GRAD_INPUTS];
    (void)n;
    grad_args(g, inputs, args, lists);
    ops_status st = g->op->call(args, r);
    if (st != OPS_OK)
        return st;
    const ops_ivalue *o = &r[g->out_ret];
    if (o->tag == OPS_IVALUE_TENSOR_LIST) {
        if (g->out_elem >= o->v.tensor_list.len)
            st = ops_fail(OPS_ERR_VALUE, "gradients: the op returned %lld tensors, wanted element %d",
                          (long long)o->v.tensor_list.len, g->out_elem);
        else
            *out = ops_tensor_retain(o->v.tensor_list.data[g->out_elem]);
    } else {
        *out = ops_tensor_retain(o->v.tensor);
    }
    for (int i = 0; i < g->op->num_returns; i++)
        ops_ivalue_release(&r[i]);
    return st;
}

static bool
all_finite(const ops_tensor *t)
{
    const int64_t n = ops_tensor_numel(t);
    const double *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(p[i]))
            return false;
    return true;
}

/* The case's floating tensor t in float64, transposed in layout on pass 1 when 2-D or
 * more (*transposed set then); NULL when it holds a non-finite value. */
static ops_tensor *
grad_input(const ops_tensor *t, int pass, bool *transposed, bool *finite)
{
    ops_tensor *x = ops_to_dtype(t, OPS_FLOAT64, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(x);
    if (pass == 1 && ops_tensor_ndim(x) >= 2) {
        /* the same values through a transposed layout */
        const int nd = (int)ops_tensor_ndim(x);
        ops_tensor *xt = ops_transpose(x, nd - 2, nd - 1);
        ops_tensor *c2 = ops_contiguous(xt, OPS_CONTIGUOUS_FORMAT);
        ops_tensor *back = ops_transpose(c2, nd - 2, nd - 1);
        ops_tensor_release(xt);
        ops_tensor_release(c2);
        ops_tensor_release(x);
        x = back;
        *transposed = true;
    }
    ops_tensor *cx = ops_contiguous(x, OPS_CONTIGUOUS_FORMAT);
    *finite = *finite && all_finite(cx);
    ops_tensor_release(cx);
    return x;
}

/* gradcheck + gradgradcheck of output (ret, elem) of the case's op. */
static void
grad_check_output(const test_case *c, grad_call *g, ops_tensor **inputs, int pass, int e)
{
    const ops_op_info *op = c->op;
    char variant[96], elem[32] = "";
    if (g->out_elem >= 0)
        snprintf(elem, sizeof elem, " element %d", g->out_elem);
    snprintf(variant, sizeof variant, "gradcheck%s, output %d%s", pass == 0 ? "" : " (transposed inputs)", g->out_ret,
             elem);
    const ops_status st1 = ops_gradcheck(grad_fn, g, g->ninputs, inputs, NULL);
    if (st1 == OPS_ERR_NOT_IMPLEMENTED) { /* the formula refuses this case */
        counts.grad_not_implemented++;
        grad_checked[e] = true;
        return;
    }
    if (st1 != OPS_OK)
        FAIL(c, op, g->args, variant, "%s", ops_last_error());
    const ops_status st = ops_gradgradcheck(grad_fn, g, g->ninputs, inputs, NULL);
    if (st == OPS_ERR_NOT_IMPLEMENTED)
        counts.gradgrad_skipped++;
    else if (st != OPS_OK)
        FAIL(c, op, g->args, variant, "gradgradcheck: %s", ops_last_error());
    counts.grads++;
    grad_checked[e] = true;
}

/* ---- CUDA: gradients on the device against the CPU's --------------------------------- */

/* Gradients of output (g->out_ret, g->out_elem) with respect to the inputs requiring
 * grad, for a fixed grad_output, on cuda:0 against the same on the CPU (float64:
 * they differ by summation order only). */
static void
cuda_grad_check(const test_case *c, const grad_call *g, ops_tensor *const *inputs)
{
#ifdef OPS_WITH_CUDA
    if (ops_cuda_device_count() == 0)
        return;
    const ops_op_info *op = c->op;
    char variant[96];
    snprintf(variant, sizeof variant, "cuda:0 gradients, output %d", g->out_ret);
    ops_tensor *want[MAX_GRAD_INPUTS], *dev_in[MAX_GRAD_INPUTS] = {0};
    int nwant = 0;
    for (int i = 0; i < g->ninputs; i++)
        if (inputs[i] != NULL && ops_tensor_requires_grad(inputs[i]))
            want[nwant++] = inputs[i];
    ops_tensor *y = NULL;
    if (nwant == 0 || grad_fn(inputs, g->ninputs, &y, (void *)g) != OPS_OK)
        return; /* the CPU gradcheck reports a failing forward */
    owned_add(y, owned_release_tensor);
    /* grad_output: fixed values in [-0.5, 0.5) that differ between neighbours */
    ops_tensor *v = ops_tensor_new("conformance", (int)ops_tensor_ndim(y), ops_tensor_sizes(y), NULL, OPS_FLOAT64,
                                   OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(v);
    owned_add(v, owned_release_tensor);
    double *vp = ops_tensor_data_ptr(v);
    for (int64_t i = 0; i < ops_tensor_numel(v); i++)
        vp[i] = (double)((i * 37 + 11) % 23) / 23.0 - 0.5;
    ops_tensor_vec gc = {0}, gd = {0};
    ops_status st = ops_autograd_grad((ops_tensor_list){(const ops_tensor **)&y, 1},
                                      (ops_tensor_list){(const ops_tensor **)want, nwant},
                                      (ops_tensor_list){(const ops_tensor **)&v, 1}, false, false, true, &gc);
    if (st != OPS_OK)
        return; /* refused by the formula (counted by the gradcheck) */

    /* the same on the device: every argument copied, inputs made leaves there */
    grad_call gdev = *g;
    const bool prev = ops_set_grad_enabled(false);
    bool ok = device_args(g->op, g->args, DEV_CONTIGUOUS, gdev.args, &st);
    for (int i = 0; ok && i < g->ninputs; i++) {
        if (inputs[i] == NULL)
            continue;
        dev_in[i] = to_device(inputs[i], DEV_CONTIGUOUS, &st);
        ok = dev_in[i] != NULL &&
             (!ops_tensor_requires_grad(inputs[i]) || ops_tensor_set_requires_grad(dev_in[i], true) == OPS_OK);
    }
    ops_tensor *vd = ok ? to_device(v, DEV_CONTIGUOUS, &st) : NULL;
    ops_set_grad_enabled(prev);
    if (!ok || vd == NULL) {
        ops_tensor_vec_release(&gc);
        FAIL(c, op, g->args, variant, "copy to cuda:0 failed: %s", ops_last_error());
    }
    ops_tensor *wantd[MAX_GRAD_INPUTS];
    int nd = 0;
    for (int i = 0; i < g->ninputs; i++)
        if (inputs[i] != NULL && ops_tensor_requires_grad(inputs[i]))
            wantd[nd++] = dev_in[i];
    ops_tensor *yd = NULL;
    st = grad_fn(dev_in, g->ninputs, &yd, &gdev);
    owned_add(yd, owned_release_tensor);
    if (st == OPS_OK)
        st = ops_autograd_grad((ops_tensor_list){(const ops_tensor **)&yd, 1},
                               (ops_tensor_list){(const ops_tensor **)wantd, nd},
                               (ops_tensor_list){(const ops_tensor **)&vd, 1}, false, false, true, &gd);
    if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "no kernel for device cuda") != NULL) {
        ops_tensor_vec_release(&gc);
        cuda_note_missing(op); /* the op or an op of its backward has no CUDA kernel */
        return;
    }
    if (st != OPS_OK) {
        ops_tensor_vec_release(&gc);
        FAIL(c, op, gdev.args, variant, "failed on cuda:0: %s", ops_last_error());
    }
    char msg[512] = "";
    for (int k = 0; k < nwant && msg[0] == '\0'; k++) {
        const ops_tensor *a = gc.data[k], *b = gd.data[k];
        if ((a == NULL) != (b == NULL)) {
            snprintf(msg, sizeof msg, "input %d: the gradient is %s on the cpu, %s on cuda:0", k,
                     a ? "defined" : "undefined", b ? "defined" : "undefined");
            break;
        }
        if (a == NULL)
            continue;
        ops_tensor *hb = to_host(b, &st);
        if (hb == NULL || !same_shape(a, hb) || ops_tensor_dtype(a) != ops_tensor_dtype(hb)) {
            snprintf(msg, sizeof msg, "input %d: the gradient's shape or dtype differs (or its copy failed)", k);
            break;
        }
        ops_tensor *ca = ops_contiguous(a, OPS_CONTIGUOUS_FORMAT), *cb = ops_contiguous(hb, OPS_CONTIGUOUS_FORMAT);
        for (int64_t i = 0; i < ops_tensor_numel(ca); i++) {
            const double x = read_double(ops_tensor_dtype(ca), element_ptr(ca, i));
            const double z = read_double(ops_tensor_dtype(cb), element_ptr(cb, i));
            const bool same = (isnan(x) && isnan(z)) || x == z || fabs(x - z) <= 1e-9 + 1e-7 * fabs(x);
            if (!same) {
                snprintf(msg, sizeof msg, "input %d: gradient element %lld is %.12g on cuda:0, %.12g on the cpu", k,
                         (long long)i, z, x);
                break;
            }
        }
        ops_tensor_release(ca);
        ops_tensor_release(cb);
        owned_drop(hb);
    }
    ops_tensor_vec_release(&gc);
    ops_tensor_vec_release(&gd);
    if (msg[0] != '\0')
        FAIL(c, op, gdev.args, variant, "%s", msg);
    counts.cuda_grads++;
#else
    (void)c;
    (void)g;
    (void)inputs;
#endif
}

/* backward and double backward of the case's op against finite differences, with its
 * floating tensor inputs in float64 (contiguous, then transposed when 2-D or more):
 * every element of a Tensor[] input is an input of its own, and every floating output
 * (each return, each element of a Tensor[] return) is checked in turn, the others
 * getting no gradient (the engine's zeros). */
static void
run_gradients(const test_case *c)
{
    const ops_op_info *op = c->op;
    const int e = formula_index(op);
    if (e < 0 || op->kind != OPS_KIND_FUNCTIONAL || !(c->flags & F_VALUES) || (c->flags & F_NO_GRADCHECK) ||
        op->returns == NULL || strncmp(op->returns[0].type, "Tensor", 6) != 0)
        return;
    if (c->dtype != OPS_FLOAT64 && !(c->dtype == OPS_FLOAT32 && !has_f64_case[by_ptr_index(op)]))
        return;
    for (int pass = 0; pass < 2; pass++) {
        grad_call g = {.op = op, .nargs = c->nargs};
        memcpy(g.args, c->args, sizeof g.args);
        ops_tensor *inputs[MAX_GRAD_INPUTS] = {0};
        bool any = false, usable = true, transposable = false;
        for (int a = 0; a < c->nargs && usable; a++) {
            const ops_ivalue *v = &c->args[a];
            const bool list = v->tag == OPS_IVALUE_TENSOR_LIST;
            if (!list && (v->tag != OPS_IVALUE_TENSOR || v->v.tensor == NULL))
                continue;
            const int64_t count = list ? v->v.tensor_list.len : 1;
            const bool wanted = in_list(ops_autograd_formula_inputs[e], op->args[a].name);
            for (int64_t k = 0; k < count; k++) {
                const ops_tensor *t = list ? v->v.tensor_list.data[k] : v->v.tensor;
                if (t == NULL || !ops_dtype_is_floating(ops_tensor_dtype(t)))
                    continue;
                ck_assert_msg(g.ninputs < MAX_GRAD_INPUTS && k < MAX_GRAD_INPUTS, "gradients: too many inputs");
                ops_tensor *x = grad_input(t, pass, &transposable, &usable);
                if (wanted) {
                    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
                    any = true;
                }
                g.arg_of[g.ninputs] = a;
                g.elem_of[g.ninputs] = list ? (int)k : -1;
                inputs[g.ninputs++] = x;
            }
        }
        int nouts = 0;
        int outs[MAX_GRAD_INPUTS][2];
        if (any && usable && (pass == 0 || transposable)) {
            /* Finite differences need float64 outputs, finite where they are probed (a
             * case may sit outside the op's smooth domain: sqrt of negatives), and an op
             * that takes this layout at all (view of a transposed tensor).  Integer
             * outputs (indices) carry no gradient and are not checked. */
            ops_ivalue args[MAX_ARGS], r[MAX_RETS];
            const ops_tensor *lists[MAX_ARGS][MAX_GRAD_INPUTS];
            grad_args(&g, inputs, args, lists);
            const bool prev = ops_set_grad_enabled(false);
            const bool ok = op->call(args, r) == OPS_OK;
            ops_set_grad_enabled(prev);
            for (int i = 0; ok && i < op->num_returns; i++) {
                const bool list = r[i].tag == OPS_IVALUE_TENSOR_LIST;
                const int64_t count = list ? r[i].v.tensor_list.len : r[i].tag == OPS_IVALUE_TENSOR;
                for (int64_t k = 0; k < count && nouts < MAX_GRAD_INPUTS; k++) {
                    const ops_tensor *y = list ? r[i].v.tensor_list.data[k] : r[i].v.tensor;
                    if (ops_tensor_dtype(y) != OPS_FLOAT64 || ops_autograd_formula_outputs[e][i] != '1')
                        continue;
                    ops_tensor *cy = ops_contiguous(y, OPS_CONTIGUOUS_FORMAT);
                    const bool finite = all_finite(cy);
                    ops_tensor_release(cy);
                    if (!finite) { /* the case is outside the op's domain: no output checked */
                        usable = false;
                        break;
                    }
                    outs[nouts][0] = i;
                    outs[nouts][1] = list ? (int)k : -1;
                    nouts++;
                }
            }
            for (int i = 0; ok && i < op->num_returns; i++)
                ops_ivalue_release(&r[i]);
        }
        for (int k = 0; any && usable && (pass == 0 || transposable) && k < nouts; k++) {
            g.out_ret = outs[k][0];
            g.out_elem = outs[k][1];
            if (!backend_only)
                grad_check_output(c, &g, inputs, pass, e);
            if (pass == 0)
                cuda_grad_check(c, &g, inputs);
        }
        for (int a = 0; a < MAX_GRAD_INPUTS; a++)
            ops_tensor_release(inputs[a]);
    }
}

/* An op without a formula must not be differentiable: called with its floating inputs
 * requiring grad, it either succeeds (integer or bool results, or an entry that says
 * its outputs carry no gradient) or fails with "the derivative for ... is not
 * implemented" -- which marks a missing formula, reported at the end of a full run. */
static void
run_formula_probe(const test_case *c)
{
    const ops_op_info *op = c->op;
    if (op->kind != OPS_KIND_FUNCTIONAL || formula_index(op) >= 0 || (c->flags & F_ERROR) ||
        !ops_dtype_is_floating(c->dtype))
        return;
    const int k = by_ptr_index(op);
    if (k < 0 || no_formula[k])
        return;
    ops_ivalue args[MAX_ARGS], r[MAX_RETS];
    memcpy(args, c->args, sizeof args);
    ops_tensor *inputs[MAX_ARGS] = {0};
    bool any = false;
    for (int a = 0; a < c->nargs; a++) {
        const ops_ivalue *v = &c->args[a];
        if (v->tag != OPS_IVALUE_TENSOR || v->v.tensor == NULL || !ops_dtype_is_floating(ops_tensor_dtype(v->v.tensor)))
            continue;
        inputs[a] = ops_clone(v->v.tensor, OPS_MEMORY_FORMAT_NONE);
        ck_assert_ptr_nonnull(inputs[a]);
        ck_assert_int_eq(ops_tensor_set_requires_grad(inputs[a], true), OPS_OK);
        args[a] = ops_ivalue_tensor(inputs[a]);
        any = true;
    }
    if (any) {
        const bool prev = ops_set_grad_enabled(true);
        const ops_status st = op->call(args, r);
        ops_set_grad_enabled(prev);
        if (st == OPS_OK) {
            for (int i = 0; i < op->num_returns; i++)
                ops_ivalue_release(&r[i]);
        } else if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "the derivative for") != NULL) {
            no_formula[k] = true;
        }
    }
    for (int a = 0; a < MAX_ARGS; a++)
        ops_tensor_release(inputs[a]);
}

/* --backend cuda: the CPU's functional result, then the CUDA family alone (the CPU
 * families run in the main tree). */
static void
run_backend(const test_case *c)
{
    if (c->flags & F_ERROR) {
        cuda_error(c);
        return;
    }
    if (c->op->kind != OPS_KIND_FUNCTIONAL) {
        mark(c->op);
        cuda_written_check(c);
        return;
    }
    ops_status st;
    argset s;
    argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, -1, NULL, false, NULL);
    result *got = call_all(c->op, s.v, &st);
    if (got == NULL)
        FAIL(c, c->op, s.v, "contiguous", "failed on the cpu: %s", ops_last_error());
    mark(c->op);
    cuda_check(c, s.v, got);
    owned_drop(got);
    argset_free(&s);
    run_gradients(c);
}

START_TEST(test_case_run)
{
    const int ci = selected[_i];
    const test_case *c = &cf.cases[ci];
    owned_free_all(); /* what a failed case before this one left */
    if (backend_only) {
        run_backend(c);
        return;
    }
    if (c->flags & F_ERROR) {
        run_error(c);
        cuda_error(c);
        return;
    }
    run_primary(c);
    if (c->op->kind != OPS_KIND_FUNCTIONAL)
        return;
    if (c->flags & F_LAYOUTS)
        run_layouts(c, ci);
    if (c->flags & F_VARIANTS) {
        if (c->op->out)
            run_out(c, ci);
        if (c->op->inplace)
            run_inplace(c, ci);
    }
    run_gradients(c);
    run_formula_probe(c);
}
END_TEST

/* ---- command line, coverage, summary ------------------------------------------------ */

/* The ops that found no CUDA kernel, against the documented exceptions (a Markdown
 * table whose rows start "| `name` |", docs/cuda-exceptions.md): in a full run an op
 * missing from the table, or a listed op that has a kernel now, is a failure.
 * Returns the number of such failures. */
static int
cuda_report(const char *exceptions_path, bool full)
{
    char *listed = calloc((size_t)nregistry + 1, 1);
    int bad = 0, missing = 0;
    FILE *f = exceptions_path ? fopen(exceptions_path, "r") : NULL;
    if (exceptions_path && f == NULL) {
        printf("conformance: cannot read %s\n", exceptions_path);
        bad++;
    }
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        char name[128];
        if (sscanf(line, "| `%127[^`]` |", name) != 1)
            continue;
        bool found = false;
        char b[128];
        for (int r = 0; r < nregistry; r++) {
            char full[256]; /* name.overload, as the table may name one overload */
            snprintf(full, sizeof full, "%s%s%s", by_ptr[r]->name, by_ptr[r]->overload[0] ? "." : "",
                     by_ptr[r]->overload);
            if (strcmp(base_name(by_ptr[r]->name, b, sizeof b), name) == 0 || strcmp(by_ptr[r]->name, name) == 0 ||
                strcmp(full, name) == 0) {
                listed[r] = 1;
                found = true;
            }
        }
        if (!found) {
            printf("conformance: %s lists '%s', which is not an op\n", exceptions_path, name);
            bad++;
        }
    }
    if (f)
        fclose(f);
    for (int r = 0; r < nregistry; r++) {
        if (!cuda_missing[r])
            continue;
        const ops_op_info *e = by_ptr[r];
        if (missing++ == 0)
            printf("conformance: ops without a CUDA kernel:");
        printf(" %s%s%s%s", e->name, e->overload[0] ? "." : "", e->overload, listed[r] ? "" : " (not in the exceptions)");
        if (full && exceptions_path && !listed[r])
            bad++;
    }
    if (missing)
        printf("\n");
    free(listed);
    return bad;
}

static void
usage(void)
{
    fprintf(stderr, "usage: conformance CASES.bin [--op NAME] [--dtype DTYPE] [--coverage] [--seed N]\n"
                    "                   [--backend cuda] [--cuda-exceptions FILE]\n"
                    "  --op NAME      only this op: a base name (add) or name.overload (add.Scalar)\n"
                    "  --dtype DTYPE  only cases of this dtype (float32, int64, ...)\n"
                    "  --coverage     list the registry entries no case ran; exit 1 if there are any\n"
                    "  --seed N       seed of the runner's random layouts (default 1)\n"
                    "  --backend cuda only the CUDA family (device vs cpu); exit 77 without a device\n"
                    "  --cuda-exceptions FILE  the documented ops without a CUDA kernel (a full run\n"
                    "                 fails on an op missing a kernel that the file does not list)\n");
}

/* op's name without a trailing '_' (add_ -> add), into buf. */
static const char *
base_name(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name);
    size_t len = strlen(buf);
    if (len > 1 && buf[len - 1] == '_')
        buf[len - 1] = 0;
    return buf;
}

static bool
op_matches(const ops_op_info *op, const char *filter)
{
    if (op == NULL)
        return false;
    const char *dot = strchr(filter, '.');
    if (dot != NULL)
        return strlen(op->name) == (size_t)(dot - filter) && strncmp(op->name, filter, (size_t)(dot - filter)) == 0 &&
               strcmp(op->overload, dot + 1) == 0;
    char b1[128], b2[128];
    return strcmp(base_name(op->name, b1, sizeof b1), base_name(filter, b2, sizeof b2)) == 0;
}

/* The entry, or one of the other forms of its op, matches. */
static bool
group_matches(const ops_op_info *op, const char *filter)
{
    return op_matches(op, filter) || op_matches(op->functional, filter) || op_matches(op->out, filter) ||
           op_matches(op->inplace, filter);
}

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
    const char *path = NULL, *op_filter = NULL, *dtype_name = NULL, *exceptions_path = NULL;
    bool coverage = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
            op_filter = argv[++i];
        } else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
            dtype_name = argv[++i];
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            char *end;
            runner_seed = strtoull(argv[++i], &end, 0);
            if (*end != 0) {
                usage();
                return 2;
            }
        } else if (strcmp(argv[i], "--coverage") == 0) {
            coverage = true;
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc && strcmp(argv[i + 1], "cuda") == 0) {
            backend_only = true;
            i++;
        } else if (strcmp(argv[i], "--cuda-exceptions") == 0 && i + 1 < argc) {
            exceptions_path = argv[++i];
        } else if (argv[i][0] != '-' && path == NULL) {
            path = argv[i];
        } else {
            usage();
            return 2;
        }
    }
    if (path == NULL)
        path = getenv("OPS_CASES");
    if (path == NULL) {
        usage();
        return 2;
    }
    if (backend_only) {
#ifdef OPS_WITH_CUDA
        if (ops_cuda_device_count() == 0) {
            printf("conformance --backend cuda: SKIPPED: no CUDA device\n");
            return 77;
        }
#else
        printf("conformance --backend cuda: SKIPPED: libops built without CUDA\n");
        return 77;
#endif
    }
    ops_dtype dtype_filter = OPS_DTYPE_NONE;
    if (dtype_name != NULL && (dtype_filter = ops_dtype_from_name(dtype_name)) == OPS_DTYPE_NONE) {
        fprintf(stderr, "conformance: unknown dtype '%s'\n", dtype_name);
        return 2;
    }

    nregistry = ops_registry_count();
    covered = calloc((size_t)nregistry + 1, sizeof *covered);
    by_ptr = calloc((size_t)nregistry + 1, sizeof *by_ptr);
    bool filter_known = op_filter == NULL;
    for (int i = 0; i < nregistry; i++) {
        by_ptr[i] = ops_registry_at(i);
        filter_known |= op_filter != NULL && group_matches(by_ptr[i], op_filter);
    }
    qsort(by_ptr, (size_t)nregistry, sizeof *by_ptr, cmp_ptr);
    if (!filter_known) {
        fprintf(stderr, "conformance: no registry entry matches --op %s\n", op_filter);
        return 2;
    }
    if (!cases_load(path, &cf)) {
        cases_free(&cf);
        return 2;
    }

    selected = calloc((size_t)cf.ncases + 1, sizeof *selected);
    grad_checked = calloc((size_t)ops_autograd_num_formula_entries + 1, sizeof *grad_checked);
    grad_eligible = calloc((size_t)ops_autograd_num_formula_entries + 1, sizeof *grad_eligible);
    has_f64_case = calloc((size_t)nregistry + 1, sizeof *has_f64_case);
    no_formula = calloc((size_t)nregistry + 1, sizeof *no_formula);
    cuda_missing = calloc((size_t)nregistry + 1, sizeof *cuda_missing);
    for (int i = 0; i < cf.ncases; i++) {
        const test_case *c = &cf.cases[i];
        if (!(c->flags & F_ERROR) && c->dtype == OPS_FLOAT64) {
            const int k = by_ptr_index(c->op);
            if (k >= 0)
                has_f64_case[k] = true;
        }
    }
    char *seen_ops = calloc((size_t)nregistry + 1, 1);
    int nops = 0;
    for (int i = 0; i < cf.ncases; i++) {
        const test_case *c = &cf.cases[i];
        if (op_filter != NULL && !group_matches(c->op, op_filter))
            continue;
        if (dtype_filter != OPS_DTYPE_NONE && c->dtype != dtype_filter)
            continue;
        selected[nselected++] = i;
        /* (a bool or integer result, eq's or logical_and's, has no gradient to check:
         * their formulas serve the in-place forms on a floating self) */
        if ((c->flags & F_VALUES) && !(c->flags & (F_ERROR | F_NO_GRADCHECK)) &&
            c->op->kind == OPS_KIND_FUNCTIONAL && (c->expected == NULL ||
                                                   ops_dtype_is_floating(ops_tensor_dtype(c->expected)))) {
            const int e = formula_index(c->op);
            if (e >= 0)
                grad_eligible[e] = true;
        }
        /* count ops by base name: the first registry entry of that name stands for it */
        char b1[128], b2[128];
        base_name(c->op->name, b1, sizeof b1);
        for (int r = 0; r < nregistry; r++) {
            if (strcmp(base_name(ops_registry_at(r)->name, b2, sizeof b2), b1) == 0) {
                if (!seen_ops[r])
                    nops++;
                seen_ops[r] = 1;
                break;
            }
        }
    }
    free(seen_ops);

    printf("conformance: %d of %d cases selected%s%s%s%s; runner seed %llu, case seed %llu\n", nselected, cf.ncases,
           op_filter ? " (--op " : "", op_filter ? op_filter : "", op_filter ? ")" : "",
           dtype_name ? " (--dtype)" : "", (unsigned long long)runner_seed, (unsigned long long)cf.seed);
    fflush(stdout);
    const double t0 = now_s();
    Suite *suite = suite_create("conformance");
    TCase *tc = tcase_create("numpy-oracle");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_case_run, 0, nselected);
    suite_add_tcase(suite, tc);
    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    const double wall = now_s() - t0;
    owned_free_all();

    /* coverage: every registry entry in scope must have had a checked call */
    int uncovered = 0;
    const bool check_coverage = !backend_only && (coverage || dtype_filter == OPS_DTYPE_NONE);
    if (counts.cuda_run > 0 || backend_only)
        uncovered += cuda_report(exceptions_path, op_filter == NULL && dtype_filter == OPS_DTYPE_NONE);
    if (check_coverage) {
        for (int r = 0; r < nregistry; r++) {
            const ops_op_info *e = ops_registry_at(r);
            if (op_filter != NULL && !group_matches(e, op_filter))
                continue;
            const bool *slot = coverage_slot(e);
            if (slot == NULL || !*slot) {
                if (uncovered++ == 0)
                    printf("conformance: registry entries with no conformance run:\n");
                printf("    %s%s%s    %s\n", e->name, e->overload[0] ? "." : "", e->overload, e->schema);
            }
        }
        if (uncovered)
            printf("conformance: %d registry entr%s not covered (each needs a case: docs/conformance.md)\n", uncovered,
                   uncovered == 1 ? "y" : "ies");
        /* every formula of ops/derivatives.yaml had a gradient run */
        for (int e = 0; e < ops_autograd_num_formula_entries; e++) {
            const ops_op_info *fo = ops_registry_find(ops_autograd_formula_entries[e], NULL);
            /* (random ops have no value cases: nothing to compare finite differences with) */
            if (grad_checked[e] || !grad_eligible[e] ||
                (op_filter != NULL && fo != NULL && !group_matches(fo, op_filter)))
                continue;
            printf("conformance: %s has a formula but no gradcheck ran (needs a floating case)\n",
                   ops_autograd_formula_entries[e]);
            uncovered++;
        }
        /* every differentiable op has one */
        for (int r = 0; r < nregistry; r++) {
            if (!no_formula[r])
                continue;
            const ops_op_info *e = by_ptr[r];
            printf("conformance: %s%s%s is differentiable (a floating result from inputs requiring grad) "
                   "but has no formula in ops/derivatives.yaml\n",
                   e->name, e->overload[0] ? "." : "", e->overload);
            uncovered++;
        }
        if (!uncovered && coverage)
            printf("conformance: coverage complete: every registry entry in scope had a conformance run\n");
    }
    printf("conformance: %d ops, %ld op x dtype x variant runs, %ld error cases, %ld fault-injection points, "
           "%ld gradchecks (%ld without double backward, %ld refused by their formula), %ld skipped (CUDA: %s), "
           "%.2f s\n",
           nops, counts.runs, counts.errors, counts.faults, counts.grads, counts.gradgrad_skipped,
           counts.grad_not_implemented, counts.cuda_skipped,
           cuda_skip_reason ? cuda_skip_reason : counts.cuda_run ? "ran" : "no functional case", wall);
    if (counts.cuda_run > 0 || backend_only)
        printf("conformance: CUDA: %ld runs on cuda:0 compared with the cpu, %ld gradient comparisons, %ld "
               "skipped (no CUDA kernel)\n",
               counts.cuda_run, counts.cuda_grads, counts.cuda_skipped);
    cases_free(&cf);
    free(grad_checked);
    free(grad_eligible);
    free(has_f64_case);
    free(no_formula);
    free(cuda_missing);
    free(selected);
    free(covered);
    free(by_ptr);
    return failed == 0 && uncovered == 0 ? 0 : 1;
}

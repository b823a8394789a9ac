/* The conformance runner's checking helpers: failure messages, comparing results with
 * NumPy's values, boxed calls, guarded argument sets in every layout, expected errors
 * and fault injection (runner.h). */
#include "runner.h"

/* ---- failure messages ------------------------------------------------------------ */

/* "add.Tensor [float32] (strided inputs)" + the label + every tensor argument's
 * dtype, shape and strides. */
void
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

/* ---- comparing with NumPy's values --------------------------------------------- */

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
bool
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

static void
result_free(void *p)
{
    result *r = p;
    for (int i = 0; i < r->n; i++)
        ops_ivalue_release(&r->v[i]);
    free(r);
}

/* Call op; every return (owned: owned_drop it), or NULL when the call failed. */
result *
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
ops_tensor *
ret_tensor(const result *r, int i)
{
    return r != NULL && i < r->n && r->v[i].tag == OPS_IVALUE_TENSOR ? r->v[i].v.tensor : NULL;
}

/* Call op; its first return when that is a tensor (a new, owned reference), or NULL.
 * Every other return is released. */
ops_tensor *
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
bool
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
bool
tensor_returns(const test_case *c)
{
    for (int i = 0; i < c->nret; i++)
        if (c->ret[i].flags & RET_LIST)
            return false;
    return c->nret > 0;
}

/* A new (owned) CPU tensor of the runner's; exits if memory runs out. */
ops_tensor *
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
int
out_indices(const ops_op_info *op, int *idx)
{
    int n = 0;
    for (int i = 0; i < op->num_args && n < MAX_RETS; i++)
        if (op->args[i].is_out)
            idx[n++] = i;
    return n;
}

/* The name of op's k-th out= argument (in-place: self), for messages. */
const char *
out_name(const ops_op_info *op, int k)
{
    int idx[MAX_RETS];
    const int n = out_indices(op, idx);
    return k < n ? op->args[idx[k]].name : op->kind == OPS_KIND_INPLACE ? "self" : "out";
}

int
out_index(const ops_op_info *op)
{
    for (int i = 0; i < op->num_args; i++)
        if (op->args[i].is_out)
            return i;
    return -1;
}

/* ---- argument sets: guarded copies of the case's tensors ------------------------ */

const char *const lay_names[] = {
    "contiguous inputs",       "strided inputs",          "transposed inputs", "broadcast inputs expanded",
    "outer stride-0 dim added", "inner stride-0 dim added", "random layouts",
};

/* True when adding dims to every input keeps the result dtype: dims do not decide
 * promotion when all tensors share one dtype, or none is 0-dim. */
bool
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
void
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
int
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

void
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
void
map_args(const test_case *c, const ops_op_info *op, ops_ivalue *out)
{
    for (int i = 0; i < op->num_args; i++) {
        const int j = arg_index(c->op, op->args[i].name);
        out[i] = j >= 0 ? c->args[j] : ops_ivalue_none();
    }
}

int
category(ops_dtype dt)
{
    return dt == OPS_BOOL ? 0 : ops_dtype_is_floating(dt) ? 2 : 1;
}

bool
same_shape(const ops_tensor *a, const ops_tensor *b)
{
    return ops_tensor_ndim(a) == ops_tensor_ndim(b) &&
           memcmp(ops_tensor_sizes(a), ops_tensor_sizes(b), sizeof(int64_t) * (size_t)ops_tensor_ndim(a)) == 0;
}

#ifdef OPS_WITH_CUDA
/* Byte-equal elements (same dtype and shape): a failed call must not change inputs. */
bool
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
void
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
void
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

void
expect_error(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
             const char *fragment, const argset *s, const guarded *w)
{
    expect_error_n(c, op, args, variant, fragment, s, &w, 1, NULL, 0);
}

/* Fail the 1st, 2nd, ... allocation of the call until it succeeds: each failure must
 * be a clean OPS_ERR_OOM that leaves the inputs, every written tensor ws[0..nw-1] and
 * every empty out= empties[0..ne-1] as they were. */
void
inject_faults_n(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
                const argset *s, const guarded *const *ws, int nw, const ops_tensor *const *empties, int ne)
{
    if (runner_values_only)
        return;
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

void
inject_faults(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
              const argset *s, const guarded *w, const ops_tensor *empty_out)
{
    inject_faults_n(c, op, args, variant, s, &w, 1, &empty_out, 1);
}

/* After a successful write into g: g is the result (r), kept its storage and
 * strides, has the expected values and intact sentinels. */
void
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

void
check_written(const test_case *c, const ops_op_info *op, const ops_ivalue *args, const char *variant,
              const guarded *g, const ops_tensor *r, const void *ptr, const int64_t *strides, bool cast_ok)
{
    check_written_ret(c, op, args, variant, g, r, ptr, strides, cast_ok, 0);
}

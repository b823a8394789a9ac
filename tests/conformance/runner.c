/* Every op against NumPy, driven by the schema (docs/conformance.md).
 *
 * tests/conformance/gen_cases.py wrote the cases at build time: for each op and dtype, the
 * arguments and the value NumPy computed.  This runner calls each op through the
 * boxed registry and checks:
 *   - values, dtype and shape against NumPy's (tolerances per dtype; NaN == NaN);
 *   - the same values with every tensor argument made non-contiguous (a strided view
 *     and, for 2-D and up, a transposed one);
 *   - the out= form (into an empty out that must be resized, and into a NaN-filled
 *     out of the right shape) and the in-place form, where the op has them;
 *   - undeclared dtypes rejected with an error naming the op, inputs untouched;
 *   - every allocation the op makes, failed in turn (ops_alloc_fail_nth), gives a
 *     clean out-of-memory error: no crash, no leak (under the sanitizer build).
 * Expected values never come from libops. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libops.h"
#include "ops_internal.h"
#include "ops_scalar_math.h"

enum { F_VALUES = 1, F_ERROR = 2, F_LAYOUTS = 4, F_VARIANTS = 8 };
#define MAX_ARGS 16

typedef struct test_case {
    char *label;
    const ops_op_info *op;
    uint32_t flags;
    double rtol, atol;
    int nargs;
    ops_ivalue args[MAX_ARGS];
    char *error;           /* F_ERROR: fragment the message must contain */
    ops_tensor *expected;  /* otherwise */
} test_case;

static test_case *cases;
static int ncases;
static unsigned char *blob; /* the case file; strings point into copies */

/* ---- reading the case file -------------------------------------------------- */

typedef struct reader {
    const unsigned char *p, *end;
} reader;

static void
need(reader *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        fprintf(stderr, "conformance runner: truncated case file\n");
        exit(2);
    }
}

static uint32_t
rd_u32(reader *r)
{
    uint32_t v;
    need(r, 4);
    memcpy(&v, r->p, 4);
    r->p += 4;
    return v;
}

static int64_t
rd_i64(reader *r)
{
    int64_t v;
    need(r, 8);
    memcpy(&v, r->p, 8);
    r->p += 8;
    return v;
}

static double
rd_f64(reader *r)
{
    double v;
    need(r, 8);
    memcpy(&v, r->p, 8);
    r->p += 8;
    return v;
}

static unsigned
rd_u8(reader *r)
{
    need(r, 1);
    return *r->p++;
}

static char *
rd_str(reader *r)
{
    uint32_t n = rd_u32(r);
    need(r, n);
    char *s = malloc(n + 1);
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    return s;
}

static ops_tensor *
rd_tensor(reader *r)
{
    ops_dtype dt = (ops_dtype)rd_u8(r);
    int ndim = (int)rd_u8(r);
    int64_t sizes[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        sizes[i] = rd_i64(r);
    int64_t numel = ops_shape_numel(ndim, sizes);
    size_t nbytes = (size_t)numel * ops_dtype_size(dt);
    need(r, nbytes);
    ops_tensor *t = ops_tensor_from_data(r->p, (ops_int_list){sizes, ndim}, dt);
    if (!t) {
        fprintf(stderr, "conformance runner: from_data failed: %s\n", ops_last_error());
        exit(2);
    }
    r->p += nbytes;
    return t;
}

static void
rd_arg(reader *r, ops_ivalue *v)
{
    unsigned tag = rd_u8(r);
    switch (tag) {
    case OPS_IVALUE_NONE:
        *v = ops_ivalue_none();
        break;
    case OPS_IVALUE_TENSOR:
        *v = ops_ivalue_tensor(rd_tensor(r));
        break;
    case OPS_IVALUE_SCALAR: {
        unsigned kind = rd_u8(r);
        if (kind == 2)
            *v = ops_ivalue_scalar(OPS_SCALAR_FLOAT(rd_f64(r)));
        else if (kind == 1)
            *v = ops_ivalue_scalar(OPS_SCALAR_INT(rd_i64(r)));
        else
            *v = ops_ivalue_scalar(OPS_SCALAR_BOOL(rd_i64(r) != 0));
        break;
    }
    case OPS_IVALUE_INT:
        *v = ops_ivalue_int(rd_i64(r));
        break;
    case OPS_IVALUE_INT_LIST: {
        uint32_t n = rd_u32(r);
        int64_t *data = malloc(sizeof(int64_t) * (n ? n : 1));
        for (uint32_t i = 0; i < n; i++)
            data[i] = rd_i64(r);
        *v = ops_ivalue_int_list((ops_int_list){data, n});
        break;
    }
    case OPS_IVALUE_DOUBLE:
        *v = ops_ivalue_double(rd_f64(r));
        break;
    case OPS_IVALUE_BOOL:
        *v = ops_ivalue_bool(rd_u8(r) != 0);
        break;
    case OPS_IVALUE_STR:
        *v = ops_ivalue_str(rd_str(r));
        break;
    case OPS_IVALUE_DTYPE: {
        int32_t d = (int32_t)rd_u32(r);
        *v = ops_ivalue_dtype((ops_dtype)d);
        break;
    }
    case OPS_IVALUE_DEVICE:
        rd_u32(r);
        rd_u32(r);
        *v = ops_ivalue_device(OPS_DEVICE_CPU);
        break;
    default:
        fprintf(stderr, "conformance runner: bad argument tag %u\n", tag);
        exit(2);
    }
}

static void
free_arg(ops_ivalue *v)
{
    if (v->tag == OPS_IVALUE_TENSOR)
        ops_tensor_release(v->v.tensor);
    else if (v->tag == OPS_IVALUE_INT_LIST)
        free((void *)v->v.int_list.data);
    else if (v->tag == OPS_IVALUE_STR)
        free((void *)v->v.str);
    *v = ops_ivalue_none();
}

static void
load_cases(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "conformance runner: cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    blob = malloc((size_t)n);
    if (fread(blob, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "conformance runner: short read of %s\n", path);
        exit(2);
    }
    fclose(f);
    reader r = {blob, blob + n};
    need(&r, 8);
    if (memcmp(r.p, "OPSCASE1", 8) != 0) {
        fprintf(stderr, "conformance runner: %s is not a case file\n", path);
        exit(2);
    }
    r.p += 8;
    ncases = (int)rd_u32(&r);
    cases = calloc((size_t)ncases, sizeof *cases);
    for (int i = 0; i < ncases; i++) {
        test_case *c = &cases[i];
        c->label = rd_str(&r);
        char *name = rd_str(&r), *overload = rd_str(&r);
        c->op = ops_registry_find(name, overload);
        if (!c->op) {
            fprintf(stderr, "conformance runner: %s.%s is not in the registry\n", name, overload);
            exit(2);
        }
        free(name);
        free(overload);
        c->flags = rd_u32(&r);
        c->rtol = rd_f64(&r);
        c->atol = rd_f64(&r);
        c->nargs = (int)rd_u32(&r);
        if (c->nargs != c->op->num_args || c->nargs > MAX_ARGS) {
            fprintf(stderr, "conformance runner: %s: %d arguments, schema has %d\n", c->label, c->nargs,
                    c->op->num_args);
            exit(2);
        }
        for (int a = 0; a < c->nargs; a++)
            rd_arg(&r, &c->args[a]);
        if (c->flags & F_ERROR)
            c->error = rd_str(&r);
        else
            c->expected = rd_tensor(&r);
    }
    free(blob);
    blob = NULL;
}

static void
free_cases(void)
{
    for (int i = 0; i < ncases; i++) {
        test_case *c = &cases[i];
        for (int a = 0; a < c->nargs; a++)
            free_arg(&c->args[a]);
        free(c->label);
        free(c->error);
        ops_tensor_release(c->expected);
    }
    free(cases);
}

/* ---- element access (independent of libops' kernels) ---------------------- */

static const char *
element_ptr(const ops_tensor *t, int64_t linear)
{
    /* row-major linear index -> address, through the tensor's strides */
    int nd = (int)ops_tensor_ndim(t);
    const int64_t *sz = ops_tensor_sizes(t), *st = ops_tensor_strides(t);
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        int64_t i = linear % sz[d];
        linear /= sz[d];
        off += i * st[d];
    }
    return (const char *)ops_tensor_data_ptr(t) + off * (int64_t)ops_tensor_itemsize(t);
}

static double
read_double(ops_dtype dt, const char *p)
{
    switch (dt) {
    case OPS_BOOL: return *(const unsigned char *)p != 0;
    case OPS_UINT8: return *(const uint8_t *)p;
    case OPS_INT8: return *(const int8_t *)p;
    case OPS_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case OPS_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case OPS_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case OPS_FLOAT16: { ops_half h; memcpy(&h, p, 2); return ops_half_to_float(h); }
    case OPS_BFLOAT16: { ops_bfloat16 b; memcpy(&b, p, 2); return ops_bfloat16_to_float(b); }
    case OPS_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
    case OPS_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
    default: return NAN;
    }
}

/* Copy src's elements into a tensor of the same shape and dtype but another layout. */
static void
copy_elements(ops_tensor *dst, const ops_tensor *src)
{
    int64_t n = ops_tensor_numel(src);
    size_t is = ops_tensor_itemsize(src);
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)element_ptr(dst, i), element_ptr(src, i), is);
}

/* A non-contiguous tensor equal to t: kind 0 strides every dim's last axis by 2,
 * kind 1 stores the dims in reverse order (a transposed layout). */
static ops_tensor *
relayout(const ops_tensor *t, int kind)
{
    int nd = (int)ops_tensor_ndim(t);
    const int64_t *sz = ops_tensor_sizes(t);
    ops_dtype dt = ops_tensor_dtype(t);
    int64_t big[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    ops_tensor *base = NULL, *view = NULL;
    if (kind == 0) {
        for (int d = 0; d < nd; d++)
            big[d] = sz[d];
        big[nd - 1] = sz[nd - 1] * 2 + 1;
        base = ops_tensor_new("test", nd, big, NULL, dt, OPS_DEVICE_CPU);
        ops_contiguous_strides(nd, big, strides);
        strides[nd - 1] = 2;
        view = ops_tensor_new_view(base, nd, sz, strides, 1);
    } else {
        for (int d = 0; d < nd; d++)
            big[d] = sz[nd - 1 - d];
        base = ops_tensor_new("test", nd, big, NULL, dt, OPS_DEVICE_CPU);
        int64_t bs[OPS_MAX_DIMS];
        ops_contiguous_strides(nd, big, bs);
        for (int d = 0; d < nd; d++)
            strides[d] = bs[nd - 1 - d];
        view = ops_tensor_new_view(base, nd, sz, strides, 0);
    }
    ops_tensor_release(base);
    if (view)
        copy_elements(view, t);
    return view;
}

/* Compare; on mismatch write a message into msg and return false. */
static bool
same_values(const test_case *c, const ops_tensor *got, const char *what, char *msg, size_t n)
{
    const ops_tensor *exp = c->expected;
    char s1[OPS_SHAPE_STR_LEN], s2[OPS_SHAPE_STR_LEN];
    if (ops_tensor_dtype(got) != ops_tensor_dtype(exp)) {
        snprintf(msg, n, "%s [%s]: dtype %s, expected %s", c->label, what,
                 ops_dtype_name(ops_tensor_dtype(got)), ops_dtype_name(ops_tensor_dtype(exp)));
        return false;
    }
    if (ops_tensor_ndim(got) != ops_tensor_ndim(exp) ||
        memcmp(ops_tensor_sizes(got), ops_tensor_sizes(exp),
               sizeof(int64_t) * (size_t)ops_tensor_ndim(exp)) != 0) {
        snprintf(msg, n, "%s [%s]: shape %s, expected %s", c->label, what,
                 ops_shape_str((int)ops_tensor_ndim(got), ops_tensor_sizes(got), s1, sizeof s1),
                 ops_shape_str((int)ops_tensor_ndim(exp), ops_tensor_sizes(exp), s2, sizeof s2));
        return false;
    }
    if (!(c->flags & F_VALUES))
        return true;
    ops_dtype dt = ops_tensor_dtype(exp);
    bool exact = !ops_dtype_is_floating(dt);
    int64_t numel = ops_tensor_numel(exp);
    for (int64_t i = 0; i < numel; i++) {
        double a = read_double(dt, element_ptr(got, i));
        double e = read_double(dt, element_ptr(exp, i));
        bool ok;
        if (exact && dt == OPS_INT64) {
            int64_t ai, ei;
            memcpy(&ai, element_ptr(got, i), 8);
            memcpy(&ei, element_ptr(exp, i), 8);
            ok = ai == ei;
        } else if (exact) {
            ok = a == e;
        } else if (isnan(e) || isnan(a)) {
            ok = isnan(e) && isnan(a);
        } else if (isinf(e) || isinf(a)) {
            ok = a == e;
        } else {
            ok = fabs(a - e) <= c->atol + c->rtol * fabs(e);
        }
        if (!ok) {
            snprintf(msg, n, "%s [%s]: element %lld of %s is %.9g, expected %.9g (strides %s)",
                     c->label, what, (long long)i,
                     ops_shape_str((int)ops_tensor_ndim(exp), ops_tensor_sizes(exp), s1, sizeof s1), a,
                     e, ops_shape_str((int)ops_tensor_ndim(got), ops_tensor_strides(got), s2, sizeof s2));
            return false;
        }
    }
    return true;
}

/* Call op with args; the tensor result is returned (new reference) or NULL. */
static ops_tensor *
call(const ops_op_info *op, const ops_ivalue *args, ops_status *st)
{
    ops_ivalue rets[4] = {{0}};
    *st = op->call(args, rets);
    if (*st != OPS_OK)
        return NULL;
    ops_tensor *r = rets[0].tag == OPS_IVALUE_TENSOR ? rets[0].v.tensor : NULL;
    for (int i = 1; i < op->num_returns && i < 4; i++)
        ops_ivalue_release(&rets[i]);
    return r;
}

/* Clone a tensor's elements into a fresh contiguous tensor (test-side copy). */
static ops_tensor *
fresh_copy(const ops_tensor *t)
{
    ops_tensor *c = ops_tensor_new("test", (int)ops_tensor_ndim(t), ops_tensor_sizes(t), NULL,
                                   ops_tensor_dtype(t), OPS_DEVICE_CPU);
    if (c)
        copy_elements(c, t);
    return c;
}

/* The primary call: functional returns its result; out= and in-place write into a
 * fresh copy of the written argument, which is returned. */
static ops_tensor *
run_primary(const test_case *c, const ops_ivalue *args, ops_status *st)
{
    const ops_op_info *op = c->op;
    if (op->kind == OPS_KIND_FUNCTIONAL)
        return call(op, args, st);
    ops_ivalue a2[MAX_ARGS];
    memcpy(a2, args, sizeof(ops_ivalue) * (size_t)c->nargs);
    int w = -1;
    for (int i = 0; i < op->num_args; i++)
        if (op->args[i].is_out || (op->kind == OPS_KIND_INPLACE && i == 0))
            w = i;
    ops_tensor *target = fresh_copy(args[w].v.tensor);
    a2[w] = ops_ivalue_tensor(target);
    ops_tensor *r = call(op, a2, st);
    ops_tensor_release(r);
    if (*st != OPS_OK) {
        ops_tensor_release(target);
        return NULL;
    }
    return target;
}

START_TEST(test_case_run)
{
    const test_case *c = &cases[_i];
    char msg[1024];
    ops_status st;

    if (c->flags & F_ERROR) {
        /* snapshot every tensor argument's bytes */
        unsigned char *snap[MAX_ARGS] = {0};
        for (int a = 0; a < c->nargs; a++) {
            const ops_tensor *t = c->args[a].v.tensor;
            if (c->args[a].tag == OPS_IVALUE_TENSOR && ops_tensor_numel(t) > 0) {
                size_t nb = (size_t)ops_tensor_numel(t) * ops_tensor_itemsize(t);
                snap[a] = malloc(nb);
                memcpy(snap[a], ops_tensor_data_ptr(t), nb);
            }
        }
        ops_clear_error();
        ops_tensor *r = run_primary(c, c->args, &st);
        ops_tensor_release(r);
        ck_assert_msg(st != OPS_OK, "%s: expected an error, the call succeeded", c->label);
        ck_assert_msg(strstr(ops_last_error(), c->error) != NULL,
                      "%s: error message '%s' does not contain '%s'", c->label, ops_last_error(),
                      c->error);
        for (int a = 0; a < c->nargs; a++) {
            if (!snap[a])
                continue;
            const ops_tensor *t = c->args[a].v.tensor;
            size_t nb = (size_t)ops_tensor_numel(t) * ops_tensor_itemsize(t);
            ck_assert_msg(memcmp(snap[a], ops_tensor_data_ptr(t), nb) == 0,
                          "%s: argument %d changed by a failed call", c->label, a);
            free(snap[a]);
        }
        return;
    }

    /* values, contiguous */
    ops_tensor *got = run_primary(c, c->args, &st);
    ck_assert_msg(got != NULL, "%s: failed: %s", c->label, ops_last_error());
    bool ok = same_values(c, got, "contiguous", msg, sizeof msg);
    ops_tensor_release(got);
    ck_assert_msg(ok, "%s", msg);

    /* fault injection: fail the 1st, 2nd, ... allocation until the call succeeds */
    if (c->op->kind == OPS_KIND_FUNCTIONAL) {
        for (int64_t nth = 1; nth <= 64; nth++) {
            ops_clear_error();
            ops_alloc_fail_nth(nth);
            got = run_primary(c, c->args, &st);
            ops_alloc_fail_nth(0);
            if (got != NULL) {
                ops_tensor_release(got);
                break;
            }
            ck_assert_msg(ops_last_status() == OPS_ERR_OOM,
                          "%s: with allocation %lld failing, the error is '%s' (status %d), not out of memory",
                          c->label, (long long)nth, ops_last_error(), (int)ops_last_status());
        }
    }

    /* values, every tensor argument non-contiguous */
    if (c->flags & F_LAYOUTS) {
        for (int kind = 0; kind < 2; kind++) {
            ops_ivalue a2[MAX_ARGS];
            ops_tensor *made[MAX_ARGS] = {0};
            int changed = 0;
            memcpy(a2, c->args, sizeof(ops_ivalue) * (size_t)c->nargs);
            for (int a = 0; a < c->nargs; a++) {
                const ops_tensor *t = c->args[a].v.tensor;
                if (c->args[a].tag != OPS_IVALUE_TENSOR || ops_tensor_ndim(t) < 1 + kind ||
                    ops_tensor_numel(t) < 2)
                    continue;
                made[a] = relayout(t, kind);
                ck_assert_msg(made[a] != NULL, "%s: relayout failed: %s", c->label, ops_last_error());
                a2[a] = ops_ivalue_tensor(made[a]);
                changed++;
            }
            if (changed) {
                got = run_primary(c, a2, &st);
                ck_assert_msg(got != NULL, "%s [%s inputs]: failed: %s", c->label,
                              kind ? "transposed" : "strided", ops_last_error());
                ok = same_values(c, got, kind ? "transposed inputs" : "strided inputs", msg, sizeof msg);
                ops_tensor_release(got);
                ck_assert_msg(ok, "%s", msg);
            }
            for (int a = 0; a < c->nargs; a++)
                ops_tensor_release(made[a]);
        }
    }

    if (!(c->flags & F_VARIANTS) || c->op->kind != OPS_KIND_FUNCTIONAL)
        return;

    /* the out= form: into an empty out (resized), then into a NaN-filled one */
    const ops_op_info *out = c->op->out;
    if (out) {
        for (int pass = 0; pass < 2; pass++) {
            ops_dtype edt = ops_tensor_dtype(c->expected);
            ops_tensor *o;
            if (pass == 0) {
                o = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, edt, OPS_DEVICE_CPU);
            } else {
                if (!ops_dtype_is_floating(edt))
                    break;
                o = ops_tensor_new("test", (int)ops_tensor_ndim(c->expected), ops_tensor_sizes(c->expected),
                                   NULL, edt, OPS_DEVICE_CPU);
                ops_tensor *nan = ops_scalar_tensor(OPS_SCALAR_FLOAT(NAN), edt);
                for (int64_t i = 0; i < ops_tensor_numel(o); i++)
                    memcpy((char *)element_ptr(o, i), ops_tensor_data_ptr(nan), ops_tensor_itemsize(o));
                ops_tensor_release(nan);
            }
            ops_ivalue a2[MAX_ARGS];
            for (int i = 0; i < out->num_args; i++) {
                if (out->args[i].is_out) {
                    a2[i] = ops_ivalue_tensor(o);
                    continue;
                }
                a2[i] = ops_ivalue_none();
                for (int j = 0; j < c->op->num_args; j++)
                    if (strcmp(c->op->args[j].name, out->args[i].name) == 0)
                        a2[i] = c->args[j];
            }
            ops_tensor *r = call(out, a2, &st);
            ck_assert_msg(st == OPS_OK, "%s [out=, %s]: failed: %s", c->label, pass ? "NaN-filled" : "empty",
                          ops_last_error());
            ck_assert_msg(r == o, "%s [out=]: did not return out", c->label);
            ok = same_values(c, o, pass ? "out=, NaN-filled" : "out=, empty", msg, sizeof msg);
            ops_tensor_release(r);
            ops_tensor_release(o);
            ck_assert_msg(ok, "%s", msg);
        }
    }

    /* the in-place form, where self already has the result's dtype and shape */
    const ops_op_info *inp = c->op->inplace;
    if (inp && c->args[0].tag == OPS_IVALUE_TENSOR) {
        const ops_tensor *self = c->args[0].v.tensor;
        const ops_tensor *exp = c->expected;
        if (ops_tensor_dtype(self) == ops_tensor_dtype(exp) && ops_tensor_ndim(self) == ops_tensor_ndim(exp) &&
            memcmp(ops_tensor_sizes(self), ops_tensor_sizes(exp), sizeof(int64_t) * (size_t)ops_tensor_ndim(exp)) == 0) {
            ops_tensor *s = fresh_copy(self);
            void *storage_before = ops_tensor_data_ptr(s);
            uint64_t version = ops_tensor_version(s);
            ops_ivalue a2[MAX_ARGS];
            memcpy(a2, c->args, sizeof(ops_ivalue) * (size_t)c->nargs);
            a2[0] = ops_ivalue_tensor(s);
            ops_tensor *r = call(inp, a2, &st);
            ck_assert_msg(st == OPS_OK, "%s [in-place]: failed: %s", c->label, ops_last_error());
            ck_assert_msg(ops_tensor_data_ptr(s) == storage_before, "%s [in-place]: storage moved", c->label);
            ck_assert_msg(ops_tensor_version(s) > version, "%s [in-place]: version not bumped", c->label);
            ok = same_values(c, s, "in-place", msg, sizeof msg);
            ops_tensor_release(r);
            ops_tensor_release(s);
            ck_assert_msg(ok, "%s", msg);
        }
    }
}
END_TEST

int
main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : getenv("OPS_CASES");
    if (!path) {
        fprintf(stderr, "usage: conformance runner CASES.bin\n");
        return 2;
    }
    load_cases(path);
    Suite *s = suite_create("ops-values");
    TCase *tc = tcase_create("numpy-oracle");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_case_run, 0, ncases);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free_cases();
    return failed == 0 ? 0 : 1;
}

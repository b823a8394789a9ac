/* Size arithmetic at the edge of int64: huge zero-stride views through every op of
 * the boxed registry, and the geometry constructors with sizes whose element count or
 * extent does not fit int64.
 *
 * A huge view (ones(1) expanded to 2^62 elements) is valid and costs nothing, but
 * any buffer sized by its element count is not: such a call must fail cleanly (an
 * error status and a message) or return tensors with a valid geometry.  Never a
 * crash, a wrapped allocation or a result with a wrapped size.
 *
 * The registry sweep runs in forked children (Check's default), a chunk of ops
 * each, so a crash or a hang fails that chunk and the rest still run; it also calls
 * every op (tensor-taking or not) with int arguments at the edge of int64, which
 * UBSan checks for wrapped size arithmetic.  The views are shaped so that
 * no op has a legitimate reason to visit every element: each dim is large, and the
 * int arguments the sweep invents pick the last dims, so a result (or a reduction's
 * plan of offsets) would need a buffer of 2^41 entries or more, which cannot be
 * allocated.  An op that reduced a whole 2^62-element view into a small result
 * without a buffer would be correct but would run for years; SKIP below lists the
 * ops the sweep leaves out for that reason. */
#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_op_add.h"
#include "ops_op_amax.h"
#include "ops_op_arange.h"
#include "ops_op_as_strided.h"
#include "ops_op_broadcast_to.h"
#include "ops_op_cat.h"
#include "ops_op_chunk.h"
#include "ops_op_empty.h"
#include "ops_op_empty_strided.h"
#include "ops_op_expand.h"
#include "ops_op_ones.h"
#include "ops_op_repeat.h"
#include "ops_op_slice.h"
#include "ops_op_split.h"
#include "ops_op_split_with_sizes.h"
#include "ops_op_sum.h"
#include "ops_op_tensor_split.h"
#include "ops_op_unbind.h"
#include "ops_op_unfold.h"
#include "ops_op_zeros.h"
#include "ops_internal.h"
#include "ops_registry.h"

#define P2(k) ((int64_t)1 << (k))

/* Under AddressSanitizer, a malloc beyond its 1 TiB limit aborts instead of returning
 * NULL as the C library's does; a plan of 2^52 offsets is such a request, and what
 * this test checks is that libops turns the NULL into an error.  So its meson test
 * appends allocator_may_return_null=1 to ASAN_OPTIONS (tests/unit/meson.build; by
 * hand: ASAN_OPTIONS=allocator_may_return_null=1 build-san/tests/checks test_overflow).
 * Not __asan_default_options here: this program is linked into a runner with others,
 * and the option would apply to all of them. */

/* ---- geometry validity -------------------------------------------------------------- */

/* True when t's geometry is one libops may hand out: sizes >= 0, the element count
 * (zero sizes aside) fits int64, and every addressed byte lies in its storage. */
static bool
valid_geometry(const ops_tensor *t, char *why, size_t n)
{
    if (t->ndim < 0 || t->ndim > OPS_MAX_DIMS) {
        snprintf(why, n, "ndim %d", t->ndim);
        return false;
    }
    int64_t numel = 1, lo = t->offset, hi = t->offset;
    bool empty = false, overflow = false;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] < 0) {
            snprintf(why, n, "size %" PRId64 " at dim %d", t->sizes[d], d);
            return false;
        }
        if (t->sizes[d] == 0) {
            empty = true;
            continue;
        }
        overflow |= __builtin_mul_overflow(numel, t->sizes[d], &numel);
        int64_t span;
        overflow |= __builtin_mul_overflow(t->sizes[d] - 1, t->strides[d], &span);
        overflow |= __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
    }
    if (overflow) {
        snprintf(why, n, "element count or extent overflows int64");
        return false;
    }
    if (ops_tensor_numel(t) < 0) {
        snprintf(why, n, "numel() is %" PRId64, ops_tensor_numel(t));
        return false;
    }
    if (empty)
        return true;
    const int64_t item = (int64_t)ops_dtype_itemsize(t->dtype);
    int64_t end;
    if (lo < 0 || __builtin_add_overflow(hi, 1, &end) || __builtin_mul_overflow(end, item, &end) ||
        (uint64_t)end > t->storage->nbytes) {
        snprintf(why, n, "elements [%" PRId64 ", %" PRId64 "] outside a storage of %zu bytes", lo, hi,
                 t->storage->nbytes);
        return false;
    }
    return true;
}

static void
assert_valid(const char *what, const ops_tensor *t)
{
    char why[160];
    ck_assert_msg(t != NULL, "%s: a NULL tensor in a successful result", what);
    ck_assert_msg(valid_geometry(t, why, sizeof why), "%s: invalid result geometry: %s", what, why);
}

/* A failed call: an error status and a message naming something. */
static void
assert_clean_failure(const char *what, ops_status st)
{
    ck_assert_msg(st != OPS_OK, "%s: failed without an error status", what);
    ck_assert_msg(strlen(ops_last_error()) > 0, "%s: failed without a message", what);
}

/* ---- the huge views ------------------------------------------------------------------- */

enum { NUM_HUGE = 2 };

/* The sweep's flavours: 0 and 1 are the huge views with plain int arguments; the
 * others are a small tensor with int arguments at the edge of int64 (2^62, INT64_MAX,
 * INT64_MIN), either every int argument or only those without a default, so that
 * sizes, counts and dims computed from them must be checked, not wrapped. */
enum { NUM_FLAVOURS = NUM_HUGE + 6 };
static const int64_t BIG[3] = {INT64_C(1) << 62, INT64_MAX, INT64_MIN};

typedef struct {
    int64_t big;   /* the value of int arguments; 0: defaults, else 1 */
    bool all_ints; /* big replaces the defaults too */
} flavour;

/* Huge view k: float32 [2^61, 2] and int64 [2^41, 2^11, 2^10], both over one element
 * (2^62 elements each). */
static ops_tensor *
huge_view(int k)
{
    ops_tensor *one = ops_ones(k == 0 ? OPS_INTS(1, 1) : OPS_INTS(1, 1, 1), k == 0 ? OPS_FLOAT32 : OPS_INT64,
                               OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(one);
    ops_tensor *v = k == 0 ? ops_expand(one, OPS_INTS(P2(61), 2), false)
                           : ops_expand(one, OPS_INTS(P2(41), P2(11), P2(10)), false);
    ck_assert_msg(v != NULL, "expand: %s", ops_last_error());
    ops_tensor_release(one);
    return v;
}

/* ---- argument values from the schema ------------------------------------------------- */

/* Ops the sweep leaves out, and why: each legitimately reads every element of a
 * huge input before it can know its result's size or may allocate it, which for 2^62
 * elements is a hang, not a bug.
 *   - nonzero, argwhere, nonzero_numpy, where(condition): count the nonzero elements
 *     (the result's length);
 *   - one_hot with num_classes=-1: the largest class is the input's maximum;
 *   - gather, scatter*, take, put, index, index_put: every index value is checked
 *     before anything is allocated or written, so that a failed call changes nothing. */
static const char *const SKIP[] = {
    "nonzero", "argwhere", "nonzero_numpy", "where.", "one_hot", "gather", "scatter", "scatter_add",
    "scatter_reduce", "take", "put", "put_", "index", "index_put", "index_put_", NULL,
};

/* An entry names every overload ("gather") or one ("where." is the one without). */
static bool
skipped(const ops_op_info *op)
{
    char full[128];
    snprintf(full, sizeof full, "%s.%s", op->name, op->overload);
    for (int i = 0; SKIP[i] != NULL; i++)
        if (strcmp(SKIP[i], strchr(SKIP[i], '.') ? full : op->name) == 0)
            return true;
    return false;
}

static bool
starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool
takes_tensor(const ops_op_info *op)
{
    for (int a = 0; a < op->num_args; a++)
        if (starts(op->args[a].type, "Tensor") && !op->args[a].is_out)
            return true;
    return false;
}

/* Storage for the arguments of one call (int lists, strings, tensor lists, outs). */
typedef struct {
    int64_t ints[64][OPS_MAX_DIMS];
    char strs[64][32];
    const ops_tensor *lists[64][2];
    ops_tensor *outs[64];
} arg_store;

/* Parses an int list default "[0, 1]" into buf; returns its length. */
static int64_t
parse_int_list(const char *text, int64_t *buf)
{
    int64_t n = 0;
    const char *p = text + 1;
    while (*p && *p != ']' && n < OPS_MAX_DIMS) {
        char *end;
        buf[n++] = strtoll(p, &end, 10);
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return n;
}

/* The count N of "int[N]", 1 when none is written. */
static int64_t
fixed_len(const char *type)
{
    const char *b = strchr(type, '[');
    return b && b[1] != ']' ? strtoll(b + 1, NULL, 10) : 1;
}

/* An argument value: the default where the schema gives one, else a value of the
 * type (tensors: the huge view; ints: 1 and [1, ...], the last dims of both views). */
static ops_ivalue
make_arg(const ops_arg_info *ai, int a, const ops_tensor *huge, flavour fl, arg_store *st)
{
    const char *ty = ai->type;
    const char *dv = ai->default_value;
    if (fl.big != 0 && (starts(ty, "int") || starts(ty, "SymInt")) &&
        (fl.all_ints || dv == NULL || strcmp(dv, "None") == 0)) {
        if (strchr(ty, '[')) {
            const int64_t n = fixed_len(ty);
            for (int64_t i = 0; i < n; i++)
                st->ints[a][i] = fl.big;
            return ops_ivalue_int_list((ops_int_list){st->ints[a], n});
        }
        return ops_ivalue_int(fl.big);
    }
    if (ai->is_out) {
        st->outs[a] = ops_zeros(OPS_INTS(0), huge->dtype, OPS_DEVICE_CPU);
        ck_assert_ptr_nonnull(st->outs[a]);
        return ops_ivalue_tensor(st->outs[a]);
    }
    if (starts(ty, "Tensor")) {
        if (strstr(ty, "[]")) {
            st->lists[a][0] = huge;
            st->lists[a][1] = huge;
            return ops_ivalue_tensor_list((ops_tensor_list){st->lists[a], 2});
        }
        return ops_ivalue_tensor(huge);
    }
    if ((dv != NULL && strcmp(dv, "None") == 0) || (dv == NULL && ai->optional))
        return ops_ivalue_none();
    if (starts(ty, "ScalarType"))
        return ops_ivalue_dtype(dv ? ops_dtype_from_name(dv) : OPS_FLOAT32);
    const bool is_list = strchr(ty, '[') != NULL;
    if (starts(ty, "int") || starts(ty, "SymInt")) {
        if (is_list) {
            int64_t n;
            if (dv != NULL && dv[0] == '[') {
                n = parse_int_list(dv, st->ints[a]);
            } else {
                n = fixed_len(ty);
                for (int64_t i = 0; i < n; i++)
                    st->ints[a][i] = dv ? strtoll(dv, NULL, 10) : 1;
            }
            return ops_ivalue_int_list((ops_int_list){st->ints[a], n});
        }
        return ops_ivalue_int(dv ? strtoll(dv, NULL, 10) : 1);
    }
    if (starts(ty, "Scalar")) {
        if (dv == NULL)
            return ops_ivalue_int(1);
        if (strcmp(dv, "True") == 0 || strcmp(dv, "False") == 0)
            return ops_ivalue_bool(dv[0] == 'T');
        return strpbrk(dv, ".e") ? ops_ivalue_double(strtod(dv, NULL)) : ops_ivalue_int(strtoll(dv, NULL, 10));
    }
    if (starts(ty, "float"))
        return ops_ivalue_double(dv ? strtod(dv, NULL) : 1.0);
    if (starts(ty, "bool"))
        return ops_ivalue_bool(dv != NULL && strcmp(dv, "True") == 0);
    if (starts(ty, "str")) {
        if (dv == NULL)
            return ops_ivalue_str("sum");
        snprintf(st->strs[a], sizeof st->strs[a], "%s", dv + (dv[0] == '\'' || dv[0] == '"'));
        size_t len = strlen(st->strs[a]);
        if (len > 0 && (st->strs[a][len - 1] == '\'' || st->strs[a][len - 1] == '"'))
            st->strs[a][len - 1] = '\0';
        return ops_ivalue_str(st->strs[a]);
    }
    if (starts(ty, "Device"))
        return ops_ivalue_device(OPS_DEVICE_CPU);
    if (starts(ty, "MemoryFormat")) /* contiguous(memory_format=contiguous_format) */
        return ops_ivalue_memory_format(dv ? ops_memory_format_from_name(dv) : OPS_CONTIGUOUS_FORMAT);
    ck_abort_msg("argument '%s' of unknown type '%s'", ai->name, ty);
    return ops_ivalue_none();
}

/* Calls op with every tensor argument the flavour's tensor (a huge view, or a small
 * [2, 3] one); asserts a clean failure or valid results. */
static void
sweep_one(const ops_op_info *op, int f)
{
    char what[256];
    flavour fl = {0, false};
    ops_tensor *huge;
    if (f < NUM_HUGE) {
        snprintf(what, sizeof what, "%s (huge view %d)", op->schema, f);
        huge = huge_view(f);
    } else {
        fl.big = BIG[(f - NUM_HUGE) / 2];
        fl.all_ints = (f - NUM_HUGE) % 2 != 0;
        snprintf(what, sizeof what, "%s (ints %" PRId64 "%s)", op->schema, fl.big,
                 fl.all_ints ? "" : " where no default");
        huge = ops_ones(OPS_INTS(2, 3), OPS_FLOAT32, OPS_DEVICE_CPU);
        ck_assert_ptr_nonnull(huge);
    }
    arg_store *st = calloc(1, sizeof *st);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_le(op->num_args, 64);
    ops_ivalue args[64], rets[8];
    for (int a = 0; a < op->num_args; a++)
        args[a] = make_arg(&op->args[a], a, huge, fl, st);
    ck_assert_int_le(op->num_returns, 8);
    ops_clear_error();
    const bool verbose = getenv("OPS_TEST_VERBOSE") != NULL; /* for a reader auditing the sweep */
    if (verbose) {
        printf("%s: ", what);
        fflush(stdout); /* a crash then names its op */
    }
    const ops_status s = op->call(args, rets);
    if (verbose)
        printf("%s\n", s == OPS_OK ? "ok" : ops_last_error());
    if (s != OPS_OK) {
        assert_clean_failure(what, s);
    } else {
        for (int r = 0; r < op->num_returns; r++) {
            if (rets[r].tag == OPS_IVALUE_TENSOR) {
                assert_valid(what, rets[r].v.tensor);
            } else if (rets[r].tag == OPS_IVALUE_TENSOR_LIST) {
                for (int64_t i = 0; i < rets[r].v.tensor_list.len; i++)
                    assert_valid(what, rets[r].v.tensor_list.data[i]);
            }
            ops_ivalue_release(&rets[r]);
        }
    }
    char why[160];
    ck_assert_msg(valid_geometry(huge, why, sizeof why), "%s: the input's geometry changed: %s", what, why);
    for (int a = 0; a < 64; a++)
        ops_tensor_release(st->outs[a]);
    free(st);
    ops_tensor_release(huge);
}

/* Ops per forked case: a fork per call costs minutes under AddressSanitizer (its
 * shadow memory), a fork per chunk a few seconds.  A crash names the chunk; run with
 * OPS_TEST_VERBOSE=1 (and CK_RUN_CASE=registry) to see the call that made it. */
enum { SWEEP_CHUNK = 32 };

START_TEST(test_registry_sweep)
{
    for (int i = _i * SWEEP_CHUNK; i < (_i + 1) * SWEEP_CHUNK && i < ops_registry_count(); i++) {
        const ops_op_info *op = ops_registry_at(i);
        ck_assert_ptr_nonnull(op);
        for (int f = 0; f < NUM_FLAVOURS; f++)
            if (f >= NUM_HUGE || (takes_tensor(op) && !skipped(op)))
                sweep_one(op, f);
    }
}
END_TEST

/* ---- the split family ------------------------------------------------------------------- */

static ops_tensor *
arange3(void)
{
    ops_tensor *t = ops_arange(OPS_SCALAR_INT(3), OPS_INT64, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void
expect_vec_error(const char *what, ops_status st, ops_tensor_vec *v, const char *needle)
{
    ck_assert_msg(st != OPS_OK, "%s: succeeded with %" PRId64 " pieces", what, v->len);
    ck_assert_msg(strstr(ops_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what, ops_last_error(),
                  needle);
}

START_TEST(test_split_family)
{
    ops_tensor *t = arange3();
    ops_tensor_vec v = {0};

    /* 2^61 pieces cannot be listed: the list's bytes overflow size_t. */
    expect_vec_error("tensor_split(2^61)", ops_tensor_split_sections(t, P2(61), 0, &v), &v, "tensor_split");
    ops_tensor *e = ops_empty(OPS_INTS(0), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    expect_vec_error("chunk(empty, 2^61)", ops_chunk(e, P2(61), 0, &v), &v, "chunk");

    /* ceil(3 / (2^63 - 1)) is 1: three pieces of one element, not a shape (-1,). */
    ck_assert_int_eq(ops_chunk(t, INT64_MAX, 0, &v), OPS_OK);
    ck_assert_int_eq(v.len, 3);
    for (int64_t i = 0; i < v.len; i++) {
        assert_valid("chunk(2^63-1)", v.data[i]);
        ck_assert_int_eq(v.data[i]->sizes[0], 1);
        ck_assert_int_eq(*(int64_t *)ops_tensor_data_ptr(v.data[i]), i);
    }
    ops_tensor_vec_release(&v);
    ck_assert_int_eq(ops_split(t, INT64_MAX, 0, &v), OPS_OK);
    ck_assert_int_eq(v.len, 1);
    ck_assert_int_eq(v.data[0]->sizes[0], 3);
    ops_tensor_vec_release(&v);

    /* split sizes whose sum wraps to 3 */
    expect_vec_error("split_with_sizes(wrapping)",
                     ops_split_with_sizes(t, OPS_INTS(P2(62), P2(62), P2(62), P2(62), 3), 0, &v), &v,
                     "split_with_sizes");

    /* pieces of a huge view: one per element of a 2^61 dim */
    ops_tensor *h = huge_view(0);
    expect_vec_error("unbind(huge)", ops_unbind_int(h, 0, &v), &v, "unbind");
    expect_vec_error("split(huge, 1)", ops_split(h, 1, 0, &v), &v, "split");
    expect_vec_error("tensor_split(huge, 2^61)", ops_tensor_split_sections(h, P2(61), 0, &v), &v, "tensor_split");
    expect_vec_error("chunk(huge, 2^61)", ops_chunk(h, P2(61), 0, &v), &v, "chunk");
    /* few pieces of a huge view are fine */
    ck_assert_int_eq(ops_chunk(h, 2, 0, &v), OPS_OK);
    ck_assert_int_eq(v.len, 2);
    ck_assert_int_eq(v.data[1]->sizes[0], P2(60));
    assert_valid("chunk(huge, 2)", v.data[1]);
    ops_tensor_vec_release(&v);
    ck_assert_int_eq(ops_unbind_int(h, 1, &v), OPS_OK);
    ck_assert_int_eq(v.len, 2);
    assert_valid("unbind(huge, 1)", v.data[1]);
    ops_tensor_vec_release(&v);

    ops_tensor_release(h);
    ops_tensor_release(e);
    ops_tensor_release(t);
}
END_TEST

/* ---- geometries whose element count or extent overflow -------------------------------- */

static void
expect_null(const char *what, ops_tensor *r, const char *needle)
{
    if (r != NULL) {
        char why[160];
        const bool ok = valid_geometry(r, why, sizeof why);
        ops_tensor_release(r);
        ck_abort_msg("%s: accepted (numel %" PRId64 ", geometry %s)", what, ops_tensor_numel(r),
                     ok ? "valid" : why);
    }
    ck_assert_msg(strstr(ops_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what, ops_last_error(),
                  needle);
}

START_TEST(test_numel_overflow)
{
    ops_tensor *one = ops_ones(OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU);
    expect_null("expand [2^62, 4]", ops_expand(one, OPS_INTS(P2(62), 4), false), "expand");
    expect_null("expand [2^62, 2]", ops_expand(one, OPS_INTS(P2(62), 2), false), "expand");
    expect_null("expand [2^32]*2", ops_expand(one, OPS_INTS(P2(32), P2(32)), false), "expand");
    expect_null("broadcast_to", ops_broadcast_to(one, OPS_INTS(P2(62), 4)), "broadcast_to");
    expect_null("as_strided", ops_as_strided(one, OPS_INTS(P2(62), 4), OPS_INTS(0, 0), NULL), "as_strided");
    expect_null("empty_strided",
                ops_empty_strided(OPS_INTS(P2(62), 4), OPS_INTS(0, 0), OPS_FLOAT32, OPS_DEVICE_CPU),
                "empty_strided");
    /* the broadcast of two valid views */
    ops_tensor *a = ops_expand(one, OPS_INTS(P2(32), 1), false);
    ops_tensor *b = ops_expand(one, OPS_INTS(1, P2(32)), false);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    expect_null("add of broadcast 2^64", ops_add(a, b, OPS_SCALAR_INT(1)), "add");
    /* a view of a valid huge view that would overflow */
    ops_tensor *h = huge_view(0);
    expect_null("unsqueeze+expand", ops_expand(h, OPS_INTS(4, P2(61), 2), false), "expand");
    ops_tensor *lst[2] = {h, h};
    expect_null("cat", ops_cat((ops_tensor_list){(const ops_tensor *const *)lst, 2}, 1), "cat");
    expect_null("repeat", ops_repeat(h, OPS_INTS(3, 1)), "repeat");
    /* the largest counts that fit are fine, as views */
    ops_tensor *ok = ops_expand(one, OPS_INTS(P2(62), 1), false);
    assert_valid("expand [2^62, 1]", ok);
    ck_assert_int_eq(ops_tensor_numel(ok), P2(62));
    ops_tensor *ok2 = ops_expand(one, OPS_INTS(INT64_MAX), false);
    assert_valid("expand [2^63-1]", ok2);
    ops_tensor_release(ok2);
    ops_tensor_release(ok);
    ops_tensor_release(h);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(one);
}
END_TEST

START_TEST(test_extent_overflow)
{
    ops_tensor *base = ops_ones(OPS_INTS(8), OPS_FLOAT32, OPS_DEVICE_CPU);
    /* strides whose largest offset wraps */
    expect_null("as_strided extent", ops_as_strided(base, OPS_INTS(2, 2), OPS_INTS(P2(62), P2(62)), NULL),
                "as_strided");
    expect_null("empty_strided extent",
                ops_empty_strided(OPS_INTS(3, 3), OPS_INTS(P2(62), P2(62)), OPS_FLOAT32, OPS_DEVICE_CPU),
                "empty_strided");
    /* slicing with a huge step: one element, no stride overflow */
    int64_t start = 0, end = 8;
    ops_tensor *s = ops_slice(base, 0, &start, &end, P2(62));
    ck_assert_msg(s != NULL, "slice: %s", ops_last_error());
    assert_valid("slice step 2^62", s);
    ck_assert_int_eq(s->sizes[0], 1);
    ops_tensor_release(s);
    ops_tensor *u = ops_unfold(base, 0, 2, P2(62));
    ck_assert_msg(u != NULL, "unfold: %s", ops_last_error());
    assert_valid("unfold step 2^62", u);
    ops_tensor_release(u);
    ops_tensor_release(base);
}
END_TEST

/* Reductions of a huge view, each named in the issue: a clean error (their plans of
 * offsets cannot be allocated), never a wrapped buffer. */
START_TEST(test_reductions)
{
    ops_tensor *h = huge_view(0);
    ops_tensor *r;
    ops_clear_error();
    r = ops_sum(h, OPS_DTYPE_NONE);
    if (r) {
        assert_valid("sum", r);
        ops_tensor_release(r);
    } else {
        ck_assert_msg(strstr(ops_last_error(), "sum") == ops_last_error(), "sum: %s", ops_last_error());
    }
    r = ops_amax(h, OPS_INTS(), false);
    if (r) {
        assert_valid("amax", r);
        ops_tensor_release(r);
    } else {
        ck_assert_msg(strstr(ops_last_error(), "amax") == ops_last_error(), "amax: %s", ops_last_error());
    }
    ops_tensor_release(h);
}
END_TEST

static Suite *
overflow_suite(void)
{
    Suite *s = suite_create("overflow");
    TCase *tc = tcase_create("geometry");
    tcase_add_test(tc, test_split_family);
    tcase_add_test(tc, test_numel_overflow);
    tcase_add_test(tc, test_extent_overflow);
    tcase_add_test(tc, test_reductions);
    suite_add_tcase(s, tc);
    TCase *sweep = tcase_create("registry");
    /* a hang is a failure: no op may visit all 2^62 elements */
    tcase_set_timeout(sweep, 60);
    tcase_add_loop_test(sweep, test_registry_sweep, 0, (ops_registry_count() + SWEEP_CHUNK - 1) / SWEEP_CHUNK);
    suite_add_tcase(s, sweep);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(overflow_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

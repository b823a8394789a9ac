/* Torch-like printing.  The layout rules are PyTorch's (torch/_tensor_str.py):
 * one width for every element, chosen from the printed values; floats in
 * "int mode" (1., 2.) when every finite value is whole, fixed with 4 decimals, or
 * scientific when the magnitudes span too much; more than 1000 elements are
 * summarised to 3 edge items per dim; rows wrap at 80 columns.  We always add the
 * dtype and shape, which PyTorch shows only sometimes. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"
#include "ops_iter.h"

#define PRINT_THRESHOLD 1000
#define PRINT_EDGEITEMS 3
#define PRINT_LINEWIDTH 80
#define PRINT_PRECISION 4

/* ---- a growable string ------------------------------------------------------- */

typedef struct strbuf {
    char *p;
    size_t len, cap;
    bool failed;
} strbuf;

static void
sb_reserve(strbuf *sb, size_t extra)
{
    if (sb->failed || sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *p = ops_host_realloc(sb->p, cap);
    if (p == NULL) {
        sb->failed = true;
        return;
    }
    sb->p = p;
    sb->cap = cap;
}

static void
sb_append(strbuf *sb, const char *s, size_t n)
{
    sb_reserve(sb, n);
    if (sb->failed)
        return;
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = '\0';
}

static void
sb_puts(strbuf *sb, const char *s)
{
    sb_append(sb, s, strlen(s));
}

static void
sb_spaces(strbuf *sb, int n)
{
    for (int i = 0; i < n; i++)
        sb_append(sb, " ", 1);
}

/* ---- walking the printed elements ------------------------------------------ */

typedef struct printer {
    const ops_tensor *t;
    size_t item;
    bool summarize;
    /* formatter state */
    bool floating;
    bool int_mode;
    bool sci_mode;
    int max_width;
    /* pass 1: statistics of the non-zero finite values (floating only) */
    bool any_nonzero_finite;
    double min_abs, max_abs;
} printer;

/* Number of printed positions along a dim, and the index of the k-th. */
static int64_t
shown_count(const printer *pr, int64_t n)
{
    return pr->summarize && n > 2 * PRINT_EDGEITEMS ? 2 * PRINT_EDGEITEMS : n;
}

static int64_t
shown_index(const printer *pr, int64_t n, int64_t k)
{
    if (pr->summarize && n > 2 * PRINT_EDGEITEMS && k >= PRINT_EDGEITEMS)
        return n - 2 * PRINT_EDGEITEMS + k;
    return k;
}

static inline const char *
elem_ptr(const printer *pr, const char *base, int dim, int64_t idx)
{
    return base + idx * pr->t->strides[dim] * (int64_t)pr->item;
}

typedef void (*visit_fn)(printer *pr, const char *p);

static void
visit(printer *pr, int dim, const char *base, visit_fn fn)
{
    if (dim == pr->t->ndim) {
        fn(pr, base);
        return;
    }
    const int64_t n = pr->t->sizes[dim];
    const int64_t shown = shown_count(pr, n);
    for (int64_t k = 0; k < shown; k++)
        visit(pr, dim + 1, elem_ptr(pr, base, dim, shown_index(pr, n, k)), fn);
}

static double
load_double(const printer *pr, const char *p)
{
    return ops_scalar_to_double(ops_scalar_load(p, pr->t->dtype));
}

/* Python's str() of an element, before padding. */
static int
format_raw(const printer *pr, const char *p, char *buf, size_t n)
{
    const ops_scalar s = ops_scalar_load(p, pr->t->dtype);
    if (s.kind == OPS_SCALAR_BOOL)
        return snprintf(buf, n, "%s", s.v.b ? "True" : "False");
    if (s.kind == OPS_SCALAR_INT)
        return snprintf(buf, n, "%" PRId64, s.v.i);
    const double v = s.v.f;
    if (isnan(v))
        return snprintf(buf, n, "nan"); /* Python never prints "-nan" */
    if (isinf(v))
        return snprintf(buf, n, "%s", v < 0 ? "-inf" : "inf");
    if (pr->sci_mode)
        return snprintf(buf, n, "%.*e", PRINT_PRECISION, v);
    if (pr->int_mode)
        return snprintf(buf, n, "%.0f.", v);
    return snprintf(buf, n, "%.*f", PRINT_PRECISION, v);
}

static void
stats_visit(printer *pr, const char *p)
{
    const double v = load_double(pr, p);
    if (!isfinite(v) || v == 0.0)
        return;
    const double a = fabs(v);
    if (!pr->any_nonzero_finite) {
        pr->min_abs = pr->max_abs = a;
        pr->any_nonzero_finite = true;
    } else {
        pr->min_abs = a < pr->min_abs ? a : pr->min_abs;
        pr->max_abs = a > pr->max_abs ? a : pr->max_abs;
    }
    if (v != ceil(v))
        pr->int_mode = false;
}

static void
width_visit(printer *pr, const char *p)
{
    char buf[64];
    if (pr->floating) {
        /* Only non-zero finite values set the width, as in PyTorch. */
        const double v = load_double(pr, p);
        if (!isfinite(v) || v == 0.0)
            return;
    }
    const int w = format_raw(pr, p, buf, sizeof buf);
    if (w > pr->max_width)
        pr->max_width = w;
}

static void
build_formatter(printer *pr)
{
    pr->floating = ops_dtype_is_floating(pr->t->dtype);
    pr->int_mode = true;
    pr->sci_mode = false;
    pr->max_width = 1;
    if (pr->floating) {
        visit(pr, 0, ops_tensor_data_ptr(pr->t), stats_visit);
        if (!pr->any_nonzero_finite)
            return; /* zeros, nans and infs only: int mode, width 1 */
        const bool spread = pr->max_abs / pr->min_abs > 1000.0 || pr->max_abs > 1.0e8;
        pr->sci_mode = pr->int_mode ? spread : spread || pr->min_abs < 1.0e-4;
    }
    visit(pr, 0, ops_tensor_data_ptr(pr->t), width_visit);
}

static void
emit_value(strbuf *sb, const printer *pr, const char *p)
{
    char buf[64];
    int w = format_raw(pr, p, buf, sizeof buf);
    sb_spaces(sb, pr->max_width - w);
    sb_puts(sb, buf);
}

/* ---- layout ------------------------------------------------------------------ */

static void
emit_vector(strbuf *sb, const printer *pr, const char *base, int dim, int indent)
{
    const int64_t n = pr->t->sizes[dim];
    const int64_t shown = shown_count(pr, n);
    const bool ellipsis = shown < n;
    const int element_length = pr->max_width + 2;
    int64_t per_line = (PRINT_LINEWIDTH - indent) / element_length;
    if (per_line < 1)
        per_line = 1;
    /* The items, with " ..." standing as one item in the middle when summarised. */
    const int64_t nitems = shown + (ellipsis ? 1 : 0);
    sb_puts(sb, "[");
    for (int64_t item = 0; item < nitems; item++) {
        if (item > 0) {
            if (item % per_line == 0) {
                sb_puts(sb, ",\n");
                sb_spaces(sb, indent + 1);
            } else {
                sb_puts(sb, ", ");
            }
        }
        if (ellipsis && item == PRINT_EDGEITEMS) {
            sb_puts(sb, " ...");
            continue;
        }
        const int64_t k = ellipsis && item > PRINT_EDGEITEMS ? item - 1 : item;
        emit_value(sb, pr, elem_ptr(pr, base, dim, shown_index(pr, n, k)));
    }
    sb_puts(sb, "]");
}

static void
emit_tensor(strbuf *sb, const printer *pr, const char *base, int dim, int indent)
{
    const int remaining = pr->t->ndim - dim;
    if (remaining == 1) {
        emit_vector(sb, pr, base, dim, indent);
        return;
    }
    const int64_t n = pr->t->sizes[dim];
    const int64_t shown = shown_count(pr, n);
    const bool ellipsis = shown < n;
    sb_puts(sb, "[");
    for (int64_t k = 0; k < shown; k++) {
        if (k > 0) {
            /* Rows of a matrix are one newline apart, matrices two, and so on. */
            sb_puts(sb, ",");
            for (int i = 0; i < remaining - 1; i++)
                sb_puts(sb, "\n");
            sb_spaces(sb, indent + 1);
        }
        if (ellipsis && k == PRINT_EDGEITEMS) {
            sb_puts(sb, "...,");
            for (int i = 0; i < remaining - 1; i++)
                sb_puts(sb, "\n");
            sb_spaces(sb, indent + 1);
        }
        emit_tensor(sb, pr, elem_ptr(pr, base, dim, shown_index(pr, n, k)), dim + 1, indent + 1);
    }
    sb_puts(sb, "]");
}

/* PyTorch's _add_suffixes: each suffix goes on the current line unless that would
 * pass the line width.  last_line_len reproduces PyTorch's arithmetic exactly. */
static void
add_suffix(strbuf *sb, size_t *last_line_len, const char *suffix, int indent)
{
    const size_t n = strlen(suffix);
    if (*last_line_len + n + 2 > PRINT_LINEWIDTH) {
        sb_puts(sb, ",\n");
        sb_spaces(sb, indent);
        *last_line_len = (size_t)indent + n;
    } else {
        sb_puts(sb, ", ");
        *last_line_len += n + 2;
    }
    sb_puts(sb, suffix);
}

/* The text of a CPU tensor; dev_suffix ("device=cuda:0") names the device of the
 * tensor it was copied from, NULL for a CPU one. */
static char *
to_string(const char *op, const ops_tensor *t, const char *dev_suffix)
{
    const int indent = 7; /* strlen("tensor(") */
    strbuf sb = {0};
    sb_puts(&sb, "tensor(");
    const int64_t numel = ops_tensor_numel(t);
    if (numel == 0) {
        sb_puts(&sb, "[]");
    } else {
        printer pr = {.t = t, .item = ops_dtype_itemsize(t->dtype), .summarize = numel > PRINT_THRESHOLD};
        build_formatter(&pr);
        if (t->ndim == 0) {
            /* A scalar is formatted alone, so its width is its own. */
            char buf[64];
            format_raw(&pr, ops_tensor_data_ptr(t), buf, sizeof buf);
            sb_puts(&sb, buf);
        } else {
            emit_tensor(&sb, &pr, ops_tensor_data_ptr(t), 0, indent);
        }
    }

    char dtype_suffix[32], shape_suffix[OPS_SHAPE_STR_LEN + 8], shape[OPS_SHAPE_STR_LEN];
    snprintf(dtype_suffix, sizeof dtype_suffix, "dtype=%s", ops_dtype_name(t->dtype));
    snprintf(shape_suffix, sizeof shape_suffix, "shape=%s",
             ops_shape_str(t->ndim, t->sizes, shape, sizeof shape));
    if (!sb.failed) {
        /* len(s) - s.rfind("\n") + 1, where rfind gives -1 for no newline */
        const char *nl = strrchr(sb.p, '\n');
        size_t last_line_len = nl ? sb.len - (size_t)(nl - sb.p) + 1 : sb.len + 2;
        if (dev_suffix != NULL)
            add_suffix(&sb, &last_line_len, dev_suffix, indent);
        add_suffix(&sb, &last_line_len, dtype_suffix, indent);
        add_suffix(&sb, &last_line_len, shape_suffix, indent);
        sb_puts(&sb, ")");
    }
    if (sb.failed) {
        ops_host_free(sb.p);
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory building the string", op);
    }
    return sb.p;
}

char *
ops_tensor_to_string(const ops_tensor *t)
{
    const char *op = "to_string";
    if (t == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected a tensor, got NULL", op);
    if ((int)t->dtype < 0 || t->dtype >= OPS_NUM_DTYPES)
        return ops_fail_null(OPS_ERR_DTYPE, "%s: invalid dtype (%d)", op, (int)t->dtype);
    if (t->storage->device.type == OPS_CPU)
        return to_string(op, t, NULL);
    /* device memory is not readable here: format a host copy, and say where it lives */
    char dev[32], suffix[48];
    snprintf(suffix, sizeof suffix, "device=%s", ops_device_str(t->storage->device, dev, sizeof dev));
    ops_tensor *h = ops_tensor_new(op, t->ndim, t->sizes, NULL, t->dtype, OPS_DEVICE_CPU);
    if (h == NULL)
        return NULL;
    char *s = ops_copy_values(op, h, t) == OPS_OK ? to_string(op, h, suffix) : NULL;
    ops_tensor_release(h);
    return s;
}

ops_status
ops_tensor_print(const ops_tensor *t, FILE *f)
{
    char *s = ops_tensor_to_string(t);
    if (s == NULL)
        return ops_last_status();
    ops_status st = OPS_OK;
    if (fputs(s, f ? f : stdout) < 0 || fputc('\n', f ? f : stdout) == EOF)
        st = ops_fail(OPS_ERR_RUNTIME, "print: writing to the stream failed");
    free(s);
    return st;
}

/* A strict JSON parser (RFC 8259) for the headers of safetensors files, which come from
 * anywhere: every byte is checked, nothing is trusted, and a failure says at which byte
 * and why.  Written here rather than taken from libjansson / libjson-c because the header
 * is small and flat (an object of objects of strings and integer arrays), we need
 * integers kept exact up to int64 (offsets past 2^53), duplicate keys reported rather
 * than silently merged, and positions in every message; a 300-line parser is less to
 * trust than an extra runtime dependency for that.  Recursive descent with a depth
 * limit, so hostile nesting cannot exhaust the stack. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops_internal.h"
#include "ops_serialize_impl.h"

typedef struct parser {
    const unsigned char *p;
    size_t n, i;
    char *why;
    size_t whylen;
    bool oom;
    bool failed;
} parser;

static bool
fail(parser *ps, size_t at, const char *fmt, ...) OPS_PRINTF(3, 4);

static bool
fail(parser *ps, size_t at, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    int k = snprintf(ps->why, ps->whylen, "at byte %zu: ", at);
    if (k < 0 || (size_t)k >= ps->whylen)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->why + k, ps->whylen - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}

static bool
fail_oom(parser *ps)
{
    ps->oom = true;
    if (!ps->failed)
        snprintf(ps->why, ps->whylen, "out of memory");
    ps->failed = true;
    return false;
}

static void
skip_ws(parser *ps)
{
    while (ps->i < ps->n) {
        unsigned char c = ps->p[ps->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        ps->i++;
    }
}

/* What the byte at i is, for messages: a printable character or its code. */
static const char *
show(const parser *ps, size_t i, char *buf, size_t n)
{
    if (i >= ps->n)
        snprintf(buf, n, "the end of the text");
    else if (ps->p[i] >= 0x20 && ps->p[i] < 0x7f)
        snprintf(buf, n, "'%c'", ps->p[i]);
    else
        snprintf(buf, n, "byte 0x%02x", ps->p[i]);
    return buf;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one (overlong
 * forms, surrogates and code points past U+10FFFF included). */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

bool
ops_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] == 0)
            return false;
        size_t k = utf8_seq(u + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

static int
hex4(const unsigned char *s)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        int c = s[k], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t
put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at ps->i (which is '"'); the decoded bytes go to *s (NUL-terminated). */
static bool
parse_string(parser *ps, char **s, size_t *len)
{
    size_t start = ps->i++;
    /* Decoded text is never longer than the literal (an escape shrinks or keeps). */
    size_t end = ps->i;
    while (end < ps->n && ps->p[end] != '"') {
        if (ps->p[end] == '\\')
            end++;
        end++;
    }
    if (end >= ps->n)
        return fail(ps, start, "unterminated string");
    char *o = ops_host_malloc(end - ps->i + 1);
    if (o == NULL)
        return fail_oom(ps);
    size_t k = 0;
    while (ps->p[ps->i] != '"') {
        unsigned char c = ps->p[ps->i];
        if (c < 0x20) {
            ops_host_free(o);
            return fail(ps, ps->i, "control character 0x%02x inside a string (escape it)", c);
        }
        if (c != '\\') {
            size_t q = utf8_seq(ps->p + ps->i, end - ps->i);
            if (q == 0) {
                ops_host_free(o);
                return fail(ps, ps->i, "invalid UTF-8 in a string");
            }
            memcpy(o + k, ps->p + ps->i, q);
            k += q;
            ps->i += q;
            continue;
        }
        size_t esc = ps->i++;
        c = ps->p[ps->i++];
        switch (c) {
        case '"': o[k++] = '"'; break;
        case '\\': o[k++] = '\\'; break;
        case '/': o[k++] = '/'; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            int hi = ps->i + 4 <= end ? hex4(ps->p + ps->i) : -1;
            if (hi < 0) {
                ops_host_free(o);
                return fail(ps, esc, "\\u must be followed by 4 hex digits");
            }
            ps->i += 4;
            uint32_t cp = (uint32_t)hi;
            if (cp >= 0xdc00 && cp <= 0xdfff) {
                ops_host_free(o);
                return fail(ps, esc, "unpaired low surrogate \\u%04x", (unsigned)cp);
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                int lo = (ps->i + 6 <= end && ps->p[ps->i] == '\\' && ps->p[ps->i + 1] == 'u')
                             ? hex4(ps->p + ps->i + 2)
                             : -1;
                if (lo < 0xdc00 || lo > 0xdfff) {
                    ops_host_free(o);
                    return fail(ps, esc, "high surrogate \\u%04x not followed by a low one", (unsigned)cp);
                }
                ps->i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
            }
            k += put_utf8(o + k, cp);
            break;
        }
        default: {
            char b[32];
            ops_host_free(o);
            return fail(ps, esc, "invalid escape \\%s", show(ps, esc + 1, b, sizeof b));
        }
        }
    }
    ps->i++; /* the closing quote */
    o[k] = '\0';
    *s = o;
    *len = k;
    return true;
}

static bool
parse_number(parser *ps, ops_json *v)
{
    size_t start = ps->i;
    const unsigned char *p = ps->p;
    size_t i = ps->i;
    bool neg = false;
    char b[32];
    if (p[i] == '-') {
        neg = true;
        i++;
    }
    if (i >= ps->n || p[i] < '0' || p[i] > '9')
        return fail(ps, i, "expected a digit, got %s", show(ps, i, b, sizeof b));
    bool is_int = true, fits = true;
    uint64_t mag = 0;
    if (p[i] == '0') {
        i++;
        if (i < ps->n && p[i] >= '0' && p[i] <= '9')
            return fail(ps, start, "a number may not have a leading zero");
    } else {
        while (i < ps->n && p[i] >= '0' && p[i] <= '9') {
            unsigned d = p[i] - '0';
            if (mag > (UINT64_MAX - d) / 10)
                fits = false;
            else
                mag = mag * 10 + d;
            i++;
        }
    }
    if (i < ps->n && p[i] == '.') {
        is_int = false;
        i++;
        if (i >= ps->n || p[i] < '0' || p[i] > '9')
            return fail(ps, i, "expected a digit after '.', got %s", show(ps, i, b, sizeof b));
        while (i < ps->n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i < ps->n && (p[i] == 'e' || p[i] == 'E')) {
        is_int = false;
        i++;
        if (i < ps->n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= ps->n || p[i] < '0' || p[i] > '9')
            return fail(ps, i, "expected a digit in the exponent, got %s", show(ps, i, b, sizeof b));
        while (i < ps->n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    v->kind = OPS_JSON_NUMBER;
    v->u.num.is_int = false;
    v->u.num.i = 0;
    if (is_int && fits && (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
        v->u.num.is_int = true;
        v->u.num.i = !neg ? (int64_t)mag : mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    }
    ps->i = i;
    return true;
}

static bool parse_value(parser *ps, ops_json *v, int depth);

static bool
expect_word(parser *ps, const char *w)
{
    size_t k = strlen(w);
    if (ps->n - ps->i < k || memcmp(ps->p + ps->i, w, k) != 0) {
        char b[32];
        return fail(ps, ps->i, "unexpected %s", show(ps, ps->i, b, sizeof b));
    }
    ps->i += k;
    return true;
}

static bool
parse_array(parser *ps, ops_json *v, int depth)
{
    v->kind = OPS_JSON_ARRAY;
    v->u.arr.items = NULL;
    v->u.arr.n = 0;
    size_t cap = 0;
    ps->i++;
    skip_ws(ps);
    if (ps->i < ps->n && ps->p[ps->i] == ']') {
        ps->i++;
        return true;
    }
    for (;;) {
        if (v->u.arr.n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            ops_json *ni = ops_host_realloc(v->u.arr.items, nc * sizeof *ni);
            if (ni == NULL)
                return fail_oom(ps);
            v->u.arr.items = ni;
            cap = nc;
        }
        skip_ws(ps);
        /* counted before it is parsed: a failed item is left freeable */
        v->u.arr.n++;
        if (!parse_value(ps, &v->u.arr.items[v->u.arr.n - 1], depth + 1))
            return false;
        skip_ws(ps);
        char b[32];
        if (ps->i < ps->n && ps->p[ps->i] == ',') {
            ps->i++;
            continue;
        }
        if (ps->i < ps->n && ps->p[ps->i] == ']') {
            ps->i++;
            return true;
        }
        return fail(ps, ps->i, "expected ',' or ']' in an array, got %s", show(ps, ps->i, b, sizeof b));
    }
}

static bool
parse_object(parser *ps, ops_json *v, int depth)
{
    v->kind = OPS_JSON_OBJECT;
    v->u.obj.members = NULL;
    v->u.obj.n = 0;
    size_t cap = 0;
    char b[32];
    ps->i++;
    skip_ws(ps);
    if (ps->i < ps->n && ps->p[ps->i] == '}') {
        ps->i++;
        return true;
    }
    for (;;) {
        skip_ws(ps);
        if (ps->i >= ps->n || ps->p[ps->i] != '"')
            return fail(ps, ps->i, "expected a string key in an object, got %s", show(ps, ps->i, b, sizeof b));
        if (v->u.obj.n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            ops_json_member *nm = ops_host_realloc(v->u.obj.members, nc * sizeof *nm);
            if (nm == NULL)
                return fail_oom(ps);
            v->u.obj.members = nm;
            cap = nc;
        }
        ops_json_member *m = &v->u.obj.members[v->u.obj.n];
        m->pos = ps->i;
        m->value.kind = OPS_JSON_NULL;
        if (!parse_string(ps, &m->key, &m->keylen))
            return false;
        v->u.obj.n++; /* owned from here: the key is freed with the object */
        skip_ws(ps);
        if (ps->i >= ps->n || ps->p[ps->i] != ':')
            return fail(ps, ps->i, "expected ':' after an object key, got %s", show(ps, ps->i, b, sizeof b));
        ps->i++;
        skip_ws(ps);
        if (!parse_value(ps, &m->value, depth + 1))
            return false;
        skip_ws(ps);
        if (ps->i < ps->n && ps->p[ps->i] == ',') {
            ps->i++;
            continue;
        }
        if (ps->i < ps->n && ps->p[ps->i] == '}') {
            ps->i++;
            return true;
        }
        return fail(ps, ps->i, "expected ',' or '}' in an object, got %s", show(ps, ps->i, b, sizeof b));
    }
}

/* On failure v is left freeable (kind and counts say what was built). */
static bool
parse_value(parser *ps, ops_json *v, int depth)
{
    v->kind = OPS_JSON_NULL;
    v->pos = ps->i;
    if (depth > OPS_JSON_MAX_DEPTH)
        return fail(ps, ps->i, "nesting deeper than %d levels", OPS_JSON_MAX_DEPTH);
    if (ps->i >= ps->n)
        return fail(ps, ps->i, "expected a value, got the end of the text");
    char b[32];
    switch (ps->p[ps->i]) {
    case '{':
        return parse_object(ps, v, depth);
    case '[':
        return parse_array(ps, v, depth);
    case '"':
        v->u.str.s = NULL;
        if (!parse_string(ps, &v->u.str.s, &v->u.str.len))
            return false;
        v->kind = OPS_JSON_STRING;
        return true;
    case 't':
        v->kind = OPS_JSON_BOOL;
        v->u.boolean = true;
        return expect_word(ps, "true");
    case 'f':
        v->kind = OPS_JSON_BOOL;
        v->u.boolean = false;
        return expect_word(ps, "false");
    case 'n':
        return expect_word(ps, "null");
    default:
        if (ps->p[ps->i] == '-' || (ps->p[ps->i] >= '0' && ps->p[ps->i] <= '9'))
            return parse_number(ps, v);
        return fail(ps, ps->i, "expected a value, got %s", show(ps, ps->i, b, sizeof b));
    }
}

void
ops_json_free(ops_json *v)
{
    if (v == NULL)
        return;
    switch (v->kind) {
    case OPS_JSON_STRING:
        ops_host_free(v->u.str.s);
        break;
    case OPS_JSON_ARRAY:
        for (size_t k = 0; k < v->u.arr.n; k++)
            ops_json_free(&v->u.arr.items[k]);
        ops_host_free(v->u.arr.items);
        break;
    case OPS_JSON_OBJECT:
        for (size_t k = 0; k < v->u.obj.n; k++) {
            ops_host_free(v->u.obj.members[k].key);
            ops_json_free(&v->u.obj.members[k].value);
        }
        ops_host_free(v->u.obj.members);
        break;
    default:
        break;
    }
    v->kind = OPS_JSON_NULL;
}

bool
ops_json_parse(const char *text, size_t n, ops_json *out, char *why, size_t whylen, bool *oom)
{
    parser ps = {(const unsigned char *)text, n, 0, why, whylen, false, false};
    if (whylen)
        why[0] = '\0';
    skip_ws(&ps);
    bool ok = parse_value(&ps, out, 1);
    if (ok) {
        skip_ws(&ps);
        if (ps.i != n) {
            char b[32];
            ok = fail(&ps, ps.i, "unexpected %s after the value", show(&ps, ps.i, b, sizeof b));
        }
    }
    if (!ok)
        ops_json_free(out);
    if (oom)
        *oom = ps.oom;
    return ok;
}

const char *
ops_json_kind_name(ops_json_kind k)
{
    switch (k) {
    case OPS_JSON_NULL: return "null";
    case OPS_JSON_BOOL: return "a boolean";
    case OPS_JSON_NUMBER: return "a number";
    case OPS_JSON_STRING: return "a string";
    case OPS_JSON_ARRAY: return "an array";
    case OPS_JSON_OBJECT: return "an object";
    }
    return "?";
}

/* NumPy's .npy format: a magic string, a version, a header that is a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded to 64 bytes, then
 * the raw array.  The reader parses that literal strictly (exactly those three keys,
 * strings, True/False and a tuple of integers; nothing evaluated) and never allocates
 * more than the source holds, so a hostile header cannot ask for a terabyte. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy_impl.h"
#include "ops_internal.h"
#include "ops_serialize.h"

/* NumPy itself refuses headers over 10000 bytes unless told otherwise; a file of 16
 * dimensions needs under 500. */
#define NPY_MAX_HEADER 65536u

static const bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

/* descr type code and size <-> dtype; the byte-order character is separate. */
static const struct {
    char kind;
    int size;
    ops_dtype dtype;
} npy_types[] = {
    {'b', 1, OPS_BOOL},    {'u', 1, OPS_UINT8},   {'i', 1, OPS_INT8},    {'i', 2, OPS_INT16}, {'i', 4, OPS_INT32},
    {'i', 8, OPS_INT64},   {'f', 2, OPS_FLOAT16}, {'f', 4, OPS_FLOAT32}, {'f', 8, OPS_FLOAT64},
};

/* ---- the header's dict literal ------------------------------------------------------ */

typedef struct hparser {
    const char *s;
    size_t n, i;
} hparser;

static void
hws(hparser *h)
{
    while (h->i < h->n && (h->s[h->i] == ' ' || h->s[h->i] == '\t' || h->s[h->i] == '\n' || h->s[h->i] == '\r'))
        h->i++;
}

static bool
hchar(hparser *h, char c)
{
    hws(h);
    if (h->i < h->n && h->s[h->i] == c) {
        h->i++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes (all NumPy writes), into buf. */
static bool
hstring(hparser *h, char *buf, size_t n)
{
    hws(h);
    if (h->i >= h->n || (h->s[h->i] != '\'' && h->s[h->i] != '"'))
        return false;
    char q = h->s[h->i++];
    size_t k = 0;
    while (h->i < h->n && h->s[h->i] != q) {
        if (h->s[h->i] == '\\' || k + 1 >= n)
            return false;
        buf[k++] = h->s[h->i++];
    }
    if (h->i >= h->n)
        return false;
    h->i++;
    buf[k] = '\0';
    return true;
}

static bool
hword(hparser *h, const char *w)
{
    hws(h);
    size_t k = strlen(w);
    if (h->n - h->i >= k && memcmp(h->s + h->i, w, k) == 0) {
        h->i += k;
        return true;
    }
    return false;
}

typedef struct npy_header {
    char descr[32];
    bool fortran;
    int ndim;
    int64_t sizes[OPS_MAX_DIMS];
} npy_header;

/* Parses the dict; on failure writes why. */
static bool
parse_header(const char *s, size_t n, npy_header *out, char *why, size_t whylen)
{
    hparser h = {s, n, 0};
    bool have_descr = false, have_fortran = false, have_shape = false;
    if (!hchar(&h, '{')) {
        snprintf(why, whylen, "the header is not a dict literal ('{' expected)");
        return false;
    }
    for (;;) {
        if (hchar(&h, '}'))
            break;
        char key[32];
        if (!hstring(&h, key, sizeof key)) {
            snprintf(why, whylen, "expected a quoted key at header byte %zu", h.i);
            return false;
        }
        if (!hchar(&h, ':')) {
            snprintf(why, whylen, "expected ':' after key '%s'", key);
            return false;
        }
        bool *seen;
        if (strcmp(key, "descr") == 0) {
            seen = &have_descr;
            if (!hstring(&h, out->descr, sizeof out->descr)) {
                snprintf(why, whylen, "'descr' must be a type string such as '<f4' (structured dtypes are not supported)");
                return false;
            }
        } else if (strcmp(key, "fortran_order") == 0) {
            seen = &have_fortran;
            if (hword(&h, "True"))
                out->fortran = true;
            else if (hword(&h, "False"))
                out->fortran = false;
            else {
                snprintf(why, whylen, "'fortran_order' must be True or False");
                return false;
            }
        } else if (strcmp(key, "shape") == 0) {
            seen = &have_shape;
            if (!hchar(&h, '(')) {
                snprintf(why, whylen, "'shape' must be a tuple of integers");
                return false;
            }
            out->ndim = 0;
            for (;;) {
                if (hchar(&h, ')'))
                    break;
                hws(&h);
                if (h.i >= h.n || h.s[h.i] < '0' || h.s[h.i] > '9') {
                    snprintf(why, whylen, "'shape' must be a tuple of non-negative integers");
                    return false;
                }
                int64_t v = 0;
                while (h.i < h.n && h.s[h.i] >= '0' && h.s[h.i] <= '9') {
                    if (v > (INT64_MAX - 9) / 10) {
                        snprintf(why, whylen, "a dimension of 'shape' does not fit in 64 bits");
                        return false;
                    }
                    v = v * 10 + (h.s[h.i++] - '0');
                }
                if (out->ndim == OPS_MAX_DIMS) {
                    snprintf(why, whylen, "'shape' has more than %d dimensions (the most libops allows)", OPS_MAX_DIMS);
                    return false;
                }
                out->sizes[out->ndim++] = v;
                if (hchar(&h, ','))
                    continue;
                if (hchar(&h, ')'))
                    break;
                snprintf(why, whylen, "expected ',' or ')' in 'shape'");
                return false;
            }
        } else {
            snprintf(why, whylen, "unexpected key '%s' (a .npy header has descr, fortran_order and shape)", key);
            return false;
        }
        if (*seen) {
            snprintf(why, whylen, "key '%s' appears twice", key);
            return false;
        }
        *seen = true;
        if (hchar(&h, ','))
            continue;
        if (hchar(&h, '}'))
            break;
        snprintf(why, whylen, "expected ',' or '}' after the value of '%s'", key);
        return false;
    }
    hws(&h);
    if (h.i != h.n) {
        snprintf(why, whylen, "unexpected text after the header's dict");
        return false;
    }
    if (!have_descr || !have_fortran || !have_shape) {
        snprintf(why, whylen, "the header lacks '%s'", !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
        return false;
    }
    return true;
}

/* The dtype of a descr and whether its bytes need swapping; OPS_DTYPE_NONE (with why)
 * when libops has no such dtype. */
static ops_dtype
descr_dtype(const char *descr, bool *swap, char *why, size_t whylen)
{
    char order = descr[0];
    if ((order != '<' && order != '>' && order != '|' && order != '=') || descr[1] == '\0') {
        snprintf(why, whylen, "descr '%s' is not a simple type (byte order, kind, size)", descr);
        return OPS_DTYPE_NONE;
    }
    char kind = descr[1];
    char *end = NULL;
    errno = 0;
    long size = strtol(descr + 2, &end, 10);
    bool sized = end != descr + 2 && *end == '\0' && errno == 0;
    for (size_t k = 0; sized && k < sizeof npy_types / sizeof npy_types[0]; k++)
        if (npy_types[k].kind == kind && npy_types[k].size == size) {
            if (order == '|' && size != 1) {
                snprintf(why, whylen, "descr '%s' has no byte order for a %ld-byte type", descr, size);
                return OPS_DTYPE_NONE;
            }
            bool file_le = order == '<' || (order == '=' && host_le) || order == '|';
            *swap = size > 1 && file_le != host_le;
            return npy_types[k].dtype;
        }
    const char *what = kind == 'u'   ? "unsigned integers wider than 8 bits"
                       : kind == 'c' ? "complex numbers"
                       : kind == 'U' || kind == 'S' ? "strings"
                       : kind == 'O' ? "Python objects"
                       : kind == 'M' || kind == 'm' ? "datetimes"
                       : kind == 'V' ? "raw void records"
                       : kind == 'f' ? "floats of this size"
                       : kind == 'i' ? "integers of this size"
                       : "such type";
    snprintf(why, whylen, "dtype '%s' is not supported by libops (it has no %s; supported: |b1 |u1 |i1 i2 i4 i8 f2 f4 f8)",
             descr, what);
    return OPS_DTYPE_NONE;
}

static void
byteswap(unsigned char *p, size_t nbytes, size_t isz)
{
    for (size_t i = 0; i + isz <= nbytes; i += isz)
        for (size_t a = 0, b = isz - 1; a < b; a++, b--) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

ops_status
ops_npy_read(const char *op, const char *name, npy_source *src, ops_tensor **out)
{
    *out = NULL;
    unsigned char pre[12];
    int64_t got = src->read(src->ctx, pre, 8);
    if (got < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': read error", op, name);
    if (got < 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s' is not a .npy file (it does not start with \\x93NUMPY and a version)",
                        op, name);
    int major = pre[6], minor = pre[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)", op,
                        name, major, minor);
    size_t lenbytes = major == 1 ? 2 : 4;
    if (src->read(src->ctx, pre + 8, lenbytes) != (int64_t)lenbytes)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': truncated .npy header length", op, name);
    uint32_t hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    if (major != 1)
        hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    if (hlen > NPY_MAX_HEADER)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': header length %u is over the limit of %u bytes", op, name, hlen,
                        NPY_MAX_HEADER);
    if ((uint64_t)hlen + 8 + lenbytes > src->avail)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': header length %u runs past the end of the data (%" PRIu64 " bytes)",
                        op, name, hlen, src->avail);
    char *hdr = ops_host_malloc(hlen + 1);
    if (hdr == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: '%s': out of memory", op, name);
    if (src->read(src->ctx, hdr, hlen) != (int64_t)hlen) {
        ops_host_free(hdr);
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': truncated .npy header", op, name);
    }
    hdr[hlen] = '\0';
    /* Versions 1 and 2 are latin-1, 3 is UTF-8; the keys and values that parse are
     * ASCII either way, and anything else is refused by the parser. */
    npy_header h;
    char why[200];
    bool ok = parse_header(hdr, hlen, &h, why, sizeof why);
    ops_host_free(hdr);
    if (!ok)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': invalid .npy header: %s", op, name, why);
    bool swap = false;
    ops_dtype dt = descr_dtype(h.descr, &swap, why, sizeof why);
    if (dt == OPS_DTYPE_NONE)
        return ops_fail(OPS_ERR_DTYPE, "%s: '%s': %s", op, name, why);
    size_t isz = ops_dtype_size(dt);
    uint64_t nbytes = isz;
    bool overflow = false, empty = false;
    for (int d = 0; d < h.ndim; d++) {
        empty |= h.sizes[d] == 0;
        overflow |= __builtin_mul_overflow(nbytes, (uint64_t)h.sizes[d], &nbytes);
    }
    if (empty)
        nbytes = 0;
    char sb[OPS_SHAPE_STR_LEN];
    uint64_t left = src->avail - 8 - lenbytes - hlen;
    if ((overflow && !empty) || nbytes > left)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': the data is truncated: shape %s of %s needs %s%" PRIu64
                        " bytes, the file holds %" PRIu64, op, name, ops_shape_str(h.ndim, h.sizes, sb, sizeof sb),
                        h.descr, overflow ? "more than " : "", overflow ? UINT64_MAX : nbytes, left);
    /* An empty array may still name huge dimensions: refuse what no tensor can have. */
    if (ops_check_geometry(op, h.ndim, h.sizes, NULL, 0, dt) != OPS_OK)
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': shape %s of %s is too large", op, name,
                        ops_shape_str(h.ndim, h.sizes, sb, sizeof sb), h.descr);
    int64_t strides[OPS_MAX_DIMS];
    if (h.fortran) {
        int64_t s = 1;
        for (int d = 0; d < h.ndim; d++) {
            strides[d] = s;
            if (__builtin_mul_overflow(s, h.sizes[d] > 0 ? h.sizes[d] : 1, &s))
                return ops_fail(OPS_ERR_VALUE, "%s: '%s': shape %s of %s is too large", op, name,
                                ops_shape_str(h.ndim, h.sizes, sb, sizeof sb), h.descr);
        }
    }
    ops_tensor *t = ops_tensor_new(op, h.ndim, h.sizes, h.fortran ? strides : NULL, dt, OPS_DEVICE_CPU);
    if (t == NULL)
        return ops_last_status();
    unsigned char *p = ops_tensor_data_ptr(t);
    if (nbytes > 0 && src->read(src->ctx, p, (size_t)nbytes) != (int64_t)nbytes) {
        ops_tensor_release(t);
        return ops_fail(OPS_ERR_VALUE, "%s: '%s': the data is truncated (shape %s of %s needs %" PRIu64 " bytes)", op,
                        name, ops_shape_str(h.ndim, h.sizes, sb, sizeof sb), h.descr, nbytes);
    }
    if (swap)
        byteswap(p, (size_t)nbytes, isz);
    if (dt == OPS_BOOL) {
        int64_t bad = ops_first_bad_bool(p, (size_t)nbytes);
        if (bad >= 0) {
            unsigned v = p[bad];
            ops_tensor_release(t);
            return ops_fail(OPS_ERR_VALUE, "%s: '%s': bool element %" PRId64 " (in memory order) is %u (must be 0 or 1)",
                            op, name, bad, v);
        }
    }
    *out = t;
    return OPS_OK;
}

ops_status
ops_npy_prepare(const char *op, const char *name, const ops_tensor *t, char *hdr, size_t *hlen, ops_tensor **c)
{
    *c = NULL;
    ops_dtype dt = ops_tensor_dtype(t);
    const char *descr = NULL;
    char buf[8];
    for (size_t k = 0; k < sizeof npy_types / sizeof npy_types[0]; k++)
        if (npy_types[k].dtype == dt) {
            snprintf(buf, sizeof buf, "%c%c%d", npy_types[k].size == 1 ? '|' : host_le ? '<' : '>', npy_types[k].kind,
                     npy_types[k].size);
            descr = buf;
        }
    if (descr == NULL)
        return ops_fail(OPS_ERR_DTYPE, "%s: '%s': NumPy has no %s dtype (convert to float32 first)", op, name,
                        ops_dtype_name(dt));
    ops_tensor *ct = ops_serialize_contiguous_cpu(t);
    if (ct == NULL)
        return ops_last_status();
    /* magic + version + length (10 bytes), then the dict padded with spaces and a
     * newline to a multiple of 64, as NumPy writes it. */
    char dict[OPS_NPY_HEADER_MAX];
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    int64_t nd = ops_tensor_ndim(ct);
    for (int64_t d = 0; d < nd; d++)
        k += snprintf(dict + k, sizeof dict - (size_t)k, "%s%" PRId64, d ? ", " : "", ops_tensor_sizes(ct)[d]);
    k += snprintf(dict + k, sizeof dict - (size_t)k, "%s), }", nd == 1 ? "," : "");
    size_t total = 10 + (size_t)k + 1;
    size_t padded = (total + 63) / 64 * 64;
    size_t dlen = padded - 10;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)(dlen & 0xff);
    hdr[9] = (char)(dlen >> 8);
    memcpy(hdr + 10, dict, (size_t)k);
    memset(hdr + 10 + k, ' ', dlen - (size_t)k - 1);
    hdr[padded - 1] = '\n';
    *hlen = padded;
    *c = ct;
    return OPS_OK;
}

/* ---- files and buffers ---------------------------------------------------------------- */

typedef struct buf_src {
    const unsigned char *p;
    size_t n, i;
} buf_src;

static int64_t
buf_read(void *ctx, void *dst, size_t n)
{
    buf_src *b = ctx;
    size_t k = b->n - b->i < n ? b->n - b->i : n;
    if (k)
        memcpy(dst, b->p + b->i, k);
    b->i += k;
    return (int64_t)k;
}

static int64_t
file_read(void *ctx, void *dst, size_t n)
{
    FILE *f = ctx;
    size_t k = fread(dst, 1, n, f);
    if (k < n && ferror(f))
        return -1;
    return (int64_t)k;
}

ops_status
ops_npy_load(const char *path, ops_tensor **out)
{
    if (out == NULL || path == NULL)
        return ops_fail(OPS_ERR_VALUE, "npy: %s is NULL", out == NULL ? "out" : "path");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return ops_fail(OPS_ERR_VALUE, "npy: cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return ops_fail(OPS_ERR_VALUE, "npy: '%s' is not a regular file", path);
    }
    npy_source src = {file_read, f, (uint64_t)sb.st_size};
    ops_status st = ops_npy_read("npy", path, &src, out);
    fclose(f);
    return st;
}

ops_status
ops_npy_load_buffer(const void *data, size_t n, const char *name, ops_tensor **out)
{
    if (out == NULL)
        return ops_fail(OPS_ERR_VALUE, "npy: out is NULL");
    *out = NULL;
    if (data == NULL && n > 0)
        return ops_fail(OPS_ERR_VALUE, "npy: data is NULL");
    buf_src b = {data, n, 0};
    npy_source src = {buf_read, &b, n};
    return ops_npy_read("npy", name ? name : "<buffer>", &src, out);
}

ops_status
ops_npy_save(const char *path, const ops_tensor *t)
{
    if (path == NULL || t == NULL)
        return ops_fail(OPS_ERR_VALUE, "npy: %s is NULL", path == NULL ? "path" : "the tensor");
    char hdr[OPS_NPY_HEADER_BUF];
    size_t hlen;
    ops_tensor *c;
    ops_status st = ops_npy_prepare("npy", path, t, hdr, &hlen, &c);
    if (st != OPS_OK)
        return st;
    ops_file_writer w;
    if ((st = ops_writer_open(&w, "npy", path)) == OPS_OK) {
        st = ops_writer_write(&w, hdr, hlen);
        if (st == OPS_OK)
            st = ops_writer_write(&w, ops_tensor_data_ptr(c), (size_t)ops_tensor_numel(c) * ops_tensor_itemsize(c));
        if (st == OPS_OK)
            st = ops_writer_commit(&w);
        else
            ops_writer_abort(&w);
    }
    ops_tensor_release(c);
    return st;
}

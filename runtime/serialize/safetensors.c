/* safetensors: load (mmap, zero-copy, validated as untrusted input) and save.
 *
 * The format: 8 bytes of little-endian u64 N, then N bytes of JSON header (an object:
 * "__metadata__" -> {string: string}, and per tensor name {"dtype": "F32", "shape": [..],
 * "data_offsets": [begin, end]} with offsets relative to the byte buffer after the
 * header), then that byte buffer, which the tensors cover exactly (no holes, no
 * overlap, nothing after the last one).
 *
 * A loaded file is one MAP_PRIVATE mapping shared by all its tensors: each tensor's
 * storage is a from_blob over its bytes whose deleter drops a reference on the
 * mapping, and the last one unmaps it.  MAP_PRIVATE with PROT_WRITE makes writes
 * copy-on-write per page (the file is never written, and a write needs no check in
 * every kernel); see docs/serialization.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_internal.h"
#include "ops_serialize.h"
#include "ops_serialize_impl.h"

#define OP "safetensors"
/* The safetensors library's own cap on the header; a larger one is hostile. */
#define ST_MAX_HEADER ((uint64_t)100 << 20)

static const struct {
    const char *name;
    ops_dtype dtype;
} st_dtypes[] = {
    {"BOOL", OPS_BOOL}, {"U8", OPS_UINT8},     {"I8", OPS_INT8},       {"I16", OPS_INT16}, {"I32", OPS_INT32},
    {"I64", OPS_INT64}, {"F16", OPS_FLOAT16}, {"BF16", OPS_BFLOAT16}, {"F32", OPS_FLOAT32}, {"F64", OPS_FLOAT64},
};
/* Dtypes of the format that libops has no counterpart for: refused by name. */
static const char *const st_foreign[] = {"U16", "U32", "U64", "C64", "C128", "F8_E4M3", "F8_E5M2",
                                         "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4"};

static const char *
st_dtype_name(ops_dtype dt)
{
    for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
        if (st_dtypes[k].dtype == dt)
            return st_dtypes[k].name;
    return NULL;
}

/* ---- the mapping ---------------------------------------------------------------- */

typedef struct st_mapping {
    void *base;
    size_t len;
    atomic_long refs;
} st_mapping;

static void
mapping_unref(st_mapping *m)
{
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1) {
        munmap(m->base, m->len);
        ops_host_free(m);
    }
}

static void
mapping_deleter(void *data, void *ctx)
{
    (void)data;
    mapping_unref(ctx);
}

/* ---- header validation ------------------------------------------------------------ */

typedef struct st_entry {
    const char *name; /* borrowed from the parsed header */
    ops_dtype dtype;
    int ndim;
    int64_t sizes[OPS_MAX_DIMS];
    uint64_t begin, end;
} st_entry;

static const ops_json *
member(const ops_json *obj, const char *key)
{
    for (size_t k = 0; k < obj->u.obj.n; k++)
        if (strcmp(obj->u.obj.members[k].key, key) == 0)
            return &obj->u.obj.members[k].value;
    return NULL;
}

static ops_status
parse_entry(const char *file, const ops_json_member *m, uint64_t data_len, st_entry *e)
{
    const char *name = m->key;
    const ops_json *v = &m->value;
    e->name = name;
    if (v->kind != OPS_JSON_OBJECT)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': expected an object {dtype, shape, data_offsets}, got %s",
                        file, name, ops_json_kind_name(v->kind));
    for (size_t k = 0; k < v->u.obj.n; k++) {
        const char *key = v->u.obj.members[k].key;
        if (strcmp(key, "dtype") != 0 && strcmp(key, "shape") != 0 && strcmp(key, "data_offsets") != 0)
            return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': unknown key '%s' (expected dtype, shape, data_offsets)",
                            file, name, key);
        for (size_t j = 0; j < k; j++)
            if (strcmp(v->u.obj.members[j].key, key) == 0)
                return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': key '%s' appears twice", file, name, key);
    }
    const ops_json *dt = member(v, "dtype"), *shape = member(v, "shape"), *off = member(v, "data_offsets");
    if (dt == NULL || shape == NULL || off == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': missing '%s'", file, name,
                        dt == NULL ? "dtype" : shape == NULL ? "shape" : "data_offsets");
    if (dt->kind != OPS_JSON_STRING)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': dtype must be a string, got %s", file, name,
                        ops_json_kind_name(dt->kind));
    e->dtype = OPS_DTYPE_NONE;
    for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
        if (strcmp(dt->u.str.s, st_dtypes[k].name) == 0)
            e->dtype = st_dtypes[k].dtype;
    if (e->dtype == OPS_DTYPE_NONE) {
        for (size_t k = 0; k < sizeof st_foreign / sizeof st_foreign[0]; k++)
            if (strcmp(dt->u.str.s, st_foreign[k]) == 0)
                return ops_fail(OPS_ERR_DTYPE,
                                OP ": '%s': tensor '%s': dtype %s is not supported by libops (it has BOOL, U8, I8, I16, "
                                "I32, I64, F16, BF16, F32, F64)", file, name, st_foreign[k]);
        return ops_fail(OPS_ERR_DTYPE, OP ": '%s': tensor '%s': unknown dtype '%.64s'", file, name, dt->u.str.s);
    }
    if (shape->kind != OPS_JSON_ARRAY)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': shape must be an array of integers, got %s", file,
                        name, ops_json_kind_name(shape->kind));
    if (shape->u.arr.n > OPS_MAX_DIMS)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': shape has %zu dimensions, libops allows at most %d",
                        file, name, shape->u.arr.n, OPS_MAX_DIMS);
    e->ndim = (int)shape->u.arr.n;
    uint64_t nbytes = ops_dtype_size(e->dtype);
    bool overflow = false;
    for (int d = 0; d < e->ndim; d++) {
        const ops_json *s = &shape->u.arr.items[d];
        if (s->kind != OPS_JSON_NUMBER || !s->u.num.is_int || s->u.num.i < 0)
            return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': shape[%d] must be a non-negative integer", file,
                            name, d);
        e->sizes[d] = s->u.num.i;
        if (__builtin_mul_overflow(nbytes, (uint64_t)s->u.num.i, &nbytes))
            overflow = true;
    }
    char sb[OPS_SHAPE_STR_LEN];
    bool empty = false;
    for (int d = 0; d < e->ndim; d++)
        empty |= e->sizes[d] == 0;
    /* An overflowing product is only real when no dimension is 0. */
    if (overflow && !empty)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': shape %s of %s has more bytes than fit in 64 bits",
                        file, name, ops_shape_str(e->ndim, e->sizes, sb, sizeof sb), dt->u.str.s);
    if (empty)
        nbytes = 0;
    if (ops_check_geometry(OP, e->ndim, e->sizes, NULL, 0, e->dtype) != OPS_OK)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': shape %s of %s is too large", file, name,
                        ops_shape_str(e->ndim, e->sizes, sb, sizeof sb), dt->u.str.s);
    if (off->kind != OPS_JSON_ARRAY || off->u.arr.n != 2)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': data_offsets must be an array [begin, end]", file, name);
    for (int k = 0; k < 2; k++) {
        const ops_json *o = &off->u.arr.items[k];
        if (o->kind != OPS_JSON_NUMBER || !o->u.num.is_int || o->u.num.i < 0)
            return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': data_offsets[%d] must be a non-negative integer",
                            file, name, k);
    }
    e->begin = (uint64_t)off->u.arr.items[0].u.num.i;
    e->end = (uint64_t)off->u.arr.items[1].u.num.i;
    if (e->begin > e->end)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin",
                        file, name, e->begin, e->end);
    if (e->end > data_len)
        return ops_fail(OPS_ERR_VALUE,
                        OP ": '%s': tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] lie outside the data buffer of %" PRIu64
                        " bytes (file truncated?)", file, name, e->begin, e->end, data_len);
    if (e->end - e->begin != nbytes)
        return ops_fail(OPS_ERR_VALUE,
                        OP ": '%s': tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                        " bytes but shape %s of %s needs %" PRIu64, file, name, e->begin, e->end, e->end - e->begin,
                        ops_shape_str(e->ndim, e->sizes, sb, sizeof sb), dt->u.str.s, nbytes);
    return OPS_OK;
}

static int
cmp_entry(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

static ops_status
parse_metadata(const char *file, const ops_json *v, ops_tensor_dict *d)
{
    if (v->kind != OPS_JSON_OBJECT)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': __metadata__ must be an object of strings, got %s", file,
                        ops_json_kind_name(v->kind));
    for (size_t k = 0; k < v->u.obj.n; k++) {
        const ops_json_member *m = &v->u.obj.members[k];
        if (m->value.kind != OPS_JSON_STRING)
            return ops_fail(OPS_ERR_VALUE, OP ": '%s': __metadata__ value of '%s' must be a string, got %s", file,
                            m->key, ops_json_kind_name(m->value.kind));
        if (strlen(m->key) != m->keylen || strlen(m->value.u.str.s) != m->value.u.str.len)
            return ops_fail(OPS_ERR_VALUE, OP ": '%s': __metadata__ entry '%s' contains a NUL character", file, m->key);
        if (ops_tensor_dict_metadata_get(d, m->key) != NULL)
            return ops_fail(OPS_ERR_VALUE, OP ": '%s': __metadata__ key '%s' appears twice", file, m->key);
        if (ops_tensor_dict_set_metadata(d, m->key, m->value.u.str.s) != OPS_OK)
            return OPS_ERR_OOM;
    }
    return OPS_OK;
}

/* The tensors of the file whose bytes are bytes[0..total): views of map when map is
 * given (each taking a reference), copies otherwise. */
static ops_status
load_bytes(const char *file, const unsigned char *bytes, uint64_t total, st_mapping *map, ops_tensor_dict **out)
{
    *out = NULL;
    if (total < 8)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': the file has %" PRIu64 " bytes, fewer than the 8 of the header length",
                        file, total);
    uint64_t hlen = 0;
    for (int k = 7; k >= 0; k--)
        hlen = (hlen << 8) | bytes[k];
    if (hlen > ST_MAX_HEADER)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': header length %" PRIu64 " is over the limit of %" PRIu64 " bytes",
                        file, hlen, ST_MAX_HEADER);
    if (hlen > total - 8)
        return ops_fail(OPS_ERR_VALUE,
                        OP ": '%s': header length %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes after the length)",
                        file, hlen, total - 8);
    if (hlen < 2)
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': header length %" PRIu64 " is too short for a JSON object", file, hlen);
    const char *hdr = (const char *)bytes + 8;
    if (hdr[0] != '{')
        return ops_fail(OPS_ERR_VALUE, OP ": '%s': the header does not start with '{' (not a safetensors file?)", file);
    uint64_t data_len = total - 8 - hlen;
    const unsigned char *data = bytes + 8 + hlen;

    char why[200];
    bool oom = false;
    ops_json root;
    if (!ops_json_parse(hdr, (size_t)hlen, &root, why, sizeof why, &oom))
        return ops_fail(oom ? OPS_ERR_OOM : OPS_ERR_VALUE, OP ": '%s': the header is not valid JSON: %s", file, why);
    ops_status st = OPS_OK;
    st_entry *entries = NULL;
    ops_tensor_dict *d = ops_tensor_dict_new();
    if (d == NULL) {
        st = OPS_ERR_OOM;
        goto done;
    }
    if (root.kind != OPS_JSON_OBJECT) {
        st = ops_fail(OPS_ERR_VALUE, OP ": '%s': the header must be a JSON object", file);
        goto done;
    }
    entries = ops_host_malloc_array((int64_t)root.u.obj.n + 1, sizeof *entries);
    if (entries == NULL) {
        st = ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory", file);
        goto done;
    }
    size_t n = 0;
    bool seen_meta = false;
    for (size_t k = 0; k < root.u.obj.n; k++) {
        const ops_json_member *m = &root.u.obj.members[k];
        if (strlen(m->key) != m->keylen) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': the tensor name at header byte %zu contains a NUL character", file,
                          m->pos);
            goto done;
        }
        if (strcmp(m->key, "__metadata__") == 0) {
            if (seen_meta) {
                st = ops_fail(OPS_ERR_VALUE, OP ": '%s': __metadata__ appears twice", file);
                goto done;
            }
            seen_meta = true;
            if ((st = parse_metadata(file, &m->value, d)) != OPS_OK)
                goto done;
            continue;
        }
        if ((st = parse_entry(file, m, data_len, &entries[n])) != OPS_OK)
            goto done;
        n++;
    }
    /* The buffer is covered exactly: sorted by offset, each tensor starts where the
     * previous one ended (empty tensors hold no bytes and may sit anywhere). */
    qsort(entries, n, sizeof *entries, cmp_entry);
    uint64_t covered = 0;
    const st_entry *prev = NULL;
    for (size_t k = 0; k < n; k++) {
        const st_entry *e = &entries[k];
        if (e->begin == e->end)
            continue;
        if (e->begin < covered) {
            st = ops_fail(OPS_ERR_VALUE,
                          OP ": '%s': tensors '%s' [%" PRIu64 ", %" PRIu64 "] and '%s' [%" PRIu64 ", %" PRIu64 "] overlap",
                          file, prev->name, prev->begin, prev->end, e->name, e->begin, e->end);
            goto done;
        }
        if (e->begin > covered) {
            st = ops_fail(OPS_ERR_VALUE,
                          OP ": '%s': bytes [%" PRIu64 ", %" PRIu64 ") of the data buffer belong to no tensor (a hole before '%s')",
                          file, covered, e->begin, e->name);
            goto done;
        }
        covered = e->end;
        prev = e;
    }
    if (covered != data_len) {
        st = ops_fail(OPS_ERR_VALUE,
                      OP ": '%s': %" PRIu64 " bytes after the last tensor's data belong to no tensor (the data buffer has %" PRIu64 ")",
                      file, data_len - covered, data_len);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        const st_entry *e = &entries[k];
        if (ops_tensor_dict_contains(d, e->name)) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s' appears twice in the header", file, e->name);
            goto done;
        }
        const unsigned char *p = data + e->begin;
        size_t nb = (size_t)(e->end - e->begin);
        if (e->dtype == OPS_BOOL) {
            int64_t bad = ops_first_bad_bool(p, nb);
            if (bad >= 0) {
                st = ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor '%s': bool element %" PRId64 " is %u (must be 0 or 1)",
                              file, e->name, bad, p[bad]);
                goto done;
            }
        }
        ops_int_list sizes = {e->sizes, e->ndim};
        ops_tensor *t;
        size_t isz = ops_dtype_size(e->dtype);
        if (map != NULL && ((uintptr_t)p % isz) == 0) {
            atomic_fetch_add_explicit(&map->refs, 1, memory_order_relaxed);
            t = ops_tensor_from_blob((void *)p, sizes, (ops_int_list){NULL, 0}, e->dtype, OPS_DEVICE_CPU,
                                     mapping_deleter, map);
            if (t == NULL)
                mapping_unref(map); /* from_blob runs no deleter on failure */
        } else {
            /* Copied: a buffer load, or data not aligned to its element size. */
            t = ops_tensor_from_data(p, sizes, e->dtype);
        }
        if (t == NULL) {
            st = ops_last_status();
            goto done;
        }
        st = ops_tensor_dict_set(d, e->name, t);
        ops_tensor_release(t);
        if (st != OPS_OK)
            goto done;
    }
done:
    ops_host_free(entries);
    ops_json_free(&root);
    if (st != OPS_OK) {
        ops_tensor_dict_free(d);
        return st;
    }
    *out = d;
    return OPS_OK;
}

ops_status
ops_safetensors_load(const char *path, ops_tensor_dict **out)
{
    if (out == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": out is NULL");
    *out = NULL;
    if (path == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": path is NULL");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ops_fail(OPS_ERR_VALUE, OP ": cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ops_fail(OPS_ERR_VALUE, OP ": '%s' is not a regular file", path);
    }
    uint64_t total = (uint64_t)sb.st_size;
    if (total < 8) {
        close(fd);
        return load_bytes(path, (const unsigned char *)"", total, NULL, out);
    }
    if (total > SIZE_MAX) {
        close(fd);
        return ops_fail(OPS_ERR_VALUE, OP ": '%s' is too large to map", path);
    }
    st_mapping *m = ops_host_malloc(sizeof *m);
    if (m == NULL) {
        close(fd);
        return ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory", path);
    }
    /* Private and writable: writes into a loaded tensor are copy-on-write pages. */
    void *base = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int err = errno;
    close(fd);
    if (base == MAP_FAILED) {
        ops_host_free(m);
        return ops_fail(err == ENOMEM ? OPS_ERR_OOM : OPS_ERR_VALUE, OP ": cannot map '%s' (%" PRIu64 " bytes): %s",
                        path, total, strerror(err));
    }
    m->base = base;
    m->len = (size_t)total;
    atomic_init(&m->refs, 1); /* this function's own reference, dropped below */
    ops_status st = load_bytes(path, base, total, m, out);
    mapping_unref(m);
    return st;
}

ops_status
ops_safetensors_load_buffer(const void *data, size_t n, const char *name, ops_tensor_dict **out)
{
    if (out == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": out is NULL");
    *out = NULL;
    if (data == NULL && n > 0)
        return ops_fail(OPS_ERR_VALUE, OP ": data is NULL");
    return load_bytes(name ? name : "<buffer>", data ? data : (const void *)"", n, NULL, out);
}

/* ---- save ------------------------------------------------------------------------ */

typedef struct strbuf {
    char *s;
    size_t n, cap;
    bool oom;
} strbuf;

static void
sb_put(strbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *ns = ops_host_realloc(b->s, nc);
        if (ns == NULL) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void
sb_str(strbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* A JSON string literal: quotes, backslashes and control characters escaped. */
static void
sb_json_string(strbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[8];
        if (c == '"' || c == '\\') {
            e[0] = '\\', e[1] = (char)c;
            sb_put(b, e, 2);
        } else if (c < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", c);
            sb_put(b, e, 6);
        } else {
            sb_put(b, s, 1);
        }
    }
    sb_put(b, "\"", 1);
}

typedef struct save_item {
    const char *name;
    ops_tensor *c; /* contiguous CPU values */
    size_t nbytes;
} save_item;

static int
cmp_save(const void *a, const void *b)
{
    const save_item *x = a, *y = b;
    size_t ix = ops_tensor_itemsize(x->c), iy = ops_tensor_itemsize(y->c);
    if (ix != iy)
        return ix > iy ? -1 : 1;
    return strcmp(x->name, y->name);
}

ops_status
ops_safetensors_save(const char *path, const ops_tensor_dict *d)
{
    if (path == NULL || d == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": %s is NULL", path == NULL ? "path" : "the dict");
    int64_t n = ops_tensor_dict_size(d);
    save_item *items = ops_host_malloc_array(n + 1, sizeof *items);
    if (items == NULL)
        return ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory", path);
    ops_status st = OPS_OK;
    int64_t got = 0;
    strbuf b = {0};
    for (int64_t i = 0; i < ops_tensor_dict_metadata_size(d); i++) {
        const char *k = ops_tensor_dict_metadata_key(d, i), *v = ops_tensor_dict_metadata_value(d, i);
        if (!ops_utf8_valid(k, strlen(k)) || !ops_utf8_valid(v, strlen(v))) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': metadata entry %" PRId64 " is not valid UTF-8", path, i);
            goto done;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const char *name = ops_tensor_dict_name(d, i);
        const ops_tensor *t = ops_tensor_dict_tensor(d, i);
        if (name[0] == '\0' || strcmp(name, "__metadata__") == 0 || !ops_utf8_valid(name, strlen(name))) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': tensor name '%s' is not allowed (names are non-empty UTF-8, "
                          "not __metadata__)", path, name);
            goto done;
        }
        if (st_dtype_name(ops_tensor_dtype(t)) == NULL) {
            st = ops_fail(OPS_ERR_DTYPE, OP ": '%s': tensor '%s' has an invalid dtype", path, name);
            goto done;
        }
        ops_tensor *c = ops_serialize_contiguous_cpu(t);
        if (c == NULL) {
            st = ops_last_status();
            goto done;
        }
        items[got].name = name;
        items[got].c = c;
        items[got].nbytes = (size_t)ops_tensor_numel(c) * ops_tensor_itemsize(c);
        got++;
    }
    /* Largest elements first: with the header padded to 8 bytes, every tensor then
     * starts at a multiple of its element size (the order the safetensors library
     * writes, so files match its output). */
    qsort(items, (size_t)got, sizeof *items, cmp_save);
    sb_put(&b, "{", 1);
    bool first = true;
    if (ops_tensor_dict_metadata_size(d) > 0) {
        sb_str(&b, "\"__metadata__\":{");
        for (int64_t i = 0; i < ops_tensor_dict_metadata_size(d); i++) {
            if (i)
                sb_put(&b, ",", 1);
            sb_json_string(&b, ops_tensor_dict_metadata_key(d, i));
            sb_put(&b, ":", 1);
            sb_json_string(&b, ops_tensor_dict_metadata_value(d, i));
        }
        sb_put(&b, "}", 1);
        first = false;
    }
    uint64_t off = 0;
    for (int64_t i = 0; i < got; i++) {
        char num[64];
        if (!first)
            sb_put(&b, ",", 1);
        first = false;
        sb_json_string(&b, items[i].name);
        sb_str(&b, ":{\"dtype\":\"");
        sb_str(&b, st_dtype_name(ops_tensor_dtype(items[i].c)));
        sb_str(&b, "\",\"shape\":[");
        for (int64_t k = 0; k < ops_tensor_ndim(items[i].c); k++) {
            snprintf(num, sizeof num, "%s%" PRId64, k ? "," : "", ops_tensor_sizes(items[i].c)[k]);
            sb_str(&b, num);
        }
        snprintf(num, sizeof num, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", off, off + items[i].nbytes);
        sb_str(&b, num);
        off += items[i].nbytes;
    }
    sb_put(&b, "}", 1);
    while (!b.oom && (b.n % 8) != 0)
        sb_put(&b, " ", 1);
    if (b.oom) {
        st = ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory building the header", path);
        goto done;
    }
    unsigned char len8[8];
    for (int k = 0; k < 8; k++)
        len8[k] = (unsigned char)((uint64_t)b.n >> (8 * k));
    ops_file_writer w;
    if ((st = ops_writer_open(&w, OP, path)) != OPS_OK)
        goto done;
    st = ops_writer_write(&w, len8, 8);
    if (st == OPS_OK)
        st = ops_writer_write(&w, b.s, b.n);
    for (int64_t i = 0; i < got && st == OPS_OK; i++)
        st = ops_writer_write(&w, ops_tensor_data_ptr(items[i].c), items[i].nbytes);
    if (st == OPS_OK)
        st = ops_writer_commit(&w);
    else
        ops_writer_abort(&w);
done:
    for (int64_t i = 0; i < got; i++)
        ops_tensor_release(items[i].c);
    ops_host_free(items);
    ops_host_free(b.s);
    return st;
}

/* ops_tensor_dict: the ordered name -> tensor map the file formats load into and save
 * from, with safetensors' string -> string metadata; and the helpers the formats share
 * (contiguous CPU copies, whole-file reads, writes through a temporary file).
 *
 * Lookups go through an open-addressing hash of the names, so loading a file of n
 * tensors (which checks every name for duplicates) costs O(n), not O(n^2). */
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_op_contiguous.h"
#include "ops_op_to.h"
#include "ops_internal.h"
#include "ops_serialize.h"
#include "ops_serialize_impl.h"

typedef struct entry {
    char *name;
    ops_tensor *t;
} entry;

typedef struct meta_entry {
    char *key;
    char *value;
} meta_entry;

struct ops_tensor_dict {
    entry *items;
    int64_t n, cap;
    int64_t *slots; /* hash slots: index into items, -1 when empty; nslots a power of 2 */
    int64_t nslots;
    meta_entry *meta;
    int64_t nmeta, capmeta;
};

static uint64_t
hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static char *
dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ops_host_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

ops_tensor_dict *
ops_tensor_dict_new(void)
{
    ops_tensor_dict *d = ops_host_malloc(sizeof *d);
    if (d == NULL)
        return ops_fail_null(OPS_ERR_OOM, "tensor_dict: out of memory");
    memset(d, 0, sizeof *d);
    return d;
}

void
ops_tensor_dict_free(ops_tensor_dict *d)
{
    if (d == NULL)
        return;
    for (int64_t i = 0; i < d->n; i++) {
        ops_host_free(d->items[i].name);
        ops_tensor_release(d->items[i].t);
    }
    for (int64_t i = 0; i < d->nmeta; i++) {
        ops_host_free(d->meta[i].key);
        ops_host_free(d->meta[i].value);
    }
    ops_host_free(d->items);
    ops_host_free(d->slots);
    ops_host_free(d->meta);
    ops_host_free(d);
}

int64_t
ops_tensor_dict_size(const ops_tensor_dict *d)
{
    return d ? d->n : 0;
}

static int64_t
find(const ops_tensor_dict *d, const char *name)
{
    if (d == NULL || name == NULL || d->nslots == 0)
        return -1;
    uint64_t mask = (uint64_t)d->nslots - 1;
    for (uint64_t h = hash_name(name) & mask;; h = (h + 1) & mask) {
        int64_t k = d->slots[h];
        if (k < 0)
            return -1;
        if (strcmp(d->items[k].name, name) == 0)
            return k;
    }
}

static bool
rehash(ops_tensor_dict *d, int64_t nslots)
{
    int64_t *s = ops_host_malloc_array(nslots, sizeof *s);
    if (s == NULL)
        return false;
    for (int64_t i = 0; i < nslots; i++)
        s[i] = -1;
    uint64_t mask = (uint64_t)nslots - 1;
    for (int64_t k = 0; k < d->n; k++) {
        uint64_t h = hash_name(d->items[k].name) & mask;
        while (s[h] >= 0)
            h = (h + 1) & mask;
        s[h] = k;
    }
    ops_host_free(d->slots);
    d->slots = s;
    d->nslots = nslots;
    return true;
}

const char *
ops_tensor_dict_name(const ops_tensor_dict *d, int64_t i)
{
    if (d == NULL || i < 0 || i >= d->n)
        return ops_fail_null(OPS_ERR_INDEX, "tensor_dict: index %" PRId64 " out of range for a dict of %" PRId64
                             " tensors", i, ops_tensor_dict_size(d));
    return d->items[i].name;
}

ops_tensor *
ops_tensor_dict_tensor(const ops_tensor_dict *d, int64_t i)
{
    if (d == NULL || i < 0 || i >= d->n)
        return ops_fail_null(OPS_ERR_INDEX, "tensor_dict: index %" PRId64 " out of range for a dict of %" PRId64
                             " tensors", i, ops_tensor_dict_size(d));
    return d->items[i].t;
}

ops_tensor *
ops_tensor_dict_get(const ops_tensor_dict *d, const char *name)
{
    int64_t k = find(d, name);
    if (k < 0)
        return ops_fail_null(OPS_ERR_INDEX, "tensor_dict: no tensor named '%s'", name ? name : "(null)");
    return d->items[k].t;
}

bool
ops_tensor_dict_contains(const ops_tensor_dict *d, const char *name)
{
    return find(d, name) >= 0;
}

ops_status
ops_tensor_dict_set(ops_tensor_dict *d, const char *name, const ops_tensor *t)
{
    if (d == NULL || name == NULL || t == NULL)
        return ops_fail(OPS_ERR_VALUE, "tensor_dict_set: %s is NULL", d == NULL ? "the dict" : name == NULL ? "name" : "the tensor");
    int64_t k = find(d, name);
    if (k >= 0) {
        ops_tensor *old = d->items[k].t;
        d->items[k].t = ops_tensor_retain(t);
        ops_tensor_release(old);
        return OPS_OK;
    }
    if (d->n == d->cap) {
        int64_t nc = d->cap ? d->cap * 2 : 8;
        entry *ni = ops_host_realloc(d->items, (size_t)nc * sizeof *ni);
        if (ni == NULL)
            return ops_fail(OPS_ERR_OOM, "tensor_dict_set: out of memory");
        d->items = ni;
        d->cap = nc;
    }
    /* Keep the table at most half full. */
    if ((d->n + 1) * 2 > d->nslots && !rehash(d, d->nslots ? d->nslots * 2 : 16))
        return ops_fail(OPS_ERR_OOM, "tensor_dict_set: out of memory");
    char *nm = dup_str(name);
    if (nm == NULL)
        return ops_fail(OPS_ERR_OOM, "tensor_dict_set: out of memory");
    d->items[d->n].name = nm;
    d->items[d->n].t = ops_tensor_retain(t);
    uint64_t mask = (uint64_t)d->nslots - 1;
    uint64_t h = hash_name(nm) & mask;
    while (d->slots[h] >= 0)
        h = (h + 1) & mask;
    d->slots[h] = d->n++;
    return OPS_OK;
}

int64_t
ops_tensor_dict_metadata_size(const ops_tensor_dict *d)
{
    return d ? d->nmeta : 0;
}

const char *
ops_tensor_dict_metadata_key(const ops_tensor_dict *d, int64_t i)
{
    if (d == NULL || i < 0 || i >= d->nmeta)
        return ops_fail_null(OPS_ERR_INDEX, "tensor_dict: metadata index %" PRId64 " out of range (%" PRId64 " entries)",
                             i, ops_tensor_dict_metadata_size(d));
    return d->meta[i].key;
}

const char *
ops_tensor_dict_metadata_value(const ops_tensor_dict *d, int64_t i)
{
    if (d == NULL || i < 0 || i >= d->nmeta)
        return ops_fail_null(OPS_ERR_INDEX, "tensor_dict: metadata index %" PRId64 " out of range (%" PRId64 " entries)",
                             i, ops_tensor_dict_metadata_size(d));
    return d->meta[i].value;
}

const char *
ops_tensor_dict_metadata_get(const ops_tensor_dict *d, const char *key)
{
    if (d == NULL || key == NULL)
        return NULL;
    /* Metadata maps are a handful of entries: a linear search. */
    for (int64_t i = 0; i < d->nmeta; i++)
        if (strcmp(d->meta[i].key, key) == 0)
            return d->meta[i].value;
    return NULL;
}

ops_status
ops_tensor_dict_set_metadata(ops_tensor_dict *d, const char *key, const char *value)
{
    if (d == NULL || key == NULL || value == NULL)
        return ops_fail(OPS_ERR_VALUE, "tensor_dict_set_metadata: %s is NULL",
                        d == NULL ? "the dict" : key == NULL ? "key" : "value");
    char *v = dup_str(value);
    if (v == NULL)
        return ops_fail(OPS_ERR_OOM, "tensor_dict_set_metadata: out of memory");
    for (int64_t i = 0; i < d->nmeta; i++)
        if (strcmp(d->meta[i].key, key) == 0) {
            ops_host_free(d->meta[i].value);
            d->meta[i].value = v;
            return OPS_OK;
        }
    if (d->nmeta == d->capmeta) {
        int64_t nc = d->capmeta ? d->capmeta * 2 : 4;
        meta_entry *nm = ops_host_realloc(d->meta, (size_t)nc * sizeof *nm);
        if (nm == NULL) {
            ops_host_free(v);
            return ops_fail(OPS_ERR_OOM, "tensor_dict_set_metadata: out of memory");
        }
        d->meta = nm;
        d->capmeta = nc;
    }
    char *k = dup_str(key);
    if (k == NULL) {
        ops_host_free(v);
        return ops_fail(OPS_ERR_OOM, "tensor_dict_set_metadata: out of memory");
    }
    d->meta[d->nmeta].key = k;
    d->meta[d->nmeta].value = v;
    d->nmeta++;
    return OPS_OK;
}

/* ---- helpers shared by the formats ------------------------------------------------ */

ops_tensor *
ops_serialize_contiguous_cpu(const ops_tensor *t)
{
    ops_tensor *c = NULL;
    if (ops_tensor_device(t).type != OPS_CPU)
        c = ops_to_device(t, OPS_DEVICE_CPU, ops_tensor_dtype(t), false, false, OPS_CONTIGUOUS_FORMAT);
    else
        c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    return c;
}

int64_t
ops_first_bad_bool(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] > 1)
            return (int64_t)i;
    return -1;
}

ops_status
ops_read_file(const char *what, const char *path, char **data, size_t *n)
{
    *data = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: cannot open '%s': %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return ops_fail(OPS_ERR_VALUE, "%s: '%s' is not a regular file", what, path);
    }
    size_t len = (size_t)st.st_size;
    char *buf = ops_host_malloc(len ? len : 1);
    if (buf == NULL) {
        fclose(f);
        return ops_fail(OPS_ERR_OOM, "%s: out of memory reading '%s' (%zu bytes)", what, path, len);
    }
    size_t got = fread(buf, 1, len, f);
    int err = ferror(f);
    fclose(f);
    if (got != len || err) {
        ops_host_free(buf);
        return ops_fail(OPS_ERR_VALUE, "%s: error reading '%s' (read %zu of %zu bytes)", what, path, got, len);
    }
    *data = buf;
    *n = len;
    return OPS_OK;
}

ops_status
ops_writer_open(ops_file_writer *w, const char *what, const char *path)
{
    w->f = NULL;
    w->what = what;
    w->path = path;
    size_t n = strlen(path) + 32;
    w->tmp = ops_host_malloc(n);
    if (w->tmp == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", what);
    /* pid and a counter: two saves to one path, from two processes or threads, do not
     * share a temporary file */
    static atomic_uint serial;
    snprintf(w->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    w->f = fopen(w->tmp, "wb");
    if (w->f == NULL) {
        ops_status st = ops_fail(OPS_ERR_VALUE, "%s: cannot create '%s': %s", what, w->tmp, strerror(errno));
        ops_host_free(w->tmp);
        w->tmp = NULL;
        return st;
    }
    return OPS_OK;
}

ops_status
ops_writer_write(ops_file_writer *w, const void *data, size_t n)
{
    if (n && fwrite(data, 1, n, (FILE *)w->f) != n)
        return ops_fail(OPS_ERR_VALUE, "%s: error writing '%s': %s", w->what, w->path, strerror(errno));
    return OPS_OK;
}

ops_status
ops_writer_commit(ops_file_writer *w)
{
    FILE *f = w->f;
    w->f = NULL;
    int rc = fclose(f);
    if (rc != 0) {
        int e = errno;
        ops_writer_abort(w);
        return ops_fail(OPS_ERR_VALUE, "%s: error writing '%s': %s", w->what, w->path, strerror(e));
    }
    if (rename(w->tmp, w->path) != 0) {
        int e = errno;
        ops_writer_abort(w);
        return ops_fail(OPS_ERR_VALUE, "%s: cannot rename the written file to '%s': %s", w->what, w->path,
                        strerror(e));
    }
    ops_host_free(w->tmp);
    w->tmp = NULL;
    return OPS_OK;
}

void
ops_writer_abort(ops_file_writer *w)
{
    if (w->f)
        fclose((FILE *)w->f);
    w->f = NULL;
    if (w->tmp) {
        remove(w->tmp);
        ops_host_free(w->tmp);
        w->tmp = NULL;
    }
}

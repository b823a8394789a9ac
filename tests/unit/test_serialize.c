/* Tensors in files (runtime/serialize/): safetensors, .npy and .npz round trips of every
 * dtype and of 0-d, empty and non-contiguous tensors; the safetensors layout on disk;
 * zero-copy loading (tensors are adjacent views of one mapping that outlives the dict,
 * writes are copy-on-write); every hand-made broken file of tests/unit/serialize_corpus.h
 * with its message; truncated files at every length; allocation failures at every
 * point.  NumPy and PyTorch as oracles are tests/python/test_serialize.py's. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops_base.h"
#include "ops_internal.h"
#include "ops_op_contiguous.h"
#include "ops_op_narrow.h"
#include "ops_op_transpose.h"
#include "ops_op_zero.h"
#include "ops_serialize.h"
#include "ops_tensor.h"
#include "serialize_corpus.h"

static char tmpdir[256];

static void
make_tmpdir(void)
{
    if (tmpdir[0])
        return;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ops_test_serialize_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        exit(EXIT_FAILURE);
    }
}

static const char *
tmp_path(const char *name)
{
    static char buf[512];
    make_tmpdir();
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void
write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

static unsigned char *
read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    ck_assert_uint_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* A contiguous tensor with a byte pattern that is valid for dt (bool: 0/1). */
static ops_tensor *
patterned(ops_dtype dt, int ndim, const int64_t *sizes, unsigned seed)
{
    ops_tensor *t = ops_tensor_new("test", ndim, sizes, NULL, dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    unsigned char *p = ops_tensor_data_ptr(t);
    size_t nb = (size_t)ops_tensor_numel(t) * ops_dtype_size(dt);
    for (size_t i = 0; i < nb; i++)
        p[i] = dt == OPS_BOOL ? (unsigned char)((i * 7 + seed) % 3 == 0) : (unsigned char)(i * 37 + seed * 11 + 5);
    return t;
}

/* Same dtype, sizes and element values (compared through contiguous copies). */
static void
assert_same(const ops_tensor *a, const ops_tensor *b)
{
    ck_assert_int_eq(ops_tensor_dtype(a), ops_tensor_dtype(b));
    ck_assert_int_eq(ops_tensor_ndim(a), ops_tensor_ndim(b));
    for (int64_t d = 0; d < ops_tensor_ndim(a); d++)
        ck_assert_int_eq(ops_tensor_sizes(a)[d], ops_tensor_sizes(b)[d]);
    ops_tensor *ca = ops_contiguous(a, OPS_CONTIGUOUS_FORMAT), *cb = ops_contiguous(b, OPS_CONTIGUOUS_FORMAT);
    ck_assert_ptr_nonnull(ca);
    ck_assert_ptr_nonnull(cb);
    size_t nb = (size_t)ops_tensor_numel(ca) * ops_tensor_itemsize(ca);
    if (nb)
        ck_assert_int_eq(memcmp(ops_tensor_data_ptr(ca), ops_tensor_data_ptr(cb), nb), 0);
    ops_tensor_release(ca);
    ops_tensor_release(cb);
}

static const ops_dtype all_dtypes[] = {OPS_BOOL,    OPS_UINT8,    OPS_INT8,    OPS_INT16,  OPS_INT32,
                                       OPS_INT64,   OPS_FLOAT16, OPS_BFLOAT16, OPS_FLOAT32, OPS_FLOAT64};
#define NDT ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

static const struct {
    int ndim;
    int64_t sizes[3];
} shapes[] = {{0, {0}}, {1, {0}}, {3, {3, 0, 2}}, {1, {5}}, {3, {2, 3, 4}}};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* A dict of every dtype in every shape, plus non-contiguous and offset views. */
static ops_tensor_dict *
every_dtype_dict(bool with_bf16)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    ck_assert_ptr_nonnull(d);
    for (int k = 0; k < NDT; k++) {
        if (!with_bf16 && all_dtypes[k] == OPS_BFLOAT16)
            continue;
        for (int s = 0; s < NSHAPES; s++) {
            char name[64];
            snprintf(name, sizeof name, "%s.s%d", ops_dtype_name(all_dtypes[k]), s);
            ops_tensor *t = patterned(all_dtypes[k], shapes[s].ndim, shapes[s].sizes, (unsigned)(k * 5 + s));
            ck_assert_int_eq(ops_tensor_dict_set(d, name, t), OPS_OK);
            ops_tensor_release(t);
        }
        int64_t sz[2] = {3, 4};
        ops_tensor *base = patterned(all_dtypes[k], 2, sz, 99);
        ops_tensor *tr = ops_transpose(base, 0, 1);
        ops_tensor *nar = ops_narrow(base, 1, 1, 2);
        char name[64];
        snprintf(name, sizeof name, "%s.transposed", ops_dtype_name(all_dtypes[k]));
        ck_assert_int_eq(ops_tensor_dict_set(d, name, tr), OPS_OK);
        snprintf(name, sizeof name, "%s.narrowed", ops_dtype_name(all_dtypes[k]));
        ck_assert_int_eq(ops_tensor_dict_set(d, name, nar), OPS_OK);
        ops_tensor_release(base);
        ops_tensor_release(tr);
        ops_tensor_release(nar);
    }
    return d;
}

static void
assert_dicts_equal(const ops_tensor_dict *a, const ops_tensor_dict *b)
{
    ck_assert_int_eq(ops_tensor_dict_size(a), ops_tensor_dict_size(b));
    for (int64_t i = 0; i < ops_tensor_dict_size(a); i++) {
        const char *name = ops_tensor_dict_name(a, i);
        ops_tensor *t = ops_tensor_dict_get(b, name);
        ck_assert_msg(t != NULL, "missing %s", name);
        assert_same(ops_tensor_dict_tensor(a, i), t);
    }
}

START_TEST(test_dict_basics)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    int64_t one = 1;
    ops_tensor *a = patterned(OPS_FLOAT32, 1, &one, 1), *b = patterned(OPS_INT8, 1, &one, 2);
    char name[32];
    for (int i = 0; i < 100; i++) { /* enough to rehash several times */
        snprintf(name, sizeof name, "n%d", i);
        ck_assert_int_eq(ops_tensor_dict_set(d, name, i % 2 ? a : b), OPS_OK);
    }
    ck_assert_int_eq(ops_tensor_dict_size(d), 100);
    ck_assert_str_eq(ops_tensor_dict_name(d, 57), "n57");
    ck_assert_ptr_eq(ops_tensor_dict_get(d, "n57"), a);
    ck_assert_int_eq(ops_tensor_dict_set(d, "n57", b), OPS_OK); /* replaced in place */
    ck_assert_int_eq(ops_tensor_dict_size(d), 100);
    ck_assert_ptr_eq(ops_tensor_dict_tensor(d, 57), b);
    ck_assert(!ops_tensor_dict_contains(d, "n100"));
    ck_assert_ptr_null(ops_tensor_dict_get(d, "n100"));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_INDEX);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "no tensor named 'n100'"));
    ck_assert_ptr_null(ops_tensor_dict_name(d, 100));
    ck_assert_int_eq(ops_tensor_dict_set(d, NULL, a), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_tensor_dict_set_metadata(d, "k", "v1"), OPS_OK);
    ck_assert_int_eq(ops_tensor_dict_set_metadata(d, "k", "v2"), OPS_OK);
    ck_assert_int_eq(ops_tensor_dict_metadata_size(d), 1);
    ck_assert_str_eq(ops_tensor_dict_metadata_get(d, "k"), "v2");
    ck_assert_ptr_null(ops_tensor_dict_metadata_get(d, "x"));
    ops_tensor_dict_free(d);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_safetensors_round_trip_every_dtype)
{
    ops_tensor_dict *d = every_dtype_dict(true);
    ck_assert_int_eq(ops_tensor_dict_set_metadata(d, "format", "pt"), OPS_OK);
    ck_assert_int_eq(ops_tensor_dict_set_metadata(d, "note", "a \"quoted\"\n\tline \\ \xc3\xa9"), OPS_OK);
    const char *path = tmp_path("all.safetensors");
    ck_assert_int_eq(ops_safetensors_save(path, d), OPS_OK);
    ops_tensor_dict *l = NULL;
    ck_assert_msg(ops_safetensors_load(path, &l) == OPS_OK, "%s", ops_last_error());
    assert_dicts_equal(d, l);
    ck_assert_int_eq(ops_tensor_dict_metadata_size(l), 2);
    ck_assert_str_eq(ops_tensor_dict_metadata_get(l, "note"), "a \"quoted\"\n\tline \\ \xc3\xa9");
    ck_assert_str_eq(ops_tensor_dict_metadata_get(l, "format"), "pt");
    /* Zero-copy: in file order, each tensor's bytes start where the previous one's end
     * (copies would be separate allocations). */
    for (int64_t i = 1; i < ops_tensor_dict_size(l); i++) {
        const ops_tensor *p = ops_tensor_dict_tensor(l, i - 1), *t = ops_tensor_dict_tensor(l, i);
        size_t pb = (size_t)ops_tensor_numel(p) * ops_tensor_itemsize(p);
        if (pb == 0 || ops_tensor_numel(t) == 0)
            continue;
        ck_assert_ptr_eq((char *)ops_tensor_data_ptr(p) + pb, ops_tensor_data_ptr(t));
        ck_assert_uint_eq((uintptr_t)ops_tensor_data_ptr(t) % ops_tensor_itemsize(t), 0);
    }
    /* The same bytes through the buffer loader (copies). */
    size_t n;
    unsigned char *bytes = read_bytes(path, &n);
    ops_tensor_dict *lb = NULL;
    ck_assert_int_eq(ops_safetensors_load_buffer(bytes, n, NULL, &lb), OPS_OK);
    assert_dicts_equal(d, lb);
    free(bytes);
    ops_tensor_dict_free(lb);
    ops_tensor_dict_free(l);
    ops_tensor_dict_free(d);
}
END_TEST

START_TEST(test_safetensors_layout)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    int64_t s3 = 3, s2[2] = {2, 2};
    ops_tensor *a = patterned(OPS_UINT8, 1, &s3, 1), *b = patterned(OPS_FLOAT64, 2, s2, 2),
               *c = patterned(OPS_BFLOAT16, 1, &s3, 3);
    ops_tensor_dict_set(d, "a_u8", a);
    ops_tensor_dict_set(d, "b_f64", b);
    ops_tensor_dict_set(d, "c_bf16", c);
    const char *path = tmp_path("layout.safetensors");
    ck_assert_int_eq(ops_safetensors_save(path, d), OPS_OK);
    size_t n;
    unsigned char *f = read_bytes(path, &n);
    uint64_t hl = 0;
    for (int k = 7; k >= 0; k--)
        hl = hl << 8 | f[k];
    ck_assert_uint_eq(hl % 8, 0);
    ck_assert_uint_eq(n, 8 + hl + 32 + 6 + 3);
    ck_assert_int_eq(f[8], '{');
    char *hdr = strndup((char *)f + 8, hl);
    /* largest elements first: f64 at 0, bf16 at 32, u8 at 38 */
    ck_assert_ptr_nonnull(strstr(hdr, "\"b_f64\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[0,32]}"));
    ck_assert_ptr_nonnull(strstr(hdr, "\"c_bf16\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[32,38]}"));
    ck_assert_ptr_nonnull(strstr(hdr, "\"a_u8\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[38,41]}"));
    ck_assert_int_eq(memcmp(f + 8 + hl, ops_tensor_data_ptr(b), 32), 0);
    ck_assert_int_eq(memcmp(f + 8 + hl + 32, ops_tensor_data_ptr(c), 6), 0);
    free(hdr);
    free(f);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
    ops_tensor_dict_free(d);
}
END_TEST

/* Whether path is mapped in this process (LSan does not see a leaked mmap). */
static bool
is_mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, path) != NULL;
    fclose(f);
    return found;
}

START_TEST(test_safetensors_mapping_lifetime_and_cow)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    int64_t sz[2] = {64, 64};
    ops_tensor *a = patterned(OPS_FLOAT32, 2, sz, 4);
    ops_tensor_dict_set(d, "a", a);
    char path[512];
    snprintf(path, sizeof path, "%s", tmp_path("cow.safetensors"));
    ck_assert_int_eq(ops_safetensors_save(path, d), OPS_OK);
    ops_tensor_dict *l = NULL;
    ck_assert_int_eq(ops_safetensors_load(path, &l), OPS_OK);
    ops_tensor *view = ops_narrow(ops_tensor_dict_get(l, "a"), 0, 10, 5);
    ck_assert(is_mapped(path));
    ops_tensor_dict_free(l); /* the view keeps the mapping */
    ck_assert(is_mapped(path));
    ops_tensor *expect = ops_narrow(a, 0, 10, 5);
    assert_same(view, expect);
    /* Writes land in this process's pages only: the file is unchanged. */
    ck_assert_int_eq(ops_zero_(view), OPS_OK);
    ck_assert_float_eq(((float *)ops_tensor_data_ptr(view))[3], 0.0f);
    ops_tensor_dict *again = NULL;
    ck_assert_int_eq(ops_safetensors_load(path, &again), OPS_OK);
    assert_same(ops_tensor_dict_get(again, "a"), a);
    ops_tensor_dict_free(again);
    ck_assert(is_mapped(path));
    ops_tensor_release(view); /* the last tensor of the file: unmapped */
    ck_assert(!is_mapped(path));
    /* a failed load leaves nothing mapped either */
    char bad[512];
    snprintf(bad, sizeof bad, "%s", tmp_path("cow_bad.safetensors"));
    write_bytes(bad, "\x10\0\0\0\0\0\0\0{\"a\":1}        ", 24);
    ck_assert_int_ne(ops_safetensors_load(bad, &l), OPS_OK);
    ck_assert(!is_mapped(bad));
    ops_tensor_release(expect);
    ops_tensor_release(a);
    ops_tensor_dict_free(d);
}
END_TEST

START_TEST(test_safetensors_corpus)
{
    for (size_t i = 0; i < sizeof st_corpus / sizeof st_corpus[0]; i++) {
        const st_case *c = &st_corpus[i];
        size_t n;
        unsigned char *b = st_case_bytes(c, &n);
        char fname[64];
        snprintf(fname, sizeof fname, "corpus%zu.safetensors", i);
        const char *path = tmp_path(fname);
        write_bytes(path, b, n);
        for (int via = 0; via < 2; via++) {
            ops_tensor_dict *d = (ops_tensor_dict *)1;
            ops_status st = via ? ops_safetensors_load_buffer(b, n, "buf", &d) : ops_safetensors_load(path, &d);
            if (c->expect == NULL) {
                ck_assert_msg(st == OPS_OK, "%s: %s", c->what, ops_last_error());
                ck_assert_int_ge(ops_tensor_dict_size(d), 1);
                for (int64_t k = 0; k < ops_tensor_dict_size(d); k++) {
                    const ops_tensor *t = ops_tensor_dict_tensor(d, k);
                    size_t nb = (size_t)ops_tensor_numel(t) * ops_tensor_itemsize(t);
                    for (size_t j = 0; j < nb; j++)
                        ck_assert_int_eq(((unsigned char *)ops_tensor_data_ptr(t))[j], 1);
                }
                ops_tensor_dict_free(d);
                continue;
            }
            ck_assert_msg(st != OPS_OK, "%s: loaded", c->what);
            ck_assert_ptr_null(d);
            ck_assert_msg(strstr(ops_last_error(), c->expect) != NULL, "%s: '%s' lacks '%s'", c->what,
                          ops_last_error(), c->expect);
            ck_assert_msg(strstr(ops_last_error(), via ? "'buf'" : path) != NULL, "%s: '%s' does not name the file",
                          c->what, ops_last_error());
            ck_assert_msg(strncmp(ops_last_error(), "safetensors: ", 13) == 0, "%s", ops_last_error());
        }
        free(b);
    }
}
END_TEST

START_TEST(test_safetensors_truncated)
{
    ops_tensor_dict *d = every_dtype_dict(true);
    const char *path = tmp_path("full.safetensors");
    ck_assert_int_eq(ops_safetensors_save(path, d), OPS_OK);
    size_t n;
    unsigned char *b = read_bytes(path, &n);
    const char *cut = tmp_path("cut.safetensors");
    /* Every length: each is refused with a message naming the file. */
    for (size_t len = 0; len < n; len += (len < 64 || len > n - 64) ? 1 : 7) {
        write_bytes(cut, b, len);
        ops_tensor_dict *l = NULL;
        ck_assert_msg(ops_safetensors_load(cut, &l) != OPS_OK, "length %zu of %zu loaded", len, n);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), cut));
        ck_assert_int_ne(ops_safetensors_load_buffer(b, len, NULL, &l), OPS_OK);
    }
    free(b);
    ops_tensor_dict_free(d);
}
END_TEST

START_TEST(test_safetensors_save_errors)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    int64_t one = 1;
    ops_tensor *a = patterned(OPS_FLOAT32, 1, &one, 1);
    ops_tensor_dict_set(d, "__metadata__", a);
    ck_assert_int_eq(ops_safetensors_save(tmp_path("bad.safetensors"), d), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "tensor name '__metadata__' is not allowed"));
    ck_assert_int_ne(access(tmp_path("bad.safetensors"), F_OK), 0);
    ops_tensor_dict_free(d);
    d = ops_tensor_dict_new();
    ops_tensor_dict_set(d, "a", a);
    ck_assert_int_eq(ops_safetensors_save("/nonexistent-dir/x.safetensors", d), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "/nonexistent-dir/x.safetensors"));
    ops_tensor_dict *l = NULL;
    ck_assert_int_eq(ops_safetensors_load("/nonexistent-dir/x.safetensors", &l), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "cannot open '/nonexistent-dir/x.safetensors'"));
    ck_assert_int_eq(ops_safetensors_load(tmpdir, &l), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "is not a regular file"));
    ops_tensor_release(a);
    ops_tensor_dict_free(d);
}
END_TEST

START_TEST(test_npy_round_trip_every_dtype)
{
    ops_tensor_dict *d = every_dtype_dict(false);
    for (int64_t i = 0; i < ops_tensor_dict_size(d); i++) {
        const char *path = tmp_path("t.npy");
        ck_assert_msg(ops_npy_save(path, ops_tensor_dict_tensor(d, i)) == OPS_OK, "%s", ops_last_error());
        size_t n;
        unsigned char *b = read_bytes(path, &n);
        ck_assert_uint_eq((10 + (b[8] | b[9] << 8)) % 64, 0); /* NumPy's alignment */
        free(b);
        ops_tensor *t = NULL;
        ck_assert_int_eq(ops_npy_load(path, &t), OPS_OK);
        assert_same(ops_tensor_dict_tensor(d, i), t);
        ops_tensor_release(t);
    }
    int64_t one = 2;
    ops_tensor *bf = patterned(OPS_BFLOAT16, 1, &one, 1);
    ck_assert_int_eq(ops_npy_save(tmp_path("bf.npy"), bf), OPS_ERR_DTYPE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "NumPy has no bfloat16 dtype"));
    ops_tensor_release(bf);
    ops_tensor_dict_free(d);
}
END_TEST

START_TEST(test_npy_corpus)
{
    for (size_t i = 0; i < sizeof npy_corpus / sizeof npy_corpus[0]; i++) {
        const npy_case *c = &npy_corpus[i];
        size_t n;
        unsigned char fill = c->expect && strstr(c->expect, "bool element") ? 2 : 1;
        unsigned char *b = npy_case_bytes(c, &n, fill);
        const char *path = tmp_path("corpus.npy");
        write_bytes(path, b, n);
        ops_tensor *t = NULL;
        ops_status st = ops_npy_load(path, &t);
        if (c->expect) {
            ck_assert_msg(st != OPS_OK, "%s loaded", c->what);
            ck_assert_msg(strstr(ops_last_error(), c->expect) != NULL, "%s: '%s' lacks '%s'", c->what, ops_last_error(),
                          c->expect);
            ck_assert_ptr_nonnull(strstr(ops_last_error(), path));
            ck_assert_int_ne(ops_npy_load_buffer(b, n, NULL, &t), OPS_OK);
        } else {
            ck_assert_msg(st == OPS_OK, "%s: %s", c->what, ops_last_error());
            ops_tensor_release(t);
        }
        free(b);
    }
    /* Fortran order: column-major strides over the file's bytes. */
    const char *fort = "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }";
    npy_case fc = {"f", fort, 12, NULL};
    size_t n;
    unsigned char *b = npy_case_bytes(&fc, &n, 0);
    int16_t vals[6] = {0, 1, 2, 3, 4, 5}; /* memory order: (0,0) (1,0) (0,1) (1,1) ... */
    memcpy(b + n - 12, vals, 12);
    ops_tensor *t = NULL;
    ck_assert_int_eq(ops_npy_load_buffer(b, n, NULL, &t), OPS_OK);
    ck_assert_int_eq(ops_tensor_strides(t)[0], 1);
    ck_assert_int_eq(ops_tensor_strides(t)[1], 2);
    const int16_t *p = ops_tensor_data_ptr(t);
    ck_assert_int_eq(p[1 * 1 + 2 * 2], 5); /* element [1, 2] */
    ops_tensor_release(t);
    free(b);
    /* Big-endian input is byte-swapped. */
    npy_case be = {"be", "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", 8, NULL};
    b = npy_case_bytes(&be, &n, 0);
    memcpy(b + n - 8, "\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
    ck_assert_int_eq(ops_npy_load_buffer(b, n, NULL, &t), OPS_OK);
    ck_assert_int_eq(((int32_t *)ops_tensor_data_ptr(t))[0], 258);
    ck_assert_int_eq(((int32_t *)ops_tensor_data_ptr(t))[1], -2);
    ops_tensor_release(t);
    free(b);
    /* Not a .npy at all; a version NumPy does not write. */
    ck_assert_int_ne(ops_npy_load_buffer("PK\x03\x04 zip", 8, "z", &t), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "'z' is not a .npy file"));
    ck_assert_int_ne(ops_npy_load_buffer("\x93NUMPY\x07\x00\x00\x00", 10, "v", &t), OPS_OK);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "unsupported .npy format version 7.0"));
}
END_TEST

START_TEST(test_npz_round_trip)
{
    ops_tensor_dict *d = every_dtype_dict(false);
    for (int compress = 0; compress < 2; compress++) {
        const char *path = tmp_path(compress ? "c.npz" : "s.npz");
        ck_assert_msg(ops_npz_save(path, d, compress) == OPS_OK, "%s", ops_last_error());
        ops_tensor_dict *l = NULL;
        ck_assert_msg(ops_npz_load(path, &l) == OPS_OK, "%s", ops_last_error());
        assert_dicts_equal(d, l);
        for (int64_t i = 0; i < ops_tensor_dict_size(d); i++) /* the zip's order is the dict's */
            ck_assert_str_eq(ops_tensor_dict_name(d, i), ops_tensor_dict_name(l, i));
        ops_tensor_dict_free(l);
    }
    ops_tensor_dict *e = ops_tensor_dict_new(), *l = NULL;
    ck_assert_int_eq(ops_npz_save(tmp_path("e.npz"), e, false), OPS_OK);
    ck_assert_msg(ops_npz_load(tmp_path("e.npz"), &l) == OPS_OK, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_dict_size(l), 0);
    ops_tensor_dict_free(l);
    ops_tensor_dict_free(e);
    /* Not a zip; a zip member that is not an array; a corrupt member. */
    write_bytes(tmp_path("x.npz"), "hello", 5);
    ck_assert_int_eq(ops_npz_load(tmp_path("x.npz"), &l), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "cannot open as a zip archive"));
    const char *sp = tmp_path("s.npz");
    size_t n;
    unsigned char *b = read_bytes(sp, &n);
    /* flip a data byte of the first member (after its local header and .npy header) */
    b[30 + strlen(ops_tensor_dict_name(d, 0)) + 4 + 128] ^= 0x55;
    write_bytes(tmp_path("bad.npz"), b, n);
    ck_assert_int_eq(ops_npz_load(tmp_path("bad.npz"), &l), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "bad.npz/"));
    free(b);
    ops_tensor_dict_free(d);
}
END_TEST

/* Every allocation of a load and a save may fail: a clean OPS_ERR_OOM each time, no
 * leak (the sanitizer tree), and success once the countdown passes them all. */
START_TEST(test_allocation_failures)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    int64_t sz[2] = {3, 5};
    ops_tensor *a = patterned(OPS_FLOAT32, 2, sz, 1), *b = patterned(OPS_BOOL, 2, sz, 2);
    ops_tensor_dict_set(d, "a", a);
    ops_tensor_dict_set(d, "b", b);
    ops_tensor_dict_set_metadata(d, "k", "v");
    char path[512], npz[512];
    snprintf(path, sizeof path, "%s", tmp_path("oom.safetensors"));
    snprintf(npz, sizeof npz, "%s", tmp_path("oom.npz"));
    ck_assert_int_eq(ops_safetensors_save(path, d), OPS_OK);
    ck_assert_int_eq(ops_npz_save(npz, d, true), OPS_OK);
    for (int which = 0; which < 4; which++) {
        bool done = false;
        for (int64_t nth = 1; !done && nth < 200; nth++) {
            ops_tensor_dict *l = NULL;
            ops_alloc_fail_nth(nth);
            ops_status st = which == 0   ? ops_safetensors_load(path, &l)
                            : which == 1 ? ops_safetensors_save(tmp_path("oom2.safetensors"), d)
                            : which == 2 ? ops_npz_load(npz, &l)
                                         : ops_safetensors_load_buffer("\x02\0\0\0\0\0\0\0{}", 10, NULL, &l);
            ops_alloc_fail_nth(0);
            if (st == OPS_OK) {
                done = true;
                if (which != 1 && which != 3)
                    assert_dicts_equal(d, l);
            } else {
                ck_assert_msg(st == OPS_ERR_OOM, "%d/%lld: %s", which, (long long)nth, ops_last_error());
            }
            ops_tensor_dict_free(l);
        }
        ck_assert(done);
    }
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_dict_free(d);
}
END_TEST

static Suite *
serialize_suite(void)
{
    Suite *s = suite_create("serialize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_dict_basics);
    tcase_add_test(tc, test_safetensors_round_trip_every_dtype);
    tcase_add_test(tc, test_safetensors_layout);
    tcase_add_test(tc, test_safetensors_mapping_lifetime_and_cow);
    tcase_add_test(tc, test_safetensors_corpus);
    tcase_add_test(tc, test_safetensors_truncated);
    tcase_add_test(tc, test_safetensors_save_errors);
    tcase_add_test(tc, test_npy_round_trip_every_dtype);
    tcase_add_test(tc, test_npy_corpus);
    tcase_add_test(tc, test_npz_round_trip);
    tcase_add_test(tc, test_allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    make_tmpdir(); /* before the tests fork, so that one directory holds every file */
    SRunner *sr = srunner_create(serialize_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* the files of every case live in one directory of this run */
    if (tmpdir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmpdir);
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

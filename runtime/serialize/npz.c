/* NumPy's .npz: a zip archive of .npy members (np.savez stores them, np.savez_compressed
 * deflates them).  The zip itself is libzip's business (Debian's libzip-dev: central
 * directory, zip64, stored and deflated members, CRC checks); each member goes through
 * the same .npy reader as a file, bounded by the member's uncompressed size. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <zip.h>

#include "npy_impl.h"
#include "ops_internal.h"
#include "ops_serialize.h"

#define OP "npz"

static int64_t
zip_src_read(void *ctx, void *dst, size_t n)
{
    zip_int64_t k = zip_fread((zip_file_t *)ctx, dst, n);
    return k < 0 ? -1 : (int64_t)k;
}

static ops_status
zip_fail(ops_status st, const char *path, const char *what, zip_error_t *ze)
{
    return ops_fail(st, OP ": '%s': %s: %s", path, what, zip_error_strerror(ze));
}

ops_status
ops_npz_load(const char *path, ops_tensor_dict **out)
{
    if (out == NULL || path == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": %s is NULL", out == NULL ? "out" : "path");
    *out = NULL;
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY, &zerr);
    if (za == NULL) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        ops_status st = zip_fail(OPS_ERR_VALUE, path, "cannot open as a zip archive", &ze);
        zip_error_fini(&ze);
        return st;
    }
    ops_status st = OPS_OK;
    ops_tensor_dict *d = ops_tensor_dict_new();
    if (d == NULL) {
        zip_discard(za);
        return OPS_ERR_OOM;
    }
    zip_int64_t n = zip_get_num_entries(za, 0);
    char *key = NULL;
    for (zip_int64_t i = 0; i < n && st == OPS_OK; i++) {
        zip_stat_t zs;
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &zs) != 0) {
            st = zip_fail(OPS_ERR_VALUE, path, "cannot read a member's entry", zip_get_error(za));
            break;
        }
        const char *name = (zs.valid & ZIP_STAT_NAME) ? zs.name : "";
        size_t len = strlen(name);
        if (len > 0 && name[len - 1] == '/')
            continue; /* a directory entry */
        if (len <= 4 || strcmp(name + len - 4, ".npy") != 0) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': member '%s' is not a .npy array", path, name);
            break;
        }
        if (!(zs.valid & ZIP_STAT_SIZE)) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': member '%s' has no size", path, name);
            break;
        }
        ops_host_free(key);
        key = ops_host_malloc(len - 3);
        if (key == NULL) {
            st = ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory", path);
            break;
        }
        memcpy(key, name, len - 4);
        key[len - 4] = '\0';
        if (ops_tensor_dict_contains(d, key)) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': member '%s' appears twice", path, name);
            break;
        }
        zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
        if (zf == NULL) {
            char what[300];
            snprintf(what, sizeof what, "cannot read member '%s'", name);
            st = zip_fail(OPS_ERR_VALUE, path, what, zip_get_error(za));
            break;
        }
        /* Messages name the member inside the archive: "x.npz/w.npy". */
        size_t qn = strlen(path) + len + 2;
        char *qual = ops_host_malloc(qn);
        if (qual == NULL) {
            zip_fclose(zf);
            st = ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory", path);
            break;
        }
        snprintf(qual, qn, "%s/%s", path, name);
        npy_source src = {zip_src_read, zf, (uint64_t)zs.size};
        ops_tensor *t = NULL;
        st = ops_npy_read(OP, qual, &src, &t);
        if (st == OPS_OK) {
            /* Reading on to the end makes libzip check the member's CRC. */
            char extra[64];
            zip_int64_t k;
            while ((k = zip_fread(zf, extra, sizeof extra)) > 0) {
            }
            if (k < 0)
                st = zip_fail(OPS_ERR_VALUE, qual, "corrupt member", zip_file_get_error(zf));
        }
        zip_fclose(zf);
        ops_host_free(qual);
        if (st == OPS_OK)
            st = ops_tensor_dict_set(d, key, t);
        ops_tensor_release(t);
    }
    ops_host_free(key);
    zip_discard(za);
    if (st != OPS_OK) {
        ops_tensor_dict_free(d);
        return st;
    }
    *out = d;
    return OPS_OK;
}

ops_status
ops_npz_save(const char *path, const ops_tensor_dict *d, bool compress)
{
    if (path == NULL || d == NULL)
        return ops_fail(OPS_ERR_VALUE, OP ": %s is NULL", path == NULL ? "path" : "the dict");
    if (ops_tensor_dict_size(d) == 0) {
        /* libzip removes an archive that ends up empty; np.savez() writes one: just
         * the end-of-central-directory record. */
        static const unsigned char eocd[22] = {'P', 'K', 5, 6};
        ops_file_writer w;
        ops_status st = ops_writer_open(&w, OP, path);
        if (st == OPS_OK && (st = ops_writer_write(&w, eocd, sizeof eocd)) == OPS_OK)
            return ops_writer_commit(&w);
        if (st != OPS_OK && w.tmp != NULL)
            ops_writer_abort(&w);
        return st;
    }
    int zerr = 0;
    /* libzip writes the archive to a temporary file and renames it at zip_close, so a
     * failure leaves no partial file. */
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (za == NULL) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        ops_status st = zip_fail(OPS_ERR_VALUE, path, "cannot create the archive", &ze);
        zip_error_fini(&ze);
        return st;
    }
    ops_status st = OPS_OK;
    for (int64_t i = 0; i < ops_tensor_dict_size(d) && st == OPS_OK; i++) {
        const char *name = ops_tensor_dict_name(d, i);
        if (name[0] == '\0' || !ops_utf8_valid(name, strlen(name))) {
            st = ops_fail(OPS_ERR_VALUE, OP ": '%s': member name '%s' is not allowed (non-empty UTF-8)", path, name);
            break;
        }
        char hdr[OPS_NPY_HEADER_BUF];
        size_t hlen;
        ops_tensor *c;
        if ((st = ops_npy_prepare(OP, name, ops_tensor_dict_tensor(d, i), hdr, &hlen, &c)) != OPS_OK)
            break;
        size_t nb = (size_t)ops_tensor_numel(c) * ops_tensor_itemsize(c);
        /* libzip reads the member's bytes at zip_close: it owns (and frees) this copy. */
        unsigned char *buf = ops_host_malloc(hlen + nb);
        if (buf == NULL) {
            ops_tensor_release(c);
            st = ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory for member '%s' (%zu bytes)", path, name, hlen + nb);
            break;
        }
        memcpy(buf, hdr, hlen);
        if (nb)
            memcpy(buf + hlen, ops_tensor_data_ptr(c), nb);
        ops_tensor_release(c);
        zip_source_t *zs = zip_source_buffer(za, buf, hlen + nb, 1);
        if (zs == NULL) {
            ops_host_free(buf);
            st = zip_fail(OPS_ERR_OOM, path, "cannot add a member", zip_get_error(za));
            break;
        }
        size_t mn = strlen(name) + 5;
        char *member = ops_host_malloc(mn);
        if (member == NULL) {
            zip_source_free(zs);
            st = ops_fail(OPS_ERR_OOM, OP ": '%s': out of memory", path);
            break;
        }
        snprintf(member, mn, "%s.npy", name);
        zip_int64_t idx = zip_file_add(za, member, zs, ZIP_FL_ENC_UTF_8);
        ops_host_free(member);
        if (idx < 0) {
            zip_source_free(zs);
            st = zip_fail(OPS_ERR_VALUE, path, "cannot add a member", zip_get_error(za));
            break;
        }
        if (zip_set_file_compression(za, (zip_uint64_t)idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0) {
            st = zip_fail(OPS_ERR_VALUE, path, "cannot set the compression", zip_get_error(za));
            break;
        }
    }
    if (st != OPS_OK) {
        zip_discard(za);
        return st;
    }
    if (zip_close(za) != 0) {
        st = zip_fail(OPS_ERR_VALUE, path, "cannot write the archive", zip_get_error(za));
        zip_discard(za);
    }
    return st;
}

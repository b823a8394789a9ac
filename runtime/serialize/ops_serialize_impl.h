/* Internals of runtime/serialize/: the strict JSON parser the safetensors header goes
 * through, and helpers shared by the file formats. */
#ifndef OPS_SERIALIZE_IMPL_H
#define OPS_SERIALIZE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_tensor.h"

/* ---- JSON (json.c) ---------------------------------------------------------------
 * RFC 8259, strictly: no comments, no trailing commas, no NaN/Infinity, no control
 * characters in strings, only valid UTF-8 (no overlong forms, no surrogates), \u escapes
 * paired when they are surrogates.  Nesting deeper than OPS_JSON_MAX_DEPTH is refused
 * (the header of a tensor file needs 3). */
#define OPS_JSON_MAX_DEPTH 64

typedef enum ops_json_kind {
    OPS_JSON_NULL,
    OPS_JSON_BOOL,
    OPS_JSON_NUMBER,
    OPS_JSON_STRING,
    OPS_JSON_ARRAY,
    OPS_JSON_OBJECT,
} ops_json_kind;

typedef struct ops_json_member ops_json_member;

typedef struct ops_json {
    ops_json_kind kind;
    size_t pos; /* byte offset of the value in the text, for messages */
    union {
        bool boolean;
        struct {
            bool is_int; /* an integer literal (no fraction or exponent) that fits int64 */
            int64_t i;
        } num;
        struct {
            char *s; /* NUL-terminated, decoded UTF-8; may hold NULs (\u0000): see len */
            size_t len;
        } str;
        struct {
            struct ops_json *items;
            size_t n;
        } arr;
        struct {
            ops_json_member *members; /* in text order; duplicates kept (callers refuse them) */
            size_t n;
        } obj;
    } u;
} ops_json;

struct ops_json_member {
    char *key;
    size_t keylen;
    size_t pos; /* byte offset of the key */
    ops_json value;
};

/* Parse text[0..n) as one JSON value (surrounding whitespace allowed).  On success
 * fills *out (free with ops_json_free) and returns true.  On failure returns false with
 * why (at most whylen bytes) saying where and what: "at byte 17: expected ':' after an
 * object key"; out-of-memory says "out of memory" and sets *oom. */
bool ops_json_parse(const char *text, size_t n, ops_json *out, char *why, size_t whylen, bool *oom);
void ops_json_free(ops_json *v);
const char *ops_json_kind_name(ops_json_kind k);

/* ---- shared helpers (tensor_dict.c) ------------------------------------------------ */

/* A contiguous CPU tensor with t's values (t itself, retained, when it is one already);
 * NULL with the error set.  What every writer saves. */
ops_tensor *ops_serialize_contiguous_cpu(const ops_tensor *t);
/* True when s[0..n) is valid UTF-8 without NUL. */
bool ops_utf8_valid(const char *s, size_t n);
/* Reads a whole file into a malloc'd buffer (ops_host_free).  OPS_ERR_VALUE / OOM with a
 * message naming what and path. */
ops_status ops_read_file(const char *what, const char *path, char **data, size_t *n);
/* Writing a file through a temporary name beside it ("<path>.tmp.<pid>.<n>") that is renamed
 * over path at commit, so a failure leaves no partial file.  Errors name what and path. */
typedef struct ops_file_writer {
    void *f; /* FILE * */
    char *tmp;
    const char *what;
    const char *path;
} ops_file_writer;
ops_status ops_writer_open(ops_file_writer *w, const char *what, const char *path);
ops_status ops_writer_write(ops_file_writer *w, const void *data, size_t n);
/* Flushes, closes and renames; on failure the temporary file is removed. */
ops_status ops_writer_commit(ops_file_writer *w);
/* Closes and removes the temporary file (after a failure); safe after commit. */
void ops_writer_abort(ops_file_writer *w);
/* A bool tensor's bytes must be 0 or 1 (anything else is undefined behaviour to the
 * kernels); returns the index of the first other byte, or -1. */
int64_t ops_first_bad_bool(const unsigned char *p, size_t n);

#endif /* OPS_SERIALIZE_IMPL_H */

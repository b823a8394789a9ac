/* Hand-made broken (and a few valid) safetensors and .npy files: one per error path of
 * runtime/serialize/, each with a piece of the message it must give.  test_serialize
 * checks every one; the fuzz target (tests/fuzz/fuzz_serialize.c) starts from them.
 *
 * A safetensors case is its JSON header and the length of the data buffer after it (the
 * 8-byte length is prefixed by st_case_bytes, with hdr_len overriding it when nonzero);
 * data bytes are 0x01 (valid for every dtype, bool included) unless data_byte says. */
#ifndef SERIALIZE_CORPUS_H
#define SERIALIZE_CORPUS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_case {
    const char *what;
    const char *header;
    size_t data_len;
    uint64_t hdr_len;      /* 0: strlen(header) */
    unsigned char data_byte; /* 0: 0x01 */
    const char *expect;    /* NULL: the file is valid */
} st_case;

static const st_case st_corpus[] = {
    {"valid", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, 0, 0, NULL},
    {"valid metadata and empty tensor",
     "{\"__metadata__\":{\"format\":\"pt\"},\"e\":{\"dtype\":\"I64\",\"shape\":[0,3],\"data_offsets\":[2,2]},"
     "\"b\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, 0, 0, NULL},
    {"valid misaligned (copied)", "{\"x\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, 0, 0, NULL},
    {"header length past the end", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, 4096, 0,
     "runs past the end of the file"},
    {"header length over the limit", "{}", 0, (uint64_t)1 << 40, 0, "over the limit"},
    {"header length too short", "{}", 0, 1, 0, "too short"},
    {"not JSON", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", 4, 0, 0,
     "not valid JSON: at byte 54: expected a string key"},
    {"not an object", "[1,2]", 0, 0, 0, "does not start with '{'"},
    {"bad escape", "{\"a\\q\":{}}", 0, 0, 0, "invalid escape"},
    {"invalid UTF-8", "{\"\xff\":{}}", 0, 0, 0, "invalid UTF-8"},
    {"deep nesting",
     "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
     0, 0, 0, "nesting deeper than"},
    {"offsets outside", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, 0, 0,
     "tensor 'w': data_offsets [0, 16] lie outside the data buffer of 8 bytes"},
    {"overlap",
     "{\"p\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"q\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
     12, 0, 0, "tensors 'p' [0, 8] and 'q' [4, 12] overlap"},
    {"hole",
     "{\"p\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"q\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
     12, 0, 0, "bytes [4, 8) of the data buffer belong to no tensor (a hole before 'q')"},
    {"trailing bytes", "{\"p\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 9, 0, 0,
     "5 bytes after the last tensor's data"},
    {"size mismatch", "{\"m\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", 20, 0, 0,
     "tensor 'm': data_offsets [0, 20] hold 20 bytes but shape [2, 3] of F32 needs 24"},
    {"unknown dtype", "{\"u\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 0, 0,
     "tensor 'u': unknown dtype 'F33'"},
    {"foreign dtype", "{\"u\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, 0, 0,
     "tensor 'u': dtype U16 is not supported by libops"},
    {"duplicate name",
     "{\"d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},\"d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
     2, 0, 0, "tensor 'd' appears twice"},
    {"missing key", "{\"k\":{\"dtype\":\"U8\",\"shape\":[1]}}", 0, 0, 0, "tensor 'k': missing 'data_offsets'"},
    {"unknown key", "{\"k\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1, 0, 0,
     "tensor 'k': unknown key 'x'"},
    {"negative dim", "{\"n\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0, 0, 0,
     "tensor 'n': shape[0] must be a non-negative integer"},
    {"fractional offset", "{\"n\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1.0]}}", 1, 0, 0,
     "data_offsets[1] must be a non-negative integer"},
    {"shape overflow",
     "{\"o\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8, 0, 0,
     "more bytes than fit in 64 bits"},
    {"too many dims", "{\"o\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1,
     0, 0, "17 dimensions"},
    {"offsets reversed", "{\"r\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[3,2]}}", 3, 0, 0,
     "end before they begin"},
    {"bad bool", "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]}}", 3, 0, 7,
     "tensor 'b': bool element 0 is 7"},
    {"metadata not strings", "{\"__metadata__\":{\"n\":1}}", 0, 0, 0, "__metadata__ value of 'n' must be a string"},
    {"metadata twice", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, 0, 0, "__metadata__ appears twice"},
    {"NUL in name", "{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0, 0, 0,
     "contains a NUL character"},
    {"lone surrogate", "{\"\\ud800\":{}}", 0, 0, 0, "not followed by a low one"},
};

/* The file bytes of a case (malloc'd); *n its length. */
static unsigned char *
st_case_bytes(const st_case *c, size_t *n)
{
    size_t h = strlen(c->header);
    uint64_t hl = c->hdr_len ? c->hdr_len : h;
    *n = 8 + h + c->data_len;
    unsigned char *b = malloc(*n ? *n : 1);
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)(hl >> (8 * k));
    memcpy(b + 8, c->header, h);
    memset(b + 8 + h, c->data_byte ? c->data_byte : 1, c->data_len);
    return b;
}

/* .npy cases: the whole file given as the dict text after a v1.0 prelude (built by
 * npy_case_bytes) and data_len bytes of data. */
typedef struct npy_case {
    const char *what;
    const char *dict;
    size_t data_len;
    const char *expect;
} npy_case;

static const npy_case npy_corpus[] = {
    {"valid", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, NULL},
    {"valid fortran", "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", 12, NULL},
    {"valid big-endian", "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", 12, NULL},
    {"valid 0-d", "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1, NULL},
    {"truncated data", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", 16,
     "the data is truncated: shape [4] of <f8 needs 32 bytes, the file holds 16"},
    {"unsupported dtype", "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", 2,
     "dtype '<u2' is not supported by libops"},
    {"complex", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, "complex numbers"},
    {"structured", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, "structured dtypes"},
    {"missing key", "{'descr': '<f4', 'shape': (1,), }", 4, "the header lacks 'fortran_order'"},
    {"extra key", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4, "unexpected key 'x'"},
    {"duplicate key", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4,
     "key 'descr' appears twice"},
    {"bad shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 4, "non-negative integers"},
    {"huge shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 4,
     "the data is truncated"},
    {"bad bool", "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2, "bool element 0"},
    {"empty but huge", "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 4611686018427387904, 4611686018427387904), }",
     0, "is too large"},
};

static unsigned char *
npy_case_bytes(const npy_case *c, size_t *n, unsigned char fill)
{
    size_t d = strlen(c->dict);
    size_t hl = d + 1;
    *n = 10 + hl + c->data_len;
    unsigned char *b = malloc(*n);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)(hl & 0xff);
    b[9] = (unsigned char)(hl >> 8);
    memcpy(b + 10, c->dict, d);
    b[10 + d] = '\n';
    memset(b + 10 + hl, fill, c->data_len);
    return b;
}

#endif /* SERIALIZE_CORPUS_H */

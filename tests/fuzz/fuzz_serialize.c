/* Fuzz target over the file parsers of runtime/serialize/: the safetensors header (length,
 * JSON, entries, offsets) and the .npy header.  Each input goes through both
 * ops_safetensors_load_buffer and ops_npy_load_buffer, and every 64th one through the
 * mmap path (ops_safetensors_load of a file) too.
 *
 * Inputs: mutations of the hand-made corpus (tests/unit/serialize_corpus.h) and of a
 * valid multi-tensor file, drawn from hash(seed, i) as fuzz_registry does
 * (OPS_FUZZ_SEED, OPS_FUZZ_ITERS, 0 = until stopped, OPS_FUZZ_START); `make check` runs a
 * fixed count in each tree, the ASan+UBSan one included.  With clang the same checks
 * run as a libFuzzer target (-DOPS_FUZZ_LIBFUZZER).
 *
 * Checked: no crash or sanitizer report; a failure sets a message that starts with the
 * format's name; a success returns tensors whose bytes fit in the input (a hostile header
 * cannot make the loader allocate more than the file holds). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_base.h"
#include "ops_serialize.h"
#include "ops_tensor.h"
#include "serialize_corpus.h"

static void
die(const char *what, uint64_t iter, const unsigned char *b, size_t n)
{
    fprintf(stderr, "fuzz_serialize: iteration %" PRIu64 ": %s (%zu-byte input; last error: %s)\n", iter, what, n,
            ops_last_error());
    fprintf(stderr, "input:");
    for (size_t i = 0; i < n && i < 512; i++)
        fprintf(stderr, " %02x", b[i]);
    fprintf(stderr, "\n");
    abort();
}

static void
check_dict(ops_status st, ops_tensor_dict *d, const char *prefix, const unsigned char *b, size_t n, uint64_t iter)
{
    if (st != OPS_OK) {
        if (d != NULL)
            die("a failed load returned a dict", iter, b, n);
        if (strncmp(ops_last_error(), prefix, strlen(prefix)) != 0)
            die("the message does not name the format", iter, b, n);
        return;
    }
    uint64_t total = 0;
    for (int64_t i = 0; i < ops_tensor_dict_size(d); i++) {
        const ops_tensor *t = ops_tensor_dict_tensor(d, i);
        total += (uint64_t)ops_tensor_numel(t) * ops_tensor_itemsize(t);
        /* touch every byte: a view past the input would be a sanitizer report */
        const unsigned char *p = ops_tensor_data_ptr(t);
        unsigned x = 0;
        for (int64_t k = 0; k < ops_tensor_numel(t) * (int64_t)ops_tensor_itemsize(t); k++)
            x += p[k];
        (void)x;
    }
    if (total > n)
        die("tensors hold more bytes than the input", iter, b, n);
    ops_tensor_dict_free(d);
}

static char file_path[64];
/* How many inputs each parser accepted: a fuzzer whose mutations never get past the
 * first check would be testing nothing (printed at the end). */
static uint64_t st_ok, npy_ok;

static void
run_one(const unsigned char *b, size_t n, uint64_t iter, bool via_file)
{
    ops_tensor_dict *d = NULL;
    ops_status st = ops_safetensors_load_buffer(b, n, NULL, &d);
    st_ok += st == OPS_OK;
    check_dict(st, d, "safetensors: ", b, n, iter);
    ops_tensor *t = NULL;
    st = ops_npy_load_buffer(b, n, NULL, &t);
    if (st != OPS_OK) {
        if (t != NULL || strncmp(ops_last_error(), "npy: ", 5) != 0)
            die("npy failure without its message", iter, b, n);
    } else {
        npy_ok++;
        if ((uint64_t)ops_tensor_numel(t) * ops_tensor_itemsize(t) > n)
            die("npy tensor larger than the input", iter, b, n);
        ops_tensor_release(t);
    }
    if (via_file) {
        FILE *f = fopen(file_path, "wb");
        if (f == NULL || fwrite(b, 1, n, f) != n || fclose(f) != 0)
            die("cannot write the scratch file", iter, b, n);
        d = NULL;
        st = ops_safetensors_load(file_path, &d);
        check_dict(st, d, "safetensors: ", b, n, iter);
    }
}

#ifdef OPS_FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!file_path[0])
        snprintf(file_path, sizeof file_path, "/tmp/ops_fuzz_serialize_%ld", (long)getpid());
    run_one(data, size, 0, (size & 63) == 0);
    return 0;
}
#else

static uint64_t
mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t
next(rng *r)
{
    r->s = mix(r->s);
    return r->s;
}

static size_t
below(rng *r, size_t n)
{
    return n ? (size_t)(next(r) % n) : 0;
}

typedef struct seed_input {
    unsigned char *b;
    size_t n;
    int kind;       /* 0 safetensors, 1 .npy */
    size_t hdr_end; /* where the header ends (the length field's value + its offset) */
} seed_input;

/* A valid file of several dtypes and metadata, through the saver. */
static seed_input
saved_file(void)
{
    ops_tensor_dict *d = ops_tensor_dict_new();
    int64_t sz[2] = {2, 3};
    const ops_dtype dts[] = {OPS_FLOAT32, OPS_BFLOAT16, OPS_BOOL, OPS_INT64, OPS_FLOAT16};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        ops_tensor *t = ops_tensor_from_data("\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1\0\1",
                                             (ops_int_list){sz, 2}, dts[k]);
        char name[16];
        snprintf(name, sizeof name, "t%zu", k);
        ops_tensor_dict_set(d, name, t);
        ops_tensor_release(t);
    }
    ops_tensor_dict_set_metadata(d, "format", "pt");
    if (ops_safetensors_save(file_path, d) != OPS_OK) {
        fprintf(stderr, "fuzz_serialize: %s\n", ops_last_error());
        exit(1);
    }
    ops_tensor_dict_free(d);
    FILE *f = fopen(file_path, "rb");
    seed_input s = {malloc(4096), 0, 0, 0};
    s.n = fread(s.b, 1, 4096, f);
    fclose(f);
    uint64_t hl = 0;
    for (int k = 7; k >= 0; k--)
        hl = hl << 8 | s.b[k];
    s.hdr_end = 8 + (size_t)hl;
    return s;
}

static const char interesting[] = "{}[]\",:0123456789-.eE\\u \n";

/* Mutations move *hdr (where the header ends) with the bytes they insert or delete
 * before it, so that the caller can keep the length field true to the mutated header:
 * most inputs then reach the header's contents instead of stopping at its framing. */
static size_t
mutate(rng *r, unsigned char *b, size_t n, size_t cap, size_t *hdr)
{
    int rounds = below(r, 2) ? 1 : 1 + (int)below(r, 6);
    for (int k = 0; k < rounds; k++) {
        size_t at = below(r, n ? n : 1);
        switch (below(r, 9)) {
        case 0: /* flip a bit */
            if (n)
                b[at] ^= (unsigned char)(1u << below(r, 8));
            break;
        case 1: /* a random byte */
            if (n)
                b[at] = (unsigned char)next(r);
            break;
        case 2: /* a syntax character */
            if (n)
                b[at] = (unsigned char)interesting[below(r, sizeof interesting - 1)];
            break;
        case 3: /* insert a byte */
            if (n < cap) {
                memmove(b + at + 1, b + at, n - at);
                b[at] = (unsigned char)interesting[below(r, sizeof interesting - 1)];
                n++;
                *hdr += at < *hdr;
            }
            break;
        case 4: { /* delete a run */
            size_t len = 1 + below(r, 8);
            if (at + len <= n) {
                memmove(b + at, b + at + len, n - at - len);
                n -= len;
                if (at < *hdr)
                    *hdr -= (at + len <= *hdr ? len : *hdr - at);
            }
            break;
        }
        case 5: /* truncate */
            n = below(r, n + 1);
            *hdr = *hdr < n ? *hdr : n;
            break;
        case 6: { /* the 8-byte header length: near the truth, or anything */
            if (n >= 8) {
                uint64_t v = 0;
                for (int j = 7; j >= 0; j--)
                    v = v << 8 | b[j];
                uint64_t nv = below(r, 2) ? v + (uint64_t)(int64_t)((int)below(r, 17) - 8) : next(r) >> below(r, 64);
                for (int j = 0; j < 8; j++)
                    b[j] = (unsigned char)(nv >> (8 * j));
            }
            break;
        }
        case 7: { /* a digit run replaced by a big number */
            static const char *nums[] = {"18446744073709551615", "9223372036854775807", "9223372036854775808",
                                         "4294967296", "-1", "0", "1e3", "65536"};
            const char *s = nums[below(r, sizeof nums / sizeof nums[0])];
            size_t len = strlen(s);
            if (n + len <= cap && n) {
                memmove(b + at + len, b + at + 1, n - at - 1);
                memcpy(b + at, s, len);
                n += len - 1;
                *hdr += at < *hdr ? len - 1 : 0;
            }
            break;
        }
        default: { /* duplicate a run (repeats keys and entries) */
            size_t len = 1 + below(r, 40);
            if (at + len <= n && n + len <= cap) {
                memmove(b + at + 2 * len, b + at + len, n - at - len);
                memcpy(b + at + len, b + at, len);
                n += len;
                *hdr += at + len <= *hdr ? len : 0;
            }
            break;
        }
        }
    }
    return n;
}

int
main(void)
{
    const char *e;
    uint64_t seed = (e = getenv("OPS_FUZZ_SEED")) ? strtoull(e, NULL, 10) : 1;
    uint64_t iters = (e = getenv("OPS_FUZZ_ITERS")) ? strtoull(e, NULL, 10) : 20000;
    uint64_t start = (e = getenv("OPS_FUZZ_START")) ? strtoull(e, NULL, 10) : 0;
    snprintf(file_path, sizeof file_path, "/tmp/ops_fuzz_serialize_%ld", (long)getpid());

    size_t nst = sizeof st_corpus / sizeof st_corpus[0], nnp = sizeof npy_corpus / sizeof npy_corpus[0];
    size_t nseeds = nst + nnp + 1;
    seed_input *seeds = calloc(nseeds, sizeof *seeds);
    for (size_t i = 0; i < nst; i++) {
        const st_case *c = &st_corpus[i];
        /* a huge claimed length is a fine mutation seed; a huge buffer is not */
        seeds[i].b = st_case_bytes(c, &seeds[i].n);
        seeds[i].hdr_end = 8 + strlen(c->header);
    }
    for (size_t i = 0; i < nnp; i++) {
        seeds[nst + i].b = npy_case_bytes(&npy_corpus[i], &seeds[nst + i].n, 1);
        seeds[nst + i].kind = 1;
        seeds[nst + i].hdr_end = 10 + strlen(npy_corpus[i].dict) + 1;
    }
    seeds[nseeds - 1] = saved_file();

    enum { CAP = 8192 };
    unsigned char *buf = malloc(CAP);
    for (uint64_t i = start; iters == 0 || i < start + iters; i++) {
        rng r = {mix(seed * 0x100000001b3ull ^ i)};
        const seed_input *s = &seeds[below(&r, nseeds)];
        size_t n = s->n < CAP ? s->n : CAP;
        memcpy(buf, s->b, n);
        size_t hdr = s->hdr_end < n ? s->hdr_end : n;
        n = mutate(&r, buf, n, CAP, &hdr);
        /* three times in four, the length field follows the mutated header */
        if (below(&r, 4) != 0) {
            if (s->kind == 0 && n >= 8 && hdr >= 8)
                for (int k = 0; k < 8; k++)
                    buf[k] = (unsigned char)((uint64_t)(hdr - 8) >> (8 * k));
            else if (s->kind == 1 && n >= 10 && hdr >= 10 && hdr - 10 < 65536) {
                buf[8] = (unsigned char)((hdr - 10) & 0xff);
                buf[9] = (unsigned char)((hdr - 10) >> 8);
            }
        }
        /* exactly n bytes, so that ASan sees any read past the input */
        unsigned char *exact = malloc(n ? n : 1);
        memcpy(exact, buf, n);
        run_one(exact, n, i, (i & 63) == 0);
        free(exact);
    }
    printf("fuzz_serialize: %" PRIu64 " inputs (seed %" PRIu64 "), no failure; accepted: %" PRIu64
           " as safetensors, %" PRIu64 " as .npy\n", iters, seed, st_ok, npy_ok);
    for (size_t i = 0; i < nseeds; i++)
        free(seeds[i].b);
    free(seeds);
    free(buf);
    unlink(file_path);
    return 0;
}
#endif

/* Sorting (CPU): the lines of sort (and its stable overloads), argsort, msort, topk and
 * kthvalue (the stub sort_order_lines; their driver is kernels/sort.c); _unique2,
 * unique_dim, unique and unique_consecutive are in sort_unique.c, over the pairs of
 * sort_pairs.h.
 *
 * Every op here works on lines: the elements of self along one dim (all of them,
 * flattened, for unique).  A line is gathered into an array of (key, position) pairs
 * whose unsigned key orders like the values do in PyTorch: integers with the sign bit
 * flipped, floats by their bits with negatives inverted, every NaN mapped to the
 * largest key (NaN sorts as the largest value) and -0.0 to +0.0's key (they compare
 * equal, so a stable sort keeps them in input order).  Descending order inverts the
 * keys, so the same ascending stable sort keeps equal elements in input order there
 * too, with NaN first, as PyTorch's CPU sort does.
 *
 * Sorting is an LSD radix sort on the key bytes (stable by construction; a byte
 * where every key agrees costs no pass), insertion sort for short lines.  Pairs are
 * 8 bytes (32-bit key and position) for dtypes of up to 4 bytes and lines below 2^32,
 * 16 bytes otherwise.  topk and kthvalue select instead of sorting, on (key,
 * position), a total order, so their results are those of the stable sort (ties go to
 * the lower index) and are deterministic: kthvalue by quickselect; topk with
 * k <= n / SORT_SELECT_RATIO in one streaming pass that keeps a small buffer of
 * candidates below a bar (measured on 1M float32: k = 10 costs a tenth of the full
 * sort), sorting only its k; larger k sort the line.
 *
 * Values are copied from the input elements themselves (never rebuilt from keys), so
 * NaN payloads and the sign of zero survive.  Lines are split across
 * threads when there are several and enough elements; one line uses one thread. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu_util.h"
#include "kernels/sort.h"
#include "sort_pairs.h"
#include "kernels/ops_index_math.h"
#include "ops_kernels_sort.h"

/* Lines up to this long are insertion-sorted (a radix pass costs 256 counters). */
#define SORT_SMALL 48
/* topk streams when k * SORT_SELECT_RATIO <= n and sorts the line otherwise: on 1M
 * float32 (CPU time, one thread) streaming is 10x faster than the sort at k = 10, 2x
 * at n/64, and slower than it from about n/16 (bench/bench_sort.c measures k = 10 and
 * k = 1000 against the sort). */
#define SORT_SELECT_RATIO 64

/* ---- keys: ops_ix_key_* (ops_index_math.h, shared with kernels/cuda/sort.cu) ---- */

/* Bytes of a dtype's key (its element size; bool has 1). */
static int
sort_key_bytes(ops_dtype dt)
{
    return (int)ops_dtype_itemsize(dt);
}

/* ---- pair arrays: gather, radix sort, select ------------------------------------------ */

/* Fills a[0..n) with the keys of the n elements at p, step bytes apart (inverted when
 * desc) and their positions. */
#define SORT_DEFINE_GATHER_(P, SUF, T, KEYFN, BITS)                                               \
    static void sort_gather_##P##_##SUF(P *a, const char *p, int64_t step, int64_t n, bool desc)   \
    {                                                                                              \
        const uint64_t inv = desc ? (~0ull >> (64 - BITS)) : 0;                                     \
        for (int64_t j = 0; j < n; j++) {                                                          \
            T v;                                                                                   \
            memcpy(&v, p + j * step, sizeof v);                                                    \
            a[j].k = (__typeof__(a[j].k))(KEYFN(v) ^ inv);                                         \
            a[j].i = (__typeof__(a[j].i))j;                                                        \
        }                                                                                          \
    }

#define SORT_DEFINE_GATHERS_(P)                                                                   \
    SORT_DEFINE_GATHER_(P, b, bool, ops_ix_key_b, 8)                                                 \
    SORT_DEFINE_GATHER_(P, u8, uint8_t, ops_ix_key_u8, 8)                                            \
    SORT_DEFINE_GATHER_(P, i8, int8_t, ops_ix_key_i8, 8)                                             \
    SORT_DEFINE_GATHER_(P, i16, int16_t, ops_ix_key_i16, 16)                                         \
    SORT_DEFINE_GATHER_(P, i32, int32_t, ops_ix_key_i32, 32)                                         \
    SORT_DEFINE_GATHER_(P, f16, ops_half, ops_ix_key_f16, 16)                                        \
    SORT_DEFINE_GATHER_(P, bf16, ops_bfloat16, ops_ix_key_bf16, 16)                                  \
    SORT_DEFINE_GATHER_(P, f32, float, ops_ix_key_f32, 32)

SORT_DEFINE_GATHERS_(sort_p32)
SORT_DEFINE_GATHERS_(sort_p64)
SORT_DEFINE_GATHER_(sort_p64, i64, int64_t, ops_ix_key_i64, 64)
SORT_DEFINE_GATHER_(sort_p64, f64, double, ops_ix_key_f64, 64)

#define SORT_GATHER_CASES_(P)                                                                     \
    case OPS_BOOL: sort_gather_##P##_b(a, p, step, n, desc); break;                                \
    case OPS_UINT8: sort_gather_##P##_u8(a, p, step, n, desc); break;                              \
    case OPS_INT8: sort_gather_##P##_i8(a, p, step, n, desc); break;                               \
    case OPS_INT16: sort_gather_##P##_i16(a, p, step, n, desc); break;                             \
    case OPS_INT32: sort_gather_##P##_i32(a, p, step, n, desc); break;                             \
    case OPS_FLOAT16: sort_gather_##P##_f16(a, p, step, n, desc); break;                           \
    case OPS_BFLOAT16: sort_gather_##P##_bf16(a, p, step, n, desc); break;                         \
    case OPS_FLOAT32: sort_gather_##P##_f32(a, p, step, n, desc); break;

static void
sort_gather_p32(ops_dtype dt, sort_p32 *a, const char *p, int64_t step, int64_t n, bool desc)
{
    switch (dt) {
        SORT_GATHER_CASES_(sort_p32)
    default:
        break;
    }
}

void
sort_gather_p64(ops_dtype dt, sort_p64 *a, const char *p, int64_t step, int64_t n, bool desc)
{
    switch (dt) {
        SORT_GATHER_CASES_(sort_p64)
    case OPS_INT64: sort_gather_sort_p64_i64(a, p, step, n, desc); break;
    case OPS_FLOAT64: sort_gather_sort_p64_f64(a, p, step, n, desc); break;
    default:
        break;
    }
}

/* Composite order (key, then position): a total order on a line's pairs. */
#define SORT_LESS_(x, y) ((x).k < (y).k || ((x).k == (y).k && (x).i < (y).i))

/* Stable ascending sort of a[0..n) by key; tmp has room for n pairs.  Returns the
 * array holding the result (a or tmp). */
#define SORT_DEFINE_RADIX_(P, NB)                                                                 \
    static P *P##_radix(P *a, P *tmp, int64_t n, int kbytes)                                       \
    {                                                                                              \
        if (n <= SORT_SMALL) {                                                                     \
            for (int64_t i = 1; i < n; i++) {                                                      \
                const P x = a[i];                                                                  \
                int64_t j = i;                                                                     \
                for (; j > 0 && a[j - 1].k > x.k; j--)                                             \
                    a[j] = a[j - 1];                                                               \
                a[j] = x;                                                                          \
            }                                                                                      \
            return a;                                                                              \
        }                                                                                          \
        int64_t cnt[NB][256];                                                                      \
        memset(cnt, 0, sizeof(int64_t) * 256 * (size_t)kbytes);                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const uint64_t k = a[i].k;                                                             \
            for (int b = 0; b < kbytes; b++)                                                       \
                cnt[b][(k >> (8 * b)) & 0xffu]++;                                                  \
        }                                                                                          \
        for (int b = 0; b < kbytes; b++) {                                                         \
            const int sh = 8 * b;                                                                  \
            int64_t *const c = cnt[b];                                                             \
            if (c[((uint64_t)a[0].k >> sh) & 0xffu] == n)                                          \
                continue; /* every key has this byte */                                            \
            int64_t sum = 0;                                                                       \
            for (int d = 0; d < 256; d++) {                                                        \
                const int64_t t = c[d];                                                            \
                c[d] = sum;                                                                        \
                sum += t;                                                                          \
            }                                                                                      \
            for (int64_t i = 0; i < n; i++)                                                        \
                tmp[c[((uint64_t)a[i].k >> sh) & 0xffu]++] = a[i];                                 \
            P *const s = a;                                                                        \
            a = tmp;                                                                               \
            tmp = s;                                                                               \
        }                                                                                          \
        return a;                                                                                  \
    }                                                                                              \
                                                                                                   \
    /* Reorders a[0..n) so that a[kth] is the pair a composite sort would put there,    \
     * with smaller pairs before it and larger ones after. */                                      \
    static void P##_select(P *a, int64_t n, int64_t kth)                                           \
    {                                                                                              \
        int64_t lo = 0, hi = n - 1;                                                                \
        while (hi - lo > 16) {                                                                     \
            const int64_t mid = lo + (hi - lo) / 2;                                                \
            P t;                                                                                   \
            /* median of three into a[mid] */                                                      \
            if (SORT_LESS_(a[mid], a[lo])) { t = a[mid]; a[mid] = a[lo]; a[lo] = t; }              \
            if (SORT_LESS_(a[hi], a[mid])) {                                                       \
                t = a[mid]; a[mid] = a[hi]; a[hi] = t;                                             \
                if (SORT_LESS_(a[mid], a[lo])) { t = a[mid]; a[mid] = a[lo]; a[lo] = t; }          \
            }                                                                                      \
            const P pv = a[mid];                                                                   \
            int64_t i = lo, j = hi;                                                                \
            while (i <= j) {                                                                       \
                while (SORT_LESS_(a[i], pv))                                                       \
                    i++;                                                                           \
                while (SORT_LESS_(pv, a[j]))                                                       \
                    j--;                                                                           \
                if (i <= j) {                                                                      \
                    t = a[i]; a[i] = a[j]; a[j] = t;                                               \
                    i++;                                                                           \
                    j--;                                                                           \
                }                                                                                  \
            }                                                                                      \
            if (kth <= j)                                                                          \
                hi = j;                                                                            \
            else if (kth >= i)                                                                     \
                lo = i;                                                                            \
            else                                                                                   \
                return;                                                                            \
        }                                                                                          \
        for (int64_t i = lo + 1; i <= hi; i++) {                                                   \
            const P x = a[i];                                                                      \
            int64_t j = i;                                                                         \
            for (; j > lo && SORT_LESS_(x, a[j - 1]); j--)                                         \
                a[j] = a[j - 1];                                                                   \
            a[j] = x;                                                                              \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static int P##_cmp(const void *x, const void *y)                                               \
    {                                                                                              \
        const P *a = (const P *)x, *b = (const P *)y;                                              \
        return SORT_LESS_(*a, *b) ? -1 : SORT_LESS_(*b, *a) ? 1 : 0;                               \
    }

SORT_DEFINE_RADIX_(sort_p32, 4)
SORT_DEFINE_RADIX_(sort_p64, 8)

/* topk for k << n without gathering the line: keys stream into buf (cap pairs,
 * cap > k); whenever it fills, a select keeps its k first pairs and the k-th one's key
 * becomes the bar.  Later elements have larger positions, so one whose key is not
 * below the bar cannot be among the first k of the composite order: most of a long
 * line costs a load and a compare.  Leaves the k first pairs, sorted, in buf[0..k). */
#define SORT_DEFINE_STREAM_(P, SUF, T, KEYFN, BITS)                                               \
    static void P##_stream_##SUF(P *buf, int64_t cap, int64_t k, const char *p, int64_t step,      \
                                 int64_t n, bool desc)                                             \
    {                                                                                              \
        const uint64_t inv = desc ? (~0ull >> (64 - BITS)) : 0;                                    \
        uint64_t bar = ~0ull;                                                                      \
        bool barred = false;                                                                       \
        int64_t m = 0;                                                                             \
        for (int64_t j = 0; j < n; j++) {                                                          \
            T v;                                                                                   \
            memcpy(&v, p + j * step, sizeof v);                                                    \
            const uint64_t key = KEYFN(v) ^ inv;                                                   \
            if (barred && key >= bar)                                                              \
                continue;                                                                          \
            buf[m].k = (__typeof__(buf[m].k))key;                                                  \
            buf[m].i = (__typeof__(buf[m].i))j;                                                    \
            if (++m == cap) {                                                                      \
                P##_select(buf, m, k - 1);                                                         \
                m = k;                                                                             \
                bar = buf[k - 1].k;                                                                \
                barred = true;                                                                     \
            }                                                                                      \
        }                                                                                          \
        P##_select(buf, m, k - 1);                                                                 \
        qsort(buf, (size_t)k, sizeof(P), P##_cmp);                                                 \
    }

#define SORT_DEFINE_STREAMS_(P)                                                                   \
    SORT_DEFINE_STREAM_(P, b, bool, ops_ix_key_b, 8)                                                 \
    SORT_DEFINE_STREAM_(P, u8, uint8_t, ops_ix_key_u8, 8)                                            \
    SORT_DEFINE_STREAM_(P, i8, int8_t, ops_ix_key_i8, 8)                                             \
    SORT_DEFINE_STREAM_(P, i16, int16_t, ops_ix_key_i16, 16)                                         \
    SORT_DEFINE_STREAM_(P, i32, int32_t, ops_ix_key_i32, 32)                                         \
    SORT_DEFINE_STREAM_(P, f16, ops_half, ops_ix_key_f16, 16)                                        \
    SORT_DEFINE_STREAM_(P, bf16, ops_bfloat16, ops_ix_key_bf16, 16)                                  \
    SORT_DEFINE_STREAM_(P, f32, float, ops_ix_key_f32, 32)

SORT_DEFINE_STREAMS_(sort_p32)
SORT_DEFINE_STREAMS_(sort_p64)
SORT_DEFINE_STREAM_(sort_p64, i64, int64_t, ops_ix_key_i64, 64)
SORT_DEFINE_STREAM_(sort_p64, f64, double, ops_ix_key_f64, 64)

#define SORT_STREAM_CASES_(P)                                                                     \
    case OPS_BOOL: P##_stream_b(buf, cap, k, p, step, n, desc); break;                             \
    case OPS_UINT8: P##_stream_u8(buf, cap, k, p, step, n, desc); break;                           \
    case OPS_INT8: P##_stream_i8(buf, cap, k, p, step, n, desc); break;                            \
    case OPS_INT16: P##_stream_i16(buf, cap, k, p, step, n, desc); break;                          \
    case OPS_INT32: P##_stream_i32(buf, cap, k, p, step, n, desc); break;                          \
    case OPS_FLOAT16: P##_stream_f16(buf, cap, k, p, step, n, desc); break;                        \
    case OPS_BFLOAT16: P##_stream_bf16(buf, cap, k, p, step, n, desc); break;                      \
    case OPS_FLOAT32: P##_stream_f32(buf, cap, k, p, step, n, desc); break;

static void
sort_p32_stream_any(ops_dtype dt, sort_p32 *buf, int64_t cap, int64_t k, const char *p, int64_t step, int64_t n,
                    bool desc)
{
    switch (dt) {
        SORT_STREAM_CASES_(sort_p32)
    default:
        break;
    }
}

static void
sort_p64_stream_any(ops_dtype dt, sort_p64 *buf, int64_t cap, int64_t k, const char *p, int64_t step, int64_t n,
                    bool desc)
{
    switch (dt) {
        SORT_STREAM_CASES_(sort_p64)
    case OPS_INT64: sort_p64_stream_i64(buf, cap, k, p, step, n, desc); break;
    case OPS_FLOAT64: sort_p64_stream_f64(buf, cap, k, p, step, n, desc); break;
    default:
        break;
    }
}

/* ---- one line, either pair width -------------------------------------------------------- */

/* What to do with a line: line_kind (index_check.h): LINE_SORT every element, in
 * order; LINE_TOPK the first k of the order; LINE_KTH the element at position k - 1. */

/* Writes n values (copied from the input line src, step sstep bytes) in the order of
 * the pairs' positions to dst (dstep bytes apart), and the positions to idx (istep
 * int64 elements apart); either may be NULL. */
#define SORT_DEFINE_SCATTER_(P)                                                                   \
    static void P##_scatter(const P *a, int64_t n, size_t isz, const char *src, int64_t sstep,     \
                            char *dst, int64_t dstep, int64_t *idx, int64_t istep)                 \
    {                                                                                              \
        if (dst != NULL) {                                                                         \
            switch (isz) {                                                                         \
            case 1:                                                                                \
                for (int64_t j = 0; j < n; j++)                                                    \
                    dst[j * dstep] = src[(int64_t)a[j].i * sstep];                                 \
                break;                                                                             \
            case 2:                                                                                \
                for (int64_t j = 0; j < n; j++)                                                    \
                    memcpy(dst + j * dstep, src + (int64_t)a[j].i * sstep, 2);                     \
                break;                                                                             \
            case 4:                                                                                \
                for (int64_t j = 0; j < n; j++)                                                    \
                    memcpy(dst + j * dstep, src + (int64_t)a[j].i * sstep, 4);                     \
                break;                                                                             \
            default:                                                                               \
                for (int64_t j = 0; j < n; j++)                                                    \
                    memcpy(dst + j * dstep, src + (int64_t)a[j].i * sstep, 8);                     \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        if (idx != NULL)                                                                           \
            for (int64_t j = 0; j < n; j++)                                                        \
                idx[j * istep] = (int64_t)a[j].i;                                                  \
    }

SORT_DEFINE_SCATTER_(sort_p32)
SORT_DEFINE_SCATTER_(sort_p64)

/* A line job: nlines lines of len input elements (line l starts at line_in_offset,
 * in_step bytes between elements) and the contiguous outputs they fill. */
typedef struct {
    const ops_tensor *self;
    int dim;                 /* the line's dim in self (-1: self flattened, one line) */
    int64_t len;             /* elements per line */
    int64_t nlines;
    int64_t in_step;         /* bytes between a line's input elements */
    ops_dtype dt;
    bool desc;
    line_kind kind;
    int64_t k;               /* topk's k, kthvalue's k */
    /* outputs: contiguous; line l's olen elements start at element
     * (l / inner) * olen * inner + l % inner, inner apart */
    char *vals;              /* NULL: no values wanted */
    int64_t *idx;            /* NULL: no indices wanted */
    int64_t olen;
    int64_t inner;
} line_job;

/* Input offset (elements) of line l: l decomposed over self's dims other than dim. */
static int64_t
line_in_offset(const ops_tensor *t, int dim, int64_t l)
{
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0 && l > 0; d--) {
        if (d == dim)
            continue;
        const int64_t sz = t->sizes[d];
        off += (l % sz) * t->strides[d];
        l /= sz;
    }
    return off;
}

static bool
line_use_p32(const line_job *j)
{
    return sort_key_bytes(j->dt) <= 4 && (uint64_t)j->len <= UINT32_MAX;
}

/* One line of the job, in scratch w. */
#define SORT_DEFINE_LINE_(P)                                                                      \
    static void P##_line(const line_job *j, int64_t l, P *a, P *b)                                 \
    {                                                                                              \
        const size_t isz = ops_dtype_itemsize(j->dt);                                              \
        const char *const base = (const char *)j->self->storage->data;                             \
        const char *const src = base + line_in_offset(j->self, j->dim, l) * (int64_t)isz;         \
        const int64_t n = j->len;                                                                  \
        const bool stream = j->kind == LINE_TOPK && j->k > 0 && j->k * SORT_SELECT_RATIO <= n;     \
        if (stream) {                                                                              \
            int64_t cap = j->k + (j->k > 128 ? j->k : 128); /* buffer pairs, at most n */          \
            if (cap > n)                                                                           \
                cap = n;                                                                           \
            P##_stream_any(j->dt, a, cap, j->k, src, j->in_step, n, j->desc);                      \
        } else                                                                                     \
            P##_gather_any(j->dt, a, src, j->in_step, n, j->desc);                                 \
        const int64_t o = (l / j->inner) * j->olen * j->inner + l % j->inner;                      \
        char *const vd = j->vals != NULL ? j->vals + o * (int64_t)isz : NULL;                      \
        int64_t *const id = j->idx != NULL ? j->idx + o : NULL;                                    \
        const int64_t dstep = j->inner * (int64_t)isz;                                             \
        P *r = a;                                                                                  \
        int64_t m = n;                                                                             \
        if (j->kind == LINE_KTH) {                                                                 \
            P##_select(a, n, j->k - 1);                                                            \
            r = a + (j->k - 1);                                                                    \
            m = 1;                                                                                 \
        } else if (stream) {                                                                       \
            m = j->k;                                                                              \
        } else {                                                                                   \
            r = P##_radix(a, b, n, sort_key_bytes(j->dt));                                         \
            if (j->kind == LINE_TOPK)                                                              \
                m = j->k;                                                                          \
        }                                                                                          \
        P##_scatter(r, m, isz, src, j->in_step, vd, dstep, id, j->inner);                          \
    }

static inline void
sort_p32_gather_any(ops_dtype dt, sort_p32 *a, const char *p, int64_t step, int64_t n, bool desc)
{
    sort_gather_p32(dt, a, p, step, n, desc);
}

static inline void
sort_p64_gather_any(ops_dtype dt, sort_p64 *a, const char *p, int64_t step, int64_t n, bool desc)
{
    sort_gather_p64(dt, a, p, step, n, desc);
}

SORT_DEFINE_LINE_(sort_p32)
SORT_DEFINE_LINE_(sort_p64)

/* Scratch for j: two pair arrays per thread.  *nt gets the thread count, *ws the
 * block (NULL when there is nothing to do).  OPS_ERR_OOM on failure. */
static ops_status
line_scratch(const char *op, const line_job *j, char **ws, int *nt)
{
    *ws = NULL;
    *nt = 1;
    if (j->nlines == 0 || j->len == 0 || j->olen == 0)
        return OPS_OK;
    const size_t psz = line_use_p32(j) ? sizeof(sort_p32) : sizeof(sort_p64);
#ifdef _OPENMP
    if (j->nlines > 1 && (double)j->nlines * (double)j->len > OPS_GRAIN_SIZE) {
        *nt = ops_get_num_threads();
        if ((int64_t)*nt > j->nlines)
            *nt = (int)j->nlines;
        if (*nt < 1)
            *nt = 1;
    }
#endif
    size_t bytes;
    if (ops_nbytes_overflow(j->len, psz * 2, &bytes) || ops_mul_overflow_size(bytes, (size_t)*nt, &bytes))
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (scratch for %d lines of %" PRId64 " elements)", op, *nt,
                        j->len);
    if ((*ws = (char *)ops_host_malloc(bytes)) == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (tried to allocate %zu bytes of scratch)", op, bytes);
    return OPS_OK;
}

/* Runs every line of j in the scratch line_scratch gave, across nt threads.  Cannot
 * fail. */
static void
line_exec(const line_job *j, char *ws, int nt)
{
    if (ws == NULL)
        return;
    const bool p32 = line_use_p32(j);
    const size_t per = (size_t)j->len * (p32 ? sizeof(sort_p32) : sizeof(sort_p64));
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int64_t l = 0; l < j->nlines; l++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        char *const a = ws + (size_t)tid * 2 * per;
        if (p32)
            sort_p32_line(j, l, (sort_p32 *)a, (sort_p32 *)(a + per));
        else
            sort_p64_line(j, l, (sort_p64 *)a, (sort_p64 *)(a + per));
    }
}

/* ---- the stub sort_order_lines (the driver: kernels/sort.c) -------------------------- */

OPS_REGISTER_STUB(sort_order_lines, CPU, sort_order_lines_cpu);
ops_status
sort_order_lines_cpu(const char *op, const sort_plan *p)
{
    const ops_tensor *self = p->self;
    line_job j;
    memset(&j, 0, sizeof j);
    j.self = self;
    j.dim = self->ndim == 0 ? -1 : (int)p->dim;
    j.len = p->len;
    j.nlines = p->nlines;
    j.in_step = (self->ndim == 0 ? 0 : self->strides[p->dim]) * (int64_t)ops_dtype_itemsize(self->dtype);
    j.dt = self->dtype;
    j.desc = p->desc;
    j.kind = p->kind;
    j.k = p->k;
    j.vals = p->vals != NULL ? (char *)ops_tensor_data_ptr(p->vals) : NULL;
    j.idx = p->idx != NULL ? (int64_t *)ops_tensor_data_ptr(p->idx) : NULL;
    j.olen = p->olen;
    j.inner = p->inner;
    char *ws = NULL;
    int nt = 1;
    const ops_status st = line_scratch(op, &j, &ws, &nt);
    if (st != OPS_OK)
        return st;
    line_exec(&j, ws, nt);
    ops_host_free(ws);
    return OPS_OK;
}

sort_p64 *
sort_p64_sort(sort_p64 *a, sort_p64 *tmp, int64_t n, ops_dtype dt)
{
    return sort_p64_radix(a, tmp, n, sort_key_bytes(dt));
}

/* The CUDA backend's host-side logic, tested without a GPU in every build:
 * - the launch arithmetic of kernels/cuda/ops_cuda_launch.h (integer division by
 *   magic numbers, the 32-bit offset calculator, coalescing, the split of large
 *   iterations into 32-bit-indexable pieces, grid/block and vector width) against
 *   brute-force references;
 * - the caching allocator of runtime/alloc/cuda_alloc_bins.c (rounding, bins, splitting,
 *   coalescing, stream-ordered reuse, empty_cache, statistics, out of memory after
 *   freeing the cache and retrying, failure injection) driven by a fake backing
 *   allocator that hands out addresses of an imaginary device and fake events;
 * - "no CUDA device" reported as an error, when this machine has none. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/ops_cuda_launch.h"
#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cache_alloc.h"
#include "ops_cuda.h"
#include "ops_internal.h"

/* xorshift64*: reproducible random numbers. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t
rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static int64_t
rnd_range(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ---- integer division ------------------------------------------------------- */

static void
check_div(uint32_t d, uint32_t n)
{
    ops_int_divider dv = ops_int_divider_make(d);
    uint32_t q = ops_int_divider_div(dv, n);
    ck_assert_msg(q == n / d, "%" PRIu32 " / %" PRIu32 ": got %" PRIu32, n, d, q);
}

START_TEST(test_int_divider)
{
    const uint32_t edge_n[] = {0, 1, 2, 3, 511, 512, 65535, 65536, 0x7ffffffeu, 0x7fffffffu};
    for (uint32_t d = 1; d <= 4100; d++)
        for (size_t i = 0; i < sizeof edge_n / sizeof *edge_n; i++)
            check_div(d, edge_n[i]);
    for (int s = 0; s < 31; s++) {
        uint32_t p = 1u << s;
        for (int k = -1; k <= 1; k++) {
            uint32_t d = p + (uint32_t)k;
            if (d == 0 || d > 0x7fffffffu)
                continue;
            for (size_t i = 0; i < sizeof edge_n / sizeof *edge_n; i++)
                check_div(d, edge_n[i]);
            check_div(d, d);
            check_div(d, d - 1);
            if (d < 0x7fffffffu)
                check_div(d, d + 1);
        }
    }
    for (int i = 0; i < 2000000; i++) {
        uint32_t d = (uint32_t)rnd_range(1, 0x7fffffff);
        if (i & 1)
            d = (uint32_t)rnd_range(1, 1 << (int)rnd_range(1, 20));
        check_div(d, (uint32_t)rnd_range(0, 0x7fffffff));
    }
}
END_TEST

/* ---- the offset calculator against nested loops ----------------------------- */

/* Row-major multi-index of linear index i in sizes. */
static void
unravel(int ndim, const int64_t *sizes, int64_t i, int64_t *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = sizes[d] ? i % sizes[d] : 0;
        i = sizes[d] ? i / sizes[d] : 0;
    }
}

static int64_t
ref_offset(const ops_launch_iter *it, int a, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < it->ndim; d++)
        off += idx[d] * it->strides[a][d];
    return off;
}

/* A random iteration: for each operand a layout over the shape -- contiguous, a
 * permutation of contiguous strides (transposes), broadcast (zero strides),
 * flipped (negative strides) or a strided slice (strides times 2..3). */
static void
random_iter(ops_launch_iter *it, int max_ndim, int64_t max_size)
{
    memset(it, 0, sizeof *it);
    it->ndim = (int)rnd_range(0, max_ndim);
    it->nargs = (int)rnd_range(1, OPS_LAUNCH_MAX_ARGS);
    for (int d = 0; d < it->ndim; d++)
        it->sizes[d] = rnd_range(0, 9) == 0 ? 1 : rnd_range(1, max_size);
    if (rnd_range(0, 19) == 0 && it->ndim > 0)
        it->sizes[rnd_range(0, it->ndim - 1)] = 0;
    for (int a = 0; a < it->nargs; a++) {
        int perm[OPS_MAX_DIMS];
        for (int d = 0; d < it->ndim; d++)
            perm[d] = d;
        int kind = (int)rnd_range(0, 4);
        if (kind == 1) /* transposed: shuffle which dimension is fastest */
            for (int d = it->ndim - 1; d > 0; d--) {
                int j = (int)rnd_range(0, d);
                int t = perm[d];
                perm[d] = perm[j];
                perm[j] = t;
            }
        int64_t s = kind == 4 ? rnd_range(2, 3) : 1;
        for (int k = it->ndim - 1; k >= 0; k--) {
            int d = perm[k];
            it->strides[a][d] = s;
            s *= it->sizes[d] > 0 ? it->sizes[d] : 1;
        }
        for (int d = 0; d < it->ndim; d++) {
            if (kind == 2 && rnd_range(0, 1))
                it->strides[a][d] = 0;
            if (kind == 3 && rnd_range(0, 1))
                it->strides[a][d] = -it->strides[a][d];
        }
    }
}

static void
check_offsets(const ops_launch_iter *it, const char *what)
{
    ops_offset_calc32 oc;
    ck_assert(ops_offset_calc32_init(&oc, it));
    int64_t n = ops_launch_numel(it), idx[OPS_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        int32_t off[OPS_LAUNCH_MAX_ARGS];
        ops_offset_calc32_get(&oc, (uint32_t)i, off);
        unravel(it->ndim, it->sizes, i, idx);
        for (int a = 0; a < it->nargs; a++)
            ck_assert_msg(off[a] == ref_offset(it, a, idx), "%s: element %" PRId64 " operand %d: %d != %" PRId64,
                          what, i, a, off[a], ref_offset(it, a, idx));
    }
}

START_TEST(test_offset_calc_random)
{
    for (int trial = 0; trial < 3000; trial++) {
        ops_launch_iter it;
        random_iter(&it, trial < 1500 ? 4 : 7, trial < 1500 ? 7 : 4);
        check_offsets(&it, "raw");
        /* coalescing keeps every element's offsets (row-major order is kept) */
        ops_launch_iter co = it;
        ops_launch_coalesce(&co);
        ck_assert_int_le(co.ndim, it.ndim > 0 ? it.ndim : 0);
        ck_assert_int_eq(ops_launch_numel(&co), ops_launch_numel(&it));
        ops_offset_calc32 a, b;
        ck_assert(ops_offset_calc32_init(&a, &it) && ops_offset_calc32_init(&b, &co));
        for (int64_t i = 0; i < ops_launch_numel(&it); i++) {
            int32_t oa[OPS_LAUNCH_MAX_ARGS], ob[OPS_LAUNCH_MAX_ARGS];
            ops_offset_calc32_get(&a, (uint32_t)i, oa);
            ops_offset_calc32_get(&b, (uint32_t)i, ob);
            ck_assert_mem_eq(oa, ob, sizeof oa);
        }
    }
}
END_TEST

START_TEST(test_coalesce_examples)
{
    /* a contiguous [4, 5, 6] with a broadcast row [1 -> 4, 5, 6]: the last two dims merge */
    ops_launch_iter it = {.ndim = 3, .nargs = 2, .sizes = {4, 5, 6}};
    int64_t s0[] = {30, 6, 1}, s1[] = {0, 6, 1};
    memcpy(it.strides[0], s0, sizeof s0);
    memcpy(it.strides[1], s1, sizeof s1);
    ops_launch_coalesce(&it);
    ck_assert_int_eq(it.ndim, 2);
    ck_assert_int_eq(it.sizes[0], 4);
    ck_assert_int_eq(it.sizes[1], 30);
    ck_assert_int_eq(it.strides[1][0], 0);
    /* a transpose does not merge; size-1 dims vanish */
    ops_launch_iter t = {.ndim = 3, .nargs = 1, .sizes = {3, 1, 4}};
    int64_t st[] = {1, 7, 3};
    memcpy(t.strides[0], st, sizeof st);
    ops_launch_coalesce(&t);
    ck_assert_int_eq(t.ndim, 2);
    ck_assert_int_eq(t.sizes[0], 3);
    ck_assert_int_eq(t.sizes[1], 4);
    ck_assert_int_eq(t.strides[0][0], 1);
    ck_assert_int_eq(t.strides[0][1], 3);
}
END_TEST

START_TEST(test_can_use_32bit)
{
    ops_launch_iter it = {.ndim = 1, .nargs = 1, .sizes = {INT32_MAX}, .strides = {{1}}};
    ck_assert(ops_launch_can_use_32bit(&it));
    it.sizes[0] = (int64_t)INT32_MAX + 1;
    ck_assert(!ops_launch_can_use_32bit(&it));
    /* few elements, but an offset past 2^31 */
    ops_launch_iter w = {.ndim = 2, .nargs = 2, .sizes = {3, 4}};
    w.strides[0][0] = 4;
    w.strides[0][1] = 1;
    w.strides[1][0] = ((int64_t)1 << 30) - 2;
    w.strides[1][1] = 1;
    ck_assert(ops_launch_can_use_32bit(&w)); /* extent 2 (2^30 - 2) + 3 = 2^31 - 1 */
    w.strides[1][0] = ((int64_t)1 << 30) + 2;
    ck_assert(!ops_launch_can_use_32bit(&w));
    /* negative strides count by magnitude */
    w.strides[1][0] = -(((int64_t)1 << 30) - 2);
    ck_assert(ops_launch_can_use_32bit(&w));
    w.strides[1][0] = -(((int64_t)1 << 30) + 2);
    ck_assert(!ops_launch_can_use_32bit(&w));
    /* broadcast: a zero stride over 2^40 elements does not help the count */
    ops_launch_iter b = {.ndim = 1, .nargs = 2, .sizes = {(int64_t)1 << 40}, .strides = {{1}, {0}}};
    ck_assert(!ops_launch_can_use_32bit(&b));
}
END_TEST

/* ---- the 32-bit split --------------------------------------------------------- */

#define MAX_PIECES 4096

typedef struct pieces {
    int n;
    ops_launch_iter p[MAX_PIECES];
} pieces;

static int
collect(const ops_launch_iter *piece, void *ctx)
{
    pieces *ps = ctx;
    if (ps->n == MAX_PIECES)
        return 1;
    ps->p[ps->n++] = *piece;
    return 0;
}

/* The pieces of `it`: each fits 32-bit indexing, keeps the strides, has the base
 * its origin implies, the boxes are disjoint and their volumes add up to it (so they
 * cover it), and sampled elements have the offsets the whole iteration gives them. */
static void
check_split(const ops_launch_iter *it, int expect_min_pieces)
{
    static pieces ps;
    ps.n = 0;
    ck_assert_int_eq(ops_launch_split_32bit(it, collect, &ps), 0);
    ck_assert_int_ge(ps.n, expect_min_pieces);
    int64_t total = 0;
    for (int k = 0; k < ps.n; k++) {
        const ops_launch_iter *p = &ps.p[k];
        ck_assert(ops_launch_can_use_32bit(p));
        ck_assert_int_eq(p->ndim, it->ndim);
        ck_assert_int_eq(p->nargs, it->nargs);
        total += ops_launch_numel(p);
        for (int a = 0; a < it->nargs; a++) {
            int64_t base = it->base[a];
            for (int d = 0; d < it->ndim; d++) {
                ck_assert_int_eq(p->strides[a][d], it->strides[a][d]);
                base += p->origin[d] * it->strides[a][d];
            }
            ck_assert_int_eq(p->base[a], base);
        }
        for (int d = 0; d < it->ndim; d++) {
            ck_assert_int_ge(p->origin[d], 0);
            ck_assert_int_le(p->origin[d] + p->sizes[d], it->sizes[d]);
        }
        ops_offset_calc32 oc;
        ck_assert(ops_offset_calc32_init(&oc, p));
        int64_t n = ops_launch_numel(p), idx[OPS_MAX_DIMS], gidx[OPS_MAX_DIMS];
        for (int s = 0; s < 64 && n > 0; s++) {
            int64_t i = s == 0 ? 0 : s == 1 ? n - 1 : rnd_range(0, n - 1);
            int32_t off[OPS_LAUNCH_MAX_ARGS];
            ops_offset_calc32_get(&oc, (uint32_t)i, off);
            unravel(p->ndim, p->sizes, i, idx);
            for (int d = 0; d < p->ndim; d++)
                gidx[d] = p->origin[d] + idx[d];
            for (int a = 0; a < it->nargs; a++)
                ck_assert_int_eq(p->base[a] + off[a], it->base[a] + ref_offset(it, a, gidx));
        }
    }
    ck_assert_int_eq(total, ops_launch_numel(it));
    for (int i = 0; i < ps.n; i++)
        for (int j = i + 1; j < ps.n; j++) {
            bool overlap = true;
            for (int d = 0; d < it->ndim; d++) {
                int64_t lo = ps.p[i].origin[d] > ps.p[j].origin[d] ? ps.p[i].origin[d] : ps.p[j].origin[d];
                int64_t hi_i = ps.p[i].origin[d] + ps.p[i].sizes[d], hi_j = ps.p[j].origin[d] + ps.p[j].sizes[d];
                overlap = overlap && lo < (hi_i < hi_j ? hi_i : hi_j);
            }
            ck_assert_msg(!overlap, "pieces %d and %d overlap", i, j);
        }
}

START_TEST(test_split_large)
{
    /* 3 x 2^31 contiguous: 2^33 elements */
    ops_launch_iter a = {.ndim = 2, .nargs = 2, .sizes = {3, (int64_t)1 << 31}};
    a.strides[0][0] = a.strides[1][0] = (int64_t)1 << 31;
    a.strides[0][1] = a.strides[1][1] = 1;
    check_split(&a, 4);
    /* a transposed input of 2^16 x 2^16 (2^32 elements) into a contiguous output */
    ops_launch_iter t = {.ndim = 2, .nargs = 2, .sizes = {(int64_t)1 << 16, (int64_t)1 << 16}};
    t.strides[0][0] = (int64_t)1 << 16;
    t.strides[0][1] = 1;
    t.strides[1][0] = 1;
    t.strides[1][1] = (int64_t)1 << 16;
    check_split(&t, 2);
    /* a broadcast scalar into 2^34 elements: only the count overflows */
    ops_launch_iter b = {.ndim = 1, .nargs = 2, .sizes = {(int64_t)1 << 34}, .strides = {{1}, {0}}};
    check_split(&b, 8);
    /* few elements but huge strides (a column of a wide matrix), flipped */
    ops_launch_iter w = {.ndim = 2, .nargs = 2, .sizes = {1000, 3}, .base = {0, 999 * ((int64_t)1 << 24)}};
    w.strides[0][0] = 3;
    w.strides[0][1] = 1;
    w.strides[1][0] = -((int64_t)1 << 24);
    w.strides[1][1] = 7;
    check_split(&w, 8);
    /* random large iterations (of a size whose pieces this test can list) */
    for (int trial = 0; trial < 200;) {
        ops_launch_iter r;
        random_iter(&r, 5, 40);
        if (r.ndim == 0)
            continue;
        r.sizes[rnd_range(0, r.ndim - 1)] = rnd_range(1, (int64_t)1 << 26);
        for (int aa = 0; aa < r.nargs; aa++)
            for (int d = 0; d < r.ndim; d++)
                if (rnd_range(0, 4) == 0)
                    r.strides[aa][d] *= rnd_range(1, 1 << 8);
        bool small = ops_launch_numel(&r) <= ((int64_t)1 << 34);
        for (int aa = 0; aa < r.nargs; aa++)
            small = small && ops_launch_extent(&r, aa) <= ((int64_t)1 << 35);
        if (!small)
            continue;
        check_split(&r, 1);
        trial++;
    }
    /* a fitting iteration is passed through whole */
    ops_launch_iter s = {.ndim = 1, .nargs = 1, .sizes = {100}, .strides = {{1}}};
    check_split(&s, 1);
}
END_TEST

/* ---- launch configuration ------------------------------------------------------ */

START_TEST(test_launch_config)
{
    ops_launch_config c = ops_launch_config_1d(0, 128, 4, 1 << 20);
    ck_assert_uint_eq(c.grid, 0);
    c = ops_launch_config_1d(1, 128, 4, 1 << 20);
    ck_assert_uint_eq(c.grid, 1);
    ck_assert_uint_eq(c.block, 128);
    ck_assert_int_eq(c.elems_per_block, 512);
    ck_assert_uint_eq(ops_launch_config_1d(512, 128, 4, 1 << 20).grid, 1);
    ck_assert_uint_eq(ops_launch_config_1d(513, 128, 4, 1 << 20).grid, 2);
    /* capped: kernels grid-stride */
    ck_assert_uint_eq(ops_launch_config_1d((int64_t)1 << 40, 128, 4, INT32_MAX).grid, INT32_MAX);
    for (int i = 0; i < 100000; i++) {
        int64_t n = rnd_range(1, (int64_t)1 << 36);
        uint32_t block = 32u << rnd_range(0, 5), ept = (uint32_t)rnd_range(1, 8);
        int64_t max_grid = rnd_range(1, INT32_MAX);
        ops_launch_config k = ops_launch_config_1d(n, block, ept, max_grid);
        int64_t need = (n + (int64_t)block * ept - 1) / ((int64_t)block * ept);
        ck_assert_int_eq(k.grid, need < max_grid ? need : max_grid);
        ck_assert_int_eq(k.elems_per_block, (int64_t)block * ept);
        if ((int64_t)k.grid == need) {
            ck_assert_int_ge((int64_t)k.grid * k.elems_per_block, n);
            ck_assert_int_lt((int64_t)(k.grid - 1) * k.elems_per_block, n);
        }
    }
}
END_TEST

START_TEST(test_vec_width)
{
    static _Alignas(64) char buf[256];
    const void *p[3] = {buf, buf + 64, buf + 128};
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 4), 4); /* float: 16 B */
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 8), 2); /* double */
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 2), 8); /* half: 8 x 2 B */
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 1), 8); /* bytes: at most 8 elements */
    p[1] = buf + 8;
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 4), 2);
    p[1] = buf + 4;
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 4), 1);
    p[1] = buf + 2;
    ck_assert_int_eq(ops_launch_vec_width(p, 3, 2), 1);
    ck_assert_int_eq(ops_launch_vec_width(p, 0, 4), 4);
    /* brute force: the answer is the widest width every pointer allows */
    for (int i = 0; i < 10000; i++) {
        size_t item = (size_t)1 << rnd_range(0, 3);
        const void *q[OPS_LAUNCH_MAX_ARGS];
        int n = (int)rnd_range(1, OPS_LAUNCH_MAX_ARGS);
        for (int k = 0; k < n; k++)
            q[k] = buf + item * (size_t)rnd_range(0, 16);
        int v = ops_launch_vec_width(q, n, item);
        ck_assert(v == 1 || v == 2 || v == 4 || v == 8);
        ck_assert_uint_le((size_t)v * item, 16);
        for (int k = 0; k < n; k++)
            ck_assert_uint_eq((uintptr_t)q[k] % ((size_t)v * item), 0);
        if (v < 8 && (size_t)v * 2 * item <= 16) {
            bool all = true;
            for (int k = 0; k < n; k++)
                all = all && (uintptr_t)q[k] % ((size_t)v * 2 * item) == 0;
            ck_assert(!all);
        }
    }
}
END_TEST

/* ---- the caching allocator over a fake device ------------------------------------ */

#define MAX_SEGS 4096

typedef struct fake_event {
    int done;
    void *stream;
} fake_event;

typedef struct fake {
    uintptr_t next;        /* next address handed out */
    int64_t capacity;      /* bytes the fake device has */
    int64_t used;          /* bytes in live segments */
    int64_t nseg;
    uintptr_t seg_ptr[MAX_SEGS];
    size_t seg_size[MAX_SEGS];
    int64_t reserves, releases, syncs;
    int64_t live_events, events_made;
    struct fake_event *events[MAX_SEGS]; /* the live ones */
    int fail_reserve;      /* 1: the next reserve is a backing error */
    int fail_event;
} fake;

static ops_cache_reserve_result
fake_reserve(void *ctx, size_t nbytes, void **out, char *msg, size_t len)
{
    fake *f = ctx;
    if (f->fail_reserve) {
        f->fail_reserve = 0;
        snprintf(msg, len, "fakeMalloc failed: the fake device is on fire");
        return OPS_CACHE_BACKING_ERROR;
    }
    if (f->used + (int64_t)nbytes > f->capacity) {
        snprintf(msg, len, "fakeMalloc failed: out of memory");
        return OPS_CACHE_OUT_OF_MEMORY;
    }
    ck_assert_int_lt(f->nseg, MAX_SEGS);
    *out = (void *)f->next;
    f->seg_ptr[f->nseg] = f->next;
    f->seg_size[f->nseg++] = nbytes;
    f->next += (nbytes + ((size_t)2 << 20) - 1) / ((size_t)2 << 20) * ((size_t)2 << 20) + ((size_t)2 << 20);
    f->used += (int64_t)nbytes;
    f->reserves++;
    return OPS_CACHE_RESERVED;
}

static void
fake_release(void *ctx, void *ptr, size_t nbytes)
{
    fake *f = ctx;
    for (int64_t i = 0; i < f->nseg; i++)
        if (f->seg_ptr[i] == (uintptr_t)ptr) {
            ck_assert_uint_eq(f->seg_size[i], nbytes); /* a whole segment, as reserved */
            f->seg_ptr[i] = f->seg_ptr[f->nseg - 1];
            f->seg_size[i] = f->seg_size[f->nseg - 1];
            f->nseg--;
            f->used -= (int64_t)nbytes;
            f->releases++;
            return;
        }
    ck_abort_msg("release of %p, which is not a segment", ptr);
}

static void *
fake_event_record(void *ctx, void *stream, char *msg, size_t len)
{
    fake *f = ctx;
    if (f->fail_event) {
        snprintf(msg, len, "fakeEventRecord failed: no events today");
        return NULL;
    }
    fake_event *e = malloc(sizeof *e);
    ck_assert_ptr_nonnull(e);
    e->done = 0;
    e->stream = stream;
    ck_assert_int_lt(f->live_events, MAX_SEGS);
    f->events[f->live_events] = e;
    f->live_events++;
    f->events_made++;
    return e;
}

static int
fake_event_query(void *ctx, void *event, char *msg, size_t len)
{
    (void)ctx;
    (void)msg;
    (void)len;
    return ((fake_event *)event)->done;
}

static void
fake_event_destroy(void *ctx, void *event)
{
    fake *f = ctx;
    for (int64_t i = 0; i < f->live_events; i++)
        if (f->events[i] == event) {
            f->events[i] = f->events[--f->live_events];
            free(event);
            return;
        }
    ck_abort_msg("destroy of an unknown event");
}

/* The device catches up: every event recorded so far completes. */
static void
fake_complete_all(fake *f)
{
    for (int64_t i = 0; i < f->live_events; i++)
        f->events[i]->done = 1;
}

static int
fake_synchronize(void *ctx, char *msg, size_t len)
{
    (void)msg;
    (void)len;
    fake *f = ctx;
    f->syncs++;
    fake_complete_all(f);
    return 0;
}

static fake F;

static ops_cache *
new_fake_cache(int64_t capacity)
{
    memset(&F, 0, sizeof F);
    F.next = (uintptr_t)1 << 40;
    F.capacity = capacity;
    ops_cache_backing b = {
        .name = "fake:0",
        .ctx = &F,
        .reserve = fake_reserve,
        .release = fake_release,
        .event_record = fake_event_record,
        .event_query = fake_event_query,
        .event_destroy = fake_event_destroy,
        .synchronize = fake_synchronize,
    };
    ops_cache *c = ops_cache_new(&b);
    ck_assert_ptr_nonnull(c);
    return c;
}

#define S_A ((void *)0x100)
#define S_B ((void *)0x200)
#define S_C ((void *)0x300)
#define MiB ((size_t)1 << 20)

START_TEST(test_cache_rounding)
{
    ck_assert_uint_eq(ops_cache_round_size(0), 512);
    ck_assert_uint_eq(ops_cache_round_size(1), 512);
    ck_assert_uint_eq(ops_cache_round_size(512), 512);
    ck_assert_uint_eq(ops_cache_round_size(513), 1024);
    ck_assert_uint_eq(ops_cache_round_size(MiB + 1), MiB + 512);
    ck_assert_uint_eq(ops_cache_segment_size(512), 2 * MiB);
    ck_assert_uint_eq(ops_cache_segment_size(MiB), 2 * MiB);
    ck_assert_uint_eq(ops_cache_segment_size(MiB + 512), 20 * MiB);
    ck_assert_uint_eq(ops_cache_segment_size(10 * MiB - 512), 20 * MiB);
    ck_assert_uint_eq(ops_cache_segment_size(10 * MiB), 10 * MiB);
    ck_assert_uint_eq(ops_cache_segment_size(10 * MiB + 512), 12 * MiB);
}
END_TEST

START_TEST(test_cache_small_pool)
{
    ops_cache *c = new_fake_cache((int64_t)1 << 40);
    char *p1 = ops_cache_malloc(c, "test", 1000, S_A);
    char *p2 = ops_cache_malloc(c, "test", 1000, S_A);
    char *p3 = ops_cache_malloc(c, "test", 1, S_A);
    ck_assert_ptr_nonnull(p1);
    ck_assert_ptr_eq(p2, p1 + 1024); /* carved from one 2 MiB segment */
    ck_assert_ptr_eq(p3, p2 + 1024);
    ck_assert_uint_eq(ops_cache_block_size(c, p3), 512);
    ops_cache_stats st;
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(F.reserves, 1);
    ck_assert_int_eq(st.reserved_bytes, 2 * MiB);
    ck_assert_int_eq(st.allocated_bytes, 2560);
    ck_assert_int_eq(st.requested_bytes, 2001);
    ck_assert_int_eq(st.num_allocs, 3);
    ck_assert_int_eq(st.num_cache_hits, 2);
    ck_assert_int_eq(st.num_free_blocks, 1);
    /* freed on its stream: reusable there at once */
    ck_assert_int_eq(ops_cache_free(c, "test", p2, S_A), OPS_OK);
    ck_assert_ptr_eq(ops_cache_malloc(c, "test", 700, S_A), p2);
    ck_assert_int_eq(F.reserves, 1);
    /* coalescing: freeing all three gives back one segment-sized block */
    ck_assert_int_eq(ops_cache_free(c, "test", p1, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", p3, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", p2, S_A), OPS_OK);
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.num_free_blocks, 1);
    ck_assert_int_eq(st.allocated_bytes, 0);
    ck_assert_int_eq(st.requested_bytes, 0);
    ck_assert_int_eq(st.peak_allocated_bytes, 2560);
    ck_assert_int_ge(st.num_merges, 2);
    /* a whole-segment request is served by the merged block */
    char *big = ops_cache_malloc(c, "test", MiB, S_A);
    ck_assert_ptr_eq(big, p1);
    ck_assert_int_eq(F.reserves, 1);
    ck_assert_int_eq(ops_cache_free(c, "test", big, S_A), OPS_OK);
    /* empty_cache hands the segment back */
    ck_assert_int_eq(ops_cache_empty(c, "test"), OPS_OK);
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.reserved_bytes, 0);
    ck_assert_int_eq(st.num_segments, 0);
    ck_assert_int_eq(F.releases, 1);
    ck_assert_int_eq(F.nseg, 0);
    ck_assert_int_eq(st.peak_reserved_bytes, 2 * MiB);
    ops_cache_reset_peak(c);
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.peak_reserved_bytes, 0);
    ops_cache_destroy(c);
    ck_assert_int_eq(F.live_events, 0);
}
END_TEST

START_TEST(test_cache_large_pool)
{
    ops_cache *c = new_fake_cache((int64_t)1 << 40);
    /* 3 MiB: a 20 MiB segment, split (17 MiB remain) */
    char *a = ops_cache_malloc(c, "test", 3 * MiB, S_A);
    char *b = ops_cache_malloc(c, "test", 3 * MiB, S_A);
    ck_assert_ptr_eq(b, a + 3 * MiB);
    ck_assert_int_eq(F.reserves, 1);
    /* a request leaving <= 1 MiB of a block is not split: 14 MiB remain, ask 13.5 */
    char *d = ops_cache_malloc(c, "test", 13 * MiB + MiB / 2, S_A);
    ck_assert_ptr_eq(d, b + 3 * MiB);
    ck_assert_uint_eq(ops_cache_block_size(c, d), 14 * MiB);
    ck_assert_int_eq(F.reserves, 1);
    /* small and large pools never share a segment */
    char *s = ops_cache_malloc(c, "test", 4096, S_A);
    ck_assert_int_eq(F.reserves, 2);
    ck_assert(s < a || s >= a + 20 * MiB);
    /* >= 10 MiB: its own segment rounded to 2 MiB; 11 MiB -> 12 MiB, the 1 MiB rest
     * is not split off */
    char *e = ops_cache_malloc(c, "test", 11 * MiB, S_A);
    ck_assert_uint_eq(ops_cache_block_size(c, e), 12 * MiB);
    ck_assert_int_eq(F.reserves, 3);
    ops_cache_stats st;
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.reserved_bytes, (int64_t)(20 * MiB + 2 * MiB + 12 * MiB));
    ck_assert_int_eq(st.allocated_bytes, (int64_t)(3 * MiB + 3 * MiB + 14 * MiB + 4096 + 12 * MiB));
    /* empty_cache keeps segments that hold a live block */
    ck_assert_int_eq(ops_cache_free(c, "test", e, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", b, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_empty(c, "test"), OPS_OK);
    ck_assert_int_eq(F.releases, 1); /* only e's segment */
    ck_assert_int_eq(ops_cache_free(c, "test", a, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", d, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", s, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_empty(c, "test"), OPS_OK);
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.reserved_bytes, 0);
    ck_assert_int_eq(F.nseg, 0);
    ops_cache_destroy(c);
}
END_TEST

START_TEST(test_cache_streams)
{
    ops_cache *c = new_fake_cache((int64_t)1 << 40);
    char *p = ops_cache_malloc(c, "test", 1000, S_A);
    ck_assert_int_eq(ops_cache_free(c, "test", p, S_A), OPS_OK);
    /* another stream: not until an event on A has completed, so a new segment */
    char *q = ops_cache_malloc(c, "test", 1000, S_B);
    ck_assert_int_eq(F.reserves, 2);
    ck_assert(q < p || q >= p + 2 * MiB);
    ck_assert_int_eq(F.events_made, 1);
    ck_assert_int_eq(F.live_events, 1);
    /* A's work completes; B's cached rest gets a fresh (pending) event: stream C takes
     * A's block, and the rest of A's segment moves to C with it */
    fake_complete_all(&F);
    char *r = ops_cache_malloc(c, "test", 1000, S_C);
    ck_assert_ptr_eq(r, p);
    ck_assert_int_eq(F.reserves, 2);
    char *r2 = ops_cache_malloc(c, "test", 1000, S_C);
    ck_assert_ptr_eq(r2, p + 1024);
    /* B's own request takes B's rest at once, whatever its event says */
    char *q2 = ops_cache_malloc(c, "test", 1000, S_B);
    ck_assert_ptr_eq(q2, q + 1024);
    ck_assert_int_eq(F.reserves, 2);
    ops_cache_stats st;
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.num_cache_hits, 3);
    /* freed on different streams, neighbours do not merge */
    ck_assert_int_eq(ops_cache_free(c, "test", r, S_C), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", r2, S_A), OPS_OK);
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.num_free_blocks, 4); /* r, r2, C's rest, B's rest */
    ck_assert_int_eq(ops_cache_free(c, "test", q, S_B), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", q2, S_B), OPS_OK);
    ops_cache_destroy(c);
    ck_assert_int_eq(F.live_events, 0);
    ck_assert_int_eq(F.nseg, 0);
}
END_TEST

/* Completing events needs the fake to know them: a variant that completes every
 * event it records at once (the GPU is idle). */
static void *
fake_event_record_done(void *ctx, void *stream, char *msg, size_t len)
{
    fake_event *e = fake_event_record(ctx, stream, msg, len);
    if (e)
        e->done = 1;
    return e;
}

START_TEST(test_cache_streams_idle)
{
    memset(&F, 0, sizeof F);
    F.next = (uintptr_t)1 << 40;
    F.capacity = (int64_t)1 << 40;
    ops_cache_backing b = {
        .name = "fake:idle",
        .ctx = &F,
        .reserve = fake_reserve,
        .release = fake_release,
        .event_record = fake_event_record_done,
        .event_query = fake_event_query,
        .event_destroy = fake_event_destroy,
        .synchronize = fake_synchronize,
    };
    ops_cache *c = ops_cache_new(&b);
    ck_assert_ptr_nonnull(c);
    char *p = ops_cache_malloc(c, "test", 1000, S_A);
    ck_assert_int_eq(ops_cache_free(c, "test", p, S_A), OPS_OK);
    /* A's work has completed: B takes A's block without a new segment */
    char *q = ops_cache_malloc(c, "test", 1000, S_B);
    ck_assert_ptr_eq(q, p);
    ck_assert_int_eq(F.reserves, 1);
    ck_assert_int_eq(F.live_events, 0); /* dropped when the block changed stream */
    /* the rest of the segment moved to B with it: B's next request is its neighbour */
    char *r = ops_cache_malloc(c, "test", 1000, S_B);
    ck_assert_ptr_eq(r, q + 1024);
    ck_assert_int_eq(F.events_made, 1);
    ck_assert_int_eq(ops_cache_free(c, "test", q, S_B), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", r, S_B), OPS_OK);
    ops_cache_stats st;
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.num_free_blocks, 1);
    /* an event failure is an error naming the backing's reason */
    F.fail_event = 1;
    ck_assert_ptr_null(ops_cache_malloc(c, "test_op", 1000, S_C));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_RUNTIME);
    ck_assert_msg(strstr(ops_last_error(), "test_op") && strstr(ops_last_error(), "no events today"), "%s",
                  ops_last_error());
    F.fail_event = 0;
    ops_cache_destroy(c);
    ck_assert_int_eq(F.live_events, 0);
    ck_assert_int_eq(F.nseg, 0);
}
END_TEST

START_TEST(test_cache_oom)
{
    ops_cache *c = new_fake_cache((int64_t)(24 * MiB));
    char *a = ops_cache_malloc(c, "test", 3 * MiB, S_A); /* 20 MiB segment */
    ck_assert_int_eq(ops_cache_free(c, "test", a, S_A), OPS_OK);
    /* 11 MiB needs a 12 MiB segment: 32 > 24, so the cache is freed and it retries */
    /* on another stream, whose pending work keeps a's block from being reused */
    char *b = ops_cache_malloc(c, "test", 11 * MiB, S_B);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(F.releases, 1);
    ck_assert_int_ge(F.syncs, 1);
    ops_cache_stats before, after;
    ops_cache_get_stats(c, &before);
    ck_assert_int_eq(before.reserved_bytes, 12 * MiB);
    /* 20 MiB cannot fit beside the live 12: an error naming the sizes */
    ck_assert_ptr_null(ops_cache_malloc(c, "zeros", 20 * MiB, S_A));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    const char *m = ops_last_error();
    ck_assert_msg(strstr(m, "zeros: out of memory on fake:0") && strstr(m, "tried to allocate 20971520 bytes") &&
                      strstr(m, "after freeing the cache and retrying") && strstr(m, "12582912 bytes allocated") &&
                      strstr(m, "fakeMalloc failed"),
                  "message: %s", m);
    ops_cache_get_stats(c, &after);
    ck_assert_int_eq(after.num_ooms, 1);
    after.num_ooms = 0;
    ck_assert_mem_eq(&before, &after, sizeof before); /* nothing else changed */
    /* a backing error is not out of memory, and carries the backing's text */
    F.fail_reserve = 1;
    ck_assert_ptr_null(ops_cache_malloc(c, "ones", 100, S_A));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_RUNTIME);
    ck_assert_msg(strstr(ops_last_error(), "ones") && strstr(ops_last_error(), "the fake device is on fire"), "%s",
                  ops_last_error());
    /* a pointer the cache does not own */
    ck_assert_int_eq(ops_cache_free(c, "test", b + 512, S_A), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_cache_free(c, "test", NULL, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", b, S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_free(c, "test", b, S_A), OPS_ERR_VALUE); /* twice */
    /* sizes past the address space */
    ck_assert_ptr_null(ops_cache_malloc(c, "test", SIZE_MAX - 10, S_A));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ops_cache_destroy(c);
    ck_assert_int_eq(F.nseg, 0);
}
END_TEST

START_TEST(test_cache_fault_injection)
{
    /* every host allocation the cache makes may fail: each failure is a clean error
     * and the cache stays usable and consistent */
    for (int64_t n = 1; n < 40; n++) {
        ops_cache *c = new_fake_cache((int64_t)1 << 40);
        void *live[24];
        int nlive = 0;
        ops_alloc_fail_nth(n);
        bool failed = false;
        for (int i = 0; i < 24; i++) {
            void *p = ops_cache_malloc(c, "test", (size_t)(i % 3 == 0 ? 3 * MiB : 700 * (size_t)(i + 1)), S_A);
            if (p == NULL) {
                ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
                failed = true;
                continue;
            }
            live[nlive++] = p;
        }
        ops_alloc_fail_nth(0);
        if (n < 20)
            ck_assert(failed);
        ops_cache_stats st;
        ops_cache_get_stats(c, &st);
        ck_assert_int_eq(st.num_allocs, nlive);
        for (int i = 0; i < nlive; i++)
            ck_assert_int_eq(ops_cache_free(c, "test", live[i], S_A), OPS_OK);
        ck_assert_int_eq(ops_cache_empty(c, "test"), OPS_OK);
        ops_cache_get_stats(c, &st);
        ck_assert_int_eq(st.reserved_bytes, 0);
        ck_assert_int_eq(st.allocated_bytes, 0);
        ops_cache_destroy(c);
        ck_assert_int_eq(F.nseg, 0);
    }
}
END_TEST

/* Random allocations and frees on three streams; after each step the live blocks
 * are disjoint, lie in reserved segments, and the statistics add up. */
START_TEST(test_cache_random)
{
    ops_cache *c = new_fake_cache((int64_t)(400 * MiB));
    enum { N = 300 };
    char *ptr[N] = {0};
    size_t req[N] = {0};
    void *streams[3] = {S_A, S_B, S_C};
    int64_t ooms = 0;
    for (int step = 0; step < 20000; step++) {
        int k = (int)rnd_range(0, N - 1);
        if (ptr[k]) {
            ck_assert_int_eq(ops_cache_free(c, "test", ptr[k], streams[rnd_range(0, 2)]), OPS_OK);
            ptr[k] = NULL;
        } else {
            size_t n = rnd_range(0, 3) ? (size_t)rnd_range(0, 1 << 20) : (size_t)rnd_range(1 << 20, 30 << 20);
            ptr[k] = ops_cache_malloc(c, "test", n, streams[rnd_range(0, 2)]);
            if (ptr[k] == NULL) {
                ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
                ooms++;
            }
            req[k] = n;
        }
        if (step % 97 == 0) {
            int64_t alloc = 0, requested = 0;
            for (int i = 0; i < N; i++) {
                if (!ptr[i])
                    continue;
                size_t bs = ops_cache_block_size(c, ptr[i]);
                ck_assert_uint_ge(bs, ops_cache_round_size(req[i] ? req[i] : 1));
                alloc += (int64_t)bs;
                requested += (int64_t)req[i];
                bool in_seg = false;
                for (int64_t s = 0; s < F.nseg; s++)
                    in_seg = in_seg || ((uintptr_t)ptr[i] >= F.seg_ptr[s] &&
                                        (uintptr_t)ptr[i] + bs <= F.seg_ptr[s] + F.seg_size[s]);
                ck_assert(in_seg);
                for (int j = 0; j < i; j++)
                    if (ptr[j]) {
                        size_t bj = ops_cache_block_size(c, ptr[j]);
                        ck_assert((uintptr_t)ptr[i] + bs <= (uintptr_t)ptr[j] ||
                                  (uintptr_t)ptr[j] + bj <= (uintptr_t)ptr[i]);
                    }
            }
            ops_cache_stats st;
            ops_cache_get_stats(c, &st);
            ck_assert_int_eq(st.allocated_bytes, alloc);
            ck_assert_int_eq(st.requested_bytes, requested);
            ck_assert_int_eq(st.reserved_bytes, F.used);
            ck_assert_int_eq(st.num_segments, F.nseg);
            ck_assert_int_le(st.allocated_bytes, st.reserved_bytes);
            ck_assert_int_ge(st.peak_allocated_bytes, st.allocated_bytes);
            ck_assert_int_eq(st.num_ooms, ooms);
        }
    }
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(ops_cache_free(c, "test", ptr[i], S_A), OPS_OK);
    ck_assert_int_eq(ops_cache_empty(c, "test"), OPS_OK);
    ops_cache_stats st;
    ops_cache_get_stats(c, &st);
    ck_assert_int_eq(st.reserved_bytes, 0);
    ck_assert_int_eq(st.allocated_bytes, 0);
    ck_assert_int_eq(F.nseg, 0);
    ops_cache_destroy(c);
    ck_assert_int_eq(F.live_events, 0);
}
END_TEST

/* ---- without a device ----------------------------------------------------------- */

START_TEST(test_no_device_is_an_error)
{
    if (ops_cuda_device_count() > 0)
        return; /* test_cuda covers a machine with a device */
    ops_cuda_device_properties p;
    ck_assert_int_eq(ops_cuda_get_device_properties(0, &p), OPS_ERR_DEVICE);
    ck_assert_msg(strstr(ops_last_error(), "cuda_get_device_properties") &&
                      (strstr(ops_last_error(), "no CUDA device") || strstr(ops_last_error(), "without CUDA")),
                  "%s", ops_last_error());
    ops_memory_stats ms;
    ck_assert_int_eq(ops_cuda_memory_stats(0, &ms), OPS_ERR_DEVICE);
    ck_assert_int_eq(ops_cuda_empty_cache(0), OPS_ERR_DEVICE);
    ck_assert_int_eq(ops_cuda_reset_peak_memory_stats(0), OPS_ERR_DEVICE);
    ck_assert_ptr_null(ops_cuda_pinned_allocator());
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_int_eq(ops_cuda_pinned_memory_stats(&ms), OPS_ERR_DEVICE);
    ck_assert_int_eq(ops_cuda_pinned_empty_cache(), OPS_ERR_DEVICE);
    ck_assert_ptr_null(ops_tensor_new("zeros", 1, (int64_t[]){4}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0)));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_msg(strstr(ops_last_error(), "zeros"), "%s", ops_last_error());
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("cuda_host");
    TCase *launch = tcase_create("launch");
    tcase_set_timeout(launch, 300);
    tcase_add_test(launch, test_int_divider);
    tcase_add_test(launch, test_offset_calc_random);
    tcase_add_test(launch, test_coalesce_examples);
    tcase_add_test(launch, test_can_use_32bit);
    tcase_add_test(launch, test_split_large);
    tcase_add_test(launch, test_launch_config);
    tcase_add_test(launch, test_vec_width);
    suite_add_tcase(s, launch);
    TCase *cache = tcase_create("cache");
    tcase_set_timeout(cache, 300);
    tcase_add_test(cache, test_cache_rounding);
    tcase_add_test(cache, test_cache_small_pool);
    tcase_add_test(cache, test_cache_large_pool);
    tcase_add_test(cache, test_cache_streams);
    tcase_add_test(cache, test_cache_streams_idle);
    tcase_add_test(cache, test_cache_oom);
    tcase_add_test(cache, test_cache_fault_injection);
    tcase_add_test(cache, test_cache_random);
    suite_add_tcase(s, cache);
    TCase *dev = tcase_create("device");
    tcase_add_test(dev, test_no_device_is_an_error);
    suite_add_tcase(s, dev);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

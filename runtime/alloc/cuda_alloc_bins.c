/* The caching allocator's bins, splitting, coalescing and stream-ordered reuse
 * (ops_cache_alloc.h), independent of CUDA: the backend gives it segments and
 * events through ops_cache_backing.
 *
 * Layout: every block (live or cached) is a node in a doubly linked list of the
 * blocks of its segment, in address order, so a freed block finds its neighbours in
 * O(1).  A segment is fully free when one free block has no neighbours.  Cached
 * blocks sit in one array per pool sorted by (stream, size, address), so the best
 * fit on a stream is a binary search; live blocks sit in an array sorted by address
 * for ops_cache_free.  The arrays always have room for every block that exists plus
 * the two a malloc may create, and malloc allocates its two spare block headers
 * before it changes anything, so free never allocates and never fails for lack of
 * memory, and a failed malloc leaves the cache as it was. */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops_cache_alloc.h"
#include "ops_internal.h"

typedef struct cblock cblock;
struct cblock {
    char *ptr;
    size_t size;
    size_t requested; /* live blocks: the caller's size */
    cblock *prev, *next; /* neighbours in the segment */
    void *stream;        /* the stream whose work last used the block */
    void *event;         /* cached blocks: an event on stream, or NULL */
    bool live;
    bool small;          /* pool */
};

typedef struct cpool {
    cblock **free; /* sorted by (stream, size, ptr) */
    int64_t nfree;
} cpool;

struct ops_cache {
    ops_cache_backing b;
    pthread_mutex_t lock;
    cpool pools[2]; /* [1]: small */
    cblock **live;  /* sorted by ptr */
    int64_t nlive;
    int64_t nblocks; /* block headers in use (live or cached) */
    int64_t cap;     /* capacity of live and of each pool array */
    cblock *spare;   /* unused block headers, linked through next */
    ops_cache_stats st;
};

#define MSG_LEN 256

size_t
ops_cache_round_size(size_t nbytes)
{
    if (nbytes < OPS_CACHE_MIN_BLOCK)
        return OPS_CACHE_MIN_BLOCK;
    if (nbytes > SIZE_MAX - OPS_CACHE_MIN_BLOCK)
        return 0; /* unrepresentable: the caller reports out of memory */
    return (nbytes + OPS_CACHE_MIN_BLOCK - 1) / OPS_CACHE_MIN_BLOCK * OPS_CACHE_MIN_BLOCK;
}

size_t
ops_cache_segment_size(size_t rounded)
{
    if (rounded <= OPS_CACHE_SMALL_SIZE)
        return OPS_CACHE_SMALL_SEGMENT;
    if (rounded < OPS_CACHE_MIN_LARGE_ALLOC)
        return OPS_CACHE_LARGE_SEGMENT;
    if (rounded > SIZE_MAX - OPS_CACHE_ROUND_LARGE)
        return 0;
    return (rounded + OPS_CACHE_ROUND_LARGE - 1) / OPS_CACHE_ROUND_LARGE * OPS_CACHE_ROUND_LARGE;
}

/* ---- sorted arrays ---------------------------------------------------------- */

static int
free_cmp(const cblock *a, uintptr_t stream, size_t size, uintptr_t ptr)
{
    uintptr_t as = (uintptr_t)a->stream, ap = (uintptr_t)a->ptr;
    if (as != stream)
        return as < stream ? -1 : 1;
    if (a->size != size)
        return a->size < size ? -1 : 1;
    if (ap != ptr)
        return ap < ptr ? -1 : 1;
    return 0;
}

/* First index whose key is >= (stream, size, ptr). */
static int64_t
free_lower_bound(const cpool *p, void *stream, size_t size, const char *ptr)
{
    int64_t lo = 0, hi = p->nfree;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (free_cmp(p->free[mid], (uintptr_t)stream, size, (uintptr_t)ptr) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void
free_insert(ops_cache *c, cblock *blk)
{
    cpool *p = &c->pools[blk->small];
    int64_t i = free_lower_bound(p, blk->stream, blk->size, blk->ptr);
    memmove(p->free + i + 1, p->free + i, (size_t)(p->nfree - i) * sizeof *p->free);
    p->free[i] = blk;
    p->nfree++;
    c->st.num_free_blocks++;
}

static void
free_remove(ops_cache *c, cblock *blk)
{
    cpool *p = &c->pools[blk->small];
    int64_t i = free_lower_bound(p, blk->stream, blk->size, blk->ptr);
    /* the key is unique (one block per address), so i is blk */
    memmove(p->free + i, p->free + i + 1, (size_t)(p->nfree - i - 1) * sizeof *p->free);
    p->nfree--;
    c->st.num_free_blocks--;
}

static int64_t
live_lower_bound(const ops_cache *c, const char *ptr)
{
    int64_t lo = 0, hi = c->nlive;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)c->live[mid]->ptr < (uintptr_t)ptr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void
live_insert(ops_cache *c, cblock *blk)
{
    int64_t i = live_lower_bound(c, blk->ptr);
    memmove(c->live + i + 1, c->live + i, (size_t)(c->nlive - i) * sizeof *c->live);
    c->live[i] = blk;
    c->nlive++;
}

/* The live block at ptr, removed from the array, or NULL. */
static cblock *
live_take(ops_cache *c, const char *ptr)
{
    int64_t i = live_lower_bound(c, ptr);
    if (i == c->nlive || c->live[i]->ptr != ptr)
        return NULL;
    cblock *blk = c->live[i];
    memmove(c->live + i, c->live + i + 1, (size_t)(c->nlive - i - 1) * sizeof *c->live);
    c->nlive--;
    return blk;
}

/* Room in every array for `more` blocks beyond those that exist. */
static bool
reserve_capacity(ops_cache *c, int64_t more)
{
    int64_t need = c->nblocks + more;
    if (need <= c->cap)
        return true;
    int64_t cap = c->cap < 16 ? 16 : c->cap;
    while (cap < need)
        cap *= 2;
    /* a failure leaves the arrays grown so far larger than cap says: harmless */
    cblock ***slots[3] = {&c->live, &c->pools[0].free, &c->pools[1].free};
    for (int i = 0; i < 3; i++) {
        cblock **n = ops_host_realloc(*slots[i], (size_t)cap * sizeof *n);
        if (n == NULL)
            return false;
        *slots[i] = n;
    }
    c->cap = cap;
    return true;
}

/* Two spare block headers on c->spare. */
static bool
reserve_spares(ops_cache *c)
{
    int have = 0;
    for (cblock *s = c->spare; s && have < 2; s = s->next)
        have++;
    for (; have < 2; have++) {
        cblock *s = ops_host_malloc(sizeof *s);
        if (s == NULL)
            return false;
        s->next = c->spare;
        c->spare = s;
    }
    return true;
}

static cblock *
take_spare(ops_cache *c)
{
    cblock *s = c->spare;
    c->spare = s->next;
    memset(s, 0, sizeof *s);
    c->nblocks++;
    return s;
}

static void
put_spare(ops_cache *c, cblock *s)
{
    s->next = c->spare;
    c->spare = s;
    c->nblocks--;
}

static void
drop_event(ops_cache *c, cblock *blk)
{
    if (blk->event) {
        c->b.event_destroy(c->b.ctx, blk->event);
        blk->event = NULL;
    }
}

/* ---- lifecycle -------------------------------------------------------------- */

ops_cache *
ops_cache_new(const ops_cache_backing *backing)
{
    ops_cache *c = ops_host_malloc(sizeof *c);
    if (c == NULL)
        return ops_fail_null(OPS_ERR_OOM, "cache allocator: out of memory creating the cache for %s",
                             backing->name);
    memset(c, 0, sizeof *c);
    c->b = *backing;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        ops_host_free(c);
        return ops_fail_null(OPS_ERR_RUNTIME, "cache allocator: cannot create a mutex for %s", backing->name);
    }
    return c;
}

/* After a synchronize every cached block is idle, whatever stream freed it: merge
 * cached neighbours that differ in stream too (the merged block keeps the lower
 * one's stream), so that a segment freed in pieces on several streams is whole. */
static void
merge_idle_neighbours(ops_cache *c)
{
    for (int pool = 0; pool < 2; pool++) {
        cpool *p = &c->pools[pool];
        for (int64_t i = 0; i < p->nfree;) {
            cblock *blk = p->free[i], *nb = blk->next;
            if (nb == NULL || nb->live) {
                i++;
                continue;
            }
            free_remove(c, blk);
            free_remove(c, nb);
            drop_event(c, blk);
            drop_event(c, nb);
            blk->next = nb->next;
            if (nb->next)
                nb->next->prev = blk;
            blk->size += nb->size;
            put_spare(c, nb);
            c->st.num_merges++;
            free_insert(c, blk);
            i = 0; /* the array moved under us: start over (rare, and short) */
        }
    }
}

/* Release the fully free segments of both pools (their work has completed: the
 * caller synchronized).  Segments with a live block stay. */
static void
release_free_segments(ops_cache *c)
{
    merge_idle_neighbours(c);
    for (int pool = 0; pool < 2; pool++) {
        cpool *p = &c->pools[pool];
        for (int64_t i = 0; i < p->nfree;) {
            cblock *blk = p->free[i];
            if (blk->prev || blk->next) {
                i++;
                continue;
            }
            free_remove(c, blk);
            drop_event(c, blk);
            c->b.release(c->b.ctx, blk->ptr, blk->size);
            c->st.reserved_bytes -= (int64_t)blk->size;
            c->st.num_segments--;
            c->st.num_releases++;
            put_spare(c, blk);
        }
    }
}

void
ops_cache_destroy(ops_cache *c)
{
    if (c == NULL)
        return;
    char msg[MSG_LEN];
    if (c->b.synchronize)
        (void)c->b.synchronize(c->b.ctx, msg, sizeof msg);
    /* live blocks: the owner is done with them; hand them back so their segments
     * become free, then release everything */
    while (c->nlive > 0) {
        cblock *blk = c->live[c->nlive - 1];
        (void)ops_cache_free(c, "cache allocator", blk->ptr, blk->stream);
    }
    release_free_segments(c);
    while (c->spare) {
        cblock *s = c->spare;
        c->spare = s->next;
        ops_host_free(s);
    }
    ops_host_free(c->live);
    ops_host_free(c->pools[0].free);
    ops_host_free(c->pools[1].free);
    pthread_mutex_destroy(&c->lock);
    ops_host_free(c);
}

/* ---- malloc ----------------------------------------------------------------- */

/* A cached block of the pool that can serve size on stream, out of the free array,
 * or NULL.  Same stream: the best fit at once.  Another stream: the smallest block
 * whose event (recorded on its stream now if it has none) has completed; taking it
 * moves it to stream.  *err is set (and NULL returned) when the backing fails. */
static cblock *
find_cached(ops_cache *c, cpool *p, size_t size, void *stream, char *msg, bool *err)
{
    int64_t i = free_lower_bound(p, stream, size, NULL);
    if (i < p->nfree && p->free[i]->stream == stream) {
        cblock *blk = p->free[i];
        free_remove(c, blk);
        drop_event(c, blk);
        return blk;
    }
    if (c->b.event_record == NULL)
        return NULL;
    cblock *best = NULL;
    for (int64_t j = 0; j < p->nfree; j++) {
        cblock *blk = p->free[j];
        if (blk->stream == stream || blk->size < size || (best && blk->size >= best->size))
            continue;
        if (blk->event == NULL) {
            blk->event = c->b.event_record(c->b.ctx, blk->stream, msg, MSG_LEN);
            if (blk->event == NULL) {
                *err = true;
                return NULL;
            }
        }
        int done = c->b.event_query(c->b.ctx, blk->event, msg, MSG_LEN);
        if (done < 0) {
            *err = true;
            return NULL;
        }
        if (done)
            best = blk;
    }
    if (best) {
        free_remove(c, best);
        drop_event(c, best);
        best->stream = stream; /* its old stream's work on it has completed */
    }
    return best;
}

/* Split blk (taken out of the free arrays) so that its first `size` bytes serve the
 * request, when the pool's rule allows; the rest goes back to the cache. */
static void
maybe_split(ops_cache *c, cblock *blk, size_t size)
{
    size_t rest = blk->size - size;
    bool split = blk->small ? rest >= OPS_CACHE_MIN_BLOCK : rest > OPS_CACHE_SMALL_SIZE;
    if (!split)
        return;
    cblock *r = take_spare(c);
    r->ptr = blk->ptr + size;
    r->size = rest;
    r->stream = blk->stream;
    r->small = blk->small;
    r->prev = blk;
    r->next = blk->next;
    if (blk->next)
        blk->next->prev = r;
    blk->next = r;
    blk->size = size;
    free_insert(c, r);
    c->st.num_splits++;
}

static void
note_peaks(ops_cache *c)
{
    if (c->st.allocated_bytes > c->st.peak_allocated_bytes)
        c->st.peak_allocated_bytes = c->st.allocated_bytes;
    if (c->st.reserved_bytes > c->st.peak_reserved_bytes)
        c->st.peak_reserved_bytes = c->st.reserved_bytes;
}

void *
ops_cache_malloc(ops_cache *c, const char *op, size_t nbytes, void *stream)
{
    op = op ? op : "cache allocator";
    const size_t size = ops_cache_round_size(nbytes ? nbytes : 1);
    const size_t seg_size = size ? ops_cache_segment_size(size) : 0;
    if (size == 0 || seg_size == 0)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory on %s: cannot allocate %zu bytes", op,
                             c->b.name, nbytes);
    if (ops_alloc_inject_failure())
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory on %s: tried to allocate %zu bytes (injected failure)",
                             op, c->b.name, nbytes);
    char msg[MSG_LEN] = "";
    void *result = NULL;
    pthread_mutex_lock(&c->lock);
    if (!reserve_capacity(c, 2) || !reserve_spares(c)) {
        ops_fail(OPS_ERR_OOM, "%s: out of memory on the host while allocating %zu bytes on %s", op, nbytes,
                 c->b.name);
        goto done;
    }
    const bool small = size <= OPS_CACHE_SMALL_SIZE;
    bool err = false;
    cblock *blk = find_cached(c, &c->pools[small], size, stream, msg, &err);
    if (err) {
        ops_fail(OPS_ERR_RUNTIME, "%s: %s: %s", op, c->b.name, msg);
        goto done;
    }
    if (blk) {
        c->st.num_cache_hits++;
    } else {
        void *seg = NULL;
        ops_cache_reserve_result r = c->b.reserve(c->b.ctx, seg_size, &seg, msg, sizeof msg);
        if (r == OPS_CACHE_OUT_OF_MEMORY) {
            /* free the cache (after the device's work on it) and try once more */
            int sync = c->b.synchronize ? c->b.synchronize(c->b.ctx, msg, sizeof msg) : 0;
            if (sync != 0) {
                ops_fail(OPS_ERR_RUNTIME, "%s: %s: %s", op, c->b.name, msg);
                goto done;
            }
            release_free_segments(c);
            r = c->b.reserve(c->b.ctx, seg_size, &seg, msg, sizeof msg);
        }
        if (r == OPS_CACHE_OUT_OF_MEMORY) {
            c->st.num_ooms++;
            ops_fail(OPS_ERR_OOM,
                     "%s: out of memory on %s: tried to allocate %zu bytes (a %zu-byte block in a new "
                     "%zu-byte segment) after freeing the cache and retrying; %" PRId64
                     " bytes allocated, %" PRId64 " bytes reserved%s%s",
                     op, c->b.name, nbytes, size, seg_size, c->st.allocated_bytes, c->st.reserved_bytes,
                     msg[0] ? ": " : "", msg);
            goto done;
        }
        if (r != OPS_CACHE_RESERVED) {
            ops_fail(OPS_ERR_RUNTIME, "%s: %s: %s", op, c->b.name, msg[0] ? msg : "reserving memory failed");
            goto done;
        }
        blk = take_spare(c);
        blk->ptr = seg;
        blk->size = seg_size;
        blk->stream = stream;
        blk->small = small;
        c->st.reserved_bytes += (int64_t)seg_size;
        c->st.num_segments++;
        c->st.num_reserves++;
    }
    maybe_split(c, blk, size);
    blk->live = true;
    blk->requested = nbytes;
    live_insert(c, blk);
    c->st.allocated_bytes += (int64_t)blk->size;
    c->st.requested_bytes += (int64_t)nbytes;
    c->st.num_allocs++;
    note_peaks(c);
    result = blk->ptr;
done:
    pthread_mutex_unlock(&c->lock);
    return result;
}

/* ---- free ------------------------------------------------------------------- */

/* Merge the cached neighbour nb into blk when both are cached on the same stream
 * (events are dropped: recording anew on that stream covers the work of both). */
static void
try_merge(ops_cache *c, cblock *blk, cblock *nb)
{
    if (nb == NULL || nb->live || nb->stream != blk->stream)
        return;
    free_remove(c, nb);
    drop_event(c, nb);
    if (nb == blk->prev) {
        blk->ptr = nb->ptr;
        blk->prev = nb->prev;
        if (nb->prev)
            nb->prev->next = blk;
    } else {
        blk->next = nb->next;
        if (nb->next)
            nb->next->prev = blk;
    }
    blk->size += nb->size;
    put_spare(c, nb);
    c->st.num_merges++;
}

ops_status
ops_cache_free(ops_cache *c, const char *op, void *ptr, void *stream)
{
    if (ptr == NULL)
        return OPS_OK;
    op = op ? op : "cache allocator";
    pthread_mutex_lock(&c->lock);
    cblock *blk = live_take(c, ptr);
    if (blk == NULL) {
        pthread_mutex_unlock(&c->lock);
        return ops_fail(OPS_ERR_VALUE, "%s: %p is not a live allocation of %s", op, ptr, c->b.name);
    }
    c->st.allocated_bytes -= (int64_t)blk->size;
    c->st.requested_bytes -= (int64_t)blk->requested;
    c->st.num_frees++;
    blk->live = false;
    blk->requested = 0;
    blk->stream = stream;
    try_merge(c, blk, blk->prev);
    try_merge(c, blk, blk->next);
    free_insert(c, blk);
    pthread_mutex_unlock(&c->lock);
    return OPS_OK;
}

size_t
ops_cache_block_size(ops_cache *c, void *ptr)
{
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    int64_t i = live_lower_bound(c, ptr);
    if (i < c->nlive && c->live[i]->ptr == (char *)ptr)
        n = c->live[i]->size;
    pthread_mutex_unlock(&c->lock);
    return n;
}

ops_status
ops_cache_empty(ops_cache *c, const char *op)
{
    char msg[MSG_LEN] = "";
    ops_status st = OPS_OK;
    pthread_mutex_lock(&c->lock);
    if (c->b.synchronize && c->b.synchronize(c->b.ctx, msg, sizeof msg) != 0)
        st = ops_fail(OPS_ERR_RUNTIME, "%s: %s: %s", op ? op : "empty_cache", c->b.name, msg);
    else
        release_free_segments(c);
    pthread_mutex_unlock(&c->lock);
    return st;
}

void
ops_cache_get_stats(ops_cache *c, ops_cache_stats *out)
{
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
}

void
ops_cache_reset_peak(ops_cache *c)
{
    pthread_mutex_lock(&c->lock);
    c->st.peak_allocated_bytes = c->st.allocated_bytes;
    c->st.peak_reserved_bytes = c->st.reserved_bytes;
    pthread_mutex_unlock(&c->lock);
}

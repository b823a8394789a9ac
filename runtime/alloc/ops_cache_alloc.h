/* The caching allocator behind CUDA device memory and CUDA pinned host memory,
 * written over a small "backing allocator" interface so that it knows nothing of
 * CUDA: kernels/cuda/cuda_alloc.cu backs it with cudaMalloc/cudaHostAlloc and CUDA
 * events, tests/unit/test_cuda_host.c with a fake address space on the host.
 *
 * The policy is PyTorch's CUDACachingAllocator's:
 * - requests round up to 512 B; those up to 1 MiB are "small" and are carved from
 *   2 MiB segments, larger ones are "large" and come from 20 MiB segments (requests
 *   below 10 MiB) or from segments of the request rounded up to 2 MiB;
 * - a free block larger than the request is split (small pool: when at least 512 B
 *   remain; large pool: when more than 1 MiB remains) and freed neighbours in one
 *   segment coalesce again;
 * - frees are stream-ordered: a block freed on stream S is reusable by requests on S
 *   at once (S's later work runs after the work that used it), and by requests on
 *   another stream only after an event recorded on S has completed;
 * - a failed reservation frees every unused cached segment and retries once, then
 *   fails with an error naming the sizes;
 * - empty_cache hands every segment with no live block back to the backing.
 * Thread-safe (one mutex per cache). */
#ifndef OPS_CACHE_ALLOC_H
#define OPS_CACHE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPS_CACHE_MIN_BLOCK ((size_t)512)                    /* every size rounds to this */
#define OPS_CACHE_SMALL_SIZE ((size_t)1 << 20)               /* largest "small" request */
#define OPS_CACHE_SMALL_SEGMENT ((size_t)2 << 20)            /* segment of the small pool */
#define OPS_CACHE_MIN_LARGE_ALLOC ((size_t)10 << 20)         /* below: one shared segment */
#define OPS_CACHE_LARGE_SEGMENT ((size_t)20 << 20)           /* that shared large segment */
#define OPS_CACHE_ROUND_LARGE ((size_t)2 << 20)              /* larger segments round to it */

/* What reserve reports. */
typedef enum ops_cache_reserve_result {
    OPS_CACHE_RESERVED = 0,
    OPS_CACHE_OUT_OF_MEMORY = 1, /* worth freeing the cache and retrying */
    OPS_CACHE_BACKING_ERROR = 2, /* anything else: msg says what */
} ops_cache_reserve_result;

/* The memory and event primitives of a backend.  Streams and events are opaque
 * pointers (a NULL stream is a valid stream: CUDA's default one).  Every function
 * writes a NUL-terminated reason into msg (of msg_len bytes) when it fails. */
typedef struct ops_cache_backing {
    const char *name; /* for messages: "cuda:0", "cuda pinned host" */
    void *ctx;
    /* A new segment of nbytes at *out. */
    ops_cache_reserve_result (*reserve)(void *ctx, size_t nbytes, void **out, char *msg, size_t msg_len);
    /* Give a segment back; the cache has waited for its work (synchronize). */
    void (*release)(void *ctx, void *ptr, size_t nbytes);
    /* An event recorded now on stream, or NULL with msg set.  May be NULL itself:
     * the backend has one stream and blocks never change stream. */
    void *(*event_record)(void *ctx, void *stream, char *msg, size_t msg_len);
    /* 1: the work before the event has completed; 0: not yet; -1: error (msg). */
    int (*event_query)(void *ctx, void *event, char *msg, size_t msg_len);
    void (*event_destroy)(void *ctx, void *event);
    /* Wait for all work of the device; 0 or -1 with msg set.  May be NULL. */
    int (*synchronize)(void *ctx, char *msg, size_t msg_len);
} ops_cache_backing;

/* Statistics of one cache (ops_memory_stats, in ops_cuda.h). */
typedef ops_memory_stats ops_cache_stats;

typedef struct ops_cache ops_cache;

/* Size a request of nbytes is rounded to (at least 512 B, a multiple of 512). */
size_t ops_cache_round_size(size_t nbytes);
/* Size of the segment reserved for a (rounded) request when no cached block fits. */
size_t ops_cache_segment_size(size_t rounded);

/* A new, empty cache over backing (copied), or NULL with OPS_ERR_OOM set. */
ops_cache *ops_cache_new(const ops_cache_backing *backing);
/* Releases every segment (live blocks included: the caller is done with them) and
 * frees the cache.  NULL is a no-op. */
void ops_cache_destroy(ops_cache *c);
/* nbytes (0 counts as 1) for use on stream, or NULL with the error set: OPS_ERR_OOM
 * naming op and the sizes, or OPS_ERR_RUNTIME with the backing's reason. */
void *ops_cache_malloc(ops_cache *c, const char *op, size_t nbytes, void *stream);
/* Return ptr, freed in the order of stream (the stream it was last used on).
 * OPS_ERR_VALUE if ptr is not a live block of c; NULL is a no-op. */
ops_status ops_cache_free(ops_cache *c, const char *op, void *ptr, void *stream);
/* Size of the block that holds the live pointer ptr, or 0. */
size_t ops_cache_block_size(ops_cache *c, void *ptr);
/* Hand every segment without a live block back to the backing (after synchronize). */
ops_status ops_cache_empty(ops_cache *c, const char *op);
void ops_cache_get_stats(ops_cache *c, ops_cache_stats *out);
/* The peaks restart from the current values. */
void ops_cache_reset_peak(ops_cache *c);

#ifdef __cplusplus
}
#endif

#endif /* OPS_CACHE_ALLOC_H */

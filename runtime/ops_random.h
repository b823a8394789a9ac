/* libops public API: random number generators.
 *
 * Every random op draws from a counter-based Philox4x32-10 generator (Salmon, Moraes,
 * Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the generator
 * of Random123, cuRAND and PyTorch's CUDA backend).  Its state is two numbers:
 *
 *   seed    the 64-bit Philox key: key[0] = low 32 bits, key[1] = high 32 bits;
 *   offset  the index of the next unused 128-bit block.
 *
 * Block b of a generator is philox4x32_10(counter, key) with counter = {low 32 bits of
 * b, high 32 bits of b, 0, 0}: four 32-bit words.  An op that needs `k` words per
 * element (k = 1, 2 or 4, fixed by the op and dtype) reserves ceil(n * k / 4) blocks
 * starting at the generator's offset `o` and gives element i (in row-major order of the
 * result) the words i*k .. i*k + k - 1 of the stream, i.e. block o + (i*k)/4, lanes
 * (i*k)%4 ..; since k divides 4, an element's words never straddle two blocks (normal
 * samples come in Box-Muller pairs: elements 2m and 2m + 1 share their 2k words).  So a
 * value depends only on (seed, offset, i), never on the thread count or the schedule,
 * and a CUDA kernel computing the same block for the same i reproduces it: bit for bit
 * for integers, bernoulli and uniforms, to its libm's rounding for normal and
 * exponential samples.  randperm and multinomial document their own use of the stream
 * (kernels/cpu/random.c).
 *
 * Taking an offset range is guarded by a mutex, so several threads may share one
 * generator (each op then gets its own disjoint range).  The default generator is
 * process-wide; ops take a `Generator? generator` argument (NULL: the default). */
#ifndef OPS_RANDOM_H
#define OPS_RANDOM_H

#include <stdint.h>

#include "ops_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (ops_base.h declares the same typedef; C11 allows the repetition.) */
typedef struct ops_generator ops_generator;

/* The seed the default generator starts with (PyTorch's default CPU seed). */
#define OPS_DEFAULT_RNG_SEED 67280421310721ull

/* A new generator at (seed, offset 0); NULL with OPS_ERR_OOM set when memory runs out.
 * Release it with ops_generator_release. */
OPS_API ops_generator *ops_generator_create(uint64_t seed);
/* Free a generator from ops_generator_create/clone; NULL and the default generator
 * are no-ops. */
OPS_API void ops_generator_release(ops_generator *g);
/* A new generator with g's seed and offset (NULL: the default's); NULL on OOM. */
OPS_API ops_generator *ops_generator_clone(const ops_generator *g);
/* The process-wide generator ops use when given NULL; never released. */
OPS_API ops_generator *ops_default_generator(void);
/* Reseed the default generator (offset back to 0), as torch.manual_seed. */
OPS_API void ops_manual_seed(uint64_t seed);

/* Getters and setters; NULL means the default generator.  Setting the seed resets
 * the offset to 0 (a fresh stream), as PyTorch's manual_seed does. */
OPS_API uint64_t ops_generator_seed(const ops_generator *g);
OPS_API void ops_generator_set_seed(ops_generator *g, uint64_t seed);
OPS_API uint64_t ops_generator_offset(const ops_generator *g);
OPS_API void ops_generator_set_offset(ops_generator *g, uint64_t offset);

/* ---- for kernel authors ------------------------------------------------------ */

/* What a kernel draws from: the key and the first block of a reserved range. */
typedef struct ops_philox_stream {
    uint32_t key[2];
    uint64_t base; /* block index of the stream's word 0 */
} ops_philox_stream;

/* Atomically take `nblocks` blocks from g (NULL: the default generator): *s gets the
 * key and the first block, and g's offset advances by nblocks (wrapping mod 2^64). */
OPS_API void ops_generator_reserve(ops_generator *g, uint64_t nblocks, ops_philox_stream *s);

/* Blocks for n elements of k words each (k in 1, 2, 4). */
static inline uint64_t
ops_philox_blocks_for(int64_t n, int k)
{
    return ((uint64_t)n * (uint64_t)k + 3u) / 4u;
}

#if defined(__CUDACC__)
#define OPS_RANDOM_HD_ static inline __host__ __device__
#else
#define OPS_RANDOM_HD_ static inline
#endif

/* One Philox4x32 round: two 32x32->64 multiplies, the high halves xored with the
 * other counter words and the key. */
OPS_RANDOM_HD_ void
ops_philox4x32_round_(uint32_t c[4], const uint32_t k[2])
{
    const uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    const uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    const uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    const uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    const uint32_t n0 = hi1 ^ c[1] ^ k[0];
    const uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

/* Philox4x32-10: out = the block for counter ctr under key (ten rounds, the key
 * bumped by the Weyl constants 0x9E3779B9 and 0xBB67AE85 between rounds). */
OPS_RANDOM_HD_ void
ops_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
        ops_philox4x32_round_(c, k);
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
}

/* Block `b` of stream s (block s->base + b). */
OPS_RANDOM_HD_ void
ops_philox_block(const ops_philox_stream *s, uint64_t b, uint32_t out[4])
{
    const uint64_t idx = s->base + b;
    const uint32_t ctr[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), 0u, 0u};
    ops_philox4x32_10(ctr, s->key, out);
}

/* Uniform in [0, 1) from the top 24 (float) or 53 (double) bits: multiples of 2^-24
 * or 2^-53, so 1 is never returned. */
OPS_RANDOM_HD_ float
ops_uniform24(uint32_t w)
{
    return (float)(w >> 8) * (1.0f / 16777216.0f);
}

OPS_RANDOM_HD_ double
ops_uniform53(uint32_t lo, uint32_t hi)
{
    const uint64_t v = ((uint64_t)hi << 32 | lo) >> 11;
    return (double)v * (1.0 / 9007199254740992.0);
}

#ifdef __cplusplus
}
#endif
#endif /* OPS_RANDOM_H */

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
 * (kernels/cpu/random.c).  include/libops/ops_philox.h has the block function and the
 * mappings from words to values that both backends compile.
 *
 * Taking an offset range is guarded by a mutex, so several threads may share one
 * generator (each op then gets its own disjoint range).  The default generator is
 * process-wide; ops take a `Generator? generator` argument (NULL: the default). */
#ifndef OPS_RANDOM_H
#define OPS_RANDOM_H

#include <stdint.h>

#include "ops_base.h"
#include "ops_philox.h"

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
/* Reseed the default generator and every cuda:N default (offsets back to 0), as
 * torch.manual_seed. */
OPS_API void ops_manual_seed(uint64_t seed);

/* Getters and setters; NULL means the default generator.  Setting the seed resets
 * the offset to 0 (a fresh stream), as PyTorch's manual_seed does. */
OPS_API uint64_t ops_generator_seed(const ops_generator *g);
OPS_API void ops_generator_set_seed(ops_generator *g, uint64_t seed);
OPS_API uint64_t ops_generator_offset(const ops_generator *g);
OPS_API void ops_generator_set_offset(ops_generator *g, uint64_t offset);

/* ---- for kernel authors ------------------------------------------------------ */

/* Atomically take `nblocks` blocks from g (NULL: the default generator): *s gets the
 * key and the first block, and g's offset advances by nblocks (wrapping mod 2^64).
 * ops_philox.h has the stream type and the block function. */
OPS_API void ops_generator_reserve(ops_generator *g, uint64_t nblocks, ops_philox_stream *s);

/* The generator an op on `device` draws from when given none: the CPU default for
 * cpu (and an unspecified device), else cuda:N's own default generator, which starts
 * at the CPU's default seed and is reseeded by ops_manual_seed with the CPU's (as
 * torch.manual_seed seeds every device); never released.  NULL with OPS_ERR_DEVICE
 * for an index past the devices a process can have.  A generator is not tied to a
 * device: a CUDA op given one draws the same stream as a CPU op would. */
OPS_API ops_generator *ops_device_default_generator(ops_device device);

#ifdef __cplusplus
}
#endif
#endif /* OPS_RANDOM_H */

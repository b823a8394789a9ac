/* Random number generators: the ops_generator objects of ops_random.h (seed, offset,
 * a mutex around taking an offset range), the process-wide default generator
 * and cuda:N's default generators.  The Philox block function itself is inline in
 * ops_philox.h, so that kernels (CPU and CUDA) compute blocks without a call. */
#include <pthread.h>
#include <stdlib.h>

#include "ops_internal.h"
#include "ops_random.h"

struct ops_generator {
    pthread_mutex_t lock; /* guards seed and offset */
    uint64_t seed;
    uint64_t offset; /* next unused 128-bit block */
    bool is_default; /* the static default generator: never freed */
};

static ops_generator g_default = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .seed = OPS_DEFAULT_RNG_SEED,
    .offset = 0,
    .is_default = true,
};

/* cuda:N's default generators (PyTorch keeps one per device).  Static, so that
 * looking one up never allocates or fails; a device that never draws leaves its
 * generator untouched at the default seed. */
#define RANDOM_MAX_DEVICES 16
static ops_generator g_cuda_default[RANDOM_MAX_DEVICES] = {
    [0 ... RANDOM_MAX_DEVICES - 1] = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .seed = OPS_DEFAULT_RNG_SEED,
        .offset = 0,
        .is_default = true,
    },
};

ops_generator *
ops_default_generator(void)
{
    return &g_default;
}

ops_generator *
ops_device_default_generator(ops_device device)
{
    if (device.type != OPS_CUDA)
        return &g_default;
    if (device.index < 0 || device.index >= RANDOM_MAX_DEVICES)
        return ops_fail_null(OPS_ERR_DEVICE, "generator: no default generator for cuda:%d (at most %d devices)",
                             device.index, RANDOM_MAX_DEVICES);
    return &g_cuda_default[device.index];
}

/* NULL stands for the default generator everywhere in this API. */
static ops_generator *
resolve(const ops_generator *g)
{
    return g != NULL ? (ops_generator *)g : &g_default;
}

ops_generator *
ops_generator_create(uint64_t seed)
{
    ops_generator *g = ops_host_malloc(sizeof *g);
    if (g == NULL)
        return ops_fail_null(OPS_ERR_OOM, "generator: out of memory");
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        ops_host_free(g);
        return ops_fail_null(OPS_ERR_RUNTIME, "generator: cannot create its mutex");
    }
    g->seed = seed;
    g->offset = 0;
    g->is_default = false;
    return g;
}

void
ops_generator_release(ops_generator *g)
{
    if (g == NULL || g->is_default)
        return;
    pthread_mutex_destroy(&g->lock);
    ops_host_free(g);
}

ops_generator *
ops_generator_clone(const ops_generator *src)
{
    ops_generator *s = resolve(src);
    pthread_mutex_lock(&s->lock);
    const uint64_t seed = s->seed, offset = s->offset;
    pthread_mutex_unlock(&s->lock);
    ops_generator *g = ops_generator_create(seed);
    if (g != NULL)
        g->offset = offset;
    return g;
}

void
ops_manual_seed(uint64_t seed)
{
    ops_generator_set_seed(&g_default, seed);
    for (int i = 0; i < RANDOM_MAX_DEVICES; i++)
        ops_generator_set_seed(&g_cuda_default[i], seed);
}

uint64_t
ops_generator_seed(const ops_generator *g)
{
    ops_generator *s = resolve(g);
    pthread_mutex_lock(&s->lock);
    const uint64_t v = s->seed;
    pthread_mutex_unlock(&s->lock);
    return v;
}

void
ops_generator_set_seed(ops_generator *g, uint64_t seed)
{
    ops_generator *s = resolve(g);
    pthread_mutex_lock(&s->lock);
    s->seed = seed;
    s->offset = 0;
    pthread_mutex_unlock(&s->lock);
}

uint64_t
ops_generator_offset(const ops_generator *g)
{
    ops_generator *s = resolve(g);
    pthread_mutex_lock(&s->lock);
    const uint64_t v = s->offset;
    pthread_mutex_unlock(&s->lock);
    return v;
}

void
ops_generator_set_offset(ops_generator *g, uint64_t offset)
{
    ops_generator *s = resolve(g);
    pthread_mutex_lock(&s->lock);
    s->offset = offset;
    pthread_mutex_unlock(&s->lock);
}

void
ops_generator_reserve(ops_generator *g, uint64_t nblocks, ops_philox_stream *out)
{
    ops_generator *s = resolve(g);
    pthread_mutex_lock(&s->lock);
    out->key[0] = (uint32_t)s->seed;
    out->key[1] = (uint32_t)(s->seed >> 32);
    out->base = s->offset;
    s->offset += nblocks;
    pthread_mutex_unlock(&s->lock);
}

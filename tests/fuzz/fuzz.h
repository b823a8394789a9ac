/* The registry fuzzer's shared declarations (docs/fuzzing.md): the random source, the
 * settings and counters (fuzz_registry.c, with the drivers and the replay cases), one
 * call's arguments and their drawing (fuzz_draw.c), and the invariants checked after
 * each call (fuzz_check.c). */
#ifndef FUZZ_REGISTRY_H
#define FUZZ_REGISTRY_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops_internal.h"
#include "ops_random.h"
#include "ops_registry.h"

#define MAX_ARGS 24
#define MAX_LIST 6       /* tensors in a generated Tensor[] */
#define MAX_INTS 20      /* entries of a generated int[] (above OPS_MAX_DIMS on purpose) */
#define MAX_OWNED 96     /* tensors one call creates */
#define HUGE_NUMEL 4096  /* a view with more elements than this runs in a child process */

/* ---- the random source ------------------------------------------------------- */

/* Draws come from the libFuzzer input while it lasts, then from splitmix64. */
typedef struct rng {
    uint64_t state;
    const uint8_t *data;
    size_t len, pos;
} rng;

static inline uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform-enough in [0, n); n >= 1. */
static inline uint64_t
below(rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    if (r->pos < r->len) {
        uint64_t v = r->data[r->pos++];
        if (n > 256 && r->pos < r->len)
            v = (v << 8) | r->data[r->pos++];
        return v % n;
    }
    return splitmix(&r->state) % n;
}

/* True with probability pct/100. */
static inline bool
chance(rng *r, int pct)
{
    return (int)below(r, 100) < pct;
}

/* ---- one call's arguments ------------------------------------------------------ */

typedef struct call {
    const ops_op_info *op;
    int64_t iter;
    ops_ivalue args[MAX_ARGS];
    ops_ivalue rets[8];
    ops_tensor *owned[MAX_OWNED];
    int nowned;
    const ops_tensor *lists[MAX_ARGS][MAX_LIST];
    int64_t ints[MAX_ARGS][MAX_INTS];
    bool bools[MAX_ARGS][MAX_INTS];
    ops_generator *gen;
    /* Shape and dtype most tensors of the call share, so that many calls pass the
     * checks and reach the kernels. */
    ops_dtype dtype;
    int nd;
    int64_t sizes[4];
    bool huge; /* some tensor argument has more than HUGE_NUMEL elements */
} call;

/* ---- settings and counters (fuzz_registry.c) ----------------------------------- */

typedef struct fuzz_config {
    uint64_t seed;
    int64_t iters, start;
    const char *only_op;
    const char *skip_ops;
    bool huge;
    int timeout_s;
    bool verbose;
    const char *argv0;
} fuzz_config;

typedef struct fuzz_stats {
    int64_t calls, ok, failed, forked, timeouts, build_skips, violations;
    int64_t *op_calls, *op_ok;
} fuzz_stats;

extern fuzz_config cfg;
extern fuzz_stats stats;
extern int nops;
extern const ops_op_info **ops_sel; /* the ops this run draws from */
extern int nsel;
/* The description printed with a failure, formatted before every call so that a
 * crash handler can print it as it is (fuzz_draw.c). */
extern char desc[16384];


/* ---- fuzz_draw.c ---------------------------------------------------------------- */

ops_tensor *own(call *c, ops_tensor *t);
void call_free(call *c);
void describe_call(const call *c);
void write_desc(void);
void print_desc(void);
void crash_handler(int sig);
ops_dtype draw_dtype(rng *r);
void store_value(void *p, ops_dtype dt, double v, int64_t iv, bool use_int);
void draw_arg(call *c, rng *r, int i);

/* ---- fuzz_check.c --------------------------------------------------------------- */

bool geometry_ok(const ops_tensor *t, char *why, size_t n);
void run_call(call *c);
void fuzz_one(const ops_op_info *op, rng *r, int64_t iter);

#endif

/* The CPU's instruction-set level for the vector loops, picked once per process.
 *
 * kernels/cpu/vec/ compiles its loops once per level (baseline, AVX2+FMA, AVX-512)
 * into the library; which copy runs is decided here, at the first vector loop or
 * ops_cpu_capability() call: the best level the CPU (and the OS, which must save the
 * wider registers: __builtin_cpu_supports checks XGETBV) supports, or a lower one
 * named by OPS_CPU_CAPABILITY so that tests can run every path on one machine.
 * The choice is made once so that every loop of a process computes at one level: a
 * result does not change with which op ran first (docs/cpu-dispatch.md). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_base.h"
#include "ops_cpu_level.h"

static const char *const level_names[OPS_CPU_NUM_LEVELS] = {"default", "avx2", "avx512"};

/* What each level needs beyond the one below it, for the refusal message. */
static const char *const level_needs[OPS_CPU_NUM_LEVELS] = {
    "", "avx2 and fma", "avx512f, avx512bw, avx512vl and avx512dq"};

static ops_cpu_level chosen_level;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

/* The best level this CPU runs (only the baseline off x86-64: NEON is aarch64's). */
static ops_cpu_level
best_supported_level(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return OPS_CPU_LEVEL_DEFAULT;
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq"))
        return OPS_CPU_LEVEL_AVX2;
    return OPS_CPU_LEVEL_AVX512;
#else
    return OPS_CPU_LEVEL_DEFAULT;
#endif
}

static void
choose_level(void)
{
    const ops_cpu_level best = best_supported_level();
    chosen_level = best;
    const char *want = getenv("OPS_CPU_CAPABILITY");
    if (want == NULL || want[0] == '\0')
        return;
    for (int l = 0; l < OPS_CPU_NUM_LEVELS; l++) {
        if (strcmp(want, level_names[l]) != 0)
            continue;
        if ((ops_cpu_level)l <= best) {
            chosen_level = (ops_cpu_level)l;
        } else {
            fprintf(stderr,
                    "libops: OPS_CPU_CAPABILITY=%s: this CPU lacks %s; using %s\n",
                    want, level_needs[l], level_names[best]);
        }
        return;
    }
    fprintf(stderr,
            "libops: OPS_CPU_CAPABILITY=%s is not a level (default, avx2, avx512); using %s\n",
            want, level_names[best]);
}

ops_cpu_level
ops_cpu_level_get(void)
{
    pthread_once(&chosen_once, choose_level);
    return chosen_level;
}

const char *
ops_cpu_capability(void)
{
    return level_names[ops_cpu_level_get()];
}

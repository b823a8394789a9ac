/* The CPU's instruction-set level for the vector loops (runtime/dispatch/cpu_level.c,
 * docs/cpu-dispatch.md).  The runtime picks the level; OPS_VEC_PICK (kernels/cpu/vec/vec.h)
 * maps it to the loops compiled for it. */
#ifndef OPS_CPU_LEVEL_H
#define OPS_CPU_LEVEL_H

typedef enum ops_cpu_level {
    OPS_CPU_LEVEL_DEFAULT = 0, /* x86-64 baseline (SSE2), or NEON on aarch64 */
    OPS_CPU_LEVEL_AVX2 = 1,    /* AVX2 + FMA */
    OPS_CPU_LEVEL_AVX512 = 2,  /* AVX-512 F, BW, VL, DQ */
    OPS_CPU_NUM_LEVELS
} ops_cpu_level;

/* The level chosen for this process (once; thread-safe). */
/* Hidden like OPS_INTERNAL; spelled out so that kernels/cpu/vec/ includes this header
 * alone. */
__attribute__((visibility("hidden"))) ops_cpu_level ops_cpu_level_get(void);

#endif /* OPS_CPU_LEVEL_H */

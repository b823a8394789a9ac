/* The random number loops of the CPU, compiled once per instruction-set level
 * (kernels/cpu/vec/vec_random.c; docs/cpu-dispatch.md "Random numbers").
 *
 * Every loop gives exactly the values of the scalar definition in
 * include/libops/ops_philox.h (ops_philox_block, ops_rand_block): the vector code is
 * only a faster way to compute the same stream, so a result never depends on the
 * level, the thread count or where a thread's range starts.  A loop covers whole
 * blocks b0 .. b0 + nb - 1 of the stream s. */
#ifndef OPS_KERNELS_CPU_VEC_RANDOM_H
#define OPS_KERNELS_CPU_VEC_RANDOM_H

#include <stdint.h>

#include "kernels/cpu/vec/vec.h"
#include "ops_philox.h"

typedef struct ops_vec_random_table {
    const char *level; /* "default", "avx2", "avx512" */
    /* the four words of each block, in stream order, into w[4 * nb] */
    void (*words)(const ops_philox_stream *s, uint64_t b0, int64_t nb, uint32_t *w);
    /* float32 elements of the blocks into o[4 * nb]: d a uniform with k = 1 and 24
     * digits (float32's), or a normal with k = 1 */
    void (*uniform_f32)(const ops_rand_dist *d, const ops_philox_stream *s, uint64_t b0, int64_t nb, float *o);
    void (*normal_f32)(const ops_rand_dist *d, const ops_philox_stream *s, uint64_t b0, int64_t nb, float *o);
} ops_vec_random_table;

OPS_VEC_DECLARE_TABLES(ops_vec_random_table, ops_vec_random_table);

/* The random table of the process's level. */
static inline const ops_vec_random_table *
ops_vec_random(void)
{
    return OPS_VEC_PICK(ops_vec_random_table);
}

#endif /* OPS_KERNELS_CPU_VEC_RANDOM_H */

/* The (key, position) pairs of the CPU sorts (sort.c), shared with sort_unique.c: a
 * key orders like the value does in PyTorch (ops_ix_key_*, kernels/ops_index_math.h).
 * Pairs of 8 bytes serve dtypes of up to 4 bytes on lines below 2^32; 16 otherwise. */
#ifndef OPS_CPU_SORT_PAIRS_H
#define OPS_CPU_SORT_PAIRS_H

#include <stdbool.h>
#include <stdint.h>

#include "ops_internal.h"

typedef struct {
    uint32_t k; /* order-preserving key */
    uint32_t i; /* position along the line */
} sort_p32;

typedef struct {
    uint64_t k;
    uint64_t i;
} sort_p64;

/* a[0..n) gets the keys of the n elements of dtype dt at p, step bytes apart
 * (inverted when desc), and their positions. */
void sort_gather_p64(ops_dtype dt, sort_p64 *a, const char *p, int64_t step, int64_t n, bool desc);
/* Stable ascending sort of a[0..n) by key (dtype dt's key bytes); tmp has room for n
 * pairs.  Returns the array holding the result (a or tmp). */
sort_p64 *sort_p64_sort(sort_p64 *a, sort_p64 *tmp, int64_t n, ops_dtype dt);

#endif /* OPS_CPU_SORT_PAIRS_H */

/* Internal: sort (and its stable overloads), argsort, msort, topk and kthvalue, one
 * driver for every device in kernels/sort.c (the result's shape, the out= checks and
 * writes, allocation) over the stub below, which orders the lines:
 * kernels/cpu/sort.c, kernels/cuda/sort.cu.  C and C++ clean. */
#ifndef OPS_KERNELS_SORT_H
#define OPS_KERNELS_SORT_H

#include "kernels/index_check.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The lines of self along dim and what to make of each.  Line l (l decomposed over
 * self's dims but dim, row-major) has len elements; its olen results start at element
 * (l / inner) * olen * inner + l % inner of vals / idx, inner apart. */
typedef struct sort_plan {
    const ops_tensor *self;
    int64_t dim;    /* wrapped (0 for a 0-dim self, which is one line of one element) */
    int64_t len;    /* elements per line */
    int64_t nlines; /* 0 when self is empty */
    bool desc;      /* descending (topk: largest) */
    line_kind kind; /* LINE_SORT: the whole order; LINE_TOPK: its k first; LINE_KTH: its k-th */
    int64_t k;
    int64_t olen;   /* results per line: len, k or 1 */
    int64_t inner;
    ops_tensor *vals; /* contiguous, self's dtype and device; NULL: not wanted */
    ops_tensor *idx;  /* contiguous int64; NULL: not wanted */
} sort_plan;

/* Fills vals / idx as p says: the stable order of each line (pairs of the
 * order-preserving key and the position, NaN largest), values copied from the
 * input elements themselves. */
OPS_DECLARE_STUB(sort_order_lines, ops_status, (const char *op, const sort_plan *p));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_SORT_H */

/* The .npy reader and writer over a byte source/sink, shared by npy.c (files and
 * buffers) and npz.c (zip members). */
#ifndef OPS_NPY_IMPL_H
#define OPS_NPY_IMPL_H

#include "ops_serialize_impl.h"

typedef struct npy_source {
    /* Reads up to n bytes into buf; returns the count read (short only at the end) or -1
     * on an I/O error. */
    int64_t (*read)(void *ctx, void *buf, size_t n);
    void *ctx;
    uint64_t avail; /* bytes the source holds in all: no array larger is allocated */
} npy_source;

/* One array from src; op and name go into messages ("npy: 'x.npy': ..."). */
ops_status ops_npy_read(const char *op, const char *name, npy_source *src, ops_tensor **out);

/* The bytes of t as a .npy file: the header into hdr (OPS_NPY_HEADER_BUF bytes) with
 * its length in *hlen, and c, the contiguous CPU tensor whose data follows it (a
 * new reference).  bfloat16 is refused naming op and name. */
#define OPS_NPY_HEADER_MAX (256 + 22 * OPS_MAX_DIMS)
#define OPS_NPY_HEADER_BUF (OPS_NPY_HEADER_MAX + 128)
ops_status ops_npy_prepare(const char *op, const char *name, const ops_tensor *t, char *hdr, size_t *hlen,
                           ops_tensor **c);

#endif /* OPS_NPY_IMPL_H */

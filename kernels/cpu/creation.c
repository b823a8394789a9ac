/* The CPU loops of the creation ops (the drivers are kernels/creation.c, the stubs
 * kernels/creation.h): a byte-pattern fill (creation ops and fill_) and the
 * arange/linspace sequences.  Element i's value of a sequence comes
 * from kernels/creation_math.h, the formulas the CUDA kernels call too. */
#include <string.h>

#include "kernels/creation.h"
#include "ops_convert.h"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(creation_fill_bytes, CPU, creation_fill_bytes_cpu);
OPS_REGISTER_STUB(creation_sequence, CPU, creation_sequence_cpu);

/* Splits a long element loop over the library's threads; short ones stay serial. */
#ifdef _OPENMP
#define PARALLEL_FOR_N_ _Pragma("omp parallel for if (n >= OPS_GRAIN_SIZE) num_threads(nthreads)")
#else
#define PARALLEL_FOR_N_
#endif

/* Every element of the iterator's operand gets the element whose bytes are at
 * `pattern`: filling only copies bytes, so one loop per element size serves every
 * dtype, and the contiguous case is a plain store loop the compiler vectorises. */
static void
fill_pattern(ops_iter *it, size_t itemsize, const void *pattern)
{
    switch (itemsize) {
    case 1: {
        uint8_t v;
        memcpy(&v, pattern, 1);
        OPS_NULLARY_KERNEL(it, uint8_t, v);
        break;
    }
    case 2: {
        int16_t v;
        memcpy(&v, pattern, 2);
        OPS_NULLARY_KERNEL(it, int16_t, v);
        break;
    }
    case 4: {
        int32_t v;
        memcpy(&v, pattern, 4);
        OPS_NULLARY_KERNEL(it, int32_t, v);
        break;
    }
    default: {
        int64_t v;
        memcpy(&v, pattern, 8);
        OPS_NULLARY_KERNEL(it, int64_t, v);
        break;
    }
    }
}

ops_status
creation_fill_bytes_cpu(const char *op, ops_tensor *t, int64_t pattern)
{
    if (pattern == 0 && ops_tensor_is_contiguous(t)) { /* zeros: all-zero bytes, +0.0 */
        memset(ops_tensor_data_ptr(t), 0, (size_t)ops_tensor_numel(t) * ops_dtype_size(t->dtype));
        return OPS_OK;
    }
    ops_iter it;
    ops_status st = ops_iter_build_nullary(&it, op, t);
    if (st == OPS_OK) {
        fill_pattern(&it, ops_dtype_size(t->dtype), &pattern);
        it.written = NULL; /* the driver bumps the version (the stub's contract) */
        st = ops_iter_finish(&it);
    }
    ops_iter_release(&it);
    return st;
}

/* n contiguous elements of q at data. */
static void
seq_write(const ops_seq *q, char *data, int64_t n)
{
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    const size_t is = ops_dtype_size(q->dtype);
    PARALLEL_FOR_N_
    for (int64_t i = 0; i < n; i++)
        ops_seq_store(q, i, data + (size_t)i * is);
}

/* Directly when t is contiguous, else into a contiguous temporary copied into t
 * (allocated before anything is written, so a failure leaves t untouched). */
ops_status
creation_sequence_cpu(const char *op, ops_tensor *t, const ops_seq *q)
{
    const int64_t n = ops_tensor_numel(t);
    ops_tensor *tmp = NULL;
    if (!ops_tensor_is_contiguous(t)) {
        tmp = ops_tensor_new(op, t->ndim, t->sizes, NULL, t->dtype, OPS_DEVICE_CPU);
        if (tmp == NULL)
            return ops_last_status();
    }
    seq_write(q, ops_tensor_data_ptr(tmp != NULL ? tmp : t), n);
    ops_status st = OPS_OK;
    if (tmp != NULL) {
        st = ops_copy_values(op, t, tmp);
        ops_tensor_release(tmp);
    }
    return st;
}

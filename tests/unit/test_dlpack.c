/* DLPack export and import (runtime/interop/dlpack.c): the DLTensor fields for every
 * dtype, round trips with no copy, writes visible both ways, strided and
 * offset views, negative strides on import, the producer's deleter called
 * exactly once (on success when the last view goes, and on every failure),
 * clear errors for what libops cannot take, and allocation failures.  Leaks and
 * use-after-free are the sanitizer build's to catch. */
#include <check.h>
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_interop.h"
#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_cuda.h"
#include "ops_op_add.h"
#include "ops_op_arange.h"
#include "ops_op_bitwise_not.h"
#include "ops_op_masked_fill.h"
#include "ops_op_masked_select.h"
#include "ops_op_ones.h"
#include "ops_op_sum.h"
#include "ops_op_view.h"
#include "ops_op_where.h"
#include "ops_op_zeros.h"
#include "ops_internal.h"

static ops_tensor *
filled(ops_dtype dt, int ndim, const int64_t *sizes)
{
    ops_tensor *t = ops_tensor_new("test", ndim, sizes, NULL, dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    char *p = ops_tensor_data_ptr(t);
    const size_t item = ops_dtype_size(dt);
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        ops_scalar_store(OPS_SCALAR_INT(dt == OPS_BOOL ? i % 2 : i % 100), dt, p + i * (int64_t)item);
    return t;
}

/* Element at a multi-index of a tensor with any strides, as a double. */
static double
at(const ops_tensor *t, const int64_t *idx)
{
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++)
        off += idx[i] * t->strides[i];
    const char *p = (const char *)ops_tensor_data_ptr(t) + off * (int64_t)ops_dtype_size(t->dtype);
    return ops_scalar_to_double(ops_scalar_load(p, t->dtype));
}

/* ---- a producer the tests control ----------------------------------------- */

typedef struct producer {
    DLManagedTensor managed;
    int64_t shape[OPS_MAX_DIMS + 1];
    int64_t strides[OPS_MAX_DIMS + 1];
    int deleted; /* times the deleter ran */
    _Alignas(64) unsigned char bytes[512];
} producer;

static void
producer_deleter(DLManagedTensor *self)
{
    producer *p = self->manager_ctx;
    p->deleted++;
}

/* A float32 [2, 3] row-major producer over p->bytes holding 0..5. */
static DLManagedTensor *
producer_init(producer *p)
{
    memset(p, 0, sizeof *p);
    float *f = (float *)p->bytes;
    for (int i = 0; i < 6; i++)
        f[i] = (float)i;
    p->shape[0] = 2;
    p->shape[1] = 3;
    p->strides[0] = 3;
    p->strides[1] = 1;
    DLTensor *dl = &p->managed.dl_tensor;
    dl->data = p->bytes;
    dl->device.device_type = kDLCPU;
    dl->device.device_id = 0;
    dl->ndim = 2;
    dl->dtype.code = kDLFloat;
    dl->dtype.bits = 32;
    dl->dtype.lanes = 1;
    dl->shape = p->shape;
    dl->strides = p->strides;
    dl->byte_offset = 0;
    p->managed.manager_ctx = p;
    p->managed.deleter = producer_deleter;
    return &p->managed;
}

/* ---- export ------------------------------------------------------------------- */

START_TEST(test_export_fields_every_dtype)
{
    static const struct {
        ops_dtype dt;
        uint8_t code, bits;
    } table[] = {
        {OPS_BOOL, 6, 8},          {OPS_UINT8, kDLUInt, 8},     {OPS_INT8, kDLInt, 8},
        {OPS_INT16, kDLInt, 16},   {OPS_INT32, kDLInt, 32},     {OPS_INT64, kDLInt, 64},
        {OPS_FLOAT16, kDLFloat, 16}, {OPS_BFLOAT16, kDLBfloat, 16}, {OPS_FLOAT32, kDLFloat, 32},
        {OPS_FLOAT64, kDLFloat, 64},
    };
    _Static_assert(sizeof table / sizeof table[0] == OPS_NUM_DTYPES, "every dtype is exported");
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        ops_tensor *t = filled(table[k].dt, 2, (int64_t[]){2, 3});
        DLManagedTensor *m = ops_tensor_to_dlpack(t);
        ck_assert_ptr_nonnull(m);
        const DLTensor *dl = &m->dl_tensor;
        ck_assert_ptr_eq(dl->data, ops_tensor_data_ptr(t));
        ck_assert_int_eq(dl->device.device_type, kDLCPU);
        ck_assert_int_eq(dl->device.device_id, 0);
        ck_assert_int_eq(dl->ndim, 2);
        ck_assert_uint_eq(dl->dtype.code, table[k].code);
        ck_assert_uint_eq(dl->dtype.bits, table[k].bits);
        ck_assert_uint_eq(dl->dtype.lanes, 1);
        ck_assert_int_eq(dl->shape[0], 2);
        ck_assert_int_eq(dl->shape[1], 3);
        ck_assert_int_eq(dl->strides[0], 3);
        ck_assert_int_eq(dl->strides[1], 1);
        ck_assert_uint_eq(dl->byte_offset, 0);
        ck_assert_ptr_nonnull(m->deleter);

        /* Back in: the same bytes, dtype and geometry (no copy). */
        ops_tensor *u = ops_tensor_from_dlpack(m);
        ck_assert_ptr_nonnull(u);
        ck_assert_int_eq(ops_tensor_dtype(u), table[k].dt);
        ck_assert_ptr_eq(ops_tensor_data_ptr(u), ops_tensor_data_ptr(t));
        ck_assert_int_eq(ops_tensor_ndim(u), 2);
        ck_assert_int_eq(ops_tensor_sizes(u)[0], 2);
        ck_assert_int_eq(ops_tensor_sizes(u)[1], 3);
        ck_assert_int_eq(ops_tensor_strides(u)[0], 3);
        ck_assert_int_eq(ops_tensor_strides(u)[1], 1);
        /* Writes visible both ways. */
        char *pu = ops_tensor_data_ptr(u), *pt = ops_tensor_data_ptr(t);
        const size_t item = ops_dtype_size(table[k].dt);
        ops_scalar_store(OPS_SCALAR_INT(1), table[k].dt, pu + 4 * item);
        ck_assert(at(t, (int64_t[]){1, 1}) == 1.0);
        ops_scalar_store(OPS_SCALAR_INT(0), table[k].dt, pt + 5 * item);
        ck_assert(at(u, (int64_t[]){1, 2}) == 0.0);
        ops_tensor_release(t);
        /* u alone keeps the bytes alive now (through the exporter's reference). */
        ck_assert(at(u, (int64_t[]){0, 1}) == 1.0);
        ops_tensor_release(u);
    }
}
END_TEST

START_TEST(test_export_keeps_tensor_alive)
{
    ops_tensor *t = filled(OPS_FLOAT32, 1, (int64_t[]){1000}); /* not embedded */
    DLManagedTensor *m = ops_tensor_to_dlpack(t);
    ck_assert_ptr_nonnull(m);
    ops_tensor_release(t);
    const float *f = m->dl_tensor.data;
    ck_assert(f[999] == 99.0f);
    m->deleter(m);

    ops_tensor *e = filled(OPS_INT64, 0, NULL); /* 0-dim, embedded */
    m = ops_tensor_to_dlpack(e);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->dl_tensor.ndim, 0);
    ops_tensor_release(e);
    ck_assert_int_eq(*(const int64_t *)m->dl_tensor.data, 0);
    m->deleter(m);
}
END_TEST

START_TEST(test_export_strided_views)
{
    ops_tensor *t = filled(OPS_FLOAT64, 2, (int64_t[]){4, 5});
    /* Transposed [5, 4] view and a stepped slice with an offset: t[1:4:2, 1:5:3]. */
    ops_tensor *tr = ops_tensor_new_view(t, 2, (int64_t[]){5, 4}, (int64_t[]){1, 5}, 0);
    ops_tensor *sl = ops_tensor_new_view(t, 2, (int64_t[]){2, 2}, (int64_t[]){10, 3}, 6);
    ck_assert_ptr_nonnull(tr);
    ck_assert_ptr_nonnull(sl);
    ops_tensor *views[] = {tr, sl};
    for (int k = 0; k < 2; k++) {
        ops_tensor *v = views[k];
        DLManagedTensor *m = ops_tensor_to_dlpack(v);
        ck_assert_ptr_nonnull(m);
        ck_assert_ptr_eq(m->dl_tensor.data, ops_tensor_data_ptr(v));
        ck_assert_uint_eq(m->dl_tensor.byte_offset, 0);
        for (int i = 0; i < 2; i++) {
            ck_assert_int_eq(m->dl_tensor.shape[i], v->sizes[i]);
            ck_assert_int_eq(m->dl_tensor.strides[i], v->strides[i]);
        }
        ops_tensor *u = ops_tensor_from_dlpack(m);
        ck_assert_ptr_nonnull(u);
        ck_assert_int_eq(u->strides[0], v->strides[0]);
        ck_assert_int_eq(u->strides[1], v->strides[1]);
        for (int64_t i = 0; i < v->sizes[0]; i++)
            for (int64_t j = 0; j < v->sizes[1]; j++)
                ck_assert(at(u, (int64_t[]){i, j}) == at(v, (int64_t[]){i, j}));
        ops_tensor_release(u);
    }
    ck_assert(at(sl, (int64_t[]){1, 1}) == 19.0); /* t[3, 4] */
    ops_tensor_release(tr);
    ops_tensor_release(sl);
    ops_tensor_release(t);
}
END_TEST

START_TEST(test_export_errors)
{
    ck_assert_ptr_null(ops_tensor_to_dlpack(NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "to_dlpack"));
    /* Allocation failure: nothing handed out, t untouched and alive. */
    ops_tensor *t = filled(OPS_FLOAT32, 1, (int64_t[]){3});
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_tensor_to_dlpack(t));
    ops_alloc_fail_nth(0);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ck_assert_int_eq(t->refcount, 1);
    ops_tensor_release(t);
}
END_TEST

/* ---- import ------------------------------------------------------------------- */

START_TEST(test_import_deleter_once_when_last_view_goes)
{
    producer p;
    ops_tensor *t = ops_tensor_from_dlpack(producer_init(&p));
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), p.bytes);
    ck_assert(at(t, (int64_t[]){1, 2}) == 5.0);
    ops_tensor *v = ops_tensor_new_view(t, 1, (int64_t[]){3}, (int64_t[]){1}, 3); /* row 1 */
    ck_assert_ptr_nonnull(v);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 0);
    /* Writes through libops reach the producer's bytes and back. */
    ((float *)ops_tensor_data_ptr(v))[0] = 42.0f;
    ck_assert(((float *)p.bytes)[3] == 42.0f);
    ((float *)p.bytes)[4] = -1.0f;
    ck_assert(at(v, (int64_t[]){1}) == -1.0);
    ops_tensor_release(v);
    ck_assert_int_eq(p.deleted, 1);

    /* A producer may give no deleter (nothing to free). */
    DLManagedTensor *m = producer_init(&p);
    m->deleter = NULL;
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 0);
}
END_TEST

START_TEST(test_import_layouts)
{
    producer p;
    /* strides NULL: row-major. */
    DLManagedTensor *m = producer_init(&p);
    m->dl_tensor.strides = NULL;
    ops_tensor *t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->strides[0], 3);
    ck_assert_int_eq(t->strides[1], 1);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 1);

    /* Column-major [3, 2] over the same bytes, with a byte_offset of one element. */
    m = producer_init(&p);
    p.shape[0] = 2;
    p.shape[1] = 2;
    p.strides[0] = 1;
    p.strides[1] = 2;
    m->dl_tensor.byte_offset = sizeof(float);
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), p.bytes + sizeof(float));
    ck_assert(at(t, (int64_t[]){0, 0}) == 1.0);
    ck_assert(at(t, (int64_t[]){1, 0}) == 2.0);
    ck_assert(at(t, (int64_t[]){0, 1}) == 3.0);
    ck_assert(at(t, (int64_t[]){1, 1}) == 4.0);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 1);

    /* Negative strides (rows reversed): data points at row 1 of the bytes. */
    m = producer_init(&p);
    p.strides[0] = -3;
    m->dl_tensor.data = p.bytes + 3 * sizeof(float);
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), p.bytes + 3 * sizeof(float));
    ck_assert_int_eq(t->strides[0], -3);
    ck_assert_int_eq(t->offset, 3);
    for (int j = 0; j < 3; j++) {
        ck_assert(at(t, (int64_t[]){0, j}) == 3.0 + j);
        ck_assert(at(t, (int64_t[]){1, j}) == (double)j);
    }
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 6 * sizeof(float));
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 1);

    /* Broadcast (stride 0) and an empty tensor with NULL data. */
    m = producer_init(&p);
    p.strides[0] = 0;
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ck_assert(at(t, (int64_t[]){1, 2}) == 2.0);
    ops_tensor_release(t);
    m = producer_init(&p);
    p.shape[0] = 0;
    m->dl_tensor.data = NULL;
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_numel(t), 0);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 1);

    /* 0-dim. */
    m = producer_init(&p);
    m->dl_tensor.ndim = 0;
    m->dl_tensor.shape = NULL;
    m->dl_tensor.strides = NULL;
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_ndim(t), 0);
    ck_assert(at(t, NULL) == 0.0);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 1);
}
END_TEST

/* Every refusal names the op, and the deleter has run once by the time it returns. */
static void
expect_refused(producer *p, DLManagedTensor *m, ops_status st, const char *needle)
{
    ops_clear_error();
    ck_assert_ptr_null(ops_tensor_from_dlpack(m));
    ck_assert_int_eq(ops_last_status(), st);
    ck_assert_msg(strstr(ops_last_error(), "from_dlpack") && strstr(ops_last_error(), needle),
                  "message \"%s\" lacks \"%s\"", ops_last_error(), needle);
    ck_assert_int_eq(p->deleted, 1);
}

START_TEST(test_import_errors)
{
    producer p;
    DLManagedTensor *m;

    m = producer_init(&p);
    m->dl_tensor.dtype.code = kDLComplex;
    m->dl_tensor.dtype.bits = 64;
    expect_refused(&p, m, OPS_ERR_DTYPE, "kDLComplex");
    m = producer_init(&p);
    m->dl_tensor.dtype.code = kDLUInt;
    m->dl_tensor.dtype.bits = 16;
    expect_refused(&p, m, OPS_ERR_DTYPE, "bits 16");
    m = producer_init(&p);
    m->dl_tensor.dtype.code = kDLInt;
    m->dl_tensor.dtype.bits = 12;
    expect_refused(&p, m, OPS_ERR_DTYPE, "bits 12");
    m = producer_init(&p);
    m->dl_tensor.dtype.code = 6;
    m->dl_tensor.dtype.bits = 1;
    expect_refused(&p, m, OPS_ERR_DTYPE, "kDLBool");
    m = producer_init(&p);
    m->dl_tensor.dtype.code = 99;
    expect_refused(&p, m, OPS_ERR_DTYPE, "code 99");
    m = producer_init(&p);
    m->dl_tensor.dtype.lanes = 4;
    expect_refused(&p, m, OPS_ERR_DTYPE, "4 lanes");
    m = producer_init(&p);
    m->dl_tensor.device.device_type = kDLOpenCL;
    expect_refused(&p, m, OPS_ERR_DEVICE, "device type 4");
    m = producer_init(&p);
    m->dl_tensor.device.device_type = kDLCUDAHost;
    expect_refused(&p, m, OPS_ERR_DEVICE, "device type 3");
#ifndef OPS_WITH_CUDA
    m = producer_init(&p);
    m->dl_tensor.device.device_type = kDLCUDA;
    expect_refused(&p, m, OPS_ERR_DEVICE, "without CUDA");
#endif
    m = producer_init(&p);
    m->dl_tensor.byte_offset = 2;
    expect_refused(&p, m, OPS_ERR_VALUE, "byte_offset 2 is not a multiple of the element size 4");
    m = producer_init(&p);
    m->dl_tensor.data = p.bytes + 2;
    expect_refused(&p, m, OPS_ERR_VALUE, "not aligned");
    m = producer_init(&p);
    m->dl_tensor.ndim = OPS_MAX_DIMS + 1;
    expect_refused(&p, m, OPS_ERR_VALUE, "dimensions");
    m = producer_init(&p);
    m->dl_tensor.ndim = -1;
    expect_refused(&p, m, OPS_ERR_VALUE, "dimensions");
    m = producer_init(&p);
    m->dl_tensor.shape = NULL;
    expect_refused(&p, m, OPS_ERR_VALUE, "shape is NULL");
    m = producer_init(&p);
    p.shape[1] = -3;
    expect_refused(&p, m, OPS_ERR_VALUE, "negative size");
    m = producer_init(&p);
    m->dl_tensor.data = NULL;
    expect_refused(&p, m, OPS_ERR_VALUE, "data is NULL");
    m = producer_init(&p);
    p.shape[0] = INT64_MAX / 2;
    p.strides[0] = 4;
    expect_refused(&p, m, OPS_ERR_VALUE, "overflows");
    /* byte_offset that wraps: 2**64 - 4 is data - 4 (before the buffer), 2**63
     * points anywhere; neither fits any buffer. */
    m = producer_init(&p);
    m->dl_tensor.byte_offset = UINT64_MAX - 3;
    expect_refused(&p, m, OPS_ERR_VALUE, "byte_offset 18446744073709551612 is larger than any buffer");
    m = producer_init(&p);
    m->dl_tensor.byte_offset = (uint64_t)1 << 63;
    expect_refused(&p, m, OPS_ERR_VALUE, "byte_offset 9223372036854775808 is larger than any buffer");
    /* data + byte_offset past the top of the address space. */
    m = producer_init(&p);
    m->dl_tensor.data = (void *)(UINTPTR_MAX - 15);
    m->dl_tensor.byte_offset = 32;
    expect_refused(&p, m, OPS_ERR_VALUE, "wraps around the address space");
    /* The last element past the top of the address space. */
    m = producer_init(&p);
    m->dl_tensor.data = (void *)(UINTPTR_MAX - 15);
    m->dl_tensor.byte_offset = 0;
    expect_refused(&p, m, OPS_ERR_VALUE, "outside the address space");
    /* Negative strides reaching below address 0. */
    m = producer_init(&p);
    m->dl_tensor.data = (void *)(uintptr_t)8; /* row -1 would start at address -4 */
    p.strides[0] = -3;
    expect_refused(&p, m, OPS_ERR_VALUE, "outside the address space");
    /* Offset plus extent larger than any object. */
    m = producer_init(&p);
    m->dl_tensor.byte_offset = (uint64_t)PTRDIFF_MAX - 3;
    m->dl_tensor.data = (void *)(uintptr_t)64;
    expect_refused(&p, m, OPS_ERR_VALUE, "outside the address space");

    ck_assert_ptr_null(ops_tensor_from_dlpack(NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
}
END_TEST

/* The n-th allocation fails, for every n until the import succeeds: the deleter
 * runs exactly once on every path. */
START_TEST(test_import_allocation_failures)
{
    for (int neg = 0; neg < 2; neg++) {
        bool ok = false;
        for (int64_t n = 1; n < 20 && !ok; n++) {
            producer p;
            DLManagedTensor *m = producer_init(&p);
            if (neg) {
                p.strides[0] = -3;
                m->dl_tensor.data = p.bytes + 3 * sizeof(float);
            }
            ops_alloc_fail_nth(n);
            ops_tensor *t = ops_tensor_from_dlpack(m);
            ops_alloc_fail_nth(0);
            if (t == NULL) {
                ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
                ck_assert_ptr_nonnull(strstr(ops_last_error(), "from_dlpack"));
                ck_assert_int_eq(p.deleted, 1);
                continue;
            }
            ok = true;
            ck_assert_int_eq(p.deleted, 0);
            ck_assert(at(t, (int64_t[]){0, 0}) == (neg ? 3.0 : 0.0));
            ops_tensor_release(t);
            ck_assert_int_eq(p.deleted, 1);
        }
        ck_assert(ok);
    }
}
END_TEST

/* to_dlpack then from_dlpack, then export the import again: the chain of
 * deleters releases everything exactly once (the sanitizer build checks). */
START_TEST(test_chained_round_trip)
{
    ops_tensor *t = filled(OPS_INT32, 2, (int64_t[]){30, 40});
    ops_tensor *u = ops_tensor_from_dlpack(ops_tensor_to_dlpack(t));
    ck_assert_ptr_nonnull(u);
    DLManagedTensor *m = ops_tensor_to_dlpack(u);
    ck_assert_ptr_nonnull(m);
    ops_tensor_release(u);
    ops_tensor *w = ops_tensor_from_dlpack(m);
    ck_assert_ptr_nonnull(w);
    ops_tensor_release(t);
    ck_assert(at(w, (int64_t[]){29, 39}) == (double)((29 * 40 + 39) % 100));
    ops_tensor_release(w);
}
END_TEST

START_TEST(test_versioned)
{
    ops_tensor *t = filled(OPS_FLOAT32, 1, (int64_t[]){4});
    if (!ops_dlpack_has_versioned()) {
        ck_assert_ptr_null(ops_tensor_to_dlpack_versioned(t));
        ck_assert_int_eq(ops_last_status(), OPS_ERR_NOT_IMPLEMENTED);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "DLManagedTensorVersioned"));
        ck_assert_ptr_null(ops_tensor_from_dlpack_versioned(NULL));
        ck_assert_int_eq(ops_last_status(), OPS_ERR_NOT_IMPLEMENTED);
        ops_tensor_release(t);
        return;
    }
#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
    DLManagedTensorVersioned *m = ops_tensor_to_dlpack_versioned(t);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->version.major, DLPACK_MAJOR_VERSION);
    ck_assert_uint_eq(m->flags, 0);
    ops_tensor *u = ops_tensor_from_dlpack_versioned(m);
    ck_assert_ptr_nonnull(u);
    ck_assert_ptr_eq(ops_tensor_data_ptr(u), ops_tensor_data_ptr(t));
    ops_tensor_release(u);
    m = ops_tensor_to_dlpack_versioned(t);
    m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    ck_assert_ptr_null(ops_tensor_from_dlpack_versioned(m)); /* deleter ran: LSan checks */
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "read-only"));
    m = ops_tensor_to_dlpack_versioned(t);
    m->version.major += 1;
    ck_assert_ptr_null(ops_tensor_from_dlpack_versioned(m));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "major version"));
#endif
    ops_tensor_release(t);
}
END_TEST

START_TEST(test_dlpack_device)
{
    ops_tensor *t = filled(OPS_FLOAT32, 1, (int64_t[]){2});
    int32_t type = -1, id = -1;
    ck_assert_int_eq(ops_tensor_dlpack_device(t, &type, &id), OPS_OK);
    ck_assert_int_eq(type, kDLCPU);
    ck_assert_int_eq(id, 0);
    ops_tensor_release(t);
    ck_assert_int_eq(ops_tensor_dlpack_device(NULL, &type, &id), OPS_ERR_VALUE);
}
END_TEST

/* ---- exported storage stays in place ------------------------------------------ */

typedef void (*release_fn)(void *m);

static void
release_legacy(void *m)
{
    ((DLManagedTensor *)m)->deleter(m);
}

#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
static void
release_versioned(void *m)
{
    ((DLManagedTensorVersioned *)m)->deleter(m);
}
#endif

/* Export t with exporter k (0: legacy, 1: versioned); NULL when this build has
 * no such exporter. */
static void *
export_with(int k, const ops_tensor *t, release_fn *release)
{
    *release = release_legacy;
    if (k == 0)
        return ops_tensor_to_dlpack(t);
#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
    *release = release_versioned;
#endif
    return ops_tensor_to_dlpack_versioned(t); /* NULL, OPS_ERR_NOT_IMPLEMENTED without it */
}

/* Every exporter x every operation that would move the storage: refused while
 * the export lives (the consumer holds the address), allowed after its deleter. */
START_TEST(test_export_pins_storage)
{
    ops_tensor *ones = ops_ones(OPS_INTS(1000), OPS_FLOAT32, OPS_DEVICE_CPU);
    for (int k = 0; k < 2; k++) {
        release_fn release;
        /* An empty tensor no other view shares: only the export stops it moving. */
        ops_tensor *t = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
        void *m = export_with(k, t, &release);
        if (m == NULL) {
            ck_assert_int_eq(ops_last_status(), OPS_ERR_NOT_IMPLEMENTED);
            ops_tensor_release(t);
            continue;
        }
        const void *data = ops_tensor_data_ptr(t);
        ck_assert_int_eq(ops_add_out(ones, ones, OPS_SCALAR_INT(1), t), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "add: out= cannot be resized"));
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "exported (to NumPy, DLPack or a memoryview)"));
        ck_assert_int_eq(ops_tensor_size(t, 0), 0);
        ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "share_memory_: cannot move"));
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "exported"));
        ck_assert(!ops_tensor_is_shared(t));
        ck_assert_ptr_eq(ops_tensor_data_ptr(t), data);
        release(m);
        ck_assert_int_eq(ops_add_out(ones, ones, OPS_SCALAR_INT(1), t), OPS_OK);
        ck_assert_int_eq(ops_tensor_size(t, 0), 1000);
        ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
        ck_assert(ops_tensor_is_shared(t));
        ops_tensor_release(t);

        /* The case: base exported, out= the empty view past its end.  The
         * consumer's bytes stay valid (a use-after-free under ASan otherwise). */
        ops_tensor *base = ops_zeros(OPS_INTS(100000), OPS_FLOAT32, OPS_DEVICE_CPU);
        m = export_with(k, base, &release);
        ck_assert_ptr_nonnull(m);
        const float *seen = ops_tensor_data_ptr(base);
        ops_tensor *end = ops_tensor_new_view(base, 1, (int64_t[]){0}, (int64_t[]){1}, 100000);
        ops_tensor_release(base); /* the export holds the storage */
        ck_assert_int_eq(ops_add_out(ones, ones, OPS_SCALAR_INT(1), end), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "exported"));
        ck_assert(seen[99999] == 0.0f);
        ck_assert_int_eq(ops_tensor_share_memory_(end), OPS_ERR_VALUE);
        ck_assert(seen[0] == 0.0f);
        release(m);
        ck_assert_int_eq(ops_add_out(ones, ones, OPS_SCALAR_INT(1), end), OPS_OK); /* alone now */
        ops_tensor_release(end);
    }
    ops_tensor_release(ones);

    /* A round trip: the import addresses the exported bytes until it dies. */
    ops_tensor *t = filled(OPS_FLOAT32, 1, (int64_t[]){4});
    ops_tensor *u = ops_tensor_from_dlpack(ops_tensor_to_dlpack(t));
    ck_assert_ptr_nonnull(u);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_tensor_resize_("resize_", t, 1, (int64_t[]){100}), OPS_ERR_VALUE);
    ops_tensor_release(u);
    ck_assert(!ops_storage_is_exported(t->storage));
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ops_tensor_release(t);

    /* A failed export leaves nothing exported. */
    t = filled(OPS_FLOAT32, 1, (int64_t[]){4});
    for (int k = 0; k < 2; k++) {
        release_fn release;
        ops_alloc_fail_nth(1);
        void *m = export_with(k, t, &release);
        ops_alloc_fail_nth(0);
        ck_assert_ptr_null(m);
        ck_assert_int_eq(ops_last_status(), k == 0 || ops_dlpack_has_versioned() ? OPS_ERR_OOM : OPS_ERR_NOT_IMPLEMENTED);
        ck_assert(!ops_storage_is_exported(t->storage));
    }
    ck_assert_int_eq(t->refcount, 1);
    ck_assert_int_eq(ops_tensor_share_memory_(t), OPS_OK);
    ops_tensor_release(t);
}
END_TEST

/* ---- bool bytes other than 0 and 1 ------------------------------------------------ */

/* A bool [2, 3] producer over the given six bytes. */
static DLManagedTensor *
bool_producer(producer *p, const unsigned char bytes[6])
{
    DLManagedTensor *m = producer_init(p);
    memcpy(p->bytes, bytes, 6);
    m->dl_tensor.dtype.code = 6; /* kDLBool */
    m->dl_tensor.dtype.bits = 8;
    return m;
}

static int64_t
sum_int(const ops_tensor *t)
{
    ops_tensor *s = ops_sum(t, OPS_DTYPE_NONE);
    ck_assert_ptr_nonnull(s);
    ops_scalar v;
    ck_assert_int_eq(ops_tensor_item(s, &v), OPS_OK);
    ops_tensor_release(s);
    return (int64_t)ops_scalar_to_double(v);
}

START_TEST(test_import_bool_normalised)
{
    static const unsigned char valid[6] = {0, 1, 1, 0, 1, 0}, invalid[6] = {0, 1, 2, 255, 1, 0};
    producer p;
    /* 0/1 bytes: shared as they are. */
    ops_tensor *t = ops_tensor_from_dlpack(bool_producer(&p, valid));
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), p.bytes);
    ck_assert_int_eq(sum_int(t), 3);
    ops_tensor_release(t);
    ck_assert_int_eq(p.deleted, 1);

    /* Other bytes: a normalised copy; the producer's memory is let go at once. */
    for (int neg = 0; neg < 2; neg++) {
        DLManagedTensor *m = bool_producer(&p, invalid);
        if (neg) { /* rows reversed: [[255, 1, 0], [0, 1, 2]] */
            p.strides[0] = -3;
            m->dl_tensor.data = p.bytes + 3;
        }
        t = ops_tensor_from_dlpack(m);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(p.deleted, 1);
        ck_assert_ptr_ne(ops_tensor_data_ptr(t), p.bytes + (neg ? 3 : 0));
        ck_assert_int_eq(sum_int(t), 4); /* the true elements, not 0+1+2+255+1 */
        ops_tensor *n = ops_bitwise_not(t);
        ck_assert_ptr_nonnull(n);
        ck_assert_int_eq(sum_int(n), 2);
        for (int64_t i = 0; i < 2; i++)
            for (int64_t j = 0; j < 3; j++) {
                const int64_t src = (neg ? 1 - i : i) * 3 + j;
                ck_assert_msg(at(t, (int64_t[]){i, j}) == (invalid[src] != 0), "[%d, %d]", (int)i, (int)j);
                ck_assert(at(n, (int64_t[]){i, j}) == (invalid[src] == 0));
            }
        ops_tensor_release(n);
        ops_tensor_release(t);
    }

    /* uint8 is not bool: taken as it is. */
    DLManagedTensor *m = bool_producer(&p, invalid);
    m->dl_tensor.dtype.code = kDLUInt;
    t = ops_tensor_from_dlpack(m);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), p.bytes);
    ck_assert_int_eq(sum_int(t), 259);
    ops_tensor_release(t);

    /* Every allocation of the normalising import failing in turn: a clean
     * error, the deleter run once, nothing leaked. */
    bool ok = false;
    for (int64_t k = 1; k < 20 && !ok; k++) {
        m = bool_producer(&p, invalid);
        ops_alloc_fail_nth(k);
        t = ops_tensor_from_dlpack(m);
        ops_alloc_fail_nth(0);
        ck_assert_int_eq(p.deleted, 1);
        if (t == NULL) {
            ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
            ck_assert_ptr_nonnull(strstr(ops_last_error(), "from_dlpack"));
            continue;
        }
        ok = true;
        ck_assert_int_eq(sum_int(t), 4);
        ops_tensor_release(t);
    }
    ck_assert(ok);
}
END_TEST

/* Bytes written through the producer after a zero-copy import (the caller's business)
 * still read as true in every kernel that takes a mask: masked_select counts and fills
 * with one reading (a count of 2 for a byte 2 would overflow its result), where and
 * masked_fill agree with it. */
START_TEST(test_mask_bytes_written_after_import)
{
    static const unsigned char valid[6] = {0, 1, 1, 0, 1, 0};
    producer p;
    ops_tensor *mask = ops_tensor_from_dlpack(bool_producer(&p, valid));
    ck_assert_ptr_nonnull(mask);
    ck_assert_ptr_eq(ops_tensor_data_ptr(mask), p.bytes);
    p.bytes[1] = 2;
    p.bytes[3] = 255;
    p.bytes[5] = 64; /* now true at 1, 2, 3, 4, 5 */
    ops_tensor *flat = ops_arange(OPS_SCALAR_INT(6), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *x = ops_view(flat, OPS_INTS(2, 3));
    ops_tensor_release(flat);
    ops_tensor *zero = ops_zeros(OPS_INTS(2, 3), OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(zero);

    ops_tensor *sel = ops_masked_select(x, mask);
    ck_assert_ptr_nonnull(sel);
    ck_assert_int_eq(ops_tensor_numel(sel), 5);
    const float *sv = (const float *)ops_tensor_data_ptr(sel);
    for (int k = 0; k < 5; k++)
        ck_assert(sv[k] == (float)(k + 1));

    ops_tensor *w = ops_where_self(mask, x, zero);
    ops_tensor *f = ops_masked_fill_scalar(x, mask, OPS_SCALAR_INT(-1));
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(f);
    const float *wv = (const float *)ops_tensor_data_ptr(w), *fv = (const float *)ops_tensor_data_ptr(f);
    for (int k = 0; k < 6; k++) {
        ck_assert_msg(wv[k] == (k == 0 ? 0.0f : (float)k), "where [%d] = %g", k, wv[k]);
        ck_assert_msg(fv[k] == (k == 0 ? 0.0f : -1.0f), "masked_fill [%d] = %g", k, fv[k]);
    }
    ops_tensor_release(f);
    ops_tensor_release(w);
    ops_tensor_release(sel);
    ops_tensor_release(zero);
    ops_tensor_release(x);
    ops_tensor_release(mask);
    ck_assert_int_eq(p.deleted, 1);
}
END_TEST

static Suite *
dlpack_suite(void)
{
    Suite *s = suite_create("dlpack");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_export_fields_every_dtype);
    tcase_add_test(tc, test_export_keeps_tensor_alive);
    tcase_add_test(tc, test_export_strided_views);
    tcase_add_test(tc, test_export_errors);
    tcase_add_test(tc, test_import_deleter_once_when_last_view_goes);
    tcase_add_test(tc, test_import_layouts);
    tcase_add_test(tc, test_import_errors);
    tcase_add_test(tc, test_import_allocation_failures);
    tcase_add_test(tc, test_chained_round_trip);
    tcase_add_test(tc, test_versioned);
    tcase_add_test(tc, test_dlpack_device);
    tcase_add_test(tc, test_export_pins_storage);
    tcase_add_test(tc, test_import_bool_normalised);
    tcase_add_test(tc, test_mask_bytes_written_after_import);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(dlpack_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

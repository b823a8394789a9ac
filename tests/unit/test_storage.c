/* Storage and tensor lifecycle: refcounts, views keeping storage alive, from_blob
 * deleters, embedded small tensors, version counters, construction, resize_,
 * overlap tests, shape helpers, devices and the thread setting.  Use-after-free
 * and leaks are caught by the sanitizer build; the checks here are the values. */
#include <check.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cuda.h"
#include "ops_op_add.h"
#include "ops_op_ones.h"
#include "ops_internal.h"

static ops_tensor *
arange_f32(int ndim, const int64_t *sizes)
{
    ops_tensor *t = ops_tensor_new("test", ndim, sizes, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    float *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        p[i] = (float)i;
    return t;
}

static int64_t
refcount(const ops_tensor *t)
{
    return __atomic_load_n(&t->refcount, __ATOMIC_RELAXED);
}

static int64_t
storage_refcount(const ops_tensor *t)
{
    return __atomic_load_n(&t->storage->refcount, __ATOMIC_RELAXED);
}

START_TEST(test_refcounts)
{
    ops_tensor *t = arange_f32(1, (int64_t[]){4});
    ck_assert_int_eq(refcount(t), 1);
    ck_assert_int_eq(storage_refcount(t), 1);
    ck_assert_ptr_eq(ops_tensor_retain(t), t);
    ck_assert_int_eq(refcount(t), 2);
    ops_tensor_release(t);
    ck_assert_int_eq(refcount(t), 1);
    ops_tensor *v = ops_tensor_new_view(t, 1, (int64_t[]){2}, (int64_t[]){2}, 1);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(storage_refcount(t), 2);
    ck_assert_int_eq(refcount(v), 1);
    ops_tensor_release(v);
    ck_assert_int_eq(storage_refcount(t), 1);
    ops_tensor_release(t);

    ops_tensor_release(NULL); /* no-op */
    ck_assert_ptr_null(ops_tensor_retain(NULL));
}
END_TEST

static void
check_view_survives(int64_t n)
{
    ops_tensor *base = arange_f32(1, &n);
    /* Every other element, starting at 1. */
    ops_tensor *v = ops_tensor_new_view(base, 1, (int64_t[]){n / 2}, (int64_t[]){2}, 1);
    ck_assert_ptr_nonnull(v);
    ck_assert(ops_tensor_shares_storage(base, v));
    ops_tensor_release(base);
    const float *p = ops_tensor_data_ptr(v);
    for (int64_t i = 0; i < n / 2; i++)
        ck_assert_float_eq(p[2 * i], (float)(2 * i + 1));
    ((float *)ops_tensor_data_ptr(v))[0] = -1.0f;
    ck_assert_float_eq(p[0], -1.0f);
    ops_tensor_release(v);
}

START_TEST(test_views_keep_storage_alive)
{
    check_view_survives(6);      /* embedded: one block, owned by the storage */
    check_view_survives(100000); /* separate header, storage and bytes */
}
END_TEST

START_TEST(test_embedded_layout)
{
    ops_tensor *small = arange_f32(1, (int64_t[]){3});
    ck_assert(small->flags & OPS_TENSOR_EMBEDDED);
    ck_assert(small->storage->flags & OPS_STORAGE_EMBEDDED);
    ck_assert_uint_eq((uintptr_t)ops_tensor_data_ptr(small) % 64, 0);
    /* Header, storage and bytes are one block: all within a few hundred bytes. */
    uintptr_t h = (uintptr_t)small, d = (uintptr_t)ops_tensor_data_ptr(small);
    ck_assert_uint_gt(d, h);
    ck_assert_uint_lt(d - h, 1024);

    ops_tensor *big = arange_f32(1, (int64_t[]){100000});
    ck_assert(!(big->flags & OPS_TENSOR_EMBEDDED));
    ck_assert(!(big->storage->flags & OPS_STORAGE_EMBEDDED));
    ck_assert_uint_eq((uintptr_t)ops_tensor_data_ptr(big) % 64, 0);

    /* Views are plain headers even over an embedded storage. */
    ops_tensor *v = ops_tensor_new_view(small, 0, NULL, NULL, 2);
    ck_assert(!(v->flags & OPS_TENSOR_EMBEDDED));
    ops_tensor_release(small);
    ops_tensor_release(big);
    ck_assert_float_eq(*(float *)ops_tensor_data_ptr(v), 2.0f);
    ops_tensor_release(v);
}
END_TEST

/* ---- from_blob ---------------------------------------------------------------- */

static int deleter_calls;
static void *deleter_seen_data, *deleter_seen_ctx;

static void
count_deleter(void *data, void *ctx)
{
    deleter_calls++;
    deleter_seen_data = data;
    deleter_seen_ctx = ctx;
}

START_TEST(test_from_blob_deleter)
{
    float buf[6] = {0, 1, 2, 3, 4, 5};
    int ctx_token;
    deleter_calls = 0;
    ops_tensor *t = ops_tensor_from_blob(buf, OPS_INTS(2, 3), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU,
                                         count_deleter, &ctx_token);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), buf); /* borrowed, not copied */
    ck_assert_int_eq(ops_tensor_strides(t)[0], 3);
    ck_assert_int_eq(ops_tensor_strides(t)[1], 1);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), sizeof buf);
    ops_tensor *v = ops_tensor_new_view(t, 1, (int64_t[]){2}, (int64_t[]){3}, 1);
    ops_tensor *r = ops_tensor_retain(t);
    ops_tensor_release(t);
    ops_tensor_release(r);
    ck_assert_int_eq(deleter_calls, 0); /* the view still uses the bytes */
    ck_assert_float_eq(((float *)ops_tensor_data_ptr(v))[3], 4.0f);
    ops_tensor_release(v);
    ck_assert_int_eq(deleter_calls, 1);
    ck_assert_ptr_eq(deleter_seen_data, buf);
    ck_assert_ptr_eq(deleter_seen_ctx, &ctx_token);

    /* A NULL deleter is fine; strides are honoured. */
    ops_tensor *s = ops_tensor_from_blob(buf, OPS_INTS(3, 2), OPS_INTS(1, 3), OPS_FLOAT32, OPS_DEVICE_CPU, NULL,
                                         NULL);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ops_tensor_strides(s)[0], 1);
    ck_assert_int_eq(ops_tensor_strides(s)[1], 3);
    ck_assert(!ops_tensor_is_contiguous(s));
    ck_assert_uint_eq(ops_tensor_storage_nbytes(s), 6 * sizeof(float));
    ops_tensor_release(s);
    ck_assert_int_eq(deleter_calls, 1);
}
END_TEST

START_TEST(test_from_blob_errors)
{
    float buf[4];
    ck_assert_ptr_null(ops_tensor_from_blob(buf, OPS_INTS(2, -2), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_str_eq(ops_last_error(), "from_blob: Trying to create tensor with negative dimension -2: [2, -2]");
    ck_assert_ptr_null(ops_tensor_from_blob(buf, OPS_INTS(2, 2), OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_null(ops_tensor_from_blob(NULL, OPS_INTS(2), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_null(ops_tensor_from_blob(buf, OPS_INTS(2), OPS_INTS(-1), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL));
    ck_assert_ptr_null(ops_tensor_from_blob(buf, OPS_INTS(2), OPS_INTS(), OPS_DTYPE_NONE, OPS_DEVICE_CPU, NULL, NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DTYPE);
#ifndef OPS_WITH_CUDA
    ck_assert_ptr_null(ops_tensor_from_blob(buf, OPS_INTS(2), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CUDA(0), NULL, NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "from_blob: libops was built without CUDA support (device cuda:0)");
#endif
    /* An empty blob may have no data at all. */
    ops_tensor *e = ops_tensor_from_blob(NULL, OPS_INTS(0, 3), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(ops_tensor_numel(e), 0);
    ops_tensor_release(e);
}
END_TEST

/* ---- version counter ------------------------------------------------------------ */

START_TEST(test_version_shared_by_views)
{
    ops_tensor *t = arange_f32(1, (int64_t[]){10});
    ops_tensor *v = ops_tensor_new_view(t, 1, (int64_t[]){5}, (int64_t[]){1}, 5);
    ck_assert_uint_eq(ops_tensor_version(t), 0);
    ops_tensor_bump_version(v);
    ck_assert_uint_eq(ops_tensor_version(t), 1);
    ck_assert_uint_eq(ops_tensor_version(v), 1);
    ops_tensor_bump_version(t);
    ops_tensor_bump_version(t);
    ck_assert_uint_eq(ops_tensor_version(v), 3);
    ops_tensor *other = arange_f32(1, (int64_t[]){10});
    ck_assert_uint_eq(ops_tensor_version(other), 0);
    ops_tensor_release(other);
    ops_tensor_release(t);
    ops_tensor_release(v);
}
END_TEST

/* ---- construction ------------------------------------------------------------------ */

START_TEST(test_tensor_new_geometry)
{
    ops_tensor *t = ops_tensor_new("zeros", 3, (int64_t[]){2, 3, 4}, NULL, OPS_INT16, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_ndim(t), 3);
    ck_assert_int_eq(ops_tensor_strides(t)[0], 12);
    ck_assert_int_eq(ops_tensor_strides(t)[1], 4);
    ck_assert_int_eq(ops_tensor_strides(t)[2], 1);
    ck_assert_int_eq(ops_tensor_numel(t), 24);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 48);
    ck_assert_uint_eq(ops_tensor_itemsize(t), 2);
    ck_assert_int_eq(ops_tensor_dtype(t), OPS_INT16);
    ck_assert_int_eq(ops_tensor_device(t).type, OPS_CPU);
    ck_assert_int_eq(ops_tensor_storage_offset(t), 0);
    ck_assert_uint_eq(ops_tensor_version(t), 0);
    ck_assert(ops_tensor_is_contiguous(t));
    ck_assert_int_eq(ops_tensor_size(t, -1), 4);
    ck_assert_int_eq(ops_tensor_size(t, 1), 3);
    ck_assert_int_eq(ops_tensor_size(t, 3), -1);
    ck_assert_str_eq(ops_last_error(),
                     "size: Dimension out of range (expected to be in range of [-3, 2], but got 3) for argument 'dim'");
    ops_tensor_release(t);

    /* Explicit strides: storage reaches the largest addressed element. */
    t = ops_tensor_new("empty_strided", 2, (int64_t[]){2, 3}, (int64_t[]){1, 2}, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), (1 + 1 * 1 + 2 * 2) * 4);
    ck_assert(!ops_tensor_is_contiguous(t));
    ops_tensor_release(t);
    t = ops_tensor_new("empty_strided", 2, (int64_t[]){2, 3}, (int64_t[]){4, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), (1 + 4 + 2) * 8);
    ops_tensor_release(t);
    t = ops_tensor_new("empty_strided", 2, (int64_t[]){3, 3}, (int64_t[]){0, 1}, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 3 * 4);
    ops_tensor_release(t);

    /* Size-0 and 0-dim tensors. */
    t = ops_tensor_new("zeros", 2, (int64_t[]){0, 5}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_numel(t), 0);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 0);
    ck_assert(ops_tensor_is_contiguous(t));
    ops_tensor_release(t);
    t = ops_tensor_new("zeros", 0, NULL, NULL, OPS_BOOL, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_tensor_numel(t), 1);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 1);
    ck_assert(ops_tensor_is_contiguous(t));
    ck_assert_int_eq(ops_tensor_size(t, 0), -1);
    ck_assert_str_eq(ops_last_error(), "size: Dimension specified as 0 but tensor has no dimensions");
    ops_tensor_release(t);

    /* Large tensors go through the device allocator. */
    t = ops_tensor_new("zeros", 1, (int64_t[]){1 << 20}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(t->storage->allocator, ops_cpu_allocator());
    memset(ops_tensor_data_ptr(t), 0, 4u << 20);
    ops_tensor_release(t);
}
END_TEST

START_TEST(test_tensor_new_errors)
{
    ck_assert_ptr_null(ops_tensor_new("zeros", 2, (int64_t[]){-1, 2}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_str_eq(ops_last_error(), "zeros: Trying to create tensor with negative dimension -1: [-1, 2]");
    int64_t sizes[OPS_MAX_DIMS + 1];
    for (int i = 0; i <= OPS_MAX_DIMS; i++)
        sizes[i] = 1;
    ck_assert_ptr_null(ops_tensor_new("zeros", OPS_MAX_DIMS + 1, sizes, NULL, OPS_FLOAT32, OPS_DEVICE_CPU));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_ptr_null(ops_tensor_new("zeros", 1, sizes, NULL, (ops_dtype)42, OPS_DEVICE_CPU));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DTYPE);
    /* Too many bytes to even count. */
    ck_assert_ptr_null(ops_tensor_new("zeros", 2, (int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40}, NULL, OPS_FLOAT32,
                                      OPS_DEVICE_CPU));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ck_assert_str_eq(ops_last_error(),
                     "zeros: a tensor of shape [1099511627776, 1099511627776] and dtype float32 is too large to allocate");
    /* Representable but impossible: the allocator fails cleanly (2^50 bytes). */
    ck_assert_ptr_null(ops_tensor_new("zeros", 1, (int64_t[]){INT64_C(1) << 48}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "zeros: out of memory"));
#ifndef OPS_WITH_CUDA
    ck_assert_ptr_null(ops_tensor_new("zeros", 1, sizes, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0)));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "zeros: libops was built without CUDA support (device cuda:0)");
    ck_assert_ptr_null(ops_device_allocator("add", OPS_DEVICE_CUDA(1)));
    ck_assert_str_eq(ops_last_error(), "add: libops was built without CUDA support (device cuda:1)");
#endif
    ck_assert_ptr_eq(ops_device_allocator("add", OPS_DEVICE_CPU), ops_cpu_allocator());
    ck_assert_ptr_null(ops_device_allocator("add", OPS_DEVICE_UNSPECIFIED));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
}
END_TEST

/* The device API of a build without CUDA: runtime/core/device.c and tensor.c reach a
 * device only through its backend table (kernels/device.h), and CUDA's is absent here;
 * the answers are a CPU build's, word for word.  (A CUDA build, emulated or not, is
 * covered by test_cuda.c and test_cuda_host.c.) */
START_TEST(test_cpu_build_device_api)
{
    if (ops_cuda_device_count() > 0)
        return; /* a CUDA build with a device */
    ops_memory_stats ms;
    ops_cuda_device_properties p;
    ops_tensor *h = ops_tensor_new("zeros", 1, (int64_t[]){4}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(h);
    ck_assert(!ops_tensor_is_pinned(h));
#ifndef OPS_WITH_CUDA
    ck_assert(!ops_cuda_allow_tf32());
    ck_assert_int_eq(ops_cuda_set_allow_tf32(true), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "cuda_set_allow_tf32: libops was built without CUDA support (no CUDA device)");
    ck_assert(!ops_cuda_allow_tf32());
    ck_assert_int_eq(ops_cuda_get_device_properties(0, &p), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(),
                     "cuda_get_device_properties: libops was built without CUDA support (no CUDA device)");
    ck_assert_int_eq(ops_cuda_memory_stats(0, &ms), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "cuda_memory_stats: libops was built without CUDA support (no CUDA device)");
    ck_assert_int_eq(ops_cuda_empty_cache(1), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "cuda_empty_cache: libops was built without CUDA support (no CUDA device)");
    ck_assert_int_eq(ops_cuda_reset_peak_memory_stats(0), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(),
                     "cuda_reset_peak_memory_stats: libops was built without CUDA support (no CUDA device)");
    ck_assert_ptr_null(ops_cuda_pinned_allocator());
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "cuda_pinned_allocator: libops was built without CUDA support (no CUDA device)");
    ck_assert_int_eq(ops_cuda_pinned_memory_stats(&ms), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(),
                     "cuda_pinned_memory_stats: libops was built without CUDA support (no CUDA device)");
    ck_assert_int_eq(ops_cuda_pinned_empty_cache(), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "cuda_pinned_empty_cache: libops was built without CUDA support (no CUDA device)");
    ck_assert_ptr_null(ops_tensor_pin_memory(h));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "pin_memory: pinned memory needs the CUDA backend (this is a CPU build)");
#else
    (void)ms, (void)p;
#endif
    /* a device type past the last one is refused by name, in every build */
    ck_assert_ptr_null(ops_device_allocator("empty", (ops_device){OPS_NUM_DEVICE_TYPES, 0}));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "empty: invalid device (type 2)");
    ops_tensor_release(h);
}
END_TEST

START_TEST(test_from_data_scalar_item)
{
    int32_t src[6] = {1, -2, 3, -4, 5, -6};
    ops_tensor *t = ops_tensor_from_data(src, OPS_INTS(3, 2), OPS_INT32);
    ck_assert_ptr_nonnull(t);
    src[0] = 100; /* a copy: later changes to the source do not show */
    const int32_t *p = ops_tensor_data_ptr(t);
    ck_assert_int_eq(p[0], 1);
    ck_assert_int_eq(p[5], -6);
    ops_scalar s;
    ck_assert_int_eq(ops_tensor_item(t, &s), OPS_ERR_VALUE);
    ck_assert_str_eq(ops_last_error(), "item: a Tensor with 6 elements cannot be converted to Scalar");
    ops_tensor *one = ops_tensor_new_view(t, 2, (int64_t[]){1, 1}, (int64_t[]){2, 1}, 3);
    ck_assert_int_eq(ops_tensor_item(one, &s), OPS_OK);
    ck_assert_int_eq(s.kind, OPS_SCALAR_INT);
    ck_assert_int_eq(s.v.i, -4);
    ops_tensor_release(one);
    ops_tensor_release(t);
    ck_assert_ptr_null(ops_tensor_from_data(NULL, OPS_INTS(2), OPS_INT32));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);

    ops_tensor *a = ops_scalar_tensor(OPS_SCALAR_FLOAT(2.5), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_tensor_dtype(a), OPS_FLOAT32);
    ck_assert_int_eq(ops_tensor_ndim(a), 0);
    ck_assert(!(a->flags & OPS_TENSOR_WRAPPED_NUMBER));
    ck_assert_int_eq(ops_tensor_item(a, &s), OPS_OK);
    ck_assert_int_eq(s.kind, OPS_SCALAR_FLOAT);
    ck_assert_double_eq(s.v.f, 2.5);
    ops_tensor *b = ops_scalar_tensor(OPS_SCALAR_INT(7), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_tensor_dtype(b), OPS_INT64);
    ops_tensor *c = ops_scalar_tensor(OPS_SCALAR_BOOL(true), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_tensor_dtype(c), OPS_BOOL);
    ck_assert_int_eq(ops_tensor_item(c, &s), OPS_OK);
    ck_assert_int_eq(s.kind, OPS_SCALAR_BOOL);
    ck_assert(s.v.b);
    ops_tensor *d = ops_scalar_tensor(OPS_SCALAR_FLOAT(-3.75), OPS_INT8);
    ck_assert_int_eq(ops_tensor_item(d, &s), OPS_OK);
    ck_assert_int_eq(s.kind, OPS_SCALAR_INT);
    ck_assert_int_eq(s.v.i, -3);
    ops_tensor *e = ops_scalar_tensor(OPS_SCALAR_FLOAT(0.1), OPS_FLOAT16);
    ck_assert_int_eq(ops_tensor_item(e, &s), OPS_OK);
    ck_assert_double_eq(s.v.f, 0.0999755859375); /* nearest half to 0.1 */

    ops_tensor *w = ops_wrap_scalar(OPS_SCALAR_FLOAT(1.5));
    ck_assert(w->flags & OPS_TENSOR_WRAPPED_NUMBER);
    ck_assert_int_eq(ops_tensor_dtype(w), OPS_FLOAT64);
    ck_assert_int_eq(ops_tensor_item(w, &s), OPS_OK);
    ck_assert_double_eq(s.v.f, 1.5);
    ops_tensor *wi = ops_wrap_scalar(OPS_SCALAR_INT(-9));
    ck_assert_int_eq(ops_tensor_dtype(wi), OPS_INT64);
    ops_tensor *wb = ops_wrap_scalar(OPS_SCALAR_BOOL(false));
    ck_assert_int_eq(ops_tensor_dtype(wb), OPS_BOOL);

    ops_tensor *all[] = {a, b, c, d, e, w, wi, wb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- resize_ ----------------------------------------------------------------------- */

START_TEST(test_resize)
{
    /* Growing an embedded storage nobody else sees moves its bytes out. */
    ops_tensor *t = arange_f32(1, (int64_t[]){4});
    ck_assert_int_eq(ops_tensor_resize_("add_out", t, 2, (int64_t[]){10, 20}), OPS_OK);
    ck_assert_int_eq(ops_tensor_ndim(t), 2);
    ck_assert_int_eq(ops_tensor_strides(t)[0], 20);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 800);
    const float *p = ops_tensor_data_ptr(t);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(p[i], (float)i);
    ((float *)ops_tensor_data_ptr(t))[799 / 4] = 1.0f; /* the new bytes are ours */

    /* Shrinking keeps the storage. */
    void *before = ops_tensor_data_ptr(t);
    ck_assert_int_eq(ops_tensor_resize_("add_out", t, 1, (int64_t[]){3}), OPS_OK);
    ck_assert_ptr_eq(ops_tensor_data_ptr(t), before);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 800);
    ops_tensor_release(t);

    /* A large storage grows once its other views are gone; the storage offset counts. */
    ops_tensor *big = arange_f32(1, (int64_t[]){1000});
    ops_tensor *tail = ops_tensor_new_view(big, 1, (int64_t[]){10}, (int64_t[]){1}, 990);
    ops_tensor_release(big);
    ck_assert_int_eq(ops_tensor_resize_("add_out", tail, 1, (int64_t[]){20}), OPS_OK);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(tail), 1010 * 4);
    ck_assert_float_eq(((float *)ops_tensor_data_ptr(tail))[9], 999.0f);
    ops_tensor_release(tail);

    /* Borrowed bytes cannot grow; errors leave the tensor as it was. */
    float buf[4] = {0};
    ops_tensor *b = ops_tensor_from_blob(buf, OPS_INTS(4), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
    ck_assert_int_eq(ops_tensor_resize_("add_out", b, 1, (int64_t[]){2}), OPS_OK);
    ck_assert_int_eq(ops_tensor_resize_("add_out", b, 1, (int64_t[]){5}), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_tensor_size(b, 0), 2);
    ck_assert_int_eq(ops_tensor_resize_("add_out", b, 1, (int64_t[]){-5}), OPS_ERR_VALUE);
    ck_assert_str_eq(ops_last_error(), "add_out: Trying to create tensor with negative dimension -5: [-5]");
    ck_assert_int_eq(ops_tensor_size(b, 0), 2);
    ops_tensor_release(b);
}
END_TEST

/* Growing moves the bytes and frees the old block, so it is refused while
 * anything else holds the storage: another view (its base, a slice), which may
 * be an input of the same call or be read by another thread, or an export. */
START_TEST(test_resize_refused_when_shared_or_exported)
{
    for (int large = 0; large < 2; large++) { /* embedded bytes, then a block of their own */
        const int64_t n = large ? 100000 : 8;
        ops_tensor *base = arange_f32(1, &n);
        const void *data = ops_tensor_data_ptr(base);
        /* The empty view past the end, as base[n:] in Python. */
        ops_tensor *end = ops_tensor_new_view(base, 1, (int64_t[]){0}, (int64_t[]){1}, n);
        ck_assert_int_eq(ops_tensor_resize_("add", end, 1, (int64_t[]){1000}), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "add: out= cannot be resized"));
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "shared with another tensor"));
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "[1000]"));
        ck_assert_int_eq(ops_tensor_size(end, 0), 0); /* untouched */
        ck_assert_ptr_eq(ops_tensor_data_ptr(base), data);
        /* Through an op: out= the empty view. */
        ops_tensor *ones = ops_ones(OPS_INTS(1000), OPS_FLOAT32, OPS_DEVICE_CPU);
        ck_assert_int_eq(ops_add_out(ones, ones, OPS_SCALAR_INT(1), end), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "shared with another tensor"));
        ck_assert_int_eq(ops_tensor_size(end, 0), 0);
        ck_assert_ptr_eq(ops_tensor_data_ptr(base), data);
        /* Shrinking, or keeping the size, moves nothing and stays allowed. */
        ck_assert_int_eq(ops_tensor_resize_("add", base, 1, (int64_t[]){2}), OPS_OK);
        ck_assert_ptr_eq(ops_tensor_data_ptr(base), data);
        /* Once base is gone the view is alone and may grow. */
        ops_tensor_release(base);
        ck_assert_int_eq(ops_add_out(ones, ones, OPS_SCALAR_INT(1), end), OPS_OK);
        ck_assert_int_eq(ops_tensor_size(end, 0), 1000);
        ck_assert_float_eq(((const float *)ops_tensor_data_ptr(end))[999], 2.0f);
        ops_tensor_release(end);

        /* An exported storage: refused though no other view exists. */
        ops_tensor *e = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
        if (large) { /* room for n elements, shape [0] */
            ck_assert_int_eq(ops_tensor_resize_("add", e, 1, &n), OPS_OK);
            ck_assert_int_eq(ops_tensor_resize_("add", e, 1, (int64_t[]){0}), OPS_OK);
        }
        ops_storage_export_begin(e->storage);
        ops_storage_export_begin(e->storage); /* two exports, counted */
        ck_assert(ops_storage_is_exported(e->storage));
        const int64_t more = n + 1000;
        ck_assert_int_eq(ops_tensor_resize_("add", e, 1, &more), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "exported (to NumPy, DLPack or a memoryview)"));
        ops_storage_export_end(e->storage);
        /* Resizing within the storage moves nothing: allowed while exported. */
        ck_assert_msg(ops_add_out(ones, ones, OPS_SCALAR_INT(1), e) == (large ? OPS_OK : OPS_ERR_VALUE), "%s",
                      ops_last_error());
        ops_storage_export_end(e->storage);
        ck_assert(!ops_storage_is_exported(e->storage));
        ck_assert_int_eq(ops_tensor_resize_("add", e, 1, &more), OPS_OK);
        ops_tensor_release(e);
        ops_tensor_release(ones);
    }
}
END_TEST

/* ---- overlap ---------------------------------------------------------------------- */

START_TEST(test_overlap)
{
    ops_tensor *t = arange_f32(1, (int64_t[]){10});
    ops_tensor *lo = ops_tensor_new_view(t, 1, (int64_t[]){5}, (int64_t[]){1}, 0);
    ops_tensor *hi = ops_tensor_new_view(t, 1, (int64_t[]){5}, (int64_t[]){1}, 5);
    ops_tensor *mid = ops_tensor_new_view(t, 1, (int64_t[]){4}, (int64_t[]){1}, 3);
    ops_tensor *other = arange_f32(1, (int64_t[]){10});
    ck_assert(!ops_tensor_may_overlap(lo, hi));
    ck_assert(ops_tensor_may_overlap(lo, mid));
    ck_assert(ops_tensor_may_overlap(mid, hi));
    ck_assert(ops_tensor_may_overlap(t, lo));
    ck_assert(!ops_tensor_may_overlap(t, other));
    ops_tensor *empty = ops_tensor_new_view(t, 1, (int64_t[]){0}, (int64_t[]){1}, 2);
    ck_assert(!ops_tensor_may_overlap(t, empty));

    /* Internal overlap. */
    ck_assert(!ops_tensor_has_internal_overlap(t));
    ops_tensor *bcast = ops_tensor_new_view(t, 2, (int64_t[]){3, 10}, (int64_t[]){0, 1}, 0);
    ck_assert(ops_tensor_has_internal_overlap(bcast));
    ops_tensor *ones = ops_tensor_new_view(t, 2, (int64_t[]){1, 10}, (int64_t[]){0, 1}, 0);
    ck_assert(!ops_tensor_has_internal_overlap(ones)); /* a 0 stride over size 1 is fine */
    ops_tensor *tr = ops_tensor_new_view(t, 2, (int64_t[]){5, 2}, (int64_t[]){1, 5}, 0);
    ck_assert(!ops_tensor_has_internal_overlap(tr));
    /* offsets 0,1,1,2: element 1 twice */
    ops_tensor *win = ops_tensor_new_view(t, 2, (int64_t[]){2, 2}, (int64_t[]){1, 1}, 0);
    ck_assert(ops_tensor_has_internal_overlap(win));
    /* offsets 2i + 3j for i<3, j<2: 0,3,2,5,4,7, all distinct (interleaved, no overlap) */
    ops_tensor *inter = ops_tensor_new_view(t, 2, (int64_t[]){3, 2}, (int64_t[]){2, 3}, 0);
    ck_assert(!ops_tensor_has_internal_overlap(inter));
    /* offsets 2i + 4j: 0,4,2,6,4,8: 4 twice */
    ops_tensor *dup = ops_tensor_new_view(t, 2, (int64_t[]){3, 2}, (int64_t[]){2, 4}, 0);
    ck_assert(ops_tensor_has_internal_overlap(dup));

    ops_tensor *all[] = {t, lo, hi, mid, other, empty, bcast, ones, tr, win, inter, dup};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- shape helpers ----------------------------------------------------------------- */

START_TEST(test_shape_helpers)
{
    ck_assert_int_eq(ops_shape_numel(0, NULL), 1);
    ck_assert_int_eq(ops_shape_numel(3, (int64_t[]){2, 3, 4}), 24);
    ck_assert_int_eq(ops_shape_numel(2, (int64_t[]){0, 4}), 0);
    int64_t st[4];
    ops_contiguous_strides(4, (int64_t[]){2, 0, 3, 1}, st);
    /* PyTorch gives 0- and 1-size dims the stride a size 1 would give. */
    ck_assert_int_eq(st[0], 3);
    ck_assert_int_eq(st[1], 3);
    ck_assert_int_eq(st[2], 1);
    ck_assert_int_eq(st[3], 1);

    int64_t d = -1;
    ck_assert(ops_wrap_dim("sum", "dim", &d, 3));
    ck_assert_int_eq(d, 2);
    d = -3;
    ck_assert(ops_wrap_dim("sum", "dim", &d, 3));
    ck_assert_int_eq(d, 0);
    d = 3;
    ck_assert(!ops_wrap_dim("sum", "dim", &d, 2));
    ck_assert_int_eq(d, 3);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_INDEX);
    ck_assert_str_eq(ops_last_error(),
                     "sum: Dimension out of range (expected to be in range of [-2, 1], but got 3) for argument 'dim'");
    d = -3;
    ck_assert(!ops_wrap_dim("sum", NULL, &d, 2));
    ck_assert_str_eq(ops_last_error(), "sum: Dimension out of range (expected to be in range of [-2, 1], but got -3)");
    d = -1; /* a 0-dim tensor accepts -1 and 0 */
    ck_assert(ops_wrap_dim("sum", "dim", &d, 0));
    ck_assert_int_eq(d, 0);
    d = 1;
    ck_assert(!ops_wrap_dim("sum", "dim", &d, 0));
    ck_assert_str_eq(ops_last_error(),
                     "sum: Dimension out of range (expected to be in range of [-1, 0], but got 1) for argument 'dim'");

    int nd;
    int64_t out[OPS_MAX_DIMS];
    ck_assert_int_eq(ops_broadcast_shapes("add", "self", 2, (int64_t[]){4, 1}, "other", 3, (int64_t[]){2, 1, 5}, &nd,
                                          out),
                     OPS_OK);
    ck_assert_int_eq(nd, 3);
    ck_assert_int_eq(out[0], 2);
    ck_assert_int_eq(out[1], 4);
    ck_assert_int_eq(out[2], 5);
    ck_assert_int_eq(ops_broadcast_shapes("add", "self", 0, NULL, "other", 1, (int64_t[]){0}, &nd, out), OPS_OK);
    ck_assert_int_eq(nd, 1);
    ck_assert_int_eq(out[0], 0);
    ck_assert_int_eq(ops_broadcast_shapes("add", "self", 2, (int64_t[]){2, 3}, "other", 1, (int64_t[]){4}, &nd, out),
                     OPS_ERR_SHAPE);
    ck_assert_str_eq(ops_last_error(),
                     "add: the size of self (3) must match the size of other (4) at non-singleton dimension 1");
    ck_assert_int_eq(ops_broadcast_shapes("mul", NULL, 3, (int64_t[]){3, 2, 1}, NULL, 2, (int64_t[]){3, 1}, &nd, out),
                     OPS_ERR_SHAPE);
    ck_assert_str_eq(ops_last_error(),
                     "mul: the size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1");
}
END_TEST

START_TEST(test_check_same_device)
{
    ops_tensor *a = arange_f32(1, (int64_t[]){3});
    ops_tensor *b = arange_f32(1, (int64_t[]){3});
    const ops_tensor *ts[3] = {a, NULL, b};
    const char *names[3] = {"self", "weight", "other"};
    ops_device dev = OPS_DEVICE_CUDA(5);
    ck_assert_int_eq(ops_check_same_device("add", 3, ts, names, &dev), OPS_OK);
    ck_assert_int_eq(dev.type, OPS_CPU);
    const ops_tensor *none[2] = {NULL, NULL};
    ck_assert_int_eq(ops_check_same_device("zeros", 2, none, NULL, &dev), OPS_OK);
    ck_assert_int_eq(dev.type, OPS_DEVICE_TYPE_NONE);

    /* No CUDA tensor can be made in a CPU build; label one by hand for the message. */
    b->storage->device = OPS_DEVICE_CUDA(0);
    ck_assert_int_eq(ops_check_same_device("add", 3, ts, names, &dev), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(),
                     "add: expected all tensors to be on the same device, but found self on cpu and other on cuda:0");
    ck_assert_int_eq(ops_check_same_device("add", 3, ts, NULL, &dev), OPS_ERR_DEVICE);
    ck_assert_str_eq(ops_last_error(), "add: expected all tensors to be on the same device, but found argument 0 on "
                                       "cpu and argument 2 on cuda:0");
    /* Reading it is refused without a CUDA device; with one (the emulated build) the
     * read would copy from the host pointer as from device memory, so the label proves
     * nothing there: test_cuda.c reads real device tensors. */
    if (ops_cuda_device_count() == 0) {
        /* the copy and the read reach the device through the stubs of kernels/copy.h,
         * whose CUDA entries a CPU build leaves empty: the same messages as before; a
         * CUDA build on a machine without a GPU reaches the CUDA loop, which finds no
         * device */
        char *s = ops_tensor_to_string(b);
        ck_assert_ptr_null(s);
        ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
#ifndef OPS_WITH_CUDA
        ck_assert_ptr_nonnull(strstr(ops_last_error(), ": copying from cuda:0 to cpu needs the CUDA backend (this is a "
                                                       "CPU build)"));
#else
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "to_string: no CUDA device (cuda:0 requested"));
#endif
        ops_scalar sc;
        ops_tensor *one = ops_tensor_new_view(b, 0, NULL, NULL, 0);
        ck_assert_int_eq(ops_tensor_item(one, &sc), OPS_ERR_DEVICE);
#ifndef OPS_WITH_CUDA
        ck_assert_str_eq(ops_last_error(), "item: reading a tensor on cuda:0 needs the CUDA backend (this is a CPU build)");
#else
        ck_assert_ptr_nonnull(strstr(ops_last_error(), "item: no CUDA device (cuda:0 requested"));
#endif
        ops_tensor_release(one);
    }
    b->storage->device = OPS_DEVICE_CPU;
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_threads)
{
    const int def = omp_get_max_threads();
    ck_assert_int_eq(ops_get_num_threads(), def);
    ops_set_num_threads(3);
    ck_assert_int_eq(ops_get_num_threads(), 3);
    ck_assert_int_eq(omp_get_max_threads(), 3);
    ops_set_num_threads(0);
    ck_assert_int_eq(ops_get_num_threads(), def);
    ops_set_num_threads(-4);
    ck_assert_int_eq(ops_get_num_threads(), def);
    ck_assert_int_eq(omp_get_max_threads(), def);
}
END_TEST

static Suite *
storage_suite(void)
{
    Suite *s = suite_create("storage");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_refcounts);
    tcase_add_test(tc, test_views_keep_storage_alive);
    tcase_add_test(tc, test_embedded_layout);
    tcase_add_test(tc, test_from_blob_deleter);
    tcase_add_test(tc, test_from_blob_errors);
    tcase_add_test(tc, test_version_shared_by_views);
    tcase_add_test(tc, test_tensor_new_geometry);
    tcase_add_test(tc, test_tensor_new_errors);
    tcase_add_test(tc, test_cpu_build_device_api);
    tcase_add_test(tc, test_from_data_scalar_item);
    tcase_add_test(tc, test_resize);
    tcase_add_test(tc, test_resize_refused_when_shared_or_exported);
    tcase_add_test(tc, test_overlap);
    tcase_add_test(tc, test_shape_helpers);
    tcase_add_test(tc, test_check_same_device);
    tcase_add_test(tc, test_threads);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(storage_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

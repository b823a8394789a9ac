/* Creation kernels (CPU): empty, empty_strided, zeros, ones, full, arange, linspace,
 * eye, fill_; and the device-independent composites empty_like, zeros_like,
 * ones_like, full_like, fill and zero_, which go through the public API so that they
 * work on any device that has the kernels they call.
 *
 * PyTorch's rules: a dtype that is not given is float32 (ops_default_float_dtype()),
 * except full (from the fill value: bool, int64 or float32), the *_like ops (self's
 * dtype) and arange (int64 when start, end and step are all integers).  A fill value
 * must fit the dtype ("value cannot be converted to type uint8 without overflow"),
 * as PyTorch's checked Scalar conversion demands.  The out= forms of arange, linspace
 * and eye resize out when its size differs, and otherwise write it in place (through
 * a contiguous temporary when out is strided). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_convert.h"
#include "ops_dispatch.h"
#include "ops_functions.h"
#include "ops_kernels.h"

/* ---- shared checks ------------------------------------------------------------ */

static const char *
scalar_str(ops_scalar s, char *buf, size_t n)
{
    if (s.kind == OPS_SCALAR_BOOL)
        snprintf(buf, n, "%s", s.v.b ? "True" : "False");
    else if (s.kind == OPS_SCALAR_INT)
        snprintf(buf, n, "%" PRId64, s.v.i);
    else
        snprintf(buf, n, "%.17g", s.v.f);
    return buf;
}

/* Largest finite value of a floating dtype, as a double. */
static double
floating_max(ops_dtype dt)
{
    switch (dt) {
    case OPS_FLOAT16:
        return 65504.0;
    case OPS_BFLOAT16:
        return 3.3895313892515355e38; /* 0x7f7f */
    case OPS_FLOAT32:
        return (double)FLT_MAX;
    default:
        return DBL_MAX;
    }
}

/* PyTorch's checked Scalar -> dtype conversion (c10's checked_convert): anything
 * converts to bool (nonzero is true, NaN included); ints must lie in the dtype's
 * range (unsigned dtypes also accept the negatives that wrap, down to -max), floats
 * in its finite range (inf and NaN only into floating dtypes).  The int64 bound is
 * exclusive at 2^63 so that the conversion that follows is defined. */
static bool
scalar_fits(ops_scalar s, ops_dtype dt)
{
    if (s.kind == OPS_SCALAR_BOOL || dt == OPS_BOOL)
        return true;
    if (s.kind == OPS_SCALAR_INT) {
        const int64_t i = s.v.i;
        switch (dt) {
        case OPS_UINT8:
            return i >= -UINT8_MAX && i <= UINT8_MAX;
        case OPS_INT8:
            return i >= INT8_MIN && i <= INT8_MAX;
        case OPS_INT16:
            return i >= INT16_MIN && i <= INT16_MAX;
        case OPS_INT32:
            return i >= INT32_MIN && i <= INT32_MAX;
        case OPS_FLOAT16:
            return i >= -65504 && i <= 65504;
        default:
            return true; /* int64, bfloat16, float32, float64 */
        }
    }
    const double d = s.v.f;
    if (ops_dtype_is_floating(dt))
        return !isfinite(d) || fabs(d) <= floating_max(dt);
    if (isnan(d))
        return false;
    switch (dt) {
    case OPS_UINT8:
        return d >= 0.0 && d <= 255.0;
    case OPS_INT8:
        return d >= -128.0 && d <= 127.0;
    case OPS_INT16:
        return d >= -32768.0 && d <= 32767.0;
    case OPS_INT32:
        return d >= -2147483648.0 && d <= 2147483647.0;
    default:
        return d >= -9223372036854775808.0 && d < 9223372036854775808.0;
    }
}

static ops_status
check_fits(const char *op, const char *arg, ops_scalar s, ops_dtype dt)
{
    if (scalar_fits(s, dt))
        return OPS_OK;
    char buf[40];
    return ops_fail(OPS_ERR_VALUE, "%s: %s %s cannot be converted to type %s without overflow", op, arg,
                    scalar_str(s, buf, sizeof buf), ops_dtype_name(dt));
}

/* A CPU factory accepts no device (None) or cpu.  Anything else gets the error the
 * device's allocator gives (no CUDA in this build, bad index), or, when that device
 * exists, a refusal: the generated glue sends cuda factories to CUDA kernels. */
static bool
check_cpu_device(const char *op, ops_device device)
{
    if (device.type == OPS_DEVICE_TYPE_NONE || device.type == OPS_CPU)
        return true;
    if (ops_device_allocator(op, device) == NULL)
        return false;
    char buf[32];
    ops_fail(OPS_ERR_DEVICE, "%s: the cpu kernel cannot create a tensor on %s", op,
             ops_device_str(device, buf, sizeof buf));
    return false;
}

static bool
check_ndim(const char *op, int64_t len)
{
    if (len >= 0 && len <= OPS_MAX_DIMS)
        return true;
    ops_fail(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %" PRId64, op, OPS_MAX_DIMS, len);
    return false;
}

/* A new uninitialised CPU tensor (strides NULL: contiguous); dtype None is float32. */
static ops_tensor *
new_cpu_tensor(const char *op, ops_int_list size, const int64_t *strides, ops_dtype dtype, ops_device device)
{
    if (!check_cpu_device(op, device) || !check_ndim(op, size.len))
        return NULL;
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    return ops_tensor_new(op, (int)size.len, size.data, strides, dtype, OPS_DEVICE_CPU);
}

/* ---- filling -------------------------------------------------------------------- */

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

/* Writes value (already checked to fit) into every element of t, whatever its
 * strides; bumps t's version. */
static ops_status
fill_values(const char *op, ops_tensor *t, ops_scalar value)
{
    int64_t pattern = 0; /* room for the widest dtype */
    ops_scalar_store(value, t->dtype, &pattern);
    ops_iter it;
    ops_status st = ops_iter_build_nullary(&it, op, t);
    if (st == OPS_OK) {
        fill_pattern(&it, ops_dtype_size(t->dtype), &pattern);
        st = ops_iter_finish(&it);
    }
    ops_iter_release(&it);
    return st;
}

ops_status
ops_check_fill_value(const char *op, ops_scalar value, ops_dtype dt)
{
    return check_fits(op, "value", value, dt);
}

ops_status
fill_cpu_(ops_tensor *self, ops_scalar value)
{
    const ops_status st = ops_check_fill_value("fill_", value, self->dtype);
    return st != OPS_OK ? st : fill_values("fill_", self, value);
}

/* ---- empty, zeros, ones, full ----------------------------------------------------- */

ops_tensor *
empty_cpu(ops_int_list size, ops_dtype dtype, ops_device device)
{
    return new_cpu_tensor("empty", size, NULL, dtype, device);
}

ops_tensor *
empty_strided_cpu(ops_int_list size, ops_int_list stride, ops_dtype dtype, ops_device device)
{
    if (size.len != stride.len)
        return ops_fail_null(OPS_ERR_VALUE,
                             "empty_strided: mismatch in length of strides and shape (%" PRId64
                             " strides for %" PRId64 " dims)",
                             stride.len, size.len);
    return new_cpu_tensor("empty_strided", size, stride.data, dtype, device);
}

/* A new contiguous tensor of zeros: all-zero bytes are 0 in every dtype (+0.0). */
static ops_tensor *
new_zeroed(const char *op, ops_int_list size, ops_dtype dtype, ops_device device)
{
    ops_tensor *t = new_cpu_tensor(op, size, NULL, dtype, device);
    if (t != NULL)
        memset(ops_tensor_data_ptr(t), 0, (size_t)ops_tensor_numel(t) * ops_dtype_size(t->dtype));
    return t;
}

ops_tensor *
zeros_cpu(ops_int_list size, ops_dtype dtype, ops_device device)
{
    return new_zeroed("zeros", size, dtype, device);
}

/* A new contiguous tensor of size filled with value (dtype already resolved). */
static ops_tensor *
new_filled(const char *op, ops_int_list size, ops_scalar value, ops_dtype dtype, ops_device device)
{
    if (check_fits(op, "fill_value", value, dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = new_cpu_tensor(op, size, NULL, dtype, device);
    if (t != NULL && fill_values(op, t, value) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
ones_cpu(ops_int_list size, ops_dtype dtype, ops_device device)
{
    return new_filled("ones", size, OPS_SCALAR_INT(1), dtype == OPS_DTYPE_NONE ? ops_default_float_dtype() : dtype,
                      device);
}

ops_tensor *
full_cpu(ops_int_list size, ops_scalar fill_value, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = fill_value.kind == OPS_SCALAR_BOOL  ? OPS_BOOL
                : fill_value.kind == OPS_SCALAR_INT ? OPS_INT64
                                                    : ops_default_float_dtype();
    return new_filled("full", size, fill_value, dtype, device);
}

/* ---- the *_like composites --------------------------------------------------------- */

/* Strides for a new dense tensor of self's sizes laid out in self's memory order
 * (PyTorch's preserve_format): self's own strides when self is dense and does not
 * overlap itself, else dense strides with the dims ordered by self's strides
 * (insertion sort from the innermost; stride-0 dims keep their place). */
static void
like_strides(const ops_tensor *self, int64_t *strides)
{
    const int nd = self->ndim;
    int perm[OPS_MAX_DIMS]; /* perm[0] is the innermost dim */
    for (int i = 0; i < nd; i++)
        perm[i] = nd - 1 - i;
    for (int i = 1; i < nd; i++) {
        for (int j = i; j > 0; j--) {
            const int a = perm[j - 1], b = perm[j]; /* a is inner to b */
            const int64_t sa = llabs(self->strides[a]), sb = llabs(self->strides[b]);
            if (sa == 0 || sb == 0)
                break;
            /* Swap when a is the outer one in memory; equal strides: smaller size inside. */
            if (sa > sb || (sa == sb && self->sizes[a] > self->sizes[b])) {
                perm[j - 1] = b;
                perm[j] = a;
            } else {
                break;
            }
        }
    }
    bool same = true;
    int64_t expect = 1;
    for (int i = 0; i < nd; i++) {
        const int d = perm[i];
        strides[d] = expect;
        if (self->sizes[d] != 1 && self->strides[d] != expect)
            same = false;
        expect *= self->sizes[d] > 1 ? self->sizes[d] : 1;
    }
    if (same) /* dense and non-overlapping: keep even the strides of size-1 dims */
        for (int i = 0; i < nd; i++)
            strides[i] = self->strides[i];
}

ops_tensor *
empty_like_impl(const ops_tensor *self, ops_dtype dtype, ops_device device)
{
    int64_t strides[OPS_MAX_DIMS];
    like_strides(self, strides);
    if (dtype == OPS_DTYPE_NONE)
        dtype = self->dtype;
    if (device.type == OPS_DEVICE_TYPE_NONE)
        device = self->storage->device;
    return ops_empty_strided((ops_int_list){self->sizes, self->ndim}, (ops_int_list){strides, self->ndim}, dtype,
                             device);
}

ops_tensor *
zeros_like_impl(const ops_tensor *self, ops_dtype dtype, ops_device device)
{
    ops_tensor *t = empty_like_impl(self, dtype, device);
    if (t != NULL && ops_zero_(t) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
full_like_impl(const ops_tensor *self, ops_scalar fill_value, ops_dtype dtype, ops_device device)
{
    if (check_fits("full_like", "fill_value", fill_value, dtype == OPS_DTYPE_NONE ? self->dtype : dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = empty_like_impl(self, dtype, device);
    if (t != NULL && ops_fill_(t, fill_value) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
ones_like_impl(const ops_tensor *self, ops_dtype dtype, ops_device device)
{
    return full_like_impl(self, OPS_SCALAR_INT(1), dtype, device);
}

ops_tensor *
fill_impl(const ops_tensor *self, ops_scalar value)
{
    if (check_fits("fill", "value", value, self->dtype) != OPS_OK)
        return NULL;
    return full_like_impl(self, value, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
}

ops_status
zero_impl_(ops_tensor *self)
{
    return ops_fill_(self, OPS_SCALAR_INT(0));
}

/* ---- index-dependent values: arange, linspace -------------------------------------- */

/* What a sequence writer needs; each writer fills n contiguous elements of dtype dt. */
typedef struct seq_args {
    ops_scalar start, end, step; /* step: arange only */
    int64_t steps;               /* linspace only */
} seq_args;

typedef void (*seq_writer)(ops_dtype dt, void *data, int64_t n, const seq_args *a);

/* Splits a long element loop over the library's threads; short ones stay serial. */
#ifdef _OPENMP
#define PARALLEL_FOR_N_ _Pragma("omp parallel for if (n >= OPS_GRAIN_SIZE) num_threads(nthreads)")
#else
#define PARALLEL_FOR_N_
#endif

static float
round_half(float v)
{
    return ops_half_to_float(ops_float_to_half(v));
}

static float
round_bf16(float v)
{
    return ops_bfloat16_to_float(ops_float_to_bfloat16(v));
}

/* arange's element i is start + step * i in PyTorch's accumulate type: int64 for
 * integral dtypes (wrapping, then narrowed), float for float16/bfloat16, double for
 * float32/float64; rounded once into the dtype. */
static void
arange_writer(ops_dtype dt, void *data, int64_t n, const seq_args *a)
{
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    if (ops_dtype_is_integral(dt, false)) {
        const uint64_t s = (uint64_t)ops_scalar_to_int64(a->start);
        const uint64_t st = (uint64_t)ops_scalar_to_int64(a->step);
        switch (dt) {
        case OPS_UINT8: {
            uint8_t *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = (uint8_t)(s + st * (uint64_t)i);
            break;
        }
        case OPS_INT8: {
            int8_t *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = (int8_t)(uint8_t)(s + st * (uint64_t)i);
            break;
        }
        case OPS_INT16: {
            int16_t *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = (int16_t)(uint16_t)(s + st * (uint64_t)i);
            break;
        }
        case OPS_INT32: {
            int32_t *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = (int32_t)(uint32_t)(s + st * (uint64_t)i);
            break;
        }
        default: {
            int64_t *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = (int64_t)(s + st * (uint64_t)i);
            break;
        }
        }
        return;
    }
    if (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) {
        const float s = (float)ops_scalar_to_double(a->start);
        const float st = (float)ops_scalar_to_double(a->step);
        if (dt == OPS_FLOAT16) {
            ops_half *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = ops_float_to_half(s + st * (float)i);
        } else {
            ops_bfloat16 *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = ops_float_to_bfloat16(s + st * (float)i);
        }
        return;
    }
    const double s = ops_scalar_to_double(a->start);
    const double st = ops_scalar_to_double(a->step);
    if (dt == OPS_FLOAT32) {
        float *p = data;
        PARALLEL_FOR_N_
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(s + st * (double)i);
    } else {
        double *p = data;
        PARALLEL_FOR_N_
        for (int64_t i = 0; i < n; i++)
            p[i] = s + st * (double)i;
    }
}

/* linspace with n = steps >= 2, as PyTorch computes it: the first half counts up
 * from start, the second half down from end (so both ends are exact), with
 * step = (end - start) / (steps - 1) in double for integral dtypes (then truncated),
 * in the dtype itself for floating ones, float16/bfloat16 rounding after every
 * operation as their arithmetic does. */
static void
linspace_writer(ops_dtype dt, void *data, int64_t n, const seq_args *a)
{
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    const int64_t half = n / 2;
    const int64_t last = n - 1;
    if (ops_dtype_is_integral(dt, false)) {
        /* start and end as the dtype's values (checked to fit), then double math. */
        int64_t s64, e64;
        {
            int64_t buf = 0;
            ops_scalar_store(a->start, dt, &buf);
            s64 = ops_scalar_to_int64(ops_scalar_load(&buf, dt));
            ops_scalar_store(a->end, dt, &buf);
            e64 = ops_scalar_to_int64(ops_scalar_load(&buf, dt));
        }
        const double s = (double)s64, e = (double)e64;
        const double step = (e - s) / (double)last;
#define LINSPACE_INT_(T)                                                                 \
    do {                                                                                 \
        T *p = data;                                                                     \
        PARALLEL_FOR_N_                                                                  \
        for (int64_t i = 0; i < n; i++)                                                  \
            p[i] = (T)(i < half ? s + step * (double)i : e - step * (double)(last - i)); \
    } while (0)
        switch (dt) {
        case OPS_UINT8:
            LINSPACE_INT_(uint8_t);
            break;
        case OPS_INT8:
            LINSPACE_INT_(int8_t);
            break;
        case OPS_INT16:
            LINSPACE_INT_(int16_t);
            break;
        case OPS_INT32:
            LINSPACE_INT_(int32_t);
            break;
        default:
            LINSPACE_INT_(int64_t);
            break;
        }
#undef LINSPACE_INT_
        return;
    }
    if (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) {
        float (*const r)(float) = dt == OPS_FLOAT16 ? round_half : round_bf16;
        const float s = r((float)ops_scalar_to_double(a->start));
        const float e = r((float)ops_scalar_to_double(a->end));
        const float step = r(r(e - s) / r((float)last));
        if (dt == OPS_FLOAT16) {
            ops_half *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = ops_float_to_half(i < half ? r(s + r(step * r((float)i)))
                                                  : r(e - r(step * r((float)(last - i)))));
        } else {
            ops_bfloat16 *p = data;
            PARALLEL_FOR_N_
            for (int64_t i = 0; i < n; i++)
                p[i] = ops_float_to_bfloat16(i < half ? r(s + r(step * r((float)i)))
                                                      : r(e - r(step * r((float)(last - i)))));
        }
        return;
    }
    if (dt == OPS_FLOAT32) {
        const float s = (float)ops_scalar_to_double(a->start);
        const float e = (float)ops_scalar_to_double(a->end);
        const float step = (e - s) / (float)last;
        float *p = data;
        PARALLEL_FOR_N_
        for (int64_t i = 0; i < n; i++)
            p[i] = i < half ? s + step * (float)i : e - step * (float)(last - i);
        return;
    }
    const double s = ops_scalar_to_double(a->start);
    const double e = ops_scalar_to_double(a->end);
    const double step = (e - s) / (double)last;
    double *p = data;
    PARALLEL_FOR_N_
    for (int64_t i = 0; i < n; i++)
        p[i] = i < half ? s + step * (double)i : e - step * (double)(last - i);
}

/* Writes a sequence into out, which already has its final shape: directly when out
 * is contiguous, else into a contiguous temporary copied into out (allocated before
 * anything is written, so a failure leaves out untouched).  Bumps out's version. */
static ops_status
write_sequence(const char *op, ops_tensor *out, seq_writer w, const seq_args *a)
{
    const int64_t n = ops_tensor_numel(out);
    if (ops_tensor_is_contiguous(out)) {
        w(out->dtype, ops_tensor_data_ptr(out), n, a);
        ops_tensor_bump_version(out);
        return OPS_OK;
    }
    ops_tensor *tmp = ops_tensor_new(op, out->ndim, out->sizes, NULL, out->dtype, OPS_DEVICE_CPU);
    if (tmp == NULL)
        return ops_last_status();
    w(out->dtype, ops_tensor_data_ptr(tmp), n, a);
    const ops_status st = ops_copy_values(op, out, tmp);
    ops_tensor_release(tmp);
    if (st == OPS_OK)
        ops_tensor_bump_version(out);
    return st;
}

/* Gets out ready to take n elements (arange, linspace) or the shape [n, m] (eye):
 * resized when its element count (by_numel) or its shape differs, as PyTorch's
 * resize_; written in place otherwise, which needs distinct elements. */
static ops_status
prepare_out(const char *op, ops_tensor *out, int ndim, const int64_t *shape, bool by_numel)
{
    bool resize;
    if (by_numel)
        resize = ops_tensor_numel(out) != ops_shape_numel(ndim, shape);
    else
        resize = out->ndim != ndim || memcmp(out->sizes, shape, (size_t)ndim * sizeof *shape) != 0;
    if (resize)
        return ops_tensor_resize_(op, out, ndim, shape);
    if (ops_tensor_has_internal_overlap(out))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers "
                        "to a single memory location; clone() the tensor before performing the operation",
                        op);
    return OPS_OK;
}

/* ---- arange ---------------------------------------------------------------------- */

static bool
scalar_is_integral(ops_scalar s)
{
    return s.kind != OPS_SCALAR_FLOAT;
}

/* PyTorch's checks and length: bounds and step validated in double; the length is
 * ceil((end - start) / step) in double, except for int64 results from integer
 * arguments, which count exactly.  start and step must also fit the accumulate type
 * the values are computed in (int64, float or double). */
static ops_status
arange_length(const char *op, ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dt, int64_t *len)
{
    if (dt == OPS_BOOL || (int)dt < 0 || dt >= OPS_NUM_DTYPES)
        return ops_fail_dtype(op, dt, OPS_MASK_NUMERIC);
    const double ds = ops_scalar_to_double(start), de = ops_scalar_to_double(end);
    const double dstep = ops_scalar_to_double(step);
    if (!(dstep > 0 || dstep < 0))
        return ops_fail(OPS_ERR_VALUE, "%s: step must be nonzero", op);
    if (!isfinite(ds) || !isfinite(de))
        return ops_fail(OPS_ERR_VALUE, "%s: unsupported range: %.17g -> %.17g", op, ds, de);
    if (!((dstep > 0 && de >= ds) || (dstep < 0 && de <= ds)))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: upper bound and larger bound inconsistent with step sign (start %.17g, end %.17g, "
                        "step %.17g)",
                        op, ds, de, dstep);
    const ops_dtype acc = ops_dtype_is_integral(dt, false)                  ? OPS_INT64
                          : (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) ? OPS_FLOAT32
                                                                      : OPS_FLOAT64;
    ops_status st; /* end only sets the length, computed in double */
    if ((st = check_fits(op, "start", start, acc)) != OPS_OK || (st = check_fits(op, "step", step, acc)) != OPS_OK)
        return st;
    double size_d;
    if (dt == OPS_INT64 && scalar_is_integral(start) && scalar_is_integral(end) && scalar_is_integral(step)) {
        const __int128 xs = ops_scalar_to_int64(start), xe = ops_scalar_to_int64(end);
        const __int128 xst = ops_scalar_to_int64(step);
        const __int128 sgn = xst > 0 ? 1 : -1;
        size_d = (double)((xe - xs + xst - sgn) / xst);
    } else {
        size_d = ceil((de - ds) / dstep);
    }
    if (!(size_d >= 0 && size_d < 9223372036854775808.0))
        return ops_fail(OPS_ERR_VALUE, "%s: invalid size, possible overflow? (start %.17g, end %.17g, step %.17g)",
                        op, ds, de, dstep);
    *len = (int64_t)size_d;
    return OPS_OK;
}

ops_tensor *
arange_start_step_cpu(ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = scalar_is_integral(start) && scalar_is_integral(end) && scalar_is_integral(step)
                    ? OPS_INT64
                    : ops_default_float_dtype();
    int64_t n;
    if (!check_cpu_device("arange", device) || arange_length("arange", start, end, step, dtype, &n) != OPS_OK)
        return NULL;
    ops_tensor *t = ops_tensor_new("arange", 1, &n, NULL, dtype, OPS_DEVICE_CPU);
    if (t != NULL)
        arange_writer(dtype, ops_tensor_data_ptr(t), n, &(seq_args){.start = start, .step = step});
    return t;
}

ops_tensor *
arange_start_cpu(ops_scalar start, ops_scalar end, ops_dtype dtype, ops_device device)
{
    return arange_start_step_cpu(start, end, OPS_SCALAR_INT(1), dtype, device);
}

ops_tensor *
arange_cpu(ops_scalar end, ops_dtype dtype, ops_device device)
{
    return arange_start_step_cpu(OPS_SCALAR_INT(0), end, OPS_SCALAR_INT(1), dtype, device);
}

ops_status
arange_start_out_cpu(ops_scalar start, ops_scalar end, ops_scalar step, ops_tensor *out)
{
    int64_t n;
    ops_status st = arange_length("arange", start, end, step, out->dtype, &n);
    if (st == OPS_OK)
        st = prepare_out("arange", out, 1, &n, true);
    if (st == OPS_OK)
        st = write_sequence("arange", out, arange_writer, &(seq_args){.start = start, .step = step});
    return st;
}

/* ---- linspace ---------------------------------------------------------------------- */

static ops_status
linspace_check(const char *op, ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dt)
{
    if (steps < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: number of steps must be non-negative, got %" PRId64, op, steps);
    if (dt == OPS_BOOL || (int)dt < 0 || dt >= OPS_NUM_DTYPES)
        return ops_fail_dtype(op, dt, OPS_MASK_NUMERIC);
    ops_status st;
    if ((st = check_fits(op, "start", start, dt)) != OPS_OK || (st = check_fits(op, "end", end, dt)) != OPS_OK)
        return st;
    return OPS_OK;
}

/* steps 0: nothing; 1: [start]; else the two-sided sequence. */
static void
linspace_any_writer(ops_dtype dt, void *data, int64_t n, const seq_args *a)
{
    if (n == 1)
        ops_scalar_store(a->start, dt, data);
    else if (n > 1)
        linspace_writer(dt, data, n, a);
}

ops_tensor *
linspace_cpu(ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (!check_cpu_device("linspace", device) || linspace_check("linspace", start, end, steps, dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = ops_tensor_new("linspace", 1, &steps, NULL, dtype, OPS_DEVICE_CPU);
    if (t != NULL)
        linspace_any_writer(dtype, ops_tensor_data_ptr(t), steps, &(seq_args){.start = start, .end = end});
    return t;
}

ops_status
linspace_out_cpu(ops_scalar start, ops_scalar end, int64_t steps, ops_tensor *out)
{
    ops_status st = linspace_check("linspace", start, end, steps, out->dtype);
    if (st == OPS_OK)
        st = prepare_out("linspace", out, 1, &steps, true);
    if (st == OPS_OK)
        st = write_sequence("linspace", out, linspace_any_writer, &(seq_args){.start = start, .end = end});
    return st;
}

/* ---- eye --------------------------------------------------------------------------- */

static ops_status
eye_check(const char *op, int64_t n, int64_t m)
{
    if (n < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: n must be greater or equal to 0, got %" PRId64, op, n);
    if (m < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: m must be greater or equal to 0, got %" PRId64, op, m);
    return OPS_OK;
}

/* Ones on the diagonal of a [n, m] tensor whose other elements are already 0. */
static void
eye_diagonal(ops_tensor *t)
{
    const int64_t k = t->sizes[0] < t->sizes[1] ? t->sizes[0] : t->sizes[1];
    const int64_t step = (t->strides[0] + t->strides[1]) * (int64_t)ops_dtype_size(t->dtype);
    char *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < k; i++)
        ops_scalar_store(OPS_SCALAR_INT(1), t->dtype, p + i * step);
}

ops_tensor *
eye_m_cpu(int64_t n, int64_t m, ops_dtype dtype, ops_device device)
{
    if (!check_cpu_device("eye", device) || eye_check("eye", n, m) != OPS_OK)
        return NULL;
    ops_tensor *t = new_zeroed("eye", (ops_int_list){(const int64_t[]){n, m}, 2}, dtype, device);
    if (t != NULL)
        eye_diagonal(t);
    return t;
}

ops_tensor *
eye_cpu(int64_t n, ops_dtype dtype, ops_device device)
{
    return eye_m_cpu(n, n, dtype, device);
}

ops_status
eye_m_out_cpu(int64_t n, int64_t m, ops_tensor *out)
{
    const int64_t shape[2] = {n, m};
    ops_status st = eye_check("eye", n, m);
    if (st == OPS_OK)
        st = prepare_out("eye", out, 2, shape, false);
    if (st == OPS_OK)
        st = fill_values("eye", out, OPS_SCALAR_INT(0)); /* bumps out's version */
    if (st == OPS_OK)
        eye_diagonal(out);
    return st;
}

ops_status
eye_out_cpu(int64_t n, ops_tensor *out)
{
    return eye_m_out_cpu(n, n, out);
}

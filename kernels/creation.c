/* Creation ops: the drivers of empty, empty_strided, zeros, ones, full, arange,
 * linspace and eye for every device (the schema's `CPU, CUDA: creation_*`), which
 * check, allocate on the requested device and leave the element writes to the stubs
 * of kernels/creation.h (the CPU loops in kernels/cpu/creation.c, the CUDA kernels in
 * kernels/cuda/creation.cu); fill_'s value check, shared by the CPU and CUDA kernels
 * of fill_; and the device-independent composites empty_like,
 * zeros_like, ones_like, full_like, fill and zero_, which go through the public API so
 * that they work on any device that has the kernels they call.  arange's and
 * linspace's element formulas are in kernels/creation_math.h, shared with CUDA.
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

#include "kernels/creation.h"
#include "ops_convert.h"
#include "ops_dispatch.h"
#include "ops_functions_creation.h"
#include "ops_kernels_creation.h"

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

/* The byte pattern of value in dt, for creation_fill_bytes. */
static int64_t
pattern_of(ops_scalar value, ops_dtype dt)
{
    int64_t pattern = 0; /* room for the widest dtype */
    ops_scalar_store(value, dt, &pattern);
    return pattern;
}

/* creation_fill_bytes for t's device. */
static ops_status
fill_bytes(const char *op, ops_tensor *t, int64_t pattern)
{
    const ops_device d = t->storage->device;
    return OPS_STUB_CALL(creation_fill_bytes, d, op, t, pattern);
}

/* fill_ (zero_ is the composite fill_(0)): the value must fit self's dtype, is
 * converted once here, and its bytes go to every element whatever the strides. */
ops_status
creation_fill_(ops_tensor *self, ops_scalar value)
{
    ops_status st = ops_check_fill_value("fill_", value, self->dtype);
    if (st != OPS_OK)
        return st;
    st = fill_bytes("fill_", self, pattern_of(value, self->dtype));
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

static bool
check_ndim(const char *op, int64_t len)
{
    if (len >= 0 && len <= OPS_MAX_DIMS)
        return true;
    ops_fail(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %" PRId64, op, OPS_MAX_DIMS, len);
    return false;
}

/* A new uninitialised tensor on device (None: cpu; strides NULL: contiguous); dtype
 * None is float32. */
static ops_tensor *
new_tensor(const char *op, ops_int_list size, const int64_t *strides, ops_dtype dtype, ops_device device)
{
    if (!check_ndim(op, size.len))
        return NULL;
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (device.type == OPS_DEVICE_TYPE_NONE)
        device = OPS_DEVICE_CPU;
    return ops_tensor_new(op, (int)size.len, size.data, strides, dtype, device);
}

/* ---- filling -------------------------------------------------------------------- */

/* Writes value (already checked to fit) into every element of t, whatever its
 * strides; bumps t's version. */
static ops_status
fill_values(const char *op, ops_tensor *t, ops_scalar value)
{
    const ops_status st = fill_bytes(op, t, pattern_of(value, t->dtype));
    if (st == OPS_OK)
        ops_tensor_bump_version(t);
    return st;
}

ops_status
ops_check_fill_value(const char *op, ops_scalar value, ops_dtype dt)
{
    return check_fits(op, "value", value, dt);
}

/* ---- empty, zeros, ones, full ----------------------------------------------------- */

ops_tensor *
creation_empty(ops_int_list size, ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    if (memory_format == OPS_MEMORY_FORMAT_NONE || memory_format == OPS_CONTIGUOUS_FORMAT)
        return new_tensor("empty", size, NULL, dtype, device);
    if ((int)memory_format < 0 || memory_format >= OPS_NUM_MEMORY_FORMATS)
        return ops_fail_null(OPS_ERR_VALUE, "empty: invalid memory_format (%d)", (int)memory_format);
    if (!check_ndim("empty", size.len))
        return NULL;
    int64_t strides[OPS_MAX_DIMS];
    if (ops_memory_format_strides("empty", (int)size.len, size.data, memory_format, strides) != OPS_OK)
        return NULL;
    return new_tensor("empty", size, strides, dtype, device);
}

ops_tensor *
creation_empty_strided(ops_int_list size, ops_int_list stride, ops_dtype dtype, ops_device device)
{
    if (size.len != stride.len)
        return ops_fail_null(OPS_ERR_VALUE,
                             "empty_strided: mismatch in length of strides and shape (%" PRId64
                             " strides for %" PRId64 " dims)",
                             stride.len, size.len);
    return new_tensor("empty_strided", size, stride.data, dtype, device);
}

/* A new contiguous tensor of zeros: all-zero bytes are 0 in every dtype (+0.0). */
static ops_tensor *
new_zeroed(const char *op, ops_int_list size, ops_dtype dtype, ops_device device)
{
    ops_tensor *t = new_tensor(op, size, NULL, dtype, device);
    if (t == NULL || ops_tensor_numel(t) == 0)
        return t;
    if (fill_bytes(op, t, 0) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
creation_zeros(ops_int_list size, ops_dtype dtype, ops_device device)
{
    return new_zeroed("zeros", size, dtype, device);
}

/* A new contiguous tensor of size filled with value (dtype already resolved). */
static ops_tensor *
new_filled(const char *op, ops_int_list size, ops_scalar value, ops_dtype dtype, ops_device device)
{
    if (check_fits(op, "fill_value", value, dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = new_tensor(op, size, NULL, dtype, device);
    if (t != NULL && fill_values(op, t, value) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
creation_ones(ops_int_list size, ops_dtype dtype, ops_device device)
{
    return new_filled("ones", size, OPS_SCALAR_INT(1), dtype == OPS_DTYPE_NONE ? ops_default_float_dtype() : dtype,
                      device);
}

ops_tensor *
creation_full(ops_int_list size, ops_scalar fill_value, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = fill_value.kind == OPS_SCALAR_BOOL  ? OPS_BOOL
                : fill_value.kind == OPS_SCALAR_INT ? OPS_INT64
                                                    : ops_default_float_dtype();
    return new_filled("full", size, fill_value, dtype, device);
}

/* ---- the *_like composites --------------------------------------------------------- */

/* memory_format None is preserve_format (self's layout: ops_tensor_new_like_format). */
ops_tensor *
empty_like_impl(const ops_tensor *self, ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = self->dtype;
    if (device.type == OPS_DEVICE_TYPE_NONE)
        device = self->storage->device;
    int64_t strides[OPS_MAX_DIMS];
    if (ops_memory_format_strides_like("empty_like", self, memory_format, strides) != OPS_OK)
        return NULL;
    return ops_empty_strided((ops_int_list){self->sizes, self->ndim}, (ops_int_list){strides, self->ndim}, dtype,
                             device);
}

ops_tensor *
zeros_like_impl(const ops_tensor *self, ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    ops_tensor *t = empty_like_impl(self, dtype, device, memory_format);
    if (t != NULL && ops_zero_(t) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
full_like_impl(const ops_tensor *self, ops_scalar fill_value, ops_dtype dtype, ops_device device,
               ops_memory_format memory_format)
{
    if (check_fits("full_like", "fill_value", fill_value, dtype == OPS_DTYPE_NONE ? self->dtype : dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = empty_like_impl(self, dtype, device, memory_format);
    if (t != NULL && ops_fill_(t, fill_value) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
ones_like_impl(const ops_tensor *self, ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    return full_like_impl(self, OPS_SCALAR_INT(1), dtype, device, memory_format);
}

ops_tensor *
fill_impl(const ops_tensor *self, ops_scalar value)
{
    if (check_fits("fill", "value", value, self->dtype) != OPS_OK)
        return NULL;
    return full_like_impl(self, value, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
}

ops_tensor *
zero_impl(const ops_tensor *self)
{
    return fill_impl(self, OPS_SCALAR_INT(0));
}

ops_status
zero_impl_(ops_tensor *self)
{
    return ops_fill_(self, OPS_SCALAR_INT(0));
}

/* ---- index-dependent values: arange, linspace -------------------------------------- */

static float
round16(ops_dtype dt, float v)
{
    return ops_seq_round16(dt, v);
}

/* arange's constants: start and step in the accumulate type (int64 for integral
 * dtypes, float for float16/bfloat16, double for float32/float64). */
static ops_seq
arange_seq(ops_dtype dt, ops_scalar start, ops_scalar step)
{
    ops_seq q = {.kind = OPS_SEQ_ARANGE, .dtype = dt};
    if (ops_dtype_is_integral(dt, false)) {
        q.istart = (uint64_t)ops_scalar_to_int64(start);
        q.istep = (uint64_t)ops_scalar_to_int64(step);
    } else if (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) {
        q.fstart = (float)ops_scalar_to_double(start);
        q.fstep = (float)ops_scalar_to_double(step);
    } else {
        q.dstart = ops_scalar_to_double(start);
        q.dstep = ops_scalar_to_double(step);
    }
    return q;
}

/* linspace's constants for n >= 2, as PyTorch computes them: step = (end - start) /
 * (steps - 1) in double for integral dtypes (start and end first converted to the
 * dtype, checked to fit), in the dtype itself for floating ones, float16/bfloat16
 * rounding after every operation as their arithmetic does. */
static ops_seq
linspace_seq(ops_dtype dt, ops_scalar start, ops_scalar end, int64_t n)
{
    ops_seq q = {.kind = OPS_SEQ_LINSPACE, .dtype = dt, .half = n / 2, .last = n - 1};
    if (ops_dtype_is_integral(dt, false)) {
        int64_t buf = 0;
        ops_scalar_store(start, dt, &buf);
        q.dstart = (double)ops_scalar_to_int64(ops_scalar_load(&buf, dt));
        ops_scalar_store(end, dt, &buf);
        q.dend = (double)ops_scalar_to_int64(ops_scalar_load(&buf, dt));
        q.dstep = (q.dend - q.dstart) / (double)q.last;
    } else if (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) {
        q.fstart = round16(dt, (float)ops_scalar_to_double(start));
        q.fend = round16(dt, (float)ops_scalar_to_double(end));
        q.fstep = round16(dt, round16(dt, q.fend - q.fstart) / round16(dt, (float)q.last));
    } else if (dt == OPS_FLOAT32) {
        q.fstart = (float)ops_scalar_to_double(start);
        q.fend = (float)ops_scalar_to_double(end);
        q.fstep = (q.fend - q.fstart) / (float)q.last;
    } else {
        q.dstart = ops_scalar_to_double(start);
        q.dend = ops_scalar_to_double(end);
        q.dstep = (q.dend - q.dstart) / (double)q.last;
    }
    return q;
}

/* Writes the sequence q into out (1-D, already its final shape; q NULL: linspace's
 * single element `single`); bumps out's version. */
static ops_status
write_sequence(const char *op, ops_tensor *out, const ops_seq *q, ops_scalar single)
{
    ops_status st = OPS_OK;
    if (ops_tensor_numel(out) > 0) {
        const ops_device d = out->storage->device;
        st = q != NULL ? OPS_STUB_CALL(creation_sequence, d, op, out, q)
                       : fill_bytes(op, out, pattern_of(single, out->dtype));
    }
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
arange_length(const char *op, unsigned declared, ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dt,
              int64_t *len)
{
    if ((int)dt < 0 || dt >= OPS_NUM_DTYPES || !(declared & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, declared);
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

/* declared: the set of the entry whose kernel runs (OPS_DTYPE_MASK_<ENTRY>). */
static ops_tensor *
arange_new(unsigned declared, ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = scalar_is_integral(start) && scalar_is_integral(end) && scalar_is_integral(step)
                    ? OPS_INT64
                    : ops_default_float_dtype();
    int64_t n;
    if (arange_length("arange", declared, start, end, step, dtype, &n) != OPS_OK)
        return NULL;
    ops_tensor *t = new_tensor("arange", (ops_int_list){&n, 1}, NULL, dtype, device);
    const ops_seq q = arange_seq(dtype, start, step);
    if (t != NULL && write_sequence("arange", t, &q, start) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_status
creation_arange_start_out(ops_scalar start, ops_scalar end, ops_scalar step, ops_tensor *out)
{
    int64_t n;
    ops_status st = arange_length("arange", OPS_DTYPE_MASK_ARANGE_START_OUT, start, end, step, out->dtype, &n);
    if (st == OPS_OK)
        st = prepare_out("arange", out, 1, &n, true);
    if (st == OPS_OK) {
        const ops_seq q = arange_seq(out->dtype, start, step);
        st = write_sequence("arange", out, &q, start);
    }
    return st;
}

/* ---- linspace ---------------------------------------------------------------------- */

/* steps, which PyTorch checks before the dtype: linspace's and linspace.out's `check:`
 * (the glue refuses an undeclared dtype after it). */
static ops_status
linspace_check_steps(int64_t steps)
{
    if (steps < 0)
        return ops_fail(OPS_ERR_VALUE, "linspace: number of steps must be non-negative, got %" PRId64, steps);
    return OPS_OK;
}

ops_status
ops_check_linspace(ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dtype, ops_device device)
{
    (void)start, (void)end, (void)dtype, (void)device;
    return linspace_check_steps(steps);
}

ops_status
ops_check_linspace_out(ops_scalar start, ops_scalar end, int64_t steps, ops_tensor *out)
{
    (void)start, (void)end, (void)out;
    return linspace_check_steps(steps);
}

/* steps and dt (of declared, the set of the entry whose kernel runs: the glue has
 * checked both; this guards a direct call), then start and end as dt holds them. */
static ops_status
linspace_check(const char *op, unsigned declared, ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dt)
{
    if (linspace_check_steps(steps) != OPS_OK)
        return ops_last_status();
    if ((int)dt < 0 || dt >= OPS_NUM_DTYPES || !(declared & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, declared);
    ops_status st;
    if ((st = check_fits(op, "start", start, dt)) != OPS_OK || (st = check_fits(op, "end", end, dt)) != OPS_OK)
        return st;
    return OPS_OK;
}

/* out (steps elements) = the sequence: steps 1 is [start]. */
static ops_status
linspace_write(ops_tensor *out, ops_scalar start, ops_scalar end, int64_t steps)
{
    if (steps < 2)
        return write_sequence("linspace", out, NULL, start);
    const ops_seq q = linspace_seq(out->dtype, start, end, steps);
    return write_sequence("linspace", out, &q, start);
}

ops_tensor *
creation_linspace(ops_scalar start, ops_scalar end, int64_t steps, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (linspace_check("linspace", OPS_DTYPE_MASK_LINSPACE, start, end, steps, dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = new_tensor("linspace", (ops_int_list){&steps, 1}, NULL, dtype, device);
    if (t != NULL && linspace_write(t, start, end, steps) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_status
creation_linspace_out(ops_scalar start, ops_scalar end, int64_t steps, ops_tensor *out)
{
    ops_status st = linspace_check("linspace", OPS_DTYPE_MASK_LINSPACE_OUT, start, end, steps, out->dtype);
    if (st == OPS_OK)
        st = prepare_out("linspace", out, 1, &steps, true);
    if (st == OPS_OK)
        st = linspace_write(out, start, end, steps);
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

/* Ones on the diagonal of a [n, m] tensor whose other elements are already 0: the
 * diagonal seen as a 1-D view (stride = the sum of t's strides).  Does not bump
 * t's version. */
static ops_status
eye_diagonal(ops_tensor *t)
{
    const int64_t k = t->sizes[0] < t->sizes[1] ? t->sizes[0] : t->sizes[1];
    if (k == 0)
        return OPS_OK;
    const int64_t step = t->strides[0] + t->strides[1];
    ops_tensor diag = ops_borrowed_view(t, 1, &k, &step, t->offset);
    return fill_bytes("eye", &diag, pattern_of(OPS_SCALAR_INT(1), t->dtype));
}

static ops_tensor *
eye_new(int64_t n, int64_t m, ops_dtype dtype, ops_device device)
{
    if (eye_check("eye", n, m) != OPS_OK)
        return NULL;
    ops_tensor *t = new_zeroed("eye", (ops_int_list){(const int64_t[]){n, m}, 2}, dtype, device);
    if (t != NULL && eye_diagonal(t) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

static ops_status
eye_write_out(int64_t n, int64_t m, ops_tensor *out)
{
    const int64_t shape[2] = {n, m};
    ops_status st = eye_check("eye", n, m);
    if (st == OPS_OK)
        st = prepare_out("eye", out, 2, shape, false);
    if (st == OPS_OK)
        st = fill_values("eye", out, OPS_SCALAR_INT(0)); /* bumps out's version */
    if (st == OPS_OK)
        st = eye_diagonal(out);
    return st;
}

/* ---- the overloads ------------------------------------------------------------------ */

ops_tensor *
creation_arange_start_step(ops_scalar start, ops_scalar end, ops_scalar step, ops_dtype dtype, ops_device device)
{
    return arange_new(OPS_DTYPE_MASK_ARANGE_START_STEP, start, end, step, dtype, device);
}

ops_tensor *
creation_arange_start(ops_scalar start, ops_scalar end, ops_dtype dtype, ops_device device)
{
    return arange_new(OPS_DTYPE_MASK_ARANGE_START, start, end, OPS_SCALAR_INT(1), dtype, device);
}

ops_tensor *
creation_arange(ops_scalar end, ops_dtype dtype, ops_device device)
{
    return arange_new(OPS_DTYPE_MASK_ARANGE, OPS_SCALAR_INT(0), end, OPS_SCALAR_INT(1), dtype, device);
}

ops_tensor *
creation_eye_m(int64_t n, int64_t m, ops_dtype dtype, ops_device device)
{
    return eye_new(n, m, dtype, device);
}

ops_tensor *
creation_eye(int64_t n, ops_dtype dtype, ops_device device)
{
    return eye_new(n, n, dtype, device);
}

ops_status
creation_eye_m_out(int64_t n, int64_t m, ops_tensor *out)
{
    return eye_write_out(n, m, out);
}

ops_status
creation_eye_out(int64_t n, ops_tensor *out)
{
    return eye_write_out(n, n, out);
}

/* dtypes, devices and scalars: names, sizes, PyTorch's promotion lattice, its
 * result_type rules for 0-dim tensors and Python-style numbers, device strings,
 * and scalar conversions. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"
#include "ops_scalar_math.h"

/* ---- the dtype table ---------------------------------------------------- */

static const struct {
    const char *name;
} dtype_info[OPS_NUM_DTYPES] = {
#define OPS_X_(e, name, size) [e] = {name},
    OPS_FOREACH_DTYPE(OPS_X_)
#undef OPS_X_
};

static inline bool
dtype_valid(ops_dtype dt)
{
    return (int)dt >= 0 && dt < OPS_NUM_DTYPES;
}

const char *
ops_dtype_name(ops_dtype dt)
{
    return dtype_valid(dt) ? dtype_info[dt].name : "?";
}

size_t
ops_dtype_size(ops_dtype dt)
{
    return ops_dtype_itemsize(dt);
}

bool
ops_dtype_is_floating(ops_dtype dt)
{
    return dt == OPS_FLOAT16 || dt == OPS_BFLOAT16 || dt == OPS_FLOAT32 || dt == OPS_FLOAT64;
}

bool
ops_dtype_is_integral(ops_dtype dt, bool include_bool)
{
    if (dt == OPS_BOOL)
        return include_bool;
    return dt >= OPS_UINT8 && dt <= OPS_INT64;
}

ops_dtype
ops_dtype_from_name(const char *name)
{
    /* PyTorch's aliases too, so "torch.float"-style spellings from bindings work. */
    static const struct {
        const char *alias;
        ops_dtype dt;
    } aliases[] = {
        {"float", OPS_FLOAT32}, {"double", OPS_FLOAT64}, {"half", OPS_FLOAT16},
        {"long", OPS_INT64},    {"int", OPS_INT32},      {"short", OPS_INT16},
    };
    if (name == NULL)
        return OPS_DTYPE_NONE;
    for (int i = 0; i < OPS_NUM_DTYPES; i++)
        if (strcmp(name, dtype_info[i].name) == 0)
            return (ops_dtype)i;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].alias) == 0)
            return aliases[i].dt;
    return OPS_DTYPE_NONE;
}

/* The lattice follows from three rules (PyTorch's table obeys them): bool is below
 * everything; uint8 and int8 meet at int16; float16 and bfloat16 meet at float32;
 * every other pair goes to the later dtype of the enum, where any floating type
 * beats any integral one. */
ops_dtype
ops_promote_types(ops_dtype a, ops_dtype b)
{
    if (!dtype_valid(a) || !dtype_valid(b))
        return OPS_DTYPE_NONE;
    if (a == b)
        return a;
    if (a == OPS_BOOL)
        return b;
    if (b == OPS_BOOL)
        return a;
    if ((a == OPS_UINT8 && b == OPS_INT8) || (a == OPS_INT8 && b == OPS_UINT8))
        return OPS_INT16;
    if ((a == OPS_FLOAT16 && b == OPS_BFLOAT16) || (a == OPS_BFLOAT16 && b == OPS_FLOAT16))
        return OPS_FLOAT32;
    return a > b ? a : b;
}

bool
ops_can_cast(ops_dtype from, ops_dtype to)
{
    if (!dtype_valid(from) || !dtype_valid(to))
        return false;
    /* float -> integral would silently truncate (int_tensor *= 2.5). */
    if (ops_dtype_is_floating(from) && ops_dtype_is_integral(to, false))
        return false;
    /* bool is its own category: bool_tensor += 5 is refused. */
    if (from != OPS_BOOL && to == OPS_BOOL)
        return false;
    return true;
}

ops_dtype
ops_default_float_dtype(void)
{
    return OPS_FLOAT32;
}

/* ---- result_type ---------------------------------------------------------- */

static inline ops_dtype
promote_skip_none(ops_dtype a, ops_dtype b)
{
    if (a == OPS_DTYPE_NONE)
        return b;
    if (b == OPS_DTYPE_NONE)
        return a;
    return ops_promote_types(a, b);
}

/* A lower-priority group only matters when it raises the category: floating over
 * integral, or anything over bool. */
static inline ops_dtype
combine_categories(ops_dtype higher, ops_dtype lower)
{
    if (ops_dtype_is_floating(higher))
        return higher;
    if (higher == OPS_BOOL || ops_dtype_is_floating(lower))
        return promote_skip_none(higher, lower);
    if (higher != OPS_DTYPE_NONE)
        return higher;
    return lower;
}

ops_dtype
ops_scalar_dtype(ops_scalar s)
{
    switch (s.kind) {
    case OPS_SCALAR_BOOL:
        return OPS_BOOL;
    case OPS_SCALAR_INT:
        return OPS_INT64;
    case OPS_SCALAR_FLOAT:
        return OPS_FLOAT64;
    }
    return OPS_DTYPE_NONE;
}

ops_dtype
ops_result_type(int ntensors, const ops_tensor *const *tensors, int nscalars,
                const ops_scalar *const *scalars)
{
    ops_dtype dim_result = OPS_DTYPE_NONE;
    ops_dtype zero_result = OPS_DTYPE_NONE;
    ops_dtype wrapped_result = OPS_DTYPE_NONE;

    for (int i = 0; i < ntensors; i++) {
        const ops_tensor *t = tensors[i];
        if (t == NULL)
            continue;
        ops_dtype cur = t->dtype;
        if (t->ndim > 0) {
            dim_result = promote_skip_none(dim_result, cur);
        } else if (t->flags & OPS_TENSOR_WRAPPED_NUMBER) {
            /* A Python float is "some float": it takes the default dtype. */
            if (ops_dtype_is_floating(cur))
                cur = ops_default_float_dtype();
            wrapped_result = promote_skip_none(wrapped_result, cur);
        } else {
            zero_result = promote_skip_none(zero_result, cur);
        }
    }
    for (int i = 0; i < nscalars; i++) {
        if (scalars == NULL || scalars[i] == NULL)
            continue;
        ops_dtype cur = ops_scalar_dtype(*scalars[i]);
        if (ops_dtype_is_floating(cur))
            cur = ops_default_float_dtype();
        wrapped_result = promote_skip_none(wrapped_result, cur);
    }
    return combine_categories(dim_result, combine_categories(zero_result, wrapped_result));
}

/* ---- devices ------------------------------------------------------------ */

ops_status
ops_device_parse(const char *text, ops_device *out)
{
    if (text == NULL)
        return ops_fail(OPS_ERR_VALUE, "device: expected a device string, got NULL");
    ops_device dev;
    const char *rest;
    if (strncmp(text, "cpu", 3) == 0) {
        dev = OPS_DEVICE_CPU;
        rest = text + 3;
    } else if (strncmp(text, "cuda", 4) == 0) {
        dev = OPS_DEVICE_CUDA(0);
        rest = text + 4;
    } else {
        goto bad;
    }
    if (*rest == ':') {
        const char *digits = rest + 1;
        /* Plain decimal digits only: no sign, no spaces, no "0x". */
        if (*digits < '0' || *digits > '9')
            goto bad;
        for (const char *p = digits; *p; p++)
            if (*p < '0' || *p > '9')
                goto bad;
        errno = 0;
        long v = strtol(digits, NULL, 10);
        if (errno != 0 || v > 1 << 20)
            goto bad;
        if (dev.type == OPS_CPU && v != 0)
            return ops_fail(OPS_ERR_VALUE,
                            "device: invalid device string '%s': the cpu device has index 0 only", text);
        dev.index = (int)v;
    } else if (*rest != '\0') {
        goto bad;
    }
    if (out)
        *out = dev;
    return OPS_OK;
bad:
    return ops_fail(OPS_ERR_VALUE,
                    "device: invalid device string '%s' (expected \"cpu\", \"cuda\" or \"cuda:N\")", text);
}

const char *
ops_device_str(ops_device dev, char *buf, size_t buflen)
{
    if (buf == NULL || buflen == 0)
        return buf;
    switch (dev.type) {
    case OPS_CPU:
        snprintf(buf, buflen, "cpu");
        break;
    case OPS_CUDA:
        snprintf(buf, buflen, "cuda:%d", dev.index);
        break;
    default:
        snprintf(buf, buflen, "unspecified");
        break;
    }
    return buf;
}

bool
ops_device_equal(ops_device a, ops_device b)
{
    if (a.type != b.type)
        return false;
    /* cpu has one device whatever index a caller wrote. */
    return a.type == OPS_CPU || a.index == b.index;
}

/* ---- scalars ------------------------------------------------------------ */

double
ops_scalar_to_double(ops_scalar s)
{
    switch (s.kind) {
    case OPS_SCALAR_BOOL:
        return s.v.b ? 1.0 : 0.0;
    case OPS_SCALAR_INT:
        return (double)s.v.i;
    case OPS_SCALAR_FLOAT:
        return s.v.f;
    }
    return 0.0;
}

/* double -> int64 without C's undefined behaviour: truncates toward zero,
 * saturates out of range, NaN gives 0. */
static int64_t
double_to_int64_sat(double d)
{
    if (isnan(d))
        return 0;
    if (d >= 9223372036854775808.0) /* 2^63 */
        return INT64_MAX;
    if (d < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

int64_t
ops_scalar_to_int64(ops_scalar s)
{
    switch (s.kind) {
    case OPS_SCALAR_BOOL:
        return s.v.b ? 1 : 0;
    case OPS_SCALAR_INT:
        return s.v.i;
    case OPS_SCALAR_FLOAT:
        return double_to_int64_sat(s.v.f);
    }
    return 0;
}

void
ops_scalar_store(ops_scalar s, ops_dtype dt, void *dst)
{
    /* Integers narrower than int64 wrap (two's complement), as a C cast through
     * uint64 does; floats go through int64 first so huge values saturate there. */
    const int64_t i = ops_scalar_to_int64(s);
    const double d = ops_scalar_to_double(s);
    switch (dt) {
    case OPS_BOOL: {
        bool v = s.kind == OPS_SCALAR_FLOAT ? d != 0.0 : i != 0;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_UINT8: {
        uint8_t v = (uint8_t)(uint64_t)i;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_INT8: {
        int8_t v = (int8_t)(uint8_t)(uint64_t)i;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_INT16: {
        int16_t v = (int16_t)(uint16_t)(uint64_t)i;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_INT32: {
        int32_t v = (int32_t)(uint32_t)(uint64_t)i;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_INT64:
        memcpy(dst, &i, sizeof i);
        break;
    case OPS_FLOAT16: {
        ops_half v = ops_float_to_half(s.kind == OPS_SCALAR_INT ? (float)s.v.i : (float)d);
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_BFLOAT16: {
        ops_bfloat16 v = ops_float_to_bfloat16(s.kind == OPS_SCALAR_INT ? (float)s.v.i : (float)d);
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_FLOAT32: {
        float v = s.kind == OPS_SCALAR_INT ? (float)s.v.i : (float)d;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case OPS_FLOAT64:
        memcpy(dst, &d, sizeof d);
        break;
    default:
        break;
    }
}

ops_scalar
ops_scalar_load(const void *src, ops_dtype dt)
{
    switch (dt) {
    case OPS_BOOL: {
        uint8_t v;
        memcpy(&v, src, 1);
        return OPS_SCALAR_BOOL(v != 0);
    }
    case OPS_UINT8: {
        uint8_t v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_INT(v);
    }
    case OPS_INT8: {
        int8_t v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_INT(v);
    }
    case OPS_INT16: {
        int16_t v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_INT(v);
    }
    case OPS_INT32: {
        int32_t v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_INT(v);
    }
    case OPS_INT64: {
        int64_t v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_INT(v);
    }
    case OPS_FLOAT16: {
        ops_half v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_FLOAT(ops_half_to_float(v));
    }
    case OPS_BFLOAT16: {
        ops_bfloat16 v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_FLOAT(ops_bfloat16_to_float(v));
    }
    case OPS_FLOAT32: {
        float v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_FLOAT(v);
    }
    case OPS_FLOAT64: {
        double v;
        memcpy(&v, src, sizeof v);
        return OPS_SCALAR_FLOAT(v);
    }
    default:
        break;
    }
    return OPS_SCALAR_INT(0);
}

/* Random sampling ops: rand, randn, randint (and .low), rand_like, randn_like,
 * randint_like (and .low_dtype), randperm, bernoulli (Tensor probabilities, .out, .p,
 * bernoulli_.float), multinomial (and .out), the in-place normal_, uniform_,
 * exponential_, random_ (and .from, .to), dropout and native_dropout; the out= forms
 * of rand, randn, randint and randperm (PyTorch's .out and .generator_out overloads).
 *
 * One driver for both devices (this file): the random_* functions check the
 * arguments, allocate the result on its device and pick the generator; the element
 * work, and the reservation of the generator's range after whatever it allocates, is
 * the stubs of kernels/random.h: the CPU loops of kernels/cpu/random.c, the CUDA
 * kernels of kernels/cuda/random.cu.
 *
 * Every op draws from a Philox4x32-10 generator (include/libops/ops_random.h has the stream
 * layout, include/libops/ops_philox.h the mapping from words to values that both devices
 * compile): element i of a result, in row-major order, uses the words i*k .. i*k+k-1
 * of the range the op reserved, k fixed per op and dtype (ops_rand_dist_make).  So
 * the values depend on the generator's seed and offset only, never on the thread
 * count or the device.  A CUDA op given no generator draws from its device's default
 * generator (ops_device_default_generator), a CPU op from the CPU's.
 *
 * PyTorch's argument checks and messages; a failed op writes nothing, and an op that
 * fails after reserving its range (it never does: every check and allocation comes
 * first) would only skip values. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/random.h"
#include "ops_dispatch.h"
#include "ops_functions_copy.h"
#include "ops_functions_creation.h"
#include "ops_kernels_random.h"

/* ---- common steps ----------------------------------------------------------------- */

/* The generator an op on t's device draws from: g, or the device's default. */
static ops_generator *
generator_for(ops_generator *g, ops_device device)
{
    return g != NULL ? g : ops_device_default_generator(device);
}

static ops_status
check_no_internal_overlap(const char *op, const ops_tensor *t)
{
    if (!ops_tensor_has_internal_overlap(t))
        return OPS_OK;
    return ops_fail(OPS_ERR_VALUE,
                    "%s: unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location; clone() the tensor before performing the operation",
                    op);
}

/* Fill every element of t (any strides, distinct elements) from d; bernoulli with
 * probabilities p (t's shape, contiguous; NULL: d's constant).  Does not bump t's
 * version. */
static ops_status
fill_dist_p(const char *op, ops_tensor *t, ops_rand_kind kind, double a, double b, int64_t lo, uint64_t range,
            ops_generator *gen, const ops_tensor *p)
{
    const int64_t n = ops_tensor_numel(t);
    if (n == 0)
        return OPS_OK;
    const ops_rand_dist d = ops_rand_dist_make(kind, t->dtype, a, b, lo, range);
    gen = generator_for(gen, t->storage->device);
    if (gen == NULL)
        return ops_last_status();
    const ops_device dev = t->storage->device;
    return OPS_STUB_CALL(random_fill, dev, op, t, &d, gen, p);
}

/* In-place form: checks, fill, version bump. */
static ops_status
fill_inplace(const char *op, ops_tensor *self, ops_rand_kind kind, double a, double b, int64_t lo, uint64_t range,
             ops_generator *gen)
{
    ops_status st = check_no_internal_overlap(op, self);
    if (st == OPS_OK)
        st = fill_dist_p(op, self, kind, a, b, lo, range, gen, NULL);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

/* ---- argument checks ------------------------------------------------------------------ */

/* dt is one of the dtypes the entry declares (`dtypes:`, OPS_DTYPE_MASK_<ENTRY>); a
 * factory's dtype argument may be no dtype at all (refused the same way).  The
 * generated glue has refused the others before the kernel runs (`of:` names the
 * Tensor or the dtype argument); this guards a direct call. */
static bool
check_declared(const char *op, ops_dtype dt, unsigned declared)
{
    if ((int)dt >= 0 && dt < OPS_NUM_DTYPES && (declared & OPS_DTYPE_BIT(dt)))
        return true;
    ops_fail_dtype(op, dt, declared);
    return false;
}

/* A new contiguous tensor of the given size on device (None: cpu) for a factory. */
static ops_tensor *
new_factory_tensor(const char *op, ops_int_list size, ops_dtype dtype, ops_device device)
{
    if (size.len < 0 || size.len > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %" PRId64, op, OPS_MAX_DIMS,
                             size.len);
    if (device.type == OPS_DEVICE_TYPE_NONE)
        device = OPS_DEVICE_CPU;
    return ops_tensor_new(op, (int)size.len, size.data, NULL, dtype, device);
}

/* Builds the result, fills it; releases it on failure. */
static ops_tensor *
filled_or_null(const char *op, ops_tensor *t, ops_rand_kind kind, double a, double b, int64_t lo, uint64_t range,
               ops_generator *gen)
{
    if (t != NULL && fill_dist_p(op, t, kind, a, b, lo, range, gen, NULL) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

/* ---- rand, randn and their _like forms, uniform_, normal_, exponential_ ----------------- */

/* rand or randn (kind) of dtype (None: the default float dtype), a dtype of declared
 * (the set of the entry whose kernel runs, OPS_DTYPE_MASK_<ENTRY>). */
static ops_tensor *
rand_new(const char *op, unsigned declared, ops_rand_kind kind, ops_int_list size, ops_generator *generator,
         ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (!check_declared(op, dtype, declared))
        return NULL;
    return filled_or_null(op, new_factory_tensor(op, size, dtype, device), kind, 0.0, 1.0, 0, 0, generator);
}

ops_tensor *
random_rand(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return rand_new("rand", OPS_DTYPE_MASK_RAND, OPS_RAND_UNIFORM, size, generator, dtype, device);
}

ops_tensor *
random_randn(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return rand_new("randn", OPS_DTYPE_MASK_RANDN, OPS_RAND_NORMAL, size, generator, dtype, device);
}

ops_tensor *
random_rand_like(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device,
                 ops_memory_format memory_format)
{
    if (!check_declared("rand_like", dtype == OPS_DTYPE_NONE ? self->dtype : dtype, OPS_DTYPE_MASK_RAND_LIKE))
        return NULL;
    return filled_or_null("rand_like", ops_empty_like(self, dtype, device, memory_format), OPS_RAND_UNIFORM, 0.0,
                          1.0, 0, 0, generator);
}

ops_tensor *
random_randn_like(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device,
                  ops_memory_format memory_format)
{
    if (!check_declared("randn_like", dtype == OPS_DTYPE_NONE ? self->dtype : dtype,
                        OPS_DTYPE_MASK_RANDN_LIKE))
        return NULL;
    return filled_or_null("randn_like", ops_empty_like(self, dtype, device, memory_format), OPS_RAND_NORMAL, 0.0,
                          1.0, 0, 0, generator);
}

/* Largest finite value of a floating dtype. */
static double
floating_max(ops_dtype dt)
{
    switch (dt) {
    case OPS_FLOAT16:
        return 65504.0;
    case OPS_BFLOAT16:
        return 3.3895313892515355e38;
    case OPS_FLOAT32:
        return 3.4028234663852886e38;
    default:
        return 1.7976931348623157e308;
    }
}

ops_status
random_uniform_(ops_tensor *self, double from, double to, ops_generator *generator)
{
    const char *op = "uniform_";
    if (!check_declared(op, self->dtype, OPS_DTYPE_MASK_UNIFORM_))
        return ops_last_status();
    if (!(from <= to))
        return ops_fail(OPS_ERR_VALUE, "%s: uniform_ expects to return a [from, to) range, but found from=%.17g > to=%.17g",
                        op, from, to);
    if (!(to - from <= floating_max(self->dtype)))
        return ops_fail(OPS_ERR_VALUE, "%s: uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found "
                        "to=%.17g and from=%.17g which result in to-from to exceed the limit",
                        op, ops_dtype_name(self->dtype), to, from);
    return fill_inplace(op, self, OPS_RAND_UNIFORM, from, to, 0, 0, generator);
}

ops_status
random_normal_(ops_tensor *self, double mean, double std, ops_generator *generator)
{
    const char *op = "normal_";
    if (!check_declared(op, self->dtype, OPS_DTYPE_MASK_NORMAL_))
        return ops_last_status();
    if (!(std >= 0.0))
        return ops_fail(OPS_ERR_VALUE, "%s: normal expects std >= 0.0, but found std %.17g", op, std);
    return fill_inplace(op, self, OPS_RAND_NORMAL, mean, std, 0, 0, generator);
}

ops_status
random_exponential_(ops_tensor *self, double lambd, ops_generator *generator)
{
    const char *op = "exponential_";
    if (!check_declared(op, self->dtype, OPS_DTYPE_MASK_EXPONENTIAL_))
        return ops_last_status();
    if (!(lambd > 0.0))
        return ops_fail(OPS_ERR_VALUE, "%s: exponential_ expects lambda > 0.0, but found lambda=%.17g", op, lambd);
    return fill_inplace(op, self, OPS_RAND_EXPONENTIAL, lambd, 0.0, 0, 0, generator);
}

/* ---- integers: randint, randint_like, random_ ----------------------------------------- */

/* The integers a dtype holds exactly: [lo, hi] (floats: +-2^digits). */
static void
int_bounds(ops_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case OPS_BOOL:
        *lo = 0, *hi = 1;
        break;
    case OPS_UINT8:
        *lo = 0, *hi = UINT8_MAX;
        break;
    case OPS_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        break;
    case OPS_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        break;
    case OPS_INT32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        break;
    case OPS_INT64:
        *lo = INT64_MIN, *hi = INT64_MAX;
        break;
    default:
        *hi = INT64_C(1) << ops_rand_float_digits(dt);
        *lo = -*hi;
        break;
    }
}

/* PyTorch's random_from_to checks: from < to, and from and to - 1 held by dt. */
static ops_status
check_from_to(const char *op, int64_t from, int64_t to, ops_dtype dt)
{
    if (!(from < to))
        return ops_fail(OPS_ERR_VALUE, "%s: random_ expects 'from' to be less than 'to', but got from=%" PRId64
                        " >= to=%" PRId64, op, from, to);
    int64_t lo, hi;
    int_bounds(dt, &lo, &hi);
    if (from < lo || from > hi)
        return ops_fail(OPS_ERR_VALUE, "%s: from is out of bounds for %s", op, ops_dtype_name(dt));
    if (to - 1 < lo || to - 1 > hi)
        return ops_fail(OPS_ERR_VALUE, "%s: to - 1 is out of bounds for %s", op, ops_dtype_name(dt));
    return OPS_OK;
}

static uint64_t
int_range(int64_t from, int64_t to)
{
    return (uint64_t)to - (uint64_t)from;
}

ops_tensor *
random_randint_low(int64_t low, int64_t high, ops_int_list size, ops_generator *generator, ops_dtype dtype,
                   ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = OPS_INT64;
    if (check_from_to("randint", low, high, dtype) != OPS_OK)
        return NULL;
    return filled_or_null("randint", new_factory_tensor("randint", size, dtype, device), OPS_RAND_INTEGER, 0.0, 0.0,
                          low, int_range(low, high), generator);
}

ops_tensor *
random_randint(int64_t high, ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return random_randint_low(0, high, size, generator, dtype, device);
}

ops_tensor *
random_randint_like_low_dtype(const ops_tensor *self, int64_t low, int64_t high, ops_generator *generator,
                              ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    if (check_from_to("randint_like", low, high, dtype == OPS_DTYPE_NONE ? self->dtype : dtype) != OPS_OK)
        return NULL;
    return filled_or_null("randint_like", ops_empty_like(self, dtype, device, memory_format), OPS_RAND_INTEGER, 0.0,
                          0.0, low, int_range(low, high), generator);
}

ops_status
random_random_from_(ops_tensor *self, int64_t from, const int64_t *to, ops_generator *generator)
{
    const char *op = "random_";
    int64_t lo, hi;
    int_bounds(self->dtype, &lo, &hi);
    int64_t end;
    if (to != NULL) {
        end = *to;
    } else {
        /* to=None: up to the dtype's largest integer, inclusive */
        if (from < lo || from > hi)
            return ops_fail(OPS_ERR_VALUE, "%s: from is out of bounds for %s", op, ops_dtype_name(self->dtype));
        if (hi == INT64_MAX) {
            /* [from, 2^63): the range may be 2^64 - 1 wide at most, so it fits */
            const uint64_t range = (uint64_t)INT64_MAX - (uint64_t)from + 1u;
            if (range == 0)
                return ops_fail(OPS_ERR_VALUE, "%s: from=%" PRId64 " leaves an empty range", op, from);
            return fill_inplace(op, self, OPS_RAND_INTEGER, 0.0, 0.0, from, range, generator);
        }
        end = hi + 1;
    }
    const ops_status st = check_from_to(op, from, end, self->dtype);
    if (st != OPS_OK)
        return st;
    return fill_inplace(op, self, OPS_RAND_INTEGER, 0.0, 0.0, from, int_range(from, end), generator);
}

ops_tensor *
random_randint_like(const ops_tensor *self, int64_t high, ops_generator *generator, ops_dtype dtype,
                    ops_device device, ops_memory_format memory_format)
{
    return random_randint_like_low_dtype(self, 0, high, generator, dtype, device, memory_format);
}

ops_status
random_random_to_(ops_tensor *self, int64_t to, ops_generator *generator)
{
    return random_random_from_(self, 0, &to, generator);
}

ops_status
random_random_(ops_tensor *self, ops_generator *generator)
{
    /* [0, the largest integer the dtype holds]: 2^digits for floats */
    int64_t lo, hi;
    int_bounds(self->dtype, &lo, &hi);
    (void)lo;
    if (hi == INT64_MAX)
        return random_random_from_(self, 0, NULL, generator);
    const int64_t to = hi + 1;
    return random_random_from_(self, 0, &to, generator);
}

/* randperm's n, checked before its dtype (the entries' `check:`: the glue runs it
 * before it refuses an undeclared dtype, as the kernel did). */
static ops_status
randperm_check_n(int64_t n)
{
    if (n < 0)
        return ops_fail(OPS_ERR_VALUE, "randperm: n must be non-negative, got %" PRId64, n);
    return OPS_OK;
}

ops_status
ops_check_randperm(int64_t n, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    (void)generator, (void)dtype, (void)device;
    return randperm_check_n(n);
}

ops_status
ops_check_randperm_out(int64_t n, ops_tensor *out)
{
    (void)out;
    return randperm_check_n(n);
}

ops_status
ops_check_randperm_generator_out(int64_t n, ops_generator *generator, ops_tensor *out)
{
    (void)generator, (void)out;
    return randperm_check_n(n);
}

/* randperm into a new tensor of dtype, refused unless declared (the set of the entry
 * whose kernel runs, OPS_DTYPE_MASK_<ENTRY>) holds it: the glue has checked n
 * (ops_check_randperm*) and the dtype; this guards a direct call. */
static ops_tensor *
randperm_new(unsigned declared, int64_t n, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    const char *op = "randperm";
    if (dtype == OPS_DTYPE_NONE)
        dtype = OPS_INT64;
    if (randperm_check_n(n) != OPS_OK || !check_declared(op, dtype, declared))
        return NULL;
    int64_t lo, hi;
    int_bounds(dtype, &lo, &hi);
    (void)lo;
    if (n > 0 && n - 1 > hi)
        return ops_fail_null(OPS_ERR_VALUE, "%s: n is too large for result tensor type: '%s'", op,
                             ops_dtype_name(dtype));
    ops_tensor *t = new_factory_tensor(op, (ops_int_list){&n, 1}, dtype, device);
    if (t == NULL)
        return NULL;
    ops_generator *gen = generator_for(generator, t->storage->device);
    if (gen == NULL) {
        ops_tensor_release(t);
        return NULL;
    }
    const ops_device dev = t->storage->device;
    if (OPS_STUB_CALL(random_randperm_fill, dev, op, t, n, gen) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

ops_tensor *
random_randperm(int64_t n, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return randperm_new(OPS_DTYPE_MASK_RANDPERM, n, generator, dtype, device);
}

/* ---- the out= forms of the factories ------------------------------------------------------ */

/* PyTorch's rand.out and friends: the result has out's dtype and device, and out is
 * resized to the size when its shape differs (ops_write_out; out untouched on
 * failure). */

ops_status
random_rand_generator_out(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("rand", rand_new("rand", OPS_DTYPE_MASK_RAND_GENERATOR_OUT, OPS_RAND_UNIFORM, size,
                                          generator, out->dtype, out->storage->device), out);
}

ops_status
random_rand_out(ops_int_list size, ops_tensor *out)
{
    return ops_write_out("rand", rand_new("rand", OPS_DTYPE_MASK_RAND_OUT, OPS_RAND_UNIFORM, size, NULL,
                                          out->dtype, out->storage->device), out);
}

ops_status
random_randn_generator_out(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randn", rand_new("randn", OPS_DTYPE_MASK_RANDN_GENERATOR_OUT, OPS_RAND_NORMAL, size,
                                           generator, out->dtype, out->storage->device), out);
}

ops_status
random_randn_out(ops_int_list size, ops_tensor *out)
{
    return ops_write_out("randn", rand_new("randn", OPS_DTYPE_MASK_RANDN_OUT, OPS_RAND_NORMAL, size, NULL,
                                           out->dtype, out->storage->device), out);
}

ops_status
random_randint_low_generator_out(int64_t low, int64_t high, ops_int_list size, ops_generator *generator,
                                 ops_tensor *out)
{
    return ops_write_out("randint",
                         random_randint_low(low, high, size, generator, out->dtype, out->storage->device), out);
}

ops_status
random_randint_low_out(int64_t low, int64_t high, ops_int_list size, ops_tensor *out)
{
    return random_randint_low_generator_out(low, high, size, NULL, out);
}

ops_status
random_randint_generator_out(int64_t high, ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return random_randint_low_generator_out(0, high, size, generator, out);
}

ops_status
random_randint_out(int64_t high, ops_int_list size, ops_tensor *out)
{
    return random_randint_low_generator_out(0, high, size, NULL, out);
}

ops_status
random_randperm_generator_out(int64_t n, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randperm",
                         randperm_new(OPS_DTYPE_MASK_RANDPERM_GENERATOR_OUT, n, generator, out->dtype,
                                      out->storage->device),
                         out);
}

ops_status
random_randperm_out(int64_t n, ops_tensor *out)
{
    return ops_write_out("randperm",
                         randperm_new(OPS_DTYPE_MASK_RANDPERM_OUT, n, NULL, out->dtype, out->storage->device), out);
}

/* ---- bernoulli -------------------------------------------------------------------------------- */

static ops_status
bernoulli_invalid(const char *op, double v)
{
    return ops_fail(OPS_ERR_VALUE, "%s: Expected p_in >= 0 && p_in <= 1 to be true, but got p=%.17g", op, v);
}

static ops_tensor *
bernoulli_impl(unsigned declared, const ops_tensor *self, ops_generator *generator)
{
    const char *op = "bernoulli";
    ops_tensor *p = NULL, *r = NULL;
    if (!check_declared(op, self->dtype, declared))
        return NULL;
    p = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT);
    if (p == NULL)
        return NULL;
    /* the first invalid probability in row-major order */
    int64_t bad;
    double v;
    const ops_device dev = p->storage->device;
    if (OPS_STUB_CALL(random_bernoulli_find_invalid, dev, op, p, &bad, &v) != OPS_OK)
        goto done;
    if (bad >= 0) {
        bernoulli_invalid(op, v);
        goto done;
    }
    r = ops_empty_like(self, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
    /* element i of r (row-major) takes p's element i: r follows self's memory order,
     * so fill_dist_p writes a contiguous temporary when r is not contiguous */
    if (r != NULL && fill_dist_p(op, r, OPS_RAND_BERNOULLI, 0.0, 0.0, 0, 0, generator, p) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
done:
    ops_tensor_release(p);
    return r;
}

ops_tensor *
random_bernoulli(const ops_tensor *self, ops_generator *generator)
{
    return bernoulli_impl(OPS_DTYPE_MASK_BERNOULLI, self, generator);
}

ops_status
random_bernoulli_out(const ops_tensor *self, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("bernoulli", bernoulli_impl(OPS_DTYPE_MASK_BERNOULLI_OUT, self, generator), out);
}

static ops_status
check_p(const char *op, double p)
{
    if (p >= 0.0 && p <= 1.0)
        return OPS_OK;
    return ops_fail(OPS_ERR_VALUE, "%s: bernoulli_ expects p to be in [0, 1], but got p=%.17g", op, p);
}

ops_tensor *
random_bernoulli_p(const ops_tensor *self, double p, ops_generator *generator)
{
    if (check_p("bernoulli", p) != OPS_OK)
        return NULL;
    return filled_or_null("bernoulli", ops_empty_like(self, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED,
                                                      OPS_MEMORY_FORMAT_NONE),
                          OPS_RAND_BERNOULLI, p, 0.0, 0, 0, generator);
}

ops_status
random_bernoulli_float_(ops_tensor *self, double p, ops_generator *generator)
{
    const ops_status st = check_p("bernoulli_", p);
    if (st != OPS_OK)
        return st;
    return fill_inplace("bernoulli_", self, OPS_RAND_BERNOULLI, p, 0.0, 0, 0, generator);
}

/* The probability rules' messages (kind as the random_multinomial_check loops give it). */
static ops_status
multinomial_row_error(const char *op, int kind)
{
    switch (kind) {
    case 1:
        return ops_fail(OPS_ERR_VALUE, "%s: probability tensor contains either `inf`, `nan` or element < 0", op);
    case 2:
        return ops_fail(OPS_ERR_VALUE, "%s: invalid multinomial distribution (sum of probabilities <= 0)", op);
    default:
        return ops_fail(OPS_ERR_VALUE,
                        "%s: invalid multinomial distribution (with replacement=False, not enough non-negative "
                        "category to sample)",
                        op);
    }
}

/* PyTorch's checks, the probabilities' included (row by row, the first bad row's
 * error); *pc gets a contiguous view or copy of self (a new reference, on self's
 * device) on success. */
static ops_status
multinomial_check(unsigned dtypes, const ops_tensor *self, int64_t num_samples, bool replacement, ops_tensor **pc)
{
    const char *op = "multinomial";
    *pc = NULL;
    /* the entry's declared set (the glue refused the others first; a guard here) */
    if (!(dtypes & OPS_DTYPE_BIT(self->dtype)))
        return ops_fail(OPS_ERR_DTYPE, "%s: multinomial only supports floating-point dtypes for input, got: %s", op,
                        ops_dtype_name(self->dtype));
    if (self->ndim != 1 && self->ndim != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: prob_dist must be 1 or 2 dim", op);
    const int64_t ncat = self->sizes[self->ndim - 1];
    const int64_t rows = self->ndim == 2 ? self->sizes[0] : 1;
    if (ncat > (INT64_C(1) << 24))
        return ops_fail(OPS_ERR_VALUE, "%s: number of categories cannot exceed 2^24", op);
    if (num_samples <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: cannot sample n_sample <= 0 samples", op);
    if (!replacement && num_samples > ncat)
        return ops_fail(OPS_ERR_VALUE, "%s: cannot sample n_sample > prob_dist.size(-1) samples without replacement",
                        op);
    ops_tensor *p = ops_contiguous(self, OPS_CONTIGUOUS_FORMAT);
    if (p == NULL)
        return ops_last_status();
    int64_t bad_row = -1;
    int bad_kind = 0;
    ops_status st = OPS_OK;
    const ops_device dev = p->storage->device;
    st = OPS_STUB_CALL(random_multinomial_check, dev, op, p, rows, ncat, num_samples, replacement, &bad_row,
                       &bad_kind);
    if (st == OPS_OK && bad_row >= 0)
        st = multinomial_row_error(op, bad_kind);
    if (st != OPS_OK) {
        ops_tensor_release(p);
        return st;
    }
    *pc = p;
    return OPS_OK;
}

ops_tensor *
random_multinomial(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator)
{
    const char *op = "multinomial";
    ops_tensor *p = NULL, *r = NULL;
    if (multinomial_check(OPS_DTYPE_MASK_MULTINOMIAL, self, num_samples, replacement, &p) != OPS_OK)
        return NULL;
    const int64_t ncat = self->sizes[self->ndim - 1];
    const int64_t rows = self->ndim == 2 ? self->sizes[0] : 1;
    const int64_t shape[2] = {rows, num_samples};
    const ops_device device = p->storage->device;
    ops_generator *gen = generator_for(generator, device);
    ops_status st = gen != NULL ? OPS_OK : ops_last_status();
    /* the result allocated before the generator is touched (the loop allocates its
     * work space before it reserves) */
    if (st == OPS_OK) {
        r = ops_tensor_new(op, self->ndim, self->ndim == 2 ? shape : shape + 1, NULL, OPS_INT64, device);
        st = r != NULL ? OPS_OK : ops_last_status();
    }
    if (st == OPS_OK)
        st = OPS_STUB_CALL(random_multinomial_draw, device, op, p, rows, ncat, num_samples, replacement, gen, r);
    if (st != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
    ops_tensor_release(p);
    return r;
}

ops_status
random_multinomial_out(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator,
                       ops_tensor *out)
{
    ops_tensor *p = NULL;
    const ops_status st = multinomial_check(OPS_DTYPE_MASK_MULTINOMIAL_OUT, self, num_samples, replacement, &p);
    ops_tensor_release(p);
    if (st != OPS_OK)
        return st;
    if (out->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "multinomial: multinomial expects Long tensor out, got: %s",
                        ops_dtype_name(out->dtype));
    return ops_write_out("multinomial", random_multinomial(self, num_samples, replacement, generator), out);
}

/* p, checked before input's dtype as PyTorch checks them: the entries' `check:`, which
 * the glue runs before it refuses an undeclared dtype. */
static ops_status
dropout_check_p(const char *op, double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return ops_fail(OPS_ERR_VALUE, "%s: dropout probability has to be between 0 and 1, but got %.17g", op, p);
    return OPS_OK;
}

ops_status
ops_check_dropout(const ops_tensor *input, double p, bool train)
{
    (void)input, (void)train;
    return dropout_check_p("dropout", p);
}

ops_status
ops_check_native_dropout(const ops_tensor *input, double p, const bool *train)
{
    (void)input, (void)train;
    return dropout_check_p("native_dropout", p);
}

/* p, then input's dtype against declared (the set of the entry whose kernel runs,
 * OPS_DTYPE_MASK_<ENTRY>): the glue has checked both; this guards a direct call. */
static ops_status
dropout_check(const char *op, unsigned declared, const ops_tensor *input, double p)
{
    if (dropout_check_p(op, p) != OPS_OK)
        return ops_last_status();
    if (!(declared & OPS_DTYPE_BIT(input->dtype)))
        return ops_fail_dtype(op, input->dtype, declared);
    return OPS_OK;
}

/* out (and mask, may be NULL) from input, both fresh contiguous tensors of input's
 * shape: dropped out when training, else a copy (mask all true). */
static ops_status
dropout_run(const char *op, const ops_tensor *input, ops_tensor *out, ops_tensor *mask, double p, bool training)
{
    const int64_t n = ops_tensor_numel(input);
    const bool draw = training && n > 0;
    ops_generator *gen = draw ? ops_device_default_generator(input->storage->device) : NULL;
    if (draw && gen == NULL)
        return ops_last_status();
    const ops_device dev = input->storage->device;
    return OPS_STUB_CALL(random_dropout_fill, dev, op, input, out, mask, p, draw ? gen : NULL);
}

ops_tensor *
random_dropout(const ops_tensor *input, double p, bool train)
{
    const char *op = "dropout";
    if (dropout_check(op, OPS_DTYPE_MASK_DROPOUT, input, p) != OPS_OK)
        return NULL;
    if (!train || p == 0.0 || ops_tensor_numel(input) == 0)
        return ops_clone(input, OPS_MEMORY_FORMAT_NONE); /* PyTorch returns input itself; a copy keeps "new tensor" */
    ops_tensor *r = ops_tensor_new(op, input->ndim, input->sizes, NULL, input->dtype, input->storage->device);
    if (r != NULL && dropout_run(op, input, r, NULL, p, true) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
    return r;
}

ops_status
random_native_dropout(const ops_tensor *input, double p, const bool *train, ops_tensor **result0,
                      ops_tensor **result1)
{
    const char *op = "native_dropout";
    ops_status st = dropout_check(op, OPS_DTYPE_MASK_NATIVE_DROPOUT, input, p);
    if (st != OPS_OK)
        return st;
    const bool training = train == NULL || *train;
    const ops_device device = input->storage->device;
    ops_tensor *o = ops_tensor_new(op, input->ndim, input->sizes, NULL, input->dtype, device);
    ops_tensor *m = o != NULL ? ops_tensor_new(op, input->ndim, input->sizes, NULL, OPS_BOOL, device) : NULL;
    st = m != NULL ? dropout_run(op, input, o, m, p, training) : ops_last_status();
    if (st != OPS_OK) {
        ops_tensor_release(o);
        ops_tensor_release(m);
        return st != OPS_OK ? st : OPS_ERR_OOM;
    }
    *result0 = o;
    *result1 = m;
    return OPS_OK;
}

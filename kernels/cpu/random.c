/* Random sampling ops: rand, randn, randint (and .low), rand_like, randn_like,
 * randint_like (and .low_dtype), randperm, bernoulli (Tensor probabilities, .out, .p,
 * bernoulli_.float), multinomial (and .out), the in-place normal_, uniform_,
 * exponential_, random_ (and .from, .to), dropout and native_dropout; the out= forms
 * of rand, randn, randint and randperm (PyTorch's .out and .generator_out overloads).
 *
 * One implementation for both devices (kernels/random_backend.h): the random_*
 * functions check the arguments, allocate the result on its device and take the
 * generator's range; the element work is the CPU loops here or, for a CUDA tensor,
 * the kernels of kernels/cuda/random.cu.  The *_cpu dispatch kernels are the
 * random_* functions; random.cu's *_cuda ones call them too.
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

#include "kernels/random_backend.h"
#include "ops_dispatch.h"
#include "ops_functions.h"
#include "ops_kernels.h"

#ifdef _OPENMP
#define RAND_PARALLEL_FOR_ _Pragma("omp parallel for if (n >= OPS_GRAIN_SIZE) num_threads(nthreads) schedule(static)")
#else
#define RAND_PARALLEL_FOR_
#endif

/* ---- the CPU element loops ---------------------------------------------------------- */

/* One loop over the Philox blocks per destination type (the conversion is all
 * that differs); which thread computes a block changes nothing. */
#define GEN_TYPED_(T, FROM_F, FROM_I)                                                    \
    do {                                                                                 \
        T *const o_ = (T *)dst;                                                          \
        RAND_PARALLEL_FOR_                                                               \
        for (int64_t b = 0; b < nblocks; b++) {                                          \
            double f[4];                                                                 \
            int64_t iv[4];                                                               \
            ops_rand_block(dp, sp, (uint64_t)b, f, iv);                                    \
            const int m = n - b * per < per ? (int)(n - b * per) : per;                  \
            T *const ob_ = o_ + b * per;                                                 \
            if (integer) {                                                               \
                for (int j = 0; j < m; j++)                                              \
                    ob_[j] = FROM_I(iv[j]);                                              \
            } else {                                                                     \
                for (int j = 0; j < m; j++)                                              \
                    ob_[j] = FROM_F(f[j]);                                               \
            }                                                                            \
        }                                                                                \
    } while (0)

#define GEN_CAST_BOOL_(v) ((v) != 0)
#define GEN_CAST_U8_(v) ((uint8_t)(v))
#define GEN_CAST_I8_(v) ((int8_t)(v))
#define GEN_CAST_I16_(v) ((int16_t)(v))
#define GEN_CAST_I32_(v) ((int32_t)(v))
#define GEN_CAST_I64_(v) ((int64_t)(v))
#define GEN_CAST_HALF_(v) ops_float_to_half((float)(v))
#define GEN_CAST_BF16_(v) ops_float_to_bfloat16((float)(v))
#define GEN_CAST_F32_(v) ((float)(v))
#define GEN_CAST_F64_(v) ((double)(v))

/* n contiguous elements of dtype dt at dst from the reserved stream s, element e
 * from ops_rand_block (include/libops/ops_philox.h, the CUDA kernels' function too).
 * Bernoulli with per-element probabilities p (contiguous, floating dtype pdt) when
 * p != NULL. */
static void
generate(const ops_rand_dist *d, ops_dtype dt, char *dst, int64_t n, const ops_philox_stream *s, const char *p,
         ops_dtype pdt)
{
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    /* a local copy: the stores cannot alias it, so its fields stay in registers */
    const ops_rand_dist dl = *d, *const dp = &dl;
    const ops_philox_stream sl = *s, *const sp = &sl;
    const int per = 4 / dl.k;
    const int64_t nblocks = (int64_t)ops_philox_blocks_for(n, dl.k);
    const bool integer = ops_rand_is_integer_valued(&dl);
    if (p != NULL) {
        const size_t is = ops_dtype_size(dt), ps = ops_dtype_size(pdt);
        RAND_PARALLEL_FOR_
        for (int64_t b = 0; b < nblocks; b++) {
            double f[4];
            int64_t iv[4];
            ops_rand_block(dp, sp, (uint64_t)b, f, iv);
            for (int j = 0; j < per && b * per + j < n; j++) {
                const int64_t e = b * per + j;
                ops_rand_store_int(dt, dst + (size_t)e * is, f[j] < ops_rand_load_real(pdt, p + (size_t)e * ps));
            }
        }
        return;
    }
    if (dl.kind == OPS_RAND_UNIFORM && dt == OPS_FLOAT32) {
        /* the commonest sampler, without ops_rand_block's round trip through double
         * (the same function gives the values) */
        float *const o = (float *)dst;
        RAND_PARALLEL_FOR_
        for (int64_t b = 0; b < nblocks; b++) {
            uint32_t w[4];
            ops_philox_block(sp, (uint64_t)b, w);
            const int m = n - b * 4 < 4 ? (int)(n - b * 4) : 4;
            for (int j = 0; j < m; j++)
                o[b * 4 + j] = ops_rand_uniform32(dp, w[j]);
        }
        return;
    }
    switch (dt) {
    case OPS_BOOL:
        GEN_TYPED_(bool, GEN_CAST_BOOL_, GEN_CAST_BOOL_);
        break;
    case OPS_UINT8:
        GEN_TYPED_(uint8_t, GEN_CAST_U8_, GEN_CAST_U8_);
        break;
    case OPS_INT8:
        GEN_TYPED_(int8_t, GEN_CAST_I8_, GEN_CAST_I8_);
        break;
    case OPS_INT16:
        GEN_TYPED_(int16_t, GEN_CAST_I16_, GEN_CAST_I16_);
        break;
    case OPS_INT32:
        GEN_TYPED_(int32_t, GEN_CAST_I32_, GEN_CAST_I32_);
        break;
    case OPS_INT64:
        GEN_TYPED_(int64_t, GEN_CAST_I64_, GEN_CAST_I64_);
        break;
    case OPS_FLOAT16:
        GEN_TYPED_(ops_half, GEN_CAST_HALF_, GEN_CAST_HALF_);
        break;
    case OPS_BFLOAT16:
        GEN_TYPED_(ops_bfloat16, GEN_CAST_BF16_, GEN_CAST_BF16_);
        break;
    case OPS_FLOAT32:
        GEN_TYPED_(float, GEN_CAST_F32_, GEN_CAST_F32_);
        break;
    default:
        GEN_TYPED_(double, GEN_CAST_F64_, GEN_CAST_F64_);
        break;
    }
}

OPS_REGISTER_STUB(random_fill, CPU, random_fill_cpu);
OPS_REGISTER_STUB(random_bernoulli_find_invalid, CPU, random_bernoulli_find_invalid_cpu);
OPS_REGISTER_STUB(random_randperm_fill, CPU, random_randperm_fill_cpu);
OPS_REGISTER_STUB(random_multinomial_check, CPU, random_multinomial_check_cpu);
OPS_REGISTER_STUB(random_multinomial_draw, CPU, random_multinomial_draw_cpu);
OPS_REGISTER_STUB(random_dropout_fill, CPU, random_dropout_fill_cpu);

/* Directly when t is contiguous, else through a contiguous temporary allocated
 * before the generator is touched. */
ops_status
random_fill_cpu(const char *op, ops_tensor *t, const ops_rand_dist *d, ops_generator *gen, const ops_tensor *p)
{
    const int64_t n = ops_tensor_numel(t);
    ops_philox_stream s;
    ops_tensor *tmp = NULL;
    char *dst = ops_tensor_data_ptr(t);
    if (!ops_tensor_is_contiguous(t)) {
        tmp = ops_tensor_new(op, t->ndim, t->sizes, NULL, t->dtype, OPS_DEVICE_CPU);
        if (tmp == NULL)
            return ops_last_status();
        dst = ops_tensor_data_ptr(tmp);
    }
    ops_generator_reserve(gen, ops_philox_blocks_for(n, d->k), &s);
    generate(d, t->dtype, dst, n, &s, p != NULL ? ops_tensor_data_ptr(p) : NULL, p != NULL ? p->dtype : t->dtype);
    ops_status st = OPS_OK;
    if (tmp != NULL) {
        st = ops_copy_values(op, t, tmp);
        ops_tensor_release(tmp);
    }
    return st;
}

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

static bool
check_floating(const char *op, ops_dtype dt)
{
    if (ops_dtype_is_floating(dt))
        return true;
    ops_fail_dtype(op, dt, OPS_MASK_FLOATING);
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

ops_tensor *
random_rand(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (!check_floating("rand", dtype))
        return NULL;
    return filled_or_null("rand", new_factory_tensor("rand", size, dtype, device), OPS_RAND_UNIFORM, 0.0, 1.0, 0, 0,
                          generator);
}

ops_tensor *
random_randn(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = ops_default_float_dtype();
    if (!check_floating("randn", dtype))
        return NULL;
    return filled_or_null("randn", new_factory_tensor("randn", size, dtype, device), OPS_RAND_NORMAL, 0.0, 1.0, 0, 0,
                          generator);
}

ops_tensor *
random_rand_like(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device,
                 ops_memory_format memory_format)
{
    if (!check_floating("rand_like", dtype == OPS_DTYPE_NONE ? self->dtype : dtype))
        return NULL;
    return filled_or_null("rand_like", ops_empty_like(self, dtype, device, memory_format), OPS_RAND_UNIFORM, 0.0,
                          1.0, 0, 0, generator);
}

ops_tensor *
random_randn_like(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device,
                  ops_memory_format memory_format)
{
    if (!check_floating("randn_like", dtype == OPS_DTYPE_NONE ? self->dtype : dtype))
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
    if (!check_floating(op, self->dtype))
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
    if (!check_floating(op, self->dtype))
        return ops_last_status();
    if (!(std >= 0.0))
        return ops_fail(OPS_ERR_VALUE, "%s: normal expects std >= 0.0, but found std %.17g", op, std);
    return fill_inplace(op, self, OPS_RAND_NORMAL, mean, std, 0, 0, generator);
}

ops_status
random_exponential_(ops_tensor *self, double lambd, ops_generator *generator)
{
    const char *op = "exponential_";
    if (!check_floating(op, self->dtype))
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
random_randint_like_low(const ops_tensor *self, int64_t low, int64_t high, ops_generator *generator, ops_dtype dtype,
                        ops_device device, ops_memory_format memory_format)
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

/* ---- randperm ------------------------------------------------------------------------------ */

/* Fisher-Yates on the CPU: step i swaps i with ops_randperm_target(draw i). */
static void
randperm_shuffle(int64_t *perm, int64_t n, const ops_philox_stream *s)
{
    uint32_t w[4];
    for (int64_t i = 0; i + 1 < n; i++) {
        if (i % 2 == 0)
            ops_philox_block(s, (uint64_t)(i / 2), w);
        const int64_t j = ops_randperm_target(w, i, n);
        const int64_t v = perm[i];
        perm[i] = perm[j];
        perm[j] = v;
    }
}

ops_tensor *
random_randperm(int64_t n, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    const char *op = "randperm";
    if (dtype == OPS_DTYPE_NONE)
        dtype = OPS_INT64;
    if (n < 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: n must be non-negative, got %" PRId64, op, n);
    if (dtype == OPS_BOOL || (int)dtype < 0 || dtype >= OPS_NUM_DTYPES) {
        ops_fail_dtype(op, dtype, OPS_MASK_NUMERIC);
        return NULL;
    }
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

/* The identity shuffled by n - 1 steps of two words each; other dtypes than int64
 * shuffle an int64 scratch, allocated before the generator is touched. */
ops_status
random_randperm_fill_cpu(const char *op, ops_tensor *t, int64_t n, ops_generator *gen)
{
    const ops_dtype dtype = t->dtype;
    ops_philox_stream s;
    int64_t *perm = dtype == OPS_INT64 ? ops_tensor_data_ptr(t) : ops_host_malloc_array(n > 0 ? n : 1, 8);
    if (perm == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    if (n > 1) {
        ops_generator_reserve(gen, ops_philox_blocks_for(n - 1, 2), &s);
        randperm_shuffle(perm, n, &s);
    }
    if (dtype != OPS_INT64) {
        char *dst = ops_tensor_data_ptr(t);
        const size_t is = ops_dtype_size(dtype);
        for (int64_t i = 0; i < n; i++)
            ops_rand_store_int(dtype, dst + (size_t)i * is, perm[i]);
        ops_host_free(perm);
    }
    return OPS_OK;
}

/* ---- the out= forms of the factories ------------------------------------------------------ */

/* PyTorch's rand.out and friends: the result has out's dtype and device, and out is
 * resized to the size when its shape differs (ops_write_out; out untouched on
 * failure). */

ops_status
random_rand_out(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("rand", random_rand(size, generator, out->dtype, out->storage->device), out);
}

ops_status
random_randn_out(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randn", random_randn(size, generator, out->dtype, out->storage->device), out);
}

ops_status
random_randint_low_out(int64_t low, int64_t high, ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randint",
                         random_randint_low(low, high, size, generator, out->dtype, out->storage->device), out);
}

ops_status
random_randperm_out(int64_t n, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("randperm", random_randperm(n, generator, out->dtype, out->storage->device), out);
}

/* ---- bernoulli -------------------------------------------------------------------------------- */

static ops_status
bernoulli_invalid(const char *op, double v)
{
    return ops_fail(OPS_ERR_VALUE, "%s: Expected p_in >= 0 && p_in <= 1 to be true, but got p=%.17g", op, v);
}

ops_tensor *
random_bernoulli(const ops_tensor *self, ops_generator *generator)
{
    const char *op = "bernoulli";
    ops_tensor *p = NULL, *r = NULL;
    if (!check_floating(op, self->dtype))
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

/* ---- multinomial ------------------------------------------------------------------------------ */

/* Draws (PyTorch's algorithms, include/libops/ops_philox.h has the per-draw functions): with
 * replacement, sample j of row r is the first category whose cumulative sum (in
 * double, in category order) exceeds u * total, u the 53-bit uniform of stream
 * element r * num_samples + j; without, category c of row r gets the key
 * p / Exp(1) from stream element r * ncat + c and the num_samples largest keys win,
 * in decreasing order (ties: the lower index).  Two words per draw. */

typedef struct keyed {
    double key;
    int64_t index;
} keyed;

/* Largest key first; ties: the lower index. */
static int
keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
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
multinomial_check(const ops_tensor *self, int64_t num_samples, bool replacement, ops_tensor **pc)
{
    const char *op = "multinomial";
    *pc = NULL;
    if (!ops_dtype_is_floating(self->dtype))
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

/* The CPU draws of multinomial into res (contiguous [rows, num_samples]); work has
 * room for ncat keyed entries. */
static void
multinomial_cpu_draw(const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples, bool replacement,
                     const ops_philox_stream *s, void *work, int64_t *res)
{
    const char *pd = ops_tensor_data_ptr(p);
    const size_t ps = ops_dtype_size(p->dtype);
    double *cdf = work;
    keyed *keys = work;
    const int64_t per_row = replacement ? num_samples : ncat;
    for (int64_t row = 0; row < rows; row++) {
        const int64_t first = row * per_row; /* stream element of this row's first draw */
        if (replacement) {
            double acc = 0.0;
            for (int64_t c = 0; c < ncat; c++) {
                acc += ops_rand_load_real(p->dtype, pd + (size_t)(row * ncat + c) * ps);
                cdf[c] = acc;
            }
            for (int64_t j = 0; j < num_samples; j++)
                res[row * num_samples + j] =
                    ops_multinomial_search(cdf, ncat, ops_multinomial_uniform(s, first + j) * acc);
        } else {
            for (int64_t c = 0; c < ncat; c++) {
                const double v = ops_rand_load_real(p->dtype, pd + (size_t)(row * ncat + c) * ps);
                keys[c].key = ops_multinomial_key(v, ops_multinomial_uniform(s, first + c));
                keys[c].index = c;
            }
            qsort(keys, (size_t)ncat, sizeof *keys, keyed_cmp);
            for (int64_t j = 0; j < num_samples; j++)
                res[row * num_samples + j] = keys[j].index;
        }
    }
}

ops_tensor *
random_multinomial(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator)
{
    const char *op = "multinomial";
    ops_tensor *p = NULL, *r = NULL;
    if (multinomial_check(self, num_samples, replacement, &p) != OPS_OK)
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
    const ops_status st = multinomial_check(self, num_samples, replacement, &p);
    ops_tensor_release(p);
    if (st != OPS_OK)
        return st;
    if (out->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "multinomial: multinomial expects Long tensor out, got: %s",
                        ops_dtype_name(out->dtype));
    return ops_write_out("multinomial", random_multinomial(self, num_samples, replacement, generator), out);
}

ops_status
random_bernoulli_find_invalid_cpu(const char *op, const ops_tensor *p, int64_t *index, double *value)
{
    (void)op;
    const char *pd = ops_tensor_data_ptr(p);
    const size_t ps = ops_dtype_size(p->dtype);
    const int64_t n = ops_tensor_numel(p);
    *index = -1;
    for (int64_t i = 0; i < n; i++) {
        const double v = ops_rand_load_real(p->dtype, pd + (size_t)i * ps);
        if (!(v >= 0.0 && v <= 1.0)) {
            *index = i;
            *value = v;
            break;
        }
    }
    return OPS_OK;
}

ops_status
random_multinomial_check_cpu(const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                             bool replacement, int64_t *bad_row, int *bad_kind)
{
    (void)op;
    const char *pd = ops_tensor_data_ptr(p);
    const size_t ps = ops_dtype_size(p->dtype);
    for (int64_t row = 0; row < rows && *bad_row < 0; row++) {
        double sum = 0.0;
        int64_t nonzero = 0;
        for (int64_t c = 0; c < ncat && *bad_kind == 0; c++) {
            const double v = ops_rand_load_real(p->dtype, pd + (size_t)(row * ncat + c) * ps);
            if (!(v >= 0.0) || isinf(v))
                *bad_kind = 1;
            sum += v;
            nonzero += v > 0.0;
        }
        if (*bad_kind == 0 && !(sum > 0.0))
            *bad_kind = 2;
        else if (*bad_kind == 0 && !replacement && nonzero < num_samples)
            *bad_kind = 3;
        if (*bad_kind != 0)
            *bad_row = row;
    }
    return OPS_OK;
}

/* The cumulative sums or keys of one row, allocated before the generator is touched. */
ops_status
random_multinomial_draw_cpu(const char *op, const ops_tensor *p, int64_t rows, int64_t ncat, int64_t num_samples,
                            bool replacement, ops_generator *gen, ops_tensor *r)
{
    void *work = ops_host_malloc_array(ncat > 0 ? ncat : 1, sizeof(keyed));
    if (work == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    ops_philox_stream s;
    /* two words (one 53-bit uniform) per sample with replacement, per category without */
    const int64_t per_row = replacement ? num_samples : ncat;
    ops_generator_reserve(gen, ops_philox_blocks_for(rows * per_row, 2), &s);
    multinomial_cpu_draw(p, rows, ncat, num_samples, replacement, &s, work, ops_tensor_data_ptr(r));
    ops_host_free(work);
    return OPS_OK;
}

/* ---- dropout ---------------------------------------------------------------------------------- */

/* output[i] = keep ? x * scale : 0 with keep = (word i / 2^32 < 1 - p), from the
 * device's default generator; mask (may be NULL) gets keep.  CPU: input is
 * contiguous; output and mask are fresh contiguous tensors. */
static void
dropout_fill(const ops_tensor *in, ops_tensor *outp, ops_tensor *mask, double p, const ops_philox_stream *s)
{
    const int64_t n = ops_tensor_numel(in);
    const ops_dtype dt = in->dtype;
    const size_t is = ops_dtype_size(dt);
    const char *src = ops_tensor_data_ptr(in);
    char *dst = ops_tensor_data_ptr(outp);
    bool *m = mask != NULL ? ops_tensor_data_ptr(mask) : NULL;
    const double q = 1.0 - p;
    const double scale = p < 1.0 ? 1.0 / q : 0.0;
    const int64_t nblocks = (int64_t)ops_philox_blocks_for(n, 1);
    const int nthreads = ops_get_num_threads();
    (void)nthreads;
    RAND_PARALLEL_FOR_
    for (int64_t b = 0; b < nblocks; b++) {
        uint32_t w[4];
        ops_philox_block(s, (uint64_t)b, w);
        for (int j = 0; j < 4 && b * 4 + j < n; j++) {
            const int64_t e = b * 4 + j;
            const bool keep = ops_uniform32(w[j]) < q;
            const double x = ops_rand_load_real(dt, src + (size_t)e * is);
            ops_rand_store_real(dt, dst + (size_t)e * is, ops_dropout_value(dt, x, keep, scale));
            if (m != NULL)
                m[e] = keep;
        }
    }
}

static ops_status
dropout_check(const char *op, const ops_tensor *input, double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return ops_fail(OPS_ERR_VALUE, "%s: dropout probability has to be between 0 and 1, but got %.17g", op, p);
    if (!ops_dtype_is_floating(input->dtype))
        return ops_fail_dtype(op, input->dtype, OPS_MASK_FLOATING);
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

/* The contiguous input taken before the generator is touched. */
ops_status
random_dropout_fill_cpu(const char *op, const ops_tensor *input, ops_tensor *out, ops_tensor *mask, double p,
                        ops_generator *gen)
{
    (void)op;
    const int64_t n = ops_tensor_numel(input);
    ops_philox_stream s;
    ops_tensor *in = ops_contiguous(input, OPS_CONTIGUOUS_FORMAT);
    if (in == NULL)
        return ops_last_status();
    if (gen != NULL) {
        ops_generator_reserve(gen, ops_philox_blocks_for(n, 1), &s);
        dropout_fill(in, out, mask, p, &s);
    } else {
        /* not training: the input, and a mask of ones */
        const size_t nb = (size_t)n * ops_dtype_size(in->dtype);
        if (nb > 0)
            memcpy(ops_tensor_data_ptr(out), ops_tensor_data_ptr(in), nb);
        if (mask != NULL && n > 0)
            memset(ops_tensor_data_ptr(mask), 1, (size_t)n);
    }
    ops_tensor_release(in);
    return OPS_OK;
}

ops_tensor *
random_dropout(const ops_tensor *input, double p, bool train)
{
    const char *op = "dropout";
    if (dropout_check(op, input, p) != OPS_OK)
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
    ops_status st = dropout_check(op, input, p);
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

/* ---- the CPU dispatch kernels ------------------------------------------------------------ */

ops_tensor *
rand_cpu(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return random_rand(size, generator, dtype, device);
}

ops_tensor *
randn_cpu(ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return random_randn(size, generator, dtype, device);
}

ops_tensor *
rand_like_cpu(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device,
              ops_memory_format memory_format)
{
    return random_rand_like(self, generator, dtype, device, memory_format);
}

ops_tensor *
randn_like_cpu(const ops_tensor *self, ops_generator *generator, ops_dtype dtype, ops_device device,
               ops_memory_format memory_format)
{
    return random_randn_like(self, generator, dtype, device, memory_format);
}

ops_status
uniform_cpu_(ops_tensor *self, double from, double to, ops_generator *generator)
{
    return random_uniform_(self, from, to, generator);
}

ops_status
normal_cpu_(ops_tensor *self, double mean, double std, ops_generator *generator)
{
    return random_normal_(self, mean, std, generator);
}

ops_status
exponential_cpu_(ops_tensor *self, double lambd, ops_generator *generator)
{
    return random_exponential_(self, lambd, generator);
}

ops_tensor *
randint_low_cpu(int64_t low, int64_t high, ops_int_list size, ops_generator *generator, ops_dtype dtype,
                ops_device device)
{
    return random_randint_low(low, high, size, generator, dtype, device);
}

ops_tensor *
randint_cpu(int64_t high, ops_int_list size, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return random_randint_low(0, high, size, generator, dtype, device);
}

ops_tensor *
randint_like_low_dtype_cpu(const ops_tensor *self, int64_t low, int64_t high, ops_generator *generator,
                           ops_dtype dtype, ops_device device, ops_memory_format memory_format)
{
    return random_randint_like_low(self, low, high, generator, dtype, device, memory_format);
}

ops_tensor *
randint_like_cpu(const ops_tensor *self, int64_t high, ops_generator *generator, ops_dtype dtype, ops_device device,
                 ops_memory_format memory_format)
{
    return random_randint_like_low(self, 0, high, generator, dtype, device, memory_format);
}

ops_status
random_from_cpu_(ops_tensor *self, int64_t from, const int64_t *to, ops_generator *generator)
{
    return random_random_from_(self, from, to, generator);
}

ops_status
random_to_cpu_(ops_tensor *self, int64_t to, ops_generator *generator)
{
    return random_random_from_(self, 0, &to, generator);
}

ops_status
random_cpu_(ops_tensor *self, ops_generator *generator)
{
    return random_random_(self, generator);
}

ops_tensor *
randperm_cpu(int64_t n, ops_generator *generator, ops_dtype dtype, ops_device device)
{
    return random_randperm(n, generator, dtype, device);
}

ops_status
rand_generator_out_cpu(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return random_rand_out(size, generator, out);
}

ops_status
rand_out_cpu(ops_int_list size, ops_tensor *out)
{
    return random_rand_out(size, NULL, out);
}

ops_status
randn_generator_out_cpu(ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return random_randn_out(size, generator, out);
}

ops_status
randn_out_cpu(ops_int_list size, ops_tensor *out)
{
    return random_randn_out(size, NULL, out);
}

ops_status
randint_low_generator_out_cpu(int64_t low, int64_t high, ops_int_list size, ops_generator *generator,
                              ops_tensor *out)
{
    return random_randint_low_out(low, high, size, generator, out);
}

ops_status
randint_low_out_cpu(int64_t low, int64_t high, ops_int_list size, ops_tensor *out)
{
    return random_randint_low_out(low, high, size, NULL, out);
}

ops_status
randint_generator_out_cpu(int64_t high, ops_int_list size, ops_generator *generator, ops_tensor *out)
{
    return random_randint_low_out(0, high, size, generator, out);
}

ops_status
randint_out_cpu(int64_t high, ops_int_list size, ops_tensor *out)
{
    return random_randint_low_out(0, high, size, NULL, out);
}

ops_status
randperm_generator_out_cpu(int64_t n, ops_generator *generator, ops_tensor *out)
{
    return random_randperm_out(n, generator, out);
}

ops_status
randperm_out_cpu(int64_t n, ops_tensor *out)
{
    return random_randperm_out(n, NULL, out);
}

ops_tensor *
bernoulli_cpu(const ops_tensor *self, ops_generator *generator)
{
    return random_bernoulli(self, generator);
}

ops_status
bernoulli_out_cpu(const ops_tensor *self, ops_generator *generator, ops_tensor *out)
{
    return ops_write_out("bernoulli", random_bernoulli(self, generator), out);
}

ops_tensor *
bernoulli_p_cpu(const ops_tensor *self, double p, ops_generator *generator)
{
    return random_bernoulli_p(self, p, generator);
}

ops_status
bernoulli_float_cpu_(ops_tensor *self, double p, ops_generator *generator)
{
    return random_bernoulli_float_(self, p, generator);
}

ops_tensor *
multinomial_cpu(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator)
{
    return random_multinomial(self, num_samples, replacement, generator);
}

ops_status
multinomial_out_cpu(const ops_tensor *self, int64_t num_samples, bool replacement, ops_generator *generator,
                    ops_tensor *out)
{
    return random_multinomial_out(self, num_samples, replacement, generator, out);
}

ops_tensor *
dropout_cpu(const ops_tensor *input, double p, bool train)
{
    return random_dropout(input, p, train);
}

ops_status
native_dropout_cpu(const ops_tensor *input, double p, const bool *train, ops_tensor **result0, ops_tensor **result1)
{
    return random_native_dropout(input, p, train, result0, result1);
}

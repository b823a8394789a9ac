/* fuzz_registry: every op of the boxed registry called with arguments drawn from its
 * schema's types, as a hostile-but-fair C or Python caller could pass them: shapes
 * that are empty, 0-dim, non-contiguous, broadcast (zero strides) or huge zero-stride
 * views; negative and overflowing sizes and indices; wrong dtypes and devices;
 * out= tensors that alias an input; NULL tensors and None for required arguments.
 *
 * Per call it checks what the library promises (docs/fuzzing.md):
 *   - no crash and no sanitizer report (the test runs in the ASan+UBSan tree);
 *   - a failed call sets an error message that names the op, returns no values, and
 *     leaves every tensor argument (out= included) as it was: same geometry, same
 *     bytes in the whole of its storage;
 *   - a successful call leaves its read-only tensor arguments as they were (when no
 *     written argument shares their storage), returns the tensor it wrote for an
 *     in-place or out= op, and returns tensors with a valid geometry (sizes >= 0,
 *     numel the product of the sizes and within int64, every element inside the
 *     storage's bytes).
 *
 * Two drivers share the generator.  The default one is seeded: iteration i draws
 * from a generator seeded with hash(OPS_FUZZ_SEED, i), so any single call can be
 * replayed alone (the failure report prints the command).  Built with clang and
 * -DOPS_FUZZ_LIBFUZZER, libFuzzer's input bytes drive the same choices instead.
 *
 * Environment: OPS_FUZZ_SEED (default 1), OPS_FUZZ_ITERS (default 20000; 0 runs
 * until stopped), OPS_FUZZ_START (first iteration, default 0), OPS_FUZZ_OP (only the
 * ops of this name, e.g. "add" or "add.out"), OPS_FUZZ_HUGE (1, default: huge
 * zero-stride views and sizes/indices near the int64 limits; 0: none of them),
 * OPS_FUZZ_SKIP (ops to leave out, comma-separated names or name.overloads),
 * OPS_FUZZ_TIMEOUT (seconds a call on a huge view may run, default 2),
 * OPS_FUZZ_VERBOSE (1: print every call). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops_functions.h"
#include "ops_internal.h"
#include "ops_random.h"
#include "ops_registry.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif

#ifdef FUZZ_ASAN
#include <sanitizer/common_interface_defs.h>

/* Allocations over 256 MiB fail (NULL, which the library reports as OOM) instead of
 * aborting the process: the fuzzer asks for absurd sizes on purpose.  ASAN_OPTIONS
 * given in the environment still take precedence. */
const char *__asan_default_options(void);
/* Exported: the project builds with -fvisibility=hidden, and ASan looks it up. */
__attribute__((visibility("default"), used)) const char *
__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=256";
}
#endif

#if defined(FUZZ_ASAN) || defined(__SANITIZE_UNDEFINED__)
/* UBSan ends the process with _exit, past ASan's death callback: abort() instead, so
 * that the SIGABRT handler prints the call at fault; and print the stack. */
const char *__ubsan_default_options(void);
__attribute__((visibility("default"), used)) const char *
__ubsan_default_options(void)
{
    return "print_stacktrace=1:abort_on_error=1";
}
#endif

/* The CPU allocator maps large blocks itself (runtime/alloc/alloc.c), past malloc and
 * ASan's limit: a drawn size of 2^31 elements would be mapped, filled and kept
 * resident.  This mmap, found before libc's, refuses mappings over the same limit
 * (the library reports OOM), and passes the others to the kernel. */
#define FUZZ_MAX_MAP ((size_t)256 << 20)

__attribute__((visibility("default"))) void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (len > FUZZ_MAX_MAP) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

#define MAX_ARGS 24
#define MAX_LIST 6       /* tensors in a generated Tensor[] */
#define MAX_INTS 20      /* entries of a generated int[] (above OPS_MAX_DIMS on purpose) */
#define MAX_OWNED 96     /* tensors one call creates */
#define HUGE_NUMEL 4096  /* a view with more elements than this runs in a child process */

/* ---- the random source ------------------------------------------------------- */

/* Draws come from the libFuzzer input while it lasts, then from splitmix64. */
typedef struct rng {
    uint64_t state;
    const uint8_t *data;
    size_t len, pos;
} rng;

static uint64_t
splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform-enough in [0, n); n >= 1. */
static uint64_t
below(rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    if (r->pos < r->len) {
        uint64_t v = r->data[r->pos++];
        if (n > 256 && r->pos < r->len)
            v = (v << 8) | r->data[r->pos++];
        return v % n;
    }
    return splitmix(&r->state) % n;
}

/* True with probability pct/100. */
static bool
chance(rng *r, int pct)
{
    return (int)below(r, 100) < pct;
}

/* ---- settings ----------------------------------------------------------------- */

static struct {
    uint64_t seed;
    int64_t iters, start;
    const char *only_op;
    const char *skip_ops;
    bool huge;
    int timeout_s;
    bool verbose;
    const char *argv0;
} cfg = {1, 20000, 0, NULL, NULL, true, 2, false, "fuzz_registry"};

static struct {
    int64_t calls, ok, failed, forked, timeouts, build_skips, violations;
    int64_t *op_calls, *op_ok;
} stats;

static int nops;
static const ops_op_info **ops_sel; /* the ops this run draws from */
static int nsel;

/* ---- one call's arguments ------------------------------------------------------ */

typedef struct call {
    const ops_op_info *op;
    int64_t iter;
    ops_ivalue args[MAX_ARGS];
    ops_ivalue rets[8];
    ops_tensor *owned[MAX_OWNED];
    int nowned;
    const ops_tensor *lists[MAX_ARGS][MAX_LIST];
    int64_t ints[MAX_ARGS][MAX_INTS];
    ops_generator *gen;
    /* Shape and dtype most tensors of the call share, so that many calls pass the
     * checks and reach the kernels. */
    ops_dtype dtype;
    int nd;
    int64_t sizes[4];
    bool huge; /* some tensor argument has more than HUGE_NUMEL elements */
} call;

static ops_tensor *
own(call *c, ops_tensor *t)
{
    if (t != NULL) {
        if (c->nowned == MAX_OWNED) {
            ops_tensor_release(t);
            return NULL;
        }
        c->owned[c->nowned++] = t;
    }
    return t;
}

static void
call_free(call *c)
{
    for (int i = 0; i < c->nowned; i++)
        ops_tensor_release(c->owned[i]);
    c->nowned = 0;
    if (c->gen != NULL)
        ops_generator_release(c->gen);
    c->gen = NULL;
}

/* The description printed with a failure, formatted before every call so that a
 * crash handler can print it as it is. */
static char desc[16384];

static size_t
appendf(char *buf, size_t n, size_t used, const char *fmt, ...) OPS_PRINTF(4, 5);

static size_t
appendf(char *buf, size_t n, size_t used, const char *fmt, ...)
{
    if (used >= n)
        return used;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
    return k < 0 ? used : used + (size_t)k;
}

static size_t
describe_tensor(char *buf, size_t n, size_t used, const ops_tensor *t)
{
    if (t == NULL)
        return appendf(buf, n, used, "NULL");
    used = appendf(buf, n, used, "%s sizes [", ops_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++)
        used = appendf(buf, n, used, "%s%" PRId64, d ? ", " : "", t->sizes[d]);
    used = appendf(buf, n, used, "] strides [");
    for (int d = 0; d < t->ndim; d++)
        used = appendf(buf, n, used, "%s%" PRId64, d ? ", " : "", t->strides[d]);
    return appendf(buf, n, used, "] offset %" PRId64 " storage %zu bytes @%p", t->offset,
                   t->storage != NULL ? t->storage->nbytes : (size_t)0,
                   t->storage != NULL ? (void *)t->storage : NULL);
}

static size_t
describe_value(char *buf, size_t n, size_t used, const ops_ivalue *v)
{
    switch (v->tag) {
    case OPS_IVALUE_NONE: return appendf(buf, n, used, "None");
    case OPS_IVALUE_TENSOR: return describe_tensor(buf, n, used, v->v.tensor);
    case OPS_IVALUE_TENSOR_LIST:
        used = appendf(buf, n, used, "[");
        for (int64_t k = 0; k < v->v.tensor_list.len; k++) {
            used = appendf(buf, n, used, "\n        [%" PRId64 "] ", k);
            used = describe_tensor(buf, n, used, v->v.tensor_list.data[k]);
        }
        return appendf(buf, n, used, "]");
    case OPS_IVALUE_SCALAR:
        if (v->v.scalar.kind == OPS_SCALAR_BOOL)
            return appendf(buf, n, used, "Scalar(%s)", v->v.scalar.v.b ? "True" : "False");
        if (v->v.scalar.kind == OPS_SCALAR_INT)
            return appendf(buf, n, used, "Scalar(%" PRId64 ")", v->v.scalar.v.i);
        return appendf(buf, n, used, "Scalar(%.17g)", v->v.scalar.v.f);
    case OPS_IVALUE_INT: return appendf(buf, n, used, "%" PRId64, v->v.i);
    case OPS_IVALUE_INT_LIST:
        used = appendf(buf, n, used, "[");
        for (int64_t k = 0; k < v->v.int_list.len; k++)
            used = appendf(buf, n, used, "%s%" PRId64, k ? ", " : "", v->v.int_list.data[k]);
        return appendf(buf, n, used, "]");
    case OPS_IVALUE_DOUBLE: return appendf(buf, n, used, "%.17g", v->v.d);
    case OPS_IVALUE_BOOL: return appendf(buf, n, used, "%s", v->v.b ? "True" : "False");
    case OPS_IVALUE_STR: return appendf(buf, n, used, v->v.str ? "'%s'" : "%s", v->v.str ? v->v.str : "NULL");
    case OPS_IVALUE_DTYPE: return appendf(buf, n, used, "dtype %d (%s)", (int)v->v.dtype, ops_dtype_name(v->v.dtype));
    case OPS_IVALUE_DEVICE: return appendf(buf, n, used, "device(type %d, index %d)", (int)v->v.device.type, v->v.device.index);
    case OPS_IVALUE_GENERATOR: return appendf(buf, n, used, "Generator");
    case OPS_IVALUE_MEMORY_FORMAT:
        return appendf(buf, n, used, "memory_format %d (%s)", (int)v->v.memory_format,
                       ops_memory_format_name(v->v.memory_format));
    case OPS_NUM_IVALUE_TAGS: break;
    }
    return appendf(buf, n, used, "tag %d", (int)v->tag);
}

static void
describe_call(const call *c)
{
    size_t used = 0;
    const size_t n = sizeof desc;
    used = appendf(desc, n, used, "  call: %s%s%s  [%s]\n", c->op->name, c->op->overload[0] ? "." : "",
                   c->op->overload, c->op->schema);
    for (int i = 0; i < c->op->num_args; i++) {
        used = appendf(desc, n, used, "    %s = ", c->op->args[i].name);
        used = describe_value(desc, n, used, &c->args[i]);
        used = appendf(desc, n, used, "\n");
    }
    if (c->iter < 0)
        used = appendf(desc, n, used, "  (a case of replay_cases() in tests/fuzz/fuzz_registry.c)\n");
#ifdef OPS_FUZZ_LIBFUZZER
    else
        used = appendf(desc, n, used, "  replay: %s <the crash-* input libFuzzer saved>\n", cfg.argv0);
#else
    else
        used = appendf(desc, n, used,
                   "  replay: OPS_FUZZ_SEED=%" PRIu64 " OPS_FUZZ_START=%" PRId64
                   " OPS_FUZZ_ITERS=1 OPS_FUZZ_HUGE=%d OPS_FUZZ_OP=%s%s%s %s\n",
                   cfg.seed, c->iter, cfg.huge ? 1 : 0, c->op->name, c->op->overload[0] ? "." : "",
                   c->op->overload, cfg.argv0);
#endif
    (void)used;
}

static void
write_desc(void)
{
    /* write(2), not stdio: this also runs from a crash handler. */
    size_t len = strnlen(desc, sizeof desc);
    ssize_t k = write(2, "fuzz_registry: the call at fault:\n", 34);
    k = write(2, desc, len);
    (void)k;
}

/* For the process's death: once, though ASan's death callback and the SIGABRT
 * handler may both run. */
static void
print_desc(void)
{
    static volatile sig_atomic_t printed;
    if (printed)
        return;
    printed = 1;
    write_desc();
}

static void
crash_handler(int sig)
{
    print_desc();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- values drawn from the schema's types ------------------------------------ */

/* Values near the int64 limits and around 2^31, 2^32 and 2^62: the sizes, indices
 * and counts whose arithmetic overflows when it is not checked. */
static const int64_t extreme_ints[] = {
    INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, (int64_t)1 << 62, -((int64_t)1 << 62),
    (int64_t)1 << 61, (int64_t)1 << 40, ((int64_t)1 << 31), -((int64_t)1 << 31) - 1,
    ((int64_t)1 << 32) + 1, ((int64_t)1 << 63) / 3,
};

static int64_t
draw_int(call *c, rng *r)
{
    (void)c;
    if (cfg.huge && chance(r, 4))
        return extreme_ints[below(r, sizeof extreme_ints / sizeof extreme_ints[0])];
    if (chance(r, 3))
        return -(int64_t)below(r, 100) - 5;
    return (int64_t)below(r, 11) - 4; /* -4 .. 6: dims, small sizes, indices */
}

static double
draw_double(rng *r)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-3, -7.25, 1e300, -1e300, 1e-310,
                                     INFINITY, -INFINITY, NAN, 3.0e38, 65504.0, 1e-8};
    if (chance(r, 30))
        return special[below(r, sizeof special / sizeof special[0])];
    return ((double)below(r, 33) - 16.0) / 4.0;
}

static ops_scalar
draw_scalar(call *c, rng *r)
{
    switch (below(r, 5)) {
    case 0: return OPS_SCALAR_BOOL(below(r, 2));
    case 1:
    case 2: return OPS_SCALAR_INT(draw_int(c, r));
    default: return OPS_SCALAR_FLOAT(draw_double(r));
    }
}

static const char *
draw_str(rng *r, const char *default_value)
{
    static const char *const pool[] = {
        "none", "mean", "sum", "prod", "amax", "amin", "tanh", "floor", "trunc", "valid", "same",
        "constant", "reflect", "replicate", "circular", "left", "right", "add", "multiply",
        "ij,jk->ik", "i,i->", "ii->i", "ij->ji", "...ij->...ji", "bij,bjk->bik", "i,j->ij", "->", "ij,->",
        "i->ii", "iij", "a...b...->", "ij,jk", "", " ", "bogus", "\xff\xfe"};
    static char dflt[64];
    if (default_value != NULL && chance(r, 30)) {
        /* "'none'", "\"valid\"" -> none, valid */
        size_t len = strlen(default_value);
        if (len >= 2 && (default_value[0] == '\'' || default_value[0] == '"') && len - 2 < sizeof dflt) {
            memcpy(dflt, default_value + 1, len - 2);
            dflt[len - 2] = '\0';
            return dflt;
        }
    }
    return pool[below(r, sizeof pool / sizeof pool[0])];
}

static ops_dtype
draw_dtype(rng *r)
{
    return (ops_dtype)below(r, OPS_NUM_DTYPES);
}

/* IEEE half from a float that is a normal half or zero/inf/nan (the values drawn). */
static uint16_t
to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (isnan(f))
        return 0x7e00u;
    float a = fabsf(f);
    if (a >= 65520.0f)
        return sign | 0x7c00u;
    if (a < 6.1035156e-05f)
        return sign; /* flush tiny values to zero */
    int e;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    uint16_t exp = (uint16_t)(e - 1 + 15);
    uint16_t man = (uint16_t)lrintf((m * 2.0f - 1.0f) * 1024.0f);
    if (man == 1024) {
        man = 0;
        exp++;
    }
    return sign | (uint16_t)(exp << 10) | man;
}

static void
store_value(void *p, ops_dtype dt, double v, int64_t iv, bool use_int)
{
    switch (dt) {
    case OPS_BOOL: *(uint8_t *)p = (uint8_t)(iv != 0); break;
    case OPS_UINT8: *(uint8_t *)p = (uint8_t)iv; break;
    case OPS_INT8: *(int8_t *)p = (int8_t)iv; break;
    case OPS_INT16: *(int16_t *)p = (int16_t)iv; break;
    case OPS_INT32: *(int32_t *)p = (int32_t)iv; break;
    case OPS_INT64: *(int64_t *)p = iv; break;
    case OPS_FLOAT16: {
        uint16_t h = to_half(use_int ? (float)iv : (float)v);
        memcpy(p, &h, 2);
        break;
    }
    case OPS_BFLOAT16: {
        float f = use_int ? (float)iv : (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        uint16_t h = (uint16_t)(x >> 16);
        memcpy(p, &h, 2);
        break;
    }
    case OPS_FLOAT32: *(float *)p = use_int ? (float)iv : (float)v; break;
    case OPS_FLOAT64: *(double *)p = use_int ? (double)iv : v; break;
    default: break;
    }
}

/* Element values: mostly small (valid indices, sizes and class labels), sometimes
 * NaN, inf or an integer type's limits. */
static void
fill(rng *r, void *data, ops_dtype dt, int64_t n)
{
    const size_t item = ops_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        int64_t iv = (int64_t)below(r, 9) - 2;
        double v = ((double)below(r, 41) - 20.0) / 8.0;
        bool use_int = dt != OPS_FLOAT32 && dt != OPS_FLOAT64 && dt != OPS_FLOAT16 && dt != OPS_BFLOAT16;
        if (chance(r, 2)) {
            static const int64_t lim[] = {INT64_MAX, INT64_MIN, 127, -128, 255, 32767, -32768, 2147483647};
            iv = lim[below(r, 8)];
            v = (double[]){NAN, INFINITY, -INFINITY, 1e30, -0.0, 1e-30}[below(r, 6)];
        }
        store_value((char *)data + (size_t)i * item, dt, v, iv, use_int);
    }
}

/* A tensor of the given sizes and dtype in a random layout: contiguous, permuted,
 * strided with gaps, broadcast (zero strides) or at an offset, always inside a
 * storage made for it.  NULL when as_strided refuses the geometry. */
static ops_tensor *
make_layout(call *c, rng *r, int nd, const int64_t *sizes, ops_dtype dt)
{
    int64_t strides[OPS_MAX_DIMS];
    int perm[OPS_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        perm[d] = d;
    const int kind = (int)below(r, 10);
    if (kind == 1 && nd > 1) { /* permuted */
        for (int d = nd - 1; d > 0; d--) {
            int j = (int)below(r, (uint64_t)d + 1), t = perm[d];
            perm[d] = perm[j];
            perm[j] = t;
        }
    }
    int64_t step = 1, extent = 1;
    for (int k = nd - 1; k >= 0; k--) {
        const int d = perm[k];
        int64_t gap = (kind == 2) ? 1 + (int64_t)below(r, 3) : 1;
        if (kind == 3 && chance(r, 40))
            strides[d] = 0; /* broadcast dimension */
        else {
            strides[d] = step * gap;
            step = strides[d] * (sizes[d] > 0 ? sizes[d] : 1);
        }
    }
    for (int d = 0; d < nd; d++)
        extent += (sizes[d] > 0 ? sizes[d] - 1 : 0) * strides[d];
    for (int d = 0; d < nd; d++)
        if (sizes[d] == 0)
            extent = 0;
    const int64_t offset = (kind == 4) ? (int64_t)below(r, 5) : 0;
    const int64_t base_n = extent + offset + (kind == 4 ? (int64_t)below(r, 3) : 0);
    ops_tensor *base = own(c, ops_empty(OPS_INTS(base_n), dt, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE));
    if (base == NULL)
        return NULL;
    fill(r, ops_tensor_data_ptr(base), dt, base_n);
    ops_int_list sz = {sizes, nd}, st = {strides, nd};
    return own(c, ops_as_strided(base, sz, st, &offset));
}

static bool geometry_ok(const ops_tensor *t, char *why, size_t n);

/* A huge view over a few elements: some dimension of 2^31 .. 2^62 with stride 0,
 * with either a zero-size dimension beside it (numel 0), or a numel that fits in
 * int64, or (rarely) one that does not, which as_strided must refuse. */
static ops_tensor *
make_huge(call *c, rng *r, ops_dtype dt)
{
    static const int64_t big[] = {(int64_t)1 << 31, ((int64_t)1 << 32) + 1, (int64_t)1 << 40,
                                  (int64_t)1 << 61, (int64_t)1 << 62, INT64_MAX};
    int64_t sizes[4], strides[4];
    const int nd = 1 + (int)below(r, 3);
    int64_t inner = 1;
    for (int d = nd - 1; d >= 0; d--) {
        sizes[d] = 1 + (int64_t)below(r, 3);
        strides[d] = inner;
        inner *= sizes[d];
    }
    const int hd = (int)below(r, (uint64_t)nd);
    sizes[hd] = big[below(r, sizeof big / sizeof big[0])];
    strides[hd] = 0;
    const int mode = (int)below(r, 10);
    if (mode < 3) { /* a zero-size dimension elsewhere, or a new one */
        if (nd > 1) {
            int zd = (hd + 1) % nd;
            sizes[zd] = 0;
        } else {
            sizes[0] = 0;
        }
    } else if (mode < 9) { /* keep numel within int64: the other dims are 1 or 2 */
        for (int d = 0; d < nd; d++)
            if (d != hd && sizes[d] > 2)
                sizes[d] = 2;
        int64_t numel = 1;
        bool fits = true;
        for (int d = 0; d < nd; d++)
            if (__builtin_mul_overflow(numel, sizes[d], &numel))
                fits = false;
        if (!fits)
            sizes[hd] = (int64_t)1 << 40;
    } /* else: numel overflows; as_strided must refuse it */
    ops_tensor *base = own(c, ops_empty(OPS_INTS(inner), dt, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE));
    if (base == NULL)
        return NULL;
    fill(r, ops_tensor_data_ptr(base), dt, inner);
    ops_int_list sz = {sizes, nd}, st = {strides, nd};
    const int64_t zero = 0;
    ops_tensor *t = ops_as_strided(base, sz, st, &zero);
    char why[256];
    if (t != NULL && !geometry_ok(t, why, sizeof why)) {
        /* as_strided itself made an invalid tensor: report it as this call's fault. */
        fprintf(stderr, "fuzz_registry: as_strided accepted an invalid geometry (%s) for sizes [", why);
        for (int d = 0; d < nd; d++)
            fprintf(stderr, "%s%" PRId64, d ? ", " : "", sizes[d]);
        fprintf(stderr, "] (iteration %" PRId64 ")\n", c->iter);
        stats.violations++;
        ops_tensor_release(t);
        return NULL;
    }
    return own(c, t);
}

static int64_t
numel_of(int nd, const int64_t *sizes)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= sizes[d];
    return n;
}

/* A tensor for argument `name`: mostly the call's shape and dtype, or a shape that
 * broadcasts against it, sometimes anything (including 0-dim, empty, too many dims
 * for the op, another dtype), sometimes a huge view. */
static ops_tensor *
draw_tensor(call *c, rng *r, const char *name)
{
    ops_dtype dt = c->dtype;
    if (chance(r, 20))
        dt = draw_dtype(r);
    /* Index-like arguments mostly get integers (or bools for masks) with small values. */
    if (strstr(name, "index") || strstr(name, "indices") || !strcmp(name, "target") || strstr(name, "offsets") ||
        !strcmp(name, "repeats") || !strcmp(name, "boundaries") || !strcmp(name, "sorted_sequence"))
        dt = chance(r, 75) ? OPS_INT64 : dt;
    if (!strcmp(name, "mask") || !strcmp(name, "condition"))
        dt = chance(r, 75) ? OPS_BOOL : dt;
    if (cfg.huge && chance(r, 4)) {
        ops_tensor *t = make_huge(c, r, dt);
        if (t != NULL) {
            if (ops_tensor_numel(t) > HUGE_NUMEL)
                c->huge = true;
            return t;
        }
        stats.build_skips++;
    }
    int nd = c->nd;
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, c->sizes, sizeof c->sizes);
    const int pick = (int)below(r, 10);
    if (pick == 6 || pick == 7) { /* broadcastable: drop leading dims, set some to 1 */
        int drop = (int)below(r, (uint64_t)nd + 1);
        nd -= drop;
        memmove(sizes, sizes + drop, (size_t)nd * sizeof sizes[0]);
        for (int d = 0; d < nd; d++)
            if (chance(r, 30))
                sizes[d] = 1;
    } else if (pick >= 8) { /* anything */
        nd = chance(r, 3) ? 5 + (int)below(r, 3) : (int)below(r, 5);
        for (int d = 0; d < nd; d++)
            sizes[d] = chance(r, 10) ? 0 : (int64_t)below(r, nd > 4 ? 3 : 6);
    }
    if (numel_of(nd, sizes) > 4096)
        nd = 1, sizes[0] = 3;
    return make_layout(c, r, nd, sizes, dt);
}

/* "Tensor(a!)" -> "Tensor", "int[2]?" -> "int[2]" with *opt set. */
static void
base_type(const char *type, char *buf, size_t n, bool *opt)
{
    size_t k = 0;
    for (const char *p = type; *p && k + 1 < n; p++) {
        if (*p == '(') {
            while (*p && *p != ')')
                p++;
            if (!*p)
                break;
            continue;
        }
        buf[k++] = *p;
    }
    buf[k] = '\0';
    *opt = k > 0 && buf[k - 1] == '?';
    if (*opt)
        buf[--k] = '\0';
}

/* Fills c->args[i] for argument i of c->op. */
static void
draw_arg(call *c, rng *r, int i)
{
    const ops_arg_info *a = &c->op->args[i];
    char type[64];
    bool opt;
    base_type(a->type, type, sizeof type, &opt);
    ops_ivalue *v = &c->args[i];
    if (opt && chance(r, 35)) {
        *v = ops_ivalue_none();
        return;
    }
    /* Rarely: None or a value of the wrong kind where the schema wants another. */
    if (chance(r, 1)) {
        *v = chance(r, 50) ? ops_ivalue_none() : ops_ivalue_int(1);
        return;
    }
    if (!strcmp(type, "Tensor")) {
        if (chance(r, 1)) {
            *v = ops_ivalue_tensor(NULL);
            return;
        }
        /* out= and in-place self: sometimes an alias of an earlier tensor argument,
         * the same tensor or a view of its storage. */
        const bool written = strstr(a->type, "!") != NULL;
        if (written && i > 0 && chance(r, 20)) {
            int j = (int)below(r, (uint64_t)i);
            if (c->args[j].tag == OPS_IVALUE_TENSOR && c->args[j].v.tensor != NULL) {
                const ops_tensor *src = c->args[j].v.tensor;
                if (chance(r, 50) || src->ndim == 0 || ops_tensor_numel(src) > HUGE_NUMEL) {
                    *v = ops_ivalue_tensor(src);
                } else {
                    ops_tensor *t = own(c, ops_flatten(src, 0, -1));
                    *v = ops_ivalue_tensor(t != NULL ? t : src);
                }
                return;
            }
        }
        ops_tensor *t = draw_tensor(c, r, a->name);
        *v = t != NULL ? ops_ivalue_tensor(t) : ops_ivalue_none();
        return;
    }
    if (!strcmp(type, "Tensor[]") || !strcmp(type, "Tensor?[]")) {
        const int len = chance(r, 8) ? 0 : 1 + (int)below(r, 4);
        for (int k = 0; k < len; k++) {
            if ((type[6] == '?' && chance(r, 30)) || chance(r, 2))
                c->lists[i][k] = NULL;
            else
                c->lists[i][k] = draw_tensor(c, r, a->name);
        }
        *v = ops_ivalue_tensor_list((ops_tensor_list){c->lists[i], len});
        return;
    }
    if (!strcmp(type, "Scalar")) {
        ops_scalar s = draw_scalar(c, r);
        *v = ops_ivalue_scalar(s);
        return;
    }
    if (!strcmp(type, "int") || !strcmp(type, "SymInt")) {
        *v = ops_ivalue_int(draw_int(c, r));
        return;
    }
    if (!strncmp(type, "int[", 4) || !strncmp(type, "SymInt[", 7)) {
        const char *br = strchr(type, '[');
        int fixed = (int)strtol(br + 1, NULL, 10);
        int len = fixed > 0 && chance(r, 80) ? fixed : (int)below(r, 5);
        if (chance(r, 2))
            len = OPS_MAX_DIMS + 1;
        /* Sizes: keep the product modest unless an extreme value is drawn on purpose. */
        int64_t prod = 1;
        for (int k = 0; k < len; k++) {
            int64_t x = draw_int(c, r);
            if (x > 1 && x < ((int64_t)1 << 30)) {
                if (prod * x > 4096)
                    x = 1;
                prod *= x;
            }
            c->ints[i][k] = x;
        }
        *v = ops_ivalue_int_list((ops_int_list){c->ints[i], len});
        return;
    }
    if (!strcmp(type, "float")) {
        *v = ops_ivalue_double(draw_double(r));
        return;
    }
    if (!strcmp(type, "bool")) {
        *v = ops_ivalue_bool(below(r, 2));
        return;
    }
    if (!strcmp(type, "str")) {
        *v = ops_ivalue_str(chance(r, 1) ? NULL : draw_str(r, a->default_value));
        return;
    }
    if (!strcmp(type, "ScalarType")) {
        /* Rarely a value outside the enum, as a careless C caller could pass. */
        *v = ops_ivalue_dtype(chance(r, 2) ? (ops_dtype)(OPS_NUM_DTYPES + (int)below(r, 100))
                                           : draw_dtype(r));
        return;
    }
    if (!strcmp(type, "Device")) {
        static const ops_device devs[] = {{OPS_CPU, 0}, {OPS_CPU, 0}, {OPS_CPU, 0}, {OPS_CUDA, 0},
                                          {OPS_CUDA, 7}, {OPS_CPU, 3}, {(ops_device_type)9, 0}, {OPS_CUDA, -1}};
        *v = ops_ivalue_device(devs[below(r, sizeof devs / sizeof devs[0])]);
        return;
    }
    if (!strcmp(type, "MemoryFormat")) {
        /* every format against every rank (channels_last of a 3-d tensor must fail cleanly),
         * and rarely a value outside the enum */
        *v = ops_ivalue_memory_format(chance(r, 2) ? (ops_memory_format)(OPS_NUM_MEMORY_FORMATS + (int)below(r, 100))
                                                   : (ops_memory_format)below(r, OPS_NUM_MEMORY_FORMATS));
        return;
    }
    if (!strcmp(type, "Generator")) {
        if (c->gen == NULL)
            c->gen = ops_generator_create(below(r, 1000));
        *v = c->gen != NULL ? ops_ivalue_generator(c->gen) : ops_ivalue_none();
        return;
    }
    fprintf(stderr, "fuzz_registry: %s: argument %s has a type the fuzzer does not know: %s\n", c->op->name,
            a->name, a->type);
    exit(1);
}

/* ---- the invariants ------------------------------------------------------------- */

/* The checks of a returned tensor's geometry; false with the reason in why. */
static bool
geometry_ok(const ops_tensor *t, char *why, size_t n)
{
    if (t->ndim < 0 || t->ndim > OPS_MAX_DIMS) {
        snprintf(why, n, "ndim %d", (int)t->ndim);
        return false;
    }
    if ((int)t->dtype < 0 || t->dtype >= OPS_NUM_DTYPES) {
        snprintf(why, n, "dtype %d", (int)t->dtype);
        return false;
    }
    if (t->storage == NULL) {
        snprintf(why, n, "no storage");
        return false;
    }
    int64_t numel = 1;
    bool empty = false;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] < 0) {
            snprintf(why, n, "size %" PRId64 " at dim %d", t->sizes[d], d);
            return false;
        }
        empty |= t->sizes[d] == 0;
    }
    for (int d = 0; d < t->ndim && !empty; d++) {
        if (__builtin_mul_overflow(numel, t->sizes[d], &numel)) {
            snprintf(why, n, "numel overflows int64");
            return false;
        }
    }
    if (empty)
        numel = 0;
    if (ops_tensor_numel(t) != numel) {
        snprintf(why, n, "numel() %" PRId64 " but the sizes make %" PRId64, ops_tensor_numel(t), numel);
        return false;
    }
    if (numel == 0)
        return true;
    int64_t lo = t->offset, hi = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        int64_t span;
        if (__builtin_mul_overflow(t->sizes[d] - 1, t->strides[d], &span) ||
            __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) {
            snprintf(why, n, "extent overflows int64");
            return false;
        }
    }
    const int64_t item = (int64_t)ops_dtype_size(t->dtype);
    int64_t end;
    if (lo < 0 || __builtin_add_overflow(hi, 1, &end) || __builtin_mul_overflow(end, item, &end) ||
        (uint64_t)end > (uint64_t)t->storage->nbytes) {
        snprintf(why, n, "elements [%" PRId64 ", %" PRId64 "] outside the storage's %zu bytes", lo, hi,
                 t->storage->nbytes);
        return false;
    }
    if (t->storage->data == NULL) {
        snprintf(why, n, "NULL data with %" PRId64 " elements", numel);
        return false;
    }
    return true;
}

/* What a tensor argument was before the call. */
typedef struct snap {
    const ops_tensor *t;
    ops_tensor copy;        /* the header's fields (sizes, strides, offset, dtype) */
    ops_storage *storage;   /* the storage it viewed */
    void *data;
    size_t nbytes;
    unsigned char *bytes;   /* the storage's bytes (shared between snaps of one storage) */
    bool owns_bytes;
    bool written;           /* a Tensor(a!) argument */
} snap;

typedef struct snapshot {
    snap s[MAX_ARGS * MAX_LIST + MAX_ARGS];
    int n;
} snapshot;

static void
snap_add(snapshot *ss, const ops_tensor *t, bool written)
{
    if (t == NULL || ss->n == (int)(sizeof ss->s / sizeof ss->s[0]))
        return;
    snap *s = &ss->s[ss->n++];
    memset(s, 0, sizeof *s);
    s->t = t;
    s->copy = *t;
    s->storage = t->storage;
    s->data = t->storage->data;
    s->nbytes = t->storage->nbytes;
    s->written = written;
    for (int k = 0; k < ss->n - 1; k++)
        if (ss->s[k].storage == t->storage) {
            s->bytes = ss->s[k].bytes;
            return;
        }
    s->bytes = malloc(s->nbytes ? s->nbytes : 1);
    if (s->bytes == NULL) {
        fprintf(stderr, "fuzz_registry: out of memory for a snapshot\n");
        exit(1);
    }
    s->owns_bytes = true;
    if (s->nbytes)
        memcpy(s->bytes, s->data, s->nbytes);
}

static void
snapshot_take(snapshot *ss, const call *c)
{
    ss->n = 0;
    for (int i = 0; i < c->op->num_args; i++) {
        /* batch_norm's running statistics are updated in training mode though the
         * schema, as PyTorch's, does not mark them Tensor(a!). */
        const char *name = c->op->args[i].name;
        const bool written = strchr(c->op->args[i].type, '!') != NULL || !strcmp(name, "running_mean") ||
                             !strcmp(name, "running_var");
        const ops_ivalue *v = &c->args[i];
        if (v->tag == OPS_IVALUE_TENSOR)
            snap_add(ss, v->v.tensor, written);
        else if (v->tag == OPS_IVALUE_TENSOR_LIST)
            for (int64_t k = 0; k < v->v.tensor_list.len; k++)
                snap_add(ss, v->v.tensor_list.data[k], written);
    }
}

static void
snapshot_free(snapshot *ss)
{
    for (int k = 0; k < ss->n; k++)
        if (ss->s[k].owns_bytes)
            free(ss->s[k].bytes);
    ss->n = 0;
}

/* Is s's tensor unchanged?  why says what changed. */
static bool
snap_same(const snap *s, char *why, size_t n)
{
    const ops_tensor *t = s->t;
    if (t->ndim != s->copy.ndim || t->dtype != s->copy.dtype || t->offset != s->copy.offset ||
        memcmp(t->sizes, s->copy.sizes, sizeof t->sizes[0] * (size_t)t->ndim) != 0 ||
        memcmp(t->strides, s->copy.strides, sizeof t->strides[0] * (size_t)t->ndim) != 0) {
        snprintf(why, n, "its geometry changed");
        return false;
    }
    if (t->storage != s->storage || t->storage->data != s->data || t->storage->nbytes != s->nbytes) {
        snprintf(why, n, "its storage changed (%zu -> %zu bytes)", s->nbytes, t->storage->nbytes);
        return false;
    }
    if (s->nbytes && memcmp(s->data, s->bytes, s->nbytes) != 0) {
        size_t k = 0;
        while (((const unsigned char *)s->data)[k] == s->bytes[k])
            k++;
        snprintf(why, n, "its storage's byte %zu changed (0x%02x -> 0x%02x)", k, s->bytes[k],
                 ((const unsigned char *)s->data)[k]);
        return false;
    }
    return true;
}

static void
violation(const call *c, const char *fmt, ...) OPS_PRINTF(2, 3);

static void
violation(const call *c, const char *fmt, ...)
{
    (void)c;
    stats.violations++;
    if (stats.violations > 200)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_registry: FAIL at iteration %" PRId64 ": ", c->iter);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    write_desc();
}

/* The op's name as its messages start: "add_" and "add.out" fail as "add". */
static void
op_base_name(const ops_op_info *op, char *buf, size_t n)
{
    snprintf(buf, n, "%s", op->name);
    size_t len = strlen(buf);
    if (len > 1 && buf[len - 1] == '_')
        buf[len - 1] = '\0';
}

static bool
shares_storage_with_written(const snapshot *ss, const snap *s)
{
    for (int k = 0; k < ss->n; k++)
        if (ss->s[k].written && ss->s[k].storage == s->storage)
            return true;
    return false;
}

static void
check_ret_tensor(const call *c, const ops_tensor *t, int i, int64_t k)
{
    char why[256];
    if (t == NULL) {
        violation(c, "return %d[%" PRId64 "] is a NULL tensor after success", i, k);
        return;
    }
    if (!geometry_ok(t, why, sizeof why))
        violation(c, "return %d[%" PRId64 "] has an invalid geometry: %s", i, k, why);
}

/* Checks one finished call; returns true when it succeeded. */
static bool
check_call(call *c, const snapshot *ss, ops_status st)
{
    char why[256];
    const ops_op_info *op = c->op;
    if (st != OPS_OK) {
        char base[128];
        op_base_name(op, base, sizeof base);
        const char *msg = ops_last_error();
        if (msg == NULL || msg[0] == '\0')
            violation(c, "failed (%s) without an error message", ops_status_str(st));
        else if (strstr(msg, base) == NULL)
            violation(c, "failed with a message that does not name the op '%s': %s", base, msg);
        for (int i = 0; i < op->num_returns; i++)
            if (c->rets[i].tag != OPS_IVALUE_NONE)
                violation(c, "failed but return %d is not None", i);
        for (int k = 0; k < ss->n; k++)
            if (!snap_same(&ss->s[k], why, sizeof why))
                violation(c, "failed (%s: %s) but changed an argument: %s", ops_status_str(st), msg, why);
        return false;
    }
    for (int k = 0; k < ss->n; k++)
        if (!ss->s[k].written && !shares_storage_with_written(ss, &ss->s[k]) && !snap_same(&ss->s[k], why, sizeof why))
            violation(c, "succeeded but changed a read-only argument: %s", why);
    for (int i = 0; i < op->num_returns; i++) {
        const ops_ivalue *v = &c->rets[i];
        if (v->tag == OPS_IVALUE_TENSOR)
            check_ret_tensor(c, v->v.tensor, i, 0);
        else if (v->tag == OPS_IVALUE_TENSOR_LIST)
            for (int64_t k = 0; k < v->v.tensor_list.len; k++)
                check_ret_tensor(c, v->v.tensor_list.data[k], i, k);
    }
    /* In-place and out= ops return the tensor they wrote. */
    if (op->kind == OPS_KIND_INPLACE && op->num_returns >= 1 && c->rets[0].tag == OPS_IVALUE_TENSOR &&
        c->args[0].tag == OPS_IVALUE_TENSOR && c->rets[0].v.tensor != c->args[0].v.tensor)
        violation(c, "in-place op returned another tensor than self");
    if (op->kind == OPS_KIND_OUT) {
        int r = 0;
        for (int i = 0; i < op->num_args && r < op->num_returns; i++) {
            if (!op->args[i].is_out)
                continue;
            if (c->rets[r].tag == OPS_IVALUE_TENSOR && c->args[i].tag == OPS_IVALUE_TENSOR &&
                c->rets[r].v.tensor != c->args[i].v.tensor)
                violation(c, "out= op returned another tensor than its out argument %s", op->args[i].name);
            r++;
        }
    }
    return true;
}

static void
release_rets(call *c)
{
    for (int i = 0; i < c->op->num_returns; i++)
        ops_ivalue_release(&c->rets[i]);
}

/* Calls the op and checks it; in a child process when an argument is huge, so that
 * a valid call that has to visit 2^40 elements is stopped after cfg.timeout_s. */
static void
run_call(call *c)
{
    snapshot *ss = calloc(1, sizeof *ss);
    if (ss == NULL)
        exit(1);
    describe_call(c);
    if (cfg.verbose) {
        fputs(desc, stderr);
        fflush(stderr);
    }
    stats.calls++;
    stats.op_calls[c->op - ops_registry_at(0)]++;
    if (c->huge) {
        stats.forked++;
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGALRM, SIG_DFL);
            alarm((unsigned)cfg.timeout_s);
            snapshot_take(ss, c);
            ops_clear_error();
            ops_status st = c->op->call(c->args, c->rets);
            int64_t before = stats.violations;
            check_call(c, ss, st);
            _exit(stats.violations != before ? 1 : st == OPS_OK ? 0 : 3);
        }
        int status = 0;
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (pid < 0) {
            perror("fuzz_registry: fork");
            exit(1);
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
            stats.timeouts++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            stats.ok++;
            stats.op_ok[c->op - ops_registry_at(0)]++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
            stats.failed++;
        } else {
            violation(c, "the call on a huge view died (%s %d)", WIFSIGNALED(status) ? "signal" : "exit status",
                      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
        free(ss);
        return;
    }
    snapshot_take(ss, c);
    ops_clear_error();
    alarm(60); /* a small call that runs a minute is a hang */
    ops_status st = c->op->call(c->args, c->rets);
    alarm(0);
    if (check_call(c, ss, st)) {
        stats.ok++;
        stats.op_ok[c->op - ops_registry_at(0)]++;
    } else {
        stats.failed++;
    }
    release_rets(c);
    snapshot_free(ss);
    free(ss);
}

/* One fuzzed call of op, its choices drawn from r. */
static void
fuzz_one(const ops_op_info *op, rng *r, int64_t iter)
{
    call *c = calloc(1, sizeof *c);
    if (c == NULL)
        exit(1);
    c->op = op;
    c->iter = iter;
    c->dtype = chance(r, 50) ? OPS_FLOAT32 : draw_dtype(r);
    c->nd = chance(r, 10) ? 0 : 1 + (int)below(r, 3);
    for (int d = 0; d < c->nd; d++)
        c->sizes[d] = chance(r, 8) ? 0 : 1 + (int64_t)below(r, 4);
    ops_manual_seed(below(r, 1u << 20));
    if (op->num_args > MAX_ARGS) {
        fprintf(stderr, "fuzz_registry: %s has %d arguments, more than %d\n", op->name, op->num_args, MAX_ARGS);
        exit(1);
    }
    for (int i = 0; i < op->num_args; i++)
        draw_arg(c, r, i);
    run_call(c);
    call_free(c);
    free(c);
}

/* ---- replay cases ---------------------------------------------------------------- */

/* Calls the fuzzer found wrong, fixed since, built by hand and run through the same
 * checks at the start of every run (their iteration number is -1). */

static call *
replay_begin(const char *name, const char *overload)
{
    const ops_op_info *op = ops_registry_find(name, overload);
    if (op == NULL) {
        fprintf(stderr, "fuzz_registry: replay case for %s%s%s: no such op\n", name, overload ? "." : "",
                overload ? overload : "");
        exit(1);
    }
    call *c = calloc(1, sizeof *c);
    if (c == NULL)
        exit(1);
    c->op = op;
    c->iter = -1;
    return c;
}

/* A tensor of the given sizes and dtype holding 0, 1, 2, ... */
static ops_tensor *
replay_tensor_of(call *c, ops_int_list sizes, ops_dtype dt)
{
    ops_tensor *t = own(c, ops_empty(sizes, dt, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE));
    if (t == NULL) {
        fprintf(stderr, "fuzz_registry: replay: %s\n", ops_last_error());
        exit(1);
    }
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        store_value((char *)ops_tensor_data_ptr(t) + (size_t)i * ops_dtype_size(dt), dt, (double)i, i,
                    !ops_dtype_is_floating(dt));
    return t;
}

static ops_tensor *
replay_tensor(call *c, ops_int_list sizes)
{
    return replay_tensor_of(c, sizes, OPS_FLOAT32);
}

static void
replay_run(call *c)
{
    run_call(c);
    call_free(c);
    free(c);
}

static void
replay_cases(void)
{
    call *c;
    /* Composite ops failing inside another op named that op only ("empty_strided: no
     * kernel for device cuda:7" from ones_like, "repeat: ..." from tile): the boxed
     * call now puts the called op's name in front. */
    c = replay_begin("ones_like", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(2)));
    c->args[1] = ops_ivalue_none();
    c->args[2] = ops_ivalue_device(OPS_DEVICE_CUDA(7));
    replay_run(c);
    c = replay_begin("tile", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(2, 4)));
    c->args[1] = ops_ivalue_int_list(OPS_INTS(-2, 2));
    replay_run(c);
    /* nll_loss took a 1-D input with a 1-D target of as many entries, then computed
     * one target position and copied as many as the target has (heap-buffer-overflow
     * in loss_from_buffer; with both empty, a read of target[0] in cls_nll). */
    for (int64_t n = 0; n <= 4; n += 4) {
        for (int form = 0; form < 2; form++) {
            c = replay_begin("nll_loss", form ? "out" : NULL);
            c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(n)));
            c->args[1] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(n), OPS_INT64));
            c->args[2] = ops_ivalue_none();
            c->args[3] = ops_ivalue_int(0); /* reduction none */
            c->args[4] = ops_ivalue_int(-100);
            if (form)
                c->args[5] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(n)));
            replay_run(c);
        }
    }
    /* roll of a 0-dim tensor with dims given read sizes[0] of a tensor without dims
     * (UBSan: pointer overflow in the copy of its narrowed views). */
    c = replay_begin("roll", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS()));
    c->args[1] = ops_ivalue_int_list(OPS_INTS(6, 0));
    c->args[2] = ops_ivalue_int_list(OPS_INTS(0, -1));
    replay_run(c);
    /* index_add / index_copy of a 0-dim self took any source whose size at dim matched
     * the index count, and read one element of an empty [1, 5, 0] source. */
    for (int form = 0; form < 3; form++) {
        c = replay_begin(form == 2 ? "index_copy" : "index_add", form == 1 ? "out" : NULL);
        c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS()));
        c->args[1] = ops_ivalue_int(-1);
        c->args[2] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(), OPS_INT64));
        c->args[3] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(1, 5, 0)));
        if (form < 2)
            c->args[4] = ops_ivalue_scalar(OPS_SCALAR_INT(1));
        if (form == 1)
            c->args[5] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS()));
        replay_run(c);
    }
    /* upsample with scales 1e-310: 1 / scales is inf, and the source index computed
     * from it was converted to int64 unclamped (INT64_MIN: a read far before the input). */
    for (int form = 0; form < 2; form++) {
        c = replay_begin(form ? "upsample_nearest1d" : "upsample_linear1d", NULL);
        c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(3, 1, 1)));
        c->args[1] = ops_ivalue_int_list(OPS_INTS(5));
        if (form) {
            c->args[2] = ops_ivalue_double(1e-310);
        } else {
            c->args[2] = ops_ivalue_bool(false);
            c->args[3] = ops_ivalue_double(1e-310);
        }
        replay_run(c);
    }
    /* histc with min=-1e300 on float32: the edge is -inf in float32, and the bin of
     * every value was (inf / inf) converted to int64 (clang's UBSan: float-cast-overflow). */
    c = replay_begin("histc", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(3)));
    c->args[1] = ops_ivalue_int(6);
    c->args[2] = ops_ivalue_scalar(OPS_SCALAR_FLOAT(-1e300));
    c->args[3] = ops_ivalue_scalar(OPS_SCALAR_BOOL(false));
    replay_run(c);
    /* addcmul_ of uint8 with value=-2.0 converted the float straight to uint8
     * (undefined below 0; clang's UBSan float-cast-overflow, found by libFuzzer). */
    c = replay_begin("addcmul_", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(3), OPS_UINT8));
    c->args[1] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(), OPS_UINT8));
    c->args[2] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(), OPS_UINT8));
    c->args[3] = ops_ivalue_scalar(OPS_SCALAR_FLOAT(-2.0));
    replay_run(c);
}

/* ---- drivers ------------------------------------------------------------------- */

/* Is op (by name or name.overload) in the comma-separated list? */
static bool
in_list(const char *list, const ops_op_info *op)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", op->name, op->overload[0] ? "." : "", op->overload);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if ((len == strlen(op->name) && !strncmp(p, op->name, len)) || (len == strlen(full) && !strncmp(p, full, len)))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static void
setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    const char *e;
    if ((e = getenv("OPS_FUZZ_SEED")) != NULL)
        cfg.seed = strtoull(e, NULL, 0);
    if ((e = getenv("OPS_FUZZ_ITERS")) != NULL)
        cfg.iters = strtoll(e, NULL, 0);
    if ((e = getenv("OPS_FUZZ_START")) != NULL)
        cfg.start = strtoll(e, NULL, 0);
    if ((e = getenv("OPS_FUZZ_OP")) != NULL && e[0])
        cfg.only_op = e;
    if ((e = getenv("OPS_FUZZ_SKIP")) != NULL && e[0])
        cfg.skip_ops = e;
    if ((e = getenv("OPS_FUZZ_HUGE")) != NULL)
        cfg.huge = atoi(e) != 0;
    if ((e = getenv("OPS_FUZZ_TIMEOUT")) != NULL && atoi(e) > 0)
        cfg.timeout_s = atoi(e);
    if ((e = getenv("OPS_FUZZ_VERBOSE")) != NULL)
        cfg.verbose = atoi(e) != 0;
    /* One thread: the machine is shared, and a forked child needs no OpenMP pool. */
    ops_set_num_threads(1);
#ifdef FUZZ_ASAN
    __sanitizer_set_death_callback(print_desc);
#else
    /* Without ASan's allocator limit, cap the address space so that a drawn size
     * of a few GiB fails as OOM instead of being allocated and filled. */
    struct rlimit rl = {(rlim_t)8 << 30, (rlim_t)8 << 30};
    setrlimit(RLIMIT_AS, &rl);
    signal(SIGSEGV, crash_handler);
    signal(SIGBUS, crash_handler);
    signal(SIGFPE, crash_handler);
#endif
    signal(SIGABRT, crash_handler);
    signal(SIGALRM, crash_handler);
    nops = ops_registry_count();
    stats.op_calls = calloc((size_t)nops, sizeof *stats.op_calls);
    stats.op_ok = calloc((size_t)nops, sizeof *stats.op_ok);
    ops_sel = calloc((size_t)nops, sizeof *ops_sel);
    if (stats.op_calls == NULL || stats.op_ok == NULL || ops_sel == NULL)
        exit(1);
    for (int i = 0; i < nops; i++) {
        const ops_op_info *op = ops_registry_at(i);
        if (cfg.only_op != NULL) {
            char full[256];
            snprintf(full, sizeof full, "%s%s%s", op->name, op->overload[0] ? "." : "", op->overload);
            if (strcmp(cfg.only_op, op->name) != 0 && strcmp(cfg.only_op, full) != 0)
                continue;
        }
        if (cfg.skip_ops != NULL && in_list(cfg.skip_ops, op))
            continue;
        ops_sel[nsel++] = op;
    }
    if (nsel == 0) {
        fprintf(stderr, "fuzz_registry: no op named %s\n", cfg.only_op);
        exit(1);
    }
}

static int
report(void)
{
    int covered = 0, succeeded = 0;
    for (int i = 0; i < nops; i++) {
        covered += stats.op_calls[i] > 0;
        succeeded += stats.op_ok[i] > 0;
    }
    printf("fuzz_registry: seed %" PRIu64 ", huge views %s: %" PRId64 " calls (%" PRId64 " succeeded, %" PRId64
           " failed cleanly; %" PRId64 " on huge views in a child, %" PRId64 " of them stopped after %d s), %d of %d ops "
           "called, %d with a successful call; %" PRId64 " violations\n",
           cfg.seed, cfg.huge ? "on" : "off", stats.calls, stats.ok, stats.failed, stats.forked, stats.timeouts,
           cfg.timeout_s, covered, nops, succeeded, stats.violations);
    if (getenv("OPS_FUZZ_LIST_UNREACHED") != NULL)
        for (int i = 0; i < nops; i++)
            if (stats.op_ok[i] == 0)
                printf("  never succeeded: %s%s%s\n", ops_registry_at(i)->name, ops_registry_at(i)->overload[0] ? "." : "",
                       ops_registry_at(i)->overload);
    return stats.violations == 0 ? 0 : 1;
}

#ifdef OPS_FUZZ_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: two bytes pick the op, the rest drive the choices. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    static bool replayed;
    if (!replayed) {
        replayed = true;
        if (cfg.only_op == NULL)
            replay_cases();
    }
    if (size < 2)
        return 0;
    rng r = {0, data + 2, size - 2, 0};
    for (size_t k = 0; k < size; k++)
        r.state = r.state * 131 + data[k];
    const ops_op_info *op = ops_sel[((size_t)data[0] << 8 | data[1]) % (size_t)nsel];
    static int64_t iter;
    fuzz_one(op, &r, iter++);
    if (stats.violations > 0) {
        report();
        abort();
    }
    return 0;
}

#else

int
main(int argc, char **argv)
{
    (void)argc;
    cfg.argv0 = argv[0];
    setup();
    if (cfg.only_op == NULL)
        replay_cases();
    /* Iteration i calls the op at order[i % nsel] of a seeded shuffle, so every op is
     * called once per nsel iterations. */
    int *order = malloc((size_t)nsel * sizeof *order);
    if (order == NULL)
        return 1;
    uint64_t s = cfg.seed;
    for (int i = 0; i < nsel; i++)
        order[i] = i;
    for (int i = nsel - 1; i > 0; i--) {
        int j = (int)(splitmix(&s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int64_t it = cfg.start; cfg.iters == 0 || it < cfg.start + cfg.iters; it++) {
        uint64_t st = cfg.seed ^ ((uint64_t)it * 0xD1342543DE82EF95ull);
        rng r = {splitmix(&st), NULL, 0, 0};
        fuzz_one(ops_sel[order[it % nsel]], &r, it);
        if (cfg.iters == 0 && it % 100000 == 0 && it > cfg.start)
            report();
    }
    free(order);
    int rc = report();
    free(stats.op_calls);
    free(stats.op_ok);
    free(ops_sel);
    return rc;
}

#endif

/* The registry fuzzer's generator: one call's arguments drawn from the op's schema
 * types (shapes, layouts, huge views, extreme values), and the description of the call
 * printed with a failure (fuzz.h). */
#include "fuzz.h"
#include "ops_op_as_strided.h"
#include "ops_op_empty.h"
#include "ops_op_flatten.h"

ops_tensor *
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

void
call_free(call *c)
{
    for (int i = 0; i < c->nowned; i++)
        ops_tensor_release(c->owned[i]);
    c->nowned = 0;
    if (c->gen != NULL)
        ops_generator_release(c->gen);
    c->gen = NULL;
}

char desc[16384];

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
    case OPS_IVALUE_BOOL_LIST:
        used = appendf(buf, n, used, "[");
        for (int64_t k = 0; k < v->v.bool_list.len; k++)
            used = appendf(buf, n, used, "%s%s", k ? ", " : "", v->v.bool_list.data[k] ? "True" : "False");
        return appendf(buf, n, used, "]");
    case OPS_NUM_IVALUE_TAGS: break;
    }
    return appendf(buf, n, used, "tag %d", (int)v->tag);
}

void
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

void
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
void
print_desc(void)
{
    static volatile sig_atomic_t printed;
    if (printed)
        return;
    printed = 1;
    write_desc();
}

void
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

ops_dtype
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

void
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
void
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
    if (!strncmp(type, "bool[", 5)) {
        /* bool[N]: mostly N elements (every mask reaches the kernels), sometimes a
         * wrong length the glue must refuse */
        int fixed = (int)strtol(type + 5, NULL, 10);
        int len = fixed > 0 && chance(r, 85) ? fixed : (int)below(r, 5);
        for (int k = 0; k < len; k++)
            c->bools[i][k] = below(r, 2) != 0;
        *v = ops_ivalue_bool_list((ops_bool_list){c->bools[i], len});
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

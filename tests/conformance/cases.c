/* Reading the case file, and the runner's test-side tensor helpers (cases.h). */
#include "cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_scalar_math.h"

/* ---- reading the case file -------------------------------------------------- */

typedef struct reader {
    const unsigned char *p, *end;
    bool bad;
} reader;

static bool
need(reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return false;
    }
    return true;
}

static void
rd_bytes(reader *r, void *dst, size_t n)
{
    if (!need(r, n)) {
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p, n);
    r->p += n;
}

static uint32_t
rd_u32(reader *r)
{
    uint32_t v;
    rd_bytes(r, &v, 4);
    return v;
}

static int64_t
rd_i64(reader *r)
{
    int64_t v;
    rd_bytes(r, &v, 8);
    return v;
}

static double
rd_f64(reader *r)
{
    double v;
    rd_bytes(r, &v, 8);
    return v;
}

static unsigned
rd_u8(reader *r)
{
    unsigned char v;
    rd_bytes(r, &v, 1);
    return v;
}

static char *
rd_str(reader *r)
{
    uint32_t n = rd_u32(r);
    if (!need(r, n))
        n = 0;
    char *s = malloc((size_t)n + 1);
    if (s == NULL) {
        fprintf(stderr, "conformance: out of memory reading the case file\n");
        exit(2);
    }
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    return s;
}

static ops_tensor *
rd_tensor(reader *r)
{
    ops_dtype dt = (ops_dtype)rd_u8(r);
    int ndim = (int)rd_u8(r);
    if (r->bad || (int)dt >= OPS_NUM_DTYPES || ndim > OPS_MAX_DIMS) {
        r->bad = true;
        return NULL;
    }
    int64_t sizes[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        sizes[i] = rd_i64(r);
        if (sizes[i] < 0)
            r->bad = true;
    }
    if (r->bad)
        return NULL;
    int64_t numel = ops_shape_numel(ndim, sizes);
    size_t nbytes = (size_t)numel * ops_dtype_size(dt);
    if (!need(r, nbytes))
        return NULL;
    ops_tensor *t = ops_tensor_from_data(r->p, (ops_int_list){sizes, ndim}, dt);
    if (!t) {
        fprintf(stderr, "conformance: from_data failed: %s\n", ops_last_error());
        exit(2);
    }
    r->p += nbytes;
    return t;
}

static void
rd_arg(reader *r, ops_ivalue *v)
{
    unsigned tag = rd_u8(r);
    *v = ops_ivalue_none();
    switch (tag) {
    case OPS_IVALUE_NONE:
        break;
    case OPS_IVALUE_TENSOR: {
        ops_tensor *t = rd_tensor(r);
        if (t)
            *v = ops_ivalue_tensor(t);
        break;
    }
    case OPS_IVALUE_TENSOR_LIST: {
        /* u32 count, then per element u8 present (0: None, in a Tensor?[]) and the
         * tensor; the array holds new references */
        const uint32_t n = rd_u32(r);
        if (r->bad || n > (uint32_t)(r->end - r->p))
            break;
        const ops_tensor **data = calloc(n ? n : 1, sizeof *data);
        if (data == NULL) {
            fprintf(stderr, "conformance: out of memory reading the case file\n");
            exit(2);
        }
        *v = ops_ivalue_tensor_list((ops_tensor_list){data, n});
        for (uint32_t i = 0; i < n && !r->bad; i++)
            data[i] = rd_u8(r) ? rd_tensor(r) : NULL;
        break;
    }
    case OPS_IVALUE_SCALAR: {
        unsigned kind = rd_u8(r);
        if (kind == 2)
            *v = ops_ivalue_scalar(OPS_SCALAR_FLOAT(rd_f64(r)));
        else if (kind == 1)
            *v = ops_ivalue_scalar(OPS_SCALAR_INT(rd_i64(r)));
        else
            *v = ops_ivalue_scalar(OPS_SCALAR_BOOL(rd_i64(r) != 0));
        break;
    }
    case OPS_IVALUE_INT:
        *v = ops_ivalue_int(rd_i64(r));
        break;
    case OPS_IVALUE_INT_LIST: {
        uint32_t n = rd_u32(r);
        if (!need(r, (size_t)n * 8))
            break;
        int64_t *data = malloc(sizeof(int64_t) * (n ? n : 1));
        for (uint32_t i = 0; i < n; i++)
            data[i] = rd_i64(r);
        *v = ops_ivalue_int_list((ops_int_list){data, n});
        break;
    }
    case OPS_IVALUE_BOOL_LIST: {
        uint32_t n = rd_u32(r);
        if (!need(r, n))
            break;
        bool *data = malloc(sizeof(bool) * (n ? n : 1));
        for (uint32_t i = 0; i < n; i++)
            data[i] = rd_u8(r) != 0;
        *v = ops_ivalue_bool_list((ops_bool_list){data, n});
        break;
    }
    case OPS_IVALUE_DOUBLE:
        *v = ops_ivalue_double(rd_f64(r));
        break;
    case OPS_IVALUE_BOOL:
        *v = ops_ivalue_bool(rd_u8(r) != 0);
        break;
    case OPS_IVALUE_STR:
        *v = ops_ivalue_str(rd_str(r));
        break;
    case OPS_IVALUE_DTYPE: {
        int32_t d = (int32_t)rd_u32(r);
        *v = ops_ivalue_dtype((ops_dtype)d);
        break;
    }
    case OPS_IVALUE_DEVICE:
        rd_u32(r);
        rd_u32(r);
        *v = ops_ivalue_device(OPS_DEVICE_CPU);
        break;
    case OPS_IVALUE_MEMORY_FORMAT:
        *v = ops_ivalue_memory_format((ops_memory_format)(int32_t)rd_u32(r));
        break;
    default:
        r->bad = true;
    }
}

static void
free_arg(ops_ivalue *v)
{
    if (v->tag == OPS_IVALUE_TENSOR) {
        ops_tensor_release(v->v.tensor);
    } else if (v->tag == OPS_IVALUE_TENSOR_LIST) {
        for (int64_t i = 0; i < v->v.tensor_list.len; i++)
            ops_tensor_release((ops_tensor *)v->v.tensor_list.data[i]);
        free((void *)v->v.tensor_list.data);
    } else if (v->tag == OPS_IVALUE_INT_LIST) {
        free((void *)v->v.int_list.data);
    } else if (v->tag == OPS_IVALUE_BOOL_LIST) {
        free((void *)v->v.bool_list.data);
    } else if (v->tag == OPS_IVALUE_STR) {
        free((void *)v->v.str);
    }
    *v = ops_ivalue_none();
}

bool
cases_load(const char *path, case_file *cf)
{
    bool ok = false;
    unsigned char *blob = NULL;
    memset(cf, 0, sizeof *cf);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "conformance: cannot open %s\n", path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    blob = malloc(n > 0 ? (size_t)n : 1);
    if (n < 0 || fread(blob, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "conformance: short read of %s\n", path);
        fclose(f);
        goto done;
    }
    fclose(f);
    reader r = {blob, blob + n, false};
    if (!need(&r, 8) || memcmp(r.p, "OPSCASE3", 8) != 0) {
        fprintf(stderr, "conformance: %s is not a case file of this runner (OPSCASE3)\n", path);
        goto done;
    }
    r.p += 8;
    uint32_t count = rd_u32(&r);
    rd_bytes(&r, &cf->seed, 8);
    if (r.bad || count > (uint32_t)(r.end - r.p)) {
        fprintf(stderr, "conformance: %s: bad header\n", path);
        goto done;
    }
    cf->cases = calloc(count ? count : 1, sizeof *cf->cases);
    for (uint32_t i = 0; i < count; i++) {
        test_case *c = &cf->cases[i];
        cf->ncases = (int)i + 1;
        c->label = rd_str(&r);
        char *name = rd_str(&r), *overload = rd_str(&r);
        c->op = ops_registry_find(name, overload);
        if (!c->op && !r.bad) {
            fprintf(stderr, "conformance: %s: %s.%s is not in the registry\n", path, name, overload);
            free(name);
            free(overload);
            goto done;
        }
        free(name);
        free(overload);
        c->flags = rd_u32(&r);
        unsigned dt = rd_u8(&r);
        c->dtype = dt < OPS_NUM_DTYPES ? (ops_dtype)dt : OPS_DTYPE_NONE;
        c->rtol = rd_f64(&r);
        c->atol = rd_f64(&r);
        c->nmse = rd_f64(&r);
        c->nargs = (int)rd_u32(&r);
        if (r.bad)
            break;
        if (c->nargs != c->op->num_args || c->nargs > MAX_ARGS) {
            fprintf(stderr, "conformance: %s: %s: %d arguments, the schema has %d (rebuild cases.bin)\n", path,
                    c->label, c->nargs, c->op->num_args);
            c->nargs = 0;
            goto done;
        }
        for (int a = 0; a < c->nargs; a++)
            rd_arg(&r, &c->args[a]);
        if (c->flags & F_ERROR) {
            c->error = rd_str(&r);
            c->forms = rd_u32(&r);
            const uint32_t nouts = rd_u32(&r);
            if (nouts > MAX_RETS) {
                r.bad = true;
                break;
            }
            for (uint32_t k = 0; k < nouts && !r.bad; k++) {
                c->out_templates[k] = rd_tensor(&r);
                c->nouts = (int)k + 1;
            }
        } else {
            const uint32_t nret = rd_u32(&r);
            if (r.bad || nret < 1 || nret > MAX_RETS || (int)nret != c->op->num_returns) {
                fprintf(stderr, "conformance: %s: %s: %u returns, the schema has %d (rebuild cases.bin)\n", path,
                        c->label, nret, c->op->num_returns);
                goto done;
            }
            for (uint32_t k = 0; k < nret && !r.bad; k++) {
                expected_ret *e = &c->ret[k];
                c->nret = (int)k + 1;
                e->flags = rd_u8(&r);
                if (e->flags & RET_LIST) {
                    const uint32_t n = rd_u32(&r);
                    if (r.bad || n > (uint32_t)(r.end - r.p)) {
                        r.bad = true;
                        break;
                    }
                    e->list = calloc(n ? n : 1, sizeof *e->list);
                    if (e->list == NULL) {
                        fprintf(stderr, "conformance: out of memory reading the case file\n");
                        exit(2);
                    }
                    for (uint32_t i = 0; i < n && !r.bad; i++) {
                        e->list[i] = rd_tensor(&r);
                        e->len = (int64_t)i + 1;
                    }
                } else {
                    e->t = rd_tensor(&r);
                }
            }
            c->expected = c->ret[0].t;
        }
        if (r.bad)
            break;
    }
    if (r.bad || r.p != r.end) {
        fprintf(stderr, "conformance: %s: truncated or malformed case file\n", path);
        goto done;
    }
    ok = true;
done:
    free(blob);
    return ok;
}

void
cases_free(case_file *cf)
{
    for (int i = 0; i < cf->ncases; i++) {
        test_case *c = &cf->cases[i];
        for (int a = 0; a < c->nargs; a++)
            free_arg(&c->args[a]);
        free(c->label);
        free(c->error);
        for (int k = 0; k < c->nouts; k++)
            ops_tensor_release(c->out_templates[k]);
        for (int k = 0; k < c->nret; k++) {
            ops_tensor_release(c->ret[k].t);
            for (int64_t i = 0; i < c->ret[k].len; i++)
                ops_tensor_release(c->ret[k].list[i]);
            free(c->ret[k].list);
        }
    }
    free(cf->cases);
    memset(cf, 0, sizeof *cf);
}

/* ---- element access ------------------------------------------------------------ */

const char *
element_ptr(const ops_tensor *t, int64_t linear)
{
    int nd = (int)ops_tensor_ndim(t);
    const int64_t *sz = ops_tensor_sizes(t), *st = ops_tensor_strides(t);
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        int64_t i = linear % sz[d];
        linear /= sz[d];
        off += i * st[d];
    }
    return (const char *)ops_tensor_data_ptr(t) + off * (int64_t)ops_tensor_itemsize(t);
}

double
read_double(ops_dtype dt, const char *p)
{
    switch (dt) {
    case OPS_BOOL: return *(const unsigned char *)p != 0;
    case OPS_UINT8: return *(const uint8_t *)p;
    case OPS_INT8: return *(const int8_t *)p;
    case OPS_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case OPS_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case OPS_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case OPS_FLOAT16: { ops_half h; memcpy(&h, p, 2); return ops_half_to_float(h); }
    case OPS_BFLOAT16: { ops_bfloat16 b; memcpy(&b, p, 2); return ops_bfloat16_to_float(b); }
    case OPS_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
    case OPS_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
    default: return 0.0 / 0.0;
    }
}

void
copy_elements(ops_tensor *dst, const ops_tensor *src)
{
    int64_t n = ops_tensor_numel(src);
    size_t is = ops_tensor_itemsize(src);
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)element_ptr(dst, i), element_ptr(src, i), is);
}

const char *
dims_str(int nd, const int64_t *v, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < nd && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? ", " : "", (long long)v[d]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
    return buf;
}

/* ---- layouts ---------------------------------------------------------------------- */

uint64_t
rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

layout
layout_contiguous(int nd)
{
    layout l;
    memset(&l, 0, sizeof l);
    for (int d = 0; d < nd; d++) {
        l.perm[d] = d;
        l.step[d] = 1;
    }
    return l;
}

layout
layout_strided(int nd)
{
    layout l = layout_contiguous(nd);
    if (nd > 0)
        l.step[nd - 1] = 2;
    l.lead = 1;
    return l;
}

layout
layout_transposed(int nd)
{
    layout l = layout_contiguous(nd);
    for (int d = 0; d < nd; d++)
        l.perm[d] = nd - 1 - d;
    return l;
}

layout
layout_random(int nd, uint64_t *rng)
{
    layout l = layout_contiguous(nd);
    for (int d = nd - 1; d > 0; d--) { /* Fisher-Yates */
        int j = (int)(rng_next(rng) % (uint64_t)(d + 1));
        int tmp = l.perm[d];
        l.perm[d] = l.perm[j];
        l.perm[j] = tmp;
    }
    for (int d = 0; d < nd; d++)
        l.step[d] = 1 + (int64_t)(rng_next(rng) % 3);
    l.lead = (int64_t)(rng_next(rng) % 4);
    return l;
}

layout
layout_expanded(int nd)
{
    layout l = layout_contiguous(nd);
    l.all_zero = true;
    return l;
}

/* ---- what a case owns ---------------------------------------------------------------- */

static struct owned {
    void *p;
    void (*free_fn)(void *);
} *owned;
static size_t nowned, cap_owned;

void
owned_release_tensor(void *t)
{
    ops_tensor_release(t);
}

void
owned_add(void *p, void (*free_fn)(void *))
{
    if (p == NULL)
        return;
    if (nowned == cap_owned) {
        cap_owned = cap_owned ? 2 * cap_owned : 64;
        owned = realloc(owned, cap_owned * sizeof *owned);
        if (owned == NULL) {
            fprintf(stderr, "conformance: out of memory\n");
            exit(2);
        }
    }
    owned[nowned].p = p;
    owned[nowned++].free_fn = free_fn;
}

void
owned_drop(void *p)
{
    if (p == NULL)
        return;
    for (size_t i = nowned; i-- > 0;) {
        if (owned[i].p == p) {
            void (*fn)(void *) = owned[i].free_fn;
            owned[i] = owned[--nowned];
            fn(p);
            return;
        }
    }
    fprintf(stderr, "conformance: internal error: %p is not owned\n", p);
    abort();
}

void
owned_free_all(void)
{
    /* newest first: views go before the tensors they view */
    while (nowned > 0) {
        nowned--;
        owned[nowned].free_fn(owned[nowned].p);
    }
    free(owned);
    owned = NULL;
    cap_owned = 0;
}

/* ---- guarded buffers ---------------------------------------------------------------- */

enum { GUARD_BYTES = 64, SENTINEL = 0xA5 };

static void *
xcalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (p == NULL) {
        fprintf(stderr, "conformance: out of memory\n");
        exit(2);
    }
    return p;
}

static void
free_buffer(void *data, void *ctx)
{
    (void)data;
    free(ctx);
}

void
guarded_new(guarded *g, int nd, const int64_t *sizes, ops_dtype dt, const layout *l, const ops_tensor *src)
{
    const size_t is = ops_dtype_size(dt);
    int64_t strides[OPS_MAX_DIMS];
    int64_t acc = 1, numel = 1, extent = 0;
    for (int k = nd - 1; k >= 0; k--) {
        const int d = l->perm[k];
        strides[d] = l->all_zero ? 0 : acc * l->step[d];
        acc = (strides[d] ? strides[d] : 1) * (sizes[d] > 0 ? sizes[d] : 1);
    }
    for (int d = 0; d < nd; d++) {
        numel *= sizes[d];
        extent += (sizes[d] - 1) * strides[d];
    }
    const size_t elem_bytes = numel > 0 ? (size_t)(extent + 1) * is : 0;
    const size_t lead_bytes = (size_t)l->lead * is;
    memset(g, 0, sizeof *g);
    g->nbytes = GUARD_BYTES + lead_bytes + elem_bytes + GUARD_BYTES;
    g->buf = xcalloc(g->nbytes);
    g->mask = xcalloc(g->nbytes);
    memset(g->buf, SENTINEL, g->nbytes);
    g->data_off = GUARD_BYTES + lead_bytes;
    unsigned char *data = g->buf + g->data_off;
    /* the buffer is freed by the storage's deleter, when its last view goes */
    g->t = ops_tensor_from_blob(data, (ops_int_list){sizes, nd}, (ops_int_list){strides, nd}, dt, OPS_DEVICE_CPU,
                                free_buffer, g->buf);
    if (g->t == NULL) {
        fprintf(stderr, "conformance: from_blob failed: %s\n", ops_last_error());
        exit(2);
    }
    owned_add(g->t, owned_release_tensor);
    owned_add(g->mask, free);
    for (int64_t i = 0; i < numel; i++) {
        const size_t off = (size_t)((const unsigned char *)element_ptr(g->t, i) - g->buf);
        memset(g->mask + off, 1, is);
    }
    if (src != NULL)
        copy_elements(g->t, src);
}

void
guarded_snapshot(guarded *g)
{
    if (g->snap == NULL) {
        g->snap = xcalloc(g->nbytes);
        owned_add(g->snap, free);
    }
    memcpy(g->snap, g->buf, g->nbytes);
}

bool
guarded_untouched(const guarded *g)
{
    return g->snap != NULL && memcmp(g->snap, g->buf, g->nbytes) == 0;
}

bool
guarded_sentinels_ok(const guarded *g, int64_t *where)
{
    for (size_t i = 0; i < g->nbytes; i++) {
        if (!g->mask[i] && g->buf[i] != SENTINEL) {
            *where = (int64_t)i - (int64_t)g->data_off;
            return false;
        }
    }
    return true;
}

void
guarded_free(guarded *g)
{
    owned_drop(g->t); /* frees buf through the deleter */
    owned_drop(g->mask);
    owned_drop(g->snap);
    memset(g, 0, sizeof *g);
}

/* Convolution through oneDNN: float32 forward convolution (conv1d/conv2d: groups,
 * stride, padding, dilation, bias), the library torch's CPU convolution runs on.
 * conv_run_cpu (kernels/cpu/conv.c) calls ops_conv_dnnl_f32 first and keeps its own
 * im2col + GEMM path for every other dtype, for the transposed ops, and where this
 * returns false (no oneDNN in the build, no implementation for the shape, no memory).
 *
 * Why oneDNN and not a better im2col (docs/nn.md "Speed", bench/bench_conv.c): at
 * ResNet-18's convolutions OpenBLAS's GEMMs alone, per image or one over the batch,
 * took longer than oneDNN's whole convolution (its direct kernels for the machine's
 * ISA in channel-blocked layouts, reorders from and to NCHW included), so no faster
 * im2col could close the gap; 1x1 kernels are the exception (below).
 *
 * A plan per geometry (and thread count: oneDNN fixes its work split when a primitive
 * is made) holds the convolution and the reorders between the tensors' own strided
 * layouts and the layouts the convolution chose; plans are made once and kept for the
 * life of the process in a small table (every distinct layer of a network is one
 * entry; past PLAN_CAP shapes a plan is made and dropped per call).  Work buffers
 * (blocked copies, the scratchpad: user mode, so that no primitive keeps memory and
 * concurrent calls of one plan never share a buffer) come from ops_host_malloc per
 * call.
 *
 * Threads: oneDNN (Debian's build) parallelises with OpenMP, libgomp, the runtime
 * libops' own loops use; its regions take omp_get_max_threads() of the calling
 * thread, which is set to ops_get_num_threads() before a run (ops_set_num_threads
 * sets it for the thread that calls it; other threads get it here). */
#include "kernels/cpu/conv_dnnl.h"

#ifdef OPS_HAVE_DNNL

#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "ops_cpu_level.h"
#include "ops_internal.h"

/* The geometry a plan is for: every field of ops_conv_geom that shapes the work, the
 * weight and bias strides, the thread count. */
enum { KEY_LEN = 31, PLAN_CAP = 128 };

typedef struct conv_plan {
    int64_t key[KEY_LEN];
    dnnl_primitive_t conv, rsrc, rwei, rdst; /* a reorder is NULL where none is needed */
    dnnl_memory_desc_t usrc, uwei, ubias, udst; /* the tensors' own layouts */
    dnnl_memory_desc_t csrc, cwei, cdst;        /* the convolution's */
    dnnl_memory_desc_t pad[4];                  /* scratchpads: conv, rsrc, rwei, rdst */
    size_t nscratch;                            /* bytes: the largest of pad[] */
} conv_plan;

static dnnl_engine_t g_engine;
static bool g_engine_ok;
static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_plans_lock = PTHREAD_MUTEX_INITIALIZER;
static conv_plan *g_plans[PLAN_CAP];
static int g_nplans;

/* Off: OPS_CONV_DNNL=0 in the environment (read at the first convolution) or
 * ops_conv_dnnl_enable(false): the tests run the im2col path's float32 that way, and
 * bench/bench_conv.c compares the two in one process. */
static int g_enabled = -1; /* -1: not read yet */

static void
engine_init(void)
{
#if defined(__x86_64__)
    /* oneDNN dispatches on the CPU by itself; the level libops runs at
     * (OPS_CPU_CAPABILITY, docs/cpu-dispatch.md) caps it too, so that a run forced to
     * `default` or `avx2` tests those kernels (SSE4.1 is oneDNN's lowest).  Refused
     * (ignored) once the process has used oneDNN, e.g. through torch, which links the
     * same library. */
    static const dnnl_cpu_isa_t isa_of_level[OPS_CPU_NUM_LEVELS] = {dnnl_cpu_isa_sse41, dnnl_cpu_isa_avx2,
                                                                    dnnl_cpu_isa_all};
    dnnl_set_max_cpu_isa(isa_of_level[ops_cpu_level_get()]);
#endif
    const char *e = getenv("OPS_CONV_DNNL");
    int expected = -1;
    __atomic_compare_exchange_n(&g_enabled, &expected, !(e != NULL && strcmp(e, "0") == 0), false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    g_engine_ok = dnnl_engine_create(&g_engine, dnnl_cpu, 0) == dnnl_success;
}

bool
ops_conv_dnnl_enable(bool on)
{
    pthread_once(&g_engine_once, engine_init);
    __atomic_store_n(&g_enabled, on, __ATOMIC_RELAXED);
    return g_engine_ok;
}

static void
plan_free(conv_plan *p)
{
    if (p == NULL)
        return;
    dnnl_primitive_t prims[4] = {p->conv, p->rsrc, p->rwei, p->rdst};
    for (int i = 0; i < 4; i++)
        if (prims[i] != NULL)
            dnnl_primitive_destroy(prims[i]);
    free(p);
}

/* A primitive from pd (destroyed here either way) and its scratchpad's layout. */
static bool
make_prim(dnnl_primitive_desc_t pd, dnnl_primitive_t *prim, dnnl_memory_desc_t *pad)
{
    *pad = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    const bool ok = dnnl_primitive_create(prim, pd) == dnnl_success;
    if (!ok)
        *prim = NULL;
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* A reorder from -> to, or NULL (and true) when the layouts are the same. */
static bool
make_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to, dnnl_primitive_attr_t attr,
             dnnl_primitive_t *prim, dnnl_memory_desc_t *pad)
{
    dnnl_primitive_desc_t pd;
    *prim = NULL;
    memset(pad, 0, sizeof *pad);
    if (dnnl_memory_desc_equal(from, to))
        return true;
    if (dnnl_reorder_primitive_desc_create(&pd, from, g_engine, to, g_engine, attr) != dnnl_success)
        return false;
    return make_prim(pd, prim, pad);
}

/* dims/strides of a strided tensor as a oneDNN layout; false for a zero or negative
 * stride of a dim longer than 1 (an expanded input), which oneDNN's reorders do not
 * take. */
static bool
strided_md(dnnl_memory_desc_t *md, int nd, const dnnl_dim_t *dims, const int64_t *st)
{
    dnnl_dims_t s;
    for (int i = nd - 1; i >= 0; i--) {
        if (dims[i] == 1) /* any stride: the dense one */
            s[i] = i == nd - 1 ? 1 : s[i + 1] * dims[i + 1];
        else if (st[i] <= 0)
            return false;
        else
            s[i] = st[i];
    }
    return dnnl_memory_desc_init_by_strides(md, nd, dims, dnnl_f32, s) == dnnl_success;
}

static conv_plan *
plan_make(const ops_conv_geom *g, const int64_t *wst, bool has_bias, const int64_t *key)
{
    conv_plan *p = calloc(1, sizeof *p);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (p == NULL || dnnl_primitive_attr_create(&attr) != dnnl_success)
        goto fail;
    if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success)
        goto fail;
    memcpy(p->key, key, sizeof p->key);
    const int64_t G = g->groups, cog = g->cout / G, cig = g->cin / G;
    /* full dnnl_dims_t arrays: the API's parameter type (GCC checks the size read) */
    const dnnl_dims_t sdims = {g->n, g->cin, g->ih, g->iw}, ddims = {g->n, g->cout, g->oh, g->ow};
    const dnnl_dims_t bdims = {g->cout};
    if (!strided_md(&p->usrc, 4, sdims, g->xs))
        goto fail;
    if (G == 1) {
        const dnnl_dims_t wdims = {g->cout, g->cin, g->kh, g->kw};
        if (!strided_md(&p->uwei, 4, wdims, wst))
            goto fail;
    } else {
        const dnnl_dims_t wdims = {G, cog, cig, g->kh, g->kw};
        const int64_t w5[5] = {cog * wst[0], wst[0], wst[1], wst[2], wst[3]};
        if (!strided_md(&p->uwei, 5, wdims, w5))
            goto fail;
    }
    /* the convolution reads its bias densely whatever the layout says: a strided bias
     * is copied (ops_conv_dnnl_f32) */
    if (has_bias && dnnl_memory_desc_init_by_tag(&p->ubias, 1, bdims, dnnl_f32, dnnl_x) != dnnl_success)
        goto fail;
    if (dnnl_memory_desc_init_by_tag(&p->udst, 4, ddims, dnnl_f32, dnnl_nchw) != dnnl_success)
        goto fail;

    /* Layouts: channel blocks of the ISA's vector width (nChw16c at AVX-512, nChw8c at
     * AVX2), as torch asks for (its ideep layer), with a plain NCHW input where the
     * input channels are not a multiple of the block (the 3-channel stem: no reorder
     * at all); the weights' layout is the convolution's choice.  Left to the
     * convolution ("any"), oneDNN 2.6 picks NHWC "brgconv" kernels on AVX-512, whose
     * NCHW <-> NHWC reorders cost more than the kernels save (bench/bench_conv.c). */
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    const int64_t blk = (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core ? 16
                        : (isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2 ? 8
                                                                         : 0;
    const dnnl_format_tag_t btag = blk == 16 ? dnnl_aBcd16b : dnnl_aBcd8b;
    const dnnl_format_tag_t stag = blk == 0 || G > 1 ? dnnl_format_tag_any : g->cin % blk == 0 ? btag : dnnl_nchw;
    const dnnl_format_tag_t dtag = blk == 0 || G > 1 || g->cout % blk != 0 ? dnnl_format_tag_any : btag;
    dnnl_memory_desc_t asrc, awei, adst;
    if (dnnl_memory_desc_init_by_tag(&asrc, 4, sdims, dnnl_f32, stag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&awei, p->uwei.ndims, p->uwei.dims, dnnl_f32, dnnl_format_tag_any) !=
            dnnl_success ||
        dnnl_memory_desc_init_by_tag(&adst, 4, ddims, dnnl_f32, dtag) != dnnl_success)
        goto fail;
    /* oneDNN's dilation counts the gaps (0: dense); the right/bottom padding is what
     * the output size uses (negative where the last input rows are never reached:
     * PyTorch's floor), not the requested one */
    const dnnl_dims_t strides = {g->sh, g->sw}, dil = {g->dh - 1, g->dw - 1}, padl = {g->pt, g->pl};
    const dnnl_dims_t padr = {(g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1 - g->ih - g->pt,
                              (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1 - g->iw - g->pl};
    dnnl_convolution_desc_t cd;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &asrc,
                                                   &awei, has_bias ? &p->ubias : NULL, &adst, strides, dil, padl,
                                                   padr) != dnnl_success)
        goto fail;
    if (dnnl_primitive_desc_create(&pd, &cd, attr, g_engine, NULL) != dnnl_success) {
        /* no kernel for those layouts: the convolution's own choice */
        if (stag == dnnl_format_tag_any && dtag == dnnl_format_tag_any)
            goto fail;
        if (dnnl_memory_desc_init_by_tag(&asrc, 4, sdims, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
            dnnl_memory_desc_init_by_tag(&adst, 4, ddims, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
            dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                       &asrc, &awei, has_bias ? &p->ubias : NULL, &adst, strides,
                                                       dil, padl, padr) != dnnl_success ||
            dnnl_primitive_desc_create(&pd, &cd, attr, g_engine, NULL) != dnnl_success)
            goto fail;
    }
    p->csrc = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    p->cwei = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    p->cdst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const bool made = make_prim(pd, &p->conv, &p->pad[0]);
    pd = NULL;
    if (!made || !make_reorder(&p->usrc, &p->csrc, attr, &p->rsrc, &p->pad[1]) ||
        !make_reorder(&p->uwei, &p->cwei, attr, &p->rwei, &p->pad[2]) ||
        !make_reorder(&p->cdst, &p->udst, attr, &p->rdst, &p->pad[3]))
        goto fail;
    for (int i = 0; i < 4; i++) {
        const size_t n = dnnl_memory_desc_get_size(&p->pad[i]);
        p->nscratch = n > p->nscratch ? n : p->nscratch;
    }
    dnnl_primitive_attr_destroy(attr);
    return p;
fail:
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    plan_free(p);
    return NULL;
}

/* The plan for key: from the table, else made (and kept while the table has room;
 * *owned tells the caller to free one that was not kept). */
static conv_plan *
plan_get(const ops_conv_geom *g, const int64_t *wst, bool has_bias, const int64_t *key, bool *owned)
{
    *owned = false;
    pthread_mutex_lock(&g_plans_lock);
    for (int i = 0; i < g_nplans; i++)
        if (memcmp(g_plans[i]->key, key, sizeof g_plans[i]->key) == 0) {
            conv_plan *p = g_plans[i];
            pthread_mutex_unlock(&g_plans_lock);
            return p;
        }
    pthread_mutex_unlock(&g_plans_lock);
    /* made outside the lock (oneDNN JIT-compiles its kernels here); two threads
     * making the same plan at once both make it and the second is not kept */
    conv_plan *p = plan_make(g, wst, has_bias, key);
    if (p == NULL)
        return NULL;
    pthread_mutex_lock(&g_plans_lock);
    if (g_nplans < PLAN_CAP)
        g_plans[g_nplans++] = p;
    else
        *owned = true;
    pthread_mutex_unlock(&g_plans_lock);
    return p;
}

/* Runs prim with the listed (arg, layout, buffer) triples and its scratchpad. */
static bool
run(dnnl_stream_t s, dnnl_primitive_t prim, int nargs, const int *argk, const dnnl_memory_desc_t *const *mds,
    void *const *bufs, const dnnl_memory_desc_t *pad, void *scratch)
{
    dnnl_exec_arg_t args[6] = {{0, NULL}}; /* GCC -O1 cannot see that n counts the filled ones */
    dnnl_memory_t mems[6];
    int n = 0;
    bool ok = true;
    for (int i = 0; i <= nargs && ok; i++) {
        const bool is_pad = i == nargs;
        if (is_pad && dnnl_memory_desc_get_size(pad) == 0)
            break;
        ok = dnnl_memory_create(&mems[n], is_pad ? pad : mds[i], g_engine, is_pad ? scratch : bufs[i]) ==
             dnnl_success;
        if (ok) {
            args[n].arg = is_pad ? DNNL_ARG_SCRATCHPAD : argk[i];
            args[n].memory = mems[n];
            n++;
        }
    }
    ok = ok && dnnl_primitive_execute(prim, s, n, args) == dnnl_success && dnnl_stream_wait(s) == dnnl_success;
    for (int i = 0; i < n; i++)
        dnnl_memory_destroy(mems[i]);
    return ok;
}

/* a size rounded up to a cache line, so that the buffers carved from one block stay
 * aligned */
static size_t
line_up(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

bool
ops_conv_dnnl_f32(const ops_conv_geom *g, const float *x, const float *w, const int64_t *wst, const float *bias,
                  int64_t bst, float *out)
{
    /* unpadded 1x1 kernels stay with conv.c: a GEMM per image (after a strided gather
     * where the stride is 2, as in ResNet's downsampling) reads only the pixels it
     * uses, where oneDNN reorders the whole input first (bench_conv: several times
     * slower at the first of ResNet-18's three, no faster at the others) */
    if (g->dt != OPS_FLOAT32 || g->transposed || (g->kh == 1 && g->kw == 1 && g->pt == 0 && g->pl == 0))
        return false;
    pthread_once(&g_engine_once, engine_init);
    if (!g_engine_ok || !__atomic_load_n(&g_enabled, __ATOMIC_RELAXED))
        return false;
    const int nthr = ops_get_num_threads();
    if (omp_get_max_threads() != nthr)
        omp_set_num_threads(nthr);
    const int64_t key[KEY_LEN] = {g->n,     g->cin,   g->ih,    g->iw,    g->cout,  g->kh,     g->kw,
                                  g->groups, g->sh,    g->sw,    g->dh,    g->dw,    g->pt,     g->pb,
                                  g->pl,    g->pr,    g->oh,    g->ow,    g->xs[0], g->xs[1],  g->xs[2],
                                  g->xs[3], wst[0],   wst[1],   wst[2],   wst[3],   bias != NULL, 0,
                                  nthr,     g->nsp,   0};
    bool owned;
    conv_plan *p = plan_get(g, wst, bias != NULL, key, &owned);
    if (p == NULL)
        return false;
    /* one block: the blocked input, weights, output (where reordered), the scratchpad */
    const size_t nsrc = p->rsrc ? line_up(dnnl_memory_desc_get_size(&p->csrc)) : 0;
    const size_t nwei = p->rwei ? line_up(dnnl_memory_desc_get_size(&p->cwei)) : 0;
    const size_t ndst = p->rdst ? line_up(dnnl_memory_desc_get_size(&p->cdst)) : 0;
    const bool bcopy = bias != NULL && bst != 1 && g->cout > 1;
    const size_t nbias = bcopy ? line_up((size_t)g->cout * sizeof(float)) : 0;
    const size_t total = nsrc + nwei + ndst + nbias + line_up(p->nscratch) + 64;
    char *block = ops_host_malloc(total);
    dnnl_stream_t s = NULL;
    bool ok = block != NULL && dnnl_stream_create(&s, g_engine, dnnl_stream_default_flags) == dnnl_success;
    if (ok) {
        char *base = (char *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
        void *src = p->rsrc ? base : (void *)x;
        void *wei = p->rwei ? base + nsrc : (void *)w;
        void *dst = p->rdst ? base + nsrc + nwei : (void *)out;
        float *bdense = (float *)(base + nsrc + nwei + ndst);
        void *scratch = base + nsrc + nwei + ndst + nbias;
        if (bcopy) {
            for (int64_t i = 0; i < g->cout; i++)
                bdense[i] = bias[i * bst];
            bias = bdense;
        }
        static const int io[2] = {DNNL_ARG_FROM, DNNL_ARG_TO};
        if (p->rsrc)
            ok = run(s, p->rsrc, 2, io, (const dnnl_memory_desc_t *[]){&p->usrc, &p->csrc},
                     (void *[]){(void *)x, src}, &p->pad[1], scratch);
        if (ok && p->rwei)
            ok = run(s, p->rwei, 2, io, (const dnnl_memory_desc_t *[]){&p->uwei, &p->cwei},
                     (void *[]){(void *)w, wei}, &p->pad[2], scratch);
        if (ok) {
            static const int cargs[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
            ok = run(s, p->conv, bias ? 4 : 3, cargs,
                     (const dnnl_memory_desc_t *[]){&p->csrc, &p->cwei, &p->cdst, &p->ubias},
                     (void *[]){src, wei, dst, (void *)bias}, &p->pad[0], scratch);
        }
        if (ok && p->rdst)
            ok = run(s, p->rdst, 2, io, (const dnnl_memory_desc_t *[]){&p->cdst, &p->udst},
                     (void *[]){dst, out}, &p->pad[3], scratch);
    }
    if (s != NULL)
        dnnl_stream_destroy(s);
    ops_host_free(block);
    if (owned)
        plan_free(p);
    return ok;
}

#else /* no oneDNN in this build: conv.c's own path runs everything */

bool
ops_conv_dnnl_enable(bool on)
{
    (void)on;
    return false;
}

bool
ops_conv_dnnl_f32(const ops_conv_geom *g, const float *x, const float *w, const int64_t *wst, const float *bias,
                  int64_t bst, float *out)
{
    (void)g, (void)x, (void)w, (void)wst, (void)bias, (void)bst, (void)out;
    return false;
}

#endif

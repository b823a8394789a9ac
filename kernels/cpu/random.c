/* The CPU loops of the random ops (the drivers are kernels/random.c, the stubs
 * kernels/random.h): Philox blocks into contiguous memory, randperm's shuffle,
 * multinomial's checks and draws, dropout.  Every loop reserves its range of the
 * generator only after what it allocates is allocated, so a failed op leaves the
 * generator where it was. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/vec/vec_random.h"
#include "kernels/random.h"
#include "ops_dispatch.h"
#include "ops_functions_copy.h"

#ifdef _OPENMP
#define RAND_PARALLEL_FOR_ _Pragma("omp parallel for if (n >= OPS_GRAIN_SIZE) num_threads(nthreads) schedule(static)")
/* The chunk loops below hand out 16 chunks at a time to whichever
 * thread is free (16K float32 normals, about 40 us of one thread): a long call (randn
 * of 16M takes 40 ms) on a machine where another process holds part of one core no
 * longer waits at the barrier for the thread that lost its core, because the other
 * thread takes the remaining chunks.  A chunk's values depend on its number only
 * (Philox is counter-based), so the result does not depend on which thread computes
 * it or on the thread count. */
#define RAND_CHUNKS_PARALLEL_FOR_                                                                                  \
    _Pragma("omp parallel for if (n >= OPS_GRAIN_SIZE) num_threads(nthreads) schedule(dynamic, 16)")
#else
#define RAND_PARALLEL_FOR_
#define RAND_CHUNKS_PARALLEL_FOR_
#endif

/* ---- the CPU element loops ---------------------------------------------------------- */

/* The blocks are computed RAND_CHUNK_ at a time: their words by the level's vector
 * Philox (kernels/cpu/vec/vec_random.c, the same words as ops_philox_block), then
 * each block's values by ops_rand_from_words.  Which thread computes a chunk
 * changes nothing. */
#define RAND_CHUNK_ 256

/* One loop over the chunks per destination type (the conversion is all that
 * differs). */
#define GEN_TYPED_(T, FROM_F, FROM_I)                                                    \
    do {                                                                                 \
        T *const o_ = (T *)dst;                                                          \
        RAND_CHUNKS_PARALLEL_FOR_                                                        \
        for (int64_t ch = 0; ch < nchunks; ch++) {                                       \
            uint32_t w_[4 * RAND_CHUNK_];                                                \
            const int64_t c0_ = ch * RAND_CHUNK_;                                        \
            const int64_t nb_ = nblocks - c0_ < RAND_CHUNK_ ? nblocks - c0_ : RAND_CHUNK_; \
            vt->words(sp, (uint64_t)c0_, nb_, w_);                                       \
            for (int64_t b = c0_; b < c0_ + nb_; b++) {                                  \
                double f[4];                                                             \
                int64_t iv[4];                                                           \
                ops_rand_from_words(dp, w_ + 4 * (b - c0_), f, iv);                      \
                const int m = n - b * per < per ? (int)(n - b * per) : per;              \
                T *const ob_ = o_ + b * per;                                             \
                if (integer) {                                                           \
                    for (int j = 0; j < m; j++)                                          \
                        ob_[j] = FROM_I(iv[j]);                                          \
                } else {                                                                 \
                    for (int j = 0; j < m; j++)                                          \
                        ob_[j] = FROM_F(f[j]);                                           \
                }                                                                        \
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
    const ops_vec_random_table *const vt = ops_vec_random();
    const int64_t nchunks = (nblocks + RAND_CHUNK_ - 1) / RAND_CHUNK_;
    if (p != NULL) {
        const size_t is = ops_dtype_size(dt), ps = ops_dtype_size(pdt);
        RAND_CHUNKS_PARALLEL_FOR_
        for (int64_t ch = 0; ch < nchunks; ch++) {
            uint32_t w[4 * RAND_CHUNK_];
            const int64_t c0 = ch * RAND_CHUNK_;
            const int64_t nb = nblocks - c0 < RAND_CHUNK_ ? nblocks - c0 : RAND_CHUNK_;
            vt->words(sp, (uint64_t)c0, nb, w);
            for (int64_t b = c0; b < c0 + nb; b++) {
                double f[4];
                int64_t iv[4];
                ops_rand_from_words(dp, w + 4 * (b - c0), f, iv);
                for (int j = 0; j < per && b * per + j < n; j++) {
                    const int64_t e = b * per + j;
                    ops_rand_store_int(dt, dst + (size_t)e * is,
                                       f[j] < ops_rand_load_real(pdt, p + (size_t)e * ps));
                }
            }
        }
        return;
    }
    if (dt == OPS_FLOAT32 && (dl.kind == OPS_RAND_NORMAL || (dl.kind == OPS_RAND_UNIFORM && dl.digits == 24))) {
        /* the commonest samplers: the level's loop over whole blocks (the same values,
         * kernels/cpu/vec/vec_random.c), the last partial block here */
        float *const o = (float *)dst;
        const int64_t full = n / 4, fchunks = (full + RAND_CHUNK_ - 1) / RAND_CHUNK_;
        void (*const fill)(const ops_rand_dist *, const ops_philox_stream *, uint64_t, int64_t, float *) =
            dl.kind == OPS_RAND_NORMAL ? vt->normal_f32 : vt->uniform_f32;
        RAND_CHUNKS_PARALLEL_FOR_
        for (int64_t ch = 0; ch < fchunks; ch++) {
            const int64_t c0 = ch * RAND_CHUNK_;
            fill(dp, sp, (uint64_t)c0, full - c0 < RAND_CHUNK_ ? full - c0 : RAND_CHUNK_, o + 4 * c0);
        }
        if (n % 4 != 0) {
            double f[4];
            int64_t iv[4];
            ops_rand_block(dp, sp, (uint64_t)full, f, iv);
            for (int j = 0; j < n % 4; j++)
                o[4 * full + j] = (float)f[j];
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

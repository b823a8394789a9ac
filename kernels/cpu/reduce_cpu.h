/* Internal to the CPU reductions (kernels/cpu/reduce.c, reduce_outer.c): the plan of a
 * reduction and the helpers both loop files use.  The drivers (kernels/reduce.c) never
 * see a plan: they pass the input, the mask of reduced dims and the results to the
 * reduce_loop stub, and the CPU loop plans here. */
#ifndef OPS_KERNELS_CPU_REDUCE_CPU_H
#define OPS_KERNELS_CPU_REDUCE_CPU_H

#include "cpu_util.h"
#include "kernels/ops_reduce_common.h"

/* Elements summed plainly before a block joins the pairwise tree. */
#define RED_BLOCK 128

typedef struct {
    int64_t nout;                  /* output elements */
    int64_t nred;                  /* reduced elements per output */
    int nk;                        /* kept dims */
    int64_t ksz[OPS_MAX_DIMS];     /* their sizes */
    int64_t kst[OPS_MAX_DIMS];     /* their input strides (elements) */
    int64_t rin, rstep;            /* innermost reduced dim: size and stride */
    int64_t nro;                   /* runs of rin elements per output */
    int64_t *roff;                 /* offsets of those runs from an output's base */
    int ond;                       /* output rank */
    int64_t osz[OPS_MAX_DIMS];     /* output sizes */
    double arg;                    /* var/std: the correction (divisor nred - arg, at least
                                      0); norm: its order */
} red_plan;

/* Fills p (but not roff) from t's geometry and the mask. */
void red_plan_geometry(red_plan *p, const ops_tensor *t, const bool *mask, bool keepdim);
/* Allocates (one entry at least) and fills p->roff, the offsets of the runs, for t.
 * Returns false on OOM (error set). */
bool red_plan_offsets(const char *op, red_plan *p, const ops_tensor *t, const bool *mask);

/* Element offset of output o's base in the input. */
static inline int64_t
red_base(const red_plan *p, int64_t o)
{
    int64_t off = 0;
    for (int d = p->nk - 1; d >= 0; d--) {
        off += (o % p->ksz[d]) * p->kst[d];
        o /= p->ksz[d];
    }
    return off;
}

/* Runs BODY with `const SCALAR *V` at every reduced element of output base B. */
#define RED_EACH(P, B, SCALAR, V, ...)                                                             \
    for (int64_t j_ = 0; j_ < (P)->nro; j_++) {                                                    \
        const SCALAR *const q_ = (B) + (P)->roff[j_];                                              \
        for (int64_t i_ = 0; i_ < (P)->rin; i_++) {                                                \
            const SCALAR *const V = q_ + i_ * (P)->rstep;                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

/* Threads over outputs; the loop declares red_par_on_ (red_par_) before it. */
#ifdef _OPENMP
#define RED_PARALLEL_FOR_(P) _Pragma("omp parallel for schedule(static) if (red_par_on_)")
#else
#define RED_PARALLEL_FOR_(P)
#endif

/* Threads over outputs only when there are several and enough work in all. */
static inline bool
red_par_(const red_plan *p)
{
    return p->nout > 1 && (double)p->nout * (double)(p->nred + 1) > OPS_GRAIN_SIZE;
}

/* ---- pairwise summation ------------------------------------------------------------ */

#define RED_DEFINE_PAIRWISE_(ACC)                                                                  \
    typedef struct {                                                                               \
        ACC lev[64];                                                                               \
        ACC blk;                                                                                   \
        int64_t inblk;                                                                             \
        uint64_t nblk;                                                                             \
    } pw_##ACC;                                                                                    \
    static inline void pw_init_##ACC(pw_##ACC *s)                                                  \
    {                                                                                              \
        s->blk = 0;                                                                                \
        s->inblk = 0;                                                                              \
        s->nblk = 0;                                                                               \
    }                                                                                              \
    static inline void pw_add_##ACC(pw_##ACC *s, ACC v)                                            \
    {                                                                                              \
        s->blk += v;                                                                               \
        if (++s->inblk < RED_BLOCK)                                                                \
            return;                                                                                \
        ACC c = s->blk;                                                                            \
        uint64_t n = s->nblk++;                                                                    \
        int k = 0;                                                                                 \
        for (; n & 1; n >>= 1, k++)                                                                \
            c = s->lev[k] + c;                                                                     \
        s->lev[k] = c;                                                                             \
        s->blk = 0;                                                                                \
        s->inblk = 0;                                                                              \
    }                                                                                              \
    static inline ACC pw_total_##ACC(const pw_##ACC *s)                                            \
    {                                                                                              \
        ACC t = s->blk;                                                                            \
        uint64_t n = s->nblk;                                                                      \
        for (int k = 0; n != 0; n >>= 1, k++)                                                      \
            if (n & 1)                                                                             \
                t = s->lev[k] + t;                                                                 \
        return t;                                                                                  \
    }

RED_DEFINE_PAIRWISE_(float)
RED_DEFINE_PAIRWISE_(double)

/* NaN tests for the typed loops: floating types, and the types that have none. */
#define RED_ISNAN_(x) ((x) != (x))
#define RED_NONAN_(x) false

/* ---- the outer path (kernels/cpu/reduce_outer.c) ---------------------------------------- */

/* True for the kinds the outer path implements. */
bool red_outer_kind(red_kind kind);
/* True when the plan's outputs are the inner contiguous elements of each reduced row. */
bool red_outer_ok(const red_plan *p);
/* Level rows a pairwise row sum of p->nred rows needs (one per bit of the block count). */
int red_outer_levels(const red_plan *p);
/* The outer path for kind on dtype dt; false when it has none (the column walk runs). */
bool red_run_outer(red_kind kind, ops_dtype dt, const red_plan *p, const char *src, char *dst, char *dst2, void *ws);

#endif /* OPS_KERNELS_CPU_REDUCE_CPU_H */

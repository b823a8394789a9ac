/* Internal: host-side validation of the indexing and sorting ops, defined once in
 * kernels/index_check.c and run by their device-neutral drivers (kernels/index*.c,
 * sort.c) before any loop: shapes, dims, dtypes, and the messages for a bad index
 * value, so every device fails alike.  The check that reads index values is the
 * stub idx_check_values below (a walk on the CPU, a checking kernel on CUDA); it
 * reports through idx_index_error.  unique's kernels (kernels/cpu/sort_unique.c,
 * kernels/cuda/sort.cu) call these checks directly.  C and C++ clean. */
#ifndef OPS_INDEX_CHECK_H
#define OPS_INDEX_CHECK_H

#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The wording of an out-of-range index, per op family. */
typedef enum idx_err_kind {
    IDX_ERR_SELECT, /* index_select: "index out of range in self (index k of dimension d with size n)" */
    IDX_ERR_BOUNDS, /* gather, scatter, index_copy/fill, index:
                       "index k is out of bounds for dimension d with size n" */
    IDX_ERR_ADD,    /* index_add: "index out of range in self (index k, size n)" */
    IDX_ERR_FLAT,   /* take, put: "out of range: tried to access index k on a tensor of n elements." */
} idx_err_kind;

/* OPS_ERR_INDEX with kind's message; returns the status. */
OPS_INTERNAL ops_status idx_index_error(const char *op, idx_err_kind kind, int64_t k, int64_t dim, int64_t size);

/* The values of index (int32 or int64, any strides, on its device): the first one in
 * row-major order outside [lo, hi) fails with idx_index_error(op, kind, value, dim,
 * size).  The loops: a walk on the CPU (kernels/cpu/index.c), a checking kernel on
 * CUDA (kernels/cuda/index.cu). */
OPS_DECLARE_STUB(idx_check_values, ops_status,
                 (const char *op, const ops_tensor *index, int64_t lo, int64_t hi, idx_err_kind kind, int64_t dim,
                  int64_t size));

/* "op: unsupported operation: more than one element of the written-to tensor refers
 * to a single memory location..." when self overlaps itself (in-place forms). */
OPS_INTERNAL ops_status idx_check_inplace_self(const char *op, const ops_tensor *self);

/* ---- pieces the index drivers share -------------------------------------------------- */

/* How an entry point delivers a result computed into a new tensor. */
typedef enum { IDX_FUNCTIONAL, IDX_OUT, IDX_INPLACE } idx_form;

/* r (a new reference, or NULL with the error set) delivered by form: returned in *res
 * (IDX_FUNCTIONAL), written into out (IDX_OUT, resized as ops_write_out does) or copied
 * into self with its version bumped (IDX_INPLACE); r is released. */
OPS_INTERNAL ops_status idx_deliver(const char *op, idx_form form, ops_tensor *r, const ops_tensor *self,
                                    ops_tensor *out, ops_tensor **res);

/* The accumulation buffer of a read-modify-write op: *acc a new contiguous copy of self
 * in acc_dt (the opmath dtype, so duplicates of an index round once), and *r a new
 * tensor of self's dtype and shape to receive it (NULL when acc_dt is self's dtype).
 * On failure neither is left allocated. */
OPS_INTERNAL ops_status idx_accum_begin(const char *op, const ops_tensor *self, ops_dtype acc_dt, ops_tensor **acc,
                                        ops_tensor **r);
/* The result after the loop that wrote acc returned st: acc itself, or acc converted
 * into r.  Takes both references; NULL with the error set when st or the conversion
 * failed (both released). */
OPS_INTERNAL ops_tensor *idx_accum_end(const char *op, ops_status st, ops_tensor *acc, ops_tensor *r);

/* index_select: index dtype and ndim, dim wrapped (index values not read). */
OPS_INTERNAL ops_status idx_check_select(const char *op, const ops_tensor *self, int64_t *dim,
                                         const ops_tensor *index);
/* gather: index dtype, ndims and sizes, dim wrapped. */
OPS_INTERNAL ops_status idx_check_gather(const char *op, const ops_tensor *self, int64_t *dim,
                                         const ops_tensor *index);

/* index_add / index_copy / index_fill. */
typedef enum ix_mode { IX_ADD, IX_COPY, IX_FILL } ix_mode;
/* dim wrapped; index and source (NULL for index_fill) dtypes and shapes. */
OPS_INTERNAL ops_status idx_check_func(const char *op, ix_mode mode, const ops_tensor *self, int64_t *dim,
                                       const ops_tensor *index, const ops_tensor *source);
/* index_add's alpha against self's dtype. */
OPS_INTERNAL ops_status idx_check_alpha(const char *op, const ops_tensor *self, ops_scalar alpha);
/* index_fill.int_Tensor / masked_fill.Tensor's value must be 0-dim; "what" is the op
 * PyTorch's message names ("index_fill_" or "masked_fill_"). */
OPS_INTERNAL ops_status idx_check_value_tensor(const char *op, const char *what, const ops_tensor *value);

/* take / put: dtypes, sizes and emptiness (index values not read). */
OPS_INTERNAL ops_status idx_check_take(const char *op, const ops_tensor *self, const ops_tensor *index);
OPS_INTERNAL ops_status idx_check_put(const char *op, const ops_tensor *self, const ops_tensor *index,
                                      const ops_tensor *source);

/* repeat_interleave: repeats (a CPU tensor; NULL: the int rep_int) checked and read
 * into *reps (ops_host_malloc'd, freed by the caller): one count per slice of self
 * along dim, or per element when *dim is -1 (dim None or a 0-dim self: self
 * flattened); *total their sum, checked against output_size. */
OPS_INTERNAL ops_status idx_repeat_counts(const char *op, const ops_tensor *self, const ops_tensor *repeats,
                                          int64_t rep_int, const int64_t *dim_opt, const int64_t *output_size,
                                          int64_t **reps, int64_t *dim, int64_t *total);
/* repeat_interleave.Tensor: repeats is 1-D (its entry's `check:`, before the dtype). */
OPS_INTERNAL ops_status idx_repeat_tensor_rank(const char *op, const ops_tensor *repeats);
/* repeat_interleave.Tensor: repeats (a CPU tensor) checked, its dtype one of dtypes (the
 * entry's declared set), and read likewise. */
OPS_INTERNAL ops_status idx_repeat_tensor_counts(const char *op, unsigned dtypes, const ops_tensor *repeats,
                                                 const int64_t *output_size, int64_t **reps, int64_t *total);
/* dst (total elements of dtype dt, int32 or int64): i repeated reps[i] times, i < n. */
OPS_INTERNAL void idx_repeat_fill(ops_dtype dt, const int64_t *reps, int64_t n, void *dst);

/* scatter family. */
typedef enum sc_reduce { SC_ASSIGN, SC_SUM, SC_PROD, SC_MEAN, SC_AMAX, SC_AMIN } sc_reduce;
/* reduce string -> sc_reduce ("add"/"multiply", or with new_options sum/prod/mean/
 * amax/amin), and scatter_reduce's refusal of bool. */
OPS_INTERNAL ops_status idx_parse_reduce(const char *op, const ops_tensor *self, const char *reduce,
                                         bool new_options, sc_reduce *r);
/* dim wrapped; index/src dtypes and shapes (none when index is empty: the op then
 * leaves self as it is). */
OPS_INTERNAL ops_status idx_check_scatter(const char *op, const ops_tensor *self, int64_t *dim,
                                          const ops_tensor *index, const ops_tensor *src);
/* The value include_self=False starts a touched element from. */
OPS_INTERNAL ops_scalar idx_reduce_identity(sc_reduce red, ops_dtype dt);

/* masked_fill's mask dtype; masked_select's; masked_scatter's mask and source. */
OPS_INTERNAL ops_status idx_check_fill_mask(const char *op, const ops_tensor *mask);
OPS_INTERNAL ops_status idx_check_select_mask(const char *op, const ops_tensor *mask);
OPS_INTERNAL ops_status idx_check_masked_scatter(const char *op, const ops_tensor *self, const ops_tensor *mask,
                                                 const ops_tensor *source);
/* masked_scatter's "source has fewer elements than the mask has ones". */
OPS_INTERNAL ops_status idx_masked_scatter_count_error(const char *op, int64_t nsource, int64_t ntrue);
/* masked_scatter_'s mask must broadcast to self's own shape. */
OPS_INTERNAL ops_status idx_check_masked_scatter_inplace(const char *op, const ops_tensor *self,
                                                         const ops_tensor *mask);

/* sort / topk / kthvalue: what the line op makes of self. */
typedef enum { LINE_SORT, LINE_TOPK, LINE_KTH } line_kind;
/* self's dtype against declared (topk, kthvalue: the set of the entry whose kernel
 * runs, or SORT_NUMERIC_MASK for their out= forms, which declare none; 0: sort, every
 * dtype), dim wrapped, k checked; the result's shape in (*ond, osz). */
OPS_INTERNAL ops_status sort_result_shape(const char *op, unsigned declared, line_kind kind, const ops_tensor *self,
                                          int64_t *dim, int64_t k, bool keepdim, int *ond, int64_t *osz);
/* Every dtype but bool: what topk.values and kthvalue.values accept (the set their
 * functional forms declare). */
#define SORT_NUMERIC_MASK                                                                           \
    (OPS_DTYPE_BIT(OPS_UINT8) | OPS_DTYPE_BIT(OPS_INT8) | OPS_DTYPE_BIT(OPS_INT16) |                \
     OPS_DTYPE_BIT(OPS_INT32) | OPS_DTYPE_BIT(OPS_INT64) | OPS_DTYPE_BIT(OPS_FLOAT16) |             \
     OPS_DTYPE_BIT(OPS_BFLOAT16) | OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64))
/* An out= of sort/topk/kthvalue: dtype want, no self-overlap when it has the shape. */
OPS_INTERNAL ops_status sort_check_out(const char *op, const char *name, const ops_tensor *out, ops_dtype want,
                                       int nd, const int64_t *sizes);
/* Copies results r[i] into outs o[i] (resized when their shape differs): every resize
 * first, undone if a later one fails, then the copies (any device). */
OPS_INTERNAL ops_status sort_write_outs(const char *op, int n, ops_tensor *const *r, ops_tensor *const *o);

/* Advanced indexing (index.Tensor, index_put): per self dim, its integer index (NULL:
 * not indexed) with strides broadcast to B (the indices' common shape), and where
 * each dim's coordinate sits in the result.  As in NumPy and PyTorch, B takes the
 * place of the indexed dims when they are adjacent and comes first otherwise. */
typedef struct adv_plan {
    int nd;                                  /* self's ndim */
    const ops_tensor *idx[OPS_MAX_DIMS];     /* per self dim; NULL when not indexed */
    int64_t ist[OPS_MAX_DIMS][OPS_MAX_DIMS]; /* idx[d]'s strides broadcast to B */
    ops_tensor *owned[OPS_MAX_DIMS];         /* nonzero() results of masks, to release */
    int nowned;
    int bnd; /* B */
    int64_t bshape[OPS_MAX_DIMS];
    int bpos;                /* first result dim of B */
    int rpos[OPS_MAX_DIMS];  /* result dim of each non-indexed self dim */
    int rnd;
    int64_t rshape[OPS_MAX_DIMS];
} adv_plan;

/* nonzero(mask) on the mask's device: int64 [n, mask.ndim]. */
typedef ops_tensor *(*idx_nonzero_fn)(const char *op, const ops_tensor *mask);
/* The plan of self[indices]: masks replaced by their nonzero() columns, the indices
 * broadcast, shapes checked (index values are not read: each backend checks them).
 * On failure everything it owns is released and the error set. */
OPS_INTERNAL ops_status idx_plan_build(const char *op, const ops_tensor *self, ops_tensor_list indices,
                                       idx_nonzero_fn nonzero, adv_plan *p);
OPS_INTERNAL void idx_plan_release(adv_plan *p);

/* Element offset of t's linear-th element (row-major). */
static inline int64_t
idx_linear_offset(const ops_tensor *t, int64_t linear)
{
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (linear % t->sizes[d]) * t->strides[d];
        linear /= t->sizes[d];
    }
    return off;
}

/* Strides of t read as if broadcast to (nd, shape): 0 along the dims t lacks or has
 * as 1.  The caller has checked that t broadcasts to shape. */
static inline void
idx_bcast_strides(const ops_tensor *t, int nd, const int64_t *shape, int64_t *st)
{
    (void)shape;
    for (int d = 0; d < nd; d++) {
        const int td = d - (nd - t->ndim);
        st[d] = (td < 0 || t->sizes[td] == 1) ? 0 : t->strides[td];
    }
}

#ifdef __cplusplus
}
#endif

#endif /* OPS_INDEX_CHECK_H */

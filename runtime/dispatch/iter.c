/* The tensor iterator: broadcasting, dtype conversion of inputs, out=/in-place
 * validation, output allocation, and the loop geometry (reorder + coalesce) that
 * kernels walk as 1-D strided runs.  See ops_iter.h for the rules.
 *
 * Cost matters here more than anywhere: a one-element add is all iterator.  The
 * common case (inputs of one dtype, contiguous or one-element, output contiguous)
 * takes a fast path with no heap allocation besides the functional result, no
 * sorting, and no string work; messages are formatted only on failure. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/copy.h"
#include "ops_dispatch.h"

/* ---- small helpers -------------------------------------------------------- */

static inline const char *
op_name(const char *op)
{
    return op ? op : "ops";
}

/* Bytes per element, inlined: the hot path asks for it once per operand. */
static const int64_t itemsize_of[OPS_NUM_DTYPES] = {
#define OPS_X_(e, name, size) [e] = size,
    OPS_FOREACH_DTYPE(OPS_X_)
#undef OPS_X_
};

static inline int64_t
itemsize(ops_dtype dt)
{
    return itemsize_of[dt];
}

static inline char *
tensor_data(const ops_tensor *t)
{
    return (char *)t->storage->data + t->offset * itemsize(t->dtype);
}

static inline int64_t
tensor_numel(const ops_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->sizes[i];
    return n;
}

static inline bool
on_cpu(const ops_tensor *t)
{
    return t->storage->device.type == OPS_CPU;
}

/* A CPU 0-dim tensor (or wrapped number): PyTorch lets it join an op on any device as
 * an input, read once on the host and passed to the kernel by value. */
static inline bool
is_cpu_scalar(const ops_tensor *t)
{
    return t->ndim == 0 && on_cpu(t);
}

/* Plain loops, not memcmp: shapes are a few dims, and a libc call costs more. */
static inline bool
same_ints(int n, const int64_t *a, const int64_t *b)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static inline bool
same_shape(int nda, const int64_t *a, int ndb, const int64_t *b)
{
    return nda == ndb && same_ints(nda, a, b);
}

/* Row-major strides for exactly this shape (size-1 dims' strides ignored). */
static inline bool
contiguous_with_shape(const ops_tensor *t, int nd, const int64_t *shape)
{
    if (t->ndim != nd)
        return false;
    int64_t expected = 1;
    for (int i = nd - 1; i >= 0; i--) {
        if (t->sizes[i] != shape[i])
            return false;
        if (shape[i] != 1 && t->strides[i] != expected)
            return false;
        expected *= shape[i];
    }
    return true;
}

static inline bool
same_view(const ops_tensor *a, const ops_tensor *b)
{
    return a == b || (a->storage == b->storage && a->offset == b->offset && a->dtype == b->dtype &&
                      same_shape(a->ndim, a->sizes, b->ndim, b->sizes) &&
                      same_ints(a->ndim, a->strides, b->strides));
}

bool
ops_dense_strides_like(const ops_tensor *t, int64_t *strides)
{
    int order[OPS_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0)
            return false;
        if (t->sizes[i] != 1) {
            if (t->strides[i] <= 0)
                return false;
            order[n++] = i;
        }
    }
    /* insertion sort by stride, innermost first */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[order[j - 1]] > t->strides[order[j]]; j--) {
            const int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[order[i]] != expected)
            return false;
        expected *= t->sizes[order[i]];
    }
    /* size-1 dims: the stride of a 1 in the same order (any value is valid) */
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] != 1) {
            strides[i] = t->strides[i];
            continue;
        }
        int64_t s = 1;
        for (int j = i + 1; j < t->ndim; j++)
            if (t->sizes[j] != 1) {
                s = t->strides[j] * t->sizes[j];
                break;
            }
        strides[i] = s;
    }
    return true;
}

/* ---- lifecycle ------------------------------------------------------------ */

static inline void
iter_init(ops_iter *it, const char *op, ops_iter_mode mode)
{
    /* every field release() or the loops read; the big arrays are filled on demand */
    it->op = op;
    it->mode = mode;
    it->noutputs = 1;
    it->noperands = 0;
    it->owned = 0;
    it->host_scalars = 0;
    it->result = NULL;
    it->writeback = NULL;
    it->written = NULL;
    it->resize_out = false;
    it->numel = 0;
    it->grain = 0;
    it->ndim = 0;
    it->shape_ndim = 0;
    it->common_dtype = OPS_DTYPE_NONE;
    it->result_dtype = OPS_DTYPE_NONE;
    it->device = OPS_DEVICE_CPU;
}

void
ops_iter_init(ops_iter *it, const char *op, ops_iter_mode mode)
{
    iter_init(it, op, mode);
}

void
ops_iter_release(ops_iter *it)
{
    if (it == NULL)
        return;
    for (int k = 0; k < it->noperands && k < OPS_ITER_MAX_OPERANDS; k++) {
        if (it->owned & (1u << k))
            ops_tensor_release(it->operands[k]);
        it->operands[k] = NULL;
    }
    it->owned = 0;
    it->noperands = 0;
    ops_tensor_release(it->result);
    it->result = NULL;
    it->writeback = NULL;
    it->written = NULL;
}

ops_tensor *
ops_iter_take_result(ops_iter *it)
{
    ops_tensor *r = it->result;
    it->result = NULL;
    return r;
}

ops_status
ops_iter_finish(ops_iter *it)
{
    if (it->writeback) {
        ops_status st;
        if (it->resize_out &&
            (st = ops_tensor_resize_(it->op, it->writeback, it->shape_ndim, it->shape)) != OPS_OK)
            return st;
        if ((st = ops_copy_values(it->op, it->writeback, it->operands[0])) != OPS_OK)
            return st;
    }
    if (it->written) /* ops_tensor_bump_version, without the call */
        __atomic_add_fetch(&it->written->storage->version, 1, __ATOMIC_RELAXED);
    return OPS_OK;
}

int
ops_iter_num_tasks(const ops_iter *it)
{
    const int64_t grain = it->grain > 0 ? it->grain : OPS_GRAIN_SIZE;
    if (it->numel < grain)
        return 1;
    const int64_t chunks = ops_ceil_div_i64(it->numel, grain);
    const int nt = ops_get_num_threads();
    return chunks < nt ? (int)chunks : nt;
}

void
ops_iter_set_cost(ops_iter *it, int cost)
{
    it->grain = cost > 1 ? OPS_GRAIN_SIZE / cost : 0;
}

ops_status
ops_fail_dtype(const char *op, ops_dtype dt, unsigned supported_mask)
{
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (int d = 0; d < OPS_NUM_DTYPES; d++) {
        if (!(supported_mask & OPS_DTYPE_BIT(d)))
            continue;
        const int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                               ops_dtype_name((ops_dtype)d));
        if (w < 0 || (size_t)w >= sizeof list - len)
            break;
        len += (size_t)w;
    }
    return ops_fail(OPS_ERR_DTYPE, "%s: dtype %s is not supported (supported: %s)", op_name(op),
                    ops_dtype_name(dt), list);
}

/* ---- geometry ------------------------------------------------------------- */

/* Operand k's strides (elements) over the broadcast shape: 0 where it broadcasts. */
static void
broadcast_strides(const ops_iter *it, int k, bool scalar, int64_t *bst)
{
    const int nd = it->shape_ndim;
    const ops_tensor *t = it->operands[k];
    if (scalar) {
        for (int d = 0; d < nd; d++)
            bst[d] = 0;
        return;
    }
    const int lead = nd - t->ndim;
    for (int d = 0; d < nd; d++) {
        const int td = d - lead;
        if (td < 0 || (t->sizes[td] == 1 && it->shape[d] != 1))
            bst[d] = 0;
        else
            bst[d] = t->strides[td];
    }
}

static inline int64_t
iabs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* PyTorch's reorder rule: 1 if dim a should be outside dim b, -1 if inside, 0 if no
 * operand decides.  Operands are asked in order; a broadcast dim (stride 0) abstains. */
static int
should_swap(const ops_iter *it, int64_t bst[][OPS_MAX_DIMS], unsigned voters, int a, int b)
{
    for (int k = 0; k < it->noperands; k++) {
        if (!(voters & (1u << k)))
            continue;
        const int64_t sa = iabs64(bst[k][a]), sb = iabs64(bst[k][b]);
        if (sa == 0 || sb == 0)
            continue;
        if (sa < sb)
            return -1;
        if (sa > sb)
            return 1;
        if (it->shape[a] > it->shape[b])
            return 1;
    }
    return 0;
}

/* The non-1 dims of the broadcast shape, innermost first.  `skip_zero_of_0` drops
 * dims along which operand 0 has stride 0 (nullary iterators). */
static int
sort_dims(const ops_iter *it, int64_t bst[][OPS_MAX_DIMS], unsigned voters, bool skip_zero_of_0, int *dims)
{
    int m = 0;
    for (int d = it->shape_ndim - 1; d >= 0; d--) {
        if (it->shape[d] == 1 || (skip_zero_of_0 && bst[0][d] == 0))
            continue;
        dims[m++] = d;
    }
    /* insertion sort that tolerates undecided comparisons (keeps going past them) */
    for (int i = 1; i < m; i++) {
        int d1 = i;
        for (int d0 = i - 1; d0 >= 0; d0--) {
            const int c = should_swap(it, bst, voters, dims[d0], dims[d1]);
            if (c > 0) {
                const int tmp = dims[d0];
                dims[d0] = dims[d1];
                dims[d1] = tmp;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    return m;
}

/* New output of the broadcast shape laid out in the order of dims (innermost first). */
static ops_tensor *
alloc_in_order(const ops_iter *it, const int *dims, int m, ops_dtype dtype)
{
    const int nd = it->shape_ndim;
    bool row_major = true;
    for (int i = 0; i + 1 < m; i++)
        row_major = row_major && dims[i] > dims[i + 1];
    if (row_major)
        return ops_tensor_new(it->op, nd, it->shape, NULL, dtype, it->device);
    int64_t st[OPS_MAX_DIMS];
    int64_t next = 1;
    for (int i = 0; i < m; i++) {
        st[dims[i]] = next;
        next *= it->shape[dims[i]];
    }
    for (int d = nd - 1; d >= 0; d--) {
        if (it->shape[d] != 1)
            continue;
        int64_t s = 1;
        for (int j = d + 1; j < nd; j++)
            if (it->shape[j] != 1) {
                s = st[j] * it->shape[j];
                break;
            }
        st[d] = s;
    }
    return ops_tensor_new(it->op, nd, it->shape, st, dtype, it->device);
}

/* Fills data pointers and the loop geometry from the operands, then coalesces. */
static void
set_geometry(ops_iter *it, int64_t bst[][OPS_MAX_DIMS], const int *dims, int m, unsigned scalar_mask)
{
    const int nops = it->noperands;
    for (int k = 0; k < nops; k++)
        it->data[k] = (scalar_mask & (1u << k)) ? (char *)&it->scalar_buf[k] : tensor_data(it->operands[k]);
    if (it->numel == 0 || m == 0) {
        /* one run: of 1 element (all dims are 1), or of none */
        it->ndim = 1;
        it->loop_shape[0] = it->numel > 0 ? 1 : 0;
        for (int k = 0; k < nops; k++)
            it->loop_strides[0][k] = itemsize(it->dtypes[k]);
        return;
    }
    for (int i = 0; i < m; i++) {
        it->loop_shape[i] = it->shape[dims[i]];
        for (int k = 0; k < nops; k++) {
            const int64_t s = (k == 0 || !(scalar_mask & (1u << k))) ? bst[k][dims[i]] : 0;
            it->loop_strides[i][k] = s * itemsize(it->dtypes[k]);
        }
    }
    /* coalesce: inner dim i absorbs outer dim j when every operand steps over dim i
     * exactly as one step of dim j */
    int n = 0;
    for (int j = 1; j < m; j++) {
        bool ok = true;
        for (int k = 0; k < nops && ok; k++)
            ok = it->loop_strides[j][k] == it->loop_strides[n][k] * it->loop_shape[n];
        if (ok) {
            it->loop_shape[n] *= it->loop_shape[j];
        } else {
            n++;
            it->loop_shape[n] = it->loop_shape[j];
            for (int k = 0; k < nops; k++)
                it->loop_strides[n][k] = it->loop_strides[j][k];
        }
    }
    it->ndim = n + 1;
}

/* The fast case: every operand is contiguous with the full shape or has one element
 * (scalar broadcast).  One run; no sorting.  Operand 0 may still be unallocated. */
static bool
fast_geometry(ops_iter *it, unsigned scalar_mask)
{
    const int nops = it->noperands;
    const int nd = it->shape_ndim;
    for (int k = 0; k < nops; k++) {
        const ops_tensor *t = it->operands[k];
        int64_t s;
        if (k > 0 && ((scalar_mask & (1u << k)) || tensor_numel(t) == 1))
            s = it->numel == 1 ? itemsize(it->dtypes[k]) : 0;
        else if (t == NULL || contiguous_with_shape(t, nd, it->shape))
            s = itemsize(it->dtypes[k]);
        else
            return false;
        it->loop_strides[0][k] = s;
    }
    it->ndim = 1;
    it->loop_shape[0] = it->numel;
    return true;
}

static void
fast_data(ops_iter *it, unsigned scalar_mask)
{
    for (int k = 0; k < it->noperands; k++)
        it->data[k] = (scalar_mask & (1u << k)) ? (char *)&it->scalar_buf[k] : tensor_data(it->operands[k]);
}

/* ---- building ------------------------------------------------------------- */

static ops_status
fail_broadcast(const char *op, int n, const ops_tensor *const *in, const char *const *names)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (ops_broadcast_shapes(op, names[i], in[i]->ndim, in[i]->sizes, names[j], in[j]->ndim,
                                     in[j]->sizes, NULL, NULL) != OPS_OK)
                return ops_last_status();
    return ops_fail(OPS_ERR_SHAPE, "%s: the inputs' shapes do not broadcast", op_name(op));
}

/* Broadcast shape of in[0..n) into it->shape / shape_ndim / numel. */
static ops_status
compute_shape(ops_iter *it, int n, const ops_tensor *const *in, const char *const *names)
{
    int nd = in[0]->ndim;
    for (int d = 0; d < nd; d++)
        it->shape[d] = in[0]->sizes[d];
    for (int i = 1; i < n; i++) {
        const ops_tensor *t = in[i];
        if (same_shape(nd, it->shape, t->ndim, t->sizes))
            continue;
        if (t->ndim > nd) {
            const int extra = t->ndim - nd;
            memmove(it->shape + extra, it->shape, (size_t)nd * sizeof(int64_t));
            for (int d = 0; d < extra; d++)
                it->shape[d] = 1;
            nd = t->ndim;
        }
        const int lead = nd - t->ndim;
        for (int d = 0; d < t->ndim; d++) {
            const int64_t s = it->shape[lead + d], ts = t->sizes[d];
            if (s == ts || ts == 1)
                continue;
            if (s != 1)
                return fail_broadcast(it->op, n, in, names);
            it->shape[lead + d] = ts;
        }
    }
    it->shape_ndim = nd;
    /* Each input's count fits; their broadcast's may not ([2^32, 1] with [1, 2^32]). */
    if (ops_numel_overflow(nd, it->shape, &it->numel)) {
        char buf[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_VALUE, "%s: the broadcast shape %s has more elements than int64 can count",
                        op_name(it->op), ops_shape_str(nd, it->shape, buf, sizeof buf));
    }
    return OPS_OK;
}

static ops_status
fail_internal_overlap(const char *op)
{
    return ops_fail(OPS_ERR_VALUE,
                    "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                    "single memory location. Please clone() the tensor before performing the operation.",
                    op_name(op));
}

static ops_status
fail_partial_overlap(const char *op)
{
    return ops_fail(OPS_ERR_VALUE,
                    "%s: unsupported operation: some elements of the input tensor and the written-to tensor "
                    "refer to a single memory location. Please clone() the tensor before performing the "
                    "operation.",
                    op_name(op));
}

/* True when writing t could write one element twice. */
static inline bool
out_overlaps_itself(const ops_tensor *t)
{
    if (contiguous_with_shape(t, t->ndim, t->sizes))
        return false;
    return ops_tensor_has_internal_overlap(t);
}

/* A temporary holding t converted to dtype, in t's layout when dense. */
static ops_tensor *
converted_copy(const char *op, const ops_tensor *t, ops_dtype dtype)
{
    int64_t st[OPS_MAX_DIMS];
    const bool dense = ops_dense_strides_like(t, st);
    ops_tensor *tmp = ops_tensor_new(op, t->ndim, t->sizes, dense ? st : NULL, dtype, t->storage->device);
    if (tmp == NULL)
        return NULL;
    if (ops_copy_values(op, tmp, t) != OPS_OK) {
        ops_tensor_release(tmp);
        return NULL;
    }
    return tmp;
}

static ops_status __attribute__((noinline))
fail_device(const char *op, const char *name_a, ops_device a, const char *name_b, ops_device b)
{
    char da[32], db[32];
    return ops_fail(OPS_ERR_DEVICE,
                    "%s: expected all tensors to be on the same device, but found %s on %s and %s on %s",
                    op_name(op), name_a, ops_device_str(a, da, sizeof da), name_b, ops_device_str(b, db, sizeof db));
}

/* The device an iterator op runs on, as PyTorch's TensorIterator picks it: the first
 * of out= (or self, in place) and the inputs that is not a CPU 0-dim input; CPU 0-dim
 * inputs (wrapped numbers included) may join an op on any device, every other
 * operand must be on that device.  Outputs never count as CPU scalars.  The glue of
 * structured entries leaves the device check to this function. */
static ops_status
iter_device(ops_iter *it, const ops_meta_args *a, int n, const ops_tensor *const *in, const char *const *names)
{
    const char *lead = NULL;
    ops_device dev = OPS_DEVICE_CPU;
    if (a->mode != OPS_ITER_FUNCTIONAL && a->out != NULL) {
        lead = a->mode == OPS_ITER_INPLACE ? "self" : "out";
        dev = a->out->storage->device;
    } else {
        for (int i = 0; i < n && lead == NULL; i++)
            if (!is_cpu_scalar(in[i])) {
                lead = names[i];
                dev = in[i]->storage->device;
            }
    }
    it->device = dev;
    for (int i = 0; i < n; i++) {
        const ops_device d = in[i]->storage->device;
        /* ops_device_equal's rule, inline: the all-cpu call is the common one */
        if (OPS_LIKELY(d.type == dev.type && (d.type == OPS_CPU || d.index == dev.index)) || is_cpu_scalar(in[i]))
            continue;
        return fail_device(a->op, lead, dev, names[i], d);
    }
    return OPS_OK;
}

ops_status
ops_iter_build(ops_iter *it, const ops_meta_args *a, ops_dtype compute_dtype, ops_dtype result_dtype,
               unsigned keep_mask)
{
    const char *op = a->op;
    char buf1[OPS_SHAPE_STR_LEN], buf2[OPS_SHAPE_STR_LEN];
    const ops_tensor *in[OPS_ITER_MAX_INPUTS];
    const char *names[OPS_ITER_MAX_INPUTS];
    unsigned keep = 0; /* by input position (after skipping None) */
    int n = 0;

    iter_init(it, op, a->mode);
    for (int i = 0; i < a->ntensors && i < OPS_ITER_MAX_INPUTS; i++) {
        if (a->tensors[i] == NULL)
            continue;
        if (keep_mask & (1u << i))
            keep |= 1u << n;
        in[n] = a->tensors[i];
        names[n] = a->names[i] ? a->names[i] : "input";
        n++;
    }
    if (n == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: expected at least one input tensor", op_name(op));
    it->common_dtype = compute_dtype;
    it->result_dtype = result_dtype;

    ops_status st = iter_device(it, a, n, in, names);
    if (OPS_UNLIKELY(st != OPS_OK))
        return st;
    st = compute_shape(it, n, in, names);
    if (st != OPS_OK)
        return st;
    const int nd = it->shape_ndim;

    /* ---- out= and in-place checks: all before anything is allocated or written */
    ops_tensor *out = NULL;
    bool resize_out = false;
    if (a->mode != OPS_ITER_FUNCTIONAL) {
        out = a->out;
        if (out == NULL)
            return ops_fail(OPS_ERR_VALUE, "%s: expected an output tensor, got NULL", op_name(op));
        if (OPS_UNLIKELY(out->dtype != result_dtype && !ops_can_cast(result_dtype, out->dtype)))
            return ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s",
                            op_name(op), ops_dtype_name(result_dtype), ops_dtype_name(out->dtype));
        if (!same_shape(out->ndim, out->sizes, nd, it->shape)) {
            if (a->mode == OPS_ITER_INPLACE)
                return ops_fail(OPS_ERR_SHAPE, "%s: output with shape %s doesn't match the broadcast shape %s",
                                op_name(op), ops_shape_str(out->ndim, out->sizes, buf1, sizeof buf1),
                                ops_shape_str(nd, it->shape, buf2, sizeof buf2));
            if (tensor_numel(out) != 0)
                return ops_fail(OPS_ERR_SHAPE,
                                "%s: out has shape %s but the result has shape %s (an out= tensor must have "
                                "the result's shape, or be empty to be resized)",
                                op_name(op), ops_shape_str(out->ndim, out->sizes, buf1, sizeof buf1),
                                ops_shape_str(nd, it->shape, buf2, sizeof buf2));
            resize_out = true;
        }
        if (!resize_out) {
            if (out_overlaps_itself(out))
                return fail_internal_overlap(op);
            for (int i = 0; i < n; i++)
                if (in[i]->storage == out->storage && !same_view(in[i], out) && ops_tensor_may_overlap(in[i], out))
                    return fail_partial_overlap(op);
        }
    }

    /* ---- inputs, converted to the computation dtype where needed */
    unsigned scalar_mask = 0;
    const bool cpu_iter = it->device.type == OPS_CPU;
    it->noperands = 1 + n;
    it->operands[0] = NULL;
    it->dtypes[0] = result_dtype;
    for (int i = 0; i < n; i++) {
        const int k = i + 1;
        const ops_tensor *t = in[i];
        it->operands[k] = (ops_tensor *)t;
        const bool keep_dtype = (keep & (1u << i)) || t->dtype == compute_dtype || compute_dtype == OPS_DTYPE_NONE;
        it->dtypes[k] = keep_dtype ? t->dtype : compute_dtype;
        /* A CPU 0-dim input of a CUDA op is always read on the host (iter_device let
         * only those in); a one-element CPU input to convert goes the same way. */
        if (on_cpu(t) && (!cpu_iter || (!keep_dtype && tensor_numel(t) == 1))) {
            /* a scalar operand: convert the one value into the iterator itself */
            ops_convert_run(it->dtypes[k], (char *)&it->scalar_buf[k], 0, t->dtype, tensor_data(t), 0, 1);
            scalar_mask |= 1u << k;
            continue;
        }
        if (keep_dtype)
            continue;
        ops_tensor *tmp = converted_copy(op, t, compute_dtype);
        if (tmp == NULL)
            return ops_last_status();
        it->operands[k] = tmp;
        it->owned |= 1u << k;
    }

    /* ---- the output and the geometry.  An empty out= is resized only in
     * ops_iter_finish (the kernel writes a temporary), so that a kernel that fails
     * (a zero divisor, a bad alpha) leaves it as it was. */
    const bool direct_out = out != NULL && out->dtype == result_dtype && !resize_out;
    if (direct_out)
        it->operands[0] = out;
    int64_t bst[OPS_ITER_MAX_OPERANDS][OPS_MAX_DIMS];
    int dims[OPS_MAX_DIMS];
    int m = 0;
    const bool fast = it->numel != 0 && fast_geometry(it, scalar_mask);
    if (!fast) {
        unsigned voters = 0;
        for (int k = 1; k < it->noperands; k++) {
            broadcast_strides(it, k, (scalar_mask & (1u << k)) != 0, bst[k]);
            voters |= 1u << k;
        }
        /* the user's out leads the order (writes matter most), unless it is resized */
        if (out != NULL && !resize_out) {
            it->operands[0] = out;
            broadcast_strides(it, 0, false, bst[0]);
            voters |= 1u;
        }
        m = sort_dims(it, bst, voters, false, dims);
    }
    if (!direct_out) {
        /* the functional result, or out='s temporary */
        ops_tensor *o = fast ? ops_tensor_new(op, nd, it->shape, NULL, result_dtype, it->device)
                             : alloc_in_order(it, dims, m, result_dtype);
        it->operands[0] = o;
        if (o == NULL)
            return ops_last_status();
        if (out == NULL)
            it->result = o;
        else
            it->owned |= 1u;
    }
    if (fast) {
        fast_data(it, scalar_mask);
    } else {
        broadcast_strides(it, 0, false, bst[0]);
        set_geometry(it, bst, dims, m, scalar_mask);
    }
    it->host_scalars = scalar_mask;
    if (out != NULL) {
        it->written = out;
        if (!direct_out) {
            it->writeback = out;
            it->resize_out = resize_out;
        }
    }
    return OPS_OK;
}

/* ---- iterators for kernels that build their own --------------------------- */

ops_status
ops_iter_build_nullary(ops_iter *it, const char *op, ops_tensor *out)
{
    iter_init(it, op, OPS_ITER_INPLACE);
    if (out == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected a tensor, got NULL", op_name(op));
    it->noutputs = 1;
    it->noperands = 1;
    it->operands[0] = out;
    it->dtypes[0] = out->dtype;
    it->common_dtype = out->dtype;
    it->result_dtype = out->dtype;
    it->device = out->storage->device;
    it->shape_ndim = out->ndim;
    memcpy(it->shape, out->sizes, (size_t)out->ndim * sizeof(int64_t));
    it->written = out;
    int64_t bst[OPS_ITER_MAX_OPERANDS][OPS_MAX_DIMS];
    int dims[OPS_MAX_DIMS];
    broadcast_strides(it, 0, false, bst[0]);
    const int64_t full = tensor_numel(out);
    const int m = sort_dims(it, bst, 1u, true, dims);
    /* the elements the loop visits: repeated (stride 0) dims are visited once */
    int64_t numel = full == 0 ? 0 : 1;
    for (int i = 0; i < m && numel; i++)
        numel *= it->shape[dims[i]];
    it->numel = numel;
    set_geometry(it, bst, dims, m, 0);
    return OPS_OK;
}

ops_status
ops_iter_build_copy(ops_iter *it, const char *op, ops_tensor *dst, const ops_tensor *src)
{
    char buf1[OPS_SHAPE_STR_LEN], buf2[OPS_SHAPE_STR_LEN];
    iter_init(it, op, OPS_ITER_INPLACE);
    if (dst == NULL || src == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected two tensors, got NULL", op_name(op));
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", dst->ndim, dst->sizes, "src", src->ndim, src->sizes, &nd, shape) !=
        OPS_OK)
        return ops_last_status();
    if (!same_shape(nd, shape, dst->ndim, dst->sizes))
        return ops_fail(OPS_ERR_SHAPE, "%s: output with shape %s doesn't match the broadcast shape %s",
                        op_name(op), ops_shape_str(dst->ndim, dst->sizes, buf1, sizeof buf1),
                        ops_shape_str(nd, shape, buf2, sizeof buf2));
    it->noperands = 2;
    it->operands[0] = dst;
    it->operands[1] = (ops_tensor *)src;
    it->dtypes[0] = dst->dtype;
    it->dtypes[1] = src->dtype;
    it->common_dtype = src->dtype;
    it->result_dtype = dst->dtype;
    it->device = dst->storage->device;
    it->shape_ndim = nd;
    memcpy(it->shape, shape, (size_t)nd * sizeof(int64_t));
    it->numel = tensor_numel(dst);
    if (it->numel != 0 && fast_geometry(it, 0)) {
        fast_data(it, 0);
        return OPS_OK;
    }
    int64_t bst[OPS_ITER_MAX_OPERANDS][OPS_MAX_DIMS];
    int dims[OPS_MAX_DIMS];
    broadcast_strides(it, 0, false, bst[0]);
    broadcast_strides(it, 1, false, bst[1]);
    const int m = sort_dims(it, bst, 3u, false, dims);
    set_geometry(it, bst, dims, m, 0);
    return OPS_OK;
}

ops_status
ops_copy_values(const char *op, ops_tensor *dst, const ops_tensor *src)
{
    if (OPS_UNLIKELY(!on_cpu(dst) || !on_cpu(src))) {
        /* the device that is not the host moves the values (kernels/copy.h); its
         * stub entry is empty only in a build without its backend */
        const ops_device dev = on_cpu(dst) ? src->storage->device : dst->storage->device;
        copy_values_fn *const move = OPS_STUB_GET(copy_values, dev);
        if (move != NULL)
            return move(op_name(op), dst, src, false);
        char d1[32], d2[32];
        return ops_fail(OPS_ERR_DEVICE, "%s: copying from %s to %s needs the CUDA backend (this is a CPU build)",
                        op_name(op), ops_device_str(src->storage->device, d1, sizeof d1),
                        ops_device_str(dst->storage->device, d2, sizeof d2));
    }
    ops_iter it;
    ops_status st = ops_iter_build_copy(&it, op, dst, src);
    if (st == OPS_OK) {
        const ops_dtype ddt = it.dtypes[0], sdt = it.dtypes[1];
        OPS_ITER_LOOP(&it, data, strides, n, {
            ops_convert_run(ddt, data[0], strides[0], sdt, data[1], strides[1], n);
        });
    }
    ops_iter_release(&it);
    return st;
}

ops_status
ops_copy_prepare(const char *op, ops_tensor *self, const ops_tensor *src, ops_tensor **snapshot)
{
    *snapshot = NULL;
    ops_iter it;
    ops_status st = ops_iter_build_copy(&it, op, self, src);
    ops_iter_release(&it);
    if (st != OPS_OK)
        return st;
    if (out_overlaps_itself(self))
        return fail_internal_overlap(op);
    if (self->storage != src->storage || same_view(self, src) || !ops_tensor_may_overlap(self, src))
        return OPS_OK;
    /* src would change under the copy: read it from a snapshot instead */
    ops_tensor *tmp = ops_tensor_new(op, src->ndim, src->sizes, NULL, src->dtype, src->storage->device);
    if (tmp == NULL)
        return ops_last_status();
    if ((st = ops_copy_values(op, tmp, src)) != OPS_OK) {
        ops_tensor_release(tmp);
        return st;
    }
    *snapshot = tmp;
    return OPS_OK;
}

/* out against one input: no shared element, or the same view when that is allowed. */
static ops_status
check_out_overlap(const char *op, const char *written, const ops_tensor *out, const ops_tensor *in, const char *name,
                  int64_t elem, bool same_view_ok)
{
    if (in == NULL || in->storage != out->storage || !ops_tensor_may_overlap(in, out))
        return OPS_OK;
    if (same_view_ok && same_view(in, out))
        return OPS_OK;
    char el[32] = "";
    if (elem >= 0)
        snprintf(el, sizeof el, "[%lld]", (long long)elem);
    return ops_fail(OPS_ERR_VALUE,
                    "%s: unsupported operation: %s %s argument '%s'%s (some elements of the input tensor and "
                    "the written-to tensor refer to a single memory location). Please clone() the tensor "
                    "before performing the operation.",
                    op_name(op), written, same_view_ok ? "partially overlaps" : "overlaps", name, el);
}

ops_status
ops_check_out_args(const char *op, const char *written, const ops_tensor *out, int n, const ops_tensor *const *args,
                   const char *const *names, unsigned same_view_ok, const ops_tensor *dtype_of, const char *dtype_name)
{
    if (dtype_of != NULL && out->dtype != dtype_of->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected out= to have dtype %s (the dtype of argument '%s'), got %s",
                        op_name(op), ops_dtype_name(dtype_of->dtype), dtype_name, ops_dtype_name(out->dtype));
    for (int i = 0; i < n; i++) {
        ops_status st = check_out_overlap(op, written, out, args[i], names[i], -1, (same_view_ok >> i) & 1u);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

ops_status
ops_check_out_list(const char *op, const char *written, const ops_tensor *out, ops_tensor_list list, const char *name,
                   bool same_view_ok)
{
    for (int64_t i = 0; i < list.len; i++) {
        ops_status st = check_out_overlap(op, written, out, list.data[i], name, i, same_view_ok);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

ops_status
ops_write_out(const char *op, ops_tensor *r, ops_tensor *out)
{
    if (r == NULL)
        return ops_last_status();
    ops_status st = OPS_OK;
    const bool same = same_shape(out->ndim, out->sizes, r->ndim, r->sizes);
    if (!ops_can_cast(r->dtype, out->dtype))
        st = ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s",
                      op_name(op), ops_dtype_name(r->dtype), ops_dtype_name(out->dtype));
    else if (same && ops_tensor_has_internal_overlap(out))
        st = fail_internal_overlap(op);
    else if (!same)
        st = ops_tensor_resize_(op, out, r->ndim, r->sizes);
    if (st == OPS_OK)
        st = ops_copy_values(op, out, r);
    if (st == OPS_OK)
        ops_tensor_bump_version(out);
    ops_tensor_release(r);
    return st;
}

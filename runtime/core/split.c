/* The splitting views: split, split_with_sizes, chunk, unbind, tensor_split,
 * hsplit/vsplit/dsplit (CompositeExplicitAutograd kernels of
 * ops/native_functions.yaml, section "splitting").
 *
 * Every piece is a view of self (same storage, self's strides) returned in a
 * Tensor[] (ops_tensor_vec).  All of them reduce to one routine: cut dim into pieces
 * of the given lengths, each a view starting where the previous one ended.  Inputs
 * are validated before anything is allocated, and a failed allocation releases the
 * pieces made so far, so a failure returns {NULL, 0} and an error. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops_internal.h"

#if __has_include("ops_functions.h") && __has_include("ops_kernels.h")
#include "ops_kernels_core.h"
#include "ops_op_to.h"
#endif

/* Pieces of at most this many are listed in messages; longer lists end in "...". */
#define SPLIT_LIST_STR_LEN 256

static const char *
int_list_str(const int64_t *v, int64_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, cap, "[");
    for (int64_t i = 0; i < n && used + 24 < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%" PRId64, i ? ", " : "", v[i]);
    if (used + 5 < cap)
        snprintf(buf + used, cap - used, "%s]", used + 24 >= cap ? ", ..." : "");
    return buf;
}

/* An array of n int64 (at least one), or NULL with the error set: n comes from the
 * caller (sections, chunks) or a dim of a huge view, so its bytes may not fit. */
static int64_t *
int_array(const char *op, int64_t n, int64_t per_piece)
{
    size_t bytes;
    const bool too_large = ops_nbytes_overflow(n > 0 ? n : 1, (size_t)per_piece * sizeof(int64_t), &bytes);
    int64_t *a = too_large ? NULL : ops_host_malloc(bytes);
    if (a == NULL)
        ops_fail(OPS_ERR_OOM, "%s: %s: cannot list %" PRId64 " pieces", op,
                 too_large ? "too large to allocate" : "out of memory", n);
    return a;
}

/* Cuts dim of self into n pieces: piece i starts at starts[i] and has lengths[i]
 * elements along dim (both already in range).  keep_dim false drops dim (unbind). */
static ops_status
cut(const char *op, const ops_tensor *self, int64_t dim, int64_t n, const int64_t *starts,
    const int64_t *lengths, bool keep_dim, ops_tensor_vec *result)
{
    ops_tensor_vec v;
    ops_status st = ops_tensor_vec_init(op, &v, n);
    if (st != OPS_OK)
        return st;
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d == dim && !keep_dim)
            continue;
        sizes[nd] = self->sizes[d];
        strides[nd] = self->strides[d];
        nd++;
    }
    for (int64_t i = 0; i < n; i++) {
        if (keep_dim)
            sizes[dim] = lengths[i];
        int64_t offset;
        if (ops_mul_overflow_i64(starts[i], self->strides[dim], &offset) ||
            ops_add_overflow_i64(offset, self->offset, &offset))
            v.data[i] = ops_fail_null(OPS_ERR_VALUE,
                                      "%s: piece %" PRId64 " starts at %" PRId64 " of stride %" PRId64
                                      ", beyond what int64 can address",
                                      op, i, starts[i], self->strides[dim]);
        else
            v.data[i] = ops_tensor_new_view_op(op, self, nd, sizes, strides, offset);
        if (v.data[i] == NULL) {
            ops_tensor_vec_release(&v);
            return ops_last_status();
        }
    }
    *result = v;
    return OPS_OK;
}

/* Pieces of the given lengths, one after the other from the start of dim. */
static ops_status
cut_lengths(const char *op, const ops_tensor *self, int64_t dim, int64_t n, const int64_t *lengths,
            ops_tensor_vec *result)
{
    int64_t *starts = int_array(op, n, 1);
    if (starts == NULL)
        return ops_last_status();
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        starts[i] = at;
        at += lengths[i];
    }
    ops_status st = cut(op, self, dim, n, starts, lengths, true, result);
    ops_host_free(starts);
    return st;
}

/* Pieces of split_size elements, the last one shorter (PyTorch's split.Tensor). */
static ops_status
split_equal(const char *op, const ops_tensor *self, int64_t split_size, int64_t dim, ops_tensor_vec *result)
{
    const int64_t n = self->sizes[dim];
    const int64_t pieces = split_size > 0 ? ops_ceil_div_i64(n, split_size) : 1;
    const int64_t count = pieces > 0 ? pieces : 1;
    int64_t *lengths = int_array(op, count, 1);
    if (lengths == NULL)
        return ops_last_status();
    for (int64_t i = 0; i < count; i++)
        lengths[i] = split_size < n - i * split_size ? split_size : n - i * split_size;
    ops_status st = cut_lengths(op, self, dim, count, lengths, result);
    ops_host_free(lengths);
    return st;
}

static ops_status
need_dims(const char *op, const ops_tensor *self)
{
    if (self->ndim == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: %s expects at least a 1-dimensional tensor", op, op);
    return OPS_OK;
}

ops_status
split_impl(const ops_tensor *self, int64_t split_size, int64_t dim, ops_tensor_vec *result)
{
    const char *op = "split";
    ops_status st = need_dims(op, self);
    if (st != OPS_OK)
        return st;
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (split_size < 0)
        return ops_fail(OPS_ERR_VALUE, "split: split expects split_size be non-negative, but got split_size=%" PRId64,
                        split_size);
    const int64_t n = self->sizes[dim];
    if (split_size == 0 && n != 0)
        return ops_fail(OPS_ERR_VALUE,
                        "split: split_size can only be 0 if dimension size is 0, but got dimension size of %" PRId64,
                        n);
    return split_equal(op, self, split_size, dim, result);
}

static ops_status
with_sizes(const char *op, const ops_tensor *self, ops_int_list split_sizes, int64_t dim, ops_tensor_vec *result)
{
    char buf[SPLIT_LIST_STR_LEN];
    ops_status st = need_dims(op, self);
    if (st != OPS_OK)
        return st;
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    const int64_t n = self->sizes[dim];
    int64_t total = 0;
    bool overflow = false;
    for (int64_t i = 0; i < split_sizes.len; i++) {
        if (split_sizes.data[i] < 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: split_with_sizes expects split_sizes have only non-negative entries, but got "
                            "split_sizes=%s",
                            op, int_list_str(split_sizes.data, split_sizes.len, buf, sizeof buf));
        overflow |= ops_add_overflow_i64(total, split_sizes.data[i], &total);
    }
    if (overflow || total != n)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: split_with_sizes expects split_sizes to sum exactly to %" PRId64
                        " (input tensor's size at dimension %" PRId64 "), but got split_sizes=%s",
                        op, n, dim, int_list_str(split_sizes.data, split_sizes.len, buf, sizeof buf));
    return cut_lengths(op, self, dim, split_sizes.len, split_sizes.data, result);
}

ops_status
split_with_sizes_impl(const ops_tensor *self, ops_int_list split_sizes, int64_t dim, ops_tensor_vec *result)
{
    return with_sizes("split_with_sizes", self, split_sizes, dim, result);
}

ops_status
split_sizes_impl(const ops_tensor *self, ops_int_list split_size, int64_t dim, ops_tensor_vec *result)
{
    return with_sizes("split", self, split_size, dim, result);
}

ops_status
chunk_impl(const ops_tensor *self, int64_t chunks, int64_t dim, ops_tensor_vec *result)
{
    const char *op = "chunk";
    if (self->ndim == 0)
        return ops_fail(OPS_ERR_VALUE, "chunk: chunk expects at least a 1-dimensional tensor");
    if (chunks <= 0)
        return ops_fail(OPS_ERR_VALUE, "chunk: chunk expects `chunks` to be greater than 0, got: %" PRId64, chunks);
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    const int64_t n = self->sizes[dim];
    const int64_t split_size = ops_ceil_div_i64(n, chunks);
    if (split_size == 0 && n == 0) {
        /* PyTorch: `chunks` empty pieces, so that chunk(empty, k) has k results. */
        int64_t *zeros = int_array(op, chunks, 1);
        if (zeros == NULL)
            return ops_last_status();
        memset(zeros, 0, (size_t)chunks * sizeof *zeros);
        ops_status st = cut_lengths(op, self, dim, chunks, zeros, result);
        ops_host_free(zeros);
        return st;
    }
    return split_equal(op, self, split_size, dim, result);
}

ops_status
unbind_impl(const ops_tensor *self, int64_t dim, ops_tensor_vec *result)
{
    const char *op = "unbind";
    if (self->ndim == 0)
        return ops_fail(OPS_ERR_INDEX, "unbind: Dimension specified as %" PRId64 " but tensor has no dimensions",
                        dim);
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    const int64_t n = self->sizes[dim];
    int64_t *starts = int_array(op, n, 1);
    if (starts == NULL)
        return ops_last_status();
    for (int64_t i = 0; i < n; i++)
        starts[i] = i;
    ops_status st = cut(op, self, dim, n, starts, NULL, false, result);
    ops_host_free(starts);
    return st;
}

/* n pieces as equal as possible: the first size % n get one element more. */
static ops_status
sections(const char *op, const ops_tensor *self, int64_t n, int64_t dim, ops_tensor_vec *result)
{
    const int64_t size = self->sizes[dim];
    int64_t *lengths = int_array(op, n, 1);
    if (lengths == NULL)
        return ops_last_status();
    for (int64_t i = 0; i < n; i++)
        lengths[i] = size / n + (i < size % n ? 1 : 0);
    ops_status st = cut_lengths(op, self, dim, n, lengths, result);
    ops_host_free(lengths);
    return st;
}

ops_status
tensor_split_sections_impl(const ops_tensor *self, int64_t sections_, int64_t dim, ops_tensor_vec *result)
{
    const char *op = "tensor_split";
    if (self->ndim == 0)
        return ops_fail(OPS_ERR_VALUE, "tensor_split: tensor_split expected at least a 1-dimensional tensor, but "
                        "got a tensor with 0 dims");
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    if (sections_ <= 0)
        return ops_fail(OPS_ERR_VALUE, "tensor_split: number of sections must be larger than 0, got %" PRId64,
                        sections_);
    return sections(op, self, sections_, dim, result);
}

ops_status
tensor_split_indices_impl(const ops_tensor *self, ops_int_list indices, int64_t dim, ops_tensor_vec *result)
{
    const char *op = "tensor_split";
    if (self->ndim == 0)
        return ops_fail(OPS_ERR_VALUE, "tensor_split: tensor_split expected at least a 1-dimensional tensor, but "
                        "got a tensor with 0 dims");
    if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
        return ops_last_status();
    const int64_t size = self->sizes[dim];
    const int64_t n = indices.len + 1;
    int64_t *buf = int_array(op, n, 2);
    if (buf == NULL)
        return ops_last_status();
    int64_t *starts = buf, *lengths = buf + n;
    /* Piece i is self[..., b(i-1):b(i)] with Python slice bounds: negative indices
     * count from the end, both ends clamp to [0, size], and an end before its start
     * gives an empty piece. */
    int64_t prev = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t end = i < indices.len ? indices.data[i] : size;
        if (end < 0)
            end += size;
        end = end < 0 ? 0 : (end > size ? size : end);
        const int64_t start = prev;
        starts[i] = start;
        lengths[i] = end > start ? end - start : 0;
        prev = end;
    }
    ops_status st = cut(op, self, dim, n, starts, lengths, true, result);
    ops_host_free(buf);
    return st;
}

/* tensor_split with an int64 tensor: 0-dim, a number of sections; 1-D, the indices
 * (PyTorch's tensor_split.tensor_indices_or_sections, with its checks).  PyTorch 1.13
 * wants that tensor on the CPU; libops reads it from any device (a CUDA one is copied
 * to the host first, as .tolist() would), so a model moved to the GPU whole keeps
 * working. */
ops_status
tensor_split_tensor_impl(const ops_tensor *self, const ops_tensor *tios, int64_t dim, ops_tensor_vec *result)
{
    const char *op = "tensor_split";
    if (tios->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: tensor_split expected tensor_indices_or_sections to have dtype of long "
                        "(int64), but got %s", op, ops_dtype_name(tios->dtype));
    if (tios->ndim > 1)
        return ops_fail(OPS_ERR_VALUE, "%s: tensor_split expected tensor_indices_or_sections to be a "
                        "zero-dimensional or one-dimensional tensor, but got a tensor with %d dims", op, tios->ndim);
    if (tios->storage->device.type != OPS_CPU) {
        ops_tensor *host = ops_to_device(tios, OPS_DEVICE_CPU, OPS_INT64, false, false, OPS_MEMORY_FORMAT_NONE);
        if (host == NULL)
            return ops_last_status();
        const ops_status st = tensor_split_tensor_impl(self, host, dim, result);
        ops_tensor_release(host);
        return st;
    }
    const int64_t *data = ops_tensor_data_ptr(tios);
    if (tios->ndim == 0)
        return tensor_split_sections_impl(self, data[0], dim, result);
    /* the indices may be a strided view: gather them */
    const int64_t n = tios->sizes[0];
    int64_t *ix = int_array(op, n, 1);
    if (ix == NULL)
        return ops_last_status();
    for (int64_t i = 0; i < n; i++)
        ix[i] = data[i * tios->strides[0]];
    ops_status st = tensor_split_indices_impl(self, (ops_int_list){ix, n}, dim, result);
    ops_host_free(ix);
    return st;
}

/* hsplit/vsplit/dsplit with a list of indices: tensor_split along their dim, after the
 * dimension check (no divisibility to check). */
static ops_status
split_along_indices(const char *op, int min_dims, int64_t dim, const ops_tensor *self, ops_int_list indices,
                    ops_tensor_vec *result)
{
    if (self->ndim < min_dims)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: torch.%s requires a tensor with at least %d dimension, but got a tensor with %d "
                        "dimensions!",
                        op, op, min_dims, self->ndim);
    return tensor_split_indices_impl(self, indices, dim, result);
}

ops_status
hsplit_array_impl(const ops_tensor *self, ops_int_list indices, ops_tensor_vec *result)
{
    return split_along_indices("hsplit", 1, self->ndim == 1 ? 0 : 1, self, indices, result);
}

ops_status
vsplit_array_impl(const ops_tensor *self, ops_int_list indices, ops_tensor_vec *result)
{
    return split_along_indices("vsplit", 2, 0, self, indices, result);
}

ops_status
dsplit_array_impl(const ops_tensor *self, ops_int_list indices, ops_tensor_vec *result)
{
    return split_along_indices("dsplit", 3, 2, self, indices, result);
}

/* hsplit/vsplit/dsplit with a number of sections: an error unless it divides the dim. */
static ops_status
split_along(const char *op, int min_dims, int64_t dim, const ops_tensor *self, int64_t n,
            ops_tensor_vec *result)
{
    if (self->ndim < min_dims)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: torch.%s requires a tensor with at least %d dimension%s, but got a tensor with %d "
                        "dimensions!",
                        op, op, min_dims, min_dims == 1 ? "" : "s", self->ndim);
    if (n <= 0 || self->sizes[dim] % n != 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: torch.%s attempted to split along dimension %" PRId64 ", but the size of the dimension %"
                        PRId64 " is not divisible by the split_size %" PRId64 "!",
                        op, op, dim, self->sizes[dim], n);
    return sections(op, self, n, dim, result);
}

ops_status
hsplit_int_impl(const ops_tensor *self, int64_t sections_, ops_tensor_vec *result)
{
    return split_along("hsplit", 1, self->ndim == 1 ? 0 : 1, self, sections_, result);
}

ops_status
vsplit_int_impl(const ops_tensor *self, int64_t sections_, ops_tensor_vec *result)
{
    return split_along("vsplit", 2, 0, self, sections_, result);
}

ops_status
dsplit_int_impl(const ops_tensor *self, int64_t sections_, ops_tensor_vec *result)
{
    return split_along("dsplit", 3, 2, self, sections_, result);
}

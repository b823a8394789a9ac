/* The CUDA loops of the shape ops (the driver, shared with the CPU, is
 * kernels/shape.c; the stubs are declared in kernels/shape.h).
 *
 * The driver does the shape checks and messages, the result's dtype and layout, and
 * every move of elements as views copied by ops_copy_values, which on CUDA is the
 * runtime's strided copy kernel (one thread per output element through the offset
 * calculator, dtype conversion included).  Two things do not fit that: cat and stack
 * of many small inputs would cost a launch each, so shape_cat_pieces_cuda copies every
 * input of the result's dtype in one launch (blockIdx.y picks the input); and
 * tril/triu zero a triangle in place. */
#include "cuda_common.h"
#include "kernels/shape.h"
#include "strided_index.h"

namespace {

using namespace ops_strided;

/* One input of a concatenation: where it starts along the cat dimension. */
struct cat_piece {
    strided_arg src;
    int64_t numel;
    int64_t size_dim; /* its size along the cat dimension */
    int64_t at;       /* its first index along the cat dimension of out */
};

/* out is contiguous: [outer, out_dim, inner].  Element e of piece p (row-major in its
 * own shape) is (o, j, k) and goes to out's (o, at + j, k). */
template <typename T>
__global__ void
cat_kernel(const cat_piece *pieces, int64_t npieces, T *out, int64_t inner, int64_t out_dim)
{
    for (int64_t p = blockIdx.y; p < npieces; p += gridDim.y) {
        const cat_piece &pc = pieces[p];
        const int64_t slab = pc.size_dim * inner;
        for (int64_t e = global_thread(); e < pc.numel; e += grid_threads()) {
            const int64_t o = e / slab, r = e - o * slab;
            out[o * out_dim * inner + pc.at * inner + r] = *(const T *)element(pc.src, e);
        }
    }
}

/* Zero the triangle of every matrix of t (rows x cols in its last two dimensions). */
__global__ void
zero_triangle_kernel(strided_arg t, int64_t n, int64_t rows, int64_t cols, int64_t diagonal, bool lower)
{
    for (int64_t e = global_thread(); e < n; e += grid_threads()) {
        const int64_t j = e % cols, i = (e / cols) % rows;
        if (lower ? j - i > diagonal : j - i < diagonal) {
            char *p = element(t, e);
            for (size_t b = 0; b < t.itemsize; b++)
                p[b] = 0;
        }
    }
}

int
device_of(const ops_tensor *t)
{
    return t->storage->device.index;
}

template <typename T>
ops_status
launch_cat(const char *op, const cat_piece *dev_pieces, int64_t np, int64_t max_numel, ops_tensor *out,
           int64_t inner, int64_t out_dim, cudaStream_t stream)
{
    const dim3 grid(grid_for(max_numel), (unsigned)(np < 65535 ? np : 65535));
    OPS_LAUNCH(cat_kernel<T>, grid, kBlock, 0, stream, dev_pieces, np, (T *)ops_tensor_data_ptr(out), inner, out_dim);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

} // namespace

OPS_REGISTER_STUB(shape_cat_pieces, CUDA, shape_cat_pieces_cuda);
OPS_REGISTER_STUB(shape_zero_triangle, CUDA, shape_zero_triangle_cuda);

ops_status
shape_cat_pieces_cuda(const char *op, ops_tensor *out, int64_t n, const ops_tensor *const *pieces, int64_t dim)
{
    const int dev = device_of(out);
    ops_cuda_device_guard g(dev);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (ops_tensor_numel(out) == 0)
        return OPS_OK;
    /* out has elements, so an empty piece is a legacy [0] tensor or 0 long at dim:
     * it adds nothing */
    cat_piece *host = (cat_piece *)ops_host_malloc_array(n > 0 ? n : 1, sizeof *host);
    if (host == nullptr)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
    int64_t np = 0, at = 0, max_numel = 0;
    for (int64_t i = 0; i < n; i++) {
        const ops_tensor *t = pieces[i];
        const int64_t numel = ops_tensor_numel(t);
        if (numel == 0)
            continue;
        if (t->dtype == out->dtype) {
            host[np].src = strided_of(t);
            host[np].numel = numel;
            host[np].size_dim = t->sizes[dim];
            host[np].at = at;
            max_numel = numel > max_numel ? numel : max_numel;
            np++;
        }
        at += t->sizes[dim];
    }
    int64_t inner = 1;
    for (int d = (int)dim + 1; d < out->ndim; d++)
        inner *= out->sizes[d];
    ops_status st = OPS_OK;
    ops_tensor *table = nullptr;
    if (np > 0) {
        const int64_t bytes = np * (int64_t)sizeof(cat_piece);
        table = ops_tensor_new(op, 1, &bytes, nullptr, OPS_UINT8, OPS_DEVICE_CUDA(dev));
        if (table == nullptr)
            st = ops_last_status();
    }
    if (st == OPS_OK && np > 0) {
        /* from pageable memory: returns once the bytes are staged, so host may go */
        const cudaError_t err =
            cudaMemcpyAsync(ops_tensor_data_ptr(table), host, (size_t)np * sizeof *host, cudaMemcpyHostToDevice,
                            stream);
        if (err != cudaSuccess)
            st = ops_cuda_fail(op, "copying the cat table to the device", err);
    }
    if (st == OPS_OK && np > 0) {
        const cat_piece *dp = (const cat_piece *)ops_tensor_data_ptr(table);
        const int64_t od = out->sizes[dim];
        switch (ops_dtype_size(out->dtype)) {
        case 1:
            st = launch_cat<uint8_t>(op, dp, np, max_numel, out, inner, od, stream);
            break;
        case 2:
            st = launch_cat<uint16_t>(op, dp, np, max_numel, out, inner, od, stream);
            break;
        case 4:
            st = launch_cat<uint32_t>(op, dp, np, max_numel, out, inner, od, stream);
            break;
        default:
            st = launch_cat<uint64_t>(op, dp, np, max_numel, out, inner, od, stream);
            break;
        }
    }
    ops_tensor_release(table); /* stream-ordered: the kernel still reads it first */
    ops_host_free(host);
    /* the pieces of another dtype: one converting copy each */
    return st == OPS_OK ? shape_copy_pieces(op, out, n, pieces, dim, true) : st;
}

ops_status
shape_zero_triangle_cuda(const char *op, ops_tensor *t, int64_t diagonal, bool lower)
{
    const int dev = device_of(t);
    ops_cuda_device_guard g(dev);
    const int64_t n = ops_tensor_numel(t);
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(zero_triangle_kernel, grid_for(n), kBlock, 0, ops_cuda_current_stream(dev), strided_of(t), n,
               t->sizes[t->ndim - 2], t->sizes[t->ndim - 1], diagonal, lower);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* CUDA helpers shared by the NN families' kernels (norm.cu, pool.cu, nn.cu, loss.cu):
 * grid-stride launch sizes, a block-wide sum, temporary device buffers from the
 * caching allocator, and host<->device transfers of small arrays (statistics, tables,
 * checking kernels' results) with CUDA errors turned into libops errors. */
#ifndef OPS_NN_CUDA_CUH
#define OPS_NN_CUDA_CUH

#include "cuda_common.h"
#include "kernels/nn_common.h"
#include "ops_cuda_backend.h"

/* Threads per block of every NN kernel; a power of two (nn_block_sum halves it). */
#define NN_BLOCK 256
/* Blocks of a grid-stride launch: enough to fill the device, never past the grid
 * limit (the kernels loop over the rest). */
#define NN_MAX_GRID 65535

static inline unsigned
nn_grid(int64_t n)
{
    const int64_t g = n > 0 ? (n + NN_BLOCK - 1) / NN_BLOCK : 1;
    return (unsigned)(g < NN_MAX_GRID ? g : NN_MAX_GRID);
}

/* i over [0, n) split across the whole grid, in 64-bit (buffers may pass 2^31). */
#define NN_GRID_STRIDE_LOOP(i, n)                                                                                      \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* The sum of v over the block (every thread gets it); sh holds blockDim.x values and
 * blockDim.x is a power of two.  Called by every thread of the block. */
template <typename T>
__device__ T
nn_block_sum(T v, T *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const T r = sh[0];
    __syncthreads(); /* sh is reused by the caller's next sum */
    return r;
}

/* A temporary device buffer of n elements of dtype dt on cuda:dev, from the caching
 * allocator (a tensor, released with the scope). */
struct nn_dev_buf {
    ops_tensor *t;
    nn_dev_buf() : t(NULL) {}
    ~nn_dev_buf() { ops_tensor_release(t); }
    nn_dev_buf(const nn_dev_buf &) = delete;
    nn_dev_buf &operator=(const nn_dev_buf &) = delete;
    /* OPS_OK or the allocator's error. */
    ops_status alloc(const char *op, int dev, ops_dtype dt, int64_t n)
    {
        t = ops_tensor_new(op, 1, &n, NULL, dt, OPS_DEVICE_CUDA(dev));
        return t != NULL ? OPS_OK : ops_last_status();
    }
    template <typename T> T *ptr() const { return (T *)ops_tensor_data_ptr(t); }
};

/* Host -> device and device -> host copies of bytes, ordered on the device's stream
 * (the legacy default stream: cudaMemcpy waits for the work queued before it). */
static inline ops_status
nn_upload(const char *op, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return OPS_OK;
    const cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemcpy (host to device)", e);
}

static inline ops_status
nn_download(const char *op, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return OPS_OK;
    const cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "cudaMemcpy (device to host)", e);
}

#define NN_TRY(expr)                                                                                                   \
    do {                                                                                                               \
        const ops_status nn_try_st_ = (expr);                                                                          \
        if (nn_try_st_ != OPS_OK)                                                                                      \
            return nn_try_st_;                                                                                         \
    } while (0)

#endif /* OPS_NN_CUDA_CUH */

// cuBLAS on the emulated device, computed by OpenBLAS.  Column-major throughout, as
// cuBLAS documents it; parameters are checked as cuBLAS checks them before anything
// runs (CUBLAS_STATUS_INVALID_VALUE); beta == 0 never reads C or y.  float16 and
// bfloat16 operands of the Ex calls are widened to float with ops_scalar_math.h and
// the results rounded back.
#include <cblas.h>

#include "emu_internal.h"
#include "ops_scalar_math.h"

struct ops_emu_cublas {
    cudaStream_t stream;
    cublasMath_t math;
    cublasPointerMode_t pointer_mode;
    int device;
};

namespace {

using namespace ops_emu;

bool
valid_op(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

CBLAS_TRANSPOSE
to_cblas(cublasOperation_t op)
{
    // Real types: the conjugate transpose is the transpose.
    return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

// cuBLAS's checks for one gemm of op(A) m x k, op(B) k x n, C m x n.
cublasStatus_t
check_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb,
           int ldc, int batch)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0 || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    const int rows_a = ta == CUBLAS_OP_N ? m : k, rows_b = tb == CUBLAS_OP_N ? k : n;
    if (lda < std::max(1, rows_a) || ldb < std::max(1, rows_b) || ldc < std::max(1, m))
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

// C (m x n, ldc) = 0 where beta == 0, so OpenBLAS's own beta handling never meets
// whatever C held (NaN included), as cuBLAS promises.
template <typename T>
void
zero_matrix(T *c, int m, int n, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            c[(size_t)j * ldc + i] = T(0);
}

void
gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const float *a, int lda,
     const float *b, int ldb, float beta, float *c, int ldc)
{
    if (beta == 0.0f)
        zero_matrix(c, m, n, ldc);
    cblas_sgemm(CblasColMajor, to_cblas(ta), to_cblas(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void
gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double alpha, const double *a, int lda,
     const double *b, int ldb, double beta, double *c, int ldc)
{
    if (beta == 0.0)
        zero_matrix(c, m, n, ldc);
    cblas_dgemm(CblasColMajor, to_cblas(ta), to_cblas(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
cublasStatus_t
gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T *alpha,
             const T *a, int lda, long long sa, const T *b, int ldb, long long sb, const T *beta, T *c, int ldc,
             long long sc, int batch)
{
    if (cublasStatus_t st = check_gemm(h, ta, tb, m, n, k, lda, ldb, ldc, batch))
        return st;
    if (m == 0 || n == 0 || batch == 0)
        return CUBLAS_STATUS_SUCCESS;
    std::lock_guard<std::mutex> lock(device_lock());
    memory_window open; // alpha and beta may be device pointers (CUBLAS_POINTER_MODE_DEVICE)
    const T al = *alpha, be = *beta;
    for (int i = 0; i < batch; i++)
        gemm(ta, tb, m, n, k, al, a + i * sa, lda, b + i * sb, ldb, be, c + i * sc, ldc);
    return CUBLAS_STATUS_SUCCESS;
}

// ---- the Ex calls: operands of any supported type through float or double ----

bool
is_supported_type(cudaDataType_t t)
{
    return t == CUDA_R_16F || t == CUDA_R_16BF || t == CUDA_R_32F || t == CUDA_R_64F;
}

size_t
type_size(cudaDataType_t t)
{
    return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2;
}

double
load(const void *p, size_t i, cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_16F: return ops_half_to_float(static_cast<const ops_half *>(p)[i]);
    case CUDA_R_16BF: return ops_bfloat16_to_float(static_cast<const ops_bfloat16 *>(p)[i]);
    case CUDA_R_32F: return static_cast<const float *>(p)[i];
    default: return static_cast<const double *>(p)[i];
    }
}

void
store(void *p, size_t i, cudaDataType_t t, double v)
{
    switch (t) {
    case CUDA_R_16F: static_cast<ops_half *>(p)[i] = ops_float_to_half((float)v); break;
    case CUDA_R_16BF: static_cast<ops_bfloat16 *>(p)[i] = ops_float_to_bfloat16((float)v); break;
    case CUDA_R_32F: static_cast<float *>(p)[i] = (float)v; break;
    default: static_cast<double *>(p)[i] = v; break;
    }
}

// A rows x cols column-major block (leading dimension ld) of type t, widened into a
// dense W array (leading dimension rows).
template <typename W>
std::vector<W>
widen(const void *p, cudaDataType_t t, int rows, int cols, int ld)
{
    std::vector<W> out((size_t)rows * cols);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
            out[(size_t)j * rows + i] = (W)load(p, (size_t)j * ld + i, t);
    return out;
}

// The type combinations cuBLAS's cublasGemmEx table accepts for real types, and
// the scalar type of alpha/beta for each compute type.
bool
supported_ex(cudaDataType_t at, cudaDataType_t bt, cudaDataType_t ct, cublasComputeType_t compute,
             bool *wide /* compute in double */, cudaDataType_t *scalar)
{
    if (!is_supported_type(at) || at != bt || !is_supported_type(ct))
        return false;
    switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
        *wide = false;
        *scalar = CUDA_R_16F;
        return at == CUDA_R_16F && ct == CUDA_R_16F;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        *wide = false;
        *scalar = CUDA_R_32F;
        if (at == CUDA_R_32F)
            return ct == CUDA_R_32F;
        return at != CUDA_R_64F && (ct == at || ct == CUDA_R_32F);
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
        *wide = true;
        *scalar = CUDA_R_64F;
        return at == CUDA_R_64F && ct == CUDA_R_64F;
    }
    return false;
}

template <typename W>
void
gemm_ex_one(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, W alpha, const void *a,
            cudaDataType_t at, int lda, const void *b, int ldb, W beta, void *c, cudaDataType_t ct, int ldc)
{
    const int ra = ta == CUBLAS_OP_N ? m : k, ca = ta == CUBLAS_OP_N ? k : m;
    const int rb = tb == CUBLAS_OP_N ? k : n, cb = tb == CUBLAS_OP_N ? n : k;
    std::vector<W> wa = widen<W>(a, at, ra, ca, lda), wb = widen<W>(b, at, rb, cb, ldb);
    std::vector<W> wc = beta == W(0) ? std::vector<W>((size_t)m * n, W(0)) : widen<W>(c, ct, m, n, ldc);
    gemm(ta, tb, m, n, k, alpha, wa.data(), std::max(1, ra), wb.data(), std::max(1, rb), beta, wc.data(),
         std::max(1, m));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            store(c, (size_t)j * ldc + i, ct, wc[(size_t)j * m + i]);
}

cublasStatus_t
gemm_ex(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
        const void *a, cudaDataType_t at, int lda, long long sa, const void *b, cudaDataType_t bt, int ldb,
        long long sb, const void *beta, void *c, cudaDataType_t ct, int ldc, long long sc, int batch,
        cublasComputeType_t compute)
{
    if (cublasStatus_t st = check_gemm(h, ta, tb, m, n, k, lda, ldb, ldc, batch))
        return st;
    bool wide = false;
    cudaDataType_t scalar = CUDA_R_32F;
    if (!supported_ex(at, bt, ct, compute, &wide, &scalar))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (m == 0 || n == 0 || batch == 0)
        return CUBLAS_STATUS_SUCCESS;
    std::lock_guard<std::mutex> lock(device_lock());
    memory_window open;
    const double al = load(alpha, 0, scalar), be = load(beta, 0, scalar);
    const size_t ea = type_size(at), ec = type_size(ct);
    for (int i = 0; i < batch; i++) {
        const void *ai = static_cast<const char *>(a) + i * sa * (long long)ea;
        const void *bi = static_cast<const char *>(b) + i * sb * (long long)ea;
        void *ci = static_cast<char *>(c) + i * sc * (long long)ec;
        if (wide)
            gemm_ex_one<double>(ta, tb, m, n, k, al, ai, at, lda, bi, ldb, be, ci, ct, ldc);
        else
            gemm_ex_one<float>(ta, tb, m, n, k, (float)al, ai, at, lda, bi, ldb, (float)be, ci, ct, ldc);
    }
    return CUBLAS_STATUS_SUCCESS;
}

// ---- gemv and dot ----

template <typename T>
cublasStatus_t
gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, const T *alpha, const T *a, int lda, const T *x,
     int incx, const T *beta, T *y, int incy)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!valid_op(trans) || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    std::lock_guard<std::mutex> lock(device_lock());
    memory_window open;
    const T al = *alpha, be = *beta;
    const int ylen = trans == CUBLAS_OP_N ? m : n;
    if (be == T(0)) // a negative increment walks y from its far end, as BLAS does
        for (int i = 0; i < ylen; i++)
            y[(long long)(incy > 0 ? i : ylen - 1 - i) * (incy > 0 ? incy : -incy)] = T(0);
    if constexpr (std::is_same<T, float>::value)
        cblas_sgemv(CblasColMajor, to_cblas(trans), m, n, al, a, lda, x, incx, be, y, incy);
    else
        cblas_dgemv(CblasColMajor, to_cblas(trans), m, n, al, a, lda, x, incx, be, y, incy);
    return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t
dot(cublasHandle_t h, int n, const T *x, int incx, const T *y, int incy, T *result)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!result)
        return CUBLAS_STATUS_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(device_lock());
    memory_window open; // result may be device memory (CUBLAS_POINTER_MODE_DEVICE)
    if (n <= 0) {
        *result = T(0);
        return CUBLAS_STATUS_SUCCESS;
    }
    if constexpr (std::is_same<T, float>::value)
        *result = cblas_sdot(n, x, incx, y, incy);
    else
        *result = cblas_ddot(n, x, incx, y, incy);
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C" {

cublasStatus_t
cublasCreate(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    *handle = new ops_emu_cublas{nullptr, CUBLAS_DEFAULT_MATH, CUBLAS_POINTER_MODE_HOST, dev};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasDestroy(cublasHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

#define OPS_EMU_HANDLE_SETTER_(set, get, T, field)                                                                  \
    cublasStatus_t set(cublasHandle_t h, T v)                                                                       \
    {                                                                                                               \
        if (!h)                                                                                                     \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                                                   \
        h->field = v;                                                                                               \
        return CUBLAS_STATUS_SUCCESS;                                                                               \
    }                                                                                                               \
    cublasStatus_t get(cublasHandle_t h, T *v)                                                                      \
    {                                                                                                               \
        if (!h)                                                                                                     \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                                                   \
        if (!v)                                                                                                     \
            return CUBLAS_STATUS_INVALID_VALUE;                                                                     \
        *v = h->field;                                                                                              \
        return CUBLAS_STATUS_SUCCESS;                                                                               \
    }
OPS_EMU_HANDLE_SETTER_(cublasSetStream, cublasGetStream, cudaStream_t, stream)
OPS_EMU_HANDLE_SETTER_(cublasSetMathMode, cublasGetMathMode, cublasMath_t, math)
OPS_EMU_HANDLE_SETTER_(cublasSetPointerMode, cublasGetPointerMode, cublasPointerMode_t, pointer_mode)
#undef OPS_EMU_HANDLE_SETTER_

cublasStatus_t
cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes)
{
    (void)workspace;
    (void)bytes;
    return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t
cublasGetVersion(cublasHandle_t handle, int *version)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = 130000;
    return CUBLAS_STATUS_SUCCESS;
}

const char *
cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
#define OPS_EMU_NAME_(s) \
    case s:              \
        return #s;
        OPS_EMU_NAME_(CUBLAS_STATUS_SUCCESS)
        OPS_EMU_NAME_(CUBLAS_STATUS_NOT_INITIALIZED)
        OPS_EMU_NAME_(CUBLAS_STATUS_ALLOC_FAILED)
        OPS_EMU_NAME_(CUBLAS_STATUS_INVALID_VALUE)
        OPS_EMU_NAME_(CUBLAS_STATUS_ARCH_MISMATCH)
        OPS_EMU_NAME_(CUBLAS_STATUS_MAPPING_ERROR)
        OPS_EMU_NAME_(CUBLAS_STATUS_EXECUTION_FAILED)
        OPS_EMU_NAME_(CUBLAS_STATUS_INTERNAL_ERROR)
        OPS_EMU_NAME_(CUBLAS_STATUS_NOT_SUPPORTED)
        OPS_EMU_NAME_(CUBLAS_STATUS_LICENSE_ERROR)
#undef OPS_EMU_NAME_
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char *
cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "licensing error";
    }
    return "unknown error";
}

cublasStatus_t
cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
            const float *a, int lda, const float *b, int ldb, const float *beta, float *c, int ldc)
{
    return gemm_batched(h, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

cublasStatus_t
cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
            const double *alpha, const double *a, int lda, const double *b, int ldb, const double *beta, double *c,
            int ldc)
{
    return gemm_batched(h, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

cublasStatus_t
cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                          const float *alpha, const float *a, int lda, long long sa, const float *b, int ldb,
                          long long sb, const float *beta, float *c, int ldc, long long sc, int batch)
{
    return gemm_batched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}

cublasStatus_t
cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                          const double *alpha, const double *a, int lda, long long sa, const double *b, int ldb,
                          long long sb, const double *beta, double *c, int ldc, long long sc, int batch)
{
    return gemm_batched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}

cublasStatus_t
cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
             const void *a, cudaDataType_t at, int lda, const void *b, cudaDataType_t bt, int ldb, const void *beta,
             void *c, cudaDataType_t ct, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm_ex(h, ta, tb, m, n, k, alpha, a, at, lda, 0, b, bt, ldb, 0, beta, c, ct, ldc, 0, 1, compute);
}

cublasStatus_t
cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const void *alpha, const void *a, cudaDataType_t at, int lda, long long sa,
                           const void *b, cudaDataType_t bt, int ldb, long long sb, const void *beta, void *c,
                           cudaDataType_t ct, int ldc, long long sc, int batch, cublasComputeType_t compute,
                           cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm_ex(h, ta, tb, m, n, k, alpha, a, at, lda, sa, b, bt, ldb, sb, beta, c, ct, ldc, sc, batch,
                   compute);
}

cublasStatus_t
cublasSgemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, const float *alpha, const float *a, int lda,
            const float *x, int incx, const float *beta, float *y, int incy)
{
    return gemv(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

cublasStatus_t
cublasDgemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, const double *alpha, const double *a,
            int lda, const double *x, int incx, const double *beta, double *y, int incy)
{
    return gemv(h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

cublasStatus_t
cublasSdot(cublasHandle_t h, int n, const float *x, int incx, const float *y, int incy, float *result)
{
    return dot(h, n, x, incx, y, incy, result);
}

cublasStatus_t
cublasDdot(cublasHandle_t h, int n, const double *x, int incx, const double *y, int incy, double *result)
{
    return dot(h, n, x, incx, y, incy, result);
}

} // extern "C"

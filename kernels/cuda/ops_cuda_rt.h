/* The one include for the CUDA runtime and cuBLAS in kernels/cuda/.
 *
 * Under nvcc this is <cuda_runtime.h> and <cublas_v2.h> plus the launch macros.
 * With OPS_CUDA_EMULATION (meson -Dcuda-emulation=true) the same .cu sources are
 * compiled as C++ by the host compiler against kernels/cuda/emu/: an emulated device
 * whose runtime API, kernel launches (threads as cooperative fibers), warp primitives
 * and cuBLAS (over OpenBLAS) follow CUDA's semantics, so the kernels' logic runs in
 * `make check` on machines without a GPU (docs/cuda.md "Emulation").
 *
 * Rules for kernel code, so that both compile it:
 *  - launch with OPS_LAUNCH(kernel, grid, block, shared_bytes, stream, args...) or,
 *    when the kernel uses __syncthreads or a warp primitive (__shfl_*_sync,
 *    __ballot_sync, __syncwarp, ...), OPS_LAUNCH_COOP(...) (same arguments);
 *    then OPS_CUDA_CHECK_LAUNCH(op) (cuda_common.h);
 *  - dynamic shared memory: OPS_SHARED_DYNAMIC(T, name); static shared memory as
 *    `__shared__ T name[N];` at block scope inside the kernel, never initialized;
 *  - no cuda_fp16.h / cuda_bf16.h types in kernels (ops_half / ops_bfloat16 from
 *    ops_scalar_math.h, computed in float), no CUB, Thrust, cooperative_groups,
 *    textures or inline PTX;
 *  - functors or __host__ __device__ lambdas (nvcc runs with --extended-lambda).
 */
#ifndef OPS_CUDA_RT_H
#define OPS_CUDA_RT_H

#ifdef OPS_CUDA_EMULATION
#include "emu/ops_cuda_emu.h"
#else
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define OPS_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                        \
    kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#define OPS_LAUNCH_COOP(kernel, grid, block, shared_bytes, stream, ...)                   \
    kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#define OPS_SHARED_DYNAMIC(T, name) extern __shared__ T name[]
#endif

#endif /* OPS_CUDA_RT_H */

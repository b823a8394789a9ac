/* einsum (CUDA): the CPU's composite (kernels/cpu/einsum.c) over views, sum and bmm,
 * which dispatch to their own CUDA kernels; only the entry point is per device. */
#include "cuda_common.h"
#include "ops_kernels_einsum.h"

#include "kernels/linalg_common.h"

ops_tensor *
einsum_cuda(const char *equation, ops_tensor_list tensors, const ops_int_list *path)
{
    return ops_einsum_composite(equation, tensors, path);
}

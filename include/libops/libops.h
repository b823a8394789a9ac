/* libops: the one header a user includes.
 *
 *   #include <libops/libops.h>
 *
 * ops_base.h     dtypes, devices, scalars, lists, status codes, errors
 * ops_tensor.h   tensors, storage, allocators, printing
 * ops_functions.h  every operator, generated from ops/native_functions.yaml
 * ops_registry.h   the boxed registry of operators (for FFIs and test runners)
 * ops_autograd.h   requires_grad, backward, autograd_grad, hooks, grad mode
 * ops_optim.h      SGD, Adam, AdamW
 * ops_random.h     random number generators (Philox4x32-10, seed and offset)
 * ops_interop.h    DLPack export/import, shared memory across processes
 * ops_serialize.h  safetensors, .npy and .npz files */
#ifndef LIBOPS_H
#define LIBOPS_H

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_functions.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cuda.h"
#include "ops_serialize.h"

#endif /* LIBOPS_H */

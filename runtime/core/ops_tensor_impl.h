/* libops internal: what the files of the tensor core (runtime/core/tensor.c,
 * tensor_shape.c) share beyond ops_internal.h.  Not installed. */
#ifndef OPS_TENSOR_IMPL_H
#define OPS_TENSOR_IMPL_H

/* The op named in an error message: the caller's, or "ops" when it gave none. */
static inline const char *
ops_op_name(const char *op)
{
    return op ? op : "ops";
}

#endif /* OPS_TENSOR_IMPL_H */

/* The CPU loops of the shape ops (the driver is kernels/shape.c): the pieces of a
 * cat or stack copied one by one, and the triangle tril/triu zero. */
#include <string.h>

#include "kernels/shape.h"

OPS_REGISTER_STUB(shape_cat_pieces, CPU, shape_cat_pieces_cpu);
OPS_REGISTER_STUB(shape_zero_triangle, CPU, shape_zero_triangle_cpu);

ops_status
shape_cat_pieces_cpu(const char *op, ops_tensor *out, int64_t n, const ops_tensor *const *pieces, int64_t dim)
{
    return shape_copy_pieces(op, out, n, pieces, dim, false);
}

ops_status
shape_zero_triangle_cpu(const char *op, ops_tensor *t, int64_t diagonal, bool lower)
{
    (void)op;
    const int nd = t->ndim;
    const int64_t rows = t->sizes[nd - 2], cols = t->sizes[nd - 1];
    const int64_t rs = t->strides[nd - 2], cs = t->strides[nd - 1];
    const size_t is = ops_dtype_itemsize(t->dtype);
    const int64_t batches = rows > 0 && cols > 0 ? ops_tensor_numel(t) / (rows * cols) : 0;
    char *base = (char *)t->storage->data;
    for (int64_t b = 0; b < batches; b++) {
        int64_t off = t->offset, rest = b;
        for (int d = nd - 3; d >= 0; d--) {
            off += (rest % t->sizes[d]) * t->strides[d];
            rest /= t->sizes[d];
        }
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t j = 0; j < cols; j++) {
                const bool zero = lower ? j - i > diagonal : j - i < diagonal;
                if (zero)
                    memset(base + (size_t)(off + i * rs + j * cs) * is, 0, is);
            }
        }
    }
    return OPS_OK;
}

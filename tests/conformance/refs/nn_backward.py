"""References for the backward ops of the max pools (ops/native_functions.yaml,
convolution and pooling): NumPy only."""
import numpy as np


def ref_pool_indices_backward(grad_output, self, indices):
    """Each gradient element added at the flat offset h * W + w its index names in its
    (n, c) plane of a zero tensor of self's shape."""
    g = np.asarray(grad_output, dtype=np.float64)
    shape = np.shape(self)
    hw = shape[-2] * shape[-1]
    planes = int(np.prod(shape[:-2], dtype=np.int64))
    out = np.zeros((planes, hw))
    ohw = g.shape[-2] * g.shape[-1]
    gf = g.reshape(planes, ohw)
    ix = np.asarray(indices).reshape(planes, ohw)
    for p in range(planes):
        np.add.at(out[p], ix[p], gf[p])
    return out.reshape(shape).astype(np.asarray(self).dtype)

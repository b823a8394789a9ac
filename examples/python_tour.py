#!/usr/bin/env python3
"""A tour of libops from Python: tensors, operators, indexing, NumPy sharing memory,
and a small model fitted with autograd (least squares by gradient descent).

    make run        # runs it against the installed package
    PYTHONPATH=build/python /usr/bin/python3 examples/python_tour.py
"""

import numpy as np

import libops as L


def main():
    x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print("x =", x)
    print("shape", x.shape, "dtype", x.dtype, "strides", x.stride())
    print("x * 2 + 1 =", x * 2 + 1)
    print("x.sum(dim=1) =", x.sum(dim=1))
    print("x @ x.T =", x @ x.T)
    print("x[:, ::2] =", x[:, ::2], "(a view: storage offset", x[1, 1:].storage_offset(), "for x[1, 1:])")
    print("x[x > 2] =", x[x > 2])
    print("int32 tensor + 2.5 ->", (L.ones(2, dtype=L.int32) + 2.5).dtype, "(Python scalars promote by category)")

    # NumPy both ways, without copies
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = L.from_numpy(a)
    t[0, 0] = 100.0
    print("the array sees the tensor's write:", a[0, 0])
    back = (t + 1).numpy()
    print("tensor -> numpy:", type(back).__name__, back.shape)

    # autograd: fit w in y = X w by gradient descent
    rng = np.random.default_rng(0)
    X = L.from_numpy(rng.normal(size=(64, 3)).astype(np.float32))
    w_true = L.tensor([[2.0], [-1.0], [0.5]])
    y = X @ w_true
    w = L.zeros(3, 1, requires_grad=True)
    for step in range(200):
        loss = ((X @ w - y) ** 2).mean()
        loss.backward()
        with L.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    print("loss", round(loss.item(), 6), "grad_fn", loss.grad_fn.name())
    print("fitted w:", [round(v, 3) for v in w.detach().view(-1).tolist()], "(true: [2.0, -1.0, 0.5])")
    assert np.allclose(w.detach().numpy().ravel(), [2.0, -1.0, 0.5], atol=1e-3)


if __name__ == "__main__":
    main()

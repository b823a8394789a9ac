"""libops.nn.Parameter: a Tensor that a Module registers as a parameter."""

from .. import _C


class Parameter(_C.Tensor):
    """A leaf Tensor sharing ``data``'s storage, requires_grad (default True).

    As in torch, assigning a Parameter to a Module attribute registers it; ops on a
    Parameter return plain Tensors.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        return _C._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        r = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = r
        return r


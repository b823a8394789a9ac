"""libops.nn: torch.nn's modules, parameters, functional calls and initializers.

``Module`` (parameters, buffers, submodules, state_dict, hooks, train/eval, to), the
containers ``Sequential`` / ``ModuleList`` / ``ModuleDict``, ``Parameter``, the layers
(Linear, Conv1d/2d, ConvTranspose2d, BatchNorm1d/2d, LayerNorm, GroupNorm, Embedding,
Dropout, activations, pools, Flatten, MultiheadAttention, TransformerEncoderLayer, TransformerEncoder),
``nn.functional``, ``nn.init`` and ``nn.utils`` (gradient clipping).  docs/nn.md says how a torch model ports.
"""

from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from .layers import (  # noqa: F401
    ELU, GELU, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv1d, Conv2d, ConvTranspose2d,
    CrossEntropyLoss, Dropout, Embedding, Flatten, GroupNorm, Hardswish, Hardtanh, Identity, LayerNorm, LeakyReLU,
    Linear, LogSoftmax, MaxPool2d, Mish, MSELoss, MultiheadAttention, NonDynamicallyQuantizableLinear, ReLU, ReLU6,
    Sigmoid, SiLU, Softmax, Softplus, Tanh, TransformerEncoder, TransformerEncoderLayer,
)
from .module import Module, ModuleDict, ModuleList, Sequential  # noqa: F401
from .parameter import Parameter  # noqa: F401

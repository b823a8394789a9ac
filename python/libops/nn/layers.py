"""The layers of libops.nn, torch.nn's, with torch's parameter shapes, names and default
initialisation (values drawn from libops' generator)."""

import copy
import math

from .. import _C
from . import functional as F
from . import init
from .module import Module, ModuleList
from .parameter import Parameter

_linear = _C.linear
_conv1d = _C.conv1d
_conv2d = _C.conv2d


def _pair(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)


def _single(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _empty(*shape, dtype=None, device=None):
    return _C.empty(*shape, dtype=dtype or _C.float32, device=device or "cpu")


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b; weight (out_features, in_features) and bias kaiming-uniform as torch's."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return _linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode != "zeros":
            raise ValueError(f"padding_mode {padding_mode!r}: libops.nn convolutions support only 'zeros'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = Parameter(_empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        n = len(self.kernel_size)
        if self.padding != (0,) * n:
            s += ", padding={padding}"
        if self.dilation != (1,) * n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride),
                         padding if isinstance(padding, str) else _single(padding), _single(dilation), False,
                         (0,), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return _conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride),
                         padding if isinstance(padding, str) else _pair(padding), _pair(dilation), False,
                         (0, 0), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return _conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride), _pair(padding),
                         _pair(dilation), True, _pair(output_padding), groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        if output_size is not None:
            raise NotImplementedError("ConvTranspose2d: output_size is not supported; give output_padding")
        return _C.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                   self.groups, self.dilation)


class _NormBase(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_empty(num_features, dtype=dtype, device=device))
            self.bias = Parameter(_empty(num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros(num_features, dtype=dtype or _C.float32,
                                                          device=device or "cpu"))
            self.register_buffer("running_var", _C.ones(num_features, dtype=dtype or _C.float32,
                                                        device=device or "cpu"))
            self.register_buffer("num_batches_tracked", _C.tensor(0, dtype=_C.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        pass

    def forward(self, input):
        self._check_input_dim(input)
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                eaf = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return _C.batch_norm(input, self.weight, self.bias, self.running_mean if use_stats else None,
                             self.running_var if use_stats else None, bn_training, eaf, self.eps, False)

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__))


class BatchNorm1d(_NormBase):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_NormBase):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _single(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.ones(*self.normalized_shape, dtype=dtype or _C.float32, device=device or "cpu"))
            self.bias = Parameter(_C.zeros(*self.normalized_shape, dtype=dtype or _C.float32, device=device or "cpu"))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return _C.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(_C.ones(num_channels, dtype=dtype or _C.float32, device=device or "cpu"))
            self.bias = Parameter(_C.zeros(num_channels, dtype=dtype or _C.float32, device=device or "cpu"))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return _C.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with _C_no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        return s.format(**self.__dict__)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# ---- activations ------------------------------------------------------------------------

class _Inplace(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    def forward(self, input):
        return input.relu_() if self.inplace else _C.relu(input)


class ReLU6(_Inplace):
    def forward(self, input):
        return _C.hardtanh(input, 0.0, 6.0)


class SiLU(_Inplace):
    def forward(self, input):
        return _C.silu(input)


class Hardswish(_Inplace):
    def forward(self, input):
        return _C.hardswish(input)


class Mish(_Inplace):
    def forward(self, input):
        return _C.mish(input)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return _C.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return _C.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return _C.sigmoid(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return _C.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return _C.elu(input, self.alpha)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return _C.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return _C.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


# ---- pooling, reshaping -----------------------------------------------------------------

class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        size = _pair(self.output_size)
        size = tuple(input.shape[-2 + i] if s is None else s for i, s in enumerate(size))
        return _C.adaptive_avg_pool2d(input, size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


# ---- losses -----------------------------------------------------------------------------

class CrossEntropyLoss(Module):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.reduction = "none" if reduce is False else reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class MSELoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = "none" if reduce is False else reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


# ---- attention ----------------------------------------------------------------------------

class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention (self- or cross-attention).

    Parameters as torch's: in_proj_weight (3E, E) xavier-uniform, or with kdim/vdim
    other than E q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight (E, vdim);
    in_proj_bias zeros, out_proj a Linear(E, E) with zero bias; add_bias_kv: bias_k and
    bias_v (1, 1, E) xavier-normal, appended to the keys and values; add_zero_attn: a
    zero key and value appended after the heads split.  attn_mask: bool (True = masked)
    or float (added), (L, S) or (N*num_heads, L, S); key_padding_mask (N, S), bool
    (True = ignored) or float.  Returns (output, weights averaged over heads or None).
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty(embed_dim, embed_dim, dtype=dtype, device=device))
            self.k_proj_weight = Parameter(_empty(embed_dim, self.kdim, dtype=dtype, device=device))
            self.v_proj_weight = Parameter(_empty(embed_dim, self.vdim, dtype=dtype, device=device))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty(3 * embed_dim, embed_dim, dtype=dtype, device=device))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty(3 * embed_dim, dtype=dtype, device=device))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_empty(1, 1, embed_dim, dtype=dtype, device=device))
            self.bias_v = Parameter(_empty(1, 1, embed_dim, dtype=dtype, device=device))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if self.batch_first and batched:
            if key is query and value is query:  # self-attention: keep it recognisable
                query = key = value = query.transpose(0, 1)
            else:
                query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, w = _mha_forward(self, query, key, value, key_padding_mask, need_weights, attn_mask,
                              average_attn_weights, is_causal)
        if not batched:
            out = out.squeeze(1)
            if w is not None:
                w = w.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, w


def _mha_forward(m, query, key, value, key_padding_mask, need_weights, attn_mask, average, is_causal):
    # query (L, N, E), key/value (S, N, E): torch's multi_head_attention_forward.
    L, N, E = query.shape
    S = key.shape[0]
    H, D = m.num_heads, m.head_dim
    w, b = m.in_proj_weight, m.in_proj_bias
    if key.shape[-1] != m.kdim or value.shape[-1] != m.vdim or E != m.embed_dim:
        raise AssertionError(f"MultiheadAttention: query, key, value have {E}, {key.shape[-1]}, {value.shape[-1]} "
                             f"features; expected embed_dim {m.embed_dim}, kdim {m.kdim}, vdim {m.vdim}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {list(key.shape)} does not match value shape {list(value.shape)}")
    if w is not None and key is query and value is query:
        qkv = _linear(query, w, b)
        q, k, v = qkv.chunk(3, -1)
    else:
        wq, wk, wv = w.chunk(3) if w is not None else (m.q_proj_weight, m.k_proj_weight, m.v_proj_weight)
        bq, bk, bv = b.chunk(3) if b is not None else (None, None, None)
        q, k, v = _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)
    extra = 0
    if m.bias_k is not None:  # (S, N, E) + one key/value per batch
        k = _C.cat([k, m.bias_k.expand(1, N, E)])
        v = _C.cat([v, m.bias_v.expand(1, N, E)])
        extra += 1
    Sk = S + extra
    # (L, N, E) -> (N*H, L, D)
    q = q.reshape(L, N * H, D).transpose(0, 1)
    k = k.reshape(Sk, N * H, D).transpose(0, 1)
    v = v.reshape(Sk, N * H, D).transpose(0, 1)
    if m.add_zero_attn:
        z = _C.zeros(N * H, 1, D, dtype=k.dtype, device=k.device)
        k = _C.cat([k, z], 1)
        v = _C.cat([v, z], 1)
        extra += 1
    mask = _merge_masks(attn_mask, key_padding_mask, is_causal, N, H, L, S, q.dtype, extra)
    q = q * (1.0 / math.sqrt(D))
    if mask is not None:
        scores = _C.baddbmm(mask, q, k.transpose(1, 2))
    else:
        scores = _C.bmm(q, k.transpose(1, 2))
    attn = _C.softmax(scores, -1)
    if m.dropout > 0.0 and m.training:
        attn = _C.dropout(attn, m.dropout, True)
    out = _C.bmm(attn, v)  # (N*H, L, D)
    out = out.transpose(0, 1).reshape(L * N, E)
    out = _linear(out, m.out_proj.weight, m.out_proj.bias).view(L, N, E)
    if not need_weights:
        return out, None
    attn = attn.view(N, H, L, S + extra)
    if average:
        attn = attn.mean(1)
    return out, attn


def _pad_cols(mask, extra):
    """mask with `extra` zero (= not masked) columns appended to its last dim."""
    if extra == 0:
        return mask
    return _C.cat([mask, _C.zeros(tuple(mask.shape[:-1]) + (extra,), dtype=mask.dtype, device=mask.device)], -1)


def _merge_masks(attn_mask, key_padding_mask, is_causal, N, H, L, S, dtype, extra=0):
    """One float mask broadcastable to (N*H, L, S + extra), -inf where masked, or None
    (extra: the keys add_bias_kv / add_zero_attn append, never masked, as torch pads)."""
    mask = None
    if attn_mask is None and is_causal:
        attn_mask = _C.ones(L, S, dtype=_C.bool).triu(1)
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            attn_mask = _C.zeros(attn_mask.shape, dtype=dtype).masked_fill(attn_mask, float("-inf"))
        elif attn_mask.dtype != dtype:
            raise AssertionError(f"only bool and floating types of attn_mask are supported, got {attn_mask.dtype}")
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(L, S)}.")
            mask = _pad_cols(attn_mask, extra).unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (N * H, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(N * H, L, S)}.")
            mask = _pad_cols(attn_mask, extra)
        else:
            raise AssertionError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (N, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        if key_padding_mask.dtype == _C.bool:
            kpm = _C.zeros(N, S, dtype=dtype).masked_fill(key_padding_mask, float("-inf"))
        else:
            kpm = key_padding_mask.to(dtype=dtype)
        S2 = S + extra
        kpm = _pad_cols(kpm, extra).view(N, 1, 1, S2).expand(N, H, 1, S2).reshape(N * H, 1, S2)
        mask = kpm if mask is None else mask + kpm
    S = S + extra
    if mask is not None and mask.dim() == 3 and mask.shape[1] == 1 and L != 1:
        mask = mask.expand(mask.shape[0], L, S)
    if mask is not None and mask.shape[0] == 1 and N * H != 1:
        mask = mask.expand(N * H, L, S)
    return mask


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's out_proj class in torch (a plain Linear)."""


class TransformerEncoderLayer(Module):
    """torch.nn.TransformerEncoderLayer: self-attention and a feed-forward block, post-norm
    (default) or pre-norm (norm_first=True), activation "relu" or "gelu" (or a callable)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            device=device, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation == "relu":
                activation = F.relu
            elif activation == "gelu":
                activation = F.gelu
            else:
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """torch.nn.TransformerEncoder: num_layers deep copies of encoder_layer (``layers.0``,
    ``layers.1``, ...), then ``norm`` when given.  (torch 1.13's nested-tensor fast path in
    eval mode, which zeroes padded positions, is not taken: padded positions are computed.)"""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
        return self.norm(x) if self.norm is not None else x


from .. import no_grad as _C_no_grad  # noqa: E402

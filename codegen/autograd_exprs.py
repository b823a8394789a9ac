"""The autograd generator's vocabulary (codegen/gen_autograd.py): the backward helpers of
runtime/autograd/backward/ a formula may call, the limits of what a node keeps, typed
expressions and their conversion to C argument values, schema defaults as C."""

from typing import List, Optional

from . import cnames
from .model import Argument

# Helpers of runtime/autograd/backward/ a formula may call: C function and parameter kinds
# ("shape": an argument name, passed as its kept ndim and sizes; "listshape": a Tensor[]
# argument's name, passed as its length and its elements' kept shapes; "tensorlist": a
# Tensor[] value), and optionally the kind returned: "Tensor" (the default,
# `ops_tensor *f(...)`) or "tensorlist" (`ops_status f(..., ops_tensor_vec *out)`).
RUNTIME_HELPERS = {
    "sum_backward": ("ops_autograd_sum_backward", ("Tensor", "shape", "intlist?", "bool")),
    "mean_backward": ("ops_autograd_mean_backward", ("Tensor", "shape", "intlist?", "bool")),
    "permute_backward": ("ops_autograd_permute_backward", ("Tensor", "intlist")),
    "select_backward": ("ops_autograd_select_backward", ("Tensor", "shape", "int", "int")),
    "slice_backward": ("ops_autograd_slice_backward", ("Tensor", "shape", "int", "int?", "int?", "int")),
    "narrow_backward": ("ops_autograd_narrow_backward", ("Tensor", "shape", "int", "int", "int")),
    "narrow_tensor_backward": ("ops_autograd_narrow_tensor_backward", ("Tensor", "shape", "int", "Tensor", "int")),
    "matmul_backward": ("ops_autograd_matmul_backward", ("Tensor", "Tensor", "Tensor", "int")),
    "reduction_backward": ("ops_autograd_reduction_backward", ("Tensor", "Tensor", "int")),
    "pool_indices_backward": ("ops_autograd_pool_indices_backward", ("Tensor", "shape", "Tensor")),
    "max_pool2d_backward": ("ops_autograd_max_pool2d_backward",
                            ("Tensor", "Tensor", "intlist", "intlist", "intlist", "intlist", "bool")),
    "conv2d_backward": ("ops_autograd_conv2d_backward",
                        ("Tensor", "Tensor", "Tensor", "intlist", "intlist", "intlist", "int", "int")),
    "layer_norm_backward_all": ("ops_autograd_layer_norm_backward_all",
                                ("Tensor", "Tensor", "intlist", "Tensor?", "Tensor?", "Tensor?", "Tensor?", "float",
                                 "intlist"), "tensorlist"),
    "layer_norm_double_backward": ("ops_autograd_layer_norm_double_backward",
                                   ("Tensor", "Tensor?", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor",
                                    "intlist", "intlist"), "tensorlist"),
    "nll_loss_backward": ("ops_autograd_nll_loss_backward", ("Tensor", "Tensor", "Tensor", "Tensor?", "int", "int")),
    "nll_loss_weight_backward": ("ops_autograd_nll_loss_weight_backward",
                                 ("Tensor", "Tensor", "Tensor", "Tensor?", "int", "int")),
    "cross_entropy_backward": ("ops_autograd_cross_entropy_backward",
                               ("Tensor", "Tensor", "Tensor", "Tensor?", "int", "int", "float", "int")),
    "cat_tensors_backward": ("ops_autograd_cat_tensors_backward", ("Tensor", "listshape", "int", "int"),
                             "tensorlist"),
    "index_backward": ("ops_autograd_index_backward", ("Tensor", "shape", "tensorlist")),
    "tensor_split_backward": ("ops_autograd_tensor_split_backward", ("tensorlist", "shape", "intlist", "int")),
    "tensor_split_tensor_backward": ("ops_autograd_tensor_split_tensor_backward", ("tensorlist", "shape", "Tensor", "int")),
    "einsum_backward": ("ops_autograd_einsum_backward", ("Tensor", "str", "tensorlist"), "tensorlist"),
    "evenly_distribute_backward": ("ops_autograd_evenly_distribute_backward",
                                   ("Tensor", "Tensor", "Tensor", "intlist?", "bool")),
    "value_selecting_reduction_backward": ("ops_autograd_value_selecting_reduction_backward",
                                           ("Tensor", "shape", "int", "Tensor", "bool")),
    "cummaxmin_backward": ("ops_autograd_cummaxmin_backward", ("Tensor", "shape", "Tensor", "int")),
    "prod_backward": ("ops_autograd_prod_backward", ("Tensor", "Tensor", "int?", "bool")),
    "cumprod_backward": ("ops_autograd_cumprod_backward", ("Tensor", "Tensor", "Tensor", "int")),
    "var_backward": ("ops_autograd_var_backward", ("Tensor", "Tensor", "intlist?", "Scalar?", "bool")),
    "norm_backward": ("ops_autograd_norm_backward", ("Tensor", "Tensor", "Tensor", "Scalar?", "intlist?", "bool")),
    "clamp_backward": ("ops_autograd_clamp_backward", ("Tensor", "Tensor", "Tensor?", "Tensor?", "int")),
    "diagonal_backward": ("ops_autograd_diagonal_backward", ("Tensor", "shape", "int", "int", "int")),
    "unfold_backward": ("ops_autograd_unfold_backward", ("Tensor", "shape", "int", "int", "int")),
    "as_strided_backward": ("ops_autograd_as_strided_backward", ("Tensor", "Tensor", "intlist", "intlist", "int?")),
    "roll_backward": ("ops_autograd_roll_backward", ("Tensor", "intlist", "intlist")),
    "repeat_backward": ("ops_autograd_repeat_backward", ("Tensor", "shape", "intlist")),
    "tile_backward": ("ops_autograd_tile_backward", ("Tensor", "shape", "intlist")),
    "index_select_backward": ("ops_autograd_index_select_backward", ("Tensor", "shape", "int", "Tensor")),
    "gather_backward": ("ops_autograd_gather_backward", ("Tensor", "shape", "int", "Tensor")),
    "take_backward": ("ops_autograd_take_backward", ("Tensor", "shape", "Tensor")),
    "masked_select_backward": ("ops_autograd_masked_select_backward", ("Tensor", "shape", "Tensor")),
    "masked_scatter_backward": ("ops_autograd_masked_scatter_backward", ("Tensor", "Tensor", "shape")),
    "repeat_interleave_backward": ("ops_autograd_repeat_interleave_backward",
                                   ("Tensor", "shape", "Tensor?", "int", "int?")),
    "pad_backward": ("ops_autograd_pad_backward", ("Tensor", "shape", "intlist", "int")),
    "scatter_src_backward": ("ops_autograd_scatter_src_backward", ("Tensor", "int", "Tensor", "shape")),
    "scatter_reduce_backward": ("ops_autograd_scatter_reduce_backward",
                                ("Tensor", "Tensor", "int", "Tensor", "Tensor", "Tensor", "int", "bool", "int")),
    "conv1d_backward": ("ops_autograd_conv1d_backward",
                        ("Tensor", "Tensor", "Tensor", "intlist", "intlist", "intlist", "int", "int")),
    "conv_same_backward": ("ops_autograd_conv_same_backward", ("Tensor", "Tensor", "Tensor", "intlist", "int", "int")),
    "conv_transpose_input_backward": ("ops_autograd_conv_transpose_input_backward",
                                      ("Tensor", "shape", "Tensor", "intlist", "intlist", "intlist", "int")),
    "max_pool1d_backward": ("ops_autograd_max_pool1d_backward",
                            ("Tensor", "Tensor", "intlist", "intlist", "intlist", "intlist", "bool")),
    "avg_pool2d_backward_": ("ops_autograd_avg_pool2d_backward",
                             ("Tensor", "shape", "intlist", "intlist", "intlist", "bool", "bool", "int?")),
    "avg_pool1d_backward_": ("ops_autograd_avg_pool1d_backward",
                             ("Tensor", "shape", "intlist", "intlist", "intlist", "bool", "bool")),
    "adaptive_avg_pool2d_backward_": ("ops_autograd_adaptive_avg_pool2d_backward", ("Tensor", "shape")),
    "upsample2d_backward": ("ops_autograd_upsample2d_backward", ("Tensor", "shape", "bool", "float", "float", "int")),
    "upsample1d_backward": ("ops_autograd_upsample1d_backward", ("Tensor", "shape", "bool", "float", "int")),
    "batch_norm_backward": ("ops_autograd_batch_norm_backward",
                            ("Tensor", "Tensor", "Tensor?", "Tensor?", "Tensor?", "bool", "float", "int")),
    "group_norm_backward": ("ops_autograd_group_norm_backward", ("Tensor", "Tensor", "int", "Tensor?", "float", "int")),
    "bce_logits_backward": ("ops_autograd_bce_logits_backward",
                            ("Tensor", "Tensor", "Tensor", "Tensor?", "Tensor?", "int")),
    "nll_loss_nd_backward": ("ops_autograd_nll_loss_nd_backward",
                             ("Tensor", "Tensor", "Tensor", "Tensor?", "int", "int")),
    "glu_backward": ("ops_autograd_glu_backward", ("Tensor", "Tensor", "int")),
    "prelu_backward": ("ops_autograd_prelu_backward", ("Tensor", "Tensor", "Tensor", "int")),
    "linear_backward": ("ops_autograd_linear_backward", ("Tensor", "Tensor", "Tensor", "int")),
}

MAX_LIST = 16  # int[] arguments kept by a node
MAX_STR = 128  # str arguments kept by a node ("tanh", "mean", an einsum equation)
ACCESSOR_METHODS = ("sizes", "dim", "numel", "scalar_type")


class GenError(Exception):
    def __init__(self, loc, msg):
        super().__init__(f"{loc}: {msg}")


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_") if p)


# ---- typed expressions ---------------------------------------------------------

class Expr:
    """A translated expression: C code and its kind (Tensor, Scalar, int, float, bool,
    intlist, dtype, none, list)."""

    def __init__(self, code: str, kind: str, items: Optional[List["Expr"]] = None, opt: Optional[str] = None):
        # opt: for an optional argument, the C code of the pointer (NULL when None);
        # code is then the value, valid where a test has ruled None out.
        self.code, self.kind, self.items, self.opt = code, kind, items, opt

    def __repr__(self):
        return f"Expr({self.code!r}, {self.kind})"


def _scalar_of(e: Expr) -> Optional[str]:
    if e.kind == "Scalar":
        return e.code
    if e.kind == "int":
        return f"OPS_SCALAR_INT({e.code})"
    if e.kind == "float":
        return f"OPS_SCALAR_FLOAT({e.code})"
    if e.kind == "bool":
        return f"OPS_SCALAR_BOOL({e.code})"
    return None


def _intlist_of(e: Expr) -> Optional[str]:
    if e.kind == "intlist":
        return e.code
    if e.kind == "int":
        return f"((ops_int_list){{(const int64_t[]){{{e.code}}}, 1}})"
    if e.kind == "list" and all(i.kind == "int" for i in e.items):
        if not e.items:
            return "((ops_int_list){NULL, 0})"
        vals = ", ".join(i.code for i in e.items)
        return f"((ops_int_list){{(const int64_t[]){{{vals}}}, {len(e.items)}}})"
    return None


def convert(e: Expr, a: Argument) -> Optional[str]:
    """C code passing e for argument a, or None when it does not fit."""
    t = a.type
    if e.opt is not None and t.optional:
        return e.opt
    if e.kind == "none":
        if not t.optional:
            return None
        if t.base == "ScalarType":
            return "OPS_DTYPE_NONE"
        if t.base == "Device":
            return "OPS_DEVICE_UNSPECIFIED"
        if t.base == "MemoryFormat":
            return "OPS_MEMORY_FORMAT_NONE"
        return "NULL"
    if t.base == "Tensor" and not t.is_list:
        return e.code if e.kind == "Tensor" else None
    if t.base == "Tensor":  # Tensor[] / Tensor?[]
        return e.code if e.kind == "tensorlist" else None
    if t.is_list and t.base != "Tensor":
        if not t.is_int:
            return None
        code = _intlist_of(e)
        if code is None:
            return None
        return f"&{code}" if t.optional else code
    if t.base == "Scalar":
        code = _scalar_of(e)
        if code is None:
            return None
        return f"&{code}" if t.optional else code
    if t.is_int:
        if e.kind != "int":
            return None
        return f"&(int64_t){{{e.code}}}" if t.optional else e.code
    if t.base == "float":
        if e.kind not in ("int", "float"):
            return None
        return f"&(double){{{e.code}}}" if t.optional else f"(double)({e.code})"
    if t.base == "bool":
        if e.kind != "bool":
            return None
        return f"&(bool){{{e.code}}}" if t.optional else e.code
    if t.base == "ScalarType":
        return e.code if e.kind == "dtype" else None
    if t.base == "str":
        return e.code if e.kind == "str" else None
    return None


def _helper_type(kind: str):
    from .model import Type
    return {"Tensor": Type("Tensor"), "Tensor?": Type("Tensor", True), "intlist": Type("int", False, True),
            "intlist?": Type("int", True, True), "int": Type("int"), "int?": Type("int", True),
            "bool": Type("bool"), "float": Type("float"), "tensorlist": Type("Tensor", False, True),
            "str": Type("str"), "Scalar": Type("Scalar"), "Scalar?": Type("Scalar", True)}[kind]


def default_code(a: Argument) -> Optional[str]:
    """C code of an argument's schema default."""
    if a.default is None:
        return None
    v = a.default_value
    t = a.type
    if v is None:
        return convert(Expr("NULL", "none"), a)
    if t.base == "Scalar":
        kind = "bool" if isinstance(v, bool) else ("int" if isinstance(v, int) else "float")
        return convert(Expr(_literal(v), kind), a)
    if t.is_list and t.is_int:
        vals = v if isinstance(v, list) else [v]
        return convert(Expr("", "list", [Expr(_literal(x), "int") for x in vals]), a)
    if t.is_int:
        return convert(Expr(_literal(v), "int"), a)
    if t.base == "float":
        return convert(Expr(_literal(float(v)), "float"), a)
    if t.base == "bool":
        return convert(Expr("true" if v else "false", "bool"), a)
    if t.base == "ScalarType":
        return f"OPS_{str(v).upper()}"
    if t.base == "MemoryFormat":
        return cnames.c_memory_format(str(v))
    if t.base == "str":
        return cnames.c_string(str(v))
    return None


def _literal(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return cnames.c_int64(v, suffix=True)
    r = cnames.c_double(v)
    return r if ("." in r or "e" in r or "INFINITY" in r) else r + ".0"


# ---- one derivative entry ----------------------------------------------------------

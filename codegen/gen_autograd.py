"""ops_autograd_gen.h / ops_autograd_gen.c: the autograd layer (docs/codegen.md "Autograd").

For every entry of ops/derivatives.yaml: a backward-node type saving exactly what its
formulas use (tensors that are read, only the shape or dtype of tensors that are used
through `reduce_to(x, t)` or accessors, non-Tensor arguments, outputs), its apply
function (each formula translated to a sequence of public op calls, so a backward pass
is itself recorded under create_graph), and the recording entry points the glue calls
when an input requires grad: `ops_ag_<name>` for the functional entry and for the
in-place member of its group.

Formulas are Python expressions (parsed in codegen/derivatives.py): calls of ops by
name (the functional overload is chosen from the argument types, as a C++ overload
would be), `grad` / `grads[i]`, argument names, `result` or named returns, numbers,
`True`/`False`/`None`, lists of ints, the accessors `t.sizes()`, `t.dim()`,
`t.numel()`, `t.scalar_type()`, operators and `x if c else y`, and the helpers
`reduce_to(x, t)` (sum a broadcast gradient back to t's shape), `zeros_like(x)`,
`ones_like(x)`, `not_implemented("why")` and the backward helpers of runtime/autograd/backward/
listed in RUNTIME_HELPERS.  Anything else is a generation error with file:line.

Tensor[] arguments and returns (docs/autograd.md "Tensor[] inputs and returns"): a
differentiable Tensor[] input takes one edge per element (edges in schema order; the
node keeps the list's length, n_<arg>) and its formula must give a Tensor[] of that
length; a Tensor[] read as a value is saved element by element (sl_<arg>, each
version-checked), one passed to a "listshape" helper parameter keeps its elements'
shapes (ml_<arg>).  An op returning Tensor[] records a node with one gradient slot per
element, and its formulas see them as `grads` (a Tensor[]); calls of ops returning
Tensor[] inside formulas give Tensor[] values (ops_tensor_vec temporaries _v[]).
"""

import ast
import re
from typing import Dict, List, Optional, Tuple

from . import cnames, render, shards
from .model import Argument, Model, NativeFunction, SchemaError


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
    "layer_norm_backward": ("ops_autograd_layer_norm_backward",
                            ("Tensor", "Tensor", "intlist", "Tensor?", "float", "int")),
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

class NonDiff:
    """An entry whose outputs carry no gradient (ones_like, argmax): nothing recorded."""

    def __init__(self, d):
        self.d = d
        self.nf = d.func


class NodeGen:
    def __init__(self, d, model: Model, functional_by_name: Dict[str, List[NativeFunction]], index: int):
        self.d = d
        self.nf: NativeFunction = d.func
        self.model = model
        self.cands = functional_by_name
        s = self.nf.func
        self.name = camel(s.base_name) + f"Backward{index}"
        self.struct = "ag_" + s.c_name[len("ops_"):]
        self.args = {a.name: a for a in s.arguments}
        self.returns = list(zip(s.return_names, s.returns))
        self.tensor_returns = [n for n, r in self.returns if r.type.base == "Tensor" and not r.type.is_list]
        # one Tensor[] return (split, unbind): the node takes one gradient per element
        self.list_return = len(self.returns) == 1 and self.returns[0][1].type.is_tensor_list
        if len(self.tensor_returns) != len(self.returns) and not self.list_return:
            raise GenError(d.loc, f"{self.nf.name}: autograd supports Tensor returns or one Tensor[] return only")
        # differentiable inputs: Tensor arguments with a formula, in schema order
        targets = {}
        for k, f in d.formulas.items():
            if k != "result":
                for t in k.split(","):
                    targets[t.strip()] = f
        self.targets = targets
        # (a Tensor[] input has one edge per element: its formula gives a Tensor[])
        self.diff = [a.name for a in s.arguments
                     if a.type.base == "Tensor" and a.name in targets
                     and a.name not in d.non_differentiable]
        for k in list(d.formulas):
            if k != "result" and "," in k:
                f = d.formulas[k]
                call = f.tree.body
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                        and call.func.id == "not_implemented"):
                    raise GenError(f.loc, f"{self.nf.name}: a formula for several inputs ('{k}') is "
                                          "supported for not_implemented(...) only; give one formula per input")
        self.saved_tensors: List[str] = []   # arguments saved as values
        self.saved_meta: List[str] = []      # arguments / outputs whose shape/dtype is kept
        self.saved_values: List[str] = []    # non-Tensor arguments
        self.saved_outputs: List[str] = []   # outputs saved as values
        self.presence = set()                # Tensor? arguments tested against None
        self.saved_lists: List[str] = []     # Tensor[] arguments saved as values
        self.saved_list_meta: List[str] = [] # Tensor[] arguments whose elements' shapes are kept
        self.nvecs = 0                       # Tensor[] temporaries (ops_tensor_vec _v[])
        self.lines: Dict[str, List[str]] = {}
        self.ntemps = 0
        self._analyse()

    # -- what the formulas use --------------------------------------------------------

    def _analyse(self) -> None:
        meta_uses, value_uses = set(), set()
        self._list_meta_uses = set()
        for key, f in self._formulas():
            self._walk(f.tree.body, meta_uses, value_uses, f)
        out_names = set(self.tensor_returns) | {"result"} | {f"result{i}" for i in range(len(self.returns))}
        out_names |= {n for n, _ in self.returns if n}
        if self.list_return and (out_names & (value_uses | meta_uses)):
            raise GenError(self.d.loc, f"{self.nf.name}: the formulas of an op returning Tensor[] read its "
                                       "gradients (grads), not its outputs")
        for n in sorted(value_uses):
            if n in ("grad", "grads"):
                continue
            if n not in out_names and self.args[n].type.is_tensor_list:
                self.saved_lists.append(n)
                continue
            if n in out_names:
                self.saved_outputs.append(self._out_name(n))
            elif self.args[n].type.base == "Tensor":
                self.saved_tensors.append(n)
            else:
                self.saved_values.append(n)
        self.saved_list_meta = sorted(self._list_meta_uses)
        for n in sorted(meta_uses):
            if n not in out_names and self.args[n].type.is_tensor_list:
                raise GenError(self.d.loc, f"{self.nf.name}: '{n}' is a Tensor[]: pass it to a list helper "
                                           "(cat_tensors_backward), it has no sizes of its own")
            if n in out_names:
                n = self._out_name(n)
            if n not in self.saved_meta:
                self.saved_meta.append(n)
        self.saved_outputs = sorted(set(self.saved_outputs))
        for n in self.saved_values:
            t = self.args[n].type
            if t.base in ("Device", "Generator", "MemoryFormat") or (t.is_list and not t.is_int):
                raise GenError(self.d.loc, f"{self.nf.name}: formulas cannot use argument '{n}' of type {t}")

    def _out_name(self, n: str) -> str:
        if n == "result" or re.fullmatch(r"result\d+", n):
            i = 0 if n == "result" else int(n[6:])
            return self.tensor_returns[i]
        return n

    def _formulas(self):
        return [(k, f) for k, f in self.d.formulas.items() if k != "result"]

    def _walk(self, node, meta_uses, value_uses, f) -> None:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(node.left, ast.Name):
            a = self.args.get(node.left.id)
            if a is not None and a.type.base == "Tensor":
                self.presence.add(node.left.id)
            elif a is not None:
                value_uses.add(node.left.id)
            return
        if isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id == "reduce_to" and len(node.args) == 2 \
                    and isinstance(node.args[1], ast.Name):
                meta_uses.add(node.args[1].id)
                self._walk(node.args[0], meta_uses, value_uses, f)
                return
            if isinstance(fn, ast.Attribute) and fn.attr in ACCESSOR_METHODS and isinstance(fn.value, ast.Name):
                meta_uses.add(fn.value.id)
                return
            if isinstance(fn, ast.Name) and fn.id in RUNTIME_HELPERS:
                kinds = RUNTIME_HELPERS[fn.id][1]
                for k, a in zip(kinds, node.args):
                    if k == "shape" and isinstance(a, ast.Name):
                        meta_uses.add(a.id)
                    elif k == "listshape" and isinstance(a, ast.Name):
                        self._list_meta_uses.add(a.id)
                    else:
                        self._walk(a, meta_uses, value_uses, f)
                return
            for a in node.args:
                self._walk(a, meta_uses, value_uses, f)
            for k in node.keywords:
                self._walk(k.value, meta_uses, value_uses, f)
            return
        if isinstance(node, ast.Name):
            if node.id not in ("True", "False", "None"):
                value_uses.add(node.id)
            return
        for child in ast.iter_child_nodes(node):
            self._walk(child, meta_uses, value_uses, f)

    # -- translation ------------------------------------------------------------------

    def translate(self) -> None:
        for key, f in self.targets.items():
            if key not in self.diff:
                continue
            self._loc = f.loc
            body: List[str] = []
            e = self._expr(f.tree.body, body)
            if e.kind == "notimpl":
                self.lines[key] = body
                continue
            off = self.edge(key)
            if self.args[key].type.is_list:
                # one gradient per element, for the elements whose edge leads somewhere
                if e.kind != "tensorlist":
                    raise GenError(f.loc, f"{self.nf.name}: the formula for the Tensor[] '{key}' gives a {e.kind}, "
                                          "not a Tensor[] (one gradient per element)")
                msg = cnames.c_string(f"{self.nf.func.name}: the formula for '{key}' gave %lld gradients "
                                      "for %lld tensors")
                body += [f"ops_tensor_list _l = {e.code};",
                         f"if (_l.len != _s->n_{key}) {{",
                         f"    _st = ops_fail(OPS_ERR_VALUE, {msg}, (long long)_l.len, (long long)_s->n_{key});",
                         "    goto done;",
                         "}",
                         "for (int64_t _i = 0; _i < _l.len; _i++)",
                         f"    if (_n->next[{off} + _i].node != NULL)",
                         f"        _out[{off} + _i] = ops_tensor_retain(_l.data[_i]);"]
                self.lines[key] = body
                continue
            if e.kind != "Tensor":
                raise GenError(f.loc, f"{self.nf.name}: the formula for '{key}' gives a {e.kind}, not a Tensor")
            body.append(f"_out[{off}] = ops_tensor_retain({e.code});")
            self.lines[key] = body

    def edge(self, key: str, record: bool = False) -> str:
        """C expression of the first edge of differentiable input key: earlier Tensor
        inputs take one edge each, earlier Tensor[] inputs one per element."""
        fixed, lists = 0, []
        for n in self.diff[:self.diff.index(key)]:
            if self.args[n].type.is_list:
                lists.append(f"{n}.len" if record else f"_s->n_{n}")
            else:
                fixed += 1
        if not lists:
            return str(fixed)
        return "(" + " + ".join(([str(fixed)] if fixed else []) + lists) + ")"

    def list_args(self) -> List[str]:
        """Tensor[] arguments whose length the node keeps."""
        return [a.name for a in self.nf.func.arguments
                if a.type.is_tensor_list and (a.name in self.diff or a.name in self.saved_lists
                                              or a.name in self.saved_list_meta)]

    def _vec(self) -> str:
        self.nvecs += 1
        return f"_v[{self.nvecs - 1}]"

    def _temp(self) -> str:
        self.ntemps += 1
        return f"_t[{self.ntemps - 1}]"

    def _fail(self, msg: str):
        raise GenError(self._loc, f"{self.nf.name}: {msg} in formula")

    def _meta(self, name: str) -> str:
        return f"_s->m_{self._out_name(name)}"

    def _expr(self, node, body: List[str]) -> Expr:
        if isinstance(node, ast.Constant):
            v = node.value
            if v is None:
                return Expr("NULL", "none")
            if isinstance(v, bool):
                return Expr("true" if v else "false", "bool")
            if isinstance(v, int):
                return Expr(_literal(v), "int")
            if isinstance(v, float):
                return Expr(_literal(v), "float")
            if isinstance(v, str):
                return Expr(cnames.c_string(v), "str")
            self._fail(f"unsupported constant {v!r}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
            return self._expr(ast.Constant(-node.operand.value), body)
        if isinstance(node, (ast.List, ast.Tuple)):
            return Expr("", "list", [self._expr(x, body) for x in node.elts])
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id == "grads" and isinstance(node.slice, ast.Constant):
                i = node.slice.value
                if self.list_return and isinstance(i, int) and not isinstance(i, bool) and i >= 0:
                    # a Tensor[] return's length is known when the node runs
                    msg = cnames.c_string(f"{self.nf.func.name}: grads[{i}] is out of range (%d outputs)")
                    body += [f"if (_n->num_inputs <= {i}) {{",
                             f"    _st = ops_fail(OPS_ERR_VALUE, {msg}, _n->num_inputs);", "    goto done;", "}"]
                    return Expr(f"grads[{i}]", "Tensor")
                if not isinstance(i, int) or not 0 <= i < len(self.tensor_returns):
                    self._fail(f"grads[{i}] is out of range")
                return Expr(f"grads[{i}]", "Tensor")
            self._fail("only grads[i] may be subscripted")
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Call):
            return self._call(node, body)
        if isinstance(node, ast.BinOp):
            return self._binop(node, body)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                x = self._expr(node.operand, body)
                if x.kind in ("int", "float"):
                    return Expr(f"(-{x.code})", x.kind)
                return self._call_named("neg", [x], {}, body)
            if isinstance(node.op, ast.Not):
                x = self._expr(node.operand, body)
                if x.kind != "bool":
                    self._fail("'not' needs a bool")
                return Expr(f"(!{x.code})", "bool")
            self._fail(f"unsupported operator {type(node.op).__name__}")
        if isinstance(node, ast.Compare):
            return self._compare(node, body)
        if isinstance(node, ast.BoolOp):
            xs = [self._expr(v, body) for v in node.values]
            if any(x.kind != "bool" for x in xs):
                self._fail("'and'/'or' need bools")
            op = " && " if isinstance(node.op, ast.And) else " || "
            return Expr("(" + op.join(x.code for x in xs) + ")", "bool")
        if isinstance(node, ast.IfExp):
            return self._ifexp(node, body)
        self._fail(f"unsupported syntax {type(node).__name__} (write ops as calls: mul(a, b))")

    _BINOPS = {ast.Add: ("add", "+"), ast.Sub: ("sub", "-"), ast.Mult: ("mul", "*"), ast.Div: ("div", "/"),
               ast.Pow: ("pow", None)}
    _CMPS = {ast.Gt: ("gt", ">", ast.Lt), ast.GtE: ("ge", ">=", ast.LtE), ast.Lt: ("lt", "<", ast.Gt),
             ast.LtE: ("le", "<=", ast.GtE), ast.Eq: ("eq", "==", ast.Eq), ast.NotEq: ("ne", "!=", ast.NotEq)}

    @staticmethod
    def _is_num(e: Expr) -> bool:
        return e.kind in ("int", "float", "Scalar")

    def _binop(self, node: ast.BinOp, body: List[str]) -> Expr:
        if type(node.op) not in self._BINOPS:
            self._fail(f"unsupported operator {type(node.op).__name__}")
        name, cop = self._BINOPS[type(node.op)]
        a, b = self._expr(node.left, body), self._expr(node.right, body)
        if a.kind in ("int", "float") and b.kind in ("int", "float") and cop is not None:
            kind = "float" if "float" in (a.kind, b.kind) or cop == "/" else "int"
            ca = f"(double)({a.code})" if cop == "/" else a.code
            return Expr(f"({ca} {cop} {b.code})", kind)
        if self._is_num(a) and self._is_num(b) and cop is not None:
            return Expr(f"ops_ag_scalar_arith({_scalar_of(a)}, {_scalar_of(b)}, '{cop}')", "Scalar")
        if a.kind == "Tensor":
            return self._call_named(name, [a, b], {}, body)
        if self._is_num(a) and b.kind == "Tensor":
            if name in ("add", "mul"):  # commutative: T op n
                return self._call_named(name, [b, a], {}, body)
            if name == "sub":  # n - T = (-T) + n
                return self._call_named("add", [self._call_named("neg", [b], {}, body), a], {}, body)
            if name == "div":  # n / T = reciprocal(T) * n
                return self._call_named("mul", [self._call_named("reciprocal", [b], {}, body), a], {}, body)
            return self._call_named(name, [a, b], {}, body)  # pow.Scalar
        self._fail(f"operator {cop or '**'} on {a.kind} and {b.kind}")

    def _compare(self, node: ast.Compare, body: List[str]) -> Expr:
        if len(node.ops) != 1:
            self._fail("chained comparisons are not supported")
        op, right = node.ops[0], node.comparators[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            if not (isinstance(right, ast.Constant) and right.value is None and isinstance(node.left, ast.Name)):
                self._fail("'is' compares an argument with None")
            return Expr(f"({'!' if isinstance(op, ast.Is) else ''}{self._present(node.left.id)})", "bool")
        if type(op) not in self._CMPS:
            self._fail(f"unsupported comparison {type(op).__name__}")
        name, cop, flipped = self._CMPS[type(op)]
        a, b = self._expr(node.left, body), self._expr(right, body)
        if a.kind == "str" and b.kind == "str" and cop in ("==", "!="):
            return Expr(f"(strcmp({a.code}, {b.code}) {cop} 0)", "bool")
        if a.kind in ("int", "float", "bool") and b.kind in ("int", "float", "bool"):
            return Expr(f"({a.code} {cop} {b.code})", "bool")
        if a.kind == "Tensor":
            return self._call_named(name, [a, b], {}, body)
        if b.kind == "Tensor":
            return self._call_named(self._CMPS[flipped][0], [b, a], {}, body)
        self._fail(f"comparison of {a.kind} and {b.kind}")

    def _present(self, n: str) -> str:
        a = self.args.get(n)
        if a is None or not a.type.optional:
            self._fail(f"'{n} is None' needs an optional argument")
        return f"_s->has_{n}"

    def _ifexp(self, node: ast.IfExp, body: List[str]) -> Expr:
        test = self._expr(node.test, body)
        if test.kind != "bool":
            self._fail("the condition of 'x if c else y' must be a bool")
        then_lines: List[str] = []
        a = self._expr(node.body, then_lines)
        else_lines: List[str] = []
        b = self._expr(node.orelse, else_lines)
        nums = ("int", "float", "bool")
        if a.kind in nums and b.kind in nums and not then_lines and not else_lines:
            # numbers (a dim chosen by rank): a C conditional
            if "bool" in (a.kind, b.kind) and a.kind != b.kind:
                self._fail("both branches of 'x if c else y' must be numbers or both bools")
            kind = "float" if "float" in (a.kind, b.kind) else a.kind
            return Expr(f"({test.code} ? {a.code} : {b.code})", kind)
        res = self._temp()
        if a.kind not in ("Tensor", "notimpl") or b.kind not in ("Tensor", "notimpl") or \
                a.kind == b.kind == "notimpl":
            self._fail("both branches of 'x if c else y' must be Tensors (or one not_implemented)")
        # a not_implemented branch sets the error and leaves the function itself
        keep_a = [f"    {res} = ops_tensor_retain({a.code});"] if a.kind == "Tensor" else []
        keep_b = [f"    {res} = ops_tensor_retain({b.code});"] if b.kind == "Tensor" else []
        body.append(f"if ({test.code}) {{")
        body += ["    " + x for x in then_lines] + keep_a + ["} else {"]
        body += ["    " + x for x in else_lines] + keep_b + ["}"]
        return Expr(res, "Tensor")

    def _name(self, n: str) -> Expr:
        if n == "grad":
            return Expr("grads[0]", "Tensor")
        if n == "grads":  # every output's gradient (zeros where none arrived)
            return Expr("((ops_tensor_list){(const ops_tensor *const *)grads, _n->num_inputs})", "tensorlist")
        if n in ("True", "False"):
            return Expr("true" if n == "True" else "false", "bool")
        outs = set(self.tensor_returns) | {"result"} | {f"result{i}" for i in range(len(self.returns))}
        if n in outs:
            return Expr(f"o_{self._out_name(n)}", "Tensor")
        a = self.args.get(n)
        if a is None:
            self._fail(f"unknown name '{n}'")
        t = a.type
        if t.is_tensor_list:
            return Expr(f"((ops_tensor_list){{(const ops_tensor *const *)al_{n}, _s->n_{n}}})", "tensorlist")
        if t.base == "Tensor":
            return Expr(f"a_{n}", "Tensor")
        v = f"_s->v_{n}"
        kind = {"Scalar": "Scalar", "float": "float", "bool": "bool", "ScalarType": "dtype",
                "str": "str"}.get(t.base)
        if t.is_list and t.is_int:
            code = f"((ops_int_list){{{v}, _s->len_{n}}})"
            kind = "intlist"
        elif t.is_int:
            code, kind = v, "int"
        else:
            code = v
        if kind is None:
            self._fail(f"argument '{n}' of type {t} cannot be used")
        if t.optional and t.base == "str":
            return Expr(code, kind, opt=f"(_s->has_{n} ? {code} : NULL)")
        if t.optional and t.base != "ScalarType":
            return Expr(code, kind, opt=f"(_s->has_{n} ? &{code} : NULL)")
        return Expr(code, kind)
        self._fail(f"argument '{n}' of type {t} cannot be used")

    def _call(self, node: ast.Call, body: List[str]) -> Expr:
        fn = node.func
        if isinstance(fn, ast.Attribute):
            if fn.attr in ACCESSOR_METHODS and isinstance(fn.value, ast.Name):
                m = self._meta(fn.value.id)
                if fn.attr == "sizes":
                    return Expr(f"((ops_int_list){{{m}_sizes, {m}_ndim}})", "intlist")
                if fn.attr == "dim":
                    return Expr(f"(int64_t){m}_ndim", "int")
                if fn.attr == "numel":
                    return Expr(f"ops_ag_numel({m}_ndim, {m}_sizes)", "int")
                return Expr(f"{m}_dtype", "dtype")
            # method call: t.op(args) is op(t, args)
            node = ast.Call(func=ast.Name(fn.attr), args=[fn.value] + list(node.args), keywords=node.keywords)
            fn = node.func
        name = fn.id
        if name == "reduce_to":
            if len(node.args) != 2 or not isinstance(node.args[1], ast.Name):
                self._fail("reduce_to takes (tensor, input name)")
            x = self._expr(node.args[0], body)
            m = self._meta(node.args[1].id)
            t = self._temp()
            body += [f"{t} = ops_autograd_reduce_to({x.code}, {m}_ndim, {m}_sizes);",
                     f"if ({t} == NULL)", "    goto fail;"]
            return Expr(t, "Tensor")
        if name in RUNTIME_HELPERS:
            spec = RUNTIME_HELPERS[name]
            cfn, kinds = spec[0], spec[1]
            ret = spec[2] if len(spec) > 2 else "Tensor"
            if len(node.args) != len(kinds) or node.keywords:
                self._fail(f"{name} takes {len(kinds)} positional arguments")
            parts = []
            for k, a in zip(kinds, node.args):
                if k == "shape":
                    if not isinstance(a, ast.Name):
                        self._fail(f"{name}: pass an argument name for its shape")
                    m = self._meta(a.id)
                    parts += [f"{m}_ndim", f"{m}_sizes"]
                    continue
                if k == "listshape":
                    if not (isinstance(a, ast.Name) and a.id in self.args and self.args[a.id].type.is_tensor_list):
                        self._fail(f"{name}: pass the name of a Tensor[] argument")
                    parts += [f"_s->n_{a.id}", f"_s->ml_{a.id}"]
                    continue
                e = self._expr(a, body)
                fake = Argument("x", _helper_type(k))
                code = convert(e, fake)
                if code is None:
                    self._fail(f"{name}: argument of kind {e.kind} where {k} is expected")
                parts.append(code)
            if ret == "tensorlist":
                v = self._vec()
                body += [f"if ({cfn}({', '.join(parts + ['&' + v])}) != OPS_OK)", "    goto fail;"]
                return Expr(f"((ops_tensor_list){{(const ops_tensor *const *){v}.data, {v}.len}})", "tensorlist")
            t = self._temp()
            body += [f"{t} = {cfn}({', '.join(parts)});", f"if ({t} == NULL)", "    goto fail;"]
            return Expr(t, "Tensor")
        if name in ("zeros_like", "ones_like"):
            x = self._expr(node.args[0], body)
            t = self._temp()
            body += [f"{t} = ops_{name}({x.code}, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);",
                     f"if ({t} == NULL)", "    goto fail;"]
            return Expr(t, "Tensor")
        if name == "not_implemented":
            why = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else ""
            msg = f"{self.nf.func.name}: the derivative for '{self.nf.func.name}' is not implemented"
            msg += f": {why}" if why else "."
            body += [f"_st = ops_fail(OPS_ERR_NOT_IMPLEMENTED, {cnames.c_string(msg)});", "goto done;"]
            return Expr("", "notimpl")
        args = [self._expr(a, body) for a in node.args]
        kwargs = {k.arg: self._expr(k.value, body) for k in node.keywords}
        return self._call_named(name, args, kwargs, body)

    def _call_named(self, name: str, args: List[Expr], kwargs: Dict[str, Expr], body: List[str]) -> Expr:
        best = None
        for cand in self.cands.get(name, []):
            bound = self._bind(cand, args, kwargs)
            if bound is None:
                continue
            score = sum(1 for a, e in zip(cand.func.arguments, args)
                        if (e.kind == "Tensor" and a.type.is_tensor) or (e.kind == "tensorlist" and a.type.is_list))
            if best is None or score > best[0]:
                best = (score, cand, bound)
        if best is None:
            kinds = ", ".join([e.kind for e in args] + [f"{k}={e.kind}" for k, e in kwargs.items()])
            self._fail(f"no functional overload of '{name}' takes ({kinds})")
        _, cand, bound = best
        rs = cand.func.returns
        if len(rs) == 1 and rs[0].type.is_tensor_list:  # split, unbind: a Tensor[] value
            v = self._vec()
            body += [f"if ({cand.c_name}({', '.join(bound + ['&' + v])}) != OPS_OK)", "    goto fail;"]
            return Expr(f"((ops_tensor_list){{(const ops_tensor *const *){v}.data, {v}.len}})", "tensorlist")
        if not cnames.returns_tensor(cand.func):
            self._fail(f"'{cand.name}' does not return one Tensor")
        t = self._temp()
        body += [f"{t} = {cand.c_name}({', '.join(bound)});", f"if ({t} == NULL)", "    goto fail;"]
        return Expr(t, "Tensor")

    @staticmethod
    def _bind(cand: NativeFunction, args: List[Expr], kwargs: Dict[str, Expr]) -> Optional[List[str]]:
        params = cand.func.arguments
        positional = [a for a in params if not a.kwarg_only]
        if len(args) > len(positional):
            return None
        out = []
        for i, a in enumerate(params):
            e = None
            if i < len(args) and not a.kwarg_only:
                e = args[i]
            elif a.name in kwargs:
                e = kwargs[a.name]
            if e is None:
                code = default_code(a)
            else:
                code = convert(e, a)
            if code is None:
                return None
            out.append(code)
        if any(k not in {a.name for a in params} for k in kwargs):
            return None
        return out

    # -- C text ---------------------------------------------------------------------

    def struct_fields(self) -> List[str]:
        f = ["ops_node base;"]
        for n in self.list_args():
            f.append(f"int64_t n_{n};")
        for n in self.saved_lists:
            f.append(f"ops_saved_tensor *sl_{n};")
        for n in self.saved_list_meta:
            f.append(f"ops_grad_meta *ml_{n};")
        for n in self.saved_tensors:
            f.append(f"ops_saved_tensor s_{n};")
        for n in self.saved_outputs:
            f.append(f"ops_saved_tensor s_{n};")
        for n in sorted(self.presence - set(self.saved_values)):
            f.append(f"bool has_{n};")
        for n in self.saved_meta:
            f += [f"int m_{n}_ndim;", f"ops_dtype m_{n}_dtype;", f"int64_t m_{n}_sizes[OPS_MAX_DIMS];"]
        for n in self.saved_values:
            t = self.args[n].type
            if t.base == "Scalar":
                f.append(f"ops_scalar v_{n};")
            elif t.is_list:
                f += [f"int64_t v_{n}[{MAX_LIST}];", f"int64_t len_{n};"]
            elif t.is_int:
                f.append(f"int64_t v_{n};")
            elif t.base == "float":
                f.append(f"double v_{n};")
            elif t.base == "bool":
                f.append(f"bool v_{n};")
            elif t.base == "ScalarType":
                f.append(f"ops_dtype v_{n};")
            elif t.base == "str":
                f.append(f"char v_{n}[{MAX_STR}];")
            if t.optional and t.base != "ScalarType":
                f.append(f"bool has_{n};")
        return f


def _record_values(g: NodeGen) -> List[str]:
    """Lines copying non-Tensor arguments into the node (n is the node)."""
    out = []
    for n in g.saved_values:
        t = g.args[n].type
        if t.is_list:
            ref = f"{n}->" if t.optional else f"{n}."
            guard = f"if ({n} != NULL) {{" if t.optional else "{"
            op = g.nf.func.name
            msg = cnames.c_string(f"{op}: autograd keeps at most {MAX_LIST} elements of '{n}'")
            out += [guard,
                    f"    if ({ref}len > {MAX_LIST}) {{",
                    f"        ops_fail(OPS_ERR_NOT_IMPLEMENTED, {msg});",
                    "        goto fail;",
                    "    }",
                    f"    memcpy(_n->v_{n}, {ref}data, (size_t){ref}len * sizeof(int64_t));",
                    f"    _n->len_{n} = {ref}len;"]
            if t.optional:
                out.append(f"    _n->has_{n} = true;")
            out.append("}")
        elif t.base == "str":
            op = g.nf.func.name
            msg = cnames.c_string(f"{op}: autograd keeps str arguments of at most {MAX_STR - 1} characters ('{n}')")
            out += [f"if ({n} != NULL) {{",
                    f"    if (strlen({n}) >= {MAX_STR}) {{",
                    f"        ops_fail(OPS_ERR_NOT_IMPLEMENTED, {msg});",
                    "        goto fail;",
                    "    }",
                    f"    memcpy(_n->v_{n}, {n}, strlen({n}) + 1);"]
            if t.optional:
                out.append(f"    _n->has_{n} = true;")
            out.append("}")
        elif t.optional and t.base != "ScalarType":
            out += [f"if ({n} != NULL) {{", f"    _n->v_{n} = *{n};", f"    _n->has_{n} = true;", "}"]
        else:
            out.append(f"_n->v_{n} = {n};")
    return out


def _meta_lines(n: str, src: str, optional: bool = False) -> List[str]:
    lines = [f"_n->m_{n}_ndim = (int)ops_tensor_ndim({src});",
             f"_n->m_{n}_dtype = ops_tensor_dtype({src});",
             f"for (int _i = 0; _i < _n->m_{n}_ndim; _i++)",
             f"    _n->m_{n}_sizes[_i] = ops_tensor_size({src}, _i);"]
    if optional:
        # an absent optional (bias=None) has no edge, so its formula never runs
        lines = [f"if ({src} != NULL) {{"] + ["    " + x for x in lines] + ["}"]
    return lines


def _node_text(g: NodeGen) -> Dict:
    s = g.nf.func
    apply = [f"{g.struct} *_s = ({g.struct} *)_n;", "(void)_s, (void)grads, (void)_out;", "ops_status _st = OPS_OK;"]
    if g.ntemps:
        apply.append(f"ops_tensor *_t[{g.ntemps}] = {{0}};")
    if g.nvecs:
        apply.append(f"ops_tensor_vec _v[{g.nvecs}] = {{{{0}}}};")
    unpacked = g.saved_tensors + g.saved_outputs
    for n in g.saved_lists:
        apply.append(f"ops_tensor **al_{n} = NULL;")
    for n in g.saved_tensors:
        apply.append(f"ops_tensor *a_{n} = NULL;")
    for n in g.saved_outputs:
        apply.append(f"ops_tensor *o_{n} = NULL;")
    for n in g.saved_tensors:
        apply += [f"if ((_st = ops_saved_unpack(&_s->s_{n}, _n, &a_{n})) != OPS_OK)", "    goto done;"]
    for n in g.saved_outputs:
        apply += [f"if ((_st = ops_saved_unpack(&_s->s_{n}, _n, &o_{n})) != OPS_OK)", "    goto done;"]
    for n in g.saved_lists:
        apply += [f"if ((_st = ops_ag_saved_list_unpack(_s->sl_{n}, _s->n_{n}, _n, &al_{n})) != OPS_OK)",
                  "    goto done;"]
    for i, n in enumerate(g.diff):
        if g.args[n].type.is_list:
            apply.append(f"if (ops_ag_any_next(_n, {g.edge(n)}, _s->n_{n})) {{ /* {n} */")
        else:
            apply.append(f"if (_n->next[{g.edge(n)}].node != NULL) {{ /* {n} */")
        apply += ["    " + x for x in g.lines[n]]
        apply.append("}")
    apply.append("goto done;")
    apply.append("fail:")
    apply.append("_st = ops_last_status();")
    apply.append("done:")
    if g.ntemps:
        apply += [f"for (int _i = 0; _i < {g.ntemps}; _i++)", "    ops_tensor_release(_t[_i]);"]
    if g.nvecs:
        apply += [f"for (int _i = 0; _i < {g.nvecs}; _i++)", "    ops_tensor_vec_release(&_v[_i]);"]
    for n in g.saved_lists:
        apply.append(f"ops_ag_tensor_array_release(al_{n}, _s->n_{n});")
    for n in g.saved_tensors:
        apply.append(f"ops_tensor_release(a_{n});")
    for n in g.saved_outputs:
        apply.append(f"ops_tensor_release(o_{n});")
    apply.append("return _st;")
    if not any(x.strip() == "goto fail;" for x in apply):
        apply = [x for x in apply if x not in ("fail:", "_st = ops_last_status();")]
    release = [f"ops_saved_release(&(({g.struct} *)_n)->s_{n});" for n in unpacked]
    release += [f"ops_ag_saved_list_release(&(({g.struct} *)_n)->sl_{n}, (({g.struct} *)_n)->n_{n});"
                for n in g.saved_lists]
    release += [f"ops_ag_list_meta_free(&(({g.struct} *)_n)->ml_{n});" for n in g.saved_list_meta]
    diff_out = g.d.output_differentiability or [True] * len(g.returns)
    return {"struct": g.struct, "name": g.name, "entry": g.nf.name, "inputs": ",".join(g.diff),
            "outputs": "".join("1" if d else "0" for d in diff_out),
            "fields": g.struct_fields(), "apply": apply, "release": release,
            "schema": cnames.c_comment(g.nf.schema_text)}


def _record(g: NodeGen, target: NativeFunction, inplace: bool) -> Dict:
    """ops_ag_<c_name>: run the op below autograd, then record its node."""
    s = target.func
    op = s.name
    params = cnames.param_list(cnames.params(s))
    body = []
    single = cnames.returns_tensor(s)
    saves_self = inplace and "self" in g.saved_tensors
    if inplace:
        body += [f'ops_status _st = ops_autograd_check_inplace("{op}", self);', "if (_st != OPS_OK)",
                 "    return _st;"]
    else:
        body.append("ops_status _st = OPS_OK;")
    body.append(f"{g.struct} *_n = NULL;")
    if saves_self:
        # The formula reads self as it was before the op wrote it.
        body += ["bool _prev0 = ops_set_grad_enabled(false);",
                 "ops_tensor *_orig_self = ops_clone(self, OPS_MEMORY_FORMAT_NONE);",
                 "ops_set_grad_enabled(_prev0);",
                 "if (_orig_self == NULL)",
                 "    return ops_last_status();"]
    call_args = [a.name for a in s.arguments] + [n for _, n, _ in cnames.out_params(s)]
    body.append("bool _prev = ops_set_grad_enabled(false);")
    if single:
        body.append(f"ops_tensor *_r = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_r == NULL)", "    return NULL;"]
        same = [a.name for a in s.arguments if a.type.base == "Tensor" and not a.type.is_list]
        if same:
            # an op that returned its input itself (contiguous of a contiguous tensor,
            # to() of the same dtype) is the identity: the tensor keeps its history
            body += [f"if ({' || '.join(f'_r == {n}' for n in same)})", "    return _r;"]
        # an integer or bool result (to(int64)) carries no gradient
        body += ["if (!ops_dtype_is_floating(ops_tensor_dtype(_r)))", "    return _r;"]
        outs = ["_r"]
    elif g.list_return and not inplace:
        # one gradient slot per returned element
        vec = cnames.out_params(s)[0][1]
        body.append(f"_st = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_st != OPS_OK)", "    return _st;"]
        outs = []
    elif inplace:
        body.append(f"_st = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_st != OPS_OK)", "    goto fail;"]
        outs = ["self"]
    else:
        body.append(f"_st = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_st != OPS_OK)", "    return _st;"]
        outs = [f"*{n}" for _, n, _ in cnames.out_params(s)]
    n_in = f"(int){vec}->len" if (g.list_return and not inplace) else str(len(g.tensor_returns))
    n_next = str(len(g.diff))
    if any(g.args[n].type.is_list for n in g.diff):  # one edge per element of a Tensor[]
        n_next = "(int)(" + " + ".join([str(sum(1 for n in g.diff if not g.args[n].type.is_list))]
                                       + [f"{n}.len" for n in g.diff if g.args[n].type.is_list]) + ")"
    body += [f"_n = ({g.struct} *)ops_node_new(&{g.struct}_vt, sizeof *_n, {n_in}, {n_next});",
             "if (_n == NULL)", "    goto fail;"]
    for n in g.list_args():
        body.append(f"_n->n_{n} = {n}.len;")
    for i, n in enumerate(g.diff):
        if g.args[n].type.is_list:
            off = g.edge(n, record=True)
            body += [f"for (int64_t _i = 0; _i < {n}.len; _i++)",
                     f"    if ((_st = ops_node_set_next(&_n->base, (int)({off} + _i), {n}.data[_i])) != OPS_OK)",
                     "        goto fail;"]
            continue
        i = g.edge(n, record=True)
        src = "_orig_self" if (inplace and n == "self" and saves_self) else n
        if inplace and n == "self" and not saves_self:
            # self's history before the op (its grad_fn is replaced below)
            src = "self"
        body += [f"if ((_st = ops_node_set_next(&_n->base, {i}, {src})) != OPS_OK)", "    goto fail;"]
    for n in g.saved_tensors:
        src = "_orig_self" if (inplace and n == "self") else n
        body += [f"if ((_st = ops_saved_save(&_n->s_{n}, {src}, false)) != OPS_OK)", "    goto fail;"]
    for n in g.saved_lists:
        body += [f'if ((_st = ops_ag_saved_list_save(&_n->sl_{n}, {n}, "{op}")) != OPS_OK)', "    goto fail;"]
    for n in g.saved_list_meta:
        body += [f'if ((_st = ops_ag_list_meta_save(&_n->ml_{n}, {n}, "{op}")) != OPS_OK)', "    goto fail;"]
    for n in g.saved_meta:
        if n in g.tensor_returns:
            continue
        src = "_orig_self" if (inplace and n == "self" and saves_self) else n
        opt = any(a.name == n and a.type.optional for a in s.arguments)
        body += _meta_lines(n, src, opt)
    body += _record_values(g)
    body += [f"_n->has_{n} = {n} != NULL;" for n in sorted(g.presence)]
    diff_out = g.d.output_differentiability or [True] * len(outs)
    for i, o in enumerate(outs):
        if not diff_out[i]:
            # no history, but the shape of the zeros its gradient slot gets in backward
            body.append(f"ops_node_set_input_meta(&_n->base, {i}, {o});")
            continue
        if inplace:
            # self's new history: the node, or for a view the rebase of its base
            # (runtime/autograd/autograd.c); the node's edge for self reads self before the write
            edge = g.diff.index("self") if "self" in g.diff else -1
            body += [f"if ((_st = ops_autograd_rebase_history(self, &_n->base, {edge})) != OPS_OK)", "    goto fail;"]
            continue
        body += [f"if ((_st = ops_autograd_set_history({o}, &_n->base, {i})) != OPS_OK)", "    goto fail;"]
    if g.list_return and not inplace:
        body += [f"for (int64_t _i = 0; _i < {vec}->len; _i++)",
                 f"    if ((_st = ops_autograd_set_history({vec}->data[_i], &_n->base, (int)_i)) != OPS_OK)",
                 "        goto fail;"]
    for i, n in enumerate(g.tensor_returns):
        o = outs[i]
        if n in g.saved_outputs:
            body += [f"if ((_st = ops_saved_save(&_n->s_{n}, {o}, true)) != OPS_OK)", "    goto fail;"]
        if n in g.saved_meta:
            body += [x.replace(f"({n})", f"({o})") for x in _meta_lines(n, o)]
    body.append("ops_node_release(&_n->base);")
    if saves_self:
        body.append("ops_tensor_release(_orig_self);")
    body.append("return _r;" if single else "return OPS_OK;")
    body.append("fail:")
    body.append("_st = ops_last_status();")
    body.append("ops_node_release(_n == NULL ? NULL : &_n->base);")
    if saves_self:
        body.append("ops_tensor_release(_orig_self);")
    if single:
        body += ["ops_tensor_release(_r);", "return NULL;"]
    elif g.list_return and not inplace:
        body += [f"ops_tensor_vec_release({vec});", "return _st;"]
    elif not inplace:
        for o in outs:
            body += [f"ops_tensor_release({o});", f"{o} = NULL;"]
        body.append("return _st;")
    else:
        body.append("return _st;")
    return {"ret": cnames.return_type(s), "name": "ops_ag_" + s.c_name[4:], "params": params, "body": body,
            "schema": cnames.c_comment(target.schema_text)}


def plan(model: Model):
    """(derivative by functional entry name, NodeGen list); raises SchemaError."""
    functional_by_name: Dict[str, List[NativeFunction]] = {}
    for nf in model.functions:
        if nf.kind == "functional":
            functional_by_name.setdefault(nf.func.name, []).append(nf)
    counts: Dict[str, int] = {}
    gens, errors = [], []
    for d in model.derivatives:
        # an in-place entry with no functional form (normal_, uniform_, random_, ...) takes
        # its own entry, as in PyTorch's derivatives.yaml
        own_inplace = (d.func.kind == "inplace"
                       and (d.func.group is None or d.func.group.functional is None))
        if d.func.kind != "functional" and not own_inplace:
            errors.append(f"{d.loc}: {d.func.name}: derivatives are given for functional entries (the in-place "
                          "form reuses them, unless it has no functional form; out= forms are not "
                          "differentiable)")
            continue
        if d.output_differentiability is not None and not any(d.output_differentiability):
            if d.formulas:
                errors.append(f"{d.loc}: {d.func.name}: no output is differentiable, so it takes no formulas")
            gens.append(NonDiff(d))
            continue
        base = d.func.func.base_name
        idx = counts.get(base, 0)
        counts[base] = idx + 1
        try:
            g = NodeGen(d, model, functional_by_name, idx)
            g.translate()
            gens.append(g)
        except GenError as e:
            errors.append(str(e))
    if errors:
        raise SchemaError(errors)
    return gens


def wrapped_entries(model: Model, gens) -> Dict[int, Tuple[str, Optional[NodeGen]]]:
    """For each entry the glue wraps: (kind of wrapper, the node generator or None)."""
    by_func = {id(g.nf): g for g in gens}
    out = {}
    for nf in model.functions:
        s = nf.func
        if not any(a.type.base == "Tensor" and not a.is_write for a in s.arguments) and s.kind != "inplace":
            continue
        if not any(r.type.base == "Tensor" for r in s.returns):
            continue
        if s.kind == "out":
            out[id(nf)] = ("out", None)
        elif s.kind == "inplace":
            fn = nf.group.functional if nf.group is not None else None
            out[id(nf)] = ("inplace", by_func.get(id(fn)) if fn is not None else by_func.get(id(nf)))
        else:
            out[id(nf)] = ("functional", by_func.get(id(nf)))
    return out


def entry_point_families(model: Model) -> Dict[str, str]:
    """ops_base_<op> and ops_ag_<op> of every entry that has them -> the entry's family
    (codegen/shards.py): the generated C includes the shards it names."""
    plan = shards.plan(model)
    gens = [g for g in model.autograd if isinstance(g, NodeGen)]
    out = {}
    wraps = wrapped_entries(model, gens)
    for nf in model.functions:
        w = wraps.get(id(nf))
        if w is None:
            continue
        fam = plan.of(nf)
        out["ops_base_" + nf.func.c_name[4:]] = fam
        if isinstance(w[1], NodeGen):
            out["ops_ag_" + nf.func.c_name[4:]] = fam
    return out


def generate(model: Model, inputs) -> dict:
    """ops_autograd_gen.c (every node), ops_autograd_gen_<family>.h (the entry points of
    a family's entries: the glue of that family includes it) and ops_autograd_gen.h
    (every shard, and the formula tables)."""
    plan = shards.plan(model)
    gens = [g for g in model.autograd if isinstance(g, NodeGen)]
    nodes = [_node_text(g) for g in gens]
    records = []
    wraps = wrapped_entries(model, gens)
    by_shard = {n: {"bases": [], "records": []} for n in plan.names}
    for nf in model.functions:
        w = wraps.get(id(nf))
        if w is None or not isinstance(w[1], NodeGen):
            continue
        r = _record(w[1], nf, w[0] == "inplace")
        records.append(r)
        by_shard[plan.of(nf)]["records"].append(r)
    for nf in model.functions:
        if id(nf) in wraps:
            s = nf.func
            by_shard[plan.of(nf)]["bases"].append({"ret": cnames.return_type(s), "name": "ops_base_" + s.c_name[4:],
                                                   "params": cnames.param_list(cnames.params(s))})
    banner = render.banner("gen_autograd.py", inputs)
    body = render.render("ops_autograd_gen.c.j2", banner="", includes=[], nodes=nodes, records=records)
    includes = ([f"ops_functions_{f}.h" for f in shards.scan_names(body, shards.public_names(model))]
                + [f"ops_autograd_gen_{f}.h" for f in shards.scan_names(body, entry_point_families(model))])
    out = {
        "ops_autograd_gen.h": render.render("ops_autograd_gen.h.j2", banner=banner, shards=plan.names),
        "ops_autograd_gen.c": render.render("ops_autograd_gen.c.j2", banner=banner, includes=includes,
                                            nodes=nodes, records=records),
    }
    for name, d in by_shard.items():
        out[f"ops_autograd_gen_{name}.h"] = render.render(
            "ops_autograd_gen_shard.h.j2", banner=banner, shard=name,
            guard=f"OPS_AUTOGRAD_GEN_{name.upper()}_H", **d)
    return out

"""Formulas of ops/derivatives.yaml translated into C (codegen/gen_autograd.py): NodeGen
plans one backward node (what it saves, how each formula reads it, the C of its apply
function); NonDiff marks an entry with no differentiable output."""

import ast
import re
from typing import Dict, List, Optional

from . import cnames
from .autograd_exprs import (ACCESSOR_METHODS, MAX_LIST, MAX_STR, RUNTIME_HELPERS, Expr, GenError, _helper_type,
                             _literal, _scalar_of, camel, convert, default_code)
from .model import Argument, Model, NativeFunction

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
        # A formula for several inputs ("input, weight, bias: f(..., grad_input_mask)", as
        # PyTorch's derivatives.yaml) runs once when any of their edges leads somewhere and
        # gives a Tensor[] of one gradient per input, in the key's order;
        # grad_input_mask is the int list of which of them are wanted.
        self.groups: Dict[str, List[str]] = {}
        self.group_of: Dict[str, str] = {}
        for k in list(d.formulas):
            if k != "result" and "," in k:
                f = d.formulas[k]
                call = f.tree.body
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
                        and call.func.id == "not_implemented":
                    continue
                names = [t.strip() for t in k.split(",")]
                if any(self.args[t].type.is_list for t in names):
                    raise GenError(f.loc, f"{self.nf.name}: a formula for several inputs ('{k}') takes "
                                          "Tensor inputs only")
                self.groups[k] = names
                for t in names:
                    self.group_of[t] = k
        self._group: Optional[List[str]] = None  # the group being translated
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
            if n in ("grad", "grads", "grad_input_mask"):
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
            if key in self.group_of:
                gk = self.group_of[key]
                if gk not in self.lines:
                    self._translate_group(gk, f)
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

    def _translate_group(self, gk: str, f) -> None:
        """One formula for the inputs of group gk: a Tensor[] of one gradient per input
        (NULL or an empty list element where it was not wanted)."""
        names = self.groups[gk]
        self._loc = f.loc
        self._group = names
        body: List[str] = []
        e = self._expr(f.tree.body, body)
        self._group = None
        if e.kind != "tensorlist":
            raise GenError(f.loc, f"{self.nf.name}: the formula for '{gk}' gives a {e.kind}, not a Tensor[] "
                                  "(one gradient per input)")
        msg = cnames.c_string(f"{self.nf.func.name}: the formula for '{gk}' gave %lld gradients for "
                              f"{len(names)} inputs")
        body += [f"ops_tensor_list _l = {e.code};",
                 f"if (_l.len != {len(names)}) {{",
                 f"    _st = ops_fail(OPS_ERR_VALUE, {msg}, (long long)_l.len);",
                 "    goto done;",
                 "}"]
        for i, n in enumerate(names):
            if n not in self.diff:
                continue
            off = self.edge(n)
            body += [f"if (_n->next[{off}].node != NULL && _l.data[{i}] != NULL)",
                     f"    _out[{off}] = ops_tensor_retain(_l.data[{i}]);"]
        self.lines[gk] = body

    def group_test(self, gk: str) -> str:
        """C test: an edge of group gk leads somewhere."""
        return " || ".join(f"_n->next[{self.edge(n)}].node != NULL" for n in self.groups[gk] if n in self.diff)

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
        if n == "grad_input_mask":
            if self._group is None:
                self._fail("grad_input_mask is for a formula of several inputs ('input, weight: ...')")
            bits = ", ".join((f"_n->next[{self.edge(t)}].node != NULL" if t in self.diff else "0")
                             for t in self._group)
            return Expr(f"((ops_int_list){{(int64_t[]){{{bits}}}, {len(self._group)}}})", "intlist")
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

#!/usr/bin/env python3
"""Build the NumPy-oracle cases that tests/conformance/runner.c runs.

For every entry of ops/native_functions.yaml that owns or shares a kernel, this script
reads the entry's conformance metadata (ops/conformance/<family>.yaml, docs/conformance.md),
draws seeded inputs for every declared dtype, computes the expected result with NumPy (never
with libops), and writes everything into one binary file.  Undeclared dtypes become
expected-error cases.

    gen_cases.py --yaml ops/native_functions.yaml [--conformance ops/conformance/*.yaml]
                 --out cases.bin [--seed N] [--torch-check]

Besides the value cases (every declared dtype, the default or `shapes:` shapes, special
values, promotion), it writes the `errors:` of the metadata as error cases, and a
property run: a few cases per elementwise entry with random shapes, broadcasts and
dtypes drawn from --seed (fixed by default, so CI is reproducible; printed).

--torch-check (development aid): when PyTorch is installed, also compute every
reference with PyTorch and report where NumPy and PyTorch disagree.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from codegen import conformance as conf_mod  # noqa: E402
from codegen.model import SchemaError, load_model  # noqa: E402
from cases_lib import (  # noqa: E402
    DTYPES, CODE, NP, TOL, T_NONE, T_TENSOR, T_TENSOR_LIST, T_SCALAR, T_INT, T_INT_LIST,
    T_DOUBLE, T_BOOL, T_BOOL_LIST, T_STR, T_DTYPE, T_DEVICE, T_MEMORY_FORMAT, R_COMPARE, R_LIST, F_VALUES,
    F_ERROR, F_LAYOUTS, F_VARIANTS, F_ELEMENTWISE, F_RANDOM, F_SIGNED_ZEROS, F_DTYPE_ERROR,
    F_NO_GRADCHECK, FORM_BITS, DEFAULT_SEED, PROPERTY_CASES, category, result_type,
    to_dtype, Writer, DomainError, sample, scalar_for, tolerance, ELEMENTWISE_SHAPES, SPECIALS,
    special_grid, ERROR_SHAPE, shape_sets, tensor_spec, make_tensor, list_items, random_shapes,
    einsum_dtype, reduction_dtype,
)
from ref_helpers import HELPERS  # noqa: E402


class Gen:
    def __init__(self, model, confs, torch_check, seed):
        self.model = model
        self.confs = confs
        self.seed = seed
        self.w = Writer(seed)
        self.torch = None
        self.mismatches = 0
        if torch_check:
            try:
                import torch  # noqa: F401
                self.torch = torch
            except ImportError:
                print("gen_cases: PyTorch not installed; --torch-check ignored", file=sys.stderr)

    # -- per entry ----------------------------------------------------------------
    def run(self):
        for g in self.model.groups:
            nf = g.functional or g.out or g.inplace
            c = conf_mod.for_entry(self.confs, nf)
            if c is None:
                raise SchemaError([f"{nf.loc}: {nf.name} has no conformance metadata"])
            try:
                if nf.delegate is not None or nf.structured:
                    self.elementwise(nf, c)
                    self.elementwise_samples(nf, c)
                else:
                    self.sampled(nf, c)
                for err in c.errors:
                    if conf_mod.error_applies(err, nf):
                        self.declared_error(nf, c, err)
            except DomainError as e:
                raise SystemExit(f"{c.loc}: {nf.name}: {e}")
        return self.w.bytes()

    @staticmethod
    def forms_of(nf, wanted=conf_mod.FORMS):
        g = nf.group
        bits = 0
        for f in wanted:
            if getattr(g, f) is not None:
                bits |= FORM_BITS[f]
        return bits

    # -- iterator ops -------------------------------------------------------------
    def elementwise(self, nf, c):
        kernel = nf.delegate or nf
        meta = kernel.meta
        args = [a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)]
        tensor_args = [a for a in args if a.type.base == "Tensor"]
        rng = np.random.default_rng(zlib.crc32(nf.name.encode()))
        other_choices = self.arg_choices(nf, c, args)
        n = len([a for a in tensor_args if a.name not in c.fixed_dtypes])
        shapes = (shape_sets(c, [a.name for a in tensor_args]) if c.shapes
                  else ELEMENTWISE_SHAPES.get(len(tensor_args), [[(4, 5)] * len(tensor_args)]))
        for d in DTYPES:
            supported = d in c.dtypes
            for combo in other_choices:
                if not supported:
                    self.error_case(nf, c, rng, d, tensor_args, args, combo, meta)
                    break
                for shp in shapes:
                    self.value_case(nf, c, rng, {a.name: d for a in tensor_args}, tensor_args, args,
                                    combo, meta, shp)
                if c.special and category(d) == 2:
                    self.special_case(nf, c, d, tensor_args, args, combo, meta)
        free = [a for a in tensor_args if a.name not in c.fixed_dtypes]
        promotes = n >= 2 and c.promote and meta in ("binary", "binary_float", "bool_out", "div_mode", "where")
        # mixed dtypes exercise the promotion rules
        if promotes:
            pairs = [("int32", "float32"), ("uint8", "int8"), ("bool", "int64"),
                     ("float16", "float32"), ("int16", "float64"), ("bfloat16", "float16")]
            for da, db in pairs:
                if da in c.dtypes and db in c.dtypes:
                    dts = {free[0].name: da, free[1].name: db}
                    for a in free[2:]:
                        dts[a.name] = da
                    rt = result_type([("dim", x) for x in dts.values()])
                    if rt in c.dtypes:
                        self.value_case(nf, c, rng, dts, tensor_args, args, other_choices[0], meta,
                                        [(3, 4)] * len(tensor_args), label="promotion")
            # a 0-dim float64 tensor does not promote float32 dims; an int64 0-dim does not
            # promote uint8 dims (the result-type groups)
            for dd, dz in (("float32", "float64"), ("uint8", "int64"), ("int32", "float64")):
                if dd in c.dtypes and dz in c.dtypes and len(free) >= 2:
                    dts = {a.name: dd for a in free}
                    dts[free[1].name] = dz
                    shp = [(3, 4) if a.name != free[1].name else () for a in tensor_args]
                    rt = result_type([("dim" if s else "zero", dts.get(a.name, "bool"))
                                      for a, s in zip(tensor_args, shp) if a.name not in c.fixed_dtypes])
                    if rt in c.dtypes:
                        self.value_case(nf, c, rng, dts, tensor_args, args, other_choices[0], meta,
                                        shp, label="zero-dim promotion")
        # the property run: random shapes, broadcasts and dtypes (the runner adds random
        # layouts), seeded by --seed and the entry's name
        if c.property and tensor_args and not c.shapes:
            prng = np.random.default_rng([self.seed, zlib.crc32(nf.name.encode())])
            for _ in range(PROPERTY_CASES):
                d = c.dtypes[int(prng.integers(0, len(c.dtypes)))]
                dts = {a.name: d for a in tensor_args}
                if promotes and prng.random() < 0.35:
                    dts[free[1].name] = c.dtypes[int(prng.integers(0, len(c.dtypes)))]
                combo = other_choices[int(prng.integers(0, len(other_choices)))]
                shp = random_shapes(prng, len(tensor_args))
                self.value_case(nf, c, prng, dts, tensor_args, args, combo, meta, shp, label="random",
                                flags=F_RANDOM)

    def special_case(self, nf, c, d, tensor_args, args, combo, meta):
        """NaN, ±inf, ±0 and a few finite values in every Tensor argument whose dtype
        follows the tested one, every combination of them across those arguments (an
        argument of fixed dtype, where's condition, gets drawn values); its own seed,
        so the drawn cases do not depend on it."""
        special = [a for a in tensor_args if a.name not in c.fixed_dtypes]
        grid = special_grid(len(special))
        n = len(grid[0]) if grid else len(SPECIALS)
        data = {a.name: g for a, g in zip(special, grid)}
        rng = np.random.default_rng([zlib.crc32(nf.name.encode()), 2, CODE[d]])
        self.value_case(nf, c, rng, {a.name: d for a in tensor_args}, tensor_args, args, combo, meta,
                        [(n,)] * len(tensor_args), label="special", data=data)

    def elementwise_samples(self, nf, c):
        """`samples:` of a structured entry: each sample in every declared dtype, run as the
        drawn cases are (same result dtype, reference and families), its tensors of the
        sample's shapes and, where it gives `data:`, of exactly those values (ties, NaN
        or inf in any argument: what the drawn inputs may never hit)."""
        if not c.samples:
            return
        args = [a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)]
        tensor_args = [a for a in args if a.type.base == "Tensor"]
        rng = np.random.default_rng([zlib.crc32(nf.name.encode()), 1])
        base = self.arg_choices(nf, c, args)[0]
        for raw in c.samples:
            smp = conf_mod.sample_args(c, raw)
            # a sample giving a tensor ({data: ..} or a shape) for an argument is for the
            # overloads where it is a Tensor (pow.out's, not pow.Tensor_Scalar's Scalar)
            if any(isinstance(smp.get(a.name), dict) or
                   (a.type.base == "Scalar" and isinstance(smp.get(a.name), list))
                   for a in args if a.type.base != "Tensor"):
                continue
            combo = dict(base, **{k: v for k, v in smp.items() if k not in {a.name for a in tensor_args}})
            pinned = any(isinstance(smp.get(a.name), dict) and "data" in smp[a.name] for a in tensor_args)
            for d in conf_mod.sample_dtypes(c, raw):
                dts, shp, data = {}, [], {}
                for a in tensor_args:
                    shape, dd, vals = tensor_spec(smp.get(a.name), d)
                    dts[a.name], data[a.name] = dd, vals
                    shp.append(tuple(shape))
                self.value_case(nf, c, rng, dts, tensor_args, args, combo, nf.kernel_entry.meta, shp,
                                label="sample", flags=F_NO_GRADCHECK if pinned else 0, data=data)

    def arg_choices(self, nf, c, args):
        """Cartesian product of the non-Tensor argument values to test."""
        names, values = [], []
        for a in args:
            if a.type.base == "Tensor":
                continue
            names.append(a.name)
            if a.name in c.args:
                values.append(c.args[a.name])
            elif a.default is not None:
                values.append([a.default_value])
            else:
                values.append([None])  # chosen per dtype (Scalars) below
        return [dict(zip(names, v)) for v in itertools.product(*values)] or [{}]

    def compute_dtype(self, meta, dts, shapes, nf, scalars):
        operands = []
        for name, d in dts.items():
            operands.append(("dim" if shapes[name] != () else "zero", d))
        for v in scalars:
            if v is None:
                continue
            operands.append(("wrapped", "bool" if isinstance(v, (bool, np.bool_)) else
                             "int64" if isinstance(v, (int, np.integer)) else "float64"))
        rt = result_type(operands)
        if meta in ("unary", "unary_float"):
            rt = list(dts.values())[0]
        if meta in ("binary_float", "unary_float") and category(rt) != 2:
            return "float32", "float32"
        if meta == "bool_out":
            return rt, "bool"
        return rt, rt

    def value_case(self, nf, c, rng, dts, tensor_args, args, combo, meta, shp,
                   label=None, flags=0, data=None):
        kernel = nf.delegate or nf
        delegate_tensor_names = {a.name for a in kernel.func.arguments if a.type.base == "Tensor"}
        shapes, arrays = {}, {}
        for a, s in zip(tensor_args, shp):
            d = c.fixed_dtypes.get(a.name, dts.get(a.name))
            dom = c.domain.get(a.name)
            arr = make_tensor(rng, d, s, dom, (data or {}).get(a.name))
            shapes[a.name], arrays[a.name] = s, (arr, d)
        free_args = [a for a in tensor_args if a.name not in c.fixed_dtypes]
        test_dtype = dts[free_args[0].name] if free_args else "float32"
        values = {}
        for a in args:
            if a.type.base == "Tensor":
                continue
            v = combo.get(a.name)
            if v is None and a.type.base == "Scalar" and not a.type.optional:
                v = scalar_for(test_dtype, c.domain.get(a.name))
            values[a.name] = v
        # Scalars standing where the kernel takes Tensors take part as wrapped numbers;
        # the kernel's own Scalars (alpha) do not promote.
        wrapped = [values[a.name] for a in args
                   if a.type.base == "Scalar" and a.name in delegate_tensor_names]
        if meta == "clamp":
            wrapped += [values.get("min"), values.get("max")]
        free = {k: v[1] for k, v in arrays.items() if k not in c.fixed_dtypes}
        mode = values.get("rounding_mode")
        m = meta if meta != "div_mode" else ("binary_float" if mode is None else "binary")
        comp, out_dt = self.compute_dtype(m, free, shapes, nf, wrapped)
        if comp not in c.dtypes:
            return  # e.g. a wrapped float scalar lifts an int op into an unsupported dtype
        # NumPy evaluation dtype
        if comp in ("float16", "bfloat16"):
            ev = np.float32
        elif comp == "float32" and c.compute == "float64":
            ev = np.float64
        else:
            ev = NP[comp]
        env = dict(HELPERS)
        for name, (arr, d) in arrays.items():
            env[name] = arr if name in c.fixed_dtypes else np.asarray(arr).astype(ev)
        for name, v in values.items():
            if v is not None and not isinstance(v, str) and name not in ("rounding_mode",):
                if isinstance(v, list):
                    env[name] = v
                elif any(a.name == name and a.type.base == "Scalar" for a in args):
                    env[name] = np.asarray(v).astype(ev)[()]
                else:
                    env[name] = v
            else:
                env[name] = v
        ref = c.ref or f"np.{kernel.func.base_name}({', '.join(a.name for a in tensor_args)})"
        with np.errstate(all="ignore"):
            try:
                expected = np.asarray(eval(ref, env))  # noqa: S307 (our own YAML)
            except Exception as e:  # a broken reference is a bug in the YAML
                raise SystemExit(f"{c.loc}: ref of {nf.name} failed for {comp}: {e}")
        want_shape = np.broadcast_shapes(*shapes.values()) if shapes else ()
        if expected.shape != want_shape:
            raise SystemExit(f"{c.loc}: ref of {nf.name} gives shape {expected.shape} for inputs "
                             f"{list(shapes.values())}, not the broadcast shape {want_shape}")
        expected = to_dtype(expected, out_dt) if out_dt != "bool" else expected.astype(np.bool_)
        if self.torch is not None:
            self.check_torch(nf, c, arrays, values, expected, out_dt)
        tol = tolerance(c, out_dt, comp)
        enc = []
        for a in args:
            if a.type.base == "Tensor":
                arr, d = arrays[a.name]
                enc.append(self.w.arg(T_TENSOR, arr, d))
            else:
                enc.append(self.encode(a, values[a.name]))
        lab = f"{nf.name} {label or ''} {' '.join(d for d in dts.values())} shapes {list(shp)}"
        if any(v is not None for v in values.values()):
            lab += " " + ", ".join(f"{k}={v}" for k, v in values.items() if v is not None)
        flags |= F_VALUES | F_LAYOUTS | F_VARIANTS | F_ELEMENTWISE
        if c.signed_zeros:
            flags |= F_SIGNED_ZEROS
        if not c.gradcheck:
            flags |= F_NO_GRADCHECK
        self.w.add(" ".join(lab.split()), nf, flags, test_dtype, tol, enc, expected, out_dt)

    def out_template(self, nf, meta, shapes, dts, d):
        """An out= tensor for an error case: the result's shape where the inputs broadcast,
        of a dtype the result can be cast to, so the out= form fails for the intended reason."""
        try:
            shape = np.broadcast_shapes(*shapes) if shapes else ERROR_SHAPE
        except ValueError:
            shape = shapes[0]
        if meta == "bool_out":
            od = "bool"
        elif meta in ("binary_float", "unary_float", "div_mode") and category(d) != 2:
            od = "float32" if meta != "div_mode" else d
        else:
            od = d
        if not shape or int(np.prod(shape)) == 0:
            shape = ERROR_SHAPE
        return (np.full(shape, 7 if od != "bool" else True), od)

    def error_case(self, nf, c, rng, d, tensor_args, args, combo, meta):
        """An undeclared dtype: rejected with a message naming the op, in every form."""
        enc = []
        for a in args:
            if a.type.base == "Tensor":
                dd = c.fixed_dtypes.get(a.name, d)
                enc.append(self.w.arg(T_TENSOR, sample(rng, dd, ERROR_SHAPE, c.domain.get(a.name)), dd))
            else:
                v = combo.get(a.name)
                if v is None and a.type.base == "Scalar" and not a.type.optional:
                    v = scalar_for(d, c.domain.get(a.name))
                enc.append(self.encode(a, v))
        self.w.add(f"{nf.name} rejects {d}", nf, F_ERROR | F_DTYPE_ERROR, d, (0, 0, 0), enc,
                   error=nf.func.base_name, forms=self.forms_of(nf), out=(np.full(ERROR_SHAPE, 1), d))

    def declared_error(self, nf, c, err):
        """An `errors:` item of the metadata, on entry nf."""
        rng = np.random.default_rng([zlib.crc32(nf.name.encode()), err.index])
        elementwise = nf.delegate is not None or nf.structured
        smp = {} if elementwise else dict(conf_mod.sample_args(c, (c.samples or [{}])[0]))
        default_d = "float32" if "float32" in c.dtypes else c.dtypes[0]
        d = err.dtype.get("*", default_d)
        args = [a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)]
        combo = self.arg_choices(nf, c, args)[0] if elementwise else {}
        enc, shapes, dts = [], [], {}
        for a in args:
            if a.type.is_tensor_list:
                # the first sample's tensors; an error's `shapes:` gives the shape of the last
                # one (a mismatch against the others), its dtype applies to all of them
                specs = list(smp.get(a.name) or [list(ERROR_SHAPE), list(ERROR_SHAPE)])
                if a.name in err.shapes:
                    specs = (specs[:-1] or [list(ERROR_SHAPE)]) + [list(err.shapes[a.name])]
                base = next((x for x in shapes), None)
                specs = [s if s is None else {**(s if isinstance(s, dict) else {"shape": s}),
                                              **({"dtype": err.dtype[a.name]} if a.name in err.dtype else {})}
                         for s in specs]
                items = list_items(rng, specs, d, c.domain.get(a.name), base)
                shapes.extend(tuple(x[0].shape) for x in items if x is not None)
                enc.append(self.w.arg(T_TENSOR_LIST, items))
                continue
            if a.type.base == "Generator":
                enc.append(self.w.arg(T_NONE, None))
                continue
            if a.type.base == "Tensor":
                shape, dd, data = tensor_spec(smp.get(a.name), d, ERROR_SHAPE)
                if a.name in err.shapes:
                    shape, data = err.shapes[a.name], None
                shape = tuple(shape)
                dd = err.dtype.get(a.name, c.fixed_dtypes.get(a.name, dd))
                if a.name in err.fill:
                    arr = to_dtype(np.full(shape, err.fill[a.name]), dd)
                else:
                    arr = make_tensor(rng, dd, shape, c.domain.get(a.name), data)
                if a.type.optional and a.name not in err.shapes and a.name not in err.fill \
                        and a.name in err.args:
                    enc.append(self.w.arg(T_NONE, None))
                    continue
                shapes.append(shape)
                dts[a.name] = dd
                enc.append(self.w.arg(T_TENSOR, arr, dd))
                continue
            if a.name in err.args:
                v = err.args[a.name]
            elif a.name in smp:
                v = smp[a.name]
            elif elementwise:
                v = combo.get(a.name)
                if v is None and a.type.base == "Scalar" and not a.type.optional:
                    v = scalar_for(d, c.domain.get(a.name))
            else:
                v = a.default_value if a.default is not None else None
                if a.name == "dtype":
                    v = d
            enc.append(self.encode(a, v))
        meta = (nf.delegate or nf).meta
        out = None
        if nf.group.out is not None:
            if elementwise:
                out = self.out_template(nf, meta, shapes, dts, d)
            else:
                # one template per out= argument of the out= form (several returns: one
                # each, with the return's fixed dtype where `returns:` gives one)
                out = []
                names = nf.group.functional.func.return_names if nf.group.functional else ()
                for i, oa in enumerate(nf.group.out.func.out_arguments):
                    spec = smp.get(oa.name)
                    rname = names[i] if i < len(names) else oa.name
                    od = spec if isinstance(spec, str) else c.returns.get(rname, {}).get("dtype", d)
                    dof = nf.group.out.out_dtype_of  # out_checks: out= has that argument's dtype
                    if dof is not None and not isinstance(spec, str):
                        od = err.dtype.get(dof, c.fixed_dtypes.get(dof, d))
                    out.append((np.full(ERROR_SHAPE, 1), od))
        what = ", ".join([f"{k}={list(v)}" for k, v in err.shapes.items()] +
                         [f"{k}={v!r}" for k, v in err.args.items()] +
                         [f"{k} filled with {v}" for k, v in err.fill.items()])
        self.w.add(f"{nf.name} error {err.index} {d} {what}", nf, F_ERROR, d, (0, 0, 0), enc,
                   error=err.match, forms=self.forms_of(nf, err.forms), out=out)

    def encode(self, a, v):
        t = a.type
        if v is None or t.base == "Generator":  # a Generator? is always None (default generator)
            return self.w.arg(T_NONE, None)
        if t.base == "Scalar":
            return self.w.arg(T_SCALAR, v)
        if t.base in ("int", "SymInt"):
            return self.w.arg(T_INT_LIST if t.is_list else T_INT, v)
        if t.base == "float":
            return self.w.arg(T_DOUBLE, v)
        if t.base == "bool":
            return self.w.arg(T_BOOL_LIST if t.is_list else T_BOOL, v)
        if t.base == "str":
            return self.w.arg(T_STR, v)
        if t.base == "ScalarType":
            return self.w.arg(T_DTYPE, v)
        if t.base == "Device":
            return self.w.arg(T_DEVICE, v)
        if t.base == "MemoryFormat":
            return self.w.arg(T_MEMORY_FORMAT, v)
        raise SystemExit(f"gen_cases: cannot encode {a}")

    # -- everything else: explicit samples ---------------------------------------
    def sampled(self, nf, c):
        rng = np.random.default_rng(zlib.crc32(nf.name.encode()))
        samples = list(c.samples)
        if c.shapes:
            names = [a.name for a in nf.func.arguments if a.type.base == "Tensor"
                     and not (a.kwarg_only and a.is_write)]
            combos = [dict(zip(c.args, v)) for v in itertools.product(*c.args.values())] or [{}]
            for shp in shape_sets(c, names):
                for combo in combos:
                    samples.append({**combo, **{n: list(s) for n, s in zip(names, shp)}})
        if not samples:
            raise SystemExit(f"{c.loc}: {nf.name} needs `samples:` or `shapes:` in its conformance")
        has_dtype_arg = any(a.name == "dtype" for a in nf.func.arguments)
        for smp in samples:
            for d in conf_mod.sample_dtypes(c, smp):  # a sample's `dtypes:` narrows them
                self.sample_case(nf, c, rng, conf_mod.sample_args(c, smp), d, has_dtype_arg)

    def sample_case(self, nf, c, rng, smp, d, has_dtype_arg):
        values, enc, arrays, lists = {}, [], {}, {}
        out_dt = None
        first = next((a for a in nf.func.arguments if a.type.is_tensor), None)
        base_shape = tensor_spec(smp.get(first.name), d)[0] if first is not None else None
        for a in nf.func.arguments:
            v = smp.get(a.name, a.default_value if a.default is not None else None)
            if a.type.base == "Generator":  # the runner always passes None
                values[a.name] = None
                enc.append(self.w.arg(T_NONE, None))
                continue
            if a.type.is_tensor_list:  # a list of element specs (shape, {shape, dtype, data}, null)
                if v is None and a.type.optional and a.name in smp:  # Tensor[]? given None
                    values[a.name] = None
                    enc.append(self.w.arg(T_NONE, None))
                    continue
                items = list_items(rng, v if v is not None else [[3, 4], [3, 4]], d, c.domain.get(a.name),
                                   base_shape)
                lists[a.name] = [x for x in items if x is not None]
                values[a.name] = [None if x is None else x[0] if x[1] not in ("float16", "bfloat16")
                                  else x[0].astype(np.float32) for x in items]
                enc.append(self.w.arg(T_TENSOR_LIST, items))
                continue
            if a.type.base == "Tensor":
                if v is None and a.type.optional and a.name in smp:  # Tensor? given None
                    values[a.name] = None
                    enc.append(self.w.arg(T_NONE, None))
                    continue
                shape, dd, data = tensor_spec(v, d)
                if a.is_write and a.kwarg_only:  # out=: an empty tensor of the dtype
                    arr = np.zeros((0,), dtype=NP[dd])
                    out_dt = dd
                else:
                    arr = make_tensor(rng, dd, shape, c.domain.get(a.name), data)
                arrays[a.name] = (arr, dd)
                values[a.name] = arr if dd not in ("float16", "bfloat16") else arr.astype(np.float32)
                enc.append(self.w.arg(T_TENSOR, arr, dd))
                continue
            if a.name == "dtype" and "dtype" not in smp:
                v = d
            values[a.name] = v
            enc.append(self.encode(a, v))
        env = dict(HELPERS)
        env.update(values)
        rule_dt = self.factory_dtype(nf, smp, values, arrays, d, out_dt, lists)
        with np.errstate(all="ignore"):
            try:
                got = eval(c.ref, env)  # noqa: S307
            except Exception as e:
                raise SystemExit(f"{c.loc}: ref of {nf.name} failed: {e}")
        rets = self.expected_returns(nf, c, got, rule_dt)
        tol = tolerance(c, rule_dt)
        flags = (F_VALUES if c.values else 0) | F_VARIANTS
        if (arrays or lists) and nf.kind == "functional" and c.layouts:
            flags |= F_LAYOUTS
        if c.signed_zeros:
            flags |= F_SIGNED_ZEROS
        # explicit `data:` pins edge values (ties, zeros) where derivatives are undefined
        pinned = any(isinstance(v, dict) and "data" in v for v in smp.values()) or any(
            isinstance(v, list) and any(isinstance(x, dict) and "data" in x for x in v) for v in smp.values())
        if not c.gradcheck or pinned:
            flags |= F_NO_GRADCHECK
        self.w.add(f"{nf.name} {d} " + ", ".join(f"{k}={v}" for k, v in smp.items()), nf, flags, d, tol, enc,
                   rets=rets)

    @staticmethod
    def expected_returns(nf, c, got, rule_dt):
        """The ref's value as the case's returns: one array per Tensor return (a tuple, in
        schema order, when there are several), a list of arrays for a Tensor[] return.
        Each return has the case's result dtype unless `returns:` fixes it."""
        rets = [r for r in nf.func.returns]
        names = nf.func.return_names
        where = f"{c.loc}: ref of {nf.name}"
        if len(rets) > 1:
            if not isinstance(got, (tuple, list)) or len(got) != len(rets):
                raise SystemExit(f"{where} must give a tuple of {len(rets)} arrays ({', '.join(names)}), "
                                 f"got {type(got).__name__}")
            values = list(got)
        else:
            values = [got]
        out = []
        for r, name, v in zip(rets, names, values):
            opt = c.returns.get(name, {})
            dt = opt.get("dtype", rule_dt)
            rflags = R_COMPARE if opt.get("compare", True) else 0
            if r.type.is_list:
                if not isinstance(v, (list, tuple)):
                    raise SystemExit(f"{where}: the Tensor[] return '{name}' must be a list of arrays, "
                                     f"got {type(v).__name__}")
                out.append(([to_dtype(np.asarray(x), dt) for x in v], dt, rflags | R_LIST))
            else:
                out.append((to_dtype(np.asarray(v), dt), dt, rflags))
        return out

    @staticmethod
    def factory_dtype(nf, smp, values, arrays, d, out_dt, lists=None):
        if out_dt is not None:
            return out_dt
        dt = values.get("dtype")
        if dt is not None:
            return dt
        if nf.func.base_name == "einsum":
            return einsum_dtype(values["equation"], lists["tensors"])
        rd = reduction_dtype(nf.func.base_name, arrays)
        if rd is not None:
            return rd
        if lists and "self" not in arrays:
            # cat, stack, ...: the elements' dtypes promoted (PyTorch's result_type)
            return result_type([("dim", dd) for items in lists.values() for _, dd in items])
        if nf.func.base_name == "to":  # to.dtype names it; to.device may not; to.other: other's
            return arrays["other"][1] if "other" in arrays else arrays["self"][1]
        if "self" in arrays:
            return arrays["self"][1]
        firsts = [a.name for a in nf.func.arguments if a.type.base == "Tensor" and a.name in arrays
                  and not a.is_write]
        if firsts and nf.func.base_name not in ("full", "arange"):
            return arrays[firsts[0]][1]  # input, weight: the first tensor's dtype
        if nf.func.base_name == "full":
            v = values["fill_value"]
            return "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float32"
        if nf.func.base_name == "arange":
            nums = [values.get(k) for k in ("start", "end", "step") if values.get(k) is not None]
            return "int64" if all(isinstance(x, int) and not isinstance(x, bool) for x in nums) else "float32"
        return "float32"

    # -- development cross-check --------------------------------------------------
    def check_torch(self, nf, c, arrays, values, expected, out_dt):
        torch = self.torch
        tdt = {"bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
               "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
               "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64}
        targs = {}
        for name, (arr, d) in arrays.items():
            targs[name] = torch.tensor(np.asarray(arr, dtype=np.float32 if d == "bfloat16" else None)).to(tdt[d])
        kw = {k: v for k, v in values.items() if v is not None}
        fn = getattr(torch, nf.func.base_name, None)
        if fn is None:
            return
        pos = [targs[a.name] for a in nf.func.arguments if a.name in targs and not a.kwarg_only]
        kwargs = {a.name: kw[a.name] for a in nf.func.arguments if a.name in kw and a.name not in targs}
        if nf.func.arguments and nf.func.arguments[0].type.base == "Scalar":
            pos = [kw.pop(nf.func.arguments[0].name)] + pos  # pow(2, t), remainder(2, t), ...
            kwargs.pop(nf.func.arguments[0].name, None)
        try:
            got = fn(*pos, **kwargs)
        except Exception as e:  # noqa: BLE001
            if "not implemented for 'Half'" in str(e) or "not implemented for 'BFloat16'" in str(e):
                return  # PyTorch 1.13's CPU lacks these; newer PyTorch has them
            print(f"torch-check: {nf.name}: PyTorch raised {e}", file=sys.stderr)
            self.mismatches += 1
            return
        if str(got.dtype).replace("torch.", "") != out_dt:
            print(f"torch-check: {nf.name}: dtype {got.dtype} vs ours {out_dt} "
                  f"({[d for _, d in arrays.values()]}, {values})", file=sys.stderr)
            self.mismatches += 1
            return
        g = got.float().numpy() if out_dt in ("bfloat16",) else got.numpy()
        e = np.asarray(expected)
        if g.shape != e.shape:
            print(f"torch-check: {nf.name}: shape {g.shape} vs {e.shape}", file=sys.stderr)
            self.mismatches += 1
            return
        rtol, atol = TOL.get(out_dt, (0, 0))
        if out_dt in conf_mod.FLOATING:
            ok = np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol * 4, atol=atol * 4,
                             equal_nan=True)
            # the runner compares the signs of zeros (F_SIGNED_ZEROS): NumPy and PyTorch must agree
            gz, ez = g.astype(np.float64), e.astype(np.float64)
            both = (gz == 0) & (ez == 0)
            if c.signed_zeros and np.any(np.signbit(gz[both]) != np.signbit(ez[both])):
                print(f"torch-check: {nf.name} {[d for _, d in arrays.values()]} {values}: the signs of "
                      f"zeros differ (set signed_zeros: false)", file=sys.stderr)
                self.mismatches += 1
        else:
            ok = np.array_equal(g, e)
        if not ok:
            print(f"torch-check: {nf.name} {[d for _, d in arrays.values()]} {values}: values differ\n"
                  f"  torch {g.ravel()[:8]}\n  numpy {e.ravel()[:8]}", file=sys.stderr)
            self.mismatches += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yaml", required=True)
    ap.add_argument("--conformance", nargs="*", default=None,
                    help="ops/conformance/*.yaml (default: the conformance/ folder beside --yaml)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED,
                    help="seed of the property run's random shapes and dtypes")
    ap.add_argument("--torch-check", action="store_true")
    ns = ap.parse_args()
    try:
        model = load_model(ns.yaml, conformance=ns.conformance)
        confs = conf_mod.load(model)
    except SchemaError as e:
        for m in e.messages if hasattr(e, "messages") else [str(e)]:
            print(m, file=sys.stderr)
        return 1
    gen = Gen(model, confs, ns.torch_check, ns.seed)
    data = gen.run()
    old = None
    if os.path.exists(ns.out):
        with open(ns.out, "rb") as f:
            old = f.read()
    if old != data:
        with open(ns.out, "wb") as f:
            f.write(data)
    print(f"gen_cases: {len(gen.w.cases)} cases, {len(data) // 1024} KiB, seed {ns.seed}"
          + (f", {gen.mismatches} PyTorch mismatches" if gen.torch else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The validated model of ops/native_functions.yaml and ops/conformance/*.yaml.

The YAML is composed once with libyaml (yaml.CSafeLoader) so every entry and every
key keeps its line; entries become typed objects (FunctionSchema, Argument, Type,
Return, NativeFunction, NativeFunctionsGroup) that the generators read and never
re-check.  Every rule of docs/codegen.md is enforced here, and a violation is
reported as `file:line: reason` (all of them, in file order), never as a traceback.
The conformance files (one per op family, keyed by entry name) are attached to the
entries they name by load_conformance(); codegen/conformance.py checks their content.

The code lives in one module per seam, and this module re-exports all of it (so
`codegen.model` stays the one name the generators and tests import):

  model_types.py  errors (Loc, SchemaError, Errors) and the typed model
  grammar.py      the schema grammar (parse_schema, defaults, check_kind)
  yaml_input.py   the YAML read as untrusted input (read_text, compose, mapping_items)
  entries.py      entries into the Model (load_model), suggest, the conformance files
  kernel_scan.py  which dispatch kernels the kernel sources define (check_kernels)
"""
# flake8: noqa: F401

from .model_types import (
    INT64_MAX, INT64_MIN,
    Annotation, Argument, BASE_TYPES, COMPOSITE_KEY, C_KEYWORDS, DISPATCH_KEYS, DTYPE_NAMES, Errors,
    FunctionSchema, ITER_MAX_INPUTS, ITER_MAX_STRS, Loc, MAX_LIST_SIZE, MEMORY_FORMAT_NAMES,
    META_FAMILIES, Model, NativeFunction, NativeFunctionsGroup, RETURN_BASES, Return, SchemaError, Type,
    _ALLOWED_TYPES, _Fail, _excerpt)
from .grammar import (
    GrammarError, _ARG_NAME_RE, _DEVICE_RE, _FLOAT_RE, _IDENT, _INT_RE, _NAME_RE, _STR_RE, _TYPE_RE,
    _check_ident, _double, _int64, _parse_argument, _parse_default, _parse_return, _parse_type,
    _split_top, check_kind, parse_schema)
from .yaml_input import (
    ENTRY_KEYS, MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES, MAX_SCALAR_CHARS, OUT_CHECK_KEYS, _CONTROL_RE,
    _SCALAR_TAGS, _TAG_BOOL, _TAG_FLOAT, _TAG_INT, _TAG_MAP, _TAG_NULL, _TAG_SEQ, _TAG_STR, _check_key,
    _check_scalar, _compose_root, _str_list, _yaml_fail, compose, mapping_items, node_loc, read_text,
    scalar_str)
from .entries import (
    _args_match, _build_model, _entry_keys, _kernel_signature, _parse_entry, _parse_out_checks,
    conformance_files, load_conformance, load_model, suggest)
from .kernel_scan import _STRIP_RE, _blank, check_kernels, defined_functions, definitions_by_source

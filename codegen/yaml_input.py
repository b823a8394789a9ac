"""The YAML files read as untrusted input: bounds, tags and keys, each node with its line.

Part of the model (codegen/model.py re-exports it)."""

import re
from typing import Any, Dict, List, Optional, Tuple

import yaml

from .model_types import INT64_MAX, INT64_MIN, Errors, Loc, SchemaError, _Fail, _excerpt


# ---- YAML ------------------------------------------------------------------

_TAG_STR = "tag:yaml.org,2002:str"
_TAG_BOOL = "tag:yaml.org,2002:bool"
_TAG_INT = "tag:yaml.org,2002:int"
_TAG_FLOAT = "tag:yaml.org,2002:float"
_TAG_NULL = "tag:yaml.org,2002:null"
_TAG_SEQ = "tag:yaml.org,2002:seq"
_TAG_MAP = "tag:yaml.org,2002:map"
_SCALAR_TAGS = frozenset((_TAG_STR, _TAG_BOOL, _TAG_INT, _TAG_FLOAT, _TAG_NULL))

ENTRY_KEYS = ("func", "structured", "meta", "structured_delegate", "dispatch", "variants",
              "device_check", "tags", "out_checks", "dtypes", "check", "reduce", "scan")
OUT_CHECK_KEYS = ("no_overlap", "no_partial_overlap", "dtype")

# Bounds on what the generator reads.  The schema is input a contributor (or a hostile
# patch) writes, so it is refused with `file:line` before anything can grow without
# bound: the real files are 0.3 MB, nest 8 collections deep and hold no string longer
# than 600 characters, so these limits only ever stop a broken or malicious file.
MAX_FILE_BYTES = 4 << 20
MAX_DEPTH = 64            # nested collections (libyaml slows with the square of the depth; the
                          # constructor and the checks of conformance.py recurse per level)
MAX_NODES = 200_000       # scalars and collections in one file (the real one: 40,000)
MAX_SCALAR_CHARS = 1 << 16

# Control characters a YAML escape (\0, \x01, \e, ...) can put into a string: none has
# a meaning in a schema, and they would reach C sources and comments.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def read_text(path: str) -> str:
    """The file's text: at most MAX_FILE_BYTES of UTF-8 (SchemaError otherwise)."""
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise SchemaError([f"{path}:1: the file is larger than {MAX_FILE_BYTES} bytes"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SchemaError([f"{path}:{line}: not UTF-8 text: byte 0x{data[e.start]:02x} at column {col} "
                           f"({e.reason})"]) from None


def _yaml_fail(path: str, mark: Any, msg: str) -> SchemaError:
    return SchemaError([f"{path}:{mark.line + 1}: {msg}"])


def _check_scalar(path: str, loader: Any, ev: Any, tag: str, explicit: bool) -> None:
    """A scalar's tag must be a JSON-like one, its text bounded and free of control
    characters, and a number must fit the C type it can reach (int64, double)."""
    v = ev.value
    if tag not in _SCALAR_TAGS:
        raise _yaml_fail(path, ev.start_mark, f"YAML tag '{tag}' is not supported (strings, numbers, "
                                              "booleans, null, lists and mappings only)")
    if len(v) > MAX_SCALAR_CHARS:
        raise _yaml_fail(path, ev.start_mark, f"a string of {len(v)} characters (the limit is "
                                              f"{MAX_SCALAR_CHARS})")
    m = _CONTROL_RE.search(v) if ev.style == '"' else None
    if m:
        raise _yaml_fail(path, ev.start_mark, f"control character U+{ord(m.group(0)):04X} in a string")
    if explicit and tag != _TAG_STR and loader.resolve(yaml.ScalarNode, v, (True, False)) != tag:
        # `!!int abc`: the constructor would raise on it later
        raise _yaml_fail(path, ev.start_mark, f"'{_excerpt(v)}' is not a valid {tag.rsplit(':', 1)[1]}")
    if tag == _TAG_INT and len(v) >= 12:  # shorter spellings all fit in int64
        # 0b and 64 binary digits is the longest int64 (and int() refuses 4300 digits)
        x = loader.construct_yaml_int(yaml.ScalarNode(tag, v)) if len(v.replace("_", "")) <= 67 else None
        if x is None or not INT64_MIN <= x <= INT64_MAX:
            raise _yaml_fail(path, ev.start_mark, f"integer {_excerpt(v)} does not fit in int64")
    elif tag == _TAG_FLOAT and ("e" in v or "E" in v or len(v) > 300):  # could overflow
        x = loader.construct_yaml_float(yaml.ScalarNode(tag, v))
        if x in (float("inf"), float("-inf")):
            raise _yaml_fail(path, ev.start_mark, f"number {_excerpt(v)} is out of the range of a double "
                                                  "(write .inf for infinity)")


def _compose_root(path: str, loader: Any) -> Any:
    """Build the node tree from libyaml's events, iteratively (PyYAML's C composer
    recurses once per nesting level and overflows the C stack), refusing anchors and
    aliases (a few lines of aliases expand into gigabytes, or into a cycle) and
    everything past the bounds above, each with the line of the node at fault.  The
    tree is the one yaml.CSafeLoader.get_single_node() builds (same tags and marks)."""
    get = loader.get_event
    resolve = loader.resolve
    resolved: Dict[Tuple[str, Any], str] = {}  # plain scalars repeat: resolve each spelling once
    ScalarEvent, AliasEvent = yaml.ScalarEvent, yaml.AliasEvent
    SequenceStartEvent, SequenceEndEvent, MappingEndEvent = (yaml.SequenceStartEvent, yaml.SequenceEndEvent,
                                                             yaml.MappingEndEvent)
    ScalarNode, SequenceNode, MappingNode = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
    get()  # StreamStartEvent
    if isinstance(get(), yaml.StreamEndEvent):  # else DocumentStartEvent
        return None
    # one [node, pending key, {key: line}] per open collection
    stack: List[list] = []
    root = None
    count = 0
    while True:
        ev = get()
        cls = ev.__class__
        if cls is SequenceEndEvent or cls is MappingEndEvent:
            stack.pop()[0].end_mark = ev.end_mark  # attached to its parent when it started
            continue
        if cls is yaml.DocumentEndEvent:
            break
        if cls is AliasEvent:
            raise _yaml_fail(path, ev.start_mark, f"YAML alias '*{_excerpt(ev.anchor)}': anchors and aliases "
                                                  "are not allowed (write the value out)")
        if ev.anchor is not None:
            raise _yaml_fail(path, ev.start_mark, f"YAML anchor '&{_excerpt(ev.anchor)}': anchors and aliases "
                                                  "are not allowed (write the value out)")
        count += 1
        if count > MAX_NODES:
            raise _yaml_fail(path, ev.start_mark, f"more than {MAX_NODES} YAML values in one file")
        tag = ev.tag
        if cls is ScalarEvent:
            v = ev.value
            explicit = not (tag is None or tag == "!")
            if not explicit:
                k = (v, ev.implicit)
                tag = resolved.get(k)
                if tag is None:
                    tag = resolved[k] = resolve(ScalarNode, v, ev.implicit)
            # control characters can only come from the escapes of a double-quoted string
            if explicit or tag != _TAG_STR or ev.style == '"' or len(v) > MAX_SCALAR_CHARS:
                _check_scalar(path, loader, ev, tag, explicit)
            node = ScalarNode(tag, v, ev.start_mark, ev.end_mark, style=ev.style)
        else:
            kind, want = ((SequenceNode, _TAG_SEQ) if cls is SequenceStartEvent else (MappingNode, _TAG_MAP))
            if tag is None or tag == "!":
                tag = resolve(kind, None, ev.implicit)
            if tag != want:
                raise _yaml_fail(path, ev.start_mark, f"YAML tag '{_excerpt(tag)}' is not supported here (a "
                                                      f"{'list' if want == _TAG_SEQ else 'mapping'} takes none)")
            if len(stack) >= MAX_DEPTH:
                raise _yaml_fail(path, ev.start_mark, f"lists and mappings nested more than {MAX_DEPTH} deep")
            node = kind(tag, [], ev.start_mark, None, flow_style=ev.flow_style)
        if stack:
            top = stack[-1]
            parent = top[0]
            if parent.__class__ is SequenceNode:
                parent.value.append(node)
            elif top[1] is None:
                _check_key(path, top[2], node)
                top[1] = node
            else:
                parent.value.append((top[1], node))
                top[1] = None
        else:
            root = node
        if cls is not ScalarEvent:
            stack.append([node, None, {} if kind is MappingNode else None])
    ev = get()
    if not isinstance(ev, yaml.StreamEndEvent):
        raise _yaml_fail(path, ev.start_mark, "a second YAML document (the file holds one)")
    return root


def _check_key(path: str, seen: Dict[str, int], node: Any) -> None:
    """A mapping key is a string, once per mapping (PyYAML would keep the last silently)."""
    if node.__class__ is not yaml.ScalarNode or node.tag != _TAG_STR:
        raise _yaml_fail(path, node.start_mark, "a mapping key must be a string")
    first = seen.get(node.value)
    if first is not None:
        raise _yaml_fail(path, node.start_mark, f"duplicate key '{_excerpt(node.value)}' (first on line {first})")
    seen[node.value] = node.start_mark.line + 1



def compose(path: str, text: str) -> Tuple[Any, Any]:
    """Compose a YAML document with libyaml; returns (loader, root node or None).
    Every problem is a SchemaError with `file:line`."""
    if len(text) > MAX_FILE_BYTES:
        raise SchemaError([f"{path}:1: the file is larger than {MAX_FILE_BYTES} bytes"])
    loader = yaml.CSafeLoader(text)
    try:
        node = _compose_root(path, loader)
    except yaml.MarkedYAMLError as e:
        loader.dispose()
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise SchemaError([f"{path}:{line}: YAML syntax error: {e.problem or e.context}"]) from None
    except yaml.reader.ReaderError as e:
        loader.dispose()
        # libyaml reports a byte offset into the UTF-8 text
        line = text.encode("utf-8", "surrogatepass")[:e.position].count(b"\n") + 1
        raise SchemaError([f"{path}:{line}: YAML error: {e.reason}"]) from None
    except yaml.YAMLError as e:
        loader.dispose()
        raise SchemaError([f"{path}:1: YAML error: {e}"]) from None
    except SchemaError:
        loader.dispose()
        raise
    return loader, node


def node_loc(path: str, node: Any) -> Loc:
    return Loc(path, node.start_mark.line + 1)


def mapping_items(path: str, node: Any, errors: Errors, what: str) -> Optional[List[Tuple[str, Loc, Any]]]:
    """(key, key line, value node) of a mapping node; None (error recorded) if not a mapping."""
    if not isinstance(node, yaml.MappingNode):
        errors.add(node_loc(path, node), f"{what} must be a mapping")
        return None
    out, seen = [], {}
    for k, v in node.value:
        kl = node_loc(path, k)
        if not isinstance(k, yaml.ScalarNode) or k.tag != _TAG_STR:
            errors.add(kl, f"keys of {what} must be strings")
            return None
        if k.value in seen:
            errors.add(kl, f"duplicate key '{k.value}' (first on line {seen[k.value].line})")
            return None
        seen[k.value] = kl
        out.append((k.value, kl, v))
    return out


def scalar_str(path: str, node: Any, errors: Errors, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag != _TAG_STR:
        errors.add(node_loc(path, node), f"{what} must be a string")
        raise _Fail()
    return node.value


def _str_list(path: str, node: Any, errors: Errors, what: str) -> List[str]:
    """`a, b` or a YAML list of strings."""
    if isinstance(node, yaml.SequenceNode):
        return [scalar_str(path, n, errors, what).strip() for n in node.value]
    return [s.strip() for s in scalar_str(path, node, errors, what).split(",")]

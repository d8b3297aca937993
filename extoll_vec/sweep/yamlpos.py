"""YAML loading that remembers where every key and value is (for error messages).

load(text, path) returns (data, positions): plain Python data as yaml.safe_load gives it, and
positions mapping a key path (a tuple of mapping keys and list indices) to (line, column),
1-based, of that entry's key (mappings) or item (lists). A duplicate key is an error (PyYAML
silently keeps the last one).
"""
from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import SpecError

Positions = dict[tuple, tuple[int, int]]


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _walk(node: Node, path: tuple, positions: Positions, constructor: SafeConstructor,
          file: str | None) -> None:
    if isinstance(node, MappingNode):
        seen: dict[Any, Node] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, ScalarNode):
                line, col = _mark(knode)
                raise SpecError(file, ".".join(map(str, path)) or "spec",
                                "mapping keys must be plain scalars", line, col)
            key = constructor.construct_object(knode, deep=True)
            if key in seen:
                line, col = _mark(knode)
                raise SpecError(file, ".".join(map(str, path + (key,))),
                                f"duplicate key (first at line {_mark(seen[key])[0]})", line, col)
            seen[key] = knode
            positions[path + (key,)] = _mark(knode)
            _walk(vnode, path + (key,), positions, constructor, file)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            positions[path + (i,)] = _mark(item)
            _walk(item, path + (i,), positions, constructor, file)


def load(text: str, path: str | None = None) -> tuple[Any, Positions]:
    """Parse one YAML document; SpecError (with line and column) for invalid YAML."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise SpecError(path, "spec", f"not valid YAML ({problem})", line, col) from None
    positions: Positions = {}
    if node is None:
        return None, positions
    constructor = SafeConstructor()
    positions[()] = _mark(node)
    _walk(node, (), positions, constructor, path)
    try:
        data = constructor.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise SpecError(path, "spec", f"not valid YAML ({getattr(exc, 'problem', exc)})",
                        line, col) from None
    return data, positions

"""Derived fields of a sweep spec: small arithmetic expressions over a point's configuration.

An expression sees every config section as a name (``protocol.window``, ``topology.dims[0]``),
``seed``, ``nodes`` (the topology's node count) and the functions min, max, abs, int, float,
round, len. Allowed syntax: numbers, strings, arithmetic (+ - * / // % **), comparisons,
and/or/not, ``a if cond else b``, lists and indexing. Nothing else is evaluated (no attribute
access beyond config fields, no imports, no calls of other functions, no string formatting with
%), so a spec cannot run code.

Evaluation is bounded, so that no expression can exhaust memory or time (each bound is named
in the message that refuses an expression): the text (MAX_TEXT characters, MAX_DEPTH levels of
nesting), exponents (MAX_EXPONENT), integers (MAX_INT: the engine's 64-bit integers), floats
(finite), strings and lists (MAX_SIZE characters or elements, nested lists counted in full,
checked before a repetition ``'a' * n`` is built) and the time one evaluation takes
(MAX_SECONDS).
"""
from __future__ import annotations

import ast
import functools
import math
import operator
import time
from typing import Any, Mapping

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
        ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
        ast.NotIn: lambda a, b: a not in b}

MAX_TEXT = 2000              # characters of an expression
MAX_DEPTH = 100              # levels of nesting of its syntax tree
MAX_EXPONENT = 64            # |b| of a ** b
MAX_INT = 2**63 - 1          # |n| of any integer it computes (the engine's int64)
MAX_SIZE = 10_000            # characters of a string, elements of a list (nested: all of them)
MAX_SECONDS = 1.0            # one evaluation
MAX_ROUND_DIGITS = 64        # |ndigits| of round(x, ndigits)


def _round(x, *ndigits):
    if ndigits and isinstance(ndigits[0], int) and abs(ndigits[0]) > MAX_ROUND_DIGITS:
        raise ExprError(f"round to {brief(ndigits[0])} digits: at most {MAX_ROUND_DIGITS}")
    return round(x, *ndigits)


FUNCTIONS = {"min": min, "max": max, "abs": abs, "int": int, "float": float, "round": _round,
             "len": len}


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated (message says why)."""


def brief(value: Any, limit: int = 60) -> str:
    """repr of a value for a message, cut to about `limit` characters (huge integers too)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    return _cut(repr(value), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _size(value: Any, cap: int = MAX_SIZE) -> int:
    """Characters of a string, elements of a list (nested lists: all their elements; a mapping
    counts its values), else 1; stops counting above `cap`."""
    if isinstance(value, str):
        return len(value)
    if not isinstance(value, (list, tuple, Mapping)):
        return 1
    total = 0
    for item in (value.values() if isinstance(value, Mapping) else value):
        total += max(1, _size(item, cap - total))
        if total > cap:
            break
    return total


def _check(value: Any) -> Any:
    """`value` if it is within the bounds, else ExprError naming the bound."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise ExprError(f"integer too large: {brief(value)} (at most 2**63 - 1 = {MAX_INT}"
                            " in absolute value, the engine's 64-bit integers)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ExprError(f"result {value} is not a finite number")
    elif isinstance(value, (str, list, tuple)) and _size(value) > MAX_SIZE:
        what = "string" if isinstance(value, str) else "list"
        raise ExprError(f"{what} too long (more than {MAX_SIZE} "
                        f"{'characters' if what == 'string' else 'elements'})")
    return value


def _repeat_size(a: Any, b: Any) -> None:
    """Refuse ``seq * n`` whose result would exceed MAX_SIZE, before building it."""
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and n > 0:
            if _size(seq) * n > MAX_SIZE:
                what = "string" if isinstance(seq, str) else "list"
                raise ExprError(f"{what} repeated {brief(n)} times is too long (more than "
                                f"{MAX_SIZE} {'characters' if what == 'string' else 'elements'})")


def _eval(node: ast.AST, env: Mapping[str, Any], deadline: float) -> Any:
    if time.monotonic() > deadline:
        raise ExprError(f"took longer than {MAX_SECONDS:g} s")
    if isinstance(node, ast.Expression):
        return _eval(node.body, env, deadline)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return _check(node.value)
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise ExprError(f"unknown name {node.id!r}; allowed: {', '.join(sorted(env))}")
    if isinstance(node, ast.Attribute):
        base = _eval(node.value, env, deadline)
        if not isinstance(base, Mapping):
            raise ExprError(f"cannot take .{node.attr} of {brief(base)}")
        if node.attr not in base:
            raise ExprError(f"unknown field {node.attr!r}; allowed: {', '.join(base)}")
        return base[node.attr]
    if isinstance(node, ast.Subscript):
        return _eval(node.value, env, deadline)[_eval(node.slice, env, deadline)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return _check([_eval(e, env, deadline) for e in node.elts])
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        a, b = _eval(node.left, env, deadline), _eval(node.right, env, deadline)
        if isinstance(node.op, ast.Pow) and _number(b) and abs(b) > MAX_EXPONENT:
            raise ExprError(f"exponent too large: {brief(b)} (at most {MAX_EXPONENT})")
        if isinstance(node.op, ast.Mult):
            _repeat_size(a, b)
        if isinstance(node.op, ast.Mod) and isinstance(a, str):
            raise ExprError("string formatting with % is not supported")
        return _check(_BIN[type(node.op)](a, b))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(_UNARY[type(node.op)](_eval(node.operand, env, deadline)))
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, env, deadline) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare) and all(type(o) in _CMP for o in node.ops):
        left = _eval(node.left, env, deadline)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, env, deadline)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env, deadline) else node.orelse, env,
                     deadline)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS and not node.keywords):
        return _check(FUNCTIONS[node.func.id](*(_eval(a, env, deadline) for a in node.args)))
    if isinstance(node, ast.Call):
        fn = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)[:40]
        raise ExprError(f"unknown function {fn!r}; allowed: {', '.join(FUNCTIONS)} "
                        "(positional arguments only)")
    raise ExprError(f"unsupported syntax: {type(node).__name__} ({ast.unparse(node)[:40]})")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _depth(tree: ast.AST) -> int:
    """Levels of nesting of a syntax tree (iteratively: a deep tree must not recurse here)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> ast.Expression:
    """The syntax tree of `text`, within MAX_TEXT and MAX_DEPTH; ExprError otherwise (kept:
    a sweep evaluates the same derived expressions at every point; nothing changes a tree)."""
    if len(text) > MAX_TEXT:
        raise ExprError(f"expression too long ({len(text)} characters; at most {MAX_TEXT})")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"invalid expression {brief(text, 200)} ({_cut(str(exc.msg), 120)})"
                        ) from None
    except (MemoryError, RecursionError, ValueError):
        raise ExprError(f"invalid expression {brief(text, 200)} (too complex)") from None
    if _depth(tree) > MAX_DEPTH:
        raise ExprError(f"expression nested too deeply (more than {MAX_DEPTH} levels)")
    return tree


def evaluate(text: str, env: Mapping[str, Any], seconds: float = MAX_SECONDS) -> Any:
    """Value of expression `text` with the names in `env` (plus FUNCTIONS), within the bounds
    above (and within `seconds`, when less than MAX_SECONDS)."""
    tree = _parse(text)
    deadline = time.monotonic() + min(seconds, MAX_SECONDS)
    try:
        return _check(_eval(tree, {**FUNCTIONS, **env}, deadline))
    except ExprError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError,
            MemoryError, RecursionError) as exc:
        raise ExprError(f"{brief(text, 200)} failed: {type(exc).__name__}: "
                        f"{_cut(str(exc), 120)}") from None


def names_in(text: str) -> set[str]:
    """The bare names an expression refers to (empty for one that does not parse or exceeds
    the bounds: evaluate reports that)."""
    try:
        tree = _parse(text)
    except ExprError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}

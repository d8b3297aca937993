"""Derived fields of a sweep spec: small arithmetic expressions over a point's configuration.

An expression sees every config section as a name (``protocol.window``, ``topology.dims[0]``),
``seed``, ``nodes`` (the topology's node count) and the functions min, max, abs, int, float,
round, len. Allowed syntax: numbers, strings, arithmetic (+ - * / // % **), comparisons,
and/or/not, ``a if cond else b``, lists and indexing. Nothing else is evaluated (no attribute
access beyond config fields, no imports, no calls of other functions), so a spec cannot run code.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Mapping

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
        ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
        ast.NotIn: lambda a, b: a not in b}
FUNCTIONS = {"min": min, "max": max, "abs": abs, "int": int, "float": float, "round": round,
             "len": len}


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated (message says why)."""


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise ExprError(f"unknown name {node.id!r}; allowed: {', '.join(sorted(env))}")
    if isinstance(node, ast.Attribute):
        base = _eval(node.value, env)
        if not isinstance(base, Mapping):
            raise ExprError(f"cannot take .{node.attr} of {base!r}")
        if node.attr not in base:
            raise ExprError(f"unknown field {node.attr!r}; allowed: {', '.join(base)}")
        return base[node.attr]
    if isinstance(node, ast.Subscript):
        return _eval(node.value, env)[_eval(node.slice, env)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        a, b = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.Pow) and abs(b) > 64:
            raise ExprError("exponent too large (at most 64)")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, env))
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, env) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare) and all(type(o) in _CMP for o in node.ops):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, env)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env) else node.orelse, env)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS and not node.keywords):
        return FUNCTIONS[node.func.id](*(_eval(a, env) for a in node.args))
    if isinstance(node, ast.Call):
        fn = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        raise ExprError(f"unknown function {fn!r}; allowed: {', '.join(FUNCTIONS)} "
                        "(positional arguments only)")
    raise ExprError(f"unsupported syntax: {type(node).__name__} ({ast.unparse(node)[:40]})")


def evaluate(text: str, env: Mapping[str, Any]) -> Any:
    """Value of expression `text` with the names in `env` (plus FUNCTIONS)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"invalid expression {text!r} ({exc.msg})") from None
    try:
        return _eval(tree, {**FUNCTIONS, **env})
    except ExprError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError) as exc:
        raise ExprError(f"{text!r} failed: {type(exc).__name__}: {exc}") from None


def names_in(text: str) -> set[str]:
    """The bare names an expression refers to (empty for one that does not parse: evaluate
    reports that)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}

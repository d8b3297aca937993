"""Registries of plug-ins: routing functions, topologies and workloads (and, with more hooks,
protocols: protocols/registry.py) are each a record in a module of their package's REGISTERED
list, loaded on first use: config.py imports the registries to know the allowed names, before
any plug-in module (which may import config's siblings) is imported."""
from __future__ import annotations

import importlib
from typing import Any


class Registry:
    """name -> record for one kind of plug-in (`what`, for messages): the records of every
    module in `modules` under attribute `attr`, in order; a name registered twice is an error."""

    def __init__(self, what: str, modules: tuple[str, ...], attr: str):
        self.what, self.modules, self.attr = what, modules, attr
        self._records: dict[str, Any] = {}

    def records(self) -> dict[str, Any]:
        if not self._records:
            out: dict[str, Any] = {}
            for mod in self.modules:
                for rec in getattr(importlib.import_module(mod), self.attr):
                    assert rec.name not in out, f"{self.what} {rec.name!r} registered twice"
                    out[rec.name] = rec
            self._records.update(out)
        return self._records

    def names(self) -> tuple[str, ...]:
        return tuple(self.records())

    def get(self, name: str) -> Any:
        try:
            return self.records()[name]
        except KeyError:
            raise ValueError(f"unknown {self.what} {name!r}") from None

"""The protocols' public names, kept for their users (config.py, analysis/, benchmarks/): a view
of the registry (registry.py), which holds the records."""
from __future__ import annotations

from .registry import Protocol, protocol, protocol_with_id, registered  # noqa: F401

CATALOGUE: dict[str, Protocol] = registered()
PROTOCOL_NAMES = tuple(CATALOGUE)
CREDIT_PROTOCOLS = tuple(p.name for p in CATALOGUE.values() if p.credit)

"""What every workload generator shares: the phase marks they write and the check of their
integer arguments. A module of its own so that generators import it, never each other."""
from __future__ import annotations

from .program import I32_MAX

# Phase marks written by the generators (marks[rank, index]).
MARK_START = 0   # the rank starts its workload
MARK_DONE = 1    # the rank finished its communication phase (before any final barrier)


def int_arg(name: str, value, lo: int, hi: int = I32_MAX) -> int:
    """value as an int, ValueError unless it is a whole number in lo..hi."""
    v = int(value)
    if v != value or not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return v

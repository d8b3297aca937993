"""Exceptions raised outside the kernels (kernels only set error flags)."""
from __future__ import annotations


class ExtollVecError(Exception):
    """Base class: the CLI prints these as one line and exits with code 2."""


class ConfigError(ExtollVecError, ValueError):
    """An invalid parameter: names the dotted field and what is allowed."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")

    def __reduce__(self):  # picklable (Dask ships exceptions from workers)
        return (type(self), (self.field, self.message))


class SimulationError(ExtollVecError, RuntimeError):
    """A kernel raised an error flag (deadlock, no progress, overflow, broken invariant)."""

    def __init__(self, message: str, flags: int = 0, point: int | None = None):
        self.flags = flags
        self.point = point
        super().__init__(message)

    def __reduce__(self):  # keep flags and point when Dask ships it from a worker
        return (type(self), (str(self), self.flags, self.point))


class StoreError(ExtollVecError):
    """A result store that cannot be written or read: names the path and what is wrong."""

    def __init__(self, path, message: str):
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")

    def __reduce__(self):
        return (type(self), (self.path, self.message))


class SpecError(ConfigError):
    """An invalid sweep specification: names the file position, the key and what is wrong.

    str() is ``FILE:LINE:COL: KEY: MESSAGE`` (position parts omitted when unknown)."""

    def __init__(self, path, key: str, message: str, line: int | None = None,
                 column: int | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.column = column
        where = ":".join(str(x) for x in (self.path, line, column) if x is not None)
        ValueError.__init__(self, f"{where + ': ' if where else ''}{key}: {message}")
        self.field = key
        self.message = message

    def __reduce__(self):
        return (type(self), (self.path, self.field, self.message, self.line, self.column))

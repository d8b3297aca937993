"""Exceptions raised outside the kernels (kernels only set error flags)."""


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


class StoreError(ExtollVecError):
    """A result store that cannot be written or read: names the path and what is wrong."""

    def __init__(self, path, message: str):
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")

    def __reduce__(self):
        return (type(self), (self.path, self.message))

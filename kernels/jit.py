"""The decorators of every kernel: one place for the compile options.

- ``entry``: a kernel the engine calls from Python (sim.advance). It takes the
  State and Topology tuples and hands the kernels a reference to them (byref.py). Its
  library is optimised without the loop vectorizer (inlined.py).
  ``nogil=True``: one call can run for minutes (a chunk of cycles of a batch of 1024-rank
  points); holding the GIL that long stops every other thread of the process, and a Dask
  worker whose heartbeat thread is stopped for minutes is declared dead and restarted, its
  batch rerun. Kernels touch no Python object, so releasing it is safe.
- ``inner``: a kernel called only from other kernels, inlined into its callers
  (``forceinline``). Its IR is only linked into theirs (inlined.py): Numba would otherwise
  optimise and generate machine code for every such helper with its whole call tree, once
  per level above it, code that never runs. No CPython or C wrapper: nothing calls it from
  Python.
- ``outlined``: a function of its own, not inlined, for a rare path called from many places
  (the pair table's search), so that one copy serves every call site.
  It takes the arrays it reads, not the State: a reference passed to a call keeps the whole
  State in memory in the caller (byref.py). ``forceinline=False`` is explicit: Numba
  otherwise inherits its caller's ``forceinline``.
- ``analysis``: a static analysis called from Python that allocates its result (progstats),
  so it keeps Numba's reference counting.

``entry`` and ``analysis`` have ``cache=True``: a second process loads the machine code instead
of compiling (the cache directory is chosen in ``kernels/__init__.py``); the others have no
machine code of their own to cache. All have ``error_model="numpy"`` (integer division by
zero does not raise from inside a kernel); all but ``analysis`` ``_nrt=False``: kernels never
allocate, and without reference counting a State access costs no atomic operations.
"""
from numba import njit

from extoll_vec.kernels.inlined import EntryCompiler, InlineOnlyCompiler, OutlinedCompiler

_KERNEL = dict(_nrt=False, error_model="numpy")
_NOT_FROM_PYTHON = dict(cache=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)

entry = njit(cache=True, nogil=True, pipeline_class=EntryCompiler, **_KERNEL)
inner = njit(forceinline=True, pipeline_class=InlineOnlyCompiler, **_NOT_FROM_PYTHON, **_KERNEL)
outlined = njit(forceinline=False, pipeline_class=OutlinedCompiler, **_NOT_FROM_PYTHON,
                **_KERNEL)
analysis = njit(cache=True, error_model="numpy")

"""The engine: the loop around the kernels, configs -> batch state -> chunks of cycles ->
checked results. simulate(configs) groups configs of equal array shapes into batches (one
kernel call advances a whole batch), checks the kernels' error flags and the conservation
invariants after every run, and returns an xarray Dataset with one `point` per config.

    params.py       config -> the kernels' parameter vector and topology tables (units, once)
    sizing.py       shape keys (who may share a batch) and the size of every state dimension
    batch.py        Batch (build, run), run_batch, simulate
    results.py      finished state -> the result variables of dataset.SCHEMA
    diagnostics.py  error flags -> one readable error; conservation checks after a run
"""
from .batch import Batch, run_batch, simulate
from .diagnostics import check_invariants, describe_error
from .params import cycles
from .results import RESULT_VARIABLES
from .sizing import (NONE_MAILBOX_CAP, ProgramFigures, batch_key, mailbox_capacity, shape_key,
                     state_sizes)

__all__ = ["Batch", "run_batch", "simulate", "shape_key", "batch_key", "cycles", "ProgramFigures",
           "state_sizes", "mailbox_capacity", "check_invariants", "describe_error",
           "RESULT_VARIABLES", "NONE_MAILBOX_CAP"]

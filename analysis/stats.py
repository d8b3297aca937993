"""Statistics shared by the targets' tables and the report's plots."""
from __future__ import annotations

import math

import numpy as np


def se_of_mean(v) -> float:
    """Standard error of the mean of replicates; NaN for fewer than two, 0 for equal ones
    (where np.std leaves a rounding residue of the mean, about 1e-11 of it)."""
    a = np.asarray(v, dtype=float)
    if len(a) < 2:
        return math.nan
    return 0.0 if a.min() == a.max() else float(a.std(ddof=1) / math.sqrt(len(a)))


def mean_and_se(v) -> tuple[float, float]:
    """The mean of replicates and its standard error (se_of_mean); NaN, NaN for none."""
    a = np.asarray(v, dtype=float)
    if len(a) == 0:
        return math.nan, math.nan
    return float(a.mean()), se_of_mean(a)

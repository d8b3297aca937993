"""The Myrinet family (Bhoedjang, Rühl and Bal, "Efficient Multicast on Myrinet Using Link-Level
Flow Control"): LFC's NI-level credits, multicast trees and deadlock recovery (lfc.py, trees.py)
and FM/MC's central credit manager, the paper's comparison (fmmc.py). Their hooks: kernels/lfc/."""
from .fmmc import PROTOCOLS as _FMMC
from .lfc import PROTOCOLS as _LFC

PROTOCOLS = _LFC + _FMMC

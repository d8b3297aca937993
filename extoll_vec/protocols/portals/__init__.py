"""The Portals 4 family (Schneider et al., "Fast Networks and Slow Memories"): FECN/BECN
congestion control (fecn.py) and the receiver-driven rendezvous at network level (rdrp.py).
Their hooks: kernels/portals/."""
from .fecn import PROTOCOLS as _FECN
from .rdrp import PROTOCOLS as _RDRP

PROTOCOLS = _FECN + _RDRP

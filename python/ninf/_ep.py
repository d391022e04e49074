"""ninf.ep: the NAS EP kernel of the standard library (stubs/idl/ep.idl)."""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ._calls import run

__all__ = ["EPResult", "ep"]


class EPResult(NamedTuple):
    """ep's result: the sums of the Gaussian deviates and the counts of
    pairs per square annulus."""
    sx: float
    sy: float
    q: np.ndarray  # 10 counts, float64 as the kernel keeps them


def ep(m: int, *, server: Optional[str] = None) -> EPResult:
    """NAS EP on 2^m pairs (class S: m = 24, W: 25, A: 28). Minutes for
    m >= 30; Ctrl-C stops it, on the server too."""
    q = np.zeros(10)
    sx, sy = run("ep", (m, None, None, q), server=server)
    return EPResult(sx, sy, q)

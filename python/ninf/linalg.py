"""numpy.linalg's solve and eigh, computed by a Ninf server.

    x = ninf.linalg.solve(A, b)        # LAPACK dgesv on the server
    w, v = ninf.linalg.eigh(S)         # LAPACK dsyev on the server

They take what numpy.linalg takes (any array-like; C or Fortran order; the
inputs are copied, never changed), return what it returns, and raise
numpy.linalg.LinAlgError where it does: a singular matrix, eigenvalues that
do not converge. Real float64 matrices only (the standard library has no
complex routines); stacks of matrices are refused. ``server="host:port"``
picks the server; by default, the default server.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np
from numpy.linalg import LinAlgError

from ._calls import run

__all__ = ["EighResult", "LinAlgError", "eigh", "solve"]


class EighResult(NamedTuple):
    """eigh's result, as numpy 2's: unpacks as (w, v)."""
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray


def _square_real(a: np.ndarray, what: str) -> int:
    # numpy.linalg's own checks and messages (_assert_stacked_2d,
    # _assert_stacked_square), for a single matrix.
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional"
                          + (" (ninf.linalg takes one matrix, not a stack)" if a.ndim > 2
                             else ""))
    if a.shape[0] != a.shape[1]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    if a.dtype.kind == "c":
        raise TypeError(f"{what}: complex matrices are not served (the standard library "
                        f"has only real LAPACK routines)")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what}: array of {a.dtype} given, a real matrix is needed")
    return a.shape[0]


def _lapack_info(routine: str, info: int) -> None:
    if info < 0:  # our own argument list is wrong: a bug here, not the user's
        raise RuntimeError(f"{routine} refused its argument {-info} (ninf.linalg bug)")


def solve(a, b, *, server: Optional[str] = None) -> np.ndarray:
    """The solution x of a x = b, as numpy.linalg.solve (LAPACK dgesv).

    a: (n, n); b: (n,) or (n, k). Returns a new float64 array shaped as b.
    Raises LinAlgError("Singular matrix") for a singular a.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    n = _square_real(a, "solve")
    if b.dtype.kind == "c":
        raise TypeError("solve: complex right-hand sides are not served")
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(f"solve: b has shape {b.shape}; a is {n} x {n}, so b must be "
                         f"({n},) or ({n}, k)")
    x = np.array(b, dtype=np.float64, order="F")  # dgesv writes x over b
    if n == 0:
        return x
    lu = np.array(a, dtype=np.float64, order="F")  # and the LU factors over a
    nrhs = 1 if b.ndim == 1 else b.shape[1]
    ipiv = np.empty(n, dtype=np.int32)
    info = run("dgesv", (n, nrhs, lu, n, ipiv, x, n, None), server=server)
    _lapack_info("dgesv", info)
    if info > 0:  # U(info, info) is exactly zero
        raise LinAlgError("Singular matrix")
    return x


def eigh(a, UPLO: str = "L", *, server: Optional[str] = None) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric
    matrix, as numpy.linalg.eigh (LAPACK dsyev). Only the UPLO triangle
    of a is read. Raises LinAlgError when the eigenvalues do not converge.
    """
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    a = np.asarray(a)
    n = _square_real(a, "eigh")
    if n == 0:
        return EighResult(np.empty(0), np.empty((0, 0)))
    v = np.array(a, dtype=np.float64, order="F")  # dsyev writes the vectors over a
    w = np.empty(n)
    lwork = max(1, 3 * n - 1)  # dsyev's minimum; the workspace stays on the server
    info = run("dsyev", ("V", UPLO, n, v, n, w, None, lwork, None), server=server)
    _lapack_info("dsyev", info)
    if info > 0:
        raise LinAlgError("Eigenvalues did not converge")
    return EighResult(w, v)

"""numpy.linalg's solve and eigh, computed by a Ninf server.

    x = ninf.linalg.solve(A, b)        # LAPACK dgesv (sgesv) on the server
    w, v = ninf.linalg.eigh(S)         # LAPACK dsyevd (ssyevd) on the server

They take what numpy.linalg takes (any array-like; C or Fortran order; the
inputs are copied, never changed), return what it returns, in its dtype
(float32 when every input is float32, else float64), by the LAPACK drivers
numpy uses, and raise numpy.linalg.LinAlgError where it does: a singular
matrix, eigenvalues that do not converge. Real matrices only (the standard
library has no complex routines); stacks of matrices are refused.
``server="host:port"`` picks the server; by default, the default server.
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


def _result_type(*arrays: np.ndarray) -> type:
    # numpy.linalg's rule: single precision when every input is, else double
    # (integers and float16 included).
    return np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64


def _lapack_info(routine: str, info: int) -> None:
    if info < 0:  # our own argument list is wrong: a bug here, not the user's
        raise RuntimeError(f"{routine} refused its argument {-info} (ninf.linalg bug)")


def solve(a, b, *, server: Optional[str] = None) -> np.ndarray:
    """The solution x of a x = b, as numpy.linalg.solve (LAPACK dgesv, or
    sgesv for float32).

    a: (n, n); b: (n,) or (n, k). Returns a new array shaped as b, float32
    when a and b are, else float64. Raises LinAlgError("Singular matrix")
    for a singular a.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    n = _square_real(a, "solve")
    if b.dtype.kind == "c":
        raise TypeError("solve: complex right-hand sides are not served")
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(f"solve: b has shape {b.shape}; a is {n} x {n}, so b must be "
                         f"({n},) or ({n}, k)")
    dtype = _result_type(a, b)
    routine = "sgesv" if dtype == np.float32 else "dgesv"
    x = np.array(b, dtype=dtype, order="F")  # ?gesv writes x over b
    if n == 0:
        return x
    lu = np.array(a, dtype=dtype, order="F")  # and the LU factors over a
    nrhs = 1 if b.ndim == 1 else b.shape[1]
    ipiv = np.empty(n, dtype=np.int32)
    info = run(routine, (n, nrhs, lu, n, ipiv, x, n, None), server=server)
    _lapack_info(routine, info)
    if info > 0:  # U(info, info) is exactly zero
        raise LinAlgError("Singular matrix")
    return x


def eigh(a, UPLO: str = "L", *, server: Optional[str] = None) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric
    matrix, as numpy.linalg.eigh: LAPACK's divide and conquer, dsyevd (ssyevd
    for float32), the driver numpy uses. Only the UPLO triangle of a is
    read. Raises LinAlgError when the eigenvalues do not converge.
    """
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    a = np.asarray(a)
    n = _square_real(a, "eigh")
    dtype = _result_type(a)
    if n == 0:
        return EighResult(np.empty(0, dtype=dtype), np.empty((0, 0), dtype=dtype))
    routine = "ssyevd" if dtype == np.float32 else "dsyevd"
    v = np.array(a, dtype=dtype, order="F")  # ?syevd writes the vectors over a
    w = np.empty(n, dtype=dtype)
    # ?syevd's minimum workspaces with vectors (LAPACK's documentation); both
    # stay on the server.
    lwork = 1 + 6 * n + 2 * n * n
    liwork = 3 + 5 * n
    info = run(routine, ("V", UPLO, n, v, n, w, None, lwork, None, liwork, None), server=server)
    _lapack_info(routine, info)
    if info > 0:
        raise LinAlgError("Eigenvalues did not converge")
    return EighResult(w, v)

"""Ninf for Python: remote numerical routines, called like local ones.

    import numpy as np, ninf
    x = ninf.linalg.solve(A, b)                    # numpy.linalg.solve, remotely
    w, v = ninf.linalg.eigh(S)
    sx, sy, q = ninf.ep(24)

    a = np.asfortranarray(A)                       # the routines themselves
    ipiv = np.empty(n, dtype=np.int32)
    info = ninf.call("dgesv", n, 1, a, n, ipiv, b, n, None)
    ipiv, info = ninf.call("dgesv", n, 1, A, n, None, b, n, None,
                           convert=True, out="alloc")

Arguments are the routine's, in the interface's order (``ninf.describe``
or ``ninfd --list`` shows it). IN scalars are Python numbers or strings;
arrays are numpy arrays of exactly the IDL type, sent and filled in place
without a copy (``convert=True`` copies what does not fit). An OUT argument
given as None is returned: a single value (``info``) as a number, an array
with ``out="alloc"``. A WORK argument is None.

Ctrl-C cancels a call of the main thread (the remote routine too) and
raises KeyboardInterrupt. The server is NINF_SERVER (host:port),
``set_server``, ``server=``, or the default of ``initialize(config)``.
Calls release the GIL. See docs/python.md.
"""
from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Optional

from . import _calls, _ninf, linalg
from ._ep import EPResult, ep
from ._interface import Expression, Function, Param, describe, functions
from ._ninf import ArgumentError, Error
from ._version import __version__

__all__ = [
    "ArgumentError", "EPResult", "Error", "Expression", "Function", "Handle", "Param",
    "__version__",
    "call", "call_async", "describe", "ep", "finalize", "functions", "initialize", "linalg",
    "set_server",
]

# The Ninf error codes (ninf_errors.h), for comparing with Error.code.
_codes = {k: v for k, v in vars(_ninf).items() if k.startswith("NINF_")}
globals().update(_codes)
__all__ += sorted(_codes)


def call(name: str, *args: Any, convert: bool = False, out: Optional[str] = None,
         server: Optional[str] = None) -> Any:
    """Calls routine `name` and waits for it.

    Returns the values of the OUT arguments passed as None: None if there
    are none, the value if one, a tuple if several (in parameter order).

    convert=True: arrays of another dtype, in C order or strided, and lists,
    are copied into arrays of the IDL type (same_kind casts only; integers
    range-checked); the results of OUT and INOUT arrays are copied back into
    the arrays given. Without it such arrays are refused: nothing is copied
    behind your back.

    out="alloc": an OUT array given as None is allocated (zeros, shaped by
    the interface's dimensions, column-major) and returned with the other
    OUT values. Without it None stands only for a single value.

    server="host:port": this server instead of the default one.

    Raises ArgumentError for arguments that do not match the interface
    (nothing is sent), Error for any other failure, and KeyboardInterrupt
    when Ctrl-C stopped the call (the remote routine is stopped too).
    """
    return _calls.run(name, args, None, server, convert, out)


def call_async(name: str, *args: Any, convert: bool = False, out: Optional[str] = None,
               server: Optional[str] = None) -> "Future[Any]":
    """Starts a call and returns a concurrent.futures.Future of its result.

    Every error, an ArgumentError or a server that cannot be reached
    included, comes from the future's result(), never from call_async
    itself. The arrays must stay alive and untouched until the future is
    done (the future holds them). cancel() stops the remote call;
    concurrent.futures' wait() and as_completed() work on these futures.
    """
    return _calls.start(name, args, None, server, convert, out)


class Handle:
    """A GridRPC function handle: one function bound to one server.

        with ninf.Handle("dgesv", server="127.0.0.1:3000") as h:
            info = h.call(n, 1, a, n, ipiv, b, n, None)

    server None is the default server. On a server that keeps handles'
    executables, repeated calls skip the start-up.
    """

    def __init__(self, name: str, server: Optional[str] = None):
        self.name = name
        self.server = server
        self._h = _ninf.Handle(name, server)

    def call(self, *args: Any, convert: bool = False, out: Optional[str] = None) -> Any:
        """As ninf.call, on this handle's server."""
        return _calls.run(self.name, args, self._h, self.server, convert, out)

    def call_async(self, *args: Any, convert: bool = False,
                   out: Optional[str] = None) -> "Future[Any]":
        """As ninf.call_async, on this handle's server."""
        return _calls.start(self.name, args, self._h, self.server, convert, out)

    def describe(self) -> Function:
        """The function's interface on this handle's server."""
        return describe(self.name, self.server)

    def close(self) -> None:
        """Releases the handle once the calls already made have started
        (they then keep what they need and run to their end)."""
        _calls.starting.drain()
        self._h.close()

    def __enter__(self) -> "Handle":
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.close()
        return False


def set_server(address: str) -> None:
    """The default server: "host:port", "host" or "[v6addr]:port", as -server."""
    _ninf.set_server(address)


def initialize(config: Optional[str] = None) -> None:
    """grpc_initialize: reads a client config file (config/client.toml)."""
    _ninf.initialize(config)


def finalize() -> None:
    """grpc_finalize: cancels every call still running and waits for them
    (the calls already made are started first, so none escapes)."""
    _calls.starting.drain()
    _ninf.finalize()

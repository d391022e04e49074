"""Ninf for Python: remote numerical routines, called like local ones.

    import numpy as np, ninf
    a = np.asfortranarray(A)            # Ninf arrays are column-major
    b = np.array(B, order="F")
    ipiv = np.empty(n, dtype=np.int32)
    info = ninf.call("dgesv", n, 1, a, n, ipiv, b, n, None)

Arguments are LAPACK's, in the interface's order (``ninfd --list`` prints
the signatures). IN scalars are Python numbers or strings; arrays are numpy
arrays (anything with the buffer protocol) of exactly the IDL type, sent and
filled in place without a copy. An OUT pointer such as ``info`` can be a
one-element array or None: the values of the OUT arguments given as None are
what the call returns (None, one value, or a tuple).

The server is NINF_SERVER (host:port), ``set_server``, or the default of
``initialize(config)``. Calls release the GIL, so threads and
``call_async`` futures run calls at the same time. See docs/python.md.
"""
from concurrent.futures import Future
import threading

from . import _ninf
from ._ninf import ArgumentError, Error

__all__ = [
    "ArgumentError", "Error", "Handle", "call", "call_async", "finalize",
    "initialize", "set_server",
]

# The Ninf error codes (ninf_errors.h), for comparing with Error.code.
_codes = {k: v for k, v in vars(_ninf).items() if k.startswith("NINF_")}
globals().update(_codes)
__all__ += sorted(_codes)


def call(name, *args):
    """Calls routine `name` on the default server and waits for it.

    Returns the values of the OUT arguments passed as None: None if there
    are none, the value if one, a tuple if several. Raises ArgumentError for
    arguments that do not match the interface (nothing is sent), Error for
    any other failure.
    """
    return _ninf.call(name, args)


class _CallFuture(Future):
    """A Future whose cancel() also stops the remote call."""

    def __init__(self, pending):
        super().__init__()
        self._pending = pending

    def cancel(self):
        if not super().cancel():
            return False
        self._pending.cancel()
        return True


def _finish(future, pending):
    try:
        result = pending.wait()
    except BaseException as e:  # the call's error goes to the future
        if not future.cancelled():
            try:
                future.set_exception(e)
            except Exception:  # cancelled meanwhile
                pass
        return
    if not future.cancelled():
        try:
            future.set_result(result)
        except Exception:  # cancelled meanwhile
            pass


def _start(name, args, handle):
    # Arguments are checked here, before anything is sent: a mismatch raises
    # at once rather than through the future.
    pending = _ninf.start(name, args, handle)
    future = _CallFuture(pending)
    threading.Thread(target=_finish, args=(future, pending), daemon=True,
                     name=f"ninf-{name}").start()
    return future


def call_async(name, *args):
    """Starts a call and returns a concurrent.futures.Future of its result.

    The arrays must stay alive and untouched until the future is done (the
    future holds them). cancel() stops the remote call; concurrent.futures'
    wait() and as_completed() work on these futures.
    """
    return _start(name, args, None)


class Handle:
    """A GridRPC function handle: one function bound to one server.

        with ninf.Handle("dgesv", server="127.0.0.1:3000") as h:
            info = h.call(n, 1, a, n, ipiv, b, n, None)

    server None is the default server. On a server that keeps handles'
    executables, repeated calls skip the start-up.
    """

    def __init__(self, name, server=None):
        self.name = name
        self._h = _ninf.Handle(name, server)

    def call(self, *args):
        return _ninf.call(self.name, args, self._h)

    def call_async(self, *args):
        return _start(self.name, args, self._h)

    def close(self):
        self._h.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def set_server(address):
    """The default server: "host:port", "host" or "[v6addr]:port", as -server."""
    _ninf.set_server(address)


def initialize(config=None):
    """grpc_initialize: reads a client config file (config/client.toml)."""
    _ninf.initialize(config)


def finalize():
    """grpc_finalize."""
    _ninf.finalize()

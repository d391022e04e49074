"""How a call runs: the opt-in conversions and allocations, and the
futures of call_async.

A blocking call runs in the calling thread, in libninf without the GIL.
Ctrl-C reaches it there: the extension sets libninf's interrupt check
(Ninf_binding_set_interrupt), which libninf asks while a call of the main
thread waits (every 100 ms, and at once when a signal interrupted the
wait). The check runs Python's signal handlers; when one raises
(KeyboardInterrupt), libninf resets the call's connection, ninfd kills the
executable, and the call raises that exception. No thread is made for it.

call_async runs the whole call (interface fetch and argument checks
included) on a thread of its own, so that its errors come only from
result().
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _ninf
from ._interface import ExpressionError, Function, describe


def split_name(name: str) -> Tuple[Optional[str], str]:
    """("host:port", "dgesv") for "ninf://host:port/dgesv" (libninf's
    ResolveName); (None, name) for a bare name."""
    if not name.startswith("ninf://"):
        return None, name
    rest = name[len("ninf://"):]
    slash = rest.rfind("/") if rest.startswith("unix:") else rest.find("/")
    if slash <= 0:
        return None, name  # malformed: libninf says so when it is called
    return rest[:slash], rest[slash + 1:]


def full_name(name: str, server: Optional[str]) -> str:
    """The name libninf calls: `server` (when given) names the server."""
    if server is None:
        return name
    if name.startswith("ninf://"):
        raise ValueError(f"'{name}' names its server already; drop server=")
    return f"ninf://{server}/{name}"


def _where(fn: Function, i: int) -> str:
    return f"argument {i + 1} '{fn.params[i].name}' of {fn.name}"


def _argument_error(message: str) -> Exception:
    e = _ninf.ArgumentError(
        f"{_ninf.error_string(_ninf.NINF_ERR_ARGUMENT_MISMATCH)}: {message}")
    e.code = _ninf.NINF_ERR_ARGUMENT_MISMATCH
    e.detail = message
    return e


def _convert_array(fn: Function, i: int, a: Any, copy_back: list) -> Any:
    """`a` as the IDL type wants it: the array itself when it already fits
    (no copy), else a column-major copy of the same values, written back
    into `a` after the call for OUT and INOUT."""
    p = fn.params[i]
    dtype = np.dtype(p.dtype)
    writes = p.mode in ("OUT", "INOUT")
    if isinstance(a, np.ndarray):
        fits = a.dtype == dtype and (
            a.flags.f_contiguous or (a.ndim <= 1 and a.flags.c_contiguous))
        if fits or (writes and not a.flags.writeable):
            return a  # fits, or refused by the C half with its own message
    elif writes:
        raise _argument_error(
            f"{_where(fn, i)} is {p.mode}: convert=True would copy the "
            f"{type(a).__name__} into a new array whose results you would not see; "
            f"pass a numpy array")
    src = np.asarray(a)
    if p.mode == "OUT":
        # Nothing is read from an OUT array: its values (np.empty's
        # garbage) are neither checked nor copied; the results must only
        # fit back into it.
        if not np.can_cast(dtype, src.dtype, casting="same_kind"):
            raise _argument_error(
                f"{_where(fn, i)} is IDL {p.type}: convert=True cannot write its {dtype} "
                f"results into a {src.dtype} array")
        tmp = np.zeros(src.shape, dtype=dtype, order="F")
        copy_back.append((a, tmp))
        return tmp
    if not np.can_cast(src.dtype, dtype, casting="same_kind"):
        raise _argument_error(
            f"{_where(fn, i)} is IDL {p.type}: convert=True does not turn {src.dtype} "
            f"into {dtype} (it would lose more than precision); convert it yourself")
    if writes and not np.can_cast(dtype, src.dtype, casting="same_kind"):
        raise _argument_error(
            f"{_where(fn, i)} is {p.mode}: convert=True cannot write its {dtype} results "
            f"back into a {src.dtype} array")
    if src.size and dtype.kind == "i" and src.dtype.kind in "iu":
        info = np.iinfo(dtype)
        if src.min() < info.min or src.max() > info.max:
            raise _argument_error(
                f"{_where(fn, i)} is IDL {p.type}: values outside {dtype}'s range")
    tmp = np.array(src, dtype=dtype, order="F", copy=True)
    if writes:
        copy_back.append((a, tmp))
    return tmp


def _in_integers(fn: Function, args: Sequence[Any]) -> Optional[List[int]]:
    """Every parameter's value as a dimension sees it (IN integers; 0 for
    the rest), or None when one is not an integer (the C half then refuses
    it with its own message)."""
    values = []
    for p, a in zip(fn.params, args):
        if p.mode == "IN" and not p.is_array and p.dtype and p.dtype.startswith("int"):
            try:
                values.append(int(a.__index__()))
            except (AttributeError, TypeError):
                return None
        else:
            values.append(0)
    return values


class Plan:
    """One call's arguments as the C half gets them, and how its result
    is put together (the OUT values passed as None, in parameter order)."""

    def __init__(self, args: Sequence[Any]):
        self.args = tuple(args)
        self.copy_back: list = []
        self.allocated: dict = {}   # parameter index -> the new array
        self.results: List[int] = []  # OUT parameters given None
        self.shaped = False         # whether finish() reassembles the result

    def finish(self, c_result: Any) -> Any:
        for original, tmp in self.copy_back:
            np.copyto(original, tmp.reshape(original.shape), casting="same_kind")
        if not self.shaped:
            return c_result
        slots = [i for i in self.results if i not in self.allocated]
        c_values = (() if not slots else (c_result,) if len(slots) == 1 else tuple(c_result))
        it = iter(c_values)
        out = [self.allocated[i] if i in self.allocated else next(it) for i in self.results]
        if not out:
            return None
        return out[0] if len(out) == 1 else tuple(out)


def plan(name: str, args: Sequence[Any], server: Optional[str], convert: bool,
         out: Optional[str]) -> Plan:
    """Applies convert=True and out="alloc" to `args`; without them the
    arguments go to the C half untouched (and no interface is fetched)."""
    if out not in (None, "alloc"):
        raise ValueError(f"out must be None or 'alloc', not {out!r}")
    p = Plan(args)
    if not convert and out is None:
        return p
    named_server, bare = split_name(name)
    fn = describe(bare, server if server is not None else named_server)
    if len(args) != len(fn.params):
        return p  # the C half names the expected arguments
    new = list(args)
    for i, (param, a) in enumerate(zip(fn.params, args)):
        if a is None or param.type == "string":
            continue
        if param.is_array and convert:
            new[i] = _convert_array(fn, i, a, p.copy_back)
        elif convert and param.dtype and param.dtype.startswith("int") and \
                isinstance(a, float) and a.is_integer():
            new[i] = int(a)
    if out == "alloc":
        values = _in_integers(fn, new)
        for i, (param, a) in enumerate(zip(fn.params, new)):
            if a is not None or param.mode != "OUT" or param.pointer or values is None:
                continue
            try:
                extents = fn.extents(i, values)
            except ExpressionError:
                continue  # libninf refuses the call, naming the dimension
            if any(e < 0 for e in extents):
                continue
            # IDL a[n][lda] is Fortran's A(LDA, N): numpy shape (lda, n).
            new[i] = np.zeros(tuple(reversed(extents)), dtype=param.dtype, order="F")
            p.allocated[i] = new[i]
    p.results = [i for i, (param, a) in enumerate(zip(fn.params, args))
                 if param.mode == "OUT" and a is None]
    p.shaped = True
    p.args = tuple(new)
    return p


class StartGate:
    """The calls whose worker has not yet started them in libninf. A
    handle's close() and finalize() wait for these first, so that a call
    made before them starts before them (a started call keeps what it
    needs, and finalize cancels it) instead of failing or escaping."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._count = 0

    def enter(self) -> None:
        with self._cond:
            self._count += 1

    def leave(self) -> None:
        with self._cond:
            self._count -= 1
            if self._count == 0:
                self._cond.notify_all()

    def drain(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._count == 0)


starting = StartGate()


class CallFuture(Future):
    """A call's future: cancel() also stops the remote call."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._pending: Any = None

    def cancel(self) -> bool:
        if not super().cancel():
            return False
        with self._lock:
            pending = self._pending
        if pending is not None:
            pending.cancel()
        return True

    def _attach(self, pending: Any) -> bool:
        """The worker's started call; False when the future was cancelled
        before it existed (the call is then cancelled here)."""
        with self._lock:
            self._pending = pending
            cancelled = self.cancelled()
        if cancelled:
            pending.cancel()
        return not cancelled


def _settle(future: CallFuture, result: Any = None,
            error: Optional[BaseException] = None) -> None:
    if future.cancelled():
        return
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except Exception:  # cancelled meanwhile
        pass


def _work(future: CallFuture, name: str, args: Sequence[Any], handle: Any,
          server: Optional[str], convert: bool, out: Optional[str]) -> None:
    # Everything, the interface fetch and the argument checks included,
    # happens here: call_async's errors come only from result().
    error: Optional[BaseException] = None
    try:
        if future.cancelled():
            return
        p = plan(name, args, server, convert, out)
        pending = _ninf.start(full_name(name, server) if handle is None else name,
                              p.args, handle)
    except BaseException as e:  # noqa: B036 - the error goes to the future
        error = e
    finally:
        # Before the future is settled: a done-callback may close a
        # handle or finalize, which wait for this gate.
        starting.leave()
    if error is not None:
        _settle(future, error=error)
        return
    future._attach(pending)
    try:
        result = p.finish(pending.wait())
    except BaseException as e:  # noqa: B036
        _settle(future, error=e)
        return
    _settle(future, result)


def start(name: str, args: Sequence[Any], handle: Any = None, server: Optional[str] = None,
          convert: bool = False, out: Optional[str] = None) -> CallFuture:
    """call_async: the call on a thread of its own, as a future."""
    future = CallFuture()
    starting.enter()
    try:
        threading.Thread(target=_work, args=(future, name, args, handle, server, convert, out),
                         daemon=True, name=f"ninf-{name}").start()
    except BaseException:  # no thread: nothing will leave the gate for this call
        starting.leave()
        raise
    return future


def run(name: str, args: Sequence[Any], handle: Any = None, server: Optional[str] = None,
        convert: bool = False, out: Optional[str] = None) -> Any:
    """A blocking call, in this thread. From the main thread, Ctrl-C stops
    it (the module docstring says how) and raises KeyboardInterrupt."""
    p = plan(name, args, server, convert, out)
    return p.finish(_ninf.call(full_name(name, server) if handle is None else name,
                               p.args, handle))

"""The Python client against a real ninfd: results, zero-copy arrays,
futures, handles, and the errors a wrong argument gets."""
import concurrent.futures
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ninf
from conftest import free_port

# The NAS reference sums of EP class S (m = 24), NPB 3.x ep.c.
NAS_S_SX = -3.247834652034740e+3
NAS_S_SY = -6.958407078382297e+3


def system(n, nrhs, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)) + n * np.eye(n)
    b = rng.standard_normal((n, nrhs))
    return a, b


def test_dgesv_equals_numpy_solve(server):
    n, nrhs = 300, 3
    A, B = system(n, nrhs, 1)
    a = np.asfortranarray(A)
    b = np.asfortranarray(B)
    ipiv = np.empty(n, dtype=np.int32)
    info = ninf.call("dgesv", n, nrhs, a, n, ipiv, b, n, None)
    assert info == 0
    np.testing.assert_allclose(b, np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    # a holds the LU factors, ipiv 1-based pivots: the results were written
    # into the caller's arrays.
    assert not np.array_equal(a, A)
    assert ipiv.min() >= 1 and ipiv.max() <= n


def test_linpack_returns_only_x(server):
    # The Ninf paper's Linpack call: A stays the caller's (IN, never sent
    # back), b comes back as x, the pivots stay in the executable (WORK).
    n = 200
    A, B = system(n, 1, 3)
    a, b = np.asfortranarray(A), B[:, 0].copy()
    info = ninf.call("linpack", n, a, b, None, None)
    assert info == 0
    np.testing.assert_allclose(b, np.linalg.solve(A, B[:, 0]), rtol=1e-10)
    assert np.array_equal(a, A)


def test_out_scalar_as_array_and_in_order(server):
    n = 50
    A, B = system(n, 1, 2)
    a, b = np.asfortranarray(A), B[:, 0].copy()
    ipiv = np.empty(n, dtype=np.int32)
    info = np.full(1, -7, dtype=np.int32)
    assert ninf.call("dgesv", n, 1, a, n, ipiv, b, n, info) is None
    assert info[0] == 0
    np.testing.assert_allclose(b, np.linalg.solve(A, B[:, 0]), rtol=1e-10)


def test_ep_equals_nas_class_s(server):
    q = np.zeros(10)
    sx, sy = ninf.call("ep", 24, None, None, q)
    assert abs((sx - NAS_S_SX) / NAS_S_SX) < 1e-8
    assert abs((sy - NAS_S_SY) / NAS_S_SY) < 1e-8
    assert q.sum() > 0 and np.all(q == np.floor(q))


def test_arrays_are_written_in_place_and_only_there(server):
    # A view into a larger buffer: the call fills exactly the view, the
    # memory around it is untouched (no copy, no overrun).
    n = 1000
    buf = np.full(n + 20, -1.0)
    view = buf[10:10 + n]
    view[:] = np.arange(n, dtype=np.float64)
    ninf.call("echo", n, view)
    np.testing.assert_array_equal(view, np.arange(n))
    assert np.all(buf[:10] == -1.0) and np.all(buf[10 + n:] == -1.0)


def test_echo_16_mib(server):
    n = 16 * 1024 * 1024 // 8
    a = np.arange(n, dtype=np.float64)
    ninf.call("echo", n, a)
    np.testing.assert_array_equal(a, np.arange(n, dtype=np.float64))


def test_futures_run_at_once(server):
    qs = [np.zeros(10) for _ in range(4)]
    futures = [ninf.call_async("ep", 20, None, None, q) for q in qs]
    done, _ = concurrent.futures.wait(futures, timeout=120)
    assert len(done) == 4
    results = [f.result() for f in futures]
    assert all(r == results[0] for r in results)
    assert all(np.array_equal(q, qs[0]) for q in qs)
    assert list(concurrent.futures.as_completed(futures, timeout=1))


def test_future_carries_server_error(small_server):
    n = 2 * 1024 * 1024 // 8  # 2 MiB each way, over the 1 MiB limit
    a = np.zeros(n)
    with ninf.Handle("echo", server=small_server.address) as h:
        future = h.call_async(n, a)
        with pytest.raises(ninf.Error) as e:
            future.result(timeout=60)
        assert e.value.code == ninf.NINF_ERR_TOO_LARGE
        # The same handle then serves a call that fits.
        small = np.arange(100, dtype=np.float64)
        h.call(100, small)
        np.testing.assert_array_equal(small, np.arange(100))


def test_future_cancel_stops_the_call(server):
    q = np.zeros(10)
    future = ninf.call_async("ep", 30, None, None, q)  # minutes if left alone
    assert future.cancel()
    assert future.cancelled()
    with pytest.raises(concurrent.futures.CancelledError):
        future.result(timeout=5)
    # The server is free again: a short call is served.
    assert ninf.call("ep", 16, None, None, np.zeros(10))


def test_handle_context_manager(server):
    n = 40
    with ninf.Handle("dgesv", server=server.address) as h:
        for seed in range(3):
            A, B = system(n, 1, seed)
            a, b = np.asfortranarray(A), B[:, 0].copy()
            ipiv = np.empty(n, dtype=np.int32)
            assert h.call(n, 1, a, n, ipiv, b, n, None) == 0
            np.testing.assert_allclose(b, np.linalg.solve(A, B[:, 0]), rtol=1e-10)
        f = h.call_async(n, 1, np.asfortranarray(A), n, ipiv, B[:, 0].copy(), n, None)
        assert f.result(timeout=60) == 0
    with pytest.raises(ninf.Error, match="closed"):
        h.call(n, 1, a, n, ipiv, b, n, None)


def test_unknown_function(server):
    with pytest.raises(ninf.Error) as e:
        ninf.call("no_such_routine", 1)
    assert e.value.code == ninf.NINF_ERR_FUNCTION_NOT_FOUND
    assert "no_such_routine" in str(e.value)


def dgesv_args(n=20):
    A, B = system(n, 1, 3)
    return [n, 1, np.asfortranarray(A), n, np.empty(n, dtype=np.int32), B[:, 0].copy(), n, None]


@pytest.mark.parametrize("position, value, message", [
    (2, lambda a: a.astype(np.float32),
     r"argument 3 'a' of dgesv is IDL double: pass a numpy.float64 array, got float32"),
    (2, lambda a: np.ascontiguousarray(a),
     r"argument 3 'a' of dgesv is in C order: .*numpy.asfortranarray"),
    (2, lambda a: a[:, :5],
     r"argument 3 'a' of dgesv: the call moves 400 elements, the array has 100"),
    (2, lambda a: a[::2, :],
     r"argument 3 'a' of dgesv is not contiguous"),
    (2, lambda a: None,
     r"argument 3 'a' of dgesv is INOUT: pass a float64 array"),
    (2, lambda a: [1.0, 2.0],
     r"argument 3 'a' of dgesv is an array: pass a numpy.float64 array, not list"),
    (4, lambda p: p.astype(np.int64),
     r"argument 5 'ipiv' of dgesv is IDL int: pass a numpy.int32 array, got int64"),
    (5, lambda b: b[::2],
     r"argument 6 'b' of dgesv is not contiguous \(a slice with a step\?\)"),
    (0, lambda n: 20.0,
     r"argument 1 'n' of dgesv takes an integer \(IDL int\), got float"),
    (0, lambda n: 2**40,
     r"argument 1 'n' of dgesv = 1099511627776 does not fit the IDL type int"),
])
def test_argument_errors(server, position, value, message):
    args = dgesv_args()
    args[position] = value(args[position])
    with pytest.raises(ninf.ArgumentError, match=message) as e:
        ninf.call("dgesv", *args)
    assert e.value.code == ninf.NINF_ERR_ARGUMENT_MISMATCH
    assert isinstance(e.value, TypeError)


def test_read_only_out_array(server):
    args = dgesv_args()
    args[5].flags.writeable = False
    with pytest.raises(ninf.ArgumentError, match=r"argument 6 'b' of dgesv is INOUT and the "
                       r"array is read-only"):
        ninf.call("dgesv", *args)


def test_wrong_count_lists_the_signature(server):
    args = dgesv_args()[:-1]
    with pytest.raises(ninf.ArgumentError, match=r"dgesv takes 8 arguments \(IN n, IN nrhs, "
                       r"INOUT a, IN lda, OUT ipiv, INOUT b, IN ldb, OUT info\), got 7"):
        ninf.call("dgesv", *args)


def test_none_for_an_out_array(server):
    with pytest.raises(ninf.ArgumentError, match=r"argument 4 'q' of ep is an OUT array of 10 "
                       r"elements: pass numpy.empty\(10, dtype=numpy.float64\)"):
        ninf.call("ep", 16, None, None, None)


def test_argument_error_from_result_of_async(server):
    # call_async itself never raises: the error is the future's.
    args = dgesv_args()
    args[2] = np.ascontiguousarray(args[2])
    future = ninf.call_async("dgesv", *args)
    with pytest.raises(ninf.ArgumentError, match="C order"):
        future.result(timeout=60)


def test_bad_server_address():
    with pytest.raises(ninf.ArgumentError, match="port"):
        ninf.set_server("127.0.0.1:http")


UNREACHABLE = r"""
import sys
import numpy as np
import ninf

ninf.set_server(sys.argv[1])
try:
    ninf.call("ep", 16, None, None, np.zeros(10))
except ninf.Error as e:
    print(e.code, str(e))
"""


def test_unreachable_server_names_set_server():
    # A fresh interpreter: the default server is process-wide. Nothing
    # listens on the port (bound, then closed).
    port = free_port()
    run = subprocess.run([sys.executable, "-c", UNREACHABLE, f"127.0.0.1:{port}"],
                         capture_output=True, text=True, timeout=60, env=os.environ)
    assert run.returncode == 0, run.stderr
    code, _, text = run.stdout.partition(" ")
    assert int(code) == ninf.NINF_ERR_CONNECT, run.stdout
    assert f"no ninfd at 127.0.0.1:{port}, the default server (from ninf.set_server())" in text
    assert "command line" not in text, text
    # What to do, in Python's words (before: Ninf_parse_arg, grpc_initialize).
    assert 'call ninf.set_server("host:port") with a running one, or pass server=' in text, text
    assert "Ninf_parse_arg" not in text and "grpc_initialize" not in text, text


# Run in a child interpreter: before the fix (issue 28, H2) the second wait
# on a call corrupted libninf's heap and the process spun at 100% CPU; a
# fresh process is also one whose GridRPC state the other tests do not see.
FINALIZE_RACE = r"""
import json
import sys
import numpy as np
import ninf

ninf.set_server(sys.argv[1])
outcomes = []
for _ in range(5):
    ninf.initialize()
    futures = []
    for _ in range(3):
        with ninf.Handle("ep") as h:  # the running call keeps what it needs
            futures.append(h.call_async(24, None, None, np.zeros(10)))
        futures.append(ninf.call_async("ep", 24, None, None, np.zeros(10)))
    # The futures' threads are in Ninf_wait (or about to be) while
    # finalize cancels and waits for the same calls.
    ninf.finalize()
    for f in futures:
        try:
            f.result(timeout=60)
            outcomes.append("result")
        except ninf.Error as e:
            outcomes.append(e.code)
# Nothing outstanding afterwards, and the library still serves calls.
print(json.dumps(sorted(set(map(str, outcomes)))))
print("after", ninf.call("ep", 16, None, None, np.zeros(10)) is not None)
"""


def test_finalize_with_calls_in_flight(server):
    run = subprocess.run([sys.executable, "-c", FINALIZE_RACE, server.address],
                         capture_output=True, text=True, timeout=120, env=os.environ)
    assert run.returncode == 0, run.stderr
    kinds, after = run.stdout.splitlines()
    # Each future has the call's result, its cancellation, or the defined
    # "already collected by another wait" (finalize took the result).
    allowed = {"result", str(ninf.NINF_ERR_CANCELLED), str(ninf.NINF_ERR_INVALID_ID)}
    assert set(json.loads(kinds)) <= allowed, kinds
    assert after == "after True"

"""What a numpy user expects, against a real ninfd: ninf.linalg and
ninf.ep, convert=True, out="alloc", ninf.functions and ninf.describe,
__version__."""
import os
import re

import numpy as np
import pytest

import ninf

# The NAS reference sums of EP class S (m = 24), NPB 3.x ep.c.
NAS_S_SX = -3.247834652034740e+3
NAS_S_SY = -6.958407078382297e+3


def matrix(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) + n * np.eye(n)


def symmetric(n, seed=2):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((n, n))
    return s + s.T


# --- ninf.linalg and ninf.ep ------------------------------------------------

@pytest.mark.parametrize("shape", [(), (3,)])
def test_solve_equals_numpy(server, shape):
    n = 120
    A = matrix(n)            # C order: solve takes what numpy takes
    B = np.random.default_rng(5).standard_normal((n, *shape))
    A0, B0 = A.copy(), B.copy()
    x = ninf.linalg.solve(A, B)
    np.testing.assert_allclose(x, np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    assert x.shape == B.shape and x.dtype == np.float64
    # The inputs are the caller's, unchanged (dgesv writes over copies).
    assert np.array_equal(A, A0) and np.array_equal(B, B0)


def test_solve_takes_lists_and_integers(server):
    x = ninf.linalg.solve([[2, 0], [0, 4]], [2, 8])
    np.testing.assert_allclose(x, [1.0, 2.0])


def test_solve_singular_raises_linalg_error_as_numpy(server):
    singular = np.ones((3, 3))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.solve(singular, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        ninf.linalg.solve(singular, np.ones(3))
    assert ninf.linalg.LinAlgError is np.linalg.LinAlgError


def test_solve_refuses_what_numpy_refuses(server):
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        ninf.linalg.solve(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match=r"b must be \(3,\) or \(3, k\)"):
        ninf.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(TypeError, match="complex"):
        ninf.linalg.solve(np.eye(3, dtype=complex), np.ones(3))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_equals_numpy(server, uplo):
    n = 60
    S = symmetric(n)
    # Garbage in the triangle that is not read: both must ignore it.
    T = np.tril(S) + np.triu(np.full((n, n), 7.0), 1) if uplo == "L" else \
        np.triu(S) + np.tril(np.full((n, n), 7.0), -1)
    w, v = ninf.linalg.eigh(T, UPLO=uplo)
    w_np, _ = np.linalg.eigh(T, UPLO=uplo)
    np.testing.assert_allclose(w, w_np, rtol=1e-9, atol=1e-9)
    # Eigenvectors in the columns (up to sign): S v = v diag(w), v orthonormal.
    np.testing.assert_allclose(S @ v, v * w, atol=1e-8)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=1e-10)
    r = ninf.linalg.eigh(S)
    assert np.array_equal(r.eigenvalues, r[0]) and np.array_equal(r.eigenvectors, r[1])


def test_float32_stays_float32_as_numpy(server):
    # numpy.linalg keeps single precision when every input is float32; so
    # does ninf.linalg, on sgesv and ssyevd (before: float64 out, dsyev).
    n = 40
    A = matrix(n).astype(np.float32)
    b = np.ones(n, dtype=np.float32)
    x = ninf.linalg.solve(A, b)
    assert x.dtype == np.linalg.solve(A, b).dtype == np.float32
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-4, atol=1e-5)
    # Mixed precision goes to float64, as numpy's.
    assert ninf.linalg.solve(A, b.astype(np.float64)).dtype == np.float64
    S = symmetric(n).astype(np.float32)
    w, v = ninf.linalg.eigh(S)
    w_np, _ = np.linalg.eigh(S)
    assert w.dtype == v.dtype == w_np.dtype == np.float32
    np.testing.assert_allclose(w, w_np, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(S @ v, v * w, atol=1e-3)


def test_eigh_uses_the_driver_numpy_uses(server):
    # numpy.linalg.eigh is LAPACK's divide and conquer (?syevd): the
    # eigenvalues agree with numpy's to the last few bits, not only to
    # dsyev's tolerance.
    S = symmetric(80)
    w, _ = ninf.linalg.eigh(S)
    np.testing.assert_allclose(w, np.linalg.eigh(S)[0], rtol=1e-13, atol=1e-13)
    assert {"dsyevd", "ssyevd", "sgesv"} <= set(ninf.functions(server=server.address))


def test_ep_equals_nas_class_s(server):
    r = ninf.ep(24)
    assert abs((r.sx - NAS_S_SX) / NAS_S_SX) < 1e-8
    assert abs((r.sy - NAS_S_SY) / NAS_S_SY) < 1e-8
    assert r.q.shape == (10,) and r.q.sum() > 0
    sx, sy, q = r  # unpacks as a tuple
    assert sx == r.sx


def test_wrappers_take_a_server(server, small_server):
    # small_server is not the default: the keyword picks it.
    x = ninf.linalg.solve(np.eye(2) * 2, [2.0, 4.0], server=small_server.address)
    np.testing.assert_allclose(x, [1.0, 2.0])


# --- out="alloc" -----------------------------------------------------------

def test_alloc_returns_out_arrays_with_the_scalars(server):
    n = 50
    A = matrix(n, 3)
    a, b = np.asfortranarray(A), np.ones(n)
    ipiv, info = ninf.call("dgesv", n, 1, a, n, None, b, n, None, out="alloc")
    assert info == 0
    assert isinstance(ipiv, np.ndarray) and ipiv.dtype == np.int32 and ipiv.shape == (n,)
    assert ipiv.min() >= 1 and ipiv.max() <= n
    np.testing.assert_allclose(b, np.linalg.solve(A, np.ones(n)), rtol=1e-10)


def test_alloc_shapes_a_matrix_column_major(server):
    # dmmul's C[n][n] is Fortran's C(N, N): an (n, n) array in Fortran order.
    n = 7
    A = np.asfortranarray(matrix(n, 4))
    c = ninf.call("dmmul", n, A, np.asfortranarray(np.eye(n)), None, out="alloc")
    assert c.shape == (n, n) and c.flags.f_contiguous and c.dtype == np.float64
    np.testing.assert_allclose(c, A, rtol=1e-12)


def test_alloc_in_ep_keeps_pointer_outs_as_values(server):
    sx, sy, q = ninf.call("ep", 24, None, None, None, out="alloc")
    assert isinstance(sx, float) and isinstance(sy, float)
    assert abs((sx - NAS_S_SX) / NAS_S_SX) < 1e-8
    assert q.shape == (10,) and q.sum() > 0


def test_alloc_through_a_handle_and_a_future(server):
    with ninf.Handle("source", server=server.address) as h:
        a = h.call(5, None, out="alloc")
        f = h.call_async(6, None, out="alloc")
        np.testing.assert_array_equal(a, np.arange(5.0))
        np.testing.assert_array_equal(f.result(timeout=60), np.arange(6.0))


# --- convert=True ----------------------------------------------------------

def test_convert_copies_and_writes_back(server):
    n = 40
    A = matrix(n, 6)                                  # C order
    b = np.ones(n, dtype=np.float32)                  # float32 for IDL double
    ipiv = np.empty(n, dtype=np.int64)                # numpy's default int
    info = ninf.call("dgesv", n, 1, A, n, ipiv, b, n, None, convert=True)
    assert info == 0
    # The results came back into the arrays given, in their own dtype and
    # layout: b holds x (float32), ipiv the pivots, A the LU factors.
    assert b.dtype == np.float32 and ipiv.dtype == np.int64
    np.testing.assert_allclose(b, np.linalg.solve(matrix(n, 6), np.ones(n)), rtol=1e-5)
    assert ipiv.min() >= 1 and ipiv.max() <= n
    a_f = np.asfortranarray(matrix(n, 6))
    ninf.call("dgesv", n, 1, a_f, n, np.empty(n, dtype=np.int32), np.ones(n), n, None)
    np.testing.assert_allclose(A, a_f, rtol=1e-12, atol=1e-12)  # the LU, in C order


def test_convert_takes_lists_for_in_arrays(server):
    c = ninf.call("dmmul", 2, [[1, 2], [3, 4]], np.eye(2), None, convert=True, out="alloc")
    np.testing.assert_array_equal(c, [[1.0, 2.0], [3.0, 4.0]])


def test_convert_zero_copy_when_it_fits(server):
    # An array that already fits is the one the call uses (written in place).
    n = 100
    a = np.arange(n, dtype=np.float64)
    ninf.call("echo", n, a, convert=True)
    np.testing.assert_array_equal(a, np.arange(n))


@pytest.mark.parametrize("args, message", [
    (lambda n: [n, 1, np.eye(n, dtype=complex), n, None, np.ones(n), n, None],
     r"argument 3 'a' of dgesv is IDL double: convert=True does not turn complex128"),
    (lambda n: [n, 1, np.eye(n), n, None, [1.0] * n, n, None],
     r"argument 6 'b' of dgesv is INOUT: convert=True would copy the list"),
    (lambda n: [n, 1, np.eye(n), n, None, np.ones(n, dtype=np.int64), n, None],
     r"argument 6 'b' of dgesv is INOUT: convert=True cannot write its float64 results "
     r"back into a int64 array"),
])
def test_convert_refuses_lossy_casts(server, args, message):
    with pytest.raises(ninf.ArgumentError, match=message) as e:
        ninf.call("dgesv", *args(4), convert=True, out="alloc")
    assert e.value.code == ninf.NINF_ERR_ARGUMENT_MISMATCH


# --- functions, describe, __version__ ---------------------------------------

def test_functions_lists_the_standard_library(server):
    names = ninf.functions()
    assert names == sorted(names)
    assert {"dgesv", "dsyev", "ep", "echo", "linpack"} <= set(names)
    assert ninf.functions(server.address) == names


def test_describe_dgesv(server):
    f = ninf.describe("dgesv")
    assert f.name == "dgesv" and f.language == "Fortran" and f.description
    assert f.signature == ("dgesv(IN int n, IN int nrhs, INOUT double a[n][lda], IN int lda, "
                           "OUT int ipiv[n], INOUT double b[nrhs][ldb], IN int ldb, "
                           "OUT int *info)")
    assert [p.mode for p in f.params] == ["IN", "IN", "INOUT", "IN", "OUT", "INOUT", "IN", "OUT"]
    assert f.params[2].dtype == "float64" and f.params[4].dtype == "int32"
    assert f.params[7].pointer and not f.params[2].pointer
    assert str(f.calc_order) == "2 * n^3 / 3 + 2 * n^2 * nrhs"
    assert f.extents(2, [10, 1, 0, 12, 0, 0, 0, 0]) == (10, 12)
    assert "dgesv(IN int n" in str(f)


def test_describe_a_conditional_dimension(server):
    f = ninf.describe("dgetrf", server=server.address)
    assert str(f.params[4]) == "OUT int ipiv[m < n ? m : n]"
    assert f.extents(4, [3, 5, 0, 3, 0, 0]) == (3,)
    assert f.extents(4, [9, 5, 0, 9, 0, 0]) == (5,)


def test_describe_unknown_function(server):
    with pytest.raises(ninf.Error) as e:
        ninf.describe("no_such_routine")
    assert e.value.code == ninf.NINF_ERR_FUNCTION_NOT_FOUND
    assert "no_such_routine" in str(e.value)


def test_version_is_the_projects():
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", ninf.__version__)
    expected = os.environ.get("NINF_PROJECT_VERSION")
    if expected:  # set by tests/python/meson.build
        assert ninf.__version__ == expected


def test_package_is_typed():
    here = os.path.dirname(ninf.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    assert os.path.exists(os.path.join(here, "_ninf.pyi"))

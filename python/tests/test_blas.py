"""pk.dot, pk.axpy, pk.gemm, pk.matmul against exact or float64 references."""

import numpy as np
import pytest
from helpers import FLOATS, assert_same, exact_dot, random_array

import pk

FLOAT_IDS = lambda d: np.dtype(d).name  # noqa: E731


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("n", (0, 1, 2, 7, 1000, 65537))
def test_dot(rng, dtype, n):
    x = random_array(rng, n, dtype)
    y = random_array(rng, n, dtype)
    got = pk.dot(x, y)
    assert isinstance(got, np.generic) and got.dtype == dtype
    exact = exact_dot(x, y)
    err = abs(float(got) - exact)
    np_err = abs(float(np.dot(x, y)) - exact)
    half_ulp = 0.5 * float(np.spacing(np.abs(dtype(exact))))
    assert err <= max(np_err, half_ulp), (got, exact)
    assert pk.dot(x, x) == pk.dot(x, x.copy())  # x and y may be one array


def test_dot_nan_and_out(rng):
    x = random_array(rng, 100, np.float64)
    y = x.copy()
    y[17] = np.nan
    assert np.isnan(pk.dot(x, y))
    out = np.empty((), np.float64)
    assert pk.dot(x, x, out=out) is out and out == pk.dot(x, x)


def test_dot_bad(rng):
    x = np.ones(5, np.float32)
    with pytest.raises(TypeError, match="float64"):
        pk.dot(x, np.ones(5))
    with pytest.raises(TypeError, match="int32"):
        pk.dot(np.ones(5, np.int32), np.ones(5, np.int32))
    with pytest.raises(ValueError, match="same length"):
        pk.dot(x, np.ones(6, np.float32))
    with pytest.raises(ValueError, match="1-D"):
        pk.dot(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        pk.dot(np.ones(10, np.float32)[::2], x)


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("shape", ((0,), (1,), (7,), (100003,), (3, 5, 7)), ids=str)
def test_axpy(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    y = random_array(rng, shape, dtype)
    alpha = float(rng.standard_normal())
    # pk: one rounding of the product, one of the sum (no FMA): NumPy's
    # separate multiply and add in the dtype give the same bits.
    want = y + dtype(alpha) * x
    assert pk.axpy(alpha, x, y) is y
    assert_same(y, want)
    z = x.copy()
    pk.axpy(2.0, z, z)  # x == y is allowed
    assert_same(z, x + dtype(2.0) * x)


def test_axpy_bad(rng):
    x = np.ones(8)
    with pytest.raises(ValueError, match="shape"):
        pk.axpy(1.0, x, np.ones(9))
    with pytest.raises(TypeError, match="float32"):
        pk.axpy(1.0, x, np.ones(8, np.float32))
    with pytest.raises(pk.ArgumentError, match="overlap"):
        pk.axpy(1.0, x[1:], x[:-1])
    ro = np.ones(8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        pk.axpy(1.0, x, ro)
    with pytest.raises(TypeError, match="number"):
        pk.axpy("2", x, np.ones(8))


def gemm_reference(a, b, c, alpha, beta, ta, tb):
    opa = a.T if ta else a
    opb = b.T if tb else b
    r = alpha * (opa.astype(np.float64) @ opb.astype(np.float64))
    if c is not None and beta != 0:
        r += beta * c.astype(np.float64)
    return r


def assert_gemm_close(got, want, k, dtype):
    scale = np.abs(want).max() if want.size else 1.0
    tol = 4 * (k + 2) * np.finfo(dtype).eps * max(scale, 1.0)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=tol, rtol=0)


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("mnk", ((1, 1, 1), (3, 5, 7), (64, 33, 17), (130, 70, 257), (0, 4, 3), (4, 0, 3), (4, 3, 0)), ids=str)
@pytest.mark.parametrize("ta", (False, True))
@pytest.mark.parametrize("tb", (False, True))
def test_gemm(rng, dtype, mnk, ta, tb):
    m, n, k = mnk
    a = random_array(rng, (k, m) if ta else (m, k), dtype)
    b = random_array(rng, (n, k) if tb else (k, n), dtype)
    c = random_array(rng, (m, n), dtype)
    alpha, beta = 0.5, -2.0
    want = gemm_reference(a, b, c, alpha, beta, ta, tb)
    got = pk.gemm(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
    assert got is c
    assert_gemm_close(got, want, k, dtype)
    # A transposed view (a.T) is read in place as the transpose of a row-major matrix.
    got2 = pk.matmul(a.T if ta else a, b.T if tb else b)
    assert_gemm_close(got2, gemm_reference(a, b, None, 1.0, 0.0, ta, tb), k, dtype)


def test_gemm_layouts(rng):
    base = random_array(rng, (40, 50), np.float64)
    a = base[3:20, 5:30]  # padded rows
    b = random_array(rng, (60, 25), np.float64).T  # column-major
    want = a @ b
    assert_gemm_close(pk.matmul(a, b), want, 25, np.float64)
    cbase = np.zeros((17, 70))
    c = cbase[:, 5:65]  # c with padded rows
    pk.gemm(a, b, c)
    assert_gemm_close(c, want, 25, np.float64)
    assert (cbase[:, :5] == 0).all() and (cbase[:, 65:] == 0).all()  # nothing outside c
    out = np.empty((17, 60))
    assert pk.matmul(a, b, out=out) is out
    with pytest.raises(ValueError, match="row-major"):
        pk.matmul(a, b, out=np.empty((60, 17)).T)
    with pytest.raises(ValueError, match="neither"):
        pk.matmul(base[::2, ::2], base[::2, ::2])


def test_gemm_beta_zero_ignores_nan_c(rng):
    a = random_array(rng, (4, 3), np.float32)
    b = random_array(rng, (3, 5), np.float32)
    c = np.full((4, 5), np.nan, np.float32)
    pk.gemm(a, b, c, beta=0.0)
    assert np.isfinite(c).all()


def test_gemm_modes(rng):
    a = random_array(rng, (8, 8), np.float32)
    want = gemm_reference(a, a, None, 1.0, 0.0, False, False)
    assert_gemm_close(pk.matmul(a, a, mode="fp32_accurate"), want, 8, np.float32)
    with pytest.raises(pk.UnsupportedError, match="tf32"):
        pk.matmul(a, a, mode="tf32")  # no tensor cores on the CPU; never swapped
    with pytest.raises(ValueError, match="mode"):
        pk.matmul(a, a, mode="fp16")


def test_gemm_bad(rng):
    a = np.ones((3, 4))
    with pytest.raises(ValueError, match="inner dimensions"):
        pk.matmul(a, a)
    with pytest.raises(ValueError, match="2-D"):
        pk.matmul(np.ones(4), np.ones(4))
    with pytest.raises(TypeError, match="float32"):
        pk.matmul(a, np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="beta"):
        pk.gemm(a, a.T, beta=1.0)
    with pytest.raises(ValueError, match="shape"):
        pk.gemm(a, a.T, np.empty((4, 4)))
    with pytest.raises(pk.ArgumentError, match="overlap"):
        sq = np.ones((4, 4))
        pk.gemm(sq, sq, sq)

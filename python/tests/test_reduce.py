"""pk.sum/prod/min/max/argmin/argmax against NumPy (exact references for
float sums), on the CPU backend through NumPy arrays."""

import array

import numpy as np
import pytest
from helpers import DTYPES, FLOATS, INTS, assert_same, exact_sum, random_array

import pk

OPS = ("sum", "prod", "min", "max", "argmin", "argmax")
SIZES_1D = (1, 2, 7, 64, 1000, 4097, 100003)
SHAPES_2D = ((1, 1), (1, 7), (7, 1), (3, 5), (64, 33), (257, 129), (2, 40000))


def numpy_reduce(op, x, axis=None):
    return getattr(np, op)(x, axis=axis)


def check_sum(got, x, axis):
    """pk's float sum: its error against the exact sum is at most NumPy's
    (pairwise summation) or half an ulp (correct rounding)."""
    want_np = np.sum(x, axis=axis)
    got = np.asarray(got)
    assert got.dtype == x.dtype and got.shape == np.shape(want_np)
    if axis is None:
        slices = [x.ravel()]
    else:
        slices = list(np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis]))
    for g, n, s in zip(got.ravel(), np.ravel(want_np), slices):
        exact = exact_sum(s)
        rounded = x.dtype.type(exact)
        half_ulp = 0.5 * float(np.spacing(np.abs(rounded)))
        err = abs(float(g) - exact)
        assert err <= max(abs(float(n) - exact), half_ulp), (g, n, exact)


def check(op, x, axis=None):
    got = getattr(pk, op)(x, axis=axis)
    if op == "sum" and x.dtype.kind == "f":
        check_sum(got, x, axis)
    elif op == "prod" and x.dtype.kind == "f":
        want = np.prod(x.astype(np.float64), axis=axis)
        assert np.asarray(got).dtype == x.dtype
        rtol = 4 * (x.shape[axis] if axis is not None else x.size) * np.finfo(x.dtype).eps
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol)
    else:
        assert_same(got, numpy_reduce(op, x, axis))
    return got


def prod_friendly(rng, shape, dtype):
    """Values whose long products neither overflow nor underflow."""
    if np.dtype(dtype).kind == "f":
        return np.exp(rng.normal(0.0, 0.01, size=shape)).astype(dtype)
    return random_array(rng, shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", SIZES_1D)
def test_whole_1d(rng, dtype, n):
    x = random_array(rng, n, dtype)
    for op in OPS:
        y = prod_friendly(rng, n, dtype) if op == "prod" else x
        got = check(op, y)
        assert isinstance(got, np.generic)  # a NumPy scalar, as numpy.sum gives
        check(op, y, axis=0)
        check(op, y, axis=-1)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_2d(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    for op in OPS:
        y = prod_friendly(rng, shape, dtype) if op == "prod" else x
        for axis in (None, 0, 1, -1):
            got = check(op, y, axis)
            if axis is not None:
                assert isinstance(got, np.ndarray)


@pytest.mark.parametrize("dtype", (np.float32, np.int64), ids=lambda d: np.dtype(d).name)
def test_nd_first_and_last_axis(rng, dtype):
    x = random_array(rng, (4, 5, 6, 3), dtype)
    for op in OPS:
        y = prod_friendly(rng, x.shape, dtype) if op == "prod" else x
        for axis in (None, 0, 3, -1):
            check(op, y, axis)
    with pytest.raises(ValueError, match="middle axis"):
        pk.sum(x, axis=1)
    with pytest.raises(ValueError, match="middle axis"):
        pk.sum(x, axis=-2)


def test_zero_d(rng):
    x = np.array(3.5, dtype=np.float64)
    assert_same(pk.sum(x), np.float64(3.5))
    assert_same(pk.argmax(x), np.int64(0))
    with pytest.raises(ValueError, match="out of bounds"):
        pk.sum(x, axis=0)


def test_padded_rows(rng):
    """A slice of columns (rows padded in memory) reduces along either axis."""
    base = random_array(rng, (9, 13), np.float64)
    x = base[:, 2:7]
    for op in OPS:
        y = prod_friendly(rng, (9, 13), np.float64)[:, 2:7] if op == "prod" else x
        check(op, y, 0)
        check(op, y, 1)
    with pytest.raises(ValueError, match="not C-contiguous"):
        pk.sum(x)


def test_empty():
    for dtype in DTYPES:
        e = np.zeros(0, dtype)
        assert_same(pk.sum(e), np.sum(e))
        assert_same(pk.prod(e), np.prod(e))
        for op in ("min", "max", "argmin", "argmax"):
            with pytest.raises(ValueError, match="zero-size"):
                getattr(pk, op)(e)
    # an empty kept axis: an empty result; an empty reduced axis: identity or error
    e = np.zeros((0, 3), np.float32)
    assert_same(pk.sum(e, axis=0), np.zeros(3, np.float32))
    assert_same(pk.prod(e, axis=0), np.ones(3, np.float32))
    assert_same(pk.sum(e, axis=1), np.zeros(0, np.float32))
    assert_same(pk.min(e, axis=1), np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="zero-size"):
        pk.max(e, axis=0)
    with pytest.raises(ValueError, match="zero-size"):
        pk.argmin(np.zeros((3, 0)), axis=1)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nan_inf(rng, dtype):
    x = random_array(rng, 1001, dtype)
    at = rng.choice(1001, size=3, replace=False)
    y = x.copy()
    y[at] = np.nan
    for op in OPS:
        assert_same(getattr(pk, op)(y), numpy_reduce(op, y))  # NaN, first NaN's index
    z = x.copy()
    z[at[0]] = np.inf
    assert_same(pk.sum(z), dtype(np.inf))
    assert_same(pk.max(z), dtype(np.inf))
    assert_same(pk.argmax(z), np.int64(at[0]))
    z[at[1]] = -np.inf
    assert np.isnan(pk.sum(z))
    assert_same(pk.argmin(z), np.int64(at[1]))
    m = random_array(rng, (20, 30), dtype)
    m[3, 4] = np.nan
    m[7, 4] = np.nan
    for op in OPS:
        for axis in (0, 1):
            got = getattr(pk, op)(m, axis=axis)
            want = numpy_reduce(op, m, axis)
            if op in ("sum", "prod"):  # NaN where NumPy has it, the rest as the other tests
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            else:
                assert_same(got, want)


def test_integer_sums_wrap(rng):
    big = np.full(5, np.iinfo(np.int64).max, np.int64)
    assert_same(pk.sum(big), np.sum(big))
    ubig = np.full(7, np.iinfo(np.uint64).max, np.uint64)
    assert_same(pk.sum(ubig), np.sum(ubig))
    assert_same(pk.sum(np.arange(10, dtype=np.int32)), np.int64(45))
    assert_same(pk.sum(np.arange(10, dtype=np.uint32)), np.uint64(45))


def test_accuracy_beats_numpy(rng):
    """Ill-conditioned float32 data: pk's error is at most NumPy's."""
    x = (rng.standard_normal(1 << 16) * np.exp(rng.uniform(-20, 20, 1 << 16))).astype(np.float32)
    x = np.concatenate([x, -x[: 1 << 15]])
    rng.shuffle(x)
    check_sum(pk.sum(x), x, None)


def test_out(rng):
    x = random_array(rng, (6, 7), np.float64)
    out = np.empty(7)
    assert pk.sum(x, axis=0, out=out) is out
    check_sum(out, x, 0)
    o = np.empty((), np.int64)
    assert pk.argmax(x, out=o) is o and o == np.argmax(x)
    with pytest.raises(ValueError, match="shape"):
        pk.sum(x, axis=0, out=np.empty(6))
    with pytest.raises(TypeError, match="dtype"):
        pk.sum(x, axis=0, out=np.empty(7, np.float32))
    ro = np.empty(7)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        pk.sum(x, axis=0, out=ro)
    with pytest.raises(ValueError, match="C-contiguous"):
        pk.sum(x, axis=0, out=np.empty(14)[::2])


def test_bad_input(rng):
    x = np.ones(10, np.float32)
    with pytest.raises(TypeError, match="float16"):
        pk.sum(np.ones(3, np.float16))
    with pytest.raises(TypeError, match="complex"):
        pk.sum(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="bool"):
        pk.max(np.ones(3, bool))
    with pytest.raises(TypeError, match="big-endian"):
        pk.sum(np.ones(3, ">f4"))
    with pytest.raises(TypeError, match="not an array"):
        pk.sum([1.0, 2.0])
    with pytest.raises(TypeError, match="not an array"):
        pk.sum(3.0)
    with pytest.raises(TypeError, match="masked"):
        pk.sum(np.ma.masked_array(x, mask=x > 0))
    with pytest.raises(ValueError, match="not C-contiguous"):
        pk.sum(x[::2])
    with pytest.raises(ValueError, match="not row-major"):
        pk.sum(np.ones((4, 4)).T, axis=0)
    with pytest.raises(ValueError, match="out of bounds"):
        pk.sum(x, axis=1)
    with pytest.raises(TypeError, match="axis"):
        pk.sum(x, axis=True)
    with pytest.raises(TypeError, match="axis"):
        pk.sum(x, axis=(0,))
    with pytest.raises(ValueError, match="stream"):
        pk.sum(x, stream=0)


def test_buffer_protocol_objects():
    a = array.array("d", [1.0, 2.5, -4.0])
    assert_same(pk.sum(a), np.float64(-0.5))
    assert_same(pk.argmin(memoryview(a)), np.int64(2))
    assert_same(pk.max(np.float32(2.5)), np.float32(2.5))  # a NumPy scalar is 0-d
    b = bytearray(range(1, 9))
    assert_same(pk.sum(memoryview(b).cast("I")), np.uint64(np.frombuffer(b, np.uint32).sum()))


def test_numpy_axis_types(rng):
    x = random_array(rng, (3, 4), np.int32)
    assert_same(pk.sum(x, axis=np.int64(1)), np.sum(x, axis=1))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_edges(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, 0, info.max], dtype)
    for op in OPS:
        assert_same(getattr(pk, op)(x), numpy_reduce(op, x))

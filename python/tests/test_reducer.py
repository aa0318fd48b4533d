"""pk.Reducer against NumPy: value and arg kinds, map/final, axes, errors."""

import math

import numpy as np
import pytest
from helpers import assert_same, random_array

import pk


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int32, np.uint64), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", ((1,), (1000,), (37, 23)), ids=str)
def test_value(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    x64 = x.astype(np.float64)
    sumsq = pk.Reducer(map="x * x", combine="a + b", identity=0.0)
    norm = pk.Reducer(map="x * x", combine="a + b", identity=0.0, final="sqrt(r)")
    vmax = pk.Reducer(map="fabs(x)", combine="fmax(a, b)", identity=float("nan"))
    got = sumsq(x)
    assert isinstance(got, np.float64)
    np.testing.assert_allclose(got, np.sum(x64 * x64), rtol=1e-12)
    np.testing.assert_allclose(norm(x), math.sqrt(np.sum(x64 * x64)), rtol=1e-12)
    assert_same(vmax(x), np.max(np.abs(x64)))
    if len(shape) == 2:
        for axis in (0, 1, -1):
            np.testing.assert_allclose(sumsq(x, axis=axis), np.sum(x64 * x64, axis=axis), rtol=1e-12)
            assert_same(vmax(x, axis=axis), np.max(np.abs(x64), axis=axis))


def test_arg_and_index(rng):
    x = random_array(rng, (50, 40), np.float32)
    absmax = pk.Reducer(map="fabs(x)", combine="fmax(a, b)", identity=float("nan"), kind="arg")
    got = absmax(x)
    assert isinstance(got, np.int64) and got == np.argmax(np.abs(x))
    assert_same(absmax(x, axis=0), np.argmax(np.abs(x), axis=0))
    assert_same(absmax(x, axis=1), np.argmax(np.abs(x), axis=1))
    # the map sees i, the index along the reduced range
    weighted = pk.Reducer(map="x * i", combine="a + b", identity=0.0)
    v = np.arange(10, dtype=np.float64)
    assert weighted(v) == np.sum(v * v)
    with pytest.raises(ValueError, match="zero-size"):
        absmax(np.zeros(0, np.float32))


def test_acc_f32_and_empty():
    r = pk.Reducer(combine="a + b", identity=0.0, acc="float32")
    got = r(np.ones(10, np.float64))
    assert isinstance(got, np.float32) and got == 10
    r2 = pk.Reducer(combine="a * b", identity=1.0, final="r + 1", acc=np.float32)
    assert r2(np.zeros(0, np.float32)) == np.float32(2.0)  # final(identity)
    assert r2.acc == "float32" and r2.final == "r + 1" and r2.map is None


def test_info_and_repr():
    r = pk.Reducer(map="x", combine="fmin(a, b)", identity=float("inf"))
    assert r.info["origin"] == "interpreted"  # CPU: nothing is compiled
    r(np.ones(4))
    assert r.info["arch"] == "" and r.info["nvrtc_version"] == 0
    assert "fmin(a, b)" in repr(r) and r.kind == "value" and r.identity == math.inf


def test_errors():
    with pytest.raises(pk.CompileError, match="position"):
        pk.Reducer(combine="a + * b", identity=0.0)
    with pytest.raises(pk.CompileError):
        pk.Reducer(map="y", combine="a + b", identity=0.0)
    with pytest.raises(TypeError, match="combine"):
        pk.Reducer(identity=0.0)
    with pytest.raises(TypeError, match="identity"):
        pk.Reducer(combine="a + b")
    with pytest.raises(TypeError, match="identity"):
        pk.Reducer(combine="a + b", identity="zero")
    with pytest.raises(ValueError, match="acc"):
        pk.Reducer(combine="a + b", identity=0.0, acc="int32")
    with pytest.raises(ValueError, match="kind"):
        pk.Reducer(combine="a + b", identity=0.0, kind="index")
    with pytest.raises(pk.ArgumentError, match="final"):
        pk.Reducer(combine="fmax(a, b)", identity=0.0, final="r", kind="arg")
    r = pk.Reducer(combine="a + b", identity=0.0)
    with pytest.raises(TypeError, match="float16"):
        r(np.ones(3, np.float16))
    with pytest.raises(ValueError, match="middle axis"):
        r(np.ones((2, 3, 4)), axis=1)

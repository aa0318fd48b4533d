"""Reference results for the tests: exact sums and dots (math.fsum over
float64 values, exact for float32 inputs and correctly rounded for float64
ones), and random arrays of every dtype pk reduces."""

import math

import numpy as np

FLOATS = (np.float32, np.float64)
INTS = (np.int32, np.int64, np.uint32, np.uint64)
DTYPES = FLOATS + INTS


def exact_sum(x):
    """The sum of x's values, correctly rounded to float64 (math.fsum)."""
    return math.fsum(np.asarray(x, dtype=np.float64).ravel().tolist())


def exact_dot(x, y):
    """sum(x*y): products of float32 values are exact in float64; float64
    products are split exactly (Dekker) before fsum."""
    x = np.asarray(x)
    y = np.asarray(y)
    if x.dtype == np.float32:
        return math.fsum((x.astype(np.float64) * y.astype(np.float64)).tolist())
    terms = []
    for a, b in zip(x.tolist(), y.tolist()):
        p = a * b
        terms.append(p)
        terms.append(_two_product_error(a, b, p))
    return math.fsum(terms)


def _split(a):
    c = 134217729.0 * a  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_product_error(a, b, p):
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(p)):
        return 0.0
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def random_array(rng, shape, dtype):
    """Values that exercise each dtype: floats of mixed sign and magnitude,
    integers over their whole range (sums wrap, as NumPy's)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 1e3], size=shape)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def assert_same(got, want):
    """Equal values and dtype; NaN equals NaN."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


class DLPackOnly:
    """An array seen only through DLPack (as JAX's): pk's generic path."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

"""The CUDA paths: CuPy arrays, PyTorch CUDA tensors, Numba device arrays and
DLPack-only CUDA arrays, against NumPy and pk's CPU results. Every test
skips without a CUDA device, without CUDA in pk's build, or without the
array library it uses."""

import importlib

import numpy as np
import pytest
from helpers import DLPackOnly, assert_same, random_array
from test_reduce import check_sum

import pk

GPU = pk._pk.features()["cuda"] and pk._pk.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not GPU, reason="no CUDA device, or pk built without CUDA")


def _import(name):
    try:
        return importlib.import_module(name)
    except Exception:  # missing, or unusable here
        return None


class CuPyLib:
    name = "cupy"

    def __init__(self):
        self.m = _import("cupy")
        self.ok = self.m is not None and GPU and self.m.cuda.runtime.getDeviceCount() > 0

    def asarray(self, a):
        return self.m.asarray(a)

    def host(self, x):
        return self.m.asnumpy(x)

    def native(self, x):
        return isinstance(x, self.m.ndarray)

    def device(self, x):
        return x.device.id

    def new_stream(self):
        return self.m.cuda.Stream(non_blocking=True)

    def using(self, s):
        return s

    def ptr(self, s):
        return s.ptr

    def full(self, n, value, dtype):
        return self.m.full(n, value, dtype=dtype)

    def sync(self):
        self.m.cuda.Device().synchronize()


class TorchLib:
    name = "torch"

    def __init__(self):
        self.m = _import("torch")
        self.ok = self.m is not None and GPU and self.m.cuda.is_available()

    def asarray(self, a):
        return self.m.as_tensor(a, device="cuda")

    def host(self, x):
        signed = {self.m.uint64: self.m.int64, self.m.uint32: self.m.int32}.get(x.dtype)
        if signed is None:
            return x.cpu().numpy()
        # PyTorch's unsigned tensors may not convert to NumPy: go through the signed view
        return x.view(signed).cpu().numpy().view(np.dtype(str(x.dtype).replace("torch.", "")))

    def native(self, x):
        return isinstance(x, self.m.Tensor) and x.is_cuda

    def device(self, x):
        return x.get_device()

    def new_stream(self):
        return self.m.cuda.Stream()

    def using(self, s):
        return self.m.cuda.stream(s)

    def ptr(self, s):
        return s.cuda_stream

    def full(self, n, value, dtype):
        return self.m.full((n,), value, dtype=getattr(self.m, np.dtype(dtype).name), device="cuda")

    def sync(self):
        self.m.cuda.synchronize()


LIBS = {"cupy": CuPyLib, "torch": TorchLib}


@pytest.fixture(params=sorted(LIBS))
def lib(request):
    lib = LIBS[request.param]()
    if not lib.ok:
        pytest.skip(f"{request.param} is not installed or sees no GPU")
    return lib


def dtypes_for(lib):
    base = [np.float32, np.float64, np.int32, np.int64]
    return base + [np.uint32, np.uint64] if lib.name == "cupy" else base


OPS = ("sum", "prod", "min", "max", "argmin", "argmax")


@pytest.mark.parametrize("shape", ((1,), (1000,), ((1 << 20) + 3,), (257, 129), (3, 70000)), ids=str)
def test_reductions(rng, lib, shape):
    for dtype in dtypes_for(lib):
        x = random_array(rng, shape, dtype)
        if dtype in (np.float32, np.float64):
            x_prod = np.exp(rng.normal(0, 0.01, shape)).astype(dtype)
        else:
            x_prod = x
        for op in OPS:
            src = x_prod if op == "prod" else x
            d = lib.asarray(src)
            for axis in (None, 0, -1) if len(shape) == 2 else (None,):
                got = getattr(pk, op)(d, axis=axis)
                assert lib.native(got) and lib.device(got) == lib.device(d)
                h = lib.host(got)
                want = getattr(np, op)(src, axis=axis)
                assert h.shape == np.shape(want)
                if op == "sum" and np.dtype(dtype).kind == "f":
                    check_sum(h, src, axis)
                elif op == "prod" and np.dtype(dtype).kind == "f":
                    n = src.size if axis is None else src.shape[axis]
                    np.testing.assert_allclose(h, np.prod(src.astype(np.float64), axis=axis),
                                               rtol=4 * n * np.finfo(dtype).eps)
                else:
                    assert_same(h, want)


def test_nan_and_empty(lib):
    x = np.ones(5000, np.float32)
    x[1234] = np.nan
    x[3000] = np.nan
    d = lib.asarray(x)
    assert np.isnan(lib.host(pk.sum(d)))
    assert lib.host(pk.argmax(d)) == 1234
    e = lib.asarray(np.zeros(0, np.float32))
    assert lib.host(pk.sum(e)) == 0
    with pytest.raises(ValueError, match="zero-size"):
        pk.min(e)


def test_stream_follows_library(lib):
    """With no stream=, pk runs on the library's current stream: a result
    read on that stream sees the data a kernel just wrote there."""
    n = 1 << 24
    s = lib.new_stream()
    with lib.using(s):
        for k in range(3):
            x = lib.full(n, float(k + 1), np.float32)  # asynchronous on s
            r = pk.sum(x)
            assert float(lib.host(r)) == float(n * (k + 1))
    lib.sync()


def test_explicit_stream(lib):
    n = 1 << 22
    s = lib.new_stream()
    with lib.using(s):
        x = lib.full(n, 2.0, np.float64)
    for stream in (s, lib.ptr(s)):  # a stream object, or its handle
        r = pk.sum(x, stream=stream)
        with lib.using(s):
            assert float(lib.host(r)) == 2.0 * n
    # afterwards the default stream works as before
    assert float(lib.host(pk.sum(x))) == 2.0 * n
    with pytest.raises(TypeError, match="stream"):
        pk.sum(x, stream="default")


def test_out_and_errors(lib, rng):
    x = random_array(rng, (64, 48), np.float32)
    d = lib.asarray(x)
    out = lib.asarray(np.zeros(48, np.float32))
    assert pk.max(d, axis=0, out=out) is out
    assert_same(lib.host(out), np.max(x, axis=0))
    with pytest.raises(ValueError, match="host memory"):
        pk.max(d, axis=0, out=np.zeros(48, np.float32))
    with pytest.raises(ValueError, match="host memory"):
        pk.dot(lib.asarray(x[0]), x[1])
    with pytest.raises(ValueError, match="C-contiguous"):
        pk.sum(d[:, ::2])
    with pytest.raises(TypeError, match="float16"):
        pk.sum(lib.asarray(x.astype(np.float16)))


def test_blas(lib, rng):
    x = random_array(rng, 100003, np.float32)
    y = random_array(rng, 100003, np.float32)
    dx, dy = lib.asarray(x), lib.asarray(y)
    r = pk.dot(dx, dy)
    assert lib.native(r) and lib.host(r).shape == ()
    np.testing.assert_allclose(lib.host(r), np.dot(x.astype(np.float64), y), rtol=1e-6)
    pk.axpy(0.75, dx, dy)
    pk.axpy(0.75, x, y)
    assert_same(lib.host(dy), y)  # the same bits as the CPU backend
    a = rng.standard_normal((300, 200)).astype(np.float32)
    b = rng.standard_normal((200, 100)).astype(np.float32)
    da, db = lib.asarray(a), lib.asarray(b)
    want = a.astype(np.float64) @ b
    scale = np.abs(want).max()
    for mode, tol in (("fp32", 1e-5), ("fp32_accurate", 1e-5), ("tf32", 5e-3)):
        c = pk.matmul(da, db, mode=mode)
        assert lib.native(c)
        np.testing.assert_allclose(lib.host(c), want, atol=tol * scale)
    c = pk.matmul(db.T, da.T)  # transposed views read in place
    np.testing.assert_allclose(lib.host(c), want.T, atol=1e-5 * scale)


def test_bits(lib, rng):
    x = rng.standard_normal((50, 300)).astype(np.float32)
    w = pk.pack_bits(lib.asarray(x))
    assert_same(lib.host(w).view(np.uint64), pk.pack_bits(x))
    wc = pk.pack_bits(x)
    assert_same(lib.host(pk.bgemm(w, w, 300)), pk.bgemm(wc, wc, 300))
    assert_same(lib.host(pk.hamming(w, w)), pk.hamming(wc, wc))
    for code_bytes in (16, 12):  # in place, and padded on the GPU
        db = rng.integers(0, 256, (500, code_bytes), dtype=np.uint8)
        q = db[:7].copy()
        d, i = pk.hamming_topk(lib.asarray(q), lib.asarray(db), 4)
        dc, ic = pk.hamming_topk(q, db, 4)
        assert_same(lib.host(d), dc)
        assert_same(lib.host(i), ic)


def test_reducer(lib, rng):
    x = random_array(rng, (128, 96), np.float32)
    d = lib.asarray(x)
    expr = dict(map="fabs(x)", combine="fmax(a, b)", identity=float("nan"))
    r = pk.Reducer(**expr, acc="float32")
    got = r(d)
    assert r.info["origin"] in ("compiled", "disk_cache", "memory_cache")
    assert r.info["arch"].startswith("sm_")
    assert_same(lib.host(got), np.max(np.abs(x)))
    assert_same(lib.host(r(d, axis=1)), np.max(np.abs(x), axis=1))
    r2 = pk.Reducer(**expr, acc="float32")
    r2(d)
    assert r2.info["origin"] == "memory_cache"
    ra = pk.Reducer(**expr, kind="arg")
    assert int(lib.host(ra(d))) == np.argmax(np.abs(x))


def test_dlpack_only_cuda_array(rng):
    cupy = CuPyLib()
    if not cupy.ok:
        pytest.skip("needs CuPy (results of unknown CUDA arrays are CuPy arrays)")
    x = random_array(rng, 4096, np.float64)
    got = pk.sum(DLPackOnly(cupy.asarray(x)))
    assert cupy.native(got)
    check_sum(cupy.host(got), x, None)


def test_numba_device_array(rng):
    numba = _import("numba.cuda")
    if numba is None or not numba.is_available():
        pytest.skip("needs numba-cuda and a GPU it can use")
    x = random_array(rng, (100, 30), np.float32)
    d = numba.to_device(x)
    got = pk.max(d, axis=1)
    assert hasattr(got, "__cuda_array_interface__") and type(got).__module__.startswith("numba")
    assert_same(got.copy_to_host(), np.max(x, axis=1))
    check_sum(pk.sum(d).copy_to_host(), x, None)

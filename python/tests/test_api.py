"""The package around the kernels: info, errors, the adapter protocol that
non-NumPy arrays go through, DLPack, threads."""

import threading
from importlib import metadata

import numpy as np
import pytest
from helpers import DLPackOnly, assert_same, random_array

import pk
from pk import _adapters


def test_version_and_info(capsys):
    assert pk.__version__ == pk._pk.version()
    try:  # installed by pip: pyproject.toml reads the version from include/pk.h
        assert metadata.version("pk") == pk.__version__
    except metadata.PackageNotFoundError:  # a build tree's extension on PYTHONPATH
        pass
    i = pk.info()
    assert i["version"] == pk.__version__
    assert i["build"]["version"] == pk.__version__
    for key in ("git", "compiler", "build_type", "cuda", "cuda_arch", "nvrtc", "mpi", "nccl"):
        assert key in i["build"]
    assert set(i["features"]) == {"cuda", "nvrtc", "mpi", "nccl"}
    assert i["cpu"]["isa"] in ("avx512", "avx2", "generic", "reference")
    assert isinstance(i["devices"], list)
    pk.show_config()
    out = capsys.readouterr().out
    assert out.startswith(f"pk {pk.__version__}") and "cpu:" in out


def test_error_classes():
    assert issubclass(pk.ArgumentError, pk.Error) and issubclass(pk.ArgumentError, ValueError)
    assert issubclass(pk.OutOfMemoryError, MemoryError)
    assert issubclass(pk.FileError, OSError)
    for cls in (pk.UnsupportedError, pk.NoDeviceError, pk.DeviceError, pk.CompileError,
                pk.InternalError, pk.CommError):
        assert issubclass(cls, pk.Error)
    with pytest.raises(pk.ArgumentError) as e:
        x = np.ones(10)
        pk.axpy(1.0, x[1:], x[:-1])
    assert e.value.status == "PK_ERR_ARG" and "pk_axpy" in str(e.value)


class FakeArray:
    """An array type pk does not know, read through a registered adapter
    (as PyTorch and CuPy arrays are): host memory, results of its own type."""

    def __init__(self, a):
        self.a = a


def fake_alloc(shape, dtype, stream):
    a = np.empty(shape, dtype)
    return FakeArray(a), a.ctypes.data


def fake_view(x, fn, name):
    a = x.a
    strides = None if a.flags.c_contiguous and a.ndim % 2 else a.strides  # both forms
    ptr = 0 if a.size == 0 else a.ctypes.data  # empty tensors may have no memory
    return (ptr, a.shape, strides, a.dtype.name, -1, not a.flags.writeable, 0, fake_alloc, a)


@pytest.fixture
def fake_adapter():
    _adapters._by_type[FakeArray] = fake_view
    yield
    del _adapters._by_type[FakeArray]


def test_adapter_protocol(rng, fake_adapter):
    x = random_array(rng, (30, 20), np.float32)
    f = FakeArray(x)
    s = pk.sum(f)
    assert isinstance(s, FakeArray) and s.a.shape == () and s.a == pk.sum(x)  # 0-d, its type
    assert_same(pk.max(f, axis=0).a, pk.max(x, axis=0))
    assert_same(pk.argmin(FakeArray(x[3]), axis=-1).a, np.argmin(x[3]))
    assert_same(pk.matmul(f, FakeArray(x.T)).a, pk.matmul(x, x.T))
    y = x.copy()
    assert pk.axpy(2.0, f, FakeArray(y)).a is y
    assert_same(y, x + np.float32(2) * x)
    out = FakeArray(np.empty(20, np.float32))
    assert pk.sum(f, axis=0, out=out) is out
    w = pk.pack_bits(FakeArray(x))
    assert isinstance(w, FakeArray) and w.a.dtype == np.uint64
    d, i = pk.hamming_topk(w, w, 2)
    assert isinstance(d, FakeArray) and (d.a[:, 0] == 0).all()
    assert pk.sum(FakeArray(np.zeros(0, np.float64))).a == 0  # NULL memory, n = 0
    ro = x.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        pk.axpy(1.0, f, FakeArray(ro))
    with pytest.raises(ValueError, match="C-contiguous"):
        pk.sum(FakeArray(x[:, ::2]))
    assert_same(pk.dot(x[0], FakeArray(x[1])), pk.dot(x[0], x[1]))  # host with host: NumPy result
    r = pk.Reducer(combine="fmax(a, b)", identity=float("nan"))
    assert r(f).a == np.max(x)


def test_mixed_memory_refused(rng, fake_adapter):
    """Arrays of one call must share a device: host FakeArray vs a device
    one (claimed) is refused before any work."""
    x = np.ones(4, np.float32)

    def device_view(v, fn, name):
        return (v.a.ctypes.data, v.a.shape, None, "float32", 0, False, 0, fake_alloc, v.a)

    _adapters._by_type[FakeArray] = device_view
    with pytest.raises(ValueError, match="CUDA device 0"):
        pk.dot(x, FakeArray(x))


def test_dlpack_cpu(rng):
    x = random_array(rng, (7, 9), np.float64)
    assert_same(pk.sum(DLPackOnly(x), axis=1), pk.sum(x, axis=1))
    assert isinstance(pk.sum(DLPackOnly(x)), np.float64)


def test_threads(rng):
    """Each thread has its own context: concurrent calls give each the bits
    one thread alone gives (pk is deterministic)."""
    arrays = [random_array(rng, 300001, np.float32) for _ in range(4)]
    want = [pk.sum(a) for a in arrays]
    got = [None] * 4
    errors = []

    def work(k):
        try:
            for _ in range(20):
                got[k] = pk.sum(arrays[k])
                assert got[k] == want[k]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == want

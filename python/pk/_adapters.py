"""How pk's extension reads arrays that are not buffer-protocol objects, and
allocates results of the caller's type.

The extension reads NumPy arrays (and anything with the buffer protocol)
itself. For any other object it calls adapt(x, fn, name), which returns a
NumPy array (a host view, read by the buffer protocol) or the tuple

    (ptr, shape, strides in bytes or None, dtype name, device, readonly,
     stream, alloc, owner)

device: the CUDA device, or -1 for host memory; stream: the array library's
current stream on that device (the default of stream=); alloc(shape, dtype,
stream) -> (array, ptr) makes a result of the caller's type on that device,
allocated for that stream (None: the library's current stream, the common
and cheapest case); owner: kept alive for the call.

Everything is zero copy: the views point into the caller's memory.
"""

import sys

import numpy as np

from . import _errors

_pk = None  # pk._pk, set by pk/__init__.py (this module is imported first)

# NumPy's names for the dtypes pk reads; anything else is named for errors.
_NAMES = ("float32", "float64", "int32", "int64", "uint32", "uint64", "uint8", "uint16", "bool")
_LEGACY = (0, 1)  # the legacy default stream, as libraries and CAI name it


def dtype_name(obj):
    """NumPy's name for a dtype-like: "float32", np.float32, a NumPy or
    CuPy dtype, a torch.dtype."""
    mod = type(obj).__module__
    if mod.startswith("torch"):
        return str(obj).replace("torch.", "")
    return np.dtype(obj).name


def stream_handle(s):
    """The cudaStream_t of a stream object (the stream= argument)."""
    if hasattr(s, "__cuda_stream__"):  # CUDA Python's stream protocol
        return int(s.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr"):  # PyTorch, CuPy
        v = getattr(s, attr, None)
        if isinstance(v, int):
            return v
    handle = getattr(s, "handle", None)  # Numba
    if handle is not None:
        v = getattr(handle, "value", handle)
        return int(v or 0)
    raise TypeError(
        f"pk: stream= must be an int (a cudaStream_t) or a CuPy, PyTorch or Numba stream, "
        f"not {type(s).__name__}"
    )


# ---- PyTorch ---------------------------------------------------------------

_torch = None
_TORCH_NAMES = {}  # torch.dtype -> name
_TORCH_DTYPES = {}  # name -> torch.dtype
_torch_allocs = {}


def _torch_setup():
    global _torch
    import torch

    _torch = torch
    for name in _NAMES:
        dt = getattr(torch, name, None)
        if isinstance(dt, torch.dtype):
            _TORCH_NAMES[dt] = name
            _TORCH_DTYPES[name] = dt


def _torch_alloc(dev):
    fn = _torch_allocs.get(dev)
    if fn is not None:
        return fn
    torch = _torch
    device = torch.device("cuda", dev) if dev >= 0 else torch.device("cpu")

    def alloc(shape, dtype, stream):
        dt = _TORCH_DTYPES.get(dtype)
        if dt is None:
            raise TypeError(f"pk: this PyTorch has no {dtype} tensors")
        if stream is None or dev < 0 or _same_stream(stream, torch._C._cuda_getCurrentRawStream(dev)):
            t = torch.empty(shape, dtype=dt, device=device)
        else:  # allocated for the stream the result is written on
            with _torch_stream(stream, device):
                t = torch.empty(shape, dtype=dt, device=device)
        return t, t.data_ptr()

    _torch_allocs[dev] = alloc
    return alloc


def _torch_stream(stream, device):
    """A context making stream PyTorch's current one (legacy: its default)."""
    torch = _torch
    if stream in _LEGACY:
        return torch.cuda.stream(torch.cuda.default_stream(device))
    return torch.cuda.stream(torch.cuda.ExternalStream(stream, device=device))


def _torch_view(x, fn, name):
    if x.is_cuda:
        dev = x.get_device()
        stream = _torch._C._cuda_getCurrentRawStream(dev)
    elif x.device.type == "cpu":
        dev, stream = -1, 0
    else:
        raise TypeError(f"{fn}: {name} is a tensor on {x.device}; pk reads CPU and CUDA tensors")
    if x.is_contiguous():
        strides = None
    else:
        item = x.element_size()
        strides = tuple([s * item for s in x.stride()])
    dt = _TORCH_NAMES.get(x.dtype) or str(x.dtype).replace("torch.", "")
    return (x.data_ptr(), tuple(x.shape), strides, dt, dev, False, stream, _torch_alloc(dev), None)


# ---- CuPy ------------------------------------------------------------------

_cupy = None
_cupy_allocs = {}


_cupy_dtypes = {}  # dtype -> NumPy's name, without numpy.dtype.name's cost
_np_dtypes = {name: np.dtype(name) for name in _NAMES}


def _cupy_alloc(dev):
    fn = _cupy_allocs.get(dev)
    if fn is not None:
        return fn
    cupy = _cupy
    ndarray, get_device = cupy.ndarray, cupy.cuda.runtime.getDevice

    def alloc(shape, dtype, stream):
        dt = _np_dtypes.get(dtype)  # not `or`: a plain dtype is falsy (it has 0 fields)
        if dt is None:
            dt = np.dtype(dtype)
        if stream is None and get_device() == dev:  # the common case: no switching
            a = ndarray(shape, dt)
        else:
            with cupy.cuda.Device(dev):
                if stream is None or _same_stream(stream, cupy.cuda.get_current_stream().ptr):
                    a = ndarray(shape, dt)
                else:  # the pool keeps memory per stream: allocate for this one
                    with _cupy_stream(stream):
                        a = ndarray(shape, dt)
        return a, a.data.ptr

    _cupy_allocs[dev] = alloc
    return alloc


def _cupy_view(x, fn, name):
    # Plain attributes only: x.device makes a Device object, and NumPy's
    # dtype.name is computed in Python on every read (docs/PYTHON.md).
    mem = x.data
    dev = mem.device_id
    stream = _cupy.cuda.get_current_stream(dev).ptr
    dt = x.dtype
    dname = _cupy_dtypes.get(dt)
    if dname is None:
        dname = _cupy_dtypes[dt] = dt.name
    alloc = _cupy_allocs.get(dev) or _cupy_alloc(dev)
    return (mem.ptr, x.shape, x.strides, dname, dev, False, stream, alloc, None)


# ---- __cuda_array_interface__ (Numba and others) and DLPack --------------------

_numba_allocs = {}


def _same_stream(a, b):
    return a == b or (a in _LEGACY and b in _LEGACY)


def _typestr_name(typestr):
    """'<f4' -> 'float32'; '>f4' names itself (big-endian is refused)."""
    if typestr[0] == ">":
        return "big-endian " + typestr
    try:
        return np.dtype(typestr).name
    except TypeError:
        return typestr


def _foreign_alloc(x, dev):
    """Results for a CUDA array of a library pk does not know: Numba device
    arrays for Numba's, else CuPy arrays."""
    mod = type(x).__module__.split(".")[0]
    if mod in ("numba", "numba_cuda"):
        fn = _numba_allocs.get(dev)
        if fn is None:
            from numba import cuda

            def fn(shape, dtype, stream):
                with cuda.gpus[dev]:
                    a = cuda.device_array(shape, dtype=np.dtype(dtype))
                return a, a.__cuda_array_interface__["data"][0]

            _numba_allocs[dev] = fn
        return fn
    if _have_cupy():
        return _cupy_alloc(dev)

    def refuse(shape, dtype, stream):
        raise TypeError(
            f"pk: no array library to make a result like a {type(x).__name__} on CUDA "
            f"device {dev} (install CuPy, or pass out=)"
        )

    return refuse


def _for_stream(alloc, default):
    """alloc, with stream None (the caller named none) meaning the array's
    own stream, not the allocating library's current one."""

    def fn(shape, dtype, stream):
        return alloc(shape, dtype, default if stream is None else stream)

    return fn


def _no_cuda(fn, name):
    if not _pk.features()["cuda"]:
        raise _errors.NoDeviceError(f"{fn}: {name} is a CUDA array, and this pk was built without CUDA")


def _cai_view(x, fn, name):
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise TypeError(f"{fn}: {name} is a masked array; pk reads plain arrays")
    _no_cuda(fn, name)
    ptr, readonly = cai["data"]
    dev = _pk.pointer_device(ptr) if ptr else 0
    if dev < 0:
        raise ValueError(f"{fn}: {name}'s __cuda_array_interface__ points to host memory")
    # CAI v3: the stream to order the access after; None: no ordering needed.
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    stream = 1 if stream is None else int(stream)
    strides = cai.get("strides")
    return (
        ptr,
        tuple(cai["shape"]),
        None if strides is None else tuple(strides),
        _typestr_name(cai["typestr"]),
        dev,
        bool(readonly),
        stream,
        _for_stream(_foreign_alloc(x, dev), stream),
        None,
    )


def _dlpack_view(x, fn, name):
    dev_type, dev_id = x.__dlpack_device__()
    if dev_type in (1, 3):  # CPU, CUDA pinned host memory: a NumPy view
        return np.from_dlpack(x)
    if dev_type not in (2, 13):  # CUDA, CUDA managed
        raise TypeError(f"{fn}: {name} is on DLPack device type {dev_type}; pk reads CPU and CUDA memory")
    _no_cuda(fn, name)
    try:
        capsule = x.__dlpack__(stream=1)  # pk's default: the legacy default stream
    except TypeError:
        capsule = x.__dlpack__()
    ptr, shape, strides, dt, dev = _pk.dlpack_view(capsule)
    return (ptr, shape, strides, dt, dev, False, 1, _for_stream(_foreign_alloc(x, dev), 1), x)


# ---- dispatch ----------------------------------------------------------------

_by_type = {}


def _have_cupy():
    """Import CuPy on first need; False where it is missing or unusable."""
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except Exception:  # not installed, or no usable CUDA: no CuPy results
            return False
        _cupy = cupy
    return True


def _masked(x, fn, name):
    raise TypeError(f"{fn}: {name} is a masked array; pk reads plain arrays (pass x.data or x.filled(...))")


def _resolve(tp):
    if hasattr(tp, "mask"):  # numpy.ma: the mask would be ignored
        return _masked
    mod = tp.__module__.split(".")[0]
    if mod == "torch" and "torch" in sys.modules and issubclass(tp, sys.modules["torch"].Tensor):
        if _torch is None:
            _torch_setup()
        return _torch_view
    if mod == "cupy" and "cupy" in sys.modules and issubclass(tp, sys.modules["cupy"].ndarray):
        _have_cupy()
        return _cupy_view
    if hasattr(tp, "__cuda_array_interface__"):
        return _cai_view
    if hasattr(tp, "__dlpack__") and hasattr(tp, "__dlpack_device__"):
        return _dlpack_view
    return None


def adapt(x, fn, name):
    """The view of a non-buffer array (see the module's doc)."""
    tp = type(x)
    view = _by_type.get(tp)
    if view is None:
        view = _resolve(tp)
        if view is None:
            raise TypeError(
                f"{fn}: {name} is a {tp.__module__}.{tp.__qualname__}, not an array pk reads "
                "(NumPy arrays and buffer-protocol objects, PyTorch tensors, CuPy arrays, "
                "__cuda_array_interface__ or DLPack arrays; pk never copies, so lists and "
                "scalars need numpy.asarray first)"
            )
        _by_type[tp] = view
    return view(x, fn, name)


# ---- zero-padded words for unaligned uint8 codes ------------------------------


def pad_codes(x, stream):
    """uint8 codes (rows x b bytes, b not a multiple of 8, or unaligned) as
    rows x ceil(b/8) uint64 words, zero-padded: a copy in x's library, on
    stream (None: host memory)."""
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        torch = _torch
        nbytes = x.shape[-1]
        words = (nbytes + 7) // 8
        with _null() if stream is None else _torch_stream(stream, x.device):
            z = torch.zeros(tuple(x.shape[:-1]) + (words * 8,), dtype=torch.uint8, device=x.device)
            z[..., :nbytes] = x
        return z.view(torch.int64)
    if stream is None:
        xp, a = np, np.asarray(x)
    elif _have_cupy():
        xp = _cupy  # zero copy through __cuda_array_interface__ or DLPack
        a = _cupy.asarray(x) if hasattr(x, "__cuda_array_interface__") else _cupy.from_dlpack(x)
    else:
        raise TypeError(
            "pk: uint8 codes that are not whole 8-byte-aligned words need CuPy to pad them "
            "on the GPU (or pass uint64 words)"
        )
    words = (a.shape[-1] + 7) // 8
    with _null() if stream is None else _cupy_stream(stream):
        z = xp.zeros(a.shape[:-1] + (words * 8,), dtype=xp.uint8)
        z[..., : a.shape[-1]] = a
    return z.view(xp.uint64)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _cupy_stream(stream):
    """A context making stream CuPy's current one (legacy: the null stream)."""
    if stream in _LEGACY:
        return _cupy.cuda.Stream.null
    return _cupy.cuda.ExternalStream(stream)

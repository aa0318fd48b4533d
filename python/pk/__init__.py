"""pk (parallel kernels) for Python: deterministic, compensated reductions,
dot, axpy, GEMM (fp32 / tf32 / fp32_accurate), bit packing, binary GEMM and
Hamming search, on CPUs and NVIDIA GPUs, called on NumPy arrays, PyTorch
tensors, CuPy arrays and any __cuda_array_interface__ / DLPack array, zero
copy, on the caller's CUDA stream; results come back as the caller's array
type. docs/PYTHON.md has the whole story.
"""

import atexit as _atexit

import numpy as _np

from . import _adapters, _errors, _pk
from ._errors import (
    ArgumentError,
    CommError,
    CompileError,
    DeviceError,
    Error,
    FileError,
    InternalError,
    NoDeviceError,
    OutOfMemoryError,
    UnsupportedError,
)

_adapters._pk = _pk
_pk._register(_adapters, _errors.BY_STATUS, _np)
# Contexts of the main thread are left to the process's exit (CUDA may be
# shutting down by then); other threads free theirs when they end.
_atexit.register(_pk._shutdown)

from ._info import info, show_config  # noqa: E402
from ._pk import (  # noqa: E402
    Reducer,
    argmax,
    argmin,
    axpy,
    bgemm,
    dot,
    gemm,
    hamming,
    hamming_topk,
    matmul,
    max,
    min,
    pack_bits,
    prod,
    sum,
    unpack_bits,
)

__version__ = _pk.version()

__all__ = [
    "sum", "prod", "min", "max", "argmin", "argmax", "dot", "axpy", "gemm", "matmul",
    "pack_bits", "unpack_bits", "bgemm", "hamming", "hamming_topk", "Reducer",
    "info", "show_config", "Error", "ArgumentError", "OutOfMemoryError",
    "UnsupportedError", "NoDeviceError", "DeviceError", "CompileError", "FileError",
    "InternalError", "CommError",
]

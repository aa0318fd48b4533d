"""pk's statuses as exceptions: pk.Error and one subclass per pk_status.

Each carries pk's own message (pk_ctx_error). Where a builtin exception
means the same, the class derives from it too, so that code written for
NumPy keeps working: pk.ArgumentError is a ValueError, pk.OutOfMemoryError
a MemoryError, pk.FileError an OSError.
"""


class Error(Exception):
    """A pk call failed. .status names pk's status (e.g. "PK_ERR_ARG")."""

    status = "PK_ERR_INTERNAL"


class ArgumentError(Error, ValueError):
    """PK_ERR_ARG: an argument is invalid; nothing was done."""

    status = "PK_ERR_ARG"


class OutOfMemoryError(Error, MemoryError):
    """PK_ERR_NOMEM: host or device memory could not be allocated."""

    status = "PK_ERR_NOMEM"


class UnsupportedError(Error):
    """PK_ERR_UNSUPPORTED: a valid request this backend or build cannot run
    (e.g. mode="tf32" on the CPU)."""

    status = "PK_ERR_UNSUPPORTED"


class NoDeviceError(Error):
    """PK_ERR_NO_DEVICE: a CUDA array, and no CUDA device (or no CUDA in
    this build of pk)."""

    status = "PK_ERR_NO_DEVICE"


class DeviceError(Error):
    """PK_ERR_DEVICE: a CUDA call failed; the message names it."""

    status = "PK_ERR_DEVICE"


class CompileError(Error):
    """PK_ERR_COMPILE: a pk.Reducer expression is invalid (position and token
    in the message), or NVRTC rejected the generated code (its log)."""

    status = "PK_ERR_COMPILE"


class FileError(Error, OSError):
    """PK_ERR_IO: a file could not be read or written (the reducer cache)."""

    status = "PK_ERR_IO"


class InternalError(Error):
    """PK_ERR_INTERNAL: a bug in pk; please report it."""

    status = "PK_ERR_INTERNAL"


class CommError(Error):
    """PK_ERR_COMM: an MPI or NCCL call failed."""

    status = "PK_ERR_COMM"


# Indexed by pk_status (PK_OK = 0 never raises).
BY_STATUS = (
    Error,
    ArgumentError,
    OutOfMemoryError,
    UnsupportedError,
    NoDeviceError,
    DeviceError,
    CompileError,
    FileError,
    InternalError,
    CommError,
)

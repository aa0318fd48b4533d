"""pk.info() and pk.show_config(): what this pk was built with and what it
finds on this machine."""

import os
import sys
from importlib import util as _util

import numpy as np

from . import _pk


def _library_version(name):
    mod = sys.modules.get(name)
    if mod is not None:
        return getattr(mod, "__version__", "imported")
    return "installed (not imported)" if _util.find_spec(name) is not None else None


def info():
    """A dict: version, build (pk_build_config as a dict), features (built
    in: cuda, nvrtc, mpi, nccl), cpu (SIMD path, prefetch profile, what the
    CPU backend runs on, cores), devices (the CUDA devices pk can use, each
    with its index and name; a device that fails says why), python and the
    array libraries seen."""
    build = {}
    for line in _pk.build_config().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            build[key] = value
    features = _pk.features()
    return {
        "version": _pk.version(),
        "build": build,
        "features": features,
        "cpu": {
            "isa": _pk.cpu_isa(),
            "prefetch": _pk.cpu_prefetch(),
            "describe": _pk.cpu_describe(),
            "cores": os.cpu_count(),
        },
        "devices": _pk.devices() if features.get("cuda") else [],
        "python": sys.version.split()[0],
        "libraries": {
            "numpy": np.__version__,
            "cupy": _library_version("cupy"),
            "torch": _library_version("torch"),
            "numba": _library_version("numba"),
        },
    }


def show_config():
    """Print pk.info() for people (and bug reports)."""
    i = info()
    print(f"pk {i['version']} (Python {i['python']})")
    print("build:")
    for key, value in i["build"].items():
        print(f"  {key:<11} {value}")
    built = [name for name, on in i["features"].items() if on]
    print(f"features:    {', '.join(built) or 'none'}")
    cpu = i["cpu"]
    print(f"cpu:         {cpu['describe']} (isa {cpu['isa']}, prefetch {cpu['prefetch']}, "
          f"{cpu['cores']} cores)")
    if not i["features"].get("cuda"):
        print("devices:     none (built without CUDA)")
    elif not i["devices"]:
        print("devices:     no CUDA device found")
    for d in i["devices"]:
        print(f"device {d['index']}:    {d.get('name') or 'unusable: ' + d.get('error', '?')}")
    libs = ", ".join(f"{k} {v}" for k, v in i["libraries"].items() if v)
    print(f"libraries:   {libs}")

"""Where the host time of one pk.sum call on a CUDA array goes (docs/PYTHON.md,
"Performance"): each piece of the call timed alone, in a loop of many calls,
on a 1024-element float32 array (GPU work far below the host's), for CuPy and
PyTorch, beside the array library's own sum and empty.

    python bench/probes/python_call_cost.py [--calls 20000]

Every figure is host microseconds per call, the median of 7 loops.
"""

import argparse
import timeit

import numpy as np

import pk
from pk import _adapters


def per_call(fn, calls, sync):
    def loop():
        for _ in range(calls):
            fn()
        sync()

    loop()
    return float(np.median([timeit.timeit(loop, number=1) for _ in range(7)])) / calls * 1e6


def probe(lib, calls):
    torch = lib.__name__ == "torch"
    if torch:
        x = lib.randn(1024, device="cuda")
        sync = lib.cuda.synchronize
        peer_sum, peer_empty = lib.sum, lambda: lib.empty((), device="cuda")
    else:
        x = lib.random.standard_normal(1024, dtype=lib.float32)
        sync = lib.cuda.Device().synchronize
        peer_sum, peer_empty = lib.sum, lambda: lib.empty((), lib.float32)
    view = _adapters.adapt(x, "f", "x")
    alloc = view[7]
    out = alloc((), "float32", None)[0]
    rows = {
        "adapt(x) (Python view)": lambda: _adapters.adapt(x, "f", "x"),
        "alloc(()) (result)": lambda: alloc((), "float32", None),  # as pk.sum(x) calls it
        f"{lib.__name__}.empty(())": peer_empty,
        "C pk_reduce (launch)": None,
        "pk.sum(x, out=o)": lambda: pk.sum(x, out=out),
        "pk.sum(x)": lambda: pk.sum(x),
        f"{lib.__name__}.sum(x)": lambda: peer_sum(x),
    }
    if torch:  # other ways to make the 0-d result (amortized per result)
        dev = x.device
        rows["x.new_empty(())"] = lambda: x.new_empty(())
        rows["torch.empty(dtype, device)"] = lambda: lib.empty((), dtype=lib.float32, device=dev)
        rows["256.unbind(0) / 256"] = lambda: [lib.empty(256, device=dev).unbind(0) for _ in range(1)]
    else:
        f32 = np.dtype(np.float32)
        rows["cupy.ndarray((), f32)"] = lambda: lib.ndarray((), f32)
    for name, fn in rows.items():
        if fn is None:
            t = float(np.median([pk._pk._c_call_ns(x, calls, out) for _ in range(7)])) / 1e3
        else:
            t = per_call(fn, calls, sync)
            if name.startswith("256."):
                t /= 256
        print(f"  {name:<28} {t:8.2f} us", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    for name in ("cupy", "torch"):
        try:
            lib = __import__(name)
        except Exception as e:  # missing or unusable
            print(f"{name}: skipped ({e})")
            continue
        print(f"{name} {lib.__version__}, float32 x 1024 on the GPU:")
        probe(lib, args.calls)


if __name__ == "__main__":
    main()

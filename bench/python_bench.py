"""The Python targets of issue 50 in one run (docs/PYTHON.md, "Performance"):

  gpu_sum      pk.sum vs cupy.sum and torch.sum, float32, 2^20 and 2^28
               (target: >= 1.5x at 2^20, >= 1.0x at 2^28)
  gpu_tf32     pk.matmul(mode="tf32") vs torch.matmul with TF32 allowed,
               8192^2 float32 (target: >= 1.0x)
  overhead     pk.sum on a 1-element NumPy array, less the C call
               pk_reduce timed in a C loop (target: <= 3 us), and numpy.sum
  cpu_sum      pk.sum vs numpy.sum, float32 2^26, both errors against an
               exact sum (target: >= 2x, error no larger than NumPy's)

GPU rows are timed with CUDA events around each call after warm-up (the
caller's view: launch overhead included), median of --runs; the inputs are
random. ratio = peer time / pk time (> 1: pk is faster). Rows that cannot
run here (no GPU, no CuPy or PyTorch) say why.

    python bench/python_bench.py [--runs 50] [--quick] [--json out.json]
"""

import argparse
import json
import math
import platform
import sys
import time
import timeit

import numpy as np

import pk

ROWS = []


def row(group, name, pk_s, peer, peer_s, target, note=""):
    ratio = peer_s / pk_s if pk_s and peer_s else None
    r = {"group": group, "name": name, "pk_s": pk_s, "peer": peer, "peer_s": peer_s,
         "ratio": ratio, "target": target, "note": note}
    ROWS.append(r)
    pk_txt = f"{pk_s * 1e6:12.2f} us" if pk_s is not None else f"{'-':>15}"
    peer_txt = f"{peer_s * 1e6:12.2f} us" if peer_s is not None else f"{'-':>15}"
    ratio_txt = f"{ratio:7.2f}x" if ratio is not None else f"{'-':>8}"
    print(f"{name:<34} pk {pk_txt}  {peer:<14} {peer_txt}  {ratio_txt}  target {target}  {note}",
          flush=True)


def skip(group, why):
    ROWS.append({"group": group, "skipped": why})
    print(f"{group}: skipped ({why})", flush=True)


class Timer:
    """CUDA events of one library: cupy or torch."""

    def __init__(self, lib):
        self.lib = lib
        self.torch = lib.__name__ == "torch"

    def event(self):
        return self.lib.cuda.Event(enable_timing=True) if self.torch else self.lib.cuda.Event()

    def ms(self, start, end):
        return start.elapsed_time(end) if self.torch else self.lib.cuda.get_elapsed_time(start, end)

    def sync(self):
        if self.torch:
            self.lib.cuda.synchronize()
        else:
            self.lib.cuda.Device().synchronize()

    def median(self, fn, runs, warmup=5):
        """Median seconds of fn() between two CUDA events, one pair per call."""
        for _ in range(warmup):
            fn()
        self.sync()
        times = []
        for _ in range(runs):
            start, end = self.event(), self.event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(self.ms(start, end) / 1e3)
        return float(np.median(times))


def gpu_libs():
    """(cupy or None, torch or None, why-not text)."""
    if not pk.info()["features"]["cuda"]:
        return None, None, "this pk was built without CUDA"
    if pk._pk.cuda_device_count() == 0:
        return None, None, "no CUDA device"
    libs = []
    for name in ("cupy", "torch"):
        try:
            libs.append(__import__(name))
        except Exception:  # missing or unusable
            libs.append(None)
    return libs[0], libs[1], ""


def gpu_sum(args, cupy, torch):
    for exp in (20, 28):
        n = 1 << exp
        target = ">= 1.5x" if exp == 20 else ">= 1.0x"
        for lib in (cupy, torch):
            if lib is None:
                continue
            timer = Timer(lib)
            if timer.torch:
                x, peer, what = torch.randn(n, device="cuda"), torch.sum, "torch tensor"
            else:
                x, peer, what = cupy.random.standard_normal(n, dtype=cupy.float32), cupy.sum, "CuPy array"
            t_pk = timer.median(lambda: pk.sum(x), args.runs)
            t_peer = timer.median(lambda: peer(x), args.runs)
            a, b = float(pk.sum(x)), float(peer(x))
            row("gpu_sum", f"sum f32 2^{exp} ({what})", t_pk, peer.__module__.split(".")[0] + ".sum",
                t_peer, target, f"pk {a:.7g} / peer {b:.7g}")
            del x


def gpu_tf32(args, torch):
    n = 4096 if args.quick else 8192
    torch.backends.cuda.matmul.allow_tf32 = True
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    timer = Timer(torch)
    runs = max(5, args.runs // 5)
    t_pk = timer.median(lambda: pk.matmul(a, b, mode="tf32"), runs, 3)
    t_peer = timer.median(lambda: torch.matmul(a, b), runs, 3)
    diff = float((pk.matmul(a, b, mode="tf32") - torch.matmul(a, b)).abs().max())
    flops = 2.0 * n**3
    row("gpu_tf32", f"matmul tf32 {n}^2", t_pk, "torch.matmul", t_peer, ">= 1.0x",
        f"{flops / t_pk / 1e12:.0f} vs {flops / t_peer / 1e12:.0f} TFLOP/s; max |diff| {diff:.3g}")


def per_call(stmt, glob, number):
    """Median seconds per call of stmt over 7 repeats of `number` calls."""
    return float(np.median(timeit.repeat(stmt, globals=glob, number=number, repeat=7))) / number


def overhead(args):
    x = np.ones(1, np.float32)
    number = 20000 if args.quick else 200000
    t_pk = per_call("f(x)", {"f": pk.sum, "x": x}, number)
    t_np = per_call("f(x)", {"f": np.sum, "x": x}, number)
    t_c = float(np.median([pk._pk._c_call_ns(x, number * 5) for _ in range(7)])) * 1e-9
    over = t_pk - t_c
    row("overhead", "pk.sum, 1-element NumPy array", t_pk, "numpy.sum", t_np, "pk - C <= 3 us",
        f"C call {t_c * 1e9:.0f} ns, overhead {over * 1e6:.2f} us "
        f"({'met' if over <= 3e-6 else 'NOT met'})")
    ROWS[-1]["c_call_s"] = t_c
    ROWS[-1]["overhead_s"] = over


def exact_sum(x):
    """math.fsum of 2^20-element chunks' fsums: exact to far below float32."""
    parts = [math.fsum(c.astype(np.float64).tolist()) for c in np.array_split(x, max(1, x.size >> 20))]
    return math.fsum(parts)


def cpu_sum(args):
    n = 1 << (22 if args.quick else 26)
    x = np.random.default_rng(args.seed).standard_normal(n).astype(np.float32)
    runs = max(5, args.runs // 5)
    pk.sum(x)
    np.sum(x)
    t_pk = float(np.median(timeit.repeat("f(x)", globals={"f": pk.sum, "x": x}, number=1, repeat=runs)))
    t_np = float(np.median(timeit.repeat("f(x)", globals={"f": np.sum, "x": x}, number=1, repeat=runs)))
    exact = exact_sum(x)
    e_pk, e_np = abs(float(pk.sum(x)) - exact), abs(float(np.sum(x)) - exact)
    row("cpu_sum", f"sum f32 2^{n.bit_length() - 1} (NumPy, CPU)", t_pk, "numpy.sum", t_np,
        ">= 2.0x, error <= NumPy's",
        f"|error| pk {e_pk:.3g}, numpy {e_np:.3g} ({'ok' if e_pk <= e_np else 'LARGER'})")
    ROWS[-1]["error_pk"] = e_pk
    ROWS[-1]["error_numpy"] = e_np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=50, help="timed calls per GPU row (median)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    ap.add_argument("--cpu-only", action="store_true", help="skip the GPU rows")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int(np.random.SeedSequence().entropy % 2**32)
    info = pk.info()
    devices = ", ".join(d.get("name", "?") for d in info["devices"]) or "none"
    print(f"pk {info['version']} ({info['build']['git']}), Python {platform.python_version()}, "
          f"NumPy {np.__version__}; CPU {info['cpu']['describe']}; GPU {devices}")
    print(f"date {time.strftime('%Y-%m-%d %H:%M')}; command: {' '.join(sys.argv)}; seed {args.seed}\n")
    if args.cpu_only:
        skip("gpu", "--cpu-only")
    else:
        cupy, torch, why = gpu_libs()
        if why:
            skip("gpu", why)
        else:
            if cupy is None and torch is None:
                skip("gpu_sum", "neither CuPy nor PyTorch is installed")
            else:
                if cupy is None:
                    skip("gpu_sum cupy", "CuPy is not installed")
                if torch is None:
                    skip("gpu_sum torch", "PyTorch is not installed")
                gpu_sum(args, cupy, torch)
            if torch is None:
                skip("gpu_tf32", "PyTorch is not installed")
            else:
                gpu_tf32(args, torch)
    overhead(args)
    cpu_sum(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "args": vars(args), "rows": ROWS}, f, indent=1, default=str)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()

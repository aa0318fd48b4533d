"""The reductions of Numba's CUDA tutorial, and the same with pk, side by side.

Numba's documentation builds a GPU sum three ways: a naive kernel (every
thread adds its element to one total with an atomic), a shared-memory tree
(each block halves its partial sums in shared memory, block results are
reduced again), and the library routine cuda.reduce. pk does the same in one
call on the Numba array itself (zero copy, result on the device), with a
compensated, deterministic sum; a user-defined pk.Reducer stands in for a
custom cuda.reduce. Each result is compared with the exact sum (math.fsum).

    python examples/python/reductions.py [--n 16777216] [--repeat 5]

Without numba-cuda or a GPU it says what it skips and runs the CPU part
(pk.sum and a pk.Reducer against NumPy).
"""

import argparse
import math
import time

import numpy as np

import pk

TPB = 256  # threads per block of the tutorial's kernels
cuda = None  # numba.cuda, imported by gpu_part (the kernels name it as a global)


def timed(fn, repeat, sync=lambda: None):
    """(result of the last run, median wall time in ms) after one warm-up."""
    result = fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return result, float(np.median(times))


def report(rows, exact):
    print(f"  {'method':<38} {'result':>16} {'|error|':>10} {'ms':>9}  deterministic")
    for name, value, ms, same in rows:
        err = abs(float(value) - exact)
        print(f"  {name:<38} {float(value):>16.8g} {err:>10.3g} {ms:>9.3f}  {same}")


def numba_kernels():
    """The tutorial's kernels, for float32 arrays of any length."""
    from numba import float32

    @cuda.jit
    def naive_sum(x, total):  # one atomic add per element
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(total, 0, x[i])

    @cuda.jit
    def tree_sum(x, partials):  # one partial sum per block
        shr = cuda.shared.array(TPB, float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        v = float32(0.0)
        if i < x.size:
            v = x[i]
        shr[tid] = v
        cuda.syncthreads()
        s = 1
        while s < TPB:
            if tid % (2 * s) == 0:
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()
        if tid == 0:
            partials[cuda.blockIdx.x] = shr[0]

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    @cuda.reduce
    def max_abs_reduce(a, b):  # cuda.reduce has no map: |x| is folded into the combine
        return max(abs(a), abs(b))

    def naive(d):
        total = cuda.to_device(np.zeros(1, np.float32))
        naive_sum[(d.size + TPB - 1) // TPB, TPB](d, total)
        return total.copy_to_host()[0]

    def tree(d):
        cur = d
        while cur.size > 1:  # reduce the block results again until one is left
            blocks = (cur.size + TPB - 1) // TPB
            partials = cuda.device_array(blocks, np.float32)
            tree_sum[blocks, TPB](cur, partials)
            cur = partials
        return cur.copy_to_host()[0]

    return naive, tree, sum_reduce, max_abs_reduce


def numba_setup(x):
    """(kernels, device array of x, synchronize) through Numba, or a reason it
    cannot run here (not installed, no GPU, or a Numba that fails to start:
    numba-cuda releases lag NumPy's, and an old one fails on a new NumPy)."""
    global cuda
    try:
        from numba import cuda
    except ImportError:
        return "numba (numba-cuda) is not installed"
    try:
        if not cuda.is_available():
            return "Numba sees no CUDA GPU"
        kernels = numba_kernels()
        small = cuda.to_device(x[: 4 * TPB])
        for k in kernels:  # Numba compiles at the first call: do it here
            k(small)
        cuda.synchronize()
        return kernels, cuda.to_device(x), cuda.synchronize
    except Exception as e:  # noqa: BLE001 (any failure of Numba's own start)
        return f"Numba failed to start ({type(e).__name__}: {e})"


def other_device_array(x):
    """x on the GPU through CuPy or PyTorch, for pk's rows when Numba cannot
    run: (array, synchronize, to_float) or None."""
    try:
        import cupy

        return cupy.asarray(x), cupy.cuda.Device().synchronize, lambda r: float(r.get())
    except Exception:  # noqa: BLE001 (not installed, or no GPU for it)
        pass
    try:
        import torch

        if torch.cuda.is_available():
            return torch.from_numpy(x).cuda(), torch.cuda.synchronize, lambda r: float(r.item())
    except Exception:  # noqa: BLE001
        pass
    return None


def gpu_part(x, repeat):
    if not pk.info()["features"]["cuda"]:
        print("GPU part skipped: this pk was built without CUDA")
        return
    setup = numba_setup(x)
    if isinstance(setup, str):
        other = other_device_array(x)
        if other is None:
            print(f"GPU part skipped: {setup}, and neither CuPy nor PyTorch has a GPU here")
            return
        print(f"Numba's rows skipped: {setup}; pk's rows run on a "
              f"{type(other[0]).__module__.split('.')[0]} array instead")
        numba_rows, (d, sync, to_float) = None, other
    else:
        numba_rows, d, sync = setup
        to_float = lambda r: r.copy_to_host()[()]  # noqa: E731
    exact = math.fsum(x.astype(np.float64).tolist())
    rows = []

    def run(name, fn):
        first, ms = timed(fn, repeat, sync)
        again = fn()
        rows.append((name, first, ms, "yes" if float(again) == float(first) else "no"))

    print(f"\nGPU sum of {x.size} float32 values ({type(d).__name__}), exact {exact:.10g}:")
    if numba_rows:
        naive, tree, sum_reduce, max_abs_reduce = numba_rows
        run("numba: naive (atomic add)", lambda: naive(d))
        run("numba: shared-memory tree", lambda: tree(d))
        run("numba: cuda.reduce", lambda: sum_reduce(d))
    # pk reads the device array in place and returns one of the same library
    run("pk.sum (result on the device)", lambda: to_float(pk.sum(d)))
    report(rows, exact)

    rows = []
    exact_max = float(np.max(np.abs(x)))
    absmax = pk.Reducer(map="fabs(x)", combine="fmax(a, b)", identity=float("nan"), acc="float32")
    print(f"\nGPU max |x| (a custom reduction), exact {exact_max:.10g}:")
    if numba_rows:
        run("numba: cuda.reduce(max(abs(a), abs(b)))", lambda: max_abs_reduce(d))
    run("pk.Reducer(map='fabs(x)', combine=fmax)", lambda: to_float(absmax(d)))
    report(rows, exact_max)
    print(f"  (pk.Reducer's code: {absmax.info['origin']}, {absmax.info['arch']})")


def cpu_part(x, repeat):
    exact = math.fsum(x.astype(np.float64).tolist())
    print(f"\nCPU sum of {x.size} float32 values (NumPy array), exact {exact:.10g}:")
    rows = []
    for name, fn in (("numpy.sum (pairwise)", lambda: np.sum(x)), ("pk.sum", lambda: pk.sum(x))):
        first, ms = timed(fn, repeat)
        rows.append((name, first, ms, "yes" if fn() == first else "no"))
    report(rows, exact)
    sumsq = pk.Reducer(map="x * x", combine="a + b", identity=0.0)
    want = math.fsum((x.astype(np.float64) ** 2).tolist())
    print(f"\nCPU sum of squares, exact {want:.10g}:")
    rows = []
    for name, fn in (
        ("numpy: np.sum(x64 * x64)", lambda: np.sum(x.astype(np.float64) ** 2)),
        ("pk.Reducer(map='x * x', combine='a + b')", lambda: sumsq(x)),
    ):
        first, ms = timed(fn, repeat)
        rows.append((name, first, ms, "yes" if fn() == first else "no"))
    report(rows, want)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="elements (default 2^24)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per method")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    print(f"pk {pk.__version__}; seed {seed}")
    x = np.random.default_rng(seed).standard_normal(args.n).astype(np.float32)
    gpu_part(x, args.repeat)
    cpu_part(x, args.repeat)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""pk's file commands on files written by NumPy, checked with NumPy.

NumPy writes the inputs (np.save, and np.lib.format.write_array for format
versions 1.0, 2.0 and 3.0), pk runs each command, NumPy loads pk's outputs
(also memory-mapped) and compares them with its own results. Files NumPy
writes that pk does not read (Fortran order, big-endian, object,
structured, float16) must fail with status 1 and one line.

usage: numpy_files.py PK [cpu|cuda]; exits 77 (skipped) without NumPy.
PK_TEST_SEED=N replays a run.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not importable by", sys.executable)
    sys.exit(77)

PK = os.path.abspath(sys.argv[1])
BACKEND = sys.argv[2] if len(sys.argv) > 2 else "cpu"
SEED = int(os.environ.get("PK_TEST_SEED", int.from_bytes(os.urandom(6), "little")))
print(f"numpy_files: numpy {np.__version__}, seed {SEED} (replay with PK_TEST_SEED={SEED})")
rng = np.random.default_rng(SEED)
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        if len(failures) <= 40:
            print("FAIL:", what, f"[seed {SEED}]")


def run(*args, expect=0):
    """pk ARGS --backend B in the work directory; the completed process."""
    p = subprocess.run([PK, *args, "--backend", BACKEND], cwd=WORK, capture_output=True,
                       text=True)
    check(p.returncode == expect,
          f"pk {' '.join(args)}: status {p.returncode} (want {expect}): {p.stderr.strip()}")
    if expect == 0 and p.returncode == 0 and "--json" in args:
        check(len(p.stdout.splitlines()) == 1, f"pk {args[0]} --json: one line")
        p.json = json.loads(p.stdout)
    return p


def path(name):
    return os.path.join(WORK, name)


def save(name, a, version=None):
    if version is None:
        np.save(path(name), a)
    else:
        with open(path(name), "wb") as f:
            np.lib.format.write_array(f, a, version=version)


def load(name, dtype, shape):
    """pk's output, loaded as NumPy does and memory-mapped; checked."""
    a = np.load(path(name))
    m = np.load(path(name), mmap_mode="r")
    check(a.dtype == np.dtype(dtype) and a.shape == tuple(shape) and np.array_equal(a, m, equal_nan=True),
          f"{name}: {a.dtype}{a.shape}, want {np.dtype(dtype)}{tuple(shape)}")
    return a


def close(got, want, rtol, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    ok = got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    check(ok, f"{what}: max difference {np.nanmax(np.abs(got - want)) if got.shape == want.shape and got.size else '-'}")


def reductions():
    """Every op, dtype and version, whole and along each axis."""
    # The format versions are the reader's, the same on every backend: CUDA
    # (a device context's start per pk process) reads version 1.0 only.
    versions = [(1, 0), (2, 0), (3, 0)] if BACKEND == "cpu" else [(1, 0)]
    for dt in ["<f4", "<f8", "<i4", "<i8", "<u4", "<u8"]:
        for version in versions:
            for shape in [(1000,), (37, 29)]:
                if dt[1] == "f":
                    x = (rng.uniform(0.98, 1.02, shape) * rng.choice([-1, 1], shape)).astype(dt)
                else:
                    x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, shape, dtype=dt,
                                     endpoint=True)
                save("x.npy", x, version)
                axes = [None] + ([0, 1] if len(shape) == 2 else [])
                for op in ["sum", "prod", "min", "max", "argmin", "argmax"]:
                    for axis in axes:
                        args = ["reduce", "x.npy", "--op", op, "-o", "r.npy", "--json"]
                        if axis is not None:
                            args += ["--axis", str(axis)]
                        p = run(*args)
                        if p.returncode:
                            continue
                        if op in ("sum", "prod") and dt[1] in "iu":
                            want = getattr(np, op)(x, axis=axis, dtype=dt[0] + dt[1] + "8")
                        else:
                            want = getattr(np, op)(x, axis=axis)
                        want = np.asarray(want)
                        what = f"{op} {dt} v{version[0]} {shape} axis {axis}"
                        got = load("r.npy", want.dtype, want.shape)
                        if op in ("sum", "prod") and dt[1] == "f":
                            close(got, getattr(np, op)(x.astype(np.float64), axis=axis),
                                  1e-5 if dt == "<f4" else 1e-12, what)
                        else:
                            check(np.array_equal(got, want), what)
                        if axis is None and dt == "<f8":
                            check(p.json["value"] == float(got), f"{what}: JSON value")


def bad_files():
    """What NumPy writes but pk refuses: status 1, one line, no output."""
    cases = {
        "fortran.npy": (np.asfortranarray(rng.standard_normal((3, 4))), "Fortran-order"),
        "big.npy": (np.arange(5, dtype=">f4"), "big-endian dtype '>f4'"),
        "half.npy": (np.arange(5, dtype="<f2"), "unsupported dtype '<f2'"),
        "rec.npy": (np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]), "structured dtype"),
        "complex.npy": (np.zeros(3, dtype="<c8"), "unsupported dtype '<c8'"),
    }
    for name, (a, reason) in cases.items():
        save(name, a)
        p = run("reduce", name, "--op", "sum", "-o", "out.npy", expect=1)
        check(reason in p.stderr and p.stderr.count("\n") == 1 and name in p.stderr,
              f"{name}: {p.stderr.strip()}")
    np.save(path("obj.npy"), np.array([1, "a", None], dtype=object), allow_pickle=True)
    p = run("reduce", "obj.npy", "--op", "sum", expect=1)
    check("object array" in p.stderr, f"obj.npy: {p.stderr.strip()}")
    check(not os.path.exists(path("out.npy")), "an output was left")
    # one-dimensional Fortran order is C order: read
    save("f1.npy", np.asfortranarray(np.arange(4.0)[:, None]))
    p = run("reduce", "f1.npy", "--op", "sum", "--json")
    check(p.returncode == 0 and p.json["value"] == 6.0, "an (n, 1) Fortran array")


def blas():
    for dt, rtol in [("<f4", 2e-6), ("<f8", 1e-14)]:
        x = rng.standard_normal(10007).astype(dt)
        y = rng.standard_normal(10007).astype(dt)
        save("x.npy", x, (2, 0))
        save("y.npy", y, (3, 0))
        p = run("dot", "x.npy", "y.npy", "-o", "d.npy", "--json")
        exact = np.dot(x.astype(np.longdouble), y.astype(np.longdouble))
        d = load("d.npy", dt, ())
        scale = np.dot(np.abs(x.astype(np.longdouble)), np.abs(y.astype(np.longdouble)))
        err = float(abs(d.astype(np.longdouble) - exact) / scale)  # cancellation-proof
        check(err <= rtol, f"dot {dt}: scaled error {err:.3g}")
        check(p.returncode or np.asarray(p.json["value"], dt) == d, "dot JSON value")
        run("axpy", "--alpha", "-1.5", "x.npy", "y.npy", "-o", "z.npy")
        want = np.asarray(-1.5, dt) * x + y  # one rounding each, as pk_axpy
        check(np.array_equal(load("z.npy", dt, x.shape), want), f"axpy {dt}")
        for ta in (0, 1):
            for tb in (0, 1):
                a = rng.standard_normal((31, 17) if ta else (17, 31)).astype(dt)
                b = rng.standard_normal((23, 31) if tb else (31, 23)).astype(dt)
                c0 = rng.standard_normal((17, 23)).astype(dt)
                save("a.npy", a)
                save("b.npy", b)
                save("c0.npy", c0)
                args = ["gemm", "a.npy", "b.npy", "-o", "c.npy", "--alpha", "2", "--beta", "0.5",
                        "--c", "c0.npy", "--check", "--json"]
                p = run(*(args + ["--trans-a"] * ta + ["--trans-b"] * tb))
                A, B = (a.T if ta else a).astype(np.float64), (b.T if tb else b).astype(np.float64)
                want = 2 * A @ B + 0.5 * c0
                # Elementwise relative error is unbounded where C cancels to
                # near zero: bound each element by the magnitudes it sums.
                scale = 2 * np.abs(A) @ np.abs(B) + 0.5 * np.abs(c0.astype(np.float64))
                got = load("c.npy", dt, (17, 23)).astype(np.float64)
                err = np.abs(got - want) / scale
                check(err.max() <= rtol * 10, f"gemm {dt} ta {ta} tb {tb}: max scaled error {err.max():.3g}")
                check(p.returncode or p.json["check"]["ok"] is True, "gemm --check")


def bits():
    # pack: f32 signs (-0.0 is +, NaN is -) and bool, against np.packbits
    for kind in ("f4", "bool"):
        for k in (1, 64, 100, 130):
            if kind == "f4":
                x = rng.standard_normal((7, k)).astype("<f4")
                x[0, 0], x[-1, -1] = -0.0, np.nan
                on = ~(x < 0) & ~np.isnan(x)
            else:
                x = rng.integers(0, 2, (7, k)).astype(bool)
                on = x
            save("x.npy", x)
            p = run("pack", "x.npy", "-o", "bits.npy", "--json")
            words = (k + 63) // 64
            packed = np.packbits(on, axis=1, bitorder="little")
            padded = np.zeros((7, words * 8), np.uint8)
            padded[:, :packed.shape[1]] = packed
            want = padded.view("<u8")
            check(np.array_equal(load("bits.npy", "<u8", (7, words)), want), f"pack {kind} k={k}")
            check(p.returncode or p.json["bits"] == k, "pack JSON bits")
    # FAISS-layout uint8 codes: bgemm, hamming, knn
    q = rng.integers(0, 256, (19, 32), dtype=np.uint8)
    db = rng.integers(0, 256, (200, 32), dtype=np.uint8)
    db[5] = db[3]  # a tie: the lower index first
    save("q.npy", q)
    save("db.npy", db)
    h = np.unpackbits(q[:, None, :] ^ db[None, :, :], axis=-1).sum(-1).astype(np.int64)
    run("hamming", "q.npy", "db.npy", "-o", "h.npy")
    check(np.array_equal(load("h.npy", "<i4", (19, 200)), h), "hamming")
    run("hamming", "q.npy", "db.npy", "-o", "h16.npy", "--dtype", "u16")
    check(np.array_equal(load("h16.npy", "<u2", (19, 200)), h), "hamming u16")
    run("bgemm", "q.npy", "db.npy", "-o", "c.npy")
    check(np.array_equal(load("c.npy", "<i4", (19, 200)), 256 - 2 * h), "bgemm")
    run("knn", "--db", "db.npy", "--queries", "q.npy", "-k", "10", "-o", "ids.npy",
        "--dist", "dist.npy")
    order = np.lexsort((np.broadcast_to(np.arange(200), h.shape), h), axis=1)[:, :10]
    check(np.array_equal(load("ids.npy", "<i8", (19, 10)), order), "knn ids")
    check(np.array_equal(load("dist.npy", "<i4", (19, 10)), np.take_along_axis(h, order, 1)),
          "knn distances")
    # pk's words and the same codes as bytes give the same distances
    save("qw.npy", q.view("<u8"))
    save("dbw.npy", db.view("<u8"))
    run("hamming", "qw.npy", "dbw.npy", "-o", "hw.npy")
    check(np.array_equal(load("hw.npy", "<i4", (19, 200)), h), "hamming of words")


with tempfile.TemporaryDirectory(prefix="pk_numpy_files.") as WORK:
    np.save(path("probe.npy"), np.ones(1))
    probe = subprocess.run([PK, "reduce", "probe.npy", "--op", "sum", "--backend", BACKEND],
                           cwd=WORK, capture_output=True, text=True)
    if probe.returncode:
        print(f"skipped: backend {BACKEND}: {probe.stderr.strip()}")
        sys.exit(77)
    reductions()
    bad_files()
    blas()
    bits()
print(f"numpy_files: {len(failures)} of {checks} checks failed" if failures
      else f"numpy_files: all {checks} checks passed")
sys.exit(1 if failures else 0)

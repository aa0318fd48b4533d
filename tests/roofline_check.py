#!/usr/bin/env python3
"""ctest roofline: render tools/roofline/pk-roofline from the committed runs in
tests/data/bench and check the pictures (a real PNG, an SVG with one marker per
timed row) and its errors. Exit 77 (skipped) without matplotlib.

usage: roofline_check.py SCRIPT DATA_DIR OUT_DIR"""
import json
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

script, data, out = sys.argv[1:4]
try:
    import matplotlib  # noqa: F401
except ImportError:
    print("matplotlib is not installed: skipped (pip install matplotlib)")
    sys.exit(77)
os.makedirs(out, exist_ok=True)


def run(*args):
    p = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    print(f"pk-roofline {' '.join(args)} -> {p.returncode}\n{p.stdout}{p.stderr}", end="")
    return p


def timed_rows(path):
    text = open(os.path.join(data, path)).read()
    try:
        rows = json.loads(text)["rows"]
    except ValueError:  # an interrupted run: its whole row lines
        rows = [json.loads(l.lstrip(",")) for l in text.split("\n")[1:]
                if l.lstrip(",").startswith("{") and l.endswith("}")]
    return sum(1 for r in rows if r.get("status") == "ok" and r.get("time_s")
               and r.get("ops") and r.get("bytes"))


def check_svg(path, expect):
    root = ET.parse(path).getroot()  # well-formed XML
    ids = [e.get("id") for e in root.iter() if (e.get("id") or "").startswith("pk-row-")]
    assert len(ids) == expect, f"{path}: {len(ids)} row markers, expected {expect}"
    text = open(path).read()
    assert "GB/s" in text and "arithmetic intensity" in text, f"{path}: no ceilings or axis"


def check_png(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path}: not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    assert width >= 400 and height >= 300, f"{path}: {width}x{height}"
    assert os.path.getsize(path) > 20000, f"{path}: {os.path.getsize(path)} bytes: too plain"


for bench, info, name in (("run_cpu.json", "info_cpu.json", "cpu"),
                          ("synthetic_gpu_run.json", "synthetic_gpu_info.json", "gpu"),
                          ("compare_truncated.json", None, "truncated")):
    extra = ["--info", os.path.join(data, info)] if info else []
    for ext in ("svg", "png"):
        pic = os.path.join(out, f"roofline_{name}.{ext}")
        if os.path.exists(pic):
            os.remove(pic)
        p = run(os.path.join(data, bench), *extra, "-o", pic)
        assert p.returncode == 0, f"{bench} -> {ext}: exit status {p.returncode}"
        if ext == "svg":
            check_svg(pic, timed_rows(bench))
        else:
            check_png(pic)
    if name == "truncated":
        assert "incomplete" in p.stderr, "no warning about the interrupted run"

# Errors: a missing file and a file that is not a run (1), a bad name (2).
assert run(os.path.join(data, "nonexistent.json"), "-o", os.path.join(out, "x.svg")).returncode == 1
assert run(os.path.join(data, "info_cpu.json"), "-o", os.path.join(out, "x.svg")).returncode == 1
assert run(os.path.join(data, "run_cpu.json"), "-o", os.path.join(out, "x.pdf")).returncode == 2
assert not os.path.exists(os.path.join(out, "x.svg")), "a picture from a bad input"
# An output folder that does not exist: status 1, nothing made.
assert run(os.path.join(data, "run_cpu.json"), "-o",
           os.path.join(out, "nodir", "x.svg")).returncode == 1

# Saving interrupted half way (Ctrl-C, or a full disk): the picture already
# there is untouched and no temporary file is left. The script runs here,
# with matplotlib's savefig made to write part of a file and then fail.
import runpy  # noqa: E402
import matplotlib.figure  # noqa: E402

roofline = runpy.run_path(script, run_name="pk_roofline")
half = os.path.join(out, "half")
os.makedirs(half, exist_ok=True)
for leftover in os.listdir(half):
    os.remove(os.path.join(half, leftover))
pic = os.path.join(half, "roofline.svg")
with open(pic, "w") as f:
    f.write("the old picture")
real_savefig = matplotlib.figure.Figure.savefig
for stop in (KeyboardInterrupt(), OSError(28, "No space left on device")):
    def broken(self, fname, *args, stop=stop, **kwargs):
        data = b"<svg partial"
        if hasattr(fname, "write"):
            fname.write(data)
        else:
            with open(fname, "wb") as f:
                f.write(data)
        raise stop
    matplotlib.figure.Figure.savefig = broken
    try:
        roofline["main"]([os.path.join(data, "run_cpu.json"), "-o", pic])
        raise AssertionError("savefig's failure went unseen")
    except (KeyboardInterrupt, SystemExit) as e:
        assert isinstance(e, KeyboardInterrupt) or e.code == 1, f"exit status {e.code}"
    finally:
        matplotlib.figure.Figure.savefig = real_savefig
    left = sorted(os.listdir(half))
    assert left == ["roofline.svg"], f"{type(stop).__name__}: left {left}"
    assert open(pic).read() == "the old picture", f"{type(stop).__name__}: the old picture changed"
# and a whole run replaces it, keeping its mode
os.chmod(pic, 0o640)
assert run(os.path.join(data, "run_cpu.json"), "-o", pic).returncode == 0
assert sorted(os.listdir(half)) == ["roofline.svg"] and os.stat(pic).st_mode & 0o777 == 0o640
check_svg(pic, timed_rows("run_cpu.json"))
print("roofline: ok")

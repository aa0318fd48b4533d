#!/usr/bin/env python3
"""docs/PERFORMANCE.md's tables, generated from `pk bench --json` files.

    scripts/perf-tables.py                  # print the tables of docs/perf/*.json
    scripts/perf-tables.py --write          # rewrite them in docs/PERFORMANCE.md
    scripts/perf-tables.py --check          # exit 1 if PERFORMANCE.md is stale
    scripts/perf-tables.py a.json b.json    # print the tables of these files

One table per JSON file (one machine, one backend), each headed by the
machine, the date, pk's git revision and the command that wrote the JSON,
all read from the file itself (schema "pk-bench" 1, docs/CLI.md). Adding a
machine is adding its JSON under docs/perf/ and running --write. The tables
go between the markers below; the hand-kept GPU section (between its own
markers) is dropped once a CUDA file is there to replace it.
"""
import glob
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- perf-tables:begin -->", "<!-- perf-tables:end -->"
LEGACY_BEGIN, LEGACY_END = "<!-- perf-legacy-gpu:begin -->", "<!-- perf-legacy-gpu:end -->"


def load(path):
    """The document; a killed run's whole row lines when it is cut off."""
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except ValueError:
        lines = text.split("\n")
        doc = json.loads(lines[0] + "]}")
        doc["rows"] = [json.loads(l.lstrip(",")) for l in lines[1:]
                       if l.lstrip(",").startswith("{") and l.endswith("}")]
        doc["complete"] = False
    if doc.get("schema") != "pk-bench" or doc.get("schema_version") != 1:
        sys.exit("%s: not a pk-bench schema 1 file" % path)
    return doc


def num(v):
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def seconds(t):
    if not num(t):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if t >= scale or unit == "ns":
            v = t / scale
            return ("%.3g" % v if v < 100 else "%.0f" % v) + " " + unit
    return "-"


def count(n):
    """2^k for powers of two from 1024, else the number."""
    if n >= 1024 and n & (n - 1) == 0:
        return "2^%d" % (n.bit_length() - 1)
    return str(n)


def size(r):
    try:
        return size_of(r)
    except (KeyError, TypeError):  # a row of a kind not known here: its id
        return r.get("id", "?").split("/", 2)[-1]


def size_of(r):
    k = r["kernel"]
    if k in ("gemm", "gemm_tf32", "gemm_fp32_accurate", "bgemm", "hamming"):
        s = "%dx%dx%d" % (r["m"], r["n"], r["k"])
    elif k == "hamming_topk":
        s = "%dq %d %db k%d" % (r["m"], r["n"], r["k"], r.get("topk", 0))
    elif "rows" in r:
        s = "%dx%d ax%d" % (r["rows"], r["cols"], r["axis"])
    else:
        s = count(r["n"])
    if r.get("reducer"):
        s += " " + r["reducer"]
    if r.get("op") and r["op"] != "sum":
        s += " " + r["op"]
    if r.get("out_on_device"):
        s += " dev"
    return s


def rate(r):
    if num(r.get("ops_ceiling_per_s")) and num(r.get("ops_per_s")):
        return "%.1f G%s/s" % (r["ops_per_s"] / 1e9, r.get("ops_unit") or "op")
    if num(r.get("gbps")):
        return "%.1f GB/s" % r["gbps"]
    return "-"


def ceiling(r):
    if num(r.get("ops_ceiling_pct")):
        return "%.0f%% %s" % (r["ops_ceiling_pct"], r.get("ops_ceiling") or "")
    if num(r.get("ceiling_pct")):
        return "%.0f%% %s" % (r["ceiling_pct"], r.get("ceiling") or "")
    return "-"


def check(r):
    s = r.get("status", "?")
    if r.get("reliable") is False:
        s += ", UNRELIABLE"
    return s


def cell(s):
    return str(s).replace("|", "\\|")


def table(path, doc):
    b, run, d = doc.get("build", {}), doc.get("run", {}), doc.get("device", {})
    rel = os.path.relpath(path, ROOT)
    out = ["### %s (%s)" % (d.get("name", "?"), d.get("backend", "?")), ""]
    machine = d.get("describe", "?")
    if d.get("backend") == "cpu":
        extra = ["%s threads" % d.get("threads", "?")]
        if d.get("llc_bytes"):
            extra.append("last-level cache %d MiB" % (d["llc_bytes"] >> 20))
        if d.get("blas"):
            extra.append("peer BLAS " + " ".join(d["blas"].split(" ")[:2]))
        machine += "; " + ", ".join(extra)
    ceil = ", ".join("%s %.1f GB/s" % (k[:-5], v) for k, v in d.items()
                     if k.endswith("_gbps") and num(v))
    summary = doc.get("summary") or {}
    out += [
        "- Machine: %s; ceilings measured in the run: %s" % (machine, ceil or "-"),
        "- Date: %s (load average %.2f at the start)" % (
            run.get("started_utc", "?"), run.get("load1_at_start") or 0.0),
        "- pk: %s, git %s, %s, %s build%s" % (
            b.get("version", "?"), b.get("git", "?"), b.get("compiler", "?"),
            b.get("build_type", "?"),
            ", CUDA %s" % b["cuda"] if b.get("cuda", "no") != "no" else ""),
        "- Command: `%s`" % run.get("command", "?"),
        "- Data: [`%s`](%s)%s" % (
            rel, os.path.relpath(path, os.path.dirname(DOC)),
            "; %d rows, %d failed, %d UNRELIABLE" % (
                summary.get("rows", 0), summary.get("failed", 0),
                summary.get("unreliable", 0)) if summary else "; incomplete run"),
        "",
        "| kernel | dtype | size | time | rate | of ceiling | peer | peer time | ratio | check |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for r in doc["rows"]:
        out.append("| " + " | ".join(cell(c) for c in (
            r["kernel"], r.get("dtype", ""), size(r), seconds(r.get("time_s")), rate(r),
            ceiling(r), r.get("peer") or "-", seconds(r.get("peer_time_s")),
            "%.2f" % r["ratio"] if num(r.get("ratio")) else "-", check(r))) + " |")
    return "\n".join(out) + "\n"


def tables(paths):
    docs = [(p, load(p)) for p in paths]
    order = {"cuda": 0, "cpu": 1}
    docs.sort(key=lambda pd: (order.get(pd[1].get("device", {}).get("backend"), 2), pd[0]))
    return "\n".join(table(p, d) for p, d in docs), docs


def rewrite(text, generated, has_cuda):
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        sys.exit("%s: markers %s ... %s not found" % (DOC, BEGIN, END))
    text = text[:i + len(BEGIN)] + "\n\n" + generated + "\n" + text[j:]
    a, b = text.find(LEGACY_BEGIN), text.find(LEGACY_END)
    if has_cuda and a >= 0 and b > a:
        text = text[:a] + text[b + len(LEGACY_END):].lstrip("\n")
    return text


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    mode = None
    if argv and argv[0] in ("--write", "--check"):
        mode = argv.pop(0)
    paths = argv or sorted(glob.glob(os.path.join(ROOT, "docs", "perf", "*.json")))
    if not paths:
        sys.exit("no pk bench JSON files (docs/perf/*.json)")
    generated, docs = tables(paths)
    if not mode:
        sys.stdout.write(generated)
        return 0
    with open(DOC) as f:
        old = f.read()
    has_cuda = any(d.get("device", {}).get("backend") == "cuda" for _, d in docs)
    new = rewrite(old, generated, has_cuda)
    if mode == "--check":
        if new != old:
            print("docs/PERFORMANCE.md is stale: run scripts/perf-tables.py --write")
            return 1
        print("docs/PERFORMANCE.md matches docs/perf/*.json")
        return 0
    if new != old:
        with open(DOC, "w") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

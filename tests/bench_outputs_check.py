#!/usr/bin/env python3
"""ctest cli_bench_outputs: the CSV, Markdown and JSON files of one
`pk bench sum dot gemm --sizes 300,1000 --reps 3` run agree, and the JSON
holds what docs/CLI.md promises: the schema, the build (version, git,
compiler), exact integers, full-precision doubles, min <= median <= max, a
noise figure per row. usage: bench_outputs_check.py DIR "pk VERSION" """
import csv
import json
import re
import sys

d, version_line = sys.argv[1], sys.argv[2]
text = open(f"{d}/o.json").read()
doc = json.loads(text)
lines = text.split("\n")
assert lines[0].startswith('{"schema": "pk-bench", "schema_version": 1,'), lines[0][:80]
assert lines[0].endswith('"rows": ['), "the first line holds all but the rows"
assert doc["complete"] is True and doc["summary"]["rows"] == len(doc["rows"]) == 6
build = doc["build"]
assert "pk " + build["version"] == version_line, (build["version"], version_line)
assert build["git"] and build["compiler"], build
assert doc["run"]["command"].startswith("pk bench sum dot gemm --sizes 300,1000")
dev = doc["device"]
assert dev["backend"] == "cpu" and dev["read_gbps"] > 0 and dev["copy_gbps"] > 0, dev
rows = doc["rows"]
# one row per line, in the order measured
assert [json.loads(l.lstrip(","))["id"] for l in lines[1:7]] == [r["id"] for r in rows]
assert [r["id"] for r in rows] == ["sum/f32/n=300", "sum/f32/n=1000", "dot/f32/n=300",
                                   "dot/f32/n=1000", "gemm/f32/m=300,n=300,k=300",
                                   "gemm/f32/m=1000,n=1000,k=1000"], [r["id"] for r in rows]
for r in rows:
    assert r["status"] == "ok" and r["verified"] is True, r
    for key in ("n", "bytes", "ops", "samples", "attempts"):
        assert isinstance(r[key], int), (key, r[key])
    assert r["samples"] == 3 and 1 <= r["attempts"] <= 3, r
    assert r["time_min_s"] <= r["time_s"] <= r["time_max_s"], r
    assert r["noise"] >= 0 and 0 <= r["disturbed"] <= 3, r
    assert abs(r["gbps"] - r["bytes"] / r["time_s"] * 1e-9) <= 1e-12 * r["gbps"], r
    assert r["peer"] and abs(r["ratio"] - r["peer_time_s"] / r["time_s"]) <= 1e-12 * r["ratio"]
    assert r["reliable"] in (True, False) and r["ops_unit"] == "flop", r
    for p in r["peers"]:
        assert p["time_min_s"] <= p["time_s"] <= p["time_max_s"] and p["samples"] >= 2, p
# exact integers in the text (no 4.096e+03), doubles of full precision
assert '"n": 1000,' in text and '"bytes": 4004,' in text
digits = [len(re.sub(r"[^0-9]", "", m.split("e")[0]).lstrip("0"))
          for m in re.findall(r'"time_s": ([0-9.e+-]+)', text)]
assert max(digits) >= 12, f"time_s written with {max(digits)} digits at most"
gemm = rows[5]
assert (gemm["m"], gemm["n"], gemm["k"], gemm["ops"]) == (1000, 1000, 1000, 2 * 1000 ** 3), gemm

# CSV: the header, one line per row, the same numbers
table = list(csv.DictReader(open(f"{d}/o.csv", newline="")))
assert len(table) == 6, len(table)
for c, r in zip(table, rows):
    assert c["id"] == r["id"] and c["status"] == "ok" and c["reliable"] in ("true", "false")
    assert float(c["time_s"]) == r["time_s"] and int(c["bytes"]) == r["bytes"], (c, r)
    assert c["peer"] == r["peer"] and float(c["ratio"]) == r["ratio"]
    assert c["device"] == dev["name"]
assert table[0]["m"] == "" and table[5]["m"] == "1000", "empty cells where a field does not apply"

# Markdown: a title, the legend, a table of the six rows
md = open(f"{d}/o.md").read().split("\n")
assert md[0].startswith("## pk bench on "), md[0]
assert any("ratio: peer time / pk time (above 1: pk is faster)" in l for l in md)
body = [l for l in md if l.startswith("| ") and not l.startswith("| kernel")]
assert len(body) == 6 and all(l.count(" | ") == 10 for l in body), body
print("outputs: ok")

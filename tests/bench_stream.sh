#!/bin/sh
# ctest cli_bench_stream: pk bench writes each row as it is measured. A run
# stopped after its first rows (SIGTERM) leaves a closed JSON document
# ("complete": false), a CSV and a Markdown table of whole rows; a run killed
# outright (SIGKILL) leaves whole JSON row lines that `pk bench compare`
# reads back. usage: bench_stream.sh PK PYTHON3
pk=$1 py=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

# Start a long run (sum at 2^10 ... 2^26, 200 samples each) writing to
# files; wait until the JSON holds two rows.
start() {
    "$pk" bench sum --backend cpu --sizes 2^10:2^26:x2 --reps 200 --max-noise 1000 \
        --json "$dir/$1.json" --csv "$dir/$1.csv" --markdown "$dir/$1.md" \
        >"$dir/$1.out" 2>"$dir/$1.err" &
    pid=$!
    tries=0
    while [ "$(grep -c '^,\{0,1\}{"id"' "$dir/$1.json" 2>/dev/null)" -lt 2 ] 2>/dev/null ||
          [ ! -s "$dir/$1.json" ]; do
        tries=$((tries + 1))
        if [ $tries -gt 1200 ] || ! kill -0 $pid 2>/dev/null; then
            echo "no two rows after 240 s (or the run ended)"; cat "$dir/$1.err"; exit 1
        fi
        sleep 0.2
    done
}

start term
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || { echo "exit status $rc after SIGTERM, expected 143"; cat "$dir/term.err"; exit 1; }
grep -q "interrupted by SIGTERM" "$dir/term.err" || { echo "no message on stderr"; exit 1; }
"$py" - "$dir" <<'PY' || exit 1
import csv, json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/term.json"))  # a whole document
assert doc["complete"] is False and doc["interrupted_by"] == "SIGTERM", doc.get("complete")
rows = doc["rows"]
assert len(rows) >= 2, f"{len(rows)} rows"
for r in rows:
    assert r["status"] == "ok" and r["time_s"] > 0 and isinstance(r["n"], int), r
table = list(csv.reader(open(f"{d}/term.csv", newline="")))
assert len(table) - 1 >= len(rows), f"CSV: {len(table) - 1} rows, JSON {len(rows)}"
assert all(len(line) == len(table[0]) for line in table), "a CSV line cut short"
md = [l for l in open(f"{d}/term.md") if l.startswith("| sum ")]
assert len(md) >= len(rows) and all(l.rstrip().endswith("|") for l in md), "Markdown rows"
print(f"SIGTERM: {len(rows)} rows kept, JSON closed")
PY

start kill
kill -KILL $pid
wait $pid
out=$("$pk" bench compare "$dir/kill.json" "$dir/kill.json" 2>"$dir/compare.err")
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "compare: exit status $rc"; cat "$dir/compare.err"; exit 1; }
grep -q "incomplete" "$dir/compare.err" || { echo "compare: no warning of an incomplete run"; exit 1; }
echo "$out" | grep -Eq '^([2-9]|[1-9][0-9]+) rows compared: 0 FAST, 0 SLOW' ||
    { echo "compare: not the killed run's rows"; exit 1; }

#!/bin/sh
# ctest cli_bench_stream: pk bench writes each row as it is measured. A run
# stopped after its first rows (SIGTERM) leaves a closed JSON document
# ("complete": false), a CSV and a Markdown table of whole rows; a run killed
# outright (SIGKILL) leaves whole JSON row lines that `pk bench compare`
# reads back. Interrupted (SIGINT) before its first row: while the device is
# measured, the files it created are removed and an existing one is left
# as it was; once the headers are written, each output holds its header and
# the JSON document is whole, with no rows. usage: bench_stream.sh PK PYTHON3
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

# SIGINT: a background job of a script has it ignored, and pk leaves an
# ignored signal ignored; env resets it where it can, else SIGTERM (the
# same handler) stands in.
if env --default-signal=INT true 2>/dev/null; then
    sig=INT code=130 run="env --default-signal=INT"
else
    sig=TERM code=143 run=
fi
# Wait until file $1 exists and is $2 (empty or nonempty); 0 when it did
# while pk ran.
wait_file() {
    tries=0
    while :; do
        if [ -e "$1" ]; then
            if [ "$2" = empty ] && [ ! -s "$1" ]; then return 0; fi
            if [ "$2" = nonempty ] && [ -s "$1" ]; then return 0; fi
        fi
        tries=$((tries + 1))
        if [ $tries -gt 6000 ] || ! kill -0 $pid 2>/dev/null; then return 1; fi
        sleep 0.01
    done
}

# While the device is measured: no header yet.
printf 'keep\n' >"$dir/old.csv"
$run "$pk" bench sum --backend cpu --sizes 1000 --reps 3 --max-noise 1000 \
    --json "$dir/early.json" --csv "$dir/old.csv" --markdown "$dir/early.md" \
    >"$dir/early.out" 2>"$dir/early.err" &
pid=$!
if wait_file "$dir/early.json" empty; then
    kill -$sig $pid
    wait $pid
    rc=$?
    if [ ! -e "$dir/early.json" ]; then
        [ $rc -eq $code ] || { echo "early SIG$sig: exit status $rc, expected $code"; exit 1; }
        grep -q "interrupted by SIG$sig before the first row; no output written" \
            "$dir/early.err" || { echo "early SIG$sig: no message"; cat "$dir/early.err"; exit 1; }
        [ ! -e "$dir/early.md" ] || { echo "early SIG$sig: early.md was left"; exit 1; }
        [ "$(cat "$dir/old.csv")" = keep ] || { echo "early SIG$sig: old.csv changed"; exit 1; }
        echo "SIG$sig before the headers: created outputs removed, an existing one kept"
    else # the headers came first (a slow machine): whole documents
        "$py" -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/early.json" ||
            { echo "early SIG$sig: early.json is not a whole document (status $rc)"; exit 1; }
        echo "note: SIG$sig came after the headers (status $rc)"
    fi
else
    wait $pid
    echo "note: the device measurement was not caught"
fi

# Headers written, the first row (a long GEMM) not yet.
$run "$pk" bench gemm --backend cpu --sizes 1500 --reps 1000 --max-noise 1000 \
    --json "$dir/zero.json" --csv "$dir/zero.csv" --markdown "$dir/zero.md" \
    >"$dir/zero.out" 2>"$dir/zero.err" &
pid=$!
wait_file "$dir/zero.json" nonempty || { echo "no JSON header"; cat "$dir/zero.err"; exit 1; }
sleep 0.2
kill -$sig $pid
wait $pid
rc=$?
[ $rc -eq $code ] || { echo "zero rows: exit status $rc after SIG$sig, expected $code"; cat "$dir/zero.err"; exit 1; }
grep -q "interrupted by SIG$sig after 0 rows" "$dir/zero.err" ||
    { echo "zero rows: no message on stderr"; cat "$dir/zero.err"; exit 1; }
"$py" - "$dir" "SIG$sig" <<'PY' || exit 1
import csv, json, sys
d, sig = sys.argv[1], sys.argv[2]
doc = json.load(open(f"{d}/zero.json"))  # a whole document
assert doc["complete"] is False and doc["interrupted_by"] == sig, doc.get("complete")
assert doc["rows"] == [] and doc["device"]["backend"] == "cpu", doc["rows"]
table = list(csv.reader(open(f"{d}/zero.csv", newline="")))
assert len(table) == 1 and "kernel" in table[0], table
md = open(f"{d}/zero.md").read()
assert md.startswith("## pk bench on ") and "| kernel " in md and "| gemm " not in md, md
print(f"{sig} before the first row: headers and a whole JSON document, no rows")
PY

#!/usr/bin/env bash
# README.md against the example it shows: the program in its "A complete
# program" section is examples/example.c byte for byte, and the output block
# after it is what the program prints, but for the first line, which names
# the machine ("running on: cpu (avx2 path, l2 prefetch, 2 threads)" or the
# GPU): README's and the program's must both have that line's form.
#
#   tests/readme_check.sh README.md examples/example.c EXAMPLE_BINARY
set -euo pipefail
readme=$1 source=$2 prog=$3
fail() { echo "readme_check: $*" >&2; exit 1; }

# The first ```c block of the section, and the ``` block after "Its output".
shown_source=$(awk '/^### A complete program/{s=1} s&&/^```c$/{b=1;next} b&&/^```$/{exit} b' "$readme")
[ -n "$shown_source" ] || fail "no C program under '### A complete program' in $readme"
[ "$shown_source" = "$(cat "$source")" ] ||
  fail "the program in $readme differs from $source (diff them and copy $source in)"
shown_output=$(awk '/^Its output/{s=1;next} s&&/^```$/{if(b)exit;b=1;next} b' "$readme")
[ -n "$shown_output" ] || fail "no output block after 'Its output' in $readme"

actual=$("$prog") || fail "$prog exited with $?"
machine='^running on: (cpu \((avx512|avx2|generic|reference) path, (l1|l2) prefetch, [0-9]+ threads?\)|.+ \(sm_[0-9]+, [0-9]+ SMs\))$'
grep -Eq "$machine" <<<"$(head -n 1 <<<"$shown_output")" ||
  fail "README's first output line is not of the program's form: $(head -n 1 <<<"$shown_output")"
grep -Eq "$machine" <<<"$(head -n 1 <<<"$actual")" ||
  fail "the program's first line is not of the form README shows: $(head -n 1 <<<"$actual")"
[ "$(tail -n +2 <<<"$shown_output")" = "$(tail -n +2 <<<"$actual")" ] || {
  diff <(tail -n +2 <<<"$shown_output") <(tail -n +2 <<<"$actual") >&2 || true
  fail "the output in $readme is not what the program prints (above: README < > program)"
}
echo "readme_check: README's program and output match"

#!/usr/bin/env bash
# Runs pk's randomized CPU tests over many seeds (issue 55: a red CI on a
# random seed is a defect). Each test binary runs once per seed with
# PK_TEST_SEED=seed; a failure is logged with its replay command.
#
#   scripts/seed-sweep.sh [--build DIR] [--seeds N] [--first S] [--jobs J] [TEST...]
#
# Defaults: build dir `build`, 2000 seeds from 1, jobs = nproc, the tests
# below (every CPU test that draws random inputs, except test_big, whose
# 8.6 GB case is one fixed input, and test_threads/test_oom, whose inputs do
# not depend on the seed's draws in ways the others do not cover).
# Output: one line per test (seeds run, failures) and sweep-failures.log in
# the build dir. Exit status 1 if any seed failed.
set -uo pipefail
build=build
seeds=2000
first=1
jobs=$(nproc)
tests=()
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:?}; shift ;;
    --seeds) seeds=${2:?}; shift ;;
    --first) first=${2:?}; shift ;;
    --jobs) jobs=${2:?}; shift ;;
    -*) echo "seed-sweep: unknown option '$1'" >&2; exit 2 ;;
    *) tests+=("$1") ;;
    esac
    shift
done
((${#tests[@]})) || tests=(test_numerics test_gemm test_bits test_api test_bad_args test_misuse
    test_reducer test_dot_axpy test_reduce test_accuracy test_determinism test_reduce_axis)
log=$build/sweep-failures.log
: > "$log"
failed=0
for t in "${tests[@]}"; do
    bin=$build/tests/$t
    [ -x "$bin" ] || { echo "seed-sweep: $bin not built" >&2; exit 2; }
    start=$SECONDS
    # Each job prints its seed on failure; the test's own output goes to the log.
    fails=$(seq "$first" $((first + seeds - 1)) | xargs -P "$jobs" -I{} sh -c \
        'out=$(PK_TEST_SEED={} "$0" 2>&1) || { printf "%s\n" "$out" >> "$1"; echo {}; }' \
        "$bin" "$log" | sort -n | tr '\n' ' ')
    n=$(echo "$fails" | wc -w)
    printf '%-18s %d seeds (%d..%d): %d failed %s(%d s)\n' "$t" "$seeds" "$first" \
        $((first + seeds - 1)) "$n" "${fails:+[$fails] }" $((SECONDS - start))
    ((n)) && failed=1
done
((failed)) && echo "seed-sweep: failures; their output is in $log"
exit $failed

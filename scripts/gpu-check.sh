#!/usr/bin/env bash
# One command on a machine with an NVIDIA GPU: configure and build pk
# (Release, warnings as errors, CUDA on), run every test with ctest, run the
# CUDA tests under compute-sanitizer (memcheck, then racecheck; small sizes,
# PK_TEST_QUICK=1), then `pk info` and `pk bench --backend cuda`.
#
#   scripts/gpu-check.sh [--quick]     (--quick: pk bench --quick)
#
# Environment: BUILD (build folder, default build-gpu), PK_CUDA_ARCH (e.g. 90;
# default: the project's), OUT (where logs go; default $BUILD/logs), JOBS.
# Exit status 0 when every step passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-gpu}
logdir=${OUT:-$build/logs}
jobs=${JOBS:-$(nproc)}
quick=
[ "${1:-}" = "--quick" ] && quick=--quick
mkdir -p "$logdir"
log=$logdir/gpu-check.log
: > "$log"
export PATH=$PATH:/usr/local/cuda/bin
failed=0

# step NAME COMMAND...: run, log, print ok/FAILED (with the log's tail).
step() {
    local name=$1
    shift
    local t0=$SECONDS
    printf '== %-28s ' "$name"
    { echo "==== $name: $*"; } >> "$log"
    "$@" > "$logdir/step.tmp" 2>&1
    local rc=$?
    cat "$logdir/step.tmp" >> "$log"
    if [ $rc -eq 0 ]; then
        echo "ok ($((SECONDS - t0)) s)"
    else
        echo "FAILED (exit $rc, $((SECONDS - t0)) s)"
        tail -25 "$logdir/step.tmp" | sed 's/^/   | /'
        failed=1
    fi
    rm -f "$logdir/step.tmp"
    return $rc
}

command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total \
    --format=csv,noheader | sed 's/^/GPU: /'
command -v nvcc > /dev/null || { echo "gpu-check: nvcc not found: no CUDA build possible"; exit 1; }

cfg=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPK_WITH_CUDA=ON)
[ -n "${PK_CUDA_ARCH:-}" ] && cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$PK_CUDA_ARCH")
# The CUDA tests use the CUDA runtime for device pointers when
# tests/cuda.cmake is included; if tests/CMakeLists.txt does not (yet)
# include it, turn it on here.
grep -q 'cuda.cmake' "$root/tests/CMakeLists.txt" || cfg+=(-DCMAKE_C_FLAGS=-DPK_TEST_CUDA)
step configure cmake "${cfg[@]}" || exit 1
grep -q 'pk: CUDA backend ON' "$log" || { echo "gpu-check: CMake did not enable CUDA"; exit 1; }
step build cmake --build "$build" -j "$jobs" || exit 1
step ctest ctest --test-dir "$build" --output-on-failure -j 1

sanitizer=$(command -v compute-sanitizer || true)
if [ -z "$sanitizer" ]; then
    echo "gpu-check: compute-sanitizer not found: sanitizer steps skipped"
    failed=1
else
    for t in "$build"/tests/test_cuda_*; do
        [ -x "$t" ] || continue
        n=$(basename "$t")
        for tool in memcheck racecheck; do
            extra=()
            [ $tool = memcheck ] && extra=(--leak-check full)
            step "$tool $n" env PK_TEST_QUICK=1 "$sanitizer" --tool $tool "${extra[@]}" \
                --error-exitcode 99 "$t"
        done
    done
fi

pk=$build/tools/pk/pk
if [ -x "$pk" ]; then
    step "pk info" "$pk" info && sed -n '/^CUDA/,$p' "$log" | tail -20
    step "pk bench" "$pk" bench --backend cuda $quick
    sed -n '/==== pk bench/,$p' "$log" | tail -n +2 > "$logdir/bench.txt"
    cat "$logdir/bench.txt"
else
    echo "gpu-check: $pk was not built (tools/pk missing?): pk info / pk bench skipped"
    failed=1
fi

echo "logs: $logdir"
[ $failed -eq 0 ] && echo "gpu-check: all steps passed" || echo "gpu-check: some steps FAILED"
exit $failed

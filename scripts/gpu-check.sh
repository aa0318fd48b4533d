#!/usr/bin/env bash
# One command on a machine with an NVIDIA GPU: configure and build pk
# (Release, warnings as errors, CUDA on), run every test with ctest, run the
# CUDA tests under compute-sanitizer (memcheck, then racecheck; small sizes,
# PK_TEST_QUICK=1), `pk info` and `pk bench --backend cuda`, and the Python
# package against the build (installed into a prefix; pytest with its GPU
# tests, the tutorial example, bench/python_bench.py).
#
#   scripts/gpu-check.sh [--quick] [--steps LIST]
#
# --quick: pk bench --quick. --steps: a comma-separated subset of build,
# test, sanitize, bench, python (default: all, in that order) and hardening
# (only when asked); each step after build reuses the build folder, so a
# machine with a time limit per command can run them as several commands.
#
# hardening (issue 55) needs no other step: it configures and builds a
# second folder, $BUILD_FI (default: the build folder's name + -fi), with
# allocation-failure injection (PK_FAULT_INJECTION=ON; only the library and
# three tests are built), and runs test_cuda_oom (each host and device
# allocation failing in turn), test_cuda_threads (8 threads, a context each,
# one GPU) and test_leaks (10^5 calls of every kernel, CPU and GPU, host and
# device pointers). About 5 minutes on an H200 machine with
# PK_CUDA_ARCH=90a-real.
#
# Environment: BUILD (build folder, default build-gpu), PK_CUDA_ARCH (native,
# or a list such as 90a-real; default: the project's), OUT (logs; default $BUILD/logs), JOBS,
# PYTHON (default python3). The Python step needs numpy, pytest, nanobind and
# scikit-build-core installed (it builds offline: --no-build-isolation).
# Exit status 0 when every step passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-gpu}
case $build in /*) ;; *) build=$PWD/$build ;; esac # the Python step passes it to pip
logdir=${OUT:-$build/logs}
jobs=${JOBS:-$(nproc)}
quick=
steps=build,test,sanitize,bench,python
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=--quick ;;
    --steps) steps=${2:?--steps needs a list}; shift ;;
    --steps=*) steps=${1#--steps=} ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
want() { [[ ",$steps," == *",$1,"* ]]; }
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
[ -n "${PK_CUDA_ARCH:-}" ] && cfg+=(-DPK_CUDA_ARCH="$PK_CUDA_ARCH")
# The CUDA tests use the CUDA runtime for device pointers when
# tests/cuda.cmake is included; if tests/CMakeLists.txt does not (yet)
# include it, turn it on here.
grep -q 'cuda.cmake' "$root/tests/CMakeLists.txt" || cfg+=(-DCMAKE_C_FLAGS=-DPK_TEST_CUDA)
if want build; then
    step configure cmake "${cfg[@]}" || exit 1
    grep -q 'pk: CUDA backend ON' "$log" || { echo "gpu-check: CMake did not enable CUDA"; exit 1; }
    step build cmake --build "$build" -j "$jobs" || exit 1
fi
if want test || want sanitize || want bench || want python; then
    [ -f "$build/CMakeCache.txt" ] || { echo "gpu-check: $build holds no build (run --steps build)"; exit 1; }
fi
want test && step ctest ctest --test-dir "$build" --output-on-failure -j 4

sanitizer=$(command -v compute-sanitizer || true)
if ! want sanitize; then
    :
elif [ -z "$sanitizer" ]; then
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
if ! want bench; then
    :
elif [ -x "$pk" ]; then
    step "pk info" "$pk" info && sed -n '/^CUDA/,$p' "$log" | tail -20
    step "pk bench" "$pk" bench --backend cuda $quick --json "$logdir/bench.json" --csv "$logdir/bench.csv"
    sed -n '/==== pk bench/,$p' "$log" | tail -n +2 > "$logdir/bench.txt"
    cat "$logdir/bench.txt"
else
    echo "gpu-check: $pk was not built (tools/pk missing?): pk info / pk bench skipped"
    failed=1
fi

if want python; then
    # The extension alone against the installed build (PK_PYTHON_USE_INSTALLED):
    # nothing of pk is compiled again.
    py=${PYTHON:-python3}
    prefix=$build/prefix
    step "install" cmake --install "$build" --prefix "$prefix"
    step "python build" env CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$py" -m pip install \
        --no-build-isolation --no-deps -C build-dir="$build/python" \
        -C cmake.define.PK_PYTHON_USE_INSTALLED=ON -C cmake.define.CMAKE_PREFIX_PATH="$prefix" \
        -C cmake.define.PK_WERROR=ON "$root"
    step "python config" "$py" -c "import pk; pk.show_config()"
    step "pytest" env PYTHONUNBUFFERED=1 "$py" -m pytest -q -rs -p no:cacheprovider "$root/python/tests"
    step "python example" "$py" "$root/examples/python/reductions.py"
    step "python bench" "$py" "$root/bench/python_bench.py" --json "$logdir/python_bench.json"
    sed -n '/==== python bench/,$p' "$log" | tail -n +2 > "$logdir/python_bench.txt"
    cat "$logdir/python_bench.txt"
fi

if want hardening; then
    fi_build=${BUILD_FI:-$build-fi}
    fi_cfg=(-S "$root" -B "$fi_build" -DCMAKE_BUILD_TYPE=Release -DPK_WITH_CUDA=ON
            -DPK_FAULT_INJECTION=ON)
    [ -n "${PK_CUDA_ARCH:-}" ] && fi_cfg+=(-DPK_CUDA_ARCH="$PK_CUDA_ARCH")
    grep -q 'cuda.cmake' "$root/tests/CMakeLists.txt" || fi_cfg+=(-DCMAKE_C_FLAGS=-DPK_TEST_CUDA)
    if step "configure (injection)" cmake "${fi_cfg[@]}" &&
        step "build (injection)" cmake --build "$fi_build" -j "$jobs" \
            --target test_cuda_oom test_cuda_threads test_leaks; then
        for t in test_cuda_oom test_cuda_threads test_leaks; do
            step "$t" "$fi_build/tests/$t"
        done
        # The distributed calls' allocations (staging and B panels on the
        # device), one rank, when MPI and NCCL were found.
        if cmake --build "$fi_build" -j "$jobs" --target test_dist_oom >/dev/null 2>&1; then
            step "test_dist_oom (cuda, 1 rank)" env PK_BACKEND=cuda NCCL_NVLS_ENABLE=0 \
                PK_DIST_PANEL=37 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                mpirun --oversubscribe -np 1 -x PK_BACKEND -x NCCL_NVLS_ENABLE -x PK_DIST_PANEL \
                "$fi_build/tests/test_dist_oom"
        fi
        # The counts (allocations, runs, threads, calls, memory levels).
        sed -n '/^==== test_/,$p' "$log" | grep -E '^(test_cuda_oom: [0-9]|test_dist_oom: [0-9]|[0-9]+ threads|CPU,|CUDA|heap in use|note:|test_[a-z_]+: (all|[0-9]+ of))' |
            sed 's/^/   /'
    fi
fi

echo "logs: $logdir"
[ $failed -eq 0 ] && echo "gpu-check: all steps passed" || echo "gpu-check: some steps FAILED"
exit $failed

#!/usr/bin/env bash
# The distributed layer on a machine with several GPUs, in one command:
# configure and build with MPI and NCCL, run the single-process tests that
# need two GPUs (test_cuda_context: a stream of another device;
# test_cuda_reducer: one reducer on every GPU at once), tests/dist/test_dist
# on the CUDA backend with 2 ranks and with one rank per GPU, then
# `mpirun -np <GPUs> pk bench dist --backend cuda`; then `test_dist exit`
# on 2 ranks of the CUDA backend (a rank exits, the other must return
# PK_ERR_COMM within its timeout). test_dist's CUDA run includes the NCCL
# faults (test_nccl_stall: an all-reduce whose peer's stream is held past
# the timeout). A run that hangs is stopped after $PK_DIST_CHECK_LIMIT
# seconds (600) and fails (not PK_DIST_TIMEOUT: that is pk's own timeout of
# a collective step). Logs go to $OUT (or ./gpu-dist-logs).
#
# MPI: the one on PATH; or, where none is installed and nothing can be
# fetched, Debian's Open MPI packages given as .deb files in $PK_MPI_DEBS
# (e.g. from `apt-get download openmpi-bin libopenmpi3 libopenmpi-dev ...`
# on a Debian machine), unpacked to /tmp/pk-ompi and used relocated.
# NVLink multicast stays off: NCCL_NVLS_ENABLE=0 is exported to every rank.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-dist-logs}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if ! command -v mpirun >/dev/null && [ -n "${PK_MPI_DEBS:-}" ]; then
  p=/tmp/pk-ompi
  mkdir -p $p
  for f in "$PK_MPI_DEBS"/*.deb; do dpkg -x "$f" $p; done
  export OPAL_PREFIX=$p/usr PATH=$p/usr/bin:$PATH
  export LD_LIBRARY_PATH=$p/usr/lib/x86_64-linux-gnu:$p/usr/lib/x86_64-linux-gnu/openmpi/lib:${LD_LIBRARY_PATH:-}
  ln -sf orterun $p/usr/bin/mpirun
  ln -sf mpicc.openmpi $p/usr/bin/mpicc
fi
command -v mpirun >/dev/null || { echo "gpu-dist-check: no MPI" | tee "$out/dist.txt"; exit 1; }
ngpu=$(nvidia-smi -L | wc -l)
echo "gpu-dist-check: $ngpu GPUs, $(mpirun --version | head -1)" | tee "$out/dist.txt"

build=${BUILD:-/tmp/pk-dist-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${ARCH:-90} \
  -DMPI_C_COMPILER="$(command -v mpicc)" >"$out/configure.txt" 2>&1 || { tail -30 "$out/configure.txt"; exit 1; }
grep "pk:" "$out/configure.txt" | tee -a "$out/dist.txt"
# Only what this script runs: the test program and the command.
cmake --build "$build" -j"$(nproc)" --target test_dist pk_cli test_cuda_context test_cuda_reducer \
  >"$out/build.txt" 2>&1 || { tail -40 "$out/build.txt"; exit 1; }

rc=0
limit=${PK_DIST_CHECK_LIMIT:-600}
run() { # ranks, command...
  local np=$1; shift
  timeout -k 10 "$limit" mpirun --oversubscribe --bind-to none -np "$np" -x NCCL_NVLS_ENABLE \
    -x PK_BACKEND -x LD_LIBRARY_PATH "$@"
}
for t in test_cuda_context test_cuda_reducer; do
  echo "== $t, $ngpu GPUs" | tee -a "$out/dist.txt"
  timeout -k 10 "$limit" "$build/tests/$t" >"$out/$t.txt" 2>&1
  case $? in 0 | 77) ;; *) rc=1 ;; esac # 77: skipped (no NVRTC, say)
  grep -E "FAIL|checks|skipped|GPUs|foreign" "$out/$t.txt" | head -20 | tee -a "$out/dist.txt"
done
for np in 2 "$ngpu"; do
  echo "== test_dist, $np ranks, CUDA" | tee -a "$out/dist.txt"
  PK_BACKEND=cuda run "$np" "$build/tests/test_dist" >"$out/test_dist_np$np.txt" 2>&1 || rc=1
  grep -E "FAIL|checks|skipped|nccl stall" "$out/test_dist_np$np.txt" | head -20 | tee -a "$out/dist.txt"
  [ "$np" = "$ngpu" ] && break
done
for np in 2 "$ngpu"; do
  echo "== pk bench dist, $np ranks" | tee -a "$out/dist.txt"
  PK_BACKEND=cuda run "$np" "$build/tools/pk/pk" bench dist --backend cuda ${QUICK:+--quick} \
    2>&1 | tee -a "$out/dist.txt"
  ((${PIPESTATUS[0]} == 0)) || rc=1
  [ "$np" = "$ngpu" ] && break
done
echo "== test_dist exit, 2 ranks, CUDA" | tee -a "$out/dist.txt"
# Open MPI would end the job at the exit; rank 0 prints whether it passed.
PK_BACKEND=cuda OMPI_MCA_orte_abort_on_non_zero_status=0 \
  run 2 -x OMPI_MCA_orte_abort_on_non_zero_status "$build/tests/test_dist" exit \
  >"$out/test_dist_exit.txt" 2>&1
grep -E "FAIL|test_dist exit" "$out/test_dist_exit.txt" | head -20 | tee -a "$out/dist.txt"
grep -q "test_dist exit: passed" "$out/test_dist_exit.txt" || rc=1
exit $rc

#!/usr/bin/env bash
# Installs what pk needs to build, test and benchmark on Debian/Ubuntu, as
# root: a C compiler with OpenMP (GCC's libgomp), Clang (GCC builds pk; Clang
# compiles the avx2 and generic reduction kernels, which GCC runs 5-25x
# slower: docs/ARCHITECTURE.md), CMake, make, git,
# pkg-config (the install test builds the example through it), OpenBLAS
# (only the benchmarks use it, as the peer of dot, axpy and gemm)
# and Open MPI (the distributed API pk_dist_* and its tests under mpirun). The
# CUDA backend is built as well when nvcc is on PATH; this script does not
# install CUDA. Packages already present are left alone; with nothing
# missing it installs nothing and needs no network.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for pkg in gcc clang make cmake git pkg-config libopenblas-dev libc6-dev libopenmpi-dev openmpi-bin; do
  have_pkg "$pkg" || need+=("$pkg")
done
# CMake 3.24 or newer is needed (CMakeLists.txt); Debian 12 ships 3.25.

if ((${#need[@]})); then
  echo "setup: installing ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
else
  echo "setup: gcc, clang, make, cmake, git, pkg-config, OpenBLAS and Open MPI are installed" >&2
fi

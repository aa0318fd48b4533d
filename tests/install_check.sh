#!/usr/bin/env bash
# Installs pk from a build tree into a temporary prefix, then builds and runs
# examples/example.c against it as a user would: through find_package(pk)
# (pk::pk and pk::pk_static), through pkg-config (pk, pk --static, pk-static),
# and from pk's sources as a CMake subproject (add_subdirectory), which must
# build the library alone (no tests, no pk command) and leave the parent's
# build type alone.
#
#   tests/install_check.sh SOURCE_DIR BUILD_DIR WORK_DIR [C_COMPILER]
set -euo pipefail
src=$1 build=$2 work=$3 cc=${4:-cc}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "install_check: $*" >&2; exit 1; }
# The example's output, as the test of the in-tree build checks it.
check_output() {
  local out
  out=$("$@") || fail "$* exited with $?"
  grep -q '^sum = 500008\.5, argmax = 123456$' <<<"$out" || fail "$*: unexpected output: $out"
  grep -q '^min of nothing: invalid argument' <<<"$out" || fail "$*: unexpected output: $out"
}

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || {
  cat "$work/install.log"; fail "cmake --install failed"; }
libdir=lib
[ -d "$prefix/lib" ] || libdir=lib64
for f in include/pk.h "$libdir/libpk.a" "$libdir/libpk.so" "$libdir/cmake/pk/pkConfig.cmake" \
         "$libdir/cmake/pk/pkConfigVersion.cmake" "$libdir/pkgconfig/pk.pc" \
         "$libdir/pkgconfig/pk-static.pc" bin/pk bin/pk-roofline share/doc/pk/LICENSE; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
"$prefix/bin/pk" --version | head -n 1 | grep -Eq '^pk [0-9]+\.[0-9]+\.[0-9]+$' ||
  fail "the installed pk --version"

echo "== find_package(pk)"
cmake -S "$src/examples" -B "$work/find_package" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/find_package.log" 2>&1 || {
  cat "$work/find_package.log"; fail "configuring examples/ with find_package(pk)"; }
cmake --build "$work/find_package" >>"$work/find_package.log" 2>&1 || {
  cat "$work/find_package.log"; fail "building examples/ with find_package(pk)"; }
check_output "$work/find_package/example"
[ -x "$work/find_package/example_static" ] || fail "find_package(pk) gave no pk::pk_static"
check_output "$work/find_package/example_static"
# A version the package does not match is refused.
cat >"$work/v.cmake" <<EOV
find_package(pk 99.0 QUIET PATHS "$prefix" NO_DEFAULT_PATH)
if(pk_FOUND)
  message(FATAL_ERROR "pk 99.0 was found")
endif()
EOV
cmake -P "$work/v.cmake" || fail "find_package(pk 99.0) matched"

echo "== pkg-config"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
pkg-config --exists pk pk-static || fail "pkg-config does not find pk"
[ "$(pkg-config --modversion pk)" = "$("$prefix/bin/pk" --version | head -n 1 | cut -d' ' -f2)" ] ||
  fail "pk.pc's version is not pk --version's"
# The line examples/example.c and README give, as they give it.
# shellcheck disable=SC2046
"$cc" "$src/examples/example.c" $(pkg-config --cflags --libs pk) \
  -Wl,-rpath,$(pkg-config --variable=libdir pk) -o "$work/pc_shared" || fail "cc with pkg-config pk"
check_output "$work/pc_shared"
# shellcheck disable=SC2046
# libpk.a by -Bstatic, the rest as pkg-config --static lists it.
"$cc" "$src/examples/example.c" -o "$work/pc_static" $(pkg-config --cflags pk) \
  $(pkg-config --static --libs pk | sed 's/-lpk\b/-Wl,-Bstatic -lpk -Wl,-Bdynamic/') ||
  fail "cc with pkg-config --static pk"
check_output "$work/pc_static"
! ldd "$work/pc_static" | grep -q libpk || fail "pkg-config --static pk linked libpk.so"
# shellcheck disable=SC2046
"$cc" "$src/examples/example.c" -o "$work/pc_static2" $(pkg-config --cflags --libs pk-static) ||
  fail "cc with pkg-config pk-static"
check_output "$work/pc_static2"
! ldd "$work/pc_static2" | grep -q libpk || fail "pk-static linked libpk.so"

echo "== add_subdirectory(pk)"
cmake -S "$src/examples" -B "$work/subproject" -DCMAKE_C_COMPILER="$cc" \
  -DPK_SOURCE_DIR="$src" -DPK_WITH_CUDA=OFF -DPK_WITH_MPI=OFF >"$work/subproject.log" 2>&1 || {
  cat "$work/subproject.log"; fail "configuring examples/ with add_subdirectory(pk)"; }
bt=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$work/subproject/CMakeCache.txt")
[ -z "$bt" ] || fail "the subproject set the parent's build type to '$bt'"
targets=$(cmake --build "$work/subproject" --target help)
grep -Eq '(^| )test_|pk_cli|pk_bench' <<<"$targets" &&
  fail "the subproject builds tests or tools: $(grep -E 'test_|pk_cli|pk_bench' <<<"$targets" | head -n 3)"
[ ! -e "$work/subproject/CTestTestfile.cmake" ] || ! grep -q add_test "$work/subproject/pk/CTestTestfile.cmake" 2>/dev/null ||
  fail "the subproject added tests"
cmake --build "$work/subproject" -j"$(nproc)" --target example >>"$work/subproject.log" 2>&1 || {
  cat "$work/subproject.log"; fail "building examples/ with add_subdirectory(pk)"; }
check_output "$work/subproject/example"
echo "install_check: all passed"

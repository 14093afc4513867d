#!/bin/sh
# install_example.sh: installs the build into a temporary prefix (cmake --install) and builds
# examples/example.c against it three ways, then runs each: through pkg-config, through
# find_package(pmtune) with pmtune::pmtune, and with pmtune::pmtune_static. Where this machine has
# no GPU each must say "no CUDA device" and exit 1; where it has one, exit 0. Also: the installed
# `pmtune --version`, pkg-config's version and the package's agree with the project's version,
# and the man page is installed (share/man/man1/pmtune.1).
# Usage: install_example.sh BUILD SOURCE VERSION CUDA_INCLUDE_DIR CUDA_LIBRARY_DIR
set -eu
build=$1 src=$2 version=$3 cudainc=$4 cudalib=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_example: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/p" > "$tmp/install.log" || fail "cmake --install failed"
for f in bin/pmtune include/pmtune.h lib/libpmtune.a lib/libpmtune.so "lib/libpmtune.so.${version%%.*}" \
         lib/pkgconfig/pmtune.pc lib/cmake/pmtune/pmtuneConfig.cmake \
         share/pmtune/results/nvidia-h100-80gb-hbm3.json.gz \
         share/man/man1/pmtune.1; do
  [ -e "$tmp/p/$f" ] || fail "$f is not installed"
done
"$tmp/p/bin/pmtune" --version | grep -q "^pmtune $version " || fail "pmtune --version is not $version"
export PKG_CONFIG_PATH="$tmp/p/lib/pkgconfig"
[ "$(pkg-config --modversion pmtune)" = "$version" ] || fail "pkg-config says $(pkg-config --modversion pmtune)"

# 1. pkg-config, the shared library (the example's own CUDA calls need the runtime too)
cc -o "$tmp/ex-pkg-config" "$src/examples/example.c" $(pkg-config --cflags --libs pmtune) \
  -I"$cudainc" -L"$cudalib" -lcudart -lm -Wl,-rpath,"$tmp/p/lib" -Wl,-rpath,"$cudalib" \
  || fail "the example does not build through pkg-config"

# 2 and 3. find_package, shared and static
mkdir -p "$tmp/proj"
cp "$src/examples/example.c" "$tmp/proj/"
cat > "$tmp/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(example C)
find_package(pmtune REQUIRED)
find_package(CUDAToolkit REQUIRED)
add_executable(ex-find-package example.c)
target_link_libraries(ex-find-package PRIVATE pmtune::pmtune CUDA::cudart m)
add_executable(ex-static example.c)
target_link_libraries(ex-static PRIVATE pmtune::pmtune_static)
CMAKE
cmake -S "$tmp/proj" -B "$tmp/proj/b" -DCMAKE_PREFIX_PATH="$tmp/p" > "$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; fail "find_package(pmtune) failed"; }
cmake --build "$tmp/proj/b" > "$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "the example does not build through find_package"; }

if "$tmp/p/bin/pmtune" devices > /dev/null 2>&1; then want=0; else want=1; fi
for ex in "$tmp/ex-pkg-config" "$tmp/proj/b/ex-find-package" "$tmp/proj/b/ex-static"; do
  set +e
  out=$("$ex" 2>&1)
  rc=$?
  set -e
  [ "$rc" = "$want" ] || fail "$(basename "$ex") exited $rc, not $want: $out"
  if [ "$want" = 1 ]; then
    echo "$out" | grep -q "no CUDA device" || fail "$(basename "$ex") did not say no CUDA device: $out"
  fi
  echo "$(basename "$ex"): exit $rc ($(echo "$out" | tail -1))"
done

#!/bin/sh
# python_package.sh: CTest's python_package: pip installs ./python into a fresh virtual
# environment (no network: Debian's setuptools, --no-build-isolation), which builds libpmtune and
# the extension with the project's CMake and bundles them with the shipped results, and runs
# python/tests with that copy, from outside the source tree, with nothing set: the package finds
# its own library.
# With STAGED (build/python, the package python/CMakeLists.txt staged in a build), the tests run
# on that instead, with PYTHONPATH=STAGED.
# Usage: tests/python_package.sh SOURCE_DIR [STAGED]   (PYTHON: the interpreter; python3, which needs
# pytest, setuptools, wheel and its headers: Debian's python3-pytest, python3-setuptools,
# python3-wheel, python3-dev)
set -eu
src=$1
staged=${2:-}
# The first interpreter with what pip's build and the tests need: python3 from PATH can be
# another than Debian's (pyenv's, without wheel or pytest), so /usr/bin/python3 is tried too.
py=${PYTHON:-}
if [ -z "$py" ]; then
  for cand in python3 /usr/bin/python3; do
    if "$cand" -c 'import pytest, setuptools, wheel, venv' 2> /dev/null; then py=$cand; break; fi
  done
  [ -n "$py" ] || { echo "python_package.sh: no python3 with pytest, setuptools and wheel" \
    "(Debian: python3-pytest python3-setuptools python3-wheel python3-venv)" >&2; exit 1; }
fi
if [ -n "$staged" ]; then
  cd "$src"
  exec env -u PMTUNE_LIBRARY PYTHONPATH="$staged" PMTUNE_EXPECT_OWN_LIBRARY=1 \
    "$py" -m pytest -q -rs -p no:cacheprovider python/tests
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv --system-site-packages "$tmp/venv"
cp -r "$src/python" "$tmp/package" # pip builds in the folder it is given: not in the tree
rm -rf "$tmp/package/build" "$tmp/package"/*.egg-info # what a build there left
PMTUNE_SOURCE_DIR=$src CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$tmp/venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps --no-index \
  "$tmp/package"
cd "$tmp"
mv package/tests tests
rm -rf package
env -u PMTUNE_LIBRARY PMTUNE_SOURCE_DIR=$src PMTUNE_EXPECT_INSTALLED=1 PMTUNE_EXPECT_OWN_LIBRARY=1 \
  "$tmp/venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests

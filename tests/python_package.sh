#!/bin/sh
# python_package.sh: CTest's python_package: pip installs ./python into a fresh virtual
# environment (no network: Debian's setuptools, --no-build-isolation) and runs python/tests with
# that copy, from outside the source tree, against the libpmtune.so just built.
# Usage: tests/python_package.sh SOURCE_DIR LIBPMTUNE_SO   (PYTHON: the interpreter; python3, which
# needs pytest, setuptools and wheel: Debian's python3-pytest, python3-setuptools, python3-wheel)
set -eu
src=$1
lib=$2
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv --system-site-packages "$tmp/venv"
cp -r "$src/python" "$tmp/package" # pip builds in the folder it is given: not in the tree
"$tmp/venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps --no-index \
  "$tmp/package"
cd "$tmp"
mv package/tests tests
rm -rf package
PMTUNE_LIBRARY=$lib PMTUNE_SOURCE_DIR=$src PMTUNE_EXPECT_INSTALLED=1 \
  "$tmp/venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests

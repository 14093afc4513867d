#!/bin/sh
# python_package.sh: CTest's python_package: pip installs ./python into a fresh virtual
# environment (no network: Debian's setuptools, --no-build-isolation) and runs python/tests with
# that copy, from outside the source tree, against the libpmtune.so just built.
# Usage: tests/python_package.sh SOURCE_DIR LIBPMTUNE_SO   (PYTHON: the interpreter; python3, which
# needs pytest, setuptools and wheel: Debian's python3-pytest, python3-setuptools, python3-wheel)
set -eu
src=$1
lib=$2
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
